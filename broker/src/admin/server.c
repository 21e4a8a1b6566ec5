/* samsa-broker: the admin API's thread: libsoup's server on its own
 * GMainContext, the snapshot handed over by the reactor, the WebSocket
 * stream (see admin.h). */
#define _GNU_SOURCE

#include "admin/admin.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <inttypes.h>
#include <linux/sockios.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>

#include "admin/documents.h"
#include "admin/peers.h"
#include "admin/rates.h"
#include "base/logging.h"
#include "base/worker.h"

#define MAX_URL 300
#define MAX_PATH_BYTES 1024
#define STREAM_PATH "/v1/stream"
#define STREAM_KEEPALIVE_S 15
/* a stream client that leaves this much in the kernel's send queue at
 * every check for admin.stream.max.stall.ms is not reading */
#define STREAM_STALL_BYTES ((gint64)64 * 1024)
#define STREAM_STALL_CHECK_MS 1000
#define STREAM_STATE_KEY "samsa-stream"
/* the close code of a stream client without the token: HTTP's 401 in the
 * private-use range (RFC 6455 7.4.2), as the upgrade cannot answer 401 */
#define STREAM_CLOSE_UNAUTHORIZED 4401

struct br_admin {
    /* set by br_admin_start, read-only afterwards */
    struct br_admin_config cfg;
    struct br_admin_listener *listeners; /* owned copies */
    char *token;
    char *keystore;   /* admin.ssl.keystore.location, owned copy */
    char *truststore; /* admin.ssl.truststore.location, owned copy */
    char url[MAX_URL];
    int wake_fd;
    pthread_t thread;
    /* the reactor's hand-over: the latest snapshot not yet taken */
    pthread_mutex_t lock;
    pthread_cond_t ready_cond;
    struct br_snapshot *pending; /* under lock */
    bool ready;                  /* under lock: the thread bound or failed */
    int start_rc;                /* under lock */
    char start_err[512];         /* under lock */
    atomic_bool quit;
    /* the admin thread's own */
    GMainContext *ctx;
    GMainLoop *loop;
    SoupServer *server;
    GSocketService *service;
    GTlsCertificate *tls_cert; /* https listeners' (their source object) */
    GTlsDatabase *tls_db;      /* the CA of client certificates, or NULL */
    struct br_snapshot *current;
    GPtrArray *streams; /* SoupWebsocketConnection *, referenced */
    guint64 seq;        /* the stream's last sequence number */
    char stream_id[40];
    int connections;
    GHashTable *conns; /* the peer's "address:port" -> struct admin_conn * (owned) */
    GSource *idle_check;
    struct br_admin_peers *peers; /* HWs of partitions led elsewhere */
    struct br_admin_rates *rates; /* the last minute's counts, sampled */
    GPtrArray *waiting;           /* SoupServerMessage *, paused for peers, referenced */
    gint64 refused;
    gint64 idle_closed;
    GSource *stall_check;
    gint64 streams_stalled;
};

/* A stream client's, on its SoupWebsocketConnection (g_free'd with it). */
struct stream_state {
    gint64 stalled_since_us; /* monotonic; 0: not stalled at the last check */
    char peer[];             /* its connection's key in conns */
};

/* An accepted connection, until its last reference goes. */
struct admin_conn {
    struct br_admin *a;
    char *peer;             /* the key: the remote "address:port" */
    GSocket *sock;          /* the connection's own */
    gint64 idle_since_us;   /* monotonic; 0 while a request is under way */
    gboolean stream;        /* upgraded to the WebSocket stream: never idle */
    gboolean closing;       /* shut down for being idle */
};

/* A connection's key. libsoup 3.2 knows no GSocket of a connection handed
 * over with soup_server_accept_iostream (soup_server_message_get_socket is
 * NULL), but it has the peer's address. */
static char *peer_key(GSocketAddress *addr)
{
    if (!G_IS_INET_SOCKET_ADDRESS(addr)) {
        return NULL;
    }
    GInetSocketAddress *isa = G_INET_SOCKET_ADDRESS(addr);
    char *ip = g_inet_address_to_string(g_inet_socket_address_get_address(isa));
    char *key = g_strdup_printf("%s:%u", ip, (unsigned)g_inet_socket_address_get_port(isa));
    g_free(ip);
    return key;
}

static struct admin_conn *conn_of(struct br_admin *a, SoupServerMessage *msg)
{
    char *key = peer_key(soup_server_message_get_remote_address(msg));
    struct admin_conn *ac = key != NULL ? g_hash_table_lookup(a->conns, key) : NULL;
    g_free(key);
    return ac;
}

const char *br_admin_url(const struct br_admin *a)
{
    return a->url;
}

void br_admin_publish(struct br_admin *a, struct br_snapshot *snap)
{
    pthread_mutex_lock(&a->lock);
    struct br_snapshot *old = a->pending;
    a->pending = snap;
    pthread_mutex_unlock(&a->lock);
    br_snap_unref(old); /* a snapshot the admin thread never took */
    uint64_t one = 1;
    /* a full counter (never in practice) still leaves the fd readable */
    (void)!write(a->wake_fd, &one, sizeof one);
}

/* ------------------------------------------------------------ responses */

static void respond(SoupServerMessage *msg, guint status, const char *type, char *body)
{
    soup_server_message_set_status(msg, status, NULL);
    SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
    soup_message_headers_replace(h, "Cache-Control", "no-store");
    soup_server_message_set_response(msg, type, SOUP_MEMORY_TAKE, body, strlen(body));
}

static void respond_error(SoupServerMessage *msg, guint status, const char *code,
                          const char *message)
{
    respond(msg, status, "application/json", br_admin_error_json(status, code, message));
}

