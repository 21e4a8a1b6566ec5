/* samsa-broker: SCRAM's server side (see scram.h). */
#include "security/scram.h"

#include "security/credentials.h"
#include "security/sasl_util.h"

#include <samsa-protocol/alloc.h>

#include <openssl/rand.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NONCE_BYTES 24
#define FAKE_ITERATIONS BR_SCRAM_MIN_ITERATIONS
#define INVALID                                                                                    \
    "Authentication failed during authentication due to invalid credentials with SASL mechanism"

enum phase {
    PHASE_FIRST = 0,
    PHASE_FINAL,
    PHASE_OVER,
};

struct br_scram_server {
    int bits;
    const struct br_scram_store *store;
    enum phase phase;
    bool fake; /* no credential: the exchange runs on and fails */
    struct br_scram_credential cred;
    char user[BR_SCRAM_USER_MAX + 1];
    char gs2[BR_SCRAM_USER_MAX * 3 + 8]; /* "n,," or "n,a=<authzid>," as sent */
    size_t gs2_len;
    char nonce[BR_SCRAM_MESSAGE_MAX + 64]; /* client's + server's */
    size_t cnonce_len;                     /* the client's part */
    char *auth_message;                    /* client-first-bare "," server-first */
    size_t auth_len;
};

int br_scram_server_new(int bits, const struct br_scram_store *store, struct br_scram_server **out)
{
    struct br_scram_server *s = kp_calloc(1, sizeof *s);
    if (s == NULL) {
        return -1;
    }
    s->bits = bits;
    s->store = store;
    *out = s;
    return 0;
}

void br_scram_server_free(struct br_scram_server *s)
{
    if (s == NULL) {
        return;
    }
    kp_free(s->auth_message);
    memset(s, 0, sizeof *s);
    kp_free(s);
}

/* a saslname (RFC 5802: =2C is ',', =3D is '=', no other '=') into out */
static bool decode_name(const char *p, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (o + 1 >= cap) {
            return false;
        }
        if (p[i] == '=') {
            if (i + 2 >= len) {
                return false;
            }
            if (memcmp(p + i, "=2C", 3) == 0) {
                out[o++] = ',';
            } else if (memcmp(p + i, "=3D", 3) == 0) {
                out[o++] = '=';
            } else {
                return false;
            }
            i += 2;
        } else if (p[i] == '\0' || p[i] == ',') {
            return false;
        } else {
            out[o++] = p[i];
        }
    }
    out[o] = '\0';
    return o > 0;
}

/* printable ASCII but ',' (RFC 5802's c-nonce) */
static bool valid_nonce(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] < 0x21 || p[i] > 0x7e || p[i] == ',') {
            return false;
        }
    }
    return len > 0;
}

static enum br_sasl_step failed(struct br_scram_server *s, const char **why, const char *what)
{
    s->phase = PHASE_OVER;
    *why = what;
    return BR_SASL_FAILED;
}

