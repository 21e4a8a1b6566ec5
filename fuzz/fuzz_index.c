/*
 * fuzz_index: the offset and time indexes of a segment the broker trusts (one
 * wholly below the recovery point, which start-up does not re-validate), and
 * the lookups that read the log through them.
 *
 * Input:
 *   byte 0      flags: bits 0-1 the .index and bits 2-3 the .timeindex, each
 *               0 the given bytes, 1 as the broker writes it (br_segment_append
 *               of every batch, then br_segment_seal, as at a roll), 2 the
 *               broker's bytes XOR the given ones (given bytes past its end
 *               are appended), 3 missing; bit 4 the .log comes from the input
 *               (its leading run of batches that make a valid segment, every
 *               CRC recomputed), else a built-in log of eight batches (offset
 *               gaps, a compacted batch, timestamps going back, a control
 *               batch, gzip); bit 5 also open the segment as the first of two
 *               of a partition, below the recovery point (br_log_open), and
 *               read it with br_log_read and br_log_offset_for_timestamp (else
 *               the segment is truncated at the offset of bytes 6-9); bit 6
 *               the base offset is one below the first batch's; bit 7 the next
 *               segment starts right after the last batch (else this is the
 *               last segment, or, with bit 5, the next one starts 7 later)
 *   byte 1      index.interval.bytes / 16 for the indexes the broker writes
 *   bytes 2-3   L, bytes 4-5 T (big-endian): the lengths of the given .index
 *               and .timeindex bytes
 *   bytes 6-9   an offset to look up, relative to the base offset (int32)
 *   bytes 10-17 a timestamp to look up (int64)
 *   then L bytes for the .index, T bytes for the .timeindex, and with bit 4
 *   the .log bytes
 *
 * br_segment_open loads the indexes of a segment it does not scan; the
 * harness knows every batch of the segment and checks:
 *   - the broker writes indexes whose every entry matches its batch (an
 *     offset entry: the position of a batch and that batch's last offset; a
 *     time entry: a timestamp no earlier batch reaches), the time index
 *     ending with the segment's largest timestamp;
 *   - open succeeds; with no problem reported every entry of both files is
 *     loaded as written; entries that break the structural rules (torn file,
 *     negative, not increasing, positions past the end, offsets reaching the
 *     next segment) are never loaded without a problem; a missing file is a
 *     problem;
 *   - br_segment_lookup returns the position of the last loaded entry at or
 *     below the offset (0 when none), in [0, size]; br_segment_time_lookup
 *     the offset of the last entry at or below the timestamp (the base
 *     offset when none), in [base, limit);
 *   - when the entry a lookup used matches the log, the position is a batch
 *     boundary at or before the batch holding the offset, the time lookup's
 *     offset is at or before the first batch whose MaxTimestamp reaches the
 *     timestamp, and br_cursor walks from there over true boundaries to
 *     exactly those batches; with bit 5, br_log_read serves the batch holding
 *     the offset and br_log_offset_for_timestamp answers inside the first
 *     batch reaching the timestamp; without it, br_segment_truncate cuts
 *     exactly the batches from the one holding the offset on, and the size,
 *     the file, the next offset and the entries left agree with that;
 *   - whatever the entries, the cursor and the log's reads fail only with
 *     KP_E_CORRUPT (damage found in a trusted segment).
 * An offset entry that passes the structural rules but does not match the
 * log (a position inside a batch, an offset below its batch's) is caught
 * when a lookup would use it: br_segment_lookup answers 0 and the segment is
 * read from its start, so reads and truncation stay exact whatever the
 * .index holds (checked). A time entry is checked against the batch holding
 * its offset (its MaxTimestamp must be the entry's timestamp). One that
 * passes that but not the log as a whole (an earlier batch already reaches
 * its timestamp) can still make the time lookup answer a later batch: such
 * misreads are counted, and printed with FUZZ_LOG set; with
 * FUZZ_INDEX_STRICT set they are findings (see README.md).
 */
#define _GNU_SOURCE

#include "fuzz.h"
#include "fuzz_tmp.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/crc.h>
#include <samsa-protocol/err.h>
#include <samsa-protocol/record_batch.h>

#include "base/logging.h"
#include "storage/log.h"
#include "storage/segment.h"

#define HEADER 18
#define IDX_GIVEN 0
#define IDX_BROKER 1
#define IDX_PATCHED 2
#define IDX_MISSING 3
#define F_LOG_FROM_INPUT 0x10
#define F_OPEN_LOG 0x20
#define F_BASE_GAP 0x40
#define F_TIGHT_LIMIT 0x80
#define LIMIT_GAP 7
#define BUILTIN_BASE INT64_C(1000)
#define MAX_BATCHES 1024
/* offsets of input batches stay far from INT64_MAX: limits and gaps add to them */
#define MAX_INPUT_OFFSET (INT64_MAX / 4)
#define PROBLEM_CAP 160
#define WINDOW ((size_t)64 * 1024)
/* lookups per kind of query point (batches, entries): spread over the segment */
#define SAMPLES 48
#define MAX_QUERIES 512
#define SECOND_TS INT64_C(2500)

struct batch {
    int64_t pos;
    int64_t size;
    int64_t base;
    int64_t last;
    int64_t max_ts;
};

/* What the harness knows of the segment. */
struct model {
    int64_t base;  /* the segment's base offset */
    int64_t limit; /* the next segment's base offset (INT64_MAX: none) */
    int64_t next;  /* one past the last batch's last offset */
    const uint8_t *log;
    size_t len;
    struct batch *b; /* in file order */
    size_t nb;
    int64_t *prefix_max; /* [k]: the largest MaxTimestamp of b[0..k) */
    int64_t max_ts;      /* the largest MaxTimestamp, INT64_MIN when none */
};

static char tmp_root[128];
static char part_dir[192];
static uint8_t window[WINDOW];
static long misreads;
static bool strict_trust;
static bool verbose;

static void remove_tmp_root(void)
{
    if (br_log_dir_remove(part_dir) != 0) {
        (void)fprintf(stderr, "fuzz_index: cannot remove %s\n", part_dir);
    }
    (void)rmdir(tmp_root);
    if (misreads > 0) {
        (void)fprintf(stderr, "fuzz_index: %ld misread(s) through trusted index entries\n",
                      misreads);
    }
}

