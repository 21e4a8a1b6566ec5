/* samsa-broker: the client side of SASL between brokers (see sasl_client.h). */
#include "security/sasl_client.h"

#include "base/logging.h"
#include "security/credential.h"
#include "security/sasl_util.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NONCE_BYTES 24
/* the longest server message taken (server-first, server-final) */
#define SERVER_MESSAGE_MAX 4096
/* the longest password taken */
#define BR_SASL_PASSWORD_MAX 1024

struct br_sasl_login {
    char mechanism[16];
    int bits; /* SCRAM's hash, 0 for PLAIN */
    char user[BR_SCRAM_USER_NAME_MAX + 1];
    char password[BR_SASL_PASSWORD_MAX + 1];
    char client_id[64];
};

enum phase {
    PH_START = 0,
    PH_HANDSHAKE, /* SaslHandshake sent */
    PH_FIRST,     /* the first token sent (PLAIN's only one, SCRAM's client-first) */
    PH_FINAL,     /* SCRAM's client-final sent */
};

struct exchange {
    const struct br_sasl_login *login;
    enum phase phase;
    int16_t api; /* of the request in flight */
    int32_t correlation;
    char *first_bare; /* SCRAM: client-first-message-bare */
    char nonce[NONCE_BYTES * 2];
    uint8_t server_signature[BR_SASL_HASH_MAX];
};

int br_sasl_login_new(const char *mechanism, const char *user, const char *password,
                      const char *client_id, struct br_sasl_login **out)
{
    *out = NULL;
    int bits = 0;
    if (strcmp(mechanism, "SCRAM-SHA-256") == 0) {
        bits = 256;
    } else if (strcmp(mechanism, "SCRAM-SHA-512") == 0) {
        bits = 512;
    } else if (strcmp(mechanism, "PLAIN") != 0) {
        return KP_E_INVALID_ARG;
    }
    if (user == NULL || user[0] == '\0' || password == NULL || password[0] == '\0' ||
        strlen(user) > BR_SCRAM_USER_NAME_MAX || strlen(password) > BR_SASL_PASSWORD_MAX) {
        return KP_E_INVALID_ARG;
    }
    struct br_sasl_login *l = kp_calloc(1, sizeof *l);
    if (l == NULL) {
        return KP_E_NOMEM;
    }
    (void)snprintf(l->mechanism, sizeof l->mechanism, "%s", mechanism);
    (void)snprintf(l->client_id, sizeof l->client_id, "%s", client_id);
    l->bits = bits;
    (void)snprintf(l->user, sizeof l->user, "%s", user);
    (void)snprintf(l->password, sizeof l->password, "%s", password);
    *out = l;
    return 0;
}

void br_sasl_login_free(struct br_sasl_login *l)
{
    if (l == NULL) {
        return;
    }
    OPENSSL_cleanse(l->password, sizeof l->password);
    kp_free(l);
}

static void *exchange_start(void *arg)
{
    struct exchange *x = kp_calloc(1, sizeof *x);
    if (x != NULL) {
        x->login = arg;
    }
    return x;
}

static void exchange_free(void *state)
{
    struct exchange *x = state;
    if (x == NULL) {
        return;
    }
    kp_free(x->first_bare);
    OPENSSL_cleanse(x->server_signature, sizeof x->server_signature);
    kp_free(x);
}

/* A request frame of the exchange into *frame. */
static int encode(struct exchange *x, int16_t api, int16_t version, const void *body,
                  uint8_t **frame, size_t *len)
{
    struct kp_request_header h = {api, version, ++x->correlation, kp_str_c(x->login->client_id)};
    struct kp_writer w;
    kp_wr_init(&w, (size_t)64 * 1024);
    int rc = kp_request_encode(&w, &h, body);
    *frame = rc == 0 ? kp_wr_steal(&w, len) : NULL;
    kp_wr_free(&w);
    x->api = api;
    return *frame != NULL ? 1 : -1;
}

static int send_token(struct exchange *x, const void *token, size_t n, uint8_t **frame,
                      size_t *len)
{
    struct kp_SaslAuthenticateRequest q;
    kp_SaslAuthenticateRequest_init(&q);
    q.AuthBytes.ptr = token;
    q.AuthBytes.len = (int32_t)n;
    return encode(x, KP_API_SASL_AUTHENTICATE, 0, &q, frame, len);
}

