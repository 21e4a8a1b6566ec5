/*
 * samsa leaders elect-preferred: asks the controller to give partitions back
 * to their preferred (first assigned) replica, as Kafka 2.0's
 * kafka-preferred-replica-election.sh (kafka/admin/
 * PreferredReplicaLeaderElectionCommand.scala) does: through ZooKeeper, by
 * creating /admin/preferred_replica_election with
 *   {"version":1,"partitions":[{"topic":"t","partition":0},...]}
 * (ZkData.scala's PreferredReplicaElectionZNode), which the controller
 * watches, acts on and deletes. Kafka 2.0 has no protocol request for it
 * (ElectPreferredLeaders came in 2.2), so this command alone talks to
 * ZooKeeper (--zookeeper HOST:PORT[/chroot]) rather than to the brokers.
 * With --all, the partitions are those under /brokers/topics/T/partitions
 * (Kafka's tool without a JSON file: every partition).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "zk.h"

static const char leaders_help[] =
    "usage: samsa leaders elect-preferred --zookeeper HOST:PORT[/CHROOT]\n"
    "                                     (-t TOPIC -p PARTITION | -t TOPIC | --all)\n"
    "Asks the controller to make each partition's preferred replica its leader again\n"
    "(when it is alive and in sync), as kafka-preferred-replica-election.sh: writes\n"
    "/admin/preferred_replica_election, which the controller deletes when done.\n";

static const char path[] = "/admin/preferred_replica_election";

/* A growing text. */
struct text {
    char *s;
    size_t n, cap;
    bool oom;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int w = vsnprintf(t->s == NULL ? NULL : t->s + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (w < 0 || t->oom) {
            t->oom = true;
            return;
        }
        if ((size_t)w < t->cap - t->n) {
            t->n += (size_t)w;
            return;
        }
        size_t cap = (t->cap + (size_t)w + 1) * 2;
        char *s = realloc(t->s, cap);
        if (s == NULL) {
            t->oom = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

/* Adds {"topic":T,"partition":P} (topic names need no escaping: Kafka's
 * names are [a-zA-Z0-9._-]). */
static void put_partition(struct text *t, size_t *count, const char *topic, long long p)
{
    put(t, "%s{\"topic\":\"%s\",\"partition\":%lld}", *count > 0 ? "," : "", topic, p);
    (*count)++;
}

/* Every partition of topic (the children of its partitions znode), or -1
 * with stderr saying why; with `all`, a topic without partitions yet (being
 * made, or deleted meanwhile) is passed over. */
static int put_topic(zhandle_t *zh, struct text *t, size_t *count, const char *topic, bool all)
{
    char p[512];
    (void)snprintf(p, sizeof p, "/brokers/topics/%s/partitions", topic);
    struct String_vector kids = {0, NULL};
    int rc = zoo_get_children(zh, p, 0, &kids);
    if (rc == ZNONODE && all) {
        return 0;
    }
    if (rc != ZOK) {
        fprintf(stderr, "samsa leaders: %s: %s\n", p,
                rc == ZNONODE ? "no such topic, or none of its partitions has a state yet"
                              : zerror(rc));
        return -1;
    }
    for (int32_t i = 0; i < kids.count; i++) {
        long long n;
        if (parse_ll(kids.data[i], &n) && n >= 0) {
            put_partition(t, count, topic, n);
        }
    }
    deallocate_String_vector(&kids);
    return 0;
}

static int elect_preferred(const struct opts *o)
{
    zhandle_t *zh = zk_open("leaders", o->zookeeper, left_ms(o));
    if (zh == NULL) {
        return EXIT_FAIL;
    }
    struct text t = {0};
    size_t count = 0;
    int res = 0;
    put(&t, "{\"version\":1,\"partitions\":[");
    if (o->topic != NULL && o->partition >= 0) {
        put_partition(&t, &count, o->topic, o->partition);
    } else if (o->topic != NULL) {
        res = put_topic(zh, &t, &count, o->topic, false);
    } else {
        struct String_vector topics = {0, NULL};
        int rc = zoo_get_children(zh, "/brokers/topics", 0, &topics);
        if (rc != ZOK && rc != ZNONODE) {
            fprintf(stderr, "samsa leaders: /brokers/topics: %s\n", zerror(rc));
            res = -1;
        }
        for (int32_t i = 0; i < topics.count && res == 0; i++) {
            res = put_topic(zh, &t, &count, topics.data[i], true);
        }
        deallocate_String_vector(&topics);
    }
    put(&t, "]}");
    if (res == 0 && t.oom) {
        fprintf(stderr, "samsa leaders: out of memory\n");
        res = -1;
    }
    if (res == 0 && count > 0) {
        /* (/admin made if missing: a cluster that never ran a controller) */
        int rc = zk_create(zh, path, t.s, t.n);
        if (rc == ZNODEEXISTS) {
            fprintf(stderr, "samsa leaders: a preferred leader election is in progress (%s "
                            "exists): try again when the controller has deleted it\n",
                    path);
            res = -1;
        } else if (rc != ZOK) {
            fprintf(stderr, "samsa leaders: creating %s: %s\n", path, zerror(rc));
            res = -1;
        }
    }
    if (res == 0) {
        printf("preferred leader election started for %zu partitions\n", count);
    }
    free(t.s);
    zk_close(zh);
    return res == 0 ? 0 : EXIT_FAIL;
}

int cmd_leaders(int argc, char **argv)
{
    static const char *const verbs[] = {"elect-preferred", NULL};
    struct opts o;
    int rc = start_verb("leaders", leaders_help, verbs, argc, argv, &o);
    if (rc >= 0) {
        return rc;
    }
    if (o.zookeeper == NULL) {
        return usage_error("leaders", "%s", "elect-preferred wants --zookeeper HOST:PORT");
    }
    if (o.npos != 0 || (o.all == (o.topic != NULL)) || (o.partition >= 0 && o.topic == NULL)) {
        return usage_error("leaders", "%s",
                           "elect-preferred wants -t TOPIC [-p PARTITION] or --all");
    }
    return elect_preferred(&o);
}
