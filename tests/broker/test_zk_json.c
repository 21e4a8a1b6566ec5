/* Unit tests for Kafka 2.0's znode data (broker/src/cluster/zk_json.h): Kafka's
 * own examples, the exact bytes Samsa writes, round trips, and hostile data. */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/err.h>

#include "cluster/zk_json.h"
#include "cunit_run.h"

#define ERRLEN 512

/* ------------------------------------------------------------ a decoder by kind */

enum kind {
    K_BROKER,
    K_CONTROLLER,
    K_CONTROLLER_EPOCH,
    K_ASSIGNMENT,
    K_STATE,
    K_CONFIG,
    K_CONFIG_CHANGE,
    K_ISR_CHANGE,
    K_CLUSTER_ID,
    K_PID_BLOCK,
};

/* Decodes buf[0..len) as kind and frees what it got. */
static int decode(enum kind k, const char *buf, size_t len, char *err, size_t errlen)
{
    int rc = KP_E_INVALID_ARG;
    switch (k) {
    case K_BROKER: {
        struct br_zk_broker b;
        rc = br_zk_broker_decode(buf, len, "/brokers/ids/1", &b, err, errlen);
        br_zk_broker_clear(&b);
        break;
    }
    case K_CONTROLLER: {
        struct br_zk_controller c;
        rc = br_zk_controller_decode(buf, len, "/controller", &c, err, errlen);
        break;
    }
    case K_CONTROLLER_EPOCH: {
        int32_t e = 0;
        rc = br_zk_controller_epoch_decode(buf, len, "/controller_epoch", &e, err, errlen);
        break;
    }
    case K_ASSIGNMENT: {
        struct br_zk_topic_assignment a;
        rc = br_zk_topic_assignment_decode(buf, len, "/brokers/topics/t", &a, err, errlen);
        br_zk_topic_assignment_clear(&a);
        break;
    }
    case K_STATE: {
        struct br_zk_partition_state s;
        rc = br_zk_partition_state_decode(buf, len, "/brokers/topics/t/partitions/0/state", &s, err,
                                          errlen);
        br_zk_partition_state_clear(&s);
        break;
    }
    case K_CONFIG: {
        struct br_meta_config *c = NULL;
        size_t n = 0;
        rc = br_zk_topic_config_decode(buf, len, "/config/topics/t", &c, &n, err, errlen);
        br_zk_configs_free(c, n);
        break;
    }
    case K_CONFIG_CHANGE: {
        struct br_zk_config_change c;
        rc = br_zk_config_change_decode(buf, len, "/config/changes/config_change_0000000001", &c,
                                        err, errlen);
        break;
    }
    case K_ISR_CHANGE: {
        struct br_zk_topic_partition *tps = NULL;
        size_t n = 0;
        rc = br_zk_isr_change_decode(buf, len, "/isr_change_notification/isr_change_0000000001",
                                     &tps, &n, err, errlen);
        kp_free(tps);
        break;
    }
    case K_CLUSTER_ID: {
        char id[BR_ZK_CLUSTER_ID_MAX + 1];
        rc = br_zk_cluster_id_decode(buf, len, "/cluster/id", id, err, errlen);
        break;
    }
    case K_PID_BLOCK: {
        struct br_zk_producer_id_block b;
        rc = br_zk_producer_id_block_decode(buf, len, "/latest_producer_id_block", &b, err, errlen);
        break;
    }
    }
    return rc;
}

/* ------------------------------------------------------------ Kafka's documents */

/* Kafka's examples (ZkData.scala's doc comments, the fact sheet's §1.2) and
 * what Kafka 2.0 itself accepts: every one decodes. */
static const struct {
    enum kind kind;
    const char *json;
} accepted[] = {
    /* /brokers/ids: versions 1 to 4 as ZkData.scala documents them (its
     * version 1 example lacks a comma after the port; here it has one) */
    {K_BROKER, "{\"version\":1,\"host\":\"localhost\",\"port\":9092,\"jmx_port\":9999,"
               "\"timestamp\":\"2233345666\"}"},
    {K_BROKER, "{\"version\":2,\"host\":\"localhost\",\"port\":9092,\"jmx_port\":9999,"
               "\"timestamp\":\"2233345666\",\"endpoints\":[\"PLAINTEXT://host1:9092\", "
               "\"SSL://host1:9093\"]}"},
    {K_BROKER, "{\"version\":3,\"host\":\"localhost\",\"port\":9092,\"jmx_port\":9999,"
               "\"timestamp\":\"2233345666\",\"endpoints\":[\"PLAINTEXT://host1:9092\", "
               "\"SSL://host1:9093\"],\"rack\":\"dc1\"}"},
    {K_BROKER, "{\"version\":4,\"host\":\"localhost\",\"port\":9092,\"jmx_port\":9999,"
               "\"timestamp\":\"2233345666\",\"endpoints\":[\"CLIENT://host1:9092\", "
               "\"REPLICATION://host1:9093\"],\"listener_security_protocol_map\":"
               "{\"CLIENT\":\"SSL\", \"REPLICATION\":\"PLAINTEXT\"},\"rack\":\"dc1\"}"},
    /* the fact sheet's, keys in another order */
    {K_BROKER, "{\"version\":4,\"host\":\"10.0.0.1\",\"port\":9092,\n \"endpoints\":"
               "[\"PLAINTEXT://10.0.0.1:9092\",\"REPLICATION://10.0.0.1:9093\"],\n"
               " \"listener_security_protocol_map\":{\"PLAINTEXT\":\"PLAINTEXT\","
               "\"REPLICATION\":\"SSL\"},\n \"rack\":\"dc1\",\"jmx_port\":-1,"
               "\"timestamp\":\"1530000000000\"}"},
    /* version 5 (Kafka 2.7's features), read as Kafka 2.0 reads it */
    {K_BROKER, "{\"features\":{},\"listener_security_protocol_map\":{\"PLAINTEXT\":\"PLAINTEXT\"},"
               "\"endpoints\":[\"PLAINTEXT://b1:9092\"],\"jmx_port\":-1,\"host\":\"b1\","
               "\"timestamp\":\"1600000000000\",\"port\":9092,\"version\":5}"},
    /* no PLAINTEXT listener: host null, port -1; a null rack; a protocol in lower case */
    {K_BROKER, "{\"version\":4,\"host\":null,\"port\":-1,\"endpoints\":[\"SSL://h:9093\"],"
               "\"listener_security_protocol_map\":{\"SSL\":\"ssl\"},\"rack\":null,"
               "\"jmx_port\":-1,\"timestamp\":\"1\"}"},
    {K_CONTROLLER, "{\"version\":1,\"brokerid\":2,\"timestamp\":\"1530000000000\"}"},
    {K_CONTROLLER, "{\"brokerid\":0}"},
    {K_CONTROLLER_EPOCH, "7"},
    {K_CONTROLLER_EPOCH, "+7"}, /* Integer.parseInt takes a sign and leading zeros */
    {K_CONTROLLER_EPOCH, "007"},
    {K_ASSIGNMENT, "{\"version\":1,\"partitions\":{\"0\":[1,2,3],\"1\":[2,3,1]}}"},
    {K_ASSIGNMENT, "{\"partitions\":{\"1\":[2],\"0\":[1,2]}}"},
    /* Kafka 2.4's version 2 and 2.8's version 3: extra keys Kafka 2.0 ignores */
    {K_ASSIGNMENT, "{\"version\":2,\"partitions\":{\"0\":[1,2]},\"adding_replicas\":{},"
                   "\"removing_replicas\":{}}"},
    {K_ASSIGNMENT, "{\"version\":3,\"topic_id\":\"oE2ukL5gTsGu6VD8vY1X3g\",\"partitions\":"
                   "{\"0\":[1]},\"adding_replicas\":{},\"removing_replicas\":{}}"},
    {K_STATE, "{\"version\":1,\"leader\":1,\"leader_epoch\":4,\"isr\":[1,3],"
              "\"controller_epoch\":7}"},
    {K_STATE, "{\"controller_epoch\":0,\"leader\":-1,\"version\":1,\"leader_epoch\":0,"
              "\"isr\":[]}"},
    {K_CONFIG, "{\"version\":1,\"config\":{\"min.insync.replicas\":\"2\","
               "\"cleanup.policy\":\"compact\"}}"},
    {K_CONFIG, "{\"version\":1,\"config\":{}}"},
    {K_CONFIG, ""}, /* created without data */
    {K_CONFIG_CHANGE, "{\"version\":2,\"entity_path\":\"topics/my-topic\"}"},
    {K_CONFIG_CHANGE, "{\"version\":1,\"entity_type\":\"topics\",\"entity_name\":\"my-topic\"}"},
    {K_CONFIG_CHANGE, "{\"version\":2,\"entity_path\":\"users/alice/clients/app\"}"},
    {K_CONFIG_CHANGE, "{\"version\":2,\"entity_path\":\"brokers/<default>\"}"},
    {K_ISR_CHANGE, "{\"version\":1,\"partitions\":[{\"topic\":\"t\",\"partition\":0},"
                   "{\"topic\":\"t\",\"partition\":1}]}"},
    {K_ISR_CHANGE, "{\"version\":1,\"partitions\":[]}"},
    {K_CLUSTER_ID, "{\"version\":\"1\",\"id\":\"XxxJ0-ZzQDKdkf7G0U0Wzg\"}"},
    {K_PID_BLOCK, "{\"version\":1,\"broker\":3,\"block_start\":\"1000\",\"block_end\":\"1999\"}"},
    {K_PID_BLOCK, "{\"version\":1,\"broker\":0,\"block_start\":\"0\",\"block_end\":\"999\"}"},
};

