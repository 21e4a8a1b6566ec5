/*
 * The consumer's reading: each assigned partition resolved to an offset
 * (ListOffsets for the beginning, the end or a time; auto.offset.reset on
 * OFFSET_OUT_OF_RANGE), then fetched from its leader, one Fetch in flight
 * per leader covering all its partitions (each Fetch starts its partition
 * list one further on, KIP-74's rotation). Fetched records are copied into
 * messages queued for samsa_consumer_poll (assignment.c); control batches
 * never are, nor, under read_committed, the batches of aborted
 * transactions (txn_filter).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/control.h>

#include "consumer/consumer.h"

#define MAX_FETCH_PARTS 1024
#define MAX_DECOMPRESSED ((size_t)256 * 1024 * 1024)

static void apply_reset_policy(struct sc_client *c, struct sc_cpart *p, const char *why)
{
    if (c->v->auto_offset_reset == SC_RESET_ERROR) {
        p->state = SC_CP_STOPPED;
        sc_post_error(c, KP_ERR_OFFSET_OUT_OF_RANGE,
                      "%s [%d]: %s and auto.offset.reset=error: partition stopped", p->topic,
                      p->partition, why);
        return;
    }
    sc_cpart_set_offset(p, c->v->auto_offset_reset == SC_RESET_EARLIEST ? SAMSA_OFFSET_BEGINNING
                                                                      : SAMSA_OFFSET_END);
    sc_log(c, "%s [%d]: %s: reset to %s", p->topic, p->partition, why,
           c->v->auto_offset_reset == SC_RESET_EARLIEST ? "earliest" : "latest");
}

struct lo_ctx {
    int count;
    struct {
        struct sc_cpart *part;
        int epoch;
    } items[];
};

static bool cpart_alive(struct sc_client *c, const struct sc_cpart *p)
{
    for (int i = 0; i < c->cpart_count; i++) {
        if (c->cparts[i] == p) {
            return true;
        }
    }
    return false;
}

static void on_list_offsets(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                            void *vctx)
{
    (void)conn;
    struct lo_ctx *ctx = vctx;
    const struct kp_ListOffsetsResponse *r = body;
    int64_t now = sc_now_ms();
    for (int i = 0; i < ctx->count; i++) {
        struct sc_cpart *p = ctx->items[i].part;
        if (!cpart_alive(c, p) || p->epoch != ctx->items[i].epoch || p->state != SC_CP_QUERYING) {
            continue;
        }
        p->state = SC_CP_NEED_OFFSET;
        if (err != 0) {
            p->retry_at = now + c->v->retry_backoff_ms;
            continue;
        }
        int perr = SAMSA_ERR_BAD_RESPONSE;
        int64_t off = -1;
        for (int32_t ti = 0; ti < r->Topics.count; ti++) {
            if (!kp_str_eq_c(r->Topics.items[ti].Name, p->topic)) {
                continue;
            }
            for (int32_t pi = 0; pi < r->Topics.items[ti].Partitions.count; pi++) {
                const struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse *pr =
                    &r->Topics.items[ti].Partitions.items[pi];
                if (pr->PartitionIndex == p->partition) {
                    perr = sc_err_from_wire(pr->ErrorCode);
                    off = pr->Offset;
                }
            }
        }
        if (perr == SAMSA_OK && off < 0 && p->reset_is_ts) {
            /* No record at or after that time: the end. */
            p->reset = SAMSA_OFFSET_END;
            p->reset_is_ts = false;
            continue;
        }
        if (perr == SAMSA_OK && off >= 0) {
            p->state = SC_CP_ACTIVE;
            p->position = off;
            pthread_cond_broadcast(&c->ev_cond);
            continue;
        }
        p->retry_at = now + c->v->retry_backoff_ms;
        c->md_wanted = true;
    }
    kp_free(ctx);
}

