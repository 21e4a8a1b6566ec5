"""ZooKeeper replies lost or late: the leader's ISR writes keep the promise.

Three samsa-brokers and a real ZooKeeper on 127.0.0.1, each broker talking
to ZooKeeper through a fault injector of its own (zkproxy.py), so one
broker's replies can be lost after ZooKeeper applied its request, or held
back, while the others' go through. RF 3, min.insync.replicas=2; the
partition's leader L is not the controller, follower F1 is, follower F2 is
the one paused (SIGSTOP) and resumed.

- an ISR expansion whose reply is lost (ZooKeeper took F2 back into the
  ISR, L was never told): records acknowledged afterwards while F2 is
  paused are all read back after L and F1 die and F2 could be elected from
  ZooKeeper's ISR (Kafka 2.0 retries such a write after reconnecting and
  reads the znode back, ReplicationUtils.checkLeaderAndIsrZkData);
- the same with the expansion's reply held back longer than
  replica.lag.time.max.ms: the HW counts the joining replica while its
  write is in flight (the maximal ISR of KIP-497);
- an ISR shrink whose reply is lost (ZooKeeper dropped F2, L was never
  told): acks=all goes on being acknowledged, and F2 rejoins once resumed;
- a paused follower stays out of the ISR: another follower's fetches do
  not take it back (Kafka's maybeExpandIsr looks at the replica that
  fetched only), and the state znode stops changing.

The reply of each other conditional write a broker or its controller makes
is lost once too, with what a user sees checked: the controller's election
write after a leader's death (one leader every broker names, acks=all
served, nothing acknowledged lost), its create of a new topic's partition
state, CreateTopics through the Kafka API (created once, the client told
NONE, then TOPIC_ALREADY_EXISTS), /controller and /controller_epoch at a
failover (one controller acting, its epoch higher), a broker's ephemeral
registration (taken as its own), AlterConfigs (written once, announced,
applied by every broker) and the claim of a block of producer ids (ids
only from blocks ZooKeeper records as the broker's, none handed out twice).

Every process is stopped by its PID; waits are conditions with deadlines.
"""

import contextlib
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import check, eq, main  # noqa: E402
from test_cluster import CHROOT, Cluster, consume, imports, produce, wait_for  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402
import zookeeper  # noqa: E402
from zkproxy import ZkProxy  # noqa: E402

LAG_MS = 3000
DEADLINE = 90
# F2's session outlives its pauses: were it to expire, the controller would
# take F2 out of the ISR itself and hide what the leader got wrong
SAFETY_CONFIG = {"min.insync.replicas": "2", "replica.lag.time.max.ms": str(LAG_MS),
                 "zookeeper.session.timeout.ms": "15000"}


class ProxiedCluster(Cluster):
    """A Cluster whose brokers reach ZooKeeper each through a ZkProxy of
    its own (self.proxies[i])."""

    def __init__(self, t, config=None):
        self.proxies = []
        zk = zookeeper.ZooKeeper(t.path("zk"))

        def make_broker(i, cfg):
            proxy = ZkProxy(zk.port)
            self.proxies.append(proxy)
            cfg = dict(cfg, **{"zookeeper.connect": proxy.connect + CHROOT})
            return t.broker(name="broker%d" % i, start=False, config=cfg)

        try:
            super().__init__(t, config=config, zk=zk, make_broker=make_broker)
        except BaseException:
            self._close_proxies()
            raise

    def _close_proxies(self):
        for p in self.proxies:
            p.close()

    def close(self):
        try:
            super().close()
        finally:
            self._close_proxies()


def state_path(topic, p):
    return "/brokers/topics/%s/partitions/%d/state" % (topic, p)


def isr_of(req):
    return json.loads(req.data.decode())["isr"]


def roles(c):
    """(leader, f1, f2): the controller is f1; leader and f2 are the others."""
    ctl = wait_for(lambda: [c.controller()] if c.controller() is not None else None, 60,
                   "a controller")[0]
    others = [i for i in range(3) if i != ctl]
    return others[0], ctl, others[1]


def start_topic(c, topic, leader, f1, f2):
    c.create_topic(topic, [[leader, f1, f2]])
    wait_for(lambda: (c.state(topic, 0) or {}).get("isr") and
             sorted(c.state(topic, 0)["isr"]) == [0, 1, 2] and
             c.state(topic, 0)["leader"] == leader, 60, "%s-0 led by %d, all in sync" %
             (topic, leader))
    # producers bootstrap from L and F1 only: F2 is paused in every case
    live = ",".join(c.bootstrap(i) for i in (leader, f1))
    produce(live, topic, [(0, "first")], acks="all")
    return live


