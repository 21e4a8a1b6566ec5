/* samsa-broker: requests that wait for the ISR (see acks_wait.h). */
#define _GNU_SOURCE

#include "server/acks_wait.h"

#include <samsa-protocol/alloc.h>

#include <string.h>

static void hw_park_cancel(struct br_server *b, void *parked);
/* An answer waiting for the high watermark parked: what its connection's end does to it (request.h)
 */
static const struct br_park_ops hw_park_ops = {"an answer waiting for the high watermark",
                                               hw_park_cancel};

static void produce_park_cancel(struct br_server *b, void *parked);
/* An acks=all Produce parked: what its connection's end does to it (request.h) */
static const struct br_park_ops produce_park_ops = {"an acks=all Produce", produce_park_cancel};

/* ---------------------------------------------------------------- acks=all */

/* Where an answer goes in the response: topic and partition indexes. */
struct out_at {
    int32_t topic;
    int32_t part;
};

struct parked_produce {
    struct br_park park; /* first: its ops (request.h) */
    struct br_delayed_produce dp;
    struct br_server *b;
    struct br_conn *conn;
    struct br_slot *slot;
    int16_t version;
    int32_t correlation_id;
    struct kp_arena arena; /* the response's copy */
    struct kp_ProduceResponse resp;
    struct br_append_wait *waits;
    struct out_at *outs; /* each wait's entry in resp */
    struct br_delay_link *links;
    size_t nwaits;
};

static void produce_free(struct parked_produce *pp)
{
    kp_arena_free(&pp->arena);
    kp_free(pp->waits);
    kp_free(pp->outs);
    kp_free(pp->links);
    kp_free(pp);
}

int16_t br_acks_outcome(const struct br_append_wait *w)
{
    return br_partition_append_outcome(w->p, w->required, w->term,
                                       w->p->topic->config.min_insync_replicas);
}

static void produce_done(struct br_delayed_produce *dp, bool expired)
{
    (void)expired;
    struct parked_produce *pp = dp->owner;
    for (size_t i = 0; i < pp->nwaits; i++) {
        const struct out_at *at = &pp->outs[i];
        pp->resp.Responses.items[at->topic].PartitionResponses.items[at->part].ErrorCode =
            br_acks_outcome(&pp->waits[i]);
    }
    br_answer_parked(pp->b, pp->conn, pp->slot, KP_API_PRODUCE, pp->version, pp->correlation_id,
                     &pp->resp);
    produce_free(pp);
}

int br_acks_park_produce(struct br_req *r, const struct kp_ProduceResponse *resp,
                         const struct br_produce_wait *waits, size_t n, int32_t timeout_ms)
{
    struct br_server *b = r->b;
    size_t pending = 0;
    for (size_t i = 0; i < n; i++) {
        pending += waits[i].p->hw < waits[i].required ? 1 : 0;
    }
    if (pending == 0 || r->slot == NULL || timeout_ms <= 0 || br_broker_stopping(b)) {
        return 1;
    }
    struct parked_produce *pp = kp_calloc(1, sizeof *pp);
    if (pp == NULL) {
        return KP_E_NOMEM;
    }
    kp_arena_init(&pp->arena, br_request_arena_max(r->len) + 65536);
    pp->waits = kp_calloc(pending, sizeof *pp->waits);
    pp->outs = kp_calloc(pending, sizeof *pp->outs);
    pp->links = kp_calloc(pending, sizeof *pp->links);
    struct kp_ProduceResponse_TopicProduceResponse *topics =
        kp_arena_alloc(&pp->arena, (size_t)(resp->Responses.count > 0 ? resp->Responses.count : 1) *
                                       sizeof *topics);
    if (pp->waits == NULL || pp->outs == NULL || pp->links == NULL || topics == NULL) {
        produce_free(pp);
        return KP_E_NOMEM;
    }
    /* the answer copied out of the request's arena and frame */
    pp->resp = *resp;
    pp->resp.Responses.items = topics;
    for (int32_t i = 0; i < resp->Responses.count; i++) {
        const struct kp_ProduceResponse_TopicProduceResponse *src = &resp->Responses.items[i];
        struct kp_ProduceResponse_TopicProduceResponse *dst = &topics[i];
        *dst = *src;
        char *name =
            kp_arena_alloc(&pp->arena, (size_t)(src->Name.len > 0 ? src->Name.len : 0) + 1);
        size_t np = (size_t)(src->PartitionResponses.count > 0 ? src->PartitionResponses.count : 1);
        dst->PartitionResponses.items =
            kp_arena_alloc(&pp->arena, np * sizeof *dst->PartitionResponses.items);
        if (name == NULL || dst->PartitionResponses.items == NULL) {
            produce_free(pp);
            return KP_E_NOMEM;
        }
        if (src->Name.len > 0) {
            memcpy(name, src->Name.ptr, (size_t)src->Name.len);
        }
        name[src->Name.len > 0 ? src->Name.len : 0] = '\0';
        dst->Name.ptr = name;
        if (src->PartitionResponses.count > 0) {
            memcpy(dst->PartitionResponses.items, src->PartitionResponses.items,
                   (size_t)src->PartitionResponses.count * sizeof *dst->PartitionResponses.items);
        }
    }
    pp->park.ops = &produce_park_ops;
    pp->b = b;
    pp->conn = r->conn;
    pp->slot = r->slot;
    pp->version = r->version;
    pp->correlation_id = r->hdr->CorrelationId;
    for (size_t i = 0; i < n; i++) {
        if (waits[i].p->hw >= waits[i].required) {
            continue;
        }
        struct br_append_wait *w = &pp->waits[pp->nwaits];
        w->p = waits[i].p;
        w->required = waits[i].required;
        w->term = waits[i].p->leader_term;
        pp->outs[pp->nwaits] = (struct out_at){waits[i].topic, waits[i].part};
        pp->nwaits++;
    }
    br_delayed_produce_init(&pp->dp, pp->waits, pp->links, pp->nwaits, produce_done, pp);
    br_slot_set_parked(r->slot, &pp->park);
    br_delayed_produce_park(&b->purgatory, &pp->dp, br_now_mono_ms() + timeout_ms);
    return 0;
}

static void produce_park_cancel(struct br_server *b, void *parked)
{
    struct parked_produce *pp = parked;
    br_delayed_produce_cancel(&b->purgatory, &pp->dp);
    produce_free(pp);
}

/* ---------------------------------------------------------------- an append of this broker's own
 */

static void hw_done(struct br_delayed_produce *dp, bool expired)
{
    (void)expired;
    struct br_hw_wait *w = dp->owner;
    w->done(w, br_acks_outcome(&w->wait));
}

bool br_acks_park_hw(struct br_req *r, struct br_hw_wait *w, struct br_partition *p,
                     int64_t required, int32_t timeout_ms)
{
    if (p->role != BR_ROLE_LEADER || p->hw >= required || r->slot == NULL || timeout_ms <= 0 ||
        br_broker_stopping(r->b)) {
        return false;
    }
    w->park.ops = &hw_park_ops;
    w->wait = (struct br_append_wait){p, required, p->leader_term};
    br_delayed_produce_init(&w->dp, &w->wait, &w->link, 1, hw_done, w);
    br_slot_set_parked(r->slot, &w->park);
    br_delayed_produce_park(&r->b->purgatory, &w->dp, br_now_mono_ms() + timeout_ms);
    return true;
}

static void hw_park_cancel(struct br_server *b, void *parked)
{
    struct br_hw_wait *w = parked;
    br_delayed_produce_cancel(&b->purgatory, &w->dp);
    w->cancelled(w);
}