static void test_kafkas_documents_decode(void)
{
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        char err[ERRLEN] = "";
        int rc =
            decode(accepted[i].kind, accepted[i].json, strlen(accepted[i].json), err, sizeof err);
        if (rc != 0) {
            printf("\n  accepted[%zu] %s: %s (%d)\n", i, accepted[i].json, err, rc);
        }
        CU_ASSERT_EQUAL(rc, 0);
    }
}

static void test_broker_v4_reads_every_field(void)
{
    const char *j = "{\"version\":4,\"host\":\"10.0.0.1\",\"port\":9092,\"endpoints\":"
                    "[\"PLAINTEXT://10.0.0.1:9092\",\"replication://[fe80::1%eth0]:9093\","
                    "\"EXTERNAL://:9094\"],\"listener_security_protocol_map\":"
                    "{\"PLAINTEXT\":\"PLAINTEXT\",\"REPLICATION\":\"SSL\",\"EXTERNAL\":"
                    "\"SASL_SSL\"},\"rack\":\"dc1\",\"jmx_port\":-1,\"timestamp\":"
                    "\"1530000000000\"}";
    struct br_zk_broker b;
    char err[ERRLEN] = "";
    CU_ASSERT_EQUAL_FATAL(br_zk_broker_decode(j, strlen(j), "b", &b, err, sizeof err), 0);
    CU_ASSERT_EQUAL(b.version, 4);
    CU_ASSERT_EQUAL_FATAL(b.n_endpoints, 3);
    CU_ASSERT_STRING_EQUAL(b.endpoints[0].listener, "PLAINTEXT");
    CU_ASSERT_STRING_EQUAL(b.endpoints[0].host, "10.0.0.1");
    CU_ASSERT_EQUAL(b.endpoints[0].port, 9092);
    CU_ASSERT_EQUAL(b.endpoints[0].security_protocol, BR_ZK_PLAINTEXT);
    /* ListenerName.normalised upper-cases; the brackets go */
    CU_ASSERT_STRING_EQUAL(b.endpoints[1].listener, "REPLICATION");
    CU_ASSERT_STRING_EQUAL(b.endpoints[1].host, "fe80::1%eth0");
    CU_ASSERT_EQUAL(b.endpoints[1].port, 9093);
    CU_ASSERT_EQUAL(b.endpoints[1].security_protocol, BR_ZK_SSL);
    /* an empty host is Kafka's null host */
    CU_ASSERT_STRING_EQUAL(b.endpoints[2].host, "");
    CU_ASSERT_EQUAL(b.endpoints[2].security_protocol, BR_ZK_SASL_SSL);
    CU_ASSERT_TRUE(b.has_rack);
    CU_ASSERT_STRING_EQUAL(b.rack, "dc1");
    CU_ASSERT_EQUAL(b.jmx_port, -1);
    CU_ASSERT_EQUAL(b.timestamp_ms, 1530000000000LL);
    br_zk_broker_clear(&b);
}

