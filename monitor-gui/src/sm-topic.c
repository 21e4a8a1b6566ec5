/* sm-topic.c: SmTopic (sm-topic.h). */
#include "sm-topic.h"

#include <string.h>

G_DEFINE_FINAL_TYPE(SmTopic, sm_topic, G_TYPE_OBJECT)

static guint changed_signal;

void sm_topic_emit_changed(SmTopic *self)
{
    g_signal_emit(self, changed_signal, 0);
}

static void sm_topic_finalize(GObject *object)
{
    SmTopic *self = SM_TOPIC(object);
    g_free(self->name);
    g_ptr_array_unref(self->parts);
    g_clear_object(&self->partitions);
    g_clear_pointer(&self->configs, g_ptr_array_unref);
    g_free(self->leader_throttled);
    g_free(self->follower_throttled);
    G_OBJECT_CLASS(sm_topic_parent_class)->finalize(object);
}

static void sm_topic_class_init(SmTopicClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_topic_finalize;
    changed_signal = g_signal_new("changed", SM_TYPE_TOPIC, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                  G_TYPE_NONE, 0);
}

static void sm_topic_init(SmTopic *self)
{
    self->min_insync_replicas = -1;
    self->configs_from = -1;
    self->parts = g_ptr_array_new_with_free_func(g_object_unref);
    self->partitions = g_list_store_new(SM_TYPE_PARTITION);
}

GListModel *sm_topic_get_partitions(SmTopic *self)
{
    return G_LIST_MODEL(self->partitions);
}

char *sm_topic_format_configs(const SmTopic *self)
{
    if (self->configs == NULL) {
        return NULL;
    }
    if (self->configs->len == 0) {
        return g_strdup("none set");
    }
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < self->configs->len; i++) {
        g_string_append_printf(s, "%s%s", i > 0 ? "  ·  " : "", (const char *)self->configs->pdata[i]);
    }
    return g_string_free(s, FALSE);
}

/* the brokers of one partition in a throttled-replicas list, appended to s
 * after `what` ("leader"); FALSE when the list names none of its replicas */
static gboolean throttled_list(GString *s, const char *what, const char *list, gint32 partition)
{
    if (list == NULL) {
        return FALSE;
    }
    g_autofree char *all = g_strstrip(g_strdup(list));
    if (strcmp(all, "*") == 0) {
        g_string_append_printf(s, "%s%s all", s->len > 0 ? "; " : "", what);
        return TRUE;
    }
    g_auto(GStrv) items = g_strsplit(all, ",", -1);
    GString *ids = g_string_new(NULL);
    for (guint i = 0; items[i] != NULL; i++) {
        g_auto(GStrv) pb = g_strsplit(g_strstrip(items[i]), ":", 3);
        guint64 p = 0;
        guint64 b = 0;
        if (g_strv_length(pb) == 2 &&
            g_ascii_string_to_unsigned(pb[0], 10, 0, G_MAXINT32, &p, NULL) &&
            g_ascii_string_to_unsigned(pb[1], 10, 0, G_MAXINT32, &b, NULL) &&
            (gint32)p == partition) {
            g_string_append_printf(ids, "%s%d", ids->len > 0 ? ", " : "", (int)b);
        }
    }
    gboolean any = ids->len > 0;
    if (any) {
        g_string_append_printf(s, "%s%s %s", s->len > 0 ? "; " : "", what, ids->str);
    }
    g_string_free(ids, TRUE);
    return any;
}

char *sm_topic_throttled_on(const SmTopic *self, gint32 partition)
{
    GString *s = g_string_new(NULL);
    gboolean any = throttled_list(s, "leader", self->leader_throttled, partition);
    any = throttled_list(s, "follower", self->follower_throttled, partition) || any;
    if (!any) {
        g_string_free(s, TRUE);
        return NULL;
    }
    return g_string_free(s, FALSE);
}
