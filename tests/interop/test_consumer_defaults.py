#!/usr/bin/python3
"""librdkafka's default consumer (kcat 1.7.1 -G, librdkafka 2.0.2) against
samsa-broker at its defaults.

    test_consumer_defaults.py SAMSA_BROKER [-k CASE]

- default_consumer_never_overfills_its_queue: 320,000 x 100 B in 32
  partitions (10,000 each, written with kcat -P), read by `kcat -G` (a
  group member, every consumer property at librdkafka's default) with
  librdkafka's fetch debug log on. librdkafka stops fetching while its
  queue holds queued.min.messages (100,000) and looks again only at its
  broker thread's next wake-up, up to a second later; a broker that lets
  one Fetch response hold more than that stalls the consumer after every
  such response (with Kafka's fetch.max.bytes of 55 MiB, one response
  held about 280,000 of these messages). Checked: every message arrives
  (10,000 per partition) within a generous 120 s, and no single Fetch
  response brought 100,000 messages or more (the Enqueue lines between
  two "Fetch N/N/N toppar(s)" lines of the log; librdkafka has one Fetch
  in flight per broker). How often librdkafka paused and the time taken
  are printed, not checked: a consumer starved of CPU can fill its queue
  over several responses on a loaded machine.
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402

PARTITIONS = 32
PER_PARTITION = 10_000
SIZE = 100
QUEUED_MIN_MESSAGES = 100_000  # librdkafka's default

FETCH_REQUEST = re.compile(r"Fetch \d+/\d+/\d+ toppar")
ENQUEUE = re.compile(r"Enqueue (\d+) message\(s\)")


def case_default_consumer_never_overfills_its_queue(t):
    b = t.broker()
    topic = "defaults-100B-32p"
    eq(kadmin.create_topic(b.port, topic, PARTITIONS), 0, "CreateTopics error code")
    for p in range(PARTITIONS):
        data = b"".join(b"%04d-%05d-" % (p, i) + b"v" * (SIZE - 11) + b"\n"
                        for i in range(PER_PARTITION))
        r = subprocess.run(["kcat", "-P", "-b", b.bootstrap, "-t", topic, "-p", str(p)],
                           input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        eq(r.returncode, 0, "kcat -P into partition %d (stderr %r)" % (p, r.stderr[-500:]))
    total = PARTITIONS * PER_PARTITION

    t0 = time.monotonic()
    argv = ["kcat", "-b", b.bootstrap, "-G", "defaults-%d" % os.getpid(), "-o", "beginning",
            "-c", str(total), "-f", "%p\n", "-X", "debug=fetch", topic]
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    except subprocess.TimeoutExpired as e:
        got = (e.stdout or b"").count(b"\n")
        raise AssertionError("kcat -G read %d of %d messages in 120 s" % (got, total))
    elapsed = time.monotonic() - t0
    eq(r.returncode, 0, "kcat -G exit status")
    per = [0] * PARTITIONS
    for line in r.stdout.split():
        per[int(line)] += 1
    eq(per, [PER_PARTITION] * PARTITIONS, "messages read per partition")

    responses = []
    current = None
    for line in r.stderr.decode(errors="replace").splitlines():
        if FETCH_REQUEST.search(line):
            if current is not None:
                responses.append(current)
            current = 0
            continue
        m = ENQUEUE.search(line)
        if m and current is not None:
            current += int(m.group(1))
    if current is not None:
        responses.append(current)
    enqueued = sum(responses)
    # the log is librdkafka 2.0.2's; if it changed, say so rather than pass
    check(enqueued >= total, "librdkafka's fetch log accounts for %d of %d messages in %d "
          "responses: has its debug format changed?", enqueued, total, len(responses))
    pauses = len(re.findall(rb"not fetchable: queued\.min\.messages exceeded", r.stderr))
    print("  %d messages in %.1f s (group join included), %d Fetch responses, at most %d "
          "messages in one, librdkafka paused %d partition(s) for a full queue"
          % (total, elapsed, len(responses), max(responses), pauses))
    check(max(responses) < QUEUED_MIN_MESSAGES,
          "one Fetch response brought %d messages, at least librdkafka's default "
          "queued.min.messages (%d): its default consumer stops fetching until a later "
          "wake-up after every such response", max(responses), QUEUED_MIN_MESSAGES)


CASES = [case_default_consumer_never_overfills_its_queue]

if __name__ == "__main__":
    sys.exit(main(CASES))
