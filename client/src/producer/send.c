/*
 * The producer's sending (its turn of the I/O loop, sc_producer_serve): the
 * producer id (InitProducerId) for idempotence, records expired after
 * message.timeout.ms, batches cut (accum.c) for each leader and written as
 * one ProduceRequest straight into the connection's buffer (RecordBatch v2
 * built in place, encoded at send time so that a retry after a new producer
 * id carries the new id and sequence), and each answer turned into delivery
 * reports, retries or a new producer id.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "producer/producer.h"

/* A ProduceRequest carries at most this many bytes of batches. */
#define MAX_REQUEST_BYTES ((size_t)64 * 1024 * 1024)
#define MAX_REQUEST_PARTS 1024

struct produce_item {
    struct sc_ptopic *topic;
    int32_t partition;
    struct sc_batch *batch;
};

struct produce_ctx {
    int16_t acks;
    int count;
    struct produce_item items[];
};

static bool retriable(int err)
{
    switch (err) {
    case SAMSA_ERR_TRANSPORT:
    case SAMSA_ERR_TIMED_OUT:
    case SAMSA_ERR_BAD_RESPONSE:
    case KP_ERR_UNKNOWN_TOPIC_OR_PARTITION:
    case KP_ERR_LEADER_NOT_AVAILABLE:
    case KP_ERR_NOT_LEADER_OR_FOLLOWER:
    case KP_ERR_REQUEST_TIMED_OUT:
    case KP_ERR_NETWORK_EXCEPTION:
    case KP_ERR_NOT_ENOUGH_REPLICAS:
    case KP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case KP_ERR_KAFKA_STORAGE_ERROR:
    case KP_ERR_CORRUPT_MESSAGE:
    case KP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
        return true;
    default:
        return false;
    }
}

/* log_append_ms: the broker's LogAppendTime of the batch (the topic's
 * message.timestamp.type), -1 when the records keep their CreateTime. */
static void batch_done(struct sc_client *c, struct sc_ppart *pp, struct sc_batch *b, int err,
                       int64_t base_offset, int64_t log_append_ms)
{
    sc_ppart_batch_done(pp);
    struct sc_msg *first = b->msgs.head;
    if (first != NULL) {
        /* one run: the records themselves are next touched by the user's poll */
        first->err = sc_err_public(err);
        first->offset = err == SAMSA_OK && base_offset >= 0 ? base_offset : -1;
        /* librdkafka's rd_kafka_msg_status: a broker's own error says it did
         * not write them, a local one after sending (no answer) says nothing */
        first->status = err == SAMSA_OK && c->v->acks != 0 ? SAMSA_MSG_PERSISTED
                        : b->sent && (b->possibly || err <= 0) ? SAMSA_MSG_POSSIBLY_PERSISTED
                                                              : SAMSA_MSG_NOT_PERSISTED;
        if (err == SAMSA_OK && log_append_ms >= 0) {
            /* the run's time, read for each of its records (producer.c) */
            first->timestamp = log_append_ms;
            first->status |= SC_MSG_LOG_APPEND_TIME;
        }
        first->run = b->msgs.count;
        sc_msgq_concat(&c->dr, &b->msgs);
    }
    sc_batch_free(b);
    pthread_cond_broadcast(&c->ev_cond);
}

