/* samsa-broker: broker state, dispatch, topics (see broker.h). */
#define _GNU_SOURCE

#include "broker.h"

#include "cleaner.h"
#include "group.h"
#include "log_dirs.h"
#include "logging.h"
#include "mailbox.h"
#include "request.h"
#include "retention.h"
#include "topic_admin.h"

#include <samsa-protocol/record_batch.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- dispatch */

typedef int (*handler_fn)(struct br_req *r);

struct dispatch_entry {
    int16_t min_version;
    int16_t max_version;
    handler_fn handler;
};

/* What the broker answers, by ApiKey. Versions within the protocol crate's
 * table; min 0 everywhere (librdkafka derives features from old versions). */
static const struct dispatch_entry dispatch[] = {
    [KP_API_PRODUCE] = {0, 7, br_h_produce},
    [KP_API_FETCH] = {0, 11, br_h_fetch},
    [KP_API_LIST_OFFSETS] = {0, 3, br_h_list_offsets},
    [KP_API_METADATA] = {0, 6, br_h_metadata},
    [KP_API_OFFSET_COMMIT] = {0, 7, br_h_offset_commit},
    [KP_API_OFFSET_FETCH] = {0, 5, br_h_offset_fetch},
    [KP_API_FIND_COORDINATOR] = {0, 2, br_h_find_coordinator},
    [KP_API_JOIN_GROUP] = {0, 5, br_h_join_group},
    [KP_API_HEARTBEAT] = {0, 3, br_h_heartbeat},
    [KP_API_LEAVE_GROUP] = {0, 3, br_h_leave_group},
    [KP_API_SYNC_GROUP] = {0, 3, br_h_sync_group},
    [KP_API_DESCRIBE_GROUPS] = {0, 4, br_h_describe_groups},
    [KP_API_LIST_GROUPS] = {0, 2, br_h_list_groups},
    [KP_API_API_VERSIONS] = {0, 3, br_h_api_versions},
    [KP_API_CREATE_TOPICS] = {0, 4, br_h_create_topics},
    [KP_API_DELETE_TOPICS] = {0, 3, br_h_delete_topics},
    [KP_API_INIT_PRODUCER_ID] = {0, 1, br_h_init_producer_id},
    [KP_API_DESCRIBE_CONFIGS] = {0, 2, br_h_describe_configs},
    [KP_API_DELETE_GROUPS] = {0, 1, br_h_delete_groups},
    [KP_API_DELETE_RECORDS] = {0, 1, br_h_delete_records},
    [KP_API_ALTER_CONFIGS] = {0, 1, br_h_alter_configs},
    [KP_API_DESCRIBE_LOG_DIRS] = {0, 1, br_h_describe_log_dirs},
    [KP_API_CREATE_PARTITIONS] = {0, 1, br_h_create_partitions},
    [KP_API_INCREMENTAL_ALTER_CONFIGS] = {0, 1, br_h_incremental_alter_configs},
};

#define NDISPATCH (sizeof dispatch / sizeof dispatch[0])

static const struct dispatch_entry *dispatch_find(int16_t key)
{
    if (key < 0 || (size_t)key >= NDISPATCH || dispatch[key].handler == NULL) {
        return NULL;
    }
    return &dispatch[key];
}

void br_supported_apis_init(struct br_broker *b)
{
    b->napis = 0;
    for (size_t k = 0; k < NDISPATCH && b->napis < BR_MAX_APIS; k++) {
        if (dispatch[k].handler != NULL) {
            struct kp_ApiVersionsResponse_ApiVersion e = {(int16_t)k, dispatch[k].min_version,
                                                          dispatch[k].max_version};
            b->apis[b->napis++] = e;
        }
    }
}

uint8_t *br_req_mutable(struct br_req *r, const uint8_t *view)
{
    return r->payload + (view - r->payload);
}

size_t br_request_arena_max(size_t len)
{
    return len * 16 + 65536;
}

int br_respond(struct br_req *r, const void *resp)
{
    return br_respond_max(r, resp, (size_t)r->b->cfg.response_max_bytes);
}

int br_respond_max(struct br_req *r, const void *resp, size_t max)
{
    if (r->slot == NULL) {
        return 0;
    }
    struct kp_writer w;
    kp_wr_init(&w, max);
    int err = kp_response_encode(&w, r->hdr->RequestApiKey, r->version, r->hdr->CorrelationId,
                                 resp);
    if (err != 0) {
        /* the caller answers the failure (br_respond_failed), logged there */
        kp_wr_free(&w);
        return err;
    }
    size_t len = 0;
    uint8_t *buf = kp_wr_steal(&w, &len);
    if (br_slot_add_mem(r->slot, buf, len) != 0) {
        return KP_E_NOMEM;
    }
    br_slot_ready(r->conn, r->slot);
    return 0;
}

/* An ApiVersions request of a version we do not speak: a v0 body with
 * UNSUPPORTED_VERSION listing key 18 only, so that the client can retry
 * with a version we have (Kafka's ApiVersionsRequest.getErrorResponse). */
static void answer_api_versions_unsupported(struct br_req *r)
{
    struct kp_ApiVersionsResponse_ApiVersion only = {KP_API_API_VERSIONS, 0, 3};
    struct kp_ApiVersionsResponse resp;
    kp_ApiVersionsResponse_init(&resp);
    resp.ErrorCode = KP_ERR_UNSUPPORTED_VERSION;
    resp.ApiKeys.items = &only;
    resp.ApiKeys.count = 1;
    r->version = 0;
    (void)br_respond(r, &resp);
}

