/*
 * libsamsa-streams: stream processing over Kafka topics, on libsamsa.
 *
 * Two layers, as Kafka Streams has them:
 *   the processor API   a node per record callback, with a context to forward
 *                       records to its children, reach state stores and
 *                       schedule punctuations on stream time or wall-clock time;
 *   the DSL             filter, map, flat_map, select_key, branch, merge, to,
 *                       repartition, group_by_key/group_by, count/reduce/
 *                       aggregate, tumbling, hopping and session windows,
 *                       suppress until windows close, tables, stream-table,
 *                       stream-stream and table-table joins, built on the
 *                       processor API.
 *
 * A topology is built once and then run by either
 *   samsa_st_app      the runtime: a consumer-group member (group.id =
 *                     application.id), one task per input partition,
 *                     at-least-once (input offsets committed only after the
 *                     outputs and changelog writes they caused are
 *                     acknowledged); or
 *   samsa_st_driver   the test driver: no broker, records fed with their
 *                     timestamps, time advanced by hand, outputs read back
 *                     (Kafka's TopologyTestDriver).
 *
 * Keys and values are byte views (struct samsa_st_bytes). The built-in
 * serdes write Java's formats (Kafka's Serdes.String/Long/Integer/Double), so
 * a Java or kcat consumer reads what a topology writes.
 *
 * Errors: functions that can fail return SAMSA_OK (0) or an error of
 * samsa/samsa.h. Building a topology keeps its first error (SQLite's sticky
 * error): a DSL call on a NULL stream or a failed topology returns NULL, and
 * samsa_st_topology_error() says what failed first.
 *
 * A topology is run by one app or one driver at a time (starting one names
 * the topology's internal topics after its application id).
 *
 * Threads: a topology, an app and a driver belong to one thread at a time;
 * every callback runs on the thread that calls samsa_st_app_poll/_run or a
 * samsa_st_driver_* function. An app with LMDB stores keeps their write
 * transactions open on its thread from one commit to the next: hand it to
 * another thread (samsa_st_app_destroy included) only after a commit on its
 * own (samsa_st_app_run commits when it returns). The one call made for
 * other threads is samsa_st_app_query.
 */
#ifndef SAMSA_STREAMS_H
#define SAMSA_STREAMS_H

#include <samsa/samsa.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ byte views */

/* A key or value: data NULL means null (a tombstone as a value). Borrowed:
 * valid for the duration of the callback that received it. */
struct samsa_st_bytes {
    const void *data;
    size_t len;
};

/* A record flowing through a topology. Borrowed by every callback. */
struct samsa_st_record {
    struct samsa_st_bytes key;
    struct samsa_st_bytes value;
    int64_t timestamp; /* ms since the epoch */
};

/* ------------------------------------------------------------------ serdes */

/*
 * A serde converts one C value to and from bytes. serialize writes at most
 * cap bytes into buf and returns the length the value needs (a call with a
 * smaller cap writes nothing useful and may be repeated with a bigger buf);
 * deserialize reads bytes into *out and returns SAMSA_OK or
 * SAMSA_ERR_INVALID_ARG when the bytes are not a value of this serde.
 */
struct samsa_st_serde {
    const char *name;
    size_t (*serialize)(const void *value, void *buf, size_t cap);
    int (*deserialize)(struct samsa_st_bytes bytes, void *out);
};

/* Java's formats: string = UTF-8 bytes as given (value: const char *, NUL
 * terminated; out: struct samsa_st_bytes); long = int64_t big-endian 8 bytes;
 * int = int32_t big-endian 4 bytes; double = IEEE 754 binary64 big-endian. */
extern const struct samsa_st_serde samsa_st_serde_string;
extern const struct samsa_st_serde samsa_st_serde_long;
extern const struct samsa_st_serde samsa_st_serde_int;
extern const struct samsa_st_serde samsa_st_serde_double;

/* Shorthands of the serdes above. The _decode ones return false (and leave
 * *out alone) when the bytes do not have the format's length. */
