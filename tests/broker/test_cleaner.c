/*
 * Unit tests for the log cleaner (broker/src/cleaner.h), the cleaner's swap
 * and its recovery at open (log.h), retention (retention.h) and the
 * reactor's mailbox (mailbox.h), on real files.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/control.h>
#include <samsa-protocol/record_batch.h>

#include "base/mailbox.h"
#include "cunit_run.h"
#include "storage/cleaner.h"
#include "storage/log.h"
#include "storage/retention.h"
#include "tmpdir.h"

#define NOW INT64_C(1800000000000)
#define HOUR INT64_C(3600000)
#define MAX_RECS 200000

/* ------------------------------------------------------------- fixture */

static char root[64];
static char pdir[128];

static void setup_dir(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(st_tmpdir_make(root, sizeof root, "clean"));
    (void)snprintf(pdir, sizeof pdir, "%s/t-0", root);
}

static void cleanup_dir(void)
{
    CU_ASSERT_EQUAL(st_tmpdir_remove(root), 0);
}

/* The logs share a budget of two open segment files: a job's segments and
 * the swapped-in ones are closed and reopened by name all along. */
static struct br_filecache *files;

static struct br_log *open_log(int64_t segment_bytes)
{
    struct br_log_config c;
    br_log_config_defaults(&c);
    c.segment_bytes = segment_bytes;
    c.index_interval_bytes = 256;
    if (files == NULL) {
        CU_ASSERT_EQUAL_FATAL(br_filecache_new(2, &files), 0);
    }
    struct br_log *log = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_open(pdir, &c, 0, files, &log), 0);
    return log;
}

/* Files in the partition dir whose names end with `tail`. */
static int count_files(const char *tail)
{
    DIR *d = opendir(pdir);
    if (d == NULL) {
        return -1;
    }
    int n = 0;
    struct dirent *de;
    size_t tl = strlen(tail);
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l >= tl && strcmp(de->d_name + l - tl, tail) == 0) {
            n++;
        }
    }
    (void)closedir(d);
    return n;
}

/* ------------------------------------------------------------- batches */

struct rec {
    const char *key;   /* NULL: no key */
    const char *value; /* NULL: tombstone */
    int64_t ts;
};

struct batch_opts {
    int codec;
    int64_t producer_id;
    int32_t base_sequence;
    bool log_append_time;
    bool transactional;
};

static const struct batch_opts PLAIN = {KP_CODEC_NONE, -1, -1, false, false};

/* Appends one batch of records as the leader (epoch 3). */
static int64_t append(struct br_log *log, const struct rec *recs, size_t n,
                      const struct batch_opts *o)
{
    struct kp_batch_builder b;
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, o->codec, 0, recs[0].ts, o->producer_id,
                                                (int16_t)(o->producer_id >= 0 ? 0 : -1),
                                                o->base_sequence, 1u << 24),
                          0);
    if (o->log_append_time) {
        kp_batch_builder_set_timestamp_type(&b, KP_TS_LOG_APPEND_TIME);
    }
    kp_batch_builder_set_flags(&b, o->transactional, false);
    for (size_t i = 0; i < n; i++) {
        struct kp_bytes k = {(const uint8_t *)recs[i].key,
                             recs[i].key != NULL ? (int32_t)strlen(recs[i].key) : -1};
        struct kp_bytes v = {(const uint8_t *)recs[i].value,
                             recs[i].value != NULL ? (int32_t)strlen(recs[i].value) : -1};
        struct kp_record_header h = {{"h", 1}, {(const uint8_t *)"x", 1}};
        CU_ASSERT_EQUAL_FATAL(kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, recs[i].ts, k, v,
                                                   i % 3 == 0 ? &h : NULL, i % 3 == 0 ? 1 : 0),
                              0);
    }
    struct kp_writer w;
    kp_wr_init(&w, 1u << 25);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &w), 0);
    kp_batch_builder_free(&b);
    if (o->log_append_time) {
        CU_ASSERT_EQUAL(kp_batch_set_log_append_time(w.buf, w.len, recs[0].ts + 5), 0);
    }
    int64_t base = -1;
    CU_ASSERT_EQUAL(br_log_append(log, w.buf, w.len, 3, NOW, &base), 0);
    kp_wr_free(&w);
    return base;
}

/* One record read back. */
struct got {
    int64_t offset;
    int64_t ts;
    char key[32];
    bool has_key;
    char value[64];
    bool tombstone;
    int nheaders;
};

struct readback {
    struct got *recs;
    size_t n;
    size_t batches;
    size_t empty_batches;
    size_t control_batches;
    size_t transactional_batches;
    int codecs[8];
    struct kp_batch_header last_empty;
};

