// Faults, timeouts and Ctrl-C in kernels (pm_host.h): a kernel that faults or
// runs too long fails its command buffer, as on a GPU, and the process goes on.
//
// Every run of kernel code goes through pm_guarded_run, which marks the calling
// thread as "in kernel code" (a sigsetjmp point). The handlers installed here
// for SIGSEGV, SIGBUS, SIGILL, SIGTRAP and SIGFPE jump back to that point when
// the fault happens on a marked thread, and otherwise chain to the handler that
// was installed before (Python's faulthandler, Swift's backtracer, the default
// action): faults outside kernel code behave as they always did. The handlers
// run on a per-thread alternate signal stack, so a stack overflow is caught too.
//
// Integer division: x86-64 traps (SIGFPE) on division by zero and on
// INT_MIN / -1, arm64 does not. On x86-64 the handler completes the faulting
// div/idiv with arm64's results and skips it: x / 0 = 0, x % 0 = x,
// INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0. Division that does not trap costs
// nothing extra.
//
// Kernel stacks: kernel code never runs on the thread's own stack. Each guard
// has a stack of its own (PM_KERNEL_STACK, reserved, its pages used on demand)
// between two guards (no access), and pm_guarded_run switches to it. A write past
// the end of a local array (an overrun: it goes up, towards the callers'
// frames) then meets the guard above the kernel's stack instead of the frames
// of Python and the thread's TLS, and a deep recursion meets the guard below:
// either is a fault like any other, and the thread's own stack, where the
// sigsetjmp point is, stays intact. On a GPU such a write stays inside its
// thread; here it fails the command buffer, which is the contained outcome.
// Fiber stacks (fiber.h) have a guard page below each stack, which is also the
// one above the stack below it; LOCKSTEP mode's per-thread arrays live on the
// kernel stack (runtime.h).
//
// Stopping a running command buffer: each execution of one is a pm_job. A
// watchdog thread cancels jobs that run past their deadline, and jobs older
// than an interrupt (Ctrl-C while a thread waits for kernels, or
// pm_host_cancel_all), then sends PM_SIG_CANCEL to the threads running them; the
// handler jumps back as for a fault. Kernel code holds no locks and allocates
// nothing, so abandoning it in the middle is safe; the MSL runtime resets its
// per-thread state at the next run.
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include "pm_host.h"

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define PM_SIG_CANCEL (SIGRTMAX - 3)
#define PM_ALT_STACK (64 * 1024)
#define PM_KERNEL_STACK (8u << 20)  // as a thread's default stack (RLIMIT_STACK): what kernels ran on before
#define PM_KERNEL_GUARD (1u << 20)  // a guard on each side: address space only
#define PM_MADV_GUARD_INSTALL 102   // madvise: a guard region (Linux 6.13+; older kernels: EINVAL)
#define PM_WATCH_TICK 0.02      // seconds between watchdog checks while command buffers run
#define PM_DEFAULT_TIMEOUT 30.0 // seconds; PYMETAL_KERNEL_TIMEOUT, pm_host_set_kernel_timeout

struct pm_job {
    _Atomic int32_t cancel; // PM_CANCEL_*: set by the watchdog
    uint64_t generation;    // the interrupt generation when its command buffer was committed
    double deadline;        // CLOCK_MONOTONIC seconds, set when the watchdog first sees the job; 0: none
    double timeout;
    // The limit is per dispatch, not per command buffer (whose batch of queued dispatches the
    // user does not choose): the watchdog restarts the deadline when this count moves.
    _Atomic uint64_t dispatches;
    uint64_t seen;
    pm_log_buffer *log; // where its kernels' os_log messages go (kernel_log.c), or null
    struct pm_job *next, *prev;
};

