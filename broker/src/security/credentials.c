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
            (void)snprintf(err, errlen, "sasl.scram.credentials.file %s:%u: %s", path, lineno, why);
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

size_t br_scram_store_keep_only(struct br_scram_store *s, const char *const *sanitized, size_t n)
{
    size_t removed = 0;
    for (size_t i = 0; i < s->n;) {
        char name[BR_SCRAM_USER_SANITIZED_MAX + 1];
        bool listed = false;
        if (br_user_sanitize(s->users[i].name, name, sizeof name)) {
            for (size_t k = 0; k < n && !listed; k++) {
                listed = strcmp(sanitized[k], name) == 0;
            }
        }
        if (listed) {
            i++;
        } else {
            remove_user(s, &s->users[i]);
            removed++;
        }
    }
    return removed;
}

const uint8_t *br_scram_store_secret(const struct br_scram_store *s)
{
    return s->secret;
}
