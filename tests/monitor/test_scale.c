/* samsa-monitor with 10,000 partitions (100 topics of 100, three replicas,
 * three brokers), fed as the admin API feeds it: the documents, then
 * progress messages that move every partition at once (the worst batch).
 *
 * Two ways, one after the other on the same window: the JSON parsed and
 * applied on the main thread (as before sm-parse.h), then parsed on the
 * links' workers (SmParser, one per broker) with only the digest applied on
 * the main thread. Prints per batch the parse, the apply, the flush (every
 * bound cell updated), the frame drawn after it, and the worst main-loop
 * turn: the longest time between two polls of the main context (a wrapped
 * poll function), i.e. the longest the window could not answer input.
 * It is a figures test: it fails when rows go missing or the model is
 * wrong, never on timing.
 *
 * Usage: test_monitor_scale (under xvfb-run and dbus-run-session) */
#include <adwaita.h>
#include <stdio.h>
#include <string.h>

#include "sm-cluster.h"
#include "sm-parse.h"
#include "sm-test-ui.h"
#include "sm-window.h"

#define TOPICS 100
#define PARTS 100
#define BATCHES 20

static long rss_kib(void)
{
    g_autofree char *status = NULL;
    if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL)) {
        return -1;
    }
    const char *at = strstr(status, "VmRSS:");
    return at != NULL ? (long)g_ascii_strtoll(at + 6, NULL, 10) : -1;
}

static char *topic_doc(int from, int t)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "{\"broker\":%d,\"name\":\"t%03d\",\"partitions\":[", from, t);
    for (int p = 0; p < PARTS; p++) {
        int l = (t + p) % 3;
        gboolean led = l == from;
        g_string_append_printf(s,
                               "%s{\"topic\":\"t%03d\",\"partition\":%d,\"leader\":%d,"
                               "\"leader_epoch\":0,\"high_watermark\":%s,\"log_start_offset\":0,"
                               "\"led_here\":%s,\"isr\":[%d,%d,%d],\"replicas\":[",
                               p ? "," : "", t, p, l, led ? "1000" : "null", led ? "true" : "false",
                               l, (l + 1) % 3, (l + 2) % 3);
        for (int r = 0; r < 3; r++) {
            g_string_append_printf(s, "%s{\"broker\":%d,\"log_end_offset\":%s,\"in_sync\":true}",
                                   r ? "," : "", (l + r) % 3, led ? "1000" : "null");
        }
        g_string_append(s, "]}");
    }
    g_string_append(s, "]}");
    return g_string_free(s, FALSE);
}

/* broker `from`'s progress for every partition it leads, offsets at `at` */
static char *progress(int from, gint64 at, int seq)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "{\"seq\":%d,\"type\":\"progress\",\"broker\":%d,\"time_ms\":1,"
                              "\"partitions\":[",
                           seq, from);
    gboolean first = TRUE;
    for (int t = 0; t < TOPICS; t++) {
        for (int p = 0; p < PARTS; p++) {
            int l = (t + p) % 3;
            if (l != from) {
                continue;
            }
            g_string_append_printf(s,
                                   "%s{\"topic\":\"t%03d\",\"partition\":%d,\"leader\":%d,"
                                   "\"led_here\":true,\"high_watermark\":%" G_GINT64_FORMAT
                                   ",\"log_start_offset\":0,\"log_end_offset\":%" G_GINT64_FORMAT
                                   ",\"replicas\":[",
                                   first ? "" : ",", t, p, l, at - 5, at);
            first = FALSE;
            for (int r = 0; r < 3; r++) {
                g_string_append_printf(s,
                                       "%s{\"broker\":%d,\"log_end_offset\":%" G_GINT64_FORMAT
                                       ",\"lag\":%d,\"in_sync\":true}",
                                       r ? "," : "", (l + r) % 3, at - (gint64)r * 5, r * 5);
            }
            g_string_append(s, "]}");
        }
    }
    g_string_append(s, "]}");
    return g_string_free(s, FALSE);
}

static gboolean drawn;

/* ------------------------------------------------------------ main-loop turns */

static GPollFunc real_poll;
static gint64 poll_returned_us;
static gint64 worst_turn_us;
static guint long_turns; /* over 16.7 ms: a frame missed at 60 Hz */

/* the time from one poll's return to the next poll is one turn: dispatching
 * every source ready, the frame included */