/* RFC 5802's saslname: ',' as =2C and '=' as =3D. */
static size_t encode_name(const char *user, char *out)
{
    size_t o = 0;
    for (const char *p = user; *p != '\0'; p++) {
        if (*p == ',' || *p == '=') {
            memcpy(out + o, *p == ',' ? "=2C" : "=3D", 3);
            o += 3;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
    return o;
}

static int first_token(struct exchange *x, uint8_t **frame, size_t *len)
{
    const struct br_sasl_login *l = x->login;
    x->phase = PH_FIRST;
    if (l->bits == 0) {
        /* PLAIN: empty authzid NUL user NUL password */
        size_t un = strlen(l->user);
        size_t pn = strlen(l->password);
        uint8_t *t = kp_malloc(un + pn + 2);
        if (t == NULL) {
            return -1;
        }
        t[0] = 0;
        memcpy(t + 1, l->user, un);
        t[1 + un] = 0;
        memcpy(t + 2 + un, l->password, pn);
        int rc = send_token(x, t, un + pn + 2, frame, len);
        OPENSSL_cleanse(t, un + pn + 2);
        kp_free(t);
        return rc;
    }
    uint8_t raw[NONCE_BYTES];
    if (RAND_bytes(raw, sizeof raw) != 1) {
        return -1;
    }
    (void)br_b64_encode(raw, sizeof raw, x->nonce);
    char name[BR_SCRAM_USER_NAME_MAX * 3 + 1];
    (void)encode_name(l->user, name);
    size_t n = strlen(name) + strlen(x->nonce) + 8;
    x->first_bare = kp_malloc(n);
    if (x->first_bare == NULL) {
        return -1;
    }
    (void)snprintf(x->first_bare, n, "n=%s,r=%s", name, x->nonce);
    char first[sizeof name + sizeof x->nonce + 16];
    int fl = snprintf(first, sizeof first, "n,,%s", x->first_bare);
    return send_token(x, first, (size_t)fl, frame, len);
}

/* The value of attribute `key` (r, s, i, v, e) in a server message. */
static const char *attribute(const char *m, char key, size_t *vlen)
{
    for (const char *p = m; p != NULL && *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n >= 2 && p[0] == key && p[1] == '=') {
            *vlen = n - 2;
            return p + 2;
        }
        p = end != NULL ? end + 1 : NULL;
    }
    return NULL;
}

/* SCRAM's client-final from the server-first in m. */
static int client_final(struct exchange *x, const char *peer, const char *m, uint8_t **frame,
                        size_t *len)
{
    const struct br_sasl_login *l = x->login;
    size_t rn = 0;
    size_t sn = 0;
    size_t in = 0;
    const char *r = attribute(m, 'r', &rn);
    const char *s = attribute(m, 's', &sn);
    const char *i = attribute(m, 'i', &in);
    size_t cn = strlen(x->nonce);
    if (r == NULL || s == NULL || i == NULL || rn <= cn || memcmp(r, x->nonce, cn) != 0 ||
        in == 0 || in > 9) {
        br_warn("SASL %s with %s: the server's first message is not SCRAM's, or its nonce does "
                "not start with ours",
                l->mechanism, peer);
        return -1;
    }
    int iterations = 0;
    for (size_t k = 0; k < in; k++) {
        if (i[k] < '0' || i[k] > '9') {
            iterations = 0;
            break;
        }
        iterations = iterations * 10 + (i[k] - '0');
    }
    uint8_t salt[BR_SCRAM_SALT_MAX];
    long saltn = br_b64_decode(s, sn, salt, sizeof salt);
    if (iterations < BR_SCRAM_MIN_ITERATIONS || iterations > BR_SCRAM_MAX_ITERATIONS ||
        saltn <= 0) {
        br_warn("SASL %s with %s: the server asks for %d iterations of a salt of %ld bytes",
                l->mechanism, peer, iterations, saltn);
        return -1;
    }
    size_t hlen = br_sasl_hash_len(l->bits);
    uint8_t client_key[BR_SASL_HASH_MAX];
    uint8_t stored_key[BR_SASL_HASH_MAX];
    uint8_t server_key[BR_SASL_HASH_MAX];
    uint8_t sig[BR_SASL_HASH_MAX];
    /* client-final-without-proof: c=biws (base64 of "n,,"),r=<nonce> */
    size_t wn = rn + 16;
    char *without = kp_malloc(wn);
    size_t amn = strlen(x->first_bare) + strlen(m) + wn + 2;
    char *am = kp_malloc(amn);
    int rc = -1;
    if (without != NULL && am != NULL &&
        br_scram_keys(l->bits, l->password, salt, (size_t)saltn, iterations, client_key,
                      stored_key, server_key) == 0) {
        (void)snprintf(without, wn, "c=biws,r=%.*s", (int)rn, r);
        int an = snprintf(am, amn, "%s,%s,%s", x->first_bare, m, without);
        if (br_sasl_hmac(l->bits, stored_key, hlen, am, (size_t)an, sig) &&
            br_sasl_hmac(l->bits, server_key, hlen, am, (size_t)an, x->server_signature)) {
            for (size_t k = 0; k < hlen; k++) {
                client_key[k] ^= sig[k]; /* the proof */
            }
            char proof[BR_SASL_HASH_MAX * 2];
            (void)br_b64_encode(client_key, hlen, proof);
            size_t fn = strlen(without) + strlen(proof) + 4;
            char *final = kp_malloc(fn);
            if (final != NULL) {
                int n = snprintf(final, fn, "%s,p=%s", without, proof);
                x->phase = PH_FINAL;
                rc = send_token(x, final, (size_t)n, frame, len);
                kp_free(final);
            }
        }
    }
    OPENSSL_cleanse(client_key, sizeof client_key);
    OPENSSL_cleanse(server_key, sizeof server_key);
    kp_free(without);
    kp_free(am);
    return rc;
}

static bool server_final_ok(const struct exchange *x, const char *m)
{
    size_t vn = 0;
    const char *v = attribute(m, 'v', &vn);
    size_t hlen = br_sasl_hash_len(x->login->bits);
    uint8_t got[BR_SASL_HASH_MAX + 3];
    return v != NULL && br_b64_decode(v, vn, got, sizeof got) == (long)hlen &&
           br_sasl_equal(got, x->server_signature, hlen);
}

static int exchange_step(void *state, const char *peer, const uint8_t *resp, size_t resp_len,
                         uint8_t **frame, size_t *len)
{
    struct exchange *x = state;
    const struct br_sasl_login *l = x->login;
    *frame = NULL;
    *len = 0;
    if (x->phase == PH_START) {
        struct kp_SaslHandshakeRequest q;
        kp_SaslHandshakeRequest_init(&q);
        q.Mechanism = kp_str_c(l->mechanism);
        x->phase = PH_HANDSHAKE;
        return encode(x, KP_API_SASL_HANDSHAKE, 1, &q, frame, len);
    }
    struct kp_arena arena;
    kp_arena_init(&arena, resp_len * 4 + 4096);
    struct kp_response_header h;
    void *body = NULL;
    int rc = -1;
    if (resp == NULL ||
        kp_response_decode(resp, resp_len, x->api, x->api == KP_API_SASL_HANDSHAKE ? 1 : 0, &arena,
                           &h, &body) != 0 ||
        h.CorrelationId != x->correlation) {
        br_warn("SASL %s with %s: an answer that does not decode", l->mechanism, peer);
        goto out;
    }
    if (x->phase == PH_HANDSHAKE) {
        const struct kp_SaslHandshakeResponse *r = body;
        if (r->ErrorCode != 0) {
            br_warn("SASL with %s: mechanism %s refused (%s): its listener enables other "
                    "mechanisms (sasl.enabled.mechanisms)",
                    peer, l->mechanism, kp_err_name(r->ErrorCode));
            goto out;
        }
        rc = first_token(x, frame, len);
        goto out;
    }
    const struct kp_SaslAuthenticateResponse *r = body;
    if (r->ErrorCode != 0) {
        br_warn("SASL %s with %s as user %s failed: %s%s%.*s", l->mechanism, peer, l->user,
                kp_err_name(r->ErrorCode), r->ErrorMessage.len > 0 ? ": " : "",
                r->ErrorMessage.len > 0 ? (int)(r->ErrorMessage.len > 200 ? 200 : r->ErrorMessage.len)
                                        : 0,
                r->ErrorMessage.ptr != NULL ? r->ErrorMessage.ptr : "");
        goto out;
    }
    if (l->bits == 0) {
        rc = 0; /* PLAIN: one token */
        goto out;
    }
    char m[SERVER_MESSAGE_MAX + 1];
    size_t mn = r->AuthBytes.len > 0 ? (size_t)r->AuthBytes.len : 0;
    if (mn > SERVER_MESSAGE_MAX || memchr(r->AuthBytes.ptr, 0, mn) != NULL) {
        br_warn("SASL %s with %s: a server message that is not SCRAM's", l->mechanism, peer);
        goto out;
    }
    if (mn > 0) {
        memcpy(m, r->AuthBytes.ptr, mn);
    }
    m[mn] = '\0';
    if (x->phase == PH_FIRST) {
        rc = client_final(x, peer, m, frame, len);
    } else if (server_final_ok(x, m)) {
        rc = 0;
    } else {
        br_warn("SASL %s with %s: the server's signature is wrong: it does not know our "
                "credential",
                l->mechanism, peer);
    }
out:
    kp_arena_free(&arena);
    return rc;
}

const struct br_outbound_auth_ops br_sasl_client_ops = {exchange_start, exchange_step,
                                                        exchange_free};
