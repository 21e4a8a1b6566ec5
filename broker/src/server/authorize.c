/*
 * samsa-broker: authorization (Kafka 2.0's SimpleAclAuthorizer as
 * KafkaApis calls it), the ACL requests and the standalone ACL file.
 *
 * A request is checked before its handler runs (br_authorize_request):
 * the resources it names, as KafkaApis checks them (the table in
 * broker/README.md, "ACLs"). Where Kafka answers a denied topic per
 * partition and serves the rest, this first version refuses the whole
 * request with the denied resource's error in every entry, except
 * Metadata, which answers each topic and leaves out of an all-topics
 * answer what the principal may not describe (api_metadata.c).
 *
 * The principal: the SASL one ("User:<name>") of a connection that
 * authenticated on a SASL listener, else "User:" and the subject of a
 * client certificate (mutual TLS, RFC 2253, as Kafka's
 * DefaultKafkaPrincipalBuilder), else "User:ANONYMOUS". The host: the
 * peer's address.
 *
 * Standalone, the ACLs live in <first log dir>/acls.json (written by the
 * worker, a temporary file renamed over it after an fsync; a CreateAcls or
 * DeleteAcls is answered once it is written); on a cluster in Kafka's
 * /kafka-acl znodes (acl_zk.c).
 *
 * @locality reactor thread
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <samsa-protocol/alloc.h>

#include "base/clock.h"
#include "base/logging.h"
#include "reactor/net.h"
#include "server/authorize.h"
#include "server/request.h"
#include "server/state.h"

#define ANONYMOUS "User:ANONYMOUS"
/* Denials logged at most this often (Kafka logs each one at INFO). */
#define DENIAL_LOG_INTERVAL_MS 1000

/* ---------------------------------------------------------------- who asks */

void br_req_principal(const struct br_req *r, char *buf, size_t len)
{
    char subject[512];
    const char *sasl = br_conn_principal(r->conn);
    if (strcmp(sasl, ANONYMOUS) != 0) {
        /* SASL authenticated it (security/sasl.c): its name before a
         * certificate's, as DefaultKafkaPrincipalBuilder on SASL_SSL */
        (void)snprintf(buf, len, "%s", sasl);
    } else if (br_conn_tls_subject(r->conn, subject, sizeof subject) > 0) {
        (void)snprintf(buf, len, "User:%s", subject);
    } else {
        (void)snprintf(buf, len, "%s", ANONYMOUS);
    }
}

/* The peer's address without its port. */
static void req_host(const struct br_req *r, char *buf, size_t len)
{
    const char *peer = br_conn_peer(r->conn);
    const char *colon = strrchr(peer, ':');
    size_t n = colon != NULL ? (size_t)(colon - peer) : strlen(peer);
    if (n >= len) {
        n = len - 1;
    }
    memcpy(buf, peer, n);
    buf[n] = '\0';
}

bool br_authorize(struct br_req *r, enum br_acl_op op, enum br_acl_rtype type, const char *name,
                  size_t len)
{
    struct br_authz *a = &r->b->authz;
    if (!a->on) {
        return true;
    }
    if (r->principal == NULL) {
        /* once per request: a Metadata of every topic checks each one */
        char who[600];
        char from[64];
        br_req_principal(r, who, sizeof who);
        req_host(r, from, sizeof from);
        char *p = kp_arena_alloc(r->arena, strlen(who) + 1);
        char *h = kp_arena_alloc(r->arena, strlen(from) + 1);
        if (p == NULL || h == NULL) {
            return false; /* out of memory: refused, as nothing can be checked */
        }
        memcpy(p, who, strlen(who) + 1);
        memcpy(h, from, strlen(from) + 1);
        r->principal = p;
        r->host = h;
    }
    const char *principal = r->principal;
    const char *host = r->host;
    struct br_acl_config cfg = {(const char *const *)a->super_users, a->nsuper,
                                r->b->cfg.allow_everyone_if_no_acl_found};
    bool ok = br_acl_authorize(&a->store, &cfg, principal, host, op, type, name, len);
    if (!ok) {
        a->denials++;
        int64_t now = br_now_mono_ms();
        if (now - a->last_log_ms >= DENIAL_LOG_INTERVAL_MS) {
            br_info("principal %s from %s is denied %s on %s %.*s (%" PRId64 " denial(s) since "
                    "the last line)",
                    principal, host, br_acl_op_name((int8_t)op), br_acl_rtype_name((int8_t)type),
                    (int)(len > 200 ? 200 : len), name, a->suppressed + 1);
            a->last_log_ms = now;
            a->suppressed = 0;
        } else {
            a->suppressed++;
        }
    }
    return ok;
}

