/*
 * The ZooKeeper session (broker/src/cluster/zk.h) against a real ZooKeeper:
 * SAMSA_ZK_CONNECT names it (host:port), as tests/integration/with_zookeeper.py
 * sets it after starting Debian's ZooKeeper. Every answer and event comes
 * through a real reactor (br_net) delivering its mailbox, as in the broker.
 *
 * Each test works under a chroot of its own, /samsa-test-<pid>-<name>, so
 * tests never see each other's znodes.
 */
#define _GNU_SOURCE

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zookeeper/zookeeper.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/err.h>

#include "base/clock.h"
#include "base/logging.h"
#include "cluster/zk.h"
#include "cunit_run.h"
#include "base/mailbox.h"
#include "reactor/net.h"

#define WAIT_MS 30000
#define MAX_TAGS 64
#define MAX_WATCHES 64
#define MAX_EVENTS 32

static const char *connect_hosts; /* SAMSA_ZK_CONNECT */

/* ------------------------------------------------------------ the reactor */

struct world {
    struct br_net *net;
    struct br_mailbox *mb;
    struct br_watch mb_watch; /* the mailbox's eventfd in the reactor */
};

static struct world W;

static void net_frame(void *ctx, struct br_conn *c, uint8_t *payload, size_t len)
{
    (void)ctx;
    (void)c;
    (void)payload;
    (void)len;
}

static void net_cancel(void *ctx, void *parked)
{
    (void)ctx;
    (void)parked;
}

static void net_drain(void *ctx)
{
    (void)ctx;
}

static const struct br_net_ops net_ops = {net_frame, net_cancel, net_drain, NULL};

/* The mailbox's eventfd is ready: deliver, as the broker does. */
static void mailbox_ready(void *ctx, struct br_watch *w)
{
    (void)ctx;
    (void)w;
    br_mailbox_deliver_all(W.mb, NULL);
}

static const struct br_watch_ops mailbox_watch_ops = {"mailbox", mailbox_ready};

static int world_setup(void)
{
    struct br_net_limits lim = {16, 1 << 20, 0, 0};
    if (br_net_create(&lim, &net_ops, NULL, &W.net) != 0 || br_mailbox_create(&W.mb) != 0) {
        return 1;
    }
    W.mb_watch.fd = br_mailbox_fd(W.mb);
    if (br_net_watch_add(W.net, &W.mb_watch, &mailbox_watch_ops) != 0) {
        return 1;
    }
    return 0;
}

/* One reactor turn, waiting up to ms for the mailbox. */
static void pump(int ms)
{
    struct pollfd pfd = {W.mb_watch.fd, POLLIN, 0};
    (void)poll(&pfd, 1, ms);
    br_net_poll(W.net);
}

/* ------------------------------------------------------------ a session's owner */

struct result {
    bool done;
    int rc;
    int zrc;
    char data[256];
    size_t data_len;
    bool data_null;
    bool has_stat;
    struct br_zk_stat stat;
    size_t n_children;
    char children[512]; /* sorted names, comma-separated */
    char created[256];
    int64_t delivered_at; /* the order of answers: a counter */
};

struct client {
    struct br_zk *zk;
    int events[MAX_EVENTS];
    size_t n_events;
    struct {
        enum br_zk_watch kind;
        char path[256];
    } watches[MAX_WATCHES];
    size_t n_watches;
    struct result res[MAX_TAGS];
    bool in_request_call; /* a done must never come from inside a request call */
    bool done_inside_call;
    int64_t answers;
};

static void on_session(void *ctx, struct br_zk *zk, enum br_zk_event ev)
{
    struct client *c = ctx;
    CU_ASSERT_PTR_EQUAL(zk, c->zk);
    if (c->n_events < MAX_EVENTS) {
        c->events[c->n_events++] = (int)ev;
    }
}

