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

#include <ctype.h>
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

/* Kafka's demo splits on \W+ after toLowerCase: runs of letters, digits
 * and '_' are words. */
static int split_words(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
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

int main(int argc, char **argv)
{
    if (argc < 4) {
        (void)fprintf(stderr, "usage: %s BROKERS INPUT OUTPUT [APP_ID [COMMIT_MS [KEY=VALUE...]]]\n", argv[0]);
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
    samsa_st_stream *words = samsa_st_flat_map(lines, split_words, NULL);
    samsa_st_table *counts = samsa_st_count(samsa_st_group_by_key(words, "counts"), "counts");
    const char *msg = "out of memory";
    if (t == NULL || samsa_st_to(samsa_st_to_stream(counts), argv[3]) != SAMSA_OK) {
        if (t != NULL) {
            (void)samsa_st_topology_error(t, &msg);
        }
        (void)fprintf(stderr, "topology: %s\n", msg);
        samsa_st_topology_destroy(t);
        free(inputs);
        return 1;
    }

    char errstr[512];
    samsa_conf *conf = samsa_conf_new();
    if (conf == NULL ||
        samsa_conf_set(conf, "bootstrap.servers", argv[1], errstr, sizeof errstr) != SAMSA_OK) {
        (void)fprintf(stderr, "config: %s\n", errstr);
        return 1;
    }
    const char *state_dir = NULL;
    for (int i = 6; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq == NULL) {
            (void)fprintf(stderr, "not KEY=VALUE: %s\n", argv[i]);
            return 2;
        }
        *eq = '\0';
        if (strcmp(argv[i], "state.dir") == 0) {
            state_dir = eq + 1;
        } else if (samsa_conf_set(conf, argv[i], eq + 1, errstr, sizeof errstr) != SAMSA_OK) {
            (void)fprintf(stderr, "config: %s\n", errstr);
            return 2;
        }
    }
    samsa_st_app *app = samsa_st_app_new(t, app_id, conf, commit_ms, errstr, sizeof errstr);
    samsa_conf_destroy(conf);
    if (app != NULL && state_dir != NULL) {
        int err = samsa_st_app_set_state_dir(app, state_dir);
        if (err != SAMSA_OK) {
            (void)snprintf(errstr, sizeof errstr, "state.dir: %s", samsa_err_str(err));
            samsa_st_app_destroy(app);
            app = NULL;
        }
    }
    if (app == NULL) {
        (void)fprintf(stderr, "wordcount: %s\n", errstr);
        samsa_st_topology_destroy(t);
        free(inputs);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    (void)sigaction(SIGINT, &sa, NULL);
    (void)sigaction(SIGTERM, &sa, NULL);
    (void)fprintf(stderr, "wordcount: running\n");
    int err = samsa_st_app_run(app, &stop_flag);
    (void)fprintf(stderr, "wordcount: processed %llu restored %llu (%s)\n",
                  (unsigned long long)samsa_st_app_processed(app),
                  (unsigned long long)samsa_st_app_restored(app), samsa_err_str(err));
    samsa_st_app_destroy(app);
    samsa_st_topology_destroy(t);
    free(inputs);
    return err == SAMSA_OK ? 0 : 1;
}
