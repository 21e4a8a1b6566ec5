/*
 * samsa: the command-line tool, on libsamsa's public API only.
 *
 *   samsa topic create|list|describe|alter|delete ...
 *   samsa produce -b B -t T [-p P] [-K DELIM] [-H name=value]... [-X key=value]...
 *   samsa consume -b B -t T [-p P] [--group G] [--from beginning|end|OFFSET|@MS] [--count N]
 *                 [-e] [-f FMT]
 *   samsa group list|describe|reset-offsets|delete ...
 *   samsa perf produce|consume ...
 *   samsa cluster info -b B
 *
 * Exit codes: 0 success; 1 the operation failed (broker said no, timeout,
 * records not delivered, no such group), or part of the answer could not be
 * read: what was read is printed and stderr names what is missing; 2 usage
 * error.
 *
 * --timeout is one deadline for the whole command, not one per library call:
 * a command that makes several calls gives each what is left of it
 * (left_ms), so it ends within --timeout whatever its calls wait for (give or
 * take the second a library call may wait past its own deadline for the I/O
 * thread to finish it). produce and perf produce, whose input lasts as long
 * as it does, use it for the last delivery reports only.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <samsa/samsa.h>

#define EXIT_FAIL 1
#define EXIT_USAGE 2

/* A client property from a config file: key and value point into the file's
 * text, kept in opts.file_text. */
struct file_prop {
    const char *key;
    const char *value;
    const char *file;
    int line;
};

#define FILE_TEXT_MAX 32768
#define FILE_PROPS_MAX 256

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
    int64_t deadline_ms;         /* mono_ms() at which --timeout runs out */
    const char *positional[8];
    int npos;
    bool help;
    const char *headers[64];     /* -H name=value */
    size_t header_count;
    const char *delete_configs[64];
    size_t delete_config_count;
    const char *group;
    /* group reset-offsets */
    int reset_mode;              /* RESET_* */
    long long reset_value;
    bool execute;
    bool state;
    bool members;    /* group describe --members */
    bool under_replicated; /* topic describe: only partitions with ISR < replicas, */
    bool unavailable;      /* no live leader, */
    bool under_min_isr;    /* ISR < the topic's min.insync.replicas */
    long long time_ms;     /* topic offsets --time MS; -1 when not given */
    long long until_ms;    /* consume --until MS; -1 when not given */
    const char *broker_id; /* configs describe --broker ID */
    bool all;              /* configs describe --all */
    const char *command_config; /* --command-config FILE */
    char default_config[512];   /* $XDG_CONFIG_HOME/samsa/config, when it exists */
    struct file_prop file_props[FILE_PROPS_MAX]; /* both files', in order */
    size_t file_prop_count;
    char file_text[FILE_TEXT_MAX];
    size_t file_text_len;
    bool all_groups; /* group describe --all-groups */
    /* perf */
    long long size;
    long long interval_ms;
};

enum {
    RESET_NONE = 0,
    RESET_EARLIEST,
    RESET_LATEST,
    RESET_OFFSET,
    RESET_SHIFT,
    RESET_DATETIME,
};

static volatile sig_atomic_t stop;

static int print_help(const char *cmd, const char *verb, const char *all);

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What is left of the command's --timeout, for the next library call: 0 once
 * it has run out (the call then fails at once with SAMSA_ERR_TIMED_OUT),
 * never negative (which the library takes as "no limit"). */
static int left_ms(const struct opts *o)
{
    int64_t left = o->deadline_ms - mono_ms();
    return left > 0 ? (int)left : 0;
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static bool parse_ll(const char *s, long long *out)
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

/* Parses the flags every command shares; returns 0 or EXIT_USAGE. */
static int parse(const char *cmd, int argc, char **argv, struct opts *o)
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
        } else if (strcmp(a, "--config") == 0) {
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
            if (!parse_ll(v, &n) || (!shift && n < 0)) {
                return usage_error(cmd, "bad %s \"%s\"", a, v);
            }
            o->reset_mode = shift ? RESET_SHIFT : a[5] == 'o' ? RESET_OFFSET : RESET_DATETIME;
            o->reset_value = n;
            i++;
        } else if (strcmp(a, "--command-config") == 0) {
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

/* Why a library call failed, for stderr: the call's own sentence (errstr,
 * or samsa_err_str when it has none), except that SAMSA_ERR_TIMED_OUT is the
 * command's --timeout running out, whatever was left of it for that call. */
static const char *failure(const struct opts *o, int e, const char *errstr, char *buf,
                           size_t size)
{
    if (e == SAMSA_ERR_TIMED_OUT) {
        snprintf(buf, size, "no answer within --timeout %d ms", o->timeout_ms);
        return buf;
    }
    return errstr != NULL ? errstr : samsa_err_str(e);
}

/* The bootstrap list the client will use: -X's, else -b (or
 * $SAMSA_BROKERS), else the config files'. */
static const char *bootstrap_list(const struct opts *o)
{
    const char *list = o->brokers;
    for (size_t i = 0; o->brokers == NULL && i < o->file_prop_count; i++) {
        if (strcmp(o->file_props[i].key, "bootstrap.servers") == 0 ||
            strcmp(o->file_props[i].key, "metadata.broker.list") == 0) {
            list = o->file_props[i].value; /* the last one, as they are applied in order */
        }
    }
    for (size_t i = 0; i < o->prop_count; i++) {
        if (strncmp(o->props[i], "bootstrap.servers=", 18) == 0) {
            list = o->props[i] + 18;
        } else if (strncmp(o->props[i], "metadata.broker.list=", 21) == 0) {
            list = o->props[i] + 21;
        }
    }
    return list;
}

#define PROBE_MAX 16 /* addresses tried: the library's bootstrap limit */

struct probe {
    char name[300]; /* host:port as given */
    char why[300];  /* why it failed; "" while it may still connect */
    int fds[4];     /* connects in flight, one per resolved address; -1 when done */
};

/* Starts a non-blocking connect to each of host's first 4 addresses. */
static void probe_start(struct probe *pr, const char *host, const char *port)
{
    for (int k = 0; k < 4; k++) {
        pr->fds[k] = -1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0 || res == NULL) {
        snprintf(pr->why, sizeof(pr->why), "cannot resolve \"%s\": %s", host,
                 gai != 0 ? gai_strerror(gai) : "no address");
        return;
    }
    int k = 0;
    int last_errno = 0;
    for (struct addrinfo *ai = res; ai != NULL && k < 4; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
            last_errno = errno;
            close(fd);
            continue;
        }
        pr->fds[k++] = fd;
    }
    freeaddrinfo(res);
    if (k == 0) {
        snprintf(pr->why, sizeof(pr->why), "%s",
                 last_errno == ECONNREFUSED ? "connection refused" : strerror(last_errno));
    }
}

/*
 * Whether any bootstrap broker accepts a TCP connection, asked of all at
 * once before the command starts: the library retries unreachable brokers
 * until its call's deadline (as librdkafka does), which leaves an operator
 * with a typo or a stopped cluster 30 s of silence and "timed out". kcat
 * says "Connection refused" at once; so does this, naming each address, as
 * soon as every one has failed (refused or not resolved), or at --timeout
 * when some never answered. 0 when one connected, else EXIT_FAIL (or
 * EXIT_USAGE for a list with no address) after printing why.
 */
static int probe_bootstrap(const char *cmd, const struct opts *o)
{
    const char *list = bootstrap_list(o);
    struct probe pr[PROBE_MAX];
    memset(pr, 0, sizeof(pr));
    size_t n = 0;
    for (const char *p = list; *p != '\0' && n < PROBE_MAX;) {
        size_t skip = strspn(p, ", ");
        p += skip;
        size_t len = strcspn(p, ", ");
        if (len == 0) {
            break;
        }
        const char *h = p;
        size_t hl = len;
        p += len;
        if (hl > 12 && strncmp(h, "PLAINTEXT://", 12) == 0) {
            h += 12;
            hl -= 12;
        }
        char host[256];
        const char *port = "9092";
        char portbuf[8];
        const char *colon = memrchr(h, ':', hl);
        size_t hostlen = colon != NULL ? (size_t)(colon - h) : hl;
        if (colon != NULL) {
            snprintf(portbuf, sizeof(portbuf), "%.*s", (int)(hl - hostlen - 1), colon + 1);
            port = portbuf;
        }
        if (hostlen >= 2 && h[0] == '[' && h[hostlen - 1] == ']') { /* [::1]:9092 */
            h++;
            hostlen -= 2;
        }
        snprintf(host, sizeof(host), "%.*s", (int)hostlen, h);
        snprintf(pr[n].name, sizeof(pr[n].name), "%.*s", (int)hl, p - hl);
        pr[n].why[0] = '\0';
        probe_start(&pr[n], host, port);
        n++;
    }
    if (n == 0) {
        fprintf(stderr, "samsa %s: no broker address in \"%s\"\n", cmd, list);
        return EXIT_USAGE;
    }
    bool connected = false;
    for (;;) {
        struct pollfd pfd[PROBE_MAX * 4];
        size_t owner[PROBE_MAX * 4];
        int slot[PROBE_MAX * 4];
        nfds_t nfd = 0;
        for (size_t i = 0; i < n; i++) {
            for (int k = 0; k < 4; k++) {
                if (pr[i].fds[k] >= 0) {
                    pfd[nfd] = (struct pollfd){.fd = pr[i].fds[k], .events = POLLOUT};
                    owner[nfd] = i;
                    slot[nfd++] = k;
                }
            }
        }
        int left = left_ms(o);
        if (nfd == 0 || connected || left == 0) {
            break;
        }
        if (poll(pfd, nfd, left) <= 0) {
            continue; /* EINTR or the deadline: looked at again above */
        }
        for (nfds_t j = 0; j < nfd; j++) {
            if (pfd[j].revents == 0) {
                continue;
            }
            struct probe *q = &pr[owner[j]];
            int soerr = 0;
            socklen_t sl = sizeof(soerr);
            if (getsockopt(pfd[j].fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) {
                soerr = errno;
            }
            close(pfd[j].fd);
            q->fds[slot[j]] = -1;
            if (soerr == 0) {
                connected = true;
            } else {
                snprintf(q->why, sizeof(q->why), "%s",
                         soerr == ECONNREFUSED ? "connection refused" : strerror(soerr));
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++) {
            if (pr[i].fds[k] >= 0) {
                close(pr[i].fds[k]);
                if (pr[i].why[0] == '\0') {
                    snprintf(pr[i].why, sizeof(pr[i].why),
                             "no answer to connect within --timeout %d ms", o->timeout_ms);
                }
            }
        }
    }
    if (connected) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, "samsa %s: %s: %s\n", cmd, pr[i].name, pr[i].why);
    }
    fprintf(stderr, "samsa %s: no broker of %s reachable\n", cmd, list);
    return EXIT_FAIL;
}