def pause(c, i):
    os.kill(c.brokers[i].pid, signal.SIGSTOP)


def resume(c, i):
    os.kill(c.brokers[i].pid, signal.SIGCONT)


def high_watermark(bootstrap, topic, p):
    """The partition's high watermark in a ListOffsets answer: how many
    records a read from offset 0 gets (nothing deleted, no control batch)."""
    from kafka import KafkaConsumer, TopicPartition
    cons = KafkaConsumer(bootstrap_servers=bootstrap, api_version=(1, 0))
    try:
        tp = TopicPartition(topic, p)
        return cons.end_offsets([tp])[tp]
    finally:
        cons.close()


def nothing_acknowledged_lost(c, topic, leader, f1, f2, acked):
    """L and F1 die with F2 resumed: F2 leads only if ZooKeeper's ISR names
    it; L and F1 back, every acknowledged record of the partition is read."""
    c.brokers[leader].kill()
    c.brokers[f1].kill()
    resume(c, f2)
    # the controller moves to F2 and acts on ZooKeeper's ISR: F2 leads
    # only if it is in it
    wait_for(lambda: c.controller() == f2, DEADLINE, "broker %d the controller" % f2)
    st = wait_for(lambda: c.state(topic, 0)["leader"] in (f2, -1) and c.state(topic, 0),
                  DEADLINE, "the controller acting on the deaths of %d and %d" % (leader, f1))
    print("with brokers %d and %d dead: %r" % (leader, f1, st))
    c.brokers[leader].start()
    c.brokers[f1].start()
    wait_for(lambda: (c.state(topic, 0) or {}).get("leader", -1) >= 0 and
             len(c.state(topic, 0)["isr"]) >= 2, DEADLINE, "%s-0 led again" % topic)
    everyone = ",".join(c.bootstrap(i) for i in range(3))
    got = consume(everyone, topic, [0], high_watermark(everyone, topic, 0))
    values = [v for _, _, v in got]
    lost = [v for v in acked if v not in values]
    eq(lost, [], "acknowledged records lost (read %d, state %r)" % (len(values),
                                                                    c.state(topic, 0)))


@contextlib.contextmanager
def one_partition(t, topic, config=SAFETY_CONFIG):
    """A ProxiedCluster with topic's one partition led by L (not the
    controller), all in sync: yields (c, leader, f1, f2, live bootstraps);
    every broker still alive resumed and the cluster closed at the end."""
    imports()
    c = ProxiedCluster(t, config=config)
    try:
        leader, f1, f2 = roles(c)
        yield c, leader, f1, f2, start_topic(c, topic, leader, f1, f2)
    finally:
        for i in range(3):
            if c.brokers[i].alive():
                resume(c, i)
        c.close()


def pause_out_of_the_isr(c, topic, i):
    pause(c, i)
    wait_for(lambda: i not in c.state(topic, 0)["isr"], DEADLINE, "broker %d out of the ISR" % i)


def case_isr_expansion_whose_reply_is_lost(t):
    topic = "expansion"
    with one_partition(t, topic) as (c, leader, f1, f2, live):
        pause_out_of_the_isr(c, topic, f2)
        acked = ["first"] + ["before-%d" % i for i in range(10)]
        produce(live, topic, [(0, v) for v in acked[1:]], acks="all")
        rule = c.proxies[leader].lose_reply(op="setData", path=state_path(topic, 0),
                                            match=lambda req: f2 in isr_of(req))
        resume(c, f2)
        check(rule.fired.wait(DEADLINE), "broker %d never wrote the ISR expansion", leader)
        pause(c, f2)
        eq(sorted(c.state(topic, 0)["isr"]), [0, 1, 2], "ZooKeeper's ISR after the lost reply")
        later = ["after-%d" % i for i in range(20)]
        produce(live, topic, [(0, v) for v in later], acks="all")
        nothing_acknowledged_lost(c, topic, leader, f1, f2, acked + later)


