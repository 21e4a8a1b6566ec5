/*
 * Unit tests of libsamsa-streams through its public API and its test
 * driver (no broker): the serdes' bytes against Java's, word count, tumbling
 * and hopping window counts with out-of-order and late records for grace 0
 * and 5 s (exact drop counts), each against an oracle computed here in a
 * form of its own; the other DSL operations; the processor API's stores,
 * forward_to and punctuations on stream and wall-clock time.
 */
#include <samsa/streams.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "streams_test.h"

/* ------------------------------------------------------------ helpers */


static int64_t long_of(struct samsa_st_bytes b)
{
    int64_t v = -1;
    CU_ASSERT(samsa_st_long_decode(b, &v));
    return v;
}

/* A small table of (key, window start) -> count, the oracle's and the
 * outputs' (last value written per key and window). */
#define MAX_CELLS 4096
struct cell {
    char key[16];
    int64_t start;
    int64_t count;
};
struct table {
    struct cell cells[MAX_CELLS];
    size_t n;
};

static struct cell *cell_of(struct table *t, const char *key, size_t key_len, int64_t start)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->cells[i].start == start && strlen(t->cells[i].key) == key_len &&
            memcmp(t->cells[i].key, key, key_len) == 0) {
            return &t->cells[i];
        }
    }
    CU_ASSERT_FATAL(t->n < MAX_CELLS && key_len < sizeof t->cells[0].key);
    struct cell *c = &t->cells[t->n++];
    memcpy(c->key, key, key_len);
    c->key[key_len] = '\0';
    c->start = start;
    c->count = 0;
    return c;
}

