/*
 * samsa consume: a topic's records, by partition or as a group member.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static const char consume_help[] =
    "usage: samsa consume -b BROKERS -t TOPIC [-p PARTITION]\n"
    "                     [--from beginning|end|OFFSET|-N|@MS] [--until @MS]\n"
    "                     [--group GROUP] [--count N] [-e] [-f FORMAT] [-K DELIM] [--json]\n"
    "                     [-X key=value]...\n"
    "Reads every partition of TOPIC (or only -p) from --from (default end; -N: the last\n"
    "N records of each partition, as kcat -o -N; @MS: the first record at or after that\n"
    "time), printing each record's value and a newline. --until @MS stops each\n"
    "partition before its first record at or after MS, and exits once every partition\n"
    "got there (as kcat -o e@MS). -e exits once every partition is at its end;\n"
    "--count N after N records. -K DELIM prints key DELIM value. -f FORMAT as kcat:\n"
    "%s value, %k key, %t topic, %p partition, %o offset, %T timestamp, %S value length,\n"
    "%K key length, %h headers (name=value,...), \\n, \\t, %%. --json prints one JSON\n"
    "object per record.\n"
    "--group GROUP (-G) joins GROUP instead (TOPIC may be a comma-separated list): the\n"
    "group shares the partitions among its members, each starts at the group's\n"
    "committed offset (--from beginning|end say where when there is none) and\n"
    "offsets are committed as records are printed and at exit.\n"
    "--timeout MS (default 30000) bounds finding the partitions and --from @MS, not\n"
    "the reading.\n"
    "Exit status: 0 done, 1 an error stopped it, 2 usage error.\n";

static void print_headers(FILE *f, const samsa_message *m)
{
    for (size_t i = 0; i < m->header_count; i++) {
        fprintf(f, "%s%s=", i == 0 ? "" : ",", m->headers[i].name);
        if (m->headers[i].value != NULL) {
            fwrite(m->headers[i].value, 1, m->headers[i].value_len, f);
        }
    }
}

static void print_fmt(const char *fmt, const samsa_message *m)
{
    for (const char *p = fmt; *p != '\0'; p++) {
        if (*p == '\\' && p[1] != '\0') {
            p++;
            putchar(*p == 'n' ? '\n' : *p == 't' ? '\t' : *p);
            continue;
        }
        if (*p != '%' || p[1] == '\0') {
            putchar(*p);
            continue;
        }
        p++;
        switch (*p) {
        case 's':
            if (m->value != NULL) {
                fwrite(m->value, 1, m->value_len, stdout);
            }
            break;
        case 'k':
            if (m->key != NULL) {
                fwrite(m->key, 1, m->key_len, stdout);
            }
            break;
        case 't':
            fputs(m->topic, stdout);
            break;
        case 'p':
            printf("%d", m->partition);
            break;
        case 'o':
            printf("%" PRId64, m->offset);
            break;
        case 'T':
            printf("%" PRId64, m->timestamp);
            break;
        case 'S':
            printf("%zu", m->value != NULL ? m->value_len : 0);
            break;
        case 'K':
            printf("%zu", m->key != NULL ? m->key_len : 0);
            break;
        case 'h':
            print_headers(stdout, m);
            break;
        case '%':
            putchar('%');
            break;
        default:
            putchar('%');
            putchar(*p);
            break;
        }
    }
}

static void print_message(const struct opts *o, const samsa_message *m)
{
    if (o->json) {
        printf("{\"topic\":");
        json_str(stdout, m->topic, strlen(m->topic));
        printf(",\"partition\":%d,\"offset\":%" PRId64 ",\"timestamp\":%" PRId64 ",\"key\":",
               m->partition, m->offset, m->timestamp);
        if (m->key != NULL) {
            json_str(stdout, m->key, m->key_len);
        } else {
            printf("null");
        }
        printf(",\"value\":");
        if (m->value != NULL) {
            json_str(stdout, m->value, m->value_len);
        } else {
            printf("null");
        }
        printf(",\"headers\":{");
        for (size_t i = 0; i < m->header_count; i++) {
            printf("%s", i == 0 ? "" : ",");
            json_str(stdout, m->headers[i].name, strlen(m->headers[i].name));
            printf(":");
            if (m->headers[i].value != NULL) {
                json_str(stdout, m->headers[i].value, m->headers[i].value_len);
            } else {
                printf("null");
            }
        }
        printf("}}\n");
    } else if (o->format != NULL) {
        print_fmt(o->format, m);
    } else {
        if (o->key_delim != NULL) {
            if (m->key != NULL) {
                fwrite(m->key, 1, m->key_len, stdout);
            }
            fputs(o->key_delim, stdout);
        }
        if (m->value != NULL) {
            fwrite(m->value, 1, m->value_len, stdout);
        }
        putchar('\n');
    }
}

/* consume --until: which partitions reached a record at or after it. */
struct until {
    size_t n;
    size_t finished;
    int32_t *ids;
    bool *done;
};

