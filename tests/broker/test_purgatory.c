/* Unit tests for the purgatory (broker/src/reactor/purgatory.h) and the
 * reactor's end-of-turn tasks it completes from: delayed operations of a
 * user of its own, parked on keys, woken, expired, forced and cancelled. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/alloc.h>

#include "base/clock.h"
#include "base/logging.h"
#include "cunit_run.h"
#include "quiet_net.h"
#include "reactor/net.h"
#include "reactor/purgatory.h"

#define MAX_LINKS 4

struct op;

struct world {
    struct br_net *net;
    struct br_purgatory pg;
    size_t nready;    /* ready calls, every operation */
    size_t ncomplete; /* complete calls, every operation */
    bool inside_wake; /* set around br_purgatory_wake */
    bool completed_inside_wake;
};

struct op {
    struct br_delayed d;
    struct br_delay_link links[MAX_LINKS];
    struct world *w;
    bool answer; /* what ready says */
    size_t nready;
    bool woken_seen[MAX_LINKS]; /* at the last ready call */
    size_t ncomplete;
    bool expired;
    bool heap;                             /* freed by its complete */
    struct br_delay_key *wake_on_complete; /* woken from its complete */
    struct op *cancel_on_complete;         /* cancelled from its complete */
};

static bool op_ready(void *ctx, struct br_delayed *d)
{
    struct world *w = ctx;
    struct op *o = d->owner;
    w->nready++;
    o->nready++;
    for (size_t i = 0; i < d->nlinks; i++) {
        o->woken_seen[i] = br_delayed_woken(d, i);
    }
    return o->answer;
}

static void op_complete(void *ctx, struct br_delayed *d, bool expired)
{
    struct world *w = ctx;
    struct op *o = d->owner;
    w->ncomplete++;
    if (w->inside_wake) {
        w->completed_inside_wake = true;
    }
    o->ncomplete++;
    o->expired = expired;
    if (o->wake_on_complete != NULL) {
        br_purgatory_wake(&w->pg, o->wake_on_complete);
    }
    if (o->cancel_on_complete != NULL) {
        br_purgatory_cancel(&w->pg, &o->cancel_on_complete->d);
    }
    if (o->heap) {
        kp_free(o);
    }
}

static const struct br_delayed_ops op_ops = {"test op", op_ready, op_complete};

