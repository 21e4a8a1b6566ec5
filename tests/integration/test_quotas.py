"""Client quotas on a standalone broker (broker/README.md, "Client quotas"):
producer_byte_rate and consumer_byte_rate from quota.config.file, as Kafka
2.0's ClientQuotaManager holds clients to them, with KIP-219's
throttle_time_ms seen by librdkafka (confluent-kafka's statistics) and the
connection muted for it.

    /usr/bin/python3 tests/integration/test_quotas.py build/broker/samsa-broker [-k NAME]

Each rate is measured by the client over an interval after a warm-up:
Kafka's rate assumes a window of 10 s from the first record, so a client
starts with a burst of up to ten seconds of quota before it is held.
"""

import json
import os
import struct
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import Skip, check, free_port, main  # noqa: E402

try:
    import confluent_kafka
except ImportError:  # pragma: no cover
    confluent_kafka = None

QUOTA = 51200  # bytes per second
VALUE = b"q" * 1000


def need_client():
    if confluent_kafka is None:
        raise Skip("confluent-kafka is not installed")


def quota_broker(t, text, config=None):
    path = t.path("quotas.conf")
    with open(path, "w") as f:
        f.write(text)
    return t.broker(config={"quota.config.file": path, **(config or {})}), path


def wait_for_log(b, text, timeout=10):
    deadline = time.monotonic() + timeout
    while text not in b.log_text():
        check(time.monotonic() < deadline, "the broker did not log %r", text)
        time.sleep(0.1)


def admin_get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
        body = r.read().decode()
    return json.loads(body) if path.startswith("/v1") else body


def check_admin_view(port):
    """/v1/quotas and /metrics while the held producer is held: its quota
    in force, its rate with the throttle time it earned, the free client's
    rate with no quota and no throttle."""
    d = admin_get(port, "/v1/quotas")
    check({"user": None, "client_id": "held", "producer_byte_rate": QUOTA,
           "consumer_byte_rate": None, "request_percentage": None} in d["quotas"],
          "/v1/quotas: %s", d["quotas"])
    rates = {(c["type"], c["client_id"]): c for c in d["clients"]}
    held = rates.get(("Produce", "held"))
    free = rates.get(("Produce", "free"))
    check(held is not None and held["quota"] == QUOTA and held["throttle_time_ms_total"] > 0,
          "/v1/quotas clients: %s", d["clients"])
    check(free is not None and free["quota"] is None and free["throttle_time_ms_total"] == 0
          and free["rate"] > 2 * QUOTA, "/v1/quotas clients: %s", d["clients"])
    m = admin_get(port, "/metrics")
    line = next((ln for ln in m.splitlines() if ln.startswith(
        'kafka_server_quota_throttle_time_ms_total{type="Produce",user="",client_id="held"}')),
        None)
    check(line is not None and int(line.split()[-1]) > 0, "/metrics: %s", line)
    print("/v1/quotas: held at %.0f B/s, %d ms of throttle in all, %d now" %
          (held["rate"], held["throttle_time_ms_total"], held["throttle_time_ms_left"]))


