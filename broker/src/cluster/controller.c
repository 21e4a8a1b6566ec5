/* samsa-broker: the controller (see controller.h). */
#define _GNU_SOURCE

#include "cluster/controller_internal.h"

#include "base/clock.h"
#include "base/logging.h"
#include "base/worker.h"
#include "cluster/metadata.h"
#include "cluster/zk_json.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>

#include <zookeeper/zookeeper.h>

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The largest response a broker sends the controller, and the largest
 * znode data read. */
#define MAX_RESPONSE ((int32_t)16 * 1024 * 1024)
#define MAX_ZNODE ((int32_t)4 * 1024 * 1024)
/* How long a sender waits between two attempts at a request (Kafka's
 * RequestSendThread backs off 100 ms). */
#define SEND_BACKOFF_MS 100
/* The wait before standing for election again after a failed attempt. */
#define RETRY_MS 1000

/* ---------------------------------------------------------------- senders */

struct send_req {
    struct send_req *next;
    int16_t api_key;
    int16_t api_version;
    uint8_t *frame; /* owned: size, header, body */
    size_t len;
    uint64_t gen; /* a deletion's StopReplica: its answer is posted back (0: none) */
};

struct sender {
    struct br_controller *ctl;
    int32_t broker;
    char host[BR_ZK_HOST_MAX + 1];
    int32_t port;
    int32_t timeout_ms;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct send_req *head, *tail; /* guarded by mu */
    bool stop;                    /* guarded by mu */
    int fd;
    int32_t correlation;
};


static void post_event(struct br_controller *c, const struct event *what)
{
    struct event *e = kp_calloc(1, sizeof *e);
    (void)pthread_mutex_lock(&c->mu);
    if (e == NULL) {
        /* out of memory: the next event rebuilds everything anyway */
        (void)pthread_mutex_unlock(&c->mu);
        br_error("controller: out of memory queueing an event");
        return;
    }
    *e = *what;
    e->next = NULL;
    if (c->tail != NULL) {
        c->tail->next = e;
    } else {
        c->head = e;
    }
    c->tail = e;
    (void)pthread_cond_broadcast(&c->cv);
    (void)pthread_mutex_unlock(&c->mu);
}

static void post(struct br_controller *c, enum ev_kind kind)
{
    struct event e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    post_event(c, &e);
}

/* ZooKeeper's watcher, on the client library's thread: only queues. */
static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    struct br_controller *c = ctx;
    if (type == ZOO_SESSION_EVENT) {
        (void)pthread_mutex_lock(&c->mu);
        if (state == ZOO_CONNECTED_STATE) {
            c->connected = true;
        } else if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
            c->connected = false;
            c->expired = true;
        } else {
            c->connected = false;
        }
        (void)pthread_cond_broadcast(&c->cv);
        (void)pthread_mutex_unlock(&c->mu);
        if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
            post(c, EV_EXPIRED);
        }
        return;
    }
    if (path == NULL) {
        return;
    }
    if (strcmp(path, "/controller") == 0) {
        post(c, EV_CONTROLLER);
    } else if (strcmp(path, "/brokers/ids") == 0) {
        post(c, EV_BROKERS);
    } else if (strncmp(path, "/brokers/topics", 15) == 0) {
        post(c, EV_TOPICS);
    } else if (strcmp(path, "/isr_change_notification") == 0) {
        post(c, EV_ISR_CHANGE);
    } else if (strcmp(path, "/admin/delete_topics") == 0) {
        post(c, EV_DELETE_TOPICS);
    }
}

/* Waits until the session is connected; false when it expired or the
 * controller stops. */