static bool allowed_str(struct br_req *r, enum br_acl_op op, enum br_acl_rtype type,
                        struct kp_str name)
{
    return br_authorize(r, op, type, name.ptr != NULL ? name.ptr : "",
                        name.len > 0 ? (size_t)name.len : 0);
}

static bool cluster(struct br_req *r, enum br_acl_op op)
{
    return br_authorize(r, op, BR_ACL_RES_CLUSTER, BR_ACL_CLUSTER_NAME,
                        sizeof BR_ACL_CLUSTER_NAME - 1);
}

/* ---------------------------------------------------------------- requests */

/* Whether a Produce carries an idempotent producer's batch (ProduceRequest
 * .isIdempotent: a producer id in any partition's first batch). */
static bool produce_idempotent(const struct kp_ProduceRequest *q)
{
    for (int32_t i = 0; i < q->TopicData.count; i++) {
        const struct kp_ProduceRequest_TopicProduceData *t = &q->TopicData.items[i];
        for (int32_t j = 0; j < t->PartitionData.count; j++) {
            struct kp_bytes rec = t->PartitionData.items[j].Records;
            /* ProducerId: the int64 at byte 43 of a v2 batch */
            if (rec.len >= 51 && rec.ptr[16] == 2) {
                int64_t pid = 0;
                for (int k = 0; k < 8; k++) {
                    pid = (int64_t)((uint64_t)pid << 8 | rec.ptr[43 + k]);
                }
                if (pid >= 0) {
                    return true;
                }
            }
        }
    }
    return false;
}

/* Whether the principal may `op` every name of an array: n items of
 * `stride` bytes, each a struct kp_str at `offset`. */
static bool each_allowed(struct br_req *r, enum br_acl_op op, enum br_acl_rtype type,
                         const void *items, int32_t n, size_t stride, size_t offset)
{
    for (int32_t i = 0; i < n; i++) {
        struct kp_str name;
        memcpy(&name, (const char *)items + (size_t)i * stride + offset, sizeof name);
        if (!allowed_str(r, op, type, name)) {
            return false;
        }
    }
    return true;
}

/* each_allowed over an array field arr of a request, its name in member m */
#define NAMES(arr, type, m) (arr).items, (arr).count, sizeof(type), offsetof(type, m)
#define STRS(arr) (arr).items, (arr).count, sizeof(struct kp_str), 0

/* A config resource of DescribeConfigs/AlterConfigs (type 2 topic, 4 broker). */
static int16_t config_resource(struct br_req *r, int8_t rtype, struct kp_str name, bool alter)
{
    enum br_acl_op op = alter ? BR_ACL_OP_ALTER_CONFIGS : BR_ACL_OP_DESCRIBE_CONFIGS;
    if (rtype == 2) {
        return allowed_str(r, op, BR_ACL_RES_TOPIC, name) ? 0 : KP_ERR_TOPIC_AUTHORIZATION_FAILED;
    }
    return cluster(r, op) ? 0 : KP_ERR_CLUSTER_AUTHORIZATION_FAILED;
}

/* The config resources of a request: n items of `stride` bytes, each with
 * an int8 type at type_off and a struct kp_str name at name_off. */
static int16_t config_resources(struct br_req *r, const void *items, int32_t n, size_t stride,
                                size_t type_off, size_t name_off, bool alter)
{
    for (int32_t i = 0; i < n; i++) {
        const char *item = (const char *)items + (size_t)i * stride;
        int8_t type = 0;
        struct kp_str name;
        memcpy(&type, item + type_off, sizeof type);
        memcpy(&name, item + name_off, sizeof name);
        int16_t e = config_resource(r, type, name, alter);
        if (e != 0) {
            return e;
        }
    }
    return 0;
}

#define CONFIG_RESOURCES(arr, type)                                                                \
    (arr).items, (arr).count, sizeof(type), offsetof(type, ResourceType),                         \
        offsetof(type, ResourceName)

