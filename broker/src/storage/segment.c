/* samsa-broker: a log segment: its creation, opening, appends and
 * truncation (see segment.h); its file I/O in segment_io.c, its indexes in
 * segment_index.c, its recovery in segment_recovery.c. */
#define _GNU_SOURCE

#include "storage/segment.h"

#include "storage/segment_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- create/open */

static struct br_segment *alloc_segment(int64_t base_offset)
{
    struct br_segment *s = kp_calloc(1, sizeof *s);
    if (s == NULL) {
        return NULL;
    }
    s->base_offset = base_offset;
    s->next_offset = -1;
    s->tail = "";
    s->max_timestamp = -1;
    s->offset_of_max_timestamp = base_offset;
    s->first_append_ms = -1;
    return s;
}

void br_segment_free(struct br_segment *s)
{
    if (s == NULL) {
        return;
    }
    br_filecache_drop(s->files, &s->file);
    kp_free(s->oidx);
    kp_free(s->tidx);
    kp_free(s);
}

void br_segment_set_files(struct br_segment *s, struct br_filecache *files)
{
    if (s->files == files) {
        return;
    }
    struct br_fileref *f = br_fileref_ref(s->file.file);
    br_filecache_drop(s->files, &s->file);
    s->files = files;
    br_filecache_put(files, &s->file, f);
}

static int open_file_as(struct br_filecache *files, int dir_fd, const char *dir, int64_t base,
                        const char *suffix, const char *tail, int flags, int *fd_out)
{
    char name[BR_SEGMENT_TMP_NAME_MAX];
    br_segment_file_name_as(base, suffix, tail, name, sizeof name);
    int fd = br_filecache_openat(files, dir_fd, name, flags, 0644);
    if (fd < 0) {
        int e = errno;
        if (!(e == ENOENT && (flags & O_CREAT) == 0)) {
            br_error("%s/%s: open: %s", dir, name, strerror(e));
        }
        errno = e;
        return -1;
    }
    *fd_out = fd;
    return 0;
}

/* A new empty segment under "<base>.<suffix><tail>" names; `fresh` files
 * are truncated when they exist (a leftover of an abandoned attempt). The
 * index files are created empty and closed: entries are written later. */
static int create_as(int dir_fd, const char *dir, int64_t base_offset, const char *tail, bool fresh,
                     struct br_filecache *files, struct br_segment **out)
{
    *out = NULL;
    struct br_segment *s = alloc_segment(base_offset);
    if (s == NULL) {
        return KP_E_NOMEM;
    }
    s->tail = tail;
    s->files = files;
    int fd = -1;
    if (open_file_as(files, dir_fd, dir, base_offset, "log", tail,
                     O_RDWR | O_CREAT | (fresh ? O_TRUNC : 0), &fd) != 0) {
        goto out_storage;
    }
    struct br_fileref *f = br_fileref_new(fd);
    if (f == NULL) {
        br_segment_free(s);
        return KP_E_NOMEM;
    }
    br_filecache_put(files, &s->file, f);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        br_error("%s: fstat of a new segment: %s", dir, strerror(errno));
        goto out_storage;
    }
    if (st.st_size != 0) {
        char name[BR_SEGMENT_NAME_MAX];
        br_segment_file_name(base_offset, "log", name, sizeof name);
        br_error("%s/%s: a new segment's file already holds %lld bytes", dir, name,
                 (long long)st.st_size);
        goto out_storage;
    }
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    static const char *const idx[] = {"index", "timeindex"};
    for (size_t i = 0; i < 2; i++) {
        int ifd = -1;
        if (open_file_as(files, dir_fd, dir, base_offset, idx[i], tail, O_RDWR | O_CREAT | O_TRUNC,
                         &ifd) != 0) {
            goto out_storage;
        }
        (void)close(ifd); /* empty: nothing written that could fail to reach the disk */
    }
    s->size = 0;
    s->next_offset = base_offset;
    s->max_timestamp_known = true;
    /* not dirty: an empty file has no data to sync (the fsync of the
     * directory makes its name durable), and a crash that loses it loses no
     * record (a log without segments starts one anew); fdatasync of a new
     * inode costs a journal commit per created partition */
    s->dirty = false;
    *out = s;
    return 0;

