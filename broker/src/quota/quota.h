/*
 * samsa-broker: client quotas, as Kafka 2.0's ClientQuotaManager
 * (core/src/main/scala/kafka/server/ClientQuotaManager.scala) and
 * ClientRequestQuotaManager.scala keep them.
 *
 * Quotas are set on entities: a user, a client id, or a user and a client id,
 * each of which may be `<default>` (Kafka's ConfigEntityName.Default). A
 * request of (user, client id) is held to the most specific entity that has
 * a quota, in ClientQuotaManager's order:
 *
 *   /config/users/<user>/clients/<client-id>
 *   /config/users/<user>/clients/<default>
 *   /config/users/<user>
 *   /config/users/<default>/clients/<client-id>
 *   /config/users/<default>/clients/<default>
 *   /config/users/<default>
 *   /config/clients/<client-id>
 *   /config/clients/<default>
 *   quota.producer.default / quota.consumer.default (the broker's)
 *
 * Every connection that resolves to the same entity shares one rate (Kafka's
 * sensor, named by its metric tags: the user and client id of the level
 * that applies, "" where the level has none).
 *
 * A rate is Kafka's Rate over a SampledStat: quota.window.num samples of
 * quota.window.size.seconds each; the rate is the sum of the samples still
 * in the window over the time they span (at least window.num - 1 windows,
 * Rate.windowSize). A record that takes the rate over the quota earns a
 * throttle of (rate - quota) / quota * window (ClientQuotaManager.throttleTime).
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_QUOTA_QUOTA_H
#define SAMSA_BROKER_QUOTA_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

/* Kafka's quota types, and the config key of each (DynamicConfig.Client). */
enum br_quota_type {
    BR_QUOTA_PRODUCE = 0, /* producer_byte_rate: bytes per second of Produce requests */
    BR_QUOTA_FETCH,       /* consumer_byte_rate: bytes per second of Fetch responses */
    BR_QUOTA_REQUEST,     /* request_percentage: % of one thread's time in handlers */
    BR_QUOTA_TYPES,
};

/* Kafka's name of the entity that stands for every user or client id
 * without one of its own. */
#define BR_QUOTA_DEFAULT "<default>"
/* The user of a connection not authenticated (Kafka's KafkaPrincipal.ANONYMOUS). */
#define BR_QUOTA_ANONYMOUS "ANONYMOUS"
/* Entities and rates kept at most (each a few hundred bytes); past it new
 * client ids are not measured (never throttled) and a warning says so. */
#define BR_QUOTA_MAX_ENTITIES 10000
#define BR_QUOTA_MAX_SENSORS 10000
/* A rate not recorded for this long is forgotten (Kafka's sensors expire
 * after an hour of inactivity, ClientQuotaManager's InactiveSensorExpirationTimeSeconds). */
#define BR_QUOTA_SENSOR_EXPIRY_MS ((int64_t)3600 * 1000)

struct br_quota_config {
    int32_t window_num;       /* quota.window.num: 11 */
    int32_t window_size_s;    /* quota.window.size.seconds: 1 */
    int64_t producer_default; /* quota.producer.default, <= 0 or INT64_MAX: none */
    int64_t consumer_default; /* quota.consumer.default, the same */
};

struct br_quotas;

/* A name as the wire gives it (a client id may be null: len < 0 is ""). */
struct br_quota_name {
    const char *ptr;
    size_t len;
};

KP_MUST_CHECK int br_quotas_new(const struct br_quota_config *cfg, struct br_quotas **out);
void br_quotas_free(struct br_quotas *q);

/* The quotas of one entity. user and client: NULL where the entity has no
 * such level (/config/clients/X has no user), else a name or
 * BR_QUOTA_DEFAULT. */
struct br_quota_entity {
    const char *user;
    const char *client;
    bool set[BR_QUOTA_TYPES];
    double value[BR_QUOTA_TYPES];
};

/* Replaces every quota of the entity with e's (an entity with no value set
 * is removed), as a change of its znode does (Kafka's ClientIdConfigHandler
 * and UserConfigHandler). 0, KP_E_INVALID_ARG (neither level, or a value
 * <= 0), KP_E_NOMEM, KP_E_TOO_LARGE (BR_QUOTA_MAX_ENTITIES). */
