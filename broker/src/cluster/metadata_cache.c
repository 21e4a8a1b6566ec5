/* samsa-broker: the metadata cache (see metadata_cache.h). */
#define _GNU_SOURCE

#include "cluster/metadata_cache.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void br_mc_init(struct br_metadata_cache *mc)
{
    memset(mc, 0, sizeof *mc);
    mc->controller_id = -1;
    mc->controller_epoch = -1;
}

static void partition_clear(struct br_mc_partition *p)
{
    kp_free(p->isr);
    kp_free(p->replicas);
    kp_free(p->offline);
    memset(p, 0, sizeof *p);
}

static void topic_free(struct br_mc_topic *t)
{
    for (int32_t i = 0; i < t->npartitions; i++) {
        partition_clear(&t->parts[i]);
    }
    kp_free(t->parts);
    kp_free(t);
}

void br_mc_free(struct br_metadata_cache *mc)
{
    for (size_t i = 0; i < mc->ntopics; i++) {
        topic_free(mc->topics[i]);
    }
    kp_free(mc->topics);
    kp_free(mc->brokers);
    br_mc_init(mc);
}

int br_mc_check_epoch(struct br_metadata_cache *mc, int32_t controller_id, int32_t controller_epoch)
{
    if (controller_epoch < mc->controller_epoch) {
        br_warn("ignoring a request of controller %" PRId32 " of epoch %" PRId32 ": epoch %" PRId32
                " is known",
                controller_id, controller_epoch, mc->controller_epoch);
        return KP_ERR_STALE_CONTROLLER_EPOCH;
    }
    mc->controller_epoch = controller_epoch;
    mc->controller_id = controller_id;
    return 0;
}

static int cmp_topic_name(const char *name, size_t len, const struct br_mc_topic *t)
{
    size_t tl = strlen(t->name);
    int c = memcmp(name, t->name, len < tl ? len : tl);
    if (c != 0) {
        return c;
    }
    return len < tl ? -1 : (len > tl ? 1 : 0);
}

