/*
 * SASL on broker connections (security.protocol sasl_plaintext and
 * sasl_ssl): after ApiVersions, SaslHandshake v1 names sasl.mechanisms, then
 * SaslAuthenticate v0 carries the tokens (Kafka 2.0's
 * clients/src/main/java/org/apache/kafka/common/security/authenticator/
 * SaslClientAuthenticator.java), and the connection is up once the broker
 * accepted them. PLAIN (RFC 4616): one token, "\0user\0password". SCRAM-SHA-256
 * and -512 (RFC 5802, RFC 7677) on libcrypto: our nonce from RAND_bytes, the
 * server's nonce must extend it, iterations from 4096 (RFC 7677's minimum,
 * Kafka's ScramMechanism) to 1000000 (the broker's own bound), and the
 * server's signature checked in constant time before the connection is used.
 *
 * A broker that refuses the mechanism or the credentials ends the handle's
 * work (sc_auth_failed): the error callback and every call hear
 * SASL_AUTHENTICATION_FAILED (or UNSUPPORTED_SASL_MECHANISM) with the
 * broker's message, and nothing reconnects with the same password.
 *
 * @locality: the I/O thread with c->lock held.
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define SCRAM_MIN_ITERATIONS 4096
#define SCRAM_MAX_ITERATIONS 1000000
#define HASH_MAX 64

_Static_assert(sizeof(((struct sc_sasl_state *)0)->server_sig) >= HASH_MAX, "SHA-512");

static const char *mech_name(int mech)
{
    return mech == SC_SASL_SCRAM_SHA_256   ? "SCRAM-SHA-256"
           : mech == SC_SASL_SCRAM_SHA_512 ? "SCRAM-SHA-512"
                                           : "PLAIN";
}

static const EVP_MD *mech_md(int mech)
{
    return mech == SC_SASL_SCRAM_SHA_512 ? EVP_sha512() : EVP_sha256();
}

static void on_authenticate(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                            void *ctx);

static void send_token(struct sc_client *c, struct sc_conn *conn, const void *tok, size_t len)
{
    struct kp_SaslAuthenticateRequest req;
    kp_SaslAuthenticateRequest_init(&req);
    req.AuthBytes.ptr = tok;
    req.AuthBytes.len = (int32_t)len;
    if (sc_conn_send_auth(c, conn, KP_API_SASL_AUTHENTICATE, 0, &req, on_authenticate, NULL) !=
        SAMSA_OK) {
        sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
    }
}

/* RFC 5802's saslname: ',' and '=' escaped. NULL when out of memory. */
static char *saslname(const char *user)
{
    size_t n = 0;
    for (const char *p = user; *p != '\0'; p++) {
        n += (*p == ',' || *p == '=') ? 3 : 1;
    }
    char *out = kp_malloc(n + 1);
    if (out == NULL) {
        return NULL;
    }
    char *o = out;
    for (const char *p = user; *p != '\0'; p++) {
        if (*p == ',') {
            memcpy(o, "=2C", 3);
            o += 3;
        } else if (*p == '=') {
            memcpy(o, "=3D", 3);
            o += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return out;
}

static void send_first(struct sc_client *c, struct sc_conn *conn)
{
    const struct sc_conf_values *v = c->v;
    if (v->sasl_mechanism == SC_SASL_PLAIN) {
        size_t ul = strlen(v->sasl_username);
        size_t pl = strlen(v->sasl_password);
        uint8_t *tok = kp_malloc(ul + pl + 2);
        if (tok == NULL) {
            sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
            return;
        }
        tok[0] = '\0';
        memcpy(tok + 1, v->sasl_username, ul);
        tok[1 + ul] = '\0';
        memcpy(tok + 2 + ul, v->sasl_password, pl);
        conn->sasl.step = 2;
        send_token(c, conn, tok, ul + pl + 2);
        OPENSSL_cleanse(tok, ul + pl + 2);
        kp_free(tok);
        return;
    }
    uint8_t rnd[24];
    char *name = saslname(v->sasl_username);
    if (name == NULL || RAND_bytes(rnd, (int)sizeof(rnd)) != 1) {
        kp_free(name);
        sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "no random bytes for the SCRAM nonce");
        return;
    }
    struct sc_sasl_state *s = &conn->sasl;
    (void)EVP_EncodeBlock((unsigned char *)s->nonce, rnd, (int)sizeof(rnd));
    int bl = snprintf(s->first_bare, sizeof(s->first_bare), "n=%s,r=%s", name, s->nonce);
    kp_free(name);
    char first[sizeof(s->first_bare) + 4];
    int n = snprintf(first, sizeof(first), "n,,%s", s->first_bare);
    if (bl < 0 || (size_t)bl >= sizeof(s->first_bare) || n < 0 || (size_t)n >= sizeof(first)) {
        sc_auth_failed(c, conn, SAMSA_ERR_INVALID_CONFIG, "sasl.username is too long");
        return;
    }
    s->step = 1;
    send_token(c, conn, first, (size_t)n);
}

/* Strict base64 of s[0..len) into out[0..cap): the bytes decoded, or -1. */
static long b64_decode(const char *s, size_t len, uint8_t *out, size_t cap)
{
    if (len == 0 || len % 4 != 0 || len / 4 * 3 > cap) {
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                  (ch >= '0' && ch <= '9') || ch == '+' || ch == '/' ||
                  (ch == '=' && i >= len - 2 && (i == len - 1 || s[len - 1] == '='));
        if (!ok) {
            return -1;
        }
    }
    int n = EVP_DecodeBlock(out, (const unsigned char *)s, (int)len);
    if (n < 0) {
        return -1;
    }
    return n - (s[len - 1] == '=') - (s[len - 2] == '=');
}

/* The value of attribute `a` ("r", "s", "i", "v", "e") in a SCRAM message
 * msg[0..len), or NULL; *vlen its length. */
static const char *attr(const char *msg, size_t len, char a, size_t *vlen)
{
    size_t i = 0;
    while (i + 1 < len) {
        size_t end = i;
        while (end < len && msg[end] != ',') {
            end++;
        }
        if (msg[i] == a && msg[i + 1] == '=') {
            *vlen = end - i - 2;
            return msg + i + 2;
        }
        i = end + 1;
    }
    return NULL;
}

static bool hmac(const EVP_MD *md, const uint8_t *key, size_t klen, const void *data,
                 size_t len, uint8_t *out)
{
    unsigned int ol = 0;
    return HMAC(md, key, (int)klen, data, len, out, &ol) != NULL;
}

/* server-first-message: checks it and answers client-final-message,
 * keeping the signature the server must prove. */
static void send_final(struct sc_client *c, struct sc_conn *conn, const char *msg, size_t len)
{
    struct sc_sasl_state *s = &conn->sasl;
    const EVP_MD *md = mech_md(c->v->sasl_mechanism);
    size_t hl = (size_t)EVP_MD_get_size(md);
    size_t rl = 0, sl = 0, il = 0;
    const char *r = attr(msg, len, 'r', &rl);
    const char *salt64 = attr(msg, len, 's', &sl);
    const char *it = attr(msg, len, 'i', &il);
    size_t ours = strlen(s->nonce);
    char its[16];
    long iterations = 0;
    if (it != NULL && il > 0 && il < sizeof(its)) {
        memcpy(its, it, il);
        its[il] = '\0';
        char *end = NULL;
        iterations = strtol(its, &end, 10);
        iterations = end != NULL && *end == '\0' ? iterations : 0;
    }
    uint8_t salt[128];
    long saltlen = salt64 != NULL ? b64_decode(salt64, sl, salt, sizeof(salt)) : -1;
    const char *bad = r == NULL || salt64 == NULL || it == NULL ? "a missing attribute"
                      : rl <= ours || rl > 300 || memcmp(r, s->nonce, ours) != 0
                          ? "a server nonce that does not extend ours"
                      : saltlen <= 0 ? "a salt that is not base64"
                      : iterations < SCRAM_MIN_ITERATIONS || iterations > SCRAM_MAX_ITERATIONS
                          ? "an iteration count outside 4096..1000000"
                          : NULL;
    if (bad != NULL) {
        sc_auth_failed(c, conn, KP_ERR_SASL_AUTHENTICATION_FAILED,
                       "%s:%d: %s: the broker's first message has %s", conn->host, conn->port,
                       mech_name(c->v->sasl_mechanism), bad);
        return;
    }
    const char *pw = c->v->sasl_password;
    uint8_t salted[HASH_MAX], ckey[HASH_MAX], stored[HASH_MAX], csig[HASH_MAX], proof[HASH_MAX];
    uint8_t skey[HASH_MAX];
    /* client-final-message-without-proof, then AuthMessage */
    char final[400];
    int fl = snprintf(final, sizeof(final), "c=biws,r=%.*s", (int)rl, r);
    size_t alen = strlen(s->first_bare) + len + (size_t)fl + 3;
    char *am = kp_malloc(alen);
    bool ok = fl > 0 && (size_t)fl < sizeof(final) && am != NULL;
    if (ok) {
        snprintf(am, alen, "%s,%.*s,%s", s->first_bare, (int)len, msg, final);
        ok = PKCS5_PBKDF2_HMAC(pw, (int)strlen(pw), salt, (int)saltlen, (int)iterations, md,
                               (int)hl, salted) == 1 &&
             hmac(md, salted, hl, "Client Key", 10, ckey) &&
             EVP_Digest(ckey, hl, stored, NULL, md, NULL) == 1 &&
             hmac(md, stored, hl, am, strlen(am), csig) &&
             hmac(md, salted, hl, "Server Key", 10, skey) &&
             hmac(md, skey, hl, am, strlen(am), s->server_sig);
    }
    kp_free(am);
    if (!ok) {
        OPENSSL_cleanse(salted, sizeof(salted));
        sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "SCRAM: out of memory or a libcrypto failure");
        return;
    }
    for (size_t i = 0; i < hl; i++) {
        proof[i] = ckey[i] ^ csig[i];
    }
    char proof64[4 * HASH_MAX / 3 + 8];
    (void)EVP_EncodeBlock((unsigned char *)proof64, proof, (int)hl);
    char tok[600];
    int n = snprintf(tok, sizeof(tok), "%s,p=%s", final, proof64);
    OPENSSL_cleanse(salted, sizeof(salted));
    OPENSSL_cleanse(ckey, sizeof(ckey));
    OPENSSL_cleanse(skey, sizeof(skey));
    s->step = 2;
    send_token(c, conn, tok, n > 0 && (size_t)n < sizeof(tok) ? (size_t)n : 0);
}

