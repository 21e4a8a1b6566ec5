/*
 * samsa-broker: the controller's model and the functions its files share
 * (controller.c: the thread, the session, the events;
 * controller_model.c: the model's helpers and the event queue;
 * controller_channel.c: the senders to the brokers; controller_zk.c:
 * ZooKeeper's reads and writes; controller_election.c: leadership;
 * controller_shutdown.c: controlled shutdown; controller_delete.c: topic
 * deletion; controller_reassign.c: partition reassignment). Calls go one way: controller.c above the others,
 * controller_model.c below them. Not for the controller's users: they
 * include controller.h.
 * @locality the controller's thread, unless a field says otherwise
 */
#ifndef SAMSA_BROKER_CLUSTER_CONTROLLER_INTERNAL_H
#define SAMSA_BROKER_CLUSTER_CONTROLLER_INTERNAL_H

#include "cluster/controller.h"
#include "cluster/leader_election.h"
#include "cluster/metadata.h"
#include "cluster/topic_deletion.h"
#include "cluster/zk_json.h"

#include <zookeeper/zookeeper.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- events */

enum ev_kind {
    EV_ELECT = 1,           /* stand for election (start-up, /controller deleted) */
    EV_CONTROLLER,          /* /controller changed */
    EV_BROKERS,             /* /brokers/ids children changed */
    EV_TOPICS,              /* /brokers/topics children, or a topic's assignment, changed */
    EV_ISR_CHANGE,          /* /isr_change_notification children changed */
    EV_EXPIRED,             /* the session expired */
    EV_RETRY,               /* a handler failed: rebuild from ZooKeeper */
    EV_DELETE_TOPICS,       /* /admin/delete_topics children changed */
    EV_STOP_REPLICA_DONE,   /* a broker answered a StopReplica of a deletion */
    EV_CONTROLLED_SHUTDOWN, /* a broker asked to shut down (ControlledShutdown) */
    EV_PREFERRED_ELECTION,  /* /admin/preferred_replica_election made or deleted */
    EV_REASSIGN,            /* /admin/reassign_partitions made, changed or deleted */
    EV_REASSIGN_ISR,        /* the state of a partition being moved changed */
};

struct event {
    struct event *next;
    enum ev_kind kind;
    /* EV_STOP_REPLICA_DONE: which broker, which deletion, and whether
     * every partition was deleted */
    int32_t broker;
    uint64_t gen;
    bool ok;
    /* EV_CONTROLLED_SHUTDOWN (broker: who): whom to answer */
    br_controlled_shutdown_done cs_done;
    void *cs_ctx;
};

/* ---------------------------------------------------------------- the model */

/* The endpoints of a broker kept for UpdateMetadata; more are dropped. */
#define CTL_MAX_ENDPOINTS 16

struct ctl_broker {
    int32_t id;
    /* the endpoint the controller connects to: the first PLAINTEXT one
     * (brokers speak PLAINTEXT to each other), else the first */
    char host[BR_ZK_HOST_MAX + 1];
    int32_t port;
    char listener[BR_ZK_LISTENER_MAX + 1];
    int16_t security_protocol;
    /* every endpoint it registered, sent to all brokers in UpdateMetadata
     * so that each answers Metadata on every listener */
    struct br_zk_endpoint endpoints[CTL_MAX_ENDPOINTS];
    size_t nendpoints;
    bool has_rack;
    char rack[BR_ZK_RACK_MAX + 1];
    struct sender *sender; /* while the controller is active */
};

struct ctl_partition {
    int32_t *replicas; /* owned: the assignment, the first the preferred leader */
    int32_t nreplicas;
    bool has_state; /* a state znode exists */
    int32_t leader;
    int32_t leader_epoch;
    int32_t controller_epoch;
    int32_t zk_version;
    int32_t *isr; /* owned */
    int32_t nisr;
};

