/* samsa-broker: a request frame decoded and handed to its API's handler (see
 * request.h). */
#define _GNU_SOURCE

#include "base/clock.h"
#include "server/authorize.h"
#include "server/client_quotas.h"
#include "server/request.h"

#include "base/logging.h"
#include "security/sasl.h"
#include "server/group.h"

#include <inttypes.h>

/* ---------------------------------------------------------------- dispatch */

typedef int (*handler_fn)(struct br_req *r);

/* An API's facts besides its versions and handler. */
enum {
    /* the controller's or a follower's: a standalone broker neither
     * advertises nor serves it */
    API_CLUSTER_ONLY = 1 << 0,
    /* handled as soon as it comes, even while answers before it on its
     * connection wait (see answered_in_turn) */
    API_AT_ONCE = 1 << 1,
};

struct dispatch_entry {
    int16_t min_version;
    int16_t max_version;
    handler_fn handler;
    unsigned flags;
};

/* SaslHandshake or SaslAuthenticate on a connection that is authenticated
 * or on a listener without SASL: ILLEGAL_SASL_STATE (Kafka 2.0's
 * KafkaApis.handleSaslHandshakeRequest / handleSaslAuthenticateRequest). */
static int sasl_after_authentication(struct br_req *r)
{
    if (r->hdr->RequestApiKey == KP_API_SASL_HANDSHAKE) {
        struct kp_SaslHandshakeResponse resp;
        kp_SaslHandshakeResponse_init(&resp);
        resp.ErrorCode = KP_ERR_ILLEGAL_SASL_STATE;
        return br_respond(r, &resp);
    }
    struct kp_SaslAuthenticateResponse resp;
    kp_SaslAuthenticateResponse_init(&resp);
    resp.ErrorCode = KP_ERR_ILLEGAL_SASL_STATE;
    resp.ErrorMessage = kp_str_c("SaslAuthenticate request received after successful "
                                 "authentication");
    resp.AuthBytes.ptr = (const uint8_t *)"";
    return br_respond(r, &resp);
}

/* What the broker answers, by ApiKey. Versions within the protocol crate's
 * table; min 0 everywhere (librdkafka derives features from old versions).
 * ApiVersions lists these entries, not the crate's table (kp_apis), which
 * also holds APIs the broker does not serve: LeaderAndIsr, StopReplica,
 * UpdateMetadata and ControlledShutdown get an entry with their handler. */
static const struct dispatch_entry dispatch[] = {
    [KP_API_PRODUCE] = {0, 7, br_h_produce, API_AT_ONCE},
    [KP_API_FETCH] = {0, 11, br_h_fetch, API_AT_ONCE},
    [KP_API_LIST_OFFSETS] = {0, 3, br_h_list_offsets, 0},
    [KP_API_METADATA] = {0, 6, br_h_metadata, 0},
    /* the controller's and the followers': they come one at a time */
    [KP_API_LEADER_AND_ISR] = {0, 1, br_h_leader_and_isr, API_CLUSTER_ONLY | API_AT_ONCE},
    [KP_API_STOP_REPLICA] = {0, 0, br_h_stop_replica, API_CLUSTER_ONLY | API_AT_ONCE},
    [KP_API_CONTROLLED_SHUTDOWN] = {1, 1, br_h_controlled_shutdown,
                                    API_CLUSTER_ONLY | API_AT_ONCE},
    [KP_API_UPDATE_METADATA] = {0, 4, br_h_update_metadata, API_CLUSTER_ONLY | API_AT_ONCE},
    [KP_API_OFFSET_FOR_LEADER_EPOCH] = {0, 1, br_h_offset_for_leader_epoch,
                                        API_CLUSTER_ONLY | API_AT_ONCE},
    [KP_API_OFFSET_COMMIT] = {0, 7, br_h_offset_commit, 0},
    [KP_API_OFFSET_FETCH] = {0, 5, br_h_offset_fetch, 0},
    [KP_API_FIND_COORDINATOR] = {0, 2, br_h_find_coordinator, 0},
    [KP_API_JOIN_GROUP] = {0, 5, br_h_join_group, 0},
    [KP_API_HEARTBEAT] = {0, 3, br_h_heartbeat, 0},
    [KP_API_LEAVE_GROUP] = {0, 3, br_h_leave_group, 0},
    [KP_API_SYNC_GROUP] = {0, 3, br_h_sync_group, 0},
    [KP_API_DESCRIBE_GROUPS] = {0, 4, br_h_describe_groups, 0},
    [KP_API_LIST_GROUPS] = {0, 2, br_h_list_groups, 0},
    [KP_API_API_VERSIONS] = {0, 3, br_h_api_versions, 0},
    [KP_API_CREATE_TOPICS] = {0, 4, br_h_create_topics, 0},
    [KP_API_DELETE_TOPICS] = {0, 3, br_h_delete_topics, 0},
    [KP_API_INIT_PRODUCER_ID] = {0, 1, br_h_init_producer_id, 0},
    [KP_API_ADD_PARTITIONS_TO_TXN] = {0, 1, br_h_add_partitions_to_txn, 0},
    [KP_API_ADD_OFFSETS_TO_TXN] = {0, 1, br_h_add_offsets_to_txn, 0},
    [KP_API_END_TXN] = {0, 1, br_h_end_txn, 0},
    [KP_API_WRITE_TXN_MARKERS] = {0, 0, br_h_write_txn_markers, 0},
    [KP_API_TXN_OFFSET_COMMIT] = {0, 1, br_h_txn_offset_commit, 0},
    [KP_API_DESCRIBE_CONFIGS] = {0, 2, br_h_describe_configs, 0},
    [KP_API_DELETE_GROUPS] = {0, 1, br_h_delete_groups, 0},
    [KP_API_DELETE_RECORDS] = {0, 1, br_h_delete_records, 0},
    [KP_API_ALTER_CONFIGS] = {0, 1, br_h_alter_configs, 0},
    [KP_API_DESCRIBE_LOG_DIRS] = {0, 1, br_h_describe_log_dirs, 0},
    [KP_API_CREATE_PARTITIONS] = {0, 1, br_h_create_partitions, 0},
    [KP_API_INCREMENTAL_ALTER_CONFIGS] = {0, 1, br_h_incremental_alter_configs, 0},
    [KP_API_DESCRIBE_ACLS] = {0, 1, br_h_describe_acls, 0},
    [KP_API_CREATE_ACLS] = {0, 1, br_h_create_acls, 0},
    [KP_API_DELETE_ACLS] = {0, 1, br_h_delete_acls, 0},
    /* on every listener, as Kafka lists them; the exchange itself is
     * security/sasl.c's, before authentication */
    [KP_API_SASL_HANDSHAKE] = {0, 1, sasl_after_authentication, 0},
    [KP_API_SASL_AUTHENTICATE] = {0, 0, sasl_after_authentication, 0},
};

