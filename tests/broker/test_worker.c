/* Unit tests for the I/O worker (broker/src/worker.h) and the asynchronous
 * metadata store on it (broker/src/metadata_async.h). */
#define _GNU_SOURCE

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/err.h>

#include "base/logging.h"
#include "cluster/metadata_async.h"
#include "cunit_run.h"
#include "base/mailbox.h"
#include "base/worker.h"
#include "tmpdir.h"

#define NJOBS 200

struct test_job {
    struct br_job job; /* first */
    int seq;
    int slow_ms; /* sleeps this long when run */
};

/* What the jobs saw, written by the thread that runs them only. */
static int run_order[NJOBS + 1];
static atomic_int nrun;

static void test_job_run(struct br_job *job)
{
    struct test_job *t = (struct test_job *)(void *)job;
    if (t->slow_ms > 0) {
        struct timespec ts = {0, (long)t->slow_ms * 1000000L};
        (void)nanosleep(&ts, NULL);
    }
    int i = atomic_load(&nrun);
    if (i < NJOBS + 1) {
        run_order[i] = t->seq;
    }
    atomic_store(&nrun, i + 1);
}

static const struct br_job_ops test_ops = {"test", test_job_run};

/* What the reactor's user would call with a message (never called here:
 * the tests take the messages and check who they are for). */
static void job_delivered(void *ctx, struct br_mail *m)
{
    (void)ctx;
    (void)m;
}

static void meta_delivered(void *ctx, struct br_mail *m)
{
    (void)ctx;
    (void)m;
}

