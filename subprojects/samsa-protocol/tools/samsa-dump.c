/*
 * samsa-dump: print what is inside Kafka frames and log segments.
 *
 *   samsa-dump [--records] REQUESTS...            request frames (a capture of
 *                                                 what clients sent)
 *   samsa-dump [--records] --responses REQUESTS RESPONSES
 *                                                 responses, paired with the
 *                                                 requests by correlation id
 *   samsa-dump [--records] --segment FILE.log     the batches of a log segment
 *   samsa-dump --txnindex FILE.txnindex           an aborted-transaction index
 *
 * A frames file is a stream of size-prefixed frames as they travel on the
 * wire (one direction of a TCP connection, or frames saved one per file).
 * A file whose name ends in ".log" is read as a segment without --segment,
 * one ending in ".txnindex" as an index without --txnindex.
 * --records prints every record of every batch (else one line per batch).
 *
 * What transactions leave in a log is printed as Kafka 2.0 writes it:
 * a control batch's marker (EndTransactionMarker.java: COMMIT or ABORT with
 * the coordinator epoch) under its batch line; a `.txnindex` entry by entry
 * (TransactionIndex.scala, AbortedTxn: 34 bytes of version, producer id,
 * first offset, last offset, last stable offset); and the records of a
 * partition of `__transaction_state` (a segment in a directory
 * `__transaction_state-N`, or any with --transaction-state) decoded as
 * TransactionLog.scala's key (version, transactional id) and value (version,
 * producer id and epoch, timeout, status, partitions, timestamps), every
 * record without --records.
 * --version prints the version meson built it as. Exit status: 0 when everything decoded, 1 when something did not, 2 on
 * usage or I/O errors.
 */
#define _POSIX_C_SOURCE 200809L

#include <samsa-protocol/compress.h>
#include <samsa-protocol/control.h>
#include <samsa-protocol/header.h>
#include <samsa-protocol/messages.h>
#include <samsa-protocol/record_batch.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* meson passes the project's version; a build without it says so */
#ifndef SAMSA_VERSION
#define SAMSA_VERSION "unknown"
#endif

#define MAX_FILE_SIZE ((size_t)1 << 31)
#define MAX_FRAME (100 * 1024 * 1024)
#define MAX_DECOMPRESSED ((size_t)256 * 1024 * 1024)
#define MAX_PENDING 4096

/* TransactionIndex.scala: AbortedTxn's version 0 entry */
#define TXNIDX_ENTRY_SIZE 34
/* partitions in one __transaction_state value, topics' partition ids */
#define MAX_TXN_TOPICS 100000
#define MAX_TXN_PARTITION_IDS 1000000

struct options {
    bool records;
    bool txn_state; /* the records are TransactionLog's (key, value) */
    FILE *out; /* where the dump goes; NULL prints nothing */
};

struct file_buf {
    uint8_t *data;
    size_t len;
};

__attribute__((format(printf, 2, 3))) static void say(const struct options *o,
                                                      const char *fmt, ...)
{
    if (o->out == NULL) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    (void)vfprintf(o->out, fmt, ap);
    va_end(ap);
}

static int read_file(const char *path, struct file_buf *out)
{
    out->data = NULL;
    out->len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "samsa-dump: %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct kp_writer w;
    kp_wr_init(&w, MAX_FILE_SIZE);
    for (;;) {
        uint8_t *p = kp_wr_reserve(&w, 65536);
        if (p == NULL) {
            break;
        }
        size_t n = fread(p, 1, 65536, f);
        w.len -= 65536 - n;
        if (n < 65536) {
            break;
        }
    }
    int io_err = ferror(f);
    (void)fclose(f);
    if (w.err != 0 || io_err != 0) {
        fprintf(stderr, "samsa-dump: %s: %s\n", path,
                w.err != 0 ? kp_err_str(w.err) : "read error");
        kp_wr_free(&w);
        return -1;
    }
    out->data = kp_wr_steal(&w, &out->len);
    return 0;
}

