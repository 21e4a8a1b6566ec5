/*
 * samsa-broker: Fetch, with long polls and zero-copy records.
 *
 * Records never pass through user space: the response is encoded with each
 * partition's Records as a placeholder, and the connection sends the file
 * regions with sendfile between the encoded pieces. A fetch that finds fewer
 * than MinBytes parks (its slot holds back later responses on the
 * connection, which keep being handled) until an append to one of its
 * partitions brings enough bytes or MaxWaitMs passes.
 * @locality reactor thread
 */
#define _GNU_SOURCE

#include "base/clock.h"
#include "base/logging.h"
#include "replica/replication.h"
#include "server/client_quotas.h"
#include "server/request.h"

#include <samsa-protocol/legacy.h>
#include <samsa-protocol/record_batch.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

static void fetch_park_cancel(struct br_server *b, void *parked);
/* A long-poll Fetch parked: what its connection's end does to it (request.h) */
static const struct br_park_ops fetch_park_ops = {"a long-poll Fetch", fetch_park_cancel};

#define MAX_SLICES_PER_PARTITION 4

struct part_slices {
    struct br_log_slice s[MAX_SLICES_PER_PARTITION];
    size_t n;
    /* Fetch v0-v3: the records down-converted (owned, kp_malloc'ed; NULL
     * when the slices are sent as they are) */
    uint8_t *conv;
    size_t conv_len;
};

/* One fetch being answered: the response and where its records come from. */
struct fetch_run {
    struct kp_FetchResponse resp;
    struct part_slices **slices; /* per response partition, in encoding order; NULL = none */
    size_t nslices;
    int64_t total_bytes;
    /* a follower's: the bytes of partitions in this broker's
     * leader.replication.throttled.replicas, for the leader quota */
    int64_t throttled_bytes;
    bool any_error;
};

/* One partition a parked Fetch waits on: what it could return when it
 * parked and the partition's byte count then (br_partition: hw_bytes for a
 * consumer, leo_bytes for a follower), so an append adds what it brought
 * without the fetch being run again. */
struct fetch_wait {
    struct br_partition *p;
    int64_t at_park;   /* the byte count when parked */
    int64_t got;       /* bytes it could return when parked */
    int64_t max_bytes; /* PartitionMaxBytes */
    int64_t avail;     /* what it counts towards MinBytes now */
    /* read_committed: the fetch offset, which the LSO must pass before the
     * bytes appended count (Kafka's DelayedFetch compares against the
     * LSO for READ_COMMITTED); -1 otherwise */
    int64_t committed_from;
};

struct br_parked {
    struct br_park park; /* first: its ops (request.h) */
    struct br_delayed delayed;
    struct br_conn *conn;
    struct br_slot *slot;
    struct kp_request_header hdr;
    int16_t version;
    uint8_t *payload; /* owned copy of the request frame */
    size_t len;
    struct kp_arena arena; /* what the frame decodes into */
    void *body;            /* the decoded request (q, for br_respond_failed) */
    const struct kp_FetchRequest *q;
    bool follower;            /* ReplicaId >= 0: reads to the log end */
    int64_t total;            /* sum of waits[].avail, against MinBytes */
    struct fetch_wait *waits; /* the partitions it waits on, one each */
    struct br_delay_link *links;
    size_t nwaits;
};
static void slices_release(struct fetch_run *fr)
{
    for (size_t i = 0; i < fr->nslices; i++) {
        struct part_slices *ps = fr->slices[i];
        if (ps == NULL) {
            continue;
        }
        for (size_t k = 0; k < ps->n; k++) {
            br_fileref_unref(ps->s[k].file);
        }
        ps->n = 0;
        kp_free(ps->conv);
        ps->conv = NULL;
        ps->conv_len = 0;
    }
}

static void slices_release_one(struct part_slices *ps)
{
    for (size_t k = 0; k < ps->n; k++) {
        br_fileref_unref(ps->s[k].file);
    }
    ps->n = 0;
}

static struct br_partition *lookup(struct br_server *b, struct kp_str topic, int32_t index,
                                   int16_t *err)
{
    return br_rm_leader_partition(&b->rm, topic, index, err);
}

