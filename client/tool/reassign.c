/*
 * samsa reassign generate|execute|verify: moves partitions between brokers
 * as Kafka 2.0's kafka-reassign-partitions.sh does
 * (core/src/main/scala/kafka/admin/ReassignPartitionsCommand.scala), through
 * ZooKeeper (--zookeeper HOST:PORT[/chroot]), with its JSON in and out:
 *
 *   topics to move    {"topics":[{"topic":"t"}],"version":1}
 *   a reassignment    {"version":1,"partitions":[{"topic":"t","partition":0,
 *                      "replicas":[1,2],"log_dirs":["any","any"]}]}
 *
 * generate reads each topic's assignment (/brokers/topics/<t>,
 * {"version":1,"partitions":{"0":[1,2]}}) and proposes one over the
 * --broker-list brokers that are registered (/brokers/ids/<id>), the
 * partition count and replication factor kept, placed by Kafka's
 * AdminUtils.assignReplicasToBrokers (rack-aware unless
 * --disable-rack-aware): the broker's own code, broker/src/cluster/
 * assignment.c, linked into the tool. It prints both, writes nothing.
 *
 * execute validates the reassignment against the cluster (the messages of
 * ReassignPartitionsCommand.parseAndValidate), prints the current
 * assignment of its topics "for rollback", with --throttle RATE sets the
 * throttle (below), then creates /admin/reassign_partitions
 * ({"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]},
 * ZkData.scala's ReassignPartitionsZNode) which the controller acts on and
 * empties partition by partition. A reassignment already there is left
 * alone ("There is an existing assignment running."; --throttle then sets
 * the brokers' rates again, as Kafka's maybeLimit) and the command exits 1.
 *
 * The throttle (ReassignPartitionsCommand.assignThrottledReplicas and
 * maybeLimit): each moved topic's config gets
 * leader.replication.throttled.replicas, the current replicas of its
 * partitions that gain a replica, and follower.replication.throttled.replicas,
 * the replicas they gain, each as "partition:broker,..."; every broker of
 * the current and the new assignments gets leader.replication.throttled.rate
 * and follower.replication.throttled.rate; each znode's other configs are
 * kept and a change notification written (zk.h).
 *
 * verify prints each partition's state: in progress while the partition is
 * in /admin/reassign_partitions, completed when it is not and its replicas
 * in /brokers/topics/<t> are those asked, failed otherwise. When every one
 * has completed, it takes the throttle away (the rates from every
 * registered broker, the replica lists from the moved topics) and prints
 * "Throttle was removed." if there was one. Exit status 0 when all have
 * completed, 3 when some are in progress and none failed, 1 otherwise.
 *
 * log_dirs other than "any" (a replica moved to a given log directory, done
 * by Kafka 2.0 with AlterReplicaLogDirs over --bootstrap-server) are
 * refused: Samsa's brokers do not answer AlterReplicaLogDirs.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cluster/assignment.h"
#include "tool.h"
#include "zk.h"

#define EXIT_IN_PROGRESS 3
#define MAX_RF 64
#define TOPIC_MAX 249 /* Kafka's topic name length limit */
#define MAX_BROKERS 4096
#define REASSIGN_PATH "/admin/reassign_partitions"

static const char reassign_help[] =
    "usage: samsa reassign generate --zookeeper HOST:PORT[/CHROOT]\n"
    "           --topics-to-move-json-file FILE --broker-list ID,ID,... [--disable-rack-aware]\n"
    "       samsa reassign execute --zookeeper HOST:PORT[/CHROOT]\n"
    "           --reassignment-json-file FILE [--throttle BYTES_PER_SECOND]\n"
    "       samsa reassign verify --zookeeper HOST:PORT[/CHROOT] --reassignment-json-file FILE\n"
    "Moves partitions between brokers as kafka-reassign-partitions.sh, with its JSON:\n"
    "  topics to move:  {\"topics\":[{\"topic\":\"foo\"}],\"version\":1}\n"
    "  a reassignment:  {\"version\":1,\"partitions\":[{\"topic\":\"foo\",\"partition\":0,\n"
    "                    \"replicas\":[1,2,3],\"log_dirs\":[\"any\",\"any\",\"any\"]}]}\n"
    "generate prints the current assignment of the topics and one over the brokers\n"
    "listed (rack-aware unless --disable-rack-aware); it changes nothing.\n"
    "execute prints the current assignment (save it to roll back) and starts the\n"
    "reassignment (/admin/reassign_partitions); --throttle limits the replicas'\n"
    "movement to that rate (bytes/s, at least 1 KB/s makes sense): run verify until\n"
    "the reassignment completes to remove it, or execute again to change the rate.\n"
    "verify says of each partition whether its move completed, is in progress or\n"
    "failed, and removes the throttle once every one has completed.\n"
    "Exit status: 0 done (verify: every partition completed), 1 failed, 2 usage,\n"
    "3 (verify) some partitions still in progress, none failed.\n";

/* One partition and its replicas. */
struct part {
    char topic[TOPIC_MAX + 1];
    int32_t partition;
    int32_t n;
    int32_t r[MAX_RF];
};

struct parts {
    struct part *v;
    size_t n, cap;
};

