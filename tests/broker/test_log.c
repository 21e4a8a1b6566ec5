/* Unit tests for the partition log (broker/src/log.h), on real files. */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/crc.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/record_batch.h>

#include "base/fileref.h"
#include "base/logging.h"
#include "cunit_run.h"
#include "storage/log.h"
#include "tmpdir.h"

#define MiB ((size_t)1024 * 1024)
#define TS0 INT64_C(1700000000000)
#define NOW0 INT64_C(1800000000000)
#define TOPIC_BUF 256

/* ------------------------------------------------------------- fixture */

static char root[64];
static char pdir[128];

static void setup_dir(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(st_tmpdir_make(root, sizeof root, "log"));
    (void)snprintf(pdir, sizeof pdir, "%s/t-0", root);
}

static void cleanup_dir(void)
{
    CU_ASSERT_EQUAL(st_tmpdir_remove(root), 0);
}

static struct br_log_config cfg_with(int64_t segment_bytes, int32_t interval)
{
    struct br_log_config c;
    br_log_config_defaults(&c);
    c.segment_bytes = segment_bytes;
    c.index_interval_bytes = interval;
    return c;
}

/*
 * Every log of the suite shares a budget of ONE open segment file, so each
 * test also proves that a segment closed by the budget reopens and serves
 * the same bytes: any segment but the one last used is closed.
 */
static struct br_filecache *files;

static struct br_filecache *budget(void)
{
    if (files == NULL) {
        CU_ASSERT_EQUAL_FATAL(br_filecache_new(1, &files), 0);
    }
    return files;
}

static struct br_log *open_log_in(const char *dir, const struct br_log_config *c,
                                  int64_t recovery_point, struct br_filecache *fc)
{
    struct br_log *log = NULL;
    int rc = br_log_open(dir, c, recovery_point, fc, &log);
    CU_ASSERT_EQUAL(rc, 0);
    return log;
}

static struct br_log *open_log(const struct br_log_config *c, int64_t recovery_point)
{
    return open_log_in(pdir, c, recovery_point, budget());
}

static void seg_path(int64_t base, const char *suffix, char *buf, size_t cap)
{
    (void)snprintf(buf, cap, "%s/%020" PRId64 ".%s", pdir, base, suffix);
}

static int64_t file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        return -1;
    }
    return (int64_t)st.st_size;
}

static int64_t seg_size(int64_t base, const char *suffix)
{
    char path[256];
    seg_path(base, suffix, path, sizeof path);
    return file_size(path);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    int64_t size = file_size(path);
    *len = 0;
    if (size < 0) {
        return NULL;
    }
    uint8_t *buf = malloc((size_t)size + 1);
    int fd = open(path, O_RDONLY);
    if (buf == NULL || fd < 0) {
        free(buf);
        if (fd >= 0) {
            (void)close(fd);
        }
        return NULL;
    }
    ssize_t got = pread(fd, buf, (size_t)size, 0);
    (void)close(fd);
    *len = got > 0 ? (size_t)got : 0;
    return buf;
}

static void write_at(const char *path, int64_t pos, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(pwrite(fd, data, n, (off_t)pos), (ssize_t)n);
    CU_ASSERT_EQUAL(close(fd), 0);
}

static void append_to_file(const char *path, const void *data, size_t n)
{
    write_at(path, file_size(path), data, n);
}

static void flip_byte(const char *path, int64_t pos)
{
    uint8_t b = 0;
    int fd = open(path, O_RDWR);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(pread(fd, &b, 1, (off_t)pos), 1);
    b ^= 0x5a;
    CU_ASSERT_EQUAL(pwrite(fd, &b, 1, (off_t)pos), 1);
    CU_ASSERT_EQUAL(close(fd), 0);
}

/* ------------------------------------------------------------- batches */

/* A batch of `count` records with timestamps ts, ts+1, ... and values of
 * value_len bytes. Caller frees with kp_free. */
static uint8_t *make_batch_codec(int codec, int count, int64_t ts, size_t value_len, size_t *len)
{
    struct kp_batch_builder b;
    struct kp_writer w;
    static uint8_t value[4096];
    memset(value, 'v', sizeof value);
    *len = 0;
    int rc = kp_batch_builder_init(&b, codec, 0, ts, -1, -1, -1, 16 * MiB);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    for (int i = 0; i < count; i++) {
        char key[32];
        int kn = snprintf(key, sizeof key, "key-%d", i);
        struct kp_bytes k = {(const uint8_t *)key, (int32_t)kn};
        struct kp_bytes v = {value, (int32_t)(value_len < sizeof value ? value_len : sizeof value)};
        rc = kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, ts + i, k, v, NULL, 0);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
    }
    kp_wr_init(&w, 32 * MiB);
    rc = kp_batch_builder_finish(&b, &w);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    kp_batch_builder_free(&b);
    uint8_t *out = kp_wr_steal(&w, len);
    if (out == NULL) {
        abort(); /* the builder succeeded: a test bug */
    }
    return out;
}

static uint8_t *make_batch(int count, int64_t ts, size_t value_len, size_t *len)
{
    return make_batch_codec(KP_CODEC_NONE, count, ts, value_len, len);
}

/* Appends a batch; returns its base offset, *size its bytes. */
static int64_t append_sized(struct br_log *log, int count, int64_t ts, size_t value_len,
                            int32_t epoch, int64_t now, size_t *size)
{
    size_t len = 0;
    uint8_t *batch = make_batch(count, ts, value_len, &len);
    int64_t base = -1;
    int rc = br_log_append(log, batch, len, epoch, now, &base);
    CU_ASSERT_EQUAL(rc, 0);
    kp_free(batch);
    if (size != NULL) {
        *size = len;
    }
    return base;
}

static int64_t append(struct br_log *log, int count, int64_t ts)
{
    return append_sized(log, count, ts, 16, 0, NOW0, NULL);
}

/* The bytes of a slice. Caller frees. */
static uint8_t *slice_bytes(const struct br_log_slice *s)
{
    uint8_t *buf = malloc(s->len > 0 ? (size_t)s->len : 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    if (s->len > 0) {
        ssize_t got = pread(br_fileref_fd(s->file), buf, (size_t)s->len, (off_t)s->file_pos);
        CU_ASSERT_EQUAL(got, s->len);
    }
    return buf;
}

/*
 * Reads the whole log from `from` through br_log_read, one call per
 * segment, and checks every batch: valid CRC, offsets contiguous. Returns
 * the number of batches.
 */
static size_t check_readable(struct br_log *log, int64_t from)
{
    int64_t off = from;
    int64_t expect = -1;
    size_t batches = 0;
    while (off < br_log_end_offset(log)) {
        struct br_log_slice sl;
        int rc = br_log_read(log, off, INT64_MAX, 64 * 1024 * 1024, true, &sl);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        CU_ASSERT_FATAL(sl.len > 0);
        uint8_t *buf = slice_bytes(&sl);
        size_t pos = 0;
        while (pos < (size_t)sl.len) {
            struct kp_batch_header h;
            size_t size = 0;
            rc = kp_batch_parse_lenient(buf + pos, (size_t)sl.len - pos, &h, &size);
            CU_ASSERT_EQUAL_FATAL(rc, 0);
            if (expect >= 0) {
                CU_ASSERT_EQUAL(h.BaseOffset, expect);
            }
            expect = kp_batch_last_offset(&h) + 1;
            pos += size;
            batches++;
        }
        CU_ASSERT_EQUAL(expect, sl.next_offset);
        free(buf);
        off = sl.next_offset;
        br_log_slice_release(&sl);
    }
    CU_ASSERT_EQUAL(off, br_log_end_offset(log));
    return batches;
}

/* ------------------------------------------------------------- config, names */

static void test_config_defaults_are_kafkas(void)
{
    struct br_log_config c;
    br_log_config_defaults(&c);
    CU_ASSERT_EQUAL(c.segment_bytes, 1073741824);
    CU_ASSERT_EQUAL(c.segment_ms, 604800000);
    CU_ASSERT_EQUAL(c.index_interval_bytes, 4096);
    CU_ASSERT_EQUAL(c.max_index_bytes, 10485760);
    CU_ASSERT_EQUAL(c.flush_interval_messages, INT64_MAX);
    CU_ASSERT_EQUAL(c.flush_interval_ms, INT64_MAX);
    CU_ASSERT_EQUAL(c.retention_bytes, -1);
    CU_ASSERT_EQUAL(br_log_config_check(&c, NULL), 0);
}

static void expect_bad_config(struct br_log_config c, const char *name)
{
    const char *field = NULL;
    CU_ASSERT_EQUAL(br_log_config_check(&c, &field), KP_E_INVALID_ARG);
    CU_ASSERT_PTR_NOT_NULL(field);
    if (field != NULL) {
        CU_ASSERT_STRING_EQUAL(field, name);
    }
}

static void test_config_rejects_out_of_range_values(void)
{
    struct br_log_config d;
    br_log_config_defaults(&d);
    struct br_log_config c = d;
    c.segment_bytes = 13;
    expect_bad_config(c, "segment.bytes");
    c = d;
    c.segment_bytes = (int64_t)INT32_MAX + 1;
    expect_bad_config(c, "segment.bytes");
    c = d;
    c.segment_ms = 0;
    expect_bad_config(c, "segment.ms");
    c = d;
    c.index_interval_bytes = -1;
    expect_bad_config(c, "index.interval.bytes");
    c = d;
    c.max_index_bytes = 8;
    expect_bad_config(c, "segment.index.bytes");
    c = d;
    c.flush_interval_messages = 0;
    expect_bad_config(c, "flush.messages");
    c = d;
    c.retention_ms = -2;
    expect_bad_config(c, "retention.ms");
    struct br_log *log = NULL;
    CU_ASSERT_EQUAL(br_log_open("/tmp/samsa-never-created-0", &c, 0, NULL, &log), KP_E_INVALID_ARG);
    CU_ASSERT_PTR_NULL(log);
}

static void test_dir_parse_name_splits_at_last_dash(void)
{
    char topic[TOPIC_BUF];
    int32_t p = -1;
    CU_ASSERT_EQUAL(br_log_dir_parse_name("topic-3", topic, sizeof topic, &p), 0);
    CU_ASSERT_STRING_EQUAL(topic, "topic");
    CU_ASSERT_EQUAL(p, 3);
    CU_ASSERT_EQUAL(br_log_dir_parse_name("my-topic-v2-12", topic, sizeof topic, &p), 0);
    CU_ASSERT_STRING_EQUAL(topic, "my-topic-v2");
    CU_ASSERT_EQUAL(p, 12);
    CU_ASSERT_EQUAL(br_log_dir_parse_name("__consumer_offsets-49", topic, sizeof topic, &p), 0);
    CU_ASSERT_STRING_EQUAL(topic, "__consumer_offsets");
    CU_ASSERT_EQUAL(p, 49);
    CU_ASSERT_EQUAL(br_log_dir_parse_name("t-2147483647", topic, sizeof topic, &p), 0);
    CU_ASSERT_EQUAL(p, INT32_MAX);
}

static void test_dir_parse_name_rejects_bad_names(void)
{
    static const char *const bad[] = {
        "topic",   "topic-",       "-3",       "topic-03", "topic-+3",   "topic- 1",
        "topic-x", "t-2147483648", "to/pic-1", "..-1",     "t-0-delete", "t-1 ",
    };
    char topic[TOPIC_BUF];
    int32_t p = -1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(br_log_dir_parse_name(bad[i], topic, sizeof topic, &p), KP_E_INVALID_ARG);
    }
    char small[4];
    CU_ASSERT_EQUAL(br_log_dir_parse_name("long-1", small, sizeof small, &p), KP_E_INVALID_ARG);
}

/* ------------------------------------------------------------- append and read */

static void test_open_creates_empty_log(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_start_offset(log), 0);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 0);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 1);
    CU_ASSERT_EQUAL(br_log_size_bytes(log), 0);
    CU_ASSERT_EQUAL(seg_size(0, "log"), 0);
    CU_ASSERT_EQUAL(seg_size(0, "index"), 0);
    CU_ASSERT_EQUAL(seg_size(0, "timeindex"), 0);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL(br_log_read(log, 0, INT64_MAX, 1000, true, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, 0);
    CU_ASSERT_PTR_NULL(sl.file);
    CU_ASSERT_EQUAL(br_log_read(log, 1, INT64_MAX, 1000, true, &sl), KP_ERR_OFFSET_OUT_OF_RANGE);
    br_log_close(log);
    cleanup_dir();
}

static void test_append_assigns_offsets_in_order(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(append(log, 1, TS0), 0);
    CU_ASSERT_EQUAL(append(log, 3, TS0), 1);
    CU_ASSERT_EQUAL(append(log, 5, TS0), 4);
    CU_ASSERT_EQUAL(append(log, 1, TS0), 9);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 10);
    CU_ASSERT_EQUAL(check_readable(log, 0), 4);
    br_log_close(log);
    cleanup_dir();
}