/* The partition's ErrorCode for a failed br_log_read. A damaged batch is
 * CORRUPT_MESSAGE, as Kafka 2.0 answers the CorruptRecordException its
 * FileLogInputStream throws for a bad batch header (ReplicaManager's
 * readFromLocalLog, Errors.forException): librdkafka, kafka-python and the
 * Java consumer hand that to the application, where KAFKA_STORAGE_ERROR
 * makes librdkafka refresh metadata and retry in silence forever. */
static int16_t fetch_error(int err)
{
    if (err == KP_E_CORRUPT) {
        return KP_ERR_CORRUPT_MESSAGE;
    }
    return (int16_t)(err > 0 ? err : KP_ERR_KAFKA_STORAGE_ERROR);
}

/* Reads the slices' bytes (whole batches, in log order) into one buffer. */
static int slices_read(const struct part_slices *ps, uint8_t **out, size_t *len)
{
    size_t total = 0;
    for (size_t k = 0; k < ps->n; k++) {
        total += (size_t)ps->s[k].len;
    }
    uint8_t *buf = kp_malloc(total == 0 ? 1 : total);
    if (buf == NULL) {
        return KP_E_NOMEM;
    }
    size_t at = 0;
    for (size_t k = 0; k < ps->n; k++) {
        const struct br_log_slice *sl = &ps->s[k];
        size_t done = 0;
        while (done < (size_t)sl->len) {
            ssize_t n = pread(br_fileref_fd(sl->file), buf + at + done, (size_t)sl->len - done,
                              (off_t)(sl->file_pos + (int64_t)done));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                kp_free(buf);
                return KP_ERR_KAFKA_STORAGE_ERROR;
            }
            done += (size_t)n;
        }
        at += done;
    }
    *out = buf;
    *len = total;
    return 0;
}

/*
 * Fetch v0-v3 get magic 0 (v0, v1) or magic 1 (v2, v3) message sets, as
 * Kafka 2.0 sends them (KafkaApis.handleFetchRequest, RecordsUtil.downConvert):
 * batch by batch, while the result stays within `budget` bytes (the
 * partition's share of the request, under fetch.max.bytes), the first
 * batch whatever its size; each conversion is bounded by response.max.bytes.
 * The slices' files are released and the result kept in ps->conv.
 * Returns 0 with *code the partition's ErrorCode (NONE, or the reason the
 * first batch could not be converted), or KP_E_NOMEM.
 */
static int downconvert(struct br_server *b, struct part_slices *ps, int16_t version,
                       int64_t fetch_offset, int64_t budget, int16_t *code)
{
    *code = KP_ERR_NONE;
    uint8_t *raw = NULL;
    size_t raw_len = 0;
    int err = slices_read(ps, &raw, &raw_len);
    for (size_t k = 0; k < ps->n; k++) {
        br_fileref_unref(ps->s[k].file);
    }
    ps->n = 0;
    if (err == KP_E_NOMEM) {
        return err;
    }
    if (err != 0) {
        *code = KP_ERR_KAFKA_STORAGE_ERROR;
        return 0;
    }
    int8_t magic = version <= 1 ? 0 : 1;
    size_t max = (size_t)b->cfg.response_max_bytes;
    struct kp_writer w;
    kp_wr_init(&w, max);
    size_t off = 0;
    while (off < raw_len) {
        struct kp_batch_header h;
        size_t size = 0;
        /* the header only: batches were checked whole when appended, and
         * the iterator is memory-safe on any bytes (damage since then is
         * CORRUPT_MESSAGE when nothing came before it) */
        err = kp_batch_peek(raw + off, raw_len - off, &h, &size);
        if (err == 0 && size > raw_len - off) {
            err = KP_AGAIN; /* the slices end inside it: not expected */
        }
        if (err != 0) {
            if (w.len == 0) {
                *code = KP_ERR_CORRUPT_MESSAGE;
            }
            break;
        }
        size_t before = w.len;
        int32_t count = 0;
        err = kp_legacy_downconvert(raw + off, size, magic, fetch_offset, max, &w, &count);
        if (err == KP_E_NOMEM) {
            break;
        }
        if (err != 0) {
            if (before == 0) {
                /* zstd has no legacy form (Kafka 2.1+ answers so) */
                *code = err == KP_E_UNSUPPORTED ? KP_ERR_UNSUPPORTED_COMPRESSION_TYPE
                                                : KP_ERR_CORRUPT_MESSAGE;
            }
            err = 0;
            break;
        }
        if (before > 0 && (int64_t)w.len > budget) {
            w.len = before; /* the next response takes it */
            break;
        }
        off += size;
    }
    kp_free(raw);
    if (err == KP_E_NOMEM) {
        kp_wr_free(&w);
        return err;
    }
    if (*code != KP_ERR_NONE) {
        kp_wr_free(&w);
        return 0;
    }
    ps->conv = kp_wr_steal(&w, &ps->conv_len);
    return 0;
}

