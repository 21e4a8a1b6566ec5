/*
 * samsa-broker: ACLs and the decision (Kafka 2.0's SimpleAclAuthorizer,
 * core/src/main/scala/kafka/security/auth/: Acl.scala, Resource.scala,
 * ResourceType.scala, Operation.scala, PermissionType.scala,
 * SimpleAclAuthorizer.scala; clients' org.apache.kafka.common.acl and
 * .resource for the wire codes and the filters).
 *
 * An ACL binds a resource pattern (type, name, LITERAL or PREFIXED; the
 * literal name "*" is every resource of the type) to an entry (principal
 * "Type:name" or "User:*", host or "*", operation, ALLOW or DENY).
 * br_acl_authorize decides as SimpleAclAuthorizer.authorize does:
 *
 *   acls    = literal(name) + literal("*") + prefixed(p) for every prefix p of name
 *   denied  = a DENY of (principal or User:*) (op or All) (host or *)
 *   allowed = an ALLOW likewise, its op in what op implies (Describe is
 *             implied by Read, Write, Delete and Alter; DescribeConfigs by
 *             AlterConfigs), or All
 *   granted = super user || (acls empty && allow.everyone.if.no.acl.found)
 *             || (!denied && allowed)
 *
 * A store holds every ACL of the broker by resource pattern; it is filled
 * and changed by its owner (the znodes of a cluster, a file standalone).
 *
 * @locality the thread that owns the store (the reactor)
 */
#ifndef SAMSA_BROKER_AUTH_ACL_H
#define SAMSA_BROKER_AUTH_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

/* Wire codes (ResourceType.java, PatternType.java, AclOperation.java,
 * AclPermissionType.java); UNKNOWN and ANY, MATCH only in filters. */
enum br_acl_rtype {
    BR_ACL_RES_UNKNOWN = 0,
    BR_ACL_RES_ANY = 1,
    BR_ACL_RES_TOPIC = 2,
    BR_ACL_RES_GROUP = 3,
    BR_ACL_RES_CLUSTER = 4,
    BR_ACL_RES_TXN_ID = 5,
    BR_ACL_RES_DELEGATION_TOKEN = 6,
};

enum br_acl_pattern {
    BR_ACL_PAT_UNKNOWN = 0,
    BR_ACL_PAT_ANY = 1,
    BR_ACL_PAT_MATCH = 2,
    BR_ACL_PAT_LITERAL = 3,
    BR_ACL_PAT_PREFIXED = 4,
};

enum br_acl_op {
    BR_ACL_OP_UNKNOWN = 0,
    BR_ACL_OP_ANY = 1,
    BR_ACL_OP_ALL = 2,
    BR_ACL_OP_READ = 3,
    BR_ACL_OP_WRITE = 4,
    BR_ACL_OP_CREATE = 5,
    BR_ACL_OP_DELETE = 6,
    BR_ACL_OP_ALTER = 7,
    BR_ACL_OP_DESCRIBE = 8,
    BR_ACL_OP_CLUSTER_ACTION = 9,
    BR_ACL_OP_DESCRIBE_CONFIGS = 10,
    BR_ACL_OP_ALTER_CONFIGS = 11,
    BR_ACL_OP_IDEMPOTENT_WRITE = 12,
};

enum br_acl_perm {
    BR_ACL_PERM_UNKNOWN = 0,
    BR_ACL_PERM_ANY = 1,
    BR_ACL_PERM_DENY = 2,
    BR_ACL_PERM_ALLOW = 3,
};

/* The Cluster resource's one name (Resource.ClusterResourceName). */
#define BR_ACL_CLUSTER_NAME "kafka-cluster"
/* The wildcards (Acl.WildCardPrincipal, WildCardHost, WildCardResource). */
#define BR_ACL_WILDCARD "*"
#define BR_ACL_ANY_USER "User:*"

/* An ACL entry of one resource pattern (Acl.scala). */
struct br_acl {
    char *principal; /* owned, "Type:name" */
    char *host;      /* owned, an address or "*" */
    int8_t op;
    int8_t perm;
};

