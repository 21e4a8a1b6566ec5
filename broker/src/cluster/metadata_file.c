/* samsa-broker: the metadata store's file back end (see metadata.h). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>

#include "base/logging.h"
#include "base/number.h"
#include "cluster/metadata.h"

#define HEADER "samsa-metadata"
#define FORMAT_VERSION 1

__attribute__((format(printf, 3, 4))) static void set_msg(char *msg, size_t msglen, const char *fmt,
                                                          ...)
{
    if (msg == NULL || msglen == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ encoding */

static bool safe_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

static void put_encoded(struct kp_writer *w, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (safe_byte(*p)) {
            kp_wr_raw(w, p, 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            kp_wr_raw(w, e, sizeof e);
        }
    }
}

static void put_str(struct kp_writer *w, const char *s)
{
    kp_wr_raw(w, s, strlen(s));
}

static void put_num(struct kp_writer *w, long long v)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%lld", v);
    if (n > 0 && (size_t)n < sizeof b) {
        kp_wr_raw(w, b, (size_t)n);
    }
}

int br_meta_file_format(const struct br_topic_meta *topics, size_t n_topics, char **out,
                        size_t *out_len)
{
    struct kp_writer w;
    *out = NULL;
    *out_len = 0;
    kp_wr_init(&w, BR_META_FILE_MAX_BYTES);
    put_str(&w,
            HEADER " 1\n"
                   "# Samsa's standalone metadata: topics, replica assignments, topic configs.\n"
                   "# Rewritten whole on every change: do not edit while the broker runs.\n");
    for (size_t i = 0; i < n_topics; i++) {
        const struct br_topic_meta *t = &topics[i];
        if (t->partitions < 0 || t->replication_factor < 0 ||
            (t->replicas == NULL && t->partitions > 0 && t->replication_factor > 0) ||
            (t->configs == NULL && t->n_configs > 0)) {
            kp_wr_free(&w);
            return KP_E_INVALID_ARG;
        }
        put_str(&w, "topic ");
        put_encoded(&w, t->name);
        put_str(&w, " ");
        put_num(&w, t->partitions);
        put_str(&w, " ");
        put_num(&w, t->replication_factor);
        put_str(&w, "\n");
        for (size_t c = 0; c < t->n_configs; c++) {
            put_str(&w, "config ");
            put_encoded(&w, t->configs[c].key);
            put_str(&w, "=");
            put_encoded(&w, t->configs[c].value);
            put_str(&w, "\n");
        }
        size_t rf = (size_t)t->replication_factor;
        for (size_t p = 0; p < (size_t)t->partitions; p++) {
            put_str(&w, "partition ");
            put_num(&w, (long long)p);
            put_str(&w, " ");
            for (size_t r = 0; r < rf; r++) {
                if (r > 0) {
                    put_str(&w, ",");
                }
                put_num(&w, t->replicas[p * rf + r]);
            }
            put_str(&w, "\n");
        }
        if (w.err != 0) {
            break;
        }
    }
    put_str(&w, "end ");
    put_num(&w, (long long)n_topics);
    put_str(&w, "\n");
    kp_wr_raw(&w, "", 1); /* a NUL after the text, for the caller's convenience */
    if (w.err != 0) {
        int rc = w.err == KP_E_TOO_LARGE ? KP_E_TOO_LARGE : KP_E_NOMEM;
        kp_wr_free(&w);
        return rc;
    }
    size_t len = 0;
    uint8_t *buf = kp_wr_steal(&w, &len);
    *out = (char *)buf;
    *out_len = len - 1;
    return 0;
}

/* ------------------------------------------------------------ parsing */

struct cursor {
    const char *buf;
    size_t len;
    size_t off;
    unsigned line; /* of the line last returned */
    const char *name;
    char *err;
    size_t errlen;
};

/* Records a corruption: where in the file, what, and where it was detected
 * ("samsa-metadata:12: bad broker id [metadata_file.c:345]"). */
__attribute__((format(printf, 3, 4))) static int corrupt_at(struct cursor *c, int site,
                                                            const char *fmt, ...)
{
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    set_msg(c->err, c->errlen, "%s:%u: %s [metadata_file.c:%d]", c->name, c->line, what, site);
    return KP_E_CORRUPT;
}

#define corrupt(c, ...) corrupt_at((c), __LINE__, __VA_ARGS__)

/*
 * The next line that is not blank and not a comment: 1 with ln[0..n), 0 at
 * the end of the input, or KP_E_CORRUPT.
 */