/* A configuration with -b and every -X applied, once a bootstrap broker
 * answered (probe_bootstrap); 0, or EXIT_USAGE / EXIT_FAIL after printing
 * why. */
static int make_conf(const char *cmd, const struct opts *o, samsa_conf **out)
{
    *out = NULL;
    if (bootstrap_list(o) == NULL) {
        fprintf(stderr, "samsa %s: -b BROKERS is required (or set SAMSA_BROKERS)\n", cmd);
        return EXIT_USAGE;
    }
    samsa_conf *conf = samsa_conf_new();
    if (conf == NULL) {
        fprintf(stderr, "samsa %s: out of memory\n", cmd);
        return EXIT_FAIL;
    }
    char err[512];
    for (size_t i = 0; i < o->file_prop_count; i++) {
        const struct file_prop *fp = &o->file_props[i];
        if (samsa_conf_set(conf, fp->key, fp->value, err, sizeof(err)) != SAMSA_OK) {
            fprintf(stderr, "samsa %s: %s:%d: %s\n", cmd, fp->file, fp->line, err);
            samsa_conf_destroy(conf);
            return EXIT_USAGE;
        }
    }
    if (o->brokers != NULL &&
        samsa_conf_set(conf, "bootstrap.servers", o->brokers, err, sizeof(err)) != SAMSA_OK) {
        fprintf(stderr, "samsa %s: %s\n", cmd, err);
        samsa_conf_destroy(conf);
        return EXIT_USAGE;
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
            return EXIT_USAGE;
        }
    }
    int rc = probe_bootstrap(cmd, o);
    if (rc != 0) {
        samsa_conf_destroy(conf);
        return rc;
    }
    *out = conf;
    return 0;
}

/* An admin handle on make_conf's configuration; 0, or EXIT_USAGE /
 * EXIT_FAIL after printing why. */
static int make_admin(const char *cmd, const struct opts *o, samsa_admin **out)
{
    samsa_conf *conf = NULL;
    int rc = make_conf(cmd, o, &conf);
    if (rc != 0) {
        return rc;
    }
    char err[512];
    *out = samsa_admin_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (*out == NULL) {
        fprintf(stderr, "samsa %s: %s\n", cmd, err);
        return EXIT_USAGE;
    }
    return 0;
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

static void json_opt_str(const char *v)
{
    if (v == NULL) {
        printf("null");
    } else {
        json_str(stdout, v, strlen(v));
    }
}

static void json_opt_ll(long long v)
{
    if (v < 0) {
        printf("null");
    } else {
        printf("%lld", v);
    }
}

/* A text table whose columns are as wide as their widest cell, the header
 * included (kafka-consumer-groups.sh sizes its columns so): rows are added
 * whole, cells copied; a NULL cell prints as "-". Out of memory sticks:
 * later rows are dropped and table_print says so. */
struct table {
    size_t cols;
    size_t rows;
    size_t cap;
    char **cells; /* rows * cols, row-major */
    bool oom;
};

static void table_row(struct table *t, const char *const *cells)
{
    if (t->oom) {
        return;
    }
    if (t->rows == t->cap) {
        size_t cap = t->cap > 0 ? t->cap * 2 : 16;
        char **grown = realloc(t->cells, cap * t->cols * sizeof(*grown));
        if (grown == NULL) {
            t->oom = true;
            return;
        }
        t->cells = grown;
        t->cap = cap;
    }
    for (size_t c = 0; c < t->cols; c++) {
        char *copy = strdup(cells[c] != NULL ? cells[c] : "-");
        t->cells[t->rows * t->cols + c] = copy;
        if (copy == NULL) {
            t->oom = true;
        }
    }
    t->rows++;
}

static void table_print(struct table *t)
{
    size_t width[16] = {0};
    for (size_t r = 0; r < t->rows; r++) {
        for (size_t c = 0; c < t->cols && c < 16; c++) {
            const char *cell = t->cells[r * t->cols + c];
            size_t len = cell != NULL ? strlen(cell) : 0;
            width[c] = len > width[c] ? len : width[c];
        }
    }
    for (size_t r = 0; r < t->rows; r++) {
        for (size_t c = 0; c < t->cols; c++) {
            const char *cell = t->cells[r * t->cols + c];
            if (c + 1 == t->cols) {
                printf("%s\n", cell != NULL ? cell : "");
            } else {
                printf("%-*s ", (int)width[c < 16 ? c : 15], cell != NULL ? cell : "");
            }
        }
    }
    if (t->oom) {
        fprintf(stderr, "samsa: out of memory: rows left out\n");
    }
}

static void table_free(struct table *t)
{
    for (size_t i = 0; i < t->rows * t->cols; i++) {
        free(t->cells[i]);
    }
    free(t->cells);
    t->cells = NULL;
    t->rows = 0;
    t->cap = 0;
}

/* v in buf, or "-" when negative (none, unknown). */
static const char *cell_ll(char *buf, size_t size, long long v)
{
    if (v < 0) {
        return "-";
    }
    snprintf(buf, size, "%lld", v);
    return buf;
}

/* Why a topic could not be used, for stderr: a topic the cluster does not
 * know reads as kafka-topics.sh says it ("Topic 'x' does not exist as
 * expected", TopicCommand.ensureTopicExists since Kafka 2.4; 2.0's names its
 * ZooKeeper path), not as the error code's sentence about a
 * topic-partition. */
static void topic_failed(const char *cmd, const char *topic, int e)
{
    if (e == 3 || e == SAMSA_ERR_UNKNOWN_TOPIC) {
        fprintf(stderr, "samsa %s: Topic '%s' does not exist.\n", cmd, topic);
    } else {
        fprintf(stderr, "samsa %s: topic %s: %s\n", cmd, topic, samsa_err_str(e));
    }
}

/* The one topic's metadata into *out (the caller's), or EXIT_FAIL after
 * saying why (topic_failed). */
static int one_topic(samsa_admin *a, const char *cmd, const struct opts *o, const char *topic,
                     samsa_metadata **out)
{
    const char *names[1] = {topic};
    samsa_metadata *md = NULL;
    int e = samsa_admin_metadata(a, names, 1, left_ms(o), &md);
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa %s: metadata: %s\n", cmd, failure(o, e, NULL, why, sizeof(why)));
        return EXIT_FAIL;
    }
    if (md->topic_count != 1 || md->topics[0].err != 0) {
        topic_failed(cmd, topic, md->topic_count == 1 ? md->topics[0].err : SAMSA_ERR_UNKNOWN_TOPIC);
        samsa_metadata_free(md);
        return EXIT_FAIL;
    }
    *out = md;
    return 0;
}

/* ------------------------------------------------------------------ topic */

static const char topic_help[] =
    "usage: samsa topic create -b BROKERS NAME [--partitions N] [--replication-factor R]\n"
    "                          [--config key=value]...\n"
    "       samsa topic list -b BROKERS [--json]\n"
    "       samsa topic describe -b BROKERS [NAME...] [--json] [--under-replicated-partitions]\n"
    "                            [--unavailable-partitions] [--under-min-isr-partitions]\n"
    "       samsa topic alter -b BROKERS NAME [--partitions N] [--config key=value]...\n"
    "                         [--delete-config key]...\n"
    "       samsa topic delete -b BROKERS NAME\n"
    "       samsa topic offsets -b BROKERS NAME... [-p PARTITION] [--time MS] [--json]\n"
    "describe without NAME describes every topic. --under-replicated-partitions lists\n"
    "only the partitions whose ISR is smaller than their replicas,\n"
    "--unavailable-partitions those without a live leader, --under-min-isr-partitions\n"
    "those whose ISR is below the topic's min.insync.replicas (acks=all is refused);\n"
    "given together, a partition matching any is listed. Nothing listed: all is well.\n"
    "offsets prints each partition's EARLIEST and LATEST offsets (log start, high\n"
    "watermark), or with --time MS (since the epoch) the first OFFSET whose timestamp\n"
    "is at or after it (- when none), as kcat -Q and GetOffsetShell --time.\n"
    "alter raises the partition count to N (CreatePartitions), sets configs and puts\n"
    "--delete-config ones back to their defaults (the others stay as they are).\n"
    "Common: -X key=value (client configuration), --timeout MS (default 30000): the\n"
    "whole command's, however many requests it makes.\n"
    "Exit status: 0 done, 1 the broker refused or timed out, or a topic's configs could\n"
    "not be read (stderr names it), 2 usage error.\n";

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

/* The topic's configs that are not defaults, as kafka-topics.sh shows them:
 * k=v,k=v (or "k":"v",... in JSON). Nothing when the broker does not offer
 * DescribeConfigs; when they cannot be read otherwise, nothing either, and
 * stderr says so: 0, or EXIT_FAIL then. */
static int print_topic_configs(samsa_admin *a, const struct opts *o, const char *topic, bool json)
{
    samsa_configs *cf = NULL;
    char err[512];
    int rc = samsa_admin_describe_configs(a, SAMSA_RESOURCE_TOPIC, topic, left_ms(o), &cf, err,
                                          sizeof(err));
    if (rc == SAMSA_ERR_UNSUPPORTED) {
        return 0;
    }
    if (rc != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa topic describe: %s: configs not read: %s\n", topic,
                failure(o, rc, err, why, sizeof(why)));
        return EXIT_FAIL;
    }
    int n = 0;
    for (size_t i = 0; i < cf->count; i++) {
        const struct samsa_config_entry *e = &cf->entries[i];
        /* Only the topic's own settings (ConfigSource 1), as kafka-topics.sh. */
        if (e->value == NULL || (e->source >= 0 ? e->source != 1 : e->is_default)) {
            continue;
        }
        if (json) {
            printf("%s", n > 0 ? "," : "");
            json_str(stdout, e->name, strlen(e->name));
            printf(":");
            json_str(stdout, e->value, strlen(e->value));
        } else {
            printf("%s%s=%s", n > 0 ? "," : "", e->name, e->value);
        }
        n++;
    }
    samsa_configs_free(cf);
    return 0;
}

/* The topic's min.insync.replicas as the broker applies it (its own, else
 * the broker's): 0, or EXIT_FAIL after saying why it could not be read. */
