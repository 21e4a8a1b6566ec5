/* Unit tests for idempotent producers' state (broker/src/replica/
 * producer_state.h), its snapshot files (broker/src/storage/
 * producer_snapshot.h) and how a partition takes and loads them
 * (replica/partition.h), on a real log. Kafka 2.0's rules and format:
 * core/src/main/scala/kafka/log/ProducerStateManager.scala. */
#define _GNU_SOURCE

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/record_batch.h>

#include "base/fileref.h"
#include "base/logging.h"
#include "batches.h"
#include "cunit_run.h"
#include "replica/partition.h"
#include "replica/producer_state.h"
#include "storage/log.h"
#include "storage/producer_snapshot.h"
#include "tmpdir.h"

static char root[64];
static char pdir[128];

/* ---------------------------------------------------------------- the codec */

/* Two entries as Kafka 2.0's writeSnapshot lays them out (the schema's
 * fields in order, big-endian), the CRC32C of every byte after the CRC
 * field computed apart from our code. */
static const uint8_t kafka_vector[] = {
    0x00, 0x01,             /* version 1 */
    0x9b, 0xa6, 0x20, 0x7d, /* crc */
    0x00, 0x00, 0x00, 0x02, /* producer_entries: 2 */
    /* producer_id 1000, epoch 2, last_sequence 9, last_offset 41,
     * offset_delta 9, timestamp 1530000000000, coordinator_epoch -1,
     * current_txn_first_offset -1 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /**/ 0x00, 0x02, /**/
    0x00, 0x00, 0x00, 0x09, /**/ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x29, /**/
    0x00, 0x00, 0x00, 0x09, /**/ 0x00, 0x00, 0x01, 0x64, 0x3b, 0x1b, 0x44, 0x00, /**/
    0xff, 0xff, 0xff, 0xff, /**/ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    /* producer_id 4097, epoch 0, last_sequence INT32_MAX, last_offset 100,
     * offset_delta 3, timestamp 1530000000001, coordinator_epoch 5,
     * current_txn_first_offset 95 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x01, /**/ 0x00, 0x00, /**/
    0x7f, 0xff, 0xff, 0xff, /**/ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, /**/
    0x00, 0x00, 0x00, 0x03, /**/ 0x00, 0x00, 0x01, 0x64, 0x3b, 0x1b, 0x44, 0x01, /**/
    0x00, 0x00, 0x00, 0x05, /**/ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x5f,
};

static const struct br_psnap_entry vector_entries[2] = {
    {1000, 2, 9, 41, 9, INT64_C(1530000000000), -1, -1},
    {4097, 0, INT32_MAX, 100, 3, INT64_C(1530000000001), 5, 95},
};

static bool entries_eq(const struct br_psnap_entry *a, const struct br_psnap_entry *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].producer_id != b[i].producer_id || a[i].epoch != b[i].epoch ||
            a[i].last_seq != b[i].last_seq || a[i].last_offset != b[i].last_offset ||
            a[i].offset_delta != b[i].offset_delta || a[i].timestamp != b[i].timestamp ||
            a[i].coordinator_epoch != b[i].coordinator_epoch ||
            a[i].txn_first_offset != b[i].txn_first_offset) {
            return false;
        }
    }
    return true;
}

