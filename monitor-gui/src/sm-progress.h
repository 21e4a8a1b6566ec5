/* sm-progress.h: a stream "progress" message digested: what the model reads
 * of it, in plain structs, so that the JSON is parsed and read on a link's
 * parsing thread (sm-parse.h) and only this is applied on the model's
 * (sm_cluster_apply_progress). The one reading of a progress message: the
 * model's own JSON path (sm_cluster_apply_object) digests it here too.
 *
 * Parsed with jansson, not json-glib: json-glib's JsonParser emits a
 * GObject signal per value, each taking GLib's one global signal lock,
 * which the UI thread needs for every one of its own signals.
 *
 * @locality any thread: a pure function of the text */
#pragma once

#include <gio/gio.h>

#include "sm-partition.h"

G_BEGIN_DECLS

typedef struct {
    const char *topic; /* in the SmProgress's strings; NULL: none given */
    gint32 partition;
    gint32 leader;
    gboolean led_here;
    gint64 high_watermark;
    gint64 last_stable_offset; /* SM_OFFSET_UNKNOWN: not given */
    gint64 log_start_offset;
    gint64 log_end_offset;
    guint first_replica; /* into replicas */
    guint n_replicas;
} SmProgressEntry;

typedef struct {
    gint32 broker;
    gint64 time_ms;
    gint64 seq;            /* -1: none */
    GArray *entries;       /* SmProgressEntry, in the message's order */
    GArray *replicas;      /* SmReplica, every entry's */
    GStringChunk *strings; /* the topic names, each once */
} SmProgress;

/* the replicas read of one partition, as the model reads them too */
#define SM_PROGRESS_MAX_REPLICAS 64

/* (transfer full) the digest of data when it is a JSON object whose "type"
 * is "progress", otherwise NULL. Untrusted input: a missing or mistyped
 * field reads as unknown (-1, SM_OFFSET_UNKNOWN, FALSE), never a crash. */
SmProgress *sm_progress_new_from_text(const char *data, gsize len);
void sm_progress_free(SmProgress *pr);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SmProgress, sm_progress_free)

G_END_DECLS
