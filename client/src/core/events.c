/*
 * What a handle's threads tell each other: the eventfd that wakes the I/O
 * thread (sc_wake), the gate every public call passes (a call racing _close
 * is refused instead of using freed memory), the event queue of errors and
 * rebalances the user's poll drains (its callbacks run there, never on the
 * I/O thread), a user thread's timed wait for them (sc_wait_cond), and the
 * debug log.
 *
 * @locality: the gate and sc_serve_errors run on user threads; posting runs
 * on the I/O thread with c->lock held.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"

void sc_log(const struct sc_client *c, const char *fmt, ...)
{
    if (c->v->debug == NULL || c->v->debug[0] == '\0') {
        return;
    }
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if (c->conf->log_cb != NULL) {
        /* where the line is made (samsa.h: the log callback's thread) */
        c->conf->log_cb(SAMSA_LOG_DEBUG, line, c->conf->log_opaque);
    } else {
        fprintf(stderr, "samsa %" PRId64 " [%c] %s\n", sc_now_ms(), c->kind, line);
    }
}

void sc_wake(struct sc_client *c)
{
    uint64_t one = 1;
    ssize_t n = write(c->wake_fd, &one, sizeof(one));
    (void)n; /* EAGAIN: the counter is already non-zero, the thread will wake */
}

/* ----------------------------------------------------------------- gate */

bool sc_gate_enter(struct sc_gate *g)
{
    atomic_fetch_add(&g->calls, 1);
    if (!atomic_load(&g->closed)) {
        return true;
    }
    /* closer is read only once closer_may_call says it was written */
    if (atomic_load(&g->closer_may_call) && pthread_equal(g->closer, pthread_self())) {
        return true;
    }
    atomic_fetch_sub(&g->calls, 1);
    return false;
}

void sc_gate_leave(struct sc_gate *g)
{
    atomic_fetch_sub(&g->calls, 1);
}

bool sc_gate_close(struct sc_gate *g, struct sc_client *c)
{
    bool open = false;
    if (!atomic_compare_exchange_strong(&g->closed, &open, true)) {
        return false;
    }
    g->closer = pthread_self();
    /* A call already inside may be waiting (a poll, a flush, an op, a
     * seek): c->closing makes each wait give up; the broadcast is repeated
     * for a call that read c->closing just before it was set. */
    pthread_mutex_lock(&c->lock);
    c->closing = true;
    pthread_mutex_unlock(&c->lock);
    while (atomic_load(&g->calls) > 0) {
        pthread_mutex_lock(&c->lock);
        pthread_cond_broadcast(&c->ev_cond);
        pthread_mutex_unlock(&c->lock);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    pthread_mutex_lock(&c->lock);
    c->closing = false;
    pthread_mutex_unlock(&c->lock);
    atomic_store(&g->closer_may_call, true);
    return true;
}

void sc_gate_shut(struct sc_gate *g)
{
    atomic_store(&g->closer_may_call, false);
}

/* --------------------------------------------------------------- errors */

void sc_post_event(struct sc_client *c, struct sc_err_ev *ev)
{
    if (c->errs_tail != NULL) {
        c->errs_tail->next = ev;
    } else {
        c->errs = ev;
    }
    c->errs_tail = ev;
    pthread_cond_broadcast(&c->ev_cond);
}

void sc_post_error(struct sc_client *c, int err, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (n < 0) {
        reason[0] = '\0';
    }
    size_t len = strlen(reason);
    struct sc_err_ev *ev = kp_calloc(1, sizeof(*ev) + len + 1);
    if (ev == NULL) {
        return;
    }
    ev->err = sc_err_public(err);
    memcpy(ev->reason, reason, len + 1);
    sc_post_event(c, ev);
    sc_log(c, "error %s: %s", samsa_err_name(err), reason);
}

void sc_err_ev_free(struct sc_err_ev *ev)
{
    if (ev->parts != NULL) {
        for (size_t i = 0; i < ev->part_count; i++) {
            kp_free((void *)(uintptr_t)ev->parts[i].topic);
        }
        kp_free(ev->parts);
    }
    kp_free(ev);
}

int sc_serve_errors(struct sc_client *c)
{
    int ran = 0;
    while (c->errs != NULL) {
        struct sc_err_ev *ev = c->errs;
        c->errs = ev->next;
        if (c->errs == NULL) {
            c->errs_tail = NULL;
        }
        if (ev == c->stats_pending) {
            c->stats_pending = NULL;
        }
        pthread_mutex_unlock(&c->lock);
        if (ev->stats) {
            if (c->conf->stats_cb != NULL) {
                c->conf->stats_cb(ev->reason, strlen(ev->reason), c->conf->stats_opaque);
                ran++;
            }
        } else if (ev->rebalance) {
            if (c->conf->rebalance_cb != NULL) {
                c->conf->rebalance_cb(ev->assigned, ev->parts, ev->part_count,
                                      c->conf->rebalance_opaque);
                ran++;
            }
        } else if (c->conf->error_cb != NULL) {
            c->conf->error_cb(ev->err, ev->reason, c->conf->error_opaque);
            ran++;
        }
        bool ack = ev->ack;
        sc_err_ev_free(ev);
        pthread_mutex_lock(&c->lock);
        if (ack) {
            /* The group waits for this before it rejoins. */
            c->rebalance_acks++;
            sc_wake(c);
        }
    }
    return ran;
}

bool sc_post_rebalance(struct sc_client *c, bool assigned, const struct samsa_partition *parts,
                       size_t n, bool ack)
{
    struct sc_err_ev *ev = kp_calloc(1, sizeof(*ev) + 1);
    if (ev == NULL) {
        return false;
    }
    ev->rebalance = true;
    ev->assigned = assigned;
    ev->ack = ack;
    ev->parts = kp_calloc(n > 0 ? n : 1, sizeof(*ev->parts));
    if (ev->parts == NULL) {
        kp_free(ev);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char *t = sc_strdup(parts[i].topic);
        if (t == NULL) {
            sc_err_ev_free(ev);
            return false;
        }
        ev->parts[i].topic = t;
        ev->parts[i].partition = parts[i].partition;
        ev->parts[i].offset = parts[i].offset;
        ev->part_count++;
    }
    sc_post_event(c, ev);
    sc_log(c, "rebalance: %s %zu partition(s)", assigned ? "assigned" : "revoked", n);
    return true;
}

void sc_wait_cond(struct sc_client *c, int64_t deadline)
{
    int64_t left = deadline == INT64_MAX ? 1000 : deadline - sc_now_ms();
    if (left <= 0) {
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t ns = (int64_t)ts.tv_nsec + (left > 1000 ? 1000 : left) * 1000000;
    ts.tv_sec += (time_t)(ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    pthread_cond_timedwait(&c->ev_cond, &c->lock, &ts);
}
