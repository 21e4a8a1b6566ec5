/*
 * samsa-broker: every record of a partition's log read in order, for the
 * coordinators that keep their state in a topic (__consumer_offsets,
 * __transaction_state) and read a partition into memory when they come to
 * lead it (Kafka 2.0's GroupMetadataManager.loadGroupsAndOffsets,
 * TransactionStateManager.loadTransactionsForTxnTopicPartition).
 * @locality reactor thread (the reads block on the page cache, as the
 * coordinators' loads do in Kafka's scheduler thread)
 */
#ifndef SAMSA_BROKER_REPLICA_PARTITION_READ_H
#define SAMSA_BROKER_REPLICA_PARTITION_READ_H

#include <samsa-protocol/record_batch.h>

#include "replica/partition.h"

/* Called for each record: h is its batch's header (control batches
 * included: kp_batch_is_control). A nonzero return stops the read with it. */
typedef int (*br_record_fn)(void *ctx, const struct kp_batch_header *h,
                            const struct kp_record *rec);

/*
 * Reads p's log from its start to its end, calling fn for every record. A
 * damaged batch or records that do not decode are skipped with a warning
 * naming `what` (the log validated these bytes when it opened). Returns 0,
 * fn's nonzero return, KP_E_NOMEM or KP_ERR_KAFKA_STORAGE_ERROR (logged).
 */
KP_MUST_CHECK int br_partition_read_records(struct br_partition *p, const char *what,
                                            br_record_fn fn, void *ctx);

#endif
