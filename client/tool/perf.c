/*
 * samsa perf produce|consume: throughput and latency.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

static const char perf_help[] =
    "usage: samsa perf produce -b BROKERS -t TOPIC [--count N] [--size BYTES] [-p PARTITION]\n"
    "                          [--interval MS] [--json] [-X key=value]...\n"
    "       samsa perf consume -b BROKERS -t TOPIC [--count N] [-e] [--group GROUP]\n"
    "                          [--interval MS] [--json] [-X key=value]...\n"
    "produce sends N records (default 100000) of BYTES (default 100) and measures each\n"
    "one's delivery latency (produce call to delivery report); consume reads N records\n"
    "(or to the end with -e) from the beginning, counts records and MB, and measures\n"
    "end-to-end latency (now minus the record's timestamp) of the records produced\n"
    "after it started only (a backlog's would be its age). A progress line goes to\n"
    "stderr every --interval MS (default 1000); at the end: records, MB, records/s,\n"
    "MB/s and latency percentiles (ms).\n"
    "--timeout MS (default 30000): produce waits that long for the last delivery\n"
    "reports once all are sent; consume fails when nothing came within it of the start.\n"
    "Exit status: 0 done, 1 records failed or it timed out, 2 usage error.\n";

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile (nearest rank) of sorted v[0..n). */
static int64_t percentile(const int64_t *v, size_t n, double p)
{
    if (n == 0) {
        return 0;
    }
    size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1) {
        rank = 1;
    }
    return v[(rank > n ? n : rank) - 1];
}

struct perf_state {
    int64_t *lat;       /* microseconds (produce) or milliseconds (consume), per record */
    int64_t *sent_us;   /* produce: when each record was handed to samsa_produce */
    size_t done;
    size_t nlat;        /* lat[0..nlat): produce: every delivered record; consume: those
                         * produced after the start (the others' "latency" would be
                         * their age in the backlog) */
    size_t failed;
    int first_err;
    uint64_t bytes;
    int64_t started_ms;
    int64_t next_progress;
    bool tty;
};

static void progress(struct perf_state *st, const struct opts *o, const char *verb, size_t sent)
{
    int64_t now = mono_ms();
    if (now < st->next_progress) {
        return;
    }
    st->next_progress = now + o->interval_ms;
    double secs = (double)(now - st->started_ms) / 1000.0;
    char sent_part[48] = "";
    if (strcmp(verb, "produced") == 0) { /* sent and delivered differ; read is done */
        snprintf(sent_part, sizeof(sent_part), "%zu sent, ", sent);
    }
    fprintf(stderr, "%s%s: %s%zu records, %.2f MB, %.0f records/s, %.2f MB/s%s",
            st->tty ? "\r" : "", verb, sent_part, st->done, (double)st->bytes / 1e6,
            secs > 0 ? (double)st->done / secs : 0.0,
            secs > 0 ? (double)st->bytes / 1e6 / secs : 0.0, st->tty ? "   " : "\n");
}

static void report(struct perf_state *st, const struct opts *o, const char *verb,
                   const char *unit, double scale)
{
    double secs = (double)(mono_ms() - st->started_ms) / 1000.0;
    if (secs <= 0) {
        secs = 0.001;
    }
    if (st->tty) {
        fputc('\n', stderr);
    }
    qsort(st->lat, st->nlat, sizeof(*st->lat), cmp_i64);
    double p50 = (double)percentile(st->lat, st->nlat, 50) / scale;
    double p95 = (double)percentile(st->lat, st->nlat, 95) / scale;
    double p99 = (double)percentile(st->lat, st->nlat, 99) / scale;
    double max = st->nlat > 0 ? (double)st->lat[st->nlat - 1] / scale : 0.0;
    bool consume = strcmp(verb, "consumed") == 0;
    if (o->json) {
        printf("{\"%s\":%zu,\"failed\":%zu,\"bytes\":%llu,\"seconds\":%.3f,"
               "\"records_per_sec\":%.1f,\"mb_per_sec\":%.3f,\"latency_records\":%zu,"
               "\"latency_ms\":",
               verb, st->done, st->failed, (unsigned long long)st->bytes, secs,
               (double)st->done / secs, (double)st->bytes / 1e6 / secs, st->nlat);
        if (st->nlat > 0) {
            printf("{\"p50\":%.3f,\"p95\":%.3f,\"p99\":%.3f,\"max\":%.3f}}\n", p50, p95, p99,
                   max);
        } else {
            printf("null}\n");
        }
        return;
    }
    printf("%zu records %s", st->done, verb);
    if (!consume) {
        printf(" (%zu failed)", st->failed);
    }
    printf(", %.2f MB in %.2f s: %.0f records/s, %.2f MB/s\n", (double)st->bytes / 1e6, secs,
           (double)st->done / secs, (double)st->bytes / 1e6 / secs);
    if (consume && st->nlat == 0) {
        printf("%s latency: none measured (no record was produced after the start)\n", unit);
    } else if (consume) {
        printf("%s latency (ms) of the %zu records produced after the start: p50 %.3f, "
               "p95 %.3f, p99 %.3f, max %.3f\n",
               unit, st->nlat, p50, p95, p99, max);
    } else {
        printf("%s latency (ms): p50 %.3f, p95 %.3f, p99 %.3f, max %.3f\n", unit, p50, p95, p99,
               max);
    }
}

