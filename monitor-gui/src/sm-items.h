/* sm-items.h: the rows of samsa-monitor's lists, one type a file: brokers
 * (sm-broker.h), topics (sm-topic.h), partitions with their replicas
 * (sm-partition.h), consumer groups (sm-group.h) and their members
 * (sm-member.h), transactional ids (sm-transaction.h), client quotas in
 * force (sm-quota.h) and the rates measured for them (sm-quota-rate.h),
 * timeline events
 * (sm-event.h), and the series of readings
 * the charts draw (sm-series.h).
 *
 * They are plain records: SmCluster (sm-cluster.c) alone writes their
 * fields, everyone else reads them. */
#pragma once

#include "sm-broker.h"
#include "sm-event.h"
#include "sm-group.h"
#include "sm-member.h"
#include "sm-partition.h"
#include "sm-quota-rate.h"
#include "sm-quota.h"
#include "sm-series.h"
#include "sm-topic.h"
#include "sm-transaction.h"