static void batch_result(struct sc_client *c, struct produce_item *it, int err, int64_t base,
                         int64_t log_append_ms)
{
    struct sc_ppart *pp = &it->topic->parts[it->partition];
    struct sc_batch *b = it->batch;
    int64_t now = sc_now_ms();
    if (err == SAMSA_OK || err == KP_ERR_DUPLICATE_SEQUENCE_NUMBER) {
        /* A duplicate was written before: the records are in the log,
         * the broker did not say where. */
        batch_done(c, pp, b, SAMSA_OK, err == SAMSA_OK ? base : -1,
                   err == SAMSA_OK ? log_append_ms : -1);
        return;
    }
    if (err == SAMSA_ERR_DESTROYED || err == SAMSA_ERR_PURGED) {
        /* closed or purged in flight: its sequence numbers may be taken */
        c->pid_reset = c->pid_reset || (c->rules.idempotent && err == SAMSA_ERR_PURGED);
        batch_done(c, pp, b, SAMSA_ERR_PURGED, -1, -1);
        return;
    }
    b->possibly = b->possibly || err < 0; /* no answer from the broker */
    bool idem = c->rules.idempotent;
    if (idem && (err == KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER || err == KP_ERR_UNKNOWN_PRODUCER_ID)) {
        /* Behind an earlier batch being retried, a gap is expected: retry
         * in order. On the partition's oldest batch the broker lost our
         * state: a new producer id, numbered again from 0. */
        bool earlier = pp->retry != NULL;
        if (!earlier) {
            c->pid_reset = true;
            sc_log(c, "%s [%d]: %s, asking for a new producer id", it->topic->name,
                   it->partition, kp_err_name(err));
        }
        sc_ppart_batch_retry(pp, b, now, c->v->retry_backoff_ms);
        return;
    }
    if (retriable(err) && b->attempts <= c->v->retries) {
        if (err != SAMSA_ERR_TIMED_OUT) {
            sc_metadata_want(c);
        }
        sc_ppart_batch_retry(pp, b, now, c->v->retry_backoff_ms);
        return;
    }
    if (idem && b->sent) {
        /* The sequence now has a hole: start over with a new id. */
        c->pid_reset = true;
    }
    batch_done(c, pp, b, err, -1, -1);
}

static void on_produce(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *vctx)
{
    struct produce_ctx *ctx = vctx;
    if (conn->produce_inflight > 0) {
        conn->produce_inflight--;
    }
    const struct kp_ProduceResponse *r = body;
    for (int i = 0; i < ctx->count; i++) {
        struct produce_item *it = &ctx->items[i];
        int perr = err != 0 ? err : SAMSA_ERR_BAD_RESPONSE;
        int64_t base = -1;
        int64_t log_append = -1;
        if (err == 0) {
            for (int32_t ti = 0; ti < r->Responses.count; ti++) {
                const struct kp_ProduceResponse_TopicProduceResponse *tr = &r->Responses.items[ti];
                if (!kp_str_eq_c(tr->Name, it->topic->name)) {
                    continue;
                }
                for (int32_t pi = 0; pi < tr->PartitionResponses.count; pi++) {
                    const struct kp_ProduceResponse_PartitionProduceResponse *pr =
                        &tr->PartitionResponses.items[pi];
                    if (pr->Index == it->partition) {
                        perr = sc_err_from_wire(pr->ErrorCode);
                        base = pr->BaseOffset;
                        log_append = pr->LogAppendTimeMs;
                    }
                }
            }
        }
        batch_result(c, it, perr, base, log_append);
    }
    kp_free(ctx);
}

/* Buffers above this are not kept for the next request. */
#define ENC_KEEP_MAX ((size_t)8 * 1024 * 1024)

/* Encodes b as one RecordBatch v2 onto out, built in place (out is left
 * as it was on failure). */