/* Constant-time comparison of the bearer token. */
static gboolean token_ok(const struct br_admin *a, SoupServerMessage *msg)
{
    if (a->token == NULL) {
        return TRUE;
    }
    const char *auth =
        soup_message_headers_get_one(soup_server_message_get_request_headers(msg), "Authorization");
    if (auth == NULL || g_ascii_strncasecmp(auth, "Bearer ", 7) != 0) {
        return FALSE;
    }
    const char *given = auth + 7;
    size_t n = strlen(given);
    size_t m = strlen(a->token);
    unsigned diff = n == m ? 0U : 1U;
    for (size_t i = 0; i < m; i++) {
        diff |= (unsigned)(unsigned char)a->token[i] ^ (unsigned)(unsigned char)given[i < n ? i : 0];
    }
    return diff == 0;
}

/* The transactional id of POST /v1/transactions/{id}/abort, its length in
 * *len (at least one byte); NULL for any other path. */
static const char *action_txn_id(const char *path, size_t *len)
{
    static const char prefix[] = "/v1/transactions/";
    static const char suffix[] = "/abort";
    size_t n = strlen(path);
    if (strncmp(path, prefix, sizeof prefix - 1) != 0 ||
        n <= sizeof prefix - 1 + sizeof suffix - 1 ||
        strcmp(path + n - (sizeof suffix - 1), suffix) != 0) {
        return NULL;
    }
    *len = n - (sizeof prefix - 1) - (sizeof suffix - 1);
    return path + sizeof prefix - 1;
}

static gboolean is_action(const char *path)
{
    size_t len = 0;
    return action_txn_id(path, &len) != NULL;
}

/* Every request first: the token, the method, no body, a bounded path,
 * the stream's room. A refusal answers here (libsoup then skips the
 * handlers and reads no body). */
static void early_handler(SoupServer *server, SoupServerMessage *msg, const char *path,
                          GHashTable *query, gpointer ud)
{
    (void)server;
    (void)query;
    struct br_admin *a = ud;
    const char *method = soup_server_message_get_method(msg);
    SoupMessageHeaders *req = soup_server_message_get_request_headers(msg);
    if (!token_ok(a, msg)) {
        soup_message_headers_replace(soup_server_message_get_response_headers(msg),
                                     "WWW-Authenticate", "Bearer realm=\"samsa-admin\"");
        respond_error(msg, SOUP_STATUS_UNAUTHORIZED, "UNAUTHORIZED",
                      "this admin API needs Authorization: Bearer <admin.auth.token>");
        return;
    }
    gboolean action = is_action(path);
    if (action && strcmp(method, "POST") == 0 && a->token == NULL) {
        respond_error(msg, SOUP_STATUS_FORBIDDEN, "TOKEN_REQUIRED",
                      "an operator's action needs admin.auth.token set on the broker (and sent "
                      "as Authorization: Bearer <token>)");
        return;
    }
    if (!(action && strcmp(method, "POST") == 0) && strcmp(method, "GET") != 0 &&
        strcmp(method, "HEAD") != 0) {
        soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Allow",
                                     action ? "POST" : "GET, HEAD");
        respond_error(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED",
                      "the admin API is read-only but for POST /v1/transactions/{id}/abort: "
                      "changes go through the Kafka protocol");
        return;
    }
    if (soup_message_headers_get_encoding(req) != SOUP_ENCODING_NONE &&
        soup_message_headers_get_encoding(req) != SOUP_ENCODING_EOF &&
        !(soup_message_headers_get_encoding(req) == SOUP_ENCODING_CONTENT_LENGTH &&
          soup_message_headers_get_content_length(req) == 0)) {
        respond_error(msg, SOUP_STATUS_REQUEST_ENTITY_TOO_LARGE, "BODY_NOT_ALLOWED",
                      "requests to the admin API carry no body");
        return;
    }
    if (strlen(path) > MAX_PATH_BYTES) {
        respond_error(msg, SOUP_STATUS_REQUEST_URI_TOO_LONG, "URI_TOO_LONG", "the path is too long");
        return;
    }
    if (strcmp(path, STREAM_PATH) == 0 &&
        (a->streams->len >= (guint)a->cfg.max_stream_clients)) {
        respond_error(msg, SOUP_STATUS_SERVICE_UNAVAILABLE, "TOO_MANY_STREAMS",
                      "the stream serves admin.stream.max.clients clients at once");
        return;
    }
}

