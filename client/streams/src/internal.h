/*
 * libsamsa-streams' internals, shared by its files: the topology's nodes
 * and stores (topology.c, dsl.c), a task running one sub-topology for one
 * partition (task.c), the store backends (store.c), and the two things that
 * run tasks: the runtime (app.c) and the test driver (driver.c).
 */
#ifndef SAMSA_STREAMS_INTERNAL_H
#define SAMSA_STREAMS_INTERNAL_H

#include <samsa/streams.h>

#include <stdarg.h>

#define ST_MSG_MAX 256

enum st_node_kind { ST_SOURCE, ST_PROCESSOR, ST_SINK };

struct samsa_st_node {
    char *name;
    enum st_node_kind kind;
    size_t index;          /* in topology->nodes */
    size_t sub;            /* sub-topology, set by st_topology_resolve */
    /* source: topics (internal: "<name>-repartition", the app id prefixed
     * by resolve into resolved[]) */
    char **topics;
    char **resolved;
    size_t topic_count;
    bool internal;         /* source or sink of a repartition topic */
    /* sink */
    char *topic;
    char *sink_resolved;
    /* processor */
    const struct samsa_st_processor *proc;
    void *opaque;
    size_t *parents;
    size_t parent_count;
    size_t *children;
    size_t child_count;
};

struct st_store_def {
    char *name;
    bool window;
    int64_t retention_ms;
    size_t node;           /* the node it was added with: its sub-topology owns it */
    size_t *users;         /* other nodes reaching it (joins): joined to that sub-topology */
    size_t user_count;
    char *changelog;       /* "<application.id>-<name>-changelog", set by resolve */
};

struct samsa_st_topology {
    struct samsa_st_node **nodes;
    size_t node_count;
    struct st_store_def *stores;
    size_t store_count;
    size_t sub_count;
    void **owned;          /* DSL handles and op configs, freed with the topology */
    size_t owned_count;
    const char **late_topics; /* dead-letter topics of windows (strings in owned) */
    size_t late_topic_count;
    int err;
    char msg[ST_MSG_MAX];
};