// One thread's guard. Only a pointer is thread-local (initial-exec: a signal
// handler must not make the dynamic loader allocate TLS).
typedef struct guard {
    sigjmp_buf env;
    volatile sig_atomic_t active; // running kernel code: faults jump to env
    pm_job *job;
    int sig, code;
    uintptr_t addr, sp, pc;
    void *alt; // the alternate signal stack this guard made (0: the thread had one)
    unsigned char *stack; // the kernel stack's mapping: guard, PM_KERNEL_STACK, guard (0: none)
    // For the watchdog, which sends PM_SIG_CANCEL to the threads running a cancelled job.
    pthread_t tid;
    _Atomic(pm_job *) running; // the job it runs now, or null
    struct guard *next, *prev; // in `guards`
} guard;
static __thread guard *g_self __attribute__((tls_model("initial-exec")));

// Every thread with a guard, however many (a list, not a table: no thread is
// ever left out of timeouts and Ctrl-C).
static guard *guards;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER; // `guards`: thread starts and exits, sending signals

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static pthread_key_t guard_key;
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE};
static struct sigaction previous[65]; // the handlers ours replaced (by signal number)
static struct sigaction previous_int;

static _Atomic uint64_t generation = 1; // bumped by each interrupt
static _Atomic int32_t waiting;         // threads waiting for command buffers
static _Atomic double timeout_s;        // 0: no timeout
static pthread_once_t timeout_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pm_job *jobs;      // running jobs
static pm_job *free_jobs; // ended ones, for reuse (no allocation per command buffer)
static _Atomic int watchdog_started;
static int watchdog_idle;    // under jobs_lock: asleep until a job begins
static uint64_t jobs_begun;  // under jobs_lock
static sem_t watchdog_wake;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// ---------------------------------------------------------------------------
// x86-64: completing a trapping integer division
// ---------------------------------------------------------------------------
#if defined(__x86_64__)
// gregs index of x86 register number n (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15).
static const int greg_of[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

static uint64_t truncate_to(uint64_t v, int bits) { return bits == 64 ? v : v & ((1ull << bits) - 1); }
static int64_t sign_extend(uint64_t v, int bits) {
    return bits == 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}
// Writes the low `bits` of register n as an instruction would (32-bit writes zero the upper half).
static void set_reg(greg_t *r, int n, uint64_t v, int bits) {
    uint64_t old = (uint64_t)r[greg_of[n]];
    if (bits == 64 || bits == 32) r[greg_of[n]] = (greg_t)truncate_to(v, bits);
    else r[greg_of[n]] = (greg_t)((old & ~((1ull << bits) - 1)) | truncate_to(v, bits));
}

// Decodes the div / idiv at the faulting pc (legacy 0x66 and REX prefixes,
// F6 /6 /7 and F7 /6 /7, register or memory operand), writes arm64's results
// and moves past it. Returns 0 for anything else (then the fault stands).
static int complete_division(ucontext_t *uc) {
    greg_t *r = uc->uc_mcontext.gregs;
    const uint8_t *p = (const uint8_t *)r[REG_RIP];
    int bits = 32, rex = 0;
    for (int i = 0; i < 4; i++) {
        if (*p == 0x66) bits = 16, p++;
        else if ((*p & 0xF0) == 0x40) rex = *p++;
        else break;
    }
    if (rex & 8) bits = 64;
    if (*p == 0xF6) bits = 8;
    else if (*p != 0xF7) return 0;
    p++;
    uint8_t modrm = *p++;
    int mod = modrm >> 6, op = (modrm >> 3) & 7, rm = modrm & 7;
    if (op != 6 && op != 7) return 0;
    const int is_signed = op == 7;
    uint64_t divisor;
    if (mod == 3) {
        int n = rm | ((rex & 1) << 3);
        if (bits == 8 && !rex && n >= 4) divisor = ((uint64_t)r[greg_of[n - 4]] >> 8) & 0xFF; // ah, ch, dh, bh
        else divisor = truncate_to((uint64_t)r[greg_of[n]], bits);
    } else {
        uintptr_t addr = 0;
        int rip_relative = 0;
        if (rm == 4) {
            uint8_t sib = *p++;
            int index = ((sib >> 3) & 7) | ((rex & 2) << 2), base = (sib & 7) | ((rex & 1) << 3);
            if (index != 4) addr += (uintptr_t)r[greg_of[index]] << (sib >> 6);
            if ((sib & 7) == 5 && mod == 0) {
                int32_t d;
                memcpy(&d, p, 4);
                p += 4;
                addr += (uintptr_t)(intptr_t)d;
            } else {
                addr += (uintptr_t)r[greg_of[base]];
            }
        } else if (rm == 5 && mod == 0) {
            rip_relative = 1;
        } else {
            addr = (uintptr_t)r[greg_of[rm | ((rex & 1) << 3)]];
        }
        if (mod == 1) addr += (uintptr_t)(intptr_t)(int8_t)*p++;
        if (mod == 2 || rip_relative) {
            int32_t d;
            memcpy(&d, p, 4);
            p += 4;
            addr += (uintptr_t)(intptr_t)d;
        }
        if (rip_relative) addr += (uintptr_t)p; // relative to the next instruction (div has no immediate)
        divisor = 0;
        memcpy(&divisor, (const void *)addr, (size_t)bits / 8);
    }
    // The dividend: ax for 8-bit, else rdx:rax; compilers fill rdx by sign or
    // zero extension, so rax holds the whole dividend.
    const int dividend_bits = bits == 8 ? 16 : bits;
    const uint64_t dividend = truncate_to((uint64_t)r[REG_RAX], dividend_bits);
    uint64_t quotient, remainder;
    if (divisor == 0) {
        quotient = 0;
        remainder = dividend;
    } else if (is_signed && sign_extend(divisor, bits) == -1) {
        quotient = (uint64_t)(-(uint64_t)sign_extend(dividend, dividend_bits)); // INT_MIN stays INT_MIN
        remainder = 0;
    } else {
        return 0; // an unsigned quotient that overflows: not code a compiler emits
    }
    if (bits == 8) {
        set_reg(r, 0, truncate_to(quotient, 8) | truncate_to(remainder, 8) << 8, 16);
    } else {
        set_reg(r, 0, quotient, bits);
        set_reg(r, 2, remainder, bits);
    }
    r[REG_RIP] = (greg_t)(uintptr_t)p;
    return 1;
}
static uintptr_t context_sp(ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP]; }
static uintptr_t context_pc(ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP]; }
#elif defined(__aarch64__)
static int complete_division(ucontext_t *uc) { (void)uc; return 0; } // arm64 division never traps
static uintptr_t context_sp(ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.sp; }
static uintptr_t context_pc(ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.pc; }
#endif

