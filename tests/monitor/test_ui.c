/* samsa-monitor's window under a display (Xvfb): a cluster of three brokers
 * with one replica out of sync, fed as JSON; the partitions page's rows,
 * texts and replica bars' accessible labels, and the window rendered to PNG
 * and to a render-node file in light and dark.
 *
 * Usage: test_monitor_ui OUTPUT-DIR (run under xvfb-run and dbus-run-session
 * with GSETTINGS_SCHEMA_DIR and GSETTINGS_BACKEND=memory) */
#include <adwaita.h>
#include <string.h>

#include "cunit_run.h"
#include "sm-cluster.h"
#include "sm-test-docs.h"
#include "sm-test-ui.h"
#include "sm-window.h"

static const char *out_dir;

static const char CLUSTER[] =
    "{\"cluster_id\":\"demo\",\"broker\":0,\"controller\":1,\"brokers\":["
    "{\"id\":0,\"host\":\"127.0.0.1\",\"port\":9092,\"admin_url\":\"http://127.0.0.1:9095\","
    "\"alive\":true},"
    "{\"id\":1,\"host\":\"127.0.0.1\",\"port\":9192,\"admin_url\":\"http://127.0.0.1:9195\","
    "\"alive\":true},"
    "{\"id\":2,\"host\":\"127.0.0.1\",\"port\":9292,\"admin_url\":\"http://127.0.0.1:9295\","
    "\"alive\":true}]}";

/* partition 0: replica 2 stopped 1,204 records behind the HW */
static const char TOPIC[] =
    "{\"broker\":0,\"name\":\"orders\",\"min_insync_replicas\":2,\"partitions\":["
    "{\"topic\":\"orders\",\"partition\":0,\"leader\":0,\"leader_epoch\":4,"
    "\"high_watermark\":5000,\"log_start_offset\":1000,\"log_end_offset\":5000,\"led_here\":true,"
    "\"isr\":[0,1],\"replicas\":["
    "{\"broker\":0,\"log_end_offset\":5000,\"lag\":0,\"in_sync\":true},"
    "{\"broker\":1,\"log_end_offset\":5000,\"lag\":0,\"in_sync\":true},"
    "{\"broker\":2,\"log_end_offset\":3796,\"lag\":1204,\"in_sync\":false}]},"
    "{\"topic\":\"orders\",\"partition\":1,\"leader\":1,\"leader_epoch\":2,"
    "\"high_watermark\":4200,\"log_start_offset\":0,\"log_end_offset\":4210,\"led_here\":true,"
    "\"isr\":[1,2,0],\"replicas\":["
    "{\"broker\":1,\"log_end_offset\":4210,\"in_sync\":true},"
    "{\"broker\":2,\"log_end_offset\":4200,\"in_sync\":true},"
    "{\"broker\":0,\"log_end_offset\":4205,\"in_sync\":true}]},"
    "{\"topic\":\"orders\",\"partition\":2,\"leader\":2,\"leader_epoch\":0,"
    "\"high_watermark\":4800,\"log_start_offset\":0,\"log_end_offset\":4800,\"led_here\":true,"
    "\"isr\":[2,0,1],\"replicas\":["
    "{\"broker\":2,\"log_end_offset\":4800,\"in_sync\":true},"
    "{\"broker\":0,\"log_end_offset\":4800,\"in_sync\":true},"
    "{\"broker\":1,\"log_end_offset\":4800,\"in_sync\":true}]}]}";

typedef struct {
    SmWindow *win;
    guint want;
} Rows;

static gboolean rows_shown(gpointer ud)
{
    Rows *r = ud;
    g_autoptr(GPtrArray) bars = g_ptr_array_new();
    smt_collect_bars(GTK_WIDGET(r->win), bars);
    return bars->len == r->want;
}

static SmWindow *window_with_cluster(SmCluster *c)
{
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(c, CLUSTER, -1, &err));
    CU_ASSERT_TRUE(sm_cluster_apply_text(c, TOPIC, -1, &err));
    SmWindow *win = sm_window_new(NULL, c, NULL);
    gtk_window_set_default_size(GTK_WINDOW(win), 1100, 420);
    sm_window_show_topic(win, "orders");
    sm_window_show_page(win, "partitions");
    gtk_window_present(GTK_WINDOW(win));
    Rows r = {win, 3};
    CU_ASSERT_TRUE(smt_wait(rows_shown, &r, 10) >= 0);
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    return win;
}

/* a mapped GtkLabel whose text holds ud */
static gboolean label_holds(GtkWidget *w, gconstpointer ud)
{
    return GTK_IS_LABEL(w) && gtk_widget_get_mapped(w) &&
           strstr(gtk_label_get_text(GTK_LABEL(w)), ud) != NULL;
}