struct reassign_args {
    const char *verb;
    const char *zookeeper;
    const char *topics_file;
    const char *reassignment_file;
    const char *broker_list;
    bool disable_rack_aware;
    long long throttle; /* -1: none */
};

static struct part *parts_add(struct parts *ps)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap == 0 ? 64 : ps->cap * 2;
        struct part *v = realloc(ps->v, cap * sizeof *v);
        if (v == NULL) {
            return NULL;
        }
        ps->v = v;
        ps->cap = cap;
    }
    struct part *p = &ps->v[ps->n++];
    memset(p, 0, sizeof *p);
    return p;
}

static const struct part *parts_find(const struct parts *ps, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->v[i].partition == partition && strcmp(ps->v[i].topic, topic) == 0) {
            return &ps->v[i];
        }
    }
    return NULL;
}

/* Whether ps->v[i] is the first of ps with its topic (a loop over the
 * topics of ps takes those). */
static bool first_of_topic(const struct parts *ps, size_t i)
{
    for (size_t k = 0; k < i; k++) {
        if (strcmp(ps->v[k].topic, ps->v[i].topic) == 0) {
            return false;
        }
    }
    return true;
}

static bool has_replica(const struct part *p, int32_t b)
{
    for (int32_t i = 0; i < p->n; i++) {
        if (p->r[i] == b) {
            return true;
        }
    }
    return false;
}

static int cmp_part(const void *a, const void *b)
{
    const struct part *x = a;
    const struct part *y = b;
    int c = strcmp(x->topic, y->topic);
    return c != 0 ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a;
    int32_t y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* "t-0", as Kafka's TopicPartition.toString */
static const char *tp_name(const struct part *p, char *buf, size_t size)
{
    (void)snprintf(buf, size, "%s-%" PRId32, p->topic, p->partition);
    return buf;
}

/* "1,2,3" */
static const char *id_list(const int32_t *ids, int32_t n, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n && o < size; i++) {
        int w = snprintf(buf + o, size - o, "%s%" PRId32, i > 0 ? "," : "", ids[i]);
        o += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* "samsa reassign: <message>" on stderr; EXIT_FAIL. */
__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "samsa reassign: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return EXIT_FAIL;
}

/* ---------------------------------------------------------------- JSON */

/*
 * The partitions as Kafka's formatAsReassignmentJson writes them (sorted
 * by topic and partition), with log_dirs ("any" each) or, for
 * /admin/reassign_partitions, without (ReassignPartitionsZNode.encode).
 * Returns a malloc'd string or NULL.
 */
static char *assignment_json(const struct parts *ps, bool log_dirs)
{
    qsort(ps->v, ps->n, sizeof *ps->v, cmp_part);
    json_t *arr = json_array();
    json_t *root = json_pack("{s:i,s:o}", "version", 1, "partitions", arr);
    if (root == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < ps->n; i++) {
        const struct part *p = &ps->v[i];
        json_t *reps = json_array();
        json_t *dirs = json_array();
        for (int32_t k = 0; k < p->n; k++) {
            (void)json_array_append_new(reps, json_integer(p->r[k]));
            (void)json_array_append_new(dirs, json_string("any"));
        }
        json_t *o = json_pack("{s:s,s:i,s:o}", "topic", p->topic, "partition", (int)p->partition,
                              "replicas", reps);
        if (o != NULL && log_dirs) {
            (void)json_object_set(o, "log_dirs", dirs);
        }
        json_decref(dirs);
        (void)json_array_append_new(arr, o);
    }
    char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    return s;
}

/* An int within 32 bits, as Kafka's DecodeJson reads an Int. */
static bool json_int32(const json_t *v, int32_t *out)
{
    if (!json_is_integer(v)) {
        return false;
    }
    json_int_t x = json_integer_value(v);
    if (x < INT32_MIN || x > INT32_MAX) {
        return false;
    }
    *out = (int32_t)x;
    return true;
}

/* A file's JSON object and its version (1 when absent; Kafka reads no
 * other), or NULL with stderr saying why. */
static json_t *load_versioned(const char *file)
{
    json_error_t jerr;
    json_t *root = json_load_file(file, 0, &jerr);
    if (root == NULL) {
        fprintf(stderr, "samsa reassign: %s: not valid JSON: %s (line %d)\n", file, jerr.text,
                jerr.line);
        return NULL;
    }
    json_t *version = json_object_get(root, "version");
    int32_t v = 1;
    if (!json_is_object(root) || (version != NULL && !json_int32(version, &v))) {
        fprintf(stderr, "samsa reassign: %s: not a JSON object with an integer version\n", file);
        json_decref(root);
        return NULL;
    }
    if (v != 1) {
        fprintf(stderr, "samsa reassign: %s: Not supported version field value %" PRId32 "\n", file,
                v);
        json_decref(root);
        return NULL;
    }
    return root;
}

static bool valid_topic(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || n > TOPIC_MAX || strcmp(t, ".") == 0 || strcmp(t, "..") == 0) {
        return false;
    }
    return strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* The reassignment file's partitions (ReassignPartitionsCommand.
 * parsePartitionReassignmentData), checked in themselves: replicas as many
 * as log_dirs, "any" log dirs only. 0 or EXIT_FAIL. */