static void test_append_rewrites_base_offset_and_leader_epoch(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    (void)append(log, 4, TS0);
    size_t len = 0;
    uint8_t *batch = make_batch(2, TS0, 10, &len);
    kp_batch_set_base_offset(batch, 777);
    uint8_t *orig = malloc(len);
    if (orig == NULL) {
        abort();
    }
    memcpy(orig, batch, len);
    int64_t base = -1;
    CU_ASSERT_EQUAL(br_log_append(log, batch, len, 7, NOW0, &base), 0);
    CU_ASSERT_EQUAL(base, 4);

    struct br_log_slice sl;
    CU_ASSERT_EQUAL_FATAL(br_log_read(log, 4, INT64_MAX, 1 << 20, true, &sl), 0);
    CU_ASSERT_EQUAL_FATAL(sl.len, (int32_t)len);
    uint8_t *got = slice_bytes(&sl);
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(got, len, &h, &size), 0); /* CRC still valid */
    CU_ASSERT_EQUAL(h.BaseOffset, 4);
    CU_ASSERT_EQUAL(h.PartitionLeaderEpoch, 7);
    /* everything else verbatim */
    CU_ASSERT_EQUAL(memcmp(got + 8, orig + 8, 4), 0);
    CU_ASSERT_EQUAL(memcmp(got + 16, orig + 16, len - 16), 0);
    free(got);
    free(orig);
    kp_free(batch);
    br_log_slice_release(&sl);
    br_log_close(log);
    cleanup_dir();
}

static void test_append_rejects_what_is_not_one_batch(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    size_t len = 0;
    uint8_t *batch = make_batch(2, TS0, 10, &len);
    int64_t base = 0;
    CU_ASSERT_EQUAL(br_log_append(log, batch, len - 1, 0, NOW0, &base), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_log_append(log, batch, 30, 0, NOW0, &base), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 0);
    CU_ASSERT_EQUAL(seg_size(0, "log"), 0);
    kp_free(batch);
    br_log_close(log);
    cleanup_dir();
}

static void test_read_round_trip_returns_batch_bytes(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    size_t total = 0;
    uint8_t *expect = malloc(1 << 16);
    if (expect == NULL) {
        abort();
    }
    for (int i = 0; i < 3; i++) {
        size_t len = 0;
        uint8_t *batch = make_batch(i + 1, TS0 + i, 100, &len);
        int64_t base = 0;
        CU_ASSERT_EQUAL(br_log_append(log, batch, len, 2, NOW0, &base), 0);
        memcpy(expect + total, batch, len); /* as rewritten by the append */
        total += len;
        kp_free(batch);
    }
    struct br_log_slice sl;
    CU_ASSERT_EQUAL_FATAL(br_log_read(log, 0, INT64_MAX, 1 << 20, false, &sl), 0);
    CU_ASSERT_EQUAL(sl.file_pos, 0);
    CU_ASSERT_EQUAL_FATAL(sl.len, (int32_t)total);
    CU_ASSERT_EQUAL(sl.first_offset, 0);
    CU_ASSERT_EQUAL(sl.next_offset, 6);
    uint8_t *got = slice_bytes(&sl);
    CU_ASSERT_EQUAL(memcmp(got, expect, total), 0);
    free(got);
    free(expect);
    br_log_slice_release(&sl);
    CU_ASSERT_PTR_NULL(sl.file);
    br_log_close(log);
    cleanup_dir();
}

/* Three batches: offsets 0-4, 5-9, 10-14, each *size bytes. */
static struct br_log *three_batches(size_t *size)
{
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 3; i++) {
        (void)append_sized(log, 5, TS0 + (int64_t)1000 * i, 50, 0, NOW0, size);
    }
    CU_ASSERT_EQUAL(br_log_end_offset(log), 15);
    return log;
}

static void test_read_from_inside_batch_starts_at_containing_batch(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL_FATAL(br_log_read(log, 7, INT64_MAX, 1 << 20, false, &sl), 0);
    CU_ASSERT_EQUAL(sl.first_offset, 5);
    CU_ASSERT_EQUAL(sl.file_pos, (int64_t)size);
    CU_ASSERT_EQUAL(sl.len, (int32_t)(2 * size));
    CU_ASSERT_EQUAL(sl.next_offset, 15);
    br_log_slice_release(&sl);
    br_log_close(log);
    cleanup_dir();
}

static void test_read_respects_max_offset(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL(br_log_read(log, 0, 10, 1 << 20, false, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, (int32_t)(2 * size));
    CU_ASSERT_EQUAL(sl.next_offset, 10);
    br_log_slice_release(&sl);
    /* a batch reaching the HW is not served */
    CU_ASSERT_EQUAL(br_log_read(log, 0, 7, 1 << 20, true, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, (int32_t)size);
    CU_ASSERT_EQUAL(sl.next_offset, 5);
    br_log_slice_release(&sl);
    CU_ASSERT_EQUAL(br_log_read(log, 5, 7, 1 << 20, true, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, 0);
    CU_ASSERT_EQUAL(sl.next_offset, 5);
    CU_ASSERT_PTR_NULL(sl.file);
    br_log_close(log);
    cleanup_dir();
}

static void test_read_respects_max_bytes(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL(br_log_read(log, 0, INT64_MAX, (int32_t)(2 * size + 1), false, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, (int32_t)(2 * size));
    CU_ASSERT_EQUAL(sl.next_offset, 10);
    br_log_slice_release(&sl);
    CU_ASSERT_EQUAL(br_log_read(log, 0, INT64_MAX, (int32_t)(3 * size), false, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, (int32_t)(3 * size));
    br_log_slice_release(&sl);
    CU_ASSERT_EQUAL(br_log_read(log, 0, INT64_MAX, (int32_t)(size - 1), false, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, 0);
    br_log_slice_release(&sl);
    br_log_close(log);
    cleanup_dir();
}

static void test_read_min_one_returns_oversized_first_batch(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL(br_log_read(log, 5, INT64_MAX, 10, true, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, (int32_t)size);
    CU_ASSERT_EQUAL(sl.first_offset, 5);
    CU_ASSERT_EQUAL(sl.next_offset, 10);
    br_log_slice_release(&sl);
    CU_ASSERT_EQUAL(br_log_read(log, 5, INT64_MAX, 0, true, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, (int32_t)size);
    br_log_slice_release(&sl);
    br_log_close(log);
    cleanup_dir();
}

static void test_read_at_max_offset_is_empty(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL(br_log_read(log, 15, INT64_MAX, 1 << 20, true, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, 0);
    CU_ASSERT_EQUAL(sl.next_offset, 15);
    CU_ASSERT_EQUAL(br_log_read(log, 10, 10, 1 << 20, true, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, 0);
    br_log_close(log);
    cleanup_dir();
}

static void test_read_out_of_range(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL(br_log_read(log, -1, INT64_MAX, 100, true, &sl), KP_ERR_OFFSET_OUT_OF_RANGE);
    CU_ASSERT_EQUAL(br_log_read(log, 16, INT64_MAX, 100, true, &sl), KP_ERR_OFFSET_OUT_OF_RANGE);
    CU_ASSERT_PTR_NULL(sl.file);
    CU_ASSERT_EQUAL(br_log_set_start_offset(log, 6), 0);
    CU_ASSERT_EQUAL(br_log_read(log, 5, INT64_MAX, 100, true, &sl), KP_ERR_OFFSET_OUT_OF_RANGE);
    CU_ASSERT_EQUAL(br_log_read(log, 6, INT64_MAX, 100, true, &sl), 0);
    CU_ASSERT_EQUAL(sl.first_offset, 5);
    br_log_slice_release(&sl);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- segments */

static void test_roll_by_size(void)
{
    setup_dir();
    size_t len = 0;
    uint8_t *probe = make_batch(2, TS0, 100, &len);
    kp_free(probe);
    struct br_log_config c = cfg_with((int64_t)(3 * len), 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 10; i++) {
        CU_ASSERT_EQUAL(append_sized(log, 2, TS0, 100, 0, NOW0, NULL), (int64_t)2 * i);
    }
    CU_ASSERT_EQUAL(br_log_segment_count(log), 4);
    for (int64_t base = 0; base < 20; base += 6) {
        CU_ASSERT_EQUAL(seg_size(base, "log"), base < 18 ? (int64_t)(3 * len) : (int64_t)len);
    }
    struct br_log_segment_info info;
    CU_ASSERT_EQUAL(br_log_segment_info(log, 3, &info), 0);
    CU_ASSERT_EQUAL(info.base_offset, 18);
    CU_ASSERT_TRUE(info.active);
    CU_ASSERT_EQUAL(info.max_timestamp, TS0 + 1);
    CU_ASSERT_EQUAL(br_log_size_bytes(log), (int64_t)(10 * len));
    CU_ASSERT_EQUAL(check_readable(log, 0), 10);
    br_log_close(log);
    cleanup_dir();
}

static void test_roll_by_time(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    c.segment_ms = 1000;
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    (void)append_sized(log, 1, TS0, 10, 0, NOW0, NULL);
    (void)append_sized(log, 1, TS0, 10, 0, NOW0 + 500, NULL);
    (void)append_sized(log, 1, TS0, 10, 0, NOW0 + 1000, NULL);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 1);
    (void)append_sized(log, 1, TS0, 10, 0, NOW0 + 1001, NULL);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 2);
    CU_ASSERT_EQUAL(seg_size(3, "log") > 0, true);
    (void)append_sized(log, 1, TS0, 10, 0, NOW0 + 1500, NULL);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 2);
    (void)append_sized(log, 1, TS0, 10, 0, NOW0 + 2002, NULL);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 3);
    CU_ASSERT_EQUAL(check_readable(log, 0), 6);
    br_log_close(log);
    cleanup_dir();
}

static void test_roll_when_index_full(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 0);
    c.max_index_bytes = 24; /* 3 offset entries, 2 time entries */
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 9; i++) {
        (void)append_sized(log, 1, TS0 + i, 10, 0, NOW0, NULL);
    }
    /* per segment: the first batch is not indexed, the next two fill the
     * time index */
    CU_ASSERT_EQUAL(br_log_segment_count(log), 3);
    CU_ASSERT_EQUAL(seg_size(0, "index"), 16);
    CU_ASSERT_EQUAL(seg_size(0, "timeindex"), 24);
    CU_ASSERT_EQUAL(seg_size(3, "index"), 16);
    CU_ASSERT_EQUAL(check_readable(log, 0), 9);
    br_log_close(log);
    cleanup_dir();
}

/* Every offset must be found in the batch that holds it. */
static void check_every_offset(struct br_log *log)
{
    int64_t leo = br_log_end_offset(log);
    for (int64_t o = br_log_start_offset(log); o < leo; o++) {
        struct br_log_slice sl;
        int rc = br_log_read(log, o, leo, 1, true, &sl);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT(sl.len > 0);
        CU_ASSERT(sl.first_offset <= o && o < sl.next_offset);
        if (sl.len > 0) {
            uint8_t *b = slice_bytes(&sl);
            struct kp_batch_header h;
            size_t size = 0;
            CU_ASSERT_EQUAL(kp_batch_parse_lenient(b, (size_t)sl.len, &h, &size), 0);
            CU_ASSERT_EQUAL(size, (size_t)sl.len);
            CU_ASSERT_EQUAL(h.BaseOffset, sl.first_offset);
            free(b);
        }
        br_log_slice_release(&sl);
    }
}

static void test_index_lookup_across_many_segments(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(4096, 256);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 400; i++) {
        (void)append_sized(log, 1 + i % 3, TS0 + i, 40 + (size_t)(i % 7) * 10, 0, NOW0, NULL);
    }
    CU_ASSERT(br_log_segment_count(log) > 20);
    CU_ASSERT(seg_size(0, "index") > 0);
    check_every_offset(log);
    int64_t leo = br_log_end_offset(log);
    size_t nseg = br_log_segment_count(log);
    br_log_close(log);

    log = open_log(&c, leo);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), leo);
    CU_ASSERT_EQUAL(br_log_segment_count(log), nseg);
    check_every_offset(log);
    CU_ASSERT_EQUAL(check_readable(log, 0), 400);
    br_log_close(log);
    cleanup_dir();
}

static void test_reopen_after_close_keeps_leo_and_data(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(2000, 300);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 30; i++) {
        (void)append_sized(log, 2, TS0 + i, 60, 0, NOW0, NULL);
    }
    CU_ASSERT_EQUAL(br_log_flush(log), 0);
    int64_t leo = br_log_end_offset(log);
    int64_t bytes = br_log_size_bytes(log);
    size_t nseg = br_log_segment_count(log);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL_FATAL(br_log_read(log, 13, INT64_MAX, 1 << 20, false, &sl), 0);
    uint8_t *before = slice_bytes(&sl);
    int32_t before_len = sl.len;
    br_log_slice_release(&sl);
    br_log_close(log);

    log = open_log(&c, leo);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), leo);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), leo);
    CU_ASSERT_EQUAL(br_log_size_bytes(log), bytes);
    CU_ASSERT_EQUAL(br_log_segment_count(log), nseg);
    CU_ASSERT_EQUAL_FATAL(br_log_read(log, 13, INT64_MAX, 1 << 20, false, &sl), 0);
    CU_ASSERT_EQUAL_FATAL(sl.len, before_len);
    uint8_t *after = slice_bytes(&sl);
    CU_ASSERT_EQUAL(memcmp(before, after, (size_t)before_len), 0);
    br_log_slice_release(&sl);
    free(before);
    free(after);
    CU_ASSERT_EQUAL(append(log, 1, TS0), leo);
    CU_ASSERT_EQUAL(check_readable(log, 0), 31);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- recovery */

