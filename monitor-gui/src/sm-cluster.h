/* sm-cluster.h: samsa-monitor's model of one cluster, assembled from every
 * broker's admin API (broker/README.md, "The admin API").
 *
 * Documents (/v1/cluster, /v1/topics, /v1/topics/{t}/partitions,
 * /v1/partitions, /v1/groups, /v1/groups/{g}, /v1/transactions,
 * /v1/reassignments, /v1/quotas, a broker's
 * own /v1/brokers/{id} for its totals) and stream messages go in as
 * JSON; GListModels of brokers, topics (each with its partitions), groups,
 * transactional ids and timeline events come out. Per partition the model keeps the view with the
 * highest leader epoch, and at one epoch the leader's own view (every
 * replica's LEO) over any other broker's metadata: that is how the streams
 * of several brokers make one cluster view.
 *
 * Changes are batched: applying JSON only marks rows; sm_cluster_flush()
 * emits one "changed" per row that moved and one items-changed per list
 * that grew. "dirty" says a flush is due (the window flushes once a frame).
 *
 * No GTK here: the model runs and is tested without a display.
 *
 * @locality one thread (the GTK main thread in samsa-monitor) */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "sm-items.h"
#include "sm-progress.h"

G_BEGIN_DECLS

#define SM_TYPE_CLUSTER (sm_cluster_get_type())
G_DECLARE_FINAL_TYPE(SmCluster, sm_cluster, SM, CLUSTER, GObject)

typedef struct {
    char *cluster_id;
    gint32 controller;
    guint brokers;
    guint brokers_alive;
    guint topics;
    guint partitions;
    guint under_replicated;
    guint under_min_isr;
    guint offline;
} SmClusterSummary;

/* (transfer full) */
SmCluster *sm_cluster_new(void);

/* (transfer none) lists of SmBroker (by id), SmTopic (by name), SmGroup,
 * SmEvent (newest first, at most 1,000) */
GListModel *sm_cluster_get_brokers(SmCluster *self);
GListModel *sm_cluster_get_topics(SmCluster *self);
GListModel *sm_cluster_get_groups(SmCluster *self);
GListModel *sm_cluster_get_events(SmCluster *self);
/* (transfer none) SmTransaction, by id: every coordinator's latest
 * /v1/transactions (an id its coordinator no longer lists is gone) */
GListModel *sm_cluster_get_transactions(SmCluster *self);
/* (transfer none) the partitions being moved (SmPartition, by topic and
 * partition), from /v1/reassignments and the partitions' "reassignment":
 * a partition no document lists any more leaves it */
GListModel *sm_cluster_get_moves(SmCluster *self);
/* (transfer none) /v1/quotas: the client quota entities in force
 * (SmQuota, by user and client id; one no broker lists any more goes)
 * and each broker's rates measured for them (SmQuotaRate, by broker,
 * type, user, client id; the broker's next document replaces its own) */
GListModel *sm_cluster_get_quotas(SmCluster *self);
GListModel *sm_cluster_get_quota_rates(SmCluster *self);
/* (transfer full) the alive brokers' Kafka listeners, "host:port,host:port"
 * (what a Kafka client's bootstrap.servers takes); NULL when none is alive */
char *sm_cluster_bootstrap_servers(SmCluster *self);

/* (transfer none) NULL when unknown */
SmBroker *sm_cluster_find_broker(SmCluster *self, gint32 id);
SmTopic *sm_cluster_find_topic(SmCluster *self, const char *name);
SmPartition *sm_cluster_find_partition(SmCluster *self, const char *topic, gint32 partition);
SmTransaction *sm_cluster_find_transaction(SmCluster *self, const char *id);

/* (transfer none) as of the last flush */
const SmClusterSummary *sm_cluster_get_summary(SmCluster *self);
/* (transfer none) the cluster's messages and bytes a second: per round of
 * the brokers' /v1/brokers/{id} readings, the sum of every broker's rate
 * read within one and a half of its intervals (each SmBroker has its own) */
const SmRates *sm_cluster_get_rates(SmCluster *self);

/* One document or stream message; what it is comes from its keys. Returns
 * FALSE with error set when the text is not a JSON object. Untrusted input:
 * missing or mistyped fields read as unknown, never crash. */
gboolean sm_cluster_apply_text(SmCluster *self, const char *text, gssize len, GError **error)
    G_GNUC_WARN_UNUSED_RESULT;
void sm_cluster_apply_object(SmCluster *self, JsonObject *obj);

/* applies a digested progress message, as sm_cluster_apply_object would
 * the message it came from */
void sm_cluster_apply_progress(SmCluster *self, const SmProgress *pr);

/* The monitor no longer hears broker id (its link lost, or silent: a
 * broker paused or killed): its rates end now with a gap instead of
 * showing the last reading until the next one; the next reading of its
 * totals starts afresh. A broker gone (broker_down, alive false) is
 * treated the same. */
void sm_cluster_broker_unheard(SmCluster *self, gint32 id);

/* Emits the batched changes; returns the number of rows that changed. */
guint sm_cluster_flush(SmCluster *self);
/* TRUE when changes wait for a flush */
gboolean sm_cluster_is_dirty(SmCluster *self);
/* TRUE while sm_cluster_flush changes the models (before "flushed"): a
 * view's selection that moves then moved with its model, not by a user. */
gboolean sm_cluster_is_flushing(SmCluster *self);

/* Signals:
 *   "dirty"            ()                       the first change after a flush
 *   "flushed"          ()                       after each flush
 *   "event"            (SmEvent *)              a new timeline event, at flush
 *   "admin-url"        (gint id, const char *)  a broker's admin URL learned
 *   "wants-partitions" (gint id, const char *topic)
 *        the model needs topic's partitions document from broker id (a new
 *        topic, a leader it had not seen lead) */

G_END_DECLS