static int read_reassignment(const char *file, struct parts *out)
{
    json_t *root = load_versioned(file);
    if (root == NULL) {
        return EXIT_FAIL;
    }
    json_t *partitions = json_object_get(root, "partitions");
    int rc = 0;
    if (partitions != NULL && !json_is_array(partitions)) {
        rc = fail("%s: \"partitions\" is not an array", file);
    }
    size_t i;
    json_t *e;
    json_array_foreach(partitions, i, e)
    {
        json_t *topic = json_object_get(e, "topic");
        json_t *reps = json_object_get(e, "replicas");
        json_t *dirs = json_object_get(e, "log_dirs");
        struct part *p = parts_add(out);
        if (p == NULL) {
            rc = fail("%s: out of memory", file);
            break;
        }
        if (!json_is_string(topic) || !valid_topic(json_string_value(topic)) ||
            !json_int32(json_object_get(e, "partition"), &p->partition) || p->partition < 0 ||
            !json_is_array(reps) || (dirs != NULL && !json_is_array(dirs))) {
            rc = fail("%s: a partition wants \"topic\" (a topic name), \"partition\" (an int "
                      "from 0), \"replicas\" (an array of broker ids) and may have "
                      "\"log_dirs\" (an array of \"any\")",
                      file);
            break;
        }
        (void)snprintf(p->topic, sizeof p->topic, "%s", json_string_value(topic));
        char tp[300];
        char list[512];
        if (json_array_size(reps) > MAX_RF) {
            rc = fail("partition %s: more than 64 replicas", tp_name(p, tp, sizeof tp));
            break;
        }
        size_t k;
        json_t *r;
        json_array_foreach(reps, k, r)
        {
            if (!json_int32(r, &p->r[k]) || p->r[k] < 0) {
                rc = fail("partition %s: a replica is not a broker id", tp_name(p, tp, sizeof tp));
                goto out;
            }
            p->n++;
        }
        if (dirs != NULL && json_array_size(dirs) != json_array_size(reps)) {
            rc = fail("Size of replicas list [%s] is different from size of log dirs list (%zu) "
                      "for partition %s-%" PRId32,
                      id_list(p->r, p->n, list, sizeof list), json_array_size(dirs), p->topic,
                      p->partition);
            break;
        }
        json_array_foreach(dirs, k, r)
        {
            if (!json_is_string(r) || strcmp(json_string_value(r), "any") != 0) {
                rc = fail("partition %s: log_dirs other than \"any\" want AlterReplicaLogDirs "
                          "(kafka-reassign-partitions.sh --bootstrap-server), which Samsa does "
                          "not have",
                          tp_name(p, tp, sizeof tp));
                goto out;
            }
        }
    }
out:
    json_decref(root);
    return rc;
}

/* The topics file's topic names (parseTopicsData) into names, n of them. */
static int read_topics(const char *file, char (*names)[TOPIC_MAX + 1], size_t max, size_t *n)
{
    *n = 0;
    json_t *root = load_versioned(file);
    if (root == NULL) {
        return EXIT_FAIL;
    }
    json_t *topics = json_object_get(root, "topics");
    int rc = 0;
    size_t i;
    json_t *e;
    if (topics != NULL && !json_is_array(topics)) {
        rc = fail("%s: \"topics\" is not an array", file);
    }
    json_array_foreach(topics, i, e)
    {
        json_t *t = json_object_get(e, "topic");
        if (!json_is_string(t) || !valid_topic(json_string_value(t))) {
            rc = fail("%s: each of \"topics\" wants a \"topic\" name", file);
            break;
        }
        for (size_t k = 0; k < *n; k++) {
            if (strcmp(names[k], json_string_value(t)) == 0) {
                rc = fail("List of topics to reassign contains duplicate entries: %s", names[k]);
                goto out;
            }
        }
        if (*n == max) {
            rc = fail("%s: more than 4096 topics", file);
            break;
        }
        (void)snprintf(names[(*n)++], TOPIC_MAX + 1, "%s", json_string_value(t));
    }
out:
    json_decref(root);
    return rc;
}

/* ---------------------------------------------------------------- ZooKeeper */

/* Topic's assignment from /brokers/topics/<topic> appended to out (none
 * when the topic does not exist, as Kafka's getReplicaAssignmentForTopics).
 * 0 or EXIT_FAIL. */
static int read_assignment(zhandle_t *zh, const char *topic, struct parts *out)
{
    char path[300];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s", topic);
    char *data = NULL;
    int len = 0;
    int rc = zk_read(zh, path, &data, &len, NULL);
    if (rc == ZNONODE) {
        return 0;
    }
    if (rc != ZOK) {
        return fail("reading %s: %s", path, zerror(rc));
    }
    json_t *root = json_loadb(data, (size_t)len, 0, NULL);
    free(data);
    json_t *partitions = json_object_get(root, "partitions");
    int res = json_is_object(partitions) ? 0 : fail("%s: not Kafka's assignment JSON", path);
    const char *key;
    json_t *reps;
    json_object_foreach(partitions, key, reps)
    {
        long long pn;
        struct part *p = parts_add(out);
        if (p == NULL || !parse_ll(key, &pn) || pn < 0 || pn > INT32_MAX || !json_is_array(reps) ||
            json_array_size(reps) > MAX_RF) {
            res = fail("%s: not Kafka's assignment JSON", path);
            break;
        }
        (void)snprintf(p->topic, sizeof p->topic, "%s", topic);
        p->partition = (int32_t)pn;
        size_t k;
        json_t *r;
        json_array_foreach(reps, k, r)
        {
            if (json_int32(r, &p->r[p->n])) {
                p->n++;
            }
        }
    }
    json_decref(root);
    return res;
}

