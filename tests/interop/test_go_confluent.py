#!/usr/bin/python3
"""confluent-kafka-go 0.11.6 (Debian's
golang-github-confluentinc-confluent-kafka-go-dev, Go with cgo, here on
librdkafka 2.0.2) against samsa-broker. The client is go/confluent-client
(built by meson); see goclients.py for the known messages.

    test_go_confluent.py SAMSA_BROKER [-k CASE]

- confluent_produce_group: a Producer (acks=all) sends 300 messages with
  headers into three partitions, each delivery report giving offset i // 3 in
  partition i % 3; a Consumer in a group reads exactly those 300 with their
  headers, commits synchronously and closes; kafka-python's admin sees 100
  committed in each partition.
- confluent_admin_create_describe: AdminClient.CreateTopics (3 partitions,
  the metadata then shows 3) and DescribeConfigs (cleanup.policy=delete).
- confluent_admin_create_partitions: AdminClient.CreatePartitions from 2 to 4;
  the metadata then shows 4.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from broker import check, eq, main  # noqa: E402
from goclients import CONFIG, check_records, committed, create_topic, go_run  # noqa: E402

N = 300
PARTS = 3


def confluent(cmd, b, *args):
    return go_run("confluent-client", cmd, "-brokers", b.bootstrap, *args)


def case_confluent_produce_group(t):
    b = t.broker(config=CONFIG)
    create_topic(b, "cf", PARTS)
    out = confluent("produce", b, "-topic", "cf", "-n", N, "-partitions", PARTS)
    eq(sorted((o["i"], o["partition"], o["offset"]) for o in out),
       [(i, i % PARTS, i // PARTS) for i in range(N)], "delivery reports")
    out = confluent("group", b, "-topic", "cf", "-group", "cf-go", "-expect", N)
    check_records(out, N, PARTS, headers=True, what="confluent-kafka-go Consumer")
    eq(out[-1].get("committed"), {str(p): N // PARTS for p in range(PARTS)},
       "offsets Commit() reports")
    eq(committed(b, "cf-go"), {("cf", p): N // PARTS for p in range(PARTS)},
       "offsets committed, as kafka-python's admin reads them")


def case_confluent_admin_create_describe(t):
    b = t.broker(config=CONFIG)
    eq(confluent("create-topic", b, "-topic", "made", "-partitions", 3), [{"partitions": 3}],
       "partitions in the metadata after CreateTopics")
    configs = confluent("describe-config", b, "-topic", "made")[0]["configs"]
    eq(configs.get("cleanup.policy"), "delete", "cleanup.policy in DescribeConfigs")
    check("retention.ms" in configs, "DescribeConfigs lists no retention.ms: %r", configs)


def case_confluent_admin_create_partitions(t):
    b = t.broker(config=CONFIG)
    confluent("create-topic", b, "-topic", "grow", "-partitions", 2)
    eq(confluent("create-partitions", b, "-topic", "grow", "-partitions", 4),
       [{"partitions": 4}], "partitions in the metadata after CreatePartitions")


if __name__ == "__main__":
    sys.exit(main([case_confluent_produce_group, case_confluent_admin_create_describe,
                   case_confluent_admin_create_partitions]))
