/*
 * samsa-broker: a partition's log, Kafka's on-disk layout.
 *
 *     <log.dir>/<topic>-<partition>/
 *         00000000000000000000.log        batches stored verbatim
 *         00000000000000000000.index      offset -> position, sparse
 *         00000000000000000000.timeindex  timestamp -> offset, sparse
 *         00000000000000004096.log ...    the next segment, named by its
 *                                         base offset
 *         leader-epoch-checkpoint         (epoch, start offset) pairs
 *         00000000000000004096.snapshot   producers' state as of that offset
 *                                         (producer_snapshot.h; written by the
 *                                         partition, those below the log start
 *                                         deleted by retention here)
 *
 * Batches are RecordBatch v2 as the producer sent them; the log rewrites only
 * BaseOffset and PartitionLeaderEpoch, which lie outside the CRC. The last
 * segment is the active one: appends go there, and a new one is rolled when
 * segment.bytes, segment.ms or a full index says so.
 *
 * Offsets: the log start offset (first offset a reader may ask for), the LEO
 * (log end offset, the offset the next append gets) and the recovery point
 * (everything below it was fdatasync'ed). The HW belongs to the partition,
 * not to the log: readers pass it as max_offset.
 *
 * Crash safety: br_log_open re-validates what may have been lost (see
 * there). Checkpoint files of the log dir (recovery-point-offset-checkpoint,
 * replication-offset-checkpoint, log-start-offset-checkpoint) are written by
 * the broker from br_log_recovery_point / br_log_start_offset (checkpoint.h).
 *
 * Errors: 0, Kafka codes (KP_ERR_OFFSET_OUT_OF_RANGE,
 * KP_ERR_KAFKA_STORAGE_ERROR for I/O failures, logged with br_error), or
 * internal negative codes (KP_E_INVALID_ARG, KP_E_NOMEM, KP_E_CORRUPT for
 * damage found in a segment that was trusted). After an I/O failure that may
 * leave the files out of step with memory, the log refuses appends with
 * KP_ERR_KAFKA_STORAGE_ERROR until it is reopened.
 *
 * @locality reactor thread: a br_log and everything it hands out (slices,
 * iterators) are used from one thread; there are no locks. A new log may be
 * made on the I/O worker and handed to the reactor whole (topic_admin.c):
 * one thread at a time, the mailbox between them.
 *
 * Descriptors: a log keeps none for its directory (it is opened for the
 * operations that work on names in it and closed after) nor for its
 * indexes (segment.h); its segments' .log files are held through the
 * file cache passed to br_log_open (fileref.h), which closes the least
 * recently used beyond its budget and lets the segments reopen them by
 * name. So a broker's descriptors follow the files in use, not the number
 * of partitions.
 *
 * Memory: a log keeps no read buffer of its own. Functions that walk batch
 * headers (open, read, offset_for_timestamp) read through an 8 KiB window
 * on the calling thread's stack; an iterator carries its own.
 */
#ifndef SAMSA_BROKER_LOG_H
#define SAMSA_BROKER_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>
#include <samsa-protocol/record_batch.h>

#include "base/fileref.h"

/* Kafka's topic-level names; defaults as Kafka's. */
struct br_log_config {
    int64_t segment_bytes;           /* segment.bytes, [14, INT32_MAX] */
    int64_t segment_ms;              /* segment.ms, >= 1 */
    int32_t index_interval_bytes;    /* index.interval.bytes, >= 0 */
    int32_t max_index_bytes;         /* segment.index.bytes, >= 12: roll when an index is full */
    int64_t flush_interval_messages; /* flush.messages, >= 1; INT64_MAX leaves it to the OS */
    int64_t flush_interval_ms;       /* flush.ms, >= 0; INT64_MAX = never */
    int64_t retention_ms;            /* retention.ms, -1 = forever (used by retention) */
    int64_t retention_bytes;         /* retention.bytes, -1 = forever */
    /* what the log manager does with the log (log_manager.h) */
    bool cleanup_delete;              /* cleanup.policy has delete: retention by time and size */
    bool cleanup_compact;             /* cleanup.policy has compact: the cleaner compacts it */
    int64_t delete_retention_ms;      /* delete.retention.ms: how long tombstones stay */
    int64_t min_compaction_lag_ms;    /* min.compaction.lag.ms */
    double min_cleanable_dirty_ratio; /* min.cleanable.dirty.ratio */
};

