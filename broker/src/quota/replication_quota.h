/*
 * samsa-broker: replication quotas, as Kafka 2.0's ReplicationQuotaManager
 * (core/src/main/scala/kafka/server/ReplicationQuotaManager.scala) keeps
 * them, one for the leader role and one for the follower role
 * (QuotaFactory.scala: QuotaType.LeaderReplication, FollowerReplication).
 *
 * A quota is a byte rate (SimpleRate over replication.quota.window.num
 * samples of replication.quota.window.size.seconds, rate.h) and a bound:
 * leader.replication.throttled.rate or follower.replication.throttled.rate
 * (broker configs; unset, Long.MaxValue: none). The bytes of throttled
 * partitions are recorded whatever the bound (record); the quota is
 * exceeded while the rate is over the bound (isQuotaExceeded, Kafka's
 * Sensor.checkQuotas).
 *
 * Which partitions are throttled comes from each topic's
 * leader.replication.throttled.replicas and
 * follower.replication.throttled.replicas (config/topic_config.h:
 * br_topic_config_throttled).
 * @locality reactor thread
 */
#ifndef SAMSA_BROKER_QUOTA_REPLICATION_QUOTA_H
#define SAMSA_BROKER_QUOTA_REPLICATION_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa-protocol/err.h>

#include "quota/rate.h"

struct br_repl_quota {
    struct br_rate rate;
    int64_t bytes_total;     /* recorded in all, for the metrics */
    int64_t throttled_total; /* partitions left out of a fetch because of it, in all */
};

/* The quota measured over window_num samples of window_size_s seconds.
 * 0, KP_E_INVALID_ARG or KP_E_NOMEM. */
KP_MUST_CHECK int br_repl_quota_init(struct br_repl_quota *q, int32_t window_num,
                                     int32_t window_size_s);
void br_repl_quota_free(struct br_repl_quota *q);

/* Whether bound is none: Long.MaxValue (or below 0, which the configs
 * refuse). 0 holds every throttled replica not in sync, as in Kafka. */
bool br_repl_quota_unbounded(int64_t bound);
/* ReplicationQuotaManager.record: bytes of throttled partitions moved. */
void br_repl_quota_record(struct br_repl_quota *q, int64_t bytes, int64_t now_ms);
/* isQuotaExceeded: the rate at now_ms over bound (bytes per second). */
bool br_repl_quota_exceeded(struct br_repl_quota *q, int64_t bound, int64_t now_ms);
/* The byte rate at now_ms. */
double br_repl_quota_rate(struct br_repl_quota *q, int64_t now_ms);
/* While exceeded: ms from now_ms until the rate falls to bound with
 * nothing more recorded, at least 1 and at most one sample window; 0 when
 * not exceeded. */
int64_t br_repl_quota_wait_ms(struct br_repl_quota *q, int64_t bound, int64_t now_ms);
/* One partition left out because of the quota (counted for the metrics). */
void br_repl_quota_throttled(struct br_repl_quota *q);

#endif
