/*
 * samsa-broker: the retention schedule over every partition
 * (storage/retention.h applies the rules to one log) and the log start
 * offsets kept in log-start-offset-checkpoint.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_LOG_RETENTION_H
#define SAMSA_BROKER_LOG_RETENTION_H

#include <stdint.h>

struct br_broker;

/* Housekeeping: runs the retention rules over every partition once
 * log.retention.check.interval.ms have passed since the last run. */
void br_retention_tick(struct br_broker *b, int64_t now_mono_ms);

/* Start-up: reads log-start-offset-checkpoint in every log dir and moves
 * each partition's log start there (br_log_set_start_offset), deleting the
 * segments wholly below it. */
void br_retention_load_start_offsets(struct br_broker *b);

#endif
