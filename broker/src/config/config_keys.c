/* samsa-broker: server.properties' keys: the table of every key (type,
 * range, default), the keys Kafka knows that Samsa ignores, the lookups, the
 * DescribeConfigs view of one, and the messages that name one (see
 * config.h). */
#define _POSIX_C_SOURCE 200809L

#include "config/config_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ key table */

#define FIELD(f) offsetof(struct br_config, f)
#define I32 INT32_MIN, INT32_MAX
#define I64 INT64_MIN, INT64_MAX
#define AT_LEAST32(n) (n), INT32_MAX
#define AT_LEAST64(n) (n), INT64_MAX
#define NO_RANGE 0, 0
#define LONG_MAX_TEXT "9223372036854775807"

const struct key_def cfg_keys[BR_CFG__COUNT] = {
    [BR_CFG_BROKER_ID] = {"broker.id", K_INT, FIELD(broker_id), "-1", I32},
    [BR_CFG_BROKER_ID_GENERATION_ENABLE] = {"broker.id.generation.enable", K_BOOL,
                                            FIELD(broker_id_generation_enable), "true", NO_RANGE},
    [BR_CFG_RESERVED_BROKER_MAX_ID] = {"reserved.broker.max.id", K_INT,
                                       FIELD(reserved_broker_max_id), "1000", AT_LEAST32(0)},
    [BR_CFG_LISTENERS] = {"listeners", K_SPECIAL, 0, "PLAINTEXT://:9092", NO_RANGE},
    [BR_CFG_BROKER_RACK] = {"broker.rack", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_ADVERTISED_LISTENERS] = {"advertised.listeners", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_LISTENER_SECURITY_PROTOCOL_MAP] =
        {"listener.security.protocol.map", K_SPECIAL, 0,
         "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", NO_RANGE},
    [BR_CFG_INTER_BROKER_LISTENER_NAME] = {"inter.broker.listener.name", K_SPECIAL, 0, NULL,
                                           NO_RANGE},
    [BR_CFG_SECURITY_INTER_BROKER_PROTOCOL] = {"security.inter.broker.protocol", K_SPECIAL, 0,
                                               "PLAINTEXT", NO_RANGE},
    [BR_CFG_ADMIN_LISTENERS] = {"admin.listeners", K_SPECIAL, 0, "http://127.0.0.1:9095", NO_RANGE},
    [BR_CFG_ADMIN_AUTH_TOKEN] = {"admin.auth.token", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_ADMIN_MAX_CONNECTIONS] = {"admin.max.connections", K_INT,
                                      FIELD(admin_max_connections), "32", 1, 4096},
    [BR_CFG_ADMIN_STREAM_MAX_CLIENTS] = {"admin.stream.max.clients", K_INT,
                                         FIELD(admin_stream_max_clients), "8", 0, 1024},
    [BR_CFG_ADMIN_CONNECTIONS_MAX_IDLE_MS] = {"admin.connections.max.idle.ms", K_LONG,
                                              FIELD(admin_connections_max_idle_ms), "60000",
                                              AT_LEAST64(0)},
    [BR_CFG_ADMIN_STREAM_MAX_STALL_MS] = {"admin.stream.max.stall.ms", K_LONG,
                                          FIELD(admin_stream_max_stall_ms), "30000",
                                          AT_LEAST64(1000)},
    /* https admin listeners: Kafka's listener keys under admin. (checked
     * in config_listeners.c, read by admin/server.c) */
    [BR_CFG_ADMIN_SSL_KEYSTORE_LOCATION] = {"admin.ssl.keystore.location", K_SPECIAL, 0, NULL,
                                            NO_RANGE},
    [BR_CFG_ADMIN_SSL_TRUSTSTORE_LOCATION] = {"admin.ssl.truststore.location", K_SPECIAL, 0,
                                              NULL, NO_RANGE},
    [BR_CFG_ADMIN_SSL_CLIENT_AUTH] = {"admin.ssl.client.auth", K_SPECIAL, 0, "none", NO_RANGE},
    [BR_CFG_LOG_LEVEL] = {"log.level", K_LOGLEVEL, FIELD(log_level), "info", NO_RANGE},
    [BR_CFG_SOCKET_REQUEST_MAX_BYTES] = {"socket.request.max.bytes", K_INT,
                                         FIELD(socket_request_max_bytes), "104857600",
                                         AT_LEAST32(1)},
    /* Kafka 2.0's SocketServer ConnectionQuotas: 0 only with overrides
     * (cfg_resolve_listeners), as KafkaConfig requires */
    [BR_CFG_MAX_CONNECTIONS_PER_IP] = {"max.connections.per.ip", K_INT,
                                       FIELD(max_connections_per_ip), "2147483647",
                                       AT_LEAST32(0)},
    [BR_CFG_MAX_CONNECTIONS_PER_IP_OVERRIDES] = {"max.connections.per.ip.overrides", K_SPECIAL, 0,
                                                 "", NO_RANGE},
    [BR_CFG_MAX_CONNECTIONS] = {"max.connections", K_INT, FIELD(max_connections), "2147483647",
                                AT_LEAST32(0)},
    /* -1: never close idle connections (Kafka's Selector treats any
     * negative value so); 0 is refused in cross_checks */
    [BR_CFG_CONNECTIONS_MAX_IDLE_MS] = {"connections.max.idle.ms", K_LONG,
                                        FIELD(connections_max_idle_ms), "600000", AT_LEAST64(-1)},
    /* Kafka's default is -1, unbounded; ours bounds the input buffers. -1 and
     * 0 mean no limit, as in Kafka; unset, it is raised to
     * socket.request.max.bytes when that is larger (resolve_effective) */
    [BR_CFG_QUEUED_MAX_REQUEST_BYTES] = {"queued.max.request.bytes", K_LONG,
                                         FIELD(queued_max_request_bytes), "104857600",
                                         AT_LEAST64(-1)},
    /* KIP-541 (Kafka 2.5): a ceiling on every Fetch response, whatever the
     * consumer asks. 1 MiB, not Kafka's 55 MiB: one response of 100 B
     * messages then holds about 10,000, a tenth of the 100,000 queued
     * messages at which librdkafka's default consumer stops fetching until
     * its next wake-up (up to 1 s); broker/README.md has the measurement
     * (tests/perf/consumer-defaults) */
    [BR_CFG_FETCH_MAX_BYTES] = {"fetch.max.bytes", K_INT, FIELD(fetch_max_bytes), "1048576",
                                AT_LEAST32(1024)},
    /* Samsa's own: what a response may take in memory while built and
     * encoded (see config.h) */
    [BR_CFG_RESPONSE_MAX_BYTES] = {"response.max.bytes", K_INT, FIELD(response_max_bytes),
                                   "67108864", AT_LEAST32(1024)},
    [BR_CFG_MESSAGE_MAX_BYTES] = {"message.max.bytes", K_INT, FIELD(message_max_bytes), "1000012",
                                  AT_LEAST32(0)},
    [BR_CFG_AUTO_CREATE_TOPICS_ENABLE] = {"auto.create.topics.enable", K_BOOL,
                                          FIELD(auto_create_topics_enable), "true", NO_RANGE},
    [BR_CFG_NUM_PARTITIONS] = {"num.partitions", K_INT, FIELD(num_partitions), "1", AT_LEAST32(1)},
    [BR_CFG_DEFAULT_REPLICATION_FACTOR] = {"default.replication.factor", K_SHORT,
                                           FIELD(default_replication_factor), "1", 1, INT16_MAX},
    [BR_CFG_DELETE_TOPIC_ENABLE] = {"delete.topic.enable", K_BOOL, FIELD(delete_topic_enable),
                                    "true", NO_RANGE},
    [BR_CFG_COMPRESSION_TYPE] = {"compression.type", K_COMPRESSION, FIELD(compression_type),
                                 "producer", NO_RANGE},
    [BR_CFG_CONTROLLED_SHUTDOWN_ENABLE] = {"controlled.shutdown.enable", K_BOOL,
                                           FIELD(controlled_shutdown_enable), "true", NO_RANGE},
    [BR_CFG_CONTROLLED_SHUTDOWN_MAX_RETRIES] = {"controlled.shutdown.max.retries", K_INT,
                                                FIELD(controlled_shutdown_max_retries), "3",
                                                AT_LEAST32(0)},
    [BR_CFG_CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS] = {"controlled.shutdown.retry.backoff.ms", K_LONG,
                                                     FIELD(controlled_shutdown_retry_backoff_ms),
                                                     "5000", AT_LEAST64(0)},
    [BR_CFG_CONTROLLER_SOCKET_TIMEOUT_MS] = {"controller.socket.timeout.ms", K_INT,
                                             FIELD(controller_socket_timeout_ms), "30000",
                                             AT_LEAST32(1)},
    [BR_CFG_AUTO_LEADER_REBALANCE_ENABLE] = {"auto.leader.rebalance.enable", K_BOOL,
                                             FIELD(auto_leader_rebalance_enable), "true",
                                             NO_RANGE},
    [BR_CFG_LEADER_IMBALANCE_PER_BROKER_PERCENTAGE] = {"leader.imbalance.per.broker.percentage",
                                                       K_INT,
                                                       FIELD(leader_imbalance_per_broker_percentage),
                                                       "10", 0, 100},
    [BR_CFG_LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS] = {
        "leader.imbalance.check.interval.seconds", K_LONG,
        FIELD(leader_imbalance_check_interval_seconds), "300", AT_LEAST64(1)},

    [BR_CFG_LOG_DIR] = {"log.dir", K_SPECIAL, 0, "/tmp/kafka-logs", NO_RANGE},
    [BR_CFG_LOG_DIRS] = {"log.dirs", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_LOG_SEGMENT_BYTES] = {"log.segment.bytes", K_INT, FIELD(log_segment_bytes),
                                  "1073741824", AT_LEAST32(14)},
    [BR_CFG_LOG_ROLL_MS] = {"log.roll.ms", K_NUMBER, 0, NULL, AT_LEAST64(1)},
    [BR_CFG_LOG_ROLL_HOURS] = {"log.roll.hours", K_NUMBER, 0, "168", AT_LEAST32(1)},
    [BR_CFG_LOG_ROLL_JITTER_MS] = {"log.roll.jitter.ms", K_NUMBER, 0, NULL, AT_LEAST64(0)},
    [BR_CFG_LOG_ROLL_JITTER_HOURS] = {"log.roll.jitter.hours", K_NUMBER, 0, "0", AT_LEAST32(0)},
    [BR_CFG_LOG_INDEX_INTERVAL_BYTES] = {"log.index.interval.bytes", K_INT,
                                         FIELD(log_index_interval_bytes), "4096", AT_LEAST32(0)},
    [BR_CFG_LOG_INDEX_SIZE_MAX_BYTES] = {"log.index.size.max.bytes", K_INT,
                                         FIELD(log_index_size_max_bytes), "10485760",
                                         AT_LEAST32(4)},
    [BR_CFG_LOG_FLUSH_INTERVAL_MESSAGES] = {"log.flush.interval.messages", K_LONG,
                                            FIELD(log_flush_interval_messages), LONG_MAX_TEXT,
                                            AT_LEAST64(1)},
    [BR_CFG_LOG_FLUSH_INTERVAL_MS] = {"log.flush.interval.ms", K_NUMBER, 0, NULL, AT_LEAST64(0)},
    [BR_CFG_LOG_FLUSH_SCHEDULER_INTERVAL_MS] = {"log.flush.scheduler.interval.ms", K_LONG,
                                                FIELD(log_flush_scheduler_interval_ms),
                                                LONG_MAX_TEXT, AT_LEAST64(1)},
    [BR_CFG_LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS] =
        {"log.flush.offset.checkpoint.interval.ms", K_INT,
         FIELD(log_flush_offset_checkpoint_interval_ms), "60000", AT_LEAST32(0)},
    [BR_CFG_LOG_FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS] =
        {"log.flush.start.offset.checkpoint.interval.ms", K_INT,
         FIELD(log_flush_start_offset_checkpoint_interval_ms), "60000", AT_LEAST32(0)},
    [BR_CFG_LOG_RETENTION_HOURS] = {"log.retention.hours", K_NUMBER, 0, "168", I32},
    [BR_CFG_LOG_RETENTION_MINUTES] = {"log.retention.minutes", K_NUMBER, 0, NULL, I32},
    [BR_CFG_LOG_RETENTION_MS] = {"log.retention.ms", K_NUMBER, 0, NULL, I64},
    [BR_CFG_LOG_RETENTION_BYTES] = {"log.retention.bytes", K_LONG, FIELD(log_retention_bytes), "-1",
                                    I64},
    [BR_CFG_LOG_RETENTION_CHECK_INTERVAL_MS] = {"log.retention.check.interval.ms", K_LONG,
                                                FIELD(log_retention_check_interval_ms), "300000",
                                                AT_LEAST64(1)},
    [BR_CFG_LOG_SEGMENT_DELETE_DELAY_MS] = {"log.segment.delete.delay.ms", K_LONG,
                                            FIELD(log_segment_delete_delay_ms), "60000",
                                            AT_LEAST64(0)},
    [BR_CFG_LOG_CLEANUP_POLICY] = {"log.cleanup.policy", K_CLEANUP, FIELD(log_cleanup_policy),
                                   "delete", NO_RANGE},
    [BR_CFG_LOG_CLEANER_ENABLE] = {"log.cleaner.enable", K_BOOL, FIELD(log_cleaner_enable), "true",
                                   NO_RANGE},
    [BR_CFG_LOG_CLEANER_THREADS] = {"log.cleaner.threads", K_INT, FIELD(log_cleaner_threads), "1",
                                    AT_LEAST32(0)},
    [BR_CFG_LOG_CLEANER_BACKOFF_MS] = {"log.cleaner.backoff.ms", K_LONG,
                                       FIELD(log_cleaner_backoff_ms), "15000", AT_LEAST64(0)},
    [BR_CFG_LOG_CLEANER_MIN_CLEANABLE_RATIO] = {"log.cleaner.min.cleanable.ratio", K_RATIO,
                                                FIELD(log_cleaner_min_cleanable_ratio), "0.5",
                                                NO_RANGE},
    [BR_CFG_LOG_CLEANER_DELETE_RETENTION_MS] = {"log.cleaner.delete.retention.ms", K_LONG,
                                                FIELD(log_cleaner_delete_retention_ms), "86400000",
                                                AT_LEAST64(0)},
    [BR_CFG_LOG_CLEANER_MIN_COMPACTION_LAG_MS] = {"log.cleaner.min.compaction.lag.ms", K_LONG,
                                                  FIELD(log_cleaner_min_compaction_lag_ms), "0",
                                                  AT_LEAST64(0)},
    [BR_CFG_LOG_MESSAGE_TIMESTAMP_TYPE] = {"log.message.timestamp.type", K_TSTYPE,
                                           FIELD(log_message_timestamp_type), "CreateTime",
                                           NO_RANGE},
    [BR_CFG_LOG_MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS] =
        {"log.message.timestamp.difference.max.ms", K_LONG,
         FIELD(log_message_timestamp_difference_max_ms), LONG_MAX_TEXT, AT_LEAST64(0)},
    [BR_CFG_LOG_MESSAGE_FORMAT_VERSION] = {"log.message.format.version", K_FORMAT,
                                           FIELD(log_message_format_version), "2.0-IV1", NO_RANGE},
    [BR_CFG_LOG_MESSAGE_DOWNCONVERSION_ENABLE] = {"log.message.downconversion.enable", K_BOOL,
                                                  FIELD(log_message_downconversion_enable), "true",
                                                  NO_RANGE},
    [BR_CFG_LOG_PREALLOCATE] = {"log.preallocate", K_BOOL, FIELD(log_preallocate), "false",
                                NO_RANGE},
    /* Samsa's own: the budget of open segment files; unset = half the
     * descriptor limit, which only start-up knows */
    [BR_CFG_LOG_OPEN_FILES_MAX] = {"log.open.files.max", K_NUMBER, 0, NULL, AT_LEAST32(1)},
    /* Samsa's own: write-behind (storage/log_manager.h) */
    [BR_CFG_LOG_WRITEBEHIND_ENABLE] = {"log.writebehind.enable", K_BOOL,
                                       FIELD(log_writebehind_enable), "true", NO_RANGE},
    [BR_CFG_LOG_WRITEBEHIND_WINDOW_BYTES] = {"log.writebehind.window.bytes", K_LONG,
                                             FIELD(log_writebehind_window_bytes), "67108864",
                                             AT_LEAST64(1048576)},
    [BR_CFG_LOG_WRITEBEHIND_BUDGET_BYTES] = {"log.writebehind.budget.bytes", K_LONG,
                                             FIELD(log_writebehind_budget_bytes), "1073741824",
                                             AT_LEAST64(4194304)},

    [BR_CFG_UNCLEAN_LEADER_ELECTION_ENABLE] = {"unclean.leader.election.enable", K_BOOL,
                                               FIELD(unclean_leader_election_enable), "false",
                                               NO_RANGE},
    [BR_CFG_MIN_INSYNC_REPLICAS] = {"min.insync.replicas", K_INT, FIELD(min_insync_replicas), "1",
                                    AT_LEAST32(1)},
    [BR_CFG_REPLICA_LAG_TIME_MAX_MS] = {"replica.lag.time.max.ms", K_LONG,
                                        FIELD(replica_lag_time_max_ms), "10000", AT_LEAST64(1)},
    [BR_CFG_REPLICA_FETCH_MAX_BYTES] = {"replica.fetch.max.bytes", K_INT,
                                        FIELD(replica_fetch_max_bytes), "1048576", AT_LEAST32(0)},
    [BR_CFG_REPLICA_FETCH_MIN_BYTES] = {"replica.fetch.min.bytes", K_INT,
                                        FIELD(replica_fetch_min_bytes), "1", AT_LEAST32(0)},
    [BR_CFG_REPLICA_FETCH_WAIT_MAX_MS] = {"replica.fetch.wait.max.ms", K_INT,
                                          FIELD(replica_fetch_wait_max_ms), "500", AT_LEAST32(0)},
    [BR_CFG_REPLICA_FETCH_BACKOFF_MS] = {"replica.fetch.backoff.ms", K_INT,
                                         FIELD(replica_fetch_backoff_ms), "1000", AT_LEAST32(0)},
    [BR_CFG_REPLICA_FETCH_RESPONSE_MAX_BYTES] = {"replica.fetch.response.max.bytes", K_INT,
                                                 FIELD(replica_fetch_response_max_bytes),
                                                 "10485760", AT_LEAST32(0)},
    [BR_CFG_REPLICA_SOCKET_TIMEOUT_MS] = {"replica.socket.timeout.ms", K_INT,
                                          FIELD(replica_socket_timeout_ms), "30000", AT_LEAST32(1)},
    [BR_CFG_REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS] =
        {"replica.high.watermark.checkpoint.interval.ms", K_LONG,
         FIELD(replica_high_watermark_checkpoint_interval_ms), "5000", AT_LEAST64(1)},
    [BR_CFG_NUM_REPLICA_FETCHERS] = {"num.replica.fetchers", K_INT, FIELD(num_replica_fetchers),
                                     "1", AT_LEAST32(1)},

    [BR_CFG_OFFSETS_TOPIC_NUM_PARTITIONS] = {"offsets.topic.num.partitions", K_INT,
                                             FIELD(offsets_topic_num_partitions), "50",
                                             AT_LEAST32(1)},
    [BR_CFG_OFFSETS_TOPIC_REPLICATION_FACTOR] = {"offsets.topic.replication.factor", K_SHORT,
                                                 FIELD(offsets_topic_replication_factor), "3", 1,
                                                 INT16_MAX},
    [BR_CFG_OFFSETS_RETENTION_MINUTES] = {"offsets.retention.minutes", K_INT,
                                          FIELD(offsets_retention_minutes), "10080", AT_LEAST32(1)},
    [BR_CFG_OFFSETS_RETENTION_CHECK_INTERVAL_MS] = {"offsets.retention.check.interval.ms", K_LONG,
                                                    FIELD(offsets_retention_check_interval_ms),
                                                    "600000", AT_LEAST64(1)},
    [BR_CFG_TRANSACTION_MAX_TIMEOUT_MS] = {"transaction.max.timeout.ms", K_INT,
                                           FIELD(transaction_max_timeout_ms), "900000",
                                           AT_LEAST32(1)},
    [BR_CFG_TRANSACTION_ABORT_CLEANUP_INTERVAL_MS] = {
        "transaction.abort.timed.out.transaction.cleanup.interval.ms", K_INT,
        FIELD(transaction_abort_cleanup_interval_ms), "60000", AT_LEAST32(1)},
    [BR_CFG_TRANSACTIONAL_ID_EXPIRATION_MS] = {"transactional.id.expiration.ms", K_INT,
                                               FIELD(transactional_id_expiration_ms), "604800000",
                                               AT_LEAST32(1)},
    [BR_CFG_TRANSACTION_STATE_LOG_NUM_PARTITIONS] = {"transaction.state.log.num.partitions",
                                                     K_INT,
                                                     FIELD(transaction_state_log_num_partitions),
                                                     "50", AT_LEAST32(1)},
    [BR_CFG_TRANSACTION_STATE_LOG_REPLICATION_FACTOR] = {
        "transaction.state.log.replication.factor", K_SHORT,
        FIELD(transaction_state_log_replication_factor), "3", 1, INT16_MAX},
    [BR_CFG_TRANSACTION_STATE_LOG_SEGMENT_BYTES] = {"transaction.state.log.segment.bytes", K_INT,
                                                    FIELD(transaction_state_log_segment_bytes),
                                                    "104857600", AT_LEAST32(1)},
    [BR_CFG_TRANSACTION_STATE_LOG_MIN_ISR] = {"transaction.state.log.min.isr", K_INT,
                                              FIELD(transaction_state_log_min_isr), "2",
                                              AT_LEAST32(1)},
    [BR_CFG_OFFSET_METADATA_MAX_BYTES] = {"offset.metadata.max.bytes", K_INT,
                                          FIELD(offset_metadata_max_bytes), "4096", AT_LEAST32(0)},
    [BR_CFG_OFFSETS_COMMIT_TIMEOUT_MS] = {"offsets.commit.timeout.ms", K_INT,
                                          FIELD(offsets_commit_timeout_ms), "5000", AT_LEAST32(1)},
    [BR_CFG_GROUP_INITIAL_REBALANCE_DELAY_MS] = {"group.initial.rebalance.delay.ms", K_INT,
                                                 FIELD(group_initial_rebalance_delay_ms), "3000",
                                                 AT_LEAST32(0)},
    [BR_CFG_GROUP_MIN_SESSION_TIMEOUT_MS] = {"group.min.session.timeout.ms", K_INT,
                                             FIELD(group_min_session_timeout_ms), "6000",
                                             AT_LEAST32(0)},
    [BR_CFG_GROUP_MAX_SESSION_TIMEOUT_MS] = {"group.max.session.timeout.ms", K_INT,
                                             FIELD(group_max_session_timeout_ms), "300000",
                                             AT_LEAST32(0)},
    /* Kafka 2.0's KafkaConfig (deprecated defaults, still read in 2.0) */
    [BR_CFG_QUOTA_PRODUCER_DEFAULT] = {"quota.producer.default", K_LONG,
                                       FIELD(quota_producer_default), LONG_MAX_TEXT,
                                       AT_LEAST64(1)},
    [BR_CFG_QUOTA_CONSUMER_DEFAULT] = {"quota.consumer.default", K_LONG,
                                       FIELD(quota_consumer_default), LONG_MAX_TEXT,
                                       AT_LEAST64(1)},
    [BR_CFG_QUOTA_WINDOW_NUM] = {"quota.window.num", K_INT, FIELD(quota_window_num), "11",
                                 AT_LEAST32(1)},
    [BR_CFG_QUOTA_WINDOW_SIZE_SECONDS] = {"quota.window.size.seconds", K_INT,
                                          FIELD(quota_window_size_s), "1", AT_LEAST32(1)},
    /* Samsa's: the standalone broker's quotas (quota/quota.h's format) */
    [BR_CFG_QUOTA_CONFIG_FILE] = {"quota.config.file", K_SPECIAL, 0, NULL, NO_RANGE},
    /* Kafka 2.0's DynamicConfig.Broker (dynamic) and KafkaConfig
     * (replication.quota.window.*, static) */
    [BR_CFG_LEADER_REPLICATION_THROTTLED_RATE] = {"leader.replication.throttled.rate", K_LONG,
                                                  FIELD(leader_replication_throttled_rate),
                                                  LONG_MAX_TEXT, AT_LEAST64(0)},
    [BR_CFG_FOLLOWER_REPLICATION_THROTTLED_RATE] = {"follower.replication.throttled.rate", K_LONG,
                                                    FIELD(follower_replication_throttled_rate),
                                                    LONG_MAX_TEXT, AT_LEAST64(0)},
    [BR_CFG_REPLICATION_QUOTA_WINDOW_NUM] = {"replication.quota.window.num", K_INT,
                                             FIELD(replication_quota_window_num), "11",
                                             AT_LEAST32(1)},
    [BR_CFG_REPLICATION_QUOTA_WINDOW_SIZE_SECONDS] = {"replication.quota.window.size.seconds",
                                                      K_INT,
                                                      FIELD(replication_quota_window_size_s), "1",
                                                      AT_LEAST32(1)},

    [BR_CFG_ZOOKEEPER_CONNECT] = {"zookeeper.connect", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_ZOOKEEPER_SESSION_TIMEOUT_MS] = {"zookeeper.session.timeout.ms", K_INT,
                                             FIELD(zookeeper_session_timeout_ms), "6000",
                                             AT_LEAST32(1)},
    [BR_CFG_ZOOKEEPER_CONNECTION_TIMEOUT_MS] = {"zookeeper.connection.timeout.ms", K_NUMBER, 0,
                                                NULL, AT_LEAST32(1)},
    /* Samsa's: Kafka 2.0 fixes it at 15 minutes
     * (ZkNodeChangeNotificationListener.changeExpirationMs) */
    [BR_CFG_CONFIG_CHANGE_EXPIRATION_MS] = {"config.change.expiration.ms", K_LONG,
                                            FIELD(config_change_expiration_ms), "900000",
                                            AT_LEAST64(1)},
    [BR_CFG_SSL_KEYSTORE_TYPE] = {"ssl.keystore.type", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SSL_KEYSTORE_LOCATION] = {"ssl.keystore.location", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SSL_KEYSTORE_PASSWORD] = {"ssl.keystore.password", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SSL_KEYSTORE_KEY] = {"ssl.keystore.key", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SSL_KEYSTORE_CERTIFICATE_CHAIN] = {"ssl.keystore.certificate.chain", K_SPECIAL, 0,
                                               NULL, NO_RANGE},
    [BR_CFG_SSL_KEY_PASSWORD] = {"ssl.key.password", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SSL_TRUSTSTORE_TYPE] = {"ssl.truststore.type", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SSL_TRUSTSTORE_LOCATION] = {"ssl.truststore.location", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SSL_TRUSTSTORE_PASSWORD] = {"ssl.truststore.password", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SSL_TRUSTSTORE_CERTIFICATES] = {"ssl.truststore.certificates", K_SPECIAL, 0, NULL,
                                            NO_RANGE},
    [BR_CFG_SSL_CLIENT_AUTH] = {"ssl.client.auth", K_SPECIAL, 0, "none", NO_RANGE},
    [BR_CFG_SSL_ENABLED_PROTOCOLS] = {"ssl.enabled.protocols", K_SPECIAL, 0, "TLSv1.2,TLSv1.3",
                                      NO_RANGE},
    [BR_CFG_SSL_CIPHER_SUITES] = {"ssl.cipher.suites", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_AUTHORIZER_CLASS_NAME] = {"authorizer.class.name", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SUPER_USERS] = {"super.users", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_ALLOW_EVERYONE_IF_NO_ACL_FOUND] = {"allow.everyone.if.no.acl.found", K_BOOL,
                                               FIELD(allow_everyone_if_no_acl_found), "false",
                                               NO_RANGE},
    [BR_CFG_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM] = {"ssl.endpoint.identification.algorithm",
                                                      K_SPECIAL, 0, "https", NO_RANGE},
    [BR_CFG_SASL_ENABLED_MECHANISMS] = {"sasl.enabled.mechanisms", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SASL_JAAS_CONFIG] = {"sasl.jaas.config", K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SASL_MECHANISM_INTER_BROKER_PROTOCOL] = {"sasl.mechanism.inter.broker.protocol",
                                                     K_SPECIAL, 0, NULL, NO_RANGE},
    [BR_CFG_SASL_SCRAM_CREDENTIALS_FILE] = {"sasl.scram.credentials.file", K_SPECIAL, 0, NULL,
                                            NO_RANGE},
    [BR_CFG_SASL_SERVER_MAX_RECEIVE_SIZE] = {"sasl.server.max.receive.size", K_INT,
                                             FIELD(sasl_server_max_receive_size), "524288", 64,
                                             INT32_MAX},
    [BR_CFG_CONNECTION_FAILED_AUTHENTICATION_DELAY_MS] = {
        "connection.failed.authentication.delay.ms", K_LONG,
        FIELD(connection_failed_authentication_delay_ms), "100", 0, 60000},
    [BR_CFG_CONNECTIONS_MAX_UNAUTHENTICATED_MS] = {"connections.max.unauthenticated.ms", K_LONG,
                                                   FIELD(connections_max_unauthenticated_ms),
                                                   "10000", 0, INT64_MAX},
};

