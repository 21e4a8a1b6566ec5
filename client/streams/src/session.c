/*
 * Session-windowed aggregations (Kafka's
 * kstream/internals/KStreamSessionWindowAggregate.java as KAFKA-8289 left
 * it in 2.3, SessionWindows.java) and the suppression of a windowed table's
 * updates until its windows close (2.3's
 * kstream/internals/suppress/KTableSuppressProcessorSupplier.java with
 * Suppressed.untilWindowCloses; a session's suppression waits gap + grace,
 * graph/GraphGraceSearchUtil.java).
 *
 * A key's sessions are one key-value entry, a list of
 * [start BE64][end BE64][length BE32][aggregate] (Kafka keeps them in a
 * session store keyed by key, end and start): finding the sessions a record
 * reaches is one read, and every change one changelog record.
 */
#include "dsl.h"

#include <stdlib.h>
#include <string.h>

#define SESSION_HEAD 20
#define DAY_MS 86400000LL

struct session {
    int64_t start;
    int64_t end;
    struct samsa_st_bytes agg;
};

static uint32_t get_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* The next session of a list; false at its end or at bytes that are not a
 * session (a damaged entry reads as shorter). */
static bool next_session(const uint8_t **p, size_t *left, struct session *s)
{
    if (*left < SESSION_HEAD) {
        return false;
    }
    uint32_t len = get_be32(*p + 16);
    if (*left - SESSION_HEAD < len) {
        return false;
    }
    s->start = (int64_t)st_get_be64(*p);
    s->end = (int64_t)st_get_be64(*p + 8);
    s->agg.data = *p + SESSION_HEAD;
    s->agg.len = len;
    *p += SESSION_HEAD + len;
    *left -= SESSION_HEAD + len;
    return true;
}

static uint8_t *put_session(uint8_t *p, int64_t start, int64_t end, struct samsa_st_bytes agg)
{
    st_put_be64(p, (uint64_t)start);
    st_put_be64(p + 8, (uint64_t)end);
    put_be32(p + 16, (uint32_t)agg.len);
    if (agg.len > 0) {
        memcpy(p + SESSION_HEAD, agg.data, agg.len);
    }
    return p + SESSION_HEAD + agg.len;
}

bool samsa_st_session_key_split(struct samsa_st_bytes b, struct samsa_st_bytes *key, int64_t *start,
                                int64_t *end)
{
    if (b.data == NULL || b.len < 16) {
        return false;
    }
    const uint8_t *p = b.data;
    key->data = p;
    key->len = b.len - 16;
    *end = (int64_t)st_get_be64(p + b.len - 16);
    *start = (int64_t)st_get_be64(p + b.len - 8);
    return true;
}

