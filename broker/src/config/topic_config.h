/*
 * samsa-broker: topic-level configuration (Kafka 2.0's LogConfig).
 *
 * A topic's configuration is its broker's defaults (the log.* keys, see
 * br_topic_config_from_broker) with the keys set on the topic laid over them
 * (CreateTopics, AlterConfigs, IncrementalAlterConfigs; persisted as
 * key/value text with the topic's metadata). Values are validated with
 * Kafka's rules: the same types and ranges, the same error (INVALID_CONFIG)
 * for an unknown key or a bad value, INVALID_REQUEST for a null value.
 *
 * Every Kafka 2.0 topic key is known. Samsa uses
 * {leader,follower}.replication.throttled.replicas (the replicas the
 * replication quotas hold, br_topic_config_throttled), cleanup.policy, retention.*, segment.*,
 * index.interval.bytes, min.cleanable.dirty.ratio, delete.retention.ms,
 * min.compaction.lag.ms, max.message.bytes, message.timestamp.type,
 * flush.*, compression.type, min.insync.replicas,
 * message.downconversion.enable (Fetch v0-v3) and
 * unclean.leader.election.enable; the others (file.delete.delay.ms,
 * preallocate, segment.jitter.ms, message.format.version,
 * message.timestamp.difference.max.ms) are
 * validated, stored and described so that Kafka tools see what they expect.
 *
 * segment.index.bytes must be at least 4 (Kafka 2.0 took 0; an index of
 * fewer than 4 bytes cannot hold an entry).
 *
 * struct br_topic_config is plain data: copy it with `=`; nothing to free.
 * @locality any thread; no shared state.
 */
#ifndef SAMSA_BROKER_TOPIC_CONFIG_H
#define SAMSA_BROKER_TOPIC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "config/config.h"

/* Topic keys, in Kafka's (alphabetical) DescribeConfigs order. */
enum br_topic_config_key {
    BR_TCFG_CLEANUP_POLICY,
    BR_TCFG_COMPRESSION_TYPE,
    BR_TCFG_DELETE_RETENTION_MS,
    BR_TCFG_FILE_DELETE_DELAY_MS,
    BR_TCFG_FLUSH_MESSAGES,
    BR_TCFG_FLUSH_MS,
    BR_TCFG_FOLLOWER_REPLICATION_THROTTLED_REPLICAS,
    BR_TCFG_INDEX_INTERVAL_BYTES,
    BR_TCFG_LEADER_REPLICATION_THROTTLED_REPLICAS,
    BR_TCFG_MAX_MESSAGE_BYTES,
    BR_TCFG_MESSAGE_DOWNCONVERSION_ENABLE,
    BR_TCFG_MESSAGE_FORMAT_VERSION,
    BR_TCFG_MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS,
    BR_TCFG_MESSAGE_TIMESTAMP_TYPE,
    BR_TCFG_MIN_CLEANABLE_DIRTY_RATIO,
    BR_TCFG_MIN_COMPACTION_LAG_MS,
    BR_TCFG_MIN_INSYNC_REPLICAS,
    BR_TCFG_PREALLOCATE,
    BR_TCFG_RETENTION_BYTES,
    BR_TCFG_RETENTION_MS,
    BR_TCFG_SEGMENT_BYTES,
    BR_TCFG_SEGMENT_INDEX_BYTES,
    BR_TCFG_SEGMENT_JITTER_MS,
    BR_TCFG_SEGMENT_MS,
    BR_TCFG_UNCLEAN_LEADER_ELECTION_ENABLE,
    BR_TCFG__COUNT
};

/* Longest value text accepted by br_topic_config_set (before trimming). */
#define BR_TOPIC_CONFIG_VALUE_MAX 1024
/* Room for any rendered value: a long, a ratio, a policy list, a version,
 * a throttled-replica list. */
#define BR_TOPIC_CONFIG_TEXT_MAX (BR_TOPIC_CONFIG_VALUE_MAX + 1)

