/* samsa-broker: the SASL exchange of a connection (see sasl.h). */
#include "security/sasl.h"

#include "base/logging.h"
#include "config/config.h"
#include "reactor/net.h"
#include "security/credentials.h"
#include "security/jaas.h"
#include "security/plain.h"
#include "security/scram.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/messages.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum mechanism {
    MECH_PLAIN = 0,
    MECH_SCRAM_SHA_256,
    MECH_SCRAM_SHA_512,
    MECH_COUNT,
};

static const char *const mechanism_names[MECH_COUNT] = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"};

struct br_sasl_listener {
    char name[BR_LISTENER_NAME_MAX + 1];
    bool enabled[MECH_COUNT];
    enum mechanism order[MECH_COUNT]; /* as sasl.enabled.mechanisms lists them */
    size_t n_enabled;
    struct br_plain_users *plain;
    struct br_scram_store *scram;
    int64_t failure_delay_ms;
};

/* ------------------------------------------------------------ the listener */

static int mechanism_of(const char *p, size_t n)
{
    for (int m = 0; m < MECH_COUNT; m++) {
        if (strlen(mechanism_names[m]) == n && memcmp(mechanism_names[m], p, n) == 0) {
            return m;
        }
    }
    return -1;
}

static int parse_mechanisms(struct br_sasl_listener *l, const char *list, char *err, size_t errlen)
{
    for (const char *p = list; *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t n = comma != NULL ? (size_t)(comma - p) : strlen(p);
        const char *item = p;
        while (n > 0 && (*item == ' ' || *item == '\t')) {
            item++;
            n--;
        }
        while (n > 0 && (item[n - 1] == ' ' || item[n - 1] == '\t')) {
            n--;
        }
        if (n > 0) {
            int m = mechanism_of(item, n);
            if (m < 0) {
                (void)snprintf(err, errlen,
                               "listener %s: SASL mechanism %.*s is not there (GSSAPI, "
                               "OAUTHBEARER are not); sasl.enabled.mechanisms takes PLAIN, "
                               "SCRAM-SHA-256, SCRAM-SHA-512",
                               l->name, (int)(n > 40 ? 40 : n), item);
                return -1;
            }
            if (!l->enabled[m]) {
                l->enabled[m] = true;
                l->order[l->n_enabled++] = (enum mechanism)m;
            }
        }
        p = comma != NULL ? comma + 1 : p + strlen(p);
    }
    if (l->n_enabled == 0) {
        (void)snprintf(err, errlen, "listener %s: sasl.enabled.mechanisms names no mechanism",
                       l->name);
        return -1;
    }
    return 0;
}

