/* samsa-broker: log segments and their indexes (see segment.h). */
#define _GNU_SOURCE

#include "storage/segment.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The recovery scan reads the segment through a window of this size, grown
 * to hold a larger batch when one comes. */
#define SCAN_WINDOW ((size_t)1 << 20)
/* Index entries written per pwrite when an index is rewritten. */
#define WRITE_CHUNK_ENTRIES 512

/* ------------------------------------------------------------- names */

void br_segment_file_name(int64_t base_offset, const char *suffix, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%020" PRId64 ".%s", base_offset, suffix);
    if (n < 0 && cap > 0) {
        buf[0] = '\0';
    }
}

void br_segment_file_name_as(int64_t base_offset, const char *suffix, const char *tail, char *buf,
                             size_t cap)
{
    int n = snprintf(buf, cap, "%020" PRId64 ".%s%s", base_offset, suffix, tail);
    if (n < 0 && cap > 0) {
        buf[0] = '\0';
    }
}

bool br_segment_parse_file_name(const char *name, int64_t *base_offset, const char **suffix)
{
    int64_t v = 0;
    for (int i = 0; i < 20; i++) {
        char c = name[i];
        if (c < '0' || c > '9') {
            return false;
        }
        int d = c - '0';
        if (v > (INT64_MAX - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    if (name[20] != '.') {
        return false;
    }
    *base_offset = v;
    *suffix = name + 21;
    return true;
}

/* ------------------------------------------------------------- I/O helpers */

int br_pread_full(int fd, void *buf, size_t n, int64_t pos, size_t *got)
{
    uint8_t *p = buf;
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, p + done, n - done, (off_t)pos + (off_t)done);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            *got = done;
            return -1;
        }
        if (r == 0) {
            break;
        }
        done += (size_t)r;
    }
    *got = done;
    return 0;
}

/* pwrite all of buf at pos, retrying EINTR and short writes. 0 or -1/errno. */
static int pwrite_full(int fd, const void *buf, size_t n, int64_t pos)
{
    const uint8_t *p = buf;
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite(fd, p + done, n - done, (off_t)pos + (off_t)done);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return -1;
        }
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        done += (size_t)w;
    }
    return 0;
}

static int truncate_fd(int fd, int64_t len)
{
    int rc;
    do {
        rc = ftruncate(fd, (off_t)len);
    } while (rc != 0 && errno == EINTR);
    return rc;
}

static int file_size(int fd, int64_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        return -1;
    }
    *size = (int64_t)st.st_size;
    return 0;
}

