#!/usr/bin/python3
"""kcat 1.7.1 (librdkafka 2.0.2) against samsa-broker.

    test_kcat.py SAMSA_BROKER [-k CASE]

- codec_<c> for none, gzip, snappy, lz4, zstd: 100,000 keyed messages
  produced with `kcat -P -K: -z <c> -p N` into three partitions of an
  auto-created topic, read back with `kcat -C -e -o beginning`: every key
  and value byte for byte, in produce order per partition, offsets 0..n-1,
  CreateTime timestamps from the producing run; the segments on disk hold
  batches of that codec; then `-o <offset>`, `-o -<n>`, `-o <offset> -c`
  and `-o end -e` on one partition.
- offsets_by_time: three runs of kcat -P with a known instant between
  them; `kcat -Q` and `kcat -C -o s@<ts>` find the first message of the
  next run; a timestamp after the last message gives -1.
- metadata_listing: `kcat -L` (text and -J): the broker, the topics, their
  partitions with leader, replicas and ISR.
- empty_topic_eof: `-e` on a topic with no messages exits at once with
  nothing printed.
"""

import json
import os
import random
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

N_MESSAGES = 100_000
PARTITIONS = 3
CODEC_ID = kwire.CODECS

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima "
         "mike november oscar papa quebec romeo sierra tango uniform victor whiskey "
         "xray yankee zulu").split()
EXTRA = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+,-./;<=>?@[]^_{|}~\"'"


def now_ms():
    return int(time.time() * 1000)


def broker_config():
    return {"num.partitions": str(PARTITIONS)}