static int topic_min_isr(samsa_admin *a, const struct opts *o, const char *topic,
                         long long *min_isr)
{
    samsa_configs *cf = NULL;
    char err[512];
    int e = samsa_admin_describe_configs(a, SAMSA_RESOURCE_TOPIC, topic, left_ms(o), &cf, err,
                                         sizeof(err));
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa topic describe: %s: min.insync.replicas not read: %s\n", topic,
                failure(o, e, err, why, sizeof(why)));
        return EXIT_FAIL;
    }
    *min_isr = 1; /* Kafka's default */
    for (size_t i = 0; i < cf->count; i++) {
        long long v;
        if (strcmp(cf->entries[i].name, "min.insync.replicas") == 0 &&
            parse_ll(cf->entries[i].value, &v)) {
            *min_isr = v;
        }
    }
    samsa_configs_free(cf);
    return 0;
}

/* Whether a partition is one the describe filters ask for (all without
 * one), as Kafka 2.0's TopicCommand.describeTopic picks them: under-
 * replicated when its ISR is smaller than its replicas, unavailable when it
 * has no leader or its leader is not a live broker; under min ISR (Kafka
 * 2.3's --under-min-isr-partitions) when its ISR is smaller than the
 * topic's min.insync.replicas. */
static bool partition_wanted(const struct opts *o, const samsa_metadata *md,
                             const struct samsa_partition_info *p, long long min_isr)
{
    if (!o->under_replicated && !o->unavailable && !o->under_min_isr) {
        return true;
    }
    bool live = false;
    for (size_t i = 0; p->leader >= 0 && i < md->broker_count; i++) {
        live = live || md->brokers[i].id == p->leader;
    }
    return (o->under_replicated && p->isr_count < p->replica_count) ||
           (o->unavailable && !live) ||
           (o->under_min_isr && (long long)p->isr_count < min_isr);
}

