/*
 * samsa cluster info|metadata (the brokers, the controller, every
 * partition's leader, replicas and ISR) and samsa configs describe (a
 * broker's or a topic's configs).
 */
#include <stdio.h>
#include <string.h>

#include "tool.h"

static const char cluster_help[] =
    "usage: samsa cluster info -b BROKERS [--json]\n"
    "       samsa cluster metadata -b BROKERS [-t TOPIC] [--json]\n"
    "info prints the cluster id, the controller and every broker; metadata also every\n"
    "topic's partitions (or TOPIC's) with their leader, replicas and ISR, as kcat -L\n"
    "prints them (a partition's error, when it has one, at the end of its line).\n"
    "Common: -X key=value (client configuration), --timeout MS (default 30000).\n"
    "Exit status: 0 done, 1 refused or timed out, or a topic not read (stderr names\n"
    "it), 2 usage error.\n";

/* The brokers as a JSON array's items: {"id":,"host":,"port":},... */
static void json_brokers(const samsa_metadata *md)
{
    for (size_t i = 0; i < md->broker_count; i++) {
        printf("%s{\"id\":%d,\"host\":", i == 0 ? "" : ",", md->brokers[i].id);
        json_str(stdout, md->brokers[i].host, strlen(md->brokers[i].host));
        printf(",\"port\":%d}", md->brokers[i].port);
    }
}

/* kcat -L's listing (kcat.c's metadata_print): brokers, then each topic's
 * partitions with leader, replicas and ISR. */
static int print_cluster_metadata(const struct opts *o, const samsa_metadata *md)
{
    int rc = 0;
    if (o->json) {
        printf("{\"controller\":%d,\"brokers\":[", md->controller_id);
        json_brokers(md);
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

int cmd_cluster(int argc, char **argv)
{
    static const char *const verbs[] = {"info", "metadata", NULL};
    struct opts o;
    int rc = start_verb("cluster", cluster_help, verbs, argc, argv, &o);
    if (rc >= 0) {
        return rc;
    }
    bool metadata = strcmp(argv[0], "metadata") == 0;
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
        json_brokers(md);
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

static const char configs_help[] =
    "usage: samsa configs describe -b BROKERS (--broker ID | -t TOPIC) [--all] [--json]\n"
    "Prints a broker's or a topic's configs that are set (not defaults), or with --all\n"
    "every one, as NAME VALUE SOURCE (kafka-configs.sh --describe; the source as Kafka's\n"
    "DescribeConfigs names it: DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG,\n"
    "DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG). A sensitive\n"
    "value prints as (sensitive), an empty one as \"\", none as -. Topics' configs are\n"
    "changed with samsa topic alter.\n"
    "   or: samsa configs alter -b BROKERS --broker ID\n"
    "                           (--add-config KEY=VALUE | --delete-config KEY)...\n"
    "Sets or removes a broker's dynamic configs (KIP-226), applied without a restart.\n"
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

/* samsa configs alter: a broker's dynamic configs, as kafka-configs.sh
 * --alter --entity-type brokers --entity-name ID. */
static int configs_alter(const struct opts *o)
{
    if (o->broker_id == NULL || o->npos != 0 || o->topic != NULL ||
        o->config_count + o->delete_config_count == 0) {
        return usage_error("configs", "%s",
                           "alter wants --broker ID, and --add-config KEY=VALUE or "
                           "--delete-config KEY");
    }
    samsa_admin *a = NULL;
    int rc = make_admin("configs", o, &a);
    if (rc != 0) {
        return rc;
    }
    if (!broker_listed(a, o, o->broker_id)) {
        samsa_admin_destroy(a);
        return EXIT_FAIL;
    }
    struct samsa_config_op ops[128];
    char keys[64][256];
    size_t n = config_ops(o, ops, keys);
    char err[512] = "";
    int e = samsa_admin_alter_configs(a, SAMSA_RESOURCE_BROKER, o->broker_id, ops, n, left_ms(o),
                                      err, sizeof(err));
    samsa_admin_destroy(a);
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa configs alter: broker %s: %s\n", o->broker_id,
                failure(o, e, err, why, sizeof(why)));
        return EXIT_FAIL;
    }
    printf("Altered the configuration of broker %s.\n", o->broker_id);
    return 0;
}

int cmd_configs(int argc, char **argv)
{
    static const char *const verbs[] = {"describe", "alter", NULL};
    struct opts o;
    int rc = start_verb("configs", configs_help, verbs, argc, argv, &o);
    if (rc >= 0) {
        return rc;
    }
    if (strcmp(argv[0], "alter") == 0) {
        return configs_alter(&o);
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
