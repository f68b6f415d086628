// Shader logging (pm_host.h): messages of kernels' os_log calls, queued in the
// order they are logged (each thread's in its own order) until the host takes
// them. Bounded: past PM_LOG_MAX queued messages the oldest are dropped and
// counted (a kernel logging in a loop must not exhaust memory), and the next
// message taken says how many were lost.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pm_host.h"

#define PM_LOG_MAX 65536

typedef struct record {
    struct record *next;
    uint32_t level;
    char *subsystem, *category, *message; // in one allocation after the record
} record;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static record *head, *tail;
static uint32_t queued;
static uint64_t dropped;

void pm_host_kernel_log(uint32_t level, const char *subsystem, const char *category, const char *message) {
    size_t ls = strlen(subsystem) + 1, lc = strlen(category) + 1, lm = strlen(message) + 1;
    record *r = malloc(sizeof(record) + ls + lc + lm);
    if (!r) return;
    r->next = NULL;
    r->level = level;
    r->subsystem = memcpy((char *)(r + 1), subsystem, ls);
    r->category = memcpy(r->subsystem + ls, category, lc);
    r->message = memcpy(r->category + lc, message, lm);
    pthread_mutex_lock(&lock);
    if (queued == PM_LOG_MAX) { // drop the oldest
        record *old = head;
        head = old->next;
        if (!head) tail = NULL;
        free(old);
        queued--;
        dropped++;
    }
    if (tail) tail->next = r;
    else head = r;
    tail = r;
    queued++;
    pthread_mutex_unlock(&lock);
}

int32_t pm_host_kernel_log_next(uint32_t *level, char *subsystem, size_t subsystem_size, char *category,
                                size_t category_size, char *message, size_t message_size) {
    pthread_mutex_lock(&lock);
    record *r = head;
    uint64_t lost = dropped;
    if (r) {
        head = r->next;
        if (!head) tail = NULL;
        queued--;
        dropped = 0;
    }
    pthread_mutex_unlock(&lock);
    if (!r) return 0;
    *level = r->level;
    snprintf(subsystem, subsystem_size, "%s", r->subsystem);
    snprintf(category, category_size, "%s", r->category);
    if (lost) snprintf(message, message_size, "(%llu earlier messages were dropped: more than %d were queued) %s",
                       (unsigned long long)lost, PM_LOG_MAX, r->message);
    else snprintf(message, message_size, "%s", r->message);
    free(r);
    return 1;
}