/* The assignments of every distinct topic of ps. */
static int read_assignments_of(zhandle_t *zh, const struct parts *ps, struct parts *out)
{
    for (size_t i = 0; i < ps->n; i++) {
        if (first_of_topic(ps, i) && read_assignment(zh, ps->v[i].topic, out) != 0) {
            return EXIT_FAIL;
        }
    }
    return 0;
}

/* The registered brokers (/brokers/ids), ascending, and with racks
 * (may be NULL) each one's rack (malloc'd; NULL when it has none). */
static int read_brokers(zhandle_t *zh, int32_t *ids, char **racks, size_t *n)
{
    *n = 0;
    struct String_vector kids = {0, NULL};
    int rc = zoo_get_children(zh, "/brokers/ids", 0, &kids);
    if (rc != ZOK && rc != ZNONODE) {
        return fail("reading /brokers/ids: %s", zerror(rc));
    }
    for (int32_t i = 0; i < kids.count && *n < MAX_BROKERS; i++) {
        long long id;
        if (parse_ll(kids.data[i], &id) && id >= 0 && id <= INT32_MAX) {
            ids[(*n)++] = (int32_t)id;
        }
    }
    deallocate_String_vector(&kids);
    qsort(ids, *n, sizeof *ids, cmp_id);
    for (size_t i = 0; racks != NULL && i < *n; i++) {
        char path[64];
        (void)snprintf(path, sizeof path, "/brokers/ids/%" PRId32, ids[i]);
        char *data = NULL;
        int len = 0;
        racks[i] = NULL;
        if (zk_read(zh, path, &data, &len, NULL) != ZOK) {
            continue;
        }
        json_t *root = json_loadb(data, (size_t)len, 0, NULL);
        free(data);
        json_t *rack = json_object_get(root, "rack");
        if (json_is_string(rack)) {
            racks[i] = strdup(json_string_value(rack));
        }
        json_decref(root);
    }
    return 0;
}

/* The partitions of /admin/reassign_partitions (none when it is not
 * there): 0, or EXIT_FAIL. */
static int read_in_progress(zhandle_t *zh, struct parts *out, bool *exists)
{
    char *data = NULL;
    int len = 0;
    int rc = zk_read(zh, REASSIGN_PATH, &data, &len, NULL);
    *exists = rc == ZOK;
    if (rc == ZNONODE) {
        return 0;
    }
    if (rc != ZOK) {
        return fail("reading %s: %s", REASSIGN_PATH, zerror(rc));
    }
    json_t *root = json_loadb(data, (size_t)len, 0, NULL);
    free(data);
    json_t *partitions = json_object_get(root, "partitions");
    if (!json_is_array(partitions)) {
        json_decref(root);
        return fail("%s: not Kafka's reassignment JSON: no partition's state can be told",
                    REASSIGN_PATH);
    }
    size_t i;
    json_t *e;
    json_array_foreach(partitions, i, e)
    {
        json_t *topic = json_object_get(e, "topic");
        struct part *p = json_is_string(topic) ? parts_add(out) : NULL;
        if (p != NULL) {
            (void)snprintf(p->topic, sizeof p->topic, "%s", json_string_value(topic));
            if (!json_int32(json_object_get(e, "partition"), &p->partition)) {
                out->n--;
            }
        }
    }
    json_decref(root);
    return 0;
}

/* ---------------------------------------------------------------- the throttle */

/* "p:b,..." of each partition's replicas that are (follower) or are not
 * (leader) in the other assignment, for topic's partitions of ps. */
static char *throttled_list(const struct parts *current, const struct parts *proposed,
                            const char *topic, bool follower)
{
    size_t cap = 64;
    size_t n = 0;
    char *s = malloc(cap);
    if (s == NULL) {
        return NULL;
    }
    s[0] = '\0';
    for (size_t i = 0; i < proposed->n; i++) {
        const struct part *np = &proposed->v[i];
        const struct part *cp = parts_find(current, np->topic, np->partition);
        if (strcmp(np->topic, topic) != 0 || cp == NULL) {
            continue;
        }
        bool moving = false;
        for (int32_t k = 0; k < np->n; k++) {
            moving = moving || !has_replica(cp, np->r[k]);
        }
        /* leader: every current replica of a moving partition (any may
         * lead it); follower: each new replica */
        const struct part *from = follower ? np : cp;
        for (int32_t k = 0; k < from->n && (moving || follower); k++) {
            if (follower && has_replica(cp, np->r[k])) {
                continue;
            }
            if (cap - n < 32) {
                char *t = realloc(s, cap * 2);
                if (t == NULL) {
                    free(s);
                    return NULL;
                }
                s = t;
                cap *= 2;
            }
            int w = snprintf(s + n, cap - n, "%s%" PRId32 ":%" PRId32, n > 0 ? "," : "",
                             np->partition, from->r[k]);
            n += w > 0 ? (size_t)w : 0;
        }
    }
    return s;
}

