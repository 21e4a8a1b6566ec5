/* samsa-broker: Kafka 2.0's znode data, encoded and decoded (see zk_json.h):
 * brokers, the controller and its epoch, the cluster id, the producer id
 * block, sequential znodes; topics in zk_json_topics.c, the JSON values
 * and messages in zk_json_values.c. */
#define _POSIX_C_SOURCE 200809L

#include "cluster/zk_json.h"

#include "cluster/zk_json_internal.h"

#include <string.h>

#include <samsa-protocol/alloc.h>

/* ------------------------------------------------------------ /brokers/ids/<id> */

static const char *const protocol_names[] = {
    [BR_ZK_PLAINTEXT] = "PLAINTEXT",
    [BR_ZK_SSL] = "SSL",
    [BR_ZK_SASL_PLAINTEXT] = "SASL_PLAINTEXT",
    [BR_ZK_SASL_SSL] = "SASL_SSL",
};

#define N_PROTOCOLS (sizeof protocol_names / sizeof protocol_names[0])

const char *br_zk_security_protocol_name(enum br_zk_security_protocol p)
{
    if ((unsigned)p < N_PROTOCOLS) {
        return protocol_names[p];
    }
    return "UNKNOWN";
}

/* SecurityProtocol.forName: the name in any case. */
static bool protocol_by_name(const char *s, size_t n, enum br_zk_security_protocol *out)
{
    for (size_t i = 0; i < N_PROTOCOLS; i++) {
        const char *p = protocol_names[i];
        if (strlen(p) != n) {
            continue;
        }
        size_t k = 0;
        while (k < n && (s[k] == p[k] || (s[k] >= 'a' && s[k] <= 'z' && s[k] - 32 == p[k]))) {
            k++;
        }
        if (k == n) {
            *out = (enum br_zk_security_protocol)i;
            return true;
        }
    }
    return false;
}

/* The host characters of EndPoint.scala's uriParseExp: [0-9a-zA-Z\-%._:]. */
static bool host_byte(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
           c == '%' || c == '.' || c == '_' || c == ':';
}

static bool host_valid(const char *s, size_t n)
{
    if (n > BR_ZK_HOST_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!host_byte((unsigned char)s[i])) {
            return false;
        }
    }
    return true;
}

/* A listener name as Samsa takes it: 1..BR_ZK_LISTENER_MAX printable ASCII
 * bytes without spaces (Kafka takes anything before "://"). */
static bool listener_valid(const char *s, size_t n)
{
    if (n == 0 || n > BR_ZK_LISTENER_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7f) {
            return false;
        }
    }
    return true;
}

/*
 * One "LISTENER://host:port" string of "endpoints", as EndPoint.createEndPoint
 * reads it with ^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+): the host
 * holds no '/', so the listener runs to the last "://"; the host's class
 * holds ':', so the port follows the last ':'; a '[' may open the host and
 * a ']' close it. The listener name is upper-cased (ListenerName.normalised)
 * and its protocol looked up in the map (its keys as written), or, without
 * a map, taken from a listener named after its protocol.
 */
