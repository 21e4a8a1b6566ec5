/* samsa-broker: the replica manager's topic table: the hosted topics and
 * their partitions, created, loaded, grown and removed, and a cluster's
 * replicas hosted (see replica_manager.h). */
#define _GNU_SOURCE

#include "replica/replica_manager.h"

#include "base/logging.h"
#include "base/names.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- topics */

void br_rm_init(struct br_replica_manager *rm, const struct br_config *cfg,
                struct br_log_manager *logs, struct br_filecache *files,
                struct br_purgatory *purgatory, const struct br_metadata_cache *mc)
{
    memset(rm, 0, sizeof *rm);
    rm->cfg = cfg;
    rm->logs = logs;
    rm->files = files;
    rm->purgatory = purgatory;
    rm->mc = mc;
}

void br_rm_fini(struct br_replica_manager *rm)
{
    for (size_t i = 0; i < rm->ntopics; i++) {
        br_rm_topic_free(rm, rm->topics[i]);
    }
    kp_free(rm->topics);
    rm->topics = NULL;
    rm->ntopics = 0;
    rm->topics_cap = 0;
}

static int topic_cmp(const struct br_topic *t, struct kp_str name)
{
    size_t tl = strlen(t->name);
    size_t nl = (size_t)name.len;
    size_t m = tl < nl ? tl : nl;
    int c = memcmp(t->name, name.ptr, m);
    if (c != 0) {
        return c;
    }
    return tl < nl ? -1 : (tl > nl ? 1 : 0);
}

