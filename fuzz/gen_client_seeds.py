#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_client_response (fuzz/corpus/client_response/).

    fuzz/gen_client_seeds.py [CORPUS_DIR]

Each seed is a header (scenario and broker flags, partition counts) and a
sequence of steps (see fuzz_client_response.c for the encoding). Most steps
let the harness's model broker answer, so that a seed walks a client through
what it does against a healthy cluster (joining a group, fetching,
committing, producing with idempotence, every admin op); the others answer
with an error, damage an answer, split it, send garbage or drop the
connection where a client most often meets them.
"""
import os
import struct
import sys

MODEL, ERROR, RAW_BODY, RAW_FRAME, XOR, SPLIT, DROP, NOTHING = range(8)
# errors[] of the harness, by name
ERRS = [-1, 1, 2, 3, 5, 6, 7, 10, 14, 15, 16, 22, 23, 25, 26, 27,
        35, 36, 37, 40, 41, 42, 45, 46, 47, 59, 68, 69, 79, 82, 87, 89]
POLL, COMMIT, PAUSE, RESUME, LAG, ASSIGNMENT, COMMIT_EXPLICIT = range(7)
JUMPS = {0: 0, 1: 2, 10: 3, 100: 4, 1000: 5, 10000: 6, 60000: 7}


def header(scenario, hide44=False, hide37=False, old=False, codec=0, p0=2, p1=2, extra=0):
    b0 = scenario | (hide44 << 2) | (hide37 << 3) | (old << 4) | (codec << 5)
    b1 = (p0 - 1) | ((p1 - 1) << 2) | extra
    return bytes([b0, b1])


def step(mode=MODEL, conn=0, jump=0, action=POLL, arg_low=0, payload=b"", err=None):
    arg = (action << 4) | arg_low
    if err is not None:
        mode = ERROR
        arg = (action << 4) | ERRS.index(err)
    op = mode | (conn << 3) | (JUMPS[jump] << 5)
    return bytes([op, arg]) + struct.pack(">H", len(payload)) + payload


def model_run(n, actions=(POLL,), jump_every=0, jump_ms=1000):
    """n model answers, cycling over the connections with a request waiting
    and over the application's actions; a clock jump of jump_ms every
    jump_every steps (the client asks for metadata at most every 100 ms)."""
    out = b""
    for i in range(n):
        jump = jump_ms if jump_every and i % jump_every == jump_every - 1 else 0
        out += step(conn=i % 4, jump=jump, action=actions[i % len(actions)])
    return out


def seeds():
    yield "group-happy", header(0, extra=16) + model_run(80, (POLL, POLL, COMMIT, LAG), 10)
    yield "group-roundrobin", header(0, extra=16 | 32, p0=3, p1=1) + model_run(60)
    yield "group-old-brokers", header(0, old=True, extra=16) + model_run(60, (POLL, COMMIT))
    yield "group-codecs-gzip", header(0, codec=1, extra=16) + model_run(60)
    yield "group-codecs-snappy", header(0, codec=2, extra=16) + model_run(60)
    yield "group-codecs-lz4", header(0, codec=3, extra=16) + model_run(60)
    yield "group-codecs-zstd", header(0, codec=4, extra=16) + model_run(60)
    # The coordinator says the group moved on, at each step of membership.
    for err in (15, 16, 22, 25, 27, 79, 82, 23):
        body = model_run(6) + step(err=err) + model_run(6) + step(err=err, conn=1) + \
            model_run(40, (POLL, COMMIT), 5)
        yield "group-error-%d" % err, header(0, extra=16) + body
    # t0 grows while the member is stable: it commits and joins again. The
    # fetch error makes the member ask for metadata at once.
    # What was read since the last commit is committed from inside the
    # metadata answer's handling (the rejoin).
    more = b"".join(step(conn=i % 4, arg_low=14) for i in range(8))
    grow = b"".join(step(conn=i % 4, jump=100 if i == 0 else 0, arg_low=15) for i in range(12))
    yield "group-partitions-grow", header(0, extra=16) + model_run(50, (POLL,), 1, 100) + \
        more + step(err=6) + grow + model_run(30)
    yield "group-session-lost", header(0, extra=16) + model_run(20) + \
        step(mode=NOTHING, jump=60000) + model_run(30)
    yield "group-poll-exceeded", header(0, extra=16) + model_run(20) + \
        step(mode=NOTHING, jump=60000) + step(mode=NOTHING, jump=10000) + model_run(30)
    yield "group-drops", header(0, extra=16) + model_run(10) + step(mode=DROP) + \
        model_run(10) + step(mode=DROP, conn=1) + model_run(30)
    yield "group-damaged", header(0, extra=16) + model_run(8) + \
        step(mode=XOR, payload=b"\x00\x09", arg_low=3) + model_run(8) + \
        step(mode=SPLIT, payload=b"\x07") + model_run(30)
    yield "assign-happy", header(1, extra=16) + model_run(60, (POLL, PAUSE, POLL, RESUME, LAG,
                                                               ASSIGNMENT, COMMIT,
                                                               COMMIT_EXPLICIT), 7)
    yield "assign-out-of-range", header(1) + model_run(10) + step(err=1) + step(err=1, conn=1) + \
        model_run(30)
    yield "assign-not-leader", header(1, codec=3) + model_run(10) + step(err=6) + \
        step(err=3, conn=1) + model_run(30)
    for acks, extra in (("all", 0), ("1", 16), ("0", 32), ("lz4", 64)):
        yield "produce-%s" % acks, header(2, extra=extra) + model_run(60, (0,), 8)
    for err in (6, 45, 46, 47, 59, 10, 87, 7):
        yield "produce-error-%d" % err, header(2) + model_run(8) + step(err=err) + \
            step(err=err, conn=1) + model_run(30, (0,), 6)
    yield "admin-happy", header(3) + model_run(60)
    yield "admin-no-incremental-alter", header(3, hide44=True) + model_run(60)
    yield "admin-no-create-partitions", header(3, hide37=True) + model_run(60)
    yield "admin-old", header(3, old=True) + model_run(60)
    for err in (15, 16, 41, 68, 69, 40, 37, 3):
        yield "admin-error-%d" % err, header(3) + model_run(4) + step(err=err) + \
            model_run(4) + step(err=err) + model_run(40)
    # Garbage where an answer should be.
    yield "raw-body", header(0) + model_run(3) + step(mode=RAW_BODY, payload=b"\xff" * 40) + \
        model_run(20)
    yield "raw-frame", header(2) + model_run(3) + \
        step(mode=RAW_FRAME, payload=b"\x00\x00\x00\x07" + b"\x00" * 20) + model_run(20)
    yield "raw-negative-size", header(1) + model_run(2) + \
        step(mode=RAW_FRAME, payload=b"\xff\xff\xff\xff") + model_run(20)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "client_response")
    os.makedirs(out, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(out, "gen-%s.bin" % name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
