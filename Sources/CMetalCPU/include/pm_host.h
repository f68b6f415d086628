// Host-side helpers for MetalCPU that Swift's Glibc module does not expose.
#ifndef PM_HOST_H
#define PM_HOST_H
#ifdef __cplusplus
extern "C" {
#endif
// The file of the shared object that defines `symbol_name` in this process
// (e.g. the Swift runtime's, to find the toolchain's clang++), or NULL.
const char *pm_host_object_path(const char *symbol_name);
// The file of the binary MetalCPU is linked into (libPyMetal, a test, a tool):
// its identity goes into compile-cache keys, so a rebuilt front end recompiles.
const char *pm_host_self_path(void);
#ifdef __cplusplus
}
#endif
#endif
