/* samsa-broker: the controller's topic deletion, Kafka's
 * TopicDeletionManager (see controller.h, controller_internal.h): the
 * ZooKeeper writes and the StopReplica sends; every decision (whom to ask,
 * who waits, when the topic is done) is topic_deletion.c's. */
#define _GNU_SOURCE

#include "cluster/controller_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/messages.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctl_topic *ctl_find_topic(struct br_controller *c, const char *name)
{
    for (size_t i = 0; i < c->ntopics; i++) {
        if (strcmp(c->topics[i].name, name) == 0) {
            return &c->topics[i];
        }
    }
    return NULL;
}

/* Deletes path; 0 when it is gone (NONODE counts), -1 otherwise. */
static int zdelete(struct br_controller *c, const char *path)
{
    int rc = zoo_delete(c->zh, path, -1);
    if (rc != ZOK && rc != ZNONODE) {
        br_error("controller: deleting %s failed: %s", path, zerror(rc));
        return -1;
    }
    return 0;
}

/* /brokers/topics/<t> with its partitions' states, /config/topics/<t>,
 * then the marker: Kafka's TopicDeletionManager.completeDeleteTopic order
 * (deleteTopicZNode, deleteTopicConfigs, deleteTopicDeletions). 0 or -1. */
static int delete_topic_znodes(struct br_controller *c, const char *name)
{
    char path[BR_TOPIC_NAME_MAX + 96];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions", name);
    struct String_vector kids;
    memset(&kids, 0, sizeof kids);
    int rc = zoo_get_children(c->zh, path, 0, &kids);
    if (rc != ZOK && rc != ZNONODE) {
        return -1;
    }
    int res = 0;
    for (int32_t i = 0; i < kids.count && res == 0; i++) {
        if (ctl_parse_id(kids.data[i]) < 0) {
            continue; /* not a partition: left, and the deletion below fails on it */
        }
        (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%s/state", name,
                       kids.data[i]);
        res = zdelete(c, path);
        (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%s", name, kids.data[i]);
        res = res == 0 ? zdelete(c, path) : res;
    }
    deallocate_String_vector(&kids);
    if (res != 0) {
        return -1;
    }
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions", name);
    if (zdelete(c, path) != 0) {
        return -1;
    }
    (void)snprintf(path, sizeof path, "/brokers/topics/%s", name);
    if (zdelete(c, path) != 0) {
        return -1;
    }
    (void)snprintf(path, sizeof path, "/config/topics/%s", name);
    if (zdelete(c, path) != 0) {
        return -1;
    }
    (void)snprintf(path, sizeof path, "/admin/delete_topics/%s", name);
    return zdelete(c, path);
}

static void deletion_drop(struct br_controller *c, struct deletion *d)
{
    kp_free(d->brokers);
    kp_free(d->state);
    size_t i = (size_t)(d - c->deletions);
    memmove(&c->deletions[i], &c->deletions[i + 1], (c->ndeletions - i - 1) * sizeof *d);
    c->ndeletions--;
}

/* The view topic_deletion.h reads of t's assignment (t's arrays
 * borrowed): owned by the caller, NULL when out of memory. */
static struct br_deletion_replicas *topic_replicas(const struct ctl_topic *t)
{
    struct br_deletion_replicas *rv =
        kp_calloc(t->npartitions > 0 ? (size_t)t->npartitions : 1, sizeof *rv);
    if (rv == NULL) {
        return NULL;
    }
    for (int32_t p = 0; p < t->npartitions; p++) {
        rv[p].ids = t->parts[p].replicas;
        rv[p].n = t->parts[p].nreplicas;
    }
    return rv;
}

/* d's arrays as topic_deletion.h sees them. */
static struct br_deletion_progress progress_of(const struct deletion *d)
{
    return (struct br_deletion_progress){d->gen, d->brokers, d->state, d->n};
}

/* The brokers holding a replica of the topic (rv, nparts), into d
 * (once). 0 or -1. */
static int deletion_brokers(struct deletion *d, const struct br_deletion_replicas *rv,
                            int32_t nparts)
{
    size_t cap = br_deletion_replica_count(rv, nparts);
    d->brokers = kp_calloc(cap > 0 ? cap : 1, sizeof *d->brokers);
    d->state = kp_calloc(cap > 0 ? cap : 1, sizeof *d->state);
    if (d->brokers == NULL || d->state == NULL) {
        kp_free(d->brokers);
        kp_free(d->state);
        d->brokers = NULL;
        d->state = NULL;
        return -1;
    }
    d->n = br_deletion_brokers(rv, nparts, d->brokers);
    return 0;
}

/* StopReplica with delete_partitions, for every partition of t that broker
 * holds (rv: t's assignment), tagged with the deletion's generation (Kafka
 * sends one request per partition; one per broker does the same work). */
static void send_stop_replica_delete(struct br_controller *c, const struct ctl_broker *broker,
                                     const struct ctl_topic *t,
                                     const struct br_deletion_replicas *rv, uint64_t gen)
{
    size_t cap = t->npartitions > 0 ? (size_t)t->npartitions : 1;
    int32_t *held = kp_calloc(cap, sizeof *held);
    struct kp_StopReplicaRequest_StopReplicaPartitionV0 *ps = kp_calloc(cap, sizeof *ps);
    if (held == NULL || ps == NULL) {
        br_error("controller: out of memory building StopReplica");
    } else {
        int32_t n = br_deletion_partitions_of(rv, t->npartitions, broker->id, held);
        for (int32_t i = 0; i < n; i++) {
            ps[i].TopicName = kp_str_c(t->name);
            ps[i].PartitionIndex = held[i];
        }
        ctl_send_stop_replica(c, broker->sender, ps, n, true, gen);
    }
    kp_free(ps);
    kp_free(held);
}

/* One step of d's deletion of t (topic_deletion.h decides, given the live
 * brokers): StopReplica to each broker it asks now. *done when every
 * replica is deleted. 0 or -1 (out of memory). */
static int deletion_step(struct br_controller *c, struct deletion *d, const struct ctl_topic *t,
                         const int32_t *live, size_t nlive, bool *done)
{
    struct br_deletion_replicas *rv = topic_replicas(t);
    if (rv == NULL) {
        return -1;
    }
    int res = -1;
    int32_t *picked = NULL;
    if (d->brokers == NULL && deletion_brokers(d, rv, t->npartitions) != 0) {
        goto out_free;
    }
    picked = kp_calloc(d->n > 0 ? 2 * d->n : 1, sizeof *picked);
    if (picked == NULL) {
        goto out_free;
    }
    struct br_deletion_progress p = progress_of(d);
    struct br_deletion_step step = {.ask = picked, .waits = picked + d->n};
    br_deletion_resume(&p, live, nlive, &step);
    for (size_t k = 0; k < step.nwaits; k++) {
        br_info("controller: deletion of topic %s waits for broker %" PRId32
                " (down), which holds a replica",
                d->name, step.waits[k]);
    }
    for (size_t k = 0; k < step.nask; k++) {
        const struct ctl_broker *broker = ctl_find_broker(c, step.ask[k]);
        if (broker != NULL) { /* live: found above */
            send_stop_replica_delete(c, broker, t, rv, d->gen);
        }
    }
    *done = step.done;
    res = 0;
out_free:
    kp_free(picked);
    kp_free(rv);
    return res;
}

/* The brokers the controller can send to (their sender runs), into out
 * (room for c->nbrokers); returns how many. */
static size_t live_brokers(const struct br_controller *c, int32_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nbrokers; i++) {
        if (c->brokers[i].sender != NULL) {
            out[n++] = c->brokers[i].id;
        }
    }
    return n;
}

