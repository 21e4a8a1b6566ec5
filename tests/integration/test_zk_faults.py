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

Every process is stopped by its PID; waits are conditions with deadlines.
"""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import check, eq, main  # noqa: E402
from test_cluster import CHROOT, Cluster, consume, imports, produce, wait_for  # noqa: E402
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
    got = consume(everyone, topic, [0], len(acked) + 1)
    values = [v for _, _, v in got]
    lost = [v for v in acked if v not in values]
    eq(lost, [], "acknowledged records lost (read %d, state %r)" % (len(values),
                                                                    c.state(topic, 0)))


def case_isr_expansion_whose_reply_is_lost(t):
    imports()
    c = ProxiedCluster(t, config=SAFETY_CONFIG)
    try:
        leader, f1, f2 = roles(c)
        topic = "expansion"
        everyone = start_topic(c, topic, leader, f1, f2)
        pause(c, f2)
        wait_for(lambda: f2 not in c.state(topic, 0)["isr"], DEADLINE,
                 "broker %d out of the ISR" % f2)
        acked = ["first"] + ["before-%d" % i for i in range(10)]
        produce(everyone, topic, [(0, v) for v in acked[1:]], acks="all")
        rule = c.proxies[leader].lose_reply(op="setData", path=state_path(topic, 0),
                                            match=lambda req: f2 in isr_of(req))
        resume(c, f2)
        check(rule.fired.wait(DEADLINE), "broker %d never wrote the ISR expansion", leader)
        pause(c, f2)
        eq(sorted(c.state(topic, 0)["isr"]), [0, 1, 2], "ZooKeeper's ISR after the lost reply")
        later = ["after-%d" % i for i in range(20)]
        produce(everyone, topic, [(0, v) for v in later], acks="all")
        acked += later
        nothing_acknowledged_lost(c, topic, leader, f1, f2, acked)
    finally:
        for i in range(3):
            if c.brokers[i].alive():
                resume(c, i)
        c.close()


def case_isr_expansion_whose_reply_is_late(t):
    imports()
    c = ProxiedCluster(t, config=SAFETY_CONFIG)
    try:
        leader, f1, f2 = roles(c)
        topic = "late"
        everyone = start_topic(c, topic, leader, f1, f2)
        pause(c, f2)
        wait_for(lambda: f2 not in c.state(topic, 0)["isr"], DEADLINE,
                 "broker %d out of the ISR" % f2)
        acked = ["first"]
        # the reply held twice the lag: records produced meanwhile must
        # wait for F2 (in ZooKeeper's ISR) or for its removal
        rule = c.proxies[leader].delay_replies(2 * LAG_MS / 1000.0, op="setData",
                                               path=state_path(topic, 0),
                                               match=lambda req: f2 in isr_of(req))
        resume(c, f2)
        wait_for(lambda: rule.request is not None or rule.taken, DEADLINE,
                 "broker %d writing the ISR expansion" % leader)
        pause(c, f2)
        later = ["during-%d" % i for i in range(20)]
        produce(everyone, topic, [(0, v) for v in later], acks="all")
        print("acknowledged %s the held reply reached broker %d" %
              ("after" if rule.fired.is_set() else "before", leader))
        acked += later
        nothing_acknowledged_lost(c, topic, leader, f1, f2, acked)
    finally:
        for i in range(3):
            if c.brokers[i].alive():
                resume(c, i)
        c.close()


def case_isr_shrink_whose_reply_is_lost(t):
    imports()
    c = ProxiedCluster(t, config=SAFETY_CONFIG)
    try:
        leader, f1, f2 = roles(c)
        topic = "shrink"
        everyone = start_topic(c, topic, leader, f1, f2)
        rule = c.proxies[leader].lose_reply(op="setData", path=state_path(topic, 0),
                                            match=lambda req: f2 not in isr_of(req))
        pause(c, f2)
        try:
            check(rule.fired.wait(DEADLINE), "broker %d never wrote the ISR shrink", leader)
            eq(sorted(c.state(topic, 0)["isr"]), sorted([leader, f1]),
               "ZooKeeper's ISR after the lost reply")
            # acks=all with F2 paused: the leader must know F2 left
            t0 = time.monotonic()
            produce(everyone, topic, [(0, "after-%d" % i) for i in range(10)], acks="all",
                    retries=0)
            print("acks=all answered %.1f s after the lost reply" % (time.monotonic() - t0))
        finally:
            resume(c, f2)
        wait_for(lambda: f2 in c.state(topic, 0)["isr"], DEADLINE,
                 "broker %d back in the ISR" % f2)
    finally:
        for i in range(3):
            if c.brokers[i].alive():
                resume(c, i)
        c.close()


def case_a_paused_follower_stays_out_of_the_isr(t):
    imports()
    c = ProxiedCluster(t, config={"replica.lag.time.max.ms": str(LAG_MS)})
    try:
        leader, f1, f2 = roles(c)
        topic = "flap"
        start_topic(c, topic, leader, f1, f2)
        pause(c, f2)
        try:
            wait_for(lambda: f2 not in c.state(topic, 0)["isr"], DEADLINE,
                     "broker %d out of the ISR" % f2)
            _, stat = c.get(state_path(topic, 0))
            version = stat.version
            # F1 goes on fetching all along: three lag periods with F2
            # paused and nothing produced must leave the ISR as it is
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
        finally:
            resume(c, f2)
        wait_for(lambda: f2 in c.state(topic, 0)["isr"], DEADLINE,
                 "broker %d back in the ISR" % f2)
    finally:
        for i in range(3):
            if c.brokers[i].alive():
                resume(c, i)
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_isr_expansion_whose_reply_is_lost,
                   case_isr_expansion_whose_reply_is_late,
                   case_isr_shrink_whose_reply_is_lost,
                   case_a_paused_follower_stays_out_of_the_isr]))
