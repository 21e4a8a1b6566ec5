#!/usr/bin/python3
"""Responses sized by what they hold: Metadata, DescribeConfigs and
DescribeLogDirs of many topics and partitions, against the real broker.

    test_metadata_limits.py SAMSA_BROKER [-k CASE]

- partitions_1100: one topic of 1,100 partitions comes back whole from
  Metadata v1 (raw), from kcat -L and from DescribeLogDirs.
- topics_2000: 2,000 topics: an all-topics Metadata v1 (raw), kcat -L and
  kafka-python's list_topics() list every one of them; DescribeConfigs of 60
  topics (raw v0 and v1, and kafka-python's admin client) and of all 2,000
  answers each topic with its configs; DescribeLogDirs lists every partition.
- response_ceiling: with response.max.bytes=32768, a response that does not
  fit is answered as Kafka's handleError answers (every entry of the request
  UNKNOWN_SERVER_ERROR, Metadata without brokers, DescribeLogDirs with no log
  dir), the broker logs one line naming the API, version, client id and the
  ceiling, and the connection goes on serving.

Each case prints the sizes and times it measured (the response bytes
include the 4-byte size).
"""

import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402
from kwire import array, i8, i16, i32, string  # noqa: E402

UNKNOWN_SERVER_ERROR = -1


