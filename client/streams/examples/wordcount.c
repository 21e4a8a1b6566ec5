/*
 * Word count, as Kafka's WordCountDemo (streams/examples, Kafka 2.0): the
 * lines of INPUT (a topic, or several separated by commas, which must have
 * the same partition count) split into lower-case words, grouped by word through the
 * repartition topic APP-counts-repartition, counted in the store "counts"
 * (changelog APP-counts-changelog), each new count written to OUTPUT with
 * the word as key and the count as a Java long (8 bytes, big-endian):
 *
 *     samsa-streams-wordcount BROKERS INPUT OUTPUT [APP_ID [COMMIT_MS [KEY=VALUE...]]]
 *     kcat -C -b BROKERS -t OUTPUT -s value='>q' -f '%k %s\n'
 *
 * KEY=VALUE pairs are libsamsa configuration (session.timeout.ms=6000, ...),
 * but state.dir=DIR, which keeps the store in LMDB files under DIR.
 * Runs until SIGINT or SIGTERM, then commits and leaves the group; prints
 * what it processed and restored on stderr.
 */
#include <samsa/streams.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        (void)fprintf(stderr,
                      "usage: %s BROKERS INPUT OUTPUT [APP_ID [COMMIT_MS [KEY=VALUE...]]]\n",
                      argv[0]);
        return 2;
    }
    const char *app_id = argc > 4 ? argv[4] : "wordcount";
    long commit_ms = argc > 5 ? strtol(argv[5], NULL, 10) : 1000;

    char *inputs = strdup(argv[2]);
    const char *topics[16];
    size_t topic_count = 0;
    for (char *p = inputs; p != NULL && topic_count < 16;) {
        topics[topic_count++] = p;
        p = strchr(p, ',');
        if (p != NULL) {
            *p++ = '\0';
        }
    }
    samsa_st_topology *t = samsa_st_topology_new();
    samsa_st_stream *lines = samsa_st_stream_from(t, topics, topic_count);
    samsa_st_stream *words = samsa_st_flat_map(lines, example_split_words, NULL);
    samsa_st_table *counts = samsa_st_count(samsa_st_group_by_key(words, "counts"), "counts");
    int built = samsa_st_to(samsa_st_to_stream(counts), argv[3]);
    int rc = example_run("wordcount", t, built, argv[1], app_id, commit_ms, argv + 6,
                         argc > 6 ? argc - 6 : 0);
    free(inputs);
    return rc;
}
