/* samsa-broker: java.util.Properties' file format (see properties.h). */
#include "config/properties.h"

#include "config/config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 4))) static void set_msg(char *msg, size_t msglen, const char *fmt,
                                                          ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
}

char *br_props_trim(char *s)
{
    while (*s != '\0' && (unsigned char)*s <= ' ') {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && (unsigned char)s[n - 1] <= ' ') {
        n--;
    }
    s[n] = '\0';
    return s;
}

static bool is_prop_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\f';
}

/* Consumes a line terminator (\n, \r or \r\n) at the lexer's position. */
static void eat_eol(struct br_props *lx)
{
    if (lx->off < lx->len && lx->buf[lx->off] == '\r') {
        lx->off++;
        if (lx->off < lx->len && lx->buf[lx->off] == '\n') {
            lx->off++;
        }
        lx->line++;
    } else if (lx->off < lx->len && lx->buf[lx->off] == '\n') {
        lx->off++;
        lx->line++;
    }
}

/*
 * The next logical line into out[0..BR_CONFIG_MAX_LINE_BYTES] (NUL-terminated):
 * blank and comment lines skipped, leading whitespace dropped, continuation
 * lines joined (their backslash and leading whitespace dropped). Returns 1
 * with *first = its first natural line, 0 at the end, or -1 with msg set.
 */
static int next_line(struct br_props *lx, char *out, size_t *out_len, unsigned *first, char *msg,
                     size_t msglen)
{
    for (;;) {
        while (lx->off < lx->len && is_prop_ws(lx->buf[lx->off])) {
            lx->off++;
        }
        if (lx->off >= lx->len) {
            return 0;
        }
        char c = lx->buf[lx->off];
        if (c == '\n' || c == '\r') {
            eat_eol(lx);
            continue;
        }
        if (c == '#' || c == '!') {
            /* comment lines never continue */
            while (lx->off < lx->len && lx->buf[lx->off] != '\n' && lx->buf[lx->off] != '\r') {
                if (lx->buf[lx->off] == '\0') {
                    set_msg(msg, msglen, "%u: NUL byte", lx->line);
                    return -1;
                }
                lx->off++;
            }
            eat_eol(lx);
            continue;
        }
        break;
    }
    *first = lx->line;
    size_t n = 0;
    for (;;) {
        while (lx->off < lx->len && lx->buf[lx->off] != '\n' && lx->buf[lx->off] != '\r') {
            char c = lx->buf[lx->off];
            if (c == '\0') {
                set_msg(msg, msglen, "%u: NUL byte", lx->line);
                return -1;
            }
            if (n >= BR_CONFIG_MAX_LINE_BYTES) {
                set_msg(msg, msglen, "%u: line longer than %zu bytes", *first,
                        BR_CONFIG_MAX_LINE_BYTES);
                return -1;
            }
            out[n++] = c;
            lx->off++;
        }
        size_t backslashes = 0;
        while (backslashes < n && out[n - 1 - backslashes] == '\\') {
            backslashes++;
        }
        bool at_end = lx->off >= lx->len;
        eat_eol(lx);
        if (backslashes % 2 == 0) {
            break;
        }
        n--; /* the continuation backslash */
        if (at_end) {
            break;
        }
        while (lx->off < lx->len && is_prop_ws(lx->buf[lx->off])) {
            lx->off++;
        }
    }
    out[n] = '\0';
    *out_len = n;
    return 1;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Four hex digits at s[0..4) -> 0..0xffff, or -1. */
static long hex4(const char *s, size_t avail)
{
    if (avail < 4) {
        return -1;
    }
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value(s[i]);
        if (h < 0) {
            return -1;
        }
        v = v * 16 + h;
    }
    return v;
}