static void print_json(FILE *out, const struct kp_msg_desc *d, int16_t version, const void *msg)
{
    if (out == NULL) {
        return;
    }
    struct kp_writer w;
    kp_wr_init(&w, (size_t)64 << 20);
    kp_msg_format(d, version, msg, &w);
    if (w.err == 0) {
        fprintf(out, "  %.*s\n", (int)(w.len > INT32_MAX ? INT32_MAX : w.len), (const char *)w.buf);
    } else {
        fprintf(out, "  (too large to print: %s)\n", kp_err_str(w.err));
    }
    kp_wr_free(&w);
}

static void print_escaped(FILE *out, struct kp_bytes b)
{
    if (out == NULL) {
        return;
    }
    if (b.len < 0) {
        fprintf(out, "null");
        return;
    }
    fputc('"', out);
    for (int32_t i = 0; i < b.len && i < 200; i++) {
        unsigned char ch = b.ptr[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\') {
            fputc(ch, out);
        } else {
            fprintf(out, "\\x%02x", ch);
        }
    }
    fputc('"', out);
    if (b.len > 200) {
        fprintf(out, "...(%" PRId32 " bytes)", b.len);
    }
}

/* TransactionMetadata.scala's states by their status byte. */
static const char *txn_status_name(int8_t status)
{
    static const char *const names[] = {"Empty",          "Ongoing",       "PrepareCommit",
                                        "PrepareAbort",   "CompleteCommit", "CompleteAbort",
                                        "Dead",           "PrepareEpochFence"};
    return status >= 0 && (size_t)status < sizeof names / sizeof names[0] ? names[status]
                                                                           : "unknown";
}

/* A `__transaction_state` record (TransactionLog.readTxnRecordKey and
 * readTxnRecordValue, version 0): printed on one line. Returns 0, or 1
 * when the key or value does not decode (said on the line). */
static int dump_txn_record(const struct options *o, const char *indent, const struct kp_record *rec)
{
    struct kp_reader r;
    if (rec->Key.len < 0) {
        say(o, "%s  offset %" PRId64 ": null key: not a TransactionLog record\n", indent,
            rec->Offset);
        return 1;
    }
    kp_rd_init(&r, rec->Key.ptr, (size_t)rec->Key.len);
    int16_t kv = kp_rd_i16(&r);
    struct kp_str id = kp_rd_string(&r);
    if (r.err != 0 || kv != 0 || id.len < 0) {
        say(o, "%s  offset %" PRId64 ": key version %d: not a TransactionLog key (%s)\n",
            indent, rec->Offset, kv, r.err != 0 ? kp_err_str(r.err) : "unknown version");
        return 1;
    }
    say(o, "%s  offset %" PRId64 " transactional_id \"%.*s\"", indent, rec->Offset, (int)id.len,
        id.ptr);
    if (rec->Value.len < 0) {
        say(o, " tombstone (the id expired)\n");
        return 0;
    }
    kp_rd_init(&r, rec->Value.ptr, (size_t)rec->Value.len);
    int16_t vv = kp_rd_i16(&r);
    if (r.err == 0 && vv != 0) {
        say(o, " value version %d unknown\n", vv);
        return 1;
    }
    int64_t pid = kp_rd_i64(&r);
    int16_t epoch = kp_rd_i16(&r);
    int32_t timeout = kp_rd_i32(&r);
    int8_t status = kp_rd_i8(&r);
    say(o, " producer_id %" PRId64 " producer_epoch %d transaction_timeout_ms %" PRId32
           " status %s (%d) partitions ",
        pid, epoch, timeout, txn_status_name(status), status);
    /* each topic entry is at least its name's length and its ids' count */
    int32_t ntopics = kp_rd_array_len(&r, false, true, MAX_TXN_TOPICS, 6);
    if (ntopics < 0 && r.err == 0) {
        say(o, "null");
    } else {
        say(o, "[");
    }
    for (int32_t t = 0; t < ntopics && r.err == 0; t++) {
        struct kp_str topic = kp_rd_string(&r);
        int32_t nids = kp_rd_array_len(&r, false, false, MAX_TXN_PARTITION_IDS, 4);
        if (r.err != 0) {
            break;
        }
        say(o, "%s%.*s:", t > 0 ? " " : "", topic.len > 0 ? (int)topic.len : 0,
            topic.len > 0 ? topic.ptr : "");
        for (int32_t k = 0; k < nids && r.err == 0; k++) {
            int32_t part = kp_rd_i32(&r);
            say(o, "%s%" PRId32, k > 0 ? "," : "", part);
        }
    }
    if (ntopics >= 0) {
        say(o, "]");
    }
    int64_t entry_ts = kp_rd_i64(&r);
    int64_t start_ts = kp_rd_i64(&r);
    if (r.err != 0) {
        say(o, " ... value cut short: %s (%s)\n", kp_err_name(r.err), kp_err_str(r.err));
        return 1;
    }
    say(o, " entry_timestamp %" PRId64 " start_timestamp %" PRId64 "\n", entry_ts, start_ts);
    return 0;
}

