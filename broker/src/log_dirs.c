/* samsa-broker: the log directories at start-up (see log_dirs.h). */
#define _GNU_SOURCE

#include "log_dirs.h"

#include "logging.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int scan_dir(const char *dir)
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
        if (!br_log_dir_is_deleted(de->d_name) || !is_dir_at(dirfd(d), de)) {
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

int br_log_dirs_scan(struct br_broker *b)
{
    for (size_t i = 0; i < b->cfg.n_log_dirs; i++) {
        if (scan_dir(b->cfg.log_dirs[i]) != 0) {
            return -1;
        }
    }
    return 0;
}
