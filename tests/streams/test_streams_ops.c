/*
 * Unit tests of libsamsa-streams' joins through its test driver (no
 * broker), each against an oracle computed here from the same input by the
 * rules of Kafka 2.0 (KStreamKTableJoin, KStreamKStreamJoin,
 * KTableKTable*Join), written out again in a plain form of their own:
 * stream-table inner and left, windowed stream-stream inner, left and
 * outer, table-table inner, left and outer; select_key and group_by
 * through a repartition topic; session windows (Kafka 2.3's
 * KStreamSessionWindowAggregate) with merges and late records; suppress
 * until windows close (KTableSuppressProcessor) for time and session
 * windows.
 */
#include <samsa/streams.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streams_test.h"

/* ------------------------------------------------------------ helpers */

/* calloc that stops the program when memory is out (a test has no way on) */
static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (p == NULL) {
        abort();
    }
    return p;
}

static const struct samsa_st_bytes none = {NULL, 0};

static void pipe_in(samsa_st_driver *d, const char *topic, const char *key, const char *value,
                    int64_t ts)
{
    CU_ASSERT_EQUAL_FATAL(
        samsa_st_driver_pipe(d, topic, samsa_st_str(key), samsa_st_str(value), ts), SAMSA_OK);
}

/* "LEFT|RIGHT", a missing side written "null". */
static int pair(struct samsa_st_bytes l, struct samsa_st_bytes r, samsa_st_emitter *out,
                void *opaque)
{
    (void)opaque;
    char buf[128];
    int n =
        snprintf(buf, sizeof buf, "%.*s|%.*s", l.data != NULL ? (int)l.len : 4,
                 l.data != NULL ? (const char *)l.data : "null", r.data != NULL ? (int)r.len : 4,
                 r.data != NULL ? (const char *)r.data : "null");
    struct samsa_st_bytes v = {buf, (size_t)n};
    return samsa_st_emit(out, v, v);
}

/* Records read back as "KEY=VALUE" (a null value: "KEY=<null>"). */
#define MAX_OUT 8192
struct outputs {
    char text[MAX_OUT][64];
    size_t n;
};

static void add_text(struct outputs *o, const char *key, size_t key_len, const char *value,
                     size_t value_len)
{
    CU_ASSERT_FATAL(o->n < MAX_OUT);
    if (value == NULL) {
        (void)snprintf(o->text[o->n++], sizeof o->text[0], "%.*s=<null>", (int)key_len, key);
    } else {
        (void)snprintf(o->text[o->n++], sizeof o->text[0], "%.*s=%.*s", (int)key_len, key,
                       (int)value_len, value);
    }
}

static void read_all(samsa_st_driver *d, const char *topic, struct outputs *o)
{
    struct samsa_st_record r;
    o->n = 0;
    while (samsa_st_driver_read(d, topic, &r)) {
        add_text(o, r.key.data, r.key.len, r.value.data, r.value.len);
    }
}

static bool outputs_equal(const struct outputs *got, const struct outputs *want, const char *what)
{
    size_t n = got->n < want->n ? got->n : want->n;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(got->text[i], want->text[i]) != 0) {
            (void)fprintf(stderr, "%s: record %zu is %s, the oracle's %s\n", what, i, got->text[i],
                          want->text[i]);
            return false;
        }
    }
    if (got->n != want->n) {
        (void)fprintf(stderr, "%s: %zu records, the oracle %zu\n", what, got->n, want->n);
        return false;
    }
    return true;
}

/* The records of topic, as read by read, equal expect[0..n) ("KEY=VALUE",
 * in order). */
static void check_outputs(samsa_st_driver *d, const char *topic,
                          void (*read)(samsa_st_driver *, const char *, struct outputs *),
                          const char *const *expect, size_t n, const char *what)
{
    struct outputs *got = xcalloc(1, sizeof *got);
    struct outputs *want = xcalloc(1, sizeof *want);
    for (size_t i = 0; i < n; i++) {
        (void)snprintf(want->text[want->n++], sizeof want->text[0], "%s", expect[i]);
    }
    read(d, topic, got);
    CU_ASSERT(outputs_equal(got, want, what));
    free(got);
    free(want);
}

/* ---------------------------------------------------- stream-table join */

#define CUSTOMERS 12