static void live_now(const struct br_admin *a, struct br_admin_live *out)
{
    struct timespec ts = {0, 0};
    (void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    *out = (struct br_admin_live){a->connections,
                                  (gint64)a->streams->len,
                                  a->idle_closed,
                                  a->refused,
                                  a->streams_stalled,
                                  (gint64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000,
                                  a->peers,
                                  a->rates};
}

/* What shows group lag: /metrics, /v1/groups and /v1/groups/{group}. */
static gboolean shows_lag(const char *path)
{
    return strcmp(path, "/metrics") == 0 || strcmp(path, "/v1/groups") == 0 ||
           strncmp(path, "/v1/groups/", 11) == 0;
}

/* The topic of /v1/topics/{topic} (a trailing slash allowed), or NULL. */
static char *topic_of(const char *path)
{
    static const char prefix[] = "/v1/topics/";
    if (strncmp(path, prefix, sizeof prefix - 1) != 0) {
        return NULL;
    }
    const char *t = path + sizeof prefix - 1;
    size_t n = strcspn(t, "/");
    if (n == 0 || (t[n] == '/' && t[n + 1] != '\0')) {
        return NULL;
    }
    return g_strndup(t, n);
}

static void serve(struct br_admin *a, SoupServerMessage *msg, const char *path);

/* The reads of the other brokers' HWs are over: answer who waited. */
static void peers_refreshed(gpointer ud)
{
    struct br_admin *a = ud;
    for (guint i = 0; i < a->waiting->len; i++) {
        SoupServerMessage *msg = g_ptr_array_index(a->waiting, i);
        serve(a, msg, g_uri_get_path(soup_server_message_get_uri(msg)));
        soup_server_message_unpause(msg);
    }
    g_ptr_array_set_size(a->waiting, 0);
}

/* ------------------------------------------------------------ operator actions */

/* An action in flight: the reactor holds it from submit to
 * br_admin_action_done, then the admin thread's GMainContext. */
struct pending_action {
    struct br_admin_action act; /* first: what the reactor sees */
    GMainContext *ctx;          /* referenced: the admin thread's */
    SoupServerMessage *msg;     /* referenced, paused */
    char *id;                   /* the transactional id, decoded (g_free) */
};

static void pending_action_free(gpointer p)
{
    struct pending_action *pa = p;
    g_object_unref(pa->msg);
    g_main_context_unref(pa->ctx);
    g_free(pa->id);
    g_free(pa);
}

/* Admin thread: the reactor's answer, as HTTP. */
static gboolean action_answer(gpointer p)
{
    struct pending_action *pa = p;
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "transactional_id");
    json_builder_add_string_value(jb, pa->id);
    json_builder_set_member_name(jb, "result");
    json_builder_add_string_value(jb, "aborted");
    json_builder_end_object(jb);
    JsonNode *root = json_builder_get_root(jb);
    char *ok = json_to_string(root, FALSE);
    json_node_unref(root);
    g_object_unref(jb);
    switch (pa->act.error) {
    case KP_ERR_NONE:
        br_info("admin API: transactional id \"%s\": aborted by an operator", pa->id);
        respond(pa->msg, SOUP_STATUS_OK, "application/json", ok);
        ok = NULL;
        break;
    case KP_ERR_INVALID_PRODUCER_ID_MAPPING:
        respond_error(pa->msg, SOUP_STATUS_NOT_FOUND, "NOT_FOUND",
                      "no such transactional id (this broker's transaction coordinator does not "
                      "know it)");
        break;
    case KP_ERR_INVALID_TXN_STATE:
        respond_error(pa->msg, SOUP_STATUS_CONFLICT, "INVALID_TXN_STATE",
                      "this transactional id has no Ongoing transaction to abort");
        break;
    default:
        respond_error(pa->msg, SOUP_STATUS_SERVICE_UNAVAILABLE, kp_err_name(pa->act.error),
                      "the transaction coordinator could not abort the transaction");
        break;
    }
    g_free(ok);
    soup_server_message_unpause(pa->msg);
    return G_SOURCE_REMOVE;
}

void br_admin_action_done(struct br_admin_action *act)
{
    struct pending_action *pa = (struct pending_action *)(void *)act;
    g_main_context_invoke_full(pa->ctx, G_PRIORITY_DEFAULT, action_answer, pa,
                               pending_action_free);
}

/* POST /v1/transactions/{id}/abort (the early handler checked the token):
 * paused until the reactor answers. libsoup hands handlers the path
 * decoded (an id's "%2F" is a '/' there, as it is in the request's URI), so
 * the id is everything between "/v1/transactions/" and "/abort". */
static void action_handler(struct br_admin *a, SoupServerMessage *msg, const char *path)
{
    size_t len = 0;
    const char *at = action_txn_id(path, &len);
    if (at == NULL || a->cfg.ops == NULL) {
        respond_error(msg, SOUP_STATUS_NOT_FOUND, "NOT_FOUND", "no such document");
        return;
    }
    struct pending_action *pa = g_new0(struct pending_action, 1);
    pa->ctx = g_main_context_ref(a->ctx);
    pa->msg = g_object_ref(msg);
    pa->id = g_strndup(at, len);
    pa->act.transactional_id = pa->id;
    pa->act.transactional_id_len = len;
    soup_server_message_pause(msg);
    a->cfg.ops->submit(a->cfg.ops_ctx, &pa->act);
}

static void document_handler(SoupServer *server, SoupServerMessage *msg, const char *path,
                             GHashTable *query, gpointer ud)
{
    (void)server;
    (void)query;
    struct br_admin *a = ud;
    if (strcmp(soup_server_message_get_method(msg), "POST") == 0) {
        action_handler(a, msg, path);
        return;
    }
    /* what another broker knows first (at most BR_ADMIN_PEERS_TIMEOUT_S):
     * the HWs of partitions led elsewhere for a group's lag, the configs
     * of a topic hosted elsewhere; never for another broker's own read */
    gboolean from_peer = soup_message_headers_get_one(soup_server_message_get_request_headers(msg),
                                                      BR_ADMIN_PEER_HEADER) != NULL;
    char *topic = from_peer ? NULL : topic_of(path);
    gboolean wait = FALSE;
    if (a->current != NULL && !from_peer && shows_lag(path)) {
        wait = br_admin_peers_refresh(a->peers, a->current);
    } else if (a->current != NULL && topic != NULL) {
        wait = br_admin_peers_refresh_topic(a->peers, a->current, topic);
    }
    g_free(topic);
    if (wait) {
        g_ptr_array_add(a->waiting, g_object_ref(msg));
        soup_server_message_pause(msg);
        return;
    }
    serve(a, msg, path);
}

static void serve(struct br_admin *a, SoupServerMessage *msg, const char *path)
{
    struct br_admin_live live;
    live_now(a, &live);
    if (strcmp(path, "/metrics") == 0) {
        if (a->current == NULL) {
            respond_error(msg, SOUP_STATUS_SERVICE_UNAVAILABLE, "NOT_READY",
                          "the broker has published no state yet");
            return;
        }
        respond(msg, SOUP_STATUS_OK, "text/plain; version=0.0.4; charset=utf-8",
                br_admin_metrics(a->current, &live));
        return;
    }
    if (strcmp(path, STREAM_PATH) == 0) {
        respond_error(msg, SOUP_STATUS_BAD_REQUEST, "WEBSOCKET_EXPECTED",
                      "/v1/stream is a WebSocket: send an Upgrade request");
        return;
    }
    guint status = 200;
    char *body = br_admin_document(a->current, &live, path, &status);
    respond(msg, status, "application/json", body);
}

/* ------------------------------------------------------------ the stream */

static void stream_closed(SoupWebsocketConnection *ws, gpointer ud)
{
    struct br_admin *a = ud;
    if (g_ptr_array_remove(a->streams, ws)) {
        g_object_unref(ws);
    }
}

static void stream_message(SoupWebsocketConnection *ws, gint type, GBytes *data, gpointer ud)
{
    (void)type;
    (void)data;
    (void)ud;
    /* read-only: a client has nothing to say */
    soup_websocket_connection_close(ws, SOUP_WEBSOCKET_CLOSE_POLICY_VIOLATION,
                                    "the stream takes no messages");
}

static void stream_handler(SoupServer *server, SoupServerMessage *msg, const char *path,
                           SoupWebsocketConnection *ws, gpointer ud)
{
    (void)server;
    (void)path;
    struct br_admin *a = ud;
    /* libsoup 3.2 answers the handshake whatever the early handler said:
     * a client without the token, or over the bound, is closed at once,
     * before any message */
    if (!token_ok(a, msg)) {
        soup_websocket_connection_close(ws, STREAM_CLOSE_UNAUTHORIZED,
                                        "this stream needs Authorization: Bearer "
                                        "<admin.auth.token>");
        return;
    }
    if (a->streams->len >= (guint)a->cfg.max_stream_clients) {
        soup_websocket_connection_close(ws, SOUP_WEBSOCKET_CLOSE_SERVER_ERROR,
                                        "too many stream clients");
        return;
    }
    struct admin_conn *ac = conn_of(a, msg);
    if (ac != NULL) {
        ac->stream = TRUE;
        size_t len = ac->peer != NULL ? strlen(ac->peer) : 0;
        struct stream_state *st = g_malloc0(sizeof *st + len + 1);
        memcpy(st->peer, ac->peer != NULL ? ac->peer : "", len);
        g_object_set_data_full(G_OBJECT(ws), STREAM_STATE_KEY, st, g_free);
    }
    soup_websocket_connection_set_max_incoming_payload_size(ws, 4096);
    soup_websocket_connection_set_keepalive_interval(ws, STREAM_KEEPALIVE_S);
    g_ptr_array_add(a->streams, g_object_ref(ws));
    g_signal_connect(ws, "closed", G_CALLBACK(stream_closed), a);
    g_signal_connect(ws, "message", G_CALLBACK(stream_message), a);
    char *hello = br_admin_stream_hello(a->current, a->seq, a->stream_id);
    soup_websocket_connection_send_text(ws, hello);
    g_free(hello);
}

static void broadcast(struct br_admin *a, GPtrArray *events)
{
    for (guint i = 0; i < a->streams->len; i++) {
        SoupWebsocketConnection *ws = g_ptr_array_index(a->streams, i);
        if (soup_websocket_connection_get_state(ws) != SOUP_WEBSOCKET_STATE_OPEN) {
            continue;
        }
        for (guint k = 0; k < events->len; k++) {
            soup_websocket_connection_send_text(ws, g_ptr_array_index(events, k));
        }
    }
}

/* The reactor published: take the snapshot, tell the streams what changed. */
static gboolean wake(gint fd, GIOCondition cond, gpointer ud)
{
    (void)cond;
    struct br_admin *a = ud;
    uint64_t v = 0;
    (void)!read(fd, &v, sizeof v);
    if (atomic_load(&a->quit)) {
        g_main_loop_quit(a->loop);
        return G_SOURCE_CONTINUE;
    }
    pthread_mutex_lock(&a->lock);
    struct br_snapshot *snap = a->pending;
    a->pending = NULL;
    pthread_mutex_unlock(&a->lock);
    if (snap == NULL) {
        return G_SOURCE_CONTINUE;
    }
    GPtrArray *events = g_ptr_array_new_with_free_func(g_free);
    br_admin_stream_events(a->current, snap, &a->seq, events);
    broadcast(a, events);
    g_ptr_array_unref(events);
    br_snap_unref(a->current);
    a->current = snap;
    br_admin_rates_add(a->rates, snap);
    return G_SOURCE_CONTINUE;
}

/* ------------------------------------------------------------ connections */

static void admin_conn_free(gpointer p)
{
    struct admin_conn *ac = p;
    g_free(ac->peer);
    g_free(ac);
}

static void connection_gone(gpointer ud, GObject *where_the_object_was)
{
    (void)where_the_object_was;
    struct admin_conn *ac = ud;
    struct br_admin *a = ac->a;
    a->connections--;
    if (ac->peer == NULL || g_hash_table_lookup(a->conns, ac->peer) != ac) {
        admin_conn_free(ac); /* not in the table (no address, or replaced) */
        return;
    }
    g_hash_table_remove(a->conns, ac->peer); /* frees ac */
}

/* A request read: under way until its response is finished or aborted. */
static void request_read(SoupServer *server, SoupServerMessage *msg, gpointer ud)
{
    (void)server;
    struct br_admin *a = ud;
    struct admin_conn *ac = conn_of(a, msg);
    if (ac != NULL) {
        ac->idle_since_us = 0;
    }
}

static void request_done(SoupServer *server, SoupServerMessage *msg, gpointer ud)
{
    (void)server;
    struct br_admin *a = ud;
    struct admin_conn *ac = conn_of(a, msg);
    if (ac != NULL) {
        ac->idle_since_us = g_get_monotonic_time();
    }
}

/* Connections with no request under way for admin.connections.max.idle.ms
 * (a keep-alive client gone quiet, or one that never finished sending its
 * request) are shut down: libsoup reads the end and lets them go. */
static gboolean idle_check(gpointer ud)
{
    struct br_admin *a = ud;
    gint64 now = g_get_monotonic_time();
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, a->conns);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct admin_conn *ac = value;
        if (ac->stream || ac->closing || ac->idle_since_us == 0 ||
            now - ac->idle_since_us < a->cfg.idle_ms * 1000) {
            continue;
        }
        ac->closing = TRUE;
        a->idle_closed++;
        (void)g_socket_shutdown(ac->sock, TRUE, TRUE, NULL);
    }
    return G_SOURCE_CONTINUE;
}

