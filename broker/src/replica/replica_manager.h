/*
 * samsa-broker: the replica manager (Kafka 2.0's ReplicaManager, its table
 * of hosted partitions): the topics this broker holds a replica of, each
 * with its partitions (replica/partition.h), created from stored metadata
 * or adopted from logs a worker made, grown, removed; a cluster's replica
 * hosted when the controller names this broker (its log opened off the
 * reactor in three steps) and deleted at StopReplica.
 *
 * It owns the table and nothing else: the log manager, the file budget, the
 * purgatory, the metadata cache and the broker's config are its owner's,
 * given at br_rm_init.
 *   br_rm_init(&rm, &cfg, logs, files, &purgatory, &mc);
 *   br_rm_topic_load(&rm, meta)            at start-up, standalone
 *   p = br_rm_leader_partition(&rm, name, i, &err)   a Produce's partition
 *   br_rm_fini(&rm)                         every topic closed and freed
 * @locality reactor thread (br_rm_host_open: any thread)
 */
#ifndef SAMSA_BROKER_REPLICA_REPLICA_MANAGER_H
#define SAMSA_BROKER_REPLICA_REPLICA_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/messages.h>

#include "base/fileref.h"
#include "cluster/metadata.h"
#include "cluster/metadata_cache.h"
#include "config/config.h"
#include "config/topic_config.h"
#include "reactor/purgatory.h"
#include "replica/partition.h"
#include "storage/log.h"
#include "storage/log_manager.h"

#define BR_MAX_PARTITIONS 100000

struct br_topic {
    char name[BR_TOPIC_NAME_MAX + 1];
    bool internal;
    int32_t npartitions;
    int16_t replication_factor;
    struct br_partition *partitions;
    struct br_topic_config config;
    /* counted for the admin API's metrics: records and bytes appended as
     * leader, record bytes read by Fetch */
    int64_t messages_in;
    int64_t bytes_in;
    int64_t bytes_out;
};

struct br_replica_manager {
    struct br_topic **topics; /* sorted by name */
    size_t ntopics;
    size_t topics_cap;
    /* the largest producer id found in the logs loaded (producer ids are
     * handed out above it) */
    int64_t max_producer_id_seen;
    /* the owner's, given at br_rm_init */
    const struct br_config *cfg;
    struct br_log_manager *logs;
    struct br_filecache *files;
    struct br_purgatory *purgatory;
    const struct br_metadata_cache *mc;
};

/* An empty table over its owner's parts (each must outlive it). */
void br_rm_init(struct br_replica_manager *rm, const struct br_config *cfg,
                struct br_log_manager *logs, struct br_filecache *files,
                struct br_purgatory *purgatory, const struct br_metadata_cache *mc);
/* Every topic's logs closed and the topics freed; the table empty. */
void br_rm_fini(struct br_replica_manager *rm);

/* Start-up (broker.c): the topic of stored metadata m, its partitions'
 * logs opened with recovery. 0 or -1 (logged). */
KP_MUST_CHECK int br_rm_topic_load(struct br_replica_manager *rm, const struct br_topic_meta *m);
/* Closes a topic's logs and frees it (it must be out of the table). */
void br_rm_topic_free(struct br_replica_manager *rm, struct br_topic *t);
struct br_topic *br_rm_find_topic(struct br_replica_manager *rm, struct kp_str name);

/* The partition this broker leads, or NULL with *err: UNKNOWN_TOPIC_OR_PARTITION
 * (no such partition) or NOT_LEADER_OR_FOLLOWER (it exists in the cluster,
 * led elsewhere or not here). */
struct br_partition *br_rm_leader_partition(struct br_replica_manager *rm, struct kp_str topic,
                                            int32_t index, int16_t *err);

/* Cluster mode: the local replica of topic-partition, its topic made (with
 * at least npartitions slots, those not hosted without a log) and its log
 * opened or created when it has none. Returns 0 or a Kafka error code
 * (KAFKA_STORAGE_ERROR, logged). Opening a log is file work (a directory
 * made, files created, a log recovered after an unclean stop): a caller
 * on the reactor with logs to open opens them on a worker instead, in the
 * three steps below. */
