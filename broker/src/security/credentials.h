/*
 * samsa-broker: SCRAM credentials in Kafka's format and the broker's store
 * of them.
 *
 * One credential is Kafka's string (ScramCredentialUtils.java at 2.0.0):
 * `salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>`,
 * exactly those four keys, iterations at least 4096
 * (ScramMechanism.java's minimum) and here at most 1000000. A user's
 * credentials are the znode /config/users/<user> of a cluster, Kafka's
 * `{"version":1,"config":{"SCRAM-SHA-256":"salt=...",...}}`
 * (ConfigEntityZNode; other config keys, quotas, are left alone). A
 * standalone broker reads them from sasl.scram.credentials.file: one user a
 * line, `<user>=<that JSON>`, the user URL-encoded as Kafka's
 * Sanitizer.sanitize writes it in the znode's path ('#' lines are
 * comments).
 * @locality a store: the reactor thread; the parsers: any thread
 */
#ifndef SAMSA_BROKER_SECURITY_CREDENTIALS_H
#define SAMSA_BROKER_SECURITY_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "security/sasl_util.h"

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

struct br_scram_store;

KP_MUST_CHECK int br_scram_store_new(struct br_scram_store **out);
void br_scram_store_free(struct br_scram_store *s);
/* The user's znode JSON json[0..len) replaces what the store had of them;
 * json NULL (the znode is gone) or without SCRAM keys removes them. user is
 * the name as it authenticates (decoded). 0, or -1 with *why (the store
 * keeps what it had). */
KP_MUST_CHECK int br_scram_store_set(struct br_scram_store *s, const char *user, const char *json,
                                     size_t len, const char **why);
/* Loads a credentials file (see above). 0, or -1 with err saying which
 * line and why. */
KP_MUST_CHECK int br_scram_store_load_file(struct br_scram_store *s, const char *path, char *err,
                                           size_t errlen);
/* The credential of user[0..len) for `bits`; false when there is none. */
bool br_scram_store_find(const struct br_scram_store *s, int bits, const char *user, size_t len,
                         struct br_scram_credential *out);
size_t br_scram_store_count(const struct br_scram_store *s);
/* The store's random secret (32 bytes): the fake salts of unknown users. */
const uint8_t *br_scram_store_secret(const struct br_scram_store *s);

/* Kafka's Sanitizer: a user name URL-encoded for a znode path (UTF-8
 * bytes; letters, digits and "._-*" kept, "*" as "%2A", space as "%20"),
 * and back. out of cap bytes; false when it does not fit or is malformed. */
bool br_user_sanitize(const char *user, char *out, size_t cap);
bool br_user_desanitize(const char *s, size_t len, char *out, size_t cap);

#endif
