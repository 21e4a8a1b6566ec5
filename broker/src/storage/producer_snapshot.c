/* samsa-broker: producer-state snapshot files (see producer_snapshot.h). */
#define _POSIX_C_SOURCE 200809L

#include "storage/producer_snapshot.h"

#include "base/logging.h"
#include "base/number.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/crc.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* where the CRC is and what it covers (Kafka's CrcOffset, ProducerEntriesOffset) */
#define CRC_AT 2
#define CRC_FROM 6

int br_psnap_encode(const struct br_psnap_entry *e, size_t n, struct kp_writer *w)
{
    if (n > BR_PSNAP_MAX_ENTRIES) {
        kp_wr_fail(w, KP_E_INVALID_ARG);
        return w->err;
    }
    size_t start = w->len;
    kp_wr_i16(w, BR_PSNAP_VERSION);
    kp_wr_u32(w, 0); /* the CRC, filled in below */
    kp_wr_i32(w, (int32_t)n);
    for (size_t i = 0; i < n; i++) {
        kp_wr_i64(w, e[i].producer_id);
        kp_wr_i16(w, e[i].epoch);
        kp_wr_i32(w, e[i].last_seq);
        kp_wr_i64(w, e[i].last_offset);
        kp_wr_i32(w, e[i].offset_delta);
        kp_wr_i64(w, e[i].timestamp);
        kp_wr_i32(w, e[i].coordinator_epoch);
        kp_wr_i64(w, e[i].txn_first_offset);
    }
    if (w->err != 0) {
        return w->err;
    }
    uint8_t *base = w->buf + start;
    kp_store_be32(base + CRC_AT, kp_crc32c(0, base + CRC_FROM, w->len - start - CRC_FROM));
    return 0;
}

int br_psnap_parse(const uint8_t *data, size_t len, struct br_psnap_entry **out, size_t *n,
                   const char **why, int *where_line)
{
    *out = NULL;
    *n = 0;
    *why = NULL;
    *where_line = 0;
    struct kp_reader r;
    kp_rd_init(&r, data, len);
    int16_t version = kp_rd_i16(&r);
    uint32_t crc = kp_rd_u32(&r);
    if (r.err != 0) {
        *why = "shorter than its header";
        *where_line = __LINE__;
        return KP_E_CORRUPT;
    }
    if (version != BR_PSNAP_VERSION) {
        *why = "unknown version";
        *where_line = __LINE__;
        return KP_E_CORRUPT;
    }
    if (kp_crc32c(0, data + CRC_FROM, len - CRC_FROM) != crc) {
        *why = "CRC mismatch";
        *where_line = __LINE__;
        return KP_E_CORRUPT;
    }
    /* the count is bounded by the bytes present (kp_rd_array_len) */
    int32_t count = kp_rd_array_len(&r, false, false, BR_PSNAP_MAX_ENTRIES, BR_PSNAP_ENTRY_BYTES);
    if (r.err != 0 || count < 0) {
        *why = "bad entry count";
        *where_line = __LINE__;
        return KP_E_CORRUPT;
    }
    if (kp_rd_remaining(&r) != (size_t)count * BR_PSNAP_ENTRY_BYTES) {
        *why = "length does not match the entry count";
        *where_line = __LINE__;
        return KP_E_CORRUPT;
    }
    if (count == 0) {
        return 0;
    }
    struct br_psnap_entry *e = kp_calloc((size_t)count, sizeof *e);
    if (e == NULL) {
        *why = "out of memory";
        *where_line = __LINE__;
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < count; i++) {
        e[i].producer_id = kp_rd_i64(&r);
        e[i].epoch = kp_rd_i16(&r);
        e[i].last_seq = kp_rd_i32(&r);
        e[i].last_offset = kp_rd_i64(&r);
        e[i].offset_delta = kp_rd_i32(&r);
        e[i].timestamp = kp_rd_i64(&r);
        e[i].coordinator_epoch = kp_rd_i32(&r);
        e[i].txn_first_offset = kp_rd_i64(&r);
    }
    if (r.err != 0) { /* never: the length was checked */
        kp_free(e);
        *why = "truncated entry";
        *where_line = __LINE__;
        return KP_E_CORRUPT;
    }
    *out = e;
    *n = (size_t)count;
    return 0;
}