static void expect_ts(struct br_log *log, int64_t ts, int64_t offset, int64_t timestamp);

static void test_recovery_truncates_garbage_appended_to_newest_segment(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 5; i++) {
        (void)append(log, 3, TS0 + i);
    }
    int64_t leo = br_log_end_offset(log);
    int64_t size = seg_size(0, "log");
    br_log_close(log);

    char path[256];
    seg_path(0, "log", path, sizeof path);
    uint8_t garbage[100];
    memset(garbage, 0xab, sizeof garbage);
    append_to_file(path, garbage, sizeof garbage);

    /* a clean stop: the recovery point is the LEO, the tail is still checked */
    log = open_log(&c, leo);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), leo);
    CU_ASSERT_EQUAL(seg_size(0, "log"), size);
    CU_ASSERT_EQUAL(append(log, 2, TS0), leo);
    CU_ASSERT_EQUAL(check_readable(log, 0), 6);
    br_log_close(log);
    cleanup_dir();
}

static void test_recovery_truncates_zeros_appended_to_newest_segment(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 3; i++) {
        (void)append(log, 1, TS0 + i);
    }
    int64_t size = seg_size(0, "log");
    br_log_close(log);
    char path[256];
    seg_path(0, "log", path, sizeof path);
    uint8_t zeros[4096] = {0}; /* a file extended by a crash */
    append_to_file(path, zeros, sizeof zeros);
    log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 3);
    CU_ASSERT_EQUAL(seg_size(0, "log"), size);
    br_log_close(log);
    cleanup_dir();
}

static void test_recovery_truncates_segment_cut_mid_batch(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    size_t len = 0;
    for (int i = 0; i < 5; i++) {
        (void)append_sized(log, 4, TS0 + i, 30, 0, NOW0, &len);
    }
    br_log_close(log);
    char path[256];
    seg_path(0, "log", path, sizeof path);
    CU_ASSERT_EQUAL(truncate(path, (off_t)(5 * len - 10)), 0);

    log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 16);
    CU_ASSERT_EQUAL(seg_size(0, "log"), (int64_t)(4 * len));
    CU_ASSERT_EQUAL(append(log, 1, TS0), 16);
    CU_ASSERT_EQUAL(check_readable(log, 0), 5);
    br_log_close(log);

    /* a cut inside the 12-byte prefix of a batch */
    CU_ASSERT_EQUAL(truncate(path, (off_t)(4 * len + 5)), 0);
    log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 16);
    CU_ASSERT_EQUAL(seg_size(0, "log"), (int64_t)(4 * len));
    br_log_close(log);
    cleanup_dir();
}

static void test_recovery_bad_crc_in_middle_of_last_segment_truncates_there(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 100);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    size_t len = 0;
    for (int i = 0; i < 10; i++) {
        (void)append_sized(log, 2, TS0 + i, 30, 0, NOW0, &len);
    }
    br_log_close(log);
    char path[256];
    seg_path(0, "log", path, sizeof path);
    flip_byte(path, (int64_t)(5 * len + 70)); /* inside batch 5's records */

    log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 10);
    CU_ASSERT_EQUAL(seg_size(0, "log"), (int64_t)(5 * len));
    CU_ASSERT_EQUAL(check_readable(log, 0), 5);
    /* the index lost its entries past the cut */
    int64_t isize = seg_size(0, "index");
    CU_ASSERT(isize >= 0 && isize <= (int64_t)4 * 8);
    CU_ASSERT_EQUAL(append(log, 1, TS0), 10);
    br_log_close(log);
    cleanup_dir();
}

/* Four segments of three 2-record batches: bases 0, 6, 12, 18. */
static struct br_log_config four_segments(size_t *len)
{
    uint8_t *probe = make_batch(2, TS0, 30, len);
    kp_free(probe);
    struct br_log_config c = cfg_with((int64_t)(3 * *len), 100);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 12; i++) {
        (void)append_sized(log, 2, TS0 + i, 30, 0, NOW0, NULL);
    }
    CU_ASSERT_EQUAL(br_log_segment_count(log), 4);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 24);
    br_log_close(log);
    return c;
}

static void test_recovery_bad_crc_in_earlier_segment_removes_later_segments(void)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    char path[256];
    seg_path(6, "log", path, sizeof path);
    flip_byte(path, (int64_t)(len + 70)); /* second batch of segment 6 */

    /* segment 0 was flushed, everything from 6 on was not */
    struct br_log *log = open_log(&c, 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 8);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 2);
    CU_ASSERT_EQUAL(seg_size(6, "log"), (int64_t)len);
    CU_ASSERT_EQUAL(seg_size(12, "log"), -1);
    CU_ASSERT_EQUAL(seg_size(12, "index"), -1);
    CU_ASSERT_EQUAL(seg_size(18, "timeindex"), -1);
    CU_ASSERT_EQUAL(check_readable(log, 0), 4);
    CU_ASSERT_EQUAL(append(log, 2, TS0), 8);
    br_log_close(log);
    cleanup_dir();
}

static void test_recovery_trusts_segments_below_recovery_point(void)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    char path[256];
    seg_path(0, "log", path, sizeof path);
    flip_byte(path, 70); /* damage in a flushed segment is not looked for */
    struct br_log *log = open_log(&c, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 24);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 4);
    br_log_close(log);
    /* below the recovery point it is */
    log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 0);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 1);
    br_log_close(log);
    cleanup_dir();
}

static void test_recovery_keeps_empty_segment_left_by_a_roll(void)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    char path[256];
    seg_path(24, "log", path, sizeof path);
    write_at(path, 0, "", 0); /* created, crashed before the first write */
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 5);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 24);
    size_t one = 0;
    CU_ASSERT_EQUAL(append_sized(log, 1, TS0, 16, 0, NOW0, &one), 24);
    CU_ASSERT_EQUAL(seg_size(24, "log"), (int64_t)one);
    br_log_close(log);
    cleanup_dir();
}

/* Index files of every segment, concatenated, for comparison. */
static void snapshot_indexes(const int64_t *bases, size_t n, uint8_t **out, size_t *len)
{
    size_t total = 0;
    uint8_t *all = NULL;
    for (size_t i = 0; i < n; i++) {
        static const char *const sfx[] = {"index", "timeindex"};
        for (size_t j = 0; j < 2; j++) {
            char path[256];
            size_t flen = 0;
            seg_path(bases[i], sfx[j], path, sizeof path);
            uint8_t *f = read_file(path, &flen);
            uint8_t *grown = realloc(all, total + flen + 1);
            if (f == NULL || grown == NULL) {
                abort(); /* every index file exists here */
            }
            all = grown;
            memcpy(all + total, f, flen);
            total += flen;
            free(f);
        }
    }
    *out = all;
    *len = total;
}

static const int64_t four_bases[] = {0, 6, 12, 18};

/* Damages an index with `damage`, reopens, and expects the indexes rebuilt
 * byte for byte and no data lost. */
static void check_index_rebuilt(void (*damage)(void), int64_t recovery_point)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    uint8_t *before = NULL;
    size_t before_len = 0;
    snapshot_indexes(four_bases, 4, &before, &before_len);
    CU_ASSERT(before_len > 0);
    damage();
    struct br_log *log = open_log(&c, recovery_point);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 24);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 4);
    br_log_close(log);
    uint8_t *after = NULL;
    size_t after_len = 0;
    snapshot_indexes(four_bases, 4, &after, &after_len);
    CU_ASSERT_EQUAL(after_len, before_len);
    if (after_len == before_len) {
        CU_ASSERT_EQUAL(memcmp(before, after, before_len), 0);
    }
    free(before);
    free(after);
    log = open_log(&c, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    check_every_offset(log);
    br_log_close(log);
    cleanup_dir();
}

static void damage_delete_index(void)
{
    char path[256];
    seg_path(6, "index", path, sizeof path);
    CU_ASSERT_EQUAL(unlink(path), 0);
}

static void damage_delete_timeindex(void)
{
    char path[256];
    seg_path(12, "timeindex", path, sizeof path);
    CU_ASSERT_EQUAL(unlink(path), 0);
}

static void damage_tear_index(void)
{
    char path[256];
    seg_path(6, "index", path, sizeof path);
    int64_t size = file_size(path);
    CU_ASSERT_FATAL(size >= 8);
    CU_ASSERT_EQUAL(truncate(path, (off_t)(size - 3)), 0);
}

static void damage_swap_index_entries(void)
{
    char path[256];
    seg_path(0, "index", path, sizeof path);
    size_t n = 0;
    uint8_t *f = read_file(path, &n);
    CU_ASSERT_FATAL(f != NULL && n >= 16);
    uint8_t tmp[8];
    memcpy(tmp, f, 8);
    memcpy(f, f + 8, 8);
    memcpy(f + 8, tmp, 8);
    write_at(path, 0, f, n);
    free(f);
}

static void damage_index_position_beyond_segment(void)
{
    char path[256];
    seg_path(6, "index", path, sizeof path);
    int64_t size = file_size(path);
    CU_ASSERT_FATAL(size >= 8);
    uint8_t pos[4];
    kp_store_be32(pos, 1000000);
    write_at(path, size - 4, pos, 4);
}

static void damage_index_entry_pointing_mid_batch(void)
{
    /* the last segment's last entry, still increasing and inside the file */
    char path[256];
    seg_path(18, "index", path, sizeof path);
    int64_t size = file_size(path);
    CU_ASSERT_FATAL(size >= 8);
    size_t n = 0;
    uint8_t *f = read_file(path, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    uint32_t pos = kp_load_be32(f + size - 4);
    kp_store_be32(f + size - 4, pos + 1);
    write_at(path, 0, f, n);
    free(f);
}

static void damage_time_index_non_increasing(void)
{
    char path[256];
    seg_path(6, "timeindex", path, sizeof path);
    uint8_t zero[8] = {0};
    int64_t size = file_size(path);
    CU_ASSERT_FATAL(size >= 24);
    write_at(path, 12, zero, 8);
}

static void test_recovery_rebuilds_missing_index(void)
{
    check_index_rebuilt(damage_delete_index, 24);
}

static void test_recovery_rebuilds_missing_time_index(void)
{
    check_index_rebuilt(damage_delete_timeindex, 24);
}

static void test_recovery_rebuilds_torn_index(void)
{
    check_index_rebuilt(damage_tear_index, 24);
}

static void test_recovery_rebuilds_non_monotonic_index(void)
{
    check_index_rebuilt(damage_swap_index_entries, 24);
}

static void test_recovery_rebuilds_index_with_position_beyond_segment(void)
{
    check_index_rebuilt(damage_index_position_beyond_segment, 24);
}

static void test_recovery_rebuilds_index_entry_not_matching_its_batch(void)
{
    check_index_rebuilt(damage_index_entry_pointing_mid_batch, 24);
}

static void test_recovery_rebuilds_non_increasing_time_index(void)
{
    check_index_rebuilt(damage_time_index_non_increasing, 24);
}

static void test_recovery_rebuilds_indexes_after_unclean_stop(void)
{
    check_index_rebuilt(damage_tear_index, 0);
}

static void test_recovery_rebuilt_time_index_keeps_final_entry(void)
{
    setup_dir();
    size_t len = 0;
    uint8_t *probe = make_batch(2, TS0, 30, &len);
    kp_free(probe);
    /* no index entries inside a segment: its time index holds only the
     * entry a roll adds for the segment's largest timestamp */
    struct br_log_config c = cfg_with((int64_t)(3 * len), 1 << 20);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 9; i++) {
        (void)append_sized(log, 2, TS0 + (int64_t)10 * i, 30, 0, NOW0, NULL);
    }
    br_log_close(log);
    char path[256];
    seg_path(6, "timeindex", path, sizeof path);
    size_t n = 0;
    uint8_t *before = read_file(path, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(before);
    CU_ASSERT_EQUAL_FATAL(n, 12);
    CU_ASSERT_EQUAL(kp_load_be64(before), (uint64_t)(TS0 + 51));
    CU_ASSERT_EQUAL(unlink(path), 0);
    log = open_log(&c, 18);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    size_t m = 0;
    uint8_t *after = read_file(path, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(after);
    CU_ASSERT_EQUAL(m, 12);
    if (m == 12) {
        CU_ASSERT_EQUAL(memcmp(before, after, 12), 0);
    }
    expect_ts(log, TS0 + 51, 11, TS0 + 51);
    expect_ts(log, TS0 + 52, 12, TS0 + 60);
    free(before);
    free(after);
    br_log_close(log);
    cleanup_dir();
}

static void test_recovery_removes_orphan_index_files(void)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    char path[256];
    seg_path(99999, "index", path, sizeof path);
    write_at(path, 0, "12345678", 8);
    struct br_log *log = open_log(&c, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(file_size(path), -1);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 4);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- time lookups */

static void expect_ts(struct br_log *log, int64_t ts, int64_t offset, int64_t timestamp)
{
    int64_t o = 0;
    int64_t t = 0;
    CU_ASSERT_EQUAL(br_log_offset_for_timestamp(log, ts, &o, &t), 0);
    CU_ASSERT_EQUAL(o, offset);
    CU_ASSERT_EQUAL(t, timestamp);
    if (o != offset || t != timestamp) {
        fprintf(stderr,
                "\n  ts %" PRId64 ": got (%" PRId64 ", %" PRId64 "), want (%" PRId64 ", %" PRId64
                ")\n",
                ts, o, t, offset, timestamp);
    }
}

static void test_offset_for_timestamp_finds_first_record_at_or_after(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 0);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    static const int codecs[] = {KP_CODEC_NONE, KP_CODEC_GZIP, KP_CODEC_LZ4};
    for (int i = 0; i < 3; i++) {
        size_t len = 0;
        uint8_t *b = make_batch_codec(codecs[i], 5, (int64_t)1000 * (i + 1), 20, &len);
        int64_t base = 0;
        CU_ASSERT_EQUAL(br_log_append(log, b, len, 0, NOW0, &base), 0);
        kp_free(b);
    }
    expect_ts(log, 0, 0, 1000);
    expect_ts(log, 1000, 0, 1000);
    expect_ts(log, 1002, 2, 1002);
    expect_ts(log, 1005, 5, 2000);
    expect_ts(log, 2003, 8, 2003);
    expect_ts(log, 3004, 14, 3004);
    expect_ts(log, 3005, -1, -1);
    br_log_close(log);
    cleanup_dir();
}

static void test_offset_for_timestamp_across_segments(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(2048, 200);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    /* batch i: 2 records at 10 * i and 10 * i + 1, offsets 2i, 2i + 1 */
    for (int i = 0; i < 200; i++) {
        (void)append_sized(log, 2, (int64_t)10 * i, 40, 0, NOW0, NULL);
    }
    CU_ASSERT(br_log_segment_count(log) > 5);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 200; i += 7) {
            int64_t t = (int64_t)10 * i;
            int64_t o = (int64_t)2 * i;
            expect_ts(log, t, o, t);
            expect_ts(log, t + 1, o + 1, t + 1);
            expect_ts(log, t + 2, i + 1 < 200 ? o + 2 : -1, i + 1 < 200 ? t + 10 : -1);
        }
        expect_ts(log, 1991, 399, 1991);
        expect_ts(log, 1992, -1, -1);
        br_log_close(log);
        log = open_log(&c, 400); /* trusted segments: their time indexes answer */
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    }
    br_log_close(log);
    cleanup_dir();
}

