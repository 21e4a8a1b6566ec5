/* samsa-broker: Kafka 2.0's znode data of topics: assignments, partition
 * states, topic configs, config change and ISR change notifications (see
 * zk_json.h). */
#define _POSIX_C_SOURCE 200809L

#include "cluster/zk_json_internal.h"

#include <string.h>

#include <samsa-protocol/alloc.h>

/* ------------------------------------------------------------ /brokers/topics/<t> */

void br_zk_topic_assignment_clear(struct br_zk_topic_assignment *a)
{
    if (a == NULL) {
        return;
    }
    kp_free(a->first);
    kp_free(a->replicas);
    memset(a, 0, sizeof *a);
}

int br_zk_topic_assignment_decode(const char *buf, size_t len, const char *name,
                                  struct br_zk_topic_assignment *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = zkj_parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    const json_t **by_partition = NULL;
    /* TopicZNode.decode reads "partitions" alone */
    json_t *parts = json_object_get(root, "partitions");
    if (parts == NULL) {
        rc = fail(&d, KP_E_CORRUPT, "no \"partitions\"");
        goto out;
    }
    if (!json_is_object(parts)) {
        rc = fail(&d, KP_E_CORRUPT, "\"partitions\" is %s, not an object", zkj_type_name(parts));
        goto out;
    }
    size_t n = json_object_size(parts);
    if (n > BR_META_MAX_PARTITIONS) {
        rc = fail(&d, KP_E_TOO_LARGE, "%zu partitions, more than %d", n, BR_META_MAX_PARTITIONS);
        goto out;
    }
    if (n == 0) {
        rc = fail(&d, KP_E_CORRUPT, "\"partitions\" is empty");
        goto out;
    }
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    by_partition = kp_calloc(n, sizeof by_partition[0]);
    out->first = kp_calloc(n + 1, sizeof out->first[0]);
    if (by_partition == NULL || out->first == NULL) {
        rc = fail(&d, KP_E_NOMEM, "out of memory");
        goto out;
    }
    /* keys: partition ids as Integer.parseInt reads them, each once, 0..n-1 */
    int64_t total = 0;
    for (void *it = json_object_iter(parts); it != NULL; it = json_object_iter_next(parts, it)) {
        const char *key = json_object_iter_key(it);
        const json_t *v = json_object_iter_value(it);
        int64_t p = 0;
        size_t kn = strlen(key);
        if (!br_num_parse_i64(key, kn, INT32_MIN, INT32_MAX, &p)) {
            rc = fail(&d, KP_E_CORRUPT, "partition id %s is not a 32-bit decimal number",
                      zkj_q(key, kn, qb));
            goto out;
        }
        if (p < 0) {
            rc = fail(&d, KP_E_CORRUPT, "partition id %lld is negative", (long long)p);
            goto out;
        }
        if ((size_t)p >= n) {
            rc = fail(&d, KP_E_CORRUPT,
                      "partition %lld among %zu partitions: they must be "
                      "numbered 0 to %zu",
                      (long long)p, n, n - 1);
            goto out;
        }
        if (by_partition[(size_t)p] != NULL) {
            rc = fail(&d, KP_E_CORRUPT,
                      "partition %lld is given twice (as %s and another "
                      "spelling)",
                      (long long)p, zkj_q(key, kn, qb));
            goto out;
        }
        if (!json_is_array(v)) {
            rc = fail(&d, KP_E_CORRUPT, "partition %lld: the replicas are %s, not an array",
                      (long long)p, zkj_type_name(v));
            goto out;
        }
        by_partition[(size_t)p] = v;
        total += (int64_t)json_array_size(v);
        if (total > BR_META_MAX_REPLICAS) {
            rc = fail(&d, KP_E_TOO_LARGE, "more than %lld replicas in all",
                      (long long)BR_META_MAX_REPLICAS);
            goto out;
        }
    }
    out->replicas = kp_calloc(total > 0 ? (size_t)total : 1, sizeof out->replicas[0]);
    if (out->replicas == NULL) {
        rc = fail(&d, KP_E_NOMEM, "out of memory");
        goto out;
    }
    size_t at = 0;
    for (size_t p = 0; p < n; p++) {
        char what[48];
        (void)snprintf(what, sizeof what, "partition %zu", p);
        size_t count = 0;
        out->first[p] = (int32_t)at;
        rc = read_id_list(&d, by_partition[p], what, 1, BR_META_MAX_REPLICATION_FACTOR,
                          out->replicas + at, &count);
        if (rc != 0) {
            goto out;
        }
        at += count;
    }
    out->first[n] = (int32_t)at;
    out->n_partitions = (int32_t)n;

out:
    kp_free(by_partition);
    json_decref(root);
    if (rc != 0) {
        br_zk_topic_assignment_clear(out);
    }
    return rc;
}

