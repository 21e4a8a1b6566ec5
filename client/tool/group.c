/*
 * samsa group list|describe|reset-offsets|delete: consumer groups, their
 * members and their offsets, as kafka-consumer-groups.sh.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static const char group_help[] =
    "usage: samsa group list -b BROKERS [--json]\n"
    "       samsa group describe -b BROKERS (GROUP... | --all-groups)\n"
    "                  [--offsets | --members | --state] [--json]\n"
    "       samsa group reset-offsets -b BROKERS GROUP (-t TOPIC[:P,P...] [-p PARTITION] |\n"
    "                  --all-topics)\n"
    "                  (--to-earliest | --to-latest | --to-offset N | --to-datetime T |\n"
    "                   --shift-by N) [--execute] [--json]\n"
    "       samsa group delete -b BROKERS GROUP\n"
    "describe prints GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID\n"
    "HOST CLIENT-ID for every partition the group owns or has committed (- when none);\n"
    "--state prints GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS instead,\n"
    "--members GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS (--offsets: the default).\n"
    "Columns are as wide as their contents; a blank line between groups.\n"
    "reset-offsets prints GROUP TOPIC PARTITION NEW-OFFSET and changes nothing unless\n"
    "--execute is given; it refuses a group with members, dry run or not (as\n"
    "kafka-consumer-groups.sh); TOPIC:P,P... resets those partitions only,\n"
    "--all-topics every partition the group has committed;\n"
    "--to-datetime takes YYYY-MM-DDTHH:mm:SS.sss (UTC, or with Z, +HH:mm) or milliseconds\n"
    "since the epoch. GROUP may be given as --group G.\n"
    "Common: -X key=value (client configuration), --timeout MS (default 30000): the\n"
    "whole command's, however many requests it makes.\n"
    "Exit status: 0 done, 1 refused, no such group or timed out, or some log end not\n"
    "read in time (describe prints the rest, - for it, and names it on stderr),\n"
    "2 usage error.\n";

struct group_row {
    const char *topic;
    int32_t partition;
    int64_t current; /* -1: none committed */
    int64_t end;     /* -1: unknown */
    int end_err;     /* why end is unknown: the ListOffsets call's error */
    const struct samsa_group_member *owner;
};

/* The log ends of a group's partitions, asked for all at once: the calls run
 * on this thread and up to LOG_END_THREADS more (every admin call may be made
 * from any thread; the I/O thread serves them side by side), so a leader that
 * does not answer holds up its own partitions, not the others', and every
 * call ends by the command's deadline. */
#define LOG_END_THREADS 16

struct log_ends {
    samsa_admin *a;
    const struct opts *o;
    struct group_row *rows;
    size_t n;
    pthread_mutex_t lock;
    size_t next; /* the next row to ask for; under lock */
};

static void *log_end_worker(void *arg)
{
    struct log_ends *le = arg;
    for (;;) {
        pthread_mutex_lock(&le->lock);
        size_t i = le->next;
        if (i < le->n) {
            le->next++;
        }
        pthread_mutex_unlock(&le->lock);
        if (i >= le->n) {
            return NULL;
        }
        struct group_row *r = &le->rows[i];
        int64_t end = -1;
        r->end_err = samsa_admin_list_offset(le->a, r->topic, r->partition, SAMSA_OFFSET_END,
                                             &end, left_ms(le->o));
        if (r->end_err == SAMSA_OK) {
            r->end = end;
        }
    }
}

static void fetch_log_ends(samsa_admin *a, const struct opts *o, struct group_row *rows, size_t n)
{
    struct log_ends le = {.a = a, .o = o, .rows = rows, .n = n, .next = 0};
    pthread_mutex_init(&le.lock, NULL);
    pthread_t threads[LOG_END_THREADS];
    size_t want = n < LOG_END_THREADS ? n : LOG_END_THREADS;
    size_t started = 0;
    while (started < want && pthread_create(&threads[started], NULL, log_end_worker, &le) == 0) {
        started++;
    }
    /* This thread asks too: it does every call when no thread could start. */
    (void)log_end_worker(&le);
    for (size_t i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
    }
    pthread_mutex_destroy(&le.lock);
}

