/* samsa-broker: request handlers (see request.h). Fetch lives in fetch.c. */
#define _GNU_SOURCE

#include "base/logging.h"
#include "server/admin_manager.h"
#include "server/cluster_wait.h"
#include "server/group.h"
#include "server/acks_wait.h"
#include "server/client_quotas.h"
#include "replica/replication.h"
#include "server/request.h"
#include "server/topic_admin.h"
#include "storage/log_validator.h"

#include <samsa-protocol/record_batch.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- ApiVersions */

int br_h_api_versions(struct br_req *r)
{
    struct kp_ApiVersionsResponse resp;
    kp_ApiVersionsResponse_init(&resp);
    resp.ApiKeys.items = r->b->api.versions;
    resp.ApiKeys.count = (int32_t)r->b->api.nversions;
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- Produce */

/* Validate and append one partition's records; fills the response entry.
 * *owned: a batch this made (an up-converted message set), freed by the
 * caller. */
static void produce_partition(struct br_req *r, const struct kp_ProduceRequest_TopicProduceData *td,
                              const struct kp_ProduceRequest_PartitionProduceData *pd,
                              struct kp_ProduceResponse_PartitionProduceResponse *out,
                              uint8_t **owned)
{
    struct br_server *b = r->b;
    struct kp_str txn_id = ((const struct kp_ProduceRequest *)r->body)->TransactionalId;
    out->Index = pd->Index;
    out->BaseOffset = -1;
    out->LogAppendTimeMs = -1;
    out->LogStartOffset = -1;
    struct br_partition *p = br_rm_leader_partition(&b->rm, td->Name, pd->Index, &out->ErrorCode);
    if (p == NULL) {
        return;
    }
    out->LogStartOffset = br_log_start_offset(p->log);
    const struct kp_ProduceRequest *q = r->body;
    out->ErrorCode = br_partition_check_acks(p, q->Acks, p->topic->config.min_insync_replicas);
    if (out->ErrorCode != KP_ERR_NONE) {
        return;
    }
    if (p->topic->internal) {
        /* only the broker writes to internal topics (Kafka: InvalidTopicException) */
        out->ErrorCode = KP_ERR_INVALID_TOPIC_EXCEPTION;
        return;
    }
    const struct br_topic_config *tc = &p->topic->config;
    bool log_append_time = tc->message_timestamp_type == BR_TIMESTAMP_LOG_APPEND_TIME;
    int64_t now = br_now_wall_ms();
    struct br_validation v = {r->version,
                              tc->max_message_bytes,
                              (size_t)b->cfg.socket_request_max_bytes,
                              log_append_time,
                              now,
                              br_conn_peer(r->conn),
                              txn_id.len >= 0};
    struct br_validated batch;
    size_t len = pd->Records.len > 0 ? (size_t)pd->Records.len : 0;
    out->ErrorCode = br_log_validate(len > 0 ? br_req_mutable(r, pd->Records.ptr) : NULL, len, &v,
                                     &batch);
    *owned = batch.owned;
    if (out->ErrorCode != KP_ERR_NONE) {
        return;
    }
    if (txn_id.len >= 0 && br_txn_coordinates(b, txn_id)) {
        /* a transaction's batch only inside its transaction, where this
         * broker is its coordinator too (txn/coordinator.h) */
        out->ErrorCode = br_txn_check_produce(&b->txn, txn_id.ptr, (size_t)txn_id.len,
                                              batch.h.ProducerId, batch.h.ProducerEpoch,
                                              p->topic->name, strlen(p->topic->name), p->index);
        if (out->ErrorCode != KP_ERR_NONE) {
            br_debug("transactional produce from %s to %s-%" PRId32 " refused: %s",
                     br_conn_peer(r->conn), p->topic->name, p->index,
                     kp_err_name(out->ErrorCode));
            return;
        }
    }
    /* the producer's sequence is checked inside the partition's append */
    struct br_append app;
    int err = br_partition_append_leader(p, batch.batch, batch.size, now, &app);
    if (err != 0) {
        br_error("append to %s-%" PRId32 " failed: %s", p->topic->name, p->index,
                 err < 0 ? kp_err_str(err) : kp_err_name(err));
        out->ErrorCode = KP_ERR_KAFKA_STORAGE_ERROR;
        return;
    }
    if (app.seq_error != KP_ERR_NONE) {
        out->ErrorCode = app.seq_error;
        /* a client told UNKNOWN_PRODUCER_ID starts its sequences over only
         * when the log start passed its last acknowledged offset (Kafka
         * 2.0's TransactionManager.canRetry; ReplicaManager answers it) */
        out->LogStartOffset = br_log_start_offset(p->log);
        return;
    }
    out->ErrorCode = KP_ERR_NONE;
    out->BaseOffset = app.base;
    if (app.duplicate) {
        return; /* a retry of a batch we already have: its original offset */
    }
    p->topic->messages_in += batch.h.RecordCount;
    p->topic->bytes_in += (int64_t)batch.size;
    if (log_append_time) {
        out->LogAppendTimeMs = now;
    }
    out->LogStartOffset = br_log_start_offset(p->log);
}

int br_h_produce(struct br_req *r)
{
    const struct kp_ProduceRequest *q = r->body;
    struct kp_ProduceResponse resp;
    kp_ProduceResponse_init(&resp);
    /* a whole request refused: every partition gets the same error */
    int16_t refused = KP_ERR_NONE;
    bool any_error = false;
    if (q->Acks != 0 && q->Acks != 1 && q->Acks != -1) {
        refused = KP_ERR_INVALID_REQUIRED_ACKS;
    }
    resp.Responses.items = br_req_array(r, (size_t)q->TopicData.count, sizeof *resp.Responses.items);
    if (resp.Responses.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Responses.count = q->TopicData.count;
    /* acks=all on a cluster: the partitions appended wait for their
     * replicas (acks_wait.h) */
    bool wait_replicas = q->Acks == -1;
    size_t nwaits = 0;
    struct br_produce_wait *waits = NULL;
    if (wait_replicas) {
        size_t total = 0;
        for (int32_t i = 0; i < q->TopicData.count; i++) {
            total += (size_t)q->TopicData.items[i].PartitionData.count;
        }
        waits = br_req_array(r, total, sizeof *waits);
        if (waits == NULL) {
            return KP_E_NOMEM;
        }
    }
    for (int32_t i = 0; i < q->TopicData.count; i++) {
        const struct kp_ProduceRequest_TopicProduceData *td = &q->TopicData.items[i];
        struct kp_ProduceResponse_TopicProduceResponse *tr = &resp.Responses.items[i];
        tr->Name = td->Name;
        tr->PartitionResponses.items =
            br_req_array(r, (size_t)td->PartitionData.count, sizeof *tr->PartitionResponses.items);
        if (tr->PartitionResponses.items == NULL) {
            return KP_E_NOMEM;
        }
        tr->PartitionResponses.count = td->PartitionData.count;
        for (int32_t j = 0; j < td->PartitionData.count; j++) {
            struct kp_ProduceResponse_PartitionProduceResponse *out =
                &tr->PartitionResponses.items[j];
            if (refused != KP_ERR_NONE) {
                out->Index = td->PartitionData.items[j].Index;
                out->ErrorCode = refused;
                out->BaseOffset = -1;
                out->LogAppendTimeMs = -1;
                out->LogStartOffset = -1;
                any_error = true;
                continue;
            }
            uint8_t *owned = NULL;
            produce_partition(r, td, &td->PartitionData.items[j], out, &owned);
            kp_free(owned);
            any_error = any_error || out->ErrorCode != KP_ERR_NONE;
            if (wait_replicas && out->ErrorCode == KP_ERR_NONE) {
                int16_t ignored = 0;
                struct br_partition *p =
                    br_rm_leader_partition(&r->b->rm, td->Name, out->Index, &ignored);
                if (p != NULL) {
                    /* the log end now is the end of what this request appended */
                    waits[nwaits++] = (struct br_produce_wait){p, br_log_end_offset(p->log), i, j};
                }
            }
        }
    }
    /* producer_byte_rate: the request's bytes, after the append; the
     * connection muted for the throttle time (KafkaApis.handleProduceRequest) */
    resp.ThrottleTimeMs = br_client_quotas_produce(r->b, r->conn, r->hdr->ClientId, r->len);
    if (q->Acks == 0) {
        if (any_error) {
            /* Kafka closes the connection (KafkaApis.handleProduceRequest,
             * closeConnection): the producer then refreshes its metadata,
             * where a dropped batch would leave it no signal at all */
            br_info("acks=0 produce from %s failed: closing the connection", br_conn_peer(r->conn));
            br_conn_close_after_flush(r->conn);
        }
        return 0; /* no response: the client expects none */
    }
    if (nwaits > 0) {
        int rc = br_acks_park_produce(r, &resp, waits, nwaits, q->TimeoutMs);
        if (rc <= 0) {
            return rc; /* parked (answered later), or out of memory */
        }
    }
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- ListOffsets */

int br_h_list_offsets(struct br_req *r)
{
    const struct kp_ListOffsetsRequest *q = r->body;
    struct kp_ListOffsetsResponse resp;
    kp_ListOffsetsResponse_init(&resp);
    resp.Topics.items = br_req_array(r, (size_t)q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = q->Topics.count;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_ListOffsetsRequest_ListOffsetsTopic *qt = &q->Topics.items[i];
        struct kp_ListOffsetsResponse_ListOffsetsTopicResponse *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        rt->Partitions.items =
            br_req_array(r, (size_t)qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            const struct kp_ListOffsetsRequest_ListOffsetsPartition *qp = &qt->Partitions.items[j];
            struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse *rp =
                &rt->Partitions.items[j];
            rp->PartitionIndex = qp->PartitionIndex;
            rp->Timestamp = -1;
            rp->Offset = -1;
            struct br_partition *p =
                br_rm_leader_partition(&r->b->rm, qt->Name, qp->PartitionIndex, &rp->ErrorCode);
            if (p == NULL) {
                continue;
            }
            int64_t offset = -1;
            int64_t ts = -1;
            /* what the consumer may read: below the LSO when read_committed
             * (Kafka 2.0's fetchOffsetsForTimestamp: lastFetchableOffset) */
            int64_t fetchable =
                r->version >= 2 && q->IsolationLevel == 1 ? br_partition_lso(p) : p->hw;
            if (qp->Timestamp == -1) {
                offset = fetchable;
            } else if (qp->Timestamp == -2) {
                offset = br_log_start_offset(p->log);
            } else {
                int err = br_log_offset_for_timestamp(p->log, qp->Timestamp, &offset, &ts);
                if (err != 0) {
                    /* a damaged batch on the way: CORRUPT_MESSAGE, as Kafka */
                    rp->ErrorCode =
                        err == KP_E_CORRUPT ? KP_ERR_CORRUPT_MESSAGE : KP_ERR_KAFKA_STORAGE_ERROR;
                    continue;
                }
                if (offset >= fetchable) {
                    offset = -1;
                    ts = -1;
                }
            }
            rp->ErrorCode = KP_ERR_NONE;
            rp->Offset = offset;
            rp->Timestamp = ts;
            if (r->version == 0) {
                /* v0: a list of offsets; MaxNumOffsets is at least 1 here */
                int64_t *one = br_req_array(r, 1, sizeof *one);
                if (one == NULL) {
                    return KP_E_NOMEM;
                }
                one[0] = offset;
                rp->OldStyleOffsets.items = one;
                rp->OldStyleOffsets.count = offset >= 0 && qp->MaxNumOffsets > 0 ? 1 : 0;
            }
        }
    }
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- CreateTopics */

/* A topic's manual assignment (kafka-topics.sh --replica-assignment, an
 * AdminClient's NewTopic with replicasAssignments), checked as Kafka 2.0's
 * AdminZkClient.validateCreateOrUpdateTopic checks it: the partitions 0..n-1
 * in order, lists of one length, no broker twice in a list. Kafka 2.0 takes
 * unknown broker ids here (its AdminManager.createTopics says so); Samsa
 * refuses them, as Kafka's own CreatePartitions and the CreateTopics of
 * Kafka 2.4 on do ("Unknown broker(s) in replica assignment"): a partition
 * placed on brokers that do not exist has no leader to elect. On success
 * *out holds partitions x *rf ids partition-major, in r's arena. Returns 0,
 * KP_ERR_INVALID_REPLICA_ASSIGNMENT with err, or KP_E_NOMEM. */
static int manual_assignment(struct br_req *r,
                             const struct kp_CreateTopicsRequest_CreatableTopic *ct, int32_t **out,
                             int16_t *rf, char *err, size_t errlen)
{
    const struct br_server *b = r->b;
    int32_t n = ct->Assignments.count;
    if (n > BR_MAX_PARTITIONS) {
        (void)snprintf(err, errlen, "number of partitions must be 1-%d", BR_MAX_PARTITIONS);
        return KP_ERR_INVALID_PARTITIONS;
    }
    /* each id known and none twice: no list longer than the brokers */
    int32_t width = ct->Assignments.items[0].BrokerIds.count;
    size_t live = br_broker_live_count(b);
    if (width < 1 || (size_t)width > live) {
        (void)snprintf(err, errlen,
                       "partition 0: %" PRId32 " replica(s), where 1 to the %zu broker(s) of the "
                       "cluster can be",
                       width, live);
        return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    int32_t *ids = br_req_array(r, (size_t)n * (size_t)width, sizeof *ids);
    if (ids == NULL) {
        return KP_E_NOMEM;
    }
    for (int32_t a = 0; a < n; a++) {
        const struct kp_CreateTopicsRequest_CreatableReplicaAssignment *as =
            &ct->Assignments.items[a];
        if (as->PartitionIndex != a) {
            (void)snprintf(err, errlen, "partition %" PRId32 " where %" PRId32 " was expected",
                           as->PartitionIndex, a);
            return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
        }
        if (as->BrokerIds.count != width) {
            (void)snprintf(err, errlen, "All partitions should have the same number of replicas");
            return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
        }
        for (int32_t k = 0; k < width; k++) {
            int32_t id = as->BrokerIds.items[k];
            if (!br_broker_known(b, id)) {
                (void)snprintf(err, errlen, "Unknown broker(s) in replica assignment: %" PRId32 ".",
                               id);
                return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
            }
            for (int32_t j = 0; j < k; j++) {
                if (as->BrokerIds.items[j] == id) {
                    (void)snprintf(err, errlen,
                                   "Duplicate replica assignment found: partition %" PRId32
                                   " names broker %" PRId32 " twice",
                                   a, id);
                    return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
                }
            }
            ids[(size_t)a * (size_t)width + (size_t)k] = id;
        }
    }
    *out = ids;
    *rf = (int16_t)width;
    return 0;
}

int br_h_create_topics(struct br_req *r)
{
    const struct kp_CreateTopicsRequest *q = r->body;
    struct br_server *b = r->b;
    struct kp_CreateTopicsResponse resp;
    kp_CreateTopicsResponse_init(&resp);
    resp.Topics.items = br_req_array(r, (size_t)q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = q->Topics.count;
    /* what the answer waits for (the topics' ZooKeeper writes on a
     * cluster) */
    struct br_cluster_create *waiter = NULL;
    if (!q->ValidateOnly && b->admin_ops->create_begin(b, &waiter) != 0) {
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_CreateTopicsRequest_CreatableTopic *ct = &q->Topics.items[i];
        struct kp_CreateTopicsResponse_CreatableTopicResult *out = &resp.Topics.items[i];
        out->Name = ct->Name;
        out->ErrorMessage = KP_STR_NULL;
        char err[256] = "";
        int e;
        int32_t partitions = ct->NumPartitions;
        int16_t rf = ct->ReplicationFactor;
        const int32_t *replicas = NULL;
        if (ct->Assignments.count > 0) {
            int32_t *manual = NULL;
            e = manual_assignment(r, ct, &manual, &rf, err, sizeof err);
            if (e == KP_E_NOMEM) {
                return e;
            }
            if (e != 0) {
                out->ErrorCode = (int16_t)e;
                out->ErrorMessage.len = (int32_t)strlen(err);
                char *m = kp_arena_alloc(r->arena, (size_t)out->ErrorMessage.len + 1);
                if (m != NULL) {
                    memcpy(m, err, (size_t)out->ErrorMessage.len + 1);
                    out->ErrorMessage.ptr = m;
                } else {
                    out->ErrorMessage = KP_STR_NULL;
                }
                continue;
            }
            partitions = ct->Assignments.count;
            replicas = manual;
        }
        if (partitions == -1) {
            partitions = b->cfg.num_partitions;
        }
        if (rf == -1) {
            rf = (int16_t)b->cfg.default_replication_factor;
        }
        struct br_kv *kv = NULL;
        size_t nkv = 0;
        if (ct->Configs.count > 0) {
            kv = br_req_array(r, (size_t)ct->Configs.count, sizeof *kv);
            if (kv == NULL) {
                return KP_E_NOMEM;
            }
            for (int32_t c = 0; c < ct->Configs.count; c++) {
                kv[nkv].key = ct->Configs.items[c].Name;
                kv[nkv].value = ct->Configs.items[c].Value;
                nkv++;
            }
        }
        b->ca.create_waiter = waiter;
        b->ca.create_waiter_index = i;
        e = br_broker_create_topic(b, ct->Name, partitions, rf, replicas, kv, nkv, q->ValidateOnly,
                                   err, sizeof err);
        b->ca.create_waiter = NULL;
        out->ErrorCode = (int16_t)kp_err_to_wire(e);
        if (e != 0 && err[0] != '\0') {
            size_t ml = strlen(err);
            char *m = kp_arena_alloc(r->arena, ml + 1);
            if (m != NULL) {
                memcpy(m, err, ml + 1);
                out->ErrorMessage.ptr = m;
                out->ErrorMessage.len = (int32_t)ml;
            }
        }
    }
    return b->admin_ops->create_answer(r, waiter, &resp, q->TimeoutMs, q->ValidateOnly);
}

/* ---------------------------------------------------------------- InitProducerId */

int br_h_init_producer_id(struct br_req *r)
{
    const struct kp_InitProducerIdRequest *q = r->body;
    struct kp_InitProducerIdResponse resp;
    kp_InitProducerIdResponse_init(&resp);
    if (q->TransactionalId.len >= 0) {
        return br_txn_init_producer_id_request(r); /* api_txn.c */
    }
    /* ids unique across the cluster (blocks claimed in ZooKeeper), or this
     * broker's */
    return r->b->admin_ops->init_producer_id(r);
}

/* ---------------------------------------------------------------- DescribeConfigs */

#define RESOURCE_TOPIC 2

/* A topic of the cluster this broker hosts no replica of: its configs are
 * read from ZooKeeper, as a Kafka 2.0 broker's AdminManager reads every
 * topic's. */
static bool elsewhere(struct br_server *b,
                      const struct kp_DescribeConfigsRequest_DescribeConfigsResource *res)
{
    return res->ResourceType == RESOURCE_TOPIC && res->ResourceName.len > 0 &&
           br_rm_find_topic(&b->rm, res->ResourceName) == NULL &&
           br_mc_topic(&b->mc, res->ResourceName.ptr, (size_t)res->ResourceName.len) != NULL;
}

int br_h_describe_configs(struct br_req *r)
{
    const struct kp_DescribeConfigsRequest *q = r->body;
    struct br_server *b = r->b;
    bool synonyms = r->version >= 1 && q->IncludeSynonyms;
    size_t n = q->Resources.count > 0 ? (size_t)q->Resources.count : 0;
    bool wait = false;
    for (size_t i = 0; i < n && !wait; i++) {
        wait = elsewhere(b, &q->Resources.items[i]);
    }
    if (wait) {
        /* answered once ZooKeeper has given the configs of the topics
         * hosted elsewhere (cluster_wait.c builds the response) */
        struct br_cwait *w = br_cwait_new(r, n);
        if (w == NULL) {
            return KP_E_NOMEM;
        }
        w->synonyms = synonyms;
        for (size_t i = 0; i < n; i++) {
            const struct kp_DescribeConfigsRequest_DescribeConfigsResource *res =
                &q->Resources.items[i];
            if (br_cwait_name(w, i, res->ResourceName, res->ResourceType) != 0 ||
                br_cwait_keys(w, i, res->ConfigurationKeys.items, res->ConfigurationKeys.count) !=
                    0) {
                br_cwait_done(w, i, KP_ERR_UNKNOWN_SERVER_ERROR, "out of memory");
            } else if (elsewhere(b, res)) {
                br_cluster_describe_topic(b, w, i);
            } else {
                br_cwait_done(w, i, KP_ERR_NONE, NULL); /* from this broker's state */
            }
        }
        return br_cwait_park(w, r, BR_ALTER_CONFIGS_WAIT_MS);
    }
    struct kp_DescribeConfigsResponse resp;
    kp_DescribeConfigsResponse_init(&resp);
    resp.Results.items = br_req_array(r, n, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = (int32_t)n;
    for (size_t i = 0; i < n; i++) {
        const struct kp_DescribeConfigsRequest_DescribeConfigsResource *res =
            &q->Resources.items[i];
        int err = br_describe_config_resource(
            b, r->arena, res->ResourceType, res->ResourceName, res->ConfigurationKeys.items,
            res->ConfigurationKeys.count, synonyms, NULL, &resp.Results.items[i]);
        if (err != 0) {
            return err;
        }
    }
    return br_respond(r, &resp);
}
