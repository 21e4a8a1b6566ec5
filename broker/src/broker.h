/*
 * samsa-broker: the composition root. br_broker_start puts the parts
 * together (server/state.h holds them): the reactor with the broker as its
 * one user, the log dirs, the metadata store, every topic's logs with
 * recovery, the log cleaner, the I/O worker, the group coordinator; run
 * drives the reactor; stop drains, flushes and checkpoints.
 * @locality the main thread (which becomes the reactor thread)
 */
#ifndef SAMSA_BROKER_BROKER_H
#define SAMSA_BROKER_BROKER_H

#include "server/state.h"

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
