/*
 * samsa-broker: the client side of SASL, for a broker's connections to the
 * other brokers' inter-broker listener (Kafka 2.0's SaslClientAuthenticator,
 * clients/src/main/java/org/apache/kafka/common/security/authenticator/
 * SaslClientAuthenticator.java at 2.0.0): SaslHandshake v1 naming the
 * mechanism, then the tokens in SaslAuthenticate v0, before any other
 * request. PLAIN (RFC 4616: `NUL user NUL password`) and SCRAM-SHA-256/512
 * (RFC 5802, RFC 7677: client-first `n,,n=<user>,r=<nonce>`, the server's
 * nonce checked to start with ours, the proof, and the server's signature
 * checked against ServerKey before the exchange counts as done), on the
 * keys of credential.h. It implements the reactor's br_outbound_auth_ops,
 * which the controller's sender threads call as well.
 * @locality any thread (one exchange on one thread at a time)
 */
#ifndef SAMSA_BROKER_SECURITY_SASL_CLIENT_H
#define SAMSA_BROKER_SECURITY_SASL_CLIENT_H

#include <stddef.h>

#include <samsa-protocol/err.h>

#include "reactor/net.h"

/* The broker's own login: the mechanism (PLAIN, SCRAM-SHA-256,
 * SCRAM-SHA-512), its user and password, and the client id its requests
 * carry. */
struct br_sasl_login;

/* 0, KP_E_INVALID_ARG (another mechanism, an empty user or password, a
 * user over 255 bytes or a password over 1024) or KP_E_NOMEM. */
KP_MUST_CHECK int br_sasl_login_new(const char *mechanism, const char *user, const char *password,
                                    const char *client_id, struct br_sasl_login **out);
/* NULL is a no-op; after every exchange started with it is freed. */
void br_sasl_login_free(struct br_sasl_login *l);

/* start(login), step(...), free(state): see br_outbound_auth_ops. */
extern const struct br_outbound_auth_ops br_sasl_client_ops;

#endif
