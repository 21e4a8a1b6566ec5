/*
 * samsa-broker: one log segment, the files
 *
 *     <20-digit base offset>.log        batches, stored verbatim
 *     <20-digit base offset>.index      8-byte entries: int32 relative offset
 *                                       (of a batch's last record), int32
 *                                       position of that batch (big-endian)
 *     <20-digit base offset>.timeindex  12-byte entries: int64 timestamp (the
 *                                       largest MaxTimestamp so far), int32
 *                                       relative offset of the batch that has it
 *
 * with both indexes kept in memory as sorted arrays (the files are read
 * whole when the segment is opened; lookups never touch them). An index
 * entry is added for a batch once more than index.interval.bytes were
 * appended since the previous entry (Kafka's rule), so lookups land at most
 * about one interval before the batch they want.
 *
 * Descriptors: a segment keeps none for its indexes. New entries wait in
 * memory (the arrays' tail past oidx_synced / tidx_synced) and are written
 * to the files, through a descriptor opened for that and closed after, when
 * the segment is flushed, sealed (rolled, closed), truncated or recovered.
 * That is safe because start-up trusts index entries only below the
 * recovery point, which moves only after a flush wrote and synced them:
 * above it the segment is scanned and its entries rebuilt. The .log's
 * descriptor is held through a file-cache entry (fileref.h): it may be
 * closed by the budget at any time the segment is not in use and is
 * reopened by name (checked to be the same file, no shorter than the
 * segment) when it is needed again; a reopen that fails is a storage error
 * of this segment alone, logged once until a reopen succeeds.
 *
 * Internal to the log module (log*.c). Everything read from the files is
 * untrusted: loading checks each index entry, scanning checks each batch.
 * @locality one thread per segment object: the reactor for the log's
 * segments; a log cleaner thread writes a new segment of its own (nothing
 * here is shared between segments) and hands it to the reactor.
 */
#ifndef SAMSA_BROKER_SEGMENT_H
#define SAMSA_BROKER_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <samsa-protocol/err.h>
#include <samsa-protocol/record_batch.h>

#include "base/fileref.h"
#include "storage/leader_epoch.h"

#define BR_OFFSET_ENTRY_SIZE 8
#define BR_TIME_ENTRY_SIZE 12
/* "00000000000000000000.timeindex" plus NUL. */
#define BR_SEGMENT_NAME_MAX 40

struct br_offset_entry {
    int32_t rel; /* last offset of the batch - base offset */
    int32_t pos; /* file position of the batch */
};

struct br_time_entry {
    int64_t ts;  /* largest MaxTimestamp up to this batch */
    int32_t rel; /* last offset of the batch holding it - base offset */
};

struct br_segment {
    int64_t base_offset;
    int64_t size;                   /* bytes in the .log file */
    int64_t next_offset;            /* one past the last offset held; -1 until scanned */
    struct br_filecache_entry file; /* the .log: file.file, an owned reference,
                                     * NULL while the budget has it closed */
    struct br_filecache *files;     /* the budget it counts in; NULL: the file
                                     * stays open (a cleaner thread's segment) */
    uint64_t id;                    /* the log's name for it, stable across reopens */
    const char *tail;               /* "" or a BR_SEGMENT_*_TAIL: its files' names */
    dev_t dev;                      /* the .log's identity, checked at a reopen */
    ino_t ino;
    int reopen_failure; /* why the last reopen failed (logged once
                         * per cause): 0, an errno, or < 0 */

    struct br_offset_entry *oidx; /* owned */
    size_t oidx_n;
    size_t oidx_cap;
    size_t oidx_synced;         /* leading entries known to be in the file */
    size_t oidx_unchecked;      /* leading entries read from the file, not yet
                                 * matched with their batches (see lookup) */
    bool index_suspect;         /* an entry did not match: lookups scan from 0 */
    int64_t oidx_file_len;      /* the file's length in bytes */
    bool oidx_unsynced;         /* the file was written since its last fdatasync */
    struct br_time_entry *tidx; /* owned */
    size_t tidx_n;
    size_t tidx_cap;
    size_t tidx_synced;
    size_t tidx_unchecked; /* leading entries read from the file, not yet matched */
    bool time_suspect;     /* a time entry did not match: time lookups scan from 0 */
    int64_t tidx_file_len;
    bool tidx_unsynced;