/* Every record from the log start to the LEO; every batch must validate. */
static void read_all(struct br_log *log, struct readback *out)
{
    memset(out, 0, sizeof *out);
    out->recs = calloc(MAX_RECS, sizeof *out->recs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out->recs);
    if (out->recs == NULL) {
        return;
    }
    int64_t off = br_log_start_offset(log);
    int64_t leo = br_log_end_offset(log);
    while (off < leo) {
        struct br_log_slice s;
        CU_ASSERT_EQUAL_FATAL(br_log_read(log, off, leo, 1 << 20, true, &s), 0);
        if (s.len == 0) {
            CU_ASSERT_FATAL(s.next_offset > off);
            off = s.next_offset;
            continue;
        }
        uint8_t *buf = malloc((size_t)s.len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
        if (buf == NULL) {
            return;
        }
        CU_ASSERT_EQUAL_FATAL(pread(br_fileref_fd(s.file), buf, (size_t)s.len, s.file_pos), s.len);
        size_t pos = 0;
        while (pos < (size_t)s.len) {
            struct kp_batch_header h;
            size_t size = 0;
            CU_ASSERT_EQUAL_FATAL(kp_batch_parse_lenient(buf + pos, (size_t)s.len - pos, &h, &size),
                                  0);
            out->batches++;
            out->codecs[kp_batch_codec(&h) & 7]++;
            CU_ASSERT_EQUAL(h.PartitionLeaderEpoch, 3);
            if (h.RecordCount == 0) {
                out->empty_batches++;
                out->last_empty = h;
            }
            out->control_batches += kp_batch_is_control(&h) ? 1u : 0u;
            out->transactional_batches +=
                kp_batch_is_transactional(&h) && !kp_batch_is_control(&h) ? 1u : 0u;
            struct kp_batch_iter it;
            CU_ASSERT_EQUAL_FATAL(kp_batch_iter_init(&it, buf + pos, size, 1u << 26), 0);
            struct kp_record r;
            int rc;
            while ((rc = kp_batch_iter_next(&it, &r)) == 0) {
                if (r.Offset < off) {
                    continue;
                }
                CU_ASSERT_FATAL(out->n < MAX_RECS);
                struct got *g = &out->recs[out->n++];
                g->offset = r.Offset;
                g->ts = r.Timestamp;
                g->has_key = r.Key.len >= 0;
                if (g->has_key) {
                    (void)snprintf(g->key, sizeof g->key, "%.*s", (int)r.Key.len, r.Key.ptr);
                }
                g->tombstone = r.Value.len < 0;
                if (!g->tombstone) {
                    (void)snprintf(g->value, sizeof g->value, "%.*s", (int)r.Value.len,
                                   r.Value.ptr);
                }
                g->nheaders = r.HeaderCount;
            }
            CU_ASSERT_EQUAL(rc, KP_ITER_END);
            kp_batch_iter_free(&it);
            pos += size;
        }
        free(buf);
        off = s.next_offset;
        br_log_slice_release(&s);
    }
}

static void readback_free(struct readback *r)
{
    free(r->recs);
    r->recs = NULL;
}

static const struct got *find_key(const struct readback *r, const char *key, size_t *count)
{
    const struct got *last = NULL;
    *count = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->recs[i].has_key && strcmp(r->recs[i].key, key) == 0) {
            last = &r->recs[i];
            (*count)++;
        }
    }
    return last;
}

static void assert_offsets_increase(const struct readback *r)
{
    for (size_t i = 1; i < r->n; i++) {
        CU_ASSERT_FATAL(r->recs[i].offset > r->recs[i - 1].offset);
    }
}

static struct br_clean_params params(int64_t first_dirty)
{
    struct br_clean_params p;
    p.first_dirty_offset = first_dirty;
    p.now_ms = NOW;
    p.delete_retention_ms = HOUR;
    p.min_compaction_lag_ms = 0;
    p.segment_bytes = 1 << 20;
    p.max_map_entries = 1 << 20;
    return p;
}

/* prepare + run + commit; returns the stats' cleaned_to (-1: no job). */
static int64_t clean_once(struct br_log *log, const struct br_clean_params *p, bool expect_swap)
{
    struct br_clean_job *job = NULL;
    CU_ASSERT_EQUAL_FATAL(br_clean_job_prepare(log, p, &job), 0);
    if (job == NULL) {
        return -1;
    }
    CU_ASSERT_EQUAL_FATAL(br_clean_job_run(job, NULL), 0);
    bool swapped = false;
    CU_ASSERT_EQUAL(br_clean_job_commit(log, job, &swapped), 0);
    CU_ASSERT_EQUAL(swapped, expect_swap);
    int64_t to = br_clean_job_stats(job)->cleaned_to;
    br_clean_job_free(job);
    return to;
}

/* Key k%keys gets value "v<i>" for i in [from, to), 10 a batch. */
static void updates(struct br_log *log, int from, int to, int keys, const struct batch_opts *o,
                    int64_t ts)
{
    static char kbuf[10][16];
    static char vbuf[10][32];
    struct rec recs[10];
    for (int i = from; i < to; i += 10) {
        size_t n = 0;
        for (int j = i; j < i + 10 && j < to; j++) {
            (void)snprintf(kbuf[n], sizeof kbuf[n], "k%d", j % keys);
            (void)snprintf(vbuf[n], sizeof vbuf[n], "v%d", j);
            recs[n].key = kbuf[n];
            recs[n].value = vbuf[n];
            recs[n].ts = ts + j;
            n++;
        }
        (void)append(log, recs, n, o);
    }
}

/* ------------------------------------------------------------- cleaning */