def raise_fd_limit():
    """Today every partition holds several descriptors: the broker inherits
    the soft limit raised to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def create_topics(port, names, partitions=1, batch=200):
    """CreateTopics v0 in batches of `batch` topics; asserts every one was
    created. Returns the seconds it took."""
    t0 = time.monotonic()
    for i in range(0, len(names), batch):
        topics = [string(n) + i32(partitions) + i16(1) + array([]) + array([])
                  for n in names[i:i + batch]]
        req = kwire.request(kwire.CREATE_TOPICS, 0, 31, array(topics) + i32(60000))
        with kwire.connect(port) as s:
            _, errs = kwire.parse_create_topics_v0(kwire.roundtrip(s, req, 300.0))
        bad = {n: e for n, e in errs.items() if e != 0}
        check(not bad, "CreateTopics errors: %r", dict(list(bad.items())[:5]))
        eq(len(errs), len(topics), "CreateTopics results")
    return time.monotonic() - t0


def metadata(port, topics=None, timeout=30.0):
    """Metadata v1 on a connection of its own -> (response bytes, seconds,
    brokers, controller, {topic: (err, {p: (err, leader)})})."""
    with kwire.connect(port) as s:
        t0 = time.monotonic()
        try:
            resp = kwire.roundtrip(s, kwire.metadata_v1(11, topics), timeout)
        except kwire.Closed as e:
            raise AssertionError("Metadata v1 of %s: the broker closed the connection (%s)"
                                 % ("all topics" if topics is None else "%d topic(s)"
                                    % len(topics), e))
        took = time.monotonic() - t0
    corr, brokers, controller, parsed = kwire.parse_metadata_v1(resp)
    eq(corr, 11, "Metadata correlation id")
    return len(resp) + 4, took, brokers, controller, parsed


def check_partitions(parsed, topic, n):
    check(topic in parsed, "Metadata lacks topic %s", topic)
    err, parts = parsed[topic]
    eq(err, 0, "Metadata error of %s" % topic)
    eq(sorted(parts), list(range(n)), "partitions of %s" % topic)
    bad = {p: v for p, v in parts.items() if v != (0, 0)}
    check(not bad, "%s: partitions with an error or no leader: %r", topic,
          dict(list(bad.items())[:5]))


def kcat_metadata(b, topic=None, timeout=120):
    """kcat -L -J (librdkafka's Metadata) -> ({topic: partition count}, seconds)."""
    argv = ["kcat", "-b", b.bootstrap, "-L", "-J", "-m", "30"]
    if topic is not None:
        argv += ["-t", topic]
    t0 = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    took = time.monotonic() - t0
    check(p.returncode == 0, "kcat -L exited with %d: %s", p.returncode,
          p.stderr.decode(errors="replace")[-2000:])
    doc = json.loads(p.stdout)
    topics = {}
    for t in doc.get("topics", []):
        check("error" not in t, "kcat -L: topic %s has error %r", t.get("topic"), t.get("error"))
        topics[t["topic"]] = len(t["partitions"])
    return topics, took


def describe_configs(port, names, version):
    """DescribeConfigs v0/v1 of topics (every key) -> ({topic: (err, msg,
    {key: value})}, response bytes, seconds)."""
    body = array([i8(kadmin.TOPIC) + string(n) + array(None) for n in names])
    if version >= 1:
        body += i8(1)  # IncludeSynonyms
    req = kwire.request(kadmin.DESCRIBE_CONFIGS, version, 77, body)
    with kwire.connect(port) as s:
        t0 = time.monotonic()
        try:
            resp = kwire.roundtrip(s, req, 30.0)
        except kwire.Closed as e:
            raise AssertionError("DescribeConfigs v%d of %d topics: the broker closed the "
                                 "connection (%s)" % (version, len(names), e))
        took = time.monotonic() - t0
    r = kwire.Reader(resp)
    eq(r.i32(), 77, "DescribeConfigs correlation id")
    r.i32()  # throttle

    def entry(r):
        name, value = r.string(), r.string()
        r.i8()  # read only
        r.i8()  # v0: is default; v1: source
        r.i8()  # sensitive
        if version >= 1:
            r.array(lambda r: (r.string(), r.string(), r.i8()))
        return name, value

    out = {}
    for err, msg, _t, name, entries in r.array(
            lambda r: (r.i16(), r.string(), r.i8(), r.string(), r.array(entry))):
        out[name] = (err, msg, dict(entries or []))
    return out, len(resp) + 4, took


def check_configs(results, names):
    eq(sorted(results), sorted(names), "DescribeConfigs resources")
    for n in names:
        err, msg, cfg = results[n]
        check(err == 0, "DescribeConfigs %s: error %d %r", n, err, msg)
        eq(cfg.get("cleanup.policy"), "delete", "%s cleanup.policy" % n)
        check(len(cfg) >= 20, "DescribeConfigs %s: only %d configs", n, len(cfg))


def log_dir_partitions(b):
    dirs = kadmin.describe_log_dirs(b.port, None)
    eq(list(dirs), [b.log_dir], "DescribeLogDirs log dirs")
    err, sizes = dirs[b.log_dir]
    eq(err, 0, "DescribeLogDirs error")
    return sizes


def case_partitions_1100(t):
    raise_fd_limit()
    b = t.broker()
    took = create_topics(b.port, ["wide"], partitions=1100)
    print("  created 1 topic of 1,100 partitions in %.1f s" % took)
    size, took, brokers, controller, parsed = metadata(b.port, ["wide"])
    print("  Metadata v1 of the topic: %d bytes in %.3f s" % (size, took))
    eq(brokers, [(0, "127.0.0.1", b.port)], "brokers")
    check_partitions(parsed, "wide", 1100)
    topics, took = kcat_metadata(b, "wide")
    print("  kcat -L -t wide: %.2f s" % took)
    eq(topics, {"wide": 1100}, "kcat -L -t wide")
    sizes = log_dir_partitions(b)
    eq(sorted(p for t_, p in sizes if t_ == "wide"), list(range(1100)),
       "DescribeLogDirs partitions of wide")
    b.stop()


def case_topics_2000(t):
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    raise_fd_limit()
    b = t.broker()
    names = ["many-%04d" % i for i in range(2000)]
    took = create_topics(b.port, names)
    print("  created 2,000 topics in %.1f s" % took)

    size, took, _, _, parsed = metadata(b.port, None)
    print("  all-topics Metadata v1: %d topics, %d bytes in %.3f s" % (len(parsed), size, took))
    eq(sorted(parsed), names, "all-topics Metadata")
    for n in names:
        check_partitions(parsed, n, 1)

    topics, took = kcat_metadata(b)
    print("  kcat -L: %d topics in %.2f s" % (len(topics), took))
    eq(sorted(topics), names, "kcat -L topics")

    some = names[:60]
    for version in (0, 1):
        results, size, took = describe_configs(b.port, some, version)
        print("  DescribeConfigs v%d of 60 topics: %d bytes in %.3f s" % (version, size, took))
        check_configs(results, some)
    results, size, took = describe_configs(b.port, names, 1)
    print("  DescribeConfigs v1 of 2,000 topics: %d bytes in %.3f s" % (size, took))
    check_configs(results, names)

    sizes = log_dir_partitions(b)
    eq(sorted(sizes), [(n, 0) for n in names], "DescribeLogDirs partitions")

    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=30000)
    try:
        listed = admin.list_topics()
        eq(sorted(listed), names, "kafka-python list_topics()")
        resp = admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, n) for n in names[-60:]])
        got = {}
        for r in (resp if isinstance(resp, list) else [resp]):
            for err, msg, _type, name, entries in r.resources:
                check(err == 0, "kafka-python describe_configs %s: error %d %r", name, err, msg)
                got[name] = {e[0]: e[1] for e in entries}
        eq(sorted(got), sorted(names[-60:]), "kafka-python describe_configs resources")
        for n, cfg in got.items():
            eq(cfg.get("cleanup.policy"), "delete", "kafka-python: %s cleanup.policy" % n)
    finally:
        admin.close()
    b.stop()


