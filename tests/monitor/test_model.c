/* samsa-monitor's model without a display: the admin API's documents and
 * stream messages (broker/README.md, "The admin API") in, rows out. */
#include <string.h>

#include "cunit_run.h"
#include "sm-cluster.h"
#include "sm-parse.h"
#include "sm-test-docs.h"

/* ------------------------------------------------------------ fixtures */

static const char CLUSTER_DOC[] =
    "{\"cluster_id\":\"c1\",\"broker\":1,\"mode\":\"cluster\",\"controller\":2,"
    "\"brokers\":["
    "{\"id\":2,\"host\":\"127.0.0.1\",\"port\":9192,\"admin_url\":\"http://127.0.0.1:9195\","
    "\"rack\":null,\"alive\":true,\"controller\":true},"
    "{\"id\":0,\"host\":\"127.0.0.1\",\"port\":9092,\"admin_url\":\"http://127.0.0.1:9095\","
    "\"rack\":\"r1\",\"alive\":true,\"controller\":false},"
    "{\"id\":1,\"host\":\"127.0.0.1\",\"port\":9142,\"admin_url\":\"http://127.0.0.1:9145\","
    "\"rack\":null,\"alive\":true,\"controller\":false}],"
    "\"topics\":1,\"partitions\":3,\"under_replicated_partitions\":0,"
    "\"under_min_isr_partitions\":0,\"offline_partitions\":0,\"partitions_led_here\":1,"
    "\"snapshot\":{\"version\":4,\"taken_ms\":1000,\"age_ms\":3}}";

/* partition p of "watched" as broker `from` shows it: its leader's full view
 * when from == leader, its metadata otherwise */
static char *partition_json(int from, int p, int leader, int epoch, const int *ar, int nar,
                            const int *isr, int nisr, long long hw, const long long *leos)
{
    gboolean led = from == leader;
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "{\"topic\":\"watched\",\"partition\":%d,\"leader\":%d,"
                           "\"leader_epoch\":%d,",
                           p, leader, epoch);
    if (led) {
        g_string_append_printf(s,
                               "\"high_watermark\":%lld,\"log_start_offset\":0,"
                               "\"log_end_offset\":%lld,\"size_bytes\":100,",
                               hw, leos[0]);
    } else {
        g_string_append(s, "\"high_watermark\":null,\"log_start_offset\":null,"
                           "\"log_end_offset\":null,\"size_bytes\":null,");
    }
    g_string_append_printf(s, "\"source\":\"%s\",\"led_here\":%s,\"hosted_here\":true,",
                           led ? "leader" : "metadata", led ? "true" : "false");
    g_string_append(s, "\"isr\":[");
    for (int i = 0; i < nisr; i++) {
        g_string_append_printf(s, i ? ",%d" : "%d", isr[i]);
    }
    g_string_append(s, "],\"osr\":[],\"offline_replicas\":[],\"under_replicated\":false,"
                       "\"under_min_isr\":false,\"replicas\":[");
    for (int i = 0; i < nar; i++) {
        gboolean in = FALSE;
        for (int k = 0; k < nisr; k++) {
            in = in || isr[k] == ar[i];
        }
        if (led) {
            g_string_append_printf(s,
                                   "%s{\"broker\":%d,\"leader\":%s,\"log_end_offset\":%lld,"
                                   "\"lag\":%lld,\"in_sync\":%s,\"offline\":false,"
                                   "\"last_caught_up_ms\":1,\"time_since_caught_up_ms\":0}",
                                   i ? "," : "", ar[i], ar[i] == leader ? "true" : "false",
                                   leos[i], leos[0] - leos[i], in ? "true" : "false");
        } else {
            g_string_append_printf(s,
                                   "%s{\"broker\":%d,\"leader\":%s,\"log_end_offset\":null,"
                                   "\"lag\":null,\"in_sync\":%s,\"offline\":false,"
                                   "\"last_caught_up_ms\":null,\"time_since_caught_up_ms\":null}",
                                   i ? "," : "", ar[i], ar[i] == leader ? "true" : "false",
                                   in ? "true" : "false");
        }
    }
    g_string_append(s, "]}");
    return g_string_free(s, FALSE);
}

/* /v1/topics/watched/partitions from broker `from`: three partitions, p led
 * by broker p, assignment [p, p+1, p+2] mod 3, everything in sync at HW 100 */
static char *topic_doc(int from, int epoch)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "{\"broker\":%d,\"name\":\"watched\",\"internal\":false,"
                              "\"min_insync_replicas\":2,\"partitions\":[",
                           from);
    for (int p = 0; p < 3; p++) {
        int ar[3] = {p, (p + 1) % 3, (p + 2) % 3};
        long long leos[3] = {100, 100, 100};
        g_autofree char *one = partition_json(from, p, p, epoch, ar, 3, ar, 3, 100, leos);
        g_string_append_printf(s, "%s%s", p ? "," : "", one);
    }
    g_string_append(s, "],\"snapshot\":{\"version\":1,\"taken_ms\":1000,\"age_ms\":1}}");
    return g_string_free(s, FALSE);
}

static void apply(SmCluster *c, const char *text)
{
    g_autoptr(GError) err = NULL;
    gboolean ok = sm_cluster_apply_text(c, text, -1, &err);
    CU_ASSERT_TRUE_FATAL(ok);
}

static const SmReplica *replica(SmPartition *p, gint32 broker)
{
    for (guint i = 0; i < p->replicas->len; i++) {
        if (g_array_index(p->replicas, SmReplica, i).broker == broker) {
            return &g_array_index(p->replicas, SmReplica, i);
        }
    }
    return NULL;
}

typedef struct {
    GPtrArray *wants; /* "broker:topic" */
    GPtrArray *urls;  /* "id=url" */
    guint changed;
    guint events;
} Seen;

static void on_wants(SmCluster *c, gint id, const char *topic, gpointer ud)
{
    (void)c;
    g_ptr_array_add(((Seen *)ud)->wants, g_strdup_printf("%d:%s", id, topic));
}

static void on_url(SmCluster *c, gint id, const char *url, gpointer ud)
{
    (void)c;
    g_ptr_array_add(((Seen *)ud)->urls, g_strdup_printf("%d=%s", id, url));
}

static void on_changed(gpointer item, gpointer ud)
{
    (void)item;
    ((Seen *)ud)->changed++;
}

static void on_items_changed(GListModel *m, guint pos, guint removed, guint added, gpointer ud)
{
    (void)m;
    (void)pos;
    (void)removed;
    (void)added;
    ((Seen *)ud)->changed++;
}

static void on_event(SmCluster *c, SmEvent *e, gpointer ud)
{
    (void)c;
    (void)e;
    ((Seen *)ud)->events++;
}

static SmCluster *watched(Seen *seen)
{
    SmCluster *c = sm_cluster_new();
    seen->wants = g_ptr_array_new_with_free_func(g_free);
    seen->urls = g_ptr_array_new_with_free_func(g_free);
    seen->changed = seen->events = 0;
    g_signal_connect(c, "wants-partitions", G_CALLBACK(on_wants), seen);
    g_signal_connect(c, "admin-url", G_CALLBACK(on_url), seen);
    g_signal_connect(c, "event", G_CALLBACK(on_event), seen);
    return c;
}

static void unwatch(SmCluster *c, Seen *seen)
{
    g_object_unref(c);
    g_ptr_array_unref(seen->wants);
    g_ptr_array_unref(seen->urls);
}

static gboolean has(GPtrArray *a, const char *s)
{
    for (guint i = 0; i < a->len; i++) {
        if (strcmp(a->pdata[i], s) == 0) {
            return TRUE;
        }
    }
    return FALSE;
}

/* ------------------------------------------------------------ tests */

static void test_cluster_document_gives_brokers_by_id(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    apply(c, CLUSTER_DOC);
    CU_ASSERT_TRUE(sm_cluster_is_dirty(c));
    sm_cluster_flush(c);
    GListModel *brokers = sm_cluster_get_brokers(c);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(brokers), 3);
    for (guint i = 0; i < 3; i++) {
        g_autoptr(SmBroker) b = g_list_model_get_item(brokers, i);
        CU_ASSERT_EQUAL(b->id, (gint32)i);
        CU_ASSERT_TRUE(b->alive);
        CU_ASSERT_EQUAL(b->controller, i == 2);
    }
    g_autoptr(SmBroker) b0 = g_list_model_get_item(brokers, 0);
    CU_ASSERT_STRING_EQUAL(b0->rack, "r1");
    CU_ASSERT_EQUAL(b0->port, 9092);
    CU_ASSERT_EQUAL(sm_cluster_get_summary(c)->controller, 2);
    CU_ASSERT_STRING_EQUAL(sm_cluster_get_summary(c)->cluster_id, "c1");
    /* every admin URL announced once, so the client connects to each */
    CU_ASSERT_EQUAL(seen.urls->len, 3);
    CU_ASSERT_TRUE(has(seen.urls, "1=http://127.0.0.1:9145"));
    apply(c, CLUSTER_DOC);
    CU_ASSERT_EQUAL(seen.urls->len, 3);
    unwatch(c, &seen);
}

static void test_leader_view_gives_replica_rows_and_descriptions(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    int ar[3] = {0, 1, 2}, isr[2] = {0, 1};
    long long leos[3] = {5000, 4800, 2796};
    g_autofree char *p = partition_json(0, 0, 0, 3, ar, 3, isr, 2, 4000, leos);
    g_autofree char *doc = g_strdup_printf("{\"broker\":0,\"partitions\":[%s]}", p);
    apply(c, doc);
    sm_cluster_flush(c);
    GListModel *topics = sm_cluster_get_topics(c);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(topics), 1);
    g_autoptr(SmTopic) t = g_list_model_get_item(topics, 0);
    CU_ASSERT_STRING_EQUAL(t->name, "watched");
    GListModel *parts = sm_topic_get_partitions(t);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(parts), 1);
    g_autoptr(SmPartition) p0 = g_list_model_get_item(parts, 0);
    CU_ASSERT_TRUE(p0->full_view);
    CU_ASSERT_EQUAL(p0->high_watermark, 4000);
    CU_ASSERT_EQUAL(p0->leader_epoch, 3);
    CU_ASSERT_EQUAL(p0->replicas->len, 3);
    CU_ASSERT_EQUAL(replica(p0, 2)->log_end_offset, 2796);
    CU_ASSERT_FALSE(replica(p0, 2)->in_sync);
    g_autofree char *osr = sm_partition_format_osr(p0);
    CU_ASSERT_STRING_EQUAL(osr, "2");
    g_autofree char *d0 = sm_partition_describe_replica(p0, 0);
    g_autofree char *d1 = sm_partition_describe_replica(p0, 1);
    g_autofree char *d2 = sm_partition_describe_replica(p0, 2);
    CU_ASSERT_STRING_EQUAL(d0, "replica 0: leader, in sync, 1,000 ahead of the high watermark");
    CU_ASSERT_STRING_EQUAL(d1, "replica 1: in sync, 800 ahead of the high watermark");
    CU_ASSERT_STRING_EQUAL(d2, "replica 2: out of sync, 1,204 behind the high watermark");
    CU_ASSERT_EQUAL(t->replication_factor, 3);
    CU_ASSERT_EQUAL(t->under_replicated, 1);
    CU_ASSERT_EQUAL(sm_cluster_get_summary(c)->under_replicated, 1);
    CU_ASSERT_EQUAL(sm_cluster_get_summary(c)->partitions, 1);
    unwatch(c, &seen);
}

