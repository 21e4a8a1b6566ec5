/*
 * The samsa tool's own header: what its files share. The tool is built on
 * libsamsa's public API only (samsa/samsa.h).
 *
 * Its files, each calling only those listed after it (no file calls back):
 *   main.c     the commands' table: `samsa COMMAND ...` to cmd_COMMAND
 *   topic.c    samsa topic create|list|describe|alter|delete|offsets
 *   cluster.c  samsa cluster info|metadata and samsa configs describe
 *   leaders.c  samsa leaders elect-preferred (through ZooKeeper, as Kafka
 *              2.0's tool: the one file that does not use libsamsa)
 *   produce.c  samsa produce
 *   consume.c  samsa consume
 *   group.c    samsa group list|describe|reset-offsets|delete
 *   perf.c     samsa perf produce|consume
 *   users.c    samsa users add|change|remove (SCRAM credentials, to ZooKeeper or
 *              a standalone broker's file; libcrypto, libzookeeper-mt)
 *   quotas.c   samsa quotas: client quotas in ZooKeeper or a standalone
 *              broker's quota file (the one command without a broker)
 *   acls.c     samsa acls --list|--add|--remove: ACLs in ZooKeeper, as
 *              kafka-acls.sh --authorizer-properties zookeeper.connect=...
 *   reassign.c samsa reassign generate|execute|verify: partitions moved
 *              between brokers through ZooKeeper, as kafka-reassign-partitions.sh
 *   zk.c       the ZooKeeper session and config znodes of the commands
 *              above that write Kafka's znodes (zk.h)
 *   connect.c  the client configuration (config files, -b, -X), the bootstrap
 *              probe, the admin handle, one topic's metadata
 *   output.c   text tables, JSON values, the messages of failed calls
 *   options.c  the flags every command shares, the config files, the
 *              command's deadline, start_verb and each verb's --help,
 *              SIGINT/SIGTERM
 *
 * Exit codes: 0 success; 1 the operation failed (broker said no, timeout,
 * records not delivered, no such group), or part of the answer could not be
 * read: what was read is printed and stderr names what is missing; 2 usage
 * error; 3 from samsa reassign verify only: some partitions still moving.
 *
 * --timeout is one deadline for the whole command, not one per library call:
 * a command that makes several calls gives each what is left of it
 * (left_ms), so it ends within --timeout whatever its calls wait for (give or
 * take the second a library call may wait past its own deadline for the I/O
 * thread to finish it). produce and perf produce, whose input lasts as long
 * as it does, use it for the last delivery reports only.
 */
#ifndef SAMSA_TOOL_H
#define SAMSA_TOOL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <samsa/samsa.h>

#define EXIT_FAIL 1
#define EXIT_USAGE 2

/* A client property from a config file: key and value point into the file's
 * text, kept in opts.file_text. */
struct file_prop {
    const char *key;
    const char *value;
    const char *file;
    int line;
};

#define FILE_TEXT_MAX 32768
#define FILE_PROPS_MAX 256

struct opts {
    const char *brokers;
    const char *topic;
    int32_t partition;
    const char *key_delim;
    const char *format;
    const char *from;
    long long count;
    bool exit_at_end;
    bool json;
    int32_t partitions;
    int16_t replication;
    const char *configs[64];
    size_t config_count;
    const char *props[64];
    size_t prop_count;
    int timeout_ms;
    int64_t deadline_ms;         /* mono_ms() at which --timeout runs out */
    const char *positional[8];
    int npos;
    bool help;
    const char *headers[64];     /* -H name=value */
    size_t header_count;
    const char *delete_configs[64];
    size_t delete_config_count;
    const char *group;
    const char *transactional_id; /* produce --transactional-id */
    /* group reset-offsets */
    int reset_mode;              /* RESET_* */
    long long reset_value;
    bool execute;
    bool state;
    bool members;    /* group describe --members */
    bool under_replicated; /* topic describe: only partitions with ISR < replicas, */
    bool unavailable;      /* no live leader, */
    bool under_min_isr;    /* ISR < the topic's min.insync.replicas */
    long long time_ms;     /* topic offsets --time MS; -1 when not given */
    long long until_ms;    /* consume --until MS; -1 when not given */
    const char *broker_id; /* configs describe|alter --broker ID */
    bool all;              /* configs describe --all, leaders elect-preferred --all */
    const char *zookeeper; /* leaders: --zookeeper HOST:PORT[/chroot] */
    const char *command_config; /* --command-config FILE */
    char default_config[512];   /* $XDG_CONFIG_HOME/samsa/config, when it exists */
    struct file_prop file_props[FILE_PROPS_MAX]; /* both files', in order */
    size_t file_prop_count;
    char file_text[FILE_TEXT_MAX];
    size_t file_text_len;
    bool all_groups; /* group describe --all-groups */
    bool all_topics; /* group reset-offsets --all-topics */
    /* perf */
    long long size;
    long long interval_ms;
};