static void test_stream_table_inner_and_left_equal_the_oracle(void)
{
    samsa_st_topology *t = samsa_st_topology_new();
    const char *orders_topic = "orders";
    samsa_st_stream *orders = samsa_st_stream_from(t, &orders_topic, 1);
    samsa_st_table *customers = samsa_st_table_from(t, "customers", "customers");
    CU_ASSERT_EQUAL(
        samsa_st_to(samsa_st_join_table(orders, customers, SAMSA_ST_JOIN_INNER, pair, NULL),
                    "inner"),
        SAMSA_OK);
    CU_ASSERT_EQUAL(
        samsa_st_to(samsa_st_join_table(orders, customers, SAMSA_ST_JOIN_LEFT, pair, NULL), "left"),
        SAMSA_OK);
    checked(t);
    samsa_st_driver *d = new_driver(t, "st");

    /* the oracle: the table as it stands when each order comes */
    char names[CUSTOMERS][16] = {{0}};
    bool known[CUSTOMERS] = {false};
    struct outputs *want_inner = xcalloc(1, sizeof *want_inner);
    struct outputs *want_left = xcalloc(1, sizeof *want_left);
    struct outputs *got = xcalloc(1, sizeof *got);
    uint64_t seed = 31;
    for (int i = 0; i < 600; i++) {
        uint64_t r = rng_next(&seed);
        int c = (int)(r % CUSTOMERS);
        char key[16];
        char value[32];
        (void)snprintf(key, sizeof key, "c%d", c);
        if (r / CUSTOMERS % 10 < 3 && c < CUSTOMERS - 2) { /* c10 and c11 never known */
            if (r / 1000 % 6 == 0) {
                CU_ASSERT_EQUAL_FATAL(
                    samsa_st_driver_pipe(d, "customers", samsa_st_str(key), none, i), SAMSA_OK);
                known[c] = false;
            } else {
                (void)snprintf(names[c], sizeof names[c], "name%d", i);
                pipe_in(d, "customers", key, names[c], i);
                known[c] = true;
            }
            continue;
        }
        (void)snprintf(value, sizeof value, "o%d", i);
        pipe_in(d, "orders", key, value, i);
        char joined[64];
        (void)snprintf(joined, sizeof joined, "%s|%s", value, known[c] ? names[c] : "null");
        if (known[c]) {
            add_text(want_inner, key, strlen(key), joined, strlen(joined));
        }
        add_text(want_left, key, strlen(key), joined, strlen(joined));
    }
    /* a null key or value joins nothing */
    CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, "orders", none, samsa_st_str("x"), 700), SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, "orders", samsa_st_str("c1"), none, 701), SAMSA_OK);
    read_all(d, "inner", got);
    CU_ASSERT(outputs_equal(got, want_inner, "inner"));
    CU_ASSERT(want_inner->n > 100 && want_inner->n < want_left->n);
    read_all(d, "left", got);
    CU_ASSERT(outputs_equal(got, want_left, "left"));
    free(want_inner);
    free(want_left);
    free(got);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* -------------------------------------------------- stream-stream join */

struct kept_rec {
    bool left;
    int key;
    int64_t ts;
    char value[16];
};

/* Kafka 2.0's KStreamKStreamJoin over the whole input, written plainly: a
 * record joins every kept record of the other side and key within its
 * window, in arrival order; unmatched, a left record of a left or outer
 * join and a right record of an outer join pair with null; a record is kept
 * while its time is within before + after + grace of stream time. */
static void oracle_stream_join(const struct kept_rec *in, size_t n, enum samsa_st_join_kind kind,
                               const struct samsa_st_join_windows *w, struct outputs *out)
{
    int64_t stream_time = -1;
    bool *kept = xcalloc(n, sizeof *kept);
    for (size_t i = 0; i < n; i++) {
        const struct kept_rec *r = &in[i];
        stream_time = r->ts > stream_time ? r->ts : stream_time;
        int64_t cutoff = stream_time - (w->before_ms + w->after_ms + w->grace_ms);
        /* the other side's times this record reaches */
        int64_t lo = r->left ? r->ts - w->before_ms : r->ts - w->after_ms;
        int64_t hi = r->left ? r->ts + w->after_ms : r->ts + w->before_ms;
        lo = lo > 0 ? lo : 0;
        hi = hi > 0 ? hi : 0;
        char key[16];
        char joined[64];
        (void)snprintf(key, sizeof key, "k%d", r->key);
        bool matched = false;
        for (size_t k = 0; k < i; k++) {
            const struct kept_rec *o = &in[k];
            if (!kept[k] || o->left == r->left || o->key != r->key || o->ts < lo || o->ts > hi ||
                o->ts < cutoff) {
                continue;
            }
            matched = true;
            (void)snprintf(joined, sizeof joined, "%s|%s", r->left ? r->value : o->value,
                           r->left ? o->value : r->value);
            add_text(out, key, strlen(key), joined, strlen(joined));
        }
        bool unmatched_out = r->left ? kind != SAMSA_ST_JOIN_INNER : kind == SAMSA_ST_JOIN_OUTER;
        if (!matched && unmatched_out) {
            (void)snprintf(joined, sizeof joined, "%s|%s", r->left ? r->value : "null",
                           r->left ? "null" : r->value);
            add_text(out, key, strlen(key), joined, strlen(joined));
        }
        kept[i] = r->ts >= cutoff;
    }
    free(kept);
}

static void check_stream_join(enum samsa_st_join_kind kind, const char *what)
{
    const struct samsa_st_join_windows w = {.before_ms = 3000, .after_ms = 2000, .grace_ms = 1000};
    samsa_st_topology *t = samsa_st_topology_new();
    const char *lt = "impressions";
    const char *rt = "clicks";
    samsa_st_stream *l = samsa_st_stream_from(t, &lt, 1);
    samsa_st_stream *r = samsa_st_stream_from(t, &rt, 1);
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_join_stream(l, r, kind, &w, pair, NULL, "ic"), "joined"),
                    SAMSA_OK);
    checked(t);
    samsa_st_driver *d = new_driver(t, "ss");
    struct kept_rec *in = xcalloc(400, sizeof *in);
    struct outputs *want = xcalloc(1, sizeof *want);
    struct outputs *got = xcalloc(1, sizeof *got);
    uint64_t seed = 7 + (uint64_t)kind;
    for (size_t i = 0; i < 400; i++) {
        uint64_t x = rng_next(&seed);
        in[i].left = x % 2 == 0;
        in[i].key = (int)(x / 2 % 4);
        /* time goes on by 400 ms a record, out of order by up to 4 s back
         * and 1 s ahead, and now and then 9 s late (past retention) */
        int64_t jitter = (int64_t)(x / 8 % 5001) - 4000;
        if (x / 100000 % 25 == 0) {
            jitter = -9000;
        }
        int64_t ts = (int64_t)i * 400 + jitter;
        in[i].ts = ts > 0 ? ts : 0;
        (void)snprintf(in[i].value, sizeof in[i].value, "%c%zu", in[i].left ? 'i' : 'c', i);
        char key[16];
        (void)snprintf(key, sizeof key, "k%d", in[i].key);
        pipe_in(d, in[i].left ? lt : rt, key, in[i].value, in[i].ts);
    }
    oracle_stream_join(in, 400, kind, &w, want);
    read_all(d, "joined", got);
    CU_ASSERT(outputs_equal(got, want, what));
    CU_ASSERT(want->n > 100);
    /* both sides kept, each with a changelog */
    struct samsa_st_record rec;
    CU_ASSERT(samsa_st_driver_read(d, "ss-ic-join-this-changelog", &rec));
    CU_ASSERT(samsa_st_driver_read(d, "ss-ic-join-other-changelog", &rec));
    free(in);
    free(want);
    free(got);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

