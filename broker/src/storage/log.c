/* samsa-broker: a partition's log (see log.h). */
#define _GNU_SOURCE

#include "storage/log.h"

#include "base/logging.h"
#include "storage/checkpoint.h"
#include "storage/leader_epoch.h"
#include "storage/producer_snapshot.h"
#include "storage/segment.h"

#include <samsa-protocol/alloc.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EPOCH_FILE "leader-epoch-checkpoint"
#define EPOCH_FILE_TMP "leader-epoch-checkpoint.tmp"
/* A leader-epoch-checkpoint with more entries is rejected (and rebuilt). */
#define EPOCH_FILE_MAX_ENTRIES ((size_t)1 << 20)
/*
 * Read window for walking batch headers (br_cursor). Each walk declares its
 * window on its own stack, as segment.c's walks do, rather than the log
 * carrying one: 8 KiB in every struct br_log was 8 MiB of resident memory
 * per 1,000 partitions for a buffer that lives only while one function
 * walks one segment. A stack window is private to the call, so it is
 * correct on any thread (the reactor thread runs every walk in this file;
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

/* ------------------------------------------------------------- config */

void br_log_config_defaults(struct br_log_config *c)
{
    c->segment_bytes = BR_LOG_DEFAULT_SEGMENT_BYTES;
    c->segment_ms = BR_LOG_DEFAULT_SEGMENT_MS;
    c->index_interval_bytes = BR_LOG_DEFAULT_INDEX_INTERVAL_BYTES;
    c->max_index_bytes = BR_LOG_DEFAULT_MAX_INDEX_BYTES;
    c->flush_interval_messages = INT64_MAX;
    c->flush_interval_ms = INT64_MAX;
    c->retention_ms = BR_LOG_DEFAULT_RETENTION_MS;
    c->retention_bytes = -1;
    c->cleanup_delete = true;
    c->cleanup_compact = false;
    c->delete_retention_ms = INT64_C(86400000);
    c->min_compaction_lag_ms = 0;
    c->min_cleanable_dirty_ratio = 0.5;
}

int br_log_config_check(const struct br_log_config *c, const char **field)
{
    const char *bad = NULL;
    if (c->segment_bytes < 14 || c->segment_bytes > INT32_MAX) {
        bad = "segment.bytes";
    } else if (c->segment_ms < 1) {
        bad = "segment.ms";
    } else if (c->index_interval_bytes < 0) {
        bad = "index.interval.bytes";
    } else if (c->max_index_bytes < BR_TIME_ENTRY_SIZE) {
        bad = "segment.index.bytes";
    } else if (c->flush_interval_messages < 1) {
        bad = "flush.messages";
    } else if (c->flush_interval_ms < 0) {
        bad = "flush.ms";
    } else if (c->retention_ms < -1) {
        bad = "retention.ms";
    } else if (c->retention_bytes < -1) {
        bad = "retention.bytes";
    }
    if (field != NULL) {
        *field = bad;
    }
    return bad != NULL ? KP_E_INVALID_ARG : 0;
}

int br_log_set_config(struct br_log *log, const struct br_log_config *cfg)
{
    int rc = br_log_config_check(cfg, NULL);
    if (rc == 0) {
        log->cfg = *cfg;
    }
    return rc;
}

const struct br_log_config *br_log_config(const struct br_log *log)
{
    return &log->cfg;
}

/* ------------------------------------------------------------- accessors */

const char *br_log_dir(const struct br_log *log)
{
    return log->dir;
}

int64_t br_log_start_offset(const struct br_log *log)
{
    return log->start_offset;
}

int64_t br_log_end_offset(const struct br_log *log)
{
    return log->leo;
}

int64_t br_log_recovery_point(const struct br_log *log)
{
    return log->recovery_point;
}

int64_t br_log_size_bytes(const struct br_log *log)
{
    return log->size_bytes;
}

size_t br_log_segment_count(const struct br_log *log)
{
    return log->nsegs;
}

static struct br_segment *active(const struct br_log *log)
{
    return log->segs[log->nsegs - 1];
}

int br_log_segment_info(const struct br_log *log, size_t i, struct br_log_segment_info *info)
{
    memset(info, 0, sizeof *info);
    if (i >= log->nsegs) {
        return KP_E_INVALID_ARG;
    }
    const struct br_segment *s = log->segs[i];
    info->id = s->id;
    info->base_offset = s->base_offset;
    info->size_bytes = s->size;
    info->max_timestamp = s->max_timestamp_known ? s->max_timestamp : -1;
    info->active = i + 1 == log->nsegs;
    /* a stat by name when the budget has the file closed: retention looks
     * at every segment and must not churn the open files */
    return br_segment_mtime_ms(s, log->dir, &info->last_modified_ms);
}

int64_t br_log_active_base_offset(const struct br_log *log)
{
    return active(log)->base_offset;
}

/* The base offset of the last segment starting below offset, or offset
 * when none does (Kafka's lowerSegment(offset).baseOffset). */
static int64_t lower_base(const struct br_log *log, int64_t offset)
{
    for (size_t i = log->nsegs; i-- > 0;) {
        if (log->segs[i]->base_offset < offset) {
            return log->segs[i]->base_offset;
        }
    }
    return offset;
}

int64_t br_log_snapshot_keep_from(const struct br_log *log)
{
    int64_t two_segments = lower_base(log, active(log)->base_offset);
    int64_t recovery = lower_base(log, log->recovery_point);
    int64_t keep = two_segments < recovery ? two_segments : recovery;
    return keep > log->start_offset ? keep : log->start_offset;
}