struct br_topic_config {
    unsigned cleanup_policy; /* enum br_cleanup_policy flags */
    int compression_type;    /* enum br_compression */
    int64_t delete_retention_ms;
    int64_t file_delete_delay_ms;
    int64_t flush_messages;
    int64_t flush_ms;
    /* "" (none), "*" or "partition:broker,..." as set, trimmed */
    char follower_replication_throttled_replicas[BR_TOPIC_CONFIG_VALUE_MAX + 1];
    int32_t index_interval_bytes;
    char leader_replication_throttled_replicas[BR_TOPIC_CONFIG_VALUE_MAX + 1];
    int32_t max_message_bytes;
    bool message_downconversion_enable;
    char message_format_version[BR_FORMAT_VERSION_MAX + 1];
    int64_t message_timestamp_difference_max_ms;
    int message_timestamp_type; /* enum br_timestamp_type */
    double min_cleanable_dirty_ratio;
    int64_t min_compaction_lag_ms;
    int32_t min_insync_replicas;
    bool preallocate;
    int64_t retention_bytes; /* negative: no limit */
    int64_t retention_ms;    /* -1: forever */
    int32_t segment_bytes;
    int32_t segment_index_bytes;
    int64_t segment_jitter_ms;
    int64_t segment_ms;
    bool unclean_leader_election_enable;
    uint32_t set; /* bit k: key k was set on the topic */
};

/* The broker's defaults for a topic; no key set. */
void br_topic_config_from_broker(const struct br_config *broker, struct br_topic_config *out);

/*
 * Sets key = value (text as a client sends it; trimmed here) on the topic.
 * Returns 0; KP_ERR_INVALID_CONFIG for an unknown key or a bad value;
 * KP_ERR_INVALID_REQUEST for a NULL value. err names the key and says why.
 * On failure *tc is unchanged, so CreateTopics' validate_only and
 * all-or-nothing AlterConfigs work on a copy.
 */
KP_MUST_CHECK int br_topic_config_set(struct br_topic_config *tc, const char *key,
                                      const char *value, char *err, size_t errlen);

/*
 * Removes the topic's own value of `key` (IncrementalAlterConfigs DELETE):
 * the default from `broker` (the configuration tc started from; not NULL)
 * applies again. Returns 0 or KP_ERR_INVALID_CONFIG for an unknown key;
 * removing a key that is not set is not an error.
 */
KP_MUST_CHECK int br_topic_config_unset(struct br_topic_config *tc, const struct br_config *broker,
                                        const char *key, char *err, size_t errlen);

/* The key named `name`, or -1. */
int br_topic_config_find(const char *name);

/* The key's name, or NULL when k is out of range. */
const char *br_topic_config_key_name(enum br_topic_config_key k);

/* True when key k was set on the topic. */
bool br_topic_config_is_set(const struct br_topic_config *tc, enum br_topic_config_key k);

/*
 * Whether the topic's list k (BR_TCFG_LEADER_REPLICATION_THROTTLED_REPLICAS
 * or BR_TCFG_FOLLOWER_...) throttles its partition on broker: "*" every
 * replica, else the "partition:broker" pairs naming broker (Kafka 2.0's
 * ConfigHandler.parseThrottledPartitions and
 * ReplicationQuotaManager.isThrottled).
 */
bool br_topic_config_throttled(const struct br_topic_config *tc, enum br_topic_config_key k,
                               int32_t partition, int32_t broker);
/* The same of a list's text (NULL or "" throttles none). */
bool br_throttled_replicas_match(const char *list, int32_t partition, int32_t broker);

/* One row of a topic's DescribeConfigs. */
struct br_topic_config_entry {
    const char *name;
    char value[BR_TOPIC_CONFIG_TEXT_MAX]; /* rendered from the typed value */
    int8_t source;                        /* DYNAMIC_TOPIC if set on the topic; else STATIC_BROKER
                                             if the operator set a broker synonym; else DEFAULT */
    bool read_only;                       /* always false: every topic key can be altered */
    bool sensitive;                       /* always false */
    /* Broker keys that supply the default, in precedence order
     * (retention.ms: log.retention.ms, log.retention.minutes,
     * log.retention.hours); NULL-terminated, never NULL itself. */
    const char *const *broker_synonyms;
};

/*
 * Describes key k of tc. `broker` is the configuration whose defaults tc
 * started from (it decides STATIC_BROKER against DEFAULT); NULL reports
 * DEFAULT for every key the topic does not set.
 */
void br_topic_config_entry(const struct br_topic_config *tc, const struct br_config *broker,
                           enum br_topic_config_key k, struct br_topic_config_entry *out);

#endif
