"""Runs the Go client programs of tests/interop/go/ (built by meson into
$SAMSA_GO_CLIENTS, <builddir>/tests/interop) and reads what they print.

    out = go_run("sarama-client", "produce", "-brokers", b.bootstrap, ...)
                                   # the JSON objects printed, one a line;
                                   # raises ClientError (with the client's own
                                   # {"error": ...} and stderr) on a non-zero exit
    produce_records(b, topic, n, partitions)   # with kafka-python (RecordBatch v2)
    expected(n, partitions)        # {partition: [(offset, key, value, i)]}
    committed(b, group)            # {(topic, partition): offset}, kafka-python admin

The messages every program writes: message i has key "key-i", value
"value-i" (and the header seq=i where the client carries headers) and goes to
partition i % partitions, so its offset there is i // partitions.
"""

import json
import os
import subprocess

# The brokers these tests start: groups form at once (no initial rebalance
# delay) and __consumer_offsets has few partitions to create.
CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "3",
}


class ClientError(AssertionError):
    pass


def go_dir():
    d = os.environ.get("SAMSA_GO_CLIENTS")
    if not d:
        raise ClientError("SAMSA_GO_CLIENTS is not set: run through meson test, or set it to "
                          "<builddir>/tests/interop after `meson compile`")
    return d


def go_run(program, *args, timeout=90):
    exe = os.path.join(go_dir(), program)
    if not os.access(exe, os.X_OK):
        raise ClientError("%s is not built: meson compile -C <builddir> tests/interop/go-%s"
                          % (exe, program))
    argv = [exe] + [str(a) for a in args]
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise ClientError("%s %s: no exit within %d s; stdout tail: %r; stderr tail: %r"
                          % (program, args[0], timeout, (e.stdout or b"")[-500:],
                             (e.stderr or b"")[-500:]))
    objs = []
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        if line.strip():
            objs.append(json.loads(line))
    if r.returncode != 0:
        errs = [o["error"] for o in objs if isinstance(o, dict) and "error" in o]
        raise ClientError("%s %s exited %d: %s%s" % (
            program, args[0], r.returncode, "; ".join(errs) or "(no error printed)",
            stderr_tail(r.stderr)))
    return objs


def stderr_tail(data, lines=4):
    """The last few distinct lines a client wrote to stderr (a Reader that
    retries repeats its error many times), cut to 300 characters each."""
    seen = []
    for line in reversed(data.decode("utf-8", "replace").splitlines()):
        line = line.strip()[:300]
        if line and line not in seen:
            seen.append(line)
        if len(seen) == lines:
            break
    if not seen:
        return ""
    return "\n  stderr (last distinct lines):\n    " + "\n    ".join(reversed(seen))


def expected(n, partitions):
    by_part = {p: [] for p in range(partitions)}
    for i in range(n):
        p = i % partitions
        by_part[p].append((i // partitions, "key-%d" % i, "value-%d" % i, i))
    return by_part


def records(objs):
    """The message objects of a consume/read/group output, {partition: [obj]}
    in the order printed."""
    out = {}
    for o in objs:
        if "key" in o:
            out.setdefault(o["partition"], []).append(o)
    return out


def check_records(objs, n, partitions, headers=False, what="messages"):
    """Exactly the n known messages, each once, in offset order per partition."""
    got = records(objs)
    want = expected(n, partitions)
    total = sum(len(v) for v in got.values())
    if total != n:
        raise AssertionError("%s: %d read, %d produced (per partition: %s)" % (
            what, total, n, {p: len(v) for p, v in sorted(got.items())}))
    for p, rows in want.items():
        seen = [(o["offset"], o["key"], o["value"]) for o in got.get(p, [])]
        exp = [(off, k, v) for off, k, v, _ in rows]
        if seen != exp:
            raise AssertionError("%s: partition %d: expected %r..., got %r..." % (
                what, p, exp[:3], seen[:3]))
        if headers:
            for o, (_, _, _, i) in zip(got[p], rows):
                if o.get("headers") != {"seq": str(i)}:
                    raise AssertionError("%s: partition %d offset %d: headers %r, expected %r"
                                         % (what, p, o["offset"], o.get("headers"),
                                            {"seq": str(i)}))
    return got


def produce_records(b, topic, n, partitions):
    """The known messages with kafka-python (RecordBatch v2, headers seq=i)."""
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=b.bootstrap, acks="all", request_timeout_ms=15000)
    try:
        futs = [p.send(topic, key=b"key-%d" % i, value=b"value-%d" % i,
                       headers=[("seq", b"%d" % i)], partition=i % partitions)
                for i in range(n)]
        p.flush(timeout=60)
        for i, f in enumerate(futs):
            md = f.get(timeout=30)
            if md.offset != i // partitions:
                raise AssertionError("kafka-python: message %d at offset %d, expected %d"
                                     % (i, md.offset, i // partitions))
    finally:
        p.close()


def create_topic(b, topic, partitions, configs=None):
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    a = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    try:
        a.create_topics([NewTopic(topic, partitions, 1, topic_configs=configs or {})])
    finally:
        a.close()


def committed(b, group):
    from kafka import KafkaAdminClient
    a = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=15000)
    try:
        offs = a.list_consumer_group_offsets(group)
    finally:
        a.close()
    return {(tp.topic, tp.partition): om.offset for tp, om in offs.items()}