void sc_consumer_list_offsets(struct sc_client *c, struct sc_conn *conn, int64_t now)
{
    int16_t ver = sc_conn_version(conn, KP_API_LIST_OFFSETS, 1, 3);
    if (ver < 0) {
        return;
    }
    struct kp_ListOffsetsRequest_ListOffsetsPartition ps[MAX_FETCH_PARTS];
    struct kp_ListOffsetsRequest_ListOffsetsTopic ts[MAX_FETCH_PARTS];
    struct sc_cpart *parts[MAX_FETCH_PARTS];
    int n = 0;
    int nt = 0;
    /* Partitions grouped by topic: one pass per distinct topic. */
    for (int i = 0; i < c->cpart_count && n < MAX_FETCH_PARTS; i++) {
        struct sc_cpart *p = c->cparts[i];
        if (p->state != SC_CP_NEED_OFFSET || p->leader != conn->node_id || p->retry_at > now ||
            p->reset == SAMSA_OFFSET_STORED || p->revoking) {
            continue;
        }
        bool seen = false;
        for (int t = 0; t < nt; t++) {
            seen = seen || kp_str_eq_c(ts[t].Name, p->topic);
        }
        if (seen) {
            continue;
        }
        ts[nt].Name = kp_str_c(p->topic);
        ts[nt].Partitions.items = &ps[n];
        ts[nt].Partitions.count = 0;
        for (int j = i; j < c->cpart_count && n < MAX_FETCH_PARTS; j++) {
            struct sc_cpart *q = c->cparts[j];
            if (q->state != SC_CP_NEED_OFFSET || q->leader != conn->node_id || q->retry_at > now ||
                q->reset == SAMSA_OFFSET_STORED || q->revoking || strcmp(q->topic, p->topic) != 0) {
                continue;
            }
            memset(&ps[n], 0, sizeof(ps[n]));
            ps[n].PartitionIndex = q->partition;
            ps[n].Timestamp = q->reset_is_ts ? q->reset
                                             : (q->reset == SAMSA_OFFSET_BEGINNING ? -2 : -1);
            ps[n].MaxNumOffsets = 1;
            parts[n] = q;
            ts[nt].Partitions.count++;
            n++;
        }
        nt++;
    }
    if (n == 0) {
        return;
    }
    struct lo_ctx *ctx = kp_malloc(sizeof(*ctx) + (size_t)n * sizeof(ctx->items[0]));
    if (ctx == NULL) {
        return;
    }
    ctx->count = n;
    for (int i = 0; i < n; i++) {
        ctx->items[i].part = parts[i];
        ctx->items[i].epoch = parts[i]->epoch;
    }
    struct kp_ListOffsetsRequest req;
    kp_ListOffsetsRequest_init(&req);
    req.ReplicaId = -1;
    req.IsolationLevel = (int8_t)c->v->isolation_level;
    req.Topics.items = ts;
    req.Topics.count = nt;
    if (sc_conn_send(c, conn, KP_API_LIST_OFFSETS, ver, &req, on_list_offsets, ctx) != 0) {
        kp_free(ctx);
        return;
    }
    for (int i = 0; i < n; i++) {
        parts[i]->state = SC_CP_QUERYING;
    }
}

/* ---------------------------------------------------------------- fetch */

struct fetch_ctx {
    int count;
    struct {
        struct sc_cpart *part;
        int epoch;
    } items[];
};

/*
 * read_committed: the aborted transactions of one partition's answer, as
 * Kafka 2.0's consumer drops them (clients/.../consumer/internals/
 * Fetcher.java, PartitionRecords.nextFetchedRecord: abortedTransactions
 * ordered by first offset, abortedProducerIds) and librdkafka does
 * (rdkafka_msgset_reader.c, the aborted txns list): a producer's data
 * batches are dropped from its aborted transaction's first offset until
 * that producer's ABORT control batch. The answer lists every abort whose
 * marker is at or after the fetch offset, so the state lives for one
 * answer.
 */
struct txn_filter {
    struct kp_FetchResponse_AbortedTransaction *pending; /* by FirstOffset */
    int count, next;   /* pending[next..count) not reached yet */
    int64_t *aborting; /* producers inside an aborted transaction now */
    int naborting;
};

static int cmp_first_offset(const void *a, const void *b)
{
    const struct kp_FetchResponse_AbortedTransaction *x = a, *y = b;
    return x->FirstOffset < y->FirstOffset ? -1 : x->FirstOffset > y->FirstOffset ? 1 : 0;
}