// ---------------------------------------------------------------------------
// Signal handlers
// ---------------------------------------------------------------------------
static int32_t cancel_reason(const pm_job *job) {
    if (!job) return 0;
    int32_t c = atomic_load(&job->cancel);
    if (c) return c;
    return job->generation < atomic_load(&generation) ? PM_CANCEL_INTERRUPTED : 0;
}

// What an invalid access's address says. On x86-64 a general-protection fault (a non-canonical
// address: data used as a pointer, e.g. a spilled pointer that an out-of-bounds store into a
// private array overwrote) reports address 0 with si_code SI_KERNEL; it is no null pointer.
static const char *fault_kind(const guard *g) {
#if defined(__x86_64__) && defined(SI_KERNEL)
    if (g->sig == SIGSEGV && g->code == SI_KERNEL)
        return ", a general-protection fault: a non-canonical address, e.g. data used as a pointer";
#endif
    return g->addr < 4096 ? ", a null pointer" : "";
}

static void jump_back(guard *g, int sig, siginfo_t *si, void *ctx) {
    g->sig = sig;
    g->code = si ? si->si_code : 0;
    g->addr = si ? (uintptr_t)si->si_addr : 0;
    g->sp = ctx ? context_sp((ucontext_t *)ctx) : 0;
    g->pc = ctx ? context_pc((ucontext_t *)ctx) : 0;
    g->active = 0;
    siglongjmp(g->env, 1);
}

// The handler that was there before ours: as if ours had not been installed.
static void chain(const struct sigaction *old, int sig, siginfo_t *si, void *ctx) {
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction) old->sa_sigaction(sig, si, ctx);
        return;
    }
    if (old->sa_handler == SIG_IGN && sig == SIGINT) return;
    if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN) {
        // The default action: a fault re-executes and gets it; a sent signal is sent again.
        signal(sig, SIG_DFL);
        if (si == NULL || si->si_code <= 0) raise(sig);
        return;
    }
    old->sa_handler(sig);
}

