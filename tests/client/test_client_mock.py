"""libsamsa (through the samsa tool) against librdkafka's mock cluster, an
implementation of the Kafka protocol independent of Samsa's broker: three
mock brokers leading the partitions of one topic between them.

    test_client_mock.py SAMSA_BROKER SAMSA_TOOL SAMSA_MOCK_CLUSTER [-k CASE]

SAMSA_BROKER is unused (the shared harness wants it first); the mock cluster
process is started by each case and stopped by its PID.
"""
import json
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402

TOOL = None
MOCK = None
PARTITIONS = 12


class MockCluster:
    def __init__(self, t, topics, brokers=3):
        self.err = open(t.path("mock.err"), "wb")
        argv = [MOCK, "--brokers", str(brokers)]
        for name in topics:
            argv += ["--topic", "%s:%d" % (name, PARTITIONS)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.err)
        line = self.proc.stdout.readline().decode().strip()
        check(line.count(":") == brokers, "mock cluster printed %r", line)
        self.bootstrap = line

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.err.close()


def samsa(*args, stdin=None, expect=0):
    p = subprocess.run([TOOL] + list(args), input=stdin, capture_output=True, timeout=120)
    if expect is not None and p.returncode != expect:
        raise AssertionError("samsa %s: exit %d (wanted %d)\nstdout: %s\nstderr: %s"
                             % (" ".join(args), p.returncode, expect, p.stdout[-2000:],
                                p.stderr[-2000:]))
    return p


def murmur2(data):
    """Java's Utils.murmur2, for where the Java client places a key."""
    m, r = 0x5bd1e995, 24
    h = (0x9747b28c ^ len(data)) & 0xffffffff
    n4 = len(data) // 4
    for i in range(n4):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * m) & 0xffffffff
        k ^= k >> r
        k = (k * m) & 0xffffffff
        h = (h * m) & 0xffffffff
        h ^= k
    tail = data[4 * n4:]
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if len(tail) >= 1:
        h ^= tail[0]
        h = (h * m) & 0xffffffff
    h ^= h >> 13
    h = (h * m) & 0xffffffff
    h ^= h >> 15
    return h


def case_produce_and_consume_through_three_mock_brokers(t):
    topics = ["mock-%s" % c for c in ("none", "gzip", "snappy", "lz4", "zstd")]
    mc = MockCluster(t, topics)
    try:
        d = json.loads(samsa("topic", "describe", "-b", mc.bootstrap, topics[0], "--json").stdout)
        leaders = {p["leader"] for p in d[0]["partition_info"]}
        eq(d[0]["partitions"], PARTITIONS, "partitions of the mock topic")
        check(len(leaders) > 1, "one leader for every partition (%s): no parallel fetch tested",
              leaders)
        keys = ["key-%d" % i for i in range(2000)]
        for topic in topics:
            codec = topic.split("-")[1]
            p = samsa("produce", "-b", mc.bootstrap, "-t", topic, "-K", "\t",
                      "-X", "compression.type=" + codec, "-X", "linger.ms=10",
                      stdin="".join("%s\tvalue of %s\n" % (k, k) for k in keys).encode())
            check(b"2000 delivered, 0 failed" in p.stderr, "%s: %s", codec, p.stderr)
            out = samsa("consume", "-b", mc.bootstrap, "-t", topic, "--from", "beginning", "-e",
                        "-f", "%p\t%o\t%k\t%s\\n").stdout.decode().splitlines()
            eq(len(out), 2000, "%s: records read back" % codec)
            by_part = {}
            for line in out:
                part, off, key, value = line.split("\t")
                eq(value, "value of " + key, "%s: value of %s" % (codec, key))
                eq(int(part), (murmur2(key.encode()) & 0x7fffffff) % PARTITIONS,
                   "%s: the partition of %s" % (codec, key))
                by_part.setdefault(int(part), []).append((int(off), int(key[4:])))
            for part, recs in by_part.items():
                eq([o for o, _ in recs], list(range(len(recs))), "%s: offsets of %d" % (codec, part))
                eq([k for _, k in recs], sorted(k for _, k in recs),
                   "%s: production order inside partition %d" % (codec, part))
    finally:
        mc.stop()


def case_group_member_commits_and_resumes_on_the_mock(t):
    mc = MockCluster(t, ["mock-group"])
    try:
        values = ["v%d" % i for i in range(400)]
        samsa("produce", "-b", mc.bootstrap, "-t", "mock-group",
              stdin="".join(v + "\n" for v in values).encode())
        # The mock waits for a member that left until its session times out
        # (kcat does the same): a short session keeps the second join short.
        fast = ["-X", "heartbeat.interval.ms=200", "-X", "session.timeout.ms=3000"]
        first = samsa("consume", "-b", mc.bootstrap, "-t", "mock-group", "--group", "mg",
                      "--from", "beginning", "--count", "150", *fast).stdout.decode().split()
        eq(len(first), 150, "the first member's records")
        rest = samsa("consume", "-b", mc.bootstrap, "-t", "mock-group", "--group", "mg",
                     "--from", "beginning", "--count", "250", *fast).stdout.decode().split()
        eq(sorted(first + rest), sorted(values), "the two members read each record once")
        # A third member starts at the committed ends: nothing left (-e).
        more = samsa("consume", "-b", mc.bootstrap, "-t", "mock-group", "--group", "mg",
                     "--from", "beginning", "-e", *fast).stdout.decode().split()
        eq(more, [], "records after the committed offsets")
        # The mock has no DescribeGroups, and its OffsetFetch of a whole group
        # (null topics) does not decode: both said plainly, exit 1.
        p = samsa("group", "describe", "-b", mc.bootstrap, "mg", "--timeout", "5000", expect=1)
        check(b"does not offer DescribeGroups (API 15)" in p.stderr, "%s", p.stderr)
        check(b"BAD_RESPONSE" in p.stderr, "%s", p.stderr)
    finally:
        mc.stop()


def case_perf_against_the_mock(t):
    mc = MockCluster(t, ["mock-perf"])
    try:
        r = json.loads(samsa("perf", "produce", "-b", mc.bootstrap, "-t", "mock-perf",
                             "--count", "50000", "--json").stdout)
        eq((r["produced"], r["failed"]), (50000, 0), "perf produce on the mock")
        r = json.loads(samsa("perf", "consume", "-b", mc.bootstrap, "-t", "mock-perf", "-e",
                             "--json").stdout)
        eq(r["consumed"], 50000, "perf consume on the mock")
    finally:
        mc.stop()


if __name__ == "__main__":
    MOCK = os.path.abspath(sys.argv.pop(3))
    TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_produce_and_consume_through_three_mock_brokers,
                   case_group_member_commits_and_resumes_on_the_mock,
                   case_perf_against_the_mock]))
