/*
 * samsa-broker: topics created and deleted, and their configs stored, away
 * from the reactor.
 *
 * Making a partition takes about six fsyncs (its directory, segment and
 * index files, the leader-epoch-checkpoint) and every topic rewrites the
 * metadata file atomically: thousands of partitions are seconds of disk
 * work, which the reactor must not wait for. So a creation goes
 *
 *   reactor   CreateTopics, auto-creation (Metadata) or the group
 *             coordinator (__consumer_offsets) validates the topic
 *             (br_broker_create_topic) and reserves its name: a second
 *             creation of the name gets TOPIC_ALREADY_EXISTS, Metadata
 *             naming it answers LEADER_NOT_AVAILABLE without partitions
 *             (what Kafka answers while a topic's leaders are being
 *             elected), all-topics Metadata leaves it out. Each partition
 *             is placed in the log dir with the fewest partitions.
 *   worker    the metadata store keeps the topic (metadata_async.h): from
 *             here a restart loads it;
 *   worker    its logs are made: each partition directory with its first
 *             segment and indexes, fsync'ed, then the log dirs; the opened
 *             logs travel back in the job (outside any file budget);
 *   reactor   the topic is installed with those logs (no file is touched;
 *             they join the budget of open segment files) and exists; the
 *             parked requests waiting for it are answered. Leader epoch 0
 *             is recorded by each partition's first append.
 *
 * The store is written first, so a crash mid-creation leaves either no
 * topic (no directory of it was made yet) or a stored topic whose missing
 * or half-made partition directories the next start completes (br_log_open
 * creates a missing directory, rebuilds a missing index): never a partition directory the store
 * does not list. A directory of the topic's name that already exists is never adopted: the creation
 * fails with KAFKA_STORAGE_ERROR naming it. When making the logs fails, what was made is removed,
 * then the topic leaves the store again.
 *
 * A deletion goes, in Kafka's order (LogManager.asyncDelete): reactor
 * (checks; the name is reserved; each partition directory renamed to its
 * delete name, br_log_delete_dir_name, the open logs following it),
 * worker (the log dirs fsync'ed), worker (the store forgets the topic),
 * reactor (the topic is taken out, its logs closed, parked fetches
 * answered), worker (the directories removed), reactor (answer). A rename,
 * fsync or store write that fails moves the directories back and answers
 * KAFKA_STORAGE_ERROR: the topic stays whole. DeleteTopics answers success
 * only once the directories are gone. A crash before the store's write
 * leaves the stored topic with delete-named directories, which the next
 * start removes (the partitions start empty); after it, only delete-named
 * directories, removed too: never a partition directory the store does not
 * list.
 *
 * CreateTopics and DeleteTopics (Kafka 2.0's AdminManager.createTopics and
 * deleteTopics, DelayedCreatePartitions, DelayedDeleteTopics): with
 * timeout_ms <= 0 the answer comes at once, REQUEST_TIMED_OUT for each
 * topic whose creation or deletion started (it goes on); else the request
 * parks until each of its topics is done (its outcome) or timeout_ms passes
 * (REQUEST_TIMED_OUT for those not done; they go on). A connection that
 * closes while its request is parked only drops the answer. Stopping the
 * broker answers parked requests REQUEST_TIMED_OUT and finishes every
 * creation and deletion in flight before anything is flushed.
 *
 * Work on the worker runs in submission order, so a deletion's directories
 * are gone before a later creation of the same name makes new ones.
 *
 * @locality reactor thread (the jobs: the worker thread, see worker.h).
 */
#ifndef SAMSA_BROKER_TOPIC_ADMIN_H
#define SAMSA_BROKER_TOPIC_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>
#include <samsa-protocol/messages.h>

#include "base/mailbox.h"
#include "server/state.h"

struct br_req;

/* Starts the I/O worker (inline for an in-process broker) and the
 * asynchronous metadata store over b->meta. Needs b->mailbox registered.
 * Returns 0, KP_E_NOMEM or KP_ERR_KAFKA_STORAGE_ERROR. */
KP_MUST_CHECK int br_topic_admin_start(struct br_server *b);

/* Answers parked requests (REQUEST_TIMED_OUT), finishes every creation and
 * deletion in flight (their topics installed or gone), stops the worker
 * and frees it all. Safe when never started. */
void br_topic_admin_stop(struct br_server *b);

/* The name is being created or deleted. */
bool br_topic_admin_reserved(struct br_server *b, struct kp_str name);
/* The name is being created (not yet a topic). */
bool br_topic_admin_creating(struct br_server *b, struct kp_str name);
/* Some creation or deletion is in flight. */
bool br_topic_admin_busy(const struct br_server *b);

/* Starts creating topic m (validated, with tc its config; copied): the
 * name is reserved until it ends. Returns 0, or KAFKA_STORAGE_ERROR /
 * a code of br_topic_meta_check with err set. */
