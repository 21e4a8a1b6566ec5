/* sm-client.c: samsa-monitor's links to the admin APIs (see sm-client.h). */
#include "sm-client.h"

#include <libsoup/soup.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "sm-parse.h"

#define BACKOFF_FIRST_MS 500u
#define BACKOFF_MAX_MS 10000u
#define SILENCE_MAX_US ((gint64)30 * G_USEC_PER_SEC)
/* a ping every KEEPALIVE_S: an open link that heard nothing (no message,
 * no pong) for QUIET_US has missed about three pongs and is shown "not
 * answering" (a broker paused, a cable cut) long before it is dropped */
#define KEEPALIVE_S 2u
#define QUIET_US ((gint64)6 * G_USEC_PER_SEC)
#define MAX_PAYLOAD (256u << 20) /* a progress message of 100,000 partitions */
#define REFETCH_MIN_US (G_USEC_PER_SEC / 2)
/* the broker closes a stream without the right token with this code
 * (HTTP's 401 in WebSocket's private range; broker/README.md): libsoup
 * 3.2's server completes the upgrade whatever its early handler said */
#define CLOSE_UNAUTHORIZED 4401

/* LINK_REFUSED: the admin API answered 401; not retried until a token is given.
 * LINK_UNTRUSTED: its https certificate is not trusted; not retried until a
 * CA is given (sm_client_set_ca_file) */
typedef enum {
    LINK_CONNECTING,
    LINK_OPEN,
    LINK_WAITING,
    LINK_REFUSED,
    LINK_UNTRUSTED
} LinkState;

typedef struct {
    SmClient *client; /* borrowed: the client owns the link */
    char *url;        /* the admin API's base, no trailing slash */
    gint32 broker;    /* -1 until its hello */
    LinkState state;
    guint attempt;
    guint retry_source;
    gint64 retry_at_us;
    SoupWebsocketConnection *ws;
    SoupMessage *ws_msg; /* the upgrade request, for its status on failure */
    GCancellable *cancel;
    char *stream_id;
    gint64 last_seq;
    gint64 heard_at_us;
    GHashTable *fetched_at; /* topic -> gint64 *: last /v1/topics/{t}/partitions asked */
    SmParser *parser; /* the link's JSON, parsed on a worker, applied in order */
    gboolean totals_asked; /* a /v1/brokers/{id} under way: the next waits */
    gboolean quiet_told;   /* the model told the broker is not heard */
    char *error;           /* why the last attempt failed, for people; NULL: none */
} Link;

struct _SmClient {
    GObject parent_instance;
    SmCluster *cluster;
    SoupSession *session;
    GPtrArray *links; /* Link *, owned */
    guint refresh_seconds;
    guint refresh_source;
    guint chart_seconds;
    guint chart_source;
    guint watchdog_source;
    char *status;
    char *token; /* admin.auth.token, in memory only; NULL: none */
    char *ca_file; /* the CA of https admin APIs (--ca-file); NULL: the system's */
    gboolean refused_told; /* "unauthorized" emitted since the last token */
    gulong admin_url_id, wants_id;
    SmClientStats stats;
};

