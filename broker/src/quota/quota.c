/* samsa-broker: client quotas: the entities, the precedence that picks one
 * for a request, and Kafka's sampled rates (see quota.h). */
#define _POSIX_C_SOURCE 200809L

#include "quota/quota.h"
#include "quota/rate.h"

#include <string.h>

#include <samsa-protocol/alloc.h>

#include "base/logging.h"

/* Kafka's sensor of one quota type and metric tags (user, client id). */
struct sensor {
    enum br_quota_type type;
    char *user;   /* "" where the level has none */
    char *client; /* "" where the level has none */
    struct br_rate rate; /* Kafka's Rate: window_num - 1 whole windows at least */
    int64_t last_record_ms;
    int64_t throttle_total_ms;
    int64_t throttled_until_ms;
    bool has_limit; /* the quota found at the last record */
    double limit;
};

struct br_quotas {
    struct br_quota_config cfg;
    struct br_quota_entity *entities;
    size_t nentities;
    size_t entities_cap;
    struct sensor *sensors;
    size_t nsensors;
    size_t sensors_cap;
    bool full_logged;
    uint64_t version; /* br_quotas_version */
};

static const char *const type_keys[BR_QUOTA_TYPES] = {
    [BR_QUOTA_PRODUCE] = "producer_byte_rate",
    [BR_QUOTA_FETCH] = "consumer_byte_rate",
    [BR_QUOTA_REQUEST] = "request_percentage",
};

const char *br_quota_key(enum br_quota_type t)
{
    return type_keys[t];
}

int br_quota_type_of(const char *key)
{
    for (int t = 0; t < BR_QUOTA_TYPES; t++) {
        if (strcmp(key, type_keys[t]) == 0) {
            return t;
        }
    }
    return -1;
}

int br_quotas_new(const struct br_quota_config *cfg, struct br_quotas **out)
{
    *out = NULL;
    if (cfg->window_num < 1 || cfg->window_size_s < 1) {
        return KP_E_INVALID_ARG;
    }
    struct br_quotas *q = kp_calloc(1, sizeof *q);
    if (q == NULL) {
        return KP_E_NOMEM;
    }
    q->cfg = *cfg;
    *out = q;
    return 0;
}

static void entity_free(struct br_quota_entity *e)
{
    kp_free((char *)(uintptr_t)e->user);
    kp_free((char *)(uintptr_t)e->client);
}

static void sensor_free(struct sensor *s)
{
    kp_free(s->user);
    kp_free(s->client);
    br_rate_free(&s->rate);
}

void br_quotas_clear(struct br_quotas *q)
{
    q->version++;
    for (size_t i = 0; i < q->nentities; i++) {
        entity_free(&q->entities[i]);
    }
    q->nentities = 0;
}

void br_quotas_free(struct br_quotas *q)
{
    if (q == NULL) {
        return;
    }
    br_quotas_clear(q);
    kp_free(q->entities);
    for (size_t i = 0; i < q->nsensors; i++) {
        sensor_free(&q->sensors[i]);
    }
    kp_free(q->sensors);
    kp_free(q);
}

/* ------------------------------------------------------------ entities */

/* items (of *cap elements of size bytes) grown to twice as many, or 8; NULL
 * (items untouched) when memory ran out. Both arrays are bounded
 * (BR_QUOTA_MAX_ENTITIES, BR_QUOTA_MAX_SENSORS). */
static void *grow(void *items, size_t *cap, size_t size)
{
    size_t n = *cap == 0 ? 8 : *cap * 2;
    void *grown = kp_realloc(items, n * size);
    if (grown != NULL) {
        *cap = n;
    }
    return grown;
}