static void test_format_count_groups_thousands(void)
{
    const struct {
        gint64 n;
        const char *want;
    } cases[] = {{0, "0"}, {999, "999"}, {1000, "1,000"}, {1204, "1,204"},
                 {1234567, "1,234,567"}, {-1204, "-1,204"}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *s = sm_format_count(cases[i].n);
        CU_ASSERT_STRING_EQUAL(s, cases[i].want);
    }
}

/* the cluster view: every broker's document in any order, each partition
 * shown as its leader shows it */
static void test_cluster_view_takes_each_leaders_view(void)
{
    const int orders[3][3] = {{0, 1, 2}, {2, 1, 0}, {1, 0, 2}};
    for (int o = 0; o < 3; o++) {
        Seen seen;
        SmCluster *c = watched(&seen);
        for (int k = 0; k < 3; k++) {
            g_autofree char *doc = topic_doc(orders[o][k], 0);
            apply(c, doc);
        }
        sm_cluster_flush(c);
        for (int p = 0; p < 3; p++) {
            SmPartition *part = sm_cluster_find_partition(c, "watched", p);
            CU_ASSERT_PTR_NOT_NULL_FATAL(part);
            if (part == NULL) {
                return; /* for the analyser: the FATAL assertion does not return */
            }
            CU_ASSERT_TRUE(part->full_view);
            CU_ASSERT_EQUAL(part->view_of, p);
            CU_ASSERT_EQUAL(part->high_watermark, 100);
            CU_ASSERT_EQUAL(replica(part, (p + 2) % 3)->log_end_offset, 100);
        }
        SmTopic *t = sm_cluster_find_topic(c, "watched");
        CU_ASSERT_EQUAL(t->min_insync_replicas, 2);
        CU_ASSERT_EQUAL(g_list_model_get_n_items(sm_topic_get_partitions(t)), 3);
        unwatch(c, &seen);
    }
}

static char *progress(int from, int p, long long hw, const long long leos[3], const int ins[3])
{
    int ar[3] = {p, (p + 1) % 3, (p + 2) % 3};
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "{\"seq\":7,\"type\":\"progress\",\"broker\":%d,\"time_ms\":2000,"
                           "\"partitions\":[{\"topic\":\"watched\",\"partition\":%d,"
                           "\"leader\":%d,\"led_here\":true,\"high_watermark\":%lld,"
                           "\"log_start_offset\":0,\"log_end_offset\":%lld,\"replicas\":[",
                           from, p, from, hw, leos[0]);
    for (int i = 0; i < 3; i++) {
        g_string_append_printf(s,
                               "%s{\"broker\":%d,\"log_end_offset\":%lld,\"lag\":%lld,"
                               "\"in_sync\":%s,\"time_since_caught_up_ms\":0}",
                               i ? "," : "", ar[i], leos[i], leos[0] - leos[i],
                               ins[i] ? "true" : "false");
    }
    g_string_append(s, "]}]}");
    return g_string_free(s, FALSE);
}

/* "\"log_end_offset\":-1" in text made null, as a leader reports a replica
 * whose broker's session expired (caller frees) */
static char *leo_null(const char *text)
{
    g_auto(GStrv) parts = g_strsplit(text, "\"log_end_offset\":-1,", -1);
    return g_strjoinv("\"log_end_offset\":null,", parts);
}

/* a replica out of sync whose broker is gone: the leader reports its LEO
 * as null; shown at its last known LEO and offline, not as an empty track */
static void test_a_gone_replica_keeps_its_last_known_leo_offline(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    int ar[3] = {0, 1, 2}, isr[2] = {0, 1};
    long long leos[3] = {5000, 4800, 2796};
    g_autofree char *p = partition_json(0, 0, 0, 3, ar, 3, isr, 2, 4000, leos);
    g_autofree char *doc = g_strdup_printf("{\"broker\":0,\"partitions\":[%s]}", p);
    apply(c, doc);
    /* the leader's document again, replica 2's LEO null */
    long long gone[3] = {5000, 4800, -1};
    g_autofree char *p2 = partition_json(0, 0, 0, 3, ar, 3, isr, 2, 4000, gone);
    g_autofree char *p2n = leo_null(p2);
    g_autofree char *doc2 = g_strdup_printf("{\"broker\":0,\"partitions\":[%s]}", p2n);
    apply(c, doc2);
    SmPartition *p0 = sm_cluster_find_partition(c, "watched", 0);
    CU_ASSERT_EQUAL(replica(p0, 2)->log_end_offset, 2796);
    CU_ASSERT_TRUE(replica(p0, 2)->offline);
    g_autofree char *d2 = sm_partition_describe_replica(p0, 2);
    CU_ASSERT_STRING_EQUAL(d2, "replica 2: offline, out of sync, last known, 1,204 behind the "
                               "high watermark");
    /* the partitions page's numbers: each LEO, and who is behind by how much */
    g_autofree char *leo_text = sm_partition_format_leos(p0);
    CU_ASSERT_STRING_EQUAL(leo_text, "0: 5,000, 1: 4,800, 2: 2,796 (offline)");
    g_autofree char *behind = sm_partition_format_behind(p0);
    CU_ASSERT_STRING_EQUAL(behind, "2: 1,204");
    /* and through the leader's progress, the HW moving on */
    long long moved[3] = {6000, 6000, -1};
    int ins[3] = {1, 1, 0};
    g_autofree char *m = progress(0, 0, 6000, moved, ins);
    g_autofree char *mn = leo_null(m);
    apply(c, mn);
    CU_ASSERT_EQUAL(p0->high_watermark, 6000);
    CU_ASSERT_EQUAL(replica(p0, 2)->log_end_offset, 2796);
    CU_ASSERT_TRUE(replica(p0, 2)->offline);
    /* back: its LEO reported again, no longer offline, even after a
     * document that said so while it was gone (progress has no "offline") */
    g_autofree char *said = g_strdup_printf("{\"broker\":0,\"partitions\":[%s]}", p2n);
    g_auto(GStrv) flags = g_strsplit(said, "\"offline\":false", -1);
    g_autofree char *said_offline = g_strjoinv("\"offline\":true", flags);
    apply(c, said_offline);
    CU_ASSERT_TRUE(replica(p0, 2)->offline);
    long long back[3] = {6000, 6000, 5900};
    g_autofree char *mb = progress(0, 0, 6000, back, ins);
    apply(c, mb);
    CU_ASSERT_EQUAL(replica(p0, 2)->log_end_offset, 5900);
    CU_ASSERT_FALSE(replica(p0, 2)->offline);
    unwatch(c, &seen);
}

static void test_progress_from_the_leader_moves_offsets_in_one_change(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    for (int k = 0; k < 3; k++) {
        g_autofree char *doc = topic_doc(k, 0);
        apply(c, doc);
    }
    sm_cluster_flush(c);
    SmPartition *p0 = sm_cluster_find_partition(c, "watched", 0);
    g_signal_connect(p0, "changed", G_CALLBACK(on_changed), &seen);
    /* a follower (2) stops: its LEO stays while the HW moves on, twenty
     * updates between two frames */
    for (int i = 1; i <= 20; i++) {
        long long leos[3] = {100 + i * 10, 100 + i * 10, 150};
        int ins[3] = {1, 1, i < 10};
        g_autofree char *m = progress(0, 0, 100 + i * 10, leos, ins);
        apply(c, m);
    }
    CU_ASSERT_EQUAL(seen.changed, 0);
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(seen.changed, 1);
    CU_ASSERT_EQUAL(p0->high_watermark, 300);
    CU_ASSERT_EQUAL(replica(p0, 2)->log_end_offset, 150);
    CU_ASSERT_FALSE(sm_partition_in_isr(p0, 2));
    CU_ASSERT_EQUAL(p0->isr->len, 2);
    g_autofree char *d = sm_partition_describe_replica(p0, 2);
    CU_ASSERT_STRING_EQUAL(d, "replica 2: out of sync, 150 behind the high watermark");
    CU_ASSERT_EQUAL(sm_cluster_get_summary(c)->under_replicated, 1);
    /* nothing new: no flush work */
    CU_ASSERT_EQUAL(sm_cluster_flush(c), 0);
    unwatch(c, &seen);
}

static void test_progress_from_a_broker_that_no_longer_leads_is_ignored(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    for (int k = 0; k < 3; k++) {
        g_autofree char *doc = topic_doc(k, 0);
        apply(c, doc);
    }
    /* broker 1 (second of partition 0's AR) takes over in epoch 1, as
     * broker 2's metadata reports it */
    apply(c, "{\"seq\":9,\"type\":\"leader_change\",\"broker\":2,\"time_ms\":3000,"
             "\"topic\":\"watched\",\"partition\":0,\"leader\":1,\"leader_epoch\":1,"
             "\"previous_leader\":0,\"previous_leader_epoch\":0}");
    CU_ASSERT_TRUE(has(seen.wants, "1:watched"));
    SmPartition *p0 = sm_cluster_find_partition(c, "watched", 0);
    CU_ASSERT_EQUAL(p0->leader, 1);
    CU_ASSERT_FALSE(p0->full_view);
    /* the old leader, not knowing yet, reports progress: not taken */
    long long old[3] = {500, 500, 500};
    int ins[3] = {1, 1, 1};
    g_autofree char *m = progress(0, 0, 500, old, ins);
    apply(c, m);
    CU_ASSERT_EQUAL(p0->high_watermark, 100);
    /* an older epoch's document: not taken either */
    g_autofree char *stale = topic_doc(0, 0);
    apply(c, stale);
    CU_ASSERT_EQUAL(p0->leader, 1);
    CU_ASSERT_EQUAL(p0->leader_epoch, 1);
    /* the new leader's own document for epoch 1: its full view */
    int ar[3] = {0, 1, 2}, isr[2] = {1, 2};
    long long leos[3] = {100, 130, 120};
    g_autofree char *pj = partition_json(1, 0, 1, 1, ar, 3, isr, 2, 120, leos);
    g_autofree char *doc = g_strdup_printf("{\"broker\":1,\"partitions\":[%s]}", pj);
    apply(c, doc);
    CU_ASSERT_TRUE(p0->full_view);
    CU_ASSERT_EQUAL(p0->view_of, 1);
    CU_ASSERT_EQUAL(p0->high_watermark, 120);
    CU_ASSERT_FALSE(sm_partition_in_isr(p0, 0));
    /* another broker's metadata at the same epoch does not replace it */
    g_autofree char *meta = topic_doc(2, 1);
    apply(c, meta);
    CU_ASSERT_TRUE(p0->full_view);
    CU_ASSERT_EQUAL(p0->isr->len, 2);
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(seen.events, 1);
    unwatch(c, &seen);
}