static int read_endpoint(const struct dec *d, const char *s, size_t n, const json_t *map,
                         size_t index, struct br_zk_endpoint *ep)
{
    char qb[QMAX];
    size_t sep = n;
    for (size_t i = n; i >= 3; i--) {
        if (s[i - 3] == ':' && s[i - 2] == '/' && s[i - 1] == '/') {
            sep = i - 3;
            break;
        }
    }
    if (sep == n) {
        return fail(d, KP_E_CORRUPT, "endpoints[%zu] %s is not LISTENER://host:port", index,
                    zkj_q(s, n, qb));
    }
    if (!listener_valid(s, sep)) {
        return fail(d, KP_E_CORRUPT,
                    "endpoints[%zu] %s: the listener name must be 1 to %d "
                    "printable ASCII bytes",
                    index, zkj_q(s, n, qb), BR_ZK_LISTENER_MAX);
    }
    const char *rest = s + sep + 3;
    size_t rlen = n - sep - 3;
    size_t colon = rlen;
    for (size_t i = rlen; i > 0; i--) {
        if (rest[i - 1] == ':') {
            colon = i - 1;
            break;
        }
    }
    if (colon == rlen) {
        return fail(d, KP_E_CORRUPT, "endpoints[%zu] %s has no :port", index, zkj_q(s, n, qb));
    }
    const char *port_s = rest + colon + 1;
    size_t port_n = rlen - colon - 1;
    int64_t port = 0;
    bool digits = port_n > 0 && port_s[0] != '+';
    if (!digits || !br_num_parse_i64(port_s, port_n, INT32_MIN, INT32_MAX, &port)) {
        return fail(d, KP_E_CORRUPT, "endpoints[%zu] %s: the port is not a 32-bit number", index,
                    zkj_q(s, n, qb));
    }
    if (port < 0 || port > 65535) {
        return fail(d, KP_E_CORRUPT, "endpoints[%zu] %s: port %lld is not 0..65535", index,
                    zkj_q(s, n, qb), (long long)port);
    }
    size_t h0 = 0;
    size_t h1 = colon;
    if (h1 > 0 && rest[0] == '[') {
        h0 = 1;
    }
    if (h1 > h0 && rest[h1 - 1] == ']') {
        h1--;
    }
    if (!host_valid(rest + h0, h1 - h0)) {
        return fail(d, KP_E_CORRUPT,
                    "endpoints[%zu] %s: the host must be at most %d bytes of "
                    "[0-9a-zA-Z-%%._:]",
                    index, zkj_q(s, n, qb), BR_ZK_HOST_MAX);
    }
    memset(ep, 0, sizeof *ep);
    for (size_t i = 0; i < sep; i++) {
        char c = s[i];
        ep->listener[i] = c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
    }
    memcpy(ep->host, rest + h0, h1 - h0);
    ep->port = (int32_t)port;

    const char *proto = NULL;
    size_t proto_n = 0;
    if (map != NULL) {
        const json_t *v = json_object_get(map, ep->listener);
        if (v != NULL) {
            proto = json_string_value(v); /* every value was checked to be a protocol */
            proto_n = json_string_length(v);
        }
    } else {
        proto = ep->listener;
        proto_n = sep;
    }
    if (proto == NULL || !protocol_by_name(proto, proto_n, &ep->security_protocol)) {
        return fail(d, KP_E_CORRUPT, "endpoints[%zu]: no security protocol for listener %s%s",
                    index, zkj_q(ep->listener, sep, qb),
                    map != NULL ? " in listener_security_protocol_map" : "");
    }
    return 0;
}

void br_zk_broker_clear(struct br_zk_broker *b)
{
    if (b == NULL) {
        return;
    }
    kp_free(b->endpoints);
    memset(b, 0, sizeof *b);
}

static int broker_v1(const struct dec *d, const json_t *root, struct br_zk_broker *out)
{
    const char *host = NULL;
    size_t host_n = 0;
    int32_t port = 0;
    int rc = get_string(d, root, "host", true, &host, &host_n);
    if (rc == 0) {
        rc = get_int32(d, root, "port", 0, &port);
    }
    if (rc != 0) {
        return rc;
    }
    char qb[QMAX];
    if (port > 65535) {
        return fail(d, KP_E_CORRUPT, "\"port\" %d is not 0..65535", (int)port);
    }
    if (!host_valid(host, host_n)) {
        return fail(d, KP_E_CORRUPT, "\"host\" %s must be at most %d bytes of [0-9a-zA-Z-%%._:]",
                    zkj_q(host, host_n, qb), BR_ZK_HOST_MAX);
    }
    out->endpoints = kp_calloc(1, sizeof out->endpoints[0]);
    if (out->endpoints == NULL) {
        return fail(d, KP_E_NOMEM, "out of memory");
    }
    out->n_endpoints = 1;
    struct br_zk_endpoint *ep = &out->endpoints[0];
    memcpy(ep->listener, "PLAINTEXT", sizeof "PLAINTEXT");
    memcpy(ep->host, host, host_n);
    ep->port = port;
    ep->security_protocol = BR_ZK_PLAINTEXT;
    return 0;
}

