/*
 * fuzz_zk_json: the decoders of Kafka 2.0's znode data
 * (broker/src/cluster/zk_json.h) and their encoders.
 *
 * Input: byte 0 picks the decoder (value % 10: broker registration,
 * controller, controller epoch, topic assignment, partition state, topic
 * config, config change notification, ISR change notification and, on the
 * same bytes, a partition reassignment (/admin/reassign_partitions), cluster id,
 * producer id block); the rest is the znode's data.
 *
 * Checks, beyond "no crash, no over-read, no leak, no unbounded memory":
 *   - a rejected document returns a documented code, leaves its outputs
 *     empty, and says so in a message that starts with the znode's name and
 *     ends with the detection site "[zk_json*.c:LINE]";
 *   - an accepted one holds only values the header promises (ids, epochs
 *     and partitions in range, lists without repeats, names valid);
 *   - encoding what was decoded succeeds, decodes to the same values, and
 *     encoding that gives the same bytes (what Samsa writes reads back, and
 *     is canonical).
 */
#include "fuzz.h"

#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/err.h>

#include "base/logging.h"
#include "base/names.h"
#include "cluster/zk_json.h"

#define ERRLEN 512
#define NAME "/fuzz/znode"

static void check_rejected(int rc, const char *err)
{
    fuzz_check(rc == KP_E_CORRUPT || rc == KP_E_UNSUPPORTED || rc == KP_E_TOO_LARGE ||
                   rc == KP_E_NOMEM,
               "undocumented error", rc);
    fuzz_check(strncmp(err, NAME ": ", strlen(NAME ": ")) == 0, "a message without the name", rc);
    fuzz_check(strstr(err, "[zk_json") != NULL, "a message without its detection site", rc);
}

/* encode(decoded) again: the same bytes as `first`. */
static void check_same_bytes(const char *first, size_t first_len, const char *again,
                             size_t again_len)
{
    fuzz_check(again_len == first_len && memcmp(first, again, first_len) == 0,
               "encoding is not canonical", (int)again_len);
    fuzz_check(first[first_len] == '\0', "encoded text without its NUL", (int)first_len);
}

static bool ids_distinct_non_negative(const int32_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i] < 0) {
            return false;
        }
        for (size_t k = 0; k < i; k++) {
            if (v[k] == v[i]) {
                return false;
            }
        }
    }
    return true;
}

static bool endpoints_equal(const struct br_zk_broker *a, const struct br_zk_broker *b)
{
    if (a->n_endpoints != b->n_endpoints) {
        return false;
    }
    for (size_t i = 0; i < a->n_endpoints; i++) {
        const struct br_zk_endpoint *x = &a->endpoints[i];
        const struct br_zk_endpoint *y = &b->endpoints[i];
        if (strcmp(x->listener, y->listener) != 0 || strcmp(x->host, y->host) != 0 ||
            x->port != y->port || x->security_protocol != y->security_protocol) {
            return false;
        }
    }
    return true;
}

static void run_broker(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    struct br_zk_broker b;
    int rc = br_zk_broker_decode(p, n, NAME, &b, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        fuzz_check(b.endpoints == NULL && b.n_endpoints == 0, "a rejected broker kept endpoints",
                   rc);
        return;
    }
    fuzz_check(b.version >= 1, "version below 1", b.version);
    fuzz_check(b.n_endpoints >= 1 && b.n_endpoints <= BR_ZK_MAX_ENDPOINTS, "endpoint count",
               (int)b.n_endpoints);
    for (size_t i = 0; i < b.n_endpoints; i++) {
        const struct br_zk_endpoint *ep = &b.endpoints[i];
        fuzz_check(ep->port >= 0 && ep->port <= 65535, "port out of range", ep->port);
        fuzz_check(ep->listener[0] != '\0', "empty listener", (int)i);
        fuzz_check(strchr(ep->host, '/') == NULL && strchr(ep->host, '[') == NULL,
                   "host with a byte outside Kafka's pattern", (int)i);
    }
    fuzz_check(b.timestamp_ms >= -1, "timestamp below -1", 0);

    char *out = NULL;
    size_t len = 0;
    rc = br_zk_broker_encode(&b, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "a decoded broker does not encode", rc);
    if (rc == 0) {
        struct br_zk_broker back;
        rc = br_zk_broker_decode(out, len, NAME, &back, err, sizeof err);
        if (rc != 0) {
            (void)fprintf(stderr, "%s\n%s\n", out, err);
        }
        fuzz_check(rc == 0 || rc == KP_E_NOMEM, "an encoded broker does not decode", rc);
        if (rc == 0) {
            fuzz_check(back.version == 4, "not written as version 4", back.version);
            fuzz_check(endpoints_equal(&b, &back), "endpoints changed", 0);
            fuzz_check(back.has_rack == b.has_rack && strcmp(back.rack, b.rack) == 0,
                       "rack changed", 0);
            fuzz_check(back.jmx_port == b.jmx_port, "jmx_port changed", back.jmx_port);
            fuzz_check(back.timestamp_ms == b.timestamp_ms, "timestamp changed", 0);
            char *again = NULL;
            size_t again_len = 0;
            if (br_zk_broker_encode(&back, &again, &again_len) == 0) {
                check_same_bytes(out, len, again, again_len);
                kp_free(again);
            }
            br_zk_broker_clear(&back);
        }
        kp_free(out);
    }
    br_zk_broker_clear(&b);
}