/* Whether m is past --until: then its partition is finished (moved to its
 * end, so that -e sees it there) and m is not printed. */
static bool past_until(samsa_consumer *c, const struct opts *o, struct until *u,
                       const samsa_message *m)
{
    if (u == NULL) {
        return false;
    }
    size_t i = 0;
    while (i < u->n && u->ids[i] != m->partition) {
        i++;
    }
    if (i == u->n) {
        return false;
    }
    if (u->done[i]) {
        return true;
    }
    if (m->timestamp < o->until_ms) {
        return false;
    }
    u->done[i] = true;
    u->finished++;
    if (samsa_consumer_seek(c, m->topic, m->partition, SAMSA_OFFSET_END, o->timeout_ms) !=
        SAMSA_OK) {
        fprintf(stderr, "samsa consume: %s [%d]: could not move past --until\n", m->topic,
                m->partition);
    }
    return true;
}

/* Polls until --count, the end (-e), every partition past --until (u) or a
 * signal; closes c. */
static int consume_loop(samsa_consumer *c, const struct opts *o, struct until *u)
{
    long long got = 0;
    while (!interrupted && (o->count < 0 || got < o->count) && (u == NULL || u->finished < u->n)) {
        samsa_message *m = samsa_consumer_poll(c, 100);
        if (m == NULL) {
            if (o->exit_at_end && samsa_consumer_at_end(c)) {
                break;
            }
            continue;
        }
        if (past_until(c, o, u, m)) {
            samsa_message_free(m);
            continue;
        }
        got++;
        print_message(o, m);
        samsa_message_free(m);
        if (o->group != NULL) {
            fflush(stdout); /* a member's output is watched as it comes */
        }
    }
    fflush(stdout);
    samsa_consumer_destroy(c);
    return 0;
}

static void on_consume_error(int err, const char *reason, void *opaque)
{
    (void)opaque;
    fprintf(stderr, "samsa consume: %s: %s\n", samsa_err_name(err), reason);
}

/* consume --group: a member of the group, subscribed to o->topic's list. */
static int consume_group(samsa_conf *conf, const struct opts *o, int64_t start)
{
    char err[512];
    const char *reset = start == SAMSA_OFFSET_BEGINNING ? "earliest" : "latest";
    if (samsa_conf_set(conf, "group.id", o->group, err, sizeof(err)) != SAMSA_OK ||
        samsa_conf_set(conf, "auto.offset.reset", reset, err, sizeof(err)) != SAMSA_OK) {
        fprintf(stderr, "samsa consume: %s\n", err);
        samsa_conf_destroy(conf);
        return EXIT_USAGE;
    }
    samsa_conf_set_error_cb(conf, on_consume_error, NULL);
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (c == NULL) {
        fprintf(stderr, "samsa consume: %s\n", err);
        return EXIT_USAGE;
    }
    char list[4096];
    snprintf(list, sizeof(list), "%s", o->topic);
    const char *topics[64];
    size_t n = 0;
    for (char *t = list; t != NULL && *t != '\0' && n < 64;) {
        char *comma = strchr(t, ',');
        if (comma != NULL) {
            *comma = '\0';
        }
        if (*t != '\0') {
            topics[n++] = t;
        }
        t = comma != NULL ? comma + 1 : NULL;
    }
    int e = n > 0 ? samsa_consumer_subscribe(c, topics, n) : SAMSA_ERR_INVALID_ARG;
    if (e != SAMSA_OK) {
        fprintf(stderr, "samsa consume: subscribe: %s\n", samsa_err_str(e));
        samsa_consumer_destroy(c);
        return EXIT_FAIL;
    }
    return consume_loop(c, o, NULL);
}

