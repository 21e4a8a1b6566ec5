/* samsa-broker: client quotas of a cluster, read from ZooKeeper as Kafka
 * 2.0's DynamicConfigManager reads them (ClientIdConfigHandler,
 * UserConfigHandler): /config/clients/<client-id>, /config/users/<user> and
 * /config/users/<user>/clients/<client-id> hold
 *   {"version":1,"config":{"producer_byte_rate":"1024"}}
 * (<default> for either name); all of them are read when the broker first
 * lists /config/changes, and an entity again when a notification names it
 * ({"version":2,"entity_path":"clients/x"}). Names are stored sanitized
 * (Kafka's Sanitizer: URL-encoded) and decoded here. Reads go through the
 * ZooKeeper session's callbacks: nothing waits on the reactor. */
#define _GNU_SOURCE

#include "base/logging.h"
#include "cluster/zk_json.h"
#include "server/client_quotas.h"
#include "server/cluster_wait.h"

#include <samsa-protocol/alloc.h>

#include <stdio.h>
#include <string.h>

#define QUOTA_PATH_MAX (2 * BR_ZK_ENTITY_NAME_MAX + 64)

/* Kafka's Sanitizer.desanitize: %XX decoded; false for a bad escape or a
 * name that does not fit. */
static bool desanitize(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; in[i] != '\0'; i++) {
        char c = in[i];
        if (c == '%') {
            int v = 0;
            for (int k = 1; k <= 2; k++) {
                char h = in[i + (size_t)k];
                int d = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                               : -1;
                if (d < 0) {
                    return false;
                }
                v = v * 16 + d;
            }
            c = (char)v;
            i += 2;
        }
        if (o + 1 >= cap || c == '\0') {
            return false;
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return true;
}

/* The znode of an entity path ("clients/x") read: its quotas applied. */
static void entity_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    const char *epath = op->data;
    char user[BR_ZK_ENTITY_NAME_MAX + 1];
    char client[BR_ZK_ENTITY_NAME_MAX + 1];
    char raw_user[BR_ZK_ENTITY_NAME_MAX + 1];
    char raw_client[BR_ZK_ENTITY_NAME_MAX + 1];
    bool has_user = false;
    bool has_client = false;
    if (b->quotas == NULL ||
        br_quota_entity_path(epath, raw_user, sizeof raw_user, raw_client, sizeof raw_client,
                             &has_user, &has_client) != 0 ||
        (has_user && !desanitize(raw_user, user, sizeof user)) ||
        (has_client && !desanitize(raw_client, client, sizeof client))) {
        br_warn("quotas: %s is no client quota entity", r->path);
        br_cop_free(op);
        return;
    }
    struct br_quota_entity e = {.user = has_user ? user : NULL,
                                .client = has_client ? client : NULL};
    if (r->rc == BR_ZK_OK && r->data != NULL && r->data_len > 0) {
        struct br_meta_config *cs = NULL;
        size_t n = 0;
        char err[256];
        if (br_zk_topic_config_decode(r->data, r->data_len, r->path, &cs, &n, err, sizeof err) !=
            0) {
            br_warn("quotas: %s ignored: %s", r->path, err);
            br_cop_free(op);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            int t = br_quota_type_of(cs[i].key);
            double v = 0;
            if (t < 0) {
                continue; /* Kafka keeps other keys of these entities too */
            }
            if (!br_quota_value_parse(cs[i].value, strlen(cs[i].value), &v)) {
                br_warn("quotas: %s: %s=%s is not a rate greater than 0: ignored", r->path,
                        cs[i].key, cs[i].value);
                continue;
            }
            e.set[t] = true;
            e.value[t] = v;
        }
        br_zk_configs_free(cs, n);
    } else if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NONODE) {
        br_warn("quotas: reading %s: %s", r->path, br_zk_rc_name(r->rc));
        br_cop_free(op);
        return;
    }
    /* no znode, or no quota key in it: the entity's quotas are gone */
    int rc = br_quotas_set_entity(b->quotas, &e);
    if (rc != 0) {
        br_warn("quotas: %s not applied: %s", r->path, kp_err_str(rc));
    } else {
        char said[160] = "none";
        size_t at = 0;
        for (int t = 0; t < BR_QUOTA_TYPES; t++) {
            if (e.set[t] && at < sizeof said) {
                int w = snprintf(said + at, sizeof said - at, "%s%s=%.0f", at > 0 ? "," : "",
                                 br_quota_key((enum br_quota_type)t), e.value[t]);
                at += w > 0 ? (size_t)w : 0;
            }
        }
        br_info("quotas: %s: %s", epath, said);
    }
    br_cop_free(op);
}

