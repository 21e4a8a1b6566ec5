/* samsa-broker: TLS on OpenSSL 3 (see net_tls.h): the listeners' contexts
 * from Kafka's ssl.* keys, and a connection's handshake, reads and writes
 * on the reactor thread as OpenSSL calls. What they mean for the
 * connection (its interest, its end) its callers decide: this file calls
 * none of the reactor's other files but the task queue (net_timer.c). */
#define _GNU_SOURCE

#include "reactor/net_tls.h"

#include "reactor/net_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

struct br_tls_ctx {
    SSL_CTX *ctx;
    bool verify_host; /* a client's: ssl.endpoint.identification.algorithm=https */
};

/* ---------------------------------------------------------------- context */

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    unsigned long e = ERR_peek_last_error();
    if (e != 0) {
        char ossl[160];
        ERR_error_string_n(e, ossl, sizeof ossl);
        (void)snprintf(err, errlen, "%s (%s)", what, ossl);
    } else {
        (void)snprintf(err, errlen, "%s", what);
    }
    ERR_clear_error();
    return KP_ERR_INVALID_CONFIG;
}

static bool is_type(const char *v, const char *type)
{
    return v != NULL && strcasecmp(v, type) == 0;
}

static const char JKS_HINT[] =
    "JKS stores cannot be read: convert with `keytool -importkeystore -srckeystore S.jks "
    "-destkeystore S.p12 -deststoretype PKCS12` (then type PKCS12) or on to PEM with "
    "`openssl pkcs12`";

/* PEM text inline (Kafka 2.7's ssl.keystore.key and friends) or a file. */
static BIO *pem_source(const char *inline_pem, const char *path)
{
    if (inline_pem != NULL) {
        return BIO_new_mem_buf(inline_pem, -1);
    }
    return path != NULL ? BIO_new_file(path, "r") : NULL;
}

/* The private key and certificate chain of a PEM keystore. */
static int load_pem_keystore(SSL_CTX *ctx, const struct br_tls_settings *s, char *err,
                             size_t errlen)
{
    const char *where = s->keystore_key != NULL ? "ssl.keystore.key" : "ssl.keystore.location";
    BIO *kb = pem_source(s->keystore_key, s->keystore_location);
    if (kb == NULL) {
        return fail(err, errlen, "listener %s: %s: cannot read %s", s->listener, where,
                    s->keystore_key != NULL ? "it" : s->keystore_location);
    }
    /* a NULL callback takes u as the pass phrase (PEM_read_bio_PrivateKey) */
    EVP_PKEY *key = PEM_read_bio_PrivateKey(kb, NULL, NULL, (void *)(uintptr_t)s->key_password);
    BIO_free(kb);
    if (key == NULL) {
        return fail(err, errlen,
                    "listener %s: %s: no private key that reads (wrong ssl.key.password?)",
                    s->listener, where);
    }
    const char *cwhere =
        s->keystore_chain != NULL ? "ssl.keystore.certificate.chain" : "ssl.keystore.location";
    BIO *cb = pem_source(s->keystore_chain, s->keystore_location);
    int rc = 0;
    X509 *leaf = cb != NULL ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    if (leaf == NULL) {
        rc = fail(err, errlen, "listener %s: %s: no certificate", s->listener, cwhere);
        goto out;
    }
    if (SSL_CTX_use_certificate(ctx, leaf) != 1 || SSL_CTX_use_PrivateKey(ctx, key) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
        rc = fail(err, errlen, "listener %s: the private key does not fit the certificate",
                  s->listener);
        goto out;
    }
    for (;;) {
        X509 *x = PEM_read_bio_X509(cb, NULL, NULL, NULL);
        if (x == NULL) {
            ERR_clear_error(); /* the end of the file */
            break;
        }
        if (SSL_CTX_add0_chain_cert(ctx, x) != 1) {
            X509_free(x);
            rc = fail(err, errlen, "listener %s: %s: a chain certificate", s->listener, cwhere);
            goto out;
        }
    }
out:
    X509_free(leaf);
    BIO_free(cb);
    EVP_PKEY_free(key);
    return rc;
}

