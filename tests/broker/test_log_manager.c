/* Unit tests for the log manager (broker/src/storage/log_manager.h), on
 * real files and a real flusher thread. Links the storage layer alone. */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/record_batch.h>

#include "base/clock.h"
#include "base/fileref.h"
#include "base/mailbox.h"
#include "cunit_run.h"
#include "storage/checkpoint.h"
#include "storage/log_manager.h"
#include "tmpdir.h"

#define NOW0 INT64_C(1800000000000)

/* ------------------------------------------------------------- fixture */

static char root[64];
static char dir0[128];
static char dir1[128];
static struct br_filecache *files;

/* What the manager asks about: a partition's high watermark. */
struct owner {
    int64_t hw;
};

static int64_t owner_hw(void *ctx, const void *owner)
{
    (void)ctx;
    return ((const struct owner *)owner)->hw;
}

static const struct br_logm_ops ops = {owner_hw};

static void setup(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(st_tmpdir_make(root, sizeof root, "logm"));
    /* the second dir does not exist yet, nor its parent */
    (void)snprintf(dir0, sizeof dir0, "%s/a", root);
    (void)snprintf(dir1, sizeof dir1, "%s/b/c", root);
    if (files == NULL) {
        CU_ASSERT_EQUAL_FATAL(br_filecache_new(64, &files), 0);
    }
}

static void cleanup(void)
{
    CU_ASSERT_EQUAL(st_tmpdir_remove(root), 0);
}

static struct br_logm_config config(void)
{
    static const char *dirs[2];
    dirs[0] = dir0;
    dirs[1] = dir1;
    struct br_logm_config c = {
        .dirs = dirs,
        .ndirs = 2,
        .checkpoint_interval_ms = 60000,
        .retention_check_interval_ms = 0,
        .cleaner_enable = false,
        .cleaner_threads = 0,
        .cleaner_backoff_ms = 15000,
    };
    return c;
}

static struct br_log_manager *open_lm(const struct br_logm_config *c, void *ctx)
{
    struct br_log_manager *lm = NULL;
    CU_ASSERT_EQUAL_FATAL(br_logm_open(c, &ops, ctx, &lm), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lm);
    return lm;
}

/* Opens topic-partition's log where the manager places it and adds it. */
static struct br_log *add_log(struct br_log_manager *lm, const char *topic, int32_t p,
                              const struct br_log_config *lc, struct owner *o,
                              struct br_managed_log **ml)
{
    size_t d = br_logm_find_dir(lm, topic, p);
    char path[256];
    (void)snprintf(path, sizeof path, "%s/%s-%" PRId32, br_logm_dir(lm, d), topic, p);
    struct br_log *log = NULL;
    CU_ASSERT_EQUAL_FATAL(br_log_open(path, lc, br_logm_recovery_point(lm, topic, p), files, &log),
                          0);
    CU_ASSERT_EQUAL_FATAL(br_logm_add(lm, log, topic, p, d, o, ml), 0);
    return log;
}

static void append(struct br_log *log, int count, size_t value_len)
{
    struct kp_batch_builder b;
    static uint8_t value[2048];
    memset(value, 'v', sizeof value);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_init(&b, KP_CODEC_NONE, 0, NOW0, -1, -1, -1, 1 << 24),
                          0);
    for (int i = 0; i < count; i++) {
        struct kp_bytes k = {(const uint8_t *)"k", 1};
        struct kp_bytes v = {value, (int32_t)value_len};
        CU_ASSERT_EQUAL_FATAL(
            kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, NOW0 + i, k, v, NULL, 0), 0);
    }
    struct kp_writer w;
    kp_wr_init(&w, 1 << 24);
    CU_ASSERT_EQUAL_FATAL(kp_batch_builder_finish(&b, &w), 0);
    kp_batch_builder_free(&b);
    size_t len = 0;
    uint8_t *batch = kp_wr_steal(&w, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(batch);
    int64_t base = -1;
    CU_ASSERT_EQUAL(br_log_append(log, batch, len, 0, br_now_wall_ms(), &base), 0);
    kp_free(batch);
}

