/* Unit tests for the metadata interface and its file back end (broker/src/metadata.h). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/err.h>

#include "cluster/metadata.h"
#include "cunit_run.h"

#define ERRLEN 512

/* ------------------------------------------------------------ helpers */

/* A fresh directory under /tmp and the metadata path inside it. */
struct scratch {
    char dir[64];
    char path[128];
    char tmp[160];
};

static void scratch_init(struct scratch *s)
{
    memset(s, 0, sizeof *s);
    (void)snprintf(s->dir, sizeof s->dir, "/tmp/samsa-test-meta-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(s->dir));
    (void)snprintf(s->path, sizeof s->path, "%s/%s", s->dir, BR_META_FILE_NAME);
    (void)snprintf(s->tmp, sizeof s->tmp, "%s.tmp", s->path);
}

/* Removes the files the tests create and the directory. */
static void scratch_done(struct scratch *s)
{
    DIR *d = opendir(s->dir);
    if (d != NULL) {
        const struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                continue;
            }
            char p[512];
            (void)snprintf(p, sizeof p, "%s/%s", s->dir, e->d_name);
            if (unlink(p) != 0) {
                (void)rmdir(p);
            }
        }
        (void)closedir(d);
    }
    CU_ASSERT_EQUAL(rmdir(s->dir), 0);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    char *buf = malloc(1 << 20);
    size_t n = buf != NULL ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    (void)fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
    }
    *len = n;
    return buf;
}

static void write_all(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(text, 1, strlen(text), f), strlen(text));
    CU_ASSERT_EQUAL(fclose(f), 0);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A topic with test-owned storage: p partitions, rf replicas on brokers
 * (p + r) % 5, and up to 4 configs. */
struct topic_buf {
    struct br_topic_meta t;
    int32_t replicas[64];
    struct br_meta_config configs[4];
    char keys[4][64];
    char values[4][128];
};

static void topic_init(struct topic_buf *b, const char *name, int32_t p, int16_t rf)
{
    memset(b, 0, sizeof *b);
    (void)snprintf(b->t.name, sizeof b->t.name, "%s", name);
    b->t.partitions = p;
    b->t.replication_factor = rf;
    for (int32_t i = 0; i < p; i++) {
        for (int16_t r = 0; r < rf; r++) {
            b->replicas[i * rf + r] = (i + r) % 5;
        }
    }
    b->t.replicas = b->replicas;
    b->t.configs = b->configs;
}

static void topic_config(struct topic_buf *b, const char *key, const char *value)
{
    size_t i = b->t.n_configs++;
    (void)snprintf(b->keys[i], sizeof b->keys[i], "%s", key);
    (void)snprintf(b->values[i], sizeof b->values[i], "%s", value);
    b->configs[i].key = b->keys[i];
    b->configs[i].value = b->values[i];
}

