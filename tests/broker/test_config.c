/* Unit tests for the broker's server.properties parsing (broker/src/config.h). */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <samsa-protocol/err.h>

#include "base/logging.h"
#include "config/config.h"
#include "cunit_run.h"

#define ERRLEN 512

static int parse_ov(const char *text, const char *const *ov, size_t n, struct br_config *c,
                    char *err)
{
    return br_config_parse_buffer(text, strlen(text), "server.properties", ov, n, c, err, ERRLEN);
}

static int parse(const char *text, struct br_config *c, char *err)
{
    return parse_ov(text, NULL, 0, c, err);
}

/* The text must be rejected with INVALID_CONFIG and a message holding both
 * needles (the second may be NULL). */
static void expect_rejected(const char *text, const char *needle, const char *needle2)
{
    struct br_config c;
    char err[ERRLEN];
    int rc = parse(text, &c, err);
    CU_ASSERT_EQUAL(rc, KP_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, needle));
    if (needle2 != NULL) {
        CU_ASSERT_PTR_NOT_NULL(strstr(err, needle2));
    }
    if (rc != KP_ERR_INVALID_CONFIG || strstr(err, needle) == NULL ||
        (needle2 != NULL && strstr(err, needle2) == NULL)) {
        printf("\n    input %s\n    got %d: %s\n", text, rc, err);
    }
    br_config_free(&c);
}

/* The text must load; c is the caller's to free. */
static void expect_ok(const char *text, struct br_config *c)
{
    char err[ERRLEN];
    int rc = parse(text, c, err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc != 0) {
        printf("\n    input %s\n    got %d: %s\n", text, rc, err);
    }
}

static void test_defaults_are_kafka_2_0_defaults(void)
{
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_config_defaults(&c, err, sizeof err), 0);
    CU_ASSERT_EQUAL(c.broker_id, -1);
    CU_ASSERT_TRUE(c.broker_id_generation_enable);
    CU_ASSERT_EQUAL(c.reserved_broker_max_id, 1000);
    CU_ASSERT_EQUAL(c.n_listeners, 1);
    CU_ASSERT_STRING_EQUAL(c.listeners[0].name, "PLAINTEXT");
    CU_ASSERT_STRING_EQUAL(c.listeners[0].host, "");
    CU_ASSERT_EQUAL(c.listeners[0].port, 9092);
    CU_ASSERT_EQUAL(c.n_advertised_listeners, 1);
    CU_ASSERT_EQUAL(c.advertised_listeners[0].port, 9092);
    CU_ASSERT_STRING_EQUAL(c.inter_broker_listener_name, "PLAINTEXT");
    CU_ASSERT_EQUAL(c.n_admin_listeners, 1);
    CU_ASSERT_STRING_EQUAL(c.admin_listeners[0].name, "HTTP");
    CU_ASSERT_STRING_EQUAL(c.admin_listeners[0].host, "127.0.0.1");
    CU_ASSERT_EQUAL(c.admin_listeners[0].port, 9095);
    CU_ASSERT_EQUAL(c.admin_max_connections, 32);
    CU_ASSERT_EQUAL(c.admin_stream_max_clients, 8);
    CU_ASSERT_EQUAL(c.admin_connections_max_idle_ms, 60000);
    CU_ASSERT_EQUAL(c.admin_stream_max_stall_ms, 30000);
    CU_ASSERT_EQUAL(c.log_level, BR_LOG_INFO);
    CU_ASSERT_EQUAL(c.socket_request_max_bytes, 104857600);
    CU_ASSERT_EQUAL(c.max_connections, INT32_MAX);
    CU_ASSERT_EQUAL(c.connections_max_idle_ms, 600000);
    CU_ASSERT_EQUAL(c.queued_max_request_bytes, 104857600); /* Kafka's: -1 */
    CU_ASSERT_EQUAL(c.message_max_bytes, 1000012);
    CU_ASSERT_EQUAL(c.response_max_bytes, 67108864);
    CU_ASSERT_TRUE(c.auto_create_topics_enable);
    CU_ASSERT_EQUAL(c.num_partitions, 1);
    CU_ASSERT_EQUAL(c.default_replication_factor, 1);
    CU_ASSERT_TRUE(c.delete_topic_enable);
    CU_ASSERT_EQUAL(c.compression_type, BR_COMPRESSION_PRODUCER);
    CU_ASSERT_TRUE(c.controlled_shutdown_enable);
    CU_ASSERT_EQUAL(c.controlled_shutdown_max_retries, 3);
    CU_ASSERT_EQUAL(c.controlled_shutdown_retry_backoff_ms, 5000);
    CU_ASSERT_EQUAL(c.controller_socket_timeout_ms, 30000);
    CU_ASSERT_TRUE(c.auto_leader_rebalance_enable);
    CU_ASSERT_EQUAL(c.leader_imbalance_per_broker_percentage, 10);
    CU_ASSERT_EQUAL(c.leader_imbalance_check_interval_seconds, 300);
    CU_ASSERT_EQUAL_FATAL(c.n_log_dirs, 1);
    CU_ASSERT_STRING_EQUAL(c.log_dirs[0], "/tmp/kafka-logs");
    CU_ASSERT_EQUAL(c.log_segment_bytes, 1073741824);
    CU_ASSERT_EQUAL(c.log_roll_ms, 168LL * 3600000);
    CU_ASSERT_EQUAL(c.log_roll_jitter_ms, 0);
    CU_ASSERT_EQUAL(c.log_index_interval_bytes, 4096);
    CU_ASSERT_EQUAL(c.log_index_size_max_bytes, 10485760);
    CU_ASSERT_EQUAL(c.log_flush_interval_messages, INT64_MAX);
    CU_ASSERT_EQUAL(c.log_flush_interval_ms, INT64_MAX);
    CU_ASSERT_EQUAL(c.log_flush_scheduler_interval_ms, INT64_MAX);
    CU_ASSERT_EQUAL(c.log_flush_offset_checkpoint_interval_ms, 60000);
    CU_ASSERT_EQUAL(c.log_flush_start_offset_checkpoint_interval_ms, 60000);
    CU_ASSERT_EQUAL(c.log_retention_ms, 168LL * 3600000);
    CU_ASSERT_EQUAL(c.log_retention_bytes, -1);
    CU_ASSERT_EQUAL(c.log_retention_check_interval_ms, 300000);
    CU_ASSERT_EQUAL(c.log_segment_delete_delay_ms, 60000);
    CU_ASSERT_EQUAL(c.log_cleanup_policy, BR_CLEANUP_DELETE);
    CU_ASSERT_TRUE(c.log_cleaner_enable);
    CU_ASSERT_EQUAL(c.log_cleaner_threads, 1);
    CU_ASSERT_EQUAL(c.log_cleaner_backoff_ms, 15000);
    CU_ASSERT_DOUBLE_EQUAL(c.log_cleaner_min_cleanable_ratio, 0.5, 1e-12);
    CU_ASSERT_EQUAL(c.log_cleaner_delete_retention_ms, 86400000);
    CU_ASSERT_EQUAL(c.log_cleaner_min_compaction_lag_ms, 0);
    CU_ASSERT_EQUAL(c.log_message_timestamp_type, BR_TIMESTAMP_CREATE_TIME);
    CU_ASSERT_EQUAL(c.log_message_timestamp_difference_max_ms, INT64_MAX);
    CU_ASSERT_STRING_EQUAL(c.log_message_format_version, "2.0-IV1");
    CU_ASSERT_TRUE(c.log_message_downconversion_enable);
    CU_ASSERT_FALSE(c.log_preallocate);
    CU_ASSERT_EQUAL(c.log_open_files_max, 0); /* unset: derived from the limit at start-up */
    CU_ASSERT_TRUE(c.log_writebehind_enable);
    CU_ASSERT_EQUAL(c.log_writebehind_window_bytes, 67108864);
    CU_ASSERT_EQUAL(c.log_writebehind_budget_bytes, 1073741824);
    CU_ASSERT_FALSE(c.unclean_leader_election_enable);
    CU_ASSERT_EQUAL(c.min_insync_replicas, 1);
    CU_ASSERT_EQUAL(c.replica_lag_time_max_ms, 10000);
    CU_ASSERT_EQUAL(c.replica_fetch_max_bytes, 1048576);
    CU_ASSERT_EQUAL(c.replica_fetch_min_bytes, 1);
    CU_ASSERT_EQUAL(c.replica_fetch_wait_max_ms, 500);
    CU_ASSERT_EQUAL(c.replica_fetch_backoff_ms, 1000);
    CU_ASSERT_EQUAL(c.replica_fetch_response_max_bytes, 10485760);
    CU_ASSERT_EQUAL(c.replica_socket_timeout_ms, 30000);
    CU_ASSERT_EQUAL(c.replica_high_watermark_checkpoint_interval_ms, 5000);
    CU_ASSERT_EQUAL(c.num_replica_fetchers, 1);
    CU_ASSERT_EQUAL(c.offsets_topic_num_partitions, 50);
    CU_ASSERT_EQUAL(c.offsets_topic_replication_factor, 3);
    CU_ASSERT_EQUAL(c.offsets_retention_minutes, 10080);
    CU_ASSERT_EQUAL(c.offsets_retention_check_interval_ms, 600000);
    CU_ASSERT_EQUAL(c.offset_metadata_max_bytes, 4096);
    CU_ASSERT_EQUAL(c.offsets_commit_timeout_ms, 5000);
    CU_ASSERT_EQUAL(c.transaction_max_timeout_ms, 900000);
    CU_ASSERT_EQUAL(c.transaction_state_log_num_partitions, 50);
    CU_ASSERT_EQUAL(c.group_initial_rebalance_delay_ms, 3000);
    CU_ASSERT_EQUAL(c.group_min_session_timeout_ms, 6000);
    CU_ASSERT_EQUAL(c.group_max_session_timeout_ms, 300000);
    CU_ASSERT_EQUAL(c.quota_producer_default, INT64_MAX);
    CU_ASSERT_EQUAL(c.quota_window_num, 11);
    CU_ASSERT_EQUAL(c.quota_window_size_s, 1);
    CU_ASSERT_PTR_NULL(c.zookeeper_connect);
    CU_ASSERT_EQUAL(c.zookeeper_session_timeout_ms, 6000);
    CU_ASSERT_EQUAL(c.zookeeper_connection_timeout_ms, 6000);
    CU_ASSERT_EQUAL(c.config_change_expiration_ms, 900000);
    for (int k = 0; k < BR_CFG__COUNT; k++) {
        CU_ASSERT_FALSE(br_config_is_set(&c, (enum br_config_key)k));
    }
    br_config_free(&c);
}