static void test_offset_for_timestamp_respects_log_start(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    CU_ASSERT_EQUAL(br_log_set_start_offset(log, 3), 0);
    expect_ts(log, 0, 3, TS0 + 3);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- truncation */

static void test_truncate_to_drops_whole_batches(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    CU_ASSERT_EQUAL(br_log_flush(log), 0);
    CU_ASSERT_EQUAL(br_log_truncate_to(log, 20), 0); /* beyond the LEO: nothing */
    CU_ASSERT_EQUAL(br_log_end_offset(log), 15);
    CU_ASSERT_EQUAL(br_log_truncate_to(log, 12), 0); /* the batch 10-14 straddles */
    CU_ASSERT_EQUAL(br_log_end_offset(log), 10);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 10);
    CU_ASSERT_EQUAL(seg_size(0, "log"), (int64_t)(2 * size));
    CU_ASSERT_EQUAL(br_log_size_bytes(log), (int64_t)(2 * size));
    CU_ASSERT_EQUAL(br_log_truncate_to(log, 5), 0);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 5);
    CU_ASSERT_EQUAL(append(log, 2, TS0), 5);
    CU_ASSERT_EQUAL(check_readable(log, 0), 2);
    CU_ASSERT_EQUAL(br_log_truncate_to(log, -1), KP_E_INVALID_ARG);
    br_log_close(log);
    cleanup_dir();
}

static void test_truncate_to_across_segments(void)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    struct br_log *log = open_log(&c, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_truncate_to(log, 9), 0);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 8);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 2);
    CU_ASSERT_EQUAL(seg_size(12, "log"), -1);
    CU_ASSERT_EQUAL(seg_size(18, "log"), -1);
    CU_ASSERT_EQUAL(seg_size(6, "log"), (int64_t)len);
    CU_ASSERT_EQUAL(br_log_truncate_to(log, 6), 0);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 1);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 6);
    CU_ASSERT_EQUAL(append(log, 2, TS0), 6);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 2);
    br_log_close(log);
    log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 8);
    check_every_offset(log);
    br_log_close(log);
    cleanup_dir();
}

static void test_truncate_below_start_restarts_log(void)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    struct br_log *log = open_log(&c, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_delete_segments_before(log, 12, NULL), 0);
    CU_ASSERT_EQUAL(br_log_start_offset(log), 12);
    CU_ASSERT_EQUAL(br_log_truncate_to(log, 3), 0);
    CU_ASSERT_EQUAL(br_log_start_offset(log), 3);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 3);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 1);
    CU_ASSERT_EQUAL(seg_size(3, "log"), 0);
    CU_ASSERT_EQUAL(seg_size(12, "log"), -1);
    CU_ASSERT_EQUAL(append(log, 1, TS0), 3);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- retention */

static void test_delete_segments_before_moves_start_offset(void)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    struct br_log *log = open_log(&c, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    size_t deleted = 99;
    CU_ASSERT_EQUAL(br_log_delete_segments_before(log, 11, &deleted), 0);
    CU_ASSERT_EQUAL(deleted, 1); /* segment 6 still holds 6-11 */
    CU_ASSERT_EQUAL(br_log_start_offset(log), 6);
    CU_ASSERT_EQUAL(br_log_delete_segments_before(log, 12, &deleted), 0);
    CU_ASSERT_EQUAL(deleted, 1);
    CU_ASSERT_EQUAL(br_log_start_offset(log), 12);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 2);
    CU_ASSERT_EQUAL(br_log_size_bytes(log), (int64_t)(6 * len));
    CU_ASSERT_EQUAL(seg_size(0, "log"), -1);
    CU_ASSERT_EQUAL(seg_size(6, "index"), -1);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL(br_log_read(log, 11, INT64_MAX, 100, true, &sl), KP_ERR_OFFSET_OUT_OF_RANGE);
    CU_ASSERT_EQUAL(check_readable(log, 12), 6);
    br_log_close(log);
    log = open_log(&c, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_start_offset(log), 12);
    br_log_close(log);
    cleanup_dir();
}

static void test_delete_segments_before_leo_rolls_active_segment(void)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    struct br_log *log = open_log(&c, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    size_t deleted = 0;
    CU_ASSERT_EQUAL(br_log_delete_segments_before(log, 24, &deleted), 0);
    CU_ASSERT_EQUAL(deleted, 4);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 1);
    CU_ASSERT_EQUAL(br_log_start_offset(log), 24);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 24);
    CU_ASSERT_EQUAL(br_log_size_bytes(log), 0);
    CU_ASSERT_EQUAL(seg_size(24, "log"), 0);
    CU_ASSERT_EQUAL(append(log, 1, TS0), 24);
    br_log_close(log);
    cleanup_dir();
}

static void test_slice_keeps_deleted_segment_readable(void)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    struct br_log *log = open_log(&c, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL_FATAL(br_log_read(log, 0, INT64_MAX, 1 << 20, false, &sl), 0);
    CU_ASSERT_EQUAL(sl.len, (int32_t)(3 * len));
    CU_ASSERT_EQUAL(br_log_delete_segments_before(log, 12, NULL), 0);
    CU_ASSERT_EQUAL(seg_size(0, "log"), -1);
    uint8_t *b = slice_bytes(&sl); /* still there for sendfile */
    struct kp_batch_header h;
    size_t size = 0;
    CU_ASSERT_EQUAL(kp_batch_parse(b, (size_t)sl.len, &h, &size), 0);
    CU_ASSERT_EQUAL(h.BaseOffset, 0);
    free(b);
    br_log_slice_release(&sl);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- descriptors */

/* Descriptors the process has open. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    CU_ASSERT_PTR_NOT_NULL(d);
    if (d == NULL) {
        return -1000; /* fails every comparison that uses it */
    }
    int n = 0;
    const struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] != '.') {
            n++;
        }
    }
    (void)closedir(d);
    return n - 1; /* the directory stream's own */
}

static void part_dir(int i, char *buf, size_t cap)
{
    (void)snprintf(buf, cap, "%s/t-%d", root, i);
}

/* The value length of the first record at offset `offset`: which file a
 * read came from (each test log writes values of its own length). */
static int first_value_len(struct br_log *log, int64_t offset)
{
    struct br_log_slice sl;
    CU_ASSERT_EQUAL_FATAL(br_log_read(log, offset, INT64_MAX, 1 << 20, false, &sl), 0);
    CU_ASSERT_FATAL(sl.len > 0);
    uint8_t *b = slice_bytes(&sl);
    struct kp_batch_iter it;
    struct kp_record rec;
    struct kp_batch_header h;
    size_t size = 0;
    int len = -1;
    if (kp_batch_parse(b, (size_t)sl.len, &h, &size) == 0 &&
        kp_batch_iter_init(&it, b, size, 1 << 20) == 0) {
        if (kp_batch_iter_next(&it, &rec) == 0) {
            len = (int)rec.Value.len;
        }
        kp_batch_iter_free(&it);
    }
    free(b);
    br_log_slice_release(&sl);
    return len;
}

/* A log of one segment holds one descriptor, its .log: none for its
 * directory, none for its indexes, whose entries reach the files at the
 * flush (and a close). */
static void test_log_holds_one_descriptor(void)
{
    setup_dir();
    int before = open_fds();
    struct br_log_config c =
        cfg_with(1 << 20, 0); /* an index entry for every batch but the first */
    struct br_log *log = open_log_in(pdir, &c, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 3; i++) {
        (void)append(log, 2, TS0 + i);
    }
    CU_ASSERT_EQUAL(open_fds() - before, 1);
    CU_ASSERT_EQUAL(seg_size(0, "index"), 0); /* appends do not write the indexes */
    CU_ASSERT_EQUAL(seg_size(0, "timeindex"), 0);
    CU_ASSERT_EQUAL(br_log_flush(log), 0);
    CU_ASSERT_EQUAL(seg_size(0, "index"), INT64_C(2 * 8));
    CU_ASSERT_EQUAL(seg_size(0, "timeindex"), INT64_C(2 * 12));
    CU_ASSERT_EQUAL(open_fds() - before, 1);
    br_log_close(log);
    CU_ASSERT_EQUAL(open_fds(), before);
    CU_ASSERT_EQUAL(seg_size(0, "timeindex"), INT64_C(2 * 12)); /* the last entry has the largest */
    cleanup_dir();
}

#define NLOGS 12

/* Twelve partitions under a budget of three files: never more than three
 * open, whatever is appended and read; every log reads back its own
 * records after its file was closed and reopened, takes appends after it,
 * and has them all after a close and an open. */
static void test_budget_bounds_descriptors_of_many_logs(void)
{
    setup_dir();
    struct br_filecache *fc = NULL;
    CU_ASSERT_EQUAL_FATAL(br_filecache_new(3, &fc), 0);
    struct br_log_config c = cfg_with(1 << 20, 0);
    struct br_log *logs[NLOGS];
    char dir[128];
    int before = open_fds();
    for (int i = 0; i < NLOGS; i++) {
        part_dir(i, dir, sizeof dir);
        logs[i] = open_log_in(dir, &c, 0, fc);
        CU_ASSERT_PTR_NOT_NULL_FATAL(logs[i]);
        for (int k = 0; k < 3; k++) {
            (void)append_sized(logs[i], 2, TS0 + k, (size_t)20 + (size_t)i, 0, NOW0, NULL);
        }
        CU_ASSERT(open_fds() - before <= 3);
    }
    CU_ASSERT_EQUAL(br_filecache_open_count(fc), 3);
    CU_ASSERT(br_filecache_evictions(fc) >= NLOGS - 3);
    for (int i = NLOGS; i-- > 0;) { /* oldest last: every read reopens */
        CU_ASSERT_EQUAL(check_readable(logs[i], 0), 3);
        CU_ASSERT_EQUAL(first_value_len(logs[i], 2), 20 + i);
        CU_ASSERT_EQUAL(append_sized(logs[i], 1, TS0 + 9, (size_t)20 + (size_t)i, 0, NOW0, NULL),
                        6);
        CU_ASSERT(open_fds() - before <= 3);
    }
    for (int i = 0; i < NLOGS; i++) {
        CU_ASSERT_EQUAL(br_log_flush(logs[i]), 0);
        br_log_close(logs[i]);
    }
    CU_ASSERT_EQUAL(br_filecache_open_count(fc), 0);
    CU_ASSERT_EQUAL(open_fds(), before);
    for (int i = 0; i < NLOGS; i++) {
        part_dir(i, dir, sizeof dir);
        logs[i] = open_log_in(dir, &c, 7, fc);
        CU_ASSERT_PTR_NOT_NULL_FATAL(logs[i]);
        CU_ASSERT(open_fds() - before <= 3);
    }
    for (int i = 0; i < NLOGS; i++) {
        CU_ASSERT_EQUAL(br_log_end_offset(logs[i]), 7);
        CU_ASSERT_EQUAL(check_readable(logs[i], 0), 4);
        CU_ASSERT_EQUAL(first_value_len(logs[i], 6), 20 + i);
        br_log_close(logs[i]);
    }
    CU_ASSERT_EQUAL(open_fds(), before);
    br_filecache_free(fc);
    cleanup_dir();
}