/* A PKCS12 file: key, certificate, CA certificates. */
static int read_pkcs12(const char *path, const char *password, EVP_PKEY **key, X509 **cert,
                       STACK_OF(X509) **ca)
{
    BIO *b = BIO_new_file(path, "rb");
    PKCS12 *p12 = b != NULL ? d2i_PKCS12_bio(b, NULL) : NULL;
    BIO_free(b);
    int ok = p12 != NULL && PKCS12_parse(p12, password != NULL ? password : "", key, cert, ca) == 1;
    PKCS12_free(p12);
    return ok ? 0 : -1;
}

static int load_keystore(SSL_CTX *ctx, const struct br_tls_settings *s, char *err, size_t errlen)
{
    if (is_type(s->keystore_type, "JKS")) {
        return fail(err, errlen, "listener %s: ssl.keystore.type: %s", s->listener, JKS_HINT);
    }
    if (s->keystore_type == NULL || is_type(s->keystore_type, "PEM")) {
        if (s->keystore_location == NULL && (s->keystore_key == NULL || s->keystore_chain == NULL)) {
            return fail(err, errlen,
                        "listener %s is SSL: set ssl.keystore.location (a PEM file with the "
                        "private key and the certificate chain), or ssl.keystore.key and "
                        "ssl.keystore.certificate.chain",
                        s->listener);
        }
        return load_pem_keystore(ctx, s, err, errlen);
    }
    if (!is_type(s->keystore_type, "PKCS12")) {
        return fail(err, errlen, "listener %s: ssl.keystore.type %s: PEM or PKCS12", s->listener,
                    s->keystore_type);
    }
    if (s->keystore_location == NULL) {
        return fail(err, errlen, "listener %s: ssl.keystore.location is not set", s->listener);
    }
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    STACK_OF(X509) *ca = NULL;
    int rc = 0;
    if (read_pkcs12(s->keystore_location, s->keystore_password, &key, &cert, &ca) != 0 ||
        key == NULL || cert == NULL) {
        rc = fail(err, errlen,
                  "listener %s: ssl.keystore.location %s: no key and certificate that read "
                  "(wrong ssl.keystore.password?)",
                  s->listener, s->keystore_location);
    } else if (SSL_CTX_use_cert_and_key(ctx, cert, key, ca, 1) != 1) {
        rc = fail(err, errlen, "listener %s: the private key does not fit the certificate",
                  s->listener);
    }
    EVP_PKEY_free(key);
    X509_free(cert);
    sk_X509_pop_free(ca, X509_free);
    return rc;
}

/* Trusts x for client certificates and names it to clients as an
 * acceptable CA. */
static int trust(SSL_CTX *ctx, X509 *x)
{
    return X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), x) == 1 &&
                   SSL_CTX_add_client_CA(ctx, x) == 1
               ? 0
               : -1;
}

static int load_truststore(SSL_CTX *ctx, const struct br_tls_settings *s, char *err, size_t errlen)
{
    if (s->truststore_location == NULL && s->truststore_certificates == NULL) {
        return 0;
    }
    if (is_type(s->truststore_type, "JKS")) {
        return fail(err, errlen, "listener %s: ssl.truststore.type: %s", s->listener, JKS_HINT);
    }
    size_t n = 0;
    if (is_type(s->truststore_type, "PKCS12")) {
        STACK_OF(X509) *ca = NULL;
        EVP_PKEY *key = NULL;
        X509 *cert = NULL;
        int rc = read_pkcs12(s->truststore_location, s->truststore_password, &key, &cert, &ca);
        for (int i = 0; rc == 0 && i < sk_X509_num(ca); i++) {
            rc = trust(ctx, sk_X509_value(ca, i));
            n++;
        }
        if (rc == 0 && cert != NULL) {
            rc = trust(ctx, cert);
            n++;
        }
        EVP_PKEY_free(key);
        X509_free(cert);
        sk_X509_pop_free(ca, X509_free);
        if (rc != 0) {
            return fail(err, errlen, "listener %s: ssl.truststore.location %s does not read",
                        s->listener, s->truststore_location);
        }
    } else if (s->truststore_type == NULL || is_type(s->truststore_type, "PEM")) {
        BIO *b = pem_source(s->truststore_certificates, s->truststore_location);
        if (b == NULL) {
            return fail(err, errlen, "listener %s: ssl.truststore.location %s: cannot read it",
                        s->listener, s->truststore_location);
        }
        for (;;) {
            X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
            if (x == NULL) {
                ERR_clear_error();
                break;
            }
            int rc = trust(ctx, x);
            X509_free(x);
            if (rc != 0) {
                BIO_free(b);
                return fail(err, errlen, "listener %s: the truststore", s->listener);
            }
            n++;
        }
        BIO_free(b);
    } else {
        return fail(err, errlen, "listener %s: ssl.truststore.type %s: PEM or PKCS12", s->listener,
                    s->truststore_type);
    }
    if (n == 0) {
        return fail(err, errlen, "listener %s: the truststore holds no certificate", s->listener);
    }
    return 0;
}

