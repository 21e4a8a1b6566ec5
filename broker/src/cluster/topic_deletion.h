/*
 * samsa-broker: the controller's topic deletion decisions as pure functions
 * (Kafka 2.0's TopicDeletionManager, core/src/main/scala/kafka/controller/
 * TopicDeletionManager.scala, with the replica states of
 * ReplicaStateMachine.scala): a topic's assignment, the brokers' liveness
 * and their answers in, whom to ask and whether the topic is done out. No
 * ZooKeeper, no sender, no controller state: controller_delete.c does the
 * writes and the sends, and a unit test calls these directly
 * (tests/broker/test_topic_deletion.c).
 *
 * Samsa keeps one state per broker holding a replica of the topic, where
 * Kafka keeps one per replica: a broker deletes all of the topic's
 * replicas it holds in one StopReplica, and its answer covers them all.
 * @locality any thread
 */
#ifndef SAMSA_BROKER_CLUSTER_TOPIC_DELETION_H
#define SAMSA_BROKER_CLUSTER_TOPIC_DELETION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a broker's part of a deletion stands (Kafka's replica states
 * ReplicaDeletionStarted, ReplicaDeletionSuccessful,
 * ReplicaDeletionIneligible), one byte each. */
enum deletion_state {
    DEL_NONE = 0,   /* StopReplica not sent yet */
    DEL_STARTED,    /* sent, not answered */
    DEL_DONE,       /* the broker deleted its replicas */
    DEL_INELIGIBLE, /* the broker is down, went, or failed: sent again when it is live */
};

/* One partition's assigned replicas (broker ids, borrowed). */
struct br_deletion_replicas {
    const int32_t *ids;
    int32_t n;
};

/* A deletion's progress, a view of the caller's arrays: brokers[k] holds
 * a replica of the topic, state[k] (an enum deletion_state) is where its
 * part stands; gen tags the deletion's StopReplica requests, so an answer
 * to another deletion's request is told apart. */
struct br_deletion_progress {
    uint64_t gen;
    const int32_t *brokers;
    uint8_t *state;
    size_t n;
};

/* The number of replicas of a topic of nparts partitions: room enough for
 * br_deletion_brokers's answer. */
size_t br_deletion_replica_count(const struct br_deletion_replicas *parts, int32_t nparts);

/* The brokers holding a replica of the topic, each once, in the order
 * they first appear in the assignment, into out (room for
 * br_deletion_replica_count); returns how many. */
size_t br_deletion_brokers(const struct br_deletion_replicas *parts, int32_t nparts, int32_t *out);

/* The partitions of the topic that broker holds a replica of, ascending,
 * into out (room for nparts): what its StopReplica names. Returns how
 * many. */
int32_t br_deletion_partitions_of(const struct br_deletion_replicas *parts, int32_t nparts,
                                  int32_t broker, int32_t *out);

/* What one step of the deletion decided (the arrays are the caller's,
 * each with room for the deletion's n brokers). */
struct br_deletion_step {
    int32_t *ask;   /* brokers to send StopReplica with delete to now */
    size_t nask;
    int32_t *waits; /* brokers that became ineligible now (down, holding a replica) */
    size_t nwaits;
    bool done;      /* every broker deleted its replicas: remove the topic's znodes */
};

/*
 * One step of resumeDeletions for one topic, given the live brokers (any
 * order): each broker whose part is not started nor done is asked when it
 * is live (state DEL_STARTED, in ->ask) and made ineligible when it is not
 * (DEL_INELIGIBLE; in ->waits the first time). ->done when every broker's
 * part is DEL_DONE (so at once for a topic with no replica). Kafka 2.0
 * retries an ineligible topic only when none of its replicas is still
 * started; Samsa asks a broker again as soon as it is live, the same
 * outcome without waiting on the slowest broker.
 */
void br_deletion_resume(struct br_deletion_progress *p, const int32_t *live, size_t nlive,
                        struct br_deletion_step *out);

/*
 * broker answered a StopReplica tagged answer_gen: when that is p's
 * generation and broker's part is started, it is done (ok: Kafka's
 * completeReplicaDeletion) or ineligible (a failure: failReplicaDeletion,
 * asked again at the next step it is live). An answer of another
 * generation, or to no request in flight, changes nothing. Returns how
 * many of p's entries changed.
 */
size_t br_deletion_answer(struct br_deletion_progress *p, uint64_t answer_gen, int32_t broker,
                          bool ok);

/* broker went (its sender stopped): its part, if started and unanswered,
 * becomes ineligible (Kafka's onBrokerFailure → failReplicaDeletion), so it
 * is asked again once it is back. */
void br_deletion_lost_broker(struct br_deletion_progress *p, int32_t broker);

#endif