static bool produce_acks_zero(const struct kp_request *req)
{
    if (req->header.RequestApiKey != KP_API_PRODUCE || req->body == NULL) {
        return false;
    }
    const struct kp_ProduceRequest *p = req->body;
    return p->Acks == 0;
}

void br_broker_handle_frame(struct br_broker *b, struct br_conn *c, uint8_t *payload, size_t len)
{
    /* what the request's bytes decode into is bounded by their size; what
     * the response holds, by response.max.bytes */
    struct kp_arena decoded;
    kp_arena_init(&decoded, br_request_arena_max(len));
    struct kp_arena response;
    kp_arena_init(&response, (size_t)b->cfg.response_max_bytes);
    struct kp_request req;
    int err = kp_request_decode(payload, len, &decoded, &req);
    struct br_req r = {b, c, NULL, &req.header, req.header.RequestApiVersion, req.body, &response,
                       payload, len};
    const struct dispatch_entry *d = dispatch_find(req.header.RequestApiKey);

    if (err == 0 && d != NULL && produce_acks_zero(&req)) {
        /* acks=0: the client expects no response at all */
        (void)d->handler(&r);
        goto out;
    }
    if (err == KP_E_TRUNCATED && len < 8) {
        br_warn("closing %s: request header truncated (%zu bytes)", br_conn_peer(c), len);
        br_conn_close_after_flush(c);
        goto out;
    }
    if (req.header.RequestApiKey == KP_API_API_VERSIONS &&
        (err == KP_E_UNSUPPORTED ||
         (d != NULL && req.header.RequestApiVersion > d->max_version))) {
        r.slot = br_conn_slot_new(c);
        if (r.slot != NULL) {
            answer_api_versions_unsupported(&r);
        }
        goto out;
    }
    if (err == KP_E_UNSUPPORTED || (err == 0 && (d == NULL ||
                                                 req.header.RequestApiVersion < d->min_version ||
                                                 req.header.RequestApiVersion > d->max_version))) {
        br_warn("closing %s: unsupported API key %d version %d (client \"%.*s\")",
                br_conn_peer(c), req.header.RequestApiKey, req.header.RequestApiVersion,
                (int)req.header.ClientId.len, req.header.ClientId.ptr);
        br_conn_close_after_flush(c);
        goto out;
    }
    if (err != 0) {
        br_warn("closing %s: malformed %s v%d request (correlation %" PRId32 "): %s",
                br_conn_peer(c), req.api != NULL ? req.api->name : "?",
                req.header.RequestApiVersion, req.header.CorrelationId, kp_err_str(err));
        br_conn_close_after_flush(c);
        goto out;
    }
    r.slot = br_conn_slot_new(c);
    if (r.slot == NULL) {
        br_error("out of memory: closing %s", br_conn_peer(c));
        br_conn_close_after_flush(c);
        goto out;
    }
    err = d->handler(&r);
    if (err != 0) {
        br_respond_failed(&r, err);
    }
out:
    kp_arena_free(&response);
    kp_arena_free(&decoded);
}

#define RECOVERY_CHECKPOINT "recovery-point-offset-checkpoint"

/* ---------------------------------------------------------------- checkpoints */

bool br_broker_read_dir_checkpoint(const struct br_broker *b, size_t d, const char *name,
                                   const char *without, struct br_checkpoint_entry **e, size_t *n)
{
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/%s", b->cfg.log_dirs[d], name);
    struct br_checkpoint_error cerr;
    *e = NULL;
    *n = 0;
    if (br_checkpoint_read(path, BR_MAX_CHECKPOINT_ENTRIES, e, n, &cerr) != 0) {
        char msg[512];
        br_checkpoint_error_format(path, &cerr, msg, sizeof msg);
        br_warn("ignoring %s (%s)", msg, without);
        return false;
    }
    return true;
}

struct br_partition *br_broker_checkpoint_partition(struct br_broker *b,
                                                    const struct br_checkpoint_entry *e, size_t d)
{
    struct br_topic *t = br_broker_find_topic(b, kp_str_c(e->topic));
    if (t == NULL || e->partition < 0 || e->partition >= t->npartitions) {
        return NULL;
    }
    struct br_partition *p = &t->partitions[e->partition];
    return p->dir_index == d ? p : NULL;
}

/* ---------------------------------------------------------------- topics */

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

static size_t topic_lower_bound(const struct br_broker *b, struct kp_str name)
{
    size_t lo = 0;
    size_t hi = b->ntopics;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (topic_cmp(b->topics[mid], name) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

struct br_topic *br_broker_find_topic(struct br_broker *b, struct kp_str name)
{
    if (name.len <= 0) {
        return NULL;
    }
    size_t i = topic_lower_bound(b, name);
    if (i < b->ntopics && topic_cmp(b->topics[i], name) == 0) {
        return b->topics[i];
    }
    return NULL;
}

/* mkdir -p */
static int br_mkdirs(const char *path)
{
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s", path);
    if (n <= 0 || (size_t)n >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = tmp + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
                return -1;
            }
            *p = '/';
        }
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
        return -1;
    }
    return 0;
}

/* The log dir that already holds this partition, else the one with the
 * fewest partitions (Kafka's placement rule). */
static const char *pick_log_dir(struct br_broker *b, const char *topic, int32_t p, char *path,
                                size_t pathlen)
{
    const char *best = NULL;
    size_t best_count = SIZE_MAX;
    for (size_t i = 0; i < b->cfg.n_log_dirs; i++) {
        const char *dir = b->cfg.log_dirs[i];
        int n = snprintf(path, pathlen, "%s/%s-%" PRId32, dir, topic, p);
        if (n > 0 && (size_t)n < pathlen && access(path, F_OK) == 0) {
            return dir;
        }
        if (b->dir_partitions[i] < best_count) {
            best_count = b->dir_partitions[i];
            best = dir;
        }
    }
    return best;
}