/* The segment whose base offset is the largest <= offset (0 when none). */
static size_t floor_segment(const struct br_log *log, int64_t offset)
{
    size_t lo = 0;
    size_t hi = log->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (log->segs[mid]->base_offset <= offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo == 0 ? 0 : lo - 1;
}

/* ------------------------------------------------------------- directory */

/* The partition directory's descriptor for an operation (nested holds
 * share one). 0, or KP_ERR_KAFKA_STORAGE_ERROR (logged). */
static int dir_hold(struct br_log *log)
{
    if (log->dir_holds > 0) {
        log->dir_holds++;
        return 0;
    }
    log->dir_fd = br_filecache_openat(log->files, AT_FDCWD, log->dir, O_RDONLY | O_DIRECTORY, 0);
    if (log->dir_fd < 0) {
        br_error("%s: open: %s", log->dir, strerror(errno));
        log->dir_fd = -1;
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    log->dir_holds = 1;
    return 0;
}

static void dir_release(struct br_log *log)
{
    if (log->dir_holds > 0 && --log->dir_holds == 0) {
        (void)close(log->dir_fd);
        log->dir_fd = -1;
    }
}

/* ------------------------------------------------------------- segment list */

static int push_segment(struct br_log *log, struct br_segment *s)
{
    if (log->nsegs == log->cap) {
        size_t cap = log->cap > 0 ? log->cap * 2 : 16;
        struct br_segment **v = kp_realloc(log->segs, cap * sizeof(struct br_segment *));
        if (v == NULL) {
            return KP_E_NOMEM;
        }
        log->segs = v;
        log->cap = cap;
    }
    s->id = ++log->last_seg_id;
    log->segs[log->nsegs++] = s;
    return 0;
}

/* Unlinks segment i's files and drops it from the list. */
static int remove_segment(struct br_log *log, size_t i)
{
    struct br_segment *s = log->segs[i];
    int rc = dir_hold(log);
    if (rc == 0) {
        rc = br_segment_unlink(log->dir_fd, log->dir, s->base_offset);
        dir_release(log);
    }
    log->size_bytes -= s->size;
    br_segment_free(s);
    memmove(log->segs + i, log->segs + i + 1, (log->nsegs - i - 1) * sizeof(struct br_segment *));
    log->nsegs--;
    log->dir_changes++;
    if (rc != 0) {
        log->failed = true;
    }
    return rc;
}

static int epoch_path(const struct br_log *log, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s/%s", log->dir, EPOCH_FILE);
    return n < 0 || (size_t)n >= cap ? KP_E_INVALID_ARG : 0;
}

static int persist_epochs(struct br_log *log)
{
    struct br_log_flush *f = log->flushing;
    if (f != NULL && f->epochs != NULL) {
        /* what this writes is newer than what the flush away would */
        (void)pthread_mutex_lock(&f->mu);
        f->epochs_cancelled = true;
        (void)pthread_mutex_unlock(&f->mu);
    }
    char path[PATH_MAX];
    int rc = epoch_path(log, path, sizeof path);
    if (rc == 0) {
        rc = br_epoch_checkpoint_write(path, log->epochs.v, log->epochs.n);
    }
    if (rc != 0) {
        br_error("%s: cannot write %s: %s", log->dir, EPOCH_FILE, kp_err_name(rc));
        log->failed = true;
    } else {
        log->epochs_unsaved = false;
    }
    return rc;
}

/* ------------------------------------------------------------- open */

static void free_log(struct br_log *log);
static void wb_forget(struct br_log *log);

struct listing {
    int64_t *logs;
    size_t nlogs;
    size_t cap_logs;
    struct orphan {
        int64_t base;
        bool time;
    } * idx;
    size_t nidx;
    size_t cap_idx;
};

static int grow_array(void **v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) {
        return 0;
    }
    size_t c = *cap > 0 ? *cap * 2 : 64;
    if (c > SIZE_MAX / elem) {
        return KP_E_NOMEM;
    }
    void *p = kp_realloc(*v, c * elem);
    if (p == NULL) {
        return KP_E_NOMEM;
    }
    *v = p;
    *cap = c;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool has_log(const struct listing *l, int64_t base)
{
    return l->nlogs > 0 && bsearch(&base, l->logs, l->nlogs, sizeof *l->logs, cmp_i64) != NULL;
}

/* ------------------------------------------------------------- cleaner files */

/* True when name is "<20 digits>.<suffix><tail>"; *base set. */
static bool cleaner_file(const char *name, const char *suffix, const char *tail, int64_t *base)
{
    const char *sfx = NULL;
    if (strlen(name) < 21 || !br_segment_parse_file_name(name, base, &sfx)) {
        return false;
    }
    size_t n = strlen(suffix);
    return strncmp(sfx, suffix, n) == 0 && strcmp(sfx + n, tail) == 0;
}

/* One past the last offset held by the segment file `name` (a walk over
 * its batch headers), base when it holds none. */
static int64_t file_next_offset(struct br_log *log, const char *name, int64_t base)
{
    int fd = br_filecache_openat(log->files, log->dir_fd, name, O_RDONLY, 0);
    if (fd < 0) {
        return base;
    }
    int64_t next = base;
    struct stat st;
    if (fstat(fd, &st) == 0) {
        uint8_t window[CURSOR_WINDOW];
        struct br_cursor c;
        br_cursor_init(&c, fd, 0, (int64_t)st.st_size, window, sizeof window);
        for (;;) {
            struct kp_batch_header h;
            size_t size = 0;
            int rc = br_cursor_peek(&c, &h, &size);
            if (rc != 0) {
                if (rc != KP_ITER_END) {
                    br_warn("%s/%s: damaged batch header at position %" PRId64
                            "; its offsets end before it",
                            log->dir, name, c.pos);
                }
                break;
            }
            next = h.BaseOffset + h.LastOffsetDelta + 1;
            c.pos += (int64_t)size;
        }
    }
    (void)close(fd);
    return next;
}

/* A directory stream over the log's directory, from its first entry (on a
 * descriptor of its own: closedir leaves dir_fd open). NULL, logged, on
 * failure. */
static DIR *open_dir_stream(const struct br_log *log)
{
    int fd = dup(log->dir_fd);
    if (fd < 0) {
        br_error("%s: dup: %s", log->dir, strerror(errno));
        return NULL;
    }
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        br_error("%s: fdopendir: %s", log->dir, strerror(errno));
        (void)close(fd);
        return NULL;
    }
    rewinddir(d);
    return d;
}

/*
 * Finishes what the log cleaner left (br_log_swap_cleaned): a "*.cleaned"
 * file is a cleaned segment whose swap was not decided: removed. A
 * "<B>.log.swap" is a cleaned segment whose swap was decided: the old
 * segments it replaces (every .log whose base offset lies in [B, its end))
 * are removed and the .swap files take the segment names. Index .swap files
 * without their .log.swap are removed (a missing index is rebuilt).
 */
static int complete_cleaner_files(struct br_log *log)
{
    int64_t *swaps = NULL;
    size_t nswaps = 0;
    size_t cap_swaps = 0;
    int64_t *logs = NULL;
    size_t nlogs = 0;
    size_t cap_logs = 0;
    int rc = 0;
    bool changed = false;
    bool index_swaps = false;
    DIR *d = open_dir_stream(log);
    if (d == NULL) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL) {
            if (errno != 0) {
                br_error("%s: readdir: %s", log->dir, strerror(errno));
                rc = KP_ERR_KAFKA_STORAGE_ERROR;
            }
            break;
        }
        int64_t base = 0;
        if (cleaner_file(de->d_name, "log", BR_SEGMENT_CLEANED_TAIL, &base) ||
            cleaner_file(de->d_name, "index", BR_SEGMENT_CLEANED_TAIL, &base) ||
            cleaner_file(de->d_name, "timeindex", BR_SEGMENT_CLEANED_TAIL, &base)) {
            br_warn("%s/%s: removed: a cleaned segment whose swap was not decided", log->dir,
                    de->d_name);
            if (unlinkat(log->dir_fd, de->d_name, 0) != 0 && errno != ENOENT) {
                br_error("%s/%s: unlink: %s", log->dir, de->d_name, strerror(errno));
                rc = KP_ERR_KAFKA_STORAGE_ERROR;
                break;
            }
            changed = true;
            continue;
        }
        if (cleaner_file(de->d_name, "index", BR_SEGMENT_SWAP_TAIL, &base) ||
            cleaner_file(de->d_name, "timeindex", BR_SEGMENT_SWAP_TAIL, &base)) {
            index_swaps = true;
            continue;
        }
        bool is_swap = cleaner_file(de->d_name, "log", BR_SEGMENT_SWAP_TAIL, &base);
        bool is_log = !is_swap && cleaner_file(de->d_name, "log", "", &base);
        if (is_swap || is_log) {
            void *v = is_swap ? (void *)swaps : (void *)logs;
            rc = grow_array(&v, is_swap ? &cap_swaps : &cap_logs, is_swap ? nswaps : nlogs,
                            sizeof(int64_t));
            if (is_swap) {
                swaps = v;
            } else {
                logs = v;
            }
            if (rc != 0) {
                break;
            }
            if (is_swap) {
                swaps[nswaps++] = base;
            } else {
                logs[nlogs++] = base;
            }
        }
    }
    (void)closedir(d);
    if (rc != 0 || nswaps == 0) {
        goto out_stray;
    }
    qsort(swaps, nswaps, sizeof *swaps, cmp_i64);
    for (size_t i = 0; i < nswaps && rc == 0; i++) {
        int64_t b = swaps[i];
        char name[BR_SEGMENT_TMP_NAME_MAX];
        br_segment_file_name_as(b, "log", BR_SEGMENT_SWAP_TAIL, name, sizeof name);
        int64_t end = file_next_offset(log, name, b);
        br_warn("%s/%s: completing an interrupted cleaner swap: it replaces the segments "
                "in [%" PRId64 ", %" PRId64 ")",
                log->dir, name, b, end);
        for (size_t k = 0; k < nlogs && rc == 0; k++) {
            if (logs[k] >= b && (logs[k] < end || logs[k] == b)) {
                rc = br_segment_unlink(log->dir_fd, log->dir, logs[k]);
            }
        }
        if (rc == 0) {
            /* index .swap files may be missing: the open rebuilds them */
            static const char *const suffixes[] = {"index", "timeindex", "log"};
            for (size_t k = 0; k < 3 && rc == 0; k++) {
                char from[BR_SEGMENT_TMP_NAME_MAX];
                char to[BR_SEGMENT_TMP_NAME_MAX];
                br_segment_file_name_as(b, suffixes[k], BR_SEGMENT_SWAP_TAIL, from, sizeof from);
                br_segment_file_name_as(b, suffixes[k], "", to, sizeof to);
                if (renameat(log->dir_fd, from, log->dir_fd, to) != 0 && errno != ENOENT) {
                    br_error("%s/%s: rename to %s: %s", log->dir, from, to, strerror(errno));
                    rc = KP_ERR_KAFKA_STORAGE_ERROR;
                }
            }
        }
        changed = true;
    }

out_stray:
    if (rc == 0 && index_swaps) {
        /* index .swap files whose .log.swap is gone (renamed or never made);
         * looked for only when the listing held some, as a start-up over
         * thousands of partitions pays for every failing unlink */
        for (size_t k = 0; k < nlogs + nswaps; k++) {
            int64_t b = k < nlogs ? logs[k] : swaps[k - nlogs];
            static const char *const idx[] = {"index", "timeindex"};
            for (size_t j = 0; j < 2; j++) {
                char name[BR_SEGMENT_TMP_NAME_MAX];
                br_segment_file_name_as(b, idx[j], BR_SEGMENT_SWAP_TAIL, name, sizeof name);
                if (unlinkat(log->dir_fd, name, 0) == 0) {
                    br_warn("%s/%s: removed: an index swap without its segment", log->dir, name);
                    changed = true;
                }
            }
        }
    }
    if (rc == 0 && changed && fsync(log->dir_fd) != 0) {
        br_error("%s: fsync: %s", log->dir, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    kp_free(swaps);
    kp_free(logs);
    return rc;
}

/* Collects the segments' base offsets; removes stray index files and a
 * leftover temporary epoch checkpoint. */
static int list_dir(struct br_log *log, struct listing *l)
{
    DIR *d = open_dir_stream(log);
    if (d == NULL) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL) {
            if (errno != 0) {
                br_error("%s: readdir: %s", log->dir, strerror(errno));
                rc = KP_ERR_KAFKA_STORAGE_ERROR;
            }
            break;
        }
        int64_t base = 0;
        const char *suffix = NULL;
        if (strcmp(de->d_name, EPOCH_FILE_TMP) == 0) {
            (void)unlinkat(log->dir_fd, de->d_name, 0);
            continue;
        }
        if (strlen(de->d_name) < 21 || !br_segment_parse_file_name(de->d_name, &base, &suffix)) {
            continue;
        }
        if (strcmp(suffix, "log") == 0) {
            void *v = l->logs;
            rc = grow_array(&v, &l->cap_logs, l->nlogs, sizeof *l->logs);
            l->logs = v;
            if (rc != 0) {
                break;
            }
            l->logs[l->nlogs++] = base;
        } else if (strcmp(suffix, "index") == 0 || strcmp(suffix, "timeindex") == 0) {
            void *v = l->idx;
            rc = grow_array(&v, &l->cap_idx, l->nidx, sizeof *l->idx);
            l->idx = v;
            if (rc != 0) {
                break;
            }
            l->idx[l->nidx].base = base;
            l->idx[l->nidx].time = suffix[0] == 't';
            l->nidx++;
        }
    }
    (void)closedir(d);
    if (rc != 0) {
        return rc;
    }
    if (l->nlogs > 0) {
        qsort(l->logs, l->nlogs, sizeof *l->logs, cmp_i64);
    }
    for (size_t i = 0; i < l->nidx; i++) {
        if (has_log(l, l->idx[i].base)) {
            continue;
        }
        char name[BR_SEGMENT_NAME_MAX];
        br_segment_file_name(l->idx[i].base, l->idx[i].time ? "timeindex" : "index", name,
                             sizeof name);
        br_warn("%s/%s: removed, no segment file goes with it", log->dir, name);
        if (unlinkat(log->dir_fd, name, 0) != 0 && errno != ENOENT) {
            br_error("%s/%s: unlink: %s", log->dir, name, strerror(errno));
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
        log->dir_changes++;
    }
    return 0;
}