int16_t br_authorize_request(struct br_req *r)
{
    if (!r->b->authz.on) {
        return 0;
    }
    switch (r->hdr->RequestApiKey) {
    case KP_API_API_VERSIONS:
    case KP_API_SASL_HANDSHAKE: /* authentication itself: never authorized (KafkaApis) */
    case KP_API_SASL_AUTHENTICATE:
    case KP_API_METADATA: /* per topic, in its handler */
        return 0;
    case KP_API_PRODUCE: {
        const struct kp_ProduceRequest *q = r->body;
        if (q->TransactionalId.len >= 0) {
            if (!allowed_str(r, BR_ACL_OP_WRITE, BR_ACL_RES_TXN_ID, q->TransactionalId)) {
                return KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
            }
        } else if (produce_idempotent(q) && !cluster(r, BR_ACL_OP_IDEMPOTENT_WRITE)) {
            return KP_ERR_CLUSTER_AUTHORIZATION_FAILED;
        }
        if (!each_allowed(r, BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, NAMES(q->TopicData, struct kp_ProduceRequest_TopicProduceData, Name))) {
            return br_acl_denied_error(BR_ACL_RES_TOPIC);
        }
        return 0;
    }
    case KP_API_FETCH: {
        const struct kp_FetchRequest *q = r->body;
        if (q->ReplicaId >= 0) {
            return cluster(r, BR_ACL_OP_CLUSTER_ACTION) ? 0 : KP_ERR_TOPIC_AUTHORIZATION_FAILED;
        }
        if (!each_allowed(r, BR_ACL_OP_READ, BR_ACL_RES_TOPIC, NAMES(q->Topics, struct kp_FetchRequest_FetchTopic, Topic))) {
            return br_acl_denied_error(BR_ACL_RES_TOPIC);
        }
        return 0;
    }
    case KP_API_LIST_OFFSETS: {
        const struct kp_ListOffsetsRequest *q = r->body;
        if (!each_allowed(r, BR_ACL_OP_DESCRIBE, BR_ACL_RES_TOPIC, NAMES(q->Topics, struct kp_ListOffsetsRequest_ListOffsetsTopic, Name))) {
            return br_acl_denied_error(BR_ACL_RES_TOPIC);
        }
        return 0;
    }
    case KP_API_LEADER_AND_ISR:
    case KP_API_STOP_REPLICA:
    case KP_API_UPDATE_METADATA:
    case KP_API_CONTROLLED_SHUTDOWN:
    case KP_API_OFFSET_FOR_LEADER_EPOCH:
    case KP_API_WRITE_TXN_MARKERS:
        return cluster(r, BR_ACL_OP_CLUSTER_ACTION) ? 0 : KP_ERR_CLUSTER_AUTHORIZATION_FAILED;
    case KP_API_OFFSET_COMMIT: {
        const struct kp_OffsetCommitRequest *q = r->body;
        if (!allowed_str(r, BR_ACL_OP_READ, BR_ACL_RES_GROUP, q->GroupId)) {
            return KP_ERR_GROUP_AUTHORIZATION_FAILED;
        }
        if (!each_allowed(r, BR_ACL_OP_READ, BR_ACL_RES_TOPIC, NAMES(q->Topics, struct kp_OffsetCommitRequest_OffsetCommitRequestTopic, Name))) {
            return br_acl_denied_error(BR_ACL_RES_TOPIC);
        }
        return 0;
    }
    case KP_API_OFFSET_FETCH: {
        const struct kp_OffsetFetchRequest *q = r->body;
        if (!allowed_str(r, BR_ACL_OP_DESCRIBE, BR_ACL_RES_GROUP, q->GroupId)) {
            return KP_ERR_GROUP_AUTHORIZATION_FAILED;
        }
        if (!each_allowed(r, BR_ACL_OP_DESCRIBE, BR_ACL_RES_TOPIC, NAMES(q->Topics, struct kp_OffsetFetchRequest_OffsetFetchRequestTopic, Name))) {
            return br_acl_denied_error(BR_ACL_RES_TOPIC);
        }
        return 0;
    }
    case KP_API_FIND_COORDINATOR: {
        const struct kp_FindCoordinatorRequest *q = r->body;
        bool txn = r->version >= 1 && q->KeyType == 1;
        enum br_acl_rtype t = txn ? BR_ACL_RES_TXN_ID : BR_ACL_RES_GROUP;
        return allowed_str(r, BR_ACL_OP_DESCRIBE, t, q->Key) ? 0 : br_acl_denied_error(t);
    }
    case KP_API_JOIN_GROUP:
        return allowed_str(r, BR_ACL_OP_READ, BR_ACL_RES_GROUP,
                           ((const struct kp_JoinGroupRequest *)r->body)->GroupId)
                   ? 0
                   : KP_ERR_GROUP_AUTHORIZATION_FAILED;
    case KP_API_SYNC_GROUP:
        return allowed_str(r, BR_ACL_OP_READ, BR_ACL_RES_GROUP,
                           ((const struct kp_SyncGroupRequest *)r->body)->GroupId)
                   ? 0
                   : KP_ERR_GROUP_AUTHORIZATION_FAILED;
    case KP_API_HEARTBEAT:
        return allowed_str(r, BR_ACL_OP_READ, BR_ACL_RES_GROUP,
                           ((const struct kp_HeartbeatRequest *)r->body)->GroupId)
                   ? 0
                   : KP_ERR_GROUP_AUTHORIZATION_FAILED;
    case KP_API_LEAVE_GROUP:
        return allowed_str(r, BR_ACL_OP_READ, BR_ACL_RES_GROUP,
                           ((const struct kp_LeaveGroupRequest *)r->body)->GroupId)
                   ? 0
                   : KP_ERR_GROUP_AUTHORIZATION_FAILED;
    case KP_API_DESCRIBE_GROUPS: {
        const struct kp_DescribeGroupsRequest *q = r->body;
        if (!each_allowed(r, BR_ACL_OP_DESCRIBE, BR_ACL_RES_GROUP, STRS(q->Groups))) {
            return br_acl_denied_error(BR_ACL_RES_GROUP);
        }
        return 0;
    }
    case KP_API_DELETE_GROUPS: {
        const struct kp_DeleteGroupsRequest *q = r->body;
        if (!each_allowed(r, BR_ACL_OP_DELETE, BR_ACL_RES_GROUP, STRS(q->GroupsNames))) {
            return KP_ERR_GROUP_AUTHORIZATION_FAILED;
        }
        return 0;
    }
    case KP_API_LIST_GROUPS:
    case KP_API_DESCRIBE_LOG_DIRS:
    case KP_API_DESCRIBE_ACLS:
        return cluster(r, BR_ACL_OP_DESCRIBE) ? 0 : KP_ERR_CLUSTER_AUTHORIZATION_FAILED;
    case KP_API_CREATE_ACLS:
    case KP_API_DELETE_ACLS:
        return cluster(r, BR_ACL_OP_ALTER) ? 0 : KP_ERR_CLUSTER_AUTHORIZATION_FAILED;
    case KP_API_CREATE_TOPICS: {
        /* Create on the Cluster, else on each topic (KIP-277) */
        const struct kp_CreateTopicsRequest *q = r->body;
        if (cluster(r, BR_ACL_OP_CREATE)) {
            return 0;
        }
        if (!each_allowed(r, BR_ACL_OP_CREATE, BR_ACL_RES_TOPIC, NAMES(q->Topics, struct kp_CreateTopicsRequest_CreatableTopic, Name))) {
            return br_acl_denied_error(BR_ACL_RES_TOPIC);
        }
        return 0;
    }
    case KP_API_DELETE_TOPICS: {
        const struct kp_DeleteTopicsRequest *q = r->body;
        if (!each_allowed(r, BR_ACL_OP_DELETE, BR_ACL_RES_TOPIC, STRS(q->TopicNames))) {
            return KP_ERR_TOPIC_AUTHORIZATION_FAILED;
        }
        return 0;
    }
    case KP_API_DELETE_RECORDS: {
        const struct kp_DeleteRecordsRequest *q = r->body;
        if (!each_allowed(r, BR_ACL_OP_DELETE, BR_ACL_RES_TOPIC, NAMES(q->Topics, struct kp_DeleteRecordsRequest_DeleteRecordsTopic, Name))) {
            return br_acl_denied_error(BR_ACL_RES_TOPIC);
        }
        return 0;
    }
    case KP_API_CREATE_PARTITIONS: {
        const struct kp_CreatePartitionsRequest *q = r->body;
        if (!each_allowed(r, BR_ACL_OP_ALTER, BR_ACL_RES_TOPIC, NAMES(q->Topics, struct kp_CreatePartitionsRequest_CreatePartitionsTopic, Name))) {
            return br_acl_denied_error(BR_ACL_RES_TOPIC);
        }
        return 0;
    }
    case KP_API_DESCRIBE_CONFIGS: {
        const struct kp_DescribeConfigsRequest *q = r->body;
        return config_resources(r, CONFIG_RESOURCES(
                                       q->Resources, struct kp_DescribeConfigsRequest_DescribeConfigsResource),
                                false);
    }
    case KP_API_ALTER_CONFIGS: {
        const struct kp_AlterConfigsRequest *q = r->body;
        return config_resources(r, CONFIG_RESOURCES(
                                       q->Resources, struct kp_AlterConfigsRequest_AlterConfigsResource),
                                true);
    }
    case KP_API_INCREMENTAL_ALTER_CONFIGS: {
        const struct kp_IncrementalAlterConfigsRequest *q = r->body;
        return config_resources(
            r,
            CONFIG_RESOURCES(q->Resources,
                             struct kp_IncrementalAlterConfigsRequest_AlterConfigsResource),
            true);
    }
    case KP_API_INIT_PRODUCER_ID: {
        const struct kp_InitProducerIdRequest *q = r->body;
        if (q->TransactionalId.len >= 0) {
            return allowed_str(r, BR_ACL_OP_WRITE, BR_ACL_RES_TXN_ID, q->TransactionalId)
                       ? 0
                       : KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        }
        return cluster(r, BR_ACL_OP_IDEMPOTENT_WRITE) ? 0 : KP_ERR_CLUSTER_AUTHORIZATION_FAILED;
    }
    case KP_API_END_TXN:
        return allowed_str(r, BR_ACL_OP_WRITE, BR_ACL_RES_TXN_ID,
                           ((const struct kp_EndTxnRequest *)r->body)->TransactionalId)
                   ? 0
                   : KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    case KP_API_ADD_PARTITIONS_TO_TXN: {
        const struct kp_AddPartitionsToTxnRequest *q = r->body;
        if (!allowed_str(r, BR_ACL_OP_WRITE, BR_ACL_RES_TXN_ID, q->TransactionalId)) {
            return KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        }
        if (!each_allowed(r, BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, NAMES(q->Topics, struct kp_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic, Name))) {
            return br_acl_denied_error(BR_ACL_RES_TOPIC);
        }
        return 0;
    }
    case KP_API_ADD_OFFSETS_TO_TXN: {
        const struct kp_AddOffsetsToTxnRequest *q = r->body;
        if (!allowed_str(r, BR_ACL_OP_WRITE, BR_ACL_RES_TXN_ID, q->TransactionalId)) {
            return KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        }
        return allowed_str(r, BR_ACL_OP_READ, BR_ACL_RES_GROUP, q->GroupId)
                   ? 0
                   : KP_ERR_GROUP_AUTHORIZATION_FAILED;
    }
    case KP_API_TXN_OFFSET_COMMIT: {
        const struct kp_TxnOffsetCommitRequest *q = r->body;
        if (!allowed_str(r, BR_ACL_OP_WRITE, BR_ACL_RES_TXN_ID, q->TransactionalId)) {
            return KP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        }
        if (!allowed_str(r, BR_ACL_OP_READ, BR_ACL_RES_GROUP, q->GroupId)) {
            return KP_ERR_GROUP_AUTHORIZATION_FAILED;
        }
        if (!each_allowed(r, BR_ACL_OP_READ, BR_ACL_RES_TOPIC, NAMES(q->Topics, struct kp_TxnOffsetCommitRequest_TxnOffsetCommitRequestTopic, Name))) {
            return br_acl_denied_error(BR_ACL_RES_TOPIC);
        }
        return 0;
    }
    default:
        /* an API this table does not know: a super user's only */
        return cluster(r, BR_ACL_OP_ALL) ? 0 : KP_ERR_CLUSTER_AUTHORIZATION_FAILED;
    }
}
