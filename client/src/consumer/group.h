/*
 * The consumer group of a consumer handle, shared by the files that implement
 * it (group.c's header comment tells the protocol and its states):
 *
 *   group.c          the state (below), losing a membership, rejoining
 *   coordinator.c    FindCoordinator
 *   offsets.c        OffsetFetch, OffsetCommit
 *   membership.c     subscribe, JoinGroup, the leader's assignment, SyncGroup
 *   heartbeat.c      Heartbeat, LeaveGroup, max.poll.interval.ms
 *   group_serve.c    sc_group_serve and sc_group_close, which drive the others
 *
 * Each file calls only those above it in this list. consumer.c reaches the
 * group through consumer.h alone; this header is for the files above.
 * Every function runs on the I/O loop with the lock held unless it says so.
 */
#ifndef SAMSA_CLIENT_CONSUMER_GROUP_H
#define SAMSA_CLIENT_CONSUMER_GROUP_H

#include <regex.h>

#include "consumer/consumer.h"

#define TOPIC_MISSING (-2)
#define MAX_SUB_TOPICS 10000

enum g_state {
    G_IDLE = 0,      /* not subscribed */
    G_UNJOINED,      /* JoinGroup once join_at has come and the coordinator is up */
    G_JOINING,       /* JoinGroup in flight */
    G_ASSIGN_MD,     /* leader: Metadata of the members' topics, then assign */
    G_SYNC_READY,    /* SyncGroup to send */
    G_SYNCING,       /* SyncGroup in flight */
    G_STABLE,        /* a member of `generation` with its assignment */
    G_REVOKING,      /* commit and the revoke event before joining again */
    G_POLL_EXCEEDED, /* left after max.poll.interval.ms; the next poll joins */
    G_FATAL,         /* FENCED_INSTANCE_ID: membership given up */
};

/* A subscription as given: names, and regular expressions (librdkafka's ^
 * convention) matched against every Metadata answer's topics. */
struct sc_subscription {
    char **literals;
    int literal_count;
    char **patterns;
    regex_t *regexes; /* regfree'd: the first pattern_count */
    int pattern_count;
};

struct sc_group {
    /* coordinator */
    int32_t coord_id; /* -1: unknown */
    bool coord_inflight;
    int64_t coord_retry_at;
    /* stored offsets and auto commit */
    bool ofetch_inflight;
    int64_t next_auto_commit;

    /* membership */
    int state;
    bool closing;              /* samsa_consumer_close: never join again */
    char **topics;             /* the subscription's topics, sorted, unique: the names
                                * given and those its patterns match */
    int topic_count;
    struct sc_subscription sub; /* as given (membership.c) */
    bool await_match;          /* patterns: the first join waits for a Metadata answer */
    int32_t *topic_parts;      /* partition count last seen per topic; -1: not yet;
                                * TOPIC_MISSING: not in the cluster (told) */
    char *member_id;           /* NULL: none yet ("" on the wire) */
    int32_t generation;        /* -1 outside a generation */
    int assignor;              /* the protocol the coordinator chose */
    bool leader;
    struct sc_member *members; /* the leader's view of this generation */
    int member_count;
    struct sc_tp *owned;       /* the last assignment SyncGroup gave (sorted): what the
                                * sticky assignor's UserData tells the next leader */
    int owned_count;
    int32_t owned_generation;
    bool assign_md_inflight;
    int64_t join_at;
    bool rejoin_pending;       /* wanted while a join was under way */
    bool hb_inflight;
    int64_t next_hb;
    int64_t last_hb_ok;        /* last heartbeat (or join) the coordinator answered */
    int64_t last_poll;
    int polling;               /* user threads inside samsa_consumer_poll */
    bool revoke_commit_todo;   /* the commit before joining again is still to send */
    bool revoke_commit_inflight;
    bool revoke_wait_ack;
    uint64_t acks_posted;
    int64_t revoke_deadline;

    /* what the statistics' cgrp block says (sc_group_stats) */
    int64_t state_ms;          /* when state last changed */
    int64_t rebalance_cnt;     /* assignments and revocations handed to the user */
    int64_t rebalance_ms;      /* the last of them; 0: none */
    char rebalance_reason[160]; /* why the member last joined again */
};

struct sc_commit_item {
    char *topic;
    int32_t partition;
    int64_t offset;
};

struct sc_commit_arg {
    int count;
    struct sc_commit_item *items;
    int32_t generation; /* what the request carried */
};

/* group.c */
struct sc_group *sc_group_get(struct sc_client *c);
const char *sc_group_member_id(const struct sc_group *g);
void sc_group_set_member_id(struct sc_group *g, struct kp_str id);
void sc_group_clear_members(struct sc_group *g);
void sc_group_free_topics(struct sc_group *g);
void sc_subscription_free(struct sc_subscription *s);
/* Sorts names[0..n) and frees the repeated ones; returns how many are left. */
int sc_group_sort_names(char **names, int n);
bool sc_group_cooperative(const struct sc_client *c);
void sc_group_set_state(struct sc_client *c, struct sc_group *g, int state);
bool sc_group_post_revoked(struct sc_client *c, struct sc_group *g, bool ack);
void sc_group_drop_assignment(struct sc_client *c, struct sc_group *g, bool post);
int sc_group_join_backoff_ms(const struct sc_client *c);
void sc_group_lost(struct sc_client *c, struct sc_group *g, bool reset_member, const char *why);
void sc_group_rejoin(struct sc_client *c, struct sc_group *g, const char *why);
/* An assignment or a revocation was handed to the user (the statistics'
 * rebalance_cnt and rebalance_age). */
void sc_group_rebalanced(struct sc_group *g);

/* coordinator.c */
/* The coordinator's connection once it is known and up, else NULL (a
 * FindCoordinator is sent when none is in flight). */
struct sc_conn *sc_group_coordinator(struct sc_client *c);
bool sc_group_coordinator_error(int err);
void sc_group_lose_coordinator(struct sc_client *c);

/* offsets.c */
void sc_group_fetch_stored(struct sc_client *c, struct sc_conn *coord);
struct sc_commit_arg *sc_group_commit_items(struct sc_client *c,
                                            const struct samsa_partition *offsets, size_t count,
                                            bool changed_only);
bool sc_group_in_generation(const struct sc_client *c);
int sc_group_send_commit(struct sc_client *c, struct sc_conn *conn, struct sc_commit_arg *a,
                         sc_resp_fn *fn, void *ctx);
void sc_group_on_revoke_commit(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                               void *vctx);
struct sc_op *sc_group_commit_op(struct sc_client *c, const struct samsa_partition *offsets,
                                 size_t count, bool changed_only);
void sc_group_submit(struct sc_client *c, struct sc_op *op, int timeout_ms);

/* membership.c */
int64_t sc_group_send_join(struct sc_client *c, struct sc_group *g, struct sc_conn *coord,
                           int64_t now);
int64_t sc_group_send_assign_md(struct sc_client *c, struct sc_group *g, int64_t now);
int64_t sc_group_send_sync(struct sc_client *c, struct sc_group *g, struct sc_conn *coord,
                           int64_t now);

/* heartbeat.c */
int64_t sc_group_heartbeat(struct sc_client *c, struct sc_group *g, int64_t now);
void sc_group_poll_exceeded(struct sc_client *c, struct sc_group *g, int64_t now);

#endif
