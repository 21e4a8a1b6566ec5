/* samsa-broker: this broker as a member of a cluster (see
 * cluster_member.h). */
#define _GNU_SOURCE

#include "cluster_member.h"

#include "admin_feed.h"

#include "base/clock.h"
#include "base/logging.h"
#include "cluster/controller.h"
#include "cluster/zk.h"
#include "cluster/zk_call.h"
#include "cluster/zk_json.h"
#include "security/interbroker.h"
#include "server/acl_zk.h"
#include "server/cluster_wait.h"
#include "replica/replication.h"
#include "server/request.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Kafka 2.0's ZkData.PersistentZkPaths (and the parents they need), made
 * by every broker at start, in an order where each parent comes first. */
static const char *const persistent_paths[] = {
    "/consumers",
    "/brokers",
    "/brokers/ids",
    "/brokers/topics",
    "/brokers/seqid",
    "/config",
    "/config/changes",
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/admin",
    "/admin/delete_topics",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
    "/cluster",
};
#define NPATHS (sizeof persistent_paths / sizeof persistent_paths[0])

/* how long a registration left by a previous session is waited out */
#define REGISTER_RETRY_MS 1000

struct br_cluster_member {
    struct br_broker *b;
    struct br_zk_call path_call;
    struct br_zk_call cluster_get_call;
    struct br_zk_call cluster_create_call;
    struct br_zk_call register_call;
    struct br_zk_call check_call;
    size_t paths_done;
    bool registered;
    struct br_timer retry;
    /* the session lost: its leaderships are fenced once it cannot be alive
     * any more (br_replication_fence) */
    struct br_timer fence;
    bool fenced;              /* br_replication_fence fenced some for this loss */
    bool expired;             /* ... and the session did expire (a new one does not unfence) */
    struct state_read *reads; /* fenced partitions' states being read */
};

/* A fenced partition's state znode, read once this broker registered again
 * (owned by the member's list until answered). */
struct state_read {
    struct br_zk_call call; /* first: the tag */
    struct br_cluster_member *m;
    struct state_read *next;
    char topic[BR_TOPIC_NAME_MAX + 1];
    int32_t partition;
};

#define MEMBER_OF(call, field)                                                                     \
    ((struct br_cluster_member *)(void *)((char *)(call)-offsetof(struct br_cluster_member, field)))

static void register_broker(struct br_cluster_member *m);
static void get_cluster_id(struct br_cluster_member *m);

static void request_failed(const char *what, int rc)
{
    br_error("ZooKeeper: %s: %s", what, kp_err_name(rc));
}

/* ---------------------------------------------------------------- the paths */

static void make_paths(struct br_cluster_member *m)
{
    m->paths_done = 0;
    for (size_t i = 0; i < NPATHS; i++) {
        int rc = br_zk_create(m->b->s.zk, persistent_paths[i], NULL, 0, BR_ZK_PERSISTENT,
                              br_zk_call_tag(&m->path_call));
        if (rc != 0) {
            request_failed("creating the persistent paths", rc);
            return;
        }
    }
}

static void path_done(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cluster_member *m = MEMBER_OF(call, path_call);
    if (r->rc != BR_ZK_OK && r->rc != BR_ZK_NODEEXISTS) {
        br_warn("ZooKeeper: creating %s: %s", r->path, br_zk_rc_name(r->rc));
    }
    /* answers come in the order of the requests: the last one ends it */
    if (++m->paths_done == NPATHS) {
        get_cluster_id(m);
    }
}

/* ---------------------------------------------------------------- /cluster/id */

static void get_cluster_id(struct br_cluster_member *m)
{
    int rc = br_zk_get(m->b->s.zk, "/cluster/id", false, br_zk_call_tag(&m->cluster_get_call));
    if (rc != 0) {
        request_failed("reading /cluster/id", rc);
    }
}

