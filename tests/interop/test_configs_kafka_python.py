#!/usr/bin/python3
"""Topic configs through kafka-python 2.0.2's KafkaAdminClient against
samsa-broker.

    test_configs_kafka_python.py SAMSA_BROKER [-k CASE]

- create_alter_describe: create_topics with topic configs (retention.ms,
  cleanup.policy=compact,delete); describe_configs (DescribeConfigs v2 with
  config_source, and with include_synonyms) shows them as DYNAMIC_TOPIC and
  the others as DEFAULT; alter_configs (AlterConfigs: the whole set is
  replaced) sets retention.bytes, segment.bytes, min.cleanable.dirty.ratio,
  message.timestamp.type, unclean.leader.election.enable and
  min.insync.replicas: describe_configs shows the new values, the keys left
  out are back to their defaults; a bad value is refused with
  InvalidConfigurationError-style error codes in the response and changes
  nothing; a BROKER resource is refused with INVALID_REQUEST. After a
  restart the configs are still there, and the new segment.bytes applies to
  the log (segments roll at it).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

from kafka import KafkaAdminClient  # noqa: E402
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic  # noqa: E402

DYNAMIC_TOPIC = 1
DEFAULT_CONFIG = 5
INVALID_CONFIG = 40
INVALID_REQUEST = 42


def admin_client(b):
    return KafkaAdminClient(bootstrap_servers=b.bootstrap, client_id="it-configs",
                            request_timeout_ms=15000)


def describe(admin, topic, synonyms=False):
    """{name: (value, source)} of a topic (DescribeConfigs v2 carries the
    source; v1 with synonyms: the first synonym's)."""
    res = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)],
                                 include_synonyms=synonyms)
    eq(len(res), 1, "responses")
    resources = res[0].resources
    eq(len(resources), 1, "resources")
    err, msg, rtype, name, entries = resources[0][:5]
    eq((err, rtype, name), (0, 2, topic), "DescribeConfigs resource")
    out = {}
    for e in entries:
        if res[0].API_VERSION >= 2:
            out[e[0]] = (e[1], e[3])
        else:
            out[e[0]] = (e[1], e[5][0][2] if synonyms and e[5] else None)
    return out


def case_create_alter_describe(t):
    b = t.broker()
    admin = admin_client(b)
    topic = "kp-configs"
    try:
        admin.create_topics([NewTopic(topic, 1, 1, topic_configs={
            "retention.ms": "3600000", "cleanup.policy": "compact,delete"})])
        d = describe(admin, topic)
        eq(d["retention.ms"], ("3600000", DYNAMIC_TOPIC), "retention.ms")
        eq(d["cleanup.policy"], ("compact,delete", DYNAMIC_TOPIC), "cleanup.policy")
        eq(d["segment.bytes"], ("1073741824", DEFAULT_CONFIG), "segment.bytes default")
        check(len(d) >= 20, "only %d topic configs described", len(d))
        d = describe(admin, topic, synonyms=True)
        eq(d["retention.ms"], ("3600000", DYNAMIC_TOPIC), "retention.ms with synonyms")

        new = {"retention.bytes": "5000000", "segment.bytes": "20000",
               "min.cleanable.dirty.ratio": "0.25", "message.timestamp.type": "LogAppendTime",
               "unclean.leader.election.enable": "true", "min.insync.replicas": "1"}
        resp = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                   configs=new)])
        eq([r[0] for r in resp.resources], [0], "AlterConfigs error codes")
        d = describe(admin, topic)
        for k, v in new.items():
            eq(d[k], (v, DYNAMIC_TOPIC), k)
        eq(d["retention.ms"], ("604800000", DEFAULT_CONFIG), "retention.ms left out")
        eq(d["cleanup.policy"], ("delete", DEFAULT_CONFIG), "cleanup.policy left out")

        resp = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={
            "retention.bytes": "1", "segment.bytes": "-5"})])
        eq(resp.resources[0][0], INVALID_CONFIG, "AlterConfigs with a bad value")
        check(resp.resources[0][1], "no error message")
        eq(describe(admin, topic)["retention.bytes"], ("5000000", DYNAMIC_TOPIC),
           "retention.bytes after a refused AlterConfigs")
        resp = admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "0", configs={
            "log.retention.ms": "1000"})])
        eq(resp.resources[0][0], INVALID_REQUEST, "AlterConfigs of the broker")
    finally:
        admin.close()

    for i in range(30):
        kwire.produce(b.port, topic, 0, [(b"k", b"v" * 100)] * 10)
    b.stop()
    b.start()
    admin = admin_client(b)
    try:
        d = describe(admin, topic)
        eq(d["segment.bytes"], ("20000", DYNAMIC_TOPIC), "segment.bytes after a restart")
        eq(d["min.cleanable.dirty.ratio"], ("0.25", DYNAMIC_TOPIC), "ratio after a restart")
    finally:
        admin.close()
    sizes = [os.path.getsize(f) for f in kwire.segment_files(b.log_dir, topic, 0)]
    check(len(sizes) >= 2 and max(sizes[:-1]) <= 20000, "segment sizes %r", sizes)
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_create_alter_describe]))
