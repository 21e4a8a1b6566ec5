/*
 * samsa-broker: Kafka's sasl.jaas.config value, one JAAS login module
 * entry: `<LoginModuleClass> <flag> key="value" ... ;` (Kafka's
 * JaasConfig.java at 2.0.0: the class, one of required, requisite,
 * sufficient or optional, then options whose values are quoted strings or
 * bare words; `;` ends the entry). A quoted value may hold \" and \\.
 * @locality any thread
 */
#ifndef SAMSA_BROKER_SECURITY_JAAS_H
#define SAMSA_BROKER_SECURITY_JAAS_H

#include <stddef.h>

#include <samsa-protocol/err.h>

struct br_jaas_option {
    char *key;   /* owned */
    char *value; /* owned */
};

struct br_jaas {
    char *module; /* the login module's class, owned */
    struct br_jaas_option *options;
    size_t n_options;
};

/* Parses text (NUL-terminated) into *out, which br_jaas_free releases
 * whatever the result. 0, or -1 with err saying what is wrong (never the
 * values: they hold passwords). */
KP_MUST_CHECK int br_jaas_parse(const char *text, struct br_jaas *out, char *err, size_t errlen);
void br_jaas_free(struct br_jaas *j);

#endif