static void on_fault(int sig, siginfo_t *si, void *ctx) {
    guard *g = g_self;
    if (g && g->active) {
        if (sig == SIGFPE && complete_division((ucontext_t *)ctx)) return;
        jump_back(g, sig, si, ctx);
    }
    chain(&previous[sig], sig, si, ctx);
}

static void on_cancel(int sig, siginfo_t *si, void *ctx) {
    guard *g = g_self;
    if (g && g->active && cancel_reason(g->job)) jump_back(g, sig, si, ctx);
}

// Ctrl-C: with a thread waiting for kernels, everything running or committed
// is stopped (the waits then return); Python's own handler runs as before, so
// the waiting Python call raises KeyboardInterrupt.
static void on_interrupt(int sig, siginfo_t *si, void *ctx) {
    int ignored = !(previous_int.sa_flags & SA_SIGINFO) && previous_int.sa_handler == SIG_IGN;
    int cancel = !ignored && atomic_load(&waiting) > 0;
    chain(&previous_int, sig, si, ctx); // first: the interrupt is pending before any wait returns
    if (cancel) pm_host_cancel_all();
    guard *g = g_self;
    if (g && g->active && cancel_reason(g->job)) jump_back(g, PM_SIG_CANCEL, NULL, NULL);
}

// Our SIGINT handler, in front of whatever is installed now (re-checked by the
// watchdog: Python may install its own again).
static void hook_interrupt(void) {
    struct sigaction cur;
    if (sigaction(SIGINT, NULL, &cur) != 0) return;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_interrupt) return;
    previous_int = cur;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_interrupt;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | (cur.sa_flags & SA_RESTART);
    sa.sa_mask = cur.sa_mask;
    sigaction(SIGINT, &sa, NULL);
}

static void release_guard(void *p) {
    guard *g = p;
    pthread_mutex_lock(&slots_lock);
    if (g->prev) g->prev->next = g->next;
    else guards = g->next;
    if (g->next) g->next->prev = g->prev;
    pthread_mutex_unlock(&slots_lock);
    if (g->alt) {
        stack_t off = {.ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL);
        munmap(g->alt, PM_ALT_STACK);
    }
    if (g->stack) munmap(g->stack, PM_KERNEL_STACK + 2 * PM_KERNEL_GUARD);
    g_self = NULL;
    free(g);
}

static void install(void) {
    pthread_key_create(&guard_key, release_guard);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fault_signals / sizeof *fault_signals; i++)
        sigaction(fault_signals[i], &sa, &previous[fault_signals[i]]);
    sa.sa_sigaction = on_cancel;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigaction(PM_SIG_CANCEL, &sa, NULL);
}

// The calling thread's guard: an alternate signal stack (unless it has one)
// and a place in `guards`. Null if the system refuses (kernels then run unguarded).
static guard *make_guard(void) {
    pthread_once(&install_once, install);
    guard *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
        void *alt = mmap(NULL, PM_ALT_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (alt != MAP_FAILED) {
            stack_t ss = {.ss_sp = alt, .ss_size = PM_ALT_STACK, .ss_flags = 0};
            if (sigaltstack(&ss, NULL) == 0) g->alt = alt;
            else munmap(alt, PM_ALT_STACK);
        }
    }
    // The guards as guard regions where the kernel has them (Linux 6.13+): one
    // mapping instead of three (vm.max_map_count), else PROT_NONE.
    const size_t bytes = PM_KERNEL_STACK + 2 * PM_KERNEL_GUARD;
    char *stack = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stack != MAP_FAILED) {
        char *guards_at[2] = {stack, stack + PM_KERNEL_GUARD + PM_KERNEL_STACK};
        int ok = 1;
        for (int i = 0; i < 2; i++)
            ok &= madvise(guards_at[i], PM_KERNEL_GUARD, PM_MADV_GUARD_INSTALL) == 0 ||
                  mprotect(guards_at[i], PM_KERNEL_GUARD, PROT_NONE) == 0;
        if (ok) g->stack = (unsigned char *)stack;
        else munmap(stack, bytes);
    }
    g->tid = pthread_self();
    pthread_mutex_lock(&slots_lock);
    g->next = guards;
    if (guards) guards->prev = g;
    guards = g;
    pthread_mutex_unlock(&slots_lock);
    pthread_setspecific(guard_key, g);
    g_self = g;
    return g;
}

