/*
 * The samsa tool's ZooKeeper calls (see zk.h).
 */
#include "zk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "tool.h"

/* The client library's log stream while a session is open: /dev/null. */
static FILE *zk_log;

zhandle_t *zk_open(const char *cmd, const char *hosts, int timeout_ms)
{
    if (zk_log == NULL) {
        zk_log = fopen("/dev/null", "w");
    }
    if (zk_log != NULL) {
        zoo_set_log_stream(zk_log);
    }
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    int64_t deadline = mono_ms() + timeout_ms;
    zhandle_t *zh = zookeeper_init(hosts, NULL, 30000, NULL, NULL, 0);
    while (zh != NULL && zoo_state(zh) != ZOO_CONNECTED_STATE && mono_ms() < deadline &&
           !interrupted) {
        struct timespec ts = {0, 20L * 1000 * 1000};
        (void)nanosleep(&ts, NULL);
    }
    if (zh != NULL && zoo_state(zh) != ZOO_CONNECTED_STATE) {
        (void)zookeeper_close(zh);
        zh = NULL;
    }
    if (zh == NULL) {
        fprintf(stderr, "samsa %s: cannot connect to ZooKeeper at %s\n", cmd, hosts);
        zk_close(NULL);
    }
    return zh;
}

void zk_close(zhandle_t *zh)
{
    if (zh != NULL) {
        (void)zookeeper_close(zh);
    }
    if (zk_log != NULL) {
        zoo_set_log_stream(stderr);
        (void)fclose(zk_log);
        zk_log = NULL;
    }
}

int zk_read(zhandle_t *zh, const char *path, char **data, int *len, struct Stat *stat)
{
    *data = NULL;
    *len = 0;
    char *buf = malloc(ZK_DATA_MAX + 1);
    if (buf == NULL) {
        return ZSYSTEMERROR;
    }
    int n = ZK_DATA_MAX;
    struct Stat st;
    int rc = zoo_get(zh, path, 0, buf, &n, stat != NULL ? stat : &st);
    if (rc != ZOK) {
        free(buf);
        return rc;
    }
    n = n < 0 ? 0 : n; /* a znode without data reads as -1 bytes */
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return ZOK;
}

void zk_make_parents(zhandle_t *zh, const char *path)
{
    char p[1024];
    (void)snprintf(p, sizeof p, "%s", path);
    for (char *s = strchr(p + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
        *s = '\0';
        (void)zoo_create(zh, p, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
        *s = '/';
    }
}

int zk_create(zhandle_t *zh, const char *path, const char *data, size_t len)
{
    int rc = zoo_create(zh, path, data, (int)len, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc == ZNONODE) {
        zk_make_parents(zh, path);
        rc = zoo_create(zh, path, data, (int)len, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    }
    return rc;
}

/* The edit applied to config (a JSON object); whether it changed. */
static bool apply_edit(json_t *config, const struct zk_config_edit *edit)
{
    bool changed = false;
    for (size_t i = 0; i < edit->ndel; i++) {
        changed = json_object_del(config, edit->del_keys[i]) == 0 || changed;
    }
    for (size_t i = 0; i < edit->nset; i++) {
        json_t *old = json_object_get(config, edit->set_keys[i]);
        if (!json_is_string(old) || strcmp(json_string_value(old), edit->set_values[i]) != 0) {
            (void)json_object_set_new(config, edit->set_keys[i], json_string(edit->set_values[i]));
            changed = true;
        }
    }
    return changed;
}

int zk_config_change(zhandle_t *zh, const char *cmd, const char *entity_path,
                     const struct zk_config_edit *edit, bool *changed)
{
    char path[1024];
    (void)snprintf(path, sizeof path, "/config/%s", entity_path);
    if (changed != NULL) {
        *changed = false;
    }
    for (int attempt = 0; attempt < 10; attempt++) {
        char *data = NULL;
        int len = 0;
        struct Stat st;
        int rc = zk_read(zh, path, &data, &len, &st);
        if (rc != ZOK && rc != ZNONODE) {
            fprintf(stderr, "samsa %s: reading %s: %s\n", cmd, path, zerror(rc));
            return -1;
        }
        json_t *root = len > 0 ? json_loadb(data, (size_t)len, 0, NULL) : NULL;
        free(data);
        if (len > 0 && !json_is_object(root)) {
            fprintf(stderr, "samsa %s: %s is not Kafka's config JSON: left as it is\n", cmd, path);
            json_decref(root);
            return -1;
        }
        if (root == NULL) {
            root = json_pack("{s:i,s:{}}", "version", 1, "config");
        }
        json_t *config = root != NULL ? json_object_get(root, "config") : NULL;
        if (root != NULL && !json_is_object(config)) {
            config = json_object();
            (void)json_object_set_new(root, "config", config);
        }
        if (config == NULL) {
            json_decref(root);
            return -1;
        }
        if (!apply_edit(config, edit) || (rc == ZNONODE && json_object_size(config) == 0)) {
            json_decref(root);
            return 0;
        }
        char *out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(root);
        if (out == NULL) {
            return -1;
        }
        int w = rc == ZNONODE ? zk_create(zh, path, out, strlen(out))
                              : zoo_set(zh, path, out, (int)strlen(out), st.version);
        free(out);
        if (w == ZBADVERSION || w == ZNODEEXISTS || (w == ZNONODE && rc == ZOK)) {
            continue; /* another writer came first: again on what is there now */
        }
        if (w != ZOK) {
            fprintf(stderr, "samsa %s: writing %s: %s\n", cmd, path, zerror(w));
            return -1;
        }
        if (changed != NULL) {
            *changed = true;
        }
        json_t *note = json_pack("{s:i,s:s}", "version", 2, "entity_path", entity_path);
        char *ndata = note != NULL ? json_dumps(note, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(note);
        w = ndata != NULL ? ZOK : ZSYSTEMERROR;
        if (w == ZOK) {
            zk_make_parents(zh, "/config/changes/config_change_");
            w = zoo_create(zh, "/config/changes/config_change_", ndata, (int)strlen(ndata),
                           &ZOO_OPEN_ACL_UNSAFE, ZOO_SEQUENCE, NULL, 0);
        }
        free(ndata);
        if (w != ZOK) {
            fprintf(stderr, "samsa %s: the change notification of %s: %s\n", cmd, entity_path,
                    zerror(w));
            return -1;
        }
        return 0;
    }
    fprintf(stderr, "samsa %s: %s kept changing under this write: try again\n", cmd, path);
    return -1;
}
