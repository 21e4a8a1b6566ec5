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

#include "admin/snapshot.h"

/* What a request for `path` gets: an HTTP status and a JSON body (an
 * error document {"error": {"status", "code", "message"}} when status is
 * not 200). snap may be NULL before the first snapshot. */
char *br_admin_document(const struct br_snapshot *snap, const char *path, guint *status);

/* A JSON error document. */
char *br_admin_error_json(guint status, const char *code, const char *message);

/* The Prometheus text exposition of snap. */
char *br_admin_metrics(const struct br_snapshot *snap);

/* The stream's events from old to snap (old may be NULL: none), each a
 * JSON text appended to out (char *, g_free) with the sequence number
 * *seq + 1, *seq + 2, ... (*seq is advanced). */
void br_admin_stream_events(const struct br_snapshot *old, const struct br_snapshot *snap,
                            guint64 *seq, GPtrArray *out);

/* The first message of a stream: where the sequence stands. */
char *br_admin_stream_hello(const struct br_snapshot *snap, guint64 seq, const char *stream_id);

#endif