static bool tables_equal(const struct table *a, const struct table *b)
{
    if (a->n != b->n) {
        (void)fprintf(stderr, "tables: %zu cells against %zu\n", a->n, b->n);
        return false;
    }
    for (size_t i = 0; i < a->n; i++) {
        bool found = false;
        for (size_t k = 0; k < b->n; k++) {
            if (a->cells[i].start == b->cells[k].start &&
                strcmp(a->cells[i].key, b->cells[k].key) == 0) {
                found = a->cells[i].count == b->cells[k].count;
                if (!found) {
                    (void)fprintf(stderr, "%s@%lld: %lld against %lld\n", a->cells[i].key,
                                  (long long)a->cells[i].start, (long long)a->cells[i].count,
                                  (long long)b->cells[k].count);
                }
            }
        }
        if (!found) {
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------- serdes */

static void test_serdes_write_javas_bytes(void)
{
    uint8_t b[8];
    samsa_st_long_encode(1, b);
    CU_ASSERT_EQUAL(memcmp(b, "\0\0\0\0\0\0\0\1", 8), 0);
    samsa_st_long_encode(-2, b);
    CU_ASSERT_EQUAL(memcmp(b, "\xff\xff\xff\xff\xff\xff\xff\xfe", 8), 0);
    samsa_st_int_encode(258, b);
    CU_ASSERT_EQUAL(memcmp(b, "\0\0\1\2", 4), 0);
    /* Double.doubleToLongBits(1.5) = 0x3FF8000000000000 */
    samsa_st_double_encode(1.5, b);
    CU_ASSERT_EQUAL(memcmp(b, "\x3f\xf8\0\0\0\0\0\0", 8), 0);
    double d = 0;
    struct samsa_st_bytes v = {b, 8};
    CU_ASSERT(samsa_st_double_decode(v, &d));
    CU_ASSERT_EQUAL(d, 1.5);
    int64_t l = 0;
    int64_t want = -123456789012345;
    uint8_t buf[16];
    CU_ASSERT_EQUAL(samsa_st_serde_long.serialize(&want, buf, sizeof buf), 8);
    struct samsa_st_bytes lb = {buf, 8};
    CU_ASSERT_EQUAL(samsa_st_serde_long.deserialize(lb, &l), SAMSA_OK);
    CU_ASSERT_EQUAL(l, want);
    lb.len = 7;
    CU_ASSERT_EQUAL(samsa_st_serde_long.deserialize(lb, &l), SAMSA_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(samsa_st_serde_string.serialize("héllo", buf, sizeof buf), 6);
    CU_ASSERT_EQUAL(memcmp(buf, "h\xc3\xa9llo", 6), 0);
    int32_t i = 0;
    struct samsa_st_bytes ib = {"\x80\0\0\0", 4};
    CU_ASSERT(samsa_st_int_decode(ib, &i));
    CU_ASSERT_EQUAL(i, INT32_MIN);
    /* TimeWindowedSerializer: key bytes, then the start as a big-endian long */
    struct samsa_st_bytes wk = {"ab\0\0\0\0\0\0\x03\xe8", 10};
    struct samsa_st_bytes key;
    int64_t start = 0;
    CU_ASSERT(samsa_st_windowed_key_split(wk, &key, &start));
    CU_ASSERT_EQUAL(key.len, 2);
    CU_ASSERT_EQUAL(start, 1000);
}

/* --------------------------------------------------------- word count */

static int split_words(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    const char *s = rec->value.data;
    size_t start = 0;
    for (size_t i = 0; i <= rec->value.len; i++) {
        if (i == rec->value.len || s[i] == ' ') {
            if (i > start) {
                struct samsa_st_bytes w = {s + start, i - start};
                int err = samsa_st_emit(out, w, w);
                if (err != SAMSA_OK) {
                    return err;
                }
            }
            start = i + 1;
        }
    }
    return SAMSA_OK;
}

static const char *const words[] = {"the", "quick", "brown", "fox", "jumps", "over",
                                    "a",   "lazy",  "dog",   "and", "cat"};
#define WORD_COUNT (sizeof words / sizeof words[0])

static void test_word_count_equals_the_oracle(void)
{
    samsa_st_topology *t = samsa_st_topology_new();
    const char *in = "lines";
    samsa_st_stream *w = samsa_st_flat_map(samsa_st_stream_from(t, &in, 1), split_words, NULL);
    samsa_st_table *c = samsa_st_count(samsa_st_group_by_key(w, "counts"), "counts");
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_to_stream(c), "counts-out"), SAMSA_OK);
    checked(t);
    samsa_st_driver *d = new_driver(t, "wc");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);

    int64_t oracle[WORD_COUNT] = {0};
    uint64_t seed = 42;
    size_t total = 0;
    for (int line = 0; line < 500; line++) {
        char buf[512];
        size_t len = 0;
        int n = (int)(rng_next(&seed) % 8);
        for (int k = 0; k < n; k++) {
            /* a skewed pick: low indexes come more often */
            size_t wi = (size_t)(rng_next(&seed) % WORD_COUNT);
            wi = wi * (size_t)(rng_next(&seed) % WORD_COUNT) / WORD_COUNT;
            oracle[wi]++;
            total++;
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", k > 0 ? " " : "",
                                    words[wi]);
        }
        struct samsa_st_bytes v = {buf, len};
        struct samsa_st_bytes nokey = {NULL, 0};
        CU_ASSERT_EQUAL_FATAL(samsa_st_driver_pipe(d, in, nokey, v, 1000 + line), SAMSA_OK);
    }
    /* every update is written: per word 1, 2, ..., its count */
    int64_t seen[WORD_COUNT] = {0};
    size_t outputs = 0;
    struct samsa_st_record r;
    while (samsa_st_driver_read(d, "counts-out", &r)) {
        size_t wi = 0;
        while (wi < WORD_COUNT &&
               !(strlen(words[wi]) == r.key.len && memcmp(words[wi], r.key.data, r.key.len) == 0)) {
            wi++;
        }
        if (wi == WORD_COUNT) {
            CU_FAIL("a word that was not in the input");
            break;
        }
        CU_ASSERT_EQUAL(long_of(r.value), seen[wi] + 1);
        seen[wi] = long_of(r.value);
        outputs++;
    }
    CU_ASSERT_EQUAL(outputs, total);
    for (size_t i = 0; i < WORD_COUNT; i++) {
        CU_ASSERT_EQUAL(seen[i], oracle[i]);
    }
    /* the store holds the same, and its changelog got every update */
    samsa_st_store *s = samsa_st_driver_store(d, "counts");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    for (size_t i = 0; i < WORD_COUNT; i++) {
        struct samsa_st_bytes v;
        if (oracle[i] > 0) {
            CU_ASSERT(samsa_st_kv_get(s, samsa_st_str(words[i]), &v));
            CU_ASSERT_EQUAL(long_of(v), oracle[i]);
        }
    }
    size_t logged = 0;
    while (samsa_st_driver_read(d, "wc-counts-changelog", &r)) {
        logged++;
    }
    CU_ASSERT_EQUAL(logged, total);
    /* the repartition topic is internal: fed back, not an output */
    CU_ASSERT_FALSE(samsa_st_driver_read(d, "wc-counts-repartition", &r));
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* ------------------------------------------------------------ windows */

struct late_log {
    size_t calls;
    uint64_t digest; /* of the late records' keys and timestamps, in order */
};

static uint64_t late_digest(uint64_t h, const struct samsa_st_record *rec)
{
    for (size_t i = 0; i < rec->key.len; i++) {
        h = (h ^ ((const uint8_t *)rec->key.data)[i]) * 1099511628211ULL;
    }
    return (h ^ (uint64_t)rec->timestamp) * 1099511628211ULL;
}

static void on_late(const struct samsa_st_record *rec, void *opaque)
{
    struct late_log *log = opaque;
    log->calls++;
    log->digest = late_digest(log->digest, rec);
}

struct windowed_run {
    struct table got;
    uint64_t dropped;
    size_t late_calls;
};

struct input {
    char key[4];
    int64_t ts;
};

static void run_windowed(const struct input *in, size_t n, int64_t size, int64_t advance,
                         int64_t grace, struct windowed_run *run)
{
    samsa_st_topology *t = samsa_st_topology_new();
    const char *topic = "clicks";
    struct late_log late = {0};
    struct samsa_st_windows w = {size, advance, grace, on_late, &late, "late-clicks"};
    samsa_st_grouped *g = samsa_st_windowed_by(
        samsa_st_group_by_key(samsa_st_stream_from(t, &topic, 1), NULL), &w);
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_to_stream(samsa_st_count(g, "win")), "out"), SAMSA_OK);
    checked(t);
    samsa_st_driver *d = new_driver(t, "win");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL_FATAL(samsa_st_driver_pipe(d, topic, samsa_st_str(in[i].key),
                                                   samsa_st_str("x"), in[i].ts),
                              SAMSA_OK);
    }
    struct samsa_st_record r;
    memset(&run->got, 0, sizeof run->got);
    while (samsa_st_driver_read(d, "out", &r)) {
        struct samsa_st_bytes key;
        int64_t start = 0;
        CU_ASSERT_FATAL(samsa_st_windowed_key_split(r.key, &key, &start));
        struct cell *c = cell_of(&run->got, key.data, key.len, start);
        CU_ASSERT_EQUAL(long_of(r.value), c->count + 1); /* one update per record */
        c->count = long_of(r.value);
    }
    run->dropped = samsa_st_driver_dropped_late(d);
    run->late_calls = late.calls;
    /* the dead-letter topic got each late record once, as it came, in
     * the order the callback saw them */
    size_t dead = 0;
    uint64_t digest = 0;
    while (samsa_st_driver_read(d, "late-clicks", &r)) {
        CU_ASSERT_EQUAL(r.value.len, 1);
        dead++;
        digest = late_digest(digest, &r);
    }
    CU_ASSERT_EQUAL(dead, late.calls);
    CU_ASSERT_EQUAL(digest, late.digest);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* The oracle: windows listed from the newest start down, stream time the
 * running maximum, a window open while its end is after stream time minus
 * grace (Kafka 2.1's KStreamWindowAggregate). */
static void oracle_windowed(const struct input *in, size_t n, int64_t size, int64_t advance,
                            int64_t grace, struct table *want, uint64_t *dropped,
                            size_t *late_records)
{
    memset(want, 0, sizeof *want);
    *dropped = 0;
    *late_records = 0;
    int64_t stream_time = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        int64_t ts = in[i].ts;
        stream_time = ts > stream_time ? ts : stream_time;
        bool late = false;
        for (int64_t start = ts - ts % advance; start >= 0 && start > ts - size;
             start -= advance) {
            if (start + size > stream_time - grace) {
                cell_of(want, in[i].key, strlen(in[i].key), start)->count++;
            } else {
                (*dropped)++;
                late = true;
            }
        }
        *late_records += late ? 1 : 0;
    }
}

