/*
 * samsa-broker: a broker of a cluster stops after handing its leaderships
 * over (Kafka 2.0's KafkaServer.controlledShutdown).
 *
 * On the first stop signal (SIGTERM, SIGINT) with controlled.shutdown.enable,
 * the broker keeps serving and asks the controller named by its metadata
 * cache, over the Kafka protocol, to move every partition it leads to
 * another in-sync replica (ControlledShutdown v1, this broker's id). The
 * controller answers once the new leaders are decided and told; clients
 * that still write here get NOT_LEADER_OR_FOLLOWER and follow. An answer
 * with an error or with partitions still led here (no other in-sync
 * replica) is tried again after controlled.shutdown.retry.backoff.ms, at
 * most controlled.shutdown.max.retries times in all; then the broker
 * stops anyway, as Kafka does ("proceeding to do an unclean shutdown").
 * Each attempt waits controller.socket.timeout.ms for its answer. A
 * second stop signal stops at once.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_CONTROLLED_SHUTDOWN_H
#define SAMSA_BROKER_CONTROLLED_SHUTDOWN_H

#include <stdbool.h>

#include "broker.h"

/* The stop signal came: true when the broker stops now (standalone, the
 * feature off, not registered, out of memory); false when the handover
 * began: it stops the reactor (br_net_stop) when done. */
bool br_controlled_shutdown_begin(struct br_broker *b);

/* Frees what the handover holds (after the reactor stopped). NULL-safe. */
void br_controlled_shutdown_free(struct br_broker *b);

#endif
