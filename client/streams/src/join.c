/*
 * Joins, as Kafka 2.0 runs them (streams/src/main/java/org/apache/kafka/
 * streams/kstream/internals/):
 *
 *   stream-table   KStreamKTableJoinProcessor: a stream record looks its key
 *                  up in the table's store; table updates emit nothing.
 *   stream-stream  KStreamJoinWindow keeps each side's records in a store of
 *                  its own, KStreamKStreamJoin joins a record against the
 *                  other side's records within the window; KStreamImpl.join
 *                  wires this side (before, after) and the other side
 *                  (after, before) with the joiner reversed, then merges.
 *   table-table    KTableKTableInnerJoin, KTableKTableLeftJoin (with
 *                  KTableKTableRightJoin for the right side's updates),
 *                  KTableKTableOuterJoin: an update on one side looks the
 *                  key up in the other side's store.
 *
 * A side's records of a stream-stream join are kept per key in one
 * key-value entry, a list of (timestamp, value) (Kafka keeps them in a
 * window store with duplicates retained): a lookup is one read, and every
 * change is one changelog record, restored as any key-value store's.
 */
#include "dsl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs the joiner on (mine, other), or (other, mine) on the right side, and
 * forwards the joined value under key at ts. */
static int join_emit(samsa_st_context *ctx, const struct op *op, struct samsa_st_bytes key,
                     struct samsa_st_bytes mine, struct samsa_st_bytes other, int64_t ts)
{
    struct samsa_st_bytes joined = {NULL, 0};
    samsa_st_emitter e = {.ctx = ctx, .kind = op->kind, .result = &joined};
    int err = op->reversed ? op->joiner(other, mine, &e, op->opaque)
                           : op->joiner(mine, other, &e, op->opaque);
    if (err == SAMSA_OK && !e.emitted) {
        err = SAMSA_ERR_INVALID_ARG; /* a joiner emits exactly one value */
    }
    if (err == SAMSA_OK) {
        struct samsa_st_record out = {key, joined, ts};
        err = samsa_st_forward(ctx, &out);
    }
    st_emitter_done(&e);
    return err;
}

static int forward_tombstone(samsa_st_context *ctx, struct samsa_st_bytes key, int64_t ts)
{
    struct samsa_st_record out = {key, {NULL, 0}, ts};
    return samsa_st_forward(ctx, &out);
}

/* The other side's value of key (a null view when absent), borrowed until
 * the next call on that store. */
static int other_value(samsa_st_context *ctx, const struct op *op, struct samsa_st_bytes key,
                       struct samsa_st_bytes *out)
{
    samsa_st_store *s = samsa_st_context_store(ctx, op->other_store);
    if (s == NULL) {
        return SAMSA_ERR_STATE;
    }
    if (!samsa_st_kv_get(s, key, out)) {
        out->data = NULL;
        out->len = 0;
    }
    return SAMSA_OK;
}

/* ---- a side's records of a stream-stream join: [timestamp BE64][length BE32][value]... */

#define ENTRY_HEAD 12

struct entry_reader {
    const uint8_t *p;
    size_t left;
};

/* The next (timestamp, value) of the list; false at its end or at bytes that
 * are not an entry (a damaged store reads as shorter). */
static bool next_entry(struct entry_reader *r, int64_t *ts, struct samsa_st_bytes *value)
{
    if (r->left < ENTRY_HEAD) {
        return false;
    }
    uint64_t len = ((uint64_t)r->p[8] << 24) | ((uint64_t)r->p[9] << 16) |
                   ((uint64_t)r->p[10] << 8) | r->p[11];
    if (r->left - ENTRY_HEAD < len) {
        return false;
    }
    *ts = (int64_t)st_get_be64(r->p);
    value->data = r->p + ENTRY_HEAD;
    value->len = (size_t)len;
    r->p += ENTRY_HEAD + len;
    r->left -= ENTRY_HEAD + len;
    return true;
}

static uint8_t *put_entry(uint8_t *p, int64_t ts, struct samsa_st_bytes value)
{
    st_put_be64(p, (uint64_t)ts);
    p[8] = (uint8_t)(value.len >> 24);
    p[9] = (uint8_t)(value.len >> 16);
    p[10] = (uint8_t)(value.len >> 8);
    p[11] = (uint8_t)value.len;
    if (value.len > 0) {
        memcpy(p + ENTRY_HEAD, value.data, value.len);
    }
    return p + ENTRY_HEAD + value.len;
}

/* The oldest timestamp a side still keeps: before + after + grace of stream
 * time (Kafka 2.1 retains join stores for JoinWindows.size() + grace). */
static int64_t kept_from(samsa_st_context *ctx, const struct op *op)
{
    return samsa_st_context_stream_time(ctx) - op->retention_ms;
}

