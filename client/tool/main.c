/*
 * samsa: the command-line tool, on libsamsa's public API only.
 *
 *   samsa topic create|list|describe|alter|delete|offsets ...
 *   samsa produce -b B -t T [-p P] [-K DELIM] [-H name=value]... [-X key=value]...
 *   samsa consume -b B -t T [-p P] [--group G] [--from beginning|end|OFFSET|-N|@MS] [--count N]
 *                 [-e] [-f FMT]
 *   samsa group list|describe|reset-offsets|delete ...
 *   samsa perf produce|consume ...
 *   samsa cluster info|metadata -b B
 *   samsa configs describe -b B (--broker ID | -t TOPIC)
 *   samsa configs alter -b B --broker ID (--add-config K=V | --delete-config K)...
 *   samsa leaders elect-preferred --zookeeper ZK (-t T [-p P] | --all)
 *   samsa users add|change|remove --user U [--password P] [--zookeeper Z | --file F]
 *   samsa quotas --describe|--alter ... (--zookeeper ZK | --file FILE)
 *   samsa reassign generate|execute|verify --zookeeper ZK ...
 *   samsa acls --list|--add|--remove --zookeeper ZK ...
 *
 * This file hands each command to its file (tool.h lists them).
 */
#include <stdio.h>
#include <string.h>

#include "tool.h"

static const char main_help[] =
    "usage: samsa COMMAND [ARGS]\n"
    "Commands:\n"
    "  topic create|list|describe|alter|delete    manage topics\n"
    "  produce                                    send standard input's lines as records\n"
    "  consume                                    print records of a topic (or as a group)\n"
    "  group list|describe|reset-offsets|delete   consumer groups and their offsets\n"
    "  perf produce|consume                       throughput and latency\n"
    "  cluster info|metadata                      brokers, controller, partitions\n"
    "  configs describe|alter                     a broker's or a topic's configs\n"
    "  leaders elect-preferred                    preferred replicas lead again\n"
    "  users add|change|remove                    SCRAM users of the SASL listeners\n"
    "  quotas --describe|--alter                  client quotas (ZooKeeper or a quota file)\n"
    "  reassign generate|execute|verify           move partitions between brokers (ZooKeeper)\n"
    "  acls --list|--add|--remove                 ACLs, as kafka-acls.sh (ZooKeeper)\n"
    "Every command takes -b BROKERS (or $SAMSA_BROKERS), -X key=value,\n"
    "--command-config FILE (or -F FILE, as kcat) and --help (`samsa COMMAND VERB --help`).\n"
    "Client properties (key=value lines, as kafka's --command-config files) are read\n"
    "from $XDG_CONFIG_HOME/samsa/config (~/.config/samsa/config) when it exists, then\n"
    "from --command-config FILE; -b and -X override them. bootstrap.servers there\n"
    "stands for -b. TLS and SASL with librdkafka's names: security.protocol=ssl,\n"
    "ssl.ca.location=FILE; security.protocol=sasl_ssl, sasl.mechanisms=SCRAM-SHA-256,\n"
    "sasl.username=U, sasl.password=P (client/README.md lists them).\n"
    "Exit status: 0 success, 1 the operation failed, 2 usage error.\n";

/* Each command and the function that runs it with the arguments after its
 * name. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"topic", cmd_topic}, {"produce", cmd_produce}, {"consume", cmd_consume},
    {"cluster", cmd_cluster}, {"group", cmd_group}, {"perf", cmd_perf},
    {"configs", cmd_configs}, {"leaders", cmd_leaders}, {"users", cmd_users},
    {"quotas", cmd_quotas}, {"reassign", cmd_reassign},
    {"acls", cmd_acls},
};

int main(int argc, char **argv)
{
    catch_signals();
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
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(cmd, commands[i].name) == 0) {
            return commands[i].run(argc - 2, argv + 2);
        }
    }
    fprintf(stderr, "samsa: unknown command \"%s\"\n%s", cmd, main_help);
    return EXIT_USAGE;
}
