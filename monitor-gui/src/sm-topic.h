/* sm-topic.h: a topic with its partitions, a row of the topics page.
 *
 * A plain record: SmCluster (sm-cluster.c) alone writes its fields, everyone
 * else reads them. It emits "changed" (no arguments) at most once per model
 * flush when any field moved, so a cell binds to one signal instead of a
 * notify per field.
 *
 * @locality the thread that owns the SmCluster (the GTK main thread) */
#pragma once

#include "sm-partition.h"
#include <gio/gio.h>

G_BEGIN_DECLS

#define SM_TYPE_TOPIC (sm_topic_get_type())
G_DECLARE_FINAL_TYPE(SmTopic, sm_topic, SM, TOPIC, GObject)

struct _SmTopic {
    GObject parent_instance;
    char *name;
    gboolean internal;
    gint32 min_insync_replicas; /* -1 unknown */
    GPtrArray *parts;           /* SmPartition *, indexed by partition number */
    GListStore *partitions;     /* the same, as a list model (synced at flush) */
    /* derived at each flush */
    guint replication_factor;
    guint under_replicated;
    guint under_min_isr;
    guint offline;
    gint64 size_bytes;
    gint64 hw_sum;
    double messages_per_s; /* from the HWs' sum between flushes */
    gint64 rate_at_us;
    gint64 rate_hw_sum;
    /* /v1/topics/{t}'s configs, "name = value" sorted by name; NULL: not
     * read yet */
    GPtrArray *configs;
    gint32 configs_from; /* the broker whose configs they are; -1: none had them */
    /* its configs' leader.replication.throttled.replicas and
     * follower.replication.throttled.replicas as set ("0:1,1:2", "*");
     * NULL: not set */
    char *leader_throttled;
    char *follower_throttled;
};

/* (transfer full) the configs for people, "retention.ms = 86400000 ·
 * cleanup.policy = delete"; "none set" when empty; NULL when not read */
char *sm_topic_format_configs(const SmTopic *self);

/* (transfer full) the replication throttles of the topic's configs on
 * one partition: "leader 0, 1; follower 3", "leader all" for "*"; NULL
 * when none names it. Kafka 2.0's format (LogConfig's
 * LeaderReplicationThrottledReplicasProp): "*" or a list of
 * partition:broker. */
char *sm_topic_throttled_on(const SmTopic *self, gint32 partition);

/* (transfer none) the topic's partitions, in partition order */
GListModel *sm_topic_get_partitions(SmTopic *self);

/* emits "changed" (sm_cluster_flush) */
void sm_topic_emit_changed(SmTopic *self);

G_END_DECLS