void br_cluster_quota_entity_changed(struct br_server *b, const char *type, const char *name)
{
    char epath[QUOTA_PATH_MAX];
    char zpath[QUOTA_PATH_MAX + 16];
    if (snprintf(epath, sizeof epath, "%s/%s", type, name) >= (int)sizeof epath) {
        return;
    }
    (void)snprintf(zpath, sizeof zpath, "/config/%s", epath);
    struct br_cop *op = br_cop_new(b, NULL, 0, NULL, entity_read);
    size_t n = strlen(epath);
    char *copy = op != NULL ? kp_malloc(n + 1) : NULL;
    if (copy == NULL) {
        if (op != NULL) {
            br_cop_free(op);
        }
        br_error("out of memory: the quotas of %s not read", epath);
        return;
    }
    memcpy(copy, epath, n + 1);
    op->data = copy;
    if (!br_cluster_zk_ready(b) || br_zk_get(b->zk, zpath, false, br_zk_call_tag(&op->call)) != 0) {
        br_cop_free(op);
        br_warn("quotas: %s not read", zpath);
    }
}

void br_cluster_quota_client_changed(struct br_server *b, const char *name)
{
    br_cluster_quota_entity_changed(b, "clients", name);
}

void br_cluster_quota_user_changed(struct br_server *b, const char *name)
{
    br_cluster_quota_entity_changed(b, "users", name);
}

static void list_children(struct br_server *b, const char *zpath,
                          void (*done)(struct br_zk_call *, const struct br_zk_result *));

/* /config/users/<u>/clients listed: each read. */
static void user_clients_listed(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    if (r->rc == BR_ZK_OK) {
        /* r->path is /config/users/<u>/clients */
        const char *u = r->path + sizeof "/config/" - 1;
        for (size_t i = 0; i < r->n_children; i++) {
            char name[QUOTA_PATH_MAX];
            if (snprintf(name, sizeof name, "%s/%s", u + sizeof "users/" - 1, r->children[i]) <
                (int)sizeof name) {
                br_cluster_quota_entity_changed(b, "users", name);
            }
        }
    }
    br_cop_free(op);
}

/* /config/users listed: each user read, and its clients listed. */
static void users_listed(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    for (size_t i = 0; r->rc == BR_ZK_OK && i < r->n_children; i++) {
        br_cluster_quota_entity_changed(b, "users", r->children[i]);
        char path[QUOTA_PATH_MAX];
        if (snprintf(path, sizeof path, "/config/users/%s/clients", r->children[i]) <
            (int)sizeof path) {
            list_children(b, path, user_clients_listed);
        }
    }
    br_cop_free(op);
}

/* /config/clients listed: each read. */
static void clients_listed(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    for (size_t i = 0; r->rc == BR_ZK_OK && i < r->n_children; i++) {
        br_cluster_quota_entity_changed(b, "clients", r->children[i]);
    }
    br_cop_free(op);
}

static void list_children(struct br_server *b, const char *zpath,
                          void (*done)(struct br_zk_call *, const struct br_zk_result *))
{
    struct br_cop *op = br_cop_new(b, NULL, 0, NULL, done);
    if (op == NULL) {
        br_error("out of memory: %s not listed", zpath);
        return;
    }
    if (!br_cluster_zk_ready(b) ||
        br_zk_get_children(b->zk, zpath, false, br_zk_call_tag(&op->call)) != 0) {
        br_cop_free(op);
    }
}

void br_cluster_quotas_load(struct br_server *b)
{
    list_children(b, "/config/clients", clients_listed);
    list_children(b, "/config/users", users_listed);
}