    int64_t bytes_since_index; /* appended since the last offset-index entry */
    int64_t max_timestamp;     /* -1: no timestamp seen */
    int64_t offset_of_max_timestamp;
    bool max_timestamp_known; /* false for an unscanned segment without a time index */
    int64_t first_append_ms;  /* broker clock at the first append, -1 unknown */
    bool dirty;               /* the .log written since its last fdatasync */
    uint64_t writes;          /* bumped at each write of its files (a flush off the
                               * reactor clears the flags only if none came since) */
    bool io_failed;           /* a write failed and the files may not match memory */
    bool damage_logged;       /* a damaged batch at damage_pos was logged (log_read.c) */
    int64_t damage_pos;
    /* write-behind (log_flush.c, br_log_wb_begin): writeback of the .log was
     * started below wb_started, its pages written back and dropped below
     * wb_dropped; both at most size */
    int64_t wb_started;
    int64_t wb_dropped;
};

/* "<base>.<suffix>" with the base offset in 20 zero-padded digits. */
void br_segment_file_name(int64_t base_offset, const char *suffix, char *buf, size_t cap);

/* The log cleaner's names: "<base>.<suffix><tail>", tail ".cleaned" while a
 * cleaned segment is written, ".swap" once the swap is decided (log.h). */
#define BR_SEGMENT_TMP_NAME_MAX 64
#define BR_SEGMENT_CLEANED_TAIL ".cleaned"
#define BR_SEGMENT_SWAP_TAIL ".swap"
void br_segment_file_name_as(int64_t base_offset, const char *suffix, const char *tail, char *buf,
                             size_t cap);

/* Splits "<20 digits>.<suffix>"; true with *base_offset and *suffix (a
 * pointer into name, after the dot) when name has that form. */
bool br_segment_parse_file_name(const char *name, int64_t *base_offset, const char **suffix);

/* A new empty segment; its files are created (a non-empty .log of that name
 * is an error) and the .log stays open, counted in `files` (may be NULL).
 * dir names the directory (later reopens go through it, and messages).
 * *out owned by the caller. */
KP_MUST_CHECK int br_segment_create(int dir_fd, const char *dir, int64_t base_offset,
                                    struct br_filecache *files, struct br_segment **out);

/*
 * Opens an existing segment and loads its indexes. limit_offset is the next
 * segment's base offset (INT64_MAX for the last one): no entry may reach it.
 * When an index file is missing, torn or inconsistent, its entries are
 * dropped and `problem` (cap bytes) says why; the caller must then recover
 * the segment from position 0. problem[0] == '\0' when both loaded.
 */
KP_MUST_CHECK int br_segment_open(int dir_fd, const char *dir, int64_t base_offset,
                                  int64_t limit_offset, struct br_filecache *files,
                                  struct br_segment **out, char *problem, size_t problem_cap);

/* Drops the segment's file (the .log descriptor lives on in other
 * references) and frees s. NULL is a no-op. */
void br_segment_free(struct br_segment *s);

/* Moves s under the budget `files` (NULL: out of any, its file then kept
 * open). For a segment made on a cleaner thread, once the reactor owns it
 * and its files carry its names. */
void br_segment_set_files(struct br_segment *s, struct br_filecache *files);

/*
 * The .log's descriptor, reopened when the budget closed it, and s becomes
 * the most recently used. The descriptor stays valid until a file of
 * another segment of the same budget is opened (take a reference with
 * br_segment_file to keep it longer). 0 or KP_ERR_KAFKA_STORAGE_ERROR (the
 * file is gone, is another file, is shorter than the segment, or cannot be
 * opened: logged once until a reopen succeeds).
 */
KP_MUST_CHECK int br_segment_fd(struct br_segment *s, const char *dir, int *fd);

/* A new reference on the .log (reopened as br_segment_fd does), which keeps
 * it open whatever the budget does: for a fetch slice, an iterator. */
KP_MUST_CHECK int br_segment_file(struct br_segment *s, const char *dir, struct br_fileref **out);