/* Samsa's own default, not Kafka's 57671680 (55 MiB): broker/README.md says
 * 1 MiB and why (librdkafka's default consumer, tests/perf/consumer-defaults) */
static void test_fetch_max_bytes_default_is_one_mib(void)
{
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_config_defaults(&c, err, sizeof err), 0);
    CU_ASSERT_EQUAL(c.fetch_max_bytes, 1048576);
    struct br_config_entry e;
    br_config_entry(&c, BR_CFG_FETCH_MAX_BYTES, &e);
    CU_ASSERT_STRING_EQUAL(e.name, "fetch.max.bytes");
    CU_ASSERT_STRING_EQUAL(e.value, "1048576");
    CU_ASSERT_EQUAL(e.source, BR_CONFIG_SOURCE_DEFAULT);
    br_config_free(&c);
}

static void test_key_table_is_complete(void)
{
    for (int k = 0; k < BR_CFG__COUNT; k++) {
        const char *name = br_config_key_name((enum br_config_key)k);
        CU_ASSERT_PTR_NOT_NULL_FATAL(name);
        CU_ASSERT_EQUAL(br_config_find(name), k);
        CU_ASSERT_FALSE(br_config_key_ignored(name));
    }
    CU_ASSERT_PTR_NULL(br_config_key_name(BR_CFG__COUNT));
    CU_ASSERT_EQUAL(br_config_find("no.such.key"), -1);
}

/* A file setting every key to something other than its default. */
static const char every_key[] =
    "broker.id=7\n"
    "broker.rack=eu-west-1a\n"
    "broker.id.generation.enable=false\n"
    "reserved.broker.max.id=2000\n"
    "listeners=CLIENT://127.0.0.1:19092,REPLICATION://[::1]:19093\n"
    "advertised.listeners=CLIENT://kafka.example.com:29092,REPLICATION://10.0.0.7:19093\n"
    "listener.security.protocol.map=CLIENT:PLAINTEXT,REPLICATION:PLAINTEXT\n"
    "inter.broker.listener.name=replication\n"
    "admin.listeners=http://0.0.0.0:8088\n"
    "admin.auth.token=s3cret\n"
    "admin.max.connections=10\n"
    "admin.stream.max.clients=2\n"
    "admin.connections.max.idle.ms=30000\n"
    "admin.stream.max.stall.ms=5000\n"
    "log.level=debug\n"
    "socket.request.max.bytes=1048576\n"
    "max.connections=500\n"
    "connections.max.idle.ms=120000\n"
    "queued.max.request.bytes=2097152\n"
    "message.max.bytes=2097152\n"
    "fetch.max.bytes=4194304\n"
    "response.max.bytes=8388608\n"
    "auto.create.topics.enable=false\n"
    "num.partitions=3\n"
    "default.replication.factor=2\n"
    "delete.topic.enable=false\n"
    "compression.type=zstd\n"
    "controlled.shutdown.enable=false\n"
    "controlled.shutdown.max.retries=5\n"
    "controlled.shutdown.retry.backoff.ms=2500\n"
    "controller.socket.timeout.ms=12000\n"
    "auto.leader.rebalance.enable=false\n"
    "leader.imbalance.per.broker.percentage=25\n"
    "leader.imbalance.check.interval.seconds=60\n"
    "log.dir=/ignored/because/log.dirs/wins\n"
    "log.dirs=/data/a,/data/b\n"
    "log.segment.bytes=536870912\n"
    "log.roll.ms=3600000\n"
    "log.roll.hours=24\n"
    "log.roll.jitter.ms=1000\n"
    "log.roll.jitter.hours=1\n"
    "log.index.interval.bytes=8192\n"
    "log.index.size.max.bytes=1048576\n"
    "log.flush.interval.messages=10000\n"
    "log.flush.interval.ms=1000\n"
    "log.flush.scheduler.interval.ms=500\n"
    "log.flush.offset.checkpoint.interval.ms=30000\n"
    "log.flush.start.offset.checkpoint.interval.ms=40000\n"
    "log.retention.hours=24\n"
    "log.retention.minutes=90\n"
    "log.retention.ms=123456\n"
    "log.retention.bytes=1073741824\n"
    "log.retention.check.interval.ms=60000\n"
    "log.segment.delete.delay.ms=1000\n"
    "log.cleanup.policy=compact,delete\n"
    "log.cleaner.enable=false\n"
    "log.cleaner.threads=2\n"
    "log.cleaner.backoff.ms=5000\n"
    "log.cleaner.min.cleanable.ratio=0.25\n"
    "log.cleaner.delete.retention.ms=3600000\n"
    "log.cleaner.min.compaction.lag.ms=60000\n"
    "log.message.timestamp.type=LogAppendTime\n"
    "log.message.timestamp.difference.max.ms=86400000\n"
    "log.message.format.version=0.10.2\n"
    "log.message.downconversion.enable=false\n"
    "log.preallocate=true\n"
    "log.open.files.max=5000\n"
    "log.writebehind.enable=false\n"
    "log.writebehind.window.bytes=16777216\n"
    "log.writebehind.budget.bytes=268435456\n"
    "unclean.leader.election.enable=true\n"
    "min.insync.replicas=2\n"
    "replica.lag.time.max.ms=30000\n"
    "replica.fetch.max.bytes=2097152\n"
    "replica.fetch.min.bytes=16\n"
    "replica.fetch.wait.max.ms=250\n"
    "replica.fetch.backoff.ms=500\n"
    "replica.fetch.response.max.bytes=20971520\n"
    "replica.socket.timeout.ms=60000\n"
    "replica.high.watermark.checkpoint.interval.ms=2500\n"
    "num.replica.fetchers=4\n"
    "offsets.topic.num.partitions=10\n"
    "offsets.topic.replication.factor=1\n"
    "offsets.retention.minutes=1440\n"
    "offsets.retention.check.interval.ms=300000\n"
    "offset.metadata.max.bytes=1024\n"
    "offsets.commit.timeout.ms=7000\n"
    "transaction.max.timeout.ms=600000\n"
    "transaction.abort.timed.out.transaction.cleanup.interval.ms=5000\n"
    "transactional.id.expiration.ms=86400000\n"
    "transaction.state.log.num.partitions=8\n"
    "transaction.state.log.replication.factor=2\n"
    "transaction.state.log.min.isr=1\n"
    "transaction.state.log.segment.bytes=1048576\n"
    "transaction.state.log.min.isr=1\n"
    "authorizer.class.name=\n"
    "super.users=User:admin;User:broker\n"
    "allow.everyone.if.no.acl.found=true\n"
    "group.initial.rebalance.delay.ms=0\n"
    "group.min.session.timeout.ms=1000\n"
    "group.max.session.timeout.ms=1800000\n"
    "zookeeper.connect=zk1:2181,zk2:2181/samsa\n"
    "zookeeper.session.timeout.ms=18000\n"
    "zookeeper.connection.timeout.ms=9000\n"
    "config.change.expiration.ms=60000\n"
    "ssl.keystore.type=PEM\n"
    "ssl.keystore.location=/etc/samsa/broker.pem\n"
    "ssl.keystore.password=secret\n"
    "ssl.keystore.key=KEY\n"
    "ssl.keystore.certificate.chain=CHAIN\n"
    "ssl.key.password=secret\n"
    "ssl.truststore.type=PEM\n"
    "ssl.truststore.location=/etc/samsa/ca.pem\n"
    "ssl.truststore.password=secret\n"
    "ssl.truststore.certificates=CERTS\n"
    "ssl.client.auth=required\n"
    "ssl.enabled.protocols=TLSv1.3\n"
    "ssl.cipher.suites=TLS_AES_128_GCM_SHA256\n"
    "ssl.endpoint.identification.algorithm=\n"
    "listener.name.client.ssl.client.auth=none\n";
/* every_key's SASL keys (one string literal stays under C's 4095 bytes) */
static const char every_key_sasl[] =
    "sasl.enabled.mechanisms=PLAIN\n"
    "sasl.jaas.config=JAAS\n"
    "sasl.mechanism.inter.broker.protocol=PLAIN\n"
    "sasl.scram.credentials.file=/etc/samsa/scram\n"
    "sasl.server.max.receive.size=65536\n"
    "connection.failed.authentication.delay.ms=0\n"
    "connections.max.unauthenticated.ms=5000\n";