/* false: out of memory (nothing may be shown then). */
static bool txn_filter_init(struct txn_filter *f, const struct kp_FetchResponse_PartitionData *pd,
                            bool committed)
{
    memset(f, 0, sizeof(*f));
    int32_t n = pd->AbortedTransactions.count;
    if (!committed || n <= 0) {
        return true;
    }
    f->pending = kp_malloc((size_t)n * sizeof(f->pending[0]));
    f->aborting = kp_malloc((size_t)n * sizeof(f->aborting[0]));
    if (f->pending == NULL || f->aborting == NULL) {
        kp_free(f->pending);
        kp_free(f->aborting);
        return false;
    }
    memcpy(f->pending, pd->AbortedTransactions.items, (size_t)n * sizeof(f->pending[0]));
    qsort(f->pending, (size_t)n, sizeof(f->pending[0]), cmp_first_offset);
    f->count = n;
    return true;
}

static void txn_filter_free(struct txn_filter *f)
{
    kp_free(f->pending);
    kp_free(f->aborting);
}

static int txn_aborting_index(const struct txn_filter *f, int64_t pid)
{
    for (int i = 0; i < f->naborting; i++) {
        if (f->aborting[i] == pid) {
            return i;
        }
    }
    return -1;
}

/* Whether a control batch's (first) record is an ABORT marker. */
static bool is_abort_marker(const uint8_t *batch, size_t size)
{
    struct kp_batch_iter it;
    struct kp_record rec;
    int16_t type = -1;
    if (kp_batch_iter_init(&it, batch, size, MAX_DECOMPRESSED) == 0 &&
        kp_batch_iter_next(&it, &rec) == 0 && kp_control_key_decode(rec.Key, &type) != 0) {
        type = -1;
    }
    kp_batch_iter_free(&it);
    return type == KP_CONTROL_ABORT;
}

/* Whether the batch h (at batch[0..size)) is data of an aborted
 * transaction, which read_committed never shows; its control batches move
 * the state on. */
static bool txn_filter_drops(struct txn_filter *f, const struct kp_batch_header *h,
                             const uint8_t *batch, size_t size)
{
    if (f->count == 0 || h->ProducerId < 0) {
        return false;
    }
    int64_t last = kp_batch_last_offset(h);
    for (; f->next < f->count && f->pending[f->next].FirstOffset <= last; f->next++) {
        if (txn_aborting_index(f, f->pending[f->next].ProducerId) < 0) {
            f->aborting[f->naborting++] = f->pending[f->next].ProducerId;
        }
    }
    int at = txn_aborting_index(f, h->ProducerId);
    if (at < 0) {
        return false;
    }
    if (kp_batch_is_control(h)) {
        if (is_abort_marker(batch, size)) {
            f->aborting[at] = f->aborting[--f->naborting];
        }
        return false; /* control batches are skipped anyway */
    }
    return kp_batch_is_transactional(h);
}

/* Appends the records of one partition's answer to the queue, leaving out
 * control batches and, through f, aborted transactions. */