void samsa_st_long_encode(int64_t v, uint8_t out[8]);
bool samsa_st_long_decode(struct samsa_st_bytes b, int64_t *out);
void samsa_st_int_encode(int32_t v, uint8_t out[4]);
bool samsa_st_int_decode(struct samsa_st_bytes b, int32_t *out);
void samsa_st_double_encode(double v, uint8_t out[8]);
bool samsa_st_double_decode(struct samsa_st_bytes b, double *out);
/* A byte view of a NUL-terminated string (NULL: a null view). */
struct samsa_st_bytes samsa_st_str(const char *s);

/*
 * A windowed key as Java's TimeWindowedSerializer writes it
 * (WindowedSerdes.TimeWindowedSerde, Kafka 2.0: the key's bytes, then the
 * window start as a big-endian long). Windowed aggregations emit keys in this
 * format. _split returns false when b is shorter than 8 bytes.
 */
bool samsa_st_windowed_key_split(struct samsa_st_bytes b, struct samsa_st_bytes *key,
                                 int64_t *window_start);

/* ---------------------------------------------------------------- stores */

/*
 * A state store, reached from a processor with samsa_st_context_store().
 * Key-value stores map keys to values; window stores map (key, window start)
 * to values and forget windows older than their retention. Every store is
 * backed by a compacted changelog topic named
 * "<application.id>-<store name>-changelog" (as Kafka Streams names it),
 * written on each put and replayed into the store when its task starts.
 */
typedef struct samsa_st_store samsa_st_store;

/* The value of key in *value (data NULL when absent), borrowed until the
 * next call on the store. Returns true when present. */
bool samsa_st_kv_get(samsa_st_store *s, struct samsa_st_bytes key, struct samsa_st_bytes *value);
/* Sets key to value (copied); a null value deletes. Logged to the changelog. */
SAMSA_MUST_CHECK int samsa_st_kv_put(samsa_st_store *s, struct samsa_st_bytes key,
                                     struct samsa_st_bytes value);
/* Calls fn for each entry (in no order) until fn returns false. The store must
 * not be written inside fn. */
void samsa_st_kv_each(samsa_st_store *s,
                      bool (*fn)(struct samsa_st_bytes key, struct samsa_st_bytes value,
                                 void *opaque),
                      void *opaque);
/* Entries in the store. */
size_t samsa_st_kv_count(samsa_st_store *s);

/* Window store: the same, addressed by (key, window start). */
bool samsa_st_window_get(samsa_st_store *s, struct samsa_st_bytes key, int64_t window_start,
                         struct samsa_st_bytes *value);
SAMSA_MUST_CHECK int samsa_st_window_put(samsa_st_store *s, struct samsa_st_bytes key,
                                         int64_t window_start, struct samsa_st_bytes value);

/* ------------------------------------------------------- processor API */

typedef struct samsa_st_topology samsa_st_topology;
typedef struct samsa_st_context samsa_st_context;

/* Kafka's PunctuationType. */
enum samsa_st_punctuation {
    SAMSA_ST_STREAM_TIME = 0, /* advanced by record timestamps */
    SAMSA_ST_WALL_CLOCK = 1,  /* advanced by the clock */
};

/*
 * A processor: a table of callbacks and one instance per task. create makes
 * the instance's state from the opaque given at samsa_st_add_processor (NULL
 * create: the state is that opaque); init runs once when the task starts
 * (schedule punctuations there); process runs for each record; destroy frees
 * the state. Any may be NULL but process. A non-zero return from init or
 * process stops the task with that error.
 */
struct samsa_st_processor {
    void *(*create)(void *opaque);
    int (*init)(samsa_st_context *ctx, void *state);
    int (*process)(samsa_st_context *ctx, const struct samsa_st_record *rec, void *state);
    void (*destroy)(void *state);
};

typedef void samsa_st_punctuator(samsa_st_context *ctx, int64_t timestamp, void *state);

/* Sends rec (borrowed) to every child of the current node, at once. */
SAMSA_MUST_CHECK int samsa_st_forward(samsa_st_context *ctx, const struct samsa_st_record *rec);
/* Sends rec to the child-th child only (in the order children were added). */
SAMSA_MUST_CHECK int samsa_st_forward_to(samsa_st_context *ctx, size_t child,
                                         const struct samsa_st_record *rec);
