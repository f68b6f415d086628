// Force-included before the user's source, during preprocessing only.
// MSL address spaces that need no rewriting. `threadgroup` and `kernel` are
// handled by MetalCPU's front end and must not be macros. The constant address
// space is read-only in MSL: as `const`, a kernel that writes to it fails to
// compile here as on a Mac, and pm::abi::flags_of reports such buffers read-only
// (`constant const T*` only draws clang's duplicate-const warning).
// MetalCPU's front end sees `device`, `thread` and `constant` as words
// (PM_ADDRESS_SPACE_WORDS) and removes them itself, so that it can tell apart
// member functions overloaded on the address space of `this` (MLX's
// `complex64_t() thread` / `complex64_t() threadgroup`); C++ compiled without
// the front end (tests/msl_runtime) gets them as macros.
#pragma once
#ifndef PM_ADDRESS_SPACE_WORDS
#define device
#define constant const
#define thread
#endif
// Metal takes `constant const T&` (MLX writes it throughout) without a word; as
// C++'s `const const T&` it draws one warning per use, burying a real error under them.
#pragma clang diagnostic ignored "-Wduplicate-decl-specifier"
// Apple's shared headers define NS_ENUM for Metal as `enum E : metal::int32_t E; enum E : metal::int32_t {...}`,
// an opaque declaration inside a typedef, which Metal takes and clang refuses by default.
#pragma clang diagnostic ignored "-Welaborated-enum-base"
#ifndef __METAL_VERSION__ // MSLCompiler defines it from MTLCompileOptions.languageVersion
#define __METAL_VERSION__ 310
#endif
#define __METAL_MACOS__ 1
#define __HAVE_BFLOAT__ 1
// No __HAVE_SIMDGROUP_FUTURE__: code that finds it defined includes <metal_simdgroup_future> and uses
// its async copies (metal-flash-attention), which the CPU backend does not provide.
// Apple's <metal_stdlib> defines METAL_FUNC (MLX's kernels use it).
#ifndef METAL_FUNC
#define METAL_FUNC inline __attribute__((__always_inline__))
#endif
// MSL 3.2's memory-coherence qualifier `coherent(device)` (and MLX's `coherent(system)`) on a
// buffer pointer asks that its loads and stores be seen by other threadgroups (or the CPU) without
// waiting for the kernel to end. On the CPU backend all memory is coherent already: the qualifier
// drops out and `volatile` next to it keeps its C++ meaning.
#define coherent(_PmScope)