/* The first error sticks: records it (printf format) and returns err. */
int st_fail(samsa_st_topology *t, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Keeps p (freed with free() when the topology is destroyed); NULL: no memory. */
void *st_own(samsa_st_topology *t, void *p);
/* A copy of a windows' dead-letter topic, owned by t and listed for the
 * runtime to create (NULL for NULL, or when out of memory: t's error set). */
const char *st_late_topic(samsa_st_topology *t, const char *topic);
char *st_strdup(const char *s);
/* Names internal topics after application_id and numbers the sub-topologies
 * (a source starts one; nodes joined by a parent share it). */
SAMSA_MUST_CHECK int st_topology_resolve(samsa_st_topology *t, const char *application_id);
/* Reaches store from node: node's sub-topology becomes the store's (Kafka's
 * connectProcessorAndStateStores). */
SAMSA_MUST_CHECK int st_store_connect(samsa_st_topology *t, const char *store,
                                      const samsa_st_node *node);
/* The sub-topology that reads topic (resolved name), or -1. */
long st_topology_sub_of(const samsa_st_topology *t, const char *topic);

/* ---- stores: a backend vtable, so that another engine (LMDB) drops in */

struct st_backend {
    bool (*get)(void *impl, struct samsa_st_bytes key, struct samsa_st_bytes *value);
    int (*put)(void *impl, struct samsa_st_bytes key, struct samsa_st_bytes value);
    void (*each)(void *impl,
                 bool (*fn)(struct samsa_st_bytes key, struct samsa_st_bytes value, void *opaque),
                 void *opaque);
    size_t (*count)(void *impl);
    void (*destroy)(void *impl);
};
extern const struct st_backend st_memory_backend;
void *st_memory_new(void);

/* LMDB (built when liblmdb is found: SAMSA_ST_HAVE_LMDB). An environment
 * per task, shared by its stores through a count of references: opened
 * with one (the opener's), each st_lmdb_new adds one, st_lmdb_env_unref
 * drops one and closes at zero. */
struct st_lmdb_env;
/* Sets *field to a copy of dir (app.c): SAMSA_ERR_NOT_IMPLEMENTED without LMDB. */
SAMSA_MUST_CHECK int st_set_state_dir(char **field, const char *dir);
/* mkdir -p path (modified while it runs, restored): 0, or -1 with errno. */
int st_mkdir_p(char *path);
/* Takes the lock of state_dir/<application_id> (state_lock.c): *fd_out
 * holds it until st_state_unlock; SAMSA_ERR_STATE with a sentence in msg
 * when another process holds it (naming the folder and that process) or
 * the folder cannot be made. */
SAMSA_MUST_CHECK int st_state_lock(const char *state_dir, const char *application_id,
                                   int *fd_out, char *msg, size_t msg_size);
void st_state_unlock(int fd);
struct st_lmdb_env *st_lmdb_env_open(const char *state_dir, const char *application_id,
                                     size_t sub, int32_t partition, size_t stores);
void st_lmdb_env_unref(struct st_lmdb_env *e);
struct st_positions;
/* The positions the last commit wrote beside the state (into *pos). */
SAMSA_MUST_CHECK int st_lmdb_positions_load(struct st_lmdb_env *e, struct st_positions *pos);
/* Writes pos into the open write transaction (the puts since the last
 * commit) and commits it: state and positions land together or not at all.
 * With none open nothing changed since the last commit: nothing to do. */
SAMSA_MUST_CHECK int st_lmdb_commit(struct st_lmdb_env *e, const struct st_positions *pos);
extern const struct st_backend st_lmdb_backend;
void *st_lmdb_new(struct st_lmdb_env *env, const char *name);

struct st_task;

struct samsa_st_store {
    const struct st_backend *ops;
    void *impl;
    const struct st_store_def *def;
    struct st_task *task;  /* writes its changelog, gives stream time */
    int64_t swept_at;      /* window stores: stream time of the last expiry sweep */
    void *changelog_slot;  /* the runtime's count of its changelog records delivered */
};

/* Restores one changelog record (no changelog write). */
SAMSA_MUST_CHECK int st_store_restore(samsa_st_store *s, struct samsa_st_bytes key,
                                      struct samsa_st_bytes value);

/* ---- input positions (position.c): what a task's state already holds
 *
 * Keys: 'i' + "<partition>:<topic>" -> a = the next input offset to read;
 * 'o' + "<partition>:<topic>" -> (a, b) = the largest (offset, sequence) of
 * an origin (the record of an upstream task that sent this one through a
 * repartition topic) applied; 'c' + changelog topic -> a = the changelog
 * offset from which the restore of the tail starts. */
/* A position's identity; topic is a view (not terminated) into what the
 * caller holds: a message, a header value, a stored key. */
struct st_pos_id {
    char kind; /* 'i', 'o' or 'c' */
    int32_t partition;
    const char *topic;
    size_t topic_len;
};
struct st_pos {
    char *key;           /* "<kind><partition>:<topic>", as LMDB stores it */
    struct st_pos_id id; /* its topic a view into key */
    int64_t a;
    int64_t b;
};
struct st_positions {
    struct st_pos *v;
    size_t count;
};
#define ST_HDR_POS "samsa.pos"       /* changelog: the input record that made it */
#define ST_HDR_ORIGIN "samsa.origin" /* repartition: the upstream record that made it */
/* The id of a stored key (key[0..len), not terminated); false when it is
 * not one (bytes from disk). */
bool st_pos_id_parse(const char *key, size_t len, struct st_pos_id *out);
struct st_pos *st_pos_find(const struct st_positions *p, const struct st_pos_id *id);
/* Raises id to (a, b) when that is larger (compared as a pair); adds it
 * (copying the topic). */
SAMSA_MUST_CHECK int st_pos_raise(struct st_positions *p, const struct st_pos_id *id, int64_t a,
                                  int64_t b);
void st_pos_clear(struct st_positions *p);
/* Header values: pos = be64 offset, be32 partition, topic; origin = be64
 * offset, be32 sequence, be32 partition, topic. Encode into out (at least
 * 16 + strlen(topic) bytes), return the length; decode gives the id of the
 * input partition ('i') or of the origin ('o'), its topic a view into the
 * header value, and (offset, sequence); false when malformed. */
size_t st_hdr_pos_encode(uint8_t *out, const char *topic, int32_t partition, int64_t offset);
size_t st_hdr_origin_encode(uint8_t *out, const char *topic, int32_t partition, int64_t offset,
                            uint32_t seq);
bool st_hdr_pos_decode(const void *v, size_t len, struct st_pos_id *id, int64_t *offset);
bool st_hdr_origin_decode(const void *v, size_t len, struct st_pos_id *id, int64_t *offset,
                          int64_t *seq);

/* ---- outputs: where a task's sinks and changelogs write */

struct st_output {
    /* partition -1: by key, as Java's producer places it; from: the store
     * whose changelog this is, else NULL */
    int (*send)(void *opaque, const char *topic, int32_t partition, struct samsa_st_bytes key,
                struct samsa_st_bytes value, int64_t timestamp,
                const struct samsa_header *headers, size_t header_count, samsa_st_store *from);
    void *opaque;
};

struct st_punctuation {
    size_t node;
    int64_t interval;
    enum samsa_st_punctuation type;
    samsa_st_punctuator *cb;
    int64_t next;          /* INT64_MIN: not started */
};

struct samsa_st_context {
    struct st_task *task;
    size_t node;
};

struct st_task {
    const samsa_st_topology *t;
    const char *application_id;
    size_t sub;
    int32_t partition;
    void **states;         /* per node */
    samsa_st_store **stores; /* per store def; NULL when not of this sub-topology */
    struct st_output out;
    int64_t stream_time;
    int64_t wall_time;
    struct st_punctuation *puncs;
    size_t punc_count;
    uint64_t dropped_late;
    struct samsa_st_context ctx;
    /* the record being processed, when the runtime knows where it came
     * from (cur_topic NULL otherwise): its changelog writes carry it, its
     * repartition writes carry it as their origin (with seq counting them) */
    const char *cur_topic;
    int32_t cur_partition;
    int64_t cur_offset;
    const void *cur_origin; /* its own samsa.origin header value, or NULL */
    size_t cur_origin_len;
    uint32_t seq;
    struct st_positions pos;  /* what the state holds (position.c) */
    struct st_positions saved; /* LMDB: the positions of the state on disk at open */
    struct st_lmdb_env *env;  /* LMDB: the task's environment, else NULL */
};

/* Skips a record already applied: true when its origin (a samsa.origin
 * header value) is at or below what the task applied from that origin. */
bool st_task_seen(const struct st_task *task, const void *origin, size_t origin_len);
/* Whether the task's state holds the input record at offset of topic's
 * partition already (it is below the task's position there). */
bool st_task_holds(const struct st_task *task, const char *topic, int32_t partition,
                   int64_t offset);
/* Sets the record being processed (topic NULL: unknown). */
void st_task_begin(struct st_task *task, const char *topic, int32_t partition, int64_t offset,
                   const void *origin, size_t origin_len);
/* Records that the record set by st_task_begin was applied. */
SAMSA_MUST_CHECK int st_task_applied(struct st_task *task);
/* LMDB: begins the write transaction the next puts go into, if none is
 * open (a thread holding another lock while it puts takes LMDB's writer
 * mutex first this way); in memory: nothing to do. */
SAMSA_MUST_CHECK int st_task_prepare(struct st_task *task);
/* Begins e's write transaction when none is open. */
SAMSA_MUST_CHECK int st_lmdb_begin(struct st_lmdb_env *e);
bool st_lmdb_open_txn(const struct st_lmdb_env *e);
/* Whether the task's next put goes into a transaction already open
 * (in memory: always). */
bool st_task_prepared(const struct st_task *task);
/* LMDB: commits the state with the positions (and the changelog offsets
 * already in pos); in memory: nothing to do. */
SAMSA_MUST_CHECK int st_task_checkpoint(struct st_task *task);

/* A task of sub-topology sub for partition (processors created, not
 * initialised), its stores in memory (state_dir NULL) or in LMDB under
 * state_dir. NULL: no memory, or the LMDB environment could not open. */
struct st_task *st_task_new(const samsa_st_topology *t, const char *application_id, size_t sub,
                            int32_t partition, struct st_output out, const char *state_dir);
/* Runs every processor's init (punctuations are scheduled here). */
SAMSA_MUST_CHECK int st_task_init(struct st_task *task, int64_t wall_ms);
/* Processes one record read from topic (resolved name). */
SAMSA_MUST_CHECK int st_task_process(struct st_task *task, const char *topic,
                                     const struct samsa_st_record *rec);
/* Runs the wall-clock punctuations due at now_ms. */
SAMSA_MUST_CHECK int st_task_wall_clock(struct st_task *task, int64_t now_ms);
void st_task_destroy(struct st_task *task);
/* The tasks of an app or a driver, found by (sub-topology, partition). */
struct st_tasks {
    struct st_task **v;
    size_t count;
};
struct st_task *st_tasks_find(const struct st_tasks *ts, size_t sub, int32_t partition);
/* Keeps task (ownership passes to ts; destroyed here when it cannot be kept). */
SAMSA_MUST_CHECK int st_tasks_add(struct st_tasks *ts, struct st_task *task);
/* Destroys the task of (sub, partition), if any; returns its late drops. */
uint64_t st_tasks_close(struct st_tasks *ts, size_t sub, int32_t partition);
/* Destroys every task. */
void st_tasks_clear(struct st_tasks *ts);

/* Sends rec to node's children (child: SIZE_MAX for all). */
SAMSA_MUST_CHECK int st_task_forward(struct st_task *task, size_t node, size_t child,
                                     const struct samsa_st_record *rec);

/* ---- byte helpers */
uint32_t st_hash(const void *data, size_t len);
void st_put_be64(uint8_t out[8], uint64_t v);
uint64_t st_get_be64(const uint8_t in[8]);

#endif