static void world_init(struct world *w)
{
    memset(w, 0, sizeof *w);
    struct br_net_limits lim = {.max_connections = 4, .max_request_bytes = 1 << 20};
    CU_ASSERT_EQUAL_FATAL(br_net_create(&lim, &st_quiet_net_ops, w, &w->net), 0);
    if (w->net == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    br_purgatory_init(&w->pg, w->net, w);
}

static void world_fini(struct world *w)
{
    br_purgatory_fini(&w->pg);
    br_net_free(w->net);
}

/* keys[0..n) watched by links 0..n, parked for an hour unless deadline */
static void op_park(struct world *w, struct op *o, struct br_delay_key **keys, size_t n,
                    int64_t deadline)
{
    bool heap = o->heap;
    memset(o, 0, sizeof *o);
    o->heap = heap;
    o->w = w;
    br_delayed_init(&o->d, &op_ops, o, o->links, n);
    for (size_t i = 0; i < n; i++) {
        br_delayed_watch(&o->d, i, keys[i]);
    }
    br_purgatory_park(&w->pg, &o->d,
                      deadline != 0 ? deadline : br_now_mono_ms() + (int64_t)3600 * 1000);
}

static void wake(struct world *w, struct br_delay_key *k)
{
    w->inside_wake = true;
    br_purgatory_wake(&w->pg, k);
    w->inside_wake = false;
}

/* ---------------------------------------------------------------- tests */

/* A wake completes nothing inside the call: the operation is asked at the
 * end of the turn, once however many times it was woken, and then it has
 * left every key. */
static void test_wake_completes_at_the_end_of_the_turn(void)
{
    struct world w;
    world_init(&w);
    struct br_delay_key k = {0};
    struct op o = {0};
    struct br_delay_key *keys[] = {&k};
    op_park(&w, &o, keys, 1, 0);
    o.answer = true;
    CU_ASSERT_TRUE(br_delay_key_watched(&k));
    CU_ASSERT_EQUAL(br_purgatory_count(&w.pg), 1);
    for (int i = 0; i < 1000; i++) {
        wake(&w, &k);
    }
    CU_ASSERT_EQUAL(o.nready, 0);
    CU_ASSERT_EQUAL(o.ncomplete, 0);
    br_net_poll(w.net);
    CU_ASSERT_FALSE(w.completed_inside_wake);
    CU_ASSERT_EQUAL(o.nready, 1);
    CU_ASSERT_EQUAL(o.ncomplete, 1);
    CU_ASSERT_FALSE(o.expired);
    CU_ASSERT_FALSE(br_delay_key_watched(&k));
    CU_ASSERT_EQUAL(br_purgatory_count(&w.pg), 0);
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(o.ncomplete, 1);
    world_fini(&w);
}

/* ready learns which keys were woken since it was last asked; saying no
 * keeps the operation parked, and it is not asked again until a wake. */
static void test_ready_sees_the_woken_keys_and_no_keeps_it(void)
{
    struct world w;
    world_init(&w);
    struct br_delay_key k[3] = {{0}, {0}, {0}};
    struct op o = {0};
    struct br_delay_key *keys[] = {&k[0], &k[1], &k[2]};
    op_park(&w, &o, keys, 3, 0);
    wake(&w, &k[1]);
    wake(&w, &k[1]);
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(o.nready, 1);
    CU_ASSERT_FALSE(o.woken_seen[0]);
    CU_ASSERT_TRUE(o.woken_seen[1]);
    CU_ASSERT_FALSE(o.woken_seen[2]);
    CU_ASSERT_EQUAL(o.ncomplete, 0);
    CU_ASSERT_EQUAL(br_purgatory_count(&w.pg), 1);
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(o.nready, 1);
    wake(&w, &k[2]);
    wake(&w, &k[0]);
    o.answer = true;
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(o.nready, 2);
    CU_ASSERT_TRUE(o.woken_seen[0]);
    CU_ASSERT_FALSE(o.woken_seen[1]);
    CU_ASSERT_TRUE(o.woken_seen[2]);
    CU_ASSERT_EQUAL(o.ncomplete, 1);
    CU_ASSERT_FALSE(o.expired);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_FALSE(br_delay_key_watched(&k[i]));
    }
    world_fini(&w);
}

/* The deadline passes: completed as expired, never asked. */
static void test_deadline_expires_it(void)
{
    struct world w;
    world_init(&w);
    struct br_delay_key k = {0};
    struct op due = {0};
    struct op later = {0};
    struct br_delay_key *keys[] = {&k};
    op_park(&w, &due, keys, 1, br_now_mono_ms() - 1);
    op_park(&w, &later, keys, 1, 0);
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(due.ncomplete, 1);
    CU_ASSERT_TRUE(due.expired);
    CU_ASSERT_EQUAL(due.nready, 0);
    CU_ASSERT_EQUAL(later.ncomplete, 0);
    CU_ASSERT_EQUAL(br_purgatory_count(&w.pg), 1);
    CU_ASSERT_TRUE(br_delay_key_watched(&k));
    br_purgatory_cancel(&w.pg, &later.d);
    CU_ASSERT_FALSE(br_delay_key_watched(&k));
    /* forced before its deadline, which has passed: it does not fire after */
    struct op forced = {0};
    op_park(&w, &forced, keys, 1, br_now_mono_ms() - 1);
    br_purgatory_complete_key(&w.pg, &k);
    CU_ASSERT_EQUAL(forced.ncomplete, 1);
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(forced.ncomplete, 1);
    world_fini(&w);
}

/* Cancelled after a wake and before the end of the turn: no callback at
 * all, no key left, its deadline gone. A second cancel is harmless. */