// ---------------------------------------------------------------------------
// Guarded runs
// ---------------------------------------------------------------------------
static const char *cancel_message(int32_t reason, const pm_job *job, char *buf, size_t size) {
    if (reason == PM_CANCEL_TIMED_OUT)
        snprintf(buf, size,
                 "timed out: the kernel ran longer than %g s and was stopped (the limit is "
                 "PYMETAL_KERNEL_TIMEOUT or pymetal.set_kernel_timeout(); 0 turns it off)",
                 job->timeout);
    else snprintf(buf, size, "interrupted: the command buffer was stopped (Ctrl-C, or all work cancelled)");
    return buf;
}

static int32_t report_cancel(pm_job *job, pm_status *st) {
    cancel_message(cancel_reason(job), job, st->message, sizeof st->message);
    st->code = 1;
    return 1;
}

static int32_t report_fault(guard *g, pm_job *job, pm_status *st) {
    char *m = st->message;
    const size_t n = sizeof st->message;
    st->code = 1;
    // A write past the top of the stack: into the kernel stack's upper guard,
    // or a fiber's into the guard page at the bottom of the next fiber slot
    // (slots are aligned to their size; an overflow faults in its own slot).
    const uintptr_t top = g->stack ? (uintptr_t)g->stack + PM_KERNEL_GUARD + PM_KERNEL_STACK : 0;
    const int overrun = (g->sig == SIGSEGV || g->sig == SIGBUS) &&
                        ((top && g->addr >= top && g->addr < top + PM_KERNEL_GUARD) ||
                         (g->addr > g->sp && g->addr - g->sp < 2 * PM_FIBER_SLOT_BYTES &&
                          g->addr / PM_FIBER_SLOT_BYTES > g->sp / PM_FIBER_SLOT_BYTES));
    if (g->sig == PM_SIG_CANCEL) {
        report_cancel(job, st);
    } else if (overrun) {
        snprintf(m, n,
                 "stack overrun: a kernel thread wrote past the end of a local array, up to address 0x%llx above its "
                 "stack; the command buffer was aborted (on a GPU the write stays in the thread's own memory); "
                 "check the indices of local arrays",
                 (unsigned long long)g->addr);
    } else if ((g->sig == SIGSEGV || g->sig == SIGBUS) &&
               ((g->addr + 65536 >= g->sp && g->addr < g->sp + 4096) ||
                (top && g->addr < top - PM_KERNEL_STACK && g->addr >= top - PM_KERNEL_STACK - PM_KERNEL_GUARD))) {
        snprintf(m, n,
                 "stack overflow: a kernel thread used more stack than it has (about %u KiB per thread in kernels "
                 "that use barriers or SIMD-group functions, %u MiB in others); use smaller local arrays or less "
                 "recursion",
                 (unsigned)(PM_FIBER_STACK_BYTES / 1024), (unsigned)(PM_KERNEL_STACK >> 20));
    } else if (g->sig == SIGSEGV || g->sig == SIGBUS) {
        snprintf(m, n,
                 "invalid memory access at address 0x%llx (%s%s): the command buffer was aborted, as a GPU does "
                 "on a page fault; run with PYMETAL_VALIDATION=1 to find the access",
                 (unsigned long long)g->addr, g->sig == SIGSEGV ? "SIGSEGV" : "SIGBUS", fault_kind(g));
    } else if (g->sig == SIGFPE) {
        snprintf(m, n, "arithmetic fault (SIGFPE) at pc 0x%llx: the command buffer was aborted",
                 (unsigned long long)g->pc);
    } else {
        snprintf(m, n, "trap (%s, e.g. __builtin_trap) at pc 0x%llx: the command buffer was aborted",
                 g->sig == SIGILL ? "illegal instruction" : "breakpoint", (unsigned long long)g->pc);
    }
    return 1;
}

