/*
 * samsa quotas: client quotas as Kafka 2.0's kafka-configs.sh sets them.
 *
 *   samsa quotas --describe (--zookeeper ZK | --file FILE)
 *   samsa quotas --alter --entity-type clients|users --entity-name NAME
 *                [--entity-type clients --entity-name NAME]
 *                (--add-config k=v[,k=v] | --delete-config k[,k])
 *                (--zookeeper ZK | --file FILE)
 *
 * With --zookeeper (a cluster): the entity's znode /config/clients/<id>,
 * /config/users/<user> or /config/users/<user>/clients/<id> gets Kafka's
 * {"version":1,"config":{...}} (names sanitized as Kafka's Sanitizer does:
 * URL-encoded), then a change notification /config/changes/config_change_N
 * {"version":2,"entity_path":"..."} tells every broker (Kafka 2.0's
 * AdminZkClient.changeConfigs). With --file: a standalone broker's
 * quota.config.file, one entity a line ("clients/x producer_byte_rate=1024"),
 * rewritten whole (a new file renamed over it); the broker reads it again
 * within a second. The names <default> stand for every user or client id.
 * This is the one command that does not talk to a broker: quotas are not in
 * Kafka 2.0's protocol.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tool.h"
#include "zk.h"

#define MAX_ENTITIES 4096
#define MAX_KEYS 16
#define LINE_MAX_LEN 4096

static const char quotas_help[] =
    "usage: samsa quotas --describe (--zookeeper HOST:PORT[/CHROOT] | --file FILE)\n"
    "       samsa quotas --alter --entity-type clients|users --entity-name NAME\n"
    "                    [--entity-type clients --entity-name NAME]\n"
    "                    (--add-config k=v[,k=v] | --delete-config k[,k])\n"
    "                    (--zookeeper HOST:PORT[/CHROOT] | --file FILE)\n"
    "Keys: producer_byte_rate, consumer_byte_rate (bytes/s), request_percentage.\n"
    "NAME <default> stands for every user or client id without a quota of its own.\n"
    "--zookeeper writes the entity's znode and a change notification (as Kafka's\n"
    "kafka-configs.sh); --file rewrites a standalone broker's quota.config.file.\n";

/* One entity: its path as Kafka's notifications name it, and its configs. */
struct entity {
    char path[LINE_MAX_LEN];
    size_t nkeys;
    char key[MAX_KEYS][64];
    char value[MAX_KEYS][64];
};

struct quota_args {
    bool describe;
    bool alter;
    const char *zookeeper;
    const char *file;
    const char *type[2];
    const char *name[2];
    int ntypes;
    int nnames;
    const char *add;
    const char *del;
};

static int quota_usage(const char *msg)
{
    fprintf(stderr, "samsa quotas: %s\n%s", msg, quotas_help);
    return EXIT_USAGE;
}

static bool key_known(const char *k, size_t n)
{
    static const char *const keys[] = {"producer_byte_rate", "consumer_byte_rate",
                                       "request_percentage"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strlen(keys[i]) == n && strncmp(keys[i], k, n) == 0) {
            return true;
        }
    }
    return false;
}

/* Kafka's Sanitizer.sanitize: URL-encoding, letters, digits and ._-
 * kept ("<default>" is written as it is). */
