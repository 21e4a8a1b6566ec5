/* samsa-broker: a segment's offset and time indexes, in memory and on
 * disk, and the lookups through them (see segment.h). */
#define _GNU_SOURCE

#include "storage/segment_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* Index entries written per pwrite when an index is rewritten. */
#define WRITE_CHUNK_ENTRIES 512

/* ------------------------------------------------------------- in-memory indexes */

int seg_grow(void **v, size_t *cap, size_t want, size_t elem)
{
    if (want <= *cap) {
        return 0;
    }
    size_t c = *cap > 0 ? *cap : 64;
    while (c < want) {
        if (c > SIZE_MAX / 2 / elem) {
            return KP_E_NOMEM;
        }
        c *= 2;
    }
    void *p = kp_realloc(*v, c * elem);
    if (p == NULL) {
        return KP_E_NOMEM;
    }
    *v = p;
    *cap = c;
    return 0;
}

static int push_offset(struct br_segment *s, int64_t last_offset, int64_t pos)
{
    int64_t rel = last_offset - s->base_offset;
    if (rel < 0 || rel > INT32_MAX || pos < 0 || pos > INT32_MAX) {
        return 0; /* the callers keep both in range; never index what cannot be stored */
    }
    if (s->oidx_n > 0) {
        const struct br_offset_entry *last = &s->oidx[s->oidx_n - 1];
        if (rel <= last->rel || pos <= last->pos) {
            return 0;
        }
    }
    void *v = s->oidx;
    int rc = seg_grow(&v, &s->oidx_cap, s->oidx_n + 1, sizeof *s->oidx);
    s->oidx = v;
    if (rc != 0) {
        return rc;
    }
    s->oidx[s->oidx_n].rel = (int32_t)rel;
    s->oidx[s->oidx_n].pos = (int32_t)pos;
    s->oidx_n++;
    return 0;
}

/* Kafka's TimeIndex.maybeAppend: only a strictly larger timestamp. */
int seg_push_time(struct br_segment *s, int64_t ts, int64_t offset)
{
    int64_t rel = offset - s->base_offset;
    if (ts < 0 || rel < 0 || rel > INT32_MAX) {
        return 0;
    }
    if (s->tidx_n > 0) {
        const struct br_time_entry *last = &s->tidx[s->tidx_n - 1];
        if (ts <= last->ts || rel < last->rel) {
            return 0;
        }
    }
    void *v = s->tidx;
    int rc = seg_grow(&v, &s->tidx_cap, s->tidx_n + 1, sizeof *s->tidx);
    s->tidx = v;
    if (rc != 0) {
        return rc;
    }
    s->tidx[s->tidx_n].ts = ts;
    s->tidx[s->tidx_n].rel = (int32_t)rel;
    s->tidx_n++;
    return 0;
}

/* The bookkeeping of one appended (or recovered) batch at pos: Kafka's
 * LogSegment.append order, so a rebuilt index equals the appended one. */
int seg_index_batch(struct br_segment *s, int64_t pos, int64_t size, int64_t last_offset,
                    int64_t max_timestamp, int32_t interval)
{
    int rc = 0;
    if (max_timestamp > s->max_timestamp) {
        s->max_timestamp = max_timestamp;
        s->offset_of_max_timestamp = last_offset;
    }
    if (s->bytes_since_index > interval) {
        rc = push_offset(s, last_offset, pos);
        if (rc == 0) {
            rc = seg_push_time(s, s->max_timestamp, s->offset_of_max_timestamp);
        }
        s->bytes_since_index = 0;
    }
    s->bytes_since_index += size;
    return rc;
}

/* Makes each index file hold exactly the in-memory entries: cut what the
 * file has beyond the synced prefix, write the rest. */
