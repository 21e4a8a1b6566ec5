/* sm-transaction.h: a transactional id as a broker's transaction
 * coordinator knows it (its /v1/transactions, broker/README.md), a row of
 * the transactions page.
 *
 * A plain record: SmCluster (sm-cluster.c) alone writes its fields, everyone
 * else reads them. It emits "changed" (no arguments) at most once per model
 * flush when any field moved.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SM_TYPE_TRANSACTION (sm_transaction_get_type())
G_DECLARE_FINAL_TYPE(SmTransaction, sm_transaction, SM, TRANSACTION, GObject)

struct _SmTransaction {
    GObject parent_instance;
    char *transactional_id;
    char *state; /* Kafka's name: "Ongoing", "CompleteAbort", ... */
    gint64 producer_id;
    gint32 producer_epoch;
    gint32 timeout_ms;
    gint64 age_ms;      /* the open transaction's when its document was served; -1: none open */
    char *partitions;   /* the open transaction's, "orders-0, orders-2"; "" when none */
    gint32 coordinator; /* the broker whose document it is */
};

/* TRUE while a transaction is open (Ongoing, PrepareCommit, PrepareAbort) */
gboolean sm_transaction_is_open(const SmTransaction *self);
/* emits "changed" (sm_cluster_flush) */
void sm_transaction_emit_changed(SmTransaction *self);

G_END_DECLS