static int cmp_row(const void *a, const void *b)
{
    const struct group_row *x = a;
    const struct group_row *y = b;
    int c = strcmp(x->topic, y->topic);
    return c != 0 ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

/* A request to the group's coordinator gets at most this much of the
 * command's --timeout. A coordinator that stopped answering (its process
 * paused, its host cut off) keeps the group until its ZooKeeper session
 * expires and the controller moves the group's partition of
 * __consumer_offsets to another replica (Kafka 2.0's
 * KafkaController.onBrokerFailure; zookeeper.session.timeout.ms, 6 s by
 * default); a request that waited on it for the whole --timeout would fail
 * then, however soon the group had moved. Each new request finds the
 * coordinator again (FindCoordinator), as kafka-consumer-groups.sh's
 * AdminClient does after its request.timeout.ms. */
#define COORDINATOR_ATTEMPT_MS 5000

/* DescribeGroups (offsets false: into *d) or OffsetFetch (offsets true:
 * into *offs, *noffs) of group from its coordinator, asked again, with a
 * line on stderr each time, while the coordinator does not answer within
 * COORDINATOR_ATTEMPT_MS or has moved, until --timeout; the last call's
 * result. */
static int ask_coordinator(samsa_admin *a, const struct opts *o, const char *verb,
                           const char *group, bool offsets, samsa_group_description **d,
                           struct samsa_partition **offs, size_t *noffs, char *err, size_t size)
{
    for (;;) {
        int left = left_ms(o);
        int attempt = left < COORDINATOR_ATTEMPT_MS ? left : COORDINATOR_ATTEMPT_MS;
        int e = offsets ? samsa_admin_list_group_offsets(a, group, attempt, offs, noffs, err, size)
                        : samsa_admin_describe_group(a, group, attempt, d, err, size);
        /* Kafka's COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
         * NOT_COORDINATOR: the library asks again until the call's
         * deadline, so they come back only once that has passed. */
        bool moved = e == 14 || e == 15 || e == 16;
        if ((e != SAMSA_ERR_TIMED_OUT && !moved) || left_ms(o) == 0) {
            return e;
        }
        if (moved) {
            fprintf(stderr, "samsa group %s %s: the group's coordinator moved (%s); asking "
                    "again\n", verb, group, samsa_err_name(e));
        } else {
            fprintf(stderr, "samsa group %s %s: the group's coordinator did not answer within "
                    "%d ms; asking again (another broker takes the group over once this one's "
                    "ZooKeeper session expires)\n", verb, group, attempt);
        }
    }
}

/* One group's description. When there is something to print and *shown
 * (an earlier group was printed), the separator between groups goes first;
 * *shown is set once this one prints. */
static int group_describe(samsa_admin *a, const struct opts *o, const char *group, bool *shown)
{
    char err[512];
    samsa_group_description *d = NULL;
    int e = ask_coordinator(a, o, "describe", group, false, &d, NULL, NULL, err, sizeof(err));
    static const samsa_group_description unknown = {"", "-", "", "", -1, 0, NULL};
    if (e == SAMSA_ERR_UNSUPPORTED && !o->state) {
        /* A broker without DescribeGroups still has the group's offsets. */
        fprintf(stderr, "samsa group describe %s: %s: members not shown\n", group, err);
    } else if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa group describe %s: %s\n", group,
                failure(o, e, err, why, sizeof(why)));
        return EXIT_FAIL;
    }
    const samsa_group_description *dv = d != NULL ? d : &unknown;
    struct samsa_partition *offs = NULL;
    size_t noffs = 0;
    e = ask_coordinator(a, o, "describe", group, true, NULL, &offs, &noffs, err, sizeof(err));
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa group describe %s: offsets: %s\n", group,
                failure(o, e, err, why, sizeof(why)));
        samsa_group_description_free(d);
        return EXIT_FAIL;
    }
    if (strcmp(dv->state, "Dead") == 0 && dv->member_count == 0 && noffs == 0) {
        fprintf(stderr, "samsa group describe: consumer group '%s' does not exist.\n", group);
        samsa_group_description_free(d);
        samsa_partitions_free(offs, noffs);
        return EXIT_FAIL;
    }
    int rc = 0;
    if (*shown) {
        fputs(o->json ? "," : "\n", stdout);
    }
    *shown = true;
    if (o->state) {
        if (o->json) {
            printf("{\"group\":");
            json_opt_str(dv->group_id);
            printf(",\"coordinator\":%d,\"assignment_strategy\":", dv->coordinator_id);
            json_opt_str(dv->protocol);
            printf(",\"state\":");
            json_opt_str(dv->state);
            printf(",\"members\":%zu}\n", dv->member_count);
        } else {
            /* host:port (id), as kafka-consumer-groups.sh prints it */
            char coord[300];
            snprintf(coord, sizeof(coord), "- (%d)", dv->coordinator_id);
            static const char *const none[1] = {NULL};
            samsa_metadata *md = NULL;
            e = samsa_admin_metadata(a, none, 0, left_ms(o), &md);
            if (e == SAMSA_OK) {
                for (size_t i = 0; i < md->broker_count; i++) {
                    if (md->brokers[i].id == dv->coordinator_id) {
                        snprintf(coord, sizeof(coord), "%s:%d (%d)", md->brokers[i].host,
                                 md->brokers[i].port, dv->coordinator_id);
                    }
                }
                samsa_metadata_free(md);
            } else {
                char why[128];
                fprintf(stderr, "samsa group describe %s: the coordinator's address not read: "
                        "%s\n", group, failure(o, e, NULL, why, sizeof(why)));
                rc = EXIT_FAIL;
            }
            char count[24];
            snprintf(count, sizeof(count), "%zu", dv->member_count);
            struct table t = {.cols = 5};
            table_row(&t, (const char *const[]){"GROUP", "COORDINATOR (ID)",
                                                 "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"});
            table_row(&t, (const char *const[]){group, coord,
                                                 dv->protocol[0] != '\0' ? dv->protocol : "-",
                                                 dv->state, count});
            table_print(&t);
            table_free(&t);
        }
        samsa_group_description_free(d);
        samsa_partitions_free(offs, noffs);
        return rc;
    }
    size_t cap = noffs;
    for (size_t i = 0; i < dv->member_count; i++) {
        cap += dv->members[i].assignment_count;
    }
    struct group_row *rows = calloc(cap > 0 ? cap : 1, sizeof(*rows));
    size_t n = 0;
    for (size_t i = 0; rows != NULL && i < dv->member_count; i++) {
        for (size_t k = 0; k < dv->members[i].assignment_count; k++) {
            const struct samsa_partition *p = &dv->members[i].assignment[k];
            rows[n++] = (struct group_row){p->topic, p->partition, -1, -1, 0, &dv->members[i]};
        }
    }
    for (size_t i = 0; rows != NULL && i < noffs; i++) {
        size_t r = 0;
        while (r < n && !(rows[r].partition == offs[i].partition &&
                          strcmp(rows[r].topic, offs[i].topic) == 0)) {
            r++;
        }
        if (r == n) {
            rows[n++] = (struct group_row){offs[i].topic, offs[i].partition, -1, -1, 0, NULL};
        }
        rows[r].current = offs[i].offset;
    }
    if (rows == NULL) {
        fprintf(stderr, "samsa group describe: out of memory\n");
        rc = EXIT_FAIL;
        n = 0;
    }
    if (n > 0 && !o->members) {
        fetch_log_ends(a, o, rows, n);
        qsort(rows, n, sizeof(*rows), cmp_row);
    }
    /* The committed offsets of a topic that was deleted: Kafka 2.0's
     * coordinator drops them with the topic (GroupCoordinator.
     * handleDeletedPartitions), so they are left out here too, and said so
     * once per topic, not counted as a failure. */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        bool gone = rows[i].owner == NULL && (rows[i].end_err == SAMSA_ERR_UNKNOWN_TOPIC ||
                                              rows[i].end_err == 3);
        if (gone && (i == 0 || strcmp(rows[i - 1].topic, rows[i].topic) != 0)) {
            fprintf(stderr, "samsa group describe %s: Topic '%s' does not exist: its committed "
                    "offsets are not shown.\n", group, rows[i].topic);
        }
        if (!gone) {
            rows[kept++] = rows[i];
        }
    }
    n = kept;
    /* What could not be read is printed as "-" (null in JSON), named here,
     * and fails the command, as kafka-consumer-groups.sh reports an error
     * after what it could print. */
    for (size_t i = 0; i < n; i++) {
        if (rows[i].end_err != SAMSA_OK) {
            char why[128];
            fprintf(stderr, "samsa group describe %s: %s [%d]: log end not read: %s\n", group,
                    rows[i].topic, rows[i].partition,
                    failure(o, rows[i].end_err, NULL, why, sizeof(why)));
            rc = EXIT_FAIL;
        }
    }
    if (o->json) {
        printf("{\"group\":");
        json_opt_str(group);
        printf(",\"state\":");
        json_opt_str(dv->state);
        printf(",\"protocol\":");
        json_opt_str(dv->protocol);
        printf(",\"coordinator\":%d,\"members\":[", dv->coordinator_id);
        for (size_t i = 0; i < dv->member_count; i++) {
            const struct samsa_group_member *m = &dv->members[i];
            printf("%s{\"consumer_id\":", i == 0 ? "" : ",");
            json_opt_str(m->member_id);
            printf(",\"host\":");
            json_opt_str(m->client_host);
            printf(",\"client_id\":");
            json_opt_str(m->client_id);
            printf(",\"partitions\":[");
            for (size_t k = 0; k < m->assignment_count; k++) {
                printf("%s{\"topic\":", k == 0 ? "" : ",");
                json_opt_str(m->assignment[k].topic);
                printf(",\"partition\":%d}", m->assignment[k].partition);
            }
            printf("]}");
        }
        printf("],\"partitions\":[");
        for (size_t i = 0; i < n; i++) {
            const struct group_row *r = &rows[i];
            printf("%s{\"topic\":", i == 0 ? "" : ",");
            json_opt_str(r->topic);
            printf(",\"partition\":%d,\"current_offset\":", r->partition);
            json_opt_ll(r->current);
            printf(",\"log_end_offset\":");
            json_opt_ll(r->end);
            printf(",\"lag\":");
            json_opt_ll(r->current >= 0 && r->end >= 0 ? r->end - r->current : -1);
            printf(",\"consumer_id\":");
            json_opt_str(r->owner != NULL ? r->owner->member_id : NULL);
            printf(",\"host\":");
            json_opt_str(r->owner != NULL ? r->owner->client_host : NULL);
            printf(",\"client_id\":");
            json_opt_str(r->owner != NULL ? r->owner->client_id : NULL);
            printf("}");
        }
        printf("]}\n");
    } else {
        if (dv->member_count == 0) {
            fprintf(stderr, "Consumer group '%s' has no active members.\n", group);
        }
        struct table t = {.cols = 9};
        if (o->members) {
            t.cols = 5;
            table_row(&t, (const char *const[]){"GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID",
                                                 "#PARTITIONS"});
            for (size_t i = 0; i < dv->member_count; i++) {
                const struct samsa_group_member *m = &dv->members[i];
                char count[24];
                snprintf(count, sizeof(count), "%zu", m->assignment_count);
                table_row(&t, (const char *const[]){group, m->member_id, m->client_host,
                                                     m->client_id, count});
            }
        } else {
            table_row(&t, (const char *const[]){"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET",
                                                 "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                                                 "CLIENT-ID"});
        }
        for (size_t i = 0; !o->members && i < n; i++) {
            const struct group_row *r = &rows[i];
            char part[24];
            char cur[24];
            char end[24];
            char lag[24];
            snprintf(part, sizeof(part), "%d", r->partition);
            table_row(&t, (const char *const[]){
                              group, r->topic, part, cell_ll(cur, sizeof(cur), r->current),
                              cell_ll(end, sizeof(end), r->end),
                              cell_ll(lag, sizeof(lag),
                                      r->current >= 0 && r->end >= 0 ? r->end - r->current : -1),
                              r->owner != NULL ? r->owner->member_id : NULL,
                              r->owner != NULL ? r->owner->client_host : NULL,
                              r->owner != NULL ? r->owner->client_id : NULL});
        }
        table_print(&t);
        table_free(&t);
    }
    free(rows);
    samsa_group_description_free(d);
    samsa_partitions_free(offs, noffs);
    return rc;
}

static int group_list(samsa_admin *a, const struct opts *o)
{
    char err[512];
    samsa_group_list *l = NULL;
    int e = samsa_admin_list_groups(a, left_ms(o), &l, err, sizeof(err));
    if (e != SAMSA_OK) {
        fprintf(stderr, "samsa group list: %s\n", err);
        return EXIT_FAIL;
    }
    if (o->json) {
        printf("[");
    }
    for (size_t i = 0; i < l->count; i++) {
        if (o->json) {
            printf("%s{\"group\":", i == 0 ? "" : ",");
            json_opt_str(l->groups[i].group_id);
            printf(",\"protocol_type\":");
            json_opt_str(l->groups[i].protocol_type);
            printf("}");
        } else {
            printf("%s\n", l->groups[i].group_id);
        }
    }
    if (o->json) {
        printf("]\n");
    }
    /* Brokers that did not answer: the list lacks their groups. */
    for (size_t i = 0; i < l->error_count; i++) {
        fprintf(stderr, "samsa group list: %s: its groups are not listed\n",
                l->errors[i].reason);
    }
    int rc = l->error_count > 0 ? EXIT_FAIL : 0;
    samsa_group_list_free(l);
    return rc;
}

/* describe of each GROUP named, or of every group with --all-groups (as
 * kafka-consumer-groups.sh --describe --all-groups): a blank line between
 * groups, a JSON array of them when there can be more than one. Fails when
 * any of them failed, after describing the others. */
static int group_describe_all(samsa_admin *a, const struct opts *o)
{
    samsa_group_list *l = NULL;
    const char *const *names = o->positional;
    size_t n = (size_t)o->npos;
    const char **listed = NULL;
    int rc = 0;
    if (o->all_groups) {
        char err[512];
        int e = samsa_admin_list_groups(a, left_ms(o), &l, err, sizeof(err));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa group describe: listing the groups: %s\n", err);
            return EXIT_FAIL;
        }
        for (size_t i = 0; i < l->error_count; i++) {
            fprintf(stderr, "samsa group describe: %s: its groups are not described\n",
                    l->errors[i].reason);
            rc = EXIT_FAIL;
        }
        listed = calloc(l->count + 1, sizeof(*listed));
        if (listed == NULL) {
            samsa_group_list_free(l);
            return EXIT_FAIL;
        }
        for (size_t i = 0; i < l->count; i++) {
            listed[i] = l->groups[i].group_id;
        }
        names = listed;
        n = l->count;
    }
    bool array = o->json && (o->all_groups || n > 1);
    if (array) {
        printf("[");
    }
    bool shown = false;
    for (size_t i = 0; i < n; i++) {
        fflush(stdout); /* what was printed, before this group's errors */
        if (group_describe(a, o, names[i], &shown) != 0) {
            rc = EXIT_FAIL;
        }
    }
    if (array) {
        printf("]\n");
    }
    free(listed);
    samsa_group_list_free(l);
    return rc;
}

