/*
 * samsa-broker: the data of Kafka 2.0's znodes, encoded and decoded.
 *
 * Kafka keeps its cluster state in ZooKeeper as small JSON documents (and
 * one bare decimal); a Samsa broker in a Kafka cluster must read what Kafka
 * brokers write there and write what they read. The formats, the keys each
 * one has and the types of their values are those of Kafka 2.0's
 * core/src/main/scala/kafka/zk/ZkData.scala (the file each function below
 * cites): numbers Kafka writes as JSON strings are strings here too.
 *
 *   struct br_zk_partition_state st;
 *   rc = br_zk_partition_state_decode(data, len, path, &st, err, sizeof err);
 *   ... st.leader, st.isr[0..st.n_isr) ...
 *   br_zk_partition_state_clear(&st);
 *
 *   char *json; size_t n;
 *   rc = br_zk_partition_state_encode(&st, &json, &n);     kp_free(json)
 *
 * Decoding. ZooKeeper data is untrusted input: anybody with access to the
 * ensemble can write anything there. A decoder reads at most
 * BR_ZK_JSON_MAX_BYTES, parses with jansson (strict JSON, UTF-8 only, no
 * \u0000 in strings, nesting at most jansson's 2048), refuses an object
 * with a key given twice (Kafka's Jackson would take the last one; an
 * ambiguous document is refused rather than read one way here and another
 * way elsewhere), then reads by key, as Kafka does: the order of the keys
 * does not matter, keys Kafka 2.0 does not read (later versions' additions,
 * the timestamps) are ignored, and a value Kafka reads must have the JSON
 * type Kafka's reader demands (kafka/utils/json/DecodeJson.scala: an Int is
 * a JSON integer within 32 bits, never a string or 1.0). Beyond Kafka, the
 * decoders refuse what no Kafka writer produces and what would break the
 * broker's invariants: negative broker ids and partitions, epochs below
 * their initial value, a broker listed twice in one replica list, counts
 * above the ceilings below. Every decoder returns
 *   0                   *out filled (owned by the caller: its _clear)
 *   KP_E_CORRUPT        not JSON, not an object, a key missing, a value of
 *                       the wrong type or out of range
 *   KP_E_UNSUPPORTED    a version Kafka 2.0 does not read either
 *   KP_E_TOO_LARGE      more bytes or entries than the ceilings
 *   KP_E_NOMEM
 * and on failure leaves *out zeroed and writes a sentence to err:
 * "<name>: what [FILE:LINE]", name being what the caller calls the
 * data (its path) and FILE:LINE the detection site (zk_json.c or another
 * zk_json_*.c). No decoder asserts on data.
 *
 * Encoding gives Kafka 2.0's current version of each format, compact (no
 * spaces), keys in the order of the fact sheet's examples, as a kp_malloc'd
 * string: *out holds *out_len bytes and a NUL after them; the caller frees
 * it with kp_free. Encoders return 0, KP_E_INVALID_ARG (a value the format
 * cannot carry or the decoder would refuse: what is written always reads
 * back the same), KP_E_TOO_LARGE or KP_E_NOMEM; *out is NULL on failure.
 *
 * The ZooKeeper session that reads and writes these bytes is zk.h.
 *
 * @locality any thread (jansson keeps no state between calls that matters
 * here); no call keeps a pointer to its input.
 */
#ifndef SAMSA_BROKER_ZK_JSON_H
#define SAMSA_BROKER_ZK_JSON_H

#include <stdbool.h>

#include "auth/acl.h"
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "cluster/metadata.h"

/* The most bytes a decoder reads: four times ZooKeeper's default
 * jute.maxbuffer (0xfffff), for an ensemble configured above it. jansson
 * then holds at most about 20 times this in memory. */
#define BR_ZK_JSON_MAX_BYTES ((size_t)4 * 1024 * 1024)

/* Ceilings of what one document may hold (Kafka has none). */
#define BR_ZK_ADMIN_ENDPOINT_MAX 255
#define BR_ZK_MAX_ENDPOINTS 64               /* endpoints of one broker */
#define BR_ZK_LISTENER_MAX 255               /* bytes of a listener name */
#define BR_ZK_HOST_MAX 255                   /* bytes of a host (a DNS name is at most 253) */
#define BR_ZK_RACK_MAX 255                   /* bytes of broker.rack */
#define BR_ZK_CLUSTER_ID_MAX 255             /* bytes of a cluster id (Kafka's are 22) */
#define BR_ZK_ENTITY_NAME_MAX 1024           /* bytes of a config entity's name */
#define BR_ZK_MAX_NOTIFIED ((size_t)1 << 20) /* partitions in one ISR change notification */

