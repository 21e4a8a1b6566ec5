/*
 * samsa-broker: the controller's partition reassignment (Kafka 2.0's
 * KafkaController.onPartitionReassignment and its helpers; see
 * controller.h for the steps).
 *
 * A move is kept by its target replicas only (RAR, Kafka's
 * ReassignedPartitionsContext.newReplicas); everything else is read from
 * ZooKeeper at each step, so the steps are the same whether this
 * controller started the move or took it over at failover:
 * - while some of RAR is not in the ISR: the assignment is RAR followed by
 *   the original replicas (OAR) not in RAR, the leader epoch bumped and
 *   LeaderAndIsr sent to every live replica, which starts the new ones;
 *   the partition's state znode is watched for its ISR to grow;
 * - once all of RAR is in the ISR: the leader stays if it is in RAR, else
 *   the first live in-sync member of RAR leads; the ISR loses OAR - RAR;
 *   LeaderAndIsr to RAR; StopReplica, then StopReplica with
 *   delete_partitions, to OAR - RAR; the assignment becomes RAR; the
 *   partition leaves /admin/reassign_partitions.
 */
#define _GNU_SOURCE

#include "cluster/controller_internal.h"

#include "base/logging.h"

#include <samsa-protocol/messages.h>

#include <inttypes.h>
#include <string.h>

#define REASSIGN_PATH "/admin/reassign_partitions"

/* ---------------------------------------------------------------- helpers */

static struct move *find_move(struct br_controller *c, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < c->nmoves; i++) {
        if (c->moves[i].partition == partition && strcmp(c->moves[i].topic, topic) == 0) {
            return &c->moves[i];
        }
    }
    return NULL;
}

static bool same_set(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    if (na != nb) {
        return false;
    }
    for (int32_t i = 0; i < na; i++) {
        if (!ctl_contains(b, nb, a[i])) {
            return false;
        }
    }
    return true;
}

/* "[1,2,3]" into buf. */
static const char *ids_text(const int32_t *ids, int32_t n, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n && k + 16 < cap; i++) {
        int w = snprintf(buf + k, cap - k, "%s%" PRId32, i == 0 ? "[" : ",", ids[i]);
        k += w > 0 ? (size_t)w : 0;
    }
    (void)snprintf(buf + k, cap - k, "%s", n == 0 ? "[]" : "]");
    return buf;
}

/* Watches a partition's state znode (Kafka's
 * PartitionReassignmentIsrChangeHandler): its next change posts
 * EV_REASSIGN_ISR. 0 or -1. */
static int watch_state(struct br_controller *c, const char *topic, int32_t p)
{
    char path[BR_TOPIC_NAME_MAX + 64];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%" PRId32 "/state", topic, p);
    struct Stat st;
    int rc = zoo_exists(c->zh, path, 1, &st);
    return rc == ZOK || rc == ZNONODE ? 0 : -1;
}

/* Whether a write's outcome is unknown: ZooKeeper may have applied it
 * and the reply been lost. */
static bool outcome_unknown(int rc)
{
    return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT;
}

/* Writes partition p of topic's assignment in /brokers/topics/<topic> as
 * ids, conditionally on the version read (CreatePartitions may write it
 * too), and the model's replicas with it. A write whose reply was lost is
 * read back once the session is connected again: done when ZooKeeper holds
 * ids. 0, 1 (the topic or partition is gone), -1 ZooKeeper failed. */