KP_MUST_CHECK int br_rm_host_partition(struct br_replica_manager *rm, struct kp_str topic,
                                       int32_t index, int32_t npartitions,
                                       struct br_partition **out);

/* What opening a partition's log needs, taken on the reactor. */
struct br_log_opening {
    char topic[BR_TOPIC_NAME_MAX + 1];
    int32_t index;
    size_t dir; /* its log dir, counted there (br_logm_find_dir) until installed or released */
    char path[4096];
    int64_t recovery_point;
    struct br_log_config lc;
    struct br_log *log; /* the worker's result */
    int rc;             /* the worker's br_log_open result */
};

/* Step 1, on the reactor: the topic made (as br_rm_host_partition) and
 * what the worker needs in *o. Returns 1 when the replica has its log
 * already (nothing to open), 0 when *o is to be opened, or a Kafka error
 * code. */
KP_MUST_CHECK int br_rm_host_prepare(struct br_replica_manager *rm, struct kp_str topic,
                                     int32_t index, int32_t npartitions, struct br_log_opening *o);
/* Step 2, on any thread: the log opened or created (o->log, o->rc). */
void br_rm_host_open(struct br_log_opening *o);
/* Step 3, on the reactor: the log installed as the replica's (or closed,
 * with its dir given back, when it failed to open or the replica got one
 * meanwhile). Returns 0 or KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_rm_host_install(struct br_replica_manager *rm, struct br_log_opening *o);

/* Installs a topic whose metadata is stored and whose logs a worker made:
 * logs[0..m->partitions) are taken whatever the result (closed on failure),
 * dirs[i] is the log dir of partition i (already counted in
 * placed there by br_logm_place). Returns 0 or -1 (out of memory). */
int br_rm_topic_adopt(struct br_replica_manager *rm, const struct br_topic_meta *m,
                      struct br_log **logs, const size_t *dirs);
/* Adds partitions [t->npartitions, partitions) to a topic whose metadata
 * store holds them already and whose logs a worker made: logs[i] and
 * dirs[i] (placed there by br_logm_place) for each new i, taken
 * whatever the result (closed on failure). Parked fetches on the topic are
 * answered first. Returns 0 or -1 (out of memory, the topic unchanged). */
KP_MUST_CHECK int br_rm_topic_grow(struct br_replica_manager *rm, struct br_topic *t,
                                   int32_t partitions, struct br_log **logs, const size_t *dirs);
/* Takes out a topic the metadata store no longer holds: parked fetches on
 * it are answered, its logs closed, the topic freed. dirs[0..npartitions)
 * receive copies of its partition directories (the caller's: kp_free), to
 * be deleted by path. Returns 0, or KP_E_NOMEM with nothing changed. */
KP_MUST_CHECK int br_rm_topic_remove(struct br_replica_manager *rm, struct br_topic *t,
                                     char **dirs);
/* Cluster mode, StopReplica with delete_partitions: partition index of t
 * is no longer hosted here (its caller stopped its fetching): what waits on
 * it answered, its log taken from the log manager, its directory
 * renamed to its delete name (br_log_delete_dir_name) and the log closed;
 * the slot stays, without a log. *dir receives the directory's path (the
 * caller's, kp_free; NULL when it had no log, or out of memory) to be
 * removed off the reactor. Returns 0, or KAFKA_STORAGE_ERROR when the
 * rename failed (the log is closed all the same: *dir names it where it
 * is). */
KP_MUST_CHECK int br_rm_partition_delete(struct br_replica_manager *rm, struct br_topic *t,
                                         int32_t index, char **dir);
/* Takes t out of the table and frees it when none of its partitions has a
 * log here any more. */
void br_rm_topic_forget_if_empty(struct br_replica_manager *rm, struct br_topic *t);
/* A partition log's settings from its topic's config. */
void br_topic_log_config(const struct br_topic_config *tc, struct br_log_config *lc);

#endif