/* Our encoder writes Kafka's bytes exactly, and reads them back. */
static void test_snapshot_encodes_kafkas_bytes(void)
{
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    CU_ASSERT_EQUAL_FATAL(br_psnap_encode(vector_entries, 2, &w), 0);
    CU_ASSERT_EQUAL_FATAL(w.len, sizeof kafka_vector);
    CU_ASSERT_EQUAL(memcmp(w.buf, kafka_vector, sizeof kafka_vector), 0);
    kp_wr_free(&w);

    struct br_psnap_entry *e = NULL;
    size_t n = 0;
    const char *why = NULL;
    int line = 0;
    CU_ASSERT_EQUAL_FATAL(br_psnap_parse(kafka_vector, sizeof kafka_vector, &e, &n, &why, &line),
                          0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_TRUE(entries_eq(e, vector_entries, 2));
    kp_free(e);
}

/* Entries written and read back are the same; an empty state is a file of
 * ten bytes. */
static void test_snapshot_round_trip(void)
{
    struct br_psnap_entry in[50];
    for (int i = 0; i < 50; i++) {
        in[i] = (struct br_psnap_entry){(int64_t)i * 7919, (int16_t)(i % 3), i * 11, 1000 + i, i % 5,
                                        1700000000000 + i, -1, -1};
    }
    struct kp_writer w;
    kp_wr_init(&w, 1 << 20);
    CU_ASSERT_EQUAL_FATAL(br_psnap_encode(in, 50, &w), 0);
    CU_ASSERT_EQUAL(w.len, BR_PSNAP_HEADER_BYTES + 50 * BR_PSNAP_ENTRY_BYTES);
    struct br_psnap_entry *e = NULL;
    size_t n = 0;
    const char *why = NULL;
    int line = 0;
    CU_ASSERT_EQUAL_FATAL(br_psnap_parse(w.buf, w.len, &e, &n, &why, &line), 0);
    CU_ASSERT_EQUAL_FATAL(n, 50);
    CU_ASSERT_TRUE(entries_eq(e, in, 50));
    kp_free(e);
    kp_wr_free(&w);

    kp_wr_init(&w, 1 << 20);
    CU_ASSERT_EQUAL_FATAL(br_psnap_encode(NULL, 0, &w), 0);
    CU_ASSERT_EQUAL(w.len, 10);
    CU_ASSERT_EQUAL(br_psnap_parse(w.buf, w.len, &e, &n, &why, &line), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(e);
    kp_wr_free(&w);
}

/* A file with a flipped bit, a wrong version, cut short or with bytes
 * added is corrupt, with a reason; never a crash. */
static void test_snapshot_rejects_damage(void)
{
    uint8_t buf[sizeof kafka_vector + 1];
    struct br_psnap_entry *e = NULL;
    size_t n = 0;
    const char *why = NULL;
    int line = 0;
    memcpy(buf, kafka_vector, sizeof kafka_vector);
    buf[40] ^= 0x10;
    CU_ASSERT_EQUAL(br_psnap_parse(buf, sizeof kafka_vector, &e, &n, &why, &line), KP_E_CORRUPT);
    CU_ASSERT_STRING_EQUAL(why, "CRC mismatch");
    CU_ASSERT_PTR_NULL(e);

    memcpy(buf, kafka_vector, sizeof kafka_vector);
    buf[1] = 2;
    CU_ASSERT_EQUAL(br_psnap_parse(buf, sizeof kafka_vector, &e, &n, &why, &line), KP_E_CORRUPT);
    CU_ASSERT_STRING_EQUAL(why, "unknown version");

    for (size_t cut = 0; cut < sizeof kafka_vector; cut++) {
        CU_ASSERT_EQUAL(br_psnap_parse(kafka_vector, cut, &e, &n, &why, &line), KP_E_CORRUPT);
        CU_ASSERT_PTR_NULL(e);
    }
    memcpy(buf, kafka_vector, sizeof kafka_vector);
    buf[sizeof kafka_vector] = 0;
    CU_ASSERT_EQUAL(br_psnap_parse(buf, sizeof buf, &e, &n, &why, &line), KP_E_CORRUPT);
}

/* ---------------------------------------------------------------- the rules */

static struct br_producer_append batch_at(int64_t pid, int16_t epoch, int32_t first_seq,
                                          int32_t count, int64_t first_offset)
{
    return (struct br_producer_append){pid, epoch, first_seq, br_seq_add(first_seq, count - 1),
                                       first_offset, count - 1, 1000, false};
}

static enum br_seq_verdict check(const struct br_producers *ps, int64_t log_start,
                                 struct br_producer_append a, int64_t *dup, int *err)
{
    *dup = -1;
    *err = 0;
    return br_producers_check(ps, log_start, &a, dup, err);
}

/* Kafka 2.0's checkSequence for a producer the partition does not know:
 * sequence 0 starts it, any other is UNKNOWN_PRODUCER_ID (not
 * OUT_OF_ORDER_SEQUENCE_NUMBER, which is for a known producer). */
static void test_unknown_producer_must_start_at_zero(void)
{
    struct br_producers ps = {0};
    int64_t dup = 0;
    int err = 0;
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(7, 0, 5, 2, 0), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_UNKNOWN_PRODUCER_ID);
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(7, 3, 5, 2, 0), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_UNKNOWN_PRODUCER_ID);
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(7, 0, 0, 2, 0), &dup, &err), BR_SEQ_APPEND);

    /* a known producer: a new epoch must start at 0, else out of order */
    struct br_producer_append a = batch_at(7, 0, 0, 2, 0);
    CU_ASSERT_EQUAL(br_producers_record(&ps, &a, 1, 100), 0);
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(7, 1, 5, 2, 2), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(7, 1, 0, 2, 2), &dup, &err), BR_SEQ_APPEND);
    /* same epoch: the next sequence, a retry, a gap, an older epoch */
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(7, 0, 2, 2, 2), &dup, &err), BR_SEQ_APPEND);
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(7, 0, 0, 2, 2), &dup, &err), BR_SEQ_DUPLICATE);
    CU_ASSERT_EQUAL(dup, 0);
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(7, 0, 3, 2, 2), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    a = batch_at(7, 4, 0, 1, 2);
    CU_ASSERT_EQUAL(br_producers_record(&ps, &a, 2, 100), 0);
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(7, 3, 0, 1, 3), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_INVALID_PRODUCER_EPOCH);
    /* the sequence wraps after INT32_MAX */
    a = batch_at(8, 0, INT32_MAX - 1, 2, 10);
    CU_ASSERT_EQUAL(a.last_seq, INT32_MAX);
    CU_ASSERT_EQUAL(br_producers_record(&ps, &a, 3, 100), 0);
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(8, 0, 0, 1, 12), &dup, &err), BR_SEQ_APPEND);
    br_producers_free(&ps);
}

