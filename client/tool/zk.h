/*
 * The samsa tool's ZooKeeper calls, shared by the commands that write
 * Kafka's znodes as Kafka 2.0's own tools do (leaders, users, quotas,
 * reassign): the session, reads of whole znodes, paths made with their
 * parents, and the read-merge-write of a config entity znode
 * (/config/<type>/<name>, {"version":1,"config":{...}}) followed by its
 * change notification, as Kafka 2.0's AdminZkClient.changeEntityConfig
 * (kafka/zk/AdminZkClient.scala) writes them.
 *
 * Data read from ZooKeeper is anybody's: every reader bounds what it takes
 * (ZK_DATA_MAX, ZooKeeper's own default jute.maxbuffer).
 */
#ifndef SAMSA_TOOL_ZK_H
#define SAMSA_TOOL_ZK_H

#include <stdbool.h>
#include <stddef.h>

#include <zookeeper/zookeeper.h>

#define ZK_DATA_MAX (1 << 20)

/* A session with hosts ("HOST:PORT[,...][/chroot]") connected within
 * timeout_ms, or NULL with stderr saying so ("samsa CMD: ..."). The client
 * library's own log (each refused connection, retried) is not printed: the
 * command says what failed. Close with zk_close. */
zhandle_t *zk_open(const char *cmd, const char *hosts, int timeout_ms);
void zk_close(zhandle_t *zh);

/* path's data: ZOK with *data a malloc'd copy NUL-terminated after its *len
 * bytes (an empty or data-less znode: *len 0), the caller frees it; else
 * ZooKeeper's code (ZNONODE...) and *data NULL. stat may be NULL. */
int zk_read(zhandle_t *zh, const char *path, char **data, int *len, struct Stat *stat);

/* path's parents made (persistent, no data) where missing, as Kafka's
 * createRecursive does. */
void zk_make_parents(zhandle_t *zh, const char *path);

/* path created with data (and its parents where missing): ZOK, ZNODEEXISTS
 * or another code. */
int zk_create(zhandle_t *zh, const char *path, const char *data, size_t len);

/* A config change: keys set to values, keys deleted. */
struct zk_config_edit {
    const char *const *set_keys;
    const char *const *set_values;
    size_t nset;
    const char *const *del_keys;
    size_t ndel;
};

/*
 * /config/<entity_path> read, the edit applied over its other keys (kept
 * as they are, in their order), written back if anything changed (a
 * version-checked set, again on what is there when another writer came
 * first), then /config/changes/config_change_N {"version":2,
 * "entity_path":"<entity_path>"} created so every broker reads it again.
 * Deleting keys of a znode that does not exist changes nothing. *changed
 * (may be NULL) says whether the znode was written. 0, or -1 with stderr
 * saying why ("samsa CMD: ...").
 */
int zk_config_change(zhandle_t *zh, const char *cmd, const char *entity_path,
                     const struct zk_config_edit *edit, bool *changed);

#endif
