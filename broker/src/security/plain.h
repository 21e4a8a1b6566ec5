/*
 * samsa-broker: SASL PLAIN (RFC 4616) as Kafka 2.0's PlainSaslServer and
 * PlainServerCallbackHandler: the token is `[authzid] NUL authcid NUL
 * passwd`, exactly three parts, user and password not empty, the authzid
 * empty or the user; the users are the `user_<name>="<password>"` options
 * of the listener's PlainLoginModule (sasl.jaas.config). Unlike Kafka 2.0
 * (CVE-2021-38153) passwords are compared in constant time: HMACs under a
 * random key of the same length are compared, whatever the lengths, and an
 * unknown user costs the same comparison as a wrong password and fails
 * the same way.
 * @locality any thread (a user list is read-only once made)
 */
#ifndef SAMSA_BROKER_SECURITY_PLAIN_H
#define SAMSA_BROKER_SECURITY_PLAIN_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

struct br_jaas;
struct br_plain_users;

/* The users of a PlainLoginModule entry (its user_* options); a JAAS entry
 * of another module is refused. 0 or -1 (err says why). */
KP_MUST_CHECK int br_plain_users_new(const struct br_jaas *j, struct br_plain_users **out,
                                     char *err, size_t errlen);
void br_plain_users_free(struct br_plain_users *u);
size_t br_plain_users_count(const struct br_plain_users *u);

/* The largest user name PLAIN authenticates. */
#define BR_PLAIN_USER_MAX 255

/* Checks one PLAIN token. 0: user (NUL-terminated, user_cap >=
 * BR_PLAIN_USER_MAX + 1) authenticated. -1: refused, *why the reason for
 * the client (the same for an unknown user and a wrong password). */
KP_MUST_CHECK int br_plain_authenticate(const struct br_plain_users *u, const uint8_t *token,
                                        size_t len, char *user, size_t user_cap, const char **why);

#endif