int br_zk_topic_assignment_encode(const struct br_zk_topic_assignment *a, char **out,
                                  size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (a->n_partitions < 1 || a->n_partitions > BR_META_MAX_PARTITIONS || a->first == NULL ||
        a->replicas == NULL || a->first[0] != 0) {
        return KP_E_INVALID_ARG;
    }
    for (int32_t p = 0; p < a->n_partitions; p++) {
        int32_t count = a->first[p + 1] - a->first[p];
        int32_t dup = 0;
        if (count < 1 || count > BR_META_MAX_REPLICATION_FACTOR ||
            a->first[p + 1] > BR_META_MAX_REPLICAS ||
            zkj_has_repeat(a->replicas + a->first[p], (size_t)count, &dup)) {
            return KP_E_INVALID_ARG;
        }
        for (int32_t i = a->first[p]; i < a->first[p + 1]; i++) {
            if (a->replicas[i] < 0) {
                return KP_E_INVALID_ARG;
            }
        }
    }
    /* TopicZNode.encode */
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 1));
    json_t *parts = zkj_enc_object(&e);
    for (int32_t p = 0; p < a->n_partitions && e.err == 0; p++) {
        json_t *arr = zkj_enc_array(&e);
        for (int32_t i = a->first[p]; i < a->first[p + 1]; i++) {
            zkj_push(&e, arr, zkj_enc_int(&e, a->replicas[i]));
        }
        char key[16];
        (void)snprintf(key, sizeof key, "%d", (int)p);
        zkj_put(&e, parts, key, arr);
    }
    zkj_put(&e, root, "partitions", parts);
    return zkj_finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ .../partitions/<p>/state */

void br_zk_partition_state_clear(struct br_zk_partition_state *s)
{
    if (s == NULL) {
        return;
    }
    kp_free(s->isr);
    memset(s, 0, sizeof *s);
}

int br_zk_partition_state_decode(const char *buf, size_t len, const char *name,
                                 struct br_zk_partition_state *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = zkj_parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    /* TopicPartitionStateZNode.decode: leader, leader_epoch, isr,
     * controller_epoch (LeaderAndIsr.NoLeader is -1, the first epochs 0) */
    rc = get_int32(&d, root, "leader", -1, &out->leader);
    if (rc == 0) {
        rc = get_int32(&d, root, "leader_epoch", 0, &out->leader_epoch);
    }
    if (rc == 0) {
        rc = get_int32(&d, root, "controller_epoch", 0, &out->controller_epoch);
    }
    const json_t *isr = rc == 0 ? json_object_get(root, "isr") : NULL;
    if (rc == 0 && isr == NULL) {
        rc = fail(&d, KP_E_CORRUPT, "no \"isr\"");
    }
    if (rc == 0 && isr != NULL) {
        size_t n = json_is_array(isr) ? json_array_size(isr) : 0;
        out->isr = kp_calloc(n > 0 ? n : 1, sizeof out->isr[0]);
        if (out->isr == NULL) {
            rc = fail(&d, KP_E_NOMEM, "out of memory");
        } else {
            rc = read_id_list(&d, isr, "\"isr\"", 0, BR_META_MAX_REPLICATION_FACTOR, out->isr,
                              &out->n_isr);
        }
    }
    json_decref(root);
    if (rc != 0) {
        br_zk_partition_state_clear(out);
    }
    return rc;
}

