/*
 * samsa-broker: the transaction coordinator's requests (Kafka 2.0's
 * KafkaApis.handleInitProducerIdRequest with a transactional id,
 * handleAddPartitionToTxnRequest, handleEndTxnRequest; FindCoordinator of
 * key type 1 in group_handlers.c), its records in __transaction_state and
 * the markers it writes on this broker's partitions.
 *
 * Standalone only so far: every partition is led here, so the markers are
 * appended at once (a cluster's WriteTxnMarkers to other leaders is not
 * there yet). On a cluster these requests answer COORDINATOR_NOT_AVAILABLE.
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
#include "server/state.h"
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
    struct br_kv kvs[N_TXN_SETTINGS + 1];
    for (size_t i = 0; i < N_TXN_SETTINGS; i++) {
        kvs[i].key = kp_str_c(txn_topic_settings[i].key);
        kvs[i].value = kp_str_c(txn_topic_settings[i].value);
    }
    char seg[24];
    (void)snprintf(seg, sizeof seg, "%" PRId32, b->cfg.transaction_state_log_segment_bytes);
    kvs[N_TXN_SETTINGS].key = kp_str_c("segment.bytes");
    kvs[N_TXN_SETTINGS].value = kp_str_c(seg);
    struct br_internal_topic it = {
        TXN_TOPIC,
        b->cfg.transaction_state_log_num_partitions,
        b->txn_topic_rf,
        b->cfg.transaction_state_log_replication_factor,
        "transaction.state.log.replication.factor",
        kvs,
        N_TXN_SETTINGS + 1,
        &b->txn_topic_create_ms,
    };
    return br_ensure_internal_topic(b, &it);
}

/* The partition of __transaction_state id's records go to, led here, or
 * NULL with *err (TransactionStateManager.partitionFor: Java's String
 * hashCode, as the group's). */
static struct br_partition *txn_partition(struct br_server *b, const char *id, size_t len,
                                          int16_t *err)
{
    int e = ensure_txn_topic(b);
    if (e != 0) {
        *err = (int16_t)e;
        return NULL;
    }
    const struct br_mc_topic *mt = br_mc_topic(&b->mc, TXN_TOPIC, sizeof TXN_TOPIC - 1);
    int perr = 0;
    struct br_partition *p = br_internal_partition(br_rm_find_topic(&b->rm, kp_str_c(TXN_TOPIC)),
                                                   mt != NULL ? mt->npartitions : 0, id, len, &perr);
    *err = (int16_t)perr;
    return p;
}