/* Bytes the kernel still holds to send on sock (sent and not acknowledged
 * included); -1 when not known. */
static gint64 unsent_bytes(GSocket *sock)
{
    int n = 0;
    if (sock == NULL || ioctl(g_socket_get_fd(sock), SIOCOUTQ, &n) != 0) {
        return -1;
    }
    return n;
}

/* Stream clients that do not read: libsoup 3.2 queues what it cannot
 * write without a bound it exposes, so a client whose kernel send queue
 * held at least STREAM_STALL_BYTES at every check for
 * admin.stream.max.stall.ms is cut off (its queue goes with it). A client
 * that reconnects learns from the sequence numbers that it missed events
 * and reads the documents again. */
static gboolean stall_check(gpointer ud)
{
    struct br_admin *a = ud;
    gint64 now = g_get_monotonic_time();
    for (guint i = 0; i < a->streams->len; i++) {
        GObject *ws = g_ptr_array_index(a->streams, i);
        struct stream_state *st = g_object_get_data(ws, STREAM_STATE_KEY);
        struct admin_conn *ac = st != NULL ? g_hash_table_lookup(a->conns, st->peer) : NULL;
        if (ac == NULL || ac->closing) {
            continue;
        }
        if (unsent_bytes(ac->sock) < STREAM_STALL_BYTES) {
            st->stalled_since_us = 0;
            continue;
        }
        if (st->stalled_since_us == 0) {
            st->stalled_since_us = now;
            continue;
        }
        if (now - st->stalled_since_us >= a->cfg.stall_ms * 1000) {
            ac->closing = TRUE;
            a->streams_stalled++;
            br_warn("admin API: stream client %s left %" PRId64 " KiB or more unread for %" PRId64
                    " ms: cut off (admin.stream.max.stall.ms)",
                    st->peer, STREAM_STALL_BYTES / 1024, (now - st->stalled_since_us) / 1000);
            (void)g_socket_shutdown(ac->sock, TRUE, TRUE, NULL);
        }
    }
    return G_SOURCE_CONTINUE;
}

