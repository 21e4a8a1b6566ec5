/* Unit tests for the group layer (broker/src/group/): Java's
 * String.hashCode over UTF-16 and the partition of __consumer_offsets a
 * group maps to (expected values from Java's definition, s[0]*31^(n-1) +
 * ... over UTF-16 code units); the records of __consumer_offsets
 * (group/records.h): Kafka's key and value formats, byte by byte, and how
 * loading applies them to a coordinator; then the coordinator's state
 * machine driven by a clock of the test's own: the initial rebalance
 * delay, the rebalance timeout, session expiry, leaving, pending member
 * ids; commits appended to a real log, pending until settled; the
 * group record of a generation, whose syncs wait until it is settled. */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/buf.h>
#include <samsa-protocol/err.h>

#include "base/fileref.h"
#include "base/logging.h"
#include "cunit_run.h"
#include "group/group.h"
#include "group/records.h"
#include "replica/partition.h"
#include "storage/log.h"
#include "tmpdir.h"

static int32_t hash_of(const char *s)
{
    return br_group_java_hash(s, strlen(s));
}

static void test_java_hash_of_ascii_strings(void)
{
    CU_ASSERT_EQUAL(hash_of(""), 0);
    CU_ASSERT_EQUAL(hash_of("g1"), 3242);
    CU_ASSERT_EQUAL(hash_of("console-consumer-12345"), 158455506);
}

static void test_java_hash_of_two_and_three_byte_utf8(void)
{
    /* "grüppe-Ω": U+00FC and U+03A9 are single UTF-16 units */
    CU_ASSERT_EQUAL(hash_of("gr\xc3\xbcppe-\xce\xa9"), 243491696);
    /* "日本語グループ" */
    CU_ASSERT_EQUAL(hash_of("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x82\xb0\xe3\x83\xab"
                            "\xe3\x83\xbc\xe3\x83\x97"),
                    -305235731);
}

static void test_java_hash_counts_a_surrogate_pair_as_two_units(void)
{
    /* "emoji-😀-group": U+1F600 is D83D DE00 in UTF-16 */
    CU_ASSERT_EQUAL(hash_of("emoji-\xf0\x9f\x98\x80-group"), -1581567172);
}

static void test_java_hash_replaces_malformed_bytes(void)
{
    /* a lone 0xFF byte and a stray continuation byte are U+FFFD each */
    CU_ASSERT_EQUAL(hash_of("a\xff"
                            "b"),
                    2124838);
    CU_ASSERT_EQUAL(hash_of("\x80\xbf"), 2097056);
    /* an overlong encoding of '/' is not '/' */
    CU_ASSERT_NOT_EQUAL(hash_of("\xc0\xaf"), hash_of("/"));
}

static void test_java_hash_uses_the_given_length(void)
{
    CU_ASSERT_EQUAL(br_group_java_hash("g1xyz", 2), 3242);
    CU_ASSERT_EQUAL(br_group_java_hash("a\0b", 3), (int32_t)(97 * 31 * 31 + 0 * 31 + 98));
}

static void test_partition_is_kafka_utils_abs_modulo(void)
{
    CU_ASSERT_EQUAL(br_group_partition_for("g1", 2, 50), 42);
    CU_ASSERT_EQUAL(br_group_partition_for("g1", 2, 7), 1);
    /* a negative hash: Utils.abs */
    CU_ASSERT_EQUAL(br_group_partition_for("emoji-\xf0\x9f\x98\x80-group", 16, 50), 22);
    CU_ASSERT_EQUAL(br_group_partition_for("emoji-\xf0\x9f\x98\x80-group", 16, 7), 3);
}

static void test_partition_of_integer_min_hash_is_zero(void)
{
    /* "polygenelubricants".hashCode() == Integer.MIN_VALUE, and Kafka's
     * Utils.abs maps it to 0 (Math.abs would stay negative) */
    CU_ASSERT_EQUAL(hash_of("polygenelubricants"), INT32_MIN);
    CU_ASSERT_EQUAL(br_group_partition_for("polygenelubricants", 18, 50), 0);
    CU_ASSERT_EQUAL(br_group_partition_for("polygenelubricants", 18, 7), 0);
}

static void test_partition_of_a_bad_count_is_zero(void)
{
    CU_ASSERT_EQUAL(br_group_partition_for("g1", 2, 0), 0);
    CU_ASSERT_EQUAL(br_group_partition_for("g1", 2, -3), 0);
    CU_ASSERT_EQUAL(br_group_partition_for("g1", 2, 1), 0);
}

/* ---------------------------------------------------------------- records */

static struct kp_bytes bytes_of(const uint8_t *p, size_t n)
{
    struct kp_bytes b = {p, (int32_t)n};
    return b;
}

static bool str_is(struct kp_str s, const char *want)
{
    size_t n = strlen(want);
    return s.len >= 0 && (size_t)s.len == n && memcmp(s.ptr, want, n) == 0;
}

/* offset commit key v1: group "g1", topic "t", partition 3 */
static const uint8_t offset_key_v1[] = {0x00, 0x01, 0x00, 0x02, 'g',  '1', 0x00,
                                        0x01, 't',  0x00, 0x00, 0x00, 0x03};
/* offset commit key v0: the same fields */
static const uint8_t offset_key_v0[] = {0x00, 0x00, 0x00, 0x02, 'g',  '1', 0x00,
                                        0x01, 't',  0x00, 0x00, 0x00, 0x03};
/* group metadata key v2: group "g1" */
static const uint8_t group_key_v2[] = {0x00, 0x02, 0x00, 0x02, 'g', '1'};

