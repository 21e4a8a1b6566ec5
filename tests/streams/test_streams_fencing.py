"""libsamsa-streams' fencing against the real samsa-broker, with the word
count example (client/streams/examples/wordcount.c):

- two instances never use one state directory at once: the second is
  refused with a sentence naming the directory and the process holding it,
  and the lock goes with its holder (a clean stop, or SIGKILL);
- an instance paused (SIGSTOP) longer than session.timeout.ms, whose
  partitions the group gave to the other instance meanwhile, and then let
  go on (SIGCONT) commits neither state nor offsets for them: it learns from
  the group that it moved on before it processes anything more, closes its
  tasks as a crash would and joins again. No count written ever exceeds the
  Python oracle of the lines produced so far, and the final counts equal
  the oracle of every line.

    test_streams_fencing.py SAMSA_BROKER SAMSA_TOOL WORDCOUNT [-k CASE]
"""
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402

import test_streams_integration as wc  # noqa: E402  (the word count's helpers)
import test_streams_recovery as rec  # noqa: E402  (a run of it, the group's members)

TIMEOUT = 60


def wait_for(what, cond, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("%s: not within %d s (last: %r)" % (what, timeout, value))


def running(run):
    return "wordcount: running" in open(run.log).read()


def case_a_second_instance_on_the_same_state_directory_is_refused(t):
    """The second word count given the first one's state.dir exits 1 with a
    sentence naming the directory and the first one's PID, and changes
    nothing: the first counts on exactly. Once the first stopped, or was
    killed with SIGKILL, the next one takes the directory."""
    bs = t.broker(config=rec.CONFIG).bootstrap
    wc.samsa("topic", "create", "-b", bs, "lines", "--partitions", "2")
    wc.samsa("topic", "create", "-b", bs, "counts", "--partitions", "2")
    state = t.path("state")
    first = wc.lines_of(41, 500)
    wc.produce(bs, "lines", first)
    a = rec.Run(t, bs, 0, ["state.dir=" + state])
    try:
        wc.wait_for_counts(bs, wc.oracle(first), a)
        b = rec.Run(t, bs, 1, ["state.dir=" + state])
        rc = b.proc.wait(timeout=TIMEOUT)
        b.err.close()
        said = open(b.log).read()
        eq(rc, 1, "the second instance's exit status (log: %s)" % said[-2000:])
        where = os.path.join(state, "wc")
        check(where in said and "process %d" % a.proc.pid in said,
              "the refusal names neither %s nor process %d: %s", where, a.proc.pid, said)
        print("  refused: %s" % said.strip().splitlines()[-1])
        second = wc.lines_of(42, 500)
        wc.produce(bs, "lines", second)
        seq = wc.wait_for_counts(bs, wc.oracle(first + second), a)
        wc.check_each_count_once(seq, wc.oracle(first + second))
        a.stop()
        # a clean stop and a kill -9 both let the lock go
        c = rec.Run(t, bs, 2, ["state.dir=" + state])
        wait_for("the next instance starts", lambda: running(c) or c.proc.poll() is not None)
        check(c.proc.poll() is None, "the next instance exited: %s", open(c.log).read())
        c.kill()
        d = rec.Run(t, bs, 3, ["state.dir=" + state])
        try:
            third = wc.lines_of(43, 300)
            wc.produce(bs, "lines", third)
            wc.wait_for_counts(bs, wc.oracle(first + second + third), d)
            d.stop()
        finally:
            d.kill()
    finally:
        a.kill()


def committed_by(bs, client):
    """The offsets committed on the lines partitions that client.id holds,
    summed, and their log ends summed."""
    p = wc.samsa("group", "describe", "-b", bs, "wc", "--json")
    d = json.loads(p.stdout)
    d = d[0] if isinstance(d, list) else d
    rows = [r for r in d["partitions"]
            if r["topic"] == "lines" and r.get("client_id") == client]
    return (sum(max(r["current_offset"] or 0, 0) for r in rows),
            sum(r["log_end_offset"] or 0 for r in rows))


def paused_past_the_session_timeout(t, extra_a=(), extra_b=()):
    """A and B share 4 partitions; A is paused (SIGSTOP) in the middle of a
    burst of lines, the group gives its partitions to B once A's session
    expired, B counts every line; then A goes on (SIGCONT) and joins again.
    Then more lines, which the two count together. Returns the output and
    the oracle; both instances must exit cleanly."""
    bs = t.broker(config=rec.CONFIG).bootstrap
    wc.samsa("topic", "create", "-b", bs, "lines", "--partitions", "4")
    wc.samsa("topic", "create", "-b", bs, "counts", "--partitions", "3")
    first = wc.lines_of(3100, 1000)
    burst = wc.lines_of(3101, 20000)
    wc.produce(bs, "lines", first)
    a = rec.Run(t, bs, 0, ["client.id=a"] + list(extra_a))
    b = None
    try:
        wc.wait_for_counts(bs, wc.oracle(first), a)
        b = rec.Run(t, bs, 1, ["client.id=b"] + list(extra_b))
        members = wait_for("the two share the partitions",
                           lambda: (lambda m: m if len(m) == 2 and all(m) else None)(
                               rec.group_members(bs)))
        print("  shared: %s" % " | ".join(",".join("%s-%d" % tp for tp in m) for m in members))
        # A paused mid-burst: it committed part of it and has more to do
        # (fetched records it has not processed yet, outputs not sent)
        _, end = committed_by(bs, "a")
        wc.produce(bs, "lines", burst)
        wait_for("A commits part of the burst", lambda: (
            lambda c: c if end < c[0] < c[1] else (False, c))(committed_by(bs, "a")),
            timeout=20)
        a.proc.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            members = wait_for("B alone holds the 4 partitions of lines", lambda: (
                lambda m: m if len(m) == 1 and sum(tp[0] == "lines" for tp in m[0]) == 4
                else None)(rec.group_members(bs)))
            print("  A paused; B holds %s after %.1f s"
                  % (",".join("%s-%d" % tp for tp in members[0]), time.monotonic() - stopped))
            want = wc.oracle(first + burst)
            seq = wc.wait_for_counts(bs, want, b)
            rec.check_never_above(seq, want, "while A is paused")
        finally:
            a.proc.send_signal(signal.SIGCONT)
        # A goes on: it must learn that it lost its partitions before it
        # commits anything for them, join again and share the work
        wait_for("A joins again", lambda: (lambda m: len(m) == 2 and all(m))(
            rec.group_members(bs)))
        last = wc.lines_of(3102, 1000)
        wc.produce(bs, "lines", last)
        want = wc.oracle(first + burst + last)
        seq = wc.wait_for_counts(bs, want, b)
        time.sleep(1)  # what A might still write after the counts were reached
        seq = wc.read_output(bs, "counts")
        log_b = b.stop()
        log_a = a.stop()
        print("  A: %s\n  B: %s" % (log_a.strip().splitlines()[-1], log_b.strip().splitlines()[-1]))
        return seq, want
    finally:
        a.proc.send_signal(signal.SIGCONT)
        a.kill()
        if b is not None:
            b.kill()


def check_fenced(seq, want):
    rec.check_never_above(seq, want, "after A went on")
    eq({k: v[-1] for k, v in seq.items()}, want, "the final counts")


def case_paused_past_the_session_timeout_commits_nothing_for_lost_partitions(t):
    """In-memory stores."""
    check_fenced(*paused_past_the_session_timeout(t))


def case_paused_past_the_session_timeout_on_lmdb_commits_nothing(t):
    """LMDB stores, a state directory each: A's state on disk stays as of
    its last commit before the pause; its tasks restore the changelog's tail
    when the group gives them back."""
    check_fenced(*paused_past_the_session_timeout(t, ["state.dir=" + t.path("state-a")],
                                                  ["state.dir=" + t.path("state-b")]))


if __name__ == "__main__":
    wc.WORDCOUNT = os.path.abspath(sys.argv.pop(3))
    wc.TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_a_second_instance_on_the_same_state_directory_is_refused,
                   case_paused_past_the_session_timeout_commits_nothing_for_lost_partitions,
                   case_paused_past_the_session_timeout_on_lmdb_commits_nothing]))