/* Build the response for q; slices hold file references until sent.
 * arrived: q has just come (not a parked request completing): only then
 * does a follower's fetch offset tell its leader where it is. A parked
 * fetch's offset is as old as the fetch, and recorded again at its
 * completion it could put a follower the controller just took out of the
 * ISR (say, one shutting down) back in (Kafka 2.0 records a follower's
 * position when its fetch is read, ReplicaManager.fetchMessages, not when
 * a DelayedFetch completes). */
/* A read_committed answer's aborted transactions among the records from
 * fetch_offset up to upper (Kafka's Log.collectAbortedTransactions). */
static int add_aborted(const struct br_partition *p, int64_t fetch_offset, int64_t upper,
                       struct kp_arena *arena, struct kp_FetchResponse_PartitionData *rp)
{
    size_t n = br_partition_aborted_txns(p, fetch_offset, upper, NULL, 0);
    if (n == 0) {
        return 0;
    }
    if (n > INT32_MAX / sizeof(struct br_aborted_txn)) {
        return KP_E_NOMEM;
    }
    struct br_aborted_txn *v = kp_arena_alloc(arena, n * sizeof *v);
    struct kp_FetchResponse_AbortedTransaction *out = kp_arena_alloc(arena, n * sizeof *out);
    if (v == NULL || out == NULL) {
        return KP_E_NOMEM;
    }
    (void)br_partition_aborted_txns(p, fetch_offset, upper, v, n);
    for (size_t i = 0; i < n; i++) {
        out[i].ProducerId = v[i].producer_id;
        out[i].FirstOffset = v[i].first_offset;
    }
    rp->AbortedTransactions.items = out;
    rp->AbortedTransactions.count = (int32_t)n;
    return 0;
}