static int topic_describe(samsa_admin *a, const struct opts *o, const char *const *names,
                          size_t count, bool list_only)
{
    samsa_metadata *md = NULL;
    int err = samsa_admin_metadata(a, names, count, left_ms(o), &md);
    if (err != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa topic: metadata: %s\n", failure(o, err, NULL, why, sizeof(why)));
        return EXIT_FAIL;
    }
    int rc = 0;
    size_t shown = 0; /* topics printed, for JSON's commas */
    if (o->json) {
        printf("[");
    }
    for (size_t i = 0; i < md->topic_count; i++) {
        const struct samsa_topic_info *t = &md->topics[i];
        if (t->err != 0) {
            topic_failed("topic", t->name, t->err);
            rc = EXIT_FAIL;
            continue;
        }
        if (list_only && !o->json) {
            printf("%s\n", t->name);
            continue;
        }
        bool filtered = !list_only && (o->under_replicated || o->unavailable || o->under_min_isr);
        long long min_isr = 0;
        if (filtered && o->under_min_isr && topic_min_isr(a, o, t->name, &min_isr) != 0) {
            rc = EXIT_FAIL;
            continue;
        }
        size_t wanted = 0;
        for (size_t j = 0; j < t->partition_count; j++) {
            wanted += partition_wanted(o, md, &t->partitions[j], min_isr) ? 1 : 0;
        }
        if (filtered && wanted == 0) {
            continue;
        }
        size_t rf = t->partition_count > 0 ? t->partitions[0].replica_count : 0;
        if (o->json) {
            printf("%s{\"name\":", shown++ == 0 ? "" : ",");
            json_str(stdout, t->name, strlen(t->name));
            printf(",\"partitions\":%zu,\"replication_factor\":%zu,\"internal\":%s", t->partition_count,
                   rf, t->internal ? "true" : "false");
            if (!list_only) {
                printf(",\"configs\":{");
                if (print_topic_configs(a, o, t->name, true) != 0) {
                    rc = EXIT_FAIL;
                }
                printf("}");
                printf(",\"partition_info\":[");
                for (size_t j = 0, k = 0; j < t->partition_count; j++) {
                    const struct samsa_partition_info *p = &t->partitions[j];
                    if (!partition_wanted(o, md, p, min_isr)) {
                        continue;
                    }
                    printf("%s{\"partition\":%d,\"leader\":%d,\"replicas\":", k++ == 0 ? "" : ",",
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
        /* A filter prints the partitions' lines only, as kafka-topics.sh. */
        if (!filtered) {
            printf("Topic: %s\tPartitionCount: %zu\tReplicationFactor: %zu\tConfigs: ", t->name,
                   t->partition_count, rf);
            if (print_topic_configs(a, o, t->name, false) != 0) {
                rc = EXIT_FAIL;
            }
            printf("\n");
        }
        for (size_t j = 0; j < t->partition_count; j++) {
            const struct samsa_partition_info *p = &t->partitions[j];
            if (!partition_wanted(o, md, p, min_isr)) {
                continue;
            }
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

/* Each partition's earliest and latest offsets (its log start and high
 * watermark), or with --time MS the first offset whose timestamp is at or
 * after MS, as kcat -Q and Kafka's GetOffsetShell --time answer: a table,
 * or JSON. A partition whose offsets cannot be read prints "-" and is named
 * on stderr; 0, or EXIT_FAIL then. */
static int topic_offsets(samsa_admin *a, const struct opts *o)
{
    samsa_metadata *md = NULL;
    int e = samsa_admin_metadata(a, o->positional, (size_t)o->npos, left_ms(o), &md);
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa topic offsets: metadata: %s\n",
                failure(o, e, NULL, why, sizeof(why)));
        return EXIT_FAIL;
    }
    int rc = 0;
    bool by_time = o->time_ms >= 0;
    struct table t = {.cols = 4};
    if (by_time) {
        table_row(&t, (const char *const[]){"TOPIC", "PARTITION", "TIME", "OFFSET"});
    } else {
        table_row(&t, (const char *const[]){"TOPIC", "PARTITION", "EARLIEST", "LATEST"});
    }
    size_t shown = 0;
    if (o->json) {
        printf("[");
    }
    for (size_t i = 0; i < md->topic_count; i++) {
        const struct samsa_topic_info *ti = &md->topics[i];
        if (ti->err != 0) {
            topic_failed("topic offsets", ti->name, ti->err);
            rc = EXIT_FAIL;
            continue;
        }
        bool found = o->partition < 0;
        for (size_t j = 0; j < ti->partition_count; j++) {
            int32_t id = ti->partitions[j].id;
            if (o->partition >= 0 && id != o->partition) {
                continue;
            }
            found = true;
            int64_t low = -1;
            int64_t high = -1;
            if (by_time) {
                e = samsa_admin_list_offset(a, ti->name, id, o->time_ms, &high, left_ms(o));
            } else {
                e = samsa_admin_watermarks(a, ti->name, id, &low, &high, left_ms(o));
            }
            if (e != SAMSA_OK) {
                char why[128];
                fprintf(stderr, "samsa topic offsets: %s [%d]: %s\n", ti->name, id,
                        failure(o, e, NULL, why, sizeof(why)));
                rc = EXIT_FAIL;
                low = high = -1;
            }
            if (o->json) {
                printf("%s{\"topic\":", shown++ == 0 ? "" : ",");
                json_str(stdout, ti->name, strlen(ti->name));
                printf(",\"partition\":%d,", id);
                if (by_time) {
                    printf("\"time\":%lld,\"offset\":", o->time_ms);
                    json_opt_ll(high);
                } else {
                    printf("\"earliest\":");
                    json_opt_ll(low);
                    printf(",\"latest\":");
                    json_opt_ll(high);
                }
                printf("}");
                continue;
            }
            char part[24];
            char c2[24];
            char c3[24];
            snprintf(part, sizeof(part), "%d", id);
            if (by_time) {
                snprintf(c2, sizeof(c2), "%lld", o->time_ms);
            }
            table_row(&t, (const char *const[]){ti->name, part,
                                                 by_time ? c2 : cell_ll(c2, sizeof(c2), low),
                                                 cell_ll(c3, sizeof(c3), high)});
        }
        if (!found) {
            fprintf(stderr, "samsa topic offsets: topic %s has no partition %d\n", ti->name,
                    o->partition);
            rc = EXIT_FAIL;
        }
    }
    if (o->json) {
        printf("]\n");
    } else {
        table_print(&t);
    }
    table_free(&t);
    samsa_metadata_free(md);
    return rc;
}

static int topic_alter(samsa_admin *a, const struct opts *o)
{
    const char *name = o->positional[0];
    char err[512];
    if (o->partitions > 0) {
        int e = samsa_admin_create_partitions(a, name, o->partitions, left_ms(o), err,
                                              sizeof(err));
        if (e == SAMSA_ERR_UNKNOWN_TOPIC) {
            topic_failed("topic alter", name, e);
            return EXIT_FAIL;
        }
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa topic alter %s: --partitions %d: %s\n", name, o->partitions,
                    err);
            return EXIT_FAIL;
        }
        printf("Topic %s now has %d partitions.\n", name, o->partitions);
    }
    size_t n = o->config_count + o->delete_config_count;
    if (n == 0) {
        return 0;
    }
    struct samsa_config_op ops[128];
    char keys[64][256];
    for (size_t i = 0; i < o->config_count; i++) {
        const char *eq = strchr(o->configs[i], '=');
        size_t kl = (size_t)(eq - o->configs[i]);
        if (kl >= sizeof(keys[i])) {
            kl = sizeof(keys[i]) - 1;
        }
        memcpy(keys[i], o->configs[i], kl);
        keys[i][kl] = '\0';
        ops[i].name = keys[i];
        ops[i].value = eq + 1;
    }
    for (size_t i = 0; i < o->delete_config_count; i++) {
        ops[o->config_count + i].name = o->delete_configs[i];
        ops[o->config_count + i].value = NULL;
    }
    int e = samsa_admin_alter_configs(a, SAMSA_RESOURCE_TOPIC, name, ops, n, left_ms(o), err,
                                      sizeof(err));
    if (e == SAMSA_ERR_UNKNOWN_TOPIC) {
        topic_failed("topic alter", name, e);
        return EXIT_FAIL;
    }
    if (e != SAMSA_OK) {
        fprintf(stderr, "samsa topic alter %s: %s\n", name, err);
        return EXIT_FAIL;
    }
    printf("Altered the configuration of topic %s.\n", name);
    return 0;
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
        return print_help("topic", verb, topic_help);
    }
    bool create = strcmp(verb, "create") == 0;
    bool del = strcmp(verb, "delete") == 0;
    bool list = strcmp(verb, "list") == 0;
    bool describe = strcmp(verb, "describe") == 0;
    bool alter = strcmp(verb, "alter") == 0;
    bool offsets = strcmp(verb, "offsets") == 0;
    if (!create && !del && !list && !describe && !alter && !offsets) {
        return usage_error("topic", "unknown command \"%s\"", verb);
    }
    if ((create || del || alter) && o.npos != 1) {
        return usage_error("topic", "%s wants one topic NAME", verb);
    }
    if (offsets && o.npos + (o.topic != NULL ? 1 : 0) < 1) {
        return usage_error("topic", "%s", "offsets wants a topic NAME");
    }
    if (alter && o.partitions < 0 && o.config_count == 0 && o.delete_config_count == 0) {
        return usage_error("topic", "%s", "alter wants --partitions, --config or --delete-config");
    }
    for (size_t i = 0; alter && i < o.config_count; i++) {
        const char *eq = strchr(o.configs[i], '=');
        if (eq == NULL || eq == o.configs[i]) {
            return usage_error("topic", "--config wants key=value, got \"%s\"", o.configs[i]);
        }
    }
    if (o.topic != NULL && o.npos < 8) {
        o.positional[o.npos++] = o.topic;
    }
    samsa_admin *a = NULL;
    rc = make_admin("topic", &o, &a);
    if (rc != 0) {
        return rc;
    }
    char err[512];
    if (create) {
        struct samsa_new_topic t = {
            .name = o.positional[0],
            .partitions = o.partitions,
            .replication_factor = o.replication,
            .config = o.configs,
            .config_count = o.config_count,
        };
        int e = samsa_admin_create_topic(a, &t, left_ms(&o), err, sizeof(err));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa topic create %s: %s\n", t.name, err);
            rc = EXIT_FAIL;
        } else {
            printf("Created topic %s.\n", t.name);
        }
    } else if (alter) {
        rc = topic_alter(a, &o);
    } else if (offsets) {
        rc = topic_offsets(a, &o);
    } else if (del) {
        int e = samsa_admin_delete_topic(a, o.positional[0], left_ms(&o), err, sizeof(err));
        if (e == SAMSA_ERR_UNKNOWN_TOPIC) {
            topic_failed("topic delete", o.positional[0], e);
            rc = EXIT_FAIL;
        } else if (e != SAMSA_OK) {
            fprintf(stderr, "samsa topic delete %s: %s\n", o.positional[0], err);
            rc = EXIT_FAIL;
        } else {
            printf("Deleted topic %s.\n", o.positional[0]);
        }
    } else {
        rc = topic_describe(a, &o, o.npos > 0 ? o.positional : NULL, (size_t)o.npos, list);
    }
    samsa_admin_destroy(a);
    return rc;
}

/* ---------------------------------------------------------------- cluster */

static const char cluster_help[] =
    "usage: samsa cluster info -b BROKERS [--json]\n"
    "       samsa cluster metadata -b BROKERS [-t TOPIC] [--json]\n"
    "info prints the cluster id, the controller and every broker; metadata also every\n"
    "topic's partitions (or TOPIC's) with their leader, replicas and ISR, as kcat -L\n"
    "prints them (a partition's error, when it has one, at the end of its line).\n"
    "Common: -X key=value (client configuration), --timeout MS (default 30000).\n"
    "Exit status: 0 done, 1 refused or timed out, or a topic not read (stderr names\n"
    "it), 2 usage error.\n";

/* kcat -L's listing (kcat.c's metadata_print): brokers, then each topic's
 * partitions with leader, replicas and ISR. */
static int print_cluster_metadata(const struct opts *o, const samsa_metadata *md)
{
    int rc = 0;
    if (o->json) {
        printf("{\"controller\":%d,\"brokers\":[", md->controller_id);
        for (size_t i = 0; i < md->broker_count; i++) {
            printf("%s{\"id\":%d,\"host\":", i == 0 ? "" : ",", md->brokers[i].id);
            json_str(stdout, md->brokers[i].host, strlen(md->brokers[i].host));
            printf(",\"port\":%d}", md->brokers[i].port);
        }
        printf("],\"topics\":[");
    } else {
        printf("Metadata for %s:\n %zu brokers:\n", o->topic != NULL ? o->topic : "all topics",
               md->broker_count);
        for (size_t i = 0; i < md->broker_count; i++) {
            printf("  broker %d at %s:%d%s\n", md->brokers[i].id, md->brokers[i].host,
                   md->brokers[i].port,
                   md->brokers[i].id == md->controller_id ? " (controller)" : "");
        }
        printf(" %zu topics:\n", md->topic_count);
    }
    for (size_t i = 0; i < md->topic_count; i++) {
        const struct samsa_topic_info *t = &md->topics[i];
        if (t->err != 0) {
            topic_failed("cluster metadata", t->name, t->err);
            rc = EXIT_FAIL;
        }
        if (o->json) {
            printf("%s{\"name\":", i == 0 ? "" : ",");
            json_str(stdout, t->name, strlen(t->name));
            printf(",\"error\":\"%s\",\"partitions\":[", t->err != 0 ? samsa_err_name(t->err) : "");
        } else if (t->err == 0) {
            printf("  topic \"%s\" with %zu partitions:\n", t->name, t->partition_count);
        }
        for (size_t j = 0; j < t->partition_count; j++) {
            const struct samsa_partition_info *p = &t->partitions[j];
            if (o->json) {
                printf("%s{\"partition\":%d,\"leader\":%d,\"replicas\":", j == 0 ? "" : ",",
                       p->id, p->leader);
                json_ids(p->replicas, p->replica_count);
                printf(",\"isr\":");
                json_ids(p->isrs, p->isr_count);
                printf(",\"error\":\"%s\"}", p->err != 0 ? samsa_err_name(p->err) : "");
                continue;
            }
            printf("    partition %d, leader %d, replicas: ", p->id, p->leader);
            print_ids(p->replicas, p->replica_count);
            printf(", isrs: ");
            print_ids(p->isrs, p->isr_count);
            if (p->err != 0) {
                printf(", Broker: %s", samsa_err_str(p->err));
            }
            printf("\n");
        }
        if (o->json) {
            printf("]}");
        }
    }
    if (o->json) {
        printf("]}\n");
    }
    return rc;
}

static int cmd_cluster(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(cluster_help, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : 0;
    }
    bool metadata = strcmp(argv[0], "metadata") == 0;
    if (strcmp(argv[0], "info") != 0 && !metadata) {
        return usage_error("cluster", "unknown command \"%s\"", argv[0]);
    }
    struct opts o;
    int rc = parse("cluster", argc - 1, argv + 1, &o);
    if (rc != 0) {
        return rc;
    }
    if (o.help) {
        return print_help("cluster", argv[0], cluster_help);
    }
    samsa_admin *a = NULL;
    rc = make_admin("cluster", &o, &a);
    if (rc != 0) {
        return rc;
    }
    static const char *const none[1] = {NULL};
    const char *one[1] = {o.topic};
    samsa_metadata *md = NULL;
    /* info: no topics; metadata: every topic (NULL), or -t's */
    int e = samsa_admin_metadata(a, !metadata ? none : o.topic != NULL ? one : NULL,
                                 metadata && o.topic != NULL ? 1 : 0, left_ms(&o), &md);
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa cluster %s: %s\n", argv[0], failure(&o, e, NULL, why, sizeof(why)));
        samsa_admin_destroy(a);
        return EXIT_FAIL;
    }
    if (metadata) {
        rc = print_cluster_metadata(&o, md);
    } else if (o.json) {
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
    samsa_admin_destroy(a);
    return rc;
}

/* ---------------------------------------------------------------- produce */

static const char produce_help[] =
    "usage: samsa produce -b BROKERS -t TOPIC [-p PARTITION] [-K DELIM] [-H name=value]...\n"
    "                     [-X key=value]...\n"
    "Sends each line of standard input as one record. With -K, the text before the\n"
    "first DELIM is the key. -H adds a header to every record (repeat it for more).\n"
    "Without -p the partitioner places records (keys as the Java client does). Waits\n"
    "for every delivery report, up to --timeout MS (default 30000) after the input\n"
    "ends; prints a summary on stderr.\n"
    "Exit status: 0 all delivered, 1 some were not, 2 usage error.\n";

/* -H name=value into hs[0..n): names copied into names[], values borrowed. */
static size_t make_headers(const struct opts *o, struct samsa_header *hs, char (*names)[256])
{
    for (size_t i = 0; i < o->header_count; i++) {
        const char *eq = strchr(o->headers[i], '=');
        size_t nl = (size_t)(eq - o->headers[i]);
        if (nl >= 256) {
            nl = 255;
        }
        memcpy(names[i], o->headers[i], nl);
        names[i][nl] = '\0';
        hs[i].name = names[i];
        hs[i].value = eq + 1;
        hs[i].value_len = strlen(eq + 1);
    }
    return o->header_count;
}

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
    samsa_conf *conf = NULL;
    rc = make_conf("produce", &o, &conf);
    if (rc != 0) {
        return rc;
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
    struct samsa_header hs[64];
    char hnames[64][256];
    size_t hn = make_headers(&o, hs, hnames);
    while (!stop && (len = getline(&line, &cap, stdin)) >= 0) {
        if (len > 0 && line[len - 1] == '\n') {
            len--;
        }
        struct samsa_record r = {.topic = o.topic, .partition = o.partition};
        r.headers = hn > 0 ? hs : NULL;
        r.header_count = hn;
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
    /* Standard input may take any time: --timeout bounds the wait for the
     * delivery reports after it ended, not the whole command. */
    int fe = samsa_producer_flush(p, o.timeout_ms);
    if (fe != SAMSA_OK) {
        fprintf(stderr, "samsa produce: %zu records not delivered within %d ms\n",
                samsa_producer_outq_len(p), o.timeout_ms);
    }
    size_t lost = samsa_producer_close(p, 0);
    samsa_producer_destroy(p);
    fprintf(stderr, "samsa produce: %lld delivered, %lld failed\n", st.delivered,
            st.failed);
    return st.failed > 0 || lost > 0 || fe != SAMSA_OK ? EXIT_FAIL : 0;
}

/* ---------------------------------------------------------------- consume */

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
    while (!stop && (o->count < 0 || got < o->count) && (u == NULL || u->finished < u->n)) {
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

/* ------------------------------------------------------------------ group */

static const char group_help[] =
    "usage: samsa group list -b BROKERS [--json]\n"
    "       samsa group describe -b BROKERS (GROUP... | --all-groups)\n"
    "                  [--offsets | --members | --state] [--json]\n"
    "       samsa group reset-offsets -b BROKERS GROUP -t TOPIC [-p PARTITION]\n"
    "                  (--to-earliest | --to-latest | --to-offset N | --to-datetime MS |\n"
    "                   --shift-by N) [--execute] [--json]\n"
    "       samsa group delete -b BROKERS GROUP\n"
    "describe prints GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID\n"
    "HOST CLIENT-ID for every partition the group owns or has committed (- when none);\n"
    "--state prints GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS instead,\n"
    "--members GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS (--offsets: the default).\n"
    "Columns are as wide as their contents; a blank line between groups.\n"
    "reset-offsets prints GROUP TOPIC PARTITION NEW-OFFSET and changes nothing unless\n"
    "--execute is given (the group must have no members then); --to-datetime takes\n"
    "milliseconds since the epoch.\n"
    "Common: -X key=value (client configuration), --timeout MS (default 30000): the\n"
    "whole command's, however many requests it makes.\n"
    "Exit status: 0 done, 1 refused, no such group or timed out, or some log end not\n"
    "read in time (describe prints the rest, - for it, and names it on stderr),\n"
    "2 usage error.\n";

struct group_row {
    const char *topic;
    int32_t partition;
    int64_t current; /* -1: none committed */
    int64_t end;     /* -1: unknown */
    int end_err;     /* why end is unknown: the ListOffsets call's error */
    const struct samsa_group_member *owner;
};

/* The log ends of a group's partitions, asked for all at once: the calls run
 * on this thread and up to LOG_END_THREADS more (every admin call may be made
 * from any thread; the I/O thread serves them side by side), so a leader that
 * does not answer holds up its own partitions, not the others', and every
 * call ends by the command's deadline. */
#define LOG_END_THREADS 16

struct log_ends {
    samsa_admin *a;
    const struct opts *o;
    struct group_row *rows;
    size_t n;
    pthread_mutex_t lock;
    size_t next; /* the next row to ask for; under lock */
};

static void *log_end_worker(void *arg)
{
    struct log_ends *le = arg;
    for (;;) {
        pthread_mutex_lock(&le->lock);
        size_t i = le->next;
        if (i < le->n) {
            le->next++;
        }
        pthread_mutex_unlock(&le->lock);
        if (i >= le->n) {
            return NULL;
        }
        struct group_row *r = &le->rows[i];
        int64_t end = -1;
        r->end_err = samsa_admin_list_offset(le->a, r->topic, r->partition, SAMSA_OFFSET_END,
                                             &end, left_ms(le->o));
        if (r->end_err == SAMSA_OK) {
            r->end = end;
        }
    }
}

static void fetch_log_ends(samsa_admin *a, const struct opts *o, struct group_row *rows, size_t n)
{
    struct log_ends le = {.a = a, .o = o, .rows = rows, .n = n, .next = 0};
    pthread_mutex_init(&le.lock, NULL);
    pthread_t threads[LOG_END_THREADS];
    size_t want = n < LOG_END_THREADS ? n : LOG_END_THREADS;
    size_t started = 0;
    while (started < want && pthread_create(&threads[started], NULL, log_end_worker, &le) == 0) {
        started++;
    }
    /* This thread asks too: it does every call when no thread could start. */
    (void)log_end_worker(&le);
    for (size_t i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
    }
    pthread_mutex_destroy(&le.lock);
}

static int cmp_row(const void *a, const void *b)
{
    const struct group_row *x = a;
    const struct group_row *y = b;
    int c = strcmp(x->topic, y->topic);
    return c != 0 ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

/* One group's description. When there is something to print and *shown
 * (an earlier group was printed), the separator between groups goes first;
 * *shown is set once this one prints. */
static int group_describe(samsa_admin *a, const struct opts *o, const char *group, bool *shown)
{
    char err[512];
    samsa_group_description *d = NULL;
    int e = samsa_admin_describe_group(a, group, left_ms(o), &d, err, sizeof(err));
    static const samsa_group_description unknown = {"", "-", "", "", -1, 0, NULL};
    if (e == SAMSA_ERR_UNSUPPORTED && !o->state) {
        /* A broker without DescribeGroups still has the group's offsets. */
        fprintf(stderr, "samsa group describe %s: %s: members not shown\n", group, err);
    } else if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa group describe %s: %s\n", group,
                failure(o, e, err, why, sizeof(why)));
        return EXIT_FAIL;
    }
    const samsa_group_description *dv = d != NULL ? d : &unknown;
    struct samsa_partition *offs = NULL;
    size_t noffs = 0;
    e = samsa_admin_list_group_offsets(a, group, left_ms(o), &offs, &noffs, err, sizeof(err));
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa group describe %s: offsets: %s\n", group,
                failure(o, e, err, why, sizeof(why)));
        samsa_group_description_free(d);
        return EXIT_FAIL;
    }
    if (strcmp(dv->state, "Dead") == 0 && dv->member_count == 0 && noffs == 0) {
        fprintf(stderr, "samsa group describe: consumer group '%s' does not exist.\n", group);
        samsa_group_description_free(d);
        samsa_partitions_free(offs, noffs);
        return EXIT_FAIL;
    }
    int rc = 0;
    if (*shown) {
        fputs(o->json ? "," : "\n", stdout);
    }
    *shown = true;
    if (o->state) {
        if (o->json) {
            printf("{\"group\":");
            json_opt_str(dv->group_id);
            printf(",\"coordinator\":%d,\"assignment_strategy\":", dv->coordinator_id);
            json_opt_str(dv->protocol);
            printf(",\"state\":");
            json_opt_str(dv->state);
            printf(",\"members\":%zu}\n", dv->member_count);
        } else {
            /* host:port (id), as kafka-consumer-groups.sh prints it */
            char coord[300];
            snprintf(coord, sizeof(coord), "- (%d)", dv->coordinator_id);
            static const char *const none[1] = {NULL};
            samsa_metadata *md = NULL;
            e = samsa_admin_metadata(a, none, 0, left_ms(o), &md);
            if (e == SAMSA_OK) {
                for (size_t i = 0; i < md->broker_count; i++) {
                    if (md->brokers[i].id == dv->coordinator_id) {
                        snprintf(coord, sizeof(coord), "%s:%d (%d)", md->brokers[i].host,
                                 md->brokers[i].port, dv->coordinator_id);
                    }
                }
                samsa_metadata_free(md);
            } else {
                char why[128];
                fprintf(stderr, "samsa group describe %s: the coordinator's address not read: "
                        "%s\n", group, failure(o, e, NULL, why, sizeof(why)));
                rc = EXIT_FAIL;
            }
            char count[24];
            snprintf(count, sizeof(count), "%zu", dv->member_count);
            struct table t = {.cols = 5};
            table_row(&t, (const char *const[]){"GROUP", "COORDINATOR (ID)",
                                                 "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"});
            table_row(&t, (const char *const[]){group, coord,
                                                 dv->protocol[0] != '\0' ? dv->protocol : "-",
                                                 dv->state, count});
            table_print(&t);
            table_free(&t);
        }
        samsa_group_description_free(d);
        samsa_partitions_free(offs, noffs);
        return rc;
    }
    size_t cap = noffs;
    for (size_t i = 0; i < dv->member_count; i++) {
        cap += dv->members[i].assignment_count;
    }
    struct group_row *rows = calloc(cap > 0 ? cap : 1, sizeof(*rows));
    size_t n = 0;
    for (size_t i = 0; rows != NULL && i < dv->member_count; i++) {
        for (size_t k = 0; k < dv->members[i].assignment_count; k++) {
            const struct samsa_partition *p = &dv->members[i].assignment[k];
            rows[n++] = (struct group_row){p->topic, p->partition, -1, -1, 0, &dv->members[i]};
        }
    }
    for (size_t i = 0; rows != NULL && i < noffs; i++) {
        size_t r = 0;
        while (r < n && !(rows[r].partition == offs[i].partition &&
                          strcmp(rows[r].topic, offs[i].topic) == 0)) {
            r++;
        }
        if (r == n) {
            rows[n++] = (struct group_row){offs[i].topic, offs[i].partition, -1, -1, 0, NULL};
        }
        rows[r].current = offs[i].offset;
    }
    if (rows == NULL) {
        fprintf(stderr, "samsa group describe: out of memory\n");
        rc = EXIT_FAIL;
        n = 0;
    }
    if (n > 0 && !o->members) {
        fetch_log_ends(a, o, rows, n);
        qsort(rows, n, sizeof(*rows), cmp_row);
    }
    /* The committed offsets of a topic that was deleted: Kafka 2.0's
     * coordinator drops them with the topic (GroupCoordinator.
     * handleDeletedPartitions), so they are left out here too, and said so
     * once per topic, not counted as a failure. */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        bool gone = rows[i].owner == NULL && (rows[i].end_err == SAMSA_ERR_UNKNOWN_TOPIC ||
                                              rows[i].end_err == 3);
        if (gone && (i == 0 || strcmp(rows[i - 1].topic, rows[i].topic) != 0)) {
            fprintf(stderr, "samsa group describe %s: Topic '%s' does not exist: its committed "
                    "offsets are not shown.\n", group, rows[i].topic);
        }
        if (!gone) {
            rows[kept++] = rows[i];
        }
    }
    n = kept;
    /* What could not be read is printed as "-" (null in JSON), named here,
     * and fails the command, as kafka-consumer-groups.sh reports an error
     * after what it could print. */
    for (size_t i = 0; i < n; i++) {
        if (rows[i].end_err != SAMSA_OK) {
            char why[128];
            fprintf(stderr, "samsa group describe %s: %s [%d]: log end not read: %s\n", group,
                    rows[i].topic, rows[i].partition,
                    failure(o, rows[i].end_err, NULL, why, sizeof(why)));
            rc = EXIT_FAIL;
        }
    }
    if (o->json) {
        printf("{\"group\":");
        json_opt_str(group);
        printf(",\"state\":");
        json_opt_str(dv->state);
        printf(",\"protocol\":");
        json_opt_str(dv->protocol);
        printf(",\"coordinator\":%d,\"members\":[", dv->coordinator_id);
        for (size_t i = 0; i < dv->member_count; i++) {
            const struct samsa_group_member *m = &dv->members[i];
            printf("%s{\"consumer_id\":", i == 0 ? "" : ",");
            json_opt_str(m->member_id);
            printf(",\"host\":");
            json_opt_str(m->client_host);
            printf(",\"client_id\":");
            json_opt_str(m->client_id);
            printf(",\"partitions\":[");
            for (size_t k = 0; k < m->assignment_count; k++) {
                printf("%s{\"topic\":", k == 0 ? "" : ",");
                json_opt_str(m->assignment[k].topic);
                printf(",\"partition\":%d}", m->assignment[k].partition);
            }
            printf("]}");
        }
        printf("],\"partitions\":[");
        for (size_t i = 0; i < n; i++) {
            const struct group_row *r = &rows[i];
            printf("%s{\"topic\":", i == 0 ? "" : ",");
            json_opt_str(r->topic);
            printf(",\"partition\":%d,\"current_offset\":", r->partition);
            json_opt_ll(r->current);
            printf(",\"log_end_offset\":");
            json_opt_ll(r->end);
            printf(",\"lag\":");
            json_opt_ll(r->current >= 0 && r->end >= 0 ? r->end - r->current : -1);
            printf(",\"consumer_id\":");
            json_opt_str(r->owner != NULL ? r->owner->member_id : NULL);
            printf(",\"host\":");
            json_opt_str(r->owner != NULL ? r->owner->client_host : NULL);
            printf(",\"client_id\":");
            json_opt_str(r->owner != NULL ? r->owner->client_id : NULL);
            printf("}");
        }
        printf("]}\n");
    } else {
        if (dv->member_count == 0) {
            fprintf(stderr, "Consumer group '%s' has no active members.\n", group);
        }
        struct table t = {.cols = 9};
        if (o->members) {
            t.cols = 5;
            table_row(&t, (const char *const[]){"GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID",
                                                 "#PARTITIONS"});
            for (size_t i = 0; i < dv->member_count; i++) {
                const struct samsa_group_member *m = &dv->members[i];
                char count[24];
                snprintf(count, sizeof(count), "%zu", m->assignment_count);
                table_row(&t, (const char *const[]){group, m->member_id, m->client_host,
                                                     m->client_id, count});
            }
        } else {
            table_row(&t, (const char *const[]){"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET",
                                                 "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                                                 "CLIENT-ID"});
        }
        for (size_t i = 0; !o->members && i < n; i++) {
            const struct group_row *r = &rows[i];
            char part[24];
            char cur[24];
            char end[24];
            char lag[24];
            snprintf(part, sizeof(part), "%d", r->partition);
            table_row(&t, (const char *const[]){
                              group, r->topic, part, cell_ll(cur, sizeof(cur), r->current),
                              cell_ll(end, sizeof(end), r->end),
                              cell_ll(lag, sizeof(lag),
                                      r->current >= 0 && r->end >= 0 ? r->end - r->current : -1),
                              r->owner != NULL ? r->owner->member_id : NULL,
                              r->owner != NULL ? r->owner->client_host : NULL,
                              r->owner != NULL ? r->owner->client_id : NULL});
        }
        table_print(&t);
        table_free(&t);
    }
    free(rows);
    samsa_group_description_free(d);
    samsa_partitions_free(offs, noffs);
    return rc;
}

static int group_list(samsa_admin *a, const struct opts *o)
{
    char err[512];
    samsa_group_list *l = NULL;
    int e = samsa_admin_list_groups(a, left_ms(o), &l, err, sizeof(err));
    if (e != SAMSA_OK) {
        fprintf(stderr, "samsa group list: %s\n", err);
        return EXIT_FAIL;
    }
    if (o->json) {
        printf("[");
    }
    for (size_t i = 0; i < l->count; i++) {
        if (o->json) {
            printf("%s{\"group\":", i == 0 ? "" : ",");
            json_opt_str(l->groups[i].group_id);
            printf(",\"protocol_type\":");
            json_opt_str(l->groups[i].protocol_type);
            printf("}");
        } else {
            printf("%s\n", l->groups[i].group_id);
        }
    }
    if (o->json) {
        printf("]\n");
    }
    /* Brokers that did not answer: the list lacks their groups. */
    for (size_t i = 0; i < l->error_count; i++) {
        fprintf(stderr, "samsa group list: %s: its groups are not listed\n",
                l->errors[i].reason);
    }
    int rc = l->error_count > 0 ? EXIT_FAIL : 0;
    samsa_group_list_free(l);
    return rc;
}

/* describe of each GROUP named, or of every group with --all-groups (as
 * kafka-consumer-groups.sh --describe --all-groups): a blank line between
 * groups, a JSON array of them when there can be more than one. Fails when
 * any of them failed, after describing the others. */
static int group_describe_all(samsa_admin *a, const struct opts *o)
{
    samsa_group_list *l = NULL;
    const char *const *names = o->positional;
    size_t n = (size_t)o->npos;
    const char **listed = NULL;
    int rc = 0;
    if (o->all_groups) {
        char err[512];
        int e = samsa_admin_list_groups(a, left_ms(o), &l, err, sizeof(err));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa group describe: listing the groups: %s\n", err);
            return EXIT_FAIL;
        }
        for (size_t i = 0; i < l->error_count; i++) {
            fprintf(stderr, "samsa group describe: %s: its groups are not described\n",
                    l->errors[i].reason);
            rc = EXIT_FAIL;
        }
        listed = calloc(l->count + 1, sizeof(*listed));
        if (listed == NULL) {
            samsa_group_list_free(l);
            return EXIT_FAIL;
        }
        for (size_t i = 0; i < l->count; i++) {
            listed[i] = l->groups[i].group_id;
        }
        names = listed;
        n = l->count;
    }
    bool array = o->json && (o->all_groups || n > 1);
    if (array) {
        printf("[");
    }
    bool shown = false;
    for (size_t i = 0; i < n; i++) {
        fflush(stdout); /* what was printed, before this group's errors */
        if (group_describe(a, o, names[i], &shown) != 0) {
            rc = EXIT_FAIL;
        }
    }
    if (array) {
        printf("]\n");
    }
    free(listed);
    samsa_group_list_free(l);
    return rc;
}