static int encode_batch(struct sc_client *c, const struct sc_batch *b, struct kp_writer *out)
{
    size_t before = out->len;
    struct kp_batch_builder bb;
    const struct sc_msg *first = b->msgs.head;
    size_t cap = 61 + b->msgs.bytes * 2 + (size_t)b->msgs.count * 64 + 4096;
    int err = kp_batch_builder_init(&bb, c->v->compression, 0, first->timestamp,
                                    c->rules.idempotent ? c->pid : -1,
                                    c->rules.idempotent ? c->pid_epoch : -1, b->base_seq, cap);
    if (err != 0) {
        kp_batch_builder_free(&bb);
        return err;
    }
    if (c->txn != NULL) {
        bb.Attributes |= KP_BATCH_ATTR_TRANSACTIONAL;
    }
    /* The builder writes its records into the client's kept buffer (same
     * ceiling as its own) rather than growing a new one for every batch. */
    size_t max = bb.records.max;
    kp_wr_free(&bb.records);
    bb.records = c->enc_records;
    kp_wr_reset(&bb.records);
    bb.records.max = max;
    err = kp_batch_builder_write_into(&bb, out);
    struct kp_record_header hdrs[64];
    for (const struct sc_msg *m = b->msgs.head; m != NULL && err == 0; m = m->next) {
        struct kp_bytes key = m->key_len >= 0 ? (struct kp_bytes){sc_msg_key(m), m->key_len}
                                              : KP_BYTES_NULL;
        struct kp_bytes value = m->value_len >= 0 ? (struct kp_bytes){sc_msg_value(m), m->value_len}
                                                  : KP_BYTES_NULL;
        struct kp_record_header *hv = hdrs;
        if (m->header_count > 64) {
            hv = kp_calloc(m->header_count, sizeof(*hv));
            if (hv == NULL) {
                err = KP_E_NOMEM;
                break;
            }
        }
        const uint8_t *hp = sc_msg_headers(m);
        for (uint32_t i = 0; i < m->header_count; i++) {
            uint32_t nl;
            int32_t vl;
            memcpy(&nl, hp, 4);
            hv[i].Key = (struct kp_str){(const char *)hp + 4, (int32_t)nl};
            hp += 4 + nl;
            memcpy(&vl, hp, 4);
            hp += 4;
            hv[i].Value = vl >= 0 ? (struct kp_bytes){hp, vl} : KP_BYTES_NULL;
            hp += vl > 0 ? vl : 0;
        }
        err = kp_batch_builder_add(&bb, KP_OFFSET_DELTA_AUTO, m->timestamp, key, value, hv,
                                   m->header_count);
        if (hv != hdrs) {
            kp_free(hv);
        }
    }
    if (err == 0) {
        err = kp_batch_builder_finish(&bb, out);
    }
    if (err != 0) {
        out->len = before;
        out->err = 0;
    }
    c->enc_records = bb.records; /* taken back, to be kept or freed */
    kp_wr_init(&bb.records, 0);
    kp_batch_builder_free(&bb);
    if (c->enc_records.cap > ENC_KEEP_MAX) {
        kp_wr_free(&c->enc_records);
    }
    kp_wr_reset(&c->enc_records);
    return err;
}

static void on_init_pid(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *ctx)
{
    (void)conn;
    (void)ctx;
    c->pid_inflight = false;
    if (err != 0) {
        return;
    }
    const struct kp_InitProducerIdResponse *r = body;
    if (r->ErrorCode != 0) {
        int e = sc_err_from_wire(r->ErrorCode);
        if (e == KP_ERR_CLUSTER_AUTHORIZATION_FAILED) {
            c->fatal = true;
            snprintf(c->fatal_reason, sizeof(c->fatal_reason), "InitProducerId: %s",
                     samsa_err_str(e));
            sc_post_error(c, SAMSA_ERR_FATAL, "%s", c->fatal_reason);
        }
        return;
    }
    sc_producer_id_set(c, r->ProducerId, r->ProducerEpoch);
}

static bool any_inflight(const struct sc_client *c)
{
    for (const struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        for (int32_t i = 0; i < t->partition_count; i++) {
            if (t->parts[i].inflight > 0) {
                return true;
            }
        }
    }
    return false;
}

/* The producer id: returns true when produce may go on. */
static bool producer_id_ready(struct sc_client *c, int64_t now, int64_t *next)
{
    if (!c->rules.idempotent) {
        return true;
    }
    if (c->pid >= 0 && !c->pid_reset) {
        return true;
    }
    if (c->v->transactional_id[0] != '\0') {
        /* the id comes from init_transactions, and again after an abort
         * (txn.c): a lost sequence fails the open transaction (the conf
         * says so from the start: c->txn is set just after the thread) */
        if (c->pid >= 0) {
            sc_txn_fail(c, SAMSA_ERR_MSG_TIMED_OUT, false,
                        "a record sent in the transaction was lost: abort it");
        }
        return false;
    }
    if (c->pid_inflight || (c->pid_reset && any_inflight(c))) {
        return false;
    }
    struct sc_conn *conn = sc_conn_any_up(c);
    if (conn == NULL) {
        *next = sc_min64(*next, now + 50);
        return false;
    }
    int16_t ver = sc_conn_version(conn, KP_API_INIT_PRODUCER_ID, 0, 1);
    if (ver < 0) {
        c->fatal = true;
        snprintf(c->fatal_reason, sizeof(c->fatal_reason),
                 "enable.idempotence=true but the broker has no InitProducerId");
        sc_post_error(c, SAMSA_ERR_FATAL, "%s", c->fatal_reason);
        return false;
    }
    struct kp_InitProducerIdRequest req;
    kp_InitProducerIdRequest_init(&req);
    req.TransactionalId = KP_STR_NULL;
    req.TransactionTimeoutMs = -1;
    if (sc_conn_send(c, conn, KP_API_INIT_PRODUCER_ID, ver, &req, on_init_pid, NULL) == 0) {
        c->pid_inflight = true;
    }
    return false;
}