static void test_clean_keeps_latest_value_per_key_and_offsets(void)
{
    setup_dir();
    struct br_log *log = open_log(4096);
    updates(log, 0, 3000, 50, &PLAIN, NOW - HOUR / 2);
    struct rec fill = {"fill", "x", NOW};
    for (int i = 0; i < 60; i++) {
        (void)append(log, &fill, 1, &PLAIN); /* the updates' last segment closes */
    }
    int64_t leo = br_log_end_offset(log);
    int64_t size_before = br_log_size_bytes(log);
    size_t segs_before = br_log_segment_count(log);
    CU_ASSERT(segs_before > 10);

    struct br_clean_params p = params(0);
    int64_t to = clean_once(log, &p, true);
    /* up to the active segment */
    struct br_log_segment_info last;
    CU_ASSERT_EQUAL(br_log_segment_info(log, br_log_segment_count(log) - 1, &last), 0);
    CU_ASSERT_EQUAL(to, last.base_offset);
    CU_ASSERT_EQUAL(br_log_end_offset(log), leo);
    CU_ASSERT(br_log_size_bytes(log) < size_before / 4);
    CU_ASSERT(br_log_segment_count(log) < segs_before);

    struct readback r;
    read_all(log, &r);
    assert_offsets_increase(&r);
    for (int k = 0; k < 50; k++) {
        char key[16];
        char want[32];
        size_t count = 0;
        (void)snprintf(key, sizeof key, "k%d", k);
        const struct got *g = find_key(&r, key, &count);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        if (g == NULL) {
            continue;
        }
        /* the last update of key k is the largest j < 3000 with j % 50 == k */
        int j = 2950 + k;
        (void)snprintf(want, sizeof want, "v%d", j);
        CU_ASSERT_STRING_EQUAL(g->value, want);
        CU_ASSERT_EQUAL(g->offset, j); /* offsets are kept */
        CU_ASSERT_EQUAL(g->ts, NOW - HOUR / 2 + j);
        CU_ASSERT_EQUAL(g->nheaders, j % 10 % 3 == 0 ? 1 : 0);
    }
    readback_free(&r);

    /* nothing new: no job */
    p.first_dirty_offset = to;
    CU_ASSERT_EQUAL(clean_once(log, &p, true), -1);
    /* a first dirty offset past the active segment (a stale checkpoint of a
     * longer log) means the whole log again */
    p.first_dirty_offset = INT64_C(1) << 40;
    CU_ASSERT_EQUAL(clean_once(log, &p, true), to);
    CU_ASSERT_EQUAL(count_files(".cleaned"), 0);
    CU_ASSERT_EQUAL(count_files(".swap"), 0);

    /* reopen: the same records */
    br_log_close(log);
    log = open_log(4096);
    CU_ASSERT_EQUAL(br_log_end_offset(log), leo);
    read_all(log, &r);
    size_t count = 0;
    CU_ASSERT_PTR_NOT_NULL(find_key(&r, "k7", &count));
    CU_ASSERT_EQUAL(count, 1);
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

/* A transaction's records (kept whole: an aborted one must never hide the
 * value it would have replaced, an open one may still abort) do not count
 * as a key's latest value (Kafka's cleaner skips aborted transactions when
 * it builds its offset map, LogCleaner.buildOffsetMapForSegment). */
static void test_transactional_records_never_hide_earlier_values(void)
{
    setup_dir();
    struct br_log *log = open_log(4096);
    struct rec first = {"k", "committed", NOW - HOUR / 2};
    (void)append(log, &first, 1, &PLAIN);
    struct batch_opts txn = {KP_CODEC_NONE, 77, 0, false, true};
    struct rec later = {"k", "aborted", NOW - HOUR / 2};
    (void)append(log, &later, 1, &txn);
    struct rec fill = {"fill", "x", NOW};
    for (int i = 0; i < 200; i++) {
        (void)append(log, &fill, 1, &PLAIN); /* the first segments close */
    }
    struct br_clean_params p = params(0);
    CU_ASSERT(clean_once(log, &p, true) > 1);
    struct readback r;
    read_all(log, &r);
    size_t committed = 0;
    size_t count = 0;
    for (size_t i = 0; i < r.n; i++) {
        if (r.recs[i].has_key && strcmp(r.recs[i].key, "k") == 0) {
            count++;
            committed += strcmp(r.recs[i].value, "committed") == 0 ? 1 : 0;
        }
    }
    CU_ASSERT_EQUAL(committed, 1);
    CU_ASSERT_EQUAL(count, 2);
    (void)find_key(&r, "fill", &count);
    CU_ASSERT(count < 200); /* the plain records around them were cleaned */
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

/* Appends producer pid's marker (COMMIT when commit) as the leader. */
static void append_marker(struct br_log *log, int64_t pid, bool commit)
{
    struct kp_writer w;
    kp_wr_init(&w, 4096);
    struct kp_txn_marker m = {commit ? KP_CONTROL_COMMIT : KP_CONTROL_ABORT, 0};
    CU_ASSERT_EQUAL_FATAL(kp_txn_marker_batch_write(&w, 0, 3, NOW - HOUR / 2, pid, 0, &m), 0);
    int64_t base = -1;
    CU_ASSERT_EQUAL(br_log_append(log, w.buf, w.len, 3, NOW, &base), 0);
    kp_wr_free(&w);
}

/* The value of key k the log holds, and how many records it has. */
static const char *only_value(const struct readback *r, const char *k, size_t *count)
{
    const char *v = NULL;
    *count = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->recs[i].has_key && strcmp(r->recs[i].key, k) == 0) {
            (*count)++;
            v = r->recs[i].value;
        }
    }
    return v;
}

/* Transactions the markers ended (Kafka 2.0's LogCleaner with
 * CleanedTransactionMetadata): a committed transaction's record is its
 * key's latest value and replaces the earlier one; an aborted
 * transaction's batches go and never hide the value they would have
 * replaced; the markers stay; the batches kept stay transactional. */