static bool make_tmp_root(void)
{
    if (tmp_root[0] != '\0') {
        return true;
    }
    if (!fuzz_make_tmp_dir(tmp_root, sizeof tmp_root, "index")) {
        return false;
    }
    (void)snprintf(part_dir, sizeof part_dir, "%s/t-0", tmp_root);
    (void)atexit(remove_tmp_root);
    strict_trust = getenv("FUZZ_INDEX_STRICT") != NULL;
    verbose = getenv("FUZZ_LOG") != NULL;
    return true;
}

static void segment_path(int64_t base, const char *suffix, char *path, size_t cap)
{
    (void)snprintf(path, cap, "%s/%020" PRId64 ".%s", part_dir, base, suffix);
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    fuzz_check(fd >= 0, "cannot create an input file", errno);
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        fuzz_check(w > 0, "cannot write an input file", errno);
        done += (size_t)w;
    }
    (void)close(fd);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    fuzz_check(fd >= 0, "a segment file is missing", errno);
    struct stat st;
    fuzz_check(fstat(fd, &st) == 0, "fstat", errno);
    fuzz_check(st.st_size <= (off_t)FUZZ_MAX_INPUT * 4, "an index grew beyond the input", 0);
    uint8_t *buf = kp_malloc((size_t)st.st_size + 1);
    fuzz_check(buf != NULL, "out of memory", 0);
    ssize_t got = pread(fd, buf, (size_t)st.st_size, 0);
    fuzz_check(got == st.st_size, "short read", (int)got);
    (void)close(fd);
    *len = (size_t)st.st_size;
    return buf;
}

/* ------------------------------------------------------------- the log */

/* Appends one batch (records at consecutive offsets from base, or the
 * given deltas) to w. */
static void builtin_batch(struct kp_writer *w, int64_t base, int codec, int nrec, int64_t ts,
                          int32_t last_delta, bool control, size_t vlen)
{
    static const uint8_t filler[700] = {0};
    struct kp_batch_builder b;
    int rc = kp_batch_builder_init(&b, codec, base, ts, -1, -1, -1, (size_t)1 << 20);
    fuzz_check(rc == 0, "builder", rc);
    kp_batch_builder_set_leader_epoch(&b, 3);
    if (control) {
        kp_batch_builder_set_flags(&b, true, true);
    }
    if (last_delta >= 0) {
        kp_batch_builder_set_last_offset_delta(&b, last_delta);
    }
    for (int i = 0; i < nrec; i++) {
        struct kp_bytes v = {filler, (int32_t)(vlen < sizeof filler ? vlen : sizeof filler)};
        struct kp_bytes k = KP_BYTES_NULL;
        static const uint8_t marker_key[] = {0, 0, 0, 1};
        static const uint8_t marker_value[] = {0, 0, 0, 0, 0, 5};
        if (control) {
            k.ptr = marker_key;
            k.len = (int32_t)sizeof marker_key;
            v.ptr = marker_value;
            v.len = (int32_t)sizeof marker_value;
        }
        int32_t delta = last_delta >= 0 ? 1 + 3 * i : KP_OFFSET_DELTA_AUTO;
        rc = kp_batch_builder_add(&b, delta, ts + i, k, v, NULL, 0);
        fuzz_check(rc == 0, "builder add", rc);
    }
    rc = kp_batch_builder_finish(&b, w);
    fuzz_check(rc == 0, "builder finish", rc);
    kp_batch_builder_free(&b);
}

/* The built-in log: eight batches from BUILTIN_BASE, made once. */
static const uint8_t *builtin_log(size_t *len)
{
    static uint8_t *log;
    static size_t log_len;
    if (log != NULL) {
        *len = log_len;
        return log;
    }
    static const struct {
        int skip; /* offsets left out before the batch */
        int nrec;
        int64_t ts;
        int32_t last_delta; /* -1: the records' */
        int codec;
        bool control;
        size_t vlen;
    } plan[] = {
        {0, 3, 1000, -1, KP_CODEC_NONE, false, 40}, {0, 1, 999, -1, KP_CODEC_NONE, false, 200},
        {0, 2, 1500, 5, KP_CODEC_NONE, false, 10},  {3, 2, 1500, -1, KP_CODEC_GZIP, false, 300},
        {0, 1, 1600, -1, KP_CODEC_NONE, true, 0},   {0, 4, 2000, -1, KP_CODEC_NONE, false, 64},
        {0, 1, 1700, -1, KP_CODEC_NONE, false, 5},  {0, 2, 3000, -1, KP_CODEC_NONE, false, 700},
    };
    struct kp_writer w;
    kp_wr_init(&w, (size_t)1 << 20);
    int64_t next = BUILTIN_BASE;
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
        int64_t base = next + plan[i].skip;
        builtin_batch(&w, base, plan[i].codec, plan[i].nrec, plan[i].ts, plan[i].last_delta,
                      plan[i].control, plan[i].vlen);
        int32_t span = plan[i].last_delta >= 0 ? plan[i].last_delta : plan[i].nrec - 1;
        next = base + span + 1;
    }
    log = kp_wr_steal(&w, &log_len);
    fuzz_check(log != NULL, "out of memory", 0);
    *len = log_len;
    return log;
}

/*
 * The batches of p[0..len) as recovery would keep them: the leading run that
 * parses leniently once its CRC is recomputed (in place), with offsets
 * increasing, within 32 bits of the first and far from INT64_MAX. Returns
 * the bytes kept.
 */