/* the numbers behind the bars in columns of their own, and the scale said */
static void test_partitions_page_shows_each_replicas_leo_and_lag(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    g_autoptr(GString) texts = g_string_new(NULL);
    smt_collect_texts(sm_window_get_partitions_view(win), texts);
    /* partition 0: HW 5,000, replica 2 at 3,796 */
    CU_ASSERT_PTR_NOT_NULL(
        strstr(texts->str, "5,000\n—\n0: 5,000, 1: 5,000, 2: 3,796\n2: 1,204\n"));
    /* partition 1: the leader 10 ahead of the HW, nobody behind */
    CU_ASSERT_PTR_NOT_NULL(strstr(texts->str, "4,200\n—\n1: 4,210, 2: 4,200, 0: 4,205\n\n"));
    GListModel *cols = gtk_column_view_get_columns(GTK_COLUMN_VIEW(sm_window_get_partitions_view(win)));
    g_autoptr(GString) titles = g_string_new(NULL);
    for (guint i = 0; i < g_list_model_get_n_items(cols); i++) {
        g_autoptr(GtkColumnViewColumn) col = g_list_model_get_item(cols, i);
        g_string_append_printf(titles, "%s|", gtk_column_view_column_get_title(col));
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(titles->str, "|HW|LSO|LEO per replica|Behind HW|"));
    CU_ASSERT_PTR_NOT_NULL(strstr(titles->str, "Replicas: own scale per row"));
    CU_ASSERT_PTR_NOT_NULL(smt_find_widget(GTK_WIDGET(win), label_holds,
                                           "each row's bars on its own scale"));
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

static void test_partitions_page_shows_rows_and_accessible_bars(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    g_autoptr(GPtrArray) bars = g_ptr_array_new();
    smt_collect_bars(GTK_WIDGET(win), bars);
    CU_ASSERT_EQUAL_FATAL(bars->len, 3);
    SmReplicaBar *b0 = smt_find_bar(GTK_WIDGET(win), "orders", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b0);
    const char *want = "replica 0: leader, in sync, at the high watermark; "
                       "replica 1: in sync, at the high watermark; "
                       "replica 2: out of sync, 1,204 behind the high watermark";
    CU_ASSERT_STRING_EQUAL(sm_replica_bar_get_description(b0), want);
    gtk_test_accessible_assert_role(b0, GTK_ACCESSIBLE_ROLE_IMG);
    gtk_test_accessible_assert_property(b0, GTK_ACCESSIBLE_PROPERTY_LABEL, want);
    SmReplicaBar *b1 = smt_find_bar(GTK_WIDGET(win), "orders", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b1);
    CU_ASSERT_PTR_NOT_NULL(strstr(sm_replica_bar_get_description(b1),
                                  "replica 1: leader, in sync, 10 ahead of the high watermark"));
    /* the row texts: AR in assignment order, ISR, OSR "2", HW */
    g_autoptr(GString) texts = g_string_new(NULL);
    smt_collect_texts(sm_window_get_partitions_view(win), texts);
    CU_ASSERT_PTR_NOT_NULL(strstr(texts->str, "0\n0\n4\n0, 1, 2\n0, 1\n2\n1,000\n5,000\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(texts->str, "1\n1\n2\n1, 2, 0\n1, 2, 0\n\n0\n4,200\n"));
    CU_ASSERT_STRING_EQUAL(sm_window_get_health_text(win),
                           "1 topics, 3 partitions: 1 under-replicated, 0 under min ISR, 0 offline");
    /* a partition view follows its rows: replica 2 catches up */
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"seq\":1,\"type\":\"progress\",\"broker\":0,\"time_ms\":1,\"partitions\":[{"
        "\"topic\":\"orders\",\"partition\":0,\"leader\":0,\"led_here\":true,"
        "\"high_watermark\":5000,\"log_start_offset\":1000,\"log_end_offset\":5000,\"replicas\":["
        "{\"broker\":0,\"log_end_offset\":5000,\"in_sync\":true},"
        "{\"broker\":1,\"log_end_offset\":5000,\"in_sync\":true},"
        "{\"broker\":2,\"log_end_offset\":5000,\"in_sync\":true}]}]}",
        -1, &err));
    sm_cluster_flush(c);
    CU_ASSERT_PTR_NOT_NULL(strstr(sm_replica_bar_get_description(b0),
                                  "replica 2: in sync, at the high watermark"));
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

static void test_partitions_page_renders_light_and_dark(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    AdwStyleManager *style = adw_style_manager_get_default();
    const struct {
        AdwColorScheme scheme;
        const char *name;
        const char *osr_colour; /* the hatching's, as the node file spells it */
    } looks[] = {{ADW_COLOR_SCHEME_FORCE_LIGHT, "light", "rgb(198,70,0)"},
                 {ADW_COLOR_SCHEME_FORCE_DARK, "dark", "rgb(255,163,72)"}};
    for (size_t i = 0; i < G_N_ELEMENTS(looks); i++) {
        adw_style_manager_set_color_scheme(style, looks[i].scheme);
        gtk_widget_queue_draw(GTK_WIDGET(win));
        gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
        g_autofree char *png = g_strdup_printf("%s/partitions-%s.png", out_dir, looks[i].name);
        g_autofree char *nodes = g_strdup_printf("%s/partitions-%s.node", out_dir, looks[i].name);
        CU_ASSERT_TRUE_FATAL(smt_render(GTK_WIDGET(win), png, nodes));
        g_autofree char *text = NULL;
        CU_ASSERT_TRUE_FATAL(g_file_get_contents(nodes, &text, NULL, NULL));
        /* one hatched bar (a repeat node) in the out-of-sync colour */
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "repeat {"));
        CU_ASSERT_PTR_NOT_NULL(strstr(text, looks[i].osr_colour));
        g_autoptr(GdkTexture) tex = gdk_texture_new_from_filename(png, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(tex);
        CU_ASSERT_TRUE(gdk_texture_get_width(tex) >= 1000);
        printf("\n  %s: %s\n", looks[i].name, png);
    }
    adw_style_manager_set_color_scheme(style, ADW_COLOR_SCHEME_DEFAULT);
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

static void test_every_page_shows_its_rows(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"seq\":2,\"type\":\"isr_shrink\",\"broker\":0,\"time_ms\":1700000000000,"
        "\"topic\":\"orders\",\"partition\":0,\"leader\":0,\"leader_epoch\":4,\"isr\":[0,1],"
        "\"previous_isr\":[0,1,2],\"removed\":[2],\"added\":[]}",
        -1, &err));
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"broker\":1,\"group_id\":\"billing\",\"state\":\"Stable\",\"protocol\":\"range\","
        "\"generation\":3,\"members\":2,\"lag\":4,\"offsets\":[{\"topic\":\"orders\","
        "\"partition\":0,\"committed_offset\":4996,\"high_watermark\":5000,\"lag\":4}]}",
        -1, &err));
    sm_cluster_flush(c);
    const struct {
        const char *page;
        const char *text;
    } pages[] = {{"cluster", "9192"},
                 {"topics", "orders"},
                 {"groups", "orders-0: 4"},
                 {"events", "orders-0: ISR shrank to [0, 1], replica 2 out of sync"}};
    for (size_t i = 0; i < G_N_ELEMENTS(pages); i++) {
        sm_window_show_page(win, pages[i].page);
        gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
        g_autoptr(GString) texts = g_string_new(NULL);
        smt_collect_texts(GTK_WIDGET(win), texts);
        if (strstr(texts->str, pages[i].text) == NULL) {
            printf("\n  page %s lacks '%s' in:\n%s", pages[i].page, pages[i].text, texts->str);
        }
        CU_ASSERT_PTR_NOT_NULL(strstr(texts->str, pages[i].text));
    }
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

static void test_groups_page_shows_the_chosen_groups_members(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"broker\":1,\"group_id\":\"billing\",\"state\":\"Stable\",\"protocol\":\"range\","
        "\"generation\":3,\"members\":2,\"lag\":4,\"member_list\":["
        "{\"member_id\":\"billing-1-5f0c\",\"client_id\":\"billing-1\","
        "\"client_host\":\"/127.0.0.1\",\"assignment\":[{\"topic\":\"orders\",\"partition\":0},"
        "{\"topic\":\"orders\",\"partition\":1}]},"
        "{\"member_id\":\"billing-2-77aa\",\"client_id\":\"billing-2\","
        "\"client_host\":\"/10.0.0.7\",\"assignment\":[{\"topic\":\"orders\",\"partition\":2}]}],"
        "\"offsets\":[]}",
        -1, &err));
    sm_cluster_flush(c);
    sm_window_show_page(win, "groups");
    sm_window_show_group(win, "billing");
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    g_autoptr(GString) texts = g_string_new(NULL);
    smt_collect_texts(sm_window_get_members_view(win), texts);
    const char *want[] = {"billing-1-5f0c\nbilling-1\n/127.0.0.1\norders-0, orders-1\n",
                          "billing-2-77aa\nbilling-2\n/10.0.0.7\norders-2\n"};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        if (strstr(texts->str, want[i]) == NULL) {
            printf("\n  members lack '%s' in:\n%s", want[i], texts->str);
        }
        CU_ASSERT_PTR_NOT_NULL(strstr(texts->str, want[i]));
    }
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}


/* three brokers' own documents, read together each second: broker b takes
 * (b + 1) x 100 messages and 400,000 bytes a second and sends 1,000,000;
 * in the last second half as much */
