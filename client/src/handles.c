/*
 * The kinds of handle by their letter: which ops table 'p', 'c' and 'a'
 * name. The public constructors pass their own table to the core
 * (sc_client_create); the letters serve the unit tests and the fuzz harness,
 * which make a core of any kind, and name no kind inside core/.
 */
#include "core/internal.h"

static const struct sc_kind_ops *kind_of(char kind)
{
    switch (kind) {
    case 'p':
        return &sc_producer_kind;
    case 'c':
        return &sc_consumer_kind;
    default:
        return &sc_admin_kind;
    }
}

int sc_client_new(char kind, const samsa_conf *conf, struct sc_client **out, char *errstr,
                  size_t errstr_size)
{
    return sc_client_create(kind_of(kind), conf, out, errstr, errstr_size);
}

int sc_client_new_detached(char kind, const samsa_conf *conf, struct sc_client **out,
                           char *errstr, size_t errstr_size)
{
    return sc_client_create_detached(kind_of(kind), conf, out, errstr, errstr_size);
}

int sc_conf_finalize(samsa_conf *conf, char kind, char *errstr, size_t errstr_size)
{
    return sc_conf_finalize_for(conf, kind_of(kind), errstr, errstr_size);
}
