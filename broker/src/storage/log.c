/* samsa-broker: a partition's log (see log.h): its config, accessors,
 * directory descriptor, segment list and epochs; the rest in the log_*.c
 * files that log_internal.h lists. */
#define _GNU_SOURCE

#include "storage/log.h"

#include "storage/log_internal.h"
#include "storage/txn_index.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

struct br_segment *log_active(const struct br_log *log)
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
    return log_active(log)->base_offset;
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
    int64_t two_segments = lower_base(log, log_active(log)->base_offset);
    int64_t recovery = lower_base(log, log->recovery_point);
    int64_t keep = two_segments < recovery ? two_segments : recovery;
    return keep > log->start_offset ? keep : log->start_offset;
}

/* The segment whose base offset is the largest <= offset (0 when none). */
size_t log_floor_segment(const struct br_log *log, int64_t offset)
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
int log_dir_hold(struct br_log *log)
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

void log_dir_release(struct br_log *log)
{
    if (log->dir_holds > 0 && --log->dir_holds == 0) {
        (void)close(log->dir_fd);
        log->dir_fd = -1;
    }
}

/* ------------------------------------------------------------- segment list */

int log_push_segment(struct br_log *log, struct br_segment *s)
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
int log_remove_segment(struct br_log *log, size_t i)
{
    struct br_segment *s = log->segs[i];
    int rc = log_dir_hold(log);
    if (rc == 0) {
        rc = br_segment_unlink(log->dir_fd, log->dir, s->base_offset);
        /* its aborted transactions go with it (Kafka's LogSegment.deleteIfExists) */
        int r = br_txnidx_unlink(log->dir, s->base_offset);
        rc = rc != 0 ? rc : r;
        log_dir_release(log);
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

int log_epoch_path(const struct br_log *log, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s/%s", log->dir, EPOCH_FILE);
    return n < 0 || (size_t)n >= cap ? KP_E_INVALID_ARG : 0;
}

int log_persist_epochs(struct br_log *log)
{
    struct br_log_flush *f = log->flushing;
    if (f != NULL && f->epochs != NULL) {
        /* what this writes is newer than what the flush away would */
        (void)pthread_mutex_lock(&f->mu);
        f->epochs_cancelled = true;
        (void)pthread_mutex_unlock(&f->mu);
    }
    char path[PATH_MAX];
    int rc = log_epoch_path(log, path, sizeof path);
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

/* ------------------------------------------------------------- epochs */

int br_log_epoch_assign(struct br_log *log, int32_t epoch, int64_t start_offset)
{
    int rc = br_leader_epochs_assign(&log->epochs, epoch, start_offset);
    if (rc < 0) {
        return rc;
    }
    return rc == 1 ? log_persist_epochs(log) : 0;
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