/*
 * Kafka keys found in shipped and common server.properties files that Samsa
 * accepts without using: threads and queues it does not have (one reactor),
 * socket buffer sizes, the transaction log (no transactions), the cleaner's
 * memory tuning, the log-dir movers' quotas, metrics reporters, the inter-broker protocol version,
 * purgatory tuning, ZooKeeper ACLs.
 */
static const char *const ignored_keys[] = {
    "alter.log.dirs.replication.quota.window.num",
    "alter.log.dirs.replication.quota.window.size.seconds",
    "background.threads",
    "delete.records.purgatory.purge.interval.requests",
    "fetch.purgatory.purge.interval.requests",
    "inter.broker.protocol.version",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size",
    "log.cleaner.io.max.bytes.per.second",
    "max.incremental.fetch.session.cache.slots",
    "metric.reporters",
    "metrics.num.samples",
    "metrics.recording.level",
    "metrics.sample.window.ms",
    "num.io.threads",
    "num.network.threads",
    "num.recovery.threads.per.data.dir",
    "num.replica.alter.log.dirs.threads",
    "offsets.commit.required.acks",
    "offsets.load.buffer.size",
    "offsets.topic.compression.codec",
    "offsets.topic.segment.bytes",
    "producer.purgatory.purge.interval.requests",
    "queued.max.requests",
    "replica.socket.receive.buffer.bytes",
    "request.timeout.ms",
    "socket.receive.buffer.bytes",
    "socket.send.buffer.bytes",
    "transaction.remove.expired.transaction.cleanup.interval.ms",
    "transaction.state.log.load.buffer.size",
    "zookeeper.max.in.flight.requests",
    "zookeeper.set.acl",
    "zookeeper.sync.time.ms",
};

