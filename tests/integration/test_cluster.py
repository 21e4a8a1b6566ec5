"""A cluster: three samsa-brokers and a real ZooKeeper on 127.0.0.1.

- every broker registers /brokers/ids/<id> in Kafka 2.0's version 4 JSON,
  the first makes /cluster/id, one wins /controller with epoch 1, and each
  broker's Metadata lists the three brokers and that controller; the
  controller's APIs are advertised by a broker of a cluster;
- a topic written to ZooKeeper as kafka-topics.sh --zookeeper writes it
  (/config/topics/<t>, then /brokers/topics/<t>) gets a state znode per
  partition (leader the assigned replica, leader epoch 0, the ISR, the
  controller's epoch), each broker hosts only its partitions, and records
  produced through one broker's bootstrap reach each partition's leader
  and are read back;
- the controller killed (SIGKILL): another broker takes /controller with
  epoch 2, a partition whose only replica died has no leader
  (LEADER_NOT_AVAILABLE, its ISR kept: never emptied), and once the broker
  is back (it waits out its previous session's registration) the partition
  is led again with a higher epoch and keeps its records.

Runs on Debian's /usr/bin/python3 with kafka-python and kazoo (ZooKeeper's
Python client, to read and write znodes as Kafka's tools do). Every
process is stopped by its PID.
"""

import json
import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import Skip, check, eq, main  # noqa: E402
import zookeeper  # noqa: E402

CHROOT = "/samsa"
# ZooKeeper's smallest with tickTime 2000; SAMSA_TEST_SESSION_MS=6000 runs the
# cluster tests at Kafka's default zookeeper.session.timeout.ms
SESSION_MS = int(os.environ.get("SAMSA_TEST_SESSION_MS", "4000"))


def java_hash(s):
    """Java's String.hashCode over UTF-16 code units."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def java_partition(key, partitions):
    """The partition of an internal topic a key's records go to (Kafka's
    GroupMetadataManager.partitionFor / TransactionStateManager.partitionFor:
    Utils.abs(key.hashCode) % partitions)."""
    h = java_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError("%s: timed out after %.0f s" % (what, timeout))
        time.sleep(0.1)


def imports():
    try:
        from kazoo.client import KazooClient  # noqa: F401
        import kafka  # noqa: F401
    except ImportError as e:
        raise Skip("needs kazoo and kafka-python (%s)" % e)
    missing = zookeeper.missing_parts()
    if missing:
        raise Skip("ZooKeeper cannot run here: missing %s" % ", ".join(missing))


class Cluster:
    def __init__(self, t, n=3, config=None, zk=None, make_broker=None):
        """zk: a ZooKeeper not started yet (default: one on 127.0.0.1);
        make_broker(i, config): broker i, not started (default: t.broker on
        127.0.0.1)."""
        from kazoo.client import KazooClient
        self.t = t
        self.zk = zk if zk is not None else zookeeper.ZooKeeper(t.path("zk"))
        self.zk.start()
        self.kz = None
        self.brokers = []
        try:
            self.kz = KazooClient(hosts=self.zk.connect)
            self.kz.start(timeout=30)
            for i in range(n):
                cfg = {
                    "broker.id": str(i),
                    "zookeeper.connect": self.zk.connect + CHROOT,
                    "zookeeper.session.timeout.ms": str(SESSION_MS),
                    # the last broker standing cannot hand its leaderships
                    # over: its three attempts should not take 15 s
                    "controlled.shutdown.retry.backoff.ms": "300",
                    **(config or {}),
                }
                if make_broker is not None:
                    b = make_broker(i, cfg)
                else:
                    b = t.broker(name="broker%d" % i, start=False, config=cfg)
                self.brokers.append(b)
            for b in self.brokers:
                b.start()
            # a broker answers before its registration is in ZooKeeper: a
            # topic made before all are there would start with a smaller ISR
            wait_for(lambda: self.exists("/brokers/ids") and
                     len(self.children("/brokers/ids")) == n, 60, "%d brokers registered" % n)
        except BaseException:
            # a start that failed leaves nothing running: ZooKeeper too
            self.close()
            raise

    def close(self):
        """Stops the brokers still running cleanly (SIGTERM, exit status 0:
        under a sanitizer a leak or a report fails the case), then
        ZooKeeper."""
        try:
            for b in self.brokers:
                if b.alive():
                    b.stop()
        finally:
            for b in self.brokers:
                b.kill()
            try:
                if self.kz is not None:
                    self.kz.stop()
                    self.kz.close()
            finally:
                self.zk.stop()

    def get(self, path):
        data, stat = self.kz.get(CHROOT + path)
        return data, stat

    def children(self, path):
        return sorted(self.kz.get_children(CHROOT + path))

    def exists(self, path):
        return self.kz.exists(CHROOT + path) is not None

    def json(self, path):
        data, _ = self.get(path)
        return json.loads(data.decode())

    def json_or_none(self, path):
        """The znode's JSON, or None when it is not there (asked in one
        read: an ephemeral znode can go between an exists and a get)."""
        from kazoo.exceptions import NoNodeError
        try:
            return self.json(path)
        except NoNodeError:
            return None

    def controller(self):
        reg = self.json_or_none("/controller")
        return None if reg is None else reg["brokerid"]

    def bootstrap(self, i):
        return self.brokers[i].bootstrap

    def create_topic(self, name, assignment, config=None):  # noqa: D401
        """As kafka-topics.sh --zookeeper: the config first, then the
        assignment."""
        self.kz.create(CHROOT + "/config/topics/" + name,
                       json.dumps({"version": 1, "config": config or {}}).encode())
        parts = {str(p): reps for p, reps in enumerate(assignment)}
        self.kz.create(CHROOT + "/brokers/topics/" + name,
                       json.dumps({"version": 1, "partitions": parts}).encode())

    def state(self, topic, p):
        return self.json_or_none("/brokers/topics/%s/partitions/%d/state" % (topic, p))


def send(bootstrap, request):
    """One request to one broker through kafka-python's wire classes; its
    response."""
    from kafka.client_async import KafkaClient
    c = KafkaClient(bootstrap_servers=bootstrap, api_version=(1, 0))
    try:
        node = c.least_loaded_node()
        deadline = time.monotonic() + 10
        while not c.ready(node):
            c.poll(timeout_ms=100)
            check(time.monotonic() < deadline, "no connection to %s", bootstrap)
        fut = c.send(node, request)
        while not fut.is_done:
            c.poll(timeout_ms=100)
        check(fut.succeeded(), "%s failed: %s", type(request).__name__, fut.exception)
        return fut.value
    finally:
        c.close()


def metadata(bootstrap, topics=None):
    """(brokers {id: (host, port)}, controller id, {topic: {p: (error, leader,
    replicas, isr)}}) from one broker, through kafka-python's wire classes."""
    from kafka.protocol.metadata import MetadataRequest
    # v4 with auto-creation off: looking must not create what it looks for
    r = send(bootstrap, MetadataRequest[4](topics, False))
    brokers = {b[0]: (b[1], b[2]) for b in r.brokers}
    topics_out = {}
    for err, name, _internal, parts in r.topics:
        topics_out[name] = {p[1]: (p[0], p[2], list(p[3]), list(p[4])) for p in parts}
        if err:
            topics_out[name] = err
    return brokers, r.controller_id, topics_out


