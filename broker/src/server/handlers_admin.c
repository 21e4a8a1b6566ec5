/*
 * samsa-broker: storage administration handlers (see request.h):
 * AlterConfigs, IncrementalAlterConfigs, DeleteRecords, DescribeLogDirs,
 * CreatePartitions (its disk work: topic_admin.h).
 *
 * Topic configs: AlterConfigs replaces the topic's whole set of configs
 * (keys left out fall back to the broker's defaults, as in Kafka);
 * IncrementalAlterConfigs edits it key by key (SET, DELETE, and APPEND /
 * SUBTRACT for the list key cleanup.policy). A resource is changed all or
 * nothing: the new set is validated whole (topic_config.h) on the reactor,
 * then stored through the asynchronous metadata store while the request
 * waits (topic_admin.h), then applied to the topic and its partitions'
 * logs once written; with validate_only the answer comes at once and
 * nothing is stored or applied. Broker resources are refused
 * with INVALID_REQUEST: the broker's configuration is static
 * (server.properties).
 */
#define _GNU_SOURCE

#include "base/logging.h"
#include "server/admin_manager.h"
#include "server/request.h"
#include "server/topic_admin.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4

/* IncrementalAlterConfigs' ConfigOperation. */
enum {
    OP_SET = 0,
    OP_DELETE = 1,
    OP_APPEND = 2,
    OP_SUBTRACT = 3,
};

/* The longest config name we look at (Kafka's keys are far shorter). */
#define KEY_MAX 255

static struct kp_str arena_str(struct br_req *r, const char *s)
{
    size_t n = strlen(s);
    char *c = kp_arena_alloc(r->arena, n + 1);
    if (c == NULL) {
        return KP_STR_NULL;
    }
    memcpy(c, s, n + 1);
    struct kp_str out = {c, (int32_t)n};
    return out;
}

/* ---------------------------------------------------------------- configs */


/* An APPEND or SUBTRACT on a list key. */
static int edit_list(struct br_topic_config *tc, const char *key, int8_t op, const char *value,
                     char *msg, size_t msglen)
{
    int k = br_topic_config_find(key);
    if (k < 0) {
        (void)snprintf(msg, msglen, "Unknown topic config name: %s", key);
        return KP_ERR_INVALID_CONFIG;
    }
    if (k != BR_TCFG_CLEANUP_POLICY) {
        (void)snprintf(msg, msglen, "Config value %s is not allowed for config key: %s",
                       op == OP_APPEND ? "append" : "subtract", key);
        return KP_ERR_INVALID_REQUEST;
    }
    if (value == NULL) {
        (void)snprintf(msg, msglen, "Null value not supported for %s", key);
        return KP_ERR_INVALID_REQUEST;
    }
    unsigned flags = 0;
    char why[256];
    if (br_config_parse_cleanup_policy(value, &flags, why, sizeof why) != 0) {
        (void)snprintf(msg, msglen, "cleanup.policy: %.200s", why);
        return KP_ERR_INVALID_CONFIG;
    }
    unsigned now = op == OP_APPEND ? tc->cleanup_policy | flags : tc->cleanup_policy & ~flags;
    char text[64];
    return br_topic_config_set(tc, key, br_cleanup_policy_str(now, text, sizeof text), msg, msglen);
}

