/*
 * samsa-broker: the group coordinator (Kafka's classic group protocol),
 * apart from the wire: groups, members, generations, the chosen protocol,
 * the leader's assignments and the committed offsets, driven by events
 * (join, sync, heartbeat, leave, commit, delete, a timer that fired).
 *
 * The semantics follow Kafka's GroupCoordinator of the 2.x line:
 * Empty -> PreparingRebalance (joins wait until every member rejoined or
 * the rebalance timeout; a new group waits
 * group.initial.rebalance.delay.ms first) -> CompletingRebalance (the
 * leader got every member's metadata; followers' syncs wait for the
 * leader's, whose sync appends the group's record, and every sync then
 * waits for that record to be replicated: br_grp_store_settle) -> Stable.
 * Heartbeats answer REBALANCE_IN_PROGRESS only in PreparingRebalance, as
 * Kafka does since 2.7 (KAFKA-10134: clients heartbeat while they wait for
 * their assignment; Kafka 2.0 answers it in CompletingRebalance too).
 * Static membership (group.instance.id) is kept to this much: a join with
 * a known instance id and no member id replaces the old member.
 *
 * What the coordinator needs from its user comes through a const ops table
 * (struct br_grp_ops): the clocks, timers, answering a join or sync that
 * waited, and the partition of __consumer_offsets a group's records go to
 * (appended through the partition's one leader-append path). It knows no
 * request or response type: the server decodes, calls in here, encodes. A
 * unit test drives it with a clock of its own (tests/broker/test_group.c).
 *
 * Ownership: struct br_groups owns its groups (a hash table plus a list in
 * creation order); a group owns its members, pending member ids and
 * committed and pending offsets; a member owns its strings, protocols and assignment.
 * A join or sync that must wait leaves its `waiter` (the user's object) on
 * the member; the coordinator answers it through the ops once, after
 * unlinking it, or the user takes it back (br_grp_waiter_gone).
 *
 * @locality reactor thread: no locks anywhere.
 */
#ifndef SAMSA_BROKER_GROUP_GROUP_H
#define SAMSA_BROKER_GROUP_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

#include "reactor/net.h"
#include "reactor/purgatory.h"

struct br_partition;

/* The internal topic that holds committed offsets and group records. */
#define BR_OFFSETS_TOPIC "__consumer_offsets"

/* Ceilings on what clients can make the coordinator hold. */
#define GRP_MAX_MEMBERS 10000                 /* per group: GROUP_MAX_SIZE_REACHED */
#define GRP_MAX_PENDING 1000                  /* MEMBER_ID_REQUIRED ids per group */
#define GRP_MAX_PROTOCOLS 64                  /* per JoinGroup */
#define GRP_MAX_GROUPS 1000000                /* groups held */
#define GRP_MAX_OFFSETS 1000000               /* committed partitions per group */
#define GRP_NEW_MEMBER_JOIN_TIMEOUT_MS 300000 /* Kafka's NewMemberJoinTimeoutMs */

enum grp_state {
    GRP_EMPTY = 0,
    GRP_PREPARING_REBALANCE,
    GRP_COMPLETING_REBALANCE,
    GRP_STABLE,
    GRP_DEAD,
};

enum grp_timer_kind {
    GRP_TIMER_SESSION = 1, /* a member's heartbeat deadline */
    GRP_TIMER_JOIN,        /* a group's rebalance timeout or initial delay */
    GRP_TIMER_EXPIRY,      /* the periodic offset retention check */
};

/* A deadline of the coordinator. The user arms it (ops->timer_arm) and,
 * when it passes, calls br_grp_timer_fired. `rt` is the user's storage for
 * its own timer (a reactor timer in the broker; unused by a test clock). */
struct grp_timer {
    enum grp_timer_kind kind;
    void *obj; /* the member, the group or the coordinator */
    struct br_timer rt;
};

struct grp_protocol {
    char *name;
    uint8_t *metadata;
    int32_t metadata_len;
};

struct grp_group;

