/*
 * samsa-broker: Kafka 2.0's AdminManager behind one interface: what
 * CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs,
 * IncrementalAlterConfigs and InitProducerId do to the cluster's metadata.
 * The request handlers know only this; which manager serves is chosen once,
 * where the mode is (broker.c):
 *
 * - br_admin_standalone: a cluster of one writes its metadata file and
 *   makes and removes the logs itself, off the reactor (topic_admin.c,
 *   handlers_admin.c, producer_ids.c);
 * - br_admin_zookeeper: a broker of a cluster writes ZooKeeper with Kafka's
 *   layout and waits for the controller (cluster_admin.c, cluster_topics.c,
 *   cluster_configs.c, cluster_producer_ids.c, cluster_wait.c).
 *
 * Both check a new topic alike (br_broker_create_topic) and validate
 * configs alike (br_config_apply_changes). One manager over the metadata
 * store's two back ends (cluster/metadata.h, a ZooKeeper one beside the
 * file) is the step after this one.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SERVER_ADMIN_MANAGER_H
#define SAMSA_BROKER_SERVER_ADMIN_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/request.h"

struct br_admin_manager_ops {
    const char *name;
    /* CreateTopics: begin gives the request's waiter (NULL when nothing
     * waits) or KP_E_NOMEM; create makes (or starts making) one topic that
     * br_broker_create_topic checked, with tc its configs and manual the
     * request's replica assignment or NULL; answer answers or parks resp
     * (its arrays in r's arena) until what was started is done or timeout_ms
     * passed, freeing the waiter. */
    int (*create_begin)(struct br_server *b, struct br_cluster_create **waiter);
    int (*create)(struct br_server *b, struct br_topic_meta *m, const struct br_topic_config *tc,
                  const int32_t *manual, char *err, size_t errlen);
    int (*create_answer)(struct br_req *r, struct br_cluster_create *waiter,
                         struct kp_CreateTopicsResponse *resp, int32_t timeout_ms,
                         bool validate_only);
    /* Whole requests: each answers or parks r, returning what br_respond
     * returns. */
    int (*delete_topics)(struct br_req *r);
    int (*create_partitions)(struct br_req *r);
    int (*alter_configs)(struct br_req *r, bool incremental);
    int (*init_producer_id)(struct br_req *r); /* a request without a transactional id */
};

extern const struct br_admin_manager_ops br_admin_standalone;
extern const struct br_admin_manager_ops br_admin_zookeeper;

/* ------------------------------------------- the standalone manager's parts */

KP_MUST_CHECK int br_standalone_create_topic(struct br_server *b, struct br_topic_meta *m,
                                             const struct br_topic_config *tc, char *err,
                                             size_t errlen);
KP_MUST_CHECK int br_standalone_delete_topics(struct br_req *r);
KP_MUST_CHECK int br_standalone_create_partitions(struct br_req *r);
KP_MUST_CHECK int br_standalone_alter_configs(struct br_req *r, bool incremental);
KP_MUST_CHECK int br_standalone_init_producer_id(struct br_req *r);

#endif