static void test_transactions_ended_by_their_markers(void)
{
    setup_dir();
    struct br_log *log = open_log(4096);
    struct rec v1 = {"k", "plain-1", NOW - HOUR / 2};
    (void)append(log, &v1, 1, &PLAIN);
    struct rec j1 = {"j", "plain-j", NOW - HOUR / 2};
    (void)append(log, &j1, 1, &PLAIN);
    struct batch_opts p77 = {KP_CODEC_NONE, 77, 0, false, true};
    struct batch_opts p78 = {KP_CODEC_NONE, 78, 0, false, true};
    struct rec v2[2] = {{"k", "committed-2", NOW - HOUR / 2}, {"c", "committed-c", NOW - HOUR / 2}};
    (void)append(log, v2, 2, &p77);
    struct rec v3 = {"k", "aborted-3", NOW - HOUR / 2};
    (void)append(log, &v3, 1, &p78);
    append_marker(log, 77, true);
    struct rec j2 = {"j", "aborted-j", NOW - HOUR / 2};
    (void)append(log, &j2, 1, &p78);
    append_marker(log, 78, false);
    struct rec c2 = {"c", "plain-c", NOW - HOUR / 2};
    (void)append(log, &c2, 1, &PLAIN);
    struct rec fill = {"fill", "x", NOW};
    for (int i = 0; i < 200; i++) {
        (void)append(log, &fill, 1, &PLAIN); /* the first segments close */
    }
    struct readback before;
    read_all(log, &before);
    CU_ASSERT_EQUAL(before.control_batches, 2);
    CU_ASSERT_EQUAL(before.transactional_batches, 3);
    readback_free(&before);
    struct br_clean_params p = params(0);
    CU_ASSERT(clean_once(log, &p, true) > 1);
    struct readback r;
    read_all(log, &r);
    size_t count = 0;
    const char *k = only_value(&r, "k", &count);
    CU_ASSERT_EQUAL(count, 1);
    CU_ASSERT_TRUE(k != NULL && strcmp(k, "committed-2") == 0);
    const char *j = only_value(&r, "j", &count);
    CU_ASSERT_EQUAL(count, 1);
    CU_ASSERT_TRUE(j != NULL && strcmp(j, "plain-j") == 0);
    const char *c = only_value(&r, "c", &count); /* a later plain record replaces it */
    CU_ASSERT_EQUAL(count, 1);
    CU_ASSERT_TRUE(c != NULL && strcmp(c, "plain-c") == 0);
    CU_ASSERT_EQUAL(r.control_batches, 2);
    /* producer 77's batch rebuilt without "c", still transactional;
     * producer 78's both gone but the last, an empty batch for its state */
    CU_ASSERT_EQUAL(r.transactional_batches, 1);
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

static void test_clean_never_touches_the_active_segment(void)
{
    setup_dir();
    struct br_log *log = open_log(1 << 20); /* everything in the active segment */
    updates(log, 0, 500, 5, &PLAIN, NOW - HOUR / 2);
    struct br_clean_params p = params(0);
    CU_ASSERT_EQUAL(clean_once(log, &p, true), -1);
    struct readback r;
    read_all(log, &r);
    CU_ASSERT_EQUAL(r.n, 500);
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

static void test_tombstones_go_after_delete_retention(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 400, 20, &PLAIN, NOW - 2 * HOUR);
    /* k1: deleted two hours ago; k2: deleted a second ago */
    struct rec tombs[2] = {{"k1", NULL, NOW - 2 * HOUR + 500}, {"k2", NULL, NOW - 1000}};
    (void)append(log, tombs, 2, &PLAIN);
    struct rec fill = {"fill", "x", NOW};
    for (int i = 0; i < 60; i++) {
        (void)append(log, &fill, 1, &PLAIN); /* pushes the tombstones out of the active segment */
    }
    struct br_clean_params p = params(0);
    (void)clean_once(log, &p, true);
    struct readback r;
    read_all(log, &r);
    assert_offsets_increase(&r);
    size_t count = 0;
    CU_ASSERT_PTR_NULL(find_key(&r, "k1", &count)); /* older than delete.retention.ms: gone */
    const struct got *g = find_key(&r, "k2", &count);
    CU_ASSERT_PTR_NOT_NULL(g); /* a second old: stays */
    CU_ASSERT(g != NULL && g->tombstone);
    CU_ASSERT_EQUAL(count, 1);
    g = find_key(&r, "k3", &count);
    CU_ASSERT_PTR_NOT_NULL(g);
    CU_ASSERT(g != NULL && strcmp(g->value, "v383") == 0);
    CU_ASSERT_EQUAL(count, 1);
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

static void test_min_compaction_lag_keeps_recent_segments(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 300, 10, &PLAIN, NOW - 2 * HOUR);
    int64_t recent_from = br_log_end_offset(log);
    updates(log, 300, 600, 10, &PLAIN, NOW - 60000);
    struct br_clean_params p = params(0);
    p.min_compaction_lag_ms = HOUR;
    int64_t to = clean_once(log, &p, true);
    CU_ASSERT(to > 0);
    CU_ASSERT(to <= recent_from);
    struct readback r;
    read_all(log, &r);
    /* every record of the last half hour is still there */
    size_t recent = 0;
    for (size_t i = 0; i < r.n; i++) {
        recent += r.recs[i].ts >= NOW - 60000 ? 1u : 0u;
    }
    CU_ASSERT_EQUAL(recent, 300);
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

static void test_rebuilt_batches_keep_codec_producer_and_timestamps(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    struct batch_opts gz = {KP_CODEC_GZIP, -1, -1, false, false};
    updates(log, 0, 200, 7, &gz, NOW - HOUR / 2);
    /* an idempotent producer whose records are all overwritten later */
    struct batch_opts idem = {KP_CODEC_NONE, 4242, 17, false, false};
    struct rec pr[3] = {
        {"k1", "a", NOW - HOUR / 2}, {"k2", "b", NOW - HOUR / 2}, {"k3", "c", NOW - HOUR / 2}};
    int64_t pbase = append(log, pr, 3, &idem);
    /* a LogAppendTime batch with a record that survives */
    struct batch_opts lat = {KP_CODEC_LZ4, -1, -1, true, false};
    struct rec lr[2] = {{"k4", "old", NOW - HOUR / 2}, {"only-here", "lat", NOW - HOUR / 2}};
    (void)append(log, lr, 2, &lat);
    updates(log, 200, 400, 7, &gz, NOW - HOUR / 2);
    struct rec fill = {"fill", "x", NOW};
    for (int i = 0; i < 40; i++) {
        (void)append(log, &fill, 1, &PLAIN);
    }
    struct br_clean_params p = params(0);
    (void)clean_once(log, &p, true);
    struct readback r;
    read_all(log, &r);
    assert_offsets_increase(&r);
    CU_ASSERT(r.codecs[KP_CODEC_GZIP] > 0);
    CU_ASSERT(r.codecs[KP_CODEC_LZ4] > 0);
    /* the producer's batch stays, empty, with its offsets and sequence */
    CU_ASSERT(r.empty_batches >= 1);
    bool found = false;
    int64_t off = br_log_start_offset(log);
    struct br_log_iter *it = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_iter_open(log, off, &it), 0);
    struct kp_batch_header h;
    while (br_log_iter_next(it, &h) == 0) {
        if (h.ProducerId == 4242) {
            found = true;
            CU_ASSERT_EQUAL(h.BaseOffset, pbase);
            CU_ASSERT_EQUAL(h.LastOffsetDelta, 2);
            CU_ASSERT_EQUAL(h.RecordCount, 0);
            CU_ASSERT_EQUAL(h.BaseSequence, 17);
            CU_ASSERT_EQUAL(h.ProducerEpoch, 0);
            CU_ASSERT_EQUAL(h.PartitionLeaderEpoch, 3);
        }
        if (kp_batch_timestamp_type(&h) == KP_TS_LOG_APPEND_TIME) {
            CU_ASSERT_EQUAL(h.MaxTimestamp, NOW - HOUR / 2 + 5);
            CU_ASSERT_EQUAL(h.RecordCount, 1);
            CU_ASSERT_EQUAL(kp_batch_codec(&h), KP_CODEC_LZ4);
        }
    }
    br_log_iter_close(it);
    CU_ASSERT(found);
    size_t count = 0;
    const struct got *g = find_key(&r, "only-here", &count);
    CU_ASSERT_PTR_NOT_NULL(g);
    CU_ASSERT(g != NULL && g->ts == NOW - HOUR / 2 + 5); /* LogAppendTime as reported */
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

static void test_small_offset_map_cleans_in_passes(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 4000, 400, &PLAIN, NOW - HOUR / 2);
    struct rec fill = {"fill", "x", NOW};
    for (int i = 0; i < 60; i++) {
        (void)append(log, &fill, 1, &PLAIN);
    }
    struct br_clean_params p = params(0);
    p.max_map_entries = 120;
    int passes = 0;
    for (;;) {
        int64_t to = clean_once(log, &p, true);
        if (to < 0) {
            break;
        }
        CU_ASSERT_FATAL(to > p.first_dirty_offset);
        p.first_dirty_offset = to;
        passes++;
        CU_ASSERT_FATAL(passes < 100);
    }
    CU_ASSERT(passes > 1);
    struct readback r;
    read_all(log, &r);
    assert_offsets_increase(&r);
    for (int k = 0; k < 400; k++) {
        char key[16];
        char want[32];
        size_t count = 0;
        (void)snprintf(key, sizeof key, "k%d", k);
        (void)snprintf(want, sizeof want, "v%d", 3600 + k);
        const struct got *g = find_key(&r, key, &count);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        if (g == NULL) {
            continue;
        }
        CU_ASSERT_STRING_EQUAL(g->value, want);
        CU_ASSERT_EQUAL(count, 1);
    }
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

static void test_stopped_run_leaves_nothing(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 1000, 10, &PLAIN, NOW - HOUR / 2);
    int64_t size = br_log_size_bytes(log);
    struct br_clean_params p = params(0);
    struct br_clean_job *job = NULL;
    CU_ASSERT_EQUAL_FATAL(br_clean_job_prepare(log, &p, &job), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    if (job == NULL) {
        return;
    }
    atomic_bool stop;
    atomic_init(&stop, true);
    CU_ASSERT_EQUAL(br_clean_job_run(job, &stop), KP_AGAIN);
    br_clean_job_free(job);
    CU_ASSERT_EQUAL(count_files(".cleaned"), 0);
    CU_ASSERT_EQUAL(br_log_size_bytes(log), size);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- swap */

static void test_swap_is_discarded_when_the_log_changed(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 1000, 10, &PLAIN, NOW - HOUR / 2);
    struct br_clean_params p = params(0);
    struct br_clean_job *job = NULL;
    CU_ASSERT_EQUAL_FATAL(br_clean_job_prepare(log, &p, &job), 0);
    CU_ASSERT_EQUAL_FATAL(br_clean_job_run(job, NULL), 0);
    CU_ASSERT(count_files(".log.cleaned") > 0);
    /* retention takes the first segment meanwhile */
    struct br_log_segment_info second;
    CU_ASSERT_EQUAL(br_log_segment_info(log, 1, &second), 0);
    CU_ASSERT_EQUAL(br_log_delete_segments_before(log, second.base_offset, NULL), 0);
    int64_t size = br_log_size_bytes(log);
    bool swapped = true;
    CU_ASSERT_EQUAL(br_clean_job_commit(log, job, &swapped), 0);
    CU_ASSERT_FALSE(swapped);
    br_clean_job_free(job);
    CU_ASSERT_EQUAL(count_files(".cleaned"), 0);
    CU_ASSERT_EQUAL(br_log_size_bytes(log), size);
    struct readback r;
    read_all(log, &r);
    CU_ASSERT_EQUAL((int64_t)r.n, 1000 - second.base_offset);
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

static void test_open_removes_undecided_cleaned_files(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 1000, 10, &PLAIN, NOW - HOUR / 2);
    struct br_clean_params p = params(0);
    struct br_clean_job *job = NULL;
    CU_ASSERT_EQUAL_FATAL(br_clean_job_prepare(log, &p, &job), 0);
    CU_ASSERT_EQUAL_FATAL(br_clean_job_run(job, NULL), 0);
    /* a crash now: the .cleaned files stay, the job is never committed */
    int cleaned = count_files(".log.cleaned");
    CU_ASSERT(cleaned > 0);
    char keep[PATH_MAX];
    char tmp[PATH_MAX + 8];
    (void)snprintf(keep, sizeof keep, "%s/00000000000000000000.log.cleaned", pdir);
    (void)snprintf(tmp, sizeof tmp, "%s.keep", keep);
    CU_ASSERT_EQUAL(link(keep, tmp), 0);
    br_clean_job_free(job);
    CU_ASSERT_EQUAL(rename(tmp, keep), 0);
    br_log_close(log);
    log = open_log(2048);
    CU_ASSERT_EQUAL(count_files(".cleaned"), 0);
    struct readback r;
    read_all(log, &r);
    CU_ASSERT_EQUAL(r.n, 1000);
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

/* A crash after the swap was decided: group g renamed to .swap, and maybe
 * some of its old segments already gone. */
static void crash_after_decision(bool delete_some_old)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 2000, 1500, &PLAIN, NOW - HOUR / 2); /* 500 keys written twice */
    struct br_clean_params p = params(0);
    p.segment_bytes = 8192; /* several groups */
    struct br_clean_job *job = NULL;
    CU_ASSERT_EQUAL_FATAL(br_clean_job_prepare(log, &p, &job), 0);
    CU_ASSERT_EQUAL_FATAL(br_clean_job_run(job, NULL), 0);
    const struct br_clean_stats *st = br_clean_job_stats(job);
    CU_ASSERT(st->segments_after > 1);
    /* the first group is decided: its files become .swap */
    char from[PATH_MAX];
    char to[PATH_MAX];
    static const char *const sfx[] = {"index", "timeindex", "log"};
    for (int i = 0; i < 3; i++) {
        (void)snprintf(from, sizeof from, "%s/00000000000000000000.%s.cleaned", pdir, sfx[i]);
        (void)snprintf(to, sizeof to, "%s/00000000000000000000.%s.swap", pdir, sfx[i]);
        CU_ASSERT_EQUAL(rename(from, to), 0);
    }
    /* the old segments of the first group: those below the .swap's end */
    struct br_log_segment_info s1;
    CU_ASSERT_EQUAL(br_log_segment_info(log, 1, &s1), 0);
    br_clean_job_free(job); /* removes the other groups' .cleaned files */
    br_log_close(log);
    if (delete_some_old) {
        (void)snprintf(from, sizeof from, "%s/%020" PRId64 ".log", pdir, s1.base_offset);
        CU_ASSERT_EQUAL(unlink(from), 0);
    }
    log = open_log(2048);
    CU_ASSERT_EQUAL(count_files(".swap"), 0);
    CU_ASSERT_EQUAL(count_files(".cleaned"), 0);
    struct readback r;
    read_all(log, &r);
    assert_offsets_increase(&r);
    CU_ASSERT_EQUAL(r.recs[r.n - 1].offset, 1999);
    for (size_t i = 0; i + 1 < br_log_segment_count(log); i++) {
        struct br_log_segment_info si;
        CU_ASSERT_EQUAL(br_log_segment_info(log, i, &si), 0);
        CU_ASSERT(si.size_bytes <= 8192); /* groups packed within segment.bytes */
    }
    for (int k = 0; k < 1500; k += 7) {
        char key[16];
        char want[32];
        size_t count = 0;
        (void)snprintf(key, sizeof key, "k%d", k);
        (void)snprintf(want, sizeof want, "v%d", k < 500 ? 1500 + k : k);
        const struct got *g = find_key(&r, key, &count);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        if (g == NULL) {
            continue;
        }
        CU_ASSERT_STRING_EQUAL(g->value, want);
    }
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

/* A crash after a decided swap renamed its .log.swap but not its index
 * .swap files: the open removes them (the segment keeps its own index). */
static void test_open_removes_index_swaps_without_their_segment(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 300, 300, &PLAIN, NOW - HOUR / 2);
    CU_ASSERT(br_log_segment_count(log) > 1);
    br_log_close(log);
    static const char *const sfx[] = {"index", "timeindex"};
    for (int i = 0; i < 2; i++) {
        char name[PATH_MAX];
        (void)snprintf(name, sizeof name, "%s/00000000000000000000.%s.swap", pdir, sfx[i]);
        FILE *f = fopen(name, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        if (f != NULL) {
            (void)fputs("not an index", f);
            (void)fclose(f);
        }
    }
    CU_ASSERT_EQUAL(count_files(".swap"), 2);
    log = open_log(2048);
    CU_ASSERT_EQUAL(count_files(".swap"), 0);
    struct readback r;
    read_all(log, &r);
    CU_ASSERT_EQUAL(r.n, 300);
    assert_offsets_increase(&r);
    readback_free(&r);
    br_log_close(log);
    cleanup_dir();
}

static void test_open_completes_a_decided_swap(void)
{
    crash_after_decision(false);
}

static void test_open_completes_a_half_done_swap(void)
{
    crash_after_decision(true);
}

/* ------------------------------------------------------------- retention */

static void test_retention_by_time_uses_largest_timestamp(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 500, 1000, &PLAIN, NOW - 3 * HOUR);
    int64_t young = br_log_end_offset(log);
    updates(log, 500, 1000, 1000, &PLAIN, NOW - HOUR / 2);
    size_t deleted = 0;
    int64_t leo = br_log_end_offset(log);
    CU_ASSERT_EQUAL(
        br_retention_apply(log, true /* cleanup.policy delete */, 2 * HOUR, -1, leo, NOW, &deleted),
        0);
    CU_ASSERT(deleted > 0);
    CU_ASSERT(br_log_start_offset(log) <= young);
    CU_ASSERT(br_log_start_offset(log) > 0);
    struct br_log_segment_info first;
    CU_ASSERT_EQUAL(br_log_segment_info(log, 0, &first), 0);
    CU_ASSERT_EQUAL(first.base_offset, br_log_start_offset(log));
    /* compact only: time does not delete */
    CU_ASSERT_EQUAL(br_retention_apply(log, false, 0, -1, leo, NOW, &deleted), 0);
    CU_ASSERT_EQUAL(deleted, 0);
    /* everything expired, the active segment too: rolled, all gone */
    CU_ASSERT_EQUAL(br_retention_apply(log, true, 60000, -1, leo, NOW, &deleted), 0);
    CU_ASSERT_EQUAL(br_log_start_offset(log), leo);
    CU_ASSERT_EQUAL(br_log_size_bytes(log), 0);
    CU_ASSERT_EQUAL(br_log_segment_count(log), 1);
    br_log_close(log);
    cleanup_dir();
}

static void test_retention_by_size_and_high_watermark(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 1000, 1000, &PLAIN, NOW);
    int64_t size = br_log_size_bytes(log);
    size_t deleted = 0;
    /* the HW at 0 protects everything */
    CU_ASSERT_EQUAL(br_retention_apply(log, true, -1, size / 2, 0, NOW, &deleted), 0);
    CU_ASSERT_EQUAL(deleted, 0);
    int64_t leo = br_log_end_offset(log);
    CU_ASSERT_EQUAL(br_retention_apply(log, true, -1, size / 2, leo, NOW, &deleted), 0);
    CU_ASSERT(deleted > 0);
    /* Kafka's rule: what stays is at least retention.bytes, by less than a
     * segment */
    CU_ASSERT(br_log_size_bytes(log) >= size / 2);
    CU_ASSERT(br_log_size_bytes(log) < size / 2 + 2048);
    CU_ASSERT(br_log_start_offset(log) > 0);
    br_log_close(log);
    cleanup_dir();
}

