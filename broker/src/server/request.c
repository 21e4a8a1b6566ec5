/* samsa-broker: a request's answer, written into its slot, and the parked
 * requests (see request.h). */
#define _GNU_SOURCE

#include "server/request.h"

#include "server/client_quotas.h"

#include "base/logging.h"

uint8_t *br_req_mutable(struct br_req *r, const uint8_t *view)
{
    return r->payload + (view - r->payload);
}

size_t br_request_arena_max(size_t len)
{
    return len * 16 + 65536;
}

int br_respond(struct br_req *r, const void *resp)
{
    return br_respond_max(r, resp, (size_t)r->b->cfg.response_max_bytes);
}

const char *br_req_listener(const struct br_req *r)
{
    const struct br_config *cfg = &r->b->cfg;
    int l = r->conn != NULL ? br_conn_listener(r->conn) : -1;
    if (l >= 0 && (size_t)l < cfg->n_listeners) {
        return cfg->listeners[l].name;
    }
    return cfg->inter_broker_listener_name;
}

void *br_req_array(struct br_req *r, size_t n, size_t size)
{
    return kp_arena_alloc(r->arena, (n == 0 ? 1 : n) * size);
}

int br_respond_max(struct br_req *r, const void *resp, size_t max)
{
    if (r->slot == NULL) {
        return 0;
    }
    resp = br_client_quotas_respond(r, resp);
    struct kp_writer w;
    kp_wr_init(&w, max);
    int err =
        kp_response_encode(&w, r->hdr->RequestApiKey, r->version, r->hdr->CorrelationId, resp);
    if (err != 0) {
        /* the caller answers the failure (br_respond_failed), logged there */
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

void br_answer_parked(struct br_server *b, struct br_conn *conn, struct br_slot *slot,
                      int16_t api_key, int16_t version, int32_t correlation_id, const void *resp)
{
    struct kp_writer w;
    kp_wr_init(&w, (size_t)b->cfg.response_max_bytes);
    int err = kp_response_encode(&w, api_key, version, correlation_id, resp);
    size_t len = 0;
    uint8_t *buf = err == 0 ? kp_wr_steal(&w, &len) : NULL;
    kp_wr_free(&w);
    if (buf == NULL || br_slot_add_mem(slot, buf, len) != 0) {
        const struct kp_api *api = kp_api_find(api_key);
        br_error("answering a %s to %s failed (%s): closing the connection",
                 api != NULL ? api->name : "request", br_conn_peer(conn),
                 err != 0 ? kp_err_str(err) : "out of memory");
        br_conn_close_after_flush(conn);
    }
    br_slot_ready(conn, slot);
}

/* ---------------------------------------------------------------- parked requests */

void br_broker_cancel_parked(struct br_server *b, void *parked)
{
    const struct br_park *pk = parked;
    br_debug("a connection closed with %s parked: cancelled", pk->ops->what);
    pk->ops->cancel(b, parked);
}

bool br_broker_stopping(const struct br_server *b)
{
    return b->stopping;
}
