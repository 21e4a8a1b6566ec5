/* Unit tests of the request layer (broker/src/server/) of a standalone
 * broker, driven in process: a broker on a scratch directory with no
 * listener, its requests fed through in-process connections
 * (br_conn_local_new) and its answers decoded. What they check is what a
 * client sees of a cluster of one: its metadata cache filled by its own
 * local controller (Metadata names it controller, only live broker, leader
 * and whole ISR of every partition), the admin manager it runs (CreateTopics
 * checked against the live brokers, collisions, CreatePartitions,
 * DeleteTopics), the group coordinator's __consumer_offsets made on first
 * use, and the inter-broker APIs it does not serve. */
#define _GNU_SOURCE

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>

#include "base/logging.h"
#include "broker.h"
#include "cunit_run.h"
#include "reactor/net.h"
#include "server/admin_manager.h"
#include "server/topic_admin.h"
#include "tmpdir.h"

#define ARENA_MAX ((size_t)16 * 1024 * 1024)
#define NODE 7

static struct {
    char root[64];
    struct br_config cfg; /* parsed once per test, the same for every start */
    struct br_broker b;
    struct br_conn *conn;
    int32_t corr;
    struct kp_arena arena;
} h;

static void start(void)
{
    memset(&h.b, 0, sizeof h.b);
    h.b.s.cfg = h.cfg;
    h.b.s.in_process = true;
    CU_ASSERT_FATAL(br_broker_start(&h.b) == 0);
    /* br_net_create blocks these for its signalfd: give them back */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    (void)sigprocmask(SIG_UNBLOCK, &mask, NULL);
    h.conn = br_conn_local_new(h.b.s.net, "test");
    CU_ASSERT_FATAL(h.conn != NULL);
    kp_arena_init(&h.arena, ARENA_MAX);
}

static void stop(void)
{
    kp_arena_free(&h.arena);
    br_conn_local_free(h.conn);
    h.conn = NULL;
    br_broker_stop(&h.b);
}

static void setup(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    CU_ASSERT_FATAL(st_tmpdir_make(h.root, sizeof h.root, "server") != NULL);
    char cfg[512];
    int n = snprintf(cfg, sizeof cfg,
                     "broker.id=%d\n"
                     "log.dirs=%s/d\n"
                     "listeners=PLAINTEXT://127.0.0.1:9092\n"
                     "log.cleaner.enable=false\n"
                     "offsets.topic.num.partitions=3\n"
                     "group.initial.rebalance.delay.ms=0\n"
                     "auto.create.topics.enable=false\n",
                     NODE, h.root);
    char err[512];
    memset(&h.cfg, 0, sizeof h.cfg);
    CU_ASSERT_FATAL(br_config_parse_buffer(cfg, (size_t)n, "test_server", NULL, 0, &h.cfg, err,
                                           sizeof err) == 0);
    start();
}

static void teardown(void)
{
    stop();
    br_config_free(&h.cfg);
    (void)st_tmpdir_remove(h.root);
}

/* Sends a request and returns its decoded answer (in h.arena): every
 * request here is answered at once, or once the I/O worker's jobs (run
 * inline in process) came back through the mailbox. */
static void *call(int16_t api, int16_t version, const void *body)
{
    struct kp_request_header hdr = {api, version, ++h.corr, kp_str_c("test-server")};
    struct kp_writer w;
    kp_wr_init(&w, ARENA_MAX);
    CU_ASSERT_FATAL(kp_request_encode(&w, &hdr, body) == 0);
    int rc = br_conn_local_feed(h.conn, w.buf, w.len);
    kp_wr_free(&w);
    CU_ASSERT_FATAL(rc == 0 && !br_conn_local_closed(h.conn));
    size_t len = 0;
    const uint8_t *out = br_conn_local_output(h.conn, &len);
    for (int round = 0; len == 0 && round < 16; round++) {
        br_broker_wake(&h.b);
        out = br_conn_local_output(h.conn, &len);
    }
    CU_ASSERT_FATAL(len >= 4 && out != NULL);
    if (out == NULL || len < 4) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    size_t size = kp_load_be32(out);
    CU_ASSERT_FATAL(len == size + 4);
    uint8_t *copy = kp_arena_alloc(&h.arena, len);
    CU_ASSERT_FATAL(copy != NULL);
    if (copy == NULL) {
        abort(); /* as above */
    }
    memcpy(copy, out, len);
    br_conn_local_consume(h.conn, len);
    struct kp_response_header rh;
    void *resp = NULL;
    CU_ASSERT_FATAL(kp_response_decode(copy + 4, size, api, version, &h.arena, &rh, &resp) == 0);
    CU_ASSERT_FATAL(rh.CorrelationId == hdr.CorrelationId);
    if (resp == NULL) {
        abort(); /* as above */
    }
    return resp;
}

