// Host helpers for MetalCPU (pm_host.h). pm_kernel_abi.h is header-only.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stddef.h>
#include "pm_host.h"

const char *pm_host_object_path(const char *symbol_name) {
    void *symbol = dlsym(RTLD_DEFAULT, symbol_name);
    Dl_info info;
    if (!symbol || !dladdr(symbol, &info)) return NULL;
    return info.dli_fname;
}

const char *pm_host_self_path(void) {
    Dl_info info;
    if (!dladdr((void *)&pm_host_self_path, &info)) return NULL;
    return info.dli_fname;
}

int32_t pm_host_cpu_count(void) {
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int32_t)online : 1;
}

void pm_host_name_thread(const char *name) {
#ifdef __linux__
    pthread_setname_np(pthread_self(), name);
#else
    (void)name;
#endif
}
