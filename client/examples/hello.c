/* Produce three records, then read them back: libsamsa in 20 lines. */
#include <samsa/samsa.h>
#include <stdio.h>
int main(int argc, char **argv) {
    char err[512];
    samsa_conf *conf = samsa_conf_new();
    if (argc < 3 || samsa_conf_set(conf, "bootstrap.servers", argv[1], err, sizeof err) != SAMSA_OK) return 2;
    samsa_producer *p = samsa_producer_new(conf, err, sizeof err);
    for (int i = 0; p != NULL && i < 3; i++) {
        char v[32]; int n = snprintf(v, sizeof v, "hello %d", i);
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = argv[2], .partition = 0, .value = v, .value_len = (size_t)n};
        if (samsa_produce(p, &r) != SAMSA_OK) return 1;
    }
    if (p == NULL || samsa_producer_close(p, 10000) != 0) return 1;  /* flushes; 0 = all delivered */
    samsa_producer_destroy(p);
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof err);
    struct samsa_partition part = {argv[2], 0, SAMSA_OFFSET_BEGINNING};
    if (c == NULL || samsa_consumer_assign(c, &part, 1) != SAMSA_OK) return 1;
    for (int got = 0; got < 3;) {
        samsa_message *m = samsa_consumer_poll(c, 10000);
        if (m == NULL) return 1;
        printf("%lld: %.*s\n", (long long)m->offset, (int)m->value_len, (const char *)m->value);
        samsa_message_free(m); got++;
    }
    int closed = samsa_consumer_close(c, 5000); /* SAMSA_OK: closed in time */
    samsa_consumer_destroy(c); samsa_conf_destroy(conf); return closed == SAMSA_OK ? 0 : 1;
}