static void test_stream_stream_inner_join_equals_the_oracle(void)
{
    check_stream_join(SAMSA_ST_JOIN_INNER, "inner");
}

static void test_stream_stream_left_join_equals_the_oracle(void)
{
    check_stream_join(SAMSA_ST_JOIN_LEFT, "left");
}

static void test_stream_stream_outer_join_equals_the_oracle(void)
{
    check_stream_join(SAMSA_ST_JOIN_OUTER, "outer");
}

/* Kafka 2.0's left join by hand: a left record with no partner yet pairs
 * with null at once, then with its partner when that comes; a partner
 * outside [t - before, t + after] is no partner. */
static void test_stream_stream_left_join_worked_by_hand(void)
{
    const struct samsa_st_join_windows w = {.before_ms = 1000, .after_ms = 500, .grace_ms = 0};
    samsa_st_topology *t = samsa_st_topology_new();
    const char *lt = "l";
    const char *rt = "r";
    samsa_st_stream *l = samsa_st_stream_from(t, &lt, 1);
    samsa_st_stream *r = samsa_st_stream_from(t, &rt, 1);
    CU_ASSERT_EQUAL(
        samsa_st_to(samsa_st_join_stream(l, r, SAMSA_ST_JOIN_LEFT, &w, pair, NULL, "lr"), "out"),
        SAMSA_OK);
    checked(t);
    samsa_st_driver *d = samsa_st_driver_new(t, "hand", 0);
    pipe_in(d, "l", "a", "A1", 10000); /* no partner: A1|null */
    pipe_in(d, "r", "a", "B1", 10400); /* A1 at 10000 in [10400 - 500, 10400 + 1000]: A1|B1 */
    pipe_in(d, "r", "a", "B2", 10600); /* 10000 < 10600 - 500: nothing (a right record) */
    pipe_in(d, "l", "a", "A2", 11000); /* B1, B2 in [10000, 11500] */
    pipe_in(d, "l", "b", "A3", 11000); /* another key: A3|null */
    static const char *const expect[] = {"a=A1|null", "a=A1|B1", "a=A2|B1", "a=A2|B2", "b=A3|null"};
    check_outputs(d, "out", read_all, expect, sizeof expect / sizeof expect[0], "by hand");
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* ----------------------------------------------------- table-table join */

#define TKEYS 8

struct side {
    char v[TKEYS][16];
    bool has[TKEYS];
};

static void check_table_join(enum samsa_st_join_kind kind, const char *what)
{
    samsa_st_topology *t = samsa_st_topology_new();
    samsa_st_table *a = samsa_st_table_from(t, "ta", "ta");
    samsa_st_table *b = samsa_st_table_from(t, "tb", "tb");
    CU_ASSERT_EQUAL(
        samsa_st_to(samsa_st_to_stream(samsa_st_join_tables(a, b, kind, pair, NULL)), "joined"),
        SAMSA_OK);
    checked(t);
    samsa_st_driver *d = new_driver(t, "tt");
    struct side sa = {0};
    struct side sb = {0};
    uint64_t seed = 99 + (uint64_t)kind;
    for (int i = 0; i < 500; i++) {
        uint64_t x = rng_next(&seed);
        bool left = x % 2 == 0;
        int k = (int)(x / 2 % TKEYS);
        struct side *s = left ? &sa : &sb;
        char key[16];
        (void)snprintf(key, sizeof key, "k%d", k);
        if (x / 16 % 5 == 0) {
            CU_ASSERT_EQUAL_FATAL(
                samsa_st_driver_pipe(d, left ? "ta" : "tb", samsa_st_str(key), none, i), SAMSA_OK);
            s->has[k] = false;
        } else {
            (void)snprintf(s->v[k], sizeof s->v[k], "%c%d", left ? 'a' : 'b', i);
            pipe_in(d, left ? "ta" : "tb", key, s->v[k], i);
            s->has[k] = true;
        }
    }
    /* the joined table, read from its changes, against the join of the two
     * final tables */
    char result[TKEYS][64] = {{0}};
    bool present[TKEYS] = {false};
    struct samsa_st_record r;
    size_t changes = 0;
    while (samsa_st_driver_read(d, "joined", &r)) {
        int k = r.key.len == 2 ? ((const char *)r.key.data)[1] - '0' : -1;
        if (k < 0 || k >= TKEYS) {
            CU_FAIL("a key of the joined table is not k0..k7");
            continue;
        }
        present[k] = r.value.data != NULL;
        if (present[k]) {
            (void)snprintf(result[k], sizeof result[k], "%.*s", (int)r.value.len,
                           (const char *)r.value.data);
        }
        changes++;
    }
    CU_ASSERT(changes > 100);
    for (int k = 0; k < TKEYS; k++) {
        bool want = kind == SAMSA_ST_JOIN_INNER  ? sa.has[k] && sb.has[k]
                    : kind == SAMSA_ST_JOIN_LEFT ? sa.has[k]
                                                 : sa.has[k] || sb.has[k];
        char text[64] = "";
        if (want) {
            (void)snprintf(text, sizeof text, "%s|%s", sa.has[k] ? sa.v[k] : "null",
                           sb.has[k] ? sb.v[k] : "null");
        }
        CU_ASSERT_EQUAL(present[k], want);
        if (present[k] != want || (want && strcmp(result[k], text) != 0)) {
            (void)fprintf(stderr, "%s: k%d is %s, the oracle's %s\n", what, k,
                          present[k] ? result[k] : "absent", want ? text : "absent");
            CU_FAIL("joined table differs");
        }
    }
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

static void test_table_table_inner_join_equals_the_oracle(void)
{
    check_table_join(SAMSA_ST_JOIN_INNER, "inner");
}

static void test_table_table_left_join_equals_the_oracle(void)
{
    check_table_join(SAMSA_ST_JOIN_LEFT, "left");
}

static void test_table_table_outer_join_equals_the_oracle(void)
{
    check_table_join(SAMSA_ST_JOIN_OUTER, "outer");
}

/* KTableKTableLeftJoin and KTableKTableRightJoin by hand: each update and
 * what it emits. */
static void test_table_table_left_join_worked_by_hand(void)
{
    samsa_st_topology *t = samsa_st_topology_new();
    samsa_st_table *a = samsa_st_table_from(t, "ta", "ta");
    samsa_st_table *b = samsa_st_table_from(t, "tb", "tb");
    CU_ASSERT_EQUAL(
        samsa_st_to(samsa_st_to_stream(samsa_st_join_tables(a, b, SAMSA_ST_JOIN_LEFT, pair, NULL)),
                    "joined"),
        SAMSA_OK);
    checked(t);
    samsa_st_driver *d = samsa_st_driver_new(t, "hand", 0);
    pipe_in(d, "ta", "1", "a", 1); /* 1=a|null */
    pipe_in(d, "tb", "1", "b", 2); /* 1=a|b */
    pipe_in(d, "tb", "2", "c", 3); /* no left 2: nothing */
    CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, "tb", samsa_st_str("1"), none, 4),
                    SAMSA_OK); /* 1=a|null */
    CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, "ta", samsa_st_str("1"), none, 5),
                    SAMSA_OK);     /* 1 gone */
    pipe_in(d, "ta", "2", "d", 6); /* 2=d|c */
    static const char *const expect[] = {"1=a|null", "1=a|b", "1=a|null", "1=<null>", "2=d|c"};
    check_outputs(d, "joined", read_all, expect, sizeof expect / sizeof expect[0], "by hand");
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* A join needs a materialized table and both sides in one topology. */
static void test_joins_refuse_what_they_cannot_join(void)
{
    samsa_st_topology *t = samsa_st_topology_new();
    const char *in = "in";
    samsa_st_stream *s = samsa_st_stream_from(t, &in, 1);
    samsa_st_table *tb = samsa_st_table_from(t, "tbl", "tbl");
    CU_ASSERT_PTR_NULL(samsa_st_join_table(s, tb, SAMSA_ST_JOIN_OUTER, pair, NULL));
    const char *msg = NULL;
    CU_ASSERT_EQUAL(samsa_st_topology_error(t, &msg), SAMSA_ERR_INVALID_ARG);
    CU_ASSERT_STRING_EQUAL(msg, "a stream-table join is inner or left");
    samsa_st_topology_destroy(t);

    t = samsa_st_topology_new();
    s = samsa_st_stream_from(t, &in, 1);
    samsa_st_table *joined =
        samsa_st_join_tables(samsa_st_table_from(t, "x", "x"), samsa_st_table_from(t, "y", "y"),
                             SAMSA_ST_JOIN_INNER, pair, NULL);
    CU_ASSERT_PTR_NOT_NULL(joined);
    CU_ASSERT_PTR_NULL(samsa_st_join_table(s, joined, SAMSA_ST_JOIN_LEFT, pair, NULL));
    CU_ASSERT_EQUAL(samsa_st_topology_error(t, &msg), SAMSA_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "needs a table kept in a key-value store"));
    samsa_st_topology_destroy(t);
}

