/*
 * acl_rdkafka: librdkafka's ACL admin API (rd_kafka_CreateAcls,
 * rd_kafka_DescribeAcls, rd_kafka_DeleteAcls: CreateAcls, DescribeAcls and
 * DeleteAcls v0-1 on the wire) against a broker, for test_acls.py.
 *
 *   acl_rdkafka PROPERTIES create|describe|delete TYPE NAME PATTERN PRINCIPAL OPERATION
 *               PERMISSION
 *
 * PROPERTIES: a file of librdkafka key=value lines (bootstrap.servers, the
 * TLS keys). TYPE, PATTERN, OPERATION and PERMISSION are librdkafka's names
 * (Topic, Group, Broker, Any; Literal, Prefixed, Match, Any; Read, Write,
 * ..., Any; Allow, Deny, Any), any case; NAME and PRINCIPAL may be "-" for
 * none (a filter's wildcard). Prints one JSON line: {"error": null or
 * Kafka's error name, "message": ..., "acls": [[type, name, pattern,
 * principal, host, operation, permission], ...]} (describe: the ACLs found;
 * delete: those deleted). Exit status 0 when the call was answered (error
 * or not), 1 on a local failure, 2 on bad arguments.
 */
#include <librdkafka/rdkafka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TIMEOUT_MS 30000

/* The value of enum type `name` whose librdkafka name is `want`; -1. */
static int lookup(const char *want, int count, const char *(*name)(int))
{
    for (int i = 0; i < count; i++) {
        const char *n = name(i);
        if (n != NULL && strcasecmp(n, want) == 0) {
            return i;
        }
    }
    return -1;
}

static const char *restype_name(int v)
{
    return rd_kafka_ResourceType_name((rd_kafka_ResourceType_t)v);
}

static const char *pattern_name(int v)
{
    return rd_kafka_ResourcePatternType_name((rd_kafka_ResourcePatternType_t)v);
}

static const char *operation_name(int v)
{
    return rd_kafka_AclOperation_name((rd_kafka_AclOperation_t)v);
}

static const char *permission_name(int v)
{
    return rd_kafka_AclPermissionType_name((rd_kafka_AclPermissionType_t)v);
}

/* s as a JSON string (the names here hold no control bytes). */
static void json_str(const char *s)
{
    if (s == NULL) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\') {
            putchar('\\');
        }
        putchar((unsigned char)*s >= 0x20 ? *s : '?');
    }
    putchar('"');
}

static void print_acls(const rd_kafka_AclBinding_t **acls, size_t n)
{
    fputs("[", stdout);
    for (size_t i = 0; i < n; i++) {
        const rd_kafka_AclBinding_t *a = acls[i];
        fputs(i == 0 ? "[" : ",[", stdout);
        json_str(rd_kafka_ResourceType_name(rd_kafka_AclBinding_restype(a)));
        putchar(',');
        json_str(rd_kafka_AclBinding_name(a));
        putchar(',');
        json_str(rd_kafka_ResourcePatternType_name(rd_kafka_AclBinding_resource_pattern_type(a)));
        putchar(',');
        json_str(rd_kafka_AclBinding_principal(a));
        putchar(',');
        json_str(rd_kafka_AclBinding_host(a));
        putchar(',');
        json_str(rd_kafka_AclOperation_name(rd_kafka_AclBinding_operation(a)));
        putchar(',');
        json_str(rd_kafka_AclPermissionType_name(rd_kafka_AclBinding_permission_type(a)));
        putchar(']');
    }
    fputs("]", stdout);
}

static void print_answer(const char *error, const char *message,
                         const rd_kafka_AclBinding_t **acls, size_t n)
{
    fputs("{\"error\":", stdout);
    json_str(error);
    fputs(",\"message\":", stdout);
    json_str(message);
    fputs(",\"acls\":", stdout);
    print_acls(acls, n);
    fputs("}\n", stdout);
}

static rd_kafka_conf_t *read_conf(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        return NULL;
    }
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char line[4096];
    char err[512];
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        char *eq = strchr(line, '=');
        if (line[0] == '#' || eq == NULL) {
            continue;
        }
        *eq = '\0';
        if (rd_kafka_conf_set(conf, line, eq + 1, err, sizeof err) != RD_KAFKA_CONF_OK) {
            fprintf(stderr, "%s: %s\n", path, err);
            rd_kafka_conf_destroy(conf);
            (void)fclose(f);
            return NULL;
        }
    }
    (void)fclose(f);
    return conf;
}

/* The answer's event of the call just made; NULL after TIMEOUT_MS. */
static rd_kafka_event_t *wait_event(rd_kafka_queue_t *q)
{
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, TIMEOUT_MS);
    if (ev == NULL) {
        fprintf(stderr, "acl_rdkafka: no answer in %d ms\n", TIMEOUT_MS);
    }
    return ev;
}

/* The call's own answer when it failed as a whole (printed, the event
 * destroyed): true; false when its results are to be read. */
static bool failed_whole(rd_kafka_event_t *ev)
{
    if (rd_kafka_event_error(ev) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        return false;
    }
    print_answer(rd_kafka_err2name(rd_kafka_event_error(ev)), rd_kafka_event_error_string(ev),
                 NULL, 0);
    rd_kafka_event_destroy(ev);
    return true;
}

/* The event of the call just made when its results are to be read; NULL
 * with *rc 1 when no answer came, 0 when it failed as a whole (printed). */
static rd_kafka_event_t *results_of(rd_kafka_queue_t *q, int *rc)
{
    rd_kafka_event_t *ev = wait_event(q);
    *rc = ev == NULL ? 1 : 0;
    return ev == NULL || failed_whole(ev) ? NULL : ev;
}

