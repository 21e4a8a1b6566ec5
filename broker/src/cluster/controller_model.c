/*
 * samsa-broker: the controller's model (brokers, topics, partitions, the
 * brokers shutting down, the LeaderAndIsr batches) and its event queue.
 */
#define _GNU_SOURCE

#include "cluster/controller_internal.h"

#include "base/logging.h"

#include <samsa-protocol/messages.h>

#include <string.h>
#include <time.h>

void ctl_post_event(struct br_controller *c, const struct event *what)
{
    struct event *e = kp_calloc(1, sizeof *e);
    (void)pthread_mutex_lock(&c->mu);
    if (e == NULL) {
        /* out of memory: the next event rebuilds everything anyway */
        (void)pthread_mutex_unlock(&c->mu);
        br_error("controller: out of memory queueing an event");
        return;
    }
    *e = *what;
    e->next = NULL;
    if (c->tail != NULL) {
        c->tail->next = e;
    } else {
        c->head = e;
    }
    c->tail = e;
    (void)pthread_cond_broadcast(&c->cv);
    (void)pthread_mutex_unlock(&c->mu);
}

void ctl_post(struct br_controller *c, enum ev_kind kind)
{
    struct event e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    ctl_post_event(c, &e);
}

/* ---------------------------------------------------------------- the model's helpers */

struct ctl_broker *ctl_find_broker(struct br_controller *c, int32_t id)
{
    for (size_t i = 0; i < c->nbrokers; i++) {
        if (c->brokers[i].id == id) {
            return &c->brokers[i];
        }
    }
    return NULL;
}

bool ctl_is_live(struct br_controller *c, int32_t id)
{
    return ctl_find_broker(c, id) != NULL;
}

bool ctl_is_shutting(const struct br_controller *c, int32_t id)
{
    for (size_t i = 0; i < c->nshutting; i++) {
        if (c->shutting[i] == id) {
            return true;
        }
    }
    return false;
}

void ctl_election_facts(struct br_controller *c, const struct ctl_partition *part, int32_t *live,
                        int32_t *shutting, struct br_election *out)
{
    size_t nlive = 0;
    size_t nshutting = 0;
    for (int32_t i = 0; i < part->nreplicas && i < BR_META_MAX_REPLICATION_FACTOR; i++) {
        int32_t id = part->replicas[i];
        if (ctl_is_live(c, id)) {
            live[nlive++] = id;
        }
        if (ctl_is_shutting(c, id)) {
            shutting[nshutting++] = id;
        }
    }
    out->assignment = part->replicas;
    out->nassignment = part->nreplicas > 0 ? (size_t)part->nreplicas : 0;
    out->isr = part->isr;
    out->nisr = part->nisr > 0 ? (size_t)part->nisr : 0;
    out->live = live;
    out->nlive = nlive;
    out->shutting = shutting;
    out->nshutting = nshutting;
}

void ctl_forget_shutting(struct br_controller *c, int32_t id)
{
    for (size_t i = 0; i < c->nshutting; i++) {
        if (c->shutting[i] == id) {
            c->shutting[i] = c->shutting[--c->nshutting];
            return;
        }
    }
}

bool ctl_contains(const int32_t *a, int32_t n, int32_t x)
{
    for (int32_t i = 0; i < n; i++) {
        if (a[i] == x) {
            return true;
        }
    }
    return false;
}

static void partition_clear(struct ctl_partition *p)
{
    kp_free(p->replicas);
    kp_free(p->isr);
    memset(p, 0, sizeof *p);
}

void ctl_topic_clear(struct ctl_topic *t)
{
    for (int32_t i = 0; i < t->npartitions && t->parts != NULL; i++) {
        partition_clear(&t->parts[i]);
    }
    kp_free(t->parts);
    memset(t, 0, sizeof *t);
}

/* The deletion of the topic named so, or NULL. */
struct deletion *ctl_find_deletion(struct br_controller *c, const char *name)
{
    for (size_t i = 0; i < c->ndeletions; i++) {
        if (strcmp(c->deletions[i].name, name) == 0) {
            return &c->deletions[i];
        }
    }
    return NULL;
}

bool ctl_is_deleting(struct br_controller *c, const char *name)
{
    return ctl_find_deletion(c, name) != NULL;
}

/* Queues a LeaderAndIsr of (topic, partition) for broker. */
int ctl_lai_add(struct br_controller *c, int32_t broker, size_t topic, int32_t partition,
                bool is_new)
{
    if (ctl_is_deleting(c, c->topics[topic].name)) {
        return 0; /* a topic being deleted gets no LeaderAndIsr */
    }
    struct lai_batch *b = NULL;
    for (size_t i = 0; i < c->nlai; i++) {
        if (c->lai[i].broker == broker) {
            b = &c->lai[i];
        }
    }
    if (b == NULL) {
        struct lai_batch *nb = kp_realloc(c->lai, (c->nlai + 1) * sizeof *nb);
        if (nb == NULL) {
            return -1;
        }
        c->lai = nb;
        b = &c->lai[c->nlai++];
        memset(b, 0, sizeof *b);
        b->broker = broker;
    }
    for (size_t i = 0; i < b->n; i++) {
        if (b->e[i].topic == topic && b->e[i].partition == partition) {
            /* once per request: its state is read when it is sent */
            b->e[i].is_new = b->e[i].is_new || is_new;
            return 0;
        }
    }
    if (b->n == b->cap) {
        size_t cap = b->cap == 0 ? 16 : b->cap * 2;
        struct lai_entry *ne = kp_realloc(b->e, cap * sizeof *ne);
        if (ne == NULL) {
            return -1;
        }
        b->e = ne;
        b->cap = cap;
    }
    b->e[b->n++] = (struct lai_entry){topic, partition, is_new};
    return 0;
}

/* LeaderAndIsr for a partition to each of its live replicas. */
int ctl_lai_to_live_replicas(struct br_controller *c, size_t ti, int32_t p, bool is_new)
{
    const struct ctl_partition *part = &c->topics[ti].parts[p];
    for (int32_t i = 0; i < part->nreplicas; i++) {
        if (ctl_is_live(c, part->replicas[i]) && ctl_lai_add(c, part->replicas[i], ti, p, is_new) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Waits until the session is connected; false when it expired or the
 * controller stops. */
bool ctl_wait_connected(struct br_controller *c)
{
    (void)pthread_mutex_lock(&c->mu);
    while (!c->connected && !c->expired && !c->stop) {
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        (void)pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    bool ok = c->connected && !c->stop;
    (void)pthread_mutex_unlock(&c->mu);
    return ok;
}
