/* samsa-broker: the controller of a cluster of one (local_controller.h). */
#include "server/local_controller.h"

#include "server/state.h"

#include <samsa-protocol/alloc.h>

#include <stdint.h>
#include <string.h>

/* UpdateMetadata v4: listener names and offline replicas. */
#define VERSION 4
/* What a removed partition's state carries (Kafka's LeaderDuringDelete). */
#define LEADER_DURING_DELETE (-2)

typedef struct kp_UpdateMetadataRequest_UpdateMetadataPartitionState part_state;

/* Fills st for partition index of topic name: led here, or deleted. */
static void state_of(struct br_server *b, part_state *st, const char *name, int32_t index,
                     const struct br_partition *p)
{
    memset(st, 0, sizeof *st);
    st->TopicName = kp_str_c(name);
    st->PartitionIndex = index;
    st->Leader = p != NULL ? b->node_id : LEADER_DURING_DELETE;
    st->LeaderEpoch = p != NULL ? p->leader_epoch : 0;
    st->Isr.items = &b->node_id;
    st->Isr.count = 1;
    st->Replicas.items = &b->node_id;
    st->Replicas.count = 1;
}

/* Applies states and this broker as the only live broker to the cache. */
static int apply(struct br_server *b, part_state *states, int32_t n)
{
    /* every advertised listener, as a cluster's controller sends them */
    struct kp_UpdateMetadataRequest_UpdateMetadataEndpoint ep[BR_CONFIG_MAX_LISTENERS];
    memset(ep, 0, sizeof ep);
    for (size_t i = 0; i < b->nadvertised; i++) {
        ep[i].Host = kp_str_c(b->advertised[i].host);
        ep[i].Port = b->advertised[i].port;
        ep[i].Listener = kp_str_c(b->advertised[i].listener);
        ep[i].SecurityProtocol = b->advertised[i].security_protocol;
    }
    struct kp_UpdateMetadataRequest_UpdateMetadataBroker self;
    memset(&self, 0, sizeof self);
    self.Id = b->node_id;
    self.Endpoints.items = ep;
    self.Endpoints.count = (int32_t)b->nadvertised;
    self.Rack = KP_STR_NULL;
    struct kp_UpdateMetadataRequest q;
    kp_UpdateMetadataRequest_init(&q);
    q.ControllerId = b->node_id;
    q.ControllerEpoch = 0;
    q.LiveBrokers.items = &self;
    q.LiveBrokers.count = 1;
    q.UngroupedPartitionStates.items = states;
    q.UngroupedPartitionStates.count = n;
    return br_mc_update(&b->mc, &q, VERSION, b->cfg.inter_broker_listener_name);
}

/* Publishes what this broker hosts of one topic, and removes from the
 * cache the partitions it does not host (all of them, once gone). */
int br_local_controller_publish(struct br_server *b, const char *name, const struct br_topic *t)
{
    const struct br_mc_topic *cached = br_mc_topic(&b->mc, name, strlen(name));
    int32_t hosted = t != NULL ? t->npartitions : 0;
    int32_t n = hosted;
    if (cached != NULL && cached->npartitions > n) {
        n = cached->npartitions;
    }
    if (n == 0) {
        return apply(b, NULL, 0);
    }
    part_state *states = kp_calloc((size_t)n, sizeof *states);
    if (states == NULL) {
        return KP_E_NOMEM;
    }
    for (int32_t i = 0; i < n; i++) {
        state_of(b, &states[i], name, i, i < hosted ? &t->partitions[i] : NULL);
    }
    int rc = apply(b, states, n);
    kp_free(states);
    return rc;
}

/* Every hosted partition in one update, as a controller's first
 * UpdateMetadata to a broker carries them all. */
int br_local_controller_start(struct br_server *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->rm.ntopics; i++) {
        n += (size_t)b->rm.topics[i]->npartitions;
    }
    if (n > INT32_MAX) {
        return KP_E_NOMEM;
    }
    part_state *states = kp_calloc(n > 0 ? n : 1, sizeof *states);
    if (states == NULL) {
        return KP_E_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < b->rm.ntopics; i++) {
        const struct br_topic *t = b->rm.topics[i];
        for (int32_t p = 0; p < t->npartitions; p++) {
            state_of(b, &states[k++], t->name, p, &t->partitions[p]);
        }
    }
    int rc = apply(b, states, (int32_t)n);
    kp_free(states);
    return rc;
}
