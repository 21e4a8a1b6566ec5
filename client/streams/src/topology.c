/*
 * A topology: nodes (sources, processors, sinks) joined parent to child,
 * and stores. Sub-topologies are numbered as Kafka 2.0's
 * InternalTopologyBuilder.makeNodeGroups does: nodes connected through
 * parent links or sharing a store (a join) form one group; a repartition topic's sink and source belong
 * to different groups.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *st_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c != NULL) {
        memcpy(c, s, n);
    }
    return c;
}

int st_fail(samsa_st_topology *t, int err, const char *fmt, ...)
{
    if (t->err == SAMSA_OK) {
        t->err = err;
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(t->msg, sizeof t->msg, fmt, ap);
        va_end(ap);
    }
    return err;
}

const char *st_late_topic(samsa_st_topology *t, const char *topic)
{
    if (topic == NULL) {
        return NULL;
    }
    char *copy = st_own(t, st_strdup(topic));
    const char **v = copy != NULL ? st_own(t, calloc(t->late_topic_count + 1, sizeof *v)) : NULL;
    if (v == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < t->late_topic_count; i++) {
        v[i] = t->late_topics[i]; /* the old array stays owned until the topology goes */
    }
    v[t->late_topic_count++] = copy;
    t->late_topics = v;
    return copy;
}

void *st_own(samsa_st_topology *t, void *p)
{
    if (p == NULL) {
        (void)st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
        return NULL;
    }
    void **o = realloc(t->owned, (t->owned_count + 1) * sizeof *o);
    if (o == NULL) {
        free(p);
        (void)st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
        return NULL;
    }
    t->owned = o;
    t->owned[t->owned_count++] = p;
    return p;
}

samsa_st_topology *samsa_st_topology_new(void)
{
    return calloc(1, sizeof(samsa_st_topology));
}

static void node_free(struct samsa_st_node *n)
{
    for (size_t i = 0; i < n->topic_count; i++) {
        free(n->topics[i]);
        if (n->resolved != NULL) {
            free(n->resolved[i]);
        }
    }
    free(n->topics);
    free(n->resolved);
    free(n->topic);
    free(n->sink_resolved);
    free(n->parents);
    free(n->children);
    free(n->name);
    free(n);
}

void samsa_st_topology_destroy(samsa_st_topology *t)
{
    if (t == NULL) {
        return;
    }
    for (size_t i = 0; i < t->node_count; i++) {
        node_free(t->nodes[i]);
    }
    free(t->nodes);
    for (size_t i = 0; i < t->store_count; i++) {
        free(t->stores[i].name);
        free(t->stores[i].changelog);
        free(t->stores[i].users);
    }
    free(t->stores);
    for (size_t i = 0; i < t->owned_count; i++) {
        free(t->owned[i]);
    }
    free(t->owned);
    free(t);
}

int samsa_st_topology_error(const samsa_st_topology *t, const char **message)
{
    if (message != NULL) {
        *message = t->msg;
    }
    return t->err;
}

static struct samsa_st_node *add_node(samsa_st_topology *t, const char *name,
                                      enum st_node_kind kind)
{
    if (t == NULL || t->err != SAMSA_OK) {
        return NULL;
    }
    if (name == NULL) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG, "a node needs a name");
        return NULL;
    }
    for (size_t i = 0; i < t->node_count; i++) {
        if (strcmp(t->nodes[i]->name, name) == 0) {
            (void)st_fail(t, SAMSA_ERR_INVALID_ARG, "two nodes are named %s", name);
            return NULL;
        }
    }
    struct samsa_st_node **nodes = realloc(t->nodes, (t->node_count + 1) * sizeof(struct samsa_st_node *));
    if (nodes == NULL) {
        (void)st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
        return NULL;
    }
    t->nodes = nodes;
    struct samsa_st_node *n = calloc(1, sizeof *n);
    if (n == NULL || (n->name = st_strdup(name)) == NULL) {
        free(n);
        (void)st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
        return NULL;
    }
    n->kind = kind;
    n->index = t->node_count;
    t->nodes[t->node_count++] = n;
    return n;
}

