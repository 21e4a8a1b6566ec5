/*
 * samsa-broker: Kafka's DelayedProduce without its request: appends this
 * broker made as leader, each waiting until the partition's high
 * watermark passes it (the ISR has it), the partition is led in another
 * term, or a deadline passes. Its owner (an acks=all Produce, an
 * OffsetCommit, the group coordinator's record of a generation) embeds a
 * br_delayed_produce, fills the waits and is called back once, with the
 * outcome of each wait for br_partition_append_outcome to tell.
 *
 *   struct br_append_wait w = {p, br_log_end_offset(p->log), p->leader_term};
 *   br_delayed_produce_init(&dp, &w, &link, 1, done, owner);
 *   if (!br_delayed_produce_settled(&dp)) br_delayed_produce_park(pg, &dp, deadline);
 *
 * The partition wakes its purgatory key when its high watermark moves
 * (partition.h): the waits on it are asked again then.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_REPLICA_DELAYED_PRODUCE_H
#define SAMSA_BROKER_REPLICA_DELAYED_PRODUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reactor/purgatory.h"
#include "replica/partition.h"

/* One append: up to offset `required` of p, made as leader in p's term
 * `term` (p->leader_term then). */
struct br_append_wait {
    struct br_partition *p;
    int64_t required;
    uint32_t term;
};

struct br_delayed_produce;

/* Every wait settled (expired false) or the deadline passed (true); the
 * owner reads each outcome (br_partition_append_outcome) and frees what it
 * owns. Called once, from the purgatory. */
typedef void (*br_delayed_produce_done)(struct br_delayed_produce *dp, bool expired);

struct br_delayed_produce {
    struct br_delayed delayed;
    struct br_append_wait *waits; /* nwaits, the owner's */
    struct br_delay_link *links;  /* nwaits, the owner's */
    size_t nwaits;
    br_delayed_produce_done done;
    void *owner;
};

/* Sets dp up over waits[0..n) with links[0..n). */
void br_delayed_produce_init(struct br_delayed_produce *dp, struct br_append_wait *waits,
                             struct br_delay_link *links, size_t n, br_delayed_produce_done done,
                             void *owner);

/* Every wait is settled: nothing to park. */
bool br_delayed_produce_settled(const struct br_delayed_produce *dp);

/* Parks dp on each wait's partition until it is settled or deadline_ms. */
void br_delayed_produce_park(struct br_purgatory *pg, struct br_delayed_produce *dp,
                             int64_t deadline_ms);

/* Takes a parked dp out without calling it back (its request went). */
void br_delayed_produce_cancel(struct br_purgatory *pg, struct br_delayed_produce *dp);

#endif
