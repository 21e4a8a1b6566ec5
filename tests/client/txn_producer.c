/*
 * libsamsa's transactional producer on its public API, for
 * test_client_txn.py (each scenario prints what happened, one line per
 * fact, and exits 0 when every call went as the scenario expects):
 *
 *   txn_producer BROKERS TOPIC ID commit N    N records in one transaction, committed
 *   txn_producer BROKERS TOPIC ID abort N     N records in one transaction, aborted
 *   txn_producer BROKERS TOPIC ID fence       a second producer with ID fences the
 *                                             first: its commit is a fatal FENCED error
 *   txn_producer BROKERS TOPIC ID offsets GROUP OFFSET [abort]
 *                                             a record and GROUP's offset of TOPIC [0]
 *                                             in one transaction, committed (or aborted)
 *   txn_producer BROKERS TOPIC ID states      calls out of order: their errors
 *   txn_producer BROKERS TOPIC ID copy OUT GROUP N
 *                                             Kafka's copier (TransactionalMessageCopier):
 *                                             TOPIC [0]'s first N records read by a member
 *                                             of GROUP, written to OUT [0] in transactions
 *                                             of 10 with the member's offsets, one in three
 *                                             aborted and read again
 *
 * Records go to partition 0, values "<ID>-<i>".
 */
#include <samsa/samsa.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_MS 30000

static samsa_producer *make(const char *brokers, const char *id)
{
    char err[512];
    samsa_conf *conf = samsa_conf_new();
    if (samsa_conf_set(conf, "bootstrap.servers", brokers, err, sizeof(err)) != SAMSA_OK ||
        samsa_conf_set(conf, "transactional.id", id, err, sizeof(err)) != SAMSA_OK ||
        samsa_conf_set(conf, "transaction.timeout.ms", "20000", err, sizeof(err)) != SAMSA_OK) {
        fprintf(stderr, "conf: %s\n", err);
        exit(2);
    }
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (p == NULL) {
        fprintf(stderr, "producer: %s\n", err);
        exit(2);
    }
    return p;
}

/* Prints the call's outcome; returns 1 on success. e is destroyed. */
static int said(const char *who, const char *call, samsa_txn_error *e)
{
    if (e == NULL) {
        printf("%s %s ok\n", who, call);
        return 1;
    }
    printf("%s %s error %s fatal=%d retriable=%d abort=%d: %s\n", who, call,
           samsa_err_name(samsa_txn_error_code(e)), samsa_txn_error_is_fatal(e),
           samsa_txn_error_is_retriable(e), samsa_txn_error_txn_requires_abort(e),
           samsa_txn_error_string(e));
    samsa_txn_error_destroy(e);
    return 0;
}

static int produce(samsa_producer *p, const char *topic, const char *prefix, int i)
{
    char v[128];
    int n = snprintf(v, sizeof(v), "%s-%d", prefix, i);
    struct samsa_record r = {SAMSA_RECORD_INIT, .topic = topic, .partition = 0, .value = v,
                             .value_len = (size_t)n};
    return samsa_produce(p, &r);
}

static int produce_n(samsa_producer *p, const char *topic, const char *prefix, int n)
{
    for (int i = 0; i < n; i++) {
        int e;
        while ((e = produce(p, topic, prefix, i)) == SAMSA_ERR_QUEUE_FULL) {
            (void)samsa_producer_poll(p, 100);
        }
        if (e != SAMSA_OK) {
            printf("produce %d: %s\n", i, samsa_err_name(e));
            return 0;
        }
    }
    return 1;
}

static int one_transaction(const char *brokers, const char *topic, const char *id, bool commit,
                           int n)
{
    samsa_producer *p = make(brokers, id);
    int ok = said("p", "init", samsa_producer_init_transactions(p, TIMEOUT_MS)) &&
             said("p", "begin", samsa_producer_begin_transaction(p)) &&
             produce_n(p, topic, id, n) && samsa_producer_flush(p, TIMEOUT_MS) == SAMSA_OK;
    if (ok) {
        ok = commit ? said("p", "commit", samsa_producer_commit_transaction(p, TIMEOUT_MS))
                    : said("p", "abort", samsa_producer_abort_transaction(p, TIMEOUT_MS));
    }
    /* the producer goes on: a second transaction, always committed */
    if (ok) {
        ok = said("p", "begin", samsa_producer_begin_transaction(p)) &&
             produce_n(p, topic, "after", 1) &&
             said("p", "commit", samsa_producer_commit_transaction(p, TIMEOUT_MS));
    }
    samsa_producer_destroy(p);
    return ok ? 0 : 1;
}