/* A control batch's marker (kp_batch_parse_lenient accepted the batch). */
static int dump_marker(const uint8_t *batch, size_t size, const struct options *o,
                       const char *indent)
{
    struct kp_txn_marker m;
    int err = kp_txn_marker_batch_read(batch, size, MAX_DECOMPRESSED, &m);
    if (err != 0) {
        say(o, "%s  control record: not a transaction marker: %s (%s)\n", indent, kp_err_name(err),
            kp_err_str(err));
        return 1;
    }
    say(o, "%s  %s marker, CoordinatorEpoch %" PRId32 "\n", indent,
        m.type == KP_CONTROL_COMMIT ? "COMMIT" : "ABORT", m.coordinator_epoch);
    return 0;
}

/* A `.txnindex` file: its 34-byte entries. Returns the number of bad ones
 * (an unknown version, a partial entry at the end). */
static int dump_txnindex(const struct file_buf *f, const struct options *o)
{
    struct kp_reader r;
    kp_rd_init(&r, f->data, f->len);
    int bad = 0;
    for (size_t n = 0; kp_rd_remaining(&r) >= TXNIDX_ENTRY_SIZE; n++) {
        int16_t version = kp_rd_i16(&r);
        int64_t pid = kp_rd_i64(&r);
        int64_t first = kp_rd_i64(&r);
        int64_t last = kp_rd_i64(&r);
        int64_t lso = kp_rd_i64(&r);
        if (version != 0) {
            say(o, "entry %zu @%zu: version %d unknown (TransactionIndex reads version 0)\n", n,
                n * TXNIDX_ENTRY_SIZE, version);
            bad++;
            break;
        }
        say(o, "entry %zu @%zu: ABORT ProducerId %" PRId64 " FirstOffset %" PRId64
               " LastOffset %" PRId64 " LastStableOffset %" PRId64 "\n",
            n, n * TXNIDX_ENTRY_SIZE, pid, first, last, lso);
    }
    size_t left = kp_rd_remaining(&r);
    if (bad == 0 && left > 0) {
        say(o, "position %zu: partial entry (%zu bytes left)\n", r.off, left);
        bad++;
    }
    return bad;
}

/* Print the batches in a run of record-batch bytes (a segment file, or the
 * Records of one partition). Returns the number of bad batches. */
