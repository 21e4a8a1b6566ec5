/*
 * group.id for a consumer: the group coordinator (FindCoordinator),
 * committed offsets (OffsetFetch resolves SAMSA_OFFSET_STORED), commits
 * (sync, async, auto commit every auto.commit.interval.ms), as a simple
 * (non-member) consumer: generation -1 and an empty member id, which the
 * coordinator accepts for an Empty group.
 *
 * Subscribing as a member of the classic group protocol (JoinGroup,
 * SyncGroup, Heartbeat, LeaveGroup) is not implemented yet: the assignors
 * and the Subscription/Assignment formats it will use are in assignor.c.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer.h"

struct sc_group {
    int32_t coord_id;      /* -1: unknown */
    bool coord_inflight;
    int64_t coord_retry_at;
    bool ofetch_inflight;
    int64_t next_auto_commit;
};

struct sc_commit_item {
    char *topic;
    int32_t partition;
    int64_t offset;
};

struct sc_commit_arg {
    int count;
    struct sc_commit_item *items;
};

void sc_op_commit_arg_free(void *varg)
{
    struct sc_commit_arg *a = varg;
    if (a == NULL) {
        return;
    }
    for (int i = 0; i < a->count; i++) {
        kp_free(a->items[i].topic);
    }
    kp_free(a->items);
    kp_free(a);
}

static struct sc_group *group(struct sc_client *c)
{
    if (c->group == NULL && c->v->group_id[0] != '\0') {
        c->group = kp_calloc(1, sizeof(*c->group));
        if (c->group != NULL) {
            c->group->coord_id = -1;
            c->group->next_auto_commit = sc_now_ms() + c->v->auto_commit_interval_ms;
        }
    }
    return c->group;
}

void sc_group_free(struct sc_client *c)
{
    kp_free(c->group);
    c->group = NULL;
}

int sc_group_topics(struct sc_client *c, const char **names, int max)
{
    (void)c;
    (void)names;
    (void)max;
    return 0;
}

void sc_group_metadata(struct sc_client *c, const struct kp_MetadataResponse *md)
{
    (void)c;
    (void)md;
}

void sc_group_polled(struct sc_client *c)
{
    (void)c;
}

/* ---------------------------------------------------------- coordinator */

static void on_find_coordinator(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                void *ctx)
{
    (void)conn;
    (void)ctx;
    struct sc_group *g = group(c);
    if (g == NULL) {
        return;
    }
    g->coord_inflight = false;
    if (err != 0) {
        g->coord_retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        return;
    }
    const struct kp_FindCoordinatorResponse *r = body;
    if (r->ErrorCode != 0 || r->Host.len <= 0 || r->Port <= 0 || r->Port > 65535) {
        g->coord_retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        sc_log(c, "FindCoordinator: %s", kp_err_name(sc_err_from_wire(r->ErrorCode)));
        return;
    }
    if (sc_broker_find(c, r->NodeId) == NULL) {
        struct sc_broker_md *nb =
            kp_realloc(c->brokers, (size_t)(c->broker_count + 1) * sizeof(*nb));
        if (nb == NULL) {
            return;
        }
        c->brokers = nb;
        nb[c->broker_count].host = sc_strndup(r->Host.ptr, (size_t)r->Host.len);
        if (nb[c->broker_count].host == NULL) {
            return;
        }
        nb[c->broker_count].id = r->NodeId;
        nb[c->broker_count].port = r->Port;
        c->broker_count++;
    }
    g->coord_id = r->NodeId;
    sc_log(c, "group %s: coordinator is node %d", c->v->group_id, r->NodeId);
}

