/*
 * Interactive queries for streams-integration (and ThreadSanitizer): a word
 * count runs on a thread of its own (samsa_st_app_poll in a loop) while the
 * main thread asks its store for every word with samsa_st_app_query, again
 * and again, until each count equals the one expected. Each answer must be
 * a count that never goes down and never exceeds the expected one.
 *
 *     query_while_running BROKERS INPUT OUTPUT APP_ID [state.dir=DIR] < EXPECTED
 *
 * INPUT's lines are words separated by single spaces; EXPECTED has one
 * "word count" line per word. Prints "queried N times, W words" and exits 0
 * when every count was reached within 60 s, 1 otherwise.
 */
#include <samsa/streams.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_WORDS 256

static atomic_int stop_runner;

static int split(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    const char *p = rec->value.data;
    size_t n = rec->value.len;
    size_t start = 0;
    for (size_t i = 0; p != NULL && i <= n; i++) {
        if (i == n || p[i] == ' ') {
            if (i > start) {
                struct samsa_st_bytes w = {p + start, i - start};
                int err = samsa_st_emit(out, w, w);
                if (err != SAMSA_OK) {
                    return err;
                }
            }
            start = i + 1;
        }
    }
    return SAMSA_OK;
}

static void *runner(void *opaque)
{
    samsa_st_app *app = opaque;
    intptr_t err = SAMSA_OK;
    while (!atomic_load(&stop_runner) && err >= 0) {
        err = samsa_st_app_poll(app, 100);
    }
    /* LMDB's write transactions end on the thread that began them: the
     * main thread destroys the app */
    if (err >= 0) {
        err = samsa_st_app_commit(app);
    }
    return (void *)err;
}

static double now_s(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        (void)fprintf(stderr, "usage: %s BROKERS INPUT OUTPUT APP_ID [state.dir=DIR]\n",
                      argv[0]);
        return 2;
    }
    static char words[MAX_WORDS][64];
    long long want[MAX_WORDS];
    long long seen[MAX_WORDS];
    size_t n = 0;
    char count[32];
    while (n < MAX_WORDS && scanf("%63s %31s", words[n], count) == 2) {
        char *end = NULL;
        want[n] = strtoll(count, &end, 10);
        if (end == count || *end != '\0') {
            (void)fprintf(stderr, "not a count: %s\n", count);
            return 2;
        }
        seen[n] = 0;
        n++;
    }
    char errstr[512] = "out of memory";
    samsa_st_topology *t = samsa_st_topology_new();
    const char *input = argv[2];
    int built = samsa_st_to(
        samsa_st_to_stream(samsa_st_count(
            samsa_st_group_by_key(samsa_st_flat_map(samsa_st_stream_from(t, &input, 1), split,
                                                    NULL),
                                  "counts"),
            "counts")),
        argv[3]);
    samsa_conf *conf = samsa_conf_new();
    samsa_st_app *app = NULL;
    if (built == SAMSA_OK && conf != NULL &&
        samsa_conf_set(conf, "bootstrap.servers", argv[1], errstr, sizeof errstr) == SAMSA_OK) {
        app = samsa_st_app_new(t, argv[4], conf, 200, errstr, sizeof errstr);
    }
    samsa_conf_destroy(conf);
    if (app != NULL && argc > 5 && strncmp(argv[5], "state.dir=", 10) == 0 &&
        samsa_st_app_set_state_dir(app, argv[5] + 10) != SAMSA_OK) {
        (void)snprintf(errstr, sizeof errstr, "state.dir refused");
        samsa_st_app_destroy(app);
        app = NULL;
    }
    pthread_t th;
    if (app == NULL || pthread_create(&th, NULL, runner, app) != 0) {
        (void)fprintf(stderr, "query_while_running: %s\n", errstr);
        samsa_st_app_destroy(app);
        samsa_st_topology_destroy(t);
        return 1;
    }
    int rc = 1;
    unsigned long queries = 0;
    double deadline = now_s() + 60;
    while (now_s() < deadline) {
        size_t reached = 0;
        for (size_t i = 0; i < n; i++) {
            void *v = NULL;
            size_t len = 0;
            struct samsa_st_bytes key = {words[i], strlen(words[i])};
            int found = samsa_st_app_query(app, "counts", key, &v, &len);
            queries++;
            if (found < 0 || (found == 1 && len != 8)) {
                (void)fprintf(stderr, "query %s: %d (%zu bytes)\n", words[i], found, len);
                free(v);
                goto out;
            }
            if (found == 1) {
                int64_t c64 = 0;
                (void)samsa_st_long_decode((struct samsa_st_bytes){v, len}, &c64);
                long long c = (long long)c64;
                if (c < seen[i] || c > want[i]) {
                    (void)fprintf(stderr, "%s: %lld after %lld, expected at most %lld\n",
                                  words[i], c, seen[i], want[i]);
                    free(v);
                    goto out;
                }
                seen[i] = c;
            }
            free(v);
            reached += seen[i] == want[i] ? 1 : 0;
        }
        if (reached == n) {
            rc = 0;
            break;
        }
    }
    if (rc != 0) {
        (void)fprintf(stderr, "not every count reached in 60 s\n");
    }
out:
    atomic_store(&stop_runner, 1);
    void *ret = NULL;
    (void)pthread_join(th, &ret);
    if ((intptr_t)ret < 0) {
        (void)fprintf(stderr, "the app stopped: %s\n", samsa_err_str((int)(intptr_t)ret));
        rc = 1;
    }
    (void)printf("queried %lu times, %zu words\n", queries, n);
    samsa_st_app_destroy(app);
    samsa_st_topology_destroy(t);
    return rc;
}
