/*
 * samsa-broker: the metadata store, asynchronous (metadata.h is the store
 * itself, synchronous, with its back ends).
 *
 * The reactor asks and the answer comes back later on the reactor: a
 * request is submitted (br_meta_async_submit), the store does it away from
 * the reactor thread, and the completed request is posted through the
 * mailbox as a BR_MAIL_META message carrying its outcome. The file back end
 * does the work on the I/O worker (worker.h), where the rewrite of the
 * metadata file and its fsyncs happen; a ZooKeeper back end will issue the
 * znode operations and post the request from the ZooKeeper client's
 * completion thread, behind the same calls.
 *
 *   rq = br_meta_request_new(BR_META_OP_CREATE_TOPIC, &topic)   (a copy)
 *   rq->tag = my_id;
 *   br_meta_async_submit(ma, rq);                    ownership passes
 *   ... BR_MAIL_META: rq->rc, rq->err ...            reactor owns rq again
 *   br_meta_request_free(rq);
 *
 * Requests complete in the order they were submitted. While one is away
 * the store belongs to it: nothing on the reactor thread writes the store.
 *
 * @locality reactor thread, except the store operations themselves (the
 * worker thread, under the store's lock).
 */
#ifndef SAMSA_BROKER_METADATA_ASYNC_H
#define SAMSA_BROKER_METADATA_ASYNC_H

#include <stdint.h>

#include <samsa-protocol/err.h>

#include "cluster/metadata.h"
#include "base/worker.h"

enum br_meta_op {
    BR_META_OP_CREATE_TOPIC = 1,  /* br_meta_create_topic(topic) */
    BR_META_OP_DELETE_TOPIC,      /* br_meta_delete_topic(topic.name) */
    BR_META_OP_SET_PARTITIONS,    /* br_meta_set_partitions(topic.name, .partitions, .replicas) */
    BR_META_OP_SET_TOPIC_CONFIGS, /* br_meta_set_topic_configs(topic.name, .configs, .n_configs) */
};

struct br_meta_request {
    struct br_job job; /* first: travels as a job, comes back as BR_MAIL_META */
    struct br_meta_async *ma;
    enum br_meta_op op;
    struct br_topic_meta topic; /* owned: the whole topic, or only its name */
    uint64_t tag;               /* the requester's, untouched */
    int rc;                     /* the outcome: 0 or a code of metadata.h */
    char err[256];              /* why, when rc != 0 */
};

/* A request carrying a deep copy of topic (DELETE: only its name is read).
 * Returns 0 or KP_E_NOMEM; *out owned by the caller until submitted. */
KP_MUST_CHECK int br_meta_request_new(enum br_meta_op op, const struct br_topic_meta *topic,
                                      struct br_meta_request **out);

/* Frees what the request owns and the request. NULL is a no-op. */
void br_meta_request_free(struct br_meta_request *rq);

struct br_meta_async;

/* The store `store` (open, loaded; it must outlive the result) served
 * through worker w. Returns 0, KP_E_NOMEM or KP_ERR_KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_meta_async_open(struct br_meta *store, struct br_worker *w,
                                     struct br_meta_async **out);

/* Sends the request on its way; it comes back through the mailbox. */
void br_meta_async_submit(struct br_meta_async *ma, struct br_meta_request *rq);

/* Frees it; no request may be away (the worker ran them all). NULL is a
 * no-op. The store stays open. */
void br_meta_async_close(struct br_meta_async *ma);

#endif
