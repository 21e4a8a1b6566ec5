/*
 * samsa-broker: dynamic broker configs on a cluster (KIP-226, Kafka 2.0's
 * kafka/server/DynamicBrokerConfig.scala and AdminManager.alterConfigs):
 * /config/brokers/<default> (every broker's) and /config/brokers/<id>
 * (this broker's), {"version":1,"config":{"log.retention.ms":"1000"}} as
 * ConfigEntityZNode writes them, read at joining and again at each
 * /config/changes notification of entity_path "brokers/<default>" or
 * "brokers/<id>" (cluster_configs.c's reader hands them here), applied to
 * the broker's config (br_config_dynamic) and to every topic hosted here
 * (its configs read again: the new defaults under its own keys, as
 * DynamicLogConfig.reconfigure does); AlterConfigs and
 * IncrementalAlterConfigs of BROKER resources written there and announced.
 * Every ZooKeeper call is asynchronous: the reactor never waits on one.
 * See cluster_wait.h.
 */
#define _GNU_SOURCE

#include "base/logging.h"
#include "cluster/zk_json.h"
#include "config/topic_config.h"
#include "server/cluster_wait.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ENTITY "<default>"
#define CHANGES_PATH "/config/changes"
#define CHANGE_PREFIX "config_change_"

/* ---------------------------------------------------------------- reading */

/* Whether two sets of topic defaults give every topic key the same value
 * (compared as DescribeConfigs renders them). */
static bool same_defaults(const struct br_topic_config *x, const struct br_topic_config *y,
                          const struct br_config *cfg)
{
    for (int k = 0; k < BR_TCFG__COUNT; k++) {
        struct br_topic_config_entry ex;
        struct br_topic_config_entry ey;
        br_topic_config_entry(x, cfg, (enum br_topic_config_key)k, &ex);
        br_topic_config_entry(y, cfg, (enum br_topic_config_key)k, &ey);
        if (strcmp(ex.value, ey.value) != 0) {
            return false;
        }
    }
    return true;
}

static void apply(struct br_server *b)
{
    size_t total = b->ca.ndyn[0] + b->ca.ndyn[1];
    const char **names = kp_calloc(total + 1, sizeof *names);
    const char **values = kp_calloc(total + 1, sizeof *values);
    if (names == NULL || values == NULL) {
        kp_free(names);
        kp_free(values);
        br_error("out of memory applying the dynamic broker configs");
        return;
    }
    size_t n = 0;
    /* the cluster's defaults, then this broker's: the later wins */
    for (int which = 0; which < 2; which++) {
        for (size_t i = 0; i < b->ca.ndyn[which]; i++) {
            const struct br_meta_config *kv = &b->ca.dyn[which][i];
            int k = br_config_find(kv->key);
            if (k < 0 || !br_config_key_dynamic((enum br_config_key)k)) {
                br_debug("dynamic broker config %s ignored: not a dynamic key here", kv->key);
                continue;
            }
            names[n] = kv->key;
            values[n] = kv->value;
            n++;
        }
    }
    char err[512];
    struct br_topic_config before;
    struct br_topic_config after;
    br_topic_config_from_broker(&b->cfg, &before);
    if (br_config_dynamic(&b->cfg, names, values, n, true, err, sizeof err) != 0) {
        br_warn("dynamic broker configs not applied: %s", err);
    } else {
        br_topic_config_from_broker(&b->cfg, &after);
        bool changed = !same_defaults(&before, &after, &b->cfg);
        if (n > 0 || changed) {
            br_info("dynamic broker configs: %zu key(s) in force (%zu cluster default(s), %zu "
                    "of this broker's)%s",
                    n, b->ca.ndyn[0], b->ca.ndyn[1], changed ? ": the topics' defaults changed" : "");
        }
        /* each hosted topic: the broker's new defaults under its own keys
         * (read again only when they changed: this runs at every
         * connection) */
        for (size_t i = 0; changed && i < b->rm.ntopics; i++) {
            br_cluster_read_topic_configs(b, b->rm.topics[i]->name);
        }
    }
    kp_free(names);
    kp_free(values);
}

static int read_entity(struct br_server *b, int which);

static void entity_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    int which = (int)op->index;
    br_cop_free(op);
    struct br_meta_config *cfgs = NULL;
    size_t n = 0;
    if (r->rc == BR_ZK_OK && r->data != NULL) {
        char err[256];
        if (br_zk_topic_config_decode(r->data, r->data_len, r->path, &cfgs, &n, err, sizeof err) !=
            0) {
            br_warn("%s ignored: %s", r->path, err);
            cfgs = NULL;
            n = 0;
        }
    } else if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NONODE) {
        br_warn("reading %s: %s (the dynamic broker configs stay as they were)", r->path,
                br_zk_rc_name(r->rc));
        return;
    }
    br_zk_configs_free(b->ca.dyn[which], b->ca.ndyn[which]);
    b->ca.dyn[which] = cfgs;
    b->ca.ndyn[which] = n;
    if (which == 0) {
        if (read_entity(b, 1) != 0) {
            apply(b);
        }
        return;
    }
    apply(b);
}