/* ------------------------------------------- select_key, group_by, repartition */

/* The page of a "user page" value. */
static int page_of(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    const char *v = rec->value.data;
    const char *sp = memchr(v, ' ', rec->value.len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sp);
    struct samsa_st_bytes key = {sp + 1, rec->value.len - (size_t)(sp + 1 - v)};
    return samsa_st_emit(out, key, none); /* select_key keeps the value */
}

static void test_group_by_counts_equal_the_oracle(void)
{
    samsa_st_topology *t = samsa_st_topology_new();
    const char *in = "views";
    samsa_st_stream *views = samsa_st_stream_from(t, &in, 1);
    samsa_st_table *counts =
        samsa_st_count(samsa_st_group_by(views, page_of, NULL, "by-page"), "pages");
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_to_stream(counts), "counts"), SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_select_key(views, page_of, NULL), "rekeyed"), SAMSA_OK);
    checked(t);
    samsa_st_driver *d = samsa_st_driver_new(t, "gb", 0);
    int64_t want[10] = {0};
    uint64_t seed = 3;
    for (int i = 0; i < 500; i++) {
        uint64_t x = rng_next(&seed);
        char user[16];
        char value[32];
        int page = (int)(x % 10);
        (void)snprintf(user, sizeof user, "u%d", (int)(x / 10 % 50));
        (void)snprintf(value, sizeof value, "%s p%d", user, page);
        /* fed into four partitions keyed by user: group_by brings each page
         * to one task through the repartition topic */
        CU_ASSERT_EQUAL_FATAL(samsa_st_driver_pipe_partition(d, in, (int32_t)(x / 500 % 4),
                                                             samsa_st_str(user),
                                                             samsa_st_str(value), i),
                              SAMSA_OK);
        want[page]++;
    }
    int64_t got[10] = {0};
    struct samsa_st_record r;
    while (samsa_st_driver_read(d, "counts", &r)) {
        CU_ASSERT_FATAL(r.key.len == 2 && ((const char *)r.key.data)[0] == 'p');
        int64_t v = -1;
        CU_ASSERT(samsa_st_long_decode(r.value, &v));
        int page = ((const char *)r.key.data)[1] - '0';
        CU_ASSERT_EQUAL(v, got[page] + 1); /* one update per view, in order */
        got[page] = v;
    }
    for (int p = 0; p < 10; p++) {
        CU_ASSERT_EQUAL(got[p], want[p]);
    }
    /* select_key: the new key, the value and timestamp as they were */
    CU_ASSERT_FATAL(samsa_st_driver_read(d, "rekeyed", &r));
    CU_ASSERT(r.key.len == 2 && memcmp(r.key.data, "p", 1) == 0);
    CU_ASSERT(r.value.len > 3 && memcmp(r.value.data, "u", 1) == 0);
    CU_ASSERT_EQUAL(r.timestamp, 0);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* A join after a key change is refused until the stream is repartitioned. */
