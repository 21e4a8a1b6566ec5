/* samsa-broker: Kafka's checkpoint files (see checkpoint.h). */
#define _POSIX_C_SOURCE 200809L

#include "storage/checkpoint.h"

#include "base/logging.h"
#include "base/number.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECKPOINT_VERSION 0
/* Digits of INT64_MAX, plus a sign. */
#define INT_FIELD_MAX 20
/* The shortest entry lines: "a 0 0\n" and "0 0\n". */
#define MIN_TOPIC_LINE 6
#define MIN_EPOCH_LINE 4

/* ------------------------------------------------------------- parsing */

struct text {
    const char *p;
    size_t len;
    size_t off;
    int line; /* number of the line last returned */
    struct br_checkpoint_error *err;
};

static int fail_at(struct br_checkpoint_error *err, int line, const char *reason, const char *file,
                   int src_line)
{
    err->line = line;
    err->reason = reason;
    err->src_file = file;
    err->src_line = src_line;
    return KP_E_CORRUPT;
}
#define FAIL(t, reason) fail_at((t)->err, (t)->line, (reason), __FILE__, __LINE__)

/* The next line without its '\n', bounded by BR_CHECKPOINT_MAX_LINE. */
static int next_line(struct text *t, const char **line, size_t *len)
{
    t->line++;
    size_t left = t->len - t->off;
    if (left == 0) {
        return FAIL(t, "unexpected end of file: fewer lines than the count says");
    }
    size_t window = left < BR_CHECKPOINT_MAX_LINE + 1 ? left : BR_CHECKPOINT_MAX_LINE + 1;
    const char *start = t->p + t->off;
    const char *nl = memchr(start, '\n', window);
    if (nl == NULL) {
        if (left > BR_CHECKPOINT_MAX_LINE) {
            return FAIL(t, "line too long");
        }
        return FAIL(t, "last line does not end with a newline");
    }
    *line = start;
    *len = (size_t)(nl - start);
    t->off += *len + 1;
    return 0;
}

/*
 * Strict decimal integer: optional '-', then digits without leading zeros,
 * nothing else; converted by br_num_parse_i64 within [min, max].
 */
static int parse_int(struct text *t, const char *p, size_t n, int64_t min, int64_t max,
                     int64_t *out)
{
    if (n == 0) {
        return FAIL(t, "empty field");
    }
    if (n > INT_FIELD_MAX) {
        return FAIL(t, "integer out of range");
    }
    size_t i = p[0] == '-' ? 1 : 0;
    if (i == n) {
        return FAIL(t, "not an integer");
    }
    for (size_t j = i; j < n; j++) {
        if (p[j] < '0' || p[j] > '9') {
            return FAIL(t, "not an integer");
        }
    }
    if (p[i] == '0' && (n - i > 1 || i == 1)) {
        return FAIL(t, "integer with a leading zero or negative zero");
    }
    if (!br_num_parse_i64(p, n, min, max, out)) {
        return FAIL(t, "integer out of range");
    }
    return 0;
}

/* Splits line[0..len) into exactly `want` fields separated by single spaces. */
static int split_fields(struct text *t, const char *line, size_t len, size_t want,
                        const char **field, size_t *flen)
{
    size_t k = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || line[i] == ' ') {
            if (i == start) {
                return FAIL(t, "empty field (leading, trailing or double space)");
            }
            if (k == want) {
                return FAIL(t, "too many fields");
            }
            field[k] = line + start;
            flen[k] = i - start;
            k++;
            start = i + 1;
        }
    }
    if (k != want) {
        return FAIL(t, "too few fields");
    }
    return 0;
}