enum { SIG_STATUS, SIG_UNAUTHORIZED, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PROP_0, PROP_REFRESH_SECONDS, PROP_CHART_SECONDS, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE(SmClient, sm_client, G_TYPE_OBJECT)

static void link_connect(Link *l);
static void link_lost(Link *l, const char *why);

/* ------------------------------------------------------------ status */

/* open and heard from within QUIET_US */
static gboolean link_answers(const Link *l, gint64 now)
{
    return l->state == LINK_OPEN && now - l->heard_at_us <= QUIET_US;
}

static int quiet_seconds(const Link *l, gint64 now)
{
    return (int)((now - l->heard_at_us) / G_USEC_PER_SEC);
}

/* the link lost or not answering: the broker's rates end now, not when a
 * reading would have been due (sm_cluster_broker_unheard); once per
 * silence */
static void tell_unheard(Link *l)
{
    if (!l->quiet_told && l->broker >= 0) {
        l->quiet_told = TRUE;
        sm_cluster_broker_unheard(l->client->cluster, l->broker);
    }
}

static void update_status(SmClient *self)
{
    guint open = 0;
    gint64 now = g_get_monotonic_time();
    const Link *waiting = NULL;
    const Link *refused = NULL;
    const Link *untrusted = NULL;
    const Link *quiet = NULL;
    for (guint i = 0; i < self->links->len; i++) {
        const Link *l = g_ptr_array_index(self->links, i);
        open += link_answers(l, now) ? 1 : 0;
        if (l->state == LINK_REFUSED && refused == NULL) {
            refused = l;
        }
        if (l->state == LINK_UNTRUSTED && untrusted == NULL) {
            untrusted = l;
        }
        if (l->state == LINK_WAITING && waiting == NULL) {
            waiting = l;
        }
        if (l->state == LINK_OPEN && !link_answers(l, now) && quiet == NULL) {
            quiet = l;
        }
        SmBroker *b = l->broker >= 0 ? sm_cluster_find_broker(self->cluster, l->broker) : NULL;
        if (b != NULL) {
            g_autofree char *text = NULL;
            if (link_answers(l, now)) {
                text = g_strdup("streaming");
            } else if (l->state == LINK_OPEN) {
                text = g_strdup_printf("not answering for %d s", quiet_seconds(l, now));
            } else if (l->state == LINK_CONNECTING) {
                text = g_strdup("connecting");
            } else if (l->state == LINK_REFUSED) {
                text = g_strdup("refused: needs the admin token");
            } else if (l->state == LINK_UNTRUSTED) {
                text = g_strdup("certificate not trusted");
            } else {
                gint64 left = (l->retry_at_us - now) / 1000;
                text = g_strdup_printf("%s; retrying in %.1f s", l->error ? l->error : "lost",
                                       (double)MAX(left, 0) / 1000.0);
            }
            if (g_strcmp0(b->link, text) != 0) {
                g_free(b->link);
                b->link = g_steal_pointer(&text);
                sm_broker_emit_changed(b);
            }
        }
    }
    g_autofree char *s = NULL;
    if (self->links->len == 0) {
        s = g_strdup("not connected");
    } else if (untrusted != NULL) {
        s = g_strdup_printf("%u of %u brokers connected; %s: its TLS certificate is not "
                            "trusted (%s): %s",
                            open, self->links->len, untrusted->url,
                            untrusted->error ? untrusted->error : "rejected",
                            self->ca_file != NULL
                                ? "the CA given with --ca-file does not sign it"
                                : "give the CA that signs it with --ca-file");
    } else if (refused != NULL) {
        s = g_strdup_printf("%u of %u brokers connected; %s refused the monitor (401 "
                            "Unauthorized): %s",
                            open, self->links->len, refused->url,
                            self->token != NULL
                                ? "the admin token given is not the broker's admin.auth.token"
                                : "its admin API needs a token (admin.auth.token): give it "
                                  "with --token-file or SAMSA_ADMIN_TOKEN, or in Connect");
    } else if (waiting != NULL) {
        gint64 left = (waiting->retry_at_us - now) / 1000;
        s = g_strdup_printf("%u of %u brokers connected; %s: %s; reconnecting in %.1f s "
                            "(attempt %u)",
                            open, self->links->len, waiting->url,
                            waiting->error ? waiting->error : "lost",
                            (double)MAX(left, 0) / 1000.0, waiting->attempt);
    } else if (quiet != NULL) {
        s = g_strdup_printf("%u of %u brokers connected; %s not answering for %d s", open,
                            self->links->len, quiet->url, quiet_seconds(quiet, now));
    } else {
        s = g_strdup_printf("%u of %u brokers connected", open, self->links->len);
    }
    if (g_strcmp0(s, self->status) != 0) {
        g_free(self->status);
        self->status = g_steal_pointer(&s);
        g_signal_emit(self, signals[SIG_STATUS], 0);
    }
}

const char *sm_client_get_status(SmClient *self)
{
    return self->status;
}

const SmClientStats *sm_client_get_stats(SmClient *self)
{
    return &self->stats;
}

guint sm_client_count_connected(SmClient *self)
{
    guint open = 0;
    gint64 now = g_get_monotonic_time();
    for (guint i = 0; i < self->links->len; i++) {
        open += link_answers(g_ptr_array_index(self->links, i), now) ? 1 : 0;
    }
    return open;
}

gboolean sm_client_is_degraded(SmClient *self)
{
    return self->links->len == 0 || sm_client_count_connected(self) < self->links->len;
}

/* ------------------------------------------------------------ documents */

typedef struct {
    Link *link;
    SoupMessage *msg;
    char *path;
    gboolean totals; /* the broker's own /v1/brokers/{id} */
} Get;

/* every request carries the token when there is one */
static void authorize(SmClient *self, SoupMessage *msg)
{
    if (self->token != NULL) {
        g_autofree char *value = g_strconcat("Bearer ", self->token, NULL);
        soup_message_headers_replace(soup_message_get_request_headers(msg), "Authorization",
                                     value);
        memset(value, 0, strlen(value));
    }
}

static void drop_ws(Link *l);

/* a link that would be refused again: stopped, not retried (state says why) */
static void link_stop(Link *l, LinkState state)
{
    drop_ws(l);
    if (l->cancel != NULL) {
        g_cancellable_cancel(l->cancel);
        g_clear_object(&l->cancel);
    }
    g_clear_handle_id(&l->retry_source, g_source_remove);
    l->totals_asked = FALSE;
    l->state = state;
}

/* a 401: retrying would only be refused again; the token has to change */
static void link_refused(Link *l)
{
    SmClient *self = l->client;
    link_stop(l, LINK_REFUSED);
    update_status(self);
    if (!self->refused_told) {
        self->refused_told = TRUE;
        g_signal_emit(self, signals[SIG_UNAUTHORIZED], 0, l->url);
    }
}

/* What GIO found wrong with a peer's certificate, for people. */
static const char *certificate_problem(GTlsCertificateFlags errors)
{
    if ((errors & G_TLS_CERTIFICATE_UNKNOWN_CA) != 0) {
        return "signed by an unknown CA";
    }
    if ((errors & G_TLS_CERTIFICATE_BAD_IDENTITY) != 0) {
        return "issued for another host name or address";
    }
    if ((errors & G_TLS_CERTIFICATE_EXPIRED) != 0) {
        return "expired";
    }
    if ((errors & G_TLS_CERTIFICATE_NOT_ACTIVATED) != 0) {
        return "not valid yet";
    }
    if ((errors & G_TLS_CERTIFICATE_REVOKED) != 0) {
        return "revoked";
    }
    return "not acceptable";
}

/* an https admin API whose certificate is not trusted: retrying would be
 * refused again by the same check; the CA has to change */
static void link_untrusted(Link *l, GTlsCertificateFlags errors)
{
    link_stop(l, LINK_UNTRUSTED);
    tell_unheard(l);
    g_free(l->error);
    l->error = g_strdup(certificate_problem(errors));
    g_debug("%s: certificate not trusted (GTlsCertificateFlags 0x%x)", l->url, (unsigned)errors);
    update_status(l->client);
}

static void get_group_docs(Link *l, JsonObject *groups);

/* the body of a GET, to the link's parser: on_parsed applies it */
static void got(GObject *source, GAsyncResult *res, gpointer ud)
{
    Get *g = ud;
    GError *err = NULL;
    GBytes *body = soup_session_send_and_read_finish(SOUP_SESSION(source), res, &err);
    /* cancelled: the link may be gone (freed, or its requests dropped with
     * its flags reset), so it is not touched */
    if (g->totals && !g_error_matches(err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        g->link->totals_asked = FALSE;
    }
    if (body != NULL) {
        guint status = soup_message_get_status(g->msg);
        if (status == SOUP_STATUS_OK) {
            sm_parser_push(g->link->parser, SM_PARSE_DOCUMENT, g->path, body);
        } else if (status == SOUP_STATUS_UNAUTHORIZED) {
            link_refused(g->link);
        } else {
            g_debug("GET %s%s: %u", g->link->url, g->path, status);
        }
        g_bytes_unref(body);
    } else {
        if (!g_error_matches(err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
            g_debug("GET %s%s: %s", g->link->url, g->path, err->message);
        }
        g_error_free(err);
    }
    g_object_unref(g->msg);
    g_free(g->path);
    g_free(g);
}

/* GET the document at path (already escaped) from l, into the model;
 * FALSE when it could not be asked */
static gboolean get_doc_full(Link *l, const char *path, gboolean totals)
{
    if (l->state == LINK_REFUSED || l->state == LINK_UNTRUSTED) {
        return FALSE;
    }
    g_autofree char *uri = g_strconcat(l->url, path, NULL);
    SoupMessage *msg = soup_message_new("GET", uri);
    if (msg == NULL) {
        return FALSE;
    }
    authorize(l->client, msg);
    Get *g = g_new0(Get, 1);
    g->link = l;
    g->msg = msg;
    g->path = g_strdup(path);
    g->totals = totals;
    soup_session_send_and_read_async(l->client->session, msg, G_PRIORITY_DEFAULT, l->cancel, got, g);
    return TRUE;
}

static void get_doc(Link *l, const char *path)
{
    (void)get_doc_full(l, path, FALSE);
}

/* the broker's own document, for its totals (the charts): one at a time
 * per link, so that a slow broker is not asked again before it answered */
static void get_totals(Link *l)
{
    if (l->broker < 0 || l->totals_asked) {
        return;
    }
    char path[48];
    (void)g_snprintf(path, sizeof path, "/v1/brokers/%d", (int)l->broker);
    l->totals_asked = get_doc_full(l, path, TRUE);
}

static void get_topic(Link *l, const char *topic)
{
    gint64 now = g_get_monotonic_time();
    gint64 *at = g_hash_table_lookup(l->fetched_at, topic);
    if (at != NULL && now - *at < REFETCH_MIN_US) {
        return;
    }
    if (at == NULL) {
        at = g_new(gint64, 1);
        g_hash_table_insert(l->fetched_at, g_strdup(topic), at);
    }
    *at = now;
    g_autofree char *esc = g_uri_escape_string(topic, NULL, FALSE);
    g_autofree char *path = g_strdup_printf("/v1/topics/%s/partitions", esc);
    get_doc(l, path);
}

static void get_group_docs(Link *l, JsonObject *groups)
{
    JsonNode *n = json_object_get_member(groups, "groups");
    if (n == NULL || !JSON_NODE_HOLDS_ARRAY(n)) {
        return;
    }
    JsonArray *a = json_node_get_array(n);
    for (guint i = 0; i < json_array_get_length(a) && i < 1000; i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (!JSON_NODE_HOLDS_OBJECT(e)) {
            continue;
        }
        const char *id = json_object_get_string_member_with_default(json_node_get_object(e),
                                                                    "group_id", NULL);
        if (id != NULL) {
            g_autofree char *esc = g_uri_escape_string(id, NULL, FALSE);
            g_autofree char *path = g_strconcat("/v1/groups/", esc, NULL);
            get_doc(l, path);
        }
    }
}

/* the topics document names the topics: each one's partitions follow */
static void get_topics_partitions(Link *l, JsonObject *doc)
{
    JsonNode *tn = json_object_get_member(doc, "topics");
    JsonArray *a = tn != NULL && JSON_NODE_HOLDS_ARRAY(tn) ? json_node_get_array(tn) : NULL;
    for (guint i = 0; a != NULL && i < json_array_get_length(a); i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (JSON_NODE_HOLDS_OBJECT(e)) {
            const char *name =
                json_object_get_string_member_with_default(json_node_get_object(e), "name", NULL);
            if (name != NULL) {
                get_topic(l, name);
            }
        }
    }
}

static void read_documents(Link *l)
{
    g_hash_table_remove_all(l->fetched_at);
    get_doc(l, "/v1/cluster");
    get_doc(l, "/v1/topics");
    get_doc(l, "/v1/groups");
    get_doc(l, "/v1/transactions");
    get_doc(l, "/v1/reassignments");
    get_doc(l, "/v1/quotas");
}

/* ------------------------------------------------------------ the stream */

static void on_message(SoupWebsocketConnection *ws, gint type, GBytes *data, gpointer ud)
{
    (void)ws;
    Link *l = ud;
    l->heard_at_us = g_get_monotonic_time();
    if (type == SOUP_WEBSOCKET_DATA_TEXT) {
        sm_parser_push(l->parser, SM_PARSE_STREAM, NULL, data);
    }
}

/* a stream message, parsed, in the stream's order */
static void take_stream_message(Link *l, SmParsed *r)
{
    JsonObject *m = r->root != NULL ? json_node_get_object(r->root) : NULL;
    if (m == NULL && r->progress == NULL) {
        return; /* not a JSON object */
    }
    gint64 seq = r->seq;
    if (strcmp(r->type, "hello") == 0) {
        const char *stream = json_object_get_string_member_with_default(m, "stream", "");
        /* another stream (the broker restarted) or missed messages: what
         * the model holds of this broker may be stale, read it again */
        gboolean fresh = l->stream_id == NULL || strcmp(stream, l->stream_id) != 0 ||
                         seq != l->last_seq;
        g_free(l->stream_id);
        l->stream_id = g_strdup(stream);
        l->last_seq = seq;
        l->broker = (gint32)json_object_get_int_member_with_default(m, "broker", -1);
        l->attempt = 0;
        l->state = LINK_OPEN;
        l->quiet_told = FALSE;
        g_clear_pointer(&l->error, g_free);
        if (fresh) {
            read_documents(l);
        } else {
            get_doc(l, "/v1/cluster");
        }
        get_totals(l); /* the first reading: a rate needs two */
        update_status(l->client);
        return;
    }
    if (l->last_seq >= 0 && seq != l->last_seq + 1) {
        read_documents(l); /* a gap */
    }
    l->last_seq = seq;
    if (r->progress != NULL) {
        sm_cluster_apply_progress(l->client->cluster, r->progress);
    } else {
        sm_cluster_apply_object(l->client->cluster, m);
    }
}

static void on_parsed(SmParsed *r, gpointer ud)
{
    Link *l = ud;
    SmClient *self = l->client;
    gint64 t0 = g_get_monotonic_time();
    if (r->kind == SM_PARSE_STREAM) {
        take_stream_message(l, r);
    } else if (r->root != NULL) {
        JsonObject *doc = json_node_get_object(r->root);
        sm_cluster_apply_object(self->cluster, doc);
        if (g_strcmp0(r->path, "/v1/topics") == 0) {
            get_topics_partitions(l, doc);
        } else if (g_strcmp0(r->path, "/v1/groups") == 0) {
            get_group_docs(l, doc);
        }
    } else {
        g_debug("GET %s%s: not a JSON object", l->url, r->path);
    }
    gint64 dt = g_get_monotonic_time() - t0;
    self->stats.messages++;
    self->stats.parse_us += r->parse_us;
    self->stats.apply_us += dt;
    self->stats.apply_max_us = MAX(self->stats.apply_max_us, dt);
}

static void on_pong(SoupWebsocketConnection *ws, GBytes *data, gpointer ud)
{
    (void)ws;
    (void)data;
    ((Link *)ud)->heard_at_us = g_get_monotonic_time();
}

static void on_closed(SoupWebsocketConnection *ws, gpointer ud)
{
    if (soup_websocket_connection_get_close_code(ws) == CLOSE_UNAUTHORIZED) {
        link_refused(ud);
        return;
    }
    link_lost(ud, "stream closed");
}

static void drop_ws(Link *l)
{
    if (l->ws != NULL) {
        g_signal_handlers_disconnect_by_data(l->ws, l);
        if (soup_websocket_connection_get_state(l->ws) == SOUP_WEBSOCKET_STATE_OPEN) {
            soup_websocket_connection_close(l->ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
        }
        g_clear_object(&l->ws);
    }
}

static gboolean retry(gpointer ud)
{
    Link *l = ud;
    l->retry_source = 0;
    link_connect(l);
    return G_SOURCE_REMOVE;
}

static void link_lost(Link *l, const char *why)
{
    drop_ws(l);
    /* what the lost stream had sent and was not applied yet is dropped:
     * its hello on the next connection reads the documents again */
    sm_parser_free(l->parser);
    l->parser = sm_parser_new(on_parsed, l);
    if (l->cancel != NULL) {
        g_cancellable_cancel(l->cancel);
        g_clear_object(&l->cancel);
    }
    l->totals_asked = FALSE;
    tell_unheard(l);
    g_free(l->error);
    l->error = g_strdup(why);
    guint ms = BACKOFF_FIRST_MS << MIN(l->attempt, 5u);
    ms = MIN(ms, BACKOFF_MAX_MS);
    /* up to a quarter more, so that links to a restarted cluster spread out */
    ms += (guint)g_random_int_range(0, (gint32)(ms / 4 + 1));
    l->attempt++;
    l->state = LINK_WAITING;
    l->retry_at_us = g_get_monotonic_time() + (gint64)ms * 1000;
    g_debug("%s: %s; retrying in %u ms", l->url, why, ms);
    if (l->retry_source != 0) {
        g_source_remove(l->retry_source);
    }
    l->retry_source = g_timeout_add(ms, retry, l);
    update_status(l->client);
}

static void ws_ready(GObject *source, GAsyncResult *res, gpointer ud)
{
    Link *l = ud;
    g_autoptr(GError) err = NULL;
    SoupWebsocketConnection *ws =
        soup_session_websocket_connect_finish(SOUP_SESSION(source), res, &err);
    if (ws == NULL) {
        if (g_error_matches(err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
            return;
        }
        GTlsCertificateFlags bad =
            l->ws_msg != NULL ? soup_message_get_tls_peer_certificate_errors(l->ws_msg) : 0;
        if (l->ws_msg != NULL && soup_message_get_status(l->ws_msg) == SOUP_STATUS_UNAUTHORIZED) {
            link_refused(l);
        } else if (bad != 0 || g_error_matches(err, G_TLS_ERROR, G_TLS_ERROR_BAD_CERTIFICATE)) {
            link_untrusted(l, bad);
        } else {
            link_lost(l, err->message);
        }
        return;
    }
    l->ws = ws;
    l->heard_at_us = g_get_monotonic_time();
    soup_websocket_connection_set_max_incoming_payload_size(ws, MAX_PAYLOAD);
    soup_websocket_connection_set_keepalive_interval(ws, KEEPALIVE_S);
    g_signal_connect(ws, "message", G_CALLBACK(on_message), l);
    g_signal_connect(ws, "pong", G_CALLBACK(on_pong), l);
    g_signal_connect(ws, "closed", G_CALLBACK(on_closed), l);
    /* the state becomes LINK_OPEN with the hello */
}

static void link_connect(Link *l)
{
    drop_ws(l);
    g_clear_object(&l->cancel);
    l->totals_asked = FALSE; /* one asked before still answers, harmlessly */
    l->cancel = g_cancellable_new();
    l->state = LINK_CONNECTING;
    g_autofree char *uri = g_strconcat(l->url, "/v1/stream", NULL);
    SoupMessage *msg = soup_message_new("GET", uri);
    if (msg == NULL) {
        link_lost(l, "not a URL");
        return;
    }
    /* the broker checks the token on the upgrade request too */
    authorize(l->client, msg);
    g_clear_object(&l->ws_msg);
    l->ws_msg = msg; /* taken */
    soup_session_websocket_connect_async(l->client->session, msg, NULL, NULL, G_PRIORITY_DEFAULT,
                                         l->cancel, ws_ready, l);
    update_status(l->client);
}

static void link_free(gpointer p)
{
    Link *l = p;
    if (l->retry_source != 0) {
        g_source_remove(l->retry_source);
    }
    drop_ws(l);
    if (l->cancel != NULL) {
        g_cancellable_cancel(l->cancel);
        g_object_unref(l->cancel);
    }
    sm_parser_free(l->parser);
    g_clear_object(&l->ws_msg);
    g_hash_table_unref(l->fetched_at);
    g_free(l->url);
    g_free(l->stream_id);
    g_free(l->error);
    g_free(l);
}

static Link *find_link(SmClient *self, const char *url)
{
    for (guint i = 0; i < self->links->len; i++) {
        Link *l = g_ptr_array_index(self->links, i);
        if (strcmp(l->url, url) == 0) {
            return l;
        }
    }
    return NULL;
}

static Link *ensure_link(SmClient *self, const char *url, gint32 broker)
{
    g_autofree char *base = g_strdup(url);
    gsize n = strlen(base);
    while (n > 0 && base[n - 1] == '/') {
        base[--n] = '\0';
    }
    Link *l = find_link(self, base);
    if (l == NULL) {
        l = g_new0(Link, 1);
        l->client = self;
        l->url = g_steal_pointer(&base);
        l->broker = broker;
        l->last_seq = -1;
        l->fetched_at = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        l->parser = sm_parser_new(on_parsed, l);
        g_ptr_array_add(self->links, l);
        link_connect(l);
    } else if (broker >= 0) {
        l->broker = broker;
    }
    return l;
}

/* ------------------------------------------------------------ the model's wishes */

static void on_admin_url(SmCluster *cluster, gint id, const char *url, gpointer ud)
{
    (void)cluster;
    ensure_link(SM_CLIENT(ud), url, id);
}

static void on_wants_partitions(SmCluster *cluster, gint id, const char *topic, gpointer ud)
{
    SmClient *self = SM_CLIENT(ud);
    SmBroker *b = sm_cluster_find_broker(cluster, id);
    if (b == NULL || b->admin_url == NULL) {
        return;
    }
    Link *l = find_link(self, b->admin_url);
    if (l != NULL && l->state == LINK_OPEN) {
        get_topic(l, topic);
    }
}

/* ------------------------------------------------------------ an operator's abort */

typedef struct {
    Link *link; /* valid while the task's cancellable (the link's) is not cancelled */
    SoupMessage *msg;
} Abort;

static void abort_free(gpointer p)
{
    Abort *a = p;
    g_object_unref(a->msg);
    g_free(a);
}

/* the broker's JSON error's message, or the HTTP reason */
static char *error_text(SoupMessage *msg, GBytes *body)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    gsize n = 0;
    const char *data = body != NULL ? g_bytes_get_data(body, &n) : NULL;
    if (data != NULL && json_parser_load_from_data(parser, data, (gssize)n, NULL)) {
        JsonNode *root = json_parser_get_root(parser);
        JsonObject *o = root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root)
                                                                      : NULL;
        JsonNode *e = o != NULL ? json_object_get_member(o, "error") : NULL;
        if (e != NULL && JSON_NODE_HOLDS_OBJECT(e)) {
            const char *m = json_object_get_string_member_with_default(json_node_get_object(e),
                                                                       "message", NULL);
            if (m != NULL) {
                return g_strdup_printf("%s (HTTP %u)", m, soup_message_get_status(msg));
            }
        }
    }
    return g_strdup_printf("HTTP %u %s", soup_message_get_status(msg),
                           soup_message_get_reason_phrase(msg) != NULL
                               ? soup_message_get_reason_phrase(msg)
                               : "");
}

static void aborted(GObject *source, GAsyncResult *res, gpointer ud)
{
    GTask *task = ud;
    Abort *a = g_task_get_task_data(task);
    GError *err = NULL;
    GBytes *body = soup_session_send_and_read_finish(SOUP_SESSION(source), res, &err);
    if (body == NULL) {
        g_task_return_error(task, err);
    } else if (soup_message_get_status(a->msg) == SOUP_STATUS_OK) {
        /* what the coordinator shows now; the LSO follows on the stream */
        get_doc(a->link, "/v1/transactions");
        g_task_return_boolean(task, TRUE);
    } else {
        g_autofree char *why = error_text(a->msg, body);
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", why);
    }
    if (body != NULL) {
        g_bytes_unref(body);
    }
    g_object_unref(task);
}

void sm_client_abort_transaction_async(SmClient *self, gint32 coordinator, const char *id,
                                       GAsyncReadyCallback callback, gpointer ud)
{
    g_return_if_fail(SM_IS_CLIENT(self) && id != NULL);
    GTask *task = g_task_new(self, NULL, callback, ud);
    SmBroker *b = sm_cluster_find_broker(self->cluster, coordinator);
    Link *l = b != NULL && b->admin_url != NULL ? find_link(self, b->admin_url) : NULL;
    if (l == NULL || l->state != LINK_OPEN) {
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED,
                                "the monitor has no open link to broker %d, its coordinator",
                                (int)coordinator);
        g_object_unref(task);
        return;
    }
    g_autofree char *esc = g_uri_escape_string(id, NULL, FALSE);
    g_autofree char *uri = g_strdup_printf("%s/v1/transactions/%s/abort", l->url, esc);
    SoupMessage *msg = soup_message_new("POST", uri);
    if (msg == NULL) {
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                                "not a URL: %s", uri);
        g_object_unref(task);
        return;
    }
    authorize(self, msg);
    Abort *a = g_new0(Abort, 1);
    a->link = l;
    a->msg = msg;
    g_task_set_task_data(task, a, abort_free);
    g_task_set_check_cancellable(task, FALSE);
    soup_session_send_and_read_async(self->session, msg, G_PRIORITY_DEFAULT, l->cancel, aborted,
                                     task);
}

gboolean sm_client_abort_transaction_finish(SmClient *self, GAsyncResult *res, GError **error)
{
    g_return_val_if_fail(g_task_is_valid(res, self), FALSE);
    return g_task_propagate_boolean(G_TASK(res), error);
}

static gboolean refresh_groups(gpointer ud)
{
    SmClient *self = SM_CLIENT(ud);
    for (guint i = 0; i < self->links->len; i++) {
        Link *l = g_ptr_array_index(self->links, i);
        if (l->state == LINK_OPEN) {
            get_doc(l, "/v1/groups");
            get_doc(l, "/v1/transactions");
            get_doc(l, "/v1/reassignments");
            get_doc(l, "/v1/quotas");
        }
    }
    return G_SOURCE_CONTINUE;
}

/* a link that hears nothing (a broker stopped, a cable cut) is retried; the
 * status shows the retries counting down */
static gboolean watchdog(gpointer ud)
{
    SmClient *self = SM_CLIENT(ud);
    gint64 now = g_get_monotonic_time();
    for (guint i = 0; i < self->links->len; i++) {
        Link *l = g_ptr_array_index(self->links, i);
        if (l->state == LINK_OPEN && now - l->heard_at_us > SILENCE_MAX_US) {
            link_lost(l, "silent for 30 s");
        } else if (l->state == LINK_OPEN && !link_answers(l, now)) {
            tell_unheard(l);
        } else if (link_answers(l, now)) {
            l->quiet_told = FALSE;
        }
    }
    update_status(self);
    return G_SOURCE_CONTINUE;
}

static gboolean read_totals(gpointer ud)
{
    SmClient *self = SM_CLIENT(ud);
    for (guint i = 0; i < self->links->len; i++) {
        Link *l = g_ptr_array_index(self->links, i);
        if (l->state == LINK_OPEN) {
            get_totals(l);
        }
    }
    return G_SOURCE_CONTINUE;
}

void sm_client_set_chart_seconds(SmClient *self, guint seconds)
{
    self->chart_seconds = CLAMP(seconds, 1, 60);
    g_clear_handle_id(&self->chart_source, g_source_remove);
    /* not g_timeout_add_seconds: its one-second grouping would read the
     * brokers at uneven intervals, and a chart of 1 s rates would show it */
    self->chart_source = g_timeout_add(self->chart_seconds * 1000, read_totals, self);
    g_source_set_name_by_id(self->chart_source, "samsa-monitor totals");
}

void sm_client_set_refresh_seconds(SmClient *self, guint seconds)
{
    self->refresh_seconds = MAX(seconds, 1);
    if (self->refresh_source != 0) {
        g_source_remove(self->refresh_source);
    }
    self->refresh_source = g_timeout_add_seconds(self->refresh_seconds, refresh_groups, self);
}

static void forget_token(SmClient *self)
{
    if (self->token != NULL) {
        memset(self->token, 0, strlen(self->token));
        g_clear_pointer(&self->token, g_free);
    }
}

/* every link again: those refused or untrusted, and those open */
static void reconnect_all(SmClient *self)
{
    for (guint i = 0; i < self->links->len; i++) {
        Link *l = g_ptr_array_index(self->links, i);
        l->attempt = 0;
        g_clear_handle_id(&l->retry_source, g_source_remove);
        link_connect(l);
    }
    update_status(self);
}

void sm_client_set_token(SmClient *self, const char *token)
{
    g_return_if_fail(SM_IS_CLIENT(self));
    forget_token(self);
    self->token = token != NULL && token[0] != '\0' ? g_strdup(token) : NULL;
    self->refused_told = FALSE;
    reconnect_all(self);
}

gboolean sm_client_set_ca_file(SmClient *self, const char *path, GError **error)
{
    g_return_val_if_fail(SM_IS_CLIENT(self) && path != NULL, FALSE);
    g_autoptr(GTlsDatabase) db = g_tls_file_database_new(path, error);
    if (db == NULL) {
        return FALSE;
    }
    soup_session_set_tls_database(self->session, db);
    g_free(self->ca_file);
    self->ca_file = g_strdup(path);
    reconnect_all(self);
    return TRUE;
}

char *sm_client_read_token_file(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &text, &len, error)) {
        return NULL;
    }
    if (len > 4096 || memchr(text, '\0', len) != NULL) {
        memset(text, 0, len);
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: not a token", path);
        return NULL;
    }
    char *token = g_strdup(g_strstrip(text));
    memset(text, 0, len);
    if (token[0] == '\0') {
        g_free(token);
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: empty", path);
        return NULL;
    }
    return token;
}