static int write_assignment(struct br_controller *c, struct ctl_partition *part, const char *topic,
                            int32_t p, const int32_t *ids, int32_t n)
{
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s", topic);
    for (int attempt = 0; attempt < 5; attempt++) {
        struct br_zk_topic_assignment a;
        struct Stat st;
        char err[256];
        int rc = ctl_read_assignment(c, topic, false, &a, &st, err, sizeof err);
        if (rc < 0) {
            return -1;
        }
        if (rc > 0 || p >= a.n_partitions) {
            br_warn("controller: cannot move %s-%" PRId32 ": %s", topic, p,
                    rc > 0 ? err : "no such partition");
            br_zk_topic_assignment_clear(&a);
            return 1;
        }
        int32_t old_n = a.first[p + 1] - a.first[p];
        bool applied = old_n == n;
        for (int32_t i = 0; i < n && applied; i++) {
            applied = a.replicas[a.first[p] + i] == ids[i];
        }
        int32_t total = a.first[a.n_partitions] - old_n + n;
        struct br_zk_topic_assignment b = {a.n_partitions, NULL, NULL};
        b.first = kp_calloc((size_t)a.n_partitions + 1, sizeof *b.first);
        b.replicas = kp_calloc(total > 0 ? (size_t)total : 1, sizeof *b.replicas);
        int32_t *copy = kp_calloc((size_t)n, sizeof *copy);
        if (b.first == NULL || b.replicas == NULL || copy == NULL) {
            kp_free(copy);
            br_zk_topic_assignment_clear(&a);
            br_zk_topic_assignment_clear(&b);
            return -1;
        }
        memcpy(copy, ids, (size_t)n * sizeof *ids);
        if (applied) { /* a write whose reply was lost, or the same as ZooKeeper's */
            br_zk_topic_assignment_clear(&a);
            br_zk_topic_assignment_clear(&b);
            kp_free(part->replicas);
            part->replicas = copy;
            part->nreplicas = n;
            return 0;
        }
        int32_t k = 0;
        for (int32_t q = 0; q < a.n_partitions; q++) {
            b.first[q] = k;
            if (q == p) {
                memcpy(&b.replicas[k], ids, (size_t)n * sizeof *ids);
                k += n;
            } else {
                int32_t m = a.first[q + 1] - a.first[q];
                memcpy(&b.replicas[k], &a.replicas[a.first[q]], (size_t)m * sizeof *ids);
                k += m;
            }
        }
        b.first[a.n_partitions] = k;
        br_zk_topic_assignment_clear(&a);
        char *json = NULL;
        size_t jlen = 0;
        rc = br_zk_topic_assignment_encode(&b, &json, &jlen) != 0
                 ? ZSYSTEMERROR
                 : zoo_set(c->zh, path, json, (int)jlen, st.version);
        kp_free(json);
        br_zk_topic_assignment_clear(&b);
        if (rc == ZOK) {
            kp_free(part->replicas);
            part->replicas = copy;
            part->nreplicas = n;
            return 0;
        }
        kp_free(copy);
        if (outcome_unknown(rc)) {
            br_warn("controller: the reply of writing %s was lost (%s): reading it back", path,
                    zerror(rc));
            if (!ctl_wait_connected(c)) {
                return -1;
            }
        } else if (rc != ZBADVERSION) {
            br_error("controller: writing %s failed: %s", path, zerror(rc));
            return -1;
        }
    }
    return -1;
}

/*
 * Takes the partitions of done[0..n) out of /admin/reassign_partitions
 * (Kafka's removePartitionsFromReassignedPartitions), deleting the znode
 * when none is left; conditional on the version read. 0 or -1.
 */
static int remove_from_znode(struct br_controller *c, const struct br_zk_topic_partition *done,
                             size_t n)
{
    if (n == 0) {
        return 0;
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        char *data = NULL;
        int len = 0;
        struct Stat st;
        int rc = ctl_zget(c, REASSIGN_PATH, false, &data, &len, &st);
        if (rc == ZNONODE) {
            return 0;
        }
        if (rc != ZOK) {
            return -1;
        }
        struct br_zk_reassignment *rs = NULL;
        size_t nrs = 0;
        char err[256] = "the znode holds no data";
        if (data == NULL || br_zk_reassignment_decode(data, (size_t)len, REASSIGN_PATH, &rs, &nrs,
                                                      err, sizeof err) != 0) {
            nrs = 0; /* unreadable: nothing in it can go on */
        }
        kp_free(data);
        size_t k = 0;
        for (size_t i = 0; i < nrs; i++) {
            bool gone = false;
            for (size_t j = 0; j < n && !gone; j++) {
                gone = done[j].partition == rs[i].tp.partition &&
                       strcmp(done[j].topic, rs[i].tp.topic) == 0;
            }
            if (!gone) {
                rs[k++] = rs[i];
            }
        }
        if (k == 0) {
            kp_free(rs);
            rc = zoo_delete(c->zh, REASSIGN_PATH, st.version);
        } else {
            char *json = NULL;
            size_t jlen = 0;
            rc = br_zk_reassignment_encode(rs, k, &json, &jlen) != 0
                     ? ZSYSTEMERROR
                     : zoo_set(c->zh, REASSIGN_PATH, json, (int)jlen, st.version);
            kp_free(json);
            kp_free(rs);
        }
        if (rc == ZOK || rc == ZNONODE) {
            return 0;
        }
        if (outcome_unknown(rc)) {
            /* read again: what ZooKeeper applied is not in it any more */
            if (!ctl_wait_connected(c)) {
                return -1;
            }
        } else if (rc != ZBADVERSION) {
            br_error("controller: updating %s failed: %s", REASSIGN_PATH, zerror(rc));
            return -1;
        }
    }
    return -1;
}

