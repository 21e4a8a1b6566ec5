/*
 * samsa: the command-line tool, on libsamsa's public API only.
 *
 *   samsa topic create|list|describe|delete ...
 *   samsa produce -b B -t T [-p P] [-K DELIM] [-X key=value]...
 *   samsa consume -b B -t T [-p P] [--from beginning|end|OFFSET|@MS] [--count N] [-e] [-f FMT]
 *   samsa cluster info -b B
 *
 * Exit codes: 0 success; 1 the operation failed (broker said no, timeout,
 * records not delivered); 2 usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samsa/samsa.h>

#define EXIT_FAIL 1
#define EXIT_USAGE 2

struct opts {
    const char *brokers;
    const char *topic;
    int32_t partition;
    const char *key_delim;
    const char *format;
    const char *from;
    long long count;
    bool exit_at_end;
    bool json;
    int32_t partitions;
    int16_t replication;
    const char *configs[64];
    size_t config_count;
    const char *props[64];
    size_t prop_count;
    int timeout_ms;
    const char *positional[8];
    int npos;
    bool help;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static bool parse_ll(const char *s, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (s[0] == '\0' || errno != 0 || *end != '\0') {
        return false;
    }
    *out = v;
    return true;
}

__attribute__((format(printf, 2, 3))) static int usage_error(const char *cmd,
                                                            const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "samsa %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (try: samsa %s --help)\n", cmd);
    return EXIT_USAGE;
}

/* Parses the flags every command shares; returns 0 or EXIT_USAGE. */
static int parse(const char *cmd, int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof(*o));
    o->partition = -1;
    o->count = -1;
    o->partitions = -1;
    o->replication = -1;
    o->timeout_ms = 30000;
    o->brokers = getenv("SAMSA_BROKERS");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long n;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = true;
        } else if (strcmp(a, "-e") == 0 || strcmp(a, "--exit") == 0) {
            o->exit_at_end = true;
        } else if (strcmp(a, "--json") == 0 || strcmp(a, "-J") == 0) {
            o->json = true;
        } else if (a[0] == '-' && a[1] != '\0' && v == NULL) {
            return usage_error(cmd, "%s needs a value", a);
        } else if (strcmp(a, "-b") == 0 || strcmp(a, "--brokers") == 0) {
            o->brokers = v;
            i++;
        } else if (strcmp(a, "-t") == 0 || strcmp(a, "--topic") == 0) {
            o->topic = v;
            i++;
        } else if (strcmp(a, "-p") == 0 || strcmp(a, "--partition") == 0) {
            if (!parse_ll(v, &n) || n < -1 || n > INT32_MAX) {
                return usage_error(cmd, "bad partition \"%s\"", v);
            }
            o->partition = (int32_t)n;
            i++;
        } else if (strcmp(a, "-K") == 0 || strcmp(a, "--key-delimiter") == 0) {
            if (v[0] == '\0') {
                return usage_error(cmd, "%s", "empty key delimiter");
            }
            o->key_delim = v;
            i++;
        } else if (strcmp(a, "-f") == 0 || strcmp(a, "--format") == 0) {
            o->format = v;
            i++;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--from") == 0) {
            o->from = v;
            i++;
        } else if (strcmp(a, "-c") == 0 || strcmp(a, "--count") == 0) {
            if (!parse_ll(v, &n) || n < 0) {
                return usage_error(cmd, "bad count \"%s\"", v);
            }
            o->count = n;
            i++;
        } else if (strcmp(a, "--partitions") == 0) {
            if (!parse_ll(v, &n) || n < 1 || n > 1000000) {
                return usage_error(cmd, "bad partition count \"%s\"", v);
            }
            o->partitions = (int32_t)n;
            i++;
        } else if (strcmp(a, "--replication-factor") == 0 || strcmp(a, "-r") == 0) {
            if (!parse_ll(v, &n) || n < 1 || n > 32767) {
                return usage_error(cmd, "bad replication factor \"%s\"", v);
            }
            o->replication = (int16_t)n;
            i++;
        } else if (strcmp(a, "--config") == 0) {
            if (o->config_count == 64) {
                return usage_error(cmd, "%s", "too many --config");
            }
            o->configs[o->config_count++] = v;
            i++;
        } else if (strcmp(a, "-X") == 0) {
            if (o->prop_count == 64 || strchr(v, '=') == NULL) {
                return usage_error(cmd, "-X wants key=value, got \"%s\"", v);
            }
            o->props[o->prop_count++] = v;
            i++;
        } else if (strcmp(a, "--timeout") == 0) {
            if (!parse_ll(v, &n) || n < 1 || n > 86400000) {
                return usage_error(cmd, "bad timeout \"%s\" (milliseconds)", v);
            }
            o->timeout_ms = (int)n;
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error(cmd, "unknown option %s", a);
        } else {
            if (o->npos == 8) {
                return usage_error(cmd, "%s", "too many arguments");
            }
            o->positional[o->npos++] = a;
        }
    }
    return 0;
}

