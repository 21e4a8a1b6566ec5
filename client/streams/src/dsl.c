/*
 * The DSL, built on the processor API: each operation adds processor nodes
 * whose state is the operation's configuration (struct op). Semantics follow
 * Kafka Streams (2.0's kstream/internals/KStreamFilter.java, KStreamMap.java,
 * KStreamMapValues.java, KStreamFlatMap.java, KStreamPeek.java,
 * KStreamBranch.java, KStreamAggregate.java, KStreamReduce.java,
 * KStreamWindowAggregate.java with 2.1's grace period, KTableSource.java).
 */
#include "dsl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int samsa_st_emit(samsa_st_emitter *e, struct samsa_st_bytes key, struct samsa_st_bytes value)
{
    if (e->result != NULL) {
        if (e->emitted) {
            return SAMSA_ERR_INVALID_ARG; /* one aggregate per call */
        }
        uint8_t *copy = e->small;
        if (value.len > sizeof e->small) {
            copy = e->heap = malloc(value.len);
            if (copy == NULL) {
                return SAMSA_ERR_NOMEM;
            }
        }
        if (value.len > 0) {
            memcpy(copy, value.data, value.len);
        }
        e->result->data = value.data != NULL ? copy : NULL;
        e->result->len = value.len;
        e->emitted = true;
        return SAMSA_OK;
    }
    if (e->kind != OP_FLAT_MAP && e->emitted) {
        return SAMSA_ERR_INVALID_ARG; /* map and map_values emit exactly one */
    }
    e->emitted = true;
    struct samsa_st_record r = {e->kind == OP_MAP_VALUES ? e->in->key : key,
                                e->kind == OP_SELECT_KEY ? e->in->value : value,
                                e->in->timestamp};
    return samsa_st_forward(e->ctx, &r);
}

int st_dsl_late(samsa_st_context *ctx, const struct op *op, const struct samsa_st_record *rec,
                samsa_st_action *cb, void *opaque, const char *topic)
{
    if (cb != NULL) {
        cb(rec, opaque);
    }
    if (topic == NULL) {
        return SAMSA_OK;
    }
    const char *store = op->store != NULL ? op->store : "";
    struct samsa_header h = {"samsa.late", store, strlen(store)};
    struct st_task *task = ctx->task;
    return task->out.send(task->out.opaque, topic, -1, rec->key, rec->value, rec->timestamp, &h,
                          1, NULL);
}

static uint64_t *dropped_counter(samsa_st_context *ctx)
{
    return &ctx->task->dropped_late;
}

/* The new aggregate of rec given the old one (data NULL: none) in *out:
 * count's in out's own buffer, the others copied by samsa_st_emit into e,
 * which the caller frees (st_emitter_done) once the aggregate is stored. */
int st_aggregate_one(const struct op *op, samsa_st_emitter *e, const struct samsa_st_record *rec,
                     struct samsa_st_bytes old, struct samsa_st_bytes *out)
{
    e->result = out;
    switch (op->agg) {
    case AGG_COUNT: {
        int64_t n = 0;
        if (old.data != NULL && !samsa_st_long_decode(old, &n)) {
            return SAMSA_ERR_INVALID_ARG;
        }
        uint8_t b[8];
        samsa_st_long_encode(n + 1, b);
        struct samsa_st_bytes v = {b, 8};
        return samsa_st_emit(e, v, v);
    }
    case AGG_REDUCE: {
        if (old.data == NULL) {
            return samsa_st_emit(e, rec->key, rec->value);
        }
        int err = op->reducer(old, rec->value, e, op->opaque);
        return err == SAMSA_OK && !e->emitted ? SAMSA_ERR_INVALID_ARG : err;
    }
    case AGG_AGGREGATE: {
        int err = op->aggregator(rec, old, e, op->opaque);
        return err == SAMSA_OK && !e->emitted ? SAMSA_ERR_INVALID_ARG : err;
    }
    }
    return SAMSA_ERR_INVALID_ARG;
}

void st_emitter_done(samsa_st_emitter *e)
{
    free(e->heap);
    e->heap = NULL;
    e->emitted = false;
}

