/*
 * samsa tool: the flags every command shares (parse_opts), the client
 * properties of the config files, the command's deadline, each verb's
 * --help, and SIGINT/SIGTERM.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

volatile sig_atomic_t interrupted;

int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What is left of the command's --timeout, for the next library call: 0 once
 * it has run out (the call then fails at once with SAMSA_ERR_TIMED_OUT),
 * never negative (which the library takes as "no limit"). */
int left_ms(const struct opts *o)
{
    int64_t left = o->deadline_ms - mono_ms();
    return left > 0 ? (int)left : 0;
}

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

void catch_signals(void)
{
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
}

bool parse_ll(const char *s, long long *out)
{
    char *end = NULL;
    if (s == NULL) {
        return false;
    }
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (s[0] == '\0' || errno != 0 || *end != '\0') {
        return false;
    }
    *out = v;
    return true;
}

/* The next `width` characters of *p as a decimal number, *p moved past them;
 * false when one is not a digit. */
static bool digits(const char **p, int width, int *out)
{
    int v = 0;
    for (int i = 0; i < width; i++) {
        char ch = (*p)[i];
        if (ch < '0' || ch > '9') {
            return false;
        }
        v = v * 10 + (ch - '0');
    }
    *p += width;
    *out = v;
    return true;
}

/*
 * A date and time as kafka-consumer-groups.sh's --to-datetime takes it
 * (YYYY-MM-DDTHH:mm:SS.sss, then Z, +HH:mm, +HHmm or +HH, UTC when no zone
 * is given: Kafka 2.0's ConsumerGroupCommand.convertTimestamp), the
 * milliseconds optional here, as milliseconds since the epoch.
 */
static bool parse_datetime(const char *s, long long *ms)
{
    int year;
    int mon;
    int day;
    int hour;
    int min;
    int sec;
    int milli = 0;
    const char *p = s;
    if (s == NULL) {
        return false;
    }
    if (!digits(&p, 4, &year) || *p++ != '-' || !digits(&p, 2, &mon) || *p++ != '-' ||
        !digits(&p, 2, &day) || *p++ != 'T' || !digits(&p, 2, &hour) || *p++ != ':' ||
        !digits(&p, 2, &min) || *p++ != ':' || !digits(&p, 2, &sec)) {
        return false;
    }
    if (*p == '.') {
        p++;
        if (!digits(&p, 3, &milli)) {
            return false;
        }
    }
    int offset_min = 0; /* the zone's offset east of UTC */
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int zh;
        int zm = 0;
        if (!digits(&p, 2, &zh)) {
            return false;
        }
        if (*p == ':') {
            p++;
        }
        if (*p != '\0' && !digits(&p, 2, &zm)) {
            return false;
        }
        offset_min = sign * (zh * 60 + zm);
    }
    if (*p != '\0' || mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 ||
        sec > 60) {
        return false;
    }
    struct tm tm = {.tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = day,
                    .tm_hour = hour, .tm_min = min, .tm_sec = sec};
    time_t t = timegm(&tm);
    if (t == (time_t)-1 || t < 0) {
        return false;
    }
    *ms = ((long long)t - (long long)offset_min * 60) * 1000 + milli;
    return true;
}