/* StopReplica (delete_partitions as given) of one partition to a live
 * broker; to a broker that is down, once it is back (a stray). */
static void stop_replica(struct br_controller *c, int32_t broker, const char *topic, int32_t p,
                         bool delete_partitions)
{
    struct ctl_broker *b = ctl_find_broker(c, broker);
    if (b == NULL || b->sender == NULL) {
        struct stray *ns = delete_partitions
                               ? kp_realloc(c->strays, (c->nstrays + 1) * sizeof *ns)
                               : NULL;
        if (ns != NULL) {
            c->strays = ns;
            struct stray *x = &c->strays[c->nstrays++];
            memset(x, 0, sizeof *x);
            (void)snprintf(x->topic, sizeof x->topic, "%s", topic);
            x->partition = p;
            x->broker = broker;
        }
        return;
    }
    struct kp_StopReplicaRequest_StopReplicaPartitionV0 one;
    memset(&one, 0, sizeof one);
    one.TopicName = kp_str_c(topic);
    one.PartitionIndex = p;
    ctl_send_stop_replica(c, b->sender, &one, 1, delete_partitions, 0);
}

void ctl_reassign_broker_up(struct br_controller *c, int32_t id)
{
    size_t k = 0;
    for (size_t i = 0; i < c->nstrays; i++) {
        struct stray x = c->strays[i];
        if (x.broker != id) {
            c->strays[k++] = x;
            continue;
        }
        const struct ctl_topic *t = ctl_find_topic(c, x.topic);
        const struct ctl_partition *part =
            t != NULL && x.partition < t->npartitions ? &t->parts[x.partition] : NULL;
        if (part != NULL && ctl_contains(part->replicas, part->nreplicas, id)) {
            continue; /* assigned to it again meanwhile: its replica is wanted */
        }
        br_info("controller: broker %" PRId32 " is back: its old replica of %s-%" PRId32
                " is deleted",
                id, x.topic, x.partition);
        stop_replica(c, id, x.topic, x.partition, false);
        stop_replica(c, id, x.topic, x.partition, true);
    }
    c->nstrays = k;
}

/* ---------------------------------------------------------------- the steps */

/* Steps 1-3: the assignment grows to RAR + (OAR - RAR), the epoch is
 * bumped and every live replica told (the new ones start and fetch).
 * 0 or -1; *gone when the partition went meanwhile. */