static void on_watch(void *ctx, struct br_zk *zk, enum br_zk_watch kind, const char *path)
{
    struct client *c = ctx;
    CU_ASSERT_PTR_EQUAL(zk, c->zk);
    if (c->n_watches < MAX_WATCHES) {
        c->watches[c->n_watches].kind = kind;
        (void)snprintf(c->watches[c->n_watches].path, sizeof c->watches[0].path, "%s", path);
        c->n_watches++;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void on_done(void *ctx, struct br_zk *zk, uint64_t tag, const struct br_zk_result *r)
{
    struct client *c = ctx;
    CU_ASSERT_PTR_EQUAL(zk, c->zk);
    if (c->in_request_call) {
        c->done_inside_call = true;
    }
    CU_ASSERT_FATAL(tag < MAX_TAGS);
    struct result *out = &c->res[tag];
    CU_ASSERT_FALSE(out->done); /* exactly once */
    memset(out, 0, sizeof *out);
    out->done = true;
    out->rc = r->rc;
    out->zrc = r->zrc;
    out->delivered_at = ++c->answers;
    if (r->data != NULL) {
        out->data_len = r->data_len < sizeof out->data - 1 ? r->data_len : sizeof out->data - 1;
        memcpy(out->data, r->data, out->data_len);
    }
    out->data_null = r->data_null;
    out->has_stat = r->has_stat;
    out->stat = r->stat;
    out->n_children = r->n_children;
    if (r->n_children > 0) {
        const char **names = malloc(r->n_children * sizeof *names);
        CU_ASSERT_PTR_NOT_NULL_FATAL(names);
        if (names == NULL) {
            abort(); /* for the analysers: the assertion above does not return */
        }
        memcpy(names, r->children, r->n_children * sizeof *names);
        qsort(names, r->n_children, sizeof *names, cmp_str);
        size_t o = 0;
        for (size_t i = 0; i < r->n_children && o < sizeof out->children - 1; i++) {
            int w = snprintf(out->children + o, sizeof out->children - o, "%s%s", i ? "," : "",
                             names[i]);
            if (w > 0) {
                o += (size_t)w;
            }
        }
        free(names);
    }
    if (r->created_path != NULL) {
        (void)snprintf(out->created, sizeof out->created, "%s", r->created_path);
    }
}

static const struct br_zk_ops zk_ops = {on_session, on_watch, on_done};

/* A connect string: the hosts, then chroot (may be "" for none). */
static void connect_string(char *buf, size_t cap, const char *chroot)
{
    (void)snprintf(buf, cap, "%s%s", connect_hosts, chroot);
}

static void open_client(struct client *c, const char *chroot)
{
    memset(c, 0, sizeof *c);
    char cs[512];
    connect_string(cs, sizeof cs, chroot);
    struct br_zk_config cfg = {cs, 6000};
    char err[256] = "";
    int rc = br_zk_open(&cfg, W.mb, &zk_ops, c, &c->zk, err, sizeof err);
    if (rc != 0) {
        printf("\n  br_zk_open(%s): %s\n", cs, err);
    }
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(br_zk_state(c->zk), BR_ZK_STATE_OPENING);
}

/* The chroot of a test: /samsa-test-<pid>-<name>. */
static void test_root(char *buf, size_t cap, const char *name)
{
    (void)snprintf(buf, cap, "/samsa-test-%ld-%s", (long)getpid(), name);
}

static size_t count_events(const struct client *c, enum br_zk_event ev)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_events; i++) {
        n += c->events[i] == (int)ev;
    }
    return n;
}

/* Pumps until c saw `ev` `times` times in all, or WAIT_MS. */
static bool wait_event(struct client *c, enum br_zk_event ev, size_t times)
{
    int64_t deadline = br_now_mono_ms() + WAIT_MS;
    while (count_events(c, ev) < times && br_now_mono_ms() < deadline) {
        pump(50);
    }
    return count_events(c, ev) >= times;
}

static void open_connected(struct client *c, const char *chroot)
{
    open_client(c, chroot);
    CU_ASSERT_TRUE_FATAL(wait_event(c, BR_ZK_EVENT_CONNECTED, 1));
    CU_ASSERT_EQUAL(br_zk_state(c->zk), BR_ZK_STATE_CONNECTED);
}

/* Pumps until the answer to tag came; returns it. */
static const struct result *wait_result(struct client *c, uint64_t tag)
{
    int64_t deadline = br_now_mono_ms() + WAIT_MS;
    while (!c->res[tag].done && br_now_mono_ms() < deadline) {
        pump(50);
    }
    CU_ASSERT_TRUE_FATAL(c->res[tag].done);
    return &c->res[tag];
}

/* Pumps until c has seen n watch events, or ms passed. */
static bool wait_watches(struct client *c, size_t n, int ms)
{
    int64_t deadline = br_now_mono_ms() + ms;
    while (c->n_watches < n && br_now_mono_ms() < deadline) {
        pump(20);
    }
    return c->n_watches >= n;
}

/* Requests, each checked to be under way and not answered from inside the
 * call. */