int br_txn_find_coordinator(struct br_server *b, struct kp_str id)
{
    if (!br_txn_served_here(b)) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    int16_t err = KP_ERR_NONE;
    return txn_partition(b, id.ptr != NULL ? id.ptr : "", id.len > 0 ? (size_t)id.len : 0, &err) !=
                   NULL
               ? 0
               : err;
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
                             int64_t now)
{
    int16_t lerr = KP_ERR_NONE;
    struct br_partition *p = br_rm_leader_partition(&b->rm, topic, partition, &lerr);
    if (p == NULL) {
        return lerr;
    }
    int16_t kerr = KP_ERR_NONE;
    int64_t offset = -1;
    int err =
        br_partition_append_marker(p, pid, epoch, coordinator_epoch, commit, now, &kerr, &offset);
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

static bool write_markers(void *ctx, const struct br_txn *t, bool commit, int32_t coordinator_epoch)
{
    struct br_server *b = ctx;
    bool all = true;
    int64_t now = br_now_wall_ms();
    for (size_t i = 0; i < t->nparts; i++) {
        const struct br_txn_partition *tp = &t->parts[i];
        int16_t e = append_marker(b, kp_str_c(tp->topic), tp->partition, t->producer_id, t->epoch,
                                  coordinator_epoch, commit, now);
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
                        struct kp_bytes value)
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
    br_txn_fini(&b->txn);
}

bool br_txn_served_here(const struct br_server *b)
{
    return b->zk == NULL;
}

/* The transactional id as the coordinator takes it; false (and a warning)
 * on a cluster. */
static bool coordinated_here(struct br_req *r, struct kp_str id)
{
    if (br_txn_served_here(r->b)) {
        return true;
    }
    br_warn("%s: transactional id \"%.*s\": transactions run on a standalone broker only so far",
            br_conn_peer(r->conn), (int)(id.len > 0 ? id.len : 0), id.ptr != NULL ? id.ptr : "");
    return false;
}

int br_txn_init_producer_id_request(struct br_req *r)
{
    const struct kp_InitProducerIdRequest *q = r->body;
    struct kp_InitProducerIdResponse resp;
    kp_InitProducerIdResponse_init(&resp);
    resp.ProducerId = -1;
    resp.ProducerEpoch = -1;
    if (!coordinated_here(r, q->TransactionalId)) {
        resp.ErrorCode = KP_ERR_COORDINATOR_NOT_AVAILABLE;
        return br_respond(r, &resp);
    }
    int avail = br_txn_find_coordinator(r->b, q->TransactionalId);
    if (avail != 0) {
        resp.ErrorCode = (int16_t)avail;
        return br_respond(r, &resp);
    }
    resp.ErrorCode = br_txn_init_producer_id(&r->b->txn, q->TransactionalId.ptr,
                                             (size_t)q->TransactionalId.len,
                                             q->TransactionTimeoutMs, br_now_wall_ms(),
                                             &resp.ProducerId, &resp.ProducerEpoch);
    if (resp.ErrorCode == KP_ERR_NONE) {
        br_debug("transactional id \"%.*s\": producer %lld epoch %d", (int)q->TransactionalId.len,
                 q->TransactionalId.ptr, (long long)resp.ProducerId, (int)resp.ProducerEpoch);
    } else {
        resp.ProducerId = -1;
        resp.ProducerEpoch = -1;
    }
    return br_respond(r, &resp);
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
    if (!coordinated_here(r, q->TransactionalId)) {
        whole = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    } else {
        whole = br_txn_check(&b->txn, q->TransactionalId.ptr, (size_t)q->TransactionalId.len,
                             q->ProducerId, q->ProducerEpoch, &t);
    }
    bool unknown = false;
    for (int32_t i = 0; i < nt && whole == KP_ERR_NONE; i++) {
        const struct kp_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic *qt = &q->Topics.items[i];
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            int16_t lerr = KP_ERR_NONE;
            if (br_rm_leader_partition(&b->rm, qt->Name, qt->Partitions.items[j], &lerr) == NULL) {
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
                int16_t lerr = KP_ERR_NONE;
                code = br_rm_leader_partition(&b->rm, qt->Name, index, &lerr) == NULL
                           ? lerr
                           : KP_ERR_OPERATION_NOT_ATTEMPTED;
            }
            rt->Results.items[j] = (struct kp_AddPartitionsToTxnResponse_AddPartitionsToTxnPartitionResult){
                index, code};
        }
    }
    return br_respond(r, &resp);
}

