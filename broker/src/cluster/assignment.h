/*
 * samsa-broker: where a new topic's replicas go, as Kafka 2.0 places them
 * without racks (AdminUtils.assignReplicasToBrokers, rack-unaware): the
 * first replica of partition p on broker (p + start) mod n, each further
 * replica shifted by 1 + (shift + j) mod (n - 1), the shift growing by one
 * every n partitions, so leaders and followers spread evenly.
 *
 * @locality any thread (pure)
 */
#ifndef SAMSA_BROKER_CLUSTER_ASSIGNMENT_H
#define SAMSA_BROKER_CLUSTER_ASSIGNMENT_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

/*
 * brokers[0..n): the live broker ids, ascending. start and shift: Kafka
 * picks them at random in [0, n) (fixed values make the result
 * reproducible). out: partitions x rf ids, partition-major, the first of
 * each partition its preferred leader. Returns 0, or KP_E_INVALID_ARG when
 * rf is not within [1, n] or partitions < 1.
 */
KP_MUST_CHECK int br_assign_replicas(const int32_t *brokers, size_t n, int32_t partitions,
                                     int32_t rf, uint32_t start, uint32_t shift, int32_t *out);

/*
 * The same placement continued from partition first_partition (Kafka's
 * startPartitionId), for partitions added to a topic: AdminZkClient.addPartitions
 * passes as both start and shift (its fixedStartIndex) the index in brokers
 * of the first broker whose id is at least the first replica of the
 * topic's partition 0. out: partitions x rf ids for partitions
 * first_partition .. first_partition + partitions - 1. Returns as
 * br_assign_replicas (also KP_E_INVALID_ARG for a negative first_partition).
 */
KP_MUST_CHECK int br_assign_replicas_from(const int32_t *brokers, size_t n, int32_t first_partition,
                                          int32_t partitions, int32_t rf, uint32_t start,
                                          uint32_t shift, int32_t *out);

/* br_assign_replicas_racks: some brokers have a rack and some not. */
#define BR_ASSIGN_RACKS_INCOMPLETE 1
/* Kafka's message for it (an AdminOperationException: UNKNOWN_SERVER_ERROR
 * with this message in CreateTopics and CreatePartitions) */
#define BR_ASSIGN_RACKS_INCOMPLETE_MSG                                                            \
    "Not all brokers have rack information for replica rack aware assignment."

/*
 * Kafka 2.0's AdminUtils.assignReplicasToBrokers with racks: racks[i] is
 * brokers[i]'s broker.rack, NULL when it has none (racks NULL: none has
 * one). No broker with a rack: br_assign_replicas_from, unchanged. Every
 * broker with one: the rack-aware placement (assignReplicasToBrokersRackAware):
 * the brokers alternated by rack (the racks in byte order, each one's
 * brokers ascending, one of each rack in turn), the first replica of
 * partition p at (p + start) mod n of that list, each further one found
 * from (first + 1 + (shift * racks + k) mod (n - 1)) mod n for k = 0, 1, ...,
 * skipping a broker whose rack already has a replica while some rack has
 * none, and one that has a replica while some broker has none; so with rf
 * at least the number of racks every rack gets a replica, and with fewer
 * no rack gets two. Some brokers only: BR_ASSIGN_RACKS_INCOMPLETE (Kafka's
 * "Not all brokers have rack information for replica rack aware
 * assignment."). Else as br_assign_replicas_from, or KP_E_NOMEM.
 */
KP_MUST_CHECK int br_assign_replicas_racks(const int32_t *brokers, const char *const *racks,
                                           size_t n, int32_t first_partition, int32_t partitions,
                                           int32_t rf, uint32_t start, uint32_t shift,
                                           int32_t *out);

#endif
