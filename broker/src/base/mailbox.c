/* samsa-broker: the reactor's mailbox (see mailbox.h). */
#define _GNU_SOURCE

#include "base/mailbox.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct br_mailbox {
    int fd; /* the eventfd */
    pthread_mutex_t mu;
    struct br_mail *head; /* guarded by mu */
    struct br_mail *tail; /* guarded by mu */
};

int br_mailbox_create(struct br_mailbox **out)
{
    *out = NULL;
    struct br_mailbox *mb = kp_calloc(1, sizeof *mb);
    if (mb == NULL) {
        return KP_E_NOMEM;
    }
    mb->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (mb->fd < 0) {
        br_error("eventfd: %s", strerror(errno));
        goto out_free;
    }
    if (pthread_mutex_init(&mb->mu, NULL) != 0) {
        br_error("cannot create the mailbox mutex");
        goto out_close;
    }
    *out = mb;
    return 0;

out_close:
    (void)close(mb->fd);
out_free:
    kp_free(mb);
    return KP_ERR_KAFKA_STORAGE_ERROR;
}

int br_mailbox_fd(const struct br_mailbox *mb)
{
    return mb->fd;
}

void br_mailbox_post(struct br_mailbox *mb, struct br_mail *m)
{
    m->next = NULL;
    (void)pthread_mutex_lock(&mb->mu);
    if (mb->tail != NULL) {
        mb->tail->next = m;
    } else {
        mb->head = m;
    }
    mb->tail = m;
    (void)pthread_mutex_unlock(&mb->mu);
    /* after the unlock: the reactor may take the message before it reads
     * this wake-up, which then finds an empty list (harmless), but it can
     * never read the wake-up and miss the message */
    uint64_t one = 1;
    for (;;) {
        ssize_t w = write(mb->fd, &one, sizeof one);
        if (w >= 0 || errno != EINTR) {
            /* EAGAIN: the counter is at its maximum, so a wake-up is pending */
            break;
        }
    }
}

struct br_mail *br_mailbox_take_all(struct br_mailbox *mb)
{
    uint64_t n = 0;
    for (;;) {
        ssize_t r = read(mb->fd, &n, sizeof n);
        if (r >= 0 || errno != EINTR) {
            break; /* EAGAIN: nothing was signalled; the list decides */
        }
    }
    (void)pthread_mutex_lock(&mb->mu);
    struct br_mail *all = mb->head;
    mb->head = NULL;
    mb->tail = NULL;
    (void)pthread_mutex_unlock(&mb->mu);
    return all;
}

void br_mailbox_free(struct br_mailbox *mb)
{
    if (mb == NULL) {
        return;
    }
    if (mb->fd >= 0) {
        (void)close(mb->fd);
    }
    (void)pthread_mutex_destroy(&mb->mu);
    kp_free(mb);
}

void br_mailbox_deliver_all(struct br_mailbox *mb, void *ctx)
{
    struct br_mail *m = br_mailbox_take_all(mb);
    while (m != NULL) {
        struct br_mail *next = m->next;
        m->deliver(ctx, m);
        m = next;
    }
}