static void req_create(struct client *c, uint64_t tag, const char *path, const char *data,
                       enum br_zk_mode mode)
{
    c->res[tag].done = false;
    c->in_request_call = true;
    int rc = br_zk_create(c->zk, path, data, data != NULL ? strlen(data) : 0, mode, tag);
    c->in_request_call = false;
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void req_get(struct client *c, uint64_t tag, const char *path, bool watch)
{
    c->res[tag].done = false;
    c->in_request_call = true;
    int rc = br_zk_get(c->zk, path, watch, tag);
    c->in_request_call = false;
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void req_set(struct client *c, uint64_t tag, const char *path, const char *data,
                    int32_t version)
{
    c->res[tag].done = false;
    c->in_request_call = true;
    int rc = br_zk_set(c->zk, path, data, strlen(data), version, tag);
    c->in_request_call = false;
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void req_delete(struct client *c, uint64_t tag, const char *path, int32_t version)
{
    c->res[tag].done = false;
    c->in_request_call = true;
    int rc = br_zk_delete(c->zk, path, version, tag);
    c->in_request_call = false;
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void req_exists(struct client *c, uint64_t tag, const char *path, bool watch)
{
    c->res[tag].done = false;
    c->in_request_call = true;
    int rc = br_zk_exists(c->zk, path, watch, tag);
    c->in_request_call = false;
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static void req_children(struct client *c, uint64_t tag, const char *path, bool watch)
{
    c->res[tag].done = false;
    c->in_request_call = true;
    int rc = br_zk_get_children(c->zk, path, watch, tag);
    c->in_request_call = false;
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

/* Closes the session (at stop, as the broker would) and delivers what is
 * left in the mailbox, which frees it. */
static void close_client(struct client *c)
{
    CU_ASSERT_FALSE(c->done_inside_call);
    int64_t answers = c->answers;
    size_t events = c->n_events;
    br_zk_close(c->zk);
    c->zk = NULL;
    pump(0);
    CU_ASSERT_EQUAL(c->answers, answers); /* nothing after close */
    CU_ASSERT_EQUAL(c->n_events, events);
}

/* ------------------------------------------------------------ the tests */

static void test_create_get_set_delete(void)
{
    char root[128];
    test_root(root, sizeof root, "crud");
    struct client c;
    open_connected(&c, root);

    req_create(&c, 1, "/a", "hello", BR_ZK_PERSISTENT);
    const struct result *r = wait_result(&c, 1);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_STRING_EQUAL(r->created, "/a");
    req_create(&c, 2, "/a", "again", BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 2)->rc, BR_ZK_NODEEXISTS);
    req_create(&c, 3, "/no/parent", "x", BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 3)->rc, BR_ZK_NONODE);

    /* a get with a watch: data, stat; then the watch fires on a change */
    req_get(&c, 4, "/a", true);
    r = wait_result(&c, 4);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_EQUAL(r->data_len, 5);
    CU_ASSERT_EQUAL(memcmp(r->data, "hello", 5), 0);
    CU_ASSERT_TRUE(r->has_stat);
    CU_ASSERT_EQUAL(r->stat.version, 0);
    CU_ASSERT_EQUAL(r->stat.ephemeral_owner, 0);
    CU_ASSERT_EQUAL(r->stat.data_length, 5);

    req_set(&c, 5, "/a", "world!", 0);
    r = wait_result(&c, 5);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_EQUAL(r->stat.version, 1);
    CU_ASSERT_TRUE_FATAL(wait_watches(&c, 1, WAIT_MS));
    CU_ASSERT_EQUAL(c.watches[0].kind, BR_ZK_WATCH_CHANGED);
    CU_ASSERT_STRING_EQUAL(c.watches[0].path, "/a"); /* relative to the chroot */

    /* conditional writes on a stale version fail, and change nothing */
    req_set(&c, 6, "/a", "stale", 0);
    r = wait_result(&c, 6);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_BADVERSION);
    CU_ASSERT_EQUAL(r->zrc, ZBADVERSION);
    req_delete(&c, 7, "/a", 0);
    CU_ASSERT_EQUAL(wait_result(&c, 7)->rc, BR_ZK_BADVERSION);
    req_get(&c, 8, "/a", false);
    r = wait_result(&c, 8);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_EQUAL(r->data_len, 6);
    CU_ASSERT_EQUAL(memcmp(r->data, "world!", 6), 0);
    CU_ASSERT_EQUAL(r->stat.version, 1);
    /* the watch was one-shot: the failed writes and the unwatched read set none */
    CU_ASSERT_EQUAL(c.n_watches, 1);

    req_delete(&c, 9, "/a", 1);
    CU_ASSERT_EQUAL(wait_result(&c, 9)->rc, BR_ZK_OK);
    req_get(&c, 10, "/a", false);
    CU_ASSERT_EQUAL(wait_result(&c, 10)->rc, BR_ZK_NONODE);
    req_delete(&c, 11, "/a", -1);
    CU_ASSERT_EQUAL(wait_result(&c, 11)->rc, BR_ZK_NONODE);

    /* no data: Kafka's null (ZooKeeper's -1 length) */
    req_create(&c, 12, "/null", NULL, BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 12)->rc, BR_ZK_OK);
    req_get(&c, 13, "/null", false);
    r = wait_result(&c, 13);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_TRUE(r->data_null);
    CU_ASSERT_EQUAL(r->data_len, 0);
    /* an unconditional set, and a delete of a znode with children */
    req_set(&c, 14, "/null", "", -1);
    CU_ASSERT_EQUAL(wait_result(&c, 14)->stat.version, 1);
    req_create(&c, 15, "/null/child", "", BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 15)->rc, BR_ZK_OK);
    req_delete(&c, 16, "/null", -1);
    CU_ASSERT_EQUAL(wait_result(&c, 16)->rc, BR_ZK_NOTEMPTY);

    /* answers come in the order of the requests */
    req_get(&c, 20, "/null", false);
    req_set(&c, 21, "/null", "x", 1);
    req_get(&c, 22, "/null", false);
    r = wait_result(&c, 22);
    CU_ASSERT_TRUE(c.res[20].done && c.res[21].done);
    CU_ASSERT_TRUE(c.res[20].delivered_at < c.res[21].delivered_at &&
                   c.res[21].delivered_at < c.res[22].delivered_at);
    CU_ASSERT_EQUAL(r->data_len, 1);
    close_client(&c);
}

static void test_ephemeral_and_sequential_creates(void)
{
    char root[128];
    test_root(root, sizeof root, "modes");
    struct client c;
    open_connected(&c, root);
    int64_t sid = 0;
    uint8_t pw[16];
    CU_ASSERT_EQUAL_FATAL(br_zk_session(c.zk, &sid, pw), 0);
    CU_ASSERT_NOT_EQUAL(sid, 0);

    req_create(&c, 1, "/eph", "{\"version\":4}", BR_ZK_EPHEMERAL);
    CU_ASSERT_EQUAL(wait_result(&c, 1)->rc, BR_ZK_OK);
    req_get(&c, 2, "/eph", false);
    const struct result *r = wait_result(&c, 2);
    CU_ASSERT_EQUAL(r->stat.ephemeral_owner, sid);
    req_create(&c, 3, "/eph/child", "", BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 3)->rc, BR_ZK_NOCHILDRENFOREPHEMERALS);