enum {
    RESET_NONE = 0,
    RESET_EARLIEST,
    RESET_LATEST,
    RESET_OFFSET,
    RESET_SHIFT,
    RESET_DATETIME,
};

/* ---------------------------------------------------------------- options.c */

/* Set by SIGINT and SIGTERM (catch_signals): the loops that read or send
 * records stop and finish cleanly. */
extern volatile sig_atomic_t interrupted;

void catch_signals(void);
int64_t mono_ms(void);
int left_ms(const struct opts *o);
bool parse_ll(const char *s, long long *out);
__attribute__((format(printf, 2, 3))) int usage_error(const char *cmd, const char *fmt, ...);
int parse_opts(const char *cmd, int argc, char **argv, struct opts *o);
int print_help(const char *cmd, const char *verb, const char *all);
int start_verb(const char *cmd, const char *help, const char *const *verbs, int argc,
               char **argv, struct opts *o);
/* --config/--add-config KEY=VALUE then --delete-config KEY as ops (keys:
 * room for the names); their count. */
size_t config_ops(const struct opts *o, struct samsa_config_op *ops, char (*keys)[256]);

/* ----------------------------------------------------------------- output.c */

/* A text table whose columns are as wide as their widest cell, the header
 * included (kafka-consumer-groups.sh sizes its columns so): rows are added
 * whole, cells copied; a NULL cell prints as "-". Out of memory sticks:
 * later rows are dropped and table_print says so. */
struct table {
    size_t cols;
    size_t rows;
    size_t cap;
    char **cells; /* rows * cols, row-major */
    bool oom;
};

void table_row(struct table *t, const char *const *cells);
void table_print(struct table *t);
void table_free(struct table *t);
const char *cell_ll(char *buf, size_t size, long long v);
void json_str(FILE *f, const char *s, size_t n);
void json_opt_str(const char *v);
void json_opt_ll(long long v);
void print_ids(const int32_t *ids, size_t n);
void json_ids(const int32_t *ids, size_t n);
const char *failure(const struct opts *o, int e, const char *errstr, char *buf, size_t size);
void topic_failed(const char *cmd, const char *topic, int e);

/* ---------------------------------------------------------------- connect.c */

int make_conf(const char *cmd, const struct opts *o, samsa_conf **out);
int make_admin(const char *cmd, const struct opts *o, samsa_admin **out);
int one_topic(samsa_admin *a, const char *cmd, const struct opts *o, const char *topic,
              samsa_metadata **out);

/* ------------------------------------------------------ the commands' files */

int cmd_topic(int argc, char **argv);
int cmd_cluster(int argc, char **argv);
int cmd_configs(int argc, char **argv);
int cmd_quotas(int argc, char **argv);
int cmd_produce(int argc, char **argv);
int cmd_consume(int argc, char **argv);
int cmd_group(int argc, char **argv);
int cmd_perf(int argc, char **argv);
int cmd_leaders(int argc, char **argv);
int cmd_users(int argc, char **argv);
int cmd_reassign(int argc, char **argv);
int cmd_acls(int argc, char **argv);

#endif
