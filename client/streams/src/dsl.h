/*
 * The DSL's internals, shared by dsl.c (the stateless operations and the
 * aggregations), join.c (joins) and session.c (session windows and
 * suppress): the handles the DSL hands out, and struct op, the
 * configuration of one DSL processor node (its state: every task runs the
 * same op).
 */
#ifndef SAMSA_STREAMS_DSL_H
#define SAMSA_STREAMS_DSL_H

#include "internal.h"

struct samsa_st_stream {
    samsa_st_topology *t;
    samsa_st_node *node;
    bool key_changed; /* map / flat_map / select_key ran: grouping or a join must repartition */
};

enum st_window_kind { ST_UNWINDOWED, ST_TIME_WINDOWS, ST_SESSION_WINDOWS };

struct samsa_st_grouped {
    samsa_st_topology *t;
    samsa_st_node *node;
    enum st_window_kind window_kind;
    struct samsa_st_windows windows;
    struct samsa_st_session_windows session;
    const struct samsa_st_processor *proc; /* the aggregation's; NULL: dsl.c's */
};

struct samsa_st_table {
    samsa_st_topology *t;
    samsa_st_node *node;
    const char *store; /* the key-value store holding it; NULL: not materialized */
    enum st_window_kind window_kind;
    int64_t size_ms;        /* time windows: their size */
    int64_t close_after_ms; /* a window is final this long of stream time after its end */
};

enum op_kind {
    OP_FILTER,
    OP_FILTER_NOT,
    OP_MAP,
    OP_MAP_VALUES,
    OP_SELECT_KEY,
    OP_FLAT_MAP,
    OP_PEEK,
    OP_BRANCH,
    OP_PASS,
    OP_AGGREGATE,
    OP_TABLE_SOURCE,
    OP_JOIN_TABLE,  /* stream-table */
    OP_JOIN_WINDOW, /* stream-stream: keeps one side's records */
    OP_JOIN_STREAM, /* stream-stream: joins one side against the other's */
    OP_JOIN_TABLES, /* table-table, one side's updates */
    OP_SESSION,     /* session-windowed aggregation */
    OP_SUPPRESS,    /* until the window closes */
};

enum agg_kind { AGG_COUNT, AGG_REDUCE, AGG_AGGREGATE };

struct op {
    enum op_kind kind;
    void *opaque;
    samsa_st_predicate *pred;
    samsa_st_mapper *mapper;
    samsa_st_action *action;
    /* branch */
    samsa_st_predicate *const *preds;
    void *const *pred_opaques;
    size_t pred_count;
    /* aggregations and tables */
    enum agg_kind agg;
    samsa_st_reducer *reducer;
    samsa_st_aggregator *aggregator;
    const char *store;
    bool windowed;
    struct samsa_st_windows windows;
    struct samsa_st_session_windows session;
    /* joins: the other side's store; reversed: this node is the right side
     * (the joiner gets its arguments swapped) */
    samsa_st_joiner *joiner;
    enum samsa_st_join_kind join_kind;
    const char *other_store;
    bool reversed;
    bool outer;        /* stream-stream: emit (value, null) when no partner */
    int64_t before_ms; /* stream-stream: the other side's window around t */
    int64_t after_ms;
    int64_t retention_ms; /* stream-stream: how long a record is kept */
    /* suppress: a window is final once end + close_after_ms <= stream time */
    enum st_window_kind window_kind;
    int64_t size_ms;
    int64_t close_after_ms;
};

struct samsa_st_emitter {
    samsa_st_context *ctx;
    const struct samsa_st_record *in;
    enum op_kind kind;
    /* aggregations and joins: the new value, copied (the application's
     * buffer may be gone once its callback returned, and the old aggregate
     * it may point into is freed by the store's put) */
    struct samsa_st_bytes *result;
    uint8_t small[64];
    uint8_t *heap;
    bool emitted;
};

/* Frees what samsa_st_emit copied into e and makes e ready for another call. */
void st_emitter_done(samsa_st_emitter *e);

/* A new op of kind, owned by t (NULL: no memory, t's error set). */
struct op *st_dsl_op(samsa_st_topology *t, enum op_kind kind);
/* A processor node running op below parents, named "KSTREAM-<kind>-<n>":
 * st_dsl_node with dsl.c's processor (the stateless operations and the
 * time-windowed aggregations), st_dsl_node_with with proc (join.c's and
 * session.c's, so that they use dsl.c and not the other way round). */
samsa_st_node *st_dsl_node(samsa_st_topology *t, const char *kind, struct op *op,
                           samsa_st_node *const *parents, size_t count);
samsa_st_node *st_dsl_node_with(samsa_st_topology *t, const char *kind,
                                const struct samsa_st_processor *proc, struct op *op,
                                samsa_st_node *const *parents, size_t count);
/* A stream handle on node (NULL node: NULL). */
samsa_st_stream *st_dsl_stream(samsa_st_topology *t, samsa_st_node *node, bool key_changed);
/* A table handle on node, materialized in store (NULL: not). */
samsa_st_table *st_dsl_table(samsa_st_topology *t, samsa_st_node *node, const char *store);
/* A late record of a windowed aggregation: to cb when set, to the
 * dead-letter topic when set (with a header samsa.late naming op's store). */
SAMSA_MUST_CHECK int st_dsl_late(samsa_st_context *ctx, const struct op *op,
                                 const struct samsa_st_record *rec, samsa_st_action *cb,
                                 void *opaque, const char *topic);
/* A copy of s owned by t. */
char *st_dsl_strdup(samsa_st_topology *t, const char *s);

/* The new aggregate of rec given the old one (data NULL: none) in *out,
 * copied into e (st_emitter_done frees it). */
SAMSA_MUST_CHECK int st_aggregate_one(const struct op *op, samsa_st_emitter *e,
                                      const struct samsa_st_record *rec, struct samsa_st_bytes old,
                                      struct samsa_st_bytes *out);

/* The store of an aggregation in *out, or NULL with SAMSA_OK when rec is
 * skipped (a null key or value), NULL with SAMSA_ERR_STATE when the task
 * lacks the store. */
SAMSA_MUST_CHECK int st_aggregation_store(samsa_st_context *ctx, const struct op *op,
                                          const struct samsa_st_record *rec, samsa_st_store **out);

#endif