/* Records about 100 ms apart over 5 keys, out of order by up to 3 s in
 * steps of 500 ms (so that windows often end exactly at the close time),
 * and one in a hundred very late (60 s back). */
static size_t disordered_input(struct input *in, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        int64_t ts = 100000 + (int64_t)i * 100;
        ts = ts - ts % 500 + (int64_t)(rng_next(&seed) % 13) * 500 - 3000;
        if (rng_next(&seed) % 100 == 0) {
            ts -= 60000;
        }
        (void)snprintf(in[i].key, sizeof in[i].key, "k%d", (int)(rng_next(&seed) % 5));
        in[i].ts = ts;
    }
    return n;
}

static void check_windowed_against_oracle(int64_t size, int64_t advance, int64_t grace)
{
    static struct input in[2000];
    static struct windowed_run run;
    static struct table want;
    size_t n = disordered_input(in, 2000, (uint64_t)(size + advance + grace));
    uint64_t dropped = 0;
    size_t late_records = 0;
    oracle_windowed(in, n, size, advance, grace, &want, &dropped, &late_records);
    run_windowed(in, n, size, advance, grace, &run);
    CU_ASSERT(tables_equal(&run.got, &want));
    CU_ASSERT_EQUAL(run.dropped, dropped);
    CU_ASSERT_EQUAL(run.late_calls, late_records);
    CU_ASSERT(dropped > 0); /* the input has late records for every grace here */
    (void)fprintf(stderr, "  size %lld advance %lld grace %lld: %zu windows, %llu dropped\n",
                  (long long)size, (long long)advance, (long long)grace, want.n,
                  (unsigned long long)dropped);
}

