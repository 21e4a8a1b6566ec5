/*
 * samsa-broker: the internal topics the coordinators keep their state in,
 * made on first use (Kafka 2.0's KafkaApis.createInternalTopic, reached
 * from FindCoordinator and the coordinators' requests).
 */
#include <inttypes.h>
#include <string.h>

#include "base/clock.h"
#include "base/logging.h"
#include "group/group.h"
#include "server/request.h"
#include "server/topic_admin.h"
#include "server/state.h"

/* How long a broker waits before it asks for the topic again (a
 * cluster's first ask is answered by the controller's UpdateMetadata,
 * normally well within this; a standalone broker's creation is under way
 * meanwhile, br_topic_admin_creating). */
#define CREATE_RETRY_MS 5000

int br_ensure_internal_topic(struct br_server *b, const struct br_internal_topic *it)
{
    size_t nlen = strlen(it->name);
    if (br_mc_topic(&b->mc, it->name, nlen) != NULL) {
        return 0;
    }
    if (br_topic_admin_creating(b, kp_str_c(it->name))) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE; /* until it is made */
    }
    int64_t now = br_now_mono_ms();
    if (*it->asked_ms != 0 && now - *it->asked_ms < CREATE_RETRY_MS) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE; /* asked for already */
    }
    *it->asked_ms = now;
    size_t live = br_broker_live_count(b);
    if (live < (size_t)it->rf) {
        br_warn("%s is not created: %zu live broker(s) do not meet its replication factor %d "
                "(%s); its coordinators are not available until they do",
                it->name, live, it->rf, it->rf_key);
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    char err[256];
    int e = br_broker_create_topic(b, kp_str_c(it->name), it->partitions, it->rf, NULL,
                                   it->settings, it->nsettings, false, err, sizeof err);
    if (e != 0 && e != KP_ERR_TOPIC_ALREADY_EXISTS) {
        br_error("cannot create %s: %s", it->name, err);
    } else if (e == 0) {
        br_info("creating %s with %" PRId32 " partition(s), replication factor %d (configured %d)",
                it->name, it->partitions, it->rf, it->configured_rf);
    }
    /* the coordinator is not available until the topic is made, as in
     * Kafka, whose FindCoordinator answers so while it is being created */
    return KP_ERR_COORDINATOR_NOT_AVAILABLE;
}

struct br_partition *br_internal_partition(struct br_topic *t, int32_t n, const char *id,
                                           size_t len, int *err)
{
    int32_t index = n > 0 ? br_group_partition_for(id, len, n) : -1;
    struct br_partition *p =
        t != NULL && index >= 0 && index < t->npartitions ? &t->partitions[index] : NULL;
    if (p == NULL || p->role != BR_ROLE_LEADER || p->log == NULL) {
        *err = n > 0 ? KP_ERR_NOT_COORDINATOR : KP_ERR_COORDINATOR_NOT_AVAILABLE;
        return NULL;
    }
    return p;
}

int br_internal_coordinator(struct br_server *b, const char *name, int32_t n, struct kp_str key,
                            const char *listener, int32_t *node, const char **host, int32_t *port)
{
    const struct br_mc_topic *mt = br_mc_topic(&b->mc, name, strlen(name));
    if (mt == NULL || n <= 0) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    int32_t index = br_group_partition_for(key.ptr != NULL ? key.ptr : "",
                                           key.len > 0 ? (size_t)key.len : 0, n);
    const struct br_mc_partition *mp = index < mt->npartitions ? &mt->parts[index] : NULL;
    const struct br_mc_broker *mb =
        mp != NULL && mp->present && mp->leader >= 0 ? br_mc_broker(&b->mc, mp->leader) : NULL;
    const struct br_mc_endpoint *ep = mb != NULL ? br_mc_endpoint(mb, listener) : NULL;
    if (ep == NULL) {
        return KP_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    *node = mb->id;
    *host = ep->host;
    *port = ep->port;
    return 0;
}
