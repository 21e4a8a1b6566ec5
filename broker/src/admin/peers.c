/* samsa-broker: the HWs of partitions led elsewhere, from their leaders'
 * admin APIs (see peers.h). */
#define _GNU_SOURCE

#include "admin/peers.h"

#include <libsoup/soup.h>

struct peer_hw {
    gint64 hw;
    gint32 leader;
    gint64 at_us; /* monotonic, when its leader's answer came */
};

/* A topic's configs from a broker hosting it. */
struct peer_configs {
    JsonNode *configs; /* an object; NULL until an answer came */
    gint32 from;
    gint64 at_us;    /* monotonic, when the answer came */
    gint64 tried_us; /* monotonic, when the last read started */
};

static void peer_configs_free(gpointer v)
{
    struct peer_configs *pc = v;
    if (pc->configs != NULL) {
        json_node_unref(pc->configs);
    }
    g_free(pc);
}

struct peer_read;

struct br_admin_peers {
    SoupSession *session;
    char *token;
    void (*refreshed)(gpointer);
    gpointer ud;
    GHashTable *hws; /* "topic/partition" -> struct peer_hw (owned) */
    GHashTable *configs; /* topic -> struct peer_configs (owned) */
    GCancellable *cancel;
    GPtrArray *reads; /* struct peer_read * under way (owned by their callbacks) */
    gint64 started_us;
};

/* One GET under way; its callback frees it. p is NULL once p is freed. */
struct peer_read {
    struct br_admin_peers *p;
    SoupMessage *msg;
    gint32 leader;
    char *topic; /* a topic's configs are read; NULL: the HWs a leader has */
};

static char *key_of(const char *topic, gint64 partition)
{
    /* '/' cannot be in a topic name (Kafka's rule: [a-zA-Z0-9._-]) */
    return g_strdup_printf("%s/%" G_GINT64_FORMAT, topic, partition);
}

struct br_admin_peers *br_admin_peers_new(const char *token, GTlsDatabase *tls_db,
                                          void (*refreshed)(gpointer), gpointer ud)
{
    struct br_admin_peers *p = g_new0(struct br_admin_peers, 1);
    p->session = soup_session_new_with_options("timeout", (guint)BR_ADMIN_PEERS_TIMEOUT_S,
                                               "idle-timeout", (guint)60, "user-agent",
                                               "samsa-admin", NULL);
    if (tls_db != NULL) {
        soup_session_set_tls_database(p->session, tls_db);
    }
    p->token = g_strdup(token);
    p->refreshed = refreshed;
    p->ud = ud;
    p->hws = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    p->configs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, peer_configs_free);
    p->cancel = g_cancellable_new();
    p->reads = g_ptr_array_new();
    return p;
}

void br_admin_peers_free(struct br_admin_peers *p)
{
    if (p == NULL) {
        return;
    }
    for (guint i = 0; i < p->reads->len; i++) {
        struct peer_read *r = g_ptr_array_index(p->reads, i);
        r->p = NULL; /* its callback frees it */
    }
    g_cancellable_cancel(p->cancel);
    g_ptr_array_unref(p->reads);
    g_object_unref(p->cancel);
    g_object_unref(p->session);
    g_hash_table_unref(p->hws);
    g_hash_table_unref(p->configs);
    g_free(p->token);
    g_free(p);
}

