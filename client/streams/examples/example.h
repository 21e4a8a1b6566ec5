/*
 * What the examples share: once main() built its topology, example_run()
 * checks it, makes the libsamsa configuration from BROKERS and KEY=VALUE
 * arguments, starts the app and runs it until SIGINT or SIGTERM (Kafka's
 * demos close their KafkaStreams from a shutdown hook the same way). Kept
 * next to the examples, so that one copied out builds with this header and
 * `pkg-config --cflags --libs samsa-streams`.
 */
#ifndef SAMSA_STREAMS_EXAMPLE_H
#define SAMSA_STREAMS_EXAMPLE_H

#include <samsa/streams.h>

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* The word count's flat_map (wordcount.c, and ci/bench's word count): Kafka's
 * WordCountDemo splits on \W+ after toLowerCase, so runs of letters, digits
 * and '_' are words, each emitted with itself as key and value. */
static inline int example_split_words(const struct samsa_st_record *rec, samsa_st_emitter *out,
                                      void *opaque)
{
    (void)opaque;
    const char *line = rec->value.data;
    size_t n = rec->value.len;
    char word[256];
    size_t len = 0;
    for (size_t i = 0; line != NULL && i <= n; i++) {
        unsigned char c = i < n ? (unsigned char)line[i] : ' ';
        if (isalnum(c) || c == '_') {
            if (len < sizeof word) {
                word[len++] = (char)tolower(c);
            }
            continue;
        }
        if (len > 0) {
            struct samsa_st_bytes w = {word, len};
            int err = samsa_st_emit(out, w, w);
            if (err != SAMSA_OK) {
                return err;
            }
            len = 0;
        }
    }
    return SAMSA_OK;
}

static volatile int example_stop;

static void example_on_signal(int sig)
{
    (void)sig;
    example_stop = 1;
}

/*
 * Runs t (owned: destroyed here), whose building ended with built (the
 * result of the last samsa_st_to: an error stops here, said with the
 * topology's sentence), as application app_id against brokers,
 * committing every commit_ms; pairs[0..count) are KEY=VALUE libsamsa
 * settings, but state.dir=DIR, which keeps the stores in LMDB files under
 * DIR. Prints "NAME: running" once started and, when stopped, what it
 * processed, restored and dropped as late. Returns main's exit status: 0
 * after a clean stop, 2 for a pair that is not a setting, 1 for any other
 * failure (said on stderr).
 */
static inline int example_run(const char *name, samsa_st_topology *t, int built,
                              const char *brokers, const char *app_id, int64_t commit_ms,
                              char **pairs, int count)
{
    const char *msg = "out of memory";
    if (t == NULL || built != SAMSA_OK || samsa_st_topology_error(t, &msg) != SAMSA_OK) {
        if (t != NULL && samsa_st_topology_error(t, &msg) == SAMSA_OK) {
            msg = samsa_err_str(built);
        }
        (void)fprintf(stderr, "%s: topology: %s\n", name, msg);
        samsa_st_topology_destroy(t);
        return 1;
    }
    char errstr[512] = "out of memory";
    const char *state_dir = NULL;
    int rc = 0;
    samsa_conf *conf = samsa_conf_new();
    if (conf == NULL ||
        samsa_conf_set(conf, "bootstrap.servers", brokers, errstr, sizeof errstr) != SAMSA_OK) {
        rc = 1;
    }
    for (int i = 0; rc == 0 && i < count; i++) {
        char *eq = strchr(pairs[i], '=');
        if (eq == NULL) {
            (void)snprintf(errstr, sizeof errstr, "not KEY=VALUE: %s", pairs[i]);
            rc = 2;
            break;
        }
        *eq = '\0';
        if (strcmp(pairs[i], "state.dir") == 0) {
            state_dir = eq + 1;
        } else if (samsa_conf_set(conf, pairs[i], eq + 1, errstr, sizeof errstr) != SAMSA_OK) {
            rc = 2;
        }
    }
    samsa_st_app *app =
        rc == 0 ? samsa_st_app_new(t, app_id, conf, commit_ms, errstr, sizeof errstr) : NULL;
    samsa_conf_destroy(conf);
    rc = rc == 0 && app == NULL ? 1 : rc;
    if (app != NULL && state_dir != NULL) {
        int err = samsa_st_app_set_state_dir(app, state_dir);
        if (err != SAMSA_OK) {
            const char *why = samsa_st_app_last_error(app);
            (void)snprintf(errstr, sizeof errstr, "state.dir: %s",
                           why[0] != '\0' ? why : samsa_err_str(err));
            rc = 1;
        }
    }
    if (rc != 0) {
        (void)fprintf(stderr, "%s: %s\n", name, errstr);
        samsa_st_app_destroy(app);
        samsa_st_topology_destroy(t);
        return rc;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = example_on_signal;
    (void)sigaction(SIGINT, &sa, NULL);
    (void)sigaction(SIGTERM, &sa, NULL);
    (void)fprintf(stderr, "%s: running\n", name);
    int err = samsa_st_app_run(app, &example_stop);
    (void)fprintf(stderr, "%s: processed %llu restored %llu dropped %llu skipped %llu (%s)\n",
                  name, (unsigned long long)samsa_st_app_processed(app),
                  (unsigned long long)samsa_st_app_restored(app),
                  (unsigned long long)samsa_st_app_dropped_late(app),
                  (unsigned long long)samsa_st_app_skipped(app), samsa_err_str(err));
    samsa_st_app_destroy(app);
    samsa_st_topology_destroy(t);
    return err == SAMSA_OK ? 0 : 1;
}

#endif
