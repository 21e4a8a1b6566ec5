/* samsa-broker: a log's flush, on the reactor or off it, and write-behind
 * (see log.h). */
#define _GNU_SOURCE

#include "storage/log_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The log's appends passed its next write-behind step and no job is away:
 * its owner hears it is due, once (br_log_wb_begin sets the next step). */
void log_wb_tell_due(struct br_log *log)
{
    if (log->wb_window > 0 && log->wb_appended >= log->wb_next && log->wb == NULL &&
        log->wb_ops != NULL) {
        log->wb_next = INT64_MAX;
        log->wb_ops->due(log->wb_ctx);
    }
}

/* ------------------------------------------------------------- flush */

int br_log_flush(struct br_log *log)
{
    if (log->epochs_unsaved) {
        int rc = log_persist_epochs(log);
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
        int rc = log_dir_hold(log);
        if (rc == 0 && fsync(log->dir_fd) != 0) {
            br_error("%s: fsync: %s", log->dir, strerror(errno));
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
        }
        log_dir_release(log);
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
void log_wb_clamp(struct br_log *log)
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
    log_wb_clamp(log);
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
        log_wb_tell_due(log);
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

void log_wb_forget(struct br_log *log)
{
    if (log->wb != NULL) {
        log->wb->log = NULL; /* it ends on its own */
        log->wb = NULL;
    }
}
