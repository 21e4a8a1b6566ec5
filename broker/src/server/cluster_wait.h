/*
 * samsa-broker: the admin requests of a broker of a cluster that wait for
 * ZooKeeper and for the controller: DeleteTopics, CreatePartitions,
 * AlterConfigs, IncrementalAlterConfigs and InitProducerId (request.h says
 * what each does).
 *
 * A request of these keeps, in a br_cwait, one entry per topic or resource
 * it names (its name copied, its outcome) and parks
 * until every entry is done, answered from the entries in the request's
 * order. Its ZooKeeper requests are br_cop's, each carrying what it needs
 * to go on by itself: a request that times out (REQUEST_TIMED_OUT for the
 * entries not done) or whose connection closes only detaches its entries
 * from the operations, which finish all the same, as Kafka's writes do
 * before its request waits in the purgatory. Conditions the controller
 * fulfils (a topic gone, new partitions led) are checked again whenever
 * this broker's metadata cache changes (br_cluster_metadata_changed) and
 * when a watched znode goes.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SERVER_CLUSTER_WAIT_H
#define SAMSA_BROKER_SERVER_CLUSTER_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/zk.h"
#include "cluster/zk_call.h"
#include "server/request.h"

/* What an entry waits for once its writes are done. */
enum br_cwait_until {
    BR_CWAIT_NOTHING = 0,    /* done when its operation answers */
    BR_CWAIT_TOPIC_GONE,     /* DeleteTopics: the marker gone, the topic out of the cache */
    BR_CWAIT_PARTITIONS_LED, /* CreatePartitions: `count` partitions in the cache, each led */
};

struct br_cwait_entry {
    char *name; /* owned, NUL-terminated */
    int8_t type; /* AlterConfigs: the resource type */
    int16_t code;
    char *message; /* owned or NULL */
    bool pending;
    enum br_cwait_until until;
    bool marker_gone; /* BR_CWAIT_TOPIC_GONE: /admin/delete_topics/<t> was deleted */
    int32_t count;    /* BR_CWAIT_PARTITIONS_LED */
    /* DescribeConfigs: the keys asked for (nkeys < 0: all; owned, one
     * block) and the configs ZooKeeper gave a topic hosted elsewhere
     * (owned; NULL: answered from this broker's state) */
    struct kp_str *keys;
    int32_t nkeys;
    struct br_topic_config *topic_config;
};

struct br_cwait {
    struct br_park park; /* first: its ops (request.h) */
    struct br_cwait *next;
    struct br_server *b;
    struct br_conn *conn;
    struct br_slot *slot;
    int16_t api_key;
    int16_t version;
    int32_t correlation_id;
    bool parked;
    struct br_timer timer;
    struct br_cwait_entry *e; /* owned */
    size_t n;
    int64_t producer_id; /* InitProducerId */
    bool synonyms;       /* DescribeConfigs: IncludeSynonyms */
};

/* One ZooKeeper request of these modules (cluster_wait.c keeps the list,
 * b->ca.ops): the call, the entry it reports to (w NULL once the
 * request went), and what its kind needs to go on. */
struct br_cop {
    struct br_zk_call call; /* first */
    struct br_cop *next;
    struct br_server *b;
    struct br_cwait *w;
    size_t index;
    char topic[BR_TOPIC_NAME_MAX + 1];
    int attempts;
    bool validate_only;
    bool no_wait; /* timeout <= 0: REQUEST_TIMED_OUT once written, as Kafka */
    /* CreatePartitions: the count asked for, the client's assignment:
     * row i is assignment[first[i] .. first[i + 1]), rows of them (NULL:
     * none given) */
    int32_t count;
    int32_t *assignment;
    int32_t *assignment_first;
    int32_t assignment_rows;
    /* AlterConfigs: the changes (their strings in `strings`) */
    struct br_config_change *changes;
    size_t nchanges;
    char *strings;
    bool incremental;
    int64_t block_start; /* InitProducerId: the block being claimed */
    int64_t block_end;
    int32_t version; /* the znode's version read */
    char *data;      /* what is being written */
    size_t data_len;
    /* the write of data lost its answer (CONNECTIONLOSS): ZooKeeper may
     * have applied it; the next read compares */
    bool written_unknown;
    /* another module's operation: its own state (not freed here) */
    void *owner;
};

/* A waiter for request r (its api, version and correlation id) with n
 * entries, pending, codes NONE. NULL when out of memory. */
struct br_cwait *br_cwait_new(struct br_req *r, size_t n);
/* Entry i: its name (copied) and type. 0 or KP_E_NOMEM. */
KP_MUST_CHECK int br_cwait_name(struct br_cwait *w, size_t i, struct kp_str name, int8_t type);
/* Entry i's keys (DescribeConfigs), copied; count < 0: all. 0 or KP_E_NOMEM. */
KP_MUST_CHECK int br_cwait_keys(struct br_cwait *w, size_t i, const struct kp_str *keys,
                                int32_t count);
