/*
 * samsa tool: the client configuration a command runs on (config files,
 * -b, -X), the bootstrap probe that says at once when no broker can be
 * reached, the admin handle, and one topic's metadata.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tool.h"

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
int make_conf(const char *cmd, const struct opts *o, samsa_conf **out)
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
int make_admin(const char *cmd, const struct opts *o, samsa_admin **out)
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

/* The one topic's metadata into *out (the caller's), or EXIT_FAIL after
 * saying why (topic_failed). */
int one_topic(samsa_admin *a, const char *cmd, const struct opts *o, const char *topic,
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