static int dump_batches(const uint8_t *p, size_t len, const struct options *o, const char *indent,
                        size_t base_pos)
{
    size_t pos = 0;
    int bad = 0;
    while (pos < len) {
        struct kp_batch_header h;
        size_t size = 0;
        int err = kp_batch_parse_lenient(p + pos, len - pos, &h, &size);
        if (err == KP_AGAIN) {
            say(o, "%sposition %zu: partial batch (%zu bytes left)\n", indent, base_pos + pos,
                   len - pos);
            break;
        }
        if (err != 0) {
            say(o, "%sposition %zu: invalid batch: %s (%s)\n", indent, base_pos + pos,
                   kp_err_name(err), kp_err_str(err));
            bad++;
            break;
        }
        say(o, "%sposition %zu: BaseOffset %" PRId64 " LastOffsetDelta %" PRId32
               " RecordCount %" PRId32 " BatchLength %" PRId32 " PartitionLeaderEpoch %" PRId32
               " codec %s %s BaseTimestamp %" PRId64 " MaxTimestamp %" PRId64
               " ProducerId %" PRId64 " ProducerEpoch %d BaseSequence %" PRId32 "%s%s crc ok\n",
               indent, base_pos + pos, h.BaseOffset, h.LastOffsetDelta, h.RecordCount,
               h.BatchLength, h.PartitionLeaderEpoch, kp_codec_name(kp_batch_codec(&h)),
               kp_batch_timestamp_type(&h) == KP_TS_LOG_APPEND_TIME ? "LogAppendTime" : "CreateTime", h.BaseTimestamp,
               h.MaxTimestamp, h.ProducerId, h.ProducerEpoch, h.BaseSequence,
               kp_batch_is_transactional(&h) ? " transactional" : "",
               kp_batch_is_control(&h) ? " control" : "");
        if (kp_batch_is_control(&h)) {
            bad += dump_marker(p + pos, size, o, indent);
        }
        if (o->txn_state && !kp_batch_is_control(&h)) {
            struct kp_batch_iter it;
            err = kp_batch_iter_init(&it, p + pos, size, MAX_DECOMPRESSED);
            while (err == 0) {
                struct kp_record rec;
                err = kp_batch_iter_next(&it, &rec);
                if (err == 0) {
                    bad += dump_txn_record(o, indent, &rec);
                }
            }
            if (err != KP_ITER_END) {
                say(o, "%s  records: %s (%s)\n", indent, kp_err_name(err), kp_err_str(err));
                bad++;
            }
            kp_batch_iter_free(&it);
        } else if (o->records) {
            struct kp_batch_iter it;
            err = kp_batch_iter_init(&it, p + pos, size, MAX_DECOMPRESSED);
            while (err == 0) {
                struct kp_record rec;
                err = kp_batch_iter_next(&it, &rec);
                if (err != 0) {
                    break;
                }
                say(o, "%s  offset %" PRId64 " timestamp %" PRId64 " key ", indent, rec.Offset,
                       rec.Timestamp);
                print_escaped(o->out, rec.Key);
                say(o, " value ");
                print_escaped(o->out, rec.Value);
                say(o, " headers %" PRId32 "\n", rec.HeaderCount);
            }
            if (err != KP_ITER_END) {
                say(o, "%s  records: %s (%s)\n", indent, kp_err_name(err), kp_err_str(err));
                bad++;
            }
            kp_batch_iter_free(&it);
        }
        pos += size;
    }
    return bad;
}

/* Records inside Produce requests and Fetch responses. */
static int dump_message_records(int16_t key, bool request, const void *body,
                                const struct options *o)
{
    int bad = 0;
    if (key == KP_API_PRODUCE && request) {
        const struct kp_ProduceRequest *m = body;
        for (int32_t t = 0; t < m->TopicData.count; t++) {
            const struct kp_ProduceRequest_TopicProduceData *td = &m->TopicData.items[t];
            for (int32_t i = 0; i < td->PartitionData.count; i++) {
                const struct kp_ProduceRequest_PartitionProduceData *pd =
                    &td->PartitionData.items[i];
                say(o, "  %.*s-%" PRId32 " records:\n", (int)td->Name.len, td->Name.ptr,
                       pd->Index);
                if (pd->Records.len > 0) {
                    bad += dump_batches(pd->Records.ptr, (size_t)pd->Records.len, o, "    ", 0);
                }
            }
        }
    } else if (key == KP_API_FETCH && !request) {
        const struct kp_FetchResponse *m = body;
        for (int32_t t = 0; t < m->Responses.count; t++) {
            const struct kp_FetchResponse_FetchableTopicResponse *tr = &m->Responses.items[t];
            for (int32_t i = 0; i < tr->Partitions.count; i++) {
                const struct kp_FetchResponse_PartitionData *pd = &tr->Partitions.items[i];
                say(o, "  %.*s-%" PRId32 " records:\n", (int)tr->Topic.len, tr->Topic.ptr,
                       pd->PartitionIndex);
                if (pd->Records.len > 0) {
                    bad += dump_batches(pd->Records.ptr, (size_t)pd->Records.len, o, "    ", 0);
                }
            }
        }
    }
    return bad;
}

