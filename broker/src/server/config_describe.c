/* samsa-broker: a DescribeConfigs resource described (request.h,
 * br_describe_config_resource): a topic's configs from its config (hosted
 * here, or read from ZooKeeper by cluster_wait.c) and the broker's own, with
 * their sources and synonyms as Kafka 2.0's AdminManager.describeConfigs
 * gives them. */
#include "server/cluster_wait.h"
#include "server/request.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4

static bool key_wanted(const struct kp_str *keys, int32_t nkeys, const char *name)
{
    if (nkeys < 0) {
        return true; /* null: every key */
    }
    for (int32_t i = 0; i < nkeys; i++) {
        if (kp_str_eq_c(keys[i], name)) {
            return true;
        }
    }
    return false;
}

static struct kp_str arena_copy(struct kp_arena *a, const char *s)
{
    if (s == NULL) {
        return KP_STR_NULL;
    }
    size_t n = strlen(s);
    char *c = kp_arena_alloc(a, n + 1);
    if (c == NULL) {
        return KP_STR_NULL;
    }
    memcpy(c, s, n + 1);
    struct kp_str out = {c, (int32_t)n};
    return out;
}

/* One config of a DescribeConfigs result: its fields and, asked for, its
 * one synonym (name NULL: the config's own). KP_E_NOMEM or 0. */
static int describe_entry(struct kp_arena *a,
                          struct kp_DescribeConfigsResponse_DescribeConfigsResourceResult *c,
                          const char *name, const char *value, bool read_only, int8_t source,
                          bool sensitive, bool synonyms, const char *synonym)
{
    c->Name = kp_str_c(name);
    c->Value = arena_copy(a, value);
    c->ReadOnly = read_only;
    c->IsDefault = source == BR_CONFIG_SOURCE_DEFAULT;
    c->ConfigSource = source;
    c->IsSensitive = sensitive;
    c->Synonyms.count = 0;
    if (!synonyms) {
        return 0;
    }
    struct kp_DescribeConfigsResponse_DescribeConfigsSynonym *syn = kp_arena_alloc(a, sizeof *syn);
    if (syn == NULL) {
        return KP_E_NOMEM;
    }
    syn->Name = synonym != NULL ? kp_str_c(synonym) : c->Name;
    syn->Value = c->Value;
    syn->Source = source;
    c->Synonyms.items = syn;
    c->Synonyms.count = 1;
    return 0;
}

/*
 * One broker config: its value from the first of this broker's dynamic
 * value, the cluster's dynamic default, the static value and the default
 * (DynamicBrokerConfig's order, with Kafka's config sources
 * DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
 * STATIC_BROKER_CONFIG, DEFAULT_CONFIG); asked for, its synonyms are those
 * of them that are set, in that order (AdminManager.brokerSynonyms). A
 * dynamic key is not read-only. KP_E_NOMEM or 0.
 */
static int describe_broker_entry(const struct br_server *b, struct kp_arena *a,
                                 struct kp_DescribeConfigsResponse_DescribeConfigsResourceResult *c,
                                 const struct br_config_entry *e, bool dynamic, bool synonyms)
{
    const char *vals[4] = {NULL, NULL, NULL, NULL};
    static const int8_t sources[4] = {BR_CONFIG_SOURCE_DYNAMIC_BROKER,
                                      BR_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER,
                                      BR_CONFIG_SOURCE_STATIC_BROKER, BR_CONFIG_SOURCE_DEFAULT};
    if (dynamic) {
        vals[0] = br_cluster_dynamic_value(b, e->name, 1);
        vals[1] = br_cluster_dynamic_value(b, e->name, 0);
    }
    int first = vals[0] != NULL ? 0 : vals[1] != NULL ? 1 : -1;
    if (first < 0) {
        if (describe_entry(a, c, e->name, e->value, e->read_only, e->source, e->sensitive,
                           synonyms, NULL) != 0) {
            return KP_E_NOMEM;
        }
    } else if (describe_entry(a, c, e->name, vals[first], false, sources[first], false, synonyms,
                              NULL) != 0) {
        return KP_E_NOMEM;
    }
    c->ReadOnly = e->read_only && !dynamic;
    if (!synonyms) {
        return 0;
    }
    if (e->source == BR_CONFIG_SOURCE_STATIC_BROKER) {
        vals[2] = e->value;
    }
    struct kp_DescribeConfigsResponse_DescribeConfigsSynonym *syn =
        kp_arena_alloc(a, 4 * sizeof *syn);
    if (syn == NULL) {
        return KP_E_NOMEM;
    }
    int32_t n = 0;
    for (int i = 0; i < 4; i++) {
        bool is_default = i == 3 && e->source == BR_CONFIG_SOURCE_DEFAULT && e->value != NULL;
        if (vals[i] == NULL && !is_default) {
            continue;
        }
        syn[n].Name = kp_str_c(e->name);
        syn[n].Value = arena_copy(a, is_default ? e->value : vals[i]);
        syn[n].Source = sources[i];
        n++;
    }
    c->Synonyms.items = syn;
    c->Synonyms.count = n;
    return 0;
}