static int fence(const char *brokers, const char *topic, const char *id)
{
    samsa_producer *p1 = make(brokers, id);
    int ok = said("p1", "init", samsa_producer_init_transactions(p1, TIMEOUT_MS)) &&
             said("p1", "begin", samsa_producer_begin_transaction(p1)) &&
             produce_n(p1, topic, "zombie", 3) && samsa_producer_flush(p1, TIMEOUT_MS) == 0;
    samsa_producer *p2 = make(brokers, id);
    ok = ok && said("p2", "init", samsa_producer_init_transactions(p2, TIMEOUT_MS)) &&
         said("p2", "begin", samsa_producer_begin_transaction(p2)) &&
         produce_n(p2, topic, "winner", 2) &&
         said("p2", "commit", samsa_producer_commit_transaction(p2, TIMEOUT_MS));
    if (ok) {
        /* the zombie's next record is refused by the partition (its epoch
         * is old) and its commit by the coordinator: fatal, FENCED */
        (void)produce(p1, topic, "zombie-late", 0);
        samsa_txn_error *e = samsa_producer_commit_transaction(p1, TIMEOUT_MS);
        bool fenced = e != NULL && samsa_txn_error_is_fatal(e) &&
                      samsa_txn_error_code(e) == SAMSA_ERR_FENCED;
        (void)said("p1", "commit", e);
        printf("fenced %s\n", fenced ? "yes" : "no");
        int pe = produce(p1, topic, "zombie-after", 0);
        printf("p1 produce after %s\n", samsa_err_name(pe));
        ok = fenced && pe == SAMSA_ERR_FATAL;
    }
    samsa_producer_destroy(p1);
    samsa_producer_destroy(p2);
    return ok ? 0 : 1;
}

static int offsets(const char *brokers, const char *topic, const char *id, const char *group,
                   long long offset, bool commit)
{
    samsa_producer *p = make(brokers, id);
    samsa_consumer_group_metadata *md = samsa_consumer_group_metadata_new(group);
    struct samsa_partition part = {topic, 0, offset};
    int ok = said("p", "init", samsa_producer_init_transactions(p, TIMEOUT_MS)) &&
             said("p", "begin", samsa_producer_begin_transaction(p)) &&
             produce_n(p, topic, id, 1) &&
             said("p", "send_offsets",
                  samsa_producer_send_offsets_to_transaction(p, &part, 1, md, TIMEOUT_MS)) &&
             (commit ? said("p", "commit", samsa_producer_commit_transaction(p, TIMEOUT_MS))
                     : said("p", "abort", samsa_producer_abort_transaction(p, TIMEOUT_MS)));
    samsa_consumer_group_metadata_destroy(md);
    samsa_producer_destroy(p);
    return ok ? 0 : 1;
}

static int states(const char *brokers, const char *topic, const char *id)
{
    samsa_producer *p = make(brokers, id);
    /* before init: nothing but init */
    int pe = produce(p, topic, "early", 0);
    printf("produce before init %s\n", samsa_err_name(pe));
    int refused = !said("p", "begin-before-init", samsa_producer_begin_transaction(p)) &&
                  !said("p", "commit-before-init", samsa_producer_commit_transaction(p, 1000));
    int ok = said("p", "init", samsa_producer_init_transactions(p, TIMEOUT_MS));
    refused = refused && !said("p", "init-again", samsa_producer_init_transactions(p, 1000));
    pe = produce(p, topic, "outside", 0);
    printf("produce outside a transaction %s\n", samsa_err_name(pe));
    ok = ok && pe == SAMSA_ERR_STATE && refused &&
         said("p", "begin", samsa_producer_begin_transaction(p));
    refused = !said("p", "begin-twice", samsa_producer_begin_transaction(p));
    /* an empty transaction commits without a request */
    ok = ok && refused && said("p", "commit-empty", samsa_producer_commit_transaction(p, 1000));
    samsa_producer_destroy(p);
    return ok ? 0 : 1;
}

/* One transaction of the copier: up to 10 records from c to out, with c's
 * position; commit or abort. Returns the position committed (or the
 * previous one when aborted), -1 on a failure. */