/* The next item of a comma (or space) separated list at *p: true with
 * *p at its start and *n its length; the caller steps *p past it. */
static bool next_item(const char **p, size_t *n)
{
    while (**p == ',' || **p == ' ') {
        (*p)++;
    }
    *n = strcspn(*p, ", ");
    return *n > 0;
}

/* ssl.enabled.protocols: TLSv1.2 and TLSv1.3, as a version range. */
static int set_protocols(SSL_CTX *ctx, const struct br_tls_settings *s, char *err, size_t errlen)
{
    const char *p = s->enabled_protocols != NULL ? s->enabled_protocols : "TLSv1.2,TLSv1.3";
    int lo = 0;
    int hi = 0;
    size_t n = 0;
    while (next_item(&p, &n)) {
        int v = 0;
        if (n == 7 && strncasecmp(p, "TLSv1.2", n) == 0) {
            v = TLS1_2_VERSION;
        } else if (n == 7 && strncasecmp(p, "TLSv1.3", n) == 0) {
            v = TLS1_3_VERSION;
        } else {
            return fail(err, errlen,
                        "listener %s: ssl.enabled.protocols: %.*s is not offered: TLSv1.2 "
                        "and TLSv1.3 are",
                        s->listener, (int)n, p);
        }
        lo = lo == 0 || v < lo ? v : lo;
        hi = v > hi ? v : hi;
        p += n;
    }
    if (lo == 0) {
        return fail(err, errlen, "listener %s: ssl.enabled.protocols is empty", s->listener);
    }
    if (SSL_CTX_set_min_proto_version(ctx, lo) != 1 || SSL_CTX_set_max_proto_version(ctx, hi) != 1) {
        return fail(err, errlen, "listener %s: ssl.enabled.protocols", s->listener);
    }
    return 0;
}

/* The OpenSSL name of an IANA (Java) TLS 1.2 suite name, or the name as
 * given (an OpenSSL name already). */
static const char *openssl_name(STACK_OF(SSL_CIPHER) *all, const char *iana)
{
    for (int i = 0; i < sk_SSL_CIPHER_num(all); i++) {
        const SSL_CIPHER *c = sk_SSL_CIPHER_value(all, i);
        const char *std = SSL_CIPHER_standard_name(c);
        if (std != NULL && strcmp(std, iana) == 0) {
            return SSL_CIPHER_get_name(c);
        }
    }
    return iana;
}

/* ssl.cipher.suites: TLS 1.3 suites (TLS_AES_*, TLS_CHACHA20_*) by their
 * names, the others by IANA or OpenSSL names. A list without TLS 1.3
 * suites leaves TLS 1.3 none, as Java's list would. */
static int set_ciphers(SSL_CTX *ctx, const struct br_tls_settings *s, char *err, size_t errlen)
{
    if (s->cipher_suites == NULL || s->cipher_suites[0] == '\0') {
        return 0;
    }
    char tls12[2048] = "";
    char tls13[512] = "";
    SSL_CTX *any = SSL_CTX_new(TLS_server_method());
    if (any == NULL || SSL_CTX_set_cipher_list(any, "ALL:COMPLEMENTOFALL") != 1) {
        SSL_CTX_free(any);
        return fail(err, errlen, "listener %s: ssl.cipher.suites", s->listener);
    }
    STACK_OF(SSL_CIPHER) *all = SSL_CTX_get_ciphers(any);
    const char *p = s->cipher_suites;
    size_t n = 0;
    while (next_item(&p, &n)) {
        char name[128];
        (void)snprintf(name, sizeof name, "%.*s", (int)n, p);
        bool v13 = strncmp(name, "TLS_AES_", 8) == 0 || strncmp(name, "TLS_CHACHA20_", 13) == 0;
        char *dst = v13 ? tls13 : tls12;
        size_t cap = v13 ? sizeof tls13 : sizeof tls12;
        size_t used = strlen(dst);
        (void)snprintf(dst + used, cap - used, "%s%s", used > 0 ? ":" : "",
                       v13 ? name : openssl_name(all, name));
        p += n;
    }
    SSL_CTX_free(any);
    if (tls12[0] != '\0' && SSL_CTX_set_cipher_list(ctx, tls12) != 1) {
        return fail(err, errlen, "listener %s: ssl.cipher.suites: none of %s is known",
                    s->listener, tls12);
    }
    if (tls12[0] == '\0' && SSL_CTX_set_cipher_list(ctx, "") != 1) {
        ERR_clear_error(); /* OpenSSL refuses an empty TLS 1.2 list: TLS 1.2 is then unusable */
    }
    if (SSL_CTX_set_ciphersuites(ctx, tls13) != 1) {
        return fail(err, errlen, "listener %s: ssl.cipher.suites: %s", s->listener, tls13);
    }
    return 0;
}

