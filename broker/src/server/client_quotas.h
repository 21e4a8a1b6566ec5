/*
 * samsa-broker: client quotas applied to requests (quota/quota.h holds the
 * entities and rates): what Produce and Fetch record, the throttle time
 * they answer with, and KIP-219's mute of the connection for that time
 * (Kafka 2.0's KafkaApis.handleProduceRequest / handleFetchRequest and
 * ClientQuotaManager.throttle). And where the quotas come from on a
 * standalone broker: quota.config.file, read at start and again within a
 * second of a change.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SERVER_CLIENT_QUOTAS_H
#define SAMSA_BROKER_SERVER_CLIENT_QUOTAS_H

#include <samsa-protocol/header.h>

#include "quota/quota.h"
#include "server/state.h"

struct br_req;

/* The quota manager from the broker's config, and the quota file read when
 * quota.config.file is set. 0, or -1 (logged): a bad file stops start-up. */
KP_MUST_CHECK int br_client_quotas_start(struct br_server *b);
void br_client_quotas_stop(struct br_server *b);
/* Every second (housekeeping): the quota file read again if it changed; a
 * bad one is logged and the quotas in force stay. */
void br_client_quotas_tick(struct br_server *b);

/* The user a connection's quotas are looked up by: its principal's name
 * (Kafka's KafkaPrincipal.getName): the SASL user, else the subject of
 * its TLS client certificate, as authorize.c's br_req_principal names
 * them, else ANONYMOUS (User:ANONYMOUS). buf (BR_PRINCIPAL_MAX bytes) holds
 * the name. */
#define BR_PRINCIPAL_MAX 512
struct br_quota_name br_quota_user(const struct br_conn *c, char *buf, size_t cap);

/* A Produce of `bytes` (the request's size, Kafka's numBytesAppended) from
 * (c, client_id) recorded: the throttle time it earned, and c muted for it. */
int32_t br_client_quotas_produce(struct br_server *b, struct br_conn *c, struct kp_str client_id,
                                 size_t bytes);
/* A Fetch response of `bytes` records for (c, client_id): 0, or the throttle
 * time; then the bytes are not counted (Kafka unrecords them) and the
 * response goes out empty, and c is muted for it. */
int32_t br_client_quotas_fetch(struct br_server *b, struct br_conn *c, struct kp_str client_id,
                               int64_t bytes);
/* A request of (c, client_id) handled in `us` microseconds
 * (request_percentage): c muted for the throttle time it earned, returned. */
int32_t br_client_quotas_request(struct br_server *b, struct br_conn *c, struct kp_str client_id,
                                 int64_t us);
/* The request being handled (NULL: one exempt from request_percentage) and
 * when its handler started; then, once the handler returned, its time:
 * recorded unless its response did it (br_client_quotas_respond). */
void br_client_quotas_handling(struct br_server *b, struct br_req *r, int64_t start_us);
void br_client_quotas_handled(struct br_server *b, int64_t us);
/* The response r is about to send (br_respond): the request's time so far
 * recorded against request_percentage, as Kafka's sendResponseMaybeThrottle
 * does; when that throttles, a copy of resp (in r's arena) with the larger
 * of its ThrottleTimeMs and that throttle, if its version has the field.
 * Else resp itself. */
const void *br_client_quotas_respond(struct br_req *r, const void *resp);

/* A cluster's quotas (cluster_quotas.c): every entity under /config/clients
 * and /config/users read (the first listing of /config/changes), and one
 * entity read again when a change notification names it (type "clients"
 * or "users", name as the notification gives it: "x", "u", "u/clients/x"). */
void br_cluster_quotas_load(struct br_server *b);
void br_cluster_quota_entity_changed(struct br_server *b, const char *type, const char *name);
/* The same for a notification of type "clients", of type "users". */
void br_cluster_quota_client_changed(struct br_server *b, const char *name);
void br_cluster_quota_user_changed(struct br_server *b, const char *name);

#endif
