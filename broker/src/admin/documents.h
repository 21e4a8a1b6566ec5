/*
 * samsa-broker: the admin API's documents, rendered from one snapshot:
 * the JSON documents of /v1, the stream's events (the difference between
 * two snapshots) and the Prometheus text of /metrics. Pure functions of
 * their snapshots; the caller owns every string returned (g_free).
 *
 * @locality the admin thread
 */
#ifndef SAMSA_BROKER_ADMIN_DOCUMENTS_H
#define SAMSA_BROKER_ADMIN_DOCUMENTS_H

#include <glib.h>

#include "admin/peers.h"
#include "admin/rates.h"
#include "admin/snapshot.h"

/* What the admin thread knows of itself when it renders: its own
 * connections and CPU, which no snapshot of the reactor's has. */
struct br_admin_live {
    gint64 connections;    /* HTTP connections open, streams included */
    gint64 stream_clients; /* WebSocket stream clients */
    gint64 idle_closed;    /* connections closed for being idle, since the start */
    gint64 refused;        /* connections refused (admin.max.connections) */
    gint64 streams_stalled; /* stream clients cut off (admin.stream.max.stall.ms) */
    gint64 cpu_us;         /* the admin thread's CPU time */
    const struct br_admin_peers *peers; /* HWs of partitions led elsewhere, or NULL */
    const struct br_admin_rates *rates; /* the last minute's rates, or NULL */
};

/* A committed offset's HW and lag (HW - committed, at least 0): the
 * snapshot's when a replica is here, else its leader's as live->peers last
 * read it; *from is the broker whose HW it is, this one's id or the
 * leader's (-1, with *hw and *lag -1, when not known). */
void br_admin_lag(const struct br_snapshot *s, const struct br_admin_live *live,
                  const struct br_snap_lag *l, gint64 *hw, gint64 *lag, gint32 *from);

/* What a request for `path` gets: an HTTP status and a JSON body (an
 * error document {"error": {"status", "code", "message"}} when status is
 * not 200; "/" and "/v1" an index of the documents). snap may be NULL
 * before the first snapshot; live is shown in this broker's own
 * /v1/brokers/{id}. */
char *br_admin_document(const struct br_snapshot *snap, const struct br_admin_live *live,
                        const char *path, guint *status);

/* A JSON error document. */
char *br_admin_error_json(guint status, const char *code, const char *message);

/* The Prometheus text exposition of snap and live. */
char *br_admin_metrics(const struct br_snapshot *snap, const struct br_admin_live *live);

/* The stream's events from old to snap (old may be NULL: none), each a
 * JSON text appended to out (char *, g_free) with the sequence number
 * *seq + 1, *seq + 2, ... (*seq is advanced). */
void br_admin_stream_events(const struct br_snapshot *old, const struct br_snapshot *snap,
                            guint64 *seq, GPtrArray *out);

/* The first message of a stream: where the sequence stands. */
char *br_admin_stream_hello(const struct br_snapshot *snap, guint64 seq, const char *stream_id);

#endif
