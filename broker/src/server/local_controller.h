/*
 * samsa-broker: the controller of a cluster of one. A standalone broker is
 * its own controller: what a cluster's controller sends its brokers in
 * UpdateMetadata (the live brokers, and each partition's leader, ISR and
 * replicas), this broker hands its own metadata cache in process, from
 * the topics it hosts. So the metadata cache describes the cluster in both
 * modes, and what reads it (Metadata, the topic-name collision rule, the
 * broker count of CreateTopics, the admin feed) has one path.
 *
 * Standalone calls it where its topics change: once at start (every topic
 * loaded), and after a topic is made, grown or removed.
 *
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_SERVER_LOCAL_CONTROLLER_H
#define SAMSA_BROKER_SERVER_LOCAL_CONTROLLER_H

#include <samsa-protocol/err.h>

struct br_server;
struct br_topic;

/* This broker becomes the cache's controller and only live broker, and
 * every hosted topic is published. Returns 0 or KP_E_NOMEM. */
KP_MUST_CHECK int br_local_controller_start(struct br_server *b);

/* Publishes topic `name` as this broker hosts it now: t, each partition
 * led by this broker, or, with t NULL (it hosts the topic no more), the
 * topic gone from the cache. Returns 0 or KP_E_NOMEM (the cache may lag
 * until the next change of the topic). */
KP_MUST_CHECK int br_local_controller_publish(struct br_server *b, const char *name,
                                              const struct br_topic *t);

#endif
