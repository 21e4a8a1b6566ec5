/*
 * samsa-broker: what a request gets when its response could not be built or
 * encoded (see request.h): Kafka's answer to a request whose handling threw.
 *
 * Kafka 2.0 (KafkaApis.handle catches every Throwable into handleError, then
 * sendErrorOrCloseConnection) answers with the request's getErrorResponse:
 * every entry the request named carries the error and nothing else, and the
 * connection is closed only when the API has no error response (acks=0
 * Produce). Each function below is that getErrorResponse for one API
 * (clients/src/main/java/org/apache/kafka/common/requests/<Api>Request.java).
 *
 * An error answer holds one small entry per entry of the request, so it is
 * built in an arena of its own sized from the request, not from
 * response.max.bytes: a response too large for the ceiling still gets its
 * answer.
 */
#define _GNU_SOURCE

#include "base/logging.h"
#include "server/request.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* What every error answer needs. */
struct answer {
    struct br_req *r;
    struct kp_arena *a; /* the answer's arrays */
    int16_t code;       /* the wire error code */
    struct kp_str msg;  /* for the responses that carry a message */
};

/* n zeroed items for an answer echoing a request array of `count` (-1: null). */
static void *items(struct answer *x, int32_t count, size_t size)
{
    size_t n = count > 0 ? (size_t)count : 0;
    return kp_arena_alloc(x->a, (n == 0 ? 1 : n) * size);
}

static int32_t count_of(int32_t count)
{
    return count > 0 ? count : 0;
}

/* The answer's bytes are bounded by the request's (one entry per entry), so
 * the only ceiling is a frame's. */
static int send_answer(struct answer *x, const void *resp)
{
    return br_respond_max(x->r, resp, (size_t)INT32_MAX);
}

