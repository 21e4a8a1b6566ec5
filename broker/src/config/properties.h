/*
 * samsa-broker: java.util.Properties' file format, read as Properties.load
 * reads it (Kafka's server.properties): logical lines (a trailing odd
 * backslash continues a line, the next one's leading whitespace dropped),
 * '#' and '!' comments, key and value split at the first unescaped '=', ':'
 * or whitespace, the escapes \t \n \f \r \uXXXX (to UTF-8) and \c for c,
 * the value trimmed as Kafka trims every value. NUL bytes and lines over
 * BR_CONFIG_MAX_LINE_BYTES are errors.
 * @locality any thread (no shared state)
 */
#ifndef SAMSA_BROKER_CONFIG_PROPERTIES_H
#define SAMSA_BROKER_CONFIG_PROPERTIES_H

#include <stddef.h>

/* A reader of buf[0..len). */
struct br_props {
    const char *buf;
    size_t len;
    size_t off;
    unsigned line; /* natural line number of buf[off] */
};

void br_props_init(struct br_props *lx, const char *buf, size_t len);

/* The next key and value: 1 with *key and *value pointing into line_buf
 * (room for BR_CONFIG_MAX_LINE_BYTES + 1 bytes) and *line the natural line
 * the logical one starts on; 0 at the end; -1 with msg set ("LINE: what"). */
int br_props_next(struct br_props *lx, char *line_buf, char **key, char **value, unsigned *line,
                  char *msg, size_t msglen);

/* Java's String.trim(): strips bytes <= ' ' at both ends, in place. */
char *br_props_trim(char *s);

#endif
