/*
 * samsa-broker: an asynchronous ZooKeeper session, answered on the reactor.
 *
 * One br_zk is one ZooKeeper session at a time over ZooKeeper's
 * multi-threaded C client (libzookeeper-mt, its asynchronous zoo_a* calls).
 * Nothing here blocks the reactor thread, except br_zk_close at stop. Every
 * outcome comes back the same way: the client library calls zk.c on one of
 * its own threads, zk.c copies what it got (result code, data, stat,
 * children, the created name) into a message and posts it to the reactor's
 * mailbox (mailbox.h); when the reactor delivers the mailbox, zk.c calls the
 * owner's ops on the reactor thread:
 *
 *   static const struct br_zk_ops ops = {on_session, on_watch, on_done};
 *   struct br_zk_config cfg = {"zk1:2181,zk2:2181/kafka", 6000};
 *   rc = br_zk_open(&cfg, mailbox, &ops, me, &zk, err, sizeof err);
 *   ... on_session(me, zk, BR_ZK_EVENT_CONNECTED)
 *   rc = br_zk_get(zk, "/brokers/topics/t", true, MY_TAG);
 *   ... on_done(me, zk, MY_TAG, &result)        result valid during the call
 *   ... on_watch(me, zk, BR_ZK_WATCH_CHANGED, "/brokers/topics/t")
 *   br_zk_close(zk);                            at stop
 *
 * Threads.
 *   - The reactor thread (the owner's, the one that delivers the mailbox)
 *     makes every call of this header and runs every op.
 *   - The client library runs two threads per session (I/O and completion);
 *     they run zk.c's completion and watcher functions, which only copy and
 *     post. They never touch the owner's state.
 *   - A helper thread per br_zk_open and br_zk_reopen ends the previous
 *     session's handle (zookeeper_close, which can wait seconds to tell the
 *     server), starts the next one (zookeeper_init2, which resolves the host
 *     names: DNS can block), posts that it is done and exits; the reactor
 *     joins it when that message is delivered.
 *   - br_zk_close closes the handle on the reactor thread: at stop only.
 *
 * The chroot. "host:port,host:port/chroot" roots every path at /chroot.
 * zk.c does the rooting itself (paths given here are relative to the
 * chroot, and so are the paths it gives back: watch events, created
 * names): as Kafka does before it uses a chroot (KafkaServer.initZkClient,
 * Kafka 2.0), it creates the chroot's path, each missing znode persistent
 * and empty, before it reports the session CONNECTED; one session serves
 * both, so no second handle has to be opened and closed for it.
 *
 * The session's life, as the owner sees it (br_zk_state):
 *   OPENING       after br_zk_open / br_zk_reopen: the session is being
 *                 established (and the chroot made). Requests are answered
 *                 BR_ZK_CONNECTIONLOSS at once: wait for CONNECTED.
 *   CONNECTED     event BR_ZK_EVENT_CONNECTED: requests go to ZooKeeper.
 *   DISCONNECTED  event BR_ZK_EVENT_DISCONNECTED: the connection dropped;
 *                 the client reconnects by itself, to any server of the
 *                 list, and the session lives on if it does so within the
 *                 session timeout (CONNECTED again, same session: its
 *                 ephemeral znodes and its watches stay; the client sets
 *                 the watches again and those whose znodes changed fire).
 *                 Requests in flight when it dropped are answered
 *                 BR_ZK_CONNECTIONLOSS: their outcome is unknown (a write
 *                 may have been applied), as for Kafka, which re-reads
 *                 before it retries a conditional write (kafka-replication
 *                 §1.3). Requests made now wait in the client for the
 *                 reconnection, or fail the same way when an attempt does.
 *   EXPIRED       event BR_ZK_EVENT_EXPIRED: the session is gone, and with
 *                 it its ephemeral znodes and every watch (no watch of it
 *                 fires afterwards). Requests that were in flight are
 *                 answered BR_ZK_SESSIONEXPIRED (after the event); requests
 *                 made now are answered BR_ZK_SESSIONEXPIRED at once. The
 *                 owner calls br_zk_reopen for a new session (OPENING),
 *                 then re-creates its ephemeral znodes and re-reads what it
 *                 watches (Kafka 2.0: ZooKeeperClient.reinitialize, then
 *                 the controller's RegisterBrokerAndReelect, §7.3). Also
 *                 reported when the session could not even be started
 *                 (unresolvable hosts: see the log; the owner retries
 *                 later, as Kafka does every second) and when zk.c could
 *                 not copy an event for lack of memory (the session can no
 *                 longer be trusted to have told everything).
 *   CLOSED        after br_zk_close: no op is called any more.
 *
 * Requests. br_zk_create/get/set/delete/exists/get_children return 0 when
 * the request is under way: ops->done is then called exactly once with the
 * caller's tag, never from inside the call that made the request. ZooKeeper
 * answers one session's requests in the order they were made, and a watch
 * event comes before the answer of a read made after the change; an answer
 * zk.c gives without asking ZooKeeper (OPENING, EXPIRED) may overtake the
 * answers of requests already with it. They return KP_E_INVALID_ARG (an
 * invalid path, data above BR_ZK_DATA_MAX, a version below -1, the session
 * closed) or KP_E_NOMEM with nothing under way and no call to come.
 * Requests still under way when br_zk_reopen ends their session are
 * answered BR_ZK_CLOSING; after br_zk_close nothing is answered. (One
 * corner: when the client library itself runs out of memory queueing a
 * request, ZMARSHALLINGERROR, it may or may not have kept the request. zk.c
 * logs it and keeps the request under way: it is answered if the library
 * answers it, BR_ZK_CLOSING at the latest when its session ends, and freed
 * unanswered by br_zk_close otherwise.)
 *
 * Watches are ZooKeeper's: one-shot, set by a read with watch = true on the
 * znode read (get and exists: its data and its existence; get_children:
 * its children), delivered through ops->watch with the kind and the path,
 * to be set again by the next read.
 *
 * @locality reactor thread (see Threads above).
 */
