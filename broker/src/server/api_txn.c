/*
 * samsa-broker: the transaction coordinator's requests (Kafka 2.0's
 * KafkaApis.handleInitProducerIdRequest with a transactional id,
 * handleAddPartitionToTxnRequest, handleEndTxnRequest; FindCoordinator of
 * key type 1 in group_handlers.c), its records in __transaction_state and
 * the markers it writes on this broker's partitions.
 *
 * Standalone, every partition is led here: the markers are appended at
 * once. On a cluster a broker coordinates the ids of the partitions of
 * __transaction_state it leads (loaded when it comes to lead one,
 * br_txn_leadership_changed), answers a request that changed a record
 * once the record reached the ISR (Kafka's appendTransactionToLog with
 * requiredAcks = -1), and sends markers to the partitions' leaders with
 * WriteTxnMarkers (txn_markers.h), whose answer waits for the ISR too.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/record_batch.h>

#include "base/clock.h"
#include "base/logging.h"
#include "group/group.h"
#include "reactor/net.h"
#include "replica/partition_read.h"
#include "replica/replica_manager.h"
#include "server/group.h"
#include "server/request.h"
#include "server/acks_wait.h"
#include "server/state.h"
#include "server/txn_markers.h"
#include "txn/coordinator.h"

#define TXN_TOPIC "__transaction_state"

/* ---------------------------------------------------------------- the topic */

/* TransactionLog's topic settings (compacted, uncompressed) */
static const struct {
    const char *key;
    const char *value;
} txn_topic_settings[] = {
    {"cleanup.policy", "compact"},
    {"compression.type", "uncompressed"},
    {"unclean.leader.election.enable", "false"},
};
#define N_TXN_SETTINGS (sizeof txn_topic_settings / sizeof txn_topic_settings[0])

/* 0 when __transaction_state exists, else COORDINATOR_NOT_AVAILABLE with
 * the topic asked for. */
static int ensure_txn_topic(struct br_server *b)
{
    struct br_kv kvs[N_TXN_SETTINGS + 2];
    for (size_t i = 0; i < N_TXN_SETTINGS; i++) {
        kvs[i].key = kp_str_c(txn_topic_settings[i].key);
        kvs[i].value = kp_str_c(txn_topic_settings[i].value);
    }
    char seg[24];
    (void)snprintf(seg, sizeof seg, "%" PRId32, b->cfg.transaction_state_log_segment_bytes);
    kvs[N_TXN_SETTINGS].key = kp_str_c("segment.bytes");
    kvs[N_TXN_SETTINGS].value = kp_str_c(seg);
    /* transaction.state.log.min.isr, at most the replicas it has (a
     * standalone broker's one) */
    char isr[24];
    int32_t min_isr = b->cfg.transaction_state_log_min_isr;
    (void)snprintf(isr, sizeof isr, "%" PRId32, min_isr < b->txn_topic_rf ? min_isr : b->txn_topic_rf);
    kvs[N_TXN_SETTINGS + 1].key = kp_str_c("min.insync.replicas");
    kvs[N_TXN_SETTINGS + 1].value = kp_str_c(isr);
    struct br_internal_topic it = {
        TXN_TOPIC,
        b->cfg.transaction_state_log_num_partitions,
        b->txn_topic_rf,
        b->cfg.transaction_state_log_replication_factor,
        "transaction.state.log.replication.factor",
        kvs,
        N_TXN_SETTINGS + 2,
        &b->txn_topic_create_ms,
    };
    return br_ensure_internal_topic(b, &it);
}

/* The partitions of __transaction_state (0 while it is not made). */
static int32_t txn_partitions(const struct br_server *b)
{
    const struct br_mc_topic *mt = br_mc_topic(&b->mc, TXN_TOPIC, sizeof TXN_TOPIC - 1);
    return mt != NULL ? mt->npartitions : 0;
}

/* The partition of __transaction_state id's records go to, if this broker
 * leads it, else NULL with *err (TransactionStateManager.partitionFor:
 * Java's String hashCode, as the group's). */
static struct br_partition *txn_log_partition(struct br_server *b, const char *id, size_t len,
                                              int16_t *err)
{
    int perr = 0;
    struct br_partition *p = br_internal_partition(br_rm_find_topic(&b->rm, kp_str_c(TXN_TOPIC)),
                                                   txn_partitions(b), id, len, &perr);
    *err = (int16_t)perr;
    return p;
}

/* The same, the topic asked for first when it is not made yet. */
static struct br_partition *txn_partition(struct br_server *b, const char *id, size_t len,
                                          int16_t *err)
{
    int e = ensure_txn_topic(b);
    if (e != 0) {
        *err = (int16_t)e;
        return NULL;
    }
    return txn_log_partition(b, id, len, err);
}

bool br_txn_coordinates(struct br_server *b, struct kp_str id)
{
    int16_t err = KP_ERR_NONE;
    return id.len >= 0 && txn_log_partition(b, id.ptr != NULL ? id.ptr : "", (size_t)id.len,
                                            &err) != NULL;
}

int br_txn_find_coordinator(struct br_server *b, struct kp_str id, const char *listener,
                            int32_t *node, const char **host, int32_t *port)
{
    int e = ensure_txn_topic(b);
    if (e != 0) {
        return e;
    }
    return br_internal_coordinator(b, TXN_TOPIC, txn_partitions(b), id, listener, node, host,
                                   port);
}

/* The coordinator's ops on this broker. */
static int new_producer_id(void *ctx, int64_t *id)
{
    return br_broker_next_producer_id(ctx, id);
}

