/* samsa-broker: topics created and deleted away from the reactor (see topic_admin.h). */
#define _GNU_SOURCE

#include "server/topic_admin.h"

#include "server/topic_admin_internal.h"

#include "base/logging.h"
#include "base/worker.h"
#include "cluster/metadata_async.h"
#include "server/admin_manager.h"
#include "server/local_controller.h"
#include "server/request.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void admin_park_cancel(struct br_server *b, void *parked);
/* A topic administration request parked: what its connection's end does to it (request.h) */
static const struct br_park_ops admin_park_ops = {"a topic administration request", admin_park_cancel};

/* ---------------------------------------------------------------- state */

enum op_kind {
    OP_CREATE = 1,
    OP_DELETE,
    OP_ADD, /* partitions added to a topic (CreatePartitions) */
};

/* Where an operation is; each step ends with a message from the worker. */
enum op_step {
    STEP_STORE = 1,   /* the store keeps (CREATE, ADD) or forgets (DELETE) the topic */
    STEP_MAKE_LOGS,   /* CREATE, ADD: its (new) logs are made */
    STEP_UNDO_DIRS,   /* CREATE, ADD failed once stored: the new directories are removed */
    STEP_UNDO_STORE,  /* ... then the store forgets it (ADD: the new partitions) again */
    STEP_SYNC_MOVES,  /* DELETE: its directories, renamed to delete names, made durable */
    STEP_REMOVE_DIRS, /* DELETE: its directories are removed */
};

/* A creation or deletion in flight; its name is reserved meanwhile. */
struct topic_op {
    struct topic_op *next;
    uint64_t id;
    enum op_kind kind;
    enum op_step step;
    struct br_topic_meta meta; /* CREATE: the topic as stored (owned); DELETE: the name;
                                  ADD: name, new count, rf, the new partitions' replicas */
    int32_t first;             /* ADD: the partitions it adds start here (CREATE: 0) */
    struct br_log_config lc;   /* CREATE, ADD: the new logs' settings */
    size_t *dirs;              /* CREATE, ADD: each new partition's log dir, placed there
                                  by br_logm_place ([first, meta.partitions)) */
    int16_t code;              /* the outcome, a wire error code */
    char msg[256];             /* why, when code != 0 */
    int64_t started_ms;        /* monotonic */
};

/* A store of a topic's configs in flight (AlterConfigs,
 * IncrementalAlterConfigs): the configs take effect once it is written. It
 * reserves no name: the topic is served as it was meanwhile. */
struct config_op {
    struct config_op *next;
    uint64_t id; /* from the same counter as topic_op's: parks name either */
    char name[BR_TOPIC_NAME_MAX + 1];
    struct br_topic_config tc; /* the topic's configs once stored */
    bool incremental;
    size_t changes;
};

/* One topic (resource) of a parked CreateTopics, DeleteTopics,
 * CreatePartitions, AlterConfigs or IncrementalAlterConfigs. */
struct admin_result {
    char *name; /* owned */
    char *msg;  /* owned; NULL: none */
    int16_t code;
    int8_t type; /* AlterConfigs: the resource type */
    uint64_t op; /* the operation it waits for; 0 once known */
};

/* A parked CreateTopics or DeleteTopics: its own copy of what the answer
 * needs (the request's frame is gone once the handler returns). */
struct admin_park {
    struct br_park park; /* first: its ops (request.h) */
    struct admin_park *prev;
    struct admin_park *next;
    bool listed; /* on the admin's list (its slot names it) */
    struct br_conn *conn;
    struct br_slot *slot;
    int16_t api;
    int16_t version;
    int32_t corr;
    struct br_timer timer;
    struct admin_result *res;
    size_t n;
    size_t pending; /* results still waiting */
};

struct br_topic_admin {
    struct br_worker *worker;
    struct br_meta_async *meta;
    struct topic_op *ops;      /* in flight */
    struct config_op *configs; /* stores of topic configs in flight, the newest first */
    struct admin_park *parks;  /* parked requests */
    uint64_t next_id;
    bool stopping;
};

/* ---------------------------------------------------------------- jobs */

/* Finished work back on the reactor thread (the mailbox delivers it). */
static void meta_delivered(void *ctx, struct br_mail *m);
static void log_job_delivered(void *ctx, struct br_mail *m);

static struct log_job *log_job_new(const struct topic_op *op, bool make, int32_t n)
{
    struct log_job *j = kp_calloc(1, sizeof *j);
    if (j == NULL) {
        return NULL;
    }
    j->job.ops = &br_topic_admin_log_job_ops;
    j->job.mail.deliver = log_job_delivered;
    j->op = op->id;
    j->make = make;
    j->n = n;
    (void)snprintf(j->name, sizeof j->name, "%s", op->meta.name);
    size_t count = n > 0 ? (size_t)n : 1;
    if (make) {
        j->dirs = kp_calloc(count, sizeof *j->dirs);
        j->logs = kp_calloc(count, sizeof(struct br_log *));
        if (j->dirs == NULL || j->logs == NULL) {
            goto out_free;
        }
    } else {
        j->paths = kp_calloc(count, sizeof *j->paths);
        if (j->paths == NULL) {
            goto out_free;
        }
    }
    return j;

out_free:
    kp_free(j->dirs);
    kp_free(j->logs);
    kp_free(j->paths);
    kp_free(j);
    return NULL;
}

/* Closes the logs the reactor did not take and frees the job. */
static void log_job_free(struct log_job *j)
{
    if (j == NULL) {
        return;
    }
    if (j->logs != NULL) {
        for (int32_t i = 0; i < j->n; i++) {
            br_log_close(j->logs[i]);
        }
    }
    if (j->paths != NULL) {
        for (int32_t i = 0; i < j->n; i++) {
            kp_free(j->paths[i]);
        }
    }
    kp_free(j->dirs);
    kp_free(j->logs);
    kp_free(j->paths);
    kp_free(j);
}

/* ---------------------------------------------------------------- operations */

static struct topic_op *op_by_id(const struct br_topic_admin *a, uint64_t id)
{
    for (struct topic_op *op = a != NULL ? a->ops : NULL; op != NULL; op = op->next) {
        if (op->id == id) {
            return op;
        }
    }
    return NULL;
}

/* kind 0: either */
static struct topic_op *op_by_name(const struct br_topic_admin *a, struct kp_str name, int kind)
{
    for (struct topic_op *op = a != NULL ? a->ops : NULL; op != NULL; op = op->next) {
        if ((kind == 0 || (int)op->kind == kind) && kp_str_eq_c(name, op->meta.name)) {
            return op;
        }
    }
    return NULL;
}