/* every_key's quota keys, apart for the same reason */
static const char every_key_more[] =
    "quota.producer.default=1048576\n"
    "quota.consumer.default=2097152\n"
    "quota.window.num=5\n"
    "quota.window.size.seconds=2\n"
    "quota.config.file=/etc/samsa/quotas\n"
    "leader.replication.throttled.rate=1000000\n"
    "follower.replication.throttled.rate=0\n"
    "replication.quota.window.num=6\n"
    "replication.quota.window.size.seconds=3\n"
    "admin.ssl.keystore.location=/etc/samsa/admin.pem\n"
    "admin.ssl.truststore.location=/etc/samsa/ca.pem\n"
    "admin.ssl.client.auth=requested\n"
    "max.connections.per.ip=100\n"
    "max.connections.per.ip.overrides=127.0.0.1:2,[::1]:3\n";

static void test_every_key_is_parsed(void)
{
    struct br_config c;
    static char text[sizeof every_key + sizeof every_key_sasl + sizeof every_key_more];
    (void)snprintf(text, sizeof text, "%s%s%s", every_key, every_key_sasl, every_key_more);
    expect_ok(text, &c);
    CU_ASSERT_EQUAL(c.broker_id, 7);
    CU_ASSERT_STRING_EQUAL(c.raw[BR_CFG_BROKER_RACK], "eu-west-1a");
    CU_ASSERT_FALSE(c.broker_id_generation_enable);
    CU_ASSERT_EQUAL(c.reserved_broker_max_id, 2000);
    CU_ASSERT_EQUAL_FATAL(c.n_listeners, 2);
    CU_ASSERT_STRING_EQUAL(c.listeners[0].name, "CLIENT");
    CU_ASSERT_STRING_EQUAL(c.listeners[0].host, "127.0.0.1");
    CU_ASSERT_EQUAL(c.listeners[0].port, 19092);
    CU_ASSERT_STRING_EQUAL(c.listeners[1].name, "REPLICATION");
    CU_ASSERT_STRING_EQUAL(c.listeners[1].host, "::1");
    CU_ASSERT_EQUAL(c.listeners[1].port, 19093);
    CU_ASSERT_EQUAL_FATAL(c.n_advertised_listeners, 2);
    CU_ASSERT_STRING_EQUAL(c.advertised_listeners[0].host, "kafka.example.com");
    CU_ASSERT_EQUAL(c.advertised_listeners[0].port, 29092);
    CU_ASSERT_STRING_EQUAL(c.inter_broker_listener_name, "REPLICATION");
    CU_ASSERT_STRING_EQUAL(br_config_listener_value(&c, "CLIENT", BR_CFG_SSL_CLIENT_AUTH), "none");
    CU_ASSERT_STRING_EQUAL(br_config_listener_value(&c, "REPLICATION", BR_CFG_SSL_CLIENT_AUTH),
                           "required");
    CU_ASSERT_EQUAL_FATAL(c.n_admin_listeners, 1);
    CU_ASSERT_STRING_EQUAL(c.admin_listeners[0].host, "0.0.0.0");
    CU_ASSERT_EQUAL(c.admin_listeners[0].port, 8088);
    CU_ASSERT_EQUAL(c.log_level, BR_LOG_DEBUG);
    CU_ASSERT_EQUAL(c.socket_request_max_bytes, 1048576);
    CU_ASSERT_EQUAL(c.max_connections, 500);
    CU_ASSERT_EQUAL(c.admin_connections_max_idle_ms, 30000);
    CU_ASSERT_EQUAL(c.admin_stream_max_stall_ms, 5000);
    CU_ASSERT_EQUAL(c.connections_max_idle_ms, 120000);
    CU_ASSERT_EQUAL(c.queued_max_request_bytes, 2097152);
    CU_ASSERT_EQUAL(c.message_max_bytes, 2097152);
    CU_ASSERT_EQUAL(c.fetch_max_bytes, 4194304);
    CU_ASSERT_EQUAL(c.response_max_bytes, 8388608);
    CU_ASSERT_FALSE(c.auto_create_topics_enable);
    CU_ASSERT_EQUAL(c.num_partitions, 3);
    CU_ASSERT_EQUAL(c.default_replication_factor, 2);
    CU_ASSERT_FALSE(c.delete_topic_enable);
    CU_ASSERT_EQUAL(c.compression_type, BR_COMPRESSION_ZSTD);
    CU_ASSERT_FALSE(c.controlled_shutdown_enable);
    CU_ASSERT_EQUAL(c.controlled_shutdown_max_retries, 5);
    CU_ASSERT_EQUAL(c.controlled_shutdown_retry_backoff_ms, 2500);
    CU_ASSERT_EQUAL(c.controller_socket_timeout_ms, 12000);
    CU_ASSERT_FALSE(c.auto_leader_rebalance_enable);
    CU_ASSERT_EQUAL(c.leader_imbalance_per_broker_percentage, 25);
    CU_ASSERT_EQUAL(c.leader_imbalance_check_interval_seconds, 60);
    CU_ASSERT_EQUAL_FATAL(c.n_log_dirs, 2);
    CU_ASSERT_STRING_EQUAL(c.log_dirs[0], "/data/a");
    CU_ASSERT_STRING_EQUAL(c.log_dirs[1], "/data/b");
    CU_ASSERT_EQUAL(c.log_segment_bytes, 536870912);
    CU_ASSERT_EQUAL(c.log_roll_ms, 3600000);
    CU_ASSERT_EQUAL(c.log_roll_jitter_ms, 1000);
    CU_ASSERT_EQUAL(c.log_index_interval_bytes, 8192);
    CU_ASSERT_EQUAL(c.log_index_size_max_bytes, 1048576);
    CU_ASSERT_EQUAL(c.log_flush_interval_messages, 10000);
    CU_ASSERT_EQUAL(c.log_flush_interval_ms, 1000);
    CU_ASSERT_EQUAL(c.log_flush_scheduler_interval_ms, 500);
    CU_ASSERT_EQUAL(c.log_flush_offset_checkpoint_interval_ms, 30000);
    CU_ASSERT_EQUAL(c.log_flush_start_offset_checkpoint_interval_ms, 40000);
    CU_ASSERT_EQUAL(c.log_retention_ms, 123456);
    CU_ASSERT_EQUAL(c.log_retention_bytes, 1073741824);
    CU_ASSERT_EQUAL(c.log_retention_check_interval_ms, 60000);
    CU_ASSERT_EQUAL(c.log_segment_delete_delay_ms, 1000);
    CU_ASSERT_EQUAL(c.log_cleanup_policy, BR_CLEANUP_COMPACT | BR_CLEANUP_DELETE);
    CU_ASSERT_FALSE(c.log_cleaner_enable);
    CU_ASSERT_EQUAL(c.log_cleaner_threads, 2);
    CU_ASSERT_EQUAL(c.log_cleaner_backoff_ms, 5000);
    CU_ASSERT_DOUBLE_EQUAL(c.log_cleaner_min_cleanable_ratio, 0.25, 1e-12);
    CU_ASSERT_EQUAL(c.log_cleaner_delete_retention_ms, 3600000);
    CU_ASSERT_EQUAL(c.log_cleaner_min_compaction_lag_ms, 60000);
    CU_ASSERT_EQUAL(c.log_message_timestamp_type, BR_TIMESTAMP_LOG_APPEND_TIME);
    CU_ASSERT_EQUAL(c.log_message_timestamp_difference_max_ms, 86400000);
    CU_ASSERT_STRING_EQUAL(c.log_message_format_version, "0.10.2");
    CU_ASSERT_FALSE(c.log_message_downconversion_enable);
    CU_ASSERT_TRUE(c.log_preallocate);
    CU_ASSERT_EQUAL(c.log_open_files_max, 5000);
    CU_ASSERT_FALSE(c.log_writebehind_enable);
    CU_ASSERT_EQUAL(c.log_writebehind_window_bytes, 16777216);
    CU_ASSERT_EQUAL(c.log_writebehind_budget_bytes, 268435456);
    CU_ASSERT_TRUE(c.unclean_leader_election_enable);
    CU_ASSERT_EQUAL(c.min_insync_replicas, 2);
    CU_ASSERT_EQUAL(c.replica_lag_time_max_ms, 30000);
    CU_ASSERT_EQUAL(c.replica_fetch_max_bytes, 2097152);
    CU_ASSERT_EQUAL(c.replica_fetch_min_bytes, 16);
    CU_ASSERT_EQUAL(c.replica_fetch_wait_max_ms, 250);
    CU_ASSERT_EQUAL(c.replica_fetch_backoff_ms, 500);
    CU_ASSERT_EQUAL(c.replica_fetch_response_max_bytes, 20971520);
    CU_ASSERT_EQUAL(c.replica_socket_timeout_ms, 60000);
    CU_ASSERT_EQUAL(c.replica_high_watermark_checkpoint_interval_ms, 2500);
    CU_ASSERT_EQUAL(c.num_replica_fetchers, 4);
    CU_ASSERT_EQUAL(c.offsets_topic_num_partitions, 10);
    CU_ASSERT_EQUAL(c.offsets_topic_replication_factor, 1);
    CU_ASSERT_EQUAL(c.offsets_retention_minutes, 1440);
    CU_ASSERT_EQUAL(c.offsets_retention_check_interval_ms, 300000);
    CU_ASSERT_EQUAL(c.offset_metadata_max_bytes, 1024);
    CU_ASSERT_EQUAL(c.offsets_commit_timeout_ms, 7000);
    CU_ASSERT_EQUAL(c.transaction_max_timeout_ms, 600000);
    CU_ASSERT_EQUAL(c.transaction_abort_cleanup_interval_ms, 5000);
    CU_ASSERT_EQUAL(c.transactional_id_expiration_ms, 86400000);
    CU_ASSERT_EQUAL(c.transaction_state_log_num_partitions, 8);
    CU_ASSERT_EQUAL(c.transaction_state_log_replication_factor, 2);
    CU_ASSERT_EQUAL(c.transaction_state_log_min_isr, 1);
    CU_ASSERT_EQUAL(c.transaction_state_log_segment_bytes, 1048576);
    CU_ASSERT_EQUAL(c.transaction_state_log_min_isr, 1);
    CU_ASSERT_FALSE(c.authorizer); /* empty: none */
    CU_ASSERT_STRING_EQUAL(c.raw[BR_CFG_SUPER_USERS], "User:admin;User:broker");
    CU_ASSERT_TRUE(c.allow_everyone_if_no_acl_found);
    CU_ASSERT_EQUAL(c.group_initial_rebalance_delay_ms, 0);
    CU_ASSERT_EQUAL(c.group_min_session_timeout_ms, 1000);
    CU_ASSERT_EQUAL(c.group_max_session_timeout_ms, 1800000);
    CU_ASSERT_EQUAL(c.quota_producer_default, 1048576);
    CU_ASSERT_EQUAL(c.quota_consumer_default, 2097152);
    CU_ASSERT_EQUAL(c.quota_window_num, 5);
    CU_ASSERT_EQUAL(c.quota_window_size_s, 2);
    CU_ASSERT_STRING_EQUAL(c.raw[BR_CFG_QUOTA_CONFIG_FILE], "/etc/samsa/quotas");
    CU_ASSERT_EQUAL(c.leader_replication_throttled_rate, 1000000);
    CU_ASSERT_EQUAL(c.follower_replication_throttled_rate, 0);
    CU_ASSERT_EQUAL(c.replication_quota_window_num, 6);
    CU_ASSERT_EQUAL(c.replication_quota_window_size_s, 3);
    CU_ASSERT_STRING_EQUAL(c.zookeeper_connect, "zk1:2181,zk2:2181/samsa");
    CU_ASSERT_EQUAL(c.zookeeper_session_timeout_ms, 18000);
    CU_ASSERT_EQUAL(c.zookeeper_connection_timeout_ms, 9000);
    CU_ASSERT_EQUAL(c.config_change_expiration_ms, 60000);
    /* all but security.inter.broker.protocol, which excludes
     * inter.broker.listener.name */
    for (int k = 0; k < BR_CFG__COUNT; k++) {
        bool set = br_config_is_set(&c, (enum br_config_key)k);
        CU_ASSERT_EQUAL(set, k != BR_CFG_SECURITY_INTER_BROKER_PROTOCOL);
        if (set != (k != BR_CFG_SECURITY_INTER_BROKER_PROTOCOL)) {
            printf("\n    %s\n", br_config_key_name((enum br_config_key)k));
        }
    }
    br_config_free(&c);
}