/* The task's store of that name, NULL if the topology has none. */
samsa_st_store *samsa_st_context_store(samsa_st_context *ctx, const char *name);
/* Calls cb(ctx, time, state) every interval_ms of stream or wall-clock time
 * (the first time when that time first reaches a multiple of interval_ms at
 * or after now; later ones skip missed intervals, as Kafka 2.0's
 * PunctuationSchedule does). Call from init. */
SAMSA_MUST_CHECK int samsa_st_schedule(samsa_st_context *ctx, int64_t interval_ms,
                                       enum samsa_st_punctuation type, samsa_st_punctuator *cb);
/* The task's stream time: the highest record timestamp it processed (-1 before any). */
int64_t samsa_st_context_stream_time(const samsa_st_context *ctx);
/* The task's partition (task i reads partition i of each of its topics). */
int32_t samsa_st_context_partition(const samsa_st_context *ctx);
/* The application.id. */
const char *samsa_st_context_application_id(const samsa_st_context *ctx);

/* An empty topology. Caller owns: samsa_st_topology_destroy. NULL: no memory. */
samsa_st_topology *samsa_st_topology_new(void);
void samsa_st_topology_destroy(samsa_st_topology *t);
/* The first error while building (SAMSA_OK if none), and its sentence. */
int samsa_st_topology_error(const samsa_st_topology *t, const char **message);

/* A node of the topology (owned by it). */
typedef struct samsa_st_node samsa_st_node;

/* A source reading topics[0..count) (names copied). */
samsa_st_node *samsa_st_add_source(samsa_st_topology *t, const char *name,
                                   const char *const *topics, size_t count);
/* A processor below parents[0..count) (proc and opaque borrowed for the
 * topology's life). */
samsa_st_node *samsa_st_add_processor(samsa_st_topology *t, const char *name,
                                      const struct samsa_st_processor *proc, void *opaque,
                                      samsa_st_node *const *parents, size_t count);
/* A sink writing what parent forwards to topic. */
samsa_st_node *samsa_st_add_sink(samsa_st_topology *t, const char *name, const char *topic,
                                 samsa_st_node *parent);
/* Stores, reachable by name from every processor of the task that reads the
 * same topics as node (its sub-topology). Window stores keep windows while
 * their start is within retention_ms of stream time. */
SAMSA_MUST_CHECK int samsa_st_add_kv_store(samsa_st_topology *t, const char *name,
                                           samsa_st_node *node);
SAMSA_MUST_CHECK int samsa_st_add_window_store(samsa_st_topology *t, const char *name,
                                               int64_t retention_ms, samsa_st_node *node);

/* ------------------------------------------------------------------ DSL */

typedef struct samsa_st_stream samsa_st_stream;   /* Kafka's KStream */
typedef struct samsa_st_grouped samsa_st_grouped; /* KGroupedStream, TimeWindowedKStream */
typedef struct samsa_st_table samsa_st_table;     /* KTable */

/* Where map, map_values and flat_map put their results (samsa_st_emit). */
typedef struct samsa_st_emitter samsa_st_emitter;
/* Emits one record with key and value (borrowed; the timestamp is the
 * input's). map_values ignores key and keeps the input's. */
SAMSA_MUST_CHECK int samsa_st_emit(samsa_st_emitter *e, struct samsa_st_bytes key,
                                   struct samsa_st_bytes value);

typedef bool samsa_st_predicate(const struct samsa_st_record *rec, void *opaque);
/* map: emit exactly one record; flat_map: any number; map_values: one. */
typedef int samsa_st_mapper(const struct samsa_st_record *rec, samsa_st_emitter *out,
                            void *opaque);
typedef void samsa_st_action(const struct samsa_st_record *rec, void *opaque);
/* reduce: emit (value) agg op value; aggregate: emit the new aggregate from
 * agg (data NULL: none yet) and the record. Exactly one samsa_st_emit per
 * call; its value is copied at once, so it may point into the callback's
 * own stack. Records with a null key or value are skipped, as Kafka's
 * KStreamAggregate skips them. */
typedef int samsa_st_reducer(struct samsa_st_bytes agg, struct samsa_st_bytes value,
                             samsa_st_emitter *out, void *opaque);
typedef int samsa_st_aggregator(const struct samsa_st_record *rec, struct samsa_st_bytes agg,
                                samsa_st_emitter *out, void *opaque);