static int broker_v2(const struct dec *d, const json_t *root, struct br_zk_broker *out)
{
    char qb[QMAX];
    json_t *map = json_object_get(root, "listener_security_protocol_map");
    if (map != NULL) {
        if (!json_is_object(map)) {
            return fail(d, KP_E_CORRUPT, "\"listener_security_protocol_map\" is %s, not an object",
                        zkj_type_name(map));
        }
        /* Kafka maps every entry through SecurityProtocol.forName */
        for (void *it = json_object_iter(map); it != NULL; it = json_object_iter_next(map, it)) {
            const char *key = json_object_iter_key(it);
            const json_t *v = json_object_iter_value(it);
            enum br_zk_security_protocol p;
            if (!json_is_string(v)) {
                return fail(d, KP_E_CORRUPT,
                            "listener_security_protocol_map[%s] is %s, not a "
                            "string",
                            zkj_q(key, strlen(key), qb), zkj_type_name(v));
            }
            if (!protocol_by_name(json_string_value(v), json_string_length(v), &p)) {
                return fail(d, KP_E_CORRUPT,
                            "listener_security_protocol_map[%s]: %s is no "
                            "security protocol",
                            zkj_q(key, strlen(key), qb),
                            zkj_q(json_string_value(v), json_string_length(v), qb));
            }
        }
    }
    const json_t *eps = json_object_get(root, "endpoints");
    if (eps == NULL) {
        return fail(d, KP_E_CORRUPT, "no \"endpoints\"");
    }
    if (!json_is_array(eps)) {
        return fail(d, KP_E_CORRUPT, "\"endpoints\" is %s, not an array", zkj_type_name(eps));
    }
    size_t n = json_array_size(eps);
    if (n > BR_ZK_MAX_ENDPOINTS) {
        return fail(d, KP_E_TOO_LARGE, "%zu endpoints, more than %d", n, BR_ZK_MAX_ENDPOINTS);
    }
    if (n == 0) {
        return fail(d, KP_E_CORRUPT, "\"endpoints\" is empty: the broker cannot be reached");
    }
    out->endpoints = kp_calloc(n, sizeof out->endpoints[0]);
    if (out->endpoints == NULL) {
        return fail(d, KP_E_NOMEM, "out of memory");
    }
    out->n_endpoints = n;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(eps, i);
        if (!json_is_string(v)) {
            return fail(d, KP_E_CORRUPT, "endpoints[%zu] is %s, not a string", i, zkj_type_name(v));
        }
        int rc = read_endpoint(d, json_string_value(v), json_string_length(v), map, i,
                               &out->endpoints[i]);
        if (rc != 0) {
            return rc;
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(out->endpoints[k].listener, out->endpoints[i].listener) == 0) {
                return fail(d, KP_E_CORRUPT, "listener %s is in \"endpoints\" twice",
                            zkj_q(out->endpoints[i].listener, strlen(out->endpoints[i].listener), qb));
            }
        }
    }
    /* Option[String]: null is no rack */
    const json_t *rack = json_object_get(root, "rack");
    if (rack != NULL && !json_is_null(rack)) {
        if (!json_is_string(rack)) {
            return fail(d, KP_E_CORRUPT, "\"rack\" is %s, not a string", zkj_type_name(rack));
        }
        int rc = copy_text(d, "\"rack\"", json_string_value(rack), json_string_length(rack), true,
                           out->rack, sizeof out->rack);
        if (rc != 0) {
            return rc;
        }
        out->has_rack = true;
    }
    return 0;
}