static const char *const rate_keys[] = {"leader.replication.throttled.rate",
                                        "follower.replication.throttled.rate",
                                        "replica.alter.log.dirs.io.max.bytes.per.second"};
static const char *const replica_keys[] = {"leader.replication.throttled.replicas",
                                           "follower.replication.throttled.replicas"};

/* The rate on every broker of both assignments (Kafka's maybeLimit). */
static int set_rates(zhandle_t *zh, const struct parts *current, const struct parts *proposed,
                     long long rate)
{
    char value[32];
    (void)snprintf(value, sizeof value, "%lld", rate);
    const char *values[] = {value, value};
    struct zk_config_edit edit = {rate_keys, values, 2, NULL, 0};
    int32_t *done = calloc(current->n + proposed->n + 1, MAX_RF * sizeof *done);
    size_t ndone = 0;
    if (done == NULL) {
        return EXIT_FAIL;
    }
    int rc = 0;
    for (int side = 0; side < 2 && rc == 0; side++) {
        const struct parts *ps = side == 0 ? current : proposed;
        for (size_t i = 0; i < ps->n && rc == 0; i++) {
            for (int32_t k = 0; k < ps->v[i].n && rc == 0; k++) {
                int32_t b = ps->v[i].r[k];
                bool seen = false;
                for (size_t d = 0; d < ndone && !seen; d++) {
                    seen = done[d] == b;
                }
                if (seen) {
                    continue;
                }
                done[ndone++] = b;
                char entity[32];
                (void)snprintf(entity, sizeof entity, "brokers/%" PRId32, b);
                rc = zk_config_change(zh, "reassign", entity, &edit, NULL) == 0 ? 0 : EXIT_FAIL;
            }
        }
    }
    free(done);
    return rc;
}

/* The replica lists on each moved topic (assignThrottledReplicas). */
static int set_throttled_replicas(zhandle_t *zh, const struct parts *current,
                                  const struct parts *proposed)
{
    for (size_t i = 0; i < proposed->n; i++) {
        const char *topic = proposed->v[i].topic;
        if (!first_of_topic(proposed, i)) {
            continue;
        }
        char *leader = throttled_list(current, proposed, topic, false);
        char *follower = throttled_list(current, proposed, topic, true);
        const char *values[] = {leader, follower};
        struct zk_config_edit edit = {replica_keys, values, 2, NULL, 0};
        char entity[300];
        (void)snprintf(entity, sizeof entity, "topics/%s", topic);
        int rc = leader != NULL && follower != NULL
                     ? zk_config_change(zh, "reassign", entity, &edit, NULL)
                     : -1;
        free(leader);
        free(follower);
        if (rc != 0) {
            return EXIT_FAIL;
        }
    }
    return 0;
}

/* Kafka's removeThrottle: the rates off every registered broker, the
 * replica lists off the moved topics. */
static int remove_throttle(zhandle_t *zh, const struct parts *moved)
{
    int32_t *ids = calloc(MAX_BROKERS, sizeof *ids);
    size_t n = 0;
    bool any = false;
    int rc = ids == NULL ? EXIT_FAIL : read_brokers(zh, ids, NULL, &n);
    struct zk_config_edit rates = {NULL, NULL, 0, rate_keys, 3};
    for (size_t i = 0; i < n && rc == 0; i++) {
        char entity[32];
        bool changed = false;
        (void)snprintf(entity, sizeof entity, "brokers/%" PRId32, ids[i]);
        rc = zk_config_change(zh, "reassign", entity, &rates, &changed) == 0 ? 0 : EXIT_FAIL;
        any = any || changed;
    }
    free(ids);
    struct zk_config_edit lists = {NULL, NULL, 0, replica_keys, 2};
    for (size_t i = 0; i < moved->n && rc == 0; i++) {
        char entity[300];
        bool changed = false;
        (void)snprintf(entity, sizeof entity, "topics/%s", moved->v[i].topic);
        if (first_of_topic(moved, i)) {
            rc = zk_config_change(zh, "reassign", entity, &lists, &changed) == 0 ? 0 : EXIT_FAIL;
            any = any || changed;
        }
    }
    if (rc == 0 && any) {
        printf("Throttle was removed.\n");
    }
    return rc;
}

/* ---------------------------------------------------------------- generate */