static int produce_error(struct answer *x)
{
    const struct kp_ProduceRequest *q = x->r->body;
    struct kp_ProduceResponse resp;
    kp_ProduceResponse_init(&resp);
    resp.Responses.items = items(x, q->TopicData.count, sizeof *resp.Responses.items);
    if (resp.Responses.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Responses.count = count_of(q->TopicData.count);
    for (int32_t i = 0; i < resp.Responses.count; i++) {
        const struct kp_ProduceRequest_TopicProduceData *qt = &q->TopicData.items[i];
        struct kp_ProduceResponse_TopicProduceResponse *rt = &resp.Responses.items[i];
        rt->Name = qt->Name;
        rt->PartitionResponses.items =
            items(x, qt->PartitionData.count, sizeof *rt->PartitionResponses.items);
        if (rt->PartitionResponses.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->PartitionResponses.count = count_of(qt->PartitionData.count);
        for (int32_t j = 0; j < rt->PartitionResponses.count; j++) {
            struct kp_ProduceResponse_PartitionProduceResponse *rp =
                &rt->PartitionResponses.items[j];
            rp->Index = qt->PartitionData.items[j].Index;
            rp->ErrorCode = x->code;
            rp->BaseOffset = -1;
            rp->LogAppendTimeMs = -1;
            rp->LogStartOffset = -1;
        }
    }
    return send_answer(x, &resp);
}

/* FetchRequest.getErrorResponse: the top-level error (v7+) and the same
 * error in every partition, with no records. */
static int fetch_error(struct answer *x)
{
    const struct kp_FetchRequest *q = x->r->body;
    struct kp_FetchResponse resp;
    kp_FetchResponse_init(&resp);
    resp.ErrorCode = x->code;
    resp.SessionId = 0; /* no fetch sessions are kept */
    resp.Responses.items = items(x, q->Topics.count, sizeof *resp.Responses.items);
    if (resp.Responses.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Responses.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Responses.count; i++) {
        const struct kp_FetchRequest_FetchTopic *qt = &q->Topics.items[i];
        struct kp_FetchResponse_FetchableTopicResponse *rt = &resp.Responses.items[i];
        rt->Topic = qt->Topic;
        rt->Partitions.items = items(x, qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = count_of(qt->Partitions.count);
        for (int32_t j = 0; j < rt->Partitions.count; j++) {
            struct kp_FetchResponse_PartitionData *rp = &rt->Partitions.items[j];
            rp->PartitionIndex = qt->Partitions.items[j].Partition;
            rp->ErrorCode = x->code;
            rp->HighWatermark = -1;
            rp->LastStableOffset = -1;
            rp->LogStartOffset = -1;
            rp->PreferredReadReplica = -1;
            rp->Records.ptr = (const uint8_t *)"";
            rp->Records.len = 0;
        }
    }
    return send_answer(x, &resp);
}

static int list_offsets_error(struct answer *x)
{
    const struct kp_ListOffsetsRequest *q = x->r->body;
    struct kp_ListOffsetsResponse resp;
    kp_ListOffsetsResponse_init(&resp);
    resp.Topics.items = items(x, q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Topics.count; i++) {
        const struct kp_ListOffsetsRequest_ListOffsetsTopic *qt = &q->Topics.items[i];
        struct kp_ListOffsetsResponse_ListOffsetsTopicResponse *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        rt->Partitions.items = items(x, qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = count_of(qt->Partitions.count);
        for (int32_t j = 0; j < rt->Partitions.count; j++) {
            struct kp_ListOffsetsResponse_ListOffsetsPartitionResponse *rp =
                &rt->Partitions.items[j];
            rp->PartitionIndex = qt->Partitions.items[j].PartitionIndex;
            rp->ErrorCode = x->code;
            rp->Timestamp = -1;
            rp->Offset = -1; /* v0: an empty list of offsets */
        }
    }
    return send_answer(x, &resp);
}

/* MetadataRequest.getErrorResponse: no brokers, no cluster id, no
 * controller; each topic asked for with the error and no partitions (none
 * for an all-topics request). */
static int metadata_error(struct answer *x)
{
    const struct kp_MetadataRequest *q = x->r->body;
    struct kp_MetadataResponse resp;
    kp_MetadataResponse_init(&resp);
    resp.ControllerId = -1;
    bool all = q->Topics.count < 0 || (x->r->version == 0 && q->Topics.count == 0);
    if (all) {
        return send_answer(x, &resp);
    }
    resp.Topics.items = items(x, q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Topics.count; i++) {
        struct kp_MetadataResponse_MetadataResponseTopic *rt = &resp.Topics.items[i];
        rt->ErrorCode = x->code;
        rt->Name = q->Topics.items[i].Name;
        rt->IsInternal = false;
    }
    return send_answer(x, &resp);
}

static int offset_commit_error(struct answer *x)
{
    const struct kp_OffsetCommitRequest *q = x->r->body;
    struct kp_OffsetCommitResponse resp;
    kp_OffsetCommitResponse_init(&resp);
    resp.Topics.items = items(x, q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Topics.count; i++) {
        const struct kp_OffsetCommitRequest_OffsetCommitRequestTopic *qt = &q->Topics.items[i];
        struct kp_OffsetCommitResponse_OffsetCommitResponseTopic *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        rt->Partitions.items = items(x, qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = count_of(qt->Partitions.count);
        for (int32_t j = 0; j < rt->Partitions.count; j++) {
            rt->Partitions.items[j].PartitionIndex = qt->Partitions.items[j].PartitionIndex;
            rt->Partitions.items[j].ErrorCode = x->code;
        }
    }
    return send_answer(x, &resp);
}

/* OffsetFetchRequest.getErrorResponse: below v2 the error in every
 * partition asked for; from v2 the top-level error and no partitions. */
static int offset_fetch_error(struct answer *x)
{
    const struct kp_OffsetFetchRequest *q = x->r->body;
    struct kp_OffsetFetchResponse resp;
    kp_OffsetFetchResponse_init(&resp);
    resp.ErrorCode = x->code;
    if (x->r->version >= 2) {
        return send_answer(x, &resp);
    }
    resp.Topics.items = items(x, q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Topics.count; i++) {
        const struct kp_OffsetFetchRequest_OffsetFetchRequestTopic *qt = &q->Topics.items[i];
        struct kp_OffsetFetchResponse_OffsetFetchResponseTopic *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        rt->Partitions.items = items(x, qt->PartitionIndexes.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = count_of(qt->PartitionIndexes.count);
        for (int32_t j = 0; j < rt->Partitions.count; j++) {
            struct kp_OffsetFetchResponse_OffsetFetchResponsePartition *rp =
                &rt->Partitions.items[j];
            rp->PartitionIndex = qt->PartitionIndexes.items[j];
            rp->CommittedOffset = -1;
            rp->CommittedLeaderEpoch = -1;
            rp->Metadata = kp_str_c("");
            rp->ErrorCode = x->code;
        }
    }
    return send_answer(x, &resp);
}

static int find_coordinator_error(struct answer *x)
{
    struct kp_FindCoordinatorResponse resp;
    kp_FindCoordinatorResponse_init(&resp);
    resp.ErrorCode = x->code;
    resp.ErrorMessage = x->msg;
    resp.NodeId = -1; /* Node.noNode() */
    resp.Host = kp_str_c("");
    resp.Port = -1;
    return send_answer(x, &resp);
}

static int join_group_error(struct answer *x)
{
    struct kp_JoinGroupResponse resp;
    kp_JoinGroupResponse_init(&resp);
    resp.ErrorCode = x->code;
    resp.GenerationId = -1;
    resp.ProtocolName = kp_str_c("");
    resp.Leader = kp_str_c("");
    resp.MemberId = kp_str_c("");
    return send_answer(x, &resp);
}

static int heartbeat_error(struct answer *x)
{
    struct kp_HeartbeatResponse resp;
    kp_HeartbeatResponse_init(&resp);
    resp.ErrorCode = x->code;
    return send_answer(x, &resp);
}

/* The controller's requests: the error alone, no partition (Kafka's
 * LeaderAndIsr/StopReplica/UpdateMetadataRequest.getErrorResponse list the
 * partitions each with the code; the controller reads the top-level one). */
static int leader_and_isr_error(struct answer *x)
{
    struct kp_LeaderAndIsrResponse resp;
    kp_LeaderAndIsrResponse_init(&resp);
    resp.ErrorCode = x->code;
    return send_answer(x, &resp);
}

static int stop_replica_error(struct answer *x)
{
    struct kp_StopReplicaResponse resp;
    kp_StopReplicaResponse_init(&resp);
    resp.ErrorCode = x->code;
    return send_answer(x, &resp);
}

static int offset_for_leader_epoch_error(struct answer *x)
{
    const struct kp_OffsetForLeaderEpochRequest *q = x->r->body;
    struct kp_OffsetForLeaderEpochResponse resp;
    kp_OffsetForLeaderEpochResponse_init(&resp);
    resp.Topics.items = items(x, q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Topics.count; i++) {
        const struct kp_OffsetForLeaderEpochRequest_OffsetForLeaderTopic *qt = &q->Topics.items[i];
        struct kp_OffsetForLeaderEpochResponse_OffsetForLeaderTopicResult *rt =
            &resp.Topics.items[i];
        rt->Topic = qt->Topic;
        rt->Partitions.items = items(x, qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = count_of(qt->Partitions.count);
        for (int32_t j = 0; j < rt->Partitions.count; j++) {
            rt->Partitions.items[j].ErrorCode = x->code;
            rt->Partitions.items[j].Partition = qt->Partitions.items[j].Partition;
            rt->Partitions.items[j].LeaderEpoch = -1;
            rt->Partitions.items[j].EndOffset = -1;
        }
    }
    return send_answer(x, &resp);
}

static int update_metadata_error(struct answer *x)
{
    struct kp_UpdateMetadataResponse resp;
    kp_UpdateMetadataResponse_init(&resp);
    resp.ErrorCode = x->code;
    return send_answer(x, &resp);
}

static int leave_group_error(struct answer *x)
{
    struct kp_LeaveGroupResponse resp;
    kp_LeaveGroupResponse_init(&resp);
    resp.ErrorCode = x->code;
    return send_answer(x, &resp);
}

static int sync_group_error(struct answer *x)
{
    struct kp_SyncGroupResponse resp;
    kp_SyncGroupResponse_init(&resp);
    resp.ErrorCode = x->code;
    resp.Assignment.ptr = (const uint8_t *)"";
    resp.Assignment.len = 0;
    return send_answer(x, &resp);
}

static int describe_groups_error(struct answer *x)
{
    const struct kp_DescribeGroupsRequest *q = x->r->body;
    struct kp_DescribeGroupsResponse resp;
    kp_DescribeGroupsResponse_init(&resp);
    resp.Groups.items = items(x, q->Groups.count, sizeof *resp.Groups.items);
    if (resp.Groups.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Groups.count = count_of(q->Groups.count);
    for (int32_t i = 0; i < resp.Groups.count; i++) {
        struct kp_DescribeGroupsResponse_DescribedGroup *g = &resp.Groups.items[i];
        g->ErrorCode = x->code;
        g->GroupId = q->Groups.items[i];
        g->GroupState = kp_str_c("");
        g->ProtocolType = kp_str_c("");
        g->ProtocolData = kp_str_c("");
        g->AuthorizedOperations = INT32_MIN;
    }
    return send_answer(x, &resp);
}

static int list_groups_error(struct answer *x)
{
    struct kp_ListGroupsResponse resp;
    kp_ListGroupsResponse_init(&resp);
    resp.ErrorCode = x->code;
    return send_answer(x, &resp);
}

static int api_versions_error(struct answer *x)
{
    struct kp_ApiVersionsResponse resp;
    kp_ApiVersionsResponse_init(&resp);
    resp.ErrorCode = x->code;
    return send_answer(x, &resp);
}

static int create_topics_error(struct answer *x)
{
    const struct kp_CreateTopicsRequest *q = x->r->body;
    struct kp_CreateTopicsResponse resp;
    kp_CreateTopicsResponse_init(&resp);
    resp.Topics.items = items(x, q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Topics.count; i++) {
        resp.Topics.items[i].Name = q->Topics.items[i].Name;
        resp.Topics.items[i].ErrorCode = x->code;
        resp.Topics.items[i].ErrorMessage = x->msg;
    }
    return send_answer(x, &resp);
}

static int create_partitions_error(struct answer *x)
{
    const struct kp_CreatePartitionsRequest *q = x->r->body;
    struct kp_CreatePartitionsResponse resp;
    kp_CreatePartitionsResponse_init(&resp);
    resp.Results.items = items(x, q->Topics.count, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Results.count; i++) {
        resp.Results.items[i].Name = q->Topics.items[i].Name;
        resp.Results.items[i].ErrorCode = x->code;
        resp.Results.items[i].ErrorMessage = x->msg;
    }
    return send_answer(x, &resp);
}

static int delete_topics_error(struct answer *x)
{
    const struct kp_DeleteTopicsRequest *q = x->r->body;
    struct kp_DeleteTopicsResponse resp;
    kp_DeleteTopicsResponse_init(&resp);
    resp.Responses.items = items(x, q->TopicNames.count, sizeof *resp.Responses.items);
    if (resp.Responses.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Responses.count = count_of(q->TopicNames.count);
    for (int32_t i = 0; i < resp.Responses.count; i++) {
        resp.Responses.items[i].Name = q->TopicNames.items[i];
        resp.Responses.items[i].ErrorCode = x->code;
    }
    return send_answer(x, &resp);
}

static int init_producer_id_error(struct answer *x)
{
    struct kp_InitProducerIdResponse resp;
    kp_InitProducerIdResponse_init(&resp);
    resp.ErrorCode = x->code;
    resp.ProducerId = -1;
    resp.ProducerEpoch = -1;
    return send_answer(x, &resp);
}

/* DescribeConfigsRequest.getErrorResponse: every resource with the error
 * and no configs. */
static int describe_configs_error(struct answer *x)
{
    const struct kp_DescribeConfigsRequest *q = x->r->body;
    struct kp_DescribeConfigsResponse resp;
    kp_DescribeConfigsResponse_init(&resp);
    resp.Results.items = items(x, q->Resources.count, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = count_of(q->Resources.count);
    for (int32_t i = 0; i < resp.Results.count; i++) {
        struct kp_DescribeConfigsResponse_DescribeConfigsResult *res = &resp.Results.items[i];
        res->ErrorCode = x->code;
        res->ErrorMessage = x->msg;
        res->ResourceType = q->Resources.items[i].ResourceType;
        res->ResourceName = q->Resources.items[i].ResourceName;
    }
    return send_answer(x, &resp);
}

static int delete_groups_error(struct answer *x)
{
    const struct kp_DeleteGroupsRequest *q = x->r->body;
    struct kp_DeleteGroupsResponse resp;
    kp_DeleteGroupsResponse_init(&resp);
    resp.Results.items = items(x, q->GroupsNames.count, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = count_of(q->GroupsNames.count);
    for (int32_t i = 0; i < resp.Results.count; i++) {
        resp.Results.items[i].GroupId = q->GroupsNames.items[i];
        resp.Results.items[i].ErrorCode = x->code;
    }
    return send_answer(x, &resp);
}

static int delete_records_error(struct answer *x)
{
    const struct kp_DeleteRecordsRequest *q = x->r->body;
    struct kp_DeleteRecordsResponse resp;
    kp_DeleteRecordsResponse_init(&resp);
    resp.Topics.items = items(x, q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Topics.count; i++) {
        const struct kp_DeleteRecordsRequest_DeleteRecordsTopic *qt = &q->Topics.items[i];
        struct kp_DeleteRecordsResponse_DeleteRecordsTopicResult *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        rt->Partitions.items = items(x, qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = count_of(qt->Partitions.count);
        for (int32_t j = 0; j < rt->Partitions.count; j++) {
            rt->Partitions.items[j].PartitionIndex = qt->Partitions.items[j].PartitionIndex;
            rt->Partitions.items[j].LowWatermark = -1;
            rt->Partitions.items[j].ErrorCode = x->code;
        }
    }
    return send_answer(x, &resp);
}

static int alter_configs_error(struct answer *x)
{
    const struct kp_AlterConfigsRequest *q = x->r->body;
    struct kp_AlterConfigsResponse resp;
    kp_AlterConfigsResponse_init(&resp);
    resp.Responses.items = items(x, q->Resources.count, sizeof *resp.Responses.items);
    if (resp.Responses.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Responses.count = count_of(q->Resources.count);
    for (int32_t i = 0; i < resp.Responses.count; i++) {
        resp.Responses.items[i].ErrorCode = x->code;
        resp.Responses.items[i].ErrorMessage = x->msg;
        resp.Responses.items[i].ResourceType = q->Resources.items[i].ResourceType;
        resp.Responses.items[i].ResourceName = q->Resources.items[i].ResourceName;
    }
    return send_answer(x, &resp);
}

static int incremental_alter_configs_error(struct answer *x)
{
    const struct kp_IncrementalAlterConfigsRequest *q = x->r->body;
    struct kp_IncrementalAlterConfigsResponse resp;
    kp_IncrementalAlterConfigsResponse_init(&resp);
    resp.Responses.items = items(x, q->Resources.count, sizeof *resp.Responses.items);
    if (resp.Responses.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Responses.count = count_of(q->Resources.count);
    for (int32_t i = 0; i < resp.Responses.count; i++) {
        resp.Responses.items[i].ErrorCode = x->code;
        resp.Responses.items[i].ErrorMessage = x->msg;
        resp.Responses.items[i].ResourceType = q->Resources.items[i].ResourceType;
        resp.Responses.items[i].ResourceName = q->Resources.items[i].ResourceName;
    }
    return send_answer(x, &resp);
}

/* DescribeLogDirsRequest.getErrorResponse: no log dir at all (v0-1 have no
 * error field of their own). */
static int describe_log_dirs_error(struct answer *x)
{
    struct kp_DescribeLogDirsResponse resp;
    kp_DescribeLogDirsResponse_init(&resp);
    return send_answer(x, &resp);
}

/* EndTxnRequest.getErrorResponse, AddOffsetsToTxnRequest's: the error. */
static int end_txn_error(struct answer *x)
{
    struct kp_EndTxnResponse resp;
    kp_EndTxnResponse_init(&resp);
    resp.ErrorCode = x->code;
    return send_answer(x, &resp);
}

static int add_offsets_to_txn_error(struct answer *x)
{
    struct kp_AddOffsetsToTxnResponse resp;
    kp_AddOffsetsToTxnResponse_init(&resp);
    resp.ErrorCode = x->code;
    return send_answer(x, &resp);
}

/* AddPartitionsToTxnRequest.getErrorResponse: every partition named. */
static int add_partitions_to_txn_error(struct answer *x)
{
    const struct kp_AddPartitionsToTxnRequest *q = x->r->body;
    struct kp_AddPartitionsToTxnResponse resp;
    kp_AddPartitionsToTxnResponse_init(&resp);
    resp.Results.items = items(x, q->Topics.count, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Results.count; i++) {
        const struct kp_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic *qt = &q->Topics.items[i];
        struct kp_AddPartitionsToTxnResponse_AddPartitionsToTxnTopicResult *rt =
            &resp.Results.items[i];
        rt->Name = qt->Name;
        rt->Results.items = items(x, qt->Partitions.count, sizeof *rt->Results.items);
        if (rt->Results.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Results.count = count_of(qt->Partitions.count);
        for (int32_t j = 0; j < rt->Results.count; j++) {
            rt->Results.items[j].PartitionIndex = qt->Partitions.items[j];
            rt->Results.items[j].ErrorCode = x->code;
        }
    }
    return send_answer(x, &resp);
}

/* TxnOffsetCommitRequest.getErrorResponse: every partition named. */
static int txn_offset_commit_error(struct answer *x)
{
    const struct kp_TxnOffsetCommitRequest *q = x->r->body;
    struct kp_TxnOffsetCommitResponse resp;
    kp_TxnOffsetCommitResponse_init(&resp);
    resp.Topics.items = items(x, q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = count_of(q->Topics.count);
    for (int32_t i = 0; i < resp.Topics.count; i++) {
        const struct kp_TxnOffsetCommitRequest_TxnOffsetCommitRequestTopic *qt = &q->Topics.items[i];
        struct kp_TxnOffsetCommitResponse_TxnOffsetCommitResponseTopic *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        rt->Partitions.items = items(x, qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = count_of(qt->Partitions.count);
        for (int32_t j = 0; j < rt->Partitions.count; j++) {
            rt->Partitions.items[j].PartitionIndex = qt->Partitions.items[j].PartitionIndex;
            rt->Partitions.items[j].ErrorCode = x->code;
        }
    }
    return send_answer(x, &resp);
}

/* WriteTxnMarkersRequest.getErrorResponse: every partition of every marker. */
static int write_txn_markers_error(struct answer *x)
{
    const struct kp_WriteTxnMarkersRequest *q = x->r->body;
    struct kp_WriteTxnMarkersResponse resp;
    kp_WriteTxnMarkersResponse_init(&resp);
    resp.Markers.items = items(x, q->Markers.count, sizeof *resp.Markers.items);
    if (resp.Markers.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Markers.count = count_of(q->Markers.count);
    for (int32_t i = 0; i < resp.Markers.count; i++) {
        const struct kp_WriteTxnMarkersRequest_WritableTxnMarker *m = &q->Markers.items[i];
        struct kp_WriteTxnMarkersResponse_WritableTxnMarkerResult *o = &resp.Markers.items[i];
        o->ProducerId = m->ProducerId;
        o->Topics.items = items(x, m->Topics.count, sizeof *o->Topics.items);
        if (o->Topics.items == NULL) {
            return KP_E_NOMEM;
        }
        o->Topics.count = count_of(m->Topics.count);
        for (int32_t j = 0; j < o->Topics.count; j++) {
            const struct kp_WriteTxnMarkersRequest_WritableTxnMarkerTopic *mt = &m->Topics.items[j];
            struct kp_WriteTxnMarkersResponse_WritableTxnMarkerTopicResult *ot = &o->Topics.items[j];
            ot->Name = mt->Name;
            ot->Partitions.items = items(x, mt->PartitionIndexes.count, sizeof *ot->Partitions.items);
            if (ot->Partitions.items == NULL) {
                return KP_E_NOMEM;
            }
            ot->Partitions.count = count_of(mt->PartitionIndexes.count);
            for (int32_t k = 0; k < ot->Partitions.count; k++) {
                ot->Partitions.items[k].PartitionIndex = mt->PartitionIndexes.items[k];
                ot->Partitions.items[k].ErrorCode = x->code;
            }
        }
    }
    return send_answer(x, &resp);
}

/* DescribeAclsRequest.getErrorResponse: the error and its message. */
static int describe_acls_error(struct answer *x)
{
    struct kp_DescribeAclsResponse resp;
    kp_DescribeAclsResponse_init(&resp);
    resp.ErrorCode = x->code;
    resp.ErrorMessage = x->msg;
    return send_answer(x, &resp);
}

/* CreateAclsRequest.getErrorResponse: every creation. */
static int create_acls_error(struct answer *x)
{
    const struct kp_CreateAclsRequest *q = x->r->body;
    struct kp_CreateAclsResponse resp;
    kp_CreateAclsResponse_init(&resp);
    resp.Results.items = items(x, q->Creations.count, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = count_of(q->Creations.count);
    for (int32_t i = 0; i < resp.Results.count; i++) {
        resp.Results.items[i].ErrorCode = x->code;
        resp.Results.items[i].ErrorMessage = x->msg;
    }
    return send_answer(x, &resp);
}

/* DeleteAclsRequest.getErrorResponse: every filter, no ACL matched. */
static int delete_acls_error(struct answer *x)
{
    const struct kp_DeleteAclsRequest *q = x->r->body;
    struct kp_DeleteAclsResponse resp;
    kp_DeleteAclsResponse_init(&resp);
    resp.FilterResults.items = items(x, q->Filters.count, sizeof *resp.FilterResults.items);
    if (resp.FilterResults.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.FilterResults.count = count_of(q->Filters.count);
    for (int32_t i = 0; i < resp.FilterResults.count; i++) {
        resp.FilterResults.items[i].ErrorCode = x->code;
        resp.FilterResults.items[i].ErrorMessage = x->msg;
    }
    return send_answer(x, &resp);
}

/* Kafka's error response of each API the broker serves, by ApiKey. */
typedef int (*error_fn)(struct answer *x);
static const error_fn error_responses[] = {
    [KP_API_PRODUCE] = produce_error,
    [KP_API_FETCH] = fetch_error,
    [KP_API_LIST_OFFSETS] = list_offsets_error,
    [KP_API_METADATA] = metadata_error,
    [KP_API_LEADER_AND_ISR] = leader_and_isr_error,
    [KP_API_STOP_REPLICA] = stop_replica_error,
    [KP_API_UPDATE_METADATA] = update_metadata_error,
    [KP_API_OFFSET_FOR_LEADER_EPOCH] = offset_for_leader_epoch_error,
    [KP_API_OFFSET_COMMIT] = offset_commit_error,
    [KP_API_OFFSET_FETCH] = offset_fetch_error,
    [KP_API_FIND_COORDINATOR] = find_coordinator_error,
    [KP_API_JOIN_GROUP] = join_group_error,
    [KP_API_HEARTBEAT] = heartbeat_error,
    [KP_API_LEAVE_GROUP] = leave_group_error,
    [KP_API_SYNC_GROUP] = sync_group_error,
    [KP_API_DESCRIBE_GROUPS] = describe_groups_error,
    [KP_API_LIST_GROUPS] = list_groups_error,
    [KP_API_API_VERSIONS] = api_versions_error,
    [KP_API_CREATE_TOPICS] = create_topics_error,
    [KP_API_DELETE_TOPICS] = delete_topics_error,
    [KP_API_INIT_PRODUCER_ID] = init_producer_id_error,
    [KP_API_DESCRIBE_CONFIGS] = describe_configs_error,
    [KP_API_DELETE_GROUPS] = delete_groups_error,
    [KP_API_DELETE_RECORDS] = delete_records_error,
    [KP_API_ALTER_CONFIGS] = alter_configs_error,
    [KP_API_DESCRIBE_LOG_DIRS] = describe_log_dirs_error,
    [KP_API_INCREMENTAL_ALTER_CONFIGS] = incremental_alter_configs_error,
    [KP_API_CREATE_PARTITIONS] = create_partitions_error,
    [KP_API_ADD_PARTITIONS_TO_TXN] = add_partitions_to_txn_error,
    [KP_API_ADD_OFFSETS_TO_TXN] = add_offsets_to_txn_error,
    [KP_API_END_TXN] = end_txn_error,
    [KP_API_WRITE_TXN_MARKERS] = write_txn_markers_error,
    [KP_API_TXN_OFFSET_COMMIT] = txn_offset_commit_error,
    [KP_API_DESCRIBE_ACLS] = describe_acls_error,
    [KP_API_CREATE_ACLS] = create_acls_error,
    [KP_API_DELETE_ACLS] = delete_acls_error,
};

int br_respond_error(struct br_req *r, int code, const char *message)
{
    if (r->slot == NULL || r->body == NULL) {
        return KP_E_INVALID_ARG;
    }
    /* arrays of one small entry per request entry: a few times what decoding
     * the request could take */
    struct kp_arena a;
    kp_arena_init(&a, 4 * br_request_arena_max(r->len));
    struct answer x = {r, &a, (int16_t)kp_err_to_wire(code),
                       message != NULL ? kp_str_c(message) : KP_STR_NULL};
    int err = KP_E_UNSUPPORTED;
    int16_t key = r->hdr->RequestApiKey;
    if (key >= 0 && (size_t)key < sizeof error_responses / sizeof error_responses[0] &&
        error_responses[key] != NULL) {
        err = error_responses[key](&x);
    }
    kp_arena_free(&a);
    return err;
}

/* Why a response failed, for the log line and the answer's message. */
static void failure_reason(const struct br_req *r, int err, char *buf, size_t len)
{
    int32_t max = r->b->cfg.response_max_bytes;
    if (err == KP_E_NOMEM && r->arena != NULL && r->arena->refused > 0) {
        (void)snprintf(buf, len,
                       "the response needs more memory than response.max.bytes (%" PRId32
                       " bytes) allows",
                       max);
    } else if (err == KP_E_TOO_LARGE) {
        (void)snprintf(buf, len,
                       "the response is larger than response.max.bytes (%" PRId32
                       " bytes) or a frame allows",
                       max);
    } else if (err == KP_E_NOMEM) {
        (void)snprintf(buf, len, "out of memory");
    } else {
        (void)snprintf(buf, len, "%s", err > 0 ? kp_err_name(err) : kp_err_str(err));
    }
}

void br_respond_failed(struct br_req *r, int err)
{
    const struct kp_api *api = kp_api_find(r->hdr->RequestApiKey);
    struct kp_str client = r->hdr->ClientId;
    int client_len = client.len > 0 ? (client.len > 200 ? 200 : (int)client.len) : 0;
    char reason[200];
    failure_reason(r, err, reason, sizeof reason);
    int code = err > 0 ? err : KP_ERR_UNKNOWN_SERVER_ERROR;
    int aerr = KP_E_INVALID_ARG;
    if (r->slot != NULL && br_slot_is_empty(r->slot)) {
        aerr = br_respond_error(r, code, reason);
    }
    if (aerr == 0) {
        br_error(
            "%s v%d request from %s (client \"%.*s\", correlation %" PRId32 "): %s: answered %s",
            api != NULL ? api->name : "?", r->version, br_conn_peer(r->conn), client_len,
            client_len > 0 ? client.ptr : "", r->hdr->CorrelationId, reason, kp_err_name(code));
        return;
    }
    br_error("%s v%d request from %s (client \"%.*s\", correlation %" PRId32
             "): %s: closing the connection (%s)",
             api != NULL ? api->name : "?", r->version, br_conn_peer(r->conn), client_len,
             client_len > 0 ? client.ptr : "", r->hdr->CorrelationId, reason,
             r->slot == NULL ? "a request without a response cannot carry an error"
                             : kp_err_str(aerr));
    if (r->slot != NULL) {
        /* the slot never gets its response: mark it so the flush can go on */
        br_slot_ready(r->conn, r->slot);
    }
    br_conn_close_after_flush(r->conn);
}