int br_zk_broker_decode(const char *buf, size_t len, const char *name, struct br_zk_broker *out,
                        char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = zkj_parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    /* BrokerIdZNode.decode: version and jmx_port are read first, always */
    rc = get_int32(&d, root, "version", INT32_MIN, &out->version);
    if (rc == 0) {
        rc = get_int32(&d, root, "jmx_port", INT32_MIN, &out->jmx_port);
    }
    if (rc == 0 && out->version < 1) {
        rc = fail(&d, KP_E_UNSUPPORTED,
                  "version %d: Kafka reads broker registrations from "
                  "version 1 on",
                  (int)out->version);
    }
    if (rc == 0) {
        rc = out->version == 1 ? broker_v1(&d, root, out) : broker_v2(&d, root, out);
    }
    if (rc == 0) {
        out->timestamp_ms = zkj_lenient_long(root, "timestamp");
        const json_t *admin = json_object_get(root, "admin_endpoint");
        const char *url = json_is_string(admin) ? json_string_value(admin) : NULL;
        size_t url_n = json_is_string(admin) ? json_string_length(admin) : 0;
        if (url != NULL && url_n <= BR_ZK_ADMIN_ENDPOINT_MAX && !zkj_has_control_byte(url, url_n)) {
            memcpy(out->admin_endpoint, url, url_n);
            out->admin_endpoint[url_n] = '\0';
        }
    }
    json_decref(root);
    if (rc != 0) {
        br_zk_broker_clear(out);
    }
    return rc;
}

/* EndPoint.connectionString: LISTENER://host:port, Utils.formatAddress
 * putting an IPv6 host in brackets, ":port" alone for a null host. */
static int endpoint_string(const struct br_zk_endpoint *ep, char *buf, size_t cap, size_t *n)
{
    int w;
    if (ep->host[0] == '\0') {
        w = snprintf(buf, cap, "%s://:%d", ep->listener, (int)ep->port);
    } else if (strchr(ep->host, ':') != NULL) {
        w = snprintf(buf, cap, "%s://[%s]:%d", ep->listener, ep->host, (int)ep->port);
    } else {
        w = snprintf(buf, cap, "%s://%s:%d", ep->listener, ep->host, (int)ep->port);
    }
    if (w < 0 || (size_t)w >= cap) {
        return KP_E_INVALID_ARG;
    }
    *n = (size_t)w;
    return 0;
}

int br_zk_broker_encode(const struct br_zk_broker *b, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (b->n_endpoints == 0 || b->n_endpoints > BR_ZK_MAX_ENDPOINTS || b->endpoints == NULL) {
        return KP_E_INVALID_ARG;
    }
    const struct br_zk_endpoint *plain = NULL;
    for (size_t i = 0; i < b->n_endpoints; i++) {
        const struct br_zk_endpoint *ep = &b->endpoints[i];
        size_t ln = strnlen(ep->listener, sizeof ep->listener);
        size_t hn = strnlen(ep->host, sizeof ep->host);
        if (ln == sizeof ep->listener || hn == sizeof ep->host ||
            !listener_valid(ep->listener, ln) || !host_valid(ep->host, hn) || ep->port < 0 ||
            ep->port > 65535 || (unsigned)ep->security_protocol >= N_PROTOCOLS) {
            return KP_E_INVALID_ARG;
        }
        for (size_t k = 0; k < ln; k++) {
            if (ep->listener[k] >= 'a' && ep->listener[k] <= 'z') {
                return KP_E_INVALID_ARG; /* Kafka would read it upper-cased */
            }
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(b->endpoints[k].listener, ep->listener) == 0) {
                return KP_E_INVALID_ARG;
            }
        }
        if (plain == NULL && ep->security_protocol == BR_ZK_PLAINTEXT) {
            plain = ep;
        }
    }
    size_t rack_n = b->has_rack ? strnlen(b->rack, sizeof b->rack) : 0;
    if (b->has_rack && (rack_n == sizeof b->rack || zkj_has_control_byte(b->rack, rack_n))) {
        return KP_E_INVALID_ARG;
    }

    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 4));
    /* BrokerIdZNode.encode: the first PLAINTEXT endpoint, for old clients */
    if (plain != NULL && plain->host[0] != '\0') {
        zkj_put(&e, root, "host", zkj_enc_str(&e, plain->host));
    } else {
        zkj_put(&e, root, "host", zkj_enc_null(&e));
    }
    zkj_put(&e, root, "port", zkj_enc_int(&e, plain != NULL ? plain->port : -1));
    json_t *eps = zkj_enc_array(&e);
    json_t *map = zkj_enc_object(&e);
    for (size_t i = 0; i < b->n_endpoints; i++) {
        const struct br_zk_endpoint *ep = &b->endpoints[i];
        char s[BR_ZK_LISTENER_MAX + BR_ZK_HOST_MAX + 24];
        size_t n = 0;
        if (endpoint_string(ep, s, sizeof s, &n) != 0) {
            zkj_enc_fail(&e, KP_E_INVALID_ARG);
        }
        zkj_push(&e, eps, zkj_enc_strn(&e, s, n));
        zkj_put(&e, map, ep->listener, zkj_enc_str(&e, protocol_names[ep->security_protocol]));
    }
    zkj_put(&e, root, "endpoints", eps);
    zkj_put(&e, root, "listener_security_protocol_map", map);
    if (b->has_rack) {
        zkj_put(&e, root, "rack", zkj_enc_strn(&e, b->rack, rack_n));
    }
    zkj_put(&e, root, "jmx_port", zkj_enc_int(&e, b->jmx_port));
    zkj_put(&e, root, "timestamp", zkj_enc_long_str(&e, b->timestamp_ms));
    size_t admin_n = strnlen(b->admin_endpoint, sizeof b->admin_endpoint);
    if (admin_n > 0 && admin_n < sizeof b->admin_endpoint &&
        !zkj_has_control_byte(b->admin_endpoint, admin_n)) {
        zkj_put(&e, root, "admin_endpoint", zkj_enc_strn(&e, b->admin_endpoint, admin_n));
    }
    return zkj_finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ /controller */