/* A configuration with -b and every -X applied; NULL after printing why. */
static samsa_conf *make_conf(const char *cmd, const struct opts *o)
{
    if (o->brokers == NULL) {
        fprintf(stderr, "samsa %s: -b BROKERS is required (or set SAMSA_BROKERS)\n", cmd);
        return NULL;
    }
    samsa_conf *conf = samsa_conf_new();
    if (conf == NULL) {
        fprintf(stderr, "samsa %s: out of memory\n", cmd);
        return NULL;
    }
    char err[512];
    if (samsa_conf_set(conf, "bootstrap.servers", o->brokers, err, sizeof(err)) != SAMSA_OK) {
        fprintf(stderr, "samsa %s: %s\n", cmd, err);
        samsa_conf_destroy(conf);
        return NULL;
    }
    for (size_t i = 0; i < o->prop_count; i++) {
        char key[256];
        const char *eq = strchr(o->props[i], '=');
        size_t kl = (size_t)(eq - o->props[i]);
        if (kl >= sizeof(key)) {
            kl = sizeof(key) - 1;
        }
        memcpy(key, o->props[i], kl);
        key[kl] = '\0';
        if (samsa_conf_set(conf, key, eq + 1, err, sizeof(err)) != SAMSA_OK) {
            fprintf(stderr, "samsa %s: -X %s: %s\n", cmd, o->props[i], err);
            samsa_conf_destroy(conf);
            return NULL;
        }
    }
    return conf;
}

static void json_str(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            fputc('\\', f);
            fputc(ch, f);
        } else if (ch < 0x20) {
            fprintf(f, "\\u%04x", ch);
        } else {
            fputc(ch, f);
        }
    }
    fputc('"', f);
}

/* ------------------------------------------------------------------ topic */

static const char topic_help[] =
    "usage: samsa topic create -b BROKERS NAME [--partitions N] [--replication-factor R]\n"
    "                          [--config key=value]...\n"
    "       samsa topic list -b BROKERS [--json]\n"
    "       samsa topic describe -b BROKERS NAME... [--json]\n"
    "       samsa topic delete -b BROKERS NAME\n"
    "Common: -X key=value (client configuration), --timeout MS (default 30000).\n"
    "Exit status: 0 done, 1 the broker refused or timed out, 2 usage error.\n";

static void print_ids(const int32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        printf("%s%d", i == 0 ? "" : ",", ids[i]);
    }
}

static void json_ids(const int32_t *ids, size_t n)
{
    putchar('[');
    print_ids(ids, n);
    putchar(']');
}

