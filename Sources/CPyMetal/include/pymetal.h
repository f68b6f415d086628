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

#define PM_ABI_VERSION 3

// Limits of the binding model (Metal's): [[buffer(0)]] .. [[buffer(30)]] and
// [[threadgroup(0)]] .. [[threadgroup(30)]]; values passed by copy (setBytes)
// are 1 to 4096 bytes; each is copied to a 16-byte boundary (the alignment of
// the widest vector a kernel may read). Device-dependent limits (threadgroup
// memory, page size, buffer length) are queried from the device.
#define PM_MAX_BINDINGS 31
#define PM_MAX_ARGS 64           // pm_arg records per dispatch
#define PM_MAX_BYTES 4096        // PM_ARG_BYTES length
#define PM_BYTES_ALIGNMENT 16

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
// Bytes of threadgroup memory a threadgroup may use (static + [[threadgroup(n)]] lengths).
int32_t pm_device_max_threadgroup_memory(int64_t *out, pm_device device);
// The library of pymetal's own kernels (Shaders/), loaded at start-up.
int32_t pm_device_shader_library(pm_library *out, pm_device device);

// ---- Buffers (shared CPU/GPU memory) ------------------------------------------
// New page-aligned memory of `length` bytes (length 0 allocates a minimal buffer).
int32_t pm_buffer_new(pm_buffer *out, pm_device device, uint64_t length);
// Wraps caller memory without copying. `pointer` and `length` must be multiples
// of the page size (pm_device_page_size, 16 KiB on Apple Silicon), `length` at
// most pm_device_max_buffer_length. The memory
// must stay valid until pm_buffer_release() returns: for wrapped buffers that
// call waits for pending work that uses the buffer.
int32_t pm_buffer_wrap(pm_buffer *out, pm_device device, void *pointer, uint64_t length);
int32_t pm_buffer_contents(void **out, pm_buffer buffer);
int32_t pm_buffer_length(uint64_t *out, pm_buffer buffer);
// Drops the handle. Memory the engine allocated lives on until pending work
// that uses it completes; never blocks for such buffers.
int32_t pm_buffer_release(pm_buffer buffer);
// Failed work poisons the buffers it may have written (bound to parameters
// that are not `device const`/`constant`, of the failed dispatch and of the
// dispatches after it in its command buffer, which did not run): reading them
// must fail. Work that runs passes its read-only inputs' errors to the buffers
// it writes; with none, a write clears the buffer's error. Errors are known
// once the work has been waited for (pm_stream_wait).
// pm_buffer_error returns PM_ERROR_EXECUTION with the failure's message if
// the buffer is poisoned, else PM_OK.
int32_t pm_buffer_error(pm_buffer buffer);
// The host rewrote the buffer's contents: it is no longer poisoned.
int32_t pm_buffer_clear_error(pm_buffer buffer);
// *out: the address of the number of live poisoned buffers (read it without
// a call; when it is 0 no buffer needs asking).
int32_t pm_buffer_error_count(const int64_t **out);

// ---- Libraries and kernels ----------------------------------------------------
// Compiles MSL source. `macros` is NULL or "NAME=VALUE\nNAME2\n..." (one per line);
// `fast_math` 0 selects safe math (pymetal's default on every platform).
/* pm_library_compile for a Metal language version: major * 100 + minor (302 for 3.2), 0 for the default. */
int32_t pm_library_compile_version(pm_library *out, pm_device device, const char *source, const char *macros,
                                   int32_t fast_math, int32_t language_version);
int32_t pm_library_compile(pm_library *out, pm_device device, const char *source,
                           const char *macros, int32_t fast_math);
/* pm_library_compile_version with shader logging (logging != 0; Metal: macOS 15): the kernels'
   os_log messages are taken with pm_kernel_log_next. */
int32_t pm_library_compile_logging(pm_library *out, pm_device device, const char *source, const char *macros,
                                   int32_t fast_math, int32_t language_version, int32_t logging);
