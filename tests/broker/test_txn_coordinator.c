/* Unit tests for the transaction coordinator's state machine
 * (broker/src/txn/coordinator.h), Kafka 2.0's TransactionCoordinator rules:
 * InitProducerId, AddPartitionsToTxn, EndTxn and their errors, fencing of an
 * open transaction by a new producer, the timeout abort, markers retried
 * while a partition cannot take them, and ids expiring. The ops record the
 * markers asked for instead of writing them to partitions (the broker's
 * integration-transactions covers the real ones). Links the txn layer. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/logging.h"
#include "cunit_run.h"
#include "txn/coordinator.h"
#include "txn/txn_log.h"

#include <samsa-protocol/alloc.h>

#define MAX_RECORDS 64

/* a record written to __transaction_state */
struct written {
    uint8_t key[128];
    int32_t klen;
    uint8_t value[512];
    int32_t vlen; /* -1: a tombstone */
};

struct marks {
    int64_t next_pid;
    bool refuse_writes; /* the log cannot take records now */
    struct written records[MAX_RECORDS];
    size_t nrecords;
    int calls;
    bool refuse; /* the partitions cannot take markers now */
    bool last_commit;
    int16_t last_epoch;
    size_t last_nparts;
};

static int new_pid(void *ctx, int64_t *id)
{
    struct marks *m = ctx;
    *id = m->next_pid++;
    return 0;
}

static bool write_markers(void *ctx, const struct br_txn *t, bool commit)
{
    struct marks *m = ctx;
    m->calls++;
    m->last_commit = commit;
    m->last_epoch = t->epoch;
    m->last_nparts = t->nparts;
    return !m->refuse;
}

static int write_record(void *ctx, const char *id, size_t id_len, struct kp_bytes key,
                        struct kp_bytes value, int64_t *log_end)
{
    (void)id;
    (void)id_len;
    struct marks *m = ctx;
    if (m->refuse_writes) {
        return KP_ERR_NOT_ENOUGH_REPLICAS;
    }
    CU_ASSERT_FATAL(m->nrecords < MAX_RECORDS && key.len <= 128 && value.len <= 512);
    struct written *w = &m->records[m->nrecords++];
    memcpy(w->key, key.ptr, (size_t)key.len);
    w->klen = key.len;
    w->vlen = value.len;
    if (value.len > 0) {
        memcpy(w->value, value.ptr, (size_t)value.len);
    }
    *log_end = (int64_t)m->nrecords;
    return 0;
}

static const struct br_txn_ops ops = {new_pid, write_record, write_markers};

static int add(struct br_txn_coordinator *c, struct br_txn *t, const char *topic, int32_t part,
               int64_t now)
{
    struct br_txn_partition_ref r = {topic, strlen(topic), part};
    return br_txn_add_partitions(c, t, &r, 1, now);
}

#define ID "app-1"
#define IDLEN (sizeof ID - 1)

