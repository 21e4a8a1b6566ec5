/*
 * samsa topic create|list|describe|alter|delete|offsets.
 */
#include <stdio.h>
#include <string.h>

#include "tool.h"

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
    config_ops(o, ops, keys);
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

int cmd_topic(int argc, char **argv)
{
    static const char *const verbs[] = {"create", "list",   "describe",
                                        "alter",  "delete", "offsets", NULL};
    struct opts o;
    int rc = start_verb("topic", topic_help, verbs, argc, argv, &o);
    if (rc >= 0) {
        return rc;
    }
    const char *verb = argv[0];
    bool create = strcmp(verb, "create") == 0;
    bool del = strcmp(verb, "delete") == 0;
    bool list = strcmp(verb, "list") == 0;
    bool alter = strcmp(verb, "alter") == 0;
    bool offsets = strcmp(verb, "offsets") == 0;
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