struct ctl_topic {
    char name[BR_TOPIC_NAME_MAX + 1];
    int32_t npartitions;
    struct ctl_partition *parts; /* owned */
    bool unclean;                /* unclean.leader.election.enable, topic over broker */
    bool seen;                   /* scratch: still in ZooKeeper */
};

/* A topic being deleted (Kafka's TopicDeletionManager), by name: its
 * replicas' brokers and where each stands (an enum deletion_state of
 * topic_deletion.h, which decides every move). */
struct deletion {
    char name[BR_TOPIC_NAME_MAX + 1];
    uint64_t gen;     /* tags its StopReplica requests */
    int32_t *brokers; /* owned: every broker holding a replica */
    uint8_t *state;   /* owned: enum deletion_state per broker */
    size_t n;
    bool announced; /* UpdateMetadata with leader -2 went out */
};

/* LeaderAndIsr to send, per broker: (topic, partition, is_new) */
struct lai_entry {
    size_t topic;
    int32_t partition;
    bool is_new;
};

struct lai_batch {
    int32_t broker;
    struct lai_entry *e;
    size_t n, cap;
};

/* A partition being moved (Kafka's ReassignedPartitionsContext): the
 * replicas it moves to (RAR), the first its preferred leader. */
struct move {
    char topic[BR_TOPIC_NAME_MAX + 1];
    int32_t partition;
    int32_t replicas[BR_ZK_REASSIGN_MAX_REPLICAS];
    int32_t n;
    bool started; /* this controller bumped its epoch and told the replicas */
};

/* An old replica of a finished move whose broker was down: it gets its
 * StopReplica when the broker comes back, unless the partition was
 * assigned to it again meanwhile (this controller's memory only: Kafka
 * 2.0 leaves such a replica on its disk). */
struct stray {
    char topic[BR_TOPIC_NAME_MAX + 1];
    int32_t partition;
    int32_t broker;
};

struct sender;
struct kp_StopReplicaRequest_StopReplicaPartitionV0;

struct br_controller {
    struct br_controller_config cfg;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct event *head, *tail; /* guarded by mu */
    bool stop;                 /* guarded by mu */
    bool connected;            /* guarded by mu: the session is connected */
    bool expired;              /* guarded by mu */
    atomic_bool active_flag;
    atomic_int epoch_flag;
    /* the controller thread's own */
    zhandle_t *zh;
    bool active;
    int32_t epoch;
    int32_t epoch_zk_version;
    struct ctl_broker *brokers; /* sorted by id */
    size_t nbrokers;
    struct ctl_topic *topics; /* sorted by name */
    size_t ntopics;
    struct lai_batch *lai; /* pending LeaderAndIsr, per broker */
    size_t nlai;
    struct deletion *deletions; /* topics being deleted */
    size_t ndeletions;
    /* brokers shutting down (ControlledShutdown): not chosen as leaders
     * while another in-sync replica can lead; forgotten when they go */
    int32_t *shutting;
    size_t nshutting;
    uint64_t next_gen;
    struct move *moves; /* partitions being moved */
    size_t nmoves;
    struct stray *strays; /* old replicas waiting for their broker */
    size_t nstrays;
};

/* controller_model.c */
bool ctl_contains(const int32_t *a, int32_t n, int32_t x);
struct ctl_broker *ctl_find_broker(struct br_controller *c, int32_t id);
struct deletion *ctl_find_deletion(struct br_controller *c, const char *name);
/* The facts of an election on part (leader_election.h): live and shutting
 * get the assigned replicas that are live and shutting down (room for
 * BR_META_MAX_REPLICATION_FACTOR each); part's arrays are borrowed. */
void ctl_election_facts(struct br_controller *c, const struct ctl_partition *part, int32_t *live,
                        int32_t *shutting, struct br_election *out);
void ctl_forget_shutting(struct br_controller *c, int32_t id);
bool ctl_is_deleting(struct br_controller *c, const char *name);
bool ctl_is_live(struct br_controller *c, int32_t id);
bool ctl_is_shutting(const struct br_controller *c, int32_t id);
int ctl_lai_add(struct br_controller *c, int32_t broker, size_t topic, int32_t partition,
                bool is_new);