static void test_broker_v1_is_one_plaintext_endpoint(void)
{
    const char *j = "{\"version\":1,\"host\":\"localhost\",\"port\":9092,\"jmx_port\":9999,"
                    "\"timestamp\":\"2233345666\"}";
    struct br_zk_broker b;
    char err[ERRLEN] = "";
    CU_ASSERT_EQUAL_FATAL(br_zk_broker_decode(j, strlen(j), "b", &b, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(b.n_endpoints, 1);
    CU_ASSERT_STRING_EQUAL(b.endpoints[0].listener, "PLAINTEXT");
    CU_ASSERT_STRING_EQUAL(b.endpoints[0].host, "localhost");
    CU_ASSERT_EQUAL(b.endpoints[0].port, 9092);
    CU_ASSERT_EQUAL(b.jmx_port, 9999);
    CU_ASSERT_FALSE(b.has_rack);
    br_zk_broker_clear(&b);
}

/* Without a map a listener takes the protocol it is named after
 * (EndPoint.DefaultSecurityProtocolMap); one named otherwise has none. */
static void test_broker_without_map_needs_protocol_names(void)
{
    const char *ok = "{\"version\":2,\"jmx_port\":-1,\"endpoints\":[\"SASL_PLAINTEXT://h:1\"]}";
    const char *bad = "{\"version\":2,\"jmx_port\":-1,\"endpoints\":[\"CLIENT://h:1\"]}";
    struct br_zk_broker b;
    char err[ERRLEN] = "";
    CU_ASSERT_EQUAL_FATAL(br_zk_broker_decode(ok, strlen(ok), "b", &b, err, sizeof err), 0);
    CU_ASSERT_EQUAL(b.endpoints[0].security_protocol, BR_ZK_SASL_PLAINTEXT);
    br_zk_broker_clear(&b);
    CU_ASSERT_EQUAL(br_zk_broker_decode(bad, strlen(bad), "b", &b, err, sizeof err), KP_E_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no security protocol for listener \"CLIENT\""));
    CU_ASSERT_PTR_NULL(b.endpoints);
}

static void test_assignment_reads_partitions_in_order(void)
{
    const char *j = "{\"version\":1,\"partitions\":{\"2\":[3,1],\"0\":[1,2,3],\"1\":[2]}}";
    struct br_zk_topic_assignment a;
    char err[ERRLEN] = "";
    CU_ASSERT_EQUAL_FATAL(br_zk_topic_assignment_decode(j, strlen(j), "t", &a, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(a.n_partitions, 3);
    static const int32_t first[] = {0, 3, 4, 6};
    static const int32_t replicas[] = {1, 2, 3, 2, 3, 1};
    CU_ASSERT_EQUAL(memcmp(a.first, first, sizeof first), 0);
    CU_ASSERT_EQUAL(memcmp(a.replicas, replicas, sizeof replicas), 0);
    br_zk_topic_assignment_clear(&a);
}

static void test_state_reads_leader_epochs_and_isr(void)
{
    const char *j = "{\"version\":1,\"leader\":1,\"leader_epoch\":4,\"isr\":[1,3],"
                    "\"controller_epoch\":7}";
    struct br_zk_partition_state s;
    char err[ERRLEN] = "";
    CU_ASSERT_EQUAL_FATAL(br_zk_partition_state_decode(j, strlen(j), "s", &s, err, sizeof err), 0);
    CU_ASSERT_EQUAL(s.leader, 1);
    CU_ASSERT_EQUAL(s.leader_epoch, 4);
    CU_ASSERT_EQUAL(s.controller_epoch, 7);
    CU_ASSERT_EQUAL_FATAL(s.n_isr, 2);
    CU_ASSERT_EQUAL(s.isr[0], 1);
    CU_ASSERT_EQUAL(s.isr[1], 3);
    br_zk_partition_state_clear(&s);
}

static void test_config_change_both_versions(void)
{
    struct br_zk_config_change c;
    char err[ERRLEN] = "";
    const char *v1 = "{\"version\":1,\"entity_type\":\"clients\",\"entity_name\":\"app-1\"}";
    CU_ASSERT_EQUAL_FATAL(br_zk_config_change_decode(v1, strlen(v1), "c", &c, err, sizeof err), 0);
    CU_ASSERT_EQUAL(c.version, 1);
    CU_ASSERT_STRING_EQUAL(c.entity_type, "clients");
    CU_ASSERT_STRING_EQUAL(c.entity_name, "app-1");
    const char *v2 = "{\"version\":2,\"entity_path\":\"users/alice/clients/app\"}";
    CU_ASSERT_EQUAL_FATAL(br_zk_config_change_decode(v2, strlen(v2), "c", &c, err, sizeof err), 0);
    CU_ASSERT_EQUAL(c.version, 2);
    CU_ASSERT_STRING_EQUAL(c.entity_type, "users");
    CU_ASSERT_STRING_EQUAL(c.entity_name, "alice/clients/app");
}

static void test_small_documents_read_their_values(void)
{
    char err[ERRLEN] = "";
    const char *ctl = "{\"version\":1,\"brokerid\":2,\"timestamp\":\"1530000000000\"}";
    struct br_zk_controller c;
    CU_ASSERT_EQUAL(br_zk_controller_decode(ctl, strlen(ctl), "c", &c, err, sizeof err), 0);
    CU_ASSERT_EQUAL(c.broker_id, 2);
    CU_ASSERT_EQUAL(c.version, 1);
    CU_ASSERT_EQUAL(c.timestamp_ms, 1530000000000LL);
    /* timestamps and versions Kafka does not read may be anything */
    const char *odd = "{\"version\":\"x\",\"brokerid\":5,\"timestamp\":17}";
    CU_ASSERT_EQUAL(br_zk_controller_decode(odd, strlen(odd), "c", &c, err, sizeof err), 0);
    CU_ASSERT_EQUAL(c.broker_id, 5);
    CU_ASSERT_EQUAL(c.version, -1);
    CU_ASSERT_EQUAL(c.timestamp_ms, -1);

    int32_t epoch = 0;
    CU_ASSERT_EQUAL(br_zk_controller_epoch_decode("2147483647", 10, "e", &epoch, err, sizeof err),
                    0);
    CU_ASSERT_EQUAL(epoch, INT32_MAX);

    char id[BR_ZK_CLUSTER_ID_MAX + 1];
    const char *cid = "{\"version\":\"1\",\"id\":\"XxxJ0-ZzQDKdkf7G0U0Wzg\"}";
    CU_ASSERT_EQUAL(br_zk_cluster_id_decode(cid, strlen(cid), "c", id, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(id, "XxxJ0-ZzQDKdkf7G0U0Wzg");

    struct br_zk_producer_id_block b;
    const char *pid = "{\"version\":1,\"broker\":3,\"block_start\":\"9223372036854774808\","
                      "\"block_end\":\"9223372036854775807\"}";
    CU_ASSERT_EQUAL(br_zk_producer_id_block_decode(pid, strlen(pid), "p", &b, err, sizeof err), 0);
    CU_ASSERT_EQUAL(b.broker_id, 3);
    CU_ASSERT_EQUAL(b.block_start, INT64_MAX - 999);
    CU_ASSERT_EQUAL(b.block_end, INT64_MAX);

    struct br_meta_config *cfg = NULL;
    size_t n = 0;
    const char *tc = "{\"version\":1,\"config\":{\"min.insync.replicas\":\"2\","
                     "\"cleanup.policy\":\"compact\"}}";
    CU_ASSERT_EQUAL_FATAL(br_zk_topic_config_decode(tc, strlen(tc), "t", &cfg, &n, err, sizeof err),
                          0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(cfg[0].key, "min.insync.replicas");
    CU_ASSERT_STRING_EQUAL(cfg[0].value, "2");
    CU_ASSERT_STRING_EQUAL(cfg[1].key, "cleanup.policy");
    CU_ASSERT_STRING_EQUAL(cfg[1].value, "compact");
    br_zk_configs_free(cfg, n);
    const char *none = "{\"version\":1}";
    CU_ASSERT_EQUAL(br_zk_topic_config_decode(none, strlen(none), "t", &cfg, &n, err, sizeof err),
                    0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(cfg);

    struct br_zk_topic_partition *tps = NULL;
    const char *isr = "{\"version\":1,\"partitions\":[{\"topic\":\"a.b_c-1\",\"partition\":7}]}";
    CU_ASSERT_EQUAL_FATAL(br_zk_isr_change_decode(isr, strlen(isr), "i", &tps, &n, err, sizeof err),
                          0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(tps[0].topic, "a.b_c-1");
    CU_ASSERT_EQUAL(tps[0].partition, 7);
    kp_free(tps);
}

/* /admin/reassign_partitions as kafka-reassign-partitions.sh --execute
 * writes it: log_dirs ignored, the replicas in their order; what a move
 * cannot be is refused with its site. */
static void test_reassignment_reads_kafkas_document(void)
{
    char err[256];
    struct br_zk_reassignment *r = NULL;
    size_t n = 0;
    const char *doc = "{\"version\":1,\"partitions\":[{\"topic\":\"foo\",\"partition\":1,"
                      "\"replicas\":[3,1,2],\"log_dirs\":[\"any\",\"any\",\"any\"]},"
                      "{\"topic\":\"bar\",\"partition\":0,\"replicas\":[2]}]}";
    CU_ASSERT_EQUAL_FATAL(
        br_zk_reassignment_decode(doc, strlen(doc), "/admin/reassign_partitions", &r, &n, err,
                                  sizeof err),
        0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(r[0].tp.topic, "foo");
    CU_ASSERT_EQUAL(r[0].tp.partition, 1);
    CU_ASSERT_EQUAL_FATAL(r[0].nreplicas, 3);
    CU_ASSERT_EQUAL(r[0].replicas[0], 3);
    CU_ASSERT_EQUAL(r[0].replicas[2], 2);
    CU_ASSERT_STRING_EQUAL(r[1].tp.topic, "bar");
    CU_ASSERT_EQUAL(r[1].nreplicas, 1);
    char *out = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(br_zk_reassignment_encode(r, n, &out, &len), 0);
    const char *want = "{\"version\":1,\"partitions\":[{\"topic\":\"foo\",\"partition\":1,"
                       "\"replicas\":[3,1,2]},{\"topic\":\"bar\",\"partition\":0,"
                       "\"replicas\":[2]}]}";
    CU_ASSERT_EQUAL(len, strlen(want));
    CU_ASSERT_NSTRING_EQUAL(out, want, strlen(want));
    kp_free(out);
    kp_free(r);
    static const char *const bad[] = {
        "{\"version\":1,\"partitions\":[{\"topic\":\"foo\",\"partition\":0}]}",
        "{\"version\":1,\"partitions\":[{\"topic\":\"foo\",\"partition\":0,\"replicas\":[]}]}",
        "{\"version\":1,\"partitions\":[{\"topic\":\"foo\",\"partition\":0,\"replicas\":[1,1]}]}",
        "{\"version\":1,\"partitions\":[{\"topic\":\"foo\",\"partition\":0,\"replicas\":[-1]}]}",
        "{\"version\":1,\"partitions\":[{\"topic\":\"a/b\",\"partition\":0,\"replicas\":[1]}]}",
        "{\"version\":1,\"partitions\":{}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CU_ASSERT_NOT_EQUAL(br_zk_reassignment_decode(bad[i], strlen(bad[i]), "r", &r, &n, err,
                                                      sizeof err),
                            0);
        CU_ASSERT_PTR_NULL(r);
        CU_ASSERT_NOT_EQUAL(err[0], '\0');
    }
}

/* ------------------------------------------------------------ the bytes Samsa writes */

static void expect_bytes(int rc, char *out, size_t len, const char *want)
{
    if (rc != 0) {
        printf("\n  rc %d for %s\n", rc, want);
    }
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    if (out == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    if (len != strlen(want) || memcmp(out, want, len) != 0) {
        printf("\n  got  %.*s\n  want %s\n", (int)len, out, want);
    }
    CU_ASSERT_EQUAL(len, strlen(want));
    CU_ASSERT_EQUAL(memcmp(out, want, strlen(want) < len ? strlen(want) : len), 0);
    CU_ASSERT_EQUAL(out[len], '\0');
    kp_free(out);
}

static void test_encoders_write_kafkas_bytes(void)
{
    char *out = NULL;
    size_t len = 0;
    int rc;

    struct br_zk_endpoint eps[3] = {
        {"PLAINTEXT", "10.0.0.1", 9092, BR_ZK_PLAINTEXT},
        {"REPLICATION", "::1", 9093, BR_ZK_SSL},
        {"EXTERNAL", "", 9094, BR_ZK_SASL_SSL},
    };
    struct br_zk_broker b = {0};
    b.endpoints = eps;
    b.n_endpoints = 3;
    b.has_rack = true;
    memcpy(b.rack, "dc1", 4);
    b.jmx_port = -1;
    b.timestamp_ms = 1530000000000LL;
    rc = br_zk_broker_encode(&b, &out, &len);
    expect_bytes(rc, out, len,
                 "{\"version\":4,\"host\":\"10.0.0.1\",\"port\":9092,\"endpoints\":"
                 "[\"PLAINTEXT://10.0.0.1:9092\",\"REPLICATION://[::1]:9093\","
                 "\"EXTERNAL://:9094\"],\"listener_security_protocol_map\":{\"PLAINTEXT\":"
                 "\"PLAINTEXT\",\"REPLICATION\":\"SSL\",\"EXTERNAL\":\"SASL_SSL\"},"
                 "\"rack\":\"dc1\",\"jmx_port\":-1,\"timestamp\":\"1530000000000\"}");
    /* no PLAINTEXT endpoint: host null, port -1; no rack: no key */
    b.endpoints = &eps[1];
    b.n_endpoints = 1;
    b.has_rack = false;
    b.jmx_port = 9999;
    rc = br_zk_broker_encode(&b, &out, &len);
    expect_bytes(rc, out, len,
                 "{\"version\":4,\"host\":null,\"port\":-1,\"endpoints\":"
                 "[\"REPLICATION://[::1]:9093\"],\"listener_security_protocol_map\":"
                 "{\"REPLICATION\":\"SSL\"},\"jmx_port\":9999,\"timestamp\":\"1530000000000\"}");

    rc = br_zk_controller_encode(2, 1530000000000LL, &out, &len);
    expect_bytes(rc, out, len, "{\"version\":1,\"brokerid\":2,\"timestamp\":\"1530000000000\"}");
    rc = br_zk_controller_epoch_encode(7, &out, &len);
    expect_bytes(rc, out, len, "7");

    int32_t first[] = {0, 3, 6};
    int32_t replicas[] = {1, 2, 3, 2, 3, 1};
    struct br_zk_topic_assignment a = {2, first, replicas};
    rc = br_zk_topic_assignment_encode(&a, &out, &len);
    expect_bytes(rc, out, len, "{\"version\":1,\"partitions\":{\"0\":[1,2,3],\"1\":[2,3,1]}}");

    int32_t isr[] = {1, 3};
    struct br_zk_partition_state st = {1, 4, 7, isr, 2};
    rc = br_zk_partition_state_encode(&st, &out, &len);
    expect_bytes(rc, out, len,
                 "{\"version\":1,\"leader\":1,\"leader_epoch\":4,\"isr\":[1,3],"
                 "\"controller_epoch\":7}");

    char k1[] = "min.insync.replicas";
    char v1[] = "2";
    char k2[] = "cleanup.policy";
    char v2[] = "compact";
    struct br_meta_config cfg[] = {{k1, v1}, {k2, v2}};
    rc = br_zk_topic_config_encode(cfg, 2, &out, &len);
    expect_bytes(rc, out, len,
                 "{\"version\":1,\"config\":{\"min.insync.replicas\":\"2\","
                 "\"cleanup.policy\":\"compact\"}}");
    rc = br_zk_topic_config_encode(NULL, 0, &out, &len);
    expect_bytes(rc, out, len, "{\"version\":1,\"config\":{}}");

    rc = br_zk_config_change_encode("topics", "my-topic", &out, &len);
    expect_bytes(rc, out, len, "{\"version\":2,\"entity_path\":\"topics/my-topic\"}");

    struct br_zk_topic_partition tps[] = {{"t", 0}, {"u", 12}};
    rc = br_zk_isr_change_encode(tps, 2, &out, &len);
    expect_bytes(rc, out, len,
                 "{\"version\":1,\"partitions\":[{\"topic\":\"t\",\"partition\":0},"
                 "{\"topic\":\"u\",\"partition\":12}]}");

    rc = br_zk_cluster_id_encode("XxxJ0-ZzQDKdkf7G0U0Wzg", &out, &len);
    expect_bytes(rc, out, len, "{\"version\":\"1\",\"id\":\"XxxJ0-ZzQDKdkf7G0U0Wzg\"}");

    struct br_zk_producer_id_block pb = {3, 1000, 1999};
    rc = br_zk_producer_id_block_encode(&pb, &out, &len);
    expect_bytes(rc, out, len,
                 "{\"version\":1,\"broker\":3,\"block_start\":\"1000\",\"block_end\":\"1999\"}");
}

/* What an encoder refuses (the decoder would not read it back as given). */
static void test_encoders_refuse_what_does_not_read_back(void)
{
    char *out = NULL;
    size_t len = 0;
    struct br_zk_endpoint lower = {"plaintext", "h", 1, BR_ZK_PLAINTEXT};
    struct br_zk_endpoint slash = {"PLAINTEXT", "h/x", 1, BR_ZK_PLAINTEXT};
    struct br_zk_endpoint port = {"PLAINTEXT", "h", 70000, BR_ZK_PLAINTEXT};
    struct br_zk_endpoint twice[2] = {{"A", "h", 1, BR_ZK_PLAINTEXT}, {"A", "h", 2, BR_ZK_SSL}};
    struct br_zk_broker b = {0};
    b.n_endpoints = 1;
    b.endpoints = &lower;
    CU_ASSERT_EQUAL(br_zk_broker_encode(&b, &out, &len), KP_E_INVALID_ARG);
    b.endpoints = &slash;
    CU_ASSERT_EQUAL(br_zk_broker_encode(&b, &out, &len), KP_E_INVALID_ARG);
    b.endpoints = &port;
    CU_ASSERT_EQUAL(br_zk_broker_encode(&b, &out, &len), KP_E_INVALID_ARG);
    b.endpoints = twice;
    b.n_endpoints = 2;
    CU_ASSERT_EQUAL(br_zk_broker_encode(&b, &out, &len), KP_E_INVALID_ARG);
    b.n_endpoints = 0;
    CU_ASSERT_EQUAL(br_zk_broker_encode(&b, &out, &len), KP_E_INVALID_ARG);
    CU_ASSERT_PTR_NULL(out);

    CU_ASSERT_EQUAL(br_zk_controller_encode(-1, 0, &out, &len), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_zk_controller_epoch_encode(-1, &out, &len), KP_E_INVALID_ARG);
    int32_t first[] = {0, 2};
    int32_t dup[] = {1, 1};
    struct br_zk_topic_assignment a = {1, first, dup};
    CU_ASSERT_EQUAL(br_zk_topic_assignment_encode(&a, &out, &len), KP_E_INVALID_ARG);
    int32_t neg[] = {1, -1};
    a.replicas = neg;
    CU_ASSERT_EQUAL(br_zk_topic_assignment_encode(&a, &out, &len), KP_E_INVALID_ARG);
    struct br_zk_partition_state st = {-2, 0, 0, NULL, 0};
    CU_ASSERT_EQUAL(br_zk_partition_state_encode(&st, &out, &len), KP_E_INVALID_ARG);
    char k[] = "k";
    char v[] = "\xff";
    struct br_meta_config bad_utf8[] = {{k, v}};
    CU_ASSERT_EQUAL(br_zk_topic_config_encode(bad_utf8, 1, &out, &len), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_zk_config_change_encode("groups", "g", &out, &len), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_zk_config_change_encode("topics", "", &out, &len), KP_E_INVALID_ARG);
    struct br_zk_topic_partition badtp = {"a b", 0};
    CU_ASSERT_EQUAL(br_zk_isr_change_encode(&badtp, 1, &out, &len), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_zk_cluster_id_encode("", &out, &len), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_zk_cluster_id_encode("a\nb", &out, &len), KP_E_INVALID_ARG);
    struct br_zk_producer_id_block pb = {0, 10, 9};
    CU_ASSERT_EQUAL(br_zk_producer_id_block_encode(&pb, &out, &len), KP_E_INVALID_ARG);
    CU_ASSERT_PTR_NULL(out);
}

/* Encode, decode: the same values. */
static void test_round_trips(void)
{
    char err[ERRLEN] = "";
    char *out = NULL;
    size_t len = 0;
    struct br_zk_endpoint eps[2] = {
        {"INTERNAL", "broker-1.example.com", 9091, BR_ZK_SASL_PLAINTEXT},
        {"PLAINTEXT", "", 0, BR_ZK_PLAINTEXT},
    };
    struct br_zk_broker b = {0};
    b.endpoints = eps;
    b.n_endpoints = 2;
    b.has_rack = true;
    memcpy(b.rack, "r\xc3\xa9gion", 8); /* UTF-8 */
    b.jmx_port = 7199;
    b.timestamp_ms = 42;
    CU_ASSERT_EQUAL_FATAL(br_zk_broker_encode(&b, &out, &len), 0);
    struct br_zk_broker back;
    CU_ASSERT_EQUAL_FATAL(br_zk_broker_decode(out, len, "b", &back, err, sizeof err), 0);
    kp_free(out);
    CU_ASSERT_EQUAL(back.version, 4);
    CU_ASSERT_EQUAL_FATAL(back.n_endpoints, 2);
    CU_ASSERT_EQUAL(memcmp(back.endpoints, eps, sizeof eps), 0);
    CU_ASSERT_STRING_EQUAL(back.rack, "r\xc3\xa9gion");
    CU_ASSERT_EQUAL(back.jmx_port, 7199);
    CU_ASSERT_EQUAL(back.timestamp_ms, 42);
    br_zk_broker_clear(&back);

    struct br_zk_topic_partition tps[3] = {{"t", 0}, {"t", 0}, {"x", 2147483647}};
    CU_ASSERT_EQUAL_FATAL(br_zk_isr_change_encode(tps, 3, &out, &len), 0);
    struct br_zk_topic_partition *got = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_zk_isr_change_decode(out, len, "i", &got, &n, err, sizeof err), 0);
    kp_free(out);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_STRING_EQUAL(got[i].topic, tps[i].topic);
        CU_ASSERT_EQUAL(got[i].partition, tps[i].partition);
    }
    kp_free(got);

    struct br_zk_producer_id_block pb = {7, 0, INT64_MAX};
    struct br_zk_producer_id_block pb2;
    CU_ASSERT_EQUAL_FATAL(br_zk_producer_id_block_encode(&pb, &out, &len), 0);
    CU_ASSERT_EQUAL_FATAL(br_zk_producer_id_block_decode(out, len, "p", &pb2, err, sizeof err), 0);
    kp_free(out);
    CU_ASSERT_EQUAL(pb2.broker_id, 7);
    CU_ASSERT_EQUAL(pb2.block_start, 0);
    CU_ASSERT_EQUAL(pb2.block_end, INT64_MAX);
}

/* ------------------------------------------------------------ hostile data */

static const struct {
    enum kind kind;
    const char *json; /* NULL: use bytes/len */
    int rc;
    const char *why; /* in the message */
} refused[] = {
    /* not JSON, not an object, trailing bytes, duplicate keys */
    {K_BROKER, "", KP_E_CORRUPT, "no data"},
    {K_BROKER, "{", KP_E_CORRUPT, "not JSON"},
    {K_BROKER, "[1,2]", KP_E_CORRUPT, "not a JSON object"},
    {K_BROKER, "{\"version\":4} x", KP_E_CORRUPT, "not JSON"},
    {K_STATE, "{\"leader\":1,\"leader\":2,\"leader_epoch\":0,\"isr\":[],\"controller_epoch\":0}",
     KP_E_CORRUPT, "duplicate"},
    {K_CONFIG, "{\"config\":{\"a\":\"1\",\"a\":\"2\"}}", KP_E_CORRUPT, "duplicate"},
    /* wrong types: Kafka's to[Int] takes no string, real or boolean */
    {K_BROKER, "{\"version\":\"4\",\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://h:1\"]}",
     KP_E_CORRUPT, "\"version\" is a string, not an integer"},
    {K_BROKER, "{\"version\":4.0,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://h:1\"]}",
     KP_E_CORRUPT, "a real number"},
    {K_BROKER, "{\"version\":4,\"endpoints\":[\"PLAINTEXT://h:1\"]}", KP_E_CORRUPT,
     "no \"jmx_port\""},
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":\"PLAINTEXT://h:1\"}", KP_E_CORRUPT,
     "not an array"},
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[9092]}", KP_E_CORRUPT,
     "endpoints[0] is an integer"},
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://h:1\"],\"rack\":1}",
     KP_E_CORRUPT, "\"rack\" is an integer"},
    {K_BROKER,
     "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://h:1\"],"
     "\"listener_security_protocol_map\":null}",
     KP_E_CORRUPT, "not an object"},
    {K_BROKER,
     "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"X://h:1\"],"
     "\"listener_security_protocol_map\":{\"X\":\"TLS\"}}",
     KP_E_CORRUPT, "is no security protocol"},
    {K_BROKER, "{\"version\":0,\"jmx_port\":-1}", KP_E_UNSUPPORTED, "version 0"},
    {K_BROKER, "{\"version\":1,\"jmx_port\":-1,\"host\":\"h\",\"port\":\"9092\"}", KP_E_CORRUPT,
     "\"port\" is a string"},
    {K_BROKER, "{\"version\":1,\"jmx_port\":-1,\"host\":\"h\",\"port\":2147483648}", KP_E_CORRUPT,
     "does not fit 32 bits"},
    /* endpoints Kafka's pattern refuses, or ports beyond TCP's */
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT:/h:1\"]}", KP_E_CORRUPT,
     "is not LISTENER://host:port"},
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://h\"]}", KP_E_CORRUPT,
     "has no :port"},
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://h:+1\"]}", KP_E_CORRUPT,
     "not a 32-bit number"},
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://h:-1\"]}", KP_E_CORRUPT,
     "is not 0..65535"},
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://h:99999999999\"]}",
     KP_E_CORRUPT, "not a 32-bit number"},
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://h/x:1\"]}",
     KP_E_CORRUPT, "the host must be"},
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"://h:1\"]}", KP_E_CORRUPT,
     "the listener name"},
    {K_BROKER, "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[]}", KP_E_CORRUPT, "is empty"},
    {K_BROKER,
     "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://a:1\","
     "\"plaintext://b:2\"]}",
     KP_E_CORRUPT, "twice"},
    /* non-UTF-8, NUL */
    {K_BROKER,
     "{\"version\":4,\"jmx_port\":-1,\"endpoints\":[\"PLAINTEXT://h:1\"],"
     "\"rack\":\"\xff\xfe\"}",
     KP_E_CORRUPT, "not JSON"},
    {K_CLUSTER_ID, "{\"id\":\"a\\u0000b\"}", KP_E_CORRUPT, "not JSON"},
    {K_CLUSTER_ID, "{\"id\":\"\xc0\xaf\"}", KP_E_CORRUPT, "not JSON"}, /* overlong '/' */
    {K_CLUSTER_ID, "{\"id\":\"\\ud800\"}", KP_E_CORRUPT, "not JSON"},  /* lone surrogate */
    {K_CLUSTER_ID, "{\"id\":\"a\\nb\"}", KP_E_CORRUPT, "control byte"},
    {K_CLUSTER_ID, "{\"id\":\"\"}", KP_E_CORRUPT, "is empty"},
    {K_CLUSTER_ID, "{\"version\":\"1\"}", KP_E_CORRUPT, "no \"id\""},
    /* negative ids, epochs below their start */
    {K_CONTROLLER, "{\"version\":1,\"brokerid\":-1}", KP_E_CORRUPT, "is below 0"},
    {K_CONTROLLER, "{\"version\":1}", KP_E_CORRUPT, "no \"brokerid\""},
    {K_CONTROLLER_EPOCH, "-1", KP_E_CORRUPT, "negative"},
    {K_CONTROLLER_EPOCH, "", KP_E_CORRUPT, "not a 32-bit decimal"},
    {K_CONTROLLER_EPOCH, " 7", KP_E_CORRUPT, "not a 32-bit decimal"},
    {K_CONTROLLER_EPOCH, "7\n", KP_E_CORRUPT, "not a 32-bit decimal"},
    {K_CONTROLLER_EPOCH, "2147483648", KP_E_CORRUPT, "not a 32-bit decimal"},
    {K_CONTROLLER_EPOCH, "{\"epoch\":7}", KP_E_CORRUPT, "not a 32-bit decimal"},
    {K_STATE, "{\"leader\":-2,\"leader_epoch\":0,\"isr\":[],\"controller_epoch\":0}", KP_E_CORRUPT,
     "\"leader\" -2 is below -1"},
    {K_STATE, "{\"leader\":1,\"leader_epoch\":-1,\"isr\":[1],\"controller_epoch\":0}", KP_E_CORRUPT,
     "\"leader_epoch\" -1 is below 0"},
    {K_STATE, "{\"leader\":1,\"leader_epoch\":0,\"isr\":[1,-1],\"controller_epoch\":0}",
     KP_E_CORRUPT, "\"isr\" -1 is below 0"},
    {K_STATE, "{\"leader\":1,\"leader_epoch\":0,\"isr\":[1,2,1],\"controller_epoch\":0}",
     KP_E_CORRUPT, "names broker 1 twice"},
    {K_STATE, "{\"leader\":1,\"leader_epoch\":0,\"isr\":{},\"controller_epoch\":0}", KP_E_CORRUPT,
     "not an array"},
    {K_STATE, "{\"leader\":1,\"leader_epoch\":0,\"controller_epoch\":0}", KP_E_CORRUPT,
     "no \"isr\""},
    {K_ASSIGNMENT, "{\"version\":1,\"partitions\":{\"-1\":[1]}}", KP_E_CORRUPT, "negative"},
    {K_ASSIGNMENT, "{\"version\":1,\"partitions\":{\"0\":[1],\"2\":[1]}}", KP_E_CORRUPT,
     "numbered 0 to 1"},
    {K_ASSIGNMENT, "{\"version\":1,\"partitions\":{\"0\":[1],\"00\":[1]}}", KP_E_CORRUPT,
     "given twice"},
    {K_ASSIGNMENT, "{\"version\":1,\"partitions\":{\"x\":[1]}}", KP_E_CORRUPT,
     "not a 32-bit decimal"},
    {K_ASSIGNMENT, "{\"version\":1,\"partitions\":{\"0\":[]}}", KP_E_CORRUPT, "is empty"},
    {K_ASSIGNMENT, "{\"version\":1,\"partitions\":{\"0\":[1,-3]}}", KP_E_CORRUPT, "below 0"},
    {K_ASSIGNMENT, "{\"version\":1,\"partitions\":{\"0\":[1,2,1]}}", KP_E_CORRUPT, "twice"},
    {K_ASSIGNMENT, "{\"version\":1,\"partitions\":{\"0\":\"1,2\"}}", KP_E_CORRUPT, "not an array"},
    {K_ASSIGNMENT, "{\"version\":1,\"partitions\":{}}", KP_E_CORRUPT, "is empty"},
    {K_ASSIGNMENT, "{\"version\":1}", KP_E_CORRUPT, "no \"partitions\""},
    {K_CONFIG, "{\"version\":1,\"config\":{\"retention.ms\":1000}}", KP_E_CORRUPT, "not a string"},
    {K_CONFIG, "{\"version\":1,\"config\":[]}", KP_E_CORRUPT, "not an object"},
    {K_CONFIG, "{\"version\":1,\"config\":{\"\":\"x\"}}", KP_E_CORRUPT, "/config/topics/t: "},
    {K_CONFIG_CHANGE, "{\"version\":3,\"entity_path\":\"topics/t\"}", KP_E_UNSUPPORTED,
     "version 3"},
    {K_CONFIG_CHANGE, "{\"version\":2,\"entity_path\":\"topics\"}", KP_E_CORRUPT,
     "is not <entity type>/<name>"},
    {K_CONFIG_CHANGE, "{\"version\":2,\"entity_path\":\"groups/g\"}", KP_E_CORRUPT,
     "is not one of"},
    {K_CONFIG_CHANGE, "{\"version\":1,\"entity_type\":\"users\",\"entity_name\":\"u\"}",
     KP_E_CORRUPT, "is not one of topics, clients"},
    {K_CONFIG_CHANGE, "{\"version\":2,\"entity_path\":\"topics/\"}", KP_E_CORRUPT, "is empty"},
    {K_CONFIG_CHANGE, "{\"version\":1,\"entity_type\":null,\"entity_name\":\"t\"}", KP_E_CORRUPT,
     "not a string"},
    {K_ISR_CHANGE, "{\"version\":1,\"partitions\":[{\"topic\":\"t\",\"partition\":-1}]}",
     KP_E_CORRUPT, "below 0"},
    {K_ISR_CHANGE, "{\"version\":1,\"partitions\":[{\"topic\":\"a/b\",\"partition\":0}]}",
     KP_E_CORRUPT, "not a valid topic name"},
    {K_ISR_CHANGE, "{\"version\":1,\"partitions\":[[\"t\",0]]}", KP_E_CORRUPT,
     "partitions[0] is an array"},
    {K_ISR_CHANGE, "{\"version\":1}", KP_E_CORRUPT, "no \"partitions\""},
    {K_PID_BLOCK, "{\"version\":1,\"broker\":3,\"block_start\":1000,\"block_end\":\"1999\"}",
     KP_E_CORRUPT, "\"block_start\" is an integer"},
    {K_PID_BLOCK, "{\"version\":1,\"broker\":3,\"block_start\":\"-1\",\"block_end\":\"1\"}",
     KP_E_CORRUPT, "\"block_start\" \"-1\""},
    {K_PID_BLOCK, "{\"version\":1,\"broker\":3,\"block_start\":\"5\",\"block_end\":\"4\"}",
     KP_E_CORRUPT, "ends before it starts"},
    {K_PID_BLOCK,
     "{\"version\":1,\"broker\":3,\"block_start\":\"0\","
     "\"block_end\":\"9223372036854775808\"}",
     KP_E_CORRUPT, "\"block_end\""},
    {K_PID_BLOCK, "", KP_E_CORRUPT, "no data"},
};