/* Stores the new aggregate and forwards it (windowed: under the windowed
 * key). */
static int store_and_forward(samsa_st_context *ctx, const struct op *op, samsa_st_store *s,
                             const struct samsa_st_record *rec, int64_t window_start,
                             struct samsa_st_bytes value)
{
    int err;
    struct samsa_st_record out = {rec->key, value, rec->timestamp};
    uint8_t *wkey = NULL;
    if (op->windowed) {
        err = samsa_st_window_put(s, rec->key, window_start, value);
        wkey = malloc(rec->key.len + 8);
        if (err == SAMSA_OK && wkey == NULL) {
            err = SAMSA_ERR_NOMEM;
        }
        if (err == SAMSA_OK) {
            if (rec->key.len > 0) {
                memcpy(wkey, rec->key.data, rec->key.len);
            }
            st_put_be64(wkey + rec->key.len, (uint64_t)window_start);
            out.key.data = wkey;
            out.key.len = rec->key.len + 8;
        }
    } else {
        err = samsa_st_kv_put(s, rec->key, value);
    }
    if (err == SAMSA_OK) {
        err = samsa_st_forward(ctx, &out);
    }
    free(wkey);
    return err;
}

int st_aggregation_store(samsa_st_context *ctx, const struct op *op,
                         const struct samsa_st_record *rec, samsa_st_store **out)
{
    *out = NULL;
    /* Kafka skips records with a null key or value in aggregations
     * (KStreamAggregate.process, "Skipping record due to null key or value") */
    if (rec->key.data == NULL || rec->value.data == NULL) {
        return SAMSA_OK;
    }
    *out = samsa_st_context_store(ctx, op->store);
    return *out != NULL ? SAMSA_OK : SAMSA_ERR_STATE;
}

static int aggregate_process(samsa_st_context *ctx, const struct op *op,
                             const struct samsa_st_record *rec)
{
    samsa_st_store *s = NULL;
    int serr = st_aggregation_store(ctx, op, rec, &s);
    if (s == NULL) {
        return serr;
    }
    samsa_st_emitter e = {.ctx = ctx, .in = rec, .kind = OP_AGGREGATE};
    if (!op->windowed) {
        struct samsa_st_bytes old;
        struct samsa_st_bytes agg = {NULL, 0};
        (void)samsa_st_kv_get(s, rec->key, &old);
        int err = st_aggregate_one(op, &e, rec, old, &agg);
        if (err == SAMSA_OK) {
            err = store_and_forward(ctx, op, s, rec, 0, agg);
        }
        st_emitter_done(&e);
        return err;
    }
    /* TimeWindows.windowsFor (Kafka 2.0): every window [start, start + size)
     * with start a multiple of advance and start <= ts < start + size */
    const struct samsa_st_windows *w = &op->windows;
    int64_t ts = rec->timestamp;
    int64_t first = ts - w->size_ms + w->advance_ms;
    if (first < 0) {
        first = 0;
    }
    first = first / w->advance_ms * w->advance_ms;
    int64_t close = samsa_st_context_stream_time(ctx) - w->grace_ms;
    bool late = false;
    for (int64_t start = first; start <= ts; start += w->advance_ms) {
        if (start + w->size_ms <= close) {
            /* KStreamWindowAggregate (2.1): windowEnd > closeTime or the
             * record is dropped for that window, counted by the
             * late-record-drop sensor once per window */
            (*dropped_counter(ctx))++;
            late = true;
            continue;
        }
        struct samsa_st_bytes old;
        struct samsa_st_bytes agg = {NULL, 0};
        (void)samsa_st_window_get(s, rec->key, start, &old);
        int err = st_aggregate_one(op, &e, rec, old, &agg);
        if (err == SAMSA_OK) {
            err = store_and_forward(ctx, op, s, rec, start, agg);
        }
        st_emitter_done(&e);
        if (err != SAMSA_OK) {
            return err;
        }
    }
    return late ? st_dsl_late(ctx, op, rec, w->late_cb, w->late_opaque, w->late_topic)
                : SAMSA_OK;
}