static int next_line(struct cursor *c, const char **ln, size_t *n)
{
    while (c->off < c->len) {
        c->line++;
        const char *start = c->buf + c->off;
        size_t avail = c->len - c->off;
        const char *nl = memchr(
            start, '\n', avail < BR_META_FILE_MAX_LINE + 1 ? avail : BR_META_FILE_MAX_LINE + 1);
        if (nl == NULL) {
            if (avail > BR_META_FILE_MAX_LINE) {
                return corrupt(c, "line longer than %zu bytes", BR_META_FILE_MAX_LINE);
            }
            return corrupt(c, "the last line has no end (file cut short?)");
        }
        size_t len = (size_t)(nl - start);
        c->off += len + 1;
        for (size_t i = 0; i < len; i++) {
            unsigned char ch = (unsigned char)start[i];
            if (ch < 0x20 || ch >= 0x7f) {
                return corrupt(c, "control or non-ASCII byte 0x%02x", ch);
            }
        }
        if (len == 0 || start[0] == '#') {
            continue;
        }
        *ln = start;
        *n = len;
        return 1;
    }
    return 0;
}

struct tok {
    const char *p;
    size_t n;
};

/* Splits on single spaces into exactly `want` non-empty tokens. */
static int split(struct cursor *c, const char *ln, size_t n, struct tok *toks, size_t want)
{
    size_t count = 0;
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && ln[j] != ' ') {
            j++;
        }
        if (j == i) {
            return corrupt(c, "empty field (two spaces, or a space at an end)");
        }
        if (count == want) {
            return corrupt(c, "more than %zu fields", want);
        }
        toks[count].p = ln + i;
        toks[count].n = j - i;
        count++;
        i = j + 1;
    }
    if (count != want) {
        return corrupt(c, "%zu fields where %zu are expected", count, want);
    }
    return 0;
}

static bool tok_is(struct tok t, const char *s)
{
    return t.n == strlen(s) && memcmp(t.p, s, t.n) == 0;
}

/* Canonical decimal in [0, max]: no sign, no leading zero, at most 10 digits. */
static bool parse_uint(const char *p, size_t n, int64_t max, int64_t *out)
{
    if (n == 0 || n > 10 || (n > 1 && p[0] == '0')) {
        return false;
    }
    uint64_t v = 0;
    if (max < 0 || !br_num_parse_u64(p, n, (uint64_t)max, &v)) {
        return false;
    }
    *out = (int64_t)v;
    return true;
}

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9') {
        return ch - '0';
    }
    if (ch >= 'A' && ch <= 'F') {
        return ch - 'A' + 10;
    }
    if (ch >= 'a' && ch <= 'f') {
        return ch - 'a' + 10;
    }
    return -1;
}