bool br_topic_admin_reserved(struct br_server *b, struct kp_str name)
{
    return op_by_name(b->admin, name, 0) != NULL;
}

bool br_topic_admin_creating(struct br_server *b, struct kp_str name)
{
    return op_by_name(b->admin, name, OP_CREATE) != NULL;
}

bool br_topic_admin_busy(const struct br_server *b)
{
    return b->admin != NULL && (b->admin->ops != NULL || b->admin->configs != NULL);
}

static void op_fail(struct topic_op *op, int16_t code, const char *msg)
{
    if (op->code == KP_ERR_NONE) {
        op->code = code;
        (void)snprintf(op->msg, sizeof op->msg, "%s", msg);
    }
}

static void op_free(struct topic_op *op)
{
    br_topic_meta_clear(&op->meta);
    kp_free(op->dirs);
    kp_free(op);
}

/* The topic's configs into the logs of its partitions from `first` on. */
static void apply_log_config(const struct br_topic *t, int32_t first)
{
    struct br_log_config lc;
    br_topic_log_config(&t->config, &lc);
    for (int32_t p = first; p < t->npartitions; p++) {
        if (t->partitions[p].log != NULL && br_log_set_config(t->partitions[p].log, &lc) != 0) {
            br_error("%s-%" PRId32 ": the new log settings were refused", t->name, p);
        }
    }
}

static void park_answer(struct br_server *b, struct admin_park *pk);
static void parks_resolve(struct br_server *b, uint64_t id, int16_t code, const char *msg);

/* A parked CreateTopics/DeleteTopics/CreatePartitions ran out of time. */
static void admin_timer_fire(void *ctx, struct br_timer *t)
{
    park_answer(ctx, t->owner);
}

static const struct br_timer_ops admin_timer = {"parked admin request timeout", admin_timer_fire};

static char *dup_cstr(const char *s)
{
    size_t n = strlen(s);
    char *c = kp_malloc(n + 1);
    if (c != NULL) {
        memcpy(c, s, n + 1);
    }
    return c;
}

/* The operation is over: its name is free again, and the parked requests
 * it completes are answered. */
static void op_finish(struct br_server *b, struct topic_op *op)
{
    struct br_topic_admin *a = b->admin;
    for (struct topic_op **pp = &a->ops; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == op) {
            *pp = op->next;
            break;
        }
    }
    if (op->kind != OP_DELETE && op->code != KP_ERR_NONE && op->dirs != NULL) {
        for (int32_t p = op->first; p < op->meta.partitions; p++) {
            br_logm_release(b->logs, op->dirs[p]);
        }
    }
    uint64_t id = op->id;
    int16_t code = op->code;
    char msg[sizeof op->msg];
    memcpy(msg, op->msg, sizeof msg);
    op_free(op);
    parks_resolve(b, id, code, msg);
}

/* Operation `id` ended with code (msg: why, "" for none): the parked
 * requests waiting for it take its outcome, and those it completes are
 * answered. */
static void parks_resolve(struct br_server *b, uint64_t id, int16_t code, const char *msg)
{
    struct br_topic_admin *a = b->admin;
    /* requests it completes leave the list first; their slots stop naming
     * them, so that a connection dying while another is answered cannot
     * cancel one of them under us */
    struct admin_park *ready = NULL;
    struct admin_park *pk = a->parks;
    while (pk != NULL) {
        struct admin_park *next = pk->next;
        for (size_t i = 0; i < pk->n; i++) {
            struct admin_result *res = &pk->res[i];
            if (res->op != id) {
                continue;
            }
            res->op = 0;
            res->code = code;
            if (code != KP_ERR_NONE && msg[0] != '\0' && res->msg == NULL) {
                res->msg = dup_cstr(msg); /* NULL (no message) when memory is short */
            }
            pk->pending--;
        }
        if (pk->pending == 0) {
            if (pk->prev != NULL) {
                pk->prev->next = pk->next;
            } else {
                a->parks = pk->next;
            }
            if (pk->next != NULL) {
                pk->next->prev = pk->prev;
            }
            pk->listed = false;
            br_slot_set_parked(pk->slot, NULL);
            pk->prev = NULL;
            pk->next = ready;
            ready = pk;
        }
        pk = next;
    }
    while (ready != NULL) {
        struct admin_park *next = ready->next;
        park_answer(b, ready);
        ready = next;
    }
}

/* A store error as CreateTopics answers it: the store's own Kafka code
 * (INVALID_TOPIC_EXCEPTION for a colliding name, POLICY_VIOLATION past the
 * topic ceiling...); its file ceiling is a policy too; KAFKA_STORAGE_ERROR
 * when it could not read or write. */
static int16_t store_code(int rc)
{
    if (rc == KP_E_TOO_LARGE) {
        return KP_ERR_POLICY_VIOLATION;
    }
    return rc > 0 ? (int16_t)rc : (int16_t)KP_ERR_KAFKA_STORAGE_ERROR;
}

/* Sends the store request of the step; when there is no memory for it the
 * operation ends (failed) and -1 is returned. */
static int submit_meta(struct br_server *b, struct topic_op *op, enum br_meta_op what,
                       enum op_step step)
{
    struct br_meta_request *rq = NULL;
    if (br_meta_request_new(what, &op->meta, &rq) != 0) {
        br_error("topic %s: out of memory for a metadata request", op->meta.name);
        op_fail(op, KP_ERR_KAFKA_STORAGE_ERROR, "out of memory");
        if (step == STEP_UNDO_STORE) {
            br_error("topic %s stays in the metadata: its creation failed", op->meta.name);
        }
        op_finish(b, op);
        return -1;
    }
    rq->tag = op->id;
    rq->job.mail.deliver = meta_delivered;
    op->step = step;
    br_meta_async_submit(b->admin->meta, rq);
    return 0;
}

/* CREATE (ADD) failed after the store kept the topic (its new
 * partitions): the store forgets them again. */
static void undo_store(struct br_server *b, struct topic_op *op)
{
    if (op->kind == OP_CREATE) {
        (void)submit_meta(b, op, BR_META_OP_DELETE_TOPIC, STEP_UNDO_STORE);
        return;
    }
    /* the request copies the topic as it was: the first partitions */
    int32_t want = op->meta.partitions;
    op->meta.partitions = op->first;
    struct br_meta_request *rq = NULL;
    int rc = br_meta_request_new(BR_META_OP_SET_PARTITIONS, &op->meta, &rq);
    op->meta.partitions = want;
    if (rc != 0) {
        br_error("topic %s: out of memory for a metadata request: it keeps %" PRId32
                 " partition(s) in the metadata, made at the next start",
                 op->meta.name, want);
        op_finish(b, op);
        return;
    }
    rq->tag = op->id;
    rq->job.mail.deliver = meta_delivered;
    op->step = STEP_UNDO_STORE;
    br_meta_async_submit(b->admin->meta, rq);
}

