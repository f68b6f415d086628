// The binary interface between MetalCPU (Swift) and a kernel library it
// compiled from MSL (a shared object made by clang++ from the user's source,
// the MSL compatibility headers in Sources/MetalCPU/MSL and generated launchers).
//
// Plain C so that both Swift (through the CMetalCPU module) and the C++ kernel
// side include the very same declarations.
#ifndef PM_KERNEL_ABI_H
#define PM_KERNEL_ABI_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PM_KERNEL_ABI_VERSION 3u
#define PM_MAX_BUFFERS 31               // [[buffer(0..30)]], as Metal
#define PM_MAX_THREADGROUP_ARGS 31      // [[threadgroup(0..30)]]
#define PM_MAX_THREADGROUP_MEMORY 32768 // bytes per threadgroup, as Apple GPUs
#define PM_SIMD_WIDTH 32
#define PM_ERROR_CAPACITY 512

// One dispatch, as encoded by a compute command encoder.
typedef struct pm_launch {
    void *buffers[PM_MAX_BUFFERS];                  // base + offset, or setBytes copies
    uint64_t buffer_lengths[PM_MAX_BUFFERS];        // bytes visible from that address
    uint32_t threadgroup_lengths[PM_MAX_THREADGROUP_ARGS]; // setThreadgroupMemoryLength
    uint32_t threads_per_grid[3];       // dispatchThreads: as given; dispatchThreadgroups: groups * threadgroup
    uint32_t threads_per_threadgroup[3];
    uint32_t threadgroups_per_grid[3];
    uint32_t uniform;                   // 1: dispatchThreadgroups (every group whole); 0: dispatchThreads
    uint32_t poison_threadgroup_memory; // 1: fill threadgroup memory with 0xFF at each group start
} pm_launch;

// Where a run reports a kernel-side error (a divergent barrier, ...).
typedef struct pm_status {
    int32_t code;                       // 0 = ok
    char message[PM_ERROR_CAPACITY];    // NUL-terminated
} pm_status;

// Runs threadgroups [first, end) of a launch (groups linearised x fastest).
// Thread-safe: MetalCPU calls it from several OS threads at once with disjoint ranges.
typedef int32_t (*pm_run_fn)(const pm_launch *launch, uint64_t first, uint64_t end, pm_status *status);

enum {
    PM_KERNEL_LOOP = 0,   // no barrier / SIMD-group call reachable: threads run as a plain loop
    PM_KERNEL_FIBERS = 1, // threads of a group run as fibers that meet at barriers
    PM_KERNEL_LOCKSTEP = 2, // one call runs a group, statement by statement across its threads
};

typedef struct pm_kernel_desc {
    const char *name;                  // host name ([[host_name]] or the function's name)
    pm_run_fn run;
    uint32_t mode;                     // PM_KERNEL_LOOP, _FIBERS or _LOCKSTEP
    uint32_t max_total_threads;        // [[max_total_threads_per_threadgroup(n)]], else 0
    uint32_t static_threadgroup_bytes; // kernel-scope threadgroup variables
} pm_kernel_desc;

// Exported by every kernel library as `pm_cpu_library`. Returns PM_KERNEL_ABI_VERSION.
typedef uint32_t (*pm_library_fn)(const pm_kernel_desc **kernels, uint32_t *count);
#define PM_LIBRARY_SYMBOL "pm_cpu_library"

// What each kernel parameter binds to, so that MetalCPU can refuse a dispatch
// that would read an unbound or too-small buffer (a GPU would fault or read
// garbage), and which buffers the kernel cannot write (Metal's reflection
// reports the same as MTLBindingAccess.readOnly). Emitted by the front end as
// `pm_cpu_bindings`, parallel to pm_cpu_library's kernels (same order, same count).
enum {
    PM_BIND_BUFFER = 0,      // [[buffer(index)]]
    PM_BIND_THREADGROUP = 1, // [[threadgroup(index)]]
    PM_BIND_POSITION = 2,    // a thread-position attribute
};

// pm_binding.flags
#define PM_BIND_READ_ONLY 1u     // the kernel cannot write through it: `device const T*`, `constant T&`, a value
#define PM_BIND_POINTER 2u       // `T *p` (else with PM_BIND_REFERENCE `T &r`, else a value)
#define PM_BIND_REFERENCE 4u
#define PM_BIND_ATOMIC 8u        // the element type is atomic<T> (atomic_uint, ...)

// pm_binding.type: the element type (pointee, referenced or value type, without
// const and atomic<>) as PM_ELEM_* | bytes of one lane << 8 | lanes << 16.
enum {
    PM_ELEM_OTHER = 0, // a struct, void, ...: raw bytes
    PM_ELEM_BOOL = 1,
    PM_ELEM_INT = 2,   // char, short, int, long
    PM_ELEM_UINT = 3,  // uchar, ushort, uint, ulong
    PM_ELEM_FLOAT = 4, // half, float
    PM_ELEM_BFLOAT = 5,
};

typedef struct pm_binding {
    uint32_t kind;      // PM_BIND_*
    uint32_t index;     // binding index (0 for positions)
    uint32_t min_bytes; // bytes the kernel reads at least: sizeof the pointee / referenced / value type
    uint32_t flags;     // PM_BIND_READ_ONLY | PM_BIND_POINTER | PM_BIND_REFERENCE | PM_BIND_ATOMIC
    uint32_t type;      // the element type, see PM_ELEM_*
    uint32_t size;      // sizeof the element type (0 for void)
    const char *name;   // the parameter's name ("" when it has none)
    const char *type_name; // the element type as written (the front end's text; "" when unknown)
} pm_binding;

typedef struct pm_kernel_bindings {
    const pm_binding *bindings;
    uint32_t count;
} pm_kernel_bindings;

#define PM_BINDINGS_SYMBOL "pm_cpu_bindings"

// Shader logging (<metal_logging>, os_log): a library compiled with logging
// exports `pm_cpu_log_sink`, a function pointer that MetalCPU sets when it
// loads the library; each message is handed to it whole, in the order of the
// thread that logs it. level: 0 default, 1 info, 2 debug, 3 error, 4 fault.
typedef void (*pm_log_fn)(uint32_t level, const char *subsystem, const char *category, const char *message);
#define PM_LOG_SINK_SYMBOL "pm_cpu_log_sink"

// The library's function constants (`constant bool has_w [[function_constant(20)]];`),
// exported as `pm_cpu_function_constants` by a library that declares any, ended by
// a NULL name. A library compiled without values has every constant undefined;
// MetalCPU compiles the source again with the values of makeFunction(name:constantValues:).
typedef struct pm_function_constant {
    const char *name;
    uint32_t index;         // [[function_constant(index)]]
    uint32_t type;          // MTLDataType raw value of the declared type (0: none MetalCPU can set)
    const char *kernels;    // host names of the kernels that use its value, each followed by '\n'
} pm_function_constant;

#define PM_FUNCTION_CONSTANTS_SYMBOL "pm_cpu_function_constants"

#ifdef __cplusplus
}
#endif
#endif
