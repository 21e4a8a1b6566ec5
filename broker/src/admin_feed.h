/*
 * samsa-broker: what feeds the admin API (admin/admin.h): every 100 ms
 * the reactor checks a fingerprint of its state (leaders, epochs, ISRs,
 * offsets, every follower's LEO, the live brokers) and, when it changed
 * (or a second passed: caught-up times age, groups commit), builds an
 * immutable snapshot and publishes it. So the admin thread sees at most
 * about 10 snapshots a second, and building them takes at most about 2%
 * of the reactor: after a build of d, the next waits 50 d.
 *
 * In a cluster it also reads the other brokers' registrations
 * (/brokers/ids/<id>, "admin_endpoint") whenever the live brokers change,
 * so that every document can name each broker's admin URL, and watches
 * /admin/reassign_partitions (reassign_watch.h) for the moves under way.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_ADMIN_FEED_H
#define SAMSA_BROKER_ADMIN_FEED_H

#include "broker.h"
#include "cluster/zk.h"

/* Starts the admin API when admin.listeners names one (else does
 * nothing). 0, or -1 (logged: the broker does not start). */
int br_admin_feed_start(struct br_broker *b);
/* This broker's admin URL, or NULL when the API is off. */
const char *br_admin_feed_url(const struct br_broker *b);
/* The cluster's ZooKeeper session connected, a watch of it fired: what
 * the feed reads from ZooKeeper read again (cluster_member.c). */
void br_admin_feed_zk_connected(struct br_broker *b);
void br_admin_feed_zk_watch(struct br_broker *b, enum br_zk_watch kind, const char *path);
/* Stops the admin thread (first of the stop, nothing is published after). */
void br_admin_feed_stop(struct br_broker *b);
/* Frees the rest (after the ZooKeeper session closed: no answer comes). */
void br_admin_feed_free(struct br_broker *b);

#endif
