/* sm-changes.c: topic and group changes with libsamsa (see sm-changes.h). */
#include "sm-changes.h"

#include <samsa/samsa.h>
#include <string.h>

#define CHANGE_TIMEOUT_MS 15000

typedef enum { CREATE, DELETE, RESET } Kind;

typedef struct {
    Kind kind;
    char *bootstrap;
    char *name; /* the topic, or the group */
    gint32 partitions;
    gint16 replication_factor;
    GStrv topics; /* RESET's */
    gint32 *parts;
    guint n;
    gboolean to_earliest;
} Change;

static void change_free(gpointer p)
{
    Change *c = p;
    g_free(c->bootstrap);
    g_free(c->name);
    g_strfreev(c->topics);
    g_free(c->parts);
    g_free(c);
}

static samsa_conf *conf_for(const char *bootstrap, const char *group, GError **error)
{
    char errstr[256] = "";
    samsa_conf *conf = samsa_conf_new();
    if (samsa_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof errstr) != SAMSA_OK ||
        samsa_conf_set(conf, "client.id", "samsa-monitor", errstr, sizeof errstr) != SAMSA_OK ||
        (group != NULL &&
         (samsa_conf_set(conf, "group.id", group, errstr, sizeof errstr) != SAMSA_OK ||
          samsa_conf_set(conf, "enable.auto.commit", "false", errstr, sizeof errstr) != SAMSA_OK))) {
        samsa_conf_destroy(conf);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s", errstr);
        return NULL;
    }
    return conf;
}

samsa_consumer *sm_changes_consumer_new(const char *bootstrap, const char *group, GError **error)
{
    samsa_conf *conf = conf_for(bootstrap, group, error);
    if (conf == NULL) {
        return NULL;
    }
    char errstr[512] = "";
    samsa_consumer *k = samsa_consumer_new(conf, errstr, sizeof errstr);
    samsa_conf_destroy(conf);
    if (k == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", errstr);
    }
    return k;
}

static gboolean failed(int err, const char *errstr, GError **error)
{
    if (err == SAMSA_OK) {
        return FALSE;
    }
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s%s%s", samsa_err_str(err),
                errstr != NULL && errstr[0] != '\0' ? ": " : "", errstr != NULL ? errstr : "");
    return TRUE;
}

static gboolean topic_change(const Change *c, GError **error)
{
    samsa_conf *conf = conf_for(c->bootstrap, NULL, error);
    if (conf == NULL) {
        return FALSE;
    }
    char errstr[512] = "";
    samsa_admin *a = samsa_admin_new(conf, errstr, sizeof errstr);
    samsa_conf_destroy(conf);
    if (a == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", errstr);
        return FALSE;
    }
    int err;
    if (c->kind == CREATE) {
        struct samsa_new_topic t = {c->name, c->partitions, c->replication_factor, NULL, 0};
        err = samsa_admin_create_topic(a, &t, CHANGE_TIMEOUT_MS, errstr, sizeof errstr);
    } else {
        err = samsa_admin_delete_topic(a, c->name, CHANGE_TIMEOUT_MS, errstr, sizeof errstr);
    }
    samsa_admin_destroy(a);
    return !failed(err, errstr, error);
}

/* the group's offsets: each partition's low or high watermark, committed
 * as a member of no generation */
static gboolean reset_offsets(const Change *c, GError **error)
{
    samsa_consumer *k = sm_changes_consumer_new(c->bootstrap, c->name, error);
    if (k == NULL) {
        return FALSE;
    }
    struct samsa_partition *to = g_new0(struct samsa_partition, MAX(c->n, 1u));
    int err = SAMSA_OK;
    for (guint i = 0; i < c->n && err == SAMSA_OK; i++) {
        int64_t low = 0, high = 0;
        err = samsa_consumer_watermarks(k, c->topics[i], c->parts[i], &low, &high,
                                        CHANGE_TIMEOUT_MS);
        to[i].topic = c->topics[i];
        to[i].partition = c->parts[i];
        to[i].offset = c->to_earliest ? low : high;
    }
    if (err == SAMSA_OK && c->n > 0) {
        err = samsa_consumer_commit(k, to, c->n, false, CHANGE_TIMEOUT_MS);
    }
    g_free(to);
    (void)samsa_consumer_close(k, 1000);
    samsa_consumer_destroy(k);
    if (err != SAMSA_OK) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s%s", samsa_err_str(err),
                    err == 25 || err == 22 || err == 27
                        ? " (the group has active members: stop them first)"
                        : "");
        return FALSE;
    }
    return TRUE;
}

static void change_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
    (void)source;
    (void)cancel;
    const Change *c = data;
    GError *error = NULL;
    gboolean ok = c->kind == RESET ? reset_offsets(c, &error) : topic_change(c, &error);
    if (ok) {
        g_task_return_boolean(task, TRUE);
    } else {
        g_task_return_error(task, error);
    }
}

static void run(Change *c, GAsyncReadyCallback callback, gpointer user_data)
{
    GTask *task = g_task_new(NULL, NULL, callback, user_data);
    g_task_set_task_data(task, c, change_free);
    g_task_run_in_thread(task, change_thread);
    g_object_unref(task);
}

void sm_changes_create_topic_async(const char *bootstrap, const char *topic, gint32 partitions,
                                   gint16 replication_factor, GAsyncReadyCallback callback,
                                   gpointer user_data)
{
    Change *c = g_new0(Change, 1);
    c->kind = CREATE;
    c->bootstrap = g_strdup(bootstrap);
    c->name = g_strdup(topic);
    c->partitions = partitions;
    c->replication_factor = replication_factor;
    run(c, callback, user_data);
}

void sm_changes_delete_topic_async(const char *bootstrap, const char *topic,
                                   GAsyncReadyCallback callback, gpointer user_data)
{
    Change *c = g_new0(Change, 1);
    c->kind = DELETE;
    c->bootstrap = g_strdup(bootstrap);
    c->name = g_strdup(topic);
    run(c, callback, user_data);
}

void sm_changes_reset_offsets_async(const char *bootstrap, const char *group,
                                    const char *const *topics, const gint32 *partitions, guint n,
                                    gboolean to_earliest, GAsyncReadyCallback callback,
                                    gpointer user_data)
{
    Change *c = g_new0(Change, 1);
    c->kind = RESET;
    c->bootstrap = g_strdup(bootstrap);
    c->name = g_strdup(group);
    c->topics = g_new0(char *, n + 1);
    for (guint i = 0; i < n; i++) {
        c->topics[i] = g_strdup(topics[i]);
    }
    c->parts = g_memdup2(partitions, sizeof(gint32) * MAX(n, 1u));
    c->n = n;
    c->to_earliest = to_earliest;
    run(c, callback, user_data);
}

gboolean sm_changes_finish(GAsyncResult *result, GError **error)
{
    return g_task_propagate_boolean(G_TASK(result), error);
}
