/* samsa-broker: what removes a log's records: truncation, retention and
 * the swap of cleaned segments (see log.h). */
#define _GNU_SOURCE

#include "storage/log_internal.h"

#include "base/logging.h"
#include "storage/producer_snapshot.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------- truncation */

int br_log_truncate_fully_and_start_at(struct br_log *log, int64_t offset)
{
    if (offset < 0) {
        return KP_E_INVALID_ARG;
    }
    int rc = 0;
    size_t keep = log_floor_segment(log, offset);
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
        rc = log_dir_hold(log);
        if (rc != 0) {
            return rc;
        }
        rc = br_segment_create(log->dir_fd, log->dir, offset, log->files, &s);
        if (rc == 0) {
            rc = log_push_segment(log, s);
            if (rc != 0) {
                br_segment_free(s);
                if (br_segment_unlink(log->dir_fd, log->dir, offset) != 0) {
                    log->failed = true;
                }
            }
        }
        log_dir_release(log);
        if (rc != 0) {
            return rc;
        }
        keep = log->nsegs - 1;
    }
    /* everything else goes; `keep` moves to the front */
    struct br_segment *kept = log->segs[keep];
    for (size_t i = log->nsegs; i-- > 0;) {
        if (log->segs[i] != kept) {
            int r = log_remove_segment(log, i);
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
    int r = log_persist_epochs(log);
    br_info("%s: truncated fully, log starts at %" PRId64, log->dir, offset);
    return rc != 0 ? rc : r;
}

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
    while (log->nsegs > 1 && log_active(log)->base_offset >= offset) {
        int r = log_remove_segment(log, log->nsegs - 1);
        rc = rc != 0 ? rc : r;
    }
    struct br_segment *a = log_active(log);
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
    log_wb_clamp(log);
    if (br_leader_epochs_truncate_from_end(&log->epochs, log->leo)) {
        r = log_persist_epochs(log);
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
    if (offset >= log->leo && log_active(log)->size > 0) {
        rc = log_roll(log);
        if (rc != 0) {
            return rc;
        }
    }
    while (log->nsegs > 1 && log->segs[1]->base_offset <= offset) {
        br_info("%s/%020" PRId64 ".log: deleting segment (%" PRId64
                " bytes), below offset %" PRId64,
                log->dir, log->segs[0]->base_offset, log->segs[0]->size, offset);
        int r = log_remove_segment(log, 0);
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
    size_t i = log_floor_segment(log, g->old[0].base_offset);
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
    int rc = log_dir_hold(log);
    if (rc == 0) {
        rc = swap_groups(log, groups, n, swapped);
        log_dir_release(log);
    }
    return rc;
}