/* The rest of a client context (Kafka 2.0's SslFactory in client mode):
 * protocols and suites as a server's, the server always verified. */
static int client_ctx_done(struct br_tls_ctx *t, const struct br_tls_settings *s,
                           struct br_tls_ctx **out, char *err, size_t errlen)
{
    int rc = set_protocols(t->ctx, s, err, errlen);
    if (rc == 0) {
        rc = set_ciphers(t->ctx, s, err, errlen);
    }
    if (rc == 0 && s->truststore_location == NULL && s->truststore_certificates == NULL &&
        SSL_CTX_set_default_verify_paths(t->ctx) != 1) {
        rc = fail(err, errlen, "listener %s: no truststore and no default CA paths", s->listener);
    }
    const char *alg = s->endpoint_identification != NULL ? s->endpoint_identification : "https";
    if (rc == 0 && alg[0] != '\0' && strcasecmp(alg, "https") != 0) {
        rc = fail(err, errlen,
                  "listener %s: ssl.endpoint.identification.algorithm %s: https or empty",
                  s->listener, alg);
    }
    if (rc != 0) {
        br_tls_ctx_free(t);
        return rc;
    }
    t->verify_host = alg[0] != '\0';
    SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
    *out = t;
    return 0;
}

int br_tls_ctx_new(const struct br_tls_settings *s, struct br_tls_ctx **out, char *err,
                   size_t errlen)
{
    *out = NULL;
    ERR_clear_error();
    struct br_tls_ctx *t = kp_calloc(1, sizeof *t);
    if (t == NULL) {
        return KP_E_NOMEM;
    }
    t->ctx = SSL_CTX_new(s->client ? TLS_client_method() : TLS_server_method());
    if (t->ctx == NULL) {
        kp_free(t);
        return fail(err, errlen, "listener %s: cannot make a TLS context", s->listener);
    }
    /* no renegotiation (a client could make the broker redo the key
     * exchange at will); the kernel takes the records where it can */
    SSL_CTX_set_options(t->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_ENABLE_KTLS |
                                    SSL_OP_CIPHER_SERVER_PREFERENCE);
    static const unsigned char sid[] = "samsa";
    int verify = SSL_VERIFY_NONE;
    int rc = 0;
    if (!s->client || s->keystore_location != NULL || s->keystore_key != NULL) {
        rc = load_keystore(t->ctx, s, err, errlen);
    }
    if (rc == 0) {
        rc = load_truststore(t->ctx, s, err, errlen);
    }
    if (rc == 0 && s->client) {
        return client_ctx_done(t, s, out, err, errlen);
    }
    if (rc == 0) {
        rc = set_protocols(t->ctx, s, err, errlen);
    }
    if (rc == 0) {
        rc = set_ciphers(t->ctx, s, err, errlen);
    }
    if (rc == 0 && s->client_auth != NULL && !is_type(s->client_auth, "none")) {
        if (is_type(s->client_auth, "required")) {
            verify = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
        } else if (is_type(s->client_auth, "requested")) {
            verify = SSL_VERIFY_PEER;
        } else {
            rc = fail(err, errlen, "listener %s: ssl.client.auth %s: none, requested or required",
                      s->listener, s->client_auth);
        }
        if (rc == 0 && s->truststore_location == NULL && s->truststore_certificates == NULL) {
            rc = fail(err, errlen,
                      "listener %s: ssl.client.auth=%s needs a truststore of the clients' CAs "
                      "(ssl.truststore.location)",
                      s->listener, s->client_auth);
        }
    }
    if (rc != 0) {
        br_tls_ctx_free(t);
        return rc;
    }
    SSL_CTX_set_verify(t->ctx, verify, NULL);
    /* resumed sessions of verified clients need one */
    (void)SSL_CTX_set_session_id_context(t->ctx, sid, sizeof sid - 1);
    *out = t;
    return 0;
}