struct grp_member {
    struct grp_group *group;
    char *id;
    char *instance_id; /* NULL: a dynamic member */
    char *client_id;
    char *client_host;
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms;
    struct grp_protocol *protocols;
    size_t nprotocols;
    uint8_t *assignment; /* NULL with assignment_len 0: none */
    int32_t assignment_len;
    /* In Kafka's terms: the join callback is set (the member counts as
     * joined even when its waiter went). */
    bool awaiting_join;
    bool awaiting_sync;
    bool is_new;
    void *join_waiter; /* the user's waiting JoinGroup; NULL: none */
    void *sync_waiter; /* the user's waiting SyncGroup; NULL: none */
    struct grp_timer session;
};

/* A member id handed out with MEMBER_ID_REQUIRED, valid until deadline. */
struct grp_pending {
    char *id;
    int64_t deadline_ms; /* monotonic */
};

struct grp_offset {
    char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch; /* -1: none */
    char *metadata;       /* never NULL ("" for none, as Kafka stores it) */
    int64_t commit_ts;    /* wall ms */
    int64_t expire_ts;    /* wall ms; -1: by offsets.retention.minutes */
    /* the offset of its record in __consumer_offsets, which orders commits
     * of one partition that complete out of order (Kafka's
     * CommitRecordMetadataAndOffset.appendedBatchOffset); -1 when loaded,
     * older than any record this coordinator appends after the load */
    int64_t log_offset;
};

/* A commit whose record is in the log but not known to be replicated
 * (Kafka 2.0's GroupMetadata.pendingOffsetCommits): not visible to
 * OffsetFetch; br_grp_commit_settle makes it committed or drops it. */
struct grp_pending_commit {
    uint64_t seq; /* the commit request's (br_grp_commit); 0 once a
                   * transaction's record is replicated */
    /* a transaction's offset (TxnOffsetCommit): its producer; committed by
     * the COMMIT marker, dropped by the ABORT (Kafka 2.0's
     * GroupMetadata.pendingTransactionalOffsetCommits); -1 otherwise */
    int64_t producer_id;
    struct grp_offset v;
};

struct grp_group {
    struct grp_group *hnext; /* hash chain */
    struct grp_group *prev;  /* creation order */
    struct grp_group *next;
    char *id;
    size_t id_len;
    enum grp_state state;
    int64_t state_ts; /* wall ms of the last state change; -1 unknown */
    int32_t generation;
    char *protocol_type; /* NULL: none yet */
    char *protocol;      /* the chosen protocol; NULL outside a generation */
    struct grp_member *leader;
    struct grp_member **members; /* join order */
    size_t nmembers;
    size_t members_cap;
    struct grp_pending *pending;
    size_t npending;
    size_t pending_cap;
    struct grp_timer join_timer;
    bool initial_delay;    /* the join timer is Kafka's InitialDelayedJoin */
    bool new_member_added; /* a member joined during the initial delay */
    int32_t initial_remaining_ms;
    struct grp_offset *offsets; /* committed, sorted by (topic, partition) */
    size_t noffsets;
    size_t offsets_cap;
    struct grp_pending_commit *pcommits; /* appended, not replicated yet: in append order */
    size_t npcommits;
    size_t pcommits_cap;
    /* CompletingRebalance: the leader's sync appended the generation's
     * record under this seq, which waits for the ISR (Kafka 2.0's
     * storeGroup callback; br_grp_store_settle); 0: none. Any state change
     * clears it. */
    uint64_t store_seq;
    /* what the user's waiting joins and syncs wait on (its purgatory) */
    struct br_delay_key waiters;
};

/* The settings the coordinator reads (server.properties names). */
struct br_grp_config {
    int32_t initial_rebalance_delay_ms;  /* group.initial.rebalance.delay.ms */
    int32_t min_session_timeout_ms;      /* group.min.session.timeout.ms */
    int32_t max_session_timeout_ms;      /* group.max.session.timeout.ms */
    int32_t offset_metadata_max_bytes;   /* offset.metadata.max.bytes */
    int32_t offsets_retention_minutes;   /* offsets.retention.minutes */
    int64_t retention_check_interval_ms; /* offsets.retention.check.interval.ms */
};