static void test_tumbling_counts_grace_0_equal_the_oracle(void)
{
    check_windowed_against_oracle(10000, 10000, 0);
}

static void test_tumbling_counts_grace_5s_equal_the_oracle(void)
{
    check_windowed_against_oracle(10000, 10000, 5000);
}

static void test_hopping_counts_grace_0_equal_the_oracle(void)
{
    check_windowed_against_oracle(10000, 5000, 0);
}

static void test_hopping_counts_grace_5s_equal_the_oracle(void)
{
    check_windowed_against_oracle(10000, 5000, 5000);
}

static int64_t count_at(struct table *t, const char *key, int64_t start)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->cells[i].start == start && strcmp(t->cells[i].key, key) == 0) {
            return t->cells[i].count;
        }
    }
    return -1;
}

/* Worked by hand: 10 s windows, stream time reaching 23 s. Tumbling, grace
 * 0 (close time 23 s): 9 s is late for [0,10), 16 s for [10,20). Grace 5 s
 * (close time 18 s): only 9 s is late. Hopping by 5 s, grace 0: 9 s is late
 * for [0,10) and [5,15), 16 s for [10,20) but not [15,25). */
static void test_late_records_worked_by_hand(void)
{
    static const struct input in[] = {{"a", 1000}, {"a", 12000}, {"a", 23000},
                                      {"a", 9000}, {"a", 16000}, {"a", 21000}};
    static struct windowed_run run;
    run_windowed(in, 6, 10000, 10000, 0, &run);
    CU_ASSERT_EQUAL(run.dropped, 2);
    CU_ASSERT_EQUAL(run.late_calls, 2);
    CU_ASSERT_EQUAL(run.got.n, 3);
    CU_ASSERT_EQUAL(count_at(&run.got, "a", 0), 1);
    CU_ASSERT_EQUAL(count_at(&run.got, "a", 10000), 1);
    CU_ASSERT_EQUAL(count_at(&run.got, "a", 20000), 2);
    run_windowed(in, 6, 10000, 10000, 5000, &run);
    CU_ASSERT_EQUAL(run.dropped, 1);
    CU_ASSERT_EQUAL(count_at(&run.got, "a", 10000), 2);
    run_windowed(in, 6, 10000, 5000, 0, &run);
    CU_ASSERT_EQUAL(run.dropped, 3);
    CU_ASSERT_EQUAL(run.late_calls, 2);
    CU_ASSERT_EQUAL(run.got.n, 5);
    CU_ASSERT_EQUAL(count_at(&run.got, "a", 0), 1);
    CU_ASSERT_EQUAL(count_at(&run.got, "a", 5000), 1);
    CU_ASSERT_EQUAL(count_at(&run.got, "a", 10000), 1);
    CU_ASSERT_EQUAL(count_at(&run.got, "a", 15000), 3); /* 23, 16 and 21 s */
    CU_ASSERT_EQUAL(count_at(&run.got, "a", 20000), 2);
    /* a window ending exactly at the close time is closed (windowEnd >
     * closeTime keeps it open), one ending 1 ms after it is open */
    static const struct input edge[] = {{"b", 1000}, {"b", 15000}, {"b", 9999}, {"b", 5000}};
    run_windowed(edge, 4, 10000, 10000, 5000, &run);
    CU_ASSERT_EQUAL(run.dropped, 2);
    CU_ASSERT_EQUAL(count_at(&run.got, "b", 0), 1);
    run_windowed(edge, 4, 10000, 10000, 5001, &run);
    CU_ASSERT_EQUAL(run.dropped, 0);
    CU_ASSERT_EQUAL(count_at(&run.got, "b", 0), 3);
}

