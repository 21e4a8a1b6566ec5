/*
 * samsa-broker: names Kafka gives rules to.
 * @locality any thread
 */
#ifndef SAMSA_BROKER_NAMES_H
#define SAMSA_BROKER_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* The longest topic name Kafka accepts (Topic.MAX_NAME_LENGTH). */
#define BR_TOPIC_MAX 249

/* True when name[0..len) is a valid Kafka topic name: 1 to 249 of
 * [a-zA-Z0-9._-], neither "." nor "..". */
bool br_topic_name_valid(const char *name, size_t len);

#endif
