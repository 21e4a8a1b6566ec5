/*
 * samsa-broker: the cluster metadata store (topics, their replica
 * assignments and their configs), behind one small interface with two back
 * ends (ARCHITECTURE.md): ZooKeeper with Kafka 2.0's znode layout, and a
 * local file for a broker run standalone (and for unit tests of the
 * controller logic).
 *
 *   struct br_meta meta;
 *   if (br_meta_file_open(path, &meta, err, sizeof err) != 0) ...
 *   rc = br_meta_load(&meta, &topics, &n, err, sizeof err);
 *   rc = br_meta_create_topic(&meta, &topic, err, sizeof err);
 *   br_meta_close(&meta);
 *
 * The store keeps what Kafka keeps in /brokers/topics/<t> (the assignment)
 * and /config/topics/<t> (the configs set on the topic, as text). It does not
 * interpret config keys: the broker validates them (topic_config.h) before it
 * stores them. Leader, ISR and epochs are partition state, not here.
 *
 * Every operation returns 0 or an error code that a CreateTopics,
 * DeleteTopics or AlterConfigs response can carry as it is:
 *   KP_ERR_INVALID_TOPIC_EXCEPTION    bad topic name, or one that collides
 *   KP_ERR_TOPIC_ALREADY_EXISTS
 *   KP_ERR_UNKNOWN_TOPIC_OR_PARTITION
 *   KP_ERR_INVALID_PARTITIONS, KP_ERR_INVALID_REPLICATION_FACTOR,
 *   KP_ERR_INVALID_REPLICA_ASSIGNMENT, KP_ERR_INVALID_CONFIG
 *   KP_ERR_POLICY_VIOLATION           past BR_META_MAX_TOPICS topics
 *   KP_ERR_KAFKA_STORAGE_ERROR        the store could not be read or written
 *   KP_E_CORRUPT                      the stored data is malformed
 *   KP_E_NOMEM
 * with a sentence in err. A failed change leaves the store as it was.
 *
 * @locality one thread at a time per br_meta (the file back end does
 * blocking I/O and fsync: keep it off the data path).
 */
#ifndef SAMSA_BROKER_METADATA_H
#define SAMSA_BROKER_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "base/names.h"

/* Kafka's limit on a topic name's length. */
#define BR_TOPIC_NAME_MAX 249
/* Ceilings of what the store accepts and reads back. */
#define BR_META_MAX_PARTITIONS 100000
#define BR_META_MAX_REPLICATION_FACTOR 1024
#define BR_META_MAX_REPLICAS ((int64_t)1 << 22) /* partitions x rf, one topic */
#define BR_META_MAX_CONFIGS 256                 /* configs set on one topic */
#define BR_META_MAX_CONFIG_KEY 255
#define BR_META_MAX_CONFIG_VALUE 4096
#define BR_META_MAX_TOPICS 100000

/* Topic names follow Kafka's rule: br_topic_name_valid (base/names.h). */

/*
 * Kafka's collision rule: '.' and '_' may clash in metric names, so two
 * different topics whose names differ only by them cannot both exist.
 * True when a and b are different names that are equal with '.' as '_'.
 */
bool br_topic_names_collide(const char *a, const char *b);

/* One config set on a topic; both strings owned by the topic. */
struct br_meta_config {
    char *key;
    char *value;
};

struct br_topic_meta {
    char name[BR_TOPIC_NAME_MAX + 1];
    int32_t partitions;
    int16_t replication_factor;
    /* partitions x replication_factor broker ids, partition-major: the
     * replicas of partition p are replicas[p * rf .. p * rf + rf), the first
     * of them the preferred leader. Owned. */
    int32_t *replicas;
    struct br_meta_config *configs; /* only the keys set on the topic; owned */
    size_t n_configs;
};

/* Frees what t owns and zeroes it; safe on a zeroed topic. */
void br_topic_meta_clear(struct br_topic_meta *t);

/* Frees an array of n topics (each cleared) and the array; NULL is fine. */
void br_topic_metas_free(struct br_topic_meta *topics, size_t n);

/* Deep copy; on failure dst is zeroed. Returns 0 or KP_E_NOMEM. */
KP_MUST_CHECK int br_topic_meta_copy(struct br_topic_meta *dst, const struct br_topic_meta *src);

/* The value of config `key` set on the topic, or NULL. */
const char *br_topic_meta_config(const struct br_topic_meta *t, const char *key);

/*
 * Checks a topic before it is stored: a valid name, 1..BR_META_MAX_PARTITIONS
 * partitions, 1..BR_META_MAX_REPLICATION_FACTOR replicas each, non-negative
 * broker ids without repeats within a partition, at most BR_META_MAX_CONFIGS
 * configs with distinct non-empty keys of printable ASCII and values without
 * NUL, within the size ceilings. Returns 0 or one of the codes above.
 */
KP_MUST_CHECK int br_topic_meta_check(const struct br_topic_meta *t, char *err, size_t errlen);

/* Checks a set of configs alone (see br_topic_meta_check). */
KP_MUST_CHECK int br_meta_configs_check(const struct br_meta_config *configs, size_t n, char *err,
                                        size_t errlen);

struct br_meta;

/* A back end. Each operation has the contract of its wrapper below. */
struct br_meta_ops {
    const char *name; /* "file", "zookeeper" */
    int (*load)(struct br_meta *m, struct br_topic_meta **topics, size_t *n_topics, char *err,
                size_t errlen);
    int (*create_topic)(struct br_meta *m, const struct br_topic_meta *topic, char *err,
                        size_t errlen);
    int (*delete_topic)(struct br_meta *m, const char *name, char *err, size_t errlen);
    int (*set_topic_configs)(struct br_meta *m, const char *name,
                             const struct br_meta_config *configs, size_t n_configs, char *err,
                             size_t errlen);
    int (*set_partitions)(struct br_meta *m, const char *name, int32_t partitions,
                          const int32_t *replicas, char *err, size_t errlen);
    void (*close)(struct br_meta *m);
};