static int sync_offset_index(struct br_segment *s, int fd)
{
    int64_t want = (int64_t)s->oidx_synced * BR_OFFSET_ENTRY_SIZE;
    if (s->oidx_file_len != want) {
        if (seg_truncate_fd(fd, want) != 0) {
            return -1;
        }
        s->oidx_file_len = want;
    }
    uint8_t buf[WRITE_CHUNK_ENTRIES * BR_OFFSET_ENTRY_SIZE];
    while (s->oidx_synced < s->oidx_n) {
        size_t k = s->oidx_n - s->oidx_synced;
        k = k < WRITE_CHUNK_ENTRIES ? k : WRITE_CHUNK_ENTRIES;
        for (size_t i = 0; i < k; i++) {
            const struct br_offset_entry *e = &s->oidx[s->oidx_synced + i];
            kp_store_be32(buf + i * BR_OFFSET_ENTRY_SIZE, (uint32_t)e->rel);
            kp_store_be32(buf + i * BR_OFFSET_ENTRY_SIZE + 4, (uint32_t)e->pos);
        }
        if (seg_pwrite_full(fd, buf, k * BR_OFFSET_ENTRY_SIZE, s->oidx_file_len) != 0) {
            return -1;
        }
        s->oidx_file_len += (int64_t)(k * BR_OFFSET_ENTRY_SIZE);
        s->oidx_synced += k;
    }
    return 0;
}

static int sync_time_index(struct br_segment *s, int fd)
{
    int64_t want = (int64_t)s->tidx_synced * BR_TIME_ENTRY_SIZE;
    if (s->tidx_file_len != want) {
        if (seg_truncate_fd(fd, want) != 0) {
            return -1;
        }
        s->tidx_file_len = want;
    }
    uint8_t buf[WRITE_CHUNK_ENTRIES * BR_TIME_ENTRY_SIZE];
    while (s->tidx_synced < s->tidx_n) {
        size_t k = s->tidx_n - s->tidx_synced;
        k = k < WRITE_CHUNK_ENTRIES ? k : WRITE_CHUNK_ENTRIES;
        for (size_t i = 0; i < k; i++) {
            const struct br_time_entry *e = &s->tidx[s->tidx_synced + i];
            kp_store_be64(buf + i * BR_TIME_ENTRY_SIZE, (uint64_t)e->ts);
            kp_store_be32(buf + i * BR_TIME_ENTRY_SIZE + 8, (uint32_t)e->rel);
        }
        if (seg_pwrite_full(fd, buf, k * BR_TIME_ENTRY_SIZE, s->tidx_file_len) != 0) {
            return -1;
        }
        s->tidx_file_len += (int64_t)(k * BR_TIME_ENTRY_SIZE);
        s->tidx_synced += k;
    }
    return 0;
}

/* Whether the index file differs from the in-memory entries. */
static bool index_pending(const struct br_segment *s, bool time)
{
    if (time) {
        return s->tidx_synced < s->tidx_n ||
               s->tidx_file_len != (int64_t)s->tidx_synced * BR_TIME_ENTRY_SIZE;
    }
    return s->oidx_synced < s->oidx_n ||
           s->oidx_file_len != (int64_t)s->oidx_synced * BR_OFFSET_ENTRY_SIZE;
}

/*
 * Brings one index file up to the in-memory entries through a descriptor
 * opened for it and closed after; with `sync`, fdatasyncs it too when it
 * was written since its last fdatasync (Linux reports a writeback error of
 * the file to the next fsync that has not seen it, even through a new
 * descriptor). Nothing to do costs no system call: this runs at every flush.
 * A file that is not the length the segment left it at (removed, cut by
 * someone else) is written again whole.
 */