static void feed_totals(SmCluster *c)
{
    long long msgs[3] = {0}, in[3] = {0}, out[3] = {0};
    for (int round = 0; round <= 6; round++) {
        for (int b = 0; b < 3; b++) {
            long long k = round == 6 ? 1 : 2;
            if (round > 0) {
                msgs[b] += k * (b + 1) * 50;
                in[b] += k * (b + 1) * 200000;
                out[b] += k * 500000;
            }
            g_autofree char *doc = g_strdup_printf(
                "{\"id\":%d,\"host\":\"127.0.0.1\",\"port\":%d,\"self\":true,\"started_ms\":5,"
                "\"totals\":{\"messages_in\":%lld,\"bytes_in\":%lld,\"bytes_out\":%lld},"
                "\"snapshot\":{\"taken_ms\":%lld}}",
                b, 9092 + b * 100, msgs[b], in[b], out[b], 1700000000000LL + round * 1000LL + b);
            g_autoptr(GError) err = NULL;
            CU_ASSERT_TRUE(sm_cluster_apply_text(c, doc, -1, &err));
        }
    }
    sm_cluster_flush(c);
}

static void test_cluster_page_charts_the_brokers_throughput(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    sm_window_show_page(win, "cluster");
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    /* before any reading */
    SmChart *msgs = SM_CHART(sm_window_get_chart(win, SM_CHART_MESSAGES_IN));
    CU_ASSERT_STRING_EQUAL(sm_chart_get_description(msgs), "messages in: no readings yet");
    feed_totals(c);
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    const struct {
        SmChartKind kind;
        const char *label;
    } want[] = {
        {SM_CHART_MESSAGES_IN, "messages in: 300/s over the last 6 s, peak 600/s"},
        {SM_CHART_BYTES_IN, "bytes in: 1.2\u00a0MB/s over the last 6 s, peak 2.4\u00a0MB/s"},
        {SM_CHART_BYTES_OUT, "bytes out: 1.5\u00a0MB/s over the last 6 s, peak 3.0\u00a0MB/s"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        GtkWidget *chart = sm_window_get_chart(win, want[i].kind);
        CU_ASSERT_PTR_NOT_NULL_FATAL(chart);
        CU_ASSERT_TRUE(gtk_widget_get_mapped(chart));
        CU_ASSERT_TRUE(gtk_widget_get_height(chart) >= 60);
        const char *got = sm_chart_get_description(SM_CHART(chart));
        if (strcmp(got, want[i].label) != 0) {
            printf("\n  chart says '%s', not '%s'\n", got, want[i].label);
        }
        CU_ASSERT_STRING_EQUAL(got, want[i].label);
        gtk_test_accessible_assert_role(chart, GTK_ACCESSIBLE_ROLE_IMG);
        gtk_test_accessible_assert_property(chart, GTK_ACCESSIBLE_PROPERTY_LABEL, want[i].label);
    }
    /* a sparkline per broker row: broker 1's 200 messages a second, then 100 */
    g_autoptr(GPtrArray) charts = g_ptr_array_new();
    smt_collect_charts(GTK_WIDGET(win), charts);
    CU_ASSERT_EQUAL(charts->len, 3 + 3);
    gboolean broker1 = FALSE;
    for (guint i = 0; i < charts->len; i++) {
        const char *d = sm_chart_get_description(charts->pdata[i]);
        broker1 = broker1 || strcmp(d, "messages in: 100/s over the last 6 s, peak 200/s") == 0;
    }
    CU_ASSERT_TRUE(broker1);
    /* and the rows' texts: broker 2's bytes in and out a second now */
    g_autoptr(GString) texts = g_string_new(NULL);
    smt_collect_texts(GTK_WIDGET(win), texts);
    CU_ASSERT_PTR_NOT_NULL(strstr(texts->str, "600.0\u00a0kB/s\n500.0\u00a0kB/s\n"));
    /* a counter going down (broker 0 restarted): its sparkline keeps its
     * peak, the cluster's sum goes on without it */
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"id\":0,\"host\":\"127.0.0.1\",\"port\":9092,\"self\":true,"
        "\"started_ms\":1700000006500,\"totals\":{\"messages_in\":3,"
        "\"bytes_in\":300,\"bytes_out\":0},\"snapshot\":{\"taken_ms\":1700000007000}}",
        -1, &err));
    sm_cluster_flush(c);
    CU_ASSERT_PTR_NOT_NULL(strstr(sm_chart_get_description(msgs), "messages in: 250/s"));
    gboolean reset = FALSE;
    for (guint i = 0; i < charts->len; i++) {
        reset = reset || strcmp(sm_chart_get_description(charts->pdata[i]),
                                "messages in: no rate for the last reading (a counter went "
                                "down), peak 100/s over the last 7 s") == 0;
    }
    CU_ASSERT_TRUE(reset);
    g_string_truncate(texts, 0);
    smt_collect_texts(GTK_WIDGET(win), texts);
    CU_ASSERT_PTR_NOT_NULL(strstr(texts->str, "127.0.0.1:9092\n—\nalive\n\n1\n3\n—\n—\n"));
    for (size_t i = 0; i < 2; i++) {
        adw_style_manager_set_color_scheme(adw_style_manager_get_default(),
                                           i == 0 ? ADW_COLOR_SCHEME_FORCE_LIGHT
                                                  : ADW_COLOR_SCHEME_FORCE_DARK);
        gtk_widget_queue_draw(GTK_WIDGET(win));
        gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
        const char *look = i == 0 ? "light" : "dark";
        g_autofree char *png = g_strdup_printf("%s/cluster-%s.png", out_dir, look);
        g_autofree char *nodes = g_strdup_printf("%s/cluster-%s.node", out_dir, look);
        CU_ASSERT_TRUE_FATAL(smt_render(GTK_WIDGET(win), png, nodes));
        g_autofree char *text = NULL;
        CU_ASSERT_TRUE_FATAL(g_file_get_contents(nodes, &text, NULL, NULL));
        /* the columns in the style's blue and green */
        CU_ASSERT_PTR_NOT_NULL(strstr(text, i == 0 ? "rgb(28,113,216)" : "rgb(98,160,234)"));
        CU_ASSERT_PTR_NOT_NULL(strstr(text, i == 0 ? "rgb(38,162,105)" : "rgb(143,240,164)"));
        printf("\n  %s: %s\n", look, png);
    }
    adw_style_manager_set_color_scheme(adw_style_manager_get_default(), ADW_COLOR_SCHEME_DEFAULT);
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

static void test_groups_page_charts_the_chosen_groups_lag(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    GtkWidget *chart = sm_window_get_chart(win, SM_CHART_LAG);
    CU_ASSERT_STRING_EQUAL(sm_chart_get_description(SM_CHART(chart)),
                           "lag of the chosen group: no readings yet");
    const long long lags[] = {1200, 3400, 2500};
    for (guint i = 0; i < G_N_ELEMENTS(lags); i++) {
        g_autofree char *doc = g_strdup_printf(
            "{\"broker\":1,\"group_id\":\"billing\",\"state\":\"Stable\",\"members\":1,"
            "\"lag\":%lld,\"offsets\":[],\"snapshot\":{\"taken_ms\":%lld}}",
            lags[i], 1700000000000LL + 5000LL * i);
        g_autoptr(GError) err = NULL;
        CU_ASSERT_TRUE(sm_cluster_apply_text(c, doc, -1, &err));
    }
    sm_cluster_flush(c);
    sm_window_show_page(win, "groups");
    sm_window_show_group(win, "billing");
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    CU_ASSERT_TRUE(gtk_widget_get_mapped(chart));
    const char *want = "lag of billing: 2,500 over the last 10 s, peak 3,400";
    CU_ASSERT_STRING_EQUAL(sm_chart_get_description(SM_CHART(chart)), want);
    gtk_test_accessible_assert_role(chart, GTK_ACCESSIBLE_ROLE_IMG);
    gtk_test_accessible_assert_property(chart, GTK_ACCESSIBLE_PROPERTY_LABEL, want);
    /* wider than the row's sparkline */
    CU_ASSERT_TRUE(gtk_widget_get_width(chart) >= 600);
    /* the next document moves it */
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"broker\":1,\"group_id\":\"billing\",\"lag\":0,\"offsets\":[],"
        "\"snapshot\":{\"taken_ms\":1700000015000}}",
        -1, &err));
    sm_cluster_flush(c);
    CU_ASSERT_STRING_EQUAL(sm_chart_get_description(SM_CHART(chart)),
                           "lag of billing: 0 over the last 15 s, peak 3,400");
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