/* Adds rec to its side's list, dropping the entries past retention. */
static int keep_record(samsa_st_context *ctx, const struct op *op,
                       const struct samsa_st_record *rec)
{
    samsa_st_store *s = samsa_st_context_store(ctx, op->store);
    if (s == NULL) {
        return SAMSA_ERR_STATE;
    }
    int64_t from = kept_from(ctx, op);
    if (rec->timestamp < from || rec->value.len > UINT32_MAX) {
        return SAMSA_OK; /* already past retention: no later record can join it */
    }
    struct samsa_st_bytes old;
    if (!samsa_st_kv_get(s, rec->key, &old)) {
        old.data = NULL;
        old.len = 0;
    }
    uint8_t *list = malloc(old.len + ENTRY_HEAD + rec->value.len);
    if (list == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    uint8_t *p = list;
    struct entry_reader r = {old.data, old.data != NULL ? old.len : 0};
    int64_t ts;
    struct samsa_st_bytes v;
    while (next_entry(&r, &ts, &v)) {
        if (ts >= from) {
            p = put_entry(p, ts, v);
        }
    }
    p = put_entry(p, rec->timestamp, rec->value);
    struct samsa_st_bytes value = {list, (size_t)(p - list)};
    int err = samsa_st_kv_put(s, rec->key, value);
    free(list);
    return err;
}

/* KStreamKStreamJoin.process: every record of the other side within
 * [t - before, t + after] (floored at 0, as Kafka's fetch is), joined in
 * the order they arrived; none and outer: (value, null). */
static int join_window(samsa_st_context *ctx, const struct op *op,
                       const struct samsa_st_record *rec)
{
    struct samsa_st_bytes list;
    int err = other_value(ctx, op, rec->key, &list);
    if (err != SAMSA_OK) {
        return err;
    }
    /* a copy: the joined records go downstream, where stores are written */
    uint8_t *copy = NULL;
    if (list.data != NULL && list.len > 0) {
        copy = malloc(list.len);
        if (copy == NULL) {
            return SAMSA_ERR_NOMEM;
        }
        memcpy(copy, list.data, list.len);
    }
    int64_t lo = rec->timestamp - op->before_ms > 0 ? rec->timestamp - op->before_ms : 0;
    int64_t hi = rec->timestamp + op->after_ms > 0 ? rec->timestamp + op->after_ms : 0;
    int64_t from = kept_from(ctx, op);
    struct entry_reader r = {copy, copy != NULL ? list.len : 0};
    int64_t ts;
    struct samsa_st_bytes v;
    bool joined = false;
    while (err == SAMSA_OK && next_entry(&r, &ts, &v)) {
        if (ts >= lo && ts <= hi && ts >= from) {
            joined = true;
            err = join_emit(ctx, op, rec->key, rec->value, v, rec->timestamp);
        }
    }
    free(copy);
    if (err == SAMSA_OK && !joined && op->outer) {
        struct samsa_st_bytes none = {NULL, 0};
        err = join_emit(ctx, op, rec->key, rec->value, none, rec->timestamp);
    }
    return err;
}

/* One side's update of a table-table join; mine is its new value (null:
 * the row was deleted). */
static int join_tables(samsa_st_context *ctx, const struct op *op,
                       const struct samsa_st_record *rec)
{
    struct samsa_st_bytes other;
    int err = other_value(ctx, op, rec->key, &other);
    if (err != SAMSA_OK) {
        return err;
    }
    bool mine = rec->value.data != NULL;
    bool theirs = other.data != NULL;
    switch (op->join_kind) {
    case SAMSA_ST_JOIN_INNER: /* KTableKTableInnerJoin */
        if (!theirs) {
            return SAMSA_OK;
        }
        break;
    case SAMSA_ST_JOIN_LEFT:
        /* the right side's update (KTableKTableRightJoin) counts only
         * where the left has the key */
        if (op->reversed && !theirs) {
            return SAMSA_OK;
        }
        if (op->reversed) {
            return join_emit(ctx, op, rec->key, rec->value, other, rec->timestamp);
        }
        break;
    case SAMSA_ST_JOIN_OUTER: /* KTableKTableOuterJoin */
        if (!mine && theirs) {
            return join_emit(ctx, op, rec->key, rec->value, other, rec->timestamp);
        }
        break;
    }
    /* the updated side's row is gone: so is the joined row (Kafka forwards
     * the null new value; without old values here, a tombstone is sent
     * even for a row never joined, which a reader of a compacted topic
     * takes as it is) */
    return mine ? join_emit(ctx, op, rec->key, rec->value, other, rec->timestamp)
                : forward_tombstone(ctx, rec->key, rec->timestamp);
}

static int join_process(samsa_st_context *ctx, const struct samsa_st_record *rec, void *state)
{
    const struct op *op = state;
    if (op->kind == OP_JOIN_TABLES) {
        return rec->key.data != NULL ? join_tables(ctx, op, rec) : SAMSA_OK;
    }
    /* a record with a null key or value joins nothing: skipped, as
     * KStreamKTableJoinProcessor and KStreamKStreamJoin skip it */
    if (rec->key.data == NULL || rec->value.data == NULL) {
        return SAMSA_OK;
    }
    switch (op->kind) {
    case OP_JOIN_TABLE: {
        struct samsa_st_bytes other;
        int err = other_value(ctx, op, rec->key, &other);
        if (err != SAMSA_OK || (other.data == NULL && op->join_kind != SAMSA_ST_JOIN_LEFT)) {
            return err;
        }
        return join_emit(ctx, op, rec->key, rec->value, other, rec->timestamp);
    }
    case OP_JOIN_WINDOW: {
        /* KStreamJoinWindow: forwarded to the join, then kept */
        int err = samsa_st_forward(ctx, rec);
        return err == SAMSA_OK ? keep_record(ctx, op, rec) : err;
    }
    case OP_JOIN_STREAM:
        return join_window(ctx, op, rec);
    default:
        return SAMSA_ERR_INVALID_ARG;
    }
}

static const struct samsa_st_processor join_processor = {NULL, NULL, join_process, NULL};

/* ---- building */

/* Refuses what a join cannot take; returns the topology or NULL. */
static samsa_st_topology *join_checks(samsa_st_topology *a, samsa_st_topology *b,
                                      samsa_st_joiner *fn, bool key_changed, const char *what)
{
    if (a == NULL || b == NULL || a->err != SAMSA_OK) {
        return NULL;
    }
    if (a != b) {
        (void)st_fail(a, SAMSA_ERR_INVALID_ARG, "%s: both sides must be of one topology", what);
        return NULL;
    }
    if (fn == NULL) {
        (void)st_fail(a, SAMSA_ERR_INVALID_ARG, "%s needs a joiner", what);
        return NULL;
    }
    if (key_changed) {
        /* Kafka repartitions silently here; names are the caller's */
        (void)st_fail(a, SAMSA_ERR_INVALID_ARG,
                      "%s after a key change: send the stream through "
                      "samsa_st_repartition(stream, name) first",
                      what);
        return NULL;
    }
    return a;
}

static bool materialized(samsa_st_table *tb, const char *what)
{
    if (tb->store == NULL || tb->window_kind != ST_UNWINDOWED) {
        (void)st_fail(tb->t, SAMSA_ERR_INVALID_ARG,
                      "%s needs a table kept in a key-value store (table_from or an "
                      "unwindowed aggregation)",
                      what);
        return false;
    }
    return true;
}

static struct op *join_op(samsa_st_topology *t, enum op_kind kind, enum samsa_st_join_kind jk,
                          samsa_st_joiner *fn, void *opaque)
{
    struct op *op = st_dsl_op(t, kind);
    if (op != NULL) {
        op->join_kind = jk;
        op->joiner = fn;
        op->opaque = opaque;
    }
    return op;
}

samsa_st_stream *samsa_st_join_table(samsa_st_stream *s, samsa_st_table *tb,
                                     enum samsa_st_join_kind kind, samsa_st_joiner *fn,
                                     void *opaque)
{
    const char *what = "a stream-table join";
    samsa_st_topology *t = join_checks(s != NULL ? s->t : NULL, tb != NULL ? tb->t : NULL, fn,
                                       s != NULL && s->key_changed, what);
    if (t == NULL || !materialized(tb, what)) {
        return NULL;
    }
    if (kind != SAMSA_ST_JOIN_INNER && kind != SAMSA_ST_JOIN_LEFT) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG, "a stream-table join is inner or left");
        return NULL;
    }
    struct op *op = join_op(t, OP_JOIN_TABLE, kind, fn, opaque);
    if (op == NULL) {
        return NULL;
    }
    op->other_store = tb->store;
    samsa_st_node *n = st_dsl_node_with(t, "JOIN", &join_processor, op, &s->node, 1);
    if (n == NULL || st_store_connect(t, tb->store, n) != SAMSA_OK) {
        return NULL;
    }
    return st_dsl_stream(t, n, false);
}

