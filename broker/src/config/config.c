/* samsa-broker: server.properties parsing and the typed configuration (see config.h). */
#define _POSIX_C_SOURCE 200809L

#include "config/config.h"
#include "config/properties.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"

/* ------------------------------------------------------------ key table */

enum kind {
    K_INT,         /* int32_t field */
    K_SHORT,       /* int16_t field */
    K_LONG,        /* int64_t field */
    K_BOOL,        /* bool field */
    K_RATIO,       /* double field, [0, 1] */
    K_CLEANUP,     /* unsigned field: enum br_cleanup_policy flags */
    K_COMPRESSION, /* int field: enum br_compression */
    K_TSTYPE,      /* int field: enum br_timestamp_type */
    K_LOGLEVEL,    /* int field: enum br_level */
    K_FORMAT,      /* char[BR_FORMAT_VERSION_MAX + 1] field */
    K_NUMBER,      /* a number (range checked here) that resolve() combines */
    K_SPECIAL,     /* parsed and checked by resolve() alone */
};

struct key_def {
    const char *name;
    enum kind kind;
    size_t offset;   /* of the typed field, for the kinds that have one */
    const char *def; /* the default as text; NULL = null */
    int64_t min;     /* range of the numeric kinds */
    int64_t max;
};

#define FIELD(f) offsetof(struct br_config, f)
#define I32 INT32_MIN, INT32_MAX
#define I64 INT64_MIN, INT64_MAX
#define AT_LEAST32(n) (n), INT32_MAX
#define AT_LEAST64(n) (n), INT64_MAX
#define NO_RANGE 0, 0
#define LONG_MAX_TEXT "9223372036854775807"

static const struct key_def keys[BR_CFG__COUNT] = {
    [BR_CFG_BROKER_ID] = {"broker.id", K_INT, FIELD(broker_id), "-1", I32},
    [BR_CFG_BROKER_ID_GENERATION_ENABLE] = {"broker.id.generation.enable", K_BOOL,
                                            FIELD(broker_id_generation_enable), "true", NO_RANGE},
    [BR_CFG_RESERVED_BROKER_MAX_ID] = {"reserved.broker.max.id", K_INT,
                                       FIELD(reserved_broker_max_id), "1000", AT_LEAST32(0)},
    [BR_CFG_LISTENERS] = {"listeners", K_SPECIAL, 0, "PLAINTEXT://:9092", NO_RANGE},
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
    [BR_CFG_LOG_LEVEL] = {"log.level", K_LOGLEVEL, FIELD(log_level), "info", NO_RANGE},
    [BR_CFG_SOCKET_REQUEST_MAX_BYTES] = {"socket.request.max.bytes", K_INT,
                                         FIELD(socket_request_max_bytes), "104857600",
                                         AT_LEAST32(1)},
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
};

/*
 * Kafka keys found in shipped and common server.properties files that Samsa
 * accepts without using: threads and queues it does not have (one reactor),
 * socket buffer sizes, the transaction log (no transactions), the cleaner's
 * memory tuning, quotas, metrics reporters, the inter-broker protocol version,
 * purgatory tuning, ZooKeeper ACLs.
 */
static const char *const ignored_keys[] = {
    "alter.log.dirs.replication.quota.window.num",
    "alter.log.dirs.replication.quota.window.size.seconds",
    "background.threads",
    "broker.rack",
    "delete.records.purgatory.purge.interval.requests",
    "fetch.purgatory.purge.interval.requests",
    "inter.broker.protocol.version",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size",
    "log.cleaner.io.max.bytes.per.second",
    "max.connections.per.ip",
    "max.connections.per.ip.overrides",
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
    "quota.consumer.default",
    "quota.producer.default",
    "quota.window.num",
    "quota.window.size.seconds",
    "replica.socket.receive.buffer.bytes",
    "replication.quota.window.num",
    "replication.quota.window.size.seconds",
    "request.timeout.ms",
    "socket.receive.buffer.bytes",
    "socket.send.buffer.bytes",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms",
    "transaction.max.timeout.ms",
    "transaction.remove.expired.transaction.cleanup.interval.ms",
    "transaction.state.log.load.buffer.size",
    "transaction.state.log.min.isr",
    "transaction.state.log.num.partitions",
    "transaction.state.log.replication.factor",
    "transaction.state.log.segment.bytes",
    "transactional.id.expiration.ms",
    "zookeeper.max.in.flight.requests",
    "zookeeper.set.acl",
    "zookeeper.sync.time.ms",
};

/* Kafka's security protocols, and the one Samsa speaks. */
static const char *const security_protocols[] = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"};

/* ------------------------------------------------------------ small helpers */