/* Records of topics[0..count). */
samsa_st_stream *samsa_st_stream_from(samsa_st_topology *t, const char *const *topics,
                                      size_t count);
samsa_st_stream *samsa_st_filter(samsa_st_stream *s, samsa_st_predicate *pred, void *opaque);
samsa_st_stream *samsa_st_filter_not(samsa_st_stream *s, samsa_st_predicate *pred,
                                     void *opaque);
samsa_st_stream *samsa_st_map(samsa_st_stream *s, samsa_st_mapper *fn, void *opaque);
samsa_st_stream *samsa_st_map_values(samsa_st_stream *s, samsa_st_mapper *fn, void *opaque);
samsa_st_stream *samsa_st_flat_map(samsa_st_stream *s, samsa_st_mapper *fn, void *opaque);
samsa_st_stream *samsa_st_peek(samsa_st_stream *s, samsa_st_action *fn, void *opaque);
/* Kafka's branch: out[i] gets each record whose first true predicate is
 * preds[i]; a record no predicate accepts is dropped. Returns SAMSA_OK. */
SAMSA_MUST_CHECK int samsa_st_branch(samsa_st_stream *s, samsa_st_predicate *const *preds,
                                     void *const *opaques, size_t count, samsa_st_stream **out);
samsa_st_stream *samsa_st_merge(samsa_st_stream *a, samsa_st_stream *b);
/* Writes the stream to topic (partitioned by key as Java's producer does). */
SAMSA_MUST_CHECK int samsa_st_to(samsa_st_stream *s, const char *topic);

/* Kafka's selectKey: each record's key becomes the key fn emits (exactly
 * one samsa_st_emit; its value argument is ignored, the record keeps its
 * value). Like map, it marks the stream as re-keyed: a grouping repartitions
 * it, a join needs samsa_st_repartition first. */
samsa_st_stream *samsa_st_select_key(samsa_st_stream *s, samsa_st_mapper *fn, void *opaque);

/* Writes the stream to the repartition topic
 * "<application.id>-<name>-repartition" and reads it back (Kafka's through,
 * 2.6's repartition): each record lands in the partition of its key, as
 * Java's producer places it (murmur2), so the task of that partition sees
 * every record of the key. The runtime creates the topic: with the
 * partition count of the topics read with it (a join's table), else the
 * largest count of the topics that feed it (Kafka's
 * StreamsPartitionAssignor). name must be unique. */
samsa_st_stream *samsa_st_repartition(samsa_st_stream *s, const char *name);

/* Groups by the current key. After map, flat_map or select_key (a key that
 * may have changed) the records go through the repartition topic
 * "<application.id>-<name>-repartition" (samsa_st_repartition), so that each
 * key is counted by one task (Kafka's KStreamImpl.groupByKey). name names
 * that topic and must be unique. */
samsa_st_grouped *samsa_st_group_by_key(samsa_st_stream *s, const char *name);
/* Kafka's groupBy: select_key(fn) then group_by_key(name): always through
 * the repartition topic. */
samsa_st_grouped *samsa_st_group_by(samsa_st_stream *s, samsa_st_mapper *fn, void *opaque,
                                    const char *name);

/* Tumbling (advance_ms == size_ms) or hopping windows, epoch-aligned
 * [start, start + size), and a grace period: a record is added to a window
 * while window end > stream time - grace (Kafka 2.1's
 * KStreamWindowAggregate); otherwise it is late: dropped, counted, handed
 * to late_cb when set, and written as it reached the aggregation (its
 * grouped key, value and timestamp) to the dead-letter topic late_topic
 * when set (copied; the runtime creates it
 * when missing, with the largest partition count of the app's tasks), with
 * a header samsa.late naming the aggregation's store. */
struct samsa_st_windows {
    int64_t size_ms;
    int64_t advance_ms;
    int64_t grace_ms;
    samsa_st_action *late_cb;
    void *late_opaque;
    const char *late_topic;
};
samsa_st_grouped *samsa_st_windowed_by(samsa_st_grouped *g, const struct samsa_st_windows *w);

