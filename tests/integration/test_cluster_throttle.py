"""Replication throttles on a cluster (broker/README.md, "Replication
throttles"; Kafka 2.0's ReplicationQuotaManager): a follower that comes
back behind its leader catches up at the rate set, while a consumer of the
leader is not slowed, and at full speed once the throttle is removed; a
partition moved by `samsa reassign execute --throttle` moves at the rate
set, and `verify` removes the throttle once it is done.

Two brokers and a real ZooKeeper. The topic's throttled-replica lists go
in through AlterConfigs from confluent-kafka; the rates through
AlterConfigs of BROKER resources for the running leader, and for the
stopped follower as kafka-configs.sh --zookeeper writes them
(/config/brokers/1 and a change notification), read when it starts.

    /usr/bin/python3 tests/integration/test_cluster_throttle.py build/broker/samsa-broker \
        [build/client/samsa]
"""

import json
import os
import re
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import Skip, check, eq, free_port, main  # noqa: E402
from test_cluster import CHROOT, Cluster, imports, wait_for  # noqa: E402

try:
    import confluent_kafka
    from confluent_kafka.admin import AdminClient, ConfigResource
except ImportError:
    confluent_kafka = None

TOPIC = "thr"
RATE = 2 * 1024 * 1024  # bytes/s, leader and follower
TOTAL = 24 * 1024 * 1024  # produced while the follower is down
THROTTLE_KEYS = ("leader.replication.throttled.replicas",
                 "follower.replication.throttled.replicas")


def notify(c, entity_path):
    """A change notification as Kafka 2.0's AdminZkClient writes it."""
    c.kz.create(CHROOT + "/config/changes/config_change_",
                json.dumps({"version": 2, "entity_path": entity_path}).encode(),
                sequence=True, makepath=True)


def log_bytes(b):
    """The bytes of the topic's partition 0 in broker b's log segments."""
    d = os.path.join(b.log_dir, TOPIC + "-0")
    if not os.path.isdir(d):
        return 0
    return sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d) if n.endswith(".log"))