static void test_record_decode_reads_offset_values_v0_to_v3(void)
{
    /* v0 and v2: offset 42, metadata "m", commit timestamp 1000 */
    static const uint8_t v0[] = {0x00, 0x00, 0, 0, 0, 0, 0, 0, 0,    42,  0x00,
                                 0x01, 'm',  0, 0, 0, 0, 0, 0, 0x03, 0xe8};
    static const uint8_t v2[] = {0x00, 0x02, 0, 0, 0, 0, 0, 0, 0,    42,  0x00,
                                 0x01, 'm',  0, 0, 0, 0, 0, 0, 0x03, 0xe8};
    /* v1: offset 42, metadata "", commit 1000, expire 2000 */
    static const uint8_t v1[] = {0x00, 0x01, 0, 0, 0, 0,    0, 0, 0, 42, 0x00, 0x00, 0,    0,
                                 0,    0,    0, 0, 3, 0xe8, 0, 0, 0, 0,  0,    0,    0x07, 0xd0};
    /* v3: offset 42, leader epoch 5, metadata null, commit 1000 */
    static const uint8_t v3[] = {0x00, 0x03, 0,    0,    0, 0, 0, 0, 0, 42, 0,    0,
                                 0,    5,    0xff, 0xff, 0, 0, 0, 0, 0, 0,  0x03, 0xe8};
    static const struct {
        const uint8_t *key;
        size_t klen;
        const uint8_t *value;
        size_t vlen;
        int16_t version;
        int32_t leader_epoch;
        int64_t expire_ts;
        const char *metadata; /* NULL: null */
    } cases[] = {
        {offset_key_v0, sizeof offset_key_v0, v0, sizeof v0, 0, -1, -1, "m"},
        {offset_key_v1, sizeof offset_key_v1, v1, sizeof v1, 1, -1, 2000, ""},
        {offset_key_v1, sizeof offset_key_v1, v2, sizeof v2, 2, -1, -1, "m"},
        {offset_key_v1, sizeof offset_key_v1, v3, sizeof v3, 3, 5, -1, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct grp_record r;
        int rc = br_grp_record_decode(bytes_of(cases[i].key, cases[i].klen),
                                      bytes_of(cases[i].value, cases[i].vlen), &r);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        CU_ASSERT_TRUE(str_is(r.group, "g1"));
        CU_ASSERT_TRUE(str_is(r.topic, "t"));
        CU_ASSERT_EQUAL(r.partition, 3);
        CU_ASSERT_EQUAL(r.value_version, cases[i].version);
        CU_ASSERT_EQUAL(r.offset, 42);
        CU_ASSERT_EQUAL(r.commit_ts, 1000);
        CU_ASSERT_EQUAL(r.leader_epoch, cases[i].leader_epoch);
        CU_ASSERT_EQUAL(r.expire_ts, cases[i].expire_ts);
        if (cases[i].metadata == NULL) {
            CU_ASSERT_EQUAL(r.metadata.len, -1);
        } else {
            CU_ASSERT_TRUE(str_is(r.metadata, cases[i].metadata));
        }
    }
}

static void test_record_decode_reads_group_values_v0_to_v3_with_members(void)
{
    /* protocol type "consumer", generation 7, protocol "range", leader "m1",
     * [state timestamp 1000], one member "m1" [instance "i"] client "c" host
     * "h", [rebalance timeout 300], session timeout 100, subscription {1},
     * assignment {2, 3} */
    static const uint8_t head[] = {0x00, 0x08, 'c', 'o',  'n',  's',  'u',  'm', 'e',
                                   'r',  0,    0,   0,    7,    0x00, 0x05, 'r', 'a',
                                   'n',  'g',  'e', 0x00, 0x02, 'm',  '1'};
    for (int16_t v = 0; v <= 3; v++) {
        uint8_t buf[128];
        struct kp_writer w;
        kp_wr_init_fixed(&w, buf, sizeof buf);
        kp_wr_i16(&w, v);
        kp_wr_raw(&w, head, sizeof head);
        if (v >= 2) {
            kp_wr_i64(&w, 1000);
        }
        static const uint8_t members_v3[] = {0,    0,    0,    1,    0x00, 0x02, 'm',  '1', 0x00,
                                             0x01, 'i',  0x00, 0x01, 'c',  0x00, 0x01, 'h', 0,
                                             0,    0x01, 0x2c, 0,    0,    0,    100,  0,   0,
                                             0,    1,    1,    0,    0,    0,    2,    2,   3};
        /* the same member without the fields of later versions */
        static const uint8_t members_v1[] = {
            0,    0, 0, 1, 0x00, 0x02, 'm', '1', 0x00, 0x01, 'c', 0x00, 0x01, 'h', 0, 0, 0x01,
            0x2c, 0, 0, 0, 100,  0,    0,   0,   1,    1,    0,   0,    0,    2,   2, 3};
        static const uint8_t members_v0[] = {0,   0,    0,    1,   0x00, 0x02, 'm', '1', 0x00, 0x01,
                                             'c', 0x00, 0x01, 'h', 0,    0,    0,   100, 0,    0,
                                             0,   1,    1,    0,   0,    0,    2,   2,   3};
        if (v == 3) {
            kp_wr_raw(&w, members_v3, sizeof members_v3);
        } else if (v >= 1) {
            kp_wr_raw(&w, members_v1, sizeof members_v1);
        } else {
            kp_wr_raw(&w, members_v0, sizeof members_v0);
        }
        CU_ASSERT_EQUAL_FATAL(w.err, 0);
        struct grp_record r;
        int rc = br_grp_record_decode(bytes_of(group_key_v2, sizeof group_key_v2),
                                      bytes_of(buf, w.len), &r);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        CU_ASSERT_EQUAL(r.key_version, GRP_KEY_GROUP_V2);
        CU_ASSERT_EQUAL(r.value_version, v);
        CU_ASSERT_TRUE(str_is(r.protocol_type, "consumer"));
        CU_ASSERT_EQUAL(r.generation, 7);
        CU_ASSERT_TRUE(str_is(r.protocol, "range"));
        CU_ASSERT_TRUE(str_is(r.leader, "m1"));
        CU_ASSERT_EQUAL(r.state_ts, v >= 2 ? 1000 : -1);

        struct grp_member_iter it;
        CU_ASSERT_EQUAL_FATAL(br_grp_members_begin(&r, &it), 0);
        struct grp_record_member m;
        CU_ASSERT_EQUAL_FATAL(br_grp_members_next(&it, &m), 0);
        CU_ASSERT_TRUE(str_is(m.member_id, "m1"));
        if (v >= 3) {
            CU_ASSERT_TRUE(str_is(m.instance_id, "i"));
        } else {
            CU_ASSERT_EQUAL(m.instance_id.len, -1);
        }
        CU_ASSERT_TRUE(str_is(m.client_id, "c"));
        CU_ASSERT_TRUE(str_is(m.client_host, "h"));
        CU_ASSERT_EQUAL(m.rebalance_timeout_ms, v >= 1 ? 300 : 100);
        CU_ASSERT_EQUAL(m.session_timeout_ms, 100);
        CU_ASSERT_TRUE(m.subscription.len == 1 && m.subscription.ptr[0] == 1);
        CU_ASSERT_TRUE(m.assignment.len == 2 && m.assignment.ptr[1] == 3);
        CU_ASSERT_EQUAL(br_grp_members_next(&it, &m), KP_ITER_END);
    }
}

static void test_record_decode_of_a_null_value_is_a_tombstone(void)
{
    struct grp_record r;
    CU_ASSERT_EQUAL(
        br_grp_record_decode(bytes_of(offset_key_v1, sizeof offset_key_v1), KP_BYTES_NULL, &r), 0);
    CU_ASSERT_EQUAL(r.value_version, -1);
    CU_ASSERT_TRUE(str_is(r.topic, "t"));
    CU_ASSERT_EQUAL(
        br_grp_record_decode(bytes_of(group_key_v2, sizeof group_key_v2), KP_BYTES_NULL, &r), 0);
    CU_ASSERT_EQUAL(r.value_version, -1);
    CU_ASSERT_TRUE(str_is(r.group, "g1"));
}

static void test_record_decode_rejects_broken_records_with_their_site(void)
{
    static const uint8_t key_v3[] = {0x00, 0x03, 0x00, 0x02, 'g', '1'};
    static const uint8_t key_cut[] = {0x00, 0x01, 0x00, 0x02, 'g'};
    static const uint8_t key_null_group[] = {0x00, 0x02, 0xff, 0xff};
    static const uint8_t key_nul_topic[] = {0x00, 0x01, 0x00, 0x02, 'g',  '1',  0x00,
                                            0x02, 't',  0x00, 0x00, 0x00, 0x00, 0x03};
    static const uint8_t value_v4[] = {0x00, 0x04, 0, 0, 0, 0, 0, 0, 0, 42};
    static const uint8_t value_cut[] = {0x00, 0x03, 0, 0, 0, 0};
    static const uint8_t v3[] = {0x00, 0x03, 0,    0,    0, 0, 0, 0, 0, 42, 0,    0,
                                 0,    5,    0xff, 0xff, 0, 0, 0, 0, 0, 0,  0x03, 0xe8};
    static const struct {
        const uint8_t *key;
        size_t klen;
        const uint8_t *value;
        size_t vlen;
        int err;
    } cases[] = {
        {key_v3, sizeof key_v3, NULL, 0, KP_E_UNSUPPORTED},
        {key_cut, sizeof key_cut, NULL, 0, KP_E_TRUNCATED},
        {key_null_group, sizeof key_null_group, NULL, 0, KP_E_CORRUPT},
        {key_nul_topic, sizeof key_nul_topic, v3, sizeof v3, KP_E_CORRUPT},
        {offset_key_v1, sizeof offset_key_v1, value_v4, sizeof value_v4, KP_E_UNSUPPORTED},
        {group_key_v2, sizeof group_key_v2, value_v4, sizeof value_v4, KP_E_UNSUPPORTED},
        {offset_key_v1, sizeof offset_key_v1, value_cut, sizeof value_cut, KP_E_TRUNCATED},
        {offset_key_v1, 1, v3, sizeof v3, KP_E_TRUNCATED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct grp_record r;
        struct kp_bytes value =
            cases[i].value != NULL ? bytes_of(cases[i].value, cases[i].vlen) : KP_BYTES_NULL;
        int rc = br_grp_record_decode(bytes_of(cases[i].key, cases[i].klen), value, &r);
        CU_ASSERT_EQUAL(rc, cases[i].err);
        CU_ASSERT_PTR_NOT_NULL(r.err_file);
        CU_ASSERT_TRUE(r.err_line > 0);
    }
    struct grp_record r;
    CU_ASSERT_EQUAL(br_grp_record_decode(KP_BYTES_NULL, KP_BYTES_NULL, &r), KP_E_CORRUPT);
}

static void test_members_refuse_a_count_beyond_the_bytes(void)
{
    /* protocol type "", generation 1, protocol null, leader null, 1000 members */
    static const uint8_t value[] = {0x00, 0x00, 0x00, 0x00, 0,    0,    0,    1,    0xff, 0xff,
                                    0xff, 0xff, 0,    0,    0x03, 0xe8, 0x00, 0x01, 'x'};
    struct grp_record r;
    CU_ASSERT_EQUAL_FATAL(br_grp_record_decode(bytes_of(group_key_v2, sizeof group_key_v2),
                                               bytes_of(value, sizeof value), &r),
                          0);
    struct grp_member_iter it;
    CU_ASSERT_EQUAL(br_grp_members_begin(&r, &it), KP_E_BAD_LENGTH);
    struct grp_record_member m;
    CU_ASSERT_EQUAL(br_grp_members_next(&it, &m), KP_E_BAD_LENGTH);
}

/* A record encoded by the coordinator decodes to what it wrote. */
static void test_encoded_offset_values_decode_to_the_commit(void)
{
    struct grp_offset with_epoch = {NULL, 3, 42, 5, NULL, 1000, -1, -1};
    struct grp_offset with_expiry = {NULL, 3, 42, -1, NULL, 1000, 2000, -1};
    struct grp_offset plain = {NULL, 3, 42, -1, NULL, 1000, -1, -1};
    const struct grp_offset *cases[] = {&with_epoch, &with_expiry, &plain};
    for (size_t i = 0; i < 3; i++) {
        uint8_t buf[128];
        struct kp_writer w;
        kp_wr_init_fixed(&w, buf, sizeof buf);
        br_grp_enc_offset_key(&w, kp_str_c("g1"), kp_str_c("t"), 3);
        size_t kend = w.len;
        br_grp_enc_offset_value(&w, cases[i], kp_str_c("m"));
        CU_ASSERT_EQUAL_FATAL(w.err, 0);
        CU_ASSERT_EQUAL(kend, sizeof offset_key_v1);
        CU_ASSERT_EQUAL(memcmp(buf, offset_key_v1, kend), 0);
        struct grp_record r;
        CU_ASSERT_EQUAL_FATAL(
            br_grp_record_decode(bytes_of(buf, kend), bytes_of(buf + kend, w.len - kend), &r), 0);
        CU_ASSERT_EQUAL(r.value_version, i == 0 ? 3 : 1);
        if (i == 2) {
            /* Kafka 2.0's v1 with no expiry: expire_timestamp -1 */
            /* clang-format off */
            static const uint8_t v1[] = {
                0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 42,           /* version, offset */
                0x00, 0x01, 'm',                               /* metadata */
                0, 0, 0, 0, 0, 0, 0x03, 0xe8,                  /* commit_timestamp */
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff /* expire_timestamp */
            };
            /* clang-format on */
            CU_ASSERT_EQUAL(w.len - kend, sizeof v1);
            CU_ASSERT_EQUAL(memcmp(buf + kend, v1, sizeof v1), 0);
        }
        CU_ASSERT_EQUAL(r.offset, 42);
        CU_ASSERT_EQUAL(r.leader_epoch, cases[i]->leader_epoch);
        CU_ASSERT_EQUAL(r.expire_ts, cases[i]->expire_ts);
        CU_ASSERT_EQUAL(r.commit_ts, 1000);
        CU_ASSERT_TRUE(str_is(r.metadata, "m"));
    }
}

/* A group of one member "m" (client "c", host "/h", timeouts 300000 and
 * 10000, subscription "S", assignment "A") in generation 7 of protocol
 * "range"; instance: the member has group instance id "i1". */
static void encode_group(bool instance, struct kp_writer *w)
{
    static char proto_name[] = "range";
    static char id[] = "m";
    static char client[] = "c";
    static char host[] = "/h";
    static char type[] = "consumer";
    static char inst[] = "i1";
    static uint8_t sub[] = {'S'};
    static uint8_t asg[] = {'A'};
    struct grp_protocol proto = {proto_name, sub, 1};
    struct grp_member m;
    memset(&m, 0, sizeof m);
    m.id = id;
    m.instance_id = instance ? inst : NULL;
    m.client_id = client;
    m.client_host = host;
    m.session_timeout_ms = 10000;
    m.rebalance_timeout_ms = 300000;
    m.protocols = &proto;
    m.nprotocols = 1;
    m.assignment = asg;
    m.assignment_len = 1;
    struct grp_member *members[] = {&m};
    struct grp_group g;
    memset(&g, 0, sizeof g);
    g.state_ts = 2000;
    g.generation = 7;
    g.protocol_type = type;
    g.protocol = proto_name;
    g.leader = &m;
    g.members = members;
    g.nmembers = 1;
    br_grp_enc_group_value(w, &g, 5000);
}

/* Kafka 2.0 writes group value v1 (GroupMetadataManager at 2.0.0): so does
 * the coordinator, unless a member has a group instance id (v3 only). */
static void test_group_values_are_written_as_kafka_2_0_writes_them(void)
{
    /* clang-format off */
    static const uint8_t v1[] = {
        0x00, 0x01,                                            /* version 1 */
        0x00, 0x08, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',    /* protocol_type */
        0, 0, 0, 7,                                            /* generation */
        0x00, 0x05, 'r', 'a', 'n', 'g', 'e',                   /* protocol */
        0x00, 0x01, 'm',                                       /* leader */
        0, 0, 0, 1,                                            /* members */
        0x00, 0x01, 'm', 0x00, 0x01, 'c', 0x00, 0x02, '/', 'h', /* id, client, host */
        0x00, 0x04, 0x93, 0xe0, 0x00, 0x00, 0x27, 0x10,        /* rebalance, session */
        0, 0, 0, 1, 'S', 0, 0, 0, 1, 'A'};                     /* subscription, assignment */
    static const uint8_t v3[] = {
        0x00, 0x03, 0x00, 0x08, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r', 0, 0, 0, 7,
        0x00, 0x05, 'r', 'a', 'n', 'g', 'e', 0x00, 0x01, 'm',
        0, 0, 0, 0, 0, 0, 0x07, 0xd0, /* current_state_timestamp */
        0, 0, 0, 1, 0x00, 0x01, 'm',
        0x00, 0x02, 'i', '1',         /* group_instance_id */
        0x00, 0x01, 'c', 0x00, 0x02, '/', 'h', 0x00, 0x04, 0x93, 0xe0, 0x00, 0x00, 0x27, 0x10,
        0, 0, 0, 1, 'S', 0, 0, 0, 1, 'A'};
    /* clang-format on */
    const struct {
        bool instance;
        const uint8_t *want;
        size_t len;
    } cases[] = {{false, v1, sizeof v1}, {true, v3, sizeof v3}};
    for (size_t i = 0; i < 2; i++) {
        uint8_t buf[256];
        struct kp_writer w;
        kp_wr_init_fixed(&w, buf, sizeof buf);
        encode_group(cases[i].instance, &w);
        CU_ASSERT_EQUAL_FATAL(w.err, 0);
        CU_ASSERT_EQUAL(w.len, cases[i].len);
        CU_ASSERT_EQUAL(memcmp(buf, cases[i].want, cases[i].len), 0);
        /* and it reads back whole */
        struct grp_record r;
        CU_ASSERT_EQUAL_FATAL(br_grp_record_decode(bytes_of(group_key_v2, sizeof group_key_v2),
                                                   bytes_of(buf, w.len), &r),
                              0);
        CU_ASSERT_EQUAL(r.value_version, i == 0 ? 1 : 3);
        CU_ASSERT_EQUAL(r.state_ts, i == 0 ? -1 : 2000);
        struct grp_member_iter it;
        CU_ASSERT_EQUAL_FATAL(br_grp_members_begin(&r, &it), 0);
        struct grp_record_member m;
        CU_ASSERT_EQUAL_FATAL(br_grp_members_next(&it, &m), 0);
        CU_ASSERT_TRUE(str_is(m.member_id, "m") && str_is(m.client_id, "c") &&
                       str_is(m.client_host, "/h"));
        CU_ASSERT_TRUE(i == 0 ? m.instance_id.len == -1 : str_is(m.instance_id, "i1"));
        CU_ASSERT_EQUAL(m.rebalance_timeout_ms, 300000);
        CU_ASSERT_EQUAL(m.session_timeout_ms, 10000);
        CU_ASSERT_EQUAL(br_grp_members_next(&it, &m), KP_ITER_END);
    }
}

/* Applies the record key[0..klen) / value (NULL: a tombstone). */
static void apply(struct br_groups *gs, const uint8_t *key, size_t klen, const uint8_t *value,
                  size_t vlen)
{
    struct grp_record r;
    struct kp_bytes v = value != NULL ? bytes_of(value, vlen) : KP_BYTES_NULL;
    CU_ASSERT_EQUAL_FATAL(br_grp_record_decode(bytes_of(key, klen), v, &r), 0);
    CU_ASSERT_EQUAL(br_grp_record_apply(gs, &r), 0);
}

/* ---------------------------------------------------------------- a clock of the test's own */

#define MAX_TIMERS 64

static int64_t fake_mono = 1000000;
static int64_t fake_wall = 1700000000000;
static struct grp_timer *armed[MAX_TIMERS];
static int64_t armed_at[MAX_TIMERS];
static size_t narmed;
static struct br_partition *commit_partition; /* NULL: none (appends refused) */
static int acks_all_err;                      /* what ops->acks_all_check answers */

static int64_t t_mono(void *ctx)
{
    (void)ctx;
    return fake_mono;
}

static int64_t t_wall(void *ctx)
{
    (void)ctx;
    return fake_wall;
}

static void t_timer_init(void *ctx, struct grp_timer *t)
{
    (void)ctx;
    (void)t;
}

static void t_timer_cancel(void *ctx, struct grp_timer *t)
{
    (void)ctx;
    for (size_t i = 0; i < narmed; i++) {
        if (armed[i] == t) {
            armed[i] = armed[narmed - 1];
            armed_at[i] = armed_at[narmed - 1];
            narmed--;
            return;
        }
    }
}

static void t_timer_arm(void *ctx, struct grp_timer *t, int64_t deadline)
{
    t_timer_cancel(ctx, t);
    if (narmed == MAX_TIMERS) {
        abort();
    }
    armed[narmed] = t;
    armed_at[narmed] = deadline;
    narmed++;
}

/* What a waiting join or sync was answered. */
struct waiter {
    bool answered;
    int err;
    int32_t generation;
    char member_id[128];
    char leader[128];
    size_t nmembers;
    char assignment[32];
};

static void t_join_answer(void *ctx, void *w, int err, const struct grp_group *g,
                          const struct grp_member *m)
{
    (void)ctx;
    struct waiter *x = w;
    CU_ASSERT_FALSE(x->answered);
    x->answered = true;
    x->err = err;
    if (err == KP_ERR_NONE) {
        struct grp_join_view v;
        br_grp_join_fill(g, m, &v);
        x->generation = v.generation;
        (void)snprintf(x->member_id, sizeof x->member_id, "%s", v.member_id);
        (void)snprintf(x->leader, sizeof x->leader, "%s", v.leader);
        x->nmembers = v.nmembers;
    }
}

static void t_sync_answer(void *ctx, void *w, int err, const uint8_t *a, int32_t len)
{
    (void)ctx;
    struct waiter *x = w;
    CU_ASSERT_FALSE(x->answered);
    x->answered = true;
    x->err = err;
    (void)snprintf(x->assignment, sizeof x->assignment, "%.*s", (int)len, (const char *)a);
}

static void t_group_gone(void *ctx, struct grp_group *g)
{
    (void)ctx;
    (void)g;
}

static struct br_partition *t_partition(void *ctx, const char *id, size_t len, size_t *max,
                                        int *err)
{
    (void)ctx;
    (void)id;
    (void)len;
    *max = 0;
    if (commit_partition != NULL) {
        return commit_partition;
    }
    *err = KP_ERR_COORDINATOR_NOT_AVAILABLE;
    return NULL;
}

static int t_acks_all_check(void *ctx, const struct br_partition *p)
{
    (void)ctx;
    (void)p;
    return acks_all_err;
}

static const struct br_grp_ops test_ops = {
    .now_mono_ms = t_mono,
    .now_wall_ms = t_wall,
    .timer_init = t_timer_init,
    .timer_arm = t_timer_arm,
    .timer_cancel = t_timer_cancel,
    .join_answer = t_join_answer,
    .sync_answer = t_sync_answer,
    .group_gone = t_group_gone,
    .offsets_partition = t_partition,
    .acks_all_check = t_acks_all_check,
};

static struct br_groups *coordinator(int32_t initial_delay_ms)
{
    narmed = 0;
    struct br_grp_config cfg = {
        .initial_rebalance_delay_ms = initial_delay_ms,
        .min_session_timeout_ms = 6000,
        .max_session_timeout_ms = 300000,
        .offset_metadata_max_bytes = 4096,
        .offsets_retention_minutes = 10080,
        .retention_check_interval_ms = 600000,
    };
    struct br_groups *gs = br_groups_new(&test_ops, NULL, &cfg, 42);
    if (gs == NULL) {
        abort();
    }
    return gs;
}

/* The clock moves by ms; the timers due fire in deadline order. */
static void advance(struct br_groups *gs, int64_t ms)
{
    fake_mono += ms;
    fake_wall += ms;
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < narmed; i++) {
            if (armed_at[i] <= fake_mono && (best == SIZE_MAX || armed_at[i] < armed_at[best])) {
                best = i;
            }
        }
        if (best == SIZE_MAX) {
            return;
        }
        struct grp_timer *t = armed[best];
        t_timer_cancel(NULL, t);
        br_grp_timer_fired(gs, t);
    }
}