/* ------------------------------------------------------------ /brokers/ids/<id> */

/* Kafka's SecurityProtocol (clients/.../security/auth/SecurityProtocol.java),
 * numbered as Kafka numbers them. */
enum br_zk_security_protocol {
    BR_ZK_PLAINTEXT = 0,
    BR_ZK_SSL = 1,
    BR_ZK_SASL_PLAINTEXT = 2,
    BR_ZK_SASL_SSL = 3,
};

/* "PLAINTEXT", "SSL", ...; "UNKNOWN" for anything else. Never NULL. */
const char *br_zk_security_protocol_name(enum br_zk_security_protocol p);

/* One advertised endpoint, written LISTENER://host:port (an IPv6 host in
 * brackets; kafka/cluster/EndPoint.scala). */
struct br_zk_endpoint {
    char listener[BR_ZK_LISTENER_MAX + 1]; /* upper case, as Kafka normalises it */
    char host[BR_ZK_HOST_MAX + 1];         /* "" = Kafka's null host ("LISTENER://:9092") */
    int32_t port;                          /* 0..65535 */
    enum br_zk_security_protocol security_protocol;
};

/*
 * A broker's registration (BrokerIdZNode). Written as version 4 (Kafka
 * 2.0's at inter.broker.protocol.version >= 0.10.0-IV1):
 *
 *   {"version":4,"host":"10.0.0.1","port":9092,
 *    "endpoints":["PLAINTEXT://10.0.0.1:9092","REPLICATION://10.0.0.1:9093"],
 *    "listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","REPLICATION":"SSL"},
 *    "rack":"dc1","jmx_port":-1,"timestamp":"1530000000000"}
 *
 * host and port are those of the first PLAINTEXT endpoint (JSON null and -1
 * when there is none), for clients older than the endpoints list; rack is
 * written only when set. Read as Kafka 2.0 reads it: version 1 is host and
 * port, one PLAINTEXT endpoint; version 2 and later (5 and up included, as
 * Kafka 2.0 reads them) the endpoints, their security protocols from the
 * map when there is one (else a listener is named after its protocol), and
 * the rack; jmx_port always. The broker id is the znode's name, not here.
 */
struct br_zk_broker {
    int32_t version;                  /* as read; the encoder writes 4 */
    struct br_zk_endpoint *endpoints; /* owned, n_endpoints of them */
    size_t n_endpoints;               /* 1..BR_ZK_MAX_ENDPOINTS, listeners distinct */
    bool has_rack;
    char rack[BR_ZK_RACK_MAX + 1];
    int32_t jmx_port;     /* -1: JMX off */
    int64_t timestamp_ms; /* when registered; -1 when absent or unreadable (Kafka ignores it) */
    /* Samsa's own field "admin_endpoint": the broker's admin API URL
     * ("http://127.0.0.1:9095"); "" when absent, unreadable or too long.
     * Kafka ignores fields it does not know. */
    char admin_endpoint[BR_ZK_ADMIN_ENDPOINT_MAX + 1];
};

void br_zk_broker_clear(struct br_zk_broker *b);
KP_MUST_CHECK int br_zk_broker_encode(const struct br_zk_broker *b, char **out, size_t *out_len);
KP_MUST_CHECK int br_zk_broker_decode(const char *buf, size_t len, const char *name,
                                      struct br_zk_broker *out, char *err, size_t errlen);

/* ------------------------------------------------------------ /controller, /controller_epoch */

/* ControllerZNode: {"version":1,"brokerid":2,"timestamp":"1530000000000"}.
 * Kafka reads brokerid alone; version and timestamp are kept when they read
 * (-1 otherwise). */
struct br_zk_controller {
    int32_t version;
    int32_t broker_id; /* >= 0 */
    int64_t timestamp_ms;
};

KP_MUST_CHECK int br_zk_controller_encode(int32_t broker_id, int64_t timestamp_ms, char **out,
                                          size_t *out_len);
