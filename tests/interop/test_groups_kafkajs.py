#!/usr/bin/python3
"""kafkajs 2.2.4 consumer groups against samsa-broker.

    test_groups_kafkajs.py SAMSA_BROKER [-k CASE]

kafkajs is installed from npm on first use into $SAMSA_NODE_DIR (meson
sets it to <builddir>/tests/interop/node), or a folder under the system's
temp folder, and reused while it holds kafkajs 2.2.4.

- two_consumers_third_joins_and_leaves: test_groups_kafkajs.js runs two
  consumers of one group (eachMessage, a commit after every message) on a
  3-partition topic while a producer writes 1,500 messages over a few
  seconds; a third consumer joins (it is assigned a partition and consumes
  from it) and leaves. Every message is consumed exactly once (at its
  partition and offset); after c3 left, c1 and c2 hold disjoint assignments
  covering the three partitions with one leader; the group's committed
  offsets are the partitions' ends, and the broker describes the group
  Empty afterwards.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from broker import check, eq, main  # noqa: E402
from test_kafkajs import node_dir  # noqa: E402

COUNT = 1500
CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "5",
}


def case_two_consumers_third_joins_and_leaves(t):
    nd = node_dir()
    b = t.broker(config=CONFIG)
    topic, group = "kjs-group-topic", "kjs-group"
    env = dict(os.environ, NODE_PATH=os.path.join(nd, "node_modules"),
               KAFKAJS_NO_PARTITIONER_WARNING="1")
    argv = ["node", os.path.join(HERE, "test_groups_kafkajs.js"), b.bootstrap, topic, group,
            str(COUNT)]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=300)
    except subprocess.TimeoutExpired as e:
        raise AssertionError("test_groups_kafkajs.js did not finish in 300 s; stderr:\n%s"
                             % (e.stderr or b"").decode(errors="replace")[-3000:])
    if p.returncode != 0:
        raise AssertionError("test_groups_kafkajs.js exited with status %d:\n%s"
                             % (p.returncode, p.stderr.decode(errors="replace")[-5000:]))
    out = json.loads(p.stdout)
    consumed = out["consumed"]
    values = [m[3] for m in consumed]
    dup = sorted({v for v in values if values.count(v) > 1})
    eq(dup[:10], [], "messages consumed more than once")
    eq(sorted(values), sorted("m-%d" % j for j in range(COUNT)), "messages consumed")
    for name, partition, offset, value in consumed:
        j = int(value[2:])
        eq((partition, int(offset)), (j % 3, j // 3), "partition and offset of %s" % value)
    by_consumer = {}
    for name, partition, _, _ in consumed:
        by_consumer.setdefault(name, set()).add(partition)
    check("c3" in by_consumer, "c3 consumed nothing: %r", {k: sorted(v) for k, v in
                                                          by_consumer.items()})
    # assignments as each consumer saw them after each join
    joins = out["joins"]
    check(any(j["consumer"] == "c3" and j["partitions"] for j in joins),
          "c3 was never assigned a partition: %r", joins)
    c3_at = max(i for i, j in enumerate(joins) if j["consumer"] == "c3")
    after = {}
    for j in joins[c3_at + 1:]:
        after[j["consumer"]] = j
    eq(sorted(after), ["c1", "c2"], "consumers that joined again after c3")
    eq(sorted(after["c1"]["partitions"] + after["c2"]["partitions"]), [0, 1, 2],
       "the last assignments of c1 and c2 (disjoint, complete)")
    eq(sum(1 for j in after.values() if j["leader"]), 1, "leaders of the last generation")
    eq(sorted((c["partition"], int(c["offset"])) for c in out["committed"]),
       [(0, COUNT // 3), (1, COUNT // 3), (2, COUNT // 3)], "committed offsets")
    # the broker's view once everybody left
    from kafka import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    try:
        d = admin.describe_consumer_groups([group])[0]
        eq((d.state, d.protocol_type, list(d.members)), ("Empty", "consumer", []),
           "the group after the consumers left")
    finally:
        admin.close()


if __name__ == "__main__":
    sys.exit(main([case_two_consumers_third_joins_and_leaves]))
