/* sm-window.h: samsa-monitor's main window: the cluster, topics,
 * partitions (with the replica bars), groups and events of one SmCluster.
 *
 * The window flushes the model once a frame (once an idle while it is not
 * drawn) and shows the timeline's alerts as toasts.
 *
 * @locality GTK main thread */
#pragma once

#include <adwaita.h>

#include "sm-chart.h"
#include "sm-client.h"
#include "sm-cluster.h"

G_BEGIN_DECLS

#define SM_TYPE_WINDOW (sm_window_get_type())
G_DECLARE_FINAL_TYPE(SmWindow, sm_window, SM, WINDOW, AdwApplicationWindow)

typedef struct {
    guint flushes;
    guint rows;         /* rows changed, over every flush */
    gint64 total_us;    /* time in sm_cluster_flush (the rows' handlers included) */
    gint64 max_us;
} SmFlushStats;

/* Construct-only properties: "cluster" (the SmCluster shown; an empty one
 * of its own when not given) and "client" (the SmClient feeding it, whose
 * status the window shows; NULL: a model fed by other means). The window
 * is wired to both in constructed(), so g_object_new alone gives a whole
 * window. */

/* (transfer full) app may be NULL (tests); client may be NULL */
SmWindow *sm_window_new(GtkApplication *app, SmCluster *cluster, SmClient *client);
/* the partitions page of topic */
void sm_window_show_topic(SmWindow *self, const char *topic);
/* "cluster", "topics", "partitions", "groups", "transactions", "moves",
 * "quotas", "messages" or "events" */
void sm_window_show_page(SmWindow *self, const char *name);
/* the groups page with group chosen: its members shown below */
void sm_window_show_group(SmWindow *self, const char *group);
/* The changes, each behind a confirmation (sm-changes.h: over the Kafka
 * protocol with libsamsa): each opens its dialog, prefilled, and returns it
 * (transfer none); its "create", "delete" or "reset" response makes the
 * change, and a toast says how it went. The buttons of the topics and
 * groups pages open them for the chosen topic or group. */
AdwMessageDialog *sm_window_confirm_create_topic(SmWindow *self, const char *name,
                                                 gint32 partitions, gint16 replication_factor);
AdwMessageDialog *sm_window_confirm_delete_topic(SmWindow *self, const char *topic);
AdwMessageDialog *sm_window_confirm_reset_offsets(SmWindow *self, const char *group,
                                                  gboolean to_earliest);
/* An operator's abort of transactional id's open transaction, behind its
 * confirmation (sm_confirm_abort_transaction: through the admin API of
 * its coordinator); NULL (and a toast) when the model knows no such id.
 * The transactions page's button opens it for the chosen row. */
AdwMessageDialog *sm_window_confirm_abort_transaction(SmWindow *self, const char *id);
/* (transfer none) the transactions page's column view, for tests */
GtkWidget *sm_window_get_transactions_view(SmWindow *self);
/* (transfer none) */
SmCluster *sm_window_get_cluster(SmWindow *self);
/* (transfer none) the cluster page's chart of kind, or the groups page's
 * lag chart (SM_CHART_LAG) */
GtkWidget *sm_window_get_chart(SmWindow *self, SmChartKind kind);
/* (transfer none) the chosen group's members, for tests */
GtkWidget *sm_window_get_members_view(SmWindow *self);
/* (transfer none) */
const SmFlushStats *sm_window_get_flush_stats(SmWindow *self);
/* (transfer none) the partitions column view, for tests */
GtkWidget *sm_window_get_partitions_view(SmWindow *self);
/* (transfer none) the cluster page's list of partitions that need
 * attention (under-replicated, under min ISR, offline) and its expander */
GtkWidget *sm_window_get_problems(SmWindow *self);
/* the summary of the cluster page as shown (transfer none) */
const char *sm_window_get_health_text(SmWindow *self);

G_END_DECLS