static gint timed_poll(GPollFD *fds, guint nfds, gint timeout)
{
    gint64 now = g_get_monotonic_time();
    if (poll_returned_us > 0) {
        worst_turn_us = MAX(worst_turn_us, now - poll_returned_us);
        long_turns += now - poll_returned_us > 16700 ? 1 : 0;
    }
    gint r = real_poll(fds, nfds, timeout);
    poll_returned_us = g_get_monotonic_time();
    return r;
}

static void turns_reset(void)
{
    worst_turn_us = 0;
    long_turns = 0;
    poll_returned_us = g_get_monotonic_time();
}

/* ------------------------------------------------------------ the workers' results */

typedef struct {
    SmCluster *cluster;
    gint64 parse_us;
    gint64 apply_us;
    gint64 apply_max_us;
    guint applied;
    guint failed;
} Applied;

static void on_parsed(SmParsed *r, gpointer ud)
{
    Applied *a = ud;
    gint64 t0 = g_get_monotonic_time();
    if (r->progress != NULL) {
        sm_cluster_apply_progress(a->cluster, r->progress);
    } else {
        a->failed++;
    }
    gint64 dt = g_get_monotonic_time() - t0;
    a->parse_us += r->parse_us;
    a->apply_us += dt;
    a->apply_max_us = MAX(a->apply_max_us, dt);
    a->applied++;
}

typedef struct {
    SmParser **parsers;
    guint n;
} Parsers;

static gboolean all_applied_and_drawn(gpointer ud)
{
    Parsers *ps = ud;
    for (guint i = 0; i < ps->n; i++) {
        if (sm_parser_pending(ps->parsers[i]) > 0) {
            drawn = FALSE; /* a frame before the last apply does not count */
            return FALSE;
        }
    }
    return drawn;
}

static void after_paint(GdkFrameClock *clock, gpointer ud)
{
    (void)clock;
    (void)ud;
    drawn = TRUE;
}

static gboolean was_drawn(gpointer ud)
{
    (void)ud;
    return drawn;
}