struct pending {
    int32_t correlation_id;
    int16_t api_key;
    int16_t api_version;
};

struct pending_list {
    struct pending items[MAX_PENDING];
    size_t n;
};

static int dump_requests(const struct file_buf *f, const struct options *o,
                         struct pending_list *pl)
{
    size_t pos = 0;
    int bad = 0;
    unsigned frame = 0;
    while (pos < f->len) {
        int32_t size = 0;
        int err = kp_frame_size(f->data + pos, f->len - pos, MAX_FRAME, &size);
        if (err == 0 && f->len - pos - 4 < (size_t)size) {
            err = KP_AGAIN;
        }
        if (err != 0) {
            say(o, "frame %u @%zu: %s\n", frame, pos,
                   err == KP_AGAIN ? "truncated frame" : kp_err_str(err));
            return bad + 1;
        }
        const uint8_t *payload = f->data + pos + 4;
        struct kp_arena a;
        kp_arena_init(&a, (size_t)size * 8 + 65536);
        struct kp_request req;
        err = kp_request_decode(payload, (size_t)size, &a, &req);
        const char *name = req.api != NULL ? req.api->name : "unknown API";
        say(o, "frame %u @%zu: %s v%d (key %d) correlation %" PRId32 " client \"%.*s\" header v%d,"
               " %" PRId32 " bytes\n",
               frame, pos, name, req.header.RequestApiVersion, req.header.RequestApiKey,
               req.header.CorrelationId, (int)req.header.ClientId.len, req.header.ClientId.ptr,
               req.header_version, size);
        if (err != 0 || req.api == NULL) {
            say(o, "  cannot decode: %s (%s)\n", kp_err_name(err), kp_err_str(err));
            bad++;
        } else {
            print_json(o->out, req.api->request, req.header.RequestApiVersion, req.body);
            bad += dump_message_records(req.header.RequestApiKey, true, req.body, o);
        }
        if (pl != NULL && pl->n < MAX_PENDING) {
            struct pending p = {req.header.CorrelationId, req.header.RequestApiKey,
                                req.header.RequestApiVersion};
            pl->items[pl->n++] = p;
        }
        kp_arena_free(&a);
        pos += 4 + (size_t)size;
        frame++;
    }
    return bad;
}

static int dump_responses(const struct file_buf *f, const struct options *o,
                          const struct pending_list *pl)
{
    size_t pos = 0;
    int bad = 0;
    unsigned frame = 0;
    while (pos < f->len) {
        int32_t size = 0;
        int err = kp_frame_size(f->data + pos, f->len - pos, MAX_FRAME, &size);
        if (err == 0 && (f->len - pos - 4 < (size_t)size || size < 4)) {
            err = KP_AGAIN;
        }
        if (err != 0) {
            say(o, "frame %u @%zu: %s\n", frame, pos,
                   err == KP_AGAIN ? "truncated frame" : kp_err_str(err));
            return bad + 1;
        }
        const uint8_t *payload = f->data + pos + 4;
        int32_t corr = (int32_t)kp_load_be32(payload);
        const struct pending *req = NULL;
        for (size_t i = 0; i < pl->n; i++) {
            if (pl->items[i].correlation_id == corr) {
                req = &pl->items[i];
                break;
            }
        }
        if (req == NULL) {
            say(o, "frame %u @%zu: correlation %" PRId32 " matches no request\n", frame, pos, corr);
            bad++;
        } else {
            const struct kp_api *api = kp_api_find(req->api_key);
            struct kp_arena a;
            kp_arena_init(&a, (size_t)size * 8 + 65536);
            struct kp_response_header h;
            void *body = NULL;
            err = kp_response_decode(payload, (size_t)size, req->api_key, req->api_version, &a,
                                     &h, &body);
            say(o, "frame %u @%zu: %s v%d response, correlation %" PRId32 ", %" PRId32
                   " bytes\n",
                   frame, pos, api != NULL ? api->name : "unknown API", req->api_version, corr,
                   size);
            if (err != 0 || api == NULL) {
                say(o, "  cannot decode: %s (%s)\n", kp_err_name(err), kp_err_str(err));
                bad++;
            } else {
                print_json(o->out, api->response, req->api_version, body);
                bad += dump_message_records(req->api_key, false, body, o);
            }
            kp_arena_free(&a);
        }
        pos += 4 + (size_t)size;
        frame++;
    }
    return bad;
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: samsa-dump [--records] REQUESTS...\n"
            "       samsa-dump [--records] --responses REQUESTS RESPONSES\n"
            "       samsa-dump [--records] [--transaction-state] --segment FILE.log...\n"
            "       samsa-dump --txnindex FILE.txnindex...\n"
            "       samsa-dump --help | --version\n"
            "Prints Kafka request/response frames (size-prefixed, as on the wire) and\n"
            "log segments (record batches, transaction markers; the records of a\n"
            "__transaction_state-N segment decoded), and aborted-transaction indexes.\n"
            "Files named *.log are read as segments, *.txnindex as indexes.\n");
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s);
    size_t b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Whether path's directory is a partition of __transaction_state
 * (".../__transaction_state-N/<base>.log"). */