/* One side of a stream-stream join: the node keeping its records in store
 * mine, and the node joining them against store theirs. */
static samsa_st_node *stream_side(samsa_st_topology *t, samsa_st_node *parent, const char *mine,
                                  const char *theirs, const struct op *tmpl)
{
    struct op *keep = st_dsl_op(t, OP_JOIN_WINDOW);
    struct op *join = st_dsl_op(t, OP_JOIN_STREAM);
    if (keep == NULL || join == NULL) {
        return NULL;
    }
    *join = *tmpl;
    join->kind = OP_JOIN_STREAM;
    join->other_store = theirs;
    keep->store = mine;
    keep->retention_ms = tmpl->retention_ms;
    samsa_st_node *kn = st_dsl_node_with(t, "JOINTHIS", &join_processor, keep, &parent, 1);
    if (kn == NULL || samsa_st_add_kv_store(t, mine, kn) != SAMSA_OK) {
        return NULL;
    }
    samsa_st_node *jn = st_dsl_node_with(t, "JOIN", &join_processor, join, &kn, 1);
    return jn;
}

samsa_st_stream *samsa_st_join_stream(samsa_st_stream *left, samsa_st_stream *right,
                                      enum samsa_st_join_kind kind,
                                      const struct samsa_st_join_windows *w, samsa_st_joiner *fn,
                                      void *opaque, const char *name)
{
    samsa_st_topology *t =
        join_checks(left != NULL ? left->t : NULL, right != NULL ? right->t : NULL, fn,
                    (left != NULL && left->key_changed) || (right != NULL && right->key_changed),
                    "a stream-stream join");
    if (t == NULL) {
        return NULL;
    }
    if (w == NULL || w->before_ms < 0 || w->after_ms < 0 || w->grace_ms < 0 || name == NULL ||
        (unsigned)kind > SAMSA_ST_JOIN_OUTER) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG,
                      "a stream-stream join needs a name, a kind and windows with before, "
                      "after and grace >= 0");
        return NULL;
    }
    size_t n = strlen(name) + sizeof "-join-other";
    char *this_store = st_own(t, malloc(n));
    char *other_store = st_own(t, malloc(n));
    if (this_store == NULL || other_store == NULL) {
        return NULL;
    }
    (void)snprintf(this_store, n, "%s-join-this", name);
    (void)snprintf(other_store, n, "%s-join-other", name);
    struct op tmpl = {.joiner = fn,
                      .opaque = opaque,
                      .join_kind = kind,
                      .before_ms = w->before_ms,
                      .after_ms = w->after_ms,
                      .retention_ms = w->before_ms + w->after_ms + w->grace_ms,
                      .outer = kind != SAMSA_ST_JOIN_INNER};
    samsa_st_node *joins[2];
    joins[0] = stream_side(t, left->node, this_store, other_store, &tmpl);
    /* the other side looks [t - after, t + before] up, joiner reversed, and
     * emits unmatched records only in an outer join (KStreamImpl.join) */
    tmpl.before_ms = w->after_ms;
    tmpl.after_ms = w->before_ms;
    tmpl.reversed = true;
    tmpl.outer = kind == SAMSA_ST_JOIN_OUTER;
    joins[1] =
        joins[0] != NULL ? stream_side(t, right->node, other_store, this_store, &tmpl) : NULL;
    if (joins[1] == NULL || st_store_connect(t, other_store, joins[0]) != SAMSA_OK ||
        st_store_connect(t, this_store, joins[1]) != SAMSA_OK) {
        return NULL;
    }
    return st_dsl_stream(t, st_dsl_node(t, "MERGE", st_dsl_op(t, OP_PASS), joins, 2), false);
}

