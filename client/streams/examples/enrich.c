/*
 * Enrichment, a stream-table left join (Kafka 2.0's KStream.leftJoin with a
 * KTable, the pattern of streams/examples' PageViewRegionExample): each
 * order of ORDERS (key: the customer id, value: the order) is written to
 * OUTPUT with the customer's name, read from the table CUSTOMERS (key: the
 * customer id, value: the name; a record with a null value deletes), as
 * "ORDER,NAME", or "ORDER,unknown" for a customer the table lacks:
 *
 *     samsa-streams-enrich [--rekey] BROKERS ORDERS CUSTOMERS OUTPUT [APP_ID [COMMIT_MS
 * [KEY=VALUE...]]]
 *
 * With --rekey the orders are keyed by anything (an order id) and their
 * value starts with the customer id and a space ("c7 two apples"): the
 * example selects that id as the key and sends the orders through the
 * repartition topic APP-orders-by-customer-repartition first, so that each
 * order reaches the task holding its customer (Kafka's selectKey, then
 * through), and ORDERS may have any partition count.
 *
 * The table is kept in the store "customers" (changelog
 * APP-customers-changelog). ORDERS and CUSTOMERS must be co-partitioned:
 * the same partition count (checked at start) and keys placed by the same
 * partitioner. An order is joined with the table as it is when the order is
 * processed. KEY=VALUE pairs are libsamsa configuration. Runs until SIGINT
 * or SIGTERM, then commits and leaves the group.
 */
#include <samsa/streams.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"

static int with_name(struct samsa_st_bytes order, struct samsa_st_bytes name, samsa_st_emitter *out,
                     void *opaque)
{
    (void)opaque;
    static const char unknown[] = "unknown";
    if (name.data == NULL) {
        name.data = unknown;
        name.len = sizeof unknown - 1;
    }
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "%.*s,%.*s", (int)order.len, (const char *)order.data,
                     (int)name.len, (const char *)name.data);
    struct samsa_st_bytes v = {buf, n > 0 && (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1};
    return samsa_st_emit(out, v, v);
}

/* The customer id: the value up to its first space. */
static int customer_of(const struct samsa_st_record *rec, samsa_st_emitter *out, void *opaque)
{
    (void)opaque;
    const char *v = rec->value.data;
    const char *sp = v != NULL ? memchr(v, ' ', rec->value.len) : NULL;
    struct samsa_st_bytes key = {v, sp != NULL ? (size_t)(sp - v) : rec->value.len};
    return samsa_st_emit(out, key, rec->value);
}

int main(int argc, char **argv)
{
    bool rekey = argc > 1 && strcmp(argv[1], "--rekey") == 0;
    if (rekey) {
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    if (argc < 5) {
        (void)fprintf(stderr,
                      "usage: %s [--rekey] BROKERS ORDERS CUSTOMERS OUTPUT [APP_ID [COMMIT_MS "
                      "[KEY=VALUE...]]]\n",
                      argv[0]);
        return 2;
    }
    const char *app_id = argc > 5 ? argv[5] : "enrich";
    long commit_ms = argc > 6 ? strtol(argv[6], NULL, 10) : 1000;

    samsa_st_topology *t = samsa_st_topology_new();
    const char *orders_topic = argv[2];
    samsa_st_stream *orders = samsa_st_stream_from(t, &orders_topic, 1);
    if (rekey) {
        orders = samsa_st_repartition(samsa_st_select_key(orders, customer_of, NULL),
                                      "orders-by-customer");
    }
    samsa_st_table *customers = samsa_st_table_from(t, argv[3], "customers");
    samsa_st_stream *enriched =
        samsa_st_join_table(orders, customers, SAMSA_ST_JOIN_LEFT, with_name, NULL);
    int built = samsa_st_to(enriched, argv[4]);
    return example_run("enrich", t, built, argv[1], app_id, commit_ms, argv + 7,
                       argc > 7 ? argc - 7 : 0);
}