/* Percent-decodes t into a new string of at most max bytes. */
static int decode(struct cursor *c, struct tok t, size_t max, const char *what, char **out)
{
    *out = NULL;
    if (t.n / 3 > max) {
        return corrupt(c, "%s longer than %zu bytes", what, max);
    }
    char *s = kp_malloc(t.n + 1);
    if (s == NULL) {
        set_msg(c->err, c->errlen, "out of memory");
        return KP_E_NOMEM;
    }
    size_t o = 0;
    for (size_t i = 0; i < t.n; i++) {
        unsigned char ch = (unsigned char)t.p[i];
        if (ch == '%') {
            int hi = i + 2 < t.n ? hex_digit(t.p[i + 1]) : -1;
            int lo = i + 2 < t.n ? hex_digit(t.p[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                kp_free(s);
                return corrupt(c, "%s: bad %%XX escape", what);
            }
            ch = (unsigned char)(hi * 16 + lo);
            if (ch == 0) {
                kp_free(s);
                return corrupt(c, "%s: %%00 is not allowed", what);
            }
            i += 2;
        } else if (!safe_byte(ch)) {
            kp_free(s);
            return corrupt(c, "%s: byte '%c' must be percent-encoded", what, ch);
        }
        s[o++] = (char)ch;
    }
    s[o] = '\0';
    if (o > max) {
        kp_free(s);
        return corrupt(c, "%s longer than %zu bytes", what, max);
    }
    *out = s;
    return 0;
}

struct parse {
    struct cursor c;
    struct br_topic_meta *topics;
    size_t n;
    size_t cap;
    unsigned *lines; /* the line of each topic's "topic" record */
};

static int grow_topics(struct parse *ps)
{
    if (ps->n < ps->cap) {
        return 0;
    }
    if (ps->cap >= BR_META_MAX_TOPICS) {
        return corrupt(&ps->c, "more than %d topics", BR_META_MAX_TOPICS);
    }
    size_t cap = ps->cap == 0 ? 8 : ps->cap * 2;
    if (cap > BR_META_MAX_TOPICS) {
        cap = BR_META_MAX_TOPICS;
    }
    struct br_topic_meta *t = kp_realloc(ps->topics, cap * sizeof *t);
    if (t == NULL) {
        set_msg(ps->c.err, ps->c.errlen, "out of memory");
        return KP_E_NOMEM;
    }
    ps->topics = t;
    unsigned *l = kp_realloc(ps->lines, cap * sizeof *l);
    if (l == NULL) {
        set_msg(ps->c.err, ps->c.errlen, "out of memory");
        return KP_E_NOMEM;
    }
    ps->lines = l;
    ps->cap = cap;
    return 0;
}

/* "topic <name> <partitions> <rf>" */
static int parse_topic_line(struct parse *ps, const char *ln, size_t n)
{
    struct cursor *c = &ps->c;
    struct tok f[4] = {{NULL, 0}};
    int rc = split(c, ln, n, f, 4);
    if (rc != 0) {
        return rc;
    }
    rc = grow_topics(ps);
    if (rc != 0) {
        return rc;
    }
    struct br_topic_meta *t = &ps->topics[ps->n];
    memset(t, 0, sizeof *t);
    ps->lines[ps->n] = c->line;
    ps->n++; /* from here on the caller frees it with the others */

    char *name = NULL;
    rc = decode(c, f[1], BR_TOPIC_NAME_MAX, "topic name", &name);
    if (rc != 0 || name == NULL) {
        return rc != 0 ? rc : KP_E_NOMEM;
    }
    size_t name_len = strlen(name);
    bool valid = br_topic_name_valid(name, name_len);
    if (valid) {
        memcpy(t->name, name, name_len + 1);
    }
    kp_free(name);
    if (!valid) {
        return corrupt(c, "invalid topic name");
    }
    int64_t partitions = 0;
    int64_t rf = 0;
    if (!parse_uint(f[2].p, f[2].n, BR_META_MAX_PARTITIONS, &partitions) || partitions < 1) {
        return corrupt(c, "topic %s: the partition count must be between 1 and %d", t->name,
                       BR_META_MAX_PARTITIONS);
    }
    if (!parse_uint(f[3].p, f[3].n, BR_META_MAX_REPLICATION_FACTOR, &rf) || rf < 1) {
        return corrupt(c, "topic %s: the replication factor must be between 1 and %d", t->name,
                       BR_META_MAX_REPLICATION_FACTOR);
    }
    /* a claimed size drives no allocation beyond what the bytes left can
     * hold: each partition needs a line of at least "partition 0 0\n" and
     * each further replica at least ",0" */
    int64_t total = partitions * rf;
    int64_t need = partitions * 14 + (total - partitions) * 2;
    if (total > BR_META_MAX_REPLICAS || need > (int64_t)(c->len - c->off)) {
        return corrupt(c, "topic %s: %lld partitions x %lld replicas do not fit the file", t->name,
                       (long long)partitions, (long long)rf);
    }
    t->partitions = (int32_t)partitions;
    t->replication_factor = (int16_t)rf;
    t->replicas = kp_malloc((size_t)total * sizeof *t->replicas);
    if (t->replicas == NULL) {
        set_msg(c->err, c->errlen, "out of memory");
        return KP_E_NOMEM;
    }
    return 0;
}

/* "config <key>=<value>" */
static int parse_config_line(struct parse *ps, struct br_topic_meta *t, const char *ln, size_t n,
                             size_t *cap)
{
    struct cursor *c = &ps->c;
    struct tok f[2] = {{NULL, 0}};
    int rc = split(c, ln, n, f, 2);
    if (rc != 0) {
        return rc;
    }
    const char *eq = memchr(f[1].p, '=', f[1].n);
    if (eq == NULL) {
        return corrupt(c, "topic %s: expected config key=value", t->name);
    }
    if (t->n_configs == BR_META_MAX_CONFIGS) {
        return corrupt(c, "topic %s: more than %d configs", t->name, BR_META_MAX_CONFIGS);
    }
    if (t->n_configs == *cap) {
        size_t ncap = *cap == 0 ? 4 : *cap * 2;
        struct br_meta_config *cf = kp_realloc(t->configs, ncap * sizeof *cf);
        if (cf == NULL) {
            set_msg(c->err, c->errlen, "out of memory");
            return KP_E_NOMEM;
        }
        t->configs = cf;
        *cap = ncap;
    }
    struct tok kt = {f[1].p, (size_t)(eq - f[1].p)};
    struct tok vt = {eq + 1, f[1].n - kt.n - 1};
    char *key = NULL;
    char *value = NULL;
    rc = decode(c, kt, BR_META_MAX_CONFIG_KEY, "config key", &key);
    if (rc == 0) {
        rc = decode(c, vt, BR_META_MAX_CONFIG_VALUE, "config value", &value);
    }
    if (rc != 0 || key == NULL || value == NULL) {
        kp_free(key);
        kp_free(value);
        return rc != 0 ? rc : KP_E_NOMEM;
    }
    struct br_meta_config *cf = &t->configs[t->n_configs++];
    cf->key = key;
    cf->value = value;
    char msg[320];
    rc = br_meta_configs_check(t->configs, t->n_configs, msg, sizeof msg);
    if (rc != 0) {
        return corrupt(c, "topic %s: %s", t->name, msg);
    }
    return 0;
}

/* "partition <p> <id>,<id>,..." */
static int parse_partition_line(struct parse *ps, struct br_topic_meta *t, int32_t p,
                                const char *ln, size_t n)
{
    struct cursor *c = &ps->c;
    struct tok f[3] = {{NULL, 0}};
    int rc = split(c, ln, n, f, 3);
    if (rc != 0) {
        return rc;
    }
    int64_t idx = 0;
    if (!parse_uint(f[1].p, f[1].n, INT32_MAX, &idx) || idx != p) {
        return corrupt(c, "topic %s: partition %ld expected", t->name, (long)p);
    }
    size_t rf = (size_t)t->replication_factor;
    int32_t *ids = t->replicas + (size_t)p * rf;
    size_t r = 0;
    size_t i = 0;
    while (i <= f[2].n) {
        size_t j = i;
        while (j < f[2].n && f[2].p[j] != ',') {
            j++;
        }
        int64_t id = 0;
        if (r == rf) {
            return corrupt(c, "topic %s: partition %ld has more than %zu replicas", t->name,
                           (long)p, rf);
        }
        if (!parse_uint(f[2].p + i, j - i, INT32_MAX, &id)) {
            return corrupt(c, "topic %s: partition %ld: bad broker id", t->name, (long)p);
        }
        ids[r++] = (int32_t)id;
        i = j + 1;
    }
    if (r != rf) {
        return corrupt(c, "topic %s: partition %ld has %zu replicas, not %zu", t->name, (long)p, r,
                       rf);
    }
    return 0;
}

/* A topic is complete: all partitions given, and it passes the store's checks. */
static int finish_topic(struct parse *ps, int32_t partitions_seen)
{
    if (ps->n == 0) {
        return 0;
    }
    struct br_topic_meta *t = &ps->topics[ps->n - 1];
    unsigned here = ps->c.line;
    ps->c.line = ps->lines[ps->n - 1];
    int rc = 0;
    if (partitions_seen != t->partitions) {
        rc = corrupt(&ps->c, "topic %s: %ld partitions declared, %ld given", t->name,
                     (long)t->partitions, (long)partitions_seen);
    } else {
        char msg[320];
        if (br_topic_meta_check(t, msg, sizeof msg) != 0) {
            rc = corrupt(&ps->c, "%s", msg);
        }
    }
    ps->c.line = here;
    return rc;
}

/* Heapsort of topic indices by name, to find repeated names in O(n log n). */
static bool name_less(const struct br_topic_meta *t, size_t a, size_t b)
{
    return strcmp(t[a].name, t[b].name) < 0;
}

static void sift(const struct br_topic_meta *t, size_t *ix, size_t start, size_t end)
{
    size_t root = start;
    while (2 * root + 1 < end) {
        size_t child = 2 * root + 1;
        if (child + 1 < end && name_less(t, ix[child], ix[child + 1])) {
            child++;
        }
        if (!name_less(t, ix[root], ix[child])) {
            return;
        }
        size_t x = ix[root];
        ix[root] = ix[child];
        ix[child] = x;
        root = child;
    }
}

static int check_unique_names(struct parse *ps)
{
    if (ps->n < 2) {
        return 0;
    }
    size_t *ix = kp_malloc(ps->n * sizeof *ix);
    if (ix == NULL) {
        set_msg(ps->c.err, ps->c.errlen, "out of memory");
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < ps->n; i++) {
        ix[i] = i;
    }
    for (size_t i = ps->n / 2; i > 0; i--) {
        sift(ps->topics, ix, i - 1, ps->n);
    }
    for (size_t end = ps->n; end > 1; end--) {
        size_t x = ix[0];
        ix[0] = ix[end - 1];
        ix[end - 1] = x;
        sift(ps->topics, ix, 0, end - 1);
    }
    int rc = 0;
    for (size_t i = 1; i < ps->n; i++) {
        if (strcmp(ps->topics[ix[i]].name, ps->topics[ix[i - 1]].name) == 0) {
            size_t later = ix[i] > ix[i - 1] ? ix[i] : ix[i - 1];
            ps->c.line = ps->lines[later];
            rc = corrupt(&ps->c, "topic %s appears twice", ps->topics[later].name);
            break;
        }
    }
    kp_free(ix);
    return rc;
}

static int parse_body(struct parse *ps)
{
    struct cursor *c = &ps->c;
    const char *ln = NULL;
    size_t n = 0;
    int r = next_line(c, &ln, &n);
    if (r < 0) {
        return r;
    }
    if (r == 0) {
        c->line = 1;
        return corrupt(c, "empty file: no \"" HEADER " %d\" header", FORMAT_VERSION);
    }
    size_t hl = strlen(HEADER);
    if (n <= hl + 1 || memcmp(ln, HEADER " ", hl + 1) != 0) {
        return corrupt(c, "not a samsa-metadata file");
    }
    int64_t version = 0;
    if (!parse_uint(ln + hl + 1, n - hl - 1, INT32_MAX, &version)) {
        return corrupt(c, "bad format version");
    }
    if (version != FORMAT_VERSION) {
        return corrupt(c, "format version %lld; this Samsa reads version %d", (long long)version,
                       FORMAT_VERSION);
    }

    int32_t partitions_seen = 0;
    size_t config_cap = 0;
    for (;;) {
        r = next_line(c, &ln, &n);
        if (r < 0) {
            return r;
        }
        if (r == 0) {
            c->line++;
            return corrupt(c, "no \"end\" line (file cut short?)");
        }
        const char *sp = memchr(ln, ' ', n);
        struct tok kw = {ln, sp != NULL ? (size_t)(sp - ln) : n};
        struct br_topic_meta *t = ps->n > 0 ? &ps->topics[ps->n - 1] : NULL;
        int rc;
        if (tok_is(kw, "topic")) {
            rc = finish_topic(ps, partitions_seen);
            if (rc == 0) {
                rc = parse_topic_line(ps, ln, n);
            }
            partitions_seen = 0;
            config_cap = 0;
        } else if (tok_is(kw, "config")) {
            if (t == NULL || partitions_seen > 0) {
                return corrupt(c, "a config line belongs after its topic line, before the "
                                  "partitions");
            }
            rc = parse_config_line(ps, t, ln, n, &config_cap);
        } else if (tok_is(kw, "partition")) {
            if (t == NULL) {
                return corrupt(c, "a partition line before any topic line");
            }
            if (partitions_seen == t->partitions) {
                return corrupt(c, "topic %s: more than %ld partitions", t->name,
                               (long)t->partitions);
            }
            rc = parse_partition_line(ps, t, partitions_seen, ln, n);
            partitions_seen++;
        } else if (tok_is(kw, "end")) {
            struct tok f[2] = {{NULL, 0}};
            int64_t count = 0;
            rc = split(c, ln, n, f, 2);
            if (rc != 0) {
                return rc;
            }
            if (!parse_uint(f[1].p, f[1].n, INT32_MAX, &count) || (size_t)count != ps->n) {
                return corrupt(c, "the end line counts %.*s topics, the file holds %zu",
                               (int)(f[1].n < 12 ? f[1].n : 12), f[1].p, ps->n);
            }
            rc = finish_topic(ps, partitions_seen);
            if (rc != 0) {
                return rc;
            }
            if (c->off != c->len) {
                c->line++;
                return corrupt(c, "data after the end line");
            }
            return check_unique_names(ps);
        } else {
            return corrupt(c, "unknown record \"%.*s\"", (int)(kw.n < 20 ? kw.n : 20), kw.p);
        }
        if (rc != 0) {
            return rc;
        }
    }
}

int br_meta_file_parse(const char *buf, size_t len, const char *name, struct br_topic_meta **topics,
                       size_t *n_topics, char *err, size_t errlen)
{
    *topics = NULL;
    *n_topics = 0;
    set_msg(err, errlen, "%s", "");
    if (name == NULL) {
        name = "(metadata)";
    }
    if (len > BR_META_FILE_MAX_BYTES) {
        set_msg(err, errlen, "%s: larger than %zu bytes", name, BR_META_FILE_MAX_BYTES);
        return KP_E_TOO_LARGE;
    }
    struct parse ps;
    memset(&ps, 0, sizeof ps);
    ps.c.buf = buf;
    ps.c.len = len;
    ps.c.name = name;
    ps.c.err = err;
    ps.c.errlen = errlen;
    int rc = parse_body(&ps);
    kp_free(ps.lines);
    if (rc != 0) {
        br_topic_metas_free(ps.topics, ps.n);
        return rc;
    }
    if (ps.n == 0) {
        kp_free(ps.topics);
        ps.topics = NULL;
    }
    *topics = ps.topics;
    *n_topics = ps.n;
    return 0;
}

/* ------------------------------------------------------------ the store */

struct file_store {
    char *path;
    char *tmp_path;
    char *dir_path;
    struct br_topic_meta *topics;
    size_t n;
    size_t cap;
};

/* Writes data to the store's file atomically: tmp, fdatasync, rename, fsync dir. */
static int write_atomically(const struct file_store *s, const char *data, size_t len, char *err,
                            size_t errlen)
{
    int fd = open(s->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        set_msg(err, errlen, "%s: cannot create: %s", s->tmp_path, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            set_msg(err, errlen, "%s: cannot write: %s", s->tmp_path,
                    w < 0 ? strerror(errno) : "no progress");
            goto out_unlink;
        }
        off += (size_t)w;
    }
    if (fdatasync(fd) != 0) {
        set_msg(err, errlen, "%s: cannot sync: %s", s->tmp_path, strerror(errno));
        goto out_unlink;
    }
    int cr = close(fd);
    fd = -1;
    if (cr != 0) {
        set_msg(err, errlen, "%s: cannot close: %s", s->tmp_path, strerror(errno));
        goto out_unlink;
    }
    if (rename(s->tmp_path, s->path) != 0) {
        set_msg(err, errlen, "%s: cannot rename to %s: %s", s->tmp_path, s->path, strerror(errno));
        goto out_unlink;
    }
    /* The new content is in place. If the directory cannot be synced, the
     * rename might not survive a crash, but the file itself is whole either
     * way: report it and go on rather than pretend the change did not happen. */
    int dfd = open(s->dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) != 0) {
        br_warn("%s: cannot sync the directory: %s", s->dir_path, strerror(errno));
    }
    if (dfd >= 0) {
        (void)close(dfd);
    }
    return 0;
out_unlink:
    if (fd >= 0) {
        (void)close(fd);
    }
    (void)unlink(s->tmp_path);
    return KP_ERR_KAFKA_STORAGE_ERROR;
}