/* ------------------------------------------------------------ key lookup */

int br_config_find(const char *name)
{
    for (int k = 0; k < BR_CFG__COUNT; k++) {
        if (strcmp(cfg_keys[k].name, name) == 0) {
            return k;
        }
    }
    return -1;
}

bool br_config_key_ignored(const char *name)
{
    for (size_t i = 0; i < sizeof ignored_keys / sizeof ignored_keys[0]; i++) {
        if (strcmp(ignored_keys[i], name) == 0) {
            return true;
        }
    }
    return false;
}

const char *br_config_key_name(enum br_config_key k)
{
    if ((int)k < 0 || k >= BR_CFG__COUNT) {
        return NULL;
    }
    return cfg_keys[k].name;
}

const char *br_config_listener_value(const struct br_config *c, const char *listener,
                                     enum br_config_key k)
{
    return br_config_listener_mechanism_value(c, listener, "", k);
}

const char *br_config_listener_mechanism_value(const struct br_config *c, const char *listener,
                                               const char *mechanism, enum br_config_key k)
{
    for (size_t i = 0; i < c->n_listener_overrides && mechanism[0] != '\0'; i++) {
        const struct br_listener_override *o = &c->listener_overrides[i];
        if (o->key == (int)k && strcmp(o->listener, listener) == 0 &&
            strcmp(o->mechanism, mechanism) == 0) {
            return o->value;
        }
    }
    for (size_t i = 0; i < c->n_listener_overrides; i++) {
        const struct br_listener_override *o = &c->listener_overrides[i];
        if (o->key == (int)k && strcmp(o->listener, listener) == 0 && o->mechanism[0] == '\0') {
            return o->value;
        }
    }
    if ((int)k < 0 || k >= BR_CFG__COUNT) {
        return NULL;
    }
    return c->raw[k] != NULL ? c->raw[k] : cfg_keys[k].def;
}