static void test_hostile_documents_are_refused_with_their_site(void)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char err[ERRLEN] = "";
        int rc = decode(refused[i].kind, refused[i].json, strlen(refused[i].json), err, sizeof err);
        bool ok = rc == refused[i].rc && strstr(err, refused[i].why) != NULL &&
                  strstr(err, "[zk_json") != NULL && err[0] == '/';
        if (!ok) {
            printf("\n  refused[%zu] %s: rc %d (want %d), \"%s\" (want \"%s\")\n", i,
                   refused[i].json, rc, refused[i].rc, err, refused[i].why);
        }
        CU_ASSERT_TRUE(ok);
    }
}

/* Bytes a C string cannot hold: a NUL in the middle. */
static void test_nul_bytes_are_refused(void)
{
    static const char doc[] = "{\"version\":1,\"brokerid\":2}\0{\"x\":1}";
    char err[ERRLEN] = "";
    CU_ASSERT_EQUAL(decode(K_CONTROLLER, doc, sizeof doc - 1, err, sizeof err), KP_E_CORRUPT);
    static const char epoch[] = "7\0"
                                "1";
    CU_ASSERT_EQUAL(decode(K_CONTROLLER_EPOCH, epoch, sizeof epoch - 1, err, sizeof err),
                    KP_E_CORRUPT);
}