static const char *isr_shrink_from(int broker)
{
    static char buf[512];
    (void)g_snprintf(buf, sizeof buf,
                     "{\"seq\":%d,\"type\":\"isr_shrink\",\"broker\":%d,\"time_ms\":%d,"
                     "\"topic\":\"watched\",\"partition\":0,\"leader\":0,\"leader_epoch\":0,"
                     "\"isr\":[0,1],\"previous_isr\":[0,1,2],\"removed\":[2],\"added\":[]}",
                     10 + broker, broker, 4000 + broker * 150);
    return buf;
}

static void test_one_isr_shrink_reported_by_three_brokers_is_one_event(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    for (int k = 0; k < 3; k++) {
        g_autofree char *doc = topic_doc(k, 0);
        apply(c, doc);
    }
    sm_cluster_flush(c);
    /* a follower's metadata first: not the leader's word, not taken while
     * the leader's view is shown */
    apply(c, isr_shrink_from(1));
    SmPartition *p0 = sm_cluster_find_partition(c, "watched", 0);
    CU_ASSERT_EQUAL(p0->isr->len, 3);
    apply(c, isr_shrink_from(0));
    CU_ASSERT_EQUAL(p0->isr->len, 2);
    CU_ASSERT_FALSE(replica(p0, 2)->in_sync);
    apply(c, isr_shrink_from(2));
    sm_cluster_flush(c);
    GListModel *events = sm_cluster_get_events(c);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(events), 1);
    g_autoptr(SmEvent) e = g_list_model_get_item(events, 0);
    CU_ASSERT_EQUAL(e->kind, SM_EVENT_ISR_SHRINK);
    CU_ASSERT_STRING_EQUAL(e->text, "watched-0: ISR shrank to [0, 1], replica 2 out of sync");
    CU_ASSERT_TRUE(sm_event_is_alert(e));
    CU_ASSERT_EQUAL(seen.events, 1);
    /* back in sync: a second event, newest first */
    apply(c, "{\"seq\":20,\"type\":\"isr_expand\",\"broker\":0,\"time_ms\":9000,"
             "\"topic\":\"watched\",\"partition\":0,\"leader\":0,\"leader_epoch\":0,"
             "\"isr\":[0,1,2],\"previous_isr\":[0,1],\"removed\":[],\"added\":[2]}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(events), 2);
    g_autoptr(SmEvent) e2 = g_list_model_get_item(events, 0);
    CU_ASSERT_EQUAL(e2->kind, SM_EVENT_ISR_EXPAND);
    CU_ASSERT_TRUE(replica(p0, 2)->in_sync);
    unwatch(c, &seen);
}

/* the cluster's document, then broker 2 reported gone by brokers 0 and 1 */
static void apply_broker_2_down(SmCluster *c)
{
    apply(c, CLUSTER_DOC);
    for (int from = 0; from < 2; from++) {
        g_autofree char *m = g_strdup_printf(
            "{\"seq\":3,\"type\":\"broker_down\",\"broker\":%d,\"time_ms\":5000,\"id\":2}", from);
        apply(c, m);
    }
}

static void test_broker_gone_and_back(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    apply_broker_2_down(c);
    apply(c, "{\"seq\":4,\"type\":\"controller_change\",\"broker\":0,\"time_ms\":5000,"
             "\"controller\":0,\"previous\":2}");
    sm_cluster_flush(c);
    SmBroker *b2 = sm_cluster_find_broker(c, 2);
    CU_ASSERT_FALSE(b2->alive);
    CU_ASSERT_FALSE(b2->controller);
    CU_ASSERT_TRUE(sm_cluster_find_broker(c, 0)->controller);
    CU_ASSERT_EQUAL(sm_cluster_get_summary(c)->brokers_alive, 2);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(sm_cluster_get_events(c)), 2);
    apply(c, "{\"seq\":5,\"type\":\"broker_up\",\"broker\":0,\"time_ms\":6000,\"id\":2,"
             "\"host\":\"127.0.0.1\",\"port\":9192,\"admin_url\":\"http://127.0.0.1:9195\"}");
    sm_cluster_flush(c);
    CU_ASSERT_TRUE(b2->alive);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(sm_cluster_get_events(c)), 3);
    unwatch(c, &seen);
}

/* one broker lost is one row: its going, the leaders moved off it and the
 * ISRs it left (each reported by every broker) under one group, newest
 * first; its coming back another; changes of no broker's rows of their own */
static void test_a_lost_broker_is_one_group_of_events(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    apply_broker_2_down(c);
    sm_cluster_flush(c);
    GListModel *events = sm_cluster_get_events(c);
    /* alone it is its own row */
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(events), 1);
    g_autoptr(SmEvent) alone = g_list_model_get_item(events, 0);
    CU_ASSERT_STRING_EQUAL(alone->text, "broker 2 is gone");
    for (int p = 0; p < 40; p++) {
        for (int from = 0; from < 2; from++) {
            g_autofree char *lc = g_strdup_printf(
                "{\"seq\":%d,\"type\":\"leader_change\",\"broker\":%d,\"time_ms\":%d,"
                "\"topic\":\"watched\",\"partition\":%d,\"leader\":0,\"leader_epoch\":1,"
                "\"previous_leader\":2}", 4 + p, from, 5100 + p, p);
            apply(c, lc);
            g_autofree char *shrink = g_strdup_printf(
                "{\"seq\":%d,\"type\":\"isr_shrink\",\"broker\":%d,\"time_ms\":%d,"
                "\"topic\":\"watched\",\"partition\":%d,\"leader\":0,\"leader_epoch\":1,"
                "\"isr\":[0,1],\"removed\":[2],\"added\":[]}", 100 + p, from, 5200 + p, p + 40);
            apply(c, shrink);
        }
    }
    /* a change of no broker's, and a same-leader epoch: no group, no row */
    apply(c, "{\"seq\":200,\"type\":\"topic_created\",\"broker\":0,\"time_ms\":6000,"
             "\"topic\":\"fresh\"}");
    apply(c, "{\"seq\":201,\"type\":\"leader_change\",\"broker\":0,\"time_ms\":6100,"
             "\"topic\":\"watched\",\"partition\":0,\"leader\":0,\"leader_epoch\":2,"
             "\"previous_leader\":0}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(events), 2);
    g_autoptr(SmEvent) newest = g_list_model_get_item(events, 0);
    CU_ASSERT_STRING_EQUAL(newest->text, "topic fresh created");
    g_autoptr(SmEvent) g = g_list_model_get_item(events, 1);
    CU_ASSERT_TRUE_FATAL(sm_event_is_group(g));
    CU_ASSERT_EQUAL(g->kind, SM_EVENT_GROUP_LOST);
    CU_ASSERT_STRING_EQUAL(g->text, "broker 2 lost: gone, 40 leader changes, 40 ISR shrinks");
    CU_ASSERT_EQUAL(g_list_model_get_n_items(G_LIST_MODEL(g->children)), 81);
    g_autoptr(SmEvent) last = g_list_model_get_item(G_LIST_MODEL(g->children), 0);
    CU_ASSERT_STRING_EQUAL(last->text, "watched-79: ISR shrank to [0, 1], replica 2 out of sync");
    CU_ASSERT_TRUE(sm_event_matches(g, "WATCHED-79"));
    CU_ASSERT_FALSE(sm_event_matches(g, "fresh"));
    /* every change still told once (the toasts) */
    CU_ASSERT_EQUAL(seen.events, 82);
    /* back: a group of its own once a second change joins its coming up */
    apply(c, "{\"seq\":300,\"type\":\"broker_up\",\"broker\":0,\"time_ms\":9000,\"id\":2,"
             "\"host\":\"127.0.0.1\",\"port\":9192}");
    apply(c, "{\"seq\":301,\"type\":\"isr_expand\",\"broker\":0,\"time_ms\":9500,"
             "\"topic\":\"watched\",\"partition\":40,\"leader\":0,\"leader_epoch\":1,"
             "\"isr\":[0,1,2],\"removed\":[],\"added\":[2]}");
    apply(c, "{\"seq\":302,\"type\":\"leader_change\",\"broker\":0,\"time_ms\":9600,"
             "\"topic\":\"watched\",\"partition\":1,\"leader\":2,\"leader_epoch\":3,"
             "\"previous_leader\":0}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(events), 3);
    g_autoptr(SmEvent) back = g_list_model_get_item(events, 0);
    CU_ASSERT_STRING_EQUAL(back->text, "broker 2 back: up, 1 leader change, 1 ISR expansion");
    unwatch(c, &seen);
}

static void test_offline_partition_counted(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    for (int k = 0; k < 3; k++) {
        g_autofree char *doc = topic_doc(k, 0);
        apply(c, doc);
    }
    apply(c, "{\"seq\":9,\"type\":\"leader_change\",\"broker\":1,\"time_ms\":3000,"
             "\"topic\":\"watched\",\"partition\":2,\"leader\":-1,\"leader_epoch\":1,"
             "\"previous_leader\":2,\"previous_leader_epoch\":0}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(sm_cluster_get_summary(c)->offline, 1);
    SmTopic *t = sm_cluster_find_topic(c, "watched");
    CU_ASSERT_EQUAL(t->offline, 1);
    /* broker 2 led partition 2: now it leads nothing */
    apply(c, CLUSTER_DOC);
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(sm_cluster_find_broker(c, 2)->partitions_led, 0);
    CU_ASSERT_EQUAL(sm_cluster_find_broker(c, 0)->partitions_led, 1);
    CU_ASSERT_EQUAL(sm_cluster_find_broker(c, 0)->replicas, 3);
    unwatch(c, &seen);
}

static void test_new_partitions_arrive_in_one_items_changed(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    apply(c, "{\"seq\":1,\"type\":\"topic_created\",\"broker\":0,\"time_ms\":1,"
             "\"topic\":\"big\",\"partitions\":500}");
    CU_ASSERT_TRUE(has(seen.wants, "0:big"));
    sm_cluster_flush(c);
    SmTopic *t = sm_cluster_find_topic(c, "big");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    guint signals = 0;
    g_signal_connect(sm_topic_get_partitions(t), "items-changed", G_CALLBACK(on_items_changed),
                     &seen);
    GString *doc = g_string_new("{\"broker\":0,\"name\":\"big\",\"partitions\":[");
    for (int p = 0; p < 500; p++) {
        g_string_append_printf(doc,
                               "%s{\"topic\":\"big\",\"partition\":%d,\"leader\":0,"
                               "\"leader_epoch\":0,\"high_watermark\":%d,\"led_here\":true,"
                               "\"isr\":[0],\"replicas\":[{\"broker\":0,\"log_end_offset\":%d,"
                               "\"in_sync\":true}]}",
                               p ? "," : "", p, p, p);
    }
    g_string_append(doc, "]}");
    seen.changed = 0;
    apply(c, doc->str);
    g_string_free(doc, TRUE);
    sm_cluster_flush(c);
    signals = seen.changed;
    CU_ASSERT_EQUAL(signals, 1);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(sm_topic_get_partitions(t)), 500);
    CU_ASSERT_EQUAL(sm_cluster_get_summary(c)->partitions, 500);
    unwatch(c, &seen);
}

static void test_hostile_json_is_refused_or_read_as_unknown(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    g_autoptr(GError) e1 = NULL;
    CU_ASSERT_FALSE(sm_cluster_apply_text(c, "[1,2]", -1, &e1));
    g_autoptr(GError) e2 = NULL;
    CU_ASSERT_FALSE(sm_cluster_apply_text(c, "{\"partitions\":", -1, &e2));
    /* wrong types everywhere: nothing believed, nothing crashes */
    apply(c, "{\"partitions\":[1,\"x\",{\"topic\":5},{\"topic\":\"t\",\"partition\":\"0\"},"
             "{\"topic\":\"t\",\"partition\":-3},{\"topic\":\"t\",\"partition\":99999999},"
             "{\"topic\":\"t\",\"partition\":0,\"leader_epoch\":0,\"replicas\":[null,3,"
             "{\"broker\":\"1\"},{\"broker\":1,\"log_end_offset\":\"9\"}],\"isr\":[\"1\",-1,1]}]}");
    apply(c, "{\"seq\":1,\"type\":\"progress\",\"broker\":0,\"partitions\":[{\"topic\":\"t\","
             "\"partition\":0,\"led_here\":true,\"leader\":0,\"replicas\":7}]}");
    apply(c, "{\"seq\":1,\"type\":\"isr_shrink\",\"broker\":0}");
    apply(c, "{\"seq\":1,\"type\":\"no_such_event\"}");
    apply(c, "{\"cluster_id\":7,\"brokers\":[{\"id\":-4},{\"id\":1,\"port\":\"x\"}]}");
    sm_cluster_flush(c);
    SmPartition *p = sm_cluster_find_partition(c, "t", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    if (p == NULL) {
        return; /* for the analyser: the FATAL assertion does not return */
    }
    CU_ASSERT_EQUAL(p->replicas->len, 1);
    CU_ASSERT_EQUAL(replica(p, 1)->log_end_offset, SM_OFFSET_UNKNOWN);
    CU_ASSERT_EQUAL(p->isr->len, 1);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(sm_topic_get_partitions(sm_cluster_find_topic(c, "t"))), 1);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(sm_cluster_get_brokers(c)), 1);
    unwatch(c, &seen);
}