    /* sequential: ZooKeeper's 10-digit counter, the path given back relative */
    req_create(&c, 4, "/changes", NULL, BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 4)->rc, BR_ZK_OK);
    req_create(&c, 5, "/changes/config_change_", "{}", BR_ZK_PERSISTENT_SEQUENTIAL);
    req_create(&c, 6, "/changes/config_change_", "{}", BR_ZK_PERSISTENT_SEQUENTIAL);
    req_create(&c, 7, "/changes/eph_", "", BR_ZK_EPHEMERAL_SEQUENTIAL);
    CU_ASSERT_STRING_EQUAL(wait_result(&c, 5)->created, "/changes/config_change_0000000000");
    CU_ASSERT_STRING_EQUAL(wait_result(&c, 6)->created, "/changes/config_change_0000000001");
    CU_ASSERT_STRING_EQUAL(wait_result(&c, 7)->created, "/changes/eph_0000000002");
    req_children(&c, 8, "/changes", false);
    r = wait_result(&c, 8);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_EQUAL(r->n_children, 3);
    CU_ASSERT_STRING_EQUAL(r->children,
                           "config_change_0000000000,config_change_0000000001,eph_0000000002");
    close_client(&c);
}

static void test_children_and_exists_watches(void)
{
    char root[128];
    test_root(root, sizeof root, "watches");
    struct client c;
    open_connected(&c, root);

    req_create(&c, 1, "/ids", NULL, BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 1)->rc, BR_ZK_OK);
    req_children(&c, 2, "/ids", true);
    const struct result *r = wait_result(&c, 2);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_EQUAL(r->n_children, 0);
    CU_ASSERT_EQUAL(r->stat.cversion, 0);

    req_create(&c, 3, "/ids/1", "b1", BR_ZK_EPHEMERAL);
    CU_ASSERT_EQUAL(wait_result(&c, 3)->rc, BR_ZK_OK);
    CU_ASSERT_TRUE_FATAL(wait_watches(&c, 1, WAIT_MS));
    CU_ASSERT_EQUAL(c.watches[0].kind, BR_ZK_WATCH_CHILD);
    CU_ASSERT_STRING_EQUAL(c.watches[0].path, "/ids");
    req_children(&c, 4, "/ids", true);
    r = wait_result(&c, 4);
    CU_ASSERT_EQUAL(r->n_children, 1);
    CU_ASSERT_STRING_EQUAL(r->children, "1");
    CU_ASSERT_EQUAL(r->stat.cversion, 1);

    /* exists on a missing znode watches for its creation */
    req_exists(&c, 5, "/controller", true);
    r = wait_result(&c, 5);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_NONODE);
    CU_ASSERT_FALSE(r->has_stat);
    req_create(&c, 6, "/controller", "{\"brokerid\":1}", BR_ZK_EPHEMERAL);
    CU_ASSERT_EQUAL(wait_result(&c, 6)->rc, BR_ZK_OK);
    CU_ASSERT_TRUE_FATAL(wait_watches(&c, 2, WAIT_MS));
    CU_ASSERT_EQUAL(c.watches[1].kind, BR_ZK_WATCH_CREATED);
    CU_ASSERT_STRING_EQUAL(c.watches[1].path, "/controller");
    /* exists on a present one: its stat, and a watch for its deletion */
    req_exists(&c, 7, "/controller", true);
    r = wait_result(&c, 7);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_TRUE(r->has_stat);
    CU_ASSERT_NOT_EQUAL(r->stat.ephemeral_owner, 0);
    req_delete(&c, 8, "/controller", -1);
    CU_ASSERT_EQUAL(wait_result(&c, 8)->rc, BR_ZK_OK);
    CU_ASSERT_TRUE_FATAL(wait_watches(&c, 3, WAIT_MS));
    CU_ASSERT_EQUAL(c.watches[2].kind, BR_ZK_WATCH_DELETED);
    CU_ASSERT_STRING_EQUAL(c.watches[2].path, "/controller");
    /* the children watch set by request 4 fires on a deletion too */
    req_delete(&c, 9, "/ids/1", -1);
    CU_ASSERT_EQUAL(wait_result(&c, 9)->rc, BR_ZK_OK);
    CU_ASSERT_TRUE_FATAL(wait_watches(&c, 4, WAIT_MS));
    CU_ASSERT_EQUAL(c.watches[3].kind, BR_ZK_WATCH_CHILD);
    CU_ASSERT_STRING_EQUAL(c.watches[3].path, "/ids");
    close_client(&c);
}