#ifndef SAMSA_BROKER_ZK_H
#define SAMSA_BROKER_ZK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "base/mailbox.h"

/* Ceilings: bytes of a path (chroot included), of a znode's data written
 * or read (ZooKeeper's own default is jute.maxbuffer, 1 MiB less a byte),
 * children of one znode read at once. */
#define BR_ZK_PATH_MAX 4096
#define BR_ZK_DATA_MAX ((size_t)4 * 1024 * 1024)
#define BR_ZK_MAX_CHILDREN ((size_t)1 << 20)
/* Bytes of zookeeper.connect. */
#define BR_ZK_CONNECT_MAX 4096

struct br_zk;

enum br_zk_state {
    BR_ZK_STATE_OPENING = 1,
    BR_ZK_STATE_CONNECTED,
    BR_ZK_STATE_DISCONNECTED,
    BR_ZK_STATE_EXPIRED,
    BR_ZK_STATE_CLOSED,
};

enum br_zk_event {
    BR_ZK_EVENT_CONNECTED = 1,
    BR_ZK_EVENT_DISCONNECTED,
    BR_ZK_EVENT_EXPIRED,
};

enum br_zk_watch {
    BR_ZK_WATCH_CREATED = 1, /* an exists watch: the znode was created */
    BR_ZK_WATCH_DELETED,     /* any watch: the znode was deleted */
    BR_ZK_WATCH_CHANGED,     /* a data watch: its data was set */
    BR_ZK_WATCH_CHILD,       /* a children watch: a child came or went */
};

/* A request's outcome, what the owner can act on. zrc keeps ZooKeeper's
 * own code (zookeeper.h's ZOK, ZNONODE...) for the log. */
