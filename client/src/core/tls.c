/*
 * TLS on broker connections (security.protocol ssl and sasl_ssl) with
 * OpenSSL 3: the handle's SSL_CTX made from librdkafka's ssl.* properties
 * (what each does: librdkafka v2.0.2's CONFIGURATION.md and
 * src/rdkafka_ssl.c), the non-blocking handshake the I/O loop drives, and
 * the reads and writes through it.
 *
 * The peer's name is checked as librdkafka 2.x checks it
 * (ssl.endpoint.identification.algorithm=https, the default): the address
 * the connection was made to, an IP literal against the certificate's IP
 * SANs (X509_VERIFY_PARAM_set1_ip_asc), a host name against its DNS SANs
 * (SSL_set1_host), and the name sent as SNI.
 *
 * @locality: sc_tls_ctx_new and sc_tls_ctx_free on the creating and
 * destroying user threads; the rest on the I/O thread (an SSL object is used
 * by that thread alone, so the client lock may be released around its calls).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/internal.h"

/* OpenSSL's queued errors as one sentence (the last, most specific one). */
static void ssl_reason(char *buf, size_t size, const char *otherwise)
{
    unsigned long e = ERR_peek_last_error();
    if (e == 0) {
        snprintf(buf, size, "%s", otherwise);
    } else {
        ERR_error_string_n(e, buf, size);
    }
    ERR_clear_error();
}

/* ssl.key.password for an encrypted ssl.key.location */
static int key_password_cb(char *buf, int size, int rwflag, void *userdata)
{
    (void)rwflag;
    const char *pw = userdata;
    size_t len = strlen(pw);
    if (size <= 0 || len >= (size_t)size) {
        return 0;
    }
    memcpy(buf, pw, len + 1);
    return (int)len;
}

int sc_tls_ctx_new(struct sc_client *c, char *errstr, size_t errstr_size)
{
    const struct sc_conf_values *v = c->v;
    if (!SC_SEC_USES_TLS(v->security_protocol) || c->detached) {
        return SAMSA_OK;
    }
    char why[256];
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL) {
        ssl_reason(why, sizeof(why), "SSL_CTX_new failed");
        sc_errf(errstr, errstr_size, "TLS: %s", why);
        return SAMSA_ERR_SSL;
    }
    /* TLS 1.2 and 1.3, as Kafka's ssl.enabled.protocols; partial writes out
     * of a buffer that moves (io.c compacts it), and a peer's EOF without
     * close_notify read as an EOF. */
    (void)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
    const char *what = NULL;
    const char *path = NULL;
    if (v->ssl_ca_location[0] != '\0') {
        struct stat st;
        bool dir = stat(v->ssl_ca_location, &st) == 0 && S_ISDIR(st.st_mode);
        what = "ssl.ca.location";
        path = v->ssl_ca_location;
        if (SSL_CTX_load_verify_locations(ctx, dir ? NULL : path, dir ? path : NULL) != 1) {
            goto fail;
        }
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        what = "the system's CA certificates";
        path = "";
        goto fail;
    }
    SSL_CTX_set_verify(ctx, v->enable_ssl_certificate_verification ? SSL_VERIFY_PEER
                                                                    : SSL_VERIFY_NONE,
                       NULL);
    if (v->ssl_certificate_location[0] != '\0') {
        what = "ssl.certificate.location";
        path = v->ssl_certificate_location;
        if (SSL_CTX_use_certificate_chain_file(ctx, path) != 1) {
            goto fail;
        }
    }
    if (v->ssl_key_location[0] != '\0') {
        what = "ssl.key.location";
        path = v->ssl_key_location;
        SSL_CTX_set_default_passwd_cb(ctx, key_password_cb);
        SSL_CTX_set_default_passwd_cb_userdata(ctx, v->ssl_key_password);
        if (SSL_CTX_use_PrivateKey_file(ctx, path, SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_check_private_key(ctx) != 1) {
            goto fail;
        }
    }
    if ((v->ssl_certificate_location[0] != '\0') != (v->ssl_key_location[0] != '\0')) {
        sc_errf(errstr, errstr_size,
                "ssl.certificate.location and ssl.key.location go together: a client "
                "certificate needs its key");
        SSL_CTX_free(ctx);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    c->ssl_ctx = ctx;
    return SAMSA_OK;
fail:
    ssl_reason(why, sizeof(why), "cannot be read");
    sc_errf(errstr, errstr_size, "%s%s%s: %s", what, path[0] != '\0' ? " " : "", path, why);
    SSL_CTX_free(ctx);
    return SAMSA_ERR_SSL;
}

void sc_tls_ctx_free(struct sc_client *c)
{
    SSL_CTX_free(c->ssl_ctx);
    c->ssl_ctx = NULL;
}

int sc_tls_start(struct sc_client *c, struct sc_conn *conn)
{
    ERR_clear_error();
    SSL *ssl = SSL_new(c->ssl_ctx);
    if (ssl == NULL || SSL_set_fd(ssl, conn->fd) != 1) {
        SSL_free(ssl);
        return SAMSA_ERR_NOMEM;
    }
    SSL_set_connect_state(ssl);
    unsigned char addr[16];
    bool literal = inet_pton(AF_INET, conn->host, addr) == 1 ||
                   inet_pton(AF_INET6, conn->host, addr) == 1;
    if (!literal) {
        (void)SSL_set_tlsext_host_name(ssl, conn->host); /* SNI: names only */
    }
    if (c->v->ssl_endpoint_identification == 1 && c->v->enable_ssl_certificate_verification) {
        int ok = literal ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), conn->host)
                         : SSL_set1_host(ssl, conn->host);
        if (ok != 1) {
            SSL_free(ssl);
            return SAMSA_ERR_NOMEM;
        }
    }
    conn->ssl = ssl;
    conn->tls_want = POLLOUT;
    return SAMSA_OK;
}