static void test_init_add_end(void)
{
    struct marks m = {.next_pid = 1000};
    struct br_txn_coordinator c;
    br_txn_init(&c, &ops, &m, 900000, 604800000, 1000);
    int64_t pid = -1;
    int16_t epoch = -1;
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, "", 0, 1000, 0, &pid, &epoch),
                    KP_ERR_INVALID_REQUEST);
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, ID, IDLEN, 900001, 0, &pid, &epoch),
                    KP_ERR_INVALID_TRANSACTION_TIMEOUT);
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, ID, IDLEN, 60000, 0, &pid, &epoch), KP_ERR_NONE);
    CU_ASSERT_TRUE(pid == 1000 && epoch == 0);
    /* a restart of the same producer: the next epoch, the same id */
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, ID, IDLEN, 60000, 1, &pid, &epoch), KP_ERR_NONE);
    CU_ASSERT_TRUE(pid == 1000 && epoch == 1);
    struct br_txn *t = NULL;
    CU_ASSERT_EQUAL(br_txn_check(&c, "nope", 4, 1000, 1, &t), KP_ERR_INVALID_PRODUCER_ID_MAPPING);
    CU_ASSERT_EQUAL(br_txn_check(&c, ID, IDLEN, 999, 1, &t), KP_ERR_INVALID_PRODUCER_ID_MAPPING);
    CU_ASSERT_EQUAL(br_txn_check(&c, ID, IDLEN, 1000, 0, &t), KP_ERR_INVALID_PRODUCER_EPOCH);
    /* EndTxn with nothing open */
    CU_ASSERT_EQUAL(br_txn_end(&c, ID, IDLEN, 1000, 1, true, 2), KP_ERR_INVALID_TXN_STATE);
    CU_ASSERT_EQUAL_FATAL(br_txn_check(&c, ID, IDLEN, 1000, 1, &t), KP_ERR_NONE);
    CU_ASSERT_EQUAL(add(&c, t, "a", 0, 3), 0);
    size_t written = m.nrecords;
    CU_ASSERT_EQUAL(add(&c, t, "a", 0, 3), 0); /* again: once, nothing written */
    CU_ASSERT_EQUAL(m.nrecords, written);
    CU_ASSERT_EQUAL(add(&c, t, "b", 2, 3), 0);
    CU_ASSERT_EQUAL(t->status, BR_TXN_ONGOING);
    CU_ASSERT_EQUAL(t->nparts, 2);
    CU_ASSERT_EQUAL(br_txn_end(&c, ID, IDLEN, 1000, 1, true, 4), KP_ERR_NONE);
    CU_ASSERT_TRUE(m.calls == 1 && m.last_commit && m.last_epoch == 1 && m.last_nparts == 2);
    CU_ASSERT_EQUAL(t->status, BR_TXN_COMPLETE_COMMIT);
    CU_ASSERT_EQUAL(t->nparts, 0);
    /* a retried EndTxn: the same result is fine, the other not */
    CU_ASSERT_EQUAL(br_txn_end(&c, ID, IDLEN, 1000, 1, true, 5), KP_ERR_NONE);
    CU_ASSERT_EQUAL(br_txn_end(&c, ID, IDLEN, 1000, 1, false, 5), KP_ERR_INVALID_TXN_STATE);
    CU_ASSERT_EQUAL(m.calls, 1);
    CU_ASSERT_EQUAL(c.committed, 1);
    br_txn_fini(&c);
}

/* A new producer of the same id fences the one with a transaction open: the
 * transaction is aborted in the bumped epoch, the new producer gets the next
 * one, and the old epoch is refused. */
static void test_fencing(void)
{
    struct marks m = {.next_pid = 7};
    struct br_txn_coordinator c;
    br_txn_init(&c, &ops, &m, 900000, 604800000, 1000);
    int64_t pid = -1;
    int16_t epoch = -1;
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, ID, IDLEN, 60000, 0, &pid, &epoch), KP_ERR_NONE);
    struct br_txn *t = NULL;
    CU_ASSERT_EQUAL_FATAL(br_txn_check(&c, ID, IDLEN, pid, epoch, &t), KP_ERR_NONE);
    CU_ASSERT_EQUAL(add(&c, t, "a", 0, 1), 0);
    int64_t pid2 = -1;
    int16_t epoch2 = -1;
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, ID, IDLEN, 60000, 2, &pid2, &epoch2),
                    KP_ERR_NONE);
    CU_ASSERT_TRUE(m.calls == 1 && !m.last_commit && m.last_epoch == 1);
    CU_ASSERT_TRUE(pid2 == pid && epoch2 == 2);
    CU_ASSERT_EQUAL(c.fenced, 1);
    CU_ASSERT_EQUAL(br_txn_end(&c, ID, IDLEN, pid, epoch, true, 3), KP_ERR_INVALID_PRODUCER_EPOCH);
    br_txn_fini(&c);
}

/* An open transaction past its timeout is aborted in a bumped epoch by the
 * tick; markers a partition cannot take keep it in PrepareAbort (the
 * producer retrying InitProducerId hears CONCURRENT_TRANSACTIONS) until a
 * later tick writes them; an id unused past the expiration goes. */