static long long copy_some(samsa_producer *p, samsa_consumer *c, const char *in, const char *out,
                           long long committed, long long n, bool commit)
{
    if (!said("p", "begin", samsa_producer_begin_transaction(p))) {
        return -1;
    }
    long long pos = committed;
    for (int i = 0; i < 10 && pos < n; i++) {
        samsa_message *m = samsa_consumer_poll(c, 10000);
        if (m == NULL) {
            printf("no record at %lld\n", pos);
            return -1;
        }
        struct samsa_record r = {SAMSA_RECORD_INIT, .topic = out, .partition = 0,
                                 .value = m->value, .value_len = m->value_len};
        int e = samsa_produce(p, &r);
        pos = m->offset + 1;
        samsa_message_free(m);
        if (e != SAMSA_OK) {
            printf("produce: %s\n", samsa_err_name(e));
            return -1;
        }
    }
    samsa_consumer_group_metadata *md = samsa_consumer_group_metadata_get(c);
    struct samsa_partition part = {in, 0, pos};
    int ok = md != NULL &&
             said("p", "send_offsets",
                  samsa_producer_send_offsets_to_transaction(p, &part, 1, md, TIMEOUT_MS));
    samsa_consumer_group_metadata_destroy(md);
    if (!ok) {
        return -1;
    }
    if (commit) {
        return said("p", "commit", samsa_producer_commit_transaction(p, TIMEOUT_MS)) ? pos : -1;
    }
    /* aborted once its records are in the log; what it read is read again
     * from the last commit */
    if (samsa_producer_flush(p, TIMEOUT_MS) != SAMSA_OK ||
        !said("p", "abort", samsa_producer_abort_transaction(p, TIMEOUT_MS)) ||
        samsa_consumer_seek(c, in, 0, committed, TIMEOUT_MS) != SAMSA_OK) {
        return -1;
    }
    return committed;
}

static int copy(const char *brokers, const char *in, const char *id, const char *out,
                const char *group, long long n)
{
    char err[512];
    samsa_conf *conf = samsa_conf_new();
    if (samsa_conf_set(conf, "bootstrap.servers", brokers, err, sizeof(err)) != SAMSA_OK ||
        samsa_conf_set(conf, "group.id", group, err, sizeof(err)) != SAMSA_OK ||
        samsa_conf_set(conf, "enable.auto.commit", "false", err, sizeof(err)) != SAMSA_OK ||
        samsa_conf_set(conf, "auto.offset.reset", "earliest", err, sizeof(err)) != SAMSA_OK) {
        fprintf(stderr, "conf: %s\n", err);
        return 2;
    }
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (c == NULL) {
        fprintf(stderr, "consumer: %s\n", err);
        return 2;
    }
    const char *topics[] = {in};
    samsa_producer *p = make(brokers, id);
    long long committed = 0;
    int ok = samsa_consumer_subscribe(c, topics, 1) == SAMSA_OK &&
             said("p", "init", samsa_producer_init_transactions(p, TIMEOUT_MS));
    int aborted = 0;
    for (int k = 0; ok && committed < n; k++) {
        bool commit = k % 3 != 1;
        committed = copy_some(p, c, in, out, committed, n, commit);
        ok = committed >= 0;
        aborted += ok && !commit;
    }
    printf("copied %lld, %d transactions aborted\n", committed, aborted);
    samsa_producer_destroy(p);
    (void)samsa_consumer_close(c, 10000);
    samsa_consumer_destroy(c);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: txn_producer BROKERS TOPIC ID commit|abort N | fence | "
                        "offsets GROUP OFFSET [abort] | states\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *b = argv[1], *topic = argv[2], *id = argv[3], *what = argv[4];
    if ((strcmp(what, "commit") == 0 || strcmp(what, "abort") == 0) && argc == 6) {
        return one_transaction(b, topic, id, what[0] == 'c', (int)strtol(argv[5], NULL, 10));
    }
    if (strcmp(what, "fence") == 0) {
        return fence(b, topic, id);
    }
    if (strcmp(what, "offsets") == 0 && (argc == 7 || argc == 8)) {
        return offsets(b, topic, id, argv[5], strtoll(argv[6], NULL, 10),
                       argc == 7 || strcmp(argv[7], "abort") != 0);
    }
    if (strcmp(what, "copy") == 0 && argc == 8) {
        return copy(b, topic, id, argv[5], argv[6], strtoll(argv[7], NULL, 10));
    }
    if (strcmp(what, "states") == 0) {
        return states(b, topic, id);
    }
    fprintf(stderr, "txn_producer: unknown scenario %s\n", what);
    return 2;
}
