/*
 * samsa-broker: the metadata cache, Kafka's MetadataCache: what the last
 * UpdateMetadata from the controller said about the cluster (the live
 * brokers and every partition's leader, leader epoch, ISR, replicas and
 * offline replicas). A broker of a cluster answers Metadata from it, so
 * brokers may briefly disagree, as Kafka's do (kafka-replication.md §6.2).
 *
 * UpdateMetadata replaces the live brokers wholesale and stores each
 * partition state it carries; a state with leader -2 (LeaderDuringDelete)
 * removes the partition, and a topic left without partitions goes. A
 * request from an older controller epoch than one already seen is refused
 * (STALE_CONTROLLER_EPOCH).
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_CLUSTER_METADATA_CACHE_H
#define SAMSA_BROKER_CLUSTER_METADATA_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>
#include <samsa-protocol/messages.h>

#include "cluster/metadata.h"

#define BR_MC_HOST_MAX 255
#define BR_MC_LISTENER_MAX 255
/* Endpoints kept of one broker (Kafka's listeners of it); more are dropped. */
#define BR_MC_MAX_ENDPOINTS 16

/* One listener of a broker: where clients that came in on a listener of
 * that name reach it. */
struct br_mc_endpoint {
    char listener[BR_MC_LISTENER_MAX + 1];
    char host[BR_MC_HOST_MAX + 1];
    int32_t port;
};

struct br_mc_broker {
    int32_t id;
    /* the endpoint of the listener br_mc_update was given: the inter-broker
     * one, which followers fetch from */
    char host[BR_MC_HOST_MAX + 1];
    int32_t port;
    /* every endpoint the controller sent (v3+ by name; before, by security
     * protocol, named after it) */
    struct br_mc_endpoint endpoints[BR_MC_MAX_ENDPOINTS];
    size_t nendpoints;
    bool has_rack;
    char rack[BR_MC_HOST_MAX + 1];
};

struct br_mc_partition {
    bool present; /* the controller sent a state for it */
    int32_t leader;
    int32_t leader_epoch;
    int32_t controller_epoch;
    int32_t zk_version;
    int32_t *isr; /* owned */
    int32_t nisr;
    int32_t *replicas; /* owned, in assignment order */
    int32_t nreplicas;
    int32_t *offline; /* owned */
    int32_t noffline;
};

struct br_mc_topic {
    char name[BR_TOPIC_NAME_MAX + 1];
    int32_t npartitions; /* 1 + the highest partition present */
    struct br_mc_partition *parts;
};

struct br_metadata_cache {
    int32_t controller_id; /* of the last UpdateMetadata; -1 before one */
    int32_t controller_epoch;
    struct br_mc_broker *brokers; /* sorted by id */
    size_t nbrokers;
    struct br_mc_topic **topics; /* sorted by name */
    size_t ntopics;
};

/* An empty cache (no broker, controller -1). */
void br_mc_init(struct br_metadata_cache *mc);
void br_mc_free(struct br_metadata_cache *mc);

/*
 * Applies an UpdateMetadata request of `version`. listener: the
 * inter-broker listener ("PLAINTEXT"): each live broker's endpoint of that
 * name (v3+; before, the first PLAINTEXT one) is its host and port, and a
 * broker without one is left out; all its endpoints are kept for
 * br_mc_endpoint. Returns 0,
 * KP_ERR_STALE_CONTROLLER_EPOCH (nothing changed) or KP_E_NOMEM (the cache
 * may hold part of the request; the next one repairs it).
 */
KP_MUST_CHECK int br_mc_update(struct br_metadata_cache *mc,
                               const struct kp_UpdateMetadataRequest *req, int16_t version,
                               const char *listener);

/* Refuses a control request from an older controller (Kafka: STALE_CONTROLLER_EPOCH),
 * and otherwise remembers the epoch. Returns 0 or KP_ERR_STALE_CONTROLLER_EPOCH. */
KP_MUST_CHECK int br_mc_check_epoch(struct br_metadata_cache *mc, int32_t controller_id,
                                    int32_t controller_epoch);

const struct br_mc_broker *br_mc_broker(const struct br_metadata_cache *mc, int32_t id);

/* The live brokers as Kafka's replica assignment takes them
 * (getBrokerMetadatas): ids[0..nbrokers) ascending, racks[i] the rack of
 * ids[i] or NULL (borrowed from mc: valid until its next update). */
void br_mc_brokers_with_racks(const struct br_metadata_cache *mc, int32_t *ids,
                              const char **racks);
/* b's endpoint of the listener named `listener` (upper case), or NULL: a
 * client that came in on that listener does not see b (Kafka's
 * MetadataCache.getAliveEndpoints). */
const struct br_mc_endpoint *br_mc_endpoint(const struct br_mc_broker *b, const char *listener);
const struct br_mc_topic *br_mc_topic(const struct br_metadata_cache *mc, const char *name,
                                      size_t len);
/* The state of topic-partition, or NULL. */
const struct br_mc_partition *br_mc_partition(const struct br_metadata_cache *mc, const char *topic,
                                              size_t len, int32_t partition);

#endif
