"""Client quotas on a cluster of three brokers (broker/README.md, "Client
quotas"): a quota written by hand to ZooKeeper in Kafka 2.0's format (what
kafka-configs.sh --zookeeper --alter --entity-type clients writes, and what
zkCli.sh's `create` would: the entity's znode, then a change notification)
is applied by every broker and holds a producer to it; deleting the znode
and notifying again frees the producer.

    /usr/bin/python3 tests/integration/test_cluster_quotas.py build/broker/samsa-broker
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
from test_cluster import CHROOT, Cluster, imports, wait_for  # noqa: E402
import test_quotas  # noqa: E402

RATE = 10240


def notify(c, entity_path):
    """A change notification as Kafka 2.0's AdminZkClient.changeEntityConfig
    writes it (a persistent sequential znode, version 2)."""
    c.kz.create(CHROOT + "/config/changes/config_change_",
                json.dumps({"version": 2, "entity_path": entity_path}).encode(),
                sequence=True, makepath=True)


def applied_everywhere(c, line):
    return all(line in b.log_text() for b in c.brokers)


def case_zookeeper_quota_by_hand_honoured_and_removed(t):
    """/config/clients/zk-held {"version":1,"config":{"producer_byte_rate":
    "10240"}} with its notification: each of the three brokers logs it
    applied; a producer paced at 30 KiB/s to the partition broker 0 leads
    goes at about 10 KiB/s; a broker started again reads it at start; the
    znode deleted and notified again, each broker
    drops the quota and the producer goes at its pace. `samsa quotas --alter
    --zookeeper` writes the znode and notification Kafka's tool writes (a
    name sanitized), every broker applies it, and --describe lists it."""
    imports()
    test_quotas.need_client()
    c = Cluster(t)
    try:
        c.create_topic("zkq", [[0]])
        wait_for(lambda: (c.state("zkq", 0) or {}).get("leader") == 0, 30, "zkq led by broker 0")
        c.kz.create(CHROOT + "/config/clients/zk-held",
                    json.dumps({"version": 1,
                                "config": {"producer_byte_rate": str(RATE)}}).encode(),
                    makepath=True)
        notify(c, "clients/zk-held")
        line = "quotas: clients/zk-held: producer_byte_rate=%d" % RATE
        wait_for(lambda: applied_everywhere(c, line), 30, "the quota applied by every broker")
        # a broker started again reads every quota entity at start
        c.brokers[2].stop()
        c.brokers[2].start()
        wait_for(lambda: line in c.brokers[2].log_text(), 30, "the quota read by broker 2 at start")
        p = test_quotas.Producer(c.bootstrap(0), "zk-held", "zkq", pace_bps=3 * RATE)

        def remove():
            c.kz.delete(CHROOT + "/config/clients/zk-held")
            notify(c, "clients/zk-held")
            wait_for(lambda: applied_everywhere(c, "quotas: clients/zk-held: none"), 30,
                     "the quota dropped by every broker")
        held, free = p.held_then_released(remove)
        print("held %.0f B/s (quota %d), after its removal %.0f B/s, throttle max %d ms" %
              (held, RATE, free, p.throttle_max))
        check(not p.errors, "delivery errors: %s", p.errors[:3])
        check(held < 1.3 * RATE, "held at %.0f B/s under a quota of %d", held, RATE)
        check(free > 2 * RATE, "still held at %.0f B/s after the quota was removed", free)
        check(p.throttle_max > 0, "librdkafka saw no throttle_time_ms")
        # samsa quotas --zookeeper writes what kafka-configs.sh writes
        zk = c.zk.connect + CHROOT
        test_quotas.samsa_quotas(t, "--alter", "--zookeeper", zk, "--entity-type", "users",
                                 "--entity-name", "<default>", "--entity-type", "clients",
                                 "--entity-name", "tool client", "--add-config",
                                 "consumer_byte_rate=2048")
        got = c.json("/config/users/<default>/clients/tool%20client")
        check(got == {"version": 1, "config": {"consumer_byte_rate": "2048"}}, "znode %s", got)
        notes = [c.json("/config/changes/" + n) for n in c.children("/config/changes")]
        check({"version": 2, "entity_path": "users/<default>/clients/tool%20client"} in notes,
              "notifications %s", notes)
        wait_for(lambda: applied_everywhere(
            c, "quotas: users/<default>/clients/tool%20client: consumer_byte_rate=2048"), 30,
            "the tool's quota applied by every broker")
        out = test_quotas.samsa_quotas(t, "--describe", "--zookeeper", zk)
        check(out == "users/<default>/clients/tool%20client consumer_byte_rate=2048\n",
              "--describe printed %r", out)
        # a user's znode also holds its SCRAM credentials: a quota set and
        # deleted beside them leaves them whole, and --describe lists quotas
        scram = ("salt=" + "c2FsdA" * 8 + ",stored_key=" + "a2V5" * 10 + ",server_key=" +
                 "a2V5" * 10 + ",iterations=4096")
        c.kz.create(CHROOT + "/config/users/alice", json.dumps(
            {"version": 1, "config": {"SCRAM-SHA-256": scram}}).encode())
        test_quotas.samsa_quotas(t, "--alter", "--zookeeper", zk, "--entity-type", "users",
                                 "--entity-name", "alice", "--add-config",
                                 "producer_byte_rate=4096")
        eq(c.json("/config/users/alice")["config"],
           {"SCRAM-SHA-256": scram, "producer_byte_rate": "4096"}, "alice's znode")
        out = test_quotas.samsa_quotas(t, "--describe", "--zookeeper", zk)
        check("users/alice producer_byte_rate=4096\n" in out and "SCRAM" not in out,
              "--describe printed %r", out)
        test_quotas.samsa_quotas(t, "--alter", "--zookeeper", zk, "--entity-type", "users",
                                 "--entity-name", "alice", "--delete-config",
                                 "producer_byte_rate")
        eq(c.json("/config/users/alice")["config"], {"SCRAM-SHA-256": scram},
           "alice's znode after --delete-config")
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_zookeeper_quota_by_hand_honoured_and_removed]))