#define BR_LOG_DEFAULT_SEGMENT_BYTES INT64_C(1073741824)
#define BR_LOG_DEFAULT_SEGMENT_MS INT64_C(604800000)
#define BR_LOG_DEFAULT_INDEX_INTERVAL_BYTES 4096
#define BR_LOG_DEFAULT_MAX_INDEX_BYTES 10485760
#define BR_LOG_DEFAULT_RETENTION_MS INT64_C(604800000)

/* The defaults: 1 GiB segments, 7 days, 4096, 10 MiB, no forced flush,
 * retention 7 days by time and unlimited by size, cleanup.policy delete,
 * tombstones kept a day, no compaction lag, dirty ratio 0.5 (Kafka's). */
void br_log_config_defaults(struct br_log_config *c);

/* 0 when every field is in range, else KP_E_INVALID_ARG with *field naming
 * the first bad one (Kafka's name). field may be NULL. */
KP_MUST_CHECK int br_log_config_check(const struct br_log_config *c, const char **field);

struct br_log;

/*
 * Opens the log in dir (".../<topic>-<partition>", created when missing; its
 * parent must exist). *out is owned by the caller (br_log_close).
 *
 * Recovery: segments holding offsets at or after recovery_point are
 * validated batch by batch (length, magic 2, CRC32C and record count via
 * kp_batch_parse_lenient; offsets increasing; within 32-bit relative
 * offsets and positions) from their last index entry below the recovery
 * point, or from their start. The LAST segment is always scanned that way,
 * from its last index entry to EOF, even after a clean stop, so garbage
 * appended while the broker was down is found. At the first bad byte (a
 * partial batch cut at the end, garbage, a bad CRC) the segment is truncated,
 * every later segment deleted (and the truncated one too when it is left
 * empty and is not the first), each cut logged with br_warn (file, position,
 * bytes removed, reason). Index files that are missing, torn or inconsistent
 * (not increasing, positions beyond the segment, an entry that does not
 * match its batch) are rebuilt from the segment, which is then validated
 * whole. Stray .index/.timeindex files without a .log are removed.
 * Recovered segments that were cut or hold offsets at or above the recovery
 * point are fdatasync'ed (the others were before it moved, and a start after
 * a clean stop writes nothing); the recovery point is then the LEO.
 *
 * The leader-epoch-checkpoint is loaded; when it is malformed (br_warn) it
 * is rebuilt from the batches' PartitionLeaderEpoch. Entries beyond the LEO
 * are dropped.
 *
 * The log start offset is the first segment's base offset; the broker then
 * applies its log-start-offset-checkpoint with br_log_set_start_offset.
 *
 * files: the budget its segment files count in, shared by the logs of
 * the thread that uses them (not owned; it outlives the log). NULL: the
 * log keeps each segment file open once it has opened it.
 *
 * Returns 0, KP_E_INVALID_ARG (config), KP_E_NOMEM,
 * KP_ERR_KAFKA_STORAGE_ERROR.
 */
KP_MUST_CHECK int br_log_open(const char *dir, const struct br_log_config *cfg,
                              int64_t recovery_point, struct br_filecache *files,
                              struct br_log **out);

/* Moves every segment of the log under the budget `files` (NULL: out of
 * any), on the thread that uses that budget: for a log opened with NULL on
 * another thread (the I/O worker makes new topics' logs) and handed over. */
void br_log_set_files(struct br_log *log, struct br_filecache *files);

/* Closes the files (slices keep theirs open) and frees the log; no
 * fdatasync. The active segment gets its final time-index entry, as Kafka
 * does on close. NULL is a no-op. */
void br_log_close(struct br_log *log);

/* Takes effect for the next append (a smaller segment_bytes rolls then). */
KP_MUST_CHECK int br_log_set_config(struct br_log *log, const struct br_log_config *cfg);
const struct br_log_config *br_log_config(const struct br_log *log);

