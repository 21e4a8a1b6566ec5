/*
 * The consumer's assigned partitions (struct sc_cpart) and the messages
 * fetched for them, queued for samsa_consumer_poll: an assignment replaced
 * (samsa_consumer_assign, an eager rebalance) or changed in place (a
 * cooperative one adds partitions and marks those given up), a partition's
 * starting offset, what was fetched and not handed out dropped. The group
 * (consumer/group*.c) and the fetcher call it; it calls only core.
 */
#include <string.h>

#include "consumer/consumer.h"

void samsa_message_free(samsa_message *msg)
{
    kp_free(msg); /* the public struct is the start of the one block */
}

void sc_cq_push(struct sc_client *c, struct sc_cmsg *m)
{
    m->next = NULL;
    if (c->cq_tail != NULL) {
        c->cq_tail->next = m;
    } else {
        c->cq = m;
    }
    c->cq_tail = m;
    c->cq_bytes += m->size;
    m->part->queued++;
}

int64_t sc_cq_drop(struct sc_client *c, const struct sc_cpart *part)
{
    struct sc_cmsg **at = &c->cq;
    int64_t lowest = -1;
    c->cq_tail = NULL;
    while (*at != NULL) {
        struct sc_cmsg *m = *at;
        if (part == NULL || m->part == part) {
            if (part != NULL && m->part == part && m->epoch == part->epoch &&
                (lowest < 0 || m->pub.offset < lowest)) {
                lowest = m->pub.offset;
            }
            *at = m->next;
            c->cq_bytes -= m->size;
            m->part->queued--;
            kp_free(m);
        } else {
            c->cq_tail = m;
            at = &m->next;
        }
    }
    return lowest;
}

int64_t sc_cpart_next_for_app(const struct sc_client *c, const struct sc_cpart *part)
{
    if (part->app_offset >= 0) {
        return part->app_offset;
    }
    /* nothing handed out yet: the first fetched and queued, else where
     * fetching stands */
    int64_t lowest = -1;
    for (const struct sc_cmsg *m = c->cq; m != NULL; m = m->next) {
        if (m->part == part && m->epoch == part->epoch && (lowest < 0 || m->pub.offset < lowest)) {
            lowest = m->pub.offset;
        }
    }
    return lowest >= 0 ? lowest : part->position;
}

struct sc_cmsg *sc_cmsg_new(struct sc_cpart *part, const struct kp_record *rec, int ts_type)
{
    size_t tlen = strlen(part->topic);
    size_t klen = rec->Key.len > 0 ? (size_t)rec->Key.len : 0;
    size_t vlen = rec->Value.len > 0 ? (size_t)rec->Value.len : 0;
    size_t hcount = rec->HeaderCount > 0 ? (size_t)rec->HeaderCount : 0;
    size_t hbytes = (size_t)(rec->Headers.len > 0 ? rec->Headers.len : 0) + hcount;
    size_t size = sizeof(struct sc_cmsg) + hcount * sizeof(struct samsa_header) + tlen + 1 + klen +
                  vlen + hbytes;
    struct sc_cmsg *m = kp_malloc(size);
    if (m == NULL) {
        return NULL;
    }
    memset(m, 0, sizeof(*m));
    struct samsa_header *hv = (struct samsa_header *)(void *)(m + 1);
    char *p = (char *)(hv + hcount);
    memcpy(p, part->topic, tlen + 1);
    m->pub.topic = p;
    p += tlen + 1;
    if (rec->Key.len >= 0) {
        if (klen > 0) {
            memcpy(p, rec->Key.ptr, klen);
        }
        m->pub.key = p;
        m->pub.key_len = klen;
        p += klen;
    }
    if (rec->Value.len >= 0) {
        if (vlen > 0) {
            memcpy(p, rec->Value.ptr, vlen);
        }
        m->pub.value = p;
        m->pub.value_len = vlen;
        p += vlen;
    }
    if (hcount > 0) {
        struct kp_header_iter hi;
        kp_record_headers_init(&hi, rec);
        struct kp_record_header h;
        size_t n = 0;
        while (n < hcount && kp_record_header_next(&hi, &h) == 0) {
            memcpy(p, h.Key.ptr, (size_t)h.Key.len);
            p[h.Key.len] = '\0';
            hv[n].name = p;
            p += h.Key.len + 1;
            if (h.Value.len >= 0) {
                memcpy(p, h.Value.ptr, (size_t)h.Value.len);
                hv[n].value = p;
                hv[n].value_len = (size_t)h.Value.len;
                p += h.Value.len;
            }
            n++;
        }
        m->pub.headers = hv;
        m->pub.header_count = n;
    }
    m->pub.struct_size = sizeof(samsa_message);
    m->pub.partition = part->partition;
    m->pub.offset = rec->Offset;
    m->pub.timestamp = rec->Timestamp;
    m->pub.timestamp_type = ts_type;
    m->part = part;
    m->epoch = part->epoch;
    m->size = size;
    return m;
}

struct sc_cpart *sc_cpart_find(struct sc_client *c, const char *topic, int32_t partition)
{
    for (int i = 0; i < c->cpart_count; i++) {
        if (c->cparts[i]->partition == partition && strcmp(c->cparts[i]->topic, topic) == 0) {
            return c->cparts[i];
        }
    }
    return NULL;
}