static void test_separators_equals_colon_and_space(void)
{
    struct br_config c;
    expect_ok("num.partitions=2\n"
              "default.replication.factor: 3\n"
              "min.insync.replicas 2\n"
              "log.cleaner.threads \t = \t 4\n",
              &c);
    CU_ASSERT_EQUAL(c.num_partitions, 2);
    CU_ASSERT_EQUAL(c.default_replication_factor, 3);
    CU_ASSERT_EQUAL(c.min_insync_replicas, 2);
    CU_ASSERT_EQUAL(c.log_cleaner_threads, 4);
    br_config_free(&c);
    /* "key:=5": the value is "=5", as Java reads it */
    expect_rejected("log.roll.hours:=5\n", "log.roll.hours", "not an integer");
}

static void test_comments_and_blank_lines_are_skipped(void)
{
    struct br_config c;
    expect_ok("# a comment\n"
              "   ! another comment\n"
              "\n"
              "   \t\n"
              "# not.a.key=1\n"
              "num.partitions=4\n"
              "#num.partitions=5\n"
              "# a comment ending in a backslash does not continue \\\n"
              "broker.id=3\n",
              &c);
    CU_ASSERT_EQUAL(c.num_partitions, 4);
    CU_ASSERT_EQUAL(c.broker_id, 3);
    br_config_free(&c);
}

static void test_continuation_lines_are_joined(void)
{
    struct br_config c;
    expect_ok("log.dirs=/data/a,\\\n"
              "         /data/b,\\\n"
              "\t/data/c\n"
              "num.\\\n"
              "  partitions=6\n",
              &c);
    CU_ASSERT_EQUAL_FATAL(c.n_log_dirs, 3);
    CU_ASSERT_STRING_EQUAL(c.log_dirs[2], "/data/c");
    CU_ASSERT_EQUAL(c.num_partitions, 6);
    br_config_free(&c);
    /* an even number of backslashes ends the line: broker.id is "\" */
    expect_rejected("broker.id=\\\\\nnum.partitions=1\n", "broker.id", "not an integer");
    /* a backslash at the very end of the input is dropped */
    expect_ok("num.partitions=7\\", &c);
    CU_ASSERT_EQUAL(c.num_partitions, 7);
    br_config_free(&c);
}

static void test_line_ends_cr_lf_and_crlf(void)
{
    struct br_config c;
    expect_ok("num.partitions=2\r\nbroker.id=5\rmin.insync.replicas=3\n"
              "log.dirs=/a,\\\r\n  /b\r\n",
              &c);
    CU_ASSERT_EQUAL(c.num_partitions, 2);
    CU_ASSERT_EQUAL(c.broker_id, 5);
    CU_ASSERT_EQUAL(c.min_insync_replicas, 3);
    CU_ASSERT_EQUAL(c.n_log_dirs, 2);
    br_config_free(&c);
}

static void test_escapes_are_decoded(void)
{
    struct br_config c;
    /* \u00e9 becomes UTF-8; an escaped separator belongs to the key */
    expect_ok("log.dirs=/data/caf\\u00e9,/data/x\\ y,/d\\\\e\n"
              "zookeeper.connect=zk\\u003a2181\n",
              &c);
    CU_ASSERT_EQUAL_FATAL(c.n_log_dirs, 3);
    CU_ASSERT_STRING_EQUAL(c.log_dirs[0], "/data/caf\xc3\xa9");
    CU_ASSERT_STRING_EQUAL(c.log_dirs[1], "/data/x y");
    CU_ASSERT_STRING_EQUAL(c.log_dirs[2], "/d\\e");
    CU_ASSERT_STRING_EQUAL(c.zookeeper_connect, "zk:2181");
    br_config_free(&c);
    expect_ok("log.dirs=/emoji\\ud83d\\ude00\n", &c);
    CU_ASSERT_STRING_EQUAL(c.log_dirs[0], "/emoji\xf0\x9f\x98\x80");
    br_config_free(&c);
    expect_rejected("num\\=partitions=1\n", "unknown config key 'num=partitions'", NULL);
}

static void test_bad_unicode_escapes_are_rejected(void)
{
    expect_rejected("log.dir=/a\\u12\n", "server.properties:1:", "\\uxxxx");
    expect_rejected("log.dir=/a\\uzzzz\n", "server.properties:1:", "\\uxxxx");
    expect_rejected("log.dir=/a\\ud83d\n", "server.properties:1:", "surrogate");
    expect_rejected("log.dir=/a\\u0000b\n", "server.properties:1:", "\\u0000");
}

static void test_values_are_trimmed(void)
{
    struct br_config c;
    expect_ok("num.partitions = 9   \t\n"
              "zookeeper.connect =   zk:2181   \n"
              "auto.create.topics.enable = FALSE \n",
              &c);
    CU_ASSERT_EQUAL(c.num_partitions, 9);
    CU_ASSERT_STRING_EQUAL(c.zookeeper_connect, "zk:2181");
    CU_ASSERT_FALSE(c.auto_create_topics_enable);
    CU_ASSERT_STRING_EQUAL(c.raw[BR_CFG_NUM_PARTITIONS], "9");
    br_config_free(&c);
}

static void test_overrides_win_over_the_file(void)
{
    static const char *const ov[] = {"num.partitions=8", " log.dirs = /override ",
                                     "num.partitions=12", "zookeeper.connect="};
    struct br_config c;
    char err[ERRLEN];
    int rc =
        parse_ov("num.partitions=2\nlog.dirs=/file\nzookeeper.connect=zk:2181\n", ov, 4, &c, err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(c.num_partitions, 12);
    CU_ASSERT_STRING_EQUAL(c.log_dirs[0], "/override");
    /* an empty zookeeper.connect means standalone */
    CU_ASSERT_PTR_NULL(c.zookeeper_connect);
    br_config_free(&c);
}

static void test_override_without_equals_is_rejected(void)
{
    static const char *const ov[] = {"num.partitions"};
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(parse_ov("", ov, 1, &c, err), KP_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--override 'num.partitions'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "key=value"));
    br_config_free(&c);
}

static void test_bad_override_value_names_the_override(void)
{
    static const char *const ov[] = {"log.segment.bytes=big"};
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(parse_ov("log.segment.bytes=1024\n", ov, 1, &c, err), KP_ERR_INVALID_CONFIG);
    CU_ASSERT_STRING_EQUAL(err, "--override log.segment.bytes: 'big' is not an integer");
    br_config_free(&c);
}

static void test_unknown_key_is_rejected_with_file_and_line(void)
{
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(parse("num.partitions=1\n# comment\nnum.partition=2\n", &c, err),
                    KP_ERR_INVALID_CONFIG);
    CU_ASSERT_STRING_EQUAL(err, "server.properties:3: unknown config key 'num.partition'");
    br_config_free(&c);
}

static void test_unknown_override_key_is_rejected(void)
{
    static const char *const ov[] = {"ssl.no.such.key=/x"};
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(parse_ov("", ov, 1, &c, err), KP_ERR_INVALID_CONFIG);
    CU_ASSERT_STRING_EQUAL(err, "--override unknown config key 'ssl.no.such.key'");
    br_config_free(&c);
}