static int plain_users(const struct br_config *c, struct br_sasl_listener *l, char *err,
                       size_t errlen)
{
    const char *jaas =
        br_config_listener_mechanism_value(c, l->name, "PLAIN", BR_CFG_SASL_JAAS_CONFIG);
    if (jaas == NULL) {
        char lower[BR_LISTENER_NAME_MAX + 1];
        size_t n = strlen(l->name);
        for (size_t i = 0; i <= n; i++) {
            char ch = l->name[i];
            lower[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
        }
        (void)snprintf(
            err, errlen,
            "listener %s enables PLAIN: set listener.name.%s.plain.sasl.jaas.config "
            "(or sasl.jaas.config) to a PlainLoginModule with user_<name>=\"<password>\" "
            "entries",
            l->name, lower);
        return -1;
    }
    struct br_jaas j;
    char why[200];
    int rc = br_jaas_parse(jaas, &j, why, sizeof why);
    if (rc == 0) {
        rc = br_plain_users_new(&j, &l->plain, why, sizeof why);
    }
    br_jaas_free(&j);
    if (rc != 0) {
        (void)snprintf(err, errlen, "listener %s: %s", l->name, why);
        return -1;
    }
    if (br_plain_users_count(l->plain) == 0) {
        br_warn("listener %s enables PLAIN but its JAAS entry has no user_<name> option: "
                "no one can log in with PLAIN",
                l->name);
    }
    return 0;
}

int br_sasl_listener_new(const struct br_config *c, const char *listener,
                         struct br_scram_store *scram, struct br_sasl_listener **out, char *err,
                         size_t errlen)
{
    *out = NULL;
    struct br_sasl_listener *l = kp_calloc(1, sizeof *l);
    if (l == NULL) {
        (void)snprintf(err, errlen, "out of memory");
        return -1;
    }
    (void)snprintf(l->name, sizeof l->name, "%s", listener);
    l->scram = scram;
    l->failure_delay_ms = c->connection_failed_authentication_delay_ms;
    const char *mechs = br_config_listener_value(c, listener, BR_CFG_SASL_ENABLED_MECHANISMS);
    if (mechs == NULL) {
        (void)snprintf(err, errlen,
                       "listener %s is a SASL one: set sasl.enabled.mechanisms (PLAIN, "
                       "SCRAM-SHA-256, SCRAM-SHA-512; Kafka's default GSSAPI is not there)",
                       listener);
        kp_free(l);
        return -1;
    }
    if (parse_mechanisms(l, mechs, err, errlen) != 0 ||
        (l->enabled[MECH_PLAIN] && plain_users(c, l, err, errlen) != 0)) {
        br_sasl_listener_free(l);
        return -1;
    }
    *out = l;
    return 0;
}

void br_sasl_listener_free(struct br_sasl_listener *l)
{
    if (l == NULL) {
        return;
    }
    br_plain_users_free(l->plain);
    kp_free(l);
}

bool br_sasl_listener_scram(const struct br_sasl_listener *l)
{
    return l->enabled[MECH_SCRAM_SHA_256] || l->enabled[MECH_SCRAM_SHA_512];
}

/* ------------------------------------------------------------ a connection */

enum state {
    ST_HANDSHAKE_OR_VERSIONS = 0,
    ST_HANDSHAKE,
    ST_RAW_TOKENS,   /* after SaslHandshake v0 */
    ST_AUTHENTICATE, /* after SaslHandshake v1 */
    ST_FAILED,       /* waiting for the delayed answer and the close */
};

struct session {
    struct br_sasl_listener *l;
    struct br_conn *conn;
    struct br_net *net;
    enum state state;
    enum mechanism mech;
    struct br_scram_server *scram;
    /* a failure's answer (NULL slot: none, close only), sent after
     * connection.failed.authentication.delay.ms */
    struct br_timer delay;
    struct br_slot *fail_slot;
    uint8_t *fail_bytes;
    size_t fail_len;
};

static void session_free(void *p)
{
    struct session *s = p;
    if (br_timer_armed(&s->delay)) {
        br_timer_cancel(s->net, &s->delay);
    }
    br_scram_server_free(s->scram);
    kp_free(s->fail_bytes);
    kp_free(s);
}

static void fail_now(struct session *s)
{
    if (s->fail_slot != NULL) {
        if (s->fail_bytes != NULL) {
            /* the slot owns the bytes now, or freed them when it failed */
            (void)br_slot_add_mem(s->fail_slot, s->fail_bytes, s->fail_len);
            s->fail_bytes = NULL;
        }
        br_slot_ready(s->conn, s->fail_slot);
        s->fail_slot = NULL;
    }
    br_conn_close_after_flush(s->conn);
}

static void delay_fire(void *ctx, struct br_timer *t)
{
    (void)ctx;
    fail_now(t->owner);
}

static const struct br_timer_ops delay_ops = {"failed authentication delay", delay_fire};

static struct session *session_of(struct br_sasl_listener *l, struct br_conn *c)
{
    struct session *s = br_conn_auth_state(c);
    if (s != NULL) {
        return s;
    }
    s = kp_calloc(1, sizeof *s);
    if (s == NULL) {
        return NULL;
    }
    s->l = l;
    s->conn = c;
    s->net = br_conn_net(c);
    br_timer_init(&s->delay, &delay_ops, s);
    br_conn_set_auth_state(c, s, session_free);
    return s;
}

/* A response (api key, version, correlation) into a new slot, ready. */
static void respond(struct br_conn *c, int16_t key, int16_t version, int32_t correlation,
                    const void *body)
{
    struct br_slot *slot = br_conn_slot_new(c);
    struct kp_writer w;
    kp_wr_init(&w, 1u << 20);
    size_t len = 0;
    uint8_t *buf = NULL;
    if (slot != NULL && kp_response_encode(&w, key, version, correlation, body) == 0) {
        buf = kp_wr_steal(&w, &len);
    }
    kp_wr_free(&w);
    if (buf == NULL || br_slot_add_mem(slot, buf, len) != 0) {
        br_error("answering the SASL exchange of %s failed: closing it", br_conn_peer(c));
        if (slot != NULL) {
            br_slot_ready(c, slot);
        }
        br_conn_close_after_flush(c);
        return;
    }
    br_slot_ready(c, slot);
}

/* A raw token frame (after v0): its 4-byte size and the bytes. */
static void respond_raw(struct br_conn *c, const uint8_t *tok, size_t len)
{
    struct br_slot *slot = br_conn_slot_new(c);
    uint8_t *buf = kp_malloc(len + 4);
    if (slot == NULL || buf == NULL) {
        kp_free(buf);
        br_error("answering the SASL exchange of %s failed: closing it", br_conn_peer(c));
        if (slot != NULL) {
            br_slot_ready(c, slot);
        }
        br_conn_close_after_flush(c);
        return;
    }
    kp_store_be32(buf, (uint32_t)len);
    if (len > 0) {
        memcpy(buf + 4, tok, len);
    }
    if (br_slot_add_mem(slot, buf, len + 4) != 0) {
        br_conn_close_after_flush(c);
    }
    br_slot_ready(c, slot);
}

/* The failure is answered (slot, bytes; none after v0) after the delay. */
static void fail_later(struct session *s, struct br_slot *slot, uint8_t *bytes, size_t len,
                       const char *why)
{
    br_info("authentication of %s with %s on listener %s failed: %s", br_conn_peer(s->conn),
            mechanism_names[s->mech], s->l->name, why);
    s->state = ST_FAILED;
    s->fail_slot = slot;
    s->fail_bytes = bytes;
    s->fail_len = len;
    if (s->l->failure_delay_ms <= 0) {
        fail_now(s);
        return;
    }
    br_timer_arm(s->net, &s->delay, br_now_mono_ms() + s->l->failure_delay_ms);
}

/* One token through the mechanism. */
static enum br_sasl_step step(struct session *s, const uint8_t *in, size_t len, uint8_t **out,
                              size_t *out_len, char *user, size_t user_cap, const char **why)
{
    *out = NULL;
    *out_len = 0;
    if (s->mech == MECH_PLAIN) {
        return br_plain_authenticate(s->l->plain, in, len, user, user_cap, why) == 0
                   ? BR_SASL_DONE
                   : BR_SASL_FAILED;
    }
    if (s->scram == NULL && br_scram_server_new(s->mech == MECH_SCRAM_SHA_512 ? 512 : 256,
                                                s->l->scram, &s->scram) != 0) {
        *why = "Authentication failed: out of memory";
        return BR_SASL_FAILED;
    }
    return br_scram_server_step(s->scram, in, len, out, out_len, user, user_cap, why);
}

static void authenticated(struct session *s, const char *user)
{
    char principal[BR_SCRAM_USER_MAX + 8];
    (void)snprintf(principal, sizeof principal, "User:%s", user);
    br_info("%s authenticated as %s with %s on listener %s", br_conn_peer(s->conn), principal,
            mechanism_names[s->mech], s->l->name);
    if (br_conn_authenticated(s->conn, principal) != 0) {
        br_error("out of memory: closing %s", br_conn_peer(s->conn));
        br_conn_close_after_flush(s->conn);
    }
    /* the exchange is over: its state goes with the connection */
}

bool br_sasl_raw_frame(struct br_sasl_listener *l, struct br_conn *c, const uint8_t *payload,
                       size_t len)
{
    struct session *s = br_conn_auth_state(c);
    if (s == NULL || (s->state != ST_RAW_TOKENS && s->state != ST_FAILED)) {
        return false;
    }
    (void)l;
    if (s->state == ST_FAILED) {
        return true; /* dropped: the connection closes */
    }
    uint8_t *out = NULL;
    size_t out_len = 0;
    char user[BR_SCRAM_USER_MAX + 1];
    const char *why = "Authentication failed";
    enum br_sasl_step st = step(s, payload, len, &out, &out_len, user, sizeof user, &why);
    if (st == BR_SASL_FAILED) {
        kp_free(out);
        fail_later(s, NULL, NULL, 0, why); /* v0: the client sees the close */
        return true;
    }
    respond_raw(c, out, out_len);
    kp_free(out);
    if (st == BR_SASL_DONE) {
        authenticated(s, user);
    }
    return true;
}

static void handshake(struct session *s, const struct kp_request_header *h,
                      const struct kp_SaslHandshakeRequest *req)
{
    struct kp_str list[MECH_COUNT];
    for (size_t i = 0; i < s->l->n_enabled; i++) {
        list[i] = kp_str_c(mechanism_names[s->l->order[i]]);
    }
    struct kp_SaslHandshakeResponse resp;
    kp_SaslHandshakeResponse_init(&resp);
    resp.Mechanisms.items = list;
    resp.Mechanisms.count = (int32_t)s->l->n_enabled;
    int m = mechanism_of(req->Mechanism.ptr != NULL ? req->Mechanism.ptr : "",
                         req->Mechanism.len > 0 ? (size_t)req->Mechanism.len : 0);
    if (m < 0 || !s->l->enabled[m]) {
        br_info("%s asked for SASL mechanism \"%.*s\", not enabled on listener %s: closing",
                br_conn_peer(s->conn), req->Mechanism.len > 64 ? 64 : (int)req->Mechanism.len,
                req->Mechanism.ptr != NULL ? req->Mechanism.ptr : "", s->l->name);
        resp.ErrorCode = KP_ERR_UNSUPPORTED_SASL_MECHANISM;
        respond(s->conn, h->RequestApiKey, h->RequestApiVersion, h->CorrelationId, &resp);
        s->state = ST_FAILED;
        br_conn_close_after_flush(s->conn);
        return;
    }
    s->mech = (enum mechanism)m;
    s->state = h->RequestApiVersion == 0 ? ST_RAW_TOKENS : ST_AUTHENTICATE;
    respond(s->conn, h->RequestApiKey, h->RequestApiVersion, h->CorrelationId, &resp);
}

static void authenticate(struct session *s, const struct kp_request_header *h,
                         const struct kp_SaslAuthenticateRequest *req)
{
    uint8_t *out = NULL;
    size_t out_len = 0;
    char user[BR_SCRAM_USER_MAX + 1];
    const char *why = "Authentication failed";
    size_t len = req->AuthBytes.len > 0 ? (size_t)req->AuthBytes.len : 0;
    const uint8_t *in = req->AuthBytes.ptr != NULL ? req->AuthBytes.ptr : (const uint8_t *)"";
    enum br_sasl_step st = step(s, in, len, &out, &out_len, user, sizeof user, &why);
    struct kp_SaslAuthenticateResponse resp;
    kp_SaslAuthenticateResponse_init(&resp);
    if (st == BR_SASL_FAILED) {
        kp_free(out);
        resp.ErrorCode = KP_ERR_SASL_AUTHENTICATION_FAILED;
        resp.ErrorMessage = kp_str_c(why);
        resp.AuthBytes.ptr = (const uint8_t *)"";
        resp.AuthBytes.len = 0;
        struct kp_writer w;
        kp_wr_init(&w, 1u << 16);
        size_t blen = 0;
        uint8_t *bytes = NULL;
        if (kp_response_encode(&w, h->RequestApiKey, h->RequestApiVersion, h->CorrelationId,
                               &resp) == 0) {
            bytes = kp_wr_steal(&w, &blen);
        }
        kp_wr_free(&w);
        fail_later(s, br_conn_slot_new(s->conn), bytes, blen, why);
        return;
    }
    resp.AuthBytes.ptr = out != NULL ? out : (const uint8_t *)"";
    resp.AuthBytes.len = (int32_t)out_len;
    respond(s->conn, h->RequestApiKey, h->RequestApiVersion, h->CorrelationId, &resp);
    kp_free(out);
    if (st == BR_SASL_DONE) {
        authenticated(s, user);
    }
}

enum br_sasl_verdict br_sasl_request(struct br_sasl_listener *l, struct br_conn *c,
                                     const struct kp_request_header *h, const void *body,
                                     int decode_err)
{
    struct session *s = session_of(l, c);
    if (s == NULL) {
        br_error("out of memory: closing %s", br_conn_peer(c));
        br_conn_close_after_flush(c);
        return BR_SASL_TAKEN;
    }
    if (s->state == ST_FAILED) {
        return BR_SASL_TAKEN; /* dropped: the connection closes */
    }
    int16_t key = h->RequestApiKey;
    if (key == KP_API_API_VERSIONS &&
        (s->state == ST_HANDSHAKE_OR_VERSIONS || s->state == ST_HANDSHAKE)) {
        s->state = ST_HANDSHAKE;
        return BR_SASL_PASS;
    }
    if (decode_err != 0 && (key == KP_API_SASL_HANDSHAKE || key == KP_API_SASL_AUTHENTICATE)) {
        return BR_SASL_PASS; /* closed as any malformed or unsupported request */
    }
    if (key == KP_API_SASL_HANDSHAKE &&
        (s->state == ST_HANDSHAKE_OR_VERSIONS || s->state == ST_HANDSHAKE)) {
        handshake(s, h, body);
        return BR_SASL_TAKEN;
    }
    if (key == KP_API_SASL_AUTHENTICATE && s->state == ST_AUTHENTICATE) {
        authenticate(s, h, body);
        return BR_SASL_TAKEN;
    }
    br_info("closing %s: API key %d before SASL authentication on listener %s (Kafka's "
            "ILLEGAL_SASL_STATE)",
            br_conn_peer(c), key, l->name);
    s->state = ST_FAILED;
    return decode_err == 0 ? BR_SASL_REFUSED : BR_SASL_PASS;
}