/* Loads leader-epoch-checkpoint; *rebuild when it is malformed. */
static int load_epochs(struct br_log *log, bool *rebuild)
{
    char path[PATH_MAX];
    struct br_epoch_entry *e = NULL;
    size_t n = 0;
    struct br_checkpoint_error err;
    *rebuild = false;
    int rc = epoch_path(log, path, sizeof path);
    if (rc != 0) {
        return rc;
    }
    rc = br_epoch_checkpoint_read(path, EPOCH_FILE_MAX_ENTRIES, &e, &n, &err);
    if (rc == KP_E_CORRUPT) {
        char msg[PATH_MAX + 200];
        br_checkpoint_error_format(path, &err, msg, sizeof msg);
        br_warn("%s (detected at %s:%d); rebuilding it from the batches", msg,
                err.src_file != NULL ? err.src_file : "?", err.src_line);
        *rebuild = true;
        return 0;
    }
    if (rc != 0) {
        return rc;
    }
    rc = br_leader_epochs_set(&log->epochs, e, n);
    br_checkpoint_free(e);
    return rc;
}

/* Assigns epochs from every batch header (for a malformed checkpoint). */
static int rebuild_epochs(struct br_log *log)
{
    uint8_t window[CURSOR_WINDOW];
    log->epochs.n = 0;
    for (size_t i = 0; i < log->nsegs; i++) {
        struct br_segment *s = log->segs[i];
        struct br_cursor c;
        int fd = -1;
        int rc = br_segment_fd(s, log->dir, &fd);
        if (rc != 0) {
            return rc;
        }
        br_cursor_init(&c, fd, 0, s->size, window, sizeof window);
        for (;;) {
            struct kp_batch_header h;
            size_t size = 0;
            rc = br_cursor_peek(&c, &h, &size);
            if (rc == KP_ITER_END) {
                break;
            }
            if (rc != 0) {
                br_error("%s/%020" PRId64 ".log: damaged batch header at position %" PRId64
                         " while rebuilding leader epochs: %s",
                         log->dir, s->base_offset, c.pos, kp_err_name(rc));
                return rc;
            }
            if (h.PartitionLeaderEpoch >= 0 &&
                h.PartitionLeaderEpoch > br_leader_epochs_latest(&log->epochs)) {
                rc = br_leader_epochs_assign(&log->epochs, h.PartitionLeaderEpoch, h.BaseOffset);
                if (rc < 0) {
                    return rc;
                }
            }
            c.pos += (int64_t)size;
        }
    }
    return 0;
}

/* Deletes the segments after i, which follow a truncation point. */
static int drop_after(struct br_log *log, size_t i)
{
    int rc = 0;
    while (log->nsegs > i + 1) {
        const struct br_segment *s = active(log);
        br_warn("%s/%020" PRId64 ".log: deleted, %" PRId64
                " bytes removed: it follows the truncation of %020" PRId64 ".log",
                log->dir, s->base_offset, s->size, log->segs[i]->base_offset);
        int r = remove_segment(log, log->nsegs - 1);
        rc = rc != 0 ? rc : r;
    }
    return rc;
}

/*
 * An empty last segment is what a roll leaves when the broker stops before
 * the first write, and a roll starts it at the previous segment's end. One
 * that starts elsewhere would leave offsets without data below the LEO:
 * it is removed, and the previous segment becomes the last one.
 */
