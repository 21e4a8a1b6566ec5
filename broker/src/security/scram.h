/*
 * samsa-broker: the server side of SCRAM-SHA-256 and SCRAM-SHA-512 (RFC
 * 5802, RFC 7677) on libcrypto, as Kafka 2.0's ScramSaslServer and
 * ScramMessages, without its holes:
 *  - client-first `n,[a=<authzid>],n=<user>,r=<nonce>[,<ext>]`: the gs2
 *    header must be `n` (no channel binding), an authzid must be the user,
 *    names decode =2C and =3D, no SASLprep (Kafka does none either);
 *    extensions are ignored except tokenauth=true (delegation tokens: not
 *    there), which fails.
 *  - server-first `r=<client nonce><server nonce>,s=<salt>,i=<iterations>`;
 *    for a user without a credential a fake salt (HMAC of the store's
 *    secret and the name) and 4096 iterations, so the answer does not tell
 *    whether the user exists (RFC 5802 section 5.1; Kafka 2.0 answers
 *    "Invalid user credentials" at once).
 *  - client-final `c=<base64 of the gs2 header>,r=<the whole nonce>,
 *    p=<proof>`: c= must be the header the client sent, r= the nonce this
 *    server sent (Kafka checks it only from 3.7.2, CVE-2024-56128), the
 *    proof the hash's length; StoredKey compared in constant time.
 *  - server-final `v=<server signature>`; any failure ends the exchange
 *    (no state is reused).
 * The server runs no PBKDF2: two HMACs and a digest per login.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SECURITY_SCRAM_H
#define SAMSA_BROKER_SECURITY_SCRAM_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

struct br_scram_store;
struct br_scram_server;

/* The longest message taken (client-first, client-final). */
#define BR_SCRAM_MESSAGE_MAX 4096
/* The longest user name. */
#define BR_SCRAM_USER_MAX 255

enum br_sasl_step {
    BR_SASL_CONTINUE = 1, /* *out goes to the client, another token follows */
    BR_SASL_DONE,         /* *out goes to the client; authenticated */
    BR_SASL_FAILED,       /* *why says why (for the client) */
};

/* A new exchange for bits 256 or 512 against store (which outlives it). */
KP_MUST_CHECK int br_scram_server_new(int bits, const struct br_scram_store *store,
                                      struct br_scram_server **out);
void br_scram_server_free(struct br_scram_server *s);
/* One client message in[0..len); *out (kp_malloc'd, *out_len bytes) the
 * answer. On DONE user holds the authenticated name (user_cap >=
 * BR_SCRAM_USER_MAX + 1). */
enum br_sasl_step br_scram_server_step(struct br_scram_server *s, const uint8_t *in, size_t len,
                                       uint8_t **out, size_t *out_len, char *user, size_t user_cap,
                                       const char **why);

#endif