static int generate(zhandle_t *zh, const struct reassign_args *a)
{
    int32_t wanted[MAX_BROKERS];
    size_t nwanted = 0;
    for (const char *s = a->broker_list; *s != '\0';) {
        char *end = NULL;
        long long id = strtoll(s, &end, 10);
        if (end == s || id < 0 || id > INT32_MAX || (*end != ',' && *end != '\0') ||
            nwanted == MAX_BROKERS) {
            fprintf(stderr, "samsa reassign: --broker-list wants broker ids as 0,1,2\n");
            return EXIT_USAGE;
        }
        for (size_t k = 0; k < nwanted; k++) {
            if (wanted[k] == id) {
                fprintf(stderr, "samsa reassign: Broker list contains duplicate entries: %lld\n",
                        id);
                return EXIT_FAIL;
            }
        }
        wanted[nwanted++] = (int32_t)id;
        s = *end == ',' ? end + 1 : end;
    }
    char(*topics)[TOPIC_MAX + 1] = calloc(MAX_BROKERS, sizeof *topics);
    int32_t *ids = calloc(MAX_BROKERS, sizeof *ids);
    char **racks = calloc(MAX_BROKERS, sizeof *racks);
    struct parts current = {0};
    struct parts proposed = {0};
    int32_t *out = NULL;
    size_t ntopics = 0;
    size_t n = 0;
    int rc = EXIT_FAIL;
    if (topics == NULL || ids == NULL || racks == NULL) {
        goto out;
    }
    rc = read_topics(a->topics_file, topics, MAX_BROKERS, &ntopics);
    for (size_t i = 0; i < ntopics && rc == 0; i++) {
        rc = read_assignment(zh, topics[i], &current);
    }
    if (rc != 0 || (rc = read_brokers(zh, ids, a->disable_rack_aware ? NULL : racks, &n)) != 0) {
        goto out;
    }
    /* AdminZkClient.getBrokerMetadatas: the registered brokers of the list */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        bool listed = false;
        for (size_t k = 0; k < nwanted && !listed; k++) {
            listed = wanted[k] == ids[i];
        }
        if (listed) {
            ids[kept] = ids[i];
            racks[kept] = racks[i];
            kept++;
        } else {
            free(racks[i]);
        }
        racks[i] = i < kept ? racks[i] : NULL;
    }
    if (kept < nwanted) {
        fprintf(stderr,
                "samsa reassign: --broker-list: %zu of its brokers are not registered "
                "in /brokers/ids: left out, as kafka-reassign-partitions.sh does\n",
                nwanted - kept);
    }
    qsort(current.v, current.n, sizeof *current.v, cmp_part);
    srandom((unsigned)time(NULL) ^ (unsigned)getpid());
    for (size_t i = 0; i < current.n && rc == 0;) {
        size_t j = i;
        while (j < current.n && strcmp(current.v[j].topic, current.v[i].topic) == 0) {
            j++;
        }
        int32_t nparts = (int32_t)(j - i);
        int32_t rf = current.v[i].n;
        free(out);
        out = calloc((size_t)nparts * (size_t)(rf > 0 ? rf : 1), sizeof *out);
        int arc = out == NULL ? KP_E_NOMEM
                  : kept == 0 || rf < 1 || (size_t)rf > kept
                      ? KP_E_INVALID_ARG
                      : br_assign_replicas_racks(ids, (const char *const *)racks, kept, 0, nparts,
                                                 rf, (uint32_t)random(), (uint32_t)random(), out);
        if (arc == BR_ASSIGN_RACKS_INCOMPLETE) {
            rc = fail("%s (--disable-rack-aware places replicas without racks)",
                      BR_ASSIGN_RACKS_INCOMPLETE_MSG);
        } else if (arc == KP_E_INVALID_ARG) {
            fprintf(stderr,
                    "samsa reassign: topic %s: Replication factor: %" PRId32
                    " larger than available brokers: %zu.\n",
                    current.v[i].topic, rf, kept);
            rc = EXIT_FAIL;
        } else if (arc != 0) {
            rc = fail("out of memory");
        }
        for (int32_t p = 0; p < nparts && rc == 0; p++) {
            struct part *np = parts_add(&proposed);
            if (np == NULL) {
                rc = EXIT_FAIL;
                break;
            }
            (void)snprintf(np->topic, sizeof np->topic, "%s", current.v[i].topic);
            np->partition = p;
            np->n = rf;
            memcpy(np->r, &out[(size_t)p * (size_t)rf], (size_t)rf * sizeof *out);
        }
        i = j;
    }
    if (rc == 0) {
        char *cur = assignment_json(&current, true);
        char *prop = assignment_json(&proposed, true);
        if (cur != NULL && prop != NULL) {
            printf("Current partition replica assignment\n%s\n\n"
                   "Proposed partition reassignment configuration\n%s\n",
                   cur, prop);
        } else {
            rc = EXIT_FAIL;
        }
        free(cur);
        free(prop);
    }
out:
    for (size_t i = 0; racks != NULL && i < MAX_BROKERS; i++) {
        free(racks[i]);
    }
    free(racks);
    free(ids);
    free(topics);
    free(out);
    free(current.v);
    free(proposed.v);
    return rc;
}

/* ---------------------------------------------------------------- execute */

/* parseAndValidate's checks against the cluster, in Kafka's order and with
 * its messages. */