static void run_controller(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    struct br_zk_controller c;
    int rc = br_zk_controller_decode(p, n, NAME, &c, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        return;
    }
    fuzz_check(c.broker_id >= 0, "negative controller id", c.broker_id);
    char *out = NULL;
    size_t len = 0;
    rc = br_zk_controller_encode(c.broker_id, c.timestamp_ms, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "a decoded controller does not encode", rc);
    if (rc == 0) {
        struct br_zk_controller back;
        rc = br_zk_controller_decode(out, len, NAME, &back, err, sizeof err);
        fuzz_check(rc == 0 || rc == KP_E_NOMEM, "an encoded controller does not decode", rc);
        if (rc == 0) {
            fuzz_check(back.broker_id == c.broker_id && back.timestamp_ms == c.timestamp_ms &&
                           back.version == 1,
                       "controller changed", back.broker_id);
        }
        kp_free(out);
    }
}

static void run_epoch(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    int32_t epoch = -1;
    int rc = br_zk_controller_epoch_decode(p, n, NAME, &epoch, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        return;
    }
    fuzz_check(epoch >= 0, "negative epoch", epoch);
    char *out = NULL;
    size_t len = 0;
    rc = br_zk_controller_epoch_encode(epoch, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "an epoch does not encode", rc);
    if (rc == 0) {
        int32_t back = -1;
        rc = br_zk_controller_epoch_decode(out, len, NAME, &back, err, sizeof err);
        fuzz_check(rc == 0 && back == epoch, "epoch changed", back);
        kp_free(out);
    }
}

static bool assignments_equal(const struct br_zk_topic_assignment *a,
                              const struct br_zk_topic_assignment *b)
{
    if (a->n_partitions != b->n_partitions) {
        return false;
    }
    size_t n = (size_t)a->n_partitions;
    return memcmp(a->first, b->first, (n + 1) * sizeof a->first[0]) == 0 &&
           memcmp(a->replicas, b->replicas, (size_t)a->first[n] * sizeof a->replicas[0]) == 0;
}

static void run_assignment(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    struct br_zk_topic_assignment a;
    int rc = br_zk_topic_assignment_decode(p, n, NAME, &a, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        fuzz_check(a.first == NULL && a.replicas == NULL, "a rejected assignment kept arrays", rc);
        return;
    }
    fuzz_check(a.n_partitions >= 1 && a.n_partitions <= BR_META_MAX_PARTITIONS, "partition count",
               a.n_partitions);
    fuzz_check(a.first[0] == 0, "first replica index", a.first[0]);
    for (int32_t i = 0; i < a.n_partitions; i++) {
        int32_t count = a.first[i + 1] - a.first[i];
        fuzz_check(count >= 1 && count <= BR_META_MAX_REPLICATION_FACTOR, "replica count", count);
        fuzz_check(ids_distinct_non_negative(a.replicas + a.first[i], (size_t)count),
                   "replicas repeated or negative", i);
    }
    char *out = NULL;
    size_t len = 0;
    rc = br_zk_topic_assignment_encode(&a, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "a decoded assignment does not encode", rc);
    if (rc == 0) {
        struct br_zk_topic_assignment back;
        rc = br_zk_topic_assignment_decode(out, len, NAME, &back, err, sizeof err);
        fuzz_check(rc == 0 || rc == KP_E_NOMEM, "an encoded assignment does not decode", rc);
        if (rc == 0) {
            fuzz_check(assignments_equal(&a, &back), "assignment changed", 0);
            char *again = NULL;
            size_t again_len = 0;
            if (br_zk_topic_assignment_encode(&back, &again, &again_len) == 0) {
                check_same_bytes(out, len, again, again_len);
                kp_free(again);
            }
            br_zk_topic_assignment_clear(&back);
        }
        kp_free(out);
    }
    br_zk_topic_assignment_clear(&a);
}