/* An open store: its back end and that back end's state. */
struct br_meta {
    const struct br_meta_ops *ops;
    void *impl;
};

/*
 * Every topic, in a stable order. The caller owns *topics (free with
 * br_topic_metas_free); *topics is NULL when there are none.
 */
KP_MUST_CHECK static inline int br_meta_load(struct br_meta *m, struct br_topic_meta **topics,
                                             size_t *n_topics, char *err, size_t errlen)
{
    return m->ops->load(m, topics, n_topics, err, errlen);
}

/* Stores a new topic (checked with br_topic_meta_check; the name must be new
 * and must not collide). The store copies what it keeps. */
KP_MUST_CHECK static inline int
br_meta_create_topic(struct br_meta *m, const struct br_topic_meta *topic, char *err, size_t errlen)
{
    return m->ops->create_topic(m, topic, err, errlen);
}

/* Removes a topic and its configs. */
KP_MUST_CHECK static inline int br_meta_delete_topic(struct br_meta *m, const char *name, char *err,
                                                     size_t errlen)
{
    return m->ops->delete_topic(m, name, err, errlen);
}

/* Replaces the whole set of configs of a topic (n_configs may be 0). */
KP_MUST_CHECK static inline int br_meta_set_topic_configs(struct br_meta *m, const char *name,
                                                          const struct br_meta_config *configs,
                                                          size_t n_configs, char *err,
                                                          size_t errlen)
{
    return m->ops->set_topic_configs(m, name, configs, n_configs, err, errlen);
}

/*
 * Sets a topic's number of partitions (CreatePartitions, and its undo):
 * replicas holds partitions x the topic's replication factor broker ids,
 * partition-major; only those of the partitions added are read (the
 * partitions the topic keeps keep their stored replicas: none is moved
 * here). The topic as it would be is checked as br_topic_meta_check checks
 * one; its configs stay.
 */
KP_MUST_CHECK static inline int br_meta_set_partitions(struct br_meta *m, const char *name,
                                                       int32_t partitions, const int32_t *replicas,
                                                       char *err, size_t errlen)
{
    return m->ops->set_partitions(m, name, partitions, replicas, err, errlen);
}
/* Releases the store; a no-op on a zeroed or already closed br_meta. */
static inline void br_meta_close(struct br_meta *m)
{
    if (m != NULL && m->ops != NULL) {
        m->ops->close(m);
        m->ops = NULL;
        m->impl = NULL;
    }
}

/* ------------------------------------------------------- the file back end */

/* The file's name in the first log directory. */
#define BR_META_FILE_NAME "samsa-metadata"
/* Ceilings of the file and of one of its lines. */
#define BR_META_FILE_MAX_BYTES ((size_t)64 * 1024 * 1024)
#define BR_META_FILE_MAX_LINE ((size_t)64 * 1024)

/*
 * Opens the store kept in the file at `path`, creating it (empty) when it
 * does not exist; the directory must exist. The file is read whole and
 * checked at open; every change rewrites it atomically: a temporary
 * `<path>.tmp` written, fdatasync'ed and renamed over the file, then the
 * directory fsync'ed, so a crash leaves the old file or the new one. A
 * `<path>.tmp` left by a crash is overwritten. Returns 0,
 * KP_ERR_KAFKA_STORAGE_ERROR, KP_E_CORRUPT (err: "path:line: what [the
 * detection site]"),
 * KP_E_TOO_LARGE (above BR_META_FILE_MAX_BYTES) or KP_E_NOMEM; on failure
 * *out is zeroed.
 *
 * The format, version 1 (text, one record a line, '\n' only):
 *
 *   samsa-metadata 1
 *   # comment lines and blank lines are skipped
 *   topic <name> <partitions> <replication factor>
 *   config <key>=<value>                  (0 or more, keys distinct)
 *   partition <p> <id>,<id>,...           (p = 0, 1, ... in order; rf ids)
 *   ...more topics...
 *   end <number of topics>
 *
 * Names, keys and values are percent-encoded: every byte outside
 * [A-Za-z0-9._-] is written %XX, so nothing can break a line or a field.
 * Numbers are canonical decimal (no sign, no leading zero).
 */
KP_MUST_CHECK int br_meta_file_open(const char *path, struct br_meta *out, char *err,
                                    size_t errlen);

/*
 * The file format on bytes in memory (used by the back end, the fuzz harness
 * and tests). Parsing treats buf[0..len) as hostile; `name` is what messages
 * call it. The caller owns *topics (br_topic_metas_free). Returns 0,
 * KP_E_CORRUPT, KP_E_TOO_LARGE or KP_E_NOMEM.
 */
KP_MUST_CHECK int br_meta_file_parse(const char *buf, size_t len, const char *name,
                                     struct br_topic_meta **topics, size_t *n_topics, char *err,
                                     size_t errlen);

/* Renders topics in the file format: *out holds *out_len bytes of text and
 * a NUL after them; the caller frees it with kp_free. Returns 0,
 * KP_E_TOO_LARGE, KP_E_NOMEM, or KP_E_INVALID_ARG for a topic whose arrays
 * are missing. */
KP_MUST_CHECK int br_meta_file_format(const struct br_topic_meta *topics, size_t n_topics,
                                      char **out, size_t *out_len);

#endif