static bool sanitize(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    bool plain = strcmp(in, "<default>") == 0;
    for (const unsigned char *p = (const unsigned char *)in; *p != '\0'; p++) {
        bool keep = plain || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                    (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-';
        if (o + 4 >= cap) {
            return false;
        }
        if (keep) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
    return o > 0;
}

/* The entity path of the --entity-type/--entity-name pairs. */
static int entity_path(const struct quota_args *a, char *out, size_t cap)
{
    if (a->ntypes != a->nnames || a->ntypes == 0) {
        return quota_usage("each --entity-type wants its --entity-name");
    }
    char n0[LINE_MAX_LEN / 3];
    char n1[LINE_MAX_LEN / 3];
    if (!sanitize(a->name[0], n0, sizeof n0) ||
        (a->ntypes == 2 && !sanitize(a->name[1], n1, sizeof n1))) {
        return quota_usage("an entity name is empty or too long");
    }
    bool users = strcmp(a->type[0], "users") == 0;
    if (!users && strcmp(a->type[0], "clients") != 0) {
        return quota_usage("--entity-type is clients or users");
    }
    if (a->ntypes == 2 && (!users || strcmp(a->type[1], "clients") != 0)) {
        return quota_usage("two entities are --entity-type users, then clients");
    }
    if (a->ntypes == 2) {
        (void)snprintf(out, cap, "users/%s/clients/%s", n0, n1);
    } else {
        (void)snprintf(out, cap, "%s/%s", a->type[0], n0);
    }
    return 0;
}

/* --add-config / --delete-config applied to e. */
static int edit_entity(struct entity *e, const char *add, const char *del)
{
    const char *list = add != NULL ? add : del;
    if (list == NULL) {
        return EXIT_USAGE;
    }
    for (const char *p = list; *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t n = comma != NULL ? (size_t)(comma - p) : strlen(p);
        const char *eq = add != NULL ? memchr(p, '=', n) : NULL;
        size_t kn = eq != NULL ? (size_t)(eq - p) : n;
        if ((add != NULL && eq == NULL) || !key_known(p, kn)) {
            fprintf(stderr, "samsa quotas: \"%.*s\": expected %s of producer_byte_rate, "
                            "consumer_byte_rate, request_percentage\n",
                    (int)n, p, add != NULL ? "key=value" : "a key");
            return EXIT_USAGE;
        }
        size_t k = 0;
        while (k < e->nkeys && !(strlen(e->key[k]) == kn && strncmp(e->key[k], p, kn) == 0)) {
            k++;
        }
        if (add != NULL) {
            size_t vn = n - kn - 1;
            char *end = NULL;
            char v[64];
            (void)snprintf(v, sizeof v, "%.*s", (int)(vn < 63 ? vn : 63), eq + 1);
            double d = strtod(v, &end);
            if (vn == 0 || vn >= sizeof v || *end != '\0' || !(d > 0)) {
                fprintf(stderr, "samsa quotas: %.*s: not a number greater than 0\n", (int)n, p);
                return EXIT_USAGE;
            }
            if (k == e->nkeys) {
                if (e->nkeys == MAX_KEYS) {
                    return EXIT_USAGE;
                }
                e->nkeys++;
            }
            (void)snprintf(e->key[k], sizeof e->key[k], "%.*s", (int)kn, p);
            (void)snprintf(e->value[k], sizeof e->value[k], "%s", v);
        } else if (k < e->nkeys) {
            e->nkeys--;
            memmove(e->key[k], e->key[k + 1], (e->nkeys - k) * sizeof e->key[0]);
            memmove(e->value[k], e->value[k + 1], (e->nkeys - k) * sizeof e->value[0]);
        }
        p = comma != NULL ? comma + 1 : p + n;
    }
    return 0;
}

static void print_entity(const struct entity *e)
{
    printf("%s ", e->path);
    for (size_t k = 0; k < e->nkeys; k++) {
        printf("%s%s=%s", k > 0 ? "," : "", e->key[k], e->value[k]);
    }
    printf("\n");
}

/* ---------------------------------------------------------------- --file */

/* The file's entities (a missing file has none). */
static int file_load(const char *path, struct entity *es, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return errno == ENOENT ? 0 : -1;
    }
    char line[LINE_MAX_LEN];
    int rc = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        char *sp = strchr(line, ' ');
        if (line[0] == '\0' || line[0] == '#' || sp == NULL) {
            continue;
        }
        if (*n == MAX_ENTITIES) {
            rc = -1;
            break;
        }
        struct entity *e = &es[(*n)++];
        memset(e, 0, sizeof *e);
        *sp = '\0';
        (void)snprintf(e->path, sizeof e->path, "%s", line);
        if (edit_entity(e, sp + 1, NULL) != 0) {
            rc = -1;
            break;
        }
    }
    (void)fclose(f);
    return rc;
}

