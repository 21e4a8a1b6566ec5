/*
 * samsa-broker: the log cleaner (compaction, Kafka's LogCleaner).
 *
 * A topic whose cleanup.policy includes "compact" keeps at least the latest
 * record of every key. The cleaner works on the closed segments of its
 * partitions, never the active one, in two halves:
 *
 *   reactor thread   picks the dirtiest log (br_cleaner_tick, every
 *                    log.cleaner.backoff.ms and after each job): dirty
 *                    ratio = bytes after the first dirty offset / bytes of
 *                    the cleanable segments, at least
 *                    min.cleanable.dirty.ratio. It prepares a job (the
 *                    segments' descriptors, sizes, the topic's settings)
 *                    and queues it for a cleaner thread.
 *   cleaner thread   (log.cleaner.threads of them) reads the immutable
 *                    segment files through its own descriptors: builds an
 *                    offset map key -> last offset over the dirty part,
 *                    then rewrites the segments from the log start in
 *                    groups of at most segment.bytes into new segments
 *                    "<base>.log.cleaned" (+ indexes), flushed, and posts
 *                    the job back through the reactor's mailbox.
 *   reactor thread   the finished task comes back through the mailbox: it checks that the log still
 * holds the segments the job read (retention, DeleteRecords or a topic deletion may have come in
 * between: the job is then discarded) and swaps the new segments in (br_log_swap_cleaned: renames
 * and unlinks only).
 *
 * Produce and Fetch never wait for the cleaner: the thread touches no
 * reactor state, and fetch slices keep the old files open after the swap.
 *
 * What a rewrite keeps: a keyed record unless a later record of its key is
 * in the offset map (a committed transaction's records are like any other;
 * an aborted one's batches go, as Kafka 2.0's cleaner discards them, and
 * an open one's stay whole and are no key's latest value; markers stay); a tombstone (null value) that is the latest of its key
 * only while its timestamp is less than delete.retention.ms old; records
 * without a key (Kafka refuses them on compacted topics; Samsa keeps them
 * rather than lose data). Offsets never change (gaps are fine). A batch
 * whose records all stay is copied byte for byte; one that loses records
 * is rebuilt as RecordBatch v2 with its BaseOffset, LastOffsetDelta,
 * timestamps and timestamp type, producer id, epoch and base sequence,
 * partition leader epoch and codec (recompressed), CRC recomputed. A batch
 * that loses every record goes, except when it is the last batch of its
 * producer in the cleaned range or the last batch of a group: it stays as
 * an empty batch (RecordCount 0), so the producer's sequence state and the
 * group's end offset survive (a restart that completes an interrupted swap
 * replaces exactly the old segments below that end).
 *
 * min.compaction.lag.ms: the cleanable part ends at the first segment whose
 * largest timestamp is newer than now - lag. The first dirty offset of each
 * partition is kept in cleaner-offset-checkpoint in its log dir (Kafka's
 * file and format), written after each swap; one beyond the active
 * segment's base offset (a log cut by recovery) means the whole log again.
 *
 * The offset map holds 128-bit hashes of the keys (MurmurHash3), 24 bytes
 * an entry, at most 128 MiB per thread (Kafka's dedupe buffer default); a
 * dirty part with more keys is cleaned in several passes, a segment
 * boundary at a time.
 *
 * The schedule (which log, when, on which thread) is the log manager's
 * (log_manager.h).
 *
 * @locality br_clean_job_run: any one thread at a time; the rest of
 * br_clean_job_*: the thread that owns the log.
 */
#ifndef SAMSA_BROKER_STORAGE_CLEANER_H
#define SAMSA_BROKER_STORAGE_CLEANER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "storage/log.h"

/* ---------------------------------------------------- the cleaning itself */

struct br_clean_params {
    int64_t first_dirty_offset;    /* where the part not yet cleaned begins */
    int64_t now_ms;                /* wall clock */
    int64_t delete_retention_ms;   /* tombstones older than this go */
    int64_t min_compaction_lag_ms; /* segments with newer records stay as they are */
    int64_t segment_bytes;         /* the largest cleaned segment */
    size_t max_map_entries;        /* offset map ceiling (keys) */
};

struct br_clean_stats {
    int64_t first_dirty_offset;
    int64_t cleaned_to;   /* the next first dirty offset */
    int64_t records_read; /* records in the segments rewritten */
    int64_t records_kept;
    int64_t tombstones_dropped;
    int64_t aborted_dropped; /* records of aborted transactions */
    int64_t batches_rebuilt;
    int64_t bytes_before; /* of the segments rewritten */
    int64_t bytes_after;
    size_t segments_before;
    size_t segments_after;
    size_t map_keys;
    int64_t elapsed_ms; /* of br_clean_job_run */
};

/* The dirty ratio of a log (0 when nothing is cleanable) and the size of
 * its dirty part, with the same segment choice as br_clean_job_prepare. */
KP_MUST_CHECK int br_clean_dirty_ratio(const struct br_log *log, const struct br_clean_params *p,
                                       double *ratio, int64_t *dirty_bytes);

/* The offset map entries each of `threads` cleaner threads may hold: the
 * 128 MiB budget shared, at a load of 0.7. */
size_t br_clean_map_entries(size_t threads);

struct br_clean_job;

/* A job over log's closed segments (log thread). *out is NULL when there is
 * nothing to clean. Returns 0, KP_E_NOMEM, KP_ERR_KAFKA_STORAGE_ERROR.
 * The job holds references on the segments' files and a descriptor of the
 * partition directory until br_clean_job_free. */
KP_MUST_CHECK int br_clean_job_prepare(struct br_log *log, const struct br_clean_params *p,
                                       struct br_clean_job **out);

/* Does the work (any thread; touches nothing but the job and the files).
 * stop (may be NULL) is polled between batches. Returns 0; KP_E_CORRUPT,
 * KP_E_COMPRESSION, KP_E_UNSUPPORTED (a batch that cannot be read: nothing
 * is cleaned, logged); KP_E_NOMEM; KP_ERR_KAFKA_STORAGE_ERROR; KP_AGAIN when
 * stopped. Cleaned files are left for commit or free. */
KP_MUST_CHECK int br_clean_job_run(struct br_clean_job *job, atomic_bool *stop);

/* Swaps the cleaned segments into the log (br_log_swap_cleaned); *swapped
 * false when the log changed meanwhile. Returns 0 or
 * KP_ERR_KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_clean_job_commit(struct br_log *log, struct br_clean_job *job, bool *swapped);

/* The figures of a run. */
const struct br_clean_stats *br_clean_job_stats(const struct br_clean_job *job);

/* Removes the cleaned files that were not swapped in, releases the file
 * references, frees the job (log thread). NULL is a no-op. */
void br_clean_job_free(struct br_clean_job *job);

#endif