struct sc_conn *sc_group_coordinator(struct sc_client *c)
{
    struct sc_group *g = group(c);
    if (g == NULL) {
        return NULL;
    }
    if (g->coord_id >= 0) {
        struct sc_conn *conn = sc_conn_get(c, g->coord_id);
        if (conn != NULL) {
            return sc_conn_is_up(conn) ? conn : NULL;
        }
        g->coord_id = -1;
    }
    if (g->coord_inflight || g->coord_retry_at > sc_now_ms()) {
        return NULL;
    }
    struct sc_conn *any = sc_conn_any_up(c);
    if (any == NULL) {
        return NULL;
    }
    int16_t ver = sc_conn_version(any, KP_API_FIND_COORDINATOR, 0, 2);
    if (ver < 0) {
        return NULL;
    }
    struct kp_FindCoordinatorRequest req;
    kp_FindCoordinatorRequest_init(&req);
    req.Key = kp_str_c(c->v->group_id);
    req.KeyType = 0;
    if (sc_conn_send(c, any, KP_API_FIND_COORDINATOR, ver, &req, on_find_coordinator, NULL) == 0) {
        g->coord_inflight = true;
    }
    return NULL;
}

static bool coordinator_error(int err)
{
    return err == KP_ERR_NOT_COORDINATOR || err == KP_ERR_COORDINATOR_NOT_AVAILABLE ||
           err == KP_ERR_COORDINATOR_LOAD_IN_PROGRESS || err == SAMSA_ERR_TRANSPORT ||
           err == SAMSA_ERR_TIMED_OUT;
}

static void lose_coordinator(struct sc_client *c)
{
    struct sc_group *g = group(c);
    if (g != NULL) {
        g->coord_id = -1;
        g->coord_retry_at = sc_now_ms() + c->v->retry_backoff_ms;
    }
}

/* ------------------------------------------------- stored offsets (fetch) */

struct ofetch_ctx {
    int count;
    struct {
        char *topic;
        int32_t partition;
        int epoch;
    } items[];
};

static void ofetch_ctx_free(struct ofetch_ctx *ctx)
{
    for (int i = 0; i < ctx->count; i++) {
        kp_free(ctx->items[i].topic);
    }
    kp_free(ctx);
}

static int64_t committed_in(const struct kp_OffsetFetchResponse *r, const char *topic,
                            int32_t partition, int *err)
{
    *err = r->ErrorCode != 0 ? sc_err_from_wire(r->ErrorCode) : SAMSA_ERR_BAD_RESPONSE;
    for (int32_t i = 0; i < r->Topics.count; i++) {
        if (!kp_str_eq_c(r->Topics.items[i].Name, topic)) {
            continue;
        }
        for (int32_t j = 0; j < r->Topics.items[i].Partitions.count; j++) {
            const struct kp_OffsetFetchResponse_OffsetFetchResponsePartition *p =
                &r->Topics.items[i].Partitions.items[j];
            if (p->PartitionIndex == partition) {
                *err = sc_err_from_wire(p->ErrorCode);
                return p->CommittedOffset;
            }
        }
    }
    return -1;
}

static void on_stored_offsets(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                              void *vctx)
{
    (void)conn;
    struct ofetch_ctx *ctx = vctx;
    struct sc_group *g = group(c);
    if (g != NULL) {
        g->ofetch_inflight = false;
    }
    for (int i = 0; i < ctx->count; i++) {
        struct sc_cpart *p = sc_cpart_find(c, ctx->items[i].topic, ctx->items[i].partition);
        if (p == NULL || p->epoch != ctx->items[i].epoch || p->state != SC_CP_NEED_OFFSET ||
            p->reset != SAMSA_OFFSET_STORED) {
            continue;
        }
        int perr = err;
        int64_t off = -1;
        if (err == 0) {
            off = committed_in(body, p->topic, p->partition, &perr);
        }
        if (perr != 0) {
            if (coordinator_error(perr)) {
                lose_coordinator(c);
            }
            p->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
            continue;
        }
        if (off >= 0) {
            p->state = SC_CP_ACTIVE;
            p->position = off;
            p->committed = off;
        } else {
            /* Nothing committed: auto.offset.reset decides. */
            p->reset = c->v->auto_offset_reset == SC_RESET_EARLIEST ? SAMSA_OFFSET_BEGINNING
                                                                     : SAMSA_OFFSET_END;
            if (c->v->auto_offset_reset == SC_RESET_ERROR) {
                p->state = SC_CP_STOPPED;
                sc_post_error(c, KP_ERR_OFFSET_OUT_OF_RANGE,
                              "%s [%d]: no committed offset and auto.offset.reset=error",
                              p->topic, p->partition);
            }
        }
        pthread_cond_broadcast(&c->ev_cond);
    }
    ofetch_ctx_free(ctx);
}