static bool exists(const char *dir, const char *name)
{
    char path[256];
    (void)snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* The offset of topic-partition in checkpoint file `name` of dir, -1 when
 * absent. */
static int64_t checkpointed(const char *dir, const char *name, const char *topic, int32_t p)
{
    char path[256];
    (void)snprintf(path, sizeof path, "%s/%s", dir, name);
    struct br_checkpoint_entry *e = NULL;
    size_t n = 0;
    struct br_checkpoint_error err;
    if (br_checkpoint_read(path, 1000, &e, &n, &err) != 0) {
        return -1;
    }
    int64_t off = -1;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(e[i].topic, topic) == 0 && e[i].partition == p) {
            off = e[i].offset;
        }
    }
    br_checkpoint_free(e);
    return off;
}

/* ------------------------------------------------------------- tests */

static void test_open_makes_and_locks_every_dir(void)
{
    setup();
    struct br_logm_config c = config();
    struct br_log_manager *lm = open_lm(&c, NULL);
    struct stat st;
    CU_ASSERT_EQUAL(stat(dir1, &st), 0);
    CU_ASSERT(S_ISDIR(st.st_mode));
    CU_ASSERT_EQUAL(br_logm_dir_count(lm), 2);
    CU_ASSERT_STRING_EQUAL(br_logm_dir(lm, 1), dir1);
    /* a second broker on the same dirs is refused while the first runs */
    struct br_log_manager *again = NULL;
    CU_ASSERT_EQUAL(br_logm_open(&c, &ops, NULL, &again), -1);
    CU_ASSERT_PTR_NULL(again);
    br_logm_close(lm, false);
    lm = open_lm(&c, NULL);
    br_logm_close(lm, false);
    cleanup();
}

static void test_placement_fills_the_emptiest_dir_and_keeps_a_partition_where_it_is(void)
{
    setup();
    struct br_logm_config c = config();
    struct br_log_manager *lm = open_lm(&c, NULL);
    CU_ASSERT_EQUAL(br_logm_place(lm), 0);
    CU_ASSERT_EQUAL(br_logm_place(lm), 1);
    CU_ASSERT_EQUAL(br_logm_place(lm), 0);
    CU_ASSERT_EQUAL(br_logm_dir_partitions(lm, 0), 2);
    br_logm_release(lm, 0);
    br_logm_release(lm, 0);
    CU_ASSERT_EQUAL(br_logm_dir_partitions(lm, 0), 0);
    /* dir 0 is the emptiest, but t-5 is on disk in dir 1 */
    char path[256];
    (void)snprintf(path, sizeof path, "%s/t-5", dir1);
    CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
    CU_ASSERT_EQUAL(br_logm_find_dir(lm, "t", 5), 1);
    CU_ASSERT_EQUAL(br_logm_dir_partitions(lm, 1), 2);
    CU_ASSERT_EQUAL(br_logm_find_dir(lm, "t", 6), 0);
    br_logm_close(lm, false);
    cleanup();
}

