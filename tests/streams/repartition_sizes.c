/*
 * A topology of two parts for streams-integration's repartition sizing
 * case: the values of topic A become the keys (select_key) and are counted
 * through the repartition topic APP-rekey-repartition; topic B is copied to
 * B-copy. The runtime must size the repartition topic from A, which feeds
 * it, whatever B's partition count (StreamsPartitionAssignor: a repartition
 * topic takes the largest count of its upstream sources).
 *
 *     repartition_sizes BROKERS A B APP_ID
 *
 * Runs until SIGTERM, then commits and leaves the group (the examples'
 * example_run, client/streams/examples/example.h).
 */
#include <samsa/streams.h>

#include <stdio.h>

#include "example.h"

static int value_as_key(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    return samsa_st_emit(out, rec->value, rec->value);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        (void)fprintf(stderr, "usage: %s BROKERS A B APP_ID\n", argv[0]);
        return 2;
    }
    samsa_st_topology *t = samsa_st_topology_new();
    const char *a = argv[2];
    const char *b = argv[3];
    samsa_st_table *counts = samsa_st_count(
        samsa_st_group_by(samsa_st_stream_from(t, &a, 1), value_as_key, NULL, "rekey"), "counts");
    char copy[256];
    (void)snprintf(copy, sizeof copy, "%s-copy", b);
    int built = samsa_st_to(samsa_st_to_stream(counts), "counts-out");
    if (built == SAMSA_OK) {
        built = samsa_st_to(samsa_st_stream_from(t, &b, 1), copy);
    }
    return example_run("repartition_sizes", t, built, argv[1], argv[4], 200, NULL, 0);
}