KP_MUST_CHECK int br_zk_controller_decode(const char *buf, size_t len, const char *name,
                                          struct br_zk_controller *out, char *err, size_t errlen);

/* ControllerEpochZNode: the epoch as bare ASCII decimal ("7"), not JSON.
 * Read as Java's Integer.parseInt reads it (an optional sign, digits, no
 * space), then refused when negative. */
KP_MUST_CHECK int br_zk_controller_epoch_encode(int32_t epoch, char **out, size_t *out_len);
KP_MUST_CHECK int br_zk_controller_epoch_decode(const char *buf, size_t len, const char *name,
                                                int32_t *epoch, char *err, size_t errlen);

/* ------------------------------------------------------------ /brokers/topics/<t> */

/*
 * A topic's replica assignment (TopicZNode), version 1:
 *   {"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}
 * Partition ids are object keys, each partition's replicas an ordered list
 * (the first the preferred leader). Kafka 2.0 reads "partitions" alone, so
 * version 2's adding_replicas/removing_replicas (2.4) and version 3's
 * topic_id (2.8) are ignored. The partitions must be 0..n-1 (each once: "1"
 * and "01" are the same partition to Kafka's parseInt), each with 1 to
 * BR_META_MAX_REPLICATION_FACTOR distinct non-negative broker ids; at most
 * BR_META_MAX_PARTITIONS partitions and BR_META_MAX_REPLICAS ids in all.
 * Replica counts may differ between partitions (an assignment being moved).
 */
struct br_zk_topic_assignment {
    int32_t n_partitions;
    /* the replicas of partition p are replicas[first[p] .. first[p + 1]);
     * first has n_partitions + 1 entries. Both owned. */
    int32_t *first;
    int32_t *replicas;
};

void br_zk_topic_assignment_clear(struct br_zk_topic_assignment *a);
KP_MUST_CHECK int br_zk_topic_assignment_encode(const struct br_zk_topic_assignment *a, char **out,
                                                size_t *out_len);
KP_MUST_CHECK int br_zk_topic_assignment_decode(const char *buf, size_t len, const char *name,
                                                struct br_zk_topic_assignment *out, char *err,
                                                size_t errlen);

/* ------------------------------------------------------------ .../partitions/<p>/state */

/*
 * A partition's leader and ISR (TopicPartitionStateZNode):
 *   {"version":1,"leader":1,"leader_epoch":4,"isr":[1,3],"controller_epoch":7}
 * leader -1: no leader (LeaderAndIsr.NoLeader). The znode's stat version,
 * Kafka's zkVersion, is not in the data: zk.h gives it with the read.
 */
struct br_zk_partition_state {
    int32_t leader;           /* >= -1 */
    int32_t leader_epoch;     /* >= 0 */
    int32_t controller_epoch; /* >= 0 */
    int32_t *isr;             /* owned; distinct ids >= 0 */
    size_t n_isr;             /* 0..BR_META_MAX_REPLICATION_FACTOR */
};

void br_zk_partition_state_clear(struct br_zk_partition_state *s);
KP_MUST_CHECK int br_zk_partition_state_encode(const struct br_zk_partition_state *s, char **out,
                                               size_t *out_len);
KP_MUST_CHECK int br_zk_partition_state_decode(const char *buf, size_t len, const char *name,
                                               struct br_zk_partition_state *out, char *err,
                                               size_t errlen);

/* ------------------------------------------------------------ /config/topics/<t> */

/*
 * A topic's configs (ConfigEntityZNode):
 *   {"version":1,"config":{"min.insync.replicas":"2","cleanup.policy":"compact"}}
 * every value a string. No data (a znode created empty) and a document
 * without "config" are no configs, as for Kafka. The configs read must pass
 * br_meta_configs_check (metadata.h), the store's own rule; they come in
 * the document's order. Free with br_zk_configs_free.
 */
KP_MUST_CHECK int br_zk_topic_config_encode(const struct br_meta_config *configs, size_t n,
                                            char **out, size_t *out_len);
KP_MUST_CHECK int br_zk_topic_config_decode(const char *buf, size_t len, const char *name,
                                            struct br_meta_config **configs, size_t *n, char *err,
                                            size_t errlen);
void br_zk_configs_free(struct br_meta_config *configs, size_t n);

/* ------------------------------------------------------------ /config/changes/config_change_<seq>
 */