static int store_write(const struct file_store *s, const struct br_topic_meta *topics, size_t n,
                       char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    int rc = br_meta_file_format(topics, n, &data, &len);
    if (rc != 0) {
        set_msg(err, errlen, "%s: %s", s->path,
                rc == KP_E_TOO_LARGE ? "the metadata would exceed the file ceiling"
                                     : "out of memory");
        return rc;
    }
    rc = write_atomically(s, data, len, err, errlen);
    kp_free(data);
    return rc;
}

static struct file_store *store_of(struct br_meta *m)
{
    return m->impl;
}

static size_t find_topic(const struct file_store *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->topics[i].name, name) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

static int file_load(struct br_meta *m, struct br_topic_meta **topics, size_t *n_topics, char *err,
                     size_t errlen)
{
    const struct file_store *s = store_of(m);
    *topics = NULL;
    *n_topics = 0;
    if (s->n == 0) {
        return 0;
    }
    struct br_topic_meta *copy = kp_calloc(s->n, sizeof *copy);
    if (copy == NULL) {
        set_msg(err, errlen, "out of memory");
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (br_topic_meta_copy(&copy[i], &s->topics[i]) != 0) {
            br_topic_metas_free(copy, i);
            set_msg(err, errlen, "out of memory");
            return KP_E_NOMEM;
        }
    }
    *topics = copy;
    *n_topics = s->n;
    return 0;
}

