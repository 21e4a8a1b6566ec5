"""libsamsa and the samsa tool against the real samsa-broker, with kcat and
confluent-kafka (librdkafka) reading what libsamsa wrote and writing what it
reads, and keys placed on the partitions confluent-kafka's murmur2_random
places them on.

    test_client_integration.py SAMSA_BROKER SAMSA_TOOL [-k CASE]
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import main  # noqa: E402

TOOL = None
TIMEOUT = 60


def samsa(*args, stdin=None, expect=0):
    p = subprocess.run([TOOL] + list(args), input=stdin, capture_output=True, timeout=TIMEOUT)
    if expect is not None and p.returncode != expect:
        raise AssertionError("samsa %s: exit %d (wanted %d)\nstdout: %s\nstderr: %s"
                             % (" ".join(args), p.returncode, expect, p.stdout[-2000:],
                                p.stderr[-2000:]))
    return p


def kcat(*args, stdin=None):
    p = subprocess.run(["kcat"] + list(args), input=stdin, capture_output=True, timeout=TIMEOUT)
    if p.returncode != 0:
        raise AssertionError("kcat %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def started(t):
    return t.broker(config={"num.partitions": "1"}).bootstrap


def case_produce_consume_exact_counts_and_contents(t):
    bs = started(t)
    samsa("topic", "create", "-b", bs, "exact", "--partitions", "3")
    lines = ["key-%d:value-%d" % (i, i) for i in range(3000)]
    p = samsa("produce", "-b", bs, "-t", "exact", "-K", ":",
              stdin=("\n".join(lines) + "\n").encode())
    assert b"3000 delivered, 0 failed" in p.stderr, p.stderr
    out = samsa("consume", "-b", bs, "-t", "exact", "--from", "beginning", "-e",
                "-f", "%p %o %k:%s\\n").stdout.decode().splitlines()
    assert len(out) == 3000, len(out)
    got = sorted(l.split(" ", 2)[2] for l in out)
    assert got == sorted(lines), "contents differ"
    # Offsets of each partition are 0..n-1 in order, and keys keep their
    # production order inside a partition.
    by_part = {}
    for l in out:
        part, off, kv = l.split(" ", 2)
        by_part.setdefault(part, []).append((int(off), int(kv.split(":")[0][4:])))
    assert len(by_part) == 3, by_part.keys()
    for part, recs in by_part.items():
        assert [o for o, _ in recs] == list(range(len(recs))), part
        assert [k for _, k in recs] == sorted(k for _, k in recs), part
    ten = samsa("consume", "-b", bs, "-t", "exact", "--from", "beginning",
                "--count", "10").stdout.decode().splitlines()
    assert len(ten) == 10, ten


def case_codecs_and_acks_round_trip_through_kcat(t):
    bs = started(t)
    want = "".join("line %d %s\n" % (i, "x" * (i % 50)) for i in range(500))
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"]:
        for acks in ["0", "1", "all"]:
            topic = "c-%s-%s" % (codec, acks)
            samsa("produce", "-b", bs, "-t", topic, "-X", "compression.type=" + codec,
                  "-X", "acks=" + acks, "-X", "linger.ms=20", stdin=want.encode())
            if acks == "0":
                # Nothing acknowledges acks=0: wait until the log has it all.
                deadline = time.time() + 20
                while time.time() < deadline:
                    got = kcat("-C", "-b", bs, "-t", topic, "-e", "-q", "-o", "beginning")
                    if got.count(b"\n") >= 500:
                        break
                    time.sleep(0.1)
            got = kcat("-C", "-b", bs, "-t", topic, "-e", "-q", "-o", "beginning")
            assert got.decode() == want, "%s acks=%s: kcat read %d bytes" % (codec, acks, len(got))


def case_samsa_reads_what_kcat_wrote(t):
    bs = started(t)
    lines = "".join("k%d;v%d\n" % (i, i) for i in range(1000))
    kcat("-P", "-b", bs, "-t", "from-kcat", "-K", ";", "-z", "lz4", stdin=lines.encode())
    out = samsa("consume", "-b", bs, "-t", "from-kcat", "--from", "beginning", "-e",
                "-K", ";").stdout.decode()
    assert out == lines, out[:200]
    js = samsa("consume", "-b", bs, "-t", "from-kcat", "--from", "beginning", "-e",
               "--json").stdout.decode().splitlines()
    first = json.loads(js[0])
    assert first["key"] == "k0" and first["value"] == "v0" and first["offset"] == 0, first


def case_keys_land_where_confluent_kafka_murmur2_random_puts_them(t):
    import confluent_kafka
    bs = started(t)
    for topic in ("keys-samsa", "keys-ck"):
        samsa("topic", "create", "-b", bs, topic, "--partitions", "7")
    keys = ["key-%d" % i for i in range(300)] + ["fd7af248-ce5c-46a5-93d7-1c0c9005b99d", ""]
    samsa("produce", "-b", bs, "-t", "keys-samsa", "-K", "\t",
          stdin="".join("%s\tv\n" % k for k in keys).encode())
    ck_part = {}
    p = confluent_kafka.Producer({"bootstrap.servers": bs, "partitioner": "murmur2_random"})

    def dr(err, msg):
        assert err is None, err
        ck_part[msg.key().decode()] = msg.partition()
    for k in keys:
        p.produce("keys-ck", key=k.encode(), value=b"v", on_delivery=dr)
    assert p.flush(30) == 0
    out = samsa("consume", "-b", bs, "-t", "keys-samsa", "--from", "beginning", "-e",
                "-f", "%p\t%k\\n").stdout.decode().splitlines()
    ours = {}
    for l in out:
        part, key = l.split("\t", 1)
        ours[key] = int(part)
    assert len(ours) == len(keys), (len(ours), len(keys))
    diff = [k for k in keys if ours[k] != ck_part[k]]
    assert not diff, "keys placed differently: %s" % diff[:10]


def case_topic_admin_and_errors(t):
    bs = started(t)
    samsa("topic", "create", "-b", bs, "adm", "--partitions", "4", "--config",
          "retention.ms=60000")
    p = samsa("topic", "create", "-b", bs, "adm", expect=1)
    assert b"TOPIC_ALREADY_EXISTS" in p.stderr, p.stderr
    names = samsa("topic", "list", "-b", bs).stdout.decode().split()
    assert "adm" in names, names
    d = json.loads(samsa("topic", "describe", "-b", bs, "adm", "--json").stdout)
    assert d[0]["name"] == "adm" and d[0]["partitions"] == 4, d
    assert [p["leader"] for p in d[0]["partition_info"]] == [0, 0, 0, 0], d
    info = json.loads(samsa("cluster", "info", "-b", bs, "--json").stdout)
    assert info["controller"] == 0 and info["brokers"][0]["port"] == int(bs.split(":")[1]), info
    samsa("topic", "delete", "-b", bs, "adm")
    deadline = time.time() + 20
    while "adm" in samsa("topic", "list", "-b", bs).stdout.decode().split():
        assert time.time() < deadline, "adm still listed"
        time.sleep(0.1)
    p = samsa("produce", "-b", bs, "-t", "x", "-X", "no.such.key=1", stdin=b"", expect=2)
    assert b"unknown configuration key \"no.such.key\"" in p.stderr, p.stderr
    p = samsa("produce", "-b", bs, "-t", "x", "-X", "acks=2", stdin=b"", expect=2)
    assert b"acks" in p.stderr and b"not one of" in p.stderr, p.stderr
    p = samsa("consume", "-b", bs, "-t", "x", "--from", "yesterday", expect=2)
    assert b"bad --from" in p.stderr
    samsa("frobnicate", expect=2)
    for cmd in (["topic", "--help"], ["produce", "--help"], ["consume", "--help"],
                ["cluster", "--help"], ["--help"]):
        assert b"usage" in samsa(*cmd).stdout
    # A broker nobody listens on: a clear failure at once, exit 1.
    p = samsa("topic", "list", "-b", "127.0.0.1:1", "--timeout", "1500", expect=1)
    assert b"127.0.0.1:1: connection refused" in p.stderr, p.stderr


def case_seek_to_offset_and_timestamp(t):
    bs = started(t)
    before = int(time.time() * 1000)
    samsa("produce", "-b", bs, "-t", "seek", "-p", "0",
          stdin="".join("r%d\n" % i for i in range(20)).encode())
    out = samsa("consume", "-b", bs, "-t", "seek", "-p", "0", "--from", "5", "--count", "3",
                "-f", "%o %s\\n").stdout.decode().splitlines()
    assert out == ["5 r5", "6 r6", "7 r7"], out
    time.sleep(0.05)  # the second batch gets a later timestamp than `middle`
    middle = int(time.time() * 1000)
    samsa("produce", "-b", bs, "-t", "seek", "-p", "0", stdin=b"late1\nlate2\n")
    out = samsa("consume", "-b", bs, "-t", "seek", "--from", "@%d" % middle, "-e").stdout
    assert out.decode().splitlines() == ["late1", "late2"], out
    out = samsa("consume", "-b", bs, "-t", "seek", "--from", "@%d" % before, "-e").stdout
    assert len(out.decode().splitlines()) == 22, out
    # --from end with -e: nothing, and it exits.
    assert samsa("consume", "-b", bs, "-t", "seek", "--from", "end", "-e").stdout == b""


if __name__ == "__main__":
    TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_produce_consume_exact_counts_and_contents,
                   case_codecs_and_acks_round_trip_through_kcat,
                   case_samsa_reads_what_kcat_wrote,
                   case_keys_land_where_confluent_kafka_murmur2_random_puts_them,
                   case_topic_admin_and_errors,
                   case_seek_to_offset_and_timestamp]))
