/* samsa-broker: DeleteTopics and CreatePartitions on a broker of a
 * cluster, through ZooKeeper and the controller, and the directories of
 * deleted replicas removed off the reactor (see request.h, cluster_wait.h). */
#define _GNU_SOURCE

#include "base/logging.h"
#include "base/worker.h"
#include "cluster/assignment.h"
#include "cluster/controller.h"
#include "cluster/zk_json.h"
#include "group/group.h"
#include "server/cluster_wait.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DELETE_TOPICS_PATH "/admin/delete_topics/"
/* A conditional write that lost to another writer is tried again this many
 * times on what ZooKeeper then holds. */
#define MAX_ATTEMPTS 5

static bool controller_active(const struct br_server *b)
{
    return b->controller != NULL && br_controller_active(b->controller, NULL);
}

/* A name of the request as a C string (empty when it is no topic name). */
static void topic_name(struct kp_str s, char out[BR_TOPIC_NAME_MAX + 1])
{
    out[0] = '\0';
    if (s.len > 0 && (size_t)s.len <= BR_TOPIC_NAME_MAX && s.ptr != NULL &&
        br_topic_name_valid(s.ptr, (size_t)s.len)) {
        memcpy(out, s.ptr, (size_t)s.len);
        out[s.len] = '\0';
    }
}

/* ---------------------------------------------------------------- DeleteTopics */

/* /admin/delete_topics/<t> is gone: the controller finished (or dropped)
 * the topic's deletion. The DeleteTopics waiting for it check again. */
static void marker_gone(struct br_server *b, const char *topic)
{
    for (struct br_cwait *w = b->ca.cwaits; w != NULL; w = w->next) {
        for (size_t i = 0; i < w->n; i++) {
            struct br_cwait_entry *e = &w->e[i];
            if (e->pending && e->until == BR_CWAIT_TOPIC_GONE && strcmp(e->name, topic) == 0) {
                e->marker_gone = true;
            }
        }
    }
    br_cluster_metadata_changed(b);
}

static void marker_checked(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    if (r->rc == BR_ZK_NONODE) {
        marker_gone(b, op->topic); /* deleted already */
    } else if (r->rc != BR_ZK_OK) {
        br_warn("topic %s: watching %s%s: %s (the request waits for its timeout)", op->topic,
                DELETE_TOPICS_PATH, op->topic, br_zk_rc_name(r->rc));
    }
    br_cop_free(op);
}

static void marker_created(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NODEEXISTS) {
        br_warn("deleting topic %s: creating %s%s: %s", op->topic, DELETE_TOPICS_PATH, op->topic,
                br_zk_rc_name(r->rc));
        br_cop_report(op, KP_ERR_UNKNOWN_SERVER_ERROR, NULL);
        br_cop_free(op);
        return;
    }
    /* NODEEXISTS: marked already; the request waits for it all the same
     * (Kafka's AdminManager.deleteTopics swallows
     * TopicAlreadyMarkedForDeletionException) */
    br_info("topic %s marked for deletion (%s%s)", op->topic, DELETE_TOPICS_PATH, op->topic);
    if (op->no_wait) {
        br_cop_report(op, KP_ERR_REQUEST_TIMED_OUT, NULL);
        br_cop_free(op);
        return;
    }
    if (op->w == NULL) {
        br_cop_free(op);
        return;
    }
    br_cop_until(op, BR_CWAIT_TOPIC_GONE, 0);
    /* the marker is the last znode the controller deletes: its deletion
     * says the topic's znodes are gone */
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, DELETE_TOPICS_PATH "%s", op->topic);
    op->call.done = marker_checked;
    if (!br_cluster_zk_ready(b) ||
        br_zk_exists(b->zk, path, true, br_zk_call_tag(&op->call)) != 0) {
        br_cop_free(op);
    }
}

void br_cluster_topics_watch(struct br_server *b, enum br_zk_watch kind, const char *path)
{
    size_t plen = strlen(DELETE_TOPICS_PATH);
    if (kind == BR_ZK_WATCH_DELETED && strncmp(path, DELETE_TOPICS_PATH, plen) == 0) {
        marker_gone(b, path + plen);
    }
}

