/*
 * samsa-broker: controlled shutdown (Kafka's KafkaController
 * .doControlledShutdown): leadership moves off a broker that asks to stop.
 */
#define _GNU_SOURCE

#include "cluster/controller_internal.h"

#include "base/logging.h"

#include <samsa-protocol/messages.h>

#include <inttypes.h>
#include <string.h>

/* ---------------------------------------------------------------- controlled shutdown */

static int add_shutting(struct br_controller *c, int32_t id)
{
    if (ctl_is_shutting(c, id)) {
        return 0;
    }
    int32_t *grown = kp_realloc(c->shutting, (c->nshutting + 1) * sizeof *grown);
    if (grown == NULL) {
        return -1;
    }
    c->shutting = grown;
    c->shutting[c->nshutting++] = id;
    return 0;
}

/* A growing array of (topic index, partition). */
struct tp_list {
    struct lai_entry *e;
    size_t n, cap;
};

static int tp_add(struct tp_list *l, size_t ti, int32_t p)
{
    if (l->n == l->cap) {
        size_t cap = l->cap == 0 ? 16 : l->cap * 2;
        struct lai_entry *grown = kp_realloc(l->e, cap * sizeof *grown);
        if (grown == NULL) {
            return -1;
        }
        l->e = grown;
        l->cap = cap;
    }
    l->e[l->n++] = (struct lai_entry){ti, p, false};
    return 0;
}

/* StopReplica without deletion for the partitions of l on broker (Kafka's
 * OfflineReplica of a shutting broker's followers: it stops fetching). */
static void send_stop_replica_keep(struct br_controller *c, const struct ctl_broker *broker,
                                   const struct tp_list *l)
{
    if (l->n == 0) {
        return;
    }
    struct kp_StopReplicaRequest_StopReplicaPartitionV0 *ps = kp_calloc(l->n, sizeof *ps);
    if (ps == NULL) {
        br_error("controller: out of memory building StopReplica");
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        ps[i].TopicName = kp_str_c(c->topics[l->e[i].topic].name);
        ps[i].PartitionIndex = l->e[i].partition;
    }
    ctl_send_stop_replica(c, broker->sender, ps, (int32_t)l->n, false, 0);
    kp_free(ps);
}

/* One partition of a shutting broker `id`: led by it, another in-sync
 * replica takes over (Kafka's ControlledShutdownLeaderElectionStrategy);
 * followed by it, it leaves the ISR (never emptied) and is told to stop.
 * 1: it still leads the partition; 0; -1 (ZooKeeper failed). */
static int shut_partition(struct br_controller *c, size_t ti, int32_t p, int32_t id,
                          struct tp_list *stops)
{
    const struct ctl_topic *t = &c->topics[ti];
    struct ctl_partition *part = &t->parts[p];
    int32_t isr[BR_META_MAX_REPLICATION_FACTOR];
    int32_t nisr = 0;
    if (part->leader != id) {
        for (int32_t i = 0; i < part->nisr && nisr < BR_META_MAX_REPLICATION_FACTOR; i++) {
            if (part->isr[i] != id) {
                isr[nisr++] = part->isr[i];
            }
        }
        if (nisr > 0 && nisr < part->nisr) {
            int w = ctl_write_state(c, t, p, part, part->leader, isr, nisr);
            if (w < 0) {
                return -1;
            }
            if (w == 0 && ctl_lai_to_live_replicas(c, ti, p, false) != 0) {
                return -1;
            }
        }
        return tp_add(stops, ti, p) == 0 ? 0 : -1;
    }
    for (int32_t i = 0; i < part->nisr && nisr < BR_META_MAX_REPLICATION_FACTOR; i++) {
        if (!ctl_is_shutting(c, part->isr[i])) {
            isr[nisr++] = part->isr[i];
        }
    }
    int32_t live[BR_META_MAX_REPLICATION_FACTOR];
    int32_t shutting[BR_META_MAX_REPLICATION_FACTOR];
    struct br_election e;
    ctl_election_facts(c, part, live, shutting, &e);
    int32_t leader = br_elect_controlled_shutdown(&e);
    if (leader == BR_NO_LEADER) {
        return 1; /* no other in-sync replica: it leads on until it stops */
    }
    int w = ctl_write_state(c, t, p, part, leader, isr, nisr);
    if (w != 0) {
        return w < 0 ? -1 : 1; /* the state moved meanwhile: the broker asks again */
    }
    br_info("controller: %s-%" PRId32 ": leader %" PRId32 " (broker %" PRId32
            " shuts down), epoch %" PRId32 ", %" PRId32 " in sync",
            t->name, p, leader, id, part->leader_epoch, nisr);
    return ctl_lai_to_live_replicas(c, ti, p, false) == 0 ? 0 : -1;
}