/* reset-offsets' -t TOPIC, or TOPIC:P,P,... for some of its partitions, as
 * kafka-consumer-groups.sh's --topic (Kafka 2.0's ConsumerGroupCommand.
 * parseTopicPartitionsToReset); -p P names one too. */
struct reset_scope {
    char topic[256];
    int32_t ids[256]; /* the partitions named; none: every one */
    size_t n;
};

/* o's -t and -p as a scope; false when they do not make one. */
static bool parse_scope(const struct opts *o, struct reset_scope *s)
{
    const char *colon = strchr(o->topic, ':');
    size_t tl = colon != NULL ? (size_t)(colon - o->topic) : strlen(o->topic);
    s->n = 0;
    if (tl == 0 || tl >= sizeof(s->topic) || (colon != NULL && o->partition >= 0)) {
        return false;
    }
    memcpy(s->topic, o->topic, tl);
    s->topic[tl] = '\0';
    if (o->partition >= 0) {
        s->ids[s->n++] = o->partition;
    }
    for (const char *p = colon; p != NULL;) {
        p++;
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        char one[16];
        long long id;
        if (len == 0 || len >= sizeof(one) || s->n == sizeof(s->ids) / sizeof(s->ids[0])) {
            return false;
        }
        memcpy(one, p, len);
        one[len] = '\0';
        if (!parse_ll(one, &id) || id < 0 || id > INT32_MAX) {
            return false;
        }
        s->ids[s->n++] = (int32_t)id;
        p = comma;
    }
    return true;
}