/* An OffsetFetch request for items (topic, partition) onto conn. */
static int send_offset_fetch(struct sc_client *c, struct sc_conn *conn, char *const *topics,
                             const int32_t *partitions, int n, sc_resp_fn *fn, void *ctx)
{
    int16_t ver = sc_conn_version(conn, KP_API_OFFSET_FETCH, 1, 5);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    struct kp_OffsetFetchRequest_OffsetFetchRequestTopic *ts =
        kp_arena_alloc(&c->arena, sizeof(*ts) * (size_t)n);
    int32_t *ps = kp_arena_alloc(&c->arena, sizeof(*ps) * (size_t)n);
    if (ts == NULL || ps == NULL) {
        kp_arena_reset(&c->arena);
        return SAMSA_ERR_NOMEM;
    }
    int nt = 0;
    int np = 0;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int t = 0; t < nt; t++) {
            seen = seen || kp_str_eq_c(ts[t].Name, topics[i]);
        }
        if (seen) {
            continue;
        }
        ts[nt].Name = kp_str_c(topics[i]);
        ts[nt].PartitionIndexes.items = &ps[np];
        ts[nt].PartitionIndexes.count = 0;
        for (int j = i; j < n; j++) {
            if (strcmp(topics[j], topics[i]) == 0) {
                ps[np++] = partitions[j];
                ts[nt].PartitionIndexes.count++;
            }
        }
        nt++;
    }
    struct kp_OffsetFetchRequest req;
    kp_OffsetFetchRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.Topics.items = ts;
    req.Topics.count = nt;
    int err = sc_conn_send(c, conn, KP_API_OFFSET_FETCH, ver, &req, fn, ctx);
    kp_arena_reset(&c->arena);
    return err;
}

static void fetch_stored(struct sc_client *c, struct sc_conn *coord)
{
    struct sc_group *g = group(c);
    int n = 0;
    for (int i = 0; i < c->cpart_count; i++) {
        const struct sc_cpart *p = c->cparts[i];
        n += p->state == SC_CP_NEED_OFFSET && p->reset == SAMSA_OFFSET_STORED &&
                     p->retry_at <= sc_now_ms()
                 ? 1
                 : 0;
    }
    if (n == 0 || g->ofetch_inflight) {
        return;
    }
    struct ofetch_ctx *ctx = kp_calloc(1, sizeof(*ctx) + (size_t)n * sizeof(ctx->items[0]));
    char **topics = kp_calloc((size_t)n, sizeof(*topics));
    int32_t *parts = kp_calloc((size_t)n, sizeof(*parts));
    if (ctx == NULL || topics == NULL || parts == NULL) {
        kp_free(ctx);
        kp_free(topics);
        kp_free(parts);
        return;
    }
    int k = 0;
    for (int i = 0; i < c->cpart_count && k < n; i++) {
        const struct sc_cpart *p = c->cparts[i];
        if (p->state == SC_CP_NEED_OFFSET && p->reset == SAMSA_OFFSET_STORED &&
            p->retry_at <= sc_now_ms()) {
            ctx->items[k].topic = sc_strdup(p->topic);
            if (ctx->items[k].topic == NULL) {
                break;
            }
            ctx->items[k].partition = p->partition;
            ctx->items[k].epoch = p->epoch;
            topics[k] = ctx->items[k].topic;
            parts[k] = p->partition;
            k++;
        }
    }
    ctx->count = k;
    if (k > 0 && send_offset_fetch(c, coord, topics, parts, k, on_stored_offsets, ctx) == 0) {
        g->ofetch_inflight = true;
    } else {
        ofetch_ctx_free(ctx);
    }
    kp_free(topics);
    kp_free(parts);
}

