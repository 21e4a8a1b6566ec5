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

static CU_TestInfo tests[] = {
    {"partitions_page_shows_rows_and_accessible_bars",
     test_partitions_page_shows_rows_and_accessible_bars},
    {"partitions_page_renders_light_and_dark", test_partitions_page_renders_light_and_dark},
    {"every_page_shows_its_rows", test_every_page_shows_its_rows},
    {"groups_page_shows_the_chosen_groups_members",
     test_groups_page_shows_the_chosen_groups_members},
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