static const struct kp_MetadataResponse *metadata(const char *topic)
{
    struct kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    struct kp_MetadataRequest_MetadataRequestTopic t = {kp_str_c(topic)};
    req.Topics.items = topic != NULL ? &t : NULL;
    req.Topics.count = topic != NULL ? 1 : -1;
    req.AllowAutoTopicCreation = false;
    return call(KP_API_METADATA, 5, &req);
}

/* CreateTopics v2 of one topic; its error code, the message in msg. */
static int16_t create(const char *name, int32_t partitions, int16_t rf, const char **msg)
{
    struct kp_CreateTopicsRequest req;
    kp_CreateTopicsRequest_init(&req);
    struct kp_CreateTopicsRequest_CreatableTopic ct;
    memset(&ct, 0, sizeof ct);
    ct.Name = kp_str_c(name);
    ct.NumPartitions = partitions;
    ct.ReplicationFactor = rf;
    req.Topics.items = &ct;
    req.Topics.count = 1;
    req.TimeoutMs = 10000;
    const struct kp_CreateTopicsResponse *resp = call(KP_API_CREATE_TOPICS, 2, &req);
    CU_ASSERT_FATAL(resp->Topics.count == 1);
    static char text[256];
    struct kp_str m = resp->Topics.items[0].ErrorMessage;
    (void)snprintf(text, sizeof text, "%.*s", m.len > 0 ? (int)m.len : 0, m.len > 0 ? m.ptr : "");
    if (msg != NULL) {
        *msg = text;
    }
    return resp->Topics.items[0].ErrorCode;
}

/* A cluster of one: Metadata, from the cache the local controller filled,
 * names this broker the controller and the only live broker; the
 * inter-broker APIs are not offered. */
static void test_standalone_is_a_cluster_of_one(void)
{
    const struct kp_MetadataResponse *m = metadata(NULL);
    CU_ASSERT_EQUAL(m->ControllerId, NODE);
    CU_ASSERT_EQUAL_FATAL(m->Brokers.count, 1);
    CU_ASSERT_EQUAL(m->Brokers.items[0].NodeId, NODE);
    CU_ASSERT_EQUAL(m->Topics.count, 0);
    CU_ASSERT_PTR_EQUAL(h.b.s.admin_ops, &br_admin_standalone);
    static const int16_t inter_broker[] = {KP_API_LEADER_AND_ISR, KP_API_STOP_REPLICA,
                                           KP_API_UPDATE_METADATA, KP_API_CONTROLLED_SHUTDOWN};
    struct kp_ApiVersionsRequest av;
    kp_ApiVersionsRequest_init(&av);
    const struct kp_ApiVersionsResponse *v = call(KP_API_API_VERSIONS, 0, &av);
    bool metadata_listed = false;
    for (int32_t i = 0; i < v->ApiKeys.count; i++) {
        metadata_listed |= v->ApiKeys.items[i].ApiKey == KP_API_METADATA;
        for (size_t k = 0; k < sizeof inter_broker / sizeof inter_broker[0]; k++) {
            CU_ASSERT_NOT_EQUAL(v->ApiKeys.items[i].ApiKey, inter_broker[k]);
        }
    }
    CU_ASSERT(metadata_listed);
}

/* A topic made: every partition led by this broker, which is its one
 * replica and its whole ISR; the same after a restart (the topics loaded
 * from the metadata file are published again). */
