/*
 * The consumer's internals, shared by the files of consumer/: assignment.c
 * (the assigned partitions and their queued messages), fetch.c (ListOffsets
 * and Fetch), the group (group.c and the files consumer/group.h lists) and
 * consumer.c (the handle and its kind ops). The calls go one way:
 * consumer.c -> the group -> assignment.c -> core, and consumer.c ->
 * fetch.c -> assignment.c; each file's functions are under its name below.
 */
#ifndef SAMSA_CLIENT_CONSUMER_H
#define SAMSA_CLIENT_CONSUMER_H

#include "core/internal.h"

/* assignment.c */
/* Replaces the assignment (lock held); parts are copied. */
SC_MUST_CHECK int sc_consumer_set_assignment(struct sc_client *c,
                                             const struct samsa_partition *parts, size_t count);
struct sc_cpart *sc_cpart_find(struct sc_client *c, const char *topic, int32_t partition);
/* Drops the queued messages of part (NULL: all); returns the lowest offset
 * dropped of part (-1: none). */
int64_t sc_cq_drop(struct sc_client *c, const struct sc_cpart *part);

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

/* The offset the application gets next from part: after the last one
 * handed out, else the first queued, else the fetch position (lock held). */
int64_t sc_cpart_next_for_app(const struct sc_client *c, const struct sc_cpart *part);
/* Queues m (owned from here) for samsa_consumer_poll. */
void sc_cq_push(struct sc_client *c, struct sc_cmsg *m);
/* A message of rec for part (one allocation; NULL: out of memory). */
struct sc_cmsg *sc_cmsg_new(struct sc_cpart *part, const struct kp_record *rec, int ts_type);
void sc_cpart_free(struct sc_cpart *p);
/* Sets where a partition starts: an absolute offset is used as is, a
 * logical one is resolved by the I/O thread. */
void sc_cpart_set_offset(struct sc_cpart *p, int64_t offset);

/* fetch.c: ListOffsets of the partitions led by conn's broker that wait
 * for an offset; a Fetch of those it can read (one in flight per leader). */
void sc_consumer_list_offsets(struct sc_client *c, struct sc_conn *conn, int64_t now);
void sc_consumer_fetch_from(struct sc_client *c, struct sc_conn *conn, int64_t now);

/* consumer.c: ListOffsets of one partition (samsa_admin and samsa_consumer):
 * the offset for timestamp (SAMSA_OFFSET_BEGINNING, _END or a time) into
 * *low, or with timestamp SC_WATERMARKS the earliest and latest offsets
 * into *low and *high (either may be NULL). */
#define SC_WATERMARKS INT64_MIN
SC_MUST_CHECK int sc_list_offset(struct sc_client *c, const char *topic, int32_t partition,
                                 int64_t timestamp, int64_t *low, int64_t *high, int timeout_ms);

/* The group (group.c, group_serve.c), all with the lock held except
 * sc_group_close. */
int64_t sc_group_serve(struct sc_client *c, int64_t now);
int sc_group_topics(struct sc_client *c, const char **names, int max);
void sc_group_metadata(struct sc_client *c, const struct kp_MetadataResponse *md);
/* samsa_consumer_poll entered (true) or returned (false). */
void sc_group_polled(struct sc_client *c, bool entering);
/* A subscribed consumer fetches only while its generation is stable. */
bool sc_group_blocks_fetch(struct sc_client *c);
void sc_group_free(struct sc_client *c);
/* The statistics' cgrp block of a consumer with group.id (none without). */
void sc_group_stats(const struct sc_client *c, int64_t now, struct sc_kind_stats *out);
/* Leaves the group, committing first with enable.auto.commit. */
/* A member's part of samsa_consumer_close within timeout_ms (< 0: each
 * step bounded by request.timeout.ms): SAMSA_OK, or the first failure of
 * its final commit, its waiting for asynchronous commits and LeaveGroup. */
int sc_group_close(struct sc_client *c, int timeout_ms);

#endif
