/*
 * samsa users add|change|remove: SCRAM users for the brokers' SASL
 * listeners, written as Kafka 2.0's
 *   kafka-configs.sh --zookeeper Z --alter --entity-type users --entity-name U
 *       --add-config 'SCRAM-SHA-256=[iterations=4096,password=...]'
 * writes them (AdminZkClient.changeUserOrUserClientIdConfig): the znode
 * /config/users/<user> ({"version":1,"config":{"SCRAM-SHA-256":"salt=...,
 * stored_key=...,server_key=...,iterations=4096"}}, its other keys kept),
 * then a notification /config/changes/config_change_<seq>
 * ({"version":2,"entity_path":"users/<user>"}) that every broker follows.
 * With --file, the line of a standalone broker's sasl.scram.credentials.file
 * is replaced (the broker reads it at start); with neither, the line is
 * printed. The credentials are computed here (a random salt, PBKDF2, the
 * two keys): the password goes nowhere else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "security/credential.h"
#include "tool.h"
#include "zk.h"

static const char users_help[] =
    "usage: samsa users add|change --user NAME --password PASSWORD [--mechanism M]...\n"
    "                  [--iterations N] [--zookeeper HOST:PORT[/CHROOT] | --file PATH]\n"
    "       samsa users remove --user NAME [--mechanism M]... [--zookeeper ... | --file PATH]\n"
    "SCRAM credentials of a user, in Kafka's format: --zookeeper writes\n"
    "/config/users/NAME and a change notification (every broker of the cluster takes\n"
    "it); --file rewrites a standalone broker's sasl.scram.credentials.file (read at\n"
    "start); neither prints the file's line. --mechanism SCRAM-SHA-256 or\n"
    "SCRAM-SHA-512 (default both); --iterations at least 4096 (default 4096);\n"
    "the password may come from $SAMSA_PASSWORD instead.\n"
    "Exit status: 0 done, 1 failed, 2 usage error.\n";

static const char *const mech_names[2] = {"SCRAM-SHA-256", "SCRAM-SHA-512"};
static const int mech_bits[2] = {256, 512};

struct users_args {
    const char *verb;
    const char *user;
    const char *password;
    bool mech[2];
    long long iterations;
    const char *zookeeper;
    const char *file;
};

static int parse_users_args(int argc, char **argv, struct users_args *a)
{
    memset(a, 0, sizeof *a);
    a->iterations = BR_SCRAM_MIN_ITERATIONS;
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(users_help, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : 0;
    }
    a->verb = argv[0];
    if (strcmp(a->verb, "add") != 0 && strcmp(a->verb, "change") != 0 &&
        strcmp(a->verb, "remove") != 0) {
        return usage_error("users", "unknown verb \"%s\" (add, change, remove)", a->verb);
    }
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        if (strcmp(k, "--help") == 0) {
            fputs(users_help, stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            return usage_error("users", "%s wants a value", k);
        }
        const char *v = argv[++i];
        if (strcmp(k, "--user") == 0) {
            a->user = v;
        } else if (strcmp(k, "--password") == 0) {
            a->password = v;
        } else if (strcmp(k, "--zookeeper") == 0) {
            a->zookeeper = v;
        } else if (strcmp(k, "--file") == 0) {
            a->file = v;
        } else if (strcmp(k, "--iterations") == 0) {
            if (!parse_ll(v, &a->iterations) || a->iterations < BR_SCRAM_MIN_ITERATIONS ||
                a->iterations > BR_SCRAM_MAX_ITERATIONS) {
                return usage_error("users", "--iterations: from %d to %d", BR_SCRAM_MIN_ITERATIONS,
                                   BR_SCRAM_MAX_ITERATIONS);
            }
        } else if (strcmp(k, "--mechanism") == 0) {
            int m = strcmp(v, mech_names[0]) == 0 ? 0 : strcmp(v, mech_names[1]) == 0 ? 1 : -1;
            if (m < 0) {
                return usage_error("users", "--mechanism: SCRAM-SHA-256 or SCRAM-SHA-512");
            }
            a->mech[m] = true;
        } else {
            return usage_error("users", "unknown option %s", k);
        }
    }
    if (!a->mech[0] && !a->mech[1]) {
        a->mech[0] = a->mech[1] = true;
    }
    if (a->password == NULL) {
        a->password = getenv("SAMSA_PASSWORD");
    }
    if (a->user == NULL || a->user[0] == '\0') {
        return usage_error("users", "--user is required");
    }
    if (strcmp(a->verb, "remove") != 0 && (a->password == NULL || a->password[0] == '\0')) {
        return usage_error("users", "%s wants --password (or $SAMSA_PASSWORD)", a->verb);
    }
    if (a->zookeeper != NULL && a->file != NULL) {
        return usage_error("users", "give --zookeeper or --file, not both");
    }
    return -1;
}

/* The credential of mechanism m for a's password, in Kafka's text. */
static int credential_text(const struct users_args *a, int m, char *text)
{
    struct br_scram_credential c;
    if (br_scram_credential_make(mech_bits[m], a->password, (int)a->iterations, &c) != 0) {
        fprintf(stderr, "samsa users: computing the %s credential failed\n", mech_names[m]);
        return -1;
    }
    br_scram_credential_format(mech_bits[m], &c, text);
    return 0;
}

/* The user's config object (an existing one's other keys kept) with the
 * verb applied: new credentials, or the mechanisms taken out. */