/* create: the one binding's result. */
static int do_create(rd_kafka_t *rk, rd_kafka_queue_t *q, rd_kafka_AclBinding_t *b)
{
    rd_kafka_CreateAcls(rk, &b, 1, NULL, q);
    int rc = 0;
    rd_kafka_event_t *ev = results_of(q, &rc);
    if (ev == NULL) {
        return rc;
    }
    size_t n = 0;
    const rd_kafka_acl_result_t **res =
        rd_kafka_CreateAcls_result_acls(rd_kafka_event_CreateAcls_result(ev), &n);
    const rd_kafka_error_t *e = n > 0 ? rd_kafka_acl_result_error(res[0]) : NULL;
    print_answer(e != NULL ? rd_kafka_error_name(e) : NULL,
                 e != NULL ? rd_kafka_error_string(e) : NULL, NULL, 0);
    rd_kafka_event_destroy(ev);
    return 0;
}

static int do_describe(rd_kafka_t *rk, rd_kafka_queue_t *q, rd_kafka_AclBindingFilter_t *f)
{
    rd_kafka_DescribeAcls(rk, f, NULL, q);
    int rc = 0;
    rd_kafka_event_t *ev = results_of(q, &rc);
    if (ev == NULL) {
        return rc;
    }
    size_t n = 0;
    const rd_kafka_AclBinding_t **acls =
        rd_kafka_DescribeAcls_result_acls(rd_kafka_event_DescribeAcls_result(ev), &n);
    print_answer(NULL, NULL, acls, n);
    rd_kafka_event_destroy(ev);
    return 0;
}

static int do_delete(rd_kafka_t *rk, rd_kafka_queue_t *q, rd_kafka_AclBindingFilter_t *f)
{
    rd_kafka_DeleteAcls(rk, &f, 1, NULL, q);
    int rc = 0;
    rd_kafka_event_t *ev = results_of(q, &rc);
    if (ev == NULL) {
        return rc;
    }
    size_t n = 0;
    const rd_kafka_DeleteAcls_result_response_t **rs =
        rd_kafka_DeleteAcls_result_responses(rd_kafka_event_DeleteAcls_result(ev), &n);
    const rd_kafka_error_t *e = n > 0 ? rd_kafka_DeleteAcls_result_response_error(rs[0]) : NULL;
    size_t m = 0;
    const rd_kafka_AclBinding_t **acls =
        n > 0 ? rd_kafka_DeleteAcls_result_response_matching_acls(rs[0], &m) : NULL;
    print_answer(e != NULL ? rd_kafka_error_name(e) : NULL,
                 e != NULL ? rd_kafka_error_string(e) : NULL, acls, m);
    rd_kafka_event_destroy(ev);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 9) {
        fprintf(stderr, "usage: acl_rdkafka PROPERTIES create|describe|delete TYPE NAME "
                        "PATTERN PRINCIPAL OPERATION PERMISSION\n");
        return 2;
    }
    const char *verb = argv[2];
    int type = lookup(argv[3], RD_KAFKA_RESOURCE__CNT, restype_name);
    int pattern = lookup(argv[5], RD_KAFKA_RESOURCE_PATTERN_TYPE__CNT, pattern_name);
    int op = lookup(argv[7], RD_KAFKA_ACL_OPERATION__CNT, operation_name);
    int perm = lookup(argv[8], RD_KAFKA_ACL_PERMISSION_TYPE__CNT, permission_name);
    const char *name = strcmp(argv[4], "-") == 0 ? NULL : argv[4];
    const char *principal = strcmp(argv[6], "-") == 0 ? NULL : argv[6];
    if (type < 0 || pattern < 0 || op < 0 || perm < 0) {
        fprintf(stderr, "acl_rdkafka: unknown type, pattern, operation or permission\n");
        return 2;
    }
    rd_kafka_conf_t *conf = read_conf(argv[1]);
    if (conf == NULL) {
        return 1;
    }
    char err[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (rk == NULL) {
        fprintf(stderr, "acl_rdkafka: %s\n", err);
        rd_kafka_conf_destroy(conf);
        return 1;
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    int rc = 2;
    const char *host = strcmp(verb, "create") == 0 ? "*" : NULL;
    if (strcmp(verb, "create") == 0) {
        rd_kafka_AclBinding_t *b = rd_kafka_AclBinding_new(
            (rd_kafka_ResourceType_t)type, name, (rd_kafka_ResourcePatternType_t)pattern,
            principal, host, (rd_kafka_AclOperation_t)op, (rd_kafka_AclPermissionType_t)perm, err,
            sizeof err);
        if (b == NULL) {
            fprintf(stderr, "acl_rdkafka: %s\n", err);
        } else {
            rc = do_create(rk, q, b);
            rd_kafka_AclBinding_destroy(b);
        }
    } else if (strcmp(verb, "describe") == 0 || strcmp(verb, "delete") == 0) {
        rd_kafka_AclBindingFilter_t *f = rd_kafka_AclBindingFilter_new(
            (rd_kafka_ResourceType_t)type, name, (rd_kafka_ResourcePatternType_t)pattern,
            principal, host, (rd_kafka_AclOperation_t)op, (rd_kafka_AclPermissionType_t)perm, err,
            sizeof err);
        if (f == NULL) {
            fprintf(stderr, "acl_rdkafka: %s\n", err);
        } else {
            rc = strcmp(verb, "describe") == 0 ? do_describe(rk, q, f) : do_delete(rk, q, f);
            rd_kafka_AclBinding_destroy(f);
        }
    } else {
        fprintf(stderr, "acl_rdkafka: unknown verb %s\n", verb);
    }
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
    return rc;
}
