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
    self->parts = g_ptr_array_new_with_free_func(g_object_unref);
    self->partitions = g_list_store_new(SM_TYPE_PARTITION);
}

GListModel *sm_topic_get_partitions(SmTopic *self)
{
    return G_LIST_MODEL(self->partitions);
}