int br_zk_partition_state_encode(const struct br_zk_partition_state *s, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    int32_t dup = 0;
    if (s->leader < -1 || s->leader_epoch < 0 || s->controller_epoch < 0 ||
        s->n_isr > BR_META_MAX_REPLICATION_FACTOR || (s->n_isr > 0 && s->isr == NULL) ||
        zkj_has_repeat(s->isr, s->n_isr, &dup)) {
        return KP_E_INVALID_ARG;
    }
    for (size_t i = 0; i < s->n_isr; i++) {
        if (s->isr[i] < 0) {
            return KP_E_INVALID_ARG;
        }
    }
    /* TopicPartitionStateZNode.encode */
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 1));
    zkj_put(&e, root, "leader", zkj_enc_int(&e, s->leader));
    zkj_put(&e, root, "leader_epoch", zkj_enc_int(&e, s->leader_epoch));
    json_t *isr = zkj_enc_array(&e);
    for (size_t i = 0; i < s->n_isr; i++) {
        zkj_push(&e, isr, zkj_enc_int(&e, s->isr[i]));
    }
    zkj_put(&e, root, "isr", isr);
    zkj_put(&e, root, "controller_epoch", zkj_enc_int(&e, s->controller_epoch));
    return zkj_finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ /config/topics/<t> */

void br_zk_configs_free(struct br_meta_config *configs, size_t n)
{
    if (configs == NULL) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        kp_free(configs[i].key);
        kp_free(configs[i].value);
    }
    kp_free(configs);
}

static char *dup_n(const char *s, size_t n)
{
    char *p = kp_malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

int br_zk_topic_config_decode(const char *buf, size_t len, const char *name,
                              struct br_meta_config **configs, size_t *n, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    *configs = NULL;
    *n = 0;
    if (len == 0) {
        return 0; /* ConfigEntityZNode.decode: no data, no configs */
    }
    json_t *root = NULL;
    int rc = zkj_parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    struct br_meta_config *cs = NULL;
    size_t count = 0;
    json_t *cfg = json_object_get(root, "config");
    if (cfg == NULL) {
        goto out; /* no "config": no configs, as for Kafka */
    }
    if (!json_is_object(cfg)) {
        rc = fail(&d, KP_E_CORRUPT, "\"config\" is %s, not an object", zkj_type_name(cfg));
        goto out;
    }
    size_t want = json_object_size(cfg);
    if (want > BR_META_MAX_CONFIGS) {
        rc = fail(&d, KP_E_TOO_LARGE, "%zu configs, more than %d", want, BR_META_MAX_CONFIGS);
        goto out;
    }
    if (want == 0) {
        goto out;
    }
    cs = kp_calloc(want, sizeof cs[0]);
    if (cs == NULL) {
        rc = fail(&d, KP_E_NOMEM, "out of memory");
        goto out;
    }
    for (void *it = json_object_iter(cfg); it != NULL; it = json_object_iter_next(cfg, it)) {
        const char *key = json_object_iter_key(it);
        const json_t *v = json_object_iter_value(it);
        size_t kn = strlen(key);
        if (!json_is_string(v)) {
            rc = fail(&d, KP_E_CORRUPT, "config %s is %s, not a string", zkj_q(key, kn, qb),
                      zkj_type_name(v));
            goto out;
        }
        cs[count].key = dup_n(key, kn);
        cs[count].value = dup_n(json_string_value(v), json_string_length(v));
        count++;
        if (cs[count - 1].key == NULL || cs[count - 1].value == NULL) {
            rc = fail(&d, KP_E_NOMEM, "out of memory");
            goto out;
        }
    }
    char msg[256];
    int crc = br_meta_configs_check(cs, count, msg, sizeof msg);
    if (crc == KP_E_NOMEM) {
        rc = fail(&d, KP_E_NOMEM, "out of memory");
    } else if (crc != 0) {
        rc = fail(&d, KP_E_CORRUPT, "%s", msg);
    }

out:
    json_decref(root);
    if (rc != 0) {
        br_zk_configs_free(cs, count);
        return rc;
    }
    if (count == 0) {
        kp_free(cs);
        cs = NULL;
    }
    *configs = cs;
    *n = count;
    return 0;
}

int br_zk_topic_config_encode(const struct br_meta_config *configs, size_t n, char **out,
                              size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    char msg[256];
    if (br_meta_configs_check(configs, n, msg, sizeof msg) != 0) {
        return KP_E_INVALID_ARG;
    }
    /* ConfigEntityZNode.encode */
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 1));
    json_t *cfg = zkj_enc_object(&e);
    for (size_t i = 0; i < n; i++) {
        zkj_put(&e, cfg, configs[i].key, zkj_enc_str(&e, configs[i].value));
    }
    zkj_put(&e, root, "config", cfg);
    return zkj_finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------ /config/changes/config_change_<seq>
 */