static int topic_describe(samsa_admin *a, const struct opts *o, const char *const *names,
                          size_t count, bool list_only)
{
    samsa_metadata *md = NULL;
    int err = samsa_admin_metadata(a, names, count, o->timeout_ms, &md);
    if (err != SAMSA_OK) {
        fprintf(stderr, "samsa topic: metadata: %s\n", samsa_err_str(err));
        return EXIT_FAIL;
    }
    int rc = 0;
    if (o->json) {
        printf("[");
    }
    for (size_t i = 0; i < md->topic_count; i++) {
        const struct samsa_topic_info *t = &md->topics[i];
        if (t->err != 0) {
            fprintf(stderr, "samsa topic: %s: %s\n", t->name, samsa_err_str(t->err));
            rc = EXIT_FAIL;
            continue;
        }
        if (list_only && !o->json) {
            printf("%s\n", t->name);
            continue;
        }
        size_t rf = t->partition_count > 0 ? t->partitions[0].replica_count : 0;
        if (o->json) {
            printf("%s{\"name\":", i == 0 ? "" : ",");
            json_str(stdout, t->name, strlen(t->name));
            printf(",\"partitions\":%zu,\"replication_factor\":%zu,\"internal\":%s", t->partition_count,
                   rf, t->internal ? "true" : "false");
            if (!list_only) {
                printf(",\"partition_info\":[");
                for (size_t j = 0; j < t->partition_count; j++) {
                    const struct samsa_partition_info *p = &t->partitions[j];
                    printf("%s{\"partition\":%d,\"leader\":%d,\"replicas\":", j == 0 ? "" : ",",
                           p->id, p->leader);
                    json_ids(p->replicas, p->replica_count);
                    printf(",\"isr\":");
                    json_ids(p->isrs, p->isr_count);
                    printf(",\"error\":\"%s\"}", samsa_err_name(p->err));
                }
                printf("]");
            }
            printf("}");
            continue;
        }
        printf("Topic: %s\tPartitionCount: %zu\tReplicationFactor: %zu\n", t->name,
               t->partition_count, rf);
        for (size_t j = 0; j < t->partition_count; j++) {
            const struct samsa_partition_info *p = &t->partitions[j];
            printf("\tTopic: %s\tPartition: %d\tLeader: ", t->name, p->id);
            if (p->leader >= 0) {
                printf("%d", p->leader);
            } else {
                printf("none");
            }
            printf("\tReplicas: ");
            print_ids(p->replicas, p->replica_count);
            printf("\tIsr: ");
            print_ids(p->isrs, p->isr_count);
            printf("\n");
        }
    }
    if (o->json) {
        printf("]\n");
    }
    samsa_metadata_free(md);
    return rc;
}

static int cmd_topic(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(topic_help, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : 0;
    }
    const char *verb = argv[0];
    struct opts o;
    int rc = parse("topic", argc - 1, argv + 1, &o);
    if (rc != 0) {
        return rc;
    }
    if (o.help) {
        fputs(topic_help, stdout);
        return 0;
    }
    bool create = strcmp(verb, "create") == 0;
    bool del = strcmp(verb, "delete") == 0;
    bool list = strcmp(verb, "list") == 0;
    bool describe = strcmp(verb, "describe") == 0;
    if (!create && !del && !list && !describe) {
        return usage_error("topic", "unknown command \"%s\"", verb);
    }
    if ((create || del) && o.npos != 1) {
        return usage_error("topic", "%s wants one topic NAME", verb);
    }
    if (o.topic != NULL && o.npos < 8) {
        o.positional[o.npos++] = o.topic;
    }
    samsa_conf *conf = make_conf("topic", &o);
    if (conf == NULL) {
        return EXIT_USAGE;
    }
    char err[512];
    samsa_admin *a = samsa_admin_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (a == NULL) {
        fprintf(stderr, "samsa topic: %s\n", err);
        return EXIT_USAGE;
    }
    if (create) {
        struct samsa_new_topic t = {
            .name = o.positional[0],
            .partitions = o.partitions,
            .replication_factor = o.replication,
            .config = o.configs,
            .config_count = o.config_count,
        };
        int e = samsa_admin_create_topic(a, &t, o.timeout_ms, err, sizeof(err));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa topic create %s: %s\n", t.name, err);
            rc = EXIT_FAIL;
        } else {
            printf("Created topic %s.\n", t.name);
        }
    } else if (del) {
        int e = samsa_admin_delete_topic(a, o.positional[0], o.timeout_ms, err, sizeof(err));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa topic delete %s: %s\n", o.positional[0], err);
            rc = EXIT_FAIL;
        } else {
            printf("Deleted topic %s.\n", o.positional[0]);
        }
    } else {
        rc = topic_describe(a, &o, o.npos > 0 ? o.positional : NULL, (size_t)o.npos, list);
    }
    samsa_admin_close(a);
    return rc;
}

