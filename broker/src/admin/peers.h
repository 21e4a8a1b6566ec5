/*
 * samsa-broker: the high watermarks of partitions this broker does not
 * host, read from their leaders' admin APIs, so that a group's lag is
 * known for every partition it committed, not only for those whose
 * replicas live on its coordinator.
 *
 * Only a partition's replicas know its HW (ListOffsets answers it from the
 * leader). A group's coordinator hosts the group's partition of
 * __consumer_offsets, not the partitions the group reads: for those the
 * admin thread asks each leader's `/v1/partitions` (every partition it
 * leads, with its HW), at most once every BR_ADMIN_PEERS_REFRESH_US and
 * only while someone asks for groups or metrics. Values older than
 * BR_ADMIN_PEERS_MAX_AGE_US are not used.
 *
 * The same goes for a topic's configs: a broker keeps the configs of the
 * topics it hosts a replica of (Kafka 2.0's brokers too: its
 * TopicConfigHandler updates only the logs a broker has), so for another
 * topic /v1/topics/{topic} asks a broker that hosts one (its partitions'
 * leaders in order) for its /v1/topics/{topic} and shows its `configs`.
 * A peer's read carries BR_ADMIN_PEER_HEADER, and a request that carries
 * it is answered from this broker's own snapshot only, so reads never
 * chain from broker to broker.
 *
 * @locality the admin thread (its GMainContext must be the thread default
 * when br_admin_peers_new is called)
 */
#ifndef SAMSA_BROKER_ADMIN_PEERS_H
#define SAMSA_BROKER_ADMIN_PEERS_H

#include <gio/gio.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "admin/snapshot.h"

#define BR_ADMIN_PEERS_REFRESH_US ((gint64)2 * G_USEC_PER_SEC)
#define BR_ADMIN_PEERS_MAX_AGE_US ((gint64)30 * G_USEC_PER_SEC)
#define BR_ADMIN_PEERS_TIMEOUT_S 3
#define BR_ADMIN_PEER_HEADER "X-Samsa-Admin-Peer"

struct br_admin_peers;

/* refreshed(ud) is called when a refresh br_admin_peers_refresh started
 * is over (every read answered, failed or timed out). token: the bearer
 * token sent to the other brokers (this cluster's admin.auth.token), or
 * NULL. tls_db (transfer none): the CA that signs the other brokers'
 * https admin listeners (admin.ssl.truststore.location), NULL for the
 * system's. */
struct br_admin_peers *br_admin_peers_new(const char *token, GTlsDatabase *tls_db,
                                          void (*refreshed)(gpointer), gpointer ud);

/* Cancels the reads under way (refreshed is not called again) and frees p.
 * NULL is a no-op. */
void br_admin_peers_free(struct br_admin_peers *p);

/* When snap's groups have committed offsets of partitions led by another
 * broker whose HW p does not have fresh, and no refresh ran in the last
 * BR_ADMIN_PEERS_REFRESH_US, starts reading them. Returns TRUE while a
 * refresh is under way (refreshed will be called), FALSE when there is
 * nothing to wait for. */
gboolean br_admin_peers_refresh(struct br_admin_peers *p, const struct br_snapshot *snap);

/* The HW of topic-partition as its leader last said it (no older than
 * BR_ADMIN_PEERS_MAX_AGE_US), and that leader's id; FALSE when not known. */
gboolean br_admin_peers_hw(const struct br_admin_peers *p, const char *topic, int32_t partition,
                           gint64 *hw, gint32 *leader);

/* When snap's topic `topic` is one this broker hosts no replica of (it has
 * no configs) and no read of its configs started in the last
 * BR_ADMIN_PEERS_REFRESH_US, starts reading them from a live broker that
 * leads one of its partitions. Returns TRUE while reads are under way
 * (refreshed will be called), FALSE when there is nothing to wait for. */
gboolean br_admin_peers_refresh_topic(struct br_admin_peers *p, const struct br_snapshot *snap,
                                      const char *topic);

/* The configs of `topic` as a broker hosting it last said them (no older
 * than BR_ADMIN_PEERS_MAX_AGE_US): a JSON object of name -> value (owned
 * by p, valid until p's next refresh) and the id of that broker; NULL when
 * not known. */
JsonObject *br_admin_peers_configs(const struct br_admin_peers *p, const char *topic,
                                   gint32 *from);

#endif