static void test_retention_deletes_below_a_moved_log_start(void)
{
    setup_dir();
    struct br_log *log = open_log(2048);
    updates(log, 0, 1000, 1000, &PLAIN, NOW);
    CU_ASSERT_EQUAL(br_log_set_start_offset(log, 700), 0);
    size_t deleted = 0;
    CU_ASSERT_EQUAL(br_retention_apply(log, false, -1, -1, 1000, NOW, &deleted), 0);
    CU_ASSERT(deleted > 0);
    CU_ASSERT_EQUAL(br_log_start_offset(log), 700);
    struct br_log_segment_info first;
    CU_ASSERT_EQUAL(br_log_segment_info(log, 0, &first), 0);
    CU_ASSERT(first.base_offset <= 700);
    struct br_log_slice s;
    CU_ASSERT_EQUAL(br_log_read(log, 699, 1000, 1000, true, &s), KP_ERR_OFFSET_OUT_OF_RANGE);
    br_log_close(log);
    cleanup_dir();
}

/* ------------------------------------------------------------- mailbox */

struct poster {
    struct br_mailbox *mb;
    struct br_mail mails[100];
};

static void *post_all(void *arg)
{
    struct poster *p = arg;
    for (int i = 0; i < 100; i++) {
        p->mails[i].deliver = NULL; /* taken here, never delivered */
        br_mailbox_post(p->mb, &p->mails[i]);
    }
    return NULL;
}

