/* samsa-broker: client quotas applied to requests, and the standalone
 * quota file (see client_quotas.h). */
#define _GNU_SOURCE

#include "server/client_quotas.h"
#include "server/request.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <samsa-protocol/schema.h>

#include "base/clock.h"
#include "base/logging.h"

/* The quota file is read whole, up to this size. */
#define QUOTA_FILE_MAX ((size_t)1 << 20)

struct br_quota_source {
    char *path;
    bool seen; /* stat succeeded once: the fields below are its */
    struct timespec mtime;
    off_t size;
    ino_t ino;
};

static struct br_quota_name client_name(struct kp_str s)
{
    return (struct br_quota_name){s.len > 0 ? s.ptr : "", s.len > 0 ? (size_t)s.len : 0};
}

struct br_quota_name br_quota_user(const struct br_conn *c, char *buf, size_t cap)
{
    /* the SASL user first (br_conn_principal: "User:<name>" once
     * authenticated), as authorize.c's br_req_principal takes it */
    const char *sasl = br_conn_principal(c);
    if (strncmp(sasl, "User:", 5) == 0 && strcmp(sasl + 5, BR_QUOTA_ANONYMOUS) != 0) {
        size_t sl = strlen(sasl + 5);
        if (sl < cap) {
            memcpy(buf, sasl + 5, sl + 1);
            return (struct br_quota_name){buf, sl};
        }
    }
    size_t n = br_conn_tls_subject(c, buf, cap);
    if (n > 0) {
        return (struct br_quota_name){buf, n};
    }
    return (struct br_quota_name){BR_QUOTA_ANONYMOUS, sizeof BR_QUOTA_ANONYMOUS - 1};
}

/* Reads the file into the quotas. 0, or -1 (logged; quotas untouched). */
static int source_read(struct br_server *b, struct br_quota_source *src)
{
    FILE *f = fopen(src->path, "re");
    if (f == NULL) {
        br_error("quota.config.file %s: %s", src->path, strerror(errno));
        return -1;
    }
    char *text = kp_malloc(QUOTA_FILE_MAX);
    if (text == NULL) {
        (void)fclose(f);
        br_error("quota.config.file %s: out of memory", src->path);
        return -1;
    }
    size_t len = fread(text, 1, QUOTA_FILE_MAX, f);
    bool bad = ferror(f) != 0 || (len == QUOTA_FILE_MAX && fgetc(f) != EOF);
    (void)fclose(f);
    if (bad) {
        kp_free(text);
        br_error("quota.config.file %s: unreadable or over %zu bytes", src->path, QUOTA_FILE_MAX);
        return -1;
    }
    char err[256] = "";
    int rc = br_quota_file_apply(b->quotas, text, len, err, sizeof err);
    kp_free(text);
    if (rc != 0) {
        br_error("quota.config.file %s: %s", src->path, err);
        return -1;
    }
    br_info("quotas: %zu entities from %s", br_quotas_count(b->quotas), src->path);
    return 0;
}

/* Whether the file changed since it was last read (and notes it). */
static bool source_changed(struct br_quota_source *src)
{
    struct stat st;
    if (stat(src->path, &st) != 0) {
        return false; /* gone or being replaced: the quotas stay */
    }
    bool same = src->seen && st.st_mtim.tv_sec == src->mtime.tv_sec &&
                st.st_mtim.tv_nsec == src->mtime.tv_nsec && st.st_size == src->size &&
                st.st_ino == src->ino;
    src->seen = true;
    src->mtime = st.st_mtim;
    src->size = st.st_size;
    src->ino = st.st_ino;
    return !same;
}

int br_client_quotas_start(struct br_server *b)
{
    struct br_quota_config qc = {
        .window_num = b->cfg.quota_window_num,
        .window_size_s = b->cfg.quota_window_size_s,
        .producer_default = b->cfg.quota_producer_default,
        .consumer_default = b->cfg.quota_consumer_default,
    };
    if (br_quotas_new(&qc, &b->quotas) != 0) {
        br_error("out of memory");
        return -1;
    }
    const char *path = b->cfg.raw[BR_CFG_QUOTA_CONFIG_FILE];
    if (path == NULL || path[0] == '\0') {
        return 0;
    }
    struct br_quota_source *src = kp_calloc(1, sizeof *src);
    size_t n = strlen(path);
    char *copy = kp_malloc(n + 1);
    if (src == NULL || copy == NULL) {
        kp_free(src);
        kp_free(copy);
        br_error("out of memory");
        return -1;
    }
    memcpy(copy, path, n + 1);
    src->path = copy;
    b->quota_src = src;
    (void)source_changed(src);
    return source_read(b, src);
}

void br_client_quotas_stop(struct br_server *b)
{
    if (b->quota_src != NULL) {
        kp_free(b->quota_src->path);
        kp_free(b->quota_src);
        b->quota_src = NULL;
    }
    br_quotas_free(b->quotas);
    b->quotas = NULL;
}