/* One marker of producer (pid, epoch) appended to (topic, partition) led
 * here, as Kafka 2.0's KafkaApis.handleWriteTxnMarkersRequest appends it:
 * KP_ERR_NONE, the partition's refusal (INVALID_PRODUCER_EPOCH,
 * TRANSACTION_COORDINATOR_FENCED), the lookup's error
 * (UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER) or
 * KAFKA_STORAGE_ERROR. A marker on __consumer_offsets tells the group
 * coordinator, whose pending offsets of the producer it commits or drops. */
static int16_t append_marker(struct br_server *b, struct kp_str topic, int32_t partition,
                             int64_t pid, int16_t epoch, int32_t coordinator_epoch, bool commit,
                             int64_t now, struct br_partition **where, int64_t *offset)
{
    int16_t lerr = KP_ERR_NONE;
    struct br_partition *p = br_rm_leader_partition(&b->rm, topic, partition, &lerr);
    if (p == NULL) {
        return lerr;
    }
    *where = p;
    int16_t kerr = KP_ERR_NONE;
    *offset = -1;
    int err =
        br_partition_append_marker(p, pid, epoch, coordinator_epoch, commit, now, &kerr, offset);
    if (err != 0) {
        br_error("%s-%d: the %s marker of producer %lld could not be written: %s", p->topic->name,
                 (int)partition, commit ? "COMMIT" : "ABORT", (long long)pid, kp_err_str(err));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (kerr == KP_ERR_NONE && strcmp(p->topic->name, BR_OFFSETS_TOPIC) == 0) {
        (void)br_grp_txn_complete(b->groups, p->topic->npartitions, p->index, pid, commit);
    }
    return kerr;
}

static bool write_markers(void *ctx, const struct br_txn *t, bool commit)
{
    struct br_server *b = ctx;
    int16_t perr = KP_ERR_NONE;
    struct br_partition *log_p = txn_log_partition(b, t->id, t->id_len, &perr);
    if (b->zk != NULL) {
        return br_txn_markers_write(b, t, commit, log_p);
    }
    /* the coordinator epoch: its partition's leader epoch (Kafka's
     * coordinatorEpoch, from LeaderAndIsr) */
    int32_t coordinator_epoch = log_p != NULL ? log_p->leader_epoch : 0;
    bool all = true;
    int64_t now = br_now_wall_ms();
    for (size_t i = 0; i < t->nparts; i++) {
        const struct br_txn_partition *tp = &t->parts[i];
        struct br_partition *where = NULL;
        int64_t offset = -1;
        int16_t e = append_marker(b, kp_str_c(tp->topic), tp->partition, t->producer_id, t->epoch,
                                  coordinator_epoch, commit, now, &where, &offset);
        if (e == KP_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
            continue; /* deleted since: nothing is left to mark (Kafka drops it) */
        }
        if (e == KP_ERR_INVALID_PRODUCER_EPOCH || e == KP_ERR_TRANSACTION_COORDINATOR_FENCED) {
            /* the partition knows a newer epoch or coordinator: this
             * transaction's marker is not needed there (Kafka stops) */
            br_warn("%s-%d: the %s marker of transactional id \"%s\" refused: %s", tp->topic,
                    (int)tp->partition, commit ? "COMMIT" : "ABORT", t->id, kp_err_name(e));
            continue;
        }
        all = all && e == KP_ERR_NONE;
    }
    return all;
}

/* One record of id appended to its partition of __transaction_state
 * (standalone: written when appended, as acks=all with one replica). */
static int write_record(void *ctx, const char *id, size_t id_len, struct kp_bytes key,
                        struct kp_bytes value, int64_t *log_end)
{
    struct br_server *b = ctx;
    int16_t perr = KP_ERR_NONE;
    struct br_partition *p = txn_partition(b, id, id_len, &perr);
    if (p == NULL) {
        return perr;
    }
    int64_t now = br_now_wall_ms();
    struct kp_batch_builder bb;
    struct kp_writer w;
    kp_wr_init(&w, (size_t)INT32_MAX);
    int err = kp_batch_builder_init(&bb, KP_CODEC_NONE, 0, now, -1, -1, -1, (size_t)INT32_MAX);
    if (err == 0) {
        err = kp_batch_builder_add(&bb, KP_OFFSET_DELTA_AUTO, now, key, value, NULL, 0);
    }
    if (err == 0) {
        err = kp_batch_builder_finish(&bb, &w);
    }
    kp_batch_builder_free(&bb);
    struct br_append app;
    if (err == 0) {
        err = br_partition_append_leader(p, w.buf, w.len, now, &app);
    }
    kp_wr_free(&w);
    if (err != 0) {
        br_error("append to %s-%" PRId32 " failed: %s", TXN_TOPIC, p->index,
                 err < 0 ? kp_err_str(err) : kp_err_name(err));
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    *log_end = br_log_end_offset(p->log);
    return 0;
}

static const struct br_txn_ops txn_ops = {new_producer_id, write_record, write_markers};

/* br_txn_server_start's reading of __transaction_state */
struct txn_loading {
    struct br_server *b;
    size_t records;
    size_t skipped;
};

static int load_one(void *ctx, const struct kp_batch_header *h, const struct kp_record *rec)
{
    struct txn_loading *l = ctx;
    if (kp_batch_is_control(h)) {
        return 0;
    }
    l->records++;
    int err = br_txn_load_record(&l->b->txn, rec->Key, rec->Value);
    if (err == KP_E_CORRUPT) {
        l->skipped++;
        return 0;
    }
    return err;
}

int br_txn_server_start(struct br_server *b)
{
    br_txn_init(&b->txn, &txn_ops, b, b->cfg.transaction_max_timeout_ms,
                b->cfg.transactional_id_expiration_ms,
                b->cfg.transaction_abort_cleanup_interval_ms);
    struct br_topic *t = br_rm_find_topic(&b->rm, kp_str_c(TXN_TOPIC));
    if (t == NULL) {
        return 0;
    }
    /* TransactionStateManager.loadTransactionsForTxnTopicPartition: the
     * latest record of each id wins; those in Prepare* have their markers
     * written again by the first tick, Ongoing ones time out as before */
    struct txn_loading l = {b, 0, 0};
    for (int32_t i = 0; i < t->npartitions; i++) {
        if (t->partitions[i].role != BR_ROLE_LEADER) {
            continue;
        }
        int err = br_partition_read_records(&t->partitions[i], TXN_TOPIC, load_one, &l);
        if (err != 0) {
            return err;
        }
    }
    size_t open = 0;
    for (size_t i = 0; i < b->txn.n; i++) {
        enum br_txn_status st = b->txn.txns[i]->status;
        open += st == BR_TXN_ONGOING || st == BR_TXN_PREPARE_COMMIT || st == BR_TXN_PREPARE_ABORT;
    }
    br_info("loaded %zu transactional id(s), %zu with a transaction open, from %s (%zu "
            "record(s), %zu skipped)",
            b->txn.n, open, TXN_TOPIC, l.records, l.skipped);
    return 0;
}

void br_txn_server_stop(struct br_server *b)
{
    br_txn_markers_forget(b, NULL, NULL);
    br_txn_fini(&b->txn);
}

/* Whether id's records go to partition `index` of __transaction_state. */
struct txn_partition_of {
    int32_t npartitions;
    int32_t index;
};

static bool id_in_partition(void *arg, const char *id, size_t len)
{
    const struct txn_partition_of *o = arg;
    return br_group_partition_for(id, len, o->npartitions) == o->index;
}

void br_txn_leadership_changed(struct br_server *b, struct br_partition *p, bool was_leader)
{
    bool leads = p->role == BR_ROLE_LEADER;
    if (leads == was_leader || strcmp(p->topic->name, TXN_TOPIC) != 0) {
        return;
    }
    int32_t n = txn_partitions(b);
    struct txn_partition_of o = {n > 0 ? n : p->topic->npartitions, p->index};
    /* TransactionStateManager.removeTransactionsForTxnTopicPartition (on
     * immigration too, so nothing stale of an earlier term stays), and
     * the markers under way with them (TransactionMarkerChannelManager.
     * removeMarkersForTxnTopicPartition) */
    br_txn_markers_forget(b, id_in_partition, &o);
    size_t gone = br_txn_unload(&b->txn, id_in_partition, &o);
    if (!leads) {
        br_info("%s-%" PRId32 " is led elsewhere now: %zu transactional id(s) handed over",
                TXN_TOPIC, p->index, gone);
        return;
    }
    /* loadTransactionsForTxnTopicPartition: the latest record of each id
     * wins; Prepare* ones have their markers sent again */
    int64_t t0 = br_now_mono_ms();
    size_t before = b->txn.n;
    struct txn_loading l = {b, 0, 0};
    int err = br_partition_read_records(p, TXN_TOPIC, load_one, &l);
    if (err != 0) {
        br_error("%s-%" PRId32 ": loading the transactions failed (%s): its ids are not served",
                 TXN_TOPIC, p->index, err < 0 ? kp_err_str(err) : kp_err_name(err));
        (void)br_txn_unload(&b->txn, id_in_partition, &o);
        return;
    }
    br_info("transaction coordinator of %s-%" PRId32 " (epoch %" PRId32 "): %zu transactional "
            "id(s) loaded from %zu record(s) in %" PRId64 " ms",
            TXN_TOPIC, p->index, p->leader_epoch, b->txn.n - before, l.records,
            br_now_mono_ms() - t0);
    br_txn_resume(&b->txn, id_in_partition, &o, br_now_wall_ms());
}

/* The coordinator's error for id on this broker: NONE when it coordinates
 * it, NOT_COORDINATOR when another broker leads its partition,
 * COORDINATOR_NOT_AVAILABLE while __transaction_state is being made. */
static int16_t coordinator_error(struct br_server *b, struct kp_str id)
{
    int16_t err = KP_ERR_NONE;
    if (txn_partition(b, id.ptr != NULL ? id.ptr : "", id.len > 0 ? (size_t)id.len : 0, &err) ==
        NULL) {
        return err != KP_ERR_NONE ? err : KP_ERR_NOT_COORDINATOR;
    }
    return KP_ERR_NONE;
}

/* ---------------------------------------------------------------- answers after the ISR */

/* An answer held until the record it tells of reached the ISR, encoded
 * before the request's memory went: as it is, and with the two errors
 * Kafka's appendTransactionToLog answers when the append fails
 * (COORDINATOR_NOT_AVAILABLE: not replicated in time or by too few;
 * NOT_COORDINATOR: the partition is led elsewhere now). */
enum { ANSWER_OK, ANSWER_NOT_AVAILABLE, ANSWER_NOT_COORDINATOR, ANSWERS };

struct txn_answer {
    struct br_hw_wait wait; /* first */
    struct br_conn *conn;
    struct br_slot *slot;
    uint8_t *frame[ANSWERS];
    size_t len[ANSWERS];
};

static void answer_free(struct txn_answer *a)
{
    for (size_t i = 0; i < ANSWERS; i++) {
        kp_free(a->frame[i]);
    }
    kp_free(a);
}

/* Sends frame k of a (which it takes) and frees a. */
static void answer_send(struct txn_answer *a, size_t k)
{
    uint8_t *buf = a->frame[k];
    a->frame[k] = NULL;
    if (br_slot_add_mem(a->slot, buf, a->len[k]) != 0) {
        br_error("answering %s failed (out of memory): closing the connection",
                 br_conn_peer(a->conn));
        br_conn_close_after_flush(a->conn);
    }
    br_slot_ready(a->conn, a->slot);
    answer_free(a);
}

static void answer_done(struct br_hw_wait *w, int16_t err)
{
    struct txn_answer *a = (struct txn_answer *)(void *)w;
    size_t k = err == KP_ERR_NONE                   ? ANSWER_OK
               : err == KP_ERR_NOT_LEADER_OR_FOLLOWER ? ANSWER_NOT_COORDINATOR
                                                      : ANSWER_NOT_AVAILABLE;
    if (k != ANSWER_OK) {
        br_warn("a transaction coordinator's record was not replicated (%s): answered %s",
                kp_err_name(err),
                kp_err_name(k == ANSWER_NOT_COORDINATOR ? KP_ERR_NOT_COORDINATOR
                                                        : KP_ERR_COORDINATOR_NOT_AVAILABLE));
    }
    answer_send(a, k);
}

static void answer_cancelled(struct br_hw_wait *w)
{
    answer_free((struct txn_answer *)(void *)w);
}

/* Encodes resp of r's API and version into *frame. 0 or a KP_E_* code. */
static int encode_answer(struct br_req *r, const void *resp, uint8_t **frame, size_t *len)
{
    struct kp_writer w;
    kp_wr_init(&w, (size_t)r->b->cfg.response_max_bytes);
    int err =
        kp_response_encode(&w, r->hdr->RequestApiKey, r->version, r->hdr->CorrelationId, resp);
    *frame = err == 0 ? kp_wr_steal(&w, len) : NULL;
    kp_wr_free(&w);
    return err != 0 ? err : *frame == NULL ? KP_E_NOMEM : 0;
}

/*
 * Answers resp, which tells of an append to p up to `required`: at once
 * when the ISR has it already, else once it has, or
 * with the error set_error puts into every entry that says NONE when it
 * cannot be (resp is changed then: it must not be used after).
 */
static int respond_replicated_at(struct br_req *r, void *resp, struct br_partition *p,
                                 int64_t required, void (*set_error)(void *resp, int16_t code))
{
    if (required <= p->hw || r->slot == NULL) {
        return br_respond(r, resp);
    }
    struct txn_answer *a = kp_calloc(1, sizeof *a);
    if (a == NULL) {
        return KP_E_NOMEM;
    }
    int err = encode_answer(r, resp, &a->frame[ANSWER_OK], &a->len[ANSWER_OK]);
    if (err == 0) {
        set_error(resp, KP_ERR_COORDINATOR_NOT_AVAILABLE);
        err = encode_answer(r, resp, &a->frame[ANSWER_NOT_AVAILABLE], &a->len[ANSWER_NOT_AVAILABLE]);
    }
    if (err == 0) {
        set_error(resp, KP_ERR_NOT_COORDINATOR);
        err = encode_answer(r, resp, &a->frame[ANSWER_NOT_COORDINATOR],
                            &a->len[ANSWER_NOT_COORDINATOR]);
    }
    if (err != 0) {
        answer_free(a);
        return err;
    }
    a->conn = r->conn;
    a->slot = r->slot;
    a->wait.done = answer_done;
    a->wait.cancelled = answer_cancelled;
    if (!br_acks_park_hw(r, &a->wait, p, required, BR_TXN_REQUEST_TIMEOUT_MS)) {
        answer_send(a, ANSWER_OK); /* nothing to wait for after all */
    }
    return 0;
}

/* The same for a change to id's record in __transaction_state. */
static int respond_replicated(struct br_req *r, void *resp, struct kp_str id,
                              void (*set_error)(void *resp, int16_t code))
{
    struct br_server *b = r->b;
    int16_t perr = KP_ERR_NONE;
    size_t len = id.len > 0 ? (size_t)id.len : 0;
    const char *ptr = id.ptr != NULL ? id.ptr : "";
    struct br_partition *p = b->zk != NULL ? txn_log_partition(b, ptr, len, &perr) : NULL;
    const struct br_txn *t = p != NULL ? br_txn_find(&b->txn, ptr, len) : NULL;
    if (t == NULL) {
        return br_respond(r, resp);
    }
    return respond_replicated_at(r, resp, p, t->log_end, set_error);
}

static void init_pid_error(void *resp, int16_t code)
{
    struct kp_InitProducerIdResponse *q = resp;
    q->ErrorCode = code;
    q->ProducerId = -1;
    q->ProducerEpoch = -1;
}

static void end_txn_error(void *resp, int16_t code)
{
    ((struct kp_EndTxnResponse *)resp)->ErrorCode = code;
}

static void add_offsets_error(void *resp, int16_t code)
{
    ((struct kp_AddOffsetsToTxnResponse *)resp)->ErrorCode = code;
}

static void add_partitions_error(void *resp, int16_t code)
{
    struct kp_AddPartitionsToTxnResponse *q = resp;
    for (int32_t i = 0; i < q->Results.count; i++) {
        for (int32_t j = 0; j < q->Results.items[i].Results.count; j++) {
            q->Results.items[i].Results.items[j].ErrorCode = code;
        }
    }
}

static void txn_offset_commit_error(void *resp, int16_t code)
{
    struct kp_TxnOffsetCommitResponse *q = resp;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        for (int32_t j = 0; j < q->Topics.items[i].Partitions.count; j++) {
            if (q->Topics.items[i].Partitions.items[j].ErrorCode == KP_ERR_NONE) {
                q->Topics.items[i].Partitions.items[j].ErrorCode = code;
            }
        }
    }
}

int br_txn_init_producer_id_request(struct br_req *r)
{
    const struct kp_InitProducerIdRequest *q = r->body;
    struct kp_InitProducerIdResponse resp;
    kp_InitProducerIdResponse_init(&resp);
    resp.ProducerId = -1;
    resp.ProducerEpoch = -1;
    resp.ErrorCode = coordinator_error(r->b, q->TransactionalId);
    if (resp.ErrorCode != KP_ERR_NONE) {
        return br_respond(r, &resp);
    }
    resp.ErrorCode = br_txn_init_producer_id(&r->b->txn, q->TransactionalId.ptr,
                                             (size_t)q->TransactionalId.len,
                                             q->TransactionTimeoutMs, br_now_wall_ms(),
                                             &resp.ProducerId, &resp.ProducerEpoch);
    if (resp.ErrorCode != KP_ERR_NONE) {
        resp.ProducerId = -1;
        resp.ProducerEpoch = -1;
        return br_respond(r, &resp);
    }
    br_debug("transactional id \"%.*s\": producer %lld epoch %d", (int)q->TransactionalId.len,
             q->TransactionalId.ptr, (long long)resp.ProducerId, (int)resp.ProducerEpoch);
    return respond_replicated(r, &resp, q->TransactionalId, init_pid_error);
}

/* A partition of the cluster, led here or not (KafkaApis asks its
 * metadata cache). */
static bool partition_known(const struct br_server *b, struct kp_str topic, int32_t index)
{
    return topic.len > 0 && br_mc_partition(&b->mc, topic.ptr, (size_t)topic.len, index) != NULL;
}

int br_h_add_partitions_to_txn(struct br_req *r)
{
    const struct kp_AddPartitionsToTxnRequest *q = r->body;
    struct br_server *b = r->b;
    struct kp_AddPartitionsToTxnResponse resp;
    kp_AddPartitionsToTxnResponse_init(&resp);
    int32_t nt = q->Topics.count > 0 ? q->Topics.count : 0;
    resp.Results.items = br_req_array(r, (size_t)(nt > 0 ? nt : 1), sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = nt;
    /* the whole request's error: the coordinator's, or the first
     * partition that does not exist (KafkaApis: the others then
     * OPERATION_NOT_ATTEMPTED) */
    int16_t whole = KP_ERR_NONE;
    struct br_txn *t = NULL;
    whole = coordinator_error(b, q->TransactionalId);
    if (whole == KP_ERR_NONE) {
        whole = br_txn_check(&b->txn, q->TransactionalId.ptr, (size_t)q->TransactionalId.len,
                             q->ProducerId, q->ProducerEpoch, &t);
    }
    bool unknown = false;
    for (int32_t i = 0; i < nt && whole == KP_ERR_NONE; i++) {
        const struct kp_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic *qt = &q->Topics.items[i];
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            if (!partition_known(b, qt->Name, qt->Partitions.items[j])) {
                unknown = true;
            }
        }
    }
    /* every partition named, added at once (one record) */
    size_t nrefs = 0;
    for (int32_t i = 0; i < nt; i++) {
        nrefs += q->Topics.items[i].Partitions.count > 0 ? (size_t)q->Topics.items[i].Partitions.count
                                                         : 0;
    }
    if (whole == KP_ERR_NONE && !unknown) {
        struct br_txn_partition_ref *refs = br_req_array(r, nrefs > 0 ? nrefs : 1, sizeof *refs);
        if (refs == NULL) {
            return KP_E_NOMEM;
        }
        size_t k = 0;
        for (int32_t i = 0; i < nt; i++) {
            const struct kp_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic *qt =
                &q->Topics.items[i];
            for (int32_t j = 0; j < qt->Partitions.count; j++) {
                refs[k++] = (struct br_txn_partition_ref){qt->Name.ptr, (size_t)qt->Name.len,
                                                          qt->Partitions.items[j]};
            }
        }
        whole = br_txn_add_partitions(&b->txn, t, refs, k, br_now_wall_ms());
    }
    for (int32_t i = 0; i < nt; i++) {
        const struct kp_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic *qt = &q->Topics.items[i];
        struct kp_AddPartitionsToTxnResponse_AddPartitionsToTxnTopicResult *rt =
            &resp.Results.items[i];
        rt->Name = qt->Name;
        int32_t np = qt->Partitions.count > 0 ? qt->Partitions.count : 0;
        rt->Results.items = br_req_array(r, (size_t)(np > 0 ? np : 1), sizeof *rt->Results.items);
        if (rt->Results.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Results.count = np;
        for (int32_t j = 0; j < np; j++) {
            int32_t index = qt->Partitions.items[j];
            int16_t code = whole;
            if (code == KP_ERR_NONE && unknown) {
                code = partition_known(b, qt->Name, index) ? KP_ERR_OPERATION_NOT_ATTEMPTED
                                                           : KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            }
            rt->Results.items[j] = (struct kp_AddPartitionsToTxnResponse_AddPartitionsToTxnPartitionResult){
                index, code};
        }
    }
    if (whole != KP_ERR_NONE || unknown) {
        return br_respond(r, &resp);
    }
    return respond_replicated(r, &resp, q->TransactionalId, add_partitions_error);
}

int br_h_end_txn(struct br_req *r)
{
    const struct kp_EndTxnRequest *q = r->body;
    struct kp_EndTxnResponse resp;
    kp_EndTxnResponse_init(&resp);
    resp.ErrorCode = coordinator_error(r->b, q->TransactionalId);
    if (resp.ErrorCode != KP_ERR_NONE) {
        return br_respond(r, &resp);
    }
    resp.ErrorCode =
        br_txn_end(&r->b->txn, q->TransactionalId.ptr, (size_t)q->TransactionalId.len,
                   q->ProducerId, q->ProducerEpoch, q->Committed, br_now_wall_ms());
    if (resp.ErrorCode != KP_ERR_NONE) {
        return br_respond(r, &resp);
    }
    /* answered once the Prepare (or Complete) record is in the ISR */
    return respond_replicated(r, &resp, q->TransactionalId, end_txn_error);
}

/* The partition of __consumer_offsets group id's offsets go to: of the
 * topic's partitions, or of offsets.topic.num.partitions while it is not
 * made yet (Kafka's GroupCoordinator.partitionFor reads the config; the
 * topic is asked for here, and the group's FindCoordinator waits for it). */
static int32_t offsets_partition_of(struct br_server *b, struct kp_str group)
{
    if (br_groups_ensure_offsets_topic(b) != 0) {
        br_debug("%s is being made: group %.*s's partition by offsets.topic.num.partitions",
                 BR_OFFSETS_TOPIC, (int)(group.len > 0 ? group.len : 0),
                 group.ptr != NULL ? group.ptr : "");
    }
    const struct br_mc_topic *mt =
        br_mc_topic(&b->mc, BR_OFFSETS_TOPIC, sizeof BR_OFFSETS_TOPIC - 1);
    int32_t n = mt != NULL && mt->npartitions > 0 ? mt->npartitions
                                                   : b->cfg.offsets_topic_num_partitions;
    return br_group_partition_for(group.ptr != NULL ? group.ptr : "",
                                  group.len > 0 ? (size_t)group.len : 0, n);
}

int br_h_add_offsets_to_txn(struct br_req *r)
{
    const struct kp_AddOffsetsToTxnRequest *q = r->body;
    struct br_server *b = r->b;
    struct kp_AddOffsetsToTxnResponse resp;
    kp_AddOffsetsToTxnResponse_init(&resp);
    resp.ErrorCode = coordinator_error(b, q->TransactionalId);
    if (resp.ErrorCode != KP_ERR_NONE) {
        return br_respond(r, &resp);
    }
    struct br_txn *t = NULL;
    resp.ErrorCode = br_txn_check(&b->txn, q->TransactionalId.ptr, (size_t)q->TransactionalId.len,
                                  q->ProducerId, q->ProducerEpoch, &t);
    if (resp.ErrorCode != KP_ERR_NONE) {
        return br_respond(r, &resp);
    }
    if (q->GroupId.len <= 0) {
        resp.ErrorCode = KP_ERR_INVALID_GROUP_ID;
        return br_respond(r, &resp);
    }
    /* the group's partition of __consumer_offsets joins the transaction
     * (TransactionCoordinator.handleAddPartitionsToTransaction with it) */
    int32_t index = offsets_partition_of(b, q->GroupId);
    struct br_txn_partition_ref ref = {BR_OFFSETS_TOPIC, sizeof BR_OFFSETS_TOPIC - 1, index};
    resp.ErrorCode = br_txn_add_partitions(&b->txn, t, &ref, 1, br_now_wall_ms());
    if (resp.ErrorCode != KP_ERR_NONE) {
        return br_respond(r, &resp);
    }
    return respond_replicated(r, &resp, q->TransactionalId, add_offsets_error);
}

/* Whether t's open transaction holds partition `index` of
 * __consumer_offsets (AddOffsetsToTxn came first). */
static bool holds_offsets_partition(const struct br_txn *t, int32_t index)
{
    for (size_t i = 0; i < t->nparts; i++) {
        if (t->parts[i].partition == index && strcmp(t->parts[i].topic, BR_OFFSETS_TOPIC) == 0) {
            return true;
        }
    }
    return false;
}

int br_h_txn_offset_commit(struct br_req *r)
{
    const struct kp_TxnOffsetCommitRequest *q = r->body;
    struct br_server *b = r->b;
    struct kp_TxnOffsetCommitResponse resp;
    kp_TxnOffsetCommitResponse_init(&resp);
    int32_t nt = q->Topics.count > 0 ? q->Topics.count : 0;
    resp.Topics.items = br_req_array(r, (size_t)(nt > 0 ? nt : 1), sizeof *resp.Topics.items);
    size_t n = 0;
    for (int32_t i = 0; i < nt; i++) {
        n += q->Topics.items[i].Partitions.count > 0 ? (size_t)q->Topics.items[i].Partitions.count
                                                     : 0;
    }
    struct grp_commit *items = br_req_array(r, n > 0 ? n : 1, sizeof *items);
    if (resp.Topics.items == NULL || items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = nt;
    /* the request's error for every partition: the group's coordinator
     * (this request goes to the group's, as Kafka's), and the producer's
     * when this broker coordinates its transactional id too (always
     * standalone; Kafka's group coordinator learns of a fenced producer
     * only from the partition's producer state, which is checked here
     * where the transaction's record is at hand) */
    int16_t whole = KP_ERR_NONE;
    struct br_txn *t = NULL;
    int gc = br_groups_check_coordinator(b, q->GroupId);
    if (gc != 0) {
        whole = (int16_t)gc; /* NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE */
    } else if (br_txn_coordinates(b, q->TransactionalId)) {
        /* INVALID_PRODUCER_EPOCH, INVALID_PRODUCER_ID_MAPPING, ... */
        whole = br_txn_check(&b->txn, q->TransactionalId.ptr, (size_t)q->TransactionalId.len,
                             q->ProducerId, q->ProducerEpoch, &t);
        if (whole == KP_ERR_NONE &&
            (t->status != BR_TXN_ONGOING ||
             !holds_offsets_partition(t, offsets_partition_of(b, q->GroupId)))) {
            whole = KP_ERR_INVALID_TXN_STATE; /* no AddOffsetsToTxn for this group */
        }
    }
    size_t k = 0;
    for (int32_t i = 0; i < nt; i++) {
        const struct kp_TxnOffsetCommitRequest_TxnOffsetCommitRequestTopic *qt = &q->Topics.items[i];
        const struct br_mc_topic *mt =
            qt->Name.len > 0 ? br_mc_topic(&b->mc, qt->Name.ptr, (size_t)qt->Name.len) : NULL;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            const struct kp_TxnOffsetCommitRequest_TxnOffsetCommitRequestPartition *qp =
                &qt->Partitions.items[j];
            struct grp_commit *c = &items[k++];
            c->topic = qt->Name;
            c->partition = qp->PartitionIndex;
            c->offset = qp->CommittedOffset;
            c->leader_epoch = -1;
            c->metadata = qp->CommittedMetadata;
            c->commit_ts = -1;
            c->err = whole != KP_ERR_NONE ? whole
                     : mt == NULL || qp->PartitionIndex < 0 || qp->PartitionIndex >= mt->npartitions
                         ? KP_ERR_UNKNOWN_TOPIC_OR_PARTITION
                         : 0;
        }
    }
    uint64_t seq = 0;
    if (whole == KP_ERR_NONE) {
        (void)br_grp_txn_commit(b->groups, q->GroupId, q->ProducerId, q->ProducerEpoch, items, k,
                                &seq);
    }
    if (seq != 0) {
        /* the records wait for the transaction's marker; on a cluster the
         * answer waits for the ISR first (a failed wait answers the
         * client an error: its transaction aborts and its marker drops
         * them) */
        (void)br_grp_commit_settle(b->groups, q->GroupId.ptr, (size_t)q->GroupId.len, seq, true);
    }
    k = 0;
    for (int32_t i = 0; i < nt; i++) {
        const struct kp_TxnOffsetCommitRequest_TxnOffsetCommitRequestTopic *qt = &q->Topics.items[i];
        struct kp_TxnOffsetCommitResponse_TxnOffsetCommitResponseTopic *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        int32_t np = qt->Partitions.count > 0 ? qt->Partitions.count : 0;
        rt->Partitions.items = br_req_array(r, (size_t)(np > 0 ? np : 1), sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = np;
        for (int32_t j = 0; j < np; j++) {
            rt->Partitions.items[j].PartitionIndex = qt->Partitions.items[j].PartitionIndex;
            rt->Partitions.items[j].ErrorCode = (int16_t)kp_err_to_wire(items[k++].err);
        }
    }
    if (seq == 0 || b->zk == NULL) {
        return br_respond(r, &resp);
    }
    int perr = 0;
    size_t max_batch = 0;
    struct br_partition *gp = br_group_offsets_partition(b, q->GroupId.ptr, (size_t)q->GroupId.len,
                                                         &max_batch, &perr);
    if (gp == NULL) {
        return br_respond(r, &resp);
    }
    return respond_replicated_at(r, &resp, gp, br_log_end_offset(gp->log),
                                 txn_offset_commit_error);
}

/*
 * WriteTxnMarkers v0 (Kafka 2.0's handleWriteTxnMarkersRequest): a
 * transaction coordinator's markers for the partitions this broker leads,
 * each answered with its own error. Kafka appends them with acks=all: on
 * a cluster the answer waits until the ISR has every marker appended
 * (NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER_OR_FOLLOWER or
 * REQUEST_TIMED_OUT for one that it could not get).
 */

/* A WriteTxnMarkers answer waiting for the ISR: the response (in its own
 * arena) and, per marker appended, its wait and where its code goes. */
struct markers_wait {
    struct br_park park; /* first: its ops (request.h) */
    struct br_server *b;
    struct br_conn *conn;
    struct br_slot *slot;
    int16_t version;
    int32_t correlation_id;
    struct kp_arena arena;
    struct kp_WriteTxnMarkersResponse resp;
    struct br_delayed_produce dp;
    struct br_append_wait *waits; /* n, in arena */
    struct br_delay_link *links;
    int16_t **codes;
    size_t n;
};

static void markers_wait_free(struct markers_wait *mw)
{
    kp_arena_free(&mw->arena);
    kp_free(mw);
}

static void markers_wait_done(struct br_delayed_produce *dp, bool expired)
{
    (void)expired;
    struct markers_wait *mw = dp->owner;
    for (size_t i = 0; i < mw->n; i++) {
        *mw->codes[i] = br_acks_outcome(&mw->waits[i]);
    }
    br_answer_parked(mw->b, mw->conn, mw->slot, KP_API_WRITE_TXN_MARKERS, mw->version,
                     mw->correlation_id, &mw->resp);
    markers_wait_free(mw);
}

static void markers_wait_cancel(struct br_server *b, void *parked)
{
    struct markers_wait *mw = parked;
    br_delayed_produce_cancel(&b->purgatory, &mw->dp);
    markers_wait_free(mw); /* the markers stay appended */
}

static const struct br_park_ops markers_park_ops = {"a WriteTxnMarkers waiting for the ISR",
                                                    markers_wait_cancel};

static void *arena_items(struct kp_arena *a, size_t n, size_t size)
{
    return kp_arena_alloc(a, (n > 0 ? n : 1) * size);
}

int br_h_write_txn_markers(struct br_req *r)
{
    const struct kp_WriteTxnMarkersRequest *q = r->body;
    struct br_server *b = r->b;
    /* a cluster's answer may outlive the request: built in an arena of its own */
    struct markers_wait *mw = NULL;
    struct kp_arena *a = r->arena;
    size_t nmarkers = 0;
    int32_t nm = q->Markers.count > 0 ? q->Markers.count : 0;
    for (int32_t i = 0; i < nm; i++) {
        for (int32_t j = 0; j < q->Markers.items[i].Topics.count; j++) {
            int32_t np = q->Markers.items[i].Topics.items[j].PartitionIndexes.count;
            nmarkers += np > 0 ? (size_t)np : 0;
        }
    }
    if (b->zk != NULL && r->slot != NULL) {
        mw = kp_calloc(1, sizeof *mw);
        if (mw == NULL) {
            return KP_E_NOMEM;
        }
        kp_arena_init(&mw->arena, br_request_arena_max(r->len) + 65536);
        a = &mw->arena;
        mw->waits = arena_items(a, nmarkers, sizeof *mw->waits);
        mw->links = arena_items(a, nmarkers, sizeof *mw->links);
        mw->codes = arena_items(a, nmarkers, sizeof *mw->codes);
        if (mw->waits == NULL || mw->links == NULL || mw->codes == NULL) {
            markers_wait_free(mw);
            return KP_E_NOMEM;
        }
    }
    struct kp_WriteTxnMarkersResponse resp;
    kp_WriteTxnMarkersResponse_init(&resp);
    resp.Markers.items = arena_items(a, (size_t)nm, sizeof *resp.Markers.items);
    int err = resp.Markers.items == NULL ? KP_E_NOMEM : 0;
    resp.Markers.count = nm;
    int64_t now = br_now_wall_ms();
    for (int32_t i = 0; err == 0 && i < nm; i++) {
        const struct kp_WriteTxnMarkersRequest_WritableTxnMarker *m = &q->Markers.items[i];
        struct kp_WriteTxnMarkersResponse_WritableTxnMarkerResult *out = &resp.Markers.items[i];
        out->ProducerId = m->ProducerId;
        int32_t nt = m->Topics.count > 0 ? m->Topics.count : 0;
        out->Topics.items = arena_items(a, (size_t)nt, sizeof *out->Topics.items);
        if (out->Topics.items == NULL) {
            err = KP_E_NOMEM;
            break;
        }
        out->Topics.count = nt;
        for (int32_t j = 0; err == 0 && j < nt; j++) {
            const struct kp_WriteTxnMarkersRequest_WritableTxnMarkerTopic *mt = &m->Topics.items[j];
            struct kp_WriteTxnMarkersResponse_WritableTxnMarkerTopicResult *ot =
                &out->Topics.items[j];
            size_t nlen = mt->Name.len > 0 ? (size_t)mt->Name.len : 0;
            char *name = kp_arena_alloc(a, nlen + 1);
            int32_t np = mt->PartitionIndexes.count > 0 ? mt->PartitionIndexes.count : 0;
            ot->Partitions.items = arena_items(a, (size_t)np, sizeof *ot->Partitions.items);
            if (name == NULL || ot->Partitions.items == NULL) {
                err = KP_E_NOMEM;
                break;
            }
            if (nlen > 0) {
                memcpy(name, mt->Name.ptr, nlen);
            }
            name[nlen] = '\0';
            ot->Name = (struct kp_str){name, mt->Name.len};
            ot->Partitions.count = np;
            for (int32_t k = 0; k < np; k++) {
                int32_t index = mt->PartitionIndexes.items[k];
                struct br_partition *p = NULL;
                int64_t offset = -1;
                int16_t code = append_marker(b, mt->Name, index, m->ProducerId, m->ProducerEpoch,
                                             m->CoordinatorEpoch, m->TransactionResult, now, &p,
                                             &offset);
                ot->Partitions.items[k].PartitionIndex = index;
                ot->Partitions.items[k].ErrorCode = code;
                if (mw != NULL && code == KP_ERR_NONE && p != NULL && offset >= 0) {
                    mw->waits[mw->n] = (struct br_append_wait){p, offset + 1, p->leader_term};
                    mw->codes[mw->n] = &ot->Partitions.items[k].ErrorCode;
                    mw->n++;
                }
            }
        }
    }
    if (err != 0) {
        if (mw != NULL) {
            markers_wait_free(mw);
        }
        return err;
    }
    if (mw == NULL) {
        return br_respond(r, &resp);
    }
    mw->resp = resp;
    br_delayed_produce_init(&mw->dp, mw->waits, mw->links, mw->n, markers_wait_done, mw);
    if (br_delayed_produce_settled(&mw->dp) || br_broker_stopping(b)) {
        for (size_t i = 0; i < mw->n; i++) {
            *mw->codes[i] = br_acks_outcome(&mw->waits[i]);
        }
        int rc = br_respond(r, &mw->resp);
        markers_wait_free(mw);
        return rc;
    }
    mw->park.ops = &markers_park_ops;
    mw->b = b;
    mw->conn = r->conn;
    mw->slot = r->slot;
    mw->version = r->version;
    mw->correlation_id = r->hdr->CorrelationId;
    br_slot_set_parked(r->slot, &mw->park);
    br_delayed_produce_park(&b->purgatory, &mw->dp, br_now_mono_ms() + BR_TXN_REQUEST_TIMEOUT_MS);
    return 0;
}