static void test_unknown_key_in_message_is_sanitised(void)
{
    expect_rejected("bad\\nkey\\u001b[31m=1\n", "unknown config key 'bad?key?[31m'", NULL);
}

static void test_shipped_kafka_server_properties_loads(void)
{
    /* the settings of Kafka 2.0's config/server.properties */
    struct br_config c;
    expect_ok("broker.id=0\n"
              "num.network.threads=3\n"
              "num.io.threads=8\n"
              "socket.send.buffer.bytes=102400\n"
              "socket.receive.buffer.bytes=102400\n"
              "socket.request.max.bytes=104857600\n"
              "log.dirs=/tmp/kafka-logs\n"
              "num.partitions=1\n"
              "num.recovery.threads.per.data.dir=1\n"
              "offsets.topic.replication.factor=1\n"
              "transaction.state.log.replication.factor=1\n"
              "transaction.state.log.min.isr=1\n"
              "log.retention.hours=168\n"
              "log.segment.bytes=1073741824\n"
              "log.retention.check.interval.ms=300000\n"
              "zookeeper.connect=localhost:2181\n"
              "zookeeper.connection.timeout.ms=6000\n"
              "group.initial.rebalance.delay.ms=0\n",
              &c);
    CU_ASSERT_EQUAL(c.broker_id, 0);
    CU_ASSERT_EQUAL(c.offsets_topic_replication_factor, 1);
    CU_ASSERT_STRING_EQUAL(c.zookeeper_connect, "localhost:2181");
    CU_ASSERT_EQUAL(c.group_initial_rebalance_delay_ms, 0);
    br_config_free(&c);
    CU_ASSERT_TRUE(br_config_key_ignored("num.io.threads"));
    CU_ASSERT_FALSE(br_config_key_ignored("num.partitions"));
}

static void test_non_number_is_rejected(void)
{
    expect_rejected("num.partitions=three\n",
                    "server.properties:1: num.partitions:", "'three' is not an integer");
    expect_rejected("num.partitions=\n", "num.partitions", "'' is not an integer");
}

static void test_number_with_trailing_garbage_is_rejected(void)
{
    static const char *const bad[] = {"12x", "0x10", "1 2", "1e3", "+", "-", "1.0", "١٢"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[64];
        (void)snprintf(text, sizeof text, "log.segment.bytes=%s\n", bad[i]);
        expect_rejected(text, "log.segment.bytes", "not an integer");
    }
    struct br_config c;
    expect_ok("log.segment.bytes=+1024\nbroker.id=-1\nlog.retention.bytes=007\n", &c);
    CU_ASSERT_EQUAL(c.log_segment_bytes, 1024);
    CU_ASSERT_EQUAL(c.log_retention_bytes, 7);
    br_config_free(&c);
}

static void test_out_of_range_is_rejected(void)
{
    expect_rejected("log.segment.bytes=13\n", "log.segment.bytes", "out of range");
    expect_rejected("num.partitions=0\n", "num.partitions", "between 1 and 2147483647");
    expect_rejected("num.partitions=2147483648\n", "num.partitions", "out of range");
    expect_rejected("log.retention.bytes=9223372036854775808\n", "log.retention.bytes",
                    "out of range");
    expect_rejected("log.retention.bytes=-9223372036854775809\n", "log.retention.bytes",
                    "out of range");
    expect_rejected("default.replication.factor=32768\n", "default.replication.factor",
                    "between 1 and 32767");
    expect_rejected("log.index.size.max.bytes=3\n", "log.index.size.max.bytes", "out of range");
    expect_rejected("admin.stream.max.stall.ms=999\n", "admin.stream.max.stall.ms", "out of range");
    expect_rejected("log.cleaner.min.cleanable.ratio=1.5\n", "log.cleaner.min.cleanable.ratio",
                    "between 0 and 1");
    expect_rejected("log.cleaner.min.cleanable.ratio=nan\n", "log.cleaner.min.cleanable.ratio",
                    "not a number");
    expect_rejected("log.open.files.max=0\n", "log.open.files.max", "between 1 and 2147483647");
    expect_rejected("log.open.files.max=-1\n", "log.open.files.max", "between 1 and 2147483647");
    expect_rejected("log.writebehind.window.bytes=1048575\n", "log.writebehind.window.bytes",
                    "between 1048576 and");
    expect_rejected("log.open.files.max=2147483648\n", "log.open.files.max", "out of range");
}

static void test_bad_boolean_is_rejected(void)
{
    expect_rejected("auto.create.topics.enable=yes\n", "auto.create.topics.enable",
                    "'yes' is not a boolean");
    expect_rejected("delete.topic.enable=1\n", "delete.topic.enable", "not a boolean");
    struct br_config c;
    expect_ok("delete.topic.enable=False\nlog.preallocate=TRUE\n", &c);
    CU_ASSERT_FALSE(c.delete_topic_enable);
    CU_ASSERT_TRUE(c.log_preallocate);
    br_config_free(&c);
}

static void test_bad_listener_is_rejected(void)
{
    expect_rejected("listeners=localhost:9092\n", "listeners", "NAME://host:port");
    expect_rejected("listeners=PLAINTEXT://localhost\n", "listeners", "host:port");
    expect_rejected("listeners=PLAINTEXT://:99999\n", "listeners", "port");
    expect_rejected("listeners=PLAINTEXT://:-1\n", "listeners", "port");
    expect_rejected("listeners=PLAINTEXT://:\n", "listeners", "port");
    expect_rejected("listeners=PLAINTEXT://::1:9092\n", "listeners", "brackets");
    expect_rejected("listeners=PLAINTEXT://[::1:9092\n", "listeners", "IPv6");
    expect_rejected("listeners=PLAINTEXT://a b:9092\n", "listeners", "invalid host");
    expect_rejected("listeners=PLAIN TEXT://:9092\n", "listeners", "listener name");
    expect_rejected("listeners=\n", "listeners", "no listener");
    expect_rejected("listeners=PLAINTEXT://:9092,PLAINTEXT://:9093\n", "listeners",
                    "different name");
}

static void test_sasl_listeners_and_keys(void)
{
    struct br_config c;
    expect_ok("listeners=PLAINTEXT://:9092,SASL_PLAINTEXT://:9093,SASL_SSL://:9094\n"
              "sasl.enabled.mechanisms=PLAIN\n"
              "listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512\n"
              "sasl.jaas.config=global\n"
              "listener.name.sasl_plaintext.plain.sasl.jaas.config=for plain\n"
              "listener.name.sasl_plaintext.sasl.jaas.config=for the listener\n"
              "connection.failed.authentication.delay.ms=250\n",
              &c);
    CU_ASSERT_EQUAL_FATAL(c.n_listeners, 3);
    CU_ASSERT_EQUAL(c.listeners[1].security_protocol, BR_SECURITY_SASL_PLAINTEXT);
    CU_ASSERT_EQUAL(c.listeners[2].security_protocol, BR_SECURITY_SASL_SSL);
    CU_ASSERT_STRING_EQUAL(
        br_config_listener_value(&c, "SASL_SSL", BR_CFG_SASL_ENABLED_MECHANISMS), "SCRAM-SHA-512");
    CU_ASSERT_STRING_EQUAL(
        br_config_listener_value(&c, "SASL_PLAINTEXT", BR_CFG_SASL_ENABLED_MECHANISMS), "PLAIN");
    /* listener and mechanism first, then the listener, then the key */
    CU_ASSERT_STRING_EQUAL(br_config_listener_mechanism_value(&c, "SASL_PLAINTEXT", "PLAIN",
                                                              BR_CFG_SASL_JAAS_CONFIG),
                           "for plain");
    CU_ASSERT_STRING_EQUAL(br_config_listener_mechanism_value(&c, "SASL_PLAINTEXT",
                                                              "SCRAM-SHA-256",
                                                              BR_CFG_SASL_JAAS_CONFIG),
                           "for the listener");
    CU_ASSERT_STRING_EQUAL(
        br_config_listener_mechanism_value(&c, "SASL_SSL", "PLAIN", BR_CFG_SASL_JAAS_CONFIG),
        "global");
    CU_ASSERT_EQUAL(c.connection_failed_authentication_delay_ms, 250);
    CU_ASSERT_EQUAL(c.connections_max_unauthenticated_ms, 10000);
    CU_ASSERT_EQUAL(c.sasl_server_max_receive_size, 524288);
    br_config_free(&c);
    expect_rejected("listeners=CLIENT://:9093\n", "listeners", "no security protocol");
    expect_rejected("listener.security.protocol.map=CLIENT:TLS\n", "listener.security.protocol.map",
                    "unknown security protocol");
    expect_rejected("security.inter.broker.protocol=SSL\n", "security.inter.broker.protocol",
                    "must be one of advertised.listeners");
    expect_rejected("listener.name.x.gssapi.sasl.jaas.config=a\n", "listener.name.x.gssapi",
                    "sasl.jaas.config");
    /* a cluster's brokers speak SASL to each other with PLAIN or SCRAM:
     * GSSAPI, Kafka's default, is not there */
    expect_rejected("zookeeper.connect=127.0.0.1:2181\nbroker.id=1\n"
                    "listeners=SASL_PLAINTEXT://:9093\n"
                    "inter.broker.listener.name=SASL_PLAINTEXT\n",
                    "sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512");
}