def case_isr_expansion_whose_reply_is_late(t):
    topic = "late"
    with one_partition(t, topic) as (c, leader, f1, f2, live):
        pause_out_of_the_isr(c, topic, f2)
        # the reply held twice the lag: records produced meanwhile must
        # wait for F2 (in ZooKeeper's ISR) or for its removal
        rule = c.proxies[leader].delay_replies(2 * LAG_MS / 1000.0, op="setData",
                                               path=state_path(topic, 0),
                                               match=lambda req: f2 in isr_of(req))
        resume(c, f2)
        wait_for(lambda: rule.taken, DEADLINE, "broker %d writing the ISR expansion" % leader)
        pause(c, f2)
        later = ["during-%d" % i for i in range(20)]
        produce(live, topic, [(0, v) for v in later], acks="all")
        print("acknowledged %s the held reply reached broker %d" %
              ("after" if rule.fired.is_set() else "before", leader))
        nothing_acknowledged_lost(c, topic, leader, f1, f2, ["first"] + later)


def case_isr_shrink_whose_reply_is_lost(t):
    topic = "shrink"
    with one_partition(t, topic) as (c, leader, f1, f2, live):
        rule = c.proxies[leader].lose_reply(op="setData", path=state_path(topic, 0),
                                            match=lambda req: f2 not in isr_of(req))
        pause(c, f2)
        check(rule.fired.wait(DEADLINE), "broker %d never wrote the ISR shrink", leader)
        eq(sorted(c.state(topic, 0)["isr"]), sorted([leader, f1]),
           "ZooKeeper's ISR after the lost reply")
        # acks=all with F2 paused: the leader must know F2 left
        t0 = time.monotonic()
        produce(live, topic, [(0, "after-%d" % i) for i in range(10)], acks="all", retries=0)
        print("acks=all answered %.1f s after the lost reply" % (time.monotonic() - t0))
        resume(c, f2)
        wait_for(lambda: f2 in c.state(topic, 0)["isr"], DEADLINE,
                 "broker %d back in the ISR" % f2)


def case_isr_write_answered_after_the_controllers_decision(t):
    """The controller decides the partition (a follower's controlled
    shutdown: a LeaderAndIsr with a newer epoch) while the leader's ISR
    write is still with ZooKeeper: the write's late answer is of no use and
    must not touch the new leadership; the leader keeps serving."""
    topic = "decided"
    with one_partition(t, topic) as (c, leader, f1, f2, live):
        pause_out_of_the_isr(c, topic, f2)
        rule = c.proxies[leader].delay_replies(2.0, op="setData", path=state_path(topic, 0),
                                               match=lambda req: f2 in isr_of(req))
        resume(c, f2)
        wait_for(lambda: rule.taken, DEADLINE, "broker %d writing the ISR expansion" % leader)
        c.brokers[f2].stop()  # controlled shutdown: the controller takes it out
        check(rule.fired.wait(DEADLINE), "the held reply never reached broker %d", leader)
        produce(live, topic, [(0, "after-%d" % i) for i in range(10)], acks="all")
        check(c.brokers[leader].alive(), "broker %d died after the late answer", leader)
        st = c.state(topic, 0)
        eq((st["leader"], sorted(st["isr"])), (leader, sorted([leader, f1])),
           "the state after the controlled shutdown")


def case_a_paused_follower_stays_out_of_the_isr(t):
    topic = "flap"
    with one_partition(t, topic, {"replica.lag.time.max.ms": str(LAG_MS)}) as (c, _, _, f2, _):
        pause_out_of_the_isr(c, topic, f2)
        _, stat = c.get(state_path(topic, 0))
        version = stat.version
        # F1 goes on fetching all along: three lag periods with F2 paused
        # and nothing produced must leave the ISR as it is
        seen_back = 0
        samples = 0
        end = time.monotonic() + 3 * LAG_MS / 1000.0
        while time.monotonic() < end:
            samples += 1
            if f2 in c.state(topic, 0)["isr"]:
                seen_back += 1
            time.sleep(0.1)
        _, stat = c.get(state_path(topic, 0))
        eq(seen_back, 0, "samples of %d with paused broker %d in the ISR" % (samples, f2))
        eq(stat.version, version, "the state znode's version (it changed %d times)" %
           (stat.version - version))
        resume(c, f2)
        wait_for(lambda: f2 in c.state(topic, 0)["isr"], DEADLINE,
                 "broker %d back in the ISR" % f2)


# ---------------------------------------------------------------- the other conditional writes