/* Lines 1 and 2: the version and the count, which must fit the bytes left. */
static int parse_head(struct text *t, size_t max_entries, size_t min_line, size_t *count)
{
    const char *line = NULL;
    size_t len = 0;
    int64_t v = 0;
    int rc = next_line(t, &line, &len);
    if (rc != 0) {
        return rc;
    }
    rc = parse_int(t, line, len, INT32_MIN, INT32_MAX, &v);
    if (rc != 0) {
        return rc;
    }
    if (v != CHECKPOINT_VERSION) {
        return FAIL(t, "unsupported version (only 0 is known)");
    }
    rc = next_line(t, &line, &len);
    if (rc != 0) {
        return rc;
    }
    rc = parse_int(t, line, len, INT32_MIN, INT32_MAX, &v);
    if (rc != 0) {
        return rc;
    }
    if (v < 0) {
        return FAIL(t, "negative count");
    }
    if ((uint64_t)v > max_entries) {
        return FAIL(t, "count above the maximum number of entries");
    }
    /* allocation follows the bytes present, not the claimed count */
    if ((uint64_t)v > (t->len - t->off) / min_line) {
        return FAIL(t, "count larger than the lines the file can hold");
    }
    *count = (size_t)v;
    return 0;
}

static int check_end(struct text *t)
{
    if (t->off != t->len) {
        t->line++;
        return FAIL(t, "more lines than the count says");
    }
    return 0;
}

static void init_text(struct text *t, const char *data, size_t len, struct br_checkpoint_error *err)
{
    t->p = data;
    t->len = data != NULL ? len : 0;
    t->off = 0;
    t->line = 0;
    t->err = err;
    memset(err, 0, sizeof *err);
}

static int cmp_entry(const void *a, const void *b)
{
    const struct br_checkpoint_entry *x = a;
    const struct br_checkpoint_entry *y = b;
    int c = strcmp(x->topic, y->topic);
    if (c != 0) {
        return c;
    }
    return (x->partition > y->partition) - (x->partition < y->partition);
}

/* Returns true when two entries name the same topic-partition. */
static bool has_duplicates(const struct br_checkpoint_entry *e, size_t n, int *nomem)
{
    *nomem = 0;
    if (n < 2) {
        return false;
    }
    struct br_checkpoint_entry *copy = kp_malloc(n * sizeof *copy);
    if (copy == NULL) {
        *nomem = 1;
        return false;
    }
    memcpy(copy, e, n * sizeof *copy);
    qsort(copy, n, sizeof *copy, cmp_entry);
    bool dup = false;
    for (size_t i = 1; i < n && !dup; i++) {
        dup = cmp_entry(&copy[i - 1], &copy[i]) == 0;
    }
    kp_free(copy);
    return dup;
}

int br_checkpoint_parse(const char *data, size_t len, size_t max_entries,
                        struct br_checkpoint_entry **out, size_t *n,
                        struct br_checkpoint_error *err)
{
    struct text t;
    struct br_checkpoint_entry *v = NULL;
    size_t count = 0;
    init_text(&t, data, len, err);
    *out = NULL;
    *n = 0;

    int rc = parse_head(&t, max_entries, MIN_TOPIC_LINE, &count);
    if (rc != 0) {
        goto out_fail;
    }
    if (count > 0) {
        v = kp_calloc(count, sizeof *v);
        if (v == NULL) {
            rc = KP_E_NOMEM;
            goto out_fail;
        }
    }
    for (size_t i = 0; i < count; i++) {
        const char *line = NULL;
        size_t ll = 0;
        const char *f[3];
        size_t fl[3];
        int64_t part = 0;
        int64_t off = 0;
        rc = next_line(&t, &line, &ll);
        if (rc == 0) {
            rc = split_fields(&t, line, ll, 3, f, fl);
        }
        if (rc == 0 && !br_topic_name_valid(f[0], fl[0])) {
            rc = FAIL(&t, "invalid topic name");
        }
        if (rc == 0) {
            rc = parse_int(&t, f[1], fl[1], 0, INT32_MAX, &part);
        }
        if (rc == 0) {
            rc = parse_int(&t, f[2], fl[2], 0, INT64_MAX, &off);
        }
        if (rc != 0) {
            goto out_fail;
        }
        memcpy(v[i].topic, f[0], fl[0]);
        v[i].topic[fl[0]] = '\0';
        v[i].partition = (int32_t)part;
        v[i].offset = off;
    }
    rc = check_end(&t);
    if (rc != 0) {
        goto out_fail;
    }
    int nomem = 0;
    if (has_duplicates(v, count, &nomem)) {
        t.line = 0;
        rc = FAIL(&t, "a topic-partition appears twice");
        goto out_fail;
    }
    if (nomem != 0) {
        rc = KP_E_NOMEM;
        goto out_fail;
    }
    *out = v;
    *n = count;
    return 0;

out_fail:
    if (rc == KP_E_NOMEM) {
        (void)fail_at(err, 0, "out of memory", __FILE__, __LINE__);
    }
    kp_free(v);
    return rc;
}