/* Another session sees an ephemeral znode go once its owner closes. */
static void test_ephemeral_gone_after_close(void)
{
    char root[128];
    test_root(root, sizeof root, "ephemeral");
    struct client owner;
    struct client other;
    open_connected(&owner, root);
    open_connected(&other, root);
    req_create(&owner, 1, "/brokers", NULL, BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&owner, 1)->rc, BR_ZK_OK);
    req_create(&owner, 2, "/brokers/7", "{}", BR_ZK_EPHEMERAL);
    CU_ASSERT_EQUAL(wait_result(&owner, 2)->rc, BR_ZK_OK);
    req_exists(&other, 1, "/brokers/7", true);
    CU_ASSERT_EQUAL(wait_result(&other, 1)->rc, BR_ZK_OK);
    close_client(&owner);
    CU_ASSERT_TRUE_FATAL(wait_watches(&other, 1, WAIT_MS));
    CU_ASSERT_EQUAL(other.watches[0].kind, BR_ZK_WATCH_DELETED);
    CU_ASSERT_STRING_EQUAL(other.watches[0].path, "/brokers/7");
    req_exists(&other, 2, "/brokers/7", false);
    CU_ASSERT_EQUAL(wait_result(&other, 2)->rc, BR_ZK_NONODE);
    close_client(&other);
}

/* A chroot that does not exist is made, every part of it, and paths stay
 * relative to it both ways. */