static void run_state(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    struct br_zk_partition_state s;
    int rc = br_zk_partition_state_decode(p, n, NAME, &s, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        fuzz_check(s.isr == NULL && s.n_isr == 0, "a rejected state kept its ISR", rc);
        return;
    }
    fuzz_check(s.leader >= -1 && s.leader_epoch >= 0 && s.controller_epoch >= 0,
               "leader or epoch out of range", s.leader);
    fuzz_check(s.n_isr <= BR_META_MAX_REPLICATION_FACTOR, "ISR size", (int)s.n_isr);
    fuzz_check(ids_distinct_non_negative(s.isr, s.n_isr), "ISR repeated or negative", 0);
    char *out = NULL;
    size_t len = 0;
    rc = br_zk_partition_state_encode(&s, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "a decoded state does not encode", rc);
    if (rc == 0) {
        struct br_zk_partition_state back;
        rc = br_zk_partition_state_decode(out, len, NAME, &back, err, sizeof err);
        fuzz_check(rc == 0 || rc == KP_E_NOMEM, "an encoded state does not decode", rc);
        if (rc == 0) {
            fuzz_check(
                back.leader == s.leader && back.leader_epoch == s.leader_epoch &&
                    back.controller_epoch == s.controller_epoch && back.n_isr == s.n_isr &&
                    (s.n_isr == 0 || memcmp(back.isr, s.isr, s.n_isr * sizeof s.isr[0]) == 0),
                "state changed", back.leader);
            br_zk_partition_state_clear(&back);
        }
        kp_free(out);
    }
    br_zk_partition_state_clear(&s);
}

static void run_config(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    struct br_meta_config *c = NULL;
    size_t count = 0;
    int rc = br_zk_topic_config_decode(p, n, NAME, &c, &count, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        fuzz_check(c == NULL && count == 0, "rejected configs kept", rc);
        return;
    }
    fuzz_check((count == 0) == (c == NULL), "config array and count disagree", (int)count);
    char msg[256];
    fuzz_check(br_meta_configs_check(c, count, msg, sizeof msg) == 0,
               "configs the store would refuse", (int)count);
    char *out = NULL;
    size_t len = 0;
    rc = br_zk_topic_config_encode(c, count, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "decoded configs do not encode", rc);
    if (rc == 0) {
        struct br_meta_config *back = NULL;
        size_t back_n = 0;
        rc = br_zk_topic_config_decode(out, len, NAME, &back, &back_n, err, sizeof err);
        fuzz_check(rc == 0 || rc == KP_E_NOMEM, "encoded configs do not decode", rc);
        if (rc == 0) {
            fuzz_check(back_n == count, "config count changed", (int)back_n);
            for (size_t i = 0; i < count; i++) {
                fuzz_check(strcmp(back[i].key, c[i].key) == 0 &&
                               strcmp(back[i].value, c[i].value) == 0,
                           "a config changed", (int)i);
            }
            br_zk_configs_free(back, back_n);
        }
        kp_free(out);
    }
    br_zk_configs_free(c, count);
}

static void run_config_change(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    struct br_zk_config_change c;
    int rc = br_zk_config_change_decode(p, n, NAME, &c, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        return;
    }
    fuzz_check(c.version == 1 || c.version == 2, "version", c.version);
    fuzz_check(c.entity_name[0] != '\0', "empty entity name", 0);
    char *out = NULL;
    size_t len = 0;
    rc = br_zk_config_change_encode(c.entity_type, c.entity_name, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "a decoded notification does not encode", rc);
    if (rc == 0) {
        struct br_zk_config_change back;
        rc = br_zk_config_change_decode(out, len, NAME, &back, err, sizeof err);
        fuzz_check(rc == 0 || rc == KP_E_NOMEM, "an encoded notification does not decode", rc);
        if (rc == 0) {
            fuzz_check(back.version == 2 && strcmp(back.entity_type, c.entity_type) == 0 &&
                           strcmp(back.entity_name, c.entity_name) == 0,
                       "notification changed", back.version);
        }
        kp_free(out);
    }
}

static void run_isr_change(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    struct br_zk_topic_partition *tps = NULL;
    size_t count = 0;
    int rc = br_zk_isr_change_decode(p, n, NAME, &tps, &count, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        fuzz_check(tps == NULL && count == 0, "a rejected notification kept partitions", rc);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        fuzz_check(br_topic_name_valid(tps[i].topic, strlen(tps[i].topic)), "invalid topic",
                   (int)i);
        fuzz_check(tps[i].partition >= 0, "negative partition", tps[i].partition);
    }
    char *out = NULL;
    size_t len = 0;
    rc = br_zk_isr_change_encode(tps, count, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "a decoded notification does not encode", rc);
    if (rc == 0) {
        struct br_zk_topic_partition *back = NULL;
        size_t back_n = 0;
        rc = br_zk_isr_change_decode(out, len, NAME, &back, &back_n, err, sizeof err);
        fuzz_check(rc == 0 || rc == KP_E_NOMEM, "an encoded notification does not decode", rc);
        if (rc == 0) {
            fuzz_check(back_n == count, "partition count changed", (int)back_n);
            for (size_t i = 0; i < count; i++) {
                fuzz_check(strcmp(back[i].topic, tps[i].topic) == 0 &&
                               back[i].partition == tps[i].partition,
                           "a partition changed", (int)i);
            }
            kp_free(back);
        }
        kp_free(out);
    }
    kp_free(tps);
}