def partitions_of(bootstrap, topic):
    """{partition: (error, leader, replicas, isr)} of topic in a broker's
    Metadata; {} while it does not know the topic."""
    got = metadata(bootstrap, [topic])[2].get(topic)
    return got if isinstance(got, dict) else {}


def led_everywhere(c, topic, n, brokers=(0, 1, 2)):
    """Every broker's Metadata has the n partitions of topic with a leader."""
    for i in brokers:
        parts = partitions_of(c.bootstrap(i), topic)
        if len(parts) != n or any(v[0] != 0 for v in parts.values()):
            return False
    return True


def case_brokers_register_and_elect_a_controller(t):
    imports()
    c = Cluster(t)
    try:
        wait_for(lambda: c.exists("/brokers/ids") and c.children("/brokers/ids") == ["0", "1", "2"],
                 60, "three registrations")
        for i, b in enumerate(c.brokers):
            reg = c.json("/brokers/ids/%d" % i)
            eq(reg["version"], 4, "registration version")
            eq(reg["host"], "127.0.0.1", "host")
            eq(reg["port"], b.port, "port")
            eq(reg["endpoints"], ["PLAINTEXT://127.0.0.1:%d" % b.port], "endpoints")
            eq(reg["listener_security_protocol_map"], {"PLAINTEXT": "PLAINTEXT"}, "protocol map")
            eq(reg["jmx_port"], -1, "jmx_port")
            check(isinstance(reg["timestamp"], str) and reg["timestamp"].isdigit(),
                  "timestamp %r is not a decimal string", reg["timestamp"])
            _, stat = c.get("/brokers/ids/%d" % i)
            check(stat.ephemeralOwner != 0, "/brokers/ids/%d is not ephemeral", i)
        ctl = wait_for(lambda: [c.controller()] if c.controller() is not None else None, 60,
                   "a controller")[0]
        check(ctl in (0, 1, 2), "controller %r", ctl)
        ctl_json = c.json("/controller")
        eq(ctl_json["version"], 1, "/controller version")
        check(isinstance(ctl_json["timestamp"], str), "/controller timestamp not a string")
        eq(c.get("/controller_epoch")[0], b"1", "/controller_epoch")
        cid = c.json("/cluster/id")
        eq(cid["version"], "1", "/cluster/id version (a string in Kafka)")
        check(len(cid["id"]) > 0, "empty cluster id")
        for path in ("/brokers/topics", "/config/topics", "/config/changes",
                     "/admin/delete_topics", "/isr_change_notification",
                     "/latest_producer_id_block", "/consumers"):
            check(c.exists(path), "%s was not made", path)
        # every broker serves the cluster's view once the controller told it
        for i in range(3):
            def seen(i=i):
                brokers, controller, _ = metadata(c.bootstrap(i))
                return sorted(brokers) == [0, 1, 2] and controller == ctl
            wait_for(seen, 60, "broker %d's Metadata lists the cluster" % i)
            brokers, _, _ = metadata(c.bootstrap(i))
            for j in range(3):
                eq(brokers[j], ("127.0.0.1", c.brokers[j].port), "broker %d's address" % j)
        # the controller's APIs are a cluster broker's
        from broker import api_versions_probe
        apis = api_versions_probe(c.brokers[0].port)
        for key in (4, 5, 6):
            check(key in apis, "api %d not advertised by a broker of a cluster", key)
        for b in c.brokers:
            b.stop()
        # a clean stop takes the registration with the session
        wait_for(lambda: c.children("/brokers/ids") == [], 30, "registrations gone")
    finally:
        c.close()


def produce(bootstrap, topic, records, acks=1, retries=5):
    """records: [(partition, value)]; returns {partition: [offsets]}."""
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=bootstrap, acks=acks, api_version=(1, 0), retries=retries,
                      max_block_ms=30000, request_timeout_ms=30000)
    try:
        futs = [(part, p.send(topic, value=v.encode(), partition=part)) for part, v in records]
        out = {}
        for part, f in futs:
            out.setdefault(part, []).append(f.get(timeout=30).offset)
        return out
    finally:
        p.close()


