/*
 * A producer on libsamsa's public API that keeps producing, for the cluster
 * tests (a leader killed or bounced while it runs):
 *
 *   cluster_producer BOOTSTRAP TOPIC [-X key=value]... [--rate N] [--keys K]
 *                    [--close-ms MS]
 *
 * Offers N records a second (default 400) with the library's defaults
 * (idempotent, acks=all) unless -X says otherwise: key "k<i>" for i cycling
 * over K keys (default 12), value "k<i>:<seq>" with seq counting per key, so
 * that a checker can tell the order per key. A full queue is waited out
 * (samsa_producer_poll) and the same record offered again: no sequence is
 * skipped. Stops producing at SIGTERM, then closes with --close-ms (default
 * 180000) to deliver what is left.
 *
 * Prints one line per event on stdout, flushed at once:
 *   ack PARTITION OFFSET VALUE   a delivery report saying delivered
 *   fail VALUE ERRNAME           a delivery report saying not delivered
 *   error NAME REASON            the error callback
 *   closed OFFERED UNDELIVERED   after samsa_producer_close returned
 * Exit status: 0, 1 when a record was not delivered, 2 on a usage or
 * configuration error.
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

static void on_delivery(const struct samsa_delivery *r, void *opaque)
{
    (void)opaque;
    if (r->err == SAMSA_OK) {
        printf("ack %d %lld %.*s\n", r->partition, (long long)r->offset, (int)r->value_len,
               (const char *)r->value);
    } else {
        printf("fail %.*s %s\n", (int)r->value_len, (const char *)r->value,
               samsa_err_name(r->err));
    }
    fflush(stdout);
}

static void on_error(int err, const char *reason, void *opaque)
{
    (void)opaque;
    printf("error %s %s\n", samsa_err_name(err), reason);
    fflush(stdout);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int usage(void)
{
    fprintf(stderr, "usage: cluster_producer BOOTSTRAP TOPIC [-X key=value]... [--rate N] "
                    "[--keys K] [--close-ms MS]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        return usage();
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    char err[512];
    samsa_conf *conf = samsa_conf_new();
    if (samsa_conf_set(conf, "bootstrap.servers", argv[1], err, sizeof(err)) != SAMSA_OK) {
        fprintf(stderr, "%s\n", err);
        samsa_conf_destroy(conf);
        return 2;
    }
    long rate = 400;
    long keys = 12;
    long close_ms = 180000;
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) {
            samsa_conf_destroy(conf);
            return usage();
        }
        const char *v = argv[++i];
        if (strcmp(argv[i - 1], "-X") == 0) {
            char key[256];
            const char *eq = strchr(v, '=');
            if (eq == NULL || (size_t)(eq - v) >= sizeof(key)) {
                samsa_conf_destroy(conf);
                return usage();
            }
            memcpy(key, v, (size_t)(eq - v));
            key[eq - v] = '\0';
            if (samsa_conf_set(conf, key, eq + 1, err, sizeof(err)) != SAMSA_OK) {
                fprintf(stderr, "-X %s: %s\n", v, err);
                samsa_conf_destroy(conf);
                return 2;
            }
        } else if (strcmp(argv[i - 1], "--rate") == 0) {
            rate = strtol(v, NULL, 10);
        } else if (strcmp(argv[i - 1], "--keys") == 0) {
            keys = strtol(v, NULL, 10);
        } else if (strcmp(argv[i - 1], "--close-ms") == 0) {
            close_ms = strtol(v, NULL, 10);
        } else {
            samsa_conf_destroy(conf);
            return usage();
        }
    }
    if (rate < 1 || rate > 1000000 || keys < 1 || keys > 10000 || close_ms < 0 ||
        close_ms > 3600000) {
        samsa_conf_destroy(conf);
        return usage();
    }
    samsa_conf_set_delivery_cb(conf, on_delivery, NULL);
    samsa_conf_set_error_cb(conf, on_error, NULL);
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (p == NULL) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    long long *seq = calloc((size_t)keys, sizeof(*seq));
    if (seq == NULL) {
        samsa_producer_destroy(p);
        return 2;
    }
    long long offered = 0;
    int64_t start = now_ms();
    while (!stop) {
        /* the records due by now at `rate` a second, then a short poll */
        long long due = (now_ms() - start) * rate / 1000;
        while (!stop && offered < due) {
            long k = (long)(offered % keys);
            char key[32];
            char value[64];
            int kl = snprintf(key, sizeof(key), "k%ld", k);
            int vl = snprintf(value, sizeof(value), "k%ld:%lld", k, seq[k]);
            struct samsa_record r = {SAMSA_RECORD_INIT,
                                     .topic = argv[2],
                                     .partition = SAMSA_PARTITION_ANY,
                                     .key = key,
                                     .key_len = (size_t)kl,
                                     .value = value,
                                     .value_len = (size_t)vl};
            int e = samsa_produce(p, &r);
            if (e == SAMSA_ERR_QUEUE_FULL) {
                samsa_producer_poll(p, 100);
                continue;
            }
            if (e != SAMSA_OK) {
                printf("error %s samsa_produce\n", samsa_err_name(e));
                fflush(stdout);
                stop = 1;
                break;
            }
            seq[k]++;
            offered++;
        }
        samsa_producer_poll(p, 2);
    }
    size_t undelivered = samsa_producer_close(p, (int)close_ms);
    samsa_producer_destroy(p);
    free(seq);
    printf("closed %lld %zu\n", offered, undelivered);
    fflush(stdout);
    return undelivered == 0 ? 0 : 1;
}