/* A document of n copies of `item` separated by commas, between head and tail. */
static char *repeat(const char *head, const char *item, size_t n, const char *tail, size_t *len)
{
    size_t hl = strlen(head);
    size_t il = strlen(item);
    size_t tl = strlen(tail);
    size_t total = hl + n * (il + 1) + tl + 1;
    char *buf = malloc(total);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    if (buf == NULL) {
        abort();
    }
    size_t o = 0;
    memcpy(buf + o, head, hl);
    o += hl;
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            buf[o++] = ',';
        }
        memcpy(buf + o, item, il);
        o += il;
    }
    memcpy(buf + o, tail, tl);
    o += tl;
    buf[o] = '\0';
    *len = o;
    return buf;
}

/* Counts above the ceilings are refused as too large, before anything
 * is allocated for them. */
static void test_huge_counts_are_refused(void)
{
    char err[ERRLEN] = "";
    size_t len = 0;
    char *d = repeat("{\"version\":4,\"jmx_port\":-1,\"endpoints\":[", "\"PLAINTEXT://h:1\"",
                     BR_ZK_MAX_ENDPOINTS + 1, "]}", &len);
    CU_ASSERT_EQUAL(decode(K_BROKER, d, len, err, sizeof err), KP_E_TOO_LARGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "65 endpoints, more than 64"));
    free(d);
    d = repeat("{\"leader\":1,\"leader_epoch\":0,\"controller_epoch\":0,\"isr\":[", "1",
               BR_META_MAX_REPLICATION_FACTOR + 1, "]}", &len);
    CU_ASSERT_EQUAL(decode(K_STATE, d, len, err, sizeof err), KP_E_TOO_LARGE);
    free(d);
    d = repeat("{\"partitions\":{\"0\":[", "7", BR_META_MAX_REPLICATION_FACTOR + 1, "]}}", &len);
    CU_ASSERT_EQUAL(decode(K_ASSIGNMENT, d, len, err, sizeof err), KP_E_TOO_LARGE);
    free(d);
    /* 257 configs with distinct keys */
    char *cfg = malloc(300 * 16 + 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    if (cfg == NULL) {
        abort();
    }
    size_t o = (size_t)snprintf(cfg, 64, "{\"config\":{");
    for (int i = 0; i < BR_META_MAX_CONFIGS + 1; i++) {
        o += (size_t)snprintf(cfg + o, 32, "%s\"k%d\":\"v\"", i > 0 ? "," : "", i);
    }
    o += (size_t)snprintf(cfg + o, 8, "}}");
    CU_ASSERT_EQUAL(decode(K_CONFIG, cfg, o, err, sizeof err), KP_E_TOO_LARGE);
    free(cfg);
    /* 100,001 partitions */
    char *parts = malloc((size_t)(BR_META_MAX_PARTITIONS + 1) * 16 + 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(parts);
    if (parts == NULL) {
        abort();
    }
    o = (size_t)snprintf(parts, 64, "{\"partitions\":{");
    for (int i = 0; i < BR_META_MAX_PARTITIONS + 1; i++) {
        o += (size_t)snprintf(parts + o, 32, "%s\"%d\":[1]", i > 0 ? "," : "", i);
    }
    o += (size_t)snprintf(parts + o, 8, "}}");
    CU_ASSERT_EQUAL(decode(K_ASSIGNMENT, parts, o, err, sizeof err), KP_E_TOO_LARGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "100001 partitions, more than 100000"));
    free(parts);
    /* more bytes than read at all: refused before parsing */
    size_t big = BR_ZK_JSON_MAX_BYTES + 1;
    char *huge = malloc(big);
    CU_ASSERT_PTR_NOT_NULL_FATAL(huge);
    if (huge == NULL) {
        abort();
    }
    memset(huge, ' ', big);
    huge[0] = '{';
    huge[big - 1] = '}';
    for (enum kind k = K_BROKER; k <= K_PID_BLOCK; k++) {
        CU_ASSERT_EQUAL(decode(k, huge, big, err, sizeof err), KP_E_TOO_LARGE);
    }
    free(huge);
}