struct br_grp_ops {
    int64_t (*now_mono_ms)(void *ctx);
    int64_t (*now_wall_ms)(void *ctx);
    /* Timers: initialized once, then armed and cancelled any number of
     * times (arming an armed one moves it); when one passes, the user calls
     * br_grp_timer_fired. */
    void (*timer_init)(void *ctx, struct grp_timer *t);
    void (*timer_arm)(void *ctx, struct grp_timer *t, int64_t deadline_mono_ms);
    void (*timer_cancel)(void *ctx, struct grp_timer *t);
    /* A waiting JoinGroup is answered: err, or KP_ERR_NONE with the current
     * generation of g for m (br_grp_join_fill tells what to send). m is
     * NULL when the member is gone. Already unlinked from the member. */
    void (*join_answer)(void *ctx, void *waiter, int err, const struct grp_group *g,
                        const struct grp_member *m);
    /* A waiting SyncGroup is answered: err, or the member's assignment
     * (valid during the call). Already unlinked from the member. */
    void (*sync_answer)(void *ctx, void *waiter, int err, const uint8_t *assignment, int32_t len);
    /* g is about to be freed; its waiters were all answered. */
    void (*group_gone)(void *ctx, struct grp_group *g);
    /* The partition of __consumer_offsets the records of group id go to,
     * led here, and the largest batch it takes (max.message.bytes). NULL
     * with *err (COORDINATOR_NOT_AVAILABLE...) when there is none. */
    struct br_partition *(*offsets_partition)(void *ctx, const char *id, size_t len,
                                              size_t *max_batch, int *err);
    /* Before a commit's append, which waits for the ISR: 0, or the error
     * the append would answer (NOT_ENOUGH_REPLICAS while the ISR is smaller than
     * min.insync.replicas, as Kafka's Partition.appendRecordsToLeader with
     * requiredAcks -1). NULL: nothing is checked. */
    int (*acks_all_check)(void *ctx, const struct br_partition *p);
};

struct br_groups {
    const struct br_grp_ops *ops;
    void *ctx;
    struct br_grp_config cfg;
    struct grp_group **buckets;
    size_t nbuckets; /* a power of two */
    size_t ngroups;
    struct grp_group *first;
    struct grp_group *last;
    struct grp_timer expiry;
    uint64_t rng;        /* splitmix64 state for member ids */
    uint64_t commit_seq; /* the last seq given to a commit (br_grp_commit) or a
                            generation's group record (store_seq) */
};

/* ---- the coordinator */

/* A coordinator with no groups; arms the offset expiry check. seed seeds
 * the member ids' randomness. NULL when out of memory. */
struct br_groups *br_groups_new(const struct br_grp_ops *ops, void *ctx,
                                const struct br_grp_config *cfg, uint64_t seed);
/* Answers every waiter with NOT_COORDINATOR, cancels the timers and frees
 * everything. NULL is a no-op. */
void br_groups_free(struct br_groups *gs);
/* Shutdown: every waiting join and sync is answered now with
 * NOT_COORDINATOR, so the clients look for the coordinator again. */
void br_groups_answer_all(struct br_groups *gs);
/* One of the coordinator's timers passed (the user's timer callback). */
void br_grp_timer_fired(struct br_groups *gs, struct grp_timer *t);

const char *br_grp_state_name(enum grp_state s);
struct grp_group *br_grp_find(struct br_groups *gs, const char *id, size_t len);
/* The group of a wire string; NULL for a null one. */
struct grp_group *br_grp_find_kstr(struct br_groups *gs, struct kp_str id);
/* Finds or creates (Empty, generation 0); NULL when out of memory or at
 * GRP_MAX_GROUPS. */
struct grp_group *br_grp_get_or_create(struct br_groups *gs, const char *id, size_t len);
/* Removes the group from the coordinator and frees it (members' waiters
 * answered with `err`). */
void br_grp_remove(struct br_groups *gs, struct grp_group *g, int err);
struct grp_member *br_grp_member_find(const struct grp_group *g, struct kp_str id);
/* The groups whose records go to partition `index` of __consumer_offsets
 * (of `partitions`) leave the coordinator, their waiters answered
 * NOT_COORDINATOR (Kafka's handleGroupEmigration): another broker leads
 * the partition now. Returns how many. */
size_t br_grp_unload_partition(struct br_groups *gs, int32_t partitions, int32_t index);
/* A NUL-terminated copy of a wire string (a null one becomes ""), owned
 * by the caller (kp_free); NULL when out of memory. */