enum br_zk_rc {
    BR_ZK_OK = 0,
    BR_ZK_NONODE,                  /* no such znode (create: no parent) */
    BR_ZK_NODEEXISTS,              /* create: the znode exists */
    BR_ZK_BADVERSION,              /* set, delete: the version did not match */
    BR_ZK_NOTEMPTY,                /* delete: the znode has children */
    BR_ZK_NOCHILDRENFOREPHEMERALS, /* create: the parent is ephemeral */
    BR_ZK_CONNECTIONLOSS,          /* not connected or the connection dropped: outcome unknown */
    BR_ZK_SESSIONEXPIRED,          /* the session is gone */
    BR_ZK_CLOSING,                 /* br_zk_reopen ended the session first */
    BR_ZK_TOO_LARGE,               /* the answer is above the ceilings: not delivered */
    BR_ZK_NOMEM,                   /* the answer could not be copied */
    BR_ZK_ERROR,                   /* anything else ZooKeeper answered (see zrc) */
};

/* Turns ZooKeeper's C client's own logging off, process-wide. Call it
 * before any session starts: the library formats endpoints for its log
 * lines in a static buffer that sessions on different threads would share,
 * and its level is a global it reads unlocked. zk.c logs what the owner
 * needs (session established, lost, expired). */
void br_zk_library_logging_off(void);

/* "NONODE", "BADVERSION", ...; never NULL. */
const char *br_zk_rc_name(int rc);

enum br_zk_op {
    BR_ZK_OP_CREATE = 1,
    BR_ZK_OP_GET,
    BR_ZK_OP_SET,
    BR_ZK_OP_DELETE,
    BR_ZK_OP_EXISTS,
    BR_ZK_OP_GET_CHILDREN,
};

enum br_zk_mode {
    BR_ZK_PERSISTENT = 0,
    BR_ZK_EPHEMERAL,
    BR_ZK_PERSISTENT_SEQUENTIAL, /* ZooKeeper appends a 10-digit counter */
    BR_ZK_EPHEMERAL_SEQUENTIAL,
};

/* A znode's stat, as ZooKeeper gives it. version is Kafka's "zkVersion",
 * what a conditional set or delete names. */
struct br_zk_stat {
    int64_t czxid;
    int64_t mzxid;
    int64_t ctime_ms;        /* creation, ZooKeeper's wall clock (ms since the epoch) */
    int64_t ephemeral_owner; /* the owning session's id; 0: persistent */
    int32_t version;         /* of the data */
    int32_t cversion;        /* of the children */
    int32_t data_length;
    int32_t num_children;
};

/* What ops->done gets; every pointer valid during the call only. */
struct br_zk_result {
    enum br_zk_op op;
    int rc;           /* enum br_zk_rc */
    int zrc;          /* ZooKeeper's code */
    const char *path; /* as the request named it */
    /* GET: the data (a NUL follows it), data_null for a znode created
     * without data (Kafka's null). */
    const char *data;
    size_t data_len;
    bool data_null;
    /* GET, SET, EXISTS (when the znode exists), GET_CHILDREN */
    bool has_stat;
    struct br_zk_stat stat;
    /* GET_CHILDREN: the children's names (not paths), in ZooKeeper's order */
    const char *const *children;
    size_t n_children;
    /* CREATE: the path the znode got (a sequential one's with its counter) */
    const char *created_path;
};

/* The owner: a const table, called on the reactor thread with the context
 * given to br_zk_open. An op may make requests, call br_zk_reopen, or
 * br_zk_close at stop. */
struct br_zk_ops {
    void (*session)(void *ctx, struct br_zk *zk, enum br_zk_event ev);
    void (*watch)(void *ctx, struct br_zk *zk, enum br_zk_watch kind, const char *path);
    void (*done)(void *ctx, struct br_zk *zk, uint64_t tag, const struct br_zk_result *r);
};