static void test_a_join_after_a_key_change_needs_a_repartition(void)
{
    samsa_st_topology *t = samsa_st_topology_new();
    const char *in = "views";
    samsa_st_stream *views = samsa_st_stream_from(t, &in, 1);
    samsa_st_table *pages = samsa_st_table_from(t, "pages", "pages");
    samsa_st_stream *by_page = samsa_st_select_key(views, page_of, NULL);
    CU_ASSERT_PTR_NULL(samsa_st_join_table(by_page, pages, SAMSA_ST_JOIN_INNER, pair, NULL));
    const char *msg = NULL;
    CU_ASSERT_EQUAL(samsa_st_topology_error(t, &msg), SAMSA_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "samsa_st_repartition"));
    samsa_st_topology_destroy(t);

    t = samsa_st_topology_new();
    views = samsa_st_stream_from(t, &in, 1);
    pages = samsa_st_table_from(t, "pages", "pages");
    by_page = samsa_st_repartition(samsa_st_select_key(views, page_of, NULL), "by-page");
    CU_ASSERT_EQUAL(
        samsa_st_to(samsa_st_join_table(by_page, pages, SAMSA_ST_JOIN_LEFT, pair, NULL), "out"),
        SAMSA_OK);
    checked(t);
    samsa_st_driver *d = samsa_st_driver_new(t, "rp", 0);
    pipe_in(d, "pages", "p1", "Home", 1);
    pipe_in(d, "views", "u1", "u1 p1", 2);
    pipe_in(d, "views", "u2", "u2 p2", 3);
    static const char *const expect[] = {"p1=u1 p1|Home", "p2=u2 p2|null"};
    check_outputs(d, "out", read_all, expect, sizeof expect / sizeof expect[0],
                  "through the repartition topic");
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* -------------------------------------------------- session windows */

#define MAX_SESSIONS 2048

struct osession {
    int key;
    int64_t start;
    int64_t end;
    int64_t count;
    bool live;
};

struct sessions {
    struct osession v[MAX_SESSIONS];
    size_t n;
    uint64_t dropped;
};

struct timed {
    int key;
    int64_t ts;
};

static void session_text(struct outputs *o, int key, int64_t start, int64_t end, int64_t count)
{
    char k[48];
    char v[24];
    (void)snprintf(k, sizeof k, "k%d@%lld-%lld", key, (long long)start, (long long)end);
    (void)snprintf(v, sizeof v, "%lld", (long long)count);
    add_text(o, k, strlen(k), count < 0 ? NULL : v, strlen(v));
}

/* KStreamSessionWindowAggregate (2.3, KAFKA-8289) written plainly: the
 * sessions of the key within gap of the record merge with it into one,
 * kept while its end >= stream time - grace; each merged session leaves a tombstone
 * unless the record only landed on a session of its own time. */