static int op_process(samsa_st_context *ctx, const struct samsa_st_record *rec, void *state)
{
    const struct op *op = state;
    switch (op->kind) {
    case OP_FILTER:
        return op->pred(rec, op->opaque) ? samsa_st_forward(ctx, rec) : SAMSA_OK;
    case OP_FILTER_NOT:
        return op->pred(rec, op->opaque) ? SAMSA_OK : samsa_st_forward(ctx, rec);
    case OP_MAP:
    case OP_MAP_VALUES:
    case OP_SELECT_KEY:
    case OP_FLAT_MAP: {
        samsa_st_emitter e = {.ctx = ctx, .in = rec, .kind = op->kind};
        int err = op->mapper(rec, &e, op->opaque);
        if (err == SAMSA_OK && op->kind != OP_FLAT_MAP && !e.emitted) {
            err = SAMSA_ERR_INVALID_ARG;
        }
        return err;
    }
    case OP_PEEK:
        op->action(rec, op->opaque);
        return samsa_st_forward(ctx, rec);
    case OP_BRANCH:
        for (size_t i = 0; i < op->pred_count; i++) {
            if (op->preds[i](rec, op->pred_opaques != NULL ? op->pred_opaques[i] : NULL)) {
                return samsa_st_forward_to(ctx, i, rec);
            }
        }
        return SAMSA_OK;
    case OP_PASS:
        return samsa_st_forward(ctx, rec);
    case OP_AGGREGATE:
        return aggregate_process(ctx, op, rec);
    case OP_TABLE_SOURCE: {
        /* KTableSource: a null key cannot be stored; skipped */
        if (rec->key.data == NULL) {
            return SAMSA_OK;
        }
        samsa_st_store *s = samsa_st_context_store(ctx, op->store);
        if (s == NULL) {
            return SAMSA_ERR_STATE;
        }
        int err = samsa_st_kv_put(s, rec->key, rec->value);
        return err == SAMSA_OK ? samsa_st_forward(ctx, rec) : err;
    }
    case OP_JOIN_TABLE:
    case OP_JOIN_WINDOW:
    case OP_JOIN_STREAM:
    case OP_JOIN_TABLES:
    case OP_SESSION:
    case OP_SUPPRESS:
        break; /* nodes of join.c and session.c, which run processors of their own */
    }
    return SAMSA_ERR_INVALID_ARG;
}

static const struct samsa_st_processor op_processor = {NULL, NULL, op_process, NULL};

/* A unique node name: "KSTREAM-<KIND>-<index>", as Kafka numbers its nodes. */
static void node_name(samsa_st_topology *t, const char *kind, char *buf, size_t size)
{
    (void)snprintf(buf, size, "KSTREAM-%s-%010zu", kind, t->node_count);
}

struct op *st_dsl_op(samsa_st_topology *t, enum op_kind kind)
{
    struct op *op = st_own(t, calloc(1, sizeof(struct op)));
    if (op != NULL) {
        op->kind = kind;
    }
    return op;
}

samsa_st_node *st_dsl_node_with(samsa_st_topology *t, const char *kind,
                                const struct samsa_st_processor *proc, struct op *op,
                                samsa_st_node *const *parents, size_t count)
{
    char name[64];
    if (op == NULL) {
        return NULL;
    }
    node_name(t, kind, name, sizeof name);
    return samsa_st_add_processor(t, name, proc, op, parents, count);
}

samsa_st_node *st_dsl_node(samsa_st_topology *t, const char *kind, struct op *op,
                           samsa_st_node *const *parents, size_t count)
{
    return st_dsl_node_with(t, kind, &op_processor, op, parents, count);
}

samsa_st_stream *st_dsl_stream(samsa_st_topology *t, samsa_st_node *node, bool key_changed)
{
    if (node == NULL) {
        return NULL;
    }
    samsa_st_stream *s = st_own(t, calloc(1, sizeof *s));
    if (s != NULL) {
        s->t = t;
        s->node = node;
        s->key_changed = key_changed;
    }
    return s;
}