/* ---------------------------------------------------------------- cluster */

static const char cluster_help[] =
    "usage: samsa cluster info -b BROKERS [--json]\n"
    "Prints the cluster id, the controller and every broker.\n";

static int cmd_cluster(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(cluster_help, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : 0;
    }
    if (strcmp(argv[0], "info") != 0) {
        return usage_error("cluster", "unknown command \"%s\"", argv[0]);
    }
    struct opts o;
    int rc = parse("cluster", argc - 1, argv + 1, &o);
    if (rc != 0) {
        return rc;
    }
    if (o.help) {
        fputs(cluster_help, stdout);
        return 0;
    }
    samsa_conf *conf = make_conf("cluster", &o);
    if (conf == NULL) {
        return EXIT_USAGE;
    }
    char err[512];
    samsa_admin *a = samsa_admin_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (a == NULL) {
        fprintf(stderr, "samsa cluster: %s\n", err);
        return EXIT_USAGE;
    }
    static const char *const none[1] = {NULL};
    samsa_metadata *md = NULL;
    int e = samsa_admin_metadata(a, none, 0, o.timeout_ms, &md);
    if (e != SAMSA_OK) {
        fprintf(stderr, "samsa cluster info: %s\n", samsa_err_str(e));
        samsa_admin_close(a);
        return EXIT_FAIL;
    }
    if (o.json) {
        printf("{\"cluster_id\":");
        if (md->cluster_id != NULL) {
            json_str(stdout, md->cluster_id, strlen(md->cluster_id));
        } else {
            printf("null");
        }
        printf(",\"controller\":%d,\"brokers\":[", md->controller_id);
        for (size_t i = 0; i < md->broker_count; i++) {
            printf("%s{\"id\":%d,\"host\":", i == 0 ? "" : ",", md->brokers[i].id);
            json_str(stdout, md->brokers[i].host, strlen(md->brokers[i].host));
            printf(",\"port\":%d}", md->brokers[i].port);
        }
        printf("]}\n");
    } else {
        printf("CLUSTER-ID: %s\nCONTROLLER: %d\n\nID    HOST:PORT\n",
               md->cluster_id != NULL ? md->cluster_id : "-", md->controller_id);
        for (size_t i = 0; i < md->broker_count; i++) {
            printf("%-5d %s:%d%s\n", md->brokers[i].id, md->brokers[i].host, md->brokers[i].port,
                   md->brokers[i].id == md->controller_id ? " (controller)" : "");
        }
    }
    samsa_metadata_free(md);
    samsa_admin_close(a);
    return 0;
}

/* ---------------------------------------------------------------- produce */

static const char produce_help[] =
    "usage: samsa produce -b BROKERS -t TOPIC [-p PARTITION] [-K DELIM] [-X key=value]...\n"
    "Sends each line of standard input as one record. With -K, the text before the\n"
    "first DELIM is the key. Without -p the partitioner places records (keys as the\n"
    "Java client does). Waits for every delivery report; prints a summary on stderr.\n"
    "Exit status: 0 all delivered, 1 some were not, 2 usage error.\n";

struct produce_state {
    long long delivered;
    long long failed;
    int first_err;
};

static void on_delivery(const struct samsa_delivery *d, void *opaque)
{
    struct produce_state *st = opaque;
    if (d->err == SAMSA_OK) {
        st->delivered++;
    } else {
        if (st->failed == 0) {
            st->first_err = d->err;
            fprintf(stderr, "samsa produce: %s [%d]: %s\n", d->topic, d->partition,
                    samsa_err_str(d->err));
        }
        st->failed++;
    }
}

