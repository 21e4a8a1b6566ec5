/*
 * samsa-broker: Metadata, one path in both modes, from the metadata cache
 * (a cluster's controller fills it with UpdateMetadata; a standalone
 * broker, a cluster of one, fills its own: local_controller.h). Kafka
 * 2.0's KafkaApis.handleTopicMetadataRequest and getTopicMetadata.
 */
#include "base/logging.h"
#include "server/group.h"
#include "server/authorize.h"
#include "server/request.h"
#include "server/topic_admin.h"

#include <string.h>

/* hosted: the topic as this broker hosts it, or NULL. */
static void fill_partition(struct br_req *r, const struct br_topic *hosted,
                           const struct br_mc_partition *mp, int32_t index,
                           struct kp_MetadataResponse_MetadataResponsePartition *out)
{
    const struct br_metadata_cache *mc = &r->b->mc;
    out->PartitionIndex = index;
    out->LeaderId = mp->leader;
    out->ErrorCode = KP_ERR_NONE;
    bool fenced = mp->leader == r->b->node_id && hosted != NULL && index < hosted->npartitions &&
                  hosted->partitions[index].fenced;
    if (mp->leader < 0 || br_mc_broker(mc, mp->leader) == NULL || fenced) {
        /* no live leader: LEADER_NOT_AVAILABLE, leader -1 (Kafka's
         * MetadataCache); nor when the leader is this broker and its
         * session is gone (br_replication_fence): the others know better */
        out->ErrorCode = KP_ERR_LEADER_NOT_AVAILABLE;
        out->LeaderId = -1;
    }
    out->ReplicaNodes.items = mp->replicas;
    out->ReplicaNodes.count = mp->nreplicas;
    out->IsrNodes.items = mp->isr;
    out->IsrNodes.count = mp->nisr;
    out->OfflineReplicas.items = mp->offline;
    out->OfflineReplicas.count = mp->noffline;
}

/* Returns 0 or KP_E_NOMEM (the response's ceiling): the whole response
 * fails then, and is answered and logged as such (br_respond_failed). */
static int fill_topic(struct br_req *r, const struct br_mc_topic *t,
                      struct kp_MetadataResponse_MetadataResponseTopic *out)
{
    out->ErrorCode = KP_ERR_NONE;
    out->Name = kp_str_c(t->name);
    out->IsInternal = strcmp(t->name, BR_OFFSETS_TOPIC) == 0;
    int32_t n = 0;
    for (int32_t i = 0; i < t->npartitions; i++) {
        n += t->parts[i].present ? 1 : 0;
    }
    out->Partitions.items = br_req_array(r, (size_t)n, sizeof *out->Partitions.items);
    if (out->Partitions.items == NULL) {
        return KP_E_NOMEM;
    }
    out->Partitions.count = 0;
    const struct br_topic *hosted = br_rm_find_topic(&r->b->rm, kp_str_c(t->name));
    for (int32_t i = 0; i < t->npartitions; i++) {
        if (t->parts[i].present) {
            fill_partition(r, hosted, &t->parts[i], i,
                           &out->Partitions.items[out->Partitions.count++]);
        }
    }
    return 0;
}

/* A topic asked for that the cache does not hold (KafkaApis.getTopicMetadata). */
static void fill_missing(struct br_req *r, struct kp_str name,
                         struct kp_MetadataResponse_MetadataResponseTopic *out)
{
    const struct kp_MetadataRequest *q = r->body;
    struct br_server *b = r->b;
    out->Name = name;
    out->ErrorCode = KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (b->mc.controller_id < 0) {
        /* no UpdateMetadata yet (a broker of a cluster just started): it
         * cannot tell a missing topic from one it was not told about, nor
         * count the live brokers, so it neither creates nor denies; the
         * client asks again (Kafka 2.0 answers an existing topic's creation
         * LEADER_NOT_AVAILABLE, KafkaApis.createTopic) */
        out->ErrorCode = KP_ERR_LEADER_NOT_AVAILABLE;
        return;
    }
    if (kp_str_eq_c(name, BR_OFFSETS_TOPIC)) {
        /* the internal topic is made by the group coordinator, with its
         * own settings (compacted), whatever auto-creation says
         * (KafkaApis.createInternalTopic); being made meanwhile */
        if (br_groups_ensure_offsets_topic(b) != 0) {
            br_debug("Metadata for %s: the topic is not made yet", BR_OFFSETS_TOPIC);
        }
        out->ErrorCode = KP_ERR_LEADER_NOT_AVAILABLE;
        out->IsInternal = true;
        return;
    }
    /* an auto-creation needs Create on the Cluster or the topic (KIP-277) */
    bool may_create =
        b->cfg.auto_create_topics_enable && (r->version < 4 || q->AllowAutoTopicCreation) &&
        (br_authorize(r, BR_ACL_OP_CREATE, BR_ACL_RES_CLUSTER, BR_ACL_CLUSTER_NAME,
                      sizeof BR_ACL_CLUSTER_NAME - 1) ||
         br_authorize(r, BR_ACL_OP_CREATE, BR_ACL_RES_TOPIC, name.ptr != NULL ? name.ptr : "",
                      name.len > 0 ? (size_t)name.len : 0));
    if (!may_create) {
        if (br_topic_admin_creating(b, name)) {
            out->ErrorCode = KP_ERR_LEADER_NOT_AVAILABLE; /* a CreateTopics makes it now */
        }
        return;
    }
    /* LEADER_NOT_AVAILABLE until it is made, as Kafka answers an
     * auto-creation, or one under way (TopicExistsException) */
    char err[256];
    int e = br_broker_create_topic(b, name, b->cfg.num_partitions,
                                   (int16_t)b->cfg.default_replication_factor, NULL, NULL, 0, false,
                                   err, sizeof err);
    if (e == 0 || e == KP_ERR_TOPIC_ALREADY_EXISTS) {
        out->ErrorCode = KP_ERR_LEADER_NOT_AVAILABLE;
    } else {
        br_warn("auto-creating topic \"%.*s\" failed: %s", (int)name.len, name.ptr, err);
        out->ErrorCode = (int16_t)kp_err_to_wire(e);
    }
}