static bool topics_equal(const struct br_topic_meta *a, const struct br_topic_meta *b)
{
    if (strcmp(a->name, b->name) != 0 || a->partitions != b->partitions ||
        a->replication_factor != b->replication_factor || a->n_configs != b->n_configs) {
        return false;
    }
    size_t n = (size_t)a->partitions * (size_t)a->replication_factor;
    if (memcmp(a->replicas, b->replicas, n * sizeof a->replicas[0]) != 0) {
        return false;
    }
    for (size_t i = 0; i < a->n_configs; i++) {
        if (strcmp(a->configs[i].key, b->configs[i].key) != 0 ||
            strcmp(a->configs[i].value, b->configs[i].value) != 0) {
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------ names */

static void test_topic_name_rule(void)
{
    char longest[BR_TOPIC_NAME_MAX + 2];
    memset(longest, 'x', sizeof longest);
    static const char *const valid[] = {"a", "A-b_c.9", "...", "__consumer_offsets", ".a", "-"};
    static const char *const invalid[] = {"",    ".",   "..", "a/b", "a b", "caf\xc3\xa9",
                                          "a:b", "a\n", "t*"};
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        CU_ASSERT_TRUE(br_topic_name_valid(valid[i], strlen(valid[i])));
    }
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        CU_ASSERT_FALSE(br_topic_name_valid(invalid[i], strlen(invalid[i])));
    }
    CU_ASSERT_TRUE(br_topic_name_valid(longest, BR_TOPIC_NAME_MAX));
    CU_ASSERT_FALSE(br_topic_name_valid(longest, BR_TOPIC_NAME_MAX + 1));
    CU_ASSERT_FALSE(br_topic_name_valid(NULL, 0));
    /* a slice: only len bytes count */
    CU_ASSERT_TRUE(br_topic_name_valid("ab/c", 2));
}

static void test_names_that_differ_by_dot_and_underscore_collide(void)
{
    CU_ASSERT_TRUE(br_topic_names_collide("a.b", "a_b"));
    CU_ASSERT_TRUE(br_topic_names_collide("x_y.z", "x.y_z"));
    CU_ASSERT_FALSE(br_topic_names_collide("a.b", "a.b"));
    CU_ASSERT_FALSE(br_topic_names_collide("a.b", "a-b"));
    CU_ASSERT_FALSE(br_topic_names_collide("a.b", "a.bc"));
}

/* ------------------------------------------------------------ topic checks */

static void test_topic_check_rejects_bad_topics(void)
{
    struct topic_buf b;
    char err[ERRLEN];
    topic_init(&b, "ok", 3, 2);
    topic_config(&b, "retention.ms", "1000");
    CU_ASSERT_EQUAL(br_topic_meta_check(&b.t, err, sizeof err), 0);

    topic_init(&b, "bad/name", 1, 1);
    CU_ASSERT_EQUAL(br_topic_meta_check(&b.t, err, sizeof err), KP_ERR_INVALID_TOPIC_EXCEPTION);
    topic_init(&b, "t", 0, 1);
    CU_ASSERT_EQUAL(br_topic_meta_check(&b.t, err, sizeof err), KP_ERR_INVALID_PARTITIONS);
    topic_init(&b, "t", 1, 0);
    CU_ASSERT_EQUAL(br_topic_meta_check(&b.t, err, sizeof err), KP_ERR_INVALID_REPLICATION_FACTOR);
    topic_init(&b, "t", 1, 1);
    b.t.replicas = NULL;
    CU_ASSERT_EQUAL(br_topic_meta_check(&b.t, err, sizeof err), KP_ERR_INVALID_REPLICA_ASSIGNMENT);
    topic_init(&b, "t", 2, 3);
    b.replicas[4] = b.replicas[5]; /* partition 1 holds broker twice */
    CU_ASSERT_EQUAL(br_topic_meta_check(&b.t, err, sizeof err), KP_ERR_INVALID_REPLICA_ASSIGNMENT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "partition 1"));
    topic_init(&b, "t", 2, 1);
    b.replicas[1] = -1;
    CU_ASSERT_EQUAL(br_topic_meta_check(&b.t, err, sizeof err), KP_ERR_INVALID_REPLICA_ASSIGNMENT);
    topic_init(&b, "t", 1, 1);
    topic_config(&b, "a", "1");
    topic_config(&b, "a", "2");
    CU_ASSERT_EQUAL(br_topic_meta_check(&b.t, err, sizeof err), KP_ERR_INVALID_CONFIG);
    topic_init(&b, "t", 1, 1);
    topic_config(&b, "", "1");
    CU_ASSERT_EQUAL(br_topic_meta_check(&b.t, err, sizeof err), KP_ERR_INVALID_CONFIG);
    topic_init(&b, "t", 1, 1);
    topic_config(&b, "has space", "1");
    CU_ASSERT_EQUAL(br_topic_meta_check(&b.t, err, sizeof err), KP_ERR_INVALID_CONFIG);
}

/* ------------------------------------------------------------ the format */

static void test_format_is_the_documented_text(void)
{
    struct topic_buf b;
    topic_init(&b, "orders", 2, 2);
    topic_config(&b, "cleanup.policy", "compact,delete");
    char *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL(br_meta_file_format(&b.t, 1, &text, &len), 0);
    const char *body = text != NULL ? strstr(text, "\ntopic ") : NULL;
    if (body == NULL) {
        CU_FAIL("no topic in the formatted text");
        kp_free(text);
        return;
    }
    body++;
    CU_ASSERT_EQUAL(strncmp(text, "samsa-metadata 1\n", 17), 0);
    CU_ASSERT_STRING_EQUAL(body, "topic orders 2 2\n"
                                 "config cleanup.policy=compact%2Cdelete\n"
                                 "partition 0 0,1\n"
                                 "partition 1 1,2\n"
                                 "end 1\n");
    CU_ASSERT_EQUAL(len, strlen(text));
    kp_free(text);
}

