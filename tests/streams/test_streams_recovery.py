"""libsamsa-streams' crash-exact recovery against the real samsa-broker:
the word count example (client/streams/examples/wordcount.c) killed with
SIGKILL at random points and started again, many times, while lines keep
coming. No update is counted twice: no count written to the output ever
exceeds the count of the lines produced so far (a Python oracle), and the
final counts equal the oracle of every line. With the LMDB store the state
and its input positions are committed in one transaction; a run whose state
directory was deleted before its restart restores it from the changelog,
and counts exactly as well.

    test_streams_recovery.py SAMSA_BROKER SAMSA_TOOL WORDCOUNT [-k CASE]
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402

import test_streams_integration as wc  # noqa: E402  (the word count's helpers)

TIMEOUT = 60
# a member killed is forgotten within 1.5 s, so that its restart gets the
# partitions soon (Kafka's group.min.session.timeout.ms allows down to 6 s
# by default; the test lowers it)
CONFIG = dict(wc.CONFIG, **{"group.min.session.timeout.ms": "1000"})
MEMBER = ["session.timeout.ms=1500", "heartbeat.interval.ms=300"]


class Run(wc.App):
    """One run of the word count, stopped (SIGTERM) or killed (SIGKILL) by
    its PID; a member the group forgets within 1.5 s."""

    def __init__(self, t, bs, n, extra=()):  # pylint: disable=super-init-not-called
        self.log = t.path("recovery-%d.log" % n)
        self.err = open(self.log, "w")
        self.proc = subprocess.Popen([wc.WORDCOUNT, bs, "lines", "counts", "wc", "200"]
                                     + MEMBER + list(extra),
                                     stdout=subprocess.DEVNULL, stderr=self.err)


def output_records(bs):
    return sum(len(v) for v in wc.read_output(bs, "counts").values())


def check_never_above(seq, want, when):
    """Every count ever written is at most what the lines produced so far
    hold: an update counted twice would show as a count above it."""
    for word, values in seq.items():
        check(word in want, "%s: %r counted, but no line holds it", when, word)
        check(max(values) <= want[word], "%s: %r written as %d, the lines hold %d (%r)",
              when, word, max(values), want[word], values[-20:])


def kill_and_restart(t, kills, extra=(), lose_state_at=None, state=None):
    bs = t.broker(config=CONFIG).bootstrap
    wc.samsa("topic", "create", "-b", bs, "lines", "--partitions", "3")
    wc.samsa("topic", "create", "-b", bs, "counts", "--partitions", "3")
    rnd = random.Random(31)
    produced = []
    for n in range(kills):
        batch = wc.lines_of(1000 + n, 400)
        failed = []

        def produce(batch=batch, failed=failed):
            try:  # in parts: lines still coming while the run goes
                for i in range(0, len(batch), 40):
                    wc.produce(bs, "lines", batch[i:i + 40])
                    time.sleep(0.05)
            except Exception as e:  # noqa: BLE001 (reported by the main thread)
                failed.append(e)

        if lose_state_at == n:
            shutil.rmtree(state)
        before = output_records(bs)
        producer = threading.Thread(target=produce)
        producer.start()
        run = Run(t, bs, n, extra)
        try:
            # killed once it writes again (restore done, partitions held),
            # at a random moment after that: mid-batch, mid-commit, or idle
            deadline = time.monotonic() + TIMEOUT
            while output_records(bs) == before:
                check(run.proc.poll() is None, "run %d exited: %s", n,
                      open(run.log).read()[-2000:])
                check(time.monotonic() < deadline, "run %d wrote nothing in %d s", n, TIMEOUT)
                time.sleep(0.05)
            time.sleep(rnd.uniform(0, 0.5))
        finally:
            run.kill()
            producer.join(timeout=TIMEOUT)
        check(not failed, "producing: %s", failed)
        produced += batch
        check_never_above(wc.read_output(bs, "counts"), wc.oracle(produced),
                          "after kill %d" % (n + 1))
    # a last batch, so that the last run restores and counts too
    last = wc.lines_of(999, 200)
    wc.produce(bs, "lines", last)
    produced += last
    want = wc.oracle(produced)
    if lose_state_at == kills:
        shutil.rmtree(state)
    run = Run(t, bs, kills, extra)
    try:
        seq = wc.wait_for_counts(bs, want, run)
        log = run.stop()
    finally:
        run.kill()
    check_never_above(seq, want, "at the end")
    eq({k: v[-1] for k, v in seq.items()}, want, "the final counts")
    return log
    # updates written again (the same count twice): what was processed but
    # not committed before a kill, the sign that kills came mid-work
    print("  %d kills, %d lines, %d words counted, %d updates written; last run: %s"
          % (kills, len(produced), sum(want.values()), output_records(bs),
             log.strip().splitlines()[-1]))


def case_kill_9_twenty_times_counts_each_update_once(t):
    """In-memory stores: each restart restores the whole changelog and takes
    the input positions from its records' headers."""
    kill_and_restart(t, 20)


def case_kill_9_twenty_times_on_lmdb_counts_each_update_once(t):
    """LMDB stores: state and positions in one transaction per commit; a
    restart restores only the changelog's tail past them."""
    state = t.path("state")
    kill_and_restart(t, 20, extra=["state.dir=" + state])