/* Whether the group may have its offsets reset: it has no members (Empty,
 * or Dead: never seen), as Kafka 2.0's ConsumerGroupCommand.resetOffsets
 * checks before a dry run too; false after saying why not. */
static bool group_inactive(samsa_admin *a, const struct opts *o, const char *group)
{
    char err[512];
    samsa_group_description *d = NULL;
    int e = ask_coordinator(a, o, "reset-offsets", group, false, &d, NULL, NULL, err,
                            sizeof(err));
    if (e == SAMSA_ERR_UNSUPPORTED) {
        return true; /* the broker refuses a commit under members itself */
    }
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa group reset-offsets %s: %s\n", group,
                failure(o, e, err, why, sizeof(why)));
        return false;
    }
    bool inactive = strcmp(d->state, "Empty") == 0 || strcmp(d->state, "Dead") == 0;
    if (!inactive) {
        fprintf(stderr, "samsa group reset-offsets: Assignments can only be reset if the group "
                "'%s' is inactive, but the current state is %s.\n", group, d->state);
    }
    samsa_group_description_free(d);
    return inactive;
}

/* The partitions of s's topic that s names (every one without), each
 * {topic, partition, -1}, into *parts (the caller frees it) and *n: 0, or
 * EXIT_FAIL after saying why. */
