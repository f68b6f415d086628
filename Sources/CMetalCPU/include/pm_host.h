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

// The worker pool (pool.c): runs threadgroups [0, groups) of `launch` as
// `chunks` equal chunks, on the calling thread and the pool's workers; returns
// 0, or non-zero with `status` holding the first failed chunk's error. The pool
// runs one job at a time: a call made while it is busy runs here, whole.
int32_t pm_pool_run(pm_run_fn run, const pm_launch *launch, uint64_t groups, uint32_t chunks, pm_status *status);
// How many worker threads the pool has (starting them on first use): cores - 1.
uint32_t pm_pool_workers(void);
#ifdef __cplusplus
}
#endif
#endif