/* The oldest kernel os_log message not taken yet: 1 and its MTLLogLevel (1 debug ... 5 fault),
   subsystem, category and text (NUL-terminated, truncated to the sizes), or 0 when there is none. */
int32_t pm_kernel_log_next(uint32_t *level, char *subsystem, size_t subsystem_size, char *category,
                           size_t category_size, char *message, size_t message_size);
// Loads a prebuilt library file (.metallib on macOS; MetalCPU's library on Linux).
int32_t pm_library_load(pm_library *out, pm_device device, const char *path);
int32_t pm_library_function_count(int64_t *out, pm_library library);
int32_t pm_library_function_name(const char **out, pm_library library, int64_t index);
int32_t pm_library_release(pm_library library);

// The disk cache of compiled kernels (Linux: MetalCPU's, PYMETAL_CACHE_MAX
// bytes at most; macOS: Metal keeps its own, and `path` is NULL). `persistent`
// is 0 when the cache was refused (another user could write it) or has no home:
// compiled kernels are then kept for this process only.
int32_t pm_kernel_cache_info(const char **path, int64_t *entries, int64_t *bytes, int64_t *max_bytes,
                             int32_t *persistent);
// Deletes the cached kernel libraries (loaded ones stay loaded); `removed` says how many.
int32_t pm_kernel_cache_clear(int64_t *removed);
// While `socket` is set (-1: none), a compile stops, failing with "compile
// interrupted", when that socket holds the byte SIGINT (2): Python's
// signal.set_wakeup_fd socket during pm_library_compile, so Ctrl-C stops clang++.
int32_t pm_compile_interrupt_socket(int32_t socket);

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

// The kernel's signature: one record per [[buffer(n)]] and [[threadgroup(n)]]
// parameter, in declaration order (Metal's pipeline reflection; on Linux the
// front end's parameter list and the C++ types of the parameters).
enum pm_binding_kind {
    PM_BINDING_BUFFER = 0,      // [[buffer(index)]]
    PM_BINDING_THREADGROUP = 1, // [[threadgroup(index)]]
};
enum pm_address_space {
    PM_SPACE_UNKNOWN = 0,
    PM_SPACE_DEVICE = 1,
    PM_SPACE_CONSTANT = 2,
    PM_SPACE_THREADGROUP = 3,
};
enum pm_form {
    PM_FORM_UNKNOWN = 0,   // a buffer whose pointer / reference form is not reported (Metal's reflection)
    PM_FORM_POINTER = 1,   // `device T *p`: an array
    PM_FORM_REFERENCE = 2, // `constant T &v`: one T
    PM_FORM_VALUE = 3,     // `T v [[buffer(n)]]`: one T, copied
};
enum pm_scalar_kind {
    PM_SCALAR_OTHER = 0,   // a struct, void, or anything else: raw bytes
    PM_SCALAR_BOOL = 1,
    PM_SCALAR_INT = 2,     // signed integers (char, short, int, long)
    PM_SCALAR_UINT = 3,    // unsigned integers (uchar, ushort, uint, ulong)
    PM_SCALAR_FLOAT = 4,   // half, float
    PM_SCALAR_BFLOAT = 5,
};
typedef struct pm_argument_info {
    const char *name;      // the parameter's name ("" if unknown); valid as long as the kernel
    const char *type_name; // the element type: "float", "float4", "atomic_uint", a struct's name, ...
    int32_t binding;       // pm_binding_kind
    int32_t index;         // binding index, 0..30
    int32_t space;         // pm_address_space
    int32_t form;          // pm_form
    int32_t access;        // pm_access
    int32_t scalar;        // pm_scalar_kind of the element type's lanes
    int32_t scalar_size;   // bytes of one lane (0 for PM_SCALAR_OTHER)
    int32_t lanes;         // vector width (1 for scalars)
    int64_t size;          // sizeof the element type (0 when unknown or void)
} pm_argument_info;
int32_t pm_kernel_argument_count(int64_t *out, pm_kernel kernel);
int32_t pm_kernel_argument(pm_argument_info *out, pm_kernel kernel, int64_t position);
int32_t pm_kernel_release(pm_kernel kernel);