int br_epoch_checkpoint_parse(const char *data, size_t len, size_t max_entries,
                              struct br_epoch_entry **out, size_t *n,
                              struct br_checkpoint_error *err)
{
    struct text t;
    struct br_epoch_entry *v = NULL;
    size_t count = 0;
    init_text(&t, data, len, err);
    *out = NULL;
    *n = 0;

    int rc = parse_head(&t, max_entries, MIN_EPOCH_LINE, &count);
    if (rc != 0) {
        goto out_fail;
    }
    if (count > 0) {
        v = kp_calloc(count, sizeof *v);
        if (v == NULL) {
            rc = KP_E_NOMEM;
            goto out_fail;
        }
    }
    for (size_t i = 0; i < count; i++) {
        const char *line = NULL;
        size_t ll = 0;
        const char *f[2];
        size_t fl[2];
        int64_t epoch = 0;
        int64_t off = 0;
        rc = next_line(&t, &line, &ll);
        if (rc == 0) {
            rc = split_fields(&t, line, ll, 2, f, fl);
        }
        if (rc == 0) {
            rc = parse_int(&t, f[0], fl[0], 0, INT32_MAX, &epoch);
        }
        if (rc == 0) {
            rc = parse_int(&t, f[1], fl[1], 0, INT64_MAX, &off);
        }
        if (rc == 0 && i > 0 && epoch <= v[i - 1].epoch) {
            rc = FAIL(&t, "leader epochs do not strictly increase");
        }
        if (rc == 0 && i > 0 && off < v[i - 1].start_offset) {
            rc = FAIL(&t, "leader epoch start offsets decrease");
        }
        if (rc != 0) {
            goto out_fail;
        }
        v[i].epoch = (int32_t)epoch;
        v[i].start_offset = off;
    }
    rc = check_end(&t);
    if (rc != 0) {
        goto out_fail;
    }
    *out = v;
    *n = count;
    return 0;

out_fail:
    if (rc == KP_E_NOMEM) {
        (void)fail_at(err, 0, "out of memory", __FILE__, __LINE__);
    }
    kp_free(v);
    return rc;
}

void br_checkpoint_free(void *entries)
{
    kp_free(entries);
}

void br_checkpoint_error_format(const char *path, const struct br_checkpoint_error *err, char *buf,
                                size_t cap)
{
    if (cap == 0) {
        return;
    }
    const char *reason = err->reason != NULL ? err->reason : "no error";
    int n = err->line > 0 ? snprintf(buf, cap, "%s:%d: %s", path, err->line, reason)
                          : snprintf(buf, cap, "%s: %s", path, reason);
    if (n < 0) {
        buf[0] = '\0';
    }
}

/* ------------------------------------------------------------- files */

/* Reads the whole file into a NUL-free owned buffer of at most `max` bytes.
 * *missing is set for ENOENT. */