static void test_ssl_listeners_are_accepted(void)
{
    struct br_config c;
    expect_ok("listeners=PLAINTEXT://:9092,SSL://:9093\n", &c);
    CU_ASSERT_EQUAL_FATAL(c.n_listeners, 2);
    CU_ASSERT_EQUAL(c.listeners[0].security_protocol, BR_SECURITY_PLAINTEXT);
    CU_ASSERT_EQUAL(c.listeners[1].security_protocol, BR_SECURITY_SSL);
    CU_ASSERT_EQUAL(c.advertised_listeners[1].security_protocol, BR_SECURITY_SSL);
    CU_ASSERT_STRING_EQUAL(c.inter_broker_listener_name, "PLAINTEXT");
    br_config_free(&c);
    expect_ok("listeners=INTERNAL://:9092,EXTERNAL://:9093\n"
              "listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:SSL\n"
              "inter.broker.listener.name=INTERNAL\n",
              &c);
    CU_ASSERT_EQUAL(c.listeners[1].security_protocol, BR_SECURITY_SSL);
    br_config_free(&c);
    /* standalone, no broker connects: an SSL listener alone is fine */
    expect_ok("listeners=SSL://:9093\ninter.broker.listener.name=SSL\n", &c);
    br_config_free(&c);
    /* a cluster's brokers speak TLS to each other on it */
    expect_ok("zookeeper.connect=127.0.0.1:2181\nbroker.id=1\nlisteners=SSL://:9093\n"
              "inter.broker.listener.name=SSL\n",
              &c);
    CU_ASSERT_STRING_EQUAL(c.inter_broker_listener_name, "SSL");
    br_config_free(&c);
}

static void test_listener_forms(void)
{
    struct br_config c;
    expect_ok("listeners=plaintext://0.0.0.0:0 , ,\n", &c);
    CU_ASSERT_EQUAL_FATAL(c.n_listeners, 1);
    CU_ASSERT_STRING_EQUAL(c.listeners[0].name, "PLAINTEXT");
    CU_ASSERT_STRING_EQUAL(c.listeners[0].host, "0.0.0.0");
    CU_ASSERT_EQUAL(c.listeners[0].port, 0);
    br_config_free(&c);
    expect_ok("listeners=PLAINTEXT://[fe80::1%eth0]:9092\n", &c);
    CU_ASSERT_STRING_EQUAL(c.listeners[0].host, "fe80::1%eth0");
    br_config_free(&c);
}

static void test_advertised_listeners_default_to_listeners(void)
{
    struct br_config c;
    expect_ok("listeners=PLAINTEXT://127.0.0.1:19092\n", &c);
    CU_ASSERT_EQUAL_FATAL(c.n_advertised_listeners, 1);
    CU_ASSERT_STRING_EQUAL(c.advertised_listeners[0].host, "127.0.0.1");
    CU_ASSERT_EQUAL(c.advertised_listeners[0].port, 19092);
    CU_ASSERT_FALSE(br_config_is_set(&c, BR_CFG_ADVERTISED_LISTENERS));
    br_config_free(&c);
}

static void test_advertised_listener_rules(void)
{
    expect_rejected("advertised.listeners=PLAINTEXT://0.0.0.0:9092\n", "advertised.listeners",
                    "non-routable");
    expect_rejected("advertised.listeners=OTHER://host:9092\n", "advertised.listeners",
                    "not one of listeners");
    expect_rejected("listeners=A://:1,B://:2\nlistener.security.protocol.map=A:PLAINTEXT,"
                    "B:PLAINTEXT\n",
                    "security.inter.broker.protocol", "inter-broker listener PLAINTEXT");
    expect_rejected("inter.broker.listener.name=PLAINTEXT\nsecurity.inter.broker.protocol="
                    "PLAINTEXT\n",
                    "inter.broker.listener.name", "only one");
    expect_rejected("inter.broker.listener.name=OTHER\n", "inter.broker.listener.name",
                    "advertised.listeners");
}

static void test_admin_listeners(void)
{
    struct br_config c;
    expect_ok("admin.listeners=\n", &c);
    CU_ASSERT_EQUAL(c.n_admin_listeners, 0);
    br_config_free(&c);
    expect_ok("admin.listeners=0\n", &c);
    CU_ASSERT_EQUAL(c.n_admin_listeners, 0);
    br_config_free(&c);
    expect_ok("admin.listeners=HTTP://:8081,http://[::1]:8082\n", &c);
    CU_ASSERT_EQUAL(c.n_admin_listeners, 2);
    br_config_free(&c);
    expect_rejected("admin.listeners=ftp://:8443\n", "admin.listeners", "http://host:port");
    expect_rejected("admin.listeners=https://:8443\n", "admin.ssl.keystore.location",
                    "needs a certificate");
    expect_ok("admin.listeners=http://:8081,https://:8443\n"
              "admin.ssl.keystore.location=/etc/samsa/admin.pem\n", &c);
    CU_ASSERT_EQUAL(c.n_admin_listeners, 2);
    CU_ASSERT_STRING_EQUAL(c.admin_listeners[1].name, "HTTPS");
    br_config_free(&c);
    expect_rejected("admin.listeners=https://:8443\nadmin.ssl.keystore.location=/k.pem\n"
                    "admin.ssl.client.auth=required\n",
                    "admin.ssl.truststore.location", "needs the CA");
    expect_rejected("admin.ssl.client.auth=always\n", "admin.ssl.client.auth",
                    "none, requested or required");
}

static void test_max_connections_per_ip(void)
{
    struct br_config c;
    expect_ok("", &c);
    CU_ASSERT_EQUAL(c.max_connections_per_ip, INT32_MAX);
    CU_ASSERT_EQUAL(c.n_ip_overrides, 0);
    br_config_free(&c);
    expect_ok("max.connections.per.ip=0\n"
              "max.connections.per.ip.overrides= 10.0.0.1:5 ,[::1]:0,\n", &c);
    CU_ASSERT_EQUAL(c.max_connections_per_ip, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_ip_overrides, 2);
    static const uint8_t v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
    static const uint8_t v6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    CU_ASSERT_EQUAL(memcmp(c.ip_override_addr[0], v4, 16), 0);
    CU_ASSERT_EQUAL(c.ip_override_max[0], 5);
    CU_ASSERT_EQUAL(memcmp(c.ip_override_addr[1], v6, 16), 0);
    CU_ASSERT_EQUAL(c.ip_override_max[1], 0);
    br_config_free(&c);
    expect_rejected("max.connections.per.ip=0\n", "max.connections.per.ip",
                    "only if max.connections.per.ip.overrides is set");
    expect_rejected("max.connections.per.ip=-1\n", "max.connections.per.ip", "out of range");
    expect_rejected("max.connections.per.ip.overrides=broker1:5\n",
                    "max.connections.per.ip.overrides", "not a host name");
    expect_rejected("max.connections.per.ip.overrides=10.0.0.1\n",
                    "max.connections.per.ip.overrides", "is not host:count");
    expect_rejected("max.connections.per.ip.overrides=10.0.0.1:-1\n",
                    "max.connections.per.ip.overrides", "is not host:count");
    expect_rejected("admin.listeners=127.0.0.1:8081\n", "admin.listeners", "NAME://host:port");
}

static void test_unknown_cleanup_policy_is_rejected(void)
{
    expect_rejected("log.cleanup.policy=compaction\n", "log.cleanup.policy",
                    "'compaction' is not a cleanup policy");
    expect_rejected("log.cleanup.policy=delete,,compact\n", "log.cleanup.policy",
                    "not a cleanup policy");
    expect_rejected("log.cleanup.policy=Delete\n", "log.cleanup.policy", "not a cleanup policy");
}

static void test_cleanup_policy_lists(void)
{
    struct br_config c;
    expect_ok("log.cleanup.policy= compact , delete \n", &c);
    CU_ASSERT_EQUAL(c.log_cleanup_policy, BR_CLEANUP_COMPACT | BR_CLEANUP_DELETE);
    br_config_free(&c);
    expect_ok("log.cleanup.policy=compact\n", &c);
    CU_ASSERT_EQUAL(c.log_cleanup_policy, BR_CLEANUP_COMPACT);
    br_config_free(&c);
    /* Kafka accepts the empty list: neither deletion nor compaction */
    expect_ok("log.cleanup.policy=\n", &c);
    CU_ASSERT_EQUAL(c.log_cleanup_policy, 0);
    br_config_free(&c);
}

static void test_bad_enumerations_are_rejected(void)
{
    expect_rejected("log.message.timestamp.type=createtime\n", "log.message.timestamp.type",
                    "CreateTime or LogAppendTime");
    expect_rejected("compression.type=brotli\n", "compression.type", "not a compression type");
    expect_rejected("log.level=verbose\n", "log.level", "not a log level");
    expect_rejected("log.message.format.version=latest\n", "log.message.format.version",
                    "message format version");
    expect_rejected("log.message.format.version=2.\n", "log.message.format.version",
                    "message format version");
    struct br_config c;
    expect_ok("log.message.format.version=0.10.0-IV1\ncompression.type=uncompressed\n", &c);
    CU_ASSERT_STRING_EQUAL(c.log_message_format_version, "0.10.0-IV1");
    CU_ASSERT_EQUAL(c.compression_type, BR_COMPRESSION_UNCOMPRESSED);
    br_config_free(&c);
}

static void test_log_dirs(void)
{
    struct br_config c;
    expect_ok("log.dir=/one\n", &c);
    CU_ASSERT_EQUAL_FATAL(c.n_log_dirs, 1);
    CU_ASSERT_STRING_EQUAL(c.log_dirs[0], "/one");
    br_config_free(&c);
    expect_ok("log.dirs= /a , /b ,\n", &c);
    CU_ASSERT_EQUAL_FATAL(c.n_log_dirs, 2);
    CU_ASSERT_STRING_EQUAL(c.log_dirs[1], "/b");
    br_config_free(&c);
    expect_rejected("log.dirs=/a,/b,/a\n", "log.dirs", "listed twice");
    expect_rejected("log.dirs= , \n", "log.dirs", "no directory");
}