static int apply(const struct users_args *a, json_t *config)
{
    for (int m = 0; m < 2; m++) {
        if (!a->mech[m]) {
            continue;
        }
        if (strcmp(a->verb, "remove") == 0) {
            (void)json_object_del(config, mech_names[m]);
            continue;
        }
        char text[BR_SCRAM_CREDENTIAL_MAX];
        if (credential_text(a, m, text) != 0 ||
            json_object_set_new(config, mech_names[m], json_string(text)) != 0) {
            return -1;
        }
    }
    return 0;
}

/* {"version":1,"config":{...}} from the existing text (NULL: none) with
 * the verb applied: malloc'd, or NULL. */
static char *updated_json(const struct users_args *a, const char *old, size_t old_len)
{
    json_t *root = old != NULL ? json_loadb(old, old_len, 0, NULL) : NULL;
    json_t *config = root != NULL ? json_object_get(root, "config") : NULL;
    if (!json_is_object(config)) {
        json_decref(root);
        root = json_pack("{s:i,s:{}}", "version", 1, "config");
        config = root != NULL ? json_object_get(root, "config") : NULL;
    }
    char *out = NULL;
    if (config != NULL && apply(a, config) == 0) {
        out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    }
    json_decref(root);
    return out;
}

/* ------------------------------------------------------------ ZooKeeper */

static int write_zookeeper(const struct users_args *a, const char *sanitized)
{
    const char *keys[2];
    const char *values[2];
    char text[2][BR_SCRAM_CREDENTIAL_MAX];
    size_t n = 0;
    bool remove = strcmp(a->verb, "remove") == 0;
    for (int m = 0; m < 2; m++) {
        if (!a->mech[m]) {
            continue;
        }
        if (!remove && credential_text(a, m, text[n]) != 0) {
            return EXIT_FAIL;
        }
        keys[n] = mech_names[m];
        values[n] = text[n];
        n++;
    }
    struct zk_config_edit edit = {keys, values, n, NULL, 0};
    if (remove) {
        edit = (struct zk_config_edit){NULL, NULL, 0, keys, n};
    }
    zhandle_t *zh = zk_open("users", a->zookeeper, 10000);
    if (zh == NULL) {
        return EXIT_FAIL;
    }
    char entity[BR_SCRAM_USER_SANITIZED_MAX + 16];
    (void)snprintf(entity, sizeof entity, "users/%s", sanitized);
    int rc = zk_config_change(zh, "users", entity, &edit, NULL);
    zk_close(zh);
    if (rc != 0) {
        return EXIT_FAIL;
    }
    printf("%s SCRAM credentials of %s in /config/%s\n", remove ? "removed" : "wrote", a->user,
           entity);
    return 0;
}

/* ------------------------------------------------------------ the file */

static int write_file(const struct users_args *a, const char *sanitized)
{
    FILE *in = fopen(a->file, "r");
    if (in == NULL && errno != ENOENT) {
        fprintf(stderr, "samsa users: %s: %s\n", a->file, strerror(errno));
        return EXIT_FAIL;
    }
    char tmp[4096];
    (void)snprintf(tmp, sizeof tmp, "%s.tmp", a->file);
    FILE *out = fopen(tmp, "w");
    if (out == NULL) {
        fprintf(stderr, "samsa users: %s: %s\n", tmp, strerror(errno));
        if (in != NULL) {
            (void)fclose(in);
        }
        return EXIT_FAIL;
    }
    size_t slen = strlen(sanitized);
    char *line = NULL;
    size_t cap = 0;
    char *old = NULL;
    while (in != NULL && getline(&line, &cap, in) >= 0) {
        if (strncmp(line, sanitized, slen) == 0 && line[slen] == '=') {
            free(old);
            old = strdup(line + slen + 1);
            continue;
        }
        (void)fputs(line, out);
    }
    free(line);
    if (in != NULL) {
        (void)fclose(in);
    }
    char *json = updated_json(a, old, old != NULL ? strlen(old) : 0);
    free(old);
    json_t *root = json != NULL ? json_loads(json, 0, NULL) : NULL;
    bool empty = root != NULL && json_object_size(json_object_get(root, "config")) == 0;
    json_decref(root);
    if (json != NULL && !empty) {
        (void)fprintf(out, "%s=%s\n", sanitized, json);
    }
    bool ok = json != NULL && fflush(out) == 0 && fsync(fileno(out)) == 0;
    free(json);
    if (fclose(out) != 0 || !ok || rename(tmp, a->file) != 0) {
        fprintf(stderr, "samsa users: writing %s: %s\n", a->file, strerror(errno));
        (void)unlink(tmp);
        return EXIT_FAIL;
    }
    printf("%s SCRAM credentials of %s in %s (the broker reads it at start)\n",
           strcmp(a->verb, "remove") == 0 ? "removed" : "wrote", a->user, a->file);
    return 0;
}

int cmd_users(int argc, char **argv)
{
    struct users_args a;
    int rc = parse_users_args(argc, argv, &a);
    if (rc >= 0) {
        return rc;
    }
    char sanitized[BR_SCRAM_USER_SANITIZED_MAX + 1];
    if (a.user == NULL || strlen(a.user) > BR_SCRAM_USER_NAME_MAX ||
        !br_user_sanitize(a.user, sanitized, sizeof sanitized)) {
        return usage_error("users", "--user: at most %d bytes", BR_SCRAM_USER_NAME_MAX);
    }
    if (a.zookeeper != NULL) {
        return write_zookeeper(&a, sanitized);
    }
    if (a.file != NULL) {
        return write_file(&a, sanitized);
    }
    char *json = updated_json(&a, NULL, 0);
    if (json == NULL) {
        return EXIT_FAIL;
    }
    printf("%s=%s\n", sanitized, json);
    free(json);
    return 0;
}
