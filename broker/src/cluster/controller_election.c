/*
 * samsa-broker: the controller's partition leadership (Kafka's
 * PartitionStateMachine): a new partition's first leader, an offline
 * partition's election, and the preferred leaders; the elections
 * themselves are the pure functions of leader_election.c.
 */
#define _GNU_SOURCE

#include "cluster/controller_internal.h"

#include "base/logging.h"

#include <samsa-protocol/messages.h>

#include <inttypes.h>

/* ---------------------------------------------------------------- leadership */

/* A partition without a state: leader the first live assigned replica, ISR
 * the live assigned replicas, epoch 0 (Kafka's NewPartition -> Online). */
static int init_partition(struct br_controller *c, size_t ti, int32_t p)
{
    const struct ctl_topic *t = &c->topics[ti];
    struct ctl_partition *part = &t->parts[p];
    int32_t *isr = kp_calloc((size_t)part->nreplicas, sizeof *isr);
    if (isr == NULL) {
        return -1;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < part->nreplicas; i++) {
        if (ctl_is_live(c, part->replicas[i])) {
            isr[n++] = part->replicas[i];
        }
    }
    if (n == 0) {
        br_warn("controller: %s-%" PRId32 " has no live replica: it stays without a leader",
                t->name, p);
        kp_free(isr);
        return 0;
    }
    struct br_zk_partition_state s = {isr[0], 0, c->epoch, isr, (size_t)n};
    char *json = NULL;
    size_t len = 0;
    if (br_zk_partition_state_encode(&s, &json, &len) != 0) {
        kp_free(isr);
        return -1;
    }
    char path[BR_TOPIC_NAME_MAX + 64];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions", t->name);
    int rc = ctl_zcreate(c, path, NULL, 0, 0);
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%" PRId32, t->name, p);
    if (rc == ZOK || rc == ZNODEEXISTS) {
        rc = ctl_zcreate(c, path, NULL, 0, 0);
    }
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%" PRId32 "/state", t->name,
                   p);
    if (rc == ZOK || rc == ZNODEEXISTS) {
        rc = ctl_zcreate(c, path, json, len, 0);
    }
    kp_free(json);
    if (rc == ZNODEEXISTS) {
        kp_free(isr); /* made meanwhile (by an older controller): take it */
        return ctl_read_state(c, t->name, p, part);
    }
    if (rc != ZOK) {
        br_error("controller: creating %s failed: %s", path, zerror(rc));
        kp_free(isr);
        return -1;
    }
    kp_free(part->isr);
    part->has_state = true;
    part->leader = isr[0];
    part->leader_epoch = 0;
    part->controller_epoch = c->epoch;
    part->zk_version = 0;
    part->isr = isr;
    part->nisr = n;
    br_info("controller: %s-%" PRId32 " online: leader %" PRId32 ", %" PRId32 " in sync", t->name,
            p, part->leader, n);
    return ctl_lai_to_live_replicas(c, ti, p, true);
}

/*
 * Brings a partition with a state in line with the live brokers (Kafka's
 * OfflinePartition election and OfflineReplica transition): dead members
 * leave the ISR, never emptying it; a dead or absent leader is replaced by
 * the first live ISR member in assignment order, or with unclean election
 * by the first live assigned replica; with neither the leader is -1 and the
 * last ISR member stays. Changes are written with the epoch bumped and
 * LeaderAndIsr queued to the live replicas. 0 or -1.
 */