static size_t put_utf8(char *out, unsigned long cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/*
 * Java's loadConvert, in place on s[0..n): \t \n \r \f, \uXXXX (as UTF-8;
 * a surrogate pair becomes one code point), \x -> x. Writes the NUL.
 * Returns 0, or -1 with msg set (a bad \u escape, a lone surrogate, \u0000).
 */
static int unescape(char *s, size_t n, char *msg, size_t msglen)
{
    size_t i = 0;
    size_t o = 0;
    while (i < n) {
        char c = s[i++];
        if (c != '\\') {
            s[o++] = c;
            continue;
        }
        if (i >= n) {
            break; /* a lone trailing backslash is dropped, as Java does */
        }
        c = s[i++];
        switch (c) {
        case 't':
            s[o++] = '\t';
            break;
        case 'n':
            s[o++] = '\n';
            break;
        case 'r':
            s[o++] = '\r';
            break;
        case 'f':
            s[o++] = '\f';
            break;
        case 'u': {
            long u = hex4(s + i, n - i);
            if (u < 0) {
                set_msg(msg, msglen, "malformed \\uxxxx escape");
                return -1;
            }
            i += 4;
            unsigned long cp = (unsigned long)u;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                long lo = (n - i >= 6 && s[i] == '\\' && s[i + 1] == 'u')
                              ? hex4(s + i + 2, n - i - 2)
                              : -1;
                if (lo < 0xdc00 || lo > 0xdfff) {
                    set_msg(msg, msglen, "\\u escape with a lone surrogate");
                    return -1;
                }
                i += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned long)lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                set_msg(msg, msglen, "\\u escape with a lone surrogate");
                return -1;
            } else if (cp == 0) {
                set_msg(msg, msglen, "\\u0000 is not allowed");
                return -1;
            }
            /* UTF-8 never outgrows the escape it came from (6 or 12 bytes) */
            o += put_utf8(s + o, cp);
            break;
        }
        default:
            s[o++] = c;
            break;
        }
    }
    s[o] = '\0';
    return 0;
}

/* Splits a logical line into key and value the way Properties.load does,
 * unescapes both and trims the value (Kafka trims every value). */
static int split_line(char *ln, size_t n, char **key, char **value, char *msg, size_t msglen)
{
    size_t key_len = 0;
    size_t value_start = n;
    bool has_sep = false;
    bool backslash = false;
    while (key_len < n) {
        char c = ln[key_len];
        if ((c == '=' || c == ':') && !backslash) {
            value_start = key_len + 1;
            has_sep = true;
            break;
        }
        if (is_prop_ws(c) && !backslash) {
            value_start = key_len + 1;
            break;
        }
        backslash = c == '\\' ? !backslash : false;
        key_len++;
    }
    while (value_start < n) {
        char c = ln[value_start];
        if (!is_prop_ws(c)) {
            if (!has_sep && (c == '=' || c == ':')) {
                has_sep = true;
            } else {
                break;
            }
        }
        value_start++;
    }
    if (unescape(ln + value_start, n - value_start, msg, msglen) != 0) {
        return -1;
    }
    /* the key ends before the value starts, or at n when there is no value */
    if (unescape(ln, key_len, msg, msglen) != 0) {
        return -1;
    }
    *key = ln;
    *value = br_props_trim(ln + value_start);
    return 0;
}

void br_props_init(struct br_props *lx, const char *buf, size_t len)
{
    lx->buf = buf;
    lx->len = len;
    lx->off = 0;
    lx->line = 1;
}

int br_props_next(struct br_props *lx, char *line_buf, char **key, char **value, unsigned *line,
                  char *msg, size_t msglen)
{
    size_t n = 0;
    unsigned first = 0;
    int r = next_line(lx, line_buf, &n, &first, msg, msglen);
    if (r <= 0) {
        return r;
    }
    *line = first;
    char why[200];
    if (split_line(line_buf, n, key, value, why, sizeof why) != 0) {
        set_msg(msg, msglen, "%u: %s", first, why);
        return -1;
    }
    return 1;
}