/* A resource pattern and its entries (the data of one znode). */
struct br_acl_resource {
    int8_t type;
    int8_t pattern; /* LITERAL or PREFIXED */
    char *name;     /* owned */
    struct br_acl *acls; /* owned */
    size_t n;
    size_t cap;
};

/* One binding, its strings borrowed: what CreateAcls names and a filter
 * matches (name, principal, host NULL in a filter: any). */
struct br_acl_binding {
    int8_t type;
    int8_t pattern;
    const char *name;
    size_t name_len;
    const char *principal;
    size_t principal_len;
    const char *host;
    size_t host_len;
    int8_t op;
    int8_t perm;
};

struct br_acl_store {
    struct br_acl_resource *res; /* owned */
    size_t n;
    size_t cap;
};

void br_acl_store_init(struct br_acl_store *s);
void br_acl_store_fini(struct br_acl_store *s);

/* The resource pattern (type, pattern, name), or NULL. */
struct br_acl_resource *br_acl_find(const struct br_acl_store *s, int8_t type, int8_t pattern,
                                    const char *name, size_t len);

/* Replaces the entries of a resource pattern with acls[0..n) (copied; n 0
 * removes it): what a znode's data says. 0 or KP_E_NOMEM (unchanged). */
KP_MUST_CHECK int br_acl_set(struct br_acl_store *s, int8_t type, int8_t pattern, const char *name,
                             size_t len, const struct br_acl *acls, size_t n);

/* Removes a resource pattern and its entries (nothing when missing). */
void br_acl_remove(struct br_acl_store *s, int8_t type, int8_t pattern, const char *name,
                   size_t len);

/* Adds a binding (LITERAL or PREFIXED, no ANY or UNKNOWN anywhere): 0,
 * KP_E_NOMEM; an entry the pattern has already is not added twice. */
KP_MUST_CHECK int br_acl_add(struct br_acl_store *s, const struct br_acl_binding *b);

/* Whether filter f matches binding (resource r, entry a), as
 * AclBindingFilter.matches does: ANY matches every value, a null string
 * every string; a pattern filter MATCH with a name matches the literal
 * name, the literal "*" and every prefix of it (ResourcePatternFilter). */
bool br_acl_filter_matches(const struct br_acl_binding *f, const struct br_acl_resource *r,
                           const struct br_acl *a);

/* Whether a binding's values are ones a filter may carry and a binding
 * may not (ANY, UNKNOWN, MATCH): true for a filter that could match
 * anything (ResourcePatternFilter.findIndefiniteField). */
bool br_acl_binding_valid(const struct br_acl_binding *b);

/* Kafka's decision (see above). principal "Type:name", host the client's
 * address; super users as given ("User:alice" each). */
struct br_acl_config {
    const char *const *super_users;
    size_t nsuper;
    bool allow_if_no_acl;
};
bool br_acl_authorize(const struct br_acl_store *s, const struct br_acl_config *cfg,
                      const char *principal, const char *host, enum br_acl_op op,
                      enum br_acl_rtype type, const char *name, size_t len);

/* Names as Kafka writes them in znodes and logs ("Topic", "Read",
 * "Allow", "Literal" ...) and back, case-insensitively (-1: unknown). */
const char *br_acl_rtype_name(int8_t t);
const char *br_acl_op_name(int8_t op);
const char *br_acl_perm_name(int8_t p);
const char *br_acl_pattern_name(int8_t p);
int br_acl_rtype_parse(const char *s, size_t len);
int br_acl_op_parse(const char *s, size_t len);
int br_acl_perm_parse(const char *s, size_t len);

/* The error a denial answers for a resource type (TOPIC_, GROUP_,
 * CLUSTER_, TRANSACTIONAL_ID_AUTHORIZATION_FAILED). */
int16_t br_acl_denied_error(enum br_acl_rtype type);

#endif