/* Nesting deeper than jansson's limit is an error, not a stack overflow. */
static void test_deep_nesting_is_refused(void)
{
    size_t depth = 100000;
    char *d = malloc(depth * 2 + 16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    if (d == NULL) {
        abort();
    }
    size_t o = (size_t)snprintf(d, 16, "{\"a\":");
    for (size_t i = 0; i < depth; i++) {
        d[o++] = '[';
    }
    for (size_t i = 0; i < depth; i++) {
        d[o++] = ']';
    }
    d[o++] = '}';
    char err[ERRLEN] = "";
    CU_ASSERT_EQUAL(decode(K_BROKER, d, o, err, sizeof err), KP_E_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not JSON"));
    free(d);
}

/* A long value is quoted short and control bytes escaped in the message. */
static void test_messages_quote_values_safely(void)
{
    char doc[600];
    char host[300];
    memset(host, 'h', sizeof host - 1);
    host[sizeof host - 1] = '\0';
    int n = snprintf(doc, sizeof doc,
                     "{\"version\":1,\"jmx_port\":-1,\"host\":\"%s\\u001b\","
                     "\"port\":1}",
                     host);
    char err[ERRLEN] = "";
    CU_ASSERT_EQUAL(decode(K_BROKER, doc, (size_t)n, err, sizeof err), KP_E_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "...")); /* cut */
    CU_ASSERT_PTR_NULL(strchr(err, 0x1b));
    /* a small err buffer is cut, not overrun */
    char small[16];
    memset(small, 'x', sizeof small);
    CU_ASSERT_EQUAL(decode(K_BROKER, doc, (size_t)n, small, 8), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(small[7], '\0');
    CU_ASSERT_EQUAL(small[8], 'x');
}

static void test_sequence_numbers(void)
{
    int64_t seq = -1;
    CU_ASSERT_EQUAL(br_zk_sequence_number("isr_change_0000000042", "isr_change_", &seq), 0);
    CU_ASSERT_EQUAL(seq, 42);
    CU_ASSERT_EQUAL(br_zk_sequence_number("config_change_2147483647", "config_change_", &seq), 0);
    CU_ASSERT_EQUAL(seq, 2147483647);
    CU_ASSERT_EQUAL(br_zk_sequence_number("isr_change_42", "isr_change_", &seq), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(br_zk_sequence_number("isr_change_00000000x2", "isr_change_", &seq),
                    KP_E_CORRUPT);
    CU_ASSERT_EQUAL(br_zk_sequence_number("log_dir_event_0000000001", "isr_change_", &seq),
                    KP_E_CORRUPT);
    CU_ASSERT_EQUAL(br_zk_sequence_number("isr_change_00000000001", "isr_change_", &seq),
                    KP_E_CORRUPT);
}

/* The fuzz harness's regression inputs and seeds are replayed by
 * fuzz-replay-zk_json; this suite keeps the cases readable. */
static CU_TestInfo tests[] = {
    {"kafkas_documents_decode", test_kafkas_documents_decode},
    {"broker_v4_reads_every_field", test_broker_v4_reads_every_field},
    {"broker_v1_is_one_plaintext_endpoint", test_broker_v1_is_one_plaintext_endpoint},
    {"broker_without_map_needs_protocol_names", test_broker_without_map_needs_protocol_names},
    {"assignment_reads_partitions_in_order", test_assignment_reads_partitions_in_order},
    {"state_reads_leader_epochs_and_isr", test_state_reads_leader_epochs_and_isr},
    {"reassignment_reads_kafkas_document", test_reassignment_reads_kafkas_document},
    {"config_change_both_versions", test_config_change_both_versions},
    {"small_documents_read_their_values", test_small_documents_read_their_values},
    {"encoders_write_kafkas_bytes", test_encoders_write_kafkas_bytes},
    {"encoders_refuse_what_does_not_read_back", test_encoders_refuse_what_does_not_read_back},
    {"round_trips", test_round_trips},
    {"hostile_documents_are_refused_with_their_site",
     test_hostile_documents_are_refused_with_their_site},
    {"nul_bytes_are_refused", test_nul_bytes_are_refused},
    {"huge_counts_are_refused", test_huge_counts_are_refused},
    {"deep_nesting_is_refused", test_deep_nesting_is_refused},
    {"messages_quote_values_safely", test_messages_quote_values_safely},
    {"sequence_numbers", test_sequence_numbers},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("broker-zk_json", tests);
}
