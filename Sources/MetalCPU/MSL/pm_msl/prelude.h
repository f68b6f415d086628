// Force-included before the user's source, during preprocessing only.
// MSL address spaces that need no rewriting. `threadgroup` and `kernel` are
// handled by MetalCPU's front end and must not be macros.
#pragma once
#define device
#define constant
#define thread
#define __METAL_VERSION__ 310
#define __METAL_MACOS__ 1
#define __HAVE_BFLOAT__ 1
#define __HAVE_SIMDGROUP_FUTURE__ 0
// Apple's <metal_stdlib> defines METAL_FUNC (MLX's kernels use it).
#ifndef METAL_FUNC
#define METAL_FUNC inline __attribute__((__always_inline__))
#endif
