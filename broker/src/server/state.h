/*
 * samsa-broker: what the request layer serves from (struct br_server): the
 * topic table, producer ids, the managers the handlers call and the
 * requests in flight. The composition root (broker.h) holds it inside
 * struct br_broker and runs it.
 *
 * struct br_server holds everything the reactor thread owns: the topics and
 * their partitions (each with its log, leader epoch, high watermark and
 * producer state), the metadata store, parked requests. Handlers run on the
 * reactor thread and never block on anything but local disk writes.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SERVER_STATE_H
#define SAMSA_BROKER_SERVER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>

#include "auth/acl.h"
#include "base/fdlimit.h"
#include "base/fileref.h"
#include "cluster/metadata.h"
#include "cluster/metadata_cache.h"
#include "config/config.h"
#include "config/topic_config.h"
#include "reactor/net.h"
#include "reactor/purgatory.h"
#include "replica/partition.h"
#include "replica/replica_manager.h"
#include "replica/producer_state.h"
#include "storage/checkpoint.h"
#include "storage/log.h"
#include "storage/log_manager.h"
#include "txn/coordinator.h"

struct br_parked;
struct br_groups;
struct br_mailbox;
struct br_topic_admin;
struct br_zk;
struct br_controller;
struct br_shutdown;
struct br_cluster_member;
struct br_replication;
struct br_topic_zk_op;
struct br_cluster_create;
struct br_admin_manager_ops;
struct br_cwait;
struct br_cop;
struct br_worker;
struct br_admin_feed;
struct br_quotas;
struct br_quota_source;

/* A key/value pair as received (CreateTopics configs). */
struct br_kv {
    struct kp_str key;
    struct kp_str value;
};

#define BR_MAX_APIS 64
#define BR_MAX_TOPIC_CONFIGS 64

/* Requests of one API key handled, for the admin API: their count and
 * the time from decoding to the handler's return (a parked request's wait
 * is not counted). */
struct br_api_stats {
    int64_t requests;
    int64_t total_us;
    int64_t max_us;
};

/* Producer ids for InitProducerId (producer_ids.c standalone: reserved
 * in blocks in producer-id-block; cluster_producer_ids.c: a block claimed in
 * /latest_producer_id_block). */
struct br_pid_alloc {
    int64_t next;
    int64_t block_end; /* ids below it are reserved in producer-id-block */
    /* a cluster's block, [zk_next, zk_end) left of it, and whether the
     * next block is being claimed */
    int64_t zk_next;
    int64_t zk_end;
    bool zk_claiming;
};

/* The APIs served (dispatch.c): the ApiVersions answer, from the dispatch
 * table; whether each ApiKey is served; and, for the admin API, each key's
 * requests counted. */
struct br_api_table {
    struct kp_ApiVersionsResponse_ApiVersion versions[BR_MAX_APIS];
    size_t nversions;
    bool served[BR_MAX_APIS]; /* by ApiKey */
    struct br_api_stats stats[BR_MAX_APIS];
};

/* The admin requests of a cluster in flight (cluster_admin.c,
 * cluster_wait.h, cluster_topics.c, cluster_configs.c). */
struct br_cluster_admin {
    struct br_topic_zk_op *zk_ops; /* topic writes and config reads in flight (cluster_admin.c) */
    uint64_t rng;                  /* replica placement's random start (cluster_admin.c) */
    struct br_cluster_create *creates; /* CreateTopics waiting for ZooKeeper (cluster_admin.c) */
    /* during br_broker_create_topic of a CreateTopics on a cluster: the
     * request that waits for the topic's writes, and the topic's index */
    struct br_cluster_create *create_waiter;
    int32_t create_waiter_index;
    /* the other admin requests (cluster_wait.h): those parked, their
     * ZooKeeper requests in flight, the worker that removes deleted
     * partitions' directories */
    struct br_cwait *cwaits;
    struct br_cop *ops;
    struct br_worker *worker;
    /* config changes: the sequence number of the newest
     * /config/changes/config_change_ seen (-1: none listed yet) */
    int64_t config_change_seen;
    bool config_changes_listed;
    /* dynamic broker configs (cluster_broker_configs.c) as last read:
     * [0] /config/brokers/<default>, [1] this broker's */
    struct br_meta_config *dyn[2];
    size_t ndyn[2];
};

