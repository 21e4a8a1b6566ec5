"""The programs of `ci/bench --streams` (client/streams/bench/) against a
real samsa-broker, on small inputs: what the benchmark reports is only
worth something if each program does the work it claims.

- the hand-written librdkafka + LMDB word count and the runtime's word
  count (samsa-streams-bench wordcount) both end with the counts of a
  Python oracle of the bench's input (its generator written again here),
  read back with kcat as Java longs;
- latency: every output read, each with LogAppendTime, as many as the
  scenario makes, 0 <= p50 <= p99 <= max;
- restore after kill -9: the word count SIGKILLed after its last commit,
  started again once its group is empty: the memory store replays the
  whole changelog, the LMDB store nothing past its file's positions, and
  no input record is processed again.

    test_streams_bench.py SAMSA_BROKER SAMSA_TOOL STREAMS_BENCH STREAMS_BENCH_RDKAFKA [-k CASE]
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_streams_integration import read_output  # noqa: E402  (kcat, values as Java longs)

TOOL = None
BENCH = None
BENCH_RDKAFKA = None
TIMEOUT = 120
CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "1",
    "num.partitions": "1",
}
KEYS = 10000


def samsa(*args):
    p = subprocess.run([TOOL] + list(args), capture_output=True, text=True, timeout=TIMEOUT)
    check(p.returncode == 0, "samsa %s: exit %d: %s", " ".join(args), p.returncode, p.stderr)
    return p.stdout


def bench(*args, prog=None, rc=0):
    p = subprocess.run([prog or BENCH] + list(args), capture_output=True, text=True,
                       timeout=TIMEOUT * 2)
    eq(p.returncode, rc, "%s %s's exit status (stderr: %s)"
       % (os.path.basename(prog or BENCH), " ".join(args), p.stderr[-2000:]))
    return json.loads(p.stdout) if p.stdout.strip() else None


def oracle(n):
    """Word counts of the bench's first n lines (streams_bench.c's line_of)."""
    seed = 12345
    counts = {}
    for _ in range(n):
        for _ in range(3):
            seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
            w = "w%d" % ((seed >> 8) % KEYS)
            counts[w] = counts.get(w, 0) + 1
    return counts


def last_counts(bs, topic):
    return {k: seq[-1] for k, seq in read_output(bs, topic).items()}


def setup(t, n):
    bs = t.broker(config=CONFIG).bootstrap
    samsa("topic", "create", "-b", bs, "lines", "--partitions", "4")
    bench(bs, "produce", "lines", str(n))
    return bs


def case_both_word_counts_end_with_the_oracle(t):
    n = 3000
    bs = setup(t, n)
    want = oracle(n)
    for app in ("diy", "rt"):
        samsa("topic", "create", "-b", bs, app + "-out", "--partitions", "4")
    r = bench(bs, "lines", str(n), "diy", t.path("diy-state"), prog=BENCH_RDKAFKA)
    eq(r["lines"], n, "lines the librdkafka loop counted")
    eq(last_counts(bs, "diy-out"), want, "the librdkafka + LMDB loop's last count per word")
    r = bench(bs, "wordcount", "lines", str(n), "rt", "state.dir=" + t.path("rt-state"))
    eq(r["records"], 4 * n, "records the runtime processed (a line and its 3 words)")
    eq(last_counts(bs, "rt-out"), want, "the runtime's last count per word")


def case_latency_reads_every_output_with_log_append_time(t):
    bs = t.broker(config=CONFIG).bootstrap
    n = 2000
    for scenario, outputs in (("raw", n), ("stateless", n - n // 10), ("wordcount", 3 * n)):
        app = "lat-" + scenario
        for topic in (app + "-in", app + "-out"):
            samsa("topic", "create", "-b", bs, topic, "--partitions", "4",
                  "--config", "message.timestamp.type=LogAppendTime")
        r = bench(bs, "latency", scenario, app + "-in", "2000", str(n), app)
        eq(r["outputs"], outputs, "%s: outputs read back" % scenario)
        check(0 <= r["p50_ms"] <= r["p99_ms"] <= r["max_ms"], "%s: percentiles %s", scenario, r)
        print("  %s: %s" % (scenario, r))


def wait_group_empty(bs, group):
    deadline = time.monotonic() + 60
    state = None
    while time.monotonic() < deadline:
        out = samsa("group", "describe", "-b", bs, group, "--state").splitlines()
        state = out[1].split()[-2] if len(out) > 1 else None
        if state == "Empty":
            return
        time.sleep(0.2)
    raise AssertionError("group %s still %s after 60 s" % (group, state))


def case_restore_after_kill_9(t):
    n = 3000
    bs = setup(t, n)
    for store in ("memory", "lmdb"):
        app = "rs-" + store
        extra = ["session.timeout.ms=6000"]
        if store == "lmdb":
            extra.append("state.dir=" + t.path("state"))
        samsa("topic", "create", "-b", bs, app + "-out", "--partitions", "4")
        r = bench(bs, "wordcount", "lines", str(n), app, "then=sigkill", *extra, rc=-9)
        eq(r["records"], 4 * n, "%s: records processed before the kill" % store)
        wait_group_empty(bs, app)
        r = bench(bs, "restore", "lines", str(n), app, *extra)
        print("  %s: %s" % (store, r))
        eq(r["changelog_records"], 3 * n, "%s: the changelog's records" % store)
        eq(r["restored"], 3 * n if store == "memory" else 0, "%s: records replayed" % store)
        eq(r["reprocessed"], 0, "%s: input records processed again" % store)


if __name__ == "__main__":
    BENCH_RDKAFKA = os.path.abspath(sys.argv.pop(4))
    BENCH = os.path.abspath(sys.argv.pop(3))
    TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_both_word_counts_end_with_the_oracle,
                   case_latency_reads_every_output_with_log_append_time,
                   case_restore_after_kill_9]))