int cmd_consume(int argc, char **argv)
{
    struct opts o;
    int rc = parse_opts("consume", argc, argv, &o);
    if (rc != 0) {
        return rc;
    }
    if (o.help) {
        fputs(consume_help, stdout);
        return 0;
    }
    if (o.topic == NULL) {
        return usage_error("consume", "%s", "-t TOPIC is required");
    }
    int64_t start = SAMSA_OFFSET_END;
    bool by_time = false;
    long long relative = 0;
    if (o.from != NULL) {
        long long n;
        if (strcmp(o.from, "beginning") == 0) {
            start = SAMSA_OFFSET_BEGINNING;
        } else if (strcmp(o.from, "end") == 0) {
            start = SAMSA_OFFSET_END;
        } else if (strcmp(o.from, "stored") == 0) {
            start = SAMSA_OFFSET_STORED;
        } else if (o.from[0] == '@' && parse_ll(o.from + 1, &n) && n >= 0) {
            start = n;
            by_time = true;
        } else if (parse_ll(o.from, &n) && n >= 0) {
            start = n;
        } else if (parse_ll(o.from, &n) && n < 0 && n > INT64_MIN) {
            relative = -n; /* -N: the last N of each partition, as kcat -o -N */
        } else {
            return usage_error("consume",
                               "bad --from \"%s\" (beginning, end, OFFSET, -N or @MS)", o.from);
        }
    }
    if (o.group != NULL && (o.partition >= 0 || by_time || relative > 0 || o.until_ms >= 0 ||
                            (start != SAMSA_OFFSET_BEGINNING && start != SAMSA_OFFSET_END))) {
        return usage_error("consume", "%s",
                           "--group takes --from beginning or end (where to start without a "
                           "committed offset), and no -p or --until");
    }
    samsa_conf *conf = NULL;
    rc = make_conf("consume", &o, &conf);
    if (rc != 0) {
        return rc;
    }
    if (o.group != NULL) {
        return consume_group(conf, &o, start);
    }
    char err[512];
    samsa_admin *a = samsa_admin_new(conf, err, sizeof(err));
    if (a == NULL) {
        fprintf(stderr, "samsa consume: %s\n", err);
        samsa_conf_destroy(conf);
        return EXIT_USAGE;
    }
    samsa_metadata *md = NULL;
    rc = one_topic(a, "consume", &o, o.topic, &md);
    if (rc != 0) {
        samsa_admin_destroy(a);
        samsa_conf_destroy(conf);
        return rc;
    }
    size_t nparts = md->topics[0].partition_count;
    struct samsa_partition *parts = calloc(nparts > 0 ? nparts : 1, sizeof(*parts));
    size_t n = 0;
    int e = SAMSA_OK;
    for (size_t i = 0; parts != NULL && i < nparts && rc == 0; i++) {
        int32_t id = md->topics[0].partitions[i].id;
        if (o.partition >= 0 && id != o.partition) {
            continue;
        }
        parts[n].topic = o.topic;
        parts[n].partition = id;
        parts[n].offset = by_time ? SAMSA_OFFSET_END : start;
        if (relative > 0) {
            int64_t low = 0;
            int64_t high = 0;
            e = samsa_admin_watermarks(a, o.topic, id, &low, &high, left_ms(&o));
            if (e != SAMSA_OK) {
                char why[128];
                fprintf(stderr, "samsa consume: %s [%d]: offsets not read: %s\n", o.topic, id,
                        failure(&o, e, NULL, why, sizeof(why)));
                rc = EXIT_FAIL;
            }
            parts[n].offset = high - relative > low ? high - relative : low;
        }
        n++;
    }
    samsa_admin_destroy(a);
    samsa_metadata_free(md);
    if (parts == NULL || n == 0 || rc != 0) {
        if (rc == 0) {
            fprintf(stderr, "samsa consume: topic %s has no partition %d\n", o.topic,
                    o.partition);
        }
        free(parts);
        samsa_conf_destroy(conf);
        return EXIT_FAIL;
    }
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (c == NULL) {
        fprintf(stderr, "samsa consume: %s\n", err);
        free(parts);
        return EXIT_USAGE;
    }
    e = samsa_consumer_assign(c, parts, n);
    for (size_t i = 0; e == SAMSA_OK && by_time && i < n; i++) {
        e = samsa_consumer_seek_timestamp(c, o.topic, parts[i].partition, start, left_ms(&o));
    }
    struct until u = {.n = n};
    if (o.until_ms >= 0) {
        u.ids = calloc(n, sizeof(*u.ids));
        u.done = calloc(n, sizeof(*u.done));
        if (u.ids == NULL || u.done == NULL) {
            e = SAMSA_ERR_NOMEM;
        }
        for (size_t i = 0; u.ids != NULL && i < n; i++) {
            u.ids[i] = parts[i].partition;
        }
    }
    free(parts);
    if (e != SAMSA_OK) {
        fprintf(stderr, "samsa consume: %s\n", samsa_err_str(e));
        samsa_consumer_destroy(c);
        free(u.ids);
        free(u.done);
        return EXIT_FAIL;
    }
    rc = consume_loop(c, &o, o.until_ms >= 0 ? &u : NULL);
    free(u.ids);
    free(u.done);
    return rc;
}