// ---- Streams and dispatch -------------------------------------------------------
// A stream is a command queue with an open command buffer per thread that
// encodes into it (so that a failure is that thread's alone). Dispatches are
// encoded into it and committed when a batch is full, on pm_stream_commit,
// on pm_stream_synchronize, or before another thread's dispatch that uses one
// of its buffers (work runs in the order it was encoded).
int32_t pm_stream_new(pm_stream *out, pm_device device);
int32_t pm_stream_commit(pm_stream stream);
// Commits and waits for all work (of every thread); returns PM_ERROR_EXECUTION
// with the kernel's error if work this thread encoded failed (another thread's
// failures are reported to that thread).
int32_t pm_stream_synchronize(pm_stream stream);
// Commits and waits for all work, reporting no failure (read the buffers'
// errors with pm_buffer_error).
int32_t pm_stream_wait(pm_stream stream);
// Commits and waits for all work; returns PM_ERROR_EXECUTION only if the
// command buffer that holds this thread's latest dispatch failed (a
// synchronous call's own work); this thread's older failures stay for
// pm_stream_synchronize.
int32_t pm_stream_finish(pm_stream stream);
// GPU seconds (end - start) of the last completed command buffer (0 if none).
int32_t pm_stream_gpu_time(double *out, pm_stream stream);
int32_t pm_stream_release(pm_stream stream);

// Kernel faults and time limit. On the CPU backend a dispatch that runs longer
// than the limit fails its command buffer (PM_ERROR_EXECUTION, "timed out"),
// like a GPU's watchdog (per dispatch: the engine batches queued dispatches); PYMETAL_KERNEL_TIMEOUT sets the initial limit (default 30 s, 0:
// none). Metal: the system's watchdog applies; setting it is PM_ERROR_UNSUPPORTED.
int32_t pm_set_kernel_timeout(double seconds);
int32_t pm_kernel_timeout(double *out);
// Stops all running and committed work (their command buffers fail as interrupted).
int32_t pm_cancel_all(void);

enum pm_arg_kind {
    PM_ARG_BUFFER = 0,            // buffer + offset            -> [[buffer(index)]]
    PM_ARG_BYTES = 1,             // bytes/length copied now     -> [[buffer(index)]]
    PM_ARG_THREADGROUP_MEMORY = 2 // length bytes                -> [[threadgroup(index)]]
};

typedef struct pm_arg {
    int32_t kind;     // pm_arg_kind
    int32_t index;    // binding index, 0..PM_MAX_BINDINGS-1
    pm_buffer buffer; // PM_ARG_BUFFER
    uint64_t offset;  // PM_ARG_BUFFER: byte offset into the buffer
    const void *bytes;// PM_ARG_BYTES (1 to PM_MAX_BYTES bytes, as Metal's setBytes)
    uint64_t length;  // PM_ARG_BYTES / PM_ARG_THREADGROUP_MEMORY; PM_ARG_BUFFER: the exact bytes from offset
                      // (0: to the end; PM_ARG_LENGTH_EMPTY: none, an empty array)
} pm_arg;
// pm_arg.length of a buffer argument that is an empty array: shader validation reports any access to it.
#define PM_ARG_LENGTH_EMPTY 0xFFFFFFFFFFFFFFFFull // UINT64_MAX

// Encodes one dispatch. `size` is threads per grid (by_groups = 0, like
// dispatchThreads) or threadgroups per grid (by_groups = 1, like
// dispatchThreadgroups). `threadgroup` may be NULL or {0,0,0} to let pymetal
// choose. Every dimension must be >= 1. The arguments are checked against the
// kernel's signature before anything is encoded (every parameter bound, with
// enough bytes): a bad call fails here, not when the work runs. Work that
// fails when it runs is reported by pm_stream_synchronize on the thread that
// encoded it, and only there; other threads' work is not affected.
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