/* ------------------------------------------------- the other operations */

static bool starts_with_a(const struct samsa_st_record *rec, void *opaque)
{
    (void)opaque;
    return rec->value.len > 0 && ((const char *)rec->value.data)[0] == 'a';
}

static bool starts_with_b(const struct samsa_st_record *rec, void *opaque)
{
    (void)opaque;
    return rec->value.len > 0 && ((const char *)rec->value.data)[0] == 'b';
}

static int upper_value(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    char buf[64];
    size_t n = rec->value.len < sizeof buf ? rec->value.len : sizeof buf;
    for (size_t i = 0; i < n; i++) {
        char c = ((const char *)rec->value.data)[i];
        buf[i] = (char)(c >= 'a' && c <= 'z' ? c - 32 : c);
    }
    struct samsa_st_bytes v = {buf, n};
    return samsa_st_emit(out, samsa_st_str("ignored"), v);
}

static void count_peek(const struct samsa_st_record *rec, void *opaque)
{
    (void)rec;
    (*(int *)opaque)++;
}

static bool next_is(samsa_st_driver *d, const char *topic, const char *key, const char *value)
{
    struct samsa_st_record r;
    if (!samsa_st_driver_read(d, topic, &r)) {
        return false;
    }
    return r.key.len == strlen(key) && memcmp(r.key.data, key, r.key.len) == 0 &&
           r.value.len == strlen(value) && memcmp(r.value.data, value, r.value.len) == 0;
}

static void test_filter_branch_map_values_merge_peek(void)
{
    samsa_st_topology *t = samsa_st_topology_new();
    const char *in = "in";
    int peeked = 0;
    samsa_st_stream *s = samsa_st_peek(samsa_st_stream_from(t, &in, 1), count_peek, &peeked);
    samsa_st_predicate *preds[] = {starts_with_a, starts_with_b};
    samsa_st_stream *br[2] = {NULL, NULL};
    CU_ASSERT_EQUAL(samsa_st_branch(s, preds, NULL, 2, br), SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_to(br[0], "as"), SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_map_values(br[1], upper_value, NULL), "bs"), SAMSA_OK);
    samsa_st_stream *both = samsa_st_merge(br[0], samsa_st_filter_not(br[1], starts_with_a, NULL));
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_filter(both, starts_with_b, NULL), "merged-bs"),
                    SAMSA_OK);
    checked(t);
    samsa_st_driver *d = samsa_st_driver_new(t, "ops", 0);
    const char *vals[] = {"apple", "banana", "cherry", "avocado", "blue"};
    for (size_t i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, in, samsa_st_str("k"), samsa_st_str(vals[i]),
                                             (int64_t)i),
                        SAMSA_OK);
    }
    CU_ASSERT_EQUAL(peeked, 5);
    CU_ASSERT(next_is(d, "as", "k", "apple"));
    CU_ASSERT(next_is(d, "as", "k", "avocado"));
    CU_ASSERT_FALSE(next_is(d, "as", "", ""));
    CU_ASSERT(next_is(d, "bs", "k", "BANANA")); /* map_values keeps the key */
    CU_ASSERT(next_is(d, "bs", "k", "BLUE"));
    CU_ASSERT(next_is(d, "merged-bs", "k", "banana"));
    CU_ASSERT(next_is(d, "merged-bs", "k", "blue"));
    CU_ASSERT_FALSE(next_is(d, "merged-bs", "", ""));
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

static int concat(struct samsa_st_bytes agg, struct samsa_st_bytes value, samsa_st_emitter *out,
                  void *opaque)
{
    char *buf = opaque; /* 256 bytes of the test's */
    size_t n = agg.len + 1 + value.len;
    CU_ASSERT_FATAL(n < 256);
    memmove(buf, agg.data, agg.len);
    buf[agg.len] = '+';
    memcpy(buf + agg.len + 1, value.data, value.len);
    struct samsa_st_bytes v = {buf, n};
    return samsa_st_emit(out, v, v);
}

static int sum_lengths(const struct samsa_st_record *rec, struct samsa_st_bytes agg,
                       samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    int64_t sum = 0;
    if (agg.data != NULL) {
        CU_ASSERT(samsa_st_long_decode(agg, &sum));
    }
    uint8_t b[8];
    samsa_st_long_encode(sum + (int64_t)rec->value.len, b);
    struct samsa_st_bytes v = {b, 8};
    return samsa_st_emit(out, v, v);
}