const char *br_log_dir(const struct br_log *log);
int64_t br_log_start_offset(const struct br_log *log);
int64_t br_log_end_offset(const struct br_log *log); /* LEO */
int64_t br_log_recovery_point(const struct br_log *log);
int64_t br_log_size_bytes(const struct br_log *log); /* all segments' .log bytes */
size_t br_log_segment_count(const struct br_log *log);
/* The active (last) segment's base offset: a move of it after an append
 * is a roll. */
int64_t br_log_active_base_offset(const struct br_log *log);
/* Producer snapshots below this offset may go (Kafka's
 * minSnapshotsOffsetToRetain): the snapshots of the last two segments and
 * of the segments from the recovery point's on are kept, none below the
 * log start. */
int64_t br_log_snapshot_keep_from(const struct br_log *log);

/* For retention: one segment, i in [0, br_log_segment_count). */
struct br_log_segment_info {
    uint64_t id; /* the segment's identity in this log (a replaced one has a new id) */
    int64_t base_offset;
    int64_t size_bytes;
    int64_t max_timestamp;    /* largest batch MaxTimestamp; -1 none or unknown */
    int64_t last_modified_ms; /* the .log file's mtime */
    bool active;              /* the last segment */
};
KP_MUST_CHECK int br_log_segment_info(const struct br_log *log, size_t i,
                                      struct br_log_segment_info *info);

/*
 * Appends one batch the caller validated strictly (kp_batch_parse) as the
 * leader. batch[0..len) must be exactly one batch; it is rewritten in place:
 * BaseOffset := LEO, PartitionLeaderEpoch := leader_epoch (no CRC change).
 *
 * Rolls first when the active segment is not empty and the batch would pass
 * segment_bytes, more than segment_ms passed since its first append (broker
 * clock now_ms), an index is full, or the batch's last offset would not fit
 * the segment's 32-bit relative offsets. Writes the batch with one pwrite
 * (EINTR and short writes retried; on failure the segment is cut back so no
 * partial batch stays), adds index entries every index_interval_bytes, and
 * assigns leader_epoch in the epoch cache when it is new (persisted). When
 * LEO - recovery point reaches flush_interval_messages, flushes.
 *
 * *base_offset: the batch's BaseOffset. Returns 0, KP_E_INVALID_ARG (not
 * one batch, offsets overflowing), KP_ERR_KAFKA_STORAGE_ERROR.
 */
KP_MUST_CHECK int br_log_append(struct br_log *log, uint8_t *batch, size_t len,
                                int32_t leader_epoch, int64_t now_ms, int64_t *base_offset);

/*
 * The follower's append: the batch keeps its BaseOffset (which must be >=
 * LEO; a gap is allowed, as after compaction) and its PartitionLeaderEpoch.
 * Same rolling, indexing, epoch and flush rules. Returns 0,
 * KP_E_INVALID_ARG (not one batch, or BaseOffset < LEO),
 * KP_ERR_KAFKA_STORAGE_ERROR.
 */
KP_MUST_CHECK int br_log_append_replica(struct br_log *log, const uint8_t *batch, size_t len,
                                        int64_t now_ms);

/*
 * Fetch support. A slice of file bytes to send with sendfile: whole batches
 * starting with the batch that contains `offset` (first_offset is its
 * BaseOffset, which may be below offset), only batches whose last offset is
 * < max_offset (the HW, exclusive; clamped to the LEO), at most max_bytes
 * unless min_one and the first batch is bigger (then exactly that batch),
 * and within ONE segment: the caller calls again from next_offset to go on
 * into the next one. len 0 (file NULL, next_offset = offset) when offset >=
 * max_offset or nothing fits.
 *
 * The slice holds a reference on the segment's file (release it with
 * br_log_slice_release) so it stays readable even if retention deletes the
 * segment meanwhile. Truncation (br_log_truncate_to) may still shorten the
 * file under a slice: a sendfile that hits EOF early must close the
 * connection.
 *
 * Returns 0, KP_ERR_OFFSET_OUT_OF_RANGE (offset < log start or > LEO),
 * KP_E_CORRUPT (a damaged batch header, logged), KP_ERR_KAFKA_STORAGE_ERROR
 * (a read failed, or the segment's file could not be reopened: see
 * br_segment_fd), KP_E_NOMEM.
 */