/* The entity types each version names (DynamicConfigManager.scala). */
static bool entity_type_known(const char *s, size_t n, int32_t version)
{
    static const char *const v2[] = {"topics", "clients", "users", "brokers"};
    size_t known = version == 1 ? 2 : 4;
    for (size_t i = 0; i < known; i++) {
        if (strlen(v2[i]) == n && memcmp(v2[i], s, n) == 0) {
            return true;
        }
    }
    return false;
}

int br_zk_config_change_decode(const char *buf, size_t len, const char *name,
                               struct br_zk_config_change *out, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    char qb[QMAX];
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = zkj_parse(&d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    const char *type = NULL;
    size_t type_n = 0;
    const char *ename = NULL;
    size_t ename_n = 0;
    rc = get_int32(&d, root, "version", INT32_MIN, &out->version);
    if (rc == 0 && out->version != 1 && out->version != 2) {
        rc = fail(&d, KP_E_UNSUPPORTED, "version %d: Kafka reads versions 1 and 2",
                  (int)out->version);
    }
    if (rc == 0 && out->version == 1) {
        rc = get_string(&d, root, "entity_type", true, &type, &type_n);
        if (rc == 0) {
            rc = get_string(&d, root, "entity_name", true, &ename, &ename_n);
        }
    } else if (rc == 0) {
        const char *path = NULL;
        size_t path_n = 0;
        rc = get_string(&d, root, "entity_path", true, &path, &path_n);
        const char *slash = rc == 0 ? memchr(path, '/', path_n) : NULL;
        if (rc == 0 && slash == NULL) {
            rc = fail(&d, KP_E_CORRUPT, "\"entity_path\" %s is not <entity type>/<name>",
                      zkj_q(path, path_n, qb));
        }
        if (rc == 0) {
            type = path;
            type_n = (size_t)(slash - path);
            ename = slash + 1;
            ename_n = path_n - type_n - 1;
        }
    }
    if (rc == 0 && !entity_type_known(type, type_n, out->version)) {
        rc = fail(&d, KP_E_CORRUPT, "entity type %s is not one of %s", zkj_q(type, type_n, qb),
                  out->version == 1 ? "topics, clients" : "topics, clients, users, brokers");
    }
    if (rc == 0) {
        memcpy(out->entity_type, type, type_n);
        out->entity_type[type_n] = '\0';
        rc = copy_text(&d, "the entity name", ename, ename_n, false, out->entity_name,
                       sizeof out->entity_name);
    }
    json_decref(root);
    if (rc != 0) {
        memset(out, 0, sizeof *out);
    }
    return rc;
}

int br_zk_config_change_encode(const char *entity_type, const char *entity_name, char **out,
                               size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    size_t tn = strlen(entity_type);
    size_t nn = strlen(entity_name);
    if (!entity_type_known(entity_type, tn, 2) || nn == 0 || nn > BR_ZK_ENTITY_NAME_MAX ||
        zkj_has_control_byte(entity_name, nn)) {
        return KP_E_INVALID_ARG;
    }
    char path[16 + BR_ZK_ENTITY_NAME_MAX + 2];
    int w = snprintf(path, sizeof path, "%s/%s", entity_type, entity_name);
    if (w < 0 || (size_t)w >= sizeof path) {
        return KP_E_INVALID_ARG;
    }
    /* ConfigEntityChangeNotificationSequenceZNode.encode */
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 2));
    zkj_put(&e, root, "entity_path", zkj_enc_strn(&e, path, (size_t)w));
    return zkj_finish(&e, root, out, out_len);
}

