/*
 * samsa-broker: the admin API's snapshot, what the reactor knows at one
 * instant in plain C structs, built on the reactor thread (admin_feed.c)
 * and read by the admin thread (admin.h). A published snapshot is
 * immutable: whoever holds a reference reads it without a lock, and the
 * last br_snap_unref frees it. Everything in it lives in the snapshot's
 * own arena (br_snap_alloc), so it is freed at once.
 *
 * Replicas: a broker knows each follower's log end offset only for the
 * partitions it leads (br_remote_replica). A partition led here is
 * `led_here` with every replica's LEO, lag and caught-up time; one led
 * elsewhere carries what the metadata cache says (leader, epoch, ISR,
 * replicas) and this broker's own LEO when it hosts a follower, with the
 * other replicas' LEOs unknown (-1).
 *
 * @locality built on the reactor thread; read on any thread once published
 */
#ifndef SAMSA_BROKER_ADMIN_SNAPSHOT_H
#define SAMSA_BROKER_ADMIN_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

struct br_snap_replica {
    int32_t broker;
    int64_t log_end_offset;       /* -1: not known here */
    int64_t lag;                  /* the leader's LEO - this LEO; -1: not known */
    bool in_sync;                 /* in the ISR */
    bool offline;                 /* its broker is not alive (metadata cache) */
    int64_t last_caught_up_ms;    /* wall clock; -1: never, or not known here */
    int64_t since_caught_up_ms;   /* now - last caught up; -1: not known */
};

struct br_snap_partition {
    int32_t partition;
    int32_t leader; /* -1: none */
    int32_t leader_epoch;
    bool led_here;  /* this broker leads it: every replica's LEO below is known */
    bool hosted;    /* this broker has a replica (leader or follower) */
    int64_t high_watermark;   /* -1: not known here */
    int64_t last_stable_offset; /* the LSO (br_partition_lso); -1: not known here */
    int64_t log_start_offset; /* -1: not known here */
    int64_t log_end_offset;   /* this broker's replica's; -1 when not hosted */
    int64_t size_bytes;       /* this broker's replica's; -1 when not hosted */
    int32_t nreplicas;
    struct br_snap_replica *replicas; /* in assignment order */
    int32_t nisr;
    int32_t *isr;
    /* a move under way (/admin/reassign_partitions): the replicas it moves
     * to, the first the preferred leader; ntarget 0 when not moving. While
     * it moves, `replicas` is the target followed by the old replicas not
     * in it (Kafka 2.0's KafkaController.onPartitionReassignment). */
    int32_t ntarget;
    int32_t *target;
};

struct br_snap_kv {
    const char *key;
    const char *value; /* NULL: null, or a secret */
    bool sensitive;
};

struct br_snap_topic {
    const char *name;
    bool internal;
    int32_t min_isr; /* min.insync.replicas; -1 when not known here */
    int32_t npartitions;
    struct br_snap_partition *parts;
    size_t nconfigs;
    struct br_snap_kv *configs;
    /* what this broker took as leader and sent to consumers and followers */
    int64_t messages_in;
    int64_t bytes_in;
    int64_t bytes_out;
};

struct br_snap_broker {
    int32_t id;
    const char *host;
    int32_t port;
    const char *rack;      /* NULL: none */
    const char *admin_url; /* NULL: not known */
    bool alive;
};

struct br_snap_lag {
    const char *topic;
    int32_t partition;
    int64_t committed;
    int64_t high_watermark; /* -1: not known */
    int64_t lag;            /* -1: not known */
};

struct br_snap_tp {
    const char *topic;
    int32_t partition;
};

struct br_snap_member {
    const char *member_id;
    const char *client_id;
    const char *client_host;
    size_t nassigned;
    struct br_snap_tp *assigned;
};

struct br_snap_group {
    const char *group_id;
    const char *protocol_type;
    const char *protocol;
    const char *state;
    int32_t generation;
    size_t members;
    struct br_snap_member *member_list; /* `members` of them; NULL when out of memory */
    size_t nlags;
    struct br_snap_lag *lags;
};

struct br_snap_log_dir {
    const char *path;
    int64_t size_bytes;
    size_t partitions;
};

/* A transactional id the transaction coordinator here knows
 * (txn/coordinator.h). */
struct br_snap_txn {
    const char *transactional_id;
    int64_t producer_id;
    int16_t epoch;
    int32_t timeout_ms;
    const char *state;  /* Kafka's name: "Ongoing", "CompleteAbort", ... */
    bool open;          /* Ongoing or Prepare*: start and age below are its */
    int64_t start_ms;   /* wall clock of the first AddPartitionsToTxn; -1: none open */
    int64_t age_ms;     /* now - start; -1: none open */
    int64_t update_ms;  /* wall clock of the last change */
    size_t nparts;
    struct br_snap_tp *parts; /* the open transaction's */
};

/* A client quota entity in force (quota/quota.h): a NULL user or client
 * is a level the entity does not have; a rate < 0 is not set. */
