#!/usr/bin/python3
"""AlterConfigs and IncrementalAlterConfigs wait for the metadata store off
the reactor thread.

- no_fsync_on_reactor: the broker runs under strace (fsync, fdatasync, each
  call with its thread id and time); while AlterConfigs v0/v1 and
  IncrementalAlterConfigs v0/v1 are answered, the reactor thread (its tid is
  the broker's pid) makes no such call, and another thread (the I/O worker)
  makes the store's. Skipped when strace is missing or ptrace is refused.
- restart_in_effect: several resources in one request are answered in the
  request's order (an unknown topic and a broker resource among them, with
  their codes); after SIGTERM and a start the configs are there
  (DescribeConfigs: value and source TOPIC_CONFIG) and in effect: a small
  segment.bytes makes new segments roll; an incremental change kept the
  keys set before it.
- connection_dies_while_parked: clients that send an AlterConfigs and close
  at once, while the store is being written: the broker logs that the
  parked request lost its connection, stays up, the configs are stored
  (also after a start) and it stops cleanly without an ERROR.

Runs on Debian's /usr/bin/python3.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kadmin  # noqa: E402
import kwire  # noqa: E402
from broker import broker_for_strace, check, eq, main, strace_attach, strace_syncs  # noqa: E402

TOPIC_CONFIG = 1  # DescribeConfigs' ConfigSource

def case_no_fsync_on_reactor(t):
    b = broker_for_strace(t)
    for name in ("fa", "fb", "fc"):
        eq(kadmin.create_topic(b.port, name, 2), 0, "CreateTopics " + name)
    trace = t.path("strace.out")
    # the broker's pid is the reactor thread's tid (it runs main()); every
    # line of the trace names the thread it comes from
    pid = b.pid
    st = strace_attach(b, trace)
    windows = []   # (what, start, end): from before the request to after its answer
    try:
        def timed(what, fn):
            t0 = time.time()
            res = fn()
            windows.append((what, t0, time.time()))
            return res

        for version in (0, 1):
            res = timed("AlterConfigs v%d" % version, lambda: kadmin.alter_configs(
                b.port, [(kadmin.TOPIC, "fa", {"retention.ms": str(3600000 + version)})],
                version=version))
            eq(res[(kadmin.TOPIC, "fa")][0], 0, "AlterConfigs v%d" % version)
            res = timed("IncrementalAlterConfigs v%d" % version,
                        lambda: kadmin.incremental_alter_configs(
                            b.port, [(kadmin.TOPIC, "fb",
                                      [("segment.bytes", kadmin.SET, str(100000 + version))])],
                            version=version))
            eq(res[(kadmin.TOPIC, "fb")][0], 0, "IncrementalAlterConfigs v%d" % version)
        res = timed("AlterConfigs of two topics", lambda: kadmin.alter_configs(
            b.port, [(kadmin.TOPIC, "fb", {"retention.ms": "7200000"}),
                     (kadmin.TOPIC, "fc", {"retention.ms": "7200001"})]))
        eq([res[(kadmin.TOPIC, n)][0] for n in ("fb", "fc")], [0, 0], "two topics")
    finally:
        b.stop()   # strace follows the broker out
        try:
            st.wait(30)
        except subprocess.TimeoutExpired:
            st.terminate()
            st.wait()
    calls = strace_syncs(trace)
    for what, t0, t1 in windows:
        inside = [c for c in calls if t0 <= c[1] <= t1]
        on_reactor = [c for c in inside if c[0] == pid]
        check(not on_reactor, "%s: %d fsync/fdatasync call(s) on the reactor thread (%d) "
              "between the request and its answer: %r", what, len(on_reactor), pid, on_reactor)
        check([c for c in inside if c[0] != pid],
              "%s: no fsync/fdatasync on another thread: the store was not written?", what)
        print("%s: %d fsync/fdatasync call(s) on the worker, none on the reactor"
              % (what, len(inside)))
    d = kadmin.describe_configs  # the configs took effect after a start too
    b.start()
    eq(d(b.port, "fa", ["retention.ms"])["retention.ms"], ("3600001", TOPIC_CONFIG), "fa")
    eq(d(b.port, "fc", ["retention.ms"])["retention.ms"], ("7200001", TOPIC_CONFIG), "fc")
    b.stop()


def case_restart_in_effect(t):
    b = t.broker()
    for name in ("r1", "r2"):
        eq(kadmin.create_topic(b.port, name, 1), 0, "CreateTopics " + name)
    got = kadmin.alter_configs_list(b.port, [
        (kadmin.TOPIC, "r2", {"retention.ms": "3600000"}),
        (kadmin.TOPIC, "nope", {"retention.ms": "1"}),
        (kadmin.BROKER, "0", {"log.retention.ms": "1"}),
        (kadmin.TOPIC, "r1", {"retention.ms": "7200000", "segment.bytes": "2000"}),
    ])
    eq([(ty, n, err) for ty, n, err, _ in got],
       [(kadmin.TOPIC, "r2", 0), (kadmin.TOPIC, "nope", kadmin.UNKNOWN_TOPIC_OR_PARTITION),
        (kadmin.BROKER, "0", kadmin.INVALID_REQUEST), (kadmin.TOPIC, "r1", 0)],
       "AlterConfigs answered in the request's order")
    eq(got[1][3], 'topic "nope" does not exist', "unknown topic's message")
    check(got[0][3] is None and got[3][3] is None, "messages of the stored ones: %r", got)
    for version in (0, 1):
        res = kadmin.incremental_alter_configs(
            b.port, [(kadmin.TOPIC, "r2", [("segment.bytes", kadmin.SET, str(2000 + version))])],
            version=version)
        eq(res[(kadmin.TOPIC, "r2")], (0, None), "IncrementalAlterConfigs v%d" % version)
    # validate_only: answered, nothing stored
    res = kadmin.alter_configs(b.port, [(kadmin.TOPIC, "r2", {"retention.ms": "5"})],
                               validate_only=True)
    eq(res[(kadmin.TOPIC, "r2")], (0, None), "validate_only")
    b.stop()
    b.start()
    d1 = kadmin.describe_configs(b.port, "r1", ["retention.ms", "segment.bytes"])
    eq(d1["retention.ms"], ("7200000", TOPIC_CONFIG), "r1 retention.ms after a start")
    eq(d1["segment.bytes"], ("2000", TOPIC_CONFIG), "r1 segment.bytes after a start")
    d2 = kadmin.describe_configs(b.port, "r2", ["retention.ms", "segment.bytes"])
    eq(d2["retention.ms"], ("3600000", TOPIC_CONFIG),
       "r2 retention.ms after a start (kept by the incremental changes, not validate_only's)")
    eq(d2["segment.bytes"], ("2001", TOPIC_CONFIG), "r2 segment.bytes after a start")
    # in effect: batches of about 600 bytes roll a segment every three or so
    for name in ("r1", "r2"):
        for i in range(10):
            kwire.produce(b.port, name, 0, [(b"k%d" % i, b"v" * 500)])
        n = len(kwire.segment_files(b.log_dir, name, 0))
        check(n >= 4, "%s: %d segment(s) after 10 batches of 600 B with segment.bytes 2000",
              name, n)
    b.stop()


def case_connection_dies_while_parked(t):
    b = t.broker(overrides={"log.level": "debug"})
    eq(kadmin.create_topic(b.port, "cd", 1), 0, "CreateTopics")
    rounds = 10
    for i in range(rounds):
        body = kadmin.alter_configs_body(
            [(kadmin.TOPIC, "cd", {"retention.ms": str(1000000 + i)})])
        s = kwire.connect(b.port)
        s.sendall(kwire.request(kadmin.ALTER_CONFIGS, 0, 100 + i, body))
        s.close()   # at once: the store is still being written
        kadmin.wait_log(b, "topic cd: configs replaced", count=i + 1)
        b.check_alive()
    lost = kadmin.log_lines(b, "its connection closed while its request (API 33) waited")
    check(lost, "no AlterConfigs was parked when its connection closed (of %d)", rounds)
    print("%d of %d AlterConfigs lost their connection while parked" % (len(lost), rounds))
    eq(kadmin.describe_configs(b.port, "cd", ["retention.ms"])["retention.ms"],
       (str(1000000 + rounds - 1), TOPIC_CONFIG), "retention.ms stored")
    b.stop()
    check("ERROR" not in b.log_text(), "an ERROR in the log")
    b.start()
    eq(kadmin.describe_configs(b.port, "cd", ["retention.ms"])["retention.ms"],
       (str(1000000 + rounds - 1), TOPIC_CONFIG), "retention.ms after a start")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_no_fsync_on_reactor, case_restart_in_effect,
                   case_connection_dies_while_parked]))
