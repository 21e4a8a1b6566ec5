/* sm-broker.h: a broker of the cluster, a row of the cluster page.
 *
 * A plain record: SmCluster (sm-cluster.c) alone writes its fields, everyone
 * else reads them. It emits "changed" (no arguments) at most once per model
 * flush when any field moved, so a cell binds to one signal instead of a
 * notify per field.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include "sm-series.h"
#include <gio/gio.h>

G_BEGIN_DECLS

#define SM_TYPE_BROKER (sm_broker_get_type())
G_DECLARE_FINAL_TYPE(SmBroker, sm_broker, SM, BROKER, GObject)

struct _SmBroker {
    GObject parent_instance;
    gint32 id;
    char *host;
    gint32 port;
    char *admin_url; /* NULL until a document names it */
    char *rack;      /* NULL: none */
    gboolean alive;
    gboolean controller;
    guint partitions_led; /* counted at each flush from the partitions */
    guint replicas;       /* replicas hosted, ditto */
    char *link;           /* the monitor's link to its admin API, for people */
    SmTotals totals;      /* the last reading of /v1/brokers/{id}'s totals */
    SmRates rates;        /* from the differences of its readings */
};

/* emits "changed" (sm_cluster_flush, and the link's text in sm-client.c) */
void sm_broker_emit_changed(SmBroker *self);

G_END_DECLS