/* Requests between this broker and its controller (cluster_handlers.c):
 * ControlledShutdown requests waiting for this broker's controller, and the
 * next one's id; the controller's requests waiting in order while a
 * LeaderAndIsr's replica logs are opened, and whether one of them is being
 * applied. */
struct br_controller_requests {
    struct br_cs_wait *cs_waits;
    uint64_t cs_next_id;
    struct br_ctl_wait *ctl_waits;
    bool ctl_resuming;
};

/* What the request layer serves from: the configuration and identity, the
 * managers it calls (the hosted topics and their partitions, the group
 * coordinator, the log manager, the metadata cache and store, the
 * controller and replication of a cluster) and the requests in flight. The
 * composition root (broker.h) holds it inside struct br_server beside what
 * only the root runs (membership, controlled shutdown, the admin API feed,
 * housekeeping). */
/* The authorizer (authorize.c): on when authorizer.class.name names
 * Kafka's; the ACLs; super.users; the denials counted. */
struct br_authz {
    bool on;
    struct br_acl_store store;
    char **super_users; /* owned */
    size_t nsuper;
    int64_t denials;
    int64_t suppressed; /* denials not logged since the last line */
    int64_t last_log_ms;
    /* a cluster's: the newest notification seen in /kafka-acl-changes [0]
     * and /kafka-acl-extended-changes [1], and whether each was listed
     * since the session started (acl_zk.c) */
    int64_t change_seen[2];
    bool changes_listed[2];
};

struct br_server {
    struct br_config cfg;
    struct br_meta meta;
    struct br_net *net;
    int32_t node_id;
    /* the advertised listeners as clients and brokers reach them (broker.c
     * fills in a missing host and a bound port), in advertised.listeners'
     * order; advertised_host and _port are the inter-broker listener's */
    struct br_advertised {
        char listener[BR_LISTENER_NAME_MAX + 1];
        char host[256];
        int port;
        int16_t security_protocol; /* enum br_security_protocol */
    } advertised[BR_CONFIG_MAX_LISTENERS];
    size_t nadvertised;
    char advertised_host[256];
    int advertised_port;
    char cluster_id[64];
    struct br_replica_manager rm; /* the hosted topics and partitions (replica_manager.h) */
    struct br_pid_alloc pids;
    struct br_purgatory purgatory; /* delayed operations: Fetch, JoinGroup, SyncGroup */
    struct br_groups *groups;      /* the group coordinator (group.h) */
    struct br_txn_coordinator txn; /* the transaction coordinator (txn/coordinator.h) */
    struct br_txn_markers *txn_markers; /* a cluster's markers under way (txn_markers.h) */
    struct br_authz authz;
    struct br_mailbox *mailbox;    /* helper threads -> reactor (mailbox.h) */
    struct br_log_manager *logs;   /* the log dirs and every log (storage/log_manager.h) */
    /* the SCRAM credentials of the SASL listeners (security/credentials.h;
     * the root's), NULL without a SASL listener; a cluster keeps them from
     * /config/users (cluster_users.c) */
    struct br_scram_store *scram;
    struct br_topic_admin *admin;  /* standalone: topics being created or deleted (topic_admin.h) */
    /* what serves the admin requests (admin_manager.h): chosen with the
     * mode, in broker.c */
    const struct br_admin_manager_ops *admin_ops;
    bool stopping;
    /* set before br_broker_start: bind no listener; requests come through
     * in-process connections (br_conn_local_new; the stateful fuzz harness) */
    bool in_process;
    /* the budget of open segment files every partition's log shares
     * (fileref.h) */
    struct br_filecache *files;
    /* the controller's view of the cluster (a cluster of one standalone:
     * local_controller.h) */
    struct br_metadata_cache mc;
    /* cluster mode (zookeeper.connect set): the ZooKeeper session, this
     * broker's controller, the follower side, the admin requests in flight
     * and those between this broker and its controller */
    struct br_zk *zk;
    struct br_controller *controller;
    struct br_replication *replication; /* the follower side, ISR changes (replica/replication.h) */
    struct br_cluster_admin ca;
    struct br_controller_requests ctlreq;
    /* the last time this broker asked for __consumer_offsets to be made
     * in the cluster (group_offsets.c): asked again only after a while */
    int64_t offsets_create_ms;
    /* the replication factor __consumer_offsets is made with:
     * offsets.topic.replication.factor, capped at 1 standalone (a cluster
     * of one never grows; set where the mode is chosen, broker.c) */
    int16_t offsets_topic_rf;
    /* the same for __transaction_state (api_txn.c):
     * transaction.state.log.replication.factor, capped at 1 standalone */
    int64_t txn_topic_create_ms;
    int16_t txn_topic_rf;
    struct br_api_table api;
    /* client quotas (server/client_quotas.h); quota_src: quota.config.file */
    struct br_quotas *quotas;
    struct br_quota_source *quota_src;
    /* the request a handler runs for now (request_percentage), NULL when
     * none or its time is recorded already, and when it started */
    struct br_req *quota_req;
    int64_t quota_req_start_us;
};

