/* sm-event.c: SmEvent (sm-event.h). */
#include "sm-event.h"

G_DEFINE_FINAL_TYPE(SmEvent, sm_event, G_TYPE_OBJECT)

static void sm_event_finalize(GObject *object)
{
    SmEvent *self = SM_EVENT(object);
    g_free(self->topic);
    g_free(self->text);
    G_OBJECT_CLASS(sm_event_parent_class)->finalize(object);
}

static void sm_event_class_init(SmEventClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_event_finalize;
}

static void sm_event_init(SmEvent *self)
{
    self->partition = -1;
}

const char *sm_event_kind_name(SmEventKind kind)
{
    switch (kind) {
    case SM_EVENT_ISR_SHRINK:
        return "ISR shrink";
    case SM_EVENT_ISR_EXPAND:
        return "ISR expand";
    case SM_EVENT_ISR_CHANGE:
        return "ISR change";
    case SM_EVENT_LEADER_CHANGE:
        return "leader change";
    case SM_EVENT_BROKER_DOWN:
        return "broker gone";
    case SM_EVENT_BROKER_UP:
        return "broker up";
    case SM_EVENT_CONTROLLER_CHANGE:
        return "controller change";
    case SM_EVENT_TOPIC_CREATED:
        return "topic created";
    case SM_EVENT_TOPIC_DELETED:
        return "topic deleted";
    }
    return "event";
}

gboolean sm_event_is_alert(const SmEvent *self)
{
    return self->kind == SM_EVENT_ISR_SHRINK || self->kind == SM_EVENT_BROKER_DOWN ||
           self->kind == SM_EVENT_LEADER_CHANGE;
}
