/* samsa-broker: topic configs of a cluster: AlterConfigs and
 * IncrementalAlterConfigs written to ZooKeeper as Kafka 2.0's
 * AdminZkClient.changeTopicConfig writes them, and every broker's
 * listener of /config/changes (Kafka's DynamicConfigManager) applying a
 * change to the topics it hosts (see request.h, cluster_wait.h). */
#define _GNU_SOURCE

#include "base/clock.h"
#include "base/logging.h"
#include "base/number.h"
#include "cluster/zk_json.h"
#include "server/client_quotas.h"
#include "server/cluster_wait.h"
#include "server/topic_admin.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4
#define CHANGES_PATH "/config/changes"
#define CHANGE_PREFIX "config_change_"
#define MAX_ATTEMPTS BR_COP_MAX_ATTEMPTS

/* ---------------------------------------------------------------- AlterConfigs */

static void configs_read(struct br_zk_call *call, const struct br_zk_result *r);

static int read_configs(struct br_cop *op)
{
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/config/topics/%s", op->topic);
    op->call.done = configs_read;
    if (!br_cluster_zk_alive(op->b)) {
        return -1;
    }
    return br_zk_get(op->b->zk, path, false, br_zk_call_tag(&op->call));
}

static void fail(struct br_cop *op, int code, const char *msg)
{
    if (code == KP_ERR_UNKNOWN_SERVER_ERROR) {
        br_warn("topic %s: changing its configs: %s", op->topic, msg);
    }
    br_cop_report(op, code, msg);
    br_cop_free(op);
}

static void change_announced(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    if (r->rc == BR_ZK_CONNECTIONLOSS && ++op->attempts < MAX_ATTEMPTS &&
        br_cluster_zk_alive(op->b) &&
        br_zk_create(op->b->zk, CHANGES_PATH "/" CHANGE_PREFIX, op->data, op->data_len,
                     BR_ZK_PERSISTENT_SEQUENTIAL, br_zk_call_tag(&op->call)) == 0) {
        return; /* the notification sent again */
    }
    if (r->rc != BR_ZK_OK) {
        char msg[512];
        (void)snprintf(msg, sizeof msg,
                       "the configs were written, but the change notification was not: %s (the "
                       "brokers apply them when they next read the topic's configs)",
                       br_zk_rc_name(r->rc));
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, msg);
        return;
    }
    br_info("topic %s: configs written to ZooKeeper (%zu change(s)%s), announced as %s", op->topic,
            op->nchanges, op->incremental ? ", incremental" : "",
            r->created_path != NULL ? r->created_path : "a change");
    br_cop_report(op, 0, NULL);
    br_cop_free(op);
}

/* Every broker hears of the change (AdminZkClient.changeEntityConfig): a
 * sequential create, sent again when its answer is lost (Kafka 2.0 does
 * too: a second notification only makes the brokers read the configs
 * again). */
static void announce(struct br_cop *op)
{
    struct br_server *b = op->b;
    char *json = NULL;
    size_t len = 0;
    if (br_zk_config_change_encode("topics", op->topic, &json, &len) != 0) {
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, "cannot encode the change notification");
        return;
    }
    kp_free(op->data);
    op->data = json;
    op->data_len = len;
    op->written_unknown = false;
    op->call.done = change_announced;
    if (!br_cluster_zk_alive(b) ||
        br_zk_create(b->zk, CHANGES_PATH "/" CHANGE_PREFIX, json, len, BR_ZK_PERSISTENT_SEQUENTIAL,
                     br_zk_call_tag(&op->call)) != 0) {
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, "cannot write the change notification");
    }
}

static void configs_written(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    if (r->rc == BR_ZK_CONNECTIONLOSS && ++op->attempts < MAX_ATTEMPTS) {
        /* the answer lost: ZooKeeper may have applied the write. Read
         * back once the session reconnects: what was written is taken
         * (ReplicationUtils-style check of Kafka 2.0's conditional
         * updates), anything else is changed again */
        op->written_unknown = true;
        if (read_configs(op) == 0) {
            return;
        }
    }
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/config/topics/%s", op->topic);
    if (!br_cop_write_taken(op, r, read_configs, fail, path)) {
        announce(op);
    }
}