void br_tls_ctx_free(struct br_tls_ctx *t)
{
    if (t == NULL) {
        return;
    }
    SSL_CTX_free(t->ctx);
    kp_free(t);
}

/* ---------------------------------------------------------------- connections */

struct ssl_st *br_tls_client_new(struct br_tls_ctx *t, int fd, const char *host)
{
    SSL *ssl = SSL_new(t->ctx);
    if (ssl == NULL || SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        ERR_clear_error();
        return NULL;
    }
    SSL_set_connect_state(ssl);
    if (t->verify_host) {
        /* an address is checked against the IP SANs, a name against the
         * DNS ones (Java's HTTPS endpoint identification) */
        int ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
        if (ok != 1) {
            ERR_clear_error();
            char name[256]; /* the SNI macro takes a mutable string */
            (void)snprintf(name, sizeof name, "%s", host);
            ok = SSL_set1_host(ssl, host) == 1 && SSL_set_tlsext_host_name(ssl, name) == 1;
        }
        if (ok != 1) {
            SSL_free(ssl);
            ERR_clear_error();
            return NULL;
        }
    }
    return ssl;
}

int net_tls_connect(struct br_conn *c, struct br_tls_ctx *t, const char *host,
                    const struct br_task_ops *pending)
{
    c->ssl = br_tls_client_new(t, c->watch.fd, host);
    if (c->ssl == NULL) {
        return -1;
    }
    c->tls_handshaking = true;
    c->tls_wants_write = true; /* the client speaks first */
    br_task_init(&c->tls_task, pending, c);
    return 0;
}

/* Why the last OpenSSL call on c failed, for its log line. */
static const char *tls_reason(int ssl_err, char *buf, size_t len)
{
    unsigned long e = ERR_peek_last_error();
    if (e != 0) {
        ERR_error_string_n(e, buf, len);
    } else if (ssl_err == SSL_ERROR_SYSCALL) {
        (void)snprintf(buf, len, "%s", errno != 0 ? strerror(errno) : "the peer closed the connection");
    } else {
        (void)snprintf(buf, len, "TLS error %d", ssl_err);
    }
    ERR_clear_error();
    return buf;
}

int net_tls_accept(struct br_conn *c, struct br_tls_ctx *t, const struct br_task_ops *pending)
{
    c->ssl = SSL_new(t->ctx);
    if (c->ssl == NULL || SSL_set_fd(c->ssl, c->watch.fd) != 1) {
        ERR_clear_error();
        return -1;
    }
    SSL_set_accept_state(c->ssl);
    c->tls_handshaking = true;
    br_task_init(&c->tls_task, pending, c);
    return 0;
}

enum net_tls_step net_tls_handshake(struct br_conn *c)
{
    ERR_clear_error();
    errno = 0;
    int r = SSL_do_handshake(c->ssl);
    if (r == 1) {
        c->tls_handshaking = false;
        c->tls_wants_write = false;
        c->tls_ktls = BIO_get_ktls_send(SSL_get_wbio(c->ssl)) > 0;
        br_debug("TLS with %s: %s, %s%s", c->peer, SSL_get_version(c->ssl),
                 SSL_get_cipher_name(c->ssl), c->tls_ktls ? ", kernel TLS" : "");
        return NET_TLS_DONE;
    }
    int e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        c->tls_wants_write = e == SSL_ERROR_WANT_WRITE;
        return NET_TLS_AGAIN;
    }
    char why[192];
    long v = SSL_get_verify_result(c->ssl);
    if (c->outbound) {
        /* a broker this one cannot reach: the operator's to fix */
        br_warn("TLS handshake with broker %s failed: %s%s%s", c->peer,
                tls_reason(e, why, sizeof why), v != X509_V_OK ? ": " : "",
                v != X509_V_OK ? X509_verify_cert_error_string(v) : "");
    } else {
        br_info("closing %s: TLS handshake failed: %s", c->peer, tls_reason(e, why, sizeof why));
    }
    c->error = EPROTO;
    c->tls_failed = true;
    return NET_TLS_FAILED;
}