static int group_reset(samsa_admin *a, const struct opts *o, const char *group)
{
    char err[512];
    samsa_metadata *md = NULL;
    if (one_topic(a, "group reset-offsets", o, o->topic, &md) != 0) {
        return EXIT_FAIL;
    }
    int e;
    size_t np = md->topics[0].partition_count;
    struct samsa_partition *parts = calloc(np > 0 ? np : 1, sizeof(*parts));
    size_t n = 0;
    for (size_t i = 0; parts != NULL && i < np; i++) {
        int32_t id = md->topics[0].partitions[i].id;
        if (o->partition < 0 || id == o->partition) {
            parts[n++] = (struct samsa_partition){o->topic, id, -1};
        }
    }
    samsa_metadata_free(md);
    if (parts == NULL || n == 0) {
        fprintf(stderr, "samsa group reset-offsets: topic %s has no partition %d\n", o->topic,
                o->partition);
        free(parts);
        return EXIT_FAIL;
    }
    struct samsa_partition *offs = NULL;
    size_t noffs = 0;
    if (o->reset_mode == RESET_SHIFT) {
        e = samsa_admin_list_group_offsets(a, group, left_ms(o), &offs, &noffs, err,
                                           sizeof(err));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa group reset-offsets %s: %s\n", group, err);
            free(parts);
            return EXIT_FAIL;
        }
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int64_t low = -1;
        int64_t high = -1;
        e = samsa_admin_watermarks(a, o->topic, parts[i].partition, &low, &high, left_ms(o));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa group reset-offsets: %s [%d]: %s\n", o->topic,
                    parts[i].partition, samsa_err_str(e));
            rc = EXIT_FAIL;
            break;
        }
        int64_t want = 0;
        switch (o->reset_mode) {
        case RESET_EARLIEST:
            want = low;
            break;
        case RESET_LATEST:
            want = high;
            break;
        case RESET_OFFSET:
            want = o->reset_value;
            break;
        case RESET_DATETIME:
            e = samsa_admin_list_offset(a, o->topic, parts[i].partition, o->reset_value, &want,
                                        left_ms(o));
            if (e != SAMSA_OK) {
                fprintf(stderr, "samsa group reset-offsets: %s\n", samsa_err_str(e));
                rc = EXIT_FAIL;
            }
            if (want < 0) {
                want = high; /* nothing at or after that time */
            }
            break;
        default: { /* shift from the committed offset (or the log start) */
            int64_t cur = low;
            for (size_t k = 0; k < noffs; k++) {
                if (offs[k].partition == parts[i].partition &&
                    strcmp(offs[k].topic, o->topic) == 0) {
                    cur = offs[k].offset;
                }
            }
            want = cur + o->reset_value;
            break;
        }
        }
        /* Kept inside the log, as kafka-consumer-groups does. */
        parts[i].offset = want < low ? low : (want > high ? high : want);
    }
    samsa_partitions_free(offs, noffs);
    if (rc == 0 && o->execute) {
        e = samsa_admin_alter_group_offsets(a, group, parts, n, left_ms(o), err, sizeof(err));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa group reset-offsets %s: %s\n", group, err);
            rc = EXIT_FAIL;
        }
    }
    if (rc == 0) {
        if (o->json) {
            printf("[");
            for (size_t i = 0; i < n; i++) {
                printf("%s{\"group\":", i == 0 ? "" : ",");
                json_opt_str(group);
                printf(",\"topic\":");
                json_opt_str(o->topic);
                printf(",\"partition\":%d,\"new_offset\":%lld}", parts[i].partition,
                       (long long)parts[i].offset);
            }
            printf("]\n");
        } else {
            printf("%-20s %-20s %-9s %s\n", "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET");
            for (size_t i = 0; i < n; i++) {
                printf("%-20s %-20s %-9d %lld\n", group, o->topic, parts[i].partition,
                       (long long)parts[i].offset);
            }
        }
        if (!o->execute) {
            fprintf(stderr, "(dry run: nothing changed; add --execute to commit these)\n");
        }
    }
    free(parts);
    return rc;
}