def path_is(path):
    """A rule's predicate: the request's path is exactly path (below the
    chroot), not a znode under it."""
    return lambda req: req.path == CHROOT + path


def metadata_v1(c, i, topics=None):
    """Broker i's Metadata v1 on a connection of its own: (broker ids,
    controller, {topic: (error, {partition: (error, leader)})})."""
    with kwire.connect(c.brokers[i].port) as s:
        _, brokers, controller, got = kwire.parse_metadata_v1(
            kwire.roundtrip(s, kwire.metadata_v1(1, topics)))
    return sorted(b[0] for b in brokers), controller, got


def led_the_same_everywhere(c, topic, brokers):
    """topic-0's state in ZooKeeper, when every broker of brokers names its
    leader in Metadata; None otherwise."""
    st = c.state(topic, 0)
    if st is None or st["leader"] < 0:
        return None
    for i in brokers:
        err, parts = metadata_v1(c, i, [topic])[2].get(topic, (-1, {}))
        if err != 0 or parts.get(0) != (0, st["leader"]):
            return None
    return st


def case_leader_election_whose_reply_is_lost(t):
    """The controller's setData of a partition state after its leader died
    (write_state): ZooKeeper names the new leader, the controller was never
    told. Every broker must end up agreeing on a leader that serves acks=all
    with every acknowledged record."""
    imports()
    c = ProxiedCluster(t, config={"min.insync.replicas": "2"})
    try:
        leader, ctl, f2 = roles(c)
        topic = "election"
        everyone = start_topic(c, topic, leader, ctl, f2)
        acked = ["first"] + ["before-%d" % i for i in range(10)]
        produce(everyone, topic, [(0, v) for v in acked[1:]], acks="all")
        rule = c.proxies[ctl].lose_reply(
            op="setData", path=state_path(topic, 0),
            match=lambda req: json.loads(req.data.decode())["leader"] != leader)
        t0 = time.monotonic()
        c.brokers[leader].kill()
        check(rule.fired.wait(DEADLINE), "the controller never wrote the election")
        st = c.state(topic, 0)
        print("ZooKeeper after the lost reply: %r" % st)
        live = [ctl, f2]
        chosen = wait_for(lambda: led_the_same_everywhere(c, topic, live), DEADLINE,
                          "%s-0 led by the same broker in every live broker's Metadata" %
                          topic)["leader"]
        print("led by %d everywhere %.1f s after the kill" % (chosen, time.monotonic() - t0))
        check(chosen in live, "leader %d is not alive", chosen)
        bootstrap = ",".join(c.bootstrap(i) for i in live)
        later = ["after-%d" % i for i in range(10)]
        produce(bootstrap, topic, [(0, v) for v in later], acks="all")
        acked += later
        got = [v for _, _, v in consume(bootstrap, topic, [0], len(acked))]
        eq([v for v in acked if v not in got], [], "acknowledged records lost")
    finally:
        c.close()


def case_partition_state_creation_whose_reply_is_lost(t):
    """The controller's create of a new topic's partition state
    (init_partition): the topic must end up led once, everywhere."""
    imports()
    c = ProxiedCluster(t)
    try:
        _, ctl, _ = roles(c)
        topic = "born"
        rule = c.proxies[ctl].lose_reply(op="create", match=path_is(state_path(topic, 0)))
        c.create_topic(topic, [[0, 1, 2]])
        check(rule.fired.wait(DEADLINE), "the controller never created %s", state_path(topic, 0))
        wait_for(lambda: led_the_same_everywhere(c, topic, range(3)), DEADLINE,
                 "%s-0 led in every broker's Metadata" % topic)
        st = c.state(topic, 0)
        eq(sorted(st["isr"]), [0, 1, 2], "the ISR of %s-0" % topic)
        produce(",".join(c.bootstrap(i) for i in range(3)), topic, [(0, "one")], acks="all")
        eq([v for _, _, v in consume(c.bootstrap(0), topic, [0], 1)], ["one"], "read back")
    finally:
        c.close()


def create_topics(port, topic, partitions=1, replication=3):
    """One CreateTopics v0 -> the topic's error code."""
    with kwire.connect(port) as s:
        payload = kwire.roundtrip(s, kwire.create_topics_v0(9, topic, partitions, replication,
                                                            timeout_ms=20000), timeout=40)
    r = kwire.Reader(payload)
    r.i32()  # correlation id
    return dict(r.array(lambda r: (r.string(), r.i16())))[topic]