static int file_store(const char *path, const struct entity *es, size_t n)
{
    char tmp[LINE_MAX_LEN];
    (void)snprintf(tmp, sizeof tmp, "%s.samsa-new", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        return -1;
    }
    fprintf(f, "# client quotas (samsa quotas): entity key=value,...\n");
    for (size_t i = 0; i < n; i++) {
        if (es[i].nkeys == 0) {
            continue;
        }
        fprintf(f, "%s ", es[i].path);
        for (size_t k = 0; k < es[i].nkeys; k++) {
            fprintf(f, "%s%s=%s", k > 0 ? "," : "", es[i].key[k], es[i].value[k]);
        }
        fprintf(f, "\n");
    }
    bool bad = fflush(f) != 0 || ferror(f) != 0;
    bad = fclose(f) != 0 || bad;
    if (bad || rename(tmp, path) != 0) {
        (void)remove(tmp);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- --zookeeper */

/* The quota keys of an entity path's znode read into e (none: no keys);
 * its other keys (a user's SCRAM credentials) are not quotas'. */
static int zk_read_entity(zhandle_t *zh, const char *epath, struct entity *e)
{
    memset(e, 0, sizeof *e);
    (void)snprintf(e->path, sizeof e->path, "%s", epath);
    char zpath[LINE_MAX_LEN + 16];
    (void)snprintf(zpath, sizeof zpath, "/config/%s", epath);
    char *buf = NULL;
    int len = 0;
    int zrc = zk_read(zh, zpath, &buf, &len, NULL);
    if (zrc == ZNONODE || (zrc == ZOK && len <= 0)) {
        free(buf);
        return 0;
    }
    if (zrc != ZOK) {
        fprintf(stderr, "samsa quotas: reading %s: %s\n", zpath, zerror(zrc));
        return -1;
    }
    json_error_t jerr;
    json_t *root = json_loadb(buf, (size_t)len, 0, &jerr);
    free(buf);
    json_t *cfg = root != NULL ? json_object_get(root, "config") : NULL;
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach(cfg, k, v)
    {
        if (json_is_string(v) && key_known(k, strlen(k)) && e->nkeys < MAX_KEYS) {
            (void)snprintf(e->key[e->nkeys], sizeof e->key[0], "%s", k);
            (void)snprintf(e->value[e->nkeys], sizeof e->value[0], "%s", json_string_value(v));
            e->nkeys++;
        }
    }
    json_decref(root);
    return 0;
}

/* e's quota keys written over the znode's (its other keys, a user's SCRAM
 * credentials, kept), the quota keys e no longer has deleted. */
static int zk_write_entity(zhandle_t *zh, const struct entity *e)
{
    static const char *const quota_keys[] = {"producer_byte_rate", "consumer_byte_rate",
                                             "request_percentage"};
    const char *keys[MAX_KEYS];
    const char *values[MAX_KEYS];
    const char *gone[3];
    size_t ngone = 0;
    for (size_t k = 0; k < e->nkeys; k++) {
        keys[k] = e->key[k];
        values[k] = e->value[k];
    }
    for (size_t q = 0; q < 3; q++) {
        bool kept = false;
        for (size_t k = 0; k < e->nkeys && !kept; k++) {
            kept = strcmp(e->key[k], quota_keys[q]) == 0;
        }
        if (!kept) {
            gone[ngone++] = quota_keys[q];
        }
    }
    struct zk_config_edit edit = {keys, values, e->nkeys, gone, ngone};
    return zk_config_change(zh, "quotas", e->path, &edit, NULL);
}

/* Every entity under /config/clients and /config/users into es. */
static int zk_load(zhandle_t *zh, struct entity *es, size_t *n)
{
    *n = 0;
    static const char *const roots[] = {"clients", "users"};
    for (size_t r = 0; r < 2; r++) {
        char zpath[64];
        (void)snprintf(zpath, sizeof zpath, "/config/%s", roots[r]);
        struct String_vector kids = {0, NULL};
        if (zoo_get_children(zh, zpath, 0, &kids) != ZOK) {
            continue;
        }
        for (int32_t i = 0; i < kids.count && *n < MAX_ENTITIES; i++) {
            char ep[LINE_MAX_LEN];
            (void)snprintf(ep, sizeof ep, "%s/%s", roots[r], kids.data[i]);
            if (zk_read_entity(zh, ep, &es[*n]) == 0 && es[*n].nkeys > 0) {
                (*n)++;
            }
            if (r == 0) {
                continue;
            }
            /* a user's clients */
            char cz[LINE_MAX_LEN + 32];
            (void)snprintf(cz, sizeof cz, "/config/%s/clients", ep);
            struct String_vector uc = {0, NULL};
            if (zoo_get_children(zh, cz, 0, &uc) != ZOK) {
                continue;
            }
            for (int32_t k = 0; k < uc.count && *n < MAX_ENTITIES; k++) {
                char cp[LINE_MAX_LEN];
                (void)snprintf(cp, sizeof cp, "%.1500s/clients/%.1500s", ep, uc.data[k]);
                if (zk_read_entity(zh, cp, &es[*n]) == 0 && es[*n].nkeys > 0) {
                    (*n)++;
                }
            }
            deallocate_String_vector(&uc);
        }
        deallocate_String_vector(&kids);
    }
    return 0;
}

/* ---------------------------------------------------------------- the command */

static int parse_args(int argc, char **argv, struct quota_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(s, "--zookeeper") == 0 || strcmp(s, "--file") == 0 ||
                     strcmp(s, "--entity-type") == 0 || strcmp(s, "--entity-name") == 0 ||
                     strcmp(s, "--add-config") == 0 || strcmp(s, "--delete-config") == 0;
        if (takes && next == NULL) {
            return quota_usage("an option wants a value");
        }
        if (strcmp(s, "--describe") == 0 || strcmp(s, "describe") == 0) {
            a->describe = true;
        } else if (strcmp(s, "--alter") == 0 || strcmp(s, "alter") == 0) {
            a->alter = true;
        } else if (strcmp(s, "--zookeeper") == 0) {
            a->zookeeper = argv[++i];
        } else if (strcmp(s, "--file") == 0) {
            a->file = argv[++i];
        } else if (strcmp(s, "--entity-type") == 0 && a->ntypes < 2) {
            a->type[a->ntypes++] = argv[++i];
        } else if (strcmp(s, "--entity-name") == 0 && a->nnames < 2) {
            a->name[a->nnames++] = argv[++i];
        } else if (strcmp(s, "--add-config") == 0) {
            a->add = argv[++i];
        } else if (strcmp(s, "--delete-config") == 0) {
            a->del = argv[++i];
        } else if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
            fputs(quotas_help, stdout);
            return 0;
        } else {
            fprintf(stderr, "samsa quotas: unknown argument \"%s\"\n%s", s, quotas_help);
            return EXIT_USAGE;
        }
    }
    if (a->describe == a->alter) {
        return quota_usage("one of --describe or --alter");
    }
    if ((a->zookeeper == NULL) == (a->file == NULL)) {
        return quota_usage("one of --zookeeper or --file");
    }
    if (a->alter && (a->add == NULL) == (a->del == NULL)) {
        return quota_usage("--alter wants one of --add-config or --delete-config");
    }
    return -1;
}