/* The topic's configs as ZooKeeper holds them: the changes applied and
 * validated as standalone mode does, the result written back conditionally
 * on the version read (created when there was none). */
static void configs_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    char msg[512] = "";
    if (r->rc == BR_ZK_CONNECTIONLOSS && ++op->attempts < MAX_ATTEMPTS && read_configs(op) == 0) {
        return;
    }
    if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NONODE) {
        (void)snprintf(msg, sizeof msg, "reading /config/topics/%s: %s", op->topic,
                       br_zk_rc_name(r->rc));
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, msg);
        return;
    }
    bool exists = r->rc == BR_ZK_OK;
    if (op->written_unknown && exists && !r->data_null && r->data_len == op->data_len &&
        memcmp(r->data, op->data, op->data_len) == 0) {
        br_info("topic %s: the configs whose write's answer was lost were written", op->topic);
        announce(op);
        return;
    }
    op->written_unknown = false;
    struct br_topic_config tc;
    br_topic_config_from_broker(&b->cfg, &tc);
    if (exists && op->incremental && r->data != NULL) {
        /* an incremental change edits the configs the topic has */
        struct br_meta_config *cfgs = NULL;
        size_t n = 0;
        if (br_zk_topic_config_decode(r->data, r->data_len, r->path, &cfgs, &n, msg, sizeof msg) !=
            0) {
            fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, msg);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            char why[256];
            if (br_topic_config_set(&tc, cfgs[i].key, cfgs[i].value, why, sizeof why) != 0) {
                br_warn("topic %s: config %s in ZooKeeper ignored: %s", op->topic, cfgs[i].key,
                        why);
            }
        }
        br_zk_configs_free(cfgs, n);
    }
    int rc = br_config_apply_changes(b, &tc, op->changes, op->nchanges, op->incremental, msg,
                                     sizeof msg);
    if (rc != 0) {
        fail(op, rc, msg);
        return;
    }
    if (op->validate_only) {
        br_cop_report(op, 0, NULL);
        br_cop_free(op);
        return;
    }
    /* what ZooKeeper keeps: the keys set on the topic, as text (Kafka's
     * {"version":1,"config":{...}}) */
    char keys[BR_TCFG__COUNT][BR_META_MAX_CONFIG_KEY + 1];
    char values[BR_TCFG__COUNT][BR_TOPIC_CONFIG_TEXT_MAX];
    struct br_meta_config kvs[BR_TCFG__COUNT];
    size_t n = 0;
    for (int k = 0; k < BR_TCFG__COUNT; k++) {
        if (!br_topic_config_is_set(&tc, (enum br_topic_config_key)k)) {
            continue;
        }
        struct br_topic_config_entry e;
        br_topic_config_entry(&tc, &b->cfg, (enum br_topic_config_key)k, &e);
        (void)snprintf(keys[n], sizeof keys[n], "%s", e.name);
        (void)snprintf(values[n], sizeof values[n], "%s", e.value);
        kvs[n].key = keys[n];
        kvs[n].value = values[n];
        n++;
    }
    char *json = NULL;
    size_t len = 0;
    if (br_zk_topic_config_encode(kvs, n, &json, &len) != 0) {
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, "cannot encode the configs");
        return;
    }
    kp_free(op->data);
    op->data = json;
    op->data_len = len;
    if (br_cop_write_read_znode(op, r, configs_written, json, len) != 0) {
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, "cannot write to ZooKeeper");
    }
}

