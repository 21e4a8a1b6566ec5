/* samsa-broker: a partition's records read in order (see partition_read.h). */
#define _GNU_SOURCE

#include "replica/partition_read.h"

#include "base/fileref.h"
#include "base/logging.h"

#include <samsa-protocol/alloc.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#define LOAD_READ_BYTES (1 << 20)
#define LOAD_MAX_BATCH_BYTES ((size_t)256 << 20)
#define LOAD_MAX_DECOMPRESSED ((size_t)256 << 20)

static int read_fully(int fd, uint8_t *buf, size_t len, int64_t pos)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)(pos + (int64_t)got));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

int br_partition_read_records(struct br_partition *p, const char *what, br_record_fn fn, void *ctx)
{
    int64_t offset = br_log_start_offset(p->log);
    int64_t end = br_log_end_offset(p->log);
    uint8_t *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    while (offset < end && rc == 0) {
        struct br_log_slice sl;
        int err = br_log_read(p->log, offset, end, LOAD_READ_BYTES, true, &sl);
        if (err != 0) {
            br_error("%s-%" PRId32 ": reading offset %" PRId64 " failed: %s", what,
                     p->index, offset, err < 0 ? kp_err_str(err) : kp_err_name(err));
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        if (sl.len <= 0 || sl.next_offset <= offset) {
            br_log_slice_release(&sl);
            break;
        }
        size_t len = (size_t)sl.len;
        if (len > LOAD_MAX_BATCH_BYTES) {
            br_warn("%s-%" PRId32 ": a batch of %zu bytes at offset %" PRId64 " skipped",
                    what, p->index, len, offset);
            offset = sl.next_offset;
            br_log_slice_release(&sl);
            continue;
        }
        if (len > cap) {
            uint8_t *nb = kp_realloc(buf, len);
            if (nb == NULL) {
                br_log_slice_release(&sl);
                rc = KP_E_NOMEM;
                break;
            }
            buf = nb;
            cap = len;
        }
        if (read_fully(br_fileref_fd(sl.file), buf, len, sl.file_pos) != 0) {
            br_error("%s-%" PRId32 ": reading %zu bytes at position %" PRId64 " failed: %s",
                     what, p->index, len, sl.file_pos, strerror(errno));
            br_log_slice_release(&sl);
            rc = KP_ERR_KAFKA_STORAGE_ERROR;
            break;
        }
        size_t pos = 0;
        while (pos < len && rc == 0) {
            struct kp_batch_header h;
            size_t size = 0;
            int e = kp_batch_parse_lenient(buf + pos, len - pos, &h, &size);
            if (e != 0) {
                /* the log validated these bytes when it opened: note and go on */
                br_warn("%s-%" PRId32 ": a damaged batch at file position %" PRId64
                        " (%s): the rest of this read is skipped",
                        what, p->index, sl.file_pos + (int64_t)pos, kp_err_str(e));
                break;
            }
            {
                struct kp_batch_iter it;
                e = kp_batch_iter_init(&it, buf + pos, size, LOAD_MAX_DECOMPRESSED);
                struct kp_record rec;
                while (e == 0 && rc == 0) {
                    e = kp_batch_iter_next(&it, &rec);
                    if (e == 0) {
                        rc = fn(ctx, &h, &rec);
                    }
                }
                if (e != 0 && e != KP_ITER_END) {
                    br_warn("%s-%" PRId32 ": records of the batch at offset %" PRId64
                            " do not decode (%s, %s:%d): the rest of it is skipped",
                            what, p->index, h.BaseOffset, kp_err_str(e),
                            it.err_file != NULL ? it.err_file : "?", it.err_line);
                }
                kp_batch_iter_free(&it);
            }
            pos += size;
        }
        offset = sl.next_offset;
        br_log_slice_release(&sl);
    }
    kp_free(buf);
    return rc;
}