int br_zk_controller_encode(int32_t broker_id, int64_t timestamp_ms, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (broker_id < 0) {
        return KP_E_INVALID_ARG;
    }
    /* ControllerZNode.encode */
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 1));
    zkj_put(&e, root, "brokerid", zkj_enc_int(&e, broker_id));
    zkj_put(&e, root, "timestamp", zkj_enc_long_str(&e, timestamp_ms));
    return zkj_finish(&e, root, out, out_len);
}

int br_zk_controller_decode(const char *buf, size_t len, const char *name,
                            struct br_zk_controller *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = zkj_parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    /* ControllerZNode.decode reads brokerid alone */
    rc = get_int32(&d, root, "brokerid", 0, &out->broker_id);
    if (rc == 0) {
        const json_t *v = json_object_get(root, "version");
        json_int_t ver = v != NULL && json_is_integer(v) ? json_integer_value(v) : -1;
        out->version = ver >= 0 && ver <= INT32_MAX ? (int32_t)ver : -1;
        out->timestamp_ms = zkj_lenient_long(root, "timestamp");
    } else {
        memset(out, 0, sizeof *out);
    }
    json_decref(root);
    return rc;
}

/* ------------------------------------------------------------ /controller_epoch */

int br_zk_controller_epoch_encode(int32_t epoch, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (epoch < 0) {
        return KP_E_INVALID_ARG;
    }
    char b[16];
    int n = snprintf(b, sizeof b, "%d", (int)epoch);
    if (n <= 0 || (size_t)n >= sizeof b) {
        return KP_E_INVALID_ARG;
    }
    return zkj_dup_out(b, (size_t)n, out, out_len);
}

int br_zk_controller_epoch_decode(const char *buf, size_t len, const char *name, int32_t *epoch,
                                  char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    *epoch = 0;
    if (len > BR_ZK_JSON_MAX_BYTES) {
        return fail(&d, KP_E_TOO_LARGE, "%zu bytes, more than the %zu read", len,
                    BR_ZK_JSON_MAX_BYTES);
    }
    /* ControllerEpochZNode.decode: new String(bytes, UTF_8).toInt */
    int64_t v = 0;
    if (buf == NULL || !br_num_parse_i64(buf, len, INT32_MIN, INT32_MAX, &v)) {
        return fail(&d, KP_E_CORRUPT, "%s is not a 32-bit decimal number",
                    buf != NULL ? zkj_q(buf, len, qb) : "no data");
    }
    if (v < 0) {
        return fail(&d, KP_E_CORRUPT, "controller epoch %lld is negative", (long long)v);
    }
    *epoch = (int32_t)v;
    return 0;
}