static size_t lower_bound(const struct br_metadata_cache *mc, const char *name, size_t len)
{
    size_t lo = 0;
    size_t hi = mc->ntopics;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_topic_name(name, len, mc->topics[mid]) > 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

const struct br_mc_topic *br_mc_topic(const struct br_metadata_cache *mc, const char *name,
                                      size_t len)
{
    size_t i = lower_bound(mc, name, len);
    if (i < mc->ntopics && cmp_topic_name(name, len, mc->topics[i]) == 0) {
        return mc->topics[i];
    }
    return NULL;
}

const struct br_mc_partition *br_mc_partition(const struct br_metadata_cache *mc, const char *topic,
                                              size_t len, int32_t partition)
{
    const struct br_mc_topic *t = br_mc_topic(mc, topic, len);
    if (t == NULL || partition < 0 || partition >= t->npartitions || !t->parts[partition].present) {
        return NULL;
    }
    return &t->parts[partition];
}

const struct br_mc_broker *br_mc_broker(const struct br_metadata_cache *mc, int32_t id)
{
    size_t lo = 0;
    size_t hi = mc->nbrokers;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mc->brokers[mid].id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < mc->nbrokers && mc->brokers[lo].id == id ? &mc->brokers[lo] : NULL;
}

const struct br_mc_endpoint *br_mc_endpoint(const struct br_mc_broker *b, const char *listener)
{
    for (size_t i = 0; i < b->nendpoints; i++) {
        if (strcmp(b->endpoints[i].listener, listener) == 0) {
            return &b->endpoints[i];
        }
    }
    return NULL;
}

static int cmp_broker(const void *a, const void *b)
{
    const struct br_mc_broker *x = a;
    const struct br_mc_broker *y = b;
    return x->id < y->id ? -1 : (x->id > y->id ? 1 : 0);
}

static void copy_str(char *dst, size_t cap, struct kp_str s)
{
    size_t n = s.len > 0 ? (size_t)s.len : 0;
    if (n >= cap) {
        n = cap - 1;
    }
    if (n > 0) {
        memcpy(dst, s.ptr, n);
    }
    dst[n] = '\0';
}

/* A v0-2 endpoint is named after its security protocol (Kafka's
 * ListenerName.forSecurityProtocol). */
static const char *protocol_name(int16_t protocol)
{
    static const char *const names[] = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"};
    return protocol >= 0 && protocol < 4 ? names[protocol] : "UNKNOWN";
}

static int set_brokers(struct br_metadata_cache *mc, const struct kp_UpdateMetadataRequest *req,
                       int16_t version, const char *listener)
{
    size_t n = req->LiveBrokers.count > 0 ? (size_t)req->LiveBrokers.count : 0;
    struct br_mc_broker *bs = kp_calloc(n > 0 ? n : 1, sizeof *bs);
    if (bs == NULL) {
        return KP_E_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct kp_UpdateMetadataRequest_UpdateMetadataBroker *lb = &req->LiveBrokers.items[i];
        struct br_mc_broker *b = &bs[k];
        memset(b, 0, sizeof *b); /* a broker left out before may have filled it */
        b->id = lb->Id;
        bool found = false;
        if (version == 0) {
            copy_str(b->host, sizeof b->host, lb->V0Host);
            b->port = lb->V0Port;
            found = true;
            struct br_mc_endpoint *me = &b->endpoints[b->nendpoints++];
            (void)snprintf(me->listener, sizeof me->listener, "PLAINTEXT");
            copy_str(me->host, sizeof me->host, lb->V0Host);
            me->port = lb->V0Port;
        }
        for (int32_t e = 0; e < lb->Endpoints.count; e++) {
            const struct kp_UpdateMetadataRequest_UpdateMetadataEndpoint *ep =
                &lb->Endpoints.items[e];
            /* v3+ name the listener; before, a PLAINTEXT endpoint (protocol 0) */
            bool match =
                version >= 3 ? kp_str_eq_c(ep->Listener, listener) : ep->SecurityProtocol == 0;
            if (match && !found) {
                copy_str(b->host, sizeof b->host, ep->Host);
                b->port = ep->Port;
                found = true;
            }
            if (b->nendpoints < BR_MC_MAX_ENDPOINTS) {
                struct br_mc_endpoint *me = &b->endpoints[b->nendpoints++];
                if (version >= 3) {
                    copy_str(me->listener, sizeof me->listener, ep->Listener);
                } else {
                    (void)snprintf(me->listener, sizeof me->listener, "%s",
                                   protocol_name(ep->SecurityProtocol));
                }
                copy_str(me->host, sizeof me->host, ep->Host);
                me->port = ep->Port;
            }
        }
        if (!found || lb->Id < 0) {
            continue; /* not reachable on our listener: Kafka leaves it out too */
        }
        b->has_rack = version >= 2 && lb->Rack.len >= 0 && lb->Rack.ptr != NULL;
        if (b->has_rack) {
            copy_str(b->rack, sizeof b->rack, lb->Rack);
        }
        k++;
    }
    qsort(bs, k, sizeof *bs, cmp_broker);
    kp_free(mc->brokers);
    mc->brokers = bs;
    mc->nbrokers = k;
    return 0;
}

static int dup_ids(int32_t **dst, int32_t *n, const int32_t *src, int32_t count)
{
    kp_free(*dst);
    *dst = NULL;
    *n = 0;
    if (count <= 0) {
        return 0;
    }
    *dst = kp_calloc((size_t)count, sizeof **dst);
    if (*dst == NULL) {
        return KP_E_NOMEM;
    }
    memcpy(*dst, src, (size_t)count * sizeof **dst);
    *n = count;
    return 0;
}

/* The topic named so, made (empty) when missing; NULL when out of memory. */
static struct br_mc_topic *topic_get(struct br_metadata_cache *mc, struct kp_str name)
{
    if (name.len <= 0 || name.len > BR_TOPIC_NAME_MAX) {
        return NULL;
    }
    size_t i = lower_bound(mc, name.ptr, (size_t)name.len);
    if (i < mc->ntopics && cmp_topic_name(name.ptr, (size_t)name.len, mc->topics[i]) == 0) {
        return mc->topics[i];
    }
    struct br_mc_topic *t = kp_calloc(1, sizeof *t);
    struct br_mc_topic **nt =
        kp_realloc(mc->topics, (mc->ntopics + 1) * sizeof(struct br_mc_topic *));
    if (t == NULL || nt == NULL) {
        kp_free(t);
        if (nt != NULL) {
            mc->topics = nt;
        }
        return NULL;
    }
    mc->topics = nt;
    copy_str(t->name, sizeof t->name, name);
    memmove(&mc->topics[i + 1], &mc->topics[i], (mc->ntopics - i) * sizeof(struct br_mc_topic *));
    mc->topics[i] = t;
    mc->ntopics++;
    return t;
}

static void topic_remove_if_empty(struct br_metadata_cache *mc, struct br_mc_topic *t)
{
    for (int32_t p = 0; p < t->npartitions; p++) {
        if (t->parts[p].present) {
            return;
        }
    }
    for (size_t i = 0; i < mc->ntopics; i++) {
        if (mc->topics[i] == t) {
            memmove(&mc->topics[i], &mc->topics[i + 1],
                    (mc->ntopics - i - 1) * sizeof(struct br_mc_topic *));
            mc->ntopics--;
            break;
        }
    }
    topic_free(t);
}

static int set_partition(struct br_metadata_cache *mc,
                         const struct kp_UpdateMetadataRequest_UpdateMetadataPartitionState *s)
{
    struct br_mc_topic *t = topic_get(mc, s->TopicName);
    if (t == NULL) {
        return s->TopicName.len <= 0 || s->TopicName.len > BR_TOPIC_NAME_MAX ? 0 : KP_E_NOMEM;
    }
    int32_t p = s->PartitionIndex;
    if (p < 0 || p >= BR_META_MAX_PARTITIONS) {
        topic_remove_if_empty(mc, t);
        return 0;
    }
    if (p >= t->npartitions) {
        struct br_mc_partition *np = kp_realloc(t->parts, (size_t)(p + 1) * sizeof *np);
        if (np == NULL) {
            topic_remove_if_empty(mc, t);
            return KP_E_NOMEM;
        }
        memset(&np[t->npartitions], 0, (size_t)(p + 1 - t->npartitions) * sizeof *np);
        t->parts = np;
        t->npartitions = p + 1;
    }
    struct br_mc_partition *part = &t->parts[p];
    if (s->Leader == -2) { /* LeaderDuringDelete: the topic is being deleted */
        partition_clear(part);
        topic_remove_if_empty(mc, t);
        return 0;
    }
    part->present = true;
    part->leader = s->Leader;
    part->leader_epoch = s->LeaderEpoch;
    part->controller_epoch = s->ControllerEpoch;
    part->zk_version = s->ZkVersion;
    if (dup_ids(&part->isr, &part->nisr, s->Isr.items, s->Isr.count) != 0 ||
        dup_ids(&part->replicas, &part->nreplicas, s->Replicas.items, s->Replicas.count) != 0 ||
        dup_ids(&part->offline, &part->noffline, s->OfflineReplicas.items,
                s->OfflineReplicas.count) != 0) {
        return KP_E_NOMEM;
    }
    return 0;
}

int br_mc_update(struct br_metadata_cache *mc, const struct kp_UpdateMetadataRequest *req,
                 int16_t version, const char *listener)
{
    int rc = br_mc_check_epoch(mc, req->ControllerId, req->ControllerEpoch);
    if (rc != 0) {
        return rc;
    }
    rc = set_brokers(mc, req, version, listener);
    for (int32_t i = 0; rc == 0 && i < req->UngroupedPartitionStates.count; i++) {
        rc = set_partition(mc, &req->UngroupedPartitionStates.items[i]);
    }
    return rc;
}

struct id_rack {
    int32_t id;
    const char *rack;
};

static int cmp_id_rack(const void *a, const void *b)
{
    const struct id_rack *x = a;
    const struct id_rack *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

void br_mc_brokers_with_racks(const struct br_metadata_cache *mc, int32_t *ids,
                              const char **racks)
{
    struct id_rack *all = kp_calloc(mc->nbrokers + 1, sizeof *all);
    for (size_t i = 0; i < mc->nbrokers; i++) {
        const struct br_mc_broker *b = &mc->brokers[i];
        /* out of memory: in the cache's order */
        ids[i] = b->id;
        racks[i] = b->has_rack ? b->rack : NULL;
        if (all != NULL) {
            all[i] = (struct id_rack){ids[i], racks[i]};
        }
    }
    if (all == NULL) {
        return;
    }
    qsort(all, mc->nbrokers, sizeof *all, cmp_id_rack);
    for (size_t i = 0; i < mc->nbrokers; i++) {
        ids[i] = all[i].id;
        racks[i] = all[i].rack;
    }
    kp_free(all);
}