static void test_checkpoints_hold_recovery_point_high_watermark_and_log_start(void)
{
    setup();
    struct br_logm_config c = config();
    struct br_log_manager *lm = open_lm(&c, NULL);
    struct br_log_config lc;
    br_log_config_defaults(&lc);
    struct owner o0 = {0};
    struct owner o1 = {0};
    struct br_managed_log *m0 = NULL;
    struct br_managed_log *m1 = NULL;
    struct br_log *l0 = add_log(lm, "t", 0, &lc, &o0, &m0);
    struct br_log *l1 = add_log(lm, "t", 1, &lc, &o1, &m1);
    CU_ASSERT_EQUAL(br_managed_log_dir(m0), 0);
    CU_ASSERT_EQUAL(br_managed_log_dir(m1), 1);
    /* the same topic-partition twice is refused */
    struct br_managed_log *dup = NULL;
    CU_ASSERT_EQUAL(br_logm_add(lm, l0, "t", 0, 0, &o0, &dup), KP_E_INVALID_ARG);
    append(l0, 5, 10);
    append(l1, 7, 10);
    o0.hw = 3; /* the owner says: only 3 are replicated */
    o1.hw = 7;
    CU_ASSERT_EQUAL(br_log_flush(l0), 0);
    CU_ASSERT_EQUAL(br_log_set_start_offset(l1, 2), 0);
    br_logm_write_checkpoints(lm);
    CU_ASSERT_EQUAL(checkpointed(dir0, BR_RECOVERY_CHECKPOINT, "t", 0), 5);
    CU_ASSERT_EQUAL(checkpointed(dir0, BR_REPLICATION_CHECKPOINT, "t", 0), 3);
    CU_ASSERT_EQUAL(checkpointed(dir0, BR_LOG_START_CHECKPOINT, "t", 0), 0);
    CU_ASSERT_EQUAL(checkpointed(dir0, BR_REPLICATION_CHECKPOINT, "t", 1), -1); /* dir 1's */
    CU_ASSERT_EQUAL(checkpointed(dir1, BR_RECOVERY_CHECKPOINT, "t", 1), 0);     /* not flushed */
    CU_ASSERT_EQUAL(checkpointed(dir1, BR_REPLICATION_CHECKPOINT, "t", 1), 7);
    CU_ASSERT_EQUAL(checkpointed(dir1, BR_LOG_START_CHECKPOINT, "t", 1), 2);
    /* a log taken out is no longer checkpointed, and its place is free */
    br_logm_remove(lm, m0);
    CU_ASSERT_EQUAL(br_logm_dir_partitions(lm, 0), 0);
    br_logm_write_checkpoints(lm);
    CU_ASSERT_EQUAL(checkpointed(dir0, BR_RECOVERY_CHECKPOINT, "t", 0), -1);
    br_log_close(l0);
    br_logm_remove(lm, m1);
    br_log_close(l1);
    br_logm_close(lm, true);

    /* the next start: recovery begins at the checkpointed point, and the
     * log start moves where the checkpoint says once the logs are added */
    lm = open_lm(&c, NULL);
    CU_ASSERT_EQUAL(br_logm_recovery_point(lm, "t", 1), 0);
    CU_ASSERT_EQUAL(br_logm_recovery_point(lm, "other", 0), 0);
    l1 = add_log(lm, "t", 1, &lc, &o1, &m1);
    CU_ASSERT_EQUAL(br_managed_log_dir(m1), 1); /* found where it was */
    CU_ASSERT_EQUAL(br_log_start_offset(l1), 0);
    br_logm_loaded(lm);
    CU_ASSERT_EQUAL(br_log_start_offset(l1), 2);
    CU_ASSERT_EQUAL(br_log_end_offset(l1), 7);
    br_logm_remove(lm, m1);
    br_log_close(l1);
    br_logm_close(lm, false);
    cleanup();
}

static void test_a_clean_close_marks_the_dirs_and_an_open_takes_the_mark(void)
{
    setup();
    struct br_logm_config c = config();
    struct br_log_manager *lm = open_lm(&c, NULL);
    br_logm_close(lm, true);
    CU_ASSERT(exists(dir0, ".kafka_cleanshutdown"));
    CU_ASSERT(exists(dir1, ".kafka_cleanshutdown"));
    lm = open_lm(&c, NULL);
    CU_ASSERT(!exists(dir0, ".kafka_cleanshutdown")); /* a crash now is unclean */
    br_logm_close(lm, false);
    CU_ASSERT(!exists(dir0, ".kafka_cleanshutdown"));
    cleanup();
}

/* Delivers the mailbox's messages until done() or 30 s passed. */
static bool deliver_until(struct br_mailbox *mb, bool (*done)(void *), void *arg)
{
    int64_t deadline = br_now_mono_ms() + 30000;
    while (!done(arg)) {
        if (br_now_mono_ms() > deadline) {
            return false;
        }
        struct pollfd pfd = {br_mailbox_fd(mb), POLLIN, 0};
        (void)poll(&pfd, 1, 100);
        br_mailbox_deliver_all(mb, NULL);
    }
    return true;
}

static bool flushed_to_end(void *arg)
{
    const struct br_log *log = arg;
    return br_log_recovery_point(log) == br_log_end_offset(log);
}

static bool replication_checkpoint_written(void *arg)
{
    (void)arg;
    return checkpointed(dir0, BR_REPLICATION_CHECKPOINT, "f", 0) == 4;
}

