/* sm-messages.c: the message browser's reading with libsamsa (see
 * sm-messages.h). */
#include "sm-messages.h"

#include <string.h>

#include "sm-changes.h"

#define SHOWN_MAX 1000     /* characters of a key, value or header shown */
#define READ_TIMEOUT_MS 10000

G_DEFINE_FINAL_TYPE(SmMessage, sm_message, G_TYPE_OBJECT)

static void sm_message_finalize(GObject *object)
{
    SmMessage *self = SM_MESSAGE(object);
    g_free(self->key);
    g_free(self->value);
    g_free(self->headers);
    G_OBJECT_CLASS(sm_message_parent_class)->finalize(object);
}

static void sm_message_class_init(SmMessageClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_message_finalize;
}

static void sm_message_init(SmMessage *self)
{
    self->offset = -1;
}

/* bytes as text: valid UTF-8 as it is, any other byte as \xNN */
static void append_bytes(GString *s, const void *data, size_t len)
{
    const char *p = data;
    size_t shown = 0;
    while (len > 0 && shown < SHOWN_MAX) {
        gunichar c = g_utf8_get_char_validated(p, (gssize)MIN(len, 6));
        if (c == (gunichar)-1 || c == (gunichar)-2 || c == 0) {
            g_string_append_printf(s, "\\x%02x", (unsigned)(unsigned char)*p);
            p++;
            len--;
        } else {
            /* g_utf8_next_char casts the const away: the skip table instead */
            size_t step = (size_t)g_utf8_skip[*(const guchar *)p];
            g_string_append_len(s, p, (gssize)step);
            len -= step;
            p += step;
        }
        shown++;
    }
    if (len > 0) {
        g_string_append(s, "…");
    }
}

static char *bytes_text(const void *data, size_t len)
{
    if (data == NULL) {
        return g_strdup("null");
    }
    GString *s = g_string_new(NULL);
    append_bytes(s, data, len);
    return g_string_free(s, FALSE);
}

static SmMessage *message_from(const samsa_message *m)
{
    SmMessage *msg = g_object_new(SM_TYPE_MESSAGE, NULL);
    msg->partition = m->partition;
    msg->offset = m->offset;
    msg->timestamp_ms = m->timestamp;
    msg->key = bytes_text(m->key, m->key_len);
    msg->value = bytes_text(m->value, m->value_len);
    GString *h = g_string_new(NULL);
    for (size_t i = 0; i < m->header_count; i++) {
        g_string_append_printf(h, "%s%s=", i > 0 ? ", " : "",
                               m->headers[i].name != NULL ? m->headers[i].name : "");
        if (m->headers[i].value == NULL) {
            g_string_append(h, "null");
        } else {
            append_bytes(h, m->headers[i].value, m->headers[i].value_len);
        }
    }
    msg->headers = g_string_free(h, FALSE);
    return msg;
}

typedef struct {
    char *bootstrap;
    char *topic;
    gint32 partition;
    SmFrom from;
    gint64 at;
    guint n;
} Read;

static void read_free(gpointer p)
{
    Read *r = p;
    g_free(r->bootstrap);
    g_free(r->topic);
    g_free(r);
}

static GError *samsa_error(int err, const char *what)
{
    return g_error_new(G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s", what, samsa_err_str(err));
}

/* the records on the worker: assign, position, poll until n, the high
 * watermark read at the start, or the deadline */
static GListStore *read_records(const Read *r, GCancellable *cancel, GError **error)
{
    samsa_consumer *c = sm_changes_consumer_new(r->bootstrap, NULL, error);
    if (c == NULL) {
        return NULL;
    }
    GListStore *out = NULL;
    int64_t low = 0, high = 0;
    int err = samsa_consumer_watermarks(c, r->topic, r->partition, &low, &high, READ_TIMEOUT_MS);
    if (err != SAMSA_OK) {
        g_propagate_error(error, samsa_error(err, "the partition's offsets"));
        goto out_close;
    }
    int64_t start = low;
    if (r->from == SM_FROM_LATEST) {
        start = MAX(low, high - (int64_t)r->n);
    } else if (r->from == SM_FROM_OFFSET) {
        start = CLAMP(r->at, low, high);
    }
    struct samsa_partition part = {r->topic, r->partition, start};
    err = samsa_consumer_assign(c, &part, 1);
    if (err == SAMSA_OK && r->from == SM_FROM_TIME) {
        err = samsa_consumer_seek_timestamp(c, r->topic, r->partition, r->at, READ_TIMEOUT_MS);
    }
    if (err != SAMSA_OK) {
        g_propagate_error(error, samsa_error(err, "reading from there"));
        goto out_close;
    }
    out = g_list_store_new(SM_TYPE_MESSAGE);
    gint64 deadline = g_get_monotonic_time() + READ_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;
    guint got = 0;
    gboolean done = start >= high && r->from != SM_FROM_TIME;
    while (!done && got < r->n && g_get_monotonic_time() < deadline &&
           !g_cancellable_is_cancelled(cancel)) {
        samsa_message *m = samsa_consumer_poll(c, 200);
        if (m != NULL) {
            SmMessage *msg = message_from(m);
            done = m->offset + 1 >= high;
            samsa_message_free(m);
            g_list_store_append(out, msg);
            g_object_unref(msg);
            got++;
        } else if (samsa_consumer_at_end(c)) {
            done = TRUE;
        }
    }
out_close:
    (void)samsa_consumer_close(c, 1000);
    samsa_consumer_destroy(c);
    return out;
}

static void read_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
    (void)source;
    GError *error = NULL;
    GListStore *out = read_records(data, cancel, &error);
    if (out == NULL) {
        g_task_return_error(task, error);
    } else {
        g_task_return_pointer(task, out, g_object_unref);
    }
}

void sm_messages_read_async(const char *bootstrap, const char *topic, gint32 partition,
                            SmFrom from, gint64 at, guint n, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data)
{
    Read *r = g_new0(Read, 1);
    r->bootstrap = g_strdup(bootstrap);
    r->topic = g_strdup(topic);
    r->partition = partition;
    r->from = from;
    r->at = at;
    r->n = CLAMP(n, 1u, (guint)SM_MESSAGES_MAX);
    GTask *task = g_task_new(NULL, cancellable, callback, user_data);
    g_task_set_task_data(task, r, read_free);
    g_task_run_in_thread(task, read_thread);
    g_object_unref(task);
}

GListStore *sm_messages_read_finish(GAsyncResult *result, GError **error)
{
    g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
    return g_task_propagate_pointer(G_TASK(result), error);
}