static int fetch_run(struct br_server *b, const struct kp_FetchRequest *q, int16_t version,
                     bool arrived, struct kp_arena *arena, struct fetch_run *fr)
{
    memset(fr, 0, sizeof *fr);
    kp_FetchResponse_init(&fr->resp);
    struct kp_FetchResponse *resp = &fr->resp;
    if (version >= 7 && q->SessionId != 0) {
        /* Samsa keeps no fetch sessions (it answers SessionId 0) */
        resp->ErrorCode = KP_ERR_FETCH_SESSION_ID_NOT_FOUND;
        fr->any_error = true;
        return 0;
    }
    size_t nparts = 0;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        nparts += (size_t)q->Topics.items[i].Partitions.count;
    }
    fr->slices = kp_arena_alloc(arena, (nparts == 0 ? 1 : nparts) * sizeof(struct part_slices *));
    resp->Responses.items =
        kp_arena_alloc(arena, (size_t)(q->Topics.count == 0 ? 1 : q->Topics.count) *
                                  sizeof *resp->Responses.items);
    if (fr->slices == NULL || resp->Responses.items == NULL) {
        return KP_E_NOMEM;
    }
    resp->Responses.count = q->Topics.count;
    /* the consumer's MaxBytes (v3+) under the broker's fetch.max.bytes */
    int64_t budget = version >= 3 ? q->MaxBytes : INT32_MAX;
    if (budget > b->cfg.fetch_max_bytes) {
        budget = b->cfg.fetch_max_bytes;
    }
    bool min_one = true; /* KIP-74: the first batch goes out whatever its size */
    int64_t now = br_now_mono_ms();
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_FetchRequest_FetchTopic *qt = &q->Topics.items[i];
        struct kp_FetchResponse_FetchableTopicResponse *rt = &resp->Responses.items[i];
        rt->Topic = qt->Topic;
        rt->Partitions.items =
            kp_arena_alloc(arena, (size_t)(qt->Partitions.count == 0 ? 1 : qt->Partitions.count) *
                                      sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            const struct kp_FetchRequest_FetchPartition *qp = &qt->Partitions.items[j];
            struct kp_FetchResponse_PartitionData *rp = &rt->Partitions.items[j];
            size_t slot_index = fr->nslices++;
            fr->slices[slot_index] = NULL;
            rp->PartitionIndex = qp->Partition;
            rp->HighWatermark = -1;
            rp->LastStableOffset = -1;
            rp->LogStartOffset = -1;
            rp->PreferredReadReplica = -1;
            rp->Records.ptr = (const uint8_t *)"";
            rp->Records.len = 0;
            struct br_partition *p = lookup(b, qt->Topic, qp->Partition, &rp->ErrorCode);
            if (p == NULL) {
                fr->any_error = true;
                continue;
            }
            if (q->ReplicaId >= 0 && arrived) {
                /* the leader learns how far the follower is */
                br_replication_follower_fetch(b->replication, p, q->ReplicaId, qp->FetchOffset);
            }
            int64_t start = br_log_start_offset(p->log);
            int64_t end = br_log_end_offset(p->log);
            /* a follower may read to the log end, a consumer to the HW, a
             * read_committed one to the LSO (Kafka 2.0's ReplicaManager.
             * readFromLocalLog: FetchTxnCommitted) */
            int64_t lso = br_partition_lso(p);
            bool committed = version >= 4 && q->IsolationLevel == 1 && q->ReplicaId < 0;
            int64_t limit = q->ReplicaId >= 0 ? end : committed ? lso : p->hw;
            rp->HighWatermark = p->hw;
            rp->LastStableOffset = lso;
            rp->LogStartOffset = start;
            /* out of range is outside [log start, log end], as Kafka 2.0's
             * Log.read has it: a consumer at an offset between the HW and
             * the log end (it read to the old leader's HW, the new leader's
             * HW is not there yet) gets nothing until the HW passes it */
            if (qp->FetchOffset < start || qp->FetchOffset > end) {
                rp->ErrorCode = KP_ERR_OFFSET_OUT_OF_RANGE;
                fr->any_error = true;
                continue;
            }
            rp->ErrorCode = KP_ERR_NONE;
            if (q->ReplicaId >= 0 &&
                br_replication_leader_holds(b->replication, p, q->ReplicaId, now)) {
                /* ReplicaManager.readFromLocalLog: a throttled replica
                 * out of the ISR gets no records while the leader quota is
                 * exceeded (no error: it asks again) */
                br_replication_leader_held(b->replication);
                continue;
            }
            int64_t pbudget = qp->PartitionMaxBytes < budget ? qp->PartitionMaxBytes : budget;
            int64_t offset = qp->FetchOffset;
            int64_t got = 0;
            struct part_slices *ps = NULL;
            while (offset < limit && (pbudget > 0 || min_one)) {
                struct br_log_slice sl;
                int32_t want =
                    pbudget > INT32_MAX ? INT32_MAX : (int32_t)(pbudget > 0 ? pbudget : 0);
                int err = br_log_read(p->log, offset, limit, want, min_one, &sl);
                if (err != 0) {
                    if (got == 0) {
                        rp->ErrorCode = fetch_error(err);
                        fr->any_error = true;
                    }
                    break;
                }
                if (sl.len <= 0 || sl.next_offset <= offset) {
                    br_log_slice_release(&sl);
                    break;
                }
                if (ps == NULL) {
                    ps = kp_arena_alloc(arena, sizeof *ps);
                    if (ps == NULL) {
                        br_fileref_unref(sl.file);
                        return KP_E_NOMEM;
                    }
                    ps->n = 0;
                    ps->conv = NULL;
                    ps->conv_len = 0;
                    fr->slices[slot_index] = ps;
                }
                ps->s[ps->n++] = sl;
                got += sl.len;
                pbudget -= sl.len;
                offset = sl.next_offset;
                min_one = false;
                if (ps->n == MAX_SLICES_PER_PARTITION || got > INT32_MAX / 2) {
                    break;
                }
            }
            if (got > 0 && version < 4 && q->ReplicaId < 0) {
                /* all stored batches are magic 2: older fetches convert */
                int16_t code = KP_ERR_NONE;
                if (!p->topic->config.message_downconversion_enable) {
                    code = KP_ERR_UNSUPPORTED_VERSION; /* Kafka 2.0's answer */
                    slices_release_one(ps);
                } else {
                    int64_t share = qp->PartitionMaxBytes < budget ? qp->PartitionMaxBytes : budget;
                    int err = downconvert(b, ps, version, qp->FetchOffset, share, &code);
                    if (err != 0) {
                        return err;
                    }
                }
                if (code != KP_ERR_NONE) {
                    rp->ErrorCode = code;
                    fr->any_error = true;
                }
                got = (int64_t)ps->conv_len;
            }
            if (got > 0 && committed) {
                int err = add_aborted(p, qp->FetchOffset, offset, arena, rp);
                if (err != 0) {
                    slices_release_one(ps);
                    return err;
                }
            }
            if (got > 0) {
                rp->Records.ptr = NULL; /* spliced from the files at send time */
                rp->Records.len = (int32_t)got;
                budget -= got;
                fr->total_bytes += got;
                if (q->ReplicaId >= 0 && br_replication_leader_throttled(b->replication, p)) {
                    fr->throttled_bytes += got;
                }
                p->topic->bytes_out += got;
            }
        }
    }
    return 0;
}

