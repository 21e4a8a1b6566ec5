/*
 * samsa-broker: the controller's ZooKeeper reads and writes: the znodes of
 * brokers, topics and partition states (Kafka's KafkaZkClient).
 */
#define _GNU_SOURCE

#include "cluster/controller_internal.h"

#include "base/logging.h"
#include "base/number.h"

#include <samsa-protocol/messages.h>

#include <inttypes.h>
#include <string.h>

/* The largest znode data read. */
#define MAX_ZNODE ((int32_t)4 * 1024 * 1024)

/* ---------------------------------------------------------------- ZooKeeper calls */

/* Reads path (watching it when watch); *data (kp_malloc'ed, NUL after it,
 * NULL for a znode without data) and *stat. Returns ZooKeeper's code. */
int ctl_zget(struct br_controller *c, const char *path, bool watch, char **data, int *len,
             struct Stat *stat)
{
    *data = NULL;
    *len = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        struct Stat st;
        int rc = zoo_exists(c->zh, path, 0, &st);
        if (rc != ZOK) {
            if (rc == ZNONODE && watch) {
                (void)zoo_exists(c->zh, path, 1, &st); /* watch its creation */
            }
            return rc;
        }
        int cap = st.dataLength > 0 ? st.dataLength + 1 : 1;
        if (cap > MAX_ZNODE) {
            br_error("controller: %s holds %d bytes, more than it reads", path, st.dataLength);
            return ZBADARGUMENTS;
        }
        char *buf = kp_malloc((size_t)cap + 1);
        if (buf == NULL) {
            return ZSYSTEMERROR;
        }
        int n = cap;
        rc = zoo_get(c->zh, path, watch ? 1 : 0, buf, &n, stat);
        if (rc != ZOK) {
            kp_free(buf);
            return rc;
        }
        if (n >= cap) {
            kp_free(buf); /* it grew meanwhile: again */
            continue;
        }
        if (n < 0) {
            kp_free(buf);
            return ZOK; /* no data */
        }
        buf[n] = '\0';
        *data = buf;
        *len = n;
        return ZOK;
    }
    return ZSYSTEMERROR;
}

int ctl_zcreate(struct br_controller *c, const char *path, const char *data, size_t len,
                int flags)
{
    return zoo_create(c->zh, path, data, data == NULL ? -1 : (int)len, &ZOO_OPEN_ACL_UNSAFE, flags,
                      NULL, 0);
}

/* ---------------------------------------------------------------- reading ZooKeeper */

static int cmp_broker(const void *a, const void *b)
{
    const struct ctl_broker *x = a;
    const struct ctl_broker *y = b;
    return x->id < y->id ? -1 : (x->id > y->id ? 1 : 0);
}

int ctl_cmp_topic(const void *a, const void *b)
{
    return strcmp(((const struct ctl_topic *)a)->name, ((const struct ctl_topic *)b)->name);
}

/* Parses a broker id znode name ("3"); -1 when it is not one. */
int32_t ctl_parse_id(const char *s)
{
    size_t n = strlen(s);
    uint64_t v = 0;
    if (n > 10 || !br_num_parse_u64(s, n, INT32_MAX, &v)) {
        return -1;
    }
    return (int32_t)v;
}

/* One registration into b; 0, 1 when it is gone or unreadable (skipped),
 * -1 on a ZooKeeper failure. */
static int read_broker(struct br_controller *c, int32_t id, struct ctl_broker *b)
{
    char path[64];
    (void)snprintf(path, sizeof path, "/brokers/ids/%" PRId32, id);
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = ctl_zget(c, path, false, &data, &len, &st);
    if (rc == ZNONODE) {
        return 1;
    }
    if (rc != ZOK) {
        return -1;
    }
    struct br_zk_broker reg;
    memset(&reg, 0, sizeof reg);
    char err[256] = "the znode holds no data";
    int drc = data == NULL ? KP_E_CORRUPT
                           : br_zk_broker_decode(data, (size_t)len, path, &reg, err, sizeof err);
    kp_free(data);
    if (drc != 0 || reg.n_endpoints == 0) {
        br_warn("controller: ignoring broker %" PRId32 ": %s", id, drc != 0 ? err : "no endpoint");
        br_zk_broker_clear(&reg);
        return 1;
    }
    /* the first PLAINTEXT endpoint, else the first */
    const struct br_zk_endpoint *e = &reg.endpoints[0];
    for (size_t i = 0; i < reg.n_endpoints; i++) {
        if (reg.endpoints[i].security_protocol == BR_ZK_PLAINTEXT) {
            e = &reg.endpoints[i];
            break;
        }
    }
    memset(b, 0, sizeof *b);
    b->id = id;
    (void)snprintf(b->host, sizeof b->host, "%s", e->host);
    b->port = e->port;
    (void)snprintf(b->listener, sizeof b->listener, "%s", e->listener);
    b->security_protocol = (int16_t)e->security_protocol;
    for (size_t i = 0; i < reg.n_endpoints && b->nendpoints < CTL_MAX_ENDPOINTS; i++) {
        b->endpoints[b->nendpoints++] = reg.endpoints[i];
    }
    b->has_rack = reg.has_rack;
    (void)snprintf(b->rack, sizeof b->rack, "%s", reg.rack);
    br_zk_broker_clear(&reg);
    return 0;
}

