/* samsa-broker: broker state, dispatch, topics (see broker.h). */
#define _GNU_SOURCE

#include "broker.h"

#include "logging.h"
#include "request.h"

#include <samsa-protocol/record_batch.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- dispatch */

typedef int (*handler_fn)(struct br_req *r);

struct dispatch_entry {
    int16_t min_version;
    int16_t max_version;
    handler_fn handler;
};

/* What the broker answers, by ApiKey. Versions within the protocol crate's
 * table; min 0 everywhere (librdkafka derives features from old versions). */
static const struct dispatch_entry dispatch[] = {
    [KP_API_PRODUCE] = {0, 7, br_h_produce},
    [KP_API_FETCH] = {0, 11, br_h_fetch},
    [KP_API_LIST_OFFSETS] = {0, 3, br_h_list_offsets},
    [KP_API_METADATA] = {0, 6, br_h_metadata},
    [KP_API_API_VERSIONS] = {0, 3, br_h_api_versions},
    [KP_API_CREATE_TOPICS] = {0, 4, br_h_create_topics},
    [KP_API_DELETE_TOPICS] = {0, 3, br_h_delete_topics},
    [KP_API_INIT_PRODUCER_ID] = {0, 1, br_h_init_producer_id},
    [KP_API_DESCRIBE_CONFIGS] = {0, 2, br_h_describe_configs},
};

#define NDISPATCH (sizeof dispatch / sizeof dispatch[0])

static const struct dispatch_entry *dispatch_find(int16_t key)
{
    if (key < 0 || (size_t)key >= NDISPATCH || dispatch[key].handler == NULL) {
        return NULL;
    }
    return &dispatch[key];
}

void br_supported_apis_init(struct br_broker *b)
{
    b->napis = 0;
    for (size_t k = 0; k < NDISPATCH && b->napis < BR_MAX_APIS; k++) {
        if (dispatch[k].handler != NULL) {
            struct kp_ApiVersionsResponse_ApiVersion e = {(int16_t)k, dispatch[k].min_version,
                                                          dispatch[k].max_version};
            b->apis[b->napis++] = e;
        }
    }
}

uint8_t *br_req_mutable(struct br_req *r, const uint8_t *view)
{
    return r->payload + (view - r->payload);
}

int br_respond(struct br_req *r, const void *resp)
{
    if (r->slot == NULL) {
        return 0;
    }
    struct kp_writer w;
    kp_wr_init(&w, (size_t)INT32_MAX);
    int err = kp_response_encode(&w, r->hdr->RequestApiKey, r->version, r->hdr->CorrelationId,
                                 resp);
    if (err != 0) {
        br_error("cannot encode %s v%d response: %s", kp_api_find(r->hdr->RequestApiKey)->name,
                 r->version, kp_err_str(err));
        kp_wr_free(&w);
        return err;
    }
    size_t len = 0;
    uint8_t *buf = kp_wr_steal(&w, &len);
    if (br_slot_add_mem(r->slot, buf, len) != 0) {
        return KP_E_NOMEM;
    }
    br_slot_ready(r->conn, r->slot);
    return 0;
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

void br_broker_handle_frame(struct br_broker *b, struct br_conn *c, uint8_t *payload, size_t len)
{
    struct kp_arena arena;
    /* decoded views are small next to the frame; the ceiling stops a
     * request from claiming more memory than its bytes justify */
    kp_arena_init(&arena, len * 16 + 65536);
    struct kp_request req;
    int err = kp_request_decode(payload, len, &arena, &req);
    struct br_req r = {b, c, NULL, &req.header, req.header.RequestApiVersion, req.body, &arena,
                       payload, len};
    const struct dispatch_entry *d = dispatch_find(req.header.RequestApiKey);

    if (err == 0 && d != NULL && produce_acks_zero(&req)) {
        /* acks=0: the client expects no response at all */
        (void)d->handler(&r);
        goto out;
    }
    if (err == KP_E_TRUNCATED && len < 8) {
        br_warn("closing %s: request header truncated (%zu bytes)", br_conn_peer(c), len);
        br_conn_close_after_flush(c);
        goto out;
    }
    if (req.header.RequestApiKey == KP_API_API_VERSIONS &&
        (err == KP_E_UNSUPPORTED ||
         (d != NULL && req.header.RequestApiVersion > d->max_version))) {
        r.slot = br_conn_slot_new(c);
        if (r.slot != NULL) {
            answer_api_versions_unsupported(&r);
        }
        goto out;
    }
    if (err == KP_E_UNSUPPORTED || (err == 0 && (d == NULL ||
                                                 req.header.RequestApiVersion < d->min_version ||
                                                 req.header.RequestApiVersion > d->max_version))) {
        br_warn("closing %s: unsupported API key %d version %d (client \"%.*s\")",
                br_conn_peer(c), req.header.RequestApiKey, req.header.RequestApiVersion,
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
    r.slot = br_conn_slot_new(c);
    if (r.slot == NULL) {
        br_error("out of memory: closing %s", br_conn_peer(c));
        br_conn_close_after_flush(c);
        goto out;
    }
    err = d->handler(&r);
    if (err != 0) {
        br_warn("closing %s: %s v%d failed: %s", br_conn_peer(c), req.api->name, r.version,
                kp_err_str(err));
        /* the slot never becomes ready: mark it so the flush can go on */
        br_slot_ready(c, r.slot);
        br_conn_close_after_flush(c);
    }
out:
    kp_arena_free(&arena);
}

/* ---------------------------------------------------------------- topics */

static int topic_cmp(const struct br_topic *t, struct kp_str name)
{
    size_t tl = strlen(t->name);
    size_t nl = (size_t)name.len;
    size_t m = tl < nl ? tl : nl;
    int c = memcmp(t->name, name.ptr, m);
    if (c != 0) {
        return c;
    }
    return tl < nl ? -1 : (tl > nl ? 1 : 0);
}

static size_t topic_lower_bound(const struct br_broker *b, struct kp_str name)
{
    size_t lo = 0;
    size_t hi = b->ntopics;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (topic_cmp(b->topics[mid], name) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

struct br_topic *br_broker_find_topic(struct br_broker *b, struct kp_str name)
{
    if (name.len <= 0) {
        return NULL;
    }
    size_t i = topic_lower_bound(b, name);
    if (i < b->ntopics && topic_cmp(b->topics[i], name) == 0) {
        return b->topics[i];
    }
    return NULL;
}