struct splice_ctx {
    size_t at[4096];
    size_t n;
    bool overflow;
};

static void on_splice(void *vctx, size_t at, int32_t len)
{
    struct splice_ctx *sc = vctx;
    (void)len;
    if (sc->n == sizeof sc->at / sizeof sc->at[0]) {
        sc->overflow = true;
        return;
    }
    sc->at[sc->n++] = at;
}

static int add_mem_copy(struct br_slot *slot, const uint8_t *p, size_t n)
{
    if (n == 0) {
        return 0;
    }
    uint8_t *copy = kp_malloc(n);
    if (copy == NULL) {
        return -1;
    }
    memcpy(copy, p, n);
    return br_slot_add_mem(slot, copy, n);
}

/* Encode the response around the spliced file regions into the slot: the
 * encoded part within response.max.bytes, the records (bounded by
 * fetch.max.bytes) beside it. An encoding failure returns its code with the
 * slot untouched (the caller answers it, br_respond_failed); running out of
 * memory once pieces are in the slot is answered here: the connection is
 * closed after what the slot holds. */
static int fetch_send(struct br_server *b, struct br_conn *conn, struct br_slot *slot,
                      int32_t correlation_id, int16_t version, struct fetch_run *fr)
{
    struct kp_writer w;
    kp_wr_init(&w, (size_t)b->cfg.response_max_bytes);
    struct splice_ctx *sc = kp_calloc(1, sizeof *sc);
    if (sc == NULL) {
        return KP_E_NOMEM;
    }
    struct kp_splice_hook hook = {on_splice, sc};
    kp_wr_i32(&w, 0); /* frame size, patched below */
    struct kp_response_header h = {correlation_id};
    kp_response_header_encode(&w, kp_response_header_version(KP_API_FETCH, version), &h);
    int err = kp_msg_encode_spliced(&kp_FetchResponse_desc, version, &w, &fr->resp, &hook);
    int64_t frame = (int64_t)w.len - 4 + fr->total_bytes;
    if (err == 0 && (sc->overflow || frame > INT32_MAX)) {
        err = KP_E_TOO_LARGE;
    }
    if (err != 0) {
        kp_wr_free(&w);
        kp_free(sc);
        return err;
    }
    kp_store_be32(w.buf, (uint32_t)frame);
    size_t prev = 0;
    size_t k = 0;
    for (size_t i = 0; i < fr->nslices && err == 0; i++) {
        struct part_slices *ps = fr->slices[i];
        if (ps == NULL || (ps->n == 0 && ps->conv_len == 0)) {
            continue;
        }
        if (k >= sc->n) {
            err = KP_E_CORRUPT;
            break;
        }
        size_t at = sc->at[k++];
        if (add_mem_copy(slot, w.buf + prev, at - prev) != 0) {
            err = KP_E_NOMEM;
            break;
        }
        prev = at;
        if (ps->conv_len > 0) {
            /* down-converted records: the slot takes the buffer */
            uint8_t *conv = ps->conv;
            ps->conv = NULL;
            if (br_slot_add_mem(slot, conv, ps->conv_len) != 0) {
                err = KP_E_NOMEM;
            }
            ps->conv_len = 0;
            continue;
        }
        for (size_t j = 0; j < ps->n; j++) {
            if (br_slot_add_file(slot, ps->s[j].file, ps->s[j].file_pos, (size_t)ps->s[j].len) !=
                0) {
                err = KP_E_NOMEM;
                break;
            }
        }
    }
    if (err == 0 && add_mem_copy(slot, w.buf + prev, w.len - prev) != 0) {
        err = KP_E_NOMEM;
    }
    kp_wr_free(&w);
    kp_free(sc);
    br_slot_ready(conn, slot);
    if (err != 0) {
        br_error("Fetch v%d response to %s (correlation %" PRId32 ") failed half-written: %s: "
                 "closing the connection",
                 version, br_conn_peer(conn), correlation_id, kp_err_str(err));
        br_conn_close_after_flush(conn);
    }
    return 0;
}