static enum br_sasl_step client_first(struct br_scram_server *s, const char *m, size_t len,
                                      uint8_t **out, size_t *out_len, const char **why)
{
    /* gs2-header: "n," [ "a=" authzid ] "," */
    if (len < 3 || m[0] != 'n' || m[1] != ',') {
        return failed(s, why,
                      "Invalid SCRAM client first message: channel binding is not supported");
    }
    const char *second = memchr(m + 2, ',', len - 2);
    if (second == NULL) {
        return failed(s, why, "Invalid SCRAM client first message");
    }
    char authzid[BR_SCRAM_USER_MAX + 1] = "";
    size_t az_len = (size_t)(second - (m + 2));
    if (az_len > 0 && (az_len < 3 || memcmp(m + 2, "a=", 2) != 0 ||
                       !decode_name(m + 4, az_len - 2, authzid, sizeof authzid))) {
        return failed(s, why, "Invalid SCRAM client first message: bad authorization id");
    }
    s->gs2_len = (size_t)(second + 1 - m);
    if (s->gs2_len >= sizeof s->gs2) {
        return failed(s, why, "Invalid SCRAM client first message");
    }
    memcpy(s->gs2, m, s->gs2_len);
    const char *bare = second + 1;
    size_t bare_len = len - s->gs2_len;
    /* n=<user>,r=<nonce>[,ext...] */
    const char *c1 = bare_len > 2 ? memchr(bare, ',', bare_len) : NULL;
    if (c1 == NULL || memcmp(bare, "n=", 2) != 0 ||
        !decode_name(bare + 2, (size_t)(c1 - bare) - 2, s->user, sizeof s->user)) {
        return failed(s, why, "Invalid SCRAM client first message: bad user name");
    }
    const char *r = c1 + 1;
    size_t rest = (size_t)(bare + bare_len - r);
    const char *c2 = memchr(r, ',', rest);
    size_t r_len = c2 != NULL ? (size_t)(c2 - r) : rest;
    if (r_len < 3 || memcmp(r, "r=", 2) != 0 || !valid_nonce(r + 2, r_len - 2)) {
        return failed(s, why, "Invalid SCRAM client first message: bad nonce");
    }
    for (const char *e = c2; e != NULL;) {
        const char *start = e + 1;
        const char *next = memchr(start, ',', (size_t)(bare + bare_len - start));
        size_t n = next != NULL ? (size_t)(next - start) : (size_t)(bare + bare_len - start);
        if (n == 14 && memcmp(start, "tokenauth=true", 14) == 0) {
            return failed(s, why, "Authentication failed: delegation tokens are not supported");
        }
        e = next;
    }
    if (authzid[0] != '\0' && strcmp(authzid, s->user) != 0) {
        return failed(s, why,
                      "Authentication failed: Client requested an authorization id "
                      "that is different from username");
    }
    uint8_t raw[NONCE_BYTES];
    char snonce[NONCE_BYTES * 2];
    if (RAND_bytes(raw, sizeof raw) != 1) {
        return failed(s, why, "Authentication failed: no randomness");
    }
    (void)br_b64_encode(raw, sizeof raw, snonce);
    int nlen = snprintf(s->nonce, sizeof s->nonce, "%.*s%s", (int)(r_len - 2), r + 2, snonce);
    if (nlen < 0 || (size_t)nlen >= sizeof s->nonce) {
        return failed(s, why, "Invalid SCRAM client first message");
    }
    s->cnonce_len = r_len - 2;
    if (!br_scram_store_find(s->store, s->bits, s->user, strlen(s->user), &s->cred)) {
        /* the same answer as for a user that exists */
        uint8_t mac[BR_SASL_HASH_MAX];
        s->fake = true;
        memset(&s->cred, 0, sizeof s->cred);
        if (!br_sasl_hmac(256, br_scram_store_secret(s->store), 32, s->user, strlen(s->user),
                          mac)) {
            return failed(s, why, "Authentication failed");
        }
        memcpy(s->cred.salt, mac, 32);
        s->cred.salt_len = 32;
        s->cred.iterations = FAKE_ITERATIONS;
    }
    char salt[BR_SCRAM_SALT_MAX * 2];
    (void)br_b64_encode(s->cred.salt, s->cred.salt_len, salt);
    size_t cap = bare_len + 1 + strlen(s->nonce) + strlen(salt) + 32;
    char *am = kp_malloc(cap);
    if (am == NULL) {
        return failed(s, why, "Authentication failed: out of memory");
    }
    int first_at = (int)bare_len + 1;
    int n = snprintf(am, cap, "%.*s,r=%s,s=%s,i=%d", (int)bare_len, bare, s->nonce, salt,
                     s->cred.iterations);
    if (n < 0 || (size_t)n >= cap) {
        kp_free(am);
        return failed(s, why, "Authentication failed");
    }
    s->auth_message = am;
    s->auth_len = (size_t)n;
    size_t sf_len = (size_t)n - (size_t)first_at;
    *out = kp_malloc(sf_len);
    if (*out == NULL) {
        return failed(s, why, "Authentication failed: out of memory");
    }
    memcpy(*out, am + first_at, sf_len);
    *out_len = sf_len;
    s->phase = PHASE_FINAL;
    return BR_SASL_CONTINUE;
}

