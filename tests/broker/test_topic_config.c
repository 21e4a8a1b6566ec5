/* Unit tests for topic-level configuration (broker/src/topic_config.h). */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <samsa-protocol/err.h>

#include "config/config.h"
#include "config/topic_config.h"
#include "cunit_run.h"

#define ERRLEN 512

static void broker_from(const char *text, struct br_config *c)
{
    char err[ERRLEN];
    int rc = br_config_parse_buffer(text, strlen(text), "server.properties", NULL, 0, c, err,
                                    sizeof err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void test_key_table_is_complete(void)
{
    for (int k = 0; k < BR_TCFG__COUNT; k++) {
        const char *name = br_topic_config_key_name((enum br_topic_config_key)k);
        if (name == NULL) {
            CU_FAIL("a key without a name");
            return;
        }
        CU_ASSERT_EQUAL(br_topic_config_find(name), k);
        const char *prev =
            k > 0 ? br_topic_config_key_name((enum br_topic_config_key)(k - 1)) : NULL;
        if (prev != NULL) {
            /* Kafka lists topic configs alphabetically */
            CU_ASSERT(strcmp(prev, name) < 0);
        }
    }
    CU_ASSERT_PTR_NULL(br_topic_config_key_name(BR_TCFG__COUNT));
    CU_ASSERT_EQUAL(br_topic_config_find("log.retention.ms"), -1);
}

static void test_defaults_come_from_kafka_defaults(void)
{
    struct br_config b;
    broker_from("", &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    CU_ASSERT_EQUAL(tc.cleanup_policy, BR_CLEANUP_DELETE);
    CU_ASSERT_EQUAL(tc.compression_type, BR_COMPRESSION_PRODUCER);
    CU_ASSERT_EQUAL(tc.delete_retention_ms, 86400000);
    CU_ASSERT_EQUAL(tc.file_delete_delay_ms, 60000);
    CU_ASSERT_EQUAL(tc.flush_messages, INT64_MAX);
    CU_ASSERT_EQUAL(tc.flush_ms, INT64_MAX);
    CU_ASSERT_EQUAL(tc.index_interval_bytes, 4096);
    CU_ASSERT_EQUAL(tc.max_message_bytes, 1000012);
    CU_ASSERT_TRUE(tc.message_downconversion_enable);
    CU_ASSERT_STRING_EQUAL(tc.message_format_version, "2.0-IV1");
    CU_ASSERT_EQUAL(tc.message_timestamp_difference_max_ms, INT64_MAX);
    CU_ASSERT_EQUAL(tc.message_timestamp_type, BR_TIMESTAMP_CREATE_TIME);
    CU_ASSERT_DOUBLE_EQUAL(tc.min_cleanable_dirty_ratio, 0.5, 1e-12);
    CU_ASSERT_EQUAL(tc.min_compaction_lag_ms, 0);
    CU_ASSERT_EQUAL(tc.min_insync_replicas, 1);
    CU_ASSERT_FALSE(tc.preallocate);
    CU_ASSERT_EQUAL(tc.retention_bytes, -1);
    CU_ASSERT_EQUAL(tc.retention_ms, 604800000);
    CU_ASSERT_EQUAL(tc.segment_bytes, 1073741824);
    CU_ASSERT_EQUAL(tc.segment_index_bytes, 10485760);
    CU_ASSERT_EQUAL(tc.segment_jitter_ms, 0);
    CU_ASSERT_EQUAL(tc.segment_ms, 604800000);
    CU_ASSERT_FALSE(tc.unclean_leader_election_enable);
    CU_ASSERT_EQUAL(tc.set, 0);
    br_config_free(&b);
}

static void test_broker_keys_give_the_defaults(void)
{
    struct br_config b;
    broker_from("log.cleanup.policy=compact\n"
                "compression.type=lz4\n"
                "log.cleaner.delete.retention.ms=1000\n"
                "log.segment.delete.delay.ms=2000\n"
                "log.flush.interval.messages=3000\n"
                "log.flush.interval.ms=4000\n"
                "log.index.interval.bytes=5000\n"
                "message.max.bytes=6000\n"
                "log.message.downconversion.enable=false\n"
                "log.message.format.version=1.1\n"
                "log.message.timestamp.difference.max.ms=7000\n"
                "log.message.timestamp.type=LogAppendTime\n"
                "log.cleaner.min.cleanable.ratio=0.75\n"
                "log.cleaner.min.compaction.lag.ms=8000\n"
                "min.insync.replicas=2\n"
                "log.preallocate=true\n"
                "log.retention.bytes=9000\n"
                "log.retention.minutes=10\n"
                "log.segment.bytes=11000\n"
                "log.index.size.max.bytes=12000\n"
                "log.roll.jitter.hours=1\n"
                "log.roll.ms=13000\n"
                "unclean.leader.election.enable=true\n",
                &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    CU_ASSERT_EQUAL(tc.cleanup_policy, BR_CLEANUP_COMPACT);
    CU_ASSERT_EQUAL(tc.compression_type, BR_COMPRESSION_LZ4);
    CU_ASSERT_EQUAL(tc.delete_retention_ms, 1000);
    CU_ASSERT_EQUAL(tc.file_delete_delay_ms, 2000);
    CU_ASSERT_EQUAL(tc.flush_messages, 3000);
    CU_ASSERT_EQUAL(tc.flush_ms, 4000);
    CU_ASSERT_EQUAL(tc.index_interval_bytes, 5000);
    CU_ASSERT_EQUAL(tc.max_message_bytes, 6000);
    CU_ASSERT_FALSE(tc.message_downconversion_enable);
    CU_ASSERT_STRING_EQUAL(tc.message_format_version, "1.1");
    CU_ASSERT_EQUAL(tc.message_timestamp_difference_max_ms, 7000);
    CU_ASSERT_EQUAL(tc.message_timestamp_type, BR_TIMESTAMP_LOG_APPEND_TIME);
    CU_ASSERT_DOUBLE_EQUAL(tc.min_cleanable_dirty_ratio, 0.75, 1e-12);
    CU_ASSERT_EQUAL(tc.min_compaction_lag_ms, 8000);
    CU_ASSERT_EQUAL(tc.min_insync_replicas, 2);
    CU_ASSERT_TRUE(tc.preallocate);
    CU_ASSERT_EQUAL(tc.retention_bytes, 9000);
    CU_ASSERT_EQUAL(tc.retention_ms, 600000);
    CU_ASSERT_EQUAL(tc.segment_bytes, 11000);
    CU_ASSERT_EQUAL(tc.segment_index_bytes, 12000);
    CU_ASSERT_EQUAL(tc.segment_jitter_ms, 3600000);
    CU_ASSERT_EQUAL(tc.segment_ms, 13000);
    CU_ASSERT_TRUE(tc.unclean_leader_election_enable);
    br_config_free(&b);
}

/* key, value to set, the value DescribeConfigs shows afterwards */
static const struct {
    const char *key;
    const char *value;
    const char *shown;
} good[] = {
    {"cleanup.policy", "compact,delete", "compact,delete"},
    {"compression.type", "snappy", "snappy"},
    {"delete.retention.ms", "1", "1"},
    {"file.delete.delay.ms", "0", "0"},
    {"flush.messages", "0", "0"},
    {"flush.ms", "9223372036854775807", "9223372036854775807"},
    {"follower.replication.throttled.replicas", " 0:1, 1:2 ", "0:1, 1:2"},
    {"index.interval.bytes", "2147483647", "2147483647"},
    {"leader.replication.throttled.replicas", "*", "*"},
    {"max.message.bytes", "5242880", "5242880"},
    {"message.downconversion.enable", "FALSE", "false"},
    {"message.format.version", "0.11.0", "0.11.0"},
    {"message.timestamp.difference.max.ms", "3600000", "3600000"},
    {"message.timestamp.type", "LogAppendTime", "LogAppendTime"},
    {"min.cleanable.dirty.ratio", "0.01", "0.01"},
    {"min.compaction.lag.ms", "100", "100"},
    {"min.insync.replicas", "2", "2"},
    {"preallocate", "true", "true"},
    {"retention.bytes", "-5", "-5"},
    {"retention.ms", "-1", "-1"},
    {"segment.bytes", "14", "14"},
    {"segment.index.bytes", "4", "4"},
    {"segment.jitter.ms", "10", "10"},
    {"segment.ms", "1", "1"},
    {"unclean.leader.election.enable", "true", "true"},
};

static void test_every_key_is_set_and_described(void)
{
    CU_ASSERT_EQUAL(sizeof good / sizeof good[0], BR_TCFG__COUNT);
    struct br_config b;
    broker_from("", &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    char err[ERRLEN];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int rc = br_topic_config_set(&tc, good[i].key, good[i].value, err, sizeof err);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc != 0) {
            printf("\n    %s=%s: %s\n", good[i].key, good[i].value, err);
        }
        int k = br_topic_config_find(good[i].key);
        CU_ASSERT_FATAL(k >= 0);
        CU_ASSERT_TRUE(br_topic_config_is_set(&tc, (enum br_topic_config_key)k));
        struct br_topic_config_entry e;
        br_topic_config_entry(&tc, &b, (enum br_topic_config_key)k, &e);
        CU_ASSERT_STRING_EQUAL(e.name, good[i].key);
        CU_ASSERT_STRING_EQUAL(e.value, good[i].shown);
        CU_ASSERT_EQUAL(e.source, BR_CONFIG_SOURCE_DYNAMIC_TOPIC);
        CU_ASSERT_FALSE(e.read_only);
        CU_ASSERT_FALSE(e.sensitive);
        /* every key has a broker default but the throttled-replica lists */
        CU_ASSERT_EQUAL(e.broker_synonyms[0] == NULL,
                        strstr(good[i].key, ".replication.throttled.replicas") != NULL);
    }
    CU_ASSERT_EQUAL(tc.cleanup_policy, BR_CLEANUP_COMPACT | BR_CLEANUP_DELETE);
    CU_ASSERT_EQUAL(tc.compression_type, BR_COMPRESSION_SNAPPY);
    CU_ASSERT_EQUAL(tc.retention_ms, -1);
    CU_ASSERT_EQUAL(tc.retention_bytes, -5);
    CU_ASSERT_EQUAL(tc.segment_bytes, 14);
    CU_ASSERT_DOUBLE_EQUAL(tc.min_cleanable_dirty_ratio, 0.01, 1e-15);
    CU_ASSERT_EQUAL(tc.message_timestamp_type, BR_TIMESTAMP_LOG_APPEND_TIME);
    CU_ASSERT_EQUAL(tc.set, (1u << BR_TCFG__COUNT) - 1);
    br_config_free(&b);
}

static void test_unknown_key_is_invalid_config(void)
{
    struct br_config b;
    broker_from("", &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    char err[ERRLEN];
    CU_ASSERT_EQUAL(br_topic_config_set(&tc, "retention.days", "1", err, sizeof err),
                    KP_ERR_INVALID_CONFIG);
    CU_ASSERT_STRING_EQUAL(err, "unknown topic config name: retention.days");
    /* broker names are not topic names */
    CU_ASSERT_EQUAL(br_topic_config_set(&tc, "log.retention.ms", "1", err, sizeof err),
                    KP_ERR_INVALID_CONFIG);
    CU_ASSERT_EQUAL(
        br_topic_config_set(&tc, "leader.replication.throttled.rate", "1", err, sizeof err),
        KP_ERR_INVALID_CONFIG);
    CU_ASSERT_EQUAL(tc.set, 0);
    br_config_free(&b);
}

static void test_null_value_is_invalid_request(void)
{
    struct br_config b;
    broker_from("", &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    char err[ERRLEN];
    CU_ASSERT_EQUAL(br_topic_config_set(&tc, "retention.ms", NULL, err, sizeof err),
                    KP_ERR_INVALID_REQUEST);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "retention.ms"));
    br_config_free(&b);
}

/* Same set keys and the same value for every key, as DescribeConfigs shows them. */
static bool same_config(const struct br_topic_config *a, const struct br_topic_config *b)
{
    if (a->set != b->set) {
        return false;
    }
    for (int k = 0; k < BR_TCFG__COUNT; k++) {
        struct br_topic_config_entry ea;
        struct br_topic_config_entry eb;
        br_topic_config_entry(a, NULL, (enum br_topic_config_key)k, &ea);
        br_topic_config_entry(b, NULL, (enum br_topic_config_key)k, &eb);
        if (strcmp(ea.value, eb.value) != 0) {
            return false;
        }
    }
    return true;
}

static const struct {
    const char *key;
    const char *value;
    const char *why;
} bad[] = {
    {"segment.bytes", "13", "out of range"},
    {"segment.bytes", "1GB", "not an integer"},
    {"segment.bytes", "2147483648", "out of range"},
    {"retention.ms", "-2", "out of range"},
    {"retention.ms", "", "not an integer"},
    {"retention.bytes", "9223372036854775808", "out of range"},
    {"min.insync.replicas", "0", "out of range"},
    {"min.cleanable.dirty.ratio", "1.1", "between 0 and 1"},
    {"min.cleanable.dirty.ratio", "-0.1", "between 0 and 1"},
    {"min.cleanable.dirty.ratio", "0x1p-1", "not a number"},
    {"min.cleanable.dirty.ratio", "inf", "not a number"},
    {"cleanup.policy", "remove", "not a cleanup policy"},
    {"cleanup.policy", "delete,compact,other", "not a cleanup policy"},
    {"compression.type", "GZIP", "not a compression type"},
    {"compression.type", "none", "not a compression type"},
    {"message.timestamp.type", "Now", "CreateTime or LogAppendTime"},
    {"message.format.version", "2.0-IV", "message format version"},
    {"segment.index.bytes", "3", "out of range"},
    {"segment.ms", "0", "out of range"},
    {"segment.jitter.ms", "-1", "out of range"},
    {"unclean.leader.election.enable", "maybe", "not a boolean"},
    {"preallocate", "1", "not a boolean"},
    {"flush.messages", "-1", "out of range"},
    {"flush.ms", "soon", "not an integer"},
    {"max.message.bytes", "-1", "out of range"},
    {"index.interval.bytes", "4k", "not an integer"},
    {"delete.retention.ms", "-1", "out of range"},
    {"min.compaction.lag.ms", "1.5", "not an integer"},
    {"file.delete.delay.ms", "-1", "out of range"},
    {"message.timestamp.difference.max.ms", "-1", "out of range"},
    {"message.downconversion.enable", "", "not a boolean"},
};

static void test_bad_values_are_invalid_config_and_change_nothing(void)
{
    struct br_config b;
    broker_from("", &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_topic_config_set(&tc, "retention.ms", "1000", err, sizeof err), 0);
    struct br_topic_config before = tc;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = br_topic_config_set(&tc, bad[i].key, bad[i].value, err, sizeof err);
        CU_ASSERT_EQUAL(rc, KP_ERR_INVALID_CONFIG);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].key));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].why));
        if (rc != KP_ERR_INVALID_CONFIG || strstr(err, bad[i].why) == NULL) {
            printf("\n    %s=%s: %d %s\n", bad[i].key, bad[i].value, rc, err);
        }
        CU_ASSERT_TRUE(same_config(&tc, &before));
    }
    br_config_free(&b);
}