/* A consumer's Fetch over consumer_byte_rate (Kafka 2.0's
 * handleFetchRequest): answered at once with no partition and the
 * throttle time, its connection muted meanwhile (KIP-219). Followers are
 * held to replication quotas instead, not to client quotas. */
static void fetch_quota(struct br_server *b, struct br_conn *conn, struct kp_str client_id,
                        bool follower, struct fetch_run *fr)
{
    if (follower) {
        /* KafkaApis.handleFetchRequest: the throttled partitions' bytes
         * sent count against the leader quota */
        br_replication_leader_sent(b->replication, fr->throttled_bytes, br_now_mono_ms());
        return;
    }
    int32_t ms = br_client_quotas_fetch(b, conn, client_id, fr->total_bytes);
    if (ms > 0) {
        slices_release(fr);
        fr->resp.Responses.count = 0;
        fr->total_bytes = 0;
        fr->resp.ThrottleTimeMs = ms;
    }
}

/* ---------------------------------------------------------------- parking */

static int64_t bytes_count(const struct br_parked *pk, const struct br_partition *p)
{
    return pk->follower ? p->leo_bytes : p->hw_bytes;
}

static void parked_free(struct br_parked *pk)
{
    kp_arena_free(&pk->arena);
    kp_free(pk->payload);
    kp_free(pk->waits);
    kp_free(pk->links);
    kp_free(pk);
}

/* Appends reached some of its partitions: only those are counted again. */
static bool parked_ready(void *ctx, struct br_delayed *d)
{
    (void)ctx;
    struct br_parked *pk = d->owner;
    for (size_t i = 0; i < pk->nwaits; i++) {
        if (!br_delayed_woken(d, i)) {
            continue;
        }
        struct fetch_wait *w = &pk->waits[i];
        if (w->committed_from >= 0 && br_partition_lso(w->p) <= w->committed_from) {
            continue; /* appended, but nothing stable past the offset yet */
        }
        int64_t avail = w->got + (bytes_count(pk, w->p) - w->at_park);
        if (avail > w->max_bytes) {
            avail = w->max_bytes;
        }
        pk->total += avail - w->avail;
        w->avail = avail;
    }
    return pk->total >= pk->q->MinBytes;
}

/* Out of the purgatory: answered with what there is now, then freed. */
static void parked_complete(void *ctx, struct br_delayed *d, bool expired)
{
    (void)expired;
    struct br_server *b = ctx;
    struct br_parked *pk = d->owner;
    struct kp_arena arena;
    kp_arena_init(&arena, (size_t)b->cfg.response_max_bytes);
    struct fetch_run fr;
    int err = fetch_run(b, pk->q, pk->version, false, &arena, &fr);
    /* the response points into the parked request's frame: send first,
     * free after (the slot no longer names the parked request once ready) */
    if (err == 0) {
        fetch_quota(b, pk->conn, pk->hdr.ClientId, pk->follower, &fr);
        err = fetch_send(b, pk->conn, pk->slot, pk->hdr.CorrelationId, pk->version, &fr);
    }
    slices_release(&fr);
    if (err != 0) {
        /* the parked request's frame is still there to build the error answer */
        struct br_req r = {b,        pk->conn, pk->slot,    &pk->hdr, pk->version,
                           pk->body, &arena,   pk->payload, pk->len, NULL, NULL};
        br_respond_failed(&r, err);
    }
    kp_arena_free(&arena);
    parked_free(pk);
}

static const struct br_delayed_ops parked_ops = {
    .name = "Fetch long poll",
    .ready = parked_ready,
    .complete = parked_complete,
};

/* fr: the run that found fewer than MinBytes (its Records lengths are what
 * each partition could return). */
