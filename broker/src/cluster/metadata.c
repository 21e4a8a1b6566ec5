/* samsa-broker: what both metadata back ends share (see metadata.h). */
#define _POSIX_C_SOURCE 200809L

#include "cluster/metadata.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <samsa-protocol/alloc.h>

__attribute__((format(printf, 3, 4))) static void set_msg(char *msg, size_t msglen, const char *fmt,
                                                          ...)
{
    if (msg == NULL || msglen == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
}

bool br_topic_names_collide(const char *a, const char *b)
{
    size_t n = strlen(a);
    if (n != strlen(b) || strcmp(a, b) == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char x = a[i] == '.' ? '_' : a[i];
        char y = b[i] == '.' ? '_' : b[i];
        if (x != y) {
            return false;
        }
    }
    return true;
}

void br_topic_meta_clear(struct br_topic_meta *t)
{
    if (t == NULL) {
        return;
    }
    kp_free(t->replicas);
    if (t->configs != NULL) {
        for (size_t i = 0; i < t->n_configs; i++) {
            kp_free(t->configs[i].key);
            kp_free(t->configs[i].value);
        }
        kp_free(t->configs);
    }
    memset(t, 0, sizeof *t);
}

void br_topic_metas_free(struct br_topic_meta *topics, size_t n)
{
    if (topics == NULL) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        br_topic_meta_clear(&topics[i]);
    }
    kp_free(topics);
}

static char *dup_string(const char *s)
{
    size_t n = strlen(s);
    char *p = kp_malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n + 1);
    }
    return p;
}

int br_topic_meta_copy(struct br_topic_meta *dst, const struct br_topic_meta *src)
{
    memset(dst, 0, sizeof *dst);
    memcpy(dst->name, src->name, sizeof dst->name);
    dst->name[BR_TOPIC_NAME_MAX] = '\0';
    dst->partitions = src->partitions;
    dst->replication_factor = src->replication_factor;
    if (src->replicas != NULL && src->partitions > 0 && src->replication_factor > 0) {
        size_t n = (size_t)src->partitions * (size_t)src->replication_factor;
        dst->replicas = kp_malloc(n * sizeof *dst->replicas);
        if (dst->replicas == NULL) {
            goto out_nomem;
        }
        memcpy(dst->replicas, src->replicas, n * sizeof *dst->replicas);
    }
    if (src->n_configs > 0) {
        dst->configs = kp_calloc(src->n_configs, sizeof *dst->configs);
        if (dst->configs == NULL) {
            goto out_nomem;
        }
        for (size_t i = 0; i < src->n_configs; i++) {
            dst->n_configs = i + 1; /* so that a failure frees what was copied */
            dst->configs[i].key = dup_string(src->configs[i].key);
            dst->configs[i].value = dup_string(src->configs[i].value);
            if (dst->configs[i].key == NULL || dst->configs[i].value == NULL) {
                goto out_nomem;
            }
        }
    }
    return 0;
out_nomem:
    br_topic_meta_clear(dst);
    return KP_E_NOMEM;
}

const char *br_topic_meta_config(const struct br_topic_meta *t, const char *key)
{
    for (size_t i = 0; i < t->n_configs; i++) {
        if (strcmp(t->configs[i].key, key) == 0) {
            return t->configs[i].value;
        }
    }
    return NULL;
}

