/* sm-replica-bar.h: a partition's replicas drawn as bars, one a row in
 * assignment order: each replica's log from the partition's log start to
 * its LEO, the HW as a line across them, the leader marked with a star.
 * In-sync replicas are solid, out-of-sync ones hatched with a dashed
 * outline, so that the two differ without colour; the accessible label says
 * it in words ("replica 2: out of sync, 1,204 behind the high watermark").
 *
 * @locality GTK main thread */
#pragma once

#include <gtk/gtk.h>

#include "sm-items.h"

G_BEGIN_DECLS

#define SM_TYPE_REPLICA_BAR (sm_replica_bar_get_type())
G_DECLARE_FINAL_TYPE(SmReplicaBar, sm_replica_bar, SM, REPLICA_BAR, GtkWidget)

/* (transfer full) */
GtkWidget *sm_replica_bar_new(void);
/* follows partition's "changed" until another is set; NULL: none */
void sm_replica_bar_set_partition(SmReplicaBar *self, SmPartition *partition);
/* (transfer none) */
SmPartition *sm_replica_bar_get_partition(SmReplicaBar *self);
/* (transfer none) what the accessible label says, "" without a partition */
const char *sm_replica_bar_get_description(SmReplicaBar *self);

G_END_DECLS
