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

struct marks {
    int64_t next_pid;
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

static bool write_markers(void *ctx, const struct br_txn *t, bool commit, int32_t epoch)
{
    (void)epoch;
    struct marks *m = ctx;
    m->calls++;
    m->last_commit = commit;
    m->last_epoch = t->epoch;
    m->last_nparts = t->nparts;
    return !m->refuse;
}

static const struct br_txn_ops ops = {new_pid, write_markers};

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
    CU_ASSERT_EQUAL(br_txn_add_partition(&c, t, "a", 1, 0, 3), 0);
    CU_ASSERT_EQUAL(br_txn_add_partition(&c, t, "a", 1, 0, 3), 0); /* again: once */
    CU_ASSERT_EQUAL(br_txn_add_partition(&c, t, "b", 1, 2, 3), 0);
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
    CU_ASSERT_EQUAL(br_txn_add_partition(&c, t, "a", 1, 0, 1), 0);
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
    CU_ASSERT_EQUAL(br_txn_add_partition(&c, t, "a", 1, 0, 10000), 0);
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

static CU_TestInfo tests[] = {
    {"init_add_end", test_init_add_end},
    {"fencing", test_fencing},
    {"timeout_retry_and_expiry", test_timeout_retry_and_expiry},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-txn_coordinator", tests);
}
