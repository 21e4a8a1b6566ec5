/*
 * fuzz_segment_recovery: br_log_open's recovery of a partition directory
 * holding hostile segment and index files.
 *
 * Input:
 *   byte 0      flags: bit 0 recompute the CRC of every complete batch (so the
 *               fuzzer gets past CRC32C to offsets, lengths and indexes);
 *               bit 1 open as after a clean stop (recovery point = INT64_MAX)
 *               instead of a crash (0); bit 2 write the .index file (else it
 *               is missing); bit 3 split the log into two segments; bits 4-5
 *               index.interval.bytes 0, 64, 256 or 4096; bit 6 write the
 *               .timeindex (else it is missing, and the broker rebuilds both
 *               indexes and validates every segment whole)
 *   bytes 1-2   L, big-endian: the length of the .index bytes
 *   bytes 3-4   S, big-endian: where the second segment starts (bit 3)
 *   bytes 5-6   T, big-endian: the length of the .timeindex bytes (bit 6 only)
 *   L bytes     00000000000000000000.index
 *   T bytes     00000000000000000000.timeindex (bit 6 only)
 *   the rest    the .log bytes: 00000000000000000000.log, and with bit 3 the
 *               part from S on as a second segment named by the BaseOffset
 *               found at S (or 1000000 when that is not usable)
 *
 * br_log_open must succeed or fail with a documented code. After success,
 * after a crash (recovery point 0, where everything is validated):
 *   - every segment file holds whole batches only, each passing
 *     kp_batch_parse_lenient, offsets increasing from the segment's base
 *     offset and below the next segment's, the last one ending at the LEO;
 *   - each .index is whole, strictly increasing, and every entry points at a
 *     batch boundary whose batch ends at the entry's offset; each .timeindex
 *     is whole, increasing, and within its segment's offsets;
 *   - br_log_read walks the log from its start to the LEO.
 * After a clean stop, what lies below the recovery point is trusted, not
 * validated: the indexes must still be whole, ordered and inside their
 * segments, the last segment valid from its last index entry to the LEO, and
 * br_log_read may stop at trusted damage but never fail otherwise. Both:
 *   - an append lands at the LEO, and a second open after a clean close cuts
 *     nothing (recovery is idempotent).
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

#define HEADER 5
#define HEADER_TIME 7 /* with bit 6 */
#define SECOND_BASE_FALLBACK INT64_C(1000000)
#define MAX_SEGMENT_FILE ((size_t)16 * 1024 * 1024)

static char tmp_root[128];
static char part_dir[192];

static void remove_tmp_root(void)
{
    if (br_log_dir_remove(part_dir) != 0) {
        (void)fprintf(stderr, "fuzz_segment_recovery: cannot remove %s\n", part_dir);
    }
    (void)rmdir(tmp_root);
}

static bool make_tmp_root(void)
{
    if (tmp_root[0] != '\0') {
        return true;
    }
    if (!fuzz_make_tmp_dir(tmp_root, sizeof tmp_root, "seg")) {
        return false;
    }
    (void)snprintf(part_dir, sizeof part_dir, "%s/t-0", tmp_root);
    (void)atexit(remove_tmp_root);
    return true;
}