/* One partition of a topic, led by broker 0 with every replica in sync. */
static char *one_topic(const char *name, int partitions)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "{\"broker\":0,\"name\":\"%s\",\"partitions\":[", name);
    for (int p = 0; p < partitions; p++) {
        g_string_append_printf(
            s,
            "%s{\"topic\":\"%s\",\"partition\":%d,\"leader\":0,\"leader_epoch\":0,"
            "\"high_watermark\":10,\"log_start_offset\":0,\"log_end_offset\":10,"
            "\"led_here\":true,\"isr\":[0],\"replicas\":["
            "{\"broker\":0,\"log_end_offset\":10,\"in_sync\":true}]}",
            p > 0 ? "," : "", name, p);
    }
    g_string_append(s, "]}");
    return g_string_free(s, FALSE);
}

/* `samsa-monitor --topic zeta`: the topic is asked for before the cluster
 * has any; when topics come, alphabetically before it too, zeta's
 * partitions are the ones shown (the drop-down's own reselection as its
 * list fills is not taken for a choice) */
static void test_topic_asked_for_before_it_is_known_is_shown(void)
{
    SmCluster *c = sm_cluster_new();
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(c, CLUSTER, -1, &err));
    SmWindow *win = sm_window_new(NULL, c, NULL);
    gtk_window_set_default_size(GTK_WINDOW(win), 1100, 420);
    sm_window_show_topic(win, "zeta");
    sm_window_show_page(win, "partitions");
    gtk_window_present(GTK_WINDOW(win));
    sm_cluster_flush(c);
    g_autofree char *alpha = one_topic("alpha", 1);
    g_autofree char *zeta = one_topic("zeta", 2);
    CU_ASSERT_TRUE(sm_cluster_apply_text(c, alpha, -1, &err));
    CU_ASSERT_TRUE(sm_cluster_apply_text(c, zeta, -1, &err));
    sm_cluster_flush(c);
    Rows r = {win, 2};
    CU_ASSERT_TRUE(smt_wait(rows_shown, &r, 10) >= 0);
    CU_ASSERT_PTR_NOT_NULL(smt_find_bar(GTK_WIDGET(win), "zeta", 1));
    CU_ASSERT_PTR_NULL(smt_find_bar(GTK_WIDGET(win), "alpha", 0));
    /* and a topic made later does not take its place either */
    g_autofree char *beta = one_topic("beta", 1);
    CU_ASSERT_TRUE(sm_cluster_apply_text(c, beta, -1, &err));
    sm_cluster_flush(c);
    CU_ASSERT_PTR_NOT_NULL(smt_find_bar(GTK_WIDGET(win), "zeta", 0));
    CU_ASSERT_PTR_NULL(smt_find_bar(GTK_WIDGET(win), "beta", 0));
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

/* a mapped GtkInscription or GtkLabel whose text is ud */
static gboolean has_text(GtkWidget *w, gconstpointer ud)
{
    return gtk_widget_get_mapped(w) &&
           ((GTK_IS_INSCRIPTION(w) && g_strcmp0(gtk_inscription_get_text(GTK_INSCRIPTION(w)), ud) == 0) ||
            (GTK_IS_LABEL(w) && g_strcmp0(gtk_label_get_text(GTK_LABEL(w)), ud) == 0));
}

static GtkWidget *find_text(GtkWidget *w, const char *text)
{
    return smt_find_widget(w, has_text, text);
}

typedef struct {
    SmWindow *win;
    const char *text;
    const char *cls;
} Shown;

static gboolean text_shown(gpointer ud)
{
    Shown *s = ud;
    GtkWidget *w = find_text(GTK_WIDGET(s->win), s->text);
    return w != NULL && (s->cls == NULL || gtk_widget_has_css_class(w, s->cls));
}

static void assert_shown(SmWindow *win, const char *text, const char *cls)
{
    Shown s = {win, text, cls};
    gboolean ok = smt_wait(text_shown, &s, 10) >= 0;
    if (!ok) {
        g_autoptr(GString) texts = g_string_new(NULL);
        smt_collect_texts(GTK_WIDGET(win), texts);
        printf("\n  '%s' (%s) not shown; the cells:\n%s", text, cls ? cls : "any", texts->str);
    }
    CU_ASSERT_TRUE(ok);
}

static gboolean on_partitions_page(gpointer ud)
{
    return g_strcmp0(adw_view_stack_get_visible_child_name(ADW_VIEW_STACK(gtk_widget_get_ancestor(
                         sm_window_get_partitions_view(SM_WINDOW(ud)), ADW_TYPE_VIEW_STACK))),
                     "partitions") == 0;
}

/* health at a glance: the State cells coloured (GONE in the error colour),
 * a broker leading nothing flagged, the unhealthy partitions one click
 * from the counts and one more from their topic's page; the events newest
 * first, no "leader 0 (was 0)" */
static void test_cluster_page_shows_health_at_a_glance(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    sm_window_show_page(win, "cluster");
    assert_shown(win, "alive", "success");
    /* broker 2 gone; partition 1 moved from broker 1 to broker 0 (which
     * leaves broker 1 leading nothing); partition 0 re-elected its leader */
    const char *msgs[] = {
        "{\"seq\":2,\"type\":\"broker_down\",\"broker\":0,\"time_ms\":1700000000000,\"id\":2}",
        "{\"seq\":3,\"type\":\"leader_change\",\"broker\":0,\"time_ms\":1700000001000,"
        "\"topic\":\"orders\",\"partition\":2,\"leader\":0,\"leader_epoch\":1,"
        "\"previous_leader\":2}",
        "{\"seq\":4,\"type\":\"leader_change\",\"broker\":0,\"time_ms\":1700000002000,"
        "\"topic\":\"orders\",\"partition\":1,\"leader\":0,\"leader_epoch\":3,"
        "\"previous_leader\":1}",
        "{\"seq\":5,\"type\":\"leader_change\",\"broker\":0,\"time_ms\":1700000003000,"
        "\"topic\":\"orders\",\"partition\":0,\"leader\":0,\"leader_epoch\":5,"
        "\"previous_leader\":0}",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(msgs); i++) {
        g_autoptr(GError) err = NULL;
        CU_ASSERT_TRUE(sm_cluster_apply_text(c, msgs[i], -1, &err));
    }
    sm_cluster_flush(c);
    assert_shown(win, "GONE", "error");
    assert_shown(win, "0: leads nothing", "warning");
    /* the unhealthy partition, one click away */
    GtkExpander *problems = GTK_EXPANDER(sm_window_get_problems(win));
    CU_ASSERT_TRUE(gtk_widget_get_visible(GTK_WIDGET(problems)));
    CU_ASSERT_PTR_NOT_NULL(strstr(gtk_expander_get_label(problems), "1 under-replicated"));
    gtk_expander_set_expanded(problems, TRUE);
    const char *row = "orders-0: under-replicated, ISR [0, 1], out of sync [2]";
    assert_shown(win, row, "warning");
    GtkWidget *label = find_text(GTK_WIDGET(win), row);
    GtkWidget *r = label != NULL ? gtk_widget_get_ancestor(label, GTK_TYPE_LIST_BOX_ROW) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    g_signal_emit_by_name(r, "activate");
    CU_ASSERT_TRUE(smt_wait(on_partitions_page, win, 10) >= 0);
    /* events: newest first, and no row for partition 0's same leader */
    GListModel *events = sm_cluster_get_events(c);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(events), 2);
    g_autoptr(SmEvent) first = g_list_model_get_item(events, 0);
    CU_ASSERT_STRING_EQUAL(first->text, "orders-1: leader 0 (was 1), epoch 3");
    sm_window_show_page(win, "events");
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    g_autoptr(GString) texts = g_string_new(NULL);
    smt_collect_texts(GTK_WIDGET(win), texts);
    /* broker 2's going and the leader moved off it: one group */
    const char *newest = strstr(texts->str, "orders-1: leader 0 (was 1)");
    const char *older = strstr(texts->str, "broker 2 lost: gone, 1 leader change");
    CU_ASSERT_TRUE(newest != NULL && older != NULL && newest < older);
    CU_ASSERT_PTR_NULL(strstr(texts->str, "(was 0)"));
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

