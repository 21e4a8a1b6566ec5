/*
 * samsa-broker: authorization of requests (authorize.c) and the ACL
 * requests (acl_handlers.c), Kafka 2.0's SimpleAclAuthorizer as KafkaApis
 * calls it.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SERVER_AUTHORIZE_H
#define SAMSA_BROKER_SERVER_AUTHORIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/acl.h"

struct br_req;
struct br_server;

/* The principal of r's connection ("User:ANONYMOUS", or "User:" and the
 * subject of its client certificate). */
void br_req_principal(const struct br_req *r, char *buf, size_t len);

/* Whether r's principal may `op` resource (type, name): always with no
 * authorizer. A denial is counted and logged (at most once a second). */
bool br_authorize(struct br_req *r, enum br_acl_op op, enum br_acl_rtype type, const char *name,
                  size_t len);

/* The checks of r's API before its handler (authorize.c): 0, or the error
 * the whole request is answered with. */
int16_t br_authorize_request(struct br_req *r);

/* The authorizer set up from the configuration (super.users, the
 * standalone ACL file read back): 0, or an error (logged). */
KP_MUST_CHECK int br_authz_start(struct br_server *b);
void br_authz_stop(struct br_server *b);

int br_h_describe_acls(struct br_req *r);
int br_h_create_acls(struct br_req *r);
int br_h_delete_acls(struct br_req *r);

#endif