/* The .log's mtime in milliseconds (without opening it when it is closed). */
KP_MUST_CHECK int br_segment_mtime_ms(const struct br_segment *s, const char *dir, int64_t *ms);

/* Removes the segment's three files (missing ones are fine). */
KP_MUST_CHECK int br_segment_unlink(int dir_fd, const char *dir, int64_t base_offset);

/* The cleaner's variants: a new empty segment whose files are named with
 * `tail` (one of the BR_SEGMENT_*_TAIL strings; existing files are
 * truncated), in no budget; removing such files; renaming the three files
 * of s from its tail to another (a static string), the .log last: s then
 * names its files with the new tail (s->tail follows each rename done). */
KP_MUST_CHECK int br_segment_create_as(int dir_fd, const char *dir, int64_t base_offset,
                                       const char *tail, struct br_segment **out);
KP_MUST_CHECK int br_segment_unlink_as(int dir_fd, const char *dir, int64_t base_offset,
                                       const char *tail);
KP_MUST_CHECK int br_segment_rename_files(struct br_segment *s, int dir_fd, const char *dir,
                                          const char *to_tail);

struct br_recover_result {
    bool cut;           /* bytes were removed from the end */
    int64_t cut_pos;    /* where */
    int64_t cut_bytes;  /* how many */
    bool index_rebuilt; /* an index entry did not match and the scan restarted at 0 */
    char reason[160];   /* why the cut, when cut */
};

/*
 * Validates the segment batch by batch (length, magic 2, CRC32C and record
 * count via kp_batch_parse_lenient; offsets increasing from base_offset and
 * below limit_offset; relative offset and position within 32 bits) from the
 * last index entry whose offset is below recovery_point (INT64_MIN: from
 * position 0) to the end of the file. Index entries after the starting one
 * are rebuilt as appends make them; a starting entry that does not match
 * its batch restarts the scan at 0. At the first bad byte the file is
 * truncated and the cut logged with br_warn. Batches whose
 * PartitionLeaderEpoch is above epochs' latest are assigned to it (epochs
 * may be NULL). Afterwards next_offset, the indexes (files included) and the
 * timestamps are exact; the segment is dirty (the next flush fdatasyncs it)
 * when it was cut or holds offsets at or above recovery_point (which may
 * have reached the page cache only). Returns 0, KP_E_NOMEM or
 * KP_ERR_KAFKA_STORAGE_ERROR.
 */
KP_MUST_CHECK int br_segment_recover(struct br_segment *s, const char *dir, int64_t recovery_point,
                                     int64_t limit_offset, int32_t index_interval,
                                     struct br_leader_epochs *epochs,
                                     struct br_recover_result *res);

/*
 * Appends one batch at the end with pwrite (retried on EINTR and short
 * writes); a failed write is cut back off the file. Then indexes it in
 * memory (the index files are written at the next flush or seal).
 * last_offset and max_timestamp are the batch's. Returns 0 or
 * KP_ERR_KAFKA_STORAGE_ERROR (the write failed, or the .log could not be
 * reopened); s->io_failed is set when the files may no longer match memory
 * (a failed cut-back).
 */
KP_MUST_CHECK int br_segment_append(struct br_segment *s, const char *dir, const uint8_t *batch,
                                    size_t len, int64_t last_offset, int64_t max_timestamp,
                                    int32_t index_interval);

/*
 * Drops every batch whose last offset is >= offset (so a batch straddling
 * offset goes whole), with the index entries that point at them, and
 * recomputes next_offset and the timestamps. Returns 0, KP_E_CORRUPT (a
 * damaged batch header on the way), KP_ERR_KAFKA_STORAGE_ERROR.
 */
KP_MUST_CHECK int br_segment_truncate(struct br_segment *s, const char *dir, int64_t offset,
                                      int32_t index_interval);

/* When the segment stops being the active one (roll, close): adds a final
 * time-index entry for its largest timestamp, as Kafka does, and writes the
 * entries still in memory only to the index files (no fdatasync). */
KP_MUST_CHECK int br_segment_seal(struct br_segment *s, const char *dir);

/* Writes the index entries still in memory only, then fdatasync of the
 * three files (when anything was written since the last one). */