static gboolean named(GtkWidget *w, gconstpointer name)
{
    return g_strcmp0(gtk_widget_get_name(w), name) == 0;
}

static gboolean is_column_view(GtkWidget *w, gconstpointer ud)
{
    (void)ud;
    return GTK_IS_COLUMN_VIEW(w);
}

typedef struct {
    GtkWidget *view;
    const char *text; /* shown */
    const char *then; /* shown below it; NULL: no matter */
    const char *not;  /* not shown; NULL: no matter */
} EventsShown;

static gboolean events_shown(gpointer ud)
{
    EventsShown *e = ud;
    g_autoptr(GString) texts = g_string_new(NULL);
    smt_collect_texts(e->view, texts);
    const char *at = strstr(texts->str, e->text);
    return at != NULL && (e->then == NULL || strstr(at, e->then) != NULL) &&
           (e->not == NULL || strstr(texts->str, e->not) == NULL);
}

/* the events page: one lost broker one row whose changes open under it,
 * the newest row first, a choice of kind and a text filter */
static void test_events_page_groups_and_filters(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    GString *msgs = g_string_new(NULL);
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c, "{\"seq\":2,\"type\":\"broker_down\",\"broker\":0,\"time_ms\":1700000000000,\"id\":2}",
        -1, &err));
    for (int p = 0; p < 3; p++) {
        g_string_printf(msgs,
                        "{\"seq\":%d,\"type\":\"isr_shrink\",\"broker\":0,\"time_ms\":%lld,"
                        "\"topic\":\"orders\",\"partition\":%d,\"leader\":%d,\"leader_epoch\":9,"
                        "\"isr\":[0,1],\"removed\":[2],\"added\":[]}",
                        3 + p, 1700000001000LL + p, p, p == 2 ? 0 : p);
        CU_ASSERT_TRUE(sm_cluster_apply_text(c, msgs->str, -1, &err));
    }
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c, "{\"seq\":9,\"type\":\"topic_created\",\"broker\":0,\"time_ms\":1700000009000,"
           "\"topic\":\"payments\"}",
        -1, &err));
    g_string_free(msgs, TRUE);
    sm_cluster_flush(c);
    sm_window_show_page(win, "events");
    GtkWidget *search = smt_find_widget(GTK_WIDGET(win), named, "event-search");
    GtkWidget *kind = smt_find_widget(GTK_WIDGET(win), named, "event-kind");
    CU_ASSERT_PTR_NOT_NULL_FATAL(search);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kind);
    GtkWidget *view = smt_find_widget(gtk_widget_get_parent(gtk_widget_get_parent(search)),
                                      is_column_view, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(view);
    /* two rows, the newest first; the group's changes folded */
    EventsShown folded = {view, "topic payments created", "broker 2 lost: gone, 3 ISR shrinks",
                          "orders-1: ISR shrank"};
    CU_ASSERT_TRUE(smt_wait(events_shown, &folded, 10) >= 0);
    GListModel *rows = G_LIST_MODEL(gtk_column_view_get_model(GTK_COLUMN_VIEW(view)));
    CU_ASSERT_EQUAL(g_list_model_get_n_items(rows), 2);
    /* opened: its changes under it, newest first */
    g_autoptr(GtkTreeListRow) group = g_list_model_get_item(rows, 1);
    CU_ASSERT_TRUE(gtk_tree_list_row_is_expandable(group));
    gtk_tree_list_row_set_expanded(group, TRUE);
    EventsShown open = {view, "broker 2 lost: gone, 3 ISR shrinks",
                        "orders-2: ISR shrank to [0, 1], replica 2 out of sync", NULL};
    CU_ASSERT_TRUE(smt_wait(events_shown, &open, 10) >= 0);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(rows), 6);
    /* the topics and controller only */
    gtk_drop_down_set_selected(GTK_DROP_DOWN(kind), 4);
    EventsShown topics = {view, "topic payments created", NULL, "broker 2 lost"};
    CU_ASSERT_TRUE(smt_wait(events_shown, &topics, 10) >= 0);
    /* all kinds, a text one change of the group holds: the group */
    gtk_drop_down_set_selected(GTK_DROP_DOWN(kind), 0);
    gtk_editable_set_text(GTK_EDITABLE(search), "orders-1");
    EventsShown text = {view, "broker 2 lost", NULL, "topic payments created"};
    CU_ASSERT_TRUE(smt_wait(events_shown, &text, 10) >= 0);
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

/* a mapped inscription showing exactly ud */
static gboolean inscription_of(GtkWidget *w, gconstpointer ud)
{
    return GTK_IS_INSCRIPTION(w) && gtk_widget_get_mapped(w) &&
           g_strcmp0(gtk_inscription_get_text(GTK_INSCRIPTION(w)), ud) == 0;
}

/* text is shown whole: its cell at least as wide as the text drawn */
static gboolean shown_whole(GtkWidget *root, const char *text)
{
    GtkWidget *w = smt_find_widget(root, inscription_of, text);
    if (w == NULL) {
        printf("\n  '%s' not shown", text);
        return FALSE;
    }
    PangoLayout *layout = gtk_widget_create_pango_layout(w, text);
    int width = 0;
    pango_layout_get_pixel_size(layout, &width, NULL);
    g_object_unref(layout);
    if (width > gtk_widget_get_width(w)) {
        printf("\n  '%s' cut: %d px of text in %d px", text, width, gtk_widget_get_width(w));
        return FALSE;
    }
    return TRUE;
}

typedef struct {
    GtkWidget *root;
    const char *const *texts;
    size_t n;
} Whole;

static gboolean all_shown_whole(gpointer ud)
{
    const Whole *w = ud;
    for (size_t i = 0; i < w->n; i++) {
        if (!shown_whole(w->root, w->texts[i])) {
            return FALSE;
        }
    }
    return TRUE;
}