/* CREATE failed after the store kept the topic: remove its directories,
 * then take it out of the store (a crash between the two leaves a stored
 * topic that the next start completes, never a directory the store does
 * not list). */
static void undo_dirs(struct br_server *b, struct topic_op *op)
{
    struct log_job *j = log_job_new(op, false, op->meta.partitions);
    if (j == NULL) {
        undo_store(b, op);
        return;
    }
    char path[PATH_MAX];
    for (int32_t p = op->first; p < op->meta.partitions; p++) {
        if (br_topic_admin_partition_path(b->cfg.log_dirs[op->dirs[p]], op->meta.name, p, path, sizeof path) ==
            0) {
            j->paths[p] = dup_cstr(path);
        }
    }
    op->step = STEP_UNDO_DIRS;
    br_worker_submit(b->admin->worker, &j->job);
}

static void submit_make(struct br_server *b, struct topic_op *op)
{
    struct log_job *j = log_job_new(op, true, op->meta.partitions);
    if (j == NULL) {
        op_fail(op, KP_ERR_KAFKA_STORAGE_ERROR, "out of memory");
        undo_store(b, op);
        return;
    }
    j->log_dirs = b->cfg.log_dirs;
    j->n_log_dirs = b->cfg.n_log_dirs;
    memcpy(j->dirs, op->dirs, (size_t)op->meta.partitions * sizeof *j->dirs);
    j->first = op->first;
    j->lc = op->lc;
    op->step = STEP_MAKE_LOGS;
    br_worker_submit(b->admin->worker, &j->job);
}

/* DELETE failed before the store forgot the topic: its directories get
 * their names back (br_log_move_dir), and it stays whole. */
static void undo_moves(struct br_server *b, struct topic_op *op)
{
    struct br_topic *t = br_rm_find_topic(&b->rm, kp_str_c(op->meta.name));
    for (int32_t p = 0; t != NULL && p < t->npartitions; p++) {
        struct br_partition *part = &t->partitions[p];
        char path[PATH_MAX];
        if (part->log == NULL || part->managed == NULL ||
            br_topic_admin_partition_path(br_logm_dir(b->logs, br_managed_log_dir(part->managed)), t->name, p,
                           path, sizeof path) != 0 ||
            strcmp(br_log_dir(part->log), path) == 0) {
            continue;
        }
        if (br_log_move_dir(part->log, path) != 0) {
            br_error("%s-%" PRId32 ": its directory could not be given its name back: stop the "
                     "broker and rename %s to %s by hand before the next start (which would "
                     "remove it)",
                     t->name, p, br_log_dir(part->log), path);
        }
    }
    for (size_t d = 0; d < b->cfg.n_log_dirs; d++) {
        if (br_topic_admin_fsync_dir(b->cfg.log_dirs[d]) != 0) {
            br_warn("%s: fsync: %s", b->cfg.log_dirs[d], strerror(errno));
        }
    }
}

/* The topics changed: the metadata cache learns it at once, as a
 * cluster's brokers learn it from the controller (local_controller.h). */
static void publish(struct br_server *b, const char *name)
{
    if (br_local_controller_publish(b, name, br_rm_find_topic(&b->rm, kp_str_c(name))) != 0) {
        br_error("topic %s: out of memory telling the metadata cache", name);
    }
}

static void delete_stored(struct br_server *b, struct topic_op *op)
{
    struct br_topic *t = br_rm_find_topic(&b->rm, kp_str_c(op->meta.name));
    if (t == NULL) {
        op_finish(b, op); /* nothing left in memory */
        return;
    }
    struct log_job *j = log_job_new(op, false, t->npartitions);
    if (j == NULL || br_rm_topic_remove(&b->rm, t, j->paths) != 0) {
        /* the store forgot it: the next start will not load it */
        br_error("topic %s: out of memory taking it out; it is gone at the next start",
                 op->meta.name);
        log_job_free(j);
        op_fail(op, KP_ERR_KAFKA_STORAGE_ERROR, "out of memory");
        op_finish(b, op);
        publish(b, op->meta.name);
        return;
    }
    publish(b, op->meta.name);
    op->step = STEP_REMOVE_DIRS;
    br_worker_submit(b->admin->worker, &j->job);
}

static void meta_done(struct br_server *b, struct topic_op *op, const struct br_meta_request *rq)
{
    if (op->kind != OP_DELETE && op->step == STEP_STORE) {
        if (rq->rc != 0) {
            br_warn("%s topic %s: the metadata store refused it: %s",
                    op->kind == OP_ADD ? "adding partitions to" : "creating", op->meta.name,
                    rq->err);
            op_fail(op, store_code(rq->rc), rq->err);
            op_finish(b, op);
            return;
        }
        submit_make(b, op);
        return;
    }
    if (op->kind != OP_DELETE && op->step == STEP_UNDO_STORE) {
        if (rq->rc != 0 && op->kind == OP_ADD) {
            br_error("topic %s: partitions could not be added nor removed from the metadata "
                     "(%s): the next start makes them",
                     op->meta.name, rq->err);
        } else if (rq->rc != 0) {
            br_error("topic %s could not be created nor removed from the metadata: %s",
                     op->meta.name, rq->err);
        }
        op_finish(b, op);
        return;
    }
    if (op->kind == OP_DELETE && op->step == STEP_STORE) {
        if (rq->rc != 0) {
            br_error("deleting topic %s from the metadata failed: %s: the topic stays",
                     op->meta.name, rq->err);
            undo_moves(b, op);
            op_fail(op, KP_ERR_KAFKA_STORAGE_ERROR, rq->err);
            op_finish(b, op);
            return;
        }
        delete_stored(b, op);
        return;
    }
    br_error("topic %s: a metadata answer in step %d", op->meta.name, (int)op->step);
}

/* ADD: the new logs are made; the topic takes them. */
static void add_done(struct br_server *b, struct topic_op *op, struct log_job *j)
{
    struct br_topic *t = br_rm_find_topic(&b->rm, kp_str_c(op->meta.name));
    if (t == NULL || t->npartitions != op->first) {
        /* cannot happen: the name is reserved, no deletion or other
         * addition runs meanwhile */
        br_error("adding partitions to topic %s: the topic changed meanwhile", op->meta.name);
        op_fail(op, KP_ERR_KAFKA_STORAGE_ERROR, "the topic changed meanwhile");
        undo_dirs(b, op);
        return;
    }
    if (br_rm_topic_grow(&b->rm, t, op->meta.partitions, j->logs, op->dirs) != 0) {
        br_error("adding partitions to topic %s: out of memory installing them", op->meta.name);
        op_fail(op, KP_ERR_KAFKA_STORAGE_ERROR, "out of memory");
        undo_dirs(b, op);
        return;
    }
    publish(b, op->meta.name);
    /* their logs were made with the configs of when they were asked for:
     * configs stored since then apply to them too */
    apply_log_config(t, op->first);
    br_info("topic %s: %" PRId32 " partition(s) added, %" PRId32 " now, in %" PRId64 " ms",
            op->meta.name, op->meta.partitions - op->first, op->meta.partitions,
            br_now_mono_ms() - op->started_ms);
    op_finish(b, op);
}

