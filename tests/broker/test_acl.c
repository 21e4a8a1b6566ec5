/* Unit tests for the ACL store and decision (broker/src/auth/acl.h):
 * Kafka 2.0's SimpleAclAuthorizer.authorize rules (Deny first, the
 * implied operations of an Allow only, the literal wildcard and prefixed
 * patterns, super users, allow.everyone.if.no.acl.found and what "no ACL
 * found" means) and the filters of DescribeAcls/DeleteAcls
 * (ResourcePatternFilter, AccessControlEntryFilter); the ACL znodes'
 * data (cluster/zk_json.h). Links the cluster layer (and auth below it). */
#include <stdbool.h>
#include <string.h>

#include "auth/acl.h"
#include "base/logging.h"
#include "cluster/zk_json.h"

#include <samsa-protocol/alloc.h>
#include "cunit_run.h"

static struct br_acl_binding bind(int8_t type, int8_t pattern, const char *name,
                                  const char *principal, const char *host, int8_t op,
                                  int8_t perm)
{
    return (struct br_acl_binding){type,      pattern,   name,
                                   name != NULL ? strlen(name) : 0,
                                   principal, principal != NULL ? strlen(principal) : 0,
                                   host,      host != NULL ? strlen(host) : 0,
                                   op,        perm};
}

static void add(struct br_acl_store *s, int8_t type, int8_t pattern, const char *name,
                const char *principal, const char *host, int8_t op, int8_t perm)
{
    struct br_acl_binding b = bind(type, pattern, name, principal, host, op, perm);
    CU_ASSERT_TRUE(br_acl_binding_valid(&b));
    CU_ASSERT_EQUAL(br_acl_add(s, &b), 0);
}

static const struct br_acl_config CFG = {NULL, 0, false};

static bool can(const struct br_acl_store *s, const struct br_acl_config *cfg, const char *who,
                enum br_acl_op op, enum br_acl_rtype type, const char *name)
{
    return br_acl_authorize(s, cfg, who, "10.0.0.1", op, type, name, strlen(name));
}

/* An Allow on Read implies Describe; a Deny wins over an Allow; a Deny on
 * Read does not deny Describe (implication is the Allow's only). */
static void test_allow_deny_and_implied(void)
{
    struct br_acl_store s;
    br_acl_store_init(&s);
    add(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "orders", "User:alice", "*", BR_ACL_OP_READ,
        BR_ACL_PERM_ALLOW);
    CU_ASSERT_TRUE(can(&s, &CFG, "User:alice", BR_ACL_OP_READ, BR_ACL_RES_TOPIC, "orders"));
    CU_ASSERT_TRUE(can(&s, &CFG, "User:alice", BR_ACL_OP_DESCRIBE, BR_ACL_RES_TOPIC, "orders"));
    CU_ASSERT_FALSE(can(&s, &CFG, "User:alice", BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, "orders"));
    CU_ASSERT_FALSE(can(&s, &CFG, "User:bob", BR_ACL_OP_READ, BR_ACL_RES_TOPIC, "orders"));
    CU_ASSERT_FALSE(can(&s, &CFG, "User:alice", BR_ACL_OP_READ, BR_ACL_RES_TOPIC, "order"));
    CU_ASSERT_FALSE(can(&s, &CFG, "User:alice", BR_ACL_OP_READ, BR_ACL_RES_GROUP, "orders"));
    add(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "orders", "User:*", "10.0.0.1", BR_ACL_OP_READ,
        BR_ACL_PERM_DENY);
    CU_ASSERT_FALSE(can(&s, &CFG, "User:alice", BR_ACL_OP_READ, BR_ACL_RES_TOPIC, "orders"));
    CU_ASSERT_TRUE(can(&s, &CFG, "User:alice", BR_ACL_OP_DESCRIBE, BR_ACL_RES_TOPIC, "orders"));
    /* another host: the Deny names 10.0.0.1 only */
    CU_ASSERT_TRUE(br_acl_authorize(&s, &CFG, "User:alice", "10.0.0.2", BR_ACL_OP_READ,
                                    BR_ACL_RES_TOPIC, "orders", 6));
    /* AlterConfigs implies DescribeConfigs; All grants everything */
    add(&s, BR_ACL_RES_CLUSTER, BR_ACL_PAT_LITERAL, BR_ACL_CLUSTER_NAME, "User:ops", "*",
        BR_ACL_OP_ALTER_CONFIGS, BR_ACL_PERM_ALLOW);
    CU_ASSERT_TRUE(can(&s, &CFG, "User:ops", BR_ACL_OP_DESCRIBE_CONFIGS, BR_ACL_RES_CLUSTER,
                       BR_ACL_CLUSTER_NAME));
    CU_ASSERT_FALSE(can(&s, &CFG, "User:ops", BR_ACL_OP_DESCRIBE, BR_ACL_RES_CLUSTER,
                        BR_ACL_CLUSTER_NAME));
    add(&s, BR_ACL_RES_GROUP, BR_ACL_PAT_LITERAL, "g", "User:ops", "*", BR_ACL_OP_ALL,
        BR_ACL_PERM_ALLOW);
    CU_ASSERT_TRUE(can(&s, &CFG, "User:ops", BR_ACL_OP_DELETE, BR_ACL_RES_GROUP, "g"));
    br_acl_store_fini(&s);
}