struct br_log_slice {
    struct br_fileref *file; /* owned reference, NULL when len == 0 */
    int64_t file_pos;
    int32_t len;
    int64_t first_offset;
    int64_t next_offset;
};
KP_MUST_CHECK int br_log_read(struct br_log *log, int64_t offset, int64_t max_offset,
                              int32_t max_bytes, bool min_one, struct br_log_slice *out);

/* Drops the slice's file reference; the slice becomes empty. */
void br_log_slice_release(struct br_log_slice *s);

/*
 * ListOffsets by time: the first offset >= the log start whose record
 * timestamp is >= ts, found through the time index, a scan of batch headers
 * for the first batch with MaxTimestamp >= ts, then that batch's records
 * (when they cannot be decoded, the batch's BaseOffset and MaxTimestamp).
 * *offset = -1 and *timestamp = -1 when there is none. The caller limits the
 * answer to the HW. Returns 0, KP_E_CORRUPT, KP_E_NOMEM,
 * KP_ERR_KAFKA_STORAGE_ERROR.
 */
KP_MUST_CHECK int br_log_offset_for_timestamp(struct br_log *log, int64_t ts, int64_t *offset,
                                              int64_t *timestamp);

/* fdatasync of everything unflushed (and of the directory after segment
 * files were created or removed); recovery point := LEO. */
KP_MUST_CHECK int br_log_flush(struct br_log *log);

/* br_log_flush when br_log_flush_due. */
KP_MUST_CHECK int br_log_maybe_flush(struct br_log *log, int64_t now_ms);

/*
 * The same flush with its fdatasyncs on another thread, in three steps:
 * br_log_flush_begin (reactor) writes the index entries still in memory
 * only and takes a descriptor of every file to sync; br_log_flush_run
 * (any thread; touches nothing but the flush) syncs them and the directory;
 * br_log_flush_end (reactor) moves the recovery point to the LEO the flush
 * began at (unless the log was truncated meanwhile), clears what was synced
 * and not written again, and frees the flush. A log closed meanwhile lets
 * its flush end on its own (end only frees it). One flush per log at once.
 */
struct br_log_flush;

/* Whether the log has something unflushed and either rolled a segment
 * since the last flush began (Kafka's Log.roll flushes the segment it
 * closed at once, off its append path) or has waited unflushed for
 * flush_interval_ms; never while a flush is under way. */
bool br_log_flush_due(const struct br_log *log, int64_t now_ms);
/* *out owned by the caller until br_log_flush_end. 0, KP_E_NOMEM,
 * KP_E_INVALID_ARG (a flush is under way), KP_ERR_KAFKA_STORAGE_ERROR
 * (the log is failed, or fails now: logged). */
KP_MUST_CHECK int br_log_flush_begin(struct br_log *log, int64_t now_ms, struct br_log_flush **out);
void br_log_flush_run(struct br_log_flush *f);
/* 0, or KP_ERR_KAFKA_STORAGE_ERROR: a sync failed (logged) and the log is
 * failed. Frees f. */
KP_MUST_CHECK int br_log_flush_end(struct br_log_flush *f);

/*
 * Write-behind (log_manager.h says why): the log's page cache is kept warm
 * and bounded. With a window W > 0, writeback of the .log bytes that lie W
 * or more behind the end of the log (counted in bytes, across segments) is
 * started (sync_file_range SYNC_FILE_RANGE_WRITE), and the pages of the
 * bytes 2W or more behind are written back and waited for
 * (SYNC_FILE_RANGE_WAIT_BEFORE|WRITE|WAIT_AFTER), then dropped
 * (POSIX_FADV_DONTNEED, which drops clean pages only). Ranges go in steps
 * of W/2 (br_log_wb_step), whole segments once they are wholly behind.
 * Nothing here moves the recovery point or promises durability: that stays
 * the flush's (br_log_flush*), which is not changed.
 *
 * The log counts the bytes appended; once a step more came since the last
 * job began, it calls ops->due(ctx) at the end of the append (on the
 * append's thread) unless a job is away; once, until the next begin. The caller then begins a job (now
 * or later): br_log_wb_begin (the log's thread) records the ranges, takes
 * a reference on each file and moves the segments' marks
 * (br_segment.wb_started, wb_dropped); br_log_wb_run (any thread; touches
 * nothing but the job) makes the calls; br_log_wb_end (the log's thread)
 * drops the references and frees it. A segment deleted, rolled, truncated
 * or swapped by the cleaner meanwhile is harmless: the job holds its
 * file, and the calls on bytes no longer there do nothing; a truncation
 * lowers the marks. A sync_file_range that reports an I/O error fails the
 * log (the error may be gone for the next fdatasync of the same
 * descriptor), as a failed flush does. A log closed meanwhile lets the
 * job end on its own. One job per log at once.
 */