def case_a_lost_state_directory_is_restored_from_the_changelog(t):
    """LMDB stores, killed 5 times, the state directory deleted before the
    last start: the store comes back from the whole changelog (one record
    per update: not compacted yet), the counts go on exactly."""
    state = t.path("state")
    log = kill_and_restart(t, 5, extra=["state.dir=" + state], lose_state_at=5, state=state)
    m = re.search(r"restored (\d+)", log)
    check(m is not None and int(m.group(1)) > 0, "the last run restored nothing: %s", log[-2000:])


def group_members(bs):
    """The word count group's members, each with the partitions it holds."""
    p = wc.samsa("group", "describe", "-b", bs, "wc", "--json")
    d = json.loads(p.stdout)
    d = d[0] if isinstance(d, list) else d
    return [sorted((a["topic"], a["partition"]) for a in m["partitions"]) for m in d["members"]]


def processed_of(log):
    m = re.search(r"processed (\d+) restored (\d+)", log)
    check(m is not None, "no summary in the log: %s", log[-2000:])
    return int(m.group(1))


def produce_in_parts(bs, lines, failed):
    try:
        for i in range(0, len(lines), 100):
            wc.produce(bs, "lines", lines[i:i + 100])
            time.sleep(0.1)
    except Exception as e:  # noqa: BLE001 (reported by the main thread)
        failed.append(e)


def two_instances(t, crash):
    """Two word counts in one group (application.id wc) share the
    partitions, then one leaves while lines come (SIGTERM, or SIGKILL when
    crash), and the other takes its partitions over (their stores restored
    from the changelogs). Returns the output, the oracle, the lines and the
    logs of the two (None for the one killed)."""
    bs = t.broker(config=CONFIG).bootstrap
    wc.samsa("topic", "create", "-b", bs, "lines", "--partitions", "4")
    wc.samsa("topic", "create", "-b", bs, "counts", "--partitions", "3")
    batches = [wc.lines_of(2000 + i, 1000) for i in range(3)]
    wc.produce(bs, "lines", batches[0])
    a = Run(t, bs, 0)
    b = None
    try:
        wc.wait_for_counts(bs, wc.oracle(batches[0]), a)
        b = Run(t, bs, 1)
        deadline = time.monotonic() + TIMEOUT
        members = []
        while time.monotonic() < deadline:
            members = group_members(bs)
            if len(members) == 2 and all(members):
                break
            time.sleep(0.2)
        check(len(members) == 2 and all(members), "the two never shared the partitions: %r",
              members)
        print("  shared: %s" % " | ".join(",".join("%s-%d" % tp for tp in m) for m in members))
        failed = []
        produce_in_parts(bs, batches[1], failed)
        check(not failed, "producing: %s", failed)
        wc.wait_for_counts(bs, wc.oracle(batches[0] + batches[1]), a)
        # one leaves while lines come
        producer = threading.Thread(target=produce_in_parts, args=(bs, batches[2], failed))
        producer.start()
        time.sleep(0.3)
        log_a = None
        if crash:
            a.kill()
        else:
            log_a = a.stop()
        producer.join(timeout=TIMEOUT)
        check(not failed, "producing: %s", failed)
        lines = [line for batch in batches for line in batch]
        want = wc.oracle(lines)
        seq = wc.wait_for_counts(bs, want, b)
        log_b = b.stop()
    finally:
        a.kill()
        if b is not None:
            b.kill()
    return seq, want, lines, log_a, log_b


def case_two_instances_share_the_work_and_one_leaves(t):
    """The one leaving commits and leaves the group (SIGTERM): each count is
    written once (1..n: no record counted twice, none skipped), the two
    together processed each line and each repartitioned word once, and the
    final counts equal the oracle."""
    seq, want, lines, log_a, log_b = two_instances(t, crash=False)
    wc.check_each_count_once(seq, want)
    pa, pb = processed_of(log_a), processed_of(log_b)
    check(pa > 0 and pb > 0, "one of the two processed nothing: %d, %d", pa, pb)
    eq(pa + pb, len(lines) + sum(want.values()), "records the two processed together")
    print("  %d lines, %d words: %d processed by the one that left, %d by the other"
          % (len(lines), sum(want.values()), pa, pb))


def case_two_instances_share_the_work_and_one_is_killed(t):
    """The one leaving is killed (SIGKILL) mid-batch: the other gets its
    partitions once the group forgot it, restores their stores and goes on
    from the positions in them: no count ever above the oracle, the final
    counts equal to it."""
    seq, want, _, _, log_b = two_instances(t, crash=True)
    check_never_above(seq, want, "after the kill")
    eq({k: v[-1] for k, v in seq.items()}, want, "the final counts")
    print("  the one left: %s" % log_b.strip().splitlines()[-1])


if __name__ == "__main__":
    wc.WORDCOUNT = os.path.abspath(sys.argv.pop(3))
    wc.TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_kill_9_twenty_times_counts_each_update_once,
                   case_kill_9_twenty_times_on_lmdb_counts_each_update_once,
                   case_a_lost_state_directory_is_restored_from_the_changelog,
                   case_two_instances_share_the_work_and_one_leaves,
                   case_two_instances_share_the_work_and_one_is_killed]))