static void cluster_get_done(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cluster_member *m = MEMBER_OF(call, cluster_get_call);
    struct br_broker *b = m->b;
    if (r->rc == BR_ZK_NONODE) {
        /* the first broker of the cluster: its id becomes the cluster's */
        char *json = NULL;
        size_t len = 0;
        if (br_zk_cluster_id_encode(b->s.cluster_id, &json, &len) != 0) {
            br_error("cannot encode the cluster id");
            return;
        }
        int rc = br_zk_create(b->s.zk, "/cluster/id", json, len, BR_ZK_PERSISTENT,
                              br_zk_call_tag(&m->cluster_create_call));
        kp_free(json);
        if (rc != 0) {
            request_failed("creating /cluster/id", rc);
        }
        return;
    }
    if (r->rc != BR_ZK_OK) {
        br_warn("ZooKeeper: reading /cluster/id: %s", br_zk_rc_name(r->rc));
        return; /* the session's next CONNECTED tries again */
    }
    char id[BR_ZK_CLUSTER_ID_MAX + 1];
    char err[256];
    if (r->data == NULL ||
        br_zk_cluster_id_decode(r->data, r->data_len, "/cluster/id", id, err, sizeof err) != 0) {
        br_error("ZooKeeper: /cluster/id is unreadable (%s): the broker does not register",
                 r->data == NULL ? "no data" : err);
        return;
    }
    size_t idlen = strlen(id);
    if (idlen >= sizeof b->s.cluster_id) {
        br_error("ZooKeeper: /cluster/id holds an id of %zu bytes, more than Samsa keeps (%zu): "
                 "the broker does not register",
                 idlen, sizeof b->s.cluster_id - 1);
        return;
    }
    if (strcmp(id, b->s.cluster_id) != 0) {
        br_info("cluster id %s (from ZooKeeper; meta.properties says %s)", id, b->s.cluster_id);
        memcpy(b->s.cluster_id, id, idlen + 1);
    }
    register_broker(m);
}

static void cluster_create_done(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cluster_member *m = MEMBER_OF(call, cluster_create_call);
    if (r->rc == BR_ZK_OK) {
        br_info("cluster id %s written to ZooKeeper", m->b->s.cluster_id);
        register_broker(m);
    } else if (r->rc == BR_ZK_NODEEXISTS) {
        get_cluster_id(m); /* another broker was first */
    } else {
        br_warn("ZooKeeper: creating /cluster/id: %s", br_zk_rc_name(r->rc));
    }
}

/* ---------------------------------------------------------------- /brokers/ids/<id> */

static void register_broker(struct br_cluster_member *m)
{
    struct br_broker *b = m->b;
    /* every advertised listener with its security protocol, as Kafka's
     * BrokerInfo registers them (kafka/zk/ZkData.scala, BrokerIdZNode) */
    struct br_zk_endpoint ep[BR_CONFIG_MAX_LISTENERS];
    memset(ep, 0, sizeof ep);
    for (size_t i = 0; i < b->s.nadvertised; i++) {
        const struct br_advertised *a = &b->s.advertised[i];
        (void)snprintf(ep[i].listener, sizeof ep[i].listener, "%s", a->listener);
        (void)snprintf(ep[i].host, sizeof ep[i].host, "%s", a->host);
        ep[i].port = a->port;
        ep[i].security_protocol = (enum br_zk_security_protocol)a->security_protocol;
    }
    struct br_zk_broker reg;
    memset(&reg, 0, sizeof reg);
    reg.version = 4;
    reg.endpoints = ep;
    reg.n_endpoints = b->s.nadvertised;
    reg.jmx_port = -1;
    reg.timestamp_ms = br_now_wall_ms();
    /* broker.rack, as Kafka's BrokerInfo registers it (version 3+) */
    const char *rack = b->s.cfg.raw[BR_CFG_BROKER_RACK];
    if (rack != NULL && rack[0] != '\0') {
        reg.has_rack = true;
        (void)snprintf(reg.rack, sizeof reg.rack, "%s", rack);
    }
    const char *admin_url = br_admin_feed_url(b);
    if (admin_url != NULL) {
        (void)snprintf(reg.admin_endpoint, sizeof reg.admin_endpoint, "%s", admin_url);
    }
    char *json = NULL;
    size_t len = 0;
    if (br_zk_broker_encode(&reg, &json, &len) != 0) {
        br_error("cannot encode this broker's registration");
        return;
    }
    char path[64];
    (void)snprintf(path, sizeof path, "/brokers/ids/%" PRId32, b->s.node_id);
    int rc =
        br_zk_create(b->s.zk, path, json, len, BR_ZK_EPHEMERAL, br_zk_call_tag(&m->register_call));
    kp_free(json);
    if (rc != 0) {
        request_failed("registering", rc);
    }
}

