#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_broker (fuzz/corpus/broker/).

    fuzz/gen_broker_seeds.py [CORPUS_DIR [VECTORS_DIR]]

Each seed is a sequence of fuzz_broker operations (see fuzz_broker.c for the
encoding): short scenarios a client runs (create, produce, fetch, restart,
commit, idempotent resend, retention) and captured client frames
(tests/protocol/vectors) sent as raw frames between them.
"""
import os
import struct
import sys

PRODUCE, RESEND, FETCH, OFFSETS, DEL_RECS, CREATE, DELETE, ALTER, INIT_PID, \
    METADATA, COMMIT, HOUSE, RAW = 0, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15


def produce_mode(version, acks, idempotent):
    """The mode byte fuzz_broker reads: version 3 + mode % 5, acks from
    (mode >> 3) % 3 (0: 1, 1: all, 2: none), 0x40 idempotent."""
    want_acks = {1: 0, -1: 1, 0: 2}[acks]
    for m in range(256):
        if 3 + m % 5 == version and (m >> 3) % 3 == want_acks and bool(m & 0x40) == idempotent:
            return m
    raise ValueError("no mode byte")


def create(t, parts, version=4, configs=()):
    mode = version | ((parts - 1) << 3)
    out = [CREATE, t, mode, len(configs)]
    for key, value in configs:
        out.append(key | (value << 4))
    return out


def produce(t, p, count, codec=0, version=7, acks=1, idem=False, ts=0, sizes=0):
    shape = (count - 1) | (codec << 4)
    return [PRODUCE, t, p, produce_mode(version, acks, idem), shape, ts] + [sizes] * count


def fetch(t, p, version=11, which=0, idx=0):
    """which: 0 the idx-th acknowledged offset, 1 the end, 2 the log start,
    3 offset idx - 16."""
    out = [FETCH, t, p, version - 4, which]
    if which == 0:
        out.append(idx)
    elif which == 3:
        out += list(struct.pack(">H", idx))
    return out


def raw(payload):
    return [RAW] + list(struct.pack(">H", len(payload))) + list(payload)


def create_partitions_v1(name, count, corr=91):
    """A CreatePartitions v1 request (header and body) raising a topic to count."""
    def s16(x):
        return struct.pack(">h", len(x)) + x.encode()
    return (struct.pack(">hhi", 37, 1, corr) + s16("fz") + struct.pack(">i", 1) + s16(name)
            + struct.pack(">ii", count, -1) + struct.pack(">i", 10000) + b"\x00")


def _s16(x):
    return struct.pack(">h", len(x)) + x.encode()


def _ints(xs):
    return struct.pack(">i", len(xs)) + b"".join(struct.pack(">i", x) for x in xs)


def interbroker_frames(corr=120):
    """What a Kafka 2.0 controller and a broker shutting down send (header v1,
    Kafka 2.0's layouts): LeaderAndIsr v1 making this broker t0-0's leader,
    UpdateMetadata v4, StopReplica v0 deleting t0-0, ControlledShutdown v1.
    The broker does not advertise these APIs: it closes the connection."""
    def head(key, version, c):
        return struct.pack(">hhi", key, version, c) + _s16("controller")
    state = (_s16("t0") + struct.pack(">iiii", 0, 1, 0, 1) + _ints([0]) + struct.pack(">i", 0)
             + _ints([0]))
    leader_and_isr = (head(4, 1, corr) + struct.pack(">ii", 1, 1) + struct.pack(">i", 1) + state
                      + b"\x01" + struct.pack(">i", 1) + struct.pack(">i", 0) + _s16("h")
                      + struct.pack(">i", 9092))
    update_metadata = (head(6, 4, corr + 1) + struct.pack(">ii", 1, 1) + struct.pack(">i", 1)
                       + state + _ints([]) + struct.pack(">i", 1) + struct.pack(">i", 0)
                       + struct.pack(">i", 1) + struct.pack(">i", 9092) + _s16("h")
                       + _s16("PLAINTEXT") + struct.pack(">h", 0) + struct.pack(">h", -1))
    stop_replica = (head(5, 0, corr + 2) + struct.pack(">ii", 1, 1) + b"\x01"
                    + struct.pack(">i", 1) + _s16("t0") + struct.pack(">i", 0))
    controlled_shutdown = head(7, 1, corr + 3) + struct.pack(">i", 0)
    return [leader_and_isr, update_metadata, stop_replica, controlled_shutdown]


SEEDS = {
    "produce-fetch-restart": create(0, 2) + produce(0, 0, 4, codec=1) + produce(0, 1, 16)
    + fetch(0, 0) + [OFFSETS, 0, 0, 2, 0, 0] + [HOUSE, 0] + fetch(0, 1, which=2) + fetch(0, 0, 4, 1),
    "codecs": create(1, 1) + sum((produce(1, 0, 3, codec=c, sizes=c) for c in range(5)), [])
    + fetch(1, 0, 11, 3, 16),
    "idempotent-resend": create(0, 1) + [INIT_PID, 0] + produce(0, 0, 5, acks=-1, idem=True)
    + [RESEND, 0, 0] + [HOUSE, 0] + [RESEND, 0, 0] + fetch(0, 0),
    "retention": create(0, 1, configs=[(0, 0), (2, 0)]) + produce(0, 0, 16, ts=210, sizes=2) * 4
    + [HOUSE, 1] + [OFFSETS, 0, 0, 0x82, 0] + fetch(0, 0, which=2) + [DEL_RECS, 0, 0, 0, 3],
    "commit-restart": create(1, 2) + [COMMIT, 0, 1, 1, 5, 0, 42] + [COMMIT, 1, 1, 0, 0x10, 1, 0]
    + [HOUSE, 0] + [COMMIT, 0, 1, 1, 0x25, 0, 43],
    "admin": create(2, 1) + create(3, 1) + [ALTER, 2, 0, 0x22] + [METADATA, 0x06] + [DELETE, 2, 3]
    + produce(2, 0, 1) + [METADATA, 0x85] + create(2, 3, 0, [(5, 0), (7, 1)]),
    "create-partitions": create(0, 1) + produce(0, 0, 2) + raw(create_partitions_v1("t0", 3))
    + produce(0, 2, 1) + fetch(0, 2) + [HOUSE, 0] + fetch(0, 0),
    "acks0-fetch": create(0, 1) + produce(0, 0, 2, acks=0) + produce(0, 0, 2, version=3)
    + fetch(0, 0, 4, 3, 0) + fetch(0, 0, 8, 1),
    "interbroker-unserved": create(0, 1) + produce(0, 0, 3)
    + sum((raw(f) + fetch(0, 0, 8) for f in interbroker_frames()), []) + [HOUSE, 0] + fetch(0, 0),
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")
    vectors = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "tests", "protocol",
                                                                 "vectors")
    out = os.path.join(corpus, "broker")
    os.makedirs(out, exist_ok=True)
    for name, ops in SEEDS.items():
        with open(os.path.join(out, "gen-" + name + ".bin"), "wb") as f:
            f.write(bytes(ops))
    # captured frames, each between a topic of the name the clients used and a fetch
    for client in sorted(os.listdir(vectors)):
        cdir = os.path.join(vectors, client)
        if not os.path.isdir(cdir):
            continue
        for frame in sorted(os.listdir(cdir)):
            if not frame.endswith(".bin"):
                continue
            with open(os.path.join(cdir, frame), "rb") as f:
                data = f.read()
            ops = create(0, 1) + produce(0, 0, 2)
            pos = 0
            while len(data) - pos >= 4:
                size = struct.unpack(">i", data[pos:pos + 4])[0]
                if size < 0 or size > len(data) - pos - 4 or size >= 4096:
                    break
                ops += raw(data[pos + 4:pos + 4 + size])
                pos += 4 + size
            ops += fetch(0, 0)
            name = "vec-%s-%s" % (client, frame)
            with open(os.path.join(out, name), "wb") as f:
                f.write(bytes(ops))


if __name__ == "__main__":
    main()
