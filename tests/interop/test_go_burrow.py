#!/usr/bin/python3
"""Burrow 1.2.1 (Debian's `burrow`, LinkedIn's consumer lag monitor, Go)
against a standalone samsa-broker. Burrow reads the topics' end offsets with
its Kafka client and every committed offset and group membership from
`__consumer_offsets`; it keeps its own coordination state in ZooKeeper, which
its configuration requires, so each case starts a private Debian ZooKeeper
(tests/integration/zookeeper.py) besides the broker, then Burrow with a
configuration in the case's folder and its HTTP API on a free port.

    test_go_burrow.py SAMSA_BROKER [-k CASE]

Setup of every case: topic `watched` with three partitions holding 100
kafka-python messages each; a kafka-python consumer (client id
`burrow-probe`) that joins group `watched-group`, holds all three
partitions and commits offsets 60, 70 and 80.

- burrow_topic_offsets: /v3/kafka/samsa/topic/watched gives the end offsets
  [100, 100, 100], and the topic list has `watched`.
- burrow_committed_offsets_and_lag: the group is in the consumer list;
  /v3/kafka/samsa/consumer/watched-group/lag gives, per partition, the
  committed end offset 60/70/80, current lag 40/30/20 and total lag 90.
- burrow_owner_and_client_id: while the member is in the group, Burrow's
  consumer detail shows each partition owned by it (owner = the member's
  host, client_id = burrow-probe), which it decodes from the group metadata
  records in `__consumer_offsets`.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from broker import check, eq, free_port, main  # noqa: E402
from goclients import CONFIG, create_topic, produce_records  # noqa: E402
from zookeeper import ZooKeeper  # noqa: E402

TOPIC = "watched"
GROUP = "watched-group"
CLIENT_ID = "burrow-probe"
PARTS = 3
COMMITS = {0: 60, 1: 70, 2: 80}
DEADLINE = 20.0

BURROW_TOML = """[general]
pidfile="{dir}/burrow.pid"

[logging]
filename="{dir}/burrow.log"
level="debug"

[zookeeper]
servers=["{zk}"]
timeout=6
root-path="/burrow"

[client-profile.samsa]
client-id="burrow"
kafka-version="2.0.0"

[cluster.samsa]
class-name="kafka"
servers=["{broker}"]
client-profile="samsa"
topic-refresh=1
offset-refresh=1

[consumer.samsa]
class-name="kafka"
cluster="samsa"
servers=["{broker}"]
client-profile="samsa"
offsets-topic="__consumer_offsets"
start-latest=false

[httpserver.default]
address="127.0.0.1:{http}"

