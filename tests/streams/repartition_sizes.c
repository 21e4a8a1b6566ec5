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
 * Runs until SIGTERM, then commits and leaves the group.
 */
#include <samsa/streams.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile int stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

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
    const char *msg = "out of memory";
    if (t == NULL || samsa_st_to(samsa_st_to_stream(counts), "counts-out") != SAMSA_OK ||
        samsa_st_to(samsa_st_stream_from(t, &b, 1), copy) != SAMSA_OK) {
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
    samsa_st_app *app = samsa_st_app_new(t, argv[4], conf, 200, errstr, sizeof errstr);
    samsa_conf_destroy(conf);
    if (app == NULL) {
        (void)fprintf(stderr, "repartition_sizes: %s\n", errstr);
        samsa_st_topology_destroy(t);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    (void)sigaction(SIGTERM, &sa, NULL);
    (void)fprintf(stderr, "repartition_sizes: running\n");
    int err = samsa_st_app_run(app, &stop_flag);
    samsa_st_app_destroy(app);
    samsa_st_topology_destroy(t);
    return err == SAMSA_OK ? 0 : 1;
}