TOPIC_ALREADY_EXISTS = 36


def case_create_topics_whose_reply_is_lost(t):
    """CreateTopics through the Kafka API, the reply of its config's create
    lost, then (another topic) the reply of its assignment's: each topic is
    created once and led, the client told it was created, and told
    TOPIC_ALREADY_EXISTS when it asks again."""
    imports()
    c = ProxiedCluster(t)
    try:
        _, ctl, _ = roles(c)
        wait_for(lambda: all(len(metadata_v1(c, i)[0]) == 3 for i in range(3)), DEADLINE,
                 "every broker knowing the three")
        port = c.brokers[ctl].port
        for topic, lost in (("withconfig", "/config/topics/withconfig"),
                            ("withassignment", "/brokers/topics/withassignment")):
            rule = c.proxies[ctl].lose_reply(op="create", match=path_is(lost))
            err = create_topics(port, topic)
            check(rule.fired.is_set(), "the reply of %s was not lost", lost)
            eq(err, 0, "CreateTopics %s with the reply of %s lost" % (topic, lost))
            wait_for(lambda: led_the_same_everywhere(c, topic, range(3)), DEADLINE,
                     "%s-0 led in every broker's Metadata" % topic)
            eq(len(c.json("/brokers/topics/" + topic)["partitions"]), 1, "%s's partitions" % topic)
            eq(create_topics(port, topic), TOPIC_ALREADY_EXISTS, "CreateTopics %s again" % topic)
            produce(c.bootstrap(ctl), topic, [(0, "x")], acks="all")
    finally:
        c.close()


def failover_with(c, lose):
    """Stops the controller (cleanly: its /controller goes at once) with
    lose(proxy) set on the others' proxies; returns (old controller, epoch
    before, the rules)."""
    old = wait_for(lambda: [c.controller()] if c.controller() is not None else None, 60,
                   "a controller")[0]
    epoch = int(c.get("/controller_epoch")[0])
    rules = [lose(c.proxies[i]) for i in range(3) if i != old]
    c.brokers[old].stop()
    return old, epoch, rules


def one_controller_acting(c, old, epoch):
    """Exactly one live broker is the controller, every live broker's
    Metadata says which, its epoch above epoch, and it acts: a new topic is
    led."""
    live = [i for i in range(3) if i != old]
    now = wait_for(lambda: (c.controller() is not None and
                            all(metadata_v1(c, i)[1] == c.controller() for i in live) and
                            [c.controller()]), DEADLINE,
                   "a controller every live broker names")[0]
    check(now in live, "controller %d is not alive", now)
    new_epoch = int(c.get("/controller_epoch")[0])
    check(new_epoch > epoch, "controller epoch %d, was %d", new_epoch, epoch)
    # each live broker's log: its last word on being the controller
    acting = []
    for i in live:
        lines = [ln for ln in c.brokers[i].log_text().splitlines()
                 if "is the controller, epoch" in ln or "resigns as controller" in ln]
        if lines and "is the controller, epoch" in lines[-1]:
            acting.append(i)
    eq(acting, [now], "the brokers whose last controller line says they lead")
    topic = "after%d" % new_epoch
    c.create_topic(topic, [[live[0], live[1]]])
    wait_for(lambda: led_the_same_everywhere(c, topic, live), DEADLINE,
             "%s led by the new controller's word" % topic)
    print("controller %d, epoch %d (was %d, epoch %d)" % (now, new_epoch, old, epoch))


def controller_failover_losing(t, op, path):
    """The controller killed, and the reply of the next `op` of `path` by
    any broker lost: one controller acts in the end, with a higher epoch."""
    imports()
    c = ProxiedCluster(t)
    try:
        old, epoch, rules = failover_with(c, lambda p: p.lose_reply(op=op, match=path_is(path)))
        wait_for(lambda: any(r.fired.is_set() for r in rules), DEADLINE,
                 "a reply of a %s %s lost" % (path, op))
        one_controller_acting(c, old, epoch)
    finally:
        c.close()


def case_controller_election_whose_reply_is_lost(t):
    controller_failover_losing(t, "create", "/controller")


def case_controller_epoch_whose_reply_is_lost(t):
    controller_failover_losing(t, "setData", "/controller_epoch")


