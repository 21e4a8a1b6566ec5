/*
 * secure_roundtrip BOOTSTRAP TOPIC [key=value...]: produces 50 records to
 * TOPIC's partition 0 with libsamsa configured by the key=value properties
 * (security.protocol, ssl.*, sasl.*), reads them back from the beginning
 * with a consumer of the same configuration, and checks each one. Prints
 * "roundtrip ok N" and exits 0; else says why on stderr and exits 1 (2 for
 * a configuration the library refused).
 */
#include <samsa/samsa.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define COUNT 50

struct dr_state {
    int delivered;
    int failed;
    int last_err;
};

static void on_delivery(const struct samsa_delivery *d, void *opaque)
{
    struct dr_state *st = opaque;
    if (d->err == SAMSA_OK) {
        st->delivered++;
    } else {
        st->failed++;
        st->last_err = d->err;
    }
}

static void on_error(int err, const char *reason, void *opaque)
{
    (void)opaque;
    fprintf(stderr, "secure_roundtrip: error callback: %s: %s\n", samsa_err_name(err), reason);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: secure_roundtrip BOOTSTRAP TOPIC [key=value...]\n");
        return 2;
    }
    char err[512];
    samsa_conf *conf = samsa_conf_new();
    if (conf == NULL ||
        samsa_conf_set(conf, "bootstrap.servers", argv[1], err, sizeof(err)) != SAMSA_OK) {
        fprintf(stderr, "secure_roundtrip: bootstrap.servers: %s\n", err);
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        char key[256];
        const char *eq = strchr(argv[i], '=');
        if (eq == NULL || (size_t)(eq - argv[i]) >= sizeof(key)) {
            fprintf(stderr, "secure_roundtrip: \"%s\" is not key=value\n", argv[i]);
            return 2;
        }
        memcpy(key, argv[i], (size_t)(eq - argv[i]));
        key[eq - argv[i]] = '\0';
        if (samsa_conf_set(conf, key, eq + 1, err, sizeof(err)) != SAMSA_OK) {
            fprintf(stderr, "secure_roundtrip: %s\n", err);
            return 2;
        }
    }
    struct dr_state st = {0, 0, 0};
    samsa_conf_set_delivery_cb(conf, on_delivery, &st);
    samsa_conf_set_error_cb(conf, on_error, NULL);
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    if (p == NULL) {
        fprintf(stderr, "secure_roundtrip: producer: %s\n", err);
        samsa_conf_destroy(conf);
        return 2;
    }
    for (int i = 0; i < COUNT; i++) {
        char v[32];
        int n = snprintf(v, sizeof(v), "secure %d", i);
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = argv[2], .partition = 0,
                                 .value = v, .value_len = (size_t)n};
        int e = samsa_produce(p, &r);
        if (e != SAMSA_OK) {
            fprintf(stderr, "secure_roundtrip: produce: %s\n", samsa_err_name(e));
            samsa_producer_destroy(p);
            samsa_conf_destroy(conf);
            return 1;
        }
    }
    (void)samsa_producer_close(p, 30000);
    samsa_producer_destroy(p);
    if (st.delivered != COUNT) {
        fprintf(stderr, "secure_roundtrip: %d of %d delivered (last error %s)\n", st.delivered,
                COUNT, samsa_err_name(st.last_err));
        samsa_conf_destroy(conf);
        return 1;
    }
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    struct samsa_partition part = {argv[2], 0, SAMSA_OFFSET_BEGINNING};
    if (c == NULL || samsa_consumer_assign(c, &part, 1) != SAMSA_OK) {
        fprintf(stderr, "secure_roundtrip: consumer: %s\n", c == NULL ? err : "assign failed");
        samsa_consumer_destroy(c);
        return 1;
    }
    int got = 0;
    while (got < COUNT) {
        samsa_message *m = samsa_consumer_poll(c, 30000);
        if (m == NULL) {
            fprintf(stderr, "secure_roundtrip: %d of %d read back in 30 s\n", got, COUNT);
            samsa_consumer_destroy(c);
            return 1;
        }
        char want[32];
        int n = snprintf(want, sizeof(want), "secure %d", got);
        bool same = m->offset >= 0 && m->value_len == (size_t)n &&
                    memcmp(m->value, want, (size_t)n) == 0;
        samsa_message_free(m);
        if (!same) {
            fprintf(stderr, "secure_roundtrip: record %d is not \"%s\"\n", got, want);
            samsa_consumer_destroy(c);
            return 1;
        }
        got++;
    }
    (void)samsa_consumer_close(c, 5000);
    samsa_consumer_destroy(c);
    printf("roundtrip ok %d\n", got);
    return 0;
}