struct br_zk_config {
    const char *connect;        /* zookeeper.connect: host:port[,host:port...][/chroot] */
    int32_t session_timeout_ms; /* zookeeper.session.timeout.ms (Kafka's default 6000) */
};

/*
 * Checks cfg and starts the first session (OPENING; the outcome comes as
 * an event). mb is the reactor's mailbox, ops and ctx the owner's; all
 * outlive the br_zk. Returns 0, KP_E_INVALID_ARG (a connect string that is
 * not host:port[,host:port...][/chroot] with a valid chroot path, a timeout
 * below 1 ms) or KP_E_NOMEM (also: no thread could be started), with a
 * sentence in err. *out is the caller's (br_zk_close).
 */
KP_MUST_CHECK int br_zk_open(const struct br_zk_config *cfg, struct br_mailbox *mb,
                             const struct br_zk_ops *ops, void *ctx, struct br_zk **out, char *err,
                             size_t errlen);

/*
 * Ends the current session and starts a new one (OPENING), for an owner
 * told EXPIRED. Allowed in any state but CLOSED: a session that still lives
 * is closed by the helper thread (its ephemeral znodes go when the server
 * learns of it, which may be after the new session's requests: an owner
 * that re-creates them expects NODEEXISTS and checks the owner, as Kafka's
 * checkedEphemeralCreate does). Returns 0, KP_E_INVALID_ARG (closed, or a
 * reopen already under way: OPENING) or KP_E_NOMEM (nothing changed).
 */
KP_MUST_CHECK int br_zk_reopen(struct br_zk *zk);

/*
 * At stop only: ends the session, waiting for the helper thread and for
 * zookeeper_close (which tells the server, waiting up to about 4.5 s), and
 * frees what it can. No op is called afterwards. Messages already in the
 * mailbox stay valid: delivered later, they free themselves, and the last
 * one frees the br_zk; the mailbox's owner must still deliver (or take and
 * deliver) what it holds before it frees the mailbox. NULL is a no-op.
 */
void br_zk_close(struct br_zk *zk);

enum br_zk_state br_zk_state(const struct br_zk *zk);

/* The current session's id and password, once it was CONNECTED (for logs,
 * for an ephemeral znode's owner, and for tests). Returns 0, or
 * KP_E_INVALID_ARG when no session is established. */
KP_MUST_CHECK int br_zk_session(const struct br_zk *zk, int64_t *id, uint8_t passwd[16]);

/* The chroot ("" for none), and the hosts part of the connect string. */
const char *br_zk_chroot(const struct br_zk *zk);
const char *br_zk_hosts(const struct br_zk *zk);

/* Creates path with data[0..len) (data NULL: a znode without data). */
KP_MUST_CHECK int br_zk_create(struct br_zk *zk, const char *path, const void *data, size_t len,
                               enum br_zk_mode mode, uint64_t tag);
/* Reads the data and the stat; watch: also its changes and deletion. */
KP_MUST_CHECK int br_zk_get(struct br_zk *zk, const char *path, bool watch, uint64_t tag);
/* Sets the data if the data version is `version` (-1: whatever it is). */
KP_MUST_CHECK int br_zk_set(struct br_zk *zk, const char *path, const void *data, size_t len,
                            int32_t version, uint64_t tag);
/* Deletes the znode if its version is `version` (-1: whatever it is). */
KP_MUST_CHECK int br_zk_delete(struct br_zk *zk, const char *path, int32_t version, uint64_t tag);
/* Whether it exists (BR_ZK_OK with its stat, or BR_ZK_NONODE); watch: also
 * its creation, changes and deletion. */
KP_MUST_CHECK int br_zk_exists(struct br_zk *zk, const char *path, bool watch, uint64_t tag);
/* The names of its children and its stat; watch: also a change of them. */
KP_MUST_CHECK int br_zk_get_children(struct br_zk *zk, const char *path, bool watch, uint64_t tag);

#endif