static int file_create_topic(struct br_meta *m, const struct br_topic_meta *topic, char *err,
                             size_t errlen)
{
    struct file_store *s = store_of(m);
    int rc = br_topic_meta_check(topic, err, errlen);
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->topics[i].name, topic->name) == 0) {
            set_msg(err, errlen, "topic %s already exists", topic->name);
            return KP_ERR_TOPIC_ALREADY_EXISTS;
        }
        if (br_topic_names_collide(s->topics[i].name, topic->name)) {
            set_msg(err, errlen, "Topic '%s' collides with existing topics: %s", topic->name,
                    s->topics[i].name);
            return KP_ERR_INVALID_TOPIC_EXCEPTION;
        }
    }
    if (s->n >= BR_META_MAX_TOPICS) {
        set_msg(err, errlen, "more than %d topics", BR_META_MAX_TOPICS);
        return KP_ERR_POLICY_VIOLATION;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap == 0 ? 8 : s->cap * 2;
        struct br_topic_meta *t = kp_realloc(s->topics, cap * sizeof *t);
        if (t == NULL) {
            set_msg(err, errlen, "out of memory");
            return KP_E_NOMEM;
        }
        s->topics = t;
        s->cap = cap;
    }
    if (br_topic_meta_copy(&s->topics[s->n], topic) != 0) {
        set_msg(err, errlen, "out of memory");
        return KP_E_NOMEM;
    }
    rc = store_write(s, s->topics, s->n + 1, err, errlen);
    if (rc != 0) {
        br_topic_meta_clear(&s->topics[s->n]);
        return rc;
    }
    s->n++;
    return 0;
}

