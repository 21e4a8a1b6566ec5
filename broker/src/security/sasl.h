/*
 * samsa-broker: SASL on the SASL_PLAINTEXT and SASL_SSL listeners, the
 * exchange before a connection is served, as Kafka 2.0's
 * SaslServerAuthenticator (clients/.../authenticator/
 * SaslServerAuthenticator.java at 2.0.0):
 *
 *   HANDSHAKE_OR_VERSIONS  ApiVersions (answered by the broker, full list)
 *                          or SaslHandshake v0-1
 *   SaslHandshake v0       the next frames are raw tokens (4-byte size and
 *                          the token, no Kafka header), answered the same
 *                          way; a failure closes the connection
 *   SaslHandshake v1       the tokens come in SaslAuthenticate v0; a
 *                          failure answers SASL_AUTHENTICATION_FAILED with a
 *                          message, then closes
 *   anything else          ILLEGAL_SASL_STATE, then close (never handled)
 *   a mechanism not enabled  UNSUPPORTED_SASL_MECHANISM with the list, close
 *
 * A failed authentication is answered after
 * connection.failed.authentication.delay.ms (Kafka 2.1). Once
 * authenticated the connection's principal is User:<name> (kept by the
 * reactor, br_conn_principal) and it is served as any other; a
 * SaslHandshake or SaslAuthenticate then gets ILLEGAL_SASL_STATE
 * (br_sasl_after_authentication, as KafkaApis does on every listener).
 * Mechanisms: PLAIN (plain.h), SCRAM-SHA-256 and SCRAM-SHA-512 (scram.h).
 * @locality reactor thread (br_sasl_listener_new: the main thread at start)
 */
#ifndef SAMSA_BROKER_SECURITY_SASL_H
#define SAMSA_BROKER_SECURITY_SASL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>
#include <samsa-protocol/header.h>

struct br_config;
struct br_conn;
struct br_scram_store;
struct br_sasl_listener;

/* The SASL of listener `listener` (its name) from the configuration:
 * sasl.enabled.mechanisms (required: Kafka's default GSSAPI is not here)
 * and, for PLAIN, the users of sasl.jaas.config with its
 * listener.name.<l>.[plain.] overrides. scram is the broker's SCRAM store
 * (outlives the listener). 0, or -1 with err saying what to set. */
KP_MUST_CHECK int br_sasl_listener_new(const struct br_config *c, const char *listener,
                                       struct br_scram_store *scram, struct br_sasl_listener **out,
                                       char *err, size_t errlen);
void br_sasl_listener_free(struct br_sasl_listener *l);
/* Whether the listener enables a SCRAM mechanism. */
bool br_sasl_listener_scram(const struct br_sasl_listener *l);

/* A frame of a connection of listener l that is not authenticated yet,
 * before it is decoded: true when it was a raw token (after SaslHandshake
 * v0) or is dropped (a failed connection waits for its close), and so
 * taken. */
bool br_sasl_raw_frame(struct br_sasl_listener *l, struct br_conn *c, const uint8_t *payload,
                       size_t len);

enum br_sasl_verdict {
    BR_SASL_PASS = 1, /* handled as usual (ApiVersions, or a frame that does not decode) */
    BR_SASL_TAKEN,    /* answered here */
    BR_SASL_REFUSED,  /* not allowed now: answer ILLEGAL_SASL_STATE and close */
};

/* A decoded request (decode_err its decoding's result) of a connection of
 * listener l not authenticated yet. */
enum br_sasl_verdict br_sasl_request(struct br_sasl_listener *l, struct br_conn *c,
                                     const struct kp_request_header *h, const void *body,
                                     int decode_err);

#endif