static void expire(struct sc_client *c, int64_t now)
{
    /* after sc_auth_failed no broker will take them: each fails at once
     * with that error rather than at message.timeout.ms */
    int timeout = c->auth_err != 0 ? 0 : c->v->message_timeout_ms;
    for (struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        struct sc_msgq expired = {0};
        while (t->unassigned.head != NULL && now - t->unassigned.head->enq_ms >= timeout) {
            sc_msgq_push(&expired, sc_msgq_pop(&t->unassigned));
        }
        for (int32_t i = 0; i < t->partition_count; i++) {
            if (sc_ppart_expire(&t->parts[i], now, timeout, &expired) && c->rules.idempotent) {
                c->pid_reset = true;
            }
        }
        if (expired.head != NULL) {
            sc_msgq_report_all(c, &expired,
                               c->auth_err != 0 ? c->auth_err : SAMSA_ERR_MSG_TIMED_OUT);
        }
    }
}

/* Produce requests wait while this much of what was queued on a connection
 * is still to be written to its socket: the records wait in their queues
 * (and batch better) rather than in a second copy. */
#define OUT_BACKLOG_MAX ((size_t)4 * 1024 * 1024)

/* Writes the ProduceRequest of items[0..n) as one frame at the end of out
 * (v3-v7, none of them flexible: the fields of the protocol's schema, in
 * its order), each batch built in its place. A batch that cannot be built
 * is left out (encode_err[i] says why), and a topic left with none; kept[i]
 * says which made it. Returns the number of batches in the frame; with 0
 * out is as it was. */
static int write_produce(struct sc_client *c, struct kp_writer *out, int16_t ver,
                         const struct produce_item *items, int n, int *encode_err, bool *kept)
{
    for (int i = 0; i < n; i++) {
        kept[i] = false;
        encode_err[i] = KP_E_TOO_LARGE; /* not reached: the frame is full */
    }
    size_t start = out->len;
    struct kp_request_header h = {
        .RequestApiKey = KP_API_PRODUCE,
        .RequestApiVersion = ver,
        .CorrelationId = c->next_corr,
        .ClientId = kp_str_c(c->v->client_id),
    };
    kp_wr_i32(out, 0); /* the frame's size, set at the end */
    kp_request_header_encode(out, kp_request_header_version(KP_API_PRODUCE, ver), &h);
    kp_wr_string(out, c->txn != NULL ? kp_str_c(c->v->transactional_id) : KP_STR_NULL);
    kp_wr_i16(out, (int16_t)c->v->acks);
    kp_wr_i32(out, c->v->request_timeout_ms);
    size_t topics_at = out->len;
    kp_wr_i32(out, 0);
    int32_t topics = 0;
    int in_frame = 0;
    for (int i = 0; i < n && out->err == 0;) {
        const struct sc_ptopic *t = items[i].topic;
        size_t topic_start = out->len;
        kp_wr_string(out, kp_str_c(t->name));
        size_t parts_at = out->len;
        kp_wr_i32(out, 0);
        int32_t parts = 0;
        for (; i < n && items[i].topic == t && out->err == 0; i++) {
            size_t part_start = out->len;
            kp_wr_i32(out, items[i].partition);
            size_t len_at = out->len;
            kp_wr_i32(out, 0); /* Records' length */
            kept[i] = false;
            encode_err[i] = out->err != 0 ? out->err : encode_batch(c, items[i].batch, out);
            if (encode_err[i] == 0 && out->len - len_at - 4 > (size_t)INT32_MAX) {
                encode_err[i] = KP_E_TOO_LARGE;
            }
            if (encode_err[i] != 0) {
                if (out->err == 0 || encode_err[i] == out->err) {
                    out->len = part_start;
                    out->err = 0;
                }
                continue;
            }
            kp_wr_patch_i32(out, len_at, (int32_t)(out->len - len_at - 4));
            kept[i] = true;
            parts++;
        }
        if (parts == 0) {
            out->len = topic_start;
            continue;
        }
        kp_wr_patch_i32(out, parts_at, parts);
        topics++;
        in_frame += parts;
    }
    size_t frame = out->len - start - 4;
    if (out->err != 0 || in_frame == 0 || frame > (size_t)INT32_MAX) {
        for (int i = 0; i < n; i++) {
            if (kept[i]) {
                kept[i] = false;
                encode_err[i] = out->err == KP_E_NOMEM ? KP_E_NOMEM : KP_E_TOO_LARGE;
            }
        }
        out->len = start;
        out->err = 0;
        return 0;
    }
    kp_wr_patch_i32(out, topics_at, topics);
    kp_wr_patch_i32(out, start, (int32_t)frame);
    return in_frame;
}