def case_registration_whose_reply_is_lost(t):
    """A broker's ephemeral /brokers/ids/<id>, its reply lost: the create
    sent again finds the znode its own session made, and takes it."""
    imports()
    c = ProxiedCluster(t)
    try:
        _, ctl, other = roles(c)
        i = [j for j in range(3) if j not in (ctl,)][0]
        c.brokers[i].stop()
        wait_for(lambda: str(i) not in c.children("/brokers/ids"), DEADLINE,
                 "broker %d unregistered" % i)
        rule = c.proxies[i].lose_reply(op="create", match=path_is("/brokers/ids/%d" % i))
        c.brokers[i].start()
        check(rule.fired.wait(DEADLINE), "broker %d never registered", i)
        wait_for(lambda: kadmin.log_lines(c.brokers[i], "registered in ZooKeeper as broker"),
                 DEADLINE, "broker %d registered by its own word" % i)
        eq(len(kadmin.log_lines(c.brokers[i], "registered by another ZooKeeper session")), 0,
           "broker %d's own registration taken for another's" % i)
        check(str(i) in c.children("/brokers/ids"), "broker %d not in /brokers/ids", i)
        # its ephemeral znode is its live session's: it goes when the
        # broker stops
        topic = "reg"
        c.create_topic(topic, [[i, ctl]])
        wait_for(lambda: (led_the_same_everywhere(c, topic, range(3)) or {}).get("leader") == i,
                 DEADLINE,
                 "%s-0 led by broker %d" % (topic, i))
        produce(c.bootstrap(i), topic, [(0, "x")], acks="all")
        c.brokers[i].stop()
        wait_for(lambda: str(i) not in c.children("/brokers/ids"), 10,
                 "broker %d's registration gone with its session" % i)
    finally:
        c.close()


def case_config_change_whose_reply_is_lost(t):
    """AlterConfigs with the reply of its /config/topics setData lost, then
    with the reply of its /config/changes notification lost: each change
    written once and applied by every broker, the client told it was."""
    imports()
    c = ProxiedCluster(t)
    try:
        _, ctl, other = roles(c)
        topic = "conf"
        c.create_topic(topic, [[0, 1, 2]])
        wait_for(lambda: led_the_same_everywhere(c, topic, range(3)), DEADLINE,
                 "%s-0 led everywhere" % topic)
        for value, rule in (
                ("3600000", c.proxies[other].lose_reply(
                    op="setData", match=path_is("/config/topics/" + topic))),
                ("7200000", c.proxies[other].lose_reply(
                    op="create", path="/config/changes/config_change_"))):
            version = c.get("/config/topics/" + topic)[1].version
            res = kadmin.alter_configs(c.brokers[other].port,
                                       [(kadmin.TOPIC, topic, {"retention.ms": value})])
            check(rule.fired.is_set(), "the reply of %r was not lost", rule.request)
            eq(res[(kadmin.TOPIC, topic)][0], 0, "AlterConfigs retention.ms=%s" % value)
            eq(c.json("/config/topics/" + topic)["config"], {"retention.ms": value},
               "/config/topics/%s" % topic)
            eq(c.get("/config/topics/" + topic)[1].version, version + 1,
               "versions of /config/topics/%s" % topic)
            for i in range(3):
                wait_for(lambda i=i: kadmin.describe_configs(
                    c.brokers[i].port, topic, ["retention.ms"]).get("retention.ms", ("",))[0]
                    == value, 30, "broker %d applying retention.ms=%s" % (i, value))
    finally:
        c.close()


def init_producer_id(port):
    with kwire.connect(port) as s:
        payload = kwire.roundtrip(s, kwire.init_producer_id_v0(5), timeout=40)
    _, err, pid, _ = kwire.parse_init_producer_id_v0(payload)
    return err, pid


