/* sm-broker.c: SmBroker (sm-broker.h). */
#include "sm-broker.h"

G_DEFINE_FINAL_TYPE(SmBroker, sm_broker, G_TYPE_OBJECT)

static guint changed_signal;

void sm_broker_emit_changed(SmBroker *self)
{
    g_signal_emit(self, changed_signal, 0);
}

static void sm_broker_finalize(GObject *object)
{
    SmBroker *self = SM_BROKER(object);
    g_free(self->host);
    g_free(self->admin_url);
    g_free(self->rack);
    g_free(self->link);
    G_OBJECT_CLASS(sm_broker_parent_class)->finalize(object);
}

static void sm_broker_class_init(SmBrokerClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = sm_broker_finalize;
    changed_signal = g_signal_new("changed", SM_TYPE_BROKER, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                  G_TYPE_NONE, 0);
}

static void sm_broker_init(SmBroker *self)
{
    self->id = -1;
}