int br_describe_config_resource(struct br_server *b, struct kp_arena *a, int8_t type,
                                struct kp_str name, const struct kp_str *keys, int32_t nkeys,
                                bool synonyms, const struct br_topic_config *topic_config,
                                struct kp_DescribeConfigsResponse_DescribeConfigsResult *out)
{
    out->ResourceType = type;
    out->ResourceName = name;
    out->ErrorMessage = KP_STR_NULL;
    size_t cap = type == RESOURCE_TOPIC ? (size_t)BR_TCFG__COUNT : (size_t)BR_CFG__COUNT;
    out->Configs.items = kp_arena_alloc(a, cap * sizeof *out->Configs.items);
    if (out->Configs.items == NULL) {
        return KP_E_NOMEM;
    }
    out->Configs.count = 0;
    if (type == RESOURCE_TOPIC) {
        const struct br_topic_config *tc = topic_config;
        if (tc == NULL) {
            const struct br_topic *t = br_rm_find_topic(&b->rm, name);
            tc = t != NULL ? &t->config : NULL;
        }
        if (tc == NULL) {
            out->ErrorCode = KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            return 0;
        }
        for (int k = 0; k < BR_TCFG__COUNT; k++) {
            struct br_topic_config_entry e;
            br_topic_config_entry(tc, &b->cfg, (enum br_topic_config_key)k, &e);
            if (!key_wanted(keys, nkeys, e.name)) {
                continue;
            }
            const char *synonym =
                e.source == BR_CONFIG_SOURCE_DYNAMIC_TOPIC || e.broker_synonyms == NULL
                    ? NULL
                    : e.broker_synonyms[0];
            if (describe_entry(a, &out->Configs.items[out->Configs.count++], e.name, e.value,
                               e.read_only, e.source, e.sensitive, synonyms, synonym) != 0) {
                return KP_E_NOMEM;
            }
        }
        out->ErrorCode = KP_ERR_NONE;
        return 0;
    }
    if (type == RESOURCE_BROKER) {
        char self[16];
        (void)snprintf(self, sizeof self, "%" PRId32, b->node_id);
        if (name.len > 0 && !kp_str_eq_c(name, self)) {
            out->ErrorCode = KP_ERR_INVALID_REQUEST;
            out->ErrorMessage = arena_copy(a, "unexpected broker id: this is broker");
            return 0;
        }
        for (int k = 0; k < BR_CFG__COUNT; k++) {
            struct br_config_entry e;
            br_config_entry(&b->cfg, (enum br_config_key)k, &e);
            if (e.name == NULL || !key_wanted(keys, nkeys, e.name)) {
                continue;
            }
            if (describe_broker_entry(b, a, &out->Configs.items[out->Configs.count++], &e,
                                      br_config_key_dynamic((enum br_config_key)k),
                                      synonyms) != 0) {
                return KP_E_NOMEM;
            }
        }
        out->ErrorCode = KP_ERR_NONE;
        return 0;
    }
    out->ErrorCode = KP_ERR_INVALID_REQUEST;
    out->ErrorMessage = arena_copy(a, "unsupported resource type");
    return 0;
}