KP_MUST_CHECK int br_quotas_set_entity(struct br_quotas *q, const struct br_quota_entity *e);
/* Forgets every entity (a configuration read again whole). */
void br_quotas_clear(struct br_quotas *q);
/* The entities, in the order they were first set; the pointers live until
 * the next change. */
size_t br_quotas_count(const struct br_quotas *q);
const struct br_quota_entity *br_quotas_at(const struct br_quotas *q, size_t i);

/* Parses an entity path of Kafka's change notifications ("clients/X",
 * "users/U", "users/U/clients/X", "<default>" for either name) into user and
 * client (copied into the buffers, NULL where absent). 0 or KP_E_INVALID_ARG. */
KP_MUST_CHECK int br_quota_entity_path(const char *path, char *user, size_t user_cap,
                                       char *client, size_t client_cap, bool *has_user,
                                       bool *has_client);
/* The type of a config key (producer_byte_rate...), or -1. */
int br_quota_type_of(const char *key);
const char *br_quota_key(enum br_quota_type t);

/* A quota's value as Kafka's configs give it ("1024", "12.5"): a decimal,
 * greater than 0. */
KP_MUST_CHECK bool br_quota_value_parse(const char *s, size_t len, double *out);

/* ---- the standalone quota file (quota.config.file, quota_file.c)
 *
 * One entity a line: its path as Kafka's change notifications name it, then
 * its keys, comma-separated; '#' starts a comment line:
 *
 *   clients/producer-a producer_byte_rate=1024
 *   users/<default>/clients/<default> consumer_byte_rate=2048,request_percentage=50
 *
 * Parses text[0..len) whole: on success every entity of q is replaced by the
 * file's; on error q is untouched and err says which line (0 or
 * KP_E_INVALID_ARG, KP_E_NOMEM, KP_E_TOO_LARGE). */
KP_MUST_CHECK int br_quota_file_apply(struct br_quotas *q, const char *text, size_t len, char *err,
                                      size_t err_cap);

/* The quota that holds (user, client) for type t, and whether there is one. */
bool br_quotas_limit(const struct br_quotas *q, enum br_quota_type t, struct br_quota_name user,
                     struct br_quota_name client, double *limit);

/* Records value (bytes; for BR_QUOTA_REQUEST the handler's time in
 * microseconds) for (user, client) at now_ms and returns the throttle time
 * in milliseconds it earns (0 when under the quota or none holds), as
 * ClientQuotaManager.recordAndGetThrottleTimeMs. */
int32_t br_quotas_record(struct br_quotas *q, enum br_quota_type t, struct br_quota_name user,
                         struct br_quota_name client, double value, int64_t now_ms);
/* Takes value back (a throttled Fetch answered empty: Kafka's
 * unrecordQuotaSensor). */
void br_quotas_unrecord(struct br_quotas *q, enum br_quota_type t, struct br_quota_name user,
                        struct br_quota_name client, double value, int64_t now_ms);
/* A connection of (user, client) muted for ms from now_ms (Kafka's throttle
 * time sensor): counted for the admin API and the metrics. */
void br_quotas_throttled(struct br_quotas *q, enum br_quota_type t, struct br_quota_name user,
                         struct br_quota_name client, int32_t ms, int64_t now_ms);

/* What the admin API shows of a rate: its tags, its quota, its rate now,
 * the throttle time it earned in all and until when its last throttle runs. */
struct br_quota_sensor_view {
    enum br_quota_type type;
    const char *user;   /* "" where the level has none */
    const char *client; /* "" where the level has none */
    bool has_limit;
    double limit;
    double rate;
    int64_t throttle_total_ms;
    int64_t throttled_until_ms; /* monotonic */
};
/* A number that changes with every change of an entity and every
 * throttle (the admin API's fingerprint: the rates alone do not count). */
uint64_t br_quotas_version(const struct br_quotas *q);

/* The rates (those not recorded for BR_QUOTA_SENSOR_EXPIRY_MS are
 * forgotten first): their count, and the view of rate i at now_ms (the
 * strings live until the next record). */
size_t br_quotas_sensor_count(struct br_quotas *q, int64_t now_ms);
void br_quotas_sensor_at(struct br_quotas *q, size_t i, int64_t now_ms,
                         struct br_quota_sensor_view *out);

#endif