/* A peer's answer parsed, or NULL; *doc is its top object (or NULL). */
static JsonParser *parse_answer(GBytes *body, JsonObject **doc)
{
    JsonParser *parser = json_parser_new();
    gsize len = 0;
    const char *data = g_bytes_get_data(body, &len);
    *doc = NULL;
    if (len > G_MAXSSIZE || !json_parser_load_from_data(parser, data, (gssize)len, NULL)) {
        g_object_unref(parser);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    *doc = root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    return parser;
}

/* A hosting broker's /v1/topics/{topic}: its configs. */
static void absorb_configs(struct br_admin_peers *p, GBytes *body, const char *topic, gint32 from)
{
    JsonObject *doc = NULL;
    JsonParser *parser = parse_answer(body, &doc);
    JsonNode *cfg = doc != NULL ? json_object_get_member(doc, "configs") : NULL;
    struct peer_configs *pc = g_hash_table_lookup(p->configs, topic);
    if (pc != NULL && cfg != NULL && JSON_NODE_HOLDS_OBJECT(cfg) &&
        json_object_get_size(json_node_get_object(cfg)) > 0) {
        if (pc->configs != NULL) {
            json_node_unref(pc->configs);
        }
        pc->configs = json_node_copy(cfg);
        pc->from = from;
        pc->at_us = g_get_monotonic_time();
    }
    if (parser != NULL) {
        g_object_unref(parser);
    }
}

/* A leader's /v1/partitions: the HW of every partition it leads. */
static void absorb(struct br_admin_peers *p, GBytes *body, gint32 leader)
{
    JsonObject *doc = NULL;
    JsonParser *parser = parse_answer(body, &doc);
    if (parser == NULL) {
        return;
    }
    JsonNode *parts = doc != NULL ? json_object_get_member(doc, "partitions") : NULL;
    JsonArray *arr = parts != NULL && JSON_NODE_HOLDS_ARRAY(parts) ? json_node_get_array(parts) : NULL;
    gint64 now = g_get_monotonic_time();
    for (guint i = 0; arr != NULL && i < json_array_get_length(arr); i++) {
        JsonNode *n = json_array_get_element(arr, i);
        JsonObject *o = JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
        if (o == NULL || !json_object_get_boolean_member_with_default(o, "led_here", FALSE)) {
            continue;
        }
        const char *topic = json_object_get_string_member_with_default(o, "topic", NULL);
        gint64 part = json_object_get_int_member_with_default(o, "partition", -1);
        gint64 hw = json_object_get_int_member_with_default(o, "high_watermark", -1);
        if (topic == NULL || part < 0 || part > G_MAXINT32 || hw < 0) {
            continue;
        }
        struct peer_hw *v = g_new(struct peer_hw, 1);
        *v = (struct peer_hw){hw, leader, now};
        g_hash_table_replace(p->hws, key_of(topic, part), v);
    }
    g_object_unref(parser);
}

static void read_done(GObject *src, GAsyncResult *res, gpointer ud)
{
    struct peer_read *r = ud;
    GBytes *body = soup_session_send_and_read_finish(SOUP_SESSION(src), res, NULL);
    struct br_admin_peers *p = r->p;
    if (p != NULL) {
        if (body != NULL && soup_message_get_status(r->msg) == SOUP_STATUS_OK) {
            if (r->topic != NULL) {
                absorb_configs(p, body, r->topic, r->leader);
            } else {
                absorb(p, body, r->leader);
            }
        }
        (void)g_ptr_array_remove_fast(p->reads, r);
        if (p->reads->len == 0) {
            p->refreshed(p->ud);
        }
    }
    if (body != NULL) {
        g_bytes_unref(body);
    }
    g_object_unref(r->msg);
    g_free(r->topic);
    g_free(r);
}

/* Starts a GET of path from broker b's admin API; topic: what it reads
 * (see struct peer_read). FALSE when b's URL is not one libsoup takes. */
static gboolean start_read(struct br_admin_peers *p, const struct br_snap_broker *b,
                           const char *path, const char *topic)
{
    char *url = g_strconcat(b->admin_url, path, NULL);
    SoupMessage *msg = soup_message_new("GET", url);
    g_free(url);
    if (msg == NULL) {
        return FALSE;
    }
    SoupMessageHeaders *h = soup_message_get_request_headers(msg);
    soup_message_headers_replace(h, BR_ADMIN_PEER_HEADER, "1");
    if (p->token != NULL) {
        char *auth = g_strconcat("Bearer ", p->token, NULL);
        soup_message_headers_replace(h, "Authorization", auth);
        g_free(auth);
    }
    struct peer_read *r = g_new0(struct peer_read, 1);
    *r = (struct peer_read){p, msg, b->id, g_strdup(topic)};
    g_ptr_array_add(p->reads, r);
    soup_session_send_and_read_async(p->session, msg, G_PRIORITY_DEFAULT, p->cancel, read_done, r);
    return TRUE;
}

static gboolean fresh(const struct br_admin_peers *p, const char *topic, int32_t partition,
                      gint64 max_age_us)
{
    char *key = key_of(topic, partition);
    const struct peer_hw *v = g_hash_table_lookup(p->hws, key);
    g_free(key);
    return v != NULL && g_get_monotonic_time() - v->at_us < max_age_us;
}

gboolean br_admin_peers_refresh(struct br_admin_peers *p, const struct br_snapshot *snap)
{
    if (p->reads->len > 0) {
        return TRUE;
    }
    gint64 now = g_get_monotonic_time();
    if (snap == NULL || (p->started_us != 0 && now - p->started_us < BR_ADMIN_PEERS_REFRESH_US)) {
        return FALSE;
    }
    /* the leaders of the partitions whose HW is missing, once each */
    GArray *leaders = g_array_new(FALSE, FALSE, sizeof(gint32));
    for (size_t g = 0; g < snap->ngroups; g++) {
        const struct br_snap_group *grp = &snap->groups[g];
        for (size_t k = 0; k < grp->nlags; k++) {
            const struct br_snap_lag *l = &grp->lags[k];
            if (l->high_watermark >= 0 || l->topic == NULL ||
                fresh(p, l->topic, l->partition, BR_ADMIN_PEERS_REFRESH_US)) {
                continue;
            }
            const struct br_snap_topic *t = br_snap_topic(snap, l->topic);
            if (t == NULL || l->partition < 0 || l->partition >= t->npartitions) {
                continue;
            }
            gint32 leader = t->parts[l->partition].leader;
            const struct br_snap_broker *b = leader >= 0 ? br_snap_broker(snap, leader) : NULL;
            gboolean known = FALSE;
            for (guint i = 0; i < leaders->len && !known; i++) {
                known = g_array_index(leaders, gint32, i) == leader;
            }
            if (leader == snap->node_id || b == NULL || !b->alive || b->admin_url == NULL ||
                known) {
                continue;
            }
            g_array_append_val(leaders, leader);
        }
    }
    for (guint i = 0; i < leaders->len; i++) {
        const struct br_snap_broker *b = br_snap_broker(snap, g_array_index(leaders, gint32, i));
        (void)start_read(p, b, "/v1/partitions", NULL);
    }
    g_array_unref(leaders);
    p->started_us = now;
    return p->reads->len > 0;
}

gboolean br_admin_peers_hw(const struct br_admin_peers *p, const char *topic, int32_t partition,
                           gint64 *hw, gint32 *leader)
{
    if (p == NULL || topic == NULL || !fresh(p, topic, partition, BR_ADMIN_PEERS_MAX_AGE_US)) {
        return FALSE;
    }
    char *key = key_of(topic, partition);
    const struct peer_hw *v = g_hash_table_lookup(p->hws, key);
    g_free(key);
    *hw = v->hw;
    *leader = v->leader;
    return TRUE;
}

gboolean br_admin_peers_refresh_topic(struct br_admin_peers *p, const struct br_snapshot *snap,
                                      const char *topic)
{
    const struct br_snap_topic *t = snap != NULL ? br_snap_topic(snap, topic) : NULL;
    if (t == NULL || t->nconfigs > 0) {
        return p->reads->len > 0;
    }
    gint64 now = g_get_monotonic_time();
    struct peer_configs *pc = g_hash_table_lookup(p->configs, topic);
    if (pc != NULL && now - pc->tried_us < BR_ADMIN_PEERS_REFRESH_US) {
        return p->reads->len > 0;
    }
    /* the first live leader of its partitions that this broker knows the
     * admin API of (a leader hosts the topic, so it has its configs) */
    const struct br_snap_broker *from = NULL;
    for (int32_t i = 0; i < t->npartitions && from == NULL; i++) {
        gint32 leader = t->parts[i].leader;
        const struct br_snap_broker *b = leader >= 0 ? br_snap_broker(snap, leader) : NULL;
        if (leader != snap->node_id && b != NULL && b->alive && b->admin_url != NULL) {
            from = b;
        }
    }
    if (from == NULL) {
        return p->reads->len > 0;
    }
    if (pc == NULL) {
        pc = g_new0(struct peer_configs, 1);
        pc->from = -1;
        g_hash_table_insert(p->configs, g_strdup(topic), pc);
    }
    pc->tried_us = now;
    char *escaped = g_uri_escape_string(topic, NULL, FALSE);
    char *path = g_strconcat("/v1/topics/", escaped, NULL);
    (void)start_read(p, from, path, topic);
    g_free(path);
    g_free(escaped);
    return p->reads->len > 0;
}

JsonObject *br_admin_peers_configs(const struct br_admin_peers *p, const char *topic,
                                   gint32 *from)
{
    const struct peer_configs *pc =
        p != NULL && topic != NULL ? g_hash_table_lookup(p->configs, topic) : NULL;
    if (pc == NULL || pc->configs == NULL ||
        g_get_monotonic_time() - pc->at_us >= BR_ADMIN_PEERS_MAX_AGE_US) {
        return NULL;
    }
    *from = pc->from;
    return json_node_get_object(pc->configs);
}
