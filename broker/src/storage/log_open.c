/* samsa-broker: opening a log from its directory (completing the cleaner's
 * files, loading segments and epochs, recovery) and closing it (see log.h). */
#define _GNU_SOURCE

#include "storage/log_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- open */

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
    int rc = log_epoch_path(log, path, sizeof path);
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
        const struct br_segment *s = log_active(log);
        br_warn("%s/%020" PRId64 ".log: deleted, %" PRId64
                " bytes removed: it follows the truncation of %020" PRId64 ".log",
                log->dir, s->base_offset, s->size, log->segs[i]->base_offset);
        int r = log_remove_segment(log, log->nsegs - 1);
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
    while (log->nsegs > 1 && log_active(log)->size == 0) {
        struct br_segment *last = log_active(log);
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
        int rc = log_remove_segment(log, log->nsegs - 1);
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
            rc = log_push_segment(log, s);
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
        rc = log_push_segment(log, s);
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
    size_t r = log_floor_segment(log, recovery_point);
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
    rc = log_dir_hold(log); /* released at the end of the open */
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
    log->leo = log_active(log)->next_offset;
    if (rebuild) {
        rc = rebuild_epochs(log);
        if (rc != 0) {
            goto out_close;
        }
    }
    (void)br_leader_epochs_truncate_from_end(&log->epochs, log->leo);
    (void)br_leader_epochs_truncate_from_start(&log->epochs, log->start_offset);
    if (rebuild || !epochs_equal(&log->epochs, loaded, nloaded)) {
        rc = log_persist_epochs(log);
        if (rc != 0) {
            goto out_close;
        }
    }

    /* what was recovered is made durable before the recovery point says so */
    rc = br_log_flush(log);
    if (rc != 0) {
        goto out_close;
    }
    struct br_segment *a = log_active(log);
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
    log_dir_release(log);
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
    log_free(log); /* nothing more is written on the way out */
    return rc;
}

void br_log_set_files(struct br_log *log, struct br_filecache *files)
{
    log->files = files;
    for (size_t i = 0; i < log->nsegs; i++) {
        br_segment_set_files(log->segs[i], files);
    }
}

void log_free(struct br_log *log)
{
    if (log->flushing != NULL) {
        log->flushing->log = NULL; /* it ends on its own */
    }
    log_wb_forget(log);
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
        int rc = br_segment_seal(log_active(log), log->dir);
        (void)rc;
    }
    log_free(log);
}