static bool opt_eq(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The entity (user, client) exactly, or NULL. */
static struct br_quota_entity *entity_find(const struct br_quotas *q, const char *user,
                                           const char *client)
{
    for (size_t i = 0; i < q->nentities; i++) {
        if (opt_eq(q->entities[i].user, user) && opt_eq(q->entities[i].client, client)) {
            return &q->entities[i];
        }
    }
    return NULL;
}

static char *dup_opt(const char *s, bool *failed)
{
    if (s == NULL) {
        return NULL;
    }
    size_t n = strlen(s);
    char *d = kp_malloc(n + 1);
    if (d == NULL) {
        *failed = true;
        return NULL;
    }
    memcpy(d, s, n + 1);
    return d;
}

int br_quotas_set_entity(struct br_quotas *q, const struct br_quota_entity *e)
{
    q->version++;
    if (e->user == NULL && e->client == NULL) {
        return KP_E_INVALID_ARG;
    }
    bool any = false;
    for (int t = 0; t < BR_QUOTA_TYPES; t++) {
        if (e->set[t] && !(e->value[t] > 0)) {
            return KP_E_INVALID_ARG;
        }
        any = any || e->set[t];
    }
    struct br_quota_entity *have = entity_find(q, e->user, e->client);
    if (have != NULL) {
        if (!any) {
            /* removed: the last one takes its place */
            size_t i = (size_t)(have - q->entities);
            entity_free(have);
            memmove(&q->entities[i], &q->entities[i + 1],
                    (q->nentities - i - 1) * sizeof q->entities[0]);
            q->nentities--;
            return 0;
        }
        memcpy(have->set, e->set, sizeof have->set);
        memcpy(have->value, e->value, sizeof have->value);
        return 0;
    }
    if (!any) {
        return 0;
    }
    if (q->nentities == BR_QUOTA_MAX_ENTITIES) {
        return KP_E_TOO_LARGE;
    }
    if (q->nentities == q->entities_cap) {
        void *grown = grow(q->entities, &q->entities_cap, sizeof *q->entities);
        if (grown == NULL) {
            return KP_E_NOMEM;
        }
        q->entities = grown;
    }
    bool failed = false;
    struct br_quota_entity n = *e;
    n.user = dup_opt(e->user, &failed);
    n.client = dup_opt(e->client, &failed);
    if (failed) {
        entity_free(&n);
        return KP_E_NOMEM;
    }
    q->entities[q->nentities++] = n;
    return 0;
}

size_t br_quotas_count(const struct br_quotas *q)
{
    return q->nentities;
}

const struct br_quota_entity *br_quotas_at(const struct br_quotas *q, size_t i)
{
    return &q->entities[i];
}

/* One name of a path into buf ("<default>" kept as it is). */
static int path_name(const char *p, size_t n, char *buf, size_t cap)
{
    if (n == 0 || n >= cap || memchr(p, '/', n) != NULL) {
        return KP_E_INVALID_ARG;
    }
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}

int br_quota_entity_path(const char *path, char *user, size_t user_cap, char *client,
                         size_t client_cap, bool *has_user, bool *has_client)
{
    *has_user = false;
    *has_client = false;
    static const char users[] = "users/";
    static const char clients[] = "clients/";
    const char *p = path;
    if (strncmp(p, users, sizeof users - 1) == 0) {
        p += sizeof users - 1;
        const char *slash = strchr(p, '/');
        size_t n = slash != NULL ? (size_t)(slash - p) : strlen(p);
        if (path_name(p, n, user, user_cap) != 0) {
            return KP_E_INVALID_ARG;
        }
        *has_user = true;
        if (slash == NULL) {
            return 0;
        }
        p = slash + 1;
    }
    if (strncmp(p, clients, sizeof clients - 1) != 0) {
        return KP_E_INVALID_ARG;
    }
    p += sizeof clients - 1;
    if (path_name(p, strlen(p), client, client_cap) != 0) {
        return KP_E_INVALID_ARG;
    }
    *has_client = true;
    return 0;
}

/* ------------------------------------------------------------ precedence */

static bool name_is(struct br_quota_name n, const char *s)
{
    return s != NULL && strlen(s) == n.len && (n.len == 0 || memcmp(n.ptr, s, n.len) == 0);
}

/* The entity (user, client) with a quota of type t: u and c are a name
 * (matched against the wire's), BR_QUOTA_DEFAULT, or NULL for no level. */
static const struct br_quota_entity *entity_match(const struct br_quotas *q, enum br_quota_type t,
                                                  const struct br_quota_name *u, bool u_default,
                                                  const struct br_quota_name *c, bool c_default)
{
    for (size_t i = 0; i < q->nentities; i++) {
        const struct br_quota_entity *e = &q->entities[i];
        if (!e->set[t]) {
            continue;
        }
        bool user_ok = u_default ? opt_eq(e->user, BR_QUOTA_DEFAULT)
                       : u == NULL ? e->user == NULL
                                   : name_is(*u, e->user);
        bool client_ok = c_default ? opt_eq(e->client, BR_QUOTA_DEFAULT)
                         : c == NULL ? e->client == NULL
                                     : name_is(*c, e->client);
        if (user_ok && client_ok) {
            return e;
        }
    }
    return NULL;
}

/* The level that holds (user, client) and its quota, in
 * ClientQuotaManager's order (DefaultQuotaCallback.quotaMetricTags and
 * quotaLimit): *tag_user and *tag_client say which names name the rate. */
static bool resolve(const struct br_quotas *q, enum br_quota_type t, struct br_quota_name user,
                    struct br_quota_name client, bool *tag_user, bool *tag_client, double *limit)
{
    struct {
        const struct br_quota_name *u;
        bool u_default;
        const struct br_quota_name *c;
        bool c_default;
    } const order[] = {
        {&user, false, &client, false}, /* /config/users/<user>/clients/<client-id> */
        {&user, false, NULL, true},     /* /config/users/<user>/clients/<default> */
        {&user, false, NULL, false},    /* /config/users/<user> */
        {NULL, true, &client, false},   /* /config/users/<default>/clients/<client-id> */
        {NULL, true, NULL, true},       /* /config/users/<default>/clients/<default> */
        {NULL, true, NULL, false},      /* /config/users/<default> */
        {NULL, false, &client, false},  /* /config/clients/<client-id> */
        {NULL, false, NULL, true},      /* /config/clients/<default> */
    };
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        const struct br_quota_entity *e =
            entity_match(q, t, order[k].u, order[k].u_default, order[k].c, order[k].c_default);
        if (e != NULL) {
            /* a user level without clients names its rate by the user
             * alone; the client levels by the client id alone */
            *tag_user = e->user != NULL;
            *tag_client = e->client != NULL;
            *limit = e->value[t];
            return true;
        }
    }
    *tag_user = false;
    *tag_client = true;
    int64_t def = t == BR_QUOTA_PRODUCE ? q->cfg.producer_default
                  : t == BR_QUOTA_FETCH ? q->cfg.consumer_default
                                        : 0;
    if (def > 0 && def != INT64_MAX) {
        *limit = (double)def;
        return true;
    }
    return false;
}

