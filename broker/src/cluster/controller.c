/*
 * samsa-broker: the controller (see controller.h): its thread, its
 * ZooKeeper session, the events and what each does (stand for election,
 * fail over, brokers and topics changed, ISR changes notified); the rest
 * in the controller_*.c files that controller_internal.h lists.
 */
#define _GNU_SOURCE

#include "cluster/controller_internal.h"

#include "base/clock.h"
#include "base/logging.h"
#include "base/worker.h"

#include <samsa-protocol/messages.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* The wait before standing for election again after a failed attempt. */
#define RETRY_MS 1000

/* ---------------------------------------------------------------- the session */

/* ZooKeeper's watcher, on the client library's thread: only queues. */
static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    struct br_controller *c = ctx;
    if (type == ZOO_SESSION_EVENT) {
        (void)pthread_mutex_lock(&c->mu);
        if (state == ZOO_CONNECTED_STATE) {
            c->connected = true;
        } else if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
            c->connected = false;
            c->expired = true;
        } else {
            c->connected = false;
        }
        (void)pthread_cond_broadcast(&c->cv);
        (void)pthread_mutex_unlock(&c->mu);
        if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
            ctl_post(c, EV_EXPIRED);
        }
        return;
    }
    if (path == NULL) {
        return;
    }
    if (strcmp(path, "/controller") == 0) {
        ctl_post(c, EV_CONTROLLER);
    } else if (strcmp(path, "/brokers/ids") == 0) {
        ctl_post(c, EV_BROKERS);
    } else if (strncmp(path, "/brokers/topics/", 16) == 0 && strlen(path) > 6 &&
               strcmp(path + strlen(path) - 6, "/state") == 0) {
        ctl_post(c, EV_REASSIGN_ISR); /* only moves watch partition states */
    } else if (strncmp(path, "/brokers/topics", 15) == 0) {
        ctl_post(c, EV_TOPICS);
    } else if (strcmp(path, "/isr_change_notification") == 0) {
        ctl_post(c, EV_ISR_CHANGE);
    } else if (strcmp(path, "/admin/delete_topics") == 0) {
        ctl_post(c, EV_DELETE_TOPICS);
    } else if (strcmp(path, "/admin/preferred_replica_election") == 0) {
        ctl_post(c, EV_PREFERRED_ELECTION);
    } else if (strcmp(path, "/admin/reassign_partitions") == 0) {
        ctl_post(c, EV_REASSIGN);
    }
}

static bool stopping(struct br_controller *c)
{
    (void)pthread_mutex_lock(&c->mu);
    bool s = c->stop;
    (void)pthread_mutex_unlock(&c->mu);
    return s;
}

