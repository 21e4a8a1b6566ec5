/*
 * samsa-broker: one request on its way through a handler.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_REQUEST_H
#define SAMSA_BROKER_REQUEST_H

#include "cluster/zk.h"
#include "server/state.h"

struct br_req {
    struct br_server *b;
    struct br_conn *conn;
    struct br_slot *slot; /* NULL: this request gets no response (acks=0) */
    struct kp_request_header *hdr;
    int16_t version;
    void *body; /* the decoded kp_<Api>Request (in an arena of the request's size) */
    /* The response's arena: its ceiling is response.max.bytes, not the
     * request's size, so a small request may get a large answer (Metadata of
     * every topic) while what the request's bytes claim stays bounded by
     * br_request_arena_max. */
    struct kp_arena *arena;
    uint8_t *payload; /* the frame, writable while the handler runs */
    size_t len;
    /* who asks, as the authorizer names them (authorize.c): made at the
     * request's first check, in its arena, and kept for the rest (NULL
     * until then) */
    const char *principal;
    const char *host;
};

/* The ceiling of the arena a request of `len` bytes is decoded into: decoded
 * views are small next to the frame, so hostile bytes cannot claim more
 * memory than their size justifies. */
size_t br_request_arena_max(size_t len);

/* An array of n elements of size bytes in r's response arena (room for
 * one when n is 0), or NULL when the arena is spent. */
void *br_req_array(struct br_req *r, size_t n, size_t size);
/* The name of the listener the request came in on (upper case): what
 * Metadata and FindCoordinator answer endpoints of. An in-process
 * connection (the fuzz harness) counts as on the inter-broker listener. */
const char *br_req_listener(const struct br_req *r);

/* Encode `resp` (a kp_<Api>Response of the request's API and version) into
 * the request's slot and mark it ready; the encoded response may take up to
 * response.max.bytes (br_respond) or `max` bytes. Returns 0 or a KP_E_* code
 * (KP_E_TOO_LARGE above the ceiling); on failure the slot is left as it was. */
int br_respond(struct br_req *r, const void *resp);
KP_MUST_CHECK int br_respond_max(struct br_req *r, const void *resp, size_t max);

/* Kafka's answer to a request whose handling failed (respond_error.c): the
 * API's error response, `code` in every entry the request names (`message`
 * where the response has one), as Kafka's <Api>Request.getErrorResponse
 * builds it. Returns 0, or a KP_E_* code when it could not be sent. */
KP_MUST_CHECK int br_respond_error(struct br_req *r, int code, const char *message);

/* A handler failed with err (a KP_E_* code, or a Kafka code that applies to
 * the whole request) before writing its response: logs it once with the
 * API, version, peer, client id and reason (response.max.bytes when the
 * response arena or the encoding hit it) and answers with
 * br_respond_error(UNKNOWN_SERVER_ERROR, or err when it is a Kafka code).
 * Only when that is impossible (no response expected, a slot already
 * written, out of memory) is the connection closed instead. */
void br_respond_failed(struct br_req *r, int err);

/* A writable pointer to bytes of the request's frame that a decoded view
 * (a const slice) refers to. */
uint8_t *br_req_mutable(struct br_req *r, const uint8_t *view);

/* Handlers, one per API (handlers.c). Each answers through br_respond, parks
 * the request, or returns a KP_E_* code without having touched the slot; the
 * dispatcher then answers through br_respond_failed. */
int br_h_api_versions(struct br_req *r);
int br_h_metadata(struct br_req *r);
/* cluster mode (cluster_handlers.c): the controller's requests, and
 * Metadata answered from the metadata cache */
int br_h_leader_and_isr(struct br_req *r);
int br_h_stop_replica(struct br_req *r);
int br_h_update_metadata(struct br_req *r);
int br_h_offset_for_leader_epoch(struct br_req *r);
/* ControlledShutdown, on the active controller: parked until the
 * controller's thread moved the broker's leaderships. */
int br_h_controlled_shutdown(struct br_req *r);
/* Stop: every parked ControlledShutdown answered NOT_CONTROLLER. */
void br_complete_controlled_shutdowns(struct br_server *b);
/* The controller's requests (LeaderAndIsr, StopReplica, UpdateMetadata)
 * queued while a LeaderAndIsr's replica logs are opened on the cluster
 * worker: a dying connection drops its request (the controller sends it
 * again), a stop answers BROKER_NOT_AVAILABLE, and what is left at the end
 * is freed. */
void br_complete_controller_requests(struct br_server *b);
void br_controller_requests_free(struct br_server *b);
/* cluster mode (cluster_admin.c): a new topic written to ZooKeeper as
 * Kafka's AdminZkClient writes it (its config, then its assignment: manual,
 * m->partitions x m->replication_factor ids partition-major, or, NULL, over
 * the live brokers, Kafka's rack-unaware placement): 0 when the writes are
 * under way, or a Kafka error code with err; a hosted topic's configs read
 * from /config/topics/<t> and applied to its logs; the requests still away
 * at stop freed. */