/* ------------------------------------------------------------ /cluster/id */

int br_zk_cluster_id_decode(const char *buf, size_t len, const char *name,
                            char id[BR_ZK_CLUSTER_ID_MAX + 1], char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    id[0] = '\0';
    json_t *root = NULL;
    int rc = zkj_parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    /* ClusterIdZNode.fromJson reads "id" alone */
    const char *s = NULL;
    size_t n = 0;
    rc = get_string(&d, root, "id", true, &s, &n);
    if (rc == 0) {
        rc = copy_text(&d, "\"id\"", s, n, false, id, BR_ZK_CLUSTER_ID_MAX + 1);
    }
    json_decref(root);
    if (rc != 0) {
        id[0] = '\0';
    }
    return rc;
}

int br_zk_cluster_id_encode(const char *id, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    size_t n = strlen(id);
    if (n == 0 || n > BR_ZK_CLUSTER_ID_MAX || zkj_has_control_byte(id, n)) {
        return KP_E_INVALID_ARG;
    }
    /* ClusterIdZNode.toJson: the version is the string "1" */
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_str(&e, "1"));
    zkj_put(&e, root, "id", zkj_enc_strn(&e, id, n));
    return zkj_finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ /latest_producer_id_block */

int br_zk_producer_id_block_decode(const char *buf, size_t len, const char *name,
                                   struct br_zk_producer_id_block *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = zkj_parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    /* ProducerIdManager.parseProducerIdBlockData: broker, block_start,
     * block_end, the last two strings read with toLong */
    const char *start = NULL;
    size_t start_n = 0;
    const char *end = NULL;
    size_t end_n = 0;
    rc = get_int32(&d, root, "broker", 0, &out->broker_id);
    if (rc == 0) {
        rc = get_string(&d, root, "block_start", true, &start, &start_n);
    }
    if (rc == 0) {
        rc = get_string(&d, root, "block_end", true, &end, &end_n);
    }
    if (rc == 0 && !br_num_parse_i64(start, start_n, 0, INT64_MAX, &out->block_start)) {
        rc = fail(&d, KP_E_CORRUPT, "\"block_start\" %s is not a decimal number >= 0",
                  zkj_q(start, start_n, qb));
    }
    if (rc == 0 && !br_num_parse_i64(end, end_n, 0, INT64_MAX, &out->block_end)) {
        rc = fail(&d, KP_E_CORRUPT, "\"block_end\" %s is not a decimal number >= 0",
                  zkj_q(end, end_n, qb));
    }
    if (rc == 0 && out->block_end < out->block_start) {
        rc = fail(&d, KP_E_CORRUPT, "block %lld..%lld ends before it starts",
                  (long long)out->block_start, (long long)out->block_end);
    }
    json_decref(root);
    if (rc != 0) {
        memset(out, 0, sizeof *out);
    }
    return rc;
}

int br_zk_producer_id_block_encode(const struct br_zk_producer_id_block *b, char **out,
                                   size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (b->broker_id < 0 || b->block_start < 0 || b->block_end < b->block_start) {
        return KP_E_INVALID_ARG;
    }
    /* ProducerIdManager.generateProducerIdBlockJson */
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 1));
    zkj_put(&e, root, "broker", zkj_enc_int(&e, b->broker_id));
    zkj_put(&e, root, "block_start", zkj_enc_long_str(&e, b->block_start));
    zkj_put(&e, root, "block_end", zkj_enc_long_str(&e, b->block_end));
    return zkj_finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ sequential znodes */

int br_zk_sequence_number(const char *name, const char *prefix, int64_t *seq)
{
    *seq = 0;
    size_t pn = strlen(prefix);
    size_t n = strlen(name);
    /* ZooKeeper appends the parent's counter as %010d */
    if (n != pn + 10 || memcmp(name, prefix, pn) != 0) {
        return KP_E_CORRUPT;
    }
    uint64_t v = 0;
    if (!br_num_parse_u64(name + pn, 10, INT64_MAX, &v)) {
        return KP_E_CORRUPT;
    }
    *seq = (int64_t)v;
    return 0;
}