static void test_retention_precedence_ms_minutes_hours(void)
{
    struct br_config c;
    expect_ok("log.retention.hours=2\n", &c);
    CU_ASSERT_EQUAL(c.log_retention_ms, (int64_t)2 * 3600000);
    br_config_free(&c);
    expect_ok("log.retention.hours=2\nlog.retention.minutes=3\n", &c);
    CU_ASSERT_EQUAL(c.log_retention_ms, (int64_t)3 * 60000);
    br_config_free(&c);
    expect_ok("log.retention.hours=2\nlog.retention.minutes=3\nlog.retention.ms=5\n", &c);
    CU_ASSERT_EQUAL(c.log_retention_ms, 5);
    br_config_free(&c);
    expect_ok("log.retention.ms=-1\n", &c);
    CU_ASSERT_EQUAL(c.log_retention_ms, -1);
    br_config_free(&c);
    expect_ok("log.retention.hours=-5\n", &c);
    CU_ASSERT_EQUAL(c.log_retention_ms, -1);
    br_config_free(&c);
    expect_rejected("log.retention.minutes=0\n", "log.retention.minutes", "unlimited (-1)");
}

static void test_roll_flush_and_zookeeper_timeouts(void)
{
    struct br_config c;
    expect_ok("log.roll.hours=2\nlog.roll.jitter.hours=1\nlog.flush.scheduler.interval.ms=700\n"
              "zookeeper.session.timeout.ms=9000\n",
              &c);
    CU_ASSERT_EQUAL(c.log_roll_ms, (int64_t)2 * 3600000);
    CU_ASSERT_EQUAL(c.log_roll_jitter_ms, 3600000);
    CU_ASSERT_EQUAL(c.log_flush_interval_ms, 700);
    CU_ASSERT_EQUAL(c.zookeeper_connection_timeout_ms, 9000);
    br_config_free(&c);
    expect_rejected("log.roll.ms=0\n", "log.roll.ms", "out of range");
    expect_rejected("log.roll.hours=0\n", "log.roll.hours", "out of range");
}

/* Dynamic broker configs (KIP-226): laid over the static text, the ms key
 * over the file's hours; removed, the static value is back; a key Kafka
 * 2.0 does not make dynamic, and a bad value, refused with nothing
 * changed. */
static void test_dynamic_configs(void)
{
    struct br_config c;
    char err[ERRLEN];
    expect_ok("log.retention.hours=2\nlog.segment.bytes=2048\n", &c);
    CU_ASSERT_EQUAL(c.log_retention_ms, 7200000);
    const char *names[] = {"log.retention.ms", "log.cleanup.policy", "log.retention.ms"};
    const char *values[] = {"5000", "compact", "1000"};
    CU_ASSERT_EQUAL(br_config_dynamic(&c, names, values, 3, true, err, sizeof err), 0);
    CU_ASSERT_EQUAL(c.log_retention_ms, 1000);
    CU_ASSERT_EQUAL(c.log_cleanup_policy, BR_CLEANUP_COMPACT);
    CU_ASSERT_EQUAL(c.log_segment_bytes, 2048);
    CU_ASSERT_STRING_EQUAL(c.raw[BR_CFG_LOG_RETENTION_HOURS], "2");
    CU_ASSERT_EQUAL(br_config_dynamic(&c, NULL, NULL, 0, true, err, sizeof err), 0);
    CU_ASSERT_EQUAL(c.log_retention_ms, 7200000);
    CU_ASSERT_EQUAL(c.log_cleanup_policy, BR_CLEANUP_DELETE);
    const char *fixed[] = {"num.partitions"};
    const char *three[] = {"3"};
    CU_ASSERT_EQUAL(br_config_dynamic(&c, fixed, three, 1, true, err, sizeof err),
                    KP_ERR_INVALID_REQUEST);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "Cannot update these configs dynamically"));
    const char *bad[] = {"not-a-number"};
    CU_ASSERT_EQUAL(br_config_dynamic(&c, names, bad, 1, true, err, sizeof err),
                    KP_ERR_INVALID_CONFIG);
    CU_ASSERT_EQUAL(c.log_retention_ms, 7200000);
    CU_ASSERT_TRUE(br_config_key_dynamic(BR_CFG_LOG_RETENTION_MS));
    CU_ASSERT_FALSE(br_config_key_dynamic(BR_CFG_LOG_RETENTION_HOURS));
    br_config_free(&c);
}

static void test_zookeeper_connect(void)
{
    expect_rejected("zookeeper.connect=zk1:2181,,zk2:2181\n", "zookeeper.connect",
                    "connect string");
    expect_rejected("zookeeper.connect=zk1 zk2\n", "zookeeper.connect", "connect string");
    expect_rejected("zookeeper.connect=/chroot\n", "zookeeper.connect", "connect string");
    /* broker.rack: printable, at most the registration's 255 bytes */
    expect_rejected("broker.rack=a\\tb\n", "broker.rack", "not a rack");
    char long_rack[300];
    (void)snprintf(long_rack, sizeof long_rack, "broker.rack=%0256d\n", 0);
    expect_rejected(long_rack, "broker.rack", "not a rack");
}

/* A broker of a cluster needs its broker.id (Kafka would generate one from
 * /brokers/seqid; Samsa refuses instead, br_config_check_available). */
static void test_cluster_needs_a_broker_id(void)
{
    struct br_config c;
    char err[ERRLEN];
    expect_ok("zookeeper.connect=zk1:2181,zk2:2181/samsa\nbroker.id=-1\n", &c);
    CU_ASSERT_EQUAL(br_config_check_available(&c, err, sizeof err), KP_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "broker.id must be set"));
    br_config_free(&c);
    expect_ok("zookeeper.connect=zk1:2181,zk2:2181/samsa\nbroker.id=3\n", &c);
    CU_ASSERT_EQUAL(br_config_check_available(&c, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(c.zookeeper_connect, "zk1:2181,zk2:2181/samsa");
    br_config_free(&c);
    /* unset, or empty (how a Kafka configuration runs standalone): fine */
    expect_ok("broker.id=0\n", &c);
    CU_ASSERT_EQUAL(br_config_check_available(&c, err, sizeof err), 0);
    br_config_free(&c);
    const char *const ov[] = {"zookeeper.connect="};
    CU_ASSERT_EQUAL_FATAL(parse_ov("zookeeper.connect=zk:2181\n", ov, 1, &c, err), 0);
    CU_ASSERT_EQUAL(br_config_check_available(&c, err, sizeof err), 0);
    br_config_free(&c);
}

static void test_broker_id_rules(void)
{
    expect_rejected("broker.id=1001\n", "broker.id", "reserved.broker.max.id");
    expect_rejected("broker.id=-2\n", "broker.id", "-1");
    expect_rejected("broker.id=-1\nbroker.id.generation.enable=false\n", "broker.id", "at least 0");
    struct br_config c;
    expect_ok("broker.id=5000\nreserved.broker.max.id=10000\n", &c);
    CU_ASSERT_EQUAL(c.broker_id, 5000);
    br_config_free(&c);
}

static void test_cross_key_checks(void)
{
    expect_rejected("replica.fetch.wait.max.ms=20000\n", "replica.fetch.wait.max.ms",
                    "replica.lag.time.max.ms");
    expect_rejected("replica.fetch.wait.max.ms=5000\nreplica.socket.timeout.ms=1000\n",
                    "replica.fetch.wait.max.ms", "replica.socket.timeout.ms");
    expect_rejected("group.min.session.timeout.ms=10000\ngroup.max.session.timeout.ms=5000\n",
                    "group.min.session.timeout.ms", "group.max.session.timeout.ms");
}

static void test_connections_max_idle_ms(void)
{
    struct br_config c;
    expect_ok("connections.max.idle.ms=-1\n", &c);
    CU_ASSERT_EQUAL(c.connections_max_idle_ms, -1);
    br_config_free(&c);
    expect_ok("connections.max.idle.ms=1\n", &c);
    CU_ASSERT_EQUAL(c.connections_max_idle_ms, 1);
    br_config_free(&c);
    expect_rejected("connections.max.idle.ms=0\n", "server.properties:1: connections.max.idle.ms",
                    "-1 to never close");
    expect_rejected("connections.max.idle.ms=-2\n", "connections.max.idle.ms", "out of range");
    expect_rejected("connections.max.idle.ms=10m\n", "connections.max.idle.ms", "not an integer");
}

static void test_queued_max_request_bytes(void)
{
    struct br_config c;
    /* Kafka's "no limit" values */
    expect_ok("queued.max.request.bytes=-1\n", &c);
    CU_ASSERT_EQUAL(c.queued_max_request_bytes, -1);
    br_config_free(&c);
    expect_ok("queued.max.request.bytes=0\n", &c);
    CU_ASSERT_EQUAL(c.queued_max_request_bytes, 0);
    br_config_free(&c);
    /* equal to socket.request.max.bytes is enough */
    expect_ok("socket.request.max.bytes=1048576\nqueued.max.request.bytes=1048576\n", &c);
    CU_ASSERT_EQUAL(c.queued_max_request_bytes, 1048576);
    br_config_free(&c);
    /* unset, the default follows a larger socket.request.max.bytes */
    expect_ok("socket.request.max.bytes=209715200\n", &c);
    CU_ASSERT_EQUAL(c.queued_max_request_bytes, 209715200);
    CU_ASSERT_FALSE(br_config_is_set(&c, BR_CFG_QUEUED_MAX_REQUEST_BYTES));
    br_config_free(&c);
    expect_ok("socket.request.max.bytes=1024\n", &c);
    CU_ASSERT_EQUAL(c.queued_max_request_bytes, 104857600);
    br_config_free(&c);
    /* set below it: refused, naming both keys */
    expect_rejected("socket.request.max.bytes=1048576\nqueued.max.request.bytes=1048575\n",
                    "server.properties:2: queued.max.request.bytes",
                    "at least socket.request.max.bytes (1048576)");
    expect_rejected("queued.max.request.bytes=1\n", "queued.max.request.bytes", "-1 for no limit");
    expect_rejected("queued.max.request.bytes=-2\n", "queued.max.request.bytes", "out of range");
    expect_rejected("queued.max.request.bytes=100MB\n", "queued.max.request.bytes",
                    "not an integer");
    /* a real key now, not one of the ignored ones */
    CU_ASSERT_FALSE(br_config_key_ignored("queued.max.request.bytes"));
    CU_ASSERT_EQUAL(br_config_find("queued.max.request.bytes"), BR_CFG_QUEUED_MAX_REQUEST_BYTES);
}

static void test_a_key_given_twice_keeps_the_later_value(void)
{
    struct br_config c;
    expect_ok("num.partitions=2\nnum.partitions=5\n", &c);
    CU_ASSERT_EQUAL(c.num_partitions, 5);
    br_config_free(&c);
}

static void test_nul_byte_is_rejected(void)
{
    static const char text[] = "num.partitions=1\nbroker.id=2\0\n";
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(
        br_config_parse_buffer(text, sizeof text - 1, "f", NULL, 0, &c, err, sizeof err),
        KP_ERR_INVALID_CONFIG);
    CU_ASSERT_STRING_EQUAL(err, "f:2: NUL byte");
    br_config_free(&c);
}

static void test_overlong_line_is_rejected(void)
{
    size_t n = BR_CONFIG_MAX_LINE_BYTES + 4000;
    char *text = malloc(n + 1);
    if (text == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    memset(text, 'a', n);
    memcpy(text, "log.dir=", 8);
    text[n] = '\0';
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(parse(text, &c, err), KP_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "line longer than"));
    br_config_free(&c);
    /* continuation lines count toward the same limit */
    for (size_t i = 1000; i < n; i += 1000) {
        text[i - 1] = '\\';
        text[i] = '\n';
    }
    CU_ASSERT_EQUAL(parse(text, &c, err), KP_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "line longer than"));
    br_config_free(&c);
    free(text);
}

