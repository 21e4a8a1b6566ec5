/* sm-group.c: SmGroup (sm-group.h). */
#include "sm-group.h"

G_DEFINE_FINAL_TYPE(SmGroup, sm_group, G_TYPE_OBJECT)

static guint changed_signal;

void sm_group_emit_changed(SmGroup *self)
{
    g_signal_emit(self, changed_signal, 0);
}

static void clear_offset(gpointer p)
{
    g_free(((SmGroupOffset *)p)->topic);
}

static void sm_group_finalize(GObject *object)
{
    SmGroup *self = SM_GROUP(object);
    g_free(self->group_id);
    g_free(self->state);
    g_free(self->protocol);
    g_array_unref(self->offsets);
    g_object_unref(self->member_list);
    G_OBJECT_CLASS(sm_group_parent_class)->finalize(object);
}

static void sm_group_class_init(SmGroupClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_group_finalize;
    changed_signal = g_signal_new("changed", SM_TYPE_GROUP, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                  G_TYPE_NONE, 0);
}

static void sm_group_init(SmGroup *self)
{
    self->coordinator = -1;
    self->offsets = g_array_new(FALSE, TRUE, sizeof(SmGroupOffset));
    g_array_set_clear_func(self->offsets, clear_offset);
    self->member_list = g_list_store_new(SM_TYPE_MEMBER);
}
