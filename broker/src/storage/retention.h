/*
 * samsa-broker: retention, Kafka's Log.deleteOldSegments.
 *
 * Every log.retention.check.interval.ms (the log manager schedules it) each
 * partition whose topic's cleanup.policy includes "delete" loses its oldest
 * segments while
 *   - retention.ms >= 0 and the segment's largest timestamp (its .log's
 *     modification time when it has none) is more than retention.ms old;
 *   - or retention.bytes >= 0 and the log is larger than retention.bytes by
 *     at least the segment's size;
 * and in every case the segments wholly below the log start offset (moved
 * by DeleteRecords) go. A segment goes only when the high watermark has
 * passed its end. When the active segment qualifies too (all the data is
 * past retention) it is rolled first, as Kafka does, so the log keeps one
 * empty segment at the LEO. The log start offset moves to the first segment
 * left, so Fetch below it answers OFFSET_OUT_OF_RANGE and ListOffsets
 * earliest follows it.
 *
 * The log start offset is persisted in log-start-offset-checkpoint (written
 * with the other checkpoints, broker.c) and applied again at start-up.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_STORAGE_RETENTION_H
#define SAMSA_BROKER_STORAGE_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "storage/log.h"

/*
 * The rules on one log. by_time_and_size: its topic's cleanup.policy
 * includes "delete" (otherwise only the segments below the log start go);
 * retention_ms / retention_bytes: -1 (any negative) for no limit; hw: the
 * high watermark; now_ms: wall clock. *deleted (may be NULL): segments
 * removed. Returns 0 or KP_ERR_KAFKA_STORAGE_ERROR.
 */
KP_MUST_CHECK int br_retention_apply(struct br_log *log, bool by_time_and_size,
                                     int64_t retention_ms, int64_t retention_bytes, int64_t hw,
                                     int64_t now_ms, size_t *deleted);

#endif