static int park(struct br_req *r, const struct kp_FetchRequest *q, const struct fetch_run *fr)
{
    struct br_server *b = r->b;
    struct br_parked *pk = kp_calloc(1, sizeof *pk);
    if (pk == NULL) {
        return KP_E_NOMEM;
    }
    pk->payload = kp_malloc(r->len);
    size_t nparts = 0;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        nparts += (size_t)q->Topics.items[i].Partitions.count;
    }
    size_t cap = nparts == 0 ? 1 : nparts;
    pk->waits = kp_calloc(cap, sizeof *pk->waits);
    pk->links = kp_calloc(cap, sizeof *pk->links);
    if (pk->payload == NULL || pk->waits == NULL || pk->links == NULL) {
        parked_free(pk);
        return KP_E_NOMEM;
    }
    memcpy(pk->payload, r->payload, r->len);
    pk->len = r->len;
    kp_arena_init(&pk->arena, br_request_arena_max(pk->len));
    struct kp_request req;
    int err = kp_request_decode(pk->payload, pk->len, &pk->arena, &req);
    if (err != 0) {
        parked_free(pk);
        return err;
    }
    pk->hdr = req.header;
    pk->version = r->version;
    pk->body = req.body;
    pk->q = req.body;
    pk->conn = r->conn;
    pk->slot = r->slot;
    pk->follower = q->ReplicaId >= 0;
    pk->park.ops = &fetch_park_ops;
    br_delayed_init(&pk->delayed, &parked_ops, pk, pk->links, cap);
    const struct kp_FetchResponse *resp = &fr->resp;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_FetchRequest_FetchTopic *qt = &q->Topics.items[i];
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            const struct kp_FetchRequest_FetchPartition *qp = &qt->Partitions.items[j];
            int16_t ignored = 0;
            struct br_partition *p = lookup(b, qt->Topic, qp->Partition, &ignored);
            if (p == NULL) {
                continue;
            }
            bool seen = false;
            for (size_t k = 0; k < pk->nwaits && !seen; k++) {
                seen = pk->waits[k].p == p;
            }
            if (seen) {
                continue;
            }
            /* a run with no error answers every partition asked */
            int64_t got = 0;
            if (i < resp->Responses.count && j < resp->Responses.items[i].Partitions.count) {
                got = resp->Responses.items[i].Partitions.items[j].Records.len;
            }
            /* DelayedFetch: a partition the leader quota holds back adds
             * nothing towards MinBytes */
            bool held = pk->follower && br_replication_leader_holds(b->replication, p, q->ReplicaId,
                                                                    br_now_mono_ms());
            size_t k = pk->nwaits++;
            pk->waits[k] = (struct fetch_wait){
                .p = p,
                .at_park = bytes_count(pk, p),
                .got = got,
                .max_bytes = qp->PartitionMaxBytes > 0 && !held ? qp->PartitionMaxBytes : 0,
                .avail = got,
                .committed_from = !pk->follower && pk->version >= 4 && q->IsolationLevel == 1
                                      ? qp->FetchOffset
                                      : -1,
            };
            pk->total += got;
            br_delayed_watch(&pk->delayed, k, &p->delayed);
        }
    }
    pk->delayed.nlinks = pk->nwaits;
    br_slot_set_parked(r->slot, &pk->park);
    br_purgatory_park(&b->purgatory, &pk->delayed, br_now_mono_ms() + q->MaxWaitMs);
    return 0;
}

static void fetch_park_cancel(struct br_server *b, void *parked)
{
    struct br_parked *pk = parked;
    br_purgatory_cancel(&b->purgatory, &pk->delayed);
    parked_free(pk);
}

/* ---------------------------------------------------------------- handler */

int br_h_fetch(struct br_req *r)
{
    const struct kp_FetchRequest *q = r->body;
    struct fetch_run fr;
    int err = fetch_run(r->b, q, r->version, true, r->arena, &fr);
    if (err != 0) {
        slices_release(&fr);
        return err;
    }
    if (!fr.any_error && fr.total_bytes < q->MinBytes && q->MaxWaitMs > 0 &&
        !br_broker_stopping(r->b)) {
        err = park(r, q, &fr);
        slices_release(&fr);
        return err;
    }
    fetch_quota(r->b, r->conn, r->hdr->ClientId, q->ReplicaId >= 0, &fr);
    err = fetch_send(r->b, r->conn, r->slot, r->hdr->CorrelationId, r->version, &fr);
    slices_release(&fr);
    return err;
}
