/* samsa-broker: the standalone broker's quota file and the values of
 * Kafka's quota configs (see quota.h). */
#define _POSIX_C_SOURCE 200809L

#include "quota/quota.h"

#include <stdio.h>
#include <string.h>

#include "base/number.h"

#define NAME_MAX_LEN 256

bool br_quota_value_parse(const char *s, size_t len, double *out)
{
    const char *dot = memchr(s, '.', len);
    size_t ilen = dot != NULL ? (size_t)(dot - s) : len;
    uint64_t whole = 0;
    if (ilen == 0 || !br_num_parse_u64(s, ilen, (uint64_t)1 << 53, &whole)) {
        return false;
    }
    double v = (double)whole;
    if (dot != NULL) {
        size_t flen = len - ilen - 1;
        if (flen == 0 || flen > 9) {
            return false;
        }
        uint64_t frac = 0;
        if (!br_num_parse_u64(dot + 1, flen, 999999999u, &frac)) {
            return false;
        }
        double scale = 1;
        for (size_t i = 0; i < flen; i++) {
            scale *= 10;
        }
        v += (double)frac / scale;
    }
    if (!(v > 0)) {
        return false;
    }
    *out = v;
    return true;
}

/* One line "path key=value,key=value" into *e (names into the buffers). */
static int parse_line(const char *p, size_t n, struct br_quota_entity *e, char *user,
                      char *client, char *why, size_t why_cap)
{
    const char *sp = memchr(p, ' ', n);
    if (sp == NULL) {
        (void)snprintf(why, why_cap, "no keys after the entity");
        return KP_E_INVALID_ARG;
    }
    char path[2 * NAME_MAX_LEN + 32];
    size_t plen = (size_t)(sp - p);
    if (plen >= sizeof path) {
        (void)snprintf(why, why_cap, "entity path too long");
        return KP_E_INVALID_ARG;
    }
    memcpy(path, p, plen);
    path[plen] = '\0';
    bool has_user = false;
    bool has_client = false;
    if (br_quota_entity_path(path, user, NAME_MAX_LEN, client, NAME_MAX_LEN, &has_user,
                             &has_client) != 0) {
        (void)snprintf(why, why_cap,
                       "\"%.64s\" is no entity (clients/ID, users/U, users/U/clients/ID)", path);
        return KP_E_INVALID_ARG;
    }
    *e = (struct br_quota_entity){.user = has_user ? user : NULL,
                                  .client = has_client ? client : NULL};
    const char *k = sp;
    const char *end = p + n;
    while (k < end && *k == ' ') {
        k++;
    }
    while (k < end) {
        const char *comma = memchr(k, ',', (size_t)(end - k));
        const char *stop = comma != NULL ? comma : end;
        const char *eq = memchr(k, '=', (size_t)(stop - k));
        char key[32];
        size_t klen = eq != NULL ? (size_t)(eq - k) : 0;
        if (eq == NULL || klen == 0 || klen >= sizeof key) {
            (void)snprintf(why, why_cap, "expected key=value");
            return KP_E_INVALID_ARG;
        }
        memcpy(key, k, klen);
        key[klen] = '\0';
        int t = br_quota_type_of(key);
        if (t < 0) {
            (void)snprintf(why, why_cap,
                           "unknown key \"%.31s\" (producer_byte_rate, consumer_byte_rate, "
                           "request_percentage)",
                           key);
            return KP_E_INVALID_ARG;
        }
        double v = 0;
        if (!br_quota_value_parse(eq + 1, (size_t)(stop - eq - 1), &v)) {
            (void)snprintf(why, why_cap, "%.31s: not a number greater than 0", key);
            return KP_E_INVALID_ARG;
        }
        e->set[t] = true;
        e->value[t] = v;
        k = comma != NULL ? comma + 1 : end;
    }
    return 0;
}

/* Runs through the lines; with apply, sets each entity in q. */
static int file_pass(struct br_quotas *q, const char *text, size_t len, bool apply, char *err,
                     size_t err_cap)
{
    size_t pos = 0;
    unsigned line = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl != NULL ? (size_t)(nl - (text + pos)) : len - pos;
        const char *p = text + pos;
        pos += n + (nl != NULL ? 1 : 0);
        line++;
        while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t')) {
            n--;
        }
        while (n > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        if (n == 0 || *p == '#') {
            continue;
        }
        char user[NAME_MAX_LEN];
        char client[NAME_MAX_LEN];
        char why[200];
        struct br_quota_entity e;
        int rc = parse_line(p, n, &e, user, client, why, sizeof why);
        if (rc == 0 && apply) {
            rc = br_quotas_set_entity(q, &e);
            (void)snprintf(why, sizeof why, "%s", kp_err_str(rc));
        }
        if (rc != 0) {
            (void)snprintf(err, err_cap, "line %u: %s", line, why);
            return rc;
        }
    }
    return 0;
}

int br_quota_file_apply(struct br_quotas *q, const char *text, size_t len, char *err,
                        size_t err_cap)
{
    int rc = file_pass(q, text, len, false, err, err_cap);
    if (rc != 0) {
        return rc;
    }
    br_quotas_clear(q);
    return file_pass(q, text, len, true, err, err_cap);
}
