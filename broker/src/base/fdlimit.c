/* samsa-broker: the open file limit and the budget of segment files (see
 * fdlimit.h). */
#define _GNU_SOURCE

#include "base/fdlimit.h"

#include "base/logging.h"
#include "base/number.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* RLIM_INFINITY as a count: "unlimited" is more than any budget. */
static uint64_t as_count(rlim_t v)
{
    return v == RLIM_INFINITY ? UINT64_MAX : (uint64_t)v;
}

/* Linux refuses a descriptor limit above fs.nr_open, which an infinite
 * hard limit is: the most the soft limit can be raised to. */
static rlim_t raise_target(rlim_t hard)
{
    if (hard != RLIM_INFINITY) {
        return hard;
    }
    rlim_t v = 1048576; /* the kernel's default nr_open */
    FILE *f = fopen("/proc/sys/fs/nr_open", "re");
    if (f != NULL) {
        char line[32];
        if (fgets(line, sizeof line, f) != NULL) {
            uint64_t n = 0;
            if (br_num_parse_u64(line, strcspn(line, "\n"), UINT64_MAX, &n) && n > 0) {
                v = (rlim_t)n;
            }
        }
        (void)fclose(f);
    }
    return v;
}

void br_fdlimit_init(int32_t configured, struct br_fdlimit *out)
{
    memset(out, 0, sizeof *out);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        /* cannot happen on Linux; budget from the POSIX minimum */
        rl.rlim_cur = 1024;
        rl.rlim_max = 1024;
    }
    out->soft_before = as_count(rl.rlim_cur);
    out->hard = as_count(rl.rlim_max);
    rlim_t target = raise_target(rl.rlim_max);
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < target) {
        struct rlimit up = {target, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
            rl.rlim_cur = target;
        } else {
            out->raise_failed = true;
            br_warn("cannot raise the open file limit from %" PRIu64 " to %" PRIu64 ": %s",
                    out->soft_before, as_count(target), strerror(errno));
        }
    }
    out->soft = as_count(rl.rlim_cur);
    if (configured > 0) {
        out->files_max = (size_t)configured;
        out->files_max_set = true;
    } else {
        uint64_t half = out->soft / 2;
        if (half > INT32_MAX) {
            half = INT32_MAX;
        }
        out->files_max = half > 0 ? (size_t)half : 1;
    }
}

void br_fdlimit_report(const struct br_fdlimit *l, size_t partitions, size_t segments,
                       int32_t max_connections, bool max_connections_set)
{
    char raised[96] = "";
    if (l->soft != l->soft_before) {
        (void)snprintf(raised, sizeof raised, " (raised from %" PRIu64 " at start-up)",
                       l->soft_before);
    }
    size_t need = segments < l->files_max ? segments : l->files_max;
    uint64_t taken = (uint64_t)l->files_max + BR_FDLIMIT_RESERVE;
    uint64_t room = l->soft > taken ? l->soft - taken : 0;
    br_info("%zu partition(s) with %zu segment(s): they keep at most %zu file(s) open "
            "(log.open.files.max %zu, %s); open file limit %" PRIu64 "%s; %" PRIu64
            " descriptor(s) left for connections",
            partitions, segments, need, l->files_max, l->files_max_set ? "set" : "half the limit",
            l->soft, raised, room);
    if (room == 0) {
        br_warn("the open file limit (%" PRIu64 ") leaves no descriptor for connections beside "
                "log.open.files.max (%zu) and the broker's own %d: raise the limit (ulimit -n, "
                "systemd LimitNOFILE=) or lower log.open.files.max",
                l->soft, l->files_max, BR_FDLIMIT_RESERVE);
    } else if (max_connections_set && (uint64_t)max_connections > room) {
        br_warn("the open file limit (%" PRIu64 ") is too small for log.open.files.max (%zu) "
                "plus max.connections (%" PRId32 ") plus the broker's own %d: raise the limit "
                "(ulimit -n, systemd LimitNOFILE=) or lower one of them",
                l->soft, l->files_max, max_connections, BR_FDLIMIT_RESERVE);
    }
}