/* The live brokers, watching /brokers/ids. *out sorted by id. */
int ctl_read_brokers(struct br_controller *c, struct ctl_broker **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    struct String_vector kids;
    memset(&kids, 0, sizeof kids);
    int rc = zoo_get_children(c->zh, "/brokers/ids", 1, &kids);
    if (rc != ZOK) {
        return -1;
    }
    struct ctl_broker *bs = kp_calloc(kids.count > 0 ? (size_t)kids.count : 1, sizeof *bs);
    if (bs == NULL) {
        deallocate_String_vector(&kids);
        return -1;
    }
    size_t k = 0;
    int res = 0;
    for (int32_t i = 0; i < kids.count; i++) {
        int32_t id = ctl_parse_id(kids.data[i]);
        if (id < 0) {
            continue;
        }
        int r = read_broker(c, id, &bs[k]);
        if (r < 0) {
            res = -1;
            break;
        }
        if (r == 0) {
            k++;
        }
    }
    deallocate_String_vector(&kids);
    if (res != 0) {
        kp_free(bs);
        return -1;
    }
    qsort(bs, k, sizeof *bs, cmp_broker);
    *out = bs;
    *n = k;
    return 0;
}

/* Reads a partition's state znode into part; 0 (has_state says whether it
 * exists), -1 on a ZooKeeper failure. A state that does not decode is kept
 * as none. */
int ctl_read_state(struct br_controller *c, const char *topic, int32_t p,
                   struct ctl_partition *part)
{
    char path[BR_TOPIC_NAME_MAX + 64];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%" PRId32 "/state", topic, p);
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = ctl_zget(c, path, false, &data, &len, &st);
    kp_free(part->isr);
    part->isr = NULL;
    part->nisr = 0;
    part->has_state = false;
    if (rc == ZNONODE) {
        return 0;
    }
    if (rc != ZOK) {
        return -1;
    }
    struct br_zk_partition_state s;
    memset(&s, 0, sizeof s);
    char err[256] = "the znode holds no data";
    int drc = data == NULL
                  ? KP_E_CORRUPT
                  : br_zk_partition_state_decode(data, (size_t)len, path, &s, err, sizeof err);
    kp_free(data);
    if (drc != 0) {
        br_warn("controller: ignoring %s: %s", path, err);
        return 0;
    }
    part->has_state = true;
    part->leader = s.leader;
    part->leader_epoch = s.leader_epoch;
    part->controller_epoch = s.controller_epoch;
    part->zk_version = st.version;
    part->isr = s.isr; /* taken */
    part->nisr = (int32_t)s.n_isr;
    s.isr = NULL;
    br_zk_partition_state_clear(&s);
    return 0;
}

static bool read_unclean(struct br_controller *c, const char *topic)
{
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/config/topics/%s", topic);
    char *data = NULL;
    int len = 0;
    struct Stat st;
    bool unclean = c->cfg.unclean_leader_election;
    if (ctl_zget(c, path, false, &data, &len, &st) != ZOK || data == NULL) {
        return unclean;
    }
    struct br_meta_config *cfgs = NULL;
    size_t n = 0;
    char err[256] = "the znode holds no data";
    if (br_zk_topic_config_decode(data, (size_t)len, path, &cfgs, &n, err, sizeof err) == 0) {
        for (size_t i = 0; i < n; i++) {
            if (strcmp(cfgs[i].key, "unclean.leader.election.enable") == 0) {
                unclean = strcmp(cfgs[i].value, "true") == 0;
            }
        }
        br_zk_configs_free(cfgs, n);
    }
    kp_free(data);
    return unclean;
}

