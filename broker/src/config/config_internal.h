/*
 * samsa-broker: server.properties' key table, a load under way, and the
 * functions the configuration's files share (config.c: loading and
 * resolving; config_keys.c: the key table and lookups; config_values.c:
 * the value parsers; config_listeners.c: the listeners). Calls go one way:
 * config.c -> config_listeners.c -> config_keys.c -> config_values.c.
 * Not for the configuration's users: they include config.h.
 */
#ifndef SAMSA_BROKER_CONFIG_CONFIG_INTERNAL_H
#define SAMSA_BROKER_CONFIG_CONFIG_INTERNAL_H

#include "config/config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kind {
    K_INT,         /* int32_t field */
    K_SHORT,       /* int16_t field */
    K_LONG,        /* int64_t field */
    K_BOOL,        /* bool field */
    K_RATIO,       /* double field, [0, 1] */
    K_CLEANUP,     /* unsigned field: enum br_cleanup_policy flags */
    K_COMPRESSION, /* int field: enum br_compression */
    K_TSTYPE,      /* int field: enum br_timestamp_type */
    K_LOGLEVEL,    /* int field: enum br_level */
    K_FORMAT,      /* char[BR_FORMAT_VERSION_MAX + 1] field */
    K_NUMBER,      /* a number (range checked here) that resolve() combines */
    K_SPECIAL,     /* parsed and checked by resolve() alone */
};

struct key_def {
    const char *name;
    enum kind kind;
    size_t offset;   /* of the typed field, for the kinds that have one */
    const char *def; /* the default as text; NULL = null */
    int64_t min;     /* range of the numeric kinds */
    int64_t max;
};

/* The buffer a quoted value needs, and a value quoted into one. */
#define QUOTE_MAX 80
#define Q(v, buf) cfg_quoted((v), SIZE_MAX, (buf), sizeof(buf))

/* Every key, indexed by enum br_config_key. */
extern const struct key_def cfg_keys[BR_CFG__COUNT];

/* Where a key got its value: a file line, or an override. */
struct origin {
    unsigned line; /* 0 for an override */
};

struct load {
    struct br_config *c;
    const char *name; /* the file, as messages call it */
    struct origin origin[BR_CFG__COUNT];
    char *err;
    size_t errlen;
};

/* config_keys.c */
__attribute__((format(printf, 3, 4))) int cfg_key_error(struct load *ld, enum br_config_key k,
                                                        const char *fmt, ...);
const char *cfg_text_of(const struct load *ld, enum br_config_key k);

/* config_listeners.c */
int cfg_resolve_listeners(struct load *ld);

/* config_values.c */
__attribute__((format(printf, 3, 4))) void cfg_set_msg(char *msg, size_t msglen, const char *fmt,
                                                       ...);
char *cfg_dup_string(const char *s);
bool cfg_is_alnum(char c);
bool cfg_is_digit(char c);
const char *cfg_quoted(const char *v, size_t n, char *buf, size_t buflen);
char cfg_to_upper(char c);

#endif