static void topic_free(struct br_broker *b, struct br_topic *t)
{
    if (t == NULL) {
        return;
    }
    for (int32_t i = 0; i < t->npartitions && t->partitions != NULL; i++) {
        struct br_partition *p = &t->partitions[i];
        /* parked fetches on this partition are answered now */
        while (p->nwaiters > 0) {
            br_parked_complete_now(b, p->waiters[p->nwaiters - 1]);
        }
        kp_free(p->waiters);
        br_producers_free(&p->producers);
        if (p->log != NULL) {
            br_log_close(p->log);
        }
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
}

static int cmp_checkpoint_entry(const void *a, const void *b)
{
    const struct br_checkpoint_entry *x = a;
    const struct br_checkpoint_entry *y = b;
    int c = strcmp(x->topic, y->topic);
    if (c != 0) {
        return c;
    }
    return x->partition < y->partition ? -1 : (x->partition > y->partition ? 1 : 0);
}

/* The recovery points are sorted once after loading (br_broker_start), so
 * that opening many partitions does not scan the whole list for each. */
static int64_t recovery_point_for(const struct br_broker *b, const char *topic, int32_t p)
{
    struct br_checkpoint_entry key;
    memset(&key, 0, sizeof key);
    (void)snprintf(key.topic, sizeof key.topic, "%s", topic);
    key.partition = p;
    const struct br_checkpoint_entry *e =
        b->nrecovery == 0 ? NULL
                          : bsearch(&key, b->recovery, b->nrecovery, sizeof key, cmp_checkpoint_entry);
    return e != NULL ? e->offset : 0;
}

/* Rebuild idempotent-producer state from the batches of the last segment(s). */
static void rebuild_producers(struct br_broker *b, struct br_partition *p)
{
    int64_t leo = br_log_end_offset(p->log);
    int64_t from = br_log_start_offset(p->log);
    if (leo - from > 100000) {
        from = leo - 100000;
    }
    struct br_log_iter *it = NULL;
    if (from >= leo || br_log_iter_open(p->log, from, &it) != 0) {
        return;
    }
    struct kp_batch_header h;
    while (br_log_iter_next(it, &h) == 0) {
        if (h.ProducerId >= b->max_producer_id_seen) {
            b->max_producer_id_seen = h.ProducerId;
        }
        if (h.ProducerId >= 0 && h.BaseSequence >= 0) {
            (void)br_producers_record(&p->producers, h.ProducerId, h.ProducerEpoch,
                                      h.BaseSequence, br_seq_add(h.BaseSequence, h.LastOffsetDelta),
                                      h.BaseOffset, 0, 10000);
        }
    }
    br_log_iter_close(it);
}

/* Fills partition `index` of t around its open log (taken) in log dir
 * `dir`. Placement counts (b->dir_partitions) are the caller's. */
static void partition_setup(struct br_broker *b, struct br_topic *t, int32_t index,
                            struct br_log *log, size_t dir)
{
    struct br_partition *p = &t->partitions[index];
    p->topic = t;
    p->index = index;
    p->log = log;
    p->dir_index = dir;
    /* a log made on the I/O worker holds its files outside any budget */
    br_log_set_files(log, b->files);
    /* standalone: this broker leads every partition; its epoch stays put
     * across restarts, and the ISR of one makes HW = LEO. Epoch 0 of a
     * partition without one reaches leader-epoch-checkpoint with its first
     * append (br_log_append assigns it, as Kafka's Log.append does): an
     * empty partition writes no checkpoint when it is created or opened,
     * which is what made a start of 10,000 empty partitions take minutes */
    p->leader_epoch = br_log_latest_epoch(p->log);
    if (p->leader_epoch < 0) {
        p->leader_epoch = 0;
    }
    p->hw = br_log_end_offset(p->log);
    rebuild_producers(b, p);
}

static int open_partition(struct br_broker *b, struct br_topic *t, int32_t index)
{
    char path[4096];
    const char *dir = pick_log_dir(b, t->name, index, path, sizeof path);
    if (dir == NULL) {
        return -1;
    }
    int n = snprintf(path, sizeof path, "%s/%s-%" PRId32, dir, t->name, index);
    if (n < 0 || (size_t)n >= sizeof path) {
        return -1;
    }
    struct br_log_config lc;
    br_topic_log_config(&t->config, &lc);
    struct br_log *log = NULL;
    int err = br_log_open(path, &lc, recovery_point_for(b, t->name, index), b->files, &log);
    if (err != 0) {
        br_error("cannot open log %s: %s", path, err < 0 ? kp_err_str(err) : kp_err_name(err));
        return -1;
    }
    size_t dir_index = 0;
    for (size_t i = 0; i < b->cfg.n_log_dirs; i++) {
        if (b->cfg.log_dirs[i] == dir) {
            b->dir_partitions[i]++;
            dir_index = i;
        }
    }
    partition_setup(b, t, index, log, dir_index);
    return 0;
}

static int topic_insert(struct br_broker *b, struct br_topic *t)
{
    struct kp_str name = kp_str_c(t->name);
    size_t i = topic_lower_bound(b, name);
    if (b->ntopics == b->topics_cap) {
        size_t cap = b->topics_cap == 0 ? 16 : b->topics_cap * 2;
        struct br_topic **nt = kp_realloc(b->topics, cap * sizeof(struct br_topic *));
        if (nt == NULL) {
            return -1;
        }
        b->topics = nt;
        b->topics_cap = cap;
    }
    memmove(&b->topics[i + 1], &b->topics[i], (b->ntopics - i) * sizeof(struct br_topic *));
    b->topics[i] = t;
    b->ntopics++;
    return 0;
}

/* A topic from its persisted metadata, its partitions not yet filled. */
static struct br_topic *topic_new(struct br_broker *b, const struct br_topic_meta *m)
{
    struct br_topic *t = kp_calloc(1, sizeof *t);
    if (t == NULL) {
        return NULL;
    }
    (void)snprintf(t->name, sizeof t->name, "%s", m->name);
    t->npartitions = m->partitions;
    t->replication_factor = m->replication_factor;
    t->internal = t->name[0] == '_' && t->name[1] == '_';
    br_topic_config_from_broker(&b->cfg, &t->config);
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
static int topic_load(struct br_broker *b, const struct br_topic_meta *m)
{
    struct br_topic *t = topic_new(b, m);
    if (t == NULL) {
        return -1;
    }
    for (int32_t i = 0; i < t->npartitions; i++) {
        if (open_partition(b, t, i) != 0) {
            t->npartitions = i;
            topic_free(b, t);
            return -1;
        }
    }
    if (topic_insert(b, t) != 0) {
        topic_free(b, t);
        return -1;
    }
    return 0;
}

int br_broker_topic_adopt(struct br_broker *b, const struct br_topic_meta *m,
                          struct br_log **logs, const size_t *dirs)
{
    struct br_topic *t = topic_new(b, m);
    if (t == NULL) {
        for (int32_t i = 0; i < m->partitions; i++) {
            br_log_close(logs[i]);
            logs[i] = NULL;
        }
        return -1;
    }
    for (int32_t i = 0; i < t->npartitions; i++) {
        partition_setup(b, t, i, logs[i], dirs[i]);
        logs[i] = NULL;
    }
    if (topic_insert(b, t) != 0) {
        topic_free(b, t);
        return -1;
    }
    return 0;
}

int br_broker_topic_grow(struct br_broker *b, struct br_topic *t, int32_t partitions,
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
        struct br_partition *p = &t->partitions[i];
        while (p->nwaiters > 0) {
            br_parked_complete_now(b, p->waiters[p->nwaiters - 1]);
        }
    }
    /* the partitions move whole: their logs, producers and waiter arrays
     * are pointers that stay valid; p->topic is t still */
    memcpy(parts, t->partitions, (size_t)old * sizeof *parts);
    kp_free(t->partitions);
    t->partitions = parts;
    t->npartitions = partitions;
    for (int32_t i = old; i < partitions; i++) {
        partition_setup(b, t, i, logs[i], dirs[i]);
        logs[i] = NULL;
    }
    return 0;
}

/* Kafka's AdminZkClient.validateCreateOrUpdateTopic (2.0): a name holding
 * '.' or '_' must not collide with an existing topic's ('.' and '_' clash in
 * metric names), even for validate_only; the message is Kafka's. */
static int check_collisions(const struct br_broker *b, const char *name, char *err, size_t errlen)
{
    if (strpbrk(name, "._") == NULL) {
        return 0;
    }
    size_t n = 0;
    size_t used = 0;
    for (size_t i = 0; i < b->ntopics; i++) {
        if (!br_topic_names_collide(b->topics[i]->name, name)) {
            continue;
        }
        int w = n == 0 ? snprintf(err, errlen, "Topic '%s' collides with existing topics: %s", name,
                                  b->topics[i]->name)
                       : snprintf(err + used, errlen - used, ", %s", b->topics[i]->name);
        if (w > 0) {
            used += (size_t)w;
        }
        if (used >= errlen) {
            used = errlen - 1; /* the list is cut, the code stands */
        }
        n++;
    }
    return n > 0 ? KP_ERR_INVALID_TOPIC_EXCEPTION : 0;
}

int br_broker_create_topic(struct br_broker *b, struct kp_str name, int32_t partitions,
                           int16_t replication_factor, const struct br_kv *configs,
                           size_t nconfigs, bool validate_only, char *err, size_t errlen)
{
    char cname[BR_TOPIC_NAME_MAX + 1];
    err[0] = '\0';
    if (name.len <= 0 || (size_t)name.len >= sizeof cname) {
        (void)snprintf(err, errlen, "invalid topic name length %" PRId32, name.len);
        return KP_ERR_INVALID_TOPIC_EXCEPTION;
    }
    memcpy(cname, name.ptr, (size_t)name.len);
    cname[name.len] = '\0';
    if (!br_topic_name_valid(cname, (size_t)name.len)) {
        (void)snprintf(err, errlen, "topic name \"%s\" is illegal: use 1-249 of [a-zA-Z0-9._-]",
                       cname);
        return KP_ERR_INVALID_TOPIC_EXCEPTION;
    }
    if (br_broker_find_topic(b, name) != NULL) {
        (void)snprintf(err, errlen, "topic \"%s\" already exists", cname);
        return KP_ERR_TOPIC_ALREADY_EXISTS;
    }
    if (br_topic_admin_reserved(b, name)) {
        /* the name is taken while a creation or deletion of it goes on */
        (void)snprintf(err, errlen, "topic \"%s\" is being created or deleted", cname);
        return KP_ERR_TOPIC_ALREADY_EXISTS;
    }
    int ce = check_collisions(b, cname, err, errlen);
    if (ce != 0) {
        return ce;
    }
    if (partitions < 1 || partitions > BR_MAX_PARTITIONS) {
        (void)snprintf(err, errlen, "number of partitions must be 1-%d", BR_MAX_PARTITIONS);
        return KP_ERR_INVALID_PARTITIONS;
    }
    if (replication_factor < 1 || replication_factor > 1) {
        (void)snprintf(err, errlen,
                       "replication factor %d is invalid: this cluster has 1 live broker",
                       replication_factor);
        return KP_ERR_INVALID_REPLICATION_FACTOR;
    }
    struct br_topic_config tc;
    br_topic_config_from_broker(&b->cfg, &tc);
    struct br_topic_meta m;
    memset(&m, 0, sizeof m);
    (void)snprintf(m.name, sizeof m.name, "%s", cname);
    m.partitions = partitions;
    m.replication_factor = replication_factor;
    char keys[BR_MAX_TOPIC_CONFIGS][128];
    char values[BR_MAX_TOPIC_CONFIGS][1024];
    struct br_meta_config kvs[BR_MAX_TOPIC_CONFIGS];
    if (nconfigs > BR_MAX_TOPIC_CONFIGS) {
        (void)snprintf(err, errlen, "too many configs");
        return KP_ERR_INVALID_CONFIG;
    }
    /* A key given twice: the later value, as Kafka 2.0 takes it
     * (CreateTopicsRequest puts the entries in a HashMap; AdminManager
     * validates and stores what the map holds). */
    size_t nkept = 0;
    for (size_t i = 0; i < nconfigs; i++) {
        struct kp_str k = configs[i].key;
        struct kp_str v = configs[i].value;
        if (k.len <= 0 || (size_t)k.len >= sizeof keys[i] || v.len < 0 ||
            (size_t)v.len >= sizeof values[i]) {
            (void)snprintf(err, errlen, "config %.*s: missing or oversized value",
                           k.len > 0 ? (int)k.len : 0, k.ptr != NULL ? k.ptr : "");
            return KP_ERR_INVALID_CONFIG;
        }
        size_t at = nkept;
        for (size_t j = 0; j < nkept; j++) {
            if (strlen(keys[j]) == (size_t)k.len && memcmp(keys[j], k.ptr, (size_t)k.len) == 0) {
                at = j;
                break;
            }
        }
        memcpy(keys[at], k.ptr, (size_t)k.len);
        keys[at][k.len] = '\0';
        memcpy(values[at], v.ptr, (size_t)v.len);
        values[at][v.len] = '\0';
        if (at == nkept) {
            nkept++;
        }
    }
    for (size_t i = 0; i < nkept; i++) {
        int e = br_topic_config_set(&tc, keys[i], values[i], err, errlen);
        if (e != 0) {
            return e;
        }
        kvs[i].key = keys[i];
        kvs[i].value = values[i];
    }
    m.configs = kvs;
    m.n_configs = nkept;
    if (validate_only) {
        return 0;
    }
    /* every replica is this broker (a replication factor of 1 here) */
    m.replicas = kp_calloc((size_t)partitions * (size_t)replication_factor, sizeof *m.replicas);
    if (m.replicas == NULL) {
        (void)snprintf(err, errlen, "out of memory");
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    for (size_t i = 0; i < (size_t)partitions * (size_t)replication_factor; i++) {
        m.replicas[i] = b->node_id;
    }
    /* the topic is stored and its logs made off the reactor; it appears
     * once they exist (topic_admin.h) */
    int e = br_topic_admin_create(b, &m, &tc, err, errlen);
    kp_free(m.replicas);
    return e;
}

int br_broker_topic_remove(struct br_broker *b, struct br_topic *t, char **dirs)
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
    size_t i = topic_lower_bound(b, kp_str_c(t->name));
    if (i < b->ntopics && b->topics[i] == t) {
        memmove(&b->topics[i], &b->topics[i + 1], (b->ntopics - i - 1) * sizeof(struct br_topic *));
        b->ntopics--;
    }
    for (int32_t p = 0; p < t->npartitions; p++) {
        size_t d = t->partitions[p].dir_index;
        if (d < b->cfg.n_log_dirs && b->dir_partitions[d] > 0) {
            b->dir_partitions[d]--;
        }
    }
    /* parked fetches are answered; the logs are closed (their
     * directories go next, by path, away from the reactor) */
    topic_free(b, t);
    return 0;
}

/* ---------------------------------------------------------------- lifecycle */

void br_broker_cancel_parked(struct br_broker *b, void *parked)
{
    struct br_park *pk = parked;
    switch (pk->kind) {
    case BR_PARK_FETCH:
        br_parked_cancel(b, (struct br_parked *)(void *)pk);
        break;
    case BR_PARK_GROUP:
        br_groups_cancel_parked(b, parked);
        break;
    case BR_PARK_ADMIN:
        br_topic_admin_cancel_parked(b, parked);
        break;
    }
}

void br_broker_complete_all_parked(struct br_broker *b)
{
    while (b->parked != NULL) {
        br_parked_complete_now(b, b->parked);
    }
    br_groups_complete_all_parked(b);
    br_topic_admin_complete_all_parked(b);
}

bool br_broker_stopping(const struct br_broker *b)
{
    return b->stopping;
}

static void write_checkpoints(struct br_broker *b)
{
    for (size_t d = 0; d < b->cfg.n_log_dirs; d++) {
        const char *dir = b->cfg.log_dirs[d];
        size_t n = 0;
        for (size_t i = 0; i < b->ntopics; i++) {
            n += (size_t)b->topics[i]->npartitions;
        }
        struct br_checkpoint_entry *rec = kp_calloc(n == 0 ? 1 : n, sizeof *rec);
        struct br_checkpoint_entry *rep = kp_calloc(n == 0 ? 1 : n, sizeof *rep);
        struct br_checkpoint_entry *lso = kp_calloc(n == 0 ? 1 : n, sizeof *lso);
        if (rec == NULL || rep == NULL || lso == NULL) {
            kp_free(rec);
            kp_free(rep);
            kp_free(lso);
            br_error("out of memory writing checkpoints");
            return;
        }
        size_t k = 0;
        for (size_t i = 0; i < b->ntopics; i++) {
            struct br_topic *t = b->topics[i];
            for (int32_t p = 0; p < t->npartitions; p++) {
                struct br_partition *part = &t->partitions[p];
                if (part->dir_index != d) {
                    continue;
                }
                (void)snprintf(rec[k].topic, sizeof rec[k].topic, "%s", t->name);
                rec[k].partition = p;
                rec[k].offset = br_log_recovery_point(part->log);
                rep[k] = rec[k];
                rep[k].offset = part->hw;
                lso[k] = rec[k];
                lso[k].offset = br_log_start_offset(part->log);
                k++;
            }
        }
        char path[4096];
        const char *names[3] = {RECOVERY_CHECKPOINT, "replication-offset-checkpoint",
                                "log-start-offset-checkpoint"};
        struct br_checkpoint_entry *lists[3] = {rec, rep, lso};
        for (int f = 0; f < 3; f++) {
            (void)snprintf(path, sizeof path, "%s/%s", dir, names[f]);
            if (br_checkpoint_write(path, lists[f], k) != 0) {
                br_error("writing %s failed", path);
            }
        }
        kp_free(rec);
        kp_free(rep);
        kp_free(lso);
    }
}

void br_broker_housekeeping(struct br_broker *b)
{
    int64_t now = br_now_wall_ms();
    for (size_t i = 0; i < b->ntopics; i++) {
        struct br_topic *tp = b->topics[i];
        for (int32_t p = 0; p < tp->npartitions; p++) {
            if (br_log_maybe_flush(tp->partitions[p].log, now) != 0) {
                br_error("flushing %s-%" PRId32 " failed", tp->name, p);
            }
        }
    }
    int64_t mono = br_now_mono_ms();
    br_retention_tick(b, mono);
    br_cleaner_tick(b, mono);
    if (mono - b->last_checkpoint_ms >= b->cfg.log_flush_offset_checkpoint_interval_ms) {
        write_checkpoints(b);
        b->last_checkpoint_ms = mono;
    }
    if (b->net != NULL) {
        br_timer_arm(b->net, &b->housekeeping, mono + 1000);
    }
}

static void housekeeping_fire(void *ctx, struct br_timer *t)
{
    (void)t;
    br_broker_housekeeping(ctx);
}

static const struct br_timer_ops housekeeping_timer = {"housekeeping", housekeeping_fire};

void br_broker_wake(struct br_broker *b)
{
    struct br_mail *m = br_mailbox_take_all(b->mailbox);
    while (m != NULL) {
        struct br_mail *next = m->next;
        m->deliver(b, m);
        m = next;
    }
}

/* ---------------------------------------------------------------- producer ids */

#define PRODUCER_ID_BLOCK 1000
#define PRODUCER_ID_FILE "producer-id-block"

/* Producer ids start past every id reserved before (the block end kept in
 * <log dir>/producer-id-block), past every id found in the logs (whose
 * sequence state was just rebuilt), and at the start time in milliseconds
 * shifted left 12 bits (so a lost file still gives fresh ids). */
static int load_producer_id_block(struct br_broker *b)
{
    int64_t next = br_now_wall_ms() << 12;
    if (b->max_producer_id_seen >= next) {
        next = b->max_producer_id_seen + 1;
    }
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/" PRODUCER_ID_FILE, b->cfg.log_dirs[0]);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        char line[64];
        char *end = NULL;
        long long v = -1;
        if (fgets(line, sizeof line, f) != NULL) {
            errno = 0;
            v = strtoll(line, &end, 10);
            if (errno != 0 || end == line || (*end != '\n' && *end != '\0') || v < 0) {
                v = -1;
            }
        }
        (void)fclose(f);
        if (v < 0) {
            br_warn("%s is not a producer id: ignored (ids start from the clock)", path);
        } else if (v >= next) {
            next = (int64_t)v;
        }
    }
    b->next_producer_id = next;
    b->producer_id_block_end = next; /* the first id reserves a block */
    return 0;
}

