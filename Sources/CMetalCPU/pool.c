// The worker pool that splits one dispatch's threadgroups over the cores
// (pm_host.h). In C for its atomics and futexes.
//
// Workers are created on first use, one per core but the caller's. After a
// job a worker spins for a moment, so that back-to-back dispatches reach it
// without a system call, then sleeps on a futex: an idle process uses no CPU.
// The calling thread takes chunks itself, and every chunk is claimed
// dynamically, so a worker that is late (asleep, preempted, or missing after a
// fork) only means the caller runs more chunks; it never holds a job up.
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "pm_host.h"
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

// How long an idle worker keeps looking for the next job before it sleeps, and
// how long a caller spins for its last chunks before it sleeps.
#define PM_POOL_SPIN_NS 100000

// After a split job that took longer than the caller alone would have (its workers
// came late or were preempted while holding a chunk: a loaded machine), jobs run
// whole on the caller for a while, then splitting is tried again: 20 ms after one
// such loss, twice as long after each further one in a row (up to a second), back
// to 20 ms once a split pays.
#define PM_POOL_BACKOFF_NS 20000000ull
#define PM_POOL_BACKOFF_MAX_NS 1000000000ull
static _Atomic uint64_t split_off_until;
static _Atomic uint64_t backoff_ns = PM_POOL_BACKOFF_NS;

// One job at a time. `ticket` is (job number << 32 | next chunk): a worker
// claims a chunk with a compare-and-swap on it, which fails if the job it read
// the parameters of has been replaced, so a late worker can never run a chunk
// of a job with another job's parameters.
static struct {
    pthread_mutex_t busy;         // held by the thread whose job the pool runs
    _Atomic uint64_t ticket;
    _Atomic uint32_t job;         // the current job's number, published after its ticket: workers wait on it
    _Atomic uint32_t done;        // chunks finished in the current job
    _Atomic uint32_t failed;      // 1 once a chunk failed; that chunk fills `status`
    _Atomic uint32_t caller_sleeps;
    _Atomic uint32_t sleepers;    // workers asleep on `ticket`'s job number
    pm_run_fn _Atomic run;
    const pm_launch *_Atomic launch;
    _Atomic uint64_t groups;
    _Atomic uint32_t chunks;
    pm_status *_Atomic status;
    pm_job *_Atomic pjob;
    uint32_t workers;
} pool = {.busy = PTHREAD_MUTEX_INITIALIZER};

static _Atomic int pool_started;  // workers made (0 again in a fork()'s child, which has none)
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void futex_wait(_Atomic uint32_t *word, uint32_t value) {
#ifdef __linux__
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
#else
    (void)word; (void)value;
    sched_yield();
#endif
}

static void futex_wake(_Atomic uint32_t *word) {
#ifdef __linux__
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
    (void)word;
#endif
}

// Claims and runs chunks of job `job` until none is left; how many it ran.
static uint32_t work(uint32_t job) {
    uint32_t ran = 0;
    for (;;) {
        uint64_t ticket = atomic_load(&pool.ticket);
        if ((uint32_t)(ticket >> 32) != job) return ran;
        pm_run_fn run = atomic_load(&pool.run);
        const pm_launch *launch = atomic_load(&pool.launch);
        uint64_t groups = atomic_load(&pool.groups);
        uint32_t chunks = atomic_load(&pool.chunks);
        pm_status *status = atomic_load(&pool.status);
        pm_job *pjob = atomic_load(&pool.pjob);
        uint32_t chunk = (uint32_t)ticket;
        if (chunk >= chunks) return ran;
        if (!atomic_compare_exchange_weak(&pool.ticket, &ticket, ticket + 1)) continue;
        ran++;
        // Claimed: the job cannot finish (nor its parameters change) before this chunk is counted done.
        // Equal chunks, the first groups % chunks of them one group longer (no overflow for any sizes).
        uint64_t size = groups / chunks, extra = groups % chunks;
        uint64_t first = chunk * size + (chunk < extra ? chunk : extra);
        uint64_t end = first + size + (chunk < extra ? 1 : 0);
        pm_status local;
        local.code = 0;
        local.message[0] = 0;
        // After a failure the rest of the job is skipped, as a GPU stops a faulting command buffer.
        if (!atomic_load(&pool.failed) && pm_guarded_run(pjob, run, launch, first, end, &local) != 0) {
            uint32_t expected = 0;
            if (atomic_compare_exchange_strong(&pool.failed, &expected, 1)) memcpy(status, &local, sizeof local);
        }
        if (atomic_fetch_add(&pool.done, 1) + 1 == chunks && atomic_load(&pool.caller_sleeps)) futex_wake(&pool.done);
    }
}

static void *worker_main(void *arg) {
    (void)arg;
    pm_host_name_thread("MetalCPU pool");
    uint32_t seen = atomic_load(&pool.job);
    for (;;) {
        uint64_t deadline = now_ns() + PM_POOL_SPIN_NS;
        uint32_t job;
        for (unsigned spins = 0; (job = atomic_load(&pool.job)) == seen; spins++) {
            if ((spins & 63) != 63 || now_ns() < deadline) {
                cpu_relax();
                continue;
            }
            atomic_fetch_add(&pool.sleepers, 1);
            futex_wait(&pool.job, seen); // returns at once if a job was published meanwhile
            atomic_fetch_sub(&pool.sleepers, 1);
            deadline = now_ns() + PM_POOL_SPIN_NS;
        }
        seen = job;
        work(job);
    }
    return NULL;
}