static const struct grp_join_protocol range_protocol = {{"range", 5}, {(const uint8_t *)"M", 1}};
static const struct grp_join_protocol range_protocol_v2 = {{"range", 5},
                                                           {(const uint8_t *)"M2", 2}};

/* A JoinGroup of group "g" (session 10 s, rebalance 30 s) by member_id
 * ("" for a new one). */
static struct grp_join_out join_as(struct br_groups *gs, const char *member_id, struct waiter *w,
                                   const struct grp_join_protocol *proto, bool require_known_id)
{
    struct grp_join_req q;
    memset(&q, 0, sizeof q);
    q.group_id = kp_str_c("g");
    q.member_id = kp_str_c(member_id);
    q.instance_id = KP_STR_NULL;
    q.client_id = kp_str_c("client");
    q.client_host = kp_str_c("/127.0.0.1");
    q.protocol_type = kp_str_c("consumer");
    q.session_timeout_ms = 10000;
    q.rebalance_timeout_ms = 30000;
    q.protocols = proto;
    q.nprotocols = 1;
    q.require_known_id = require_known_id;
    memset(w, 0, sizeof *w);
    struct grp_join_out out;
    CU_ASSERT_EQUAL_FATAL(br_grp_join(gs, &q, w, &out), 0);
    return out;
}