/* ------------------------------------------------------------ the parser */

typedef struct {
    GPtrArray *order;   /* "kind:path-or-type:seq", in the order handed back */
    GThread *owner;
    gboolean wrong_thread;
    SmCluster *cluster; /* progress applied to it when set */
} Parsed;

static void on_parsed(SmParsed *r, gpointer ud)
{
    Parsed *p = ud;
    p->wrong_thread = p->wrong_thread || g_thread_self() != p->owner;
    g_ptr_array_add(p->order, g_strdup_printf("%s:%s:%" G_GINT64_FORMAT "%s%s",
                                              r->kind == SM_PARSE_STREAM ? "stream" : "doc",
                                              r->path != NULL ? r->path : r->type, r->seq,
                                              r->progress != NULL ? ":digested" : "",
                                              r->root == NULL && r->progress == NULL ? ":none"
                                                                                      : ""));
    if (p->cluster != NULL && r->progress != NULL) {
        sm_cluster_apply_progress(p->cluster, r->progress);
    } else if (p->cluster != NULL && r->root != NULL) {
        sm_cluster_apply_object(p->cluster, json_node_get_object(r->root));
    }
}

static void push_text(SmParser *parser, SmParseKind kind, const char *path, const char *text)
{
    g_autoptr(GBytes) b = g_bytes_new(text, strlen(text));
    sm_parser_push(parser, kind, path, b);
}

/* runs the default main context until the parser has handed back all */
static gboolean drain(SmParser *parser)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)10 * G_USEC_PER_SEC;
    while (sm_parser_pending(parser) > 0 && g_get_monotonic_time() < deadline) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    return sm_parser_pending(parser) == 0;
}

static void test_parser_hands_back_in_push_order_on_the_owner_thread(void)
{
    Parsed got = {g_ptr_array_new_with_free_func(g_free), g_thread_self(), FALSE, NULL};
    SmParser *parser = sm_parser_new(on_parsed, &got);
    /* a large message first: a later small one must not overtake it */
    g_autofree char *big = NULL;
    {
        long long leos[3] = {500, 500, 500};
        int ins[3] = {1, 1, 1};
        GString *s = g_string_new("{\"seq\":1,\"type\":\"progress\",\"broker\":0,\"time_ms\":5,"
                                  "\"partitions\":[");
        for (int i = 0; i < 20000; i++) {
            g_string_append_printf(s, "%s{\"topic\":\"t%d\",\"partition\":0,\"leader\":0,"
                                      "\"led_here\":true,\"high_watermark\":%lld,"
                                      "\"replicas\":[{\"broker\":0,\"log_end_offset\":%lld,"
                                      "\"in_sync\":%s}]}",
                                   i ? "," : "", i % 50, leos[0], leos[1], ins[2] ? "true" : "false");
        }
        g_string_append(s, "]}");
        big = g_string_free(s, FALSE);
    }
    push_text(parser, SM_PARSE_STREAM, NULL, big);
    push_text(parser, SM_PARSE_STREAM, NULL, "{\"seq\":2,\"type\":\"leader_change\",\"broker\":0}");
    push_text(parser, SM_PARSE_DOCUMENT, "/v1/cluster", CLUSTER_DOC);
    push_text(parser, SM_PARSE_STREAM, NULL, "not JSON at all");
    push_text(parser, SM_PARSE_STREAM, NULL, "[1,2]");
    push_text(parser, SM_PARSE_STREAM, NULL, "{\"seq\":3,\"type\":\"hello\",\"broker\":0}");
    CU_ASSERT_EQUAL(sm_parser_pending(parser), 6);
    CU_ASSERT_TRUE_FATAL(drain(parser));
    CU_ASSERT_FALSE(got.wrong_thread);
    const char *want[] = {"stream:progress:1:digested", "stream:leader_change:2",
                          "doc:/v1/cluster:-1", "stream::-1:none", "stream::-1:none",
                          "stream:hello:3"};
    CU_ASSERT_EQUAL_FATAL(got.order->len, G_N_ELEMENTS(want));
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        if (strcmp(got.order->pdata[i], want[i]) != 0) {
            printf("\n  result %u: %s, want %s\n", i, (char *)got.order->pdata[i], want[i]);
        }
        CU_ASSERT_STRING_EQUAL(got.order->pdata[i], want[i]);
    }
    sm_parser_free(parser);
    g_ptr_array_unref(got.order);
}

static void test_parser_freed_with_work_pending_calls_back_no_more(void)
{
    Parsed got = {g_ptr_array_new_with_free_func(g_free), g_thread_self(), FALSE, NULL};
    SmParser *parser = sm_parser_new(on_parsed, &got);
    for (int i = 0; i < 50; i++) {
        g_autofree char *doc = topic_doc(0, i);
        push_text(parser, SM_PARSE_DOCUMENT, "/v1/topics/watched/partitions", doc);
    }
    guint before = sm_parser_alive();
    CU_ASSERT_TRUE(before >= 1);
    sm_parser_free(parser);
    /* whatever the worker finishes now has nowhere to go; it lets go of
     * the texts once the one it was parsing is done */
    gint64 deadline = g_get_monotonic_time() + 30 * G_TIME_SPAN_SECOND;
    while (sm_parser_alive() >= before && g_get_monotonic_time() < deadline) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    CU_ASSERT_EQUAL(sm_parser_alive(), before - 1);
    for (int i = 0; i < 20; i++) {
        g_main_context_iteration(NULL, FALSE);
    }
    CU_ASSERT_EQUAL(got.order->len, 0);
    g_ptr_array_unref(got.order);
}

/* the digest applied on the model's thread gives what the JSON did */
static void test_progress_digested_on_a_worker_applies_as_the_json_does(void)
{
    Seen seen_a, seen_b;
    SmCluster *a = watched(&seen_a);
    SmCluster *b = watched(&seen_b);
    Parsed got = {g_ptr_array_new_with_free_func(g_free), g_thread_self(), FALSE, b};
    SmParser *parser = sm_parser_new(on_parsed, &got);
    for (int k = 0; k < 3; k++) {
        g_autofree char *doc = topic_doc(k, 0);
        apply(a, doc);
        push_text(parser, SM_PARSE_DOCUMENT, "/v1/topics/watched/partitions", doc);
    }
    long long leos[3] = {180, 170, 150};
    int ins[3] = {1, 1, 0};
    g_autofree char *m = progress(0, 0, 170, leos, ins);
    apply(a, m);
    push_text(parser, SM_PARSE_STREAM, NULL, m);
    CU_ASSERT_TRUE_FATAL(drain(parser));
    sm_cluster_flush(a);
    sm_cluster_flush(b);
    SmPartition *pa = sm_cluster_find_partition(a, "watched", 0);
    SmPartition *pb = sm_cluster_find_partition(b, "watched", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pa);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pb);
    if (pa == NULL || pb == NULL) {
        return;
    }
    g_autofree char *da = sm_partition_describe(pa);
    g_autofree char *db = sm_partition_describe(pb);
    CU_ASSERT_STRING_EQUAL(da, db);
    CU_ASSERT_EQUAL(pb->high_watermark, 170);
    CU_ASSERT_EQUAL(replica(pb, 2)->log_end_offset, 150);
    CU_ASSERT_FALSE(sm_partition_in_isr(pb, 2));
    CU_ASSERT_EQUAL(pa->isr->len, pb->isr->len);
    sm_parser_free(parser);
    g_ptr_array_unref(got.order);
    unwatch(a, &seen_a);
    unwatch(b, &seen_b);
}

