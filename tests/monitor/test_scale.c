/* samsa-monitor with 10,000 partitions (100 topics of 100, three replicas,
 * three brokers), fed as the admin API feeds it: the documents, then
 * progress messages that move every partition at once (the worst batch).
 * Prints per batch the time to parse and apply the JSON, the flush (every
 * bound cell updated) and the frame drawn after it, and the memory; fails
 * when a batch's main-loop time passes a generous bound or rows go missing.
 *
 * Usage: test_monitor_scale (under xvfb-run and dbus-run-session) */
#include <adwaita.h>
#include <stdio.h>
#include <string.h>

#include "sm-cluster.h"
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
    gint64 worst_main = 0, sum_apply = 0, sum_flush = 0, sum_frame = 0;
    int failures = 0;
    for (int b = 1; b <= BATCHES; b++) {
        /* the three leaders' progress messages of one snapshot */
        g_autofree char *m0 = progress(0, 1000 + b * 100, b);
        g_autofree char *m1 = progress(1, 1000 + b * 100, b);
        g_autofree char *m2 = progress(2, 1000 + b * 100, b);
        gint64 a0 = g_get_monotonic_time();
        gboolean ok = sm_cluster_apply_text(c, m0, -1, NULL) &&
                      sm_cluster_apply_text(c, m1, -1, NULL) &&
                      sm_cluster_apply_text(c, m2, -1, NULL);
        gint64 apply = g_get_monotonic_time() - a0;
        failures += ok ? 0 : 1;
        drawn = FALSE;
        gint64 f0 = g_get_monotonic_time();
        const SmFlushStats *st = sm_window_get_flush_stats(win);
        guint before = st->flushes;
        gint64 flush_before = st->total_us;
        if (smt_wait(was_drawn, NULL, 10) < 0 || st->flushes == before) {
            failures++;
        }
        gint64 frame = g_get_monotonic_time() - f0;
        gint64 flush = st->total_us - flush_before;
        sum_apply += apply;
        sum_flush += flush;
        sum_frame += frame;
        worst_main = MAX(worst_main, apply + frame);
    }
    SmPartition *p = sm_cluster_find_partition(c, "t099", 99);
    if (p == NULL || p->high_watermark != 1000 + BATCHES * 100 - 5) {
        failures++;
    }
    printf("per batch of 10,000 partitions moved (%d batches): parse+apply %.1f ms, "
           "flush %.1f ms, flush to frame drawn %.1f ms; worst batch's main-loop time %.1f ms\n",
           BATCHES, (double)sum_apply / BATCHES / 1000.0, (double)sum_flush / BATCHES / 1000.0,
           (double)sum_frame / BATCHES / 1000.0, (double)worst_main / 1000.0);
    printf("memory (VmRSS): model %ld KiB (%.1f KiB a partition), window with it %ld KiB, "
           "after the batches %ld KiB\n",
           rss_model - rss0, (double)(rss_model - rss0) / partitions, rss_win - rss0,
           rss_kib() - rss0);
    /* generous: a batch should stay well inside a second on a loaded CI
     * machine; the figures above are what to read */
    if (worst_main > (gint64)2 * G_USEC_PER_SEC) {
        printf("FAIL: a batch held the main loop for more than 2 s\n");
        failures++;
    }
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
    return failures == 0 ? 0 : 1;
}