int ctl_lai_to_live_replicas(struct br_controller *c, size_t ti, int32_t p, bool is_new);
void ctl_post(struct br_controller *c, enum ev_kind kind);
void ctl_post_event(struct br_controller *c, const struct event *what);
void ctl_topic_clear(struct ctl_topic *t);
/* Waits until the session is connected; false when it expired or the
 * controller stops. */
bool ctl_wait_connected(struct br_controller *c);

/* controller_channel.c */
void ctl_resign(struct br_controller *c, const char *why);
void ctl_send_leader_and_isr(struct br_controller *c);
void ctl_send_request(struct br_controller *c, struct sender *s, int16_t api_key,
                      int16_t api_version, const void *body);
void ctl_send_request_tagged(struct br_controller *c, struct sender *s, int16_t api_key,
                             int16_t api_version, const void *body, uint64_t gen);
/* StopReplica v0 of parts[0..n) to s, tagged with gen (0: none). */
void ctl_send_stop_replica(struct br_controller *c, struct sender *s,
                           struct kp_StopReplicaRequest_StopReplicaPartitionV0 *parts, int32_t n,
                           bool delete_partitions, uint64_t gen);
void ctl_send_update_metadata(struct br_controller *c);
struct sender *ctl_sender_start(struct br_controller *c, const struct ctl_broker *b,
                                int32_t timeout_ms);
void ctl_sender_stop(struct sender *s);

/* controller_zk.c */
int ctl_cmp_topic(const void *a, const void *b);
int32_t ctl_parse_id(const char *s);
int ctl_read_brokers(struct br_controller *c, struct ctl_broker **out, size_t *n);
int ctl_read_state(struct br_controller *c, const char *topic, int32_t p,
                   struct ctl_partition *part);
/* /brokers/topics/<name> decoded into *a (cleared by the caller), its
 * stat in *st: 0, 1 when it is gone, 2 when it is unreadable (err says
 * why), -1 when ZooKeeper failed. */
int ctl_read_assignment(struct br_controller *c, const char *name, bool watch,
                        struct br_zk_topic_assignment *a, struct Stat *st, char *err,
                        size_t errlen);
int ctl_read_topic(struct br_controller *c, const char *name, struct ctl_topic *t);
int ctl_write_state(struct br_controller *c, const struct ctl_topic *t, int32_t p,
                    struct ctl_partition *part, int32_t leader, const int32_t *isr, int32_t nisr);
int ctl_zcreate(struct br_controller *c, const char *path, const char *data, size_t len, int flags);
int ctl_zget(struct br_controller *c, const char *path, bool watch, char **data, int *len,
             struct Stat *stat);

/* controller_election.c */
int ctl_on_preferred_election(struct br_controller *c);
int ctl_rebalance_leaders(struct br_controller *c);
int ctl_reconcile_all(struct br_controller *c);

/* controller_reassign.c: /admin/reassign_partitions read (watched) and
 * the moves it asks for started; ctl_on_reassign_isr steps every move on. */
int ctl_on_reassign(struct br_controller *c);
int ctl_on_reassign_isr(struct br_controller *c);
/* Broker id came up: the old replicas of moves finished while it was
 * down are stopped and deleted. */
void ctl_reassign_broker_up(struct br_controller *c, int32_t id);

/* controller_shutdown.c */
int ctl_on_controlled_shutdown(struct br_controller *c, const struct event *e);

/* controller_delete.c */
void ctl_deletions_lost_broker(struct br_controller *c, int32_t broker);
struct ctl_topic *ctl_find_topic(struct br_controller *c, const char *name);
int ctl_on_delete_topics(struct br_controller *c);
int ctl_on_stop_replica_done(struct br_controller *c, const struct event *e);
int ctl_resume_deletions(struct br_controller *c);

#endif