static void test_timeout_retry_and_expiry(void)
{
    struct marks m = {.next_pid = 1};
    struct br_txn_coordinator c;
    br_txn_init(&c, &ops, &m, 900000, 100000, 1000);
    int64_t pid = -1;
    int16_t epoch = -1;
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, ID, IDLEN, 5000, 0, &pid, &epoch), KP_ERR_NONE);
    struct br_txn *t = NULL;
    CU_ASSERT_EQUAL_FATAL(br_txn_check(&c, ID, IDLEN, pid, epoch, &t), KP_ERR_NONE);
    CU_ASSERT_EQUAL(add(&c, t, "a", 0, 10000), 0);
    br_txn_tick(&c, 14000); /* within the timeout */
    CU_ASSERT_EQUAL(t->status, BR_TXN_ONGOING);
    m.refuse = true;
    br_txn_tick(&c, 16000);
    CU_ASSERT_EQUAL(t->status, BR_TXN_PREPARE_ABORT);
    CU_ASSERT_EQUAL(t->epoch, 1);
    CU_ASSERT_EQUAL(c.timed_out, 1);
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, ID, IDLEN, 5000, 16500, &pid, &epoch),
                    KP_ERR_CONCURRENT_TRANSACTIONS);
    CU_ASSERT_EQUAL(br_txn_end(&c, ID, IDLEN, pid, 1, false, 16600),
                    KP_ERR_CONCURRENT_TRANSACTIONS);
    m.refuse = false;
    br_txn_tick(&c, 16900); /* not yet: one tick per interval */
    CU_ASSERT_EQUAL(t->status, BR_TXN_PREPARE_ABORT);
    br_txn_tick(&c, 17000);
    CU_ASSERT_EQUAL(t->status, BR_TXN_COMPLETE_ABORT);
    CU_ASSERT_EQUAL(c.n, 1);
    br_txn_tick(&c, 17000 + 100001);
    CU_ASSERT_EQUAL(c.n, 0);
    CU_ASSERT_PTR_NULL(br_txn_find(&c, ID, IDLEN));
    br_txn_fini(&c);
}

static bool starts_with_a(void *arg, const char *id, size_t len)
{
    (void)arg;
    return len > 0 && id[0] == 'a';
}

/* A cluster's markers: EndTxn leaves the transaction in PrepareCommit
 * while they are under way (the producer hears CONCURRENT_TRANSACTIONS on
 * a retry) and br_txn_markers_done completes it; each record's log end is
 * kept; an unloaded partition's ids are gone, and a coordinator that
 * loaded them again completes what was left in Prepare*. */