class Producer:
    """A confluent-kafka producer on its own thread: every acknowledged
    value's size and time, and the largest throttle librdkafka's statistics
    reported (brokers[].throttle.max, the throttle_time_ms it was sent)."""

    def __init__(self, bootstrap, client_id, topic, pace_bps=None):
        self.acked = []  # (monotonic time, bytes)
        self.throttle_max = 0
        self.errors = []
        self.topic = topic
        self.pace_bps = pace_bps
        self.stop = threading.Event()
        self.p = confluent_kafka.Producer({
            "bootstrap.servers": bootstrap,
            "client.id": client_id,
            "linger.ms": 5,
            "queue.buffering.max.messages": 200,
            # requests of 10 values: the quota holds a producer in steps of one
            "batch.num.messages": 10,
            "message.timeout.ms": 120000,
            "statistics.interval.ms": 500,
            "stats_cb": self._stats,
        })
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _stats(self, doc):
        for b in json.loads(doc).get("brokers", {}).values():
            self.throttle_max = max(self.throttle_max, b.get("throttle", {}).get("max", 0))

    def _done(self, err, msg):
        if err is not None:
            self.errors.append(str(err))
        else:
            self.acked.append((time.monotonic(), len(msg.value())))

    def _run(self):
        start = time.monotonic()
        sent = 0
        while not self.stop.is_set():
            if self.pace_bps is not None:
                ahead = sent / self.pace_bps - (time.monotonic() - start)
                if ahead > 0:
                    self.p.poll(min(ahead, 0.05))
                    continue
            try:
                self.p.produce(self.topic, VALUE, on_delivery=self._done)
                sent += len(VALUE)
            except BufferError:
                self.p.poll(0.05)
                continue
            self.p.poll(0)
        self.p.flush(30)

    def rate(self, t0, t1):
        return sum(n for t, n in self.acked if t0 <= t < t1) / (t1 - t0)

    def burst_starts(self, quota):
        """When the producer's bursts began: a tenth of a second with more
        than two tenths' worth of quota acknowledged after one with less.
        A producer that always has records waiting is held by Kafka's rate
        in bursts: ten windows of quota at once whenever a full sample
        leaves the window of eleven, a trickle between."""
        bins = {}
        for at, n in self.acked:
            bins[int(at * 10)] = bins.get(int(at * 10), 0) + n
        starts = []
        for k in sorted(bins):
            if bins[k] > 0.2 * quota and bins.get(k - 1, 0) <= 0.2 * quota and (
                    not starts or k / 10.0 - starts[-1] >= 5):  # not a dip within a burst
                starts.append(k / 10.0)
        return starts

    def held_then_released(self, release, held_for=12, free_for=9):
        """Runs for held_for seconds, calls release(), runs free_for more:
        the rate from 4 s to the release, and over the last 4 s."""
        t0 = time.monotonic()
        self.thread.start()
        try:
            time.sleep(held_for)
            t_held = time.monotonic()
            release()
            time.sleep(max(0.0, free_for - (time.monotonic() - t_held)))
            t_free = time.monotonic()
        finally:
            self.stop.set()
            self.thread.join(60)
        return self.rate(t0 + 4, t_held), self.rate(t_free - 4, t_free)


def case_producer_held_to_producer_byte_rate_other_client_not(t):
    """Two producers on one broker: client id 'held' has producer_byte_rate
    50 KiB/s and is held to it within 10 %, measured from its first burst
    to its last (whole periods of Kafka's window, about 23 s); 'free' has no
    quota and goes at the 200 KiB/s it is paced at. librdkafka's statistics show
    the held producer's throttle time, the free one's none; so do the admin
    API's /v1/quotas and /metrics."""
    need_client()
    admin = free_port()
    b, _ = quota_broker(t, "# test\nclients/held producer_byte_rate=%d\n" % QUOTA,
                        {"admin.listeners": "http://127.0.0.1:%d" % admin})
    held = Producer(b.bootstrap, "held", "quota-held")
    free = Producer(b.bootstrap, "free", "quota-free", pace_bps=4 * QUOTA)
    t0 = time.monotonic()
    held.thread.start()
    free.thread.start()
    time.sleep(15)
    check_admin_view(admin)
    time.sleep(34 - (time.monotonic() - t0))
    t_stop = time.monotonic()
    held.stop.set()
    free.stop.set()
    held.thread.join(60)
    free.thread.join(60)
    check(not held.errors and not free.errors, "delivery errors: %s %s",
          held.errors[:3], free.errors[:3])
    bursts = [b for b in held.burst_starts(QUOTA) if b < t_stop]
    check(len(bursts) >= 2 and bursts[-1] - bursts[0] >= 20, "bursts at %s", bursts)
    held_rate = held.rate(bursts[0], bursts[-1])
    free_rate = free.rate(bursts[0], bursts[-1])
    print("held: %.0f B/s over %.1f s (quota %d; bursts at %s s), throttle max %d ms; "
          "free: %.0f B/s, throttle max %d ms" %
          (held_rate, bursts[-1] - bursts[0], QUOTA, ["%.1f" % (b - t0) for b in bursts],
           held.throttle_max, free_rate, free.throttle_max))
    check(abs(held_rate - QUOTA) <= 0.1 * QUOTA, "held producer at %.0f B/s, quota %d",
          held_rate, QUOTA)
    check(free_rate >= 3 * QUOTA, "free producer only at %.0f B/s", free_rate)
    check(held.throttle_max > 0, "librdkafka saw no throttle_time_ms for the held producer")
    check(free.throttle_max == 0, "the free producer was throttled %d ms", free.throttle_max)
    b.stop()


