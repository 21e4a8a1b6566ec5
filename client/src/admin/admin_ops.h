/*
 * What the admin ops of admin/ share (admin_ops.c): copies of strings out of
 * a response, discovery of the node an op goes to (Metadata or
 * FindCoordinator), what an answer or a failure does to an op.
 * admin_configs.c, admin_records.c and admin_groups.c call it; it calls only
 * core.
 */
#ifndef SAMSA_CLIENT_ADMIN_OPS_H
#define SAMSA_CLIENT_ADMIN_OPS_H

#include "core/internal.h"

/* A copy of s ("" for null); NULL only when out of memory. */
char *sc_admin_dup_str(struct kp_str s);
/* A copy of a nullable s into *out (NULL for null); false when out of memory. */
bool sc_admin_dup_nullable(struct kp_str s, char **out);
void sc_admin_free_strs(char **v, int n);
struct sc_conn *sc_admin_up_node(struct sc_client *c, int32_t id);
/* Kafka errors that mean "ask another node" (or the same one later). */
bool sc_admin_moved(int err);
/* A response with a Kafka error: back to discovery, or finished. */
void sc_admin_answered(struct sc_client *c, struct sc_op *op, int err);
/* A transport failure: discovery again after a backoff. A response that
 * does not decode would not decode the next time either: finished. */
bool sc_admin_transport_failed(struct sc_client *c, struct sc_op *op, int err);
void sc_admin_message_into(struct sc_op *op, int err, struct kp_str msg);
int64_t sc_admin_discover_md(struct sc_client *c, struct sc_op *op, int64_t now);
int64_t sc_admin_discover_coord(struct sc_client *c, struct sc_op *op, int64_t now);
/* The connection for a config resource: its broker, or any for a topic. */
struct sc_conn *sc_admin_resource_conn(struct sc_client *c, const struct sc_admin_arg *a);
int sc_admin_unsupported(struct sc_client *c, struct sc_op *op, const char *api, int key,
                         const struct sc_conn *conn);

#endif
