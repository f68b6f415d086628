// libPyMetal: the C ABI of pymetal (GPU compute through Metal; on Linux, Metal's
// API running MSL on the CPU).
//
// Conventions (after mlx-c):
// - Objects are opaque 64-bit handles; 0 is never a valid handle. A handle that
//   is unknown, released, or of another kind is an error, never a crash.
// - Every function returns an int32 status: PM_OK (0) or an error code, and
//   writes its results through the pointers given first. On error,
//   pm_last_error() describes it (thread-local, valid until the next call that
//   fails on the same thread).
// - Strings returned through `const char **` stay valid as long as the object
//   they came from.
// - Thread-safe: any function may be called from any thread.
#ifndef PYMETAL_H
#define PYMETAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PM_ABI_VERSION 2

typedef uint64_t pm_device;
typedef uint64_t pm_buffer;
typedef uint64_t pm_library;
typedef uint64_t pm_kernel;
typedef uint64_t pm_stream;

enum pm_status_code {
    PM_OK = 0,
    PM_ERROR_INVALID_ARGUMENT = 1, // bad handle, null pointer, size, index
    PM_ERROR_COMPILE = 2,          // MSL did not compile; the message holds the diagnostics
    PM_ERROR_NOT_FOUND = 3,        // no such function / file
    PM_ERROR_OUT_OF_MEMORY = 4,
    PM_ERROR_EXECUTION = 5,        // a command buffer failed (kernel error)
    PM_ERROR_UNSUPPORTED = 6,
};

// ---- Library ----------------------------------------------------------------
int32_t pm_abi_version(void);          // returns PM_ABI_VERSION (not a status)
const char *pm_last_error(void);       // never NULL ("" when there was no error)

// ---- Device -----------------------------------------------------------------
int32_t pm_device_default(pm_device *out);
int32_t pm_device_name(const char **out, pm_device device);
int32_t pm_device_backend(const char **out, pm_device device);   // "metal" or "cpu"
int32_t pm_device_unified_memory(int32_t *out, pm_device device); // 1 or 0
int32_t pm_device_max_threads_per_threadgroup(int64_t *out, pm_device device);
int32_t pm_device_max_buffer_length(int64_t *out, pm_device device);
int32_t pm_device_recommended_working_set(int64_t *out, pm_device device);
int32_t pm_device_page_size(int64_t *out, pm_device device);    // alignment for pm_buffer_wrap
// The library of pymetal's own kernels (Shaders/), loaded at start-up.
int32_t pm_device_shader_library(pm_library *out, pm_device device);

// ---- Buffers (shared CPU/GPU memory) ------------------------------------------
// New page-aligned memory of `length` bytes (length 0 allocates a minimal buffer).
int32_t pm_buffer_new(pm_buffer *out, pm_device device, uint64_t length);
// Wraps caller memory without copying. `pointer` and `length` must be multiples
// of the page size (pm_device_page_size, 16 KiB on Apple Silicon). The memory
// must stay valid until pm_buffer_release() returns: for wrapped buffers that
// call waits for pending work that uses the buffer.
int32_t pm_buffer_wrap(pm_buffer *out, pm_device device, void *pointer, uint64_t length);
int32_t pm_buffer_contents(void **out, pm_buffer buffer);
int32_t pm_buffer_length(uint64_t *out, pm_buffer buffer);
// Drops the handle. Memory the engine allocated lives on until pending work
// that uses it completes; never blocks for such buffers.
int32_t pm_buffer_release(pm_buffer buffer);

// ---- Libraries and kernels ----------------------------------------------------
// Compiles MSL source. `macros` is NULL or "NAME=VALUE\nNAME2\n..." (one per line);
// `fast_math` 0 selects safe math (pymetal's default on every platform).
/* pm_library_compile for a Metal language version: major * 100 + minor (302 for 3.2), 0 for the default. */
int32_t pm_library_compile_version(pm_library *out, pm_device device, const char *source, const char *macros,
                                   int32_t fast_math, int32_t language_version);
int32_t pm_library_compile(pm_library *out, pm_device device, const char *source,
                           const char *macros, int32_t fast_math);
// Loads a prebuilt library file (.metallib on macOS; MetalCPU's library on Linux).
int32_t pm_library_load(pm_library *out, pm_device device, const char *path);
int32_t pm_library_function_count(int64_t *out, pm_library library);
int32_t pm_library_function_name(const char **out, pm_library library, int64_t index);
int32_t pm_library_release(pm_library library);