struct br_snap_quota {
    const char *user;
    const char *client;
    double producer_byte_rate;
    double consumer_byte_rate;
    double request_percentage;
};

/* A rate measured for client quotas (Kafka's Produce, Fetch and Request
 * sensors), tagged as Kafka tags them ("" for a level not used). */
struct br_snap_quota_rate {
    const char *type; /* "Produce", "Fetch", "Request" */
    const char *user;
    const char *client;
    double limit;             /* < 0: no quota holds it */
    double rate;              /* bytes (or percent) per second now */
    int64_t throttle_total_ms; /* throttle time earned since it was made */
    int64_t throttle_left_ms;  /* > 0: a connection of it is muted now */
};

/* Per Kafka API: how many requests and their total handling time. */
struct br_snap_api {
    int16_t key;
    const char *name;
    int64_t requests;
    int64_t total_us;
    int64_t max_us;
};

struct br_snapshot {
    atomic_int refs;
    uint64_t version;      /* 1, 2, ... as the reactor published them */
    int64_t taken_ms;      /* wall clock */
    int64_t started_ms;    /* wall clock, when the broker started */
    int32_t node_id;
    const char *cluster_id;
    bool cluster;          /* a member of a cluster (else standalone) */
    int32_t controller_id; /* -1: not known */
    const char *admin_url; /* this broker's */
    size_t nbrokers;
    struct br_snap_broker *brokers; /* sorted by id */
    size_t ntopics;
    struct br_snap_topic *topics; /* sorted by name */
    size_t ngroups;
    struct br_snap_group *groups;
    size_t nconfigs;
    struct br_snap_kv *configs; /* this broker's */
    size_t nlog_dirs;
    struct br_snap_log_dir *log_dirs;
    size_t ntxns;
    struct br_snap_txn *txns; /* in the coordinator's order */
    /* the coordinator's transactions since the start */
    int64_t txns_committed;
    int64_t txns_aborted;
    int64_t txns_timed_out;
    int64_t txns_fenced;
    size_t napis;
    struct br_snap_api *apis;
    size_t nquotas;
    struct br_snap_quota *quotas; /* the entities in force */
    size_t nquota_rates;
    struct br_snap_quota_rate *quota_rates;
    int64_t isr_shrinks;
    int64_t isr_expands;
    /* the replication quotas, [0] the leader's and [1] the follower's
     * (Kafka's LeaderReplication and FollowerReplication): the bound
     * (bytes/s, INT64_MAX none), the throttled replicas' byte rate, their
     * bytes in all, and the partitions held back from a fetch in all */
    struct br_snap_repl_quota {
        int64_t bound;
        double rate;
        int64_t bytes_total;
        int64_t throttled_total;
    } repl_quota[2];
    /* the Kafka listeners' client connections: open, and since the start
     * accepted, refused, closed for being idle */
    int64_t connections;
    int64_t connections_accepted;
    int64_t connections_refused;
    int64_t connections_refused_per_ip; /* of those: max.connections.per.ip */
    int64_t connections_idle_closed;
    /* what the admin API costs the reactor: snapshots built since the
     * start (this one included), and the time its ticks took (the
     * fingerprint every 100 ms, the builds) */
    int64_t snapshots_built;
    int64_t reactor_us;
    /* arena */
    struct br_snap_chunk *chunks;
    bool failed; /* an allocation failed: the snapshot is not to be published */
};

/* An empty snapshot with one reference; NULL when out of memory. */
struct br_snapshot *br_snap_new(void);
/* Zeroed memory of the snapshot's arena, freed with it; NULL (and
 * snap->failed) when out of memory: the builder checks failed once. */
void *br_snap_alloc(struct br_snapshot *s, size_t n);
/* A copy of s[0..len) / of a C string in the arena; NULL when out of
 * memory or src is NULL. */
const char *br_snap_strndup(struct br_snapshot *s, const char *src, size_t len);
const char *br_snap_strdup(struct br_snapshot *s, const char *src);

struct br_snapshot *br_snap_ref(struct br_snapshot *s);
/* Drops a reference; the last one frees the snapshot. NULL is a no-op. */
void br_snap_unref(struct br_snapshot *s);

/* Lookups (binary search): NULL when absent. */
const struct br_snap_topic *br_snap_topic(const struct br_snapshot *s, const char *name);
const struct br_snap_broker *br_snap_broker(const struct br_snapshot *s, int32_t id);

/* How many partitions have fewer ISR members than replicas, fewer than
 * min.insync.replicas, no leader; partitions counted. Over what this
 * broker knows (the metadata cache in a cluster). */
struct br_snap_health {
    size_t partitions;
    size_t under_replicated;
    size_t under_min_isr;
    size_t offline;
    size_t led_here;
    size_t under_replicated_led_here; /* Kafka's UnderReplicatedPartitions of this broker */
};
void br_snap_health(const struct br_snapshot *s, struct br_snap_health *out);

#endif