KP_MUST_CHECK int br_cluster_create_topic(struct br_server *b, const struct br_topic_meta *m,
                                          const int32_t *manual, char *err, size_t errlen);
void br_cluster_read_topic_configs(struct br_server *b, const char *topic);
/* A topic's configs from what ZooKeeper gave for /config/topics/<topic>:
 * the broker's defaults with the znode's overrides (their count in
 * *overrides; none when there is no znode). -1 on a failed read or a
 * document that cannot be read (logged), with the defaults in tc. */
int br_cluster_topic_config_decode(struct br_server *b, const char *topic,
                                   const struct br_zk_result *r, struct br_topic_config *tc,
                                   size_t *overrides);
void br_cluster_admin_free(struct br_server *b);
/* CreateTopics on a cluster: begin makes the waiter the topics' writes
 * report to (b->ca.create_waiter while each is started; NULL when out of
 * memory); park then has the answer resp (its arrays in r's arena) wait
 * until every write started is answered (TOPIC_ALREADY_EXISTS when another
 * creation won). Returns 0 when parked, 1 when nothing waits (answer now:
 * the waiter is freed), or KP_E_NOMEM (freed too). */
struct br_cluster_create *br_cluster_create_begin(struct br_server *b);
KP_MUST_CHECK int br_cluster_park_create(struct br_cluster_create *w, struct br_req *r,
                                         const struct kp_CreateTopicsResponse *resp,
                                         int32_t timeout_ms);
/* Once the writes are done, a CreateTopics with a timeout_ms above 0 waits
 * (at most that long) until every partition of the topics it created has a
 * leader in this broker's metadata cache, as Kafka 2.0's
 * DelayedCreatePartitions does (REQUEST_TIMED_OUT for a topic still without
 * leaders then: it is made all the same). An UpdateMetadata applied calls
 * br_cluster_creates_check. */
void br_cluster_creates_check(struct br_server *b);
/* Stop: every CreateTopics still waiting is answered (REQUEST_TIMED_OUT
 * for the topics whose writes were not answered). */
void br_cluster_complete_creates(struct br_server *b);
/* The admin requests that wait for ZooKeeper and the controller on a
 * broker of a cluster (cluster_topics.c, cluster_configs.c,
 * cluster_producer_ids.c; Kafka 2.0's KafkaApis, AdminManager and
 * AdminZkClient):
 * - DeleteTopics: answered NOT_CONTROLLER by a broker that is not the
 *   controller; otherwise /admin/delete_topics/<t> is made for each topic
 *   the metadata cache knows and the request waits, up to its timeout,
 *   until the controller deleted the topic (the marker gone, the topic out
 *   of the cache);
 * - CreatePartitions: NOT_CONTROLLER likewise; the new partitions placed
 *   (Kafka's rack-unaware assignment continuing the existing one, or the
 *   request's) and written to /brokers/topics/<t> conditionally on the
 *   version read; the request waits until the cache shows every partition
 *   led;
 * - AlterConfigs, IncrementalAlterConfigs (any broker): a topic's configs
 *   validated as standalone, written to /config/topics/<t> conditionally
 *   on the version read, then a /config/changes/config_change_ znode
 *   tells every broker (br_cluster_config_changes);
 * - InitProducerId: ids from blocks of 1000 claimed by a conditional write
 *   of /latest_producer_id_block.
 * Each returns what br_respond returns, having answered or parked r. */
KP_MUST_CHECK int br_cluster_delete_topics(struct br_req *r);
KP_MUST_CHECK int br_cluster_create_partitions(struct br_req *r);
KP_MUST_CHECK int br_cluster_alter_configs(struct br_req *r, bool incremental);
KP_MUST_CHECK int br_cluster_init_producer_id(struct br_req *r);
/* StopReplica with delete_partitions: the directories renamed here were
 * removed off the reactor (paths[0..n) taken, whatever happens). */
void br_cluster_remove_dirs(struct br_server *b, char **paths, size_t n);
/* Every broker of a cluster: the session (re)connected, so the config
 * change notifications are listed again (and watched), those not seen yet
 * applied to the topics hosted here. */
void br_cluster_config_changes(struct br_server *b);
/* A cluster's SCRAM credentials (cluster_users.c), as Kafka's
 * DynamicConfigManager keeps them: every /config/users/<user> read into
 * b->scram when the session (re)connects, and one user's again when a
 * config change notification names users/<user>. */
void br_cluster_scram_users(struct br_server *b);
void br_cluster_scram_user_changed(struct br_server *b, const char *sanitized_user);
/* Start (the I/O worker for directory removals), stop (parked requests
 * answered REQUEST_TIMED_OUT for what is not done, the worker's jobs run
 * to their end); br_cluster_admin_free frees the rest. */
KP_MUST_CHECK int br_cluster_admin_start(struct br_server *b);
void br_cluster_admin_stop(struct br_server *b);
void br_cluster_complete_waits(struct br_server *b);