static void test_chroot_is_created_and_paths_are_relative(void)
{
    char root[128];
    char deep[192];
    test_root(root, sizeof root, "chroot");
    (void)snprintf(deep, sizeof deep, "%s/kafka/cluster-a", root);
    struct client c;
    open_connected(&c, deep);
    CU_ASSERT_STRING_EQUAL(br_zk_chroot(c.zk), deep);
    CU_ASSERT_STRING_EQUAL(br_zk_hosts(c.zk), connect_hosts);
    req_create(&c, 1, "/x", "in the chroot", BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 1)->rc, BR_ZK_OK);
    req_children(&c, 2, "/", true);
    const struct result *r = wait_result(&c, 2);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_STRING_EQUAL(r->children, "x");

    /* seen from the root: under the chroot's path */
    struct client top;
    open_connected(&top, "");
    char full[256];
    (void)snprintf(full, sizeof full, "%s/x", deep);
    req_get(&top, 1, full, false);
    r = wait_result(&top, 1);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_EQUAL(r->data_len, strlen("in the chroot"));
    req_get(&top, 2, deep, false);
    r = wait_result(&top, 2);
    CU_ASSERT_EQUAL(r->rc, BR_ZK_OK);
    CU_ASSERT_TRUE(r->data_null); /* made empty, as Kafka makes it */
    /* a change made from outside reaches the chroot's watch, relative */
    (void)snprintf(full, sizeof full, "%s/y", deep);
    req_create(&top, 3, full, "", BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&top, 3)->rc, BR_ZK_OK);
    CU_ASSERT_TRUE_FATAL(wait_watches(&c, 1, WAIT_MS));
    CU_ASSERT_EQUAL(c.watches[0].kind, BR_ZK_WATCH_CHILD);
    CU_ASSERT_STRING_EQUAL(c.watches[0].path, "/");
    close_client(&top);

    /* a second session on an existing chroot connects just as well */
    struct client again;
    open_connected(&again, deep);
    req_exists(&again, 1, "/y", false);
    CU_ASSERT_EQUAL(wait_result(&again, 1)->rc, BR_ZK_OK);
    close_client(&again);
    close_client(&c);
}

/* Open a second handle on the session with its id and password, close it:
 * the server ends the session, and the first handle learns it expired. */