static int key_by_first_letter(const struct samsa_st_record *rec, samsa_st_emitter *out,
                               void *opaque)
{
    (void)opaque;
    struct samsa_st_bytes k = {rec->value.data, 1};
    return samsa_st_emit(out, k, rec->value);
}

static void test_reduce_aggregate_and_map_through_repartition(void)
{
    samsa_st_topology *t = samsa_st_topology_new();
    const char *in = "in";
    char buf[256];
    samsa_st_stream *s = samsa_st_stream_from(t, &in, 1);
    samsa_st_grouped *g = samsa_st_group_by_key(s, NULL);
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_to_stream(samsa_st_reduce(g, concat, buf, "red")), "r"),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(
        samsa_st_to(samsa_st_to_stream(samsa_st_aggregate(g, sum_lengths, NULL, "agg")), "a"),
        SAMSA_OK);
    samsa_st_grouped *by_letter =
        samsa_st_group_by_key(samsa_st_map(s, key_by_first_letter, NULL), "letters");
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_to_stream(samsa_st_count(by_letter, "letters")), "c"),
                    SAMSA_OK);
    checked(t);
    samsa_st_driver *d = samsa_st_driver_new(t, "agg", 0);
    const char *vals[] = {"x", "yy", "zzz", "xa"};
    const char *keys[] = {"k", "k", "j", "k"};
    for (size_t i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, in, samsa_st_str(keys[i]), samsa_st_str(vals[i]),
                                             (int64_t)i),
                        SAMSA_OK);
    }
    CU_ASSERT(next_is(d, "r", "k", "x"));
    CU_ASSERT(next_is(d, "r", "k", "x+yy"));
    CU_ASSERT(next_is(d, "r", "j", "zzz"));
    CU_ASSERT(next_is(d, "r", "k", "x+yy+xa"));
    struct samsa_st_record r;
    int64_t sums[] = {1, 3, 3, 5};
    for (size_t i = 0; i < 4; i++) {
        CU_ASSERT_FATAL(samsa_st_driver_read(d, "a", &r));
        CU_ASSERT_EQUAL(long_of(r.value), sums[i]);
    }
    int64_t counts[] = {1, 1, 1, 2}; /* x, y, z, x */
    for (size_t i = 0; i < 4; i++) {
        CU_ASSERT_FATAL(samsa_st_driver_read(d, "c", &r));
        CU_ASSERT_EQUAL(long_of(r.value), counts[i]);
        CU_ASSERT_EQUAL(r.timestamp, (int64_t)i);
    }
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

static void test_table_keeps_the_latest_value_and_null_deletes(void)
{
    samsa_st_topology *t = samsa_st_topology_new();
    samsa_st_table *tb = samsa_st_table_from(t, "users", "users");
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_to_stream(tb), "changes"), SAMSA_OK);
    checked(t);
    samsa_st_driver *d = samsa_st_driver_new(t, "tbl", 0);
    struct samsa_st_bytes none = {NULL, 0};
    CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, "users", samsa_st_str("u1"), samsa_st_str("ann"), 1),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, "users", samsa_st_str("u2"), samsa_st_str("bob"), 2),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, "users", samsa_st_str("u1"), samsa_st_str("amy"), 3),
                    SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, "users", samsa_st_str("u2"), none, 4), SAMSA_OK);
    samsa_st_store *s = samsa_st_driver_store(d, "users");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    struct samsa_st_bytes v;
    CU_ASSERT(samsa_st_kv_get(s, samsa_st_str("u1"), &v));
    CU_ASSERT(v.len == 3 && memcmp(v.data, "amy", 3) == 0);
    CU_ASSERT_FALSE(samsa_st_kv_get(s, samsa_st_str("u2"), &v));
    CU_ASSERT_EQUAL(samsa_st_kv_count(s), 1);
    size_t changes = 0;
    struct samsa_st_record r;
    while (samsa_st_driver_read(d, "changes", &r)) {
        changes++;
    }
    CU_ASSERT_EQUAL(changes, 4);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* ------------------------------------------------------ processor API */

struct fired {
    int64_t stream[16];
    size_t stream_n;
    int64_t wall[16];
    size_t wall_n;
};

static void on_stream_time(samsa_st_context *ctx, int64_t ts, void *state)
{
    struct fired *f = state;
    if (f->stream_n < 16) {
        f->stream[f->stream_n++] = ts;
    }
    /* a punctuation may write a store and forward */
    samsa_st_store *s = samsa_st_context_store(ctx, "seen");
    CU_ASSERT_PTR_NOT_NULL(s);
    struct samsa_st_record r = {samsa_st_str("tick"), samsa_st_str("s"), ts};
    CU_ASSERT_EQUAL(samsa_st_forward_to(ctx, 1, &r), SAMSA_OK);
}