gboolean sm_client_is_refused(SmClient *self)
{
    for (guint i = 0; i < self->links->len; i++) {
        if (((Link *)g_ptr_array_index(self->links, i))->state == LINK_REFUSED) {
            return TRUE;
        }
    }
    return FALSE;
}

void sm_client_connect(SmClient *self, const char *admin_url)
{
    g_return_if_fail(SM_IS_CLIENT(self));
    ensure_link(self, admin_url, -1);
}

void sm_client_disconnect(SmClient *self)
{
    g_ptr_array_set_size(self->links, 0);
    update_status(self);
}

SmClient *sm_client_new(SmCluster *cluster)
{
    SmClient *self = g_object_new(SM_TYPE_CLIENT, NULL);
    self->cluster = g_object_ref(cluster);
    self->admin_url_id = g_signal_connect(cluster, "admin-url", G_CALLBACK(on_admin_url), self);
    self->wants_id =
        g_signal_connect(cluster, "wants-partitions", G_CALLBACK(on_wants_partitions), self);
    return self;
}

static void sm_client_dispose(GObject *object)
{
    SmClient *self = SM_CLIENT(object);
    if (self->links != NULL) {
        g_ptr_array_set_size(self->links, 0);
    }
    g_clear_handle_id(&self->refresh_source, g_source_remove);
    g_clear_handle_id(&self->chart_source, g_source_remove);
    g_clear_handle_id(&self->watchdog_source, g_source_remove);
    if (self->cluster != NULL) {
        g_clear_signal_handler(&self->admin_url_id, self->cluster);
        g_clear_signal_handler(&self->wants_id, self->cluster);
        g_clear_object(&self->cluster);
    }
    g_clear_object(&self->session);
    G_OBJECT_CLASS(sm_client_parent_class)->dispose(object);
}