static int reconcile_partition(struct br_controller *c, size_t ti, int32_t p)
{
    const struct ctl_topic *t = &c->topics[ti];
    struct ctl_partition *part = &t->parts[p];
    for (int attempt = 0; attempt < 5; attempt++) {
        if (!part->has_state) {
            return init_partition(c, ti, p);
        }
        if (part->controller_epoch > c->epoch) {
            br_warn("controller: %s-%" PRId32 " was decided by a newer controller (epoch %" PRId32
                    "): left alone",
                    t->name, p, part->controller_epoch);
            return -1;
        }
        int32_t live_isr[BR_META_MAX_REPLICATION_FACTOR];
        int32_t nlive = 0;
        for (int32_t i = 0; i < part->nisr && nlive < BR_META_MAX_REPLICATION_FACTOR; i++) {
            if (ctl_is_live(c, part->isr[i])) {
                live_isr[nlive++] = part->isr[i];
            }
        }
        int32_t leader = part->leader;
        const int32_t *isr = live_isr;
        int32_t nisr = nlive;
        bool unclean = false;
        if (!ctl_is_live(c, leader) || !ctl_contains(part->isr, part->nisr, leader)) {
            int32_t live[BR_META_MAX_REPLICATION_FACTOR];
            int32_t shutting[BR_META_MAX_REPLICATION_FACTOR];
            struct br_election e;
            ctl_election_facts(c, part, live, shutting, &e);
            leader = br_elect_offline(&e, t->unclean, &unclean);
        }
        int32_t one[1];
        if (unclean) {
            one[0] = leader;
            isr = one;
            nisr = 1;
        } else if (nlive == 0) {
            /* the last ISR member stays, dead or not: never an empty ISR */
            isr = part->isr;
            nisr = part->nisr;
        }
        bool same_isr = nisr == part->nisr;
        for (int32_t i = 0; i < nisr && same_isr; i++) {
            same_isr = ctl_contains(part->isr, part->nisr, isr[i]);
        }
        if (leader == part->leader && same_isr) {
            return 0;
        }
        int rc = ctl_write_state(c, t, p, part, leader, isr, nisr);
        if (rc < 0) {
            return -1;
        }
        if (rc == 0) {
            if (leader < 0) {
                br_warn("controller: %s-%" PRId32 " has no live in-sync replica: no leader "
                        "(epoch %" PRId32 ")",
                        t->name, p, part->leader_epoch);
            } else {
                br_info("controller: %s-%" PRId32 ": leader %" PRId32 ", epoch %" PRId32
                        ", %" PRId32 " in sync%s",
                        t->name, p, leader, part->leader_epoch, nisr,
                        unclean ? " (unclean election: records may be lost)" : "");
            }
            return ctl_lai_to_live_replicas(c, ti, p, false);
        }
        /* the version moved: decide again on what ZooKeeper holds */
    }
    return -1;
}