void sc_tls_close(struct sc_conn *conn)
{
    if (conn->ssl == NULL) {
        return;
    }
    if (conn->tls_want == 0) {
        /* close_notify, best effort: never waits */
        (void)SSL_shutdown(conn->ssl);
    }
    SSL_free(conn->ssl);
    ERR_clear_error();
    conn->ssl = NULL;
    conn->tls_want = 0;
}

int sc_tls_handshake(struct sc_client *c, struct sc_conn *conn)
{
    ERR_clear_error();
    pthread_mutex_unlock(&c->lock);
    int rc = SSL_do_handshake(conn->ssl);
    int e = SSL_get_error(conn->ssl, rc);
    int saved = errno;
    pthread_mutex_lock(&c->lock);
    if (rc == 1) {
        conn->tls_want = 0;
        sc_log(c, "TLS with %s:%d: %s, %s", conn->host, conn->port, SSL_get_version(conn->ssl),
               SSL_get_cipher_name(conn->ssl));
        return SC_TLS_DONE;
    }
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        conn->tls_want = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        return SC_TLS_AGAIN;
    }
    char *why = conn->tls_err;
    size_t size = sizeof(conn->tls_err);
    long vr = SSL_get_verify_result(conn->ssl);
    if (e == SSL_ERROR_SSL && vr != X509_V_OK) {
        /* the broker's certificate: a reason the operator can act on */
        snprintf(why, size, "certificate verify failed: %s%s",
                 X509_verify_cert_error_string(vr),
                 vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH
                     ? " (ssl.endpoint.identification.algorithm=https checks the address "
                       "connected to against the certificate's subjectAltName)"
                     : "");
        ERR_clear_error();
    } else if (e == SSL_ERROR_SSL) {
        ssl_reason(why, size, "protocol error");
    } else {
        /* the connection went away mid-handshake: a transport failure,
         * tried again after the backoff */
        snprintf(why, size, "TLS handshake: %s",
                 rc == 0 || saved == 0 ? "connection closed by the broker" : strerror(saved));
        ERR_clear_error();
        return SC_TLS_LOST;
    }
    return SC_TLS_REFUSED;
}

bool sc_tls_pending(const struct sc_conn *conn)
{
    return conn->ssl != NULL && conn->tls_want == 0 && SSL_has_pending(conn->ssl) == 1;
}

/* errno from an SSL_read or SSL_write that did not move bytes: EAGAIN when
 * it wants the socket again, else EPROTO with the reason in conn->tls_err. */
static void io_error(struct sc_conn *conn, int rc, int e, int saved)
{
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return;
    }
    if (e == SSL_ERROR_SYSCALL && saved != 0) {
        snprintf(conn->tls_err, sizeof(conn->tls_err), "%s", strerror(saved));
        ERR_clear_error();
    } else {
        ssl_reason(conn->tls_err, sizeof(conn->tls_err),
                   rc == 0 ? "connection closed by the broker" : "TLS error");
    }
    conn->tls_fatal = e == SSL_ERROR_SSL;
    errno = EPROTO;
}

ssize_t sc_tls_write(struct sc_conn *conn, const uint8_t *buf, size_t len)
{
    ERR_clear_error();
    int rc = SSL_write(conn->ssl, buf, len > INT_MAX ? INT_MAX : (int)len);
    if (rc > 0) {
        return rc;
    }
    int saved = errno;
    io_error(conn, rc, SSL_get_error(conn->ssl, rc), saved);
    return -1;
}

ssize_t sc_tls_read(struct sc_conn *conn, uint8_t *buf, size_t len)
{
    ERR_clear_error();
    int rc = SSL_read(conn->ssl, buf, len > INT_MAX ? INT_MAX : (int)len);
    if (rc > 0) {
        return rc;
    }
    int saved = errno;
    int e = SSL_get_error(conn->ssl, rc);
    if (e == SSL_ERROR_ZERO_RETURN) {
        return 0; /* close_notify, or an EOF (SSL_OP_IGNORE_UNEXPECTED_EOF) */
    }
    io_error(conn, rc, e, saved);
    return -1;
}