static void test_created_topic_led_here(void)
{
    CU_ASSERT_EQUAL(create("orders", 3, 1, NULL), KP_ERR_NONE);
    for (int round = 0; round < 2; round++) {
        const struct kp_MetadataResponse *m = metadata("orders");
        CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
        const struct kp_MetadataResponse_MetadataResponseTopic *t = &m->Topics.items[0];
        CU_ASSERT_EQUAL(t->ErrorCode, KP_ERR_NONE);
        CU_ASSERT_FALSE(t->IsInternal);
        CU_ASSERT_EQUAL_FATAL(t->Partitions.count, 3);
        for (int32_t i = 0; i < 3; i++) {
            const struct kp_MetadataResponse_MetadataResponsePartition *p = &t->Partitions.items[i];
            CU_ASSERT_EQUAL(p->PartitionIndex, i);
            CU_ASSERT_EQUAL(p->ErrorCode, KP_ERR_NONE);
            CU_ASSERT_EQUAL(p->LeaderId, NODE);
            CU_ASSERT_EQUAL_FATAL(p->ReplicaNodes.count, 1);
            CU_ASSERT_EQUAL(p->ReplicaNodes.items[0], NODE);
            CU_ASSERT_EQUAL_FATAL(p->IsrNodes.count, 1);
            CU_ASSERT_EQUAL(p->IsrNodes.items[0], NODE);
        }
        stop();
        start();
    }
}

/* CreateTopics is checked as on a cluster: the replication factor against
 * the live brokers (one), a name that collides with a topic's in metric
 * names, a name taken. */
static void test_create_checked_against_the_cluster(void)
{
    const char *msg = NULL;
    CU_ASSERT_EQUAL(create("wide", 1, 2, &msg), KP_ERR_INVALID_REPLICATION_FACTOR);
    CU_ASSERT_STRING_EQUAL(msg, "Replication factor: 2 larger than available brokers: 1.");
    CU_ASSERT_EQUAL(create("a.b", 1, 1, NULL), KP_ERR_NONE);
    CU_ASSERT_EQUAL(create("a_b", 1, 1, &msg), KP_ERR_INVALID_TOPIC_EXCEPTION);
    CU_ASSERT_STRING_EQUAL(msg, "Topic 'a_b' collides with existing topics: a.b");
    CU_ASSERT_EQUAL(create("a.b", 1, 1, NULL), KP_ERR_TOPIC_ALREADY_EXISTS);
    const struct kp_MetadataResponse *m = metadata("wide");
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT_EQUAL(m->Topics.items[0].ErrorCode, KP_ERR_UNKNOWN_TOPIC_OR_PARTITION);
}