/* One resource: its work started, or its entry done. */
static void alter_one(struct br_server *b, struct br_cwait *w, size_t i, int8_t type,
                      struct kp_str name, const struct br_config_change *ch, size_t n,
                      bool incremental, bool validate_only)
{
    char msg[512];
    if (type == RESOURCE_BROKER) {
        br_cluster_alter_broker_configs(b, w, i, name, ch, n, incremental, validate_only);
        return;
    }
    if (type != RESOURCE_TOPIC) {
        (void)snprintf(msg, sizeof msg, "unsupported resource type %d", (int)type);
        br_cwait_done(w, i, KP_ERR_INVALID_REQUEST, msg);
        return;
    }
    char topic[BR_TOPIC_NAME_MAX + 1] = "";
    if (name.len > 0 && (size_t)name.len <= BR_TOPIC_NAME_MAX &&
        br_topic_name_valid(name.ptr, (size_t)name.len)) {
        memcpy(topic, name.ptr, (size_t)name.len);
        topic[name.len] = '\0';
    }
    if (topic[0] == '\0' || (br_mc_topic(&b->mc, topic, strlen(topic)) == NULL &&
                             br_rm_find_topic(&b->rm, kp_str_c(topic)) == NULL)) {
        (void)snprintf(msg, sizeof msg, "topic \"%.*s\" does not exist",
                       name.len > 0 ? (int)(name.len > 249 ? 249 : name.len) : 0,
                       name.ptr != NULL ? name.ptr : "");
        br_cwait_done(w, i, KP_ERR_UNKNOWN_TOPIC_OR_PARTITION, msg);
        return;
    }
    struct br_cop *op =
        br_cop_for_changes(b, w, i, topic, configs_read, ch, n, incremental, validate_only);
    if (op != NULL && read_configs(op) != 0) {
        fail(op, KP_ERR_UNKNOWN_SERVER_ERROR, "cannot read from ZooKeeper");
    }
}

int br_cluster_alter_configs(struct br_req *r, bool incremental)
{
    struct br_server *b = r->b;
    size_t nres = 0;
    bool validate_only = false;
    const struct kp_AlterConfigsRequest *qa = r->body;
    const struct kp_IncrementalAlterConfigsRequest *qi = r->body;
    if (incremental) {
        nres = qi->Resources.count > 0 ? (size_t)qi->Resources.count : 0;
        validate_only = qi->ValidateOnly;
    } else {
        nres = qa->Resources.count > 0 ? (size_t)qa->Resources.count : 0;
        validate_only = qa->ValidateOnly;
    }
    struct br_cwait *w = br_cwait_new(r, nres);
    if (w == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < nres; i++) {
        int8_t type;
        struct kp_str name;
        size_t n;
        struct br_config_change *ch;
        if (incremental) {
            const struct kp_IncrementalAlterConfigsRequest_AlterConfigsResource *res =
                &qi->Resources.items[i];
            type = res->ResourceType;
            name = res->ResourceName;
            n = res->Configs.count > 0 ? (size_t)res->Configs.count : 0;
            ch = kp_arena_alloc(r->arena, (n > 0 ? n : 1) * sizeof *ch);
            for (size_t k = 0; ch != NULL && k < n; k++) {
                ch[k].name = res->Configs.items[k].Name;
                ch[k].op = res->Configs.items[k].ConfigOperation;
                ch[k].value = res->Configs.items[k].Value;
            }
        } else {
            const struct kp_AlterConfigsRequest_AlterConfigsResource *res = &qa->Resources.items[i];
            type = res->ResourceType;
            name = res->ResourceName;
            n = res->Configs.count > 0 ? (size_t)res->Configs.count : 0;
            ch = kp_arena_alloc(r->arena, (n > 0 ? n : 1) * sizeof *ch);
            for (size_t k = 0; ch != NULL && k < n; k++) {
                ch[k].name = res->Configs.items[k].Name;
                ch[k].op = 0; /* SET: AlterConfigs replaces the whole set */
                ch[k].value = res->Configs.items[k].Value;
            }
        }
        if (br_cwait_name(w, i, name, type) != 0 || ch == NULL) {
            br_cwait_done(w, i, KP_ERR_UNKNOWN_SERVER_ERROR, "out of memory");
            continue;
        }
        alter_one(b, w, i, type, name, ch, n, incremental, validate_only);
    }
    /* these requests carry no timeout: as standalone, the answer waits at
     * most BR_ALTER_CONFIGS_WAIT_MS */
    return br_cwait_park(w, r, BR_ALTER_CONFIGS_WAIT_MS);
}

/* ---------------------------------------------------------------- DescribeConfigs */