static bool wait_connected(struct br_controller *c)
{
    (void)pthread_mutex_lock(&c->mu);
    while (!c->connected && !c->expired && !c->stop) {
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        (void)pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    bool ok = c->connected && !c->stop;
    (void)pthread_mutex_unlock(&c->mu);
    return ok;
}

static bool stopping(struct br_controller *c)
{
    (void)pthread_mutex_lock(&c->mu);
    bool s = c->stop;
    (void)pthread_mutex_unlock(&c->mu);
    return s;
}

/* Sleeps ms unless the controller stops first. */
static void nap(struct br_controller *c, int64_t ms)
{
    (void)pthread_mutex_lock(&c->mu);
    if (!c->stop) {
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(ms / 1000);
        ts.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        (void)pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    (void)pthread_mutex_unlock(&c->mu);
}

static int open_session(struct br_controller *c)
{
    (void)pthread_mutex_lock(&c->mu);
    c->connected = false;
    c->expired = false;
    (void)pthread_mutex_unlock(&c->mu);
    c->zh = zookeeper_init(c->cfg.zk_connect, watcher, c->cfg.session_timeout_ms, NULL, c, 0);
    if (c->zh == NULL) {
        br_error("controller: cannot start a ZooKeeper session to %s: %s", c->cfg.zk_connect,
                 strerror(errno));
        return -1;
    }
    return 0;
}

static void close_session(struct br_controller *c)
{
    if (c->zh != NULL) {
        (void)zookeeper_close(c->zh);
        c->zh = NULL;
    }
}

/* ---------------------------------------------------------------- ZooKeeper calls */

/* Reads path (watching it when watch); *data (kp_malloc'ed, NUL after it,
 * NULL for a znode without data) and *stat. Returns ZooKeeper's code. */
static int zget(struct br_controller *c, const char *path, bool watch, char **data, int *len,
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

static int zcreate(struct br_controller *c, const char *path, const char *data, size_t len,
                   int flags)
{
    return zoo_create(c->zh, path, data, data == NULL ? -1 : (int)len, &ZOO_OPEN_ACL_UNSAFE, flags,
                      NULL, 0);
}

/* ---------------------------------------------------------------- senders */

static void sender_close(struct sender *s)
{
    if (s->fd >= 0) {
        (void)close(s->fd);
        s->fd = -1;
    }
}

static bool sender_stopping(struct sender *s)
{
    (void)pthread_mutex_lock(&s->mu);
    bool st = s->stop;
    (void)pthread_mutex_unlock(&s->mu);
    return st;
}

/* Waits for the descriptor to be ready for events within the timeout. */
static bool wait_fd(struct sender *s, short events)
{
    int64_t deadline = br_now_mono_ms() + s->timeout_ms;
    for (;;) {
        if (sender_stopping(s)) {
            return false;
        }
        int64_t left = deadline - br_now_mono_ms();
        if (left <= 0) {
            return false;
        }
        struct pollfd p = {s->fd, events, 0};
        int n = poll(&p, 1, left > 200 ? 200 : (int)left);
        if (n > 0) {
            return (p.revents & (events | POLLERR | POLLHUP)) != 0;
        }
        if (n < 0 && errno != EINTR) {
            return false;
        }
    }
}

static int sender_connect(struct sender *s)
{
    char port[16];
    (void)snprintf(port, sizeof port, "%" PRId32, s->port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo *ai = NULL;
    if (getaddrinfo(s->host, port, &hints, &ai) != 0 || ai == NULL) {
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        freeaddrinfo(ai);
        return -1;
    }
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    s->fd = fd;
    if (rc != 0 && errno != EINPROGRESS) {
        sender_close(s);
        return -1;
    }
    if (!wait_fd(s, POLLOUT)) {
        sender_close(s);
        return -1;
    }
    int err = 0;
    socklen_t elen = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0) {
        sender_close(s);
        return -1;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return 0;
}

static int write_all(struct sender *s, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(s->fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (!wait_fd(s, POLLOUT)) {
                return -1;
            }
            continue;
        }
        return -1;
    }
    return 0;
}

static int read_all(struct sender *s, uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = recv(s->fd, p, len, 0);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (!wait_fd(s, POLLIN)) {
                return -1;
            }
            continue;
        }
        return -1;
    }
    return 0;
}

/* Logs what the broker answered; false when it refused the request or
 * any of its partitions. */
static bool log_answer(const struct sender *s, const struct send_req *r, const uint8_t *payload,
                       size_t len)
{
    bool ok = true;
    struct kp_arena arena;
    kp_arena_init(&arena, (size_t)MAX_RESPONSE);
    struct kp_response_header h;
    void *body = NULL;
    int rc = kp_response_decode(payload, len, r->api_key, r->api_version, &arena, &h, &body);
    if (rc != 0) {
        br_warn("controller: broker %" PRId32 " answered api %d with bytes that do not decode: %s",
                s->broker, r->api_key, kp_err_str(rc));
        ok = false;
    } else if (r->api_key == KP_API_STOP_REPLICA) {
        const struct kp_StopReplicaResponse *res = body;
        ok = res->ErrorCode == 0;
        if (!ok) {
            br_warn("controller: broker %" PRId32 " refused StopReplica: %s", s->broker,
                    kp_err_name(res->ErrorCode));
        }
        for (int32_t i = 0; i < res->PartitionErrors.count; i++) {
            const struct kp_StopReplicaResponse_StopReplicaPartitionError *e =
                &res->PartitionErrors.items[i];
            if (e->ErrorCode != 0) {
                ok = false;
                br_warn("controller: broker %" PRId32 ": StopReplica for %.*s-%" PRId32 ": %s",
                        s->broker, (int)e->TopicName.len, e->TopicName.ptr, e->PartitionIndex,
                        kp_err_name(e->ErrorCode));
            }
        }
    } else if (r->api_key == KP_API_LEADER_AND_ISR) {
        const struct kp_LeaderAndIsrResponse *res = body;
        if (res->ErrorCode != 0) {
            br_warn("controller: broker %" PRId32 " refused LeaderAndIsr: %s", s->broker,
                    kp_err_name(res->ErrorCode));
        }
        int32_t current = 0;
        for (int32_t i = 0; i < res->PartitionErrors.count; i++) {
            const struct kp_LeaderAndIsrResponse_LeaderAndIsrPartitionError *e =
                &res->PartitionErrors.items[i];
            if (e->ErrorCode == KP_ERR_STALE_CONTROLLER_EPOCH) {
                /* the broker has this leader epoch already (Kafka 2.0's
                 * ReplicaManager answers so when the epoch is not newer):
                 * what a new controller's resend of every state meets */
                current++;
            } else if (e->ErrorCode != 0) {
                br_warn("controller: broker %" PRId32 ": LeaderAndIsr for %.*s-%" PRId32 ": %s",
                        s->broker, (int)e->TopicName.len, e->TopicName.ptr, e->PartitionIndex,
                        kp_err_name(e->ErrorCode));
            }
        }
        if (current > 0) {
            br_debug("controller: broker %" PRId32 " had the leader epochs of %" PRId32
                     " partition(s) of that LeaderAndIsr already",
                     s->broker, current);
        }
    } else if (r->api_key == KP_API_UPDATE_METADATA) {
        const struct kp_UpdateMetadataResponse *res = body;
        if (res->ErrorCode != 0) {
            br_warn("controller: broker %" PRId32 " refused UpdateMetadata: %s", s->broker,
                    kp_err_name(res->ErrorCode));
        }
    }
    kp_arena_free(&arena);
    return ok;
}

/* One exchange: 0 when answered, -1 when the connection failed. *ok:
 * whether the answer said every part was done. */
static int exchange(struct sender *s, struct send_req *r, bool *ok)
{
    if (s->fd < 0 && sender_connect(s) != 0) {
        return -1;
    }
    int32_t corr = ++s->correlation;
    r->frame[8] = (uint8_t)((uint32_t)corr >> 24);
    r->frame[9] = (uint8_t)((uint32_t)corr >> 16);
    r->frame[10] = (uint8_t)((uint32_t)corr >> 8);
    r->frame[11] = (uint8_t)corr;
    uint8_t hdr[4];
    if (write_all(s, r->frame, r->len) != 0 || read_all(s, hdr, sizeof hdr) != 0) {
        sender_close(s);
        return -1;
    }
    int32_t size = 0;
    if (kp_frame_size(hdr, sizeof hdr, MAX_RESPONSE, &size) != 0 || size < 4) {
        sender_close(s);
        return -1;
    }
    uint8_t *payload = kp_malloc((size_t)size);
    if (payload == NULL || read_all(s, payload, (size_t)size) != 0) {
        kp_free(payload);
        sender_close(s);
        return -1;
    }
    int32_t got = (int32_t)(((uint32_t)payload[0] << 24) | ((uint32_t)payload[1] << 16) |
                            ((uint32_t)payload[2] << 8) | (uint32_t)payload[3]);
    if (got != corr) {
        kp_free(payload);
        sender_close(s);
        return -1;
    }
    *ok = log_answer(s, r, payload, (size_t)size);
    kp_free(payload);
    return 0;
}

static void *sender_main(void *arg)
{
    struct sender *s = arg;
    br_thread_name("ctrl-send");
    for (;;) {
        (void)pthread_mutex_lock(&s->mu);
        while (!s->stop && s->head == NULL) {
            (void)pthread_cond_wait(&s->cv, &s->mu);
        }
        if (s->stop) {
            (void)pthread_mutex_unlock(&s->mu);
            break;
        }
        struct send_req *r = s->head;
        (void)pthread_mutex_unlock(&s->mu);
        /* Kafka's RequestSendThread: the same request until it is answered
         * or the broker leaves the channel */
        bool ok = false;
        bool answered = false;
        while (!(answered = exchange(s, r, &ok) == 0)) {
            if (sender_stopping(s)) {
                break;
            }
            struct timespec ts = {0, SEND_BACKOFF_MS * 1000000L};
            (void)nanosleep(&ts, NULL);
        }
        if (answered && r->gen != 0) {
            /* a deletion's StopReplica: the controller's thread hears of it */
            struct event e;
            memset(&e, 0, sizeof e);
            e.kind = EV_STOP_REPLICA_DONE;
            e.broker = s->broker;
            e.gen = r->gen;
            e.ok = ok;
            post_event(s->ctl, &e);
        }
        (void)pthread_mutex_lock(&s->mu);
        if (s->head == r) {
            s->head = r->next;
            if (s->head == NULL) {
                s->tail = NULL;
            }
        }
        (void)pthread_mutex_unlock(&s->mu);
        kp_free(r->frame);
        kp_free(r);
    }
    sender_close(s);
    return NULL;
}

static struct sender *sender_start(struct br_controller *c, const struct ctl_broker *b,
                                   int32_t timeout_ms)
{
    struct sender *s = kp_calloc(1, sizeof *s);
    if (s == NULL) {
        return NULL;
    }
    s->ctl = c;
    s->broker = b->id;
    (void)snprintf(s->host, sizeof s->host, "%s", b->host[0] != '\0' ? b->host : "127.0.0.1");
    s->port = b->port;
    s->timeout_ms = timeout_ms;
    s->fd = -1;
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        kp_free(s);
        return NULL;
    }
    if (pthread_cond_init(&s->cv, NULL) != 0) {
        (void)pthread_mutex_destroy(&s->mu);
        kp_free(s);
        return NULL;
    }
    if (pthread_create(&s->thread, NULL, sender_main, s) != 0) {
        (void)pthread_cond_destroy(&s->cv);
        (void)pthread_mutex_destroy(&s->mu);
        kp_free(s);
        return NULL;
    }
    return s;
}

static void sender_stop(struct sender *s)
{
    if (s == NULL) {
        return;
    }
    (void)pthread_mutex_lock(&s->mu);
    s->stop = true;
    (void)pthread_cond_broadcast(&s->cv);
    (void)pthread_mutex_unlock(&s->mu);
    (void)pthread_join(s->thread, NULL);
    while (s->head != NULL) {
        struct send_req *r = s->head;
        s->head = r->next;
        kp_free(r->frame);
        kp_free(r);
    }
    (void)pthread_cond_destroy(&s->cv);
    (void)pthread_mutex_destroy(&s->mu);
    kp_free(s);
}

/* Encodes body as a request frame and queues it to the sender; gen: a
 * deletion's tag, its answer posted back (0: none). */
void ctl_send_request_tagged(struct br_controller *c, struct sender *s, int16_t api_key,
                                int16_t api_version, const void *body, uint64_t gen)
{
    if (s == NULL) {
        return;
    }
    char client_id[64];
    (void)snprintf(client_id, sizeof client_id, "samsa-controller-%" PRId32, c->cfg.broker_id);
    struct kp_request_header h = {api_key, api_version, 0, kp_str_c(client_id)};
    struct kp_writer w;
    kp_wr_init(&w, (size_t)256 * 1024 * 1024);
    struct send_req *r = kp_calloc(1, sizeof *r);
    if (r == NULL || kp_request_encode(&w, &h, body) != 0 || w.len < 12) {
        br_error("controller: cannot encode a request (api %d) for broker %" PRId32, api_key,
                 s->broker);
        kp_wr_free(&w);
        kp_free(r);
        return;
    }
    r->api_key = api_key;
    r->api_version = api_version;
    r->gen = gen;
    r->frame = kp_wr_steal(&w, &r->len);
    (void)pthread_mutex_lock(&s->mu);
    if (s->tail != NULL) {
        s->tail->next = r;
    } else {
        s->head = r;
    }
    s->tail = r;
    (void)pthread_cond_broadcast(&s->cv);
    (void)pthread_mutex_unlock(&s->mu);
}

static void send_request(struct br_controller *c, struct sender *s, int16_t api_key,
                         int16_t api_version, const void *body)
{
    ctl_send_request_tagged(c, s, api_key, api_version, body, 0);
}