/* Kafka's TopicDeletionManager.resumeDeletions: each topic being deleted
 * moves on as far as its brokers allow; those whose every replica is
 * deleted are completed. 0 or -1 (a ZooKeeper failure, or out of
 * memory). */
int ctl_resume_deletions(struct br_controller *c)
{
    bool announce = false;
    for (size_t i = 0; i < c->ndeletions; i++) {
        announce = announce || !c->deletions[i].announced;
        c->deletions[i].announced = true;
    }
    if (announce) {
        /* the brokers stop serving the topics (leader -2) */
        ctl_send_update_metadata(c);
    }
    if (c->ndeletions == 0) {
        return 0;
    }
    int32_t *live = kp_calloc(c->nbrokers > 0 ? c->nbrokers : 1, sizeof *live);
    if (live == NULL) {
        return -1;
    }
    size_t nlive = live_brokers(c, live);
    int res = 0;
    for (size_t i = 0; i < c->ndeletions;) {
        struct deletion *d = &c->deletions[i];
        struct ctl_topic *t = ctl_find_topic(c, d->name);
        if (t == NULL) {
            /* gone from ZooKeeper already: only the marker is left */
            char path[BR_TOPIC_NAME_MAX + 32];
            (void)snprintf(path, sizeof path, "/admin/delete_topics/%s", d->name);
            if (zdelete(c, path) != 0) {
                res = -1;
                break;
            }
            deletion_drop(c, d);
            continue;
        }
        bool done = false;
        if (deletion_step(c, d, t, live, nlive, &done) != 0) {
            res = -1;
            break;
        }
        if (!done) {
            i++;
            continue;
        }
        if (delete_topic_znodes(c, d->name) != 0) {
            res = -1;
            break;
        }
        br_info("controller: deletion of topic %s completed", d->name);
        size_t ti = (size_t)(t - c->topics);
        ctl_topic_clear(t);
        memmove(&c->topics[ti], &c->topics[ti + 1], (c->ntopics - ti - 1) * sizeof *t);
        c->ntopics--;
        deletion_drop(c, d);
    }
    kp_free(live);
    return res;
}

