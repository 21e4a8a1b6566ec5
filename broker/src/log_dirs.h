/*
 * samsa-broker: what the log directories hold at start-up, checked before
 * any partition is opened. A damaged or inconsistent file is never taken
 * silently: start-up stops with a message saying what is wrong, which file,
 * and how to go on.
 *
 * meta.properties (every log dir): Kafka's identity file, `version=0`,
 * `broker.id=<id>`, and Samsa's `cluster.id=<id>` (Kafka writes it too from
 * 2.4 on). A file that cannot be read or parsed, of another version, without
 * broker.id, or whose ids disagree with each other or with a configured
 * broker.id stops start-up and is left as it is (Kafka 2.0:
 * BrokerMetadataCheckpoint.read rethrows, KafkaServer.getBrokerIdAndOfflineDirs
 * throws InconsistentBrokerIdException). A log dir without the file gets it
 * written (atomically); a file without cluster.id (Kafka 2.0 wrote none)
 * gets one added, with a warning. broker.id -1 takes the stored id.
 *
 * The log dirs' entries (br_log_dirs_scan):
 * - directories with a delete name (br_log_dir_is_deleted) hold partitions
 *   deleted before the last stop whose removal did not finish: removed and
 *   never opened, as Kafka's LogManager.loadLogs schedules them for deletion;
 * - partition directories (`<topic>-<partition>`) that no topic of the
 *   metadata store holds stop start-up: a topic later created under that
 *   name would adopt their records. When the metadata file itself is
 *   missing the message says so. Samsa does not rebuild topics from
 *   directories: their configs (retention, compaction) are in the metadata
 *   alone, and guessing them could delete the very data it recovers;
 * - a partition of the metadata store without a directory is logged (a
 *   warning): it starts empty.
 *
 * @locality the main thread, during br_broker_start (blocking I/O)
 */
#ifndef SAMSA_BROKER_LOG_DIRS_H
#define SAMSA_BROKER_LOG_DIRS_H

#include "broker.h"

/* The largest meta.properties read. */
#define BR_META_PROPERTIES_MAX_BYTES ((size_t)64 * 1024)

/* Reads and checks meta.properties in every log dir; sets b->s.node_id and
 * b->s.cluster_id; writes the file where it is missing. *existed: whether any
 * log dir had one (the log dirs were used before). Returns 0 or -1 (logged:
 * start-up stops). */
KP_MUST_CHECK int br_log_dirs_load_identity(struct br_broker *b, bool *existed);

/* Scans every log dir against the metadata store's topics: removes the
 * leftover delete directories, refuses partition directories of no topic.
 * metadata_missing: the store's file did not exist before this start;
 * identity_existed: from br_log_dirs_load_identity. Returns 0 or -1
 * (logged: start-up stops). */
KP_MUST_CHECK int br_log_dirs_scan(struct br_broker *b, const struct br_topic_meta *topics,
                                   size_t ntopics, bool metadata_missing, bool identity_existed);

#endif
