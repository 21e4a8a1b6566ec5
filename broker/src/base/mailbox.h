/*
 * samsa-broker: the reactor's mailbox, how helper threads talk to it.
 *
 * A mutex-protected FIFO of messages and an eventfd. A helper thread posts a
 * message (br_mailbox_post): it is appended under the mutex and the eventfd
 * is bumped. Its owner registers the eventfd (br_mailbox_fd) in the
 * reactor's epoll as a watch of its own; when it fires, the reactor takes
 * every message at once (br_mailbox_take_all) and handles them on its own
 * thread, where it may touch logs and partitions. The threads never touch
 * reactor state: what they need travels inside the message.
 *
 *   thread:   job->mail.deliver = cleaned; br_mailbox_post(mb, &job->mail);
 *   reactor:  for (m = br_mailbox_take_all(mb); m != NULL; m = next) {
 *                 next = m->next; m->deliver(ctx, m);
 *             }
 *
 * A message is the first member of its owner's struct (container by cast);
 * ownership passes with it: to the mailbox on post, to the reactor on take.
 *
 * @locality br_mailbox_post: any thread. Everything else: the reactor thread
 * (create and free before and after the helper threads run).
 */
#ifndef SAMSA_BROKER_MAILBOX_H
#define SAMSA_BROKER_MAILBOX_H

#include <samsa-protocol/err.h>

/* A message. deliver, set by whoever asked for the work the message reports
 * on, is what the reactor's user calls with it (br_mail_deliver): the
 * mailbox knows nothing of what travels in it. */
struct br_mail {
    struct br_mail *next;
    void (*deliver)(void *ctx, struct br_mail *m);
};

struct br_mailbox;

/* An empty mailbox with its eventfd. Returns 0, KP_E_NOMEM, or
 * KP_ERR_KAFKA_STORAGE_ERROR when the eventfd or the mutex cannot be made.
 * *out owned by the caller (br_mailbox_free). */
KP_MUST_CHECK int br_mailbox_create(struct br_mailbox **out);

/* The eventfd to watch for reading (the reactor's br_net_watch_add): it
 * is readable while messages wait. */
int br_mailbox_fd(const struct br_mailbox *mb);

/* Appends m and wakes the reactor. Any thread; never fails. */
void br_mailbox_post(struct br_mailbox *mb, struct br_mail *m);

/* Resets the eventfd and returns every message posted so far, oldest
 * first, linked by next (NULL when none). The caller owns them. */
struct br_mail *br_mailbox_take_all(struct br_mailbox *mb);

/* Takes every message (br_mailbox_take_all) and calls each one's deliver
 * with ctx, oldest first. */
void br_mailbox_deliver_all(struct br_mailbox *mb, void *ctx);

/* Closes the eventfd and frees the mailbox. Messages still queued are the
 * caller's to take first (their owners know how to free them). NULL is a
 * no-op. */
void br_mailbox_free(struct br_mailbox *mb);

#endif
