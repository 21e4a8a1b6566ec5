/* sm-transaction.c: SmTransaction (sm-transaction.h). */
#include "sm-transaction.h"

G_DEFINE_FINAL_TYPE(SmTransaction, sm_transaction, G_TYPE_OBJECT)

static guint changed_signal;

void sm_transaction_emit_changed(SmTransaction *self)
{
    g_signal_emit(self, changed_signal, 0);
}

gboolean sm_transaction_is_open(const SmTransaction *self)
{
    return g_strcmp0(self->state, "Ongoing") == 0 ||
           g_strcmp0(self->state, "PrepareCommit") == 0 ||
           g_strcmp0(self->state, "PrepareAbort") == 0;
}

static void sm_transaction_finalize(GObject *object)
{
    SmTransaction *self = SM_TRANSACTION(object);
    g_free(self->transactional_id);
    g_free(self->state);
    g_free(self->partitions);
    G_OBJECT_CLASS(sm_transaction_parent_class)->finalize(object);
}

static void sm_transaction_class_init(SmTransactionClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_transaction_finalize;
    changed_signal = g_signal_new("changed", SM_TYPE_TRANSACTION, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                  NULL, G_TYPE_NONE, 0);
}

static void sm_transaction_init(SmTransaction *self)
{
    self->producer_id = -1;
    self->producer_epoch = -1;
    self->age_ms = -1;
    self->coordinator = -1;
    self->partitions = g_strdup("");
}