static const char busy_body[] =
    "{\"error\":{\"status\":503,\"code\":\"TOO_MANY_CONNECTIONS\",\"message\":\"the admin "
    "API serves admin.max.connections connections at once\"}}\n";

/* A client's certificate, verified by GIO against
 * admin.ssl.truststore.location's CA: GIO leaves the decision to the
 * server (this signal comes for every client certificate), which takes
 * one without errors and says why it refuses another. */
static gboolean client_certificate(GTlsConnection *tls, GTlsCertificate *peer,
                                   GTlsCertificateFlags errors, gpointer ud)
{
    (void)tls;
    (void)peer;
    (void)ud;
    if (errors == 0) {
        return TRUE;
    }
    br_info("admin API: a client certificate refused (%s, GTlsCertificateFlags 0x%x)",
            (errors & G_TLS_CERTIFICATE_UNKNOWN_CA) != 0      ? "not signed by the truststore's CA"
            : (errors & G_TLS_CERTIFICATE_EXPIRED) != 0       ? "expired"
            : (errors & G_TLS_CERTIFICATE_NOT_ACTIVATED) != 0 ? "not valid yet"
                                                              : "not valid",
            (unsigned)errors);
    return FALSE;
}

/* A new connection: counted (its last reference gone uncounts it) and
 * handed to libsoup, or refused over admin.max.connections. */