/* server-final-message: "v=" and the signature we computed, else "e=". */
static bool server_proved(struct sc_client *c, struct sc_conn *conn, const char *msg, size_t len)
{
    size_t vl = 0, el = 0;
    const char *v = attr(msg, len, 'v', &vl);
    const char *e = attr(msg, len, 'e', &el);
    uint8_t sig[HASH_MAX + 3];
    size_t hl = (size_t)EVP_MD_get_size(mech_md(c->v->sasl_mechanism));
    long n = v != NULL ? b64_decode(v, vl, sig, sizeof(sig)) : -1;
    if (n == (long)hl && CRYPTO_memcmp(sig, conn->sasl.server_sig, hl) == 0) {
        return true;
    }
    sc_auth_failed(c, conn, KP_ERR_SASL_AUTHENTICATION_FAILED,
                   "%s:%d: %s: %s%.*s", conn->host, conn->port, mech_name(c->v->sasl_mechanism),
                   e != NULL ? "the broker says " : "the broker's signature does not verify",
                   e != NULL ? (int)el : 0, e != NULL ? e : "");
    return false;
}

static void on_authenticate(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                            void *ctx)
{
    (void)ctx;
    if (err != 0) {
        return; /* the connection is being closed */
    }
    const struct kp_SaslAuthenticateResponse *r = body;
    if (r->ErrorCode != 0) {
        sc_auth_failed(c, conn, sc_err_from_wire(r->ErrorCode), "%s:%d: %s as \"%s\": %s: %.*s",
                       conn->host, conn->port, mech_name(c->v->sasl_mechanism),
                       c->v->sasl_username, kp_err_name(r->ErrorCode),
                       r->ErrorMessage.len > 0 ? (int)r->ErrorMessage.len : 0,
                       r->ErrorMessage.len > 0 ? r->ErrorMessage.ptr : "");
        return;
    }
    const char *tok = (const char *)r->AuthBytes.ptr;
    size_t len = r->AuthBytes.len > 0 ? (size_t)r->AuthBytes.len : 0;
    if (conn->sasl.step == 1) {
        send_final(c, conn, tok, len);
        return;
    }
    if (c->v->sasl_mechanism != SC_SASL_PLAIN && !server_proved(c, conn, tok, len)) {
        return;
    }
    sc_log(c, "authenticated to %s:%d as \"%s\" with %s", conn->host, conn->port,
           c->v->sasl_username, mech_name(c->v->sasl_mechanism));
    OPENSSL_cleanse(&conn->sasl, sizeof(conn->sasl));
    sc_conn_up(c, conn);
}