static void test_cancel_after_a_wake(void)
{
    struct world w;
    world_init(&w);
    struct br_delay_key k = {0};
    struct op o = {0};
    struct op other = {0};
    struct br_delay_key *keys[] = {&k};
    op_park(&w, &o, keys, 1, br_now_mono_ms() + 1);
    op_park(&w, &other, keys, 1, 0);
    o.answer = true;
    other.answer = true;
    wake(&w, &k);
    br_purgatory_cancel(&w.pg, &o.d);
    br_purgatory_cancel(&w.pg, &o.d);
    CU_ASSERT_EQUAL(br_purgatory_count(&w.pg), 1);
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(o.nready, 0);
    CU_ASSERT_EQUAL(o.ncomplete, 0);
    CU_ASSERT_EQUAL(other.ncomplete, 1); /* the queue held both */
    CU_ASSERT_EQUAL(br_purgatory_count(&w.pg), 0);
    world_fini(&w);
    CU_ASSERT_EQUAL(o.ncomplete, 0); /* not even at shutdown */
}

/* The object holding a key goes: those waiting on it expire inside the
 * call, the others stay. */
static void test_complete_key_forces_its_waiters(void)
{
    struct world w;
    world_init(&w);
    struct br_delay_key a = {0};
    struct br_delay_key b = {0};
    struct op o1 = {0};
    struct op o2 = {0};
    struct op o3 = {0};
    struct br_delay_key *ka[] = {&a};
    struct br_delay_key *kab[] = {&b, &a};
    struct br_delay_key *kb[] = {&b};
    op_park(&w, &o1, ka, 1, 0);
    op_park(&w, &o2, kab, 2, 0);
    op_park(&w, &o3, kb, 1, 0);
    br_purgatory_complete_key(&w.pg, &a);
    CU_ASSERT_EQUAL(o1.ncomplete, 1);
    CU_ASSERT_TRUE(o1.expired);
    CU_ASSERT_EQUAL(o2.ncomplete, 1);
    CU_ASSERT_TRUE(o2.expired);
    CU_ASSERT_EQUAL(o3.ncomplete, 0);
    CU_ASSERT_FALSE(br_delay_key_watched(&a));
    CU_ASSERT_TRUE(br_delay_key_watched(&b)); /* o3 alone now */
    CU_ASSERT_EQUAL(br_purgatory_count(&w.pg), 1);
    wake(&w, &b);
    o3.answer = true;
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(o3.ncomplete, 1);
    CU_ASSERT_FALSE(o3.expired);
    CU_ASSERT_EQUAL(o2.ncomplete, 1);
    world_fini(&w);
}

/* Shutdown: every parked operation expires, each freeing itself from its
 * complete (the sanitizers see any use after). */