static int settle_empty_tail(struct br_log *log, struct br_leader_epochs *epochs)
{
    while (log->nsegs > 1 && active(log)->size == 0) {
        struct br_segment *last = active(log);
        struct br_segment *prev = log->segs[log->nsegs - 2];
        if (prev->next_offset < 0) {
            /* a trusted segment: its end is found by scanning its tail */
            struct br_recover_result res;
            int64_t before = prev->size;
            int rc = br_segment_recover(prev, log->dir, INT64_MAX, last->base_offset,
                                        log->cfg.index_interval_bytes, epochs, &res);
            log->size_bytes -= before - prev->size;
            if (rc != 0) {
                return rc;
            }
            if (res.cut) {
                rc = drop_after(log, log->nsegs - 2);
                if (rc != 0) {
                    return rc;
                }
                continue;
            }
        }
        if (prev->next_offset == last->base_offset) {
            /* prev stays closed: keep its final time-index entry */
            return br_segment_seal(prev, log->dir);
        }
        br_warn("%s/%020" PRId64 ".log: removed: an empty segment that does not start where "
                "%020" PRId64 ".log ends (%" PRId64 ")",
                log->dir, last->base_offset, prev->base_offset, prev->next_offset);
        int rc = remove_segment(log, log->nsegs - 1);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int load_segments(struct br_log *log, const struct listing *l, int64_t recovery_point,
                         struct br_leader_epochs *epochs)
{
    int rc = 0;
    bool *full = NULL;
    if (l->nlogs == 0) {
        struct br_segment *s = NULL;
        rc = br_segment_create(log->dir_fd, log->dir, 0, log->files, &s);
        if (rc == 0) {
            rc = push_segment(log, s);
            if (rc != 0) {
                br_segment_free(s);
            }
        }
        log->dir_changes++;
        return rc;
    }
    full = kp_calloc(l->nlogs, sizeof *full);
    if (full == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < l->nlogs; i++) {
        int64_t limit = i + 1 < l->nlogs ? l->logs[i + 1] : INT64_MAX;
        struct br_segment *s = NULL;
        char problem[160];
        rc = br_segment_open(log->dir_fd, log->dir, l->logs[i], limit, log->files, &s, problem,
                             sizeof problem);
        if (rc != 0) {
            goto out_free;
        }
        rc = push_segment(log, s);
        if (rc != 0) {
            br_segment_free(s);
            goto out_free;
        }
        if (problem[0] != '\0') {
            br_warn("%s/%020" PRId64 ".log: %s; rebuilding the indexes and validating the segment",
                    log->dir, l->logs[i], problem);
            full[i] = true;
        }
        log->size_bytes += s->size;
    }

    /* segments wholly below the recovery point were flushed: trusted */
    size_t r = floor_segment(log, recovery_point);
    for (size_t i = 0; i < log->nsegs; i++) {
        struct br_segment *s = log->segs[i];
        bool last = i + 1 == log->nsegs;
        if (!full[i] && i < r && !last) {
            continue;
        }
        int64_t limit = last ? INT64_MAX : log->segs[i + 1]->base_offset;
        struct br_recover_result res;
        int64_t before = s->size;
        rc = br_segment_recover(s, log->dir, full[i] ? INT64_MIN : recovery_point, limit,
                                log->cfg.index_interval_bytes, epochs, &res);
        log->size_bytes -= before - s->size;
        if (rc != 0) {
            goto out_free;
        }
        if (res.cut) {
            rc = drop_after(log, i);
            break;
        }
        if (!last) {
            /* a rebuilt time index ends with the entry a roll adds */
            rc = br_segment_seal(s, log->dir);
            if (rc != 0) {
                goto out_free;
            }
        }
    }

    if (rc == 0) {
        rc = settle_empty_tail(log, epochs);
    }

out_free:
    kp_free(full);
    return rc;
}

static bool epochs_equal(const struct br_leader_epochs *a, const struct br_epoch_entry *b, size_t n)
{
    if (a->n != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (a->v[i].epoch != b[i].epoch || a->v[i].start_offset != b[i].start_offset) {
            return false;
        }
    }
    return true;
}

int br_log_open(const char *dir, const struct br_log_config *cfg, int64_t recovery_point,
                struct br_filecache *files, struct br_log **out)
{
    *out = NULL;
    const char *field = NULL;
    if (br_log_config_check(cfg, &field) != 0) {
        br_error("%s: invalid log config: %s", dir, field);
        return KP_E_INVALID_ARG;
    }
    size_t dlen = strlen(dir);
    if (dlen == 0 || dlen >= DIR_MAX) {
        br_error("log dir name empty or too long");
        return KP_E_INVALID_ARG;
    }
    struct listing l = {0};
    struct br_epoch_entry *loaded = NULL;
    size_t nloaded = 0;
    int rc = KP_E_NOMEM;
    struct br_log *log = kp_calloc(1, sizeof *log);
    if (log == NULL) {
        return KP_E_NOMEM;
    }
    log->dir_fd = -1;
    log->files = files;
    log->first_unflushed_ms = -1;
    log->cfg = *cfg;
    br_leader_epochs_init(&log->epochs);
    log->dir = kp_malloc(dlen + 1);
    if (log->dir == NULL) {
        goto out_close;
    }
    memcpy(log->dir, dir, dlen + 1);

    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        br_error("%s: mkdir: %s", dir, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
        goto out_close;
    }
    rc = dir_hold(log); /* released at the end of the open */
    if (rc != 0) {
        goto out_close;
    }
    rc = complete_cleaner_files(log);
    if (rc != 0) {
        goto out_close;
    }
    rc = list_dir(log, &l);
    if (rc != 0) {
        goto out_close;
    }
    bool rebuild = false;
    rc = load_epochs(log, &rebuild);
    if (rc != 0) {
        goto out_close;
    }
    if (!rebuild && log->epochs.n > 0) {
        loaded = kp_malloc(log->epochs.n * sizeof *loaded);
        if (loaded == NULL) {
            rc = KP_E_NOMEM;
            goto out_close;
        }
        memcpy(loaded, log->epochs.v, log->epochs.n * sizeof *loaded);
        nloaded = log->epochs.n;
    }
    rc = load_segments(log, &l, recovery_point, rebuild ? NULL : &log->epochs);
    if (rc != 0) {
        goto out_close;
    }
    log->start_offset = log->segs[0]->base_offset;
    log->leo = active(log)->next_offset;
    if (rebuild) {
        rc = rebuild_epochs(log);
        if (rc != 0) {
            goto out_close;
        }
    }
    (void)br_leader_epochs_truncate_from_end(&log->epochs, log->leo);
    (void)br_leader_epochs_truncate_from_start(&log->epochs, log->start_offset);
    if (rebuild || !epochs_equal(&log->epochs, loaded, nloaded)) {
        rc = persist_epochs(log);
        if (rc != 0) {
            goto out_close;
        }
    }

    /* what was recovered is made durable before the recovery point says so */
    rc = br_log_flush(log);
    if (rc != 0) {
        goto out_close;
    }
    struct br_segment *a = active(log);
    int afd = -1;
    if (a->size > 0 && br_segment_fd(a, log->dir, &afd) == 0) {
        uint8_t window[CURSOR_WINDOW];
        struct br_cursor c;
        struct kp_batch_header h;
        size_t size = 0;
        br_cursor_init(&c, afd, 0, a->size, window, sizeof window);
        if (br_cursor_peek(&c, &h, &size) == 0 && h.MaxTimestamp >= 0) {
            a->first_append_ms = h.MaxTimestamp; /* Kafka's rolling-based timestamp */
        }
    }
    dir_release(log);
    br_info("%s: loaded %zu segment(s), log start offset %" PRId64 ", LEO %" PRId64, dir,
            log->nsegs, log->start_offset, log->leo);
    kp_free(l.logs);
    kp_free(l.idx);
    kp_free(loaded);
    *out = log;
    return 0;

out_close:
    kp_free(l.logs);
    kp_free(l.idx);
    kp_free(loaded);
    free_log(log); /* nothing more is written on the way out */
    return rc;
}

void br_log_set_files(struct br_log *log, struct br_filecache *files)
{
    log->files = files;
    for (size_t i = 0; i < log->nsegs; i++) {
        br_segment_set_files(log->segs[i], files);
    }
}

static void free_log(struct br_log *log)
{
    if (log->flushing != NULL) {
        log->flushing->log = NULL; /* it ends on its own */
    }
    wb_forget(log);
    for (size_t i = 0; i < log->nsegs; i++) {
        br_segment_free(log->segs[i]);
    }
    kp_free(log->segs);
    if (log->dir_holds > 0) {
        (void)close(log->dir_fd); /* an open that failed half way */
    }
    br_leader_epochs_free(&log->epochs);
    kp_free(log->dir);
    kp_free(log);
}

void br_log_close(struct br_log *log)
{
    if (log == NULL) {
        return;
    }
    if (log->nsegs > 0 && !log->failed) {
        /* a failure is logged; the next open checks the time index anyway */
        int rc = br_segment_seal(active(log), log->dir);
        (void)rc;
    }
    free_log(log);
}

/* ------------------------------------------------------------- append */

static int roll(struct br_log *log)
{
    struct br_segment *old = active(log);
    int rc = br_segment_seal(old, log->dir);
    if (rc != 0) {
        log->failed = true;
        return rc;
    }
    struct br_segment *s = NULL;
    rc = dir_hold(log);
    if (rc != 0) {
        return rc;
    }
    rc = br_segment_create(log->dir_fd, log->dir, log->leo, log->files, &s);
    if (rc == 0) {
        rc = push_segment(log, s);
        if (rc != 0) {
            br_segment_free(s);
            if (br_segment_unlink(log->dir_fd, log->dir, log->leo) != 0) {
                log->failed = true;
            }
        }
    }
    dir_release(log);
    if (rc != 0) {
        return rc;
    }
    log->dir_changes++;
    log->rolled = true; /* the segment it closed is flushed next, as Kafka's Log.roll asks */
    br_info("%s: rolled new segment %020" PRId64 ".log after %" PRId64 " bytes", log->dir, log->leo,
            old->size);
    return 0;
}

static int maybe_roll(struct br_log *log, size_t len, int64_t last_offset, int64_t now_ms)
{
    struct br_segment *a = active(log);
    if (a->size == 0) {
        return 0;
    }
    if (a->first_append_ms > now_ms) {
        a->first_append_ms = now_ms; /* a timestamp from the future: count from now */
    }
    bool full_bytes = a->size > log->cfg.segment_bytes - (int64_t)len;
    bool full_time = a->first_append_ms >= 0 && now_ms - a->first_append_ms > log->cfg.segment_ms;
    bool full_index = br_segment_index_full(a, log->cfg.max_index_bytes);
    bool full_offsets = last_offset - a->base_offset > INT32_MAX;
    bool full_positions = a->size > INT32_MAX - (int64_t)len;
    if (!(full_bytes || full_time || full_index || full_offsets || full_positions)) {
        return 0;
    }
    return roll(log);
}

/* Checks that batch[0..len) is one batch; its header into *h. */
static int check_batch(const uint8_t *batch, size_t len, struct kp_batch_header *h)
{
    size_t size = 0;
    if (batch == NULL || len < KP_BATCH_HEADER_SIZE || len > INT32_MAX) {
        return KP_E_INVALID_ARG;
    }
    if (kp_batch_peek(batch, len, h, &size) != 0 || size != len || h->LastOffsetDelta < 0) {
        return KP_E_INVALID_ARG;
    }
    return 0;
}

/* The log's appends passed its next write-behind step and no job is away:
 * its owner hears it is due, once (br_log_wb_begin sets the next step). */
static void wb_tell_due(struct br_log *log)
{
    if (log->wb_window > 0 && log->wb_appended >= log->wb_next && log->wb == NULL &&
        log->wb_ops != NULL) {
        log->wb_next = INT64_MAX;
        log->wb_ops->due(log->wb_ctx);
    }
}

static int write_batch(struct br_log *log, const uint8_t *batch, size_t len, int64_t base,
                       int64_t last, int64_t max_timestamp, int32_t epoch, int64_t now_ms)
{
    struct br_segment *a = active(log);
    int rc = br_segment_append(a, log->dir, batch, len, last, max_timestamp,
                               log->cfg.index_interval_bytes);
    if (a->io_failed) {
        log->failed = true;
    }
    if (rc != 0) {
        return rc;
    }
    if (a->first_append_ms < 0) {
        a->first_append_ms = now_ms;
    }
    log->leo = last + 1;
    log->size_bytes += (int64_t)len;
    if (log->first_unflushed_ms < 0) {
        log->first_unflushed_ms = now_ms;
    }
    if (epoch >= 0) {
        int r = br_leader_epochs_assign(&log->epochs, epoch, base);
        if (r == 1) {
            /* written by the flush that makes this batch durable: until
             * then a start recovers the segment and finds the epoch in it */
            log->epochs_unsaved = true;
        } else if (r < 0) {
            br_error("%s: leader epoch %d at offset %" PRId64 " not recorded: %s", log->dir,
                     (int)epoch, base, kp_err_name(r));
        }
    }
    log->wb_appended += (int64_t)len;
    wb_tell_due(log);
    if (log->leo - log->recovery_point >= log->cfg.flush_interval_messages) {
        return br_log_flush(log);
    }
    return 0;
}

int br_log_append(struct br_log *log, uint8_t *batch, size_t len, int32_t leader_epoch,
                  int64_t now_ms, int64_t *base_offset)
{
    struct kp_batch_header h;
    *base_offset = -1;
    if (log->failed) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = check_batch(batch, len, &h);
    if (rc != 0) {
        return rc;
    }
    int64_t base = log->leo;
    if (base > INT64_MAX - 1 - h.LastOffsetDelta) {
        return KP_E_INVALID_ARG;
    }
    int64_t last = base + h.LastOffsetDelta;
    rc = maybe_roll(log, len, last, now_ms);
    if (rc != 0) {
        return rc;
    }
    kp_batch_set_base_offset(batch, base);
    kp_batch_set_leader_epoch(batch, leader_epoch);
    rc = write_batch(log, batch, len, base, last, h.MaxTimestamp, leader_epoch, now_ms);
    if (rc == 0) {
        *base_offset = base;
    }
    return rc;
}

int br_log_append_replica(struct br_log *log, const uint8_t *batch, size_t len, int64_t now_ms)
{
    struct kp_batch_header h;
    if (log->failed) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = check_batch(batch, len, &h);
    if (rc != 0) {
        return rc;
    }
    if (h.BaseOffset < log->leo || h.BaseOffset > INT64_MAX - 1 - h.LastOffsetDelta) {
        return KP_E_INVALID_ARG;
    }
    int64_t last = h.BaseOffset + h.LastOffsetDelta;
    rc = maybe_roll(log, len, last, now_ms);
    if (rc != 0) {
        return rc;
    }
    if (last - active(log)->base_offset > INT32_MAX) {
        return KP_E_INVALID_ARG; /* a gap larger than a segment can span */
    }
    return write_batch(log, batch, len, h.BaseOffset, last, h.MaxTimestamp, h.PartitionLeaderEpoch,
                       now_ms);
}

/* ------------------------------------------------------------- flush */

int br_log_flush(struct br_log *log)
{
    if (log->epochs_unsaved) {
        int rc = persist_epochs(log);
        if (rc != 0) {
            return rc;
        }
    }
    for (size_t i = 0; i < log->nsegs; i++) {
        int rc = br_segment_flush(log->segs[i], log->dir);
        if (rc != 0) {
            log->failed = true;
            return rc;
        }
    }
    if (log->dir_changes != log->dir_synced) {
        int rc = dir_hold(log);
        if (rc == 0 && fsync(log->dir_fd) != 0) {
            br_error("%s: fsync: %s", log->dir, strerror(errno));
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
        }
        dir_release(log);
        if (rc != 0) {
            log->failed = true;
            return rc;
        }
        log->dir_synced = log->dir_changes;
    }
    log->recovery_point = log->leo;
    log->first_unflushed_ms = -1;
    log->rolled = false;
    return 0;
}

int br_log_maybe_flush(struct br_log *log, int64_t now_ms)
{
    return br_log_flush_due(log, now_ms) ? br_log_flush(log) : 0;
}

/* ------------------------------------------------------------- flush off the reactor */

bool br_log_flush_due(const struct br_log *log, int64_t now_ms)
{
    if (log->flushing != NULL || log->failed || log->leo <= log->recovery_point) {
        return false;
    }
    return log->rolled ||
           (log->first_unflushed_ms >= 0 && log->cfg.flush_interval_ms != INT64_MAX &&
            now_ms - log->first_unflushed_ms >= log->cfg.flush_interval_ms);
}

static void flush_free(struct br_log_flush *f)
{
    if (f->epochs != NULL) {
        (void)pthread_mutex_destroy(&f->mu);
        kp_free(f->epochs);
    }
    for (size_t i = 0; i < f->nsegs; i++) {
        br_segment_sync_release(&f->segs[i]);
    }
    br_fileref_unref(f->dir_file);
    kp_free(f->dir);
    kp_free(f);
}

int br_log_flush_begin(struct br_log *log, int64_t now_ms, struct br_log_flush **out)
{
    *out = NULL;
    if (log->flushing != NULL) {
        return KP_E_INVALID_ARG;
    }
    if (log->failed) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    struct br_log_flush *f = kp_calloc(1, sizeof *f + log->nsegs * sizeof f->segs[0]);
    size_t dlen = strlen(log->dir);
    char *dir = kp_malloc(dlen + 1);
    if (dir != NULL) {
        memcpy(dir, log->dir, dlen + 1);
    }
    if (f == NULL || dir == NULL) {
        kp_free(f);
        kp_free(dir);
        return KP_E_NOMEM;
    }
    *f = (struct br_log_flush){.log = log,
                               .dir = dir,
                               .upto = log->leo,
                               .begun_ms = now_ms,
                               .truncations = log->truncations,
                               .dir_changes = log->dir_changes};
    for (size_t i = 0; i < log->nsegs; i++) {
        struct br_segment_sync *ss = &f->segs[f->nsegs];
        if (br_segment_sync_begin(log->segs[i], log->dir, ss) != 0) {
            log->failed = true;
            flush_free(f);
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
        if (ss->files[0] != NULL || ss->files[1] != NULL || ss->files[2] != NULL) {
            f->nsegs++;
        }
    }
    if (log->epochs_unsaved) {
        size_t n = log->epochs.n;
        f->epochs = kp_malloc(n == 0 ? 1 : n * sizeof *f->epochs);
        if (f->epochs == NULL || pthread_mutex_init(&f->mu, NULL) != 0) {
            kp_free(f->epochs);
            f->epochs = NULL;
            flush_free(f);
            return KP_E_NOMEM;
        }
        if (n > 0) {
            memcpy(f->epochs, log->epochs.v, n * sizeof *f->epochs);
        }
        f->nepochs = n;
    }
    if (log->dir_changes != log->dir_synced) {
        int fd = br_filecache_openat(log->files, AT_FDCWD, log->dir, O_RDONLY | O_DIRECTORY, 0);
        f->dir_file = fd >= 0 ? br_fileref_new(fd) : NULL;
        if (f->dir_file == NULL) {
            br_error("%s: open: %s", log->dir, fd < 0 ? strerror(errno) : "out of memory");
            log->failed = fd < 0;
            flush_free(f);
            return fd < 0 ? KP_ERR_KAFKA_STORAGE_ERROR : KP_E_NOMEM;
        }
    }
    log->flushing = f;
    log->rolled = false;
    if (f->epochs != NULL) {
        log->epochs_unsaved = false; /* unless the write fails: then the log is failed */
    }
    *out = f;
    return 0;
}

void br_log_flush_run(struct br_log_flush *f)
{
    if (f->epochs != NULL) {
        char path[PATH_MAX];
        (void)pthread_mutex_lock(&f->mu);
        if (!f->epochs_cancelled) {
            int n = snprintf(path, sizeof path, "%s/%s", f->dir, EPOCH_FILE);
            int rc = n < 0 || (size_t)n >= sizeof path
                         ? KP_E_INVALID_ARG
                         : br_epoch_checkpoint_write(path, f->epochs, f->nepochs);
            if (rc != 0) {
                br_error("%s: cannot write %s: %s", f->dir, EPOCH_FILE, kp_err_name(rc));
                f->failed = true;
            }
            f->epochs_written = true;
        }
        (void)pthread_mutex_unlock(&f->mu);
    }
    for (size_t i = 0; i < f->nsegs; i++) {
        if (!br_segment_sync_run(&f->segs[i], f->dir)) {
            f->failed = true;
        }
    }
    if (!f->failed && f->dir_file != NULL && fsync(br_fileref_fd(f->dir_file)) != 0) {
        br_error("%s: fsync: %s", f->dir, strerror(errno));
        f->failed = true;
    }
}

static struct br_segment *segment_by_id(struct br_log *log, uint64_t id)
{
    for (size_t i = 0; i < log->nsegs; i++) {
        if (log->segs[i]->id == id) {
            return log->segs[i];
        }
    }
    return NULL;
}

int br_log_flush_end(struct br_log_flush *f)
{
    struct br_log *log = f->log;
    int rc = f->failed ? KP_ERR_KAFKA_STORAGE_ERROR : 0;
    if (log != NULL) {
        log->flushing = NULL;
        for (size_t i = 0; i < f->nsegs; i++) {
            br_segment_sync_end(segment_by_id(log, f->segs[i].id), &f->segs[i]);
        }
        if (f->failed) {
            log->failed = true;
        } else {
            if (f->dir_file != NULL && log->dir_synced < f->dir_changes) {
                log->dir_synced = f->dir_changes;
            }
            if (log->truncations == f->truncations && log->recovery_point < f->upto) {
                log->recovery_point = f->upto;
            }
            if (log->recovery_point >= log->leo) {
                log->first_unflushed_ms = -1;
            } else if (log->first_unflushed_ms < f->begun_ms) {
                /* what came after the flush began is at least this old */
                log->first_unflushed_ms = f->begun_ms;
            }
        }
    }
    flush_free(f);
    return rc;
}

/* ------------------------------------------------------------- read */

/* Logs what a read of segment s found at pos. A damaged batch stays damaged
 * (a segment below the recovery point is not rescanned): it is logged once
 * per segment and position, not on each of the fetches that keep running
 * into it (each answered CORRUPT_MESSAGE). A failed read is logged each time. */
static void report_damage(const struct br_log *log, struct br_segment *s, int64_t pos, int rc)
{
    if (rc == KP_ERR_KAFKA_STORAGE_ERROR) {
        br_error("%s/%020" PRId64 ".log: read at position %" PRId64 ": %s", log->dir,
                 s->base_offset, pos, strerror(errno));
        return;
    }
    if (s->damage_logged && s->damage_pos == pos) {
        return;
    }
    s->damage_logged = true;
    s->damage_pos = pos;
    br_error("%s/%020" PRId64 ".log: damaged batch header at position %" PRId64
             ": %s (logged once; reads there answer CORRUPT_MESSAGE)",
             log->dir, s->base_offset, pos, kp_err_name(rc));
}

void br_log_slice_release(struct br_log_slice *s)
{
    br_fileref_unref(s->file);
    s->file = NULL;
    s->len = 0;
}

int br_log_read(struct br_log *log, int64_t offset, int64_t max_offset, int32_t max_bytes,
                bool min_one, struct br_log_slice *out)
{
    memset(out, 0, sizeof *out);
    out->first_offset = offset;
    out->next_offset = offset;
    if (offset < log->start_offset || offset > log->leo) {
        return KP_ERR_OFFSET_OUT_OF_RANGE;
    }
    if (max_offset > log->leo) {
        max_offset = log->leo;
    }
    if (offset >= max_offset) {
        return 0;
    }
    int64_t limit = max_bytes > 0 ? max_bytes : 0;
    size_t first = floor_segment(log, offset);
    uint8_t window[CURSOR_WINDOW];
    for (size_t i = first; i < log->nsegs; i++) {
        struct br_segment *s = log->segs[i];
        struct br_cursor c;
        struct kp_batch_header h;
        size_t size = 0;
        int64_t from = i == first ? br_segment_lookup(s, log->dir, offset) : 0;
        int fd = -1;
        int rc = br_segment_fd(s, log->dir, &fd); /* a failed reopen is logged there */
        if (rc != 0) {
            return rc;
        }
        br_cursor_init(&c, fd, from, s->size, window, sizeof window);
        /* the batch containing offset, or the first one after it */
        for (;;) {
            rc = br_cursor_peek(&c, &h, &size);
            if (rc != 0 || h.BaseOffset + h.LastOffsetDelta >= offset) {
                break;
            }
            c.pos += (int64_t)size;
        }
        if (rc == KP_ITER_END) {
            continue; /* offset lies in a gap at the end of this segment */
        }
        if (rc != 0) {
            report_damage(log, s, c.pos, rc);
            return rc;
        }
        int64_t last = h.BaseOffset + h.LastOffsetDelta;
        if (last >= max_offset) {
            return 0;
        }
        int64_t start = c.pos;
        int64_t total = (int64_t)size;
        out->first_offset = h.BaseOffset;
        int64_t next = last + 1;
        if (total > limit) {
            if (!min_one) {
                return 0;
            }
        } else {
            for (;;) {
                c.pos += (int64_t)size;
                rc = br_cursor_peek(&c, &h, &size);
                if (rc != 0) {
                    if (rc != KP_ITER_END) {
                        /* serve what is good; the next read reports it */
                        report_damage(log, s, c.pos, rc);
                    }
                    break;
                }
                if (h.BaseOffset < next) {
                    /* offsets going back: damage below the recovery point,
                     * which recovery trusted; serve what is good */
                    report_damage(log, s, c.pos, KP_E_CORRUPT);
                    break;
                }
                last = h.BaseOffset + h.LastOffsetDelta;
                if (last >= max_offset || total > limit - (int64_t)size) {
                    break;
                }
                total += (int64_t)size;
                next = last + 1;
            }
        }
        rc = br_segment_file(s, log->dir, &out->file);
        if (rc != 0) {
            return rc;
        }
        out->file_pos = start;
        out->len = (int32_t)total;
        out->next_offset = next;
        return 0;
    }
    out->first_offset = offset;
    return 0;
}

/* ------------------------------------------------------------- time lookup */

/* The first record of the batch at pos (size bytes) with Offset >= start and
 * Timestamp >= ts; the batch's own when its records cannot be decoded. */
static int resolve_in_batch(struct br_log *log, struct br_segment *s, int64_t pos, size_t size,
                            const struct kp_batch_header *h, int64_t ts, int64_t *offset,
                            int64_t *timestamp)
{
    *offset = h->BaseOffset > log->start_offset ? h->BaseOffset : log->start_offset;
    *timestamp = h->MaxTimestamp;
    if (size > TS_MAX_BATCH) {
        return 0;
    }
    uint8_t *buf = kp_malloc(size);
    if (buf == NULL) {
        return KP_E_NOMEM;
    }
    size_t got = 0;
    int fd = -1;
    int rc = br_segment_fd(s, log->dir, &fd);
    if (rc != 0) {
        goto out_free;
    }
    if (br_pread_full(fd, buf, size, pos, &got) != 0 || got != size) {
        report_damage(log, s, pos, KP_ERR_KAFKA_STORAGE_ERROR);
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
        goto out_free;
    }
    struct kp_batch_header full;
    size_t bsize = 0;
    if (kp_batch_parse_lenient(buf, size, &full, &bsize) != 0 || bsize != size) {
        br_warn("%s/%020" PRId64 ".log: batch at position %" PRId64
                " fails validation; answering at batch granularity",
                log->dir, s->base_offset, pos);
        goto out_free;
    }
    struct kp_batch_iter it;
    if (kp_batch_iter_init(&it, buf, size, TS_MAX_DECOMPRESSED) == 0) {
        for (;;) {
            struct kp_record rec;
            if (kp_batch_iter_next(&it, &rec) != 0) {
                break;
            }
            if (rec.Offset >= log->start_offset && rec.Timestamp >= ts) {
                *offset = rec.Offset;
                *timestamp = rec.Timestamp;
                break;
            }
        }
    }
    kp_batch_iter_free(&it);

out_free:
    kp_free(buf);
    return rc;
}

int br_log_offset_for_timestamp(struct br_log *log, int64_t ts, int64_t *offset, int64_t *timestamp)
{
    *offset = -1;
    *timestamp = -1;
    uint8_t window[CURSOR_WINDOW];
    for (size_t i = 0; i < log->nsegs; i++) {
        struct br_segment *s = log->segs[i];
        if (s->size == 0 || (s->max_timestamp_known && s->max_timestamp < ts)) {
            continue;
        }
        if (i + 1 < log->nsegs && log->segs[i + 1]->base_offset <= log->start_offset) {
            continue; /* wholly below the log start */
        }
        int64_t from = br_segment_time_lookup(s, log->dir, ts);
        if (from < log->start_offset) {
            from = log->start_offset;
        }
        int64_t pos = br_segment_lookup(s, log->dir, from);
        int fd = -1;
        int rc = br_segment_fd(s, log->dir, &fd);
        if (rc != 0) {
            return rc;
        }
        struct br_cursor c;
        br_cursor_init(&c, fd, pos, s->size, window, sizeof window);
        for (;;) {
            struct kp_batch_header h;
            size_t size = 0;
            rc = br_cursor_peek(&c, &h, &size);
            if (rc == KP_ITER_END) {
                break;
            }
            if (rc != 0) {
                report_damage(log, s, c.pos, rc);
                return rc;
            }
            if (h.BaseOffset + h.LastOffsetDelta >= log->start_offset && h.MaxTimestamp >= ts) {
                return resolve_in_batch(log, s, c.pos, size, &h, ts, offset, timestamp);
            }
            c.pos += (int64_t)size;
        }
    }
    return 0;
}

/* ------------------------------------------------------------- truncation */

int br_log_truncate_fully_and_start_at(struct br_log *log, int64_t offset)
{
    if (offset < 0) {
        return KP_E_INVALID_ARG;
    }
    int rc = 0;
    size_t keep = floor_segment(log, offset);
    if (log->segs[keep]->base_offset == offset) {
        struct br_segment *s = log->segs[keep];
        int64_t before = s->size;
        rc = br_segment_truncate(s, log->dir, offset, log->cfg.index_interval_bytes);
        log->size_bytes -= before - s->size;
        if (rc != 0) {
            return rc;
        }
        s->first_append_ms = -1;
    } else {
        struct br_segment *s = NULL;
        rc = dir_hold(log);
        if (rc != 0) {
            return rc;
        }
        rc = br_segment_create(log->dir_fd, log->dir, offset, log->files, &s);
        if (rc == 0) {
            rc = push_segment(log, s);
            if (rc != 0) {
                br_segment_free(s);
                if (br_segment_unlink(log->dir_fd, log->dir, offset) != 0) {
                    log->failed = true;
                }
            }
        }
        dir_release(log);
        if (rc != 0) {
            return rc;
        }
        keep = log->nsegs - 1;
    }
    /* everything else goes; `keep` moves to the front */
    struct br_segment *kept = log->segs[keep];
    for (size_t i = log->nsegs; i-- > 0;) {
        if (log->segs[i] != kept) {
            int r = remove_segment(log, i);
            rc = rc != 0 ? rc : r;
        }
    }
    log->dir_changes++;
    log->start_offset = offset;
    log->leo = offset;
    log->recovery_point = offset;
    log->first_unflushed_ms = -1;
    log->truncations++;
    log->epochs.n = 0;
    int r = persist_epochs(log);
    br_info("%s: truncated fully, log starts at %" PRId64, log->dir, offset);
    return rc != 0 ? rc : r;
}

static void wb_clamp(struct br_log *log);

int br_log_truncate_to(struct br_log *log, int64_t offset)
{
    if (offset < 0) {
        return KP_E_INVALID_ARG;
    }
    if (offset >= log->leo) {
        return 0;
    }
    if (offset < log->start_offset) {
        return br_log_truncate_fully_and_start_at(log, offset);
    }
    int rc = 0;
    while (log->nsegs > 1 && active(log)->base_offset >= offset) {
        int r = remove_segment(log, log->nsegs - 1);
        rc = rc != 0 ? rc : r;
    }
    struct br_segment *a = active(log);
    int64_t before = a->size;
    int r = br_segment_truncate(a, log->dir, offset, log->cfg.index_interval_bytes);
    log->size_bytes -= before - a->size;
    rc = rc != 0 ? rc : r;
    if (r != 0) {
        log->failed = true;
        return rc;
    }
    if (a->size == 0) {
        a->first_append_ms = -1;
    }
    log->leo = a->next_offset;
    if (log->start_offset > log->leo) {
        log->start_offset = log->leo; /* a batch straddling the start went too */
    }
    if (log->recovery_point > log->leo) {
        log->recovery_point = log->leo;
    }
    log->truncations++;
    wb_clamp(log);
    if (br_leader_epochs_truncate_from_end(&log->epochs, log->leo)) {
        r = persist_epochs(log);
        rc = rc != 0 ? rc : r;
    }
    br_info("%s: truncated to offset %" PRId64 ", LEO now %" PRId64, log->dir, offset, log->leo);
    return rc;
}

/* ------------------------------------------------------------- retention */

int br_log_delete_segments_before(struct br_log *log, int64_t offset, size_t *deleted)
{
    size_t n = 0;
    int rc = 0;
    if (deleted != NULL) {
        *deleted = 0;
    }
    if (offset >= log->leo && active(log)->size > 0) {
        rc = roll(log);
        if (rc != 0) {
            return rc;
        }
    }
    while (log->nsegs > 1 && log->segs[1]->base_offset <= offset) {
        br_info("%s/%020" PRId64 ".log: deleting segment (%" PRId64
                " bytes), below offset %" PRId64,
                log->dir, log->segs[0]->base_offset, log->segs[0]->size, offset);
        int r = remove_segment(log, 0);
        rc = rc != 0 ? rc : r;
        n++;
    }
    if (log->segs[0]->base_offset > log->start_offset) {
        log->start_offset = log->segs[0]->base_offset;
    }
    if (n > 0) {
        /* Kafka's truncateHead: producer snapshots below the new start go */
        (void)br_psnap_delete_outside(log->dir, log->start_offset, INT64_MAX);
    }
    if (br_leader_epochs_truncate_from_start(&log->epochs, log->start_offset)) {
        /* a file still holding the entries below the start is trimmed at
         * the next open: written by the next flush */
        log->epochs_unsaved = true;
    }
    if (deleted != NULL) {
        *deleted = n;
    }
    return rc;
}

int br_log_set_start_offset(struct br_log *log, int64_t offset)
{
    if (offset > log->leo || offset < 0) {
        return KP_ERR_OFFSET_OUT_OF_RANGE;
    }
    if (offset <= log->start_offset) {
        return 0;
    }
    log->start_offset = offset;
    if (br_leader_epochs_truncate_from_start(&log->epochs, offset)) {
        log->epochs_unsaved = true; /* as retention's */
    }
    return 0;
}

/* ------------------------------------------------------------- cleaner swap */

struct br_fileref *br_log_segment_file(struct br_log *log, size_t i)
{
    struct br_fileref *f = NULL;
    if (i < log->nsegs && br_segment_file(log->segs[i], log->dir, &f) != 0) {
        return NULL;
    }
    return f;
}

/* Where group g's old run starts in the list, or SIZE_MAX when the log no
 * longer holds that run unchanged (or it reaches the active segment). */
static size_t find_run(const struct br_log *log, const struct br_log_swap_group *g)
{
    if (g->nold == 0 || g->cleaned == NULL || g->cleaned->base_offset != g->old[0].base_offset) {
        return SIZE_MAX;
    }
    size_t i = floor_segment(log, g->old[0].base_offset);
    if (i + g->nold >= log->nsegs) {
        return SIZE_MAX; /* would take in the active segment, or is gone */
    }
    for (size_t k = 0; k < g->nold; k++) {
        const struct br_segment *s = log->segs[i + k];
        if (s->base_offset != g->old[k].base_offset || s->id != g->old[k].id ||
            s->size != g->old[k].size) {
            return SIZE_MAX;
        }
    }
    /* a restart completing the swap replaces the segments whose base
     * offsets lie below the cleaned segment's end: exactly the run */
    int64_t end = g->cleaned->next_offset;
    if (end <= g->old[g->nold - 1].base_offset || end > log->segs[i + g->nold]->base_offset) {
        return SIZE_MAX;
    }
    return i;
}

/* br_log_swap_cleaned's work, with the directory held. */
static int swap_groups(struct br_log *log, struct br_log_swap_group *groups, size_t n,
                       size_t *swapped)
{
    for (size_t g = 0; g < n; g++) {
        struct br_log_swap_group *grp = &groups[g];
        struct br_segment *cleaned = grp->cleaned;
        /* the commit point: a .log.swap is completed by the next open */
        int rc = br_segment_rename_files(cleaned, log->dir_fd, log->dir, BR_SEGMENT_SWAP_TAIL);
        if (rc != 0) {
            return rc; /* this group and the later ones stay as they were */
        }
        if (fsync(log->dir_fd) != 0) {
            br_error("%s: fsync: %s", log->dir, strerror(errno));
            log->failed = true;
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
        size_t i = find_run(log, grp);
        int64_t old_bytes = 0;
        for (size_t k = 0; k < grp->nold; k++) {
            old_bytes += log->segs[i + k]->size;
        }
        /* old segments go (the first one's names are taken over by the
         * rename below); their descriptors live on in fetch slices */
        for (size_t k = grp->nold; k-- > 1;) {
            struct br_segment *s = log->segs[i + k];
            if (br_segment_unlink(log->dir_fd, log->dir, s->base_offset) != 0) {
                log->failed = true;
            }
            br_segment_free(s);
        }
        br_segment_free(log->segs[i]);
        log->segs[i] = cleaned;
        grp->cleaned = NULL;
        memmove(log->segs + i + 1, log->segs + i + grp->nold,
                (log->nsegs - i - grp->nold) * sizeof(struct br_segment *));
        log->nsegs -= grp->nold - 1;
        log->size_bytes += cleaned->size - old_bytes;
        log->dir_changes++;
        cleaned->id = ++log->last_seg_id;
        rc = br_segment_rename_files(cleaned, log->dir_fd, log->dir, "");
        (*swapped)++;
        if (rc != 0 || log->failed) {
            /* the next open completes the swap; until then the segment
             * keeps its descriptor (its names are not yet its own) */
            log->failed = true;
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
        /* its files carry its names now: it can be closed and reopened */
        br_segment_set_files(cleaned, log->files);
    }
    return 0;
}

int br_log_swap_cleaned(struct br_log *log, struct br_log_swap_group *groups, size_t n,
                        size_t *swapped)
{
    *swapped = 0;
    if (log->failed) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    for (size_t g = 0; g < n; g++) {
        if (find_run(log, &groups[g]) == SIZE_MAX) {
            return 0; /* the log changed meanwhile: nothing is swapped */
        }
    }
    int rc = dir_hold(log);
    if (rc == 0) {
        rc = swap_groups(log, groups, n, swapped);
        dir_release(log);
    }
    return rc;
}

/* ------------------------------------------------------------- epochs */

int br_log_epoch_assign(struct br_log *log, int32_t epoch, int64_t start_offset)
{
    int rc = br_leader_epochs_assign(&log->epochs, epoch, start_offset);
    if (rc < 0) {
        return rc;
    }
    return rc == 1 ? persist_epochs(log) : 0;
}

int br_log_epoch_assign_deferred(struct br_log *log, int32_t epoch, int64_t start_offset)
{
    int rc = br_leader_epochs_assign(&log->epochs, epoch, start_offset);
    if (rc < 0) {
        return rc;
    }
    if (rc == 1) {
        log->epochs_unsaved = true; /* the next flush writes the file */
    }
    return 0;
}

int32_t br_log_latest_epoch(const struct br_log *log)
{
    return br_leader_epochs_latest(&log->epochs);
}

int br_log_end_offset_for_epoch(const struct br_log *log, int32_t epoch, int32_t *epoch_out,
                                int64_t *end_offset)
{
    br_leader_epochs_end_offset_for(&log->epochs, epoch, log->leo, epoch_out, end_offset);
    return 0;
}

/* ------------------------------------------------------------- iterator */

/* The index of the segment with this base offset, when it is still the
 * segment `id` (not one that replaced it). */
static bool find_segment(const struct br_log *log, int64_t base, uint64_t id, size_t *idx)
{
    size_t i = floor_segment(log, base);
    if (log->segs[i]->base_offset != base || log->segs[i]->id != id) {
        return false;
    }
    *idx = i;
    return true;
}

/* Moves the iterator into s at pos: 0, or an error of the reopen (the
 * iterator is then exhausted). */
static int iter_enter(struct br_log_iter *it, struct br_segment *s, int64_t pos)
{
    br_fileref_unref(it->file);
    it->file = NULL;
    int rc = br_segment_file(s, it->log->dir, &it->file);
    if (rc != 0) {
        return rc;
    }
    it->seg_id = s->id;
    it->seg_base = s->base_offset;
    it->seen_end = s->size;
    br_cursor_init(&it->c, br_fileref_fd(it->file), pos, s->size, it->buf, sizeof it->buf);
    return 0;
}

int br_log_iter_open(struct br_log *log, int64_t from_offset, struct br_log_iter **out)
{
    *out = NULL;
    if (from_offset > log->leo) {
        return KP_ERR_OFFSET_OUT_OF_RANGE;
    }
    if (from_offset < log->start_offset) {
        from_offset = log->start_offset;
    }
    struct br_log_iter *it = kp_calloc(1, sizeof *it);
    if (it == NULL) {
        return KP_E_NOMEM;
    }
    it->log = log;
    it->from = from_offset;
    struct br_segment *s = log->segs[floor_segment(log, from_offset)];
    int rc = iter_enter(it, s, br_segment_lookup(s, log->dir, from_offset));
    if (rc != 0) {
        br_log_iter_close(it);
        return rc;
    }
    *out = it;
    return 0;
}

int br_log_iter_next(struct br_log_iter *it, struct kp_batch_header *h)
{
    if (it->err != 0) {
        return it->err;
    }
    while (it->file != NULL) {
        size_t idx = 0;
        const struct br_log *log = it->log;
        if (!find_segment(log, it->seg_base, it->seg_id, &idx) ||
            log->segs[idx]->size < it->seen_end) {
            /* deleted or truncated under us */
            br_fileref_unref(it->file);
            it->file = NULL;
            break;
        }
        it->seen_end = log->segs[idx]->size;
        it->c.end = it->seen_end;
        size_t size = 0;
        int rc = br_cursor_peek(&it->c, h, &size);
        if (rc == KP_ITER_END) {
            if (idx + 1 == log->nsegs) {
                return KP_ITER_END; /* appends may come: the iterator stays here */
            }
            rc = iter_enter(it, log->segs[idx + 1], 0);
            if (rc != 0) {
                it->err = rc;
                return rc;
            }
            continue;
        }
        if (rc != 0) {
            report_damage(log, log->segs[idx], it->c.pos, rc);
            it->err = rc;
            return rc;
        }
        it->c.pos += (int64_t)size;
        if (h->BaseOffset + h->LastOffsetDelta >= it->from) {
            return 0;
        }
    }
    return KP_ITER_END;
}

void br_log_iter_close(struct br_log_iter *it)
{
    if (it == NULL) {
        return;
    }
    br_fileref_unref(it->file);
    kp_free(it);
}

/* ------------------------------------------------------------- directories */

int br_log_dir_remove(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            return 0;
        }
        br_error("%s: open: %s", path, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        br_error("%s: fdopendir: %s", path, strerror(errno));
        (void)close(fd);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL) {
            if (errno != 0) {
                br_error("%s: readdir: %s", path, strerror(errno));
                rc = KP_ERR_KAFKA_STORAGE_ERROR;
            }
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        /* a partition dir holds files only; anything else is not ours */
        if (unlinkat(dirfd(d), de->d_name, 0) != 0) {
            br_error("%s/%s: unlink: %s", path, de->d_name, strerror(errno));
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    (void)closedir(d);
    if (rc == 0 && rmdir(path) != 0) {
        br_error("%s: rmdir: %s", path, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    return rc;
}

int br_log_delete_dir_name(const char *parent, const char *topic, int32_t partition, char *out,
                           size_t outlen)
{
    /* Kafka: java.util.UUID.randomUUID without its dashes */
    uint8_t rnd[16];
    if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        /* only uniqueness matters here, not secrecy */
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        x ^= (uint64_t)getpid() << 40;
        for (size_t i = 0; i < sizeof rnd; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            rnd[i] = (uint8_t)(x >> 56);
        }
    }
    char suffix[64];
    int n = snprintf(suffix, sizeof suffix, "-%" PRId32 ".", partition);
    if (n <= 0) {
        return KP_E_INVALID_ARG;
    }
    size_t sl = (size_t)n;
    for (size_t i = 0; i < sizeof rnd; i++) {
        static const char hex[] = "0123456789abcdef";
        suffix[sl++] = hex[rnd[i] >> 4];
        suffix[sl++] = hex[rnd[i] & 15];
    }
    memcpy(suffix + sl, "-delete", sizeof "-delete");
    sl += sizeof "-delete" - 1;
    size_t tl = strlen(topic);
    if (tl > NAME_MAX - sl) {
        tl = NAME_MAX - sl; /* Kafka: topic.substring(0, 255 - suffix.size) */
    }
    n = snprintf(out, outlen, "%s/%.*s%s", parent, (int)tl, topic, suffix);
    return n > 0 && (size_t)n < outlen ? 0 : KP_E_INVALID_ARG;
}

int br_log_move_dir(struct br_log *log, const char *target)
{
    size_t n = strlen(target);
    char *dir = kp_malloc(n + 1);
    if (dir == NULL) {
        br_error("%s: out of memory renaming it", log->dir);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    memcpy(dir, target, n + 1);
    /* a flush away that has not written the epoch file yet would write it
     * under the old name: it is written here, under the new one */
    struct br_log_flush *f =
        log->flushing != NULL && log->flushing->epochs != NULL ? log->flushing : NULL;
    if (f != NULL) {
        (void)pthread_mutex_lock(&f->mu);
    }
    int rc = rename(log->dir, target);
    int err = errno;
    bool epochs_pending = f != NULL && !f->epochs_written && !f->epochs_cancelled;
    if (f != NULL) {
        f->epochs_cancelled = f->epochs_cancelled || (rc == 0 && epochs_pending);
        (void)pthread_mutex_unlock(&f->mu);
    }
    if (rc != 0) {
        br_error("%s: rename to %s: %s", log->dir, target, strerror(err));
        kp_free(dir);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    kp_free(log->dir);
    log->dir = dir;
    return epochs_pending ? persist_epochs(log) : 0;
}

bool br_log_dir_is_deleted(const char *name)
{
    size_t n = strlen(name);
    size_t s = sizeof "-delete" - 1;
    return n > s && strcmp(name + n - s, "-delete") == 0;
}

int br_log_dir_delete(const char *dir)
{
    const char *slash = strrchr(dir, '/');
    const char *base = slash != NULL ? slash + 1 : dir;
    if (br_log_dir_is_deleted(base)) {
        /* renamed already (the topic's deletion renames first) */
        br_info("%s: removing the deleted log", dir);
        return br_log_dir_remove(dir);
    }
    char parent[PATH_MAX];
    char topic[256]; /* a topic name is at most 249 bytes */
    int32_t partition = 0;
    int n = slash != NULL ? snprintf(parent, sizeof parent, "%.*s", (int)(slash - dir), dir)
                          : snprintf(parent, sizeof parent, ".");
    char target[PATH_MAX];
    if (n < 0 || (size_t)n >= sizeof parent ||
        br_log_dir_parse_name(base, topic, sizeof topic, &partition) != 0 ||
        br_log_delete_dir_name(parent, topic, partition, target, sizeof target) != 0) {
        return KP_E_INVALID_ARG;
    }
    if (rename(dir, target) != 0) {
        br_error("%s: rename to %s: %s", dir, target, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    br_info("%s: deleting the log", dir);
    return br_log_dir_remove(target);
}

int br_log_delete(struct br_log *log)
{
    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s", log->dir);
    free_log(log);
    if (n < 0 || (size_t)n >= sizeof dir) {
        return KP_E_INVALID_ARG;
    }
    return br_log_dir_delete(dir);
}

int br_log_dir_parse_name(const char *name, char *topic, size_t topic_cap, int32_t *partition)
{
    const char *dash = strrchr(name, '-');
    if (dash == NULL) {
        return KP_E_INVALID_ARG;
    }
    size_t tlen = (size_t)(dash - name);
    if (!br_topic_name_valid(name, tlen) || tlen >= topic_cap) {
        return KP_E_INVALID_ARG;
    }
    const char *p = dash + 1;
    size_t plen = strlen(p);
    if (plen == 0 || plen > 10 || (p[0] == '0' && plen > 1)) {
        return KP_E_INVALID_ARG;
    }
    int64_t v = 0;
    for (size_t i = 0; i < plen; i++) {
        if (p[i] < '0' || p[i] > '9') {
            return KP_E_INVALID_ARG;
        }
        v = v * 10 + (p[i] - '0');
    }
    if (v > INT32_MAX) {
        return KP_E_INVALID_ARG;
    }
    memcpy(topic, name, tlen);
    topic[tlen] = '\0';
    *partition = (int32_t)v;
    return 0;
}

/* ------------------------------------------------------------- write-behind */

#define WB_PAGE INT64_C(4096)
#define WB_MIN_STEP (INT64_C(64) << 10)

struct br_log_wb {
    struct br_log *log; /* NULL once the log is closed */
    char *dir;          /* owned copy: messages from the thread that runs it */
    bool failed;        /* an I/O error: the log fails at the end */
    bool unsupported;   /* the file system refuses the calls: write-behind stops */
    size_t n;
    struct br_log_wb_range r[];
};

int64_t br_log_wb_step(int64_t window)
{
    int64_t step = window / 2;
    return step < WB_MIN_STEP ? WB_MIN_STEP : step;
}

int64_t br_log_wb_window(const struct br_log *log)
{
    return log->wb_window;
}

int64_t br_log_wb_appended(const struct br_log *log)
{
    return log->wb_appended;
}

/* A truncation may leave marks past a segment's end: they follow it. */
static void wb_clamp(struct br_log *log)
{
    for (size_t i = 0; i < log->nsegs; i++) {
        struct br_segment *s = log->segs[i];
        if (s->wb_started > s->size) {
            s->wb_started = s->size;
        }
        if (s->wb_dropped > s->size) {
            s->wb_dropped = s->size;
        }
    }
}

void br_log_set_writebehind(struct br_log *log, int64_t window, const struct br_log_wb_ops *ops,
                            void *ctx)
{
    if (window <= 0) {
        log->wb_window = 0;
        log->wb_ops = NULL;
        log->wb_ctx = NULL;
        return;
    }
    if (log->wb_window <= 0) {
        for (size_t i = 0; i < log->nsegs; i++) {
            log->segs[i]->wb_started = log->segs[i]->size;
            log->segs[i]->wb_dropped = log->segs[i]->size;
        }
        log->wb_next = log->wb_appended + br_log_wb_step(window);
    }
    log->wb_window = window;
    log->wb_ops = ops;
    log->wb_ctx = ctx;
}

/* Where in a segment of `size` bytes, followed by `after` bytes of later
 * segments, the bytes `dist` or more behind the end stop: a page boundary,
 * or the segment's end once it is wholly behind. */
static int64_t wb_target(int64_t size, int64_t after, int64_t dist)
{
    int64_t t = size + after - dist;
    if (t <= 0) {
        return 0;
    }
    if (t >= size) {
        return size;
    }
    return t - t % WB_PAGE;
}

/* Whether [from, to) of a segment is worth a call: a step, or the rest of
 * a segment that is wholly behind. */
static bool wb_worth(int64_t from, int64_t to, int64_t size, int64_t step)
{
    return to > from && (to - from >= step || to == size);
}

static void wb_add(struct br_log *log, struct br_log_wb *w, struct br_segment *s, int64_t from,
                   int64_t to, bool drop)
{
    struct br_fileref *f = NULL;
    if (br_segment_file(s, log->dir, &f) != 0 || f == NULL) {
        return; /* a segment that cannot be reopened: its reads will say so */
    }
    w->r[w->n++] = (struct br_log_wb_range){
        .file = f, .seg_id = s->id, .off = from, .len = to - from, .drop = drop};
    if (drop) {
        s->wb_dropped = to;
        if (s->wb_started < to) {
            s->wb_started = to;
        }
    } else {
        s->wb_started = to;
    }
}

int br_log_wb_begin(struct br_log *log, struct br_log_wb **out)
{
    *out = NULL;
    if (log->wb != NULL) {
        return KP_E_INVALID_ARG;
    }
    if (log->wb_window <= 0 || log->failed || log->nsegs == 0) {
        return 0;
    }
    int64_t window = log->wb_window;
    int64_t step = br_log_wb_step(window);
    log->wb_next = log->wb_appended + step;
    wb_clamp(log);
    /* older segments are done once one is: each is finished (wholly
     * dropped) before a later one's bytes are 2W behind */
    size_t first = log->nsegs;
    while (first > 0) {
        const struct br_segment *s = log->segs[first - 1];
        if (first < log->nsegs && s->wb_dropped >= s->size) {
            break;
        }
        first--;
    }
    size_t cap = 2 * (log->nsegs - first);
    struct br_log_wb *w = kp_calloc(1, sizeof *w + cap * sizeof w->r[0]);
    size_t dlen = strlen(log->dir);
    char *dir = kp_malloc(dlen + 1);
    if (w == NULL || dir == NULL) {
        kp_free(w);
        kp_free(dir);
        return KP_E_NOMEM;
    }
    memcpy(dir, log->dir, dlen + 1);
    w->dir = dir;
    int64_t after = 0;
    for (size_t i = log->nsegs; i-- > first;) {
        struct br_segment *s = log->segs[i];
        int64_t pd = wb_target(s->size, after, 2 * window);
        if (wb_worth(s->wb_dropped, pd, s->size, step)) {
            wb_add(log, w, s, s->wb_dropped, pd, true);
        }
        int64_t pw = wb_target(s->size, after, window);
        if (wb_worth(s->wb_started, pw, s->size, step)) {
            wb_add(log, w, s, s->wb_started, pw, false);
        }
        after += s->size;
    }
    if (w->n == 0) {
        kp_free(w->dir);
        kp_free(w);
        return 0;
    }
    w->log = log;
    log->wb = w;
    *out = w;
    return 0;
}

/* One range's calls; a failure is recorded in w. */
static void wb_call(struct br_log_wb *w, const struct br_log_wb_range *r)
{
    int fd = br_fileref_fd(r->file);
    unsigned flags = r->drop ? SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                   SYNC_FILE_RANGE_WAIT_AFTER
                             : SYNC_FILE_RANGE_WRITE;
    int rc;
    do {
        rc = sync_file_range(fd, (off_t)r->off, (off_t)r->len, flags);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        int e = errno;
        if (e == EIO || e == ENOSPC || e == EDQUOT) {
            br_error("%s: writeback of segment bytes [%" PRId64 ", %" PRId64 "): %s", w->dir,
                     r->off, r->off + r->len, strerror(e));
            w->failed = true;
        } else if (!w->unsupported) {
            br_warn("%s: sync_file_range: %s; write-behind stops for this log", w->dir,
                    strerror(e));
            w->unsupported = true;
        }
        return;
    }
    if (r->drop) {
        /* clean pages only: anything written meanwhile stays */
        (void)posix_fadvise(fd, (off_t)r->off, (off_t)r->len, POSIX_FADV_DONTNEED);
    }
}

void br_log_wb_run(struct br_log_wb *w)
{
    /* the writebacks that do not wait first, then those that do */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < w->n && !w->failed && !w->unsupported; i++) {
            if (w->r[i].drop == (pass == 1)) {
                wb_call(w, &w->r[i]);
            }
        }
    }
}

int br_log_wb_end(struct br_log_wb *w)
{
    int rc = w->failed ? KP_ERR_KAFKA_STORAGE_ERROR : 0;
    struct br_log *log = w->log;
    if (log != NULL) {
        log->wb = NULL;
        if (w->failed) {
            log->failed = true;
        }
        if (w->unsupported) {
            log->wb_window = 0;
        }
        /* appends that passed the next step while this job was away said
         * nothing (a job at a time): the log is due now, or it would wait
         * for an append that may not come */
        wb_tell_due(log);
    }
    for (size_t i = 0; i < w->n; i++) {
        br_fileref_unref(w->r[i].file);
    }
    kp_free(w->dir);
    kp_free(w);
    return rc;
}

size_t br_log_wb_count(const struct br_log_wb *w)
{
    return w->n;
}

const struct br_log_wb_range *br_log_wb_get(const struct br_log_wb *w, size_t i)
{
    return i < w->n ? &w->r[i] : NULL;
}

static void wb_forget(struct br_log *log)
{
    if (log->wb != NULL) {
        log->wb->log = NULL; /* it ends on its own */
        log->wb = NULL;
    }
}
