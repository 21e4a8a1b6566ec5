#!/usr/bin/env python3
"""samsa-dump prints the inter-broker requests and responses of Kafka 2.0.

    check_dump_interbroker.py SAMSA_DUMP

The frames are built here with struct.pack, field by field, from the Struct
schemas of Kafka 2.0.0's clients/src/main/java/org/apache/kafka/common/
requests/<Name>{Request,Response}.java: a route that owes nothing to the
protocol crate's descriptions or encoder. Every version of LeaderAndIsr
(v0-1), StopReplica (v0), UpdateMetadata (v0-4), ControlledShutdown (v1), a
follower's Fetch v8 and OffsetsForLeaderEpoch v1 goes into one stream of
request frames, each answered in a stream of response frames. samsa-dump must
decode every frame (exit status 0), name its API and version, and print each
message as the JSON of exactly the fields it was built with.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

# ------------------------------------------------------------ wire types
# A message is a list of (name, type, value); a struct array's value is a
# list of such lists, an int32 array's a list of ints; None is null.


def int8(v):
    return struct.pack(">b", v)


def int16(v):
    return struct.pack(">h", v)


def int32(v):
    return struct.pack(">i", v)


def int64(v):
    return struct.pack(">q", v)


def boolean(v):
    return b"\x01" if v else b"\x00"


def string(v):
    if v is None:
        return int16(-1)
    b = v.encode()
    return int16(len(b)) + b


def records(v):
    if v is None:
        return int32(-1)
    return int32(len(v)) + v


def int32s(v):
    if v is None:
        return int32(-1)
    return int32(len(v)) + b"".join(int32(x) for x in v)


def structs(v):
    if v is None:
        return int32(-1)
    return int32(len(v)) + b"".join(encode(x) for x in v)


def encode(fields):
    return b"".join(kind(value) for _, kind, value in fields)


def as_json(fields):
    out = {}
    for name, kind, value in fields:
        if kind is structs and value is not None:
            value = [as_json(x) for x in value]
        elif kind is records:
            value = "<records %d bytes>" % len(value)  # printed as its size
        out[name] = value
    return out


# ------------------------------------------------------------- messages
# (api key, version, request fields, response fields)

def la_state(topic, part, cepoch, leader, lepoch, isr, zk, replicas, is_new=None):
    f = [("TopicName", string, topic), ("PartitionIndex", int32, part),
         ("ControllerEpoch", int32, cepoch), ("Leader", int32, leader),
         ("LeaderEpoch", int32, lepoch), ("Isr", int32s, isr), ("ZkVersion", int32, zk),
         ("Replicas", int32s, replicas)]
    if is_new is not None:  # v1: is_new
        f.append(("IsNew", boolean, is_new))
    return f


def la_leader(bid, host, port):
    return [("BrokerId", int32, bid), ("HostName", string, host), ("Port", int32, port)]


def la_response(err, parts):
    return [("ErrorCode", int16, err),
            ("PartitionErrors", structs,
             [[("TopicName", string, t), ("PartitionIndex", int32, p), ("ErrorCode", int16, e)]
              for t, p, e in parts])]


def um_state(version, topic, part, cepoch, leader, lepoch, isr, zk, replicas, offline):
    f = [("TopicName", string, topic), ("PartitionIndex", int32, part),
         ("ControllerEpoch", int32, cepoch), ("Leader", int32, leader),
         ("LeaderEpoch", int32, lepoch), ("Isr", int32s, isr), ("ZkVersion", int32, zk),
         ("Replicas", int32s, replicas)]
    if version >= 4:  # PARTITION_STATE_V4: offline_replicas
        f.append(("OfflineReplicas", int32s, offline))
    return f


def um_broker(version, bid, endpoints, rack):
    """endpoints: [(port, host, listener, security protocol)]"""
    if version == 0:  # BROKER_V0: id, host, port
        port, host, _, _ = endpoints[0]
        return [("Id", int32, bid), ("V0Host", string, host), ("V0Port", int32, port)]
    eps = []
    for port, host, listener, proto in endpoints:
        ep = [("Port", int32, port), ("Host", string, host)]  # END_POINT_V1: port first
        if version >= 3:  # END_POINT_V3: listener_name
            ep.append(("Listener", string, listener))
        ep.append(("SecurityProtocol", int16, proto))
        eps.append(ep)
    f = [("Id", int32, bid), ("Endpoints", structs, eps)]
    if version >= 2:  # BROKER_V2: rack
        f.append(("Rack", string, rack))
    return f


def update_metadata(version):
    states = [
        um_state(version, "t1", 0, 6, 2, 4, [2, 3], 9, [2, 3, 1], [1]),
        um_state(version, "gone", 3, 6, -2, 5, [], 2, [], []),
    ]
    brokers = [
        um_broker(version, 1, [(9092, "b1", "PLAINTEXT", 0), (9093, "b1", "REPL", 1)], "r1"),
        um_broker(version, 2, [(9092, "b2", "PLAINTEXT", 0)], None),
    ]
    return [("ControllerId", int32, 1), ("ControllerEpoch", int32, 7 + version),
            ("UngroupedPartitionStates", structs, states), ("LiveBrokers", structs, brokers)]


MESSAGES = [
    (4, 0,
     [("ControllerId", int32, 1), ("ControllerEpoch", int32, 7),
      ("UngroupedPartitionStates", structs,
       [la_state("t1", 0, 6, 2, 4, [2, 3], 9, [2, 3, 1]),
        la_state("t2", 1, 5, 3, 0, [3], 0, [3])]),
      ("LiveLeaders", structs, [la_leader(2, "b2", 9092), la_leader(3, "b3", 9093)])],
     la_response(0, [("t1", 0, 0), ("t2", 1, 0)])),
    (4, 1,
     [("ControllerId", int32, 2), ("ControllerEpoch", int32, 12),
      ("UngroupedPartitionStates", structs,
       [la_state("ord", 5, 11, 1, 256, [1], -1, [1, 3], True),
        la_state("ord", 6, 11, -1, 2, [], 0, [3], False)]),
      ("LiveLeaders", structs, [])],
     la_response(0, [("ord", 5, 0), ("ord", 6, 56)])),
    (5, 0,
     [("ControllerId", int32, 1), ("ControllerEpoch", int32, 7), ("DeletePartitions", boolean, False),
      ("UngroupedPartitions", structs,
       [[("TopicName", string, "t1"), ("PartitionIndex", int32, 0)],
        [("TopicName", string, "t2"), ("PartitionIndex", int32, 4)]])],
     la_response(11, [("t1", 0, 0)])),
] + [(6, v, update_metadata(v), [("ErrorCode", int16, 11 if v == 1 else 0)]) for v in range(5)] + [
    (7, 1,
     [("BrokerId", int32, 3)],
     [("ErrorCode", int16, 0),
      ("RemainingPartitions", structs,
       [[("TopicName", string, "t1"), ("PartitionIndex", int32, 1)]])]),
    # a follower's Fetch v8 (ReplicaFetcherThread at IBP 2.0): replica_id >= 0
    (1, 8,
     [("ReplicaId", int32, 2), ("MaxWaitMs", int32, 500), ("MinBytes", int32, 1),
      ("MaxBytes", int32, 10485760), ("IsolationLevel", int8, 0), ("SessionId", int32, 0),
      ("SessionEpoch", int32, -1),
      ("Topics", structs,
       [[("Topic", string, "t1"),
         ("Partitions", structs,
          [[("Partition", int32, 0), ("FetchOffset", int64, 42), ("LogStartOffset", int64, 5),
            ("PartitionMaxBytes", int32, 1048576)]])]]),
      ("ForgottenTopicsData", structs, [])],
     [("ThrottleTimeMs", int32, 0), ("ErrorCode", int16, 0), ("SessionId", int32, 0),
      ("Responses", structs,
       [[("Topic", string, "t1"),
         ("Partitions", structs,
          [[("PartitionIndex", int32, 0), ("ErrorCode", int16, 0), ("HighWatermark", int64, 44),
            ("LastStableOffset", int64, 44), ("LogStartOffset", int64, 5),
            ("AbortedTransactions", structs, None), ("Records", records, b"")]])]])]),
    (23, 1,
     [("Topics", structs,
       [[("Topic", string, "t1"),
         ("Partitions", structs, [[("Partition", int32, 0), ("LeaderEpoch", int32, 4)]])]])],
     [("Topics", structs,
       [[("Topic", string, "t1"),
         ("Partitions", structs,
          [[("ErrorCode", int16, 0), ("Partition", int32, 0), ("LeaderEpoch", int32, 3),
            ("EndOffset", int64, 40)]])]])]),
]

NAMES = {1: "Fetch", 4: "LeaderAndIsr", 5: "StopReplica", 6: "UpdateMetadata",
         7: "ControlledShutdown", 23: "OffsetForLeaderEpoch"}


def frame(payload):
    return int32(len(payload)) + payload


def fail(fmt, *args):
    print("check_dump_interbroker: " + (fmt % args), file=sys.stderr)
    sys.exit(1)


def dump(exe, *files):
    """(frame line, JSON line) pairs of samsa-dump's output."""
    p = subprocess.run([exe] + list(files), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60, check=False)
    out = p.stdout.decode()
    if p.returncode != 0:
        fail("samsa-dump %s exited %d:\n%s%s", " ".join(files), p.returncode, out,
             p.stderr.decode())
    # "== FILE" titles, per frame a "frame N @POS: ..." line and the JSON line,
    # then a Fetch response's records (not checked here)
    lines = out.splitlines()
    return [(line, lines[i + 1] if i + 1 < len(lines) else "")
            for i, line in enumerate(lines) if line.startswith("frame ")]