int ctl_reconcile_all(struct br_controller *c)
{
    for (size_t i = 0; i < c->ntopics; i++) {
        if (ctl_is_deleting(c, c->topics[i].name)) {
            continue; /* no leaders are elected for a topic being deleted */
        }
        for (int32_t p = 0; p < c->topics[i].npartitions; p++) {
            if (reconcile_partition(c, i, p) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- preferred leaders */

/*
 * Gives partition p of topic ti to its preferred (first assigned) replica
 * when that replica is live and in the ISR (Kafka's
 * PreferredReplicaPartitionLeaderElectionStrategy): the ISR kept, the
 * epoch bumped, LeaderAndIsr queued to the live replicas. A state whose
 * version moved is read again and decided again. 1 moved, 0 not (led by
 * it already, or it cannot lead), -1 ZooKeeper failed.
 */
static int move_to_preferred(struct br_controller *c, size_t ti, int32_t p)
{
    struct ctl_topic *t = &c->topics[ti];
    struct ctl_partition *part = &t->parts[p];
    for (int attempt = 0; attempt < 3; attempt++) {
        if (!part->has_state || part->nreplicas == 0 || part->leader == part->replicas[0]) {
            return 0;
        }
        int32_t live[BR_META_MAX_REPLICATION_FACTOR];
        int32_t shutting[BR_META_MAX_REPLICATION_FACTOR];
        struct br_election e;
        ctl_election_facts(c, part, live, shutting, &e);
        int32_t id = br_elect_preferred(&e);
        if (id == BR_NO_LEADER) {
            return 0;
        }
        int32_t old = part->leader;
        int w = ctl_write_state(c, t, p, part, id, part->isr, part->nisr);
        if (w < 0) {
            return -1;
        }
        if (w == 0) {
            br_info("controller: %s-%" PRId32 ": leader %" PRId32
                    " (its preferred replica, was %" PRId32 "), epoch %" PRId32,
                    t->name, p, id, old, part->leader_epoch);
            return ctl_lai_to_live_replicas(c, ti, p, false) != 0 ? -1 : 1;
        }
        /* the version moved: part holds ZooKeeper's state, decide again */
    }
    return 0;
}

/* Kafka's checkAndTriggerAutoLeaderRebalance: 0 or -1 (ZooKeeper failed). */
int ctl_rebalance_leaders(struct br_controller *c)
{
    int moved = 0;
    for (size_t bi = 0; bi < c->nbrokers; bi++) {
        int32_t id = c->brokers[bi].id;
        if (ctl_is_shutting(c, id)) {
            continue;
        }
        int64_t preferred = 0;
        int64_t elsewhere = 0;
        for (size_t ti = 0; ti < c->ntopics; ti++) {
            const struct ctl_topic *t = &c->topics[ti];
            for (int32_t p = 0; p < t->npartitions; p++) {
                const struct ctl_partition *part = &t->parts[p];
                if (part->has_state && part->nreplicas > 0 && part->replicas[0] == id) {
                    preferred++;
                    elsewhere += part->leader != id ? 1 : 0;
                }
            }
        }
        if (preferred == 0 ||
            elsewhere * 100 <= (int64_t)c->cfg.leader_imbalance_percentage * preferred) {
            continue;
        }
        br_info("controller: broker %" PRId32 " leads %" PRId64 " of the %" PRId64
                " partitions it is the preferred leader of: moving them back",
                id, preferred - elsewhere, preferred);
        for (size_t ti = 0; ti < c->ntopics; ti++) {
            const struct ctl_topic *t = &c->topics[ti];
            if (ctl_is_deleting(c, t->name)) {
                continue;
            }
            for (int32_t p = 0; p < t->npartitions; p++) {
                const struct ctl_partition *part = &t->parts[p];
                if (!part->has_state || part->nreplicas == 0 || part->replicas[0] != id) {
                    continue;
                }
                int r = move_to_preferred(c, ti, p);
                if (r < 0) {
                    return -1;
                }
                moved += r;
            }
        }
    }
    if (moved > 0) {
        ctl_send_leader_and_isr(c);
        ctl_send_update_metadata(c);
    }
    return 0;
}

/*
 * Kafka's PreferredReplicaLeaderElection event (KafkaController.scala),
 * also run at failover (onControllerFailover: the pending elections
 * resumed): watches /admin/preferred_replica_election; when it exists,
 * each partition it lists (PreferredReplicaElectionZNode's document, the
 * same as an ISR change notification's) gets its preferred replica as
 * leader if that one is live and in sync; partitions of topics being
 * deleted or unknown are skipped; then the znode is deleted, whose
 * deletion fires the watch again and sets it for the next one. 0 or -1.
 */
int ctl_on_preferred_election(struct br_controller *c)
{
    static const char path[] = "/admin/preferred_replica_election";
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = ctl_zget(c, path, true, &data, &len, &st);
    if (rc == ZNONODE) {
        return 0; /* its creation is watched */
    }
    if (rc != ZOK) {
        return -1;
    }
    struct br_zk_topic_partition *tps = NULL;
    size_t n = 0;
    char err[256] = "the znode holds no data";
    if (data == NULL || br_zk_isr_change_decode(data, (size_t)len, path, &tps, &n, err,
                                                sizeof err) != 0) {
        br_warn("controller: ignoring %s: %s", path, err);
        n = 0;
    }
    kp_free(data);
    int moved = 0;
    int res = 0;
    for (size_t i = 0; i < n && res == 0; i++) {
        struct ctl_topic *t = ctl_find_topic(c, tps[i].topic);
        if (t == NULL || tps[i].partition >= t->npartitions) {
            br_warn("controller: no partition %s-%" PRId32 " for a preferred leader election",
                    tps[i].topic, tps[i].partition);
            continue;
        }
        if (ctl_is_deleting(c, t->name)) {
            br_warn("controller: skipping the preferred leader election of %s-%" PRId32
                    ": its topic is being deleted",
                    t->name, tps[i].partition);
            continue;
        }
        /* the state as ZooKeeper holds it (Kafka's
         * doElectLeaderForPartitions reads it too): the ISR a leader just
         * grew reaches the model only with its notification */
        int r = ctl_read_state(c, t->name, tps[i].partition, &t->parts[tps[i].partition]);
        if (r == 0) {
            r = move_to_preferred(c, (size_t)(t - c->topics), tps[i].partition);
        }
        res = r < 0 ? -1 : 0;
        moved += r > 0 ? 1 : 0;
        const struct ctl_partition *part = &t->parts[tps[i].partition];
        if (r >= 0 && part->nreplicas > 0 && part->leader != part->replicas[0]) {
            br_warn("controller: %s-%" PRId32 " failed to complete the preferred leader election "
                    "to %" PRId32 ": its leader is still %" PRId32,
                    t->name, tps[i].partition, part->replicas[0], part->leader);
        }
    }
    kp_free(tps);
    if (moved > 0) {
        ctl_send_leader_and_isr(c);
        ctl_send_update_metadata(c);
    }
    if (res != 0) {
        return -1;
    }
    br_info("controller: preferred leader election of %zu partitions done (%d moved)", n, moved);
    rc = zoo_delete(c->zh, path, -1);
    return rc == ZOK || rc == ZNONODE ? 0 : -1;
}
