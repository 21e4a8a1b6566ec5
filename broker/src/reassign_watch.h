/*
 * samsa-broker: the partition moves under way, as every broker of a
 * cluster sees them for the admin API: /admin/reassign_partitions (Kafka
 * 2.0's ReassignPartitionsZNode, ZkData.scala) read with a watch when the
 * ZooKeeper session connects and again each time the watch fires (the
 * znode created, changed or deleted), never polled. An exists with a
 * watch, then a get of the data: the controller deletes the znode when
 * its last move is done (KafkaController.removePartitionFromReassignedPartitions),
 * and an exists watch is the one that also sees it created again.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_REASSIGN_WATCH_H
#define SAMSA_BROKER_REASSIGN_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "broker.h"
#include "cluster/zk.h"
#include "cluster/zk_json.h"

#define BR_REASSIGN_PATH "/admin/reassign_partitions"

struct br_reassign_watch;

/* A watch of b's session (b->s.zk, read at each call); NULL when out of
 * memory. Nothing is read before br_reassign_watch_read. */
struct br_reassign_watch *br_reassign_watch_new(struct br_broker *b);
/* After the session closed (no answer comes any more). NULL is a no-op. */
void br_reassign_watch_free(struct br_reassign_watch *w);
/* The session connected: the znode read and watched. */
void br_reassign_watch_read(struct br_reassign_watch *w);
/* A watch of the session fired: read again when it is the znode's. */
void br_reassign_watch_event(struct br_reassign_watch *w, enum br_zk_watch kind,
                             const char *path);
/* The moves as last read, in the znode's order (*n of them; NULL when
 * none), valid until the next answer; and a number that changes whenever
 * they do. */
const struct br_zk_reassignment *br_reassign_watch_moves(const struct br_reassign_watch *w,
                                                         size_t *n);
uint64_t br_reassign_watch_version(const struct br_reassign_watch *w);

#endif