static int file_delete_topic(struct br_meta *m, const char *name, char *err, size_t errlen)
{
    struct file_store *s = store_of(m);
    size_t i = find_topic(s, name);
    if (i == SIZE_MAX) {
        set_msg(err, errlen, "no topic %.249s", name);
        return KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    struct br_topic_meta gone = s->topics[i];
    memmove(&s->topics[i], &s->topics[i + 1], (s->n - i - 1) * sizeof s->topics[0]);
    int rc = store_write(s, s->topics, s->n - 1, err, errlen);
    if (rc != 0) {
        memmove(&s->topics[i + 1], &s->topics[i], (s->n - i - 1) * sizeof s->topics[0]);
        s->topics[i] = gone;
        return rc;
    }
    s->n--;
    br_topic_meta_clear(&gone);
    return 0;
}

/* Deep copy of n configs into t->configs (t starts without configs). */
static int copy_configs(const struct br_meta_config *configs, size_t n, struct br_topic_meta *t)
{
    if (n == 0) {
        return 0;
    }
    t->configs = kp_calloc(n, sizeof *t->configs);
    if (t->configs == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        size_t kn = strlen(configs[i].key);
        size_t vn = strlen(configs[i].value);
        t->n_configs = i + 1; /* so that a failure frees what was copied */
        t->configs[i].key = kp_malloc(kn + 1);
        t->configs[i].value = kp_malloc(vn + 1);
        if (t->configs[i].key == NULL || t->configs[i].value == NULL) {
            br_topic_meta_clear(t);
            return KP_E_NOMEM;
        }
        memcpy(t->configs[i].key, configs[i].key, kn + 1);
        memcpy(t->configs[i].value, configs[i].value, vn + 1);
    }
    return 0;
}

static int file_set_topic_configs(struct br_meta *m, const char *name,
                                  const struct br_meta_config *configs, size_t n_configs, char *err,
                                  size_t errlen)
{
    struct file_store *s = store_of(m);
    size_t i = find_topic(s, name);
    if (i == SIZE_MAX) {
        set_msg(err, errlen, "no topic %.249s", name);
        return KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    int rc = br_meta_configs_check(configs, n_configs, err, errlen);
    if (rc != 0) {
        return rc;
    }
    /* build the new set aside, then swap it in */
    struct br_topic_meta fresh;
    memset(&fresh, 0, sizeof fresh);
    if (copy_configs(configs, n_configs, &fresh) != 0) {
        set_msg(err, errlen, "out of memory");
        return KP_E_NOMEM;
    }
    struct br_topic_meta *t = &s->topics[i];
    struct br_meta_config *old = t->configs;
    size_t old_n = t->n_configs;
    t->configs = fresh.configs;
    t->n_configs = fresh.n_configs;
    rc = store_write(s, s->topics, s->n, err, errlen);
    if (rc != 0) {
        fresh.configs = t->configs; /* frees the new set below */
        t->configs = old;
        t->n_configs = old_n;
        br_topic_meta_clear(&fresh);
        return rc;
    }
    fresh.configs = old;
    fresh.n_configs = old_n;
    br_topic_meta_clear(&fresh);
    return 0;
}

static int file_set_partitions(struct br_meta *m, const char *name, int32_t partitions,
                               const int32_t *replicas, char *err, size_t errlen)
{
    struct file_store *s = store_of(m);
    size_t i = find_topic(s, name);
    if (i == SIZE_MAX) {
        set_msg(err, errlen, "no topic %.249s", name);
        return KP_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    struct br_topic_meta *t = &s->topics[i];
    if (partitions < 1 || partitions > BR_META_MAX_PARTITIONS) {
        set_msg(err, errlen, "number of partitions must be 1-%d", BR_META_MAX_PARTITIONS);
        return KP_ERR_INVALID_PARTITIONS;
    }
    size_t rf = (size_t)t->replication_factor;
    size_t n = (size_t)partitions * rf;
    int32_t *copy = kp_malloc(n * sizeof *copy);
    if (copy == NULL) {
        set_msg(err, errlen, "out of memory");
        return KP_E_NOMEM;
    }
    /* the partitions it keeps keep their stored replicas */
    size_t kept = (size_t)(partitions < t->partitions ? partitions : t->partitions) * rf;
    memcpy(copy, t->replicas, kept * sizeof *copy);
    memcpy(copy + kept, replicas + kept, (n - kept) * sizeof *copy);
    /* the topic as it would be, checked whole (its configs stay) */
    struct br_topic_meta fresh = *t;
    fresh.partitions = partitions;
    fresh.replicas = copy;
    int rc = br_topic_meta_check(&fresh, err, errlen);
    if (rc != 0) {
        kp_free(copy);
        return rc;
    }
    int32_t *old = t->replicas;
    int32_t old_n = t->partitions;
    t->replicas = copy;
    t->partitions = partitions;
    rc = store_write(s, s->topics, s->n, err, errlen);
    if (rc != 0) {
        t->replicas = old;
        t->partitions = old_n;
        kp_free(copy);
        return rc;
    }
    kp_free(old);
    return 0;
}

static void store_free(struct file_store *s)
{
    if (s == NULL) {
        return;
    }
    br_topic_metas_free(s->topics, s->n);
    kp_free(s->path);
    kp_free(s->tmp_path);
    kp_free(s->dir_path);
    kp_free(s);
}

static void file_close(struct br_meta *m)
{
    store_free(store_of(m));
}

static const struct br_meta_ops file_ops = {
    .name = "file",
    .load = file_load,
    .create_topic = file_create_topic,
    .delete_topic = file_delete_topic,
    .set_topic_configs = file_set_topic_configs,
    .set_partitions = file_set_partitions,
    .close = file_close,
};

/* Reads the whole file (at most the ceiling) into a new buffer. */
static int read_file(const char *path, int fd, char **out, size_t *out_len, char *err,
                     size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        set_msg(err, errlen, "%s: not a regular file", path);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > BR_META_FILE_MAX_BYTES) {
        set_msg(err, errlen, "%s: larger than %zu bytes", path, BR_META_FILE_MAX_BYTES);
        return KP_E_TOO_LARGE;
    }
    /* room for one byte more than stat said, to notice a file that grows */
    size_t cap = (size_t)st.st_size + 1;
    char *buf = kp_malloc(cap);
    if (buf == NULL) {
        set_msg(err, errlen, "out of memory");
        return KP_E_NOMEM;
    }
    size_t len = 0;
    while (len < cap) {
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            set_msg(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            kp_free(buf);
            return KP_ERR_KAFKA_STORAGE_ERROR;
        }
        if (r == 0) {
            break;
        }
        len += (size_t)r;
    }
    if (len == cap) {
        set_msg(err, errlen, "%s: changed while being read", path);
        kp_free(buf);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    *out = buf;
    *out_len = len;
    return 0;
}

static char *concat(const char *a, size_t an, const char *b)
{
    size_t bn = strlen(b);
    char *p = kp_malloc(an + bn + 1);
    if (p != NULL) {
        memcpy(p, a, an);
        memcpy(p + an, b, bn + 1);
    }
    return p;
}

int br_meta_file_open(const char *path, struct br_meta *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    set_msg(err, errlen, "%s", "");
    struct file_store *s = kp_calloc(1, sizeof *s);
    if (s == NULL) {
        set_msg(err, errlen, "out of memory");
        return KP_E_NOMEM;
    }
    size_t pn = strlen(path);
    const char *slash = strrchr(path, '/');
    s->path = concat(path, pn, "");
    s->tmp_path = concat(path, pn, ".tmp");
    if (slash == NULL) {
        s->dir_path = concat(".", 1, "");
    } else if (slash == path) {
        s->dir_path = concat("/", 1, "");
    } else {
        s->dir_path = concat(path, (size_t)(slash - path), "");
    }
    int rc = 0;
    if (s->path == NULL || s->tmp_path == NULL || s->dir_path == NULL) {
        set_msg(err, errlen, "out of memory");
        rc = KP_E_NOMEM;
        goto out_free;
    }

    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        /* a new store: write the empty file now, so that a directory we
         * cannot write to stops start-up rather than the first CreateTopics */
        rc = store_write(s, NULL, 0, err, errlen);
        if (rc != 0) {
            goto out_free;
        }
        br_info("%s: new metadata file", path);
    } else if (fd < 0) {
        set_msg(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
        goto out_free;
    } else {
        char *buf = NULL;
        size_t len = 0;
        rc = read_file(path, fd, &buf, &len, err, errlen);
        (void)close(fd);
        if (rc != 0) {
            goto out_free;
        }
        rc = br_meta_file_parse(buf, len, path, &s->topics, &s->n, err, errlen);
        kp_free(buf);
        if (rc != 0) {
            goto out_free;
        }
        s->cap = s->n;
    }
    out->ops = &file_ops;
    out->impl = s;
    return 0;
out_free:
    store_free(s);
    return rc;
}
