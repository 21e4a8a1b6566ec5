/* sm-parse.h: samsa-monitor's JSON parsed off the UI thread.
 *
 * An SmParser parses the texts pushed to it on a worker thread, strictly in
 * the order they were pushed, and hands each result back on the main
 * context that was the thread-default when it was made: one result per
 * main-loop iteration, so a burst of large messages cannot hold one turn
 * of the loop. A stream "progress" message comes back digested
 * (SmProgress: plain structs, no JSON left to read), anything else as its
 * parsed root object.
 *
 * The worker touches nothing but the text and what it makes: not the
 * model, not GTK. One parser per admin API link keeps each link's messages
 * and documents in order.
 *
 * @locality sm_parser_* on the owner's thread; the parsing on a worker */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "sm-cluster.h"

G_BEGIN_DECLS

typedef enum {
    SM_PARSE_STREAM,   /* a /v1/stream message */
    SM_PARSE_DOCUMENT, /* a GET's body */
} SmParseKind;

typedef struct {
    SmParseKind kind;
    char *path;           /* the document's path as pushed; NULL for the stream */
    JsonNode *root;       /* an object; NULL when digested or not a JSON object */
    SmProgress *progress; /* a stream "progress" message, digested; or NULL */
    char *type;           /* a stream message's "type" ("" when none) */
    gint64 seq;           /* a stream message's "seq" (-1 when none) */
    gint64 parse_us;      /* the worker's time on it */
} SmParsed;

/* called on the owner's main context with each result (transfer none: it
 * is freed after the call; steal root or progress to keep them) */
typedef void (*SmParsedFunc)(SmParsed *parsed, gpointer user_data);

typedef struct _SmParser SmParser;

/* (transfer full) */
SmParser *sm_parser_new(SmParsedFunc func, gpointer user_data);
/* queues text (referenced) for parsing; path: a document's, NULL for a
 * stream message */
void sm_parser_push(SmParser *self, SmParseKind kind, const char *path, GBytes *text);
/* texts pushed whose result has not been handed back yet */
guint sm_parser_pending(SmParser *self);
/* stops: results not handed back yet are dropped, func is not called
 * again; a text being parsed is finished and thrown away. NULL is a no-op. */
void sm_parser_free(SmParser *self);
/* parsers, freed or not, whose worker still holds their texts (any
 * thread): a freed parser's worker lets go once its text is parsed */
guint sm_parser_alive(void);

G_END_DECLS