static int validate(zhandle_t *zh, const struct parts *asked, const struct parts *current)
{
    char tp[300];
    char list[512];
    if (asked->n == 0) {
        return fail("Partition reassignment data file is empty");
    }
    for (size_t i = 0; i < asked->n; i++) {
        const struct part *p = &asked->v[i];
        if (p->n == 0) {
            return fail("Partition replica list cannot be empty (partition %s)",
                        tp_name(p, tp, sizeof tp));
        }
        if (parts_find(asked, p->topic, p->partition) != p) {
            return fail("Partition reassignment contains duplicate topic partitions: %s",
                        tp_name(p, tp, sizeof tp));
        }
        for (int32_t k = 0; k < p->n; k++) {
            for (int32_t j = 0; j < k; j++) {
                if (p->r[j] == p->r[k]) {
                    (void)snprintf(list, sizeof list, "%" PRId32, p->r[k]);
                    return fail("Partition replica lists may not contain duplicate entries: %s "
                                "contains multiple entries for %s",
                                tp_name(p, tp, sizeof tp), list);
                }
            }
        }
    }
    for (size_t i = 0; i < asked->n; i++) {
        if (parts_find(current, asked->v[i].topic, asked->v[i].partition) == NULL) {
            return fail("The proposed assignment contains non-existent partitions: %s",
                        tp_name(&asked->v[i], tp, sizeof tp));
        }
    }
    int32_t *ids = calloc(MAX_BROKERS, sizeof *ids);
    size_t n = 0;
    int rc = ids == NULL ? EXIT_FAIL : read_brokers(zh, ids, NULL, &n);
    for (size_t i = 0; i < asked->n && rc == 0; i++) {
        for (int32_t k = 0; k < asked->v[i].n && rc == 0; k++) {
            if (bsearch(&asked->v[i].r[k], ids, n, sizeof *ids, cmp_id) == NULL) {
                (void)snprintf(list, sizeof list, "%" PRId32, asked->v[i].r[k]);
                rc = fail("The proposed assignment contains non-existent brokerIDs: %s "
                          "(not registered in /brokers/ids)",
                          list);
            }
        }
    }
    free(ids);
    return rc;
}

static int execute(zhandle_t *zh, const struct reassign_args *a)
{
    struct parts asked = {0};
    struct parts current = {0};
    struct parts running = {0};
    char *cur = NULL;
    char *znode = NULL;
    bool exists = false;
    int rc = read_reassignment(a->reassignment_file, &asked);
    if (rc == 0) {
        rc = read_assignments_of(zh, &asked, &current);
    }
    if (rc == 0) {
        rc = validate(zh, &asked, &current);
    }
    if (rc == 0) {
        rc = read_in_progress(zh, &running, &exists);
    }
    if (rc != 0) {
        goto out;
    }
    if (exists) {
        printf("There is an existing assignment running.\n");
        if (a->throttle >= 0) {
            rc = set_rates(zh, &current, &asked, a->throttle);
            if (rc == 0) {
                printf("The inter-broker throttle limit was set to %lld B/s\n", a->throttle);
            }
        }
        fprintf(stderr,
                "samsa reassign: %s exists: this reassignment was not started; run "
                "it again when verify says the running one is done\n",
                REASSIGN_PATH);
        rc = EXIT_FAIL;
        goto out;
    }
    cur = assignment_json(&current, true);
    znode = assignment_json(&asked, false);
    if (cur == NULL || znode == NULL) {
        rc = EXIT_FAIL;
        goto out;
    }
    printf("Current partition replica assignment\n\n%s\n\n"
           "Save this to use as the --reassignment-json-file option during rollback\n",
           cur);
    if (a->throttle >= 0) {
        printf("Warning: You must run Verify periodically, until the reassignment completes, "
               "to ensure the throttle is removed. You can also alter the throttle by "
               "rerunning the Execute command passing a new value.\n");
        rc = set_throttled_replicas(zh, &current, &asked);
        if (rc == 0) {
            rc = set_rates(zh, &current, &asked, a->throttle);
        }
        if (rc != 0) {
            goto out;
        }
        printf("The inter-broker throttle limit was set to %lld B/s\n", a->throttle);
    }
    int zrc = zk_create(zh, REASSIGN_PATH, znode, strlen(znode));
    if (zrc == ZNODEEXISTS) {
        rc = fail("Partition reassignment currently in progress (%s was made meanwhile). "
                  "Aborting operation",
                  REASSIGN_PATH);
    } else if (zrc != ZOK) {
        rc = fail("creating %s: %s", REASSIGN_PATH, zerror(zrc));
    } else {
        printf("Successfully started reassignment of partitions.\n");
    }
out:
    free(cur);
    free(znode);
    free(asked.v);
    free(current.v);
    free(running.v);
    return rc;
}

/* ---------------------------------------------------------------- verify */

