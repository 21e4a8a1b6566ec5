/* samsa-broker: the two admin managers' tables (admin_manager.h), which
 * only the composition root names. */
#include "server/admin_manager.h"

#include "server/topic_admin.h"

/* ---------------------------------------------------------------- standalone */

static int standalone_create_begin(struct br_server *b, struct br_cluster_create **waiter)
{
    (void)b;
    *waiter = NULL;
    return 0;
}

static int standalone_create(struct br_server *b, struct br_topic_meta *m,
                             const struct br_topic_config *tc, const int32_t *manual, char *err,
                             size_t errlen)
{
    (void)manual; /* every replica is this broker */
    return br_standalone_create_topic(b, m, tc, err, errlen);
}

static int standalone_create_answer(struct br_req *r, struct br_cluster_create *waiter,
                                    struct kp_CreateTopicsResponse *resp, int32_t timeout_ms,
                                    bool validate_only)
{
    (void)waiter;
    /* the topics being made are waited for (timeout_ms), off the reactor */
    return br_topic_admin_answer_create(r, resp, timeout_ms, validate_only);
}

const struct br_admin_manager_ops br_admin_standalone = {
    .name = "standalone",
    .create_begin = standalone_create_begin,
    .create = standalone_create,
    .create_answer = standalone_create_answer,
    .delete_topics = br_standalone_delete_topics,
    .create_partitions = br_standalone_create_partitions,
    .alter_configs = br_standalone_alter_configs,
    .init_producer_id = br_standalone_init_producer_id,
};

/* ---------------------------------------------------------------- ZooKeeper */

static int zk_create_begin(struct br_server *b, struct br_cluster_create **waiter)
{
    *waiter = br_cluster_create_begin(b);
    return *waiter != NULL ? 0 : KP_E_NOMEM;
}

static int zk_create(struct br_server *b, struct br_topic_meta *m, const struct br_topic_config *tc,
                     const int32_t *manual, char *err, size_t errlen)
{
    (void)tc; /* the configs go to /config/topics/<t> as m carries them */
    return br_cluster_create_topic(b, m, manual, err, errlen);
}

static int zk_create_answer(struct br_req *r, struct br_cluster_create *waiter,
                            struct kp_CreateTopicsResponse *resp, int32_t timeout_ms,
                            bool validate_only)
{
    (void)validate_only; /* nothing was begun then */
    /* answered once ZooKeeper took the writes (or refused them: a topic
     * made meanwhile through another broker) and, with a timeout, once the
     * controller's UpdateMetadata named a leader for every partition */
    int rc = waiter != NULL ? br_cluster_park_create(waiter, r, resp, timeout_ms) : 1;
    return rc <= 0 ? rc : br_respond(r, resp);
}

const struct br_admin_manager_ops br_admin_zookeeper = {
    .name = "zookeeper",
    .create_begin = zk_create_begin,
    .create = zk_create,
    .create_answer = zk_create_answer,
    .delete_topics = br_cluster_delete_topics,
    .create_partitions = br_cluster_create_partitions,
    .alter_configs = br_cluster_alter_configs,
    .init_producer_id = br_cluster_init_producer_id,
};
