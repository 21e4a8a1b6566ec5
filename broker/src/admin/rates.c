/* samsa-broker: rates over the last minute from the snapshots' counts
 * (see rates.h). */
#include "admin/rates.h"

#include <string.h>

#define MAX_API_KEY 127
#define SAMPLE_EVERY_MS 1000
/* a sample a second over the window, the one before it, the newest */
#define CAPACITY ((size_t)(BR_ADMIN_RATES_WINDOW_MS / SAMPLE_EVERY_MS) + 4)

struct sample {
    gint64 at_ms; /* the snapshot's wall clock */
    gint64 requests[MAX_API_KEY + 1];
    gint64 messages_in;
    gint64 bytes_in;
    gint64 bytes_out;
};

struct br_admin_rates {
    gint64 started_ms; /* of the broker the samples are of */
    size_t first;      /* ring index of the oldest */
    size_t count;
    struct sample ring[CAPACITY];
};

struct br_admin_rates *br_admin_rates_new(void)
{
    return g_new0(struct br_admin_rates, 1);
}

void br_admin_rates_free(struct br_admin_rates *r)
{
    g_free(r);
}

static struct sample *at(struct br_admin_rates *r, size_t i)
{
    return &r->ring[(r->first + i) % CAPACITY];
}

static const struct sample *at_c(const struct br_admin_rates *r, size_t i)
{
    return &r->ring[(r->first + i) % CAPACITY];
}

static void fill(struct sample *out, const struct br_snapshot *s)
{
    memset(out, 0, sizeof *out);
    out->at_ms = s->taken_ms;
    for (size_t i = 0; i < s->napis; i++) {
        if (s->apis[i].key >= 0 && s->apis[i].key <= MAX_API_KEY) {
            out->requests[s->apis[i].key] = s->apis[i].requests;
        }
    }
    for (size_t i = 0; i < s->ntopics; i++) {
        out->messages_in += s->topics[i].messages_in;
        out->bytes_in += s->topics[i].bytes_in;
        out->bytes_out += s->topics[i].bytes_out;
    }
}

void br_admin_rates_add(struct br_admin_rates *r, const struct br_snapshot *snap)
{
    if (r == NULL || snap == NULL) {
        return;
    }
    if (r->count > 0 &&
        (snap->started_ms != r->started_ms || snap->taken_ms < at(r, r->count - 1)->at_ms)) {
        r->count = 0; /* another start, or the clock went back */
    }
    r->started_ms = snap->started_ms;
    /* the newest sample follows the snapshots; the others are a second
     * apart at least */
    if (r->count >= 2 && snap->taken_ms - at(r, r->count - 2)->at_ms < SAMPLE_EVERY_MS) {
        fill(at(r, r->count - 1), snap);
    } else {
        if (r->count == CAPACITY) {
            r->first = (r->first + 1) % CAPACITY;
            r->count--;
        }
        fill(at(r, r->count), snap);
        r->count++;
    }
    /* the oldest kept is the last one at or before the window's start */
    gint64 start = snap->taken_ms - BR_ADMIN_RATES_WINDOW_MS;
    while (r->count >= 2 && at(r, 1)->at_ms <= start) {
        r->first = (r->first + 1) % CAPACITY;
        r->count--;
    }
}

gint64 br_admin_rates_window_ms(const struct br_admin_rates *r)
{
    if (r == NULL || r->count < 2) {
        return 0;
    }
    return at_c(r, r->count - 1)->at_ms - at_c(r, 0)->at_ms;
}

static double per_second(const struct br_admin_rates *r, gint64 oldest, gint64 newest)
{
    gint64 ms = br_admin_rates_window_ms(r);
    if (ms <= 0 || newest < oldest) {
        return 0.0;
    }
    return (double)(newest - oldest) * 1000.0 / (double)ms;
}

double br_admin_rates_api(const struct br_admin_rates *r, int16_t key)
{
    if (r == NULL || r->count < 2 || key < 0 || key > MAX_API_KEY) {
        return 0.0;
    }
    return per_second(r, at_c(r, 0)->requests[key], at_c(r, r->count - 1)->requests[key]);
}

void br_admin_rates_totals(const struct br_admin_rates *r, double *messages_in, double *bytes_in,
                           double *bytes_out)
{
    *messages_in = 0.0;
    *bytes_in = 0.0;
    *bytes_out = 0.0;
    if (r == NULL || r->count < 2) {
        return;
    }
    const struct sample *o = at_c(r, 0);
    const struct sample *n = at_c(r, r->count - 1);
    /* a deleted topic takes its counts with it: a total may go down */
    *messages_in = per_second(r, o->messages_in, n->messages_in);
    *bytes_in = per_second(r, o->bytes_in, n->bytes_in);
    *bytes_out = per_second(r, o->bytes_out, n->bytes_out);
}