def kcat(b, args, data=None, timeout=120):
    """Runs kcat against broker b; returns stdout (bytes). Fails on a non-zero
    exit status, a timeout, or a delivery error on stderr."""
    argv = ["kcat", "-b", b.bootstrap, "-m", "15"] + args
    try:
        p = subprocess.run(argv, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise AssertionError("%s did not exit within %d s; stderr: %s"
                             % (" ".join(argv), timeout,
                                (e.stderr or b"").decode(errors="replace")[-2000:]))
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        raise AssertionError("%s exited with status %d; stderr:\n%s"
                             % (" ".join(argv), p.returncode, err[-3000:]))
    if "Delivery failed" in err or "ERROR" in err:
        raise AssertionError("%s reported errors:\n%s" % (" ".join(argv), err[-3000:]))
    return p.stdout


def make_messages(seed, n, prefix):
    """n (key, value) pairs of printable ASCII without ':', tab or newline;
    keys are unique, values vary in length (1..~200 bytes) and compress."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        key = "%s-%06d" % (prefix, i)
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 20)))
        tail = "".join(rng.choice(EXTRA) for _ in range(rng.randint(1, 24)))
        out.append((key, "%d %s %s" % (i, words, tail)))
    return out


def produce(b, topic, partition, msgs, codec):
    """kcat -P of msgs into one partition -> (t_before_ms, t_after_ms)."""
    data = "".join("%s:%s\n" % kv for kv in msgs).encode()
    t0 = now_ms()
    kcat(b, ["-P", "-t", topic, "-p", str(partition), "-K", ":", "-z", codec], data=data)
    return t0, now_ms()


FMT = r"%p\t%o\t%T\t%k\t%s\n"


def consume(b, args):
    """kcat -C with FMT -> list of (partition, offset, ts, key, value)."""
    out = kcat(b, ["-C", "-q", "-e", "-f", FMT] + args)
    rows = []
    for line in out.decode().split("\n")[:-1]:
        p, o, ts, k, v = line.split("\t", 4)
        rows.append((int(p), int(o), int(ts), k, v))
    check(out == b"" or out.endswith(b"\n"), "kcat output does not end with a newline")
    return rows


def by_partition(rows):
    parts = {}
    for p, o, ts, k, v in rows:
        parts.setdefault(p, []).append((o, ts, k, v))
    return parts


def check_partition(topic, p, got, msgs, t0, t1, first_offset=0):
    """got: [(offset, ts, key, value)] as read; msgs: [(key, value)] as
    produced from first_offset on."""
    what = "%s-%d" % (topic, p)
    eq(len(got), len(msgs), what + ": message count")
    for i, ((o, ts, k, v), (ek, ev)) in enumerate(zip(got, msgs)):
        if o != first_offset + i:
            raise AssertionError("%s: message %d has offset %d, expected %d"
                                 % (what, i, o, first_offset + i))
        if k != ek or v != ev:
            raise AssertionError("%s offset %d: expected %r:%r, got %r:%r"
                                 % (what, o, ek, ev, k, v))
        if not t0 <= ts <= t1:
            raise AssertionError("%s offset %d: timestamp %d is outside the producing "
                                 "run [%d, %d]" % (what, o, ts, t0, t1))


def check_codec_on_disk(b, topic, p, codec, n):
    """Batches on disk: contiguous, magic 2, n records, the codec."""
    batches = kwire.disk_batches(b.log_dir, topic, p)
    eq(sum(x.record_count for x in batches), n, "%s-%d: records on disk" % (topic, p))
    expect = 0
    for x in batches:
        eq(x.base_offset, expect, "%s-%d: base offset of the batch at byte %d"
           % (topic, p, x.position))
        eq(x.magic, 2, "%s-%d: magic of the batch at offset %d" % (topic, p, x.base_offset))
        expect = x.last_offset + 1
    kwire.check_codec(batches, codec, "%s-%d on disk" % (topic, p))
    compressed = sum(x.record_count for x in batches if x.codec == CODEC_ID[codec])
    check(compressed >= 0.9 * n, "%s-%d: only %d of %d records in %s batches",
          topic, p, compressed, n, codec)


def codec_case(codec):
    def case(t):
        b = t.broker(config=broker_config())
        topic = "kcat-" + codec
        msgs = make_messages(codec, N_MESSAGES, codec)
        per = [msgs[p::PARTITIONS] for p in range(PARTITIONS)]
        windows = [produce(b, topic, p, per[p], codec) for p in range(PARTITIONS)]

        parts = by_partition(consume(b, ["-t", topic, "-o", "beginning"]))
        eq(sorted(parts), list(range(PARTITIONS)), topic + ": partitions read")
        for p in range(PARTITIONS):
            check_partition(topic, p, parts[p], per[p], *windows[p])
            check_codec_on_disk(b, topic, p, codec, len(per[p]))

        # Starting points on partition 1, usually inside a batch.
        p = 1
        n = len(per[p])
        t0, t1 = windows[p]
        start = n // 2 + 7
        got = by_partition(consume(b, ["-t", topic, "-p", str(p), "-o", str(start)]))
        check_partition(topic, p, got.get(p, []), per[p][start:], t0, t1, first_offset=start)
        got = by_partition(consume(b, ["-t", topic, "-p", str(p), "-o", "-100"]))
        check_partition(topic, p, got.get(p, []), per[p][n - 100:], t0, t1, first_offset=n - 100)
        out = kcat(b, ["-C", "-q", "-t", topic, "-p", str(p), "-o", "5", "-c", "10",
                       "-f", FMT])
        rows = [tuple(line.split("\t", 4)) for line in out.decode().split("\n")[:-1]]
        got = [(int(o), int(ts), k, v) for _, o, ts, k, v in rows]
        check_partition(topic, p, got, per[p][5:15], t0, t1, first_offset=5)
        eq(consume(b, ["-t", topic, "-p", str(p), "-o", "end"]), [],
           topic + ": kcat -o end -e output")
    case.__name__ = "case_codec_" + codec
    return case


def case_offsets_by_time(t):
    b = t.broker(config=broker_config())
    topic = "kcat-time"
    runs = [make_messages("time%d" % i, 1000, "r%d" % i) for i in range(3)]
    windows = []
    marks = []
    for i, msgs in enumerate(runs):
        if i:
            time.sleep(0.05)
            marks.append(now_ms())
            time.sleep(0.05)
        windows.append(produce(b, topic, 0, msgs, "gzip"))
    for i in range(1, 3):
        check(windows[i - 1][1] < marks[i - 1] < windows[i][0], "clock marks out of order")

    def query(ts):
        out = kcat(b, ["-Q", "-t", "%s:0:%d" % (topic, ts)]).decode()
        m = re.search(r"offset (-?\d+)", out)
        check(m is not None, "kcat -Q printed no offset: %r", out)
        return int(m.group(1))

    eq(query(marks[0]), 1000, "kcat -Q at the instant between runs 1 and 2")
    eq(query(marks[1]), 2000, "kcat -Q at the instant between runs 2 and 3")
    eq(query(windows[0][0] - 60_000), 0, "kcat -Q a minute before the first message")
    eq(query(windows[2][1] + 60_000), -1, "kcat -Q a minute after the last message")

    got = by_partition(consume(b, ["-t", topic, "-p", "0", "-o", "s@%d" % marks[0]]))[0]
    check_partition(topic, 0, got[:1000], runs[1], *windows[1], first_offset=1000)
    check_partition(topic, 0, got[1000:], runs[2], *windows[2], first_offset=2000)
    got = by_partition(consume(b, ["-t", topic, "-p", "0", "-o", "s@%d" % marks[1]]))[0]
    check_partition(topic, 0, got, runs[2], *windows[2], first_offset=2000)


def case_metadata_listing(t):
    b = t.broker(config=broker_config())
    names = ["kcat-meta-a", "kcat-meta-b"]
    for name in names:
        produce(b, name, 0, [("k", "v")], "none")

    md = json.loads(kcat(b, ["-L", "-J"]))
    eq([(x["id"], x["name"]) for x in md["brokers"]], [(0, b.bootstrap)], "kcat -L -J brokers")
    topics = {x["topic"]: x for x in md["topics"]}
    for name in names:
        check(name in topics, "kcat -L -J does not list %s: %r", name, sorted(topics))
        tp = topics[name]
        check(not tp.get("error"), "%s listed with error %r", name, tp.get("error"))
        parts = sorted(tp["partitions"], key=lambda x: x["partition"])
        eq([x["partition"] for x in parts], list(range(PARTITIONS)), name + " partitions")
        for x in parts:
            eq(x["leader"], 0, "%s-%d leader" % (name, x["partition"]))
            eq([r["id"] for r in x["replicas"]], [0], "%s-%d replicas" % (name, x["partition"]))
            eq([r["id"] for r in x["isrs"]], [0], "%s-%d isrs" % (name, x["partition"]))
            check(not x.get("error"), "%s-%d error %r", name, x["partition"], x.get("error"))

    one = json.loads(kcat(b, ["-L", "-J", "-t", names[1]]))
    eq([x["topic"] for x in one["topics"]], [names[1]], "kcat -L -J -t topics")

    text = kcat(b, ["-L"]).decode()
    check(re.search(r'1 brokers:\s*\n\s*broker 0 at %s' % re.escape(b.bootstrap), text),
          "kcat -L does not show the broker:\n%s", text)
    for name in names:
        check('topic "%s" with %d partitions:' % (name, PARTITIONS) in text,
              "kcat -L does not list %s:\n%s", name, text)


def case_empty_topic_eof(t):
    b = t.broker(config=broker_config())
    topic = "kcat-empty"
    kwire.create_topic(b.port, topic, PARTITIONS)
    eq(consume(b, ["-t", topic, "-o", "beginning"]), [], "kcat -C -e on an empty topic")
    eq(consume(b, ["-t", topic, "-p", "2", "-o", "beginning"]), [],
       "kcat -C -e -p 2 on an empty topic")


CASES = [codec_case(c) for c in ("none", "gzip", "snappy", "lz4", "zstd")] + [
    case_offsets_by_time, case_metadata_listing, case_empty_topic_eof]

if __name__ == "__main__":
    sys.exit(main(CASES))