/* ------------------------------------------------------------
 * /isr_change_notification/isr_change_<seq> */

/* The array "partitions" of a document listing partitions
 * (IsrChangeNotificationSequenceZNode, PreferredReplicaElectionZNode,
 * ReassignPartitionsZNode): its entries' topic and partition into
 * (struct br_zk_topic_partition *)(base + i * stride), and with_replicas
 * each entry's "replicas" into the struct br_zk_reassignment at
 * base + i * stride. *base owned by the caller. */
static int decode_partition_list(const struct dec *d, const char *buf, size_t len, size_t stride,
                                 bool with_replicas, void **base, size_t *n)
{
    char qb[QMAX];
    *base = NULL;
    *n = 0;
    json_t *root = NULL;
    int rc = zkj_parse(d, buf, len, &root);
    if (rc != 0) {
        return rc;
    }
    unsigned char *out = NULL;
    const json_t *parts = json_object_get(root, "partitions");
    if (parts == NULL) {
        rc = fail(d, KP_E_CORRUPT, "no \"partitions\"");
        goto out;
    }
    if (!json_is_array(parts)) {
        rc = fail(d, KP_E_CORRUPT, "\"partitions\" is %s, not an array", zkj_type_name(parts));
        goto out;
    }
    size_t count = json_array_size(parts);
    if (count > BR_ZK_MAX_NOTIFIED) {
        rc = fail(d, KP_E_TOO_LARGE, "%zu partitions, more than %zu", count, BR_ZK_MAX_NOTIFIED);
        goto out;
    }
    if (count == 0) {
        goto out;
    }
    out = kp_calloc(count, stride);
    if (out == NULL) {
        rc = fail(d, KP_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < count && rc == 0; i++) {
        const json_t *tp = json_array_get(parts, i);
        struct br_zk_topic_partition *o = (struct br_zk_topic_partition *)(out + i * stride);
        if (!json_is_object(tp)) {
            rc = fail(d, KP_E_CORRUPT, "partitions[%zu] is %s, not an object", i,
                      zkj_type_name(tp));
            break;
        }
        const char *topic = NULL;
        size_t topic_n = 0;
        rc = get_string(d, tp, "topic", true, &topic, &topic_n);
        if (rc == 0) {
            rc = get_int32(d, tp, "partition", 0, &o->partition);
        }
        if (rc == 0 && !br_topic_name_valid(topic, topic_n)) {
            rc = fail(d, KP_E_CORRUPT, "partitions[%zu]: %s is not a valid topic name", i,
                      zkj_q(topic, topic_n, qb));
        }
        if (rc == 0) {
            memcpy(o->topic, topic, topic_n);
        }
        if (rc == 0 && with_replicas) {
            struct br_zk_reassignment *r = (struct br_zk_reassignment *)(void *)o;
            const json_t *ids = json_object_get(tp, "replicas");
            char what[64];
            (void)snprintf(what, sizeof what, "partitions[%zu].replicas", i);
            rc = ids == NULL ? fail(d, KP_E_CORRUPT, "partitions[%zu] has no \"replicas\"", i)
                             : read_id_list(d, ids, what, 1, BR_ZK_REASSIGN_MAX_REPLICAS,
                                            r->replicas, &r->nreplicas);
        }
    }
    if (rc == 0) {
        *n = count;
    }

out:
    json_decref(root);
    if (rc != 0) {
        kp_free(out);
        return rc;
    }
    *base = out;
    return 0;
}

int br_zk_isr_change_decode(const char *buf, size_t len, const char *name,
                            struct br_zk_topic_partition **tps, size_t *n, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    void *base = NULL;
    /* IsrChangeNotificationSequenceZNode.decode */
    int rc = decode_partition_list(&d, buf, len, sizeof **tps, false, &base, n);
    *tps = base;
    return rc;
}

int br_zk_reassignment_decode(const char *buf, size_t len, const char *name,
                              struct br_zk_reassignment **out, size_t *n, char *err, size_t errlen)
{
    struct dec d = {name, err, errlen};
    void *base = NULL;
    /* ReassignPartitionsZNode.decode */
    int rc = decode_partition_list(&d, buf, len, sizeof **out, true, &base, n);
    *out = base;
    return rc;
}

int br_zk_isr_change_encode(const struct br_zk_topic_partition *tps, size_t n, char **out,
                            size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (n > BR_ZK_MAX_NOTIFIED || (n > 0 && tps == NULL)) {
        return KP_E_INVALID_ARG;
    }
    for (size_t i = 0; i < n; i++) {
        size_t tn = strnlen(tps[i].topic, sizeof tps[i].topic);
        if (!br_topic_name_valid(tps[i].topic, tn) || tps[i].partition < 0) {
            return KP_E_INVALID_ARG;
        }
    }
    /* IsrChangeNotificationSequenceZNode.encode */
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 1));
    json_t *arr = zkj_enc_array(&e);
    for (size_t i = 0; i < n && e.err == 0; i++) {
        json_t *tp = zkj_enc_object(&e);
        zkj_put(&e, tp, "topic", zkj_enc_str(&e, tps[i].topic));
        zkj_put(&e, tp, "partition", zkj_enc_int(&e, tps[i].partition));
        zkj_push(&e, arr, tp);
    }
    zkj_put(&e, root, "partitions", arr);
    return zkj_finish(&e, root, out, out_len);
}

