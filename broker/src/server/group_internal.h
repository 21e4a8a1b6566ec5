/*
 * samsa-broker: the group coordinator's state, shared by group.c (the
 * membership state machine) and group_offsets.c (committed offsets and the
 * __consumer_offsets records). Nothing outside those two files includes it.
 *
 * Ownership: struct br_groups owns its groups (a hash table plus a list in
 * creation order); a group owns its members, pending member ids and
 * committed offsets; a member owns its strings, protocols and assignment,
 * and points at its parked JoinGroup/SyncGroup (struct grp_park), which the
 * connection's slot points at too. Whoever answers or cancels a park first
 * unlinks it from both sides.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_GROUP_INTERNAL_H
#define SAMSA_BROKER_GROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/group.h"
#include "server/request.h"

/* Ceilings on what clients can make the coordinator hold. */
#define GRP_MAX_MEMBERS 10000                 /* per group: GROUP_MAX_SIZE_REACHED */
#define GRP_MAX_PENDING 1000                  /* MEMBER_ID_REQUIRED ids per group */
#define GRP_MAX_PROTOCOLS 64                  /* per JoinGroup */
#define GRP_MAX_GROUPS 1000000                /* groups held */
#define GRP_MAX_OFFSETS 1000000               /* committed partitions per group */
#define GRP_NEW_MEMBER_JOIN_TIMEOUT_MS 300000 /* Kafka's NewMemberJoinTimeoutMs */

/* Record format versions (Kafka's GroupMetadataManager). */
#define GRP_KEY_OFFSET_V0 0
#define GRP_KEY_OFFSET_V1 1
#define GRP_KEY_GROUP_V2 2

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

/* A reactor timer with the object it belongs to; timer.owner points here. */
struct grp_timer {
    struct br_timer timer;
    enum grp_timer_kind kind;
    void *obj;
};

enum grp_park_kind {
    GRP_PARK_JOIN = 1,
    GRP_PARK_SYNC,
};

/* A parked JoinGroup or SyncGroup: a delayed operation of the broker's
 * purgatory, waiting on its group's key (forced when the group goes). The
 * state machine answers it by encoding its response into answer and waking
 * it; the purgatory hands the answer to the slot at the end of the turn. */
struct grp_park {
    struct br_park park; /* first: kind BR_PARK_GROUP */
    enum grp_park_kind what;
    struct grp_member *member; /* NULL once answered */
    struct br_groups *gs;
    struct br_delayed delayed;
    struct br_delay_link link;
    struct br_conn *conn;
    struct br_slot *slot;
    int32_t correlation_id;
    int16_t version;
    size_t max_bytes; /* response.max.bytes: the answer's ceiling */
    bool answered;
    bool close_after; /* no answer could be encoded: close the connection */
    uint8_t *answer;  /* the encoded response (owned) */
    size_t answer_len;
};

struct grp_protocol {
    char *name;
    uint8_t *metadata;
    int32_t metadata_len;
};

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
     * joined even when its connection died and join_park is gone). */
    bool awaiting_join;
    bool awaiting_sync;
    bool is_new;
    struct grp_park *join_park;
    struct grp_park *sync_park;
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
    struct br_delay_key parks; /* its parked JoinGroups and SyncGroups */
    bool initial_delay;        /* the join timer is Kafka's InitialDelayedJoin */
    bool new_member_added;     /* a member joined during the initial delay */
    int32_t initial_remaining_ms;
    struct grp_offset *offsets; /* sorted by (topic, partition) */
    size_t noffsets;
    size_t offsets_cap;
};

struct br_groups {
    struct br_broker *b;
    struct grp_group **buckets;
    size_t nbuckets; /* a power of two */
    size_t ngroups;
    struct grp_group *first;
    struct grp_group *last;
    struct grp_timer expiry;
    uint64_t rng; /* splitmix64 state for member ids */
};

/* ---- group.c */

const char *br_grp_state_name(enum grp_state s);
struct grp_group *br_grp_find(struct br_groups *gs, const char *id, size_t len);
/* Finds or creates (Empty, generation 0); NULL when out of memory or at
 * GRP_MAX_GROUPS. */
struct grp_group *br_grp_get_or_create(struct br_groups *gs, const char *id, size_t len);
/* Removes the group from the coordinator and frees it (members' parked
 * requests answered with `err`). */
void br_grp_remove(struct br_groups *gs, struct grp_group *g, int err);
struct grp_member *br_grp_member_find(struct grp_group *g, struct kp_str id);
/* A member's session deadline starts again (heartbeat, commit, join). */
void br_grp_heartbeat_reset(struct br_groups *gs, struct grp_member *m);
/* 0 when an OffsetCommit of (member, generation) may go to g, else the
 * Kafka error for every partition (Kafka's doCommitOffsets). */
int br_grp_commit_check(struct br_groups *gs, struct grp_group *g, struct kp_str member_id,
                        int32_t generation);

/* ---- group_offsets.c */

/* The number of partitions of __consumer_offsets: the topic's when it
 * exists, else offsets.topic.num.partitions. */
int32_t br_grp_offsets_partitions(struct br_groups *gs);
/* Starts creating __consumer_offsets when it is missing (topic_admin.h).
 * Returns 0 when it exists, else COORDINATOR_NOT_AVAILABLE (being made, or
 * it cannot be). */