/* Kafka 2.0's KafkaApis.handleDeleteTopicsRequest and
 * AdminManager.deleteTopics. */
int br_cluster_delete_topics(struct br_req *r)
{
    const struct kp_DeleteTopicsRequest *q = r->body;
    struct br_server *b = r->b;
    size_t n = q->TopicNames.count > 0 ? (size_t)q->TopicNames.count : 0;
    struct br_cwait *w = br_cwait_new(r, n);
    if (w == NULL) {
        return KP_E_NOMEM;
    }
    bool active = controller_active(b);
    for (size_t i = 0; i < n; i++) {
        struct kp_str name = q->TopicNames.items[i];
        if (br_cwait_name(w, i, name, 0) != 0) {
            br_cwait_done(w, i, KP_ERR_UNKNOWN_SERVER_ERROR, NULL);
            continue;
        }
        char topic[BR_TOPIC_NAME_MAX + 1];
        topic_name(name, topic);
        if (!active) {
            /* the request goes to the controller (Metadata names it) */
            br_cwait_done(w, i, KP_ERR_NOT_CONTROLLER, NULL);
        } else if (topic[0] == '\0' || br_mc_topic(&b->mc, topic, strlen(topic)) == NULL) {
            br_cwait_done(w, i, KP_ERR_UNKNOWN_TOPIC_OR_PARTITION, NULL);
        } else if (!b->cfg.delete_topic_enable) {
            /* Kafka 2.0's controller would drop the marker and the request
             * time out; the code Kafka 2.1 answers says why (KIP-322) */
            br_cwait_done(w, i, KP_ERR_TOPIC_DELETION_DISABLED, NULL);
        } else if (strcmp(topic, BR_OFFSETS_TOPIC) == 0) {
            br_cwait_done(w, i, KP_ERR_INVALID_REQUEST, NULL); /* as standalone */
        } else if (!br_cluster_zk_ready(b)) {
            br_cwait_done(w, i, KP_ERR_UNKNOWN_SERVER_ERROR, NULL);
        } else {
            struct br_cop *op = br_cop_new(b, w, i, topic, marker_created);
            char path[BR_TOPIC_NAME_MAX + 32];
            (void)snprintf(path, sizeof path, DELETE_TOPICS_PATH "%s", topic);
            if (op == NULL) {
                br_cwait_done(w, i, KP_ERR_UNKNOWN_SERVER_ERROR, NULL);
                continue;
            }
            op->no_wait = q->TimeoutMs <= 0;
            if (br_zk_create(b->zk, path, NULL, 0, BR_ZK_PERSISTENT, br_zk_call_tag(&op->call)) !=
                0) {
                br_cop_free(op);
                br_cwait_done(w, i, KP_ERR_UNKNOWN_SERVER_ERROR, NULL);
            }
        }
    }
    return br_cwait_park(w, r, q->TimeoutMs);
}

/* ---------------------------------------------------------------- CreatePartitions */

static void partitions_read(struct br_zk_call *call, const struct br_zk_result *r);

static int read_assignment(struct br_cop *op)
{
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s", op->topic);
    op->call.done = partitions_read;
    if (!br_cluster_zk_ready(op->b)) {
        return -1;
    }
    return br_zk_get(op->b->zk, path, false, br_zk_call_tag(&op->call));
}