int seg_write_index(struct br_segment *s, const char *dir, bool time, bool sync)
{
    bool pending = index_pending(s, time);
    bool *unsynced = time ? &s->tidx_unsynced : &s->oidx_unsynced;
    if (!pending && !(sync && *unsynced)) {
        return 0;
    }
    const char *suffix = time ? "timeindex" : "index";
    char path[PATH_MAX];
    int fd = -1;
    const char *what = "open";
    if (seg_file_path(s, dir, suffix, path, sizeof path) != 0) {
        errno = ENAMETOOLONG;
        goto out_failed;
    }
    fd = br_filecache_openat(s->files, AT_FDCWD, path, O_RDWR | O_CREAT, 0644);
    if (fd < 0) {
        goto out_failed;
    }
    if (pending) {
        int64_t *file_len = time ? &s->tidx_file_len : &s->oidx_file_len;
        size_t *synced = time ? &s->tidx_synced : &s->oidx_synced;
        int64_t len = 0;
        what = "fstat";
        if (seg_file_size(fd, &len) != 0) {
            goto out_failed;
        }
        if (len != *file_len) {
            *file_len = len;
            *synced = 0;
        }
        what = "write";
        *unsynced = true;
        s->writes++;
        if ((time ? sync_time_index(s, fd) : sync_offset_index(s, fd)) != 0) {
            goto out_failed;
        }
    }
    if (sync && *unsynced) {
        what = "fdatasync";
        if (fdatasync(fd) != 0) {
            goto out_failed;
        }
        *unsynced = false;
    }
    (void)close(fd);
    return 0;

out_failed:
    br_error("%s/%020" PRId64 ".%s%s: %s: %s", dir, s->base_offset, suffix, s->tail, what,
             strerror(errno));
    if (fd >= 0) {
        (void)close(fd);
    }
    s->io_failed = true;
    return KP_ERR_KAFKA_STORAGE_ERROR;
}

/* Writes both index files (no fdatasync). */
int seg_sync_indexes(struct br_segment *s, const char *dir)
{
    int rc = seg_write_index(s, dir, false, false);
    if (rc == 0) {
        rc = seg_write_index(s, dir, true, false);
    }
    return rc;
}

/* Keeps the first n offset entries. */
void seg_drop_offsets_from(struct br_segment *s, size_t n)
{
    if (n < s->oidx_n) {
        s->oidx_n = n;
    }
    if (s->oidx_synced > s->oidx_n) {
        s->oidx_synced = s->oidx_n;
    }
    if (s->oidx_unchecked > s->oidx_n) {
        s->oidx_unchecked = s->oidx_n;
    }
}

/* Keeps time entries whose offset is below `offset`. */
void seg_drop_times_at_or_after(struct br_segment *s, int64_t offset)
{
    while (s->tidx_n > 0 && s->base_offset + s->tidx[s->tidx_n - 1].rel >= offset) {
        s->tidx_n--;
    }
    if (s->tidx_synced > s->tidx_n) {
        s->tidx_synced = s->tidx_n;
    }
    if (s->tidx_unchecked > s->tidx_n) {
        s->tidx_unchecked = s->tidx_n;
    }
}

/* Timestamp state as the remaining time index says; replaying batches
 * after the last offset entry completes it. */
void seg_reset_tail_state(struct br_segment *s)
{
    s->bytes_since_index = 0;
    if (s->tidx_n > 0) {
        s->max_timestamp = s->tidx[s->tidx_n - 1].ts;
        s->offset_of_max_timestamp = s->base_offset + s->tidx[s->tidx_n - 1].rel;
    } else {
        s->max_timestamp = -1;
        s->offset_of_max_timestamp = s->base_offset;
    }
}

/* Whether entry e names the batch at its position: that batch's header
 * parses and ends at the entry's offset. */
enum entry_check seg_entry_matches(struct br_segment *s, const char *dir,
                                   const struct br_offset_entry *e)
{
    uint8_t head[KP_BATCH_HEADER_SIZE];
    size_t got = 0;
    int fd = -1;
    if (br_segment_fd(s, dir, &fd) != 0 ||
        br_pread_full(fd, head, sizeof head, e->pos, &got) != 0) {
        return ENTRY_UNKNOWN;
    }
    if (got != sizeof head) {
        return ENTRY_MISMATCH;
    }
    struct kp_batch_header h;
    size_t size = 0;
    if (kp_batch_peek(head, sizeof head, &h, &size) != 0) {
        return ENTRY_MISMATCH;
    }
    /* a damaged header's offsets may sit at INT64_MAX: no overflow */
    int64_t last = 0;
    int64_t want = 0;
    if (__builtin_add_overflow(h.BaseOffset, (int64_t)h.LastOffsetDelta, &last) ||
        __builtin_add_overflow(s->base_offset, (int64_t)e->rel, &want)) {
        return ENTRY_MISMATCH;
    }
    return last == want && e->pos + (int64_t)size <= s->size ? ENTRY_MATCH : ENTRY_MISMATCH;
}