def consume(bootstrap, topic, partitions, want):
    from kafka import KafkaConsumer, TopicPartition
    cons = KafkaConsumer(bootstrap_servers=bootstrap, api_version=(1, 0),
                         enable_auto_commit=False, consumer_timeout_ms=1000)
    try:
        cons.assign([TopicPartition(topic, p) for p in partitions])
        cons.seek_to_beginning()
        got = []
        deadline = time.monotonic() + 60
        while len(got) < want and time.monotonic() < deadline:
            for m in cons:
                got.append((m.partition, m.offset, m.value.decode()))
        return sorted(got)
    finally:
        cons.close()


def case_topic_written_to_zookeeper_is_led_and_served(t):
    imports()
    c = Cluster(t)
    try:
        ctl = wait_for(lambda: [c.controller()] if c.controller() is not None else None, 60,
                   "a controller")[0]
        c.create_topic("spread", [[0], [1], [2]])
        for p in range(3):
            st = wait_for(lambda p=p: c.state("spread", p), 60, "state of spread-%d" % p)
            eq(st, {"version": 1, "leader": p, "leader_epoch": 0, "isr": [p],
                    "controller_epoch": 1}, "state of spread-%d" % p)
        wait_for(lambda: led_everywhere(c, "spread", 3), 60,
                 "every broker's Metadata has the three leaders")
        _, _, topics = metadata(c.bootstrap(0), ["spread"])
        for p in range(3):
            eq(topics["spread"][p], (0, p, [p], [p]), "spread-%d in Metadata" % p)
        # each broker holds its own partition's directory only
        for i, b in enumerate(c.brokers):
            dirs = sorted(d for d in os.listdir(b.log_dir) if d.startswith("spread-"))
            eq(dirs, ["spread-%d" % i], "partition directories of broker %d" % i)
        records = [(i % 3, "v-%d" % i) for i in range(30)]
        offsets = produce(c.bootstrap(ctl), "spread", records)
        for p in range(3):
            eq(offsets[p], list(range(10)), "offsets of spread-%d" % p)
        got = consume(c.bootstrap((ctl + 1) % 3), "spread", [0, 1, 2], 30)
        eq(sorted((p, v) for p, _, v in got), sorted(records), "records read back")
        # a produce to a broker that does not lead the partition is refused
        from kafka.errors import NotLeaderForPartitionError  # noqa: F401
        _, _, topics = metadata(c.bootstrap(0), ["spread"])
        eq(topics["spread"][1][1], 1, "leader of spread-1")
    finally:
        c.close()


def case_controller_killed_another_takes_over(t):
    imports()
    c = Cluster(t)
    try:
        ctl = wait_for(lambda: [c.controller()] if c.controller() is not None else None, 60,
                   "a controller")[0]
        c.create_topic("solo", [[ctl], [(ctl + 1) % 3]])
        wait_for(lambda: c.state("solo", 0) and c.state("solo", 1), 60, "states of solo")
        produce(c.bootstrap((ctl + 1) % 3), "solo", [(0, "a"), (0, "b"), (1, "c")])
        c.brokers[ctl].kill()
        new = wait_for(lambda: [c.controller()] if c.controller() not in (None, ctl) else None,
                       60, "another controller")[0]
        check(new != ctl, "the dead broker is still the controller")
        # /controller is made before /controller_epoch is moved: wait for it
        wait_for(lambda: c.get("/controller_epoch")[0] != b"1", 60, "/controller_epoch moved")
        eq(c.get("/controller_epoch")[0], b"2", "/controller_epoch after the failover")
        # the partition whose only replica died: no leader, the ISR kept
        st = wait_for(lambda: c.state("solo", 0)["leader"] == -1 and c.state("solo", 0), 60,
                      "solo-0 without a leader")
        eq(st["isr"], [ctl], "the ISR of solo-0 is never emptied")
        eq(st["leader_epoch"], 1, "solo-0's epoch after losing its leader")
        eq(st["controller_epoch"], 2, "controller epoch of solo-0's state")
        survivor = (ctl + 1) % 3

        def leaderless():
            brokers, controller, topics = metadata(c.bootstrap(survivor), ["solo"])
            part = topics.get("solo", {}).get(0)
            return sorted(brokers) == sorted({0, 1, 2} - {ctl}) and controller == new and \
                part is not None and part[0] == 5 and part[1] == -1
        wait_for(leaderless, 60, "LEADER_NOT_AVAILABLE for solo-0 in Metadata")
        # the broker comes back: it waits out its old session, registers,
        # and leads its partition again with its records
        c.brokers[ctl].start()
        st = wait_for(lambda: c.state("solo", 0)["leader"] == ctl and c.state("solo", 0), 90,
                      "solo-0 led again")
        eq(st["leader_epoch"], 2, "solo-0's epoch once led again")
        wait_for(lambda: partitions_of(c.bootstrap(ctl), "solo").get(0, (1,))[0] == 0, 60,
                 "solo-0 in the returning broker's Metadata")
        produce(c.bootstrap(ctl), "solo", [(0, "d")])
        got = consume(c.bootstrap(survivor), "solo", [0, 1], 4)
        eq([(p, o, v) for p, o, v in got], [(0, 0, "a"), (0, 1, "b"), (0, 2, "d"), (1, 0, "c")],
           "records across the failover")
    finally:
        c.close()


