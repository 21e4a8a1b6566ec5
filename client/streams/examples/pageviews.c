/*
 * Windowed page-view counts, final results only (Kafka's
 * PageViewUntypedDemo counts views per region in windows; the final-result
 * form is the one of the "Window Final Results" section of Kafka's DSL
 * guide): the views of INPUT (key: the user, value: the page) are grouped
 * by page through the repartition topic APP-by-page-repartition, counted in
 * tumbling windows of WINDOW_MS with a grace of GRACE_MS (store
 * "views", changelog APP-views-changelog), and each window's final count is
 * written to OUTPUT once the window closed (suppress until the window
 * closes, buffer store "views-final"), as the key "PAGE@WINDOW_START" and
 * the count in decimal:
 *
 *     samsa-streams-pageviews BROKERS INPUT OUTPUT [APP_ID [WINDOW_MS [GRACE_MS [KEY=VALUE...]]]]
 *     kcat -C -b BROKERS -t OUTPUT -f '%k %s\n'
 *
 * A window closes when stream time (the latest view timestamp its task saw)
 * passes its end by the grace; views later than that are dropped and
 * counted. Runs until SIGINT or SIGTERM, then commits and leaves the group;
 * prints what it processed and dropped on stderr.
 */
#include <samsa/streams.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"

/* The page (the value) becomes the key. */
static int by_page(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    return samsa_st_emit(out, rec->value, rec->value);
}

/* (page ‖ window start, Java long) -> ("PAGE@START", "COUNT"). */
static int readable(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    struct samsa_st_bytes page;
    int64_t start = 0;
    int64_t count = 0;
    if (!samsa_st_windowed_key_split(rec->key, &page, &start) ||
        !samsa_st_long_decode(rec->value, &count)) {
        return SAMSA_ERR_INVALID_ARG;
    }
    char key[512];
    char value[32];
    int kn = snprintf(key, sizeof key, "%.*s@%lld", (int)page.len, (const char *)page.data,
                      (long long)start);
    int vn = snprintf(value, sizeof value, "%lld", (long long)count);
    struct samsa_st_bytes k = {key, kn > 0 && (size_t)kn < sizeof key ? (size_t)kn : 0};
    struct samsa_st_bytes v = {value, vn > 0 ? (size_t)vn : 0};
    return samsa_st_emit(out, k, v);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        (void)fprintf(stderr,
                      "usage: %s BROKERS INPUT OUTPUT [APP_ID [WINDOW_MS [GRACE_MS "
                      "[late.topic=TOPIC] [KEY=VALUE...]]]]\n",
                      argv[0]);
        return 2;
    }
    const char *app_id = argc > 4 ? argv[4] : "pageviews";
    struct samsa_st_windows w = {
        .size_ms = argc > 5 ? strtoll(argv[5], NULL, 10) : 60000,
        .grace_ms = argc > 6 ? strtoll(argv[6], NULL, 10) : 10000,
    };
    w.advance_ms = w.size_ms;
    /* late.topic=TOPIC: views too late for their window go there, as they came */
    int first_pair = 7;
    if (argc > first_pair && strncmp(argv[first_pair], "late.topic=", 11) == 0) {
        w.late_topic = argv[first_pair++] + 11;
    }

    samsa_st_topology *t = samsa_st_topology_new();
    const char *input = argv[2];
    samsa_st_grouped *pages =
        samsa_st_group_by(samsa_st_stream_from(t, &input, 1), by_page, NULL, "by-page");
    samsa_st_table *counts = samsa_st_count(samsa_st_windowed_by(pages, &w), "views");
    samsa_st_table *final = samsa_st_suppress_until_window_closes(counts, "views-final");
    int built = samsa_st_to(samsa_st_map(samsa_st_to_stream(final), readable, NULL), argv[3]);
    return example_run("pageviews", t, built, argv[1], app_id, 1000, argv + first_pair,
                       argc > first_pair ? argc - first_pair : 0);
}
