"""Operator's leadership and placement tools on a cluster of samsa-brokers
and a real ZooKeeper on 127.0.0.1 (issue 36):

- preferred leaders on demand: leaders moved off a broker by its restart are
  given back by `samsa leaders elect-preferred --all` (the tool writes
  /admin/preferred_replica_election as Kafka 2.0's
  kafka-preferred-replica-election.sh does) and by the same znode written
  with ZooKeeper's own CLI, each within seconds, long before the 300 s
  imbalance check (left at Kafka's default); the controller deletes the
  znode when done;
- a controller stopped and killed while the znode exists: the next
  controller finds it at its failover, finishes the election and deletes
  it;
- racks: six brokers over three racks (broker.rack, on 127.0.0.1: enough
  for placement) register their rack in /brokers/ids/N as Kafka does, a
  topic created with kafka-python's admin client and the partitions added
  to it get one replica per rack (AdminUtils' rack-aware assignment), and
  Metadata v1 (kafka-python's wire classes) and the admin API's cluster
  document give each broker's rack;
- dynamic broker configs (KIP-226): log.retention.ms set on broker 0 with
  confluent-kafka's AdminClient (AlterConfigs) is seen by kafka-python's
  DescribeConfigs v1 as DYNAMIC_BROKER_CONFIG with its synonyms, and
  deletes the old segments of a partition broker 0 hosts without a
  restart; the cluster's default (kafka-python's AlterConfigs of broker
  "") is seen on broker 1 by confluent-kafka as
  DYNAMIC_DEFAULT_BROKER_CONFIG, and broker 1's own value set with `samsa
  configs alter --broker 1` over it as DYNAMIC_BROKER_CONFIG; a key Kafka
  2.0 does not make dynamic is refused.

Usage: test_cluster_leaders.py SAMSA_BROKER SAMSA_TOOL [-k NAME]
"""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import check, eq, main  # noqa: E402
from test_cluster import CHROOT, SESSION_MS, Cluster, imports, wait_for  # noqa: E402

TOOL = None
ZKCLI = "/usr/share/zookeeper/bin/zkCli.sh"
ELECTION = "/admin/preferred_replica_election"


def tool(*args):
    out = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)
    check(out.returncode == 0, "samsa %s: exit %d: %s%s", " ".join(args), out.returncode,
          out.stdout[-300:], out.stderr[-500:])
    return out.stdout


def leader(c, topic, p):
    return (c.state(topic, p) or {}).get("leader")


def move_off_and_back(c, topic, p, broker):
    """Kills broker (partition p's preferred replica), waits for another to
    lead p, starts it again and waits until it is back in p's ISR."""
    c.brokers[broker].kill()
    wait_for(lambda: leader(c, topic, p) not in (None, -1, broker), 60,
             "%s-%d led by another broker than %d" % (topic, p, broker))
    c.brokers[broker].start()
    wait_for(lambda: broker in (c.state(topic, p) or {}).get("isr", []), 60,
             "broker %d back in %s-%d's ISR" % (broker, topic, p))
    eq(leader(c, topic, p) != broker, True, "the leader moved back on its own")