static void test_tick_flushes_due_logs_and_writes_checkpoints_on_its_thread(void)
{
    setup();
    struct br_logm_config c = config();
    c.checkpoint_interval_ms = 0; /* every tick */
    struct br_log_manager *lm = open_lm(&c, NULL);
    struct br_mailbox *mb = NULL;
    CU_ASSERT_EQUAL_FATAL(br_mailbox_create(&mb), 0);
    CU_ASSERT_EQUAL_FATAL(br_logm_start(lm, mb, NULL, false), 0);
    struct br_log_config lc;
    br_log_config_defaults(&lc);
    lc.flush_interval_ms = 0; /* due at once */
    struct owner o = {4};
    struct br_managed_log *ml = NULL;
    struct br_log *log = add_log(lm, "f", 0, &lc, &o, &ml);
    append(log, 4, 10);
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 0);
    br_logm_tick(lm, br_now_wall_ms() + 1, br_now_mono_ms());
    CU_ASSERT(deliver_until(mb, flushed_to_end, log));
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 4);
    br_logm_tick(lm, br_now_wall_ms() + 1, br_now_mono_ms());
    CU_ASSERT(deliver_until(mb, replication_checkpoint_written, NULL));
    br_logm_stop(lm);
    br_logm_remove(lm, ml);
    br_log_close(log);
    br_logm_close(lm, true);
    br_mailbox_free(mb);
    cleanup();
}

static void test_retention_follows_each_logs_policy_and_stops_at_the_high_watermark(void)
{
    setup();
    struct br_logm_config c = config();
    struct br_log_manager *lm = open_lm(&c, NULL);
    struct br_log_config del;
    br_log_config_defaults(&del);
    del.segment_bytes = 1024; /* a segment a batch */
    del.retention_bytes = 1;  /* keep as little as possible */
    struct br_log_config compact = del;
    compact.cleanup_delete = false;
    compact.cleanup_compact = true;
    struct owner o0 = {0};
    struct owner o1 = {0};
    struct br_managed_log *m0 = NULL;
    struct br_managed_log *m1 = NULL;
    struct br_log *l0 = add_log(lm, "r", 0, &del, &o0, &m0);
    struct br_log *l1 = add_log(lm, "r", 1, &compact, &o1, &m1);
    for (int i = 0; i < 4; i++) {
        append(l0, 1, 900);
        append(l1, 1, 900);
    }
    CU_ASSERT_EQUAL_FATAL(br_log_segment_count(l0), 4);
    /* nothing is replicated yet: nothing may go */
    br_logm_tick(lm, br_now_wall_ms(), br_now_mono_ms() + 1);
    CU_ASSERT_EQUAL(br_log_start_offset(l0), 0);
    o0.hw = 2;
    o1.hw = 4;
    br_logm_tick(lm, br_now_wall_ms(), br_now_mono_ms() + 2);
    CU_ASSERT_EQUAL(br_log_start_offset(l0), 2); /* up to the high watermark */
    CU_ASSERT_EQUAL(br_log_start_offset(l1), 0); /* compacted, not deleted */
    o0.hw = 4;
    br_logm_tick(lm, br_now_wall_ms(), br_now_mono_ms() + 3);
    CU_ASSERT_EQUAL(br_log_start_offset(l0), 3); /* the active segment stays */
    CU_ASSERT_EQUAL(br_log_segment_count(l1), 4);
    br_logm_remove(lm, m0);
    br_logm_remove(lm, m1);
    br_log_close(l0);
    br_log_close(l1);
    br_logm_close(lm, false);
    cleanup();
}

static int64_t wb_stand_ins; /* bytes of ranges this test had to begin */

static bool writebehind_caught_up(void *arg)
{
    struct br_log *log = arg;
    struct br_log_wb *w = NULL;
    /* a job of the manager's away: KP_E_INVALID_ARG */
    if (br_log_wb_begin(log, &w) != 0) {
        return false;
    }
    if (w == NULL) {
        return true;
    }
    /* the manager's next job was not begun yet: this one stands in */
    for (size_t i = 0; i < br_log_wb_count(w); i++) {
        wb_stand_ins += br_log_wb_get(w, i)->len;
    }
    br_log_wb_run(w);
    int rc = br_log_wb_end(w);
    CU_ASSERT_EQUAL(rc, 0);
    return false;
}

/* The manager writes behind on its thread as a log grows; the window
 * shrinks so that the logs appended to keep within the budget, and off
 * means off. */
