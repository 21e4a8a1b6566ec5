/*
 * samsa-broker: the composition root. struct br_broker is composed of
 * the parts' own structs: what the request layer serves from (struct
 * br_server, server/state.h: the hosted topics, the managers, the requests
 * in flight) and what only the root runs (the membership of a cluster, the
 * controlled shutdown, the admin API's feed, the housekeeping timer, the
 * open-file budget). br_broker_start puts the parts together: the reactor
 * with the broker as its one user, the log dirs, the metadata store, every topic's logs with
 * recovery, the log cleaner, the I/O worker, the group coordinator; run
 * drives the reactor; stop drains, flushes and checkpoints.
 * @locality the main thread (which becomes the reactor thread)
 */
#ifndef SAMSA_BROKER_BROKER_H
#define SAMSA_BROKER_BROKER_H

#include <stdbool.h>

#include "base/fdlimit.h"
#include "reactor/net.h"
#include "server/state.h"

struct br_cluster_member;
struct br_shutdown;
struct br_admin_feed;
struct br_interbroker;

struct br_broker {
    struct br_server s; /* what the request layer serves from (server/state.h) */
    /* cluster mode (zookeeper.connect set): topics and leadership come
     * from the controller; the mode is tested here, in the root, alone */
    bool cluster;
    bool logs_loaded; /* br_broker_start got past loading every topic's logs */
    /* the open file limit and the budget of open segment files, which
     * every partition's log shares (fileref.h) */
    struct br_fdlimit fdlimit;
    struct br_timer housekeeping;
    struct br_watch mailbox_watch;      /* the mailbox's eventfd in the reactor's epoll */
    struct br_cluster_member *member;   /* this broker's registration (cluster_member.h) */
    struct br_shutdown *shutdown;       /* the handover at stop (controlled_shutdown.h) */
    struct br_admin_feed *admin_feed;   /* the admin API: what it publishes (admin_feed.h) */
    /* the TLS context of each SSL listener, by listener (net_tls.h) */
    struct br_tls_ctx *tls[BR_CONFIG_MAX_LISTENERS];
    /* the SASL of each SASL listener, by listener, and the SCRAM
     * credentials they share (security/sasl.h, security/credentials.h) */
    struct br_sasl_listener *sasl[BR_CONFIG_MAX_LISTENERS];
    struct br_scram_store *scram;
    /* what its connections to the other brokers speak (security/interbroker.h) */
    struct br_interbroker *interbroker;
};

/* Open everything (metadata, logs with recovery), bind the listeners. */
int br_broker_start(struct br_broker *b);
/* Run the reactor until a stop signal; then drain, flush and checkpoint. */
int br_broker_run(struct br_broker *b);
void br_broker_stop(struct br_broker *b);

/* The periodic work (flushes, retention, the cleaner's schedule,
 * checkpoints), run by a timer every second; rearms that timer. */
void br_broker_housekeeping(struct br_broker *b);
/* The mailbox is readable: handle every message. */
void br_broker_wake(struct br_broker *b);
/* The broker stops: every parked request answered now (the reactor's drain). */
void br_broker_complete_all_parked(struct br_broker *b);

#endif
