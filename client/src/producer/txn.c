/*
 * The transactional producer's I/O side (Kafka 2.0's KIP-98; Java's
 * clients/.../producer/internals/TransactionManager.java and librdkafka's
 * rdkafka_txnmgr.c do the same): the transaction coordinator
 * (FindCoordinator key type 1), AddPartitionsToTxn for every partition
 * before its first record of a transaction, and the ops of the calls
 * (txn_api.c runs them): InitProducerId with the transactional id, EndTxn,
 * AddOffsetsToTxn then TxnOffsetCommit to the group's coordinator. What a
 * coordinator's error does (sc_txn_classify) follows librdkafka's
 * handlers for a Kafka 2.0 broker: CONCURRENT_TRANSACTIONS and
 * COORDINATOR_LOAD_IN_PROGRESS are retried, NOT_COORDINATOR and
 * COORDINATOR_NOT_AVAILABLE look for the coordinator again, a fenced epoch
 * or a forgotten producer id is fatal, anything else fails the transaction
 * (abortable).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "producer/producer.h"

/* Kafka 2.7's PRODUCER_FENCED (KIP-588): not sent by a 2.0 broker, which
 * says INVALID_PRODUCER_EPOCH; taken as the same. */
#define KP_ERR_PRODUCER_FENCED_27 90

int sc_txn_classify(int err)
{
    switch (err) {
    case SAMSA_OK:
        return SC_TXN_OK;
    case KP_ERR_CONCURRENT_TRANSACTIONS:
    case KP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case KP_ERR_OPERATION_NOT_ATTEMPTED:
    case KP_ERR_REQUEST_TIMED_OUT:
    case SAMSA_ERR_TIMED_OUT:
        return SC_TXN_RETRY;
    case KP_ERR_NOT_COORDINATOR:
    case KP_ERR_COORDINATOR_NOT_AVAILABLE:
    case SAMSA_ERR_TRANSPORT:
        return SC_TXN_COORD_MOVED;
    case KP_ERR_INVALID_PRODUCER_EPOCH:
    case KP_ERR_PRODUCER_FENCED_27:
    case KP_ERR_INVALID_PRODUCER_ID_MAPPING:
    case KP_ERR_INVALID_TXN_STATE:
    case KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
    case KP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case SAMSA_ERR_FENCED:
    case SAMSA_ERR_FATAL:
        return SC_TXN_FATAL_ERR;
    default:
        return SC_TXN_ABORTABLE_ERR;
    }
}

/* What the application is told of a fatal error: fenced for the epoch
 * errors (librdkafka's ERR__FENCED), the broker's code otherwise. */
static int fatal_code(int err)
{
    return err == KP_ERR_INVALID_PRODUCER_EPOCH || err == KP_ERR_PRODUCER_FENCED_27
               ? SAMSA_ERR_FENCED
               : err;
}

void sc_txn_fail(struct sc_client *c, int err, bool fatal, const char *fmt, ...)
{
    struct sc_txn *t = c->txn;
    if (t == NULL || t->state == SC_TXN_FATAL) {
        return;
    }
    if (!fatal && t->state != SC_TXN_IN_TXN && t->state != SC_TXN_COMMITTING) {
        return; /* aborting already, or no transaction: nothing to fail */
    }
    va_list ap;
    va_start(ap, fmt);
    sc_verrf(t->reason, sizeof(t->reason), fmt, ap);
    va_end(ap);
    t->err = fatal ? fatal_code(err) : err;
    t->state = fatal ? SC_TXN_FATAL : SC_TXN_ABORTABLE;
    sc_log(c, "transaction %s: %s", fatal ? "fatal error" : "must abort", t->reason);
    if (fatal) {
        /* as librdkafka raises a fatal error: samsa_produce refuses from now on */
        c->fatal = true;
        snprintf(c->fatal_reason, sizeof(c->fatal_reason), "%s", t->reason);
        sc_post_error(c, SAMSA_ERR_FATAL, "%s", t->reason);
    }
    pthread_cond_broadcast(&c->ev_cond);
}