static void test_overlong_value_is_rejected(void)
{
    struct br_config b;
    broker_from("", &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    char value[BR_TOPIC_CONFIG_VALUE_MAX + 2];
    memset(value, '1', sizeof value - 1);
    value[sizeof value - 1] = '\0';
    char err[ERRLEN];
    CU_ASSERT_EQUAL(br_topic_config_set(&tc, "retention.ms", value, err, sizeof err),
                    KP_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "longer than"));
    br_config_free(&b);
}

static void test_values_are_trimmed(void)
{
    struct br_config b;
    broker_from("", &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    char err[ERRLEN];
    CU_ASSERT_EQUAL(br_topic_config_set(&tc, "retention.ms", "  86400000 \t", err, sizeof err), 0);
    CU_ASSERT_EQUAL(tc.retention_ms, 86400000);
    CU_ASSERT_EQUAL(br_topic_config_set(&tc, "cleanup.policy", " compact ", err, sizeof err), 0);
    CU_ASSERT_EQUAL(tc.cleanup_policy, BR_CLEANUP_COMPACT);
    br_config_free(&b);
}

static void test_unset_restores_the_broker_default(void)
{
    struct br_config b;
    broker_from("log.retention.hours=1\n", &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_topic_config_set(&tc, "retention.ms", "5", err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(
        br_topic_config_set(&tc, "message.format.version", "0.9.0", err, sizeof err), 0);
    CU_ASSERT_EQUAL(tc.retention_ms, 5);
    CU_ASSERT_EQUAL(br_topic_config_unset(&tc, &b, "retention.ms", err, sizeof err), 0);
    CU_ASSERT_EQUAL(tc.retention_ms, 3600000);
    CU_ASSERT_FALSE(br_topic_config_is_set(&tc, BR_TCFG_RETENTION_MS));
    CU_ASSERT_TRUE(br_topic_config_is_set(&tc, BR_TCFG_MESSAGE_FORMAT_VERSION));
    CU_ASSERT_EQUAL(br_topic_config_unset(&tc, &b, "message.format.version", err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(tc.message_format_version, "2.0-IV1");
    /* unsetting what is not set is fine; unknown keys are not */
    CU_ASSERT_EQUAL(br_topic_config_unset(&tc, &b, "retention.ms", err, sizeof err), 0);
    CU_ASSERT_EQUAL(br_topic_config_unset(&tc, &b, "bogus", err, sizeof err),
                    KP_ERR_INVALID_CONFIG);
    CU_ASSERT_EQUAL(tc.set, 0);
    br_config_free(&b);
}

static void test_describe_sources_and_synonyms(void)
{
    struct br_config b;
    broker_from("log.retention.hours=24\n", &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_topic_config_set(&tc, "segment.bytes", "1048576", err, sizeof err), 0);
    struct br_topic_config_entry e;

    br_topic_config_entry(&tc, &b, BR_TCFG_SEGMENT_BYTES, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "1048576");
    CU_ASSERT_EQUAL(e.source, BR_CONFIG_SOURCE_DYNAMIC_TOPIC);
    CU_ASSERT_STRING_EQUAL(e.broker_synonyms[0], "log.segment.bytes");
    CU_ASSERT_PTR_NULL(e.broker_synonyms[1]);

    /* set through log.retention.hours, the third synonym */
    br_topic_config_entry(&tc, &b, BR_TCFG_RETENTION_MS, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "86400000");
    CU_ASSERT_EQUAL(e.source, BR_CONFIG_SOURCE_STATIC_BROKER);
    CU_ASSERT_STRING_EQUAL(e.broker_synonyms[0], "log.retention.ms");
    CU_ASSERT_STRING_EQUAL(e.broker_synonyms[1], "log.retention.minutes");
    CU_ASSERT_STRING_EQUAL(e.broker_synonyms[2], "log.retention.hours");
    CU_ASSERT_PTR_NULL(e.broker_synonyms[3]);

    br_topic_config_entry(&tc, &b, BR_TCFG_CLEANUP_POLICY, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "delete");
    CU_ASSERT_EQUAL(e.source, BR_CONFIG_SOURCE_DEFAULT);

    br_topic_config_entry(&tc, NULL, BR_TCFG_RETENTION_MS, &e);
    CU_ASSERT_EQUAL(e.source, BR_CONFIG_SOURCE_DEFAULT);

    br_topic_config_entry(&tc, &b, BR_TCFG__COUNT, &e);
    CU_ASSERT_PTR_NULL(e.name);
    CU_ASSERT_PTR_NOT_NULL(e.broker_synonyms);
    br_config_free(&b);
}

static void test_describe_renders_values_as_kafka_does(void)
{
    struct br_config b;
    broker_from("", &b);
    struct br_topic_config tc;
    br_topic_config_from_broker(&b, &tc);
    struct br_topic_config_entry e;
    br_topic_config_entry(&tc, &b, BR_TCFG_MIN_CLEANABLE_DIRTY_RATIO, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "0.5");
    br_topic_config_entry(&tc, &b, BR_TCFG_COMPRESSION_TYPE, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "producer");
    br_topic_config_entry(&tc, &b, BR_TCFG_MESSAGE_TIMESTAMP_TYPE, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "CreateTime");
    br_topic_config_entry(&tc, &b, BR_TCFG_FLUSH_MS, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "9223372036854775807");
    br_topic_config_entry(&tc, &b, BR_TCFG_UNCLEAN_LEADER_ELECTION_ENABLE, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "false");
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(
        br_topic_config_set(&tc, "min.cleanable.dirty.ratio", "1", err, sizeof err), 0);
    br_topic_config_entry(&tc, &b, BR_TCFG_MIN_CLEANABLE_DIRTY_RATIO, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "1.0");
    CU_ASSERT_EQUAL_FATAL(br_topic_config_set(&tc, "cleanup.policy", "", err, sizeof err), 0);
    br_topic_config_entry(&tc, &b, BR_TCFG_CLEANUP_POLICY, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "");
    CU_ASSERT_EQUAL(tc.cleanup_policy, 0);
    br_config_free(&b);
}

static void test_config_is_plain_data(void)
{
    struct br_config b;
    broker_from("", &b);
    struct br_topic_config a;
    br_topic_config_from_broker(&b, &a);
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_topic_config_set(&a, "retention.ms", "7", err, sizeof err), 0);
    struct br_topic_config copy = a;
    CU_ASSERT_EQUAL_FATAL(br_topic_config_set(&a, "retention.ms", "8", err, sizeof err), 0);
    CU_ASSERT_EQUAL(copy.retention_ms, 7);
    CU_ASSERT_EQUAL(a.retention_ms, 8);
    br_config_free(&b);
}

static CU_TestInfo tests[] = {
    {"key table is complete", test_key_table_is_complete},
    {"defaults come from Kafka's defaults", test_defaults_come_from_kafka_defaults},
    {"broker keys give the defaults", test_broker_keys_give_the_defaults},
    {"every key is set and described", test_every_key_is_set_and_described},
    {"unknown key is INVALID_CONFIG", test_unknown_key_is_invalid_config},
    {"null value is INVALID_REQUEST", test_null_value_is_invalid_request},
    {"bad values are INVALID_CONFIG and change nothing",
     test_bad_values_are_invalid_config_and_change_nothing},
    {"overlong value is rejected", test_overlong_value_is_rejected},
    {"values are trimmed", test_values_are_trimmed},
    {"unset restores the broker default", test_unset_restores_the_broker_default},
    {"describe sources and synonyms", test_describe_sources_and_synonyms},
    {"describe renders values as Kafka does", test_describe_renders_values_as_kafka_does},
    {"config is plain data", test_config_is_plain_data},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("broker-topic-config", tests);
}
