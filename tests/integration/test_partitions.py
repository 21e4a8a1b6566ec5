#!/usr/bin/python3
"""Many partitions under a small open file limit: the descriptors a broker
keeps follow the files in use (log.open.files.max), not the partitions.

    test_partitions.py SAMSA_BROKER [-k CASE]

- thousand_under_256: the broker runs under `ulimit -n 256` (soft and hard)
  and holds 1,000 partitions (100 topics x 10, created in CreateTopics
  batches), four times what 4 descriptors a partition allowed. Every
  partition takes a Produce and gives it back (single-partition Fetches and
  Fetches of 100 partitions at once, whose slices outlive the eviction of
  their files), Metadata lists every topic's partitions with a leader, the
  broker never holds more descriptors than its budget (half the limit) plus
  a few, and it says at start-up what the partitions need and what the
  limit is. After SIGTERM and a start every record is there and new ones
  are taken; after SIGKILL and a start (recovery scans every partition's
  newest segment) too.
- ten_thousand_under_20000 (suite slow): 2,000 topics x 5 partitions =
  10,000 partitions under `ulimit -n 20000`, created in CreateTopics batches,
  a sample produced and fetched, per-topic Metadata for every topic, the
  whole cluster in one all-topics Metadata v1, kcat -L and DescribeLogDirs
  (with their sizes and times), SIGTERM and a start, SIGKILL and a start; prints how long creating and
  each start took.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402
import test_metadata_limits as limits  # noqa: E402

# Descriptors a broker may hold beyond its budget of segment files in these
# tests: listeners, epoll, signal, timer and event descriptors, the log dir
# lock, stdin/stdout/stderr, a connection or two of the test.
SLACK = 40


def topic_names(prefix, n):
    return ["%s-%04d" % (prefix, i) for i in range(n)]


def create_all(b, topics, per_topic, batch, timeout=600.0):
    """CreateTopics v0 in batches of `batch` topics on one connection;
    returns [(topic, partition)]. Fails on any error code."""
    with kwire.connect(b.port, timeout=timeout) as s:
        for i in range(0, len(topics), batch):
            chunk = topics[i:i + batch]
            req = kwire.create_topics_v0_batch(1000 + i, [(t, per_topic) for t in chunk],
                                               timeout_ms=int(timeout * 1000))
            _, errs = kwire.parse_create_topics_v0(kwire.roundtrip(s, req, timeout))
            bad = {t: e for t, e in errs.items() if e != kwire.NONE}
            check(not bad and len(errs) == len(chunk),
                  "CreateTopics of %d topics from %s: errors %r (%d answered)",
                  len(chunk), chunk[0], dict(list(bad.items())[:5]), len(errs))
    return [(t, p) for t in topics for p in range(per_topic)]


def value(tag, tp, k):
    return b"%s/%s/%d/%d" % (tag.encode(), tp[0].encode(), tp[1], k)


def produce_to(b, parts, tag, count=2):
    """`count` records into each partition, one Produce each on one
    connection; returns {tp: base offset}."""
    bases = {}
    with kwire.connect(b.port) as s:
        for tp in parts:
            recs = [(b"k%d" % k, value(tag, tp, k)) for k in range(count)]
            bases[tp] = kwire.produce(b.port, tp[0], tp[1], recs, sock=s)
    return bases


def fetch_values(b, wanted, timeout=30.0):
    """One Fetch v4 for [(tp, offset)]: {tp: [values from offset]}. Fails on
    a partition error or a bad batch."""
    corr = 77
    req = kwire.fetch_v4_many(corr, [(tp[0], tp[1], off) for tp, off in wanted],
                              max_bytes=64 << 20, partition_max_bytes=1 << 20)
    with kwire.connect(b.port, timeout=timeout) as s:
        got_corr, parts = kwire.parse_fetch_v4(kwire.roundtrip(s, req, timeout))
    eq(got_corr, corr, "Fetch correlation id")
    out = {}
    for tp, off in wanted:
        err, hw, records = parts[tp]
        check(err == kwire.NONE, "Fetch %s-%d at %d: error %d", tp[0], tp[1], off, err)
        batches, tail = kwire.parse_batches(records or b"")
        vals = []
        for x in batches:
            check(x.magic == 2 and x.crc_ok(), "Fetch %s-%d: a bad batch at offset %d",
                  tp[0], tp[1], x.base_offset)
            vals.extend(v for o, _, _, v in x.records() if o >= off)
        out[tp] = vals
    return out


def expect(per_tp_tags, count=2):
    """The values each partition holds after the rounds in per_tp_tags."""
    return {tp: [value(tag, tp, k) for tag in tags for k in range(count)]
            for tp, tags in per_tp_tags.items()}


def check_contents(b, parts, want, group=100):
    """Every partition of parts holds exactly want[tp] from offset 0, read
    with Fetches of `group` partitions at once."""
    for i in range(0, len(parts), group):
        chunk = parts[i:i + group]
        got = fetch_values(b, [(tp, 0) for tp in chunk])
        for tp in chunk:
            eq(got[tp], want[tp], "records of %s-%d" % tp)


def check_metadata(b, topics, per_topic):
    """Per-topic Metadata v1 (one topic a request) lists every partition
    with this broker as leader."""
    with kwire.connect(b.port) as s:
        for i, t in enumerate(topics):
            _, _, _, answer = kwire.parse_metadata_v1(
                kwire.roundtrip(s, kwire.metadata_v1(5000 + i, [t])))
            err, parts = answer[t]
            eq(err, kwire.NONE, "Metadata error of %s" % t)
            eq(sorted(parts), list(range(per_topic)), "Metadata partitions of %s" % t)
            check(all(e == kwire.NONE and leader == 0 for e, leader in parts.values()),
                  "Metadata of %s: %r", t, parts)


def check_fds(b, budget, what):
    n = b.open_fds()
    check(n <= budget + SLACK, "%s: the broker holds %d descriptors, budget %d + %d",
          what, n, budget, SLACK)
    return n


def start_line(b, partitions, budget, limit):
    """The start-up line about descriptors, checked."""
    lines = kadmin.wait_log(b, "partition(s) with", timeout=5)
    line = lines[-1]
    for part in ("%d partition(s)" % partitions, "log.open.files.max %d" % budget,
                 "open file limit %d" % limit):
        check(part in line, "start-up line %r lacks %r", line, part)
    return line


def case_thousand_under_256(t):
    limit = 256
    budget = limit // 2
    b = t.broker(nofile=limit)
    topics = topic_names("fd", 100)
    parts = create_all(b, topics, 10, batch=20)
    eq(len(parts), 1000, "partitions")
    check_fds(b, budget, "after creating 1,000 partitions")
    produce_to(b, parts, "one")
    rounds = {tp: ["one"] for tp in parts}
    check_fds(b, budget, "after producing to each")
    # a single-partition reader for a sample, then every partition in
    # Fetches of 100 partitions: a response holds 100 slices, most of whose
    # files the budget of 128 has closed again by the time it is sent
    for tp in parts[::37]:
        records, hw = kwire.read_partition(b.port, tp[0], tp[1])
        eq([r[3] for r in records], expect({tp: ["one"]})[tp], "read_partition %s-%d" % tp)
    check_contents(b, parts, expect(rounds))
    check_metadata(b, topics, 10)
    n = check_fds(b, budget, "after reading every partition")
    print("  1,000 partitions under ulimit -n %d: %d descriptors open (budget %d)"
          % (limit, n, budget), flush=True)
    start_line(b, 0, budget, limit)

    b.stop()
    b.start()
    start_line(b, 1000, budget, limit)
    check_fds(b, budget, "after a start on 1,000 partitions")
    check_contents(b, parts, expect(rounds))
    produce_to(b, parts[1::2], "two")
    for tp in parts[1::2]:
        rounds[tp].append("two")
    check_contents(b, parts, expect(rounds))

    b.kill()
    b.start()
    start_line(b, 1000, budget, limit)
    check_fds(b, budget, "after recovering 1,000 partitions")
    check_contents(b, parts, expect(rounds))
    check_metadata(b, topics[::9], 10)
    produce_to(b, parts[::50], "three")
    for tp in parts[::50]:
        rounds[tp].append("three")
    check_contents(b, parts[::50], expect(rounds))
    b.stop()


def metadata_at_scale(b, topics):
    """The whole cluster in one answer: an all-topics Metadata v1, kcat -L and
    DescribeLogDirs list every partition (responses are sized by what they
    hold, not by the request). Prints the sizes and times."""
    for _ in range(3):
        size, took, _, _, parsed = limits.metadata(b.port, None, timeout=60.0)
        print("  all-topics Metadata v1: %d topics, %d partitions, %d bytes in %.3f s"
              % (len(parsed), sum(len(p) for _, p in parsed.values()), size, took), flush=True)
    eq(sorted(parsed), sorted(topics), "all-topics Metadata")
    for n in topics:
        limits.check_partitions(parsed, n, 5)
    listed, took = limits.kcat_metadata(b)
    print("  kcat -L: %d topics, %d partitions in %.2f s"
          % (len(listed), sum(listed.values()), took), flush=True)
    eq(listed, {n: 5 for n in topics}, "kcat -L")
    eq(len(limits.log_dir_partitions(b)), 5 * len(topics), "DescribeLogDirs partitions")


def case_ten_thousand_under_20000(t):
    limit = 20000
    budget = limit // 2
    b = t.broker(nofile=limit)
    topics = topic_names("many", 2000)
    t0 = time.monotonic()
    parts = create_all(b, topics, 5, batch=100)
    t_create = time.monotonic() - t0
    eq(len(parts), 10000, "partitions")
    check_fds(b, budget, "after creating 10,000 partitions")
    sample = parts[::47] + [(topics[-1], p) for p in range(5)]
    produce_to(b, sample, "one")
    rounds = {tp: ["one"] for tp in sample}
    check_contents(b, sample, expect(rounds))
    check_metadata(b, topics, 5)
    metadata_at_scale(b, topics)

    b.stop()
    t0 = time.monotonic()
    b.start(timeout=600)
    t_start = time.monotonic() - t0
    start_line(b, 10000, budget, limit)
    check_contents(b, sample, expect(rounds))
    produce_to(b, sample[::2], "two")
    for tp in sample[::2]:
        rounds[tp].append("two")
    n = check_fds(b, budget, "after a start on 10,000 partitions")

    b.kill()
    t0 = time.monotonic()
    b.start(timeout=600)
    t_recover = time.monotonic() - t0
    start_line(b, 10000, budget, limit)
    check_contents(b, sample, expect(rounds))
    check_metadata(b, topics[::10], 5)
    check_fds(b, budget, "after recovering 10,000 partitions")
    b.stop()
    print("  10,000 partitions (2,000 topics) under ulimit -n %d: created in %.1f s, "
          "started after SIGTERM in %.1f s, after SIGKILL in %.1f s; %d descriptors open "
          "(budget %d)" % (limit, t_create, t_start, t_recover, n, budget), flush=True)


if __name__ == "__main__":
    sys.exit(main([case_thousand_under_256, case_ten_thousand_under_20000]))
