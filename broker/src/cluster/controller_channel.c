/*
 * samsa-broker: the controller's channel to the brokers (Kafka's
 * ControllerChannelManager): a sender thread per live broker, the
 * LeaderAndIsr and UpdateMetadata requests it queues, and resigning, which
 * stops the senders and drops the model.
 */
#define _GNU_SOURCE

#include "cluster/controller_internal.h"

#include "base/clock.h"
#include "base/logging.h"
#include "base/worker.h"

#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

/* The largest response a broker sends the controller. */
#define MAX_RESPONSE ((int32_t)16 * 1024 * 1024)
/* How long a sender waits between two attempts at a request (Kafka's
 * RequestSendThread backs off 100 ms). */
#define SEND_BACKOFF_MS 100

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
            ctl_post_event(s->ctl, &e);
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

struct sender *ctl_sender_start(struct br_controller *c, const struct ctl_broker *b,
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

void ctl_sender_stop(struct sender *s)
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

void ctl_send_request(struct br_controller *c, struct sender *s, int16_t api_key,
                      int16_t api_version, const void *body)
{
    ctl_send_request_tagged(c, s, api_key, api_version, body, 0);
}

void ctl_send_stop_replica(struct br_controller *c, struct sender *s,
                           struct kp_StopReplicaRequest_StopReplicaPartitionV0 *parts, int32_t n,
                           bool delete_partitions, uint64_t gen)
{
    struct kp_StopReplicaRequest req;
    memset(&req, 0, sizeof req);
    req.ControllerId = c->cfg.broker_id;
    req.ControllerEpoch = c->epoch;
    req.DeletePartitions = delete_partitions;
    req.UngroupedPartitions.items = parts;
    req.UngroupedPartitions.count = n;
    ctl_send_request_tagged(c, s, KP_API_STOP_REPLICA, 0, &req, gen);
}

static void clear_model(struct br_controller *c)
{
    for (size_t i = 0; i < c->nbrokers; i++) {
        ctl_sender_stop(c->brokers[i].sender);
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
    kp_free(c->moves);
    c->moves = NULL;
    c->nmoves = 0;
    kp_free(c->strays);
    c->strays = NULL;
    c->nstrays = 0;
}

/* ---------------------------------------------------------------- requests */

void ctl_send_leader_and_isr(struct br_controller *c)
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
        ctl_send_request(c, broker->sender, KP_API_LEADER_AND_ISR, 1, &req);
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
        kp_calloc(c->nbrokers > 0 ? c->nbrokers * CTL_MAX_ENDPOINTS : 1, sizeof *ep);
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
            ps[k].Leader = ctl_is_deleting(c, t->name) ? -2 : part->leader;
            ps[k].LeaderEpoch = part->leader_epoch;
            ps[k].Isr.items = part->isr;
            ps[k].Isr.count = part->nisr;
            ps[k].ZkVersion = part->zk_version;
            ps[k].Replicas.items = part->replicas;
            ps[k].Replicas.count = part->nreplicas;
            ps[k].OfflineReplicas.items = &offline[o];
            int32_t n = 0;
            for (int32_t r = 0; r < part->nreplicas; r++) {
                if (!ctl_is_live(c, part->replicas[r])) {
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
        struct kp_UpdateMetadataRequest_UpdateMetadataEndpoint *bep = &ep[i * CTL_MAX_ENDPOINTS];
        for (size_t e = 0; e < b->nendpoints; e++) {
            bep[e].Port = b->endpoints[e].port;
            bep[e].Host = kp_str_c(b->endpoints[e].host);
            bep[e].Listener = kp_str_c(b->endpoints[e].listener);
            bep[e].SecurityProtocol = (int16_t)b->endpoints[e].security_protocol;
        }
        lb[i].Id = b->id;
        lb[i].Endpoints.items = bep;
        lb[i].Endpoints.count = (int32_t)b->nendpoints;
        lb[i].Rack = b->has_rack ? kp_str_c(b->rack) : (struct kp_str){NULL, -1};
    }
    req.UngroupedPartitionStates.items = ps;
    req.UngroupedPartitionStates.count = (int32_t)k;
    req.LiveBrokers.items = lb;
    req.LiveBrokers.count = (int32_t)c->nbrokers;
    for (size_t i = 0; i < c->nbrokers; i++) {
        ctl_send_request(c, c->brokers[i].sender, KP_API_UPDATE_METADATA, 4, &req);
    }
out:
    kp_free(ps);
    kp_free(offline);
    kp_free(lb);
    kp_free(ep);
}

void ctl_resign(struct br_controller *c, const char *why)
{
    if (c->active) {
        br_info("controller: broker %" PRId32 " resigns as controller (%s)", c->cfg.broker_id, why);
    }
    c->active = false;
    atomic_store(&c->active_flag, false);
    clear_model(c);
}