static int scope_partitions(samsa_admin *a, const struct opts *o, const struct reset_scope *s,
                            struct samsa_partition **parts, size_t *n)
{
    samsa_metadata *md = NULL;
    *parts = NULL;
    *n = 0;
    if (one_topic(a, "group reset-offsets", o, s->topic, &md) != 0) {
        return EXIT_FAIL;
    }
    size_t np = md->topics[0].partition_count;
    struct samsa_partition *ps = calloc(np > 0 ? np : 1, sizeof(*ps));
    size_t k = 0;
    for (size_t i = 0; ps != NULL && i < np; i++) {
        int32_t id = md->topics[0].partitions[i].id;
        bool wanted = s->n == 0;
        for (size_t j = 0; j < s->n; j++) {
            wanted = wanted || s->ids[j] == id;
        }
        if (wanted) {
            ps[k++] = (struct samsa_partition){s->topic, id, -1};
        }
    }
    samsa_metadata_free(md);
    for (size_t j = 0; ps != NULL && j < s->n; j++) {
        bool found = false;
        for (size_t i = 0; i < k; i++) {
            found = found || ps[i].partition == s->ids[j];
        }
        if (!found) {
            fprintf(stderr, "samsa group reset-offsets: topic %s has no partition %d\n",
                    s->topic, s->ids[j]);
            free(ps);
            return EXIT_FAIL;
        }
    }
    if (ps == NULL || k == 0) {
        fprintf(stderr, "samsa group reset-offsets: topic %s: %s\n", s->topic,
                ps == NULL ? "out of memory" : "no partitions");
        free(ps);
        return EXIT_FAIL;
    }
    *parts = ps;
    *n = k;
    return 0;
}

