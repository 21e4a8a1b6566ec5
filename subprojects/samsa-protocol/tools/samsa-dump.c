/*
 * samsa-dump: print what is inside Kafka frames and log segments.
 *
 *   samsa-dump [--records] REQUESTS...            request frames (a capture of
 *                                                 what clients sent)
 *   samsa-dump [--records] --responses REQUESTS RESPONSES
 *                                                 responses, paired with the
 *                                                 requests by correlation id
 *   samsa-dump [--records] --segment FILE.log     the batches of a log segment
 *
 * A frames file is a stream of size-prefixed frames as they travel on the
 * wire (one direction of a TCP connection, or frames saved one per file).
 * A file whose name ends in ".log" is read as a segment without --segment.
 * --records prints every record of every batch (else one line per batch).
 * --version prints the version meson built it as. Exit status: 0 when everything decoded, 1 when something did not, 2 on
 * usage or I/O errors.
 */
#define _POSIX_C_SOURCE 200809L

#include <samsa-protocol/compress.h>
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

struct options {
    bool records;
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
        if (o->records) {
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
            "       samsa-dump [--records] --segment FILE.log...\n"
            "       samsa-dump --help | --version\n"
            "Prints Kafka request/response frames (size-prefixed, as on the wire) and\n"
            "log segments (record batches). Files named *.log are read as segments.\n");
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s);
    size_t b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int main(int argc, char **argv)
{
    struct options o = {false, stdout};
    bool responses = false;
    bool segment = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--records") == 0) {
            o.records = true;
        } else if (strcmp(argv[i], "--responses") == 0) {
            responses = true;
        } else if (strcmp(argv[i], "--segment") == 0) {
            segment = true;
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
        if (segment || ends_with(argv[i], ".log")) {
            bad += dump_batches(f.data, f.len, &o, "", 0);
        } else {
            bad += dump_requests(&f, &o, NULL);
        }
        kp_free(f.data);
    }
    return bad > 0 ? 1 : 0;
}
