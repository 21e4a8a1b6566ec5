/* samsa-broker: listeners, advertised.listeners and
 * listener.security.protocol.map parsed and checked as Kafka 2.0's
 * KafkaConfig does (see config.h). */
#define _POSIX_C_SOURCE 200809L

#include "config/config_internal.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "base/number.h"

/* ------------------------------------------------------------ listeners */

static bool valid_listener_name(const char *p, size_t n)
{
    if (n == 0 || n > BR_LISTENER_NAME_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!cfg_is_alnum(p[i]) && p[i] != '_' && p[i] != '-') {
            return false;
        }
    }
    return true;
}

static bool valid_host(const char *p, size_t n, bool bracketed)
{
    if (n > BR_HOST_MAX || (bracketed && n == 0)) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        bool ok = cfg_is_alnum(c) || c == '.' || c == '-' || c == '_' ||
                  (bracketed && (c == ':' || c == '%'));
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* "NAME://host:port" (item[0..n), trimmed) -> *out. */
static int parse_endpoint(const char *item, size_t n, struct br_listener *out, char *msg,
                          size_t msglen)
{
    char q[QUOTE_MAX];
    const char *sep = NULL;
    for (size_t i = 0; i + 3 <= n; i++) {
        if (memcmp(item + i, "://", 3) == 0) {
            sep = item + i;
            break;
        }
    }
    if (sep == NULL) {
        cfg_set_msg(msg, msglen, "%s is not a listener: expected NAME://host:port",
                cfg_quoted(item, n, q, sizeof q));
        return -1;
    }
    size_t name_len = (size_t)(sep - item);
    if (!valid_listener_name(item, name_len)) {
        cfg_set_msg(msg, msglen, "%s: a listener name has 1 to %d letters, digits, '_' or '-'",
                cfg_quoted(item, n, q, sizeof q), BR_LISTENER_NAME_MAX);
        return -1;
    }
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < name_len; i++) {
        out->name[i] = cfg_to_upper(item[i]);
    }
    const char *rest = sep + 3;
    size_t rest_len = n - name_len - 3;
    const char *host = rest;
    size_t host_len = 0;
    const char *port = NULL;
    bool bracketed = rest_len > 0 && rest[0] == '[';
    if (bracketed) {
        const char *close = memchr(rest, ']', rest_len);
        if (close == NULL || (size_t)(close - rest) + 1 >= rest_len || close[1] != ':') {
            cfg_set_msg(msg, msglen, "%s: expected [IPv6 address]:port", cfg_quoted(item, n, q, sizeof q));
            return -1;
        }
        host = rest + 1;
        host_len = (size_t)(close - host);
        port = close + 2;
    } else {
        const char *colon = NULL;
        for (size_t i = 0; i < rest_len; i++) {
            if (rest[i] == ':') {
                colon = rest + i;
            }
        }
        if (colon == NULL) {
            cfg_set_msg(msg, msglen, "%s: expected NAME://host:port", cfg_quoted(item, n, q, sizeof q));
            return -1;
        }
        host_len = (size_t)(colon - rest);
        if (memchr(rest, ':', host_len) != NULL) {
            cfg_set_msg(msg, msglen, "%s: an IPv6 address goes in brackets: [::1]:9092",
                    cfg_quoted(item, n, q, sizeof q));
            return -1;
        }
        port = colon + 1;
    }
    if (!valid_host(host, host_len, bracketed)) {
        cfg_set_msg(msg, msglen, "%s: invalid host", cfg_quoted(item, n, q, sizeof q));
        return -1;
    }
    memcpy(out->host, host, host_len);
    out->host[host_len] = '\0';
    size_t port_len = (size_t)(item + n - port);
    uint64_t p = 0;
    if (port_len > 5 || !br_num_parse_u64(port, port_len, 65535, &p)) {
        cfg_set_msg(msg, msglen, "%s: the port must be a number from 0 to 65535",
                cfg_quoted(item, n, q, sizeof q));
        return -1;
    }
    out->port = (uint16_t)p;
    return 0;
}

/* A comma list of endpoints (empty items skipped, as Kafka's parseCsvList
 * does); Kafka's rules: different non-zero ports and, for Kafka listeners
 * (unique_names), different names. */