samsa_st_table *st_dsl_table(samsa_st_topology *t, samsa_st_node *node, const char *store)
{
    if (node == NULL) {
        return NULL;
    }
    samsa_st_table *tb = st_own(t, calloc(1, sizeof *tb));
    if (tb != NULL) {
        tb->t = t;
        tb->node = node;
        tb->store = store;
    }
    return tb;
}

char *st_dsl_strdup(samsa_st_topology *t, const char *s)
{
    return st_own(t, st_strdup(s));
}

samsa_st_stream *samsa_st_stream_from(samsa_st_topology *t, const char *const *topics,
                                      size_t count)
{
    char name[64];
    if (t == NULL) {
        return NULL;
    }
    node_name(t, "SOURCE", name, sizeof name);
    return st_dsl_stream(t, samsa_st_add_source(t, name, topics, count), false);
}

/* A processor node below s running a copy of tmpl (its kind, callbacks and
 * opaque); the copy is returned in *opp when opp is not NULL. */
static samsa_st_stream *unary(samsa_st_stream *s, const struct op *tmpl, const char *name,
                              struct op **opp)
{
    if (s == NULL || s->t->err != SAMSA_OK) {
        return NULL;
    }
    struct op *op = st_dsl_op(s->t, tmpl->kind);
    if (op == NULL) {
        return NULL;
    }
    *op = *tmpl;
    if (opp != NULL) {
        *opp = op;
    }
    bool changed = s->key_changed || tmpl->kind == OP_MAP || tmpl->kind == OP_FLAT_MAP ||
                   tmpl->kind == OP_SELECT_KEY;
    return st_dsl_stream(s->t, st_dsl_node(s->t, name, op, &s->node, 1), changed);
}

samsa_st_stream *samsa_st_filter(samsa_st_stream *s, samsa_st_predicate *pred, void *opaque)
{
    return unary(s, &(struct op){.kind = OP_FILTER, .pred = pred, .opaque = opaque}, "FILTER",
                 NULL);
}

samsa_st_stream *samsa_st_filter_not(samsa_st_stream *s, samsa_st_predicate *pred, void *opaque)
{
    return unary(s, &(struct op){.kind = OP_FILTER_NOT, .pred = pred, .opaque = opaque},
                 "FILTER", NULL);
}

samsa_st_stream *samsa_st_map(samsa_st_stream *s, samsa_st_mapper *fn, void *opaque)
{
    return unary(s, &(struct op){.kind = OP_MAP, .mapper = fn, .opaque = opaque}, "MAP", NULL);
}

samsa_st_stream *samsa_st_map_values(samsa_st_stream *s, samsa_st_mapper *fn, void *opaque)
{
    return unary(s, &(struct op){.kind = OP_MAP_VALUES, .mapper = fn, .opaque = opaque},
                 "MAPVALUES", NULL);
}

samsa_st_stream *samsa_st_flat_map(samsa_st_stream *s, samsa_st_mapper *fn, void *opaque)
{
    return unary(s, &(struct op){.kind = OP_FLAT_MAP, .mapper = fn, .opaque = opaque},
                 "FLATMAP", NULL);
}

samsa_st_stream *samsa_st_select_key(samsa_st_stream *s, samsa_st_mapper *fn, void *opaque)
{
    return unary(s, &(struct op){.kind = OP_SELECT_KEY, .mapper = fn, .opaque = opaque},
                 "KEY-SELECT", NULL);
}

samsa_st_stream *samsa_st_peek(samsa_st_stream *s, samsa_st_action *fn, void *opaque)
{
    return unary(s, &(struct op){.kind = OP_PEEK, .action = fn, .opaque = opaque}, "PEEK",
                 NULL);
}