int br_broker_next_producer_id(struct br_broker *b, int64_t *id)
{
    if (b->next_producer_id >= b->producer_id_block_end) {
        int64_t end = b->next_producer_id + PRODUCER_ID_BLOCK;
        char path[4096];
        char text[32];
        (void)snprintf(path, sizeof path, "%s/" PRODUCER_ID_FILE, b->cfg.log_dirs[0]);
        int n = snprintf(text, sizeof text, "%" PRId64 "\n", end);
        if (br_file_write_atomic(path, text, (size_t)n) != 0) {
            return KP_ERR_KAFKA_STORAGE_ERROR; /* logged there */
        }
        b->producer_id_block_end = end;
    }
    *id = b->next_producer_id++;
    return 0;
}

static int lock_dir(struct br_broker *b, size_t i)
{
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/.lock", b->cfg.log_dirs[i]);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        br_error("cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        br_error("log dir %s is in use by another broker (%s is locked)", b->cfg.log_dirs[i],
                 path);
        close(fd);
        return -1;
    }
    b->dir_locks[i] = fd;
    return 0;
}

/* A log dir that does not exist yet, or holds no meta.properties and no
 * partition (no subdirectory; a file system's lost+found aside): a first
 * start, not a stop that needs recovery. */
static bool log_dir_is_new(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return errno == ENOENT;
    }
    bool fresh = true;
    while (fresh) {
        const struct dirent *de = readdir(d);
        if (de == NULL) {
            break;
        }
        const char *name = de->d_name;
        if (strcmp(name, "meta.properties") == 0) {
            fresh = false;
            continue;
        }
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
            strcmp(name, "lost+found") == 0) {
            continue;
        }
        struct stat st;
        bool is_dir = de->d_type == DT_DIR;
        if (de->d_type == DT_UNKNOWN && fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            is_dir = S_ISDIR(st.st_mode);
        }
        fresh = !is_dir;
    }
    (void)closedir(d);
    return fresh;
}