static size_t scan_log(uint8_t *p, size_t len, bool fix_crc, struct batch *b, size_t max,
                       size_t *nb)
{
    size_t pos = 0;
    int64_t next = 0;
    int64_t first = -1;
    *nb = 0;
    while (len - pos >= KP_BATCH_HEADER_SIZE && *nb < max) {
        int32_t bl = (int32_t)kp_load_be32(p + pos + 8);
        if (bl < KP_BATCH_MIN_LENGTH || (size_t)bl > len - pos - KP_BATCH_LOG_OVERHEAD ||
            p[pos + 16] != KP_BATCH_MAGIC) {
            break;
        }
        size_t size = (size_t)bl + KP_BATCH_LOG_OVERHEAD;
        if (fix_crc) {
            kp_store_be32(p + pos + 17,
                          kp_crc32c(0, p + pos + KP_BATCH_CRC_START, size - KP_BATCH_CRC_START));
        }
        struct kp_batch_header h;
        size_t got = 0;
        if (kp_batch_parse_lenient(p + pos, len - pos, &h, &got) != 0 || got != size ||
            h.BaseOffset < next || h.BaseOffset > MAX_INPUT_OFFSET) {
            break;
        }
        int64_t last = kp_batch_last_offset(&h);
        if (first < 0) {
            first = h.BaseOffset;
        }
        /* the base may be one below the first batch: keep one offset spare */
        if (last - first >= INT32_MAX || pos + size > (size_t)INT32_MAX) {
            break;
        }
        b[*nb].pos = (int64_t)pos;
        b[*nb].size = (int64_t)size;
        b[*nb].base = h.BaseOffset;
        b[*nb].last = last;
        b[*nb].max_ts = h.MaxTimestamp;
        (*nb)++;
        next = last + 1;
        pos += size;
    }
    return pos;
}

static void model_finish(struct model *m)
{
    m->prefix_max = kp_malloc((m->nb + 1) * sizeof *m->prefix_max);
    fuzz_check(m->prefix_max != NULL, "out of memory", 0);
    m->prefix_max[0] = INT64_MIN;
    for (size_t k = 0; k < m->nb; k++) {
        int64_t t = m->b[k].max_ts;
        m->prefix_max[k + 1] = t > m->prefix_max[k] ? t : m->prefix_max[k];
    }
    m->max_ts = m->prefix_max[m->nb];
    m->next = m->nb > 0 ? m->b[m->nb - 1].last + 1 : m->base;
}

/* The batch at exactly pos, or -1. */
static long batch_at(const struct model *m, int64_t pos)
{
    size_t lo = 0;
    size_t hi = m->nb;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->b[mid].pos < pos) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < m->nb && m->b[lo].pos == pos ? (long)lo : -1;
}