def metric(port, name, labels):
    """The value of one sample of the broker's /metrics (admin API)."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        text = r.read().decode()
    m = re.search(r"^%s\{%s\} (\S+)$" % (re.escape(name), re.escape(labels)), text, re.M)
    return None if m is None else float(m.group(1))


def alter(admin, resource):
    for res, fut in admin.alter_configs([resource]).items():
        fut.result(timeout=30)


def produce(bootstrap, total):
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "1",
                                  "linger.ms": 20, "batch.size": 262144,
                                  "compression.type": "none"})
    value = os.urandom(10000)
    errors = []

    def report(err, msg):
        if err is not None:
            errors.append(err)
    sent = 0
    while sent < total:
        try:
            p.produce(TOPIC, value, callback=report)
            sent += len(value)
        except BufferError:
            p.poll(0.05)
        p.poll(0)
    check(p.flush(60) == 0, "records not delivered in 60 s")
    check(not errors, "delivery errors: %s", errors[:3])


def consume_rate(bootstrap, total):
    """Reads the topic from the start on the leader: bytes/s."""
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "thr-reader",
                                  "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False})
    try:
        c.assign([confluent_kafka.TopicPartition(TOPIC, 0, 0)])
        got = 0
        start = time.monotonic()
        deadline = start + 60
        while got < total and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None or m.error() is not None:
                continue
            got += len(m.value())
        check(got >= total, "the consumer read %d of %d bytes in 60 s", got, total)
        return got / max(time.monotonic() - start, 1e-3)
    finally:
        c.close()


def growth_under_throttle(c, leader_bytes, what):
    """Samples broker 1's log of the topic every 0.1 s until it holds 60 %
    of the leader's bytes, a consumer of the leader reading the whole topic
    meanwhile; checks the growth from a quarter to 60 % of the way (past
    the first windows' burst) is RATE within 20 % and the consumer read at
    more than three times it. Returns (b1, the bytes at the end)."""
    samples = []  # (time, bytes of broker 1's log)
    reader = None
    start = time.monotonic()
    while time.monotonic() - start < 60:
        n = log_bytes(c.brokers[1])
        samples.append((time.monotonic(), n))
        if n >= 0.6 * leader_bytes:
            break
        if reader is None and len(samples) == 8:
            reader = consume_rate(c.bootstrap(0), TOTAL)
        time.sleep(0.1)
    if reader is None:
        reader = consume_rate(c.bootstrap(0), TOTAL)
    check(samples[-1][1] >= 0.6 * leader_bytes, "broker 1 at %d of %d bytes after 60 s",
          samples[-1][1], leader_bytes)
    t0, b0 = next(s for s in samples if s[1] >= 0.25 * leader_bytes)
    t1, b1 = samples[-1]
    # one sample from a quarter past 60 %: faster than the sampling
    rate = (b1 - b0) / (t1 - t0) if t1 > t0 else float("inf")
    print("%s %.0f B/s from %d to %d bytes in %.1f s (throttle %d B/s); "
          "a consumer of the leader meanwhile %.0f B/s" % (what, rate, b0, b1, t1 - t0, RATE,
                                                           reader), flush=True)
    check(0.8 * RATE <= rate <= 1.2 * RATE, "%s at %.0f B/s under a throttle of %d", what,
          rate, RATE)
    check(reader > 3 * RATE, "the consumer of the leader read at %.0f B/s", reader)
    return b1


def case_follower_catches_up_at_the_throttle_rate(t):
    """24 MiB produced with acks=1 while broker 1 is down; the throttle
    (both lists "*", both rates 2 MiB/s) set; broker 1 started: its log
    grows at 2 MiB/s within 20 % (measured from a quarter to 60 % of the
    way, past the first windows' burst), while a consumer of the leader
    reads the whole topic far faster; the lists removed, the rest comes at
    more than three times the rate and broker 1 joins the ISR."""
    imports()
    if confluent_kafka is None:
        raise Skip("needs confluent-kafka")
    admin_ports = [free_port(), free_port()]

    def make_broker(i, cfg):
        cfg = dict(cfg, **{"admin.listeners": "http://127.0.0.1:%d" % admin_ports[i]})
        return t.broker(name="broker%d" % i, start=False, config=cfg)
    c = Cluster(t, n=2, make_broker=make_broker, config={
        # finer steps than its 1 MiB default: a fetch's share of the rate
        "replica.fetch.max.bytes": "262144",
        "log.segment.bytes": str(8 * 1024 * 1024),
    })
    try:
        c.create_topic(TOPIC, [[0, 1]])
        wait_for(lambda: (c.state(TOPIC, 0) or {}).get("isr") == [0, 1], 30, "thr in sync")
        c.brokers[1].stop()
        wait_for(lambda: (c.state(TOPIC, 0) or {}).get("isr") == [0], 30, "broker 1 out of the ISR")
        # confluent-kafka sends AlterConfigs of a topic to the controller it
        # last saw in Metadata
        wait_for(lambda: c.controller() == 0, 30, "broker 0 the controller")
        produce(c.bootstrap(0), TOTAL)
        leader_bytes = log_bytes(c.brokers[0])
        check(leader_bytes >= TOTAL, "the leader holds %d bytes", leader_bytes)
        admin = AdminClient({"bootstrap.servers": c.bootstrap(0)})
        alter(admin, ConfigResource("topic", TOPIC, set_config={k: "*" for k in THROTTLE_KEYS}))
        rates = {"leader.replication.throttled.rate": str(RATE),
                 "follower.replication.throttled.rate": str(RATE)}
        alter(admin, ConfigResource("broker", "0", set_config=rates))
        c.kz.create(CHROOT + "/config/brokers/1",
                    json.dumps({"version": 1, "config": rates}).encode(), makepath=True)
        notify(c, "brokers/1")
        # the topic's lists as DescribeConfigs gives them
        res = ConfigResource("topic", TOPIC)
        described = admin.describe_configs([res])[res].result(timeout=30)
        for k in THROTTLE_KEYS:
            check(described[k].value == "*", "%s described as %r", k, described[k].value)

        c.brokers[1].start()
        b1 = growth_under_throttle(c, leader_bytes, "follower catch-up")
        # the quotas in the Prometheus output of each side
        for i, role, typ in ((0, "leader", "LeaderReplication"),
                             (1, "follower", "FollowerReplication")):
            bound = metric(admin_ports[i], "samsa_replication_throttled_rate", 'role="%s"' % role)
            check(bound == RATE, "broker %d: %s throttled rate %s", i, role, bound)
            sent = metric(admin_ports[i], "samsa_replication_throttled_bytes_total",
                          'role="%s"' % role)
            check(sent is not None and sent >= b1 / 2, "broker %d: %s bytes %s", i,
                  role, sent)
            byte_rate = metric(admin_ports[i], "kafka_server_replication_byte_rate",
                               'type="%s"' % typ)
            check(byte_rate is not None and byte_rate > 0, "broker %d: %s byte-rate %s", i, typ,
                  byte_rate)

        # the lists removed (AlterConfigs replaces the topic's configs): the
        # rest at full speed
        alter(admin, ConfigResource("topic", TOPIC, set_config={}))
        t2, b2 = time.monotonic(), log_bytes(c.brokers[1])
        wait_for(lambda: log_bytes(c.brokers[1]) >= leader_bytes, 60, "broker 1 caught up")
        t3 = time.monotonic()
        free = (leader_bytes - b2) / max(t3 - t2, 1e-3)
        print("after the throttle was removed: %.0f B/s (%d bytes in %.1f s)" %
              (free, leader_bytes - b2, t3 - t2))
        check(free > 3 * RATE, "still at %.0f B/s once the throttle was removed", free)
        wait_for(lambda: (c.state(TOPIC, 0) or {}).get("isr") == [0, 1], 30,
                 "broker 1 back in the ISR")
    finally:
        c.close()


def reassign(*args):
    import subprocess
    return subprocess.run([TOOL, "reassign", *args], capture_output=True, text=True, timeout=60)


def case_reassignment_moves_at_the_throttle_rate(t):
    """A partition of 24 MiB on broker 0 moved to broker 1 with `samsa
    reassign execute --throttle 2097152` (the throttle's lists and rates
    written as kafka-reassign-partitions.sh writes them): broker 1's new
    replica grows at 2 MiB/s within 20 % (a quarter to 60 % of the way),
    a consumer of the leader reads the topic meanwhile at more than three
    times that, and `verify` says the move completed and removes the
    throttle."""
    imports()
    if confluent_kafka is None:
        raise Skip("needs confluent-kafka")
    if TOOL is None:
        raise Skip("needs the samsa tool")
    c = Cluster(t, n=2, config={"replica.fetch.max.bytes": "262144",
                                "log.segment.bytes": str(8 * 1024 * 1024)})
    try:
        c.create_topic(TOPIC, [[0]])
        wait_for(lambda: (c.state(TOPIC, 0) or {}).get("leader") == 0, 30, "thr led by 0")
        produce(c.bootstrap(0), TOTAL)
        leader_bytes = log_bytes(c.brokers[0])
        plan = t.path("plan.json")
        with open(plan, "w") as f:
            json.dump({"version": 1, "partitions": [
                {"topic": TOPIC, "partition": 0, "replicas": [1], "log_dirs": ["any"]}]}, f)
        zk = c.zk.connect + CHROOT
        out = reassign("execute", "--zookeeper", zk, "--reassignment-json-file", plan,
                       "--throttle", str(RATE))
        check(out.returncode == 0, "execute: %s%s", out.stdout, out.stderr)
        growth_under_throttle(c, leader_bytes, "the new replica grew at")
        deadline = time.monotonic() + 60
        while True:
            out = reassign("verify", "--zookeeper", zk, "--reassignment-json-file", plan)
            if out.returncode != 3 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        check(out.returncode == 0, "verify exited %d: %s%s", out.returncode, out.stdout,
              out.stderr)
        check("Throttle was removed." in out.stdout, "verify: %s", out.stdout)
        eq(c.json("/brokers/topics/" + TOPIC)["partitions"], {"0": [1]}, "the assignment")
        wait_for(lambda: not os.path.isdir(os.path.join(c.brokers[0].log_dir, TOPIC + "-0")), 30,
                 "broker 0's replica deleted")
        topic_cfg = c.json("/config/topics/" + TOPIC)["config"]
        check(not any(k in topic_cfg for k in THROTTLE_KEYS), "throttle left: %r", topic_cfg)
    finally:
        c.close()


TOOL = None

if __name__ == "__main__":
    if len(sys.argv) > 2 and not sys.argv[2].startswith("-"):
        TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_follower_catches_up_at_the_throttle_rate,
                   case_reassignment_moves_at_the_throttle_rate]))