static int start_move(struct br_controller *c, struct move *m, size_t ti, bool *gone)
{
    struct ctl_topic *t = &c->topics[ti];
    struct ctl_partition *part = &t->parts[m->partition];
    int32_t ids[2 * BR_ZK_REASSIGN_MAX_REPLICAS];
    int32_t n = 0;
    for (int32_t i = 0; i < m->n; i++) {
        ids[n++] = m->replicas[i];
    }
    for (int32_t i = 0; i < part->nreplicas && n < 2 * BR_ZK_REASSIGN_MAX_REPLICAS; i++) {
        if (!ctl_contains(m->replicas, m->n, part->replicas[i])) {
            ids[n++] = part->replicas[i];
        }
    }
    /* grown already: by this controller (started), or by one before it,
     * which may have gone before its LeaderAndIsr: the epoch is bumped
     * again, or a leader that never heard of the new replicas would ignore
     * a LeaderAndIsr of the epoch it has and never let them in */
    bool grown = same_set(ids, n, part->replicas, part->nreplicas);
    if (grown && m->started) {
        return 0;
    }
    int32_t *before = kp_calloc((size_t)part->nreplicas, sizeof *before);
    if (before == NULL) {
        return -1;
    }
    int32_t nbefore = part->nreplicas;
    memcpy(before, part->replicas, (size_t)nbefore * sizeof *before);
    int w = grown ? 0 : write_assignment(c, part, t->name, m->partition, ids, n);
    if (w != 0) {
        kp_free(before);
        *gone = w > 0;
        return w < 0 ? -1 : 0;
    }
    for (int attempt = 0; attempt < 3; attempt++) {
        w = ctl_write_state(c, t, m->partition, part, part->leader, part->isr, part->nisr);
        if (w <= 0) {
            break;
        }
    }
    if (w != 0) {
        kp_free(before);
        return -1;
    }
    for (int32_t i = 0; i < part->nreplicas; i++) {
        int32_t id = part->replicas[i];
        if (ctl_is_live(c, id) &&
            ctl_lai_add(c, id, ti, m->partition, !ctl_contains(before, nbefore, id)) != 0) {
            kp_free(before);
            return -1;
        }
    }
    m->started = true;
    char a[256];
    char b[256];
    char d[256];
    br_info("controller: %s %s-%" PRId32 " to %s: its replicas are %s until the new ones are in "
            "sync (leader %" PRId32 ", epoch %" PRId32 ")",
            grown ? "resuming the move of" : "moving", t->name, m->partition,
            ids_text(m->replicas, m->n, b, sizeof b), ids_text(part->replicas, part->nreplicas, d,
                                                               sizeof d),
            part->leader, part->leader_epoch);
    if (!grown) {
        br_info("controller: %s-%" PRId32 " had the replicas %s", t->name, m->partition,
                ids_text(before, nbefore, a, sizeof a));
    }
    kp_free(before);
    ctl_send_leader_and_isr(c);
    ctl_send_update_metadata(c);
    return 0;
}

/* Steps 5-11, once every replica of RAR is in the ISR. 0, or -1; *done
 * when the move is complete (or cannot go on: the partition went). */
static int finish_move(struct br_controller *c, const struct move *m, size_t ti, bool *done)
{
    struct ctl_topic *t = &c->topics[ti];
    struct ctl_partition *part = &t->parts[m->partition];
    for (int attempt = 0; attempt < 3; attempt++) {
        /* Kafka's moveReassignedPartitionLeaderIfRequired with its
         * ReassignedPartitionLeaderSelector: the leader stays when it is in
         * RAR and live, else the first live member of RAR in the ISR */
        int32_t leader = part->leader;
        if (!ctl_contains(m->replicas, m->n, leader) || !ctl_is_live(c, leader)) {
            leader = -1;
            for (int32_t i = 0; i < m->n && leader < 0; i++) {
                if (ctl_is_live(c, m->replicas[i]) &&
                    ctl_contains(part->isr, part->nisr, m->replicas[i])) {
                    leader = m->replicas[i];
                }
            }
        }
        if (leader < 0) {
            br_warn("controller: %s-%" PRId32 " cannot finish its move: no replica it moves to "
                    "is live and in sync",
                    t->name, m->partition);
            return 0;
        }
        /* the old replicas leave the ISR (their OfflineReplica transition) */
        int32_t isr[BR_ZK_REASSIGN_MAX_REPLICAS];
        int32_t nisr = 0;
        for (int32_t i = 0; i < part->nisr && nisr < BR_ZK_REASSIGN_MAX_REPLICAS; i++) {
            if (ctl_contains(m->replicas, m->n, part->isr[i])) {
                isr[nisr++] = part->isr[i];
            }
        }
        int w = ctl_write_state(c, t, m->partition, part, leader, isr, nisr);
        if (w < 0) {
            return -1;
        }
        if (w > 0) {
            continue; /* the version moved: part holds ZooKeeper's state */
        }
        int32_t old[2 * BR_ZK_REASSIGN_MAX_REPLICAS];
        int32_t nold = 0;
        for (int32_t i = 0; i < part->nreplicas && nold < 2 * BR_ZK_REASSIGN_MAX_REPLICAS; i++) {
            if (!ctl_contains(m->replicas, m->n, part->replicas[i])) {
                old[nold++] = part->replicas[i];
            }
        }
        /* in Kafka's order: LeaderAndIsr naming RAR as the replicas (so
         * the leader never takes an old one back into the ISR) to RAR, the
         * old replicas stopped and deleted, and only then the assignment
         * written: a controller elected after that finds the move done */
        int32_t *rar = kp_calloc((size_t)m->n, sizeof *rar);
        if (rar == NULL) {
            return -1;
        }
        memcpy(rar, m->replicas, (size_t)m->n * sizeof *rar);
        kp_free(part->replicas);
        part->replicas = rar;
        part->nreplicas = m->n;
        if (ctl_lai_to_live_replicas(c, ti, m->partition, false) != 0) {
            return -1;
        }
        ctl_send_leader_and_isr(c);
        for (int32_t i = 0; i < nold; i++) {
            stop_replica(c, old[i], t->name, m->partition, false);
            stop_replica(c, old[i], t->name, m->partition, true);
        }
        w = write_assignment(c, part, t->name, m->partition, m->replicas, m->n);
        if (w != 0) {
            *done = w > 0;
            return w < 0 ? -1 : 0;
        }
        ctl_send_update_metadata(c);
        char a[256];
        br_info("controller: %s-%" PRId32 " moved to %s: leader %" PRId32 ", epoch %" PRId32,
                t->name, m->partition, ids_text(m->replicas, m->n, a, sizeof a), part->leader,
                part->leader_epoch);
        *done = true;
        return 0;
    }
    return 0;
}