/* Kafka's KafkaController.doControlledShutdown for broker id: 0 or -1 (a
 * ZooKeeper failure). *err and the partitions it still leads. */
static int controlled_shutdown(struct br_controller *c, int32_t id, int16_t *err,
                               struct br_shutdown_remaining **remaining, size_t *nremaining)
{
    *err = KP_ERR_NONE;
    struct ctl_broker *broker = ctl_find_broker(c, id);
    if (broker == NULL) {
        *err = KP_ERR_BROKER_NOT_AVAILABLE;
        return 0;
    }
    if (add_shutting(c, id) != 0) {
        *err = KP_ERR_UNKNOWN_SERVER_ERROR;
        return 0;
    }
    struct tp_list stops = {NULL, 0, 0};
    struct tp_list left = {NULL, 0, 0};
    int rc = 0;
    for (size_t ti = 0; ti < c->ntopics && rc == 0; ti++) {
        const struct ctl_topic *t = &c->topics[ti];
        for (int32_t p = 0; p < t->npartitions && rc == 0; p++) {
            const struct ctl_partition *part = &t->parts[p];
            if (!part->has_state || part->nreplicas <= 1 ||
                !ctl_contains(part->replicas, part->nreplicas, id)) {
                continue;
            }
            int r = shut_partition(c, ti, p, id, &stops);
            if (r < 0 || (r == 1 && tp_add(&left, ti, p) != 0)) {
                rc = -1;
            }
        }
    }
    if (rc == 0) {
        ctl_send_leader_and_isr(c);
        send_stop_replica_keep(c, broker, &stops);
        ctl_send_update_metadata(c);
        *remaining = kp_calloc(left.n > 0 ? left.n : 1, sizeof **remaining);
        if (*remaining == NULL) {
            *err = KP_ERR_UNKNOWN_SERVER_ERROR;
        } else {
            for (size_t i = 0; i < left.n; i++) {
                (void)snprintf((*remaining)[i].topic, sizeof(*remaining)[i].topic, "%s",
                               c->topics[left.e[i].topic].name);
                (*remaining)[i].partition = left.e[i].partition;
            }
            *nremaining = left.n;
        }
        br_info("controller: broker %" PRId32 " shuts down: %zu partition(s) led elsewhere or "
                "left by it, %zu still led by it",
                id, stops.n, left.n);
    } else {
        /* the controller resigns and rebuilds: the broker asks again */
        *err = KP_ERR_NOT_CONTROLLER;
    }
    kp_free(stops.e);
    kp_free(left.e);
    return rc;
}

int ctl_on_controlled_shutdown(struct br_controller *c, const struct event *e)
{
    struct br_shutdown_remaining *remaining = NULL;
    size_t n = 0;
    int16_t err = KP_ERR_NOT_CONTROLLER;
    int rc = c->active ? controlled_shutdown(c, e->broker, &err, &remaining, &n) : 0;
    e->cs_done(e->cs_ctx, err, remaining, n);
    kp_free(remaining);
    return rc;
}

int br_controller_controlled_shutdown(struct br_controller *c, int32_t broker_id,
                                      br_controlled_shutdown_done done, void *ctx)
{
    struct event *e = kp_calloc(1, sizeof *e);
    if (e == NULL) {
        return KP_E_NOMEM;
    }
    e->kind = EV_CONTROLLED_SHUTDOWN;
    e->broker = broker_id;
    e->cs_done = done;
    e->cs_ctx = ctx;
    (void)pthread_mutex_lock(&c->mu);
    if (c->tail != NULL) {
        c->tail->next = e;
    } else {
        c->head = e;
    }
    c->tail = e;
    (void)pthread_cond_broadcast(&c->cv);
    (void)pthread_mutex_unlock(&c->mu);
    return 0;
}