static void on_perf_delivery(const struct samsa_delivery *d, void *opaque)
{
    struct perf_state *st = opaque;
    size_t i = (size_t)(uintptr_t)d->opaque;
    if (d->err != SAMSA_OK) {
        if (st->failed == 0) {
            st->first_err = d->err;
        }
        st->failed++;
        return;
    }
    st->lat[st->done++] = mono_us() - st->sent_us[i];
    st->nlat = st->done;
    st->bytes += d->value_len;
}

static int perf_produce(const struct opts *o, samsa_conf *conf, long long count)
{
    struct perf_state st = {0};
    st.lat = calloc((size_t)count + 1, sizeof(*st.lat));
    st.sent_us = calloc((size_t)count + 1, sizeof(*st.sent_us));
    char *value = malloc((size_t)o->size + 1);
    if (st.lat == NULL || st.sent_us == NULL || value == NULL) {
        fprintf(stderr, "samsa perf produce: out of memory\n");
        free(st.lat);
        free(st.sent_us);
        free(value);
        samsa_conf_destroy(conf);
        return EXIT_FAIL;
    }
    for (long long i = 0; i < o->size; i++) {
        value[i] = (char)('a' + i % 26);
    }
    samsa_conf_set_delivery_cb(conf, on_perf_delivery, &st);
    char err[512];
    samsa_producer *p = samsa_producer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (p == NULL) {
        fprintf(stderr, "samsa perf produce: %s\n", err);
        free(st.lat);
        free(st.sent_us);
        free(value);
        return EXIT_USAGE;
    }
    st.tty = isatty(2) != 0;
    st.started_ms = mono_ms();
    st.next_progress = st.started_ms + o->interval_ms;
    size_t sent = 0;
    while (!interrupted && sent < (size_t)count) {
        struct samsa_record r = {SAMSA_RECORD_INIT,
                                 .topic = o->topic,
                                 .partition = o->partition,
                                 .value = value,
                                 .value_len = (size_t)o->size,
                                 .opaque = (void *)(uintptr_t)sent};
        st.sent_us[sent] = mono_us();
        int e = samsa_produce(p, &r);
        if (e == SAMSA_ERR_QUEUE_FULL) {
            (void)samsa_producer_poll(p, 10);
            progress(&st, o, "produced", sent);
            continue;
        }
        if (e != SAMSA_OK) {
            fprintf(stderr, "samsa perf produce: %s\n", samsa_err_str(e));
            st.failed++;
            break;
        }
        sent++;
        if (sent % 1024 == 0) {
            (void)samsa_producer_poll(p, 0);
            progress(&st, o, "produced", sent);
        }
    }
    /* As produce: the wait for the last reports once all are sent. */
    int64_t deadline = mono_ms() + o->timeout_ms;
    while (samsa_producer_outq_len(p) > 0 && mono_ms() < deadline && !interrupted) {
        (void)samsa_producer_poll(p, 100);
        progress(&st, o, "produced", sent);
    }
    size_t lost = samsa_producer_close(p, 0);
    samsa_producer_destroy(p);
    report(&st, o, "produced", "delivery", 1000.0);
    if (st.failed > 0) {
        fprintf(stderr, "samsa perf produce: %zu records failed (first: %s)\n", st.failed,
                samsa_err_str(st.first_err));
    }
    free(st.lat);
    free(st.sent_us);
    free(value);
    return st.failed > 0 || lost > 0 || st.done < (size_t)count ? EXIT_FAIL : 0;
}