int samsa_st_branch(samsa_st_stream *s, samsa_st_predicate *const *preds,
                    void *const *opaques, size_t count, samsa_st_stream **out)
{
    if (s == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    if (count == 0 || preds == NULL || out == NULL) {
        return st_fail(s->t, SAMSA_ERR_INVALID_ARG, "branch needs predicates");
    }
    struct op tmpl = {
        .kind = OP_BRANCH, .preds = preds, .pred_opaques = opaques, .pred_count = count};
    samsa_st_stream *b = unary(s, &tmpl, "BRANCH", NULL);
    if (b == NULL) {
        return s->t->err;
    }
    for (size_t i = 0; i < count; i++) {
        out[i] = unary(b, &(struct op){.kind = OP_PASS}, "BRANCHCHILD", NULL);
        if (out[i] == NULL) {
            return s->t->err;
        }
    }
    return SAMSA_OK;
}

samsa_st_stream *samsa_st_merge(samsa_st_stream *a, samsa_st_stream *b)
{
    if (a == NULL || b == NULL || a->t != b->t || a->t->err != SAMSA_OK) {
        return NULL;
    }
    samsa_st_node *parents[2] = {a->node, b->node};
    return st_dsl_stream(a->t, st_dsl_node(a->t, "MERGE", st_dsl_op(a->t, OP_PASS), parents, 2),
                       a->key_changed || b->key_changed);
}

int samsa_st_to(samsa_st_stream *s, const char *topic)
{
    char name[64];
    if (s == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    node_name(s->t, "SINK", name, sizeof name);
    return samsa_st_add_sink(s->t, name, topic, s->node) != NULL ? SAMSA_OK : s->t->err;
}

/* KStreamImpl.repartitionIfRequired: a sink to the repartition topic and a
 * source reading it, in a sub-topology of its own. */
static samsa_st_node *through_repartition(samsa_st_topology *t, samsa_st_node *node,
                                          const char *name, const char *what)
{
    if (name == NULL) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG, "%s needs a repartition topic name", what);
        return NULL;
    }
    char nm[64];
    node_name(t, "SINK", nm, sizeof nm);
    samsa_st_node *sink = samsa_st_add_sink(t, nm, name, node);
    if (sink == NULL) {
        return NULL;
    }
    sink->internal = true;
    node_name(t, "SOURCE", nm, sizeof nm);
    samsa_st_node *source = samsa_st_add_source(t, nm, &name, 1);
    if (source != NULL) {
        source->internal = true;
    }
    return source;
}

samsa_st_stream *samsa_st_repartition(samsa_st_stream *s, const char *name)
{
    if (s == NULL || s->t->err != SAMSA_OK) {
        return NULL;
    }
    return st_dsl_stream(s->t, through_repartition(s->t, s->node, name, "repartition"), false);
}

samsa_st_grouped *samsa_st_group_by_key(samsa_st_stream *s, const char *name)
{
    if (s == NULL || s->t->err != SAMSA_OK) {
        return NULL;
    }
    samsa_st_topology *t = s->t;
    samsa_st_node *node =
        s->key_changed ? through_repartition(t, s->node, name, "group_by_key after a key change")
                       : s->node;
    if (node == NULL) {
        return NULL;
    }
    samsa_st_grouped *g = st_own(t, calloc(1, sizeof *g));
    if (g != NULL) {
        g->t = t;
        g->node = node;
    }
    return g;
}

samsa_st_grouped *samsa_st_group_by(samsa_st_stream *s, samsa_st_mapper *fn, void *opaque,
                                    const char *name)
{
    return samsa_st_group_by_key(samsa_st_select_key(s, fn, opaque), name);
}

samsa_st_grouped *samsa_st_windowed_by(samsa_st_grouped *g, const struct samsa_st_windows *w)
{
    if (g == NULL || g->t->err != SAMSA_OK) {
        return NULL;
    }
    if (w == NULL || w->size_ms <= 0 || w->advance_ms <= 0 || w->advance_ms > w->size_ms ||
        w->grace_ms < 0) {
        (void)st_fail(g->t, SAMSA_ERR_INVALID_ARG,
                      "windows need 0 < advance <= size and grace >= 0");
        return NULL;
    }
    samsa_st_grouped *wg = st_own(g->t, calloc(1, sizeof *wg));
    if (wg != NULL) {
        *wg = *g;
        wg->window_kind = ST_TIME_WINDOWS;
        wg->windows = *w;
        wg->windows.late_topic = st_late_topic(g->t, w->late_topic);
    }
    return g->t->err == SAMSA_OK ? wg : NULL;
}

