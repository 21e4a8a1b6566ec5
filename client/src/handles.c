/*
 * The kinds by their names: which ops table a handle's letter ('p', 'c',
 * 'a') and an op's kind (enum sc_op_kind) stand for. The library's own code
 * passes its tables to the core (sc_client_create, sc_op_create); the names
 * serve the unit tests and the fuzz harness, which make cores and ops of any
 * kind, and keep core/ from naming the modules above it.
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

static const struct sc_op_ops *const op_kinds[SC_OP_KIND_COUNT] = {
    [SC_OP_METADATA] = &sc_metadata_op,
    [SC_OP_CREATE_TOPIC] = &sc_topic_op,
    [SC_OP_DELETE_TOPIC] = &sc_topic_op,
    [SC_OP_LIST_OFFSETS] = &sc_list_offsets_op,
    [SC_OP_COMMIT] = &sc_commit_op,
    [SC_OP_COMMITTED] = &sc_committed_op,
    [SC_OP_LEAVE_GROUP] = &sc_leave_op,
    [SC_OP_DESCRIBE_CONFIGS] = &sc_configs_op,
    [SC_OP_ALTER_CONFIGS] = &sc_configs_op,
    [SC_OP_CREATE_PARTITIONS] = &sc_create_partitions_op,
    [SC_OP_DELETE_RECORDS] = &sc_delete_records_op,
    [SC_OP_LIST_GROUPS] = &sc_list_groups_op,
    [SC_OP_DESCRIBE_GROUP] = &sc_group_op,
    [SC_OP_GROUP_OFFSETS] = &sc_group_op,
    [SC_OP_ALTER_GROUP_OFFSETS] = &sc_group_op,
    [SC_OP_DELETE_GROUP] = &sc_group_op,
    [SC_OP_TXN] = &sc_txn_op,
};

struct sc_op *sc_op_new(int kind, void *arg)
{
    if (kind < 0 || kind >= SC_OP_KIND_COUNT) {
        return NULL;
    }
    return sc_op_create(op_kinds[kind], kind, arg);
}