__attribute__((format(printf, 2, 3))) int usage_error(const char *cmd,
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

/*
 * One properties file (Java's format, as kafka's --command-config reads it:
 * key=value, key: value or key value, a line starting with # or ! a
 * comment; no line continuations) appended to o->file_props. 0, or
 * EXIT_USAGE after saying what is wrong and where.
 */
static int load_properties(const char *cmd, struct opts *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "samsa %s: %s: %s\n", cmd, path, strerror(errno));
        return EXIT_USAGE;
    }
    /* the file's name first: its properties point at it */
    size_t plen = strlen(path) + 1;
    if (FILE_TEXT_MAX - o->file_text_len < plen) {
        fclose(f);
        fprintf(stderr, "samsa %s: %s: config files above %d bytes\n", cmd, path, FILE_TEXT_MAX);
        return EXIT_USAGE;
    }
    char *name = o->file_text + o->file_text_len;
    memcpy(name, path, plen);
    o->file_text_len += plen;
    size_t start = o->file_text_len;
    size_t n = fread(o->file_text + start, 1, FILE_TEXT_MAX - start - 1, f);
    bool more = fgetc(f) != EOF;
    fclose(f);
    if (more) {
        fprintf(stderr, "samsa %s: %s: config files above %d bytes\n", cmd, path, FILE_TEXT_MAX);
        return EXIT_USAGE;
    }
    o->file_text[start + n] = '\0';
    o->file_text_len = start + n + 1;
    int line = 0;
    for (char *p = o->file_text + start; p != NULL && *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        line++;
        char *l = p;
        p = nl != NULL ? nl + 1 : NULL;
        l += strspn(l, " \t\r\f");
        size_t end = strlen(l);
        while (end > 0 && strchr(" \t\r\f", l[end - 1]) != NULL) {
            l[--end] = '\0';
        }
        if (l[0] == '\0' || l[0] == '#' || l[0] == '!') {
            continue;
        }
        size_t kl = strcspn(l, "=: \t\f");
        char *v = l + kl;
        v += strspn(v, " \t\f");
        if (*v == '=' || *v == ':') {
            v++;
            v += strspn(v, " \t\f");
        }
        l[kl] = '\0';
        if (kl == 0 || o->file_prop_count == FILE_PROPS_MAX) {
            fprintf(stderr, "samsa %s: %s:%d: %s\n", cmd, path, line,
                    kl == 0 ? "a property without a name" : "too many properties");
            return EXIT_USAGE;
        }
        o->file_props[o->file_prop_count++] = (struct file_prop){l, v, name, line};
    }
    return 0;
}

/* The config file ($XDG_CONFIG_HOME/samsa/config, else ~/.config/samsa/config,
 * when it exists), then --command-config FILE: client properties applied
 * before -b and -X, which override them. 0 or EXIT_USAGE. */
static int load_config_files(const char *cmd, struct opts *o)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    o->default_config[0] = '\0';
    if (xdg != NULL && xdg[0] == '/') {
        snprintf(o->default_config, sizeof(o->default_config), "%s/samsa/config", xdg);
    } else if (home != NULL && home[0] != '\0') {
        snprintf(o->default_config, sizeof(o->default_config), "%s/.config/samsa/config", home);
    }
    if (o->default_config[0] != '\0' && access(o->default_config, F_OK) == 0) {
        int rc = load_properties(cmd, o, o->default_config);
        if (rc != 0) {
            return rc;
        }
    }
    return o->command_config != NULL ? load_properties(cmd, o, o->command_config) : 0;
}

size_t config_ops(const struct opts *o, struct samsa_config_op *ops, char (*keys)[256])
{
    for (size_t i = 0; i < o->config_count; i++) {
        const char *eq = strchr(o->configs[i], '=');
        size_t kl = eq != NULL ? (size_t)(eq - o->configs[i]) : strlen(o->configs[i]);
        if (kl >= 256) {
            kl = 255;
        }
        memcpy(keys[i], o->configs[i], kl);
        keys[i][kl] = '\0';
        ops[i].name = keys[i];
        ops[i].value = eq != NULL ? eq + 1 : "";
    }
    for (size_t i = 0; i < o->delete_config_count; i++) {
        ops[o->config_count + i].name = o->delete_configs[i];
        ops[o->config_count + i].value = NULL;
    }
    return o->config_count + o->delete_config_count;
}