KP_MUST_CHECK int br_segment_flush(struct br_segment *s, const char *dir);

/*
 * A flush whose fdatasyncs run on another thread, in three steps:
 * br_segment_sync_begin on the reactor writes the index entries still in
 * memory only and takes a descriptor of each file written since its last
 * fdatasync; br_segment_sync_run, on any thread, fdatasyncs them;
 * br_segment_sync_end, on the reactor, clears the segment's flags, unless
 * it was written again meanwhile (it stays to be flushed by the next one),
 * and lets the descriptors go. The segment may be gone by then (removed,
 * cleaned, its log closed): br_segment_sync_release only lets them go.
 */
struct br_segment_sync {
    uint64_t id;     /* the segment's, to find it again */
    uint64_t writes; /* its write count when taken */
    int64_t base_offset;
    const char *tail;            /* its files' names, for a message */
    struct br_fileref *files[3]; /* .log, .index, .timeindex; NULL: not to sync */
    bool failed;                 /* an fdatasync failed (logged by run) */
};

/* 0, or KP_ERR_KAFKA_STORAGE_ERROR (logged; io_failed set; *out holds
 * nothing). With nothing to sync, *out has no file. */
KP_MUST_CHECK int br_segment_sync_begin(struct br_segment *s, const char *dir,
                                        struct br_segment_sync *out);
/* fdatasync of each file taken; any thread. Whether all succeeded. */
bool br_segment_sync_run(struct br_segment_sync *ss, const char *dir);
/* s the segment ss was taken from (same id) or NULL; releases ss. */
void br_segment_sync_end(struct br_segment *s, struct br_segment_sync *ss);
void br_segment_sync_release(struct br_segment_sync *ss);

/* True when either index holds max_index_bytes worth of entries. */
bool br_segment_index_full(const struct br_segment *s, int32_t max_index_bytes);

/* Position of the batch to start scanning from to find offset. An entry read
 * from the .index file (trusted at open: the segment was flushed) is matched
 * with the header of the batch it points at before it is used; one that does
 * not match is logged, and from then on the segment's lookups start at
 * position 0 (correct, slower) until the index is rebuilt at a start-up.
 * When the .log cannot be read to check the entry, this lookup answers 0
 * and the entry stays unchecked. */
int64_t br_segment_lookup(struct br_segment *s, const char *dir, int64_t offset);

/* An offset at or before the first batch whose MaxTimestamp >= ts (the time
 * index's floor entry for ts), base_offset when none. An entry read from the
 * .timeindex file is used only once the batch holding its offset is found to
 * have its timestamp as MaxTimestamp (what the broker writes); one that does
 * not is logged, and the segment's time lookups answer base_offset from then
 * on (the caller scans the segment). */
int64_t br_segment_time_lookup(struct br_segment *s, const char *dir, int64_t ts);

/* ------------------------------------------------------------ reading */

/* pread until n bytes or end of file; *got = bytes read. 0, or -1 with
 * errno set. */
int br_pread_full(int fd, void *buf, size_t n, int64_t pos, size_t *got);

/* Walks batch headers of a segment that was validated when it was written
 * (kp_batch_peek: no CRC), through a caller-provided read window. */
struct br_cursor {
    int fd;
    int64_t pos;  /* the batch br_cursor_peek returns */
    int64_t end;  /* stop here */
    uint8_t *buf; /* caller-owned window, cap >= KP_BATCH_HEADER_SIZE */
    size_t cap;
    int64_t buf_pos; /* file position of buf[0] */
    size_t buf_len;
};

void br_cursor_init(struct br_cursor *c, int fd, int64_t pos, int64_t end, uint8_t *buf,
                    size_t cap);

/*
 * The header of the batch at c->pos and its total size; the caller moves on
 * with c->pos += size. Returns 0, KP_ITER_END at c->end (or when the file
 * ends exactly there), KP_E_CORRUPT (a header that does not parse, a batch
 * running past c->end, a negative LastOffsetDelta), or
 * KP_ERR_KAFKA_STORAGE_ERROR (errno set).
 */
KP_MUST_CHECK int br_cursor_peek(struct br_cursor *c, struct kp_batch_header *h, size_t *size);

#endif
