#!/usr/bin/python3
"""Start-up and signals: what the broker does before it serves and when it
is told to stop.

- SIGHUP (the terminal closed) stops the broker cleanly, as SIGTERM does:
  exit 0, `.kafka_cleanshutdown` written, the next start finds a clean stop
  and every record; a broker started with SIGHUP ignored (nohup) keeps it
  ignored and keeps serving.
- SIGPIPE never kills it.
- A first start on an empty log dir says "first start", not "unclean:
  recovering"; a SIGTERM then says clean, a SIGKILL unclean.
- A listener port in use stops start-up with "listeners: HOST:PORT:
  Address already in use" and a non-zero status before any file is made:
  an empty log dir stays empty, a missing one is not created.
- zookeeper.connect set without a broker.id is refused (exit 2, a message saying what to do),
  nothing created.

Usage: test_startup.py SAMSA_BROKER [-k NAME]
"""

import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import check, eq, main  # noqa: E402
import kwire  # noqa: E402

CLEAN_MARK = ".kafka_cleanshutdown"


def wait_exit(b, timeout=30.0):
    """The exit status of b's process, which must end within timeout."""
    try:
        return b.proc.wait(timeout)
    except Exception:
        raise AssertionError("%s did not exit within %.0f s" % (b.name, timeout))


def produce_some(b, topic, n):
    kwire.create_topic(b.port, topic, 1)
    for i in range(n):
        kwire.produce(b.port, topic, 0, [(b"k%d" % i, b"v%d" % i)])


def check_records(b, topic, n):
    records, hw = kwire.read_partition(b.port, topic, 0)
    eq(hw, n, "%s high watermark" % topic)
    eq([r[3] for r in records], [b"v%d" % i for i in range(n)], "%s values" % topic)


def case_sighup_stops_cleanly(t):
    # SIGHUP at its default in the broker whatever the runner inherited (a
    # suite started under nohup ignores it, and the broker keeps it ignored)
    b = t.broker(start=False)
    b.start(preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    produce_some(b, "hup", 5)
    b.proc.send_signal(signal.SIGHUP)
    rc = wait_exit(b)
    b.proc = None
    eq(rc, 0, "exit status after SIGHUP")
    check(os.path.exists(os.path.join(b.log_dir, CLEAN_MARK)),
          "no %s after SIGHUP", CLEAN_MARK)
    check("SIGHUP" in b.log_text(), "the log does not name SIGHUP:\n%s", b.log_text())
    b.start(preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    log = b.log_text()
    check("last stop was clean" in log and "recovering" not in log,
          "the start after SIGHUP does not find a clean stop:\n%s", log)
    check_records(b, "hup", 5)
    b.stop()


def case_sighup_ignored_under_nohup(t):
    b = t.broker(start=False)
    # what nohup (and kafka-server-start.sh -daemon) does before exec
    b.start(preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    produce_some(b, "nohup", 3)
    for _ in range(3):
        os.kill(b.pid, signal.SIGHUP)
    # SIGHUP is handled (or not) on the reactor's next turn: a round trip
    # after it proves the broker took its turn and went on serving
    kwire.produce(b.port, "nohup", 0, [(b"k3", b"v3")])
    check_records(b, "nohup", 4)
    b.check_alive()
    check("received: stopping" not in b.log_text(), "an ignored SIGHUP was logged:\n%s", b.log_text())
    b.stop()


def case_sigpipe_does_not_kill(t):
    b = t.broker()
    produce_some(b, "pipe", 2)
    for _ in range(5):
        os.kill(b.pid, signal.SIGPIPE)
    # peers that vanish with a response on its way (EPIPE on the socket)
    for _ in range(20):
        s = kwire.connect(b.port)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.sendall(kwire.fetch_v4(1, "pipe", 0, 0) * 50)
        s.close()
    check_records(b, "pipe", 2)
    b.check_alive()
    b.stop()


def case_first_start_says_so(t):
    b = t.broker(start=False)
    os.rmdir(b.log_dir)  # not even created yet
    b.start()
    log = b.log_text()
    check("first start" in log, "a first start is not called one:\n%s", log)
    check("unclean" not in log and "recovering" not in log,
          "a first start is called unclean:\n%s", log)
    produce_some(b, "first", 2)
    b.stop()
    b.start(preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    log = b.log_text()
    check("last stop was clean" in log and "first start" not in log,
          "the second start after SIGTERM:\n%s", log)
    b.kill()
    b.start()
    log = b.log_text()
    check("last stop was unclean: recovering" in log and "first start" not in log,
          "the start after SIGKILL:\n%s", log)
    check_records(b, "first", 2)
    b.stop()
    # an existing but empty log dir is a first start too
    e = t.broker(name="empty", start=False)
    e.start()
    check("first start" in e.log_text(), "an empty log dir:\n%s", e.log_text())
    e.stop()


def case_port_in_use_creates_nothing(t):
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        missing = t.path("broker", "not-yet")
        b = t.broker(start=False)
        b.extra_config["log.dirs"] = "%s,%s" % (b.log_dir, missing)
        b.port = port
        t0 = time.monotonic()
        rc = b.run_to_exit()
        log = b.log_text()
        check(rc != 0, "the broker exited with status 0 on a port in use:\n%s", log)
        expect = "listeners: 127.0.0.1:%d: Address already in use" % port
        check(expect in log, "no %r in the log:\n%s", expect, log)
        check(time.monotonic() - t0 < 20, "failing took %.1f s", time.monotonic() - t0)
        eq(sorted(os.listdir(b.log_dir)), [], "files made in the existing log dir")
        check(not os.path.exists(missing), "the missing log dir %s was created", missing)
    finally:
        holder.close()
    # the same broker starts once the port is free
    b.start()
    check("first start" in b.log_text(), "after the failed start:\n%s", b.log_text())
    b.stop()


def case_cluster_without_broker_id_refused(t):
    b = t.broker(start=False, config={"zookeeper.connect": "127.0.0.1:2181/samsa",
                                      "broker.id": "-1"})
    os.rmdir(b.log_dir)
    rc = b.run_to_exit()
    log = b.log_text()
    eq(rc, 2, "exit status with zookeeper.connect set and no broker.id")
    for part in ("broker.id must be set", "broker of a cluster"):
        check(part in log, "no %r in the message:\n%s", part, log)
    check(not os.path.exists(b.log_dir), "the log dir was created")
    # an empty value is a standalone broker (how a Kafka config runs here)
    b.overrides["zookeeper.connect"] = ""
    b.start()
    b.stop()


if __name__ == "__main__":
    sys.exit(main([case_sighup_stops_cleanly, case_sighup_ignored_under_nohup,
                   case_sigpipe_does_not_kill, case_first_start_says_so,
                   case_port_in_use_creates_nothing, case_cluster_without_broker_id_refused]))