/* The offset part p of the group is reset to, from its log's watermarks
 * and the group's committed offsets[0..noffs), into p->offset: 0, or
 * EXIT_FAIL after saying why. */
static int new_offset(samsa_admin *a, const struct opts *o, struct samsa_partition *p,
                      const struct samsa_partition *offs, size_t noffs)
{
    int64_t low = -1;
    int64_t high = -1;
    int e = samsa_admin_watermarks(a, p->topic, p->partition, &low, &high, left_ms(o));
    if (e != SAMSA_OK) {
        char why[128];
        fprintf(stderr, "samsa group reset-offsets: %s [%d]: %s\n", p->topic, p->partition,
                failure(o, e, NULL, why, sizeof(why)));
        return EXIT_FAIL;
    }
    int64_t want = 0;
    switch (o->reset_mode) {
    case RESET_EARLIEST:
        want = low;
        break;
    case RESET_LATEST:
        want = high;
        break;
    case RESET_OFFSET:
        want = o->reset_value;
        break;
    case RESET_DATETIME:
        e = samsa_admin_list_offset(a, p->topic, p->partition, o->reset_value, &want,
                                    left_ms(o));
        if (e != SAMSA_OK) {
            char why[128];
            fprintf(stderr, "samsa group reset-offsets: %s [%d]: %s\n", p->topic, p->partition,
                    failure(o, e, NULL, why, sizeof(why)));
            return EXIT_FAIL;
        }
        if (want < 0) {
            want = high; /* nothing at or after that time */
        }
        break;
    default: { /* shift from the committed offset (or the log start) */
        int64_t cur = low;
        for (size_t k = 0; k < noffs; k++) {
            if (offs[k].partition == p->partition && strcmp(offs[k].topic, p->topic) == 0) {
                cur = offs[k].offset;
            }
        }
        want = cur + o->reset_value;
        break;
    }
    }
    /* Kept inside the log, as kafka-consumer-groups does. */
    p->offset = want < low ? low : (want > high ? high : want);
    return 0;
}