static void test_mailbox_hands_over_every_message_in_order(void)
{
    struct poster p;
    CU_ASSERT_EQUAL_FATAL(br_mailbox_create(&p.mb), 0);
    CU_ASSERT_PTR_NULL(br_mailbox_take_all(p.mb));
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, post_all, &p), 0);
    CU_ASSERT_EQUAL(pthread_join(th, NULL), 0);
    /* the eventfd is readable */
    uint64_t v = 0;
    CU_ASSERT_EQUAL(read(br_mailbox_fd(p.mb), &v, sizeof v), (ssize_t)sizeof v);
    CU_ASSERT(v >= 1);
    int n = 0;
    for (struct br_mail *m = br_mailbox_take_all(p.mb); m != NULL; m = m->next) {
        CU_ASSERT_PTR_EQUAL(m, &p.mails[n]);
        n++;
    }
    CU_ASSERT_EQUAL(n, 100);
    CU_ASSERT_PTR_NULL(br_mailbox_take_all(p.mb));
    br_mailbox_free(p.mb);
}

/* Several threads post at once while the consumer drains as the reactor
 * does: it waits in epoll (level-triggered, as br_net_watch_add registers
 * the watch) for the mailbox's eventfd and takes everything when it fires,
 * never otherwise. A wake-up lost between a post and a take leaves mail
 * queued with the eventfd quiet: the consumer then waits out its deadline
 * and the test fails instead of hanging. */