/* A topic's assignment (watching it for added partitions) and the states
 * of its partitions. 0, 1 when it is gone or unreadable, -1 on a
 * ZooKeeper failure. */
int ctl_read_assignment(struct br_controller *c, const char *name, bool watch,
                        struct br_zk_topic_assignment *a, struct Stat *st, char *err,
                        size_t errlen)
{
    memset(a, 0, sizeof *a);
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s", name);
    char *data = NULL;
    int len = 0;
    int rc = ctl_zget(c, path, watch, &data, &len, st);
    if (rc == ZNONODE) {
        (void)snprintf(err, errlen, "the topic is gone");
        return 1;
    }
    if (rc != ZOK) {
        return -1;
    }
    (void)snprintf(err, errlen, "the znode holds no data");
    int drc = data == NULL
                  ? KP_E_CORRUPT
                  : br_zk_topic_assignment_decode(data, (size_t)len, path, a, err, errlen);
    kp_free(data);
    return drc != 0 ? 2 : 0;
}

int ctl_read_topic(struct br_controller *c, const char *name, struct ctl_topic *t)
{
    struct br_zk_topic_assignment a;
    struct Stat st;
    char err[256];
    int rc = ctl_read_assignment(c, name, true, &a, &st, err, sizeof err);
    if (rc < 0) {
        return -1;
    }
    if (rc > 0) {
        if (rc == 2) {
            br_warn("controller: ignoring topic %s: %s", name, err);
        }
        return 1;
    }
    memset(t, 0, sizeof *t);
    (void)snprintf(t->name, sizeof t->name, "%s", name);
    t->parts = kp_calloc((size_t)a.n_partitions, sizeof *t->parts);
    if (t->parts == NULL) {
        br_zk_topic_assignment_clear(&a);
        return -1;
    }
    t->npartitions = a.n_partitions;
    int res = 0;
    for (int32_t p = 0; p < a.n_partitions && res == 0; p++) {
        struct ctl_partition *part = &t->parts[p];
        int32_t n = a.first[p + 1] - a.first[p];
        part->replicas = kp_calloc((size_t)n, sizeof *part->replicas);
        if (part->replicas == NULL) {
            res = -1;
            break;
        }
        memcpy(part->replicas, &a.replicas[a.first[p]], (size_t)n * sizeof *part->replicas);
        part->nreplicas = n;
        res = ctl_read_state(c, name, p, part);
    }
    br_zk_topic_assignment_clear(&a);
    if (res == 0) {
        t->unclean = read_unclean(c, name);
    } else {
        ctl_topic_clear(t);
    }
    return res;
}

/* Writes a partition's new state conditionally on its version; 0 when
 * written (part updated), 1 when the version moved (re-read: part holds
 * ZooKeeper's state now), -1 on a failure. */
int ctl_write_state(struct br_controller *c, const struct ctl_topic *t, int32_t p,
                    struct ctl_partition *part, int32_t leader, const int32_t *isr, int32_t nisr)
{
    char path[BR_TOPIC_NAME_MAX + 64];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%" PRId32 "/state", t->name,
                   p);
    int32_t *copy = kp_calloc(nisr > 0 ? (size_t)nisr : 1, sizeof *copy);
    if (copy == NULL) {
        return -1;
    }
    if (nisr > 0) {
        memcpy(copy, isr, (size_t)nisr * sizeof *isr);
    }
    struct br_zk_partition_state s = {leader, part->leader_epoch + 1, c->epoch, copy, (size_t)nisr};
    char *json = NULL;
    size_t len = 0;
    if (br_zk_partition_state_encode(&s, &json, &len) != 0) {
        kp_free(copy);
        return -1;
    }
    struct Stat st;
    int rc = zoo_set2(c->zh, path, json, (int)len, part->zk_version, &st);
    kp_free(json);
    if (rc != ZOK) {
        kp_free(copy);
        if (rc == ZBADVERSION) {
            return ctl_read_state(c, t->name, p, part) == 0 ? 1 : -1;
        }
        br_error("controller: writing %s failed: %s", path, zerror(rc));
        return -1;
    }
    kp_free(part->isr);
    part->isr = copy;
    part->nisr = nisr;
    part->leader = leader;
    part->leader_epoch++;
    part->controller_epoch = c->epoch;
    part->zk_version = st.version;
    return 0;
}