static uint32_t core_count(void) {
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return (uint32_t)CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1;
}

// fork(): the child has none of the workers, and a job that was running (with
// `busy` held by a thread the child lacks) is abandoned there: the pool starts
// afresh, its workers made again at the child's first job.
static void pool_after_fork_child(void) {
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&start_lock, NULL);
    atomic_store(&pool.sleepers, 0);
    atomic_store(&pool.caller_sleeps, 0);
    pool.workers = 0;
    atomic_store(&pool_started, 0);
}

static void register_pool_fork(void) { pthread_atfork(NULL, NULL, pool_after_fork_child); }

// PYMETAL_CPU_THREADS (threads per dispatch, the caller's included; 1 = no split), else every core.
static void start_pool(void) {
    uint32_t cores = core_count();
    const char *limit = getenv("PYMETAL_CPU_THREADS");
    if (limit && *limit) {
        long n = strtol(limit, NULL, 10);
        if (n >= 1 && n <= 1024) cores = (uint32_t)n;
    }
    for (uint32_t i = 1; i < cores; i++) {
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&thread, &attr, worker_main, NULL) == 0) pool.workers++;
        pthread_attr_destroy(&attr);
    }
}

uint32_t pm_pool_workers(void) {
    if (!atomic_load(&pool_started)) {
        static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
        pthread_once(&fork_once, register_pool_fork);
        pthread_mutex_lock(&start_lock);
        if (!atomic_load(&pool_started)) {
            start_pool();
            atomic_store(&pool_started, 1);
        }
        pthread_mutex_unlock(&start_lock);
    }
    return pool.workers;
}

int32_t pm_pool_run(pm_job *cb, pm_run_fn run, const pm_launch *launch, uint64_t groups, uint32_t chunks,
                    int wake, uint64_t *alone_ns, pm_status *status) {
    status->code = 0;
    status->message[0] = 0;
    *alone_ns = 0;
    // Another thread's job is running (two queues at once): this one runs here, whole.
    // So does a job too small to wake a worker when every worker sleeps (none would come).
    if (chunks > groups) chunks = (uint32_t)groups;
    uint64_t start = now_ns();
    if (chunks <= 1 || pm_pool_workers() == 0 || (!wake && atomic_load(&pool.sleepers) >= pool.workers)
        || start < atomic_load(&split_off_until) || pthread_mutex_trylock(&pool.busy) != 0) {
        int32_t failed = pm_guarded_run(cb, run, launch, 0, groups, status);
        *alone_ns = now_ns() - start;
        return failed;
    }
    atomic_store(&pool.run, run);
    atomic_store(&pool.pjob, cb);
    atomic_store(&pool.launch, launch);
    atomic_store(&pool.groups, groups);
    atomic_store(&pool.chunks, chunks);
    atomic_store(&pool.status, status);
    atomic_store(&pool.done, 0);
    atomic_store(&pool.failed, 0);
    atomic_store(&pool.caller_sleeps, 0);
    uint32_t job = atomic_load(&pool.job) + 1;
    atomic_store(&pool.ticket, (uint64_t)job << 32);
    atomic_store(&pool.job, job); // publishes the job (sequentially consistent, after all of the above)
    if (wake && atomic_load(&pool.sleepers)) futex_wake(&pool.job); // else only workers still spinning join
    start = now_ns();
    uint32_t mine = work(job);
    uint64_t own = now_ns(), deadline = own + PM_POOL_SPIN_NS;
    uint32_t done;
    for (unsigned spins = 0; (done = atomic_load(&pool.done)) != chunks; spins++) {
        if ((spins & 63) != 63 || now_ns() < deadline) {
            cpu_relax();
            continue;
        }
        atomic_store(&pool.caller_sleeps, 1);
        if (atomic_load(&pool.done) != chunks) futex_wait(&pool.done, done);
    }
    // The caller alone would have taken about (own - start) * chunks / mine: if the split
    // took longer (by more than an eighth), it lost.
    uint64_t end = now_ns();
    if (mine) *alone_ns = (own - start) * chunks / mine;
    if (mine && (end - start) * mine * 8 > (own - start) * chunks * 9) {
        uint64_t backoff = atomic_load(&backoff_ns);
        atomic_store(&split_off_until, end + backoff);
        atomic_store(&backoff_ns, backoff * 2 < PM_POOL_BACKOFF_MAX_NS ? backoff * 2 : PM_POOL_BACKOFF_MAX_NS);
    } else {
        atomic_store(&backoff_ns, PM_POOL_BACKOFF_NS);
    }
    int32_t failed = (int32_t)atomic_load(&pool.failed);
    pthread_mutex_unlock(&pool.busy);
    return failed ? (status->code ? status->code : 1) : 0;
}
