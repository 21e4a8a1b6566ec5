/*
 * samsa-broker: TLS on the SSL listeners, on OpenSSL 3, inside the one
 * non-blocking reactor thread.
 *
 * A listener's context (br_tls_ctx) is made once at start-up from Kafka's
 * ssl.* keys (the broker's configuration layer resolves them, with their
 * listener.name.<l>. overrides, into br_tls_settings). A connection accepted
 * on such a listener runs SSL_do_handshake on readiness: WANT_READ and
 * WANT_WRITE set its epoll interest. Then requests are read with SSL_read_ex
 * and responses written with SSL_write_ex; file regions (a Fetch's records)
 * go with SSL_sendfile when the kernel took the transmit side (kTLS,
 * SSL_OP_ENABLE_KTLS), else are read with pread into a 16 KiB buffer and
 * written like memory. Bytes OpenSSL already holds are read by an
 * end-of-turn task, since epoll will not report them.
 * @locality reactor thread (br_tls_ctx_new: the main thread at start-up)
 */
#ifndef SAMSA_BROKER_REACTOR_NET_TLS_H
#define SAMSA_BROKER_REACTOR_NET_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include <samsa-protocol/err.h>

struct br_tls_ctx;

/* Kafka's keys, as the operator wrote them (NULL: unset). */
struct br_tls_settings {
    const char *listener; /* for messages */
    const char *keystore_type;     /* ssl.keystore.type: PEM (unset), PKCS12; JKS refused */
    const char *keystore_location; /* ssl.keystore.location */
    const char *keystore_password; /* ssl.keystore.password (PKCS12) */
    const char *keystore_key;      /* ssl.keystore.key: inline PEM private key */
    const char *keystore_chain;    /* ssl.keystore.certificate.chain: inline PEM */
    const char *key_password;      /* ssl.key.password: of an encrypted PEM key */
    const char *truststore_type;   /* ssl.truststore.type: PEM (unset), PKCS12 */
    const char *truststore_location;
    const char *truststore_password;
    const char *truststore_certificates; /* ssl.truststore.certificates: inline PEM */
    const char *client_auth;       /* ssl.client.auth: none (unset), requested, required */
    const char *enabled_protocols; /* ssl.enabled.protocols: TLSv1.2,TLSv1.3 (unset) */
    const char *cipher_suites;     /* ssl.cipher.suites: IANA or OpenSSL names; unset: OpenSSL's */
    /* a client context (a broker's connections to the other brokers): the
     * keystore, if any, is its client certificate, the truststore (else
     * OpenSSL's default paths) verifies the server's, client_auth unused */
    bool client;
    /* ssl.endpoint.identification.algorithm: https (Kafka 2.0's default)
     * checks the server's certificate names the host connected to (its IP
     * SAN for an address); "" does not */
    const char *endpoint_identification;
};

/* Makes a server context. 0, or KP_ERR_INVALID_CONFIG with err saying
 * which key and why (a file that does not read, a key that does not match
 * its certificate, a JKS store...). */
KP_MUST_CHECK int br_tls_ctx_new(const struct br_tls_settings *s, struct br_tls_ctx **out,
                                 char *err, size_t errlen);
/* A client connection's SSL on fd, in connect state, checking the
 * server's certificate names host (numeric: its IP SAN; else a DNS name,
 * also sent as SNI) when t checks endpoints. NULL when memory ran out. For
 * the reactor's outbound connections and the controller's senders. */
struct ssl_st *br_tls_client_new(struct br_tls_ctx *t, int fd, const char *host);
/* NULL is a no-op. After the net that used it is freed. */
void br_tls_ctx_free(struct br_tls_ctx *t);

#endif
