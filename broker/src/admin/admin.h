/*
 * samsa-broker: the admin API, a libsoup 3 HTTP and WebSocket server on a
 * thread of its own with its own GMainContext. It serves JSON documents,
 * a WebSocket stream of changes and Prometheus metrics from the latest
 * snapshot the reactor published (snapshot.h), and never touches reactor
 * state: the reactor hands it snapshots through br_admin_publish, a
 * pointer swapped under a mutex and an eventfd that wakes the thread.
 *
 * Read-only but for one operator's action, the abort of a hanging
 * transaction (POST /v1/transactions/{id}/abort, only with a token set):
 * the admin thread hands it to the reactor (ops->submit, through the
 * reactor's mailbox), which answers with br_admin_action_done; other
 * changes go through the Kafka protocol. Bounded: connections, WebSocket
 * clients, request line and headers; a request with a body is refused. A
 * listener that is not a loopback address needs a bearer token. An https
 * listener wraps each accepted connection in a GTlsServerConnection (GIO's
 * GnuTLS backend) before libsoup sees it; the stream is then wss://.
 *
 * @locality br_admin_start, br_admin_publish, br_admin_url, br_admin_stop:
 * the reactor thread (one caller). Everything else runs on the admin thread.
 */
#ifndef SAMSA_BROKER_ADMIN_ADMIN_H
#define SAMSA_BROKER_ADMIN_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "admin/snapshot.h"
#include "base/mailbox.h"

struct br_admin;

struct br_admin_listener {
    const char *host; /* "" = every interface */
    uint16_t port;    /* 0 = a free port */
    bool https;       /* TLS with br_admin_config's keystore */
};

/* Client certificates on https listeners (admin.ssl.client.auth). */
enum br_admin_client_auth {
    BR_ADMIN_CLIENT_AUTH_NONE,
    BR_ADMIN_CLIENT_AUTH_REQUESTED, /* verified against the truststore when sent */
    BR_ADMIN_CLIENT_AUTH_REQUIRED,  /* a connection without one is refused */
};

/* An operator's action on its way to the reactor and back. The admin
 * thread owns it; the reactor reads the request, sets error and hands it
 * back with br_admin_action_done, once. */
struct br_admin_action {
    struct br_mail mail; /* first: how it travels in the reactor's mailbox */
    const char *transactional_id; /* the transaction to abort */
    size_t transactional_id_len;
    int16_t error; /* the reactor's answer, a Kafka error code */
};

struct br_admin_ops {
    /* Admin thread: hands act to the reactor, which answers with
     * br_admin_action_done. */
    void (*submit)(void *ctx, struct br_admin_action *act);
};

struct br_admin_config {
    const struct br_admin_listener *listeners;
    size_t nlisteners;
    const char *token;          /* NULL: no token (only loopback listeners) */
    const char *tls_keystore;   /* PEM: key and certificate chain (https listeners) */
    const char *tls_truststore; /* PEM CA(s) for client certificates, NULL: none */
    enum br_admin_client_auth tls_client_auth;
    int32_t max_connections;    /* >= 1 */
    int32_t max_stream_clients; /* >= 0 */
    int64_t idle_ms;            /* a connection with no request under way this
                                   long is closed (not streams); 0: never */
    int64_t stall_ms;           /* a stream client stalled this long is cut off */
    int32_t node_id;
    const struct br_admin_ops *ops; /* the operator's actions */
    void *ops_ctx;
};

/*
 * Starts the thread and binds every listener before returning. Returns 0
 * with *out (the caller's: br_admin_stop), or -1 with the reason in err
 * (a non-loopback listener without a token, a port in use, an https
 * listener whose keystore is unreadable or whose key is not its
 * certificate's, ...).
 */
KP_MUST_CHECK int br_admin_start(const struct br_admin_config *cfg, struct br_admin **out,
                                 char *err, size_t errlen);

/* The first listener's URL, "http://127.0.0.1:9095" (https:// for an
 * https listener), its port the bound one. Valid until br_admin_stop. */
const char *br_admin_url(const struct br_admin *a);

/* Hands snap (transfer full) to the admin thread; a snapshot it has not
 * taken yet is replaced (and unreferenced). Never blocks on the admin
 * thread beyond a pointer swap. */
void br_admin_publish(struct br_admin *a, struct br_snapshot *snap);

/* The reactor's answer to act (any thread; the admin thread answers the
 * HTTP request and frees act). */
void br_admin_action_done(struct br_admin_action *act);

/* Closes the listeners and the streams, joins the thread, frees a. NULL
 * is a no-op. */
void br_admin_stop(struct br_admin *a);

#endif