samsa_st_table *samsa_st_join_tables(samsa_st_table *left, samsa_st_table *right,
                                     enum samsa_st_join_kind kind, samsa_st_joiner *fn,
                                     void *opaque)
{
    const char *what = "a table-table join";
    samsa_st_topology *t = join_checks(left != NULL ? left->t : NULL,
                                       right != NULL ? right->t : NULL, fn, false, what);
    if (t == NULL || !materialized(left, what) || !materialized(right, what)) {
        return NULL;
    }
    if ((unsigned)kind > SAMSA_ST_JOIN_OUTER) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG, "%s is inner, left or outer", what);
        return NULL;
    }
    struct op *lop = join_op(t, OP_JOIN_TABLES, kind, fn, opaque);
    struct op *rop = join_op(t, OP_JOIN_TABLES, kind, fn, opaque);
    if (lop == NULL || rop == NULL) {
        return NULL;
    }
    lop->other_store = right->store;
    rop->other_store = left->store;
    rop->reversed = true;
    samsa_st_node *sides[2];
    sides[0] = st_dsl_node_with(t, "KTABLE-JOINTHIS", &join_processor, lop, &left->node, 1);
    sides[1] = st_dsl_node_with(t, "KTABLE-JOINOTHER", &join_processor, rop, &right->node, 1);
    if (sides[0] == NULL || sides[1] == NULL ||
        st_store_connect(t, right->store, sides[0]) != SAMSA_OK ||
        st_store_connect(t, left->store, sides[1]) != SAMSA_OK) {
        return NULL;
    }
    return st_dsl_table(t, st_dsl_node(t, "KTABLE-MERGE", st_dsl_op(t, OP_PASS), sides, 2), NULL);
}