static int read_file(const char *path, size_t max, char **out, size_t *len, bool *missing,
                     struct br_checkpoint_error *err)
{
    char *buf = NULL;
    int rc = 0;
    *out = NULL;
    *len = 0;
    *missing = false;
    memset(err, 0, sizeof *err);

    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            *missing = true;
            return 0;
        }
        br_error("%s: open: %s", path, strerror(errno));
        (void)fail_at(err, 0, "cannot open the file", __FILE__, __LINE__);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        br_error("%s: fstat: %s", path, strerror(errno));
        (void)fail_at(err, 0, "cannot stat the file", __FILE__, __LINE__);
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
        goto out_close;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = fail_at(err, 0, "not a regular file", __FILE__, __LINE__);
        goto out_close;
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > max) {
        rc = fail_at(err, 0, "file larger than the maximum number of entries allows", __FILE__,
                     __LINE__);
        goto out_close;
    }
    size_t size = (size_t)st.st_size;
    buf = kp_malloc(size + 1);
    if (buf == NULL) {
        (void)fail_at(err, 0, "out of memory", __FILE__, __LINE__);
        rc = KP_E_NOMEM;
        goto out_close;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            br_error("%s: read: %s", path, strerror(errno));
            (void)fail_at(err, 0, "cannot read the file", __FILE__, __LINE__);
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            goto out_free;
        }
        if (r == 0) {
            break; /* the file shrank meanwhile: parse what is there */
        }
        got += (size_t)r;
    }
    if (memchr(buf, '\0', got) != NULL) {
        rc = fail_at(err, 0, "file contains a NUL byte", __FILE__, __LINE__);
        goto out_free;
    }
    buf[got] = '\0';
    *out = buf;
    *len = got;
    (void)close(fd);
    return 0;

out_free:
    kp_free(buf);
out_close:
    (void)close(fd);
    return rc;
}

/* The largest file max_entries lines of at most BR_CHECKPOINT_MAX_LINE bytes
 * make, plus the two header lines. */
static size_t max_file_size(size_t max_entries)
{
    size_t per_line = BR_CHECKPOINT_MAX_LINE + 1;
    if (max_entries > (SIZE_MAX / per_line) - 2) {
        return SIZE_MAX - 1;
    }
    return (max_entries + 2) * per_line;
}

int br_checkpoint_read(const char *path, size_t max_entries, struct br_checkpoint_entry **out,
                       size_t *n, struct br_checkpoint_error *err)
{
    char *text = NULL;
    size_t len = 0;
    bool missing = false;
    *out = NULL;
    *n = 0;
    int rc = read_file(path, max_file_size(max_entries), &text, &len, &missing, err);
    if (rc != 0 || missing) {
        return rc;
    }
    rc = br_checkpoint_parse(text, len, max_entries, out, n, err);
    kp_free(text);
    return rc;
}

int br_epoch_checkpoint_read(const char *path, size_t max_entries, struct br_epoch_entry **out,
                             size_t *n, struct br_checkpoint_error *err)
{
    char *text = NULL;
    size_t len = 0;
    bool missing = false;
    *out = NULL;
    *n = 0;
    int rc = read_file(path, max_file_size(max_entries), &text, &len, &missing, err);
    if (rc != 0 || missing) {
        return rc;
    }
    rc = br_epoch_checkpoint_parse(text, len, max_entries, out, n, err);
    kp_free(text);
    return rc;
}

/* ------------------------------------------------------------- encoding */

static int encode_head(struct kp_writer *w, size_t n)
{
    char line[64];
    int k = snprintf(line, sizeof line, "%d\n%zu\n", CHECKPOINT_VERSION, n);
    if (k < 0 || (size_t)k >= sizeof line) {
        return KP_E_INVALID_ARG;
    }
    kp_wr_raw(w, line, (size_t)k);
    return 0;
}

int br_checkpoint_encode(const struct br_checkpoint_entry *e, size_t n, struct kp_writer *w)
{
    size_t start = w->len;
    int rc = encode_head(w, n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t tl = strnlen(e[i].topic, sizeof e[i].topic);
        if (!br_topic_name_valid(e[i].topic, tl) || e[i].partition < 0 || e[i].offset < 0) {
            rc = KP_E_INVALID_ARG;
            break;
        }
        char line[BR_CHECKPOINT_MAX_LINE + 2];
        int k = snprintf(line, sizeof line, "%s %d %lld\n", e[i].topic, (int)e[i].partition,
                         (long long)e[i].offset);
        if (k < 0 || (size_t)k >= sizeof line) {
            rc = KP_E_INVALID_ARG;
            break;
        }
        kp_wr_raw(w, line, (size_t)k);
    }
    if (rc == 0 && w->err != 0) {
        rc = w->err;
    }
    if (rc != 0) {
        w->len = start;
    }
    return rc;
}

