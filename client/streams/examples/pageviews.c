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

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

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
                      "[KEY=VALUE...]]]]\n",
                      argv[0]);
        return 2;
    }
    const char *app_id = argc > 4 ? argv[4] : "pageviews";
    struct samsa_st_windows w = {
        .size_ms = argc > 5 ? strtoll(argv[5], NULL, 10) : 60000,
        .grace_ms = argc > 6 ? strtoll(argv[6], NULL, 10) : 10000,
    };
    w.advance_ms = w.size_ms;

    samsa_st_topology *t = samsa_st_topology_new();
    const char *input = argv[2];
    samsa_st_grouped *pages =
        samsa_st_group_by(samsa_st_stream_from(t, &input, 1), by_page, NULL, "by-page");
    samsa_st_table *counts = samsa_st_count(samsa_st_windowed_by(pages, &w), "views");
    samsa_st_table *final = samsa_st_suppress_until_window_closes(counts, "views-final");
    const char *msg = "out of memory";
    if (t == NULL ||
        samsa_st_to(samsa_st_map(samsa_st_to_stream(final), readable, NULL), argv[3]) != SAMSA_OK) {
        if (t != NULL) {
            (void)samsa_st_topology_error(t, &msg);
        }
        (void)fprintf(stderr, "topology: %s\n", msg);
        samsa_st_topology_destroy(t);
        return 1;
    }

    char errstr[512];
    samsa_conf *conf = samsa_conf_new();
    if (conf == NULL ||
        samsa_conf_set(conf, "bootstrap.servers", argv[1], errstr, sizeof errstr) != SAMSA_OK) {
        (void)fprintf(stderr, "config: %s\n", conf == NULL ? "out of memory" : errstr);
        samsa_conf_destroy(conf);
        samsa_st_topology_destroy(t);
        return 1;
    }
    for (int i = 7; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq == NULL) {
            (void)fprintf(stderr, "not KEY=VALUE: %s\n", argv[i]);
            return 2;
        }
        *eq = '\0';
        if (samsa_conf_set(conf, argv[i], eq + 1, errstr, sizeof errstr) != SAMSA_OK) {
            (void)fprintf(stderr, "config: %s\n", errstr);
            return 2;
        }
    }
    samsa_st_app *app = samsa_st_app_new(t, app_id, conf, 1000, errstr, sizeof errstr);
    samsa_conf_destroy(conf);
    if (app == NULL) {
        (void)fprintf(stderr, "pageviews: %s\n", errstr);
        samsa_st_topology_destroy(t);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    (void)sigaction(SIGINT, &sa, NULL);
    (void)sigaction(SIGTERM, &sa, NULL);
    (void)fprintf(stderr, "pageviews: running\n");
    int err = samsa_st_app_run(app, &stop_flag);
    (void)fprintf(stderr, "pageviews: processed %llu dropped %llu (%s)\n",
                  (unsigned long long)samsa_st_app_processed(app),
                  (unsigned long long)samsa_st_app_dropped_late(app), samsa_err_str(err));
    samsa_st_app_destroy(app);
    samsa_st_topology_destroy(t);
    return err == SAMSA_OK ? 0 : 1;
}