out_storage:
    br_segment_free(s);
    return KP_ERR_KAFKA_STORAGE_ERROR;
}

int br_segment_create(int dir_fd, const char *dir, int64_t base_offset, struct br_filecache *files,
                      struct br_segment **out)
{
    return create_as(dir_fd, dir, base_offset, "", false, files, out);
}

int br_segment_create_as(int dir_fd, const char *dir, int64_t base_offset, const char *tail,
                         struct br_segment **out)
{
    return create_as(dir_fd, dir, base_offset, tail, true, NULL, out);
}

/* Opens one index file for reading (*fd -1 and *missing when there is
 * none: the caller rebuilds it, and writing it creates it). */
static int open_index(struct br_filecache *files, int dir_fd, const char *dir, int64_t base,
                      const char *suffix, int *fd, bool *missing)
{
    *missing = false;
    *fd = -1;
    if (open_file_as(files, dir_fd, dir, base, suffix, "", O_RDONLY, fd) == 0) {
        return 0;
    }
    if (errno != ENOENT) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    *missing = true;
    return 0;
}

/* Reads a whole index file of `entry` byte entries; at most max_entries. */
static int read_index_file(int fd, int64_t len, size_t entry, size_t max_entries, uint8_t **out,
                           size_t *n, const char **problem)
{
    *out = NULL;
    *n = 0;
    *problem = NULL;
    if (len % (int64_t)entry != 0) {
        *problem = "torn (size not a multiple of the entry size)";
        return 0;
    }
    if ((uint64_t)len / entry > max_entries) {
        *problem = "more entries than the segment has batches";
        return 0;
    }
    if (len == 0) {
        return 0;
    }
    uint8_t *buf = kp_malloc((size_t)len);
    if (buf == NULL) {
        return KP_E_NOMEM;
    }
    size_t got = 0;
    if (br_pread_full(fd, buf, (size_t)len, 0, &got) != 0) {
        kp_free(buf);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (got != (size_t)len) {
        kp_free(buf);
        *problem = "shorter than its size";
        return 0;
    }
    *out = buf;
    *n = (size_t)len / entry;
    return 0;
}

static int load_offset_index(struct br_segment *s, int fd, int64_t limit, size_t max_entries,
                             char *problem, size_t cap)
{
    uint8_t *raw = NULL;
    size_t n = 0;
    const char *why = NULL;
    int rc =
        read_index_file(fd, s->oidx_file_len, BR_OFFSET_ENTRY_SIZE, max_entries, &raw, &n, &why);
    if (rc != 0 || why != NULL) {
        if (why != NULL) {
            (void)snprintf(problem, cap, ".index %s", why);
        }
        return rc;
    }
    void *v = s->oidx;
    rc = seg_grow(&v, &s->oidx_cap, n, sizeof *s->oidx);
    s->oidx = v;
    if (rc != 0) {
        kp_free(raw);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t rel = (int32_t)kp_load_be32(raw + i * BR_OFFSET_ENTRY_SIZE);
        int32_t pos = (int32_t)kp_load_be32(raw + i * BR_OFFSET_ENTRY_SIZE + 4);
        const char *bad = NULL;
        if (rel < 0 || pos < 0) {
            bad = "negative";
        } else if (i > 0 && (rel <= s->oidx[i - 1].rel || pos <= s->oidx[i - 1].pos)) {
            bad = "not increasing";
        } else if (pos >= s->size) {
            bad = "beyond the end of the segment";
        } else if (s->base_offset + rel >= limit) {
            bad = "reaching the next segment's offsets";
        }
        if (bad != NULL) {
            (void)snprintf(problem, cap, ".index entry %zu (%d, %d) %s", i, (int)rel, (int)pos,
                           bad);
            kp_free(raw);
            return 0;
        }
        s->oidx[i].rel = rel;
        s->oidx[i].pos = pos;
    }
    kp_free(raw);
    s->oidx_n = n;
    s->oidx_synced = n;
    s->oidx_unchecked = n;
    return 0;
}

static int load_time_index(struct br_segment *s, int fd, int64_t limit, size_t max_entries,
                           char *problem, size_t cap)
{
    uint8_t *raw = NULL;
    size_t n = 0;
    const char *why = NULL;
    int rc = read_index_file(fd, s->tidx_file_len, BR_TIME_ENTRY_SIZE, max_entries, &raw, &n, &why);
    if (rc != 0 || why != NULL) {
        if (why != NULL) {
            (void)snprintf(problem, cap, ".timeindex %s", why);
        }
        return rc;
    }
    void *v = s->tidx;
    rc = seg_grow(&v, &s->tidx_cap, n, sizeof *s->tidx);
    s->tidx = v;
    if (rc != 0) {
        kp_free(raw);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t ts = (int64_t)kp_load_be64(raw + i * BR_TIME_ENTRY_SIZE);
        int32_t rel = (int32_t)kp_load_be32(raw + i * BR_TIME_ENTRY_SIZE + 8);
        const char *bad = NULL;
        if (rel < 0 || ts < 0) {
            bad = "negative";
        } else if (i > 0 && (ts <= s->tidx[i - 1].ts || rel < s->tidx[i - 1].rel)) {
            bad = "not increasing";
        } else if (s->base_offset + rel >= limit) {
            bad = "reaching the next segment's offsets";
        }
        if (bad != NULL) {
            (void)snprintf(problem, cap, ".timeindex entry %zu (%" PRId64 ", %d) %s", i, ts,
                           (int)rel, bad);
            kp_free(raw);
            return 0;
        }
        s->tidx[i].ts = ts;
        s->tidx[i].rel = rel;
    }
    kp_free(raw);
    s->tidx_n = n;
    s->tidx_synced = n;
    s->tidx_unchecked = n;
    return 0;
}

int br_segment_open(int dir_fd, const char *dir, int64_t base_offset, int64_t limit_offset,
                    struct br_filecache *files, struct br_segment **out, char *problem,
                    size_t problem_cap)
{
    *out = NULL;
    problem[0] = '\0';
    struct br_segment *s = alloc_segment(base_offset);
    if (s == NULL) {
        return KP_E_NOMEM;
    }
    s->files = files;
    int rc = KP_ERR_KAFKA_STORAGE_ERROR;
    int ifd = -1;
    int tfd = -1;
    bool idx_missing = false;
    bool time_missing = false;
    /* the .log is not opened here: it is when it is first read (a segment
     * below the recovery point may never be) */
    char name[BR_SEGMENT_NAME_MAX];
    br_segment_file_name(base_offset, "log", name, sizeof name);
    struct stat st;
    if (fstatat(dir_fd, name, &st, 0) != 0) {
        br_error("%s/%s: stat: %s", dir, name, strerror(errno));
        goto out_free;
    }
    s->size = (int64_t)st.st_size;
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    rc = open_index(files, dir_fd, dir, base_offset, "index", &ifd, &idx_missing);
    if (rc == 0) {
        rc = open_index(files, dir_fd, dir, base_offset, "timeindex", &tfd, &time_missing);
    }
    if (rc != 0) {
        goto out_free;
    }
    if ((ifd >= 0 && seg_file_size(ifd, &s->oidx_file_len) != 0) ||
        (tfd >= 0 && seg_file_size(tfd, &s->tidx_file_len) != 0)) {
        br_error("%s: fstat of an index: %s", dir, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
        goto out_free;
    }
    /* a length no file has: the next write creates the missing file, even
     * when it has no entry to hold */
    if (idx_missing) {
        s->oidx_file_len = -1;
    }
    if (time_missing) {
        s->tidx_file_len = -1;
    }
    /* no more entries than batches: bounds the allocation by the log's bytes */
    size_t max_entries = (size_t)(s->size / KP_BATCH_HEADER_SIZE) + 1;
    if (idx_missing) {
        (void)snprintf(problem, problem_cap, ".index missing");
    } else if (time_missing) {
        (void)snprintf(problem, problem_cap, ".timeindex missing");
    } else {
        rc = load_offset_index(s, ifd, limit_offset, max_entries, problem, problem_cap);
        if (rc == 0 && problem[0] == '\0') {
            rc = load_time_index(s, tfd, limit_offset, max_entries, problem, problem_cap);
        }
        if (rc != 0) {
            goto out_free;
        }
        if (problem[0] == '\0' && s->size == 0 && s->tidx_n > 0) {
            /* no batch, so no timestamp: the entry would outlive the
             * offsets it names once a later segment is removed */
            (void)snprintf(problem, problem_cap, ".timeindex entries for an empty segment");
        }
    }
    if (problem[0] != '\0') {
        seg_drop_offsets_from(s, 0);
        seg_drop_times_at_or_after(s, INT64_MIN);
    }
    seg_reset_tail_state(s);
    s->max_timestamp_known = s->size == 0 || s->tidx_n > 0;
    if (s->size == 0) {
        s->next_offset = base_offset;
    }
    *out = s;
    s = NULL;
    rc = 0;

out_free:
    /* the entries are in memory now; the files are written through
     * descriptors opened when there is something to write */
    if (ifd >= 0) {
        (void)close(ifd);
    }
    if (tfd >= 0) {
        (void)close(tfd);
    }
    br_segment_free(s);
    return rc;
}

int br_segment_unlink_as(int dir_fd, const char *dir, int64_t base_offset, const char *tail)
{
    static const char *const suffixes[] = {"log", "index", "timeindex"};
    int rc = 0;
    for (size_t i = 0; i < 3; i++) {
        char name[BR_SEGMENT_TMP_NAME_MAX];
        br_segment_file_name_as(base_offset, suffixes[i], tail, name, sizeof name);
        if (unlinkat(dir_fd, name, 0) != 0 && errno != ENOENT) {
            br_error("%s/%s: unlink: %s", dir, name, strerror(errno));
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    return rc;
}

int br_segment_unlink(int dir_fd, const char *dir, int64_t base_offset)
{
    return br_segment_unlink_as(dir_fd, dir, base_offset, "");
}

int br_segment_rename_files(struct br_segment *s, int dir_fd, const char *dir, const char *to_tail)
{
    /* the .log goes last: once it has its new name, so have its indexes */
    static const char *const suffixes[] = {"index", "timeindex", "log"};
    for (size_t i = 0; i < 3; i++) {
        char from[BR_SEGMENT_TMP_NAME_MAX];
        char to[BR_SEGMENT_TMP_NAME_MAX];
        br_segment_file_name_as(s->base_offset, suffixes[i], s->tail, from, sizeof from);
        br_segment_file_name_as(s->base_offset, suffixes[i], to_tail, to, sizeof to);
        if (renameat(dir_fd, from, dir_fd, to) != 0) {
            br_error("%s/%s: rename to %s: %s", dir, from, to, strerror(errno));
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    s->tail = to_tail;
    return 0;
}

/* ------------------------------------------------------------- append */

int br_segment_append(struct br_segment *s, const char *dir, const uint8_t *batch, size_t len,
                      int64_t last_offset, int64_t max_timestamp, int32_t index_interval)
{
    int64_t pos = s->size;
    int fd = -1;
    int rc = br_segment_fd(s, dir, &fd);
    if (rc != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (seg_pwrite_full(fd, batch, len, pos) != 0) {
        char name[BR_SEGMENT_NAME_MAX];
        int e = errno;
        br_segment_file_name(s->base_offset, "log", name, sizeof name);
        br_error("%s/%s: write of %zu bytes at %" PRId64 ": %s", dir, name, len, pos, strerror(e));
        /* no partial batch may stay behind */
        if (seg_truncate_fd(fd, pos) != 0) {
            br_error("%s/%s: cutting back a failed write: %s", dir, name, strerror(errno));
            s->io_failed = true;
        }
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    s->size += (int64_t)len;
    s->next_offset = last_offset + 1;
    s->dirty = true;
    s->writes++;
    /* in memory only: the index files are brought up to date at the next
     * flush or seal, not at every append (no system call here) */
    rc = seg_index_batch(s, pos, (int64_t)len, last_offset, max_timestamp, index_interval);
    if (rc != 0) {
        /* the batch is in the log; an index missing an entry is still
         * correct, a torn one is rebuilt at the next start */
        s->io_failed = true;
    }
    return 0;
}

int br_segment_seal(struct br_segment *s, const char *dir)
{
    if (s->size == 0 || !s->max_timestamp_known) {
        return 0;
    }
    int rc = seg_push_time(s, s->max_timestamp, s->offset_of_max_timestamp);
    if (rc == 0) {
        rc = seg_sync_indexes(s, dir);
    }
    return rc;
}

int br_segment_flush(struct br_segment *s, const char *dir)
{
    if (s->dirty) {
        int fd = -1;
        int rc = br_segment_fd(s, dir, &fd);
        if (rc != 0) {
            s->io_failed = true;
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
        if (fdatasync(fd) != 0) {
            char name[BR_SEGMENT_NAME_MAX];
            br_segment_file_name(s->base_offset, "log", name, sizeof name);
            br_error("%s/%s: fdatasync: %s", dir, name, strerror(errno));
            s->io_failed = true;
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
        s->dirty = false;
    }
    int rc = seg_write_index(s, dir, false, true);
    if (rc == 0) {
        rc = seg_write_index(s, dir, true, true);
    }
    return rc;
}

static const char *const sync_suffix[3] = {"log", "index", "timeindex"};

int br_segment_sync_begin(struct br_segment *s, const char *dir, struct br_segment_sync *out)
{
    *out = (struct br_segment_sync){
        .id = s->id, .writes = s->writes, .base_offset = s->base_offset, .tail = s->tail};
    if (s->dirty) {
        int rc = br_segment_file(s, dir, &out->files[0]);
        if (rc != 0) {
            s->io_failed = true;
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    for (int t = 0; t < 2; t++) {
        bool time = t == 1;
        int rc = seg_write_index(s, dir, time, false);
        if (rc == 0 && (time ? s->tidx_unsynced : s->oidx_unsynced)) {
            char path[PATH_MAX];
            int fd = -1;
            if (seg_file_path(s, dir, sync_suffix[1 + t], path, sizeof path) == 0) {
                fd = br_filecache_openat(s->files, AT_FDCWD, path, O_RDONLY, 0);
            }
            if (fd < 0) {
                br_error("%s/%020" PRId64 ".%s%s: open: %s", dir, s->base_offset,
                         sync_suffix[1 + t], s->tail, strerror(errno));
                s->io_failed = true;
                rc = KP_ERR_KAFKA_STORAGE_ERROR;
            } else {
                out->files[1 + t] = br_fileref_new(fd);
                rc = out->files[1 + t] != NULL ? 0 : KP_E_NOMEM;
            }
        }
        if (rc != 0) {
            br_segment_sync_release(out);
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    /* writing the index entries counted as writes: what follows is new */
    out->writes = s->writes;
    return 0;
}

bool br_segment_sync_run(struct br_segment_sync *ss, const char *dir)
{
    for (int f = 0; f < 3; f++) {
        if (ss->files[f] != NULL && fdatasync(br_fileref_fd(ss->files[f])) != 0) {
            br_error("%s/%020" PRId64 ".%s%s: fdatasync: %s", dir, ss->base_offset, sync_suffix[f],
                     ss->tail, strerror(errno));
            ss->failed = true;
        }
    }
    return !ss->failed;
}

void br_segment_sync_end(struct br_segment *s, struct br_segment_sync *ss)
{
    if (s != NULL && ss->failed) {
        s->io_failed = true;
    } else if (s != NULL && s->writes == ss->writes) {
        s->dirty = s->dirty && ss->files[0] == NULL;
        s->oidx_unsynced = s->oidx_unsynced && ss->files[1] == NULL;
        s->tidx_unsynced = s->tidx_unsynced && ss->files[2] == NULL;
    }
    br_segment_sync_release(ss);
}

void br_segment_sync_release(struct br_segment_sync *ss)
{
    for (int f = 0; f < 3; f++) {
        br_fileref_unref(ss->files[f]);
        ss->files[f] = NULL;
    }
}

bool br_segment_index_full(const struct br_segment *s, int32_t max_index_bytes)
{
    size_t max = (size_t)(max_index_bytes > 0 ? max_index_bytes : 0);
    return s->oidx_n >= max / BR_OFFSET_ENTRY_SIZE || s->tidx_n >= max / BR_TIME_ENTRY_SIZE;
}

/* ------------------------------------------------------------- truncation */

/* Replays the batches after the last offset-index entry (trusted headers),
 * restoring bytes_since_index, the timestamps and next_offset. */
static int replay_tail(struct br_segment *s, const char *dir, int32_t interval)
{
    uint8_t buf[8192];
    int fd = -1;
    if (br_segment_fd(s, dir, &fd) != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (s->index_suspect || s->time_suspect ||
        (s->oidx_n > 0 && s->oidx_n - 1 < s->oidx_unchecked &&
         seg_entry_matches(s, dir, &s->oidx[s->oidx_n - 1]) != ENTRY_MATCH) ||
        (s->tidx_n > 0 && s->tidx_n - 1 < s->tidx_unchecked &&
         seg_time_entry_matches(s, dir, &s->tidx[s->tidx_n - 1]) != ENTRY_MATCH)) {
        /* the replay would start from entries that are not to be trusted:
         * both indexes are rebuilt from the batches, from position 0 */
        seg_drop_offsets_from(s, 0);
        seg_drop_times_at_or_after(s, INT64_MIN);
        s->index_suspect = false;
        s->time_suspect = false;
    }
    int64_t from = s->oidx_n > 0 ? s->oidx[s->oidx_n - 1].pos : 0;
    int64_t next = s->oidx_n > 0 ? s->base_offset + s->oidx[s->oidx_n - 1].rel + 1 : s->base_offset;
    struct br_cursor c;
    br_cursor_init(&c, fd, from, s->size, buf, sizeof buf);
    seg_reset_tail_state(s);
    for (;;) {
        struct kp_batch_header h;
        size_t size = 0;
        int rc = br_cursor_peek(&c, &h, &size);
        if (rc == KP_ITER_END) {
            break;
        }
        if (rc != 0) {
            char name[BR_SEGMENT_NAME_MAX];
            br_segment_file_name(s->base_offset, "log", name, sizeof name);
            br_error("%s/%s: damaged batch header at position %" PRId64 ": %s", dir, name, c.pos,
                     kp_err_name(rc));
            return rc;
        }
        int64_t last = h.BaseOffset + h.LastOffsetDelta;
        rc = seg_index_batch(s, c.pos, (int64_t)size, last, h.MaxTimestamp, interval);
        if (rc != 0) {
            return rc;
        }
        next = last + 1;
        c.pos += (int64_t)size;
    }
    s->next_offset = next;
    return 0;
}

int br_segment_truncate(struct br_segment *s, const char *dir, int64_t offset,
                        int32_t index_interval)
{
    uint8_t buf[8192];
    struct br_cursor c;
    int64_t from = br_segment_lookup(s, dir, offset);
    int fd = -1;
    if (br_segment_fd(s, dir, &fd) != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    br_cursor_init(&c, fd, from, s->size, buf, sizeof buf);
    char name[BR_SEGMENT_NAME_MAX];
    br_segment_file_name(s->base_offset, "log", name, sizeof name);
    for (;;) {
        struct kp_batch_header h;
        size_t size = 0;
        int rc = br_cursor_peek(&c, &h, &size);
        if (rc == KP_ITER_END) {
            /* every batch ends below offset; a trusted segment that becomes
             * the active one still needs its end */
            return s->next_offset >= 0 ? 0 : replay_tail(s, dir, index_interval);
        }
        if (rc != 0) {
            br_error("%s/%s: damaged batch header at position %" PRId64 ": %s", dir, name, c.pos,
                     kp_err_name(rc));
            return rc;
        }
        if (h.BaseOffset + h.LastOffsetDelta >= offset) {
            break;
        }
        c.pos += (int64_t)size;
    }
    int64_t cut = c.pos;
    if (seg_truncate_fd(fd, cut) != 0) {
        br_error("%s/%s: ftruncate: %s", dir, name, strerror(errno));
        s->io_failed = true;
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    s->size = cut;
    s->dirty = true;
    s->writes++;
    size_t k = s->oidx_n;
    while (k > 0 && s->oidx[k - 1].pos >= cut) {
        k--;
    }
    seg_drop_offsets_from(s, k);
    seg_drop_times_at_or_after(s, offset);
    int rc = replay_tail(s, dir, index_interval);
    if (rc == 0) {
        rc = seg_sync_indexes(s, dir);
    }
    return rc;
}