static void test_writebehind_runs_on_the_flusher_within_the_budget(void)
{
    setup();
    struct br_logm_config c = config();
    c.writebehind_enable = true;
    c.writebehind_window_bytes = INT64_C(64) << 20;
    c.writebehind_budget_bytes = INT64_C(20) << 20; /* 8 MiB windows for one log */
    struct br_log_manager *lm = open_lm(&c, NULL);
    CU_ASSERT_EQUAL(br_logm_writebehind_window(lm), INT64_C(8) << 20);
    struct br_mailbox *mb = NULL;
    CU_ASSERT_EQUAL_FATAL(br_mailbox_create(&mb), 0);
    CU_ASSERT_EQUAL_FATAL(br_logm_start(lm, mb, NULL, false), 0);
    struct br_log_config lc;
    br_log_config_defaults(&lc);
    struct owner o = {0};
    struct br_managed_log *ml[2] = {NULL, NULL};
    struct br_log *log = add_log(lm, "wb", 0, &lc, &o, &ml[0]);
    struct br_log *other = add_log(lm, "wb", 1, &lc, &o, &ml[1]);
    CU_ASSERT_EQUAL(br_log_wb_window(log), INT64_C(8) << 20);
    for (int i = 0; i < 24 * 512; i++) { /* 24 MiB in 2 KiB records */
        append(log, 1, 2000);
        br_mailbox_deliver_all(mb, NULL);
    }
    wb_stand_ins = 0;
    CU_ASSERT(deliver_until(mb, writebehind_caught_up, log));
    /* of about 24 MiB written back or dropped: at most the last step of each */
    CU_ASSERT_TRUE(wb_stand_ins <= (INT64_C(8) << 20));
    CU_ASSERT_EQUAL(br_log_recovery_point(log), 0); /* no flush was asked for */
    /* both logs appended to in the last tick: the budget is shared */
    append(log, 1, 10);
    append(other, 1, 10);
    br_logm_tick(lm, br_now_wall_ms(), br_now_mono_ms());
    CU_ASSERT_EQUAL(br_logm_writebehind_window(lm), INT64_C(4) << 20);
    CU_ASSERT_EQUAL(br_log_wb_window(other), INT64_C(4) << 20);
    br_logm_tick(lm, br_now_wall_ms(), br_now_mono_ms()); /* idle now */
    CU_ASSERT_EQUAL(br_logm_writebehind_window(lm), INT64_C(8) << 20);
    br_logm_stop(lm);
    br_logm_remove(lm, ml[0]);
    br_logm_remove(lm, ml[1]);
    CU_ASSERT_EQUAL(br_log_wb_window(log), 0);
    br_log_close(log);
    br_log_close(other);
    br_logm_close(lm, true);

    c.writebehind_enable = false;
    lm = open_lm(&c, NULL);
    CU_ASSERT_EQUAL(br_logm_writebehind_window(lm), 0);
    log = add_log(lm, "wb", 0, &lc, &o, &ml[0]);
    CU_ASSERT_EQUAL(br_log_wb_window(log), 0);
    br_logm_remove(lm, ml[0]);
    br_log_close(log);
    br_logm_close(lm, true);
    br_mailbox_free(mb);
    cleanup();
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"open_makes_and_locks_every_dir", test_open_makes_and_locks_every_dir},
        {"placement_fills_the_emptiest_dir_and_keeps_a_partition_where_it_is",
         test_placement_fills_the_emptiest_dir_and_keeps_a_partition_where_it_is},
        {"checkpoints_hold_recovery_point_high_watermark_and_log_start",
         test_checkpoints_hold_recovery_point_high_watermark_and_log_start},
        {"a_clean_close_marks_the_dirs_and_an_open_takes_the_mark",
         test_a_clean_close_marks_the_dirs_and_an_open_takes_the_mark},
        {"tick_flushes_due_logs_and_writes_checkpoints_on_its_thread",
         test_tick_flushes_due_logs_and_writes_checkpoints_on_its_thread},
        {"retention_follows_each_logs_policy_and_stops_at_the_high_watermark",
         test_retention_follows_each_logs_policy_and_stops_at_the_high_watermark},
        {"writebehind_runs_on_the_flusher_within_the_budget",
         test_writebehind_runs_on_the_flusher_within_the_budget},
        CU_TEST_INFO_NULL,
    };
    int rc = st_run_suite("broker-log_manager", tests);
    br_filecache_free(files);
    return rc;
}