int br_config_apply_changes(const struct br_server *b, struct br_topic_config *out,
                            const struct br_config_change *ch, size_t n, bool incremental, char *msg,
                            size_t msglen)
{
    msg[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++) {
            if (ch[i].name.len == ch[j].name.len &&
                (ch[i].name.len <= 0 ||
                 memcmp(ch[i].name.ptr, ch[j].name.ptr, (size_t)ch[i].name.len) == 0)) {
                (void)snprintf(msg, msglen, "Error due to duplicate config keys");
                return KP_ERR_INVALID_REQUEST;
            }
        }
    }
    struct br_topic_config tc = *out;
    for (size_t i = 0; i < n; i++) {
        const struct br_config_change *c = &ch[i];
        char key[KEY_MAX + 1];
        char value[BR_TOPIC_CONFIG_VALUE_MAX + 1];
        if (c->name.len <= 0 || (size_t)c->name.len > KEY_MAX) {
            (void)snprintf(msg, msglen, "config name missing or too long");
            return KP_ERR_INVALID_CONFIG;
        }
        memcpy(key, c->name.ptr, (size_t)c->name.len);
        key[c->name.len] = '\0';
        const char *v = NULL;
        if (c->value.len >= 0) {
            if ((size_t)c->value.len > BR_TOPIC_CONFIG_VALUE_MAX) {
                (void)snprintf(msg, msglen, "%s: value too long", key);
                return KP_ERR_INVALID_CONFIG;
            }
            memcpy(value, c->value.ptr, (size_t)c->value.len);
            value[c->value.len] = '\0';
            if (memchr(value, '\0', (size_t)c->value.len) != NULL) {
                (void)snprintf(msg, msglen, "%s: the value holds a NUL byte", key);
                return KP_ERR_INVALID_CONFIG;
            }
            v = value;
        }
        int rc;
        switch (incremental ? c->op : OP_SET) {
        case OP_SET:
            rc = br_topic_config_set(&tc, key, v, msg, msglen);
            break;
        case OP_DELETE:
            rc = br_topic_config_unset(&tc, &b->cfg, key, msg, msglen);
            break;
        case OP_APPEND:
        case OP_SUBTRACT:
            rc = edit_list(&tc, key, c->op, v, msg, msglen);
            break;
        default:
            (void)snprintf(msg, msglen, "%s: unknown config operation %d", key, (int)c->op);
            rc = KP_ERR_INVALID_REQUEST;
            break;
        }
        if (rc != 0) {
            return rc;
        }
    }
    struct br_log_config lc;
    br_topic_log_config(&tc, &lc);
    const char *field = NULL;
    if (br_log_config_check(&lc, &field) != 0) {
        (void)snprintf(msg, msglen, "%s is out of range", field != NULL ? field : "a setting");
        return KP_ERR_INVALID_CONFIG;
    }
    *out = tc;
    return 0;
}

/* One resource of AlterConfigs (incremental false) or
 * IncrementalAlterConfigs. Returns the error code (msg says why), and in
 * *op the store started for it (0: none, the answer is known). */
