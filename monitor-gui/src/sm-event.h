/* sm-event.h: a change in the cluster (ISR, leader, broker, controller,
 * topic), a row of the events page. Written by SmCluster (sm-cluster.c) when
 * made, never changed after.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
    SM_EVENT_ISR_SHRINK,
    SM_EVENT_ISR_EXPAND,
    SM_EVENT_ISR_CHANGE,
    SM_EVENT_LEADER_CHANGE,
    SM_EVENT_BROKER_DOWN,
    SM_EVENT_BROKER_UP,
    SM_EVENT_CONTROLLER_CHANGE,
    SM_EVENT_TOPIC_CREATED,
    SM_EVENT_TOPIC_DELETED,
} SmEventKind;

#define SM_TYPE_EVENT (sm_event_get_type())
G_DECLARE_FINAL_TYPE(SmEvent, sm_event, SM, EVENT, GObject)

struct _SmEvent {
    GObject parent_instance;
    SmEventKind kind;
    gint64 time_ms;
    gint32 reported_by;
    char *topic; /* NULL for broker events */
    gint32 partition;
    char *text; /* "watched-0: ISR shrank to 0, 1 (2 out)" */
};

const char *sm_event_kind_name(SmEventKind kind);
/* serious enough for a toast */
gboolean sm_event_is_alert(const SmEvent *self);

G_END_DECLS