/* Forwards (key ‖ end ‖ start, value) at ts (SessionKeySchema.toBinary). */
static int forward_session(samsa_st_context *ctx, struct samsa_st_bytes key, int64_t start,
                           int64_t end, struct samsa_st_bytes value, int64_t ts)
{
    uint8_t *k = malloc(key.len + 16);
    if (k == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    if (key.len > 0) {
        memcpy(k, key.data, key.len);
    }
    st_put_be64(k + key.len, (uint64_t)end);
    st_put_be64(k + key.len + 8, (uint64_t)start);
    struct samsa_st_record out = {{k, key.len + 16}, value, ts};
    int err = samsa_st_forward(ctx, &out);
    free(k);
    return err;
}

/* *acc merged with b into a fresh allocation (*acc data NULL: b itself):
 * counts add up, reduce runs the reducer, aggregate the merger. */
static int merge_into(const struct op *op, samsa_st_context *ctx, struct samsa_st_bytes *acc,
                      uint8_t **buf, struct samsa_st_bytes b)
{
    struct samsa_st_bytes merged = b;
    samsa_st_emitter e = {.ctx = ctx, .kind = OP_SESSION, .result = &merged};
    uint8_t sum[8];
    int err = SAMSA_OK;
    if (acc->data != NULL) {
        if (op->agg == AGG_COUNT) {
            int64_t x = 0;
            int64_t y = 0;
            if (!samsa_st_long_decode(*acc, &x) || !samsa_st_long_decode(b, &y)) {
                return SAMSA_ERR_INVALID_ARG;
            }
            samsa_st_long_encode(x + y, sum);
            merged.data = sum;
            merged.len = 8;
        } else {
            err = op->agg == AGG_REDUCE
                      ? op->reducer(*acc, b, &e, op->opaque)
                      : op->session.merger(*acc, b, &e, op->session.merger_opaque);
            if (err == SAMSA_OK && !e.emitted) {
                err = SAMSA_ERR_INVALID_ARG;
            }
        }
    }
    uint8_t *copy = NULL;
    if (err == SAMSA_OK && merged.data != NULL) {
        copy = malloc(merged.len + 1);
        if (copy == NULL) {
            err = SAMSA_ERR_NOMEM;
        } else if (merged.len > 0) {
            memcpy(copy, merged.data, merged.len);
        }
    }
    st_emitter_done(&e);
    if (err == SAMSA_OK) {
        free(*buf);
        *buf = copy;
        acc->data = copy;
        acc->len = merged.len;
    }
    return err;
}

static bool reaches(const struct session *se, int64_t ts, int64_t gap)
{
    return se->end >= ts - gap && se->start <= ts + gap;
}

/* Stores the key's sessions with those rec reached replaced by the merged
 * [start, end] holding the new aggregate, then forwards a tombstone for
 * each replaced session and the merged one (KStreamSessionWindowAggregate). */
static int add_merged(samsa_st_context *ctx, const struct op *op, samsa_st_store *s,
                      const struct samsa_st_record *rec, struct samsa_st_bytes list, int64_t start,
                      int64_t end, struct samsa_st_bytes acc)
{
    const struct samsa_st_session_windows *w = &op->session;
    int64_t keep = w->gap_ms + w->grace_ms > DAY_MS ? w->gap_ms + w->grace_ms : DAY_MS;
    int64_t now = samsa_st_context_stream_time(ctx);
    int64_t ts = rec->timestamp;
    samsa_st_emitter e = {.ctx = ctx, .in = rec, .kind = OP_SESSION};
    struct samsa_st_bytes agg = {NULL, 0};
    int err = st_aggregate_one(op, &e, rec, acc, &agg);
    uint8_t *fresh = err == SAMSA_OK ? malloc(list.len + SESSION_HEAD + agg.len) : NULL;
    if (err == SAMSA_OK && fresh == NULL) {
        err = SAMSA_ERR_NOMEM;
    }
    const uint8_t *p;
    size_t left;
    struct session se;
    if (err == SAMSA_OK) {
        /* the sessions not reached and still kept, then the merged one */
        uint8_t *q = fresh;
        p = list.data;
        left = list.len;
        while (next_session(&p, &left, &se)) {
            if (!reaches(&se, ts, w->gap_ms) && se.end >= now - keep) {
                q = put_session(q, se.start, se.end, se.agg);
            }
        }
        q = put_session(q, start, end, agg);
        struct samsa_st_bytes value = {fresh, (size_t)(q - fresh)};
        err = samsa_st_kv_put(s, rec->key, value);
    }
    /* a record landing on a session of its own time alone updates it in place */
    bool replaced = !(start == ts && end == ts);
    p = list.data;
    left = list.len;
    while (err == SAMSA_OK && replaced && next_session(&p, &left, &se)) {
        if (reaches(&se, ts, w->gap_ms)) {
            struct samsa_st_bytes none = {NULL, 0};
            err = forward_session(ctx, rec->key, se.start, se.end, none, ts);
        }
    }
    if (err == SAMSA_OK) {
        err = forward_session(ctx, rec->key, start, end, agg, ts);
    }
    free(fresh);
    st_emitter_done(&e);
    return err;
}

static int session_process(samsa_st_context *ctx, const struct samsa_st_record *rec, void *state)
{
    const struct op *op = state;
    samsa_st_store *s = NULL;
    int serr = st_aggregation_store(ctx, op, rec, &s);
    if (s == NULL) {
        return serr;
    }
    const struct samsa_st_session_windows *w = &op->session;
    int64_t close = samsa_st_context_stream_time(ctx) - w->grace_ms;
    int64_t ts = rec->timestamp;
    struct samsa_st_bytes old;
    if (!samsa_st_kv_get(s, rec->key, &old)) {
        old.data = NULL;
        old.len = 0;
    }
    /* a copy: tombstones and the new session go downstream, where stores
     * are written */
    uint8_t *copy = malloc(old.len + 1);
    if (copy == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    if (old.len > 0) {
        memcpy(copy, old.data, old.len);
    }
    struct samsa_st_bytes list = {copy, old.len};
    /* findSessions(key, ts - gap, ts + gap), merged into [start, end] */
    int64_t start = ts;
    int64_t end = ts;
    struct samsa_st_bytes acc = {NULL, 0};
    uint8_t *acc_buf = NULL;
    int err = SAMSA_OK;
    const uint8_t *p = list.data;
    size_t left = list.len;
    struct session se;
    while (err == SAMSA_OK && next_session(&p, &left, &se)) {
        if (reaches(&se, ts, w->gap_ms)) {
            start = se.start < start ? se.start : start;
            end = se.end > end ? se.end : end;
            err = merge_into(op, ctx, &acc, &acc_buf, se.agg);
        }
    }
    if (err == SAMSA_OK && end >= close) {
        err = add_merged(ctx, op, s, rec, list, start, end, acc);
    } else if (err == SAMSA_OK) {
        /* the merged session is closed: the record is late (dropped when
         * mergedWindow.end() < closeTime since KAFKA-8289, 2.3; 2.1 and
         * 2.2 also dropped end == closeTime, so with grace 0 every record) */
        ctx->task->dropped_late++;
        err = st_dsl_late(ctx, op, rec, w->late_cb, w->late_opaque, w->late_topic);
    }
    free(acc_buf);
    free(copy);
    return err;
}

/* ---- suppress: [window end BE64][timestamp BE64][present 1][value] per windowed key */

#define HELD_HEAD 17

struct held {
    struct samsa_st_bytes key;
    int64_t end;
};

struct closed {
    int64_t until;
    struct held *v;
    size_t count;
    size_t cap;
    bool nomem;
};

static bool collect_closed(struct samsa_st_bytes key, struct samsa_st_bytes value, void *opaque)
{
    struct closed *c = opaque;
    if (value.len < HELD_HEAD) {
        return true;
    }
    int64_t end = (int64_t)st_get_be64(value.data);
    if (end > c->until) {
        return true;
    }
    if (c->count == c->cap) {
        size_t cap = c->cap != 0 ? c->cap * 2 : 16;
        struct held *v = realloc(c->v, cap * sizeof *v);
        if (v == NULL) {
            c->nomem = true;
            return false;
        }
        c->v = v;
        c->cap = cap;
    }
    uint8_t *k = malloc(key.len + 1);
    if (k == NULL) {
        c->nomem = true;
        return false;
    }
    if (key.len > 0) {
        memcpy(k, key.data, key.len);
    }
    c->v[c->count].key.data = k;
    c->v[c->count].key.len = key.len;
    c->v[c->count].end = end;
    c->count++;
    return true;
}

/* Oldest window first, then by key: one order on every run. */
static int by_end(const void *a, const void *b)
{
    const struct held *x = a;
    const struct held *y = b;
    if (x->end != y->end) {
        return x->end < y->end ? -1 : 1;
    }
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = n > 0 ? memcmp(x->key.data, y->key.data, n) : 0;
    return c != 0 ? c : (x->key.len > y->key.len) - (x->key.len < y->key.len);
}

/* Emits and forgets every held window with end + close_after <= stream time. */
static int emit_closed(samsa_st_context *ctx, samsa_st_store *s, int64_t until)
{
    struct closed c = {.until = until};
    samsa_st_kv_each(s, collect_closed, &c);
    int err = c.nomem ? SAMSA_ERR_NOMEM : SAMSA_OK;
    if (c.count > 1) {
        qsort(c.v, c.count, sizeof *c.v, by_end);
    }
    for (size_t i = 0; i < c.count; i++) {
        struct samsa_st_bytes v;
        uint8_t *copy = NULL;
        if (err == SAMSA_OK && samsa_st_kv_get(s, c.v[i].key, &v) && v.len >= HELD_HEAD) {
            copy = malloc(v.len);
            err = copy == NULL ? SAMSA_ERR_NOMEM : SAMSA_OK;
        }
        if (copy != NULL) {
            memcpy(copy, v.data, v.len);
            struct samsa_st_bytes none = {NULL, 0};
            err = samsa_st_kv_put(s, c.v[i].key, none);
            /* a window removed by a session merge is no final result
             * (KTableSuppressProcessor drops tombstones for final results) */
            if (err == SAMSA_OK && copy[16] != 0) {
                struct samsa_st_record out = {c.v[i].key,
                                              {copy + HELD_HEAD, v.len - HELD_HEAD},
                                              (int64_t)st_get_be64(copy + 8)};
                err = samsa_st_forward(ctx, &out);
            }
            free(copy);
        }
        free((void *)(uintptr_t)c.v[i].key.data);
    }
    free(c.v);
    return err;
}

static int suppress_process(samsa_st_context *ctx, const struct samsa_st_record *rec, void *state)
{
    const struct op *op = state;
    samsa_st_store *s = samsa_st_context_store(ctx, op->store);
    if (s == NULL) {
        return SAMSA_ERR_STATE;
    }
    /* the window's end: a time window's start + size, a session's end */
    int64_t end = 0;
    if (op->window_kind == ST_SESSION_WINDOWS) {
        struct samsa_st_bytes k;
        int64_t start = 0;
        if (!samsa_st_session_key_split(rec->key, &k, &start, &end)) {
            return SAMSA_ERR_INVALID_ARG;
        }
    } else {
        struct samsa_st_bytes k;
        if (!samsa_st_windowed_key_split(rec->key, &k, &end)) {
            return SAMSA_ERR_INVALID_ARG;
        }
        end += op->size_ms;
    }
    uint8_t *held = malloc(HELD_HEAD + rec->value.len);
    if (held == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    st_put_be64(held, (uint64_t)end);
    st_put_be64(held + 8, (uint64_t)rec->timestamp);
    held[16] = rec->value.data != NULL ? 1 : 0;
    if (rec->value.data != NULL && rec->value.len > 0) {
        memcpy(held + HELD_HEAD, rec->value.data, rec->value.len);
    }
    struct samsa_st_bytes v = {held, HELD_HEAD + rec->value.len};
    int err = samsa_st_kv_put(s, rec->key, v);
    free(held);
    /* windows close only as stream time moves: look when it did (the
     * store's swept_at remembers the stream time of the last look) */
    int64_t now = samsa_st_context_stream_time(ctx);
    if (err == SAMSA_OK && now != s->swept_at) {
        s->swept_at = now;
        err = emit_closed(ctx, s, now - op->close_after_ms);
    }
    return err;
}

static const struct samsa_st_processor session_processor = {NULL, NULL, session_process, NULL};
static const struct samsa_st_processor suppress_processor = {NULL, NULL, suppress_process, NULL};

samsa_st_grouped *samsa_st_session_windowed_by(samsa_st_grouped *g,
                                               const struct samsa_st_session_windows *w)
{
    if (g == NULL || g->t->err != SAMSA_OK) {
        return NULL;
    }
    if (w == NULL || w->gap_ms <= 0 || w->grace_ms < 0) {
        (void)st_fail(g->t, SAMSA_ERR_INVALID_ARG, "session windows need gap > 0 and grace >= 0");
        return NULL;
    }
    samsa_st_grouped *wg = st_own(g->t, calloc(1, sizeof *wg));
    if (wg != NULL) {
        *wg = *g;
        wg->window_kind = ST_SESSION_WINDOWS;
        wg->session = *w;
        wg->session.late_topic = st_late_topic(g->t, w->late_topic);
        wg->proc = &session_processor; /* the aggregation dsl.c builds runs it */
    }
    return g->t->err == SAMSA_OK ? wg : NULL;
}

samsa_st_table *samsa_st_suppress_until_window_closes(samsa_st_table *tb, const char *name)
{
    if (tb == NULL || tb->t->err != SAMSA_OK) {
        return NULL;
    }
    samsa_st_topology *t = tb->t;
    if (tb->window_kind == ST_UNWINDOWED || name == NULL) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG,
                      "suppress until windows close needs a windowed aggregation and a name");
        return NULL;
    }
    struct op *op = st_dsl_op(t, OP_SUPPRESS);
    char *store = st_dsl_strdup(t, name);
    if (op == NULL || store == NULL) {
        return NULL;
    }
    op->store = store;
    op->window_kind = tb->window_kind;
    op->size_ms = tb->size_ms;
    op->close_after_ms = tb->close_after_ms;
    samsa_st_node *n = st_dsl_node_with(t, "SUPPRESS", &suppress_processor, op, &tb->node, 1);
    if (n == NULL || samsa_st_add_kv_store(t, name, n) != SAMSA_OK) {
        return NULL;
    }
    return st_dsl_table(t, n, NULL);
}