/* Partitions added, and the topic deleted: the cache follows each. */
static void test_cache_follows_partitions_and_deletion(void)
{
    CU_ASSERT_EQUAL(create("grows", 2, 1, NULL), KP_ERR_NONE);
    struct kp_CreatePartitionsRequest cp;
    kp_CreatePartitionsRequest_init(&cp);
    struct kp_CreatePartitionsRequest_CreatePartitionsTopic ct;
    memset(&ct, 0, sizeof ct);
    ct.Name = kp_str_c("grows");
    ct.Count = 5;
    ct.Assignments.count = -1;
    cp.Topics.items = &ct;
    cp.Topics.count = 1;
    cp.TimeoutMs = 10000;
    const struct kp_CreatePartitionsResponse *cr = call(KP_API_CREATE_PARTITIONS, 0, &cp);
    CU_ASSERT_EQUAL_FATAL(cr->Results.count, 1);
    CU_ASSERT_EQUAL(cr->Results.items[0].ErrorCode, KP_ERR_NONE);
    const struct kp_MetadataResponse *m = metadata("grows");
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT_EQUAL(m->Topics.items[0].Partitions.count, 5);

    struct kp_DeleteTopicsRequest dt;
    kp_DeleteTopicsRequest_init(&dt);
    struct kp_str name = kp_str_c("grows");
    dt.TopicNames.items = &name;
    dt.TopicNames.count = 1;
    dt.TimeoutMs = 10000;
    const struct kp_DeleteTopicsResponse *dr = call(KP_API_DELETE_TOPICS, 1, &dt);
    CU_ASSERT_EQUAL_FATAL(dr->Responses.count, 1);
    CU_ASSERT_EQUAL(dr->Responses.items[0].ErrorCode, KP_ERR_NONE);
    m = metadata("grows");
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT_EQUAL(m->Topics.items[0].ErrorCode, KP_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    CU_ASSERT_EQUAL(metadata(NULL)->Topics.count, 0);
}

static int16_t find_coordinator(const char *group, int32_t *node)
{
    struct kp_FindCoordinatorRequest req;
    kp_FindCoordinatorRequest_init(&req);
    req.Key = kp_str_c(group);
    const struct kp_FindCoordinatorResponse *resp = call(KP_API_FIND_COORDINATOR, 1, &req);
    *node = resp->NodeId;
    return resp->ErrorCode;
}

/* The group coordinator makes __consumer_offsets on first use, with one
 * replica whatever offsets.topic.replication.factor says (3 by default: a
 * cluster of one never grows), and answers COORDINATOR_NOT_AVAILABLE until
 * it is made, as Kafka does; then it coordinates, and a commit reads
 * back. */
static void test_offsets_topic_made_on_first_use(void)
{
    int32_t node = -1;
    int16_t err = find_coordinator("g1", &node);
    CU_ASSERT_EQUAL(err, KP_ERR_COORDINATOR_NOT_AVAILABLE);
    for (int round = 0; err != KP_ERR_NONE && round < 16; round++) {
        br_broker_wake(&h.b);
        err = find_coordinator("g1", &node);
    }
    CU_ASSERT_EQUAL_FATAL(err, KP_ERR_NONE);
    CU_ASSERT_EQUAL(node, NODE);
    const struct kp_MetadataResponse *m = metadata("__consumer_offsets");
    CU_ASSERT_EQUAL_FATAL(m->Topics.count, 1);
    CU_ASSERT(m->Topics.items[0].IsInternal);
    CU_ASSERT_EQUAL_FATAL(m->Topics.items[0].Partitions.count, 3);
    CU_ASSERT_EQUAL(m->Topics.items[0].Partitions.items[0].ReplicaNodes.count, 1);

    CU_ASSERT_EQUAL(create("events", 1, 1, NULL), KP_ERR_NONE);
    struct kp_OffsetCommitRequest oc;
    kp_OffsetCommitRequest_init(&oc);
    oc.GroupId = kp_str_c("g1");
    oc.GenerationId = -1;
    oc.MemberId = kp_str_c("");
    oc.GroupInstanceId = KP_STR_NULL;
    oc.RetentionTimeMs = -1;
    struct kp_OffsetCommitRequest_OffsetCommitRequestPartition part = {0, 42, -1, -1,
                                                                       kp_str_c("meta")};
    struct kp_OffsetCommitRequest_OffsetCommitRequestTopic topic;
    topic.Name = kp_str_c("events");
    topic.Partitions.items = &part;
    topic.Partitions.count = 1;
    oc.Topics.items = &topic;
    oc.Topics.count = 1;
    const struct kp_OffsetCommitResponse *cr = call(KP_API_OFFSET_COMMIT, 2, &oc);
    CU_ASSERT_EQUAL_FATAL(cr->Topics.count, 1);
    CU_ASSERT_EQUAL(cr->Topics.items[0].Partitions.items[0].ErrorCode, KP_ERR_NONE);

    struct kp_OffsetFetchRequest of;
    kp_OffsetFetchRequest_init(&of);
    of.GroupId = kp_str_c("g1");
    int32_t index = 0;
    struct kp_OffsetFetchRequest_OffsetFetchRequestTopic ot;
    ot.Name = kp_str_c("events");
    ot.PartitionIndexes.items = &index;
    ot.PartitionIndexes.count = 1;
    of.Topics.items = &ot;
    of.Topics.count = 1;
    const struct kp_OffsetFetchResponse *fr = call(KP_API_OFFSET_FETCH, 1, &of);
    CU_ASSERT_EQUAL_FATAL(fr->Topics.count, 1);
    CU_ASSERT_EQUAL(fr->Topics.items[0].Partitions.items[0].ErrorCode, KP_ERR_NONE);
    CU_ASSERT_EQUAL(fr->Topics.items[0].Partitions.items[0].CommittedOffset, 42);
}

#define CASE(fn)                                                                                   \
    static void run_##fn(void)                                                                     \
    {                                                                                              \
        setup();                                                                                   \
        fn();                                                                                      \
        teardown();                                                                                \
    }
CASE(test_standalone_is_a_cluster_of_one)
CASE(test_created_topic_led_here)
CASE(test_create_checked_against_the_cluster)
CASE(test_cache_follows_partitions_and_deletion)
CASE(test_offsets_topic_made_on_first_use)

int main(void)
{
    static CU_TestInfo tests[] = {
        {"standalone is a cluster of one", run_test_standalone_is_a_cluster_of_one},
        {"a created topic is led here", run_test_created_topic_led_here},
        {"CreateTopics checked against the cluster", run_test_create_checked_against_the_cluster},
        {"the cache follows partitions and deletion",
         run_test_cache_follows_partitions_and_deletion},
        {"__consumer_offsets made on first use", run_test_offsets_topic_made_on_first_use},
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("broker-server", tests);
}
