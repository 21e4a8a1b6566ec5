/*
 * The group's committed offsets: OffsetFetch for the partitions assigned at
 * SAMSA_OFFSET_STORED, OffsetCommit (samsa_consumer_commit, auto commits,
 * the commit before a rebalance) and samsa_consumer_committed, each an op
 * with its table (sc_commit_op, sc_committed_op).
 */
#include <string.h>

#include "consumer/group.h"

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
    struct sc_group *g = sc_group_get(c);
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
            if (sc_group_coordinator_error(perr)) {
                sc_group_lose_coordinator(c);
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

void sc_group_fetch_stored(struct sc_client *c, struct sc_conn *coord)
{
    struct sc_group *g = sc_group_get(c);
    int n = 0;
    for (int i = 0; i < c->cpart_count; i++) {
        const struct sc_cpart *p = c->cparts[i];
        n += p->state == SC_CP_NEED_OFFSET && p->reset == SAMSA_OFFSET_STORED &&
                     p->retry_at <= sc_now_ms() && !p->revoking
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
            p->retry_at <= sc_now_ms() && !p->revoking) {
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

/* Items of offsets[0..count), or of every position the application has
 * been handed (offsets NULL; only those that moved since their last commit
 * when `changed_only`). Lock held. */
struct sc_commit_arg *sc_group_commit_items(struct sc_client *c,
                                            const struct samsa_partition *offsets, size_t count,
                                            bool changed_only)
{
    struct sc_commit_arg *a = kp_calloc(1, sizeof(*a));
    size_t n = offsets != NULL ? count : (size_t)c->cpart_count;
    if (a == NULL) {
        return NULL;
    }
    a->generation = -1;
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
            off = p->stored; /* librdkafka's stored offset (store_offsets) */
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
    return a;
}

/* Whether a subscribed member may commit now: only inside a generation. */
bool sc_group_in_generation(const struct sc_client *c)
{
    const struct sc_group *g = c->group;
    return !c->subscribed ||
           (g != NULL && g->generation >= 0 && (g->state == G_STABLE || g->state == G_REVOKING));
}

/* An OffsetCommit of a's items onto conn, with the member's generation and
 * id (a subscribed consumer) or -1 and "" (a simple one). */
int sc_group_send_commit(struct sc_client *c, struct sc_conn *conn, struct sc_commit_arg *a,
                         sc_resp_fn *fn, void *ctx)
{
    int16_t ver = sc_conn_version(conn, KP_API_OFFSET_COMMIT, 2, 7);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *ts =
        kp_arena_alloc(&c->arena, sizeof(*ts) * (size_t)(a->count > 0 ? a->count : 1));
    struct kp_OffsetCommitRequest_OffsetCommitRequestPartition *ps =
        kp_arena_alloc(&c->arena, sizeof(*ps) * (size_t)(a->count > 0 ? a->count : 1));
    if (ts == NULL || ps == NULL) {
        kp_arena_reset(&c->arena);
        return SAMSA_ERR_NOMEM;
    }
    int nt = 0;
    int np = 0;
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
    const struct sc_group *g = c->group;
    bool member = c->subscribed && g != NULL;
    struct kp_OffsetCommitRequest req;
    kp_OffsetCommitRequest_init(&req);
    req.GroupId = kp_str_c(c->v->group_id);
    req.GenerationId = member ? g->generation : -1;
    req.MemberId = kp_str_c(member ? sc_group_member_id(g) : "");
    req.GroupInstanceId = member && c->v->group_instance_id[0] != '\0'
                              ? kp_str_c(c->v->group_instance_id)
                              : KP_STR_NULL;
    req.RetentionTimeMs = -1;
    req.Topics.items = ts;
    req.Topics.count = nt;
    a->generation = req.GenerationId;
    int err = sc_conn_send(c, conn, KP_API_OFFSET_COMMIT, ver, &req, fn, ctx);
    kp_arena_reset(&c->arena);
    return err;
}

/* The first error of an OffsetCommit answer (or of its transport). */
static int commit_result(int err, const void *body)
{
    if (err != 0) {
        return err;
    }
    const struct kp_OffsetCommitResponse *r = body;
    for (int32_t i = 0; i < r->Topics.count; i++) {
        for (int32_t j = 0; j < r->Topics.items[i].Partitions.count; j++) {
            int e = sc_err_from_wire(r->Topics.items[i].Partitions.items[j].ErrorCode);
            if (e != 0) {
                return e;
            }
        }
    }
    return SAMSA_OK;
}

/* What a commit's answer says about the membership it was made in. */
static void commit_answered(struct sc_client *c, const struct sc_commit_arg *a, int res)
{
    struct sc_group *g = c->group;
    if (res == SAMSA_OK) {
        for (int i = 0; i < a->count; i++) {
            struct sc_cpart *p = sc_cpart_find(c, a->items[i].topic, a->items[i].partition);
            if (p != NULL) {
                p->committed = a->items[i].offset;
            }
        }
        return;
    }
    if (sc_group_coordinator_error(res)) {
        sc_group_lose_coordinator(c);
        return;
    }
    if (!c->subscribed || g == NULL || a->generation != g->generation || a->generation < 0) {
        return; /* an answer about a generation already left */
    }
    if (res == KP_ERR_UNKNOWN_MEMBER_ID) {
        sc_group_lost(c, g, true, "OffsetCommit: UNKNOWN_MEMBER_ID");
    } else if (res == KP_ERR_ILLEGAL_GENERATION) {
        sc_group_lost(c, g, false, "OffsetCommit: ILLEGAL_GENERATION");
    } else if (res == KP_ERR_REBALANCE_IN_PROGRESS) {
        sc_group_rejoin(c, g, "OffsetCommit: REBALANCE_IN_PROGRESS");
    }
}

void sc_group_on_revoke_commit(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                               void *vctx)
{
    (void)conn;
    struct sc_commit_arg *a = vctx;
    int res = commit_result(err, body);
    struct sc_group *g = c->group;
    if (g != NULL) {
        g->revoke_commit_inflight = false;
    }
    if (res != SAMSA_OK) {
        sc_post_error(c, res, "group %s: commit before rejoining: %s", c->v->group_id,
                      samsa_err_str(res));
    }
    commit_answered(c, a, res);
    sc_op_commit_arg_free(a);
}

static void on_commit(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *vctx)
{
    (void)conn;
    struct sc_op *op = vctx;
    struct sc_commit_arg *a = op->arg;
    op->sent = false;
    int res = commit_result(err, body);
    if (sc_group_coordinator_error(res) && sc_now_ms() < op->deadline) {
        sc_group_lose_coordinator(c);
        op->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        return;
    }
    commit_answered(c, a, res);
    if (res != SAMSA_OK) {
        sc_errf(op->errstr, sizeof(op->errstr), "OffsetCommit for group %s: %s", c->v->group_id,
                samsa_err_str(res));
        if (op->abandoned) {
            sc_post_error(c, res, "%s", op->errstr);
        }
    }
    sc_op_finish(c, op, res);
}

static int64_t serve_commit(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct sc_commit_arg *a = op->arg;
    if (a->count == 0) {
        sc_op_finish(c, op, SAMSA_OK);
        return INT64_MAX;
    }
    if (!sc_group_in_generation(c)) {
        sc_errf(op->errstr, sizeof(op->errstr),
                "OffsetCommit for group %s: not a member of a generation now (rebalancing)",
                c->v->group_id);
        if (op->abandoned) {
            sc_post_error(c, KP_ERR_REBALANCE_IN_PROGRESS, "%s", op->errstr);
        }
        sc_op_finish(c, op, KP_ERR_REBALANCE_IN_PROGRESS);
        return INT64_MAX;
    }
    struct sc_conn *coord = sc_group_coordinator(c);
    if (coord == NULL) {
        return now + 20;
    }
    int err = sc_group_send_commit(c, coord, a, on_commit, op);
    if (err == SAMSA_ERR_UNSUPPORTED || err == SAMSA_ERR_NOMEM) {
        sc_op_finish(c, op, err);
        return INT64_MAX;
    }
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
    if (sc_group_coordinator_error(res) && sc_now_ms() < op->deadline) {
        sc_group_lose_coordinator(c);
        op->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        return;
    }
    sc_op_finish(c, op, res);
}

static int64_t serve_committed(struct sc_client *c, struct sc_op *op, int64_t now)
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

const struct sc_op_ops sc_commit_op = {serve_commit, sc_op_commit_arg_free};
const struct sc_op_ops sc_committed_op = {serve_committed, sc_op_commit_arg_free};

struct sc_op *sc_group_commit_op(struct sc_client *c, const struct samsa_partition *offsets,
                                 size_t count, bool changed_only)
{
    struct sc_commit_arg *a = sc_group_commit_items(c, offsets, count, changed_only);
    if (a == NULL) {
        return NULL;
    }
    struct sc_op *op = sc_op_create(&sc_commit_op, SC_OP_COMMIT, a);
    if (op == NULL) {
        sc_op_commit_arg_free(a);
    }
    return op;
}

/* Queues op for the I/O thread without waiting (lock held). */
void sc_group_submit(struct sc_client *c, struct sc_op *op, int timeout_ms)
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

static int gated_consumer_commit(samsa_consumer *sc, const struct samsa_partition *offsets, size_t count,
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
    struct sc_op *op = sc_group_commit_op(c, offsets, count, false);
    if (op != NULL && async) {
        sc_group_submit(c, op, c->v->request_timeout_ms);
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

static int gated_consumer_store_offsets(samsa_consumer *sc,
                                        const struct samsa_partition *offsets, size_t count)
{
    if (sc == NULL || (offsets == NULL && count > 0) || sc->c->v->enable_auto_offset_store) {
        return SAMSA_ERR_INVALID_ARG;
    }
    for (size_t i = 0; i < count; i++) {
        if (offsets[i].topic == NULL || offsets[i].partition < 0 || offsets[i].offset < 0) {
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    struct sc_client *c = sc->c;
    pthread_mutex_lock(&c->lock);
    int err = SAMSA_OK;
    for (size_t i = 0; i < count && err == SAMSA_OK; i++) {
        err = sc_cpart_find(c, offsets[i].topic, offsets[i].partition) != NULL ? SAMSA_OK
                                                                             : SAMSA_ERR_STATE;
    }
    for (size_t i = 0; i < count && err == SAMSA_OK; i++) {
        struct sc_cpart *p = sc_cpart_find(c, offsets[i].topic, offsets[i].partition);
        if (p != NULL) {
            p->stored = offsets[i].offset;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

int samsa_consumer_store_offsets(samsa_consumer *sc, const struct samsa_partition *offsets,
                                 size_t count)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_store_offsets(sc, offsets, count);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

int samsa_consumer_store_message(samsa_consumer *sc, const samsa_message *msg)
{
    if (msg == NULL || msg->topic == NULL || msg->offset < 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct samsa_partition part = {msg->topic, msg->partition, msg->offset + 1};
    return samsa_consumer_store_offsets(sc, &part, 1);
}

int samsa_consumer_commit(samsa_consumer *sc, const struct samsa_partition *offsets, size_t count,
                          bool async, int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_commit(sc, offsets, count, async, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}

static int gated_consumer_committed(samsa_consumer *sc, struct samsa_partition *parts, size_t count,
                             int timeout_ms)
{
    if (sc == NULL || parts == NULL || count == 0) {
        return SAMSA_ERR_INVALID_ARG;
    }
    struct sc_client *c = sc->c;
    if (c->v->group_id[0] == '\0') {
        return SAMSA_ERR_STATE;
    }
    for (size_t i = 0; i < count; i++) {
        if (parts[i].topic == NULL || parts[i].partition < 0) {
            return SAMSA_ERR_INVALID_ARG;
        }
    }
    pthread_mutex_lock(&c->lock);
    struct sc_op *op = sc_group_commit_op(c, parts, count, false);
    pthread_mutex_unlock(&c->lock);
    if (op == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    op->ops = &sc_committed_op;
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

int samsa_consumer_committed(samsa_consumer *sc, struct samsa_partition *parts, size_t count,
                             int timeout_ms)
{
    if (sc != NULL && !sc_gate_enter(&sc->gate)) {
        return SAMSA_ERR_DESTROYED;
    }
    int ret = gated_consumer_committed(sc, parts, count, timeout_ms);
    if (sc != NULL) {
        sc_gate_leave(&sc->gate);
    }
    return ret;
}
