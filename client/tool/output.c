/*
 * samsa tool: what its commands print: text tables whose columns fit
 * their cells, JSON values, and why a call or a topic failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

/* Why a library call failed, for stderr: the call's own sentence (errstr,
 * or samsa_err_str when it has none), except that SAMSA_ERR_TIMED_OUT is the
 * command's --timeout running out, whatever was left of it for that call. */
const char *failure(const struct opts *o, int e, const char *errstr, char *buf,
                           size_t size)
{
    if (e == SAMSA_ERR_TIMED_OUT) {
        snprintf(buf, size, "no answer within --timeout %d ms", o->timeout_ms);
        return buf;
    }
    return errstr != NULL ? errstr : samsa_err_str(e);
}

void json_str(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            fputc('\\', f);
            fputc(ch, f);
        } else if (ch < 0x20) {
            fprintf(f, "\\u%04x", ch);
        } else {
            fputc(ch, f);
        }
    }
    fputc('"', f);
}

void json_opt_str(const char *v)
{
    if (v == NULL) {
        printf("null");
    } else {
        json_str(stdout, v, strlen(v));
    }
}

void json_opt_ll(long long v)
{
    if (v < 0) {
        printf("null");
    } else {
        printf("%lld", v);
    }
}

void table_row(struct table *t, const char *const *cells)
{
    if (t->oom) {
        return;
    }
    if (t->rows == t->cap) {
        size_t cap = t->cap > 0 ? t->cap * 2 : 16;
        char **grown = realloc(t->cells, cap * t->cols * sizeof(*grown));
        if (grown == NULL) {
            t->oom = true;
            return;
        }
        t->cells = grown;
        t->cap = cap;
    }
    for (size_t c = 0; c < t->cols; c++) {
        char *copy = strdup(cells[c] != NULL ? cells[c] : "-");
        t->cells[t->rows * t->cols + c] = copy;
        if (copy == NULL) {
            t->oom = true;
        }
    }
    t->rows++;
}

void table_print(struct table *t)
{
    size_t width[16] = {0};
    for (size_t r = 0; r < t->rows; r++) {
        for (size_t c = 0; c < t->cols && c < 16; c++) {
            const char *cell = t->cells[r * t->cols + c];
            size_t len = cell != NULL ? strlen(cell) : 0;
            width[c] = len > width[c] ? len : width[c];
        }
    }
    for (size_t r = 0; r < t->rows; r++) {
        for (size_t c = 0; c < t->cols; c++) {
            const char *cell = t->cells[r * t->cols + c];
            if (c + 1 == t->cols) {
                printf("%s\n", cell != NULL ? cell : "");
            } else {
                printf("%-*s ", (int)width[c < 16 ? c : 15], cell != NULL ? cell : "");
            }
        }
    }
    if (t->oom) {
        fprintf(stderr, "samsa: out of memory: rows left out\n");
    }
}

void table_free(struct table *t)
{
    for (size_t i = 0; i < t->rows * t->cols; i++) {
        free(t->cells[i]);
    }
    free(t->cells);
    t->cells = NULL;
    t->rows = 0;
    t->cap = 0;
}

/* v in buf, or "-" when negative (none, unknown). */
const char *cell_ll(char *buf, size_t size, long long v)
{
    if (v < 0) {
        return "-";
    }
    snprintf(buf, size, "%lld", v);
    return buf;
}

/* Why a topic could not be used, for stderr: a topic the cluster does not
 * know reads as kafka-topics.sh says it ("Topic 'x' does not exist as
 * expected", TopicCommand.ensureTopicExists since Kafka 2.4; 2.0's names its
 * ZooKeeper path), not as the error code's sentence about a
 * topic-partition. */
void topic_failed(const char *cmd, const char *topic, int e)
{
    if (e == 3 || e == SAMSA_ERR_UNKNOWN_TOPIC) {
        fprintf(stderr, "samsa %s: Topic '%s' does not exist.\n", cmd, topic);
    } else {
        fprintf(stderr, "samsa %s: topic %s: %s\n", cmd, topic, samsa_err_str(e));
    }
}

void print_ids(const int32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        printf("%s%d", i == 0 ? "" : ",", ids[i]);
    }
}

void json_ids(const int32_t *ids, size_t n)
{
    putchar('[');
    print_ids(ids, n);
    putchar(']');
}