/* DescribeConfigs: entry i, a topic this broker hosts no replica of, gets
 * its configs from ZooKeeper (cluster_configs.c). */
void br_cluster_describe_topic(struct br_server *b, struct br_cwait *w, size_t i);
/* Entry i is done with code (message may be NULL or ""): answered when it
 * was the last and the request is parked. */
void br_cwait_done(struct br_cwait *w, size_t i, int code, const char *message);
/* Entry i's writes are done: it now waits for `until` (checked at once). */
void br_cwait_until(struct br_cwait *w, size_t i, enum br_cwait_until until);
/* After the handler started every entry's work: parks r until the entries
 * are done or timeout_ms passes (<= 0: no timer), or answers at once when
 * none is pending. Returns 0 or what br_respond returns; w is the
 * broker's either way. */
int br_cwait_park(struct br_cwait *w, struct br_req *r, int32_t timeout_ms);
/* The conditions of the entries waiting for the controller, checked. */
void br_cluster_metadata_changed(struct br_server *b);

/* A ZooKeeper operation for entry index of w (w NULL: none), its answer to
 * done. NULL when out of memory. */
struct br_cop *br_cop_new(struct br_server *b, struct br_cwait *w, size_t index, const char *topic,
                          void (*done)(struct br_zk_call *, const struct br_zk_result *));
void br_cop_free(struct br_cop *op);
/* The operation's outcome to its entry (if it still has one). */
void br_cop_report(struct br_cop *op, int code, const char *message);
/* The operation's writes are done: its entry (if it still has one) waits
 * for until (count: BR_CWAIT_PARTITIONS_LED's). */
void br_cop_until(struct br_cop *op, enum br_cwait_until until, int32_t count);
/* The ZooKeeper session is there to be used. */
bool br_cluster_zk_ready(const struct br_server *b);
/* The session lives, connected or reconnecting: a request made now is sent
 * once connected (what a request whose answer was lost is sent again on). */
bool br_cluster_zk_alive(const struct br_server *b);

/* At stop, after the session closed: every waiter, operation and the
 * worker freed. */
void br_cluster_wait_free_all(struct br_server *b);

/* Watches (cluster_member.c hands the broker's session's events here). */
void br_cluster_topics_watch(struct br_server *b, enum br_zk_watch kind, const char *path);
void br_cluster_configs_watch(struct br_server *b, enum br_zk_watch kind, const char *path);

/* Copies a resource's changes into op (they outlive the request):
 * cluster_configs.c. 0 or KP_E_NOMEM. */
int br_cop_take_changes(struct br_cop *op, const struct br_config_change *ch, size_t n);

/* After the conditional write of op's configs to path: true when op was
 * taken (read_again started after losing to another writer, at most a few
 * times; or failed called), false when it was written. */
bool br_cop_write_taken(struct br_cop *op, const struct br_zk_result *r,
                        int (*read_again)(struct br_cop *op),
                        void (*failed)(struct br_cop *op, int code, const char *msg),
                        const char *path);

/* Writes json to the znode whose read r answered: set on the version read,
 * or created when there was none; done gets the answer. 0, or -1 when the
 * write cannot start. */
int br_cop_write_read_znode(struct br_cop *op, const struct br_zk_result *r,
                            void (*done)(struct br_zk_call *, const struct br_zk_result *),
                            const char *json, size_t len);

/* The op of an AlterConfigs resource named name, with its changes and
 * flags, done called with its first ZooKeeper answer; NULL when entry i of
 * w was answered instead (ZooKeeper not connected, out of memory). */
struct br_cop *br_cop_for_changes(struct br_server *b, struct br_cwait *w, size_t i,
                                  const char *name,
                                  void (*done)(struct br_zk_call *, const struct br_zk_result *),
                                  const struct br_config_change *ch, size_t n, bool incremental,
                                  bool validate_only);

/* Dynamic broker configs (cluster_broker_configs.c): both znodes read and
 * applied (at joining); a notification of entity "brokers/<entity>"; a
 * BROKER resource of AlterConfigs or IncrementalAlterConfigs (name empty:
 * the cluster's default, else this broker's id); the value of key name in
 * /config/brokers/<default> (which 0) or this broker's (1) as last read,
 * or NULL; freed at shutdown. */
void br_cluster_read_broker_configs(struct br_server *b);
void br_cluster_broker_config_changed(struct br_server *b, const char *entity);
void br_cluster_alter_broker_configs(struct br_server *b, struct br_cwait *w, size_t i,
                                     struct kp_str name, const struct br_config_change *ch,
                                     size_t n, bool incremental, bool validate_only);
const char *br_cluster_dynamic_value(const struct br_server *b, const char *name, int which);
void br_cluster_broker_configs_free(struct br_server *b);

#endif