void sc_cpart_free(struct sc_cpart *p)
{
    if (p != NULL) {
        kp_free(p->topic);
        kp_free(p);
    }
}

/* Sets where a partition starts: an absolute offset is used as is, a
 * logical one is resolved by the I/O thread. */
void sc_cpart_set_offset(struct sc_cpart *p, int64_t offset)
{
    if (offset >= 0) {
        p->state = SC_CP_ACTIVE;
        p->position = offset;
    } else {
        p->state = SC_CP_NEED_OFFSET;
        p->reset = offset;
        p->reset_is_ts = false;
    }
    p->retry_at = 0;
}

int sc_consumer_set_assignment(struct sc_client *c, const struct samsa_partition *parts,
                               size_t count)
{
    struct sc_cpart **np = kp_calloc(count > 0 ? count : 1, sizeof(*np)); /* NOLINT(bugprone-sizeof-expression): an array of pointers */
    if (np == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        np[i] = kp_calloc(1, sizeof(*np[i]));
        if (np[i] == NULL || (np[i]->topic = sc_strdup(parts[i].topic)) == NULL) {
            for (size_t j = 0; j <= i; j++) {
                sc_cpart_free(np[j]);
            }
            kp_free(np);
            return SAMSA_ERR_NOMEM;
        }
        np[i]->partition = parts[i].partition;
        np[i]->leader = -1;
        np[i]->hwm = -1;
        np[i]->lso = -1;
        np[i]->log_start = -1;
        np[i]->app_offset = -1;
        np[i]->stored = -1;
        np[i]->committed = -1;
        sc_cpart_set_offset(np[i], parts[i].offset);
    }
    /* A partition kept across the change keeps its position. */
    for (size_t i = 0; i < count; i++) {
        struct sc_cpart *old = sc_cpart_find(c, np[i]->topic, np[i]->partition);
        if (old != NULL && old->state == SC_CP_ACTIVE && parts[i].offset == SAMSA_OFFSET_STORED) {
            np[i]->state = SC_CP_ACTIVE;
            np[i]->position = old->app_offset >= 0 ? old->app_offset : old->position;
            np[i]->stored = old->stored;
        }
    }
    sc_cq_drop(c, NULL);
    for (int i = 0; i < c->cpart_count; i++) {
        sc_cpart_free(c->cparts[i]);
    }
    kp_free(c->cparts);
    c->cparts = np;
    c->cpart_count = (int)count;
    c->md_wanted = true;
    return SAMSA_OK;
}
int sc_consumer_add_parts(struct sc_client *c, const struct samsa_partition *parts, size_t count)
{
    if (count == 0) {
        return SAMSA_OK;
    }
    size_t total = (size_t)c->cpart_count + count;
    struct sc_cpart **np = kp_realloc(c->cparts, total * sizeof(*np)); /* NOLINT(bugprone-sizeof-expression): an array of pointers */
    if (np == NULL) {
        return SAMSA_ERR_NOMEM;
    }
    c->cparts = np;
    for (size_t i = 0; i < count; i++) {
        struct sc_cpart *p = kp_calloc(1, sizeof(*p));
        if (p == NULL || (p->topic = sc_strdup(parts[i].topic)) == NULL) {
            sc_cpart_free(p);
            return SAMSA_ERR_NOMEM; /* those added so far stay: they are valid */
        }
        p->partition = parts[i].partition;
        p->leader = -1;
        p->hwm = -1;
        p->lso = -1;
        p->log_start = -1;
        p->app_offset = -1;
        p->stored = -1;
        p->committed = -1;
        sc_cpart_set_offset(p, parts[i].offset);
        c->cparts[c->cpart_count++] = p;
    }
    c->md_wanted = true;
    return SAMSA_OK;
}

void sc_consumer_revoking(struct sc_client *c, struct sc_cpart *p)
{
    p->revoking = true;
    p->epoch++; /* answers in flight are for the old epoch */
    (void)sc_cq_drop(c, p);
}

void sc_consumer_remove_revoking(struct sc_client *c)
{
    int k = 0;
    for (int i = 0; i < c->cpart_count; i++) {
        struct sc_cpart *p = c->cparts[i];
        if (p->revoking) {
            (void)sc_cq_drop(c, p);
            sc_cpart_free(p);
        } else {
            c->cparts[k++] = p;
        }
    }
    c->cpart_count = k;
}

void sc_consumer_stop_fetching(struct sc_client *c)
{
    for (int i = 0; i < c->cpart_count; i++) {
        struct sc_cpart *p = c->cparts[i];
        /* What was fetched and not handed out is dropped: the position goes
         * back to the first of it, the next offset the application would
         * have got (what the "revoked" event reports, samsa.h). */
        int64_t first = sc_cq_drop(c, p);
        if (p->state == SC_CP_ACTIVE && first >= 0) {
            p->position = first;
        }
        p->epoch++; /* answers in flight are for the old epoch */
    }
}

void samsa_partitions_free(struct samsa_partition *parts, size_t count)
{
    for (size_t i = 0; parts != NULL && i < count; i++) {
        kp_free((void *)(uintptr_t)parts[i].topic);
    }
    kp_free(parts);
}
