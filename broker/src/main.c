/*
 * samsa-broker: command line.
 *
 *   samsa-broker CONFIG [--override key=value]...
 *
 * CONFIG is a Kafka-style server.properties. Without zookeeper.connect the
 * broker runs standalone, keeping its metadata in a file under its first
 * log dir; with it, the broker is a member of the cluster that ZooKeeper
 * coordinates. SIGTERM, SIGINT or SIGHUP
 * (unless ignored at start): stop accepting, finish in-flight requests,
 * flush, write checkpoints, exit 0.
 */
#define _GNU_SOURCE

#include "base/logging.h"
#include "broker.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SAMSA_VERSION
#define SAMSA_VERSION "0.0.0"
#endif

#define MAX_OVERRIDES 256

static void usage(FILE *to)
{
    fprintf(to, "usage: samsa-broker CONFIG [--override key=value]...\n"
                "       samsa-broker --help | --version\n"
                "\n"
                "CONFIG is a Kafka-style server.properties file (broker.id, listeners,\n"
                "log.dirs, num.partitions, ...). --override sets a key after the file.\n"
                "Without zookeeper.connect the broker runs standalone; with it, it joins\n"
                "the cluster that ZooKeeper coordinates (broker.id must be set).\n");
}

int main(int argc, char **argv)
{
    const char *config_path = NULL;
    const char *overrides[MAX_OVERRIDES];
    size_t noverrides = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("samsa-broker %s\n", SAMSA_VERSION);
            return 0;
        }
        if (strcmp(argv[i], "--override") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "samsa-broker: --override needs key=value\n");
                return 2;
            }
            if (noverrides == MAX_OVERRIDES) {
                fprintf(stderr, "samsa-broker: too many --override options\n");
                return 2;
            }
            overrides[noverrides++] = argv[++i];
            continue;
        }
        if (strncmp(argv[i], "--override=", 11) == 0) {
            if (noverrides == MAX_OVERRIDES) {
                fprintf(stderr, "samsa-broker: too many --override options\n");
                return 2;
            }
            overrides[noverrides++] = argv[i] + 11;
            continue;
        }
        if (argv[i][0] == '-') {
            fprintf(stderr, "samsa-broker: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (config_path != NULL) {
            fprintf(stderr, "samsa-broker: more than one CONFIG given\n");
            return 2;
        }
        config_path = argv[i];
    }
    if (config_path == NULL) {
        usage(stderr);
        return 2;
    }

    /* from the first log line on: a closed stderr pipe must not kill the
     * broker (br_net_create ignores SIGPIPE too, for the sockets) */
    (void)signal(SIGPIPE, SIG_IGN);
    static struct br_broker broker;
    char err[512];
    if (br_config_load(config_path, overrides, noverrides, &broker.s.cfg, err, sizeof err) != 0 ||
        br_config_check_available(&broker.s.cfg, err, sizeof err) != 0) {
        fprintf(stderr, "samsa-broker: %s\n", err);
        br_config_free(&broker.s.cfg);
        return 2;
    }
    br_logging_set_level((enum br_level)broker.s.cfg.log_level);
    br_info("samsa-broker %s starting with %s", SAMSA_VERSION, config_path);
    if (br_broker_start(&broker) != 0) {
        br_error("start-up failed");
        br_broker_stop(&broker);
        br_config_free(&broker.s.cfg);
        return 1;
    }
    int rc = br_broker_run(&broker);
    br_broker_stop(&broker);
    br_config_free(&broker.s.cfg);
    br_info("samsa-broker stopped");
    return rc == 0 ? 0 : 1;
}