static int cmd_group(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(group_help, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : 0;
    }
    const char *verb = argv[0];
    struct opts o;
    int rc = parse("group", argc - 1, argv + 1, &o);
    if (rc != 0) {
        return rc;
    }
    if (o.help) {
        return print_help("group", verb, group_help);
    }
    bool list = strcmp(verb, "list") == 0;
    bool describe = strcmp(verb, "describe") == 0;
    bool reset = strcmp(verb, "reset-offsets") == 0;
    bool del = strcmp(verb, "delete") == 0;
    if (!list && !describe && !reset && !del) {
        return usage_error("group", "unknown command \"%s\"", verb);
    }
    if (describe && (o.all_groups ? o.npos != 0 : o.npos < 1)) {
        return usage_error("group", "%s", "describe wants GROUP... or --all-groups");
    }
    if (describe && o.members && o.state) {
        return usage_error("group", "%s", "one of --members, --offsets, --state");
    }
    if (!list && !describe && o.npos != 1) {
        return usage_error("group", "%s wants one GROUP", verb);
    }
    if (reset && (o.topic == NULL || o.reset_mode == RESET_NONE)) {
        return usage_error("group", "%s", "reset-offsets wants -t TOPIC and one of --to-earliest, "
                                          "--to-latest, --to-offset, --to-datetime, --shift-by");
    }
    samsa_admin *a = NULL;
    rc = make_admin("group", &o, &a);
    if (rc != 0) {
        return rc;
    }
    char err[512];
    if (list) {
        rc = group_list(a, &o);
    } else if (describe) {
        rc = group_describe_all(a, &o);
    } else if (reset) {
        rc = group_reset(a, &o, o.positional[0]);
    } else {
        int e = samsa_admin_delete_group(a, o.positional[0], left_ms(&o), err, sizeof(err));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa group delete %s: %s\n", o.positional[0], err);
            rc = EXIT_FAIL;
        } else {
            printf("Deleted consumer group %s.\n", o.positional[0]);
        }
    }
    samsa_admin_destroy(a);
    return rc;
}

