/* samsa-broker: the log directories at start-up (see log_dirs.h). */
#define _GNU_SOURCE

#include "log_dirs.h"

#include "base/logging.h"
#include "base/number.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define META_PROPERTIES "meta.properties"
#define CLUSTER_ID_MAX 63 /* what b->s.cluster_id holds */

/* ---------------------------------------------------------------- meta.properties */

struct identity {
    bool present;
    int32_t broker_id;                   /* -1: none */
    char cluster_id[CLUSTER_ID_MAX + 1]; /* "": none */
};

static bool cluster_id_valid(const char *s, size_t n)
{
    if (n == 0 || n > CLUSTER_ID_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* A decimal in [0, INT32_MAX], the whole of s[0..n). */
static bool parse_id(const char *s, size_t n, int64_t *out)
{
    uint64_t v = 0;
    if (n > 10 || !br_num_parse_u64(s, n, INT32_MAX, &v)) {
        return false;
    }
    *out = (int64_t)v;
    return true;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f';
}

/*
 * meta.properties as java.util.Properties reads what Kafka writes: `key=value`
 * (or `key:value`) lines, `#` and `!` comments, blank lines. The file is
 * hostile: any control byte, a line that is not key=value, a missing or
 * malformed version or broker.id make it damaged. Unknown keys are skipped
 * (Kafka's VerifiableProperties reads only what it needs).
 */
static int parse_identity(const char *buf, size_t len, struct identity *id, char *why,
                          size_t whylen)
{
    int64_t version = -1;
    int64_t broker_id = -1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if ((c < 0x20 && c != '\t' && c != '\f' && c != '\r' && c != '\n') || c == 0x7f) {
            (void)snprintf(why, whylen, "the control byte 0x%02x at byte %zu", c, i);
            return -1;
        }
    }
    size_t pos = 0;
    size_t line = 0;
    while (pos < len) {
        const char *start = buf + pos;
        const char *nl = memchr(start, '\n', len - pos);
        size_t n = nl != NULL ? (size_t)(nl - start) : len - pos;
        pos += n + (nl != NULL ? 1 : 0);
        line++;
        if (n > 0 && start[n - 1] == '\r') {
            n--;
        }
        if (memchr(start, '\r', n) != NULL) {
            (void)snprintf(why, whylen, "a carriage return inside line %zu", line);
            return -1;
        }
        size_t i = 0;
        while (i < n && blank(start[i])) {
            i++;
        }
        if (i == n || start[i] == '#' || start[i] == '!') {
            continue;
        }
        size_t sep = i;
        while (sep < n && start[sep] != '=' && start[sep] != ':') {
            sep++;
        }
        if (sep == n) {
            (void)snprintf(why, whylen, "line %zu is not key=value", line);
            return -1;
        }
        size_t kend = sep;
        while (kend > i && blank(start[kend - 1])) {
            kend--;
        }
        size_t v = sep + 1;
        while (v < n && blank(start[v])) {
            v++;
        }
        size_t vend = n;
        while (vend > v && blank(start[vend - 1])) {
            vend--;
        }
        const char *key = start + i;
        size_t klen = kend - i;
        const char *val = start + v;
        size_t vlen = vend - v;
        if (klen == 7 && memcmp(key, "version", 7) == 0) {
            if (!parse_id(val, vlen, &version)) {
                (void)snprintf(why, whylen, "line %zu: version '%.*s' is not a number", line,
                               (int)(vlen > 40 ? 40 : vlen), val);
                return -1;
            }
        } else if (klen == 9 && memcmp(key, "broker.id", 9) == 0) {
            if (!parse_id(val, vlen, &broker_id)) {
                (void)snprintf(why, whylen,
                               "line %zu: broker.id '%.*s' is not a broker id (0 to 2147483647)",
                               line, (int)(vlen > 40 ? 40 : vlen), val);
                return -1;
            }
        } else if (klen == 10 && memcmp(key, "cluster.id", 10) == 0) {
            if (!cluster_id_valid(val, vlen)) {
                (void)snprintf(why, whylen,
                               "line %zu: cluster.id '%.*s' is not a cluster id (1 to 63 of "
                               "[A-Za-z0-9_-])",
                               line, (int)(vlen > 40 ? 40 : vlen), val);
                return -1;
            }
            memcpy(id->cluster_id, val, vlen);
            id->cluster_id[vlen] = '\0';
        }
    }
    if (version < 0) {
        (void)snprintf(why, whylen, "no version");
        return -1;
    }
    if (version != 0) {
        /* Kafka 2.0's BrokerMetadataCheckpoint.read */
        (void)snprintf(why, whylen,
                       "Unrecognized version of the server meta.properties file: %" PRId64,
                       version);
        return -1;
    }
    if (broker_id < 0) {
        (void)snprintf(why, whylen, "no broker.id");
        return -1;
    }
    id->broker_id = (int32_t)broker_id;
    return 0;
}

/* Reads path into *id (present false when there is no such file). */
static int read_identity(const char *path, struct identity *id, char *why, size_t whylen)
{
    memset(id, 0, sizeof *id);
    id->broker_id = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT) {
            return 0;
        }
        (void)snprintf(why, whylen, "it cannot be read: %s", strerror(errno));
        return -1;
    }
    id->present = true;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        (void)snprintf(why, whylen, "not a regular file");
        (void)close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size > BR_META_PROPERTIES_MAX_BYTES) {
        (void)snprintf(why, whylen, "larger than %zu bytes", BR_META_PROPERTIES_MAX_BYTES);
        (void)close(fd);
        return -1;
    }
    char buf[BR_META_PROPERTIES_MAX_BYTES];
    size_t len = 0;
    while (len < sizeof buf) {
        ssize_t r = read(fd, buf + len, sizeof buf - len);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            (void)snprintf(why, whylen, "it cannot be read: %s", strerror(errno));
            (void)close(fd);
            return -1;
        }
        if (r == 0) {
            break;
        }
        len += (size_t)r;
    }
    (void)close(fd);
    return parse_identity(buf, len, id, why, whylen);
}

