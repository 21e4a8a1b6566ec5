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

#endif