static int parse_listener_list(struct load *ld, enum br_config_key k, const char *s,
                               bool unique_names, struct br_listener *out, size_t *n_out)
{
    char msg[256];
    size_t n = 0;
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        const char *item = p;
        while (len > 0 && (unsigned char)*item <= ' ') {
            item++;
            len--;
        }
        while (len > 0 && (unsigned char)item[len - 1] <= ' ') {
            len--;
        }
        if (len > 0) {
            if (n == BR_CONFIG_MAX_LISTENERS) {
                return cfg_key_error(ld, k, "more than %d listeners", BR_CONFIG_MAX_LISTENERS);
            }
            if (parse_endpoint(item, len, &out[n], msg, sizeof msg) != 0) {
                return cfg_key_error(ld, k, "%s", msg);
            }
            for (size_t i = 0; i < n; i++) {
                if (unique_names && strcmp(out[i].name, out[n].name) == 0) {
                    return cfg_key_error(ld, k, "each listener must have a different name (%s)",
                                     out[n].name);
                }
                if (out[n].port != 0 && out[i].port == out[n].port) {
                    return cfg_key_error(ld, k, "each listener must have a different port (%u)",
                                     (unsigned)out[n].port);
                }
            }
            n++;
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    *n_out = n;
    return 0;
}

/* Kafka's security protocols, by their ids (enum br_security_protocol). */
static const char *const security_protocols[] = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"};

struct protocol_map {
    char name[BR_CONFIG_MAX_LISTENERS * 2][BR_LISTENER_NAME_MAX + 1];
    size_t protocol[BR_CONFIG_MAX_LISTENERS * 2]; /* index into security_protocols */
    size_t n;
};

/* Index of a security protocol name (any case), or -1. */
static int security_protocol(const char *p, size_t n)
{
    for (size_t i = 0; i < sizeof security_protocols / sizeof security_protocols[0]; i++) {
        if (strlen(security_protocols[i]) == n && strncasecmp(security_protocols[i], p, n) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static int parse_protocol_map(struct load *ld, struct protocol_map *m)
{
    enum br_config_key k = BR_CFG_LISTENER_SECURITY_PROTOCOL_MAP;
    char q[QUOTE_MAX];
    const char *p = cfg_text_of(ld, k);
    m->n = 0;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        const char *item = p;
        while (len > 0 && (unsigned char)*item <= ' ') {
            item++;
            len--;
        }
        while (len > 0 && (unsigned char)item[len - 1] <= ' ') {
            len--;
        }
        if (len > 0) {
            const char *colon = memchr(item, ':', len);
            if (colon == NULL) {
                return cfg_key_error(ld, k, "%s: expected LISTENER_NAME:SECURITY_PROTOCOL",
                                 cfg_quoted(item, len, q, sizeof q));
            }
            size_t name_len = (size_t)(colon - item);
            size_t proto_len = len - name_len - 1;
            while (name_len > 0 && (unsigned char)item[name_len - 1] <= ' ') {
                name_len--;
            }
            const char *proto = colon + 1;
            while (proto_len > 0 && (unsigned char)*proto <= ' ') {
                proto++;
                proto_len--;
            }
            if (!valid_listener_name(item, name_len)) {
                return cfg_key_error(ld, k, "%s: invalid listener name",
                                 cfg_quoted(item, len, q, sizeof q));
            }
            int sp = security_protocol(proto, proto_len);
            if (sp < 0) {
                char q2[QUOTE_MAX];
                return cfg_key_error(ld, k, "%s: unknown security protocol %s",
                                 cfg_quoted(item, len, q, sizeof q),
                                 cfg_quoted(proto, proto_len, q2, sizeof q2));
            }
            if (m->n == sizeof m->name / sizeof m->name[0]) {
                return cfg_key_error(ld, k, "more than %zu entries",
                                 sizeof m->name / sizeof m->name[0]);
            }
            char *name = m->name[m->n];
            for (size_t i = 0; i < name_len; i++) {
                name[i] = cfg_to_upper(item[i]);
            }
            name[name_len] = '\0';
            for (size_t i = 0; i < m->n; i++) {
                if (strcmp(m->name[i], name) == 0) {
                    return cfg_key_error(ld, k, "listener %s is mapped twice", name);
                }
            }
            m->protocol[m->n] = (size_t)sp;
            m->n++;
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    return 0;
}

/* Each listener of `list` gets its security protocol from the map (the
 * SASL listeners' mechanisms are checked when the broker makes them,
 * security/sasl.c). */
static int assign_protocols(struct load *ld, enum br_config_key k, const struct protocol_map *m,
                            struct br_listener *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < m->n && strcmp(m->name[j], list[i].name) != 0) {
            j++;
        }
        if (j == m->n) {
            return cfg_key_error(ld, k,
                             "listener %s has no security protocol in "
                             "listener.security.protocol.map",
                             list[i].name);
        }
        list[i].security_protocol = (int16_t)m->protocol[j];
    }
    return 0;
}

const char *br_security_protocol_name(int protocol)
{
    if (protocol < 0 || (size_t)protocol >= sizeof security_protocols / sizeof security_protocols[0]) {
        return "UNKNOWN";
    }
    return security_protocols[protocol];
}

/* The https admin listeners' keys: a keystore for any https listener, a
 * truststore for client certificates (admin/server.c reads the files and
 * refuses to start when they are unreadable or the key is not the
 * certificate's). */
static int check_admin_tls(struct load *ld, bool https)
{
    const char *keystore = cfg_text_of(ld, BR_CFG_ADMIN_SSL_KEYSTORE_LOCATION);
    const char *truststore = cfg_text_of(ld, BR_CFG_ADMIN_SSL_TRUSTSTORE_LOCATION);
    const char *auth = cfg_text_of(ld, BR_CFG_ADMIN_SSL_CLIENT_AUTH);
    if (https && (keystore == NULL || keystore[0] == '\0')) {
        return cfg_key_error(ld, BR_CFG_ADMIN_SSL_KEYSTORE_LOCATION,
                             "an https admin listener needs a certificate: set "
                             "admin.ssl.keystore.location to a PEM file holding the key and "
                             "the certificate chain");
    }
    if (strcmp(auth, "none") != 0 && strcmp(auth, "requested") != 0 &&
        strcmp(auth, "required") != 0) {
        return cfg_key_error(ld, BR_CFG_ADMIN_SSL_CLIENT_AUTH,
                             "must be none, requested or required, not %s", auth);
    }
    if (strcmp(auth, "none") != 0 && (truststore == NULL || truststore[0] == '\0')) {
        return cfg_key_error(ld, BR_CFG_ADMIN_SSL_TRUSTSTORE_LOCATION,
                             "admin.ssl.client.auth=%s needs the CA that signs the clients' "
                             "certificates: set admin.ssl.truststore.location to a PEM file",
                             auth);
    }
    return 0;
}

/* max.connections.per.ip.overrides, "host:count,host:count" (Kafka's
 * getMap: items split at ',', each at its last ':'), hosts as IP
 * addresses, stored IPv4-mapped; and Kafka 2.0's rule that
 * max.connections.per.ip may be 0 only with overrides. */
static int parse_ip_overrides(struct load *ld)
{
    struct br_config *c = ld->c;
    const enum br_config_key k = BR_CFG_MAX_CONNECTIONS_PER_IP_OVERRIDES;
    const char *s = cfg_text_of(ld, k);
    c->n_ip_overrides = 0;
    for (const char *p = s; p != NULL && *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        while (len > 0 && (unsigned char)*p <= ' ') {
            p++;
            len--;
        }
        while (len > 0 && (unsigned char)p[len - 1] <= ' ') {
            len--;
        }
        if (len > 0) {
            const char *colon = NULL;
            for (size_t i = 0; i < len; i++) {
                colon = p[i] == ':' ? p + i : colon;
            }
            char host[BR_HOST_MAX + 1];
            const char *h = p;
            size_t host_len = colon != NULL ? (size_t)(colon - p) : 0;
            size_t num_len = colon != NULL ? len - host_len - 1 : 0;
            if (host_len >= 2 && h[0] == '[' && h[host_len - 1] == ']') {
                h++;
                host_len -= 2;
            }
            uint64_t max = 0;
            if (colon == NULL || host_len == 0 || host_len > BR_HOST_MAX || num_len == 0 ||
                !br_num_parse_u64(colon + 1, num_len, INT32_MAX, &max)) {
                return cfg_key_error(ld, k, "\"%.*s\" is not host:count (a count from 0 to %d)",
                                     (int)len, p, INT32_MAX);
            }
            if (c->n_ip_overrides == BR_CONFIG_MAX_IP_OVERRIDES) {
                return cfg_key_error(ld, k, "more than %d overrides", BR_CONFIG_MAX_IP_OVERRIDES);
            }
            memcpy(host, h, host_len);
            host[host_len] = '\0';
            uint8_t *addr = c->ip_override_addr[c->n_ip_overrides];
            struct in_addr v4;
            if (inet_pton(AF_INET, host, &v4) == 1) {
                memset(addr, 0, 10);
                addr[10] = 0xff;
                addr[11] = 0xff;
                memcpy(addr + 12, &v4, 4);
            } else if (inet_pton(AF_INET6, host, addr) != 1) {
                return cfg_key_error(ld, k, "%s: an IP address, not a host name (names are not "
                                     "resolved)", host);
            }
            c->ip_override_max[c->n_ip_overrides++] = (int32_t)max;
        }
        p = comma != NULL ? comma + 1 : NULL;
    }
    if (c->max_connections_per_ip == 0 && c->n_ip_overrides == 0) {
        return cfg_key_error(ld, BR_CFG_MAX_CONNECTIONS_PER_IP,
                             "can be set to zero only if max.connections.per.ip.overrides is set");
    }
    return 0;
}

int cfg_resolve_listeners(struct load *ld)
{
    struct br_config *c = ld->c;
    char q[QUOTE_MAX];
    int rc = parse_listener_list(ld, BR_CFG_LISTENERS, cfg_text_of(ld, BR_CFG_LISTENERS), true,
                                 c->listeners, &c->n_listeners);
    if (rc != 0) {
        return rc;
    }
    if (c->n_listeners == 0) {
        return cfg_key_error(ld, BR_CFG_LISTENERS, "no listener given");
    }
    struct protocol_map map;
    rc = parse_protocol_map(ld, &map);
    if (rc == 0) {
        rc = assign_protocols(ld, BR_CFG_LISTENERS, &map, c->listeners, c->n_listeners);
    }
    if (rc != 0) {
        return rc;
    }

    if (br_config_is_set(c, BR_CFG_ADVERTISED_LISTENERS)) {
        rc = parse_listener_list(ld, BR_CFG_ADVERTISED_LISTENERS,
                                 c->raw[BR_CFG_ADVERTISED_LISTENERS], true, c->advertised_listeners,
                                 &c->n_advertised_listeners);
        if (rc != 0) {
            return rc;
        }
        if (c->n_advertised_listeners == 0) {
            return cfg_key_error(ld, BR_CFG_ADVERTISED_LISTENERS, "no listener given");
        }
        for (size_t i = 0; i < c->n_advertised_listeners; i++) {
            const struct br_listener *a = &c->advertised_listeners[i];
            if (strcmp(a->host, "0.0.0.0") == 0 || strcmp(a->host, "::") == 0) {
                return cfg_key_error(ld, BR_CFG_ADVERTISED_LISTENERS,
                                 "cannot advertise the non-routable address %s", a->host);
            }
            size_t j = 0;
            while (j < c->n_listeners && strcmp(c->listeners[j].name, a->name) != 0) {
                j++;
            }
            if (j == c->n_listeners) {
                return cfg_key_error(ld, BR_CFG_ADVERTISED_LISTENERS,
                                 "listener %s is not one of listeners", a->name);
            }
            c->advertised_listeners[i].security_protocol = c->listeners[j].security_protocol;
        }
    } else {
        memcpy(c->advertised_listeners, c->listeners, sizeof c->listeners);
        c->n_advertised_listeners = c->n_listeners;
    }

    /* the inter-broker listener: named, or the one named after the protocol */
    bool named = br_config_is_set(c, BR_CFG_INTER_BROKER_LISTENER_NAME);
    if (named && br_config_is_set(c, BR_CFG_SECURITY_INTER_BROKER_PROTOCOL)) {
        return cfg_key_error(ld, BR_CFG_INTER_BROKER_LISTENER_NAME,
                         "set only one of inter.broker.listener.name and "
                         "security.inter.broker.protocol");
    }
    const char *proto = cfg_text_of(ld, BR_CFG_SECURITY_INTER_BROKER_PROTOCOL);
    int sp = security_protocol(proto, strlen(proto));
    if (sp < 0) {
        return cfg_key_error(ld, BR_CFG_SECURITY_INTER_BROKER_PROTOCOL, "unknown security protocol %s",
                         Q(proto, q));
    }
    enum br_config_key ik =
        named ? BR_CFG_INTER_BROKER_LISTENER_NAME : BR_CFG_SECURITY_INTER_BROKER_PROTOCOL;
    const char *name = named ? c->raw[BR_CFG_INTER_BROKER_LISTENER_NAME] : security_protocols[sp];
    size_t name_len = strlen(name);
    if (!valid_listener_name(name, name_len)) {
        return cfg_key_error(ld, ik, "%s is not a listener name", Q(name, q));
    }
    for (size_t i = 0; i < name_len; i++) {
        c->inter_broker_listener_name[i] = cfg_to_upper(name[i]);
    }
    c->inter_broker_listener_name[name_len] = '\0';
    size_t j = 0;
    while (j < c->n_advertised_listeners &&
           strcmp(c->advertised_listeners[j].name, c->inter_broker_listener_name) != 0) {
        j++;
    }
    if (j == c->n_advertised_listeners) {
        return cfg_key_error(ld, ik,
                         "the inter-broker listener %s must be one of advertised.listeners "
                         "(set inter.broker.listener.name)",
                         c->inter_broker_listener_name);
    }
    /* brokers authenticate to a SASL inter-broker listener with
     * sasl.mechanism.inter.broker.protocol (Kafka 2.0's KafkaConfig:
     * GSSAPI by default, which is not there) */
    int16_t isp = c->advertised_listeners[j].security_protocol;
    const char *mech = c->raw[BR_CFG_SASL_MECHANISM_INTER_BROKER_PROTOCOL];
    if ((isp == BR_SECURITY_SASL_PLAINTEXT || isp == BR_SECURITY_SASL_SSL) &&
        (mech == NULL || (strcmp(mech, "PLAIN") != 0 && strcmp(mech, "SCRAM-SHA-256") != 0 &&
                          strcmp(mech, "SCRAM-SHA-512") != 0))) {
        return cfg_key_error(ld, BR_CFG_SASL_MECHANISM_INTER_BROKER_PROTOCOL,
                             "the inter-broker listener %s uses %s: brokers authenticate to it "
                             "with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (%s%s; GSSAPI, "
                             "Kafka's default, is not there)",
                             c->inter_broker_listener_name, security_protocols[isp],
                             mech != NULL ? "not " : "unset", mech != NULL ? Q(mech, q) : "");
    }

    /* "0" turns the admin API off, as the empty list does */
    const char *admin = cfg_text_of(ld, BR_CFG_ADMIN_LISTENERS);
    rc = strcmp(admin, "0") == 0 ? 0
                                 : parse_listener_list(ld, BR_CFG_ADMIN_LISTENERS, admin, false,
                                                       c->admin_listeners, &c->n_admin_listeners);
    if (rc != 0) {
        return rc;
    }
    bool https = false;
    for (size_t i = 0; i < c->n_admin_listeners; i++) {
        if (strcmp(c->admin_listeners[i].name, "HTTPS") == 0) {
            https = true;
        } else if (strcmp(c->admin_listeners[i].name, "HTTP") != 0) {
            return cfg_key_error(ld, BR_CFG_ADMIN_LISTENERS,
                             "admin listeners are http://host:port or https://host:port, not %s://",
                             c->admin_listeners[i].name);
        }
    }
    rc = check_admin_tls(ld, https);
    return rc != 0 ? rc : parse_ip_overrides(ld);
}