static void take_records(struct sc_client *c, struct sc_cpart *p, struct kp_bytes records,
                         struct txn_filter *f)
{
    if (records.len <= 0) {
        return;
    }
    const uint8_t *buf = records.ptr;
    size_t len = (size_t)records.len;
    size_t off = 0;
    while (off < len) {
        struct kp_batch_header h;
        size_t size = 0;
        int err = kp_batch_parse_lenient(buf + off, len - off, &h, &size);
        if (err == KP_AGAIN) {
            break; /* the partial batch at the end of a size-bounded answer */
        }
        if (err == KP_E_MAGIC && size > 0 && size <= len - off) {
            /* A legacy MessageSet: skipped (Samsa writes only magic 2). */
            sc_post_error(c, SAMSA_ERR_BAD_RESPONSE,
                          "%s [%d]: a magic %d message set at offset %lld skipped", p->topic,
                          p->partition, h.Magic, (long long)h.BaseOffset);
            if (h.BaseOffset >= p->position) {
                p->position = h.BaseOffset + 1;
            }
            off += size;
            continue;
        }
        if (err != 0) {
            sc_post_error(c, SAMSA_ERR_BAD_RESPONSE,
                          "%s [%d]: undecodable batch at offset %lld (%s); fetching again",
                          p->topic, p->partition, (long long)p->position, kp_err_name(err));
            p->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
            return;
        }
        int64_t next = kp_batch_last_offset(&h) + 1;
        bool aborted = txn_filter_drops(f, &h, buf + off, size);
        if (next <= p->position || kp_batch_is_control(&h) || aborted) {
            if (next > p->position) {
                p->position = next;
            }
            off += size;
            continue;
        }
        struct kp_batch_iter it;
        err = kp_batch_iter_init(&it, buf + off, size, MAX_DECOMPRESSED);
        if (err == 0) {
            struct kp_record rec;
            int ts_type = kp_batch_timestamp_type(&h) == KP_TS_LOG_APPEND_TIME ? 1 : 0;
            while ((err = kp_batch_iter_next(&it, &rec)) == 0) {
                if (rec.Offset < p->position) {
                    continue;
                }
                struct sc_cmsg *m = sc_cmsg_new(p, &rec, ts_type);
                if (m == NULL) {
                    err = KP_E_NOMEM;
                    break;
                }
                sc_cq_push(c, m);
                p->position = rec.Offset + 1;
            }
            if (err == KP_ITER_END) {
                err = 0;
            }
        }
        kp_batch_iter_free(&it);
        if (err != 0) {
            sc_post_error(c, SAMSA_ERR_BAD_RESPONSE, "%s [%d]: batch at %lld: %s", p->topic,
                          p->partition, (long long)h.BaseOffset, kp_err_name(err));
            p->retry_at = sc_now_ms() + c->v->retry_backoff_ms;
            return;
        }
        if (next > p->position) {
            p->position = next; /* compacted away or filtered: skip the gap */
        }
        off += size;
    }
}

static void on_fetch(struct sc_client *c, struct sc_conn *conn, int err, void *body, void *vctx)
{
    struct fetch_ctx *ctx = vctx;
    conn->fetch_inflight = false;
    const struct kp_FetchResponse *r = body;
    int64_t now = sc_now_ms();
    for (int i = 0; i < ctx->count; i++) {
        struct sc_cpart *p = ctx->items[i].part;
        if (!cpart_alive(c, p)) {
            continue;
        }
        p->fetching = false;
        if (p->epoch != ctx->items[i].epoch || p->state != SC_CP_ACTIVE) {
            continue; /* seeked meanwhile: this answer is for the old position */
        }
        if (err != 0) {
            p->retry_at = now + c->v->retry_backoff_ms;
            continue;
        }
        const struct kp_FetchResponse_PartitionData *pd = NULL;
        for (int32_t ti = 0; ti < r->Responses.count && pd == NULL; ti++) {
            if (!kp_str_eq_c(r->Responses.items[ti].Topic, p->topic)) {
                continue;
            }
            for (int32_t pi = 0; pi < r->Responses.items[ti].Partitions.count; pi++) {
                if (r->Responses.items[ti].Partitions.items[pi].PartitionIndex == p->partition) {
                    pd = &r->Responses.items[ti].Partitions.items[pi];
                }
            }
        }
        if (pd == NULL) {
            continue;
        }
        int perr = sc_err_from_wire(pd->ErrorCode);
        if (perr == KP_ERR_OFFSET_OUT_OF_RANGE) {
            char why[64];
            snprintf(why, sizeof(why), "offset %lld out of range", (long long)p->position);
            apply_reset_policy(c, p, why);
            continue;
        }
        if (perr != 0) {
            p->retry_at = now + c->v->retry_backoff_ms;
            c->md_wanted = true;
            sc_log(c, "%s [%d]: fetch: %s", p->topic, p->partition, kp_err_name(perr));
            continue;
        }
        p->hwm = pd->HighWatermark;
        p->lso = pd->LastStableOffset;
        p->log_start = pd->LogStartOffset;
        struct txn_filter f;
        if (!txn_filter_init(&f, pd, c->v->isolation_level == 1)) {
            p->retry_at = now + c->v->retry_backoff_ms; /* out of memory: read it again */
            continue;
        }
        take_records(c, p, pd->Records, &f);
        txn_filter_free(&f);
    }
    kp_free(ctx);
    pthread_cond_broadcast(&c->ev_cond);
}

