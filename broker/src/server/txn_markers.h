/*
 * samsa-broker: a cluster's transaction markers on their way to the
 * partitions' leaders (Kafka 2.0's TransactionMarkerChannelManager and
 * TransactionMarkerRequestCompletionHandler).
 *
 * A transaction in Prepare* has one job here: it waits until its Prepare
 * record reached the ISR of its __transaction_state partition (Kafka sends
 * markers from the append's callback, after requiredAcks = -1), then
 * sends one WriteTxnMarkers v0 per leader of its partitions, this broker
 * included, each over a connection of its own on the reactor. A partition
 * whose leader answers NONE is done, and so is one that no longer exists
 * (UNKNOWN_TOPIC_OR_PARTITION) or that knows a newer producer epoch or
 * coordinator (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED: the
 * marker is not wanted there, as Kafka drops it); any other answer, a
 * closed connection, no answer within the request timeout or no leader
 * in the metadata cache sends it again after a backoff, to whichever
 * broker leads it then. Once every partition is done the coordinator
 * hears br_txn_markers_done and writes the Complete record.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SERVER_TXN_MARKERS_H
#define SAMSA_BROKER_SERVER_TXN_MARKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replica/partition.h"
#include "txn/coordinator.h"

struct br_server;

/* How long a record of the coordinator waits for the ISR, and a marker
 * request for its answer (Kafka's TransactionConfig.requestTimeoutMs, the
 * default of request.timeout.ms). */
#define BR_TXN_REQUEST_TIMEOUT_MS 30000

/* The coordinator's write_markers on a cluster: true when t's markers
 * (COMMIT when commit) were all written by a job that finished (the job
 * goes), false while they are under way (a job is started when there is
 * none). log_p: t's partition of __transaction_state, led here, whose
 * leader epoch is the coordinator epoch the markers carry. */
bool br_txn_markers_write(struct br_server *b, const struct br_txn *t, bool commit,
                          struct br_partition *log_p);

/* Drops the jobs of the ids for which gone(arg, id, len) is true (their
 * partition of __transaction_state is led elsewhere now: the next
 * coordinator sends their markers again); NULL: every job (the broker
 * stops). Requests in flight are abandoned, their connections closed. */
void br_txn_markers_forget(struct br_server *b, bool (*gone)(void *arg, const char *id, size_t len),
                           void *arg);

/* Jobs under way (the admin API, tests). */
size_t br_txn_markers_pending(const struct br_server *b);

#endif