def case_producer_id_block_whose_reply_is_lost(t):
    """A block of producer ids claimed with its setData's reply lost: the
    broker hands out ids of the block ZooKeeper says it won, never of one it
    did not, and no two brokers' blocks overlap."""
    imports()
    c = ProxiedCluster(t)
    try:
        roles(c)
        blocks = {}  # broker -> [(start, end)] as ZooKeeper recorded them
        ids = {}
        for i in range(3):
            rule = c.proxies[i].lose_reply(op="setData", match=path_is("/latest_producer_id_block"))
            err, pid = init_producer_id(c.brokers[i].port)
            check(rule.fired.is_set(), "broker %d's claim kept its reply", i)
            eq(err, 0, "broker %d's InitProducerId with the claim's reply lost" % i)
            block = c.json("/latest_producer_id_block")
            blocks.setdefault(block["broker"], []).append(
                (int(block["block_start"]), int(block["block_end"])))
            ids[i] = [pid] + [init_producer_id(c.brokers[i].port)[1] for _ in range(2)]
        print("ids %r, blocks %r" % (ids, blocks))
        for i in range(3):
            for pid in ids[i]:
                check(any(s <= pid <= e for s, e in blocks.get(i, [])),
                      "broker %d handed out %d, not in a block it won (%r)", i, pid, blocks)
        flat = [x for i in range(3) for x in ids[i]]
        eq(len(set(flat)), len(flat), "ids handed out twice: %r" % ids)
    finally:
        c.close()


def case_reassignment_writes_whose_replies_are_lost(t):
    """A partition moved off its leader: the replies of the controller's
    two assignment writes (grown to new + old, then shrunk to new) and of
    its delete of /admin/reassign_partitions are lost after ZooKeeper
    applied them. The move completes: the assignment and the ISR are the
    new replicas, the old leader's replica is deleted, every acknowledged
    record is read back, and the znode is gone."""
    imports()
    c = ProxiedCluster(t)
    try:
        leader, ctl, other = roles(c)
        topic = "shift"
        c.create_topic(topic, [[leader, ctl]], {"min.insync.replicas": "2"})
        wait_for(lambda: (c.state(topic, 0) or {}).get("leader") == leader and
                 sorted(c.state(topic, 0)["isr"]) == sorted([leader, ctl]), 60,
                 "%s-0 led by %d, both in sync" % (topic, leader))
        everyone = ",".join(c.bootstrap(i) for i in range(3))
        produce(everyone, topic, [(0, "before-%d" % i) for i in range(50)], acks="all")
        grow_and_shrink = c.proxies[ctl].lose_reply(
            op="setData", match=path_is("/brokers/topics/" + topic), count=2)
        delete = c.proxies[ctl].lose_reply(op="delete",
                                           match=path_is("/admin/reassign_partitions"))
        c.kz.create(CHROOT + "/admin/reassign_partitions", json.dumps(
            {"version": 1, "partitions": [{"topic": topic, "partition": 0,
                                           "replicas": [ctl, other]}]}).encode())
        check(delete.fired.wait(DEADLINE), "the controller never deleted the znode")
        eq(grow_and_shrink.left, 0, "assignment writes whose reply was lost")
        wait_for(lambda: not c.exists("/admin/reassign_partitions"), DEADLINE,
                 "the reassignment's znode gone")
        eq(c.json("/brokers/topics/" + topic)["partitions"], {"0": [ctl, other]},
           "%s's assignment" % topic)
        st = c.state(topic, 0)
        eq(sorted(st["isr"]), sorted([ctl, other]), "the ISR of %s-0" % topic)
        check(st["leader"] in (ctl, other), "%s-0 led by %r" % (topic, st["leader"]))
        gone = os.path.join(c.brokers[leader].log_dir, topic + "-0")
        wait_for(lambda: not os.path.exists(gone), DEADLINE,
                 "the old leader's replica deleted")
        produce(everyone, topic, [(0, "after-%d" % i) for i in range(50)], acks="all")
        got = [v for _, _, v in consume(c.bootstrap(other), topic, [0], 100)]
        eq(sorted(got), sorted(["before-%d" % i for i in range(50)] +
                               ["after-%d" % i for i in range(50)]), "records read back")
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_isr_expansion_whose_reply_is_lost,
                   case_isr_write_answered_after_the_controllers_decision,
                   case_isr_expansion_whose_reply_is_late,
                   case_isr_shrink_whose_reply_is_lost,
                   case_a_paused_follower_stays_out_of_the_isr,
                   case_leader_election_whose_reply_is_lost,
                   case_partition_state_creation_whose_reply_is_lost,
                   case_create_topics_whose_reply_is_lost,
                   case_controller_election_whose_reply_is_lost,
                   case_controller_epoch_whose_reply_is_lost,
                   case_registration_whose_reply_is_lost,
                   case_config_change_whose_reply_is_lost,
                   case_producer_id_block_whose_reply_is_lost,
                   case_reassignment_writes_whose_replies_are_lost]))
