/*
 * samsa-broker: one SCRAM credential in Kafka's format
 * (ScramCredentialUtils.java at 2.0.0):
 * `salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>`,
 * exactly those four keys, iterations at least 4096 (ScramMechanism.java's
 * minimum) and here at most 1000000; and user names as Kafka's Sanitizer
 * writes them in znode paths. Used by the broker (credentials.h) and the
 * samsa tool (`samsa users`).
 * @locality any thread
 */
#ifndef SAMSA_BROKER_SECURITY_CREDENTIAL_H
#define SAMSA_BROKER_SECURITY_CREDENTIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "security/sasl_util.h"

/* The longest user name (as it authenticates). */
#define BR_SCRAM_USER_NAME_MAX 255
/* ... and URL-encoded for a znode path (br_user_sanitize), at most. */
#define BR_SCRAM_USER_SANITIZED_MAX ((size_t)BR_SCRAM_USER_NAME_MAX * 3)
#define BR_SCRAM_MIN_ITERATIONS 4096
#define BR_SCRAM_MAX_ITERATIONS 1000000
#define BR_SCRAM_SALT_MAX 128
/* the longest credential string: three base64 fields and the iterations */
#define BR_SCRAM_CREDENTIAL_MAX 512

struct br_scram_credential {
    uint8_t salt[BR_SCRAM_SALT_MAX];
    size_t salt_len;
    uint8_t stored_key[BR_SASL_HASH_MAX];
    uint8_t server_key[BR_SASL_HASH_MAX];
    int iterations;
};

/* Kafka's credential string s[0..len) for the hash of `bits` (256, 512).
 * 0, or -1 with *why. */
KP_MUST_CHECK int br_scram_credential_parse(const char *s, size_t len, int bits,
                                            struct br_scram_credential *out, const char **why);
/* The string of c into out (BR_SCRAM_CREDENTIAL_MAX bytes). */
void br_scram_credential_format(int bits, const struct br_scram_credential *c, char *out);
/* A new credential for password: a random salt, Hi(), the two keys (RFC
 * 5802's math, Kafka's ScramFormatter). 0 or -1. */
KP_MUST_CHECK int br_scram_credential_make(int bits, const char *password, int iterations,
                                           struct br_scram_credential *out);

/* RFC 5802's keys from a password: SaltedPassword = Hi(password, salt,
 * iterations), ClientKey = HMAC(SaltedPassword, "Client Key"), StoredKey =
 * H(ClientKey), ServerKey = HMAC(SaltedPassword, "Server Key"); each
 * br_sasl_hash_len(bits) bytes. The credential's (br_scram_credential_make)
 * and the client's (sasl_client.c). 0 or -1. */
KP_MUST_CHECK int br_scram_keys(int bits, const char *password, const uint8_t *salt,
                                size_t salt_len, int iterations, uint8_t *client_key,
                                uint8_t *stored_key, uint8_t *server_key);

/* Kafka's Sanitizer: a user name URL-encoded for a znode path (UTF-8
 * bytes; letters, digits and "._-*" kept, "*" as "%2A", space as "%20"),
 * and back. out of cap bytes; false when it does not fit or is malformed. */
bool br_user_sanitize(const char *user, char *out, size_t cap);
bool br_user_desanitize(const char *s, size_t len, char *out, size_t cap);

#endif