void sc_producer_id_set(struct sc_client *c, int64_t pid, int16_t epoch)
{
    c->pid = pid;
    c->pid_epoch = epoch;
    c->pid_reset = false;
    c->pid_assigned++;
    /* Every partition's sequence starts again from 0 under the new id. */
    for (struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        for (int32_t i = 0; i < t->partition_count; i++) {
            sc_ppart_reset_sequence(&t->parts[i]);
        }
    }
    sc_log(c, "producer id %lld epoch %d", (long long)c->pid, c->pid_epoch);
}

/* ------------------------------------------------------ the coordinators */

static int send_find_coordinator(struct sc_client *c, const char *key, int8_t key_type,
                                 sc_resp_fn *fn, void *ctx)
{
    struct sc_conn *any = sc_conn_any_up(c);
    return any != NULL ? sc_send_find_coordinator(c, any, key, key_type, fn, ctx)
                       : SAMSA_ERR_TRANSPORT;
}

/* The coordinator's node from an answer (its address learnt); -1 with
 * *err set when the answer names none. */
static int32_t found_coordinator(struct sc_client *c, int err, const void *body, int *errp)
{
    const struct kp_FindCoordinatorResponse *r = body;
    *errp = err != 0 ? err : sc_err_from_wire(r->ErrorCode);
    if (*errp == SAMSA_OK &&
        (r->Host.len <= 0 || r->Port <= 0 || r->Port > 65535 || r->NodeId < 0)) {
        *errp = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (*errp != SAMSA_OK) {
        return -1;
    }
    sc_broker_learn(c, r->NodeId, r->Host, r->Port);
    if (sc_broker_find(c, r->NodeId) == NULL) {
        *errp = SAMSA_ERR_NOMEM;
        return -1;
    }
    return r->NodeId;
}

static void on_find_txn_coordinator(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                    void *ctx)
{
    (void)conn;
    (void)ctx;
    struct sc_txn *t = c->txn;
    t->coord_inflight = false;
    int e = SAMSA_OK;
    int32_t id = found_coordinator(c, err, body, &e);
    if (id < 0) {
        t->coord_retry_at = sc_now_ms() + c->v->retry_backoff_ms;
        sc_log(c, "FindCoordinator(transaction %s): %s", c->v->transactional_id, kp_err_name(e));
        if (sc_txn_classify(e) == SC_TXN_FATAL_ERR) {
            sc_txn_fail(c, e, true, "FindCoordinator(transaction %s): %s", c->v->transactional_id,
                        samsa_err_str(e));
        }
        return;
    }
    t->coord_id = id;
    sc_log(c, "transaction %s: coordinator is node %d", c->v->transactional_id, id);
}

/* The transaction coordinator's connection when it is up; else NULL, and
 * it is being looked for (or connected to). */
static struct sc_conn *txn_coordinator(struct sc_client *c, int64_t now)
{
    struct sc_txn *t = c->txn;
    if (t->coord_id >= 0) {
        struct sc_conn *conn = sc_conn_get(c, t->coord_id);
        if (conn != NULL && !sc_conn_failed(c, conn)) {
            return sc_conn_is_up(conn) ? conn : NULL;
        }
        t->coord_id = -1; /* died or moved: ask again */
    }
    if (t->coord_inflight || t->coord_retry_at > now) {
        return NULL;
    }
    int err = send_find_coordinator(c, c->v->transactional_id, 1, on_find_txn_coordinator, NULL);
    if (err == SAMSA_ERR_UNSUPPORTED) {
        sc_txn_fail(c, err, true, "the broker has no FindCoordinator v1 (transactions)");
    }
    t->coord_inflight = err == SAMSA_OK;
    return NULL;
}

static void lose_coordinator(struct sc_client *c)
{
    c->txn->coord_id = -1;
    c->txn->coord_retry_at = sc_now_ms() + c->v->retry_backoff_ms;
}

/* ------------------------------------------------------ AddPartitionsToTxn */

struct add_ctx {
    int count;
    struct {
        struct sc_ptopic *topic;
        int32_t partition;
    } items[];
};

static void on_add_partitions(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                              void *vctx)
{
    (void)conn;
    struct add_ctx *ctx = vctx;
    struct sc_txn *t = c->txn;
    const struct kp_AddPartitionsToTxnResponse *r = body;
    t->add_inflight = false;
    int64_t now = sc_now_ms();
    bool retry = false;
    for (int i = 0; i < ctx->count; i++) {
        struct sc_ptopic *tp = ctx->items[i].topic;
        int32_t part = ctx->items[i].partition;
        int e = err != 0 ? err : SAMSA_ERR_BAD_RESPONSE;
        for (int32_t ti = 0; err == 0 && ti < r->Results.count; ti++) {
            if (!kp_str_eq_c(r->Results.items[ti].Name, tp->name)) {
                continue;
            }
            for (int32_t pi = 0; pi < r->Results.items[ti].Results.count; pi++) {
                if (r->Results.items[ti].Results.items[pi].PartitionIndex == part) {
                    e = sc_err_from_wire(r->Results.items[ti].Results.items[pi].ErrorCode);
                }
            }
        }
        struct sc_ppart *pp = &tp->parts[part];
        pp->txn = SC_PPART_TXN_NONE;
        switch (sc_txn_classify(e)) {
        case SC_TXN_OK:
            pp->txn = SC_PPART_TXN_ADDED;
            t->added++;
            break;
        case SC_TXN_COORD_MOVED:
            lose_coordinator(c);
            retry = true;
            break;
        case SC_TXN_RETRY:
            retry = true;
            break;
        case SC_TXN_FATAL_ERR:
            sc_txn_fail(c, e, true, "AddPartitionsToTxn(%s [%d]): %s", tp->name, part,
                        samsa_err_str(e));
            break;
        default:
            sc_txn_fail(c, e, false, "AddPartitionsToTxn(%s [%d]): %s", tp->name, part,
                        samsa_err_str(e));
            break;
        }
    }
    if (retry) {
        t->add_retry_at = now + c->v->retry_backoff_ms;
    }
    kp_free(ctx);
}

/* Whether pp has records of the open transaction waiting for it to be added. */
static bool wants_adding(const struct sc_ppart *pp)
{
    return pp->txn == SC_PPART_TXN_NONE && (pp->queue.head != NULL || pp->retry != NULL);
}

int64_t sc_txn_serve(struct sc_client *c, int64_t now)
{
    struct sc_txn *t = c->txn;
    if ((t->state != SC_TXN_IN_TXN && t->state != SC_TXN_COMMITTING) || t->add_inflight ||
        c->pid < 0) {
        return INT64_MAX;
    }
    if (t->add_retry_at > now) {
        return t->add_retry_at;
    }
    int n = 0, nt = 0;
    for (struct sc_ptopic *tp = c->ptopics; tp != NULL; tp = tp->next) {
        int before = n;
        for (int32_t i = 0; i < tp->partition_count; i++) {
            n += wants_adding(&tp->parts[i]) ? 1 : 0;
        }
        nt += n > before ? 1 : 0;
    }
    if (n == 0) {
        return INT64_MAX;
    }
    struct sc_conn *conn = txn_coordinator(c, now);
    if (conn == NULL) {
        return now + 50;
    }
    int16_t ver = sc_conn_version(conn, KP_API_ADD_PARTITIONS_TO_TXN, 0, 1);
    if (ver < 0) {
        sc_txn_fail(c, SAMSA_ERR_UNSUPPORTED, true,
                    "the broker at %s:%d does not offer AddPartitionsToTxn (API 24)", conn->host,
                    conn->port);
        return INT64_MAX;
    }
    struct add_ctx *ctx = kp_malloc(sizeof(*ctx) + (size_t)n * sizeof(ctx->items[0]));
    struct kp_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic *topics =
        kp_calloc((size_t)nt, sizeof(*topics));
    int32_t *ids = kp_calloc((size_t)n, sizeof(*ids));
    if (ctx == NULL || topics == NULL || ids == NULL) {
        kp_free(ctx);
        kp_free(topics);
        kp_free(ids);
        return now + c->v->retry_backoff_ms;
    }
    ctx->count = 0;
    nt = 0;
    for (struct sc_ptopic *tp = c->ptopics; tp != NULL; tp = tp->next) {
        int first = ctx->count;
        for (int32_t i = 0; i < tp->partition_count; i++) {
            if (wants_adding(&tp->parts[i])) {
                ids[ctx->count] = i;
                ctx->items[ctx->count].topic = tp;
                ctx->items[ctx->count].partition = i;
                ctx->count++;
            }
        }
        if (ctx->count > first) {
            topics[nt].Name = kp_str_c(tp->name);
            topics[nt].Partitions.items = &ids[first];
            topics[nt].Partitions.count = ctx->count - first;
            nt++;
        }
    }
    struct kp_AddPartitionsToTxnRequest req;
    kp_AddPartitionsToTxnRequest_init(&req);
    req.TransactionalId = kp_str_c(c->v->transactional_id);
    req.ProducerId = c->pid;
    req.ProducerEpoch = c->pid_epoch;
    req.Topics.items = topics;
    req.Topics.count = nt;
    int err = sc_conn_send(c, conn, KP_API_ADD_PARTITIONS_TO_TXN, ver, &req, on_add_partitions,
                           ctx);
    kp_free(topics);
    kp_free(ids);
    if (err != SAMSA_OK) {
        kp_free(ctx);
        return now + c->v->retry_backoff_ms;
    }
    t->add_inflight = true;
    for (int i = 0; i < ctx->count; i++) {
        ctx->items[i].topic->parts[ctx->items[i].partition].txn = SC_PPART_TXN_ADDING;
    }
    return INT64_MAX;
}

/* ------------------------------------------------------------- the calls */

struct txn_arg {
    int call;                      /* enum sc_txn_call */
    char *group_id;                /* send_offsets */
    struct samsa_partition *offsets;
    size_t count;
    int32_t group_coord;           /* send_offsets: the group's coordinator, -1 */
};

static void txn_arg_free(void *arg)
{
    struct txn_arg *a = arg;
    if (a != NULL) {
        kp_free(a->group_id);
        samsa_partitions_free(a->offsets, a->count);
        kp_free(a);
    }
}

struct sc_op *sc_txn_op_new(int call, const char *group_id, const struct samsa_partition *offsets,
                            size_t count)
{
    struct txn_arg *a = kp_calloc(1, sizeof(*a));
    if (a == NULL) {
        return NULL;
    }
    a->call = call;
    a->group_coord = -1;
    if (group_id != NULL) {
        a->group_id = sc_strdup(group_id);
        a->offsets = kp_calloc(count > 0 ? count : 1, sizeof(*a->offsets));
        if (a->group_id == NULL || a->offsets == NULL) {
            txn_arg_free(a);
            return NULL;
        }
        for (size_t i = 0; i < count; i++) {
            a->offsets[i] = offsets[i];
            a->offsets[i].topic = sc_strdup(offsets[i].topic);
            a->count = i + 1;
            if (a->offsets[i].topic == NULL) {
                txn_arg_free(a);
                return NULL;
            }
        }
    }
    struct sc_op *op = sc_op_create(&sc_txn_op, SC_OP_TXN, a);
    if (op == NULL) {
        txn_arg_free(a);
    }
    return op;
}

/* A coordinator's answer err to op's request: finished when it is fatal or
 * abortable (the transaction failed with it), retried otherwise. Returns
 * true when op goes on to its next step (err is SAMSA_OK). */
static bool txn_answered(struct sc_client *c, struct sc_op *op, int err, const char *what,
                         bool group)
{
    op->sent = false;
    int cls = sc_txn_classify(err);
    if (cls == SC_TXN_OK) {
        return true;
    }
    struct txn_arg *a = op->arg;
    if (cls == SC_TXN_COORD_MOVED) {
        if (group) {
            a->group_coord = -1;
            op->stage = 1;
        } else {
            lose_coordinator(c);
        }
    }
    if (cls == SC_TXN_RETRY || cls == SC_TXN_COORD_MOVED) {
        sc_log(c, "%s: %s: retried", what, kp_err_name(err));
        (void)sc_op_retry(c, op, err, sc_now_ms());
        return false;
    }
    bool fatal = cls == SC_TXN_FATAL_ERR;
    /* An abort that fails cannot be aborted again: fatal, as librdkafka */
    sc_txn_fail(c, err, fatal || a->call == SC_TXN_CALL_ABORT, "%s: %s", what,
                samsa_err_str(err));
    sc_errf(op->errstr, sizeof(op->errstr), "%s: %s", what, samsa_err_str(err));
    sc_op_finish(c, op, fatal ? fatal_code(err) : err);
    return false;
}

static void on_init_producer_id(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    const struct kp_InitProducerIdResponse *r = body;
    int e = err != 0 ? err : sc_err_from_wire(r->ErrorCode);
    if (!txn_answered(c, op, e, "InitProducerId", false)) {
        return;
    }
    sc_producer_id_set(c, r->ProducerId, r->ProducerEpoch);
    op->stage = 3; /* done */
}

static void on_end_txn(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    const struct kp_EndTxnResponse *r = body;
    int e = err != 0 ? err : sc_err_from_wire(r->ErrorCode);
    if (!txn_answered(c, op, e, "EndTxn", false)) {
        return;
    }
    op->stage = 1; /* the transaction is over: its partitions leave it */
}

static void on_add_offsets(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                           void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    const struct kp_AddOffsetsToTxnResponse *r = body;
    int e = err != 0 ? err : sc_err_from_wire(r->ErrorCode);
    if (!txn_answered(c, op, e, "AddOffsetsToTxn", false)) {
        return;
    }
    c->txn->offsets_added = true;
    op->stage = 1;
}

static void on_find_group_coordinator(struct sc_client *c, struct sc_conn *conn, int err,
                                      void *body, void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    struct txn_arg *a = op->arg;
    int e = SAMSA_OK;
    int32_t id = found_coordinator(c, err, body, &e);
    if (id < 0) {
        op->sent = false;
        (void)sc_op_retry(c, op, e, sc_now_ms());
        return;
    }
    a->group_coord = id;
    op->sent = false;
    op->stage = 2;
}

static void on_txn_offset_commit(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                                 void *ctx)
{
    (void)conn;
    struct sc_op *op = ctx;
    const struct kp_TxnOffsetCommitResponse *r = body;
    int e = err;
    for (int32_t ti = 0; e == SAMSA_OK && ti < r->Topics.count; ti++) {
        for (int32_t pi = 0; e == SAMSA_OK && pi < r->Topics.items[ti].Partitions.count; pi++) {
            e = sc_err_from_wire(r->Topics.items[ti].Partitions.items[pi].ErrorCode);
        }
    }
    if (txn_answered(c, op, e, "TxnOffsetCommit", true)) {
        sc_op_finish(c, op, SAMSA_OK);
    }
}

/* InitProducerId with the transactional id, to the coordinator. */
static int send_init(struct sc_client *c, struct sc_conn *conn, struct sc_op *op)
{
    int16_t ver = sc_conn_version(conn, KP_API_INIT_PRODUCER_ID, 0, 1);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    struct kp_InitProducerIdRequest req;
    kp_InitProducerIdRequest_init(&req);
    req.TransactionalId = kp_str_c(c->v->transactional_id);
    req.TransactionTimeoutMs = c->v->transaction_timeout_ms;
    return sc_conn_send(c, conn, KP_API_INIT_PRODUCER_ID, ver, &req, on_init_producer_id, op);
}

static int send_end(struct sc_client *c, struct sc_conn *conn, struct sc_op *op, bool commit)
{
    int16_t ver = sc_conn_version(conn, KP_API_END_TXN, 0, 1);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    struct kp_EndTxnRequest req;
    kp_EndTxnRequest_init(&req);
    req.TransactionalId = kp_str_c(c->v->transactional_id);
    req.ProducerId = c->pid;
    req.ProducerEpoch = c->pid_epoch;
    req.Committed = commit;
    return sc_conn_send(c, conn, KP_API_END_TXN, ver, &req, on_end_txn, op);
}

static int send_add_offsets(struct sc_client *c, struct sc_conn *conn, struct sc_op *op)
{
    struct txn_arg *a = op->arg;
    int16_t ver = sc_conn_version(conn, KP_API_ADD_OFFSETS_TO_TXN, 0, 1);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    struct kp_AddOffsetsToTxnRequest req;
    kp_AddOffsetsToTxnRequest_init(&req);
    req.TransactionalId = kp_str_c(c->v->transactional_id);
    req.ProducerId = c->pid;
    req.ProducerEpoch = c->pid_epoch;
    req.GroupId = kp_str_c(a->group_id);
    return sc_conn_send(c, conn, KP_API_ADD_OFFSETS_TO_TXN, ver, &req, on_add_offsets, op);
}

static int send_offset_commit(struct sc_client *c, struct sc_conn *conn, struct sc_op *op)
{
    struct txn_arg *a = op->arg;
    int16_t ver = sc_conn_version(conn, KP_API_TXN_OFFSET_COMMIT, 0, 1);
    if (ver < 0) {
        return SAMSA_ERR_UNSUPPORTED;
    }
    size_t n = a->count > 0 ? a->count : 1;
    struct kp_TxnOffsetCommitRequest_TxnOffsetCommitRequestTopic *ts = kp_calloc(n, sizeof(*ts));
    struct kp_TxnOffsetCommitRequest_TxnOffsetCommitRequestPartition *ps =
        kp_calloc(n, sizeof(*ps));
    if (ts == NULL || ps == NULL) {
        kp_free(ts);
        kp_free(ps);
        return SAMSA_ERR_NOMEM;
    }
    int32_t nt = 0;
    size_t np = 0;
    /* grouped by topic, in the order the topics first come */
    for (size_t i = 0; i < a->count; i++) {
        bool seen = false;
        for (int32_t k = 0; k < nt; k++) {
            seen = seen || kp_str_eq_c(ts[k].Name, a->offsets[i].topic);
        }
        if (seen) {
            continue;
        }
        ts[nt].Name = kp_str_c(a->offsets[i].topic);
        ts[nt].Partitions.items = &ps[np];
        for (size_t j = i; j < a->count; j++) {
            if (strcmp(a->offsets[j].topic, a->offsets[i].topic) == 0) {
                ps[np].PartitionIndex = a->offsets[j].partition;
                ps[np].CommittedOffset = a->offsets[j].offset;
                ps[np].CommittedMetadata = kp_str_c("");
                np++;
                ts[nt].Partitions.count++;
            }
        }
        nt++;
    }
    struct kp_TxnOffsetCommitRequest req;
    kp_TxnOffsetCommitRequest_init(&req);
    req.TransactionalId = kp_str_c(c->v->transactional_id);
    req.GroupId = kp_str_c(a->group_id);
    req.ProducerId = c->pid;
    req.ProducerEpoch = c->pid_epoch;
    req.Topics.items = ts;
    req.Topics.count = nt;
    int err = sc_conn_send(c, conn, KP_API_TXN_OFFSET_COMMIT, ver, &req, on_txn_offset_commit, op);
    kp_free(ts);
    kp_free(ps);
    return err;
}

static const char *const api_names[] = {"InitProducerId (API 22)", "EndTxn (API 26)",
                                        "AddOffsetsToTxn (API 25)", "TxnOffsetCommit (API 28)"};

/* A request could not be sent: unsupported (finished, saying so), or
 * tried again after the backoff. */
static int64_t not_sent(struct sc_client *c, struct sc_op *op, int err, int which,
                        const struct sc_conn *conn, int64_t now)
{
    if (err == SAMSA_ERR_UNSUPPORTED) {
        sc_errf(op->errstr, sizeof(op->errstr),
                "UNSUPPORTED: the broker at %s:%d does not offer %s: not supported by the broker",
                conn->host, conn->port, api_names[which]);
        sc_op_finish(c, op, err);
        return INT64_MAX;
    }
    return sc_op_retry(c, op, err, now);
}

/* The transaction is over (committed, aborted, or empty): its partitions
 * leave it. */
static void txn_ended(struct sc_client *c)
{
    struct sc_txn *t = c->txn;
    for (struct sc_ptopic *tp = c->ptopics; tp != NULL; tp = tp->next) {
        for (int32_t i = 0; i < tp->partition_count; i++) {
            tp->parts[i].txn = SC_PPART_TXN_NONE;
        }
    }
    t->added = 0;
    t->offsets_added = false;
    t->err = SAMSA_OK;
    t->reason[0] = '\0';
    t->state = SC_TXN_READY;
}

/*
 * The steps of each call, op->stage:
 *   INIT          0 InitProducerId -> 3 ready
 *   COMMIT, ABORT 0 EndTxn (none when nothing was added) -> 1 the
 *                 transaction over; ABORT after a lost sequence: 2
 *                 InitProducerId again (a new epoch, sequences from 0)
 *                 -> 3
 *   SEND_OFFSETS  0 AddOffsetsToTxn -> 1 FindCoordinator(group) -> 2
 *                 TxnOffsetCommit
 */
static int64_t serve_txn(struct sc_client *c, struct sc_op *op, int64_t now)
{
    struct txn_arg *a = op->arg;
    struct sc_txn *t = c->txn;
    if (t == NULL || t->state == SC_TXN_FATAL) {
        sc_errf(op->errstr, sizeof(op->errstr), "%s",
                t != NULL ? t->reason : "not a transactional producer");
        sc_op_finish(c, op, t != NULL ? t->err : SAMSA_ERR_STATE);
        return INT64_MAX;
    }
    bool end = a->call == SC_TXN_CALL_COMMIT || a->call == SC_TXN_CALL_ABORT;
    if (end && op->stage == 0 && (t->added == 0 && !t->offsets_added)) {
        op->stage = t->add_inflight ? 0 : 1; /* an empty transaction: no EndTxn */
    }
    if (end && op->stage == 1) {
        txn_ended(c);
        op->stage = a->call == SC_TXN_CALL_ABORT && c->pid_reset ? 2 : 3;
    }
    if (op->stage == 3) {
        t->state = t->state == SC_TXN_UNINIT ? SC_TXN_READY : t->state;
        sc_op_finish(c, op, SAMSA_OK);
        return INT64_MAX;
    }
    if (a->call == SC_TXN_CALL_SEND_OFFSETS && op->stage >= 1) {
        if (op->stage == 1) {
            int err = send_find_coordinator(c, a->group_id, 0, on_find_group_coordinator, op);
            op->sent = err == SAMSA_OK;
            return op->sent ? INT64_MAX : sc_op_retry(c, op, err, now);
        }
        struct sc_conn *gconn = sc_conn_get(c, a->group_coord);
        if (gconn == NULL || sc_conn_failed(c, gconn)) {
            op->stage = 1;
            return sc_op_retry(c, op, SAMSA_ERR_TRANSPORT, now);
        }
        if (!sc_conn_is_up(gconn)) {
            return now + 50;
        }
        int err = send_offset_commit(c, gconn, op);
        op->sent = err == SAMSA_OK;
        return op->sent ? INT64_MAX : not_sent(c, op, err, 3, gconn, now);
    }
    if (end && t->add_inflight) {
        return now + 10; /* EndTxn after every AddPartitionsToTxn answer */
    }
    struct sc_conn *conn = txn_coordinator(c, now);
    if (conn == NULL) {
        return now + 50;
    }
    int err;
    int which;
    if (a->call == SC_TXN_CALL_INIT || op->stage == 2) {
        err = send_init(c, conn, op);
        which = 0;
    } else if (end) {
        err = send_end(c, conn, op, a->call == SC_TXN_CALL_COMMIT);
        which = 1;
    } else {
        err = send_add_offsets(c, conn, op);
        which = 2;
    }
    op->sent = err == SAMSA_OK;
    return op->sent ? INT64_MAX : not_sent(c, op, err, which, conn, now);
}

const struct sc_op_ops sc_txn_op = {serve_txn, txn_arg_free};