static void on_handshake(struct sc_client *c, struct sc_conn *conn, int err, void *body,
                         void *ctx)
{
    (void)ctx;
    if (err != 0) {
        return; /* the connection is being closed */
    }
    const struct kp_SaslHandshakeResponse *r = body;
    if (r->ErrorCode != 0) {
        char list[256] = "";
        size_t off = 0;
        for (int32_t i = 0; i < r->Mechanisms.count && off < sizeof(list); i++) {
            int n = snprintf(list + off, sizeof(list) - off, "%s%.*s", i > 0 ? ", " : "",
                             (int)r->Mechanisms.items[i].len, r->Mechanisms.items[i].ptr);
            off += n > 0 ? (size_t)n : 0;
        }
        sc_auth_failed(c, conn, sc_err_from_wire(r->ErrorCode),
                       "%s:%d: sasl.mechanisms=%s refused (%s); the broker enables: %s",
                       conn->host, conn->port, mech_name(c->v->sasl_mechanism),
                       kp_err_name(r->ErrorCode), list);
        return;
    }
    send_first(c, conn);
}

void sc_sasl_start(struct sc_client *c, struct sc_conn *conn)
{
    if (sc_conn_version(conn, KP_API_SASL_HANDSHAKE, 1, 1) < 0 ||
        sc_conn_version(conn, KP_API_SASL_AUTHENTICATE, 0, 0) < 0) {
        sc_auth_failed(c, conn, SAMSA_ERR_UNSUPPORTED,
                       "%s:%d: the broker offers no SaslHandshake v1 and SaslAuthenticate v0 "
                       "(a SASL listener of Kafka 1.0 or later)",
                       conn->host, conn->port);
        return;
    }
    OPENSSL_cleanse(&conn->sasl, sizeof(conn->sasl));
    struct kp_SaslHandshakeRequest req;
    kp_SaslHandshakeRequest_init(&req);
    req.Mechanism = kp_str_c(mech_name(c->v->sasl_mechanism));
    if (sc_conn_send_auth(c, conn, KP_API_SASL_HANDSHAKE, 1, &req, on_handshake, NULL) !=
        SAMSA_OK) {
        sc_conn_close(c, conn, SAMSA_ERR_NOMEM, "out of memory");
    }
}
