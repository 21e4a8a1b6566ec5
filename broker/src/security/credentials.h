/*
 * samsa-broker: the broker's store of SCRAM credentials (credential.h). A
 * user's credentials are the znode /config/users/<user> of a cluster, Kafka's
 * `{"version":1,"config":{"SCRAM-SHA-256":"salt=...",...}}`
 * (ConfigEntityZNode; other config keys, quotas, are left alone). A
 * standalone broker reads them from sasl.scram.credentials.file: one user a
 * line, `<user>=<that JSON>`, the user URL-encoded as Kafka's
 * Sanitizer.sanitize writes it in the znode's path ('#' lines are
 * comments).
 * @locality the reactor thread (loaded on the main thread at start)
 */
#ifndef SAMSA_BROKER_SECURITY_CREDENTIALS_H
#define SAMSA_BROKER_SECURITY_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "security/credential.h"

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
/* Removes every user whose URL-encoded name (br_user_sanitize) is not
 * among sanitized[0..n): a cluster's store after it listed /config/users
 * again, so a user removed while its session was away goes too. Returns
 * how many went. */
size_t br_scram_store_keep_only(struct br_scram_store *s, const char *const *sanitized, size_t n);
/* The store's random secret (32 bytes): the fake salts of unknown users. */
const uint8_t *br_scram_store_secret(const struct br_scram_store *s);

#endif
