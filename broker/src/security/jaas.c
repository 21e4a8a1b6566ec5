/* samsa-broker: a sasl.jaas.config entry parsed (see jaas.h). */
#include "security/jaas.h"

#include <samsa-protocol/alloc.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_word(char c)
{
    return c != '\0' && !is_space(c) && c != '=' && c != ';' && c != '"';
}

static const char *skip_spaces(const char *p)
{
    while (is_space(*p)) {
        p++;
    }
    return p;
}

static char *dup_n(const char *p, size_t n)
{
    char *s = kp_malloc(n + 1);
    if (s != NULL) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* A bare word at *pp: copied, *pp after it; NULL when there is none. */
static char *take_word(const char **pp)
{
    const char *p = *pp;
    size_t n = 0;
    while (is_word(p[n])) {
        n++;
    }
    if (n == 0) {
        return NULL;
    }
    *pp = p + n;
    return dup_n(p, n);
}

/* A quoted value at *pp ("..." with \" and \\): copied without its
 * quotes, *pp after the closing one; NULL when unterminated. */
static char *take_quoted(const char **pp)
{
    const char *p = *pp + 1;
    size_t n = 0;
    while (p[n] != '"') {
        if (p[n] == '\0') {
            return NULL;
        }
        n += p[n] == '\\' && p[n + 1] != '\0' ? 2 : 1;
    }
    char *s = kp_malloc(n + 1);
    if (s == NULL) {
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\' && i + 1 < n) {
            i++;
        }
        s[o++] = p[i];
    }
    s[o] = '\0';
    *pp = p + n + 1;
    return s;
}

static int fail(char *err, size_t errlen, const char *what)
{
    (void)snprintf(err, errlen, "sasl.jaas.config: %s", what);
    return -1;
}

int br_jaas_parse(const char *text, struct br_jaas *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *p = skip_spaces(text);
    out->module = take_word(&p);
    if (out->module == NULL) {
        return fail(err, errlen, "expected a login module class first");
    }
    p = skip_spaces(p);
    char *flag = take_word(&p);
    static const char *const flags[] = {"required", "requisite", "sufficient", "optional"};
    bool known = false;
    for (size_t i = 0; flag != NULL && i < sizeof flags / sizeof flags[0]; i++) {
        known = known || strcmp(flag, flags[i]) == 0;
    }
    kp_free(flag);
    if (!known) {
        return fail(err, errlen,
                    "expected a flag (required, requisite, sufficient, optional) after the class");
    }
    for (;;) {
        p = skip_spaces(p);
        if (*p == ';') {
            p = skip_spaces(p + 1);
            return *p == '\0' ? 0 : fail(err, errlen, "one login module only; text after ';'");
        }
        if (*p == '\0') {
            return fail(err, errlen, "the entry must end with ';'");
        }
        char *key = take_word(&p);
        if (key == NULL) {
            return fail(err, errlen, "expected key=\"value\"");
        }
        p = skip_spaces(p);
        char *value = NULL;
        if (*p == '=') {
            p = skip_spaces(p + 1);
            value = *p == '"' ? take_quoted(&p) : take_word(&p);
        }
        if (value == NULL) {
            kp_free(key);
            return fail(err, errlen, "an option without a value, or an unterminated quote");
        }
        struct br_jaas_option *grown =
            kp_realloc(out->options, (out->n_options + 1) * sizeof *grown);
        if (grown == NULL) {
            kp_free(key);
            kp_free(value);
            return fail(err, errlen, "out of memory");
        }
        out->options = grown;
        grown[out->n_options].key = key;
        grown[out->n_options].value = value;
        out->n_options++;
    }
}

void br_jaas_free(struct br_jaas *j)
{
    for (size_t i = 0; i < j->n_options; i++) {
        kp_free(j->options[i].key);
        if (j->options[i].value != NULL) {
            /* passwords: not left in freed memory */
            memset(j->options[i].value, 0, strlen(j->options[i].value));
        }
        kp_free(j->options[i].value);
    }
    kp_free(j->options);
    kp_free(j->module);
    memset(j, 0, sizeof *j);
}