def case_elect_preferred_by_the_tool_and_by_zkcli(t):
    """Broker 0's restart moves pref-0 to broker 1; `samsa leaders
    elect-preferred --all` gives it back to broker 0 (epoch bumped, ISR
    kept) and the znode is deleted. Then broker 1's restart moves pref-1
    away, and the znode written by zkCli.sh names only pref-1: it goes
    back too."""
    imports()
    c = Cluster(t)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("pref", [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
        wait_for(lambda: all(leader(c, "pref", p) == p for p in range(3)), 60,
                 "each partition led by its preferred replica")
        move_off_and_back(c, "pref", 0, 0)
        before = c.state("pref", 0)
        began = time.monotonic()
        out = tool("leaders", "elect-preferred", "--zookeeper", c.zk.connect + CHROOT, "--all")
        check("3 partitions" in out, "the tool's report: %r", out)
        st = wait_for(lambda: leader(c, "pref", 0) == 0 and c.state("pref", 0), 20,
                      "broker 0 leading pref-0 again")
        print("pref-0 led by broker 0 again %.2f s after the tool started" %
              (time.monotonic() - began), flush=True)
        check(st["leader_epoch"] > before["leader_epoch"], "epoch not bumped: %r", st)
        eq(sorted(st["isr"]), sorted(before["isr"]), "the ISR kept")
        wait_for(lambda: not c.exists(ELECTION), 20, "the election's znode deleted")
        eq([leader(c, "pref", p) for p in range(3)], [0, 1, 2], "leaders")

        move_off_and_back(c, "pref", 1, 1)
        doc = json.dumps({"version": 1, "partitions": [{"topic": "pref", "partition": 1}]},
                         separators=(",", ":"))
        out = subprocess.run([ZKCLI, "-server", c.zk.connect, "create", CHROOT + ELECTION, doc],
                             capture_output=True, text=True, timeout=120)
        check(out.returncode == 0, "zkCli.sh create: %s", out.stderr[-500:])
        done = time.monotonic()
        wait_for(lambda: leader(c, "pref", 1) == 1, 20, "broker 1 leading pref-1 again")
        print("pref-1 led by broker 1 again %.2f s after zkCli.sh returned" %
              (time.monotonic() - done), flush=True)
        wait_for(lambda: not c.exists(ELECTION), 20, "the election's znode deleted")
    finally:
        c.close()


def case_controller_killed_with_an_election_pending(t):
    """The controller is stopped (SIGSTOP) with a partition off its
    preferred leader, the znode written, the controller killed: the next
    controller finishes the election at its failover and deletes the
    znode."""
    imports()
    c = Cluster(t)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        ctl = c.controller()
        others = [i for i in range(3) if i != ctl]
        pref, second = others
        c.create_topic("pend", [[pref, second, ctl]])
        wait_for(lambda: leader(c, "pend", 0) == pref, 60, "pend-0 led by its preferred replica")
        move_off_and_back(c, "pend", 0, pref)
        eq(leader(c, "pend", 0), second, "pend-0's leader")
        old = c.brokers[ctl]
        os.kill(old.pid, signal.SIGSTOP)
        try:
            c.kz.create(CHROOT + ELECTION, json.dumps(
                {"version": 1, "partitions": [{"topic": "pend", "partition": 0}]}).encode())
        finally:
            old.kill()
        killed = time.monotonic()
        wait_for(lambda: c.controller() not in (None, ctl), 60, "another controller")
        wait_for(lambda: leader(c, "pend", 0) == pref, 30, "pend-0 led by broker %d" % pref)
        print("pend-0 led by its preferred replica %.2f s after the controller was killed "
              "(zookeeper.session.timeout.ms %s)" % (time.monotonic() - killed, SESSION_MS),
              flush=True)
        wait_for(lambda: not c.exists(ELECTION), 20, "the election's znode deleted")
    finally:
        c.close()


def rack_of(i):
    return "rack%d" % (i // 2)


def case_six_brokers_over_three_racks(t):
    """Brokers 0,1 in rack0, 2,3 in rack1, 4,5 in rack2: their
    registrations and Metadata carry the rack, and each partition of a
    topic of 6 partitions with replication factor 3, and of the 3 added to
    it, has one replica in each rack."""
    imports()
    from kafka.admin import KafkaAdminClient, NewPartitions, NewTopic
    from kafka.protocol.metadata import MetadataRequest
    from test_cluster import send

    def make(i, cfg):
        return t.broker(name="broker%d" % i, start=False,
                        config={**cfg, "broker.rack": rack_of(i),
                                "admin.listeners": "http://127.0.0.1:0"})
    c = Cluster(t, n=6, make_broker=make)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        for i in range(6):
            eq(c.json("/brokers/ids/%d" % i).get("rack"), rack_of(i), "broker %d's rack" % i)
        # every broker's Metadata lists the six with their racks
        for i in range(6):
            def racks(i=i):
                r = send(c.bootstrap(i), MetadataRequest[1]([]))
                got = {b[0]: b[3] for b in r.brokers}
                return got if len(got) == 6 else None
            eq(wait_for(racks, 30, "six brokers in broker %d's Metadata" % i),
               {j: rack_of(j) for j in range(6)}, "racks in broker %d's Metadata" % i)
        # the admin API's cluster document (what samsa-monitor's brokers page shows)
        url = c.json("/brokers/ids/0")["admin_endpoint"]

        def admin_racks():
            with urllib.request.urlopen(url + "/v1/cluster", timeout=10) as r:
                d = json.loads(r.read())
            got = {b["id"]: b.get("rack") for b in d["brokers"]}
            return got if len(got) == 6 else None
        eq(wait_for(admin_racks, 30, "six brokers in the admin API's cluster document"),
           {j: rack_of(j) for j in range(6)}, "racks in the admin API")
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap(0), request_timeout_ms=30000)
        try:
            admin.create_topics([NewTopic("racked", 6, 3)], timeout_ms=30000)
            wait_for(lambda: c.exists("/brokers/topics/racked"), 30, "racked's assignment")
            admin.create_partitions({"racked": NewPartitions(9)}, timeout_ms=30000)
        finally:
            admin.close()
        parts = wait_for(lambda: (lambda d: d if len(d) == 9 else None)(
            c.json("/brokers/topics/racked")["partitions"]), 30, "9 partitions assigned")
        for p, replicas in sorted(parts.items(), key=lambda kv: int(kv[0])):
            eq(len(replicas), 3, "racked-%s's replicas" % p)
            eq(sorted(rack_of(r) for r in replicas), ["rack0", "rack1", "rack2"],
               "racked-%s's racks (replicas %r)" % (p, replicas))
        leaders = sorted(r[0] for r in parts.values())
        check(len(set(leaders)) == 6, "the first replicas spread over the six: %r", leaders)
    finally:
        c.close()


def case_broker_configs_change_without_a_restart(t):
    """AlterConfigs of broker 0's log.retention.ms (confluent-kafka), seen by
    DescribeConfigs (kafka-python), and applied: the segments of dyn-0
    older than a second are deleted, its log start moving past 0."""
    imports()
    try:
        import confluent_kafka
        from confluent_kafka.admin import AdminClient, ConfigResource
    except ImportError as e:
        from broker import Skip
        raise Skip("needs confluent-kafka (%s)" % e)
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import ConfigResource as KConfigResource, ConfigResourceType, KafkaAdminClient

    c = Cluster(t, config={"log.retention.check.interval.ms": "500"})
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("dyn", [[0]], config={"segment.bytes": "1024"})
        wait_for(lambda: leader(c, "dyn", 0) == 0, 60, "dyn-0 led by broker 0")
        prod = KafkaProducer(bootstrap_servers=c.bootstrap(0), acks=1, linger_ms=0)
        for i in range(60):
            prod.send("dyn", b"x" * 100, partition=0).get(timeout=30)
        prod.close()
        tp = TopicPartition("dyn", 0)
        cons = KafkaConsumer(bootstrap_servers=c.bootstrap(0))
        try:
            eq(cons.beginning_offsets([tp])[tp], 0, "dyn-0's log start before")
            cadmin = AdminClient({"bootstrap.servers": c.bootstrap(1)})
            fut = cadmin.alter_configs([ConfigResource(ConfigResource.Type.BROKER, "0",
                                                       set_config={"log.retention.ms": "1000"})])
            for f in fut.values():
                f.result(timeout=30)
            eq(c.json("/config/brokers/0")["config"], {"log.retention.ms": "1000"},
               "/config/brokers/0")
            # kafka-python's DescribeConfigs v1, with synonyms
            kadmin = KafkaAdminClient(bootstrap_servers=c.bootstrap(0))
            try:
                def described():
                    r = kadmin.describe_configs([KConfigResource(ConfigResourceType.BROKER, "0")],
                                                include_synonyms=True)[0]
                    entries = {e[0]: e for e in r.resources[0][4]}
                    e = entries["log.retention.ms"]
                    return e if e[1] == "1000" else None
                e = wait_for(described, 30, "log.retention.ms described as 1000")
                eq(e[3], 2, "its source (DYNAMIC_BROKER_CONFIG)")
                eq(e[2], False, "read-only")
                eq([(s[0], s[1], s[2]) for s in e[5]][:1], [("log.retention.ms", "1000", 2)],
                   "its first synonym")
            finally:
                kadmin.close()
            # applied without a restart: the old segments go
            altered = time.monotonic()
            start = wait_for(lambda: cons.beginning_offsets([tp])[tp] or None, 30,
                             "dyn-0's log start moved by log.retention.ms")
            print("dyn-0's log start at %d %.2f s after AlterConfigs (check every 500 ms)" %
                  (start, time.monotonic() - altered), flush=True)
            check(start > 0, "log start %r", start)
            check(c.brokers[0].alive(), "broker 0 restarted")

            # the cluster's default (resource name ""), by kafka-python's
            # AlterConfigs, seen on broker 1 by confluent-kafka
            kadmin = KafkaAdminClient(bootstrap_servers=c.bootstrap(1))
            try:
                r = kadmin.alter_configs([KConfigResource(ConfigResourceType.BROKER, "",
                                                          configs={"log.segment.bytes": "2097152"})])
                eq([x[0] for x in r.resources], [0], "AlterConfigs' error codes")
            finally:
                kadmin.close()
            eq(c.json("/config/brokers/<default>")["config"], {"log.segment.bytes": "2097152"},
               "/config/brokers/<default>")

            def seen_on_1(key, value):
                res = ConfigResource(ConfigResource.Type.BROKER, "1")
                got = cadmin.describe_configs([res])[res].result(timeout=30)
                e = got.get(key)
                return e if e is not None and e.value == value else None
            e = wait_for(lambda: seen_on_1("log.segment.bytes", "2097152"), 30,
                         "broker 1's log.segment.bytes from the default")
            eq(e.source, confluent_kafka.admin.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value,
               "its source")
            # broker 1's own, through the samsa tool, over the default
            out = tool("configs", "alter", "-b", c.bootstrap(1), "--broker", "1",
                       "--add-config", "log.segment.bytes=4194304")
            check("broker 1" in out, "the tool's report: %r", out)
            e = wait_for(lambda: seen_on_1("log.segment.bytes", "4194304"), 30,
                         "broker 1's own log.segment.bytes")
            eq(e.source, confluent_kafka.admin.ConfigSource.DYNAMIC_BROKER_CONFIG.value,
               "its source")
            # a key Kafka 2.0 does not make dynamic is refused
            bad = subprocess.run([TOOL, "configs", "alter", "-b", c.bootstrap(1), "--broker", "1",
                                  "--add-config", "num.partitions=3"],
                                 capture_output=True, text=True, timeout=60)
            check(bad.returncode == 1 and "dynamically" in bad.stderr,
                  "num.partitions altered: %d %s", bad.returncode, bad.stderr)
        finally:
            cons.close()
    finally:
        c.close()


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print("usage: %s SAMSA_BROKER SAMSA_TOOL [-k NAME]" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_elect_preferred_by_the_tool_and_by_zkcli,
                   case_controller_killed_with_an_election_pending,
                   case_six_brokers_over_three_racks,
                   case_broker_configs_change_without_a_restart]))