/* The literal "*" applies to every name of its type; a prefixed pattern
 * to every name it starts. */
static void test_wildcard_and_prefixed(void)
{
    struct br_acl_store s;
    br_acl_store_init(&s);
    add(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "*", "User:reader", "*", BR_ACL_OP_READ,
        BR_ACL_PERM_ALLOW);
    add(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_PREFIXED, "pay-", "User:payments", "*",
        BR_ACL_OP_WRITE, BR_ACL_PERM_ALLOW);
    CU_ASSERT_TRUE(can(&s, &CFG, "User:reader", BR_ACL_OP_READ, BR_ACL_RES_TOPIC, "anything"));
    CU_ASSERT_TRUE(can(&s, &CFG, "User:payments", BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, "pay-eu"));
    CU_ASSERT_TRUE(can(&s, &CFG, "User:payments", BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, "pay-"));
    CU_ASSERT_FALSE(can(&s, &CFG, "User:payments", BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, "pay"));
    CU_ASSERT_FALSE(can(&s, &CFG, "User:payments", BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, "xpay-eu"));
    br_acl_store_fini(&s);
}

/* Super users skip everything; allow.everyone.if.no.acl.found grants only
 * where no ACL at all applies: one ACL for someone else locks everyone
 * else out. */
static void test_super_users_and_no_acl_found(void)
{
    struct br_acl_store s;
    br_acl_store_init(&s);
    const char *const supers[] = {"User:admin", "User:broker"};
    struct br_acl_config open = {supers, 2, true};
    CU_ASSERT_TRUE(can(&s, &open, "User:anyone", BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, "t"));
    CU_ASSERT_FALSE(can(&s, &CFG, "User:anyone", BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, "t"));
    add(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "t", "User:alice", "*", BR_ACL_OP_WRITE,
        BR_ACL_PERM_ALLOW);
    CU_ASSERT_FALSE(can(&s, &open, "User:anyone", BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, "t"));
    CU_ASSERT_TRUE(can(&s, &open, "User:anyone", BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, "u"));
    add(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "t", "User:admin", "*", BR_ACL_OP_ALL,
        BR_ACL_PERM_DENY);
    CU_ASSERT_TRUE(can(&s, &open, "User:admin", BR_ACL_OP_WRITE, BR_ACL_RES_TOPIC, "t"));
    br_acl_store_fini(&s);
}