/* Sends one ProduceRequest to conn with the ready batches of the
 * partitions it leads. */
static void produce_to(struct sc_client *c, struct sc_conn *conn, int64_t now, int64_t *next)
{
    int16_t ver = sc_conn_version(conn, KP_API_PRODUCE, 3, 7);
    if (ver < 0 || sc_conn_unsent(conn) >= OUT_BACKLOG_MAX) {
        return; /* a backlog: the socket's progress wakes the I/O thread */
    }
    struct kp_writer *out = sc_conn_out(conn);
    if (out == NULL) {
        return;
    }
    struct produce_item items[MAX_REQUEST_PARTS];
    int n = 0;
    size_t total = 0;
    bool flushing = c->flushing > 0;
    for (struct sc_ptopic *t = c->ptopics; t != NULL && n < MAX_REQUEST_PARTS; t = t->next) {
        for (int32_t i = 0; i < t->partition_count && n < MAX_REQUEST_PARTS; i++) {
            struct sc_ppart *pp = &t->parts[i];
            if (pp->leader != conn->node_id || total >= MAX_REQUEST_BYTES ||
                !sc_txn_may_send(c, pp)) {
                continue;
            }
            if (!sc_ppart_ready(pp, &c->rules, now, flushing, next)) {
                continue;
            }
            struct sc_batch *b = sc_ppart_next_batch(pp, &c->rules, now);
            if (b == NULL) {
                continue;
            }
            items[n].topic = t;
            items[n].partition = i;
            items[n].batch = b;
            total += b->msgs.bytes;
            n++;
        }
    }
    if (n == 0) {
        return;
    }
    /*
     * Encoding (and compressing) is the costly part: it runs without the lock
     * so that samsa_produce is not held up meanwhile. What it reads stays put:
     * a cut batch and its records belong to the I/O thread alone, as do the
     * connection's buffer, and the configuration and producer id change only
     * on this thread. The batches are built in the request, in its buffer.
     */
    int encode_err[MAX_REQUEST_PARTS];
    bool kept[MAX_REQUEST_PARTS];
    if (!c->detached) {
        pthread_mutex_unlock(&c->lock);
    }
    size_t start = out->len;
    int in_frame = write_produce(c, out, ver, items, n, encode_err, kept);
    if (!c->detached) {
        pthread_mutex_lock(&c->lock);
    }
    int m = 0; /* the encoded ones move to the front: items[0..m) */
    for (int i = 0; i < n; i++) {
        if (!kept[i]) {
            sc_log(c, "%s [%d]: cannot encode a batch: %s", items[i].topic->name,
                   items[i].partition, kp_err_name(encode_err[i]));
            batch_result(c, &items[i],
                         encode_err[i] == KP_E_NOMEM ? SAMSA_ERR_NOMEM : SAMSA_ERR_MSG_TOO_LARGE, -1,
                         -1);
            continue;
        }
        items[i].batch->attempts++;
        items[i].batch->sent = true;
        items[m++] = items[i];
    }
    if (in_frame == 0) {
        return;
    }
    n = m;
    int16_t acks = (int16_t)c->v->acks;
    int err = SAMSA_ERR_NOMEM;
    if (acks != 0) {
        struct produce_ctx *ctx = kp_malloc(sizeof(*ctx) + (size_t)n * sizeof(ctx->items[0]));
        if (ctx != NULL) {
            ctx->acks = acks;
            ctx->count = n;
            memcpy(ctx->items, items, (size_t)n * sizeof(items[0]));
            err = sc_conn_send_written(c, conn, KP_API_PRODUCE, ver, start, on_produce, ctx);
            if (err == SAMSA_OK) {
                conn->produce_inflight++;
            } else {
                kp_free(ctx);
            }
        }
    } else {
        err = sc_conn_send_written(c, conn, KP_API_PRODUCE, ver, start, NULL, NULL);
    }
    if (err != SAMSA_OK) {
        out->len = start; /* the frame goes nowhere */
    }
    for (int i = 0; i < n; i++) {
        if (err != SAMSA_OK) {
            batch_result(c, &items[i], SAMSA_ERR_TRANSPORT, -1, -1);
        } else if (acks == 0) {
            /* acks=0: written to the socket is all anyone will know. */
            batch_done(c, &items[i].topic->parts[items[i].partition], items[i].batch, SAMSA_OK,
                       -1, -1);
        }
    }
}