/* 16 random bytes as 22 characters of base64url, like Kafka's ids. */
static int new_cluster_id(char *out, size_t outlen)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t rnd[16];
    if (outlen < 23 || getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        br_error("cannot get random bytes for a cluster id: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < 22; i++) {
        size_t bit = i * 6;
        unsigned v = (unsigned)(rnd[bit / 8] << 8 | (bit / 8 + 1 < 16 ? rnd[bit / 8 + 1] : 0));
        out[i] = alphabet[(v >> (10 - bit % 8)) & 63];
    }
    out[22] = '\0';
    return 0;
}

int br_log_dirs_load_identity(struct br_broker *b, bool *existed)
{
    *existed = false;
    struct identity ids[BR_CONFIG_MAX_LOG_DIRS];
    memset(ids, 0, sizeof ids);
    int32_t stored = -1;
    const char *stored_path = NULL;
    const char *cluster_path = NULL;
    b->s.cluster_id[0] = '\0';
    for (size_t d = 0; d < b->s.cfg.n_log_dirs; d++) {
        char path[4200];
        (void)snprintf(path, sizeof path, "%s/" META_PROPERTIES, b->s.cfg.log_dirs[d]);
        char why[300];
        if (read_identity(path, &ids[d], why, sizeof why) != 0) {
            br_error("%s is damaged (%s). It holds this log dir's identity (broker.id, "
                     "cluster.id): Samsa leaves it as it is and does not start. Restore it from "
                     "a backup, or remove it to start the log dir with a new cluster id (its "
                     "topics and records stay)",
                     path, why);
            return -1;
        }
        if (!ids[d].present) {
            continue;
        }
        *existed = true;
        if (stored >= 0 && ids[d].broker_id != stored) {
            /* Kafka's InconsistentBrokerIdException */
            br_error("Failed to match broker.id across log.dirs: %s says %" PRId32 ", %s says "
                     "%" PRId32 ". This could happen if multiple brokers shared a log directory "
                     "(log.dirs) or partial data was manually copied from another broker",
                     stored_path, stored, path, ids[d].broker_id);
            return -1;
        }
        stored = ids[d].broker_id;
        stored_path = b->s.cfg.log_dirs[d];
        if (ids[d].cluster_id[0] != '\0') {
            if (b->s.cluster_id[0] != '\0' && strcmp(b->s.cluster_id, ids[d].cluster_id) != 0) {
                br_error("cluster.id %s in %s/" META_PROPERTIES
                         " does not match cluster.id %s in %s: the log dirs belong to different "
                         "clusters; give this broker the log dirs of one cluster",
                         ids[d].cluster_id, b->s.cfg.log_dirs[d], b->s.cluster_id, cluster_path);
                return -1;
            }
            (void)snprintf(b->s.cluster_id, sizeof b->s.cluster_id, "%s", ids[d].cluster_id);
            cluster_path = b->s.cfg.log_dirs[d];
        }
    }
    if (b->s.cfg.broker_id >= 0 && stored >= 0 && stored != b->s.cfg.broker_id) {
        /* Kafka's InconsistentBrokerIdException, word for word */
        br_error("Configured broker.id %" PRId32 " doesn't match stored broker.id %" PRId32
                 " in meta.properties (%s). If you moved your data, make sure your configured "
                 "broker.id matches. If you intend to create a new broker, you should remove all "
                 "data in your data directories (log.dirs)",
                 b->s.cfg.broker_id, stored, stored_path);
        return -1;
    }
    b->s.node_id = b->s.cfg.broker_id >= 0 ? b->s.cfg.broker_id : (stored >= 0 ? stored : 0);
    bool added = false;
    if (b->s.cluster_id[0] == '\0') {
        if (new_cluster_id(b->s.cluster_id, sizeof b->s.cluster_id) != 0) {
            return -1;
        }
        added = *existed;
    }
    char text[256];
    int n = snprintf(text, sizeof text,
                     "#samsa-broker identity\nversion=0\nbroker.id=%" PRId32 "\ncluster.id=%s\n",
                     b->s.node_id, b->s.cluster_id);
    for (size_t d = 0; d < b->s.cfg.n_log_dirs; d++) {
        if (ids[d].present && ids[d].cluster_id[0] != '\0') {
            continue;
        }
        char path[4200];
        (void)snprintf(path, sizeof path, "%s/" META_PROPERTIES, b->s.cfg.log_dirs[d]);
        if (ids[d].present) {
            br_warn("%s has no cluster.id (Kafka 2.0 wrote none): cluster.id %s added", path,
                    b->s.cluster_id);
        } else if (added) {
            br_warn("%s was missing: written with the new cluster.id %s", path, b->s.cluster_id);
        }
        if (br_file_write_atomic(path, text, (size_t)n) != 0) {
            return -1; /* logged there */
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- the log dirs' entries */

/* A topic of the metadata store, by name, with where its partitions' marks
 * start in `seen`. */
struct known {
    const char *name;
    int32_t partitions;
    size_t first;
};

static int cmp_known(const void *a, const void *b)
{
    return strcmp(((const struct known *)a)->name, ((const struct known *)b)->name);
}

#define ORPHAN_EXAMPLES 3

struct scan {
    const struct known *known;
    size_t nknown;
    uint8_t *seen; /* per partition of the store: its directory was found */
    size_t orphans;
    char examples[ORPHAN_EXAMPLES][300];
};

static bool is_dir_at(int dfd, const struct dirent *de)
{
    if (de->d_type == DT_DIR) {
        return true;
    }
    if (de->d_type != DT_UNKNOWN) {
        return false;
    }
    struct stat st;
    return fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static void note_partition_dir(struct scan *sc, const char *dir, const char *name)
{
    char topic[BR_TOPIC_NAME_MAX + 1];
    int32_t p = -1;
    if (br_log_dir_parse_name(name, topic, sizeof topic, &p) != 0) {
        return; /* not a partition directory (lost+found, ...): not ours */
    }
    struct known key = {topic, 0, 0};
    const struct known *k = bsearch(&key, sc->known, sc->nknown, sizeof key, cmp_known);
    if (k != NULL && p < k->partitions) {
        sc->seen[k->first + (size_t)p] = 1;
        return;
    }
    if (sc->orphans < ORPHAN_EXAMPLES) {
        (void)snprintf(sc->examples[sc->orphans], sizeof sc->examples[0], "%s/%s", dir, name);
    }
    sc->orphans++;
}

static int scan_dir(struct scan *sc, const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        br_error("cannot read log dir %s: %s", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL) {
            if (errno != 0) {
                br_error("cannot read log dir %s: %s", dir, strerror(errno));
                rc = -1;
            }
            break;
        }
        if (de->d_name[0] == '.' || !is_dir_at(dirfd(d), de)) {
            continue;
        }
        if (!br_log_dir_is_deleted(de->d_name)) {
            note_partition_dir(sc, dir, de->d_name);
            continue;
        }
        char path[4096];
        int n = snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (n <= 0 || (size_t)n >= sizeof path) {
            continue;
        }
        br_info("%s: removing a partition deleted before the last stop", path);
        if (br_log_dir_remove(path) != 0) {
            br_warn("%s: could not be removed (it is never opened as a partition)", path);
        }
    }
    (void)closedir(d);
    return rc;
}

int br_log_dirs_scan(struct br_broker *b, const struct br_topic_meta *topics, size_t ntopics,
                     bool metadata_missing, bool identity_existed)
{
    int rc = -1;
    struct scan sc;
    memset(&sc, 0, sizeof sc);
    struct known *known = kp_calloc(ntopics == 0 ? 1 : ntopics, sizeof *known);
    size_t total = 0;
    for (size_t i = 0; i < ntopics; i++) {
        total += (size_t)topics[i].partitions;
    }
    sc.seen = kp_calloc(total == 0 ? 1 : total, 1);
    if (known == NULL || sc.seen == NULL) {
        br_error("out of memory checking the log dirs");
        goto out;
    }
    size_t first = 0;
    for (size_t i = 0; i < ntopics; i++) {
        known[i].name = topics[i].name;
        known[i].partitions = topics[i].partitions;
        known[i].first = first;
        first += (size_t)topics[i].partitions;
    }
    qsort(known, ntopics, sizeof *known, cmp_known);
    sc.known = known;
    sc.nknown = ntopics;
    for (size_t d = 0; d < b->s.cfg.n_log_dirs; d++) {
        if (scan_dir(&sc, b->s.cfg.log_dirs[d]) != 0) {
            goto out;
        }
    }
    char meta[4200];
    (void)snprintf(meta, sizeof meta, "%s/" BR_META_FILE_NAME, b->s.cfg.log_dirs[0]);
    if (sc.orphans > 0) {
        char list[1024];
        size_t used = 0;
        list[0] = '\0';
        for (size_t i = 0; i < sc.orphans && i < ORPHAN_EXAMPLES; i++) {
            int w = snprintf(list + used, sizeof list - used, "%s%s", i > 0 ? ", " : "",
                             sc.examples[i]);
            if (w > 0 && (size_t)w < sizeof list - used) {
                used += (size_t)w;
            }
        }
        if (metadata_missing) {
            br_error("%s is missing, but the log dirs hold %zu partition director%s (%s%s) "
                     "whose topics, partition counts and configs it kept. Samsa will not adopt "
                     "them (a topic created under one of those names would serve their old "
                     "records) and does not start. Restore %s from a backup; or, to start "
                     "without that data, move those directories out of the log dirs",
                     meta, sc.orphans, sc.orphans == 1 ? "y" : "ies", list,
                     sc.orphans > ORPHAN_EXAMPLES ? ", ..." : "", meta);
        } else {
            br_error("the log dirs hold %zu partition director%s of no topic in %s (%s%s): "
                     "copied in, or left by a metadata file that was lost or replaced. Samsa "
                     "will not adopt them (a topic created under one of those names would serve "
                     "their old records) and does not start. Move them out of the log dirs, or "
                     "restore the metadata file that lists their topics",
                     sc.orphans, sc.orphans == 1 ? "y" : "ies", meta, list,
                     sc.orphans > ORPHAN_EXAMPLES ? ", ..." : "");
        }
        goto out;
    }
    if (metadata_missing && identity_existed) {
        br_warn("%s was missing although the log dirs were used before (they hold "
                "meta.properties); no partition directory is there: starting with no topics",
                meta);
    }
    size_t warned = 0;
    for (size_t i = 0; i < ntopics; i++) {
        int32_t missing = 0;
        for (int32_t p = 0; p < known[i].partitions; p++) {
            missing += sc.seen[known[i].first + (size_t)p] == 0 ? 1 : 0;
        }
        if (missing > 0 && warned++ < 10) {
            br_warn("topic %s: %" PRId32 " of %" PRId32 " partition directories are missing "
                    "from the log dirs: those partitions start empty",
                    known[i].name, missing, known[i].partitions);
        }
    }
    if (warned > 10) {
        br_warn("%zu topics in all have partition directories missing", warned);
    }
    rc = 0;
out:
    kp_free(known);
    kp_free(sc.seen);
    return rc;
}