/* An aggregation node running a copy of tmpl over g, with its store. */
static samsa_st_table *aggregation(samsa_st_grouped *g, const struct op *tmpl, const char *store)
{
    if (g == NULL || g->t->err != SAMSA_OK) {
        return NULL;
    }
    samsa_st_topology *t = g->t;
    if (store == NULL) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG, "an aggregation needs a store name");
        return NULL;
    }
    if (g->window_kind == ST_SESSION_WINDOWS && tmpl->agg == AGG_AGGREGATE &&
        g->session.merger == NULL) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG,
                      "a session-windowed aggregate needs a merger (samsa_st_session_windows)");
        return NULL;
    }
    struct op *op = st_dsl_op(t, OP_AGGREGATE);
    char *store_copy = st_own(t, st_strdup(store));
    if (op == NULL || store_copy == NULL) {
        return NULL;
    }
    *op = *tmpl;
    op->kind = g->window_kind == ST_SESSION_WINDOWS ? OP_SESSION : OP_AGGREGATE;
    op->store = store_copy;
    op->windowed = g->window_kind == ST_TIME_WINDOWS;
    op->windows = g->windows;
    op->session = g->session;
    samsa_st_node *n =
        st_dsl_node_with(t, "AGGREGATE", g->proc != NULL ? g->proc : &op_processor, op,
                         &g->node, 1);
    if (n == NULL) {
        return NULL;
    }
    int err = op->windowed ? samsa_st_add_window_store(t, store,
                                                      g->windows.size_ms + g->windows.grace_ms, n)
                          : samsa_st_add_kv_store(t, store, n);
    if (err != SAMSA_OK) {
        return NULL;
    }
    samsa_st_table *tb = st_dsl_table(t, n, store_copy);
    if (tb != NULL) {
        tb->window_kind = g->window_kind;
        tb->size_ms = g->windows.size_ms;
        /* a session is final once no record can extend it any more */
        tb->close_after_ms = g->window_kind == ST_SESSION_WINDOWS
                                 ? g->session.gap_ms + g->session.grace_ms
                                 : g->windows.grace_ms;
    }
    return tb;
}

samsa_st_table *samsa_st_count(samsa_st_grouped *g, const char *store)
{
    return aggregation(g, &(struct op){.agg = AGG_COUNT}, store);
}

samsa_st_table *samsa_st_reduce(samsa_st_grouped *g, samsa_st_reducer *fn, void *opaque,
                                const char *store)
{
    return aggregation(g, &(struct op){.agg = AGG_REDUCE, .reducer = fn, .opaque = opaque},
                       store);
}

samsa_st_table *samsa_st_aggregate(samsa_st_grouped *g, samsa_st_aggregator *fn, void *opaque,
                                   const char *store)
{
    return aggregation(g, &(struct op){.agg = AGG_AGGREGATE, .aggregator = fn, .opaque = opaque},
                       store);
}

samsa_st_table *samsa_st_table_from(samsa_st_topology *t, const char *topic, const char *store)
{
    samsa_st_stream *s = samsa_st_stream_from(t, &topic, 1);
    if (s == NULL) {
        return NULL;
    }
    if (store == NULL) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG, "a table needs a store name");
        return NULL;
    }
    struct op *op = NULL;
    samsa_st_stream *src = unary(s, &(struct op){.kind = OP_TABLE_SOURCE}, "KTABLE-SOURCE", &op);
    char *store_copy = st_own(t, st_strdup(store));
    if (src == NULL || store_copy == NULL) {
        return NULL;
    }
    op->store = store_copy;
    if (samsa_st_add_kv_store(t, store, src->node) != SAMSA_OK) {
        return NULL;
    }
    return st_dsl_table(t, src->node, store_copy);
}

samsa_st_stream *samsa_st_to_stream(samsa_st_table *tb)
{
    if (tb == NULL || tb->t->err != SAMSA_OK) {
        return NULL;
    }
    return st_dsl_stream(tb->t, tb->node, false);
}