int br_grp_offsets_topic_ensure(struct br_groups *gs);
/* Reads the topic's partitions (start-up). */
int br_grp_offsets_load(struct br_groups *gs);
/* The periodic offset retention check. */
void br_grp_offsets_expire(struct br_groups *gs);
/* Appends the group's current metadata (Kafka's group metadata value v3)
 * after a generation completes or the group empties. Failures are logged. */
void br_grp_store_group(struct br_groups *gs, struct grp_group *g);
/* Appends tombstones for every offset and the group key. Returns 0 or a
 * Kafka error. */
int br_grp_store_tombstones(struct br_groups *gs, struct grp_group *g);
void br_grp_offsets_free(struct grp_group *g);

/*
 * The records of __consumer_offsets (Kafka's GroupMetadataManager formats,
 * listed in group_offsets.c). The encoders write what the coordinator
 * appends, in the versions Kafka 2.0 writes unless a field only a later
 * version holds is there: offset commit key v1, offset value v1 (v3 for a
 * commit with a leader epoch and no expire timestamp), group metadata key
 * v2 and group value v1 (v3 when a member has a group instance id; it also
 * holds the current state timestamp, now when g->state_ts < 0), the
 * group's members each with the metadata of the chosen protocol as its
 * subscription. Errors stick in the writer.
 */
void br_grp_enc_offset_key(struct kp_writer *w, struct kp_str group, struct kp_str topic,
                           int32_t partition);
void br_grp_enc_offset_value(struct kp_writer *w, const struct grp_offset *o,
                             struct kp_str metadata);
void br_grp_enc_group_key(struct kp_writer *w, struct kp_str group);
void br_grp_enc_group_value(struct kp_writer *w, const struct grp_group *g);
/* The group value version br_grp_enc_group_value writes for g: 1 or 3. */
int16_t br_grp_group_value_version(const struct grp_group *g);

/* A record of __consumer_offsets as br_grp_record_decode reads it. Strings
 * and bytes are slices of the key and value it was given (len -1: null),
 * valid as long as those are. */
struct grp_record {
    int16_t key_version;   /* GRP_KEY_OFFSET_V0, GRP_KEY_OFFSET_V1 or GRP_KEY_GROUP_V2 */
    int16_t value_version; /* 0-3; -1: a tombstone (null value) */
    struct kp_str group;   /* never null */
    /* offset commit key and value (key versions 0 and 1) */
    struct kp_str topic; /* never null */
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch; /* value v3; -1 below */
    struct kp_str metadata;
    int64_t commit_ts;
    int64_t expire_ts; /* value v1; -1 otherwise */
    /* group metadata value (key version 2) */
    struct kp_str protocol_type;
    int32_t generation;
    struct kp_str protocol;  /* nullable */
    struct kp_str leader;    /* nullable */
    int64_t state_ts;        /* value v2 and v3; -1 below */
    struct kp_bytes members; /* the rest of the value: see br_grp_members_begin */
    /* on failure: where the key or value stopped decoding */
    const char *err_file;
    int err_line;
};

/*
 * Decodes one record of __consumer_offsets: the key (offset commit v0/v1 or
 * group metadata v2), then, unless the value is null (a tombstone), the
 * value of that key's kind (offset commit v0-v3, group metadata v0-v3 up to
 * its members). Bytes after the fields Kafka defines are ignored, as Kafka
 * does. Pure: no state, no allocation.
 * Returns 0; KP_E_UNSUPPORTED (an unknown key or value version);
 * KP_E_CORRUPT (a null key, group or topic, a topic with a NUL byte, which
 * no Kafka topic has and the cache's C strings cannot hold); a reader error
 * (KP_E_TRUNCATED, KP_E_BAD_LENGTH) for a key or value cut short. On an
 * error out->err_file and out->err_line give the detection site.
 */
KP_MUST_CHECK int br_grp_record_decode(struct kp_bytes key, struct kp_bytes value,
                                       struct grp_record *out);

/*
 * Applies a decoded record as the coordinator loads __consumer_offsets: an
 * offset commit sets the group's committed offset (creating the group), its
 * tombstone removes it; a group value sets the group's protocol type,
 * generation and state timestamp (members are not restored: they rejoin),
 * its tombstone removes the group with its offsets. Returns 0, KP_E_NOMEM
 * (also at GRP_MAX_GROUPS) or KP_E_TOO_LARGE (GRP_MAX_OFFSETS).
 */
KP_MUST_CHECK int br_grp_record_apply(struct br_groups *gs, const struct grp_record *rec);

/* One member of a group metadata value (slices of the value). */
struct grp_record_member {
    struct kp_str member_id;
    struct kp_str instance_id; /* value v3; null below */
    struct kp_str client_id;
    struct kp_str client_host;
    int32_t rebalance_timeout_ms; /* value v0: the session timeout, as Kafka reads it */
    int32_t session_timeout_ms;
    struct kp_bytes subscription;
    struct kp_bytes assignment;
};

struct grp_member_iter {
    struct kp_reader r;
    int16_t version;
    int32_t left;
};

/*
 * The members of a decoded group metadata value (the coordinator does not
 * restore them; tools and tests read them). begin reads the array's count,
 * at most GRP_MAX_MEMBERS and no more than the bytes can hold; next gives
 * one member at a time. Both return 0 or a reader error, which sticks in
 * it->r (with its detection site); next returns KP_ITER_END after the last.
 */
KP_MUST_CHECK int br_grp_members_begin(const struct grp_record *rec, struct grp_member_iter *it);
KP_MUST_CHECK int br_grp_members_next(struct grp_member_iter *it, struct grp_record_member *m);

#endif