static struct grp_sync_out sync_as(struct br_groups *gs, const char *member_id, int32_t generation,
                                   struct waiter *w, const struct grp_assignment *as, size_t n)
{
    struct grp_sync_req q;
    memset(&q, 0, sizeof q);
    q.group_id = kp_str_c("g");
    q.member_id = kp_str_c(member_id);
    q.instance_id = KP_STR_NULL;
    q.generation = generation;
    q.assignments = as;
    q.nassignments = n;
    memset(w, 0, sizeof *w);
    struct grp_sync_out out;
    CU_ASSERT_EQUAL_FATAL(br_grp_sync(gs, &q, w, &out), 0);
    return out;
}

static enum grp_state state_of(struct br_groups *gs)
{
    struct grp_group *g = br_grp_find(gs, "g", 1);
    return g != NULL ? g->state : GRP_DEAD;
}

static char log_root[64];

/* A coordinator whose records (commits, a generation's group record) go to
 * a partition leading a fresh log. */
struct commit_fixture {
    struct br_filecache *fc;
    struct br_partition *p;
    struct br_groups *gs;
};

static void log_setup(struct commit_fixture *f, int32_t initial_delay_ms)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(st_tmpdir_make(log_root, sizeof log_root, "group"));
    char dir[128];
    (void)snprintf(dir, sizeof dir, "%s/__consumer_offsets-0", log_root);
    CU_ASSERT_EQUAL_FATAL(br_filecache_new(16, &f->fc), 0);
    f->p = kp_calloc(1, sizeof *f->p);
    if (f->p == NULL) {
        abort();
    }
    struct br_log_config c;
    br_log_config_defaults(&c);
    CU_ASSERT_EQUAL_FATAL(br_log_open(dir, &c, 0, f->fc, &f->p->log), 0);
    br_partition_become_leader(f->p, NULL);
    commit_partition = f->p;
    f->gs = coordinator(initial_delay_ms);
}

static void commit_setup(struct commit_fixture *f)
{
    log_setup(f, 0);
}

static void commit_teardown(struct commit_fixture *f)
{
    br_groups_free(f->gs);
    commit_partition = NULL;
    br_log_close(f->p->log);
    br_producers_free(&f->p->producers);
    kp_free(f->p);
    br_filecache_free(f->fc);
    CU_ASSERT_EQUAL(st_tmpdir_remove(log_root), 0);
}

/* A new group waits group.initial.rebalance.delay.ms for more members,
 * then the first generation starts; the leader's SyncGroup makes it
 * Stable and answers itself with its assignment. */
static void test_initial_delay_then_generation_one(void)
{
    struct commit_fixture f;
    log_setup(&f, 3000);
    struct br_groups *gs = f.gs;
    struct waiter a;
    struct grp_join_out o = join_as(gs, "", &a, &range_protocol, false);
    CU_ASSERT_EQUAL(o.outcome, GRP_WAIT);
    CU_ASSERT_EQUAL(state_of(gs), GRP_PREPARING_REBALANCE);
    advance(gs, 2999);
    CU_ASSERT_FALSE(a.answered);
    struct waiter b;
    o = join_as(gs, "", &b, &range_protocol, false);
    CU_ASSERT_EQUAL(o.outcome, GRP_WAIT);
    /* a member arrived during the delay: it waits one more delay */
    advance(gs, 1);
    CU_ASSERT_FALSE(a.answered);
    advance(gs, 3000);
    CU_ASSERT_TRUE_FATAL(a.answered && b.answered);
    CU_ASSERT_EQUAL(a.err, KP_ERR_NONE);
    CU_ASSERT_EQUAL(a.generation, 1);
    CU_ASSERT_EQUAL(b.generation, 1);
    CU_ASSERT_STRING_EQUAL(a.leader, a.member_id);
    CU_ASSERT_STRING_EQUAL(b.leader, a.member_id);
    CU_ASSERT_EQUAL(a.nmembers, 2); /* the leader sees every member */
    CU_ASSERT_EQUAL(b.nmembers, 0);
    CU_ASSERT_EQUAL(state_of(gs), GRP_COMPLETING_REBALANCE);

    /* the follower's sync waits for the leader's */
    struct waiter sb;
    struct grp_sync_out so = sync_as(gs, b.member_id, 1, &sb, NULL, 0);
    CU_ASSERT_EQUAL(so.outcome, GRP_WAIT);
    CU_ASSERT_FALSE(sb.answered);
    struct grp_assignment as[2] = {
        {kp_str_c(a.member_id), {(const uint8_t *)"AA", 2}},
        {kp_str_c(b.member_id), {(const uint8_t *)"BB", 2}},
    };
    struct waiter sa;
    so = sync_as(gs, a.member_id, 1, &sa, as, 2);
    CU_ASSERT_EQUAL(so.outcome, GRP_WAIT);
    CU_ASSERT_NOT_EQUAL(so.store_seq, 0);
    CU_ASSERT_EQUAL(br_log_end_offset(f.p->log), 1); /* the group's record */
    CU_ASSERT_TRUE(br_grp_store_settle(gs, "g", 1, so.store_seq, KP_ERR_NONE));
    CU_ASSERT_TRUE(sa.answered && sb.answered);
    CU_ASSERT_STRING_EQUAL(sa.assignment, "AA");
    CU_ASSERT_STRING_EQUAL(sb.assignment, "BB");
    CU_ASSERT_EQUAL(state_of(gs), GRP_STABLE);
    /* a sync in Stable is answered at once */
    so = sync_as(gs, b.member_id, 1, &sb, NULL, 0);
    CU_ASSERT_EQUAL(so.outcome, GRP_ANSWER_NOW);
    CU_ASSERT_EQUAL(so.assignment_len, 2);
    commit_teardown(&f);
}

