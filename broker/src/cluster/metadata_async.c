/* samsa-broker: the asynchronous metadata store (see metadata_async.h). */
#define _GNU_SOURCE

#include "cluster/metadata_async.h"

#include <samsa-protocol/alloc.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct br_meta_async {
    struct br_meta *store; /* used under mu only, once requests flow */
    struct br_worker *worker;
    pthread_mutex_t mu;
};

/* The worker thread: the store operation, under the store's lock. */
static void request_run(struct br_job *job)
{
    struct br_meta_request *rq = (struct br_meta_request *)(void *)job;
    struct br_meta_async *ma = rq->ma;
    rq->err[0] = '\0';
    (void)pthread_mutex_lock(&ma->mu);
    switch (rq->op) {
    case BR_META_OP_CREATE_TOPIC:
        rq->rc = br_meta_create_topic(ma->store, &rq->topic, rq->err, sizeof rq->err);
        break;
    case BR_META_OP_DELETE_TOPIC:
        rq->rc = br_meta_delete_topic(ma->store, rq->topic.name, rq->err, sizeof rq->err);
        break;
    case BR_META_OP_SET_PARTITIONS:
        rq->rc = br_meta_set_partitions(ma->store, rq->topic.name, rq->topic.partitions,
                                        rq->topic.replicas, rq->err, sizeof rq->err);
        break;
    case BR_META_OP_SET_TOPIC_CONFIGS:
        rq->rc = br_meta_set_topic_configs(ma->store, rq->topic.name, rq->topic.configs,
                                           rq->topic.n_configs, rq->err, sizeof rq->err);
        break;
    default:
        rq->rc = KP_E_INVALID_ARG;
        (void)snprintf(rq->err, sizeof rq->err, "unknown metadata operation %d", (int)rq->op);
        break;
    }
    (void)pthread_mutex_unlock(&ma->mu);
}

static const struct br_job_ops request_ops = {"metadata", request_run};

int br_meta_request_new(enum br_meta_op op, const struct br_topic_meta *topic,
                        struct br_meta_request **out)
{
    *out = NULL;
    struct br_meta_request *rq = kp_calloc(1, sizeof *rq);
    if (rq == NULL) {
        return KP_E_NOMEM;
    }
    rq->op = op;
    int rc = 0;
    if (op == BR_META_OP_CREATE_TOPIC || op == BR_META_OP_SET_PARTITIONS ||
        op == BR_META_OP_SET_TOPIC_CONFIGS) {
        rc = br_topic_meta_copy(&rq->topic, topic);
    } else {
        (void)snprintf(rq->topic.name, sizeof rq->topic.name, "%s", topic->name);
    }
    if (rc != 0) {
        kp_free(rq);
        return rc;
    }
    rq->job.ops = &request_ops;
    *out = rq;
    return 0;
}

void br_meta_request_free(struct br_meta_request *rq)
{
    if (rq == NULL) {
        return;
    }
    br_topic_meta_clear(&rq->topic);
    kp_free(rq);
}

int br_meta_async_open(struct br_meta *store, struct br_worker *w, struct br_meta_async **out)
{
    *out = NULL;
    struct br_meta_async *ma = kp_calloc(1, sizeof *ma);
    if (ma == NULL) {
        return KP_E_NOMEM;
    }
    if (pthread_mutex_init(&ma->mu, NULL) != 0) {
        kp_free(ma);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    ma->store = store;
    ma->worker = w;
    *out = ma;
    return 0;
}

void br_meta_async_submit(struct br_meta_async *ma, struct br_meta_request *rq)
{
    rq->ma = ma;
    br_worker_submit(ma->worker, &rq->job);
}

void br_meta_async_close(struct br_meta_async *ma)
{
    if (ma == NULL) {
        return;
    }
    (void)pthread_mutex_destroy(&ma->mu);
    kp_free(ma);
}
