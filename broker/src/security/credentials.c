/* samsa-broker: SCRAM credentials and their store (see credentials.h). */
#define _POSIX_C_SOURCE 200809L

#include "security/credentials.h"

#include <samsa-protocol/alloc.h>

#include <jansson.h>
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
            uint8_t buf[BR_SASL_HASH_MAX + 3];
            if (br_b64_decode(v, vlen, buf, sizeof buf) != (long)hlen) {
                *why = "stored_key is not base64 of the hash's length";
                return -1;
            }
            memcpy(out->stored_key, buf, hlen);
            seen |= 2u;
        } else if ((v = field(p, n, "server_key", &vlen)) != NULL && (seen & 4u) == 0) {
            uint8_t buf[BR_SASL_HASH_MAX + 3];
            if (br_b64_decode(v, vlen, buf, sizeof buf) != (long)hlen) {
                *why = "server_key is not base64 of the hash's length";
                return -1;
            }
            memcpy(out->server_key, buf, hlen);
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
    (void)snprintf(out, BR_SCRAM_CREDENTIAL_MAX, "salt=%s,stored_key=%s,server_key=%s,iterations=%d",
                   salt, stored, server, c->iterations);
}

int br_scram_credential_make(int bits, const char *password, int iterations,
                             struct br_scram_credential *out)
{
    memset(out, 0, sizeof *out);
    size_t hlen = br_sasl_hash_len(bits);
    uint8_t salted[BR_SASL_HASH_MAX];
    uint8_t client_key[BR_SASL_HASH_MAX];
    out->salt_len = 32;
    out->iterations = iterations;
    if (iterations < BR_SCRAM_MIN_ITERATIONS || iterations > BR_SCRAM_MAX_ITERATIONS ||
        RAND_bytes(out->salt, (int)out->salt_len) != 1 ||
        !br_sasl_pbkdf2(bits, password, strlen(password), out->salt, out->salt_len, iterations,
                        salted) ||
        !br_sasl_hmac(bits, salted, hlen, "Client Key", 10, client_key) ||
        !br_sasl_digest(bits, client_key, hlen, out->stored_key) ||
        !br_sasl_hmac(bits, salted, hlen, "Server Key", 10, out->server_key)) {
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ the store */

struct scram_user {
    char *name;
    bool has[2]; /* [0] SCRAM-SHA-256, [1] SCRAM-SHA-512 */
    struct br_scram_credential cred[2];
};

struct br_scram_store {
    struct scram_user *users;
    size_t n;
    uint8_t secret[32];
};

int br_scram_store_new(struct br_scram_store **out)
{
    struct br_scram_store *s = kp_calloc(1, sizeof *s);
    if (s == NULL || RAND_bytes(s->secret, sizeof s->secret) != 1) {
        kp_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void br_scram_store_free(struct br_scram_store *s)
{
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->n; i++) {
        kp_free(s->users[i].name);
    }
    kp_free(s->users);
    kp_free(s);
}

static struct scram_user *find_user(const struct br_scram_store *s, const char *user, size_t len)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strlen(s->users[i].name) == len && memcmp(s->users[i].name, user, len) == 0) {
            return &s->users[i];
        }
    }
    return NULL;
}

static void remove_user(struct br_scram_store *s, struct scram_user *u)
{
    kp_free(u->name);
    size_t i = (size_t)(u - s->users);
    memmove(u, u + 1, (s->n - i - 1) * sizeof *u);
    s->n--;
}

/* The SCRAM credentials of a znode's JSON into *u. 0 or -1 (*why). */
static int parse_config(const char *json, size_t len, struct scram_user *u, const char **why)
{
    json_error_t e;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &e);
    json_t *config = root != NULL ? json_object_get(root, "config") : NULL;
    if (!json_is_object(config)) {
        json_decref(root);
        *why = "expected {\"version\":1,\"config\":{...}}";
        return -1;
    }
    static const char *const mechs[2] = {"SCRAM-SHA-256", "SCRAM-SHA-512"};
    static const int bits[2] = {256, 512};
    int rc = 0;
    for (size_t m = 0; m < 2 && rc == 0; m++) {
        json_t *v = json_object_get(config, mechs[m]);
        if (v == NULL) {
            continue;
        }
        if (!json_is_string(v)) {
            *why = "a SCRAM credential must be a string";
            rc = -1;
            break;
        }
        rc = br_scram_credential_parse(json_string_value(v), json_string_length(v), bits[m],
                                       &u->cred[m], why);
        u->has[m] = rc == 0;
    }
    json_decref(root);
    return rc;
}

int br_scram_store_set(struct br_scram_store *s, const char *user, const char *json, size_t len,
                       const char **why)
{
    struct scram_user fresh;
    memset(&fresh, 0, sizeof fresh);
    if (json != NULL && parse_config(json, len, &fresh, why) != 0) {
        return -1;
    }
    struct scram_user *u = find_user(s, user, strlen(user));
    if (!fresh.has[0] && !fresh.has[1]) {
        if (u != NULL) {
            remove_user(s, u);
        }
        return 0;
    }
    if (u == NULL) {
        struct scram_user *grown = kp_realloc(s->users, (s->n + 1) * sizeof *grown);
        char *name = kp_malloc(strlen(user) + 1);
        if (grown != NULL) {
            s->users = grown;
        }
        if (grown == NULL || name == NULL) {
            kp_free(name);
            *why = "out of memory";
            return -1;
        }
        memcpy(name, user, strlen(user) + 1);
        u = &s->users[s->n++];
        fresh.name = name;
    } else {
        fresh.name = u->name;
    }
    *u = fresh;
    return 0;
}

int br_scram_store_load_file(struct br_scram_store *s, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        (void)snprintf(err, errlen, "sasl.scram.credentials.file %s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned lineno = 0;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) {
            line[--n] = '\0';
        }
        if (n == 0 || line[0] == '#') {
            continue;
        }
        char *eq = strchr(line, '=');
        char user[256];
        const char *why = "expected <user>={\"version\":1,\"config\":{...}}";
        if (eq == NULL || !br_user_desanitize(line, (size_t)(eq - line), user, sizeof user) ||
            br_scram_store_set(s, user, eq + 1, strlen(eq + 1), &why) != 0) {
            (void)snprintf(err, errlen, "sasl.scram.credentials.file %s:%u: %s", path, lineno,
                           why);
            rc = -1;
        }
    }
    free(line);
    (void)fclose(f);
    return rc;
}

bool br_scram_store_find(const struct br_scram_store *s, int bits, const char *user, size_t len,
                         struct br_scram_credential *out)
{
    const struct scram_user *u = s != NULL ? find_user(s, user, len) : NULL;
    size_t m = bits == 512 ? 1 : 0;
    if (u == NULL || !u->has[m]) {
        return false;
    }
    *out = u->cred[m];
    return true;
}

size_t br_scram_store_count(const struct br_scram_store *s)
{
    return s != NULL ? s->n : 0;
}

const uint8_t *br_scram_store_secret(const struct br_scram_store *s)
{
    return s->secret;
}

/* ------------------------------------------------------------ user names */

static bool kept(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '-' || c == '_';
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