/* ---------------------------------------------------------------- the model's helpers */

struct ctl_broker *ctl_find_broker(struct br_controller *c, int32_t id)
{
    for (size_t i = 0; i < c->nbrokers; i++) {
        if (c->brokers[i].id == id) {
            return &c->brokers[i];
        }
    }
    return NULL;
}

static bool is_live(struct br_controller *c, int32_t id)
{
    return ctl_find_broker(c, id) != NULL;
}

static bool is_shutting(const struct br_controller *c, int32_t id)
{
    for (size_t i = 0; i < c->nshutting; i++) {
        if (c->shutting[i] == id) {
            return true;
        }
    }
    return false;
}

static void forget_shutting(struct br_controller *c, int32_t id)
{
    for (size_t i = 0; i < c->nshutting; i++) {
        if (c->shutting[i] == id) {
            c->shutting[i] = c->shutting[--c->nshutting];
            return;
        }
    }
}

bool ctl_contains(const int32_t *a, int32_t n, int32_t x)
{
    for (int32_t i = 0; i < n; i++) {
        if (a[i] == x) {
            return true;
        }
    }
    return false;
}

static void partition_clear(struct ctl_partition *p)
{
    kp_free(p->replicas);
    kp_free(p->isr);
    memset(p, 0, sizeof *p);
}

void ctl_topic_clear(struct ctl_topic *t)
{
    for (int32_t i = 0; i < t->npartitions && t->parts != NULL; i++) {
        partition_clear(&t->parts[i]);
    }
    kp_free(t->parts);
    memset(t, 0, sizeof *t);
}

static void clear_model(struct br_controller *c)
{
    for (size_t i = 0; i < c->nbrokers; i++) {
        sender_stop(c->brokers[i].sender);
    }
    kp_free(c->brokers);
    c->brokers = NULL;
    c->nbrokers = 0;
    for (size_t i = 0; i < c->ntopics; i++) {
        ctl_topic_clear(&c->topics[i]);
    }
    kp_free(c->topics);
    c->topics = NULL;
    c->ntopics = 0;
    for (size_t i = 0; i < c->nlai; i++) {
        kp_free(c->lai[i].e);
    }
    kp_free(c->lai);
    c->lai = NULL;
    c->nlai = 0;
    for (size_t i = 0; i < c->ndeletions; i++) {
        kp_free(c->deletions[i].brokers);
        kp_free(c->deletions[i].state);
    }
    kp_free(c->deletions);
    c->deletions = NULL;
    kp_free(c->shutting);
    c->shutting = NULL;
    c->nshutting = 0;
    c->ndeletions = 0;
}

/* The deletion of the topic named so, or NULL. */
struct deletion *ctl_find_deletion(struct br_controller *c, const char *name)
{
    for (size_t i = 0; i < c->ndeletions; i++) {
        if (strcmp(c->deletions[i].name, name) == 0) {
            return &c->deletions[i];
        }
    }
    return NULL;
}

static bool is_deleting(struct br_controller *c, const char *name)
{
    return ctl_find_deletion(c, name) != NULL;
}

/* Queues a LeaderAndIsr of (topic, partition) for broker. */
static int lai_add(struct br_controller *c, int32_t broker, size_t topic, int32_t partition,
                   bool is_new)
{
    if (is_deleting(c, c->topics[topic].name)) {
        return 0; /* a topic being deleted gets no LeaderAndIsr */
    }
    struct lai_batch *b = NULL;
    for (size_t i = 0; i < c->nlai; i++) {
        if (c->lai[i].broker == broker) {
            b = &c->lai[i];
        }
    }
    if (b == NULL) {
        struct lai_batch *nb = kp_realloc(c->lai, (c->nlai + 1) * sizeof *nb);
        if (nb == NULL) {
            return -1;
        }
        c->lai = nb;
        b = &c->lai[c->nlai++];
        memset(b, 0, sizeof *b);
        b->broker = broker;
    }
    for (size_t i = 0; i < b->n; i++) {
        if (b->e[i].topic == topic && b->e[i].partition == partition) {
            /* once per request: its state is read when it is sent */
            b->e[i].is_new = b->e[i].is_new || is_new;
            return 0;
        }
    }
    if (b->n == b->cap) {
        size_t cap = b->cap == 0 ? 16 : b->cap * 2;
        struct lai_entry *ne = kp_realloc(b->e, cap * sizeof *ne);
        if (ne == NULL) {
            return -1;
        }
        b->e = ne;
        b->cap = cap;
    }
    b->e[b->n++] = (struct lai_entry){topic, partition, is_new};
    return 0;
}