#define NDISPATCH (sizeof dispatch / sizeof dispatch[0])

_Static_assert(sizeof dispatch / sizeof dispatch[0] <= BR_MAX_APIS, "b->api.served too small");

static bool served(const struct br_server *b, size_t key)
{
    return b->api.served[key];
}

static const struct dispatch_entry *dispatch_find(const struct br_server *b, int16_t key)
{
    if (key < 0 || (size_t)key >= NDISPATCH || !served(b, (size_t)key)) {
        return NULL;
    }
    return &dispatch[key];
}

void br_supported_apis_init(struct br_server *b, bool inter_broker)
{
    b->api.nversions = 0;
    for (size_t k = 0; k < NDISPATCH && b->api.nversions < BR_MAX_APIS; k++) {
        b->api.served[k] = dispatch[k].handler != NULL &&
                           (inter_broker || (dispatch[k].flags & API_CLUSTER_ONLY) == 0);
        if (served(b, k)) {
            struct kp_ApiVersionsResponse_ApiVersion e = {(int16_t)k, dispatch[k].min_version,
                                                          dispatch[k].max_version};
            b->api.versions[b->api.nversions++] = e;
        }
    }
}

/* An ApiVersions request of a version we do not speak: a v0 body with
 * UNSUPPORTED_VERSION listing key 18 only, so that the client can retry
 * with a version we have (Kafka's ApiVersionsRequest.getErrorResponse). */
static void answer_api_versions_unsupported(struct br_req *r)
{
    struct kp_ApiVersionsResponse_ApiVersion only = {KP_API_API_VERSIONS, 0, 3};
    struct kp_ApiVersionsResponse resp;
    kp_ApiVersionsResponse_init(&resp);
    resp.ErrorCode = KP_ERR_UNSUPPORTED_VERSION;
    resp.ApiKeys.items = &only;
    resp.ApiKeys.count = 1;
    r->version = 0;
    (void)br_respond(r, &resp);
}

static bool produce_acks_zero(const struct kp_request *req)
{
    if (req->header.RequestApiKey != KP_API_PRODUCE || req->body == NULL) {
        return false;
    }
    const struct kp_ProduceRequest *p = req->body;
    return p->Acks == 0;
}

/* For the admin API: one more request of key handled in us. */
static void count_request(struct br_server *b, int16_t key, int64_t us)
{
    if (key >= 0 && key < BR_MAX_APIS) {
        struct br_api_stats *st = &b->api.stats[key];
        st->requests++;
        st->total_us += us;
        if (us > st->max_us) {
            st->max_us = us;
        }
    }
}

/*
 * Requests pipelined on one connection. A Kafka broker reads a connection's
 * next request only once it has answered the one before (Kafka 2.0's
 * SocketServer mutes the channel from a request's arrival until its
 * response is sent). Samsa handles a Produce or Fetch as soon as it comes,
 * even while one before it waits (an acks=all Produce for its replicas, a
 * long-poll Fetch): records are appended and read in request order all the
 * same, and an acks=all producer keeps its requests working at once. Any
 * other request is held, with everything after it on its connection, until
 * every answer before it is ready, so that it answers what those did: a
 * Metadata that librdkafka sent behind an acks=all Produce named, once it
 * reached the client after fresher metadata from another broker, the
 * leaders of before a failover, and the idempotent producer moved the
 * partition back to the dead leader and stalled. The controller's requests
 * and the followers' come one at a time and are never held.
 */
