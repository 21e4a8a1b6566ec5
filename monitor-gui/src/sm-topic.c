/* sm-topic.c: SmTopic (sm-topic.h). */
#include "sm-topic.h"

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