/* A config change of AlterConfigs (op SET) or IncrementalAlterConfigs. */
struct br_config_change {
    struct kp_str name;
    int8_t op;           /* SET 0, DELETE 1, APPEND 2, SUBTRACT 3 */
    struct kp_str value; /* len -1: null */
};
/* Applies changes ch[0..n) to tc (all or nothing: tc is left as it was on
 * failure) and validates the result as a whole, as standalone mode does
 * (handlers_admin.c). Returns 0 or a Kafka error code with msg. */
KP_MUST_CHECK int br_config_apply_changes(const struct br_server *b, struct br_topic_config *tc,
                                          const struct br_config_change *ch, size_t n,
                                          bool incremental, char *msg, size_t msglen);
int br_h_produce(struct br_req *r);
int br_h_fetch(struct br_req *r);
int br_h_list_offsets(struct br_req *r);
int br_h_create_topics(struct br_req *r);
int br_h_delete_topics(struct br_req *r);
int br_h_describe_configs(struct br_req *r);
/* One resource of a DescribeConfigs answer, built in arena a: a topic's
 * configs from topic_config, or (NULL) from the topic this broker hosts;
 * the broker's own; keys[0..nkeys) the keys asked for (nkeys < 0: all).
 * 0 or KP_E_NOMEM (handlers.c; cluster_wait.c answers with it too). */
int br_describe_config_resource(struct br_server *b, struct kp_arena *a, int8_t type,
                                struct kp_str name, const struct kp_str *keys, int32_t nkeys,
                                bool synonyms, const struct br_topic_config *topic_config,
                                struct kp_DescribeConfigsResponse_DescribeConfigsResult *out);
int br_h_init_producer_id(struct br_req *r);
/* The transaction coordinator's requests (api_txn.c). */
int br_txn_init_producer_id_request(struct br_req *r);
int br_h_add_partitions_to_txn(struct br_req *r);
int br_h_end_txn(struct br_req *r);
int br_h_add_offsets_to_txn(struct br_req *r);
int br_h_txn_offset_commit(struct br_req *r);
int br_h_write_txn_markers(struct br_req *r);
/* Whether this broker coordinates transactional id `id` now: it leads
 * the id's partition of __transaction_state (a Produce's transaction is
 * checked against the coordinator only then). */
bool br_txn_coordinates(struct br_server *b, struct kp_str id);
/* A partition of __transaction_state came to be led here or stopped being
 * (LeaderAndIsr, StopReplica): its ids are dropped, and loaded from its
 * records when this broker leads it now, what was left in Prepare*
 * completed (TransactionCoordinator.handleTxnImmigration/Emigration). */
void br_txn_leadership_changed(struct br_server *b, struct br_partition *p, bool was_leader);
/* The coordinator made, its records read from the partitions of
 * __transaction_state led here. 0 or an error (logged). */
KP_MUST_CHECK int br_txn_server_start(struct br_server *b);
/* FindCoordinator of key type 1: the broker leading transactional id
 * `id`'s partition of __transaction_state, its endpoint on listener
 * (0), or COORDINATOR_NOT_AVAILABLE (the topic asked for while it is not
 * made; no live leader). */
int br_txn_find_coordinator(struct br_server *b, struct kp_str id, const char *listener,
                            int32_t *node, const char **host, int32_t *port);
void br_txn_server_stop(struct br_server *b);
/* Storage administration (handlers_admin.c). */
int br_h_alter_configs(struct br_req *r);
int br_h_incremental_alter_configs(struct br_req *r);
int br_h_delete_records(struct br_req *r);
int br_h_describe_log_dirs(struct br_req *r);
int br_h_create_partitions(struct br_req *r);
/* A CreatePartitions names a topic at most once in its answer (Kafka
 * answers a map keyed by topic): per topic of q, state 0 when named once,
 * 1 for the first of a name given again, 2 for the later ones (state has
 * q's topic count). 0 or KP_E_NOMEM. Standalone and cluster paths alike. */
int br_create_partitions_repeats(const struct kp_CreatePartitionsRequest *q, uint8_t *state);

/* A parked request's answer resp (of api and version) encoded into its
 * slot, which becomes ready; when that fails the connection closes after
 * what it has sent. */
void br_answer_parked(struct br_server *b, struct br_conn *conn, struct br_slot *slot,
                      int16_t api_key, int16_t version, int32_t correlation_id, const void *resp);

/* Fill b->api.versions from the dispatch table (the ApiVersions answer) and
 * b->api.served: the APIs of the dispatch table this broker serves, the
 * inter-broker ones (LeaderAndIsr, StopReplica, UpdateMetadata,
 * ControlledShutdown, OffsetsForLeaderEpoch) only with inter_broker (a
 * broker of a ZooKeeper cluster; the composition root says). */
void br_supported_apis_init(struct br_server *b, bool inter_broker);

/* Every parked request starts with this: the ops of its kind, so that a
 * dying connection cancels whatever it parked (br_broker_cancel_parked)
 * without knowing the kinds. */
struct br_park_ops {
    const char *what; /* "an acks=all Produce": for logs */
    /* the connection of the parked request is gone: forget its slot and
     * free what only it held; work it started goes on */
    void (*cancel)(struct br_server *b, void *parked);
};

struct br_park {
    const struct br_park_ops *ops;
};

#endif