static void state_read_free(struct state_read *sr)
{
    for (struct state_read **pp = &sr->m->reads; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == sr) {
            *pp = sr->next;
            break;
        }
    }
    kp_free(sr);
}

/* ZooKeeper still naming this broker the leader at the epoch it was fenced
 * in means the controller never moved the partition (it did not see the
 * session go: the broker came back before it read /brokers/ids), and sends
 * no LeaderAndIsr for it: it leads again. Otherwise the LeaderAndIsr that
 * moved it arrives and unfences it. */
static void state_read_done(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct state_read *sr = (struct state_read *)(void *)call;
    struct br_broker *b = sr->m->b;
    struct br_zk_partition_state st;
    char err[256];
    if (r->rc == BR_ZK_OK && r->data != NULL &&
        br_zk_partition_state_decode(r->data, r->data_len, r->path, &st, err, sizeof err) == 0) {
        struct br_topic *t = br_rm_find_topic(&b->s.rm, kp_str_c(sr->topic));
        struct br_partition *p =
            t != NULL && sr->partition < t->npartitions ? &t->partitions[sr->partition] : NULL;
        if (p != NULL && p->role == BR_ROLE_LEADER && st.leader == b->s.node_id &&
            st.leader_epoch == p->leader_epoch && br_partition_unfence(p)) {
            br_info("%s-%" PRId32 ": ZooKeeper still names this broker its leader in epoch %" PRId32
                    ": leading again",
                    sr->topic, sr->partition, p->leader_epoch);
        }
        br_zk_partition_state_clear(&st);
    }
    state_read_free(sr);
}

static void read_fenced_states(struct br_cluster_member *m)
{
    struct br_broker *b = m->b;
    for (size_t i = 0; i < b->s.rm.ntopics; i++) {
        struct br_topic *t = b->s.rm.topics[i];
        for (int32_t k = 0; k < t->npartitions; k++) {
            if (!t->partitions[k].fenced) {
                continue;
            }
            struct state_read *sr = kp_calloc(1, sizeof *sr);
            if (sr == NULL) {
                return; /* the LeaderAndIsr of a move still unfences */
            }
            sr->call.done = state_read_done;
            sr->m = m;
            sr->partition = k;
            (void)snprintf(sr->topic, sizeof sr->topic, "%s", t->name);
            char path[BR_TOPIC_NAME_MAX + 64];
            (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%" PRId32 "/state",
                           t->name, k);
            if (br_zk_get(b->s.zk, path, false, br_zk_call_tag(&sr->call)) != 0) {
                kp_free(sr);
                return;
            }
            sr->next = m->reads;
            m->reads = sr;
        }
    }
}

static void registered(struct br_cluster_member *m)
{
    m->registered = true;
    br_info("registered in ZooKeeper as broker %" PRId32 " of cluster %s (%s:%d)", m->b->s.node_id,
            m->b->s.cluster_id, m->b->s.advertised_host, m->b->s.advertised_port);
    read_fenced_states(m);
}

static void register_done(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cluster_member *m = MEMBER_OF(call, register_call);
    if (r->rc == BR_ZK_OK) {
        registered(m);
        return;
    }
    if (r->rc == BR_ZK_NODEEXISTS) {
        /* ours (a create that was answered late), or a previous run's */
        int rc = br_zk_get(m->b->s.zk, r->path, false, br_zk_call_tag(&m->check_call));
        if (rc != 0) {
            request_failed("reading this broker's registration", rc);
        }
        return;
    }
    br_warn("ZooKeeper: registering: %s", br_zk_rc_name(r->rc));
}