static int link_child(samsa_st_topology *t, struct samsa_st_node *parent,
                      struct samsa_st_node *child)
{
    if (parent->kind == ST_SINK) {
        return st_fail(t, SAMSA_ERR_INVALID_ARG, "sink %s cannot have children", parent->name);
    }
    size_t *c = realloc(parent->children, (parent->child_count + 1) * sizeof *c);
    if (c == NULL) {
        return st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
    }
    parent->children = c;
    c[parent->child_count++] = child->index;
    size_t *p = realloc(child->parents, (child->parent_count + 1) * sizeof *p);
    if (p == NULL) {
        return st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
    }
    child->parents = p;
    p[child->parent_count++] = parent->index;
    return SAMSA_OK;
}

samsa_st_node *samsa_st_add_source(samsa_st_topology *t, const char *name,
                                   const char *const *topics, size_t count)
{
    if (t != NULL && count == 0) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG, "source %s reads no topic", name);
        return NULL;
    }
    struct samsa_st_node *n = add_node(t, name, ST_SOURCE);
    if (n == NULL) {
        return NULL;
    }
    n->topics = calloc(count, sizeof *n->topics);
    if (n->topics == NULL) {
        (void)st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        n->topics[i] = st_strdup(topics[i]);
        if (n->topics[i] == NULL) {
            (void)st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
            return NULL;
        }
        n->topic_count = i + 1;
    }
    return n;
}

samsa_st_node *samsa_st_add_processor(samsa_st_topology *t, const char *name,
                                      const struct samsa_st_processor *proc, void *opaque,
                                      samsa_st_node *const *parents, size_t count)
{
    for (size_t i = 0; t != NULL && i < count; i++) {
        if (parents[i] == NULL) {
            return NULL; /* the parent's failure is the topology's error */
        }
    }
    if (t != NULL && (proc == NULL || proc->process == NULL)) {
        (void)st_fail(t, SAMSA_ERR_INVALID_ARG, "processor %s has no process callback",
                      name != NULL ? name : "(null)");
        return NULL;
    }
    struct samsa_st_node *n = add_node(t, name, ST_PROCESSOR);
    if (n == NULL) {
        return NULL;
    }
    n->proc = proc;
    n->opaque = opaque;
    for (size_t i = 0; i < count; i++) {
        if (link_child(t, parents[i], n) != SAMSA_OK) {
            return NULL;
        }
    }
    return n;
}