static bool answered_in_turn(const struct dispatch_entry *d)
{
    return (d->flags & API_AT_ONCE) == 0;
}

/* Before SASL authentication only ApiVersions and the exchange's own
 * requests are served (security/sasl.h); anything else is answered
 * ILLEGAL_SASL_STATE and the connection closed. True when the frame was
 * taken there. */
static bool sasl_gate(struct br_req *r, void *sasl, const struct kp_request *req, int err)
{
    enum br_sasl_verdict v = br_sasl_request(sasl, r->conn, &req->header, req->body, err);
    if (v == BR_SASL_REFUSED) {
        r->slot = br_conn_slot_new(r->conn);
        if (r->slot != NULL &&
            br_respond_error(r, KP_ERR_ILLEGAL_SASL_STATE,
                             "Unexpected request before SASL authentication") != 0) {
            br_slot_ready(r->conn, r->slot);
        }
        br_conn_close_after_flush(r->conn);
    }
    return v != BR_SASL_PASS;
}

void br_broker_handle_frame(struct br_server *b, struct br_conn *c, uint8_t *payload, size_t len)
{
    void *sasl = br_conn_listener_auth(c);
    if (sasl != NULL && br_sasl_raw_frame(sasl, c, payload, len)) {
        return;
    }
    /* what the request's bytes decode into is bounded by their size; what
     * the response holds, by response.max.bytes */
    struct kp_arena decoded;
    kp_arena_init(&decoded, br_request_arena_max(len));
    struct kp_arena response;
    kp_arena_init(&response, (size_t)b->cfg.response_max_bytes);
    struct kp_request req;
    int err = kp_request_decode(payload, len, &decoded, &req);
    struct br_req r = {b,        c,         NULL,    &req.header, req.header.RequestApiVersion,
                       req.body, &response, payload, len, NULL, NULL};
    const struct dispatch_entry *d = dispatch_find(b, req.header.RequestApiKey);

    if (sasl != NULL && len >= 8 && sasl_gate(&r, sasl, &req, err)) {
        goto out;
    }
    if (err == 0 && d != NULL && produce_acks_zero(&req)) {
        /* acks=0: the client expects no response at all (a denied one is
         * dropped, as Kafka closes nothing either) */
        if (br_authorize_request(&r) == 0) {
            (void)d->handler(&r);
        }
        goto out;
    }
    if (err == KP_E_TRUNCATED && len < 8) {
        br_warn("closing %s: request header truncated (%zu bytes)", br_conn_peer(c), len);
        br_conn_close_after_flush(c);
        goto out;
    }
    if (req.header.RequestApiKey == KP_API_API_VERSIONS &&
        (err == KP_E_UNSUPPORTED || (d != NULL && req.header.RequestApiVersion > d->max_version))) {
        r.slot = br_conn_slot_new(c);
        if (r.slot != NULL) {
            answer_api_versions_unsupported(&r);
        }
        goto out;
    }
    if (err == KP_E_UNSUPPORTED ||
        (err == 0 && (d == NULL || req.header.RequestApiVersion < d->min_version ||
                      req.header.RequestApiVersion > d->max_version))) {
        br_warn("closing %s: unsupported API key %d version %d (client \"%.*s\")", br_conn_peer(c),
                req.header.RequestApiKey, req.header.RequestApiVersion,
                (int)req.header.ClientId.len, req.header.ClientId.ptr);
        br_conn_close_after_flush(c);
        goto out;
    }
    if (err != 0) {
        br_warn("closing %s: malformed %s v%d request (correlation %" PRId32 "): %s",
                br_conn_peer(c), req.api != NULL ? req.api->name : "?",
                req.header.RequestApiVersion, req.header.CorrelationId, kp_err_str(err));
        br_conn_close_after_flush(c);
        goto out;
    }
    if (answered_in_turn(d) && br_conn_answers_pending(c)) {
        br_conn_hold(c); /* the same frame comes again once they are ready */
        goto out;
    }
    r.slot = br_conn_slot_new(c);
    if (r.slot == NULL) {
        br_error("out of memory: closing %s", br_conn_peer(c));
        br_conn_close_after_flush(c);
        goto out;
    }
    int64_t t0 = br_now_mono_us();
    /* request_percentage: the controller's and followers' requests are
     * exempt (Kafka's ClusterAction requests) */
    br_client_quotas_handling(b, (d->flags & API_CLUSTER_ONLY) == 0 ? &r : NULL, t0);
    int16_t denied = br_authorize_request(&r);
    err = denied != 0 ? br_respond_error(&r, denied, NULL) : d->handler(&r);
    if (err != 0) {
        br_respond_failed(&r, err);
    }
    int64_t us = br_now_mono_us() - t0;
    count_request(b, req.header.RequestApiKey, us);
    br_client_quotas_handled(b, us);
out:
    kp_arena_free(&response);
    kp_arena_free(&decoded);
}