KP_MUST_CHECK int br_topic_admin_create(struct br_server *b, const struct br_topic_meta *m,
                                        const struct br_topic_config *tc, char *err, size_t errlen);

/* Starts adding partitions [t->npartitions, partitions) to topic t
 * (checked by the caller: more partitions than it has, within
 * BR_MAX_PARTITIONS, replicas valid): the store keeps the new count first,
 * then the new logs are made on the worker, then the topic takes them on
 * the reactor (br_broker_topic_grow), as a creation goes. replicas holds
 * rf broker ids for each new partition, or NULL (this broker). The name is
 * reserved until it ends: a crash after the store's write leaves the new
 * count, whose directories the next start makes. Returns 0, or
 * KAFKA_STORAGE_ERROR with err set. */
KP_MUST_CHECK int br_topic_admin_add_partitions(struct br_server *b, const struct br_topic *t,
                                                int32_t partitions, const int32_t *replicas,
                                                char *err, size_t errlen);
/* Partitions are being added to the topic. */
bool br_topic_admin_adding(struct br_server *b, struct kp_str name);

/* Starts deleting topic t (a deletion of it in flight is joined). Returns
 * 0, KAFKA_STORAGE_ERROR (out of memory) or REASSIGNMENT_IN_PROGRESS
 * (partitions are being added to it). */
KP_MUST_CHECK int br_topic_admin_delete(struct br_server *b, struct br_topic *t);

/* Answers a CreateTopics (DeleteTopics, CreatePartitions) request whose response the handler
 * filled: each topic with error NONE whose creation (deletion) is in
 * flight is waited for, as the header says. Returns what br_respond
 * returns, or KP_E_NOMEM. */
int br_topic_admin_answer_create(struct br_req *r, struct kp_CreateTopicsResponse *resp,
                                 int32_t timeout_ms, bool validate_only);
int br_topic_admin_answer_delete(struct br_req *r, struct kp_DeleteTopicsResponse *resp,
                                 int32_t timeout_ms);
int br_topic_admin_answer_partitions(struct br_req *r, struct kp_CreatePartitionsResponse *resp,
                                     int32_t timeout_ms, bool validate_only);

/*
 * Topic configs (AlterConfigs, IncrementalAlterConfigs; Kafka 2.0's
 * AdminManager.alterConfigs writes them to ZooKeeper, and they are in
 * effect from then on): the handler validates each resource on the reactor,
 * then br_topic_admin_set_configs sends the new set to the store, one store
 * request per topic (each resource is changed all or nothing on its own, as
 * in Kafka, and a failed write fails only its own resource), and the
 * request parks until every one is written: only then does
 * the topic take its new configs, in memory and in its logs, and the
 * answer go out, in the request's order. No timeout comes with these
 * requests: the answer waits at most BR_ALTER_CONFIGS_WAIT_MS, then says
 * REQUEST_TIMED_OUT for the stores not done (they go on, and take effect
 * when written). A connection that closes meanwhile only drops the answer;
 * stopping the broker answers REQUEST_TIMED_OUT and finishes the stores.
 */

/* Under the 30 s request timeout of kafka-python's admin client and of
 * kafkajs, so that they read an answer rather than time out themselves. */
#define BR_ALTER_CONFIGS_WAIT_MS 20000

/* The topic configs stored last for the topic and not yet written (the
 * newest store in flight), or NULL: an incremental change builds on them,
 * so that two in flight do not undo each other. */
const struct br_topic_config *br_topic_admin_configs_pending(struct br_server *b, const char *name);

/* Starts storing tc (validated) as the configs of topic t; *op names the
 * store for br_topic_admin_answer_configs. incremental and changes are for
 * the log line once it is written. Returns 0, or KAFKA_STORAGE_ERROR with
 * err set (out of memory, the broker stopping). */
KP_MUST_CHECK int br_topic_admin_set_configs(struct br_server *b, const struct br_topic *t,
                                             const struct br_topic_config *tc, bool incremental,
                                             size_t changes, uint64_t *op, char *err,
                                             size_t errlen);

/* One resource of an AlterConfigs or IncrementalAlterConfigs answer. */
struct br_config_result {
    int8_t type;
    struct kp_str name;
    int16_t code;
    struct kp_str message; /* KP_STR_NULL: none */
    uint64_t op;           /* the store it waits for (code NONE), or 0 */
};

/* Answers r (AlterConfigs or IncrementalAlterConfigs) with res[0..n), now
 * when no store is waited for, else once they are written (copied: res
 * may go with the request). Returns what br_respond returns, or
 * KP_E_NOMEM. */
int br_topic_admin_answer_configs(struct br_req *r, struct br_config_result *res, size_t n);

/* The broker stops: every parked request answered now. */
void br_topic_admin_complete_all_parked(struct br_server *b);

/* The worker of a standalone broker's topic administration (its jobs run
 * in submission order); other small files of the broker are written on it
 * too (the ACL file, acl_handlers.c). */
struct br_worker *br_topic_admin_worker(struct br_server *b);

#endif