static int verify(zhandle_t *zh, const struct reassign_args *a)
{
    struct parts asked = {0};
    struct parts current = {0};
    struct parts running = {0};
    bool exists = false;
    int rc = read_reassignment(a->reassignment_file, &asked);
    if (rc == 0) {
        rc = read_in_progress(zh, &running, &exists);
    }
    if (rc == 0) {
        rc = read_assignments_of(zh, &asked, &current);
    }
    if (rc != 0) {
        goto out;
    }
    printf("Status of partition reassignment: \n");
    size_t in_progress = 0;
    size_t failed = 0;
    for (size_t i = 0; i < asked.n; i++) {
        const struct part *p = &asked.v[i];
        const struct part *now = parts_find(&current, p->topic, p->partition);
        char tp[300];
        char l1[512];
        char l2[512];
        (void)tp_name(p, tp, sizeof tp);
        if (parts_find(&running, p->topic, p->partition) != NULL) {
            printf("Reassignment of partition %s is still in progress\n", tp);
            in_progress++;
        } else if (now != NULL && now->n == p->n &&
                   memcmp(now->r, p->r, (size_t)p->n * sizeof *p->r) == 0) {
            printf("Reassignment of partition %s completed successfully\n", tp);
        } else {
            printf("ERROR: Assigned replicas (%s) don't match the list of replicas for "
                   "reassignment (%s) for partition %s\n",
                   now != NULL ? id_list(now->r, now->n, l1, sizeof l1) : "",
                   id_list(p->r, p->n, l2, sizeof l2), tp);
            printf("Reassignment of partition %s failed\n", tp);
            failed++;
        }
    }
    if (in_progress == 0 && failed == 0) {
        rc = remove_throttle(zh, &asked);
    }
    if (rc == 0) {
        rc = failed > 0 ? EXIT_FAIL : in_progress > 0 ? EXIT_IN_PROGRESS : 0;
    }
out:
    free(asked.v);
    free(current.v);
    free(running.v);
    return rc;
}

/* ---------------------------------------------------------------- the command */

static int reassign_usage(const char *msg)
{
    fprintf(stderr, "samsa reassign: %s\n%s", msg, reassign_help);
    return EXIT_USAGE;
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct reassign_args *a)
{
    memset(a, 0, sizeof *a);
    a->throttle = -1;
    static const char *const verbs[] = {"generate", "execute", "verify"};
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        bool verb = false;
        for (size_t v = 0; v < sizeof verbs / sizeof verbs[0]; v++) {
            /* Kafka's --generate|--execute|--verify spelled either way */
            if (strcmp(s, verbs[v]) == 0 ||
                (strncmp(s, "--", 2) == 0 && strcmp(s + 2, verbs[v]) == 0)) {
                if (a->verb != NULL) {
                    return reassign_usage("Command must include exactly one action: generate, "
                                          "execute or verify");
                }
                a->verb = verbs[v];
                verb = true;
            }
        }
        const char **value = strcmp(s, "--zookeeper") == 0                  ? &a->zookeeper
                             : strcmp(s, "--topics-to-move-json-file") == 0 ? &a->topics_file
                             : strcmp(s, "--reassignment-json-file") == 0   ? &a->reassignment_file
                             : strcmp(s, "--broker-list") == 0              ? &a->broker_list
                                                                            : NULL;
        if (verb) {
            continue;
        }
        if ((value != NULL || strcmp(s, "--throttle") == 0) && next == NULL) {
            return reassign_usage("an option wants a value");
        }
        if (value != NULL) {
            *value = argv[++i];
        } else if (strcmp(s, "--throttle") == 0) {
            if (!parse_ll(argv[++i], &a->throttle)) {
                return reassign_usage("--throttle wants bytes per second");
            }
        } else if (strcmp(s, "--disable-rack-aware") == 0) {
            a->disable_rack_aware = true;
        } else if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
            fputs(reassign_help, stdout);
            return 0;
        } else {
            fprintf(stderr, "samsa reassign: unknown argument \"%s\"\n%s", s, reassign_help);
            return EXIT_USAGE;
        }
    }
    if (a->verb == NULL) {
        return reassign_usage("Command must include exactly one action: generate, execute or "
                              "verify");
    }
    if (a->zookeeper == NULL) {
        return reassign_usage("--zookeeper HOST:PORT[/CHROOT] is required");
    }
    bool gen = strcmp(a->verb, "generate") == 0;
    if (gen && (a->topics_file == NULL || a->broker_list == NULL)) {
        return reassign_usage("generate wants both --topics-to-move-json-file and --broker-list");
    }
    if (!gen && a->reassignment_file == NULL) {
        return reassign_usage(strcmp(a->verb, "execute") == 0
                                  ? "execute wants --reassignment-json-file (as generate "
                                    "proposed it)"
                                  : "verify wants the --reassignment-json-file execute was given");
    }
    if ((gen && (a->reassignment_file != NULL || a->throttle >= 0)) ||
        (!gen && (a->topics_file != NULL || a->broker_list != NULL || a->disable_rack_aware)) ||
        (strcmp(a->verb, "verify") == 0 && a->throttle >= 0)) {
        return reassign_usage("an option that does not go with this action");
    }
    return -1;
}

int cmd_reassign(int argc, char **argv)
{
    struct reassign_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        return rc;
    }
    zhandle_t *zh = zk_open("reassign", a.zookeeper, 30000);
    if (zh == NULL) {
        return EXIT_FAIL;
    }
    if (strcmp(a.verb, "generate") == 0) {
        rc = generate(zh, &a);
    } else if (strcmp(a.verb, "execute") == 0) {
        rc = execute(zh, &a);
    } else {
        rc = verify(zh, &a);
    }
    zk_close(zh);
    return rc;
}
