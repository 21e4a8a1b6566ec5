/*
 * samsa-broker: the open file limit and the budget of segment files.
 *
 * At start-up the broker raises its soft RLIMIT_NOFILE to the hard limit
 * (what Kafka's documentation asks operators to do, here done for them up
 * to what the hard limit allows), then sizes the file cache of the logs
 * (fileref.h): log.open.files.max when set, else half the limit, leaving
 * the other half to connections, listeners and the broker's own files.
 * Once the partitions are loaded it says in one line what they need and
 * what the limit is, and warns when the limit cannot hold the budget plus
 * max.connections.
 * @locality the main thread, at start-up
 */
#ifndef SAMSA_BROKER_FDLIMIT_H
#define SAMSA_BROKER_FDLIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Descriptors the broker needs besides segment files and connections:
 * listeners, epoll, signal, timer and event descriptors, log dir locks,
 * a directory or index file opened for one operation, checkpoint and
 * metadata files being written, the cleaner's jobs, the admin thread. */
#define BR_FDLIMIT_RESERVE 64

struct br_fdlimit {
    uint64_t soft_before; /* the soft limit the broker was started with */
    uint64_t soft;        /* after raising it */
    uint64_t hard;
    bool raise_failed;  /* the raise was refused (the limit stays soft_before) */
    size_t files_max;   /* the budget of open segment files */
    bool files_max_set; /* from log.open.files.max (else derived) */
};

/* Raises the soft limit to the hard one and picks the budget:
 * configured (> 0, log.open.files.max) or half the (raised) soft limit,
 * at least 1. Never fails: what it could not do is in *out. */
void br_fdlimit_init(int32_t configured, struct br_fdlimit *out);

/* The start-up line: partitions and segments found, the budget, the limit;
 * a warning when the limit is below the budget plus max.connections (when
 * the operator set it) plus BR_FDLIMIT_RESERVE, or leaves no room for any
 * connection at all. */
void br_fdlimit_report(const struct br_fdlimit *l, size_t partitions, size_t segments,
                       int32_t max_connections, bool max_connections_set);

#endif