static void test_group_document_gives_its_members(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    apply(c, "{\"broker\":1,\"group_id\":\"billing\",\"state\":\"Stable\",\"members\":2,"
             "\"member_list\":["
             "{\"member_id\":\"billing-1-5f0c\",\"client_id\":\"billing-1\","
             "\"client_host\":\"/127.0.0.1\",\"assignment\":[{\"topic\":\"orders\","
             "\"partition\":0},{\"topic\":\"orders\",\"partition\":2}]},"
             "{\"member_id\":\"billing-2-77aa\",\"client_id\":\"billing-2\","
             "\"client_host\":\"/10.0.0.7\",\"assignment\":[]},"
             "{\"member_id\":7,\"assignment\":[{\"topic\":null,\"partition\":1},{}]}],"
             "\"offsets\":[]}");
    sm_cluster_flush(c);
    GListModel *groups = sm_cluster_get_groups(c);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(groups), 1);
    g_autoptr(SmGroup) g = g_list_model_get_item(groups, 0);
    GListModel *members = G_LIST_MODEL(g->member_list);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(members), 3);
    g_autoptr(SmMember) m0 = g_list_model_get_item(members, 0);
    CU_ASSERT_STRING_EQUAL(m0->member_id, "billing-1-5f0c");
    CU_ASSERT_STRING_EQUAL(m0->client_id, "billing-1");
    CU_ASSERT_STRING_EQUAL(m0->host, "/127.0.0.1");
    CU_ASSERT_STRING_EQUAL(m0->assignment, "orders-0, orders-2");
    CU_ASSERT_EQUAL(m0->assigned, 2);
    g_autoptr(SmMember) m1 = g_list_model_get_item(members, 1);
    CU_ASSERT_EQUAL(m1->assigned, 0);
    /* hostile: mistyped fields read as unknown */
    g_autoptr(SmMember) m2 = g_list_model_get_item(members, 2);
    CU_ASSERT_PTR_NULL(m2->member_id);
    CU_ASSERT_EQUAL(m2->assigned, 0);
    /* the next document replaces them: one member left */
    apply(c, "{\"broker\":1,\"group_id\":\"billing\",\"state\":\"Stable\",\"members\":1,"
             "\"member_list\":[{\"member_id\":\"billing-2-77aa\",\"client_id\":\"billing-2\","
             "\"client_host\":\"/10.0.0.7\",\"assignment\":[{\"topic\":\"orders\","
             "\"partition\":1}]}],\"offsets\":[]}");
    CU_ASSERT_EQUAL(g_list_model_get_n_items(members), 1);
    unwatch(c, &seen);
}


/* ------------------------------------------------------------ throughput */

/* GET /v1/brokers/{id} from the broker itself: its totals at taken_ms */
static char *broker_doc(int id, long long taken_ms, long long started_ms, long long msgs,
                        long long bytes_in, long long bytes_out)
{
    return g_strdup_printf(
        "{\"id\":%d,\"host\":\"127.0.0.1\",\"port\":%d,\"admin_url\":\"http://127.0.0.1:%d\","
        "\"rack\":null,\"alive\":true,\"controller\":false,\"self\":true,"
        "\"started_ms\":%lld,\"partitions_led\":1,"
        "\"totals\":{\"messages_in\":%lld,\"bytes_in\":%lld,\"bytes_out\":%lld},"
        "\"connections\":{\"open\":3},\"requests\":[],"
        "\"snapshot\":{\"version\":7,\"taken_ms\":%lld,\"age_ms\":1}}",
        id, 9092 + id, 9095 + id, started_ms, msgs, bytes_in, bytes_out, taken_ms);
}

static void apply_reading(SmCluster *c, int id, long long taken_ms, long long started_ms,
                          long long msgs, long long bytes_in, long long bytes_out)
{
    g_autofree char *doc = broker_doc(id, taken_ms, started_ms, msgs, bytes_in, bytes_out);
    apply(c, doc);
}

static gboolean near(double a, double b)
{
    return a - b < 1e-6 && b - a < 1e-6;
}

static void test_two_readings_of_a_brokers_totals_give_its_rates(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    apply_reading(c, 1, 10000, 500, 10, 1000, 500);
    sm_cluster_flush(c);
    SmBroker *b = sm_cluster_find_broker(c, 1);
    CU_ASSERT_PTR_NOT_NULL(b);
    if (b == NULL) {
        unwatch(c, &seen);
        return;
    }
    CU_ASSERT_STRING_EQUAL(b->admin_url, "http://127.0.0.1:9096");
    CU_ASSERT_EQUAL(b->totals.messages_in, 10);
    CU_ASSERT_EQUAL(b->rates.messages_in.n, 0); /* one reading: no rate yet */
    g_signal_connect(b, "changed", G_CALLBACK(on_changed), &seen);
    /* two seconds later on the broker's clock: 200 messages, 20,000 bytes
     * in, 4,000 out */
    apply_reading(c, 1, 12000, 500, 210, 21000, 4500);
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(seen.changed, 1);
    CU_ASSERT_EQUAL_FATAL(b->rates.messages_in.n, 1);
    const SmPoint *p = sm_series_last(&b->rates.messages_in);
    CU_ASSERT_TRUE(p->known);
    CU_ASSERT_TRUE(near(p->value, 100));
    CU_ASSERT_EQUAL(p->from_ms, 10000);
    CU_ASSERT_EQUAL(p->to_ms, 12000);
    CU_ASSERT_TRUE(near(sm_series_last(&b->rates.bytes_in)->value, 10000));
    CU_ASSERT_TRUE(near(sm_series_last(&b->rates.bytes_out)->value, 2000));
    /* the same snapshot read again (or an older one) gives nothing */
    apply_reading(c, 1, 12000, 500, 210, 21000, 4500);
    apply_reading(c, 1, 11000, 500, 100, 9000, 2000);
    CU_ASSERT_EQUAL(b->rates.messages_in.n, 1);
    CU_ASSERT_EQUAL(b->totals.taken_ms, 12000);
    /* the cluster's: this broker alone */
    const SmRates *r = sm_cluster_get_rates(c);
    CU_ASSERT_EQUAL_FATAL(r->bytes_in.n, 1);
    CU_ASSERT_TRUE(near(sm_series_last(&r->bytes_in)->value, 10000));
    /* the series is bounded: the oldest points go */
    for (int i = 1; i <= 200; i++) {
        apply_reading(c, 1, 12000 + i * 1000LL, 500, 210 + i * 7LL, 21000, 4500);
    }
    CU_ASSERT_EQUAL(b->rates.messages_in.n, SM_SERIES_MAX);
    CU_ASSERT_EQUAL(sm_series_get(&b->rates.messages_in, 0)->to_ms,
                    12000 + (200 - SM_SERIES_MAX + 1) * 1000LL);
    CU_ASSERT_TRUE(near(sm_series_peak(&b->rates.messages_in), 7));
    CU_ASSERT_EQUAL(sm_series_span_ms(&b->rates.messages_in), (gint64)SM_SERIES_MAX * 1000);
    g_autofree char *span = sm_format_span(sm_series_span_ms(&b->rates.messages_in));
    CU_ASSERT_STRING_EQUAL(span, "2 minutes");
    unwatch(c, &seen);
}

static void test_a_counter_going_down_is_a_reset(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    apply_reading(c, 0, 1000, 1, 100, 10000, 0);
    apply_reading(c, 0, 2000, 1, 200, 20000, 0);
    /* a topic deleted: its share leaves the totals */
    apply_reading(c, 0, 3000, 1, 50, 5000, 0);
    apply_reading(c, 0, 4000, 1, 150, 15000, 0);
    /* a restart whose counters grew past the old ones before the reading */
    apply_reading(c, 0, 5000, 4500, 400, 40000, 0);
    apply_reading(c, 0, 6000, 4500, 450, 45000, 0);
    SmBroker *b = sm_cluster_find_broker(c, 0);
    CU_ASSERT_PTR_NOT_NULL(b);
    if (b == NULL) {
        unwatch(c, &seen);
        return;
    }
    const SmSeries *m = &b->rates.messages_in;
    CU_ASSERT_EQUAL_FATAL(m->n, 5);
    const struct {
        gboolean known;
        double value;
    } want[] = {{TRUE, 100}, {FALSE, 0}, {TRUE, 100}, {FALSE, 0}, {TRUE, 50}};
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        const SmPoint *p = sm_series_get(m, i);
        CU_ASSERT_EQUAL(p->known, want[i].known);
        CU_ASSERT_TRUE(near(p->value, want[i].value));
        CU_ASSERT_EQUAL(p->to_ms, (gint64)(i + 2) * 1000);
    }
    /* a gap is no rate, not a rate of zero: the peak is of known points */
    CU_ASSERT_TRUE(near(sm_series_peak(m), 100));
    /* two readings a long time apart (a link lost for minutes): no rate */
    apply_reading(c, 0, 6000 + 120000, 4500, 900, 90000, 0);
    CU_ASSERT_FALSE(sm_series_last(m)->known);
    unwatch(c, &seen);
}

static void test_cluster_rates_sum_the_brokers_per_round(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    /* three brokers read together each second, their answers a few ms
     * apart: one cluster point a round, the sum of the three */
    for (int round = 0; round < 4; round++) {
        for (int id = 0; id < 3; id++) {
            long long t = 10000 + 1000LL * round + id * 7LL;
            apply_reading(c, id, t, 1, (long long)(id + 1) * 100 * round,
                          (long long)(id + 1) * 1000 * round, 10LL * round);
        }
    }
    const SmRates *r = sm_cluster_get_rates(c);
    CU_ASSERT_EQUAL_FATAL(r->messages_in.n, 3);
    for (guint i = 0; i < 3; i++) {
        CU_ASSERT_TRUE(near(sm_series_get(&r->messages_in, i)->value, 600));
        CU_ASSERT_TRUE(near(sm_series_get(&r->bytes_in, i)->value, 6000));
        CU_ASSERT_TRUE(near(sm_series_get(&r->bytes_out, i)->value, 30));
    }
    unwatch(c, &seen);
}