char *br_grp_dup_kstr(struct kp_str s);
/* The member's metadata for protocol `name`; NULL when it has none. */
const struct grp_protocol *br_grp_member_protocol(const struct grp_member *m, const char *name);

/* ---- events */

/* A JoinGroup as the coordinator reads it. */
struct grp_join_protocol {
    struct kp_str name;
    struct kp_bytes metadata;
};

struct grp_join_req {
    struct kp_str group_id;
    struct kp_str member_id;   /* "" or null: unknown */
    struct kp_str instance_id; /* null: a dynamic member (or below v5) */
    struct kp_str client_id;
    struct kp_str client_host; /* "/127.0.0.1", as Kafka shows it */
    struct kp_str protocol_type;
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms; /* the session timeout when the request has none */
    const struct grp_join_protocol *protocols;
    size_t nprotocols;
    bool require_known_id; /* v4+: a new member gets MEMBER_ID_REQUIRED first */
};

enum grp_outcome {
    GRP_ANSWER_ERROR = 1, /* answer out.err now */
    GRP_ANSWER_NOW,       /* answer now: the current generation, or the assignment */
    GRP_WAIT,             /* the waiter waits (and may have been answered already) */
};

struct grp_join_out {
    enum grp_outcome outcome;
    int err;                   /* GRP_ANSWER_ERROR */
    struct kp_str member_id;   /* GRP_ANSWER_ERROR: the id the answer carries */
    struct grp_group *group;   /* GRP_ANSWER_NOW, GRP_WAIT */
    struct grp_member *member; /* GRP_ANSWER_NOW, GRP_WAIT */
};

/*
 * Kafka's handleJoinGroup. `waiter` becomes the member's waiting join when
 * the outcome is GRP_WAIT (an earlier one of the same member is answered
 * REBALANCE_IN_PROGRESS); the rebalance may complete inside this call, so
 * ops->join_answer may be called for it before this returns. out->member_id
 * of an error points into q or the coordinator's state (valid until the
 * next event). Returns 0, or KP_E_NOMEM (nothing changed for this member:
 * the user closes the connection).
 */
KP_MUST_CHECK int br_grp_join(struct br_groups *gs, const struct grp_join_req *q, void *waiter,
                              struct grp_join_out *out);

/* What a JoinGroup answer of g's current generation holds for m; the
 * leader gets every member's metadata for the chosen protocol, the others
 * none (*nmembers 0). */
struct grp_join_view {
    int32_t generation;
    const char *protocol; /* "" when none */
    const char *leader;   /* "" when none */
    const char *member_id;
    size_t nmembers; /* the members to list: g->members[0..nmembers) */
};
void br_grp_join_fill(const struct grp_group *g, const struct grp_member *m,
                      struct grp_join_view *out);

struct grp_assignment {
    struct kp_str member_id;
    struct kp_bytes assignment;
};

struct grp_sync_req {
    struct kp_str group_id;
    struct kp_str member_id;
    struct kp_str instance_id; /* null below v3 */
    int32_t generation;
    const struct grp_assignment *assignments; /* the leader's */
    size_t nassignments;
};

struct grp_sync_out {
    enum grp_outcome outcome;
    int err;                   /* GRP_ANSWER_ERROR */
    const uint8_t *assignment; /* GRP_ANSWER_NOW (valid until the next event) */
    int32_t assignment_len;
    struct grp_group *group;   /* GRP_WAIT */
    struct grp_member *member; /* GRP_WAIT */
    /* GRP_WAIT of the leader: the seq of the group record its sync
     * appended, which the user settles with br_grp_store_settle once the
     * append is replicated or failed; 0: nothing to settle. */
    uint64_t store_seq;
};

/*
 * Kafka 2.0's handleSyncGroup; waiter as in br_grp_join. The leader's sync
 * in CompletingRebalance stores the assignments on the members and appends
 * the group's record (acks=all: refused while the ISR is below
 * min.insync.replicas), out->store_seq; the group stays in
 * CompletingRebalance and every sync waits until br_grp_store_settle. An
 * append that fails at once settles inside the call: the syncs (this one
 * too) get the error and the group rebalances. Returns 0 or KP_E_NOMEM.
 */