static void log_done(struct br_server *b, struct topic_op *op, struct log_job *j)
{
    switch (op->step) {
    case STEP_MAKE_LOGS:
        if (j->rc != 0) {
            op_fail(op, KP_ERR_KAFKA_STORAGE_ERROR, j->err);
            undo_store(b, op);
            return;
        }
        if (op->kind == OP_ADD) {
            add_done(b, op, j);
            return;
        }
        if (br_rm_topic_adopt(&b->rm, &op->meta, j->logs, op->dirs) != 0) {
            br_error("creating topic %s: out of memory installing it", op->meta.name);
            op_fail(op, KP_ERR_KAFKA_STORAGE_ERROR, "out of memory");
            undo_dirs(b, op);
            return;
        }
        publish(b, op->meta.name);
        br_info("created topic %s with %" PRId32 " partition(s) in %" PRId64 " ms", op->meta.name,
                op->meta.partitions, br_now_mono_ms() - op->started_ms);
        op_finish(b, op);
        return;
    case STEP_UNDO_DIRS:
        if (j->rc != 0) {
            br_error("topic %s, which was not created: %s", op->meta.name, j->err);
        }
        undo_store(b, op);
        return;
    case STEP_SYNC_MOVES:
        if (j->rc != 0) {
            br_error("deleting topic %s: %s: the topic stays", op->meta.name, j->err);
            undo_moves(b, op);
            op_fail(op, KP_ERR_KAFKA_STORAGE_ERROR, j->err);
            op_finish(b, op);
            return;
        }
        (void)submit_meta(b, op, BR_META_OP_DELETE_TOPIC, STEP_STORE);
        return;
    case STEP_REMOVE_DIRS:
        if (j->rc != 0) {
            br_error("deleting topic %s: %s", op->meta.name, j->err);
            op_fail(op, KP_ERR_KAFKA_STORAGE_ERROR, j->err);
        } else {
            br_info("deleted topic %s", op->meta.name);
        }
        op_finish(b, op);
        return;
    case STEP_STORE:
    case STEP_UNDO_STORE:
        break;
    }
    br_error("topic %s: a log job answer in step %d", op->meta.name, (int)op->step);
}

static void meta_delivered(void *ctx, struct br_mail *m)
{
    struct br_server *b = ctx;
    struct br_meta_request *rq = (struct br_meta_request *)(void *)m;
    struct topic_op *op = op_by_id(b->admin, rq->tag);
    if (op != NULL) {
        meta_done(b, op, rq);
    }
    br_meta_request_free(rq);
}

static void log_job_delivered(void *ctx, struct br_mail *m)
{
    struct br_server *b = ctx;
    struct log_job *j = (struct log_job *)(void *)m;
    struct topic_op *op = op_by_id(b->admin, j->op);
    if (op != NULL) {
        log_done(b, op, j);
    }
    log_job_free(j); /* closes the logs the topic did not take */
}

/* Places partitions [first, end) of a new operation, each new log in the dir
 * holding the fewest (Kafka's placement), lists the operation and sends its
 * store request: -1 when there was no memory for it (the operation ended,
 * its placement given back). */
static int place_and_store(struct br_server *b, struct topic_op *op, int32_t first, int32_t end,
                           enum br_meta_op what)
{
    for (int32_t p = first; p < end; p++) {
        op->dirs[p] = br_logm_place(b->logs);
    }
    op->next = b->admin->ops;
    b->admin->ops = op;
    return submit_meta(b, op, what, STEP_STORE);
}