/* Sleeps ms unless the controller stops first. */
static void nap(struct br_controller *c, int64_t ms)
{
    (void)pthread_mutex_lock(&c->mu);
    if (!c->stop) {
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(ms / 1000);
        ts.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        (void)pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    (void)pthread_mutex_unlock(&c->mu);
}

static int open_session(struct br_controller *c)
{
    (void)pthread_mutex_lock(&c->mu);
    c->connected = false;
    c->expired = false;
    (void)pthread_mutex_unlock(&c->mu);
    c->zh = zookeeper_init(c->cfg.zk_connect, watcher, c->cfg.session_timeout_ms, NULL, c, 0);
    if (c->zh == NULL) {
        br_error("controller: cannot start a ZooKeeper session to %s: %s", c->cfg.zk_connect,
                 strerror(errno));
        return -1;
    }
    return 0;
}

static void close_session(struct br_controller *c)
{
    if (c->zh != NULL) {
        (void)zookeeper_close(c->zh);
        c->zh = NULL;
    }
}

/* ---------------------------------------------------------------- events */

/* Starts a sender for every broker that has none. */
static int start_senders(struct br_controller *c)
{
    for (size_t i = 0; i < c->nbrokers; i++) {
        if (c->brokers[i].sender == NULL) {
            c->brokers[i].sender = ctl_sender_start(c, &c->brokers[i], c->cfg.socket_timeout_ms);
            if (c->brokers[i].sender == NULL) {
                return -1;
            }
        }
    }
    return 0;
}

static int read_topics(struct br_controller *c)
{
    struct String_vector kids;
    memset(&kids, 0, sizeof kids);
    if (zoo_get_children(c->zh, "/brokers/topics", 1, &kids) != ZOK) {
        return -1;
    }
    for (size_t i = 0; i < c->ntopics; i++) {
        c->topics[i].seen = false;
    }
    int res = 0;
    for (int32_t i = 0; i < kids.count && res == 0; i++) {
        struct ctl_topic key;
        memset(&key, 0, sizeof key);
        (void)snprintf(key.name, sizeof key.name, "%s", kids.data[i]);
        struct ctl_topic *have =
            c->ntopics == 0 ? NULL : bsearch(&key, c->topics, c->ntopics, sizeof key, ctl_cmp_topic);
        struct ctl_topic t;
        int r = ctl_read_topic(c, kids.data[i], &t);
        if (r < 0) {
            res = -1;
            break;
        }
        if (r > 0) {
            if (have != NULL) {
                have->seen = true; /* unreadable now: keep what we knew */
            }
            continue;
        }
        if (have != NULL) {
            ctl_topic_clear(have);
            *have = t;
            have->seen = true;
            continue;
        }
        struct ctl_topic *nt = kp_realloc(c->topics, (c->ntopics + 1) * sizeof *nt);
        if (nt == NULL) {
            ctl_topic_clear(&t);
            res = -1;
            break;
        }
        c->topics = nt;
        c->topics[c->ntopics] = t;
        c->topics[c->ntopics].seen = true;
        c->ntopics++;
    }
    deallocate_String_vector(&kids);
    /* topics gone from ZooKeeper leave the model */
    size_t k = 0;
    for (size_t i = 0; i < c->ntopics; i++) {
        if (c->topics[i].seen || res != 0) {
            c->topics[k++] = c->topics[i];
        } else {
            ctl_topic_clear(&c->topics[i]);
        }
    }
    c->ntopics = k;
    if (c->ntopics > 1) {
        qsort(c->topics, c->ntopics, sizeof *c->topics, ctl_cmp_topic);
    }
    return res;
}

/* Re-reads the state of every partition a notification names (a leader
 * changed their ISR). 0, or -1 on a ZooKeeper failure. */
static int reread_notified(struct br_controller *c, const char *path)
{
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = ctl_zget(c, path, false, &data, &len, &st);
    if (rc == ZNONODE) {
        return 0;
    }
    if (rc != ZOK) {
        return -1;
    }
    struct br_zk_topic_partition *tps = NULL;
    size_t n = 0;
    char err[256] = "the znode holds no data";
    if (data == NULL ||
        br_zk_isr_change_decode(data, (size_t)len, path, &tps, &n, err, sizeof err) != 0) {
        br_warn("controller: ignoring %s: %s", path, err);
        kp_free(data);
        return 0;
    }
    kp_free(data);
    int res = 0;
    for (size_t i = 0; i < n && res == 0; i++) {
        struct ctl_topic key;
        memset(&key, 0, sizeof key);
        (void)snprintf(key.name, sizeof key.name, "%s", tps[i].topic);
        struct ctl_topic *t =
            c->ntopics == 0 ? NULL : bsearch(&key, c->topics, c->ntopics, sizeof key, ctl_cmp_topic);
        if (t != NULL && tps[i].partition < t->npartitions) {
            res = ctl_read_state(c, t->name, tps[i].partition, &t->parts[tps[i].partition]);
        }
    }
    kp_free(tps);
    return res;
}

/* Deletes the ISR change notifications; reread: first re-reads the states
 * of the partitions they name (Kafka's IsrChangeNotification event; at
 * failover every state is read anyway). */
static int clear_isr_notifications(struct br_controller *c, bool watch, bool reread)
{
    struct String_vector kids;
    memset(&kids, 0, sizeof kids);
    if (zoo_get_children(c->zh, "/isr_change_notification", watch ? 1 : 0, &kids) != ZOK) {
        return -1;
    }
    for (int32_t i = 0; i < kids.count; i++) {
        char path[512];
        (void)snprintf(path, sizeof path, "/isr_change_notification/%s", kids.data[i]);
        int rc =
            reread && reread_notified(c, path) != 0 ? ZSYSTEMERROR : zoo_delete(c->zh, path, -1);
        if (rc != ZOK && rc != ZNONODE) {
            deallocate_String_vector(&kids);
            return -1;
        }
    }
    deallocate_String_vector(&kids);
    return 0;
}

/* Kafka's onControllerFailover (§2.2). 0, or -1: resign and retry. */
static int failover(struct br_controller *c)
{
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = ctl_zget(c, "/controller_epoch", false, &data, &len, &st);
    if (rc == ZNONODE) {
        rc = ctl_zcreate(c, "/controller_epoch", "1", 1, 0);
        if (rc != ZOK) {
            br_error("controller: cannot create /controller_epoch: %s", zerror(rc));
            return -1;
        }
        c->epoch = 1;
        c->epoch_zk_version = 0;
    } else if (rc == ZOK) {
        int32_t epoch = 0;
        char err[256];
        if (data == NULL || br_zk_controller_epoch_decode(data, (size_t)len, "/controller_epoch",
                                                          &epoch, err, sizeof err) != 0) {
            br_error("controller: /controller_epoch is unreadable");
            kp_free(data);
            return -1;
        }
        kp_free(data);
        char *out = NULL;
        size_t olen = 0;
        if (br_zk_controller_epoch_encode(epoch + 1, &out, &olen) != 0) {
            return -1;
        }
        struct Stat nst;
        rc = zoo_set2(c->zh, "/controller_epoch", out, (int)olen, st.version, &nst);
        kp_free(out);
        if (rc != ZOK) {
            br_error("controller: /controller_epoch moved under us (%s): another controller",
                     zerror(rc));
            return -1;
        }
        c->epoch = epoch + 1;
        c->epoch_zk_version = nst.version;
    } else {
        return -1;
    }
    c->active = true;
    atomic_store(&c->epoch_flag, c->epoch);
    atomic_store(&c->active_flag, true);
    br_info("controller: broker %" PRId32 " is the controller, epoch %" PRId32, c->cfg.broker_id,
            c->epoch);
    if (clear_isr_notifications(c, true, false) != 0 ||
        ctl_read_brokers(c, &c->brokers, &c->nbrokers) != 0 || start_senders(c) != 0 ||
        read_topics(c) != 0) {
        return -1;
    }
    /* the topics being deleted, so that none of them is led again (their
     * deletion resumes below) */
    struct String_vector marked;
    memset(&marked, 0, sizeof marked);
    if (zoo_get_children(c->zh, "/admin/delete_topics", 0, &marked) != ZOK) {
        return -1;
    }
    for (int32_t i = 0; i < marked.count; i++) {
        if (c->cfg.delete_topic_enable && ctl_find_topic(c, marked.data[i]) != NULL &&
            strlen(marked.data[i]) <= BR_TOPIC_NAME_MAX) {
            struct deletion *nd = kp_realloc(c->deletions, (c->ndeletions + 1) * sizeof *nd);
            if (nd == NULL) {
                deallocate_String_vector(&marked);
                return -1;
            }
            c->deletions = nd;
            struct deletion *d = &c->deletions[c->ndeletions++];
            memset(d, 0, sizeof *d);
            (void)snprintf(d->name, sizeof d->name, "%s", marked.data[i]);
            d->gen = ++c->next_gen;
        }
    }
    deallocate_String_vector(&marked);
    /* UpdateMetadata before any LeaderAndIsr: brokers need the live brokers
     * to act on it */
    ctl_send_update_metadata(c);
    for (size_t i = 0; i < c->ntopics; i++) {
        for (int32_t p = 0; p < c->topics[i].npartitions; p++) {
            if (c->topics[i].parts[p].has_state && ctl_lai_to_live_replicas(c, i, p, false) != 0) {
                return -1;
            }
        }
    }
    if (ctl_reconcile_all(c) != 0) {
        return -1;
    }
    ctl_send_leader_and_isr(c);
    ctl_send_update_metadata(c);
    /* Kafka's TopicDeletionManager: watched, and resumed; the moves under
     * way resumed (initializePartitionReassignment); then the pending
     * preferred leader election (fetchPendingPreferredReplicaElections) */
    if (ctl_on_delete_topics(c) != 0 || ctl_on_reassign(c) != 0) {
        return -1;
    }
    return ctl_on_preferred_election(c);
}

/* The paths the controller reads and watches, made when missing (every
 * broker makes them at start; the controller may come first). 0 or -1
 * (the chroot itself is not there yet: the broker's session makes it). */
static int make_paths(struct br_controller *c)
{
    static const char *const paths[] = {"/brokers", "/brokers/ids", "/brokers/topics",
                                        "/isr_change_notification", "/admin",
                                        "/admin/delete_topics"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        int rc = ctl_zcreate(c, paths[i], NULL, 0, 0);
        if (rc != ZOK && rc != ZNODEEXISTS) {
            return -1;
        }
    }
    return 0;
}

/* Stands for election (Kafka's elect()): 0, or -1 to try again later. */
static int elect(struct br_controller *c)
{
    if (make_paths(c) != 0) {
        return -1;
    }
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = ctl_zget(c, "/controller", true, &data, &len, &st);
    if (rc == ZOK) {
        struct br_zk_controller who;
        char err[256];
        int32_t id = -1;
        if (data != NULL &&
            br_zk_controller_decode(data, (size_t)len, "/controller", &who, err, sizeof err) == 0) {
            id = who.broker_id;
        }
        kp_free(data);
        const clientid_t *me = zoo_client_id(c->zh);
        if (id == c->cfg.broker_id && me != NULL && st.ephemeralOwner == me->client_id) {
            return c->active ? 0 : failover(c); /* our own, from before */
        }
        if (c->active) {
            ctl_resign(c, "another broker holds /controller");
        }
        return 0;
    }
    if (rc != ZNONODE) {
        return -1;
    }
    char *json = NULL;
    size_t jlen = 0;
    if (br_zk_controller_encode(c->cfg.broker_id, br_now_wall_ms(), &json, &jlen) != 0) {
        return -1;
    }
    rc = ctl_zcreate(c, "/controller", json, jlen, ZOO_EPHEMERAL);
    kp_free(json);
    if (rc == ZNODEEXISTS) {
        return elect(c); /* lost the race: watch the winner */
    }
    if (rc != ZOK) {
        return -1;
    }
    if (failover(c) != 0) {
        ctl_resign(c, "failover failed");
        /* give the place to another broker */
        (void)zoo_delete(c->zh, "/controller", -1);
        return -1;
    }
    return 0;
}

static int on_brokers(struct br_controller *c)
{
    struct ctl_broker *now = NULL;
    size_t n = 0;
    if (ctl_read_brokers(c, &now, &n) != 0) {
        return -1;
    }
    /* senders move to the new list; those of brokers gone stop */
    bool changed = n != c->nbrokers;
    for (size_t i = 0; i < n; i++) {
        struct ctl_broker *old = ctl_find_broker(c, now[i].id);
        if (old != NULL && old->port == now[i].port && strcmp(old->host, now[i].host) == 0) {
            now[i].sender = old->sender;
            old->sender = NULL;
        } else {
            changed = true;
            br_info("controller: broker %" PRId32 " is up (%s:%" PRId32 ")", now[i].id, now[i].host,
                    now[i].port);
        }
    }
    for (size_t i = 0; i < c->nbrokers; i++) {
        if (c->brokers[i].sender != NULL) {
            br_info("controller: broker %" PRId32 " is gone", c->brokers[i].id);
            ctl_sender_stop(c->brokers[i].sender);
            ctl_deletions_lost_broker(c, c->brokers[i].id);
            ctl_forget_shutting(c, c->brokers[i].id);
            changed = true;
        }
    }
    struct ctl_broker *before = c->brokers;
    size_t nbefore = c->nbrokers;
    c->brokers = now;
    c->nbrokers = n;
    if (!changed) {
        kp_free(before);
        return 0;
    }
    if (start_senders(c) != 0) {
        kp_free(before);
        return -1;
    }
    /* Kafka's onBrokerStartup: metadata to all, then LeaderAndIsr for the
     * replicas on brokers that came */
    ctl_send_update_metadata(c);
    for (size_t i = 0; i < c->ntopics; i++) {
        for (int32_t p = 0; p < c->topics[i].npartitions; p++) {
            const struct ctl_partition *part = &c->topics[i].parts[p];
            if (!part->has_state) {
                continue;
            }
            for (int32_t r = 0; r < part->nreplicas; r++) {
                int32_t id = part->replicas[r];
                bool was = false;
                for (size_t b = 0; b < nbefore; b++) {
                    was = was || before[b].id == id;
                }
                if (!was && ctl_is_live(c, id) && ctl_lai_add(c, id, i, p, false) != 0) {
                    kp_free(before);
                    return -1;
                }
            }
        }
    }
    kp_free(before);
    /* then the partitions whose leader or ISR members went, or that can
     * now get a leader */
    if (ctl_reconcile_all(c) != 0) {
        return -1;
    }
    ctl_send_leader_and_isr(c);
    ctl_send_update_metadata(c);
    for (size_t i = 0; i < c->nbrokers; i++) {
        ctl_reassign_broker_up(c, c->brokers[i].id); /* those of brokers that came */
    }
    /* deletions waiting for a broker that came back go on */
    return ctl_resume_deletions(c);
}

static int on_topics(struct br_controller *c)
{
    if (read_topics(c) != 0 || ctl_reconcile_all(c) != 0) {
        return -1;
    }
    ctl_send_leader_and_isr(c);
    ctl_send_update_metadata(c);
    return 0;
}

/* A leader changed an ISR: the states re-read and pushed to all. */
static int on_isr_change(struct br_controller *c)
{
    if (clear_isr_notifications(c, true, true) != 0) {
        return -1;
    }
    ctl_send_update_metadata(c);
    return 0;
}

static void handle(struct br_controller *c, const struct event *e)
{
    enum ev_kind kind = e->kind;
    int rc = 0;
    switch (kind) {
    case EV_ELECT:
    case EV_CONTROLLER:
    case EV_RETRY:
        rc = elect(c);
        break;
    case EV_BROKERS:
        rc = c->active ? on_brokers(c) : 0;
        break;
    case EV_TOPICS:
        rc = c->active ? on_topics(c) : 0;
        break;
    case EV_ISR_CHANGE:
        rc = c->active ? on_isr_change(c) : 0;
        break;
    case EV_DELETE_TOPICS:
        rc = c->active ? ctl_on_delete_topics(c) : 0;
        break;
    case EV_STOP_REPLICA_DONE:
        rc = c->active ? ctl_on_stop_replica_done(c, e) : 0;
        break;
    case EV_CONTROLLED_SHUTDOWN:
        rc = ctl_on_controlled_shutdown(c, e);
        break;
    case EV_PREFERRED_ELECTION:
        rc = c->active ? ctl_on_preferred_election(c) : 0;
        break;
    case EV_REASSIGN:
        rc = c->active ? ctl_on_reassign(c) : 0;
        break;
    case EV_REASSIGN_ISR:
        rc = c->active ? ctl_on_reassign_isr(c) : 0;
        break;
    case EV_EXPIRED:
        ctl_resign(c, "its ZooKeeper session expired");
        close_session(c);
        while (!stopping(c) && open_session(c) != 0) {
            nap(c, RETRY_MS);
        }
        rc = ctl_wait_connected(c) ? elect(c) : -1;
        break;
    }
    if (rc != 0 && !stopping(c)) {
        /* rebuild everything from ZooKeeper, a moment later */
        ctl_resign(c, "a ZooKeeper operation failed");
        nap(c, RETRY_MS);
        ctl_post(c, EV_RETRY);
    }
}

/* A monotonic-clock deadline as the condition variable's (realtime) one. */
static struct timespec realtime_at(int64_t mono_ms)
{
    int64_t wait = mono_ms - br_now_mono_ms();
    struct timespec ts;
    (void)clock_gettime(CLOCK_REALTIME, &ts);
    if (wait > 0) {
        ts.tv_sec += (time_t)(wait / 1000);
        ts.tv_nsec += (long)(wait % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
    }
    return ts;
}

static void *controller_main(void *arg)
{
    struct br_controller *c = arg;
    br_thread_name("ctrl");
    if (ctl_wait_connected(c)) {
        ctl_post(c, EV_ELECT);
    }
    int64_t next_rebalance = br_now_mono_ms() + c->cfg.leader_imbalance_check_ms;
    for (;;) {
        (void)pthread_mutex_lock(&c->mu);
        bool due = false;
        while (!c->stop && c->head == NULL && !due) {
            if (!c->cfg.auto_leader_rebalance) {
                (void)pthread_cond_wait(&c->cv, &c->mu);
                continue;
            }
            struct timespec ts = realtime_at(next_rebalance);
            (void)pthread_cond_timedwait(&c->cv, &c->mu, &ts);
            due = br_now_mono_ms() >= next_rebalance;
        }
        if (c->stop) {
            (void)pthread_mutex_unlock(&c->mu);
            break;
        }
        if (c->head == NULL) {
            /* the check is due and no event waits */
            (void)pthread_mutex_unlock(&c->mu);
            next_rebalance = br_now_mono_ms() + c->cfg.leader_imbalance_check_ms;
            if (c->active && ctl_wait_connected(c) && ctl_rebalance_leaders(c) != 0 && !stopping(c)) {
                ctl_resign(c, "a ZooKeeper operation failed");
                nap(c, RETRY_MS);
                ctl_post(c, EV_RETRY);
            }
            continue;
        }

        struct event *e = c->head;
        c->head = e->next;
        if (c->head == NULL) {
            c->tail = NULL;
        }
        (void)pthread_mutex_unlock(&c->mu);
        struct event ev = *e;
        kp_free(e);
        if (ev.kind != EV_EXPIRED && !ctl_wait_connected(c)) {
            if (stopping(c)) {
                break;
            }
            continue; /* expired: its own event follows */
        }
        handle(c, &ev);
    }
    ctl_resign(c, "the broker stops");
    return NULL;
}

int br_controller_start(const struct br_controller_config *cfg, struct br_controller **out)
{
    *out = NULL;
    struct br_controller *c = kp_calloc(1, sizeof *c);
    if (c == NULL) {
        return KP_E_NOMEM;
    }
    c->cfg = *cfg;
    atomic_init(&c->active_flag, false);
    atomic_init(&c->epoch_flag, 0);
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        kp_free(c);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (pthread_cond_init(&c->cv, NULL) != 0) {
        (void)pthread_mutex_destroy(&c->mu);
        kp_free(c);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (open_session(c) != 0) {
        /* the thread retries: an unresolvable host may resolve later */
        (void)pthread_mutex_lock(&c->mu);
        c->expired = true;
        (void)pthread_mutex_unlock(&c->mu);
        ctl_post(c, EV_EXPIRED);
    }
    if (pthread_create(&c->thread, NULL, controller_main, c) != 0) {
        close_session(c);
        (void)pthread_cond_destroy(&c->cv);
        (void)pthread_mutex_destroy(&c->mu);
        kp_free(c);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    c->started = true;
    *out = c;
    return 0;
}

bool br_controller_active(struct br_controller *c, int32_t *epoch)
{
    if (epoch != NULL) {
        *epoch = atomic_load(&c->epoch_flag);
    }
    return atomic_load(&c->active_flag);
}

void br_controller_stop(struct br_controller *c)
{
    if (c == NULL) {
        return;
    }
    (void)pthread_mutex_lock(&c->mu);
    c->stop = true;
    (void)pthread_cond_broadcast(&c->cv);
    (void)pthread_mutex_unlock(&c->mu);
    if (c->started) {
        (void)pthread_join(c->thread, NULL);
    }
    close_session(c);
    while (c->head != NULL) {
        struct event *e = c->head;
        c->head = e->next;
        if (e->kind == EV_CONTROLLED_SHUTDOWN) {
            e->cs_done(e->cs_ctx, KP_ERR_NOT_CONTROLLER, NULL, 0);
        }
        kp_free(e);
    }
    (void)pthread_cond_destroy(&c->cv);
    (void)pthread_mutex_destroy(&c->mu);
    kp_free(c);
}