def segment_bytes(b, topic, p):
    path = os.path.join(b.log_dir, "%s-%d" % (topic, p), "%020d.log" % 0)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def case_replicated_topic_survives_its_leader(t):
    """RF 3, min.insync.replicas 2: followers copy the leader's batches
    byte for byte, acks=all is answered once the ISR has them, a follower
    paused leaves the ISR and rejoins once it caught up, two paused make
    acks=all fail with NOT_ENOUGH_REPLICAS, and the leader killed hands
    over to an ISR member with every acknowledged record."""
    imports()
    c = Cluster(t, config={"min.insync.replicas": "2", "replica.lag.time.max.ms": "3000"})
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("rep", [[0, 1, 2], [1, 2, 0]])
        for p in range(2):
            st = wait_for(lambda p=p: c.state("rep", p), 60, "state of rep-%d" % p)
            eq(sorted(st["isr"]), [0, 1, 2], "ISR of rep-%d" % p)
        wait_for(lambda: led_everywhere(c, "rep", 2), 60, "every broker's Metadata has rep's leaders")
        acked = [(i % 2, "r-%d" % i) for i in range(200)]
        offsets = produce(c.bootstrap(2), "rep", acked, acks="all")
        for p in range(2):
            eq(offsets[p], list(range(100)), "offsets of rep-%d" % p)
        # the followers' logs are the leader's, byte for byte
        for p, leader in ((0, 0), (1, 1)):
            want = segment_bytes(c.brokers[leader], "rep", p)
            check(want is not None and len(want) > 0, "rep-%d has no data on its leader", p)
            for i in range(3):
                wait_for(lambda i=i, p=p, want=want: segment_bytes(c.brokers[i], "rep", p) == want,
                         60, "broker %d's copy of rep-%d" % (i, p))
        # a follower paused leaves the ISR; resumed, it rejoins
        os.kill(c.brokers[2].pid, signal.SIGSTOP)
        try:
            wait_for(lambda: 2 not in c.state("rep", 0)["isr"], 60, "broker 2 out of rep-0's ISR")
            more = [(0, "while-paused-%d" % i) for i in range(10)]
            produce(c.bootstrap(0), "rep", more, acks="all")
            acked += more
        finally:
            os.kill(c.brokers[2].pid, signal.SIGCONT)
        wait_for(lambda: 2 in c.state("rep", 0)["isr"], 60, "broker 2 back in rep-0's ISR")
        # both followers paused: the ISR is the leader alone, below
        # min.insync.replicas, and acks=all is refused with nothing written
        from kafka.errors import NotEnoughReplicasError
        for i in (1, 2):
            os.kill(c.brokers[i].pid, signal.SIGSTOP)
        try:
            wait_for(lambda: c.state("rep", 0)["isr"] == [0], 60, "rep-0's ISR down to its leader")
            try:
                produce(c.bootstrap(0), "rep", [(0, "refused")], acks="all", retries=0)
                raise AssertionError("acks=all accepted with one replica in sync")
            except NotEnoughReplicasError:
                pass
        finally:
            for i in (1, 2):
                os.kill(c.brokers[i].pid, signal.SIGCONT)
        wait_for(lambda: sorted(c.state("rep", 0)["isr"]) == [0, 1, 2], 60,
                 "both followers back in rep-0's ISR")
        # the ISR change reaches every broker's Metadata through the controller
        wait_for(lambda: sorted(partitions_of(c.bootstrap(1), "rep").get(0, (0, 0, [], []))[3])
                 == [0, 1, 2], 60, "rep-0's ISR back to three in Metadata")
        # the leader of rep-0 killed: the next ISR member in assignment order leads
        c.brokers[0].kill()
        st = wait_for(lambda: c.state("rep", 0)["leader"] == 1 and c.state("rep", 0), 60,
                      "broker 1 leading rep-0")
        check(0 not in st["isr"], "the dead broker is still in the ISR: %r" % st)
        check(st["leader_epoch"] >= 1, "epoch not bumped: %r" % st)
        got = consume(c.bootstrap(1), "rep", [0, 1], len(acked))
        eq(sorted((p, v) for p, _, v in got), sorted(acked), "acknowledged records after the kill")
        after = [(0, "after-%d" % i) for i in range(10)]
        produce(c.bootstrap(1), "rep", after, acks="all")
        got = consume(c.bootstrap(2), "rep", [0], 120)
        eq([v for _, _, v in got][-10:], [v for _, v in after], "records after the failover")
    finally:
        c.close()