struct br_log_wb;
struct br_log_wb_ops {
    void (*due)(void *ctx);
};
/* window <= 0: off (ops and ctx forgotten). Turning it on counts what
 * the log holds now as done (only what is appended from here is written
 * behind); changing the window keeps the marks. ops and ctx are the log's
 * until changed. */
void br_log_set_writebehind(struct br_log *log, int64_t window, const struct br_log_wb_ops *ops,
                            void *ctx);
int64_t br_log_wb_window(const struct br_log *log);
/* The step for window w: w / 2, at least 64 KiB. */
int64_t br_log_wb_step(int64_t window);
/* Bytes ever appended to the log (this open): activity, for the budget. */
int64_t br_log_wb_appended(const struct br_log *log);
/* *out NULL when there is nothing to do (or the window is off, the log
 * failed). 0, KP_E_NOMEM, KP_E_INVALID_ARG (a job is away). */
KP_MUST_CHECK int br_log_wb_begin(struct br_log *log, struct br_log_wb **out);
void br_log_wb_run(struct br_log_wb *w);
/* 0, or KP_ERR_KAFKA_STORAGE_ERROR: writeback failed (logged) and the log
 * is failed. Frees w. A log whose appends passed the next step while w was
 * away is due again (ops->due, from this call). */
KP_MUST_CHECK int br_log_wb_end(struct br_log_wb *w);
/* What a job holds (for tests): its ranges in the order begin made them. */
struct br_log_wb_range {
    struct br_fileref *file; /* owned reference */
    uint64_t seg_id;
    int64_t off;
    int64_t len;
    bool drop; /* written back, waited for and dropped; else writeback started */
};
size_t br_log_wb_count(const struct br_log_wb *w);
const struct br_log_wb_range *br_log_wb_get(const struct br_log_wb *w, size_t i);

/*
 * For replication: drops every offset >= offset, whole batches (a batch
 * straddling offset goes whole, so afterwards LEO <= offset), whole
 * segments included; the epoch cache loses the entries starting at or after
 * the new LEO; the recovery point is lowered to it. offset >= LEO: nothing
 * happens. offset < log start: the log is emptied and restarts at offset
 * (Kafka's truncateFullyAndStartAt). Returns 0, KP_E_INVALID_ARG (offset <
 * 0), KP_E_CORRUPT, KP_ERR_KAFKA_STORAGE_ERROR.
 */
KP_MUST_CHECK int br_log_truncate_to(struct br_log *log, int64_t offset);

/* Deletes every segment and starts an empty log at offset (log start = LEO =
 * recovery point = offset); the epoch cache is cleared. */
KP_MUST_CHECK int br_log_truncate_fully_and_start_at(struct br_log *log, int64_t offset);

/*
 * Retention: deletes the segments whose offsets all lie below offset (the
 * next segment's base offset <= offset). When that takes in the active
 * segment too (offset >= LEO and it is not empty), a new empty segment is
 * rolled at the LEO first, so the log always keeps one. The log start
 * offset moves to the first remaining segment's base offset when that is
 * larger, the epoch cache follows it, and producer snapshots below it
 * are deleted (Kafka's truncateHead). *deleted (may be NULL): how many.
 * The caller chooses offset (time or size limits, at most the HW, or
 * br_log_start_offset after DeleteRecords).
 * Returns 0 or KP_ERR_KAFKA_STORAGE_ERROR (what was deleted stays deleted).
 */
