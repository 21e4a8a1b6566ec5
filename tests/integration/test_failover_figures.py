#!/usr/bin/python3
"""Figures of a failover: where the time goes when a broker that is the
controller and leads partitions is killed with SIGKILL, on three brokers and
a real ZooKeeper (tickTime 2000) with zookeeper.session.timeout.ms=6000. It
prints the figures; it asserts only that the partitions move.

    test_failover_figures.py SAMSA_BROKER [-k CASE]

Each round: topic fo<n> with 3 partitions, each led by the controller C;
C is killed (-9) at T0. Printed, in seconds after T0, from the logs'
timestamps (the brokers' and ZooKeeper's, one clock) and from polling:
- expired: ZooKeeper expires C's session ("Expiring session", its log);
- elected: the next controller says it is the controller (its log);
- written: the last partition's new leader written to ZooKeeper (its
  "leader N, epoch E" line);
- applied: the last partition's new leader says it leads (its log);
- metadata: a survivor's Metadata names live leaders for every partition
  (polled every 50 ms).
Also printed: how long before T0 C last spoke to ZooKeeper is not known to
the test; ZooKeeper expires a session in tick-sized buckets (its
ExpiryQueue rounds the deadline up to the next multiple of tickTime), so
"expired" lies between the session timeout less the time since C's last
ping and the session timeout plus a tick.
"""

import datetime
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import check, main  # noqa: E402
from test_cluster import Cluster, imports, partitions_of, wait_for  # noqa: E402

SESSION_MS = 6000
ROUNDS = int(os.environ.get("SAMSA_FAILOVER_ROUNDS", "3"))
ISO = re.compile(r"^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)[.,](\d{3})")


def stamp(line, utc):
    """The line's timestamp as epoch seconds, or None."""
    m = ISO.match(line)
    if m is None:
        return None
    dt = datetime.datetime.strptime("%s %s.%s" % m.groups(), "%Y-%m-%d %H:%M:%S.%f")
    if utc:
        return dt.replace(tzinfo=datetime.timezone.utc).timestamp()
    return dt.timestamp()  # ZooKeeper's log4j: local time


def first_after(lines, t0, text, utc=True):
    for ln in lines:
        if text in ln:
            s = stamp(ln, utc)
            if s is not None and s >= t0 - 0.5:
                return s, ln
    return None, None


def last_after(lines, t0, pattern, utc=True):
    got = None
    for ln in lines:
        if re.search(pattern, ln):
            s = stamp(ln, utc)
            if s is not None and s >= t0 - 0.5:
                got = s
    return got


def one_round(c, n):
    ctl = wait_for(lambda: [c.controller()] if c.controller() is not None else None, 60,
                   "a controller")[0]
    others = [i for i in range(3) if i != ctl]
    topic = "fo%d" % n
    c.create_topic(topic, [[ctl] + others, [ctl] + others[::-1], [ctl] + others])
    wait_for(lambda: all((c.state(topic, p) or {}).get("leader") == ctl and
                         len(c.state(topic, p)["isr"]) == 3 for p in range(3)) and
             all(len(partitions_of(c.bootstrap(i), topic)) == 3 for i in others), 60,
             "%s led by %d everywhere" % (topic, ctl))
    time.sleep(2.5)  # a ping or two of C's session: the usual state of a quiet broker
    t0 = time.time()
    c.brokers[ctl].kill()
    moved = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            parts = partitions_of(c.bootstrap(others[0]), topic)
        except Exception:  # noqa: BLE001 - a survivor busy: ask again
            parts = {}
        if len(parts) == 3 and all(v[0] == 0 and v[1] in others for v in parts.values()):
            moved = time.time()
            break
        time.sleep(0.05)
    check(moved is not None, "%s never moved off broker %d", topic, ctl)
    zk_lines = open(c.zk.log_path, errors="replace").read().splitlines()
    expired, _ = first_after(zk_lines, t0, "Expiring session", utc=False)
    if expired is None:
        expired, _ = first_after(zk_lines, t0, "expired", utc=False)
    new_ctl = c.controller()
    logs = {i: c.brokers[i].log_text().splitlines() for i in others}
    elected = first_after(logs[new_ctl], t0, "is the controller, epoch")[0] if new_ctl in logs \
        else None
    written = last_after(logs.get(new_ctl, []), t0,
                         r"controller: %s-\d+: leader \d+, epoch" % topic)
    applied = None
    for i in others:
        a = last_after(logs[i], t0, r"%s-\d+.*(becomes the leader|leader in epoch|leads)" % topic)
        if a is not None and (applied is None or a > applied):
            applied = a

    def rel(x):
        return "%.2f" % (x - t0) if x is not None else "?"
    row = (rel(expired), rel(elected), rel(written), rel(applied), rel(moved))
    print("round %d (controller %d -> %s): expired %s, elected %s, written %s, applied %s, "
          "metadata %s s" % ((n, ctl, new_ctl) + row))
    c.brokers[ctl].start()
    wait_for(lambda: len(c.children("/brokers/ids")) == 3, 60, "broker %d back" % ctl)
    return moved - t0, None if expired is None else moved - expired


def case_controller_and_leader_killed(t):
    imports()
    c = Cluster(t, config={"zookeeper.session.timeout.ms": str(SESSION_MS)})
    try:
        totals = []
        after_expiry = []
        for n in range(ROUNDS):
            total, rest = one_round(c, n)
            totals.append(total)
            if rest is not None:
                after_expiry.append(rest)
        print("kill -9 to Metadata naming live leaders: %s s (session %d ms, tickTime 2000)"
              % (", ".join("%.2f" % x for x in totals), SESSION_MS))
        print("session expired in ZooKeeper to Metadata: %s s"
              % ", ".join("%.2f" % x for x in after_expiry))
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main([case_controller_and_leader_killed]))