/* A fetch slice waiting to be sent keeps its file open when the budget
 * closes the segment: the eviction drops the cache's reference only; the
 * file closes when the slice goes, and the segment reopens for the next
 * read. */
static void test_slice_outlives_eviction_of_its_segment(void)
{
    setup_dir();
    struct br_filecache *fc = NULL;
    CU_ASSERT_EQUAL_FATAL(br_filecache_new(1, &fc), 0);
    struct br_log_config c = cfg_with(1 << 20, 4096);
    char dir[128];
    part_dir(0, dir, sizeof dir);
    struct br_log *a = open_log_in(dir, &c, 0, fc);
    part_dir(1, dir, sizeof dir);
    struct br_log *b = open_log_in(dir, &c, 0, fc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (int i = 0; i < 3; i++) {
        (void)append_sized(a, 2, TS0 + i, 40, 0, NOW0, NULL);
    }
    struct br_log_slice sl;
    CU_ASSERT_EQUAL_FATAL(br_log_read(a, 0, INT64_MAX, 1 << 20, false, &sl), 0);
    unsigned long evicted = br_filecache_evictions(fc);
    (void)append_sized(b, 1, TS0, 10, 0, NOW0, NULL); /* closes a's file in the cache */
    CU_ASSERT_EQUAL(br_filecache_evictions(fc), evicted + 1);
    CU_ASSERT_EQUAL(br_filecache_open_count(fc), 1);
    int during = open_fds();
    uint8_t *bytes = slice_bytes(&sl);
    size_t pos = 0;
    int batches = 0;
    while (pos < (size_t)sl.len) {
        struct kp_batch_header h;
        size_t size = 0;
        CU_ASSERT_EQUAL_FATAL(kp_batch_parse(bytes + pos, (size_t)sl.len - pos, &h, &size), 0);
        CU_ASSERT_EQUAL(h.BaseOffset, (int64_t)2 * batches);
        pos += size;
        batches++;
    }
    CU_ASSERT_EQUAL(batches, 3);
    free(bytes);
    br_log_slice_release(&sl);
    CU_ASSERT_EQUAL(open_fds(), during - 1); /* the slice held the last reference */
    CU_ASSERT_EQUAL(check_readable(a, 0), 3);
    CU_ASSERT_EQUAL(first_value_len(a, 4), 40);
    br_log_close(a);
    br_log_close(b);
    br_filecache_free(fc);
    cleanup_dir();
}

/* Runs fn with stderr sent to a file; returns how many times `needle`
 * appears in what it wrote. */
static int stderr_count(void (*fn)(void *), void *arg, const char *needle)
{
    char path[128];
    (void)snprintf(path, sizeof path, "%s/stderr.txt", root);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int saved = dup(2);
    CU_ASSERT_FATAL(fd >= 0 && saved >= 0);
    CU_ASSERT_FATAL(dup2(fd, 2) == 2);
    fn(arg);
    CU_ASSERT_FATAL(dup2(saved, 2) == 2);
    (void)close(saved);
    (void)close(fd);
    size_t len = 0;
    uint8_t *text = read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    text[len] = '\0';
    int n = 0;
    for (const char *p = (const char *)text; (p = strstr(p, needle)) != NULL; p++) {
        n++;
    }
    free(text);
    (void)unlink(path);
    return n;
}

static void read_and_append_fail(void *arg)
{
    struct br_log *log = arg;
    for (int i = 0; i < 3; i++) {
        struct br_log_slice sl;
        CU_ASSERT_EQUAL(br_log_read(log, 0, INT64_MAX, 1 << 20, false, &sl),
                        KP_ERR_KAFKA_STORAGE_ERROR);
        CU_ASSERT_PTR_NULL(sl.file);
        size_t len = 0;
        uint8_t *batch = make_batch(1, TS0, 16, &len);
        int64_t base = -1;
        CU_ASSERT_EQUAL(br_log_append(log, batch, len, 0, NOW0, &base), KP_ERR_KAFKA_STORAGE_ERROR);
        kp_free(batch);
    }
}

/* A segment file that vanished while the budget had it closed, or whose
 * name another file took, is a storage error of that log alone, logged
 * once; the other logs keep serving. */
static void test_vanished_segment_fails_its_log_only(void)
{
    setup_dir();
    struct br_filecache *fc = NULL;
    CU_ASSERT_EQUAL_FATAL(br_filecache_new(1, &fc), 0);
    struct br_log_config c = cfg_with(1 << 20, 4096);
    char dir[128];
    part_dir(0, dir, sizeof dir);
    struct br_log *a = open_log_in(dir, &c, 0, fc);
    part_dir(1, dir, sizeof dir);
    struct br_log *b = open_log_in(dir, &c, 0, fc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    (void)append_sized(a, 2, TS0, 30, 0, NOW0, NULL);
    (void)append_sized(b, 2, TS0, 31, 0, NOW0, NULL); /* a's file is closed now */
    char path[256];
    char moved[256];
    (void)snprintf(path, sizeof path, "%s/t-0/%020d.log", root, 0);
    (void)snprintf(moved, sizeof moved, "%s/moved.log", root);
    size_t len = 0;
    uint8_t *copy = read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    CU_ASSERT_EQUAL_FATAL(rename(path, moved), 0);

    CU_ASSERT_EQUAL(stderr_count(read_and_append_fail, a, "cannot reopen"), 1);
    CU_ASSERT_EQUAL(first_value_len(b, 0), 31);
    CU_ASSERT_EQUAL(append_sized(b, 1, TS0, 31, 0, NOW0, NULL), 2);

    /* the same bytes under the name are another file: still refused (the
     * moved file keeps its inode, so the copy has another) */
    write_at(path, 0, copy, len);
    free(copy);
    (void)append_sized(b, 1, TS0, 31, 0, NOW0, NULL);
    CU_ASSERT_EQUAL(stderr_count(read_and_append_fail, a, "another file has taken its name"), 1);
    CU_ASSERT_EQUAL(check_readable(b, 0), 3);

    /* the segment's own file back, but cut short: refused too */
    CU_ASSERT_EQUAL_FATAL(rename(moved, path), 0);
    CU_ASSERT_EQUAL_FATAL(truncate(path, (off_t)len - 1), 0);
    CU_ASSERT_EQUAL(stderr_count(read_and_append_fail, a, "shorter than the segment"), 1);
    /* and whole again: served again */
    CU_ASSERT_EQUAL_FATAL(truncate(path, (off_t)len), 0);
    CU_ASSERT_EQUAL(first_value_len(a, 0), 30);
    br_log_close(a);
    br_log_close(b);
    br_filecache_free(fc);
    cleanup_dir();
}

/* Out of descriptors (the process limit, below the budget): the opens
 * that fail with EMFILE close the coldest files and retry, so the logs
 * keep working at the price of reopens. */
static void test_out_of_descriptors_closes_coldest_files(void)
{
    setup_dir();
    struct br_filecache *fc = NULL;
    CU_ASSERT_EQUAL_FATAL(br_filecache_new(1000, &fc), 0);
    struct br_log_config c = cfg_with(1 << 20, 0);
    struct br_log *logs[NLOGS];
    char dir[128];
    struct rlimit saved;
    CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_NOFILE, &saved), 0);
    /* room for four more: a directory, an index and two .log files */
    int limit = open_fds() + 4;
    struct rlimit low = {(rlim_t)limit, saved.rlim_max};
    CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_NOFILE, &low), 0);
    for (int i = 0; i < NLOGS; i++) {
        part_dir(i, dir, sizeof dir);
        logs[i] = open_log_in(dir, &c, 0, fc);
        CU_ASSERT_PTR_NOT_NULL_FATAL(logs[i]);
        /* no leader epoch: the epoch checkpoint's writes need descriptors
         * beyond the cache's budget, which is what is tested here */
        (void)append_sized(logs[i], 2, TS0, (size_t)20 + (size_t)i, -1, NOW0, NULL);
        (void)append_sized(logs[i], 2, TS0, (size_t)20 + (size_t)i, -1, NOW0, NULL);
    }
    CU_ASSERT(br_filecache_evictions(fc) > 0);
    CU_ASSERT(br_filecache_open_count(fc) <= 4);
    CU_ASSERT(open_fds() <= limit);
    for (int i = 0; i < NLOGS; i++) {
        CU_ASSERT_EQUAL(check_readable(logs[i], 0), 2);
        CU_ASSERT_EQUAL(first_value_len(logs[i], 2), 20 + i);
        CU_ASSERT_EQUAL(br_log_flush(logs[i]), 0);
    }
    for (int i = 0; i < NLOGS; i++) {
        br_log_close(logs[i]);
    }
    CU_ASSERT_EQUAL(setrlimit(RLIMIT_NOFILE, &saved), 0);
    br_filecache_free(fc);
    cleanup_dir();
}

/* A start after a clean stop writes no index file: the final time entry the
 * close added is kept (it is what a seal would add), nothing is rebuilt. */
static void test_reopen_after_clean_close_writes_no_index(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096); /* no offset entry: the scan is whole */
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 4; i++) {
        (void)append(log, 2, TS0 + (int64_t)10 * (4 - i)); /* the first batch has the largest */
    }
    CU_ASSERT_EQUAL(br_log_flush(log), 0);
    br_log_close(log);
    char path[256];
    struct stat before[2];
    struct stat after[2];
    static const char *const idx[] = {"index", "timeindex"};
    for (int i = 0; i < 2; i++) {
        seg_path(0, idx[i], path, sizeof path);
        CU_ASSERT_EQUAL_FATAL(stat(path, &before[i]), 0);
    }
    CU_ASSERT_EQUAL(before[0].st_size, 0);
    CU_ASSERT_EQUAL(before[1].st_size, 12); /* the close's entry */
    log = open_log(&c, 8);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 2; i++) {
        seg_path(0, idx[i], path, sizeof path);
        CU_ASSERT_EQUAL_FATAL(stat(path, &after[i]), 0);
        CU_ASSERT_EQUAL(after[i].st_size, before[i].st_size);
        CU_ASSERT_EQUAL(after[i].st_mtim.tv_sec, before[i].st_mtim.tv_sec);
        CU_ASSERT_EQUAL(after[i].st_mtim.tv_nsec, before[i].st_mtim.tv_nsec);
    }
    int64_t off = -1;
    int64_t ts = -1;
    CU_ASSERT_EQUAL(br_log_offset_for_timestamp(log, TS0 + 40, &off, &ts), 0);
    CU_ASSERT_EQUAL(off, 0);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 8);
    br_log_close(log);
    cleanup_dir();
}

static void test_set_start_offset_moves_logical_start(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    CU_ASSERT_EQUAL(br_log_set_start_offset(log, 7), 0);
    CU_ASSERT_EQUAL(br_log_start_offset(log), 7);
    CU_ASSERT_EQUAL(br_log_set_start_offset(log, 3), 0); /* never backwards */
    CU_ASSERT_EQUAL(br_log_start_offset(log), 7);
    CU_ASSERT_EQUAL(br_log_set_start_offset(log, 16), KP_ERR_OFFSET_OUT_OF_RANGE);
    CU_ASSERT_EQUAL(br_log_set_start_offset(log, 15), 0);
    CU_ASSERT_EQUAL(br_log_start_offset(log), 15);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 1); /* files go with retention */
    size_t deleted = 0;
    CU_ASSERT_EQUAL(br_log_delete_segments_before(log, br_log_start_offset(log), &deleted), 0);
    CU_ASSERT_EQUAL(deleted, 1);
    CU_ASSERT_EQUAL(br_log_size_bytes(log), 0);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- flush */

static void test_flush_moves_recovery_point(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 0);
    CU_ASSERT_EQUAL(br_log_flush(log), 0);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 15);
    br_log_close(log);
    cleanup_dir();
}