/* What the reactor's ops (br_net_ops) call: each whole request frame
 * (payload after the size, valid only during the call, writable in place,
 * dispatch.c); a parked request whose connection died (request.c). Whether
 * the broker stops: parked requests are answered at once then. */
void br_broker_handle_frame(struct br_server *b, struct br_conn *c, uint8_t *payload, size_t len);
void br_broker_cancel_parked(struct br_server *b, void *parked);
bool br_broker_stopping(const struct br_server *b);

/* Producer ids: reads producer-id-block (br_broker_next_producer_id). 0 or -1. */
KP_MUST_CHECK int br_producer_ids_load(struct br_server *b);

/* A producer id never handed out before by this log dir (InitProducerId):
 * ids are reserved on disk in blocks (producer-id-block), so neither a
 * restart nor a clock stepping back repeats one. 0 or
 * KP_ERR_KAFKA_STORAGE_ERROR when the reservation cannot be written. */
KP_MUST_CHECK int br_broker_next_producer_id(struct br_server *b, int64_t *id);

/* Validates a new topic and starts its creation (topic_admin.h: stored and
 * its logs made away from the reactor; it exists once that is done, and
 * br_topic_admin_creating says so meanwhile). replicas: NULL to have the
 * broker place them, or a manual assignment, partitions x
 * replication_factor known broker ids partition-major (the CreateTopics
 * handler checks it as Kafka does). err/errlen explain a failure; returns a Kafka
 * error code, 0 when started (or, validate_only, valid). */
/* An internal topic a coordinator keeps its state in (__consumer_offsets,
 * __transaction_state), made on first use as Kafka 2.0's
 * KafkaApis.createInternalTopic makes it. */
struct br_internal_topic {
    const char *name;
    int32_t partitions;
    int16_t rf;               /* the configured factor, capped at 1 standalone */
    int16_t configured_rf;    /* the configured factor, for the log */
    const char *rf_key;       /* its configuration key, for the log */
    const struct br_kv *settings;
    size_t nsettings;
    int64_t *asked_ms;        /* when this broker last asked for it */
};

/* 0 when the cluster has the topic; else COORDINATOR_NOT_AVAILABLE, the
 * topic asked for (at most every few seconds, and not while fewer brokers
 * are alive than its replication factor: the log says so)
 * (internal_topics.c). */
int br_ensure_internal_topic(struct br_server *b, const struct br_internal_topic *it);

/* The partition of internal topic t (NULL: not hosted here) whose records
 * id's go to, of n partitions (the cluster's count; 0: not made yet), when
 * this broker leads it; else NULL with *err: COORDINATOR_NOT_AVAILABLE
 * while the topic is missing, NOT_COORDINATOR when another broker leads the
 * partition (internal_topics.c). */
struct br_partition *br_internal_partition(struct br_topic *t, int32_t n, const char *id,
                                           size_t len, int *err);

/* The coordinator of key among n partitions of internal topic `name`: the
 * leader of the key's partition in the metadata cache (Java's String
 * hash), its endpoint on listener; COORDINATOR_NOT_AVAILABLE when the
 * partition has no live leader or that leader no such listener (Kafka's
 * handleFindCoordinatorRequest) (internal_topics.c). */
int br_internal_coordinator(struct br_server *b, const char *name, int32_t n, struct kp_str key,
                            const char *listener, int32_t *node, const char **host, int32_t *port);

int br_broker_create_topic(struct br_server *b, struct kp_str name, int32_t partitions,
                           int16_t replication_factor, const int32_t *replicas,
                           const struct br_kv *configs, size_t nconfigs, bool validate_only,
                           char *err, size_t errlen);
/* A manual assignment's broker id is known: a registered broker of the
 * cluster (this one alone when standalone). */
bool br_broker_known(const struct br_server *b, int32_t id);
/* How many brokers br_broker_known knows. */
size_t br_broker_live_count(const struct br_server *b);
#endif