samsa_st_node *samsa_st_add_sink(samsa_st_topology *t, const char *name, const char *topic,
                                 samsa_st_node *parent)
{
    if (parent == NULL || topic == NULL) {
        if (t != NULL && topic == NULL) {
            (void)st_fail(t, SAMSA_ERR_INVALID_ARG, "sink %s has no topic", name);
        }
        return NULL;
    }
    struct samsa_st_node *n = add_node(t, name, ST_SINK);
    if (n == NULL) {
        return NULL;
    }
    n->topic = st_strdup(topic);
    if (n->topic == NULL) {
        (void)st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return link_child(t, parent, n) == SAMSA_OK ? n : NULL;
}

static int add_store(samsa_st_topology *t, const char *name, bool window, int64_t retention,
                     samsa_st_node *node)
{
    if (t == NULL) {
        return SAMSA_ERR_INVALID_ARG;
    }
    if (t->err != SAMSA_OK) {
        return t->err;
    }
    if (node == NULL || name == NULL) {
        return st_fail(t, SAMSA_ERR_INVALID_ARG, "a store needs a name and a node");
    }
    for (size_t i = 0; i < t->store_count; i++) {
        if (strcmp(t->stores[i].name, name) == 0) {
            return st_fail(t, SAMSA_ERR_INVALID_ARG, "two stores are named %s", name);
        }
    }
    struct st_store_def *s = realloc(t->stores, (t->store_count + 1) * sizeof *s);
    if (s == NULL) {
        return st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
    }
    t->stores = s;
    struct st_store_def *d = &s[t->store_count];
    memset(d, 0, sizeof *d);
    d->name = st_strdup(name);
    if (d->name == NULL) {
        return st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
    }
    d->window = window;
    d->retention_ms = retention;
    d->node = node->index;
    t->store_count++;
    return SAMSA_OK;
}

int samsa_st_add_kv_store(samsa_st_topology *t, const char *name, samsa_st_node *node)
{
    return add_store(t, name, false, 0, node);
}

int samsa_st_add_window_store(samsa_st_topology *t, const char *name, int64_t retention_ms,
                              samsa_st_node *node)
{
    return add_store(t, name, true, retention_ms, node);
}

int st_store_connect(samsa_st_topology *t, const char *store, const samsa_st_node *node)
{
    if (t->err != SAMSA_OK) {
        return t->err;
    }
    for (size_t i = 0; i < t->store_count; i++) {
        struct st_store_def *d = &t->stores[i];
        if (strcmp(d->name, store) != 0) {
            continue;
        }
        size_t *u = realloc(d->users, (d->user_count + 1) * sizeof *u);
        if (u == NULL) {
            return st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
        }
        d->users = u;
        u[d->user_count++] = node->index;
        return SAMSA_OK;
    }
    return st_fail(t, SAMSA_ERR_INVALID_ARG, "no store is named %s", store);
}

static size_t root(size_t *up, size_t i)
{
    while (up[i] != i) {
        up[i] = up[up[i]];
        i = up[i];
    }
    return i;
}

static char *internal_name(const char *application_id, const char *name, const char *suffix)
{
    size_t n = strlen(application_id) + strlen(name) + strlen(suffix) + 3;
    char *s = malloc(n);
    if (s != NULL) {
        (void)snprintf(s, n, "%s-%s-%s", application_id, name, suffix);
    }
    return s;
}

int st_topology_resolve(samsa_st_topology *t, const char *application_id)
{
    if (t->err != SAMSA_OK) {
        return t->err;
    }
    size_t *up = malloc((t->node_count + 1) * sizeof *up);
    if (up == NULL) {
        return st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < t->node_count; i++) {
        up[i] = i;
    }
    for (size_t i = 0; i < t->node_count; i++) {
        struct samsa_st_node *n = t->nodes[i];
        for (size_t p = 0; p < n->parent_count; p++) {
            up[root(up, i)] = root(up, n->parents[p]);
        }
    }
    /* a node reaching another node's store runs in the same task
     * (InternalTopologyBuilder.makeNodeGroups unions nodes sharing stores) */
    for (size_t i = 0; i < t->store_count; i++) {
        for (size_t u = 0; u < t->stores[i].user_count; u++) {
            up[root(up, t->stores[i].users[u])] = root(up, t->stores[i].node);
        }
    }
    size_t subs = 0;
    for (size_t i = 0; i < t->node_count; i++) {
        size_t r = root(up, i);
        if (r == i) {
            t->nodes[i]->sub = subs++;
        }
    }
    for (size_t i = 0; i < t->node_count; i++) {
        t->nodes[i]->sub = t->nodes[root(up, i)]->sub;
    }
    free(up);
    t->sub_count = subs;
    for (size_t i = 0; i < t->node_count; i++) {
        struct samsa_st_node *n = t->nodes[i];
        if (n->kind == ST_SOURCE) {
            if (n->resolved == NULL) {
                n->resolved = calloc(n->topic_count, sizeof *n->resolved);
                if (n->resolved == NULL) {
                    return st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
                }
            }
            for (size_t k = 0; k < n->topic_count; k++) {
                free(n->resolved[k]);
                n->resolved[k] = n->internal
                                     ? internal_name(application_id, n->topics[k], "repartition")
                                     : st_strdup(n->topics[k]);
                if (n->resolved[k] == NULL) {
                    return st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
                }
            }
        } else if (n->kind == ST_SINK) {
            free(n->sink_resolved);
            n->sink_resolved = n->internal
                                   ? internal_name(application_id, n->topic, "repartition")
                                   : st_strdup(n->topic);
            if (n->sink_resolved == NULL) {
                return st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
            }
        }
    }
    for (size_t i = 0; i < t->store_count; i++) {
        free(t->stores[i].changelog);
        t->stores[i].changelog = internal_name(application_id, t->stores[i].name, "changelog");
        if (t->stores[i].changelog == NULL) {
            return st_fail(t, SAMSA_ERR_NOMEM, "out of memory");
        }
    }
    return SAMSA_OK;
}

long st_topology_sub_of(const samsa_st_topology *t, const char *topic)
{
    for (size_t i = 0; i < t->node_count; i++) {
        const struct samsa_st_node *n = t->nodes[i];
        for (size_t k = 0; n->kind == ST_SOURCE && k < n->topic_count; k++) {
            if (n->resolved != NULL && strcmp(n->resolved[k], topic) == 0) {
                return (long)n->sub;
            }
        }
    }
    return -1;
}