static void test_flush_interval_messages_flushes(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    c.flush_interval_messages = 5;
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    (void)append(log, 3, TS0);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 0);
    (void)append(log, 3, TS0);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 6);
    br_log_close(log);
    cleanup_dir();
}

static void test_maybe_flush_after_interval_ms(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    c.flush_interval_ms = 100;
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    (void)append_sized(log, 2, TS0, 10, 0, 1000, NULL);
    (void)append_sized(log, 2, TS0, 10, 0, 1080, NULL);
    CU_ASSERT_EQUAL(br_log_maybe_flush(log, 1099), 0);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 0);
    CU_ASSERT_EQUAL(br_log_maybe_flush(log, 1100), 0);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 4);
    br_log_close(log);
    cleanup_dir();
}

/* The flush with its syncs on another thread: the recovery point moves to
 * the LEO the flush began at, not to what was appended meanwhile. */
static void *flush_thread(void *arg)
{
    br_log_flush_run(arg);
    return NULL;
}

static void run_on_thread(struct br_log_flush *f)
{
    pthread_t t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, flush_thread, f), 0);
    CU_ASSERT_EQUAL(pthread_join(t, NULL), 0);
}

/* Runs f on another thread, then ends it: it must succeed. */
static void finish_flush(struct br_log_flush *f)
{
    run_on_thread(f);
    CU_ASSERT_EQUAL(br_log_flush_end(f), 0);
}

static void test_flush_off_thread_moves_recovery_point(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    c.flush_interval_ms = 100;
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    (void)append_sized(log, 4, TS0, 10, 0, 1000, NULL);
    CU_ASSERT_FALSE(br_log_flush_due(log, 1099));
    CU_ASSERT_TRUE(br_log_flush_due(log, 1100));
    struct br_log_flush *f = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_flush_begin(log, 1100, &f), 0);
    /* one flush at a time */
    struct br_log_flush *g = NULL;
    CU_ASSERT_FALSE(br_log_flush_due(log, 5000));
    CU_ASSERT_EQUAL(br_log_flush_begin(log, 1100, &g), KP_E_INVALID_ARG);
    CU_ASSERT_PTR_NULL(g);
    (void)append_sized(log, 2, TS0, 10, 0, 1150, NULL); /* while it syncs */
    run_on_thread(f);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 0); /* not before it ends */
    CU_ASSERT_EQUAL(br_log_flush_end(f), 0);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 4);
    /* what came meanwhile has waited since the flush began, at least */
    CU_ASSERT_FALSE(br_log_flush_due(log, 1199));
    CU_ASSERT_TRUE(br_log_flush_due(log, 1200));
    CU_ASSERT_EQUAL_FATAL(br_log_flush_begin(log, 1200, &f), 0);
    finish_flush(f);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 6);
    CU_ASSERT_FALSE(br_log_flush_due(log, 100000));
    /* the data is there after a reopen that trusts the recovery point */
    br_log_close(log);
    log = open_log(&c, 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 6);
    br_log_close(log);
    cleanup_dir();
}

/* A roll makes a flush due without flush.ms, as Kafka's Log.roll flushes
 * the segment it closed: the recovery point follows the rolls. */
static void test_roll_makes_a_flush_due(void)
{
    setup_dir();
    size_t len = 0;
    uint8_t *probe = make_batch(2, TS0, 30, &len);
    kp_free(probe);
    struct br_log_config c = cfg_with((int64_t)(3 * len), 100); /* flush.ms: never */
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 3; i++) {
        (void)append_sized(log, 2, TS0, 30, 0, NOW0, NULL);
    }
    CU_ASSERT_EQUAL(br_log_segment_count(log), 1);
    CU_ASSERT_FALSE(br_log_flush_due(log, INT64_MAX / 2));
    (void)append_sized(log, 2, TS0, 30, 0, NOW0, NULL); /* rolls */
    CU_ASSERT_EQUAL(br_log_segment_count(log), 2);
    CU_ASSERT_TRUE(br_log_flush_due(log, NOW0));
    struct br_log_flush *f = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_flush_begin(log, NOW0, &f), 0);
    finish_flush(f);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 8);
    (void)append_sized(log, 2, TS0, 30, 0, NOW0, NULL);
    CU_ASSERT_FALSE(br_log_flush_due(log, NOW0)); /* no roll since */
    br_log_close(log);
    cleanup_dir();
}

/* A truncation while the flush is away: the recovery point stays below
 * the new end; a log closed while its flush is away lets it end alone. */
static void test_flush_off_thread_truncated_or_closed(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    c.flush_interval_ms = 0;
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    (void)append_sized(log, 3, TS0, 10, 0, 1000, NULL);
    (void)append_sized(log, 3, TS0, 10, 0, 1000, NULL);
    struct br_log_flush *f = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_flush_begin(log, 1000, &f), 0);
    CU_ASSERT_EQUAL(br_log_truncate_to(log, 3), 0);
    finish_flush(f);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 3);
    CU_ASSERT_TRUE(br_log_recovery_point(log) <= 3);
    CU_ASSERT_TRUE(br_log_flush_due(log, 1000));

    CU_ASSERT_EQUAL_FATAL(br_log_flush_begin(log, 1000, &f), 0);
    br_log_close(log);
    finish_flush(f);
    cleanup_dir();
}

/* A flush away carries the epoch cache it began with; a write of the
 * file on this thread meanwhile (newer) keeps it from landing after. */
static void test_flush_off_thread_writes_epochs(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    (void)append_sized(log, 2, TS0, 10, 1, NOW0, NULL);
    struct br_log_flush *f = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_flush_begin(log, NOW0, &f), 0);
    finish_flush(f);
    char text[256];
    char path[256];
    (void)snprintf(path, sizeof path, "%s/leader-epoch-checkpoint", pdir);
    size_t n = 0;
    uint8_t *file = read_file(path, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    CU_ASSERT_TRUE(n == 8 && memcmp(file, "0\n1\n1 0\n", 8) == 0);
    free(file);

    (void)append_sized(log, 2, TS0, 10, 2, NOW0, NULL);
    CU_ASSERT_EQUAL_FATAL(br_log_flush_begin(log, NOW0, &f), 0); /* carries 1 0, 2 2 */
    (void)append_sized(log, 2, TS0, 10, 3, NOW0, NULL);
    CU_ASSERT_EQUAL(br_log_flush(log), 0); /* writes 1 0, 2 2, 3 4 now */
    finish_flush(f);
    file = read_file(path, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    n = n < sizeof text - 1 ? n : sizeof text - 1;
    memcpy(text, file, n);
    text[n] = '\0';
    free(file);
    CU_ASSERT_STRING_EQUAL(text, "0\n3\n1 0\n2 2\n3 4\n");
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- leader epochs */

static void read_epoch_file(char *buf, size_t cap)
{
    char path[256];
    (void)snprintf(path, sizeof path, "%s/leader-epoch-checkpoint", pdir);
    size_t n = 0;
    uint8_t *f = read_file(path, &n);
    buf[0] = '\0';
    if (f != NULL) {
        n = n < cap - 1 ? n : cap - 1;
        memcpy(buf, f, n);
        buf[n] = '\0';
        free(f);
    }
}

static void test_epoch_checkpoint_round_trip(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_latest_epoch(log), -1);
    (void)append_sized(log, 2, TS0, 10, 1, NOW0, NULL);
    (void)append_sized(log, 2, TS0, 10, 1, NOW0, NULL);
    (void)append_sized(log, 3, TS0, 10, 3, NOW0, NULL);
    (void)append_sized(log, 1, TS0, 10, 3, NOW0, NULL);
    CU_ASSERT_EQUAL(br_log_latest_epoch(log), 3);
    char text[256];
    /* an append's new epoch is written by the flush that makes it durable */
    read_epoch_file(text, sizeof text);
    CU_ASSERT_PTR_NULL(strstr(text, "1 0\n"));
    CU_ASSERT_EQUAL(br_log_flush(log), 0);
    read_epoch_file(text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "0\n2\n1 0\n3 4\n");
    br_log_close(log);

    log = open_log(&c, 8);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_latest_epoch(log), 3);
    int32_t e = 0;
    int64_t end = 0;
    CU_ASSERT_EQUAL(br_log_end_offset_for_epoch(log, 1, &e, &end), 0);
    CU_ASSERT_EQUAL(e, 1);
    CU_ASSERT_EQUAL(end, 4);
    br_log_close(log);
    cleanup_dir();
}

static void expect_epoch_end(struct br_log *log, int32_t epoch, int32_t want_epoch,
                             int64_t want_end)
{
    int32_t e = 0;
    int64_t end = 0;
    CU_ASSERT_EQUAL(br_log_end_offset_for_epoch(log, epoch, &e, &end), 0);
    CU_ASSERT_EQUAL(e, want_epoch);
    CU_ASSERT_EQUAL(end, want_end);
}

static void test_end_offset_for_epoch_semantics(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    (void)append_sized(log, 30, TS0, 1, -1, NOW0, NULL); /* no epoch recorded */
    CU_ASSERT_EQUAL(br_log_latest_epoch(log), -1);
    expect_epoch_end(log, 0, -1, -1);
    CU_ASSERT_EQUAL(br_log_epoch_assign(log, 1, 0), 0);
    CU_ASSERT_EQUAL(br_log_epoch_assign(log, 3, 10), 0);
    CU_ASSERT_EQUAL(br_log_epoch_assign(log, 5, 20), 0);
    CU_ASSERT_EQUAL(br_log_epoch_assign(log, 5, 25), 0); /* same epoch, later: no change */
    expect_epoch_end(log, 5, 5, 30);                     /* the latest: the LEO */
    expect_epoch_end(log, 3, 3, 20);
    expect_epoch_end(log, 4, 3, 20); /* unknown in between: the prior epoch */
    expect_epoch_end(log, 1, 1, 10);
    expect_epoch_end(log, 0, 0, 0); /* below every epoch: the first start */
    expect_epoch_end(log, 6, -1, -1);
    expect_epoch_end(log, -1, -1, -1);
    CU_ASSERT_EQUAL(br_log_epoch_assign(log, -1, 0), KP_E_INVALID_ARG);
    /* a conflicting assignment removes what it contradicts */
    CU_ASSERT_EQUAL(br_log_epoch_assign(log, 4, 15), 0);
    char text[256];
    read_epoch_file(text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "0\n3\n1 0\n3 10\n4 15\n");
    br_log_close(log);
    cleanup_dir();
}

static void test_epochs_follow_truncation_and_retention(void)
{
    setup_dir();
    size_t len = 0;
    uint8_t *probe = make_batch(2, TS0, 30, &len);
    kp_free(probe);
    struct br_log_config c = cfg_with((int64_t)(3 * len), 100);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    for (int i = 0; i < 12; i++) {
        (void)append_sized(log, 2, TS0 + i, 30, 1 + i / 4, NOW0, NULL); /* epochs 1, 2, 3 */
    }
    char text[256];
    CU_ASSERT_EQUAL(br_log_flush(log), 0);
    read_epoch_file(text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "0\n3\n1 0\n2 8\n3 16\n");
    /* a truncation of the end is written at once (a stale file could
     * name a later epoch than the records that replace the cut ones) */
    CU_ASSERT_EQUAL(br_log_truncate_to(log, 16), 0);
    read_epoch_file(text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "0\n2\n1 0\n2 8\n");
    /* one of the start waits for the next flush (the next open trims a
     * file that still has it) */
    CU_ASSERT_EQUAL(br_log_delete_segments_before(log, 12, NULL), 0);
    read_epoch_file(text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "0\n2\n1 0\n2 8\n");
    CU_ASSERT_EQUAL(br_log_flush(log), 0);
    read_epoch_file(text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "0\n1\n2 12\n");
    br_log_close(log);
    cleanup_dir();
}