/* at the default size (1100x640) the host with its port, the role, a
 * group's id and a member's are not cut */
static void test_columns_are_not_cut_at_the_default_size(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    gtk_window_set_default_size(GTK_WINDOW(win), 1100, 640);
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"broker\":1,\"group_id\":\"billing-service-consumers\",\"state\":\"Stable\","
        "\"protocol\":\"range\",\"generation\":3,\"members\":1,\"lag\":4,\"member_list\":["
        "{\"member_id\":\"consumer-1-5f8c0e5e-0c1a-4a1e-9a8b-2b1e6a0e4c1f\","
        "\"client_id\":\"consumer-1\",\"client_host\":\"/127.0.0.1\","
        "\"assignment\":[{\"topic\":\"orders\",\"partition\":0}]}],\"offsets\":[]}",
        -1, &err));
    sm_cluster_flush(c);
    sm_window_show_page(win, "cluster");
    static const char *const brokers[] = {"127.0.0.1:9092", "127.0.0.1:9292", "controller"};
    Whole b = {GTK_WIDGET(win), brokers, G_N_ELEMENTS(brokers)};
    CU_ASSERT_TRUE(smt_wait(all_shown_whole, &b, 5) >= 0);
    g_autofree char *cluster_png = g_build_filename(out_dir, "columns-cluster-1100x640.png", NULL);
    (void)smt_render(GTK_WIDGET(win), cluster_png, NULL);
    sm_window_show_page(win, "groups");
    sm_window_show_group(win, "billing-service-consumers");
    static const char *const groups[] = {"billing-service-consumers",
                                         "consumer-1-5f8c0e5e-0c1a-4a1e-9a8b-2b1e6a0e4c1f"};
    Whole g = {GTK_WIDGET(win), groups, G_N_ELEMENTS(groups)};
    CU_ASSERT_TRUE(smt_wait(all_shown_whole, &g, 5) >= 0);
    g_autofree char *png = g_build_filename(out_dir, "columns-groups-1100x640.png", NULL);
    (void)smt_render(GTK_WIDGET(win), png, NULL);
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

/* the partitions page's topic configs, from /v1/topics/{t} */
static void test_partitions_page_shows_the_topics_configs(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    GtkWidget *found = smt_find_widget(GTK_WIDGET(win), named, "topic-configs");
    CU_ASSERT_PTR_NOT_NULL_FATAL(found);
    GtkExpander *expander = GTK_EXPANDER(found);
    GtkWidget *label = gtk_expander_get_child(expander);
    CU_ASSERT_STRING_EQUAL(gtk_expander_get_label(expander), "Configs of orders: not read yet");
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"broker\":1,\"name\":\"orders\",\"configs\":{\"retention.ms\":\"86400000\","
        "\"cleanup.policy\":\"delete\",\"sasl.secret\":null},\"configs_from\":0,"
        "\"partitions\":[]}",
        -1, &err));
    sm_cluster_flush(c);
    CU_ASSERT_STRING_EQUAL(gtk_expander_get_label(expander), "Configs of orders (3, from broker 0)");
    CU_ASSERT_STRING_EQUAL(gtk_label_get_text(GTK_LABEL(label)),
                           "cleanup.policy = delete  ·  retention.ms = 86400000  ·  "
                           "sasl.secret = (hidden)");
    /* folded until opened: the partitions first */
    CU_ASSERT_FALSE(gtk_widget_get_mapped(label));
    gtk_expander_set_expanded(expander, TRUE);
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    CU_ASSERT_TRUE(gtk_widget_get_mapped(label));
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}