// Calls fn(arg) with the stack pointer at `top` (16-byte aligned), back on the
// caller's stack when it returns. A fault's siglongjmp leaves it from the
// signal handler instead.
#if defined(__x86_64__)
__attribute__((naked, noinline)) static void call_on_stack(void (*fn)(void *), void *arg, void *top) {
    __asm__ volatile(
        "pushq %rbp\n\t"
        "movq %rsp, %rbp\n\t" // callee-saved: the way back
        "movq %rdi, %rax\n\t"
        "movq %rsi, %rdi\n\t"
        "movq %rdx, %rsp\n\t"
        "callq *%rax\n\t"
        "movq %rbp, %rsp\n\t"
        "popq %rbp\n\t"
        "retq\n\t");
}
#elif defined(__aarch64__)
__attribute__((naked, noinline)) static void call_on_stack(void (*fn)(void *), void *arg, void *top) {
    __asm__ volatile(
        "stp x29, x30, [sp, #-16]!\n\t"
        "mov x29, sp\n\t" // callee-saved: the way back
        "mov x9, x0\n\t"
        "mov x0, x1\n\t"
        "mov sp, x2\n\t"
        "blr x9\n\t"
        "mov sp, x29\n\t"
        "ldp x29, x30, [sp], #16\n\t"
        "ret\n\t");
}
#endif

struct run_call {
    pm_run_fn run;
    const pm_launch *launch;
    uint64_t first, end;
    pm_status *status;
    int32_t result;
};
static void run_call(void *p) {
    struct run_call *c = p;
    c->result = c->run(c->launch, c->first, c->end, c->status);
}

// run() on the guard's kernel stack (on the thread's own if it has none).
static int32_t run_on_stack(guard *g, pm_run_fn run, const pm_launch *launch, uint64_t first, uint64_t end,
                            pm_status *status) {
    if (!g->stack) return run(launch, first, end, status);
    struct run_call c = {run, launch, first, end, status, 0};
    call_on_stack(run_call, &c, g->stack + PM_KERNEL_GUARD + PM_KERNEL_STACK);
    return c.result;
}

int32_t pm_guarded_run(pm_job *job, pm_run_fn run, const pm_launch *launch, uint64_t first, uint64_t end,
                       pm_status *status) {
    guard *g = g_self;
    if (!g && !(g = make_guard())) return run(launch, first, end, status);
    if (cancel_reason(job)) return report_cancel(job, status);
    if (sigsetjmp(g->env, 0)) {
        // Back from a handler: the signal that got us here is still blocked.
        sigset_t set;
        sigemptyset(&set);
        for (size_t i = 0; i < sizeof fault_signals / sizeof *fault_signals; i++) sigaddset(&set, fault_signals[i]);
        sigaddset(&set, PM_SIG_CANCEL);
        sigaddset(&set, SIGINT);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        atomic_store(&g->running, NULL);
        g->job = NULL;
        return report_fault(g, job, status);
    }
    g->job = job;
    atomic_store(&g->running, job);
    g->active = 1;
    if (cancel_reason(job)) { // cancelled before the watchdog could see this thread
        g->active = 0;
        atomic_store(&g->running, NULL);
        return report_cancel(job, status);
    }
    int32_t result = run_on_stack(g, run, launch, first, end, status);
    g->active = 0;
    atomic_store(&g->running, NULL);
    g->job = NULL;
    return result;
}

// ---------------------------------------------------------------------------
// Jobs and the watchdog
// ---------------------------------------------------------------------------
static void read_timeout(void) {
    double t = PM_DEFAULT_TIMEOUT;
    const char *env = getenv("PYMETAL_KERNEL_TIMEOUT");
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        if (end != env && *end == 0 && v >= 0 && isfinite(v)) t = v;
        else fprintf(stderr, "pymetal: ignoring PYMETAL_KERNEL_TIMEOUT=%s (not a number of seconds >= 0)\n", env);
    }
    atomic_store(&timeout_s, t);
}