/* Session windows (Kafka's SessionWindows, KStreamSessionWindowAggregate as
 * of 2.3, KAFKA-8289): per key, records at most gap_ms apart form one
 * session [first, last] (both inclusive); a record within gap_ms of several
 * sessions merges them into one: each merged session is removed (a
 * tombstone under its windowed key is emitted) and the merged one emitted.
 * A record is added while the merged session's end >= stream time - grace;
 * otherwise it is late: dropped, counted, handed to late_cb when set.
 * Sessions are kept for max(gap + grace, one day) of stream time after
 * their end (Kafka's maintainMs default). count and reduce merge sessions
 * by themselves (a sum; the reducer); aggregate needs merger, which gets
 * two sessions' aggregates (Kafka's Merger). Session-windowed keys are
 * Java's SessionKeySchema.toBinary: the key, the end, the start (8 bytes
 * big-endian each). */
struct samsa_st_session_windows {
    int64_t gap_ms;
    int64_t grace_ms;
    samsa_st_reducer *merger;
    void *merger_opaque;
    samsa_st_action *late_cb;
    void *late_opaque;
    const char *late_topic; /* a dead-letter topic, as samsa_st_windows' */
};
samsa_st_grouped *samsa_st_session_windowed_by(samsa_st_grouped *g,
                                               const struct samsa_st_session_windows *w);
/* Splits a session-windowed key; false when b is shorter than 16 bytes. */
bool samsa_st_session_key_split(struct samsa_st_bytes b, struct samsa_st_bytes *key,
                                int64_t *start, int64_t *end);

/* Aggregations, materialized in store `store` (a window store when
 * windowed); the table's changes carry the new value on each update
 * (windowed: keys in samsa_st_windowed_key_split's format). count's values are
 * Java longs (samsa_st_long_decode). */
samsa_st_table *samsa_st_count(samsa_st_grouped *g, const char *store);
samsa_st_table *samsa_st_reduce(samsa_st_grouped *g, samsa_st_reducer *fn, void *opaque,
                                const char *store);
samsa_st_table *samsa_st_aggregate(samsa_st_grouped *g, samsa_st_aggregator *fn, void *opaque,
                                   const char *store);

/* Kafka's suppress(Suppressed.untilWindowCloses(unbounded())) (2.1,
 * KTableSuppressProcessor; sessions as 2.3 has them): the changes of a windowed aggregation are held
 * back, the latest per window, and each window's final value is emitted
 * once, when the window closes: a time window once end + grace <= stream
 * time, a session once end + gap + grace <= stream time (a later record
 * could still extend it until then); a session removed by a merge is not
 * emitted. The held changes live in the key-value store `name` (with its
 * changelog), so a restart keeps them. Records carry the timestamp of the
 * last update of their window. */
samsa_st_table *samsa_st_suppress_until_window_closes(samsa_st_table *tb, const char *name);

/* A table read from a topic (latest value per key; null deletes),
 * materialized in store. */
samsa_st_table *samsa_st_table_from(samsa_st_topology *t, const char *topic, const char *store);
/* The table's changes as a stream. */
samsa_st_stream *samsa_st_to_stream(samsa_st_table *tb);

/* ---------------------------------------------------------------- joins */

/* Kafka's join kinds: inner (both sides present), left (every left record
 * or row, the right one when there is one), outer (either side). */
enum samsa_st_join_kind {
    SAMSA_ST_JOIN_INNER = 0,
    SAMSA_ST_JOIN_LEFT = 1,
    SAMSA_ST_JOIN_OUTER = 2,
};

/* Kafka's ValueJoiner: emit the joined value (samsa_st_emit, exactly once;
 * the key argument is ignored) from the left and right values; a missing
 * side of a left or outer join is a null view (data NULL). The value is
 * copied at once. */
typedef int samsa_st_joiner(struct samsa_st_bytes left, struct samsa_st_bytes right,
                            samsa_st_emitter *out, void *opaque);

/* Stream-table join (KStreamKTableJoin, Kafka 2.0): each stream record with
 * a key and a value looks its key up in tb's store as it is when the record
 * is processed; inner emits only when the table has the key, left always
 * (right null when absent). Table updates emit nothing. kind OUTER is
 * refused. tb must be materialized (table_from or an aggregation) and both
 * inputs co-partitioned: same partition count (checked when the app
 * starts) and the same key placement. */