/* What the reactor calls (net.h): the broker is its only user. */
static void net_frame(void *ctx, struct br_conn *c, uint8_t *payload, size_t len)
{
    br_broker_handle_frame(ctx, c, payload, len);
}

static void net_cancel_parked(void *ctx, void *parked)
{
    br_broker_cancel_parked(ctx, parked);
}

static void net_drain(void *ctx)
{
    br_broker_complete_all_parked(ctx);
}

static const struct br_net_ops broker_net_ops = {net_frame, net_cancel_parked, net_drain};

static void mailbox_ready(void *ctx, struct br_watch *w)
{
    (void)w; /* one mailbox */
    br_broker_wake(ctx);
}

static const struct br_watch_ops mailbox_watch_ops = {"mailbox", mailbox_ready};

int br_broker_start(struct br_broker *b)
{
    for (size_t i = 0; i < BR_CONFIG_MAX_LOG_DIRS; i++) {
        b->dir_locks[i] = -1;
    }
    if (b->cfg.n_log_dirs == 0 || b->cfg.n_log_dirs > BR_CONFIG_MAX_LOG_DIRS) {
        br_error("log.dirs must name 1 to %d directories", BR_CONFIG_MAX_LOG_DIRS);
        return -1;
    }
    b->node_id = b->cfg.broker_id >= 0 ? b->cfg.broker_id : 0; /* until meta.properties says */
    br_supported_apis_init(b);
    br_fdlimit_init(b->cfg.log_open_files_max, &b->fdlimit);
    if (br_filecache_new(b->fdlimit.files_max, &b->files) != 0) {
        br_error("out of memory");
        return -1;
    }
    /* the listeners first: a port in use stops start-up before any file
     * (log dir, meta.properties with a new cluster id) is created */
    struct br_net_limits lim = {
        .max_connections = b->cfg.max_connections,
        .max_request_bytes = b->cfg.socket_request_max_bytes,
        .idle_ms = b->cfg.connections_max_idle_ms,
        .queued_max_bytes = b->cfg.queued_max_request_bytes,
    };
    if (br_net_create(&lim, &broker_net_ops, b, &b->net) != 0) {
        return -1;
    }
    for (size_t i = 0; i < b->cfg.n_listeners && !b->in_process; i++) {
        if (br_net_listen(b->net, b->cfg.listeners[i].host, b->cfg.listeners[i].port) != 0) {
            return -1;
        }
    }
    bool first_start[BR_CONFIG_MAX_LOG_DIRS];
    for (size_t i = 0; i < b->cfg.n_log_dirs; i++) {
        first_start[i] = log_dir_is_new(b->cfg.log_dirs[i]);
        if (br_mkdirs(b->cfg.log_dirs[i]) != 0) {
            br_error("cannot create log dir %s: %s", b->cfg.log_dirs[i], strerror(errno));
            return -1;
        }
        if (lock_dir(b, i) != 0) {
            return -1;
        }
    }
    bool identity_existed = false;
    if (br_log_dirs_load_identity(b, &identity_existed) != 0) {
        return -1;
    }
    /* recovery points, and whether the last stop was clean */
    for (size_t i = 0; i < b->cfg.n_log_dirs; i++) {
        char path[4096];
        (void)snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", b->cfg.log_dirs[i]);
        bool clean = access(path, F_OK) == 0;
        (void)unlink(path);
        if (first_start[i]) {
            br_info("log dir %s: first start", b->cfg.log_dirs[i]);
        } else {
            br_info("log dir %s: last stop was %s", b->cfg.log_dirs[i],
                    clean ? "clean" : "unclean: recovering");
        }
        (void)snprintf(path, sizeof path, "%s/%s", b->cfg.log_dirs[i], RECOVERY_CHECKPOINT);
        struct br_checkpoint_entry *e = NULL;
        size_t n = 0;
        if (access(path, F_OK) == 0) {
            if (br_broker_read_dir_checkpoint(b, i, RECOVERY_CHECKPOINT,
                                              "every segment will be recovered", &e, &n)) {
                struct br_checkpoint_entry *all =
                    kp_realloc(b->recovery, (b->nrecovery + n + 1) * sizeof *all);
                if (all != NULL) {
                    if (n > 0) {
                        memcpy(all + b->nrecovery, e, n * sizeof *e);
                    }
                    b->recovery = all;
                    b->nrecovery += n;
                }
            }
            br_checkpoint_free(e);
        }
    }
    if (b->nrecovery > 1) {
        qsort(b->recovery, b->nrecovery, sizeof *b->recovery, cmp_checkpoint_entry);
    }
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/" BR_META_FILE_NAME, b->cfg.log_dirs[0]);
    char err[512];
    /* without the store's file, the log dirs are checked before it is made:
     * a refused start leaves no empty file behind */
    bool metadata_missing = access(path, F_OK) != 0 && errno == ENOENT;
    if (metadata_missing && br_log_dirs_scan(b, NULL, 0, true, identity_existed) != 0) {
        return -1;
    }
    if (br_meta_file_open(path, &b->meta, err, sizeof err) != 0) {
        br_error("metadata store %s: %s. It holds every topic, its partitions and its configs: "
                 "Samsa does not start on a damaged one; restore it from a backup",
                 path, err);
        return -1;
    }
    struct br_topic_meta *topics = NULL;
    size_t ntopics = 0;
    if (br_meta_load(&b->meta, &topics, &ntopics, err, sizeof err) != 0) {
        br_error("metadata store %s: %s", path, err);
        return -1;
    }
    if (!metadata_missing && br_log_dirs_scan(b, topics, ntopics, false, identity_existed) != 0) {
        br_topic_metas_free(topics, ntopics);
        return -1;
    }
    for (size_t i = 0; i < ntopics; i++) {
        if (topic_load(b, &topics[i]) != 0) {
            br_error("cannot load topic %s", topics[i].name);
            br_topic_metas_free(topics, ntopics);
            return -1;
        }
    }
    br_topic_metas_free(topics, ntopics);
    br_retention_load_start_offsets(b);
    br_info("loaded %zu topic(s)", b->ntopics);
    size_t npartitions = 0;
    size_t nsegments = 0;
    for (size_t i = 0; i < b->ntopics; i++) {
        const struct br_topic *t = b->topics[i];
        for (int32_t p = 0; p < t->npartitions; p++) {
            npartitions++;
            nsegments += t->partitions[p].log != NULL ? br_log_segment_count(t->partitions[p].log)
                                                      : 0;
        }
    }
    br_fdlimit_report(&b->fdlimit, npartitions, nsegments, b->cfg.max_connections,
                      br_config_is_set(&b->cfg, BR_CFG_MAX_CONNECTIONS));
    if (load_producer_id_block(b) != 0) {
        return -1;
    }
    b->logs_loaded = true;
    /* advertise: advertised.listeners, else the listener (0.0.0.0 or "" is
     * not an address a client can use: fall back to 127.0.0.1 there) */
    const struct br_listener *adv = &b->cfg.advertised_listeners[0];
    (void)snprintf(b->advertised_host, sizeof b->advertised_host, "%s",
                   adv->host[0] != '\0' && strcmp(adv->host, "0.0.0.0") != 0 ? adv->host
                                                                             : "127.0.0.1");
    b->advertised_port = adv->port != 0 || b->in_process ? adv->port : br_net_bound_port(b->net, 0);
    if (br_mailbox_create(&b->mailbox) != 0 ||
        br_net_watch_add(b->net, br_mailbox_watch(b->mailbox), &mailbox_watch_ops) != 0 || br_cleaner_start(b) != 0) {
        br_error("cannot start the log cleaner");
        return -1;
    }
    if (br_topic_admin_start(b) != 0) {
        br_error("cannot start the I/O worker");
        return -1;
    }
    b->last_retention_ms = br_now_mono_ms();
    br_timer_init(&b->housekeeping, &housekeeping_timer, b);
    b->last_checkpoint_ms = br_now_mono_ms();
    br_timer_arm(b->net, &b->housekeeping, br_now_mono_ms() + 1000);
    int gerr = br_groups_start(b);
    if (gerr != 0) {
        br_error("group coordinator: %s", gerr < 0 ? kp_err_str(gerr) : kp_err_name(gerr));
        return -1;
    }
    br_info("broker %" PRId32 " of cluster %s serving as %s:%d (standalone)", b->node_id,
            b->cluster_id, b->advertised_host, b->advertised_port);
    return 0;
}

