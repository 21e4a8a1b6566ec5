/*
 * samsa-broker: one request on its way through a handler.
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_REQUEST_H
#define SAMSA_BROKER_REQUEST_H

#include "broker.h"

struct br_req {
    struct br_broker *b;
    struct br_conn *conn;
    struct br_slot *slot; /* NULL: this request gets no response (acks=0) */
    struct kp_request_header *hdr;
    int16_t version;
    void *body; /* the decoded kp_<Api>Request */
    struct kp_arena *arena;
    uint8_t *payload; /* the frame, writable while the handler runs */
    size_t len;
};

/* Encode `resp` (a kp_<Api>Response of the request's API and version) into
 * the request's slot and mark it ready. Returns 0 or a KP_E_* code. */
int br_respond(struct br_req *r, const void *resp);

/* A writable pointer to bytes of the request's frame that a decoded view
 * (a const slice) refers to. */
uint8_t *br_req_mutable(struct br_req *r, const uint8_t *view);

/* Handlers, one per API (handlers.c). Each answers through br_respond, parks
 * the request, or returns a KP_E_* code to have the connection closed. */
int br_h_api_versions(struct br_req *r);
int br_h_metadata(struct br_req *r);
int br_h_produce(struct br_req *r);
int br_h_fetch(struct br_req *r);
int br_h_list_offsets(struct br_req *r);
int br_h_create_topics(struct br_req *r);
int br_h_delete_topics(struct br_req *r);
int br_h_describe_configs(struct br_req *r);
int br_h_init_producer_id(struct br_req *r);
/* Storage administration (handlers_admin.c). */
int br_h_alter_configs(struct br_req *r);
int br_h_incremental_alter_configs(struct br_req *r);
int br_h_delete_records(struct br_req *r);
int br_h_describe_log_dirs(struct br_req *r);

/* Fill b->apis from the dispatch table (the ApiVersions answer). */
void br_supported_apis_init(struct br_broker *b);

/* Every parked request starts with this, so that a dying connection can
 * cancel whatever it parked (br_broker_cancel_parked switches on kind). */
enum br_park_kind {
    BR_PARK_FETCH = 1,
    BR_PARK_GROUP, /* JoinGroup / SyncGroup waiting for the group (group.c) */
    BR_PARK_ADMIN, /* CreateTopics / DeleteTopics waiting for their topics (topic_admin.c) */
};

struct br_park {
    enum br_park_kind kind;
};

/* Parked fetches (fetch.c). */
void br_fetch_wake(struct br_broker *b, struct br_partition *p);
void br_parked_expire(struct br_broker *b, struct br_parked *pk);
void br_parked_cancel(struct br_broker *b, struct br_parked *pk);
void br_parked_complete_now(struct br_broker *b, struct br_parked *pk);

#endif