/* The same documents as the ISR notifications', with each entry's
 * replicas (/admin/reassign_partitions). */
static void run_reassignment(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    struct br_zk_reassignment *r = NULL;
    size_t count = 0;
    int rc = br_zk_reassignment_decode(p, n, NAME, &r, &count, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        fuzz_check(r == NULL && count == 0, "a rejected reassignment kept partitions", rc);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        fuzz_check(r[i].nreplicas >= 1 && r[i].nreplicas <= BR_ZK_REASSIGN_MAX_REPLICAS,
                   "replica count out of range", (int)r[i].nreplicas);
    }
    char *out = NULL;
    size_t len = 0;
    rc = br_zk_reassignment_encode(r, count, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "a decoded reassignment does not encode", rc);
    if (rc == 0) {
        struct br_zk_reassignment *back = NULL;
        size_t back_n = 0;
        rc = br_zk_reassignment_decode(out, len, NAME, &back, &back_n, err, sizeof err);
        fuzz_check(rc == 0 || rc == KP_E_NOMEM, "an encoded reassignment does not decode", rc);
        if (rc == 0) {
            fuzz_check(back_n == count, "partition count changed", (int)back_n);
            for (size_t i = 0; i < count; i++) {
                fuzz_check(strcmp(back[i].tp.topic, r[i].tp.topic) == 0 &&
                               back[i].tp.partition == r[i].tp.partition &&
                               back[i].nreplicas == r[i].nreplicas &&
                               memcmp(back[i].replicas, r[i].replicas,
                                      r[i].nreplicas * sizeof r[i].replicas[0]) == 0,
                           "a move changed", (int)i);
            }
            kp_free(back);
        }
        kp_free(out);
    }
    kp_free(r);
}

static void run_cluster_id(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    char id[BR_ZK_CLUSTER_ID_MAX + 1];
    int rc = br_zk_cluster_id_decode(p, n, NAME, id, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        fuzz_check(id[0] == '\0', "a rejected id kept", rc);
        return;
    }
    fuzz_check(id[0] != '\0', "empty cluster id", 0);
    char *out = NULL;
    size_t len = 0;
    rc = br_zk_cluster_id_encode(id, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "a decoded id does not encode", rc);
    if (rc == 0) {
        char back[BR_ZK_CLUSTER_ID_MAX + 1];
        rc = br_zk_cluster_id_decode(out, len, NAME, back, err, sizeof err);
        fuzz_check(rc == KP_E_NOMEM || (rc == 0 && strcmp(back, id) == 0), "cluster id changed",
                   rc);
        kp_free(out);
    }
}

static void run_pid_block(const char *p, size_t n)
{
    char err[ERRLEN] = "";
    struct br_zk_producer_id_block b;
    int rc = br_zk_producer_id_block_decode(p, n, NAME, &b, err, sizeof err);
    if (rc != 0) {
        check_rejected(rc, err);
        return;
    }
    fuzz_check(b.broker_id >= 0 && b.block_start >= 0 && b.block_end >= b.block_start,
               "block out of range", b.broker_id);
    char *out = NULL;
    size_t len = 0;
    rc = br_zk_producer_id_block_encode(&b, &out, &len);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "a decoded block does not encode", rc);
    if (rc == 0) {
        struct br_zk_producer_id_block back;
        rc = br_zk_producer_id_block_decode(out, len, NAME, &back, err, sizeof err);
        fuzz_check(rc == KP_E_NOMEM ||
                       (rc == 0 && back.broker_id == b.broker_id &&
                        back.block_start == b.block_start && back.block_end == b.block_end),
                   "block changed", rc);
        kp_free(out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    br_logging_set_level(BR_LOG_ERROR);
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 10) {
    case 0:
        run_broker(p, n);
        break;
    case 1:
        run_controller(p, n);
        break;
    case 2:
        run_epoch(p, n);
        break;
    case 3:
        run_assignment(p, n);
        break;
    case 4:
        run_state(p, n);
        break;
    case 5:
        run_config(p, n);
        break;
    case 6:
        run_config_change(p, n);
        break;
    case 7:
        run_isr_change(p, n);
        run_reassignment(p, n);
        break;
    case 8:
        run_cluster_id(p, n);
        break;
    default:
        run_pid_block(p, n);
        break;
    }
    return 0;
}