/* samsa_producer_purge_flags(SAMSA_PURGE_INFLIGHT), on the I/O thread, which
 * owns the connections: what waits for a retry, then what is on the wire
 * (the connections carrying Produce requests are closed, their requests
 * failed with SAMSA_ERR_PURGED through on_produce). */
static void purge_inflight(struct sc_client *c)
{
    bool sent = false;
    for (struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        for (int32_t i = 0; i < t->partition_count; i++) {
            struct sc_ppart *pp = &t->parts[i];
            while (pp->retry != NULL) {
                struct sc_batch *b = pp->retry;
                pp->retry = b->next;
                sent = true;
                sc_msgq_mark_possibly(&b->msgs);
                sc_msgq_report_all(c, &b->msgs, SAMSA_ERR_PURGED);
                sc_batch_free(b);
            }
        }
    }
    for (struct sc_conn *conn = c->conns; conn != NULL; conn = conn->next) {
        if (conn->produce_inflight > 0) {
            sc_conn_close(c, conn, SAMSA_ERR_PURGED, "in-flight records purged");
        }
    }
    c->pid_reset = c->pid_reset || (sent && c->rules.idempotent);
    c->purge_inflight = false;
    pthread_cond_broadcast(&c->ev_cond);
}

/* The producer id's state as librdkafka's statistics name it
 * (rd_kafka_idemp_state_names: RequestPID, WaitPID, Assigned, DrainReset,
 * FatalError), noted with its time when it changes. */
static void note_idemp_state(struct sc_client *c, int64_t now)
{
    const char *s = c->fatal          ? "FatalError"
                    : c->pid_inflight ? "WaitPID"
                    : c->pid_reset    ? "DrainReset"
                    : c->pid >= 0     ? "Assigned"
                                      : "RequestPID";
    if (s != c->idemp_state) {
        c->idemp_state = s;
        c->idemp_state_ms = now;
    }
}

int64_t sc_producer_serve(struct sc_client *c, int64_t now)
{
    int64_t next = INT64_MAX;
    if (c->purge_inflight) {
        purge_inflight(c);
    }
    expire(c, now);
    bool ready = producer_id_ready(c, now, &next);
    if (c->rules.idempotent) {
        note_idemp_state(c, now);
    }
    if (!ready) {
        return next;
    }
    if (c->txn != NULL) {
        next = sc_min64(next, sc_txn_serve(c, now));
    }
    /* Find each leader with something ready, connect to it, send. */
    bool flushing = c->flushing > 0;
    for (struct sc_ptopic *t = c->ptopics; t != NULL; t = t->next) {
        if (t->partition_count == 0 && t->unassigned.head != NULL) {
            c->md_wanted = true;
        }
        for (int32_t i = 0; i < t->partition_count; i++) {
            struct sc_ppart *pp = &t->parts[i];
            if (pp->queue.head == NULL && pp->retry == NULL) {
                continue;
            }
            if (pp->leader < 0) {
                c->md_wanted = true;
                continue;
            }
            if (!sc_txn_may_send(c, pp)) {
                continue; /* until the coordinator added it to the transaction */
            }
            if (!sc_ppart_ready(pp, &c->rules, now, flushing, &next)) {
                continue;
            }
            /* an unreachable leader asks Metadata again */
            struct sc_conn *conn = sc_conn_leader(c, pp->leader);
            if (conn == NULL || conn->produce_inflight >= c->v->max_in_flight) {
                continue;
            }
            produce_to(c, conn, now, &next);
        }
    }
    /* Expiry needs a look now and then even without traffic. */
    if (c->outq_msgs > 0) {
        next = sc_min64(next, now + 100);
    }
    return next;
}

/* ------------------------------------------------------------- the kind */
