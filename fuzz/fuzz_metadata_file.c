/*
 * fuzz_metadata_file: the standalone metadata file's parser
 * (br_meta_file_parse) and its writer.
 *
 * Input: the file's bytes.
 *
 * Checks, beyond "no crash, no over-read, no leak, no unbounded memory":
 *   - a rejected file returns one of the documented codes, no topics, and a
 *     message that starts with the file's name and a line number;
 *   - every topic of an accepted file passes br_topic_meta_check (what the
 *     store would accept from a client), and names are unique;
 *   - formatting the topics and parsing the text gives the same topics, and
 *     formatting those gives the same bytes (the writer's output is always
 *     readable, and canonical).
 */
#include "fuzz.h"

#include <string.h>

#include <samsa-protocol/alloc.h>
#include <samsa-protocol/err.h>

#include "base/logging.h"
#include "cluster/metadata.h"

#define ERRLEN 512

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) {
        return 0;
    }
    br_logging_set_level(BR_LOG_ERROR);

    struct br_topic_meta *topics = NULL;
    size_t n = 0;
    char err[ERRLEN];
    int rc = br_meta_file_parse((const char *)data, size, "fuzz", &topics, &n, err, sizeof err);
    if (rc != 0) {
        fuzz_check(rc == KP_E_CORRUPT || rc == KP_E_TOO_LARGE || rc == KP_E_NOMEM,
                   "undocumented error", rc);
        fuzz_check(topics == NULL && n == 0, "a rejected file returned topics", rc);
        fuzz_check(rc != KP_E_CORRUPT || strncmp(err, "fuzz:", 5) == 0,
                   "a corruption message without its place", rc);
        return 0;
    }
    fuzz_check((n == 0) == (topics == NULL), "topic array and count disagree", (int)n);
    for (size_t i = 0; i < n; i++) {
        char msg[ERRLEN];
        int crc = br_topic_meta_check(&topics[i], msg, sizeof msg);
        if (crc != 0) {
            (void)fprintf(stderr, "topic %zu: %s\n", i, msg);
        }
        fuzz_check(crc == 0, "an accepted topic fails the store's checks", crc);
        for (size_t j = 0; j < i && n <= 1000; j++) {
            fuzz_check(strcmp(topics[i].name, topics[j].name) != 0, "a repeated topic", (int)i);
        }
    }

    char *text = NULL;
    size_t len = 0;
    rc = br_meta_file_format(topics, n, &text, &len);
    if (rc == KP_E_NOMEM || rc == KP_E_TOO_LARGE) {
        /* percent-encoding can triple a value: a file near the ceiling may
         * not fit once rewritten */
        br_topic_metas_free(topics, n);
        return 0;
    }
    fuzz_check(rc == 0, "an accepted file cannot be formatted", rc);
    fuzz_check(text[len] == '\0' && strlen(text) == len, "formatted text is not one string",
               (int)len);

    struct br_topic_meta *again = NULL;
    size_t n_again = 0;
    rc = br_meta_file_parse(text, len, "formatted", &again, &n_again, err, sizeof err);
    if (rc != 0) {
        (void)fprintf(stderr, "%s\n", err);
    }
    fuzz_check(rc == 0 || rc == KP_E_NOMEM, "formatted text does not parse", rc);
    if (rc == 0) {
        fuzz_check(n_again == n, "topic count changed", (int)n_again);
        for (size_t i = 0; i < n; i++) {
            fuzz_check(topics_equal(&topics[i], &again[i]), "a topic changed", (int)i);
        }
        char *text2 = NULL;
        size_t len2 = 0;
        if (br_meta_file_format(again, n_again, &text2, &len2) == 0) {
            fuzz_check(len2 == len && memcmp(text, text2, len) == 0, "formatting is not canonical",
                       (int)len2);
            kp_free(text2);
        }
        br_topic_metas_free(again, n_again);
    }
    kp_free(text);
    br_topic_metas_free(topics, n);
    return 0;
}