static void write_file(const char *name, const uint8_t *data, size_t size)
{
    char path[256];
    (void)snprintf(path, sizeof path, "%s/%s", part_dir, name);
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

static uint8_t *read_file(int64_t base, const char *suffix, size_t *len)
{
    char path[256];
    (void)snprintf(path, sizeof path, "%s/%020" PRId64 ".%s", part_dir, base, suffix);
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    fuzz_check(fd >= 0, "a segment file is missing", errno);
    struct stat st;
    fuzz_check(fstat(fd, &st) == 0, "fstat", errno);
    fuzz_check((size_t)st.st_size <= MAX_SEGMENT_FILE, "a file grew beyond the input", 0);
    uint8_t *buf = kp_malloc((size_t)st.st_size + 1);
    fuzz_check(buf != NULL, "out of memory", 0);
    ssize_t got = pread(fd, buf, (size_t)st.st_size, 0);
    fuzz_check(got == st.st_size, "short read", (int)got);
    (void)close(fd);
    *len = (size_t)st.st_size;
    return buf;
}

/* Gives every complete v2 batch a correct CRC. */
static void fix_crcs(uint8_t *p, size_t len)
{
    size_t pos = 0;
    while (len - pos >= KP_BATCH_HEADER_SIZE) {
        int32_t bl = (int32_t)kp_load_be32(p + pos + 8);
        if (bl < KP_BATCH_MIN_LENGTH || (size_t)bl > len - pos - KP_BATCH_LOG_OVERHEAD ||
            p[pos + 16] != KP_BATCH_MAGIC) {
            return;
        }
        size_t size = (size_t)bl + KP_BATCH_LOG_OVERHEAD;
        kp_store_be32(p + pos + 17,
                      kp_crc32c(0, p + pos + KP_BATCH_CRC_START, size - KP_BATCH_CRC_START));
        pos += size;
    }
}

/*
 * The invariants of one segment after recovery; returns the offset after its
 * last batch. strict: the whole segment was validated (a crash: recovery
 * point 0). Otherwise only the last segment's tail, from its last index
 * entry, was (the rest counts as flushed and is trusted): the index files
 * must still be whole and ordered, and that tail must be valid.
 */
static int64_t check_segment(const struct br_log_segment_info *info, int64_t limit, bool strict)
{
    size_t len = 0;
    uint8_t *log = read_file(info->base_offset, "log", &len);
    fuzz_check((int64_t)len == info->size_bytes, "segment size differs from the file", (int)len);

    size_t ilen = 0;
    uint8_t *idx = read_file(info->base_offset, "index", &ilen);
    fuzz_check(ilen % 8 == 0, "torn .index after recovery", (int)ilen);
    size_t ni = ilen / 8;
    for (size_t i = 0; i < ni; i++) {
        int32_t rel = (int32_t)kp_load_be32(idx + 8 * i);
        int32_t ip = (int32_t)kp_load_be32(idx + 8 * i + 4);
        fuzz_check(rel >= 0 && ip >= 0 && (size_t)ip < len, ".index entry outside the segment",
                   (int)i);
        fuzz_check(info->base_offset + rel < limit, ".index entry reaches the next segment",
                   (int)i);
        if (i > 0) {
            fuzz_check(rel > (int32_t)kp_load_be32(idx + 8 * i - 8) &&
                           ip > (int32_t)kp_load_be32(idx + 8 * i - 4),
                       ".index not increasing", (int)i);
        }
    }

    /* the batches that were validated, with their boundaries */
    size_t pos = 0;
    if (!strict) {
        pos = len;
        if (info->active) {
            pos = ni > 0 ? (size_t)kp_load_be32(idx + 8 * (ni - 1) + 4) : 0;
        }
    }
    size_t cap = len / KP_BATCH_HEADER_SIZE + 1;
    int64_t *pos_of = kp_malloc(cap * sizeof *pos_of);
    int64_t *last_of = kp_malloc(cap * sizeof *last_of);
    fuzz_check(pos_of != NULL && last_of != NULL, "out of memory", 0);
    size_t nb = 0;
    int64_t next = info->base_offset;
    bool first = true;
    while (pos < len) {
        struct kp_batch_header h;
        size_t size = 0;
        int rc = kp_batch_parse_lenient(log + pos, len - pos, &h, &size);
        fuzz_check(rc == 0, "a batch left after recovery does not parse", rc);
        fuzz_check(h.BaseOffset >= next || (!strict && first), "offsets go backwards", (int)pos);
        int64_t last = kp_batch_last_offset(&h);
        fuzz_check(last < limit, "a batch reaches the next segment", (int)pos);
        fuzz_check(last - info->base_offset <= INT32_MAX, "relative offset overflow", (int)pos);
        fuzz_check(nb < cap, "more batches than bytes allow", (int)nb);
        pos_of[nb] = (int64_t)pos;
        last_of[nb] = last;
        nb++;
        next = last + 1;
        pos += size;
        first = false;
    }
    if (strict) {
        size_t b = 0;
        for (size_t i = 0; i < ni; i++) {
            int32_t rel = (int32_t)kp_load_be32(idx + 8 * i);
            int32_t ip = (int32_t)kp_load_be32(idx + 8 * i + 4);
            while (b < nb && pos_of[b] < ip) {
                b++;
            }
            fuzz_check(b < nb && pos_of[b] == ip, ".index entry not at a batch boundary", (int)i);
            fuzz_check(last_of[b] == info->base_offset + rel,
                       ".index entry offset is not its batch's", (int)i);
        }
    } else if (info->active && ni > 0) {
        fuzz_check(nb > 0 &&
                       last_of[0] == info->base_offset + (int32_t)kp_load_be32(idx + 8 * (ni - 1)),
                   "the last .index entry is not its batch's", (int)ni);
    }

    size_t tlen = 0;
    uint8_t *tidx = read_file(info->base_offset, "timeindex", &tlen);
    fuzz_check(tlen % 12 == 0, "torn .timeindex after recovery", (int)tlen);
    int64_t tlimit = strict || info->active ? next : limit;
    for (size_t i = 0; i < tlen / 12; i++) {
        int64_t ts = (int64_t)kp_load_be64(tidx + 12 * i);
        int32_t rel = (int32_t)kp_load_be32(tidx + 12 * i + 8);
        fuzz_check(rel >= 0 && info->base_offset + rel < tlimit, ".timeindex offset outside",
                   (int)i);
        if (i > 0) {
            fuzz_check(ts > (int64_t)kp_load_be64(tidx + 12 * i - 12), ".timeindex not increasing",
                       (int)i);
        }
    }
    kp_free(log);
    kp_free(idx);
    kp_free(tidx);
    kp_free(pos_of);
    kp_free(last_of);
    return next;
}

static void check_log(struct br_log *log, bool strict)
{
    size_t n = br_log_segment_count(log);
    fuzz_check(n >= 1, "a log without segments", 0);
    int64_t end = -1;
    for (size_t i = 0; i < n; i++) {
        struct br_log_segment_info info;
        struct br_log_segment_info next_info;
        int rc = br_log_segment_info(log, i, &info);
        fuzz_check(rc == 0, "segment info", rc);
        fuzz_check(info.active == (i + 1 == n), "the active segment is not the last", (int)i);
        int64_t limit = INT64_MAX;
        if (i + 1 < n) {
            rc = br_log_segment_info(log, i + 1, &next_info);
            fuzz_check(rc == 0, "segment info", rc);
            fuzz_check(next_info.base_offset > info.base_offset, "segments out of order", (int)i);
            limit = next_info.base_offset;
        }
        end = check_segment(&info, limit, strict);
    }
    fuzz_check(end == br_log_end_offset(log), "the last segment does not end at the LEO", 0);

    /* the fetch path walks the whole log; trusted damage may stop it */
    int64_t off = br_log_start_offset(log);
    int steps = 0;
    while (off < br_log_end_offset(log)) {
        struct br_log_slice sl;
        int rc = br_log_read(log, off, INT64_MAX, 1 << 20, true, &sl);
        if (!strict && (rc == KP_E_CORRUPT || (rc == 0 && sl.len == 0))) {
            return;
        }
        fuzz_check(rc == 0, "br_log_read failed on a recovered log", rc);
        fuzz_check(sl.len > 0 && sl.next_offset > off, "br_log_read made no progress", (int)off);
        off = sl.next_offset;
        br_log_slice_release(&sl);
        steps++;
        fuzz_check(steps < 100000, "br_log_read loops", steps);
    }
    fuzz_check(off == br_log_end_offset(log), "br_log_read ends past the LEO", 0);
}

static uint8_t *small_batch(size_t *len)
{
    struct kp_batch_builder b;
    struct kp_writer w;
    int rc = kp_batch_builder_init(&b, KP_CODEC_NONE, 0, 1000, -1, -1, -1, 4096);
    fuzz_check(rc == 0, "builder", rc);
    struct kp_bytes v = {(const uint8_t *)"value", 5};
    rc = kp_batch_builder_add(&b, KP_OFFSET_DELTA_AUTO, 1000, KP_BYTES_NULL, v, NULL, 0);
    fuzz_check(rc == 0, "builder add", rc);
    kp_wr_init(&w, 4096);
    rc = kp_batch_builder_finish(&b, &w);
    fuzz_check(rc == 0, "builder finish", rc);
    kp_batch_builder_free(&b);
    uint8_t *p = kp_wr_steal(&w, len);
    fuzz_check(p != NULL, "out of memory", 0);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEADER || size > FUZZ_MAX_INPUT || !make_tmp_root()) {
        return 0;
    }
    br_logging_set_level(getenv("FUZZ_LOG") != NULL ? BR_LOG_DEBUG : BR_LOG_ERROR);
    uint8_t flags = data[0];
    size_t header = (flags & 0x40) != 0 ? HEADER_TIME : HEADER;
    if (size < header) {
        return 0;
    }
    size_t ilen = fuzz_load_u16(data + 1);
    size_t split = fuzz_load_u16(data + 3);
    size_t tlen = header == HEADER_TIME ? fuzz_load_u16(data + 5) : 0;
    const uint8_t *rest = data + header;
    size_t left = size - header;
    ilen = ilen < left ? ilen : left;
    const uint8_t *index = rest;
    left -= ilen;
    tlen = tlen < left ? tlen : left;
    const uint8_t *timeindex = rest + ilen;
    size_t llen = left - tlen;
    uint8_t *seg = kp_malloc(llen + 1);
    fuzz_check(seg != NULL, "out of memory", 0);
    memcpy(seg, rest + ilen + tlen, llen);
    if ((flags & 1) != 0) {
        fix_crcs(seg, llen);
    }

    int rc = br_log_dir_remove(part_dir);
    fuzz_check(rc == 0, "cannot clear the partition dir", rc);
    fuzz_check(mkdir(part_dir, 0755) == 0, "mkdir", errno);
    size_t first_len = llen;
    if ((flags & 8) != 0 && llen > 0) {
        split %= llen;
        first_len = split;
        int64_t base2 = SECOND_BASE_FALLBACK;
        if (llen - split >= 8) {
            int64_t b = (int64_t)kp_load_be64(seg + split);
            if (b > 0 && b < INT64_MAX / 2) {
                base2 = b;
            }
        }
        char name[64];
        (void)snprintf(name, sizeof name, "%020" PRId64 ".log", base2);
        write_file(name, seg + split, llen - split);
    }
    write_file("00000000000000000000.log", seg, first_len);
    if ((flags & 4) != 0) {
        write_file("00000000000000000000.index", index, ilen);
    }
    if ((flags & 0x40) != 0) {
        write_file("00000000000000000000.timeindex", timeindex, tlen);
    }
    kp_free(seg);

    static const int32_t intervals[] = {0, 64, 256, 4096};
    struct br_log_config cfg;
    br_log_config_defaults(&cfg);
    cfg.index_interval_bytes = intervals[(flags >> 4) & 3];
    int64_t rp = (flags & 2) != 0 ? INT64_MAX : 0;

    struct br_log *log = NULL;
    rc = br_log_open(part_dir, &cfg, rp, NULL, &log);
    if (rc != 0) {
        fuzz_check(rc == KP_E_NOMEM || rc == KP_ERR_KAFKA_STORAGE_ERROR,
                   "br_log_open failed with an undocumented code", rc);
        fuzz_check(log == NULL, "a failed open returned a log", rc);
        return 0;
    }
    bool strict = (flags & 2) == 0;
    check_log(log, strict);

    int64_t leo = br_log_end_offset(log);
    int64_t bytes = br_log_size_bytes(log);
    size_t blen = 0;
    uint8_t *batch = small_batch(&blen);
    int64_t base = -1;
    rc = br_log_append(log, batch, blen, 3, 2000, &base);
    kp_free(batch);
    if (rc == KP_E_INVALID_ARG && leo > INT64_MAX - 2) {
        br_log_close(log); /* no offset left to assign */
        return 0;
    }
    fuzz_check(rc == 0, "append after recovery failed", rc);
    fuzz_check(base == leo, "append did not land at the LEO", 0);
    check_log(log, strict);
    leo = br_log_end_offset(log);
    bytes += (int64_t)blen;
    fuzz_check(br_log_size_bytes(log) == bytes, "size accounting", 0);
    br_log_close(log);

    /* recovery is idempotent: nothing more to cut, crash or clean */
    log = NULL;
    rc = br_log_open(part_dir, &cfg, (flags & 2) != 0 ? leo : 0, NULL, &log);
    fuzz_check(rc == 0, "reopening a recovered log failed", rc);
    fuzz_check(br_log_end_offset(log) == leo, "a second recovery moved the LEO", 0);
    fuzz_check(br_log_size_bytes(log) == bytes, "a second recovery cut bytes", 0);
    check_log(log, strict);
    br_log_close(log);
    return 0;
}