int br_psnap_path(const char *dir, int64_t offset, char *buf, size_t cap)
{
    int k = snprintf(buf, cap, "%s/%020" PRId64 "%s", dir, offset, BR_PSNAP_SUFFIX);
    return k < 0 || (size_t)k >= cap ? KP_E_INVALID_ARG : 0;
}

/* The offset of a file named "<20 digits><suffix>", or -1. */
static int64_t name_offset(const char *name, const char *suffix)
{
    size_t sl = strlen(suffix);
    if (strlen(name) != 20 + sl || strcmp(name + 20, suffix) != 0) {
        return -1;
    }
    uint64_t v = 0;
    if (!br_num_parse_u64(name, 20, INT64_MAX, &v)) {
        return -1;
    }
    return (int64_t)v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int br_psnap_list(const char *dir, int64_t **out, size_t *n)
{
    return br_offset_files_list(dir, BR_PSNAP_SUFFIX, out, n);
}

int br_offset_files_list(const char *dir, const char *suffix, int64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        if (errno == ENOENT) {
            return 0;
        }
        br_error("%s: opendir: %s", dir, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = 0;
    int64_t *v = NULL;
    size_t cnt = 0;
    size_t cap = 0;
    for (;;) {
        errno = 0;
        const struct dirent *de = readdir(d);
        if (de == NULL) {
            if (errno != 0) {
                br_error("%s: readdir: %s", dir, strerror(errno));
                rc = KP_ERR_KAFKA_STORAGE_ERROR;
            }
            break;
        }
        int64_t off = name_offset(de->d_name, suffix);
        if (off < 0) {
            continue;
        }
        if (cnt == cap) {
            size_t ncap = cap == 0 ? 8 : cap * 2;
            int64_t *nv = kp_realloc(v, ncap * sizeof *nv);
            if (nv == NULL) {
                rc = KP_E_NOMEM;
                break;
            }
            v = nv;
            cap = ncap;
        }
        v[cnt++] = off;
    }
    (void)closedir(d);
    if (rc != 0) {
        kp_free(v);
        return rc;
    }
    if (cnt > 1) {
        qsort(v, cnt, sizeof *v, cmp_i64);
    }
    *out = v;
    *n = cnt;
    return 0;
}

int br_psnap_read(const char *path, struct br_psnap_entry **out, size_t *n, const char **why)
{
    *out = NULL;
    *n = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *why = "cannot be opened";
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = 0;
    uint8_t *buf = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
        goto out_close;
    }
    if (st.st_size < 0 ||
        (uint64_t)st.st_size >
            BR_PSNAP_HEADER_BYTES + (uint64_t)BR_PSNAP_MAX_ENTRIES * BR_PSNAP_ENTRY_BYTES) {
        *why = "larger than the most entries a snapshot may hold";
        rc = KP_E_CORRUPT;
        goto out_close;
    }
    size_t size = (size_t)st.st_size;
    buf = kp_malloc(size > 0 ? size : 1);
    if (buf == NULL) {
        *why = "out of memory";
        rc = KP_E_NOMEM;
        goto out_close;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t k = read(fd, buf + got, size - got);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k < 0) {
            *why = "cannot be read";
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            goto out_free;
        }
        if (k == 0) {
            break; /* shorter than it was: the parse says what is missing */
        }
        got += (size_t)k;
    }
    int line = 0;
    rc = br_psnap_parse(buf, got, out, n, why, &line);
out_free:
    kp_free(buf);
out_close:
    (void)close(fd);
    return rc;
}

