/* samsa-broker: the security of a broker's connections to the other
 * brokers (see interbroker.h). */
#include "security/interbroker.h"

#include "security/jaas.h"
#include "security/sasl_client.h"

#include <samsa-protocol/alloc.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct br_interbroker {
    struct br_tls_ctx *tls;
    struct br_sasl_login *login;
    struct br_outbound_security sec;
};

void br_listener_tls_settings(const struct br_config *c, const char *l,
                              struct br_tls_settings *out)
{
    *out = (struct br_tls_settings){
        .listener = l,
        .keystore_type = br_config_listener_value(c, l, BR_CFG_SSL_KEYSTORE_TYPE),
        .keystore_location = br_config_listener_value(c, l, BR_CFG_SSL_KEYSTORE_LOCATION),
        .keystore_password = br_config_listener_value(c, l, BR_CFG_SSL_KEYSTORE_PASSWORD),
        .keystore_key = br_config_listener_value(c, l, BR_CFG_SSL_KEYSTORE_KEY),
        .keystore_chain = br_config_listener_value(c, l, BR_CFG_SSL_KEYSTORE_CERTIFICATE_CHAIN),
        .key_password = br_config_listener_value(c, l, BR_CFG_SSL_KEY_PASSWORD),
        .truststore_type = br_config_listener_value(c, l, BR_CFG_SSL_TRUSTSTORE_TYPE),
        .truststore_location = br_config_listener_value(c, l, BR_CFG_SSL_TRUSTSTORE_LOCATION),
        .truststore_password = br_config_listener_value(c, l, BR_CFG_SSL_TRUSTSTORE_PASSWORD),
        .truststore_certificates =
            br_config_listener_value(c, l, BR_CFG_SSL_TRUSTSTORE_CERTIFICATES),
        .client_auth = br_config_listener_value(c, l, BR_CFG_SSL_CLIENT_AUTH),
        .enabled_protocols = br_config_listener_value(c, l, BR_CFG_SSL_ENABLED_PROTOCOLS),
        .cipher_suites = br_config_listener_value(c, l, BR_CFG_SSL_CIPHER_SUITES),
        .endpoint_identification =
            br_config_listener_value(c, l, BR_CFG_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM),
    };
}

/* The broker's own login from the listener's JAAS line. */
static int make_login(const struct br_config *c, const char *l, int32_t node_id,
                      struct br_interbroker *ib, char *err, size_t errlen)
{
    const char *mech = c->raw[BR_CFG_SASL_MECHANISM_INTER_BROKER_PROTOCOL];
    const char *text = br_config_listener_mechanism_value(c, l, mech, BR_CFG_SASL_JAAS_CONFIG);
    if (text == NULL) {
        (void)snprintf(err, errlen,
                       "the inter-broker listener %s is SASL: its JAAS line "
                       "(listener.name.%s.%s.sasl.jaas.config) must give this broker's "
                       "username and password",
                       l, l, mech);
        return -1;
    }
    struct br_jaas j;
    char jerr[256];
    if (br_jaas_parse(text, &j, jerr, sizeof jerr) != 0) {
        br_jaas_free(&j);
        (void)snprintf(err, errlen, "the inter-broker listener %s: sasl.jaas.config: %s", l, jerr);
        return -1;
    }
    const char *user = NULL;
    const char *password = NULL;
    for (size_t i = 0; i < j.n_options; i++) {
        if (strcmp(j.options[i].key, "username") == 0) {
            user = j.options[i].value;
        } else if (strcmp(j.options[i].key, "password") == 0) {
            password = j.options[i].value;
        }
    }
    char client_id[48];
    (void)snprintf(client_id, sizeof client_id, "samsa-broker-%" PRId32, node_id);
    int rc = user != NULL && password != NULL
                 ? br_sasl_login_new(mech, user, password, client_id, &ib->login)
                 : KP_E_INVALID_ARG;
    br_jaas_free(&j);
    if (rc != 0) {
        (void)snprintf(err, errlen,
                       "the inter-broker listener %s is SASL: its JAAS line for %s must give "
                       "username=\"...\" and password=\"...\", this broker's own login%s",
                       l, mech, rc == KP_E_NOMEM ? " (out of memory)" : "");
        return -1;
    }
    ib->sec.auth = &br_sasl_client_ops;
    ib->sec.auth_arg = ib->login;
    return 0;
}

int br_interbroker_new(const struct br_config *c, int32_t node_id, struct br_interbroker **out,
                       char *err, size_t errlen)
{
    *out = NULL;
    const char *l = c->inter_broker_listener_name;
    int16_t sp = -1;
    for (size_t i = 0; i < c->n_listeners; i++) {
        if (strcmp(c->listeners[i].name, l) == 0) {
            sp = c->listeners[i].security_protocol;
        }
    }
    struct br_interbroker *ib = kp_calloc(1, sizeof *ib);
    if (ib == NULL) {
        (void)snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (sp == BR_SECURITY_SSL || sp == BR_SECURITY_SASL_SSL) {
        struct br_tls_settings s;
        br_listener_tls_settings(c, l, &s);
        s.client = true;
        if (br_tls_ctx_new(&s, &ib->tls, err, errlen) != 0) {
            br_interbroker_free(ib);
            return -1;
        }
        ib->sec.tls = ib->tls;
    }
    if ((sp == BR_SECURITY_SASL_PLAINTEXT || sp == BR_SECURITY_SASL_SSL) &&
        make_login(c, l, node_id, ib, err, errlen) != 0) {
        br_interbroker_free(ib);
        return -1;
    }
    *out = ib;
    return 0;
}

const struct br_outbound_security *br_interbroker_security(const struct br_interbroker *ib)
{
    return &ib->sec;
}

void br_interbroker_free(struct br_interbroker *ib)
{
    if (ib == NULL) {
        return;
    }
    br_tls_ctx_free(ib->tls);
    br_sasl_login_free(ib->login);
    kp_free(ib);
}