int br_h_end_txn(struct br_req *r)
{
    const struct kp_EndTxnRequest *q = r->body;
    struct kp_EndTxnResponse resp;
    kp_EndTxnResponse_init(&resp);
    if (!coordinated_here(r, q->TransactionalId)) {
        resp.ErrorCode = KP_ERR_COORDINATOR_NOT_AVAILABLE;
        return br_respond(r, &resp);
    }
    resp.ErrorCode =
        br_txn_end(&r->b->txn, q->TransactionalId.ptr, (size_t)q->TransactionalId.len,
                   q->ProducerId, q->ProducerEpoch, q->Committed, br_now_wall_ms());
    return br_respond(r, &resp);
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
    if (!coordinated_here(r, q->TransactionalId)) {
        resp.ErrorCode = KP_ERR_COORDINATOR_NOT_AVAILABLE;
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
    return br_respond(r, &resp);
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
    /* the request's error for every partition: the producer's (the
     * transaction coordinator is this broker: Kafka's group coordinator
     * learns of a fenced producer from the partition's producer state),
     * the group's coordinator */
    int16_t whole = KP_ERR_NONE;
    struct br_txn *t = NULL;
    if (!coordinated_here(r, q->TransactionalId)) {
        whole = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    } else if ((whole = br_txn_check(&b->txn, q->TransactionalId.ptr,
                                     (size_t)q->TransactionalId.len, q->ProducerId,
                                     q->ProducerEpoch, &t)) != KP_ERR_NONE) {
        /* INVALID_PRODUCER_EPOCH, INVALID_PRODUCER_ID_MAPPING, ... */
    } else if (t->status != BR_TXN_ONGOING ||
               !holds_offsets_partition(t, offsets_partition_of(b, q->GroupId))) {
        whole = KP_ERR_INVALID_TXN_STATE; /* no AddOffsetsToTxn for this group */
    } else {
        int c = br_groups_check_coordinator(b, q->GroupId);
        whole = c != 0 ? (int16_t)c : KP_ERR_NONE;
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
        /* standalone: the records are in the log's only replica now; they
         * wait for the transaction's marker */
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
    return br_respond(r, &resp);
}

/*
 * WriteTxnMarkers v0 (Kafka 2.0's handleWriteTxnMarkersRequest): a
 * transaction coordinator's markers for the partitions this broker leads,
 * each answered with its own error. Kafka appends them with acks=all; here
 * the answer follows the local append (on a cluster, before the followers
 * have the marker: the coordinator here writes its own markers and does
 * not send this request yet).
 */
int br_h_write_txn_markers(struct br_req *r)
{
    const struct kp_WriteTxnMarkersRequest *q = r->body;
    struct kp_WriteTxnMarkersResponse resp;
    kp_WriteTxnMarkersResponse_init(&resp);
    int32_t nm = q->Markers.count > 0 ? q->Markers.count : 0;
    resp.Markers.items = br_req_array(r, (size_t)(nm > 0 ? nm : 1), sizeof *resp.Markers.items);
    if (resp.Markers.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Markers.count = nm;
    int64_t now = br_now_wall_ms();
    for (int32_t i = 0; i < nm; i++) {
        const struct kp_WriteTxnMarkersRequest_WritableTxnMarker *m = &q->Markers.items[i];
        struct kp_WriteTxnMarkersResponse_WritableTxnMarkerResult *out = &resp.Markers.items[i];
        out->ProducerId = m->ProducerId;
        int32_t nt = m->Topics.count > 0 ? m->Topics.count : 0;
        out->Topics.items = br_req_array(r, (size_t)(nt > 0 ? nt : 1), sizeof *out->Topics.items);
        if (out->Topics.items == NULL) {
            return KP_E_NOMEM;
        }
        out->Topics.count = nt;
        for (int32_t j = 0; j < nt; j++) {
            const struct kp_WriteTxnMarkersRequest_WritableTxnMarkerTopic *mt = &m->Topics.items[j];
            struct kp_WriteTxnMarkersResponse_WritableTxnMarkerTopicResult *ot =
                &out->Topics.items[j];
            ot->Name = mt->Name;
            int32_t np = mt->PartitionIndexes.count > 0 ? mt->PartitionIndexes.count : 0;
            ot->Partitions.items =
                br_req_array(r, (size_t)(np > 0 ? np : 1), sizeof *ot->Partitions.items);
            if (ot->Partitions.items == NULL) {
                return KP_E_NOMEM;
            }
            ot->Partitions.count = np;
            for (int32_t k = 0; k < np; k++) {
                int32_t index = mt->PartitionIndexes.items[k];
                ot->Partitions.items[k].PartitionIndex = index;
                ot->Partitions.items[k].ErrorCode =
                    append_marker(r->b, mt->Name, index, m->ProducerId, m->ProducerEpoch,
                                  m->CoordinatorEpoch, m->TransactionResult, now);
            }
        }
    }
    return br_respond(r, &resp);
}
