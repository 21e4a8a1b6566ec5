/* samsa-broker: a cluster's SCRAM credentials read from ZooKeeper (see
 * request.h): /config/users/<user> holds Kafka's
 * {"version":1,"config":{"SCRAM-SHA-256":"salt=...",...}} (Kafka 2.0's
 * ConfigEntityZNode, ZkData.scala), the user URL-encoded (Sanitizer); a
 * change is announced by /config/changes/config_change_<seq> naming
 * users/<user> (cluster_configs.c reads those). Every call goes through
 * the ZooKeeper thread; the answers come back on the reactor, which alone
 * uses the store. */
#define _GNU_SOURCE

#include "base/logging.h"
#include "security/credentials.h"
#include "server/cluster_wait.h"

#include <stdio.h>
#include <string.h>

#define USERS_PATH "/config/users"

/* The user's znode: its credentials replace the store's (a znode gone
 * removes them). */
static void user_read(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    br_cop_free(op);
    const char *name = r->path != NULL ? strrchr(r->path, '/') : NULL;
    char user[BR_SCRAM_USER_NAME_MAX + 1];
    if (b->scram == NULL || name == NULL ||
        !br_user_desanitize(name + 1, strlen(name + 1), user, sizeof user)) {
        return;
    }
    const char *why = "";
    if (r->rc == BR_ZK_NONODE || (r->rc == BR_ZK_OK && r->data == NULL)) {
        if (br_scram_store_set(b->scram, user, NULL, 0, &why) == 0) {
            br_info("SCRAM credentials of %s removed (%s gone)", user, r->path);
        }
    } else if (r->rc != BR_ZK_OK) {
        br_warn("reading %s: %s (the SCRAM credentials of %s are kept as they were)", r->path,
                br_zk_rc_name(r->rc), user);
    } else if (br_scram_store_set(b->scram, user, r->data, r->data_len, &why) != 0) {
        br_warn("%s: %s (the SCRAM credentials of %s are kept as they were)", r->path, why, user);
    } else {
        br_info("SCRAM credentials of %s read from %s", user, r->path);
    }
}

void br_cluster_scram_user_changed(struct br_server *b, const char *sanitized_user)
{
    if (b->scram == NULL || strchr(sanitized_user, '/') != NULL) {
        return; /* no SASL listener; or users/<u>/clients/<c> (quotas) */
    }
    char path[sizeof USERS_PATH + BR_SCRAM_USER_SANITIZED_MAX + 2];
    if ((size_t)snprintf(path, sizeof path, USERS_PATH "/%s", sanitized_user) >= sizeof path) {
        return;
    }
    struct br_cop *op = br_cop_new(b, NULL, 0, NULL, user_read);
    if (op == NULL || !br_cluster_zk_ready(b) ||
        br_zk_get(b->zk, path, false, br_zk_call_tag(&op->call)) != 0) {
        if (op != NULL) {
            br_cop_free(op);
        }
        br_warn("the SCRAM credentials of %s not read", sanitized_user);
    }
}

static void users_listed(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cop *op = (struct br_cop *)(void *)call;
    struct br_server *b = op->b;
    br_cop_free(op);
    if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NONODE) {
        br_warn("listing %s: %s", USERS_PATH, br_zk_rc_name(r->rc));
        return;
    }
    /* users removed while the session was away go (NONODE: no user at all) */
    size_t gone = b->scram != NULL ? br_scram_store_keep_only(b->scram, r->children,
                                                              r->rc == BR_ZK_OK ? r->n_children : 0)
                                   : 0;
    if (gone > 0) {
        br_info("SCRAM credentials of %zu user(s) removed: no longer in %s", gone, USERS_PATH);
    }
    for (size_t i = 0; r->rc == BR_ZK_OK && i < r->n_children; i++) {
        br_cluster_scram_user_changed(b, r->children[i]);
    }
}

void br_cluster_scram_users(struct br_server *b)
{
    if (b->scram == NULL) {
        return;
    }
    struct br_cop *op = br_cop_new(b, NULL, 0, NULL, users_listed);
    if (op == NULL) {
        br_error("out of memory: SCRAM credentials are not read");
        return;
    }
    if (!br_cluster_zk_ready(b) ||
        br_zk_get_children(b->zk, USERS_PATH, false, br_zk_call_tag(&op->call)) != 0) {
        br_cop_free(op);
    }
}
