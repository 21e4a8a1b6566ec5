/*
 * samsa-broker: this broker as a member of a cluster (zookeeper.connect
 * set): its ZooKeeper session on the reactor (cluster/zk.h), the paths
 * every Kafka broker makes at start (ZkData.PersistentZkPaths), the
 * cluster id (/cluster/id, made by the first broker), its registration
 * (/brokers/ids/<id>, ephemeral, Kafka 2.0's version 4 JSON), made again
 * after a session expired, and its controller (cluster/controller.h).
 *
 * A registration left by this broker's previous run (a hard stop: its
 * session lives on until zookeeper.session.timeout.ms) is waited out: the
 * broker tries again every second, as it would have to for Kafka's
 * checkedEphemeralCreate, instead of giving up.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_CLUSTER_MEMBER_H
#define SAMSA_BROKER_CLUSTER_MEMBER_H

#include <stdbool.h>

#include <samsa-protocol/err.h>

#include "broker.h"

/* Opens the session (its outcome comes through the mailbox: b->mailbox
 * must be watched) and starts the controller. 0 or -1 (logged). */
KP_MUST_CHECK int br_member_start(struct br_broker *b);

/* Whether the broker is registered now. */
bool br_member_registered(const struct br_broker *b);

/* Stops the controller and closes the session (its registration goes with
 * it). Messages of the session may remain in the mailbox: the caller
 * delivers them before freeing it. Safe when br_member_start was not
 * called. */
void br_member_stop(struct br_broker *b);

#endif