/* The log start offset matters (Kafka's isProducerRetained and
 * truncateHead): a producer whose batches all lie below it is unknown, and
 * a retained batch below it is no duplicate any more. */
static void test_producer_below_the_log_start_is_unknown(void)
{
    struct br_producers ps = {0};
    int64_t dup = 0;
    int err = 0;
    struct br_producer_append a = batch_at(7, 0, 0, 5, 10); /* offsets 10-14 */
    CU_ASSERT_EQUAL(br_producers_record(&ps, &a, 1, 100), 0);
    a = batch_at(7, 0, 5, 5, 20); /* offsets 20-24 */
    CU_ASSERT_EQUAL(br_producers_record(&ps, &a, 1, 100), 0);
    CU_ASSERT_EQUAL(check(&ps, 15, batch_at(7, 0, 0, 5, 30), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER); /* known, not a duplicate */
    CU_ASSERT_EQUAL(check(&ps, 14, batch_at(7, 0, 0, 5, 30), &dup, &err), BR_SEQ_DUPLICATE);
    CU_ASSERT_EQUAL(dup, 10);
    CU_ASSERT_EQUAL(check(&ps, 25, batch_at(7, 0, 10, 5, 30), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_UNKNOWN_PRODUCER_ID);
    CU_ASSERT_EQUAL(check(&ps, 25, batch_at(7, 0, 0, 5, 30), &dup, &err), BR_SEQ_APPEND);
    /* epoch -1 of a producer never seen: no last sequence (Kafka's
     * NO_PRODUCER_EPOCH entry) */
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(9, -1, 3, 1, 30), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(9, -1, 0, 1, 30), &dup, &err), BR_SEQ_APPEND);

    /* neither goes into a snapshot, nor comes back from one */
    struct br_psnap_entry *e = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(br_producers_to_snapshot(&ps, 25, &e, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(br_producers_to_snapshot(&ps, 24, &e, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_TRUE(e[0].producer_id == 7 && e[0].last_seq == 9 && e[0].last_offset == 24 &&
                   e[0].offset_delta == 4 && e[0].coordinator_epoch == -1 &&
                   e[0].txn_first_offset == -1);
    struct br_producers back = {0};
    CU_ASSERT_EQUAL(br_producers_load_snapshot(&back, e, n, 25, 100), 0);
    CU_ASSERT_EQUAL(back.n, 0);
    CU_ASSERT_EQUAL(br_producers_load_snapshot(&back, e, n, 0, 100), 0);
    CU_ASSERT_EQUAL(back.n, 1);
    CU_ASSERT_EQUAL(check(&back, 0, batch_at(7, 0, 5, 5, 30), &dup, &err), BR_SEQ_DUPLICATE);
    CU_ASSERT_EQUAL(dup, 20);
    CU_ASSERT_EQUAL(check(&back, 0, batch_at(7, 0, 10, 1, 30), &dup, &err), BR_SEQ_APPEND);
    kp_free(e);
    br_producers_free(&back);

    /* every retained batch is an entry, a producer's oldest first: the
     * five come back, and Kafka's reader (the last entry of an id wins)
     * gets the last one */
    CU_ASSERT_EQUAL(br_producers_to_snapshot(&ps, 0, &e, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_TRUE(e[0].last_offset == 14 && e[1].last_offset == 24);
    CU_ASSERT_EQUAL(br_producers_load_snapshot(&back, e, n, 0, 100), 0);
    CU_ASSERT_EQUAL(check(&back, 0, batch_at(7, 0, 0, 5, 30), &dup, &err), BR_SEQ_DUPLICATE);
    CU_ASSERT_EQUAL(dup, 10);
    CU_ASSERT_EQUAL(check(&back, 0, batch_at(7, 0, 5, 5, 30), &dup, &err), BR_SEQ_DUPLICATE);
    CU_ASSERT_EQUAL(dup, 20);
    kp_free(e);
    br_producers_free(&back);
    br_producers_free(&ps);
}

/* ---------------------------------------------------------------- on a log */

static struct br_append produce(struct br_partition *p, int64_t pid, int count, int32_t seq)
{
    size_t len = 0;
    uint8_t *b = st_producer_batch(count, pid, pid >= 0 ? 0 : -1, seq, &len);
    struct br_append app;
    CU_ASSERT_EQUAL(br_partition_append_leader(p, b, len, 5000, &app), 0);
    kp_free(b);
    return app;
}

static struct br_log *open_log(struct br_filecache *fc, int64_t segment_bytes)
{
    struct br_log_config c;
    br_log_config_defaults(&c);
    c.segment_bytes = segment_bytes;
    struct br_log *log = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_open(pdir, &c, 0, fc, &log), 0);
    return log;
}

static void setup(struct br_filecache **fc, struct br_partition *p, int64_t segment_bytes)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(st_tmpdir_make(root, sizeof root, "producers"));
    (void)snprintf(pdir, sizeof pdir, "%s/t-0", root);
    CU_ASSERT_EQUAL_FATAL(br_filecache_new(16, fc), 0);
    memset(p, 0, sizeof *p);
    p->log = open_log(*fc, segment_bytes);
    br_partition_become_leader(p, NULL);
}

/* The partition closed and opened again, its producers loaded. */
static void reopen(struct br_filecache *fc, struct br_partition *p, int64_t segment_bytes)
{
    br_log_close(p->log);
    br_producers_free(&p->producers);
    memset(p, 0, sizeof *p);
    p->log = open_log(fc, segment_bytes);
    br_partition_become_leader(p, NULL);
    (void)br_partition_load_producers(p);
}

static void teardown(struct br_filecache *fc, struct br_partition *p)
{
    br_log_close(p->log);
    br_producers_free(&p->producers);
    br_filecache_free(fc);
    CU_ASSERT_EQUAL(st_tmpdir_remove(root), 0);
}

static bool snapshot_exists(int64_t offset)
{
    char path[256];
    CU_ASSERT_EQUAL_FATAL(br_psnap_path(pdir, offset, path, sizeof path), 0);
    return access(path, F_OK) == 0;
}

static void write_file(int64_t offset, const uint8_t *data, size_t len)
{
    char path[256];
    CU_ASSERT_EQUAL_FATAL(br_psnap_path(pdir, offset, path, sizeof path), 0);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(data, 1, len, f), len);
    CU_ASSERT_EQUAL(fclose(f), 0);
}

/* A segment roll takes a snapshot at the new segment's base with the state
 * before the batch that rolled it (Kafka's Log.roll); a clean close one at
 * the log end; each only past the last one. */
static void test_roll_and_close_take_snapshots(void)
{
    struct br_filecache *fc = NULL;
    struct br_partition p;
    setup(&fc, &p, 400);
    CU_ASSERT_EQUAL(produce(&p, 7, 3, 0).base, 0);
    int64_t first_roll = -1;
    for (int i = 0; i < 20 && first_roll < 0; i++) {
        int64_t base = produce(&p, -1, 3, -1).base;
        if (br_log_segment_count(p.log) > 1) {
            first_roll = base;
        }
    }
    CU_ASSERT_FATAL(first_roll > 0);
    CU_ASSERT_TRUE(snapshot_exists(first_roll));
    CU_ASSERT_EQUAL(p.producers.snap_offset, first_roll);

    char path[256];
    CU_ASSERT_EQUAL_FATAL(br_psnap_path(pdir, first_roll, path, sizeof path), 0);
    struct br_psnap_entry *e = NULL;
    size_t n = 0;
    const char *why = NULL;
    CU_ASSERT_EQUAL_FATAL(br_psnap_read(path, &e, &n, &why), 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_TRUE(e[0].producer_id == 7 && e[0].epoch == 0 && e[0].last_seq == 2 &&
                   e[0].last_offset == 2 && e[0].offset_delta == 2);
    kp_free(e);

    int64_t leo = br_log_end_offset(p.log);
    br_partition_snapshot_producers(&p);
    CU_ASSERT_TRUE(snapshot_exists(leo));
    CU_ASSERT_EQUAL_FATAL(br_psnap_path(pdir, leo, path, sizeof path), 0);
    CU_ASSERT_EQUAL(unlink(path), 0);
    br_partition_snapshot_producers(&p); /* not past the last one: none */
    CU_ASSERT_FALSE(snapshot_exists(leo));
    teardown(fc, &p);
}

/* The state comes from the latest snapshot plus the log after it: a
 * producer the log does not show (its batch is only in a snapshot written
 * as Kafka writes them) is known, a retry of its last batch a duplicate. */
static void test_state_loads_from_a_kafka_snapshot_and_the_log_after_it(void)
{
    struct br_filecache *fc = NULL;
    struct br_partition p;
    setup(&fc, &p, 1 << 20);
    for (int i = 0; i < 4; i++) {
        (void)produce(&p, -1, 30, -1); /* offsets 0-119, no producer */
    }
    CU_ASSERT_EQUAL(produce(&p, 9, 5, 0).base, 120); /* 120-124, after the snapshot */
    CU_ASSERT_EQUAL(br_log_flush(p.log), 0);
    /* producer 1000 at 32-41 (sequences 0-9), 4097 at 97-100 */
    write_file(101, kafka_vector, sizeof kafka_vector);
    reopen(fc, &p, 1 << 20);
    CU_ASSERT_EQUAL(p.producers.n, 3);
    CU_ASSERT_EQUAL(p.producers.snap_offset, 101);

    size_t len = 0;
    uint8_t *b = st_producer_batch(10, 1000, 2, 0, &len);
    struct br_append app;
    CU_ASSERT_EQUAL(br_partition_append_leader(&p, b, len, 5000, &app), 0);
    kp_free(b);
    CU_ASSERT_TRUE(app.duplicate && app.base == 32);
    b = st_producer_batch(1, 1000, 2, 10, &len);
    CU_ASSERT_EQUAL(br_partition_append_leader(&p, b, len, 5000, &app), 0);
    kp_free(b);
    CU_ASSERT_TRUE(!app.duplicate && app.seq_error == 0 && app.base == 125);
    CU_ASSERT_TRUE(produce(&p, 9, 5, 0).duplicate); /* from the log after the snapshot */
    CU_ASSERT_EQUAL(produce(&p, 9, 1, 5).base, 126);
    teardown(fc, &p);
}

/* A corrupt snapshot is ignored with a warning and deleted; the next older
 * one and the log after it give the state. Snapshots past the log end (a
 * truncation cut their batches) go at the load. */
static void test_corrupt_or_stale_snapshot_is_not_used(void)
{
    struct br_filecache *fc = NULL;
    struct br_partition p;
    setup(&fc, &p, 1 << 20);
    CU_ASSERT_EQUAL(produce(&p, 7, 5, 0).base, 0);
    br_partition_snapshot_producers(&p); /* at 5 */
    CU_ASSERT_EQUAL(produce(&p, 7, 5, 5).base, 5);
    CU_ASSERT_EQUAL(produce(&p, 8, 5, 0).base, 10);
    CU_ASSERT_EQUAL(br_log_flush(p.log), 0);
    uint8_t bad[sizeof kafka_vector];
    memcpy(bad, kafka_vector, sizeof bad);
    bad[20] ^= 1;
    write_file(15, bad, sizeof bad);
    write_file(40, kafka_vector, sizeof kafka_vector); /* past the log end */
    reopen(fc, &p, 1 << 20);
    CU_ASSERT_FALSE(snapshot_exists(15));
    CU_ASSERT_FALSE(snapshot_exists(40));
    CU_ASSERT_TRUE(snapshot_exists(5));
    CU_ASSERT_EQUAL(p.producers.snap_offset, 5);
    CU_ASSERT_EQUAL(p.producers.n, 2);
    CU_ASSERT_TRUE(produce(&p, 7, 5, 5).duplicate);
    CU_ASSERT_TRUE(produce(&p, 8, 5, 0).duplicate);

    /* a truncation below a snapshot: it goes, the state is what the log
     * keeps */
    br_partition_snapshot_producers(&p); /* at 15 */
    CU_ASSERT_TRUE(snapshot_exists(15));
    CU_ASSERT_EQUAL(br_log_truncate_to(p.log, 10), 0);
    br_partition_reload_producers(&p);
    CU_ASSERT_FALSE(snapshot_exists(15));
    CU_ASSERT_EQUAL(produce(&p, 8, 5, 5).seq_error, KP_ERR_UNKNOWN_PRODUCER_ID);
    CU_ASSERT_TRUE(produce(&p, 7, 5, 5).duplicate);
    teardown(fc, &p);
}

/* Retention deletes the snapshots below the new log start. */
static void test_retention_deletes_snapshots_below_the_start(void)
{
    struct br_filecache *fc = NULL;
    struct br_partition p;
    setup(&fc, &p, 400);
    for (int i = 0; i < 30; i++) {
        (void)produce(&p, -1, 3, -1);
    }
    CU_ASSERT_FATAL(br_log_segment_count(p.log) > 3);
    int64_t *offs = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_psnap_list(pdir, &offs, &n), 0);
    CU_ASSERT_TRUE(n >= 2); /* the last two segments' at least */
    kp_free(offs);
    struct br_log_segment_info last;
    CU_ASSERT_EQUAL_FATAL(
        br_log_segment_info(p.log, br_log_segment_count(p.log) - 1, &last), 0);
    CU_ASSERT_EQUAL(br_log_delete_segments_before(p.log, last.base_offset, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(br_psnap_list(pdir, &offs, &n), 0);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_TRUE(offs[i] >= br_log_start_offset(p.log));
    }
    CU_ASSERT_TRUE(n >= 1);
    kp_free(offs);
    teardown(fc, &p);
}


/* Kafka 2.0's ProducerAppendInfo and appendEndTxnMarker: a transactional
 * batch opens its producer's transaction at its first offset; a plain batch
 * of that producer is INVALID_TXN_STATE while it is open; a marker of an
 * older epoch or coordinator epoch is refused; the marker ends it (the
 * first open transaction is the next one); a producer with a transaction
 * open is never the one forgotten for room. */
static void test_transactions_open_and_end(void)
{
    struct br_producers ps = {0};
    struct br_producer_append a = batch_at(7, 2, 0, 3, 10); /* offsets 10-12 */
    a.transactional = true;
    CU_ASSERT_EQUAL(br_producers_first_open_txn(&ps), -1);
    CU_ASSERT_EQUAL(br_producers_record(&ps, &a, 1, 2), 0);
    CU_ASSERT_EQUAL(br_producers_first_open_txn(&ps), 10);
    a = batch_at(7, 2, 3, 2, 13); /* the same transaction goes on */
    a.transactional = true;
    CU_ASSERT_EQUAL(br_producers_record(&ps, &a, 2, 2), 0);
    CU_ASSERT_EQUAL(br_producers_first_open_txn(&ps), 10);
    struct br_producer_append plain = batch_at(7, 2, 5, 1, 15);
    CU_ASSERT_EQUAL(br_producers_check_txn(&ps, &plain), KP_ERR_INVALID_TXN_STATE);
    plain.transactional = true;
    CU_ASSERT_EQUAL(br_producers_check_txn(&ps, &plain), KP_ERR_NONE);
    /* a second producer's transaction, later */
    struct br_producer_append b = batch_at(8, 0, 0, 1, 20);
    b.transactional = true;
    CU_ASSERT_EQUAL(br_producers_record(&ps, &b, 3, 2), 0);
    /* room for 2 producers, both with a transaction open: a third one
     * takes a new slot instead of forgetting one of them */
    struct br_producer_append c = batch_at(9, 0, 0, 1, 21);
    CU_ASSERT_EQUAL(br_producers_record(&ps, &c, 4, 2), 0);
    CU_ASSERT_EQUAL(ps.n, 3);
    /* markers: an older epoch, an older coordinator epoch */
    CU_ASSERT_EQUAL(br_producers_check_marker(&ps, 7, 1, 0), KP_ERR_INVALID_PRODUCER_EPOCH);
    struct br_txn_span done;
    CU_ASSERT_EQUAL(br_producers_end_txn(&ps, 8, 0, 5, 22, 5, &done), 0);
    CU_ASSERT_TRUE(done.producer_id == 8 && done.first_offset == 20 && done.last_offset == 22);
    CU_ASSERT_EQUAL(br_producers_check_marker(&ps, 8, 0, 4),
                    KP_ERR_TRANSACTION_COORDINATOR_FENCED);
    CU_ASSERT_EQUAL(br_producers_check_marker(&ps, 7, 2, 0), KP_ERR_NONE);
    CU_ASSERT_EQUAL(br_producers_first_open_txn(&ps), 10);
    /* a fencing abort in a bumped epoch: the transaction ends, the epoch
     * is the marker's and the batches start over */
    CU_ASSERT_EQUAL(br_producers_end_txn(&ps, 7, 3, 0, 23, 6, &done), 0);
    CU_ASSERT_TRUE(done.first_offset == 10 && done.last_offset == 23);
    CU_ASSERT_EQUAL(br_producers_first_open_txn(&ps), -1);
    CU_ASSERT_EQUAL(br_producers_check_txn(&ps, &plain), KP_ERR_NONE);
    int64_t dup = 0;
    int err = 0;
    CU_ASSERT_EQUAL(check(&ps, 0, batch_at(7, 2, 5, 1, 24), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_INVALID_PRODUCER_EPOCH);
    CU_ASSERT_EQUAL(check(&ps, 100, batch_at(7, 2, 0, 1, 24), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_INVALID_PRODUCER_EPOCH);
    /* the fenced epoch and the open transactions survive a snapshot */
    struct br_psnap_entry *e = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_producers_to_snapshot(&ps, 0, &e, &n), 0);
    struct br_producers back = {0};
    CU_ASSERT_EQUAL(br_producers_load_snapshot(&back, e, n, 0, 100), 0);
    kp_free(e);
    CU_ASSERT_EQUAL(check(&back, 0, batch_at(7, 2, 0, 1, 24), &dup, &err), BR_SEQ_ERROR);
    CU_ASSERT_EQUAL(err, KP_ERR_INVALID_PRODUCER_EPOCH);
    CU_ASSERT_EQUAL(check(&back, 0, batch_at(7, 3, 0, 1, 24), &dup, &err), BR_SEQ_APPEND);
    CU_ASSERT_EQUAL(br_producers_check_marker(&back, 8, 0, 4),
                    KP_ERR_TRANSACTION_COORDINATOR_FENCED);
    CU_ASSERT_EQUAL(br_producers_first_open_txn(&back), -1);
    br_producers_free(&back);
    /* a marker with nothing open here (an empty transaction): its own span */
    CU_ASSERT_EQUAL(br_producers_end_txn(&ps, 11, 0, 0, 30, 7, &done), 0);
    CU_ASSERT_TRUE(done.first_offset == 30 && done.last_offset == 30);
    br_producers_free(&ps);
}

static CU_TestInfo tests[] = {
    {"snapshot_encodes_kafkas_bytes", test_snapshot_encodes_kafkas_bytes},
    {"snapshot_round_trip", test_snapshot_round_trip},
    {"snapshot_rejects_damage", test_snapshot_rejects_damage},
    {"unknown_producer_must_start_at_zero", test_unknown_producer_must_start_at_zero},
    {"transactions_open_and_end", test_transactions_open_and_end},
    {"producer_below_the_log_start_is_unknown", test_producer_below_the_log_start_is_unknown},
    {"roll_and_close_take_snapshots", test_roll_and_close_take_snapshots},
    {"state_loads_from_a_kafka_snapshot_and_the_log_after_it",
     test_state_loads_from_a_kafka_snapshot_and_the_log_after_it},
    {"corrupt_or_stale_snapshot_is_not_used", test_corrupt_or_stale_snapshot_is_not_used},
    {"retention_deletes_snapshots_below_the_start",
     test_retention_deletes_snapshots_below_the_start},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-producer_state", tests);
}