def check_frames(frames, what, expect):
    if len(frames) != len(expect):
        fail("%s: %d frames printed, %d sent:\n%s", what, len(frames), len(expect),
             "\n".join(h for h, _ in frames))
    for i, ((head, body), (title, fields)) in enumerate(zip(frames, expect)):
        if title not in head:
            fail("%s frame %d: %r does not say %r", what, i, head, title)
        try:
            got = json.loads(body)
        except ValueError as e:
            fail("%s frame %d: not JSON (%s): %s", what, i, e, body)
        want = as_json(fields)
        if got != want:
            fail("%s frame %d (%s):\n  printed  %s\n  expected %s", what, i, title,
                 json.dumps(got, sort_keys=True), json.dumps(want, sort_keys=True))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    exe = sys.argv[1]
    requests, responses = b"", b""
    want_req, want_resp = [], []
    for corr, (key, version, req, resp) in enumerate(MESSAGES, 100):
        # request header v1: api_key, api_version, correlation_id, client_id
        header = int16(key) + int16(version) + int32(corr) + string("controller")
        requests += frame(header + encode(req))
        responses += frame(int32(corr) + encode(resp))  # response header v0
        name = "%s v%d" % (NAMES[key], version)
        want_req.append(("%s (key %d) correlation %d" % (name, key, corr), req))
        want_resp.append(("%s response, correlation %d" % (name, corr), resp))
    with tempfile.TemporaryDirectory(prefix="samsa-dump-interbroker-") as tmp:
        req_path = os.path.join(tmp, "requests.bin")
        resp_path = os.path.join(tmp, "responses.bin")
        with open(req_path, "wb") as f:
            f.write(requests)
        with open(resp_path, "wb") as f:
            f.write(responses)
        check_frames(dump(exe, req_path), "requests", want_req)
        check_frames(dump(exe, "--responses", req_path, resp_path), "responses", want_resp)
    print("check_dump_interbroker: %d requests and %d responses printed as built"
          % (len(want_req), len(want_resp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