/* the Messages page: what it reads from, and why it could not, shown */
static void test_messages_page_says_why_it_cannot_read(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    sm_window_show_page(win, "messages");
    SmBrowser *b = smt_find_browser(GTK_WIDGET(win));
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    sm_browser_read(b, "orders", 0, SM_FROM_TIME, "yesterday", 5);
    CU_ASSERT_STRING_EQUAL(sm_browser_get_status(b),
                           "a time reads as 2026-12-06T09:30:00 or milliseconds since 1970");
    /* the brokers of CLUSTER: nothing listens on their ports */
    sm_browser_read(b, "orders", 0, SM_FROM_OFFSET, "4980", 5);
    printf("\n  status: %s", sm_browser_get_status(b));
    CU_ASSERT_TRUE(g_str_has_prefix(sm_browser_get_status(b), "reading orders-0 from offset 4,980"));
    CU_ASSERT_TRUE(smt_wait(smt_browser_done, b, 60) >= 0);
    printf("\n  status: %s", sm_browser_get_status(b));
    CU_ASSERT_TRUE(g_str_has_prefix(sm_browser_get_status(b),
                                    "could not read orders-0 from offset 4,980: "));
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

/* the changes wait for their confirmation: its words, and cancel changes
 * nothing */
static void test_changes_wait_for_their_confirmation(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    AdwMessageDialog *d = sm_window_confirm_delete_topic(win, "orders");
    CU_ASSERT_STRING_EQUAL(adw_message_dialog_get_heading(d), "Delete topic orders?");
    CU_ASSERT_PTR_NOT_NULL(strstr(adw_message_dialog_get_body(d), "Its 3 partitions and every record"));
    CU_ASSERT_EQUAL(adw_message_dialog_get_response_appearance(d, "delete"),
                    ADW_RESPONSE_DESTRUCTIVE);
    CU_ASSERT_STRING_EQUAL(adw_message_dialog_get_default_response(d), "cancel");
    adw_message_dialog_response(d, "cancel");
    gtk_window_destroy(GTK_WINDOW(d));
    d = sm_window_confirm_reset_offsets(win, "billing", TRUE);
    CU_ASSERT_STRING_EQUAL(adw_message_dialog_get_heading(d), "Reset the offsets of billing?");
    CU_ASSERT_PTR_NOT_NULL(strstr(adw_message_dialog_get_body(d), "no active member"));
    adw_message_dialog_response(d, "cancel");
    gtk_window_destroy(GTK_WINDOW(d));
    CU_ASSERT_PTR_NOT_NULL(sm_cluster_find_topic(c, "orders"));
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

static gboolean never(gpointer ud)
{
    (void)ud;
    return FALSE;
}

/* transactions: an LSO held behind the HW marked in amber with the
 * transaction holding it; the transactions page's rows; the abort waits
 * for its confirmation (its words, the destructive response not the
 * default, cancel changing nothing); PNGs light and dark */
static void test_transactions_page_and_a_held_lso(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"broker\":0,\"name\":\"held\",\"partitions\":[{\"topic\":\"held\",\"partition\":0,"
        "\"leader\":0,\"leader_epoch\":0,\"high_watermark\":5000,\"last_stable_offset\":4980,"
        "\"log_start_offset\":0,\"log_end_offset\":5000,\"open_transactions\":[\"copier-1\"],"
        "\"led_here\":true,\"isr\":[0],\"replicas\":[{\"broker\":0,\"log_end_offset\":5000,"
        "\"lag\":0,\"in_sync\":true}]},{\"topic\":\"held\",\"partition\":1,\"leader\":0,"
        "\"leader_epoch\":0,\"high_watermark\":300,\"last_stable_offset\":300,"
        "\"log_start_offset\":0,\"log_end_offset\":300,\"open_transactions\":[],"
        "\"led_here\":true,\"isr\":[0],\"replicas\":[{\"broker\":0,\"log_end_offset\":300,"
        "\"lag\":0,\"in_sync\":true}]}]}",
        -1, &err));
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"broker\":0,\"transactions\":[{\"transactional_id\":\"copier-1\",\"producer_id\":1000,"
        "\"producer_epoch\":0,\"state\":\"Ongoing\",\"timeout_ms\":60000,\"age_ms\":42500,"
        "\"partitions\":[{\"topic\":\"held\",\"partition\":0}]},{\"transactional_id\":\"idle-2\","
        "\"producer_id\":1001,\"producer_epoch\":4,\"state\":\"CompleteCommit\","
        "\"timeout_ms\":10000,\"age_ms\":null,\"partitions\":[]}]}",
        -1, &err));
    sm_window_show_topic(win, "held");
    assert_shown(win, "4,980 (copier-1)", "warning");
    CU_ASSERT_STRING_EQUAL(gtk_widget_get_tooltip_text(find_text(GTK_WIDGET(win), "4,980 (copier-1)")),
                           "The last stable offset is held 20 behind the high watermark by the "
                           "open transaction of copier-1: read_committed consumers read below it");
    assert_shown(win, "300", NULL);
    GtkWidget *stable = find_text(GTK_WIDGET(win), "300");
    CU_ASSERT_FALSE(stable != NULL && gtk_widget_has_css_class(stable, "warning"));

    sm_window_show_page(win, "transactions");
    assert_shown(win, "copier-1", NULL);
    assert_shown(win, "Ongoing", "warning");
    assert_shown(win, "1000, epoch 0", NULL);
    assert_shown(win, "42.5 s", NULL);
    assert_shown(win, "held-0", NULL);
    assert_shown(win, "CompleteCommit", NULL);
    CU_ASSERT_FALSE(gtk_widget_has_css_class(find_text(GTK_WIDGET(win), "CompleteCommit"),
                                             "warning"));
    /* the header's switcher settles (its crossfade between its wide and
     * narrow looks) before the pictures: a pause for looks, not a check */
    (void)smt_wait(never, NULL, 1.0);
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    AdwStyleManager *style = adw_style_manager_get_default();
    const AdwColorScheme schemes[] = {ADW_COLOR_SCHEME_FORCE_LIGHT, ADW_COLOR_SCHEME_FORCE_DARK};
    const char *const names[] = {"light", "dark"};
    for (size_t i = 0; i < G_N_ELEMENTS(schemes); i++) {
        adw_style_manager_set_color_scheme(style, schemes[i]);
        gtk_widget_queue_draw(GTK_WIDGET(win));
        gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
        g_autofree char *png = g_strdup_printf("%s/transactions-%s.png", out_dir, names[i]);
        g_autofree char *nodes = g_strdup_printf("%s/transactions-%s.node", out_dir, names[i]);
        CU_ASSERT_TRUE(smt_render(GTK_WIDGET(win), png, nodes));
    }
    adw_style_manager_set_color_scheme(style, ADW_COLOR_SCHEME_DEFAULT);

    AdwMessageDialog *d = sm_window_confirm_abort_transaction(win, "copier-1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_STRING_EQUAL(adw_message_dialog_get_heading(d), "Abort transaction copier-1?");
    CU_ASSERT_PTR_NOT_NULL(strstr(adw_message_dialog_get_body(d), "on held-0 are aborted"));
    CU_ASSERT_PTR_NOT_NULL(strstr(adw_message_dialog_get_body(d),
                                  "Producer 1000 (epoch 0) is fenced"));
    CU_ASSERT_EQUAL(adw_message_dialog_get_response_appearance(d, "abort"),
                    ADW_RESPONSE_DESTRUCTIVE);
    CU_ASSERT_STRING_EQUAL(adw_message_dialog_get_default_response(d), "cancel");
    adw_message_dialog_response(d, "cancel");
    gtk_window_destroy(GTK_WINDOW(d));
    CU_ASSERT_PTR_NULL(sm_window_confirm_abort_transaction(win, "nobody"));
    CU_ASSERT_STRING_EQUAL(sm_cluster_find_transaction(c, "copier-1")->state, "Ongoing");
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

typedef struct {
    SmWindow *win;
    const char *text;
} BarSays;

/* a shown bar's accessible label holds a text (a replica's description) */
static gboolean bar_says(gpointer ud)
{
    const BarSays *want = ud;
    g_autoptr(GPtrArray) bars = g_ptr_array_new();
    smt_collect_bars(GTK_WIDGET(want->win), bars);
    for (guint i = 0; i < bars->len; i++) {
        if (strstr(sm_replica_bar_get_description(bars->pdata[i]), want->text) != NULL) {
            return TRUE;
        }
    }
    return FALSE;
}

/* a partition being moved on the partitions page (its move in amber, the
 * replica being added and the one leaving in its bars' labels), the topic's
 * replication throttles, the Moves page's rows with the LEO being added
 * against the HW, and the Quotas page: the quotas in force and a client
 * throttled now in amber; PNGs of the two pages */
static void test_moves_throttles_and_quotas_pages(void)
{
    SmCluster *c = sm_cluster_new();
    SmWindow *win = window_with_cluster(c);
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"broker\":0,\"name\":\"shown\",\"configs\":{"
        "\"leader.replication.throttled.replicas\":\"0:1,0:2\","
        "\"follower.replication.throttled.replicas\":\"0:3\"},\"configs_from\":0,"
        "\"partitions\":[" SMT_SHOWN_0_MOVING ","
        "{\"topic\":\"shown\",\"partition\":1,\"leader\":1,\"leader_epoch\":0,"
        "\"high_watermark\":5,\"log_start_offset\":0,\"log_end_offset\":5,\"led_here\":true,"
        "\"isr\":[1],\"replicas\":[{\"broker\":1,\"log_end_offset\":5,\"in_sync\":true}],"
        "\"reassignment\":null}]}",
        -1, &err));
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"broker\":0,\"quotas\":[{\"user\":null,\"client_id\":\"held\","
        "\"producer_byte_rate\":51200.0,\"consumer_byte_rate\":null,"
        "\"request_percentage\":null}],\"clients\":[{\"type\":\"Produce\",\"user\":\"\","
        "\"client_id\":\"held\",\"quota\":51200.0,\"rate\":52011.4,"
        "\"throttle_time_ms_total\":15720,\"throttle_time_ms_left\":412,\"throttled\":true},"
        "{\"type\":\"Fetch\",\"user\":\"\",\"client_id\":\"free\",\"quota\":null,\"rate\":10.0,"
        "\"throttle_time_ms_total\":0,\"throttle_time_ms_left\":0}],\"throttled_now\":1}",
        -1, &err));
    sm_window_show_topic(win, "shown");
    assert_shown(win, "to 1, 2, 3: adding 3, removing 0 · throttled: leader 1, 2; follower 3",
                 "warning");
    CU_ASSERT_STRING_EQUAL(
        gtk_widget_get_tooltip_text(find_text(
            GTK_WIDGET(win), "to 1, 2, 3: adding 3, removing 0 · throttled: leader 1, 2; follower 3")),
        "Being moved to replicas 1, 2, 3; being added (log end offset of the high watermark): "
        "3: 1 of 12 (11 behind); being removed: 0.\nReplication throttled (the topic's configs): "
        "leader 1, 2; follower 3");
    BarSays added = {win, "replica 3: being added, out of sync, 11 behind the high watermark"};
    CU_ASSERT_TRUE(smt_wait(bar_says, &added, 10) >= 0);
    SmReplicaBar *b0 = smt_find_bar(GTK_WIDGET(win), "shown", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b0);
    const char *want = "replica 1: in sync, at the high watermark; "
                       "replica 2: in sync, at the high watermark; "
                       "replica 3: being added, out of sync, 11 behind the high watermark; "
                       "replica 0: leader, being removed, in sync, at the high watermark";
    CU_ASSERT_STRING_EQUAL(sm_replica_bar_get_description(b0), want);
    gtk_test_accessible_assert_property(b0, GTK_ACCESSIBLE_PROPERTY_LABEL, want);
    /* partition 1: neither moving nor throttled, an empty cell */
    SmReplicaBar *b1 = smt_find_bar(GTK_WIDGET(win), "shown", 1);
    CU_ASSERT_PTR_NOT_NULL(b1);

    sm_window_show_page(win, "moves");
    assert_shown(win, "shown-0", NULL);
    assert_shown(win, "3: 1 of 12 (11 behind)", "warning");
    assert_shown(win, "1, 2, 3, 0", NULL);
    assert_shown(win, "leader 1, 2; follower 3", NULL);
    CU_ASSERT_PTR_NULL(find_text(GTK_WIDGET(win), "shown-1"));
    BarSays on_moves = {win, "replica 0: leader, being removed"};
    CU_ASSERT_TRUE(smt_wait(bar_says, &on_moves, 10) >= 0);
    (void)smt_wait(never, NULL, 1.0); /* the switcher's crossfade, for the picture */
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    g_autofree char *moves_png = g_build_filename(out_dir, "moves-light.png", NULL);
    CU_ASSERT_TRUE(smt_render(GTK_WIDGET(win), moves_png, NULL));

    sm_window_show_page(win, "quotas");
    assert_shown(win, "51,200 B/s", NULL);
    assert_shown(win, "held", NULL);
    assert_shown(win, "52,011 B/s of 51,200", NULL);
    assert_shown(win, "throttled: 412 ms left", "warning");
    assert_shown(win, "15,720 ms", NULL);
    assert_shown(win, "10 B/s, no quota", NULL);
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    g_autofree char *quotas_png = g_build_filename(out_dir, "quotas-light.png", NULL);
    CU_ASSERT_TRUE(smt_render(GTK_WIDGET(win), quotas_png, NULL));

    /* the move done and the throttle over: the rows follow */
    CU_ASSERT_TRUE(sm_cluster_apply_text(c, "{\"broker\":1,\"reassignments\":[]}", -1, &err));
    CU_ASSERT_TRUE(sm_cluster_apply_text(
        c,
        "{\"broker\":0,\"quotas\":[{\"user\":null,\"client_id\":\"held\","
        "\"producer_byte_rate\":51200.0}],\"clients\":[{\"type\":\"Produce\",\"user\":\"\","
        "\"client_id\":\"held\",\"quota\":51200.0,\"rate\":40000.0,"
        "\"throttle_time_ms_total\":15720,\"throttle_time_ms_left\":0}]}",
        -1, &err));
    assert_shown(win, "40,000 B/s of 51,200", NULL);
    CU_ASSERT_PTR_NULL(find_text(GTK_WIDGET(win), "throttled: 412 ms left"));
    sm_window_show_page(win, "moves");
    gtk_test_widget_wait_for_draw(GTK_WIDGET(win));
    CU_ASSERT_PTR_NULL(find_text(GTK_WIDGET(win), "shown-0"));
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
}