samsa_st_stream *samsa_st_join_table(samsa_st_stream *s, samsa_st_table *tb,
                                     enum samsa_st_join_kind kind, samsa_st_joiner *fn,
                                     void *opaque);

/* Kafka's JoinWindows: a left record at time t joins right records of the
 * same key with timestamps in [t - before_ms, t + after_ms] (both bounds
 * inclusive); records are kept for before + after + grace of stream time. */
struct samsa_st_join_windows {
    int64_t before_ms;
    int64_t after_ms;
    int64_t grace_ms;
};

/* Windowed stream-stream join (Kafka 2.0's KStreamKStreamJoin): both sides
 * are kept in stores "<name>-join-this" and "<name>-join-other" (each with
 * its changelog); each record joins every record of the other side in its
 * window, once per pair, when the later of the two arrives. left and outer
 * also emit a left (outer: left or right) record with null as the other
 * side when it arrives and finds no partner, as 2.0 does (a partner arriving
 * later then emits the pair too). Records with a null key or value are
 * skipped. */
samsa_st_stream *samsa_st_join_stream(samsa_st_stream *left, samsa_st_stream *right,
                                      enum samsa_st_join_kind kind,
                                      const struct samsa_st_join_windows *w,
                                      samsa_st_joiner *fn, void *opaque, const char *name);

/* Table-table join (KTableKTableInnerJoin, ...LeftJoin, ...OuterJoin, Kafka
 * 2.0): an update on either side looks the key up in the other side's store
 * and emits the joined value, or a tombstone (null value) when the row left
 * the join; inner emits nothing while the other side lacks the key, left
 * nothing for a right update whose key the left lacks. Both tables must be
 * materialized; the result is not (it cannot be joined again). */
samsa_st_table *samsa_st_join_tables(samsa_st_table *left, samsa_st_table *right,
                                     enum samsa_st_join_kind kind, samsa_st_joiner *fn,
                                     void *opaque);

/* -------------------------------------------------------------- runtime */

typedef struct samsa_st_app samsa_st_app;

/*
 * An application running t (borrowed: keep it until the app is destroyed)
 * with a copy of conf, which must hold bootstrap.servers; application_id
 * names the consumer group, the changelog and repartition topics.
 * commit_interval_ms: how often processed input is committed (Kafka's
 * commit.interval.ms, 30000 at-least-once; <= 0 takes that default).
 * Creates the changelog and repartition topics (compacted changelogs),
 * checks that every source topic of a sub-topology has the same partition
 * count (refused with a sentence otherwise), and subscribes. Caller owns:
 * samsa_st_app_destroy.
 */
SAMSA_MUST_CHECK samsa_st_app *samsa_st_app_new(samsa_st_topology *t, const char *application_id,
                                                const samsa_conf *conf,
                                                int64_t commit_interval_ms, char *errstr,
                                                size_t errstr_size);
/* One step: polls the consumer for up to timeout_ms, processes what came,
 * runs due punctuations, commits when the interval passed. Returns how many
 * records it processed, or a negative error (the app cannot go on). */
int samsa_st_app_poll(samsa_st_app *app, int timeout_ms);
/* Steps until *stop becomes true (set it from a signal handler or another
 * thread), then commits. Returns SAMSA_OK or the error that stopped it. */
SAMSA_MUST_CHECK int samsa_st_app_run(samsa_st_app *app, volatile const int *stop);
/* Keeps the stores in LMDB files under dir/<application.id>/<sub-topology>_<partition>
 * (Kafka Streams' state.dir layout) instead of memory; NULL: memory again.
 * Before the first samsa_st_app_poll (SAMSA_ERR_STATE once tasks run);
 * SAMSA_ERR_NOT_IMPLEMENTED when the library was built without liblmdb.
 * The stores are still restored from their changelogs at start.
 * Locks dir/<application.id> (flock of its file .lock, held until
 * samsa_st_app_destroy, Kafka Streams' StateDirectory.lock): while another
 * process holds it, SAMSA_ERR_STATE, the stores stay in memory, and
 * samsa_st_app_last_error names the folder and that process. */
SAMSA_MUST_CHECK int samsa_st_app_set_state_dir(samsa_st_app *app, const char *dir);
/* The sentence of the app's last error that has one more than its code (a
 * state directory in use, a commit the group refused because it moved on),
 * "" when none; valid until the next call on app. */