/* Brings group "g" of f (set up here, no initial delay) to
 * CompletingRebalance in generation 2 with members a (the leader) and b,
 * their joins answered. */
static struct br_groups *completing_pair(struct commit_fixture *f, struct waiter *a,
                                         struct waiter *b)
{
    log_setup(f, 0);
    struct br_groups *gs = f->gs;
    (void)join_as(gs, "", a, &range_protocol, false);
    advance(gs, 0); /* the delay of 0 passes */
    CU_ASSERT_TRUE_FATAL(a->answered);
    /* b joins the Stable-to-be group: a rebalance that a rejoins */
    (void)join_as(gs, "", b, &range_protocol, false);
    struct waiter a2;
    char aid[128];
    (void)snprintf(aid, sizeof aid, "%s", a->member_id);
    (void)join_as(gs, aid, &a2, &range_protocol, false);
    CU_ASSERT_TRUE_FATAL(a2.answered && b->answered);
    CU_ASSERT_EQUAL(b->generation, 2);
    *a = a2;
    CU_ASSERT_STRING_EQUAL(a->leader, a->member_id);
    CU_ASSERT_EQUAL(state_of(gs), GRP_COMPLETING_REBALANCE);
    return gs;
}

/* The same pair Stable: the leader's sync, its group record replicated. */
static struct br_groups *stable_pair(struct commit_fixture *f, struct waiter *a, struct waiter *b)
{
    struct br_groups *gs = completing_pair(f, a, b);
    struct waiter s;
    struct grp_sync_out so = sync_as(gs, a->member_id, 2, &s, NULL, 0);
    CU_ASSERT_TRUE(br_grp_store_settle(gs, "g", 1, so.store_seq, KP_ERR_NONE));
    CU_ASSERT_EQUAL(state_of(gs), GRP_STABLE);
    return gs;
}

/* A member that stops heartbeating is removed after its session timeout
 * and the others are asked to rejoin; heartbeats keep a member in. */
static void test_session_expiry_removes_a_member(void)
{
    struct waiter a;
    struct waiter b;
    struct commit_fixture f;
    struct br_groups *gs = stable_pair(&f, &a, &b);
    struct kp_str g = kp_str_c("g");
    advance(gs, 9000);
    CU_ASSERT_EQUAL(br_grp_heartbeat(gs, g, kp_str_c(a.member_id), KP_STR_NULL, 2), KP_ERR_NONE);
    CU_ASSERT_EQUAL(br_grp_heartbeat(gs, g, kp_str_c(b.member_id), KP_STR_NULL, 2), KP_ERR_NONE);
    advance(gs, 9000);
    CU_ASSERT_EQUAL(br_grp_heartbeat(gs, g, kp_str_c(a.member_id), KP_STR_NULL, 2), KP_ERR_NONE);
    CU_ASSERT_EQUAL(state_of(gs), GRP_STABLE);
    advance(gs, 999); /* b's last heartbeat is 9.999 s old */
    CU_ASSERT_EQUAL(state_of(gs), GRP_STABLE);
    advance(gs, 1);
    /* 10 s without a heartbeat from b: gone, and a must rejoin */
    CU_ASSERT_EQUAL(br_grp_heartbeat(gs, kp_str_c("g"), kp_str_c(b.member_id), KP_STR_NULL, 2),
                    KP_ERR_UNKNOWN_MEMBER_ID);
    CU_ASSERT_EQUAL(state_of(gs), GRP_PREPARING_REBALANCE);
    CU_ASSERT_EQUAL(br_grp_heartbeat(gs, kp_str_c("g"), kp_str_c(a.member_id), KP_STR_NULL, 2),
                    KP_ERR_REBALANCE_IN_PROGRESS);
    commit_teardown(&f);
}

/* A member that does not rejoin within the rebalance timeout is left out
 * of the next generation. */
static void test_rebalance_timeout_leaves_out_the_missing(void)
{
    struct waiter a;
    struct waiter b;
    struct commit_fixture f;
    struct br_groups *gs = stable_pair(&f, &a, &b);
    struct waiter a3;
    char aid[128];
    (void)snprintf(aid, sizeof aid, "%s", a.member_id);
    /* new metadata from a: a rebalance that b, still heartbeating, ignores */
    struct grp_join_out o = join_as(gs, aid, &a3, &range_protocol_v2, false);
    CU_ASSERT_EQUAL(o.outcome, GRP_WAIT);
    for (int i = 0; i < 3; i++) {
        advance(gs, 9000);
        CU_ASSERT_FALSE(a3.answered);
        CU_ASSERT_EQUAL(br_grp_heartbeat(gs, kp_str_c("g"), kp_str_c(b.member_id), KP_STR_NULL, 2),
                        KP_ERR_REBALANCE_IN_PROGRESS);
    }
    advance(gs, 3000); /* 30 s: the rebalance timeout */
    CU_ASSERT_TRUE_FATAL(a3.answered);
    CU_ASSERT_EQUAL(a3.generation, 3);
    CU_ASSERT_EQUAL(a3.nmembers, 1);
    CU_ASSERT_EQUAL(br_grp_heartbeat(gs, kp_str_c("g"), kp_str_c(b.member_id), KP_STR_NULL, 3),
                    KP_ERR_UNKNOWN_MEMBER_ID);
    CU_ASSERT_EQUAL(state_of(gs), GRP_COMPLETING_REBALANCE);
    commit_teardown(&f);
}

/* LeaveGroup: the member goes at once and the rest rebalance; the last
 * one leaving empties the group. */
static void test_leave_rebalances_then_empties(void)
{
    struct waiter a;
    struct waiter b;
    struct commit_fixture f;
    struct br_groups *gs = stable_pair(&f, &a, &b);
    struct grp_group *g = br_grp_find(gs, "g", 1);
    CU_ASSERT_EQUAL(br_grp_leave(gs, g, kp_str_c(b.member_id), KP_STR_NULL), KP_ERR_NONE);
    CU_ASSERT_EQUAL(br_grp_leave(gs, g, kp_str_c(b.member_id), KP_STR_NULL),
                    KP_ERR_UNKNOWN_MEMBER_ID);
    CU_ASSERT_EQUAL(state_of(gs), GRP_PREPARING_REBALANCE);
    CU_ASSERT_EQUAL(br_grp_leave(gs, g, kp_str_c(a.member_id), KP_STR_NULL), KP_ERR_NONE);
    CU_ASSERT_EQUAL(state_of(gs), GRP_EMPTY);
    CU_ASSERT_EQUAL(g->nmembers, 0);
    CU_ASSERT_EQUAL(g->generation, 3);
    CU_ASSERT_EQUAL(narmed, 1); /* only the offset expiry check is left */
    commit_teardown(&f);
}

/* JoinGroup v4+: a new member first gets its id (MEMBER_ID_REQUIRED),
 * which is good for one session timeout. */
static void test_member_id_required_and_its_deadline(void)
{
    struct br_groups *gs = coordinator(0);
    struct waiter a;
    struct grp_join_out o = join_as(gs, "", &a, &range_protocol, true);
    CU_ASSERT_EQUAL_FATAL(o.outcome, GRP_ANSWER_ERROR);
    CU_ASSERT_EQUAL(o.err, KP_ERR_MEMBER_ID_REQUIRED);
    CU_ASSERT_TRUE(o.member_id.len > (int32_t)strlen("client-"));
    char id[128];
    (void)snprintf(id, sizeof id, "%.*s", (int)o.member_id.len, o.member_id.ptr);
    CU_ASSERT_EQUAL(strncmp(id, "client-", 7), 0);
    o = join_as(gs, id, &a, &range_protocol, true);
    CU_ASSERT_EQUAL(o.outcome, GRP_WAIT);
    advance(gs, 0);
    CU_ASSERT_TRUE(a.answered && a.err == KP_ERR_NONE);
    CU_ASSERT_STRING_EQUAL(a.member_id, id);

    struct waiter b;
    o = join_as(gs, "", &b, &range_protocol, true);
    CU_ASSERT_EQUAL_FATAL(o.err, KP_ERR_MEMBER_ID_REQUIRED);
    (void)snprintf(id, sizeof id, "%.*s", (int)o.member_id.len, o.member_id.ptr);
    advance(gs, 10001);
    o = join_as(gs, id, &b, &range_protocol, true);
    CU_ASSERT_EQUAL(o.outcome, GRP_ANSWER_ERROR);
    CU_ASSERT_EQUAL(o.err, KP_ERR_UNKNOWN_MEMBER_ID);
    br_groups_free(gs);
}

/* A waiter taken back (its connection died) is never answered; freeing
 * the coordinator answers the ones left with NOT_COORDINATOR. */
static void test_waiters_gone_and_answered_at_stop(void)
{
    struct br_groups *gs = coordinator(3000);
    struct waiter a;
    struct waiter b;
    struct grp_join_out oa = join_as(gs, "", &a, &range_protocol, false);
    struct grp_join_out ob = join_as(gs, "", &b, &range_protocol, false);
    CU_ASSERT_EQUAL_FATAL(oa.outcome, GRP_WAIT);
    CU_ASSERT_EQUAL_FATAL(ob.outcome, GRP_WAIT);
    br_grp_waiter_gone(gs, oa.member, &a);
    br_groups_free(gs);
    CU_ASSERT_FALSE(a.answered);
    CU_ASSERT_TRUE(b.answered);
    CU_ASSERT_EQUAL(b.err, KP_ERR_NOT_COORDINATOR);
}