static size_t topic_lower_bound(const struct br_replica_manager *rm, struct kp_str name)
{
    size_t lo = 0;
    size_t hi = rm->ntopics;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (topic_cmp(rm->topics[mid], name) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

struct br_topic *br_rm_find_topic(struct br_replica_manager *rm, struct kp_str name)
{
    if (name.len <= 0) {
        return NULL;
    }
    size_t i = topic_lower_bound(rm, name);
    if (i < rm->ntopics && topic_cmp(rm->topics[i], name) == 0) {
        return rm->topics[i];
    }
    return NULL;
}

void br_rm_topic_free(struct br_replica_manager *rm, struct br_topic *t)
{
    if (t == NULL) {
        return;
    }
    for (int32_t i = 0; i < t->npartitions && t->partitions != NULL; i++) {
        br_partition_close(&t->partitions[i], rm->logs);
    }
    kp_free(t->partitions);
    kp_free(t);
}

/* The log's settings from the topic's config. */
void br_topic_log_config(const struct br_topic_config *tc, struct br_log_config *lc)
{
    br_log_config_defaults(lc);
    lc->segment_bytes = tc->segment_bytes;
    lc->segment_ms = tc->segment_ms;
    lc->index_interval_bytes = tc->index_interval_bytes;
    /* values Kafka accepts that the log has no use for: an index too small
     * for one 12-byte time entry rolls at every append, as it would be full;
     * flush.messages 0 flushes every append, as 1 does */
    lc->max_index_bytes = tc->segment_index_bytes < 12 ? 12 : tc->segment_index_bytes;
    lc->flush_interval_messages = tc->flush_messages < 1 ? 1 : tc->flush_messages;
    lc->flush_interval_ms = tc->flush_ms;
    lc->retention_ms = tc->retention_ms;
    /* any negative retention.bytes means no limit (Kafka's rule) */
    lc->retention_bytes = tc->retention_bytes < 0 ? -1 : tc->retention_bytes;
    lc->cleanup_delete = (tc->cleanup_policy & BR_CLEANUP_DELETE) != 0;
    lc->cleanup_compact = (tc->cleanup_policy & BR_CLEANUP_COMPACT) != 0;
    lc->delete_retention_ms = tc->delete_retention_ms;
    lc->min_compaction_lag_ms = tc->min_compaction_lag_ms;
    lc->min_cleanable_dirty_ratio = tc->min_cleanable_dirty_ratio;
}

/* Fills partition `index` of t around its open log (taken: closed with the
 * topic) in log dir `dir` (placed there by the log manager), and hands the
 * log to the log manager. 0, or -1 when the log manager could not take it
 * (out of memory, logged: the partition serves, but its log is not flushed,
 * checkpointed or retained until the next start). */
static int partition_setup(struct br_replica_manager *rm, struct br_topic *t, int32_t index,
                           struct br_log *log, size_t dir)
{
    struct br_partition *p = &t->partitions[index];
    br_partition_attach_log(p, t, index, log);
    /* a log made on the I/O worker holds its files outside any budget */
    br_log_set_files(log, rm->files);
    /* standalone: this broker leads every partition; its epoch stays put
     * across restarts. An empty partition writes no epoch checkpoint when it
     * is created or opened (br_partition_become_leader), which is what made
     * a start of 10,000 empty partitions take minutes */
    br_partition_become_leader(p, rm->purgatory);
    int64_t max_id = br_partition_load_producers(p);
    if (max_id > rm->max_producer_id_seen) {
        rm->max_producer_id_seen = max_id;
    }
    if (br_logm_add(rm->logs, log, t->name, index, dir, p, &p->managed) != 0) {
        br_error("out of memory adding the log of %s-%" PRId32, t->name, index);
        br_logm_release(rm->logs, dir);
        return -1;
    }
    return 0;
}

static int open_partition(struct br_replica_manager *rm, struct br_topic *t, int32_t index)
{
    size_t dir = br_logm_find_dir(rm->logs, t->name, index);
    char path[4096];
    int n =
        snprintf(path, sizeof path, "%s/%s-%" PRId32, br_logm_dir(rm->logs, dir), t->name, index);
    if (n < 0 || (size_t)n >= sizeof path) {
        br_logm_release(rm->logs, dir);
        return -1;
    }
    struct br_log_config lc;
    br_topic_log_config(&t->config, &lc);
    struct br_log *log = NULL;
    int err =
        br_log_open(path, &lc, br_logm_recovery_point(rm->logs, t->name, index), rm->files, &log);
    if (err != 0) {
        br_error("cannot open log %s: %s", path, err < 0 ? kp_err_str(err) : kp_err_name(err));
        br_logm_release(rm->logs, dir);
        return -1;
    }
    return partition_setup(rm, t, index, log, dir);
}

/* Takes t out of the table (when it is there). */
static void topic_unlink(struct br_replica_manager *rm, const struct br_topic *t)
{
    size_t i = topic_lower_bound(rm, kp_str_c(t->name));
    if (i < rm->ntopics && rm->topics[i] == t) {
        memmove(&rm->topics[i], &rm->topics[i + 1],
                (rm->ntopics - i - 1) * sizeof(struct br_topic *));
        rm->ntopics--;
    }
}

static int topic_insert(struct br_replica_manager *rm, struct br_topic *t)
{
    struct kp_str name = kp_str_c(t->name);
    size_t i = topic_lower_bound(rm, name);
    if (rm->ntopics == rm->topics_cap) {
        size_t cap = rm->topics_cap == 0 ? 16 : rm->topics_cap * 2;
        struct br_topic **nt = kp_realloc(rm->topics, cap * sizeof(struct br_topic *));
        if (nt == NULL) {
            return -1;
        }
        rm->topics = nt;
        rm->topics_cap = cap;
    }
    memmove(&rm->topics[i + 1], &rm->topics[i], (rm->ntopics - i) * sizeof(struct br_topic *));
    rm->topics[i] = t;
    rm->ntopics++;
    return 0;
}

/* A topic from its persisted metadata, its partitions not yet filled. */
static struct br_topic *topic_new(struct br_replica_manager *rm, const struct br_topic_meta *m)
{
    struct br_topic *t = kp_calloc(1, sizeof *t);
    if (t == NULL) {
        return NULL;
    }
    (void)snprintf(t->name, sizeof t->name, "%s", m->name);
    t->npartitions = m->partitions;
    t->replication_factor = m->replication_factor;
    t->internal = t->name[0] == '_' && t->name[1] == '_';
    br_topic_config_from_broker(rm->cfg, &t->config);
    for (size_t i = 0; i < m->n_configs; i++) {
        char err[256];
        if (br_topic_config_set(&t->config, m->configs[i].key, m->configs[i].value, err,
                                sizeof err) != 0) {
            br_warn("topic %s: stored config %s ignored: %s", t->name, m->configs[i].key, err);
        }
    }
    t->partitions = kp_calloc((size_t)t->npartitions, sizeof *t->partitions);
    if (t->partitions == NULL) {
        kp_free(t);
        return NULL;
    }
    return t;
}

/* Build a topic from its persisted metadata and open its logs. */
int br_rm_topic_load(struct br_replica_manager *rm, const struct br_topic_meta *m)
{
    struct br_topic *t = topic_new(rm, m);
    if (t == NULL) {
        return -1;
    }
    for (int32_t i = 0; i < t->npartitions; i++) {
        if (open_partition(rm, t, i) != 0) {
            t->npartitions = i + 1; /* the log of i too, when it was opened */
            br_rm_topic_free(rm, t);
            return -1;
        }
    }
    if (topic_insert(rm, t) != 0) {
        br_rm_topic_free(rm, t);
        return -1;
    }
    return 0;
}

int br_rm_topic_adopt(struct br_replica_manager *rm, const struct br_topic_meta *m,
                      struct br_log **logs, const size_t *dirs)
{
    struct br_topic *t = topic_new(rm, m);
    if (t == NULL) {
        for (int32_t i = 0; i < m->partitions; i++) {
            br_log_close(logs[i]);
            logs[i] = NULL;
        }
        return -1;
    }
    for (int32_t i = 0; i < t->npartitions; i++) {
        (void)partition_setup(rm, t, i, logs[i], dirs[i]); /* a failure is logged */
        logs[i] = NULL;
    }
    if (topic_insert(rm, t) != 0) {
        br_rm_topic_free(rm, t);
        return -1;
    }
    return 0;
}

int br_rm_topic_grow(struct br_replica_manager *rm, struct br_topic *t, int32_t partitions,
                     struct br_log **logs, const size_t *dirs)
{
    int32_t old = t->npartitions;
    struct br_partition *parts =
        partitions > old ? kp_calloc((size_t)partitions, sizeof *parts) : NULL;
    if (parts == NULL) {
        for (int32_t i = old; i < partitions; i++) {
            br_log_close(logs[i]);
            logs[i] = NULL;
        }
        return -1;
    }
    /* parked fetches hold pointers into the array that moves: they are
     * answered now with what they have (a consumer fetches again) */
    for (int32_t i = 0; i < old; i++) {
        br_purgatory_complete_key(rm->purgatory, &t->partitions[i].delayed);
    }
    /* the partitions move whole: their logs and producers are pointers
     * that stay valid, no operation waits on their keys now; p->topic is t
     * still */
    memcpy(parts, t->partitions, (size_t)old * sizeof *parts);
    kp_free(t->partitions);
    t->partitions = parts;
    t->npartitions = partitions;
    for (int32_t i = 0; i < old; i++) {
        br_logm_set_owner(parts[i].managed, &parts[i]); /* moved */
    }
    for (int32_t i = old; i < partitions; i++) {
        (void)partition_setup(rm, t, i, logs[i], dirs[i]); /* a failure is logged */
        logs[i] = NULL;
    }
    return 0;
}

int br_rm_topic_remove(struct br_replica_manager *rm, struct br_topic *t, char **dirs)
{
    int rc = 0;
    for (int32_t p = 0; p < t->npartitions; p++) {
        dirs[p] = NULL;
        const struct br_log *log = t->partitions[p].log;
        if (log != NULL) {
            size_t n = strlen(br_log_dir(log));
            dirs[p] = kp_malloc(n + 1);
            if (dirs[p] == NULL) {
                rc = KP_E_NOMEM;
            } else {
                memcpy(dirs[p], br_log_dir(log), n + 1);
            }
        }
    }
    if (rc != 0) {
        for (int32_t p = 0; p < t->npartitions; p++) {
            kp_free(dirs[p]);
            dirs[p] = NULL;
        }
        return rc;
    }
    topic_unlink(rm, t);
    /* parked fetches are answered; the logs are closed (their
     * directories go next, by path, away from the reactor) */
    br_rm_topic_free(rm, t);
    return 0;
}

/* ---------------------------------------------------------------- cluster mode */

int br_rm_partition_delete(struct br_replica_manager *rm, struct br_topic *t, int32_t index,
                           char **dir)
{
    *dir = NULL;
    struct br_partition *p = &t->partitions[index];
    if (p->log == NULL) {
        return 0;
    }
    /* nothing waits on it any more (its caller stopped its fetching) */
    br_purgatory_complete_key(rm->purgatory, &p->delayed);
    /* renamed to its delete name first (Kafka's LogManager.asyncDelete):
     * the partition's own name is free at once for a topic made again
     * under it, and what is left of this one is never read as a replica */
    int rc = 0;
    char parent[4096];
    char target[4096];
    const char *path = br_log_dir(p->log);
    const char *slash = strrchr(path, '/');
    size_t plen = slash != NULL ? (size_t)(slash - path) : 0;
    if (slash == NULL || plen >= sizeof parent) {
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    } else {
        memcpy(parent, path, plen);
        parent[plen] = '\0';
        if (br_log_delete_dir_name(parent, t->name, index, target, sizeof target) != 0 ||
            br_log_move_dir(p->log, target) != 0) {
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    size_t n = strlen(br_log_dir(p->log));
    *dir = kp_malloc(n + 1);
    if (*dir != NULL) {
        memcpy(*dir, br_log_dir(p->log), n + 1);
    }
    br_partition_close(p, rm->logs);
    br_partition_init(p, t, index, rm->purgatory);
    return rc;
}

void br_rm_topic_forget_if_empty(struct br_replica_manager *rm, struct br_topic *t)
{
    for (int32_t i = 0; i < t->npartitions; i++) {
        if (t->partitions[i].log != NULL) {
            return;
        }
    }
    topic_unlink(rm, t);
    br_rm_topic_free(rm, t);
}

struct br_partition *br_rm_leader_partition(struct br_replica_manager *rm, struct kp_str topic,
                                            int32_t index, int16_t *err)
{
    struct br_topic *t = br_rm_find_topic(rm, topic);
    if (t != NULL && index >= 0 && index < t->npartitions &&
        t->partitions[index].role == BR_ROLE_LEADER && t->partitions[index].log != NULL &&
        !t->partitions[index].fenced) {
        *err = 0;
        return &t->partitions[index];
    }
    /* any partition of the cluster, hosted here or not */
    bool known =
        topic.len > 0 && br_mc_partition(rm->mc, topic.ptr, (size_t)topic.len, index) != NULL;
    *err = known ? KP_ERR_NOT_LEADER_OR_FOLLOWER : KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    return NULL;
}

/* The topic of a cluster named so, with at least n partition slots (those
 * not hosted here without a log); NULL when out of memory. */
static struct br_topic *cluster_topic(struct br_replica_manager *rm, struct kp_str name, int32_t n)
{
    struct br_topic *t = br_rm_find_topic(rm, name);
    if (t == NULL) {
        struct br_topic_meta m;
        memset(&m, 0, sizeof m);
        (void)snprintf(m.name, sizeof m.name, "%.*s", (int)name.len, name.ptr);
        m.partitions = n;
        m.replication_factor = 1;
        t = topic_new(rm, &m);
        if (t == NULL || topic_insert(rm, t) != 0) {
            kp_free(t != NULL ? t->partitions : NULL);
            kp_free(t);
            return NULL;
        }
        for (int32_t i = 0; i < n; i++) {
            br_partition_init(&t->partitions[i], t, i, rm->purgatory);
        }
        return t;
    }
    if (n <= t->npartitions) {
        return t;
    }
    struct br_partition *parts = kp_calloc((size_t)n, sizeof *parts);
    if (parts == NULL) {
        return NULL;
    }
    /* parked fetches hold pointers into the array that moves */
    for (int32_t i = 0; i < t->npartitions; i++) {
        br_purgatory_complete_key(rm->purgatory, &t->partitions[i].delayed);
    }
    memcpy(parts, t->partitions, (size_t)t->npartitions * sizeof *parts);
    for (int32_t i = 0; i < t->npartitions; i++) {
        br_logm_set_owner(parts[i].managed, &parts[i]);
    }
    for (int32_t i = t->npartitions; i < n; i++) {
        parts[i].topic = t;
        parts[i].index = i;
    }
    kp_free(t->partitions);
    t->partitions = parts;
    t->npartitions = n;
    return t;
}

int br_rm_host_prepare(struct br_replica_manager *rm, struct kp_str topic, int32_t index,
                       int32_t npartitions, struct br_log_opening *o)
{
    if (index < 0 || index >= BR_MAX_PARTITIONS || topic.len <= 0 ||
        !br_topic_name_valid(topic.ptr, (size_t)topic.len)) {
        return KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    struct br_topic *t =
        cluster_topic(rm, topic, npartitions > index + 1 ? npartitions : index + 1);
    if (t == NULL) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (t->partitions[index].log != NULL) {
        return 1;
    }
    memset(o, 0, sizeof *o);
    (void)snprintf(o->topic, sizeof o->topic, "%s", t->name);
    o->index = index;
    o->dir = br_logm_find_dir(rm->logs, t->name, index);
    int n = snprintf(o->path, sizeof o->path, "%s/%s-%" PRId32, br_logm_dir(rm->logs, o->dir),
                     t->name, index);
    if (n < 0 || (size_t)n >= sizeof o->path) {
        br_logm_release(rm->logs, o->dir);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    o->recovery_point = br_logm_recovery_point(rm->logs, t->name, index);
    br_topic_log_config(&t->config, &o->lc);
    return 0;
}

void br_rm_host_open(struct br_log_opening *o)
{
    /* no file budget off the reactor: the install hands the log to it */
    o->rc = br_log_open(o->path, &o->lc, o->recovery_point, NULL, &o->log);
}

int br_rm_host_install(struct br_replica_manager *rm, struct br_log_opening *o)
{
    struct br_topic *t = br_rm_find_topic(rm, kp_str_c(o->topic));
    struct br_partition *p =
        t != NULL && o->index < t->npartitions ? &t->partitions[o->index] : NULL;
    if (o->rc != 0 || p == NULL || p->log != NULL) {
        if (o->rc != 0) {
            br_error("cannot open log %s: %s", o->path,
                     o->rc < 0 ? kp_err_str(o->rc) : kp_err_name(o->rc));
        }
        br_log_close(o->log);
        o->log = NULL;
        br_logm_release(rm->logs, o->dir);
        return o->rc != 0 || p == NULL ? KP_ERR_KAFKA_STORAGE_ERROR : 0;
    }
    struct br_log *log = o->log;
    o->log = NULL;
    if (partition_setup(rm, t, o->index, log, o->dir) != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    /* what it is comes from the controller: partition_setup's leadership
     * is the standalone broker's. Taken for one, a replica that leads in
     * its first LeaderAndIsr was not becoming the leader, and a partition
     * of __consumer_offsets did not load its groups (every broker
     * restarted: the committed offsets were not there) */
    br_partition_host_replica(p, br_logm_checkpointed_hw(rm->logs, t->name, o->index));
    int64_t leo = br_log_end_offset(p->log);
    br_info("%s-%" PRId32 ": hosted here, log end offset %" PRId64 ", high watermark %" PRId64,
            t->name, o->index, leo, p->hw);
    return 0;
}

int br_rm_host_partition(struct br_replica_manager *rm, struct kp_str topic, int32_t index,
                         int32_t npartitions, struct br_partition **out)
{
    *out = NULL;
    struct br_log_opening *o = kp_malloc(sizeof *o);
    if (o == NULL) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = br_rm_host_prepare(rm, topic, index, npartitions, o);
    if (rc == 0) {
        br_rm_host_open(o);
        rc = br_rm_host_install(rm, o);
    }
    kp_free(o);
    if (rc != 0 && rc != 1) {
        return rc;
    }
    struct br_topic *t = br_rm_find_topic(rm, topic);
    *out = &t->partitions[index];
    return 0;
}