KP_MUST_CHECK int br_grp_sync(struct br_groups *gs, const struct grp_sync_req *q, void *waiter,
                              struct grp_sync_out *out);

/* The user's waiter went (its connection died): the member forgets it. A
 * sync that went stops the member waiting for its assignment; a join that
 * went keeps the member joined, as in Kafka, whose join callback answers
 * into a closed socket. */
void br_grp_waiter_gone(struct br_groups *gs, struct grp_member *m, void *waiter);

/*
 * The group record of g's generation appended under seq (out->store_seq of
 * the leader's sync) was replicated (append_err 0) or will not be (the
 * append's error: REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
 * NOT_LEADER_OR_FOLLOWER...), Kafka 2.0's storeGroup callback in
 * doSyncGroup: replicated, every waiting sync gets its member's assignment
 * and the group becomes Stable; failed, every waiting sync gets
 * br_grp_store_error(append_err), the assignments are forgotten
 * (resetAndPropagateAssignmentError) and the group prepares a rebalance.
 * A group that went, left CompletingRebalance or appended a later record
 * meanwhile is left alone (returns false).
 */
bool br_grp_store_settle(struct br_groups *gs, const char *group_id, size_t len, uint64_t seq,
                         int append_err);

/*
 * The error the syncs of a generation get when its group record's append
 * or its wait for the ISR ended in append_err (Kafka 2.0's
 * GroupMetadataManager.storeGroup): UNKNOWN_TOPIC_OR_PARTITION and
 * NOT_ENOUGH_REPLICAS(_AFTER_APPEND) are COORDINATOR_NOT_AVAILABLE,
 * NOT_LEADER_FOR_PARTITION and KAFKA_STORAGE_ERROR are NOT_COORDINATOR,
 * REQUEST_TIMED_OUT is REBALANCE_IN_PROGRESS, MESSAGE_TOO_LARGE,
 * RECORD_LIST_TOO_LARGE and INVALID_FETCH_SIZE are UNKNOWN_SERVER_ERROR,
 * anything else itself.
 */
int br_grp_store_error(int append_err);

/* Kafka's handleHeartbeat: the error to answer (KP_ERR_NONE). */
int br_grp_heartbeat(struct br_groups *gs, struct kp_str group_id, struct kp_str member_id,
                     struct kp_str instance_id, int32_t generation);

/* One member of LeaveGroup (by member id, or by instance id when the id
 * is empty): the error for it. g may go away under it. */
int br_grp_leave(struct br_groups *gs, struct grp_group *g, struct kp_str member_id,
                 struct kp_str instance_id);

/* DeleteGroups of one group: tombstones, then the group goes. The error
 * for it. */
int br_grp_delete(struct br_groups *gs, struct kp_str group_id);

/* ---- committed offsets (offsets.c) */

/* 0 when an OffsetCommit of (member, generation) may go to g, else the
 * Kafka error for every partition (Kafka's doCommitOffsets). */
int br_grp_commit_check(struct br_groups *gs, struct grp_group *g, struct kp_str member_id,
                        int32_t generation);

struct grp_commit {
    struct kp_str topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch; /* -1: none */
    struct kp_str metadata;
    int64_t commit_ts; /* -1: now */
    int err;           /* in: non-zero skips it (e.g. an unknown partition); out: its error */
};

/*
 * Kafka's handleCommitOffsets for items[0..n) of one request: the group
 * checks (member, generation; a group unknown with generation -1 only
 * stores offsets), the metadata size, then one batch (more when it passes
 * max.message.bytes) appended to the group's partition. The offsets whose
 * records the log took are pending under *seq (Kafka's
 * prepareOffsetCommit): OffsetFetch does not see them until
 * br_grp_commit_settle(*seq) says the records were replicated. *seq is 0
 * when nothing is pending. retention_ms: the request's retention (-1:
 * none). Every item's err is set (0 for a pending one). Returns 0.
 */
int br_grp_commit(struct br_groups *gs, struct kp_str group_id, struct kp_str member_id,
                  int32_t generation, int64_t retention_ms, struct grp_commit *items, size_t n,
                  uint64_t *seq);
