/*
 * samsa-broker: the transaction coordinator's requests (Kafka 2.0's
 * KafkaApis.handleInitProducerIdRequest with a transactional id,
 * handleAddPartitionToTxnRequest, handleEndTxnRequest; FindCoordinator of
 * key type 1 in group_handlers.c) and the markers the coordinator writes
 * on this broker's partitions.
 *
 * Standalone only so far: the coordinator's records live in memory and
 * every partition is led here, so the markers are appended at once
 * (a cluster's WriteTxnMarkers to other leaders is not there yet). On a
 * cluster these requests answer COORDINATOR_NOT_AVAILABLE.
 */
#include <string.h>

#include <samsa-protocol/alloc.h>

#include "base/clock.h"
#include "base/logging.h"
#include "reactor/net.h"
#include "replica/replica_manager.h"
#include "server/request.h"
#include "server/state.h"
#include "txn/coordinator.h"

/* The coordinator's ops on this broker. */
static int new_producer_id(void *ctx, int64_t *id)
{
    return br_broker_next_producer_id(ctx, id);
}

static bool write_markers(void *ctx, const struct br_txn *t, bool commit, int32_t coordinator_epoch)
{
    struct br_server *b = ctx;
    bool all = true;
    int64_t now = br_now_wall_ms();
    for (size_t i = 0; i < t->nparts; i++) {
        const struct br_txn_partition *tp = &t->parts[i];
        int16_t lerr = KP_ERR_NONE;
        struct br_partition *p =
            br_rm_leader_partition(&b->rm, kp_str_c(tp->topic), tp->partition, &lerr);
        if (p == NULL) {
            if (lerr == KP_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
                /* deleted since: nothing is left to mark (Kafka drops it) */
                continue;
            }
            all = false;
            continue;
        }
        int16_t kerr = KP_ERR_NONE;
        int64_t offset = -1;
        int err = br_partition_append_marker(p, t->producer_id, t->epoch, coordinator_epoch, commit,
                                             now, &kerr, &offset);
        if (err != 0) {
            br_error("%s-%d: the %s marker of transactional id \"%s\" could not be written: %s",
                     tp->topic, (int)tp->partition, commit ? "COMMIT" : "ABORT", t->id,
                     kp_err_str(err));
            all = false;
        } else if (kerr != KP_ERR_NONE) {
            /* the partition knows a newer epoch or coordinator: this
             * transaction's marker is not needed there (Kafka stops) */
            br_warn("%s-%d: the %s marker of transactional id \"%s\" refused: %s", tp->topic,
                    (int)tp->partition, commit ? "COMMIT" : "ABORT", t->id, kp_err_name(kerr));
        }
    }
    return all;
}

static const struct br_txn_ops txn_ops = {new_producer_id, write_markers};

void br_txn_server_start(struct br_server *b)
{
    br_txn_init(&b->txn, &txn_ops, b, b->cfg.transaction_max_timeout_ms,
                b->cfg.transactional_id_expiration_ms,
                b->cfg.transaction_abort_cleanup_interval_ms);
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
    resp.ErrorCode = br_txn_init_producer_id(&r->b->txn, q->TransactionalId.ptr,
                                             (size_t)q->TransactionalId.len,
                                             q->TransactionTimeoutMs, br_now_mono_ms(),
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
    int64_t now = br_now_mono_ms();
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
            } else if (code == KP_ERR_NONE &&
                       br_txn_add_partition(&b->txn, t, qt->Name.ptr, (size_t)qt->Name.len, index,
                                            now) != 0) {
                code = KP_ERR_COORDINATOR_NOT_AVAILABLE;
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
                   q->ProducerId, q->ProducerEpoch, q->Committed, br_now_mono_ms());
    return br_respond(r, &resp);
}