/* One step of a move, on what ZooKeeper holds now (Kafka's
 * onPartitionReassignment). 0, or -1; *done when the move is over. */
static int step(struct br_controller *c, struct move *m, bool *done)
{
    *done = false;
    struct ctl_topic *t = ctl_find_topic(c, m->topic);
    if (t == NULL || m->partition >= t->npartitions || ctl_is_deleting(c, m->topic)) {
        br_warn("controller: the move of %s-%" PRId32 " ends: %s", m->topic, m->partition,
                t == NULL || m->partition >= t->npartitions ? "the partition is gone"
                                                            : "its topic is being deleted");
        *done = true;
        return 0;
    }
    size_t ti = (size_t)(t - c->topics);
    struct ctl_partition *part = &t->parts[m->partition];
    if (ctl_read_state(c, t->name, m->partition, part) != 0 ||
        watch_state(c, t->name, m->partition) != 0) {
        return -1;
    }
    if (!part->has_state) {
        return 0; /* not online yet: its state's creation is watched */
    }
    bool all_in = true;
    for (int32_t i = 0; i < m->n && all_in; i++) {
        all_in = ctl_contains(part->isr, part->nisr, m->replicas[i]);
    }
    return all_in ? finish_move(c, m, ti, done) : start_move(c, m, ti, done);
}

/*
 * Why a move asked for cannot start (Kafka's
 * initiateReassignReplicasForTopicPartition), or NULL. A move already
 * under way (its assignment holds RAR) goes on whatever its replicas'
 * liveness: a controller taking over while a new replica is down waits for
 * it, where Kafka 2.0 gives the move up.
 */
static const char *refusal(struct br_controller *c, const struct br_zk_reassignment *r)
{
    const struct ctl_topic *t = ctl_find_topic(c, r->tp.topic);
    if (t == NULL || r->tp.partition >= t->npartitions) {
        return "the partition does not exist";
    }
    if (ctl_is_deleting(c, t->name)) {
        return "its topic is being deleted";
    }
    const struct ctl_partition *part = &t->parts[r->tp.partition];
    bool under_way = true;
    for (size_t i = 0; i < r->nreplicas && under_way; i++) {
        under_way = ctl_contains(part->replicas, part->nreplicas, r->replicas[i]);
    }
    bool same = (int32_t)r->nreplicas == part->nreplicas;
    for (size_t i = 0; i < r->nreplicas && same; i++) {
        same = part->replicas[i] == r->replicas[i];
    }
    if (same) {
        return "it is assigned to these replicas already";
    }
    if (part->nreplicas > BR_ZK_REASSIGN_MAX_REPLICAS) {
        return "it has more replicas than a move takes";
    }
    if (under_way) {
        return NULL;
    }
    for (size_t i = 0; i < r->nreplicas; i++) {
        if (ctl_find_broker(c, r->replicas[i]) == NULL) {
            return "a replica it moves to is on a broker that is not live";
        }
    }
    return NULL;
}