static void test_broker_gone_then_back_leaves_the_sum_and_returns(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    /* broker 0: 100 messages a second all along; broker 1: 50 */
    for (int s = 0; s < 3; s++) {
        apply_reading(c, 0, 1000LL * (s + 1), 1, 100LL * s, 0, 0);
        apply_reading(c, 1, 1000LL * (s + 1) + 3, 1, 50LL * s, 0, 0);
    }
    const SmSeries *sum = &sm_cluster_get_rates(c)->messages_in;
    CU_ASSERT_TRUE(near(sm_series_last(sum)->value, 150));
    /* broker 1 gone: its rates end at once (a gap), so it leaves the sum
     * with the next round, not a round later */
    apply(c, "{\"seq\":9,\"type\":\"broker_down\",\"broker\":0,\"time_ms\":4000,\"id\":1}");
    CU_ASSERT_FALSE(sm_series_last(&sm_cluster_find_broker(c, 1)->rates.messages_in)->known);
    apply_reading(c, 0, 4000, 1, 300, 0, 0);
    CU_ASSERT_TRUE(near(sm_series_last(sum)->value, 100));
    apply_reading(c, 0, 5000, 1, 400, 0, 0);
    CU_ASSERT_TRUE(near(sm_series_last(sum)->value, 100));
    /* back, restarted: counters from zero, a new start time; its first
     * interval is a reset, the next a rate again */
    apply_reading(c, 0, 6000, 1, 500, 0, 0);
    apply_reading(c, 1, 6003, 5700, 20, 0, 0);
    CU_ASSERT_TRUE(near(sm_series_last(sum)->value, 100));
    CU_ASSERT_FALSE(sm_series_last(&sm_cluster_find_broker(c, 1)->rates.messages_in)->known);
    apply_reading(c, 0, 7000, 1, 600, 0, 0);
    apply_reading(c, 1, 7003, 5700, 80, 0, 0);
    CU_ASSERT_TRUE(near(sm_series_last(sum)->value, 160));
    /* one point a round, every round */
    CU_ASSERT_EQUAL(sum->n, 6);
    unwatch(c, &seen);
}

/* a broker the monitor no longer hears (its link lost or silent) shows no
 * rate at once, and says why; its next two readings give one again */
static void test_a_broker_not_heard_shows_no_rate_at_once(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    apply_reading(c, 2, 1000, 1, 0, 0, 0);
    apply_reading(c, 2, 2000, 1, 40, 4000, 0);
    SmBroker *b = sm_cluster_find_broker(c, 2);
    CU_ASSERT_TRUE(sm_series_last(&b->rates.bytes_in)->known);
    sm_cluster_broker_unheard(c, 2);
    CU_ASSERT_TRUE(sm_cluster_flush(c) >= 1);
    g_autofree char *now = sm_series_format_last(&b->rates.bytes_in, SM_UNIT_BYTES_PER_S);
    CU_ASSERT_STRING_EQUAL(now, "—");
    g_autofree char *said = sm_series_describe(&b->rates.messages_in, "messages in", SM_UNIT_PER_S);
    CU_ASSERT_TRUE(g_str_has_prefix(said, "messages in: no rate for the last reading (the broker "
                                          "is not heard)"));
    /* twice: one gap */
    guint n = b->rates.messages_in.n;
    sm_cluster_broker_unheard(c, 2);
    CU_ASSERT_EQUAL(b->rates.messages_in.n, n);
    /* heard again: the first reading starts afresh, the second is a rate */
    apply_reading(c, 2, 9000, 1, 100, 0, 0);
    CU_ASSERT_FALSE(sm_series_last(&b->rates.messages_in)->known);
    apply_reading(c, 2, 10000, 1, 130, 0, 0);
    CU_ASSERT_TRUE(near(sm_series_last(&b->rates.messages_in)->value, 30));
    unwatch(c, &seen);
}

