/* sm-changes.h: the changes the monitor makes, over the Kafka protocol
 * with libsamsa's public API (client/include/samsa/samsa.h), not through
 * the admin API (read-only: documents of the cluster's state), each on a
 * worker thread: a topic created (CreateTopics) or deleted (DeleteTopics),
 * on the controller; a consumer group's committed offsets reset to the
 * earliest or latest of each partition (OffsetCommit, as
 * kafka-consumer-groups.sh --reset-offsets --to-earliest/--to-latest
 * --execute: the coordinator takes it only while the group has no active
 * member, Kafka 2.0's GroupCoordinator.handleCommitOffsets).
 *
 * @locality the _async and _finish calls on the owner's thread */
#pragma once

#include <gio/gio.h>
#include <samsa/samsa.h>

G_BEGIN_DECLS

void sm_changes_create_topic_async(const char *bootstrap, const char *topic, gint32 partitions,
                                   gint16 replication_factor, GAsyncReadyCallback callback,
                                   gpointer user_data);
void sm_changes_delete_topic_async(const char *bootstrap, const char *topic,
                                   GAsyncReadyCallback callback, gpointer user_data);
/* partitions: "topic" names and partition numbers alike, n of them */
void sm_changes_reset_offsets_async(const char *bootstrap, const char *group,
                                    const char *const *topics, const gint32 *partitions, guint n,
                                    gboolean to_earliest, GAsyncReadyCallback callback,
                                    gpointer user_data);
/* (transfer full: samsa_consumer_destroy) a consumer of the brokers at
 * bootstrap ("host:port,..."), in group when not NULL (committing only
 * when told); NULL with error set. For a worker thread. */
samsa_consumer *sm_changes_consumer_new(const char *bootstrap, const char *group,
                                        GError **error);
/* every _async's: TRUE, or FALSE with error set to what the broker said */
gboolean sm_changes_finish(GAsyncResult *result, GError **error);

G_END_DECLS