/* DescribeAcls/DeleteAcls filters: ANY and null match every value; MATCH
 * with a name matches the literal name, the literal "*" and the prefixes
 * of the name; a pattern type named matches exactly. */
static void test_filters(void)
{
    struct br_acl_store s;
    br_acl_store_init(&s);
    add(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "pay-eu", "User:a", "*", BR_ACL_OP_READ,
        BR_ACL_PERM_ALLOW);
    add(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "*", "User:b", "*", BR_ACL_OP_READ,
        BR_ACL_PERM_ALLOW);
    add(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_PREFIXED, "pay", "User:c", "*", BR_ACL_OP_WRITE,
        BR_ACL_PERM_DENY);
    add(&s, BR_ACL_RES_GROUP, BR_ACL_PAT_LITERAL, "pay-eu", "User:a", "*", BR_ACL_OP_READ,
        BR_ACL_PERM_ALLOW);
    struct {
        struct br_acl_binding f;
        size_t want;
    } cases[] = {
        {bind(BR_ACL_RES_ANY, BR_ACL_PAT_ANY, NULL, NULL, NULL, BR_ACL_OP_ANY, BR_ACL_PERM_ANY), 4},
        {bind(BR_ACL_RES_TOPIC, BR_ACL_PAT_ANY, NULL, NULL, NULL, BR_ACL_OP_ANY, BR_ACL_PERM_ANY),
         3},
        {bind(BR_ACL_RES_TOPIC, BR_ACL_PAT_MATCH, "pay-eu", NULL, NULL, BR_ACL_OP_ANY,
              BR_ACL_PERM_ANY),
         3},
        {bind(BR_ACL_RES_TOPIC, BR_ACL_PAT_ANY, "pay-eu", NULL, NULL, BR_ACL_OP_ANY,
              BR_ACL_PERM_ANY),
         1},
        {bind(BR_ACL_RES_TOPIC, BR_ACL_PAT_PREFIXED, "pay", NULL, NULL, BR_ACL_OP_ANY,
              BR_ACL_PERM_ANY),
         1},
        {bind(BR_ACL_RES_ANY, BR_ACL_PAT_ANY, NULL, "User:a", NULL, BR_ACL_OP_ANY,
              BR_ACL_PERM_ANY),
         2},
        {bind(BR_ACL_RES_ANY, BR_ACL_PAT_ANY, NULL, NULL, NULL, BR_ACL_OP_ANY, BR_ACL_PERM_DENY),
         1},
        {bind(BR_ACL_RES_TOPIC, BR_ACL_PAT_MATCH, "other", NULL, NULL, BR_ACL_OP_READ,
              BR_ACL_PERM_ANY),
         1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = 0;
        for (size_t i = 0; i < s.n; i++) {
            for (size_t k = 0; k < s.res[i].n; k++) {
                n += br_acl_filter_matches(&cases[c].f, &s.res[i], &s.res[i].acls[k]) ? 1u : 0u;
            }
        }
        CU_ASSERT_EQUAL(n, cases[c].want);
        CU_ASSERT_FALSE(br_acl_binding_valid(&cases[c].f));
    }
    /* a znode's data replaces a pattern's entries; none removes it */
    char principal[] = "User:z";
    char host[] = "*";
    struct br_acl one = {principal, host, BR_ACL_OP_READ, BR_ACL_PERM_ALLOW};
    CU_ASSERT_EQUAL(br_acl_set(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "pay-eu", 6, &one, 1), 0);
    struct br_acl_resource *r = br_acl_find(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "pay-eu", 6);
    CU_ASSERT_TRUE(r != NULL && r->n == 1 && strcmp(r->acls[0].principal, "User:z") == 0);
    CU_ASSERT_EQUAL(br_acl_set(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "pay-eu", 6, NULL, 0), 0);
    CU_ASSERT_PTR_NULL(br_acl_find(&s, BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "pay-eu", 6));
    CU_ASSERT_EQUAL(s.n, 3);
    br_acl_store_fini(&s);
}

static void test_names(void)
{
    CU_ASSERT_STRING_EQUAL(br_acl_op_name(BR_ACL_OP_IDEMPOTENT_WRITE), "IdempotentWrite");
    CU_ASSERT_EQUAL(br_acl_op_parse("describeconfigs", 15), BR_ACL_OP_DESCRIBE_CONFIGS);
    CU_ASSERT_EQUAL(br_acl_op_parse("Any", 3), -1);
    CU_ASSERT_EQUAL(br_acl_rtype_parse("TransactionalId", 15), BR_ACL_RES_TXN_ID);
    CU_ASSERT_EQUAL(br_acl_perm_parse("ALLOW", 5), BR_ACL_PERM_ALLOW);
    CU_ASSERT_STRING_EQUAL(br_acl_rtype_name(99), "Unknown");
    CU_ASSERT_EQUAL(br_acl_denied_error(BR_ACL_RES_GROUP), KP_ERR_GROUP_AUTHORIZATION_FAILED);
}

/* Kafka 2.0's ACL znode data (Acl.toJsonCompatibleMap / fromBytes): read
 * in any key order and case, written back and read the same; the change
 * notifications of both kinds; what Kafka would not write refused. */
static void test_znodes(void)
{
    static const char doc[] =
        "{\"version\":1,\"acls\":[{\"host\":\"*\",\"operation\":\"Read\","
        "\"permissionType\":\"Allow\",\"principal\":\"User:alice\"},{\"principal\":"
        "\"User:*\",\"permissionType\":\"DENY\",\"operation\":\"idempotentwrite\","
        "\"host\":\"10.0.0.1\"}]}";
    char err[256];
    struct br_acl *acls = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_zk_acls_decode(doc, sizeof doc - 1, "/kafka-acl/Topic/t", &acls, &n,
                                            err, sizeof err),
                          0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    if (acls == NULL) {
        CU_FAIL_FATAL("no ACLs");
        return;
    }
    CU_ASSERT_TRUE(acls[0].op == BR_ACL_OP_READ && acls[0].perm == BR_ACL_PERM_ALLOW &&
                   strcmp(acls[0].principal, "User:alice") == 0 && strcmp(acls[0].host, "*") == 0);
    CU_ASSERT_TRUE(acls[1].op == BR_ACL_OP_IDEMPOTENT_WRITE && acls[1].perm == BR_ACL_PERM_DENY);
    char *json = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(br_zk_acls_encode(acls, n, &json, &len), 0);
    CU_ASSERT_STRING_EQUAL(json, "{\"version\":1,\"acls\":[{\"principal\":\"User:alice\","
                                 "\"permissionType\":\"Allow\",\"operation\":\"Read\","
                                 "\"host\":\"*\"},{\"principal\":\"User:*\","
                                 "\"permissionType\":\"Deny\",\"operation\":"
                                 "\"IdempotentWrite\",\"host\":\"10.0.0.1\"}]}");
    kp_free(json);
    br_zk_acls_free(acls, n);
    static const char *const bad[] = {
        "{\"version\":2,\"acls\":[]}",
        "{\"version\":1}",
        "{\"version\":1,\"acls\":[{\"principal\":\"alice\",\"permissionType\":\"Allow\","
        "\"operation\":\"Read\",\"host\":\"*\"}]}",
        "{\"version\":1,\"acls\":[{\"principal\":\"User:a\",\"permissionType\":\"Any\","
        "\"operation\":\"Read\",\"host\":\"*\"}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_NOT_EQUAL(br_zk_acls_decode(bad[i], strlen(bad[i]), "/kafka-acl/Topic/t", &acls,
                                              &n, err, sizeof err),
                            0);
        CU_ASSERT_TRUE(acls == NULL && n == 0);
        CU_ASSERT_EQUAL(strncmp(err, "/kafka-acl/Topic/t: ", 20), 0);
    }
    struct br_zk_acl_change ch;
    CU_ASSERT_EQUAL(br_zk_acl_change_decode("Topic:orders", 12, false, "c", &ch, err, sizeof err),
                    0);
    CU_ASSERT_TRUE(ch.type == BR_ACL_RES_TOPIC && ch.pattern == BR_ACL_PAT_LITERAL &&
                   strcmp(ch.name, "orders") == 0);
    static const char ext[] =
        "{\"version\":1,\"resourceType\":\"Group\",\"name\":\"g-\",\"patternType\":\"PREFIXED\"}";
    CU_ASSERT_EQUAL(br_zk_acl_change_decode(ext, sizeof ext - 1, true, "c", &ch, err, sizeof err),
                    0);
    CU_ASSERT_TRUE(ch.type == BR_ACL_RES_GROUP && ch.pattern == BR_ACL_PAT_PREFIXED &&
                   strcmp(ch.name, "g-") == 0);
    CU_ASSERT_NOT_EQUAL(br_zk_acl_change_decode("orders", 6, false, "c", &ch, err, sizeof err), 0);
    CU_ASSERT_NOT_EQUAL(br_zk_acl_change_decode("Topik:x", 7, false, "c", &ch, err, sizeof err), 0);
}