static void test_markers_under_way_unload_resume(void)
{
    struct marks m = {.next_pid = 1};
    struct br_txn_coordinator c;
    br_txn_init(&c, &ops, &m, 900000, 100000, 1000);
    int64_t pid = -1;
    int16_t epoch = -1;
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, "a1", 2, 5000, 0, &pid, &epoch), KP_ERR_NONE);
    int64_t pid_b = -1;
    int16_t epoch_b = -1;
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, "b1", 2, 5000, 0, &pid_b, &epoch_b), KP_ERR_NONE);
    struct br_txn *t = NULL;
    CU_ASSERT_EQUAL_FATAL(br_txn_check(&c, "a1", 2, pid, epoch, &t), KP_ERR_NONE);
    CU_ASSERT_EQUAL(add(&c, t, "x", 0, 10), 0);
    CU_ASSERT_EQUAL(t->log_end, (int64_t)m.nrecords);
    m.refuse = true; /* under way */
    CU_ASSERT_EQUAL(br_txn_end(&c, "a1", 2, pid, epoch, true, 20), KP_ERR_NONE);
    CU_ASSERT_EQUAL(t->status, BR_TXN_PREPARE_COMMIT);
    CU_ASSERT_EQUAL(br_txn_end(&c, "a1", 2, pid, epoch, true, 21), KP_ERR_CONCURRENT_TRANSACTIONS);
    size_t before = m.nrecords;
    m.refuse = false;
    br_txn_markers_done(&c, "b1", 2, 30); /* not in Prepare*: nothing */
    CU_ASSERT_EQUAL(m.nrecords, before);
    br_txn_markers_done(&c, "a1", 2, 30);
    CU_ASSERT_EQUAL(t->status, BR_TXN_COMPLETE_COMMIT);
    CU_ASSERT_EQUAL(m.nrecords, before + 1);
    CU_ASSERT_EQUAL(c.committed, 1);
    /* a second transaction left in PrepareAbort, its partition unloaded */
    CU_ASSERT_EQUAL(add(&c, t, "y", 1, 40), 0);
    m.refuse = true;
    CU_ASSERT_EQUAL(br_txn_end(&c, "a1", 2, pid, epoch, false, 50), KP_ERR_NONE);
    CU_ASSERT_EQUAL(br_txn_unload(&c, starts_with_a, NULL), 1);
    CU_ASSERT_PTR_NULL(br_txn_find(&c, "a1", 2));
    CU_ASSERT_PTR_NOT_NULL(br_txn_find(&c, "b1", 2));
    /* loaded again from its records: PrepareAbort, completed by resume */
    for (size_t i = 0; i < m.nrecords; i++) {
        struct kp_bytes key = {m.records[i].key, m.records[i].klen};
        struct kp_bytes value = {m.records[i].vlen >= 0 ? m.records[i].value : NULL,
                                 m.records[i].vlen};
        struct kp_str id;
        CU_ASSERT_EQUAL_FATAL(br_txn_log_key_decode(key, &id), 0);
        if (id.len == 2 && memcmp(id.ptr, "a1", 2) == 0) {
            CU_ASSERT_EQUAL(br_txn_load_record(&c, key, value), 0);
        }
    }
    t = br_txn_find(&c, "a1", 2);
    if (t == NULL) {
        CU_FAIL_FATAL("\"a1\" was not loaded again");
        return;
    }
    CU_ASSERT_EQUAL(t->status, BR_TXN_PREPARE_ABORT);
    CU_ASSERT_EQUAL(t->nparts, 1);
    m.refuse = false;
    int calls = m.calls;
    br_txn_resume(&c, starts_with_a, NULL, 60);
    CU_ASSERT_EQUAL(m.calls, calls + 1);
    CU_ASSERT_TRUE(m.last_nparts == 1 && !m.last_commit);
    CU_ASSERT_EQUAL(t->status, BR_TXN_COMPLETE_ABORT);
    br_txn_fini(&c);
}

/* A change whose record cannot be written is not made: the request gets
 * the write's error and the state stays as it was. */
static void test_write_failure_changes_nothing(void)
{
    struct marks m = {.next_pid = 50};
    struct br_txn_coordinator c;
    br_txn_init(&c, &ops, &m, 900000, 604800000, 1000);
    int64_t pid = -1;
    int16_t epoch = -1;
    m.refuse_writes = true;
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, ID, IDLEN, 60000, 0, &pid, &epoch),
                    KP_ERR_NOT_ENOUGH_REPLICAS);
    CU_ASSERT_PTR_NULL(br_txn_find(&c, ID, IDLEN));
    m.refuse_writes = false;
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, ID, IDLEN, 60000, 0, &pid, &epoch), KP_ERR_NONE);
    struct br_txn *t = NULL;
    CU_ASSERT_EQUAL_FATAL(br_txn_check(&c, ID, IDLEN, pid, epoch, &t), KP_ERR_NONE);
    m.refuse_writes = true;
    CU_ASSERT_EQUAL(add(&c, t, "a", 0, 1), KP_ERR_NOT_ENOUGH_REPLICAS);
    CU_ASSERT_TRUE(t->status == BR_TXN_EMPTY && t->nparts == 0);
    m.refuse_writes = false;
    CU_ASSERT_EQUAL(add(&c, t, "a", 0, 1), KP_ERR_NONE);
    m.refuse_writes = true;
    CU_ASSERT_EQUAL(br_txn_end(&c, ID, IDLEN, pid, epoch, true, 2), KP_ERR_NOT_ENOUGH_REPLICAS);
    CU_ASSERT_TRUE(t->status == BR_TXN_ONGOING && t->nparts == 1 && m.calls == 0);
    br_txn_fini(&c);
}