static void oracle_sessions(const struct timed *in, size_t n, int64_t gap, int64_t grace,
                            struct sessions *o, struct outputs *out)
{
    int64_t stream_time = INT64_MIN;
    o->n = 0;
    o->dropped = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t ts = in[i].ts;
        stream_time = ts > stream_time ? ts : stream_time;
        int64_t start = ts;
        int64_t end = ts;
        int64_t sum = 0;
        for (size_t k = 0; k < o->n; k++) {
            const struct osession *x = &o->v[k];
            if (x->live && x->key == in[i].key && x->end >= ts - gap && x->start <= ts + gap) {
                start = x->start < start ? x->start : start;
                end = x->end > end ? x->end : end;
                sum += x->count;
            }
        }
        if (end < stream_time - grace) {
            o->dropped++;
            continue;
        }
        bool replaced = start != ts || end != ts;
        for (size_t k = 0; k < o->n; k++) {
            struct osession *x = &o->v[k];
            if (x->live && x->key == in[i].key && x->end >= ts - gap && x->start <= ts + gap) {
                x->live = false;
                if (replaced && out != NULL) {
                    session_text(out, x->key, x->start, x->end, -1);
                }
            }
        }
        CU_ASSERT_FATAL(o->n < MAX_SESSIONS);
        o->v[o->n++] = (struct osession){in[i].key, start, end, sum + 1, true};
        if (out != NULL) {
            session_text(out, in[i].key, start, end, sum + 1);
        }
    }
}

/* A session-windowed record read back as text. */
static void read_sessions(samsa_st_driver *d, const char *topic, struct outputs *o)
{
    struct samsa_st_record r;
    o->n = 0;
    while (samsa_st_driver_read(d, topic, &r)) {
        struct samsa_st_bytes key;
        int64_t start = 0;
        int64_t end = 0;
        int64_t count = -1;
        CU_ASSERT_FATAL(samsa_st_session_key_split(r.key, &key, &start, &end));
        CU_ASSERT_FATAL(key.len == 2);
        if (r.value.data != NULL) {
            CU_ASSERT(samsa_st_long_decode(r.value, &count));
        }
        session_text(o, ((const char *)key.data)[1] - '0', start, end, count);
    }
}

/* Records 700 ms apart over 4 keys, out of order by up to disorder ms and,
 * with late, one in 25 a minute late. */
static void session_input(struct timed *in, size_t n, uint64_t seed, int64_t disorder, bool late)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rng_next(&seed);
        in[i].key = (int)(x % 4);
        in[i].ts = 100000 + (int64_t)i * 700 - (int64_t)(x / 4 % (uint64_t)(disorder + 1));
        if (late && x / 10000 % 25 == 0) {
            in[i].ts -= 60000;
        }
    }
}

static samsa_st_driver *session_counts(samsa_st_topology *t, int64_t gap, int64_t grace,
                                       const char *suppress)
{
    const char *in = "clicks";
    struct samsa_st_session_windows w = {.gap_ms = gap, .grace_ms = grace,
                                         .late_topic = "late-clicks"};
    samsa_st_table *counts =
        samsa_st_count(samsa_st_session_windowed_by(
                           samsa_st_group_by_key(samsa_st_stream_from(t, &in, 1), NULL), &w),
                       "sessions");
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_to_stream(counts), "counts"), SAMSA_OK);
    if (suppress != NULL) {
        CU_ASSERT_EQUAL(
            samsa_st_to(samsa_st_to_stream(samsa_st_suppress_until_window_closes(counts, suppress)),
                        "final"),
            SAMSA_OK);
    }
    checked(t);
    return new_driver(t, "sw");
}

static void pipe_timed(samsa_st_driver *d, const struct timed *r)
{
    char key[8];
    (void)snprintf(key, sizeof key, "k%d", r->key);
    pipe_in(d, "clicks", key, "x", r->ts);
}

static void check_sessions(int64_t grace)
{
    enum { N = 600 };
    struct timed *in = xcalloc(N, sizeof *in);
    struct sessions *want = xcalloc(1, sizeof *want);
    struct outputs *want_out = xcalloc(1, sizeof *want_out);
    struct outputs *got = xcalloc(1, sizeof *got);
    session_input(in, N, 17, 3000, true);
    oracle_sessions(in, N, 2000, grace, want, want_out);
    samsa_st_topology *t = samsa_st_topology_new();
    samsa_st_driver *d = session_counts(t, 2000, grace, NULL);
    for (size_t i = 0; i < N; i++) {
        pipe_timed(d, &in[i]);
    }
    read_sessions(d, "counts", got);
    CU_ASSERT(outputs_equal(got, want_out, "sessions"));
    CU_ASSERT_EQUAL(samsa_st_driver_dropped_late(d), want->dropped);
    CU_ASSERT(want->dropped > 0);
    /* each dropped record once in the dead-letter topic, as it came */
    struct samsa_st_record r;
    size_t dead = 0;
    while (samsa_st_driver_read(d, "late-clicks", &r)) {
        CU_ASSERT_EQUAL(r.value.len, 1);
        dead++;
    }
    CU_ASSERT_EQUAL(dead, want->dropped);
    size_t live = 0;
    size_t merges = 0;
    for (size_t i = 0; i < want_out->n; i++) {
        merges += strstr(want_out->text[i], "<null>") != NULL ? 1 : 0;
    }
    for (size_t i = 0; i < want->n; i++) {
        live += want->v[i].live ? 1 : 0;
    }
    CU_ASSERT(merges > 50); /* sessions merged, some by late records */
    (void)fprintf(stderr, "  gap 2 s grace %lld s: %zu sessions, %zu tombstones, %llu dropped\n",
                  (long long)grace / 1000, live, merges, (unsigned long long)want->dropped);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
    free(in);
    free(want);
    free(want_out);
    free(got);
}

static void test_session_counts_grace_0_equal_the_oracle(void)
{
    check_sessions(0);
}

static void test_session_counts_grace_5s_equal_the_oracle(void)
{
    check_sessions(5000);
}