static bool in_txn_state_partition(const char *path)
{
    static const char topic[] = "__transaction_state-";
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        return false;
    }
    const char *dir = slash;
    while (dir > path && dir[-1] != '/') {
        dir--;
    }
    size_t n = (size_t)(slash - dir);
    if (n <= sizeof topic - 1 || strncmp(dir, topic, sizeof topic - 1) != 0) {
        return false;
    }
    for (const char *c = dir + sizeof topic - 1; c < slash; c++) {
        if (*c < '0' || *c > '9') {
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv)
{
    struct options o = {false, false, stdout};
    bool responses = false;
    bool segment = false;
    bool txnindex = false;
    bool txn_state = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--records") == 0) {
            o.records = true;
        } else if (strcmp(argv[i], "--responses") == 0) {
            responses = true;
        } else if (strcmp(argv[i], "--segment") == 0) {
            segment = true;
        } else if (strcmp(argv[i], "--txnindex") == 0) {
            txnindex = true;
        } else if (strcmp(argv[i], "--transaction-state") == 0) {
            txn_state = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("samsa-dump %s\n", SAMSA_VERSION);
            return 0;
        } else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else {
            fprintf(stderr, "samsa-dump: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc || (responses && argc - i != 2)) {
        usage(stderr);
        return 2;
    }
    int bad = 0;
    if (responses) {
        struct file_buf req;
        struct file_buf resp;
        if (read_file(argv[i], &req) != 0) {
            return 2;
        }
        if (read_file(argv[i + 1], &resp) != 0) {
            kp_free(req.data);
            return 2;
        }
        struct pending_list *pl = kp_calloc(1, sizeof *pl);
        if (pl == NULL) {
            kp_free(req.data);
            kp_free(resp.data);
            return 2;
        }
        /* the requests decide how each response is read; print them quietly */
        struct options quiet = o;
        quiet.out = NULL;
        bad += dump_requests(&req, &quiet, pl);
        bad += dump_responses(&resp, &o, pl);
        kp_free(pl);
        kp_free(req.data);
        kp_free(resp.data);
        return bad > 0 ? 1 : 0;
    }
    for (; i < argc; i++) {
        struct file_buf f;
        if (read_file(argv[i], &f) != 0) {
            return 2;
        }
        printf("== %s (%zu bytes)\n", argv[i], f.len);
        if (txnindex || ends_with(argv[i], ".txnindex")) {
            bad += dump_txnindex(&f, &o);
        } else if (segment || ends_with(argv[i], ".log")) {
            struct options so = o;
            so.txn_state = txn_state || in_txn_state_partition(argv[i]);
            bad += dump_batches(f.data, f.len, &so, "", 0);
        } else {
            bad += dump_requests(&f, &o, NULL);
        }
        kp_free(f.data);
    }
    return bad > 0 ? 1 : 0;
}
