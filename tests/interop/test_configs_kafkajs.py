#!/usr/bin/python3
"""Topic configs and DeleteRecords through kafkajs 2.2.4's admin client
against samsa-broker.

    test_configs_kafkajs.py SAMSA_BROKER [-k CASE]

kafkajs is installed from npm on first use, as test_kafkajs.py does.

- admin_configs: configs_kafkajs.js creates a topic with configEntries
  (retention.ms, cleanup.policy=compact,delete): describeConfigs shows them
  with configSource DYNAMIC_TOPIC (1) and the rest as DEFAULT_CONFIG (5);
  alterConfigs replaces the set (retention.bytes, delete.retention.ms,
  min.compaction.lag.ms, max.message.bytes): describeConfigs (with
  synonyms) shows the new values and the keys left out back at their
  defaults; a bad value is refused (KafkaJSProtocolError INVALID_CONFIG);
  validateOnly changes nothing; deleteTopicRecords moves partition 0's low
  offset to 40 and partition 1's to its high watermark (offset -1). The
  broker's own view agrees (ListOffsets earliest, the configs after a
  restart).
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402
from test_kafkajs import node_dir  # noqa: E402

DYNAMIC_TOPIC = 1
DEFAULT_CONFIG = 5


def case_admin_configs(t):
    nd = node_dir()
    b = t.broker()
    topic = "kjs-configs"
    env = dict(os.environ, NODE_PATH=os.path.join(nd, "node_modules"),
               KAFKAJS_NO_PARTITIONER_WARNING="1")
    argv = ["node", os.path.join(HERE, "configs_kafkajs.js"), b.bootstrap, topic]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=120)
    except subprocess.TimeoutExpired as e:
        raise AssertionError("configs_kafkajs.js did not finish in 120 s; stderr:\n%s"
                             % (e.stderr or b"").decode(errors="replace")[-3000:])
    if p.returncode != 0:
        raise AssertionError("configs_kafkajs.js exited with status %d:\n%s"
                             % (p.returncode, p.stderr.decode(errors="replace")[-4000:]))
    out = json.loads(p.stdout.decode().strip().splitlines()[-1])

    eq(out["created"], True, "createTopics")
    before = out["before"]
    eq(before["retention.ms"]["value"], "7200000", "retention.ms after createTopics")
    eq(before["retention.ms"]["source"], DYNAMIC_TOPIC, "retention.ms source")
    eq(before["cleanup.policy"]["value"], "compact,delete", "cleanup.policy")
    eq(before["segment.bytes"]["source"], DEFAULT_CONFIG, "segment.bytes source")
    eq(before["segment.bytes"]["isDefault"], True, "segment.bytes isDefault")

    eq(out["altered"], [{"errorCode": 0, "name": topic}], "alterConfigs")
    after = out["after"]
    for k, v in (("retention.bytes", "7000000"), ("delete.retention.ms", "1000"),
                 ("min.compaction.lag.ms", "5"), ("max.message.bytes", "500000")):
        eq((after[k]["value"], after[k]["source"]), (v, DYNAMIC_TOPIC), k)
    eq((after["retention.ms"]["value"], after["retention.ms"]["source"]),
       ("604800000", DEFAULT_CONFIG), "retention.ms left out")
    eq((after["cleanup.policy"]["value"], after["cleanup.policy"]["source"]),
       ("delete", DEFAULT_CONFIG), "cleanup.policy left out")
    eq(sorted(after), sorted(["retention.bytes", "delete.retention.ms", "min.compaction.lag.ms",
                              "max.message.bytes", "retention.ms", "cleanup.policy"]),
       "configNames filter")

    bad = out["badAlter"]
    check(isinstance(bad, dict) and bad.get("type") == "INVALID_CONFIG",
          "a bad value was not refused with INVALID_CONFIG: %r", bad)
    eq(out["validateOnly"], [0], "validateOnly")
    eq(out["afterValidateOnly"]["retention.ms"]["value"], "604800000",
       "retention.ms after validateOnly")

    offsets = {o["partition"]: (o["low"], o["high"]) for o in out["offsets"]}
    eq(offsets, {0: ("40", "60"), 1: ("40", "40")}, "offsets after deleteTopicRecords")
    eq(kwire.list_offset(b.port, topic, 0, -2)[1], 40, "ListOffsets earliest, partition 0")

    b.stop()
    b.start()
    d = kadmin.describe_configs(b.port, topic)
    eq(d["retention.bytes"], ("7000000", DYNAMIC_TOPIC), "retention.bytes after a restart")
    eq(d["max.message.bytes"], ("500000", DYNAMIC_TOPIC), "max.message.bytes after a restart")
    eq(kwire.list_offset(b.port, topic, 0, -2)[1], 40, "log start after a restart")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_admin_configs]))