/* The first batch whose last offset is >= offset (m->nb when none). */
static size_t batch_holding(const struct model *m, int64_t offset)
{
    size_t lo = 0;
    size_t hi = m->nb;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->b[mid].last < offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The first batch whose MaxTimestamp is >= ts (m->nb when none). */
static size_t batch_reaching(const struct model *m, int64_t ts)
{
    size_t k = 0;
    while (k < m->nb && m->b[k].max_ts < ts) {
        k++;
    }
    return k;
}

/* An offset entry matches the log when it gives a batch's position and an
 * offset at or past that batch's last (the broker writes exactly the last):
 * a lookup through it then starts at or before the batch it wants. */
static bool offset_entry_matches(const struct model *m, int32_t rel, int32_t pos, bool exact)
{
    long k = batch_at(m, pos);
    if (k < 0) {
        return false;
    }
    int64_t off = m->base + rel;
    return exact ? m->b[k].last == off : m->b[k].last <= off;
}

/* What br_segment_lookup checks of an entry read from the file: a batch
 * header parses at its position, ends at its offset and inside the log. A
 * header nested in a record's value can pass that without being a batch of
 * the log. */
static bool header_at_matches(const struct model *m, int32_t rel, int32_t pos)
{
    if (pos < 0 || (size_t)pos >= m->len) {
        return false;
    }
    struct kp_batch_header h;
    size_t size = 0;
    int64_t last = 0;
    int64_t want = 0;
    return kp_batch_peek(m->log + pos, m->len - (size_t)pos, &h, &size) == 0 &&
           !__builtin_add_overflow(h.BaseOffset, (int64_t)h.LastOffsetDelta, &last) &&
           !__builtin_add_overflow(m->base, (int64_t)rel, &want) && last == want &&
           size <= m->len - (size_t)pos;
}

/* True when every entry the lookup check would accept is a true one: no
 * entry sits on a header nested inside a record's value. */
static bool no_nested_entries(const struct model *m, const struct br_segment *s)
{
    for (size_t i = 0; i < s->oidx_n; i++) {
        if (!offset_entry_matches(m, s->oidx[i].rel, s->oidx[i].pos, true) &&
            header_at_matches(m, s->oidx[i].rel, s->oidx[i].pos)) {
            return false;
        }
    }
    return true;
}

/* A time entry matches the log when its offset lies in the log and no batch
 * before the one holding it reaches its timestamp. */
static bool time_entry_matches(const struct model *m, int64_t ts, int32_t rel)
{
    size_t k = batch_holding(m, m->base + rel);
    return k < m->nb && m->prefix_max[k] < ts;
}

/* ------------------------------------------------------------- index files */

/* The structural rules of segment.h for the bytes of both files. */
static bool offset_file_sound(const struct model *m, const uint8_t *p, size_t len)
{
    if (len % BR_OFFSET_ENTRY_SIZE != 0) {
        return false;
    }
    for (size_t i = 0; i < len / BR_OFFSET_ENTRY_SIZE; i++) {
        int32_t rel = (int32_t)kp_load_be32(p + i * BR_OFFSET_ENTRY_SIZE);
        int32_t pos = (int32_t)kp_load_be32(p + i * BR_OFFSET_ENTRY_SIZE + 4);
        if (rel < 0 || pos < 0 || (int64_t)pos >= (int64_t)m->len || m->base + rel >= m->limit) {
            return false;
        }
        if (i > 0 && (rel <= (int32_t)kp_load_be32(p + (i - 1) * BR_OFFSET_ENTRY_SIZE) ||
                      pos <= (int32_t)kp_load_be32(p + (i - 1) * BR_OFFSET_ENTRY_SIZE + 4))) {
            return false;
        }
    }
    return true;
}

static bool time_file_sound(const struct model *m, const uint8_t *p, size_t len)
{
    if (len % BR_TIME_ENTRY_SIZE != 0) {
        return false;
    }
    for (size_t i = 0; i < len / BR_TIME_ENTRY_SIZE; i++) {
        int64_t ts = (int64_t)kp_load_be64(p + i * BR_TIME_ENTRY_SIZE);
        int32_t rel = (int32_t)kp_load_be32(p + i * BR_TIME_ENTRY_SIZE + 8);
        if (ts < 0 || rel < 0 || m->base + rel >= m->limit) {
            return false;
        }
        if (i > 0 && (ts <= (int64_t)kp_load_be64(p + (i - 1) * BR_TIME_ENTRY_SIZE) ||
                      rel < (int32_t)kp_load_be32(p + (i - 1) * BR_TIME_ENTRY_SIZE + 8))) {
            return false;
        }
    }
    return true;
}

/* Writes the segment's files with the broker's own code and reads back its
 * indexes; checks that every entry it wrote matches the log. */
static void broker_indexes(const struct model *m, int dir_fd, int32_t interval, uint8_t **idx,
                           size_t *idx_len, uint8_t **tidx, size_t *tidx_len)
{
    struct br_segment *s = NULL;
    int rc = br_segment_create(dir_fd, part_dir, m->base, NULL, &s);
    fuzz_check(rc == 0, "br_segment_create failed", rc);
    for (size_t k = 0; k < m->nb; k++) {
        rc = br_segment_append(s, part_dir, m->log + m->b[k].pos, (size_t)m->b[k].size,
                               m->b[k].last, m->b[k].max_ts, interval);
        fuzz_check(rc == 0 && !s->io_failed, "br_segment_append failed", rc);
    }
    rc = br_segment_seal(s, part_dir);
    fuzz_check(rc == 0, "br_segment_seal failed", rc);
    fuzz_check(s->size == (int64_t)m->len, "the appended segment has another size", (int)s->size);
    br_segment_free(s);

    char path[256];
    segment_path(m->base, "index", path, sizeof path);
    *idx = read_file(path, idx_len);
    segment_path(m->base, "timeindex", path, sizeof path);
    *tidx = read_file(path, tidx_len);

    fuzz_check(offset_file_sound(m, *idx, *idx_len), "the broker wrote a broken .index", 0);
    fuzz_check(time_file_sound(m, *tidx, *tidx_len), "the broker wrote a broken .timeindex", 0);
    for (size_t i = 0; i < *idx_len / BR_OFFSET_ENTRY_SIZE; i++) {
        int32_t rel = (int32_t)kp_load_be32(*idx + i * BR_OFFSET_ENTRY_SIZE);
        int32_t pos = (int32_t)kp_load_be32(*idx + i * BR_OFFSET_ENTRY_SIZE + 4);
        fuzz_check(offset_entry_matches(m, rel, pos, true),
                   "the broker wrote an .index entry that is not its batch's", (int)i);
    }
    size_t nt = *tidx_len / BR_TIME_ENTRY_SIZE;
    for (size_t i = 0; i < nt; i++) {
        int64_t ts = (int64_t)kp_load_be64(*tidx + i * BR_TIME_ENTRY_SIZE);
        int32_t rel = (int32_t)kp_load_be32(*tidx + i * BR_TIME_ENTRY_SIZE + 8);
        fuzz_check(time_entry_matches(m, ts, rel),
                   "the broker wrote a .timeindex entry that does not match the log", (int)i);
    }
    if (m->max_ts >= 0) {
        fuzz_check(nt > 0 &&
                       (int64_t)kp_load_be64(*tidx + (nt - 1) * BR_TIME_ENTRY_SIZE) == m->max_ts,
                   "a sealed .timeindex does not end with the largest timestamp", (int)nt);
    }
}

/* The bytes one index file gets: mode 0 the given ones, 2 the broker's XOR
 * the given ones. NULL for a missing file. */
static uint8_t *index_bytes(int mode, const uint8_t *given, size_t given_len, const uint8_t *broker,
                            size_t broker_len, size_t *len)
{
    *len = 0;
    if (mode == IDX_MISSING) {
        return NULL;
    }
    size_t n = mode == IDX_GIVEN ? given_len : broker_len;
    if (mode == IDX_PATCHED && given_len > broker_len) {
        n = given_len;
    }
    uint8_t *p = kp_malloc(n + 1);
    fuzz_check(p != NULL, "out of memory", 0);
    for (size_t i = 0; i < n; i++) {
        uint8_t v = 0;
        if (mode != IDX_GIVEN && i < broker_len) {
            v = broker[i];
        }
        if (mode != IDX_BROKER && i < given_len) {
            v ^= given[i];
        }
        p[i] = v;
    }
    *len = n;
    return p;
}

/* ------------------------------------------------------------- checks */

struct loaded {
    const uint8_t *idx; /* the files' bytes, NULL when missing */
    size_t idx_len;
    const uint8_t *tidx;
    size_t tidx_len;
    bool offsets_match; /* every loaded offset entry matches the log */
    bool times_match;   /* every time entry does, and the last is the largest timestamp */
};

/* A read through a trusted entry that does not match the log went astray:
 * counted, a finding with FUZZ_INDEX_STRICT. */
static void misread_at(const char *what, int64_t at, const char *file, int line)
{
    misreads++;
    if (verbose) {
        (void)fprintf(stderr, "%s:%d: fuzz_index: %s (%" PRId64 ")\n", file, line, what, at);
    }
    fuzz_check_at(!strict_trust, what, (int)at, file, line);
}

#define misread(what, at) misread_at((what), (at), __FILE__, __LINE__)

static void check_open(const struct model *m, const struct br_segment *s, const char *problem,
                       struct loaded *ld)
{
    size_t plen = strnlen(problem, PROBLEM_CAP);
    fuzz_check(plen < PROBLEM_CAP, "the problem is not a string", (int)plen);
    bool sound = ld->idx != NULL && ld->tidx != NULL &&
                 offset_file_sound(m, ld->idx, ld->idx_len) &&
                 time_file_sound(m, ld->tidx, ld->tidx_len);
    fuzz_check(sound || plen > 0, "broken index files loaded without a problem", 0);
    fuzz_check(s->base_offset == m->base && s->size == (int64_t)m->len,
               "the opened segment is not the file", (int)s->size);
    if (plen == 0) {
        fuzz_check(s->oidx_n * BR_OFFSET_ENTRY_SIZE == ld->idx_len,
                   "offset entries dropped without a problem", (int)s->oidx_n);
        fuzz_check(s->tidx_n * BR_TIME_ENTRY_SIZE == ld->tidx_len,
                   "time entries dropped without a problem", (int)s->tidx_n);
    }
    ld->offsets_match = true;
    for (size_t i = 0; i < s->oidx_n; i++) {
        fuzz_check(ld->idx != NULL && (i + 1) * BR_OFFSET_ENTRY_SIZE <= ld->idx_len,
                   "an offset entry the file does not hold", (int)i);
        const struct br_offset_entry *e = &s->oidx[i];
        fuzz_check(e->rel == (int32_t)kp_load_be32(ld->idx + i * BR_OFFSET_ENTRY_SIZE) &&
                       e->pos == (int32_t)kp_load_be32(ld->idx + i * BR_OFFSET_ENTRY_SIZE + 4),
                   "an offset entry loaded other than written", (int)i);
        fuzz_check(e->rel >= 0 && e->pos >= 0 && e->pos < s->size && m->base + e->rel < m->limit,
                   "a loaded offset entry outside the segment", (int)i);
        fuzz_check(i == 0 || (e->rel > s->oidx[i - 1].rel && e->pos > s->oidx[i - 1].pos),
                   "loaded offset entries not increasing", (int)i);
        ld->offsets_match = ld->offsets_match && offset_entry_matches(m, e->rel, e->pos, false);
    }
    ld->times_match = s->tidx_n == 0 || s->tidx[s->tidx_n - 1].ts >= m->max_ts;
    for (size_t i = 0; i < s->tidx_n; i++) {
        fuzz_check(ld->tidx != NULL && (i + 1) * BR_TIME_ENTRY_SIZE <= ld->tidx_len,
                   "a time entry the file does not hold", (int)i);
        const struct br_time_entry *e = &s->tidx[i];
        fuzz_check(e->ts == (int64_t)kp_load_be64(ld->tidx + i * BR_TIME_ENTRY_SIZE) &&
                       e->rel == (int32_t)kp_load_be32(ld->tidx + i * BR_TIME_ENTRY_SIZE + 8),
                   "a time entry loaded other than written", (int)i);
        fuzz_check(e->ts >= 0 && e->rel >= 0 && m->base + e->rel < m->limit,
                   "a loaded time entry outside the segment", (int)i);
        fuzz_check(i == 0 || (e->ts > s->tidx[i - 1].ts && e->rel >= s->tidx[i - 1].rel),
                   "loaded time entries not increasing", (int)i);
        ld->times_match = ld->times_match && time_entry_matches(m, e->ts, e->rel);
    }
}

/* Walks with br_cursor from pos to the first batch whose last offset (by_time
 * false) or MaxTimestamp (by_time true) is >= want, as the log's readers do.
 * Returns the cursor's result, with *stop the position it stopped at and
 * *off_boundary set when it read a header at a position where no batch of
 * the log starts; a header read at a batch's position must be that batch's. */
static int cursor_walk(struct br_segment *s, const struct model *m, int64_t pos, bool by_time,
                       int64_t want, int64_t *stop, bool *off_boundary)
{
    struct br_cursor c;
    int fd = -1;
    int orc = br_segment_fd(s, part_dir, &fd);
    fuzz_check(orc == 0, "br_segment_fd failed", orc);
    br_cursor_init(&c, fd, pos, s->size, window, sizeof window);
    *off_boundary = false;
    int steps = 0;
    for (;;) {
        struct kp_batch_header h;
        size_t size = 0;
        int rc = br_cursor_peek(&c, &h, &size);
        *stop = c.pos;
        if (rc != 0) {
            fuzz_check(rc == KP_ITER_END || rc == KP_E_CORRUPT,
                       "br_cursor_peek failed with an undocumented code", rc);
            return rc;
        }
        fuzz_check(size >= KP_BATCH_HEADER_SIZE && (int64_t)size <= s->size - c.pos,
                   "br_cursor_peek gave a batch outside the segment", (int)c.pos);
        long k = batch_at(m, c.pos);
        if (k < 0) {
            *off_boundary = true;
        } else {
            fuzz_check(h.BaseOffset == m->b[k].base && (int64_t)size == m->b[k].size,
                       "br_cursor_peek read another header than the batch's", (int)c.pos);
        }
        if (by_time ? h.MaxTimestamp >= want : h.BaseOffset + h.LastOffsetDelta >= want) {
            return 0;
        }
        c.pos += (int64_t)size;
        steps++;
        fuzz_check(steps <= (int)(m->len / KP_BATCH_HEADER_SIZE) + 1, "br_cursor loops", steps);
    }
}

/*
 * br_segment_lookup(offset) against the entries, then a walk to the batch.
 * A floor entry read from the file that does not match its batch is not
 * used: the lookup answers 0 and the segment is read from its start from
 * then on.
 */
static void check_lookup(const struct model *m, struct br_segment *s, int64_t offset)
{
    bool suspect = s->index_suspect;
    size_t unchecked = s->oidx_unchecked;
    int64_t pos = br_segment_lookup(s, part_dir, offset);
    size_t e = 0;
    while (e < s->oidx_n && m->base + s->oidx[e].rel <= offset) {
        e++;
    }
    bool floor_true =
        e == 0 || offset_entry_matches(m, s->oidx[e - 1].rel, s->oidx[e - 1].pos, true);
    bool accepted =
        e > 0 && !suspect &&
        (e - 1 >= unchecked || header_at_matches(m, s->oidx[e - 1].rel, s->oidx[e - 1].pos));
    int64_t want = accepted ? s->oidx[e - 1].pos : 0;
    fuzz_check(pos == want, "br_segment_lookup did not answer as its check says", (int)e);
    fuzz_check(e == 0 || accepted || suspect || s->index_suspect,
               "a rejected entry did not mark the index suspect", (int)e);
    fuzz_check(pos >= 0 && pos <= s->size, "br_segment_lookup outside the segment", (int)pos);
    /* pos is 0 or an accepted entry's; an accepted false one sits on a
     * header nested in a record's value */
    bool matches = !accepted || floor_true;
    size_t target = batch_holding(m, offset);
    if (matches) {
        long k = batch_at(m, pos);
        fuzz_check(k >= 0 || (m->nb == 0 && pos == 0),
                   "a lookup through a true entry is not a batch", (int)pos);
        fuzz_check(k < 0 || (size_t)k <= target, "a lookup lands past the batch it wants",
                   (int)pos);
    }
    int64_t stop = 0;
    bool off_boundary = false;
    int rc = cursor_walk(s, m, pos, false, offset, &stop, &off_boundary);
    int64_t expect = target < m->nb ? m->b[target].pos : (int64_t)m->len;
    int expect_rc = target < m->nb ? 0 : KP_ITER_END;
    if (matches) {
        fuzz_check(!off_boundary && rc == expect_rc && stop == expect,
                   "the cursor did not reach the batch holding the offset", (int)stop);
    } else if (rc == 0 && off_boundary) {
        misread("a trusted .index entry led a read into the middle of a batch", offset);
    } else if (rc == 0 && stop != expect) {
        misread("a trusted .index entry led a read to another batch", offset);
    }
}

/* br_segment_time_lookup(ts) against the entries, then the walk log_read.c does. */
static void check_time_lookup(const struct model *m, struct br_segment *s, int64_t ts)
{
    bool suspect = s->time_suspect;
    size_t unchecked = s->tidx_unchecked;
    int64_t off = br_segment_time_lookup(s, part_dir, ts);
    size_t e = 0;
    while (e < s->tidx_n && s->tidx[e].ts <= ts) {
        e++;
    }
    /* the broker's rule: the batch holding the entry's offset has the
     * entry's timestamp as its MaxTimestamp */
    bool used = e > 0 && !suspect;
    if (used && e - 1 < unchecked) {
        int64_t at = m->base + s->tidx[e - 1].rel;
        size_t k = batch_holding(m, at);
        used = k < m->nb && m->b[k].base <= at && m->b[k].max_ts == s->tidx[e - 1].ts;
    }
    int64_t want = used ? m->base + s->tidx[e - 1].rel : m->base;
    if (off != want && !no_nested_entries(m, s)) {
        /* the check walks from an offset lookup, which an .index entry on a
         * nested header leads astray (see check_lookup) */
        misread("an .index entry on a nested header misled the time entry check", ts);
        used = off != m->base;
    } else {
        fuzz_check(off == want, "br_segment_time_lookup did not answer from a matching floor entry",
                   (int)e);
    }
    fuzz_check(off >= m->base && off < m->limit, "br_segment_time_lookup outside the segment",
               (int)(off - m->base));
    bool matches = !used || (e > 0 && m->base + s->tidx[e - 1].rel == off &&
                             time_entry_matches(m, s->tidx[e - 1].ts, s->tidx[e - 1].rel));
    size_t target = batch_reaching(m, ts);
    if (matches && target < m->nb) {
        fuzz_check(off <= m->b[target].last,
                   "a time lookup lands past the first batch reaching the timestamp", (int)e);
    }
    /* log_read.c: the offset lookup of that offset, then a walk by timestamp */
    /* the offset lookup answers 0 or an accepted entry (check_lookup): a
     * true one, or one on a header nested in a record's value */
    int64_t pos = br_segment_lookup(s, part_dir, off);
    matches = matches && (pos == 0 || batch_at(m, pos) >= 0);
    int64_t stop = 0;
    bool off_boundary = false;
    int rc = cursor_walk(s, m, pos, true, ts, &stop, &off_boundary);
    int64_t expect = target < m->nb ? m->b[target].pos : (int64_t)m->len;
    int expect_rc = target < m->nb ? 0 : KP_ITER_END;
    if (matches) {
        fuzz_check(!off_boundary && rc == expect_rc && stop == expect,
                   "the time walk did not reach the first batch reaching the timestamp", (int)stop);
    } else if (rc == 0 && off_boundary) {
        misread("a trusted index entry led a time lookup into the middle of a batch", ts);
    } else if (rc == 0 && stop != expect) {
        misread("a trusted index entry led a time lookup to another batch", ts);
    }
}

/*
 * br_segment_truncate(offset), as replication truncates a log, through the
 * trusted entries: through entries that match the log it cuts exactly the
 * batches whose last offset is >= offset, and the segment, its next offset
 * and its indexes agree with what is left.
 */
static void check_truncate(const struct model *m, struct br_segment *s, int64_t offset,
                           int32_t interval, bool offsets_match)
{
    int rc = br_segment_truncate(s, part_dir, offset, interval);
    size_t t = batch_holding(m, offset);
    int64_t cut = t < m->nb ? m->b[t].pos : (int64_t)m->len;
    int64_t next = t > 0 ? m->b[t - 1].last + 1 : m->base;
    if (offsets_match) {
        fuzz_check(rc == 0, "truncation through true entries failed", rc);
    } else {
        fuzz_check(rc == 0 || rc == KP_E_CORRUPT, "truncation failed with an undocumented code",
                   rc);
        if (rc != 0) {
            return;
        }
        if (s->size != cut || s->next_offset != next) {
            misread("a trusted .index entry made truncation cut elsewhere", offset);
            return;
        }
    }
    fuzz_check(s->size == cut, "truncation cut elsewhere", (int)s->size);
    fuzz_check(s->next_offset == next, "truncation left another next offset",
               (int)(s->next_offset - m->base));
    struct stat st;
    int fd = -1;
    rc = br_segment_fd(s, part_dir, &fd);
    fuzz_check(rc == 0, "br_segment_fd failed", rc);
    fuzz_check(fstat(fd, &st) == 0 && st.st_size == s->size,
               "the truncated .log is not the segment's size", (int)st.st_size);
    for (size_t i = 0; i < s->oidx_n; i++) {
        const struct br_offset_entry *e = &s->oidx[i];
        fuzz_check(e->pos < s->size &&
                       (i == 0 || (e->rel > s->oidx[i - 1].rel && e->pos > s->oidx[i - 1].pos)),
                   "an offset entry left after truncation is outside or out of order", (int)i);
    }
    for (size_t i = 0; i < s->tidx_n; i++) {
        fuzz_check(t == m->nb || m->base + s->tidx[i].rel < offset,
                   "a time entry left after truncation names a cut offset", (int)i);
    }
}

/* Adds v to q when there is room. */
static void push_query(int64_t *q, size_t *n, int64_t v)
{
    if (*n < MAX_QUERIES) {
        q[(*n)++] = v;
    }
}

static int64_t add_sat(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b) {
        return INT64_MAX;
    }
    if (b < 0 && a < INT64_MIN - b) {
        return INT64_MIN;
    }
    return a + b;
}

