/*
 * samsa-broker: the log cleaner's schedule and threads (storage/cleaner.h
 * does the cleaning itself): which partition is cleaned next, the
 * log.cleaner.threads that run the jobs, their return through the mailbox,
 * and cleaner-offset-checkpoint in each log dir.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_LOG_CLEANER_H
#define SAMSA_BROKER_LOG_CLEANER_H

#include <stdint.h>

#include <samsa-protocol/err.h>

struct br_broker;

/* The file, in each log dir, with the partitions' first dirty offsets. */
#define BR_CLEANER_CHECKPOINT "cleaner-offset-checkpoint"

/* Reads the cleaner checkpoints into the partitions and starts
 * log.cleaner.threads threads (none when log.cleaner.enable is false).
 * Needs the topics loaded and b->mailbox registered with the reactor.
 * Returns 0, KP_E_NOMEM or KP_ERR_KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_cleaner_start(struct br_broker *b);

/* Housekeeping: looks for logs to clean once log.cleaner.backoff.ms have
 * passed since the last look (monotonic clock). */
void br_cleaner_tick(struct br_broker *b, int64_t now_mono_ms);

/* Stops the threads (a job in progress is abandoned between two batches),
 * discards finished jobs, writes the checkpoints and frees the cleaner.
 * Safe when br_cleaner_start was not called. */
void br_cleaner_stop(struct br_broker *b);

#endif