/* ---------------------------------------------------------------- configs */

static const char configs_help[] =
    "usage: samsa configs describe -b BROKERS (--broker ID | -t TOPIC) [--all] [--json]\n"
    "Prints a broker's or a topic's configs that are set (not defaults), or with --all\n"
    "every one, as NAME VALUE SOURCE (kafka-configs.sh --describe; the source as Kafka's\n"
    "DescribeConfigs names it: DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG,\n"
    "DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG). A sensitive\n"
    "value prints as (sensitive), an empty one as \"\", none as -. Topics' configs are changed with samsa topic alter.\n"
    "Common: -X key=value (client configuration), --timeout MS (default 30000).\n"
    "Exit status: 0 done, 1 refused, no such broker or topic, or timed out, 2 usage error.\n";

static const char *config_source(int source)
{
    static const char *const names[] = {"UNKNOWN", "DYNAMIC_TOPIC_CONFIG",
                                        "DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG",
                                        "STATIC_BROKER_CONFIG", "DEFAULT_CONFIG"};
    return source >= 0 && source <= 5 ? names[source] : "UNKNOWN";
}

/* Whether the cluster's metadata lists broker `id` (a DescribeConfigs for a
 * broker that is not there has nowhere to go until --timeout); false after
 * saying why. */
static bool broker_listed(samsa_admin *a, const struct opts *o, const char *id)
{
    static const char *const none[1] = {NULL};
    samsa_metadata *md = NULL;
    int e = samsa_admin_metadata(a, none, 0, left_ms(o), &md);
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa configs describe: metadata: %s\n",
                failure(o, e, NULL, why, sizeof(why)));
        return false;
    }
    char ids[256] = "";
    size_t used = 0;
    bool found = false;
    for (size_t i = 0; i < md->broker_count; i++) {
        char one[16];
        snprintf(one, sizeof(one), "%d", md->brokers[i].id);
        found = found || strcmp(one, id) == 0;
        int w = snprintf(ids + used, sizeof(ids) - used, "%s%s", i == 0 ? "" : ", ", one);
        used = w > 0 && (size_t)w < sizeof(ids) - used ? used + (size_t)w : used;
    }
    samsa_metadata_free(md);
    if (!found) {
        fprintf(stderr, "samsa configs describe: broker %s is not in the cluster (brokers: %s)\n",
                id, ids);
    }
    return found;
}

static int cmd_configs(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(configs_help, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : 0;
    }
    struct opts o;
    int rc = parse("configs", argc - 1, argv + 1, &o);
    if (rc != 0) {
        return rc;
    }
    if (o.help) {
        return print_help("configs", argv[0], configs_help);
    }
    if (strcmp(argv[0], "describe") != 0) {
        return usage_error("configs", "unknown command \"%s\"", argv[0]);
    }
    if ((o.broker_id == NULL) == (o.topic == NULL) || o.npos != 0) {
        return usage_error("configs", "%s", "describe wants one of --broker ID or -t TOPIC");
    }
    samsa_admin *a = NULL;
    rc = make_admin("configs", &o, &a);
    if (rc != 0) {
        return rc;
    }
    char err[512];
    bool broker = o.broker_id != NULL;
    const char *name = broker ? o.broker_id : o.topic;
    if (broker && !broker_listed(a, &o, name)) {
        samsa_admin_destroy(a);
        return EXIT_FAIL;
    }
    samsa_configs *cf = NULL;
    int e = samsa_admin_describe_configs(a, broker ? SAMSA_RESOURCE_BROKER : SAMSA_RESOURCE_TOPIC,
                                         name, left_ms(&o), &cf, err, sizeof(err));
    samsa_admin_destroy(a);
    if (e == SAMSA_ERR_UNKNOWN_TOPIC && !broker) {
        topic_failed("configs describe", name, e);
        return EXIT_FAIL;
    }
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa configs describe: %s %s: %s\n", broker ? "broker" : "topic", name,
                failure(&o, e, err, why, sizeof(why)));
        return EXIT_FAIL;
    }
    struct table t = {.cols = 3};
    table_row(&t, (const char *const[]){"NAME", "VALUE", "SOURCE"});
    size_t shown = 0;
    if (o.json) {
        printf("[");
    }
    for (size_t i = 0; i < cf->count; i++) {
        const struct samsa_config_entry *c = &cf->entries[i];
        bool is_default = c->source >= 0 ? c->source == 5 : c->is_default;
        if (is_default && !o.all) {
            continue;
        }
        const char *value = c->sensitive ? "(sensitive)" : c->value;
        if (o.json) {
            printf("%s{\"name\":", shown++ == 0 ? "" : ",");
            json_str(stdout, c->name, strlen(c->name));
            printf(",\"value\":");
            json_opt_str(c->sensitive ? NULL : c->value);
            printf(",\"source\":\"%s\",\"read_only\":%s,\"sensitive\":%s}",
                   config_source(c->source), c->read_only ? "true" : "false",
                   c->sensitive ? "true" : "false");
        } else {
            /* an empty value would read as a missing column */
            table_row(&t, (const char *const[]){
                              c->name, value == NULL ? "-" : value[0] == '\0' ? "\"\"" : value,
                              config_source(c->source)});
        }
    }
    if (o.json) {
        printf("]\n");
    } else {
        table_print(&t);
    }
    table_free(&t);
    samsa_configs_free(cf);
    return 0;
}

/* ------------------------------------------------------------------- perf */

static const char perf_help[] =
    "usage: samsa perf produce -b BROKERS -t TOPIC [--count N] [--size BYTES] [-p PARTITION]\n"
    "                          [--interval MS] [--json] [-X key=value]...\n"
    "       samsa perf consume -b BROKERS -t TOPIC [--count N] [-e] [--group GROUP]\n"
    "                          [--interval MS] [--json] [-X key=value]...\n"
    "produce sends N records (default 100000) of BYTES (default 100) and measures each\n"
    "one's delivery latency (produce call to delivery report); consume reads N records\n"
    "(or to the end with -e) from the beginning, counts records and MB, and measures\n"
    "end-to-end latency (now minus the record's timestamp) of the records produced\n"
    "after it started only (a backlog's would be its age). A progress line goes to\n"
    "stderr every --interval MS (default 1000); at the end: records, MB, records/s,\n"
    "MB/s and latency percentiles (ms).\n"
    "--timeout MS (default 30000): produce waits that long for the last delivery\n"
    "reports once all are sent; consume fails when nothing came within it of the start.\n"
    "Exit status: 0 done, 1 records failed or it timed out, 2 usage error.\n";

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile (nearest rank) of sorted v[0..n). */
static int64_t percentile(const int64_t *v, size_t n, double p)
{
    if (n == 0) {
        return 0;
    }
    size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1) {
        rank = 1;
    }
    return v[(rank > n ? n : rank) - 1];
}

struct perf_state {
    int64_t *lat;       /* microseconds (produce) or milliseconds (consume), per record */
    int64_t *sent_us;   /* produce: when each record was handed to samsa_produce */
    size_t done;
    size_t nlat;        /* lat[0..nlat): produce: every delivered record; consume: those
                         * produced after the start (the others' "latency" would be
                         * their age in the backlog) */
    size_t failed;
    int first_err;
    uint64_t bytes;
    int64_t started_ms;
    int64_t next_progress;
    bool tty;
};

static void progress(struct perf_state *st, const struct opts *o, const char *verb, size_t sent)
{
    int64_t now = mono_ms();
    if (now < st->next_progress) {
        return;
    }
    st->next_progress = now + o->interval_ms;
    double secs = (double)(now - st->started_ms) / 1000.0;
    char sent_part[48] = "";
    if (strcmp(verb, "produced") == 0) { /* sent and delivered differ; read is done */
        snprintf(sent_part, sizeof(sent_part), "%zu sent, ", sent);
    }
    fprintf(stderr, "%s%s: %s%zu records, %.2f MB, %.0f records/s, %.2f MB/s%s",
            st->tty ? "\r" : "", verb, sent_part, st->done, (double)st->bytes / 1e6,
            secs > 0 ? (double)st->done / secs : 0.0,
            secs > 0 ? (double)st->bytes / 1e6 / secs : 0.0, st->tty ? "   " : "\n");
}

static void report(struct perf_state *st, const struct opts *o, const char *verb,
                   const char *unit, double scale)
{
    double secs = (double)(mono_ms() - st->started_ms) / 1000.0;
    if (secs <= 0) {
        secs = 0.001;
    }
    if (st->tty) {
        fputc('\n', stderr);
    }
    qsort(st->lat, st->nlat, sizeof(*st->lat), cmp_i64);
    double p50 = (double)percentile(st->lat, st->nlat, 50) / scale;
    double p95 = (double)percentile(st->lat, st->nlat, 95) / scale;
    double p99 = (double)percentile(st->lat, st->nlat, 99) / scale;
    double max = st->nlat > 0 ? (double)st->lat[st->nlat - 1] / scale : 0.0;
    bool consume = strcmp(verb, "consumed") == 0;
    if (o->json) {
        printf("{\"%s\":%zu,\"failed\":%zu,\"bytes\":%llu,\"seconds\":%.3f,"
               "\"records_per_sec\":%.1f,\"mb_per_sec\":%.3f,\"latency_records\":%zu,"
               "\"latency_ms\":",
               verb, st->done, st->failed, (unsigned long long)st->bytes, secs,
               (double)st->done / secs, (double)st->bytes / 1e6 / secs, st->nlat);
        if (st->nlat > 0) {
            printf("{\"p50\":%.3f,\"p95\":%.3f,\"p99\":%.3f,\"max\":%.3f}}\n", p50, p95, p99,
                   max);
        } else {
            printf("null}\n");
        }
        return;
    }
    printf("%zu records %s", st->done, verb);
    if (!consume) {
        printf(" (%zu failed)", st->failed);
    }
    printf(", %.2f MB in %.2f s: %.0f records/s, %.2f MB/s\n", (double)st->bytes / 1e6, secs,
           (double)st->done / secs, (double)st->bytes / 1e6 / secs);
    if (consume && st->nlat == 0) {
        printf("%s latency: none measured (no record was produced after the start)\n", unit);
    } else if (consume) {
        printf("%s latency (ms) of the %zu records produced after the start: p50 %.3f, "
               "p95 %.3f, p99 %.3f, max %.3f\n",
               unit, st->nlat, p50, p95, p99, max);
    } else {
        printf("%s latency (ms): p50 %.3f, p95 %.3f, p99 %.3f, max %.3f\n", unit, p50, p95, p99,
               max);
    }
}