static int perf_consume(const struct opts *o, samsa_conf *conf, long long count)
{
    char err[512];
    struct samsa_partition *parts = NULL;
    size_t n = 0;
    if (o->group == NULL) {
        samsa_admin *a = samsa_admin_new(conf, err, sizeof(err));
        samsa_metadata *md = NULL;
        if (a == NULL) {
            fprintf(stderr, "samsa perf consume: %s\n", err);
        }
        int rc = a != NULL ? one_topic(a, "perf consume", o, o->topic, &md) : EXIT_FAIL;
        samsa_admin_destroy(a);
        if (rc != 0) {
            samsa_conf_destroy(conf);
            return rc;
        }
        parts = calloc(md->topics[0].partition_count + 1, sizeof(*parts));
        for (size_t i = 0; parts != NULL && i < md->topics[0].partition_count; i++) {
            parts[n++] = (struct samsa_partition){o->topic, md->topics[0].partitions[i].id,
                                                  SAMSA_OFFSET_BEGINNING};
        }
        samsa_metadata_free(md);
    } else if (samsa_conf_set(conf, "group.id", o->group, err, sizeof(err)) != SAMSA_OK ||
               samsa_conf_set(conf, "auto.offset.reset", "earliest", err, sizeof(err)) !=
                   SAMSA_OK) {
        fprintf(stderr, "samsa perf consume: %s\n", err);
        samsa_conf_destroy(conf);
        return EXIT_USAGE;
    }
    samsa_consumer *c = samsa_consumer_new(conf, err, sizeof(err));
    samsa_conf_destroy(conf);
    if (c == NULL) {
        fprintf(stderr, "samsa perf consume: %s\n", err);
        free(parts);
        return EXIT_USAGE;
    }
    const char *topics[1] = {o->topic};
    int e = o->group != NULL ? samsa_consumer_subscribe(c, topics, 1)
                             : samsa_consumer_assign(c, parts, n);
    free(parts);
    if (e != SAMSA_OK) {
        fprintf(stderr, "samsa perf consume: %s\n", samsa_err_str(e));
        samsa_consumer_destroy(c);
        return EXIT_FAIL;
    }
    size_t cap = count > 0 ? (size_t)count : 1024;
    struct perf_state st = {0};
    st.lat = calloc(cap, sizeof(*st.lat));
    if (st.lat == NULL) {
        samsa_consumer_destroy(c);
        return EXIT_FAIL;
    }
    st.tty = isatty(2) != 0;
    st.started_ms = mono_ms();
    st.next_progress = st.started_ms + o->interval_ms;
    int64_t started_wall = wall_ms();
    int64_t deadline = o->deadline_ms;
    int rc = 0;
    while (!interrupted && (count < 0 || st.done < (size_t)count)) {
        samsa_message *m = samsa_consumer_poll(c, 100);
        progress(&st, o, "consumed", 0);
        if (m == NULL) {
            if (o->exit_at_end && samsa_consumer_at_end(c)) {
                break;
            }
            if (st.done == 0 && mono_ms() > deadline) {
                fprintf(stderr, "samsa perf consume: nothing within %d ms\n", o->timeout_ms);
                rc = EXIT_FAIL;
                break;
            }
            continue;
        }
        st.done++;
        st.bytes += m->value_len + m->key_len;
        /* Now minus the record's timestamp is its end-to-end latency only
         * for a record produced after the start; an older one's would be
         * its age in the backlog. */
        if (m->timestamp >= started_wall) {
            if (st.nlat == cap) {
                int64_t *nl = realloc(st.lat, cap * 2 * sizeof(*nl));
                if (nl == NULL) {
                    samsa_message_free(m);
                    break;
                }
                st.lat = nl;
                cap *= 2;
            }
            int64_t lat = wall_ms() - m->timestamp;
            st.lat[st.nlat++] = lat > 0 ? lat : 0;
        }
        samsa_message_free(m);
    }
    report(&st, o, "consumed", "end-to-end", 1.0);
    free(st.lat);
    samsa_consumer_destroy(c);
    return rc;
}

int cmd_perf(int argc, char **argv)
{
    static const char *const verbs[] = {"produce", "consume", NULL};
    struct opts o;
    int rc = start_verb("perf", perf_help, verbs, argc, argv, &o);
    if (rc >= 0) {
        return rc;
    }
    const char *verb = argv[0];
    bool produce = strcmp(verb, "produce") == 0;
    if (o.topic == NULL) {
        return usage_error("perf", "%s", "-t TOPIC is required");
    }
    long long count = o.count;
    if (count < 0 && (produce || !o.exit_at_end)) {
        count = 100000;
    }
    if (count > 100000000) {
        return usage_error("perf", "%s", "--count above 100000000");
    }
    samsa_conf *conf = NULL;
    rc = make_conf("perf", &o, &conf);
    if (rc != 0) {
        return rc;
    }
    return produce ? perf_produce(&o, conf, count) : perf_consume(&o, conf, count);
}