/* Sessions by hand, gap 1 s, grace 3 s. */
static void test_sessions_worked_by_hand(void)
{
    samsa_st_topology *t = samsa_st_topology_new();
    samsa_st_driver *d = session_counts(t, 1000, 3000, NULL);
    static const struct timed in[] = {{0, 1000}, {0, 1500}, {0, 5000}, {0, 3000},
                                      {0, 2200}, {0, 100},  {1, 7000}, {0, 200}};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        pipe_timed(d, &in[i]);
    }
    static const char *const expect[] = {
        "k0@1000-1000=1",      "k0@1000-1000=<null>",
        "k0@1000-1500=2", /* 1500 within 1 s of 1000 */
        "k0@5000-5000=1", /* a new session */
        "k0@3000-3000=1", /* 3000 > 5000 - grace: kept */
        "k0@1000-1500=<null>", "k0@3000-3000=<null>",
        "k0@1000-3000=4",                       /* 2200 bridges */
        "k0@1000-3000=<null>", "k0@100-3000=5", /* 100 extends it back */
        "k1@7000-7000=1",
        /* 200: merged end 3000 < 7000 - 3000: dropped */
    };
    check_outputs(d, "counts", read_sessions, expect, sizeof expect / sizeof expect[0], "by hand");
    CU_ASSERT_EQUAL(samsa_st_driver_dropped_late(d), 1);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* ------------------------------------------------------------ suppress */

/* Tumbling 10 s windows, grace 5 s, suppressed until they close: one
 * record per window, its final count, never before end + grace <= stream
 * time, and every window closed by the end emitted. */
static void test_suppressed_windows_emit_once_when_they_close(void)
{
    enum { N = 2000, WINDOWS = 64 };
    samsa_st_topology *t = samsa_st_topology_new();
    const char *in = "views";
    struct samsa_st_windows w = {.size_ms = 10000, .advance_ms = 10000, .grace_ms = 5000};
    samsa_st_table *counts = samsa_st_count(
        samsa_st_windowed_by(samsa_st_group_by_key(samsa_st_stream_from(t, &in, 1), NULL), &w),
        "counts");
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_to_stream(
                                    samsa_st_suppress_until_window_closes(counts, "counts-final")),
                                "final"),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_to_stream(counts), "counts"), SAMSA_OK);
    checked(t);
    samsa_st_driver *d = new_driver(t, "sup");
    /* the oracle: counts per (key, window) by the 2.1 rule, and the stream
     * time at which each window was emitted */
    int64_t count[5][WINDOWS] = {{0}};
    int emitted[5][WINDOWS] = {{0}};
    uint64_t seed = 41;
    int64_t stream_time = -1;
    size_t finals = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t x = rng_next(&seed);
        int key = (int)(x % 5);
        int64_t ts = (int64_t)i * 150 - (int64_t)(x / 5 % 4001);
        if (x / 10000 % 50 == 0) {
            ts -= 30000; /* very late */
        }
        ts = ts > 0 ? ts : 0;
        stream_time = ts > stream_time ? ts : stream_time;
        int64_t start = ts - ts % 10000;
        if (start + 10000 > stream_time - 5000) {
            count[key][start / 10000]++;
        }
        char k[8];
        (void)snprintf(k, sizeof k, "k%d", key);
        pipe_in(d, "views", k, "v", ts);
        struct samsa_st_record r;
        while (samsa_st_driver_read(d, "final", &r)) {
            struct samsa_st_bytes rk;
            int64_t ws = 0;
            int64_t v = 0;
            CU_ASSERT_FATAL(samsa_st_windowed_key_split(r.key, &rk, &ws));
            CU_ASSERT_FATAL(rk.len == 2 && ws >= 0 && ws / 10000 < WINDOWS);
            CU_ASSERT(samsa_st_long_decode(r.value, &v));
            int kk = ((const char *)rk.data)[1] - '0';
            /* closed: end + grace <= stream time; once; the final count */
            CU_ASSERT(ws + 10000 + 5000 <= stream_time);
            CU_ASSERT_EQUAL(emitted[kk][ws / 10000]++, 0);
            CU_ASSERT_EQUAL(v, count[kk][ws / 10000]);
            finals++;
        }
    }
    /* every window closed by the final stream time came out */
    size_t closed = 0;
    for (int k = 0; k < 5; k++) {
        for (int s = 0; s < WINDOWS; s++) {
            if (count[k][s] > 0 && (int64_t)s * 10000 + 15000 <= stream_time) {
                closed++;
                CU_ASSERT_EQUAL(emitted[k][s], 1);
            }
        }
    }
    CU_ASSERT_EQUAL(finals, closed);
    CU_ASSERT(closed > 100);
    /* the unsuppressed table updated on every record */
    size_t updates = 0;
    struct samsa_st_record r;
    while (samsa_st_driver_read(d, "counts", &r)) {
        updates++;
    }
    CU_ASSERT(updates > finals * 5);
    (void)fprintf(stderr, "  %zu updates, %zu final results\n", updates, finals);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* Sessions suppressed: one result per session once end + gap + grace <=
 * stream time, a session merged away never emitted. Disorder (1.5 s) below
 * grace (3 s), so that no record reaches a closed session. */