int br_psnap_load_latest(const char *dir, int64_t min_offset, int64_t max_offset, int64_t *offset,
                         struct br_psnap_entry **out, size_t *n)
{
    *offset = -1;
    *out = NULL;
    *n = 0;
    int64_t *offs = NULL;
    size_t noffs = 0;
    int rc = br_psnap_list(dir, &offs, &noffs);
    if (rc == KP_E_NOMEM) {
        return rc;
    }
    if (rc != 0) {
        return 0; /* logged: the state comes from the log alone */
    }
    for (size_t i = noffs; i-- > 0;) {
        if (offs[i] > max_offset) {
            continue;
        }
        if (offs[i] < min_offset) {
            break;
        }
        char path[PATH_MAX];
        if (br_psnap_path(dir, offs[i], path, sizeof path) != 0) {
            continue;
        }
        const char *why = NULL;
        rc = br_psnap_read(path, out, n, &why);
        if (rc == KP_E_NOMEM) {
            break;
        }
        if (rc == 0) {
            *offset = offs[i];
            break;
        }
        /* Kafka's loadFromSnapshot: a corrupt snapshot is deleted and the
         * next older one tried; the log after it rebuilds the rest */
        br_warn("%s: producer snapshot %s: ignored and deleted, the state is rebuilt from the log",
                path, why != NULL ? why : "unreadable");
        if (unlink(path) != 0 && errno != ENOENT) {
            br_warn("%s: unlink: %s", path, strerror(errno));
        }
        rc = 0;
    }
    kp_free(offs);
    return rc;
}

static int tmp_path(const char *dir, int64_t offset, char *buf, size_t cap)
{
    int k = snprintf(buf, cap, "%s/%020" PRId64 "%s.tmp", dir, offset, BR_PSNAP_SUFFIX);
    return k < 0 || (size_t)k >= cap ? KP_E_INVALID_ARG : 0;
}

int br_psnap_write_tmp(const char *dir, int64_t offset, const struct br_psnap_entry *e, size_t n)
{
    char path[PATH_MAX];
    if (tmp_path(dir, offset, path, sizeof path) != 0) {
        return KP_E_INVALID_ARG;
    }
    struct kp_writer w;
    kp_wr_init(&w, BR_PSNAP_HEADER_BYTES + (size_t)BR_PSNAP_MAX_ENTRIES * BR_PSNAP_ENTRY_BYTES);
    int rc = br_psnap_encode(e, n, &w);
    if (rc != 0) {
        goto out_free;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        br_warn("%s: open: %s", path, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
        goto out_free;
    }
    size_t done = 0;
    while (done < w.len) {
        ssize_t k = write(fd, w.buf + done, w.len - done);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            br_warn("%s: write: %s", path, k < 0 ? strerror(errno) : "no progress");
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        done += (size_t)k;
    }
    if (rc == 0 && fdatasync(fd) != 0) {
        br_warn("%s: fdatasync: %s", path, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (close(fd) != 0 && rc == 0) {
        br_warn("%s: close: %s", path, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (rc != 0) {
        (void)unlink(path);
    }
out_free:
    kp_wr_free(&w);
    return rc;
}

int br_psnap_commit_tmp(const char *dir, int64_t offset, bool keep)
{
    char tmp[PATH_MAX];
    char path[PATH_MAX];
    if (tmp_path(dir, offset, tmp, sizeof tmp) != 0 ||
        br_psnap_path(dir, offset, path, sizeof path) != 0) {
        return KP_E_INVALID_ARG;
    }
    if (!keep) {
        (void)unlink(tmp);
        return 0;
    }
    if (rename(tmp, path) != 0) {
        br_warn("%s: rename to %s: %s", tmp, path, strerror(errno));
        (void)unlink(tmp);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        br_warn("%s: open: %s", dir, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = 0;
    if (fsync(fd) != 0) {
        br_warn("%s: fsync: %s", dir, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    (void)close(fd);
    return rc;
}

int br_psnap_write(const char *dir, int64_t offset, const struct br_psnap_entry *e, size_t n)
{
    int rc = br_psnap_write_tmp(dir, offset, e, n);
    return rc != 0 ? rc : br_psnap_commit_tmp(dir, offset, true);
}

size_t br_psnap_delete_outside(const char *dir, int64_t below, int64_t above)
{
    int64_t *offs = NULL;
    size_t noffs = 0;
    size_t deleted = 0;
    if (br_psnap_list(dir, &offs, &noffs) != 0) {
        return 0;
    }
    for (size_t i = 0; i < noffs; i++) {
        if (offs[i] >= below && offs[i] <= above) {
            continue;
        }
        char path[PATH_MAX];
        if (br_psnap_path(dir, offs[i], path, sizeof path) != 0) {
            continue;
        }
        if (unlink(path) == 0) {
            deleted++;
        } else if (errno != ENOENT) {
            br_warn("%s: unlink: %s", path, strerror(errno));
        }
    }
    kp_free(offs);
    return deleted;
}