static void described_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_topic_config tc;
    size_t n = 0;
    if (br_cluster_topic_config_decode(op->b, op->topic, r, &tc, &n) != 0) {
        char msg[512];
        (void)snprintf(msg, sizeof msg, "reading /config/topics/%s: %s", op->topic,
                       r->rc != BR_ZK_OK ? br_zk_rc_name(r->rc) : "a document it cannot read");
        br_cop_report(op, KP_ERR_UNKNOWN_SERVER_ERROR, msg);
        br_cop_free(op);
        return;
    }
    struct br_cwait *w = op->w;
    if (w != NULL) {
        struct br_topic_config *copy = kp_malloc(sizeof *copy);
        if (copy == NULL) {
            br_cop_report(op, KP_ERR_UNKNOWN_SERVER_ERROR, "out of memory");
            br_cop_free(op);
            return;
        }
        *copy = tc;
        kp_free(w->e[op->index].topic_config);
        w->e[op->index].topic_config = copy;
    }
    br_cop_report(op, KP_ERR_NONE, NULL);
    br_cop_free(op);
}

void br_cluster_describe_topic(struct br_server *b, struct br_cwait *w, size_t i)
{
    struct br_cop *op = br_cop_new(b, w, i, w->e[i].name, described_read);
    if (op == NULL) {
        br_cwait_done(w, i, KP_ERR_UNKNOWN_SERVER_ERROR, "out of memory");
        return;
    }
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/config/topics/%s", op->topic);
    if (!br_cluster_zk_ready(b) || br_zk_get(b->zk, path, false, br_zk_call_tag(&op->call)) != 0) {
        br_cop_report(op, KP_ERR_UNKNOWN_SERVER_ERROR, "ZooKeeper is not reachable");
        br_cop_free(op);
    }
}

/* ---------------------------------------------------------------- /config/changes */

static void topic_config_changed(struct br_server *b, const char *topic)
{
    if (br_rm_find_topic(&b->rm, kp_str_c(topic)) != NULL) {
        /* the topic's configs read again and applied to its logs */
        br_cluster_read_topic_configs(b, topic);
    }
}

/* What a notification's entity_path ("<type>/<name>") does, by type (Kafka's
 * DynamicConfigManager.configHandlers): other entity types (clients,
 * users) hook in here. */
/* A user's znode changed: its SCRAM credentials (cluster_users.c) and its
 * quotas (cluster_quotas.c) are read again. */
static void user_changed(struct br_server *b, const char *name)
{
    br_cluster_scram_user_changed(b, name);
    br_cluster_quota_user_changed(b, name);
}

static const struct {
    const char *type;
    void (*changed)(struct br_server *b, const char *entity_name);
} entity_handlers[] = {
    {"topics", topic_config_changed},
    {"brokers", br_cluster_broker_config_changed},
    {"clients", br_cluster_quota_client_changed},
    {"users", user_changed}, /* SCRAM credentials and quotas */
};