bool br_quotas_limit(const struct br_quotas *q, enum br_quota_type t, struct br_quota_name user,
                     struct br_quota_name client, double *limit)
{
    bool tu = false;
    bool tc = false;
    return resolve(q, t, user, client, &tu, &tc, limit);
}

/* ------------------------------------------------------------ rates */

static int64_t window_ms(const struct br_quotas *q)
{
    return (int64_t)q->cfg.window_size_s * 1000;
}

static void sensor_forget_idle(struct br_quotas *q, int64_t now_ms)
{
    size_t k = 0;
    for (size_t i = 0; i < q->nsensors; i++) {
        if (now_ms - q->sensors[i].last_record_ms >= BR_QUOTA_SENSOR_EXPIRY_MS) {
            sensor_free(&q->sensors[i]);
        } else {
            q->sensors[k++] = q->sensors[i];
        }
    }
    q->nsensors = k;
}

static char *dup_name(struct br_quota_name n)
{
    char *d = kp_malloc(n.len + 1);
    if (d != NULL) {
        if (n.len > 0) {
            memcpy(d, n.ptr, n.len);
        }
        d[n.len] = '\0';
    }
    return d;
}

/* The sensor of type t tagged (user, client) ("" for a level not used),
 * made if need be; NULL when memory or BR_QUOTA_MAX_SENSORS ran out. */
static struct sensor *sensor_get(struct br_quotas *q, enum br_quota_type t,
                                 struct br_quota_name user, struct br_quota_name client,
                                 int64_t now_ms)
{
    for (size_t i = 0; i < q->nsensors; i++) {
        struct sensor *s = &q->sensors[i];
        if (s->type == t && name_is(user, s->user) && name_is(client, s->client)) {
            return s;
        }
    }
    if (q->nsensors == BR_QUOTA_MAX_SENSORS) {
        sensor_forget_idle(q, now_ms);
        if (q->nsensors == BR_QUOTA_MAX_SENSORS) {
            if (!q->full_logged) {
                br_warn("quotas: %d rates measured already: client \"%.*s\" is not held to its "
                        "quota (said once)",
                        BR_QUOTA_MAX_SENSORS, (int)client.len, client.ptr);
                q->full_logged = true;
            }
            return NULL;
        }
    }
    if (q->nsensors == q->sensors_cap) {
        void *grown = grow(q->sensors, &q->sensors_cap, sizeof *q->sensors);
        if (grown == NULL) {
            return NULL;
        }
        q->sensors = grown;
    }
    struct sensor s = {.type = t, .last_record_ms = now_ms};
    s.user = dup_name(user);
    s.client = dup_name(client);
    int rc = br_rate_init(&s.rate, q->cfg.window_num, window_ms(q), q->cfg.window_num - 1);
    if (s.user == NULL || s.client == NULL || rc != 0) {
        sensor_free(&s);
        return NULL;
    }
    q->sensors[q->nsensors] = s;
    return &q->sensors[q->nsensors++];
}