/* The notifications written: Kafka's literal text, and the extended JSON
 * with a group's name escaped (a name may hold '"' and '\\'), read back. */
static void test_change_notifications_written(void)
{
    char err[256];
    const char *folder = NULL;
    char *out = NULL;
    size_t len = 0;
    struct br_zk_acl_change lit = {BR_ACL_RES_TOPIC, BR_ACL_PAT_LITERAL, "orders"};
    CU_ASSERT_EQUAL_FATAL(br_zk_acl_change_encode(&lit, &folder, &out, &len), 0);
    CU_ASSERT_STRING_EQUAL(folder, "/kafka-acl-changes");
    CU_ASSERT_TRUE(len == 12 && memcmp(out, "Topic:orders", 12) == 0);
    kp_free(out);
    struct br_zk_acl_change pre = {BR_ACL_RES_GROUP, BR_ACL_PAT_PREFIXED, "g\"x\\y"};
    CU_ASSERT_EQUAL_FATAL(br_zk_acl_change_encode(&pre, &folder, &out, &len), 0);
    CU_ASSERT_STRING_EQUAL(folder, "/kafka-acl-extended-changes");
    struct br_zk_acl_change back;
    CU_ASSERT_EQUAL_FATAL(br_zk_acl_change_decode(out, len, true, "c", &back, err, sizeof err), 0);
    CU_ASSERT_TRUE(back.type == BR_ACL_RES_GROUP && back.pattern == BR_ACL_PAT_PREFIXED &&
                   strcmp(back.name, "g\"x\\y") == 0);
    kp_free(out);
    char path[128];
    CU_ASSERT_TRUE(br_zk_acl_path(BR_ACL_PAT_PREFIXED, BR_ACL_RES_GROUP, "g-", path, sizeof path));
    CU_ASSERT_STRING_EQUAL(path, "/kafka-acl-extended/prefixed/Group/g-");
    CU_ASSERT_FALSE(br_zk_acl_path(BR_ACL_PAT_LITERAL, BR_ACL_RES_TOPIC, "a/b", path, sizeof path));
}

static CU_TestInfo tests[] = {
    {"allow_deny_and_implied", test_allow_deny_and_implied},
    {"wildcard_and_prefixed", test_wildcard_and_prefixed},
    {"super_users_and_no_acl_found", test_super_users_and_no_acl_found},
    {"filters", test_filters},
    {"names", test_names},
    {"znodes", test_znodes},
    {"change_notifications_written", test_change_notifications_written},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-acl", tests);
}
