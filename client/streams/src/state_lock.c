/*
 * The state directory's lock: one process at a time keeps an application's
 * stores under state_dir/<application.id>. Kafka Streams locks the same
 * folder's task directories with a `.lock` file each (StateDirectory.lock,
 * Kafka 2.0: FileChannel.tryLock, a LockException when another thread or
 * process holds it); here one flock(2) on state_dir/<application.id>/.lock
 * covers every task, taken when the directory is set and held until the app
 * is destroyed, so that two instances never write one LMDB environment
 * (whose writer lock would serialise them, not keep their states apart).
 * The holder writes its PID into the file so that the refusal can name it;
 * the lock itself is the kernel's, released when the process ends however
 * it ends (kill -9 included).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int st_mkdir_p(char *path)
{
    for (char *p = path + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            int rc = mkdir(path, 0700);
            *p = '/';
            if (rc != 0 && errno != EEXIST) {
                return -1;
            }
        }
    }
    return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int st_state_lock(const char *state_dir, const char *application_id, int *fd_out, char *msg,
                  size_t msg_size)
{
    *fd_out = -1;
    size_t n = strlen(state_dir) + strlen(application_id) + 16;
    char *dir = malloc(n);
    char *path = malloc(n);
    int err = SAMSA_OK;
    int fd = -1;
    if (dir == NULL || path == NULL) {
        err = SAMSA_ERR_NOMEM;
        goto out;
    }
    (void)snprintf(dir, n, "%s/%s", state_dir, application_id);
    (void)snprintf(path, n, "%s/.lock", dir);
    if (st_mkdir_p(dir) != 0) {
        (void)snprintf(msg, msg_size, "state directory %s: %s", dir, strerror(errno));
        err = SAMSA_ERR_STATE;
        goto out;
    }
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        (void)snprintf(msg, msg_size, "state directory lock %s: %s", path, strerror(errno));
        err = SAMSA_ERR_STATE;
        goto out;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char holder[32] = "";
        ssize_t got = read(fd, holder, sizeof holder - 1);
        holder[got > 0 ? got : 0] = '\0';
        holder[strcspn(holder, "\n")] = '\0';
        if (e == EWOULDBLOCK) {
            (void)snprintf(msg, msg_size,
                           "state directory %s is in use by another instance (process %s, "
                           "holding %s): two instances of one application need a state "
                           "directory each",
                           dir, holder[0] != '\0' ? holder : "unknown", path);
        } else {
            (void)snprintf(msg, msg_size, "state directory lock %s: %s", path, strerror(e));
        }
        err = SAMSA_ERR_STATE;
        goto out;
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != (ssize_t)len) {
        (void)snprintf(msg, msg_size, "state directory lock %s: %s", path, strerror(errno));
        err = SAMSA_ERR_STATE;
        goto out;
    }
    *fd_out = fd;
    fd = -1;
out:
    if (fd >= 0) {
        (void)close(fd);
    }
    free(dir);
    free(path);
    return err;
}

void st_state_unlock(int fd)
{
    if (fd >= 0) {
        (void)close(fd); /* releases the flock */
    }
}
