/*
 * samsa-broker: a log's model and the functions its files share (log.c:
 * the config, the accessors, the directory's descriptor, the segment list
 * and the epochs; log_open.c: opening a log from its files and closing it;
 * log_append.c: appends and rolls; log_flush.c: the flush, on the reactor
 * or off it, and write-behind; log_read.c: reads, time lookups and
 * iterators; log_trim.c: truncation, retention and the cleaner's swap;
 * log_dir.c: the directory's removal, renaming and names). Not for the
 * log's users: they include log.h.
 */
#ifndef SAMSA_BROKER_STORAGE_LOG_INTERNAL_H
#define SAMSA_BROKER_STORAGE_LOG_INTERNAL_H

#include "storage/leader_epoch.h"
#include "storage/log.h"
#include "storage/segment.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EPOCH_FILE "leader-epoch-checkpoint"
#define EPOCH_FILE_TMP "leader-epoch-checkpoint.tmp"
/* A leader-epoch-checkpoint with more entries is rejected (and rebuilt). */
#define EPOCH_FILE_MAX_ENTRIES ((size_t)1 << 20)
/*
 * Read window for walking batch headers (br_cursor). Each walk declares its
 * window on its own stack, as the segment's walks do, rather than the log
 * carrying one: 8 KiB in every struct br_log was 8 MiB of resident memory
 * per 1,000 partitions for a buffer that lives only while one function
 * walks one segment. A stack window is private to the call, so it is
 * correct on any thread (the reactor thread runs every walk of the log_*.c files;
 * the cleaner threads walk segments with windows of their own, cleaner.c)
 * and no walk can overwrite another's window, whatever it calls while its
 * cursor is live. An iterator (br_log_iter) outlives the call that opens
 * it, so it keeps its window in its own allocation.
 */
#define CURSOR_WINDOW 8192
/* offset_for_timestamp decodes the records of batches up to these sizes;
 * larger ones are answered at batch granularity. */
#define TS_MAX_BATCH ((size_t)64 << 20)
#define TS_MAX_DECOMPRESSED ((size_t)64 << 20)
/* Room left in PATH_MAX for "/<segment or checkpoint file name>". */
#define DIR_MAX (PATH_MAX - 64)

struct br_log {
    char *dir; /* owned */
    /* The directory's descriptor exists only while an operation that works
     * on names in it runs (open, roll, removal, flush, swap): a partition
     * keeps no descriptor of its own between them. dir_hold/dir_release. */
    int dir_fd;
    unsigned dir_holds;
    struct br_filecache *files; /* the budget of open segment files; not owned */
    uint64_t last_seg_id;
    struct br_log_config cfg;
    struct br_segment **segs; /* owned, sorted by base offset, never empty once open */
    size_t nsegs;
    size_t cap;
    int64_t start_offset;
    int64_t leo;
    int64_t recovery_point;
    int64_t size_bytes;
    int64_t first_unflushed_ms;    /* broker clock of the oldest unflushed append, -1 */
    uint64_t dir_changes;          /* files created or removed, counted */
    uint64_t dir_synced;           /* dir_changes at the last dir fsync begun and done */
    uint64_t truncations;          /* counted: a flush begun before one moves no recovery point */
    struct br_log_flush *flushing; /* the flush off the reactor under way, or NULL */
    bool epochs_unsaved;           /* the epoch cache has entries leader-epoch-checkpoint lacks
                                    * (written by the next flush, before the recovery point moves) */
    bool rolled;                   /* a segment was rolled since the last flush began */
    bool failed;                   /* an I/O failure left the files uncertain */
    struct br_leader_epochs epochs;
    /* write-behind (log.h) */
    int64_t wb_window;               /* 0: off */
    int64_t wb_appended;             /* bytes appended since the open */
    int64_t wb_next;                 /* wb_appended at which a job is due */
    const struct br_log_wb_ops *wb_ops;
    void *wb_ctx;
    struct br_log_wb *wb; /* the job away, or NULL */
};

struct br_log_flush {
    struct br_log *log; /* NULL once the log is closed */
    char *dir;          /* owned copy: messages, after the log is gone */
    /* the epoch cache to write first, or NULL; a write on the reactor made
     * meanwhile (newer) cancels it, under mu */
    struct br_epoch_entry *epochs;
    size_t nepochs;
    pthread_mutex_t mu;
    bool epochs_cancelled;
    bool epochs_written; /* tried by run, under mu */
    int64_t upto;        /* the LEO when begun */
    int64_t begun_ms;
    uint64_t truncations;
    uint64_t dir_changes;
    struct br_fileref *dir_file; /* the directory when it needs an fsync, or NULL */
    bool failed;
    size_t nsegs;
    struct br_segment_sync segs[]; /* the segments with something to sync */
};

struct br_log_iter {
    struct br_log *log;
    struct br_fileref *file; /* owned reference; NULL when exhausted */
    uint64_t seg_id;
    int64_t seg_base;
    int64_t seen_end; /* the segment's size when last looked at */
    int64_t from;
    int err;
    struct br_cursor c;
    uint8_t buf[CURSOR_WINDOW];
};

/* log.c */
struct br_segment *log_active(const struct br_log *log);
int log_dir_hold(struct br_log *log);
void log_dir_release(struct br_log *log);
int log_epoch_path(const struct br_log *log, char *buf, size_t cap);
size_t log_floor_segment(const struct br_log *log, int64_t offset);
int log_persist_epochs(struct br_log *log);
int log_push_segment(struct br_log *log, struct br_segment *s);
int log_remove_segment(struct br_log *log, size_t i);

/* log_append.c */
int log_roll(struct br_log *log);

/* log_flush.c */
void log_wb_clamp(struct br_log *log);
void log_wb_forget(struct br_log *log);
void log_wb_tell_due(struct br_log *log);

/* log_open.c */
void log_free(struct br_log *log);

#endif