/* Its storing half (offsets.c): top, the group check's error (0: stored),
 * for every item, else the records appended for g as above; producer_id
 * >= 0: a transaction's offsets, appended as a transactional batch of that
 * producer and epoch, which stay pending past their replication until the
 * transaction's marker (br_grp_txn_complete). */
int br_grp_offsets_store(struct br_groups *gs, struct grp_group *g, int top, int64_t retention_ms,
                         int64_t producer_id, int16_t producer_epoch, struct grp_commit *items,
                         size_t n, uint64_t *seq);

/*
 * TxnOffsetCommit (Kafka 2.0's GroupCoordinator.handleTxnCommitOffsets):
 * the offsets of producer (producer_id, epoch)'s open transaction for
 * group_id (made when unknown; no member check), stored as
 * br_grp_offsets_store does. Returns 0.
 */
int br_grp_txn_commit(struct br_groups *gs, struct kp_str group_id, int64_t producer_id,
                      int16_t producer_epoch, struct grp_commit *items, size_t n, uint64_t *seq);

/*
 * A transaction marker of producer_id landed on partition `index` (of
 * `partitions`) of __consumer_offsets (Kafka's handleTxnCompletion): the
 * producer's pending offsets of the groups there become committed
 * (commit), each unless a later record committed the partition, or are
 * dropped. Returns how many became committed.
 */
size_t br_grp_txn_complete(struct br_groups *gs, int32_t partitions, int32_t index,
                           int64_t producer_id, bool commit);

/*
 * The records of commit seq of group group_id were replicated (ok) or
 * will not be (the wait for the ISR failed: timeout, too few replicas,
 * leadership lost): its pending offsets become committed, each unless the
 * partition's committed offset came from a later record (a later commit
 * that completed first), or are dropped (Kafka's onOffsetCommitAppend and
 * failPendingOffsetWrite). A group or commit that went meanwhile
 * (unloaded, deleted) is a no-op; so is gs NULL. Returns how many offsets
 * became committed.
 */
size_t br_grp_commit_settle(struct br_groups *gs, const char *group_id, size_t len, uint64_t seq,
                            bool ok);

/* A transaction's offset read back from the log (the loader): pending
 * for producer_id until its marker. 0 or KP_E_NOMEM. */
KP_MUST_CHECK int br_grp_offset_stage_txn(struct grp_group *g, int64_t producer_id,
                                          struct kp_str topic, struct kp_str metadata,
                                          const struct grp_offset *v);

/* Whether (topic, partition) of g has a pending commit (such an offset
 * does not expire, as in Kafka's removeExpiredOffsets). */
bool br_grp_commit_pending(const struct grp_group *g, const char *topic, int32_t partition);

/*
 * The Kafka error an OffsetCommit answers when its append or its wait
 * for the ISR ended in append_err (Kafka 2.0's
 * GroupMetadataManager.storeOffsets): NOT_ENOUGH_REPLICAS(_AFTER_APPEND)
 * and UNKNOWN_TOPIC_OR_PARTITION are COORDINATOR_NOT_AVAILABLE,
 * NOT_LEADER_FOR_PARTITION and KAFKA_STORAGE_ERROR are NOT_COORDINATOR,
 * MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE and INVALID_FETCH_SIZE are
 * INVALID_COMMIT_OFFSET_SIZE, anything else (REQUEST_TIMED_OUT) itself.
 */
int br_grp_commit_error(int append_err);

/* The committed offset of (topic, partition); NULL when none. */
const struct grp_offset *br_grp_offset_find(const struct grp_group *g, struct kp_str topic,
                                            int32_t partition);
/* Sets (topic, partition) to v (its topic and metadata are copied).
 * Returns 0, KP_E_NOMEM or KP_E_TOO_LARGE (GRP_MAX_OFFSETS). */
KP_MUST_CHECK int br_grp_offset_set(struct grp_group *g, struct kp_str topic,
                                    struct kp_str metadata, const struct grp_offset *v);
void br_grp_offset_remove(struct grp_group *g, struct kp_str topic, int32_t partition);
/* Frees the committed and the pending offsets. */
void br_grp_offsets_free(struct grp_group *g);
/* g holds committed or pending offsets (Kafka's GroupMetadata.hasOffsets). */
bool br_grp_has_offsets(const struct grp_group *g);

