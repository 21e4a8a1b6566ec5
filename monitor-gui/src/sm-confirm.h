/* sm-confirm.h: the confirmations of the changes the monitor makes
 * (sm-changes.h: over the Kafka protocol with libsamsa): topic create and
 * delete, a group's offsets reset; and a hanging transaction's abort,
 * through the admin API (sm-client.h). Each opens its dialog (AdwMessageDialog,
 * Cancel the default, the destructive response never it), prefilled, and
 * returns it (transfer none); its "create", "delete" or "reset" response
 * makes the change on the cluster's alive brokers, and a toast says how it
 * went.
 *
 * @locality GTK main thread */
#pragma once

#include <adwaita.h>

#include "sm-client.h"
#include "sm-cluster.h"

G_BEGIN_DECLS

/* what a confirmation belongs to: its window, where its toasts go, and the
 * cluster it changes (all referenced by the dialog while it is open) */
typedef struct {
    GtkWindow *parent;
    AdwToastOverlay *toasts;
    SmCluster *cluster;
} SmConfirmOn;

AdwMessageDialog *sm_confirm_create_topic(const SmConfirmOn *on, const char *name,
                                          gint32 partitions, gint16 replication_factor);
AdwMessageDialog *sm_confirm_delete_topic(const SmConfirmOn *on, const char *topic);
AdwMessageDialog *sm_confirm_reset_offsets(const SmConfirmOn *on, const char *group,
                                           gboolean to_earliest);
/* An operator's abort of txn's open transaction, through the admin API of
 * its coordinator (sm_client_abort_transaction_async; client NULL: a
 * toast says there is no link); "abort" is the destructive response. */
AdwMessageDialog *sm_confirm_abort_transaction(const SmConfirmOn *on, SmClient *client,
                                               const SmTransaction *txn);
/* a toast of 10 s in toasts */
void sm_confirm_toast(AdwToastOverlay *toasts, const char *text);

G_END_DECLS