static void test_epoch_checkpoint_malformed_is_rebuilt(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    (void)append_sized(log, 2, TS0, 10, 2, NOW0, NULL);
    (void)append_sized(log, 2, TS0, 10, 4, NOW0, NULL);
    (void)append_sized(log, 2, TS0, 10, 4, NOW0, NULL);
    CU_ASSERT_EQUAL(br_log_flush(log), 0);
    br_log_close(log);
    char path[256];
    (void)snprintf(path, sizeof path, "%s/leader-epoch-checkpoint", pdir);
    CU_ASSERT_EQUAL(unlink(path), 0);
    write_at(path, 0, "0\n2\n4 0\n2 9\n", 12); /* epochs going backwards */
    log = open_log(&c, 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    char text[256];
    read_epoch_file(text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "0\n2\n2 0\n4 2\n");
    CU_ASSERT_EQUAL(br_log_latest_epoch(log), 4);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- iteration */

static void test_iter_walks_batch_headers_across_segments(void)
{
    setup_dir();
    size_t len = 0;
    struct br_log_config c = four_segments(&len);
    struct br_log *log = open_log(&c, 24);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    struct br_log_iter *it = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_iter_open(log, 0, &it), 0);
    struct kp_batch_header h;
    int64_t expect = 0;
    int n = 0;
    int rc = 0;
    for (;;) {
        rc = br_log_iter_next(it, &h);
        if (rc != 0) {
            break;
        }
        CU_ASSERT_EQUAL(h.BaseOffset, expect);
        CU_ASSERT_EQUAL(h.RecordCount, 2);
        expect = kp_batch_last_offset(&h) + 1;
        n++;
    }
    CU_ASSERT_EQUAL(rc, KP_ITER_END);
    CU_ASSERT_EQUAL(n, 12);
    /* appends after the end are seen */
    (void)append(log, 1, TS0);
    CU_ASSERT_EQUAL(br_log_iter_next(it, &h), 0);
    CU_ASSERT_EQUAL(h.BaseOffset, 24);
    br_log_iter_close(it);

    CU_ASSERT_EQUAL_FATAL(br_log_iter_open(log, 15, &it), 0);
    CU_ASSERT_EQUAL(br_log_iter_next(it, &h), 0);
    CU_ASSERT_EQUAL(h.BaseOffset, 14);
    br_log_iter_close(it);
    CU_ASSERT_EQUAL(br_log_iter_open(log, 26, &it), KP_ERR_OFFSET_OUT_OF_RANGE);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- replicas, deletion */

static void test_replica_append_keeps_offsets_and_epoch(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    size_t len = 0;
    uint8_t *b = make_batch(3, TS0, 10, &len);
    kp_batch_set_base_offset(b, 10);
    kp_batch_set_leader_epoch(b, 4);
    CU_ASSERT_EQUAL(br_log_append_replica(log, b, len, NOW0), 0);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 13);
    CU_ASSERT_EQUAL(br_log_latest_epoch(log), 4);
    CU_ASSERT_EQUAL(br_log_append_replica(log, b, len, NOW0), KP_E_INVALID_ARG); /* below LEO */
    struct br_log_slice sl;
    CU_ASSERT_EQUAL(br_log_read(log, 0, INT64_MAX, 1 << 20, true, &sl), 0);
    CU_ASSERT_EQUAL(sl.first_offset, 10);
    br_log_slice_release(&sl);
    kp_free(b);
    br_log_close(log);
    log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 13);
    br_log_close(log);
    cleanup_dir();
}

static void test_delete_removes_directory(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    char target[4096];
    CU_ASSERT_EQUAL_FATAL(br_log_delete_dir_name(root, "t", 0, target, sizeof target), 0);
    CU_ASSERT_EQUAL_FATAL(br_log_move_dir(log, target), 0);
    struct stat st;
    CU_ASSERT_EQUAL(stat(pdir, &st), -1);
    CU_ASSERT_EQUAL(stat(target, &st), 0);
    /* the log still works under its new name, and can be moved back */
    CU_ASSERT_EQUAL(br_log_end_offset(log), 15);
    struct br_log_slice sl;
    CU_ASSERT_EQUAL_FATAL(br_log_read(log, 5, INT64_MAX, 1 << 20, false, &sl), 0);
    CU_ASSERT_EQUAL(sl.first_offset, 5);
    br_log_slice_release(&sl);
    CU_ASSERT_EQUAL_FATAL(br_log_move_dir(log, pdir), 0);
    CU_ASSERT_EQUAL(stat(pdir, &st), 0);
    CU_ASSERT_EQUAL_FATAL(br_log_move_dir(log, target), 0);
    CU_ASSERT_EQUAL(br_log_delete(log), 0); /* it has its delete name: removed as it is */
    CU_ASSERT_EQUAL(stat(target, &st), -1);
    CU_ASSERT_EQUAL(stat(pdir, &st), -1);
    cleanup_dir();
}

/* A log renamed while a flush carrying its epoch cache is away: the file
 * is written under the new name, the flush ends without an error. */
static void test_move_dir_while_flush_away(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 20, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    (void)append_sized(log, 2, TS0, 10, 1, NOW0, NULL);
    struct br_log_flush *f = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_flush_begin(log, NOW0, &f), 0);
    char target[4096];
    CU_ASSERT_EQUAL_FATAL(br_log_delete_dir_name(root, "t", 0, target, sizeof target), 0);
    CU_ASSERT_EQUAL_FATAL(br_log_move_dir(log, target), 0);
    finish_flush(f);
    char path[4200];
    (void)snprintf(path, sizeof path, "%s/leader-epoch-checkpoint", target);
    size_t n = 0;
    uint8_t *file = read_file(path, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    CU_ASSERT_TRUE(n == 8 && memcmp(file, "0\n1\n1 0\n", 8) == 0);
    free(file);
    struct stat st;
    CU_ASSERT_EQUAL(stat(pdir, &st), -1); /* nothing made under the old name */
    CU_ASSERT_EQUAL(br_log_delete(log), 0);
    cleanup_dir();
}