static gboolean incoming(GSocketService *service, GSocketConnection *conn, GObject *source,
                         gpointer ud)
{
    (void)service;
    struct br_admin *a = ud;
    /* an https listener's source object is its certificate */
    gboolean https = source != NULL;
    if (a->connections >= a->cfg.max_connections && https) {
        /* no TLS handshake for a refusal: the client sees a closed connection */
        (void)g_io_stream_close(G_IO_STREAM(conn), NULL, NULL);
        a->refused++;
        return TRUE;
    }
    if (a->connections >= a->cfg.max_connections) {
        GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(conn));
        char head[160];
        int n = snprintf(head, sizeof head,
                         "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                         "Connection: close\r\nContent-Length: %zu\r\n\r\n",
                         sizeof busy_body - 1);
        /* a fresh socket's buffer takes these few bytes without blocking */
        if (n > 0 && (size_t)n < sizeof head) {
            (void)g_output_stream_write_all(out, head, (size_t)n, NULL, NULL, NULL);
            (void)g_output_stream_write_all(out, busy_body, sizeof busy_body - 1, NULL, NULL, NULL);
        }
        (void)g_io_stream_close(G_IO_STREAM(conn), NULL, NULL);
        a->refused++;
        return TRUE;
    }
    GSocketAddress *local = g_socket_connection_get_local_address(conn, NULL);
    GSocketAddress *remote = g_socket_connection_get_remote_address(conn, NULL);
    GError *err = NULL;
    GIOStream *stream = G_IO_STREAM(conn);
    if (https) {
        /* libsoup is handed the TLS connection: it reads and writes
         * through it, GIO handshakes on the first read (libsoup 3.2's
         * TLS listeners do the same inside soup_server_listen) */
        stream = G_IO_STREAM(g_tls_server_connection_new(stream, a->tls_cert, &err));
        if (stream == NULL) {
            br_warn("admin API: TLS: %s", err->message);
            g_error_free(err);
            g_clear_object(&local);
            g_clear_object(&remote);
            return TRUE;
        }
        GTlsAuthenticationMode mode =
            a->cfg.tls_client_auth == BR_ADMIN_CLIENT_AUTH_REQUIRED    ? G_TLS_AUTHENTICATION_REQUIRED
            : a->cfg.tls_client_auth == BR_ADMIN_CLIENT_AUTH_REQUESTED ? G_TLS_AUTHENTICATION_REQUESTED
                                                                       : G_TLS_AUTHENTICATION_NONE;
        g_object_set(stream, "authentication-mode", mode, NULL);
        g_signal_connect(stream, "accept-certificate", G_CALLBACK(client_certificate),
                         NULL);
        if (a->tls_db != NULL) {
            g_tls_connection_set_database(G_TLS_CONNECTION(stream), a->tls_db);
        }
    }
    struct admin_conn *ac = g_new0(struct admin_conn, 1);
    ac->a = a;
    ac->sock = g_socket_connection_get_socket(conn);
    ac->peer = peer_key(remote);
    ac->idle_since_us = g_get_monotonic_time();
    if (ac->peer != NULL) {
        /* a peer's port is unique among open connections: an entry there
         * is one whose connection's last reference has not gone yet */
        (void)g_hash_table_steal(a->conns, ac->peer);
        g_hash_table_insert(a->conns, ac->peer, ac);
    }
    a->connections++;
    g_object_weak_ref(G_OBJECT(conn), connection_gone, ac);
    if (!soup_server_accept_iostream(a->server, stream, local, remote, &err)) {
        br_warn("admin API: %s", err->message);
        g_error_free(err);
    }
    if (https) {
        g_object_unref(stream); /* libsoup holds it now */
    }
    g_clear_object(&local);
    g_clear_object(&remote);
    return TRUE;
}

/* ------------------------------------------------------------ start and stop */

static gboolean loopback_host(const char *host)
{
    if (strcmp(host, "localhost") == 0) {
        return TRUE;
    }
    GInetAddress *ia = g_inet_address_new_from_string(host);
    gboolean lo = ia != NULL && g_inet_address_get_is_loopback(ia);
    g_clear_object(&ia);
    return lo;
}

static int bind_listener(struct br_admin *a, const struct br_admin_listener *l, size_t index,
                         char *err, size_t errlen)
{
    GError *gerr = NULL;
    GSocketListener *sl = G_SOCKET_LISTENER(a->service);
    guint16 port = 0;
    const char *host = l->host;
    const char *scheme = l->https ? "https" : "http";
    GObject *source = l->https ? G_OBJECT(a->tls_cert) : NULL;
    char shown[MAX_URL - 40];
    if (host[0] == '\0') {
        if (l->port == 0) {
            port = g_socket_listener_add_any_inet_port(sl, source, &gerr);
        } else if (g_socket_listener_add_inet_port(sl, l->port, source, &gerr)) {
            port = l->port;
        }
        (void)snprintf(shown, sizeof shown, "%s", g_get_host_name());
    } else {
        const char *lookup = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
        GInetAddress *ia = g_inet_address_new_from_string(lookup);
        if (ia == NULL) {
            GList *addrs = g_resolver_lookup_by_name(g_resolver_get_default(), lookup, NULL, &gerr);
            if (addrs != NULL) {
                ia = g_object_ref(addrs->data);
                g_resolver_free_addresses(addrs);
            }
        }
        if (ia != NULL) {
            GSocketAddress *sa = g_inet_socket_address_new(ia, l->port);
            GSocketAddress *bound = NULL;
            if (g_socket_listener_add_address(sl, sa, G_SOCKET_TYPE_STREAM,
                                              G_SOCKET_PROTOCOL_TCP, source, &bound, &gerr)) {
                port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound));
            }
            g_clear_object(&bound);
            g_clear_object(&sa);
            g_clear_object(&ia);
        }
        (void)snprintf(shown, sizeof shown, strchr(host, ':') != NULL ? "[%s]" : "%s", host);
    }
    if (port == 0) {
        /* The default port is one per host: a second broker there collides
         * with the first, and must be told which setting to change. */
        gboolean in_use = gerr != NULL && g_error_matches(gerr, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE);
        (void)snprintf(err, errlen, "admin.listeners %s://%s:%u: %s%s", scheme, l->host,
                       (unsigned)l->port, gerr != NULL ? gerr->message : "cannot listen",
                       in_use ? " (another broker on this host? set admin.listeners to a "
                                "port of its own, http://127.0.0.1:0 for any free one, or 0 "
                                "to turn the API off)"
                              : "");
        g_clear_error(&gerr);
        return -1;
    }
    if (index == 0) {
        (void)snprintf(a->url, sizeof a->url, "%s://%s:%u", scheme, shown, (unsigned)port);
    }
    return 0;
}

/* OpenSSL asks no passphrase: an encrypted key is refused. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/* The keystore's key and first certificate through OpenSSL, which says
 * why a file is refused (GIO reads a key that is not the certificate's and
 * fails only at the first handshake). */
static int check_keystore(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        (void)snprintf(err, errlen, "admin.ssl.keystore.location %s: %s", path, strerror(errno));
        return -1;
    }
    EVP_PKEY *key = PEM_read_PrivateKey(f, NULL, no_passphrase, NULL);
    rewind(f);
    X509 *cert = PEM_read_X509(f, NULL, no_passphrase, NULL);
    (void)fclose(f);
    int rc = 0;
    if (key == NULL) {
        (void)snprintf(err, errlen,
                       "admin.ssl.keystore.location %s: no private key (PEM, not encrypted)",
                       path);
        rc = -1;
    } else if (cert == NULL) {
        (void)snprintf(err, errlen, "admin.ssl.keystore.location %s: no certificate", path);
        rc = -1;
    } else if (X509_check_private_key(cert, key) != 1) {
        (void)snprintf(err, errlen,
                       "admin.ssl.keystore.location %s: the private key is not the "
                       "certificate's (the first certificate in the file must be the "
                       "key's)",
                       path);
        rc = -1;
    }
    X509_free(cert);
    EVP_PKEY_free(key);
    return rc;
}