static void test_oversized_file_is_rejected(void)
{
    size_t n = BR_CONFIG_MAX_FILE_BYTES + 1;
    char *text = malloc(n);
    if (text == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    memset(text, '\n', n);
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(br_config_parse_buffer(text, n, "big", NULL, 0, &c, err, sizeof err),
                    KP_ERR_INVALID_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "larger than"));
    free(text);
}

static void test_load_reads_a_file_and_names_it_in_errors(void)
{
    char path[] = "/tmp/samsa-test-config-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    static const char text[] = "num.partitions=3\nlog.segment.bytes=x\n";
    CU_ASSERT_EQUAL(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    CU_ASSERT_EQUAL(close(fd), 0);

    static const char *const ov[] = {"log.segment.bytes=2048"};
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(br_config_load(path, ov, 1, &c, err, sizeof err), 0);
    CU_ASSERT_EQUAL(c.num_partitions, 3);
    CU_ASSERT_EQUAL(c.log_segment_bytes, 2048);
    br_config_free(&c);

    CU_ASSERT_EQUAL(br_config_load(path, NULL, 0, &c, err, sizeof err), KP_ERR_INVALID_CONFIG);
    char expect[256];
    (void)snprintf(expect, sizeof expect, "%s:2: log.segment.bytes: 'x' is not an integer", path);
    CU_ASSERT_STRING_EQUAL(err, expect);
    br_config_free(&c);
    CU_ASSERT_EQUAL(unlink(path), 0);

    CU_ASSERT_EQUAL(br_config_load(path, NULL, 0, &c, err, sizeof err), KP_ERR_KAFKA_STORAGE_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot open"));
    CU_ASSERT_EQUAL(br_config_load("/tmp", NULL, 0, &c, err, sizeof err),
                    KP_ERR_KAFKA_STORAGE_ERROR);
}

static void test_describe_entries(void)
{
    struct br_config c;
    expect_ok("num.partitions = 4 \nlog.retention.hours=24\n", &c);
    struct br_config_entry e;
    br_config_entry(&c, BR_CFG_NUM_PARTITIONS, &e);
    CU_ASSERT_STRING_EQUAL(e.name, "num.partitions");
    CU_ASSERT_STRING_EQUAL(e.value, "4");
    CU_ASSERT_EQUAL(e.source, BR_CONFIG_SOURCE_STATIC_BROKER);
    CU_ASSERT_TRUE(e.read_only);
    CU_ASSERT_FALSE(e.sensitive);
    br_config_entry(&c, BR_CFG_LOG_SEGMENT_BYTES, &e);
    CU_ASSERT_STRING_EQUAL(e.value, "1073741824");
    CU_ASSERT_EQUAL(e.source, BR_CONFIG_SOURCE_DEFAULT);
    br_config_entry(&c, BR_CFG_LOG_RETENTION_MS, &e);
    CU_ASSERT_PTR_NULL(e.value);
    CU_ASSERT_EQUAL(e.source, BR_CONFIG_SOURCE_DEFAULT);
    br_config_entry(&c, BR_CFG__COUNT, &e);
    CU_ASSERT_PTR_NULL(e.name);
    for (int k = 0; k < BR_CFG__COUNT; k++) {
        br_config_entry(&c, (enum br_config_key)k, &e);
        CU_ASSERT_PTR_NOT_NULL(e.name);
    }
    br_config_free(&c);
}

static void test_free_is_safe_twice(void)
{
    struct br_config c;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_config_defaults(&c, err, sizeof err), 0);
    br_config_free(&c);
    br_config_free(&c);
    br_config_free(NULL);
}

static CU_TestInfo tests[] = {
    {"defaults are Kafka 2.0's", test_defaults_are_kafka_2_0_defaults},
    {"fetch.max.bytes default is 1 MiB", test_fetch_max_bytes_default_is_one_mib},
    {"key table is complete", test_key_table_is_complete},
    {"every key is parsed", test_every_key_is_parsed},
    {"separators = : and space", test_separators_equals_colon_and_space},
    {"comments and blank lines are skipped", test_comments_and_blank_lines_are_skipped},
    {"continuation lines are joined", test_continuation_lines_are_joined},
    {"line ends CR, LF, CRLF", test_line_ends_cr_lf_and_crlf},
    {"escapes are decoded", test_escapes_are_decoded},
    {"bad \\u escapes are rejected", test_bad_unicode_escapes_are_rejected},
    {"values are trimmed", test_values_are_trimmed},
    {"overrides win over the file", test_overrides_win_over_the_file},
    {"override without '=' is rejected", test_override_without_equals_is_rejected},
    {"bad override value names the override", test_bad_override_value_names_the_override},
    {"unknown key is rejected with file:line", test_unknown_key_is_rejected_with_file_and_line},
    {"unknown override key is rejected", test_unknown_override_key_is_rejected},
    {"unknown key in message is sanitised", test_unknown_key_in_message_is_sanitised},
    {"Kafka's shipped server.properties loads", test_shipped_kafka_server_properties_loads},
    {"non-number is rejected", test_non_number_is_rejected},
    {"number with trailing garbage is rejected", test_number_with_trailing_garbage_is_rejected},
    {"out of range is rejected", test_out_of_range_is_rejected},
    {"bad boolean is rejected", test_bad_boolean_is_rejected},
    {"bad listener is rejected", test_bad_listener_is_rejected},
    {"SASL listeners and keys", test_sasl_listeners_and_keys},
    {"SSL listeners are accepted", test_ssl_listeners_are_accepted},
    {"listener forms", test_listener_forms},
    {"advertised.listeners default to listeners", test_advertised_listeners_default_to_listeners},
    {"advertised listener rules", test_advertised_listener_rules},
    {"admin.listeners", test_admin_listeners},
    {"max.connections.per.ip and its overrides", test_max_connections_per_ip},
    {"unknown cleanup policy is rejected", test_unknown_cleanup_policy_is_rejected},
    {"cleanup policy lists", test_cleanup_policy_lists},
    {"bad enumerations are rejected", test_bad_enumerations_are_rejected},
    {"log.dirs", test_log_dirs},
    {"retention precedence ms > minutes > hours", test_retention_precedence_ms_minutes_hours},
    {"roll, flush and ZooKeeper timeouts", test_roll_flush_and_zookeeper_timeouts},
    {"zookeeper.connect", test_zookeeper_connect},
    {"a broker of a cluster needs its broker.id", test_cluster_needs_a_broker_id},
    {"broker.id rules", test_broker_id_rules},
    {"cross-key checks", test_cross_key_checks},
    {"connections.max.idle.ms", test_connections_max_idle_ms},
    {"queued.max.request.bytes", test_queued_max_request_bytes},
    {"a key given twice keeps the later value", test_a_key_given_twice_keeps_the_later_value},
    {"NUL byte is rejected", test_nul_byte_is_rejected},
    {"overlong line is rejected", test_overlong_line_is_rejected},
    {"oversized file is rejected", test_oversized_file_is_rejected},
    {"load reads a file and names it in errors", test_load_reads_a_file_and_names_it_in_errors},
    {"describe entries", test_describe_entries},
    {"dynamic broker configs", test_dynamic_configs},
    {"free is safe twice", test_free_is_safe_twice},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("broker-config", tests);
}