static void sm_client_finalize(GObject *object)
{
    SmClient *self = SM_CLIENT(object);
    g_clear_pointer(&self->links, g_ptr_array_unref);
    g_free(self->status);
    g_free(self->ca_file);
    forget_token(self);
    G_OBJECT_CLASS(sm_client_parent_class)->finalize(object);
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    if (id == PROP_REFRESH_SECONDS) {
        sm_client_set_refresh_seconds(SM_CLIENT(object), g_value_get_uint(value));
    } else if (id == PROP_CHART_SECONDS) {
        sm_client_set_chart_seconds(SM_CLIENT(object), g_value_get_uint(value));
    } else {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    if (id == PROP_REFRESH_SECONDS) {
        g_value_set_uint(value, SM_CLIENT(object)->refresh_seconds);
    } else if (id == PROP_CHART_SECONDS) {
        g_value_set_uint(value, SM_CLIENT(object)->chart_seconds);
    } else {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void sm_client_class_init(SmClientClass *klass)
{
    G_OBJECT_CLASS(klass)->set_property = set_property;
    G_OBJECT_CLASS(klass)->get_property = get_property;
    props[PROP_REFRESH_SECONDS] =
        g_param_spec_uint("refresh-seconds", NULL, NULL, 1, 3600, 5,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
    props[PROP_CHART_SECONDS] =
        g_param_spec_uint("chart-seconds", NULL, NULL, 1, 60, 1,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(G_OBJECT_CLASS(klass), N_PROPS, props);
    G_OBJECT_CLASS(klass)->dispose = sm_client_dispose;
    G_OBJECT_CLASS(klass)->finalize = sm_client_finalize;
    signals[SIG_STATUS] = g_signal_new("status-changed", SM_TYPE_CLIENT, G_SIGNAL_RUN_LAST, 0,
                                       NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[SIG_UNAUTHORIZED] =
        g_signal_new("unauthorized", SM_TYPE_CLIENT, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                     G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void sm_client_init(SmClient *self)
{
    self->session = soup_session_new_with_options("timeout", 30, "idle-timeout", 60, NULL);
    self->links = g_ptr_array_new_with_free_func(link_free);
    self->status = g_strdup("not connected");
    self->watchdog_source = g_timeout_add(500, watchdog, self);
    sm_client_set_refresh_seconds(self, 5);
    sm_client_set_chart_seconds(self, 1);
}

gboolean sm_client_read_topic(SmClient *self, const char *topic)
{
    g_return_val_if_fail(SM_IS_CLIENT(self) && topic != NULL, FALSE);
    for (guint i = 0; i < self->links->len; i++) {
        Link *l = self->links->pdata[i];
        if (l->state == LINK_OPEN) {
            g_autofree char *esc = g_uri_escape_string(topic, NULL, FALSE);
            g_autofree char *path = g_strdup_printf("/v1/topics/%s", esc);
            get_doc(l, path);
            return TRUE;
        }
    }
    return FALSE;
}