/* which 0: /config/brokers/<default>; 1: this broker's. 0 or -1. */
static int read_entity(struct br_server *b, int which)
{
    char path[BR_TOPIC_NAME_MAX + 32];
    if (which == 0) {
        (void)snprintf(path, sizeof path, "/config/brokers/" DEFAULT_ENTITY);
    } else {
        (void)snprintf(path, sizeof path, "/config/brokers/%" PRId32, b->node_id);
    }
    struct br_cop *op = br_cop_new(b, NULL, (size_t)which, NULL, entity_read);
    if (op == NULL) {
        return -1;
    }
    if (!br_cluster_zk_ready(b) || br_zk_get(b->zk, path, false, br_zk_call_tag(&op->call)) != 0) {
        br_cop_free(op);
        return -1;
    }
    return 0;
}

void br_cluster_read_broker_configs(struct br_server *b)
{
    if (b->zk != NULL && read_entity(b, 0) != 0) {
        br_warn("the dynamic broker configs were not read");
    }
}

void br_cluster_broker_config_changed(struct br_server *b, const char *entity)
{
    char self[16];
    (void)snprintf(self, sizeof self, "%" PRId32, b->node_id);
    if (strcmp(entity, DEFAULT_ENTITY) == 0 || strcmp(entity, self) == 0) {
        br_cluster_read_broker_configs(b);
    }
}

const char *br_cluster_dynamic_value(const struct br_server *b, const char *name, int which)
{
    const char *found = NULL;
    for (size_t i = 0; i < b->ca.ndyn[which]; i++) {
        if (strcmp(b->ca.dyn[which][i].key, name) == 0) {
            found = b->ca.dyn[which][i].value; /* the last of repeats, as applied */
        }
    }
    return found;
}

void br_cluster_broker_configs_free(struct br_server *b)
{
    for (int which = 0; which < 2; which++) {
        br_zk_configs_free(b->ca.dyn[which], b->ca.ndyn[which]);
        b->ca.dyn[which] = NULL;
        b->ca.ndyn[which] = 0;
    }
}

/* ---------------------------------------------------------------- AlterConfigs */

static void path_of(const struct br_cop *op, char *path, size_t size)
{
    (void)snprintf(path, size, "/config/brokers/%s", op->topic);
}

static void fail(struct br_cop *op, int code, const char *msg)
{
    if (code == KP_ERR_UNKNOWN_SERVER_ERROR) {
        br_warn("broker configs of %s: %s", op->topic, msg);
    }
    br_cop_report(op, code, msg);
    br_cop_free(op);
}

static int read_current(struct br_cop *op);

static void announced(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    if (r->rc != BR_ZK_OK) {
        char msg[512];
        (void)snprintf(msg, sizeof msg,
                       "the configs were written, but the change notification was not: %s",
                       br_zk_rc_name(r->rc));
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, msg);
        return;
    }
    br_info("broker configs of %s written to ZooKeeper (%zu change(s)), announced as %s",
            op->topic, op->nchanges, r->created_path != NULL ? r->created_path : "a change");
    br_cop_report(op, 0, NULL);
    br_cop_free(op);
}

static void written(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    /* (every broker makes /config/brokers at joining, as Kafka's
     * createTopLevelPaths) */
    char path[BR_TOPIC_NAME_MAX + 32];
    path_of(op, path, sizeof path);
    if (br_cop_write_taken(op, r, read_current, fail, path)) {
        return;
    }
    char *json = NULL;
    size_t len = 0;
    char entity[BR_TOPIC_NAME_MAX + 1];
    (void)snprintf(entity, sizeof entity, "%s", op->topic);
    if (br_zk_config_change_encode("brokers", entity, &json, &len) != 0) {
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, "cannot encode the change notification");
        return;
    }
    op->call.done = announced;
    int zrc = !br_cluster_zk_ready(b)
                  ? KP_E_INVALID_ARG
                  : br_zk_create(b->zk, CHANGES_PATH "/" CHANGE_PREFIX, json, len,
                                 BR_ZK_PERSISTENT_SEQUENTIAL, br_zk_call_tag(&op->call));
    kp_free(json);
    if (zrc != 0) {
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, "cannot write the change notification");
    }
}

/* The set after op's changes: AlterConfigs replaces it, IncrementalAlterConfigs
 * edits cur (SET and DELETE). Into names/values (n at most cur + changes);
 * 0 or a Kafka error with msg. */