static gboolean brokers_shown(gpointer ud)
{
    g_autoptr(GString) texts = g_string_new(NULL);
    smt_collect_texts(GTK_WIDGET(ud), texts);
    return strstr(texts->str, "127.0.0.1:9292") != NULL;
}

/* construct properties: g_object_new alone gives a whole window, wired to
 * the model it was given (or to an empty one of its own) */
static void test_window_is_built_through_construct_properties(void)
{
    SmCluster *c = sm_cluster_new();
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE(sm_cluster_apply_text(c, CLUSTER, -1, &err));
    SmWindow *win = g_object_new(SM_TYPE_WINDOW, "cluster", c, NULL);
    SmCluster *got = NULL;
    g_object_get(win, "cluster", &got, NULL);
    CU_ASSERT_PTR_EQUAL(got, c);
    g_clear_object(&got);
    gtk_window_set_default_size(GTK_WINDOW(win), 1100, 640);
    sm_window_show_page(win, "cluster");
    gtk_window_present(GTK_WINDOW(win));
    CU_ASSERT_TRUE(smt_wait(brokers_shown, win, 10) >= 0);
    gtk_window_destroy(GTK_WINDOW(win));
    g_object_unref(c);
    SmWindow *bare = g_object_new(SM_TYPE_WINDOW, NULL);
    CU_ASSERT_PTR_NOT_NULL(sm_window_get_cluster(bare));
    CU_ASSERT_STRING_EQUAL(sm_window_get_health_text(bare),
                           "0 topics, 0 partitions: 0 under-replicated, 0 under min ISR, 0 offline");
    gtk_window_destroy(GTK_WINDOW(bare));
}

static CU_TestInfo tests[] = {
    {"transactions_page_and_a_held_lso", test_transactions_page_and_a_held_lso},
    {"events_page_groups_and_filters", test_events_page_groups_and_filters},
    {"changes_wait_for_their_confirmation", test_changes_wait_for_their_confirmation},
    {"messages_page_says_why_it_cannot_read", test_messages_page_says_why_it_cannot_read},
    {"partitions_page_shows_the_topics_configs", test_partitions_page_shows_the_topics_configs},
    {"columns_are_not_cut_at_the_default_size", test_columns_are_not_cut_at_the_default_size},
    {"window_is_built_through_construct_properties",
     test_window_is_built_through_construct_properties},
    {"partitions_page_shows_rows_and_accessible_bars",
     test_partitions_page_shows_rows_and_accessible_bars},
    {"partitions_page_shows_each_replicas_leo_and_lag",
     test_partitions_page_shows_each_replicas_leo_and_lag},
    {"partitions_page_renders_light_and_dark", test_partitions_page_renders_light_and_dark},
    {"every_page_shows_its_rows", test_every_page_shows_its_rows},
    {"cluster_page_shows_health_at_a_glance", test_cluster_page_shows_health_at_a_glance},
    {"groups_page_shows_the_chosen_groups_members",
     test_groups_page_shows_the_chosen_groups_members},
    {"cluster_page_charts_the_brokers_throughput",
     test_cluster_page_charts_the_brokers_throughput},
    {"groups_page_charts_the_chosen_groups_lag", test_groups_page_charts_the_chosen_groups_lag},
    {"topic_asked_for_before_it_is_known_is_shown",
     test_topic_asked_for_before_it_is_known_is_shown},
    {"moves_throttles_and_quotas_pages", test_moves_throttles_and_quotas_pages},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv)
{
    gtk_test_init(&argc, &argv, NULL);
    adw_init();
    out_dir = argc > 1 ? argv[1] : ".";
    (void)g_mkdir_with_parents(out_dir, 0755);
    return st_run_suite("monitor-ui", tests);
}