/* The certificate of the https listeners and the CA of client
 * certificates, when any listener is https. */
static int load_tls(struct br_admin *a, char *err, size_t errlen)
{
    gboolean https = FALSE;
    for (size_t i = 0; i < a->cfg.nlisteners; i++) {
        https = https || a->listeners[i].https;
    }
    if (!https) {
        return 0;
    }
    if (a->keystore == NULL) {
        (void)snprintf(err, errlen, "an https admin listener needs admin.ssl.keystore.location");
        return -1;
    }
    if (!g_tls_backend_supports_tls(g_tls_backend_get_default())) {
        (void)snprintf(err, errlen, "https admin listeners: GIO has no TLS backend (install "
                                    "glib-networking)");
        return -1;
    }
    if (check_keystore(a->keystore, err, errlen) != 0) {
        return -1;
    }
    GError *gerr = NULL;
    a->tls_cert = g_tls_certificate_new_from_file(a->keystore, &gerr);
    if (a->tls_cert == NULL) {
        (void)snprintf(err, errlen, "admin.ssl.keystore.location %s: %s", a->keystore,
                       gerr->message);
        g_error_free(gerr);
        return -1;
    }
    if (a->truststore != NULL) {
        a->tls_db = g_tls_file_database_new(a->truststore, &gerr);
        if (a->tls_db == NULL) {
            (void)snprintf(err, errlen, "admin.ssl.truststore.location %s: %s", a->truststore,
                           gerr->message);
            g_error_free(gerr);
            return -1;
        }
    }
    return 0;
}

static int setup(struct br_admin *a, char *err, size_t errlen)
{
    for (size_t i = 0; i < a->cfg.nlisteners; i++) {
        if (a->token == NULL && !loopback_host(a->listeners[i].host)) {
            (void)snprintf(err, errlen,
                           "admin.listeners %s://%s:%u is not a loopback address: set "
                           "admin.auth.token (clients send it as Authorization: Bearer ...)",
                           a->listeners[i].https ? "https" : "http", a->listeners[i].host,
                           (unsigned)a->listeners[i].port);
            return -1;
        }
    }
    if (load_tls(a, err, errlen) != 0) {
        return -1;
    }
    a->server = soup_server_new("server-header", "samsa-admin", NULL);
    soup_server_add_early_handler(a->server, NULL, early_handler, a, NULL);
    soup_server_add_handler(a->server, NULL, document_handler, a, NULL);
    soup_server_add_websocket_handler(a->server, STREAM_PATH, NULL, NULL, stream_handler, a, NULL);
    a->peers = br_admin_peers_new(a->token, a->tls_db, peers_refreshed, a);
    a->rates = br_admin_rates_new();
    g_signal_connect(a->server, "request-read", G_CALLBACK(request_read), a);
    g_signal_connect(a->server, "request-finished", G_CALLBACK(request_done), a);
    g_signal_connect(a->server, "request-aborted", G_CALLBACK(request_done), a);
    if (a->cfg.idle_ms > 0) {
        a->idle_check = g_timeout_source_new((guint)CLAMP(a->cfg.idle_ms / 4, 100, 5000));
        g_source_set_callback(a->idle_check, idle_check, a, NULL);
        g_source_attach(a->idle_check, a->ctx);
    }
    a->stall_check = g_timeout_source_new(STREAM_STALL_CHECK_MS);
    g_source_set_callback(a->stall_check, stall_check, a, NULL);
    g_source_attach(a->stall_check, a->ctx);
    a->service = g_socket_service_new();
    for (size_t i = 0; i < a->cfg.nlisteners; i++) {
        if (bind_listener(a, &a->listeners[i], i, err, errlen) != 0) {
            return -1;
        }
    }
    g_signal_connect(a->service, "incoming", G_CALLBACK(incoming), a);
    GSource *src = g_unix_fd_source_new(a->wake_fd, G_IO_IN);
    g_source_set_callback(src, G_SOURCE_FUNC(wake), a, NULL);
    g_source_attach(src, a->ctx);
    g_source_unref(src);
    g_socket_service_start(a->service);
    return 0;
}

static void teardown(struct br_admin *a)
{
    br_admin_peers_free(a->peers); /* its reads are cancelled */
    a->peers = NULL;
    br_admin_rates_free(a->rates);
    a->rates = NULL;
    if (a->waiting != NULL) {
        /* the server's disconnect below ends them */
        for (guint i = 0; i < a->waiting->len; i++) {
            soup_server_message_unpause(g_ptr_array_index(a->waiting, i));
        }
        g_ptr_array_set_size(a->waiting, 0);
    }
    if (a->idle_check != NULL) {
        g_source_destroy(a->idle_check);
        g_source_unref(a->idle_check);
        a->idle_check = NULL;
    }
    if (a->stall_check != NULL) {
        g_source_destroy(a->stall_check);
        g_source_unref(a->stall_check);
        a->stall_check = NULL;
    }
    if (a->service != NULL) {
        g_socket_service_stop(a->service);
        g_socket_listener_close(G_SOCKET_LISTENER(a->service));
    }
    for (guint i = 0; a->streams != NULL && i < a->streams->len; i++) {
        SoupWebsocketConnection *ws = g_ptr_array_index(a->streams, i);
        g_signal_handlers_disconnect_by_data(ws, a);
        if (soup_websocket_connection_get_state(ws) == SOUP_WEBSOCKET_STATE_OPEN) {
            soup_websocket_connection_close(ws, SOUP_WEBSOCKET_CLOSE_GOING_AWAY,
                                            "the broker stops");
        }
        g_object_unref(ws);
    }
    if (a->streams != NULL) {
        g_ptr_array_set_size(a->streams, 0);
    }
    if (a->server != NULL) {
        soup_server_disconnect(a->server);
    }
    /* let the closes go out and the connections' last references go */
    while (g_main_context_iteration(a->ctx, FALSE)) {
    }
    g_clear_object(&a->server);
    g_clear_object(&a->service);
    g_clear_object(&a->tls_cert);
    g_clear_object(&a->tls_db);
    while (g_main_context_iteration(a->ctx, FALSE)) {
    }
    br_snap_unref(a->current);
    a->current = NULL;
}