/* The records written, read back by a new coordinator (a restart), give
 * the same state: an open transaction stays open with its partitions, a
 * completed one is complete, a tombstone removes its id. */
static void test_records_rebuild_the_state(void)
{
    struct marks m = {.next_pid = 9};
    struct br_txn_coordinator c;
    br_txn_init(&c, &ops, &m, 900000, 100000, 1000);
    int64_t pid = -1;
    int16_t epoch = -1;
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, "open", 4, 60000, 1000, &pid, &epoch),
                    KP_ERR_NONE);
    struct br_txn *t = NULL;
    CU_ASSERT_EQUAL_FATAL(br_txn_check(&c, "open", 4, pid, epoch, &t), KP_ERR_NONE);
    struct br_txn_partition_ref refs[3] = {{"x", 1, 0}, {"y", 1, 3}, {"x", 1, 1}};
    CU_ASSERT_EQUAL(br_txn_add_partitions(&c, t, refs, 3, 1001), KP_ERR_NONE);
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, "done", 4, 60000, 1000, &pid, &epoch),
                    KP_ERR_NONE);
    CU_ASSERT_EQUAL_FATAL(br_txn_check(&c, "done", 4, pid, epoch, &t), KP_ERR_NONE);
    CU_ASSERT_EQUAL(add(&c, t, "x", 0, 1002), KP_ERR_NONE);
    CU_ASSERT_EQUAL(br_txn_end(&c, "done", 4, pid, epoch, false, 1003), KP_ERR_NONE);
    CU_ASSERT_EQUAL(br_txn_init_producer_id(&c, "gone", 4, 60000, 1000, &pid, &epoch),
                    KP_ERR_NONE);
    br_txn_tick(&c, 1000 + 100010); /* "gone" and "done" unused past the expiration */
    /* "open" timed out too: its abort and completion were written */
    CU_ASSERT_EQUAL(c.n, 1);

    struct br_txn_coordinator back;
    struct marks m2 = {.next_pid = 100};
    br_txn_init(&back, &ops, &m2, 900000, 100000, 1000);
    /* everything up to the tick: "open" Ongoing, "done" CompleteAbort, "gone" Empty */
    size_t upto = 0;
    while (upto < m.nrecords && m.records[upto].vlen >= 0) {
        struct kp_str id;
        struct kp_bytes key = {m.records[upto].key, m.records[upto].klen};
        CU_ASSERT_EQUAL_FATAL(br_txn_log_key_decode(key, &id), 0);
        struct br_txn probe = {0};
        struct kp_bytes value = {m.records[upto].value, m.records[upto].vlen};
        CU_ASSERT_EQUAL_FATAL(br_txn_log_value_decode(value, &probe), 0);
        for (size_t i = 0; i < probe.nparts; i++) {
            kp_free(probe.parts[i].topic);
        }
        kp_free(probe.parts);
        if (id.len == 4 && memcmp(id.ptr, "open", 4) == 0 && probe.status == BR_TXN_PREPARE_ABORT) {
            break; /* the tick's abort of "open" */
        }
        CU_ASSERT_EQUAL(br_txn_load_record(&back, key, value), 0);
        upto++;
    }
    CU_ASSERT_EQUAL(back.n, 3);
    struct br_txn *o = br_txn_find(&back, "open", 4);
    if (o == NULL) {
        CU_FAIL_FATAL("\"open\" was not loaded");
        return;
    }
    CU_ASSERT_TRUE(o->status == BR_TXN_ONGOING && o->nparts == 3 && o->producer_id == 9 &&
                   o->epoch == 0 && o->timeout_ms == 60000 && o->start_ms == 1001);
    struct br_txn *d = br_txn_find(&back, "done", 4);
    if (d == NULL) {
        CU_FAIL_FATAL("\"done\" was not loaded");
        return;
    }
    CU_ASSERT_TRUE(d->status == BR_TXN_COMPLETE_ABORT && d->nparts == 0);
    /* the rest, tombstones included: only "open" is left, aborted */
    for (size_t i = upto; i < m.nrecords; i++) {
        struct kp_bytes key = {m.records[i].key, m.records[i].klen};
        struct kp_bytes value = {m.records[i].vlen >= 0 ? m.records[i].value : NULL,
                                 m.records[i].vlen};
        CU_ASSERT_EQUAL(br_txn_load_record(&back, key, value), 0);
    }
    CU_ASSERT_EQUAL(back.n, 1);
    o = br_txn_find(&back, "open", 4);
    if (o == NULL) {
        CU_FAIL_FATAL("\"open\" is gone");
        return;
    }
    CU_ASSERT_TRUE(o->status == BR_TXN_COMPLETE_ABORT && o->epoch == 1);
    /* a damaged record is refused, the state unchanged */
    uint8_t bad[] = {0, 9, 0, 1, 'z'};
    struct kp_bytes bk = {bad, sizeof bad};
    CU_ASSERT_EQUAL(br_txn_load_record(&back, bk, bk), KP_E_CORRUPT);
    CU_ASSERT_EQUAL(back.n, 1);
    br_txn_fini(&back);
    br_txn_fini(&c);
}