int br_topic_admin_create(struct br_server *b, const struct br_topic_meta *m,
                          const struct br_topic_config *tc, char *err, size_t errlen)
{
    struct br_topic_admin *a = b->admin;
    if (a == NULL || a->stopping) {
        (void)snprintf(err, errlen, "the broker is stopping");
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    /* what the store would refuse, refused now (a timeout of 0 answers
     * before the store has looked) */
    int rc = br_topic_meta_check(m, err, errlen);
    if (rc != 0) {
        return rc > 0 ? rc : KP_ERR_KAFKA_STORAGE_ERROR;
    }
    struct topic_op *op = kp_calloc(1, sizeof *op);
    if (op == NULL) {
        goto out_nomem;
    }
    op->dirs = kp_calloc((size_t)m->partitions, sizeof *op->dirs);
    if (op->dirs == NULL || br_topic_meta_copy(&op->meta, m) != 0) {
        op_free(op);
        goto out_nomem;
    }
    op->id = ++a->next_id;
    op->kind = OP_CREATE;
    op->started_ms = br_now_mono_ms();
    br_topic_log_config(tc, &op->lc);
    if (place_and_store(b, op, 0, m->partitions, BR_META_OP_CREATE_TOPIC) != 0) {
        goto out_nomem; /* ended, its placement given back */
    }
    return 0;

out_nomem:
    (void)snprintf(err, errlen, "out of memory");
    return KP_ERR_KAFKA_STORAGE_ERROR;
}

int br_topic_admin_add_partitions(struct br_server *b, const struct br_topic *t, int32_t partitions,
                                  const int32_t *replicas, char *err, size_t errlen)
{
    struct br_topic_admin *a = b->admin;
    if (a == NULL || a->stopping) {
        (void)snprintf(err, errlen, "the broker is stopping");
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int32_t first = t->npartitions;
    size_t rf = t->replication_factor > 0 ? (size_t)t->replication_factor : 1;
    struct topic_op *op = kp_calloc(1, sizeof *op);
    if (op == NULL) {
        goto out_nomem;
    }
    op->dirs = kp_calloc((size_t)partitions, sizeof *op->dirs);
    op->meta.replicas = kp_calloc((size_t)partitions * rf, sizeof *op->meta.replicas);
    if (op->dirs == NULL || op->meta.replicas == NULL) {
        op_free(op);
        goto out_nomem;
    }
    (void)snprintf(op->meta.name, sizeof op->meta.name, "%s", t->name);
    op->meta.partitions = partitions;
    op->meta.replication_factor = (int16_t)rf;
    /* the kept partitions' entries are not read: the store keeps its own */
    for (size_t i = (size_t)first * rf; i < (size_t)partitions * rf; i++) {
        op->meta.replicas[i] = replicas != NULL ? replicas[i - (size_t)first * rf] : b->node_id;
    }
    op->first = first;
    op->id = ++a->next_id;
    op->kind = OP_ADD;
    op->started_ms = br_now_mono_ms();
    br_topic_log_config(&t->config, &op->lc);
    if (place_and_store(b, op, first, partitions, BR_META_OP_SET_PARTITIONS) != 0) {
        goto out_nomem; /* ended, its placement given back */
    }
    return 0;

out_nomem:
    (void)snprintf(err, errlen, "out of memory");
    return KP_ERR_KAFKA_STORAGE_ERROR;
}

bool br_topic_admin_adding(struct br_server *b, struct kp_str name)
{
    return op_by_name(b->admin, name, OP_ADD) != NULL;
}

int br_topic_admin_delete(struct br_server *b, struct br_topic *t)
{
    struct br_topic_admin *a = b->admin;
    if (a == NULL || a->stopping) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (op_by_name(a, kp_str_c(t->name), OP_DELETE) != NULL) {
        return 0; /* being deleted: this request waits for that deletion */
    }
    if (op_by_name(a, kp_str_c(t->name), OP_ADD) != NULL) {
        /* its new partitions' directories are being made: a deletion now
         * would leave them behind (the client may retry once it is done) */
        return KP_ERR_REASSIGNMENT_IN_PROGRESS;
    }
    struct topic_op *op = kp_calloc(1, sizeof *op);
    if (op == NULL) {
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    (void)snprintf(op->meta.name, sizeof op->meta.name, "%s", t->name);
    op->id = ++a->next_id;
    op->kind = OP_DELETE;
    op->started_ms = br_now_mono_ms();
    struct log_job *j = log_job_new(op, false, 0);
    if (j == NULL) {
        op_free(op);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    /* Kafka's order (LogManager.asyncDelete): each directory renamed to its
     * delete name first (a rename, no fsync, on the reactor: the logs stay
     * open and follow it), so the data is no partition's before the store
     * forgets the topic; the renames are made durable on the worker, then
     * the store is written. A failure on the way moves them back. */
    int32_t moved = 0;
    for (; moved < t->npartitions; moved++) {
        struct br_partition *part = &t->partitions[moved];
        char target[PATH_MAX];
        if (part->log == NULL || part->managed == NULL) {
            continue;
        }
        if (br_log_delete_dir_name(br_logm_dir(b->logs, br_managed_log_dir(part->managed)), t->name,
                                   moved, target, sizeof target) != 0 ||
            br_log_move_dir(part->log, target) != 0) {
            break;
        }
    }
    if (moved < t->npartitions) {
        undo_moves(b, op);
        br_error("deleting topic %s failed: a directory could not be renamed: the topic stays",
                 t->name);
        log_job_free(j);
        op_free(op);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    op->next = a->ops;
    a->ops = op;
    j->sync = true;
    j->log_dirs = b->cfg.log_dirs;
    j->n_log_dirs = b->cfg.n_log_dirs;
    op->step = STEP_SYNC_MOVES;
    br_worker_submit(a->worker, &j->job);
    return 0;
}

/* ---------------------------------------------------------------- topic configs */

const struct br_topic_config *br_topic_admin_configs_pending(struct br_server *b, const char *name)
{
    /* the newest first: a later store replaces an earlier one's set */
    for (struct config_op *c = b->admin != NULL ? b->admin->configs : NULL; c != NULL;
         c = c->next) {
        if (strcmp(c->name, name) == 0) {
            return &c->tc;
        }
    }
    return NULL;
}

/* The store's answer for a config_op: on success the topic takes the
 * configs (Kafka's are in effect once AdminManager wrote them), on failure
 * it keeps its own; the parked request learns the outcome. */
static void configs_delivered(void *ctx, struct br_mail *m)
{
    struct br_server *b = ctx;
    struct br_meta_request *rq = (struct br_meta_request *)(void *)m;
    struct br_topic_admin *a = b->admin;
    struct config_op *c = NULL;
    for (struct config_op **pp = &a->configs; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->id == rq->tag) {
            c = *pp;
            *pp = c->next;
            break;
        }
    }
    if (c == NULL) {
        br_meta_request_free(rq);
        return;
    }
    int16_t code = KP_ERR_NONE;
    if (rq->rc != 0) {
        br_error("storing the configs of topic %s failed: %s", c->name, rq->err);
        code = (int16_t)kp_err_to_wire(rq->rc);
    } else {
        /* the same topic that was asked about: the worker runs in order, so
         * a deletion of it cannot have ended (nor a new topic of its name
         * been made) before this store was answered */
        struct br_topic *t = br_rm_find_topic(&b->rm, kp_str_c(c->name));
        if (t != NULL) {
            t->config = c->tc;
            apply_log_config(t, 0);
        }
        br_info("topic %s: configs %s (%zu change(s))", c->name,
                c->incremental ? "altered incrementally" : "replaced", c->changes);
    }
    uint64_t id = c->id;
    kp_free(c);
    parks_resolve(b, id, code, rq->err);
    br_meta_request_free(rq);
}

int br_topic_admin_set_configs(struct br_server *b, const struct br_topic *t,
                               const struct br_topic_config *tc, bool incremental, size_t changes,
                               uint64_t *op, char *err, size_t errlen)
{
    *op = 0;
    struct br_topic_admin *a = b->admin;
    if (a == NULL || a->stopping) {
        (void)snprintf(err, errlen, "the broker is stopping");
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    /* what the store keeps: the keys set on the topic, as text */
    char keys[BR_TCFG__COUNT][BR_META_MAX_CONFIG_KEY + 1];
    char values[BR_TCFG__COUNT][BR_TOPIC_CONFIG_TEXT_MAX];
    struct br_meta_config kvs[BR_TCFG__COUNT];
    size_t n = 0;
    for (int k = 0; k < BR_TCFG__COUNT; k++) {
        if (!br_topic_config_is_set(tc, (enum br_topic_config_key)k)) {
            continue;
        }
        struct br_topic_config_entry e;
        br_topic_config_entry(tc, &b->cfg, (enum br_topic_config_key)k, &e);
        (void)snprintf(keys[n], sizeof keys[n], "%s", e.name);
        (void)snprintf(values[n], sizeof values[n], "%s", e.value);
        kvs[n].key = keys[n];
        kvs[n].value = values[n];
        n++;
    }
    struct br_topic_meta m;
    memset(&m, 0, sizeof m);
    (void)snprintf(m.name, sizeof m.name, "%s", t->name);
    m.configs = kvs;
    m.n_configs = n;
    struct config_op *c = kp_calloc(1, sizeof *c);
    struct br_meta_request *rq = NULL;
    if (c == NULL || br_meta_request_new(BR_META_OP_SET_TOPIC_CONFIGS, &m, &rq) != 0) {
        kp_free(c);
        (void)snprintf(err, errlen, "out of memory");
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    c->id = ++a->next_id;
    (void)snprintf(c->name, sizeof c->name, "%s", t->name);
    c->tc = *tc;
    c->incremental = incremental;
    c->changes = changes;
    c->next = a->configs;
    a->configs = c;
    rq->tag = c->id;
    rq->job.mail.deliver = configs_delivered;
    br_meta_async_submit(a->meta, rq);
    *op = c->id;
    return 0;
}

/* ---------------------------------------------------------------- parked requests */

static void park_free(struct admin_park *pk)
{
    for (size_t i = 0; i < pk->n; i++) {
        kp_free(pk->res[i].name);
        kp_free(pk->res[i].msg);
    }
    kp_free(pk->res);
    kp_free(pk);
}

static void park_unlink(struct br_topic_admin *a, struct admin_park *pk)
{
    if (!pk->listed) {
        return;
    }
    if (pk->prev != NULL) {
        pk->prev->next = pk->next;
    } else {
        a->parks = pk->next;
    }
    if (pk->next != NULL) {
        pk->next->prev = pk->prev;
    }
    pk->prev = NULL;
    pk->next = NULL;
    pk->listed = false;
}

static struct kp_str str_of(const char *s)
{
    return s != NULL ? kp_str_c(s) : KP_STR_NULL;
}

/* An AlterConfigs or IncrementalAlterConfigs response (r's API and
 * version) of the results, in the request's order. */
static int respond_configs(struct br_req *r, const struct br_config_result *res, size_t n)
{
    size_t count = n == 0 ? 1 : n;
    int err = KP_E_NOMEM;
    if (r->hdr->RequestApiKey == KP_API_ALTER_CONFIGS) {
        struct kp_AlterConfigsResponse resp;
        kp_AlterConfigsResponse_init(&resp);
        resp.Responses.items = kp_calloc(count, sizeof *resp.Responses.items);
        if (resp.Responses.items != NULL) {
            resp.Responses.count = (int32_t)n;
            for (size_t i = 0; i < n; i++) {
                resp.Responses.items[i].ResourceType = res[i].type;
                resp.Responses.items[i].ResourceName = res[i].name;
                resp.Responses.items[i].ErrorCode = res[i].code;
                resp.Responses.items[i].ErrorMessage = res[i].message;
            }
            err = br_respond(r, &resp);
            kp_free(resp.Responses.items);
        }
    } else {
        struct kp_IncrementalAlterConfigsResponse resp;
        kp_IncrementalAlterConfigsResponse_init(&resp);
        resp.Responses.items = kp_calloc(count, sizeof *resp.Responses.items);
        if (resp.Responses.items != NULL) {
            resp.Responses.count = (int32_t)n;
            for (size_t i = 0; i < n; i++) {
                resp.Responses.items[i].ResourceType = res[i].type;
                resp.Responses.items[i].ResourceName = res[i].name;
                resp.Responses.items[i].ErrorCode = res[i].code;
                resp.Responses.items[i].ErrorMessage = res[i].message;
            }
            err = br_respond(r, &resp);
            kp_free(resp.Responses.items);
        }
    }
    return err;
}

/* Answers with what is known; topics still waiting are REQUEST_TIMED_OUT
 * (their creation or deletion goes on). Frees pk. */
static void park_answer(struct br_server *b, struct admin_park *pk)
{
    park_unlink(b->admin, pk);
    br_timer_cancel(b->net, &pk->timer);
    for (size_t i = 0; i < pk->n; i++) {
        if (pk->res[i].op != 0) {
            pk->res[i].op = 0;
            pk->res[i].code = KP_ERR_REQUEST_TIMED_OUT;
        }
    }
    struct kp_request_header hdr = {pk->api, pk->version, pk->corr, KP_STR_NULL};
    struct br_req r;
    memset(&r, 0, sizeof r);
    r.b = b;
    r.conn = pk->conn;
    r.slot = pk->slot;
    r.hdr = &hdr;
    r.version = pk->version;
    int err = KP_E_NOMEM;
    size_t count = pk->n == 0 ? 1 : pk->n;
    if (pk->api == KP_API_CREATE_TOPICS) {
        struct kp_CreateTopicsResponse resp;
        kp_CreateTopicsResponse_init(&resp);
        resp.Topics.items = kp_calloc(count, sizeof *resp.Topics.items);
        if (resp.Topics.items != NULL) {
            resp.Topics.count = (int32_t)pk->n;
            for (size_t i = 0; i < pk->n; i++) {
                resp.Topics.items[i].Name = kp_str_c(pk->res[i].name);
                resp.Topics.items[i].ErrorCode = pk->res[i].code;
                resp.Topics.items[i].ErrorMessage = str_of(pk->res[i].msg);
            }
            err = br_respond(&r, &resp);
            kp_free(resp.Topics.items);
        }
    } else if (pk->api == KP_API_CREATE_PARTITIONS) {
        struct kp_CreatePartitionsResponse resp;
        kp_CreatePartitionsResponse_init(&resp);
        resp.Results.items = kp_calloc(count, sizeof *resp.Results.items);
        if (resp.Results.items != NULL) {
            resp.Results.count = (int32_t)pk->n;
            for (size_t i = 0; i < pk->n; i++) {
                resp.Results.items[i].Name = kp_str_c(pk->res[i].name);
                resp.Results.items[i].ErrorCode = pk->res[i].code;
                resp.Results.items[i].ErrorMessage = str_of(pk->res[i].msg);
            }
            err = br_respond(&r, &resp);
            kp_free(resp.Results.items);
        }
    } else if (pk->api == KP_API_ALTER_CONFIGS || pk->api == KP_API_INCREMENTAL_ALTER_CONFIGS) {
        struct br_config_result *res = kp_calloc(count, sizeof *res);
        if (res != NULL) {
            for (size_t i = 0; i < pk->n; i++) {
                res[i].type = pk->res[i].type;
                res[i].name = kp_str_c(pk->res[i].name);
                res[i].code = pk->res[i].code;
                res[i].message = str_of(pk->res[i].msg);
            }
            err = respond_configs(&r, res, pk->n);
            kp_free(res);
        }
    } else {
        struct kp_DeleteTopicsResponse resp;
        kp_DeleteTopicsResponse_init(&resp);
        resp.Responses.items = kp_calloc(count, sizeof *resp.Responses.items);
        if (resp.Responses.items != NULL) {
            resp.Responses.count = (int32_t)pk->n;
            for (size_t i = 0; i < pk->n; i++) {
                resp.Responses.items[i].Name = kp_str_c(pk->res[i].name);
                resp.Responses.items[i].ErrorCode = pk->res[i].code;
            }
            err = br_respond(&r, &resp);
            kp_free(resp.Responses.items);
        }
    }
    if (err != 0) {
        br_error("answering a parked %s of %s failed: %s",
                 pk->api == KP_API_CREATE_TOPICS               ? "CreateTopics"
                 : pk->api == KP_API_CREATE_PARTITIONS         ? "CreatePartitions"
                 : pk->api == KP_API_ALTER_CONFIGS             ? "AlterConfigs"
                 : pk->api == KP_API_INCREMENTAL_ALTER_CONFIGS ? "IncrementalAlterConfigs"
                                                               : "DeleteTopics",
                 br_conn_peer(pk->conn), kp_err_str(err));
        br_slot_ready(pk->conn, pk->slot);
        br_conn_close_after_flush(pk->conn);
    }
    park_free(pk);
}

/* What a parked answer holds of topic i of the request. */
static int park_result(struct admin_result *res, struct kp_str name, struct kp_str msg,
                       int16_t code, uint64_t op)
{
    res->name = kp_malloc((size_t)(name.len > 0 ? name.len : 0) + 1);
    if (res->name == NULL) {
        return KP_E_NOMEM;
    }
    if (name.len > 0) {
        memcpy(res->name, name.ptr, (size_t)name.len);
    }
    res->name[name.len > 0 ? name.len : 0] = '\0';
    if (msg.len >= 0 && msg.ptr != NULL) {
        res->msg = kp_malloc((size_t)msg.len + 1);
        if (res->msg == NULL) {
            return KP_E_NOMEM;
        }
        memcpy(res->msg, msg.ptr, (size_t)msg.len);
        res->msg[msg.len] = '\0';
    }
    res->code = code;
    res->op = op;
    return 0;
}

static struct admin_park *park_new(struct br_req *r, size_t n)
{
    struct admin_park *pk = kp_calloc(1, sizeof *pk);
    if (pk == NULL) {
        return NULL;
    }
    pk->res = kp_calloc(n == 0 ? 1 : n, sizeof *pk->res);
    if (pk->res == NULL) {
        kp_free(pk);
        return NULL;
    }
    pk->n = n;
    pk->park.ops = &admin_park_ops;
    pk->conn = r->conn;
    pk->slot = r->slot;
    pk->api = r->hdr->RequestApiKey;
    pk->version = r->version;
    pk->corr = r->hdr->CorrelationId;
    br_timer_init(&pk->timer, &admin_timer, pk);
    return pk;
}

static void park_start(struct br_req *r, struct admin_park *pk, int32_t timeout_ms)
{
    struct br_topic_admin *a = r->b->admin;
    pk->next = a->parks;
    if (a->parks != NULL) {
        a->parks->prev = pk;
    }
    a->parks = pk;
    pk->listed = true;
    br_slot_set_parked(r->slot, &pk->park);
    br_timer_arm(r->b->net, &pk->timer, br_now_mono_ms() + timeout_ms);
}

/* Whether the answer waits: not with timeout_ms <= 0 (Kafka 2.0 answers
 * REQUEST_TIMED_OUT at once), nor while the broker stops. */
static bool may_wait(const struct br_req *r, int32_t timeout_ms)
{
    return timeout_ms > 0 && r->slot != NULL && !br_broker_stopping(r->b) && r->b->admin != NULL &&
           !r->b->admin->stopping;
}

int br_topic_admin_answer_create(struct br_req *r, struct kp_CreateTopicsResponse *resp,
                                 int32_t timeout_ms, bool validate_only)
{
    struct br_topic_admin *a = r->b->admin;
    size_t n = resp->Topics.count > 0 ? (size_t)resp->Topics.count : 0;
    size_t pending = 0;
    for (size_t i = 0; i < n && !validate_only; i++) {
        const struct kp_CreateTopicsResponse_CreatableTopicResult *t = &resp->Topics.items[i];
        if (t->ErrorCode == KP_ERR_NONE && op_by_name(a, t->Name, OP_CREATE) != NULL) {
            pending++;
        }
    }
    if (pending > 0 && !may_wait(r, timeout_ms)) {
        for (size_t i = 0; i < n; i++) {
            struct kp_CreateTopicsResponse_CreatableTopicResult *t = &resp->Topics.items[i];
            if (t->ErrorCode == KP_ERR_NONE && op_by_name(a, t->Name, OP_CREATE) != NULL) {
                t->ErrorCode = KP_ERR_REQUEST_TIMED_OUT;
                t->ErrorMessage = KP_STR_NULL;
            }
        }
        pending = 0;
    }
    if (pending == 0) {
        return br_respond(r, resp);
    }
    struct admin_park *pk = park_new(r, n);
    if (pk == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const struct kp_CreateTopicsResponse_CreatableTopicResult *t = &resp->Topics.items[i];
        const struct topic_op *op =
            t->ErrorCode == KP_ERR_NONE ? op_by_name(a, t->Name, OP_CREATE) : NULL;
        if (park_result(&pk->res[i], t->Name, t->ErrorMessage, t->ErrorCode,
                        op != NULL ? op->id : 0) != 0) {
            park_free(pk);
            return KP_E_NOMEM;
        }
    }
    pk->pending = pending;
    park_start(r, pk, timeout_ms);
    return 0;
}

int br_topic_admin_answer_partitions(struct br_req *r, struct kp_CreatePartitionsResponse *resp,
                                     int32_t timeout_ms, bool validate_only)
{
    struct br_topic_admin *a = r->b->admin;
    size_t n = resp->Results.count > 0 ? (size_t)resp->Results.count : 0;
    size_t pending = 0;
    for (size_t i = 0; i < n && !validate_only; i++) {
        const struct kp_CreatePartitionsResponse_CreatePartitionsTopicResult *t =
            &resp->Results.items[i];
        if (t->ErrorCode == KP_ERR_NONE && op_by_name(a, t->Name, OP_ADD) != NULL) {
            pending++;
        }
    }
    if (pending > 0 && !may_wait(r, timeout_ms)) {
        for (size_t i = 0; i < n; i++) {
            struct kp_CreatePartitionsResponse_CreatePartitionsTopicResult *t =
                &resp->Results.items[i];
            if (t->ErrorCode == KP_ERR_NONE && op_by_name(a, t->Name, OP_ADD) != NULL) {
                t->ErrorCode = KP_ERR_REQUEST_TIMED_OUT;
                t->ErrorMessage = KP_STR_NULL;
            }
        }
        pending = 0;
    }
    if (pending == 0) {
        return br_respond(r, resp);
    }
    struct admin_park *pk = park_new(r, n);
    if (pk == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const struct kp_CreatePartitionsResponse_CreatePartitionsTopicResult *t =
            &resp->Results.items[i];
        const struct topic_op *op =
            t->ErrorCode == KP_ERR_NONE ? op_by_name(a, t->Name, OP_ADD) : NULL;
        if (park_result(&pk->res[i], t->Name, t->ErrorMessage, t->ErrorCode,
                        op != NULL ? op->id : 0) != 0) {
            park_free(pk);
            return KP_E_NOMEM;
        }
    }
    pk->pending = pending;
    park_start(r, pk, timeout_ms);
    return 0;
}

int br_topic_admin_answer_delete(struct br_req *r, struct kp_DeleteTopicsResponse *resp,
                                 int32_t timeout_ms)
{
    struct br_topic_admin *a = r->b->admin;
    size_t n = resp->Responses.count > 0 ? (size_t)resp->Responses.count : 0;
    size_t pending = 0;
    for (size_t i = 0; i < n; i++) {
        const struct kp_DeleteTopicsResponse_DeletableTopicResult *t = &resp->Responses.items[i];
        if (t->ErrorCode == KP_ERR_NONE && op_by_name(a, t->Name, OP_DELETE) != NULL) {
            pending++;
        }
    }
    if (pending > 0 && !may_wait(r, timeout_ms)) {
        for (size_t i = 0; i < n; i++) {
            struct kp_DeleteTopicsResponse_DeletableTopicResult *t = &resp->Responses.items[i];
            if (t->ErrorCode == KP_ERR_NONE && op_by_name(a, t->Name, OP_DELETE) != NULL) {
                t->ErrorCode = KP_ERR_REQUEST_TIMED_OUT;
            }
        }
        pending = 0;
    }
    if (pending == 0) {
        return br_respond(r, resp);
    }
    struct admin_park *pk = park_new(r, n);
    if (pk == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const struct kp_DeleteTopicsResponse_DeletableTopicResult *t = &resp->Responses.items[i];
        const struct topic_op *op =
            t->ErrorCode == KP_ERR_NONE ? op_by_name(a, t->Name, OP_DELETE) : NULL;
        if (park_result(&pk->res[i], t->Name, KP_STR_NULL, t->ErrorCode, op != NULL ? op->id : 0) !=
            0) {
            park_free(pk);
            return KP_E_NOMEM;
        }
    }
    pk->pending = pending;
    park_start(r, pk, timeout_ms);
    return 0;
}

int br_topic_admin_answer_configs(struct br_req *r, struct br_config_result *res, size_t n)
{
    size_t pending = 0;
    for (size_t i = 0; i < n; i++) {
        pending += res[i].op != 0 ? 1 : 0;
    }
    if (pending > 0 && !may_wait(r, BR_ALTER_CONFIGS_WAIT_MS)) {
        /* the stores go on; whether they were written is not known yet */
        for (size_t i = 0; i < n; i++) {
            if (res[i].op != 0) {
                res[i].op = 0;
                res[i].code = KP_ERR_REQUEST_TIMED_OUT;
                res[i].message = KP_STR_NULL;
            }
        }
        pending = 0;
    }
    if (pending == 0) {
        return respond_configs(r, res, n);
    }
    struct admin_park *pk = park_new(r, n);
    if (pk == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (park_result(&pk->res[i], res[i].name, res[i].message, res[i].code, res[i].op) != 0) {
            park_free(pk);
            return KP_E_NOMEM;
        }
        pk->res[i].type = res[i].type;
    }
    pk->pending = pending;
    park_start(r, pk, BR_ALTER_CONFIGS_WAIT_MS);
    return 0;
}

static void admin_park_cancel(struct br_server *b, void *parked)
{
    struct admin_park *pk = parked;
    br_debug("%s: its connection closed while its request (API %d) waited: the work goes on",
             br_conn_peer(pk->conn), (int)pk->api);
    park_unlink(b->admin, pk);
    br_timer_cancel(b->net, &pk->timer);
    park_free(pk);
}

void br_topic_admin_complete_all_parked(struct br_server *b)
{
    while (b->admin != NULL && b->admin->parks != NULL) {
        struct admin_park *pk = b->admin->parks;
        br_slot_set_parked(pk->slot, NULL);
        park_answer(b, pk);
    }
}

/* ---------------------------------------------------------------- lifecycle */

int br_topic_admin_start(struct br_server *b)
{
    struct br_topic_admin *a = kp_calloc(1, sizeof *a);
    if (a == NULL) {
        return KP_E_NOMEM;
    }
    /* in process (the fuzz harness): no thread, reproducible runs */
    int rc = br_worker_start(b->mailbox, b->in_process, "topics", &a->worker);
    if (rc == 0) {
        rc = br_meta_async_open(&b->meta, a->worker, &a->meta);
    }
    if (rc != 0) {
        br_worker_free(a->worker);
        kp_free(a);
        return rc;
    }
    b->admin = a;
    return 0;
}

void br_topic_admin_stop(struct br_server *b)
{
    struct br_topic_admin *a = b->admin;
    if (a == NULL) {
        return;
    }
    a->stopping = true;
    br_topic_admin_complete_all_parked(b);
    /* the jobs queued run to their end; steps that follow run inline */
    br_worker_stop(a->worker);
    size_t left = 0;
    for (struct topic_op *op = a->ops; op != NULL; op = op->next) {
        left++;
    }
    if (left > 0) {
        br_info("finishing %zu topic creation(s) or deletion(s) before stopping", left);
    }
    /* each round delivers what the last one submitted; an operation has at
     * most four steps */
    for (int round = 0; (a->ops != NULL || a->configs != NULL) && round < 16; round++) {
        br_mailbox_deliver_all(b->mailbox, b);
    }
    while (a->configs != NULL) {
        struct config_op *c = a->configs;
        br_error("topic %s: the store of its configs did not finish", c->name);
        a->configs = c->next;
        kp_free(c);
    }
    while (a->ops != NULL) {
        struct topic_op *op = a->ops;
        br_error("topic %s: its %s did not finish", op->meta.name,
                 op->kind == OP_CREATE ? "creation" : "deletion");
        a->ops = op->next;
        op_free(op);
    }
    br_meta_async_close(a->meta);
    br_worker_free(a->worker);
    kp_free(a);
    b->admin = NULL;
}

struct br_worker *br_topic_admin_worker(struct br_server *b)
{
    return b->admin->worker;
}