def case_consumer_held_to_consumer_byte_rate(t):
    """A consumer with consumer_byte_rate 50 KiB/s reads a topic of 2.5 MB
    at 80 to 110 % of it from 3 s to 25 s. A throttled Fetch is answered
    empty and its bytes are not counted (Kafka's unrecordQuotaSensor), so
    a consumer that always has records to read gets ten windows of quota at
    once, then nothing until that sample leaves the window of eleven
    (Kafka's Rate counts at least ten windows): about 10/11 of its quota."""
    need_client()
    b, _ = quota_broker(t, "clients/slow-reader consumer_byte_rate=%d\n" % QUOTA)
    # batches of 10 records: a Fetch returns whole batches, and the quota
    # holds a consumer to it in steps of what one Fetch returns
    p = confluent_kafka.Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 20,
                                  "batch.num.messages": 10})
    for _ in range(2500):
        while True:
            try:
                p.produce("quota-read", VALUE)
                break
            except BufferError:
                p.poll(0.1)
    check(p.flush(60) == 0, "records left unflushed")
    c = confluent_kafka.Consumer({
        "bootstrap.servers": b.bootstrap,
        "client.id": "slow-reader",
        "group.id": "quota-readers",
        "auto.offset.reset": "earliest",
        "fetch.max.bytes": 16384,
        "message.max.bytes": 16384,
        "max.partition.fetch.bytes": 16384,
        "enable.auto.commit": False,
        **({"debug": "fetch,protocol"} if os.environ.get("QDEBUG") else {}),
    })
    c.subscribe(["quota-read"])
    got = []
    first = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is None or m.error() is not None:
            if first is not None and time.monotonic() - first > 25:
                break
            continue
        now = time.monotonic()
        if first is None:
            first = now
        got.append((now, len(m.value())))
        if now - first > 25:
            break
    c.close()
    check(first is not None, "nothing consumed")
    rate = sum(n for at, n in got if first + 3 <= at < first + 25) / 22.0
    print("consumer: %.0f B/s from 3 s to 25 s (quota %d), %d records in all" %
          (rate, QUOTA, len(got)))
    check(0.8 * QUOTA <= rate <= 1.1 * QUOTA, "consumer at %.0f B/s, quota %d", rate, QUOTA)
    b.stop()


def samsa_tool(broker_exe):
    """The samsa tool of the same build (client/samsa beside broker/)."""
    exe = os.path.join(os.path.dirname(os.path.abspath(broker_exe)), "..", "client", "samsa")
    if not os.path.exists(exe):
        raise Skip("no samsa tool in this build (-Dclient=false)")
    return exe


def samsa_quotas(t, *args):
    import subprocess
    out = subprocess.run([samsa_tool(t.exe), "quotas", *args], capture_output=True, text=True,
                         timeout=60)
    check(out.returncode == 0, "samsa quotas %s: exit %d: %s", " ".join(args), out.returncode,
          out.stderr)
    return out.stdout


