/*
 * fuzz_acl_json: the decoders of Kafka 2.0's ACL znodes
 * (broker/src/cluster/zk_json.h: a resource pattern's ACLs, the literal and
 * the extended change notifications) and the ACLs' encoder.
 *
 * Input: byte 0 picks the decoder (value % 3: ACLs, literal change,
 * extended change); the rest is the znode's data.
 *
 * Checks, beyond "no crash, no over-read, no leak, no unbounded memory":
 *   - a rejected document returns a documented code, leaves its outputs
 *     empty, and says so in a message that starts with the znode's name;
 *   - accepted ACLs hold only values Kafka has (an operation and a
 *     permission it names, a "Type:name" principal, a host), and encoding
 *     them gives bytes that decode to the same ACLs and encode to the same
 *     bytes again;
 *   - an accepted change names a known resource type, LITERAL or PREFIXED,
 *     and a name of at most BR_ZK_ACL_TEXT_MAX bytes.
 */
#include "fuzz.h"

#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/err.h>

#include "base/logging.h"
#include "cluster/zk_json.h"

#define ERRLEN 512
#define NAME "/fuzz/kafka-acl"

static void check_rejected(int rc, const char *err)
{
    fuzz_check(rc == KP_E_CORRUPT || rc == KP_E_UNSUPPORTED || rc == KP_E_TOO_LARGE ||
                   rc == KP_E_NOMEM,
               "undocumented error", rc);
    fuzz_check(strncmp(err, NAME ": ", strlen(NAME ": ")) == 0, "a message without the name", rc);
}

static bool same_acls(const struct br_acl *a, size_t na, const struct br_acl *b, size_t nb)
{
    if (na != nb) {
        return false;
    }
    for (size_t i = 0; i < na; i++) {
        if (a[i].op != b[i].op || a[i].perm != b[i].perm ||
            strcmp(a[i].principal, b[i].principal) != 0 || strcmp(a[i].host, b[i].host) != 0) {
            return false;
        }
    }
    return true;
}

static void check_acls(const uint8_t *data, size_t size)
{
    char err[ERRLEN] = "";
    struct br_acl *acls = NULL;
    size_t n = 0;
    int rc = br_zk_acls_decode((const char *)data, size, NAME, &acls, &n, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        fuzz_check(acls == NULL && n == 0, "a rejected document kept ACLs", rc);
        return;
    }
    fuzz_check(n <= BR_ZK_ACLS_MAX, "ACL count", (int)n);
    for (size_t i = 0; i < n; i++) {
        fuzz_check(acls[i].op > BR_ACL_OP_ANY && acls[i].op <= BR_ACL_OP_IDEMPOTENT_WRITE,
                   "operation", acls[i].op);
        fuzz_check(acls[i].perm == BR_ACL_PERM_ALLOW || acls[i].perm == BR_ACL_PERM_DENY,
                   "permission", acls[i].perm);
        fuzz_check(strchr(acls[i].principal, ':') != NULL, "principal without a type", (int)i);
        fuzz_check(acls[i].host[0] != '\0', "empty host", (int)i);
    }
    char *json = NULL;
    size_t len = 0;
    rc = br_zk_acls_encode(acls, n, &json, &len);
    if (rc == KP_E_NOMEM) {
        br_zk_acls_free(acls, n);
        return;
    }
    fuzz_check(rc == 0, "what was decoded does not encode", rc);
    struct br_acl *again = NULL;
    size_t n2 = 0;
    rc = br_zk_acls_decode(json, len, NAME, &again, &n2, err, sizeof err);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "what was encoded does not decode", rc);
    if (rc == 0) {
        fuzz_check(same_acls(acls, n, again, n2), "ACLs changed through encode and decode",
                   (int)n2);
        char *json2 = NULL;
        size_t len2 = 0;
        if (br_zk_acls_encode(again, n2, &json2, &len2) == 0) {
            fuzz_check(len2 == len && memcmp(json, json2, len) == 0, "encoding is not canonical",
                       (int)len2);
        }
        kp_free(json2);
        br_zk_acls_free(again, n2);
    }
    kp_free(json);
    br_zk_acls_free(acls, n);
}

static void check_change(const uint8_t *data, size_t size, bool extended)
{
    char err[ERRLEN] = "";
    struct br_zk_acl_change ch;
    int rc = br_zk_acl_change_decode((const char *)data, size, extended, NAME, &ch, err,
                                     sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        return;
    }
    fuzz_check(ch.type > BR_ACL_RES_ANY && ch.type <= BR_ACL_RES_DELEGATION_TOKEN,
               "resource type", ch.type);
    fuzz_check(ch.pattern == BR_ACL_PAT_LITERAL ||
                   (extended && ch.pattern == BR_ACL_PAT_PREFIXED),
               "pattern type", ch.pattern);
    size_t nl = strlen(ch.name);
    fuzz_check(nl > 0 && nl <= BR_ZK_ACL_TEXT_MAX, "resource name length", (int)nl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool quiet;
    if (!quiet) {
        br_logging_set_level(BR_LOG_ERROR);
        quiet = true;
    }
    if (size < 1 || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    switch (data[0] % 3) {
    case 0:
        check_acls(data + 1, size - 1);
        break;
    case 1:
        check_change(data + 1, size - 1, false);
        break;
    default:
        check_change(data + 1, size - 1, true);
        break;
    }
    return 0;
}