int ctl_on_reassign(struct br_controller *c)
{
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = ctl_zget(c, REASSIGN_PATH, true, &data, &len, &st);
    if (rc == ZNONODE) {
        return 0; /* its creation is watched */
    }
    if (rc != ZOK) {
        return -1;
    }
    struct br_zk_reassignment *rs = NULL;
    size_t n = 0;
    char err[256] = "the znode holds no data";
    if (data == NULL || br_zk_reassignment_decode(data, (size_t)len, REASSIGN_PATH, &rs, &n, err,
                                                  sizeof err) != 0) {
        kp_free(data);
        br_error("controller: %s is unreadable, deleting it: %s", REASSIGN_PATH, err);
        rc = zoo_delete(c->zh, REASSIGN_PATH, st.version);
        return rc == ZOK || rc == ZNONODE || rc == ZBADVERSION ? 0 : -1;
    }
    kp_free(data);
    struct br_zk_topic_partition *refused = kp_calloc(n > 0 ? n : 1, sizeof *refused);
    if (refused == NULL) {
        kp_free(rs);
        return -1;
    }
    size_t nrefused = 0;
    size_t added = 0;
    int res = 0;
    for (size_t i = 0; i < n && res == 0; i++) {
        const struct br_zk_reassignment *r = &rs[i];
        if (find_move(c, r->tp.topic, r->tp.partition) != NULL) {
            continue; /* under way (and a partition listed twice: the first) */
        }
        const char *why = refusal(c, r);
        if (why != NULL) {
            char a[256];
            br_error("controller: the move of %s-%" PRId32 " to %s is refused: %s", r->tp.topic,
                     r->tp.partition,
                     ids_text(r->replicas, (int32_t)r->nreplicas, a, sizeof a), why);
            refused[nrefused++] = r->tp;
            continue;
        }
        struct move *nm = kp_realloc(c->moves, (c->nmoves + 1) * sizeof *nm);
        if (nm == NULL) {
            res = -1;
            break;
        }
        c->moves = nm;
        struct move *m = &c->moves[c->nmoves++];
        memset(m, 0, sizeof *m);
        (void)snprintf(m->topic, sizeof m->topic, "%s", r->tp.topic);
        m->partition = r->tp.partition;
        memcpy(m->replicas, r->replicas, r->nreplicas * sizeof *r->replicas);
        m->n = (int32_t)r->nreplicas;
        added++;
    }
    kp_free(rs);
    if (res == 0 && added > 0) {
        br_info("controller: %zu partition move(s) asked for", added);
        res = ctl_on_reassign_isr(c);
    }
    if (res == 0) {
        res = remove_from_znode(c, refused, nrefused);
    }
    kp_free(refused);
    return res;
}

int ctl_on_reassign_isr(struct br_controller *c)
{
    if (c->nmoves == 0) {
        return 0;
    }
    struct br_zk_topic_partition *done = kp_calloc(c->nmoves, sizeof *done);
    if (done == NULL) {
        return -1;
    }
    size_t ndone = 0;
    int res = 0;
    size_t k = 0;
    for (size_t i = 0; i < c->nmoves; i++) {
        bool over = false;
        if (res == 0) {
            res = step(c, &c->moves[i], &over);
        }
        if (over) {
            (void)snprintf(done[ndone].topic, sizeof done[ndone].topic, "%s", c->moves[i].topic);
            done[ndone++].partition = c->moves[i].partition;
        } else {
            c->moves[k++] = c->moves[i];
        }
    }
    c->nmoves = k;
    if (res == 0) {
        res = remove_from_znode(c, done, ndone);
    }
    kp_free(done);
    return res;
}
