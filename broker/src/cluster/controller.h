/*
 * samsa-broker: the controller, Kafka 2.0's KafkaController: one broker of
 * the cluster, elected through the ephemeral /controller znode, decides who
 * leads each partition and tells the brokers.
 *
 * Every broker starts one. It runs on a thread of its own with a ZooKeeper
 * session of its own, as Kafka's controller runs on its own event thread:
 * ZooKeeper's watches only queue events, and the thread handles them one at
 * a time with ZooKeeper's synchronous calls, so its decisions read as the
 * sequences Kafka's controller takes (kafka-replication.md §2). It never
 * touches the broker's state: it talks to the brokers, its own included,
 * over the Kafka protocol, one sender thread per live broker with one
 * request in flight, each request retried until it is answered or the
 * broker is gone (Kafka's ControllerChannelManager).
 *
 * What the active controller does (§2):
 * - failover: /controller_epoch read and incremented with a conditional
 *   set; watches on /brokers/ids, /brokers/topics and
 *   /isr_change_notification; every broker, topic, assignment and
 *   partition state read; UpdateMetadata to every live broker before any
 *   LeaderAndIsr; LeaderAndIsr to the live replicas of each partition
 *   that has a state; partitions without a state or without a live leader
 *   made online;
 * - a new partition (a topic's assignment with no state znode): the first
 *   live assigned replica leads, the live assigned replicas are the ISR,
 *   leader epoch 0; the state znode created; LeaderAndIsr (is_new) to the
 *   ISR;
 * - a broker gone (its registration's session ended): the partitions it
 *   led get the first live ISR member in assignment order as leader, epoch
 *   + 1; it leaves the ISR of those it followed (never emptying an ISR: the
 *   last member stays, leader -1 when it led: LEADER_NOT_AVAILABLE);
 *   unclean.leader.election.enable (per topic from /config/topics, else the
 *   broker's) allows the first live assigned replica when no ISR member
 *   lives; every write of a state znode is conditional on its version;
 * - a broker back: UpdateMetadata to all, LeaderAndIsr for its replicas,
 *   leaderless partitions it can lead made online;
 * - an ISR change notification (a leader changed an ISR): the states
 *   re-read, UpdateMetadata to all, the notifications deleted;
 * - a topic marked for deletion (/admin/delete_topics/<t>, Kafka's
 *   TopicDeletionManager): UpdateMetadata with leader -2
 *   (LeaderDuringDelete) for its partitions to every live broker, which
 *   forget them; StopReplica with delete_partitions to each broker holding
 *   a replica, its answer awaited; a replica on a broker that is down waits
 *   for the broker to come back (ineligible, in Kafka's words), as does one
 *   whose broker answered with an error or went away before it answered;
 *   once every replica's broker deleted it, /brokers/topics/<t> (its
 *   partitions' states with it), /config/topics/<t> and the marker are
 *   deleted, in that order. No LeaderAndIsr goes out for a topic being
 *   deleted. With delete.topic.enable false the marker is deleted and the
 *   topic kept, as Kafka 2.0 does; a marker naming no topic is deleted;
 * - partitions added to a topic (its assignment's data watch) are made as
 *   a new topic's are;
 * - every leader.imbalance.check.interval.seconds with
 *   auto.leader.rebalance.enable (Kafka's
 *   checkAndTriggerAutoLeaderRebalance): a broker of which more than
 *   leader.imbalance.per.broker.percentage of the partitions it is the
 *   preferred (first assigned) replica of are led by others gets back
 *   those where it is live and in sync (the ISR kept, the epoch bumped);
 * - a preferred leader election asked for (/admin/preferred_replica_election,
 *   written by `samsa leaders elect-preferred` or by hand; Kafka's
 *   PreferredReplicaLeaderElection event): each partition it lists gets its
 *   preferred replica as leader when that one is live and in sync, as
 *   above, then the znode is deleted; a controller elected while it exists
 *   finishes it (onControllerFailover);
 * - a partition reassignment asked for (/admin/reassign_partitions, Kafka's
 *   JSON, written by `samsa reassign execute` or
 *   kafka-reassign-partitions.sh; KafkaController.onPartitionReassignment):
 *   the assignment grows to the new replicas followed by the old ones, the
 *   leader epoch is bumped and LeaderAndIsr sent to all (the new replicas
 *   start fetching); once the new replicas are all in the ISR (the state
 *   znode watched), the leader moves to the first live in-sync new replica
 *   if it is not one, the old replicas leave the ISR and get StopReplica
 *   and StopReplica with delete_partitions, the assignment becomes the new
 *   replicas, and the partition leaves the znode (deleted when empty). A
 *   move of a missing partition, to a broker not live, or onto the
 *   replicas it has is refused and taken out of the znode. A controller
 *   elected meanwhile resumes every move from ZooKeeper's state.
 * A controller that finds /controller taken by another, or its epoch
 * moved, stops acting (resigns); one whose session expired opens another
 * and stands for election again.
 *
 * @locality br_controller_start and br_controller_stop: one thread (the
 * broker's main thread); the rest runs on the controller's threads.
 */
