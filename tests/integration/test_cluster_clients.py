"""kafkajs 2.2.4 (Node.js) through a cluster: three samsa-brokers and a
real ZooKeeper on 127.0.0.1.

kafkajs creates a topic of three partitions with replication factor 3
through its admin client (waiting for the leaders), produces with
acks=-1, reads everything back as a member of a consumer group (its
coordinator the leader of the group's partition of __consumer_offsets)
and fetches the group's committed offsets. kafka-python, librdkafka
(confluent-kafka) and kcat go through the cluster in test_cluster.py,
test_cluster_groups.py and tools-samsa-cluster.

kafkajs is installed from npm on first use, as tests/interop/test_kafkajs.py
does. Every process is stopped by its PID.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "interop"))

from broker import check, eq, main  # noqa: E402
from test_cluster import Cluster, imports, wait_for  # noqa: E402
from test_kafkajs import node_dir  # noqa: E402

COUNT = 600


def case_kafkajs_produces_and_consumes_in_a_group(t):
    imports()
    nd = node_dir()
    c = Cluster(t, config={"min.insync.replicas": "2",
                           "offsets.topic.num.partitions": "6",
                           "group.initial.rebalance.delay.ms": "0"})
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        env = dict(os.environ, NODE_PATH=os.path.join(nd, "node_modules"),
                   KAFKAJS_NO_PARTITIONER_WARNING="1")
        brokers = ",".join(c.bootstrap(i) for i in range(3))
        argv = ["node", os.path.join(HERE, "cluster_kafkajs.js"), brokers, "kjs-cluster",
                "kjs-group", str(COUNT)]
        try:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               timeout=300)
        except subprocess.TimeoutExpired as e:
            raise AssertionError("cluster_kafkajs.js did not finish in 300 s; stderr:\n%s"
                                 % (e.stderr or b"").decode(errors="replace")[-3000:])
        check(p.returncode == 0, "cluster_kafkajs.js exited with status %d:\n%s", p.returncode,
              p.stderr.decode(errors="replace")[-3000:])
        out = json.loads(p.stdout.decode().strip().splitlines()[-1])
        eq(out["created"], True, "createTopics")
        parts = sorted(out["metadata"], key=lambda m: m["partition"])
        eq(len(parts), 3, "partitions in kafkajs' metadata")
        for m in parts:
            eq(sorted(m["replicas"]), [0, 1, 2], "replicas of partition %d" % m["partition"])
            eq(sorted(m["isr"]), [0, 1, 2], "ISR of partition %d" % m["partition"])
            check(m["leader"] in (0, 1, 2), "partition %d's leader %r", m["partition"],
                  m["leader"])
        eq(sorted(out["values"], key=lambda v: int(v[1:])), ["v%d" % j for j in range(COUNT)],
           "values the group read")
        eq(sum(int(x["offset"]) for x in out["committed"]), COUNT,
           "offsets the group committed %r" % out["committed"])
        # the ZooKeeper assignment is the one kafkajs was told about
        asg = c.json("/brokers/topics/kjs-cluster")["partitions"]
        for m in parts:
            eq(asg[str(m["partition"])], m["replicas"], "assignment of partition %d"
               % m["partition"])
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_kafkajs_produces_and_consumes_in_a_group]))