int main(int argc, char **argv)
{
    gtk_test_init(&argc, &argv, NULL);
    adw_init();
    long rss0 = rss_kib();
    SmCluster *c = sm_cluster_new();
    gint64 t0 = g_get_monotonic_time();
    for (int from = 0; from < 3; from++) {
        for (int t = 0; t < TOPICS; t++) {
            g_autofree char *doc = topic_doc(from, t);
            if (!sm_cluster_apply_text(c, doc, -1, NULL)) {
                return 1;
            }
        }
    }
    sm_cluster_flush(c);
    gint64 load_us = g_get_monotonic_time() - t0;
    long rss_model = rss_kib();
    guint partitions = sm_cluster_get_summary(c)->partitions;
    printf("documents of 3 brokers, %u partitions: %.0f ms; model %ld KiB\n", partitions,
           (double)load_us / 1000.0, rss_model - rss0);
    if (partitions != TOPICS * PARTS) {
        return 1;
    }
    SmWindow *win = sm_window_new(NULL, c, NULL);
    gtk_window_set_default_size(GTK_WINDOW(win), 1100, 800);
    sm_window_show_topic(win, "t000");
    sm_window_show_page(win, "partitions");
    gtk_window_present(GTK_WINDOW(win));
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    long rss_win = rss_kib();
    GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(win));
    g_signal_connect(clock, "after-paint", G_CALLBACK(after_paint), NULL);
    real_poll = g_main_context_get_poll_func(NULL);
    g_main_context_set_poll_func(NULL, timed_poll);
    int failures = 0;
    int b = 0;

    /* before: parsed and applied on the main thread, one message a turn */
    gint64 sum_apply = 0, sum_flush = 0, sum_frame = 0, worst_apply = 0;
    turns_reset();
    for (int i = 0; i < BATCHES; i++) {
        b++;
        gint64 apply = 0;
        const SmFlushStats *st = sm_window_get_flush_stats(win);
        guint before = st->flushes;
        gint64 flush_before = st->total_us;
        for (int from = 0; from < 3; from++) {
            g_autofree char *m = progress(from, 1000 + b * 100, b);
            gint64 a0 = g_get_monotonic_time();
            failures += sm_cluster_apply_text(c, m, -1, NULL) ? 0 : 1;
            gint64 one = g_get_monotonic_time() - a0;
            apply += one;
            worst_apply = MAX(worst_apply, one);
            g_main_context_iteration(NULL, FALSE);
        }
        drawn = FALSE;
        gint64 f0 = g_get_monotonic_time();
        if (smt_wait(was_drawn, NULL, 10) < 0 || st->flushes == before) {
            printf("FAIL: batch %d not flushed and drawn\n", b);
            failures++;
        }
        sum_frame += g_get_monotonic_time() - f0;
        sum_flush += st->total_us - flush_before;
        sum_apply += apply;
    }
    gint64 worst_turn_main = worst_turn_us;
    printf("main thread (before): per batch of 10,000 partitions moved (%d batches): "
           "parse+apply %.1f ms (one message of 3,333: %.1f ms at worst), flush %.1f ms, "
           "flush to frame drawn %.1f ms; worst main-loop turn %.1f ms, %u turns over 16.7 ms\n",
           BATCHES, (double)sum_apply / BATCHES / 1000.0, (double)worst_apply / 1000.0,
           (double)sum_flush / BATCHES / 1000.0, (double)sum_frame / BATCHES / 1000.0,
           (double)worst_turn_main / 1000.0, long_turns);

    /* after: each broker's messages parsed on its link's worker, the digest
     * applied on the main thread, one message a turn */
    Applied applied = {c, 0, 0, 0, 0, 0};
    SmParser *parsers[3];
    for (int from = 0; from < 3; from++) {
        parsers[from] = sm_parser_new(on_parsed, &applied);
    }
    Parsers ps = {parsers, 3};
    sum_flush = 0;
    gint64 sum_wall = 0;
    turns_reset();
    for (int i = 0; i < BATCHES; i++) {
        b++;
        /* the three leaders' progress messages of one snapshot */
        for (int from = 0; from < 3; from++) {
            g_autofree char *m = progress(from, 1000 + b * 100, b);
            g_autoptr(GBytes) text = g_bytes_new(m, strlen(m));
            sm_parser_push(parsers[from], SM_PARSE_STREAM, NULL, text);
        }
        drawn = FALSE;
        gint64 w0 = g_get_monotonic_time();
        const SmFlushStats *st = sm_window_get_flush_stats(win);
        gint64 flush_before = st->total_us;
        if (smt_wait(all_applied_and_drawn, &ps, 20) < 0) {
            printf("FAIL: batch %d not applied and drawn\n", b);
            failures++;
        }
        sum_wall += g_get_monotonic_time() - w0;
        sum_flush += st->total_us - flush_before;
    }
    gint64 worst_turn_worker = worst_turn_us;
    failures += (int)applied.failed + (applied.applied == 3 * BATCHES ? 0 : 1);
    printf("workers (after): per batch of 10,000 partitions moved (%d batches): "
           "parse %.1f ms on the workers, apply on the main thread %.1f ms (one message of "
           "3,333: %.1f ms at worst), flush %.1f ms, pushed to frame drawn %.1f ms; "
           "worst main-loop turn %.1f ms, %u turns over 16.7 ms\n",
           BATCHES, (double)applied.parse_us / BATCHES / 1000.0,
           (double)applied.apply_us / BATCHES / 1000.0, (double)applied.apply_max_us / 1000.0,
           (double)sum_flush / BATCHES / 1000.0, (double)sum_wall / BATCHES / 1000.0,
           (double)worst_turn_worker / 1000.0, long_turns);
    printf("longest flush of the run: %.1f ms\n",
           (double)sm_window_get_flush_stats(win)->max_us / 1000.0);
    for (int from = 0; from < 3; from++) {
        sm_parser_free(parsers[from]);
    }
    SmPartition *p = sm_cluster_find_partition(c, "t099", 99);
    if (p == NULL || p->high_watermark != 1000 + b * 100 - 5) {
        printf("FAIL: t099-99 at HW %" G_GINT64_FORMAT ", want %d\n",
               p != NULL ? p->high_watermark : -1, 1000 + b * 100 - 5);
        failures++;
    }
    printf("memory (VmRSS): model %ld KiB (%.1f KiB a partition), window with it %ld KiB, "
           "after the batches %ld KiB\n",
           rss_model - rss0, (double)(rss_model - rss0) / partitions, rss_win - rss0,
           rss_kib() - rss0);
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
    return failures == 0 ? 0 : 1;
}