/* ------------------------------------------------------------- lookups */

int64_t br_segment_lookup(struct br_segment *s, const char *dir, int64_t offset)
{
    if (s->index_suspect) {
        return 0;
    }
    size_t lo = 0;
    size_t hi = s->oidx_n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->base_offset + s->oidx[mid].rel <= offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return 0;
    }
    const struct br_offset_entry *e = &s->oidx[lo - 1];
    enum entry_check m = lo - 1 < s->oidx_unchecked ? seg_entry_matches(s, dir, e) : ENTRY_MATCH;
    if (m == ENTRY_UNKNOWN) {
        return 0; /* the caller's own read reports the file */
    }
    if (m == ENTRY_MISMATCH) {
        char name[BR_SEGMENT_NAME_MAX];
        br_segment_file_name(s->base_offset, "index", name, sizeof name);
        br_warn("%s/%s: entry %zu (offset %" PRId64 ", position %" PRId32
                ") does not match the batch there: the segment is read from its start until "
                "the index is rebuilt (delete %s and restart)",
                dir, name, lo - 1, s->base_offset + e->rel, e->pos, name);
        s->index_suspect = true;
        return 0;
    }
    return e->pos;
}

/* Whether the batch holding time entry e's offset has e's timestamp as its
 * MaxTimestamp (the batch that set the running maximum). */
enum entry_check seg_time_entry_matches(struct br_segment *s, const char *dir,
                                        const struct br_time_entry *e)
{
    int64_t off = s->base_offset + e->rel;
    uint8_t buf[8192];
    struct br_cursor c;
    int64_t from = br_segment_lookup(s, dir, off);
    int fd = -1;
    if (br_segment_fd(s, dir, &fd) != 0) {
        return ENTRY_UNKNOWN;
    }
    br_cursor_init(&c, fd, from, s->size, buf, sizeof buf);
    for (;;) {
        struct kp_batch_header h;
        size_t size = 0;
        int rc = br_cursor_peek(&c, &h, &size);
        if (rc == KP_ERR_KAFKA_STORAGE_ERROR) {
            return ENTRY_UNKNOWN;
        }
        if (rc != 0) {
            return ENTRY_MISMATCH;
        }
        if (h.BaseOffset + h.LastOffsetDelta >= off) {
            return h.BaseOffset <= off && h.MaxTimestamp == e->ts ? ENTRY_MATCH : ENTRY_MISMATCH;
        }
        c.pos += (int64_t)size;
    }
}

int64_t br_segment_time_lookup(struct br_segment *s, const char *dir, int64_t ts)
{
    if (s->time_suspect) {
        return s->base_offset;
    }
    size_t lo = 0;
    size_t hi = s->tidx_n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->tidx[mid].ts <= ts) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return s->base_offset;
    }
    const struct br_time_entry *e = &s->tidx[lo - 1];
    enum entry_check m = lo - 1 < s->tidx_unchecked ? seg_time_entry_matches(s, dir, e) : ENTRY_MATCH;
    if (m == ENTRY_UNKNOWN) {
        return s->base_offset;
    }
    if (m == ENTRY_MISMATCH) {
        char name[BR_SEGMENT_NAME_MAX];
        br_segment_file_name(s->base_offset, "timeindex", name, sizeof name);
        br_warn("%s/%s: entry %zu (timestamp %" PRId64 ", offset %" PRId64
                ") does not match the batch there: time lookups scan the segment until the "
                "index is rebuilt (delete %s and restart)",
                dir, name, lo - 1, e->ts, s->base_offset + e->rel, name);
        s->time_suspect = true;
        return s->base_offset;
    }
    return s->base_offset + e->rel;
}