/* reset-offsets of s's partitions, or with --all-topics of every partition
 * the group has committed (Kafka 2.0's ConsumerGroupCommand.
 * getPartitionsToReset): the plan printed, committed with --execute. */
static int group_reset(samsa_admin *a, const struct opts *o, const char *group,
                       const struct reset_scope *s)
{
    char err[512];
    if (!group_inactive(a, o, group)) {
        return EXIT_FAIL;
    }
    struct samsa_partition *offs = NULL;
    size_t noffs = 0;
    if (o->reset_mode == RESET_SHIFT || o->all_topics) {
        int e = ask_coordinator(a, o, "reset-offsets", group, true, NULL, &offs, &noffs, err,
                                sizeof(err));
        if (e != SAMSA_OK) {
            char why[128];
            fprintf(stderr, "samsa group reset-offsets %s: %s\n", group,
                    failure(o, e, err, why, sizeof(why)));
            return EXIT_FAIL;
        }
    }
    struct samsa_partition *parts = NULL;
    size_t n = 0;
    int rc = 0;
    if (!o->all_topics) {
        rc = scope_partitions(a, o, s, &parts, &n);
    } else if (noffs == 0) {
        fprintf(stderr, "samsa group reset-offsets: group %s has no committed offsets: "
                "--all-topics has nothing to reset\n", group);
        rc = EXIT_FAIL;
    } else {
        /* the topics point into offs, freed last */
        parts = calloc(noffs, sizeof(*parts));
        for (size_t i = 0; parts != NULL && i < noffs; i++) {
            parts[n++] = (struct samsa_partition){offs[i].topic, offs[i].partition, -1};
        }
        rc = parts != NULL ? 0 : EXIT_FAIL;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = new_offset(a, o, &parts[i], offs, noffs);
    }
    if (rc == 0 && o->execute) {
        int e = samsa_admin_alter_group_offsets(a, group, parts, n, left_ms(o), err, sizeof(err));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa group reset-offsets %s: %s\n", group, err);
            rc = EXIT_FAIL;
        }
    }
    if (rc == 0) {
        struct table t = {.cols = 4};
        table_row(&t, (const char *const[]){"GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"});
        if (o->json) {
            printf("[");
        }
        for (size_t i = 0; i < n; i++) {
            if (o->json) {
                printf("%s{\"group\":", i == 0 ? "" : ",");
                json_opt_str(group);
                printf(",\"topic\":");
                json_opt_str(parts[i].topic);
                printf(",\"partition\":%d,\"new_offset\":%lld}", parts[i].partition,
                       (long long)parts[i].offset);
                continue;
            }
            char part[24];
            char off[24];
            snprintf(part, sizeof(part), "%d", parts[i].partition);
            snprintf(off, sizeof(off), "%lld", (long long)parts[i].offset);
            table_row(&t, (const char *const[]){group, parts[i].topic, part, off});
        }
        if (o->json) {
            printf("]\n");
        } else {
            table_print(&t);
        }
        table_free(&t);
        if (!o->execute) {
            fprintf(stderr, "(dry run: nothing changed; add --execute to commit these)\n");
        }
    }
    free(parts);
    samsa_partitions_free(offs, noffs);
    return rc;
}

