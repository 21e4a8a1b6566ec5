/*
 * A consumer-group member on libsamsa's public API, for the group tests:
 *
 *   group_member BOOTSTRAP GROUP TOPIC[,TOPIC...] [-X key=value]...
 *                [--commit none|sync|async|auto] [--count N]
 *                [--stall-after N --stall-ms MS]
 *
 * Prints one line per event on stdout, flushed at once:
 *   assigned T:P T:P ...        the rebalance callback (assigned)
 *   revoked T:P T:P ...         the rebalance callback (revoked)
 *   msg T P OFFSET VALUE        a consumed record
 *   error NAME REASON           the error callback
 *   commit-error NAME           a synchronous commit that failed
 *   committed T P OFFSET        a synchronous commit that succeeded (OFFSET:
 *                               the next record to read)
 *   closed                      after samsa_consumer_close returned
 * --commit: sync or async commits each record's offset + 1 after printing
 * it; auto leaves enable.auto.commit on (the default); none turns it off.
 * Stops at SIGTERM or after --count records, then closes (commit, leave).
 * --stall-after N stops polling for MS milliseconds after N records.
 * Exit status: 0, or 2 on a usage or configuration error.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <samsa/samsa.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static void on_rebalance(bool assigned, const struct samsa_partition *parts, size_t count,
                         void *opaque)
{
    (void)opaque;
    printf("%s", assigned ? "assigned" : "revoked");
    for (size_t i = 0; i < count; i++) {
        printf(" %s:%d", parts[i].topic, parts[i].partition);
    }
    printf("\n");
    fflush(stdout);
}

static void on_error(int err, const char *reason, void *opaque)
{
    (void)opaque;
    printf("error %s %s\n", samsa_err_name(err), reason);
    fflush(stdout);
}

static int usage(void)
{
    fprintf(stderr, "usage: group_member BOOTSTRAP GROUP TOPIC[,TOPIC...] [-X key=value]... "
                    "[--commit none|sync|async|auto] [--count N] [--stall-after N --stall-ms MS]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        return usage();
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    char err[512];
    samsa_conf *conf = samsa_conf_new();
    if (samsa_conf_set(conf, "bootstrap.servers", argv[1], err, sizeof(err)) != SAMSA_OK ||
        samsa_conf_set(conf, "group.id", argv[2], err, sizeof(err)) != SAMSA_OK ||
        samsa_conf_set(conf, "auto.offset.reset", "earliest", err, sizeof(err)) != SAMSA_OK) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    const char *commit = "auto";
    long long count = -1;
    long long stall_after = -1;
    long long stall_ms = 0;
    for (int i = 4; i < argc; i++) {
        if (i + 1 >= argc) {
            return usage();
        }
        const char *v = argv[++i];
        if (strcmp(argv[i - 1], "-X") == 0) {
            char key[256];
            const char *eq = strchr(v, '=');
            if (eq == NULL || (size_t)(eq - v) >= sizeof(key)) {
                return usage();
            }
            memcpy(key, v, (size_t)(eq - v));
            key[eq - v] = '\0';
            if (samsa_conf_set(conf, key, eq + 1, err, sizeof(err)) != SAMSA_OK) {
                fprintf(stderr, "-X %s: %s\n", v, err);
                return 2;
            }
        } else if (strcmp(argv[i - 1], "--commit") == 0) {
            commit = v;
        } else if (strcmp(argv[i - 1], "--count") == 0) {
            count = strtoll(v, NULL, 10);
        } else if (strcmp(argv[i - 1], "--stall-after") == 0) {
            stall_after = strtoll(v, NULL, 10);
        } else if (strcmp(argv[i - 1], "--stall-ms") == 0) {
            stall_ms = strtoll(v, NULL, 10);
        } else {
            return usage();
        }
    }
    bool sync = strcmp(commit, "sync") == 0;
    bool async = strcmp(commit, "async") == 0;
    if (!sync && !async && strcmp(commit, "auto") != 0 && strcmp(commit, "none") != 0) {
        return usage();
    }
    if (strcmp(commit, "auto") != 0 &&
        samsa_conf_set(conf, "enable.auto.commit", "false", err, sizeof(err)) != SAMSA_OK) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    samsa_conf_set_rebalance_cb(conf, on_rebalance, NULL);
    samsa_conf_set_error_cb(conf, on_error, NULL);
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (c == NULL) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    const char *topics[64];
    size_t nt = 0;
    char *list = argv[3];
    while (nt < 64 && list != NULL && *list != '\0') {
        topics[nt++] = list;
        char *comma = strchr(list, ',');
        if (comma != NULL) {
            *comma = '\0';
            comma++;
        }
        list = comma;
    }
    int e = samsa_consumer_subscribe(c, topics, nt);
    if (e != SAMSA_OK) {
        fprintf(stderr, "subscribe: %s\n", samsa_err_str(e));
        samsa_consumer_destroy(c);
        return 2;
    }
    long long got = 0;
    while (!stop && (count < 0 || got < count)) {
        if (got == stall_after && stall_ms > 0) {
            struct timespec ts = {(time_t)(stall_ms / 1000), (long)(stall_ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
            stall_after = -1;
        }
        samsa_message *m = samsa_consumer_poll(c, 100);
        if (m == NULL) {
            continue;
        }
        got++;
        printf("msg %s %d %lld %.*s\n", m->topic, m->partition, (long long)m->offset,
               (int)m->value_len, m->value != NULL ? (const char *)m->value : "");
        fflush(stdout);
        struct samsa_partition next = {m->topic, m->partition, m->offset + 1};
        if (sync || async) {
            e = samsa_consumer_commit(c, &next, 1, async, 10000);
            if (e != SAMSA_OK) {
                printf("commit-error %s\n", samsa_err_name(e));
                fflush(stdout);
            } else if (sync) {
                printf("committed %s %d %lld\n", next.topic, next.partition,
                       (long long)next.offset);
                fflush(stdout);
            }
        }
        samsa_message_free(m);
    }
    samsa_consumer_destroy(c);
    printf("closed\n");
    fflush(stdout);
    return 0;
}