/* SSL_read_ex or SSL_peek_ex as read(2) and recv(MSG_PEEK) answer: bytes,
 * 0 at the end, -1 with errno (EAGAIN: nothing now). */
static ssize_t tls_read(struct br_conn *c, void *buf, size_t len, bool peek)
{
    ERR_clear_error();
    errno = 0;
    size_t got = 0;
    int ok = peek ? SSL_peek_ex(c->ssl, buf, len, &got) : SSL_read_ex(c->ssl, buf, len, &got);
    if (ok == 1) {
        return (ssize_t)got;
    }
    int e = SSL_get_error(c->ssl, ok);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        c->tls_wants_write = e == SSL_ERROR_WANT_WRITE;
        errno = EAGAIN;
        return -1;
    }
    if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) {
        ERR_clear_error();
        return 0;
    }
    char why[192];
    c->tls_failed = true;
    br_debug("TLS read from %s: %s", c->peer, tls_reason(e, why, sizeof why));
    errno = EPROTO;
    return -1;
}

ssize_t net_io_read(struct br_conn *c, void *buf, size_t len)
{
    return c->ssl != NULL ? tls_read(c, buf, len, false) : read(c->watch.fd, buf, len);
}

ssize_t net_io_peek(struct br_conn *c, void *buf, size_t len)
{
    return c->ssl != NULL ? tls_read(c, buf, len, true) : recv(c->watch.fd, buf, len, MSG_PEEK);
}

void net_tls_kick(struct br_conn *c)
{
    if (c->ssl == NULL || c->dead || c->tls_handshaking || !c->reading) {
        return;
    }
    /* decrypted bytes only: an incomplete record (SSL_has_pending) waits for
     * the socket, which epoll reports */
    if (SSL_pending(c->ssl) > 0) {
        br_task_post(c->net, &c->tls_task);
    }
}

/* What a failed SSL write means: 0 would block (call again with the same
 * bytes once writable), -1 the connection is broken. */
static int write_failed(struct br_conn *c, int ret)
{
    int e = SSL_get_error(c->ssl, ret);
    if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
        c->tls_write_blocked = true;
        return 0;
    }
    char why[192];
    c->tls_failed = true;
    br_debug("TLS write to %s: %s", c->peer, tls_reason(e, why, sizeof why));
    return -1;
}

int net_tls_write(struct br_conn *c, const void *buf, size_t len)
{
    ERR_clear_error();
    errno = 0;
    c->tls_write_blocked = false;
    size_t w = 0;
    int r = SSL_write_ex(c->ssl, buf, len, &w);
    return r == 1 ? 1 : write_failed(c, r);
}

ssize_t net_tls_sendfile(struct br_conn *c, int fd, int64_t pos, size_t len)
{
    ERR_clear_error();
    errno = 0;
    c->tls_write_blocked = false;
    ossl_ssize_t n = SSL_sendfile(c->ssl, fd, (off_t)pos, len, 0);
    return n > 0 ? (ssize_t)n : write_failed(c, (int)n);
}

void net_tls_close(struct br_conn *c)
{
    if (c->ssl == NULL) {
        return;
    }
    br_task_cancel(c->net, &c->tls_task);
    if (!c->tls_handshaking && !c->tls_failed && c->watch.fd >= 0) {
        /* close_notify, best effort: never waits for the peer's */
        (void)SSL_shutdown(c->ssl);
    }
    ERR_clear_error();
    SSL_free(c->ssl);
    c->ssl = NULL;
}

size_t br_conn_tls_subject(const struct br_conn *c, char *buf, size_t len)
{
    if (len == 0) {
        return 0;
    }
    buf[0] = '\0';
    if (c->ssl == NULL || c->tls_handshaking) {
        return 0;
    }
    X509 *cert = SSL_get1_peer_certificate(c->ssl);
    if (cert == NULL) {
        return 0;
    }
    size_t n = 0;
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio != NULL && X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0) {
        int got = BIO_read(bio, buf, (int)(len - 1 > INT32_MAX ? INT32_MAX : len - 1));
        n = got > 0 ? (size_t)got : 0;
    }
    buf[n] = '\0';
    BIO_free(bio);
    X509_free(cert);
    ERR_clear_error();
    return n;
}