static void test_record_apply_commits_and_removes_as_loading_does(void)
{
    struct br_groups *gs = coordinator(0);
    static const uint8_t v3[] = {0x00, 0x03, 0,    0,   0, 0, 0, 0, 0, 42, 0,    0,   0,
                                 5,    0x00, 0x01, 'm', 0, 0, 0, 0, 0, 0,  0x03, 0xe8};
    static const uint8_t group_v2[] = {
        0x00, 0x02, 0x00, 0x08, 'c', 'o', 'n', 's', 'u', 'm', 'e',  'r',  0, 0, 0, 9,
        0xff, 0xff, 0xff, 0xff, 0,   0,   0,   0,   0,   0,   0x07, 0xd0, 0, 0, 0, 0};

    apply(gs, offset_key_v1, sizeof offset_key_v1, v3, sizeof v3);
    struct grp_group *g = br_grp_find(gs, "g1", 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    if (g == NULL) {
        abort(); /* for the analysers: the assertion above does not return */
    }
    CU_ASSERT_EQUAL_FATAL(g->noffsets, 1);
    CU_ASSERT_STRING_EQUAL(g->offsets[0].topic, "t");
    CU_ASSERT_EQUAL(g->offsets[0].partition, 3);
    CU_ASSERT_EQUAL(g->offsets[0].offset, 42);
    CU_ASSERT_EQUAL(g->offsets[0].leader_epoch, 5);
    CU_ASSERT_STRING_EQUAL(g->offsets[0].metadata, "m");
    CU_ASSERT_PTR_NULL(g->protocol_type);

    apply(gs, group_key_v2, sizeof group_key_v2, group_v2, sizeof group_v2);
    CU_ASSERT_TRUE(g->protocol_type != NULL && strcmp(g->protocol_type, "consumer") == 0);
    CU_ASSERT_EQUAL(g->generation, 9);
    CU_ASSERT_EQUAL(g->state_ts, 2000);
    CU_ASSERT_EQUAL(g->nmembers, 0);

    apply(gs, offset_key_v1, sizeof offset_key_v1, NULL, 0);
    CU_ASSERT_EQUAL(g->noffsets, 0);
    CU_ASSERT_EQUAL(gs->ngroups, 1);
    apply(gs, offset_key_v1, sizeof offset_key_v1, v3, sizeof v3);
    apply(gs, group_key_v2, sizeof group_key_v2, NULL, 0);
    CU_ASSERT_PTR_NULL(br_grp_find(gs, "g1", 2));
    CU_ASSERT_EQUAL(gs->ngroups, 0);
    br_groups_free(gs);
}

/* ---------------------------------------------------------------- pending commits */

/* An OffsetCommit of (topic "t", partition) at offset by group "g" (only
 * storing offsets): its error, and *seq. */
static int commit_one(struct br_groups *gs, int32_t partition, int64_t offset, uint64_t *seq)
{
    struct grp_commit c;
    memset(&c, 0, sizeof c);
    c.topic = kp_str_c("t");
    c.partition = partition;
    c.offset = offset;
    c.leader_epoch = -1;
    c.metadata = kp_str_c("");
    c.commit_ts = -1;
    CU_ASSERT_EQUAL(br_grp_commit(gs, kp_str_c("g"), kp_str_c(""), -1, -1, &c, 1, seq), 0);
    return c.err;
}

/* The offset OffsetFetch gives for (t, partition) of g; -1: none. */
static int64_t fetched(struct br_groups *gs, int32_t partition)
{
    struct grp_group *g = br_grp_find(gs, "g", 1);
    const struct grp_offset *o = g != NULL ? br_grp_offset_find(g, kp_str_c("t"), partition) : NULL;
    return o != NULL ? o->offset : -1;
}

/* A commit's record is in the log at once but visible only once settled
 * as replicated; one whose wait failed is dropped, and the offset before
 * it stays (Kafka 2.0's prepareOffsetCommit, onOffsetCommitAppend,
 * failPendingOffsetWrite). */
static void test_a_commit_is_visible_once_replicated_and_dropped_when_not(void)
{
    struct commit_fixture f;
    commit_setup(&f);
    struct br_groups *gs = f.gs;
    uint64_t a = 0;
    CU_ASSERT_EQUAL(commit_one(gs, 0, 10, &a), 0);
    CU_ASSERT_NOT_EQUAL(a, 0);
    CU_ASSERT_EQUAL(br_log_end_offset(f.p->log), 1);
    CU_ASSERT_EQUAL(fetched(gs, 0), -1);
    CU_ASSERT_EQUAL(br_grp_commit_settle(gs, "g", 1, a, true), 1);
    CU_ASSERT_EQUAL(fetched(gs, 0), 10);

    uint64_t b = 0;
    CU_ASSERT_EQUAL(commit_one(gs, 0, 20, &b), 0);
    CU_ASSERT_NOT_EQUAL(b, a);
    CU_ASSERT_EQUAL(br_log_end_offset(f.p->log), 2);
    CU_ASSERT_EQUAL(fetched(gs, 0), 10);
    CU_ASSERT_EQUAL(br_grp_commit_settle(gs, "g", 1, b, false), 0);
    CU_ASSERT_EQUAL(fetched(gs, 0), 10);
    struct grp_group *g = br_grp_find(gs, "g", 1);
    CU_ASSERT_TRUE(g != NULL && g->npcommits == 0);
    /* settled twice, or after its group went: nothing */
    CU_ASSERT_EQUAL(br_grp_commit_settle(gs, "g", 1, b, true), 0);
    CU_ASSERT_EQUAL(fetched(gs, 0), 10);
    CU_ASSERT_EQUAL(br_grp_commit_settle(gs, "nope", 4, a, true), 0);
    commit_teardown(&f);
}

/* Two commits of one partition whose waits end in the other order: the
 * later record's offset stays committed (Kafka's onOffsetCommitAppend
 * compares the offsets of the records in the log). */
static void test_commits_settled_out_of_order_keep_the_later_record(void)
{
    struct commit_fixture f;
    commit_setup(&f);
    struct br_groups *gs = f.gs;
    uint64_t first = 0;
    uint64_t second = 0;
    CU_ASSERT_EQUAL(commit_one(gs, 0, 20, &first), 0);
    CU_ASSERT_EQUAL(commit_one(gs, 0, 30, &second), 0);
    CU_ASSERT_EQUAL(commit_one(gs, 1, 5, &(uint64_t){0}), 0);
    CU_ASSERT_EQUAL(br_grp_commit_settle(gs, "g", 1, second, true), 1);
    CU_ASSERT_EQUAL(fetched(gs, 0), 30);
    CU_ASSERT_EQUAL(br_grp_commit_settle(gs, "g", 1, first, true), 0);
    CU_ASSERT_EQUAL(fetched(gs, 0), 30);
    /* the other partition's commit is still pending */
    CU_ASSERT_EQUAL(fetched(gs, 1), -1);
    struct grp_group *g = br_grp_find(gs, "g", 1);
    CU_ASSERT_TRUE(g != NULL && g->npcommits == 1);
    commit_teardown(&f);
}

/* A group holding only a pending commit is not removed, and an offset
 * whose partition has a commit in flight does not expire (Kafka's
 * hasOffsets and removeExpiredOffsets). */
static void test_pending_commits_keep_their_group_and_offsets(void)
{
    struct commit_fixture f;
    commit_setup(&f);
    struct br_groups *gs = f.gs;
    const int64_t past_retention = (int64_t)8 * 24 * 3600 * 1000; /* 7 days by default */
    uint64_t a = 0;
    uint64_t b = 0;
    uint64_t c = 0;
    CU_ASSERT_EQUAL(commit_one(gs, 1, 7, &c), 0);
    advance(gs, past_retention);
    br_grp_offsets_expire(gs);
    CU_ASSERT_PTR_NOT_NULL(br_grp_find(gs, "g", 1));

    CU_ASSERT_EQUAL(commit_one(gs, 0, 10, &a), 0);
    CU_ASSERT_EQUAL(br_grp_commit_settle(gs, "g", 1, a, true), 1);
    CU_ASSERT_EQUAL(commit_one(gs, 0, 20, &b), 0);
    advance(gs, past_retention);
    br_grp_offsets_expire(gs);
    CU_ASSERT_EQUAL(fetched(gs, 0), 10);
    CU_ASSERT_EQUAL(br_grp_commit_settle(gs, "g", 1, b, true), 1);
    CU_ASSERT_EQUAL(fetched(gs, 0), 20);
    CU_ASSERT_EQUAL(br_grp_commit_settle(gs, "g", 1, c, true), 1);
    CU_ASSERT_EQUAL(fetched(gs, 1), 7);
    commit_teardown(&f);
}

/* The acks=all check refuses the commit before anything is appended:
 * COORDINATOR_NOT_AVAILABLE (Kafka maps NOT_ENOUGH_REPLICAS so), while a
 * partition whose metadata is too large says so. */
static void test_a_commit_below_min_insync_is_refused_unwritten(void)
{
    struct commit_fixture f;
    commit_setup(&f);
    struct br_groups *gs = f.gs;
    acks_all_err = KP_ERR_NOT_ENOUGH_REPLICAS;
    char big[5000];
    memset(big, 'm', sizeof big);
    struct grp_commit c[2];
    memset(c, 0, sizeof c);
    for (int i = 0; i < 2; i++) {
        c[i].topic = kp_str_c("t");
        c[i].partition = i;
        c[i].offset = 1;
        c[i].leader_epoch = -1;
        c[i].commit_ts = -1;
    }
    c[0].metadata = kp_str_c("");
    c[1].metadata = (struct kp_str){big, (int32_t)sizeof big};
    uint64_t seq = 1;
    CU_ASSERT_EQUAL(br_grp_commit(gs, kp_str_c("g"), kp_str_c(""), -1, -1, c, 2, &seq), 0);
    acks_all_err = 0;
    CU_ASSERT_EQUAL(seq, 0);
    CU_ASSERT_EQUAL(c[0].err, KP_ERR_COORDINATOR_NOT_AVAILABLE);
    CU_ASSERT_EQUAL(c[1].err, KP_ERR_OFFSET_METADATA_TOO_LARGE);
    CU_ASSERT_EQUAL(br_log_end_offset(f.p->log), 0);
    commit_teardown(&f);
}

/* The errors an OffsetCommit answers for an append that failed or was not
 * replicated (Kafka 2.0's GroupMetadataManager.storeOffsets). */
static void test_commit_errors_are_kafkas_store_offsets_mapping(void)
{
    static const int map[][2] = {
        {KP_ERR_UNKNOWN_TOPIC_OR_PARTITION, KP_ERR_COORDINATOR_NOT_AVAILABLE},
        {KP_ERR_NOT_ENOUGH_REPLICAS, KP_ERR_COORDINATOR_NOT_AVAILABLE},
        {KP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND, KP_ERR_COORDINATOR_NOT_AVAILABLE},
        {KP_ERR_NOT_LEADER_OR_FOLLOWER, KP_ERR_NOT_COORDINATOR},
        {KP_ERR_KAFKA_STORAGE_ERROR, KP_ERR_NOT_COORDINATOR},
        {KP_ERR_MESSAGE_TOO_LARGE, KP_ERR_INVALID_COMMIT_OFFSET_SIZE},
        {KP_ERR_RECORD_LIST_TOO_LARGE, KP_ERR_INVALID_COMMIT_OFFSET_SIZE},
        {KP_ERR_INVALID_FETCH_SIZE, KP_ERR_INVALID_COMMIT_OFFSET_SIZE},
        {KP_ERR_REQUEST_TIMED_OUT, KP_ERR_REQUEST_TIMED_OUT},
        {KP_ERR_CORRUPT_MESSAGE, KP_ERR_CORRUPT_MESSAGE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        CU_ASSERT_EQUAL(br_grp_commit_error(map[i][0]), map[i][1]);
    }
}

/* ---------------------------------------------------------------- the group record */

/* The leader's and the follower's syncs of generation 2 of completing_pair
 * (the leader's assignment "AA", "BB"); the leader's outcome. */
static struct grp_sync_out sync_pair(struct br_groups *gs, const struct waiter *a,
                                     const struct waiter *b, struct waiter *sa, struct waiter *sb)
{
    struct grp_sync_out so = sync_as(gs, b->member_id, 2, sb, NULL, 0);
    CU_ASSERT_EQUAL(so.outcome, GRP_WAIT);
    CU_ASSERT_EQUAL(so.store_seq, 0);
    struct grp_assignment as[2] = {
        {kp_str_c(a->member_id), {(const uint8_t *)"AA", 2}},
        {kp_str_c(b->member_id), {(const uint8_t *)"BB", 2}},
    };
    so = sync_as(gs, a->member_id, 2, sa, as, 2);
    CU_ASSERT_EQUAL(so.outcome, GRP_WAIT);
    return so;
}

/* The leader's sync appends the group's record and the group stays in
 * CompletingRebalance: no sync is answered, heartbeats go on, commits are
 * refused, until the record is settled as replicated; then every sync gets
 * its assignment and the group is Stable (Kafka 2.0's doSyncGroup and its
 * storeGroup callback). */
static void test_syncs_wait_until_the_group_record_is_replicated(void)
{
    struct commit_fixture f;
    struct waiter a;
    struct waiter b;
    struct br_groups *gs = completing_pair(&f, &a, &b);
    struct waiter sa;
    struct waiter sb;
    struct grp_sync_out so = sync_pair(gs, &a, &b, &sa, &sb);
    CU_ASSERT_NOT_EQUAL_FATAL(so.store_seq, 0);
    CU_ASSERT_EQUAL(br_log_end_offset(f.p->log), 1);
    CU_ASSERT_FALSE(sa.answered);
    CU_ASSERT_FALSE(sb.answered);
    CU_ASSERT_EQUAL(state_of(gs), GRP_COMPLETING_REBALANCE);
    struct kp_str g = kp_str_c("g");
    CU_ASSERT_EQUAL(br_grp_heartbeat(gs, g, kp_str_c(b.member_id), KP_STR_NULL, 2), KP_ERR_NONE);
    struct grp_group *grp = br_grp_find(gs, "g", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(grp);
    CU_ASSERT_EQUAL(br_grp_commit_check(gs, grp, kp_str_c(b.member_id), 2),
                    KP_ERR_REBALANCE_IN_PROGRESS);
    /* the members' sessions do not run out while they wait */
    advance(gs, 20000);
    CU_ASSERT_EQUAL(grp->nmembers, 2);
    /* another seq (an older record) settles nothing */
    CU_ASSERT_FALSE(br_grp_store_settle(gs, "g", 1, so.store_seq + 1, KP_ERR_NONE));
    CU_ASSERT_FALSE(sa.answered);
    CU_ASSERT_TRUE(br_grp_store_settle(gs, "g", 1, so.store_seq, KP_ERR_NONE));
    CU_ASSERT_TRUE(sa.answered && sa.err == KP_ERR_NONE);
    CU_ASSERT_TRUE(sb.answered && sb.err == KP_ERR_NONE);
    CU_ASSERT_STRING_EQUAL(sa.assignment, "AA");
    CU_ASSERT_STRING_EQUAL(sb.assignment, "BB");
    CU_ASSERT_EQUAL(state_of(gs), GRP_STABLE);
    CU_ASSERT_EQUAL(br_grp_commit_check(gs, grp, kp_str_c(b.member_id), 2), 0);
    /* settled twice: nothing */
    CU_ASSERT_FALSE(br_grp_store_settle(gs, "g", 1, so.store_seq, KP_ERR_NONE));
    commit_teardown(&f);
}

/* Both syncs answered err, and the group preparing a rebalance. */
static void syncs_failed_rebalancing(struct br_groups *gs, const struct waiter *sa,
                                     const struct waiter *sb, int err)
{
    CU_ASSERT_TRUE(sa->answered && sa->err == err);
    CU_ASSERT_TRUE(sb->answered && sb->err == err);
    CU_ASSERT_EQUAL(state_of(gs), GRP_PREPARING_REBALANCE);
}

/* A group record not replicated in time: every waiting sync gets
 * REBALANCE_IN_PROGRESS (storeGroup's mapping of REQUEST_TIMED_OUT), the
 * assignments are forgotten and the group prepares a rebalance, which the
 * members' rejoins complete (resetAndPropagateAssignmentError,
 * maybePrepareRebalance); the next generation's record replicated, its
 * syncs get their assignments. One whose partition went to another leader
 * answers NOT_COORDINATOR. */
static void test_a_group_record_not_replicated_fails_the_syncs_and_rebalances(void)
{
    struct commit_fixture f;
    struct waiter a;
    struct waiter b;
    struct br_groups *gs = completing_pair(&f, &a, &b);
    struct waiter sa;
    struct waiter sb;
    struct grp_sync_out so = sync_pair(gs, &a, &b, &sa, &sb);
    CU_ASSERT_TRUE(br_grp_store_settle(gs, "g", 1, so.store_seq, KP_ERR_REQUEST_TIMED_OUT));
    CU_ASSERT_TRUE(sa.answered && sa.err == KP_ERR_REBALANCE_IN_PROGRESS);
    CU_ASSERT_TRUE(sb.answered && sb.err == KP_ERR_REBALANCE_IN_PROGRESS);
    CU_ASSERT_STRING_EQUAL(sa.assignment, "");
    CU_ASSERT_EQUAL(state_of(gs), GRP_PREPARING_REBALANCE);
    struct grp_group *grp = br_grp_find(gs, "g", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(grp);
    CU_ASSERT_EQUAL(grp->members[0]->assignment_len, 0);
    CU_ASSERT_EQUAL(grp->members[1]->assignment_len, 0);
    CU_ASSERT_EQUAL(br_grp_heartbeat(gs, kp_str_c("g"), kp_str_c(b.member_id), KP_STR_NULL, 2),
                    KP_ERR_REBALANCE_IN_PROGRESS);

    /* both rejoin: generation 3 */
    char aid[128];
    char bid[128];
    (void)snprintf(aid, sizeof aid, "%s", a.member_id);
    (void)snprintf(bid, sizeof bid, "%s", b.member_id);
    (void)join_as(gs, aid, &a, &range_protocol, false);
    (void)join_as(gs, bid, &b, &range_protocol, false);
    CU_ASSERT_TRUE_FATAL(a.answered && b.answered);
    CU_ASSERT_EQUAL(a.generation, 3);
    struct waiter sb3;
    CU_ASSERT_EQUAL(sync_as(gs, b.member_id, 3, &sb3, NULL, 0).outcome, GRP_WAIT);
    struct grp_assignment as[1] = {{kp_str_c(b.member_id), {(const uint8_t *)"B3", 2}}};
    struct waiter sa3;
    so = sync_as(gs, a.member_id, 3, &sa3, as, 1);
    CU_ASSERT_FALSE(sb3.answered);
    CU_ASSERT_TRUE(br_grp_store_settle(gs, "g", 1, so.store_seq, KP_ERR_NONE));
    CU_ASSERT_TRUE(sa3.answered && sa3.err == KP_ERR_NONE);
    CU_ASSERT_STRING_EQUAL(sa3.assignment, ""); /* none for the leader: an empty one */
    CU_ASSERT_TRUE(sb3.answered && sb3.err == KP_ERR_NONE);
    CU_ASSERT_STRING_EQUAL(sb3.assignment, "B3");
    CU_ASSERT_EQUAL(state_of(gs), GRP_STABLE);
    commit_teardown(&f);

    /* led elsewhere while the record waited */
    gs = completing_pair(&f, &a, &b);
    so = sync_pair(gs, &a, &b, &sa, &sb);
    CU_ASSERT_TRUE(br_grp_store_settle(gs, "g", 1, so.store_seq, KP_ERR_NOT_LEADER_OR_FOLLOWER));
    syncs_failed_rebalancing(gs, &sa, &sb, KP_ERR_NOT_COORDINATOR);
    commit_teardown(&f);
}

/* The ISR below min.insync.replicas when the leader syncs: nothing is
 * appended and the syncs are answered COORDINATOR_NOT_AVAILABLE inside
 * the call (storeGroup's NOT_ENOUGH_REPLICAS), the group rebalances. */
static void test_a_group_record_refused_below_min_insync_fails_the_syncs_at_once(void)
{
    struct commit_fixture f;
    struct waiter a;
    struct waiter b;
    struct br_groups *gs = completing_pair(&f, &a, &b);
    struct waiter sa;
    struct waiter sb;
    acks_all_err = KP_ERR_NOT_ENOUGH_REPLICAS;
    struct grp_sync_out so = sync_pair(gs, &a, &b, &sa, &sb);
    acks_all_err = 0;
    CU_ASSERT_EQUAL(so.store_seq, 0);
    CU_ASSERT_EQUAL(br_log_end_offset(f.p->log), 0);
    syncs_failed_rebalancing(gs, &sa, &sb, KP_ERR_COORDINATOR_NOT_AVAILABLE);
    commit_teardown(&f);
}

/* A member that leaves while the record waits rebalances the group (the
 * syncs get REBALANCE_IN_PROGRESS); the record's settlement then changes
 * nothing (Kafka's callback checks the state and the generation). */
static void test_a_group_record_settled_after_a_rebalance_changes_nothing(void)
{
    struct commit_fixture f;
    struct waiter a;
    struct waiter b;
    struct br_groups *gs = completing_pair(&f, &a, &b);
    struct waiter sa;
    struct waiter sb;
    struct grp_sync_out so = sync_pair(gs, &a, &b, &sa, &sb);
    struct grp_group *grp = br_grp_find(gs, "g", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(grp);
    CU_ASSERT_EQUAL(br_grp_leave(gs, grp, kp_str_c(b.member_id), KP_STR_NULL), KP_ERR_NONE);
    CU_ASSERT_TRUE(sa.answered && sa.err == KP_ERR_REBALANCE_IN_PROGRESS);
    CU_ASSERT_EQUAL(state_of(gs), GRP_PREPARING_REBALANCE);
    CU_ASSERT_FALSE(br_grp_store_settle(gs, "g", 1, so.store_seq, KP_ERR_NONE));
    CU_ASSERT_EQUAL(state_of(gs), GRP_PREPARING_REBALANCE);
    commit_teardown(&f);
}

/* The errors the syncs get for a group record whose append failed or was
 * not replicated (Kafka 2.0's GroupMetadataManager.storeGroup). */
static void test_store_errors_are_kafkas_store_group_mapping(void)
{
    static const int map[][2] = {
        {KP_ERR_UNKNOWN_TOPIC_OR_PARTITION, KP_ERR_COORDINATOR_NOT_AVAILABLE},
        {KP_ERR_NOT_ENOUGH_REPLICAS, KP_ERR_COORDINATOR_NOT_AVAILABLE},
        {KP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND, KP_ERR_COORDINATOR_NOT_AVAILABLE},
        {KP_ERR_NOT_LEADER_OR_FOLLOWER, KP_ERR_NOT_COORDINATOR},
        {KP_ERR_KAFKA_STORAGE_ERROR, KP_ERR_NOT_COORDINATOR},
        {KP_ERR_REQUEST_TIMED_OUT, KP_ERR_REBALANCE_IN_PROGRESS},
        {KP_ERR_MESSAGE_TOO_LARGE, KP_ERR_UNKNOWN_SERVER_ERROR},
        {KP_ERR_RECORD_LIST_TOO_LARGE, KP_ERR_UNKNOWN_SERVER_ERROR},
        {KP_ERR_INVALID_FETCH_SIZE, KP_ERR_UNKNOWN_SERVER_ERROR},
        {KP_ERR_CORRUPT_MESSAGE, KP_ERR_CORRUPT_MESSAGE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        CU_ASSERT_EQUAL(br_grp_store_error(map[i][0]), map[i][1]);
    }
}

static CU_TestInfo tests[] = {
    {"java_hash_of_ascii_strings", test_java_hash_of_ascii_strings},
    {"java_hash_of_two_and_three_byte_utf8", test_java_hash_of_two_and_three_byte_utf8},
    {"java_hash_counts_a_surrogate_pair_as_two_units",
     test_java_hash_counts_a_surrogate_pair_as_two_units},
    {"java_hash_replaces_malformed_bytes", test_java_hash_replaces_malformed_bytes},
    {"java_hash_uses_the_given_length", test_java_hash_uses_the_given_length},
    {"partition_is_kafka_utils_abs_modulo", test_partition_is_kafka_utils_abs_modulo},
    {"partition_of_integer_min_hash_is_zero", test_partition_of_integer_min_hash_is_zero},
    {"partition_of_a_bad_count_is_zero", test_partition_of_a_bad_count_is_zero},
    {"record_decode_reads_offset_values_v0_to_v3", test_record_decode_reads_offset_values_v0_to_v3},
    {"record_decode_reads_group_values_v0_to_v3_with_members",
     test_record_decode_reads_group_values_v0_to_v3_with_members},
    {"record_decode_of_a_null_value_is_a_tombstone",
     test_record_decode_of_a_null_value_is_a_tombstone},
    {"record_decode_rejects_broken_records_with_their_site",
     test_record_decode_rejects_broken_records_with_their_site},
    {"members_refuse_a_count_beyond_the_bytes", test_members_refuse_a_count_beyond_the_bytes},
    {"encoded_offset_values_decode_to_the_commit", test_encoded_offset_values_decode_to_the_commit},
    {"group_values_are_written_as_kafka_2_0_writes_them",
     test_group_values_are_written_as_kafka_2_0_writes_them},
    {"record_apply_commits_and_removes_as_loading_does",
     test_record_apply_commits_and_removes_as_loading_does},
    {"initial_delay_then_generation_one", test_initial_delay_then_generation_one},
    {"session_expiry_removes_a_member", test_session_expiry_removes_a_member},
    {"rebalance_timeout_leaves_out_the_missing", test_rebalance_timeout_leaves_out_the_missing},
    {"leave_rebalances_then_empties", test_leave_rebalances_then_empties},
    {"member_id_required_and_its_deadline", test_member_id_required_and_its_deadline},
    {"waiters_gone_and_answered_at_stop", test_waiters_gone_and_answered_at_stop},
    {"a_commit_is_visible_once_replicated_and_dropped_when_not",
     test_a_commit_is_visible_once_replicated_and_dropped_when_not},
    {"commits_settled_out_of_order_keep_the_later_record",
     test_commits_settled_out_of_order_keep_the_later_record},
    {"pending_commits_keep_their_group_and_offsets",
     test_pending_commits_keep_their_group_and_offsets},
    {"a_commit_below_min_insync_is_refused_unwritten",
     test_a_commit_below_min_insync_is_refused_unwritten},
    {"commit_errors_are_kafkas_store_offsets_mapping",
     test_commit_errors_are_kafkas_store_offsets_mapping},
    {"syncs_wait_until_the_group_record_is_replicated",
     test_syncs_wait_until_the_group_record_is_replicated},
    {"a_group_record_not_replicated_fails_the_syncs_and_rebalances",
     test_a_group_record_not_replicated_fails_the_syncs_and_rebalances},
    {"a_group_record_refused_below_min_insync_fails_the_syncs_at_once",
     test_a_group_record_refused_below_min_insync_fails_the_syncs_at_once},
    {"a_group_record_settled_after_a_rebalance_changes_nothing",
     test_a_group_record_settled_after_a_rebalance_changes_nothing},
    {"store_errors_are_kafkas_store_group_mapping",
     test_store_errors_are_kafkas_store_group_mapping},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    br_logging_set_level(BR_LOG_ERROR);
    return st_run_suite("broker-group", tests);
}