static size_t offset_queries(const struct model *m, const struct br_segment *s, int64_t given,
                             int64_t *q)
{
    size_t n = 0;
    const int64_t edges[] = {INT64_MIN,    -1,       0,           m->base - 1,
                             m->base,      given,    m->next - 1, m->next,
                             m->limit - 1, m->limit, INT64_MAX};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        push_query(q, &n, edges[i]);
    }
    size_t step = m->nb / SAMPLES + 1;
    for (size_t k = 0; k < m->nb; k += step) {
        push_query(q, &n, m->b[k].base);
        push_query(q, &n, m->b[k].last);
        push_query(q, &n, m->b[k].last + 1);
    }
    step = s->oidx_n / SAMPLES + 1;
    for (size_t i = 0; i < s->oidx_n; i += step) {
        int64_t o = m->base + s->oidx[i].rel;
        push_query(q, &n, o - 1);
        push_query(q, &n, o);
        push_query(q, &n, o + 1);
    }
    return n;
}

static size_t time_queries(const struct model *m, const struct br_segment *s, int64_t given,
                           int64_t *q)
{
    size_t n = 0;
    const int64_t edges[] = {INT64_MIN, -1, 0, given, add_sat(m->max_ts, 1), INT64_MAX};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        push_query(q, &n, edges[i]);
    }
    size_t step = m->nb / SAMPLES + 1;
    for (size_t k = 0; k < m->nb; k += step) {
        push_query(q, &n, add_sat(m->b[k].max_ts, -1));
        push_query(q, &n, m->b[k].max_ts);
        push_query(q, &n, add_sat(m->b[k].max_ts, 1));
    }
    step = s->tidx_n / SAMPLES + 1;
    for (size_t i = 0; i < s->tidx_n; i += step) {
        push_query(q, &n, add_sat(s->tidx[i].ts, -1));
        push_query(q, &n, s->tidx[i].ts);
        push_query(q, &n, add_sat(s->tidx[i].ts, 1));
    }
    return n;
}