double pm_host_kernel_timeout(void) {
    pthread_once(&timeout_once, read_timeout);
    return atomic_load(&timeout_s);
}

int32_t pm_host_set_kernel_timeout(double seconds) {
    if (!(seconds >= 0) || !isfinite(seconds) || seconds > 1e9) return 1;
    pthread_once(&timeout_once, read_timeout);
    atomic_store(&timeout_s, seconds);
    return 0;
}

uint64_t pm_interrupt_generation(void) { return atomic_load(&generation); }

void pm_waiting(int32_t delta) { atomic_fetch_add(&waiting, delta); }

// Async-signal-safe (called from the SIGINT handler).
void pm_host_cancel_all(void) {
    atomic_fetch_add(&generation, 1);
    if (atomic_load(&watchdog_started)) sem_post(&watchdog_wake);
}

static void signal_threads(const pm_job *job) {
    pthread_mutex_lock(&slots_lock); // no guard's thread can exit meanwhile
    for (guard *g = guards; g; g = g->next)
        if (atomic_load(&g->running) == job) pthread_kill(g->tid, PM_SIG_CANCEL);
    pthread_mutex_unlock(&slots_lock);
}

// While command buffers come and go, the watchdog ticks (PM_WATCH_TICK) and a
// job's start costs no wake-up; after a whole tick without any, it sleeps until
// the next one begins.
static void *watchdog_main(void *arg) {
    (void)arg;
    pm_host_name_thread("MetalCPU guard");
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&jobs_lock);
        const double now = now_s();
        double next = INFINITY;
        for (pm_job *j = jobs; j; j = j->next) {
            // Timed from here, at most a tick late (a job's start reads no clock: 100 ns in some VMs).
            if (j->deadline < 0) j->deadline = j->timeout > 0 ? now + j->timeout : 0;
            const uint64_t d = atomic_load_explicit(&j->dispatches, memory_order_relaxed);
            if (d != j->seen) { // a later dispatch of the job has started: it gets the whole limit
                j->seen = d;
                if (j->deadline > 0) j->deadline = now + j->timeout;
            }
            if (!atomic_load(&j->cancel)) {
                if (j->deadline > 0 && now >= j->deadline) atomic_store(&j->cancel, PM_CANCEL_TIMED_OUT);
                else if (j->generation < atomic_load(&generation)) atomic_store(&j->cancel, PM_CANCEL_INTERRUPTED);
            }
            if (atomic_load(&j->cancel)) signal_threads(j); // again each tick until it has stopped
            else if (j->deadline > 0 && j->deadline < next) next = j->deadline;
        }
        const int busy = jobs || jobs_begun != seen;
        seen = jobs_begun;
        if (jobs) hook_interrupt();
        if (busy && now + PM_WATCH_TICK < next) next = now + PM_WATCH_TICK;
        watchdog_idle = !busy;
        pthread_mutex_unlock(&jobs_lock);
        if (isinf(next)) {
            while (sem_wait(&watchdog_wake) != 0 && errno == EINTR) {
            }
        } else {
            double wait = next - now_s();
            if (wait > 0) {
                struct timespec t;
                clock_gettime(CLOCK_MONOTONIC, &t);
                double target = (double)t.tv_sec + (double)t.tv_nsec * 1e-9 + wait;
                t.tv_sec = (time_t)target;
                t.tv_nsec = (long)((target - (double)t.tv_sec) * 1e9);
                sem_clockwait(&watchdog_wake, CLOCK_MONOTONIC, &t);
            }
        }
        while (sem_trywait(&watchdog_wake) == 0) { // one pass covers all wake-ups so far
        }
    }
    return NULL;
}