static bool expire_by_takeover(struct client *c)
{
    int64_t sid = 0;
    clientid_t id;
    memset(&id, 0, sizeof id);
    CU_ASSERT_EQUAL_FATAL(br_zk_session(c->zk, &sid, (uint8_t *)id.passwd), 0);
    id.client_id = sid;
    zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
    zhandle_t *twin = zookeeper_init(connect_hosts, NULL, 6000, &id, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(twin);
    int64_t deadline = br_now_mono_ms() + WAIT_MS;
    while (zoo_state(twin) != ZOO_CONNECTED_STATE && br_now_mono_ms() < deadline) {
        pump(10); /* keeps the first session's events flowing meanwhile */
    }
    bool took = zoo_state(twin) == ZOO_CONNECTED_STATE;
    CU_ASSERT_EQUAL(zookeeper_close(twin), ZOK); /* ends the session on the server */
    return took;
}

static void test_session_expiry_and_reopen(void)
{
    char root[128];
    test_root(root, sizeof root, "expiry");
    struct client c;
    open_connected(&c, root);
    int64_t old_sid = 0;
    uint8_t pw[16];
    CU_ASSERT_EQUAL_FATAL(br_zk_session(c.zk, &old_sid, pw), 0);
    req_create(&c, 1, "/ids", NULL, BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 1)->rc, BR_ZK_OK);
    req_create(&c, 2, "/ids/1", "{\"version\":4}", BR_ZK_EPHEMERAL);
    CU_ASSERT_EQUAL(wait_result(&c, 2)->rc, BR_ZK_OK);
    req_create(&c, 3, "/watched", "0", BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 3)->rc, BR_ZK_OK);
    req_get(&c, 4, "/watched", true);
    CU_ASSERT_EQUAL(wait_result(&c, 4)->rc, BR_ZK_OK);

    /* the first handle may win the session back before the second closes
     * it: try a few times */
    for (int attempt = 0; attempt < 5 && count_events(&c, BR_ZK_EVENT_EXPIRED) == 0; attempt++) {
        CU_ASSERT_TRUE(expire_by_takeover(&c));
        int64_t deadline = br_now_mono_ms() + 15000;
        while (count_events(&c, BR_ZK_EVENT_EXPIRED) == 0 && br_now_mono_ms() < deadline) {
            pump(50);
        }
    }
    CU_ASSERT_EQUAL_FATAL(count_events(&c, BR_ZK_EVENT_EXPIRED), 1);
    CU_ASSERT_EQUAL(br_zk_state(c.zk), BR_ZK_STATE_EXPIRED);
    CU_ASSERT_EQUAL(br_zk_session(c.zk, &old_sid, pw), KP_E_INVALID_ARG);
    /* a request now is answered at once, through the mailbox */
    req_get(&c, 5, "/watched", false);
    CU_ASSERT_FALSE(c.res[5].done);
    CU_ASSERT_EQUAL(wait_result(&c, 5)->rc, BR_ZK_SESSIONEXPIRED);
    /* one reopen at a time */
    size_t connected = count_events(&c, BR_ZK_EVENT_CONNECTED);
    CU_ASSERT_EQUAL(br_zk_reopen(c.zk), 0);
    CU_ASSERT_EQUAL(br_zk_reopen(c.zk), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_zk_state(c.zk), BR_ZK_STATE_OPENING);
    req_get(&c, 6, "/watched", false);
    CU_ASSERT_EQUAL(wait_result(&c, 6)->rc, BR_ZK_CONNECTIONLOSS);
    CU_ASSERT_TRUE_FATAL(wait_event(&c, BR_ZK_EVENT_CONNECTED, connected + 1));
    CU_ASSERT_EQUAL(br_zk_state(c.zk), BR_ZK_STATE_CONNECTED);
    int64_t new_sid = 0;
    CU_ASSERT_EQUAL_FATAL(br_zk_session(c.zk, &new_sid, pw), 0);
    CU_ASSERT_NOT_EQUAL(new_sid, old_sid);

    /* the old session's ephemeral went with it: the owner re-creates it */
    req_exists(&c, 7, "/ids/1", false);
    CU_ASSERT_EQUAL(wait_result(&c, 7)->rc, BR_ZK_NONODE);
    req_create(&c, 8, "/ids/1", "{\"version\":4}", BR_ZK_EPHEMERAL);
    CU_ASSERT_EQUAL(wait_result(&c, 8)->rc, BR_ZK_OK);
    req_get(&c, 9, "/ids/1", false);
    CU_ASSERT_EQUAL(wait_result(&c, 9)->stat.ephemeral_owner, new_sid);
    /* and so did its watches: a change is not reported to the new session */
    size_t watches = c.n_watches;
    req_set(&c, 10, "/watched", "1", -1);
    CU_ASSERT_EQUAL(wait_result(&c, 10)->rc, BR_ZK_OK);
    CU_ASSERT_FALSE(wait_watches(&c, watches + 1, 500));
    close_client(&c);
}

/* Before CONNECTED nothing goes to ZooKeeper; bad arguments are refused
 * at once with no answer to come. */
static void test_requests_before_connected_and_bad_arguments(void)
{
    char root[128];
    test_root(root, sizeof root, "early");
    struct client c;
    open_client(&c, root);
    req_get(&c, 1, "/x", false);
    CU_ASSERT_FALSE(c.res[1].done); /* never from inside the call */
    CU_ASSERT_EQUAL(wait_result(&c, 1)->rc, BR_ZK_CONNECTIONLOSS);
    CU_ASSERT_TRUE_FATAL(wait_event(&c, BR_ZK_EVENT_CONNECTED, 1));

    static const char *const bad_paths[] = {"",      "x",    "/x/",   "//x",
                                            "/x//y", "/x/.", "/../x", "/x\n"};
    for (size_t i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
        CU_ASSERT_EQUAL(br_zk_get(c.zk, bad_paths[i], false, 2), KP_E_INVALID_ARG);
        CU_ASSERT_EQUAL(br_zk_create(c.zk, bad_paths[i], "", 0, BR_ZK_PERSISTENT, 2),
                        KP_E_INVALID_ARG);
    }
    CU_ASSERT_EQUAL(br_zk_set(c.zk, "/x", "", 0, -2, 2), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_zk_delete(c.zk, "/x", -2, 2), KP_E_INVALID_ARG);
    CU_ASSERT_EQUAL(br_zk_set(c.zk, "/x", "", BR_ZK_DATA_MAX + 1, -1, 2), KP_E_INVALID_ARG);
    /* a sequential create may end with '/' (the counter follows) */
    req_create(&c, 3, "/seq", NULL, BR_ZK_PERSISTENT);
    CU_ASSERT_EQUAL(wait_result(&c, 3)->rc, BR_ZK_OK);
    req_create(&c, 4, "/seq/", "", BR_ZK_PERSISTENT_SEQUENTIAL);
    CU_ASSERT_STRING_EQUAL(wait_result(&c, 4)->created, "/seq/0000000000");
    pump(100);
    CU_ASSERT_FALSE(c.res[2].done);
    close_client(&c);

    static const char *const bad_connect[] = {
        "",         "host", "host:0",      "host:65536", ":2181",      "h:1,", ",h:1",
        "h:1,,h:2", "h :1", "h:1/chroot/", "h:1//x",     "h:1/x/../y", "h:x"};
    for (size_t i = 0; i < sizeof bad_connect / sizeof bad_connect[0]; i++) {
        struct br_zk_config cfg = {bad_connect[i], 6000};
        struct br_zk *zk = NULL;
        char err[256] = "";
        CU_ASSERT_EQUAL(br_zk_open(&cfg, W.mb, &zk_ops, &c, &zk, err, sizeof err),
                        KP_E_INVALID_ARG);
        CU_ASSERT_PTR_NULL(zk);
        CU_ASSERT_NOT_EQUAL(err[0], '\0');
    }
    struct br_zk_config cfg = {"h:1", 0};
    struct br_zk *zk = NULL;
    char err[256] = "";
    CU_ASSERT_EQUAL(br_zk_open(&cfg, W.mb, &zk_ops, &c, &zk, err, sizeof err), KP_E_INVALID_ARG);
}

