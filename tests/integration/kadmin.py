"""Storage administration on the wire, by hand: the requests the storage tests
send to samsa-broker over raw sockets (kwire.py has the data path).

    create_topic(port, topic, partitions, {"cleanup.policy": "compact"})
    delete_records(port, {(topic, p): offset}, version=1)  -> {(topic, p): (err, low)}
    describe_log_dirs(port, None or {topic: [p, ...]}, version=1)
                                                -> {dir: (err, {(topic, p): size})}
    incremental_alter_configs(port, [(type, name, [(key, op, value)])],
                              validate_only=False, version=1) -> {(type, name): (err, msg)}
    alter_configs(port, [(type, name, {key: value})], validate_only=False)
    alter_configs_list(...) -> [(type, name, err, msg)] in answer order
    alter_configs_body(resources, validate_only) -> the request body
    describe_configs(port, topic, keys=None)    -> {key: (value, source)}
    create_partitions(port, [(topic, count, assignments or None)],
                      timeout_ms=10000, validate_only=False, version=0)
                                                -> [(topic, err, msg)] in answer order
    wait_log(broker, text, count=1, timeout=30) -> the broker's log lines holding text

IncrementalAlterConfigs v1 is a flexible version (compact strings and
arrays, tagged fields, request header v2 / response header v1); the helpers
here encode and decode those by hand.

Runs on Debian's /usr/bin/python3.
"""

import time

import kwire
from kwire import array, i8, i16, i32, i64, read_uvarint, string, uvarint

DELETE_RECORDS = 21
DESCRIBE_CONFIGS = 32
ALTER_CONFIGS = 33
DESCRIBE_LOG_DIRS = 35
CREATE_PARTITIONS = 37
INCREMENTAL_ALTER_CONFIGS = 44

TOPIC = 2
BROKER = 4

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3

# error codes
OFFSET_OUT_OF_RANGE = 1
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_CONFIG = 40
INVALID_REQUEST = 42
POLICY_VIOLATION = 44


def compact_string(s):
    """COMPACT_(NULLABLE_)STRING: length + 1 as an unsigned varint."""
    if s is None:
        return uvarint(0)
    b = s.encode()
    return uvarint(len(b) + 1) + b


def compact_array(items):
    return uvarint(len(items) + 1) + b"".join(items)


TAGS = uvarint(0)


def read_compact_string(r):
    n = read_uvarint(r) - 1
    if n < 0:
        return None
    s = bytes(r.buf[r.pos:r.pos + n]).decode()
    r.pos += n
    return s


def skip_tags(r):
    for _ in range(read_uvarint(r)):
        read_uvarint(r)
        n = read_uvarint(r)
        r.pos += n


def call(port, api, version, body, flexible=False):
    """One request on a connection of its own -> a Reader after the
    correlation id (and, flexible, the response header's tags)."""
    if flexible:
        hdr = i16(api) + i16(version) + i32(77) + string("samsa-it") + TAGS
        req = kwire.frame(hdr + body)
    else:
        req = kwire.request(api, version, 77, body)
    with kwire.connect(port) as s:
        resp = kwire.roundtrip(s, req)
    r = kwire.Reader(resp)
    corr = r.i32()
    if corr != 77:
        raise AssertionError("correlation id %d, sent 77" % corr)
    if flexible:
        skip_tags(r)
    return r


def create_topic(port, topic, partitions=1, configs=None, timeout=15.0):
    """CreateTopics v0 with configs; waits for the leaders. Returns the
    error code (0 after waiting)."""
    cfg = [string(k) + string(v) for k, v in (configs or {}).items()]
    body = (array([string(topic) + i32(partitions) + i16(1) + array([]) + array(cfg)])
            + i32(10000))
    r = call(port, kwire.CREATE_TOPICS, 0, body)
    errs = dict(r.array(lambda r: (r.string(), r.i16())))
    err = errs.get(topic)
    if err == 0:
        kwire.wait_topic(port, topic, partitions, timeout)
    return err


def create_partitions(port, topics, timeout_ms=10000, validate_only=False, version=0):
    """CreatePartitions v0/v1 (the same body): topics [(name, total count,
    None or [[broker id, ...] per new partition])] -> [(name, err, msg)]."""
    def topic(t):
        name, count, assignments = t
        if assignments is None:
            body = i32(-1)
        else:
            body = array([array([i32(x) for x in a]) for a in assignments])
        return string(name) + i32(count) + body
    body = array([topic(t) for t in topics]) + i32(timeout_ms) + i8(1 if validate_only else 0)
    r = call(port, CREATE_PARTITIONS, version, body)
    r.i32()  # throttle
    return r.array(lambda r: (r.string(), r.i16(), r.string()))


def delete_records(port, offsets, version=1, timeout_ms=10000):
    by_topic = {}
    for (t, p), off in offsets.items():
        by_topic.setdefault(t, []).append(i32(p) + i64(off))
    body = array([string(t) + array(parts) for t, parts in by_topic.items()]) + i32(timeout_ms)
    r = call(port, DELETE_RECORDS, version, body)
    r.i32()  # throttle
    out = {}
    for t, parts in r.array(lambda r: (r.string(),
                                       r.array(lambda r: (r.i32(), r.i64(), r.i16())))):
        for p, low, err in parts:
            out[(t, p)] = (err, low)
    return out