/* ------------------------------------------------------------- the log */

/*
 * The segment as the first of two of a partition, below the recovery point
 * (trusted), the second holding one batch at the limit. br_log_read and
 * br_log_offset_for_timestamp must answer from the true batches when the
 * trusted entries match the log (or a problem had the segment rebuilt).
 */
static void check_log(const struct model *m, bool offsets_ok, bool times_ok, const int64_t *oq,
                      size_t noq, const int64_t *tq, size_t ntq)
{
    struct kp_writer w;
    kp_wr_init(&w, (size_t)1 << 20);
    builtin_batch(&w, m->limit, KP_CODEC_NONE, 2, SECOND_TS, -1, false, 16);
    fuzz_check(w.err == 0, "the second segment's batch", w.err);
    char path[256];
    segment_path(m->limit, "log", path, sizeof path);
    write_file(path, w.buf, w.len);
    struct batch second = {0, (int64_t)w.len, m->limit, m->limit + 1, SECOND_TS + 1};
    kp_wr_free(&w);

    struct br_log_config cfg;
    br_log_config_defaults(&cfg);
    struct br_log *log = NULL;
    int rc = br_log_open(part_dir, &cfg, m->limit, NULL, &log);
    fuzz_check(rc == 0, "br_log_open failed on a valid partition", rc);
    fuzz_check(br_log_segment_count(log) == 2, "br_log_open changed the segments",
               (int)br_log_segment_count(log));
    struct br_log_segment_info info;
    rc = br_log_segment_info(log, 0, &info);
    fuzz_check(rc == 0 && info.base_offset == m->base && info.size_bytes == (int64_t)m->len,
               "br_log_open cut a valid segment", rc);
    int64_t leo = br_log_end_offset(log);
    fuzz_check(leo == second.last + 1, "the LEO is not after the second segment's batch", 0);

    for (size_t i = 0; i < noq; i++) {
        int64_t q = oq[i];
        struct br_log_slice sl;
        rc = br_log_read(log, q, INT64_MAX, 1 << 20, true, &sl);
        if (q < m->base || q > leo) {
            fuzz_check(rc == KP_ERR_OFFSET_OUT_OF_RANGE, "a read out of range was served", rc);
            continue;
        }
        size_t t = batch_holding(m, q);
        const struct batch *b = t < m->nb ? &m->b[t] : &second;
        bool right = rc == 0 && (q == leo ? sl.len == 0
                                          : sl.len > 0 && sl.file_pos == b->pos &&
                                                sl.first_offset == b->base && sl.next_offset > q);
        if (offsets_ok) {
            fuzz_check(right, "br_log_read did not serve the batch holding the offset", rc);
        } else {
            fuzz_check(rc == 0 || rc == KP_E_CORRUPT,
                       "br_log_read failed with an undocumented code", rc);
            if (rc == 0 && !right) {
                misread("a trusted .index entry made br_log_read serve another batch", q);
            }
        }
        br_log_slice_release(&sl);
    }

    for (size_t i = 0; i < ntq; i++) {
        int64_t ts = tq[i];
        int64_t off = 0;
        int64_t got_ts = 0;
        rc = br_log_offset_for_timestamp(log, ts, &off, &got_ts);
        size_t t = batch_reaching(m, ts);
        const struct batch *b = t < m->nb ? &m->b[t] : (second.max_ts >= ts ? &second : NULL);
        bool right = rc == 0 && (b == NULL ? off == -1 && got_ts == -1
                                           : off >= b->base && off <= b->last &&
                                                 (got_ts >= ts || got_ts == b->max_ts));
        if (offsets_ok && times_ok) {
            fuzz_check(right, "br_log_offset_for_timestamp missed the first batch reaching it", rc);
        } else {
            fuzz_check(rc == 0 || rc == KP_E_CORRUPT || rc == KP_E_NOMEM,
                       "br_log_offset_for_timestamp failed with an undocumented code", rc);
            if (rc == 0 && !right) {
                misread("a trusted index entry made the time lookup answer another batch", ts);
            }
        }
    }
    br_log_close(log);
}