def case_topics_created_through_the_kafka_api(t):
    """CreateTopics to any broker writes ZooKeeper as Kafka does (config,
    then an assignment spread over the live brokers); the controller makes
    the partitions, and the answer waits until they have leaders; configs
    reach the replicas; a topic produced to without being created is made
    with the broker's defaults."""
    imports()
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import InvalidReplicationFactorError, TopicAlreadyExistsError
    c = Cluster(t, config={"num.partitions": "2", "default.replication.factor": "2"})
    try:
        wait_for(lambda: all(sorted(metadata(c.bootstrap(i))[0]) == [0, 1, 2] for i in range(3)),
                 60, "every broker knows the three")
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap(1), api_version=(1, 0))
        try:
            admin.create_topics([NewTopic("made", 6, 3, topic_configs={
                "min.insync.replicas": "2", "retention.ms": "3600000"})])
            # answered once the controller (which kafka-python asks) has a
            # leader for every partition in its metadata, as Kafka's
            # DelayedCreatePartitions: a producer can start at once
            ctl = c.controller()
            led = {p: v[1] for p, v in partitions_of(c.bootstrap(ctl), "made").items()
                   if v[0] == 0}
            eq((sorted(led), all(x >= 0 for x in led.values())), (list(range(6)), True),
               "made's partitions led in the controller's Metadata as CreateTopics returns")
            try:
                admin.create_topics([NewTopic("huge", 1, 4)])
                raise AssertionError("replication factor 4 on three brokers was accepted")
            except InvalidReplicationFactorError:
                pass
            wait_for(lambda: led_everywhere(c, "made", 6, brokers=(0,)), 60,
                     "made's six partitions led")
            try:
                admin.create_topics([NewTopic("made", 6, 3)])
                raise AssertionError("a second creation of made was accepted")
            except TopicAlreadyExistsError:
                pass
            # in ZooKeeper but in no broker's metadata (its only replica, broker
            # 7, does not exist: the controller makes no partition): the
            # broker's write finds it there and says so
            c.create_topic("ghost", [[7]])
            try:
                admin.create_topics([NewTopic("ghost", 1, 1)])
                raise AssertionError("creating a topic ZooKeeper holds was accepted")
            except TopicAlreadyExistsError:
                pass
        finally:
            admin.close()
        eq(c.json("/config/topics/made"), {"version": 1, "config": {
            "min.insync.replicas": "2", "retention.ms": "3600000"}}, "made's config in ZooKeeper")
        parts = c.json("/brokers/topics/made")["partitions"]
        eq(sorted(parts), [str(p) for p in range(6)], "made's partitions in ZooKeeper")
        leaders = {}
        for p, reps in parts.items():
            eq(sorted(reps), [0, 1, 2], "replicas of made-%s" % p)
            leaders[reps[0]] = leaders.get(reps[0], 0) + 1
        eq(sorted(leaders.values()), [2, 2, 2], "preferred leaders spread over the brokers")
        produce(c.bootstrap(2), "made", [(p, "m-%d" % p) for p in range(6)], acks="all")
        # produced to without being created: made with the defaults
        produce(c.bootstrap(0), "auto", [(0, "a0"), (1, "a1")])
        eq(len(c.json("/brokers/topics/auto")["partitions"]), 2, "auto's partitions")
        got = consume(c.bootstrap(1), "auto", [0, 1], 2)
        eq(sorted(v for _, _, v in got), ["a0", "a1"], "auto's records")
    finally:
        c.close()


def case_follower_truncates_what_its_new_leader_never_had(t):
    """KIP-101/279: records only the old leader had (its follower paused,
    out of the ISR) are cut from it once it comes back as a follower of a
    leader elected without them (unclean.leader.election.enable), at the
    point where its epoch ends on the new leader: the replicas end up byte
    for byte the same, not diverging at the same offsets."""
    imports()
    c = Cluster(t, config={"replica.lag.time.max.ms": "2000"})
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("div", [[0, 1]], config={"unclean.leader.election.enable": "true"})
        wait_for(lambda: c.state("div", 0) and sorted(c.state("div", 0)["isr"]) == [0, 1], 60,
                 "div-0 in sync on both")
        produce(c.bootstrap(0), "div", [(0, "a0"), (0, "a1")], acks="all")
        wait_for(lambda: segment_bytes(c.brokers[1], "div", 0) ==
                 segment_bytes(c.brokers[0], "div", 0), 60, "broker 1's copy of a0, a1")
        os.kill(c.brokers[1].pid, signal.SIGSTOP)
        try:
            wait_for(lambda: c.state("div", 0)["isr"] == [0], 60, "broker 1 out of the ISR")
            produce(c.bootstrap(0), "div", [(0, "x%d" % i) for i in range(5)], acks=1)
            c.brokers[0].kill()
        finally:
            os.kill(c.brokers[1].pid, signal.SIGCONT)
        st = wait_for(lambda: c.state("div", 0)["leader"] == 1 and c.state("div", 0), 60,
                      "broker 1 elected (unclean)")
        eq(st["isr"], [1], "the ISR after an unclean election")
        wait_for(lambda: partitions_of(c.bootstrap(1), "div").get(0, (1,))[0] == 0, 60,
                 "div-0 led by broker 1 in Metadata")
        produce(c.bootstrap(1), "div", [(0, "y%d" % i) for i in range(3)], acks=1)
        c.brokers[0].start()
        wait_for(lambda: segment_bytes(c.brokers[0], "div", 0) ==
                 segment_bytes(c.brokers[1], "div", 0), 60,
                 "broker 0's log the same as its new leader's")
        check("truncated from 7 to 2" in c.brokers[0].log_text(),
              "broker 0 did not truncate at the end of epoch 0: %s",
              [ln for ln in c.brokers[0].log_text().splitlines() if "div-0" in ln][-5:])
        got = consume(c.bootstrap(1), "div", [0], 5)
        eq([v for _, _, v in got], ["a0", "a1", "y0", "y1", "y2"], "div-0's records")
    finally:
        c.close()


def fetch_at(bootstrap, topic, partition, offset):
    """A consumer's Fetch v4 of one partition at offset (100 ms wait):
    (error code, high watermark, bytes of records)."""
    from kafka.protocol.fetch import FetchRequest
    r = send(bootstrap, FetchRequest[4](-1, 100, 1, 1 << 20, 0,
                                        [(topic, [(partition, offset, 1 << 20)])]))
    _part, err, hw, _lso, _aborted, records = r.topics[0][1][0]
    return err, hw, len(records or b"")