static void on_wall_clock(samsa_st_context *ctx, int64_t ts, void *state)
{
    (void)ctx;
    struct fired *f = state;
    if (f->wall_n < 16) {
        f->wall[f->wall_n++] = ts;
    }
}

static int remember_init(samsa_st_context *ctx, void *state)
{
    (void)state;
    int err = samsa_st_schedule(ctx, 1000, SAMSA_ST_STREAM_TIME, on_stream_time);
    return err != SAMSA_OK ? err : samsa_st_schedule(ctx, 500, SAMSA_ST_WALL_CLOCK, on_wall_clock);
}

static int remember_process(samsa_st_context *ctx, const struct samsa_st_record *rec, void *state)
{
    (void)state;
    samsa_st_store *s = samsa_st_context_store(ctx, "seen");
    int err = samsa_st_kv_put(s, rec->key, rec->value);
    return err != SAMSA_OK ? err : samsa_st_forward_to(ctx, 0, rec);
}

static void test_processor_store_forward_to_and_punctuations(void)
{
    struct fired f;
    memset(&f, 0, sizeof f);
    static const struct samsa_st_processor remember = {NULL, remember_init, remember_process,
                                                       NULL};
    samsa_st_topology *t = samsa_st_topology_new();
    const char *in = "in";
    samsa_st_node *src = samsa_st_add_source(t, "src", &in, 1);
    samsa_st_node *p = samsa_st_add_processor(t, "remember", &remember, &f, &src, 1);
    CU_ASSERT_PTR_NOT_NULL(samsa_st_add_sink(t, "records", "records", p));
    CU_ASSERT_PTR_NOT_NULL(samsa_st_add_sink(t, "ticks", "ticks", p));
    CU_ASSERT_EQUAL(samsa_st_add_kv_store(t, "seen", p), SAMSA_OK);
    /* a second node of the same name is refused, and the error sticks */
    CU_ASSERT_PTR_NULL(samsa_st_add_source(t, "src", &in, 1));
    const char *msg = NULL;
    CU_ASSERT_EQUAL(samsa_st_topology_error(t, &msg), SAMSA_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "src"));
    samsa_st_topology_destroy(t);

    t = samsa_st_topology_new();
    src = samsa_st_add_source(t, "src", &in, 1);
    p = samsa_st_add_processor(t, "remember", &remember, &f, &src, 1);
    CU_ASSERT_PTR_NOT_NULL(samsa_st_add_sink(t, "records", "records", p));
    CU_ASSERT_PTR_NOT_NULL(samsa_st_add_sink(t, "ticks", "ticks", p));
    CU_ASSERT_EQUAL(samsa_st_add_kv_store(t, "seen", p), SAMSA_OK);
    checked(t);
    samsa_st_driver *d = samsa_st_driver_new(t, "proc", 10000);
    /* stream time 0 (fires), 400, 1000 (fires), 2500 (fires, 2000 skipped
     * into 3000), 1200 (out of order: no change), 3000 (fires) */
    int64_t ts[] = {0, 400, 1000, 2500, 1200, 3000};
    for (size_t i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, in, samsa_st_str("k"), samsa_st_str("v"), ts[i]),
                        SAMSA_OK);
    }
    CU_ASSERT_EQUAL(f.stream_n, 4);
    int64_t want_stream[] = {0, 1000, 2500, 3000};
    for (size_t i = 0; i < 4 && i < f.stream_n; i++) {
        CU_ASSERT_EQUAL(f.stream[i], want_stream[i]);
    }
    size_t ticks = 0;
    size_t records = 0;
    struct samsa_st_record r;
    while (samsa_st_driver_read(d, "ticks", &r)) {
        ticks++;
    }
    while (samsa_st_driver_read(d, "records", &r)) {
        records++;
    }
    CU_ASSERT_EQUAL(ticks, 4);
    CU_ASSERT_EQUAL(records, 6);
    /* wall clock from 10 000 ms: 200 (nothing due before 10 000 + 500
     * ... the first at 10 000 itself), then 10 500, then 1 700 ms later 12 000 */
    CU_ASSERT_EQUAL(samsa_st_driver_advance_wall(d, 0), SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_driver_advance_wall(d, 200), SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_driver_advance_wall(d, 300), SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_driver_advance_wall(d, 1700), SAMSA_OK);
    CU_ASSERT_EQUAL(f.wall_n, 3);
    int64_t want_wall[] = {10000, 10500, 12200};
    for (size_t i = 0; i < 3 && i < f.wall_n; i++) {
        CU_ASSERT_EQUAL(f.wall[i], want_wall[i]);
    }
    samsa_st_store *s = samsa_st_driver_store(d, "seen");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(samsa_st_kv_count(s), 1);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

