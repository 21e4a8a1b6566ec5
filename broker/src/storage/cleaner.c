/* samsa-broker: the log cleaner (see cleaner.h). */
#define _GNU_SOURCE

#include "storage/cleaner.h"

#include "base/logging.h"
#include "storage/segment.h"

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/control.h>
#include <samsa-protocol/record_batch.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Segment files are read through a window of this size, grown for a larger
 * batch. */
#define READ_WINDOW ((size_t)1 << 20)
/* A compressed batch whose records need more than this is not cleaned. */
#define MAX_DECOMPRESSED ((size_t)128 << 20)
/* Kafka's log.cleaner.dedupe.buffer.size default, shared by the threads. */
#define MAP_BUDGET_BYTES ((size_t)128 << 20)
#define MAP_MIN_SLOTS ((size_t)1024)
/* Read window for the header walk of the producer pass. */
#define HEADER_WINDOW 8192

/* ---------------------------------------------------------------- hashing */

static uint64_t rotl64(uint64_t x, unsigned r)
{
    return (x << r) | (x >> (64u - r));
}

static uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    k ^= k >> 33;
    return k;
}

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++) {
        v |= (uint64_t)p[i] << (8u * i);
    }
    return v;
}

/* MurmurHash3_x64_128 (Austin Appleby's, public domain), seed 0: the key's
 * identity in the offset map, as Kafka uses an MD5 digest. */
static void hash128(const uint8_t *data, size_t len, uint64_t out[2])
{
    const uint64_t c1 = UINT64_C(0x87c37b91114253d5);
    const uint64_t c2 = UINT64_C(0x4cf5ad432745937f);
    uint64_t h1 = 0;
    uint64_t h2 = 0;
    size_t nblocks = len / 16;
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1 = load_le64(data + i * 16);
        uint64_t k2 = load_le64(data + i * 16 + 8);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + UINT64_C(0x52dce729);
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + UINT64_C(0x38495ab5);
    }
    const uint8_t *tail = data + nblocks * 16;
    size_t rem = len & 15u;
    uint64_t k1 = 0;
    uint64_t k2 = 0;
    for (size_t i = rem; i > 8; i--) {
        k2 ^= (uint64_t)tail[i - 1] << (8u * (i - 9));
    }
    if (rem > 8) {
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
    }
    for (size_t i = rem < 8 ? rem : 8; i > 0; i--) {
        k1 ^= (uint64_t)tail[i - 1] << (8u * (i - 1));
    }
    if (rem > 0) {
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
    }
    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    h2 += h1;
    out[0] = h1;
    out[1] = h2;
}

/* ---------------------------------------------------------------- maps */

/* Open addressing, linear probing: (h1, h2) -> value >= 0; value -1 marks
 * an empty slot. Used for key hash -> last offset and for producer id ->
 * base offset of its last batch. */
struct map_slot {
    uint64_t h1;
    uint64_t h2;
    int64_t value;
};

struct omap {
    struct map_slot *slots; /* owned */
    size_t cap;             /* a power of two */
    size_t n;
    size_t max_entries; /* ceiling on n, unless `unbounded` */
    bool unbounded;
};

static size_t omap_slot(const struct omap *m, uint64_t h1, uint64_t h2)
{
    return (size_t)(fmix64(h1 ^ rotl64(h2, 32)) & (uint64_t)(m->cap - 1));
}

static int omap_alloc(struct omap *m, size_t cap)
{
    struct map_slot *s = kp_malloc(cap * sizeof *s);
    if (s == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t i = 0; i < cap; i++) {
        s[i].value = -1;
    }
    struct map_slot *old = m->slots;
    size_t old_cap = m->cap;
    m->slots = s;
    m->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].value >= 0) {
            size_t j = omap_slot(m, old[i].h1, old[i].h2);
            while (m->slots[j].value >= 0) {
                j = (j + 1) & (m->cap - 1);
            }
            m->slots[j] = old[i];
        }
    }
    kp_free(old);
    return 0;
}

static int omap_init(struct omap *m, size_t max_entries)
{
    memset(m, 0, sizeof *m);
    m->max_entries = max_entries;
    return omap_alloc(m, MAP_MIN_SLOTS);
}

static void omap_free(struct omap *m)
{
    kp_free(m->slots);
    m->slots = NULL;
    m->cap = 0;
    m->n = 0;
}

/* 0; KP_E_TOO_LARGE when the map is full and the key new (not inserted);
 * KP_E_NOMEM. */
