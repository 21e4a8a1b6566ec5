#!/usr/bin/python3
"""Log flushes and checkpoint writes leave the reactor thread.

- flush_off_reactor: a broker with flush.ms 100 and a 1 s checkpoint
  interval runs under strace (fsync, fdatasync, each call with its thread);
  while Produce requests keep coming to four partitions (their first appends
  among them: a new leader epoch is written by the flush), the recovery-point
  checkpoint follows the appends (the flushes end and move the recovery
  points; the checkpoint is rewritten), another thread makes the
  fdatasyncs and fsyncs, and the reactor thread (its tid is the broker's
  pid) makes none. After the producing stops the checkpoint reaches every
  partition's log end; after a SIGKILL and a start every record is there
  and leader-epoch-checkpoint names epoch 0 from offset 0.
  Skipped when strace is missing or ptrace is refused.
- rolled_segments_flushed: with flush.ms at its default (never), a roll
  makes the log's flush due (Kafka's Log.roll flushes the segment it
  closed): the recovery-point checkpoint reaches the newest segment's base
  offset without a stop.

Runs on Debian's /usr/bin/python3.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kwire  # noqa: E402
from broker import broker_for_strace, check, eq, main, strace_attach, strace_syncs  # noqa: E402

TOPIC = "flushed"
PARTITIONS = 4


def recovery_points(b):
    """{partition: offset} of TOPIC in recovery-point-offset-checkpoint, {}
    while the file is missing or being replaced."""
    path = os.path.join(b.log_dir, "recovery-point-offset-checkpoint")
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        return {}
    out = {}
    for line in lines[2:]:
        parts = line.split(" ")
        if len(parts) == 3 and parts[0] == TOPIC:
            out[int(parts[1])] = int(parts[2])
    return out


def case_flush_off_reactor(t):
    b = broker_for_strace(t, overrides={
        "log.flush.interval.ms": "100",
        "log.flush.offset.checkpoint.interval.ms": "1000",
    })
    kwire.create_topic(b.port, TOPIC, PARTITIONS)
    leo = {}
    trace = t.path("strace.out")
    st = strace_attach(b, trace)
    pid = b.pid
    try:
        t0 = time.time()
        # producing goes on until the checkpoint has caught up with 100
        # records per partition, flushed and checkpointed while appends came
        deadline = time.monotonic() + 120
        with kwire.connect(b.port) as s:
            while True:
                for p in range(PARTITIONS):
                    base = kwire.produce(b.port, TOPIC, p, [(b"k%d" % i, b"v" * 200)
                                                            for i in range(10)], sock=s)
                    leo[p] = base + 10
                rp = recovery_points(b)
                if all(rp.get(p, 0) >= 100 for p in range(PARTITIONS)):
                    break
                check(time.monotonic() < deadline,
                      "recovery points %r still below 100 after 120 s of producing", rp)
        t1 = time.time()
        print("producing: %.1f s, log ends %r, checkpoint %r" % (t1 - t0, leo, rp))
        deadline = time.monotonic() + 60
        while recovery_points(b) != leo:
            check(time.monotonic() < deadline, "checkpoint %r, log ends %r after 60 s",
                  recovery_points(b), leo)
            time.sleep(0.1)
        t2 = time.time()
    finally:
        b.kill()   # no shutdown flush in the window; strace follows the broker out
        try:
            st.wait(30)
        except subprocess.TimeoutExpired:
            st.terminate()
            st.wait()
    calls = [c for c in strace_syncs(trace) if t0 <= c[1] <= t2]
    on_reactor = [c for c in calls if c[0] == pid]
    elsewhere = [c for c in calls if c[0] != pid]
    check(not on_reactor, "%d fsync/fdatasync call(s) on the reactor thread (%d): %r",
          len(on_reactor), pid, on_reactor[:10])
    check(any(c[2] == "fdatasync" for c in elsewhere), "no fdatasync on another thread")
    check(any(c[2] == "fsync" for c in elsewhere), "no fsync (checkpoint) on another thread")
    print("%d fdatasync and %d fsync on %d other thread(s), none on the reactor"
          % (sum(c[2] == "fdatasync" for c in elsewhere), sum(c[2] == "fsync" for c in elsewhere),
             len({c[0] for c in elsewhere})))
    for p in range(PARTITIONS):
        with open(os.path.join(b.log_dir, "%s-%d" % (TOPIC, p), "leader-epoch-checkpoint")) as f:
            eq(f.read(), "0\n1\n0 0\n", "leader-epoch-checkpoint of %d" % p)
    b.start()
    for p in range(PARTITIONS):
        eq(kwire.list_offset(b.port, TOPIC, p, -1)[1], leo[p], "log end of %d after SIGKILL" % p)
    b.stop()



def case_rolled_segments_flushed(t):
    # flush.ms left at its default (never): only the rolls make flushes due
    b = t.broker(overrides={
        "log.segment.bytes": "20000",
        "log.flush.offset.checkpoint.interval.ms": "1000",
    })
    kwire.create_topic(b.port, TOPIC, 1)
    with kwire.connect(b.port) as s:
        for i in range(40):
            end = kwire.produce(b.port, TOPIC, 0, [(b"k%d" % i, b"v" * 2000)], sock=s) + 1
    segs = kwire.segment_files(b.log_dir, TOPIC, 0)
    check(len(segs) >= 3, "only %d segment(s) after 80 KB of 20 KB segments", len(segs))
    newest_base = int(os.path.basename(segs[-1])[:20])
    deadline = time.monotonic() + 60
    while recovery_points(b).get(0, 0) < newest_base:
        check(time.monotonic() < deadline, "recovery point %r after 60 s, newest segment at %d",
              recovery_points(b), newest_base)
        time.sleep(0.1)
    print("%d segments, log end %d: recovery point %d" % (len(segs), end,
                                                         recovery_points(b)[0]))
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_flush_off_reactor, case_rolled_segments_flushed]))