// A compute pipeline for a function of a library (cached per library and name).
int32_t pm_kernel_new(pm_kernel *out, pm_library library, const char *function);
/* Function constants (`constant bool has_w [[function_constant(20)]];`): the ones `function` declares,
   as lines "index<TAB>MTLDataType<TAB>required<TAB>name" (*needed: bytes with the NUL; nothing is
   written when that exceeds capacity), and a kernel specialised with values given as lines
   "index MTLDataType hex-bytes" (Metal's makeFunction(name:constantValues:)). */
int32_t pm_library_function_constants(char *buffer, int64_t capacity, int64_t *needed, pm_library library,
                                      const char *function);
int32_t pm_kernel_new_specialized(pm_kernel *out, pm_library library, const char *function, const char *values);
int32_t pm_kernel_max_threads(int64_t *out, pm_kernel kernel);       // per threadgroup
int32_t pm_kernel_execution_width(int64_t *out, pm_kernel kernel);   // SIMD width
int32_t pm_kernel_static_threadgroup_memory(int64_t *out, pm_kernel kernel); // bytes
// The threadgroup pm_dispatch uses when given none, for this size (see pm_dispatch).
int32_t pm_kernel_default_threadgroup(uint32_t out[3], pm_kernel kernel, const uint32_t size[3], int32_t by_groups);
// How the kernel uses [[buffer(index)]], index 0..30 (Metal's pipeline reflection;
// on Linux the kernel's parameter types): lets a caller that copies memory in
// for a dispatch skip copying read-only buffers back.
enum pm_access {
    PM_ACCESS_UNUSED = 0,     // no parameter binds it (or the compiler found it unused)
    PM_ACCESS_READ_ONLY = 1,  // `device const T*`, `constant T&`, ...: never written
    PM_ACCESS_READ_WRITE = 2, // may be written (also when nothing is known)
};
int32_t pm_kernel_buffer_access(int32_t *out, pm_kernel kernel, int32_t index);
int32_t pm_kernel_release(pm_kernel kernel);

// ---- Streams and dispatch -------------------------------------------------------
// A stream is a command queue with one open command buffer. Dispatches are
// encoded into it and committed when a batch is full, on pm_stream_commit or
// on pm_stream_synchronize.
int32_t pm_stream_new(pm_stream *out, pm_device device);
int32_t pm_stream_commit(pm_stream stream);
// Commits and waits for all work; returns PM_ERROR_EXECUTION with the kernel's
// error if a command buffer failed.
int32_t pm_stream_synchronize(pm_stream stream);
// GPU seconds (end - start) of the last completed command buffer (0 if none).
int32_t pm_stream_gpu_time(double *out, pm_stream stream);
int32_t pm_stream_release(pm_stream stream);

enum pm_arg_kind {
    PM_ARG_BUFFER = 0,            // buffer + offset            -> [[buffer(index)]]
    PM_ARG_BYTES = 1,             // bytes/length copied now     -> [[buffer(index)]]
    PM_ARG_THREADGROUP_MEMORY = 2 // length bytes                -> [[threadgroup(index)]]
};

typedef struct pm_arg {
    int32_t kind;     // pm_arg_kind
    int32_t index;    // binding index, 0..30
    pm_buffer buffer; // PM_ARG_BUFFER
    uint64_t offset;  // PM_ARG_BUFFER: byte offset into the buffer
    const void *bytes;// PM_ARG_BYTES (at most 4096 bytes, as Metal's setBytes)
    uint64_t length;  // PM_ARG_BYTES / PM_ARG_THREADGROUP_MEMORY
} pm_arg;

// Encodes one dispatch. `size` is threads per grid (by_groups = 0, like
// dispatchThreads) or threadgroups per grid (by_groups = 1, like
// dispatchThreadgroups). `threadgroup` may be NULL or {0,0,0} to let pymetal
// choose. Every dimension must be >= 1.
int32_t pm_dispatch(pm_stream stream, pm_kernel kernel, const pm_arg *args, int32_t arg_count,
                    const uint32_t size[3], const uint32_t threadgroup[3], int32_t by_groups);

// What pm_dispatch takes besides the arguments, in one record that a caller
// makes once per launch configuration and reuses (from Python's ctypes, a
// call costs per argument passed).
typedef struct pm_launch_config {
    pm_stream stream;
    pm_kernel kernel;
    uint32_t size[3];
    uint32_t threadgroup[3]; // {0,0,0}: pymetal chooses
    int32_t by_groups;
    int32_t reserved;        // 0
} pm_launch_config;

// pm_dispatch(config->stream, config->kernel, args, arg_count, config->size,
// config->threadgroup, config->by_groups).
int32_t pm_dispatch_launch(const pm_launch_config *config, const pm_arg *args, int32_t arg_count);

#ifdef __cplusplus
}
#endif
#endif
