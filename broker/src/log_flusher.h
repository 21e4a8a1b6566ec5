/*
 * samsa-broker: the log flushes and checkpoint writes, off the reactor.
 *
 * A helper thread of its own (an I/O worker, reactor/worker.h) does the
 * fdatasyncs and fsyncs the schedule asks for, so that the reactor never
 * waits for the disk:
 * - the logs that have waited unflushed for their flush.ms, a batch at a
 *   time (storage/log.h br_log_flush_begin/run/end: begun and ended on the
 *   reactor, the syncs on the thread); a full batch is followed by the
 *   next at once, from where the last one stopped;
 * - every log.flush.offset.checkpoint.interval.ms, the recovery point,
 *   replication offset (high watermark) and log start offset checkpoints
 *   of each log dir, their entries taken on the reactor;
 * - any other checkpoint file a part of the broker hands it
 *   (cleaner-offset-checkpoint after a cleaning).
 * One thread runs them in order: two writes of one file land in the order
 * they were asked for. Before it starts and once it has stopped, the
 * writes are made at once, on the calling thread (start-up, shutdown).
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_LOG_FLUSHER_H
#define SAMSA_BROKER_LOG_FLUSHER_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

struct br_broker;
struct br_checkpoint_entry;

/* Starts the thread (none for an in-process broker: its jobs run inline).
 * Needs b->mailbox. 0, KP_E_NOMEM or KP_ERR_KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_flusher_start(struct br_broker *b);

/* Housekeeping: starts the flushes that are due and, once the interval has
 * passed, the offset checkpoints (unless the last ones are still under
 * way). wall_ms: the clock appends are stamped with; mono_ms: monotonic. */
void br_flusher_tick(struct br_broker *b, int64_t wall_ms, int64_t mono_ms);

/* Writes the three offset checkpoints of every log dir now, on this thread
 * (shutdown, after the last flush). */
void br_flusher_write_offset_checkpoints(struct br_broker *b);

/* Writes checkpoint file path (entries e[0..n), ownership passed) on the
 * thread, or at once without one. */
void br_flusher_write_checkpoint(struct br_broker *b, const char *path,
                                 struct br_checkpoint_entry *e, size_t n);

/* Lets the work under way finish and end on this thread, then stops and
 * frees the thread. Safe when br_flusher_start was not called. */
void br_flusher_stop(struct br_broker *b);

#endif