def case_response_ceiling(t):
    raise_fd_limit()
    b = t.broker(overrides={"response.max.bytes": "32768"})
    create_topics(b.port, ["wide"], partitions=1100)
    names = ["c-%02d" % i for i in range(60)]
    create_topics(b.port, names)

    with kwire.connect(b.port) as s:
        resp = kwire.roundtrip(s, kwire.metadata_v1(21, ["wide"]))
        corr, brokers, controller, parsed = kwire.parse_metadata_v1(resp)
        eq(corr, 21, "correlation id")
        # Kafka's MetadataRequest.getErrorResponse: no brokers, no controller,
        # each requested topic with the error and no partitions
        eq(brokers, [], "brokers of the error answer")
        eq(controller, -1, "controller of the error answer")
        eq(parsed, {"wide": (UNKNOWN_SERVER_ERROR, {})}, "topics of the error answer")
        # the connection goes on serving
        corr, err, apis = kwire.parse_api_versions_v0(kwire.roundtrip(s, kwire.api_versions_v0(22)))
        eq((corr, err), (22, 0), "ApiVersions after the error answer")
    lines = kadmin.wait_log(b, "Metadata v1")
    eq(len(lines), 1, "log lines about the Metadata response")
    for word in ("samsa-it", "response.max.bytes", "32768", "UNKNOWN_SERVER_ERROR"):
        check(word in lines[0], "the log line lacks %r: %s", word, lines[0])

    results, _, _ = describe_configs(b.port, names, 1)
    eq(sorted(results), names, "DescribeConfigs error answer resources")
    for n in names:
        err, msg, cfg = results[n]
        eq((err, cfg), (UNKNOWN_SERVER_ERROR, {}), "DescribeConfigs error answer of %s" % n)
    lines = kadmin.wait_log(b, "DescribeConfigs v1")
    eq(len(lines), 1, "log lines about the DescribeConfigs response")

    # Kafka's DescribeLogDirsRequest.getErrorResponse: no log dir at all
    dirs = kadmin.describe_log_dirs(b.port, None)
    check(dirs == {}, "DescribeLogDirs error answer: expected no log dir, got %d partitions",
          sum(len(sizes) for _, sizes in dirs.values()))
    kadmin.wait_log(b, "DescribeLogDirs v1")
    # what fits is still answered
    _, _, _, _, parsed = metadata(b.port, names[:3])
    for n in names[:3]:
        check_partitions(parsed, n, 1)
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_partitions_1100, case_topics_2000, case_response_ceiling]))
