/*
 * samsa-broker: what a broker's connections to the other brokers speak
 * (Kafka 2.0's ChannelBuilders.clientChannelBuilder for the inter-broker
 * listener, core/src/main/scala/kafka/controller/ControllerChannelManager.scala
 * and ReplicaFetcherBlockingSend.scala): the security protocol of the
 * listener inter.broker.listener.name (or security.inter.broker.protocol)
 * names. SSL and SASL_SSL: TLS as a client with that listener's ssl.* keys
 * (its keystore is the client certificate a server with ssl.client.auth
 * asks for, its truststore checks the server's, and
 * ssl.endpoint.identification.algorithm=https its name). SASL_PLAINTEXT and
 * SASL_SSL: sasl.mechanism.inter.broker.protocol with the username and
 * password of that listener's JAAS line
 * (listener.name.<l>.<mechanism>.sasl.jaas.config, else sasl.jaas.config),
 * as Kafka's LoginManager takes them.
 * @locality the main thread at start-up; the result is read by the reactor
 * and the controller's senders
 */
#ifndef SAMSA_BROKER_SECURITY_INTERBROKER_H
#define SAMSA_BROKER_SECURITY_INTERBROKER_H

#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "config/config.h"
#include "reactor/net.h"
#include "reactor/net_tls.h"

struct br_interbroker;

/* Kafka's ssl.* keys of listener l, with its listener.name.<l>. overrides
 * (pointers into c). */
void br_listener_tls_settings(const struct br_config *c, const char *l,
                              struct br_tls_settings *out);

/* The inter-broker security of c for broker node_id: 0 (*out set; its
 * br_interbroker_security is all zero for PLAINTEXT), or -1 with err
 * (a keystore that does not read, no username or password...). */
KP_MUST_CHECK int br_interbroker_new(const struct br_config *c, int32_t node_id,
                                     struct br_interbroker **out, char *err, size_t errlen);
const struct br_outbound_security *br_interbroker_security(const struct br_interbroker *ib);
/* NULL is a no-op; after the net and the controller that used it. */
void br_interbroker_free(struct br_interbroker *ib);

#endif
