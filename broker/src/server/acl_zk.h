/*
 * samsa-broker: a cluster's ACLs in ZooKeeper, in Kafka 2.0's znodes
 * (acl_zk.c says how they are read and written).
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SERVER_ACL_ZK_H
#define SAMSA_BROKER_SERVER_ACL_ZK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/acl.h"
#include "cluster/zk.h"

struct br_req;
struct br_server;

/* The session (re)started: the ACL folders made if missing, the change
 * notifications listed (and watched), every ACL znode read into the
 * store. Nothing without an authorizer. */
void br_acl_zk_start(struct br_server *b);
/* A watch fired: a changes folder's children listed again. */
void br_acl_zk_watch(struct br_server *b, enum br_zk_watch kind, const char *path);

/* A CreateAcls or DeleteAcls writing to ZooKeeper: resp is its answer when
 * every pattern is written, fail_resp when one is not (both encoded now).
 * NULL when out of memory. */
struct br_acl_zk_write;
struct br_acl_zk_write *br_acl_zk_write_begin(struct br_req *r, const void *resp,
                                              const void *fail_resp);
/* One resource pattern's change: add[0..nadd) added, del[0..ndel) removed
 * from what ZooKeeper holds (copied). 0 or KP_E_NOMEM. */
KP_MUST_CHECK int br_acl_zk_write_pattern(struct br_acl_zk_write *w, int8_t type, int8_t pattern,
                                          const char *name, const struct br_acl *add, size_t nadd,
                                          const struct br_acl *del, size_t ndel);
/* Every change given: r parked until they are written (answered now when
 * they already are). Returns 0. */
int br_acl_zk_write_end(struct br_acl_zk_write *w, struct br_req *r);

#endif