/* Kafka's TransactionLog bytes for an Ongoing transaction on two
 * partitions of one topic (keyToBytes, valueToBytes at 2.0.0). */
static void test_record_bytes_are_kafkas(void)
{
    char topic[] = "t";
    char id[] = "tx";
    struct br_txn_partition parts[2] = {{topic, 0}, {topic, 5}};
    struct br_txn t = {.id = id, .id_len = 2, .producer_id = 0x0102030405060708,
                       .epoch = 3, .timeout_ms = 60000, .status = BR_TXN_ONGOING,
                       .parts = parts, .nparts = 2, .start_ms = 1000, .update_ms = 2000};
    struct kp_writer w;
    kp_wr_init(&w, 1024);
    br_txn_log_key(&w, t.id, t.id_len);
    static const uint8_t key[] = {0, 0, 0, 2, 't', 'x'};
    CU_ASSERT_TRUE(w.len == sizeof key && memcmp(w.buf, key, sizeof key) == 0);
    kp_wr_reset(&w);
    br_txn_log_value(&w, &t);
    static const uint8_t value[] = {
        0, 0,                                   /* version */
        1, 2, 3, 4, 5, 6, 7, 8,                 /* producer id */
        0, 3,                                   /* epoch */
        0, 0, 0xea, 0x60,                       /* timeout 60000 */
        1,                                      /* Ongoing */
        0, 0, 0, 1,                             /* one topic */
        0, 1, 't', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 5,
        0, 0, 0, 0, 0, 0, 0x07, 0xd0,           /* entry timestamp 2000 */
        0, 0, 0, 0, 0, 0, 0x03, 0xe8,           /* start timestamp 1000 */
    };
    CU_ASSERT_EQUAL(w.len, sizeof value);
    CU_ASSERT_TRUE(w.len == sizeof value && memcmp(w.buf, value, sizeof value) == 0);
    kp_wr_free(&w);
}

static CU_TestInfo tests[] = {
    {"init_add_end", test_init_add_end},
    {"fencing", test_fencing},
    {"timeout_retry_and_expiry", test_timeout_retry_and_expiry},
    {"markers_under_way_unload_resume", test_markers_under_way_unload_resume},
    {"write_failure_changes_nothing", test_write_failure_changes_nothing},
    {"records_rebuild_the_state", test_records_rebuild_the_state},
    {"record_bytes_are_kafkas", test_record_bytes_are_kafkas},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-txn_coordinator", tests);
}