static void check_done(struct br_zk_call *call, const struct br_zk_result *r)
{
    struct br_cluster_member *m = MEMBER_OF(call, check_call);
    int64_t session = 0;
    uint8_t passwd[16];
    if (r->rc == BR_ZK_OK && r->has_stat && br_zk_session(m->b->s.zk, &session, passwd) == 0 &&
        r->stat.ephemeral_owner == session) {
        registered(m);
        return;
    }
    if (r->rc == BR_ZK_OK || r->rc == BR_ZK_NONODE) {
        br_warn("broker id %" PRId32 " is registered by another ZooKeeper session (this "
                "broker's previous run, until ZooKeeper ends it, or another broker with the "
                "same broker.id): trying again in %d ms",
                m->b->s.node_id, REGISTER_RETRY_MS);
        br_timer_arm(m->b->s.net, &m->retry, br_now_mono_ms() + REGISTER_RETRY_MS);
        return;
    }
    br_warn("ZooKeeper: reading this broker's registration: %s", br_zk_rc_name(r->rc));
}

static void retry_fire(void *ctx, struct br_timer *t)
{
    (void)ctx; /* the broker: the timer's owner is the member */
    struct br_cluster_member *m = t->owner;
    if (!m->registered && br_zk_state(m->b->s.zk) == BR_ZK_STATE_CONNECTED) {
        register_broker(m);
    }
}

static const struct br_timer_ops retry_timer = {"zookeeper registration", retry_fire};

#define FENCE_CHECK_MS 1000

static void fence(struct br_cluster_member *m, bool expired, const char *why)
{
    int64_t now = br_now_mono_ms();
    size_t n = br_replication_fence(m->b->s.replication, expired, now);
    if (n > 0) {
        m->fenced = true;
        br_warn("%s: %zu partition(s) led here fenced (NOT_LEADER_OR_FOLLOWER, no leader in "
                "Metadata) until the controller says who leads them",
                why, n);
    }
    if (expired) {
        br_timer_cancel(m->b->s.net, &m->fence);
    } else {
        /* while ZooKeeper stays unreachable: followers may fall silent later */
        br_timer_arm(m->b->s.net, &m->fence, now + FENCE_CHECK_MS);
    }
}

static void fence_fire(void *ctx, struct br_timer *t)
{
    (void)ctx;
    fence(t->owner, false,
          "ZooKeeper and every follower unreachable for zookeeper.session.timeout.ms");
}

static const struct br_timer_ops fence_timer = {"zookeeper session fence", fence_fire};

/* ---------------------------------------------------------------- the session */

static void on_session(void *ctx, struct br_zk *zk, enum br_zk_event ev)
{
    struct br_cluster_member *m = ctx;
    switch (ev) {
    case BR_ZK_EVENT_CONNECTED:
        br_info("ZooKeeper session connected");
        br_timer_cancel(m->b->s.net, &m->fence);
        if (m->fenced && !m->expired) {
            /* the same session: nothing was given away */
            size_t n = br_replication_unfence(m->b->s.replication);
            br_info("ZooKeeper session alive again: %zu fenced partition(s) led here again", n);
        }
        m->fenced = false;
        m->expired = false;
        br_replication_zk_connected(m->b->s.replication);
        if (!m->registered) {
            make_paths(m);
        }
        /* after the paths (answers come in order): the config changes
         * made while this session was away */
        br_cluster_config_changes(&m->b->s);
        /* the dynamic broker configs (DynamicBrokerConfig.initialize):
         * read again at each connection, changes missed meanwhile too */
        br_cluster_read_broker_configs(&m->b->s);
        br_acl_zk_start(&m->b->s);
        br_admin_feed_zk_connected(m->b);
        break;
    case BR_ZK_EVENT_DISCONNECTED:
        br_warn("ZooKeeper connection lost: reconnecting (the session lives on within "
                "zookeeper.session.timeout.ms)");
        if (!br_timer_armed(&m->fence)) {
            br_timer_arm(m->b->s.net, &m->fence,
                         br_now_mono_ms() + m->b->s.cfg.zookeeper_session_timeout_ms);
        }
        break;
    case BR_ZK_EVENT_EXPIRED:
        br_warn("ZooKeeper session expired: this broker's registration is gone; opening a new "
                "session to register again");
        m->registered = false;
        br_timer_cancel(m->b->s.net, &m->retry);
        fence(m, true, "ZooKeeper session expired");
        m->expired = true;
        if (br_zk_reopen(zk) != 0) {
            br_error("cannot open a new ZooKeeper session");
        }
        break;
    }
}