/* ---------------------------------------------------------------- commit */

static void on_commit(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *vctx)
{
    (void)conn;
    struct sc_op *op = vctx;
    struct sc_commit_arg *a = op->arg;
    op->sent = false;
    int res = err;
    if (err == 0) {
        const struct kp_OffsetCommitResponse *r = body;
        for (int32_t i = 0; i < r->Topics.count; i++) {
            for (int32_t j = 0; j < r->Topics.items[i].Partitions.count; j++) {
                int e = sc_err_from_wire(r->Topics.items[i].Partitions.items[j].ErrorCode);
                if (e != 0 && res == 0) {
                    res = e;
                }
            }
        }
    }
    if (coordinator_error(res) && sc_now_ms() < op->deadline) {
        lose_coordinator(c);
        op->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        return;
    }
    if (res == 0) {
        for (int i = 0; i < a->count; i++) {
            struct sc_cpart *p = sc_cpart_find(c, a->items[i].topic, a->items[i].partition);
            if (p != NULL) {
                p->committed = a->items[i].offset;
            }
        }
    } else {
        sc_errf(op->errstr, sizeof(op->errstr), "OffsetCommit for group %s: %s", c->v->group_id,
                samsa_err_str(res));
        if (op->abandoned) {
            sc_post_error(c, res, "%s", op->errstr);
        }
    }
    sc_op_finish(c, op, res);
}

int64_t sc_op_commit_serve(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_commit_arg *a = op->arg;
    if (a->count == 0) {
        sc_op_finish(c, op, SAMSA_OK);
        return INT64_MAX;
    }
    struct sc_conn *coord = sc_group_coordinator(c);
    if (coord == NULL) {
        return now + 20;
    }
    int16_t ver = sc_conn_version(coord, KP_API_OFFSET_COMMIT, 2, 7);
    if (ver < 0) {
        sc_op_finish(c, op, SAMSA_ERR_UNSUPPORTED);
        return INT64_MAX;
    }
    struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *ts =
        kp_arena_alloc(&c->arena, sizeof(*ts) * (size_t)a->count);
    struct kp_OffsetCommitRequest_OffsetCommitRequestPartition *ps =
        kp_arena_alloc(&c->arena, sizeof(*ps) * (size_t)a->count);
    if (ts == NULL || ps == NULL) {
        kp_arena_reset(&c->arena);
        sc_op_finish(c, op, SAMSA_ERR_NOMEM);
        return INT64_MAX;
    }
    int nt = 0, np = 0;
    for (int i = 0; i < a->count; i++) {
        bool seen = false;
        for (int t = 0; t < nt; t++) {
            seen = seen || kp_str_eq_c(ts[t].Name, a->items[i].topic);
        }
        if (seen) {
            continue;
        }
        ts[nt].Name = kp_str_c(a->items[i].topic);
        ts[nt].Partitions.items = &ps[np];
        ts[nt].Partitions.count = 0;
        for (int j = i; j < a->count; j++) {
            if (strcmp(a->items[j].topic, a->items[i].topic) != 0) {
                continue;
            }
            memset(&ps[np], 0, sizeof(ps[np]));
            ps[np].PartitionIndex = a->items[j].partition;
            ps[np].CommittedOffset = a->items[j].offset;
            ps[np].CommittedLeaderEpoch = -1;
            ps[np].CommitTimestamp = -1;
            ps[np].CommittedMetadata = kp_str_c("");
            np++;
            ts[nt].Partitions.count++;
        }
        nt++;
    }
    struct kp_OffsetCommitRequest req;
    kp_OffsetCommitRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.GenerationId = -1;
    req.MemberId = kp_str_c("");
    req.GroupInstanceId = KP_STR_NULL;
    req.RetentionTimeMs = -1;
    req.Topics.items = ts;
    req.Topics.count = nt;
    int err = sc_conn_send(c, coord, KP_API_OFFSET_COMMIT, ver, &req, on_commit, op);
    kp_arena_reset(&c->arena);
    op->sent = err == SAMSA_OK;
    return INT64_MAX;
}