static void test_complete_all_at_shutdown(void)
{
    struct world w;
    world_init(&w);
    struct br_delay_key k[8];
    memset(k, 0, sizeof k);
    for (size_t i = 0; i < 100; i++) {
        struct op *o = kp_calloc(1, sizeof *o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(o);
        if (o == NULL) {
            abort();
        }
        o->heap = true;
        struct br_delay_key *keys[] = {&k[i % 8], &k[(i + 3) % 8]};
        op_park(&w, o, keys, 2, 0);
    }
    wake(&w, &k[2]); /* queued ones go too */
    CU_ASSERT_EQUAL(br_purgatory_count(&w.pg), 100);
    br_purgatory_complete_all(&w.pg);
    CU_ASSERT_EQUAL(w.ncomplete, 100);
    CU_ASSERT_EQUAL(br_purgatory_count(&w.pg), 0);
    for (size_t i = 0; i < 8; i++) {
        CU_ASSERT_FALSE(br_delay_key_watched(&k[i]));
    }
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(w.nready, 0);
    world_fini(&w);
}

/* A completion that wakes another key: that operation is asked in the next
 * turn, not inside this one's completion nor later in the same turn. */
static void test_wake_from_a_completion_waits_for_the_next_turn(void)
{
    struct world w;
    world_init(&w);
    struct br_delay_key a = {0};
    struct br_delay_key b = {0};
    struct op first = {0};
    struct op second = {0};
    struct br_delay_key *ka[] = {&a};
    struct br_delay_key *kb[] = {&b};
    op_park(&w, &first, ka, 1, 0);
    op_park(&w, &second, kb, 1, 0);
    first.answer = true;
    second.answer = true;
    first.wake_on_complete = &b;
    wake(&w, &a);
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(first.ncomplete, 1);
    CU_ASSERT_EQUAL(second.nready, 0);
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(second.nready, 1);
    CU_ASSERT_EQUAL(second.ncomplete, 1);
    world_fini(&w);
}

/* A completion cancels an operation queued behind it in the same turn (its
 * connection closed): the cancelled one is never asked. */
static void test_cancel_from_a_completion_of_a_queued_one(void)
{
    struct world w;
    world_init(&w);
    struct br_delay_key k = {0};
    struct op o[3];
    memset(o, 0, sizeof o);
    struct br_delay_key *keys[] = {&k};
    for (size_t i = 0; i < 3; i++) {
        op_park(&w, &o[i], keys, 1, 0);
        o[i].answer = true;
    }
    wake(&w, &k);
    /* keys list the newest first, so o[2] is asked first: it cancels the
     * last of the turn (o[0]) and the one in the middle goes on */
    o[2].cancel_on_complete = &o[0];
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(o[2].ncomplete, 1);
    CU_ASSERT_EQUAL(o[1].ncomplete, 1);
    CU_ASSERT_EQUAL(o[0].nready, 0);
    CU_ASSERT_EQUAL(o[0].ncomplete, 0);
    CU_ASSERT_EQUAL(br_purgatory_count(&w.pg), 0);
    world_fini(&w);
}

/* ---------------------------------------------------------------- tasks */

struct task_user {
    struct br_net *net;
    size_t runs;
    struct br_task *post_other; /* posted from this task's run */
    struct br_task *cancel_other;
};

static void task_run(void *ctx, struct br_task *t)
{
    (void)ctx;
    struct task_user *tu = t->owner;
    tu->runs++;
    if (tu->post_other != NULL) {
        br_task_post(tu->net, tu->post_other);
    }
    if (tu->cancel_other != NULL) {
        br_task_cancel(tu->net, tu->cancel_other);
    }
}

static const struct br_task_ops task_ops = {"test task", task_run};

/* A task posted twice runs once; one posted from a running task runs in
 * the next turn; a cancelled one (before or during the turn) never runs. */
static void test_tasks_run_once_at_the_end_of_the_turn(void)
{
    struct world w;
    world_init(&w);
    struct task_user ua = {.net = w.net};
    struct task_user ub = {.net = w.net};
    struct task_user uc = {.net = w.net};
    struct task_user ud = {.net = w.net};
    struct br_task a;
    struct br_task b;
    struct br_task c;
    struct br_task d;
    br_task_init(&a, &task_ops, &ua);
    br_task_init(&b, &task_ops, &ub);
    br_task_init(&c, &task_ops, &uc);
    br_task_init(&d, &task_ops, &ud);
    ua.post_other = &b;
    ua.cancel_other = &d;
    br_task_post(w.net, &a);
    br_task_post(w.net, &a);
    br_task_post(w.net, &c);
    br_task_post(w.net, &d);
    br_task_cancel(w.net, &c);
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(ua.runs, 1);
    CU_ASSERT_EQUAL(ub.runs, 0); /* posted during the turn */
    CU_ASSERT_EQUAL(uc.runs, 0);
    CU_ASSERT_EQUAL(ud.runs, 0); /* cancelled by a, before its turn came */
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(ua.runs, 1);
    CU_ASSERT_EQUAL(ub.runs, 1);
    br_net_poll(w.net);
    CU_ASSERT_EQUAL(ub.runs, 1);
    world_fini(&w);
}

static CU_TestInfo tests[] = {
    {"wake_completes_at_the_end_of_the_turn", test_wake_completes_at_the_end_of_the_turn},
    {"ready_sees_the_woken_keys_and_no_keeps_it", test_ready_sees_the_woken_keys_and_no_keeps_it},
    {"deadline_expires_it", test_deadline_expires_it},
    {"cancel_after_a_wake", test_cancel_after_a_wake},
    {"complete_key_forces_its_waiters", test_complete_key_forces_its_waiters},
    {"complete_all_at_shutdown", test_complete_all_at_shutdown},
    {"wake_from_a_completion_waits_for_the_next_turn",
     test_wake_from_a_completion_waits_for_the_next_turn},
    {"cancel_from_a_completion_of_a_queued_one", test_cancel_from_a_completion_of_a_queued_one},
    {"tasks_run_once_at_the_end_of_the_turn", test_tasks_run_once_at_the_end_of_the_turn},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-purgatory", tests);
}