static void change_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    struct br_zk_config_change ch;
    char err[256];
    if (r->rc == BR_ZK_OK && r->data != NULL &&
        br_zk_config_change_decode(r->data, r->data_len, r->path, &ch, err, sizeof err) == 0) {
        size_t k = 0;
        while (k < sizeof entity_handlers / sizeof entity_handlers[0] &&
               strcmp(entity_handlers[k].type, ch.entity_type) != 0) {
            k++;
        }
        if (k < sizeof entity_handlers / sizeof entity_handlers[0]) {
            entity_handlers[k].changed(b, ch.entity_name);
        } else {
            br_debug("config change of %s/%s ignored: Samsa applies topic, broker, client and user "
                     "configs only",
                     ch.entity_type, ch.entity_name);
        }
    } else if (r->rc == BR_ZK_OK) {
        /* Kafka ignores notifications it cannot read, too */
        br_warn("ignoring config change %s: %s", r->path,
                r->data == NULL ? "no data" : err);
    } else if (r->rc != BR_ZK_NONODE) {
        br_warn("reading config change %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    br_cop_free(op);
}

static void change_purged(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    if (r->rc == BR_ZK_OK) {
        br_debug("purged the config change %s", r->path);
    } else if (r->rc != BR_ZK_NONODE) { /* NONODE: another broker purged it first */
        br_warn("purging the config change %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    br_cop_free(op);
}

/* A notification's age from its stat: one older than
 * config.change.expiration.ms is deleted, as every Kafka broker's
 * ZkNodeChangeNotificationListener.purgeObsoleteNotifications deletes those
 * older than 15 minutes. The listing of /config/changes must stay small:
 * ZooKeeper refuses an answer larger than jute.maxbuffer (1 MiB). */
static void change_aged(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    if (r->rc == BR_ZK_OK && r->has_stat &&
        br_now_wall_ms() - r->stat.ctime_ms > b->cfg.config_change_expiration_ms) {
        struct br_cop *del = br_cop_new(b, NULL, 0, NULL, change_purged);
        if (del != NULL &&
            (!br_cluster_zk_ready(b) ||
             br_zk_delete(b->zk, r->path, -1, br_zk_call_tag(&del->call)) != 0)) {
            br_cop_free(del);
        }
    } else if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NONODE) {
        br_debug("the age of the config change %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    br_cop_free(op);
}

/* The notifications (watched again): those newer than the last seen read,
 * oldest first. The first listing after start only notes where they are:
 * a topic reads its configs when it comes to this broker. */
static void changes_listed(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    br_cop_free(op);
    if (r->rc != BR_ZK_OK) {
        br_warn("listing %s: %s", CHANGES_PATH, br_zk_rc_name(r->rc));
        return;
    }
    int64_t *seqs = kp_calloc(r->n_children > 0 ? r->n_children : 1, sizeof *seqs);
    if (seqs == NULL) {
        br_error("out of memory reading the config changes");
        return;
    }
    size_t n = 0;
    int64_t newest = b->ca.config_change_seen;
    for (size_t i = 0; i < r->n_children; i++) {
        int64_t seq = 0;
        if (br_zk_sequence_number(r->children[i], CHANGE_PREFIX, &seq) != 0) {
            continue;
        }
        if (seq > newest) {
            newest = seq;
        }
        if (b->ca.config_changes_listed && seq > b->ca.config_change_seen) {
            seqs[n++] = seq;
        } else {
            /* read already (or before this start): old enough to go? */
            char path[96];
            if (strlen(r->children[i]) > sizeof path - sizeof CHANGES_PATH - 1) {
                continue;
            }
            (void)snprintf(path, sizeof path, CHANGES_PATH "/%s", r->children[i]);
            struct br_cop *age = br_cop_new(b, NULL, 0, NULL, change_aged);
            if (age != NULL && (!br_cluster_zk_ready(b) ||
                                br_zk_exists(b->zk, path, false, br_zk_call_tag(&age->call)) != 0)) {
                br_cop_free(age);
            }
        }
    }
    qsort(seqs, n, sizeof *seqs, br_num_cmp_i64);
    for (size_t i = 0; i < n; i++) {
        char path[64];
        (void)snprintf(path, sizeof path, CHANGES_PATH "/" CHANGE_PREFIX "%010" PRId64, seqs[i]);
        struct br_cop *one = br_cop_new(b, NULL, 0, NULL, change_read);
        if (one == NULL || !br_cluster_zk_ready(b) ||
            br_zk_get(b->zk, path, false, br_zk_call_tag(&one->call)) != 0) {
            if (one != NULL) {
                br_cop_free(one);
            }
            br_warn("config change %s not read", path);
        }
    }
    kp_free(seqs);
    if (!b->ca.config_changes_listed) {
        br_cluster_quotas_load(b); /* changes from here on come as notifications */
    }
    b->ca.config_change_seen = newest;
    b->ca.config_changes_listed = true;
}

void br_cluster_config_changes(struct br_server *b)
{
    br_cluster_scram_users(b);
    struct br_cop *op = br_cop_new(b, NULL, 0, NULL, changes_listed);
    if (op == NULL) {
        br_error("out of memory: config changes are not followed");
        return;
    }
    if (!br_cluster_zk_ready(b) ||
        br_zk_get_children(b->zk, CHANGES_PATH, true, br_zk_call_tag(&op->call)) != 0) {
        br_cop_free(op);
    }
}

void br_cluster_configs_watch(struct br_server *b, enum br_zk_watch kind, const char *path)
{
    if (kind == BR_ZK_WATCH_CHILD && strcmp(path, CHANGES_PATH) == 0) {
        br_cluster_config_changes(b);
    }
}