/*
 * A config change notification. Written as version 2
 * (ConfigEntityChangeNotificationSequenceZNode):
 *   {"version":2,"entity_path":"topics/my-topic"}
 * read as version 2 or 1 ({"version":1,"entity_type":"topics",
 * "entity_name":"my-topic"}), as kafka/server/DynamicConfigManager.scala
 * does: version 1 names topics or clients, version 2 topics, clients, users
 * or brokers, the name being the rest of entity_path after its first '/'
 * (for users it may hold "/clients/<id>"). Kafka ignores a notification
 * that is not JSON (it may come from the old TopicConfigManager): a caller
 * does the same with KP_E_CORRUPT.
 */
struct br_zk_config_change {
    int32_t version;                             /* as read; the encoder writes 2 */
    char entity_type[16];                        /* "topics", "clients", "users", "brokers" */
    char entity_name[BR_ZK_ENTITY_NAME_MAX + 1]; /* non-empty, no control bytes */
};

KP_MUST_CHECK int br_zk_config_change_encode(const char *entity_type, const char *entity_name,
                                             char **out, size_t *out_len);
KP_MUST_CHECK int br_zk_config_change_decode(const char *buf, size_t len, const char *name,
                                             struct br_zk_config_change *out, char *err,
                                             size_t errlen);

/* ------------------------------------------------------------
 * /isr_change_notification/isr_change_<seq> */

struct br_zk_topic_partition {
    char topic[BR_TOPIC_NAME_MAX + 1]; /* a valid topic name */
    int32_t partition;                 /* >= 0 */
};

/*
 * The partitions whose ISR a leader changed (IsrChangeNotificationSequenceZNode):
 *   {"version":1,"partitions":[{"topic":"t","partition":0},...]}
 * In the document's order, repeats kept (Kafka makes a set of them); at
 * most BR_ZK_MAX_NOTIFIED. *tps is owned by the caller (kp_free); NULL when
 * there are none.
 */
KP_MUST_CHECK int br_zk_isr_change_encode(const struct br_zk_topic_partition *tps, size_t n,
                                          char **out, size_t *out_len);
KP_MUST_CHECK int br_zk_isr_change_decode(const char *buf, size_t len, const char *name,
                                          struct br_zk_topic_partition **tps, size_t *n, char *err,
                                          size_t errlen);

/* ------------------------------------------------------------ /admin/reassign_partitions */

/* The replicas a partition may be moved to (more are refused: a move's
 * entry stays small, where a topic's assignment may name up to
 * BR_META_MAX_REPLICATION_FACTOR). */
#define BR_ZK_REASSIGN_MAX_REPLICAS 64

/* One partition to move and the replicas it moves to, the first its
 * preferred leader. */
struct br_zk_reassignment {
    struct br_zk_topic_partition tp;
    int32_t replicas[BR_ZK_REASSIGN_MAX_REPLICAS];
    size_t nreplicas; /* 1..BR_ZK_REASSIGN_MAX_REPLICAS, distinct ids >= 0 */
};

/*
 * The partition moves asked for (ReassignPartitionsZNode, written by
 * kafka-reassign-partitions.sh and `samsa reassign execute`):
 *   {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]},...]}
 * Other keys of an entry ("log_dirs") are ignored, as Kafka 2.0's
 * controller ignores them. At most BR_ZK_MAX_NOTIFIED entries, in the
 * document's order (a partition listed twice: the controller takes the
 * first). *out owned by the caller (kp_free); NULL when
 * there are none.
 */
KP_MUST_CHECK int br_zk_reassignment_encode(const struct br_zk_reassignment *r, size_t n,
                                            char **out, size_t *out_len);
KP_MUST_CHECK int br_zk_reassignment_decode(const char *buf, size_t len, const char *name,
                                            struct br_zk_reassignment **out, size_t *n, char *err,
                                            size_t errlen);

/* ------------------------------------------------------------ /cluster/id */

/* ClusterIdZNode: {"version":"1","id":"<22 characters of base64url>"}, the
 * version a JSON string. Kafka reads "id" alone: 1..BR_ZK_CLUSTER_ID_MAX
 * bytes without control bytes are accepted. */
