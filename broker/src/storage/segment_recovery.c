/* samsa-broker: a segment's recovery: the scan of its .log that rebuilds
 * its indexes and truncates a torn tail (see segment.h). */
#define _GNU_SOURCE

#include "storage/segment_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The recovery scan reads the segment through a window of this size, grown
 * to hold a larger batch when one comes. */
#define SCAN_WINDOW ((size_t)1 << 20)

/* ------------------------------------------------------------- recovery */

enum scan_status {
    SCAN_OK = 0,       /* reached the end of the file */
    SCAN_CUT = 1,      /* stopped at a bad byte: res->reason */
    SCAN_MISMATCH = 2, /* the starting index entry does not match its batch */
};

struct scan {
    struct br_segment *s;
    uint8_t *buf;
    size_t cap;
    int64_t win_pos;
    size_t win_len;
    int fd; /* the .log's */
};

/* Makes the window hold [pos, pos + n), n <= bytes left in the file. */
static int window_fill(struct scan *sc, int64_t pos, size_t n)
{
    if (pos >= sc->win_pos && pos - sc->win_pos <= (int64_t)sc->win_len &&
        sc->win_len - (size_t)(pos - sc->win_pos) >= n) {
        return 0;
    }
    if (n > sc->cap) {
        uint8_t *b = kp_realloc(sc->buf, n);
        if (b == NULL) {
            return KP_E_NOMEM;
        }
        sc->buf = b;
        sc->cap = n;
    }
    size_t left = (size_t)(sc->s->size - pos);
    size_t want = left < sc->cap ? left : sc->cap;
    size_t got = 0;
    if (br_pread_full(sc->fd, sc->buf, want, pos, &got) != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    sc->win_pos = pos;
    sc->win_len = got;
    if (got < n) {
        errno = EIO; /* the file shrank under us */
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    return 0;
}

/*
 * The validating walk from `from` to the end of the file. expect_last >= 0:
 * the first batch is an index entry's and must end at that offset.
 */
static int scan_validate(struct scan *sc, int64_t from, int64_t expect_last, int64_t limit,
                         int32_t interval, struct br_leader_epochs *epochs,
                         struct br_recover_result *res, int64_t *valid_end, int64_t *next_offset,
                         enum scan_status *status)
{
    struct br_segment *s = sc->s;
    int64_t pos = from;
    int64_t next = s->base_offset; /* the lowest offset the next batch may start at */
    bool first = true;
    *status = SCAN_OK;

    while (pos < s->size) {
        size_t left = (size_t)(s->size - pos);
        size_t need = left < KP_BATCH_HEADER_SIZE ? left : KP_BATCH_HEADER_SIZE;
        struct kp_batch_header h;
        size_t bsize = 0;
        int rc = 0;
        for (;;) {
            rc = window_fill(sc, pos, need);
            if (rc != 0) {
                return rc;
            }
            const uint8_t *p = sc->buf + (pos - sc->win_pos);
            size_t have = sc->win_len - (size_t)(pos - sc->win_pos);
            rc = kp_batch_parse_lenient(p, have, &h, &bsize);
            if (rc != KP_AGAIN || bsize > left || bsize <= have) {
                break;
            }
            need = bsize; /* complete batch on disk, not yet in the window */
        }
        if (rc == KP_AGAIN) {
            (void)snprintf(res->reason, sizeof res->reason,
                           "partial batch at the end: %zu bytes of at least %zu", left, bsize);
            goto out_cut;
        }
        if (rc != 0) {
            (void)snprintf(res->reason, sizeof res->reason, "invalid batch: %s (%s)",
                           kp_err_name(rc), kp_err_str(rc));
            goto out_cut;
        }
        int64_t last = INT64_MAX;
        if (h.LastOffsetDelta >= 0 && h.BaseOffset <= INT64_MAX - h.LastOffsetDelta) {
            last = h.BaseOffset + h.LastOffsetDelta;
        }
        if (first && expect_last >= 0 && last != expect_last) {
            *status = SCAN_MISMATCH;
            return 0;
        }
        if (h.LastOffsetDelta < 0 || last == INT64_MAX) {
            (void)snprintf(res->reason, sizeof res->reason,
                           "batch offsets overflow (BaseOffset %" PRId64 ", LastOffsetDelta %d)",
                           h.BaseOffset, (int)h.LastOffsetDelta);
            goto out_cut;
        }
        if (!first || expect_last < 0) {
            if (h.BaseOffset < next) {
                (void)snprintf(res->reason, sizeof res->reason,
                               "BaseOffset %" PRId64 " below the expected %" PRId64, h.BaseOffset,
                               next);
                goto out_cut;
            }
        }
        if (last - s->base_offset > INT32_MAX) {
            (void)snprintf(res->reason, sizeof res->reason,
                           "offset %" PRId64 " too far from the segment's base offset", last);
            goto out_cut;
        }
        if (last >= limit) {
            (void)snprintf(res->reason, sizeof res->reason,
                           "offset %" PRId64 " reaches the next segment (%" PRId64 ")", last,
                           limit);
            goto out_cut;
        }
        if ((int64_t)bsize > INT32_MAX - pos) {
            (void)snprintf(res->reason, sizeof res->reason,
                           "batch ends beyond the 2 GiB a segment can index");
            goto out_cut;
        }
        rc = seg_index_batch(s, pos, (int64_t)bsize, last, h.MaxTimestamp, interval);
        if (rc != 0) {
            return rc;
        }
        if (epochs != NULL && h.PartitionLeaderEpoch >= 0 &&
            h.PartitionLeaderEpoch > br_leader_epochs_latest(epochs)) {
            rc = br_leader_epochs_assign(epochs, h.PartitionLeaderEpoch, h.BaseOffset);
            if (rc < 0) {
                return rc;
            }
        }
        first = false;
        next = last + 1;
        pos += (int64_t)bsize;
    }
    *valid_end = pos;
    *next_offset = next;
    return 0;

out_cut:
    if (first && expect_last >= 0) {
        /* the index pointed at something that is not its batch: the entry
         * is wrong, not necessarily the data */
        *status = SCAN_MISMATCH;
        return 0;
    }
    *status = SCAN_CUT;
    *valid_end = pos;
    *next_offset = next;
    return 0;
}

int br_segment_recover(struct br_segment *s, const char *dir, int64_t recovery_point,
                       int64_t limit_offset, int32_t index_interval,
                       struct br_leader_epochs *epochs, struct br_recover_result *res)
{
    memset(res, 0, sizeof *res);
    char name[BR_SEGMENT_NAME_MAX];
    br_segment_file_name(s->base_offset, "log", name, sizeof name);
    int fd = -1;
    int rc = br_segment_fd(s, dir, &fd);
    if (rc != 0) {
        return rc;
    }
    struct scan sc = {s, NULL, 0, 0, 0, fd};

    /* start at the last index entry below the recovery point: what precedes
     * it was flushed, and the entry itself is checked against its batch */
    size_t k = s->oidx_n;
    size_t times_before = s->tidx_n;
    size_t times_synced_before = s->tidx_synced;
    while (k > 0 && s->base_offset + s->oidx[k - 1].rel >= recovery_point) {
        k--;
    }
    int64_t valid_end = 0;
    int64_t next = s->base_offset;
    enum scan_status status = SCAN_OK;
    for (;;) {
        int64_t from = 0;
        int64_t expect_last = -1;
        seg_drop_offsets_from(s, k);
        if (k > 0) {
            from = s->oidx[k - 1].pos;
            expect_last = s->base_offset + s->oidx[k - 1].rel;
            seg_drop_times_at_or_after(s, expect_last + 1);
        } else {
            seg_drop_times_at_or_after(s, INT64_MIN);
        }
        seg_reset_tail_state(s);
        if (sc.buf == NULL) {
            /* grown by window_fill when a batch needs more */
            size_t want = (size_t)(s->size - from);
            sc.cap = want < SCAN_WINDOW ? want : SCAN_WINDOW;
            sc.cap = sc.cap < KP_BATCH_HEADER_SIZE ? KP_BATCH_HEADER_SIZE : sc.cap;
            sc.buf = kp_malloc(sc.cap);
            if (sc.buf == NULL) {
                return KP_E_NOMEM;
            }
        }
        sc.win_pos = 0;
        sc.win_len = 0;
        rc = scan_validate(&sc, from, expect_last, limit_offset, index_interval, epochs, res,
                           &valid_end, &next, &status);
        if (rc != 0) {
            goto out_free;
        }
        if (status != SCAN_MISMATCH) {
            break;
        }
        br_warn("%s/%s: index entry %zu (offset %" PRId64 ", position %" PRId64
                ") does not match the batch there; rebuilding the indexes from position 0",
                dir, name, k - 1, expect_last, from);
        res->index_rebuilt = true;
        k = 0;
    }

    if (status == SCAN_CUT) {
        res->cut = true;
        res->cut_pos = valid_end;
        res->cut_bytes = s->size - valid_end;
        br_warn("%s/%s: truncated at position %" PRId64 ", removed %" PRId64 " bytes: %s", dir,
                name, valid_end, res->cut_bytes, res->reason);
        if (seg_truncate_fd(fd, valid_end) != 0) {
            br_error("%s/%s: ftruncate: %s", dir, name, strerror(errno));
            s->io_failed = true;
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            goto out_free;
        }
        s->size = valid_end;
    }
    s->next_offset = next;
    s->max_timestamp_known = true;
    /* The time entry a close adds (br_segment_seal) follows the last offset
     * entry, so the scan dropped it; when it is exactly what a seal would
     * add now, it stays, and a restart after a clean stop writes nothing. */
    size_t n = s->tidx_n;
    if (status == SCAN_OK && !res->index_rebuilt && times_before == n + 1 &&
        s->tidx[n].ts == s->max_timestamp &&
        s->base_offset + s->tidx[n].rel == s->offset_of_max_timestamp &&
        (n == 0 || s->tidx[n].ts > s->tidx[n - 1].ts)) {
        s->tidx_n = n + 1;
        if (times_synced_before == n + 1 && s->tidx_synced == n) {
            s->tidx_synced = n + 1;
        }
    }
    /* offsets at or above the recovery point may have been in the page
     * cache only: the flush that follows must reach the disk */
    if (res->cut || s->next_offset > recovery_point) {
        s->dirty = true;
        s->writes++;
    }
    rc = seg_sync_indexes(s, dir);

out_free:
    kp_free(sc.buf);
    return rc;
}