def describe_log_dirs(port, topics=None, version=1):
    if topics is None:
        body = i32(-1)
    else:
        body = array([string(t) + array([i32(p) for p in ps]) for t, ps in topics.items()])
    r = call(port, DESCRIBE_LOG_DIRS, version, body)
    r.i32()  # throttle
    out = {}

    def partition(r):
        return r.i32(), r.i64(), r.i64(), r.i8()

    def topic(r):
        return r.string(), r.array(partition)

    for err, d, ts in r.array(lambda r: (r.i16(), r.string(), r.array(topic))):
        sizes = {}
        for t, parts in ts:
            for p, size, lag, future in parts:
                if lag != 0 or future != 0:
                    raise AssertionError("%s-%d: offset lag %d, is_future %d" % (t, p, lag, future))
                sizes[(t, p)] = size
        out[d] = (err, sizes)
    return out


def incremental_alter_configs(port, resources, validate_only=False, version=1):
    """resources: [(type, name, [(key, op, value)])] -> {(type, name): (err, msg)}"""
    flexible = version >= 1
    if flexible:
        res = [i8(t) + compact_string(n)
               + compact_array([compact_string(k) + i8(op) + compact_string(v) + TAGS
                                for k, op, v in cfgs]) + TAGS
               for t, n, cfgs in resources]
        body = compact_array(res) + i8(1 if validate_only else 0) + TAGS
    else:
        res = [i8(t) + string(n) + array([string(k) + i8(op) + string(v) for k, op, v in cfgs])
               for t, n, cfgs in resources]
        body = array(res) + i8(1 if validate_only else 0)
    r = call(port, INCREMENTAL_ALTER_CONFIGS, version, body, flexible)
    r.i32()  # throttle
    out = {}
    if flexible:
        for _ in range(read_uvarint(r) - 1):
            err = r.i16()
            msg = read_compact_string(r)
            t = r.i8()
            n = read_compact_string(r)
            skip_tags(r)
            out[(t, n)] = (err, msg)
        skip_tags(r)
    else:
        for err, msg, t, n in r.array(lambda r: (r.i16(), r.string(), r.i8(), r.string())):
            out[(t, n)] = (err, msg)
    return out


def alter_configs_body(resources, validate_only=False):
    """The body of an AlterConfigs v0/v1 request of resources
    [(type, name, {key: value})]."""
    res = [i8(t) + string(n) + array([string(k) + string(v) for k, v in cfgs.items()])
           for t, n, cfgs in resources]
    return array(res) + i8(1 if validate_only else 0)


def alter_configs_list(port, resources, validate_only=False, version=1):
    """resources: [(type, name, {key: value})] -> [(type, name, err, msg)] in
    the answer's order"""
    r = call(port, ALTER_CONFIGS, version, alter_configs_body(resources, validate_only))
    r.i32()
    return [(t, n, err, msg)
            for err, msg, t, n in r.array(lambda r: (r.i16(), r.string(), r.i8(), r.string()))]


def alter_configs(port, resources, validate_only=False, version=1):
    """resources: [(type, name, {key: value})] -> {(type, name): (err, msg)}"""
    return {(t, n): (err, msg)
            for t, n, err, msg in alter_configs_list(port, resources, validate_only, version)}


def describe_configs(port, topic, keys=None):
    """DescribeConfigs v1 of a topic -> {key: (value, source)}"""
    body = (array([i8(TOPIC) + string(topic)
                   + array(None if keys is None else [string(k) for k in keys])])
            + i8(1))
    r = call(port, DESCRIBE_CONFIGS, 1, body)
    r.i32()

    def synonym(r):
        return r.string(), r.string(), r.i8()

    def entry(r):
        name, value, _ro, _default, _sens = r.string(), r.string(), r.i8(), r.i8(), r.i8()
        syns = r.array(synonym)
        return name, value, syns[0][2] if syns else None

    out = {}
    for err, msg, _t, _n, entries in r.array(lambda r: (r.i16(), r.string(), r.i8(), r.string(),
                                                         r.array(entry))):
        if err != 0:
            raise AssertionError("DescribeConfigs %s: error %d %s" % (topic, err, msg))
        for name, value, source in entries:
            out[name] = (value, source)
    return out


def log_lines(broker, text):
    return [ln for ln in broker.log_text().splitlines() if text in ln]


def wait_log(broker, text, count=1, timeout=30.0):
    """Waits until the broker's current log holds `count` lines with text."""
    deadline = time.monotonic() + timeout
    while True:
        lines = log_lines(broker, text)
        if len(lines) >= count:
            return lines
        broker.check_alive()
        if time.monotonic() > deadline:
            raise AssertionError("no %d log line(s) with %r within %.0f s (have %d)"
                                 % (count, text, timeout, len(lines)))
        time.sleep(0.05)