/* Parses the flags every command shares; returns 0 or EXIT_USAGE. */
int parse_opts(const char *cmd, int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof(*o));
    o->partition = -1;
    o->count = -1;
    o->partitions = -1;
    o->replication = -1;
    o->timeout_ms = 30000;
    o->size = 100;
    o->interval_ms = 1000;
    o->time_ms = -1;
    o->until_ms = -1;
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
        } else if (strcmp(a, "--execute") == 0) {
            o->execute = true;
        } else if (strcmp(a, "--dry-run") == 0) {
            o->execute = false;
        } else if (strcmp(a, "--state") == 0) {
            o->state = true;
        } else if (strcmp(a, "--members") == 0) {
            o->members = true;
        } else if (strcmp(a, "--offsets") == 0) {
            o->members = false; /* the default view */
            o->state = false;
        } else if (strcmp(a, "--all") == 0) {
            o->all = true;
        } else if (strcmp(a, "--all-groups") == 0) {
            o->all_groups = true;
        } else if (strcmp(a, "--all-topics") == 0) {
            o->all_topics = true;
        } else if (strcmp(a, "--under-replicated-partitions") == 0) {
            o->under_replicated = true;
        } else if (strcmp(a, "--unavailable-partitions") == 0) {
            o->unavailable = true;
        } else if (strcmp(a, "--under-min-isr-partitions") == 0) {
            o->under_min_isr = true;
        } else if (strcmp(a, "--to-earliest") == 0 || strcmp(a, "--to-latest") == 0) {
            if (o->reset_mode != RESET_NONE) {
                return usage_error(cmd, "%s", "one --to-... or --shift-by only");
            }
            o->reset_mode = a[5] == 'e' ? RESET_EARLIEST : RESET_LATEST;
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
            if (v == NULL || v[0] == '\0') {
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
        } else if (strcmp(a, "--config") == 0 || strcmp(a, "--add-config") == 0) {
            if (o->config_count == 64) {
                return usage_error(cmd, "%s", "too many --config");
            }
            o->configs[o->config_count++] = v;
            i++;
        } else if (strcmp(a, "-X") == 0) {
            if (o->prop_count == 64 || v == NULL || strchr(v, '=') == NULL) {
                return usage_error(cmd, "-X wants key=value, got \"%s\"", v);
            }
            o->props[o->prop_count++] = v;
            i++;
        } else if (strcmp(a, "-H") == 0 || strcmp(a, "--header") == 0) {
            if (o->header_count == 64 || v == NULL || strchr(v, '=') == NULL || v[0] == '=') {
                return usage_error(cmd, "-H wants name=value, got \"%s\"", v);
            }
            o->headers[o->header_count++] = v;
            i++;
        } else if (strcmp(a, "--delete-config") == 0) {
            if (o->delete_config_count == 64 || v == NULL || v[0] == '\0') {
                return usage_error(cmd, "bad --delete-config \"%s\"", v);
            }
            o->delete_configs[o->delete_config_count++] = v;
            i++;
        } else if (strcmp(a, "--transactional-id") == 0) {
            if (v == NULL || v[0] == '\0') {
                return usage_error(cmd, "%s", "empty transactional id");
            }
            o->transactional_id = v;
            i++;
        } else if (strcmp(a, "-G") == 0 || strcmp(a, "--group") == 0) {
            if (v == NULL || v[0] == '\0') {
                return usage_error(cmd, "%s", "empty group name");
            }
            o->group = v;
            i++;
        } else if (strcmp(a, "--to-offset") == 0 || strcmp(a, "--shift-by") == 0 ||
                   strcmp(a, "--to-datetime") == 0) {
            bool shift = strcmp(a, "--shift-by") == 0;
            if (o->reset_mode != RESET_NONE) {
                return usage_error(cmd, "%s", "one --to-... or --shift-by only");
            }
            bool datetime = strcmp(a, "--to-datetime") == 0;
            if (!(parse_ll(v, &n) || (datetime && parse_datetime(v, &n))) || (!shift && n < 0)) {
                return usage_error(cmd, "bad %s \"%s\"%s", a, v,
                                   datetime ? " (YYYY-MM-DDTHH:mm:SS.sss[Z|+HH:mm], or "
                                              "milliseconds since the epoch)"
                                            : "");
            }
            o->reset_mode = shift ? RESET_SHIFT : datetime ? RESET_DATETIME : RESET_OFFSET;
            o->reset_value = n;
            i++;
        } else if (strcmp(a, "--zookeeper") == 0) {
            o->zookeeper = v;
            i++;
        } else if (strcmp(a, "--command-config") == 0 || strcmp(a, "-F") == 0) {
            /* -F as kcat spells it */
            o->command_config = v;
            i++;
        } else if (strcmp(a, "--broker") == 0) {
            if (!parse_ll(v, &n) || n < 0 || n > INT32_MAX) {
                return usage_error(cmd, "bad --broker \"%s\" (a broker id)", v);
            }
            o->broker_id = v;
            i++;
        } else if (strcmp(a, "--until") == 0) {
            if (v == NULL || !parse_ll(v[0] == '@' ? v + 1 : v, &n) || n < 0) {
                return usage_error(cmd, "bad --until \"%s\" (@MS since the epoch)", v);
            }
            o->until_ms = n;
            i++;
        } else if (strcmp(a, "--time") == 0) {
            if (!parse_ll(v, &n) || n < 0) {
                return usage_error(cmd, "bad --time \"%s\" (milliseconds since the epoch)", v);
            }
            o->time_ms = n;
            i++;
        } else if (strcmp(a, "--size") == 0) {
            if (!parse_ll(v, &n) || n < 0 || n > 100000000) {
                return usage_error(cmd, "bad --size \"%s\" (bytes)", v);
            }
            o->size = n;
            i++;
        } else if (strcmp(a, "--interval") == 0) {
            if (!parse_ll(v, &n) || n < 10 || n > 3600000) {
                return usage_error(cmd, "bad --interval \"%s\" (milliseconds)", v);
            }
            o->interval_ms = n;
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
    o->deadline_ms = mono_ms() + o->timeout_ms;
    return o->help ? 0 : load_config_files(cmd, o);
}

/* -------------------------------------------------------- verbs' --help */

/* Each verb's own usage, for `samsa COMMAND VERB --help`; the command's
 * help (every verb) for `samsa COMMAND --help`. */
static const struct {
    const char *cmd;
    const char *verb;
    const char *text;
} verb_helps[] = {
    {"topic", "create",
     "usage: samsa topic create -b BROKERS NAME [--partitions N] [--replication-factor R]\n"
     "                          [--config key=value]...\n"
     "Creates topic NAME (CreateTopics on the controller); without --partitions or\n"
     "--replication-factor, the broker's num.partitions and default.replication.factor.\n"},
    {"topic", "list", "usage: samsa topic list -b BROKERS [--json]\nPrints every topic's name.\n"},
    {"topic", "describe",
     "usage: samsa topic describe -b BROKERS [NAME...] [--json] [--under-replicated-partitions]\n"
     "                            [--unavailable-partitions] [--under-min-isr-partitions]\n"
     "Prints each topic (every topic without NAME) as kafka-topics.sh --describe: its\n"
     "partition count, replication factor and own configs, then each partition's leader,\n"
     "replicas and ISR. --under-replicated-partitions lists only the partitions whose ISR\n"
     "is smaller than their replicas, --unavailable-partitions those without a live\n"
     "leader, --under-min-isr-partitions those whose ISR is below the topic's\n"
     "min.insync.replicas (acks=all is refused); together, a partition matching any.\n"
     "Nothing listed: all is well.\n"},
    {"topic", "alter",
     "usage: samsa topic alter -b BROKERS NAME [--partitions N] [--config key=value]...\n"
     "                         [--delete-config key]...\n"
     "Raises the partition count to N (CreatePartitions), sets configs and puts\n"
     "--delete-config ones back to their defaults (the others stay as they are).\n"},
    {"topic", "delete", "usage: samsa topic delete -b BROKERS NAME\nDeletes topic NAME.\n"},
    {"topic", "offsets",
     "usage: samsa topic offsets -b BROKERS NAME... [-p PARTITION] [--time MS] [--json]\n"
     "Prints each partition's EARLIEST and LATEST offsets (log start, high watermark), or\n"
     "with --time MS (since the epoch) the first OFFSET whose timestamp is at or after\n"
     "it (- when none), as kcat -Q and GetOffsetShell --time.\n"},
    {"group", "list", "usage: samsa group list -b BROKERS [--json]\nPrints every group's id.\n"},
    {"group", "describe",
     "usage: samsa group describe -b BROKERS (GROUP... | --all-groups)\n"
     "                            [--offsets | --members | --state] [--json]\n"
     "Prints GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST\n"
     "CLIENT-ID for every partition the group owns or has committed (- when none);\n"
     "--members GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS; --state GROUP\n"
     "COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS. Columns are as wide as their\n"
     "contents; a blank line between groups (a JSON array with several).\n"},
    {"group", "reset-offsets",
     "usage: samsa group reset-offsets -b BROKERS GROUP (-t TOPIC[:P,P...] [-p PARTITION] |\n"
     "                  --all-topics)\n"
     "                  (--to-earliest | --to-latest | --to-offset N | --to-datetime T |\n"
     "                   --shift-by N) [--execute] [--json]\n"
     "Prints GROUP TOPIC PARTITION NEW-OFFSET and changes nothing unless --execute is\n"
     "given; offsets are clamped to the log. --to-datetime T: YYYY-MM-DDTHH:mm:SS.sss\n"
     "(UTC, or with Z, +HH:mm) as kafka-consumer-groups.sh, or milliseconds since the\n"
     "epoch: the first offset at or after it. A group with members is refused, dry run\n"
     "or not. TOPIC:P,P... resets those partitions only, --all-topics every partition\n"
     "the group has committed; GROUP may be --group G.\n"},
    {"group", "delete", "usage: samsa group delete -b BROKERS GROUP\nDeletes an empty group.\n"},
    {"perf", "produce",
     "usage: samsa perf produce -b BROKERS -t TOPIC [--count N] [--size BYTES] [-p PARTITION]\n"
     "                          [--interval MS] [--json] [-X key=value]...\n"
     "Sends N records (default 100000) of BYTES (default 100); prints records/s, MB/s and\n"
     "the delivery latency's percentiles (produce call to delivery report), a progress\n"
     "line on stderr every --interval MS (default 1000).\n"},
    {"perf", "consume",
     "usage: samsa perf consume -b BROKERS -t TOPIC [--count N] [-e] [--group GROUP]\n"
     "                          [--interval MS] [--json] [-X key=value]...\n"
     "Reads N records (default 100000; or to the end with -e) from the beginning; prints\n"
     "records, MB, records/s, MB/s, and the end-to-end latency (now minus the record's\n"
     "timestamp) of the records produced after it started only.\n"},
    {"cluster", "info",
     "usage: samsa cluster info -b BROKERS [--json]\n"
     "Prints the cluster id, the controller and every broker.\n"},
    {"cluster", "metadata",
     "usage: samsa cluster metadata -b BROKERS [-t TOPIC] [--json]\n"
     "Prints the brokers and every topic's partitions (or TOPIC's) with their leader,\n"
     "replicas and ISR, as kcat -L.\n"},
    {"configs", "describe",
     "usage: samsa configs describe -b BROKERS (--broker ID | -t TOPIC) [--all] [--json]\n"
     "Prints the configs that are set (every one with --all) as NAME VALUE SOURCE.\n"},
    {"configs", "alter",
     "usage: samsa configs alter -b BROKERS --broker ID\n"
     "                           (--add-config KEY=VALUE | --delete-config KEY)...\n"
     "Sets or removes broker ID's dynamic configs (/config/brokers/ID, as Kafka 2.0's\n"
     "kafka-configs.sh --alter --entity-type brokers), applied without a restart.\n"},
    {"leaders", "elect-preferred",
     "usage: samsa leaders elect-preferred --zookeeper HOST:PORT[/CHROOT]\n"
     "                                     (-t TOPIC [-p PARTITION] | --all)\n"
     "Writes /admin/preferred_replica_election: the controller makes each partition's\n"
     "preferred replica its leader when it is alive and in sync, then deletes it.\n"},
};

/* Prints VERB's own help when there is one, else the command's; 0. */
int print_help(const char *cmd, const char *verb, const char *all)
{
    for (size_t i = 0; verb != NULL && i < sizeof(verb_helps) / sizeof(verb_helps[0]); i++) {
        if (strcmp(verb_helps[i].cmd, cmd) == 0 && strcmp(verb_helps[i].verb, verb) == 0) {
            fputs(verb_helps[i].text, stdout);
            printf("Common: -X key=value, --command-config FILE (-F FILE), --timeout MS "
                   "(default 30000).\n"
                   "All of `samsa %s`: samsa %s --help.\n", cmd, cmd);
            return 0;
        }
    }
    fputs(all, stdout);
    return 0;
}

/*
 * The start of `samsa CMD VERB [flags]`, verbs[] its VERBs (NULL-ended):
 * without VERB, or with --help in its place, CMD's help (on stderr, and
 * EXIT_USAGE, without VERB); an unknown VERB is a usage error; else VERB's
 * flags are parsed into *o, and with --help VERB's help printed. -1 when
 * the command goes on with *o, else the exit status.
 */
int start_verb(const char *cmd, const char *help, const char *const *verbs, int argc,
               char **argv, struct opts *o)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(help, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : 0;
    }
    size_t i = 0;
    while (verbs[i] != NULL && strcmp(verbs[i], argv[0]) != 0) {
        i++;
    }
    if (verbs[i] == NULL) {
        return usage_error(cmd, "unknown command \"%s\"", argv[0]);
    }
    int rc = parse_opts(cmd, argc - 1, argv + 1, o);
    if (rc != 0) {
        return rc;
    }
    return o->help ? print_help(cmd, argv[0], help) : -1;
}