static int merged(const struct br_cop *op, const struct br_meta_config *cur, size_t ncur,
                  const char **names, const char **values, size_t *n, char *msg, size_t msglen)
{
    size_t m = 0;
    if (op->incremental) {
        for (size_t i = 0; i < ncur; i++) {
            names[m] = cur[i].key;
            values[m++] = cur[i].value;
        }
    }
    for (size_t i = 0; i < op->nchanges; i++) {
        const struct br_config_change *ch = &op->changes[i];
        if (ch->name.ptr == NULL) {
            (void)snprintf(msg, msglen, "a config without a name");
            return KP_ERR_INVALID_REQUEST;
        }
        if (ch->op != 0 && ch->op != 1) {
            (void)snprintf(msg, msglen, "%s: only SET and DELETE apply to broker configs",
                           ch->name.ptr);
            return KP_ERR_INVALID_REQUEST;
        }
        /* drop an earlier value of the key: the change replaces it */
        size_t k = 0;
        for (size_t j = 0; j < m; j++) {
            if (strcmp(names[j], ch->name.ptr) != 0) {
                names[k] = names[j];
                values[k++] = values[j];
            }
        }
        m = k;
        if (ch->op == 1) {
            continue;
        }
        if (ch->value.len < 0) {
            (void)snprintf(msg, msglen, "Null value not supported for : %s", ch->name.ptr);
            return KP_ERR_INVALID_REQUEST;
        }
        names[m] = ch->name.ptr;
        values[m++] = ch->value.ptr;
    }
    *n = m;
    return 0;
}

static void current_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    char msg[512] = "";
    if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NONODE) {
        (void)snprintf(msg, sizeof msg, "reading /config/brokers/%s: %s", op->topic,
                       br_zk_rc_name(r->rc));
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, msg);
        return;
    }
    bool exists = r->rc == BR_ZK_OK;
    struct br_meta_config *cur = NULL;
    size_t ncur = 0;
    if (exists && r->data != NULL &&
        br_zk_topic_config_decode(r->data, r->data_len, r->path, &cur, &ncur, msg, sizeof msg) !=
            0) {
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, msg);
        return;
    }
    const char **names = kp_calloc(ncur + op->nchanges + 1, sizeof *names);
    const char **values = kp_calloc(ncur + op->nchanges + 1, sizeof *values);
    size_t n = 0;
    int rc = names == NULL || values == NULL ? KP_ERR_UNKNOWN_SERVER_ERROR : 0;
    if (rc == 0) {
        rc = merged(op, cur, ncur, names, values, &n, msg, sizeof msg);
    }
    if (rc == 0) {
        /* validated with this broker's static configs, as Kafka validates
         * them with the receiving broker's (DynamicBrokerConfig.validate) */
        rc = br_config_dynamic(&b->cfg, names, values, n, false, msg, sizeof msg);
        rc = rc == KP_E_NOMEM ? KP_ERR_UNKNOWN_SERVER_ERROR : rc;
    }
    char *json = NULL;
    size_t len = 0;
    if (rc == 0 && !op->validate_only) {
        struct br_meta_config *kvs = kp_calloc(n + 1, sizeof *kvs);
        for (size_t i = 0; kvs != NULL && i < n; i++) {
            kvs[i].key = (char *)(uintptr_t)names[i];
            kvs[i].value = (char *)(uintptr_t)values[i];
        }
        if (kvs == NULL || br_zk_topic_config_encode(kvs, n, &json, &len) != 0) {
            rc = KP_ERR_UNKNOWN_SERVER_ERROR;
            (void)snprintf(msg, sizeof msg, "cannot encode the configs");
        }
        kp_free(kvs);
    }
    kp_free(names);
    kp_free(values);
    br_zk_configs_free(cur, ncur);
    if (rc != 0) {
        fail(op, rc, msg);
        return;
    }
    if (op->validate_only) {
        br_cop_report(op, 0, NULL);
        br_cop_free(op);
        return;
    }
    int zrc = br_cop_write_read_znode(op, r, written, json, len);
    kp_free(json);
    if (zrc != 0) {
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, "cannot write to ZooKeeper");
    }
}

/* Reads the znode; 0, or -1 (op untouched) when the read cannot start. */
static int read_current(struct br_cop *op)
{
    char path[BR_TOPIC_NAME_MAX + 32];
    path_of(op, path, sizeof path);
    op->call.done = current_read;
    if (!br_cluster_zk_ready(op->b) ||
        br_zk_get(op->b->zk, path, false, br_zk_call_tag(&op->call)) != 0) {
        return -1;
    }
    return 0;
}

void br_cluster_alter_broker_configs(struct br_server *b, struct br_cwait *w, size_t i,
                                     struct kp_str name, const struct br_config_change *ch,
                                     size_t n, bool incremental, bool validate_only)
{
    char self[16];
    (void)snprintf(self, sizeof self, "%" PRId32, b->node_id);
    /* AdminManager.alterConfigs: an empty name is the cluster's default,
     * another broker's id is refused */
    const char *entity = DEFAULT_ENTITY;
    if (name.len > 0) {
        if (!kp_str_eq_c(name, self)) {
            char msg[128];
            (void)snprintf(msg, sizeof msg, "Unexpected broker id, expected %s, but received %.*s",
                           self, name.len > 32 ? 32 : (int)name.len, name.ptr);
            br_cwait_done(w, i, KP_ERR_INVALID_REQUEST, msg);
            return;
        }
        entity = self;
    }
    struct br_cop *op =
        br_cop_for_changes(b, w, i, entity, current_read, ch, n, incremental, validate_only);
    if (op != NULL && read_current(op) != 0) {
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, "cannot read from ZooKeeper");
    }
}