const char *samsa_st_app_last_error(const samsa_st_app *app);
/* Flushes the outputs and commits what was processed now. */
SAMSA_MUST_CHECK int samsa_st_app_commit(samsa_st_app *app);
/* Records processed, and late records dropped by windowed aggregations. */
uint64_t samsa_st_app_processed(const samsa_st_app *app);
uint64_t samsa_st_app_dropped_late(const samsa_st_app *app);
/* Changelog records replayed into stores since the app started. */
uint64_t samsa_st_app_restored(const samsa_st_app *app);
/* Records skipped because the state held them already: sent again through a
 * repartition topic by an upstream task restarted after a crash. */
uint64_t samsa_st_app_skipped(const samsa_st_app *app);
/*
 * Interactive queries (Kafka's KafkaStreams#store, ReadOnlyKeyValueStore
 * and ReadOnlyWindowStore fetch): the value of key in the store named
 * `store` of this instance's tasks, callable from any thread while another
 * runs samsa_st_app_run or samsa_st_app_poll. It waits for the record being
 * processed (or a restore, or a commit's store write) to finish, so it sees
 * every update of the records processed before it, committed or not (as
 * Kafka's stores do). Returns 1 with *value a malloc'd copy (free() it;
 * NULL for an empty value is not used: at least one byte is allocated) and
 * *len its length; 0 when no task of this instance holds key (another
 * instance of the application may: the partition of key in the store's
 * changelog says which); SAMSA_ERR_INVALID_ARG for no such store, or a
 * window store asked with samsa_st_app_query (or the other way round);
 * SAMSA_ERR_NOMEM. The window form takes the window's start.
 */
int samsa_st_app_query(samsa_st_app *app, const char *store, struct samsa_st_bytes key,
                       void **value, size_t *len);
int samsa_st_app_query_window(samsa_st_app *app, const char *store, struct samsa_st_bytes key,
                              int64_t window_start, void **value, size_t *len);
/* Commits, leaves the group, frees app. NULL: no-op. */
void samsa_st_app_destroy(samsa_st_app *app);

/* ---------------------------------------------------------- test driver */

typedef struct samsa_st_driver samsa_st_driver;

/* Runs t (borrowed) with one task per partition number fed, no broker; wall
 * clock starts at wall_ms. Repartition topics are fed back in at once, as
 * TopologyTestDriver does. Caller owns: samsa_st_driver_destroy. */
samsa_st_driver *samsa_st_driver_new(samsa_st_topology *t, const char *application_id,
                                     int64_t wall_ms);
void samsa_st_driver_destroy(samsa_st_driver *d);
/* As samsa_st_app_set_state_dir, before the first record is piped. */
SAMSA_MUST_CHECK int samsa_st_driver_set_state_dir(samsa_st_driver *d, const char *dir);
/* Feeds one record of topic (partition 0) through the topology. */
SAMSA_MUST_CHECK int samsa_st_driver_pipe(samsa_st_driver *d, const char *topic,
                                          struct samsa_st_bytes key, struct samsa_st_bytes value,
                                          int64_t timestamp);
SAMSA_MUST_CHECK int samsa_st_driver_pipe_partition(samsa_st_driver *d, const char *topic,
                                                    int32_t partition,
                                                    struct samsa_st_bytes key,
                                                    struct samsa_st_bytes value,
                                                    int64_t timestamp);
/* Moves the wall clock forward and runs due wall-clock punctuations. */
SAMSA_MUST_CHECK int samsa_st_driver_advance_wall(samsa_st_driver *d, int64_t ms);
/* The next record written to topic (outputs, changelogs), oldest first:
 * false when none is left. *out is borrowed until the next call on d. */
bool samsa_st_driver_read(samsa_st_driver *d, const char *topic, struct samsa_st_record *out);
/* The store of partition 0's task (NULL: none yet). */
samsa_st_store *samsa_st_driver_store(samsa_st_driver *d, const char *name);
/* Late records dropped by windowed aggregations. */
uint64_t samsa_st_driver_dropped_late(const samsa_st_driver *d);

#ifdef __cplusplus
}
#endif

#endif