static void test_word_count_on_lmdb_equals_the_oracle(void)
{
    on_lmdb(test_word_count_equals_the_oracle);
}

static void test_hopping_counts_grace_5s_on_lmdb_equal_the_oracle(void)
{
    on_lmdb(test_hopping_counts_grace_5s_equal_the_oracle);
}

static void count_one(const char *dir, const char *word, int64_t want)
{
    samsa_st_topology *t = samsa_st_topology_new();
    const char *in = "in";
    samsa_st_table *c =
        samsa_st_count(samsa_st_group_by_key(samsa_st_stream_from(t, &in, 1), NULL), "n");
    CU_ASSERT_EQUAL(samsa_st_to(samsa_st_to_stream(c), "out"), SAMSA_OK);
    checked(t);
    samsa_st_driver *d = samsa_st_driver_new(t, "keep", 0);
    CU_ASSERT_EQUAL_FATAL(samsa_st_driver_set_state_dir(d, dir), SAMSA_OK);
    CU_ASSERT_EQUAL(samsa_st_driver_pipe(d, in, samsa_st_str(word), samsa_st_str("x"), 1),
                    SAMSA_OK);
    /* once a task runs, its stores stay where they are */
    CU_ASSERT_EQUAL(samsa_st_driver_set_state_dir(d, NULL), SAMSA_ERR_STATE);
    struct samsa_st_record r;
    CU_ASSERT_FATAL(samsa_st_driver_read(d, "out", &r));
    CU_ASSERT_EQUAL(long_of(r.value), want);
    samsa_st_driver_destroy(d);
    samsa_st_topology_destroy(t);
}

/* The same state folder a second time: the count goes on from the file (the
 * driver has no changelog to restore from). */
static void test_lmdb_store_keeps_its_state_in_its_folder(void)
{
    char dir[] = "/tmp/samsa-streams-lmdb-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    count_one(dir, "w", 1);
    count_one(dir, "w", 2);
    count_one(dir, "v", 1);
    count_one(dir, "w", 3);
    char path[128];
    (void)snprintf(path, sizeof path, "%s/keep/0_0/data.mdb", dir);
    CU_ASSERT_EQUAL(access(path, F_OK), 0);
    CU_ASSERT_EQUAL(nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

int main(void)
{
    static CU_TestInfo tests[] = {
        {"serdes_write_javas_bytes", test_serdes_write_javas_bytes},
        {"word_count_equals_the_oracle", test_word_count_equals_the_oracle},
        {"tumbling_counts_grace_0_equal_the_oracle", test_tumbling_counts_grace_0_equal_the_oracle},
        {"tumbling_counts_grace_5s_equal_the_oracle",
         test_tumbling_counts_grace_5s_equal_the_oracle},
        {"hopping_counts_grace_0_equal_the_oracle", test_hopping_counts_grace_0_equal_the_oracle},
        {"hopping_counts_grace_5s_equal_the_oracle", test_hopping_counts_grace_5s_equal_the_oracle},
        {"late_records_worked_by_hand", test_late_records_worked_by_hand},
        {"filter_branch_map_values_merge_peek", test_filter_branch_map_values_merge_peek},
        {"reduce_aggregate_and_map_through_repartition",
         test_reduce_aggregate_and_map_through_repartition},
        {"table_keeps_the_latest_value_and_null_deletes",
         test_table_keeps_the_latest_value_and_null_deletes},
        {"processor_store_forward_to_and_punctuations",
         test_processor_store_forward_to_and_punctuations},
        {"word_count_on_lmdb_equals_the_oracle", test_word_count_on_lmdb_equals_the_oracle},
        {"hopping_counts_grace_5s_on_lmdb_equal_the_oracle",
         test_hopping_counts_grace_5s_on_lmdb_equal_the_oracle},
        {"lmdb_store_keeps_its_state_in_its_folder", test_lmdb_store_keeps_its_state_in_its_folder},
        CU_TEST_INFO_NULL,
    };
    return st_run_suite("streams", tests);
}
