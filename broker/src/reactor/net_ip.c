/* samsa-broker: max.connections.per.ip, Kafka 2.0's ConnectionQuotas: the
 * accepted connections counted per source address (see net_internal.h). */
#define _GNU_SOURCE

#include "reactor/net_internal.h"

#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <netinet/in.h>
#include <string.h>

/* One source address's accepted connections; count 0: an empty slot. */
struct ip_count {
    uint8_t addr[16];
    uint32_t count;
};

#define IP_TABLE_FIRST 64

static void overrides_free(struct br_net *n)
{
    kp_free(n->ip_override_addr);
    kp_free(n->ip_override_max);
    n->ip_override_addr = NULL;
    n->ip_override_max = NULL;
    n->n_ip_overrides = 0;
}

int br_net_limit_per_ip(struct br_net *n, int32_t max_per_ip, const uint8_t (*addr)[16],
                        const int32_t *max, size_t count)
{
    overrides_free(n);
    n->max_per_ip = max_per_ip;
    n->ip_limited = (max_per_ip > 0 && max_per_ip != INT32_MAX) || count > 0;
    if (count == 0) {
        return 0;
    }
    n->ip_override_addr = kp_calloc(count, sizeof *n->ip_override_addr);
    n->ip_override_max = kp_calloc(count, sizeof *n->ip_override_max);
    if (n->ip_override_addr == NULL || n->ip_override_max == NULL) {
        overrides_free(n);
        n->ip_limited = false;
        return -1;
    }
    memcpy(n->ip_override_addr, addr, count * sizeof *n->ip_override_addr);
    memcpy(n->ip_override_max, max, count * sizeof *n->ip_override_max);
    n->n_ip_overrides = count;
    return 0;
}

void net_ip_limits_free(struct br_net *n)
{
    overrides_free(n);
    kp_free(n->ip_counts);
    n->ip_counts = NULL;
    n->ip_cap = 0;
    n->ip_used = 0;
}

static size_t ip_hash(const uint8_t *a)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (int i = 0; i < 16; i++) {
        h = (h ^ a[i]) * 1099511628211ULL;
    }
    return (size_t)(h ^ (h >> 32));
}

/* The slot of addr, or the empty slot where it goes (the table has one). */
static struct ip_count *ip_slot(const struct br_net *n, const uint8_t *addr)
{
    size_t mask = n->ip_cap - 1;
    for (size_t i = ip_hash(addr) & mask;; i = (i + 1) & mask) {
        struct ip_count *e = &n->ip_counts[i];
        if (e->count == 0 || memcmp(e->addr, addr, 16) == 0) {
            return e;
        }
    }
}

/* Room for one more address: at most half the slots in use. */
static int ip_reserve(struct br_net *n)
{
    if (n->ip_cap != 0 && (n->ip_used + 1) * 2 <= n->ip_cap) {
        return 0;
    }
    size_t cap = n->ip_cap != 0 ? n->ip_cap * 2 : IP_TABLE_FIRST;
    struct ip_count *old = n->ip_counts;
    size_t old_cap = n->ip_cap;
    n->ip_counts = kp_calloc(cap, sizeof *n->ip_counts);
    if (n->ip_counts == NULL) {
        n->ip_counts = old;
        return -1;
    }
    n->ip_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].count != 0) {
            *ip_slot(n, old[i].addr) = old[i];
        }
    }
    kp_free(old);
    return 0;
}

static int32_t ip_limit(const struct br_net *n, const uint8_t *addr)
{
    for (size_t i = 0; i < n->n_ip_overrides; i++) {
        if (memcmp(n->ip_override_addr[i], addr, 16) == 0) {
            return n->ip_override_max[i];
        }
    }
    return n->max_per_ip;
}

/* The address of a peer as the table keys it: IPv4 mapped into IPv6. */
void net_ip_key(const struct sockaddr_storage *ss, uint8_t out[16])
{
    memset(out, 0, 16);
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *sa = (const struct sockaddr_in *)(const void *)ss;
        out[10] = 0xff;
        out[11] = 0xff;
        memcpy(out + 12, &sa->sin_addr, 4);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *sa = (const struct sockaddr_in6 *)(const void *)ss;
        memcpy(out, &sa->sin6_addr, 16);
    }
}

/* Kafka 2.0's ConnectionQuotas.inc: a connection from an address that
 * already has its limit (max.connections.per.ip, or its override) is
 * refused, logged at INFO as Kafka's Acceptor logs TooManyConnectionsException
 * (here at most once a second, with the count of those not logged). True
 * when c may stay; c is then counted until net_ip_release. */
bool net_ip_admit(struct br_net *n, struct br_conn *c, const char *host)
{
    if (!n->ip_limited) {
        return true;
    }
    int32_t max = ip_limit(n, c->ip);
    struct ip_count *e = n->ip_cap != 0 ? ip_slot(n, c->ip) : NULL;
    uint32_t count = e != NULL ? e->count : 0;
    if ((int64_t)count >= (int64_t)max) {
        n->refused_per_ip++;
        n->turned_away++;
        n->ip_refused_unlogged++;
        if (n->now_ms >= n->ip_refusal_log_ms) {
            br_info("Rejected connection from %s, address already has the configured maximum "
                    "of %d connections (max.connections.per.ip%s; %llu refused since the last "
                    "line)",
                    host, (int)max, max != n->max_per_ip ? ".overrides" : "",
                    (unsigned long long)n->ip_refused_unlogged);
            n->ip_refused_unlogged = 0;
            n->ip_refusal_log_ms = n->now_ms + 1000;
        }
        return false;
    }
    if (count == 0) {
        if (ip_reserve(n) != 0) {
            return true; /* out of memory: not counted, not refused */
        }
        e = ip_slot(n, c->ip);
        memcpy(e->addr, c->ip, 16);
        n->ip_used++;
    }
    e->count++;
    c->ip_counted = true;
    return true;
}

/* Kafka's ConnectionQuotas.dec: the address's count less one; a slot whose
 * count reaches 0 is emptied by moving back the ones after it that probed
 * past it (linear probing's deletion, no tombstones). */
void net_ip_release(struct br_conn *c)
{
    struct br_net *n = c->net;
    if (!c->ip_counted || n->ip_cap == 0) {
        return;
    }
    c->ip_counted = false;
    struct ip_count *e = ip_slot(n, c->ip);
    if (e->count == 0) {
        return; /* never: counted connections have their slot */
    }
    if (--e->count > 0) {
        return;
    }
    n->ip_used--;
    size_t mask = n->ip_cap - 1;
    size_t hole = (size_t)(e - n->ip_counts);
    for (size_t i = (hole + 1) & mask; n->ip_counts[i].count != 0; i = (i + 1) & mask) {
        size_t home = ip_hash(n->ip_counts[i].addr) & mask;
        /* i may move to the hole unless its home lies cyclically in (hole, i] */
        bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (!stays) {
            n->ip_counts[hole] = n->ip_counts[i];
            n->ip_counts[i].count = 0;
            hole = i;
        }
    }
}