void sc_consumer_fetch_from(struct sc_client *c, struct sc_conn *conn, int64_t now)
{
    int16_t ver = sc_conn_version(conn, KP_API_FETCH, 4, 11);
    if (ver < 0) {
        return;
    }
    static const int max_parts = MAX_FETCH_PARTS;
    struct kp_FetchRequest_FetchPartition ps[MAX_FETCH_PARTS];
    struct kp_FetchRequest_FetchTopic ts[MAX_FETCH_PARTS];
    struct sc_cpart *parts[MAX_FETCH_PARTS];
    int n = 0, nt = 0;
    /* Each Fetch starts its list one partition further on, as KIP-74 asks
     * of consumers (and Java's fetch sessions, librdkafka's round-robin
     * fetch list do): a leader that fills the response in request order up
     * to fetch.max.bytes then serves every partition in turn rather than
     * the first until it is drained. */
    int count = c->cpart_count;
    int first = count > 0 ? (int)(conn->fetch_rotate++ % (uint32_t)count) : 0;
    for (int i = 0; i < count && n < max_parts; i++) {
        struct sc_cpart *p = c->cparts[(first + i) % count];
        if (p->state != SC_CP_ACTIVE || p->leader != conn->node_id || p->fetching ||
            p->paused || p->revoking || p->retry_at > now) {
            continue;
        }
        bool seen = false;
        for (int t = 0; t < nt; t++) {
            seen = seen || kp_str_eq_c(ts[t].Topic, p->topic);
        }
        if (seen) {
            continue;
        }
        ts[nt].Topic = kp_str_c(p->topic);
        ts[nt].Partitions.items = &ps[n];
        ts[nt].Partitions.count = 0;
        for (int j = i; j < count && n < max_parts; j++) {
            struct sc_cpart *q = c->cparts[(first + j) % count];
            if (q->state != SC_CP_ACTIVE || q->leader != conn->node_id || q->fetching ||
                q->paused || q->revoking || q->retry_at > now || strcmp(q->topic, p->topic) != 0) {
                continue;
            }
            memset(&ps[n], 0, sizeof(ps[n]));
            ps[n].Partition = q->partition;
            ps[n].CurrentLeaderEpoch = -1;
            ps[n].FetchOffset = q->position;
            ps[n].LogStartOffset = -1;
            ps[n].PartitionMaxBytes = c->v->max_partition_fetch_bytes;
            parts[n] = q;
            ts[nt].Partitions.count++;
            n++;
        }
        nt++;
    }
    if (n == 0) {
        return;
    }
    struct fetch_ctx *ctx = kp_malloc(sizeof(*ctx) + (size_t)n * sizeof(ctx->items[0]));
    if (ctx == NULL) {
        return;
    }
    ctx->count = n;
    for (int i = 0; i < n; i++) {
        ctx->items[i].part = parts[i];
        ctx->items[i].epoch = parts[i]->epoch;
    }
    struct kp_FetchRequest req;
    kp_FetchRequest_init(&req);
    req.ReplicaId = -1;
    req.MaxWaitMs = c->v->fetch_wait_max_ms;
    req.MinBytes = c->v->fetch_min_bytes;
    req.MaxBytes = c->v->fetch_max_bytes;
    req.IsolationLevel = (int8_t)c->v->isolation_level;
    req.SessionId = 0;
    req.SessionEpoch = -1;
    req.Topics.items = ts;
    req.Topics.count = nt;
    req.ForgottenTopicsData.items = NULL;
    req.ForgottenTopicsData.count = 0;
    req.RackId = kp_str_c("");
    if (sc_conn_send(c, conn, KP_API_FETCH, ver, &req, on_fetch, ctx) != 0) {
        kp_free(ctx);
        return;
    }
    conn->fetch_inflight = true;
    for (int i = 0; i < n; i++) {
        parts[i]->fetching = true;
    }
}