/* LeaderAndIsr for a partition to each of its live replicas. */
static int lai_to_live_replicas(struct br_controller *c, size_t ti, int32_t p, bool is_new)
{
    const struct ctl_partition *part = &c->topics[ti].parts[p];
    for (int32_t i = 0; i < part->nreplicas; i++) {
        if (is_live(c, part->replicas[i]) && lai_add(c, part->replicas[i], ti, p, is_new) != 0) {
            return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- requests */

static void send_leader_and_isr(struct br_controller *c)
{
    for (size_t i = 0; i < c->nlai; i++) {
        struct lai_batch *b = &c->lai[i];
        struct ctl_broker *broker = ctl_find_broker(c, b->broker);
        if (broker == NULL || b->n == 0) {
            continue;
        }
        struct kp_LeaderAndIsrRequest req;
        memset(&req, 0, sizeof req);
        req.ControllerId = c->cfg.broker_id;
        req.ControllerEpoch = c->epoch;
        struct kp_LeaderAndIsrRequest_LeaderAndIsrPartitionState *ps = kp_calloc(b->n, sizeof *ps);
        /* the leaders' endpoints (unread by Kafka 2.0 brokers; sent as it sends them) */
        struct kp_LeaderAndIsrRequest_LeaderAndIsrLiveLeader *ll =
            kp_calloc(c->nbrokers > 0 ? c->nbrokers : 1, sizeof *ll);
        if (ps == NULL || ll == NULL) {
            kp_free(ps);
            kp_free(ll);
            br_error("controller: out of memory building LeaderAndIsr");
            continue;
        }
        int32_t nll = 0;
        for (size_t k = 0; k < b->n; k++) {
            const struct ctl_topic *t = &c->topics[b->e[k].topic];
            const struct ctl_partition *part = &t->parts[b->e[k].partition];
            ps[k].TopicName = kp_str_c(t->name);
            ps[k].PartitionIndex = b->e[k].partition;
            ps[k].ControllerEpoch = part->controller_epoch;
            ps[k].Leader = part->leader;
            ps[k].LeaderEpoch = part->leader_epoch;
            ps[k].Isr.items = part->isr;
            ps[k].Isr.count = part->nisr;
            ps[k].ZkVersion = part->zk_version;
            ps[k].Replicas.items = part->replicas;
            ps[k].Replicas.count = part->nreplicas;
            ps[k].IsNew = b->e[k].is_new;
            const struct ctl_broker *leader = ctl_find_broker(c, part->leader);
            bool listed = false;
            for (int32_t x = 0; x < nll; x++) {
                listed = listed || ll[x].BrokerId == part->leader;
            }
            if (leader != NULL && !listed && (size_t)nll < c->nbrokers) {
                ll[nll].BrokerId = leader->id;
                ll[nll].HostName = kp_str_c(leader->host);
                ll[nll].Port = leader->port;
                nll++;
            }
        }
        req.UngroupedPartitionStates.items = ps;
        req.UngroupedPartitionStates.count = (int32_t)b->n;
        req.LiveLeaders.items = ll;
        req.LiveLeaders.count = nll;
        send_request(c, broker->sender, KP_API_LEADER_AND_ISR, 1, &req);
        kp_free(ps);
        kp_free(ll);
        b->n = 0;
    }
}

/* UpdateMetadata v4 with every partition that has a state, to every live
 * broker. */
void ctl_send_update_metadata(struct br_controller *c)
{
    size_t nparts = 0;
    for (size_t i = 0; i < c->ntopics; i++) {
        for (int32_t p = 0; p < c->topics[i].npartitions; p++) {
            nparts += c->topics[i].parts[p].has_state ? 1 : 0;
        }
    }
    struct kp_UpdateMetadataRequest req;
    memset(&req, 0, sizeof req);
    req.ControllerId = c->cfg.broker_id;
    req.ControllerEpoch = c->epoch;
    struct kp_UpdateMetadataRequest_UpdateMetadataPartitionState *ps =
        kp_calloc(nparts > 0 ? nparts : 1, sizeof *ps);
    int32_t *offline = NULL;
    size_t noffline = 0;
    for (size_t i = 0; i < c->ntopics; i++) {
        for (int32_t p = 0; p < c->topics[i].npartitions; p++) {
            noffline += (size_t)c->topics[i].parts[p].nreplicas;
        }
    }
    offline = kp_calloc(noffline > 0 ? noffline : 1, sizeof *offline);
    struct kp_UpdateMetadataRequest_UpdateMetadataBroker *lb =
        kp_calloc(c->nbrokers > 0 ? c->nbrokers : 1, sizeof *lb);
    struct kp_UpdateMetadataRequest_UpdateMetadataEndpoint *ep =
        kp_calloc(c->nbrokers > 0 ? c->nbrokers : 1, sizeof *ep);
    if (ps == NULL || offline == NULL || lb == NULL || ep == NULL) {
        br_error("controller: out of memory building UpdateMetadata");
        goto out;
    }
    size_t k = 0;
    size_t o = 0;
    for (size_t i = 0; i < c->ntopics; i++) {
        const struct ctl_topic *t = &c->topics[i];
        for (int32_t p = 0; p < t->npartitions; p++) {
            const struct ctl_partition *part = &t->parts[p];
            if (!part->has_state) {
                continue;
            }
            ps[k].TopicName = kp_str_c(t->name);
            ps[k].PartitionIndex = p;
            ps[k].ControllerEpoch = part->controller_epoch;
            /* a topic being deleted: LeaderDuringDelete, the brokers drop
             * it from their metadata (Kafka's ControllerChannelManager) */
            ps[k].Leader = is_deleting(c, t->name) ? -2 : part->leader;
            ps[k].LeaderEpoch = part->leader_epoch;
            ps[k].Isr.items = part->isr;
            ps[k].Isr.count = part->nisr;
            ps[k].ZkVersion = part->zk_version;
            ps[k].Replicas.items = part->replicas;
            ps[k].Replicas.count = part->nreplicas;
            ps[k].OfflineReplicas.items = &offline[o];
            int32_t n = 0;
            for (int32_t r = 0; r < part->nreplicas; r++) {
                if (!is_live(c, part->replicas[r])) {
                    offline[o + (size_t)n++] = part->replicas[r];
                }
            }
            ps[k].OfflineReplicas.count = n;
            o += (size_t)n;
            k++;
        }
    }
    for (size_t i = 0; i < c->nbrokers; i++) {
        const struct ctl_broker *b = &c->brokers[i];
        ep[i].Port = b->port;
        ep[i].Host = kp_str_c(b->host);
        ep[i].Listener = kp_str_c(b->listener);
        ep[i].SecurityProtocol = b->security_protocol;
        lb[i].Id = b->id;
        lb[i].Endpoints.items = &ep[i];
        lb[i].Endpoints.count = 1;
        lb[i].Rack = b->has_rack ? kp_str_c(b->rack) : (struct kp_str){NULL, -1};
    }
    req.UngroupedPartitionStates.items = ps;
    req.UngroupedPartitionStates.count = (int32_t)k;
    req.LiveBrokers.items = lb;
    req.LiveBrokers.count = (int32_t)c->nbrokers;
    for (size_t i = 0; i < c->nbrokers; i++) {
        send_request(c, c->brokers[i].sender, KP_API_UPDATE_METADATA, 4, &req);
    }
out:
    kp_free(ps);
    kp_free(offline);
    kp_free(lb);
    kp_free(ep);
}

/* ---------------------------------------------------------------- reading ZooKeeper */

static int cmp_broker(const void *a, const void *b)
{
    const struct ctl_broker *x = a;
    const struct ctl_broker *y = b;
    return x->id < y->id ? -1 : (x->id > y->id ? 1 : 0);
}

static int cmp_topic(const void *a, const void *b)
{
    return strcmp(((const struct ctl_topic *)a)->name, ((const struct ctl_topic *)b)->name);
}

/* Parses a broker id znode name ("3"); -1 when it is not one. */
int32_t ctl_parse_id(const char *s)
{
    if (s[0] == '\0' || strlen(s) > 10) {
        return -1;
    }
    int64_t v = 0;
    for (const char *p = s; *p != '\0'; p++) {
        if (*p < '0' || *p > '9') {
            return -1;
        }
        v = v * 10 + (*p - '0');
    }
    return v > INT32_MAX ? -1 : (int32_t)v;
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
    int rc = zget(c, path, false, &data, &len, &st);
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
    b->has_rack = reg.has_rack;
    (void)snprintf(b->rack, sizeof b->rack, "%s", reg.rack);
    br_zk_broker_clear(&reg);
    return 0;
}

/* The live brokers, watching /brokers/ids. *out sorted by id. */
static int read_brokers(struct br_controller *c, struct ctl_broker **out, size_t *n)
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
static int read_state(struct br_controller *c, const char *topic, int32_t p,
                      struct ctl_partition *part)
{
    char path[BR_TOPIC_NAME_MAX + 64];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%" PRId32 "/state", topic, p);
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = zget(c, path, false, &data, &len, &st);
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
    if (zget(c, path, false, &data, &len, &st) != ZOK || data == NULL) {
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
static int read_topic(struct br_controller *c, const char *name, struct ctl_topic *t)
{
    char path[BR_TOPIC_NAME_MAX + 32];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s", name);
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = zget(c, path, true, &data, &len, &st);
    if (rc == ZNONODE) {
        return 1;
    }
    if (rc != ZOK) {
        return -1;
    }
    struct br_zk_topic_assignment a;
    memset(&a, 0, sizeof a);
    char err[256] = "the znode holds no data";
    int drc = data == NULL
                  ? KP_E_CORRUPT
                  : br_zk_topic_assignment_decode(data, (size_t)len, path, &a, err, sizeof err);
    kp_free(data);
    if (drc != 0) {
        br_warn("controller: ignoring topic %s: %s", name, err);
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
        res = read_state(c, name, p, part);
    }
    br_zk_topic_assignment_clear(&a);
    if (res == 0) {
        t->unclean = read_unclean(c, name);
    } else {
        ctl_topic_clear(t);
    }
    return res;
}

/* ---------------------------------------------------------------- leadership */

/* Writes a partition's new state conditionally on its version; 0 when
 * written (part updated), 1 when the version moved (re-read: part holds
 * ZooKeeper's state now), -1 on a failure. */
static int write_state(struct br_controller *c, const struct ctl_topic *t, int32_t p,
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
            return read_state(c, t->name, p, part) == 0 ? 1 : -1;
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

/* A partition without a state: leader the first live assigned replica, ISR
 * the live assigned replicas, epoch 0 (Kafka's NewPartition -> Online). */
static int init_partition(struct br_controller *c, size_t ti, int32_t p)
{
    const struct ctl_topic *t = &c->topics[ti];
    struct ctl_partition *part = &t->parts[p];
    int32_t *isr = kp_calloc((size_t)part->nreplicas, sizeof *isr);
    if (isr == NULL) {
        return -1;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < part->nreplicas; i++) {
        if (is_live(c, part->replicas[i])) {
            isr[n++] = part->replicas[i];
        }
    }
    if (n == 0) {
        br_warn("controller: %s-%" PRId32 " has no live replica: it stays without a leader",
                t->name, p);
        kp_free(isr);
        return 0;
    }
    struct br_zk_partition_state s = {isr[0], 0, c->epoch, isr, (size_t)n};
    char *json = NULL;
    size_t len = 0;
    if (br_zk_partition_state_encode(&s, &json, &len) != 0) {
        kp_free(isr);
        return -1;
    }
    char path[BR_TOPIC_NAME_MAX + 64];
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions", t->name);
    int rc = zcreate(c, path, NULL, 0, 0);
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%" PRId32, t->name, p);
    if (rc == ZOK || rc == ZNODEEXISTS) {
        rc = zcreate(c, path, NULL, 0, 0);
    }
    (void)snprintf(path, sizeof path, "/brokers/topics/%s/partitions/%" PRId32 "/state", t->name,
                   p);
    if (rc == ZOK || rc == ZNODEEXISTS) {
        rc = zcreate(c, path, json, len, 0);
    }
    kp_free(json);
    if (rc == ZNODEEXISTS) {
        kp_free(isr); /* made meanwhile (by an older controller): take it */
        return read_state(c, t->name, p, part);
    }
    if (rc != ZOK) {
        br_error("controller: creating %s failed: %s", path, zerror(rc));
        kp_free(isr);
        return -1;
    }
    kp_free(part->isr);
    part->has_state = true;
    part->leader = isr[0];
    part->leader_epoch = 0;
    part->controller_epoch = c->epoch;
    part->zk_version = 0;
    part->isr = isr;
    part->nisr = n;
    br_info("controller: %s-%" PRId32 " online: leader %" PRId32 ", %" PRId32 " in sync", t->name,
            p, part->leader, n);
    return lai_to_live_replicas(c, ti, p, true);
}

/*
 * Brings a partition with a state in line with the live brokers (Kafka's
 * OfflinePartition election and OfflineReplica transition): dead members
 * leave the ISR, never emptying it; a dead or absent leader is replaced by
 * the first live ISR member in assignment order, or with unclean election
 * by the first live assigned replica; with neither the leader is -1 and the
 * last ISR member stays. Changes are written with the epoch bumped and
 * LeaderAndIsr queued to the live replicas. 0 or -1.
 */
static int reconcile_partition(struct br_controller *c, size_t ti, int32_t p)
{
    const struct ctl_topic *t = &c->topics[ti];
    struct ctl_partition *part = &t->parts[p];
    for (int attempt = 0; attempt < 5; attempt++) {
        if (!part->has_state) {
            return init_partition(c, ti, p);
        }
        if (part->controller_epoch > c->epoch) {
            br_warn("controller: %s-%" PRId32 " was decided by a newer controller (epoch %" PRId32
                    "): left alone",
                    t->name, p, part->controller_epoch);
            return -1;
        }
        int32_t live_isr[BR_META_MAX_REPLICATION_FACTOR];
        int32_t nlive = 0;
        for (int32_t i = 0; i < part->nisr && nlive < BR_META_MAX_REPLICATION_FACTOR; i++) {
            if (is_live(c, part->isr[i])) {
                live_isr[nlive++] = part->isr[i];
            }
        }
        int32_t leader = part->leader;
        const int32_t *isr = live_isr;
        int32_t nisr = nlive;
        bool unclean = false;
        if (!is_live(c, leader) || !ctl_contains(part->isr, part->nisr, leader)) {
            leader = -1;
            /* a broker shutting down leads only when no other can */
            for (int pass = 0; pass < 2 && leader < 0; pass++) {
                for (int32_t i = 0; i < part->nreplicas && leader < 0; i++) {
                    if (ctl_contains(live_isr, nlive, part->replicas[i]) &&
                        (pass == 1 || !is_shutting(c, part->replicas[i]))) {
                        leader = part->replicas[i];
                    }
                }
            }
            for (int32_t i = 0; i < part->nreplicas && leader < 0 && t->unclean; i++) {
                if (is_live(c, part->replicas[i])) {
                    leader = part->replicas[i];
                    unclean = true;
                }
            }
        }
        int32_t one[1];
        if (unclean) {
            one[0] = leader;
            isr = one;
            nisr = 1;
        } else if (nlive == 0) {
            /* the last ISR member stays, dead or not: never an empty ISR */
            isr = part->isr;
            nisr = part->nisr;
        }
        bool same_isr = nisr == part->nisr;
        for (int32_t i = 0; i < nisr && same_isr; i++) {
            same_isr = ctl_contains(part->isr, part->nisr, isr[i]);
        }
        if (leader == part->leader && same_isr) {
            return 0;
        }
        int rc = write_state(c, t, p, part, leader, isr, nisr);
        if (rc < 0) {
            return -1;
        }
        if (rc == 0) {
            if (leader < 0) {
                br_warn("controller: %s-%" PRId32 " has no live in-sync replica: no leader "
                        "(epoch %" PRId32 ")",
                        t->name, p, part->leader_epoch);
            } else {
                br_info("controller: %s-%" PRId32 ": leader %" PRId32 ", epoch %" PRId32
                        ", %" PRId32 " in sync%s",
                        t->name, p, leader, part->leader_epoch, nisr,
                        unclean ? " (unclean election: records may be lost)" : "");
            }
            return lai_to_live_replicas(c, ti, p, false);
        }
        /* the version moved: decide again on what ZooKeeper holds */
    }
    return -1;
}

static int reconcile_all(struct br_controller *c)
{
    for (size_t i = 0; i < c->ntopics; i++) {
        if (is_deleting(c, c->topics[i].name)) {
            continue; /* no leaders are elected for a topic being deleted */
        }
        for (int32_t p = 0; p < c->topics[i].npartitions; p++) {
            if (reconcile_partition(c, i, p) != 0) {
                return -1;
            }
        }
    }
    return 0;
}


/* ---------------------------------------------------------------- events */

static void resign(struct br_controller *c, const char *why)
{
    if (c->active) {
        br_info("controller: broker %" PRId32 " resigns as controller (%s)", c->cfg.broker_id, why);
    }
    c->active = false;
    atomic_store(&c->active_flag, false);
    clear_model(c);
}

/* Starts a sender for every broker that has none. */
static int start_senders(struct br_controller *c)
{
    for (size_t i = 0; i < c->nbrokers; i++) {
        if (c->brokers[i].sender == NULL) {
            c->brokers[i].sender = sender_start(c, &c->brokers[i], c->cfg.socket_timeout_ms);
            if (c->brokers[i].sender == NULL) {
                return -1;
            }
        }
    }
    return 0;
}

static int read_topics(struct br_controller *c)
{
    struct String_vector kids;
    memset(&kids, 0, sizeof kids);
    if (zoo_get_children(c->zh, "/brokers/topics", 1, &kids) != ZOK) {
        return -1;
    }
    for (size_t i = 0; i < c->ntopics; i++) {
        c->topics[i].seen = false;
    }
    int res = 0;
    for (int32_t i = 0; i < kids.count && res == 0; i++) {
        struct ctl_topic key;
        memset(&key, 0, sizeof key);
        (void)snprintf(key.name, sizeof key.name, "%s", kids.data[i]);
        struct ctl_topic *have =
            c->ntopics == 0 ? NULL : bsearch(&key, c->topics, c->ntopics, sizeof key, cmp_topic);
        struct ctl_topic t;
        int r = read_topic(c, kids.data[i], &t);
        if (r < 0) {
            res = -1;
            break;
        }
        if (r > 0) {
            if (have != NULL) {
                have->seen = true; /* unreadable now: keep what we knew */
            }
            continue;
        }
        if (have != NULL) {
            ctl_topic_clear(have);
            *have = t;
            have->seen = true;
            continue;
        }
        struct ctl_topic *nt = kp_realloc(c->topics, (c->ntopics + 1) * sizeof *nt);
        if (nt == NULL) {
            ctl_topic_clear(&t);
            res = -1;
            break;
        }
        c->topics = nt;
        c->topics[c->ntopics] = t;
        c->topics[c->ntopics].seen = true;
        c->ntopics++;
    }
    deallocate_String_vector(&kids);
    /* topics gone from ZooKeeper leave the model */
    size_t k = 0;
    for (size_t i = 0; i < c->ntopics; i++) {
        if (c->topics[i].seen || res != 0) {
            c->topics[k++] = c->topics[i];
        } else {
            ctl_topic_clear(&c->topics[i]);
        }
    }
    c->ntopics = k;
    if (c->ntopics > 1) {
        qsort(c->topics, c->ntopics, sizeof *c->topics, cmp_topic);
    }
    return res;
}

/* Re-reads the state of every partition a notification names (a leader
 * changed their ISR). 0, or -1 on a ZooKeeper failure. */
static int reread_notified(struct br_controller *c, const char *path)
{
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = zget(c, path, false, &data, &len, &st);
    if (rc == ZNONODE) {
        return 0;
    }
    if (rc != ZOK) {
        return -1;
    }
    struct br_zk_topic_partition *tps = NULL;
    size_t n = 0;
    char err[256] = "the znode holds no data";
    if (data == NULL ||
        br_zk_isr_change_decode(data, (size_t)len, path, &tps, &n, err, sizeof err) != 0) {
        br_warn("controller: ignoring %s: %s", path, err);
        kp_free(data);
        return 0;
    }
    kp_free(data);
    int res = 0;
    for (size_t i = 0; i < n && res == 0; i++) {
        struct ctl_topic key;
        memset(&key, 0, sizeof key);
        (void)snprintf(key.name, sizeof key.name, "%s", tps[i].topic);
        struct ctl_topic *t =
            c->ntopics == 0 ? NULL : bsearch(&key, c->topics, c->ntopics, sizeof key, cmp_topic);
        if (t != NULL && tps[i].partition < t->npartitions) {
            res = read_state(c, t->name, tps[i].partition, &t->parts[tps[i].partition]);
        }
    }
    kp_free(tps);
    return res;
}

/* Deletes the ISR change notifications; reread: first re-reads the states
 * of the partitions they name (Kafka's IsrChangeNotification event; at
 * failover every state is read anyway). */
static int clear_isr_notifications(struct br_controller *c, bool watch, bool reread)
{
    struct String_vector kids;
    memset(&kids, 0, sizeof kids);
    if (zoo_get_children(c->zh, "/isr_change_notification", watch ? 1 : 0, &kids) != ZOK) {
        return -1;
    }
    for (int32_t i = 0; i < kids.count; i++) {
        char path[512];
        (void)snprintf(path, sizeof path, "/isr_change_notification/%s", kids.data[i]);
        int rc =
            reread && reread_notified(c, path) != 0 ? ZSYSTEMERROR : zoo_delete(c->zh, path, -1);
        if (rc != ZOK && rc != ZNONODE) {
            deallocate_String_vector(&kids);
            return -1;
        }
    }
    deallocate_String_vector(&kids);
    return 0;
}

/* Kafka's onControllerFailover (§2.2). 0, or -1: resign and retry. */
static int failover(struct br_controller *c)
{
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = zget(c, "/controller_epoch", false, &data, &len, &st);
    if (rc == ZNONODE) {
        rc = zcreate(c, "/controller_epoch", "1", 1, 0);
        if (rc != ZOK) {
            br_error("controller: cannot create /controller_epoch: %s", zerror(rc));
            return -1;
        }
        c->epoch = 1;
        c->epoch_zk_version = 0;
    } else if (rc == ZOK) {
        int32_t epoch = 0;
        char err[256];
        if (data == NULL || br_zk_controller_epoch_decode(data, (size_t)len, "/controller_epoch",
                                                          &epoch, err, sizeof err) != 0) {
            br_error("controller: /controller_epoch is unreadable");
            kp_free(data);
            return -1;
        }
        kp_free(data);
        char *out = NULL;
        size_t olen = 0;
        if (br_zk_controller_epoch_encode(epoch + 1, &out, &olen) != 0) {
            return -1;
        }
        struct Stat nst;
        rc = zoo_set2(c->zh, "/controller_epoch", out, (int)olen, st.version, &nst);
        kp_free(out);
        if (rc != ZOK) {
            br_error("controller: /controller_epoch moved under us (%s): another controller",
                     zerror(rc));
            return -1;
        }
        c->epoch = epoch + 1;
        c->epoch_zk_version = nst.version;
    } else {
        return -1;
    }
    c->active = true;
    atomic_store(&c->epoch_flag, c->epoch);
    atomic_store(&c->active_flag, true);
    br_info("controller: broker %" PRId32 " is the controller, epoch %" PRId32, c->cfg.broker_id,
            c->epoch);
    if (clear_isr_notifications(c, true, false) != 0 ||
        read_brokers(c, &c->brokers, &c->nbrokers) != 0 || start_senders(c) != 0 ||
        read_topics(c) != 0) {
        return -1;
    }
    /* the topics being deleted, so that none of them is led again (their
     * deletion resumes below) */
    struct String_vector marked;
    memset(&marked, 0, sizeof marked);
    if (zoo_get_children(c->zh, "/admin/delete_topics", 0, &marked) != ZOK) {
        return -1;
    }
    for (int32_t i = 0; i < marked.count; i++) {
        if (c->cfg.delete_topic_enable && ctl_find_topic(c, marked.data[i]) != NULL &&
            strlen(marked.data[i]) <= BR_TOPIC_NAME_MAX) {
            struct deletion *nd = kp_realloc(c->deletions, (c->ndeletions + 1) * sizeof *nd);
            if (nd == NULL) {
                deallocate_String_vector(&marked);
                return -1;
            }
            c->deletions = nd;
            struct deletion *d = &c->deletions[c->ndeletions++];
            memset(d, 0, sizeof *d);
            (void)snprintf(d->name, sizeof d->name, "%s", marked.data[i]);
            d->gen = ++c->next_gen;
        }
    }
    deallocate_String_vector(&marked);
    /* UpdateMetadata before any LeaderAndIsr: brokers need the live brokers
     * to act on it */
    ctl_send_update_metadata(c);
    for (size_t i = 0; i < c->ntopics; i++) {
        for (int32_t p = 0; p < c->topics[i].npartitions; p++) {
            if (c->topics[i].parts[p].has_state && lai_to_live_replicas(c, i, p, false) != 0) {
                return -1;
            }
        }
    }
    if (reconcile_all(c) != 0) {
        return -1;
    }
    send_leader_and_isr(c);
    ctl_send_update_metadata(c);
    /* Kafka's TopicDeletionManager: watched, and resumed */
    return ctl_on_delete_topics(c);
}

/* The paths the controller reads and watches, made when missing (every
 * broker makes them at start; the controller may come first). 0 or -1
 * (the chroot itself is not there yet: the broker's session makes it). */
static int make_paths(struct br_controller *c)
{
    static const char *const paths[] = {"/brokers", "/brokers/ids", "/brokers/topics",
                                        "/isr_change_notification", "/admin",
                                        "/admin/delete_topics"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        int rc = zcreate(c, paths[i], NULL, 0, 0);
        if (rc != ZOK && rc != ZNODEEXISTS) {
            return -1;
        }
    }
    return 0;
}

/* Stands for election (Kafka's elect()): 0, or -1 to try again later. */
static int elect(struct br_controller *c)
{
    if (make_paths(c) != 0) {
        return -1;
    }
    char *data = NULL;
    int len = 0;
    struct Stat st;
    int rc = zget(c, "/controller", true, &data, &len, &st);
    if (rc == ZOK) {
        struct br_zk_controller who;
        char err[256];
        int32_t id = -1;
        if (data != NULL &&
            br_zk_controller_decode(data, (size_t)len, "/controller", &who, err, sizeof err) == 0) {
            id = who.broker_id;
        }
        kp_free(data);
        const clientid_t *me = zoo_client_id(c->zh);
        if (id == c->cfg.broker_id && me != NULL && st.ephemeralOwner == me->client_id) {
            return c->active ? 0 : failover(c); /* our own, from before */
        }
        if (c->active) {
            resign(c, "another broker holds /controller");
        }
        return 0;
    }
    if (rc != ZNONODE) {
        return -1;
    }
    char *json = NULL;
    size_t jlen = 0;
    if (br_zk_controller_encode(c->cfg.broker_id, br_now_wall_ms(), &json, &jlen) != 0) {
        return -1;
    }
    rc = zcreate(c, "/controller", json, jlen, ZOO_EPHEMERAL);
    kp_free(json);
    if (rc == ZNODEEXISTS) {
        return elect(c); /* lost the race: watch the winner */
    }
    if (rc != ZOK) {
        return -1;
    }
    if (failover(c) != 0) {
        resign(c, "failover failed");
        /* give the place to another broker */
        (void)zoo_delete(c->zh, "/controller", -1);
        return -1;
    }
    return 0;
}

static int on_brokers(struct br_controller *c)
{
    struct ctl_broker *now = NULL;
    size_t n = 0;
    if (read_brokers(c, &now, &n) != 0) {
        return -1;
    }
    /* senders move to the new list; those of brokers gone stop */
    bool changed = n != c->nbrokers;
    for (size_t i = 0; i < n; i++) {
        struct ctl_broker *old = ctl_find_broker(c, now[i].id);
        if (old != NULL && old->port == now[i].port && strcmp(old->host, now[i].host) == 0) {
            now[i].sender = old->sender;
            old->sender = NULL;
        } else {
            changed = true;
            br_info("controller: broker %" PRId32 " is up (%s:%" PRId32 ")", now[i].id, now[i].host,
                    now[i].port);
        }
    }
    for (size_t i = 0; i < c->nbrokers; i++) {
        if (c->brokers[i].sender != NULL) {
            br_info("controller: broker %" PRId32 " is gone", c->brokers[i].id);
            sender_stop(c->brokers[i].sender);
            ctl_deletions_lost_broker(c, c->brokers[i].id);
            forget_shutting(c, c->brokers[i].id);
            changed = true;
        }
    }
    struct ctl_broker *before = c->brokers;
    size_t nbefore = c->nbrokers;
    c->brokers = now;
    c->nbrokers = n;
    if (!changed) {
        kp_free(before);
        return 0;
    }
    if (start_senders(c) != 0) {
        kp_free(before);
        return -1;
    }
    /* Kafka's onBrokerStartup: metadata to all, then LeaderAndIsr for the
     * replicas on brokers that came */
    ctl_send_update_metadata(c);
    for (size_t i = 0; i < c->ntopics; i++) {
        for (int32_t p = 0; p < c->topics[i].npartitions; p++) {
            const struct ctl_partition *part = &c->topics[i].parts[p];
            if (!part->has_state) {
                continue;
            }
            for (int32_t r = 0; r < part->nreplicas; r++) {
                int32_t id = part->replicas[r];
                bool was = false;
                for (size_t b = 0; b < nbefore; b++) {
                    was = was || before[b].id == id;
                }
                if (!was && is_live(c, id) && lai_add(c, id, i, p, false) != 0) {
                    kp_free(before);
                    return -1;
                }
            }
        }
    }
    kp_free(before);
    /* then the partitions whose leader or ISR members went, or that can
     * now get a leader */
    if (reconcile_all(c) != 0) {
        return -1;
    }
    send_leader_and_isr(c);
    ctl_send_update_metadata(c);
    /* deletions waiting for a broker that came back go on */
    return ctl_resume_deletions(c);
}

static int on_topics(struct br_controller *c)
{
    if (read_topics(c) != 0 || reconcile_all(c) != 0) {
        return -1;
    }
    send_leader_and_isr(c);
    ctl_send_update_metadata(c);
    return 0;
}

/* A leader changed an ISR: the states re-read and pushed to all. */
static int on_isr_change(struct br_controller *c)
{
    if (clear_isr_notifications(c, true, true) != 0) {
        return -1;
    }
    ctl_send_update_metadata(c);
    return 0;
}

/* ---------------------------------------------------------------- controlled shutdown */

static int add_shutting(struct br_controller *c, int32_t id)
{
    if (is_shutting(c, id)) {
        return 0;
    }
    int32_t *grown = kp_realloc(c->shutting, (c->nshutting + 1) * sizeof *grown);
    if (grown == NULL) {
        return -1;
    }
    c->shutting = grown;
    c->shutting[c->nshutting++] = id;
    return 0;
}

/* A growing array of (topic index, partition). */
struct tp_list {
    struct lai_entry *e;
    size_t n, cap;
};

static int tp_add(struct tp_list *l, size_t ti, int32_t p)
{
    if (l->n == l->cap) {
        size_t cap = l->cap == 0 ? 16 : l->cap * 2;
        struct lai_entry *grown = kp_realloc(l->e, cap * sizeof *grown);
        if (grown == NULL) {
            return -1;
        }
        l->e = grown;
        l->cap = cap;
    }
    l->e[l->n++] = (struct lai_entry){ti, p, false};
    return 0;
}

/* StopReplica without deletion for the partitions of l on broker (Kafka's
 * OfflineReplica of a shutting broker's followers: it stops fetching). */
static void send_stop_replica_keep(struct br_controller *c, const struct ctl_broker *broker,
                                   const struct tp_list *l)
{
    if (l->n == 0) {
        return;
    }
    struct kp_StopReplicaRequest_StopReplicaPartitionV0 *ps = kp_calloc(l->n, sizeof *ps);
    if (ps == NULL) {
        br_error("controller: out of memory building StopReplica");
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        ps[i].TopicName = kp_str_c(c->topics[l->e[i].topic].name);
        ps[i].PartitionIndex = l->e[i].partition;
    }
    struct kp_StopReplicaRequest req;
    memset(&req, 0, sizeof req);
    req.ControllerId = c->cfg.broker_id;
    req.ControllerEpoch = c->epoch;
    req.DeletePartitions = false;
    req.UngroupedPartitions.items = ps;
    req.UngroupedPartitions.count = (int32_t)l->n;
    send_request(c, broker->sender, KP_API_STOP_REPLICA, 0, &req);
    kp_free(ps);
}

/* One partition of a shutting broker `id`: led by it, another in-sync
 * replica takes over (Kafka's ControlledShutdownLeaderElectionStrategy);
 * followed by it, it leaves the ISR (never emptied) and is told to stop.
 * 1: it still leads the partition; 0; -1 (ZooKeeper failed). */
static int shut_partition(struct br_controller *c, size_t ti, int32_t p, int32_t id,
                          struct tp_list *stops)
{
    const struct ctl_topic *t = &c->topics[ti];
    struct ctl_partition *part = &t->parts[p];
    int32_t isr[BR_META_MAX_REPLICATION_FACTOR];
    int32_t nisr = 0;
    if (part->leader != id) {
        for (int32_t i = 0; i < part->nisr && nisr < BR_META_MAX_REPLICATION_FACTOR; i++) {
            if (part->isr[i] != id) {
                isr[nisr++] = part->isr[i];
            }
        }
        if (nisr > 0 && nisr < part->nisr) {
            int w = write_state(c, t, p, part, part->leader, isr, nisr);
            if (w < 0) {
                return -1;
            }
            if (w == 0 && lai_to_live_replicas(c, ti, p, false) != 0) {
                return -1;
            }
        }
        return tp_add(stops, ti, p) == 0 ? 0 : -1;
    }
    for (int32_t i = 0; i < part->nisr && nisr < BR_META_MAX_REPLICATION_FACTOR; i++) {
        if (!is_shutting(c, part->isr[i])) {
            isr[nisr++] = part->isr[i];
        }
    }
    int32_t leader = -1;
    for (int32_t i = 0; i < part->nreplicas && leader < 0; i++) {
        if (ctl_contains(isr, nisr, part->replicas[i]) && is_live(c, part->replicas[i])) {
            leader = part->replicas[i];
        }
    }
    if (leader < 0) {
        return 1; /* no other in-sync replica: it leads on until it stops */
    }
    int w = write_state(c, t, p, part, leader, isr, nisr);
    if (w != 0) {
        return w < 0 ? -1 : 1; /* the state moved meanwhile: the broker asks again */
    }
    br_info("controller: %s-%" PRId32 ": leader %" PRId32 " (broker %" PRId32
            " shuts down), epoch %" PRId32 ", %" PRId32 " in sync",
            t->name, p, leader, id, part->leader_epoch, nisr);
    return lai_to_live_replicas(c, ti, p, false) == 0 ? 0 : -1;
}

/* Kafka's KafkaController.doControlledShutdown for broker id: 0 or -1 (a
 * ZooKeeper failure). *err and the partitions it still leads. */
static int controlled_shutdown(struct br_controller *c, int32_t id, int16_t *err,
                               struct br_shutdown_remaining **remaining, size_t *nremaining)
{
    *err = KP_ERR_NONE;
    struct ctl_broker *broker = ctl_find_broker(c, id);
    if (broker == NULL) {
        *err = KP_ERR_BROKER_NOT_AVAILABLE;
        return 0;
    }
    if (add_shutting(c, id) != 0) {
        *err = KP_ERR_UNKNOWN_SERVER_ERROR;
        return 0;
    }
    struct tp_list stops = {NULL, 0, 0};
    struct tp_list left = {NULL, 0, 0};
    int rc = 0;
    for (size_t ti = 0; ti < c->ntopics && rc == 0; ti++) {
        const struct ctl_topic *t = &c->topics[ti];
        for (int32_t p = 0; p < t->npartitions && rc == 0; p++) {
            const struct ctl_partition *part = &t->parts[p];
            if (!part->has_state || part->nreplicas <= 1 ||
                !ctl_contains(part->replicas, part->nreplicas, id)) {
                continue;
            }
            int r = shut_partition(c, ti, p, id, &stops);
            if (r < 0 || (r == 1 && tp_add(&left, ti, p) != 0)) {
                rc = -1;
            }
        }
    }
    if (rc == 0) {
        send_leader_and_isr(c);
        send_stop_replica_keep(c, broker, &stops);
        ctl_send_update_metadata(c);
        *remaining = kp_calloc(left.n > 0 ? left.n : 1, sizeof **remaining);
        if (*remaining == NULL) {
            *err = KP_ERR_UNKNOWN_SERVER_ERROR;
        } else {
            for (size_t i = 0; i < left.n; i++) {
                (void)snprintf((*remaining)[i].topic, sizeof(*remaining)[i].topic, "%s",
                               c->topics[left.e[i].topic].name);
                (*remaining)[i].partition = left.e[i].partition;
            }
            *nremaining = left.n;
        }
        br_info("controller: broker %" PRId32 " shuts down: %zu partition(s) led elsewhere or "
                "left by it, %zu still led by it",
                id, stops.n, left.n);
    } else {
        /* the controller resigns and rebuilds: the broker asks again */
        *err = KP_ERR_NOT_CONTROLLER;
    }
    kp_free(stops.e);
    kp_free(left.e);
    return rc;
}

static int on_controlled_shutdown(struct br_controller *c, const struct event *e)
{
    struct br_shutdown_remaining *remaining = NULL;
    size_t n = 0;
    int16_t err = KP_ERR_NOT_CONTROLLER;
    int rc = c->active ? controlled_shutdown(c, e->broker, &err, &remaining, &n) : 0;
    e->cs_done(e->cs_ctx, err, remaining, n);
    kp_free(remaining);
    return rc;
}

int br_controller_controlled_shutdown(struct br_controller *c, int32_t broker_id,
                                      br_controlled_shutdown_done done, void *ctx)
{
    struct event *e = kp_calloc(1, sizeof *e);
    if (e == NULL) {
        return KP_E_NOMEM;
    }
    e->kind = EV_CONTROLLED_SHUTDOWN;
    e->broker = broker_id;
    e->cs_done = done;
    e->cs_ctx = ctx;
    (void)pthread_mutex_lock(&c->mu);
    if (c->tail != NULL) {
        c->tail->next = e;
    } else {
        c->head = e;
    }
    c->tail = e;
    (void)pthread_cond_broadcast(&c->cv);
    (void)pthread_mutex_unlock(&c->mu);
    return 0;
}

static void handle(struct br_controller *c, const struct event *e)
{
    enum ev_kind kind = e->kind;
    int rc = 0;
    switch (kind) {
    case EV_ELECT:
    case EV_CONTROLLER:
    case EV_RETRY:
        rc = elect(c);
        break;
    case EV_BROKERS:
        rc = c->active ? on_brokers(c) : 0;
        break;
    case EV_TOPICS:
        rc = c->active ? on_topics(c) : 0;
        break;
    case EV_ISR_CHANGE:
        rc = c->active ? on_isr_change(c) : 0;
        break;
    case EV_DELETE_TOPICS:
        rc = c->active ? ctl_on_delete_topics(c) : 0;
        break;
    case EV_STOP_REPLICA_DONE:
        rc = c->active ? ctl_on_stop_replica_done(c, e) : 0;
        break;
    case EV_CONTROLLED_SHUTDOWN:
        rc = on_controlled_shutdown(c, e);
        break;
    case EV_EXPIRED:
        resign(c, "its ZooKeeper session expired");
        close_session(c);
        while (!stopping(c) && open_session(c) != 0) {
            nap(c, RETRY_MS);
        }
        rc = wait_connected(c) ? elect(c) : -1;
        break;
    }
    if (rc != 0 && !stopping(c)) {
        /* rebuild everything from ZooKeeper, a moment later */
        resign(c, "a ZooKeeper operation failed");
        nap(c, RETRY_MS);
        post(c, EV_RETRY);
    }
}

/* ---------------------------------------------------------------- preferred leaders */

/* Kafka's checkAndTriggerAutoLeaderRebalance: 0 or -1 (ZooKeeper failed). */
static int rebalance_leaders(struct br_controller *c)
{
    int moved = 0;
    for (size_t bi = 0; bi < c->nbrokers; bi++) {
        int32_t id = c->brokers[bi].id;
        if (is_shutting(c, id)) {
            continue;
        }
        int64_t preferred = 0;
        int64_t elsewhere = 0;
        for (size_t ti = 0; ti < c->ntopics; ti++) {
            const struct ctl_topic *t = &c->topics[ti];
            for (int32_t p = 0; p < t->npartitions; p++) {
                const struct ctl_partition *part = &t->parts[p];
                if (part->has_state && part->nreplicas > 0 && part->replicas[0] == id) {
                    preferred++;
                    elsewhere += part->leader != id ? 1 : 0;
                }
            }
        }
        if (preferred == 0 ||
            elsewhere * 100 <= (int64_t)c->cfg.leader_imbalance_percentage * preferred) {
            continue;
        }
        br_info("controller: broker %" PRId32 " leads %" PRId64 " of the %" PRId64
                " partitions it is the preferred leader of: moving them back",
                id, preferred - elsewhere, preferred);
        for (size_t ti = 0; ti < c->ntopics; ti++) {
            struct ctl_topic *t = &c->topics[ti];
            if (is_deleting(c, t->name)) {
                continue;
            }
            for (int32_t p = 0; p < t->npartitions; p++) {
                struct ctl_partition *part = &t->parts[p];
                if (!part->has_state || part->nreplicas == 0 || part->replicas[0] != id ||
                    part->leader == id || !ctl_contains(part->isr, part->nisr, id)) {
                    continue;
                }
                int32_t old = part->leader;
                int w = write_state(c, t, p, part, id, part->isr, part->nisr);
                if (w < 0) {
                    return -1;
                }
                if (w == 0) {
                    br_info("controller: %s-%" PRId32 ": leader %" PRId32
                            " (its preferred replica, was %" PRId32 "), epoch %" PRId32,
                            t->name, p, id, old, part->leader_epoch);
                    if (lai_to_live_replicas(c, ti, p, false) != 0) {
                        return -1;
                    }
                    moved++;
                }
            }
        }
    }
    if (moved > 0) {
        send_leader_and_isr(c);
        ctl_send_update_metadata(c);
    }
    return 0;
}

/* A monotonic-clock deadline as the condition variable's (realtime) one. */
static struct timespec realtime_at(int64_t mono_ms)
{
    int64_t wait = mono_ms - br_now_mono_ms();
    struct timespec ts;
    (void)clock_gettime(CLOCK_REALTIME, &ts);
    if (wait > 0) {
        ts.tv_sec += (time_t)(wait / 1000);
        ts.tv_nsec += (long)(wait % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
    }
    return ts;
}

static void *controller_main(void *arg)
{
    struct br_controller *c = arg;
    br_thread_name("ctrl");
    if (wait_connected(c)) {
        post(c, EV_ELECT);
    }
    int64_t next_rebalance = br_now_mono_ms() + c->cfg.leader_imbalance_check_ms;
    for (;;) {
        (void)pthread_mutex_lock(&c->mu);
        bool due = false;
        while (!c->stop && c->head == NULL && !due) {
            if (!c->cfg.auto_leader_rebalance) {
                (void)pthread_cond_wait(&c->cv, &c->mu);
                continue;
            }
            struct timespec ts = realtime_at(next_rebalance);
            (void)pthread_cond_timedwait(&c->cv, &c->mu, &ts);
            due = br_now_mono_ms() >= next_rebalance;
        }
        if (c->stop) {
            (void)pthread_mutex_unlock(&c->mu);
            break;
        }
        if (c->head == NULL) {
            /* the check is due and no event waits */
            (void)pthread_mutex_unlock(&c->mu);
            next_rebalance = br_now_mono_ms() + c->cfg.leader_imbalance_check_ms;
            if (c->active && wait_connected(c) && rebalance_leaders(c) != 0 && !stopping(c)) {
                resign(c, "a ZooKeeper operation failed");
                nap(c, RETRY_MS);
                post(c, EV_RETRY);
            }
            continue;
        }

        struct event *e = c->head;
        c->head = e->next;
        if (c->head == NULL) {
            c->tail = NULL;
        }
        (void)pthread_mutex_unlock(&c->mu);
        struct event ev = *e;
        kp_free(e);
        if (ev.kind != EV_EXPIRED && !wait_connected(c)) {
            if (stopping(c)) {
                break;
            }
            continue; /* expired: its own event follows */
        }
        handle(c, &ev);
    }
    resign(c, "the broker stops");
    return NULL;
}

int br_controller_start(const struct br_controller_config *cfg, struct br_controller **out)
{
    *out = NULL;
    struct br_controller *c = kp_calloc(1, sizeof *c);
    if (c == NULL) {
        return KP_E_NOMEM;
    }
    c->cfg = *cfg;
    atomic_init(&c->active_flag, false);
    atomic_init(&c->epoch_flag, 0);
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        kp_free(c);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (pthread_cond_init(&c->cv, NULL) != 0) {
        (void)pthread_mutex_destroy(&c->mu);
        kp_free(c);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    if (open_session(c) != 0) {
        /* the thread retries: an unresolvable host may resolve later */
        (void)pthread_mutex_lock(&c->mu);
        c->expired = true;
        (void)pthread_mutex_unlock(&c->mu);
        post(c, EV_EXPIRED);
    }
    if (pthread_create(&c->thread, NULL, controller_main, c) != 0) {
        close_session(c);
        (void)pthread_cond_destroy(&c->cv);
        (void)pthread_mutex_destroy(&c->mu);
        kp_free(c);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    c->started = true;
    *out = c;
    return 0;
}

bool br_controller_active(struct br_controller *c, int32_t *epoch)
{
    if (epoch != NULL) {
        *epoch = atomic_load(&c->epoch_flag);
    }
    return atomic_load(&c->active_flag);
}

void br_controller_stop(struct br_controller *c)
{
    if (c == NULL) {
        return;
    }
    (void)pthread_mutex_lock(&c->mu);
    c->stop = true;
    (void)pthread_cond_broadcast(&c->cv);
    (void)pthread_mutex_unlock(&c->mu);
    if (c->started) {
        (void)pthread_join(c->thread, NULL);
    }
    close_session(c);
    while (c->head != NULL) {
        struct event *e = c->head;
        c->head = e->next;
        if (e->kind == EV_CONTROLLED_SHUTDOWN) {
            e->cs_done(e->cs_ctx, KP_ERR_NOT_CONTROLLER, NULL, 0);
        }
        kp_free(e);
    }
    (void)pthread_cond_destroy(&c->cv);
    (void)pthread_mutex_destroy(&c->mu);
    kp_free(c);
}
