/* samsa-broker: a log's reads, offset-for-timestamp lookups and iterators
 * (see log.h). */
#define _GNU_SOURCE

#include "storage/log_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

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
    size_t first = log_floor_segment(log, offset);
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

/* ------------------------------------------------------------- iterator */

/* The index of the segment with this base offset, when it is still the
 * segment `id` (not one that replaced it). */
static bool find_segment(const struct br_log *log, int64_t base, uint64_t id, size_t *idx)
{
    size_t i = log_floor_segment(log, base);
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
    struct br_segment *s = log->segs[log_floor_segment(log, from_offset)];
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