bool br_config_is_set(const struct br_config *c, enum br_config_key k)
{
    return (int)k >= 0 && k < BR_CFG__COUNT && c->raw[k] != NULL;
}

void br_config_entry(const struct br_config *c, enum br_config_key k, struct br_config_entry *out)
{
    memset(out, 0, sizeof *out);
    if ((int)k < 0 || k >= BR_CFG__COUNT) {
        return;
    }
    out->name = cfg_keys[k].name;
    out->read_only = true; /* no dynamic broker configs */
    out->sensitive = k == BR_CFG_ADMIN_AUTH_TOKEN || k == BR_CFG_SASL_JAAS_CONFIG ||
                     k == BR_CFG_SSL_KEYSTORE_PASSWORD ||
                     k == BR_CFG_SSL_KEYSTORE_KEY || k == BR_CFG_SSL_KEY_PASSWORD ||
                     k == BR_CFG_SSL_TRUSTSTORE_PASSWORD;
    if (out->sensitive) {
        out->value = NULL;
        out->source = c->raw[k] != NULL ? BR_CONFIG_SOURCE_STATIC_BROKER : BR_CONFIG_SOURCE_DEFAULT;
    } else if (c->raw[k] != NULL) {
        out->value = c->raw[k];
        out->source = BR_CONFIG_SOURCE_STATIC_BROKER;
    } else {
        out->value = cfg_keys[k].def;
        out->source = BR_CONFIG_SOURCE_DEFAULT;
    }
}

/* "server.properties:12: ", "--override ", or "" for a default. */
static void where(const struct load *ld, enum br_config_key k, char *buf, size_t buflen)
{
    if (ld->c->raw[k] == NULL) {
        (void)snprintf(buf, buflen, "%s", "");
    } else if (ld->origin[k].line == 0) {
        (void)snprintf(buf, buflen, "--override ");
    } else {
        (void)snprintf(buf, buflen, "%s:%u: ", ld->name, ld->origin[k].line);
    }
}

/* Fails key k: "<where><key>: <message>". Returns KP_ERR_INVALID_CONFIG. */
__attribute__((format(printf, 3, 4))) int cfg_key_error(struct load *ld, enum br_config_key k,
                                                           const char *fmt, ...)
{
    char at[256];
    char what[512];
    where(ld, k, at, sizeof at);
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    cfg_set_msg(ld->err, ld->errlen, "%s%s: %s", at, cfg_keys[k].name, what);
    return KP_ERR_INVALID_CONFIG;
}

/* The key's text: the operator's value, else the default; NULL for null. */
const char *cfg_text_of(const struct load *ld, enum br_config_key k)
{
    return ld->c->raw[k] != NULL ? ld->c->raw[k] : cfg_keys[k].def;
}