int cmd_quotas(int argc, char **argv)
{
    struct quota_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        return rc;
    }
    char epath[LINE_MAX_LEN];
    if (a.alter && (rc = entity_path(&a, epath, sizeof epath)) != 0) {
        return rc;
    }
    struct entity *es = calloc(MAX_ENTITIES, sizeof *es);
    zhandle_t *zh = NULL;
    if (es == NULL) {
        return EXIT_FAIL;
    }
    size_t n = 0;
    rc = EXIT_FAIL;
    if (a.zookeeper != NULL) {
        zh = zk_open("quotas", a.zookeeper, 10000);
        if (zh == NULL) {
            goto out;
        }
    }
    if (a.describe) {
        int lrc = zh != NULL ? zk_load(zh, es, &n) : file_load(a.file, es, &n);
        if (lrc != 0) {
            fprintf(stderr, "samsa quotas: cannot read %s\n",
                    zh != NULL ? "the quota znodes" : a.file);
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            print_entity(&es[i]);
        }
        rc = 0;
        goto out;
    }
    struct entity *e = NULL;
    if (zh != NULL) {
        e = &es[0];
        if (zk_read_entity(zh, epath, e) != 0) {
            goto out;
        }
    } else {
        if (file_load(a.file, es, &n) != 0) {
            fprintf(stderr, "samsa quotas: cannot read %s\n", a.file);
            goto out;
        }
        for (size_t i = 0; i < n && e == NULL; i++) {
            e = strcmp(es[i].path, epath) == 0 ? &es[i] : NULL;
        }
        if (e == NULL && n < MAX_ENTITIES) {
            e = &es[n++];
            memset(e, 0, sizeof *e);
            (void)snprintf(e->path, sizeof e->path, "%s", epath);
        }
        if (e == NULL) {
            goto out;
        }
    }
    rc = edit_entity(e, a.add, a.del);
    if (rc != 0) {
        goto out;
    }
    rc = EXIT_FAIL;
    if (zh != NULL ? zk_write_entity(zh, e) != 0 : file_store(a.file, es, n) != 0) {
        if (zh == NULL) {
            fprintf(stderr, "samsa quotas: cannot write %s: %s\n", a.file, strerror(errno));
        }
        goto out;
    }
    printf("Completed updating config for entity %s.\n", epath);
    rc = 0;
out:
    if (zh != NULL) {
        zk_close(zh);
    }
    free(es);
    return rc;
}