/* A partition of a 249-character topic is deleted: its delete name fits. */
static void test_dir_delete_of_a_long_topic(void)
{
    setup_dir();
    char topic[250];
    memset(topic, 'r', 249);
    topic[249] = '\0';
    char dir[512];
    (void)snprintf(dir, sizeof dir, "%s/%s-0", root, topic);
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
    char file[600];
    (void)snprintf(file, sizeof file, "%s/00000000000000000000.log", dir);
    FILE *f = fopen(file, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    (void)fclose(f);
    CU_ASSERT_EQUAL(br_log_dir_delete(dir), 0);
    struct stat st;
    CU_ASSERT_EQUAL(stat(dir, &st), -1);
    DIR *d = opendir(root);
    CU_ASSERT_PTR_NOT_NULL(d);
    if (d == NULL) {
        cleanup_dir();
        return;
    }
    int left = 0;
    for (struct dirent *de = readdir(d); de != NULL; de = readdir(d)) {
        left += de->d_name[0] == 'r' ? 1 : 0;
    }
    (void)closedir(d);
    CU_ASSERT_EQUAL(left, 0);
    cleanup_dir();
}

/* A rename that fails changes nothing: the log keeps its directory. */
static void test_move_dir_failure_changes_nothing(void)
{
    setup_dir();
    size_t size = 0;
    struct br_log *log = three_batches(&size);
    char target[256];
    (void)snprintf(target, sizeof target, "%s/taken", root);
    CU_ASSERT_EQUAL_FATAL(mkdir(target, 0755), 0);
    char inside[300];
    (void)snprintf(inside, sizeof inside, "%s/file", target);
    FILE *f = fopen(inside, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    (void)fclose(f);
    CU_ASSERT_EQUAL(br_log_move_dir(log, target), KP_ERR_KAFKA_STORAGE_ERROR);
    struct stat st;
    CU_ASSERT_EQUAL(stat(pdir, &st), 0);
    CU_ASSERT_EQUAL(br_log_end_offset(log), 15);
    br_log_close(log);
    log = NULL;
    CU_ASSERT_EQUAL(unlink(inside), 0);
    CU_ASSERT_EQUAL(rmdir(target), 0);
    cleanup_dir();
}

/* Kafka's <topic>-<p>.<32 hex>-delete, the topic cut to fit 255 bytes. */
static void test_delete_dir_name_always_fits(void)
{
    char topic[250];
    for (size_t len = 1; len <= 249; len += 31) {
        memset(topic, 'a' + (int)(len % 26), len);
        topic[len] = '\0';
        for (int32_t p = 0; p < 3; p++) {
            int32_t part = p == 2 ? INT32_MAX : p;
            char out[4096];
            CU_ASSERT_EQUAL_FATAL(br_log_delete_dir_name("/x", topic, part, out, sizeof out), 0);
            const char *name = out + 3;
            CU_ASSERT_EQUAL(strncmp(out, "/x/", 3), 0);
            CU_ASSERT(strlen(name) <= 255);
            CU_ASSERT(br_log_dir_is_deleted(name));
            char suffix[32];
            (void)snprintf(suffix, sizeof suffix, "-%d.", (int)part);
            const char *s = strstr(name, suffix);
            if (s == NULL) {
                CU_FAIL("no -<partition>. in the delete name");
                continue;
            }
            /* the topic, whole or cut, then the suffix */
            CU_ASSERT_EQUAL(strncmp(name, topic, (size_t)(s - name)), 0);
            CU_ASSERT(len + strlen(s) <= 255 ? (size_t)(s - name) == len : strlen(name) == 255);
            CU_ASSERT_EQUAL(strlen(s), strlen(suffix) + 32 + strlen("-delete"));
            for (size_t i = 0; i < 32; i++) {
                CU_ASSERT_PTR_NOT_NULL(strchr("0123456789abcdef", s[strlen(suffix) + i]));
            }
            char topic_back[256];
            int32_t pb = -1;
            /* never a partition directory */
            CU_ASSERT_NOT_EQUAL(br_log_dir_parse_name(name, topic_back, sizeof topic_back, &pb), 0);
        }
    }
    char a[4096];
    char b[4096];
    CU_ASSERT_EQUAL(br_log_delete_dir_name("/x", "t", 0, a, sizeof a), 0);
    CU_ASSERT_EQUAL(br_log_delete_dir_name("/x", "t", 0, b, sizeof b), 0);
    CU_ASSERT_STRING_NOT_EQUAL(a, b);
    char small[16];
    CU_ASSERT_EQUAL(br_log_delete_dir_name("/x", "t", 0, small, sizeof small), KP_E_INVALID_ARG);
    CU_ASSERT(br_log_dir_is_deleted("t-0-delete"));
    CU_ASSERT(!br_log_dir_is_deleted("t-delete-0"));
    CU_ASSERT(!br_log_dir_is_deleted("-delete"));
}

/* ------------------------------------------------------------- write-behind */

#define WB_WINDOW (INT64_C(256) << 10)

static int wb_due_calls;

static void wb_count_due(void *ctx)
{
    (void)ctx;
    wb_due_calls++;
}

static const struct br_log_wb_ops wb_test_ops = {wb_count_due};

/* Appends batches of about 16 KiB until the log grew by at least n bytes. */
static void append_bytes(struct br_log *log, int64_t n)
{
    int64_t start = br_log_size_bytes(log);
    while (br_log_size_bytes(log) - start < n) {
        (void)append_sized(log, 1, TS0, 16 << 10, 0, NOW0, NULL);
    }
}

/* Pages of file[off, off + len) in the page cache. */
static size_t resident_pages(const char *path, int64_t off, int64_t len)
{
    size_t pages = (size_t)((off + len + 4095) / 4096);
    size_t n = SIZE_MAX; /* fails the caller's check */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CU_ASSERT(fd >= 0);
    if (fd < 0) {
        return n;
    }
    void *m = mmap(NULL, (size_t)(off + len), PROT_READ, MAP_SHARED, fd, 0);
    unsigned char *vec = kp_calloc(pages, 1);
    CU_ASSERT(m != MAP_FAILED && vec != NULL);
    if (m != MAP_FAILED && vec != NULL) {
        CU_ASSERT_EQUAL(mincore(m, (size_t)(off + len), vec), 0);
        n = 0;
        for (size_t i = (size_t)(off / 4096); i < pages; i++) {
            n += vec[i] & 1;
        }
    }
    kp_free(vec);
    if (m != MAP_FAILED) {
        (void)munmap(m, (size_t)(off + len));
    }
    close(fd);
    return n;
}

static void wb_finish(struct br_log_wb *w)
{
    br_log_wb_run(w);
    CU_ASSERT_EQUAL(br_log_wb_end(w), 0);
}

/* As the end moves, writeback starts a window behind it and pages are
 * dropped two windows behind, each byte once, in steps of half a window,
 * on page boundaries; what was dropped is read back from disk intact. */
static void test_writebehind_ranges_follow_the_end(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 30, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    wb_due_calls = 0;
    br_log_set_writebehind(log, WB_WINDOW, &wb_test_ops, NULL);
    int64_t step = br_log_wb_step(WB_WINDOW);
    CU_ASSERT_EQUAL(step, WB_WINDOW / 2);
    append_bytes(log, step - (32 << 10));
    CU_ASSERT_EQUAL(wb_due_calls, 0);
    append_bytes(log, 64 << 10);
    CU_ASSERT_EQUAL(wb_due_calls, 1);
    /* due, but nothing is a window behind yet */
    struct br_log_wb *w = NULL;
    CU_ASSERT_EQUAL(br_log_wb_begin(log, &w), 0);
    CU_ASSERT_PTR_NULL(w);

    int64_t started = 0;
    int64_t dropped = 0;
    for (int round = 0; round < 12; round++) {
        append_bytes(log, step);
        int64_t size = br_log_size_bytes(log);
        CU_ASSERT_EQUAL_FATAL(br_log_wb_begin(log, &w), 0);
        if (w == NULL) {
            CU_ASSERT_TRUE(size - WB_WINDOW - started < step + 4096);
            continue;
        }
        struct br_log_wb *again = NULL;
        CU_ASSERT_EQUAL(br_log_wb_begin(log, &again), KP_E_INVALID_ARG);
        for (size_t i = 0; i < br_log_wb_count(w); i++) {
            const struct br_log_wb_range *r = br_log_wb_get(w, i);
            CU_ASSERT_EQUAL(r->off % 4096, 0);
            CU_ASSERT_EQUAL((r->off + r->len) % 4096, 0);
            CU_ASSERT_TRUE(r->len >= step);
            if (r->drop) {
                CU_ASSERT_EQUAL(r->off, dropped);
                CU_ASSERT_TRUE(r->off + r->len <= size - 2 * WB_WINDOW);
                CU_ASSERT_TRUE(r->off + r->len > size - 2 * WB_WINDOW - 4096);
                dropped = r->off + r->len;
                if (started < dropped) {
                    started = dropped;
                }
            } else {
                CU_ASSERT_EQUAL(r->off, started);
                CU_ASSERT_TRUE(r->off + r->len <= size - WB_WINDOW);
                CU_ASSERT_TRUE(r->off + r->len > size - WB_WINDOW - 4096);
                started = r->off + r->len;
            }
        }
        wb_finish(w);
    }
    CU_ASSERT_TRUE(started > dropped);
    CU_ASSERT_TRUE(dropped >= 4 * step);
    char path[256];
    seg_path(0, "log", path, sizeof path);
    /* the dropped pages left the cache (a few may be back: readahead) */
    CU_ASSERT_TRUE(resident_pages(path, 0, dropped) < (size_t)(dropped / 4096 / 2));
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 0); /* durability is the flush's */
    (void)check_readable(log, 0);
    br_log_close(log);
    cleanup_dir();
}

/* Segments wholly behind go whole; one rolled, deleted or truncated while
 * a job is away is harmless, and marks follow a truncation. */
static void test_writebehind_survives_roll_delete_truncate_and_close(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(200 << 10, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    br_log_set_writebehind(log, WB_WINDOW, &wb_test_ops, NULL);
    append_bytes(log, 1 << 20);
    CU_ASSERT_TRUE(br_log_segment_count(log) >= 5);
    struct br_log_wb *w = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_wb_begin(log, &w), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    /* the oldest segments are more than two windows behind: dropped whole */
    struct br_log_segment_info first;
    CU_ASSERT_EQUAL(br_log_segment_info(log, 0, &first), 0);
    bool whole = false;
    for (size_t i = 0; i < br_log_wb_count(w); i++) {
        const struct br_log_wb_range *r = br_log_wb_get(w, i);
        if (r->seg_id == first.id && r->drop) {
            whole = r->off == 0 && r->len == first.size_bytes;
        }
    }
    CU_ASSERT_TRUE(whole);
    /* retention deletes them while the job is away: it holds their files */
    int64_t leo = br_log_end_offset(log);
    struct br_log_segment_info third;
    CU_ASSERT_EQUAL(br_log_segment_info(log, 2, &third), 0);
    size_t deleted = 0;
    CU_ASSERT_EQUAL(br_log_delete_segments_before(log, third.base_offset, &deleted), 0);
    CU_ASSERT_EQUAL(deleted, 2);
    wb_finish(w);
    /* a truncation into the active segment while a job is away */
    append_bytes(log, 300 << 10);
    CU_ASSERT_EQUAL_FATAL(br_log_wb_begin(log, &w), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(br_log_truncate_to(log, leo - 5), 0);
    wb_finish(w);
    append_bytes(log, 600 << 10);
    CU_ASSERT_EQUAL_FATAL(br_log_wb_begin(log, &w), 0);
    if (w != NULL) {
        for (size_t i = 0; i < br_log_wb_count(w); i++) {
            const struct br_log_wb_range *r = br_log_wb_get(w, i);
            CU_ASSERT_TRUE(r->off >= 0 && r->len > 0);
        }
        wb_finish(w);
    }
    (void)check_readable(log, br_log_start_offset(log));
    /* a log closed while its job is away: the job ends on its own */
    append_bytes(log, 600 << 10);
    CU_ASSERT_EQUAL_FATAL(br_log_wb_begin(log, &w), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    br_log_close(log);
    wb_finish(w);
    cleanup_dir();
}

/* Off: no due calls and no jobs; turning it on leaves what the log holds
 * alone (only what comes after is written behind). */
static void test_writebehind_off_and_turned_on_late(void)
{
    setup_dir();
    struct br_log_config c = cfg_with(1 << 30, 4096);
    struct br_log *log = open_log(&c, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    wb_due_calls = 0;
    append_bytes(log, 4 * WB_WINDOW);
    CU_ASSERT_EQUAL(wb_due_calls, 0);
    struct br_log_wb *w = NULL;
    CU_ASSERT_EQUAL(br_log_wb_begin(log, &w), 0);
    CU_ASSERT_PTR_NULL(w);
    br_log_set_writebehind(log, WB_WINDOW, &wb_test_ops, NULL);
    CU_ASSERT_EQUAL(br_log_wb_begin(log, &w), 0);
    CU_ASSERT_PTR_NULL(w);
    int64_t before = br_log_size_bytes(log);
    append_bytes(log, 2 * WB_WINDOW);
    CU_ASSERT_TRUE(wb_due_calls >= 1);
    CU_ASSERT_EQUAL_FATAL(br_log_wb_begin(log, &w), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    for (size_t i = 0; i < br_log_wb_count(w); i++) {
        CU_ASSERT_TRUE(br_log_wb_get(w, i)->off >= before - 4096);
    }
    wb_finish(w);
    br_log_set_writebehind(log, 0, NULL, NULL);
    wb_due_calls = 0;
    append_bytes(log, 4 * WB_WINDOW);
    CU_ASSERT_EQUAL(wb_due_calls, 0);
    CU_ASSERT_EQUAL(br_log_wb_begin(log, &w), 0);
    CU_ASSERT_PTR_NULL(w);
    br_log_close(log);
    cleanup_dir();
}

static CU_TestInfo tests[] = {
    {"config_defaults_are_kafkas", test_config_defaults_are_kafkas},
    {"config_rejects_out_of_range_values", test_config_rejects_out_of_range_values},
    {"dir_parse_name_splits_at_last_dash", test_dir_parse_name_splits_at_last_dash},
    {"dir_parse_name_rejects_bad_names", test_dir_parse_name_rejects_bad_names},
    {"open_creates_empty_log", test_open_creates_empty_log},
    {"append_assigns_offsets_in_order", test_append_assigns_offsets_in_order},
    {"append_rewrites_base_offset_and_leader_epoch",
     test_append_rewrites_base_offset_and_leader_epoch},
    {"append_rejects_what_is_not_one_batch", test_append_rejects_what_is_not_one_batch},
    {"read_round_trip_returns_batch_bytes", test_read_round_trip_returns_batch_bytes},
    {"read_from_inside_batch_starts_at_containing_batch",
     test_read_from_inside_batch_starts_at_containing_batch},
    {"read_respects_max_offset", test_read_respects_max_offset},
    {"read_respects_max_bytes", test_read_respects_max_bytes},
    {"read_min_one_returns_oversized_first_batch", test_read_min_one_returns_oversized_first_batch},
    {"read_at_max_offset_is_empty", test_read_at_max_offset_is_empty},
    {"read_out_of_range", test_read_out_of_range},
    {"roll_by_size", test_roll_by_size},
    {"roll_by_time", test_roll_by_time},
    {"roll_when_index_full", test_roll_when_index_full},
    {"index_lookup_across_many_segments", test_index_lookup_across_many_segments},
    {"reopen_after_close_keeps_leo_and_data", test_reopen_after_close_keeps_leo_and_data},
    {"recovery_truncates_garbage_appended_to_newest_segment",
     test_recovery_truncates_garbage_appended_to_newest_segment},
    {"recovery_truncates_zeros_appended_to_newest_segment",
     test_recovery_truncates_zeros_appended_to_newest_segment},
    {"recovery_truncates_segment_cut_mid_batch", test_recovery_truncates_segment_cut_mid_batch},
    {"recovery_bad_crc_in_middle_of_last_segment_truncates_there",
     test_recovery_bad_crc_in_middle_of_last_segment_truncates_there},
    {"recovery_bad_crc_in_earlier_segment_removes_later_segments",
     test_recovery_bad_crc_in_earlier_segment_removes_later_segments},
    {"recovery_trusts_segments_below_recovery_point",
     test_recovery_trusts_segments_below_recovery_point},
    {"recovery_keeps_empty_segment_left_by_a_roll",
     test_recovery_keeps_empty_segment_left_by_a_roll},
    {"recovery_rebuilds_missing_index", test_recovery_rebuilds_missing_index},
    {"recovery_rebuilds_missing_time_index", test_recovery_rebuilds_missing_time_index},
    {"recovery_rebuilds_torn_index", test_recovery_rebuilds_torn_index},
    {"recovery_rebuilds_non_monotonic_index", test_recovery_rebuilds_non_monotonic_index},
    {"recovery_rebuilds_index_with_position_beyond_segment",
     test_recovery_rebuilds_index_with_position_beyond_segment},
    {"recovery_rebuilds_index_entry_not_matching_its_batch",
     test_recovery_rebuilds_index_entry_not_matching_its_batch},
    {"recovery_rebuilds_non_increasing_time_index",
     test_recovery_rebuilds_non_increasing_time_index},
    {"recovery_rebuilds_indexes_after_unclean_stop",
     test_recovery_rebuilds_indexes_after_unclean_stop},
    {"recovery_rebuilt_time_index_keeps_final_entry",
     test_recovery_rebuilt_time_index_keeps_final_entry},
    {"recovery_removes_orphan_index_files", test_recovery_removes_orphan_index_files},
    {"offset_for_timestamp_finds_first_record_at_or_after",
     test_offset_for_timestamp_finds_first_record_at_or_after},
    {"offset_for_timestamp_across_segments", test_offset_for_timestamp_across_segments},
    {"offset_for_timestamp_respects_log_start", test_offset_for_timestamp_respects_log_start},
    {"truncate_to_drops_whole_batches", test_truncate_to_drops_whole_batches},
    {"truncate_to_across_segments", test_truncate_to_across_segments},
    {"truncate_below_start_restarts_log", test_truncate_below_start_restarts_log},
    {"delete_segments_before_moves_start_offset", test_delete_segments_before_moves_start_offset},
    {"delete_segments_before_leo_rolls_active_segment",
     test_delete_segments_before_leo_rolls_active_segment},
    {"slice_keeps_deleted_segment_readable", test_slice_keeps_deleted_segment_readable},
    {"log_holds_one_descriptor", test_log_holds_one_descriptor},
    {"budget_bounds_descriptors_of_many_logs", test_budget_bounds_descriptors_of_many_logs},
    {"slice_outlives_eviction_of_its_segment", test_slice_outlives_eviction_of_its_segment},
    {"vanished_segment_fails_its_log_only", test_vanished_segment_fails_its_log_only},
    {"out_of_descriptors_closes_coldest_files", test_out_of_descriptors_closes_coldest_files},
    {"reopen_after_clean_close_writes_no_index", test_reopen_after_clean_close_writes_no_index},
    {"set_start_offset_moves_logical_start", test_set_start_offset_moves_logical_start},
    {"flush_moves_recovery_point", test_flush_moves_recovery_point},
    {"flush_interval_messages_flushes", test_flush_interval_messages_flushes},
    {"maybe_flush_after_interval_ms", test_maybe_flush_after_interval_ms},
    {"flush_off_thread_moves_recovery_point", test_flush_off_thread_moves_recovery_point},
    {"flush_off_thread_truncated_or_closed", test_flush_off_thread_truncated_or_closed},
    {"flush_off_thread_writes_epochs", test_flush_off_thread_writes_epochs},
    {"roll_makes_a_flush_due", test_roll_makes_a_flush_due},
    {"move_dir_while_flush_away", test_move_dir_while_flush_away},
    {"epoch_checkpoint_round_trip", test_epoch_checkpoint_round_trip},
    {"end_offset_for_epoch_semantics", test_end_offset_for_epoch_semantics},
    {"epochs_follow_truncation_and_retention", test_epochs_follow_truncation_and_retention},
    {"epoch_checkpoint_malformed_is_rebuilt", test_epoch_checkpoint_malformed_is_rebuilt},
    {"iter_walks_batch_headers_across_segments", test_iter_walks_batch_headers_across_segments},
    {"replica_append_keeps_offsets_and_epoch", test_replica_append_keeps_offsets_and_epoch},
    {"delete_removes_directory", test_delete_removes_directory},
    {"delete_dir_name_always_fits", test_delete_dir_name_always_fits},
    {"dir_delete_of_a_long_topic", test_dir_delete_of_a_long_topic},
    {"move_dir_failure_changes_nothing", test_move_dir_failure_changes_nothing},
    {"writebehind_ranges_follow_the_end", test_writebehind_ranges_follow_the_end},
    {"writebehind_survives_roll_delete_truncate_and_close",
     test_writebehind_survives_roll_delete_truncate_and_close},
    {"writebehind_off_and_turned_on_late", test_writebehind_off_and_turned_on_late},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-log", tests);
}