#define POSTERS 4
#define POSTS 200
#define ROUNDS 100

struct numbered_mail {
    struct br_mail mail; /* first: the mailbox hands back this pointer */
    int thread;
    int seq;
};

struct racing_poster {
    struct br_mailbox *mb;
    pthread_barrier_t *start;
    int thread;
    struct numbered_mail *mails; /* POSTS of them, owned by the test */
};

static void *post_racing(void *arg)
{
    struct racing_poster *p = arg;
    (void)pthread_barrier_wait(p->start);
    for (int i = 0; i < POSTS; i++) {
        p->mails[i].mail.deliver = NULL; /* taken by the test, never delivered */
        p->mails[i].thread = p->thread;
        p->mails[i].seq = i;
        br_mailbox_post(p->mb, &p->mails[i].mail);
        if (i % 64 == p->thread) {
            (void)sched_yield(); /* let the consumer in between posts */
        }
    }
    return NULL;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One round: POSTERS threads post POSTS messages each while this thread
 * drains; returns how many messages arrived (all of them, or fewer when
 * the deadline passed), having checked each arrives once and in order. */
static int racing_round(struct br_mailbox *mb, int ep, int *takes)
{
    static struct numbered_mail mails[POSTERS][POSTS];
    struct racing_poster posters[POSTERS];
    pthread_t th[POSTERS];
    pthread_barrier_t start;
    CU_ASSERT_EQUAL_FATAL(pthread_barrier_init(&start, NULL, POSTERS + 1), 0);
    for (int t = 0; t < POSTERS; t++) {
        posters[t] = (struct racing_poster){mb, &start, t, mails[t]};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[t], NULL, post_racing, &posters[t]), 0);
    }
    (void)pthread_barrier_wait(&start);

    int next[POSTERS] = {0};
    int seen = 0;
    bool in_order = true;
    /* generous: a round takes milliseconds, under TSan well under a
     * second; only a lost wake-up waits this out */
    int64_t deadline = mono_ms() + 30000;
    while (seen < POSTERS * POSTS) {
        int64_t left = deadline - mono_ms();
        if (left <= 0) {
            break;
        }
        struct epoll_event got;
        int n = epoll_wait(ep, &got, 1, (int)left);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        CU_ASSERT_FATAL(n >= 0);
        if (n == 0) {
            continue; /* the deadline decides */
        }
        CU_ASSERT_PTR_EQUAL(got.data.ptr, (void *)mb);
        (*takes)++;
        struct br_mail *m = br_mailbox_take_all(mb);
        while (m != NULL) {
            struct br_mail *after = m->next;
            const struct numbered_mail *nm = (const struct numbered_mail *)m;
            if (nm->thread < 0 || nm->thread >= POSTERS || nm->seq != next[nm->thread]) {
                in_order = false;
            } else {
                next[nm->thread]++;
            }
            seen++;
            m = after;
        }
    }
    for (int t = 0; t < POSTERS; t++) {
        CU_ASSERT_EQUAL(pthread_join(th[t], NULL), 0);
    }
    (void)pthread_barrier_destroy(&start);
    CU_ASSERT(in_order);
    for (int t = 0; t < POSTERS; t++) {
        CU_ASSERT_EQUAL(next[t], POSTS); /* each exactly once, in order */
    }
    return seen;
}