/* ------------------------------------------------------------- entry */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEADER || size > FUZZ_MAX_INPUT || !make_tmp_root()) {
        return 0;
    }
    br_logging_set_level(verbose ? BR_LOG_DEBUG : BR_LOG_ERROR);
    uint8_t flags = data[0];
    int idx_mode = flags & 3;
    int tidx_mode = (flags >> 2) & 3;
    int32_t interval = (int32_t)data[1] * 16;
    size_t left = size - HEADER;
    size_t ilen = fuzz_load_u16(data + 2);
    ilen = ilen < left ? ilen : left;
    left -= ilen;
    size_t tlen = fuzz_load_u16(data + 4);
    tlen = tlen < left ? tlen : left;
    left -= tlen;
    int32_t delta = (int32_t)kp_load_be32(data + 6);
    int64_t given_ts = (int64_t)kp_load_be64(data + 10);
    const uint8_t *given_idx = data + HEADER;
    const uint8_t *given_tidx = given_idx + ilen;

    /* the log */
    struct model m;
    memset(&m, 0, sizeof m);
    uint8_t *copy = NULL;
    size_t max_batches = MAX_BATCHES;
    if ((flags & F_LOG_FROM_INPUT) != 0) {
        copy = kp_malloc(left + 1);
        fuzz_check(copy != NULL, "out of memory", 0);
        memcpy(copy, given_tidx + tlen, left);
    } else {
        size_t blen = 0;
        const uint8_t *b = builtin_log(&blen);
        copy = kp_malloc(blen + 1);
        fuzz_check(copy != NULL, "out of memory", 0);
        memcpy(copy, b, blen);
        left = blen;
    }
    m.b = kp_malloc(max_batches * sizeof *m.b);
    fuzz_check(m.b != NULL, "out of memory", 0);
    m.len = scan_log(copy, left, (flags & F_LOG_FROM_INPUT) != 0, m.b, max_batches, &m.nb);
    m.log = copy;
    m.base = m.nb > 0 ? m.b[0].base : 0;
    if ((flags & F_BASE_GAP) != 0 && m.base > 0) {
        m.base--;
    }
    model_finish(&m);
    bool open_log = (flags & F_OPEN_LOG) != 0 && m.nb > 0;
    if ((flags & F_TIGHT_LIMIT) != 0 && m.nb > 0) {
        m.limit = m.next;
    } else {
        m.limit = open_log ? m.next + LIMIT_GAP : INT64_MAX;
    }

    int rc = br_log_dir_remove(part_dir);
    fuzz_check(rc == 0, "cannot clear the partition dir", rc);
    fuzz_check(mkdir(part_dir, 0755) == 0, "mkdir", errno);
    int dir_fd = open(part_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    fuzz_check(dir_fd >= 0, "open of the partition dir", errno);

    /* the files */
    uint8_t *bidx = NULL;
    uint8_t *btidx = NULL;
    size_t bidx_len = 0;
    size_t btidx_len = 0;
    char log_path[256];
    char idx_path[256];
    char tidx_path[256];
    segment_path(m.base, "log", log_path, sizeof log_path);
    segment_path(m.base, "index", idx_path, sizeof idx_path);
    segment_path(m.base, "timeindex", tidx_path, sizeof tidx_path);
    if (idx_mode == IDX_BROKER || idx_mode == IDX_PATCHED || tidx_mode == IDX_BROKER ||
        tidx_mode == IDX_PATCHED) {
        broker_indexes(&m, dir_fd, interval, &bidx, &bidx_len, &btidx, &btidx_len);
    } else {
        write_file(log_path, m.log, m.len);
    }
    size_t idx_len = 0;
    size_t tidx_len = 0;
    uint8_t *idx = index_bytes(idx_mode, given_idx, ilen, bidx, bidx_len, &idx_len);
    uint8_t *tidx = index_bytes(tidx_mode, given_tidx, tlen, btidx, btidx_len, &tidx_len);
    kp_free(bidx);
    kp_free(btidx);
    if (idx != NULL) {
        write_file(idx_path, idx, idx_len);
    } else {
        (void)unlink(idx_path);
    }
    if (tidx != NULL) {
        write_file(tidx_path, tidx, tidx_len);
    } else {
        (void)unlink(tidx_path);
    }

    /* the segment, trusted */
    struct br_segment *s = NULL;
    char problem[PROBLEM_CAP];
    rc = br_segment_open(dir_fd, part_dir, m.base, m.limit, NULL, &s, problem, sizeof problem);
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "br_segment_open failed", rc);
    if (rc == 0) {
        struct loaded ld = {idx, idx_len, tidx, tidx_len, false, false};
        check_open(&m, s, problem, &ld);
        int64_t *oq = kp_malloc(MAX_QUERIES * sizeof *oq);
        int64_t *tq = kp_malloc(MAX_QUERIES * sizeof *tq);
        fuzz_check(oq != NULL && tq != NULL, "out of memory", 0);
        size_t noq = offset_queries(&m, s, add_sat(m.base, delta), oq);
        size_t ntq = time_queries(&m, s, given_ts, tq);
        for (size_t i = 0; i < noq; i++) {
            check_lookup(&m, s, oq[i]);
        }
        for (size_t i = 0; i < ntq; i++) {
            check_time_lookup(&m, s, tq[i]);
        }
        bool rebuilt = problem[0] != '\0';
        /* a false offset entry is not used (br_segment_lookup), but for one
         * on a header nested in a record's value */
        bool nested_ok = no_nested_entries(&m, s);
        if (!open_log) {
            check_truncate(&m, s, add_sat(m.base, delta), interval, nested_ok);
        }
        br_segment_free(s);
        if (open_log && m.limit < MAX_INPUT_OFFSET * 2) {
            /* start-up finds the files as they were: open created the missing ones */
            if (idx == NULL) {
                (void)unlink(idx_path);
            }
            if (tidx == NULL) {
                (void)unlink(tidx_path);
            }
            check_log(&m, rebuilt || nested_ok, rebuilt || ld.times_match, oq, noq, tq, ntq);
        }
        kp_free(oq);
        kp_free(tq);
    }
    (void)close(dir_fd);
    kp_free(idx);
    kp_free(tidx);
    kp_free(copy);
    kp_free(m.b);
    kp_free(m.prefix_max);
    return 0;
}