static void on_committed(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                         void *vctx)
{
    (void)conn;
    struct sc_op *op = vctx;
    struct sc_commit_arg *a = op->arg;
    op->sent = false;
    int res = err;
    for (int i = 0; i < a->count && err == 0; i++) {
        int perr = 0;
        a->items[i].offset = committed_in(body, a->items[i].topic, a->items[i].partition, &perr);
        if (perr != 0 && res == 0) {
            res = perr;
        }
        if (a->items[i].offset < 0) {
            a->items[i].offset = -1001;
        }
    }
    if (coordinator_error(res) && sc_now_ms() < op->deadline) {
        lose_coordinator(c);
        op->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        return;
    }
    sc_op_finish(c, op, res);
}

int64_t sc_op_committed_serve(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_commit_arg *a = op->arg;
    struct sc_conn *coord = sc_group_coordinator(c);
    if (coord == NULL) {
        return now + 20;
    }
    char **topics = kp_calloc((size_t)(a->count > 0 ? a->count : 1), sizeof(*topics));
    int32_t *parts = kp_calloc((size_t)(a->count > 0 ? a->count : 1), sizeof(*parts));
    if (topics == NULL || parts == NULL) {
        kp_free(topics);
        kp_free(parts);
        sc_op_finish(c, op, SAMSA_ERR_NOMEM);
        return INT64_MAX;
    }
    for (int i = 0; i < a->count; i++) {
        topics[i] = a->items[i].topic;
        parts[i] = a->items[i].partition;
    }
    int err = send_offset_fetch(c, coord, topics, parts, a->count, on_committed, op);
    kp_free(topics);
    kp_free(parts);
    if (err == SAMSA_ERR_UNSUPPORTED || err == SAMSA_ERR_NOMEM) {
        sc_op_finish(c, op, err);
        return INT64_MAX;
    }
    op->sent = err == SAMSA_OK;
    return INT64_MAX;
}

/* A commit op of the given offsets, or of every partition's position
 * (offsets NULL; only partitions that moved since their last commit when
 * `changed_only`). Lock held. */
static struct sc_op *commit_op(struct sc_client *c, const struct samsa_partition *offsets,
                               size_t count, bool changed_only)
{
    struct sc_commit_arg *a = kp_calloc(1, sizeof(*a));
    size_t n = offsets != NULL ? count : (size_t)c->cpart_count;
    if (a == NULL) {
        return NULL;
    }
    a->items = kp_calloc(n > 0 ? n : 1, sizeof(*a->items));
    if (a->items == NULL) {
        kp_free(a);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *topic;
        int32_t partition;
        int64_t off;
        if (offsets != NULL) {
            topic = offsets[i].topic;
            partition = offsets[i].partition;
            off = offsets[i].offset;
        } else {
            const struct sc_cpart *p = c->cparts[i];
            topic = p->topic;
            partition = p->partition;
            off = p->app_offset;
            if (off < 0 || (changed_only && off == p->committed)) {
                continue;
            }
        }
        a->items[a->count].topic = sc_strdup(topic);
        if (a->items[a->count].topic == NULL) {
            sc_op_commit_arg_free(a);
            return NULL;
        }
        a->items[a->count].partition = partition;
        a->items[a->count].offset = off;
        a->count++;
    }
    struct sc_op *op = sc_op_new(SC_OP_COMMIT, a);
    if (op == NULL) {
        sc_op_commit_arg_free(a);
    }
    return op;
}

/* Queues op for the I/O thread without waiting (lock held). */
static void submit(struct sc_client *c, struct sc_op *op, int timeout_ms)
{
    op->abandoned = true;
    op->deadline = sc_now_ms() + timeout_ms;
    if (c->ops_tail != NULL) {
        c->ops_tail->next = op;
    } else {
        c->ops = op;
    }
    c->ops_tail = op;
}

