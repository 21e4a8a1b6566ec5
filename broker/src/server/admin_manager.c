/* samsa-broker: the admin requests' one entry (admin_manager.h): a new
 * topic checked alike in both modes, then handed to the manager. */
#include "server/admin_manager.h"

#include "server/topic_admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- a new topic checked */

/* Kafka's AdminZkClient.validateCreateOrUpdateTopic (2.0): a name holding
 * '.' or '_' must not collide with an existing topic's ('.' and '_' clash in
 * metric names), even for validate_only; the message is Kafka's. */
static int check_collisions(const struct br_server *b, const char *name, char *err, size_t errlen)
{
    if (strpbrk(name, "._") == NULL) {
        return 0;
    }
    size_t n = 0;
    size_t used = 0;
    for (size_t i = 0; i < b->mc.ntopics; i++) {
        const char *other = b->mc.topics[i]->name;
        if (!br_topic_names_collide(other, name)) {
            continue;
        }
        int w = n == 0 ? snprintf(err, errlen, "Topic '%s' collides with existing topics: %s", name,
                                  other)
                       : snprintf(err + used, errlen - used, ", %s", other);
        if (w > 0) {
            used += (size_t)w;
        }
        if (used >= errlen) {
            used = errlen - 1; /* the list is cut, the code stands */
        }
        n++;
    }
    return n > 0 ? KP_ERR_INVALID_TOPIC_EXCEPTION : 0;
}

bool br_broker_known(const struct br_server *b, int32_t id)
{
    return br_mc_broker(&b->mc, id) != NULL;
}

size_t br_broker_live_count(const struct br_server *b)
{
    return b->mc.nbrokers;
}

int br_broker_create_topic(struct br_server *b, struct kp_str name, int32_t partitions,
                           int16_t replication_factor, const int32_t *replicas,
                           const struct br_kv *configs, size_t nconfigs, bool validate_only,
                           char *err, size_t errlen)
{
    char cname[BR_TOPIC_NAME_MAX + 1];
    err[0] = '\0';
    if (name.len <= 0 || (size_t)name.len >= sizeof cname) {
        (void)snprintf(err, errlen, "invalid topic name length %" PRId32, name.len);
        return KP_ERR_INVALID_TOPIC_EXCEPTION;
    }
    memcpy(cname, name.ptr, (size_t)name.len);
    cname[name.len] = '\0';
    if (!br_topic_name_valid(cname, (size_t)name.len)) {
        (void)snprintf(err, errlen, "topic name \"%s\" is illegal: use 1-249 of [a-zA-Z0-9._-]",
                       cname);
        return KP_ERR_INVALID_TOPIC_EXCEPTION;
    }
    if (br_rm_find_topic(&b->rm, name) != NULL ||
        br_mc_topic(&b->mc, cname, (size_t)name.len) != NULL) {
        (void)snprintf(err, errlen, "topic \"%s\" already exists", cname);
        return KP_ERR_TOPIC_ALREADY_EXISTS;
    }
    if (br_topic_admin_reserved(b, name)) {
        /* the name is taken while a creation or deletion of it goes on */
        (void)snprintf(err, errlen, "topic \"%s\" is being created or deleted", cname);
        return KP_ERR_TOPIC_ALREADY_EXISTS;
    }
    int ce = check_collisions(b, cname, err, errlen);
    if (ce != 0) {
        return ce;
    }
    if (partitions < 1 || partitions > BR_MAX_PARTITIONS) {
        (void)snprintf(err, errlen, "number of partitions must be 1-%d", BR_MAX_PARTITIONS);
        return KP_ERR_INVALID_PARTITIONS;
    }
    /* the replicas placed over the live brokers (Kafka's
     * AdminUtils.assignReplicasToBrokers); validate_only checks that they
     * are enough */
    if (replication_factor < 1 || (size_t)replication_factor > b->mc.nbrokers) {
        (void)snprintf(err, errlen, "Replication factor: %d larger than available brokers: %zu.",
                       replication_factor, b->mc.nbrokers);
        return KP_ERR_INVALID_REPLICATION_FACTOR;
    }
    struct br_topic_config tc;
    br_topic_config_from_broker(&b->cfg, &tc);
    struct br_topic_meta m;
    memset(&m, 0, sizeof m);
    (void)snprintf(m.name, sizeof m.name, "%s", cname);
    m.partitions = partitions;
    m.replication_factor = replication_factor;
    char keys[BR_MAX_TOPIC_CONFIGS][128];
    char values[BR_MAX_TOPIC_CONFIGS][1024];
    struct br_meta_config kvs[BR_MAX_TOPIC_CONFIGS];
    if (nconfigs > BR_MAX_TOPIC_CONFIGS) {
        (void)snprintf(err, errlen, "too many configs");
        return KP_ERR_INVALID_CONFIG;
    }
    /* A key given twice: the later value, as Kafka 2.0 takes it
     * (CreateTopicsRequest puts the entries in a HashMap; AdminManager
     * validates and stores what the map holds). */
    size_t nkept = 0;
    for (size_t i = 0; i < nconfigs; i++) {
        struct kp_str k = configs[i].key;
        struct kp_str v = configs[i].value;
        if (k.len <= 0 || (size_t)k.len >= sizeof keys[i] || v.len < 0 ||
            (size_t)v.len >= sizeof values[i]) {
            (void)snprintf(err, errlen, "config %.*s: missing or oversized value",
                           k.len > 0 ? (int)k.len : 0, k.ptr != NULL ? k.ptr : "");
            return KP_ERR_INVALID_CONFIG;
        }
        size_t at = nkept;
        for (size_t j = 0; j < nkept; j++) {
            if (strlen(keys[j]) == (size_t)k.len && memcmp(keys[j], k.ptr, (size_t)k.len) == 0) {
                at = j;
                break;
            }
        }
        memcpy(keys[at], k.ptr, (size_t)k.len);
        keys[at][k.len] = '\0';
        memcpy(values[at], v.ptr, (size_t)v.len);
        values[at][v.len] = '\0';
        if (at == nkept) {
            nkept++;
        }
    }
    for (size_t i = 0; i < nkept; i++) {
        int e = br_topic_config_set(&tc, keys[i], values[i], err, errlen);
        if (e != 0) {
            return e;
        }
        kvs[i].key = keys[i];
        kvs[i].value = values[i];
    }
    m.configs = kvs;
    m.n_configs = nkept;
    return validate_only ? 0 : b->admin_ops->create(b, &m, &tc, replicas, err, errlen);
}

/* ---------------------------------------------------------------- the APIs */

int br_h_delete_topics(struct br_req *r)
{
    return r->b->admin_ops->delete_topics(r);
}

int br_h_create_partitions(struct br_req *r)
{
    return r->b->admin_ops->create_partitions(r);
}

int br_h_alter_configs(struct br_req *r)
{
    return r->b->admin_ops->alter_configs(r, false);
}

int br_h_incremental_alter_configs(struct br_req *r)
{
    return r->b->admin_ops->alter_configs(r, true);
}
