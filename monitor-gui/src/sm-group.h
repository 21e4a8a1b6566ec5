/* sm-group.h: a consumer group with its committed offsets, lag and
 * members, a row of the groups page.
 *
 * A plain record: SmCluster (sm-cluster.c) alone writes its fields, everyone
 * else reads them. It emits "changed" (no arguments) at most once per model
 * flush when any field moved, so a cell binds to one signal instead of a
 * notify per field.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include "sm-member.h"
#include "sm-series.h"
#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
    char *topic;
    gint32 partition;
    gint64 committed_offset;
    gint64 high_watermark;
    gint64 lag;
} SmGroupOffset;

#define SM_TYPE_GROUP (sm_group_get_type())
G_DECLARE_FINAL_TYPE(SmGroup, sm_group, SM, GROUP, GObject)

struct _SmGroup {
    GObject parent_instance;
    char *group_id;
    char *state;
    char *protocol;
    gint32 generation;
    gint32 members;
    gint32 coordinator;
    gint64 lag;
    GArray *offsets;         /* SmGroupOffset */
    GListStore *member_list; /* SmMember, the group document's order */
    SmSeries lag_history;    /* the total lag, one point per group document */
};

/* emits "changed" (sm_cluster_flush) */
void sm_group_emit_changed(SmGroup *self);

G_END_DECLS