int samsa_consumer_commit(samsa_consumer *sc, const struct samsa_partition *offsets, size_t count,
                          bool async, int timeout_ms)
{
    if (sc == NULL || (offsets == NULL && count > 0)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    if (c->v->group_id[0] == '\0') {
        return SAMSA_ERR_STATE;
    }
    for (size_t i = 0; offsets != NULL && i < count; i++) {
        if (offsets[i].topic == NULL || offsets[i].partition < 0 || offsets[i].offset < 0) {
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    pthread_mutex_lock(&c->lock);
    struct sc_op *op = commit_op(c, offsets, count, false);
    if (op != NULL && async) {
        submit(c, op, c->v->request_timeout_ms);
    }
    pthread_mutex_unlock(&c->lock);
    if (op == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    sc_wake(c);
    if (async) {
        return SAMSA_OK;
    }
    int err = sc_op_run(c, &op, timeout_ms, NULL, 0);
    sc_op_free(op);
    return err;
}

int samsa_consumer_committed(samsa_consumer *sc, struct samsa_partition *parts, size_t count,
                             int timeout_ms)
{
    if (sc == NULL || parts == NULL || count == 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    if (c->v->group_id[0] == '\0') {
        return SAMSA_ERR_STATE;
    }
    pthread_mutex_lock(&c->lock);
    struct sc_op *op = commit_op(c, parts, count, false);
    pthread_mutex_unlock(&c->lock);
    if (op == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    op->kind = SC_OP_COMMITTED;
    int err = sc_op_run(c, &op, timeout_ms, NULL, 0);
    if (op != NULL) {
        struct sc_commit_arg *a = op->arg;
        for (size_t i = 0; err == SAMSA_OK && i < count && (int)i < a->count; i++) {
            parts[i].offset = a->items[i].offset;
        }
        sc_op_free(op);
    }
    return err;
}

int samsa_consumer_subscribe(samsa_consumer *sc, const char *const *topics, size_t count)
{
    (void)topics;
    (void)count;
    if (sc == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    return SAMSA_ERR_NOT_IMPLEMENTED;
}

int64_t sc_group_serve(struct sc_client *c, int64_t now)
{
    if (c->v->group_id[0] == '\0') {
        return INT64_MAX;
    }
    struct sc_group *g = group(c);
    if (g == NULL) {
        return now + 100;
    }
    int64_t next = INT64_MAX;
    bool need_stored = false;
    for (int i = 0; i < c->cpart_count; i++) {
        need_stored = need_stored ||
                      (c->cparts[i]->state == SC_CP_NEED_OFFSET &&
                       c->cparts[i]->reset == SAMSA_OFFSET_STORED);
    }
    if (need_stored) {
        struct sc_conn *coord = sc_group_coordinator(c);
        if (coord != NULL) {
            fetch_stored(c, coord);
        } else {
            next = now + 50;
        }
    }
    if (c->v->enable_auto_commit && c->v->auto_commit_interval_ms > 0) {
        if (now >= g->next_auto_commit) {
            g->next_auto_commit = now + c->v->auto_commit_interval_ms;
            bool moved = false;
            for (int i = 0; i < c->cpart_count; i++) {
                moved = moved || (c->cparts[i]->app_offset >= 0 &&
                                  c->cparts[i]->app_offset != c->cparts[i]->committed);
            }
            if (moved) {
                struct sc_op *op = commit_op(c, NULL, 0, true);
                if (op != NULL) {
                    submit(c, op, c->v->request_timeout_ms);
                }
            }
        }
        next = sc_min64(next, g->next_auto_commit);
    }
    return next;
}

void sc_group_close(struct sc_client *c)
{
    if (c->v->group_id[0] == '\0' || !c->v->enable_auto_commit) {
        return;
    }
    pthread_mutex_lock(&c->lock);
    struct sc_op *op = commit_op(c, NULL, 0, true);
    pthread_mutex_unlock(&c->lock);
    if (op == NULL) {
        return;
    }
    int err = sc_op_run(c, &op, c->v->request_timeout_ms, NULL, 0);
    (void)err; /* best effort at close, as Java's close() */
    sc_op_free(op);
}