def case_consumer_between_the_hw_and_the_log_end_waits(t):
    """A consumer's offset between the high watermark and the log end (it
    read to the old leader's HW; the new leader's HW has not caught up yet)
    is not out of range: Kafka 2.0's Log.read refuses only offsets outside
    [log start, log end]. The fetch gets nothing until the HW passes the
    offset; one past the log end is OFFSET_OUT_OF_RANGE."""
    imports()
    c = Cluster(t, config={"replica.lag.time.max.ms": "60000"})
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("hw", [[0, 1]])
        wait_for(lambda: c.state("hw", 0) and sorted(c.state("hw", 0)["isr"]) == [0, 1], 60,
                 "hw-0 in sync on both")
        wait_for(lambda: partitions_of(c.bootstrap(0), "hw").get(0, (1,))[0] == 0, 60,
                 "hw-0 led by broker 0 in Metadata")
        produce(c.bootstrap(0), "hw", [(0, "a0")], acks="all")
        os.kill(c.brokers[1].pid, signal.SIGSTOP)
        try:
            # broker 1 stays in the ISR (60 s lag allowed): the HW stays at 1
            produce(c.bootstrap(0), "hw", [(0, "b%d" % i) for i in range(3)], acks=1)
            eq(fetch_at(c.bootstrap(0), "hw", 0, 0)[:2], (0, 1), "error and HW at offset 0")
            for offset in (2, 4):
                eq(fetch_at(c.bootstrap(0), "hw", 0, offset), (0, 1, 0),
                   "error, HW and bytes of a fetch at %d (HW 1, log end 4)" % offset)
            eq(fetch_at(c.bootstrap(0), "hw", 0, 5)[0], 1,
               "a fetch past the log end: OFFSET_OUT_OF_RANGE (1)")
        finally:
            os.kill(c.brokers[1].pid, signal.SIGCONT)
        got = wait_for(lambda: (lambda r: r if r[1] == 4 and r[2] > 0 else None)(
            fetch_at(c.bootstrap(0), "hw", 0, 2)), 60, "the HW at 4 and records from 2")
        eq(got[0], 0, "error of the fetch at 2 once the HW passed it")
    finally:
        c.close()


def case_leader_paused_past_its_session_leads_again(t):
    """A leader stopped (SIGSTOP: a long pause) for longer than its
    ZooKeeper session: on waking it learns the session expired and fences
    what it led (its log says so), registers again, and leads its partition
    again once the controller (or the partition's state znode) says so: the
    partition takes records again and keeps the old ones."""
    imports()
    c = Cluster(t)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        lone = 1 if c.controller() != 1 else 2
        c.create_topic("paused", [[lone]])
        wait_for(lambda: led_everywhere(c, "paused", 1), 60, "paused-0 led")
        produce(c.bootstrap(lone), "paused", [(0, "before")], acks="all")
        os.kill(c.brokers[lone].pid, signal.SIGSTOP)
        try:
            wait_for(lambda: not c.exists("/brokers/ids/%d" % lone), 60,
                     "broker %d's session expired while it is stopped" % lone)
        finally:
            os.kill(c.brokers[lone].pid, signal.SIGCONT)
        wait_for(lambda: "partition(s) led here fenced" in c.brokers[lone].log_text(), 60,
                 "broker %d fencing what it led on waking" % lone)
        wait_for(lambda: c.exists("/brokers/ids/%d" % lone), 60,
                 "broker %d registered again" % lone)

        def produced():
            try:
                return produce(c.bootstrap(lone), "paused", [(0, "after")], acks="all", retries=0)
            except Exception:  # noqa: BLE001 - retried until the deadline
                return None
        wait_for(produced, 60, "paused-0 taking records again")
        for ln in c.brokers[lone].log_text().splitlines():
            if "fenced" in ln or "leading again" in ln or "paused-0: leader" in ln:
                print("    broker %d: %s" % (lone, ln.split("] ", 1)[-1]), flush=True)
        got = consume(c.bootstrap(lone), "paused", [0], 2)
        eq([v for _, _, v in got][:1], ["before"], "paused-0's first record")
        check(any(v == "after" for _, _, v in got), "paused-0 has the record after: %s", got)
    finally:
        c.close()


def zkcli_get(c, path):
    """What ZooKeeper's own CLI prints for a znode's data (Kafka's tools'
    view of the cluster)."""
    import subprocess
    out = subprocess.run(["/usr/share/zookeeper/bin/zkCli.sh", "-server", c.zk.connect,
                          "get", CHROOT + path],
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, "zkCli.sh get %s: exit %d: %s", path, out.returncode,
          out.stderr[-500:])
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise AssertionError("zkCli.sh get %s printed no JSON: %s" % (path, out.stdout[-500:]))


