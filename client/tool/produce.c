/*
 * samsa produce: standard input's lines as records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "tool.h"

static const char produce_help[] =
    "usage: samsa produce -b BROKERS -t TOPIC [-p PARTITION] [-K DELIM] [-H name=value]...\n"
    "                     [--transactional-id ID] [-X key=value]...\n"
    "Sends each line of standard input as one record. With -K, the text before the\n"
    "first DELIM is the key. -H adds a header to every record (repeat it for more).\n"
    "Without -p the partitioner places records (keys as the Java client does). Waits\n"
    "for every delivery report, up to --timeout MS (default 30000) after the input\n"
    "ends; prints a summary on stderr.\n"
    "With --transactional-id, all of the input goes in one transaction, committed\n"
    "once it has all been delivered and aborted if a record's delivery fails (as\n"
    "kcat -X transactional.id=ID does): a read_committed reader sees all of it or\n"
    "none of it.\n"
    "Exit status: 0 all delivered, 1 some were not, 2 usage error.\n";

/* -H name=value into hs[0..n): names copied into names[], values borrowed. */
static size_t make_headers(const struct opts *o, struct samsa_header *hs, char (*names)[256])
{
    for (size_t i = 0; i < o->header_count; i++) {
        const char *eq = strchr(o->headers[i], '=');
        size_t nl = (size_t)(eq - o->headers[i]);
        if (nl >= 256) {
            nl = 255;
        }
        memcpy(names[i], o->headers[i], nl);
        names[i][nl] = '\0';
        hs[i].name = names[i];
        hs[i].value = eq + 1;
        hs[i].value_len = strlen(eq + 1);
    }
    return o->header_count;
}

struct produce_state {
    long long delivered;
    long long failed;
    int first_err;
};

static void on_delivery(const struct samsa_delivery *d, void *opaque)
{
    struct produce_state *st = opaque;
    if (d->err == SAMSA_OK) {
        st->delivered++;
    } else {
        if (st->failed == 0) {
            st->first_err = d->err;
            fprintf(stderr, "samsa produce: %s [%d]: %s\n", d->topic, d->partition,
                    samsa_err_str(d->err));
        }
        st->failed++;
    }
}

/* A transactional call's outcome: true when it succeeded, else said on
 * stderr with what kind of error it was. */
static bool txn_step(samsa_producer *p, const char *what, samsa_txn_error *e)
{
    (void)p;
    if (e == NULL) {
        return true;
    }
    fprintf(stderr, "samsa produce: %s: %s%s\n", what, samsa_txn_error_string(e),
            samsa_txn_error_is_fatal(e)             ? " (fatal)"
            : samsa_txn_error_txn_requires_abort(e) ? " (the transaction must abort)"
                                                    : "");
    samsa_txn_error_destroy(e);
    return false;
}

int cmd_produce(int argc, char **argv)
{
    struct opts o;
    int rc = parse_opts("produce", argc, argv, &o);
    if (rc != 0) {
        return rc;
    }
    if (o.help) {
        fputs(produce_help, stdout);
        return 0;
    }
    if (o.topic == NULL) {
        return usage_error("produce", "%s", "-t TOPIC is required");
    }
    samsa_conf *conf = NULL;
    rc = make_conf("produce", &o, &conf);
    if (rc != 0) {
        return rc;
    }
    struct produce_state st = {0, 0, 0};
    samsa_conf_set_delivery_cb(conf, on_delivery, &st);
    char err[512];
    if (o.transactional_id != NULL &&
        samsa_conf_set(conf, "transactional.id", o.transactional_id, err, sizeof(err)) !=
            SAMSA_OK) {
        samsa_conf_destroy(conf);
        return usage_error("produce", "%s", err);
    }
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (p == NULL) {
        fprintf(stderr, "samsa produce: %s\n", err);
        return EXIT_USAGE;
    }
    if (o.transactional_id != NULL &&
        !txn_step(p, "init_transactions", samsa_producer_init_transactions(p, o.timeout_ms))) {
        samsa_producer_destroy(p);
        return EXIT_FAIL;
    }
    if (o.transactional_id != NULL &&
        !txn_step(p, "begin_transaction", samsa_producer_begin_transaction(p))) {
        samsa_producer_destroy(p);
        return EXIT_FAIL;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long long sent = 0;
    size_t dl = o.key_delim != NULL ? strlen(o.key_delim) : 0;
    struct samsa_header hs[64];
    char hnames[64][256];
    size_t hn = make_headers(&o, hs, hnames);
    while (!interrupted && (len = getline(&line, &cap, stdin)) >= 0) {
        if (len > 0 && line[len - 1] == '\n') {
            len--;
        }
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = o.topic, .partition = o.partition};
        r.headers = hn > 0 ? hs : NULL;
        r.header_count = hn;
        r.value = line;
        r.value_len = (size_t)len;
        if (o.key_delim != NULL) {
            char *d = memmem(line, (size_t)len, o.key_delim, dl);
            if (d != NULL) {
                r.key = line;
                r.key_len = (size_t)(d - line);
                r.value = d + dl;
                r.value_len = (size_t)len - r.key_len - dl;
            }
        }
        for (;;) {
            int e = samsa_produce(p, &r);
            if (e == SAMSA_ERR_QUEUE_FULL) {
                (void)samsa_producer_poll(p, 100);
                continue;
            }
            if (e != SAMSA_OK) {
                fprintf(stderr, "samsa produce: record %lld: %s\n", sent + 1, samsa_err_str(e));
                st.failed++;
            } else {
                sent++;
            }
            break;
        }
        (void)samsa_producer_poll(p, 0);
    }
    free(line);
    /* Standard input may take any time: --timeout bounds the wait for the
     * delivery reports after it ended, not the whole command. */
    int fe = samsa_producer_flush(p, o.timeout_ms);
    if (fe != SAMSA_OK) {
        fprintf(stderr, "samsa produce: %zu records not delivered within %d ms\n",
                samsa_producer_outq_len(p), o.timeout_ms);
    }
    if (o.transactional_id != NULL) {
        /* as kcat: commit what was all delivered, else abort */
        bool ok = fe == SAMSA_OK && st.failed == 0 && !interrupted &&
                  txn_step(p, "commit_transaction",
                           samsa_producer_commit_transaction(p, o.timeout_ms));
        if (!ok) {
            (void)txn_step(p, "abort_transaction",
                           samsa_producer_abort_transaction(p, o.timeout_ms));
            fprintf(stderr, "samsa produce: transaction aborted\n");
            st.failed += st.delivered;
            st.delivered = 0;
        } else {
            fprintf(stderr, "samsa produce: transaction committed\n");
        }
    }
    size_t lost = samsa_producer_close(p, 0);
    samsa_producer_destroy(p);
    fprintf(stderr, "samsa produce: %lld delivered, %lld failed\n", st.delivered,
            st.failed);
    return st.failed > 0 || lost > 0 || fe != SAMSA_OK ? EXIT_FAIL : 0;
}
