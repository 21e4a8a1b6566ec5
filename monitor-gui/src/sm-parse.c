/* sm-parse.c: JSON parsed on a worker thread, in order (see sm-parse.h). */
#include "sm-parse.h"

#include <string.h>

/* A stream's progress messages (the large and frequent ones: 1 MB for
 * 3,300 partitions, ten a second per broker) are parsed with jansson and
 * digested straight into an SmProgress. Not with json-glib: its JsonParser
 * emits a GObject signal per value, and every emission takes GLib's one
 * global signal lock, which the UI thread needs for each of its own
 * signals; parsing them on a worker with it held the UI thread up about as
 * long as parsing them on the UI thread did. Everything else (documents,
 * the other stream messages) is parsed with json-glib, on the worker too.
 * Both headers declare a json_object_iter_next (with other types):
 * jansson's is renamed here and not used. */
#define json_object_iter_next sm_jansson_object_iter_next_unused
#include <jansson.h>
#undef json_object_iter_next

#define MAX_REPLICAS 64 /* as sm-cluster.c reads them */

/* Shared by the owner, the worker's jobs and the delivery source: the last
 * reference frees it, whichever thread drops it. */
typedef struct {
    gint ref;
    GAsyncQueue *results; /* SmParsed *, in the order parsed */
    gint pending;         /* pushed and not handed back (atomic) */
    gint closed;          /* atomic: set by the owner, read by the worker */
    GMainContext *context;
} Shared;

struct _SmParser {
    Shared *shared;
    GThreadPool *pool; /* one thread at most: the order is kept */
    GSource *source;   /* hands results back, one an iteration */
    SmParsedFunc func;
    gpointer user_data;
};

typedef struct {
    Shared *shared;
    SmParseKind kind;
    char *path;
    GBytes *text;
} Job;

static void parsed_free(gpointer p)
{
    SmParsed *r = p;
    if (r == NULL) {
        return;
    }
    g_free(r->path);
    g_clear_pointer(&r->root, json_node_unref);
    g_clear_pointer(&r->progress, sm_progress_free);
    g_free(r->type);
    g_free(r);
}

/* Shared parts not freed yet, every parser's together (atomic) */
static gint shared_alive;

static Shared *shared_ref(Shared *s)
{
    g_atomic_int_inc(&s->ref);
    return s;
}

static void shared_unref(Shared *s)
{
    if (g_atomic_int_dec_and_test(&s->ref)) {
        g_async_queue_unref(s->results);
        g_main_context_unref(s->context);
        g_free(s);
        g_atomic_int_add(&shared_alive, -1);
    }
}

static void job_free(gpointer p)
{
    Job *j = p;
    shared_unref(j->shared);
    g_free(j->path);
    g_bytes_unref(j->text);
    g_free(j);
}

/* ------------------------------------------------------------ the worker */

/* ------------------------------------------------------------ progress with jansson */

/* read as sm-cluster.c reads JSON: a missing or mistyped field is unknown */
static gint64 j_int(json_t *o, const char *key, gint64 dflt)
{
    json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    if (json_is_integer(v)) {
        return (gint64)json_integer_value(v);
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        /* json-glib's reading casts; out of range that is undefined: unknown */
        return d >= -9.2e18 && d <= 9.2e18 ? (gint64)d : dflt;
    }
    return dflt;
}

static gint32 j_id(json_t *o, const char *key, gint32 dflt)
{
    gint64 v = j_int(o, key, dflt);
    return v < G_MININT32 || v > G_MAXINT32 ? dflt : (gint32)v;
}

