/*
 * samsa-broker: the controller's leader elections as pure functions (Kafka
 * 2.0's PartitionLeaderElectionAlgorithms, core/src/main/scala/kafka/
 * controller/PartitionStateMachine.scala): a partition's facts in, its
 * leader out, no ZooKeeper and no controller state, so a unit test calls
 * them directly (tests/broker/test_leader_election.c).
 * @locality any thread
 */
#ifndef SAMSA_BROKER_CLUSTER_LEADER_ELECTION_H
#define SAMSA_BROKER_CLUSTER_LEADER_ELECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an election looks at: broker ids, none owned. `live` holds the
 * replicas whose broker is alive (Kafka's liveReplicas: any order, ids
 * outside the assignment are ignored); `shutting` the brokers in a
 * controlled shutdown. */
struct br_election {
    const int32_t *assignment; /* in order: the first is the preferred leader */
    size_t nassignment;
    const int32_t *isr;
    size_t nisr;
    const int32_t *live;
    size_t nlive;
    const int32_t *shutting;
    size_t nshutting;
};

/* No leader: the partition stays offline. */
#define BR_NO_LEADER (-1)

/*
 * Offline partition election (offlinePartitionLeaderElection): the first
 * replica in assignment order that is live and in the ISR; a broker shutting
 * down only when no other such replica exists (Samsa's addition: Kafka 2.0
 * does not look at shutting brokers here, and a leader it picks among them
 * moves again at once). With none, and `unclean`, the first live replica,
 * and *was_unclean is set; otherwise BR_NO_LEADER.
 */
int32_t br_elect_offline(const struct br_election *e, bool unclean, bool *was_unclean);

/* Controlled shutdown election (controlledShutdownPartitionLeaderElection):
 * the first replica in assignment order that is live, in the ISR and not
 * shutting down; else BR_NO_LEADER. */
int32_t br_elect_controlled_shutdown(const struct br_election *e);

/* Preferred replica election (preferredReplicaPartitionLeaderElection): the
 * first assigned replica when it is live and in the ISR; else
 * BR_NO_LEADER. */
int32_t br_elect_preferred(const struct br_election *e);

#endif