int br_h_metadata(struct br_req *r)
{
    const struct kp_MetadataRequest *q = r->body;
    struct br_server *b = r->b;
    const struct br_metadata_cache *mc = &b->mc;
    struct kp_MetadataResponse resp;
    kp_MetadataResponse_init(&resp);
    resp.ClusterId = kp_str_c(b->cluster_id);
    resp.ControllerId = mc->controller_id;
    /* the live brokers as reached on the listener the client came in on
     * (Kafka's MetadataCache.getAliveBrokers(listenerName): a broker
     * without that listener is left out); before the first
     * UpdateMetadata, this one alone */
    const char *listener = br_req_listener(r);
    struct kp_MetadataResponse_MetadataResponseBroker self;
    memset(&self, 0, sizeof self);
    if (mc->nbrokers == 0) {
        self.NodeId = b->node_id;
        self.Host = kp_str_c(b->advertised_host);
        self.Port = b->advertised_port;
        for (size_t i = 0; i < b->nadvertised; i++) {
            if (strcmp(b->advertised[i].listener, listener) == 0) {
                self.Host = kp_str_c(b->advertised[i].host);
                self.Port = b->advertised[i].port;
            }
        }
        self.Rack = KP_STR_NULL;
        resp.Brokers.items = &self;
        resp.Brokers.count = 1;
    } else {
        resp.Brokers.items = br_req_array(r, mc->nbrokers, sizeof *resp.Brokers.items);
        if (resp.Brokers.items == NULL) {
            return KP_E_NOMEM;
        }
        int32_t nb = 0;
        for (size_t i = 0; i < mc->nbrokers; i++) {
            const struct br_mc_broker *mb = &mc->brokers[i];
            const struct br_mc_endpoint *ep = br_mc_endpoint(mb, listener);
            if (ep == NULL) {
                continue;
            }
            struct kp_MetadataResponse_MetadataResponseBroker *o = &resp.Brokers.items[nb++];
            o->NodeId = mb->id;
            o->Host = kp_str_c(ep->host);
            o->Port = ep->port;
            o->Rack = mb->has_rack ? kp_str_c(mb->rack) : KP_STR_NULL;
        }
        resp.Brokers.count = nb;
    }
    /* v0: an empty list means all topics; v1+: null means all, empty none */
    bool all = q->Topics.count < 0 || (r->version == 0 && q->Topics.count == 0);
    size_t n = all ? mc->ntopics : (size_t)q->Topics.count;
    resp.Topics.items = br_req_array(r, n, sizeof *resp.Topics.items);
    if (resp.Topics.items == NULL) {
        return KP_E_NOMEM;
    }
    resp.Topics.count = 0;
    for (size_t i = 0; i < n; i++) {
        struct kp_MetadataResponse_MetadataResponseTopic *out =
            &resp.Topics.items[resp.Topics.count++];
        const struct br_mc_topic *t = NULL;
        if (all) {
            t = mc->topics[i];
            /* all topics: those the principal may not describe are left
             * out (KafkaApis.handleTopicMetadataRequest) */
            if (!br_authorize(r, BR_ACL_OP_DESCRIBE, BR_ACL_RES_TOPIC, t->name, strlen(t->name))) {
                resp.Topics.count--;
                continue;
            }
        } else {
            struct kp_str name = q->Topics.items[i].Name;
            /* named: denied before its existence is even looked at */
            if (!br_authorize(r, BR_ACL_OP_DESCRIBE, BR_ACL_RES_TOPIC,
                              name.ptr != NULL ? name.ptr : "",
                              name.len > 0 ? (size_t)name.len : 0)) {
                out->Name = name;
                out->ErrorCode = KP_ERR_TOPIC_AUTHORIZATION_FAILED;
                continue;
            }
            t = name.len > 0 ? br_mc_topic(mc, name.ptr, (size_t)name.len) : NULL;
            if (t == NULL) {
                fill_missing(r, name, out);
                continue;
            }
        }
        int rc = fill_topic(r, t, out);
        if (rc != 0) {
            return rc;
        }
    }
    return br_respond(r, &resp);
}