def case_librdkafka_clients_and_zookeepers_cli_see_the_cluster(t):
    """confluent-kafka (librdkafka) produces with idempotence and acks=all
    through one broker and consumes through another, following each
    partition's leader; ZooKeeper's own CLI reads the znodes as Kafka's
    tools would."""
    imports()
    try:
        import confluent_kafka
    except ImportError as e:
        raise Skip("needs confluent-kafka (%s)" % e)
    c = Cluster(t, config={"min.insync.replicas": "2"})
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("lib", [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
        wait_for(lambda: led_everywhere(c, "lib", 3), 60, "lib's leaders known everywhere")
        errors = []
        delivered = []

        def report(err, msg):
            (errors if err is not None else delivered).append(
                err if err is not None else (msg.partition(), msg.offset()))
        prod = confluent_kafka.Producer({"bootstrap.servers": c.bootstrap(0), "acks": "all",
                                         "enable.idempotence": True, "linger.ms": 5})
        for i in range(300):
            prod.produce("lib", key=b"k%d" % i, value=b"v%d" % i, on_delivery=report)
            prod.poll(0)
        eq(prod.flush(60), 0, "messages left unflushed")
        eq(errors, [], "delivery errors")
        eq(len(delivered), 300, "delivery reports")
        cons = confluent_kafka.Consumer({"bootstrap.servers": c.bootstrap(2),
                                         "group.id": "unused", "enable.auto.commit": False})
        try:
            cons.assign([confluent_kafka.TopicPartition("lib", p, confluent_kafka.OFFSET_BEGINNING)
                         for p in range(3)])
            got = set()
            deadline = time.monotonic() + 60
            while len(got) < 300 and time.monotonic() < deadline:
                m = cons.poll(1.0)
                if m is not None and m.error() is None:
                    got.add(m.value())
        finally:
            cons.close()
        eq(got, {b"v%d" % i for i in range(300)}, "records read back")
        state = zkcli_get(c, "/brokers/topics/lib/partitions/1/state")
        eq({k: state[k] for k in ("version", "leader", "leader_epoch")},
           {"version": 1, "leader": 1, "leader_epoch": 0}, "state seen by zkCli")
        eq(sorted(state["isr"]), [0, 1, 2], "ISR seen by zkCli")
        eq(zkcli_get(c, "/brokers/ids/2")["endpoints"],
           ["PLAINTEXT://127.0.0.1:%d" % c.brokers[2].port], "registration seen by zkCli")
        eq(zkcli_get(c, "/brokers/topics/lib")["partitions"]["2"], [2, 0, 1],
           "assignment seen by zkCli")
    finally:
        c.close()


def case_preferred_leaders_come_back_after_a_restart(t):
    """auto.leader.rebalance.enable: a broker killed loses its leaderships
    to the other in-sync replicas; once it is back in sync, the controller's
    periodic check (leader.imbalance.check.interval.seconds) gives it back
    the partitions it is the preferred (first assigned) replica of."""
    imports()
    c = Cluster(t, config={"leader.imbalance.check.interval.seconds": "1"})
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("pref", [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
        wait_for(lambda: all((c.state("pref", p) or {}).get("leader") == p for p in range(3)),
                 60, "each partition led by its preferred replica")
        c.brokers[0].kill()
        wait_for(lambda: c.state("pref", 0)["leader"] == 1, 60, "broker 1 leading pref-0")
        c.brokers[0].start()
        wait_for(lambda: 0 in c.state("pref", 0)["isr"], 60, "broker 0 back in pref-0's ISR")
        st = wait_for(lambda: c.state("pref", 0)["leader"] == 0 and c.state("pref", 0), 60,
                      "broker 0 leading pref-0 again")
        check(st["leader_epoch"] >= 2, "the epoch did not move: %r" % st)
        wait_for(lambda: led_everywhere(c, "pref", 3) and
                 partitions_of(c.bootstrap(2), "pref")[0][1] == 0, 60,
                 "every broker's Metadata naming broker 0 for pref-0")
    finally:
        c.close()


def leader_and_isr_v1(controller, epoch, states, live_leaders):
    """A LeaderAndIsr v1 body as the controller writes it: states are
    (topic, partition, leader, leader_epoch, isr, replicas), live_leaders
    (id, host, port)."""
    import kwire
    out = []
    for topic, partition, leader, leader_epoch, isr, replicas in states:
        out.append(kwire.string(topic) + kwire.i32(partition) + kwire.i32(epoch) +
                   kwire.i32(leader) + kwire.i32(leader_epoch) + kwire.array(isr, kwire.i32) +
                   kwire.i32(0) + kwire.array(replicas, kwire.i32) + kwire.i8(1))
    return (kwire.i32(controller) + kwire.i32(epoch) + kwire.array(out) +
            kwire.array([kwire.i32(i) + kwire.string(h) + kwire.i32(p)
                         for i, h, p in live_leaders]))


def read_frame(sock):
    """One response frame's bytes after its size."""
    import struct
    n = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
    return sock.recv(n, socket.MSG_WAITALL)


def case_follower_fetches_from_the_leader_the_request_names(t):
    """A LeaderAndIsr names each leader's endpoint (live_leaders); a follower
    fetches from there even when its metadata cache has no such broker
    (Kafka 2.0's ReplicaManager.makeFollowers takes the leader from the
    request). Here the leader is a socket of the test's, broker id 7, that
    no UpdateMetadata ever named: broker 1, made a follower of ghost-0 by a
    LeaderAndIsr sent in the controller's name, connects to it and asks it
    for the partition."""
    import struct
    import kwire
    imports()
    c = Cluster(t)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        controller = c.controller()
        epoch = int(c.get("/controller_epoch")[0].decode())
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        body = leader_and_isr_v1(controller, epoch, [("ghost", 0, 7, 1, [7, 1], [7, 1])],
                                 [(7, "127.0.0.1", port)])
        host, bport = c.bootstrap(1).rsplit(":", 1)
        with socket.create_connection((host, int(bport)), timeout=30) as s:
            s.sendall(kwire.request(4, 1, 77, body, client_id="controller-%d" % controller))
            resp = read_frame(s)
        # correlation id, error code, [topic, partition, error code]
        corr, err, count = struct.unpack(">ihi", resp[:10])
        eq((corr, err, count), (77, 0, 1), "the LeaderAndIsr's answer")
        eq(struct.unpack(">h", resp[-2:])[0], 0, "ghost-0's error code")
        listener.settimeout(30)
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(30)
            req = read_frame(conn)
        api_key = struct.unpack(">h", req[:2])[0]
        # OffsetsForLeaderEpoch (23) first, to truncate, or a Fetch (1)
        check(api_key in (1, 23), "broker 1 asked the named leader with API %d", api_key)
        check(b"ghost" in req, "the request names ghost")
    finally:
        listener.close()
        c.close()


def case_replica_logs_are_opened_while_the_broker_serves(t):
    """A LeaderAndIsr naming many new replicas (a topic of 1,000 partitions
    is one LeaderAndIsr per broker): their logs are made on a worker while
    the reactor serves everyone else; the request is answered once they
    are, every replica hosted and in its state. An ApiVersions sent just
    after the LeaderAndIsr, on another connection, is answered first (with
    the logs made on the reactor it waited for all of them: 8.5 s here for
    1,000); a StopReplica of the controller's sent meanwhile waits its turn
    and is answered after the LeaderAndIsr, as the controller sent them."""
    import selectors
    import struct
    import kwire
    imports()
    c = Cluster(t)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        controller = c.controller()
        epoch = int(c.get("/controller_epoch")[0].decode())
        host, bport = c.bootstrap(1).rsplit(":", 1)
        n = 400
        body = leader_and_isr_v1(controller, epoch,
                                 [("many", p, 1, 0, [1], [1]) for p in range(n)],
                                 [(1, host, int(bport))])
        stop = (kwire.i32(controller) + kwire.i32(epoch) + kwire.i8(0) +
                kwire.array([kwire.string("many") + kwire.i32(0)]))
        conns = {name: socket.create_connection((host, int(bport)), timeout=120)
                 for name in ("LeaderAndIsr", "StopReplica", "ApiVersions")}
        try:
            client = "controller-%d" % controller
            conns["LeaderAndIsr"].sendall(kwire.request(4, 1, 5, body, client_id=client))
            conns["StopReplica"].sendall(kwire.request(5, 0, 7, stop, client_id=client))
            conns["ApiVersions"].sendall(kwire.api_versions_v0(6))
            sel = selectors.DefaultSelector()
            for name, s in conns.items():
                sel.register(s, selectors.EVENT_READ, name)
            order, answers = [], {}
            deadline = time.monotonic() + 120
            while len(order) < 3 and time.monotonic() < deadline:
                for key, _ in sel.select(timeout=1):
                    order.append(key.data)
                    answers[key.data] = read_frame(key.fileobj)
                    sel.unregister(key.fileobj)
            eq(order, ["ApiVersions", "LeaderAndIsr", "StopReplica"], "the order of the answers")
            resp = answers["LeaderAndIsr"]
            corr, err, count = struct.unpack(">ihi", resp[:10])
            eq((corr, err, count), (5, 0, n), "the LeaderAndIsr's answer")
            at, codes = 10, []
            for _ in range(count):
                tlen = struct.unpack(">h", resp[at:at + 2])[0]
                at += 2 + tlen + 4
                codes.append(struct.unpack(">h", resp[at:at + 2])[0])
                at += 2
            eq(sorted(set(codes)), [0], "every partition's error code")
            eq(struct.unpack(">ih", answers["StopReplica"][:6]), (7, 0), "the StopReplica's answer")
        finally:
            for s in conns.values():
                s.close()
        d = c.brokers[1].log_dir
        made = [p for p in range(n) if os.path.isdir(os.path.join(d, "many-%d" % p))]
        eq(len(made), n, "replica directories made")
        text = c.brokers[1].log_text()
        check("%d replica log(s) opened off the reactor" % n in text,
              "the logs were opened on the worker")
        # each replica took its state: broker 1 leads it in epoch 0
        led = [p for p in range(n) if "many-%d: leader in epoch 0," % p in text]
        eq(len(led), n, "partitions broker 1 leads")
    finally:
        c.close()


def case_restarted_broker_neither_creates_nor_denies_a_topic_it_was_not_told_of(t):
    """A broker started again (kill -9) serves before the controller's first
    UpdateMetadata reaches it: it waits out its previous session's
    registration first. Metadata with auto-creation allowed, asked of it
    meanwhile for an existing RF 3 topic, must not answer with its failed
    auto-creation (INVALID_REPLICATION_FACTOR, "larger than available
    brokers: 0"), which librdkafka takes as the topic's permanent error and
    fails the messages queued for it: a retriable LEADER_NOT_AVAILABLE, then
    the topic."""
    imports()
    from kafka.protocol.metadata import MetadataRequest
    c = Cluster(t)
    try:
        wait_for(lambda: c.controller() is not None, 60, "a controller")
        c.create_topic("known", [[0, 1, 2]])
        wait_for(lambda: led_everywhere(c, "known", 1), 60, "known-0 led")
        assignment = c.get("/brokers/topics/known")[0]
        victim = next(i for i in range(3) if i != c.controller())
        c.brokers[victim].kill()
        c.brokers[victim].start()
        seen = []
        deadline = time.monotonic() + 60
        while True:
            r = send(c.bootstrap(victim), MetadataRequest[4](["known"], True))
            err = [tp[0] for tp in r.topics if tp[1] == "known"][0]
            seen.append(err)
            if err == 0:
                break
            check(time.monotonic() < deadline, "broker %d never served known: %r", victim,
                  sorted(set(seen)))
            time.sleep(0.05)
        print("broker %d's answers while it came back: %r" % (victim, sorted(set(seen))))
        check(38 not in seen, "broker %d answered INVALID_REPLICATION_FACTOR for an existing "
              "topic (answers %r)", victim, sorted(set(seen)))
        check(5 in seen, "never asked before broker %d's first UpdateMetadata: the case "
              "proves nothing (answers %r)", victim, sorted(set(seen)))
        eq(sorted(set(seen)), [0, 5], "Metadata errors for known")
        eq(c.get("/brokers/topics/known")[0], assignment, "known's assignment")
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_brokers_register_and_elect_a_controller,
                   case_topic_written_to_zookeeper_is_led_and_served,
                   case_controller_killed_another_takes_over,
                   case_replicated_topic_survives_its_leader,
                   case_topics_created_through_the_kafka_api,
                   case_follower_truncates_what_its_new_leader_never_had,
                   case_consumer_between_the_hw_and_the_log_end_waits,
                   case_leader_paused_past_its_session_leads_again,
                   case_librdkafka_clients_and_zookeepers_cli_see_the_cluster,
                   case_preferred_leaders_come_back_after_a_restart,
                   case_follower_fetches_from_the_leader_the_request_names,
                   case_replica_logs_are_opened_while_the_broker_serves,
                   case_restarted_broker_neither_creates_nor_denies_a_topic_it_was_not_told_of]))
