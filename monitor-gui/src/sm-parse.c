/* sm-parse.c: JSON parsed on a worker thread, in order (see sm-parse.h). */
#include "sm-parse.h"

#include <string.h>

/* A stream's progress messages (the large and frequent ones: 1 MB for
 * 3,300 partitions, ten a second per broker) are digested straight into an
 * SmProgress (sm-progress.h, with jansson); everything else (documents, the
 * other stream messages) is parsed with json-glib, on the worker too. */

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
    if (j->kind == SM_PARSE_STREAM) {
        r->progress = sm_progress_new_from_text(data, len);
        if (r->progress != NULL) {
            r->type = g_strdup("progress");
            r->seq = r->progress->seq;
        }
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
