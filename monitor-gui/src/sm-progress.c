/* sm-progress.c: a progress message digested with jansson (sm-progress.h). */
#include "sm-progress.h"

#include <jansson.h>
#include <string.h>

/* read as sm-cluster.c reads its JSON: a missing or mistyped field is unknown */
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

static SmProgress *digest(json_t *ev)
{
    SmProgress *pr = g_new0(SmProgress, 1);
    pr->broker = j_id(ev, "broker", -1);
    pr->time_ms = j_int(ev, "time_ms", 0);
    pr->seq = j_int(ev, "seq", -1);
    json_t *a = j_array(ev, "partitions");
    size_t n = a != NULL ? json_array_size(a) : 0;
    pr->entries =
        g_array_sized_new(FALSE, TRUE, sizeof(SmProgressEntry), (guint)MIN(n, G_MAXUINT / 4));
    pr->replicas =
        g_array_sized_new(FALSE, TRUE, sizeof(SmReplica), (guint)MIN(n * 3, G_MAXUINT / 4));
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
            .last_stable_offset = j_int(o, "last_stable_offset", SM_OFFSET_UNKNOWN),
            .log_start_offset = j_int(o, "log_start_offset", SM_OFFSET_UNKNOWN),
            .log_end_offset = j_int(o, "log_end_offset", SM_OFFSET_UNKNOWN),
            .first_replica = pr->replicas->len,
            .n_replicas = 0,
        };
        json_t *ra = j_array(o, "replicas");
        size_t nr = ra != NULL ? MIN(json_array_size(ra), SM_PROGRESS_MAX_REPLICAS) : 0;
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

SmProgress *sm_progress_new_from_text(const char *data, gsize len)
{
    if (data == NULL) {
        return NULL;
    }
    json_error_t jerr;
    json_t *m = json_loadb(data, len, 0, &jerr);
    const char *type = j_str(m, "type");
    SmProgress *pr = type != NULL && strcmp(type, "progress") == 0 ? digest(m) : NULL;
    json_decref(m);
    return pr;
}

void sm_progress_free(SmProgress *pr)
{
    if (pr == NULL) {
        return;
    }
    g_array_unref(pr->entries);
    g_array_unref(pr->replicas);
    g_string_chunk_free(pr->strings);
    g_free(pr);
}