// fork(): the child has none of the parent's other threads; the locks are
// taken around the fork so that none is copied held.
static void before_fork(void) {
    pthread_mutex_lock(&jobs_lock);
    pthread_mutex_lock(&slots_lock);
}
static void after_fork_parent(void) {
    pthread_mutex_unlock(&slots_lock);
    pthread_mutex_unlock(&jobs_lock);
}
static void after_fork_child(void) {
    jobs = NULL; // the parent's jobs run on threads the child does not have (their memory is left)
    atomic_store(&waiting, 0); // the threads that waited are not in the child
    atomic_store(&watchdog_started, 0);
    watchdog_idle = 0;
    guards = g_self; // the other threads' guards are gone with them (their memory is left)
    if (g_self) {
        g_self->next = g_self->prev = NULL;
        g_self->tid = pthread_self();
    }
    pthread_mutex_unlock(&slots_lock);
    pthread_mutex_unlock(&jobs_lock);
}
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void register_fork(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }

pm_job *pm_job_begin(uint64_t committed_generation) {
    pthread_once(&fork_once, register_fork);
    const double timeout = pm_host_kernel_timeout();
    pthread_mutex_lock(&jobs_lock);
    pm_job *job = free_jobs;
    if (job) free_jobs = job->next;
    else if (!(job = malloc(sizeof *job))) {
        pthread_mutex_unlock(&jobs_lock);
        return NULL;
    }
    atomic_store(&job->cancel, 0);
    atomic_store(&job->dispatches, 0);
    job->seen = 0;
    job->generation = committed_generation;
    job->timeout = timeout;
    job->deadline = -1;
    job->log = NULL;
    job->prev = NULL;
    job->next = jobs;
    if (jobs) jobs->prev = job;
    jobs = job;
    jobs_begun++;
    int wake = 0;
    if (!watchdog_started) {
        sem_init(&watchdog_wake, 0, 0);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, watchdog_main, NULL) == 0) atomic_store(&watchdog_started, 1);
        pthread_attr_destroy(&attr);
    } else if (watchdog_idle) {
        watchdog_idle = 0;
        wake = 1;
    }
    pthread_mutex_unlock(&jobs_lock);
    if (wake) sem_post(&watchdog_wake);
    return job;
}

void pm_job_next_dispatch(pm_job *job) {
    if (job) atomic_fetch_add_explicit(&job->dispatches, 1, memory_order_relaxed);
}

void pm_job_set_log_buffer(pm_job *job, pm_log_buffer *buffer) {
    if (job) job->log = buffer;
}

pm_log_buffer *pm_job_log_buffer(const pm_job *job) { return job ? job->log : NULL; }

pm_job *pm_current_job(void) { return g_self ? g_self->job : NULL; }

void pm_job_end(pm_job *job) {
    if (!job) return;
    pthread_mutex_lock(&jobs_lock);
    if (job->prev) job->prev->next = job->next;
    else jobs = job->next;
    if (job->next) job->next->prev = job->prev;
    job->next = free_jobs;
    free_jobs = job;
    pthread_mutex_unlock(&jobs_lock);
}

#else
// Elsewhere (MetalCPU is built for Linux): kernels run unguarded, without a time limit.
int32_t pm_guarded_run(pm_job *job, pm_run_fn run, const pm_launch *launch, uint64_t first, uint64_t end,
                       pm_status *status) {
    (void)job;
    return run(launch, first, end, status);
}
pm_job *pm_job_begin(uint64_t committed_generation) { (void)committed_generation; return NULL; }
void pm_job_next_dispatch(pm_job *job) { (void)job; }
void pm_job_end(pm_job *job) { (void)job; }
void pm_job_set_log_buffer(pm_job *job, pm_log_buffer *buffer) { (void)job, (void)buffer; }
pm_log_buffer *pm_job_log_buffer(const pm_job *job) { (void)job; return NULL; }
pm_job *pm_current_job(void) { return NULL; }
uint64_t pm_interrupt_generation(void) { return 0; }
void pm_host_cancel_all(void) {}
void pm_waiting(int32_t delta) { (void)delta; }
double pm_host_kernel_timeout(void) { return 0; }
int32_t pm_host_set_kernel_timeout(double seconds) { return seconds == 0 ? 0 : 1; }
#endif