/* The sensor of the level that holds (user, client), and its quota. */
static struct sensor *sensor_for(struct br_quotas *q, enum br_quota_type t,
                                 struct br_quota_name user, struct br_quota_name client,
                                 int64_t now_ms, bool *has_limit, double *limit)
{
    bool tu = false;
    bool tc = false;
    *has_limit = resolve(q, t, user, client, &tu, &tc, limit);
    struct br_quota_name none = {"", 0};
    return sensor_get(q, t, tu ? user : none, tc ? client : none, now_ms);
}

/* What is recorded for a type: bytes, or for the request quota a handler's
 * microseconds as Kafka's percentage of a second (nanosToPercentage). */
static double recorded(enum br_quota_type t, double value)
{
    return t == BR_QUOTA_REQUEST ? value / 1e4 : value;
}

int32_t br_quotas_record(struct br_quotas *q, enum br_quota_type t, struct br_quota_name user,
                         struct br_quota_name client, double value, int64_t now_ms)
{
    bool has_limit = false;
    double limit = 0;
    struct sensor *s = sensor_for(q, t, user, client, now_ms, &has_limit, &limit);
    if (s == NULL) {
        return 0;
    }
    br_rate_record(&s->rate, recorded(t, value), now_ms);
    s->last_record_ms = now_ms;
    s->has_limit = has_limit;
    s->limit = limit;
    if (!has_limit) {
        return 0;
    }
    int64_t w = 0;
    double rate = br_rate_measure(&s->rate, now_ms, &w);
    if (!(rate > limit)) {
        return 0;
    }
    /* ClientQuotaManager.throttleTime: (O - T) / T * W */
    double ms = (rate - limit) / limit * (double)w + 0.5; /* Math.round, ms > 0 */
    if (t == BR_QUOTA_REQUEST && ms > (double)window_ms(q)) {
        ms = (double)window_ms(q); /* ClientRequestQuotaManager's maxThrottleTimeMs */
    }
    return ms >= (double)INT32_MAX ? INT32_MAX : (int32_t)ms;
}

void br_quotas_unrecord(struct br_quotas *q, enum br_quota_type t, struct br_quota_name user,
                        struct br_quota_name client, double value, int64_t now_ms)
{
    bool has_limit = false;
    double limit = 0;
    struct sensor *s = sensor_for(q, t, user, client, now_ms, &has_limit, &limit);
    if (s != NULL) {
        br_rate_record(&s->rate, -recorded(t, value), now_ms);
        s->last_record_ms = now_ms;
    }
}

void br_quotas_throttled(struct br_quotas *q, enum br_quota_type t, struct br_quota_name user,
                         struct br_quota_name client, int32_t ms, int64_t now_ms)
{
    bool has_limit = false;
    double limit = 0;
    struct sensor *s = sensor_for(q, t, user, client, now_ms, &has_limit, &limit);
    if (s != NULL && ms > 0) {
        q->version++;
        s->throttle_total_ms += ms;
        if (now_ms + ms > s->throttled_until_ms) {
            s->throttled_until_ms = now_ms + ms;
        }
    }
}

uint64_t br_quotas_version(const struct br_quotas *q)
{
    return q->version;
}

size_t br_quotas_sensor_count(struct br_quotas *q, int64_t now_ms)
{
    sensor_forget_idle(q, now_ms);
    return q->nsensors;
}

void br_quotas_sensor_at(struct br_quotas *q, size_t i, int64_t now_ms,
                         struct br_quota_sensor_view *out)
{
    struct sensor *s = &q->sensors[i];
    double rate = br_rate_measure(&s->rate, now_ms, NULL);
    *out = (struct br_quota_sensor_view){
        .type = s->type,
        .user = s->user,
        .client = s->client,
        .has_limit = s->has_limit,
        .limit = s->limit,
        .rate = rate,
        .throttle_total_ms = s->throttle_total_ms,
        .throttled_until_ms = s->throttled_until_ms,
    };
}