def case_quota_file_read_again_when_changed(t):
    """The quota file changed while the broker runs, by `samsa quotas
    --alter --file`: a producer paced at 30 KiB/s and held to 10 KiB/s goes
    at its pace within a few seconds of its quota's removal (a mute under
    way runs out first)."""
    need_client()
    samsa_tool(t.exe)
    b, path = quota_broker(t, "")
    samsa_quotas(t, "--alter", "--file", path, "--entity-type", "clients", "--entity-name",
                 "changing", "--add-config", "producer_byte_rate=10240")
    out = samsa_quotas(t, "--describe", "--file", path)
    check(out == "clients/changing producer_byte_rate=10240\n", "--describe printed %r", out)
    wait_for_log(b, "quotas: 1 entities")
    p = Producer(b.bootstrap, "changing", "quota-changing", pace_bps=3 * 10240)
    held, free = p.held_then_released(lambda: samsa_quotas(
        t, "--alter", "--file", path, "--entity-type", "clients", "--entity-name", "changing",
        "--delete-config", "producer_byte_rate"))
    print("held %.0f B/s, after the file changed %.0f B/s" % (held, free))
    check(held < 1.3 * 10240, "held at %.0f B/s under a quota of 10240", held)
    check(free > 2 * 10240, "still held at %.0f B/s after the quota was removed", free)
    check(b.log_text().count("quotas: 0 entities") == 2,
          "the broker did not log the file read again")
    b.stop()


def metadata_throttles(port, client_id, seconds):
    """Metadata v4 requests one after another on one connection for that
    long: each response's throttle_time_ms, and how long the request after
    a throttled response waited for its answer (the connection muted)."""
    import kwire
    throttles = []
    waits = []
    s = kwire.connect(port)
    try:
        end = time.monotonic() + seconds
        corr = 0
        last = 0
        while time.monotonic() < end:
            corr += 1
            sent = time.monotonic()
            payload = kwire.roundtrip(s, kwire.request(kwire.METADATA, 4, corr,
                                                       kwire.array([]) + kwire.i8(0),
                                                       client_id=client_id))
            if last > 0:
                waits.append((last, time.monotonic() - sent))
            last = struct.unpack_from(">i", payload, 4)[0]  # after the correlation id
            throttles.append(last)
    finally:
        s.close()
    return throttles, waits


def case_request_percentage_throttles_every_response(t):
    """request_percentage 0.01 (a hundred microseconds a second) for client
    'busy': a Metadata response soon carries a throttle_time_ms of at most
    one window (1 s, ClientRequestQuotaManager's cap) and the request after
    it waits about that long (KIP-219's mute); client 'idle', without a
    quota, sends as much and is never throttled."""
    b, _ = quota_broker(t, "clients/busy request_percentage=0.01\n")
    busy, waits = metadata_throttles(b.port, "busy", 2)
    idle, _ = metadata_throttles(b.port, "idle", 2)
    print("busy: %d requests, throttles up to %d ms; idle: %d requests, throttles up to %d ms" %
          (len(busy), max(busy), len(idle), max(idle)))
    check(0 < max(busy) <= 1000, "busy's throttle_time_ms: %s", sorted(set(busy)))
    # throttles of a few ms are within the timers' millisecond granularity
    check(all(w >= 0.8 * ms / 1000.0 for ms, w in waits if ms >= 10),
          "a request after a throttle answered before its mute ran out: %s",
          [(ms, w) for ms, w in waits if ms >= 10 and w < 0.8 * ms / 1000.0][:5])
    check(max(idle) == 0, "idle throttled: %s", sorted(set(idle)))
    b.stop()


def case_bad_quota_file_stops_start_up(t):
    """A quota file with an unknown key stops start-up naming the line."""
    path = t.path("bad-quotas.conf")
    with open(path, "w") as f:
        f.write("clients/a producer_byte_rate=100\nclients/b bytes_per_second=5\n")
    b = t.broker(config={"quota.config.file": path}, start=False)
    rc = b.run_to_exit()
    check(rc != 0, "the broker started with a bad quota file")
    log = b.log_text()
    check("line 2" in log and "bytes_per_second" in log, "no line named: %s", log[-400:])


if __name__ == "__main__":
    sys.exit(main([
        case_producer_held_to_producer_byte_rate_other_client_not,
        case_consumer_held_to_consumer_byte_rate,
        case_quota_file_read_again_when_changed,
        case_request_percentage_throttles_every_response,
        case_bad_quota_file_stops_start_up,
    ]))