static void *thread_main(void *arg)
{
    struct br_admin *a = arg;
    br_thread_name("admin");
    g_main_context_push_thread_default(a->ctx);
    char err[512] = "";
    int rc = setup(a, err, sizeof err);
    pthread_mutex_lock(&a->lock);
    a->start_rc = rc;
    (void)snprintf(a->start_err, sizeof a->start_err, "%s", err);
    a->ready = true;
    pthread_cond_signal(&a->ready_cond);
    pthread_mutex_unlock(&a->lock);
    if (rc == 0) {
        g_main_loop_run(a->loop);
    }
    teardown(a);
    g_main_context_pop_thread_default(a->ctx);
    return NULL;
}

static void admin_free(struct br_admin *a)
{
    if (a->streams != NULL) {
        g_ptr_array_unref(a->streams);
    }
    if (a->conns != NULL) {
        g_hash_table_unref(a->conns);
    }
    if (a->waiting != NULL) {
        g_ptr_array_unref(a->waiting);
    }
    if (a->loop != NULL) {
        g_main_loop_unref(a->loop);
    }
    if (a->ctx != NULL) {
        g_main_context_unref(a->ctx);
    }
    br_snap_unref(a->pending);
    if (a->wake_fd >= 0) {
        (void)close(a->wake_fd);
    }
    for (size_t i = 0; a->listeners != NULL && i < a->cfg.nlisteners; i++) {
        g_free((char *)(uintptr_t)a->listeners[i].host);
    }
    g_free(a->listeners);
    g_free(a->token);
    g_free(a->keystore);
    g_free(a->truststore);
    pthread_cond_destroy(&a->ready_cond);
    pthread_mutex_destroy(&a->lock);
    kp_free(a);
}

int br_admin_start(const struct br_admin_config *cfg, struct br_admin **out, char *err,
                   size_t errlen)
{
    *out = NULL;
    struct br_admin *a = kp_calloc(1, sizeof *a);
    if (a == NULL) {
        (void)snprintf(err, errlen, "out of memory");
        return -1;
    }
    a->cfg = *cfg;
    a->wake_fd = -1;
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->ready_cond, NULL);
    atomic_init(&a->quit, false);
    a->listeners = g_new0(struct br_admin_listener, cfg->nlisteners > 0 ? cfg->nlisteners : 1);
    for (size_t i = 0; i < cfg->nlisteners; i++) {
        a->listeners[i].host = g_strdup(cfg->listeners[i].host);
        a->listeners[i].port = cfg->listeners[i].port;
        a->listeners[i].https = cfg->listeners[i].https;
    }
    a->cfg.listeners = a->listeners;
    a->token = cfg->token != NULL && cfg->token[0] != '\0' ? g_strdup(cfg->token) : NULL;
    a->cfg.token = a->token;
    a->keystore = cfg->tls_keystore != NULL && cfg->tls_keystore[0] != '\0'
                      ? g_strdup(cfg->tls_keystore)
                      : NULL;
    a->truststore = cfg->tls_truststore != NULL && cfg->tls_truststore[0] != '\0'
                        ? g_strdup(cfg->tls_truststore)
                        : NULL;
    a->cfg.tls_keystore = a->keystore;
    a->cfg.tls_truststore = a->truststore;
    a->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (a->wake_fd < 0) {
        (void)snprintf(err, errlen, "eventfd: %s", strerror(errno));
        admin_free(a);
        return -1;
    }
    a->ctx = g_main_context_new();
    a->loop = g_main_loop_new(a->ctx, FALSE);
    a->streams = g_ptr_array_new();
    a->waiting = g_ptr_array_new_with_free_func(g_object_unref);
    a->conns = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, admin_conn_free);
    /* the stream's identity: a client that sees another one after a
     * reconnection knows the sequence started again */
    (void)snprintf(a->stream_id, sizeof a->stream_id, "%d-%" G_GINT64_FORMAT, (int)cfg->node_id,
                   g_get_real_time());
    if (pthread_create(&a->thread, NULL, thread_main, a) != 0) {
        (void)snprintf(err, errlen, "cannot start the admin thread");
        admin_free(a);
        return -1;
    }
    pthread_mutex_lock(&a->lock);
    while (!a->ready) {
        pthread_cond_wait(&a->ready_cond, &a->lock);
    }
    int rc = a->start_rc;
    (void)snprintf(err, errlen, "%s", a->start_err);
    pthread_mutex_unlock(&a->lock);
    if (rc != 0) {
        (void)pthread_join(a->thread, NULL);
        admin_free(a);
        return -1;
    }
    *out = a;
    return 0;
}

void br_admin_stop(struct br_admin *a)
{
    if (a == NULL) {
        return;
    }
    atomic_store(&a->quit, true);
    uint64_t one = 1;
    (void)!write(a->wake_fd, &one, sizeof one);
    (void)pthread_join(a->thread, NULL);
    admin_free(a);
}
