/* samsa-broker: SASL PLAIN (see plain.h). */
#include "security/plain.h"

#include "security/jaas.h"
#include "security/sasl_util.h"

#include <samsa-protocol/alloc.h>

#include <openssl/rand.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define PLAIN_MODULE "org.apache.kafka.common.security.plain.PlainLoginModule"
#define USER_PREFIX "user_" /* PlainServerCallbackHandler.JAAS_USER_PREFIX */
#define MAC_LEN 32

struct plain_user {
    char *name;
    uint8_t mac[MAC_LEN]; /* HMAC-SHA-256(key, password) */
};

struct br_plain_users {
    uint8_t key[MAC_LEN];
    uint8_t dummy[MAC_LEN]; /* compared for an unknown user */
    struct plain_user *users;
    size_t n;
};

static bool password_mac(const struct br_plain_users *u, const void *pw, size_t len, uint8_t *out)
{
    return br_sasl_hmac(256, u->key, sizeof u->key, pw, len, out);
}

int br_plain_users_new(const struct br_jaas *j, struct br_plain_users **out, char *err,
                       size_t errlen)
{
    *out = NULL;
    if (strcmp(j->module, PLAIN_MODULE) != 0) {
        (void)snprintf(err, errlen, "the PLAIN users come from %s, not %s", PLAIN_MODULE,
                       j->module);
        return -1;
    }
    struct br_plain_users *u = kp_calloc(1, sizeof *u);
    if (u == NULL || RAND_bytes(u->key, sizeof u->key) != 1 ||
        RAND_bytes(u->dummy, sizeof u->dummy) != 1) {
        kp_free(u);
        (void)snprintf(err, errlen, "out of memory or randomness");
        return -1;
    }
    size_t plen = strlen(USER_PREFIX);
    for (size_t i = 0; i < j->n_options; i++) {
        const struct br_jaas_option *o = &j->options[i];
        if (strncmp(o->key, USER_PREFIX, plen) != 0 || o->key[plen] == '\0') {
            continue; /* username/password: the broker's own login */
        }
        const char *name = o->key + plen;
        struct plain_user *grown = kp_realloc(u->users, (u->n + 1) * sizeof *grown);
        char *copy = kp_malloc(strlen(name) + 1);
        if (grown != NULL) {
            u->users = grown;
        }
        if (grown == NULL || copy == NULL ||
            !password_mac(u, o->value, strlen(o->value), grown[u->n].mac)) {
            kp_free(copy);
            br_plain_users_free(u);
            (void)snprintf(err, errlen, "out of memory");
            return -1;
        }
        memcpy(copy, name, strlen(name) + 1);
        grown[u->n].name = copy;
        u->n++;
    }
    *out = u;
    return 0;
}

void br_plain_users_free(struct br_plain_users *u)
{
    if (u == NULL) {
        return;
    }
    for (size_t i = 0; i < u->n; i++) {
        kp_free(u->users[i].name);
    }
    kp_free(u->users);
    kp_free(u);
}

size_t br_plain_users_count(const struct br_plain_users *u)
{
    return u != NULL ? u->n : 0;
}

int br_plain_authenticate(const struct br_plain_users *u, const uint8_t *token, size_t len,
                          char *user, size_t user_cap, const char **why)
{
    /* Kafka: "Invalid SASL/PLAIN response: expected 3 tokens" */
    const uint8_t *nul1 = memchr(token, 0, len);
    const uint8_t *nul2 =
        nul1 != NULL ? memchr(nul1 + 1, 0, len - (size_t)(nul1 + 1 - token)) : NULL;
    if (nul2 == NULL || memchr(nul2 + 1, 0, len - (size_t)(nul2 + 1 - token)) != NULL) {
        *why = "Invalid SASL/PLAIN response: expected 3 tokens";
        return -1;
    }
    size_t authz_len = (size_t)(nul1 - token);
    const uint8_t *name = nul1 + 1;
    size_t name_len = (size_t)(nul2 - name);
    const uint8_t *pw = nul2 + 1;
    size_t pw_len = len - (size_t)(pw - token);
    if (name_len == 0) {
        *why = "Authentication failed: username not specified";
        return -1;
    }
    if (pw_len == 0) {
        *why = "Authentication failed: password not specified";
        return -1;
    }
    if (name_len > BR_PLAIN_USER_MAX || name_len + 1 > user_cap) {
        *why = "Authentication failed: Invalid username or password";
        return -1;
    }
    const uint8_t *expected = u != NULL ? u->dummy : NULL;
    bool known = false;
    for (size_t i = 0; u != NULL && i < u->n; i++) {
        if (strlen(u->users[i].name) == name_len && memcmp(u->users[i].name, name, name_len) == 0) {
            expected = u->users[i].mac;
            known = true;
            break;
        }
    }
    uint8_t mac[MAC_LEN];
    bool ok =
        u != NULL && password_mac(u, pw, pw_len, mac) && br_sasl_equal(mac, expected, MAC_LEN);
    if (!ok || !known) {
        *why = "Authentication failed: Invalid username or password";
        return -1;
    }
    if (authz_len > 0 && (authz_len != name_len || memcmp(token, name, name_len) != 0)) {
        *why = "Authentication failed: Client requested an authorization id that is different "
               "from username";
        return -1;
    }
    memcpy(user, name, name_len);
    user[name_len] = '\0';
    return 0;
}
