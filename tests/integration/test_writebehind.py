#!/usr/bin/python3
"""Write-behind (broker/src/storage/log_manager.h) keeps the page cache of a
log bounded, off the reactor thread, and costs a lagging reader nothing but
disk reads.

- lagging_consumer_reads_everything: a broker with a 1 MiB write-behind
  window, traced with strace (sync_file_range and fadvise64, each call with
  its thread), takes 12 MB in Produce requests; the calls are made, by
  another thread than the reactor (its tid is the broker's pid); the pages
  of the segment's start leave the page cache (fincore) while its end stays;
  kafka-python then reads every record from offset 0 from the same broker
  (what left the cache comes from disk) and each value is the one
  produced. Skipped when strace is missing or ptrace is refused (the
  read-back is checked without it then).
- off_keeps_the_cache: log.writebehind.enable=false makes no such call.

Runs on Debian's /usr/bin/python3.
"""

import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kwire  # noqa: E402
from broker import Skip, broker_for_strace, check, eq, main  # noqa: E402

TOPIC = "behind"
WINDOW = 1 << 20
BATCHES = 200
PER_BATCH = 10
VALUE = 6000
CALL = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(sync_file_range|fadvise64)\(")


def value_of(i):
    return (b"%010d" % i) * (VALUE // 10)


def produce_all(b):
    with kwire.connect(b.port) as s:
        for n in range(BATCHES):
            recs = [(b"k%d" % (n * PER_BATCH + i), value_of(n * PER_BATCH + i))
                    for i in range(PER_BATCH)]
            base = kwire.produce(b.port, TOPIC, 0, recs, sock=s)
            eq(base, n * PER_BATCH, "base offset of batch %d" % n)


def consume_all(b):
    from kafka import KafkaConsumer, TopicPartition
    tp = TopicPartition(TOPIC, 0)
    c = KafkaConsumer(bootstrap_servers=b.bootstrap, auto_offset_reset="earliest",
                      enable_auto_commit=False, api_version=(2, 0, 0), fetch_max_wait_ms=100)
    try:
        c.assign([tp])
        c.seek(tp, 0)
        out = []
        deadline = time.monotonic() + 60
        while len(out) < BATCHES * PER_BATCH:
            check(time.monotonic() < deadline, "consumer stuck after %d records", len(out))
            for recs in c.poll(timeout_ms=500).values():
                out.extend((r.offset, r.value) for r in recs)
        return out
    finally:
        c.close()


def resident(path):
    """(pages resident, pages) of path by fincore, or None without it."""
    exe = shutil.which("fincore")
    if exe is None:
        return None
    out = subprocess.run([exe, "--raw", "--noheadings", "--bytes", "-o", "PAGES,SIZE", path],
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), (int(out[1]) + 4095) // 4096


def trace(b, out):
    exe = shutil.which("strace")
    if exe is None:
        raise Skip("strace is not installed")
    err_path = out + ".stderr"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen([exe, "-f", "-ttt", "-e", "trace=sync_file_range,fadvise64",
                                 "-o", out, "-p", str(b.pid)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 20
    while True:
        with open(err_path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        if "attached" in text:
            return proc
        if proc.poll() is not None:
            raise Skip("strace cannot attach to the broker (ptrace refused?)")
        check(time.monotonic() < deadline, "strace did not attach within 20 s: %r", text)
        time.sleep(0.05)


def calls(path):
    out = []
    with open(path) as f:
        for line in f:
            m = CALL.match(line)
            if m:
                out.append((int(m.group(1)), m.group(3)))
    return out


def untrace(st):
    """strace detaches on SIGTERM; the broker runs on."""
    st.terminate()
    try:
        st.wait(30)
    except subprocess.TimeoutExpired:
        st.kill()
        st.wait()


def case_lagging_consumer_reads_everything(t):
    b = broker_for_strace(t, overrides={"log.writebehind.window.bytes": str(WINDOW)})
    kwire.create_topic(b.port, TOPIC, 1)
    out = t.path("strace.out")
    st = trace(b, out)
    try:
        produce_all(b)
        seg = kwire.segment_files(b.log_dir, TOPIC, 0)[0]
        size = os.path.getsize(seg)
        # the last jobs may still be away (a slow run: ASan, a loaded
        # machine): wait, with a deadline, until what stays cached is about
        # 2.5 windows (at most 4): the end of the log, warm for readers there
        deadline = time.monotonic() + 30
        res = resident(seg)
        while res is not None and res[0] * 4096 > 4 * WINDOW:
            check(time.monotonic() < deadline,
                  "%d pages of a %d-byte segment still cached after 30 s (at most %d wanted)",
                  res[0], size, 4 * WINDOW // 4096)
            time.sleep(0.1)
            res = resident(seg)
        if res is not None:
            print("%d of %d pages of the segment cached after %d bytes" % (res[0], res[1], size))
    finally:
        untrace(st)
    made = calls(out)
    on_reactor = [c for c in made if c[0] == b.pid]
    check(any(c[1] == "sync_file_range" for c in made), "no sync_file_range call")
    check(any(c[1] == "fadvise64" for c in made), "no fadvise64 call")
    check(not on_reactor, "%d write-behind call(s) on the reactor thread: %r", len(on_reactor),
          on_reactor[:5])
    print("%d sync_file_range and %d fadvise64 calls, none on the reactor"
          % (sum(c[1] == "sync_file_range" for c in made), sum(c[1] == "fadvise64" for c in made)))
    # the same broker: what left the cache is read from disk
    got = consume_all(b)
    eq(len(got), BATCHES * PER_BATCH, "records read back")
    for i, (off, v) in enumerate(got):
        eq(off, i, "offset of record %d" % i)
        check(v == value_of(i), "record %d: a value other than the one produced", i)
    b.stop()


def case_off_keeps_the_cache(t):
    b = broker_for_strace(t, overrides={"log.writebehind.enable": "false"})
    kwire.create_topic(b.port, TOPIC, 1)
    out = t.path("strace.out")
    st = trace(b, out)
    try:
        produce_all(b)
        time.sleep(1.5)  # a tick passes
    finally:
        untrace(st)
    eq(calls(out), [], "write-behind calls with log.writebehind.enable=false")
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_lagging_consumer_reads_everything, case_off_keeps_the_cache]))