static void test_suppressed_sessions_emit_once_when_they_close(void)
{
    enum { N = 600 };
    struct timed *in = xcalloc(N, sizeof *in);
    struct sessions *want = xcalloc(1, sizeof *want);
    struct outputs *got = xcalloc(1, sizeof *got);
    session_input(in, N, 23, 1500, false);
    samsa_st_topology *t = samsa_st_topology_new();
    samsa_st_driver *d = session_counts(t, 2000, 3000, "sessions-final");
    int64_t stream_time = -1;
    for (size_t i = 0; i < N; i++) {
        pipe_timed(d, &in[i]);
        stream_time = in[i].ts > stream_time ? in[i].ts : stream_time;
        struct samsa_st_record r;
        while (samsa_st_driver_read(d, "final", &r)) {
            struct samsa_st_bytes key;
            int64_t start = 0;
            int64_t end = 0;
            int64_t count = 0;
            CU_ASSERT_FATAL(samsa_st_session_key_split(r.key, &key, &start, &end));
            CU_ASSERT(end + 2000 + 3000 <= stream_time);
            CU_ASSERT(samsa_st_long_decode(r.value, &count));
            session_text(got, ((const char *)key.data)[1] - '0', start, end, count);
        }
    }
    oracle_sessions(in, N, 2000, 3000, want, NULL);
    struct outputs *expect = xcalloc(1, sizeof *expect);
    for (size_t i = 0; i < want->n; i++) {
        const struct osession *x = &want->v[i];
        if (x->live && x->end + 5000 <= stream_time) {
            session_text(expect, x->key, x->start, x->end, x->count);
        }
    }
    /* in order of closing, then key: compare as sorted lists */
    qsort(got->text, got->n, sizeof got->text[0], (int (*)(const void *, const void *))strcmp);
    qsort(expect->text, expect->n, sizeof expect->text[0],
          (int (*)(const void *, const void *))strcmp);
    CU_ASSERT(outputs_equal(got, expect, "final sessions"));
    CU_ASSERT(expect->n > 50);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
    free(in);
    free(want);
    free(got);
    free(expect);
}

/* --------------------------------------------------------------- LMDB */

/* The same with the stores in LMDB files: lists of records, sessions and
 * held windows read back from the file. */
static void test_stream_table_on_lmdb_equals_the_oracle(void)
{
    on_lmdb(test_stream_table_inner_and_left_equal_the_oracle);
}

static void test_stream_stream_outer_join_on_lmdb_equals_the_oracle(void)
{
    on_lmdb(test_stream_stream_outer_join_equals_the_oracle);
}

static void test_table_table_outer_join_on_lmdb_equals_the_oracle(void)
{
    on_lmdb(test_table_table_outer_join_equals_the_oracle);
}

static void test_session_counts_grace_5s_on_lmdb_equal_the_oracle(void)
{
    on_lmdb(test_session_counts_grace_5s_equal_the_oracle);
}

static void test_suppressed_windows_on_lmdb_emit_once_when_they_close(void)
{
    on_lmdb(test_suppressed_windows_emit_once_when_they_close);
}

int main(void)
{
    static CU_TestInfo tests[] = {
        {"stream_table_inner_and_left_equal_the_oracle",
         test_stream_table_inner_and_left_equal_the_oracle},
        {"stream_stream_inner_join_equals_the_oracle",
         test_stream_stream_inner_join_equals_the_oracle},
        {"stream_stream_left_join_equals_the_oracle",
         test_stream_stream_left_join_equals_the_oracle},
        {"stream_stream_outer_join_equals_the_oracle",
         test_stream_stream_outer_join_equals_the_oracle},
        {"stream_stream_left_join_worked_by_hand", test_stream_stream_left_join_worked_by_hand},
        {"table_table_inner_join_equals_the_oracle", test_table_table_inner_join_equals_the_oracle},
        {"table_table_left_join_equals_the_oracle", test_table_table_left_join_equals_the_oracle},
        {"table_table_outer_join_equals_the_oracle", test_table_table_outer_join_equals_the_oracle},
        {"table_table_left_join_worked_by_hand", test_table_table_left_join_worked_by_hand},
        {"joins_refuse_what_they_cannot_join", test_joins_refuse_what_they_cannot_join},
        {"group_by_counts_equal_the_oracle", test_group_by_counts_equal_the_oracle},
        {"a_join_after_a_key_change_needs_a_repartition",
         test_a_join_after_a_key_change_needs_a_repartition},
        {"session_counts_grace_0_equal_the_oracle", test_session_counts_grace_0_equal_the_oracle},
        {"session_counts_grace_5s_equal_the_oracle", test_session_counts_grace_5s_equal_the_oracle},
        {"sessions_worked_by_hand", test_sessions_worked_by_hand},
        {"suppressed_windows_emit_once_when_they_close",
         test_suppressed_windows_emit_once_when_they_close},
        {"suppressed_sessions_emit_once_when_they_close",
         test_suppressed_sessions_emit_once_when_they_close},
        {"stream_table_on_lmdb_equals_the_oracle", test_stream_table_on_lmdb_equals_the_oracle},
        {"stream_stream_outer_join_on_lmdb_equals_the_oracle",
         test_stream_stream_outer_join_on_lmdb_equals_the_oracle},
        {"table_table_outer_join_on_lmdb_equals_the_oracle",
         test_table_table_outer_join_on_lmdb_equals_the_oracle},
        {"session_counts_grace_5s_on_lmdb_equal_the_oracle",
         test_session_counts_grace_5s_on_lmdb_equal_the_oracle},
        {"suppressed_windows_on_lmdb_emit_once_when_they_close",
         test_suppressed_windows_on_lmdb_emit_once_when_they_close},
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("streams-ops", tests);
}