int br_zk_reassignment_encode(const struct br_zk_reassignment *r, size_t n, char **out,
                              size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (n > BR_ZK_MAX_NOTIFIED || (n > 0 && r == NULL)) {
        return KP_E_INVALID_ARG;
    }
    for (size_t i = 0; i < n; i++) {
        size_t tn = strnlen(r[i].tp.topic, sizeof r[i].tp.topic);
        if (!br_topic_name_valid(r[i].tp.topic, tn) || r[i].tp.partition < 0 ||
            r[i].nreplicas == 0 || r[i].nreplicas > BR_ZK_REASSIGN_MAX_REPLICAS) {
            return KP_E_INVALID_ARG;
        }
    }
    /* ReassignPartitionsZNode.encode */
    struct enc e = {0};
    json_t *root = zkj_enc_object(&e);
    zkj_put(&e, root, "version", zkj_enc_int(&e, 1));
    json_t *arr = zkj_enc_array(&e);
    for (size_t i = 0; i < n && e.err == 0; i++) {
        json_t *tp = zkj_enc_object(&e);
        zkj_put(&e, tp, "topic", zkj_enc_str(&e, r[i].tp.topic));
        zkj_put(&e, tp, "partition", zkj_enc_int(&e, r[i].tp.partition));
        json_t *ids = zkj_enc_array(&e);
        for (size_t j = 0; j < r[i].nreplicas; j++) {
            zkj_push(&e, ids, zkj_enc_int(&e, r[i].replicas[j]));
        }
        zkj_put(&e, tp, "replicas", ids);
        zkj_push(&e, arr, tp);
    }
    zkj_put(&e, root, "partitions", arr);
    return zkj_finish(&e, root, out, out_len);
}
