/* sm-client.h: samsa-monitor's links to a cluster's admin APIs.
 *
 * From one broker's admin URL it finds every broker's (the model's
 * "admin-url"), and per broker follows /v1/stream and reads the documents
 * when the stream starts, restarts or skipped a sequence number. Groups have
 * no stream: their documents, the transactional ids (/v1/transactions),
 * the partition moves (/v1/reassignments) and the client quotas
 * (/v1/quotas) are read again every refresh interval. Each
 * broker's own /v1/brokers/{id} (its totals, for the throughput charts) is
 * read every chart interval, one request at a time per broker. A link
 * that fails or falls silent (no message nor pong for 30 s) is retried with
 * exponential backoff (0.5 s doubling to 10 s), shown on its broker's row
 * and in the status. Everything is asynchronous on the thread-default main
 * context: nothing here blocks. JSON is parsed per link on a worker thread
 * (sm-parse.h), in order, and only applied here.
 *
 * @locality GTK main thread */
#pragma once

#include <gio/gio.h>

#include "sm-cluster.h"

G_BEGIN_DECLS

#define SM_TYPE_CLIENT (sm_client_get_type())
G_DECLARE_FINAL_TYPE(SmClient, sm_client, SM, CLIENT, GObject)

/* (transfer full); cluster is referenced */
SmClient *sm_client_new(SmCluster *cluster);
/* starts from one broker's admin URL ("http://127.0.0.1:9095") */
void sm_client_connect(SmClient *self, const char *admin_url);
/* stops every link */
void sm_client_disconnect(SmClient *self);
void sm_client_set_refresh_seconds(SmClient *self, guint seconds);
/* how often each broker's totals are read (1 to 60 s; default 1) */
void sm_client_set_chart_seconds(SmClient *self, guint seconds);
/* (transfer none) "3 of 3 brokers connected", "reconnecting to ... in 2 s" */
const char *sm_client_get_status(SmClient *self);
/* links whose stream is open and heard from in the last 6 s (a ping
 * every 2 s: a paused broker answers no pong) */
guint sm_client_count_connected(SmClient *self);
/* TRUE when not every link is open and answering, or there is none: the
 * status line then says what is wrong ("connection refused", "not
 * answering for 7 s") */
gboolean sm_client_is_degraded(SmClient *self);

/* admin.auth.token (broker/README.md): sent as "Authorization: Bearer
 * TOKEN" on every request and the stream's upgrade; kept in memory only,
 * never written anywhere. Setting it reconnects every link. NULL or "":
 * none. */
void sm_client_set_token(SmClient *self, const char *token);
/* (transfer full) the token in the file at path, surrounding white space
 * stripped; NULL with error set when unreadable or empty */
char *sm_client_read_token_file(const char *path, GError **error) G_GNUC_WARN_UNUSED_RESULT;
/* The CA (PEM, one or more certificates) that signs the brokers' https
 * admin listeners (broker/README.md, admin.ssl.keystore.location), as the
 * session's GTlsDatabase instead of the system's; reconnects every link.
 * FALSE with error set when the file cannot be read as certificates. A
 * link whose certificate is not trusted is not retried (the status says
 * why) until this is called. */
gboolean sm_client_set_ca_file(SmClient *self, const char *path, GError **error)
    G_GNUC_WARN_UNUSED_RESULT;
/* TRUE while a broker refuses the monitor (401) */
gboolean sm_client_is_refused(SmClient *self);

/* reads /v1/topics/{topic} (its configs) from a broker whose link is
 * open; FALSE when none is */
gboolean sm_client_read_topic(SmClient *self, const char *topic);

/* An operator's abort of transactional id's open transaction: POST
 * /v1/transactions/{id}/abort to the admin API of broker coordinator (its
 * transaction coordinator), with the token (the broker refuses it
 * without one). FALSE from _finish with the broker's reason ("this
 * transactional id has no Ongoing transaction to abort (HTTP 409)") or
 * why it was not asked (no open link to that broker). */
void sm_client_abort_transaction_async(SmClient *self, gint32 coordinator, const char *id,
                                       GAsyncReadyCallback callback, gpointer ud);
gboolean sm_client_abort_transaction_finish(SmClient *self, GAsyncResult *res, GError **error)
    G_GNUC_WARN_UNUSED_RESULT;

/* what the links' JSON cost: parsed on workers, applied on this thread */
typedef struct {
    guint messages;       /* documents and stream messages applied */
    gint64 parse_us;      /* the workers' time, summed */
    gint64 apply_us;      /* this thread's time applying them, summed */
    gint64 apply_max_us;  /* the longest single apply */
} SmClientStats;

/* (transfer none) */
const SmClientStats *sm_client_get_stats(SmClient *self);

/* Signals: "status-changed" ()
 *          "unauthorized" (const char *url)  a broker answered 401; once
 *                                            until the token is set again */

G_END_DECLS
