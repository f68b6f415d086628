// Shader logging (pm_host.h): the messages of kernels' os_log calls, kept in
// the log buffer of the command buffer that runs them (MetalCPU's MTLLogState)
// until the command buffer has run and its log state hands them to its
// handlers. One list per buffer, appended in the order messages are logged, so
// each thread's messages stay in its order. As Metal's log state, a buffer
// holds at most `capacity` bytes of messages and drops the ones past that (a
// kernel logging in a loop must not exhaust memory), and stores no message
// below its level.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pm_host.h"

struct pm_log_buffer {
    pthread_mutex_t lock;
    pm_log_record *head, *tail;
    uint64_t used, capacity; // bytes of the messages held, and at most
    uint64_t dropped;        // messages dropped since the last take
    uint32_t min_level;      // MTLLogLevel's raw value
    _Atomic int pending;     // something to take (messages or drops): a command buffer without is not locked
};

pm_log_buffer *pm_log_buffer_create(uint64_t capacity, uint32_t min_level) {
    pm_log_buffer *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    pthread_mutex_init(&b->lock, NULL);
    b->capacity = capacity;
    b->min_level = min_level;
    return b;
}

void pm_log_buffer_destroy(pm_log_buffer *b) {
    if (!b) return;
    uint64_t dropped;
    pm_log_records_free(pm_log_buffer_take(b, &dropped));
    pthread_mutex_destroy(&b->lock);
    free(b);
}

// os_log's levels as the kernel passes them (0 default, 1 info, 2 debug, 3
// error, 4 fault) to MTLLogLevel's (os_log's default is "notice").
static uint32_t metal_level(uint32_t level) {
    static const uint32_t levels[] = {3, 2, 1, 4, 5};
    return level < 5 ? levels[level] : 3;
}

// The sink of every kernel library compiled with logging (Library.swift):
// appends to the log buffer of the command buffer the calling thread runs
// kernel code for (guard.c); a message logged outside one is dropped.
void pm_host_kernel_log(uint32_t level, const char *subsystem, const char *category, const char *message) {
    pm_log_buffer *b = pm_job_log_buffer(pm_current_job());
    if (!b) return;
    level = metal_level(level);
    if (level < b->min_level) return;
    size_t ls = strlen(subsystem) + 1, lc = strlen(category) + 1, lm = strlen(message) + 1;
    const uint64_t bytes = ls + lc + lm;
    pm_log_record *r = malloc(sizeof(pm_log_record) + bytes);
    if (r) {
        char *text = (char *)(r + 1);
        r->next = NULL;
        r->level = level;
        r->subsystem = memcpy(text, subsystem, ls);
        r->category = memcpy(text + ls, category, lc);
        r->message = memcpy(text + ls + lc, message, lm);
    }
    pthread_mutex_lock(&b->lock);
    const int keep = r && b->used + bytes <= b->capacity;
    if (keep) {
        b->used += bytes;
        if (b->tail) b->tail->next = r;
        else b->head = r;
        b->tail = r;
    } else {
        b->dropped++;
    }
    atomic_store_explicit(&b->pending, 1, memory_order_relaxed);
    pthread_mutex_unlock(&b->lock);
    if (!keep) free(r);
}

int32_t pm_log_buffer_pending(pm_log_buffer *b) { return atomic_load_explicit(&b->pending, memory_order_relaxed); }

pm_log_record *pm_log_buffer_take(pm_log_buffer *b, uint64_t *dropped) {
    pthread_mutex_lock(&b->lock);
    atomic_store_explicit(&b->pending, 0, memory_order_relaxed);
    pm_log_record *list = b->head;
    b->head = b->tail = NULL;
    b->used = 0;
    *dropped = b->dropped;
    b->dropped = 0;
    pthread_mutex_unlock(&b->lock);
    return list;
}

void pm_log_records_free(pm_log_record *list) {
    while (list) {
        pm_log_record *next = list->next;
        free(list);
        list = next;
    }
}