static struct test_job *job_new(int seq)
{
    struct test_job *t = kp_calloc(1, sizeof *t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    if (t == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    t->job.ops = &test_ops;
    t->job.mail.deliver = job_delivered;
    t->seq = seq;
    return t;
}

/* Takes messages from mb until `want` came (or 10 s passed) into got[]. */
static size_t take(struct br_mailbox *mb, struct br_mail **got, size_t want)
{
    size_t n = 0;
    struct timespec start;
    (void)clock_gettime(CLOCK_MONOTONIC, &start);
    while (n < want) {
        struct pollfd pfd = {br_mailbox_fd(mb), POLLIN, 0};
        (void)poll(&pfd, 1, 100);
        for (struct br_mail *m = br_mailbox_take_all(mb); m != NULL;) {
            struct br_mail *next = m->next;
            if (n < want) {
                got[n++] = m;
            } else {
                kp_free(m);
            }
            m = next;
        }
        struct timespec now;
        (void)clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 10) {
            break;
        }
    }
    return n;
}

static void reset_runs(void)
{
    atomic_store(&nrun, 0);
    memset(run_order, 0, sizeof run_order);
}

static void test_jobs_run_in_submission_order_and_come_back_with_their_kind(void)
{
    reset_runs();
    struct br_mailbox *mb = NULL;
    struct br_worker *w = NULL;
    CU_ASSERT_EQUAL_FATAL(br_mailbox_create(&mb), 0);
    CU_ASSERT_EQUAL_FATAL(br_worker_start(mb, false, "test", &w), 0);
    for (int i = 0; i < NJOBS; i++) {
        br_worker_submit(w, &job_new(i)->job);
    }
    static struct br_mail *got[NJOBS];
    size_t ngot = take(mb, got, NJOBS);
    CU_ASSERT_EQUAL_FATAL(ngot, NJOBS);
    if (ngot != NJOBS) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    CU_ASSERT_EQUAL(atomic_load(&nrun), NJOBS);
    CU_ASSERT_EQUAL(br_worker_queued(w), 0);
    for (int i = 0; i < NJOBS; i++) {
        const struct test_job *t = (const struct test_job *)(const void *)got[i];
        CU_ASSERT(got[i]->deliver == job_delivered);
        CU_ASSERT_EQUAL(t->seq, i);
        CU_ASSERT_EQUAL(run_order[i], i);
        kp_free(got[i]);
    }
    br_worker_free(w);
    br_mailbox_free(mb);
}

static void test_stop_runs_every_queued_job_first(void)
{
    reset_runs();
    struct br_mailbox *mb = NULL;
    struct br_worker *w = NULL;
    CU_ASSERT_EQUAL_FATAL(br_mailbox_create(&mb), 0);
    CU_ASSERT_EQUAL_FATAL(br_worker_start(mb, false, "test", &w), 0);
    struct test_job *slow = job_new(0);
    slow->slow_ms = 100; /* the others queue behind it */
    br_worker_submit(w, &slow->job);
    for (int i = 1; i <= 50; i++) {
        br_worker_submit(w, &job_new(i)->job);
    }
    br_worker_stop(w);
    CU_ASSERT_EQUAL(atomic_load(&nrun), 51);
    CU_ASSERT_EQUAL(br_worker_queued(w), 0);
    static struct br_mail *got[51];
    CU_ASSERT_EQUAL(take(mb, got, 51), 51);
    for (int i = 0; i < 51; i++) {
        kp_free(got[i]);
    }
    /* stopped: what is submitted now runs at once, on this thread */
    br_worker_submit(w, &job_new(51)->job);
    CU_ASSERT_EQUAL(atomic_load(&nrun), 52);
    CU_ASSERT_EQUAL(take(mb, got, 1), 1);
    kp_free(got[0]);
    br_worker_free(w);
    br_mailbox_free(mb);
}

static void test_inline_worker_runs_the_job_at_submit_and_posts_it(void)
{
    reset_runs();
    struct br_mailbox *mb = NULL;
    struct br_worker *w = NULL;
    CU_ASSERT_EQUAL_FATAL(br_mailbox_create(&mb), 0);
    CU_ASSERT_EQUAL_FATAL(br_worker_start(mb, true, "test", &w), 0);
    br_worker_submit(w, &job_new(7)->job);
    CU_ASSERT_EQUAL(atomic_load(&nrun), 1);
    CU_ASSERT_EQUAL(run_order[0], 7);
    struct br_mail *m = br_mailbox_take_all(mb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (m == NULL) {
        abort();
    }
    CU_ASSERT_PTR_NULL(m->next);
    kp_free(m);
    br_worker_free(w);
    br_mailbox_free(mb);
}

/* ------------------------------------------------------------ metadata */

static struct br_meta_request *request(enum br_meta_op op, const char *name, int32_t partitions,
                                       uint64_t tag)
{
    int32_t replicas[4] = {0, 0, 0, 0};
    struct br_topic_meta t;
    memset(&t, 0, sizeof t);
    (void)snprintf(t.name, sizeof t.name, "%s", name);
    t.partitions = partitions;
    t.replication_factor = 1;
    t.replicas = replicas;
    struct br_meta_request *rq = NULL;
    CU_ASSERT_EQUAL_FATAL(br_meta_request_new(op, &t, &rq), 0);
    if (rq == NULL) {
        abort();
    }
    rq->job.mail.deliver = meta_delivered;
    rq->tag = tag;
    return rq;
}

static void test_meta_requests_come_back_in_order_with_the_store_outcome(void)
{
    char root[64];
    CU_ASSERT_PTR_NOT_NULL_FATAL(st_tmpdir_make(root, sizeof root, "worker"));
    char path[128];
    (void)snprintf(path, sizeof path, "%s/%s", root, BR_META_FILE_NAME);
    char err[256];
    struct br_meta store;
    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(path, &store, err, sizeof err), 0);
    struct br_mailbox *mb = NULL;
    struct br_worker *w = NULL;
    struct br_meta_async *ma = NULL;
    CU_ASSERT_EQUAL_FATAL(br_mailbox_create(&mb), 0);
    CU_ASSERT_EQUAL_FATAL(br_worker_start(mb, false, "test", &w), 0);
    CU_ASSERT_EQUAL_FATAL(br_meta_async_open(&store, w, &ma), 0);

    br_meta_async_submit(ma, request(BR_META_OP_CREATE_TOPIC, "a", 4, 11));
    br_meta_async_submit(ma, request(BR_META_OP_CREATE_TOPIC, "a", 1, 12));
    br_meta_async_submit(ma, request(BR_META_OP_DELETE_TOPIC, "b", 1, 13));
    br_meta_async_submit(ma, request(BR_META_OP_CREATE_TOPIC, "a_b", 1, 14));
    br_meta_async_submit(ma, request(BR_META_OP_CREATE_TOPIC, "a.b", 1, 15));
    struct br_mail *got[5] = {NULL, NULL, NULL, NULL, NULL};
    size_t ngot = take(mb, got, 5);
    CU_ASSERT_EQUAL_FATAL(ngot, 5);
    if (ngot != 5) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    static const int want[5] = {0, KP_ERR_TOPIC_ALREADY_EXISTS, KP_ERR_UNKNOWN_TOPIC_OR_PARTITION,
                                0, KP_ERR_INVALID_TOPIC_EXCEPTION};
    for (size_t i = 0; i < 5; i++) {
        struct br_meta_request *rq = (struct br_meta_request *)(void *)got[i];
        CU_ASSERT(got[i]->deliver == meta_delivered);
        CU_ASSERT_EQUAL(rq->tag, 11 + i);
        CU_ASSERT_EQUAL(rq->rc, want[i]);
        CU_ASSERT_TRUE(rq->rc == 0 || rq->err[0] != '\0');
        br_meta_request_free(rq);
    }
    /* topic configs travel as a request too (a copy of them) */
    char key[] = "retention.ms";
    char value[] = "1000";
    struct br_meta_config c = {key, value};
    struct br_topic_meta ct;
    memset(&ct, 0, sizeof ct);
    (void)snprintf(ct.name, sizeof ct.name, "a");
    ct.configs = &c;
    ct.n_configs = 1;
    struct br_meta_request *cr = NULL;
    CU_ASSERT_EQUAL_FATAL(br_meta_request_new(BR_META_OP_SET_TOPIC_CONFIGS, &ct, &cr), 0);
    if (cr == NULL) {
        abort();
    }
    cr->job.mail.deliver = meta_delivered;
    cr->tag = 16;
    br_meta_async_submit(ma, cr);
    (void)snprintf(ct.name, sizeof ct.name, "nope");
    CU_ASSERT_EQUAL_FATAL(br_meta_request_new(BR_META_OP_SET_TOPIC_CONFIGS, &ct, &cr), 0);
    if (cr == NULL) {
        abort();
    }
    cr->job.mail.deliver = meta_delivered;
    cr->tag = 17;
    br_meta_async_submit(ma, cr);
    br_meta_async_submit(ma, request(BR_META_OP_DELETE_TOPIC, "a_b", 1, 18));
    ngot = take(mb, got, 3);
    CU_ASSERT_EQUAL_FATAL(ngot, 3);
    if (ngot != 3) {
        abort();
    }
    static const int want2[3] = {0, KP_ERR_UNKNOWN_TOPIC_OR_PARTITION, 0};
    for (size_t i = 0; i < 3; i++) {
        struct br_meta_request *rq = (struct br_meta_request *)(void *)got[i];
        CU_ASSERT_EQUAL(rq->tag, 16 + i);
        CU_ASSERT_EQUAL(rq->rc, want2[i]);
        br_meta_request_free(rq);
    }

    br_meta_async_close(ma);
    br_worker_free(w);
    br_mailbox_free(mb);
    br_meta_close(&store);

    /* what the requests did is in the file */
    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(path, &store, err, sizeof err), 0);
    struct br_topic_meta *topics = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_meta_load(&store, &topics, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    if (topics != NULL && n == 1) {
        CU_ASSERT_STRING_EQUAL(topics[0].name, "a");
        CU_ASSERT_EQUAL(topics[0].partitions, 4);
        CU_ASSERT_PTR_NOT_NULL(br_topic_meta_config(&topics[0], "retention.ms"));
    }
    br_topic_metas_free(topics, n);
    br_meta_close(&store);
    CU_ASSERT_EQUAL(st_tmpdir_remove(root), 0);
}

static CU_TestInfo tests[] = {
    {"jobs_run_in_submission_order_and_come_back_with_their_kind",
     test_jobs_run_in_submission_order_and_come_back_with_their_kind},
    {"stop_runs_every_queued_job_first", test_stop_runs_every_queued_job_first},
    {"inline_worker_runs_the_job_at_submit_and_posts_it",
     test_inline_worker_runs_the_job_at_submit_and_posts_it},
    {"meta_requests_come_back_in_order_with_the_store_outcome",
     test_meta_requests_come_back_in_order_with_the_store_outcome},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-worker", tests);
}
