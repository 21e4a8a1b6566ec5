"""A network partition: the leader cut off while it still believes it leads.

ZooKeeper and three samsa-brokers each run in a network namespace of their
own (made by the test, joined by a bridge, each with its own address), the
test and its producers on the bridge's side. A topic of one partition with
replication factor 3 and min.insync.replicas=2; an idempotent acks=all
producer (librdkafka) runs throughout on the bridge's side, and a second
acks=all producer runs inside the leader's namespace, so that it reaches
the leader alone once the leader's link is cut.

The leader's link is cut: it can no longer reach ZooKeeper or its
followers. Its ZooKeeper session expires, the controller makes an in-sync
follower the leader, and the outside producer goes on through it. The
isolated leader acknowledges nothing (its followers fetch nothing, so its
high watermark stays and acks=all cannot be answered), and once ZooKeeper
and its followers have been silent for the session's timeout it fences
itself (no longer acts as the leader: its log says so). The link comes
back: the old leader's session is gone, it registers again, becomes a
follower and truncates what only it had.

Invariants: every message acknowledged by either producer is read back
exactly once; no message is in the log twice; the replicas' logs end up
byte for byte the same. Needs root (network namespaces and veth pairs);
skipped otherwise. Every process is stopped by its PID.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import broker as brokermod  # noqa: E402
from broker import Skip, check, main  # noqa: E402
import zookeeper  # noqa: E402
from test_cluster import Cluster, imports, led_everywhere, wait_for  # noqa: E402
import test_faults as faults  # noqa: E402

TOPIC = "split"
DEADLINE = 90
BROKER_PORT = 9092
ZK_PORT = 2181


def ip(*args, check_rc=True):
    r = subprocess.run(["ip"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if check_rc and r.returncode != 0:
        raise AssertionError("ip %s: %s" % (" ".join(args), r.stderr.strip()))
    return r


class Network:
    """A bridge on the test's side and one namespace per node, each with a
    veth pair into the bridge and an address of its own."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.net = "10.%d.%d" % (200 + tag % 50, tag % 250)
        self.bridge = "sbr%d" % tag
        self.nodes = {}  # name -> (namespace, host-side veth, address)
        self.tag = tag

    def up(self, names):
        if shutil.which("ip") is None:
            raise Skip("needs iproute2's ip (ci/install-deps installs it)")
        r = ip("link", "add", self.bridge, "type", "bridge", check_rc=False)
        if r.returncode != 0:
            raise Skip("cannot make a bridge (needs root): %s" % r.stderr.strip())
        ip("addr", "add", self.net + ".1/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for i, name in enumerate(names):
            ns = "samsa%d-%s" % (self.tag, name)
            veth = "sv%d%s" % (self.tag, name)
            addr = "%s.%d" % (self.net, 10 + i)
            ip("netns", "add", ns)
            self.nodes[name] = (ns, veth, addr)
            ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            ip("link", "set", veth, "master", self.bridge)
            ip("link", "set", veth, "up")
            ip("-n", ns, "addr", "add", addr + "/24", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("-n", ns, "link", "set", "lo", "up")

    def cut(self, name):
        ip("link", "set", self.nodes[name][1], "down")

    def heal(self, name):
        ip("link", "set", self.nodes[name][1], "up")

    def down(self):
        for ns, _veth, _addr in self.nodes.values():
            ip("netns", "del", ns, check_rc=False)
        ip("link", "del", self.bridge, check_rc=False)


INSIDE_PRODUCER = textwrap.dedent('''
    import json, sys, time, confluent_kafka
    bootstrap, topic, stop_file = sys.argv[1], sys.argv[2], sys.argv[3]
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all",
                                  "enable.idempotence": True, "linger.ms": 2,
                                  "message.timeout.ms": 20000})
    def report(err, msg):
        if err is None:
            print(json.dumps([msg.partition(), msg.offset(), msg.value().decode()]), flush=True)
    n = 0
    import os
    while not os.path.exists(stop_file):
        try:
            p.produce(topic, key=b"inside", value=b"inside:%d" % n, on_delivery=report)
            n += 1
        except BufferError:
            pass
        p.poll(0.01)
    p.flush(30)
''')


def case_isolated_leader_acknowledges_nothing_and_truncates(t):
    imports()
    ck = faults.confluent()
    if os.geteuid() != 0:
        raise Skip("network namespaces need root")
    net = Network()
    try:
        net.up(["zk", "b0", "b1", "b2"])
        zk = zookeeper.ZooKeeper(t.path("zk"), host=net.nodes["zk"][2], netns=net.nodes["zk"][0],
                                 port=ZK_PORT)

        def make_broker(i, cfg):
            name = "b%d" % i
            b = brokermod.Broker(t.exe, t.dir, name="broker%d" % i, config=cfg,
                                 host=net.nodes[name][2], netns=net.nodes[name][0])
            b.port = BROKER_PORT
            t.brokers.append(b)
            return b
        c = Cluster(t, config={"min.insync.replicas": "2", "replica.lag.time.max.ms": "3000",
                               "log.level": os.environ.get("SAMSA_TEST_LOG_LEVEL", "info")},
                    zk=zk, make_broker=make_broker)
        try:
            run_partition(t, ck, c, net)
        finally:
            c.close()
    finally:
        net.down()


def run_partition(t, ck, c, net):
    wait_for(lambda: c.controller() is not None, DEADLINE, "a controller")
    c.create_topic(TOPIC, [[0, 1, 2]])
    wait_for(lambda: led_everywhere(c, TOPIC, 1), DEADLINE, "the topic's leader")
    wait_for(lambda: len((c.state(TOPIC, 0) or {}).get("isr", [])) == 3, DEADLINE,
             "every replica in sync")
    faults.TOPIC = TOPIC  # the shared producer and checker of the fault suite
    faults.PARTITIONS = 1
    # a leader cut off answers nothing, not even a reset: the client gives
    # up on its connection after socket.timeout.ms and on a request after
    # request.timeout.ms (librdkafka's defaults, 60 s and 30 s, would be
    # most of the unavailability measured here)
    outside = faults.Producer(ck, ",".join(c.bootstrap(i) for i in range(3)),
                              {"request.timeout.ms": 5000, "socket.timeout.ms": 6000})
    t0 = time.monotonic()
    outside.start()
    inside = None
    stop_file = t.path("stop-inside")
    try:
        faults.progress(outside, 200)
        old = c.state(TOPIC, 0)["leader"]
        ns = net.nodes["b%d" % old][0]
        inside = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c",
                                   INSIDE_PRODUCER, c.bootstrap(old), TOPIC, stop_file],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        faults.progress(outside, 100)
        net.cut("b%d" % old)
        t_cut = time.monotonic()
        # the controller gives the partition to an in-sync follower once the
        # isolated leader's ZooKeeper session expired
        wait_for(lambda: (c.state(TOPIC, 0) or {}).get("leader", old) not in (old, -1), DEADLINE,
                 "a new leader while broker %d is cut off" % old)
        t_elected = time.monotonic()
        faults.progress(outside, 200)
        # cut off from ZooKeeper and from its followers for the session's
        # timeout, the old leader stops acting as one (a client that reaches
        # it is told NOT_LEADER_OR_FOLLOWER and given no leader in Metadata)
        wait_for(lambda: "partition(s) led here fenced" in c.brokers[old].log_text(), DEADLINE,
                 "broker %d fencing its leaderships while cut off" % old)
        net.heal("b%d" % old)
        wait_for(lambda: sorted((c.state(TOPIC, 0) or {}).get("isr", [])) == [0, 1, 2],
                 DEADLINE, "broker %d back in the ISR after the link returned" % old)
        faults.progress(outside, 100)
    except BaseException:
        outside.stop_flag.set()
        raise
    finally:
        if inside is not None:
            with open(stop_file, "w"):
                pass
            try:
                out, _ = inside.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                inside.kill()
                out, _ = inside.communicate()
    with outside.lock:
        resumed = next((x for _, x in outside.ack_times if x > t_elected), None)
    print("    cut to new leader in ZooKeeper: %.2f s; cut to the first acknowledgement after "
          "it: %.2f s" % (t_elected - t_cut, (resumed or t_elected) - t_cut), flush=True)
    inside_acked = [tuple(json.loads(line)) for line in out.splitlines() if line.startswith("[")]
    outside.acked.extend(inside_acked)
    print("    the producer inside the leader's namespace: %d acknowledged" % len(inside_acked),
          flush=True)
    check(len(inside_acked) > 0, "the inside producer had nothing acknowledged before the cut")
    faults.check_outcome("network partition of the leader", ck, c, outside, t0)


if __name__ == "__main__":
    sys.exit(main([case_isolated_leader_acknowledges_nothing_and_truncates]))
