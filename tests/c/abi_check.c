// Compiled against Sources/CPyMetal/include/pymetal.h and linked with libPyMetal by
// tests/python/runtime/test_c_abi.py: the header and the library must agree, and bad
// input must come back as errors, never a crash.
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "pymetal.h"

_Static_assert(sizeof(pm_arg) == 40, "pm_arg layout is part of the ABI");
_Static_assert(sizeof(pm_launch_config) == 48, "pm_launch_config layout is part of the ABI");

#define CHECK(call) do { if ((call) != PM_OK) { fprintf(stderr, "%s: %s\n", #call, pm_last_error()); return 1; } } while (0)
#define EXPECT_ERROR(call, code) do { int32_t s = (call); if (s != (code)) { \
    fprintf(stderr, "%s returned %d, expected %d\n", #call, s, code); return 1; } \
    if (!*pm_last_error()) { fprintf(stderr, "%s: no message\n", #call); return 1; } } while (0)

int main(void) {
    if (pm_abi_version() != PM_ABI_VERSION) return 1;
    pm_device device = 0;
    CHECK(pm_device_default(&device));
    const char *backend = NULL;
    CHECK(pm_device_backend(&backend, device));

    // Bad handles, NULLs, absurd sizes, wrong indices.
    uint64_t length;
    EXPECT_ERROR(pm_buffer_length(&length, 0), PM_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(pm_buffer_length(&length, 0xdeadbeef), PM_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(pm_buffer_length(&length, device), PM_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(pm_buffer_length(NULL, device), PM_ERROR_INVALID_ARGUMENT);
    pm_buffer huge;
    EXPECT_ERROR(pm_buffer_new(&huge, device, UINT64_MAX), PM_ERROR_INVALID_ARGUMENT);
    pm_library library;
    EXPECT_ERROR(pm_library_compile(&library, device,
                                    "#include <metal_stdlib>\nkernel void k(device float* o [[buffer(0)]]) { o[0] = nope; }",
                                    NULL, 0),
                 PM_ERROR_COMPILE);
    if (!strstr(pm_last_error(), "nope")) { fprintf(stderr, "diagnostics lack the name: %s\n", pm_last_error()); return 1; }

    const char *source =
        "#include <metal_stdlib>\n"
        "kernel void scale(device float* x [[buffer(0)]], constant float& a [[buffer(1)]],\n"
        "                  uint i [[thread_position_in_grid]]) { x[i] *= a; }\n";
    CHECK(pm_library_compile(&library, device, source, NULL, 0));
    pm_kernel kernel;
    EXPECT_ERROR(pm_kernel_new(&kernel, library, "missing"), PM_ERROR_NOT_FOUND);
    CHECK(pm_kernel_new(&kernel, library, "scale"));
    // How the kernel uses each buffer index: x is written, a is constant, 2 is unbound.
    int32_t access[3];
    for (int32_t i = 0; i < 3; i++) CHECK(pm_kernel_buffer_access(&access[i], kernel, i));
    if (access[0] != PM_ACCESS_READ_WRITE || access[1] != PM_ACCESS_READ_ONLY || access[2] != PM_ACCESS_UNUSED) {
        fprintf(stderr, "buffer access %d %d %d\n", access[0], access[1], access[2]);
        return 1;
    }
    EXPECT_ERROR(pm_kernel_buffer_access(&access[0], kernel, 31), PM_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(pm_kernel_buffer_access(&access[0], kernel, -1), PM_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(pm_kernel_buffer_access(NULL, kernel, 0), PM_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(pm_kernel_buffer_access(&access[0], library, 0), PM_ERROR_INVALID_ARGUMENT);
    // The signature: x: device float*, a: constant float&.
    int64_t count = 0;
    CHECK(pm_kernel_argument_count(&count, kernel));
    pm_argument_info info[2];
    if (count != 2) { fprintf(stderr, "%lld arguments\n", (long long)count); return 1; }
    for (int64_t i = 0; i < 2; i++) CHECK(pm_kernel_argument(&info[i], kernel, i));
    if (strcmp(info[0].name, "x") || strcmp(info[0].type_name, "float") || info[0].access != PM_ACCESS_READ_WRITE
        || info[0].binding != PM_BINDING_BUFFER || info[0].scalar != PM_SCALAR_FLOAT || info[0].scalar_size != 4
        || info[0].lanes != 1 || info[0].size != 4 || info[1].index != 1 || strcmp(info[1].name, "a")
        || info[1].access != PM_ACCESS_READ_ONLY || (!strcmp(backend, "cpu") && (info[0].form != PM_FORM_POINTER
        || info[1].form != PM_FORM_REFERENCE || info[1].space != PM_SPACE_CONSTANT))) {
        fprintf(stderr, "signature: %s %s %d %d / %s %d\n", info[0].name, info[0].type_name, info[0].form,
                info[0].scalar, info[1].name, info[1].form);
        return 1;
    }
    EXPECT_ERROR(pm_kernel_argument(&info[0], kernel, 2), PM_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(pm_kernel_argument(&info[0], kernel, -1), PM_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(pm_kernel_argument(NULL, kernel, 0), PM_ERROR_INVALID_ARGUMENT);
    // A macro line without a name is an error, not a crash.
    pm_library other;
    EXPECT_ERROR(pm_library_compile(&other, device, source, "=1\n", 0), PM_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(pm_library_compile(&other, device, source, "A=1\n  =2", 0), PM_ERROR_INVALID_ARGUMENT);
    // Wrapping more memory than a buffer can hold, or memory that wraps around the address space.
    int64_t page = 0;
    CHECK(pm_device_page_size(&page, device));
    EXPECT_ERROR(pm_buffer_wrap(&huge, device, (void *)(uintptr_t)page, UINT64_MAX - (uint64_t)page + 1), PM_ERROR_INVALID_ARGUMENT);
    EXPECT_ERROR(pm_buffer_wrap(&huge, device, (void *)(uintptr_t)page, (uint64_t)1 << 62), PM_ERROR_INVALID_ARGUMENT);
    int64_t tgmem = 0;
    CHECK(pm_device_max_threadgroup_memory(&tgmem, device));
    if (tgmem < 16384) { fprintf(stderr, "threadgroup memory %lld\n", (long long)tgmem); return 1; }
    pm_stream stream;
    CHECK(pm_stream_new(&stream, device));
    pm_buffer buffer;
    CHECK(pm_buffer_new(&buffer, device, 100 * sizeof(float)));
    float *x = NULL;
    CHECK(pm_buffer_contents((void **)&x, buffer));
    for (int i = 0; i < 100; i++) x[i] = (float)i;
    float a = 3.0f;
    pm_arg args[2];
    memset(args, 0, sizeof args);
    args[0].kind = PM_ARG_BUFFER; args[0].index = 0; args[0].buffer = buffer;
    args[1].kind = PM_ARG_BYTES; args[1].index = 1; args[1].bytes = &a; args[1].length = sizeof a;
    uint32_t size[3] = {100, 1, 1};
    uint32_t too_big[3] = {4096, 1, 1};
    EXPECT_ERROR(pm_dispatch(stream, kernel, args, 2, size, too_big, 0), PM_ERROR_INVALID_ARGUMENT);
    args[1].index = 31;
    EXPECT_ERROR(pm_dispatch(stream, kernel, args, 2, size, NULL, 0), PM_ERROR_INVALID_ARGUMENT);
    args[1].index = 1;
    // A parameter left unbound, or a value too small for it, fails the dispatch itself.
    EXPECT_ERROR(pm_dispatch(stream, kernel, args, 1, size, NULL, 0), PM_ERROR_INVALID_ARGUMENT);
    args[1].length = 2;
    EXPECT_ERROR(pm_dispatch(stream, kernel, args, 2, size, NULL, 0), PM_ERROR_INVALID_ARGUMENT);
    args[1].length = sizeof a;
    CHECK(pm_dispatch(stream, kernel, args, 2, size, NULL, 0));
    CHECK(pm_stream_synchronize(stream));
    for (int i = 0; i < 100; i++) if (x[i] != 3.0f * (float)i) { fprintf(stderr, "x[%d] = %g\n", i, x[i]); return 1; }
    // The same through a launch configuration record.
    pm_launch_config config = {stream, kernel, {100, 1, 1}, {0, 0, 0}, 0, 0};
    EXPECT_ERROR(pm_dispatch_launch(NULL, args, 2), PM_ERROR_INVALID_ARGUMENT);
    config.threadgroup[0] = 4096;
    EXPECT_ERROR(pm_dispatch_launch(&config, args, 2), PM_ERROR_INVALID_ARGUMENT);
    config.threadgroup[0] = 32; config.threadgroup[1] = 1; config.threadgroup[2] = 1;
    CHECK(pm_dispatch_launch(&config, args, 2));
    CHECK(pm_stream_synchronize(stream));
    for (int i = 0; i < 100; i++) if (x[i] != 9.0f * (float)i) { fprintf(stderr, "x[%d] = %g\n", i, x[i]); return 1; }
    // Work that ran leaves no error on what it wrote; the count of poisoned buffers is readable without a call.
    CHECK(pm_dispatch(stream, kernel, args, 2, size, NULL, 0));
    CHECK(pm_stream_finish(stream));
    CHECK(pm_stream_wait(stream));
    CHECK(pm_buffer_error(buffer));
    CHECK(pm_buffer_clear_error(buffer));
    EXPECT_ERROR(pm_buffer_error(0), PM_ERROR_INVALID_ARGUMENT);
    const int64_t *poisoned = NULL;
    EXPECT_ERROR(pm_buffer_error_count(NULL), PM_ERROR_INVALID_ARGUMENT);
    CHECK(pm_buffer_error_count(&poisoned));
    if (!poisoned || *poisoned != 0) { fprintf(stderr, "poisoned buffers: %p\n", (const void *)poisoned); return 1; }

    CHECK(pm_buffer_release(buffer));
    EXPECT_ERROR(pm_buffer_release(buffer), PM_ERROR_INVALID_ARGUMENT);
    CHECK(pm_kernel_release(kernel));
    CHECK(pm_library_release(library));
    CHECK(pm_stream_release(stream));
    printf("abi_check ok (%s)\n", backend);
    return 0;
}