KP_MUST_CHECK int br_log_delete_segments_before(struct br_log *log, int64_t offset,
                                                size_t *deleted);

/* DeleteRecords: the logical start moves forward to offset (<= LEO; a lower
 * value than the current start is a no-op); reads below it answer
 * OFFSET_OUT_OF_RANGE; segments wholly below it go at the next
 * br_log_delete_segments_before(log, br_log_start_offset(log)). Persisting
 * it (log-start-offset-checkpoint) is the broker's job. Returns 0 or
 * KP_ERR_OFFSET_OUT_OF_RANGE. */
KP_MUST_CHECK int br_log_set_start_offset(struct br_log *log, int64_t offset);

/*
 * Leader epochs (Kafka's LeaderEpochFileCache), persisted in
 * leader-epoch-checkpoint in the partition dir, written atomically on every
 * change. assign: a no-op when epoch is the latest and start_offset not
 * below its start; otherwise later or conflicting entries are removed and
 * (epoch, start_offset) appended. Returns 0, KP_E_INVALID_ARG (negative),
 * KP_E_NOMEM, KP_ERR_KAFKA_STORAGE_ERROR.
 */
KP_MUST_CHECK int br_log_epoch_assign(struct br_log *log, int32_t epoch, int64_t start_offset);
/* The same in the cache at once, the file written by the next flush (as an
 * append's new epoch is): for a replica that becomes leader, whose epoch
 * starts at its log end before it appends anything (Kafka 2.0.1's
 * KAFKA-7415), without a file write on the caller's thread. */
KP_MUST_CHECK int br_log_epoch_assign_deferred(struct br_log *log, int32_t epoch,
                                               int64_t start_offset);

/* The latest epoch, -1 when none. */
int32_t br_log_latest_epoch(const struct br_log *log);

/* OffsetsForLeaderEpoch (KIP-101/279): see br_leader_epochs_end_offset_for
 * in leader_epoch.h; (-1, -1) for an unknown epoch. Always returns 0. */
KP_MUST_CHECK int br_log_end_offset_for_epoch(const struct br_log *log, int32_t epoch,
                                              int32_t *epoch_out, int64_t *end_offset);

/*
 * Batch headers from the batch containing from_offset (or the first after
 * it) to the LEO, across segments: for rebuilding producer state, dumps.
 * Headers are not CRC-checked (the batches were when written). The
 * iterator holds a reference on the file it reads; appends while it is open
 * are seen, truncation ends it early. *it owned by the caller.
 * br_log_iter_next: 0 with *h, KP_ITER_END, KP_E_CORRUPT,
 * KP_ERR_KAFKA_STORAGE_ERROR; errors stick. open: 0,
 * KP_ERR_OFFSET_OUT_OF_RANGE (from_offset > LEO), KP_E_NOMEM.
 */
struct br_log_iter;
KP_MUST_CHECK int br_log_iter_open(struct br_log *log, int64_t from_offset,
                                   struct br_log_iter **it);
KP_MUST_CHECK int br_log_iter_next(struct br_log_iter *it, struct kp_batch_header *h);
void br_log_iter_close(struct br_log_iter *it);

/*
 * The log cleaner (cleaner.h). br_log_segment_file: a new reference on
 * segment i's .log file (NULL when i is out of range or the file cannot be
 * reopened), which keeps its bytes readable for a cleaner thread (which uses
 * the descriptor only, never the reference count); the segment is
 * identified by its id (br_log_segment_info).
 *
 * br_log_swap_cleaned replaces runs of old segments with cleaned ones
 * (Kafka's replaceSegments). groups[0..n) are in offset order; each names a
 * run of consecutive old segments as the job saw them (id, base offset,
 * file reference, size) and a cleaned segment written under the names
 * "<base>.{log,index,timeindex}.cleaned" (segment.h), flushed, with the
 * run's first base offset, ending where the run ends. First every run is
 * checked: when the log no longer holds one of them unchanged (retention or
 * DeleteRecords removed segments, a run now reaches the active segment),
 * nothing is swapped and 0 is returned with *swapped == 0. Otherwise the
 * groups are swapped one after the other, oldest first: the cleaned files
 * are renamed to ".swap" (the decision: from here a restart completes the
 * swap; see br_log_open), the directory is fsync'ed, the old files are
 * removed (fetch slices keep their descriptors), the ".swap" files take the
 * segment names, and the cleaned segment takes the run's place in the log.
 * A crash at any point thus leaves each group old or new, and a group is
 * new only when every group before it is. *swapped counts the groups
 * swapped; their `cleaned` becomes NULL (owned by the log). The others stay
 * the caller's to discard (br_segment_unlink_as ".cleaned" and ".swap",
 * br_segment_free). Returns 0 or KP_ERR_KAFKA_STORAGE_ERROR.
 *
 * br_log_open finishes an interrupted swap: "*.cleaned" files are removed;
 * a "<B>.log.swap" replaces every segment whose base offset lies in [B, the
 * end of its last batch) and is renamed to "<B>.log" (its index .swap files
 * too when present; otherwise the indexes are rebuilt).
 */