static enum br_sasl_step client_final(struct br_scram_server *s, const char *m, size_t len,
                                      uint8_t **out, size_t *out_len, const char **why)
{
    const char *bad = "Invalid SCRAM client final message";
    /* c=<b64 gs2>,r=<nonce>[,ext...],p=<b64 proof>; p= is the last */
    const char *p_at = NULL;
    for (size_t i = len; i >= 3; i--) {
        if (memcmp(m + i - 3, ",p=", 3) == 0) {
            p_at = m + i - 3;
            break;
        }
    }
    if (len < 2 || memcmp(m, "c=", 2) != 0 || p_at == NULL) {
        return failed(s, why, bad);
    }
    size_t without_proof = (size_t)(p_at - m);
    const char *c_end = memchr(m, ',', without_proof + 1);
    uint8_t gs2[sizeof s->gs2 + 4];
    long gl = br_b64_decode(m + 2, (size_t)(c_end - m) - 2, gs2, sizeof gs2);
    if (gl != (long)s->gs2_len || memcmp(gs2, s->gs2, s->gs2_len) != 0) {
        return failed(s, why, "Invalid SCRAM client final message: channel binding differs");
    }
    /* r= is the whole nonce the server sent; librdkafka up to 2.x sends its
     * own nonce before it again (rdkafka_sasl_scram.c writes "r=%.*s%s" of
     * its nonce and the server's), which is taken too: the server's part,
     * random, is there whole either way */
    const char *r = c_end + 1;
    size_t nonce_len = strlen(s->nonce);
    const char *r_end = r < p_at ? memchr(r, ',', (size_t)(p_at - r) + 1) : NULL;
    size_t r_len = r_end != NULL && r_end - r >= 2 ? (size_t)(r_end - r) - 2 : 0;
    bool echoed = r_len == nonce_len && br_sasl_equal(r + 2, s->nonce, nonce_len);
    bool doubled = r_len == nonce_len + s->cnonce_len &&
                   br_sasl_equal(r + 2, s->nonce, s->cnonce_len) &&
                   br_sasl_equal(r + 2 + s->cnonce_len, s->nonce, nonce_len);
    if (r_end == NULL || memcmp(r, "r=", 2) != 0 || !(echoed || doubled)) {
        return failed(s, why, "Invalid SCRAM client final message: the nonce is not the server's");
    }
    size_t hlen = br_sasl_hash_len(s->bits);
    uint8_t proof[BR_SASL_HASH_MAX + 3];
    if (br_b64_decode(p_at + 3, len - without_proof - 3, proof, sizeof proof) != (long)hlen) {
        return failed(s, why, bad);
    }
    size_t full = s->auth_len + 1 + without_proof;
    char *am = kp_realloc(s->auth_message, full);
    if (am == NULL) {
        return failed(s, why, "Authentication failed: out of memory");
    }
    s->auth_message = am;
    am[s->auth_len] = ',';
    memcpy(am + s->auth_len + 1, m, without_proof);
    s->auth_len = full;
    uint8_t sig[BR_SASL_HASH_MAX];
    uint8_t client_key[BR_SASL_HASH_MAX];
    uint8_t stored[BR_SASL_HASH_MAX];
    if (!br_sasl_hmac(s->bits, s->cred.stored_key, hlen, am, full, sig)) {
        return failed(s, why, "Authentication failed");
    }
    for (size_t i = 0; i < hlen; i++) {
        client_key[i] = proof[i] ^ sig[i];
    }
    bool ok = br_sasl_digest(s->bits, client_key, hlen, stored) &&
              br_sasl_equal(stored, s->cred.stored_key, hlen);
    if (!ok || s->fake) {
        return failed(s, why, INVALID);
    }
    uint8_t server_sig[BR_SASL_HASH_MAX];
    char b64[BR_SASL_HASH_MAX * 2];
    if (!br_sasl_hmac(s->bits, s->cred.server_key, hlen, am, full, server_sig)) {
        return failed(s, why, "Authentication failed");
    }
    size_t n = br_b64_encode(server_sig, hlen, b64);
    *out = kp_malloc(n + 2);
    if (*out == NULL) {
        return failed(s, why, "Authentication failed: out of memory");
    }
    memcpy(*out, "v=", 2);
    memcpy(*out + 2, b64, n);
    *out_len = n + 2;
    s->phase = PHASE_OVER;
    return BR_SASL_DONE;
}

enum br_sasl_step br_scram_server_step(struct br_scram_server *s, const uint8_t *in, size_t len,
                                       uint8_t **out, size_t *out_len, char *user, size_t user_cap,
                                       const char **why)
{
    *out = NULL;
    *out_len = 0;
    if (len > BR_SCRAM_MESSAGE_MAX || memchr(in, 0, len) != NULL) {
        return failed(s, why, "Invalid SCRAM message");
    }
    const char *m = (const char *)in;
    switch (s->phase) {
    case PHASE_FIRST:
        return client_first(s, m, len, out, out_len, why);
    case PHASE_FINAL: {
        enum br_sasl_step st = client_final(s, m, len, out, out_len, why);
        if (st == BR_SASL_DONE) {
            (void)snprintf(user, user_cap, "%s", s->user);
        }
        return st;
    }
    case PHASE_OVER:
    default:
        return failed(s, why, "Invalid SCRAM state");
    }
}
