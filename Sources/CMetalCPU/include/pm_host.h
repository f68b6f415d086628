// Host-side helpers for MetalCPU that Swift's Glibc module does not expose.
#ifndef PM_HOST_H
#define PM_HOST_H
#include "pm_kernel_abi.h"
#ifdef __cplusplus
extern "C" {
#endif
// The file of the shared object that defines `symbol_name` in this process
// (e.g. the Swift runtime's, to find the toolchain's clang++), or NULL.
const char *pm_host_object_path(const char *symbol_name);
// The file of the binary MetalCPU is linked into (libPyMetal, a test, a tool):
// its identity goes into compile-cache keys, so a rebuilt front end recompiles.
const char *pm_host_self_path(void);
// The cores this process may run on: its affinity mask on Linux (as
// Foundation's activeProcessorCount), the online cores elsewhere.
int32_t pm_host_cpu_count(void);
// Names the calling thread (Linux: shown in /proc and debuggers; elsewhere a no-op).
void pm_host_name_thread(const char *name);

// Runs the program `path` (spawn.c) with `argv` (NULL-terminated) in its own
// process group, stdin from /dev/null, stdout and stderr to the file `log`
// (created 0600, never through a symlink), its address space and the files it
// writes limited to `memory_limit` bytes (0: no limit), no core dumps, killed if the calling thread dies
// (Linux). `*done` becomes readable (end of file) once it and everything it
// started have exited. Returns 0 or an errno value.
int32_t pm_host_spawn(const char *path, char *const argv[], const char *log, uint64_t memory_limit,
                      int32_t *pid, int32_t *done);
// Waits up to `timeout_ms` for `done` of pm_host_spawn (1), or for the socket
// `watch` (-1: none) to hold the byte SIGINT, as Python's signal wakeup socket
// does after a Ctrl-C (2; 3 if it holds other bytes: stop watching it). 0 on
// timeout or a signal.
int32_t pm_host_wait(int32_t done, int32_t watch, int32_t timeout_ms);
// Whether `path` can be given to dlopen as a kernel library (library_file.c): a
// regular file, a 64-bit ELF shared object that holds every segment and section
// its headers describe (a truncated one would be SIGBUS on loading). Returns 0,
// or non-zero with `message` saying what is wrong.
int32_t pm_host_check_library(const char *path, char *message, size_t size);
typedef struct pm_job pm_job; // one execution of a command buffer (guard.c)

// The worker pool (pool.c): runs threadgroups [0, groups) of `launch` as
// `chunks` equal chunks, on the calling thread and the pool's workers; returns
// 0, or non-zero with `status` holding the first failed chunk's error. The pool
// runs one job at a time: a call made while it is busy runs here, whole.
// Each chunk runs through pm_guarded_run for the command buffer `cb` (may be null); once a chunk
// failed, the chunks not yet started are skipped. `wake`: wake sleeping workers; 0 (a job
// smaller than a worker's wake-up is worth) lets only workers still spinning after their last
// job take chunks, and runs the job on the caller, whole, when all of them sleep.
// `alone_ns` gets how long the job takes on one thread: its time when it ran whole here, else
// the caller's own chunks' time scaled to all chunks (0 when the caller ran none).
int32_t pm_pool_run(pm_job *cb, pm_run_fn run, const pm_launch *launch, uint64_t groups, uint32_t chunks,
                    int wake, uint64_t *alone_ns, pm_status *status);
// How many worker threads the pool has (starting them on first use): cores - 1.
uint32_t pm_pool_workers(void);

// Faults, timeouts and Ctrl-C (guard.c).
enum { PM_CANCEL_TIMED_OUT = 1, PM_CANCEL_INTERRUPTED = 2 };
// Usable stack of one fiber (runtime.h / fiber.h: a 128 KiB slot less its guard
// page, header and cache stagger), for messages.
#define PM_FIBER_STACK_BYTES (120u * 1024u)
#define PM_FIBER_SLOT_BYTES (128u * 1024u) // PM_FIBER_SLOT
// Runs threadgroups [first, end) like run(), with the calling thread marked as
// running kernel code for `job`: a memory fault, stack overflow, trap or
// unemulated SIGFPE there, or the job's cancellation (timeout, interrupt),
// ends the run with non-zero and `status` saying what happened.
int32_t pm_guarded_run(pm_job *job, pm_run_fn run, const pm_launch *launch, uint64_t first, uint64_t end,
                       pm_status *status);
// A command buffer starts executing (watched for its timeout) / has finished.
// `committed_generation` is pm_interrupt_generation() when it was committed:
// a command buffer committed before an interrupt does not run.
pm_job *pm_job_begin(uint64_t committed_generation);
void pm_job_next_dispatch(pm_job *job); // each dispatch gets the whole time limit
void pm_job_end(pm_job *job);
uint64_t pm_interrupt_generation(void);
// Stops every running and committed command buffer (async-signal-safe).
void pm_host_cancel_all(void);
// A thread starts (+1) / stops (-1) waiting for command buffers: Ctrl-C then cancels all work.
void pm_waiting(int32_t delta);
// The time limit per command buffer in seconds (0: none); PYMETAL_KERNEL_TIMEOUT, default 30.
double pm_host_kernel_timeout(void);
// Returns non-zero for a value that is not a finite number of seconds >= 0.
int32_t pm_host_set_kernel_timeout(double seconds);
// Shader logging (kernel_log.c): MetalCPU's MTLLogState keeps the messages of
// the command buffers it is attached to in a log buffer: at most `capacity`
// bytes of messages (subsystem, category and text with their NULs; past that
// they are dropped, as Metal drops messages past its log state's bufferSize),
// none below `min_level` (MTLLogLevel's raw value). pm_host_kernel_log is the
// sink (pm_log_fn) of kernel libraries: it appends a message to the buffer of
// the job the calling thread runs kernel code for (pm_job_set_log_buffer).
typedef struct pm_log_buffer pm_log_buffer;
typedef struct pm_log_record {
    struct pm_log_record *next;
    uint32_t level; // MTLLogLevel's raw value
    const char *subsystem, *category, *message;
} pm_log_record;
pm_log_buffer *pm_log_buffer_create(uint64_t capacity, uint32_t min_level);
void pm_log_buffer_destroy(pm_log_buffer *buffer);
void pm_host_kernel_log(uint32_t level, const char *subsystem, const char *category, const char *message);
// Takes every message held, oldest first (free them with pm_log_records_free),
// and how many were dropped since the last take.
pm_log_record *pm_log_buffer_take(pm_log_buffer *buffer, uint64_t *dropped);
// Whether there is anything to take (read without the lock, after the kernels that log have returned).
int32_t pm_log_buffer_pending(pm_log_buffer *buffer);
void pm_log_records_free(pm_log_record *list);
// The log buffer of a job (guard.c; null: none), and the job the calling thread runs kernel code for.
void pm_job_set_log_buffer(pm_job *job, pm_log_buffer *buffer);
pm_log_buffer *pm_job_log_buffer(const pm_job *job);
pm_job *pm_current_job(void);
#ifdef __cplusplus
}
#endif
#endif