static int omap_put(struct omap *m, uint64_t h1, uint64_t h2, int64_t value)
{
    size_t j = omap_slot(m, h1, h2);
    while (m->slots[j].value >= 0) {
        if (m->slots[j].h1 == h1 && m->slots[j].h2 == h2) {
            m->slots[j].value = value;
            return 0;
        }
        j = (j + 1) & (m->cap - 1);
    }
    if (!m->unbounded && m->n >= m->max_entries) {
        return KP_E_TOO_LARGE;
    }
    /* at most 70% full */
    if ((m->n + 1) * 10 > m->cap * 7) {
        if (m->cap > SIZE_MAX / 2 / sizeof(struct map_slot)) {
            return KP_E_NOMEM;
        }
        int rc = omap_alloc(m, m->cap * 2);
        if (rc != 0) {
            return rc;
        }
        j = omap_slot(m, h1, h2);
        while (m->slots[j].value >= 0) {
            j = (j + 1) & (m->cap - 1);
        }
    }
    m->slots[j].h1 = h1;
    m->slots[j].h2 = h2;
    m->slots[j].value = value;
    m->n++;
    return 0;
}

static bool omap_get(const struct omap *m, uint64_t h1, uint64_t h2, int64_t *value)
{
    size_t j = omap_slot(m, h1, h2);
    while (m->slots[j].value >= 0) {
        if (m->slots[j].h1 == h1 && m->slots[j].h2 == h2) {
            *value = m->slots[j].value;
            return true;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return false;
}

/* ---------------------------------------------------------------- jobs */

struct job_group {
    size_t first; /* index into the job's segments */
    size_t n;
    struct br_segment *cleaned; /* written; NULL before, and once swapped */
};

struct br_clean_job {
    char *dir; /* owned copy of the partition directory's path */
    int dir_fd;
    struct br_clean_params p;
    int32_t index_interval;
    /* the segments from the log start to the first uncleanable offset */
    size_t nsegs;
    struct br_log_swap_old *olds; /* owned; their files referenced */
    int64_t *next_base;           /* owned: the following segment's base offset */
    size_t nclean;                /* segments rewritten by the run: [0, nclean) */
    struct job_group *groups;     /* owned */
    size_t ngroups;
    struct br_clean_stats stats;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The cleanable segments: from the first, closed (never the last one),
 * not empty, none newer than the compaction lag allows. *count of them;
 * bytes below and above the first dirty offset.
 */
static int cleanable(const struct br_log *log, const struct br_clean_params *p, size_t *count,
                     int64_t *first_dirty, int64_t *clean_bytes, int64_t *dirty_bytes)
{
    size_t n = br_log_segment_count(log);
    int64_t start = br_log_start_offset(log);
    *first_dirty = p->first_dirty_offset > start ? p->first_dirty_offset : start;
    struct br_log_segment_info active;
    if (n > 0 && br_log_segment_info(log, n - 1, &active) == 0 &&
        *first_dirty > active.base_offset) {
        /* a checkpoint from a longer log (cut by recovery): clean it all
         * again, as Kafka's LogCleanerManager does */
        *first_dirty = start;
    }
    *count = 0;
    *clean_bytes = 0;
    *dirty_bytes = 0;
    int64_t horizon = INT64_MAX;
    if (p->min_compaction_lag_ms > 0 && p->now_ms > INT64_MIN + p->min_compaction_lag_ms) {
        horizon = p->now_ms - p->min_compaction_lag_ms;
    }
    struct br_log_segment_info cur;
    struct br_log_segment_info next;
    if (n < 2) {
        return 0;
    }
    int rc = br_log_segment_info(log, 0, &cur);
    for (size_t i = 0; rc == 0 && i + 1 < n; i++) {
        rc = br_log_segment_info(log, i + 1, &next);
        if (rc != 0) {
            break;
        }
        if (cur.size_bytes == 0) {
            break;
        }
        if (p->min_compaction_lag_ms > 0) {
            int64_t largest = cur.max_timestamp >= 0 ? cur.max_timestamp : cur.last_modified_ms;
            if (largest > horizon) {
                break;
            }
        }
        if (next.base_offset <= *first_dirty) {
            *clean_bytes += cur.size_bytes;
        } else {
            *dirty_bytes += cur.size_bytes;
        }
        (*count)++;
        cur = next;
    }
    return rc;
}

int br_clean_dirty_ratio(const struct br_log *log, const struct br_clean_params *p, double *ratio,
                         int64_t *dirty_bytes)
{
    size_t count = 0;
    int64_t first_dirty = 0;
    int64_t clean = 0;
    *ratio = 0;
    *dirty_bytes = 0;
    int rc = cleanable(log, p, &count, &first_dirty, &clean, dirty_bytes);
    if (rc == 0 && *dirty_bytes > 0) {
        *ratio = (double)*dirty_bytes / (double)(clean + *dirty_bytes);
    }
    return rc;
}

void br_clean_job_free(struct br_clean_job *job)
{
    if (job == NULL) {
        return;
    }
    for (size_t g = 0; g < job->ngroups; g++) {
        struct br_segment *s = job->groups[g].cleaned;
        if (s != NULL) {
            int64_t base = s->base_offset;
            br_segment_free(s);
            /* only the .cleaned names: a .swap was decided and is the next
             * open's to complete */
            if (br_segment_unlink_as(job->dir_fd, job->dir, base, BR_SEGMENT_CLEANED_TAIL) != 0) {
                br_warn("%s: cleaned segment %020" PRId64 " left behind; removed at the next start",
                        job->dir, base);
            }
        }
    }
    for (size_t i = 0; job->olds != NULL && i < job->nsegs; i++) {
        /* the reference was taken by br_log_segment_file on this thread */
        br_fileref_unref(job->olds[i].file);
    }
    if (job->dir_fd >= 0) {
        (void)close(job->dir_fd);
    }
    kp_free(job->groups);
    kp_free(job->olds);
    kp_free(job->next_base);
    kp_free(job->dir);
    kp_free(job);
}

int br_clean_job_prepare(struct br_log *log, const struct br_clean_params *p,
                         struct br_clean_job **out)
{
    *out = NULL;
    size_t count = 0;
    int64_t first_dirty = 0;
    int64_t clean = 0;
    int64_t dirty = 0;
    int rc = cleanable(log, p, &count, &first_dirty, &clean, &dirty);
    if (rc != 0 || count == 0 || dirty == 0) {
        return rc;
    }
    struct br_clean_job *job = kp_calloc(1, sizeof *job);
    if (job == NULL) {
        return KP_E_NOMEM;
    }
    job->dir_fd = -1;
    job->p = *p;
    job->p.first_dirty_offset = first_dirty;
    job->index_interval = br_log_config(log)->index_interval_bytes;
    size_t dlen = strlen(br_log_dir(log));
    job->dir = kp_malloc(dlen + 1);
    job->olds = kp_calloc(count, sizeof *job->olds);
    job->next_base = kp_calloc(count, sizeof *job->next_base);
    if (job->dir == NULL || job->olds == NULL || job->next_base == NULL) {
        rc = KP_E_NOMEM;
        goto out_free;
    }
    memcpy(job->dir, br_log_dir(log), dlen + 1);
    job->dir_fd = open(job->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (job->dir_fd < 0) {
        br_error("%s: open: %s", job->dir, strerror(errno));
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
        goto out_free;
    }
    for (size_t i = 0; i < count; i++) {
        struct br_log_segment_info si;
        struct br_log_segment_info next;
        rc = br_log_segment_info(log, i, &si);
        if (rc == 0) {
            rc = br_log_segment_info(log, i + 1, &next);
        }
        if (rc != 0) {
            goto out_free;
        }
        job->olds[i].id = si.id;
        job->olds[i].base_offset = si.base_offset;
        job->olds[i].size = si.size_bytes;
        job->olds[i].file = br_log_segment_file(log, i);
        job->nsegs = i + 1;
        if (job->olds[i].file == NULL) {
            rc = KP_ERR_KAFKA_STORAGE_ERROR; /* cannot be reopened: logged there */
            goto out_free;
        }
        job->next_base[i] = next.base_offset;
    }
    job->stats.first_dirty_offset = first_dirty;
    job->stats.cleaned_to = first_dirty;
    *out = job;
    return 0;

out_free:
    br_clean_job_free(job);
    return rc;
}

const struct br_clean_stats *br_clean_job_stats(const struct br_clean_job *job)
{
    return &job->stats;
}

/* ---------------------------------------------------------------- reading */

/* Walks the batches of one old segment, each checked whole (length, magic,
 * CRC, records: kp_batch_parse_lenient) before it is believed. */
struct reader {
    const struct br_clean_job *job;
    size_t seg;
    int fd;
    int64_t pos; /* the next batch */
    int64_t end;
    int64_t next_offset; /* the lowest BaseOffset the next batch may have */
    uint8_t *buf;        /* shared window, owned by the run */
    size_t *cap;
    int64_t win_pos;
    size_t win_len;
};

static void reader_init(struct reader *r, const struct br_clean_job *job, size_t seg, uint8_t **buf,
                        size_t *cap)
{
    r->job = job;
    r->seg = seg;
    r->fd = br_fileref_fd(job->olds[seg].file);
    r->pos = 0;
    r->end = job->olds[seg].size;
    r->next_offset = job->olds[seg].base_offset;
    r->buf = *buf;
    r->cap = cap;
    r->win_pos = 0;
    r->win_len = 0;
}

static int reader_fill(struct reader *r, uint8_t **buf, int64_t pos, size_t n)
{
    if (pos >= r->win_pos && (uint64_t)(pos - r->win_pos) <= r->win_len &&
        r->win_len - (size_t)(pos - r->win_pos) >= n) {
        return 0;
    }
    if (n > *r->cap) {
        uint8_t *nb = kp_realloc(*buf, n);
        if (nb == NULL) {
            return KP_E_NOMEM;
        }
        *buf = nb;
        *r->cap = n;
    }
    r->buf = *buf;
    size_t left = (size_t)(r->end - pos);
    size_t want = left < *r->cap ? left : *r->cap;
    size_t got = 0;
    if (br_pread_full(r->fd, r->buf, want, pos, &got) != 0) {
        br_error("%s/%020" PRId64 ".log: read at %" PRId64 ": %s", r->job->dir,
                 r->job->olds[r->seg].base_offset, pos, strerror(errno));
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    r->win_pos = pos;
    r->win_len = got;
    if (got < n) {
        br_error("%s/%020" PRId64 ".log: shorter than its %" PRId64 " bytes", r->job->dir,
                 r->job->olds[r->seg].base_offset, r->end);
        return KP_ERR_KAFKA_STORAGE_ERROR;
    }
    return 0;
}

static int reader_damage(const struct reader *r, int rc, const char *why)
{
    br_error("%s/%020" PRId64 ".log: batch at position %" PRId64 " cannot be cleaned: %s (%s)",
             r->job->dir, r->job->olds[r->seg].base_offset, r->pos, why, kp_err_name(rc));
    return rc;
}

/* 0 with the batch at *batch (valid until the next call), KP_ITER_END, or
 * an error (logged). */
static int reader_next(struct reader *r, uint8_t **buf, const uint8_t **batch, size_t *len,
                       struct kp_batch_header *h)
{
    if (r->pos >= r->end) {
        return KP_ITER_END;
    }
    size_t left = (size_t)(r->end - r->pos);
    if (left < KP_BATCH_HEADER_SIZE) {
        return reader_damage(r, KP_E_CORRUPT, "a partial batch header");
    }
    int rc = reader_fill(r, buf, r->pos, KP_BATCH_HEADER_SIZE);
    if (rc != 0) {
        return rc;
    }
    size_t size = 0;
    rc = kp_batch_peek(r->buf + (r->pos - r->win_pos), KP_BATCH_HEADER_SIZE, h, &size);
    if (rc != 0 || size > left) {
        return reader_damage(r, rc != 0 ? rc : KP_E_CORRUPT, "a bad batch header");
    }
    rc = reader_fill(r, buf, r->pos, size);
    if (rc != 0) {
        return rc;
    }
    const uint8_t *p = r->buf + (r->pos - r->win_pos);
    size_t bsize = 0;
    rc = kp_batch_parse_lenient(p, size, h, &bsize);
    if (rc != 0 || bsize != size) {
        return reader_damage(r, rc != 0 ? rc : KP_E_CORRUPT, "the batch does not validate");
    }
    int64_t last = h->BaseOffset + h->LastOffsetDelta;
    if (h->BaseOffset < r->next_offset || last >= r->job->next_base[r->seg]) {
        return reader_damage(r, KP_E_CORRUPT, "offsets out of order");
    }
    r->next_offset = last + 1;
    *batch = p;
    *len = size;
    r->pos += (int64_t)size;
    return 0;
}

/* ---------------------------------------------------------------- the run */

/* A transaction marker of the job's segments: how producer pid's
 * transaction that it ends ended. */
struct txn_end {
    int64_t pid;
    int64_t offset;
    bool commit;
};

enum txn_outcome { TXN_OPEN, TXN_COMMITTED, TXN_ABORTED };

struct run {
    struct br_clean_job *job;
    atomic_bool *stop;
    struct omap keys; /* key hash -> last offset in the dirty part */
    struct omap pids; /* producer id -> base offset of its last batch */
    uint8_t *buf;     /* read window */
    size_t cap;
    struct kp_record *recs; /* one batch's records */
    size_t recs_cap;
    bool *keep;
    struct kp_record_header *hdrs;
    size_t hdrs_cap;
    struct kp_writer out; /* one rebuilt batch */
    /* the transactions' markers in the job's segments, by (producer, offset) */
    struct txn_end *ends;
    size_t nends;
    size_t ends_cap;
};

static bool stopped(const struct run *r)
{
    return r->stop != NULL && atomic_load(r->stop);
}

/* The records of a batch into r->recs; *n of them. */
static int decode_records(struct run *r, struct kp_batch_iter *it, const uint8_t *batch, size_t len,
                          size_t *n)
{
    *n = 0;
    int rc = kp_batch_iter_init(it, batch, len, MAX_DECOMPRESSED);
    if (rc != 0) {
        return rc;
    }
    for (;;) {
        struct kp_record rec;
        rc = kp_batch_iter_next(it, &rec);
        if (rc == KP_ITER_END) {
            return 0;
        }
        if (rc != 0) {
            return rc;
        }
        if (*n == r->recs_cap) {
            size_t cap = r->recs_cap == 0 ? 256 : r->recs_cap * 2;
            struct kp_record *v = kp_realloc(r->recs, cap * sizeof *v);
            bool *k = kp_realloc(r->keep, cap * sizeof *k);
            if (v != NULL) {
                r->recs = v;
            }
            if (k != NULL) {
                r->keep = k;
            }
            if (v == NULL || k == NULL) {
                return KP_E_NOMEM;
            }
            r->recs_cap = cap;
        }
        r->recs[(*n)++] = rec;
    }
}

static int txn_end_cmp(const void *a, const void *b)
{
    const struct txn_end *x = a;
    const struct txn_end *y = b;
    if (x->pid != y->pid) {
        return x->pid < y->pid ? -1 : 1;
    }
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The largest control batch read for its marker (one record: a few dozen
 * bytes; a larger one is left alone, its transaction taken as open). */
#define MARKER_BATCH_MAX 4096

/* Walks the batch headers of segments [0, n) (validated when written: no
 * CRC), calling each(r, o, &h, pos, size) for every batch; the first
 * non-zero answer ends the walk and is returned. */
static int walk_headers(struct run *r, size_t n,
                        int (*each)(struct run *r, const struct br_log_swap_old *o,
                                    const struct kp_batch_header *h, int64_t pos, size_t size))
{
    uint8_t window[HEADER_WINDOW];
    for (size_t i = 0; i < n; i++) {
        const struct br_log_swap_old *o = &r->job->olds[i];
        struct br_cursor c;
        br_cursor_init(&c, br_fileref_fd(o->file), 0, o->size, window, sizeof window);
        for (;;) {
            if (stopped(r)) {
                return KP_AGAIN;
            }
            struct kp_batch_header h;
            size_t size = 0;
            int rc = br_cursor_peek(&c, &h, &size);
            if (rc == KP_ITER_END) {
                break;
            }
            if (rc != 0) {
                br_error("%s/%020" PRId64 ".log: damaged batch header at position %" PRId64,
                         r->job->dir, o->base_offset, c.pos);
                return rc;
            }
            rc = each(r, o, &h, c.pos, size);
            if (rc != 0) {
                return rc;
            }
            c.pos += (int64_t)size;
        }
    }
    return 0;
}

/* A control batch's marker into r->ends. */
static int note_marker(struct run *r, const struct br_log_swap_old *o,
                       const struct kp_batch_header *h, int64_t pos, size_t size)
{
    uint8_t batch[MARKER_BATCH_MAX];
    size_t got = 0;
    struct kp_txn_marker m;
    if (!kp_batch_is_control(h) || h->ProducerId < 0 || size > sizeof batch ||
        br_pread_full(br_fileref_fd(o->file), batch, size, pos, &got) != 0 || got != size ||
        kp_txn_marker_batch_read(batch, size, MARKER_BATCH_MAX, &m) != 0) {
        return 0;
    }
    if (r->nends == r->ends_cap) {
        size_t cap = r->ends_cap == 0 ? 64 : r->ends_cap * 2;
        struct txn_end *v = kp_realloc(r->ends, cap * sizeof *v);
        if (v == NULL) {
            return KP_E_NOMEM;
        }
        r->ends = v;
        r->ends_cap = cap;
    }
    r->ends[r->nends++] = (struct txn_end){h->ProducerId, h->BaseOffset, m.type == KP_CONTROL_COMMIT};
    return 0;
}

/* Pass 0: the markers of every segment of the job (headers walked, control
 * batches read), sorted by producer and offset. */
static int find_markers(struct run *r)
{
    int rc = walk_headers(r, r->job->nsegs, note_marker);
    if (rc == 0 && r->nends > 1) {
        qsort(r->ends, r->nends, sizeof *r->ends, txn_end_cmp);
    }
    return rc;
}

/* How the transaction of a transactional batch h ended: by its producer's
 * first marker after it in the job's segments (Kafka's
 * CleanedTransactionMetadata reads the same from the aborted-transaction
 * index and the markers); open when none is there yet. */
static enum txn_outcome txn_outcome(const struct run *r, const struct kp_batch_header *h)
{
    size_t lo = 0;
    size_t hi = r->nends;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct txn_end *e = &r->ends[mid];
        if (e->pid < h->ProducerId || (e->pid == h->ProducerId && e->offset <= h->BaseOffset)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == r->nends || r->ends[lo].pid != h->ProducerId) {
        return TXN_OPEN;
    }
    return r->ends[lo].commit ? TXN_COMMITTED : TXN_ABORTED;
}

/* Pass 1: key -> last offset over the dirty part, from segment `from`.
 * *mapped: segments [0, *mapped) are covered. */
static int build_map(struct run *r, size_t from, size_t *mapped)
{
    struct br_clean_job *job = r->job;
    *mapped = from;
    for (size_t i = from; i < job->nsegs; i++) {
        /* the first dirty segment always fits: the cleaner must progress */
        r->keys.unbounded = i == from;
        struct reader rd;
        reader_init(&rd, job, i, &r->buf, &r->cap);
        for (;;) {
            if (stopped(r)) {
                return KP_AGAIN;
            }
            const uint8_t *batch = NULL;
            size_t len = 0;
            struct kp_batch_header h;
            int rc = reader_next(&rd, &r->buf, &batch, &len, &h);
            if (rc == KP_ITER_END) {
                break;
            }
            if (rc != 0) {
                return rc;
            }
            /* an aborted transaction's records are no key's latest value
             * (they must not hide the value they would have replaced), nor
             * is an open one's, which may still abort (Kafka's
             * buildOffsetMapForSegment skips aborted transactions and
             * cleans only below the first unstable offset); a committed
             * one's are like any other */
            if (h.BaseOffset + h.LastOffsetDelta < job->p.first_dirty_offset ||
                kp_batch_is_control(&h) ||
                (kp_batch_is_transactional(&h) && txn_outcome(r, &h) != TXN_COMMITTED)) {
                continue;
            }
            struct kp_batch_iter it;
            size_t n = 0;
            rc = decode_records(r, &it, batch, len, &n);
            for (size_t k = 0; rc == 0 && k < n; k++) {
                const struct kp_record *rec = &r->recs[k];
                if (rec->Key.len < 0 || rec->Offset < job->p.first_dirty_offset) {
                    continue;
                }
                uint64_t hh[2];
                hash128(rec->Key.ptr, (size_t)rec->Key.len, hh);
                rc = omap_put(&r->keys, hh[0], hh[1], rec->Offset);
            }
            kp_batch_iter_free(&it);
            if (rc == KP_E_TOO_LARGE) {
                /* full: clean up to this segment; the keys it added point
                 * at records that stay where they are */
                return 0;
            }
            if (rc != 0) {
                return reader_damage(&rd, rc, "its records cannot be read");
            }
        }
        *mapped = i + 1;
    }
    return 0;
}

/* A producer's batch: the last one seen so far of its producer. */
static int note_producer(struct run *r, const struct br_log_swap_old *o,
                         const struct kp_batch_header *h, int64_t pos, size_t size)
{
    (void)o;
    (void)pos;
    (void)size;
    if (h->ProducerId < 0) {
        return 0;
    }
    int rc = omap_put(&r->pids, (uint64_t)h->ProducerId, 0, h->BaseOffset);
    return rc == KP_E_TOO_LARGE ? 0 : rc;
}

/* Pass 2: each producer's last batch in the segments to rewrite (headers
 * only; the batches are validated when rewritten). */
static int find_producers(struct run *r)
{
    return walk_headers(r, r->job->nclean, note_producer);
}

static bool last_of_producer(const struct run *r, const struct kp_batch_header *h)
{
    int64_t base = -1;
    return h->ProducerId >= 0 && omap_get(&r->pids, (uint64_t)h->ProducerId, 0, &base) &&
           base == h->BaseOffset;
}

static int append(struct run *r, struct br_segment *out, const uint8_t *batch, size_t len)
{
    struct kp_batch_header h;
    size_t size = 0;
    if (kp_batch_peek(batch, len, &h, &size) != 0 || size != len) {
        return KP_E_CORRUPT;
    }
    int rc = br_segment_append(out, r->job->dir, batch, len, h.BaseOffset + h.LastOffsetDelta,
                               h.MaxTimestamp, r->job->index_interval);
    if (rc == 0 && out->io_failed) {
        rc = KP_ERR_KAFKA_STORAGE_ERROR;
    }
    r->job->stats.bytes_after += (int64_t)len;
    return rc;
}

/* Rebuilds the batch with the records marked in r->keep (possibly none). */
static int rebuild(struct run *r, struct br_segment *out, const struct kp_batch_header *h, size_t n)
{
    struct kp_batch_builder bb;
    int codec = kp_batch_codec(h);
    int rc = kp_batch_builder_init(&bb, codec, h->BaseOffset, h->BaseTimestamp, h->ProducerId,
                                   h->ProducerEpoch, h->BaseSequence, (size_t)INT32_MAX);
    if (rc != 0) {
        kp_batch_builder_free(&bb);
        return rc;
    }
    kp_batch_builder_set_timestamp_type(&bb, kp_batch_timestamp_type(h));
    kp_batch_builder_set_flags(&bb, kp_batch_is_transactional(h), false);
    kp_batch_builder_set_leader_epoch(&bb, h->PartitionLeaderEpoch);
    kp_batch_builder_set_last_offset_delta(&bb, h->LastOffsetDelta);
    size_t kept = 0;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        if (!r->keep[k]) {
            continue;
        }
        const struct kp_record *rec = &r->recs[k];
        size_t nh = 0;
        struct kp_header_iter hi;
        kp_record_headers_init(&hi, rec);
        for (;;) {
            struct kp_record_header hd;
            int hr = kp_record_header_next(&hi, &hd);
            if (hr == KP_ITER_END) {
                break;
            }
            if (hr != 0) {
                rc = hr;
                break;
            }
            if (nh == r->hdrs_cap) {
                size_t cap = r->hdrs_cap == 0 ? 16 : r->hdrs_cap * 2;
                struct kp_record_header *v = kp_realloc(r->hdrs, cap * sizeof *v);
                if (v == NULL) {
                    rc = KP_E_NOMEM;
                    break;
                }
                r->hdrs = v;
                r->hdrs_cap = cap;
            }
            r->hdrs[nh++] = hd;
        }
        if (rc == 0) {
            /* the stored timestamp, not the reported one (LogAppendTime
             * batches report MaxTimestamp for every record) */
            int64_t ts = h->BaseTimestamp + rec->TimestampDelta;
            rc = kp_batch_builder_add(&bb, rec->OffsetDelta, ts, rec->Key, rec->Value, r->hdrs, nh);
        }
        kept++;
    }
    if (rc == 0) {
        if (kept > 0 && kp_batch_timestamp_type(h) == KP_TS_LOG_APPEND_TIME) {
            bb.MaxTimestamp = h->MaxTimestamp;
        }
        kp_wr_reset(&r->out);
        rc = kp_batch_builder_finish(&bb, &r->out);
    }
    kp_batch_builder_free(&bb);
    if (rc == 0) {
        r->job->stats.batches_rebuilt++;
        rc = append(r, out, r->out.buf, r->out.len);
    }
    return rc;
}

/* One old batch into the cleaned segment. *dropped when nothing of it was
 * written. */
static int clean_batch(struct run *r, struct br_segment *out, const uint8_t *batch, size_t len,
                       const struct kp_batch_header *h, bool *dropped)
{
    struct br_clean_job *job = r->job;
    *dropped = false;
    job->stats.records_read += h->RecordCount;
    enum txn_outcome txn = kp_batch_is_transactional(h) ? txn_outcome(r, h) : TXN_COMMITTED;
    if (kp_batch_is_control(h) || txn == TXN_OPEN) {
        /* markers stay (Kafka removes one only once its transaction's
         * records are all gone and delete.retention.ms passed); an open
         * transaction's records stay whole */
        job->stats.records_kept += h->RecordCount;
        return append(r, out, batch, len);
    }
    if (txn == TXN_ABORTED) {
        /* Kafka's cleaner discards an aborted transaction's batches
         * (shouldDiscardBatch): its marker and the .txnindex entry stay */
        job->stats.aborted_dropped += h->RecordCount;
        if (last_of_producer(r, h)) {
            return rebuild(r, out, h, 0); /* the producer's state needs a batch */
        }
        *dropped = true;
        return 0;
    }
    struct kp_batch_iter it;
    size_t n = 0;
    int rc = decode_records(r, &it, batch, len, &n);
    if (rc != 0) {
        kp_batch_iter_free(&it);
        return rc;
    }
    int64_t horizon = job->p.now_ms - job->p.delete_retention_ms;
    size_t kept = 0;
    for (size_t k = 0; k < n; k++) {
        const struct kp_record *rec = &r->recs[k];
        bool keep = true;
        if (rec->Key.len >= 0) {
            uint64_t hh[2];
            int64_t latest = -1;
            hash128(rec->Key.ptr, (size_t)rec->Key.len, hh);
            if (omap_get(&r->keys, hh[0], hh[1], &latest) && latest > rec->Offset) {
                keep = false; /* a later record of the key exists */
            } else if (rec->Value.len < 0 && rec->Timestamp < horizon) {
                keep = false; /* a tombstone past delete.retention.ms */
                job->stats.tombstones_dropped++;
            }
        }
        r->keep[k] = keep;
        kept += keep ? 1u : 0u;
    }
    job->stats.records_kept += (int64_t)kept;
    if (kept == n) {
        rc = append(r, out, batch, len);
    } else if (kept > 0 || last_of_producer(r, h)) {
        rc = rebuild(r, out, h, n);
    } else {
        *dropped = true;
    }
    kp_batch_iter_free(&it);
    return rc;
}

/* Rewrites old segment i into out. *last_dropped and *last_h follow the
 * last batch seen: whether nothing of it was written, and its header. */
static int clean_segment(struct run *r, struct br_segment *out, size_t i, bool *last_dropped,
                         struct kp_batch_header *last_h)
{
    struct br_clean_job *job = r->job;
    struct reader rd;
    reader_init(&rd, job, i, &r->buf, &r->cap);
    job->stats.bytes_before += job->olds[i].size;
    for (;;) {
        if (stopped(r)) {
            return KP_AGAIN;
        }
        const uint8_t *batch = NULL;
        size_t len = 0;
        struct kp_batch_header h;
        int rc = reader_next(&rd, &r->buf, &batch, &len, &h);
        if (rc == KP_ITER_END) {
            return 0;
        }
        if (rc != 0) {
            return rc;
        }
        rc = clean_batch(r, out, batch, len, &h, last_dropped);
        if (rc != 0) {
            return reader_damage(&rd, rc, "it cannot be rewritten");
        }
        if (*last_dropped) {
            *last_h = h;
        }
    }
}

/* Ends a group: its end offset kept (an empty batch in place of a dropped
 * last batch), the final time-index entry, everything flushed. */
static int close_group(struct run *r, struct job_group *g, bool last_dropped,
                       const struct kp_batch_header *last_h)
{
    int rc = 0;
    if (last_dropped) {
        rc = rebuild(r, g->cleaned, last_h, 0);
    }
    if (rc == 0) {
        rc = br_segment_seal(g->cleaned, r->job->dir);
    }
    if (rc == 0) {
        rc = br_segment_flush(g->cleaned, r->job->dir);
    }
    return rc;
}

/*
 * Pass 3: segments [0, nclean) rewritten in groups, each into one cleaned
 * segment named after the group's first. A group takes old segments while
 * its cleaned segment stays within segment.bytes (measured on what was
 * written: an old segment that overflows it is cut off again and starts
 * the next group) and its offsets fit 32-bit relative offsets. A group of
 * one old segment is never refused.
 */
static int write_groups(struct run *r)
{
    struct br_clean_job *job = r->job;
    job->groups = kp_calloc(job->nclean, sizeof *job->groups);
    if (job->groups == NULL) {
        return KP_E_NOMEM;
    }
    struct job_group *g = NULL;
    bool last_dropped = false;
    struct kp_batch_header last_h;
    memset(&last_h, 0, sizeof last_h);
    size_t i = 0;
    int rc = 0;
    while (rc == 0 && i < job->nclean) {
        if (g == NULL) {
            g = &job->groups[job->ngroups];
            g->first = i;
            g->n = 0;
            rc = br_segment_create_as(job->dir_fd, job->dir, job->olds[i].base_offset,
                                      BR_SEGMENT_CLEANED_TAIL, &g->cleaned);
            if (rc != 0) {
                return rc;
            }
            job->ngroups++;
            last_dropped = false;
        }
        int64_t base = job->olds[g->first].base_offset;
        if (g->n > 0 && job->next_base[i] - 1 - base > INT32_MAX) {
            rc = close_group(r, g, last_dropped, &last_h);
            g = NULL;
            continue;
        }
        struct br_clean_stats saved = job->stats;
        bool saved_dropped = last_dropped;
        struct kp_batch_header saved_h = last_h;
        int64_t size_before = g->cleaned->size;
        rc = clean_segment(r, g->cleaned, i, &last_dropped, &last_h);
        if (rc != 0) {
            return rc;
        }
        if (g->n > 0 && g->cleaned->size > job->p.segment_bytes) {
            /* too much: segment i goes to the next group */
            rc = br_segment_truncate(g->cleaned, job->dir, job->olds[i].base_offset,
                                     job->index_interval);
            if (rc == 0 && g->cleaned->size != size_before) {
                rc = KP_E_CORRUPT;
            }
            if (rc != 0) {
                return rc;
            }
            job->stats = saved;
            rc = close_group(r, g, saved_dropped, &saved_h);
            g = NULL;
            continue;
        }
        g->n++;
        i++;
    }
    if (rc == 0 && g != NULL) {
        rc = close_group(r, g, last_dropped, &last_h);
    }
    return rc;
}

int br_clean_job_run(struct br_clean_job *job, atomic_bool *stop)
{
    int64_t t0 = mono_ms();
    struct run r;
    memset(&r, 0, sizeof r);
    r.job = job;
    r.stop = stop;
    kp_wr_init(&r.out, (size_t)INT32_MAX);
    int rc = omap_init(&r.keys, job->p.max_map_entries);
    if (rc == 0) {
        rc = omap_init(&r.pids, SIZE_MAX / 2);
        r.pids.unbounded = true;
    }
    r.cap = READ_WINDOW;
    r.buf = kp_malloc(r.cap);
    if (rc == 0 && r.buf == NULL) {
        rc = KP_E_NOMEM;
    }
    size_t first = 0;
    while (first < job->nsegs && job->next_base[first] <= job->p.first_dirty_offset) {
        first++;
    }
    size_t mapped = first;
    if (rc == 0) {
        rc = find_markers(&r);
    }
    if (rc == 0) {
        rc = build_map(&r, first, &mapped);
    }
    job->stats.map_keys = r.keys.n;
    job->nclean = mapped;
    if (rc == 0 && mapped > first) {
        job->stats.cleaned_to = job->next_base[mapped - 1];
        job->stats.segments_before = mapped;
        rc = find_producers(&r);
        if (rc == 0) {
            rc = write_groups(&r);
        }
        job->stats.segments_after = job->ngroups;
    }
    kp_wr_free(&r.out);
    omap_free(&r.keys);
    omap_free(&r.pids);
    kp_free(r.buf);
    kp_free(r.recs);
    kp_free(r.keep);
    kp_free(r.hdrs);
    kp_free(r.ends);
    job->stats.elapsed_ms = mono_ms() - t0;
    return rc;
}

int br_clean_job_commit(struct br_log *log, struct br_clean_job *job, bool *swapped)
{
    *swapped = false;
    if (job->ngroups == 0) {
        return 0;
    }
    struct br_log_swap_group *groups = kp_calloc(job->ngroups, sizeof *groups);
    if (groups == NULL) {
        return KP_E_NOMEM;
    }
    for (size_t g = 0; g < job->ngroups; g++) {
        groups[g].old = job->olds + job->groups[g].first;
        groups[g].nold = job->groups[g].n;
        groups[g].cleaned = job->groups[g].cleaned;
    }
    size_t n = 0;
    int rc = br_log_swap_cleaned(log, groups, job->ngroups, &n);
    for (size_t g = 0; g < n; g++) {
        job->groups[g].cleaned = NULL; /* the log's now */
    }
    kp_free(groups);
    *swapped = rc == 0 && n == job->ngroups;
    return rc;
}

size_t br_clean_map_entries(size_t threads)
{
    return MAP_BUDGET_BYTES / (threads > 0 ? threads : 1) / sizeof(struct map_slot) * 7 / 10;
}
