/* samsa-broker: one SCRAM credential and user names in znode paths (see
 * credential.h). */
#include "security/credential.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ one credential */

/* key=value at p[0..len): the value of `key`, or NULL. */
static const char *field(const char *p, size_t len, const char *key, size_t *vlen)
{
    size_t klen = strlen(key);
    if (len <= klen || memcmp(p, key, klen) != 0 || p[klen] != '=') {
        return NULL;
    }
    *vlen = len - klen - 1;
    return p + klen + 1;
}

/* A key of the hash's length hlen, base64 v[0..len), into out. */
static bool decode_key(const char *v, size_t len, size_t hlen, uint8_t *out)
{
    uint8_t buf[BR_SASL_HASH_MAX + 3];
    if (br_b64_decode(v, len, buf, sizeof buf) != (long)hlen) {
        return false;
    }
    memcpy(out, buf, hlen);
    return true;
}

int br_scram_credential_parse(const char *s, size_t len, int bits, struct br_scram_credential *out,
                              const char **why)
{
    memset(out, 0, sizeof *out);
    size_t hlen = br_sasl_hash_len(bits);
    unsigned seen = 0;
    size_t pos = 0;
    while (pos <= len) {
        const char *comma = memchr(s + pos, ',', len - pos);
        size_t n = comma != NULL ? (size_t)(comma - (s + pos)) : len - pos;
        const char *p = s + pos;
        const char *v = NULL;
        size_t vlen = 0;
        if ((v = field(p, n, "salt", &vlen)) != NULL && (seen & 1u) == 0) {
            long got = br_b64_decode(v, vlen, out->salt, sizeof out->salt);
            if (got <= 0) {
                *why = "salt is not base64 of 1 to 128 bytes";
                return -1;
            }
            out->salt_len = (size_t)got;
            seen |= 1u;
        } else if ((v = field(p, n, "stored_key", &vlen)) != NULL && (seen & 2u) == 0) {
            if (!decode_key(v, vlen, hlen, out->stored_key)) {
                *why = "stored_key is not base64 of the hash's length";
                return -1;
            }
            seen |= 2u;
        } else if ((v = field(p, n, "server_key", &vlen)) != NULL && (seen & 4u) == 0) {
            if (!decode_key(v, vlen, hlen, out->server_key)) {
                *why = "server_key is not base64 of the hash's length";
                return -1;
            }
            seen |= 4u;
        } else if ((v = field(p, n, "iterations", &vlen)) != NULL && (seen & 8u) == 0) {
            char num[16];
            if (vlen == 0 || vlen >= sizeof num) {
                *why = "iterations is not a number";
                return -1;
            }
            memcpy(num, v, vlen);
            num[vlen] = '\0';
            char *end = NULL;
            errno = 0;
            long it = strtol(num, &end, 10);
            if (errno != 0 || *end != '\0' || num[0] < '0' || num[0] > '9') {
                *why = "iterations is not a number";
                return -1;
            }
            if (it < BR_SCRAM_MIN_ITERATIONS || it > BR_SCRAM_MAX_ITERATIONS) {
                *why = "iterations must be from 4096 to 1000000";
                return -1;
            }
            out->iterations = (int)it;
            seen |= 8u;
        } else {
            *why = "expected salt=,stored_key=,server_key=,iterations= once each";
            return -1;
        }
        if (comma == NULL) {
            break;
        }
        pos += n + 1;
    }
    if (seen != 15u) {
        *why = "expected salt=,stored_key=,server_key=,iterations= once each";
        return -1;
    }
    return 0;
}

void br_scram_credential_format(int bits, const struct br_scram_credential *c, char *out)
{
    size_t hlen = br_sasl_hash_len(bits);
    char salt[(BR_SCRAM_SALT_MAX + 2) / 3 * 4 + 1];
    char stored[(BR_SASL_HASH_MAX + 2) / 3 * 4 + 1];
    char server[(BR_SASL_HASH_MAX + 2) / 3 * 4 + 1];
    (void)br_b64_encode(c->salt, c->salt_len, salt);
    (void)br_b64_encode(c->stored_key, hlen, stored);
    (void)br_b64_encode(c->server_key, hlen, server);
    (void)snprintf(out, BR_SCRAM_CREDENTIAL_MAX,
                   "salt=%s,stored_key=%s,server_key=%s,iterations=%d", salt, stored, server,
                   c->iterations);
}

int br_scram_keys(int bits, const char *password, const uint8_t *salt, size_t salt_len,
                  int iterations, uint8_t *client_key, uint8_t *stored_key, uint8_t *server_key)
{
    size_t hlen = br_sasl_hash_len(bits);
    uint8_t salted[BR_SASL_HASH_MAX];
    bool ok = br_sasl_pbkdf2(bits, password, strlen(password), salt, salt_len, iterations,
                             salted) &&
              br_sasl_hmac(bits, salted, hlen, "Client Key", 10, client_key) &&
              br_sasl_digest(bits, client_key, hlen, stored_key) &&
              br_sasl_hmac(bits, salted, hlen, "Server Key", 10, server_key);
    OPENSSL_cleanse(salted, sizeof salted);
    return ok ? 0 : -1;
}

int br_scram_credential_make(int bits, const char *password, int iterations,
                             struct br_scram_credential *out)
{
    memset(out, 0, sizeof *out);
    uint8_t client_key[BR_SASL_HASH_MAX];
    out->salt_len = 32;
    out->iterations = iterations;
    int rc = iterations < BR_SCRAM_MIN_ITERATIONS || iterations > BR_SCRAM_MAX_ITERATIONS ||
                     RAND_bytes(out->salt, (int)out->salt_len) != 1
                 ? -1
                 : br_scram_keys(bits, password, out->salt, out->salt_len, iterations, client_key,
                                 out->stored_key, out->server_key);
    OPENSSL_cleanse(client_key, sizeof client_key);
    return rc;
}

/* ------------------------------------------------------------ user names */

static bool kept(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
}

bool br_user_sanitize(const char *user, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)user; *p != '\0'; p++) {
        if (o + 4 > cap) {
            return false;
        }
        if (kept(*p)) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    if (o >= cap) {
        return false;
    }
    out[o] = '\0';
    return o > 0;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

bool br_user_desanitize(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (o + 1 >= cap) {
            return false;
        }
        if (s[i] == '%') {
            if (i + 2 >= len) {
                return false;
            }
            int hi = hex_value(s[i + 1]);
            int lo = hex_value(s[i + 2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                return false;
            }
            out[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else if (s[i] == '+' || s[i] == '\0') {
            return false;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return o > 0;
}
