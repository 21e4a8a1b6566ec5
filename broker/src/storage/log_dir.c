/* samsa-broker: a log directory's removal, renaming for deletion, moves
 * and names (see log.h). */
#define _GNU_SOURCE

#include "storage/log_internal.h"

#include "base/logging.h"
#include "base/number.h"

#include <samsa-protocol/alloc.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* ------------------------------------------------------------- directories */

int br_log_dir_remove(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            return 0;
        }
        br_error("%s: open: %s", path, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        br_error("%s: fdopendir: %s", path, strerror(errno));
        (void)close(fd);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL) {
            if (errno != 0) {
                br_error("%s: readdir: %s", path, strerror(errno));
                rc = KP_ERR_KAFKA_STORAGE_ERROR;
            }
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        /* a partition dir holds files only; anything else is not ours */
        if (unlinkat(dirfd(d), de->d_name, 0) != 0) {
            br_error("%s/%s: unlink: %s", path, de->d_name, strerror(errno));
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    (void)closedir(d);
    if (rc == 0 && rmdir(path) != 0) {
        br_error("%s: rmdir: %s", path, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    return rc;
}

int br_log_delete_dir_name(const char *parent, const char *topic, int32_t partition, char *out,
                           size_t outlen)
{
    /* Kafka: java.util.UUID.randomUUID without its dashes */
    uint8_t rnd[16];
    if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        /* only uniqueness matters here, not secrecy */
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        x ^= (uint64_t)getpid() << 40;
        for (size_t i = 0; i < sizeof rnd; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            rnd[i] = (uint8_t)(x >> 56);
        }
    }
    char suffix[64];
    int n = snprintf(suffix, sizeof suffix, "-%" PRId32 ".", partition);
    if (n <= 0) {
        return KP_E_INVALID_ARG;
    }
    size_t sl = (size_t)n;
    for (size_t i = 0; i < sizeof rnd; i++) {
        static const char hex[] = "0123456789abcdef";
        suffix[sl++] = hex[rnd[i] >> 4];
        suffix[sl++] = hex[rnd[i] & 15];
    }
    memcpy(suffix + sl, "-delete", sizeof "-delete");
    sl += sizeof "-delete" - 1;
    size_t tl = strlen(topic);
    if (tl > NAME_MAX - sl) {
        tl = NAME_MAX - sl; /* Kafka: topic.substring(0, 255 - suffix.size) */
    }
    n = snprintf(out, outlen, "%s/%.*s%s", parent, (int)tl, topic, suffix);
    return n > 0 && (size_t)n < outlen ? 0 : KP_E_INVALID_ARG;
}

int br_log_move_dir(struct br_log *log, const char *target)
{
    size_t n = strlen(target);
    char *dir = kp_malloc(n + 1);
    if (dir == NULL) {
        br_error("%s: out of memory renaming it", log->dir);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    memcpy(dir, target, n + 1);
    /* a flush away that has not written the epoch file yet would write it
     * under the old name: it is written here, under the new one */
    struct br_log_flush *f =
        log->flushing != NULL && log->flushing->epochs != NULL ? log->flushing : NULL;
    if (f != NULL) {
        (void)pthread_mutex_lock(&f->mu);
    }
    int rc = rename(log->dir, target);
    int err = errno;
    bool epochs_pending = f != NULL && !f->epochs_written && !f->epochs_cancelled;
    if (f != NULL) {
        f->epochs_cancelled = f->epochs_cancelled || (rc == 0 && epochs_pending);
        (void)pthread_mutex_unlock(&f->mu);
    }
    if (rc != 0) {
        br_error("%s: rename to %s: %s", log->dir, target, strerror(err));
        kp_free(dir);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    kp_free(log->dir);
    log->dir = dir;
    return epochs_pending ? log_persist_epochs(log) : 0;
}

bool br_log_dir_is_deleted(const char *name)
{
    size_t n = strlen(name);
    size_t s = sizeof "-delete" - 1;
    return n > s && strcmp(name + n - s, "-delete") == 0;
}

int br_log_dir_delete(const char *dir)
{
    const char *slash = strrchr(dir, '/');
    const char *base = slash != NULL ? slash + 1 : dir;
    if (br_log_dir_is_deleted(base)) {
        /* renamed already (the topic's deletion renames first) */
        br_info("%s: removing the deleted log", dir);
        return br_log_dir_remove(dir);
    }
    char parent[PATH_MAX];
    char topic[256]; /* a topic name is at most 249 bytes */
    int32_t partition = 0;
    int n = slash != NULL ? snprintf(parent, sizeof parent, "%.*s", (int)(slash - dir), dir)
                          : snprintf(parent, sizeof parent, ".");
    char target[PATH_MAX];
    if (n < 0 || (size_t)n >= sizeof parent ||
        br_log_dir_parse_name(base, topic, sizeof topic, &partition) != 0 ||
        br_log_delete_dir_name(parent, topic, partition, target, sizeof target) != 0) {
        return KP_E_INVALID_ARG;
    }
    if (rename(dir, target) != 0) {
        br_error("%s: rename to %s: %s", dir, target, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    br_info("%s: deleting the log", dir);
    return br_log_dir_remove(target);
}

int br_log_delete(struct br_log *log)
{
    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s", log->dir);
    log_free(log);
    if (n < 0 || (size_t)n >= sizeof dir) {
        return KP_E_INVALID_ARG;
    }
    return br_log_dir_delete(dir);
}

int br_log_dir_parse_name(const char *name, char *topic, size_t topic_cap, int32_t *partition)
{
    const char *dash = strrchr(name, '-');
    if (dash == NULL) {
        return KP_E_INVALID_ARG;
    }
    size_t tlen = (size_t)(dash - name);
    if (!br_topic_name_valid(name, tlen) || tlen >= topic_cap) {
        return KP_E_INVALID_ARG;
    }
    const char *p = dash + 1;
    size_t plen = strlen(p);
    if (plen == 0 || plen > 10 || (p[0] == '0' && plen > 1)) {
        return KP_E_INVALID_ARG;
    }
    uint64_t v = 0;
    if (!br_num_parse_u64(p, plen, INT32_MAX, &v)) {
        return KP_E_INVALID_ARG;
    }
    memcpy(topic, name, tlen);
    topic[tlen] = '\0';
    *partition = (int32_t)v;
    return 0;
}