static gboolean j_bool(json_t *o, const char *key, gboolean dflt)
{
    json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static const char *j_str(json_t *o, const char *key)
{
    json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static json_t *j_array(json_t *o, const char *key)
{
    json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    return json_is_array(v) ? v : NULL;
}

/* sm_progress_new_from_object's digest, from jansson's tree */
static SmProgress *digest_progress(json_t *ev)
{
    SmProgress *pr = g_new0(SmProgress, 1);
    pr->broker = j_id(ev, "broker", -1);
    pr->time_ms = j_int(ev, "time_ms", 0);
    pr->seq = j_int(ev, "seq", -1);
    json_t *a = j_array(ev, "partitions");
    size_t n = a != NULL ? json_array_size(a) : 0;
    pr->entries = g_array_sized_new(FALSE, TRUE, sizeof(SmProgressEntry), (guint)MIN(n, G_MAXUINT / 4));
    pr->replicas = g_array_sized_new(FALSE, TRUE, sizeof(SmReplica), (guint)MIN(n * 3, G_MAXUINT / 4));
    pr->strings = g_string_chunk_new(256);
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(a, i);
        const char *topic = j_str(o, "topic");
        SmProgressEntry e = {
            .topic = topic != NULL ? g_string_chunk_insert_const(pr->strings, topic) : NULL,
            .partition = j_id(o, "partition", -1),
            .leader = j_id(o, "leader", -1),
            .led_here = j_bool(o, "led_here", FALSE),
            .high_watermark = j_int(o, "high_watermark", SM_OFFSET_UNKNOWN),
            .log_start_offset = j_int(o, "log_start_offset", SM_OFFSET_UNKNOWN),
            .log_end_offset = j_int(o, "log_end_offset", SM_OFFSET_UNKNOWN),
            .first_replica = pr->replicas->len,
            .n_replicas = 0,
        };
        json_t *ra = j_array(o, "replicas");
        size_t nr = ra != NULL ? MIN(json_array_size(ra), MAX_REPLICAS) : 0;
        for (size_t k = 0; k < nr; k++) {
            json_t *ro = json_array_get(ra, k);
            SmReplica r = {
                .broker = j_id(ro, "broker", -1),
                .log_end_offset = j_int(ro, "log_end_offset", SM_OFFSET_UNKNOWN),
                .lag = j_int(ro, "lag", SM_OFFSET_UNKNOWN),
                .since_caught_up_ms = j_int(ro, "time_since_caught_up_ms", SM_OFFSET_UNKNOWN),
                .in_sync = j_bool(ro, "in_sync", FALSE),
                .offline = j_bool(ro, "offline", FALSE),
            };
            g_array_append_val(pr->replicas, r);
        }
        e.n_replicas = (guint)nr;
        g_array_append_val(pr->entries, e);
    }
    return pr;
}

/* the root object of text with json-glib, or NULL */
static JsonNode *glib_parse(const char *data, gsize len)
{
    JsonNode *root = NULL;
    JsonParser *parser = json_parser_new_immutable();
    if (data != NULL && len <= G_MAXSSIZE &&
        json_parser_load_from_data(parser, data, (gssize)len, NULL)) {
        root = json_parser_steal_root(parser);
        if (root != NULL && !JSON_NODE_HOLDS_OBJECT(root)) {
            g_clear_pointer(&root, json_node_unref);
        }
    }
    g_object_unref(parser);
    return root;
}

static SmParsed *parse(const Job *j)
{
    gint64 t0 = g_get_monotonic_time();
    SmParsed *r = g_new0(SmParsed, 1);
    r->kind = j->kind;
    r->path = g_strdup(j->path);
    r->seq = -1;
    gsize len = 0;
    const char *data = g_bytes_get_data(j->text, &len);
    if (j->kind == SM_PARSE_STREAM && data != NULL) {
        json_error_t jerr;
        json_t *m = json_loadb(data, len, 0, &jerr);
        const char *type = j_str(m, "type");
        json_t *seq = json_is_object(m) ? json_object_get(m, "seq") : NULL;
        if (type != NULL && strcmp(type, "progress") == 0 && seq != NULL) {
            r->progress = digest_progress(m);
            r->type = g_strdup(type);
            r->seq = json_is_integer(seq) ? (gint64)json_integer_value(seq) : -1;
        }
        json_decref(m);
    }
    if (r->progress == NULL) {
        r->root = glib_parse(data, len);
    }
    if (r->root != NULL && j->kind == SM_PARSE_STREAM) {
        JsonObject *m = json_node_get_object(r->root);
        JsonNode *t = json_object_get_member(m, "type");
        r->type = g_strdup(t != NULL && JSON_NODE_HOLDS_VALUE(t) &&
                                   json_node_get_value_type(t) == G_TYPE_STRING
                               ? json_node_get_string(t)
                               : "");
        JsonNode *s = json_object_get_member(m, "seq");
        if (s != NULL && JSON_NODE_HOLDS_VALUE(s) && json_node_get_value_type(s) == G_TYPE_INT64) {
            r->seq = json_node_get_int(s);
        }
    }
    if (r->type == NULL) {
        r->type = g_strdup("");
    }
    r->parse_us = g_get_monotonic_time() - t0;
    return r;
}

static void work(gpointer data, gpointer pool_data)
{
    (void)pool_data;
    Job *j = data;
    Shared *s = j->shared;
    if (!g_atomic_int_get(&s->closed)) {
        g_async_queue_push(s->results, parse(j));
        g_main_context_wakeup(s->context);
    }
    job_free(j);
}

/* ------------------------------------------------------------ handing back */

typedef struct {
    GSource source;
    SmParser *parser; /* borrowed: the parser destroys the source first */
} DeliverSource;

static gboolean deliver_prepare(GSource *source, gint *timeout)
{
    *timeout = -1;
    return g_async_queue_length(((DeliverSource *)source)->parser->shared->results) > 0;
}

static gboolean deliver_check(GSource *source)
{
    return g_async_queue_length(((DeliverSource *)source)->parser->shared->results) > 0;
}

static gboolean deliver_dispatch(GSource *source, GSourceFunc callback, gpointer ud)
{
    (void)callback;
    (void)ud;
    SmParser *p = ((DeliverSource *)source)->parser;
    /* one result an iteration: the loop draws and reads input between two */
    SmParsed *r = g_async_queue_try_pop(p->shared->results);
    if (r != NULL) {
        g_atomic_int_add(&p->shared->pending, -1);
        p->func(r, p->user_data);
        parsed_free(r);
    }
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs deliver_funcs = {
    deliver_prepare, deliver_check, deliver_dispatch, NULL, NULL, NULL,
};

/* ------------------------------------------------------------ the owner's side */

SmParser *sm_parser_new(SmParsedFunc func, gpointer user_data)
{
    SmParser *p = g_new0(SmParser, 1);
    p->func = func;
    p->user_data = user_data;
    p->shared = g_new0(Shared, 1);
    p->shared->ref = 1;
    g_atomic_int_inc(&shared_alive);
    p->shared->results = g_async_queue_new_full(parsed_free);
    p->shared->context = g_main_context_ref_thread_default();
    /* never fails for a shared (non-exclusive) pool */
    p->pool = g_thread_pool_new_full(work, NULL, job_free, 1, FALSE, NULL);
    p->source = g_source_new(&deliver_funcs, sizeof(DeliverSource));
    ((DeliverSource *)p->source)->parser = p;
    g_source_set_static_name(p->source, "samsa-monitor parsed JSON");
    g_source_attach(p->source, p->shared->context);
    return p;
}

void sm_parser_push(SmParser *self, SmParseKind kind, const char *path, GBytes *text)
{
    g_return_if_fail(self != NULL && text != NULL);
    Job *j = g_new0(Job, 1);
    j->shared = shared_ref(self->shared);
    j->kind = kind;
    j->path = g_strdup(path);
    j->text = g_bytes_ref(text);
    g_atomic_int_inc(&self->shared->pending);
    (void)g_thread_pool_push(self->pool, j, NULL); /* a shared pool: cannot fail */
}

guint sm_parser_alive(void)
{
    return (guint)g_atomic_int_get(&shared_alive);
}

guint sm_parser_pending(SmParser *self)
{
    return (guint)g_atomic_int_get(&self->shared->pending);
}

void sm_parser_free(SmParser *self)
{
    if (self == NULL) {
        return;
    }
    g_atomic_int_set(&self->shared->closed, 1);
    g_source_destroy(self->source);
    g_source_unref(self->source);
    /* the jobs left run through work(), which sees the parser closed and
     * only frees them (no parsing): with immediate TRUE GLib's shared pool
     * sometimes never freed the unstarted ones, nor so the shared part
     * (monitor-model's freed-parser test hung about 1 run in 6) */
    g_thread_pool_free(self->pool, FALSE, FALSE);
    shared_unref(self->shared);
    g_free(self);
}
