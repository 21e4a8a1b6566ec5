/* samsa-broker: the aborted-transaction index (see txn_index.h). */
#define _POSIX_C_SOURCE 200809L

#include "storage/txn_index.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>

#include "base/fileref.h"
#include "base/logging.h"
#include "storage/producer_snapshot.h"

#define ENTRY_VERSION 0
/* the most entries one file is read for (a segment's aborts; a larger
 * file is hostile) */
#define MAX_FILE_ENTRIES (64 * 1024 * 1024 / BR_TXNIDX_ENTRY_BYTES)

void br_txnidx_encode(uint8_t out[BR_TXNIDX_ENTRY_BYTES], const struct br_aborted_txn *e)
{
    kp_store_be16(out, ENTRY_VERSION);
    kp_store_be64(out + 2, (uint64_t)e->producer_id);
    kp_store_be64(out + 10, (uint64_t)e->first_offset);
    kp_store_be64(out + 18, (uint64_t)e->last_offset);
    kp_store_be64(out + 26, (uint64_t)e->last_stable_offset);
}

int br_txnidx_decode(const uint8_t in[BR_TXNIDX_ENTRY_BYTES], struct br_aborted_txn *e)
{
    if (kp_load_be16(in) != ENTRY_VERSION) {
        return KP_E_CORRUPT;
    }
    e->producer_id = (int64_t)kp_load_be64(in + 2);
    e->first_offset = (int64_t)kp_load_be64(in + 10);
    e->last_offset = (int64_t)kp_load_be64(in + 18);
    e->last_stable_offset = (int64_t)kp_load_be64(in + 26);
    return 0;
}

static int path_of(const char *dir, int64_t base, char *buf, size_t cap)
{
    int k = snprintf(buf, cap, "%s/%020" PRId64 "%s", dir, base, BR_TXNIDX_SUFFIX);
    return k < 0 || (size_t)k >= cap ? KP_E_INVALID_ARG : 0;
}

int br_txnidx_append(const char *dir, int64_t seg_base, const struct br_aborted_txn *e)
{
    char path[4096];
    if (path_of(dir, seg_base, path, sizeof path) != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        br_error("%s: open: %s", path, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    uint8_t buf[BR_TXNIDX_ENTRY_BYTES];
    br_txnidx_encode(buf, e);
    int rc = 0;
    if (br_write_full(fd, buf, sizeof buf) != 0) {
        br_error("%s: write: %s", path, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    (void)close(fd);
    return rc;
}

/* The entries of one file, appended to *v (count *n, room *cap). */
static int read_file(const char *path, struct br_aborted_txn **v, size_t *n, size_t *cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            return 0;
        }
        br_error("%s: open: %s", path, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        br_error("%s: fstat: %s", path, strerror(errno));
        (void)close(fd);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    size_t entries = (size_t)st.st_size / BR_TXNIDX_ENTRY_BYTES;
    if ((size_t)st.st_size % BR_TXNIDX_ENTRY_BYTES != 0) {
        br_warn("%s: %lld bytes, not a whole number of %d-byte entries: the tail is ignored",
                path, (long long)st.st_size, BR_TXNIDX_ENTRY_BYTES);
    }
    if (entries > MAX_FILE_ENTRIES) {
        br_warn("%s: %zu entries, more than a segment holds: read up to %d", path, entries,
                MAX_FILE_ENTRIES);
        entries = MAX_FILE_ENTRIES;
    }
    if (*n + entries > *cap) {
        size_t ncap = *n + entries + 16;
        struct br_aborted_txn *nv = kp_realloc(*v, ncap * sizeof *nv);
        if (nv == NULL) {
            (void)close(fd);
            return KP_E_NOMEM;
        }
        *v = nv;
        *cap = ncap;
    }
    int rc = 0;
    uint8_t buf[BR_TXNIDX_ENTRY_BYTES];
    for (size_t i = 0; i < entries; i++) {
        ssize_t r = pread(fd, buf, sizeof buf, (off_t)(i * BR_TXNIDX_ENTRY_BYTES));
        if (r != (ssize_t)sizeof buf) {
            br_error("%s: read: %s", path, r < 0 ? strerror(errno) : "short read");
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        if (br_txnidx_decode(buf, &(*v)[*n]) != 0) {
            br_warn("%s: entry %zu has an unknown version: the rest is ignored", path, i);
            break;
        }
        (*n)++;
    }
    (void)close(fd);
    return rc;
}

/* Cuts path's file to its first `keep` entries (none: the file goes). A
 * failure is logged: the entries past the cut are left out when read. */
static void cut_file(const char *path, size_t keep)
{
    if (keep == 0) {
        if (unlink(path) != 0 && errno != ENOENT) {
            br_error("%s: unlink: %s", path, strerror(errno));
        }
    } else if (truncate(path, (off_t)(keep * BR_TXNIDX_ENTRY_BYTES)) != 0) {
        br_error("%s: truncate: %s", path, strerror(errno));
    }
}

int br_txnidx_load(const char *dir, int64_t from, int64_t to, struct br_aborted_txn **out,
                   size_t *n)
{
    *out = NULL;
    *n = 0;
    int64_t *bases = NULL;
    size_t nbases = 0;
    int rc = br_offset_files_list(dir, BR_TXNIDX_SUFFIX, &bases, &nbases);
    if (rc != 0) {
        return rc;
    }
    struct br_aborted_txn *v = NULL;
    size_t cnt = 0;
    size_t cap = 0;
    for (size_t i = 0; i < nbases && rc == 0; i++) {
        char path[4096];
        if (path_of(dir, bases[i], path, sizeof path) != 0) {
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        size_t first = cnt;
        rc = read_file(path, &v, &cnt, &cap);
        /* a file's entries ascend: those at or past `to` are its tail */
        size_t keep = first;
        while (rc == 0 && keep < cnt && v[keep].last_offset < to) {
            keep++;
        }
        if (rc == 0 && keep < cnt) {
            cut_file(path, keep - first);
        }
    }
    kp_free(bases);
    if (rc != 0) {
        kp_free(v);
        return rc;
    }
    size_t k = 0;
    for (size_t i = 0; i < cnt; i++) {
        /* ascending and within the log: a stray or repeated entry goes */
        if (v[i].last_offset >= from && v[i].last_offset < to &&
            (k == 0 || v[i].last_offset > v[k - 1].last_offset)) {
            v[k++] = v[i];
        }
    }
    if (k == 0) {
        kp_free(v);
        return 0;
    }
    *out = v;
    *n = k;
    return 0;
}

int br_txnidx_unlink(const char *dir, int64_t seg_base)
{
    char path[4096];
    if (path_of(dir, seg_base, path, sizeof path) != 0) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        br_error("%s: unlink: %s", path, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    return 0;
}