/* /admin/delete_topics read (and watched): Kafka's TopicDeletion event. */
int ctl_on_delete_topics(struct br_controller *c)
{
    struct String_vector kids;
    memset(&kids, 0, sizeof kids);
    if (zoo_get_children(c->zh, "/admin/delete_topics", 1, &kids) != ZOK) {
        return -1;
    }
    int res = 0;
    for (int32_t i = 0; i < kids.count && res == 0; i++) {
        const char *name = kids.data[i];
        if (ctl_find_deletion(c, name) != NULL) {
            continue;
        }
        char path[BR_TOPIC_NAME_MAX + 32];
        (void)snprintf(path, sizeof path, "/admin/delete_topics/%s", name);
        if (strlen(name) > BR_TOPIC_NAME_MAX || ctl_find_topic(c, name) == NULL) {
            br_info("controller: %s names no topic: deleted", path);
            res = zdelete(c, path);
            continue;
        }
        if (!c->cfg.delete_topic_enable) {
            br_warn("controller: topic %s is not deleted: delete.topic.enable is false (its "
                    "marker is removed, as Kafka does)",
                    name);
            res = zdelete(c, path);
            continue;
        }
        struct deletion *nd = kp_realloc(c->deletions, (c->ndeletions + 1) * sizeof *nd);
        if (nd == NULL) {
            res = -1;
            break;
        }
        c->deletions = nd;
        struct deletion *d = &c->deletions[c->ndeletions++];
        memset(d, 0, sizeof *d);
        (void)snprintf(d->name, sizeof d->name, "%s", name);
        d->gen = ++c->next_gen;
        br_info("controller: deleting topic %s", name);
    }
    deallocate_String_vector(&kids);
    if (res != 0) {
        return -1;
    }
    return ctl_resume_deletions(c);
}

/* A broker answered a deletion's StopReplica. */
int ctl_on_stop_replica_done(struct br_controller *c, const struct event *e)
{
    for (size_t i = 0; i < c->ndeletions; i++) {
        struct deletion *d = &c->deletions[i];
        struct br_deletion_progress p = progress_of(d);
        if (br_deletion_answer(&p, e->gen, e->broker, e->ok) > 0 && !e->ok) {
            br_warn("controller: broker %" PRId32 " did not delete its replicas of %s: "
                    "asked again when it comes back",
                    e->broker, d->name);
        }
    }
    return ctl_resume_deletions(c);
}

/* A broker's sender stopped (the broker went or moved): its unanswered
 * deletions wait until it is live again. */
void ctl_deletions_lost_broker(struct br_controller *c, int32_t broker)
{
    for (size_t i = 0; i < c->ndeletions; i++) {
        struct br_deletion_progress p = progress_of(&c->deletions[i]);
        br_deletion_lost_broker(&p, broker);
    }
}