static void test_format_and_parse_round_trip_any_bytes(void)
{
    struct topic_buf a;
    struct topic_buf b;
    topic_init(&a, "a", 4, 3);
    topic_config(&a, "weird=key%", "line1\nline2 with spaces\tand=equals%25");
    topic_config(&a, "utf8", "caf\xc3\xa9 \xf0\x9f\x98\x80");
    topic_config(&a, "empty", "");
    topic_init(&b, "b.c_d-e", 1, 1);
    struct br_topic_meta in[2] = {a.t, b.t};

    char *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(br_meta_file_format(in, 2, &text, &len), 0);
    struct br_topic_meta *out = NULL;
    size_t n = 0;
    char err[ERRLEN];
    int rc = br_meta_file_parse(text, len, "mem", &out, &n, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_TRUE(topics_equal(&out[0], &in[0]));
    CU_ASSERT_TRUE(topics_equal(&out[1], &in[1]));
    CU_ASSERT_STRING_EQUAL(br_topic_meta_config(&out[0], "weird=key%"),
                           "line1\nline2 with spaces\tand=equals%25");
    CU_ASSERT_PTR_NULL(br_topic_meta_config(&out[0], "missing"));

    /* formatting what was parsed gives the same bytes */
    char *again = NULL;
    size_t again_len = 0;
    CU_ASSERT_EQUAL_FATAL(br_meta_file_format(out, n, &again, &again_len), 0);
    CU_ASSERT_EQUAL(again_len, len);
    CU_ASSERT_EQUAL(memcmp(again, text, len), 0);
    kp_free(again);
    kp_free(text);
    br_topic_metas_free(out, n);
}

static void test_empty_store_round_trips(void)
{
    char *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(br_meta_file_format(NULL, 0, &text, &len), 0);
    struct br_topic_meta *out = NULL;
    size_t n = 7;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(br_meta_file_parse(text, len, "mem", &out, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(out);
    kp_free(text);
}

/* Each malformed file is rejected as corrupt, naming its line. */
static const struct {
    const char *text;
    const char *where; /* "mem:<line>:" */
    const char *what;
} malformed[] = {
    {"", "mem:1:", "empty file"},
    {"# only a comment\n", "mem:1:", "empty file"},
    {"kafka 1\nend 0\n", "mem:1:", "not a samsa-metadata file"},
    {"samsa-metadata 2\nend 0\n", "mem:1:", "format version 2"},
    {"samsa-metadata x\nend 0\n", "mem:1:", "bad format version"},
    {"samsa-metadata 1\n", "mem:2:", "no \"end\" line"},
    {"samsa-metadata 1\nend 0", "mem:2:", "no end"},
    {"samsa-metadata 1\nend 1\n", "mem:2:", "counts 1 topics"},
    {"samsa-metadata 1\nend 0\nextra\n", "mem:3:", "after the end line"},
    {"samsa-metadata 1\nend  0\n", "mem:2:", "empty field"},
    {"samsa-metadata 1\nend 0 \n", "mem:2:", "empty field"},
    {"samsa-metadata 1\nbogus 1\nend 0\n", "mem:2:", "unknown record"},
    {"samsa-metadata 1\r\nend 0\n", "mem:1:", "control"},
    {"samsa-metadata 1\ntopic a/b 1 1\npartition 0 0\nend 1\n",
     "mem:2:", "must be percent-encoded"},
    {"samsa-metadata 1\ntopic a%2Fb 1 1\npartition 0 0\nend 1\n", "mem:2:", "invalid topic name"},
    {"samsa-metadata 1\ntopic .. 1 1\npartition 0 0\nend 1\n", "mem:2:", "invalid topic name"},
    {"samsa-metadata 1\ntopic t 0 1\nend 1\n", "mem:2:", "partition count"},
    {"samsa-metadata 1\ntopic t 01 1\npartition 0 0\nend 1\n", "mem:2:", "partition count"},
    {"samsa-metadata 1\ntopic t -1 1\nend 1\n", "mem:2:", "partition count"},
    {"samsa-metadata 1\ntopic t 1 0\nend 1\n", "mem:2:", "replication factor"},
    {"samsa-metadata 1\ntopic t 1 1025\nend 1\n", "mem:2:", "replication factor"},
    {"samsa-metadata 1\ntopic t 100000 1024\nend 1\n", "mem:2:", "do not fit the file"},
    {"samsa-metadata 1\ntopic t 1\nend 1\n", "mem:2:", "fields"},
    {"samsa-metadata 1\ntopic t 2 1\npartition 0 0\n# padding, so that 2 partitions fit\nend 1\n",
     "mem:2:", "2 partitions declared, 1 given"},
    {"samsa-metadata 1\ntopic t 2 1\npartition 0 0\nend 1\n", "mem:2:", "do not fit the file"},
    {"samsa-metadata 1\ntopic t 2 1\npartition 0 0\ntopic u 1 1\npartition 0 0\nend 2\n",
     "mem:2:", "2 partitions declared, 1 given"},
    {"samsa-metadata 1\ntopic t 1 1\npartition 1 0\nend 1\n", "mem:3:", "partition 0 expected"},
    {"samsa-metadata 1\ntopic t 1 1\npartition 0 0\npartition 1 0\nend 1\n",
     "mem:4:", "more than 1 partitions"},
    {"samsa-metadata 1\ntopic t 1 1\npartition 0 0,1\nend 1\n", "mem:3:", "more than 1 replicas"},
    {"samsa-metadata 1\ntopic t 1 2\npartition 0 0\nend 1\n", "mem:3:", "1 replicas, not 2"},
    {"samsa-metadata 1\ntopic t 1 2\npartition 0 3,3\nend 1\n", "mem:2:", "two replicas"},
    {"samsa-metadata 1\ntopic t 1 1\npartition 0 -1\nend 1\n", "mem:3:", "bad broker id"},
    {"samsa-metadata 1\ntopic t 1 1\npartition 0 2147483648\nend 1\n", "mem:3:", "bad broker id"},
    {"samsa-metadata 1\ntopic t 1 2\npartition 0 1,\nend 1\n", "mem:3:", "bad broker id"},
    {"samsa-metadata 1\nconfig a=b\nend 0\n", "mem:2:", "config line belongs"},
    {"samsa-metadata 1\npartition 0 0\nend 0\n", "mem:2:", "before any topic"},
    {"samsa-metadata 1\ntopic t 1 1\npartition 0 0\nconfig a=b\nend 1\n",
     "mem:4:", "config line belongs"},
    {"samsa-metadata 1\ntopic t 1 1\nconfig a=1\nconfig a=2\npartition 0 0\nend 1\n",
     "mem:4:", "given twice"},
    {"samsa-metadata 1\ntopic t 1 1\nconfig ab\npartition 0 0\nend 1\n", "mem:3:", "key=value"},
    {"samsa-metadata 1\ntopic t 1 1\nconfig =1\npartition 0 0\nend 1\n",
     "mem:3:", "printable ASCII"},
    {"samsa-metadata 1\ntopic t 1 1\nconfig a%zz=1\npartition 0 0\nend 1\n", "mem:3:", "bad %XX"},
    {"samsa-metadata 1\ntopic t 1 1\nconfig a=%4\npartition 0 0\nend 1\n", "mem:3:", "bad %XX"},
    {"samsa-metadata 1\ntopic t 1 1\nconfig a=%00\npartition 0 0\nend 1\n", "mem:3:", "%00"},
    {"samsa-metadata 1\ntopic t 1 1\npartition 0 0\ntopic t 1 1\npartition 0 1\nend 2\n",
     "mem:4:", "appears twice"},
};

static void test_malformed_files_are_rejected_with_line_numbers(void)
{
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        struct br_topic_meta *out = NULL;
        size_t n = 0;
        char err[ERRLEN];
        int rc = br_meta_file_parse(malformed[i].text, strlen(malformed[i].text), "mem", &out, &n,
                                    err, sizeof err);
        bool ok = rc == KP_E_CORRUPT &&
                  strncmp(err, malformed[i].where, strlen(malformed[i].where)) == 0 &&
                  strstr(err, malformed[i].what) != NULL;
        CU_ASSERT_TRUE(ok);
        if (!ok) {
            printf("\n    case %zu: got %d \"%s\"; expected %s ... %s\n", i, rc, err,
                   malformed[i].where, malformed[i].what);
        }
        CU_ASSERT_PTR_NULL(out);
        CU_ASSERT_EQUAL(n, 0);
    }
}

static void test_overlong_line_and_file_are_rejected(void)
{
    size_t n = BR_META_FILE_MAX_LINE + 64;
    char *text = malloc(n + 1);
    if (text == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    memcpy(text, "samsa-metadata 1\n# ", 19);
    memset(text + 19, 'x', n - 19);
    text[n] = '\0';
    struct br_topic_meta *out = NULL;
    size_t count = 0;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(br_meta_file_parse(text, n, "mem", &out, &count, err, sizeof err),
                    KP_E_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "mem:2: line longer than"));
    CU_ASSERT_EQUAL(
        br_meta_file_parse(text, BR_META_FILE_MAX_BYTES + 1, "mem", &out, &count, err, sizeof err),
        KP_E_TOO_LARGE);
    free(text);
}

static void test_comments_and_blank_lines_are_skipped(void)
{
    static const char text[] = "# header comment\n"
                               "samsa-metadata 1\n"
                               "\n"
                               "# a topic\n"
                               "topic t 1 1\n"
                               "partition 0 4\n"
                               "\n"
                               "end 1\n";
    struct br_topic_meta *out = NULL;
    size_t n = 0;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(
        br_meta_file_parse(text, sizeof text - 1, "mem", &out, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(out[0].replicas[0], 4);
    br_topic_metas_free(out, n);
}

/* ------------------------------------------------------------ the store */

static void test_open_creates_an_empty_file(void)
{
    struct scratch s;
    scratch_init(&s);
    struct br_meta m;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(s.path, &m, err, sizeof err), 0);
    CU_ASSERT_STRING_EQUAL(m.ops->name, "file");
    CU_ASSERT_TRUE(exists(s.path));
    CU_ASSERT_FALSE(exists(s.tmp));
    struct br_topic_meta *topics = NULL;
    size_t n = 1;
    CU_ASSERT_EQUAL(br_meta_load(&m, &topics, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(topics);
    br_meta_close(&m);
    br_meta_close(&m); /* a second close is a no-op */
    scratch_done(&s);
}

static void test_open_fails_when_the_directory_is_missing(void)
{
    struct br_meta m;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(
        br_meta_file_open("/tmp/samsa-no-such-dir-for-sure/samsa-metadata", &m, err, sizeof err),
        KP_ERR_KAFKA_STORAGE_ERROR);
    CU_ASSERT_PTR_NULL(m.ops);
    br_meta_close(&m);
}

static void test_changes_survive_a_reopen(void)
{
    struct scratch s;
    scratch_init(&s);
    struct br_meta m;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(s.path, &m, err, sizeof err), 0);

    struct topic_buf a;
    struct topic_buf b;
    struct topic_buf c;
    topic_init(&a, "alpha", 3, 2);
    topic_config(&a, "retention.ms", "86400000");
    topic_init(&b, "beta", 1, 1);
    topic_init(&c, "gamma", 8, 3);
    topic_config(&c, "cleanup.policy", "compact");
    CU_ASSERT_EQUAL(br_meta_create_topic(&m, &a.t, err, sizeof err), 0);
    CU_ASSERT_EQUAL(br_meta_create_topic(&m, &b.t, err, sizeof err), 0);
    CU_ASSERT_EQUAL(br_meta_create_topic(&m, &c.t, err, sizeof err), 0);
    CU_ASSERT_EQUAL(br_meta_delete_topic(&m, "beta", err, sizeof err), 0);
    char k0[] = "retention.ms";
    char v0[] = "1";
    char k1[] = "segment.ms";
    char v1[] = "2";
    struct br_meta_config cfg[2] = {{k0, v0}, {k1, v1}};
    CU_ASSERT_EQUAL(br_meta_set_topic_configs(&m, "alpha", cfg, 2, err, sizeof err), 0);
    CU_ASSERT_EQUAL(br_meta_set_topic_configs(&m, "gamma", NULL, 0, err, sizeof err), 0);
    br_meta_close(&m);
    CU_ASSERT_FALSE(exists(s.tmp));

    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(s.path, &m, err, sizeof err), 0);
    struct br_topic_meta *topics = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_meta_load(&m, &topics, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(topics[0].name, "alpha");
    CU_ASSERT_EQUAL(topics[0].partitions, 3);
    CU_ASSERT_EQUAL(topics[0].replication_factor, 2);
    CU_ASSERT_EQUAL(memcmp(topics[0].replicas, a.replicas, 6 * sizeof(int32_t)), 0);
    CU_ASSERT_EQUAL(topics[0].n_configs, 2);
    CU_ASSERT_STRING_EQUAL(br_topic_meta_config(&topics[0], "retention.ms"), "1");
    CU_ASSERT_STRING_EQUAL(br_topic_meta_config(&topics[0], "segment.ms"), "2");
    CU_ASSERT_STRING_EQUAL(topics[1].name, "gamma");
    CU_ASSERT_EQUAL(topics[1].n_configs, 0);
    c.t.n_configs = 0;
    CU_ASSERT_TRUE(topics_equal(&topics[1], &c.t));
    br_topic_metas_free(topics, n);
    br_meta_close(&m);
    scratch_done(&s);
}

static void test_load_returns_a_copy_the_caller_owns(void)
{
    struct scratch s;
    scratch_init(&s);
    struct br_meta m;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(s.path, &m, err, sizeof err), 0);
    struct topic_buf a;
    topic_init(&a, "t", 2, 1);
    topic_config(&a, "k", "v");
    CU_ASSERT_EQUAL_FATAL(br_meta_create_topic(&m, &a.t, err, sizeof err), 0);
    /* the store copied: changing the caller's topic changes nothing */
    a.replicas[0] = 99;
    struct br_topic_meta *topics = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_meta_load(&m, &topics, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL(topics[0].replicas[0], 0);
    topics[0].replicas[0] = 42;
    br_topic_metas_free(topics, n);
    CU_ASSERT_EQUAL_FATAL(br_meta_load(&m, &topics, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL(topics[0].replicas[0], 0);
    br_topic_metas_free(topics, n);
    br_meta_close(&m);
    scratch_done(&s);
}

static void test_create_rejects_duplicates_collisions_and_bad_topics(void)
{
    struct scratch s;
    scratch_init(&s);
    struct br_meta m;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(s.path, &m, err, sizeof err), 0);
    struct topic_buf a;
    topic_init(&a, "a.b", 1, 1);
    CU_ASSERT_EQUAL(br_meta_create_topic(&m, &a.t, err, sizeof err), 0);
    CU_ASSERT_EQUAL(br_meta_create_topic(&m, &a.t, err, sizeof err), KP_ERR_TOPIC_ALREADY_EXISTS);
    topic_init(&a, "a_b", 1, 1);
    CU_ASSERT_EQUAL(br_meta_create_topic(&m, &a.t, err, sizeof err),
                    KP_ERR_INVALID_TOPIC_EXCEPTION);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "collides"));
    topic_init(&a, "x", 1, 2);
    a.replicas[1] = a.replicas[0];
    CU_ASSERT_EQUAL(br_meta_create_topic(&m, &a.t, err, sizeof err),
                    KP_ERR_INVALID_REPLICA_ASSIGNMENT);
    CU_ASSERT_EQUAL(br_meta_delete_topic(&m, "nope", err, sizeof err),
                    KP_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    CU_ASSERT_EQUAL(br_meta_set_topic_configs(&m, "nope", NULL, 0, err, sizeof err),
                    KP_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    char k[] = "k";
    char v1[] = "1";
    char v2[] = "2";
    struct br_meta_config dup[2] = {{k, v1}, {k, v2}};
    CU_ASSERT_EQUAL(br_meta_set_topic_configs(&m, "a.b", dup, 2, err, sizeof err),
                    KP_ERR_INVALID_CONFIG);
    struct br_topic_meta *topics = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_meta_load(&m, &topics, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL(n, 1);
    br_topic_metas_free(topics, n);
    br_meta_close(&m);
    scratch_done(&s);
}

static void test_every_change_rewrites_the_file_atomically(void)
{
    struct scratch s;
    scratch_init(&s);
    /* a temporary file left by a crash is neither read nor in the way */
    write_all(s.tmp, "half a file");
    struct br_meta m;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(s.path, &m, err, sizeof err), 0);
    CU_ASSERT_FALSE(exists(s.tmp));
    struct stat before;
    CU_ASSERT_EQUAL_FATAL(stat(s.path, &before), 0);

    struct topic_buf a;
    topic_init(&a, "t", 2, 1);
    CU_ASSERT_EQUAL_FATAL(br_meta_create_topic(&m, &a.t, err, sizeof err), 0);
    struct stat after;
    CU_ASSERT_EQUAL_FATAL(stat(s.path, &after), 0);
    /* a new inode: the file was replaced by rename, not rewritten in place */
    CU_ASSERT_NOT_EQUAL(before.st_ino, after.st_ino);
    CU_ASSERT_FALSE(exists(s.tmp));

    /* what is on disk is exactly the store's state */
    size_t len = 0;
    char *text = read_all(s.path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    struct br_topic_meta *parsed = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(br_meta_file_parse(text, len, s.path, &parsed, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL(n, 1);
    br_topic_metas_free(parsed, n);
    free(text);
    br_meta_close(&m);
    scratch_done(&s);
}

static void test_a_failed_write_changes_nothing(void)
{
    struct scratch s;
    scratch_init(&s);
    struct br_meta m;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(s.path, &m, err, sizeof err), 0);
    struct topic_buf a;
    topic_init(&a, "kept", 1, 1);
    topic_config(&a, "k", "v");
    CU_ASSERT_EQUAL_FATAL(br_meta_create_topic(&m, &a.t, err, sizeof err), 0);
    size_t len0 = 0;
    char *before = read_all(s.path, &len0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(before);

    /* a directory where the temporary file goes makes every write fail */
    CU_ASSERT_EQUAL_FATAL(mkdir(s.tmp, 0700), 0);
    struct topic_buf b;
    topic_init(&b, "lost", 1, 1);
    CU_ASSERT_EQUAL(br_meta_create_topic(&m, &b.t, err, sizeof err), KP_ERR_KAFKA_STORAGE_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot create"));
    CU_ASSERT_EQUAL(br_meta_delete_topic(&m, "kept", err, sizeof err), KP_ERR_KAFKA_STORAGE_ERROR);
    CU_ASSERT_EQUAL(br_meta_set_topic_configs(&m, "kept", NULL, 0, err, sizeof err),
                    KP_ERR_KAFKA_STORAGE_ERROR);

    struct br_topic_meta *topics = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_meta_load(&m, &topics, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(topics[0].name, "kept");
    CU_ASSERT_STRING_EQUAL(br_topic_meta_config(&topics[0], "k"), "v");
    br_topic_metas_free(topics, n);
    size_t len1 = 0;
    char *after = read_all(s.path, &len1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(after);
    CU_ASSERT_EQUAL(len0, len1);
    CU_ASSERT_EQUAL(memcmp(before, after, len0), 0);
    free(before);
    free(after);

    /* once the obstacle is gone, changes go through again */
    CU_ASSERT_EQUAL_FATAL(rmdir(s.tmp), 0);
    CU_ASSERT_EQUAL(br_meta_create_topic(&m, &b.t, err, sizeof err), 0);
    br_meta_close(&m);
    scratch_done(&s);
}

/* CreatePartitions' store write: the kept partitions keep their stored
 * replicas, the configs stay, bad counts and unknown topics change nothing,
 * and the new count is what a reopen reads. */
static void test_set_partitions_adds_and_keeps(void)
{
    struct scratch s;
    scratch_init(&s);
    struct br_meta m;
    char err[ERRLEN];
    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(s.path, &m, err, sizeof err), 0);
    struct topic_buf a;
    topic_init(&a, "grow", 2, 2); /* replicas 0,1 1,2 */
    topic_config(&a, "retention.ms", "5");
    CU_ASSERT_EQUAL_FATAL(br_meta_create_topic(&m, &a.t, err, sizeof err), 0);
    /* the first four ids are not read: the stored ones stay */
    int32_t replicas[] = {9, 9, 9, 9, 3, 4, 4, 0};
    CU_ASSERT_EQUAL(br_meta_set_partitions(&m, "grow", 4, replicas, err, sizeof err), 0);
    CU_ASSERT_EQUAL(br_meta_set_partitions(&m, "nope", 4, replicas, err, sizeof err),
                    KP_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    CU_ASSERT_EQUAL(br_meta_set_partitions(&m, "grow", 0, replicas, err, sizeof err),
                    KP_ERR_INVALID_PARTITIONS);
    int32_t repeated[] = {0, 0, 0, 0, 0, 0, 0, 0, 3, 3}; /* a fifth partition on 3, 3 */
    CU_ASSERT_EQUAL(br_meta_set_partitions(&m, "grow", 5, repeated, err, sizeof err),
                    KP_ERR_INVALID_REPLICA_ASSIGNMENT);
    br_meta_close(&m);

    CU_ASSERT_EQUAL_FATAL(br_meta_file_open(s.path, &m, err, sizeof err), 0);
    struct br_topic_meta *topics = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(br_meta_load(&m, &topics, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL_FATAL(topics[0].partitions, 4);
    static const int32_t want[] = {0, 1, 1, 2, 3, 4, 4, 0};
    CU_ASSERT_EQUAL(memcmp(topics[0].replicas, want, sizeof want), 0);
    CU_ASSERT_STRING_EQUAL(br_topic_meta_config(&topics[0], "retention.ms"), "5");
    br_topic_metas_free(topics, n);
    /* the undo of a failed addition: back to 2 */
    CU_ASSERT_EQUAL(br_meta_set_partitions(&m, "grow", 2, replicas, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(br_meta_load(&m, &topics, &n, err, sizeof err), 0);
    CU_ASSERT_EQUAL(topics[0].partitions, 2);
    CU_ASSERT_EQUAL(memcmp(topics[0].replicas, want, 4 * sizeof(int32_t)), 0);
    br_topic_metas_free(topics, n);
    br_meta_close(&m);
    scratch_done(&s);
}

static void test_open_rejects_a_corrupt_file_naming_path_and_line(void)
{
    struct scratch s;
    scratch_init(&s);
    write_all(s.path, "samsa-metadata 1\ntopic t 1 1\npartition 0 x\nend 1\n");
    struct br_meta m;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(br_meta_file_open(s.path, &m, err, sizeof err), KP_E_CORRUPT);
    char expect[256];
    (void)snprintf(expect, sizeof expect, "%s:3: ", s.path);
    CU_ASSERT_EQUAL(strncmp(err, expect, strlen(expect)), 0);
    CU_ASSERT_PTR_NULL(m.ops);
    /* the corrupt file is left alone for the operator */
    CU_ASSERT_TRUE(exists(s.path));
    scratch_done(&s);
}

static void test_open_rejects_an_oversized_file(void)
{
    struct scratch s;
    scratch_init(&s);
    int fd = open(s.path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(ftruncate(fd, (off_t)BR_META_FILE_MAX_BYTES + 1), 0);
    CU_ASSERT_EQUAL(close(fd), 0);
    struct br_meta m;
    char err[ERRLEN];
    CU_ASSERT_EQUAL(br_meta_file_open(s.path, &m, err, sizeof err), KP_E_TOO_LARGE);
    /* a directory is not a metadata file */
    CU_ASSERT_EQUAL(unlink(s.path), 0);
    CU_ASSERT_EQUAL(mkdir(s.path, 0700), 0);
    CU_ASSERT_EQUAL(br_meta_file_open(s.path, &m, err, sizeof err), KP_ERR_KAFKA_STORAGE_ERROR);
    scratch_done(&s);
}

static void test_copy_and_clear(void)
{
    struct topic_buf a;
    topic_init(&a, "copy", 2, 2);
    topic_config(&a, "x", "y");
    struct br_topic_meta c;
    CU_ASSERT_EQUAL_FATAL(br_topic_meta_copy(&c, &a.t), 0);
    CU_ASSERT_TRUE(topics_equal(&c, &a.t));
    CU_ASSERT_PTR_NOT_EQUAL(c.replicas, a.t.replicas);
    br_topic_meta_clear(&c);
    CU_ASSERT_PTR_NULL(c.replicas);
    br_topic_meta_clear(&c);
    br_topic_metas_free(NULL, 0);
}

static CU_TestInfo tests[] = {
    {"topic name rule", test_topic_name_rule},
    {"names differing by '.' and '_' collide",
     test_names_that_differ_by_dot_and_underscore_collide},
    {"topic check rejects bad topics", test_topic_check_rejects_bad_topics},
    {"format is the documented text", test_format_is_the_documented_text},
    {"format and parse round trip any bytes", test_format_and_parse_round_trip_any_bytes},
    {"empty store round trips", test_empty_store_round_trips},
    {"malformed files are rejected with line numbers",
     test_malformed_files_are_rejected_with_line_numbers},
    {"overlong line and file are rejected", test_overlong_line_and_file_are_rejected},
    {"comments and blank lines are skipped", test_comments_and_blank_lines_are_skipped},
    {"open creates an empty file", test_open_creates_an_empty_file},
    {"open fails when the directory is missing", test_open_fails_when_the_directory_is_missing},
    {"changes survive a reopen", test_changes_survive_a_reopen},
    {"load returns a copy the caller owns", test_load_returns_a_copy_the_caller_owns},
    {"create rejects duplicates, collisions and bad topics",
     test_create_rejects_duplicates_collisions_and_bad_topics},
    {"every change rewrites the file atomically", test_every_change_rewrites_the_file_atomically},
    {"a failed write changes nothing", test_a_failed_write_changes_nothing},
    {"set partitions adds and keeps", test_set_partitions_adds_and_keeps},
    {"open rejects a corrupt file naming path and line",
     test_open_rejects_a_corrupt_file_naming_path_and_line},
    {"open rejects an oversized file", test_open_rejects_an_oversized_file},
    {"copy and clear", test_copy_and_clear},
    CU_TEST_INFO_NULL,
};

int main(void)
{
    return st_run_suite("broker-metadata", tests);
}