int br_broker_run(struct br_broker *b)
{
    int rc = br_net_run(b->net);
    b->stopping = true;
    br_net_drain(b->net, 5000);
    return rc;
}

void br_broker_stop(struct br_broker *b)
{
    /* checkpoints and the clean-shutdown mark only for logs that were
     * loaded: a start that failed before leaves the log dirs as they were */
    bool started = b->logs_loaded;
    bool flushed = true;
    /* first: a creation in flight ends with its topic complete (or not
     * there at all), before anything is flushed or checkpointed */
    br_topic_admin_stop(b);
    br_groups_stop(b);
    br_cleaner_stop(b);
    br_mailbox_free(b->mailbox);
    b->mailbox = NULL;
    for (size_t i = 0; i < b->ntopics; i++) {
        struct br_topic *t = b->topics[i];
        for (int32_t p = 0; p < t->npartitions; p++) {
            if (t->partitions[p].log != NULL && br_log_flush(t->partitions[p].log) != 0) {
                br_error("flushing %s-%" PRId32 " failed", t->name, p);
                flushed = false;
            }
        }
    }
    if (started) {
        write_checkpoints(b);
    }
    for (size_t i = 0; i < b->ntopics; i++) {
        topic_free(b, b->topics[i]);
    }
    kp_free(b->topics);
    b->topics = NULL;
    b->ntopics = 0;
    br_filecache_free(b->files); /* after the logs: every segment has left it */
    b->files = NULL;
    br_meta_close(&b->meta);
    br_net_free(b->net);
    b->net = NULL;
    if (flushed && started) {
        for (size_t i = 0; i < b->cfg.n_log_dirs; i++) {
            char path[4096];
            (void)snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", b->cfg.log_dirs[i]);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd >= 0) {
                close(fd);
            }
        }
    }
    b->net = NULL;
    for (size_t i = 0; i < BR_CONFIG_MAX_LOG_DIRS; i++) {
        if (b->dir_locks[i] >= 0) {
            close(b->dir_locks[i]);
            b->dir_locks[i] = -1;
        }
    }
    kp_free(b->recovery);
    b->recovery = NULL;
    b->logs_loaded = false;
}