static int cmd_produce(int argc, char **argv)
{
    struct opts o;
    int rc = parse("produce", argc, argv, &o);
    if (rc != 0) {
        return rc;
    }
    if (o.help) {
        fputs(produce_help, stdout);
        return 0;
    }
    if (o.topic == NULL) {
        return usage_error("produce", "%s", "-t TOPIC is required");
    }
    samsa_conf *conf = make_conf("produce", &o);
    if (conf == NULL) {
        return EXIT_USAGE;
    }
    struct produce_state st = {0, 0, 0};
    samsa_conf_set_delivery_cb(conf, on_delivery, &st);
    char err[512];
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (p == NULL) {
        fprintf(stderr, "samsa produce: %s\n", err);
        return EXIT_USAGE;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long long sent = 0;
    size_t dl = o.key_delim != NULL ? strlen(o.key_delim) : 0;
    while (!stop && (len = getline(&line, &cap, stdin)) >= 0) {
        if (len > 0 && line[len - 1] == '\n') {
            len--;
        }
        struct samsa_record r = {.topic = o.topic, .partition = o.partition};
        r.value = line;
        r.value_len = (size_t)len;
        if (o.key_delim != NULL) {
            char *d = memmem(line, (size_t)len, o.key_delim, dl);
            if (d != NULL) {
                r.key = line;
                r.key_len = (size_t)(d - line);
                r.value = d + dl;
                r.value_len = (size_t)len - r.key_len - dl;
            }
        }
        for (;;) {
            int e = samsa_produce(p, &r);
            if (e == SAMSA_ERR_QUEUE_FULL) {
                (void)samsa_producer_poll(p, 100);
                continue;
            }
            if (e != SAMSA_OK) {
                fprintf(stderr, "samsa produce: record %lld: %s\n", sent + 1, samsa_err_str(e));
                st.failed++;
            } else {
                sent++;
            }
            break;
        }
        (void)samsa_producer_poll(p, 0);
    }
    free(line);
    int fe = samsa_producer_flush(p, o.timeout_ms);
    if (fe != SAMSA_OK) {
        fprintf(stderr, "samsa produce: %zu records not delivered within %d ms\n",
                samsa_producer_outq_len(p), o.timeout_ms);
    }
    size_t lost = samsa_producer_close(p, 0);
    fprintf(stderr, "samsa produce: %lld delivered, %lld failed\n", st.delivered,
            st.failed + (long long)(fe != SAMSA_OK ? 0 : 0));
    return st.failed > 0 || lost > 0 || fe != SAMSA_OK ? EXIT_FAIL : 0;
}

/* ---------------------------------------------------------------- consume */

static const char consume_help[] =
    "usage: samsa consume -b BROKERS -t TOPIC [-p PARTITION] [--from beginning|end|OFFSET|@MS]\n"
    "                     [--count N] [-e] [-f FORMAT] [-K DELIM] [--json] [-X key=value]...\n"
    "Reads every partition of TOPIC (or only -p) from --from (default end), printing each\n"
    "record's value and a newline. -e exits once every partition is at its end;\n"
    "--count N after N records. -K DELIM prints key DELIM value. -f FORMAT as kcat:\n"
    "%s value, %k key, %t topic, %p partition, %o offset, %T timestamp, %S value length,\n"
    "%K key length, \\n, \\t, %%. --json prints one JSON object per record.\n"
    "Exit status: 0 done, 1 an error stopped it, 2 usage error.\n";

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

static int cmd_consume(int argc, char **argv)
{
    struct opts o;
    int rc = parse("consume", argc, argv, &o);
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
        } else {
            return usage_error("consume", "bad --from \"%s\" (beginning, end, OFFSET or @MS)",
                               o.from);
        }
    }
    samsa_conf *conf = make_conf("consume", &o);
    if (conf == NULL) {
        return EXIT_USAGE;
    }
    char err[512];
    samsa_admin *a = samsa_admin_new(conf, err, sizeof(err));
    if (a == NULL) {
        fprintf(stderr, "samsa consume: %s\n", err);
        samsa_conf_destroy(conf);
        return EXIT_USAGE;
    }
    const char *names[1] = {o.topic};
    samsa_metadata *md = NULL;
    int e = samsa_admin_metadata(a, names, 1, o.timeout_ms, &md);
    samsa_admin_close(a);
    if (e != SAMSA_OK || md->topic_count != 1 || md->topics[0].err != 0) {
        fprintf(stderr, "samsa consume: topic %s: %s\n", o.topic,
                samsa_err_str(e != SAMSA_OK ? e
                                            : (md->topic_count == 1 ? md->topics[0].err
                                                                    : SAMSA_ERR_UNKNOWN_TOPIC)));
        samsa_metadata_free(md);
        samsa_conf_destroy(conf);
        return EXIT_FAIL;
    }
    size_t nparts = md->topics[0].partition_count;
    struct samsa_partition *parts = calloc(nparts > 0 ? nparts : 1, sizeof(*parts));
    size_t n = 0;
    for (size_t i = 0; parts != NULL && i < nparts; i++) {
        int32_t id = md->topics[0].partitions[i].id;
        if (o.partition >= 0 && id != o.partition) {
            continue;
        }
        parts[n].topic = o.topic;
        parts[n].partition = id;
        parts[n].offset = by_time ? SAMSA_OFFSET_END : start;
        n++;
    }
    samsa_metadata_free(md);
    if (parts == NULL || n == 0) {
        fprintf(stderr, "samsa consume: topic %s has no partition %d\n", o.topic, o.partition);
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
        e = samsa_consumer_seek_timestamp(c, o.topic, parts[i].partition, start, o.timeout_ms);
    }
    free(parts);
    if (e != SAMSA_OK) {
        fprintf(stderr, "samsa consume: %s\n", samsa_err_str(e));
        samsa_consumer_close(c);
        return EXIT_FAIL;
    }
    long long got = 0;
    while (!stop && (o.count < 0 || got < o.count)) {
        samsa_message *m = samsa_consumer_poll(c, 100);
        if (m == NULL) {
            if (o.exit_at_end && samsa_consumer_at_end(c)) {
                break;
            }
            continue;
        }
        got++;
        if (o.json) {
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
            printf("}\n");
        } else if (o.format != NULL) {
            print_fmt(o.format, m);
        } else {
            if (o.key_delim != NULL) {
                if (m->key != NULL) {
                    fwrite(m->key, 1, m->key_len, stdout);
                }
                fputs(o.key_delim, stdout);
            }
            if (m->value != NULL) {
                fwrite(m->value, 1, m->value_len, stdout);
            }
            putchar('\n');
        }
        samsa_message_free(m);
    }
    fflush(stdout);
    samsa_consumer_close(c);
    return 0;
}

/* ------------------------------------------------------------------- main */

static const char main_help[] =
    "usage: samsa COMMAND [ARGS]\n"
    "Commands:\n"
    "  topic create|list|describe|delete   manage topics\n"
    "  produce                             send standard input's lines as records\n"
    "  consume                             print records of a topic\n"
    "  cluster info                        brokers and controller\n"
    "Every command takes -b BROKERS (or $SAMSA_BROKERS), -X key=value and --help.\n"
    "Exit status: 0 success, 1 the operation failed, 2 usage error.\n";

int main(int argc, char **argv)
{
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        fputs(main_help, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(main_help, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("samsa %s\n", samsa_version());
        return 0;
    }
    if (strcmp(cmd, "topic") == 0) {
        return cmd_topic(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "produce") == 0) {
        return cmd_produce(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "consume") == 0) {
        return cmd_consume(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "cluster") == 0) {
        return cmd_cluster(argc - 2, argv + 2);
    }
    fprintf(stderr, "samsa: unknown command \"%s\"\n%s", cmd, main_help);
    return EXIT_USAGE;
}
