/* Unit tests for the partition (broker/src/replica/partition.h): the one
 * leader-append path, on a real log. */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/record_batch.h>

#include "base/fileref.h"
#include "base/logging.h"
#include "batches.h"
#include "cunit_run.h"
#include "quiet_net.h"
#include "reactor/net.h"
#include "reactor/purgatory.h"
#include "replica/delayed_produce.h"
#include "replica/partition.h"
#include "storage/log.h"
#include "tmpdir.h"

static char root[64];
static char pdir[128];

/* Who waits on the partition: a delayed operation parked on its key in a
 * real purgatory, asked at the end of each reactor turn in which the
 * partition woke it (as a parked Fetch is). */
struct watcher {
    struct br_net *net;
    struct br_purgatory pg;
    struct br_delayed d;
    struct br_delay_link link;
    const struct br_partition *p;
    int calls;       /* turns in which the partition woke it */
    int64_t hw_seen; /* the high watermark then */
};

static bool watch_ready(void *ctx, struct br_delayed *d)
{
    struct watcher *w = ctx;
    (void)d;
    w->calls++;
    w->hw_seen = w->p->hw;
    return false; /* it stays: the next wake is counted too */
}

static void watch_complete(void *ctx, struct br_delayed *d, bool expired)
{
    (void)ctx;
    (void)d;
    (void)expired;
}

static const struct br_delayed_ops watch_ops = {"partition watcher", watch_ready, watch_complete};

/* p leads its log with w parked on it (w's reactor made on first use). */
static void lead_watched(struct br_partition *p, struct watcher *w)
{
    if (w->net == NULL) {
        struct br_net_limits lim = {.max_connections = 4, .max_request_bytes = 1 << 20};
        CU_ASSERT_EQUAL_FATAL(br_net_create(&lim, &st_quiet_net_ops, w, &w->net), 0);
        if (w->net == NULL) {
            abort(); /* for the analysers: the assertion above does not return */
        }
        br_purgatory_init(&w->pg, w->net, w);
    }
    br_partition_become_leader(p, &w->pg);
    w->p = p;
    br_delayed_init(&w->d, &watch_ops, w, &w->link, 1);
    br_delayed_watch(&w->d, 0, &p->delayed);
    br_purgatory_park(&w->pg, &w->d, br_now_mono_ms() + (int64_t)3600 * 1000);
}

/* One reactor turn: w is asked if the partition woke it. */
static void turn(struct watcher *w)
{
    br_net_poll(w->net);
}

/* w leaves the partition (before the partition is wiped or freed). */
static void unwatch(struct watcher *w)
{
    br_purgatory_cancel(&w->pg, &w->d);
}

/* w and its reactor freed. */
static void watcher_free(struct watcher *w)
{
    unwatch(w);
    br_purgatory_fini(&w->pg);
    br_net_free(w->net);
}

static uint8_t *batch_of(int count, size_t *len)
{
    return st_producer_batch(count, -1, -1, -1, len);
}

static struct br_log *open_log(struct br_filecache *fc)
{
    struct br_log_config c;
    br_log_config_defaults(&c);
    struct br_log *log = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_open(pdir, &c, 0, fc, &log), 0);
    return log;
}

/* A fresh log in a new folder, its budget, and p leading it (w parked on
 * it, or nobody waiting: NULL). */
static void setup_leader(struct br_filecache **fc, struct br_partition *p, struct watcher *w)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(st_tmpdir_make(root, sizeof root, "partition"));
    (void)snprintf(pdir, sizeof pdir, "%s/t-0", root);
    CU_ASSERT_EQUAL_FATAL(br_filecache_new(16, fc), 0);
    memset(p, 0, sizeof *p);
    p->log = open_log(*fc);
    if (w != NULL) {
        lead_watched(p, w);
    } else {
        br_partition_become_leader(p, NULL);
    }
}

/* Frees what the partition and the test made, and the folder. */
static void teardown(struct br_filecache *fc, struct br_partition *p)
{
    br_partition_free_replication(p);
    br_log_close(p->log);
    br_producers_free(&p->producers);
    br_filecache_free(fc);
    CU_ASSERT_EQUAL(st_tmpdir_remove(root), 0);
}

/* Each leader append moves the high watermark to the log end (an ISR of
 * one) and wakes whoever waits on the partition once, with the new value in
 * place; an append that fails changes nothing and wakes no one. After a reopen the leader
 * keeps the log's epoch and the high watermark is the log end again. */