/* Closing with requests under way, or while the session is still being
 * opened, or to a server that is not there: no answer comes afterwards,
 * nothing leaks (the sanitizer builds check), nothing hangs. */
static void test_close_at_any_moment(void)
{
    char root[128];
    test_root(root, sizeof root, "close");
    struct client c;
    open_connected(&c, root);
    for (uint64_t t = 0; t < 20; t++) {
        req_get(&c, t, "/", true);
    }
    req_create(&c, 20, "/e", "", BR_ZK_EPHEMERAL);
    close_client(&c); /* answers in flight are dropped: none reached on_done */

    open_client(&c, root); /* closed while its helper thread may still run */
    close_client(&c);

    struct client nowhere;
    memset(&nowhere, 0, sizeof nowhere);
    struct br_zk_config cfg = {"127.0.0.1:1", 6000}; /* nothing listens */
    char err[256] = "";
    CU_ASSERT_EQUAL_FATAL(br_zk_open(&cfg, W.mb, &zk_ops, &nowhere, &nowhere.zk, err, sizeof err),
                          0);
    int64_t until = br_now_mono_ms() + 300;
    while (br_now_mono_ms() < until) {
        pump(20);
    }
    CU_ASSERT_EQUAL(br_zk_state(nowhere.zk), BR_ZK_STATE_OPENING);
    CU_ASSERT_EQUAL(nowhere.n_events, 0);
    req_get(&nowhere, 1, "/", false);
    CU_ASSERT_EQUAL(wait_result(&nowhere, 1)->rc, BR_ZK_CONNECTIONLOSS);
    int64_t t0 = br_now_mono_ms();
    close_client(&nowhere);
    CU_ASSERT(br_now_mono_ms() - t0 < 5000);
}

static CU_TestInfo tests[] = {
    {"create_get_set_delete", test_create_get_set_delete},
    {"ephemeral_and_sequential_creates", test_ephemeral_and_sequential_creates},
    {"children_and_exists_watches", test_children_and_exists_watches},
    {"ephemeral_gone_after_close", test_ephemeral_gone_after_close},
    {"chroot_is_created_and_paths_are_relative", test_chroot_is_created_and_paths_are_relative},
    {"session_expiry_and_reopen", test_session_expiry_and_reopen},
    {"requests_before_connected_and_bad_arguments",
     test_requests_before_connected_and_bad_arguments},
    {"close_at_any_moment", test_close_at_any_moment},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    connect_hosts = getenv("SAMSA_ZK_CONNECT");
    if (connect_hosts == NULL || connect_hosts[0] == '\0') {
        (void)fprintf(stderr, "test_broker_zk: SAMSA_ZK_CONNECT (host:port of a ZooKeeper) is not "
                              "set; run it through tests/integration/with_zookeeper.py\n");
        return 2;
    }
    br_logging_set_level(BR_LOG_WARN);
    if (world_setup() != 0) {
        (void)fprintf(stderr, "test_broker_zk: cannot make the reactor\n");
        return 2;
    }
    int rc = st_run_suite("broker-zk", tests);
    br_mailbox_deliver_all(W.mb, NULL);
    br_net_free(W.net);
    br_mailbox_free(W.mb);
    return rc;
}