#ifndef SAMSA_BROKER_CLUSTER_CONTROLLER_H
#define SAMSA_BROKER_CLUSTER_CONTROLLER_H

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>

#include <samsa-protocol/err.h>

#include "cluster/metadata.h"

#define BR_CONTROLLER_CONNECT_MAX 4096

struct br_controller_config {
    int32_t broker_id;
    char zk_connect[BR_CONTROLLER_CONNECT_MAX + 1]; /* zookeeper.connect, chroot included */
    int32_t session_timeout_ms;                     /* zookeeper.session.timeout.ms */
    int32_t socket_timeout_ms;                      /* controller.socket.timeout.ms */
    bool unclean_leader_election;                   /* the broker's default */
    bool delete_topic_enable;                       /* delete.topic.enable */
    bool auto_leader_rebalance;                     /* auto.leader.rebalance.enable */
    int32_t leader_imbalance_percentage;            /* leader.imbalance.per.broker.percentage */
    int64_t leader_imbalance_check_ms;              /* leader.imbalance.check.interval.seconds */
};

struct br_controller;

/* Starts the controller's thread; it connects, stands for election and
 * acts when elected. Returns 0, KP_E_NOMEM or KP_ERR_KAFKA_STORAGE_ERROR (no
 * thread). *out owned by the caller (br_controller_stop). */
KP_MUST_CHECK int br_controller_start(const struct br_controller_config *cfg,
                                      struct br_controller **out);

/* Whether this broker is the active controller now, and its epoch (any
 * thread; for logs and tests). */
bool br_controller_active(struct br_controller *c, int32_t *epoch);

/* A partition a controlled shutdown leaves with the broker (it still
 * leads it: no other in-sync replica could take it over). */
struct br_shutdown_remaining {
    char topic[BR_TOPIC_NAME_MAX + 1];
    int32_t partition;
};

/* The controller's answer to a ControlledShutdown: err (NONE,
 * NOT_CONTROLLER, BROKER_NOT_AVAILABLE) and the partitions the broker
 * still leads. Called once, on the controller's thread, or on the thread
 * that stops the controller when the request was still queued (then
 * NOT_CONTROLLER); remaining is valid during the call only. */
typedef void (*br_controlled_shutdown_done)(void *ctx, int16_t err,
                                            const struct br_shutdown_remaining *remaining,
                                            size_t n);

/*
 * Kafka 2.0's KafkaController.doControlledShutdown, queued to the
 * controller's thread: broker_id is shutting down (it is no longer chosen
 * as a leader); of each partition with more than one replica on it, one it
 * leads gets the first live, in-sync replica of its assignment that is not
 * shutting down as leader with an ISR without the shutting brokers (Kafka's
 * ControlledShutdownLeaderElectionStrategy), one it follows loses it from
 * its ISR (never emptied) and it gets StopReplica for it (delete_partitions
 * false). LeaderAndIsr goes to the replicas, then UpdateMetadata to all;
 * done reports what the broker still leads. Returns 0, or KP_E_NOMEM (done
 * is not called).
 */
KP_MUST_CHECK int br_controller_controlled_shutdown(struct br_controller *c, int32_t broker_id,
                                                    br_controlled_shutdown_done done, void *ctx);

/* Stops the senders and the thread, closes the session (its /controller
 * znode goes with it: another broker is elected) and frees. NULL is a
 * no-op. */
void br_controller_stop(struct br_controller *c);

#endif