KP_MUST_CHECK int br_zk_cluster_id_encode(const char *id, char **out, size_t *out_len);
KP_MUST_CHECK int br_zk_cluster_id_decode(const char *buf, size_t len, const char *name,
                                          char id[BR_ZK_CLUSTER_ID_MAX + 1], char *err,
                                          size_t errlen);

/* ------------------------------------------------------------ /latest_producer_id_block */

/*
 * The last block of producer ids a transaction coordinator claimed
 * (kafka/coordinator/transaction/ProducerIdManager.scala, version 1):
 *   {"version":1,"broker":3,"block_start":"1000","block_end":"1999"}
 * the ends as JSON strings, inclusive. Kafka creates the znode empty at
 * start-up: no data means no block yet, for the caller to see before it
 * decodes (an empty document does not decode, as for Kafka).
 */
struct br_zk_producer_id_block {
    int32_t broker_id;   /* >= 0 */
    int64_t block_start; /* >= 0 */
    int64_t block_end;   /* >= block_start */
};

KP_MUST_CHECK int br_zk_producer_id_block_encode(const struct br_zk_producer_id_block *b,
                                                 char **out, size_t *out_len);
KP_MUST_CHECK int br_zk_producer_id_block_decode(const char *buf, size_t len, const char *name,
                                                 struct br_zk_producer_id_block *out, char *err,
                                                 size_t errlen);

/* ------------------------------------------------------------ sequential znodes */

/*
 * The sequence number ZooKeeper appended to a sequential znode's name:
 * `name` is prefix followed by ZooKeeper's 10 digits ("isr_change_0000000042"
 * with prefix "isr_change_" gives 42). Returns 0, or KP_E_CORRUPT when the
 * name is not prefix + exactly 10 digits.
 */
KP_MUST_CHECK int br_zk_sequence_number(const char *name, const char *prefix, int64_t *seq);

/* ------------------------------------------------------------
 * ACLs: /kafka-acl/<type>/<name>, /kafka-acl-extended/prefixed/<type>/<name>
 * (Acl.toJsonCompatibleMap: {"version":1,"acls":[{"principal":"User:alice",
 * "permissionType":"Allow","operation":"Read","host":"*"}]}, names read
 * case-insensitively), and their change notifications: "Topic:orders" in
 * /kafka-acl-changes/acl_changes_<seq>, {"version":1,"resourceType":"Topic",
 * "name":"orders","patternType":"PREFIXED"} in /kafka-acl-extended-changes
 * (ZkData.scala 452-660). */

#define BR_ZK_ACLS_MAX 10000    /* entries of one resource pattern */
#define BR_ZK_ACL_TEXT_MAX 1024 /* a principal, host or resource name */

/* The entries (owned: br_zk_acls_free) of one resource pattern's znode. */
KP_MUST_CHECK int br_zk_acls_decode(const char *buf, size_t len, const char *name,
                                    struct br_acl **out, size_t *n, char *err, size_t errlen);
void br_zk_acls_free(struct br_acl *acls, size_t n);
KP_MUST_CHECK int br_zk_acls_encode(const struct br_acl *acls, size_t n, char **out,
                                    size_t *out_len);

struct br_zk_acl_change {
    int8_t type;    /* enum br_acl_rtype */
    int8_t pattern; /* LITERAL (the literal notification's) or PREFIXED */
    char name[BR_ZK_ACL_TEXT_MAX + 1];
};
/* A notification's data: extended false for /kafka-acl-changes' text. */
KP_MUST_CHECK int br_zk_acl_change_decode(const char *buf, size_t len, bool extended,
                                          const char *name, struct br_zk_acl_change *out,
                                          char *err, size_t errlen);
/* The notification of a change to c's pattern: its folder
 * (/kafka-acl-extended-changes for a PREFIXED one, /kafka-acl-changes
 * otherwise) and its data ("Topic:orders", or the JSON document with the
 * name escaped as JSON), *out owned by the caller (kp_free). */
KP_MUST_CHECK int br_zk_acl_change_encode(const struct br_zk_acl_change *c, const char **folder,
                                          char **out, size_t *out_len);
/* The znode of a resource pattern's ACLs into buf; false when the name
 * cannot be one (empty, or with a '/': Kafka 2.0 puts names in paths as
 * they are) or buf is short. */
bool br_zk_acl_path(int8_t pattern, int8_t type, const char *name, char *buf, size_t len);

#endif