int br_epoch_checkpoint_encode(const struct br_epoch_entry *e, size_t n, struct kp_writer *w)
{
    size_t start = w->len;
    int rc = encode_head(w, n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (e[i].epoch < 0 || e[i].start_offset < 0) {
            rc = KP_E_INVALID_ARG;
            break;
        }
        char line[64];
        int k =
            snprintf(line, sizeof line, "%d %lld\n", (int)e[i].epoch, (long long)e[i].start_offset);
        if (k < 0 || (size_t)k >= sizeof line) {
            rc = KP_E_INVALID_ARG;
            break;
        }
        kp_wr_raw(w, line, (size_t)k);
    }
    if (rc == 0 && w->err != 0) {
        rc = w->err;
    }
    if (rc != 0) {
        w->len = start;
    }
    return rc;
}

/* fsync of the directory holding path, so that a rename survives a crash. */
static int sync_parent_dir(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        dir[0] = '.';
        dir[1] = '\0';
    } else if (slash == path) {
        dir[0] = '/';
        dir[1] = '\0';
    } else {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir) {
            return KP_E_INVALID_ARG;
        }
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        br_error("%s: open: %s", dir, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = 0;
    if (fsync(fd) != 0) {
        br_error("%s: fsync: %s", dir, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    (void)close(fd);
    return rc;
}

int br_file_write_atomic(const char *path, const void *data, size_t len)
{
    char tmp[PATH_MAX];
    int k = snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (k < 0 || (size_t)k >= sizeof tmp) {
        return KP_E_INVALID_ARG;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        br_error("%s: open: %s", tmp, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    const char *p = data;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            br_error("%s: write: %s", tmp, w < 0 ? strerror(errno) : "no progress");
            goto out_unlink;
        }
        done += (size_t)w;
    }
    if (fdatasync(fd) != 0) {
        br_error("%s: fdatasync: %s", tmp, strerror(errno));
        goto out_unlink;
    }
    if (close(fd) != 0) {
        fd = -1;
        br_error("%s: close: %s", tmp, strerror(errno));
        goto out_unlink;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        br_error("%s: rename to %s: %s", tmp, path, strerror(errno));
        goto out_unlink;
    }
    return sync_parent_dir(path);

out_unlink:
    if (fd >= 0) {
        (void)close(fd);
    }
    (void)unlink(tmp);
    return KP_ERR_KAFKA_STORAGE_ERROR;
}

/* Room for every line of n topic entries, so the writer never hits its
 * ceiling on valid input. */
static size_t encoded_max(size_t n)
{
    return max_file_size(n);
}

int br_checkpoint_write(const char *path, const struct br_checkpoint_entry *e, size_t n)
{
    struct kp_writer w;
    kp_wr_init(&w, encoded_max(n));
    int rc = br_checkpoint_encode(e, n, &w);
    if (rc == 0) {
        rc = br_file_write_atomic(path, w.buf, w.len);
    }
    kp_wr_free(&w);
    return rc;
}

int br_epoch_checkpoint_write(const char *path, const struct br_epoch_entry *e, size_t n)
{
    struct kp_writer w;
    kp_wr_init(&w, encoded_max(n));
    int rc = br_epoch_checkpoint_encode(e, n, &w);
    if (rc == 0) {
        rc = br_file_write_atomic(path, w.buf, w.len);
    }
    kp_wr_free(&w);
    return rc;
}

int br_checkpoint_entry_cmp(const void *a, const void *b)
{
    const struct br_checkpoint_entry *x = a;
    const struct br_checkpoint_entry *y = b;
    int c = strcmp(x->topic, y->topic);
    if (c != 0) {
        return c;
    }
    return x->partition < y->partition ? -1 : (x->partition > y->partition ? 1 : 0);
}