/* a leader change that keeps the leader (a new epoch only) is no event */
static void test_a_new_epoch_of_the_same_leader_is_no_event(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    apply(c, "{\"seq\":9,\"type\":\"leader_change\",\"broker\":2,\"time_ms\":3000,"
             "\"topic\":\"watched\",\"partition\":0,\"leader\":0,\"leader_epoch\":1,"
             "\"previous_leader\":0,\"previous_leader_epoch\":0}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(seen.events, 0);
    CU_ASSERT_EQUAL(sm_cluster_find_partition(c, "watched", 0)->leader_epoch, 1);
    apply(c, "{\"seq\":10,\"type\":\"leader_change\",\"broker\":2,\"time_ms\":4000,"
             "\"topic\":\"watched\",\"partition\":0,\"leader\":1,\"leader_epoch\":2,"
             "\"previous_leader\":0,\"previous_leader_epoch\":1}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(seen.events, 1);
    unwatch(c, &seen);
}

static void test_hostile_broker_documents_give_no_rate(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    const char *docs[] = {
        /* another broker's document: no totals */
        "{\"id\":2,\"self\":false,\"host\":\"h\",\"snapshot\":{\"taken_ms\":1000}}",
        "{\"id\":2,\"self\":true,\"totals\":{\"messages_in\":\"10\",\"bytes_in\":1,"
        "\"bytes_out\":1},\"snapshot\":{\"taken_ms\":2000}}",
        "{\"id\":2,\"self\":true,\"totals\":{\"messages_in\":-5,\"bytes_in\":1,"
        "\"bytes_out\":1},\"snapshot\":{\"taken_ms\":3000}}",
        "{\"id\":2,\"self\":true,\"totals\":[1,2,3],\"snapshot\":{\"taken_ms\":4000}}",
        "{\"id\":2,\"self\":true,\"totals\":{\"messages_in\":1,\"bytes_in\":1,"
        "\"bytes_out\":1},\"snapshot\":null}",
        "{\"id\":-1,\"self\":true,\"totals\":{\"messages_in\":1,\"bytes_in\":1,"
        "\"bytes_out\":1},\"snapshot\":{\"taken_ms\":6000}}",
    };
    for (guint i = 0; i < G_N_ELEMENTS(docs); i++) {
        apply(c, docs[i]);
    }
    SmBroker *b = sm_cluster_find_broker(c, 2);
    CU_ASSERT_PTR_NOT_NULL(b);
    if (b == NULL) {
        unwatch(c, &seen);
        return;
    }
    CU_ASSERT_EQUAL(b->totals.taken_ms, 0);
    CU_ASSERT_EQUAL(b->rates.messages_in.n, 0);
    CU_ASSERT_PTR_NULL(sm_cluster_find_broker(c, -1));
    unwatch(c, &seen);
}

static void test_group_lag_history_follows_the_coordinators_clock(void)
{
    Seen seen;
    SmCluster *c = watched(&seen);
    const long long lags[] = {40, 30, 30, 90};
    const long long at[] = {1000, 6000, 6000, 11000}; /* the third: the same snapshot */
    for (guint i = 0; i < G_N_ELEMENTS(lags); i++) {
        g_autofree char *doc = g_strdup_printf(
            "{\"broker\":1,\"group_id\":\"billing\",\"lag\":%lld,\"offsets\":[],"
            "\"snapshot\":{\"taken_ms\":%lld}}",
            lags[i], at[i]);
        apply(c, doc);
    }
    sm_cluster_flush(c);
    g_autoptr(SmGroup) g = g_list_model_get_item(sm_cluster_get_groups(c), 0);
    const SmSeries *h = &g->lag_history;
    CU_ASSERT_EQUAL_FATAL(h->n, 3);
    CU_ASSERT_TRUE(near(sm_series_get(h, 1)->value, 30));
    CU_ASSERT_TRUE(near(sm_series_last(h)->value, 90));
    CU_ASSERT_EQUAL(sm_series_span_ms(h), 10000);
    CU_ASSERT_TRUE(near(sm_series_peak(h), 90));
    unwatch(c, &seen);
}

/* a partition's LSO held behind its HW by an open transaction, from the
 * documents and the stream; /v1/transactions gives the ids' rows, an id its
 * coordinator no longer lists goes */
static void test_lso_held_and_transactions_document(void)
{
    SmCluster *c = sm_cluster_new();
    apply(c, "{\"broker\":0,\"name\":\"held\",\"partitions\":[{\"topic\":\"held\","
             "\"partition\":0,\"leader\":0,\"leader_epoch\":0,\"high_watermark\":7,"
             "\"last_stable_offset\":2,\"log_start_offset\":0,\"log_end_offset\":7,"
             "\"open_transactions\":[\"ops-1\"],\"led_here\":true,\"isr\":[0],"
             "\"replicas\":[{\"broker\":0,\"log_end_offset\":7,\"lag\":0,"
             "\"in_sync\":true}]}],\"snapshot\":{\"taken_ms\":1000}}");
    apply(c, "{\"broker\":0,\"transactions\":[{\"transactional_id\":\"ops-1\","
             "\"producer_id\":1000,\"producer_epoch\":0,\"state\":\"Ongoing\","
             "\"timeout_ms\":60000,\"start_ms\":1,\"age_ms\":5100,\"last_update_ms\":1,"
             "\"partitions\":[{\"topic\":\"held\",\"partition\":0},{\"topic\":\"held\","
             "\"partition\":2}]},{\"transactional_id\":\"done\",\"producer_id\":1001,"
             "\"producer_epoch\":3,\"state\":\"CompleteCommit\",\"timeout_ms\":10000,"
             "\"start_ms\":null,\"age_ms\":null,\"partitions\":[]}],\"open\":1,"
             "\"snapshot\":{\"version\":3,\"taken_ms\":1000,\"age_ms\":400}}");
    sm_cluster_flush(c);
    SmPartition *p = sm_cluster_find_partition(c, "held", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    if (p == NULL) {
        return; /* for the analyser: the FATAL assertion does not return */
    }
    CU_ASSERT_EQUAL(p->last_stable_offset, 2);
    CU_ASSERT_TRUE(sm_partition_lso_held(p));
    g_autofree char *lso = sm_partition_format_lso(p);
    CU_ASSERT_STRING_EQUAL(lso, "2 (ops-1)");
    GListModel *txns = sm_cluster_get_transactions(c);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(txns), 2);
    g_autoptr(SmTransaction) done = g_list_model_get_item(txns, 0);
    g_autoptr(SmTransaction) x = g_list_model_get_item(txns, 1);
    CU_ASSERT_STRING_EQUAL(done->transactional_id, "done");
    CU_ASSERT_FALSE(sm_transaction_is_open(done));
    CU_ASSERT_EQUAL(done->age_ms, -1);
    CU_ASSERT_STRING_EQUAL(x->transactional_id, "ops-1");
    CU_ASSERT_STRING_EQUAL(x->state, "Ongoing");
    CU_ASSERT_TRUE(sm_transaction_is_open(x));
    CU_ASSERT_EQUAL(x->producer_id, 1000);
    CU_ASSERT_EQUAL(x->producer_epoch, 0);
    CU_ASSERT_EQUAL(x->age_ms, 5500); /* 5,100 at the snapshot, served 400 ms later */
    CU_ASSERT_EQUAL(x->coordinator, 0);
    CU_ASSERT_STRING_EQUAL(x->partitions, "held-0, held-2");
    CU_ASSERT_PTR_EQUAL(sm_cluster_find_transaction(c, "ops-1"), x);

    /* the abort: the stream's progress moves the LSO to the HW (the ABORT
     * marker), and the next document shows the id aborted in a new epoch
     * while "done" expired */
    apply(c, "{\"seq\":5,\"type\":\"progress\",\"broker\":0,\"time_ms\":2000,"
             "\"partitions\":[{\"topic\":\"held\",\"partition\":0,\"leader\":0,"
             "\"led_here\":true,\"high_watermark\":8,\"last_stable_offset\":8,"
             "\"log_start_offset\":0,\"log_end_offset\":8,\"replicas\":[{\"broker\":0,"
             "\"log_end_offset\":8,\"lag\":0,\"in_sync\":true}]}]}");
    apply(c, "{\"broker\":0,\"transactions\":[{\"transactional_id\":\"ops-1\","
             "\"producer_id\":1000,\"producer_epoch\":1,\"state\":\"CompleteAbort\","
             "\"timeout_ms\":60000,\"age_ms\":null,\"partitions\":[]}]}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(p->high_watermark, 8);
    CU_ASSERT_EQUAL(p->last_stable_offset, 8);
    CU_ASSERT_FALSE(sm_partition_lso_held(p));
    CU_ASSERT_PTR_NULL(p->held_by);
    g_autofree char *lso2 = sm_partition_format_lso(p);
    CU_ASSERT_STRING_EQUAL(lso2, "8");
    CU_ASSERT_EQUAL(g_list_model_get_n_items(txns), 1);
    CU_ASSERT_STRING_EQUAL(x->state, "CompleteAbort");
    CU_ASSERT_EQUAL(x->producer_epoch, 1);
    CU_ASSERT_FALSE(sm_transaction_is_open(x));
    CU_ASSERT_STRING_EQUAL(x->partitions, "");
    /* another coordinator's document leaves this one's ids alone; a
     * mistyped entry is read as unknown */
    apply(c, "{\"broker\":1,\"transactions\":[{\"transactional_id\":7},"
             "{\"transactional_id\":\"b1\",\"producer_id\":\"x\",\"partitions\":3}]}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(txns), 2);
    SmTransaction *b1 = sm_cluster_find_transaction(c, "b1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b1);
    if (b1 == NULL) {
        return; /* for the analyser: the FATAL assertion does not return */
    }
    CU_ASSERT_EQUAL(b1->producer_id, -1);
    CU_ASSERT_EQUAL(b1->coordinator, 1);
    /* a transaction begun after the partition's document: the stream holds
     * the LSO back, the next transactions document names who holds it */
    apply(c, "{\"seq\":6,\"type\":\"progress\",\"broker\":0,\"time_ms\":3000,"
             "\"partitions\":[{\"topic\":\"held\",\"partition\":0,\"leader\":0,"
             "\"led_here\":true,\"high_watermark\":10,\"last_stable_offset\":8,"
             "\"log_start_offset\":0,\"log_end_offset\":10,\"replicas\":[{\"broker\":0,"
             "\"log_end_offset\":10,\"lag\":0,\"in_sync\":true}]}]}");
    sm_cluster_flush(c);
    g_autofree char *lso3 = sm_partition_format_lso(p);
    CU_ASSERT_STRING_EQUAL(lso3, "8 (an open transaction)");
    apply(c, "{\"broker\":0,\"transactions\":[{\"transactional_id\":\"ops-1\","
             "\"producer_id\":1000,\"producer_epoch\":2,\"state\":\"Ongoing\","
             "\"age_ms\":10,\"partitions\":[{\"topic\":\"held\",\"partition\":0}]}]}");
    sm_cluster_flush(c);
    g_autofree char *lso4 = sm_partition_format_lso(p);
    CU_ASSERT_STRING_EQUAL(lso4, "8 (ops-1)");
    g_object_unref(c);
}

/* shown-0 moving from 0,1,2 to 1,2,3 as its leader's document shows it */
static const char SHOWN_MOVING[] = "{\"broker\":0,\"name\":\"shown\",\"partitions\":[" SMT_SHOWN_0_MOVING
                                   "],\"snapshot\":{\"taken_ms\":1000}}";

/* a partition being moved: its target from the partition's "reassignment"
 * and from /v1/reassignments, the replica being added with its LEO against
 * the HW, the one leaving; the moves list follows the documents */
static void test_a_move_under_way_gives_target_adding_and_removing(void)
{
    SmCluster *c = sm_cluster_new();
    apply(c, SHOWN_MOVING);
    sm_cluster_flush(c);
    SmPartition *p = sm_cluster_find_partition(c, "shown", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    if (p == NULL) {
        return; /* for the analyser: the FATAL assertion does not return */
    }
    CU_ASSERT_TRUE(sm_partition_is_moving(p));
    CU_ASSERT_TRUE(sm_partition_adding(p, 3));
    CU_ASSERT_FALSE(sm_partition_adding(p, 1));
    CU_ASSERT_TRUE(sm_partition_removing(p, 0));
    CU_ASSERT_FALSE(sm_partition_removing(p, 3));
    g_autofree char *move = sm_partition_format_move(p);
    CU_ASSERT_STRING_EQUAL(move, "to 1, 2, 3: adding 3, removing 0");
    g_autofree char *target = sm_partition_format_target(p);
    CU_ASSERT_STRING_EQUAL(target, "1, 2, 3");
    g_autofree char *adding = sm_partition_format_adding(p);
    CU_ASSERT_STRING_EQUAL(adding, "3: 1 of 12 (11 behind)");
    g_autofree char *removing = sm_partition_format_removing(p);
    CU_ASSERT_STRING_EQUAL(removing, "0");
    g_autofree char *d3 = sm_partition_describe_replica(p, 2);
    CU_ASSERT_STRING_EQUAL(d3, "replica 3: being added, out of sync, 11 behind the high watermark");
    g_autofree char *d0 = sm_partition_describe_replica(p, 3);
    CU_ASSERT_STRING_EQUAL(d0, "replica 0: leader, being removed, in sync, at the high watermark");
    GListModel *moves = sm_cluster_get_moves(c);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(moves), 1);

    /* another broker's /v1/reassignments: one more move, sorted; a
     * partition not known yet is not made up */
    apply(c, "{\"broker\":1,\"partitions\":[{\"topic\":\"another\",\"partition\":1,"
             "\"leader\":0,\"leader_epoch\":0,\"led_here\":false,\"isr\":[0],"
             "\"replicas\":[{\"broker\":2},{\"broker\":0}]}]}");
    apply(c, "{\"broker\":1,\"reassignments\":[{\"topic\":\"shown\",\"partition\":0,"
             "\"target\":[1,2,3],\"replicas\":[1,2,3,0],\"adding\":[3],\"removing\":[0],"
             "\"leader\":0,\"led_here\":false,\"high_watermark\":12,\"in_sync\":[0,1,2]},"
             "{\"topic\":\"another\",\"partition\":1,\"target\":[2],\"replicas\":[2,0],"
             "\"adding\":[2],\"removing\":[0],\"leader\":0,\"led_here\":false,"
             "\"high_watermark\":null,\"in_sync\":[0]},{\"topic\":7},{\"topic\":\"x\","
             "\"partition\":0,\"target\":[]},{\"topic\":\"unknown\",\"partition\":0,"
             "\"target\":[1]}]}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(moves), 2);
    g_autoptr(SmPartition) first = g_list_model_get_item(moves, 0);
    CU_ASSERT_STRING_EQUAL(first->topic, "another");
    CU_ASSERT_EQUAL(first->partition, 1);
    /* no leader's view of its replicas yet: its LEO unknown */
    g_autofree char *move2 = sm_partition_format_move(first);
    CU_ASSERT_STRING_EQUAL(move2, "to 2: adding 2, removing 0");
    g_autofree char *adding2 = sm_partition_format_adding(first);
    CU_ASSERT_STRING_EQUAL(adding2, "2: — of —");
    CU_ASSERT_PTR_NULL(sm_cluster_find_partition(c, "x", 0));
    CU_ASSERT_PTR_NULL(sm_cluster_find_topic(c, "unknown"));

    /* a partition document of a broker that does not say keeps the move;
     * "reassignment": null ends it */
    apply(c, "{\"broker\":0,\"partitions\":[{\"topic\":\"another\",\"partition\":1,"
             "\"leader\":0,\"leader_epoch\":0,\"led_here\":false,\"isr\":[0],"
             "\"replicas\":[{\"broker\":2},{\"broker\":0}]}]}");
    sm_cluster_flush(c);
    CU_ASSERT_TRUE(sm_partition_is_moving(first));
    apply(c, "{\"broker\":0,\"partitions\":[{\"topic\":\"another\",\"partition\":1,"
             "\"leader\":0,\"leader_epoch\":1,\"led_here\":false,\"isr\":[2],"
             "\"replicas\":[{\"broker\":2}],\"reassignment\":null}]}");
    sm_cluster_flush(c);
    CU_ASSERT_FALSE(sm_partition_is_moving(first));
    g_autofree char *move3 = sm_partition_format_move(first);
    CU_ASSERT_STRING_EQUAL(move3, "");
    CU_ASSERT_EQUAL(g_list_model_get_n_items(moves), 1);

    /* the move done: an empty /v1/reassignments empties the list */
    apply(c, "{\"broker\":2,\"reassignments\":[]}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(moves), 0);
    CU_ASSERT_FALSE(sm_partition_is_moving(p));
    g_autofree char *d0_after = sm_partition_describe_replica(p, 3);
    CU_ASSERT_STRING_EQUAL(d0_after, "replica 0: leader, in sync, at the high watermark");
    g_object_unref(c);
}

/* a topic's leader.replication.throttled.replicas and
 * follower.replication.throttled.replicas, Kafka's partition:broker lists
 * or "*", on each partition; "" (Kafka's default) is none */
static void test_throttled_replicas_from_the_topic_configs(void)
{
    SmCluster *c = sm_cluster_new();
    apply(c, "{\"broker\":0,\"name\":\"slow\",\"configs\":{"
             "\"leader.replication.throttled.replicas\":\"0:1, 0:2,1:1,bad,2:x\","
             "\"follower.replication.throttled.replicas\":\"*\"},\"configs_from\":0,"
             "\"partitions\":[{\"topic\":\"slow\",\"partition\":0,\"leader\":1,"
             "\"leader_epoch\":0,\"isr\":[1]},{\"topic\":\"slow\",\"partition\":1,\"leader\":1,"
             "\"leader_epoch\":0,\"isr\":[1]}]}");
    apply(c, "{\"broker\":0,\"partitions\":[{\"topic\":\"slow\",\"partition\":2,\"leader\":1,"
             "\"leader_epoch\":0,\"isr\":[1]}]}");
    sm_cluster_flush(c);
    SmPartition *p0 = sm_cluster_find_partition(c, "slow", 0);
    SmPartition *p1 = sm_cluster_find_partition(c, "slow", 1);
    SmPartition *p2 = sm_cluster_find_partition(c, "slow", 2);
    CU_ASSERT_FATAL(p0 != NULL && p1 != NULL && p2 != NULL);
    if (p0 == NULL || p1 == NULL || p2 == NULL) {
        return; /* for the analyser: the FATAL assertion does not return */
    }
    CU_ASSERT_STRING_EQUAL(p0->throttled, "leader 1, 2; follower all");
    CU_ASSERT_STRING_EQUAL(p1->throttled, "leader 1; follower all");
    CU_ASSERT_STRING_EQUAL(p2->throttled, "follower all");
    apply(c, "{\"broker\":0,\"name\":\"slow\",\"configs\":{"
             "\"leader.replication.throttled.replicas\":\"\","
             "\"follower.replication.throttled.replicas\":\"2:3\"},\"configs_from\":0,"
             "\"partitions\":[]}");
    sm_cluster_flush(c);
    CU_ASSERT_PTR_NULL(p0->throttled);
    CU_ASSERT_PTR_NULL(p1->throttled);
    CU_ASSERT_STRING_EQUAL(p2->throttled, "follower 3");
    g_object_unref(c);
}

/* /v1/quotas: the entities in force (one that no broker lists goes) and
 * each broker's rates, a client throttled now with its time left */
static void test_quotas_document_gives_entities_and_throttled_clients(void)
{
    SmCluster *c = sm_cluster_new();
    apply(c, "{\"broker\":0,\"quotas\":[{\"user\":null,\"client_id\":\"held\","
             "\"producer_byte_rate\":51200.0,\"consumer_byte_rate\":null,"
             "\"request_percentage\":null},{\"user\":\"alice\",\"client_id\":null,"
             "\"producer_byte_rate\":null,\"consumer_byte_rate\":1024,"
             "\"request_percentage\":25.0},{\"user\":null,\"client_id\":null}],"
             "\"clients\":[{\"type\":\"Produce\",\"user\":\"\",\"client_id\":\"held\","
             "\"quota\":51200.0,\"rate\":52011.4,\"throttle_time_ms_total\":15720,"
             "\"throttle_time_ms_left\":412,\"throttled\":true},{\"type\":\"Request\","
             "\"user\":\"alice\",\"client_id\":\"\",\"quota\":25.0,\"rate\":3.2,"
             "\"throttle_time_ms_total\":0,\"throttle_time_ms_left\":0,\"throttled\":false},"
             "{\"type\":\"Fetch\",\"user\":\"\",\"client_id\":\"free\",\"quota\":null,"
             "\"rate\":10.0,\"throttle_time_ms_total\":0,\"throttle_time_ms_left\":0}],"
             "\"throttled_now\":1}");
    sm_cluster_flush(c);
    GListModel *quotas = sm_cluster_get_quotas(c);
    GListModel *rates = sm_cluster_get_quota_rates(c);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(quotas), 2);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(rates), 3);
    g_autoptr(SmQuota) held = g_list_model_get_item(quotas, 0);
    g_autoptr(SmQuota) alice = g_list_model_get_item(quotas, 1);
    CU_ASSERT_PTR_NULL(held->user);
    CU_ASSERT_STRING_EQUAL(held->client_id, "held");
    g_autofree char *produce = sm_quota_format_bytes(held->producer_byte_rate);
    CU_ASSERT_STRING_EQUAL(produce, "51,200 B/s");
    g_autofree char *fetch = sm_quota_format_bytes(held->consumer_byte_rate);
    CU_ASSERT_STRING_EQUAL(fetch, "—");
    CU_ASSERT_STRING_EQUAL(alice->user, "alice");
    g_autofree char *pct = sm_quota_format_percent(alice->request_percentage);
    CU_ASSERT_STRING_EQUAL(pct, "25 %");
    /* by broker, type, user, client id */
    g_autoptr(SmQuotaRate) r0 = g_list_model_get_item(rates, 0);
    g_autoptr(SmQuotaRate) r1 = g_list_model_get_item(rates, 1);
    g_autoptr(SmQuotaRate) r2 = g_list_model_get_item(rates, 2);
    CU_ASSERT_STRING_EQUAL(r0->type, "Fetch");
    CU_ASSERT_STRING_EQUAL(r1->type, "Produce");
    CU_ASSERT_STRING_EQUAL(r2->type, "Request");
    CU_ASSERT_TRUE(sm_quota_rate_throttled(r1));
    CU_ASSERT_FALSE(sm_quota_rate_throttled(r2));
    g_autofree char *t1 = sm_quota_rate_format_throttle(r1);
    CU_ASSERT_STRING_EQUAL(t1, "throttled: 412 ms left");
    g_autofree char *f1 = sm_quota_rate_format(r1);
    CU_ASSERT_STRING_EQUAL(f1, "52,011 B/s of 51,200");
    g_autofree char *f2 = sm_quota_rate_format(r2);
    CU_ASSERT_STRING_EQUAL(f2, "3 % of 25");
    g_autofree char *f0 = sm_quota_rate_format(r0);
    CU_ASSERT_STRING_EQUAL(f0, "10 B/s, no quota");
    g_autofree char *t0 = sm_quota_rate_format_throttle(r0);
    CU_ASSERT_STRING_EQUAL(t0, "");

    /* broker 1 lists held only and measures nothing: alice stays (broker 0
     * listed it), broker 0's rates stay */
    apply(c, "{\"broker\":1,\"quotas\":[{\"user\":null,\"client_id\":\"held\","
             "\"producer_byte_rate\":51200.0}],\"clients\":[]}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(quotas), 2);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(rates), 3);
    /* broker 0 again: alice gone, held's throttle over, the Fetch rate gone */
    apply(c, "{\"broker\":0,\"quotas\":[{\"user\":null,\"client_id\":\"held\","
             "\"producer_byte_rate\":51200.0}],\"clients\":[{\"type\":\"Produce\","
             "\"user\":\"\",\"client_id\":\"held\",\"quota\":51200.0,\"rate\":50000.0,"
             "\"throttle_time_ms_total\":16000,\"throttle_time_ms_left\":0}]}");
    sm_cluster_flush(c);
    CU_ASSERT_EQUAL(g_list_model_get_n_items(quotas), 1);
    CU_ASSERT_EQUAL_FATAL(g_list_model_get_n_items(rates), 1);
    CU_ASSERT_FALSE(sm_quota_rate_throttled(r1));
    CU_ASSERT_EQUAL(r1->throttle_total_ms, 16000);
    g_object_unref(c);
}

static CU_TestInfo tests[] = {
    {"cluster_document_gives_brokers_by_id", test_cluster_document_gives_brokers_by_id},
    {"leader_view_gives_replica_rows_and_descriptions",
     test_leader_view_gives_replica_rows_and_descriptions},
    {"format_count_groups_thousands", test_format_count_groups_thousands},
    {"cluster_view_takes_each_leaders_view", test_cluster_view_takes_each_leaders_view},
    {"a_lost_broker_is_one_group_of_events", test_a_lost_broker_is_one_group_of_events},
    {"progress_from_the_leader_moves_offsets_in_one_change",
     test_progress_from_the_leader_moves_offsets_in_one_change},
    {"progress_from_a_broker_that_no_longer_leads_is_ignored",
     test_progress_from_a_broker_that_no_longer_leads_is_ignored},
    {"one_isr_shrink_reported_by_three_brokers_is_one_event",
     test_one_isr_shrink_reported_by_three_brokers_is_one_event},
    {"broker_gone_and_back", test_broker_gone_and_back},
    {"offline_partition_counted", test_offline_partition_counted},
    {"new_partitions_arrive_in_one_items_changed", test_new_partitions_arrive_in_one_items_changed},
    {"hostile_json_is_refused_or_read_as_unknown", test_hostile_json_is_refused_or_read_as_unknown},
    {"group_document_gives_its_members", test_group_document_gives_its_members},
    {"parser_hands_back_in_push_order_on_the_owner_thread",
     test_parser_hands_back_in_push_order_on_the_owner_thread},
    {"parser_freed_with_work_pending_calls_back_no_more",
     test_parser_freed_with_work_pending_calls_back_no_more},
    {"progress_digested_on_a_worker_applies_as_the_json_does",
     test_progress_digested_on_a_worker_applies_as_the_json_does},
    {"two_readings_of_a_brokers_totals_give_its_rates",
     test_two_readings_of_a_brokers_totals_give_its_rates},
    {"a_counter_going_down_is_a_reset", test_a_counter_going_down_is_a_reset},
    {"cluster_rates_sum_the_brokers_per_round", test_cluster_rates_sum_the_brokers_per_round},
    {"broker_gone_then_back_leaves_the_sum_and_returns",
     test_broker_gone_then_back_leaves_the_sum_and_returns},
    {"a_gone_replica_keeps_its_last_known_leo_offline",
     test_a_gone_replica_keeps_its_last_known_leo_offline},
    {"a_broker_not_heard_shows_no_rate_at_once", test_a_broker_not_heard_shows_no_rate_at_once},
    {"a_new_epoch_of_the_same_leader_is_no_event",
     test_a_new_epoch_of_the_same_leader_is_no_event},
    {"hostile_broker_documents_give_no_rate", test_hostile_broker_documents_give_no_rate},
    {"group_lag_history_follows_the_coordinators_clock",
     test_group_lag_history_follows_the_coordinators_clock},
    {"lso_held_and_transactions_document", test_lso_held_and_transactions_document},
    {"a_move_under_way_gives_target_adding_and_removing",
     test_a_move_under_way_gives_target_adding_and_removing},
    {"throttled_replicas_from_the_topic_configs", test_throttled_replicas_from_the_topic_configs},
    {"quotas_document_gives_entities_and_throttled_clients",
     test_quotas_document_gives_entities_and_throttled_clients},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("monitor-model", tests);
}