static void test_leader_append_moves_hw_and_tells_once(void)
{
    struct br_filecache *fc = NULL;
    struct br_partition p;
    struct watcher w = {0};
    setup_leader(&fc, &p, &w);
    CU_ASSERT_EQUAL(p.leader_epoch, 0);
    CU_ASSERT_EQUAL(p.hw, 0);
    CU_ASSERT_EQUAL(w.calls, 0);

    size_t len = 0;
    uint8_t *b = batch_of(3, &len);
    struct br_append app;
    CU_ASSERT_EQUAL(br_partition_append_leader(&p, b, len, 5000, &app), 0);
    kp_free(b);
    CU_ASSERT_EQUAL(app.base, 0);
    CU_ASSERT_FALSE(app.duplicate);
    CU_ASSERT_EQUAL(app.seq_error, 0);
    CU_ASSERT_EQUAL(p.hw, 3);
    CU_ASSERT_EQUAL(w.calls, 0); /* woken: asked at the end of the turn */
    turn(&w);
    CU_ASSERT_EQUAL(w.calls, 1);
    CU_ASSERT_EQUAL(w.hw_seen, 3);

    b = batch_of(2, &len);
    CU_ASSERT_EQUAL(br_partition_append_leader(&p, b, len, 5000, &app), 0);
    kp_free(b);
    CU_ASSERT_EQUAL(app.base, 3);
    CU_ASSERT_EQUAL(p.hw, 5);
    turn(&w);
    CU_ASSERT_EQUAL(w.calls, 2);
    CU_ASSERT_EQUAL(w.hw_seen, 5);

    uint8_t junk[16];
    memset(junk, 0, sizeof junk);
    CU_ASSERT_NOT_EQUAL(br_partition_append_leader(&p, junk, sizeof junk, 5000, &app), 0);
    CU_ASSERT_EQUAL(p.hw, 5);
    turn(&w);
    CU_ASSERT_EQUAL(w.calls, 2);

    unwatch(&w);
    br_log_close(p.log);
    memset(&p, 0, sizeof p);
    p.log = open_log(fc);
    lead_watched(&p, &w);
    CU_ASSERT_EQUAL(p.leader_epoch, 0);
    CU_ASSERT_EQUAL(p.hw, 5);
    turn(&w);
    CU_ASSERT_EQUAL(w.calls, 2);
    watcher_free(&w);
    br_log_close(p.log);
    br_filecache_free(fc);
    CU_ASSERT_EQUAL(st_tmpdir_remove(root), 0);
}

/* Appends one batch of producer 7; what the append did. */
static struct br_append produce(struct br_partition *p, int count, int16_t epoch, int32_t seq)
{
    size_t len = 0;
    uint8_t *b = st_producer_batch(count, 7, epoch, seq, &len);
    struct br_append app;
    CU_ASSERT_EQUAL(br_partition_append_leader(p, b, len, 5000, &app), 0);
    kp_free(b);
    return app;
}

/* The producer's sequence is checked inside the append: a retry answers
 * its first offset and appends nothing, a gap or a stale epoch is refused
 * with Kafka's code and appends nothing, and the windows come back from
 * the log after a reopen. */