static void test_mailbox_concurrent_posts_arrive_once_in_order_without_lost_wakeups(void)
{
    struct br_mailbox *mb = NULL;
    CU_ASSERT_EQUAL_FATAL(br_mailbox_create(&mb), 0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    CU_ASSERT_FATAL(ep >= 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = mb};
    CU_ASSERT_EQUAL_FATAL(epoll_ctl(ep, EPOLL_CTL_ADD, br_mailbox_fd(mb), &ev), 0);
    /* each round ends with a last post whose wake-up nothing later can
     * stand in for: several rounds give a lost wake-up several chances */
    int takes = 0;
    int rounds = 0;
    for (; rounds < ROUNDS; rounds++) {
        int seen = racing_round(mb, ep, &takes);
        if (seen != POSTERS * POSTS) {
            (void)fprintf(stderr, "\n  round %d: %d of %d messages arrived before the deadline\n",
                          rounds, seen, POSTERS * POSTS);
            CU_FAIL("a wake-up was lost: mail stayed queued with the eventfd quiet");
            break;
        }
        /* nothing left behind; a wake-up still pending finds the list empty */
        CU_ASSERT_PTR_NULL(br_mailbox_take_all(mb));
    }
    printf("\n  %d rounds of %d messages from %d threads in %d takes\n", rounds, POSTERS * POSTS,
           POSTERS, takes);
    (void)close(ep);
    br_mailbox_free(mb);
}

int main(void)
{
    static CU_TestInfo tests[] = {
        {"clean_keeps_latest_value_per_key_and_offsets",
         test_clean_keeps_latest_value_per_key_and_offsets},
        {"clean_never_touches_the_active_segment", test_clean_never_touches_the_active_segment},
    {"transactional_records_never_hide_earlier_values",
     test_transactional_records_never_hide_earlier_values},
    {"transactions_ended_by_their_markers", test_transactions_ended_by_their_markers},
        {"tombstones_go_after_delete_retention", test_tombstones_go_after_delete_retention},
        {"min_compaction_lag_keeps_recent_segments", test_min_compaction_lag_keeps_recent_segments},
        {"rebuilt_batches_keep_codec_producer_and_timestamps",
         test_rebuilt_batches_keep_codec_producer_and_timestamps},
        {"small_offset_map_cleans_in_passes", test_small_offset_map_cleans_in_passes},
        {"stopped_run_leaves_nothing", test_stopped_run_leaves_nothing},
        {"swap_is_discarded_when_the_log_changed", test_swap_is_discarded_when_the_log_changed},
        {"open_removes_undecided_cleaned_files", test_open_removes_undecided_cleaned_files},
        {"open_completes_a_decided_swap", test_open_completes_a_decided_swap},
        {"open_completes_a_half_done_swap", test_open_completes_a_half_done_swap},
        {"open_removes_index_swaps_without_their_segment",
         test_open_removes_index_swaps_without_their_segment},
        {"retention_by_time_uses_largest_timestamp", test_retention_by_time_uses_largest_timestamp},
        {"retention_by_size_and_high_watermark", test_retention_by_size_and_high_watermark},
        {"retention_deletes_below_a_moved_log_start",
         test_retention_deletes_below_a_moved_log_start},
        {"mailbox_hands_over_every_message_in_order",
         test_mailbox_hands_over_every_message_in_order},
        {"mailbox_concurrent_posts_arrive_once_in_order_without_lost_wakeups",
         test_mailbox_concurrent_posts_arrive_once_in_order_without_lost_wakeups},
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("broker-cleaner", tests);
}