/* In-place heapsort: a repeat check in O(n log n) whatever the input. */
static void sift_down(int32_t *a, size_t start, size_t end)
{
    size_t root = start;
    while (2 * root + 1 < end) {
        size_t child = 2 * root + 1;
        if (child + 1 < end && a[child] < a[child + 1]) {
            child++;
        }
        if (a[root] >= a[child]) {
            return;
        }
        int32_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

static void sort_ids(int32_t *a, size_t n)
{
    for (size_t i = n / 2; i > 0; i--) {
        sift_down(a, i - 1, n);
    }
    for (size_t end = n; end > 1; end--) {
        int32_t t = a[0];
        a[0] = a[end - 1];
        a[end - 1] = t;
        sift_down(a, 0, end - 1);
    }
}

static bool printable_key(const char *k)
{
    for (; *k != '\0'; k++) {
        if ((unsigned char)*k <= ' ' || (unsigned char)*k >= 0x7f) {
            return false;
        }
    }
    return true;
}

int br_meta_configs_check(const struct br_meta_config *configs, size_t n, char *err, size_t errlen)
{
    if (n > BR_META_MAX_CONFIGS) {
        set_msg(err, errlen, "more than %d configs", BR_META_MAX_CONFIGS);
        return KP_ERR_INVALID_CONFIG;
    }
    if (n > 0 && configs == NULL) {
        set_msg(err, errlen, "configs missing");
        return KP_ERR_INVALID_CONFIG;
    }
    for (size_t i = 0; i < n; i++) {
        const char *k = configs[i].key;
        const char *v = configs[i].value;
        if (k == NULL || v == NULL) {
            set_msg(err, errlen, "config %zu: null key or value", i);
            return KP_ERR_INVALID_CONFIG;
        }
        size_t kn = strlen(k);
        if (kn == 0 || kn > BR_META_MAX_CONFIG_KEY || !printable_key(k)) {
            set_msg(err, errlen, "config %zu: a key has 1 to %d printable ASCII bytes", i,
                    BR_META_MAX_CONFIG_KEY);
            return KP_ERR_INVALID_CONFIG;
        }
        if (strlen(v) > BR_META_MAX_CONFIG_VALUE) {
            set_msg(err, errlen, "config %s: value longer than %d bytes", k,
                    BR_META_MAX_CONFIG_VALUE);
            return KP_ERR_INVALID_CONFIG;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(configs[j].key, k) == 0) {
                set_msg(err, errlen, "config %s given twice", k);
                return KP_ERR_INVALID_CONFIG;
            }
        }
    }
    return 0;
}

int br_topic_meta_check(const struct br_topic_meta *t, char *err, size_t errlen)
{
    size_t name_len = strnlen(t->name, sizeof t->name);
    if (name_len == sizeof t->name || !br_topic_name_valid(t->name, name_len)) {
        set_msg(err, errlen,
                "invalid topic name: 1 to %d characters of [a-zA-Z0-9._-], not '.' or '..'",
                BR_TOPIC_NAME_MAX);
        return KP_ERR_INVALID_TOPIC_EXCEPTION;
    }
    if (t->partitions < 1 || t->partitions > BR_META_MAX_PARTITIONS) {
        set_msg(err, errlen, "%s: the number of partitions must be between 1 and %d", t->name,
                BR_META_MAX_PARTITIONS);
        return KP_ERR_INVALID_PARTITIONS;
    }
    if (t->replication_factor < 1 || t->replication_factor > BR_META_MAX_REPLICATION_FACTOR) {
        set_msg(err, errlen, "%s: the replication factor must be between 1 and %d", t->name,
                BR_META_MAX_REPLICATION_FACTOR);
        return KP_ERR_INVALID_REPLICATION_FACTOR;
    }
    int64_t total = (int64_t)t->partitions * t->replication_factor;
    if (total > BR_META_MAX_REPLICAS) {
        set_msg(err, errlen, "%s: more than %lld replicas in all", t->name,
                (long long)BR_META_MAX_REPLICAS);
        return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    if (t->replicas == NULL) {
        set_msg(err, errlen, "%s: no replica assignment", t->name);
        return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    size_t rf = (size_t)t->replication_factor;
    int32_t ids[BR_META_MAX_REPLICATION_FACTOR];
    for (size_t p = 0; p < (size_t)t->partitions; p++) {
        memcpy(ids, t->replicas + p * rf, rf * sizeof ids[0]);
        sort_ids(ids, rf);
        for (size_t r = 0; r < rf; r++) {
            if (ids[r] < 0) {
                set_msg(err, errlen, "%s: partition %zu: negative broker id %ld", t->name, p,
                        (long)ids[r]);
                return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
            }
            if (r > 0 && ids[r] == ids[r - 1]) {
                set_msg(err, errlen, "%s: partition %zu: broker %ld holds two replicas", t->name, p,
                        (long)ids[r]);
                return KP_ERR_INVALID_REPLICA_ASSIGNMENT;
            }
        }
    }
    return br_meta_configs_check(t->configs, t->n_configs, err, errlen);
}