/* "<dir>/<base>.<suffix><tail>" of s. -1 when it does not fit. */
static int file_path(const struct br_segment *s, const char *dir, const char *suffix, char *buf,
                     size_t cap)
{
    char name[BR_SEGMENT_TMP_NAME_MAX];
    br_segment_file_name_as(s->base_offset, suffix, s->tail, name, sizeof name);
    int n = snprintf(buf, cap, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* The causes of a refused reopen that are not an errno. */
enum {
    TOO_LONG = -1,
    OTHER_FILE = -2,
    SHORTER = -3,
};

static const char *reopen_failure_text(int failure)
{
    switch (failure) {
    case TOO_LONG:
        return "path too long";
    case OTHER_FILE:
        return "another file has taken its name";
    case SHORTER:
        return "the file is shorter than the segment";
    default:
        return strerror(failure);
    }
}

/* The .log reopened by name after the budget closed it. Not the same file
 * (replaced, or gone and another made) or a shorter one would serve other
 * bytes than the segment's, so both are refused. */
static int reopen_log(struct br_segment *s, const char *dir)
{
    char path[PATH_MAX];
    int failure = 0;
    int fd = -1;
    if (file_path(s, dir, "log", path, sizeof path) != 0) {
        failure = TOO_LONG;
    } else {
        fd = br_filecache_openat(s->files, AT_FDCWD, path, O_RDWR, 0);
        if (fd < 0) {
            failure = errno;
        }
    }
    struct stat st;
    if (fd >= 0) {
        if (fstat(fd, &st) != 0) {
            failure = errno;
        } else if (st.st_dev != s->dev || st.st_ino != s->ino) {
            failure = OTHER_FILE;
        } else if ((int64_t)st.st_size < s->size) {
            failure = SHORTER;
        }
    }
    if (failure != 0) {
        if (fd >= 0) {
            (void)close(fd);
        }
        if (failure != s->reopen_failure) {
            /* once per cause: a partition asked for at every fetch would
             * flood the log */
            br_error("%s: cannot reopen the segment: %s; its partition answers "
                     "KAFKA_STORAGE_ERROR while this lasts",
                     path, reopen_failure_text(failure));
            s->reopen_failure = failure;
        }
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    struct br_fileref *f = br_fileref_new(fd);
    if (f == NULL) {
        return KP_E_NOMEM;
    }
    if (s->reopen_failure != 0) {
        br_info("%s: reopened", path);
        s->reopen_failure = 0;
    }
    br_filecache_put(s->files, &s->file, f);
    return 0;
}

int br_segment_fd(struct br_segment *s, const char *dir, int *fd)
{
    *fd = -1;
    if (s->file.file == NULL) {
        int rc = reopen_log(s, dir);
        if (rc != 0) {
            return rc;
        }
    } else {
        br_filecache_touch(s->files, &s->file);
    }
    *fd = br_fileref_fd(s->file.file);
    return 0;
}

int br_segment_file(struct br_segment *s, const char *dir, struct br_fileref **out)
{
    int fd = -1;
    *out = NULL;
    int rc = br_segment_fd(s, dir, &fd);
    if (rc == 0) {
        *out = br_fileref_ref(s->file.file);
    }
    return rc;
}

int br_segment_mtime_ms(const struct br_segment *s, const char *dir, int64_t *ms)
{
    struct stat st;
    char path[PATH_MAX];
    int rc = -1;
    *ms = 0;
    if (s->file.file != NULL) {
        rc = fstat(br_fileref_fd(s->file.file), &st);
    } else if (file_path(s, dir, "log", path, sizeof path) == 0) {
        rc = stat(path, &st);
    } else {
        errno = ENAMETOOLONG;
    }
    if (rc != 0) {
        br_error("%s: stat of segment %020" PRId64 ": %s", dir, s->base_offset, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    *ms = (int64_t)st.st_mtim.tv_sec * 1000 + (int64_t)(st.st_mtim.tv_nsec / 1000000);
    return 0;
}

/* ------------------------------------------------------------- in-memory indexes */

static int grow(void **v, size_t *cap, size_t want, size_t elem)
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
    int rc = grow(&v, &s->oidx_cap, s->oidx_n + 1, sizeof *s->oidx);
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
static int push_time(struct br_segment *s, int64_t ts, int64_t offset)
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
    int rc = grow(&v, &s->tidx_cap, s->tidx_n + 1, sizeof *s->tidx);
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
static int index_batch(struct br_segment *s, int64_t pos, int64_t size, int64_t last_offset,
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
            rc = push_time(s, s->max_timestamp, s->offset_of_max_timestamp);
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
        if (truncate_fd(fd, want) != 0) {
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
        if (pwrite_full(fd, buf, k * BR_OFFSET_ENTRY_SIZE, s->oidx_file_len) != 0) {
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
        if (truncate_fd(fd, want) != 0) {
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
        if (pwrite_full(fd, buf, k * BR_TIME_ENTRY_SIZE, s->tidx_file_len) != 0) {
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
static int write_index(struct br_segment *s, const char *dir, bool time, bool sync)
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
    if (file_path(s, dir, suffix, path, sizeof path) != 0) {
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
        if (file_size(fd, &len) != 0) {
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
static int sync_indexes(struct br_segment *s, const char *dir)
{
    int rc = write_index(s, dir, false, false);
    if (rc == 0) {
        rc = write_index(s, dir, true, false);
    }
    return rc;
}

/* Keeps the first n offset entries. */
static void drop_offsets_from(struct br_segment *s, size_t n)
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
static void drop_times_at_or_after(struct br_segment *s, int64_t offset)
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
static void reset_tail_state(struct br_segment *s)
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
    rc = grow(&v, &s->oidx_cap, n, sizeof *s->oidx);
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
    rc = grow(&v, &s->tidx_cap, n, sizeof *s->tidx);
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
    if ((ifd >= 0 && file_size(ifd, &s->oidx_file_len) != 0) ||
        (tfd >= 0 && file_size(tfd, &s->tidx_file_len) != 0)) {
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
        drop_offsets_from(s, 0);
        drop_times_at_or_after(s, INT64_MIN);
    }
    reset_tail_state(s);
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
        rc = index_batch(s, pos, (int64_t)bsize, last, h.MaxTimestamp, interval);
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
        drop_offsets_from(s, k);
        if (k > 0) {
            from = s->oidx[k - 1].pos;
            expect_last = s->base_offset + s->oidx[k - 1].rel;
            drop_times_at_or_after(s, expect_last + 1);
        } else {
            drop_times_at_or_after(s, INT64_MIN);
        }
        reset_tail_state(s);
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
        if (truncate_fd(fd, valid_end) != 0) {
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
    rc = sync_indexes(s, dir);

out_free:
    kp_free(sc.buf);
    return rc;
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
    if (pwrite_full(fd, batch, len, pos) != 0) {
        char name[BR_SEGMENT_NAME_MAX];
        int e = errno;
        br_segment_file_name(s->base_offset, "log", name, sizeof name);
        br_error("%s/%s: write of %zu bytes at %" PRId64 ": %s", dir, name, len, pos, strerror(e));
        /* no partial batch may stay behind */
        if (truncate_fd(fd, pos) != 0) {
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
    rc = index_batch(s, pos, (int64_t)len, last_offset, max_timestamp, index_interval);
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
    int rc = push_time(s, s->max_timestamp, s->offset_of_max_timestamp);
    if (rc == 0) {
        rc = sync_indexes(s, dir);
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
    int rc = write_index(s, dir, false, true);
    if (rc == 0) {
        rc = write_index(s, dir, true, true);
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
        int rc = write_index(s, dir, time, false);
        if (rc == 0 && (time ? s->tidx_unsynced : s->oidx_unsynced)) {
            char path[PATH_MAX];
            int fd = -1;
            if (file_path(s, dir, sync_suffix[1 + t], path, sizeof path) == 0) {
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

/* What checking an index entry against the .log found. UNKNOWN: the file
 * could not be read (not the entry's fault: it is not condemned). */
enum entry_check {
    ENTRY_MISMATCH = 0,
    ENTRY_MATCH = 1,
    ENTRY_UNKNOWN = 2,
};

/* Whether entry e names the batch at its position: that batch's header
 * parses and ends at the entry's offset. */
static enum entry_check entry_matches(struct br_segment *s, const char *dir,
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
    return kp_batch_peek(head, sizeof head, &h, &size) == 0 &&
                   h.BaseOffset + h.LastOffsetDelta == s->base_offset + e->rel &&
                   e->pos + (int64_t)size <= s->size
               ? ENTRY_MATCH
               : ENTRY_MISMATCH;
}

static enum entry_check time_entry_matches(struct br_segment *s, const char *dir,
                                           const struct br_time_entry *e);

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
         entry_matches(s, dir, &s->oidx[s->oidx_n - 1]) != ENTRY_MATCH) ||
        (s->tidx_n > 0 && s->tidx_n - 1 < s->tidx_unchecked &&
         time_entry_matches(s, dir, &s->tidx[s->tidx_n - 1]) != ENTRY_MATCH)) {
        /* the replay would start from entries that are not to be trusted:
         * both indexes are rebuilt from the batches, from position 0 */
        drop_offsets_from(s, 0);
        drop_times_at_or_after(s, INT64_MIN);
        s->index_suspect = false;
        s->time_suspect = false;
    }
    int64_t from = s->oidx_n > 0 ? s->oidx[s->oidx_n - 1].pos : 0;
    int64_t next = s->oidx_n > 0 ? s->base_offset + s->oidx[s->oidx_n - 1].rel + 1 : s->base_offset;
    struct br_cursor c;
    br_cursor_init(&c, fd, from, s->size, buf, sizeof buf);
    reset_tail_state(s);
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
        rc = index_batch(s, c.pos, (int64_t)size, last, h.MaxTimestamp, interval);
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
    if (truncate_fd(fd, cut) != 0) {
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
    drop_offsets_from(s, k);
    drop_times_at_or_after(s, offset);
    int rc = replay_tail(s, dir, index_interval);
    if (rc == 0) {
        rc = sync_indexes(s, dir);
    }
    return rc;
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
    enum entry_check m = lo - 1 < s->oidx_unchecked ? entry_matches(s, dir, e) : ENTRY_MATCH;
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
static enum entry_check time_entry_matches(struct br_segment *s, const char *dir,
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
    enum entry_check m = lo - 1 < s->tidx_unchecked ? time_entry_matches(s, dir, e) : ENTRY_MATCH;
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

/* ------------------------------------------------------------- cursor */

void br_cursor_init(struct br_cursor *c, int fd, int64_t pos, int64_t end, uint8_t *buf, size_t cap)
{
    c->fd = fd;
    c->pos = pos;
    c->end = end;
    c->buf = buf;
    c->cap = cap;
    c->buf_pos = 0;
    c->buf_len = 0;
}

int br_cursor_peek(struct br_cursor *c, struct kp_batch_header *h, size_t *size)
{
    if (c->pos >= c->end) {
        return KP_ITER_END;
    }
    int64_t left = c->end - c->pos;
    if (left < KP_BATCH_HEADER_SIZE) {
        return KP_E_CORRUPT;
    }
    bool in_window = c->pos >= c->buf_pos && c->pos - c->buf_pos <= (int64_t)c->buf_len &&
                     c->buf_len - (size_t)(c->pos - c->buf_pos) >= KP_BATCH_HEADER_SIZE;
    if (!in_window) {
        size_t want = (uint64_t)left < c->cap ? (size_t)left : c->cap;
        size_t got = 0;
        if (br_pread_full(c->fd, c->buf, want, c->pos, &got) != 0) {
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
        c->buf_pos = c->pos;
        c->buf_len = got;
        if (got == 0) {
            return KP_ITER_END; /* the file was cut below end meanwhile */
        }
        if (got < KP_BATCH_HEADER_SIZE) {
            return KP_E_CORRUPT;
        }
    }
    const uint8_t *p = c->buf + (c->pos - c->buf_pos);
    size_t have = c->buf_len - (size_t)(c->pos - c->buf_pos);
    int rc = kp_batch_peek(p, have, h, size);
    if (rc != 0 || (uint64_t)*size > (uint64_t)left || h->LastOffsetDelta < 0 ||
        h->BaseOffset < 0 || h->BaseOffset > INT64_MAX - h->LastOffsetDelta) {
        return KP_E_CORRUPT;
    }
    return 0;
}