[storage.default]
class-name="inmemory"
workers=2
intervals=10
min-distance=0
"""


class Burrow:
    def __init__(self, workdir, zk, broker):
        self.dir = os.path.join(workdir, "burrow")
        os.makedirs(self.dir, exist_ok=True)
        self.port = free_port()
        with open(os.path.join(self.dir, "burrow.toml"), "w") as f:
            f.write(BURROW_TOML.format(dir=self.dir, zk=zk.connect, broker=broker.bootstrap,
                                       http=self.port))
        exe = shutil.which("Burrow")
        check(exe is not None, "Burrow is not installed (Debian package burrow): ci/install-deps")
        self.out_path = os.path.join(self.dir, "burrow.out")
        with open(self.out_path, "wb") as out:
            self.proc = subprocess.Popen([exe, "-config-dir", self.dir],
                                         stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, cwd=self.dir)

    def get(self, path):
        """The JSON answer to GET path, or None while Burrow is not serving
        it yet (connection refused, 404)."""
        if self.proc.poll() is not None:
            raise AssertionError("Burrow exited with status %d; see %s and %s"
                                 % (self.proc.returncode, self.out_path,
                                    os.path.join(self.dir, "burrow.log")))
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path),
                                        timeout=5) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise
        except (ConnectionError, urllib.error.URLError):
            return None

    def wait(self, path, cond, what):
        """Polls path until cond(answer) holds; fails with the last answer."""
        deadline = time.monotonic() + DEADLINE
        last = None
        while time.monotonic() < deadline:
            last = self.get(path)
            if last is not None and cond(last):
                return last
            time.sleep(0.3)
        raise AssertionError("%s: not seen within %.0f s; last answer to %s: %s%s" % (
            what, DEADLINE, path, json.dumps(last)[:1500], self.log_hint()))

    def log_hint(self):
        try:
            with open(os.path.join(self.dir, "burrow.log"), "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        picked = [ln for ln in lines if '"level":"warn"' in ln or '"level":"error"' in ln]
        if not picked:
            return ""
        return "\n  Burrow's warnings and errors (last 8):\n    " + "\n    ".join(
            ln[:400] for ln in picked[-8:])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait()


class Setup:
    """ZooKeeper, the broker, the data, the committing member, Burrow."""

    def __init__(self, t):
        from kafka import KafkaConsumer, TopicPartition
        from kafka.structs import OffsetAndMetadata
        self.zk = ZooKeeper(t.dir).start()
        self.member = None
        self.burrow = None
        try:
            self.b = t.broker(config=CONFIG)
            create_topic(self.b, TOPIC, PARTS)
            produce_records(self.b, TOPIC, 100 * PARTS, PARTS)
            self.member = KafkaConsumer(TOPIC, bootstrap_servers=self.b.bootstrap,
                                        group_id=GROUP, client_id=CLIENT_ID,
                                        enable_auto_commit=False,
                                        auto_offset_reset="earliest",
                                        heartbeat_interval_ms=500)
            deadline = time.monotonic() + DEADLINE
            while len(self.member.assignment()) < PARTS and time.monotonic() < deadline:
                self.member.poll(timeout_ms=200, max_records=1)
            eq(len(self.member.assignment()), PARTS, "partitions assigned to the member")
            self.member.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, "")
                                for p, o in COMMITS.items()})
            self.burrow = Burrow(t.dir, self.zk, self.b)
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.burrow is not None:
            self.burrow.stop()
        if self.member is not None:
            self.member.close(autocommit=False)
        self.zk.stop()


def with_setup(fn):
    def case(t):
        s = Setup(t)
        try:
            fn(s)
        finally:
            s.close()
    case.__name__ = fn.__name__
    return case


@with_setup
def case_burrow_topic_offsets(s):
    s.burrow.wait("/v3/kafka", lambda r: "samsa" in r.get("clusters", []), "cluster samsa")
    s.burrow.wait("/v3/kafka/samsa/topic", lambda r: TOPIC in r.get("topics", []),
                  "topic %s in Burrow's topic list" % TOPIC)
    r = s.burrow.wait("/v3/kafka/samsa/topic/" + TOPIC,
                      lambda r: r.get("offsets") == [100] * PARTS,
                      "end offsets of %s" % TOPIC)
    eq(r["offsets"], [100] * PARTS, "end offsets")


@with_setup
def case_burrow_committed_offsets_and_lag(s):
    s.burrow.wait("/v3/kafka/samsa/consumer", lambda r: GROUP in r.get("consumers", []),
                  "group %s in Burrow's consumer list" % GROUP)

    def settled(r):
        parts = (r.get("status") or {}).get("partitions") or []
        ends = {p.get("partition"): (p.get("end") or {}).get("offset") for p in parts}
        return ends == COMMITS and all(p.get("current_lag") == 100 - COMMITS[p["partition"]]
                                       for p in parts)
    r = s.burrow.wait("/v3/kafka/samsa/consumer/%s/lag" % GROUP, settled,
                      "committed offsets 60/70/80 and lags 40/30/20")
    st = r["status"]
    eq(sorted((p["topic"], p["partition"], p["end"]["offset"], p["current_lag"])
              for p in st["partitions"]),
       [(TOPIC, p, o, 100 - o) for p, o in sorted(COMMITS.items())], "partitions")
    eq(st["totallag"], sum(100 - o for o in COMMITS.values()), "total lag")


@with_setup
def case_burrow_owner_and_client_id(s):
    s.burrow.wait("/v3/kafka/samsa/consumer", lambda r: GROUP in r.get("consumers", []),
                  "group %s in Burrow's consumer list" % GROUP)

    def owned(r):
        parts = (r.get("topics") or {}).get(TOPIC) or []
        return len(parts) == PARTS and all(p.get("client_id") == CLIENT_ID and p.get("owner")
                                           for p in parts)
    r = s.burrow.wait("/v3/kafka/samsa/consumer/" + GROUP, owned,
                      "owner and client_id %s on every partition" % CLIENT_ID)
    for p in r["topics"][TOPIC]:
        check("127.0.0.1" in p["owner"], "owner %r is not the member's host", p["owner"])


if __name__ == "__main__":
    sys.exit(main([case_burrow_topic_offsets, case_burrow_committed_offsets_and_lag,
                   case_burrow_owner_and_client_id]))