static void on_watch(void *ctx, struct br_zk *zk, enum br_zk_watch kind, const char *path)
{
    struct br_cluster_member *m = ctx;
    (void)zk;
    /* the admin requests' watches: deletions done, config changes */
    br_cluster_topics_watch(&m->b->s, kind, path);
    br_cluster_configs_watch(&m->b->s, kind, path);
    br_acl_zk_watch(&m->b->s, kind, path);
    br_admin_feed_zk_watch(m->b, kind, path);
}

static void on_done(void *ctx, struct br_zk *zk, uint64_t tag, const struct br_zk_result *r)
{
    (void)ctx;
    (void)zk;
    br_zk_call_done(tag, r);
}

static const struct br_zk_ops member_zk_ops = {on_session, on_watch, on_done};

int br_member_start(struct br_broker *b)
{
    struct br_cluster_member *m = kp_calloc(1, sizeof *m);
    if (m == NULL) {
        br_error("out of memory");
        return -1;
    }
    m->b = b;
    m->path_call.done = path_done;
    m->cluster_get_call.done = cluster_get_done;
    m->cluster_create_call.done = cluster_create_done;
    m->register_call.done = register_done;
    m->check_call.done = check_done;
    br_timer_init(&m->retry, &retry_timer, m);
    br_timer_init(&m->fence, &fence_timer, m);
    b->member = m;
    /* ZooKeeper's C client logs to stderr on its own threads, formatting
     * endpoints in a static buffer that two sessions (the broker's, the
     * controller's) would share: its logging is off, before either
     * session's threads start; the sessions' events are logged here */
    br_zk_library_logging_off();
    struct br_zk_config zc = {b->s.cfg.zookeeper_connect, b->s.cfg.zookeeper_session_timeout_ms};
    char err[256];
    if (br_zk_open(&zc, b->s.mailbox, &member_zk_ops, m, &b->s.zk, err, sizeof err) != 0) {
        br_error("zookeeper.connect: %s", err);
        return -1;
    }
    br_replication_set_zk(b->s.replication, b->s.zk);
    struct br_controller_config cc;
    memset(&cc, 0, sizeof cc);
    cc.broker_id = b->s.node_id;
    /* the controller's own session takes the chroot as ZooKeeper's client
     * does; the broker's session made it first */
    (void)snprintf(cc.zk_connect, sizeof cc.zk_connect, "%s", b->s.cfg.zookeeper_connect);
    cc.session_timeout_ms = b->s.cfg.zookeeper_session_timeout_ms;
    cc.socket_timeout_ms = m->b->s.cfg.controller_socket_timeout_ms;
    (void)snprintf(cc.inter_broker_listener, sizeof cc.inter_broker_listener, "%s",
                   b->s.cfg.inter_broker_listener_name);
    if (b->interbroker != NULL) {
        cc.security = *br_interbroker_security(b->interbroker);
    }
    cc.unclean_leader_election = b->s.cfg.unclean_leader_election_enable;
    cc.delete_topic_enable = b->s.cfg.delete_topic_enable;
    cc.auto_leader_rebalance = b->s.cfg.auto_leader_rebalance_enable;
    cc.leader_imbalance_percentage = b->s.cfg.leader_imbalance_per_broker_percentage;
    cc.leader_imbalance_check_ms = b->s.cfg.leader_imbalance_check_interval_seconds * 1000;
    if (br_controller_start(&cc, &b->s.controller) != 0) {
        br_error("cannot start the controller");
        return -1;
    }
    br_info("joining the cluster through ZooKeeper at %s", b->s.cfg.zookeeper_connect);
    return 0;
}

bool br_member_registered(const struct br_broker *b)
{
    return b->member != NULL && b->member->registered;
}

void br_member_stop(struct br_broker *b)
{
    br_controller_stop(b->s.controller);
    b->s.controller = NULL;
    if (b->member != NULL && b->s.net != NULL) {
        br_timer_cancel(b->s.net, &b->member->retry);
        br_timer_cancel(b->s.net, &b->member->fence);
    }
    br_zk_close(b->s.zk);
    b->s.zk = NULL;
    br_replication_set_zk(b->s.replication, NULL);
    while (b->member != NULL && b->member->reads != NULL) {
        state_read_free(b->member->reads);
    }
    kp_free(b->member);
    b->member = NULL;
}
