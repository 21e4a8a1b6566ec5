#!/usr/bin/python3
"""Damaged identity and metadata files are never taken silently, against
the real broker.

    test_damaged_metadata.py SAMSA_BROKER [-k CASE]

- garbage_meta_properties: random bytes, text that is not key=value, an
  unknown version, no broker.id, an empty file: the broker refuses to start
  (non-zero status, a message naming the file and saying how to go on) and
  leaves the file as it was; put back, the broker starts with its cluster id
  and records.
- broker_id_mismatch: a configured broker.id that differs from the stored
  one is refused with Kafka's message.
- kafka_meta_properties: a Kafka 2.0 file (no cluster.id) is taken, with a
  warning, and gets a cluster.id.
- metadata_deleted: samsa-metadata deleted while partition directories stay:
  refused (the message names the file and a directory); the directories are
  untouched; once they are moved away the broker starts, and a topic
  auto-created under the old name is empty.
- stray_partition_dir: a partition directory of no topic next to an intact
  samsa-metadata is refused the same way.
- missing_partition_dir: a topic whose directory is gone starts empty, with
  a warning.
"""

import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def high_watermark(b, topic):
    return kwire.list_offset(b.port, topic, 0, -1)[1]


def broker_with_records(t, topic="kept", name="broker"):
    b = t.broker(name=name)
    kwire.create_topic(b.port, topic, 1)
    kwire.produce(b.port, topic, 0, [(None, b"old %d" % i) for i in range(4)])
    b.stop()
    return b


def refused(b, *words):
    """Starts b expecting a refusal whose log holds every word."""
    rc = b.run_to_exit()
    log = b.log_text()
    check(rc != 0, "exit status %d after a refused start", rc)
    for w in words:
        check(w in log, "the log lacks %r:\n%s", w, log[-3000:])
    return log


def case_garbage_meta_properties(t):
    b = broker_with_records(t)
    path = os.path.join(b.log_dir, "meta.properties")
    good = read(path)
    cluster = [ln for ln in good.decode().splitlines() if ln.startswith("cluster.id=")]
    eq(len(cluster), 1, "cluster.id lines in %r" % good)
    rng = random.Random(7)
    noise = bytes(rng.randrange(256) for _ in range(300))
    for garbage, why in ((noise, "control byte"),
                         (b"hello world\n", "is not key=value"),
                         (b"version=7\nbroker.id=0\n", "Unrecognized version"),
                         (b"version=0\ncluster.id=abc\n", "no broker.id"),
                         (b"", "no version")):
        write(path, garbage)
        refused(b, path, why, "Restore it from a backup")
        eq(read(path), garbage, "meta.properties after the refused start")
    write(path, good)
    b.start()
    eq(read(path), good, "meta.properties after a start")
    check(cluster[0] in read(path).decode(), "the cluster id changed")
    eq(high_watermark(b, "kept"), 4, "records of kept")
    b.stop()


def case_broker_id_mismatch(t):
    b = broker_with_records(t)
    path = os.path.join(b.log_dir, "meta.properties")
    good = read(path)
    b.overrides["broker.id"] = "5"
    refused(b, "Configured broker.id 5 doesn't match stored broker.id 0 in meta.properties")
    eq(read(path), good, "meta.properties after the refused start")
    del b.overrides["broker.id"]
    b.start()
    eq(high_watermark(b, "kept"), 4, "records of kept")
    b.stop()


def case_kafka_meta_properties(t):
    b = broker_with_records(t)
    path = os.path.join(b.log_dir, "meta.properties")
    write(path, b"#\n#Tue Dec 01 10:00:00 UTC 2026\nversion=0\nbroker.id=0\n")
    b.start()
    check("has no cluster.id" in b.log_text(), "no warning about the missing cluster.id")
    text = read(path).decode()
    check("broker.id=0" in text and "cluster.id=" in text, "meta.properties now: %r", text)
    eq(high_watermark(b, "kept"), 4, "records of kept")
    b.stop()


def case_metadata_deleted(t):
    b = broker_with_records(t)
    meta = os.path.join(b.log_dir, "samsa-metadata")
    part = os.path.join(b.log_dir, "kept-0")
    before = sorted(os.listdir(part))
    os.unlink(meta)
    refused(b, meta + " is missing", part, "will not adopt them")
    eq(sorted(os.listdir(part)), before, "files of kept-0 after the refused start")
    check(not os.path.exists(meta), "the refused start wrote %s", meta)
    # as the message says: move the directories away to start without them
    shutil.move(part, os.path.join(t.dir, "kept-0.saved"))
    b.start()
    kwire.wait_topic(b.port, "kept", 1)  # auto-creates it
    check(high_watermark(b, "kept") == 0, "auto-created kept is not empty")
    records, _ = kwire.read_partition(b.port, "kept", 0)
    eq(records, [], "records of the auto-created kept")
    b.stop()


def case_stray_partition_dir(t):
    b = broker_with_records(t)
    other = broker_with_records(t, "stray", name="other")
    stray = os.path.join(b.log_dir, "stray-0")
    shutil.copytree(os.path.join(other.log_dir, "stray-0"), stray)
    refused(b, "partition directory of no topic", stray, "will not adopt them")
    check(os.path.isdir(stray), "the refused start removed %s", stray)
    shutil.rmtree(stray)
    b.start()
    eq(high_watermark(b, "kept"), 4, "records of kept")
    b.stop()


def case_missing_partition_dir(t):
    b = broker_with_records(t)
    shutil.rmtree(os.path.join(b.log_dir, "kept-0"))
    b.start()
    check("topic kept: 1 of 1 partition directories are missing" in b.log_text(),
          "no warning about the missing directory")
    eq(high_watermark(b, "kept"), 0, "kept without its directory")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_garbage_meta_properties, case_broker_id_mismatch,
                   case_kafka_meta_properties, case_metadata_deleted, case_stray_partition_dir,
                   case_missing_partition_dir]))