struct br_segment;
struct br_log_swap_old {
    uint64_t id;
    int64_t base_offset;
    struct br_fileref *file;
    int64_t size;
};
struct br_log_swap_group {
    const struct br_log_swap_old *old;
    size_t nold;
    struct br_segment *cleaned;
};
struct br_fileref *br_log_segment_file(struct br_log *log, size_t i);
KP_MUST_CHECK int br_log_swap_cleaned(struct br_log *log, struct br_log_swap_group *groups,
                                      size_t n, size_t *swapped);

/* Delete topic: closes the log and deletes its directory
 * (br_log_dir_delete). The log is freed whatever the result. Returns 0,
 * KP_E_INVALID_ARG or KP_ERR_KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_log_delete(struct br_log *log);

/*
 * The name a partition directory takes while it is deleted, Kafka's
 * (Log.logDeleteDirName): `<topic>-<partition>.<32 hex digits>-delete`,
 * random digits, the topic cut so that the name fits in 255 bytes (as Kafka
 * does from 2.4 on, KAFKA-4893; Kafka 2.0 did not cut it, and a topic of
 * 247-249 characters could not be deleted). The full path (parent/name) goes
 * to out. Returns 0 or KP_E_INVALID_ARG (out too small).
 */
KP_MUST_CHECK int br_log_delete_dir_name(const char *parent, const char *topic, int32_t partition,
                                         char *out, size_t outlen);

/* Renames the log's directory to `target` (which must not exist); the log
 * stays open and usable (its files are reached through the directory's
 * descriptor) and br_log_dir follows. Deleting a topic renames first, so
 * that its data is no partition's before the metadata forgets it; moving
 * back undoes it. Returns 0 or KP_ERR_KAFKA_STORAGE_ERROR (logged); on
 * failure nothing changed. The caller fsyncs the parent directory. */
KP_MUST_CHECK int br_log_move_dir(struct br_log *log, const char *target);

/* True for the name of a directory that holds a deleted partition (Kafka's
 * `...-delete`, and Samsa's older `<topic>-<partition>-delete`): never a
 * partition of its own, removed at start-up. */
bool br_log_dir_is_deleted(const char *name);

/* Deletes the partition directory dir: renamed to its delete name
 * (br_log_delete_dir_name; kept when it has one already) and removed. By
 * path alone, so any thread may do it once the log is closed (descriptors
 * still open elsewhere, such as fetch slices, keep their files readable).
 * Returns 0, KP_E_INVALID_ARG or KP_ERR_KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_log_dir_delete(const char *dir);

/* Removes a partition directory and the regular files in it (for leftover
 * "-delete" directories found at start-up). A missing dir is fine. */
KP_MUST_CHECK int br_log_dir_remove(const char *path);

/*
 * Splits a partition directory name "<topic>-<partition>" at the LAST '-'
 * (topics may contain '-'). The topic must be a valid Kafka topic name
 * (written NUL-terminated to topic[0..topic_cap)), the partition a decimal
 * in [0, INT32_MAX] without sign or leading zeros. Returns 0 or
 * KP_E_INVALID_ARG.
 */
KP_MUST_CHECK int br_log_dir_parse_name(const char *name, char *topic, size_t topic_cap,
                                        int32_t *partition);

#endif