static void test_leader_append_checks_the_producer_sequence(void)
{
    struct br_filecache *fc = NULL;
    struct br_partition p;
    struct watcher w = {0};
    setup_leader(&fc, &p, &w);

    struct br_append app = produce(&p, 3, 1, 0);
    CU_ASSERT_TRUE(app.base == 0 && !app.duplicate && app.seq_error == 0);
    app = produce(&p, 3, 1, 0); /* the retry */
    CU_ASSERT_TRUE(app.base == 0 && app.duplicate && app.seq_error == 0);
    CU_ASSERT_EQUAL(p.hw, 3);
    turn(&w);
    CU_ASSERT_EQUAL(w.calls, 1);
    app = produce(&p, 2, 1, 5); /* 3 and 4 missing */
    CU_ASSERT_EQUAL(app.seq_error, KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    app = produce(&p, 2, 0, 3); /* an older epoch */
    CU_ASSERT_EQUAL(app.seq_error, KP_ERR_INVALID_PRODUCER_EPOCH);
    CU_ASSERT_EQUAL(br_log_end_offset(p.log), 3);
    turn(&w);
    CU_ASSERT_EQUAL(w.calls, 1);
    app = produce(&p, 2, 1, 3);
    CU_ASSERT_TRUE(app.base == 3 && !app.duplicate && app.seq_error == 0);
    CU_ASSERT_EQUAL(p.hw, 5);

    CU_ASSERT_EQUAL(br_log_flush(p.log), 0);
    watcher_free(&w);
    br_log_close(p.log);
    br_producers_free(&p.producers);
    memset(&p, 0, sizeof p);
    p.log = open_log(fc);
    br_partition_become_leader(&p, NULL);
    CU_ASSERT_EQUAL(br_partition_load_producers(&p), 7);
    app = produce(&p, 2, 1, 3); /* a retry across the restart */
    CU_ASSERT_TRUE(app.base == 3 && app.duplicate);
    app = produce(&p, 1, 1, 5);
    CU_ASSERT_TRUE(app.base == 5 && !app.duplicate && app.seq_error == 0);
    br_log_close(p.log);
    br_producers_free(&p.producers);
    br_filecache_free(fc);
    CU_ASSERT_EQUAL(st_tmpdir_remove(root), 0);
}

/* A follower's appends record the producer's batches (Kafka's
 * appendAsFollower): once it leads, the producer's next sequence is
 * taken, a retry of a batch it copied is a duplicate with the leader's
 * offset, and a gap is refused; a truncation forgets what it cut. */
static void test_follower_appends_record_the_producers(void)
{
    struct br_filecache *fc = NULL;
    struct br_partition p;
    setup_leader(&fc, &p, NULL);
    br_partition_become_follower(&p, 0);
    size_t len = 0;
    uint8_t *b = st_producer_batch(3, 7, 1, 0, &len); /* offsets 0-2, sequences 0-2 */
    CU_ASSERT_EQUAL(br_partition_append_follower(&p, b, len, 5000), 0);
    kp_free(b);
    CU_ASSERT_EQUAL(br_log_end_offset(p.log), 3);

    int32_t replicas[] = {1, 2};
    struct br_leadership lead = {1, 1, 1, 0, replicas, 2, replicas, 2};
    CU_ASSERT_EQUAL(br_partition_take_leadership(&p, 1, &lead, 0, 10000), 0);
    CU_ASSERT_EQUAL(p.role, BR_ROLE_LEADER);
    struct br_append app = produce(&p, 3, 1, 0); /* a retry of what the old leader had */
    CU_ASSERT_TRUE(app.duplicate && app.base == 0);
    app = produce(&p, 2, 1, 4); /* 3 missing */
    CU_ASSERT_EQUAL(app.seq_error, KP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    app = produce(&p, 2, 1, 3);
    CU_ASSERT_TRUE(app.seq_error == 0 && !app.duplicate && app.base == 3);

    /* cut back to 3: the batch at 3-4 is forgotten with its records */
    CU_ASSERT_EQUAL(br_log_truncate_to(p.log, 3), 0);
    br_partition_reload_producers(&p);
    app = produce(&p, 2, 1, 3);
    CU_ASSERT_TRUE(app.seq_error == 0 && !app.duplicate && app.base == 3);

    teardown(fc, &p);
}

/* setup_leader, and three records appended as leader. */
static void leader_with_three_records(struct br_filecache **fc, struct br_partition *p)
{
    setup_leader(fc, p, NULL);
    size_t len = 0;
    uint8_t *b = batch_of(3, &len);
    struct br_append app;
    CU_ASSERT_EQUAL(br_partition_append_leader(p, b, len, 5000, &app), 0);
    kp_free(b);
}

/* A replica that becomes leader records its epoch at its log end before
 * it appends anything (Kafka 2.0.1's KAFKA-7415): asked where that epoch
 * ends, it answers with itself and its log end, not "unknown". */
static void test_new_leader_records_its_epoch_at_once(void)
{
    struct br_filecache *fc = NULL;
    struct br_partition p;
    leader_with_three_records(&fc, &p);
    br_partition_become_follower(&p, 0);

    int32_t replicas[] = {1, 2};
    struct br_leadership lead = {1, 4, 1, 0, replicas, 2, replicas, 2};
    CU_ASSERT_EQUAL(br_partition_take_leadership(&p, 1, &lead, 0, 10000), 0);
    CU_ASSERT_EQUAL(br_log_latest_epoch(p.log), 4);
    int32_t epoch = -1;
    int64_t end = -1;
    CU_ASSERT_EQUAL(br_log_end_offset_for_epoch(p.log, 4, &epoch, &end), 0);
    CU_ASSERT_EQUAL(epoch, 4);
    CU_ASSERT_EQUAL(end, 3);
    /* the epoch before ends where the new one starts */
    CU_ASSERT_EQUAL(br_log_end_offset_for_epoch(p.log, 0, &epoch, &end), 0);
    CU_ASSERT_EQUAL(epoch, 0);
    CU_ASSERT_EQUAL(end, 3);
    /* a reopen drops an epoch that starts at the log end (Kafka's loading
     * truncates the cache there too): the controller gives a restarted
     * replica a newer one anyway */
    CU_ASSERT_EQUAL(br_log_flush(p.log), 0);
    br_partition_free_replication(&p);
    br_log_close(p.log);
    br_producers_free(&p.producers);
    memset(&p, 0, sizeof p);
    p.log = open_log(fc);
    CU_ASSERT_EQUAL(br_log_latest_epoch(p.log), 0);
    br_log_close(p.log);
    br_filecache_free(fc);
    CU_ASSERT_EQUAL(st_tmpdir_remove(root), 0);
}

/* Who joins the ISR is the replica whose fetch is handled, never another
 * one whose stale offset equals the high watermark; and while an ISR change
 * that adds a replica is being written (ZooKeeper may have taken it already,
 * its reply lost), the high watermark counts that replica: nothing is
 * acknowledged without it until the change is settled. */
static void test_isr_joining_replica_counts_until_settled(void)
{
    struct br_filecache *fc = NULL;
    struct br_partition p;
    leader_with_three_records(&fc, &p);

    int32_t replicas[] = {1, 2, 3};
    int32_t isr[] = {1, 2};
    struct br_leadership lead = {1, 1, 1, 0, isr, 2, replicas, 3};
    const int64_t t0 = 100000;
    const int64_t lag = 10000;
    CU_ASSERT_EQUAL(br_partition_take_leadership(&p, 1, &lead, t0, lag), 0);
    /* both followers reach the log end: 3 is a candidate, 2 is in sync */
    CU_ASSERT_TRUE(br_partition_follower_fetched(&p, 3, 3, t0));
    CU_ASSERT_TRUE(br_partition_follower_fetched(&p, 2, 3, t0));
    CU_ASSERT_EQUAL(p.hw, 3);
    CU_ASSERT_TRUE(br_partition_isr_candidate(&p, 3));
    CU_ASSERT_FALSE(br_partition_isr_candidate(&p, 2));
    CU_ASSERT_FALSE(br_partition_isr_candidate(&p, 7));

    /* 3 falls silent past the lag while its join is being written */
    br_partition_isr_change_begin(&p, 3);
    const int64_t t1 = t0 + 2 * lag;
    size_t len = 0;
    uint8_t *b = batch_of(2, &len);
    struct br_append app;
    CU_ASSERT_EQUAL(br_partition_append_leader(&p, b, len, t1, &app), 0);
    kp_free(b);
    CU_ASSERT_TRUE(br_partition_follower_fetched(&p, 2, 5, t1));
    CU_ASSERT_EQUAL(p.hw, 3); /* held for the joining replica */
    /* the change dropped: the ISR alone counts again */
    br_partition_isr_change_end(&p, t1);
    CU_ASSERT_FALSE(p.isr_writing);
    CU_ASSERT_EQUAL(p.hw, 5);
    /* a stale follower at the high watermark is no candidate once it moved */
    CU_ASSERT_FALSE(br_partition_isr_candidate(&p, 3));

    teardown(fc, &p);
}

/* What a delayed produce's owner is told. */
struct produce_owner {
    struct br_delayed_produce dp;
    struct br_append_wait wait;
    struct br_delay_link link;
    int calls;
    bool expired;
    int16_t outcome;
    int32_t min_insync;
};

static void produce_done(struct br_delayed_produce *dp, bool expired)
{
    struct produce_owner *o = dp->owner;
    o->calls++;
    o->expired = expired;
    o->outcome = br_partition_append_outcome(o->wait.p, o->wait.required, o->wait.term,
                                             o->min_insync);
}

/* Kafka's DelayedProduce: an append as leader waits until the follower in
 * the ISR has it, then is told NONE once; one that the ISR never reaches
 * is told REQUEST_TIMED_OUT at its deadline; replicated by fewer replicas
 * than min.insync.replicas it is NOT_ENOUGH_REPLICAS_AFTER_APPEND; led in
 * another term since, NOT_LEADER_OR_FOLLOWER. */
static void test_delayed_produce_waits_for_the_isr(void)
{
    struct br_filecache *fc = NULL;
    struct br_partition p;
    struct watcher w;
    memset(&w, 0, sizeof w);
    setup_leader(&fc, &p, &w);
    int32_t replicas[] = {1, 2};
    struct br_leadership lead = {1, 1, 1, 0, replicas, 2, replicas, 2};
    const int64_t t0 = br_now_mono_ms();
    CU_ASSERT_EQUAL(br_partition_take_leadership(&p, 1, &lead, t0, 10000), 0);
    size_t len = 0;
    uint8_t *b = batch_of(3, &len);
    struct br_append app;
    CU_ASSERT_EQUAL(br_partition_append_leader(&p, b, len, t0, &app), 0);
    kp_free(b);
    CU_ASSERT_EQUAL(p.hw, 0); /* follower 2 has nothing yet */

    struct produce_owner o;
    memset(&o, 0, sizeof o);
    o.min_insync = 1;
    o.wait = (struct br_append_wait){&p, 3, p.leader_term};
    br_delayed_produce_init(&o.dp, &o.wait, &o.link, 1, produce_done, &o);
    CU_ASSERT_FALSE(br_delayed_produce_settled(&o.dp));
    br_delayed_produce_park(&w.pg, &o.dp, t0 + (int64_t)3600 * 1000);
    turn(&w);
    CU_ASSERT_EQUAL(o.calls, 0);
    CU_ASSERT_TRUE(br_partition_follower_fetched(&p, 2, 3, t0));
    CU_ASSERT_EQUAL(p.hw, 3);
    turn(&w);
    CU_ASSERT_EQUAL(o.calls, 1);
    CU_ASSERT_FALSE(o.expired);
    CU_ASSERT_EQUAL(o.outcome, KP_ERR_NONE);
    /* the same append against a min.insync.replicas the ISR does not meet */
    CU_ASSERT_EQUAL(br_partition_append_outcome(&p, 3, p.leader_term, 3),
                    KP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    /* led in another term since */
    CU_ASSERT_TRUE(br_partition_append_settled(&p, 3, p.leader_term + 1));
    CU_ASSERT_EQUAL(br_partition_append_outcome(&p, 3, p.leader_term + 1, 1),
                    KP_ERR_NOT_LEADER_OR_FOLLOWER);

    /* an append the follower never fetches: told at its deadline */
    b = batch_of(2, &len);
    CU_ASSERT_EQUAL(br_partition_append_leader(&p, b, len, t0, &app), 0);
    kp_free(b);
    memset(&o, 0, sizeof o);
    o.min_insync = 1;
    o.wait = (struct br_append_wait){&p, 5, p.leader_term};
    br_delayed_produce_init(&o.dp, &o.wait, &o.link, 1, produce_done, &o);
    br_delayed_produce_park(&w.pg, &o.dp, br_now_mono_ms() + 20);
    const int64_t give_up = br_now_mono_ms() + 10000;
    while (o.calls == 0 && br_now_mono_ms() < give_up) {
        turn(&w);
        struct timespec ms = {0, 1000000};
        (void)nanosleep(&ms, NULL);
    }
    CU_ASSERT_EQUAL(o.calls, 1);
    CU_ASSERT_TRUE(o.expired);
    CU_ASSERT_EQUAL(o.outcome, KP_ERR_REQUEST_TIMED_OUT);

    watcher_free(&w);
    teardown(fc, &p);
}

static CU_TestInfo tests[] = {
    {"delayed_produce_waits_for_the_isr", test_delayed_produce_waits_for_the_isr},
    {"isr_joining_replica_counts_until_settled", test_isr_joining_replica_counts_until_settled},
    {"follower_appends_record_the_producers", test_follower_appends_record_the_producers},
    {"new_leader_records_its_epoch_at_once", test_new_leader_records_its_epoch_at_once},
    {"leader_append_moves_hw_and_tells_once", test_leader_append_moves_hw_and_tells_once},
    {"leader_append_checks_the_producer_sequence", test_leader_append_checks_the_producer_sequence},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-partition", tests);
}