static int alter_resource(struct br_server *b, int8_t type, struct kp_str name,
                          const struct br_config_change *ch, size_t n, bool incremental, bool validate_only,
                          uint64_t *op, char *msg, size_t msglen)
{
    msg[0] = '\0';
    *op = 0;
    if (type == RESOURCE_BROKER) {
        (void)snprintf(msg, msglen,
                       "broker configs are static in this broker: set them in "
                       "server.properties (dynamic broker configs are not supported)");
        return KP_ERR_INVALID_REQUEST;
    }
    if (type != RESOURCE_TOPIC) {
        (void)snprintf(msg, msglen, "unsupported resource type %d", (int)type);
        return KP_ERR_INVALID_REQUEST;
    }
    struct br_topic *t = br_rm_find_topic(&b->rm, name);
    if (t == NULL) {
        (void)snprintf(msg, msglen, "topic \"%.*s\" does not exist",
                       name.len > 0 ? (int)name.len : 0, name.ptr != NULL ? name.ptr : "");
        return KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    struct br_topic_config tc;
    if (incremental) {
        const struct br_topic_config *pending = br_topic_admin_configs_pending(b, t->name);
        tc = pending != NULL ? *pending : t->config;
    } else {
        br_topic_config_from_broker(&b->cfg, &tc);
    }
    int arc = br_config_apply_changes(b, &tc, ch, n, incremental, msg, msglen);
    if (arc != 0) {
        return arc;
    }
    if (validate_only) {
        return 0;
    }
    int rc = br_topic_admin_set_configs(b, t, &tc, incremental, n, op, msg, msglen);
    if (rc != 0) {
        br_error("storing the configs of topic %s failed: %s", t->name, msg);
    }
    return rc;
}

static void fill_result(struct br_req *r, int rc, const char *msg, struct br_config_result *out)
{
    out->code = (int16_t)kp_err_to_wire(rc);
    out->message = rc != 0 && msg[0] != '\0' ? arena_str(r, msg) : KP_STR_NULL;
}

static int alter_configs(struct br_req *r)
{
    const struct kp_AlterConfigsRequest *q = r->body;
    size_t nres = q->Resources.count > 0 ? (size_t)q->Resources.count : 0;
    struct br_config_result *results = br_req_array(r, nres, sizeof *results);
    if (results == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < nres; i++) {
        const struct kp_AlterConfigsRequest_AlterConfigsResource *res = &q->Resources.items[i];
        struct br_config_result *out = &results[i];
        out->type = res->ResourceType;
        out->name = res->ResourceName;
        size_t n = res->Configs.count > 0 ? (size_t)res->Configs.count : 0;
        struct br_config_change *ch = br_req_array(r, n, sizeof *ch);
        if (ch == NULL) {
            return KP_E_NOMEM;
        }
        for (size_t k = 0; k < n; k++) {
            ch[k].name = res->Configs.items[k].Name;
            ch[k].op = OP_SET;
            ch[k].value = res->Configs.items[k].Value;
        }
        char msg[512];
        int rc = alter_resource(r->b, res->ResourceType, res->ResourceName, ch, n, false,
                                q->ValidateOnly, &out->op, msg, sizeof msg);
        fill_result(r, rc, msg, out);
    }
    return br_topic_admin_answer_configs(r, results, nres);
}

static int incremental_alter_configs(struct br_req *r)
{
    const struct kp_IncrementalAlterConfigsRequest *q = r->body;
    size_t nres = q->Resources.count > 0 ? (size_t)q->Resources.count : 0;
    struct br_config_result *results = br_req_array(r, nres, sizeof *results);
    if (results == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < nres; i++) {
        const struct kp_IncrementalAlterConfigsRequest_AlterConfigsResource *res =
            &q->Resources.items[i];
        struct br_config_result *out = &results[i];
        out->type = res->ResourceType;
        out->name = res->ResourceName;
        size_t n = res->Configs.count > 0 ? (size_t)res->Configs.count : 0;
        struct br_config_change *ch = br_req_array(r, n, sizeof *ch);
        if (ch == NULL) {
            return KP_E_NOMEM;
        }
        for (size_t k = 0; k < n; k++) {
            ch[k].name = res->Configs.items[k].Name;
            ch[k].op = res->Configs.items[k].ConfigOperation;
            ch[k].value = res->Configs.items[k].Value;
        }
        char msg[512];
        int rc = alter_resource(r->b, res->ResourceType, res->ResourceName, ch, n, true,
                                q->ValidateOnly, &out->op, msg, sizeof msg);
        fill_result(r, rc, msg, out);
    }
    return br_topic_admin_answer_configs(r, results, nres);
}

int br_standalone_alter_configs(struct br_req *r, bool incremental)
{
    return incremental ? incremental_alter_configs(r) : alter_configs(r);
}

/* ---------------------------------------------------------------- DeleteRecords */

/* Moves one partition's log start; *low: the log start afterwards. */
static int delete_records(struct br_server *b, struct kp_str topic, int32_t index, int64_t offset,
                          int64_t *low)
{
    *low = -1;
    struct br_topic *t = br_rm_find_topic(&b->rm, topic);
    if (t == NULL || index < 0 || index >= t->npartitions || t->partitions[index].log == NULL) {
        return KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    struct br_partition *p = &t->partitions[index];
    if ((t->config.cleanup_policy & BR_CLEANUP_DELETE) == 0) {
        /* Kafka: records of a compacted-only topic cannot be deleted */
        return KP_ERR_POLICY_VIOLATION;
    }
    if (offset == -1) {
        offset = p->hw;
    }
    if (offset < 0 || offset > p->hw) {
        return KP_ERR_OFFSET_OUT_OF_RANGE;
    }
    int64_t before = br_log_start_offset(p->log);
    int rc = br_log_set_start_offset(p->log, offset);
    if (rc != 0) {
        return rc;
    }
    rc = br_log_delete_segments_before(p->log, br_log_start_offset(p->log), NULL);
    if (rc != 0) {
        return rc;
    }
    *low = br_log_start_offset(p->log);
    if (*low != before) {
        br_info("%s-%" PRId32 ": log start offset moved from %" PRId64 " to %" PRId64
                " (DeleteRecords)",
                t->name, index, before, *low);
    }
    return 0;
}

int br_h_delete_records(struct br_req *r)
{
    const struct kp_DeleteRecordsRequest *q = r->body;
    struct br_server *b = r->b;
    struct kp_DeleteRecordsResponse resp;
    kp_DeleteRecordsResponse_init(&resp);
    resp.Topics.items = br_req_array(r, (size_t)q->Topics.count, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = q->Topics.count;
    bool moved = false;
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_DeleteRecordsRequest_DeleteRecordsTopic *qt = &q->Topics.items[i];
        struct kp_DeleteRecordsResponse_DeleteRecordsTopicResult *rt = &resp.Topics.items[i];
        rt->Name = qt->Name;
        rt->Partitions.items =
            br_req_array(r, (size_t)qt->Partitions.count, sizeof *rt->Partitions.items);
        if (rt->Partitions.items == NULL) {
            return KP_E_NOMEM;
        }
        rt->Partitions.count = qt->Partitions.count;
        for (int32_t j = 0; j < qt->Partitions.count; j++) {
            const struct kp_DeleteRecordsRequest_DeleteRecordsPartition *qp =
                &qt->Partitions.items[j];
            struct kp_DeleteRecordsResponse_DeleteRecordsPartitionResult *rp =
                &rt->Partitions.items[j];
            rp->PartitionIndex = qp->PartitionIndex;
            int rc = delete_records(b, qt->Name, qp->PartitionIndex, qp->Offset, &rp->LowWatermark);
            rp->ErrorCode = (int16_t)kp_err_to_wire(rc);
            moved = moved || rc == 0;
        }
    }
    if (moved) {
        /* the next housekeeping tick writes log-start-offset-checkpoint */
        br_logm_checkpoints_soon(b->logs);
    }
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- DescribeLogDirs */

static bool partition_wanted(const struct kp_DescribeLogDirsRequest *q, const char *topic,
                             int32_t p)
{
    if (q->Topics.count < 0) {
        return true; /* null: everything */
    }
    for (int32_t i = 0; i < q->Topics.count; i++) {
        const struct kp_DescribeLogDirsRequest_DescribableLogDirTopic *t = &q->Topics.items[i];
        if (!kp_str_eq_c(t->Topic, topic)) {
            continue;
        }
        for (int32_t k = 0; k < t->Partitions.count; k++) {
            if (t->Partitions.items[k] == p) {
                return true;
            }
        }
    }
    return false;
}

int br_h_describe_log_dirs(struct br_req *r)
{
    const struct kp_DescribeLogDirsRequest *q = r->body;
    struct br_server *b = r->b;
    struct kp_DescribeLogDirsResponse resp;
    kp_DescribeLogDirsResponse_init(&resp);
    size_t ndirs = b->cfg.n_log_dirs;
    resp.Results.items = br_req_array(r, ndirs, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Results.count = (int32_t)ndirs;
    for (size_t d = 0; d < ndirs; d++) {
        struct kp_DescribeLogDirsResponse_DescribeLogDirsResult *res = &resp.Results.items[d];
        res->ErrorCode = KP_ERR_NONE;
        res->LogDir = kp_str_c(b->cfg.log_dirs[d]);
        res->Topics.items = br_req_array(r, b->rm.ntopics, sizeof *res->Topics.items);
        if (res->Topics.items == NULL) {
            return KP_E_NOMEM;
        }
        res->Topics.count = 0;
        for (size_t i = 0; i < b->rm.ntopics; i++) {
            const struct br_topic *t = b->rm.topics[i];
            struct kp_DescribeLogDirsResponse_DescribeLogDirsTopic *rt =
                &res->Topics.items[res->Topics.count];
            rt->Name = kp_str_c(t->name);
            rt->Partitions.items =
                br_req_array(r, (size_t)t->npartitions, sizeof *rt->Partitions.items);
            if (rt->Partitions.items == NULL) {
                return KP_E_NOMEM;
            }
            rt->Partitions.count = 0;
            for (int32_t p = 0; p < t->npartitions; p++) {
                const struct br_partition *part = &t->partitions[p];
                if (part->log == NULL || part->managed == NULL ||
                    br_managed_log_dir(part->managed) != d || !partition_wanted(q, t->name, p)) {
                    continue;
                }
                struct kp_DescribeLogDirsResponse_DescribeLogDirsPartition *rp =
                    &rt->Partitions.items[rt->Partitions.count++];
                rp->PartitionIndex = p;
                rp->PartitionSize = br_log_size_bytes(part->log);
                /* Kafka: max(HW - LEO, 0) for the current log (0 for a
                 * leader); future logs (replica moves) do not exist here */
                int64_t lag = part->hw - br_log_end_offset(part->log);
                rp->OffsetLag = lag > 0 ? lag : 0;
                rp->IsFutureKey = false;
            }
            if (rt->Partitions.count > 0) {
                res->Topics.count++;
            }
        }
    }
    return br_respond(r, &resp);
}

/* ---------------------------------------------------------------- CreatePartitions */

/* A result's message, copied into the response's arena (NULL when short of
 * memory: the code stands). */
static void set_message(struct br_req *r,
                        struct kp_CreatePartitionsResponse_CreatePartitionsTopicResult *out,
                        const char *msg)
{
    out->ErrorMessage = msg[0] != '\0' ? arena_str(r, msg) : KP_STR_NULL;
}

/* Kafka 2.0's AdminZkClient.validateReplicaAssignment for the partitions
 * added, on a cluster of this one broker (AdminManager.createPartitions
 * checks for unknown brokers and the number of assignments first). */
static int check_assignments(const struct br_server *b,
                             const struct kp_CreatePartitionsRequest_CreatePartitionsTopic *ct,
                             int32_t increment, int16_t rf, char *err, size_t errlen)
{
    const struct kp_CreatePartitionsRequest_CreatePartitionsAssignment *as = ct->Assignments.items;
    for (int32_t i = 0; i < ct->Assignments.count; i++) {
        for (int32_t k = 0; k < as[i].BrokerIds.count; k++) {
            if (as[i].BrokerIds.items[k] != b->node_id) {
                (void)snprintf(err, errlen, "Unknown broker(s) in replica assignment: %" PRId32 ".",
                               as[i].BrokerIds.items[k]);
                return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
            }
        }
    }
    if (ct->Assignments.count != increment) {
        (void)snprintf(err, errlen,
                       "Increasing the number of partitions by %" PRId32 " but %" PRId32
                       " assignments provided.",
                       increment, ct->Assignments.count);
        return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    int32_t first = ct->Count - increment;
    for (int32_t i = 0; i < ct->Assignments.count; i++) {
        int32_t n = as[i].BrokerIds.count;
        if (n <= 0) {
            (void)snprintf(err, errlen,
                           "Cannot have replication factor of 0 for partition id %" PRId32 ".",
                           first + i);
            return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
        }
        if (n > 1) {
            /* every id is this broker's: a second one repeats it */
            (void)snprintf(err, errlen,
                           "Duplicate brokers not allowed in replica assignment: %" PRId32
                           " for partition id %" PRId32 ".",
                           b->node_id, first + i);
            return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
        }
        if (n != rf) {
            (void)snprintf(err, errlen,
                           "Inconsistent replication factor between partitions, partition 0 has "
                           "%d while partitions [%" PRId32 "] have replication factors [%" PRId32
                           "], respectively.",
                           rf, first + i, n);
            return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
        }
    }
    return 0;
}

/* One topic of the request: 0 (started, or valid with validate_only) or a
 * Kafka error code with err set. The checks and messages are Kafka 2.0's
 * (KafkaApis.handleCreatePartitionsRequest, AdminManager.createPartitions,
 * AdminZkClient.addPartitions). */
static int create_partitions_one(struct br_req *r,
                                 const struct kp_CreatePartitionsRequest_CreatePartitionsTopic *ct,
                                 bool validate_only, char *err, size_t errlen)
{
    struct br_server *b = r->b;
    struct br_topic *t = br_rm_find_topic(&b->rm, ct->Name);
    int32_t nlen = ct->Name.len > 0 ? ct->Name.len : 0;
    if (t != NULL && br_topic_admin_reserved(b, ct->Name) && !br_topic_admin_adding(b, ct->Name)) {
        (void)snprintf(err, errlen, "The topic is queued for deletion.");
        return KP_ERR_INVALID_TOPIC_EXCEPTION;
    }
    if (t == NULL) {
        /* a topic still being created is not there yet either */
        (void)snprintf(err, errlen, "The topic '%.*s' does not exist.",
                       (int)(nlen > 249 ? 249 : nlen), ct->Name.ptr != NULL ? ct->Name.ptr : "");
        return KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    if (br_topic_admin_adding(b, ct->Name)) {
        (void)snprintf(err, errlen, "Partitions are being added to topic '%s'.", t->name);
        return KP_ERR_REASSIGNMENT_IN_PROGRESS;
    }
    if (t->internal) {
        /* Samsa's own rule: each group's records live in the partition its
         * id hashes to over the partition count; more partitions would
         * move the groups away from their committed offsets */
        (void)snprintf(err, errlen,
                       "The number of partitions of the internal topic '%s' cannot be changed.",
                       t->name);
        return KP_ERR_INVALID_REQUEST;
    }
    int32_t old = t->npartitions;
    if (ct->Count < old) {
        (void)snprintf(err, errlen,
                       "Topic currently has %" PRId32 " partitions, which is higher than the "
                       "requested %" PRId32 ".",
                       old, ct->Count);
        return KP_ERR_INVALID_PARTITIONS;
    }
    if (ct->Count == old) {
        (void)snprintf(err, errlen, "Topic already has %" PRId32 " partitions.", old);
        return KP_ERR_INVALID_PARTITIONS;
    }
    if (ct->Count > BR_MAX_PARTITIONS) {
        (void)snprintf(err, errlen, "The number of partitions must be at most %d.",
                       BR_MAX_PARTITIONS);
        return KP_ERR_INVALID_PARTITIONS;
    }
    int32_t increment = ct->Count - old;
    int16_t rf = t->replication_factor > 0 ? t->replication_factor : 1;
    int32_t *replicas = NULL;
    if (ct->Assignments.count >= 0) { /* not null: the client's placement */
        int e = check_assignments(b, ct, increment, rf, err, errlen);
        if (e != 0) {
            return e;
        }
        replicas = br_req_array(r, (size_t)increment * (size_t)rf, sizeof *replicas);
        if (replicas == NULL) {
            return KP_E_NOMEM;
        }
        for (int32_t i = 0; i < increment; i++) {
            memcpy(&replicas[(size_t)i * (size_t)rf], ct->Assignments.items[i].BrokerIds.items,
                   (size_t)rf * sizeof *replicas);
        }
    }
    if (validate_only) {
        return 0;
    }
    return br_topic_admin_add_partitions(b, t, ct->Count, replicas, err, errlen);
}

/* A topic name of the request and where it was. */
struct named {
    struct kp_str name;
    size_t index;
};

/* By name, then by position: the first of equal names sorts first. */
static int named_cmp(const void *pa, const void *pb)
{
    const struct named *a = pa;
    const struct named *b = pb;
    int32_t al = a->name.len > 0 ? a->name.len : 0;
    int32_t bl = b->name.len > 0 ? b->name.len : 0;
    int32_t m = al < bl ? al : bl;
    int c = m > 0 ? memcmp(a->name.ptr, b->name.ptr, (size_t)m) : 0;
    if (c != 0) {
        return c;
    }
    if (al != bl) {
        return al < bl ? -1 : 1;
    }
    return a->index < b->index ? -1 : a->index > b->index;
}

int br_create_partitions_repeats(const struct kp_CreatePartitionsRequest *q, uint8_t *state)
{
    size_t n = q->Topics.count > 0 ? (size_t)q->Topics.count : 0;
    struct named *byname = kp_calloc(n > 0 ? n : 1, sizeof *byname);
    if (byname == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        byname[i].name = q->Topics.items[i].Name;
        byname[i].index = i;
        state[i] = 0;
    }
    if (n > 1) {
        qsort(byname, n, sizeof *byname, named_cmp);
    }
    for (size_t i = 1; i < n; i++) {
        if (kp_str_eq(byname[i].name, byname[i - 1].name)) {
            size_t prev = byname[i - 1].index;
            state[prev] = state[prev] == 0 ? 1 : state[prev];
            state[byname[i].index] = 2;
        }
    }
    kp_free(byname);
    return 0;
}

int br_standalone_create_partitions(struct br_req *r)
{
    const struct kp_CreatePartitionsRequest *q = r->body;
    int32_t n = q->Topics.count > 0 ? q->Topics.count : 0;
    struct kp_CreatePartitionsResponse resp;
    kp_CreatePartitionsResponse_init(&resp);
    resp.Results.items = br_req_array(r, (size_t)n, sizeof *resp.Results.items);
    if (resp.Results.items == NULL) {
        return KP_E_NOMEM;
    }
    /* one result per topic named: a name given twice is refused once
     * (Kafka answers a map keyed by topic). Found by sorting, so that a
     * request of many topics costs n log n, not n squared. */
    uint8_t *state = br_req_array(r, (size_t)n, sizeof *state);
    if (state == NULL || br_create_partitions_repeats(q, state) != 0) {
        return KP_E_NOMEM;
    }
    int32_t count = 0;
    for (int32_t i = 0; i < n; i++) {
        const struct kp_CreatePartitionsRequest_CreatePartitionsTopic *ct = &q->Topics.items[i];
        if (state[i] == 2) {
            continue;
        }
        bool dup = state[i] == 1;
        struct kp_CreatePartitionsResponse_CreatePartitionsTopicResult *out =
            &resp.Results.items[count++];
        out->Name = ct->Name;
        out->ErrorMessage = KP_STR_NULL;
        char err[512] = "";
        int e;
        if (dup) {
            (void)snprintf(err, sizeof err, "Duplicate topic in request.");
            e = KP_ERR_INVALID_REQUEST;
        } else {
            e = create_partitions_one(r, ct, q->ValidateOnly, err, sizeof err);
            if (e == KP_E_NOMEM) {
                return e;
            }
        }
        out->ErrorCode = (int16_t)kp_err_to_wire(e);
        if (e != 0) {
            set_message(r, out, err);
        }
    }
    resp.Results.count = count;
    /* the partitions being made are waited for (timeout_ms), off the reactor */
    return br_topic_admin_answer_partitions(r, &resp, q->TimeoutMs, q->ValidateOnly);
}

/* ---------------------------------------------------------------- DeleteTopics */

int br_standalone_delete_topics(struct br_req *r)
{
    const struct kp_DeleteTopicsRequest *q = r->body;
    struct kp_DeleteTopicsResponse resp;
    kp_DeleteTopicsResponse_init(&resp);
    resp.Responses.items =
        br_req_array(r, (size_t)(q->TopicNames.count > 0 ? q->TopicNames.count : 0),
                                    sizeof *resp.Responses.items);
    if (resp.Responses.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Responses.count = q->TopicNames.count;
    for (int32_t i = 0; i < q->TopicNames.count; i++) {
        struct kp_DeleteTopicsResponse_DeletableTopicResult *out = &resp.Responses.items[i];
        out->Name = q->TopicNames.items[i];
        struct br_topic *t = br_rm_find_topic(&r->b->rm, out->Name);
        if (t == NULL) {
            out->ErrorCode = KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        } else if (!r->b->cfg.delete_topic_enable) {
            out->ErrorCode = KP_ERR_TOPIC_DELETION_DISABLED;
        } else if (t->internal) {
            out->ErrorCode = KP_ERR_INVALID_REQUEST;
        } else {
            /* started (answered once its directories are gone); the name
             * view points into the frame, not into the topic */
            out->ErrorCode = (int16_t)kp_err_to_wire(br_topic_admin_delete(r->b, t));
        }
    }
    return br_topic_admin_answer_delete(r, &resp, q->TimeoutMs);
}

/* ---------------------------------------------------------------- CreateTopics */

int br_standalone_create_topic(struct br_server *b, struct br_topic_meta *m,
                               const struct br_topic_config *tc, char *err, size_t errlen)
{
    /* every replica is this broker (a replication factor of 1 here) */
    size_t n = (size_t)m->partitions * (size_t)m->replication_factor;
    m->replicas = kp_calloc(n, sizeof *m->replicas);
    if (m->replicas == NULL) {
        (void)snprintf(err, errlen, "out of memory");
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    for (size_t i = 0; i < n; i++) {
        m->replicas[i] = b->node_id;
    }
    /* the topic is stored and its logs made off the reactor; it appears
     * once they exist (topic_admin.h) */
    int e = br_topic_admin_create(b, m, tc, err, errlen);
    kp_free(m->replicas);
    m->replicas = NULL;
    return e;
}