static char *dup_string(const char *s)
{
    size_t n = strlen(s);
    char *p = kp_malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n + 1);
    }
    return p;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char to_upper(char c)
{
    return (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
}

/*
 * A value as messages show it: in quotes, at most 64 bytes, control bytes
 * and non-ASCII as '?', so that hostile input cannot forge log lines.
 */
static const char *quoted(const char *v, size_t n, char *buf, size_t buflen)
{
    size_t o = 0;
    if (buflen < 8) {
        return "";
    }
    buf[o++] = '\'';
    size_t i = 0;
    for (; i < n && i < 64 && o + 5 < buflen && v[i] != '\0'; i++) {
        unsigned char c = (unsigned char)v[i];
        buf[o++] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    if (i < n && v[i] != '\0') {
        buf[o++] = '.';
        buf[o++] = '.';
        buf[o++] = '.';
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

#define QUOTE_MAX 80
#define Q(v, buf) quoted((v), SIZE_MAX, (buf), sizeof(buf))

__attribute__((format(printf, 3, 4))) static void set_msg(char *msg, size_t msglen, const char *fmt,
                                                          ...)
{
    if (msg == NULL || msglen == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ value parsers */

int br_config_parse_long(const char *s, int64_t min, int64_t max, int64_t *out, char *msg,
                         size_t msglen)
{
    char q[QUOTE_MAX];
    const char *p = s;
    if (*p == '+' || *p == '-') {
        p++;
    }
    if (!is_digit(*p)) {
        set_msg(msg, msglen, "%s is not an integer", Q(s, q));
        return -1;
    }
    for (const char *d = p; *d != '\0'; d++) {
        if (!is_digit(*d)) {
            set_msg(msg, msglen, "%s is not an integer", Q(s, q));
            return -1;
        }
    }
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || v < min || v > max) {
        set_msg(msg, msglen, "%s is out of range: it must be between %lld and %lld", Q(s, q),
                (long long)min, (long long)max);
        return -1;
    }
    if (end == NULL || *end != '\0') {
        set_msg(msg, msglen, "%s is not an integer", Q(s, q));
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

int br_config_parse_bool(const char *s, bool *out, char *msg, size_t msglen)
{
    char q[QUOTE_MAX];
    if (strcasecmp(s, "true") == 0) {
        *out = true;
        return 0;
    }
    if (strcasecmp(s, "false") == 0) {
        *out = false;
        return 0;
    }
    set_msg(msg, msglen, "%s is not a boolean: it must be true or false", Q(s, q));
    return -1;
}

int br_config_parse_ratio(const char *s, double *out, char *msg, size_t msglen)
{
    char q[QUOTE_MAX];
    bool digit = false;
    for (const char *p = s; *p != '\0'; p++) {
        if (is_digit(*p)) {
            digit = true;
        } else if (*p != '.' && *p != 'e' && *p != 'E' && *p != '+' && *p != '-') {
            digit = false;
            break;
        }
    }
    if (!digit) {
        set_msg(msg, msglen, "%s is not a number", Q(s, q));
        return -1;
    }
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == NULL || *end != '\0' || errno == ERANGE) {
        set_msg(msg, msglen, "%s is not a number", Q(s, q));
        return -1;
    }
    if (!isfinite(v) || v < 0.0 || v > 1.0) {
        set_msg(msg, msglen, "%s is out of range: it must be between 0 and 1", Q(s, q));
        return -1;
    }
    *out = v;
    return 0;
}

int br_config_parse_cleanup_policy(const char *s, unsigned *out, char *msg, size_t msglen)
{
    char q[QUOTE_MAX];
    unsigned flags = 0;
    const char *p = s;
    while (*p != '\0') {
        const char *comma = strchr(p, ',');
        size_t n = comma != NULL ? (size_t)(comma - p) : strlen(p);
        const char *item = p;
        /* Kafka splits on \s*,\s* */
        while (n > 0 && (unsigned char)*item <= ' ') {
            item++;
            n--;
        }
        while (n > 0 && (unsigned char)item[n - 1] <= ' ') {
            n--;
        }
        if (n == 6 && memcmp(item, "delete", 6) == 0) {
            flags |= BR_CLEANUP_DELETE;
        } else if (n == 7 && memcmp(item, "compact", 7) == 0) {
            flags |= BR_CLEANUP_COMPACT;
        } else if (n > 0 || comma != NULL) {
            set_msg(msg, msglen, "%s is not a cleanup policy: it must be delete, compact or both",
                    quoted(item, n, q, sizeof q));
            return -1;
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    *out = flags;
    return 0;
}

static const char *const compression_names[] = {"uncompressed", "gzip", "snappy", "lz4", "zstd"};

int br_config_parse_compression(const char *s, int *out, char *msg, size_t msglen)
{
    char q[QUOTE_MAX];
    if (strcmp(s, "producer") == 0) {
        *out = BR_COMPRESSION_PRODUCER;
        return 0;
    }
    for (size_t i = 0; i < sizeof compression_names / sizeof compression_names[0]; i++) {
        if (strcmp(s, compression_names[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    }
    set_msg(msg, msglen,
            "%s is not a compression type: it must be one of producer, uncompressed, gzip, "
            "snappy, lz4, zstd",
            Q(s, q));
    return -1;
}

int br_config_parse_timestamp_type(const char *s, int *out, char *msg, size_t msglen)
{
    char q[QUOTE_MAX];
    if (strcmp(s, "CreateTime") == 0) {
        *out = BR_TIMESTAMP_CREATE_TIME;
        return 0;
    }
    if (strcmp(s, "LogAppendTime") == 0) {
        *out = BR_TIMESTAMP_LOG_APPEND_TIME;
        return 0;
    }
    set_msg(msg, msglen, "%s is not a timestamp type: it must be CreateTime or LogAppendTime",
            Q(s, q));
    return -1;
}

/* 1 to 3 digits; returns how many, 0 if none or too many. */
static size_t version_part(const char *p)
{
    size_t n = 0;
    while (n < 4 && is_digit(p[n])) {
        n++;
    }
    return n >= 1 && n <= 3 ? n : 0;
}

int br_config_parse_format_version(const char *s, char out[BR_FORMAT_VERSION_MAX + 1], char *msg,
                                   size_t msglen)
{
    char q[QUOTE_MAX];
    /* N.N[.N[.N]][-IVN] */
    const char *p = s;
    size_t parts = 0;
    size_t n = version_part(p);
    while (n > 0) {
        parts++;
        p += n;
        if (*p != '.' || parts == 4) {
            break;
        }
        p++;
        n = version_part(p);
        if (n == 0) {
            parts = 0; /* a dot not followed by digits */
            break;
        }
    }
    bool ok = parts >= 2;
    if (ok && p[0] == '-' && p[1] == 'I' && p[2] == 'V') {
        p += 3;
        n = version_part(p);
        ok = n > 0;
        p += n;
    }
    if (!ok || *p != '\0' || strlen(s) > BR_FORMAT_VERSION_MAX) {
        set_msg(msg, msglen, "%s is not a message format version such as 2.0-IV1 or 0.10.2",
                Q(s, q));
        return -1;
    }
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

const char *br_cleanup_policy_str(unsigned flags, char *buf, size_t buflen)
{
    const char *s = "";
    if ((flags & BR_CLEANUP_COMPACT) != 0 && (flags & BR_CLEANUP_DELETE) != 0) {
        s = "compact,delete";
    } else if ((flags & BR_CLEANUP_COMPACT) != 0) {
        s = "compact";
    } else if ((flags & BR_CLEANUP_DELETE) != 0) {
        s = "delete";
    }
    if (buflen > 0) {
        (void)snprintf(buf, buflen, "%s", s);
    }
    return buf;
}

const char *br_compression_str(int compression)
{
    if (compression == BR_COMPRESSION_PRODUCER) {
        return "producer";
    }
    if (compression >= 0 &&
        (size_t)compression < sizeof compression_names / sizeof compression_names[0]) {
        return compression_names[compression];
    }
    return "unknown";
}

const char *br_timestamp_type_str(int type)
{
    return type == BR_TIMESTAMP_LOG_APPEND_TIME ? "LogAppendTime" : "CreateTime";
}

/* ------------------------------------------------------------ key lookup */

int br_config_find(const char *name)
{
    for (int k = 0; k < BR_CFG__COUNT; k++) {
        if (strcmp(keys[k].name, name) == 0) {
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
    return keys[k].name;
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
    out->name = keys[k].name;
    out->read_only = true; /* no dynamic broker configs */
    out->sensitive = k == BR_CFG_ADMIN_AUTH_TOKEN;
    if (out->sensitive) {
        out->value = NULL;
        out->source = c->raw[k] != NULL ? BR_CONFIG_SOURCE_STATIC_BROKER : BR_CONFIG_SOURCE_DEFAULT;
    } else if (c->raw[k] != NULL) {
        out->value = c->raw[k];
        out->source = BR_CONFIG_SOURCE_STATIC_BROKER;
    } else {
        out->value = keys[k].def;
        out->source = BR_CONFIG_SOURCE_DEFAULT;
    }
}

/* ------------------------------------------------------------ loading */

/* Where a key got its value: a file line, or an override. */
struct origin {
    unsigned line; /* 0 for an override */
};

struct load {
    struct br_config *c;
    const char *name; /* the file, as messages call it */
    struct origin origin[BR_CFG__COUNT];
    char *err;
    size_t errlen;
};

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
__attribute__((format(printf, 3, 4))) static int key_error(struct load *ld, enum br_config_key k,
                                                           const char *fmt, ...)
{
    char at[256];
    char what[512];
    where(ld, k, at, sizeof at);
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    set_msg(ld->err, ld->errlen, "%s%s: %s", at, keys[k].name, what);
    return KP_ERR_INVALID_CONFIG;
}

/* The key's text: the operator's value, else the default; NULL for null. */
static const char *text_of(const struct load *ld, enum br_config_key k)
{
    return ld->c->raw[k] != NULL ? ld->c->raw[k] : keys[k].def;
}

/* Parses a numeric key within its table range: 1 with *v, 0 when null, or
 * KP_ERR_INVALID_CONFIG (negated as -1 after key_error has reported). */
static int number_of(struct load *ld, enum br_config_key k, int64_t *v)
{
    const char *s = text_of(ld, k);
    char msg[256];
    if (s == NULL) {
        return 0;
    }
    if (br_config_parse_long(s, keys[k].min, keys[k].max, v, msg, sizeof msg) != 0) {
        (void)key_error(ld, k, "%s", msg);
        return -1;
    }
    return 1;
}

/* Records key = value from `line` (0 for an override). */
static int assign(struct load *ld, const char *key, const char *value, unsigned line)
{
    char q[QUOTE_MAX];
    char at[256];
    if (line == 0) {
        (void)snprintf(at, sizeof at, "--override ");
    } else {
        (void)snprintf(at, sizeof at, "%s:%u: ", ld->name, line);
    }
    if (key[0] == '\0') {
        set_msg(ld->err, ld->errlen, "%sempty config key", at);
        return KP_ERR_INVALID_CONFIG;
    }
    int k = br_config_find(key);
    if (k < 0) {
        if (br_config_key_ignored(key)) {
            br_info("%s%s has no effect in Samsa; ignored", at, key);
            return 0;
        }
        set_msg(ld->err, ld->errlen, "%sunknown config key %s", at, Q(key, q));
        return KP_ERR_INVALID_CONFIG;
    }
    char *copy = dup_string(value);
    if (copy == NULL) {
        set_msg(ld->err, ld->errlen, "out of memory");
        return KP_E_NOMEM;
    }
    if (ld->c->raw[k] != NULL) {
        if (ld->origin[k].line != 0 && line != 0) {
            br_warn("%s%s is set again: the value of line %u is replaced", at, key,
                    ld->origin[k].line);
        }
        kp_free(ld->c->raw[k]);
    }
    ld->c->raw[k] = copy;
    ld->origin[k].line = line;
    return 0;
}

/* ---------------------------------------------------- java.util.Properties */

static int parse_file(struct load *ld, const char *buf, size_t len, char *line_buf)
{
    struct br_props lx;
    br_props_init(&lx, buf, len);
    for (;;) {
        char msg[256];
        char *key = NULL;
        char *value = NULL;
        unsigned line = 0;
        int r = br_props_next(&lx, line_buf, &key, &value, &line, msg, sizeof msg);
        if (r < 0) {
            set_msg(ld->err, ld->errlen, "%s:%s", ld->name, msg);
            return KP_ERR_INVALID_CONFIG;
        }
        if (r == 0) {
            return 0;
        }
        int rc = assign(ld, key, value, line);
        if (rc != 0) {
            return rc;
        }
    }
}

static int parse_override(struct load *ld, const char *ov, char *line_buf)
{
    char q[QUOTE_MAX];
    size_t n = strlen(ov);
    if (n > BR_CONFIG_MAX_LINE_BYTES) {
        set_msg(ld->err, ld->errlen, "--override longer than %zu bytes", BR_CONFIG_MAX_LINE_BYTES);
        return KP_ERR_INVALID_CONFIG;
    }
    memcpy(line_buf, ov, n + 1);
    char *eq = strchr(line_buf, '=');
    if (eq == NULL) {
        set_msg(ld->err, ld->errlen, "--override %s: expected key=value", Q(ov, q));
        return KP_ERR_INVALID_CONFIG;
    }
    *eq = '\0';
    return assign(ld, br_props_trim(line_buf), br_props_trim(eq + 1), 0);
}

/* ------------------------------------------------------------ generic keys */

static int parse_typed(struct load *ld, enum br_config_key k)
{
    const struct key_def *d = &keys[k];
    const char *s = text_of(ld, k);
    unsigned char *field = (unsigned char *)ld->c + d->offset;
    char msg[256];
    int64_t v = 0;
    int rc = 0;
    if (s == NULL || d->kind == K_SPECIAL) {
        return 0;
    }
    switch (d->kind) {
    case K_INT: {
        rc = br_config_parse_long(s, d->min, d->max, &v, msg, sizeof msg);
        int32_t x = (int32_t)v;
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_SHORT: {
        rc = br_config_parse_long(s, d->min, d->max, &v, msg, sizeof msg);
        int16_t x = (int16_t)v;
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_LONG:
        rc = br_config_parse_long(s, d->min, d->max, &v, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &v, sizeof v);
        }
        break;
    case K_NUMBER:
        rc = br_config_parse_long(s, d->min, d->max, &v, msg, sizeof msg);
        break;
    case K_BOOL: {
        bool b = false;
        rc = br_config_parse_bool(s, &b, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &b, sizeof b);
        }
        break;
    }
    case K_RATIO: {
        double x = 0;
        rc = br_config_parse_ratio(s, &x, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_CLEANUP: {
        unsigned x = 0;
        rc = br_config_parse_cleanup_policy(s, &x, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_COMPRESSION: {
        int x = 0;
        rc = br_config_parse_compression(s, &x, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_TSTYPE: {
        int x = 0;
        rc = br_config_parse_timestamp_type(s, &x, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_LOGLEVEL: {
        int x = br_logging_parse_level(s);
        if (x < 0) {
            char q[QUOTE_MAX];
            set_msg(msg, sizeof msg, "%s is not a log level: it must be debug, info, warn or error",
                    Q(s, q));
            rc = -1;
        } else {
            memcpy(field, &x, sizeof x);
        }
        break;
    }
    case K_FORMAT: {
        char x[BR_FORMAT_VERSION_MAX + 1];
        rc = br_config_parse_format_version(s, x, msg, sizeof msg);
        if (rc == 0) {
            memcpy(field, x, sizeof x);
        }
        break;
    }
    case K_SPECIAL:
        break;
    }
    if (rc != 0) {
        return key_error(ld, k, "%s", msg);
    }
    return 0;
}

/* ------------------------------------------------------------ listeners */

static bool valid_listener_name(const char *p, size_t n)
{
    if (n == 0 || n > BR_LISTENER_NAME_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!is_alnum(p[i]) && p[i] != '_' && p[i] != '-') {
            return false;
        }
    }
    return true;
}

static bool valid_host(const char *p, size_t n, bool bracketed)
{
    if (n > BR_HOST_MAX || (bracketed && n == 0)) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        bool ok = is_alnum(c) || c == '.' || c == '-' || c == '_' ||
                  (bracketed && (c == ':' || c == '%'));
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* "NAME://host:port" (item[0..n), trimmed) -> *out. */
static int parse_endpoint(const char *item, size_t n, struct br_listener *out, char *msg,
                          size_t msglen)
{
    char q[QUOTE_MAX];
    const char *sep = NULL;
    for (size_t i = 0; i + 3 <= n; i++) {
        if (memcmp(item + i, "://", 3) == 0) {
            sep = item + i;
            break;
        }
    }
    if (sep == NULL) {
        set_msg(msg, msglen, "%s is not a listener: expected NAME://host:port",
                quoted(item, n, q, sizeof q));
        return -1;
    }
    size_t name_len = (size_t)(sep - item);
    if (!valid_listener_name(item, name_len)) {
        set_msg(msg, msglen, "%s: a listener name has 1 to %d letters, digits, '_' or '-'",
                quoted(item, n, q, sizeof q), BR_LISTENER_NAME_MAX);
        return -1;
    }
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < name_len; i++) {
        out->name[i] = to_upper(item[i]);
    }
    const char *rest = sep + 3;
    size_t rest_len = n - name_len - 3;
    const char *host = rest;
    size_t host_len = 0;
    const char *port = NULL;
    bool bracketed = rest_len > 0 && rest[0] == '[';
    if (bracketed) {
        const char *close = memchr(rest, ']', rest_len);
        if (close == NULL || (size_t)(close - rest) + 1 >= rest_len || close[1] != ':') {
            set_msg(msg, msglen, "%s: expected [IPv6 address]:port", quoted(item, n, q, sizeof q));
            return -1;
        }
        host = rest + 1;
        host_len = (size_t)(close - host);
        port = close + 2;
    } else {
        const char *colon = NULL;
        for (size_t i = 0; i < rest_len; i++) {
            if (rest[i] == ':') {
                colon = rest + i;
            }
        }
        if (colon == NULL) {
            set_msg(msg, msglen, "%s: expected NAME://host:port", quoted(item, n, q, sizeof q));
            return -1;
        }
        host_len = (size_t)(colon - rest);
        if (memchr(rest, ':', host_len) != NULL) {
            set_msg(msg, msglen, "%s: an IPv6 address goes in brackets: [::1]:9092",
                    quoted(item, n, q, sizeof q));
            return -1;
        }
        port = colon + 1;
    }
    if (!valid_host(host, host_len, bracketed)) {
        set_msg(msg, msglen, "%s: invalid host", quoted(item, n, q, sizeof q));
        return -1;
    }
    memcpy(out->host, host, host_len);
    out->host[host_len] = '\0';
    size_t port_len = (size_t)(item + n - port);
    unsigned long p = 0;
    bool port_ok = port_len >= 1 && port_len <= 5;
    for (size_t i = 0; port_ok && i < port_len; i++) {
        port_ok = is_digit(port[i]);
        p = p * 10 + (unsigned long)(port[i] - '0');
    }
    if (!port_ok || p > 65535) {
        set_msg(msg, msglen, "%s: the port must be a number from 0 to 65535",
                quoted(item, n, q, sizeof q));
        return -1;
    }
    out->port = (uint16_t)p;
    return 0;
}

/* A comma list of endpoints (empty items skipped, as Kafka's parseCsvList
 * does); Kafka's rules: different non-zero ports and, for Kafka listeners
 * (unique_names), different names. */
static int parse_listener_list(struct load *ld, enum br_config_key k, const char *s,
                               bool unique_names, struct br_listener *out, size_t *n_out)
{
    char msg[256];
    size_t n = 0;
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        const char *item = p;
        while (len > 0 && (unsigned char)*item <= ' ') {
            item++;
            len--;
        }
        while (len > 0 && (unsigned char)item[len - 1] <= ' ') {
            len--;
        }
        if (len > 0) {
            if (n == BR_CONFIG_MAX_LISTENERS) {
                return key_error(ld, k, "more than %d listeners", BR_CONFIG_MAX_LISTENERS);
            }
            if (parse_endpoint(item, len, &out[n], msg, sizeof msg) != 0) {
                return key_error(ld, k, "%s", msg);
            }
            for (size_t i = 0; i < n; i++) {
                if (unique_names && strcmp(out[i].name, out[n].name) == 0) {
                    return key_error(ld, k, "each listener must have a different name (%s)",
                                     out[n].name);
                }
                if (out[n].port != 0 && out[i].port == out[n].port) {
                    return key_error(ld, k, "each listener must have a different port (%u)",
                                     (unsigned)out[n].port);
                }
            }
            n++;
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    *n_out = n;
    return 0;
}

struct protocol_map {
    char name[BR_CONFIG_MAX_LISTENERS * 2][BR_LISTENER_NAME_MAX + 1];
    size_t protocol[BR_CONFIG_MAX_LISTENERS * 2]; /* index into security_protocols */
    size_t n;
};

/* Index of a security protocol name (any case), or -1. */
static int security_protocol(const char *p, size_t n)
{
    for (size_t i = 0; i < sizeof security_protocols / sizeof security_protocols[0]; i++) {
        if (strlen(security_protocols[i]) == n && strncasecmp(security_protocols[i], p, n) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static int parse_protocol_map(struct load *ld, struct protocol_map *m)
{
    enum br_config_key k = BR_CFG_LISTENER_SECURITY_PROTOCOL_MAP;
    char q[QUOTE_MAX];
    const char *p = text_of(ld, k);
    m->n = 0;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        const char *item = p;
        while (len > 0 && (unsigned char)*item <= ' ') {
            item++;
            len--;
        }
        while (len > 0 && (unsigned char)item[len - 1] <= ' ') {
            len--;
        }
        if (len > 0) {
            const char *colon = memchr(item, ':', len);
            if (colon == NULL) {
                return key_error(ld, k, "%s: expected LISTENER_NAME:SECURITY_PROTOCOL",
                                 quoted(item, len, q, sizeof q));
            }
            size_t name_len = (size_t)(colon - item);
            size_t proto_len = len - name_len - 1;
            while (name_len > 0 && (unsigned char)item[name_len - 1] <= ' ') {
                name_len--;
            }
            const char *proto = colon + 1;
            while (proto_len > 0 && (unsigned char)*proto <= ' ') {
                proto++;
                proto_len--;
            }
            if (!valid_listener_name(item, name_len)) {
                return key_error(ld, k, "%s: invalid listener name",
                                 quoted(item, len, q, sizeof q));
            }
            int sp = security_protocol(proto, proto_len);
            if (sp < 0) {
                char q2[QUOTE_MAX];
                return key_error(ld, k, "%s: unknown security protocol %s",
                                 quoted(item, len, q, sizeof q),
                                 quoted(proto, proto_len, q2, sizeof q2));
            }
            if (m->n == sizeof m->name / sizeof m->name[0]) {
                return key_error(ld, k, "more than %zu entries",
                                 sizeof m->name / sizeof m->name[0]);
            }
            char *name = m->name[m->n];
            for (size_t i = 0; i < name_len; i++) {
                name[i] = to_upper(item[i]);
            }
            name[name_len] = '\0';
            for (size_t i = 0; i < m->n; i++) {
                if (strcmp(m->name[i], name) == 0) {
                    return key_error(ld, k, "listener %s is mapped twice", name);
                }
            }
            m->protocol[m->n] = (size_t)sp;
            m->n++;
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    return 0;
}

/* Every listener of `list` must map to PLAINTEXT. */
static int check_plaintext(struct load *ld, enum br_config_key k, const struct protocol_map *m,
                           const struct br_listener *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < m->n && strcmp(m->name[j], list[i].name) != 0) {
            j++;
        }
        if (j == m->n) {
            return key_error(ld, k,
                             "listener %s has no security protocol in "
                             "listener.security.protocol.map",
                             list[i].name);
        }
        if (m->protocol[j] != 0) {
            return key_error(ld, k,
                             "listener %s uses security protocol %s; Samsa speaks only PLAINTEXT",
                             list[i].name, security_protocols[m->protocol[j]]);
        }
    }
    return 0;
}

static int resolve_listeners(struct load *ld)
{
    struct br_config *c = ld->c;
    char q[QUOTE_MAX];
    int rc = parse_listener_list(ld, BR_CFG_LISTENERS, text_of(ld, BR_CFG_LISTENERS), true,
                                 c->listeners, &c->n_listeners);
    if (rc != 0) {
        return rc;
    }
    if (c->n_listeners == 0) {
        return key_error(ld, BR_CFG_LISTENERS, "no listener given");
    }
    struct protocol_map map;
    rc = parse_protocol_map(ld, &map);
    if (rc == 0) {
        rc = check_plaintext(ld, BR_CFG_LISTENERS, &map, c->listeners, c->n_listeners);
    }
    if (rc != 0) {
        return rc;
    }

    if (br_config_is_set(c, BR_CFG_ADVERTISED_LISTENERS)) {
        rc = parse_listener_list(ld, BR_CFG_ADVERTISED_LISTENERS,
                                 c->raw[BR_CFG_ADVERTISED_LISTENERS], true, c->advertised_listeners,
                                 &c->n_advertised_listeners);
        if (rc != 0) {
            return rc;
        }
        if (c->n_advertised_listeners == 0) {
            return key_error(ld, BR_CFG_ADVERTISED_LISTENERS, "no listener given");
        }
        for (size_t i = 0; i < c->n_advertised_listeners; i++) {
            const struct br_listener *a = &c->advertised_listeners[i];
            if (strcmp(a->host, "0.0.0.0") == 0 || strcmp(a->host, "::") == 0) {
                return key_error(ld, BR_CFG_ADVERTISED_LISTENERS,
                                 "cannot advertise the non-routable address %s", a->host);
            }
            size_t j = 0;
            while (j < c->n_listeners && strcmp(c->listeners[j].name, a->name) != 0) {
                j++;
            }
            if (j == c->n_listeners) {
                return key_error(ld, BR_CFG_ADVERTISED_LISTENERS,
                                 "listener %s is not one of listeners", a->name);
            }
        }
    } else {
        memcpy(c->advertised_listeners, c->listeners, sizeof c->listeners);
        c->n_advertised_listeners = c->n_listeners;
    }

    /* the inter-broker listener: named, or the one named after the protocol */
    bool named = br_config_is_set(c, BR_CFG_INTER_BROKER_LISTENER_NAME);
    if (named && br_config_is_set(c, BR_CFG_SECURITY_INTER_BROKER_PROTOCOL)) {
        return key_error(ld, BR_CFG_INTER_BROKER_LISTENER_NAME,
                         "set only one of inter.broker.listener.name and "
                         "security.inter.broker.protocol");
    }
    const char *proto = text_of(ld, BR_CFG_SECURITY_INTER_BROKER_PROTOCOL);
    int sp = security_protocol(proto, strlen(proto));
    if (sp < 0) {
        return key_error(ld, BR_CFG_SECURITY_INTER_BROKER_PROTOCOL, "unknown security protocol %s",
                         Q(proto, q));
    }
    if (sp != 0) {
        return key_error(ld, BR_CFG_SECURITY_INTER_BROKER_PROTOCOL, "Samsa speaks only PLAINTEXT");
    }
    enum br_config_key ik =
        named ? BR_CFG_INTER_BROKER_LISTENER_NAME : BR_CFG_SECURITY_INTER_BROKER_PROTOCOL;
    const char *name = named ? c->raw[BR_CFG_INTER_BROKER_LISTENER_NAME] : security_protocols[sp];
    size_t name_len = strlen(name);
    if (!valid_listener_name(name, name_len)) {
        return key_error(ld, ik, "%s is not a listener name", Q(name, q));
    }
    for (size_t i = 0; i < name_len; i++) {
        c->inter_broker_listener_name[i] = to_upper(name[i]);
    }
    c->inter_broker_listener_name[name_len] = '\0';
    size_t j = 0;
    while (j < c->n_advertised_listeners &&
           strcmp(c->advertised_listeners[j].name, c->inter_broker_listener_name) != 0) {
        j++;
    }
    if (j == c->n_advertised_listeners) {
        return key_error(ld, ik,
                         "the inter-broker listener %s must be one of advertised.listeners "
                         "(set inter.broker.listener.name)",
                         c->inter_broker_listener_name);
    }

    /* "0" turns the admin API off, as the empty list does */
    const char *admin = text_of(ld, BR_CFG_ADMIN_LISTENERS);
    rc = strcmp(admin, "0") == 0 ? 0
                                 : parse_listener_list(ld, BR_CFG_ADMIN_LISTENERS, admin, false,
                                                       c->admin_listeners, &c->n_admin_listeners);
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < c->n_admin_listeners; i++) {
        if (strcmp(c->admin_listeners[i].name, "HTTP") != 0) {
            return key_error(ld, BR_CFG_ADMIN_LISTENERS,
                             "admin listeners are http://host:port, not %s://",
                             c->admin_listeners[i].name);
        }
    }
    return 0;
}

/* ------------------------------------------------------------ the rest */

static int resolve_log_dirs(struct load *ld)
{
    struct br_config *c = ld->c;
    enum br_config_key k = br_config_is_set(c, BR_CFG_LOG_DIRS) ? BR_CFG_LOG_DIRS : BR_CFG_LOG_DIR;
    const char *s = text_of(ld, k);
    char q[QUOTE_MAX];
    size_t count = 1;
    for (const char *p = s; *p != '\0'; p++) {
        count += *p == ',' ? 1u : 0u;
    }
    if (count > BR_CONFIG_MAX_LOG_DIRS) {
        return key_error(ld, k, "more than %d directories", BR_CONFIG_MAX_LOG_DIRS);
    }
    c->log_dirs = kp_calloc(count, sizeof *c->log_dirs);
    if (c->log_dirs == NULL) {
        set_msg(ld->err, ld->errlen, "out of memory");
        return KP_E_NOMEM;
    }
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        const char *item = p;
        while (len > 0 && (unsigned char)*item <= ' ') {
            item++;
            len--;
        }
        while (len > 0 && (unsigned char)item[len - 1] <= ' ') {
            len--;
        }
        if (len > BR_CONFIG_MAX_PATH) {
            return key_error(ld, k, "a directory name is longer than %d bytes", BR_CONFIG_MAX_PATH);
        }
        if (len > 0) {
            for (size_t i = 0; i < c->n_log_dirs; i++) {
                if (strlen(c->log_dirs[i]) == len && memcmp(c->log_dirs[i], item, len) == 0) {
                    return key_error(ld, k, "directory %s is listed twice",
                                     quoted(item, len, q, sizeof q));
                }
            }
            char *dir = kp_malloc(len + 1);
            if (dir == NULL) {
                set_msg(ld->err, ld->errlen, "out of memory");
                return KP_E_NOMEM;
            }
            memcpy(dir, item, len);
            dir[len] = '\0';
            c->log_dirs[c->n_log_dirs++] = dir;
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    if (c->n_log_dirs == 0) {
        return key_error(ld, k, "no directory given");
    }
    return 0;
}

static int resolve_zookeeper(struct load *ld)
{
    struct br_config *c = ld->c;
    const char *s = c->raw[BR_CFG_ZOOKEEPER_CONNECT];
    if (s == NULL || s[0] == '\0') {
        return 0; /* standalone */
    }
    if (strlen(s) > BR_ZK_CONNECT_MAX) {
        return key_error(ld, BR_CFG_ZOOKEEPER_CONNECT, "longer than %d bytes", BR_ZK_CONNECT_MAX);
    }
    /* host:port[,host:port...][/chroot]: no spaces, no empty host */
    const char *chroot = strchr(s, '/');
    size_t hosts_len = chroot != NULL ? (size_t)(chroot - s) : strlen(s);
    bool ok = hosts_len > 0 && s[0] != ',' && s[hosts_len - 1] != ',';
    for (size_t i = 0; ok && s[i] != '\0'; i++) {
        unsigned char ch = (unsigned char)s[i];
        ok = ch > ' ' && ch < 0x7f && !(i < hosts_len && i > 0 && s[i] == ',' && s[i - 1] == ',');
    }
    if (!ok) {
        char q[QUOTE_MAX];
        return key_error(ld, BR_CFG_ZOOKEEPER_CONNECT,
                         "%s is not a ZooKeeper connect string host:port[,host:port...][/chroot]",
                         Q(s, q));
    }
    c->zookeeper_connect = dup_string(s);
    if (c->zookeeper_connect == NULL) {
        set_msg(ld->err, ld->errlen, "out of memory");
        return KP_E_NOMEM;
    }
    return 0;
}

/* Kafka's precedence: the first key of `order` that has a value wins, times
 * its multiplier. *from is the key that supplied it. */
static int effective(struct load *ld, const enum br_config_key *order, const int64_t *mult,
                     size_t n, int64_t *out, enum br_config_key *from)
{
    for (size_t i = 0; i < n; i++) {
        int64_t v = 0;
        int r = number_of(ld, order[i], &v);
        if (r < 0) {
            return KP_ERR_INVALID_CONFIG;
        }
        if (r > 0) {
            /* int32 values times at most an hour's milliseconds fit int64 */
            *out = v * mult[i];
            *from = order[i];
            return 0;
        }
    }
    *out = 0;
    *from = order[n - 1];
    return 0;
}

static int resolve_effective(struct load *ld)
{
    struct br_config *c = ld->c;
    enum br_config_key from = BR_CFG__COUNT;
    int64_t v = 0;
    int rc;

    static const enum br_config_key retention[] = {
        BR_CFG_LOG_RETENTION_MS, BR_CFG_LOG_RETENTION_MINUTES, BR_CFG_LOG_RETENTION_HOURS};
    static const int64_t retention_mult[] = {1, 60000, 3600000};
    rc = effective(ld, retention, retention_mult, 3, &v, &from);
    if (rc != 0) {
        return rc;
    }
    if (v == 0) {
        return key_error(ld, from, "retention must be unlimited (-1) or at least 1 ms");
    }
    c->log_retention_ms = v < 0 ? -1 : v;

    static const enum br_config_key roll[] = {BR_CFG_LOG_ROLL_MS, BR_CFG_LOG_ROLL_HOURS};
    static const enum br_config_key jitter[] = {BR_CFG_LOG_ROLL_JITTER_MS,
                                                BR_CFG_LOG_ROLL_JITTER_HOURS};
    static const int64_t hour_mult[] = {1, 3600000};
    rc = effective(ld, roll, hour_mult, 2, &c->log_roll_ms, &from);
    if (rc == 0) {
        rc = effective(ld, jitter, hour_mult, 2, &c->log_roll_jitter_ms, &from);
    }
    if (rc != 0) {
        return rc;
    }

    int r = number_of(ld, BR_CFG_LOG_FLUSH_INTERVAL_MS, &v);
    if (r < 0) {
        return KP_ERR_INVALID_CONFIG;
    }
    c->log_flush_interval_ms = r > 0 ? v : c->log_flush_scheduler_interval_ms;

    r = number_of(ld, BR_CFG_LOG_OPEN_FILES_MAX, &v);
    if (r < 0) {
        return KP_ERR_INVALID_CONFIG;
    }
    c->log_open_files_max = r > 0 ? (int32_t)v : 0;

    r = number_of(ld, BR_CFG_ZOOKEEPER_CONNECTION_TIMEOUT_MS, &v);
    if (r < 0) {
        return KP_ERR_INVALID_CONFIG;
    }
    c->zookeeper_connection_timeout_ms = r > 0 ? (int32_t)v : c->zookeeper_session_timeout_ms;

    /* the default must not refuse a request socket.request.max.bytes allows */
    if (!br_config_is_set(c, BR_CFG_QUEUED_MAX_REQUEST_BYTES) &&
        c->queued_max_request_bytes < c->socket_request_max_bytes) {
        c->queued_max_request_bytes = c->socket_request_max_bytes;
    }
    return 0;
}

/* Kafka's KafkaConfig.validateValues, the parts that concern Samsa. */
static int cross_checks(struct load *ld)
{
    const struct br_config *c = ld->c;
    if (c->broker_id_generation_enable) {
        if (c->broker_id < -1 || c->broker_id > c->reserved_broker_max_id) {
            return key_error(ld, BR_CFG_BROKER_ID,
                             "must be -1 (generated) or between 0 and reserved.broker.max.id "
                             "(%d)",
                             (int)c->reserved_broker_max_id);
        }
    } else if (c->broker_id < 0) {
        return key_error(ld, BR_CFG_BROKER_ID,
                         "must be at least 0 when broker.id.generation.enable is false");
    }
    if (c->replica_fetch_wait_max_ms > c->replica_socket_timeout_ms) {
        return key_error(ld, BR_CFG_REPLICA_FETCH_WAIT_MAX_MS,
                         "must not exceed replica.socket.timeout.ms (%d)",
                         (int)c->replica_socket_timeout_ms);
    }
    if (c->replica_fetch_wait_max_ms > c->replica_lag_time_max_ms) {
        return key_error(ld, BR_CFG_REPLICA_FETCH_WAIT_MAX_MS,
                         "must not exceed replica.lag.time.max.ms (%lld), or the ISR shrinks "
                         "on quiet topics",
                         (long long)c->replica_lag_time_max_ms);
    }
    if (c->queued_max_request_bytes > 0 &&
        c->queued_max_request_bytes < c->socket_request_max_bytes) {
        /* KafkaConfig's check: a request of the largest allowed size must fit */
        return key_error(ld, BR_CFG_QUEUED_MAX_REQUEST_BYTES,
                         "must be at least socket.request.max.bytes (%d), or -1 for no limit",
                         (int)c->socket_request_max_bytes);
    }
    if (c->connections_max_idle_ms == 0) {
        /* Kafka accepts 0 and then closes every connection as soon as it
         * pauses: no configuration means that */
        return key_error(ld, BR_CFG_CONNECTIONS_MAX_IDLE_MS,
                         "0 would close every connection the moment it pauses: give at least "
                         "1 ms, or -1 to never close idle connections");
    }
    if (c->group_min_session_timeout_ms > c->group_max_session_timeout_ms) {
        return key_error(ld, BR_CFG_GROUP_MIN_SESSION_TIMEOUT_MS,
                         "must not exceed group.max.session.timeout.ms (%d)",
                         (int)c->group_max_session_timeout_ms);
    }
    return 0;
}

void br_config_free(struct br_config *c)
{
    if (c == NULL) {
        return;
    }
    for (size_t k = 0; k < BR_CFG__COUNT; k++) {
        kp_free(c->raw[k]);
    }
    if (c->log_dirs != NULL) {
        for (size_t i = 0; i < c->n_log_dirs; i++) {
            kp_free(c->log_dirs[i]);
        }
        kp_free(c->log_dirs);
    }
    kp_free(c->zookeeper_connect);
    memset(c, 0, sizeof *c);
}

int br_config_parse_buffer(const char *buf, size_t len, const char *name,
                           const char *const *overrides, size_t n_overrides, struct br_config *out,
                           char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    set_msg(err, errlen, "%s", "");
    if (name == NULL) {
        name = "(config)";
    }
    if (len > BR_CONFIG_MAX_FILE_BYTES) {
        set_msg(err, errlen, "%s: larger than %zu bytes", name, BR_CONFIG_MAX_FILE_BYTES);
        return KP_ERR_INVALID_CONFIG;
    }
    struct load *ld = kp_calloc(1, sizeof *ld);
    char *line_buf = kp_malloc(BR_CONFIG_MAX_LINE_BYTES + 1);
    int rc = 0;
    if (ld == NULL || line_buf == NULL) {
        set_msg(err, errlen, "out of memory");
        rc = KP_E_NOMEM;
        goto out_free;
    }
    ld->c = out;
    ld->name = name;
    ld->err = err;
    ld->errlen = errlen;

    rc = parse_file(ld, buf, len, line_buf);
    for (size_t i = 0; rc == 0 && i < n_overrides; i++) {
        rc = parse_override(ld, overrides[i], line_buf);
    }
    for (int k = 0; rc == 0 && k < BR_CFG__COUNT; k++) {
        rc = parse_typed(ld, (enum br_config_key)k);
    }
    if (rc == 0) {
        rc = resolve_listeners(ld);
    }
    if (rc == 0) {
        rc = resolve_log_dirs(ld);
    }
    if (rc == 0) {
        rc = resolve_zookeeper(ld);
    }
    if (rc == 0) {
        rc = resolve_effective(ld);
    }
    if (rc == 0) {
        rc = cross_checks(ld);
    }
out_free:
    kp_free(line_buf);
    kp_free(ld);
    if (rc != 0) {
        br_config_free(out);
    }
    return rc;
}

int br_config_check_available(const struct br_config *c, char *err, size_t errlen)
{
    if (c->zookeeper_connect != NULL && c->broker_id < 0) {
        set_msg(err, errlen,
                "broker.id must be set (0 or more) on a broker of a cluster: ids generated "
                "from ZooKeeper (broker.id.generation.enable) are not supported");
        return KP_ERR_INVALID_CONFIG;
    }
    return 0;
}

int br_config_defaults(struct br_config *out, char *err, size_t errlen)
{
    return br_config_parse_buffer(NULL, 0, "(defaults)", NULL, 0, out, err, errlen);
}

int br_config_load(const char *path, const char *const *overrides, size_t n_overrides,
                   struct br_config *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        set_msg(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        set_msg(err, errlen, "%s: not a regular file", path);
        (void)close(fd);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    /* read at most one byte past the ceiling, whatever st_size claims */
    char *buf = kp_malloc(BR_CONFIG_MAX_FILE_BYTES + 1);
    if (buf == NULL) {
        (void)close(fd);
        set_msg(err, errlen, "out of memory");
        return KP_E_NOMEM;
    }
    size_t len = 0;
    int rc = 0;
    while (len < BR_CONFIG_MAX_FILE_BYTES + 1) {
        ssize_t r = read(fd, buf + len, BR_CONFIG_MAX_FILE_BYTES + 1 - len);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            set_msg(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        if (r == 0) {
            break;
        }
        len += (size_t)r;
    }
    (void)close(fd);
    if (rc == 0) {
        rc = br_config_parse_buffer(buf, len, path, overrides, n_overrides, out, err, errlen);
    }
    kp_free(buf);
    return rc;
}