int cmd_group(int argc, char **argv)
{
    static const char *const verbs[] = {"list", "describe", "reset-offsets", "delete", NULL};
    struct opts o;
    int rc = start_verb("group", group_help, verbs, argc, argv, &o);
    if (rc >= 0) {
        return rc;
    }
    const char *verb = argv[0];
    bool list = strcmp(verb, "list") == 0;
    bool describe = strcmp(verb, "describe") == 0;
    bool reset = strcmp(verb, "reset-offsets") == 0;
    if (describe && (o.all_groups ? o.npos != 0 : o.npos < 1)) {
        return usage_error("group", "%s", "describe wants GROUP... or --all-groups");
    }
    if (describe && o.members && o.state) {
        return usage_error("group", "%s", "one of --members, --offsets, --state");
    }
    /* --group G, as kafka-consumer-groups.sh spells it, names a GROUP too */
    if (o.group != NULL && o.npos < 8) {
        o.positional[o.npos++] = o.group;
    }
    if (!list && !describe && o.npos != 1) {
        return usage_error("group", "%s wants one GROUP", verb);
    }
    if (reset && ((o.topic == NULL) == !o.all_topics || o.reset_mode == RESET_NONE)) {
        return usage_error("group", "%s", "reset-offsets wants -t TOPIC or --all-topics, and one "
                                          "of --to-earliest, --to-latest, --to-offset, "
                                          "--to-datetime, --shift-by");
    }
    struct reset_scope scope = {.n = 0};
    if (reset && o.topic != NULL && !parse_scope(&o, &scope)) {
        return usage_error("group", "bad -t \"%s\" (TOPIC or TOPIC:PARTITION,..., not both with "
                           "-p)", o.topic);
    }
    samsa_admin *a = NULL;
    rc = make_admin("group", &o, &a);
    if (rc != 0) {
        return rc;
    }
    char err[512];
    if (list) {
        rc = group_list(a, &o);
    } else if (describe) {
        rc = group_describe_all(a, &o);
    } else if (reset) {
        rc = group_reset(a, &o, o.positional[0], &scope);
    } else {
        int e = samsa_admin_delete_group(a, o.positional[0], left_ms(&o), err, sizeof(err));
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa group delete %s: %s\n", o.positional[0], err);
            rc = EXIT_FAIL;
        } else {
            printf("Deleted consumer group %s.\n", o.positional[0]);
        }
    }
    samsa_admin_destroy(a);
    return rc;
}
