/*
 * samsa-mock-cluster: librdkafka's in-memory mock cluster (rdkafka_mock.h) as a
 * process of its own, the peer Samsa is measured against.
 *
 *   samsa-mock-cluster [--brokers N] [--topic NAME:PARTITIONS]...
 *
 * It starts N mock brokers (default 1) on 127.0.0.1 ephemeral ports, creates the
 * topics given (replication factor 1), prints the bootstrap address list as one line
 * on stdout, and serves until SIGTERM or SIGINT. Those two signals are blocked before
 * rd_kafka_new() so that every librdkafka thread inherits the mask and sigwait() in
 * the main thread receives them.
 *
 * The mock keeps only the newest 5 MiB or 100,000 batches of each partition, answers
 * a Fetch with at most one batch per partition, and persists nothing.
 */
#define _GNU_SOURCE

#include "args.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOPICS 256

static void usage(FILE *to)
{
    fprintf(to, "usage: samsa-mock-cluster [--brokers N] [--topic NAME:PARTITIONS]...\n"
                "Prints the bootstrap address list, then serves until SIGTERM or SIGINT.\n");
}

struct topic_arg {
    char name[250];
    int partitions;
};

/* Splits NAME:PARTITIONS; 0 on success. */
static int parse_topic(const char *s, struct topic_arg *t)
{
    const char *colon = strrchr(s, ':');
    if (colon == NULL || colon == s || (size_t)(colon - s) >= sizeof(t->name)) {
        return -1;
    }
    int64_t n = 0;
    if (perf_parse_i64(colon + 1, 1, 100000, &n) != 0) {
        return -1;
    }
    size_t len = (size_t)(colon - s);
    memcpy(t->name, s, len);
    t->name[len] = '\0';
    t->partitions = (int)n;
    return 0;
}

int main(int argc, char **argv)
{
    static struct topic_arg topics[MAX_TOPICS];
    size_t ntopics = 0;
    int64_t brokers = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--brokers") == 0 && i + 1 < argc) {
            if (perf_parse_i64(argv[++i], 1, 64, &brokers) != 0) {
                fprintf(stderr, "samsa-mock-cluster: bad --brokers '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--topic") == 0 && i + 1 < argc) {
            if (ntopics >= MAX_TOPICS || parse_topic(argv[++i], &topics[ntopics]) != 0) {
                fprintf(stderr, "samsa-mock-cluster: bad --topic '%s' (NAME:PARTITIONS)\n",
                        argv[i]);
                return 2;
            }
            ntopics++;
        } else {
            usage(stderr);
            return 2;
        }
    }

    /* before rd_kafka_new(): its threads inherit this mask, so only sigwait sees them */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &stop, NULL) != 0) {
        fprintf(stderr, "samsa-mock-cluster: pthread_sigmask failed\n");
        return 1;
    }

    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    /* the handle only hosts the cluster; it connects nowhere, so its notice about
     * having no bootstrap.servers (log level 5) is left out */
    if (rd_kafka_conf_set(conf, "client.id", "samsa-mock-cluster", errstr, sizeof(errstr)) !=
            RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "log_level", "4", errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "samsa-mock-cluster: %s\n", errstr);
        rd_kafka_conf_destroy(conf);
        return 1;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (rk == NULL) {
        fprintf(stderr, "samsa-mock-cluster: rd_kafka_new: %s\n", errstr);
        rd_kafka_conf_destroy(conf);
        return 1;
    }
    int rc = 1;
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, (int)brokers);
    if (mc == NULL) {
        fprintf(stderr, "samsa-mock-cluster: rd_kafka_mock_cluster_new failed\n");
        goto out_destroy_rk;
    }
    for (size_t i = 0; i < ntopics; i++) {
        rd_kafka_resp_err_t err =
            rd_kafka_mock_topic_create(mc, topics[i].name, topics[i].partitions, 1);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            fprintf(stderr, "samsa-mock-cluster: topic %s: %s\n", topics[i].name,
                    rd_kafka_err2str(err));
            goto out_destroy_mc;
        }
    }
    printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
    fflush(stdout);

    int sig = 0;
    if (sigwait(&stop, &sig) != 0) {
        fprintf(stderr, "samsa-mock-cluster: sigwait failed\n");
        goto out_destroy_mc;
    }
    rc = 0;

out_destroy_mc:
    rd_kafka_mock_cluster_destroy(mc);
out_destroy_rk:
    rd_kafka_destroy(rk);
    return rc;
}
