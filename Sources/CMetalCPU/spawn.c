// Running clang++ for MetalCPU's compiler (pm_host.h): a child in its own
// process group, with an address-space limit, killed if the compiling thread
// dies, and a pipe that hangs up when it and everything it started have exited
// (so the parent can wait with a timeout). posix_spawn can do none of the
// limits, hence vfork as glibc's posix_spawn uses it: all signals blocked
// around it, and only system calls in the child until exec.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include "pm_host.h"

extern char **environ;

int32_t pm_host_spawn(const char *path, char *const argv[], const char *log, uint64_t memory_limit,
                      int32_t *pid_out, int32_t *done_out) {
    int done[2];
#ifdef __linux__
    if (pipe2(done, O_CLOEXEC) != 0) return errno;
#else
    if (pipe(done) != 0) return errno;
    fcntl(done[0], F_SETFD, FD_CLOEXEC);
    fcntl(done[1], F_SETFD, FD_CLOEXEC);
#endif
    int input = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int output = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (input < 0 || output < 0) {
        int error = errno;
        if (input >= 0) close(input);
        if (output >= 0) close(output);
        close(done[0]);
        close(done[1]);
        return error;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t parent = getpid();
    volatile int child_error = 0; // written by the child: vfork shares memory until exec
    pid_t pid = vfork();
    if (pid == 0) {
        // The parent's handlers (Python's SIGINT, an ignored SIGPIPE) must not carry over.
        struct sigaction action = {0};
        action.sa_handler = SIG_DFL;
        for (int s = 1; s < NSIG; s++) sigaction(s, &action, NULL);
        setpgid(0, 0); // Ctrl-C at a terminal does not reach it; the parent kills the group
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL); // no orphan if the parent is killed
        if (getppid() != parent) _exit(127);
#endif
        if (memory_limit) {
            // No file it writes needs to be larger than its memory (a runaway -E output must not fill the disk).
            struct rlimit limit = {(rlim_t)memory_limit, (rlim_t)memory_limit};
            setrlimit(RLIMIT_AS, &limit);
            setrlimit(RLIMIT_FSIZE, &limit);
        }
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        dup2(input, 0);
        dup2(output, 1);
        dup2(output, 2);
        fcntl(done[1], F_SETFD, 0); // inherited by clang and whatever it runs (the linker)
        sigset_t none;
        sigemptyset(&none);
        pthread_sigmask(SIG_SETMASK, &none, NULL);
        execve(path, argv, environ);
        child_error = errno;
        _exit(127);
    }
    int error = pid < 0 ? errno : child_error;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(input);
    close(output);
    close(done[1]);
    if (pid > 0 && error) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    if (error) {
        close(done[0]);
        return error;
    }
    *pid_out = pid;
    *done_out = done[0];
    return 0;
}

int32_t pm_host_wait(int32_t done, int32_t watch, int32_t timeout_ms) {
    struct pollfd entries[2] = {{.fd = done, .events = POLLIN}, {.fd = watch, .events = POLLIN}};
    int ready = poll(entries, watch >= 0 ? 2 : 1, timeout_ms);
    if (ready <= 0) return 0;
    if (entries[0].revents) return 1;
    // Python's wakeup socket holds one byte per signal, the signal's number: peeked, not taken.
    unsigned char bytes[256];
    ssize_t n = recv(watch, bytes, sizeof bytes, MSG_PEEK | MSG_DONTWAIT);
    for (ssize_t i = 0; i < n; i++)
        if (bytes[i] == SIGINT) return 2;
    return 3;
}