void br_client_quotas_tick(struct br_server *b)
{
    if (b->quota_src != NULL && source_changed(b->quota_src)) {
        (void)source_read(b, b->quota_src);
    }
}

/* c muted for ms, counted against the rate that earned it. */
static void throttle(struct br_server *b, struct br_conn *c, enum br_quota_type t,
                     struct br_quota_name user, struct br_quota_name client, int32_t ms,
                     int64_t now)
{
    if (ms <= 0) {
        return;
    }
    br_quotas_throttled(b->quotas, t, user, client, ms, now);
    br_conn_throttle(c, ms);
    br_debug("quotas: %s (client \"%.*s\") throttled %" PRId32 " ms (%s)", br_conn_peer(c),
             (int)client.len, client.ptr, ms, br_quota_key(t));
}

/* value recorded for (c, client_id) against quota t, c muted for the
 * throttle time it earned, returned. take_back: a throttled request's value
 * is taken back (a Fetch answered empty sent none of it: Kafka's
 * unrecordQuotaSensor). */
static int32_t record(struct br_server *b, struct br_conn *c, enum br_quota_type t,
                      struct kp_str client_id, double value, bool take_back)
{
    if (b->quotas == NULL) {
        return 0;
    }
    int64_t now = br_now_mono_ms();
    char subject[BR_PRINCIPAL_MAX];
    struct br_quota_name user = br_quota_user(c, subject, sizeof subject);
    struct br_quota_name client = client_name(client_id);
    int32_t ms = br_quotas_record(b->quotas, t, user, client, value, now);
    if (ms > 0 && take_back) {
        br_quotas_unrecord(b->quotas, t, user, client, value, now);
    }
    throttle(b, c, t, user, client, ms, now);
    return ms;
}

int32_t br_client_quotas_produce(struct br_server *b, struct br_conn *c, struct kp_str client_id,
                                 size_t bytes)
{
    return record(b, c, BR_QUOTA_PRODUCE, client_id, (double)bytes, false);
}

int32_t br_client_quotas_fetch(struct br_server *b, struct br_conn *c, struct kp_str client_id,
                               int64_t bytes)
{
    return record(b, c, BR_QUOTA_FETCH, client_id, (double)bytes, true);
}

int32_t br_client_quotas_request(struct br_server *b, struct br_conn *c, struct kp_str client_id,
                                 int64_t us)
{
    return record(b, c, BR_QUOTA_REQUEST, client_id, (double)us, false);
}

/* The top-level ThrottleTimeMs of a response of api_key at version, or
 * NULL. */
static const struct kp_field *throttle_field(int16_t api_key, int16_t version, uint32_t *size)
{
    const struct kp_api *api = kp_api_find(api_key);
    if (api == NULL || api->response == NULL || api->response->body == NULL) {
        return NULL;
    }
    const struct kp_struct_desc *body = api->response->body;
    for (uint32_t i = 0; i < body->nfields; i++) {
        const struct kp_field *f = &body->fields[i];
        if (f->type == KP_T_INT32 && strcmp(f->name, "ThrottleTimeMs") == 0 &&
            version >= f->ver_min && version <= f->ver_max) {
            *size = body->size;
            return f;
        }
    }
    return NULL;
}

void br_client_quotas_handling(struct br_server *b, struct br_req *r, int64_t start_us)
{
    b->quota_req = r;
    b->quota_req_start_us = start_us;
}

void br_client_quotas_handled(struct br_server *b, int64_t us)
{
    struct br_req *r = b->quota_req;
    b->quota_req = NULL;
    if (r != NULL) {
        /* answered later (parked) or not at all: the handler's time */
        (void)br_client_quotas_request(b, r->conn, r->hdr->ClientId, us);
    }
}

const void *br_client_quotas_respond(struct br_req *r, const void *resp)
{
    struct br_server *b = r->b;
    if (b->quota_req != r) {
        return resp; /* exempt, recorded already, or a parked request's answer */
    }
    b->quota_req = NULL;
    int32_t ms = br_client_quotas_request(b, r->conn, r->hdr->ClientId,
                                          br_now_mono_us() - b->quota_req_start_us);
    uint32_t size = 0;
    const struct kp_field *f = ms > 0 ? throttle_field(r->hdr->RequestApiKey, r->version, &size)
                                      : NULL;
    uint8_t *copy = f != NULL ? kp_arena_alloc(r->arena, size) : NULL;
    if (copy == NULL) {
        return resp; /* muted all the same; the field stays as it was */
    }
    memcpy(copy, resp, size);
    int32_t have = 0;
    memcpy(&have, copy + f->offset, sizeof have);
    if (ms > have) {
        memcpy(copy + f->offset, &ms, sizeof ms);
    }
    return copy;
}