/* Appends the group's current metadata (Kafka's group metadata value)
 * when the group empties, waiting for nothing. Failures are logged. */
void br_grp_store_group(struct br_groups *gs, struct grp_group *g);
/* Appends the record of g's completed generation for the leader's sync
 * (Kafka's storeGroup with acks=all): 0 with *seq, the seq to settle by
 * (br_grp_store_settle), or the error the syncs get (br_grp_store_error's
 * mapping; nothing appended). */
KP_MUST_CHECK int br_grp_store_generation(struct br_groups *gs, struct grp_group *g, uint64_t *seq);
/* Appends tombstones for every offset and the group key. Returns 0 or a
 * Kafka error. */
int br_grp_store_tombstones(struct br_groups *gs, struct grp_group *g);
/* The periodic offset retention check (Kafka 2.1+, KIP-211; coordinator.c:
 * an Empty group left without offsets goes). */
void br_grp_offsets_expire(struct br_groups *gs);
/* Writes tombstones for the Empty group g's expired offsets and drops those
 * that made it into the log. Returns how many went. */
size_t br_grp_expire_offsets_of(struct br_groups *gs, struct grp_group *g, int64_t now,
                                int64_t retention_ms);

struct grp_load_stats {
    size_t records;
    size_t skipped;
};
/* Reads one partition of __consumer_offsets into the coordinator (start-
 * up). Returns 0, KP_E_NOMEM or KP_ERR_KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_grp_load_partition(struct br_groups *gs, struct br_partition *p,
                                        struct grp_load_stats *st);

/* ---- Java's hash and the group's partition */

/*
 * Java's String.hashCode of a UTF-8 group id (over its UTF-16 code units;
 * each byte of an ill-formed sequence counts as one U+FFFD, where Java's
 * decoder may put one U+FFFD for a whole truncated sequence), and
 * Kafka's partition of __consumer_offsets for it:
 * Utils.abs(hashCode) % partitions (Utils.abs(INT32_MIN) = 0).
 */
int32_t br_group_java_hash(const char *s, size_t len);
int32_t br_group_partition_for(const char *group_id, size_t len, int32_t partitions);

/* ---- for the admin API */

/* One group as DescribeGroups would summarize it. */
/* One partition of a member's assignment. */
struct br_group_tp {
    char *topic; /* owned by the array (br_group_infos_free) */
    int32_t partition;
};

/* The partitions of a consumer group member's assignment, Kafka's
 * ConsumerProtocol Assignment (versions 0-3 begin alike: int16 version,
 * [topic string, [int32 partition]]; user data and what later versions add
 * is not read), from bytes a client sent (SyncGroup): 0 with *out (owned:
 * br_group_tps_free; NULL when empty), or -1 when they do not decode
 * (*out NULL, *n 0). Counts are bounded by the bytes left. */
int br_grp_assignment_decode(const uint8_t *buf, int32_t len, struct br_group_tp **out, size_t *n);
void br_group_tps_free(struct br_group_tp *tps, size_t n);

/* One member as DescribeGroups would show it, its assignment decoded
 * (Kafka's ConsumerProtocol Assignment, versions 0-3, for protocol type
 * "consumer"; none otherwise, or when it does not decode). */
struct br_group_member_info {
    char *member_id; /* these owned by the array (br_group_infos_free) */
    char *client_id;
    char *client_host;
    struct br_group_tp *assigned;
    size_t nassigned;
};

struct br_group_info {
    char *group_id;      /* owned by the array (br_group_infos_free) */
    char *protocol_type; /* "" when none */
    char *protocol;      /* the chosen assignor; "" outside Stable/CompletingRebalance */
    const char *state;   /* "Empty", "PreparingRebalance", ... (static) */
    int32_t generation;
    size_t members;
    size_t committed_partitions;
    struct br_group_member_info *member_list; /* members of them, in join order */
};

/* Every group the coordinator holds, in creation order. Returns 0 or
 * KP_E_NOMEM; caller owns *out (br_group_infos_free). */
KP_MUST_CHECK int br_groups_list(const struct br_groups *gs, struct br_group_info **out, size_t *n);
void br_group_infos_free(struct br_group_info *infos, size_t n);

#endif
