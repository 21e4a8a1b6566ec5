/* samsa-broker: a segment's files: their names, the full reads and writes,
 * sizes, truncation and reopening, and the cursor over batch headers
 * (see segment.h). */
#define _GNU_SOURCE

#include "storage/segment_internal.h"

#include "base/logging.h"
#include "base/number.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    /* 20 digits and a dot; strnlen first, so a shorter name is not over-read */
    uint64_t v = 0;
    if (strnlen(name, 21) < 21 || name[20] != '.' || !br_num_parse_u64(name, 20, INT64_MAX, &v)) {
        return false;
    }
    *base_offset = (int64_t)v;
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
int seg_pwrite_full(int fd, const void *buf, size_t n, int64_t pos)
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

int seg_truncate_fd(int fd, int64_t len)
{
    int rc;
    do {
        rc = ftruncate(fd, (off_t)len);
    } while (rc != 0 && errno == EINTR);
    return rc;
}

int seg_file_size(int fd, int64_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        return -1;
    }
    *size = (int64_t)st.st_size;
    return 0;
}

/* "<dir>/<base>.<suffix><tail>" of s. -1 when it does not fit. */
int seg_file_path(const struct br_segment *s, const char *dir, const char *suffix, char *buf,
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
    if (seg_file_path(s, dir, "log", path, sizeof path) != 0) {
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
    } else if (seg_file_path(s, dir, "log", path, sizeof path) == 0) {
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