static void partitions_written(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    if (r->rc == BR_ZK_OK) {
        br_info("topic %s: %" PRId32 " partition(s) written to ZooKeeper: the controller makes "
                "the new ones",
                op->topic, op->count);
        if (op->no_wait) {
            br_cop_report(op, KP_ERR_REQUEST_TIMED_OUT, NULL);
        } else {
            br_cop_until(op, BR_CWAIT_PARTITIONS_LED, op->count);
        }
        br_cop_free(op);
        return;
    }
    if (r->rc == BR_ZK_BADVERSION && ++op->attempts < MAX_ATTEMPTS) {
        /* another writer changed the assignment: decide again on it */
        kp_free(op->data);
        op->data = NULL;
        if (read_assignment(op) == 0) {
            return;
        }
    }
    char msg[512];
    (void)snprintf(msg, sizeof msg, "writing /brokers/topics/%s: %s", op->topic,
                   br_zk_rc_name(r->rc));
    br_warn("topic %s: %s", op->topic, msg);
    br_cop_report(op,
                  r->rc == BR_ZK_NONODE ? KP_ERR_UNKNOWN_TOPIC_OR_PARTITION
                                        : KP_ERR_UNKNOWN_SERVER_ERROR,
                  msg);
    br_cop_free(op);
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a;
    int32_t y = *(const int32_t *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

static bool has_id(const int32_t *ids, size_t n, int32_t id)
{
    return bsearch(&id, ids, n, sizeof *ids, cmp_id) != NULL;
}

/* The client's assignment of the partitions added (Kafka 2.0's
 * AdminManager.createPartitions, then AdminZkClient.validateReplicaAssignment):
 * 0 or INVALID_REPLICA_ASSIGNMENT with msg. */
static int check_assignment(const struct br_cop *op, const int32_t *brokers, size_t nb,
                            int32_t existing, int32_t increment, int32_t rf, char *msg,
                            size_t msglen)
{
    const int32_t *a = op->assignment;
    const int32_t *first = op->assignment_first;
    int32_t rows = op->assignment_rows;
    for (int32_t i = 0; i < rows; i++) {
        for (int32_t k = first[i]; k < first[i + 1]; k++) {
            if (!has_id(brokers, nb, a[k])) {
                (void)snprintf(msg, msglen, "Unknown broker(s) in replica assignment: %" PRId32 ".",
                               a[k]);
                return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
            }
        }
    }
    if (rows != increment) {
        (void)snprintf(msg, msglen,
                       "Increasing the number of partitions by %" PRId32 " but %" PRId32
                       " assignments provided.",
                       increment, rows);
        return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    for (int32_t i = 0; i < rows; i++) {
        int32_t n = first[i + 1] - first[i];
        if (n == 0) {
            (void)snprintf(msg, msglen,
                           "Cannot have replication factor of 0 for partition id %" PRId32 ".",
                           existing + i);
            return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
        }
        for (int32_t k = first[i]; k < first[i + 1]; k++) {
            for (int32_t j = first[i]; j < k; j++) {
                if (a[j] == a[k]) {
                    (void)snprintf(msg, msglen,
                                   "Duplicate brokers not allowed in replica assignment: %" PRId32
                                   " for partition id %" PRId32 ".",
                                   a[k], existing + i);
                    return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
                }
            }
        }
        if (n != rf) {
            (void)snprintf(msg, msglen,
                           "Inconsistent replication factor between partitions, partition 0 has "
                           "%" PRId32 " while partitions [%" PRId32 "] have replication factors "
                           "[%" PRId32 "], respectively.",
                           rf, existing + i, n);
            return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
        }
    }
    return 0;
}

/* The topic's assignment as ZooKeeper holds it: the new partitions placed
 * (Kafka 2.0's AdminZkClient.addPartitions) and the whole written back,
 * conditionally on the version read. */
static void partitions_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    char msg[512] = "";
    int code = 0;
    struct br_zk_topic_assignment a;
    memset(&a, 0, sizeof a);
    int32_t *brokers = NULL;
    const char **racks = NULL;
    int32_t *all = NULL;
    int32_t *first = NULL;
    if (r->rc == BR_ZK_NONODE) {
        (void)snprintf(msg, sizeof msg, "The topic '%s' does not exist.", op->topic);
        code = KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        goto out;
    }
    if (r->rc != BR_ZK_OK || r->data == NULL) {
        (void)snprintf(msg, sizeof msg, "reading /brokers/topics/%s: %s", op->topic,
                       r->rc == BR_ZK_OK ? "no data" : br_zk_rc_name(r->rc));
        code = KP_ERR_UNKNOWN_SERVER_ERROR;
        goto out;
    }
    if (br_zk_topic_assignment_decode(r->data, r->data_len, r->path, &a, msg, sizeof msg) != 0) {
        code = KP_ERR_UNKNOWN_SERVER_ERROR;
        goto out;
    }
    int32_t existing = a.n_partitions;
    if (op->count < existing) {
        (void)snprintf(msg, sizeof msg,
                       "Topic currently has %" PRId32 " partitions, which is higher than the "
                       "requested %" PRId32 ".",
                       existing, op->count);
        code = KP_ERR_INVALID_PARTITIONS;
        goto out;
    }
    if (op->count == existing) {
        (void)snprintf(msg, sizeof msg, "Topic already has %" PRId32 " partitions.", existing);
        code = KP_ERR_INVALID_PARTITIONS;
        goto out;
    }
    int32_t increment = op->count - existing;
    int32_t rf = existing > 0 ? a.first[1] - a.first[0] : 0;
    if (existing == 0 || rf < 1) {
        (void)snprintf(msg, sizeof msg,
                       "Unexpected existing replica assignment for topic '%s', partition id 0 is "
                       "missing.",
                       op->topic);
        code = KP_ERR_UNKNOWN_SERVER_ERROR;
        goto out;
    }
    /* the brokers: every live one, ascending (Kafka's getBrokerMetadatas) */
    size_t nb = b->mc.nbrokers;
    brokers = kp_calloc(nb > 0 ? nb : 1, sizeof *brokers);
    racks = kp_calloc(nb + 1, sizeof *racks);
    size_t total = (size_t)a.first[existing] + (size_t)increment * (size_t)rf;
    all = kp_calloc(total, sizeof *all);
    first = kp_calloc((size_t)op->count + 1, sizeof *first);
    if (brokers == NULL || racks == NULL || all == NULL || first == NULL) {
        (void)snprintf(msg, sizeof msg, "out of memory");
        code = KP_ERR_UNKNOWN_SERVER_ERROR;
        goto out;
    }
    br_mc_brokers_with_racks(&b->mc, brokers, racks);
    memcpy(all, a.replicas, (size_t)a.first[existing] * sizeof *all);
    memcpy(first, a.first, ((size_t)existing + 1) * sizeof *first);
    int32_t *added = &all[a.first[existing]];
    if (op->assignment != NULL) {
        code = check_assignment(op, brokers, nb, existing, increment, rf, msg, sizeof msg);
        if (code != 0) {
            goto out;
        }
        memcpy(added, op->assignment, (size_t)increment * (size_t)rf * sizeof *added);
    } else {
        if ((size_t)rf > nb) {
            (void)snprintf(msg, sizeof msg,
                           "Replication factor: %" PRId32 " larger than available brokers: %zu.",
                           rf, nb);
            code = KP_ERR_INVALID_REPLICATION_FACTOR;
            goto out;
        }
        /* the start: the first broker whose id is at least partition 0's
         * first replica (AdminZkClient.addPartitions) */
        size_t start = 0;
        while (start < nb && brokers[start] < a.replicas[a.first[0]]) {
            start++;
        }
        if (start == nb) {
            start = 0;
        }
        int arc = br_assign_replicas_racks(brokers, racks, nb, existing, increment, rf,
                                           (uint32_t)start, (uint32_t)start, added);
        if (arc != 0) {
            (void)snprintf(msg, sizeof msg, "%s",
                           arc == BR_ASSIGN_RACKS_INCOMPLETE ? BR_ASSIGN_RACKS_INCOMPLETE_MSG
                                                             : "cannot assign the replicas");
            code = KP_ERR_UNKNOWN_SERVER_ERROR;
            goto out;
        }
    }
    for (int32_t p = existing; p < op->count; p++) {
        first[p + 1] = first[p] + rf;
    }
    if (op->validate_only) {
        br_cop_report(op, 0, NULL);
        goto out;
    }
    struct br_zk_topic_assignment next = {op->count, first, all};
    char *json = NULL;
    size_t len = 0;
    if (br_zk_topic_assignment_encode(&next, &json, &len) != 0) {
        (void)snprintf(msg, sizeof msg, "cannot encode the assignment");
        code = KP_ERR_UNKNOWN_SERVER_ERROR;
        goto out;
    }
    kp_free(op->data);
    op->data = json;
    op->data_len = len;
    op->call.done = partitions_written;
    br_info("topic %s: adding %" PRId32 " partition(s) with replication factor %" PRId32, op->topic,
            increment, rf);
    if (!br_cluster_zk_ready(b) ||
        br_zk_set(b->zk, r->path, json, len, r->stat.version, br_zk_call_tag(&op->call)) != 0) {
        (void)snprintf(msg, sizeof msg, "cannot write to ZooKeeper");
        code = KP_ERR_UNKNOWN_SERVER_ERROR;
        goto out;
    }
    op = NULL; /* under way */
out:
    br_zk_topic_assignment_clear(&a);
    kp_free(brokers);
    kp_free(racks);
    kp_free(all);
    kp_free(first);
    if (op != NULL) {
        if (code != 0) {
            br_cop_report(op, code, msg);
        }
        br_cop_free(op);
    }
}


/* One topic of a CreatePartitions: its work started, or its entry done. */
static void create_partitions_one(struct br_server *b, struct br_cwait *w, size_t i,
                                  const struct kp_CreatePartitionsRequest_CreatePartitionsTopic *ct,
                                  bool validate_only, bool no_wait)
{
    char topic[BR_TOPIC_NAME_MAX + 1];
    char msg[512];
    topic_name(ct->Name, topic);
    if (topic[0] == '\0' || br_mc_topic(&b->mc, topic, strlen(topic)) == NULL) {
        int32_t nlen = ct->Name.len > 0 ? ct->Name.len : 0;
        (void)snprintf(msg, sizeof msg, "The topic '%.*s' does not exist.",
                       (int)(nlen > 249 ? 249 : nlen), ct->Name.ptr != NULL ? ct->Name.ptr : "");
        br_cwait_done(w, i, KP_ERR_UNKNOWN_TOPIC_OR_PARTITION, msg);
        return;
    }
    if (strcmp(topic, BR_OFFSETS_TOPIC) == 0) {
        /* as standalone: each group's records live in the partition its id
         * hashes to over the count */
        (void)snprintf(msg, sizeof msg,
                       "The number of partitions of the internal topic '%s' cannot be changed.",
                       topic);
        br_cwait_done(w, i, KP_ERR_INVALID_REQUEST, msg);
        return;
    }
    if (ct->Count > BR_MAX_PARTITIONS) {
        (void)snprintf(msg, sizeof msg, "The number of partitions must be at most %d.",
                       BR_MAX_PARTITIONS);
        br_cwait_done(w, i, KP_ERR_INVALID_PARTITIONS, msg);
        return;
    }
    if (!br_cluster_zk_ready(b)) {
        br_cwait_done(w, i, KP_ERR_UNKNOWN_SERVER_ERROR, "this broker is not connected to ZooKeeper");
        return;
    }
    struct br_cop *op = br_cop_new(b, w, i, topic, partitions_read);
    if (op == NULL) {
        br_cwait_done(w, i, KP_ERR_UNKNOWN_SERVER_ERROR, "out of memory");
        return;
    }
    op->count = ct->Count;
    op->validate_only = validate_only;
    op->no_wait = no_wait;
    if (ct->Assignments.count >= 0) { /* not null: the client's placement */
        int32_t rows = ct->Assignments.count;
        size_t ids = 0;
        for (int32_t k = 0; k < rows; k++) {
            ids += ct->Assignments.items[k].BrokerIds.count > 0
                       ? (size_t)ct->Assignments.items[k].BrokerIds.count
                       : 0;
        }
        op->assignment = kp_calloc(ids > 0 ? ids : 1, sizeof *op->assignment);
        op->assignment_first = kp_calloc((size_t)rows + 1, sizeof *op->assignment_first);
        if (op->assignment == NULL || op->assignment_first == NULL) {
            br_cop_report(op, KP_ERR_UNKNOWN_SERVER_ERROR, "out of memory");
            br_cop_free(op);
            return;
        }
        int32_t at = 0;
        for (int32_t k = 0; k < rows; k++) {
            const struct kp_CreatePartitionsRequest_CreatePartitionsAssignment *as =
                &ct->Assignments.items[k];
            op->assignment_first[k] = at;
            for (int32_t j = 0; j < as->BrokerIds.count; j++) {
                op->assignment[at++] = as->BrokerIds.items[j];
            }
        }
        op->assignment_first[rows] = at;
        op->assignment_rows = rows;
    }
    if (read_assignment(op) != 0) {
        br_cop_report(op, KP_ERR_UNKNOWN_SERVER_ERROR, "cannot read from ZooKeeper");
        br_cop_free(op);
    }
}

/* Kafka 2.0's KafkaApis.handleCreatePartitionsRequest and
 * AdminManager.createPartitions. */
int br_cluster_create_partitions(struct br_req *r)
{
    const struct kp_CreatePartitionsRequest *q = r->body;
    struct br_server *b = r->b;
    size_t n = q->Topics.count > 0 ? (size_t)q->Topics.count : 0;
    /* one result per topic named: a name given twice is refused once
     * (Kafka answers a map keyed by topic), found by sorting */
    uint8_t *state = kp_calloc(n > 0 ? n : 1, 1);
    size_t *slot = kp_calloc(n > 0 ? n : 1, sizeof *slot);
    if (state == NULL || slot == NULL || br_create_partitions_repeats(q, state) != 0) {
        kp_free(state);
        kp_free(slot);
        return KP_E_NOMEM;
    }
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        slot[i] = count;
        count += state[i] == 2 ? 0 : 1;
    }
    struct br_cwait *w = br_cwait_new(r, count);
    if (w == NULL) {
        kp_free(state);
        kp_free(slot);
        return KP_E_NOMEM;
    }
    bool active = controller_active(b);
    for (size_t i = 0; i < n; i++) {
        const struct kp_CreatePartitionsRequest_CreatePartitionsTopic *ct = &q->Topics.items[i];
        if (state[i] == 2) {
            continue;
        }
        size_t e = slot[i];
        if (br_cwait_name(w, e, ct->Name, 0) != 0) {
            br_cwait_done(w, e, KP_ERR_UNKNOWN_SERVER_ERROR, NULL);
        } else if (!active) {
            br_cwait_done(w, e, KP_ERR_NOT_CONTROLLER, NULL);
        } else if (state[i] == 1) {
            br_cwait_done(w, e, KP_ERR_INVALID_REQUEST, "Duplicate topic in request.");
        } else {
            create_partitions_one(b, w, e, ct, q->ValidateOnly, q->TimeoutMs <= 0);
        }
    }
    kp_free(state);
    kp_free(slot);
    return br_cwait_park(w, r, q->ValidateOnly ? 0 : q->TimeoutMs);
}

/* ---------------------------------------------------------------- removing directories */

/* Deleted replicas' directories, removed by the cluster's I/O worker. */
struct dirs_job {
    struct br_job job; /* first */
    char **paths;
    size_t n;
    size_t failed;
};

static void dirs_run(struct br_job *job)
{
    struct dirs_job *j = (struct dirs_job *)(void *)job;
    for (size_t i = 0; i < j->n; i++) {
        if (j->paths[i] != NULL && br_log_dir_delete(j->paths[i]) != 0) {
            j->failed++;
            br_error("cannot remove %s, a replica of a deleted topic: remove it by hand",
                     j->paths[i]);
        }
    }
}

static const struct br_job_ops dirs_ops = {"remove deleted replicas", dirs_run};

static void dirs_delivered(void *ctx, struct br_mail *m)
{
    (void)ctx;
    struct dirs_job *j = (struct dirs_job *)(void *)m;
    for (size_t i = 0; i < j->n; i++) {
        if (j->paths[i] != NULL && j->failed == 0) {
            br_info("removed %s", j->paths[i]);
        }
        kp_free(j->paths[i]);
    }
    kp_free(j->paths);
    kp_free(j);
}

void br_cluster_remove_dirs(struct br_server *b, char **paths, size_t n)
{
    if (n == 0) {
        kp_free(paths);
        return;
    }
    struct dirs_job *j = kp_calloc(1, sizeof *j);
    if (j == NULL || b->ca.worker == NULL) {
        /* out of memory: removed here, on the reactor, rather than left */
        for (size_t i = 0; i < n; i++) {
            if (paths[i] != NULL && br_log_dir_delete(paths[i]) != 0) {
                br_error("cannot remove %s, a replica of a deleted topic", paths[i]);
            }
            kp_free(paths[i]);
        }
        kp_free(paths);
        kp_free(j);
        return;
    }
    j->paths = paths;
    j->n = n;
    j->job.ops = &dirs_ops;
    j->job.mail.deliver = dirs_delivered;
    br_worker_submit(b->ca.worker, &j->job);
}
