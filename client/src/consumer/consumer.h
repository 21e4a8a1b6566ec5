/*
 * Consumer internals shared by consumer.c (assignment, fetch) and group.c
 * (coordinator, membership, commits).
 */
#ifndef SAMSA_CLIENT_CONSUMER_H
#define SAMSA_CLIENT_CONSUMER_H

#include "core/internal.h"


/* Replaces the assignment (lock held); parts are copied. */
SC_MUST_CHECK int sc_consumer_set_assignment(struct sc_client *c,
                                             const struct samsa_partition *parts, size_t count);
struct sc_cpart *sc_cpart_find(struct sc_client *c, const char *topic, int32_t partition);
/* Drops the queued messages of part (NULL: all); returns the lowest offset
 * dropped of part (-1: none). */
int64_t sc_cq_drop(struct sc_client *c, const struct sc_cpart *part);
SC_MUST_CHECK int sc_watermarks(struct sc_client *c, const char *topic, int32_t partition,
                                int64_t *low, int64_t *high, int timeout_ms);

/* Adds parts[0..count) to the assignment (lock held; copied); the others
 * keep their positions, fetches and queued messages (cooperative). */
SC_MUST_CHECK int sc_consumer_add_parts(struct sc_client *c, const struct samsa_partition *parts,
                                        size_t count);
/* Marks p as being given up (cooperative): no more fetches, what was
 * fetched and not returned is dropped; it stays assigned (and committable)
 * until sc_consumer_remove_revoking. */
void sc_consumer_revoking(struct sc_client *c, struct sc_cpart *p);
/* Removes the partitions marked by sc_consumer_revoking. */
void sc_consumer_remove_revoking(struct sc_client *c);
/* Drops what was fetched and what is being fetched (positions stay, the
 * application's offsets stay): a rebalance is taking the partitions. */
void sc_consumer_stop_fetching(struct sc_client *c);
/* Waits on ev_cond until deadline (INT64_MAX: a second at most), lock held. */
void sc_wait_cond(struct sc_client *c, int64_t deadline);

/* The offset the application gets next from part: after the last one
 * handed out, else the first queued, else the fetch position (lock held). */
int64_t sc_cpart_next_for_app(const struct sc_client *c, const struct sc_cpart *part);

/* group.c, all with the lock held except sc_group_close. */
int64_t sc_group_serve(struct sc_client *c, int64_t now);
int sc_group_topics(struct sc_client *c, const char **names, int max);
void sc_group_metadata(struct sc_client *c, const struct kp_MetadataResponse *md);
/* samsa_consumer_poll entered (true) or returned (false). */
void sc_group_polled(struct sc_client *c, bool entering);
/* A subscribed consumer fetches only while its generation is stable. */
bool sc_group_blocks_fetch(struct sc_client *c);
void sc_group_free(struct sc_client *c);
/* Leaves the group, committing first with enable.auto.commit. */
/* A member's part of samsa_consumer_close within timeout_ms (< 0: each
 * step bounded by request.timeout.ms): SAMSA_OK, or the first failure of
 * its final commit, its waiting for asynchronous commits and LeaveGroup. */
int sc_group_close(struct sc_client *c, int timeout_ms);

#endif