static void on_perf_delivery(const struct samsa_delivery *d, void *opaque)
{
    struct perf_state *st = opaque;
    size_t i = (size_t)(uintptr_t)d->opaque;
    if (d->err != SAMSA_OK) {
        if (st->failed == 0) {
            st->first_err = d->err;
        }
        st->failed++;
        return;
    }
    st->lat[st->done++] = mono_us() - st->sent_us[i];
    st->nlat = st->done;
    st->bytes += d->value_len;
}

static int perf_produce(const struct opts *o, samsa_conf *conf, long long count)
{
    struct perf_state st = {0};
    st.lat = calloc((size_t)count + 1, sizeof(*st.lat));
    st.sent_us = calloc((size_t)count + 1, sizeof(*st.sent_us));
    char *value = malloc((size_t)o->size + 1);
    if (st.lat == NULL || st.sent_us == NULL || value == NULL) {
        fprintf(stderr, "samsa perf produce: out of memory\n");
        free(st.lat);
        free(st.sent_us);
        free(value);
        samsa_conf_destroy(conf);
        return EXIT_FAIL;
    }
    for (long long i = 0; i < o->size; i++) {
        value[i] = (char)('a' + i % 26);
    }
    samsa_conf_set_delivery_cb(conf, on_perf_delivery, &st);
    char err[512];
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (p == NULL) {
        fprintf(stderr, "samsa perf produce: %s\n", err);
        free(st.lat);
        free(st.sent_us);
        free(value);
        return EXIT_USAGE;
    }
    st.tty = isatty(2) != 0;
    st.started_ms = mono_ms();
    st.next_progress = st.started_ms + o->interval_ms;
    size_t sent = 0;
    while (!stop && sent < (size_t)count) {
        struct samsa_record r = {.topic = o->topic, .partition = o->partition, .value = value,
                                 .value_len = (size_t)o->size, .opaque = (void *)(uintptr_t)sent};
        st.sent_us[sent] = mono_us();
        int e = samsa_produce(p, &r);
        if (e == SAMSA_ERR_QUEUE_FULL) {
            (void)samsa_producer_poll(p, 10);
            progress(&st, o, "produced", sent);
            continue;
        }
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa perf produce: %s\n", samsa_err_str(e));
            st.failed++;
            break;
        }
        sent++;
        if (sent % 1024 == 0) {
            (void)samsa_producer_poll(p, 0);
            progress(&st, o, "produced", sent);
        }
    }
    /* As produce: the wait for the last reports once all are sent. */
    int64_t deadline = mono_ms() + o->timeout_ms;
    while (samsa_producer_outq_len(p) > 0 && mono_ms() < deadline && !stop) {
        (void)samsa_producer_poll(p, 100);
        progress(&st, o, "produced", sent);
    }
    size_t lost = samsa_producer_close(p, 0);
    samsa_producer_destroy(p);
    report(&st, o, "produced", "delivery", 1000.0);
    if (st.failed > 0) {
        fprintf(stderr, "samsa perf produce: %zu records failed (first: %s)\n", st.failed,
                samsa_err_str(st.first_err));
    }
    free(st.lat);
    free(st.sent_us);
    free(value);
    return st.failed > 0 || lost > 0 || st.done < (size_t)count ? EXIT_FAIL : 0;
}

static int perf_consume(const struct opts *o, samsa_conf *conf, long long count)
{
    char err[512];
    struct samsa_partition *parts = NULL;
    size_t n = 0;
    if (o->group == NULL) {
        samsa_admin *a = samsa_admin_new(conf, err, sizeof(err));
        samsa_metadata *md = NULL;
        if (a == NULL) {
            fprintf(stderr, "samsa perf consume: %s\n", err);
        }
        int rc = a != NULL ? one_topic(a, "perf consume", o, o->topic, &md) : EXIT_FAIL;
        samsa_admin_destroy(a);
        if (rc != 0) {
            samsa_conf_destroy(conf);
            return rc;
        }
        parts = calloc(md->topics[0].partition_count + 1, sizeof(*parts));
        for (size_t i = 0; parts != NULL && i < md->topics[0].partition_count; i++) {
            parts[n++] = (struct samsa_partition){o->topic, md->topics[0].partitions[i].id,
                                                  SAMSA_OFFSET_BEGINNING};
        }
        samsa_metadata_free(md);
    } else if (samsa_conf_set(conf, "group.id", o->group, err, sizeof(err)) != SAMSA_OK ||
               samsa_conf_set(conf, "auto.offset.reset", "earliest", err, sizeof(err)) !=
                   SAMSA_OK) {
        fprintf(stderr, "samsa perf consume: %s\n", err);
        samsa_conf_destroy(conf);
        return EXIT_USAGE;
    }
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (c == NULL) {
        fprintf(stderr, "samsa perf consume: %s\n", err);
        free(parts);
        return EXIT_USAGE;
    }
    const char *topics[1] = {o->topic};
    int e = o->group != NULL ? samsa_consumer_subscribe(c, topics, 1)
                             : samsa_consumer_assign(c, parts, n);
    free(parts);
    if (e != SAMSA_OK) {
        fprintf(stderr, "samsa perf consume: %s\n", samsa_err_str(e));
        samsa_consumer_destroy(c);
        return EXIT_FAIL;
    }
    size_t cap = count > 0 ? (size_t)count : 1024;
    struct perf_state st = {0};
    st.lat = calloc(cap, sizeof(*st.lat));
    if (st.lat == NULL) {
        samsa_consumer_destroy(c);
        return EXIT_FAIL;
    }
    st.tty = isatty(2) != 0;
    st.started_ms = mono_ms();
    st.next_progress = st.started_ms + o->interval_ms;
    int64_t started_wall = wall_ms();
    int64_t deadline = o->deadline_ms;
    int rc = 0;
    while (!stop && (count < 0 || st.done < (size_t)count)) {
        samsa_message *m = samsa_consumer_poll(c, 100);
        progress(&st, o, "consumed", 0);
        if (m == NULL) {
            if (o->exit_at_end && samsa_consumer_at_end(c)) {
                break;
            }
            if (st.done == 0 && mono_ms() > deadline) {
                fprintf(stderr, "samsa perf consume: nothing within %d ms\n", o->timeout_ms);
                rc = EXIT_FAIL;
                break;
            }
            continue;
        }
        st.done++;
        st.bytes += m->value_len + m->key_len;
        /* Now minus the record's timestamp is its end-to-end latency only
         * for a record produced after the start; an older one's would be
         * its age in the backlog. */
        if (m->timestamp >= started_wall) {
            if (st.nlat == cap) {
                int64_t *nl = realloc(st.lat, cap * 2 * sizeof(*nl));
                if (nl == NULL) {
                    samsa_message_free(m);
                    break;
                }
                st.lat = nl;
                cap *= 2;
            }
            int64_t lat = wall_ms() - m->timestamp;
            st.lat[st.nlat++] = lat > 0 ? lat : 0;
        }
        samsa_message_free(m);
    }
    report(&st, o, "consumed", "end-to-end", 1.0);
    free(st.lat);
    samsa_consumer_destroy(c);
    return rc;
}

static int cmd_perf(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(perf_help, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : 0;
    }
    const char *verb = argv[0];
    struct opts o;
    int rc = parse("perf", argc - 1, argv + 1, &o);
    if (rc != 0) {
        return rc;
    }
    if (o.help) {
        return print_help("perf", verb, perf_help);
    }
    bool produce = strcmp(verb, "produce") == 0;
    if (!produce && strcmp(verb, "consume") != 0) {
        return usage_error("perf", "unknown command \"%s\"", verb);
    }
    if (o.topic == NULL) {
        return usage_error("perf", "%s", "-t TOPIC is required");
    }
    long long count = o.count;
    if (count < 0 && (produce || !o.exit_at_end)) {
        count = 100000;
    }
    if (count > 100000000) {
        return usage_error("perf", "%s", "--count above 100000000");
    }
    samsa_conf *conf = NULL;
    rc = make_conf("perf", &o, &conf);
    if (rc != 0) {
        return rc;
    }
    return produce ? perf_produce(&o, conf, count) : perf_consume(&o, conf, count);
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
     "usage: samsa group reset-offsets -b BROKERS GROUP -t TOPIC [-p PARTITION]\n"
     "                  (--to-earliest | --to-latest | --to-offset N | --to-datetime MS |\n"
     "                   --shift-by N) [--execute] [--json]\n"
     "Prints GROUP TOPIC PARTITION NEW-OFFSET and changes nothing unless --execute is\n"
     "given (the group must have no members then); offsets are clamped to the log.\n"},
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
};

/* Prints VERB's own help when there is one, else the command's; 0. */
static int print_help(const char *cmd, const char *verb, const char *all)
{
    for (size_t i = 0; verb != NULL && i < sizeof(verb_helps) / sizeof(verb_helps[0]); i++) {
        if (strcmp(verb_helps[i].cmd, cmd) == 0 && strcmp(verb_helps[i].verb, verb) == 0) {
            fputs(verb_helps[i].text, stdout);
            printf("Common: -X key=value, --command-config FILE, --timeout MS (default 30000).\n"
                   "All of `samsa %s`: samsa %s --help.\n", cmd, cmd);
            return 0;
        }
    }
    fputs(all, stdout);
    return 0;
}

/* ------------------------------------------------------------------- main */

static const char main_help[] =
    "usage: samsa COMMAND [ARGS]\n"
    "Commands:\n"
    "  topic create|list|describe|alter|delete    manage topics\n"
    "  produce                                    send standard input's lines as records\n"
    "  consume                                    print records of a topic (or as a group)\n"
    "  group list|describe|reset-offsets|delete   consumer groups and their offsets\n"
    "  perf produce|consume                       throughput and latency\n"
    "  cluster info|metadata                      brokers, controller, partitions\n"
    "  configs describe                           a broker's or a topic's configs\n"
    "Every command takes -b BROKERS (or $SAMSA_BROKERS), -X key=value,\n"
    "--command-config FILE and --help (`samsa COMMAND VERB --help`).\n"
    "Client properties (key=value lines, as kafka's --command-config files) are read\n"
    "from $XDG_CONFIG_HOME/samsa/config (~/.config/samsa/config) when it exists, then\n"
    "from --command-config FILE; -b and -X override them. bootstrap.servers there\n"
    "stands for -b.\n"
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
    if (strcmp(cmd, "group") == 0) {
        return cmd_group(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "perf") == 0) {
        return cmd_perf(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "configs") == 0) {
        return cmd_configs(argc - 2, argv + 2);
    }
    fprintf(stderr, "samsa: unknown command \"%s\"\n%s", cmd, main_help);
    return EXIT_USAGE;
}
