/* sm-event.h: a change in the cluster (ISR, leader, broker, controller,
 * topic), a row of the events page, or a group of them: what one broker
 * lost (or back) brought (its going, the leaders moved off it, the ISRs it
 * left), one row with the changes under it. Written by SmCluster
 * (sm-cluster.c) only: an event when made, a group as changes join it (it
 * emits "changed" at the flush then).
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
    SM_EVENT_GROUP_LOST, /* a group: what a broker lost brought */
    SM_EVENT_GROUP_BACK, /* a group: what a broker back brought */
} SmEventKind;

#define SM_EVENT_N_KINDS (SM_EVENT_GROUP_BACK + 1)
/* a group's changes kept, the newest */
#define SM_EVENT_GROUP_MAX 1000

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
    /* a group's: "broker 2 lost: gone, 12 leader changes, 30 ISR shrinks" */
    gint32 subject;       /* the broker lost or back; -1: not a group */
    GListStore *children; /* SmEvent, newest first; NULL: not a group */
    guint counts[SM_EVENT_N_KINDS]; /* its changes of each kind, all seen */
};

/* (transfer full) a group of what broker subject lost (lost) or back
 * brought, holding first */
SmEvent *sm_event_new_group(gint32 subject, gboolean lost, SmEvent *first);
/* child joins group (referenced), newest first; its text is made again */
void sm_event_group_add(SmEvent *group, SmEvent *child);
gboolean sm_event_is_group(const SmEvent *self);
/* self's text or a change under it holds needle, case folded */
gboolean sm_event_matches(const SmEvent *self, const char *needle);
/* emits "changed" (sm_cluster_flush: a group that grew) */
void sm_event_emit_changed(SmEvent *self);

const char *sm_event_kind_name(SmEventKind kind);
/* serious enough for a toast */
gboolean sm_event_is_alert(const SmEvent *self);

G_END_DECLS
