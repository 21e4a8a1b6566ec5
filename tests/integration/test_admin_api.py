"""The admin API (broker/README.md, "The admin API").

On a cluster of three samsa-brokers and a real ZooKeeper:
- every broker registers its admin URL in /brokers/ids/<id>
  ("admin_endpoint") and every broker's /v1/cluster names all three with
  those URLs and the controller ZooKeeper names;
- each partition's leader shows it in full (HW and log start as
  ListOffsets answers them, leader, ISR and replicas in assignment order as
  Metadata has them, every replica's LEO), the other brokers show it from
  their metadata cache with the leader's admin URL;
- the group's coordinator shows the committed offsets OffsetFetch answers
  and their lag against the HW;
- a follower stopped with SIGSTOP: its leader shows it in_sync false with a
  frozen LEO while the HW moves on, and the stream announces the ISR shrink
  (and the expansion after SIGCONT), with growing sequence numbers;
- /metrics parses with prometheus_client's text parser and the records
  appended as leader add up to those produced.

On one standalone broker: the token, the index of the documents at / and
/v1, the connection and stream bounds,
malformed and writing requests answered with a JSON error, and a
non-loopback listener without a token refused at start; on another, idle
admin connections closed (not the stream) and the connection counts and
the API's cost in the broker document and /metrics; on a third, the
broker document's rates over the last minute; on a fourth, a stream client
that reads nothing cut off; a second broker started on a first one's admin
port refused with a message naming admin.listeners.

Runs on Debian's /usr/bin/python3 with kafka-python, kazoo and
prometheus_client. Every process is stopped by its PID.
"""

import base64
import json
import os
import signal
import socket
import struct
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from broker import Skip, check, eq, free_port, main  # noqa: E402
from test_cluster import Cluster, imports, led_everywhere, wait_for  # noqa: E402

TOPIC = "watched"
ASSIGNMENT = [[0, 1, 2], [1, 2, 0], [2, 0, 1]]


def get(url, token=None, method="GET", data=None, headers=None, context=None):
    """(status, parsed JSON or text) of one request; errors are answers too.
    context: the ssl.SSLContext of an https URL."""
    req = urllib.request.Request(url, method=method, data=data)
    if token is not None:
        req.add_header("Authorization", "Bearer " + token)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=10, context=context) as r:
            body, status, ctype = r.read(), r.status, r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        body, status, ctype = e.read(), e.code, e.headers.get("Content-Type", "")
    if ctype.startswith("application/json"):
        return status, json.loads(body)
    return status, body.decode()


def doc(url):
    status, body = get(url)
    eq(status, 200, "GET " + url)
    return body


class Stream:
    """A minimal WebSocket client for /v1/stream: text frames only (the
    server's frames are not masked). context: the ssl.SSLContext of an
    https base URL (the stream is then wss://)."""

    def __init__(self, base, token=None, context=None):
        host, port = base.split("://", 1)[1].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        if context is not None:
            self.sock = context.wrap_socket(self.sock, server_hostname=host)
        key = base64.b64encode(os.urandom(16)).decode()
        auth = "Authorization: Bearer %s\r\n" % token if token else ""
        self.sock.sendall(("GET /v1/stream HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n%s\r\n" % (host, key, auth)).encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise AssertionError("stream closed during the handshake")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        self.status = int(head.split(b" ")[1])

    def _need(self, n, deadline):
        while len(self.buf) < n:
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("stream closed")
            self.buf += chunk

    def message(self, timeout=30.0):
        """The next text message as JSON (pings and pongs skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            self._need(2, deadline)
            op = self.buf[0] & 0x0F
            n = self.buf[1] & 0x7F
            at = 2
            if n == 126:
                self._need(4, deadline)
                n = struct.unpack(">H", self.buf[2:4])[0]
                at = 4
            elif n == 127:
                self._need(10, deadline)
                n = struct.unpack(">Q", self.buf[2:10])[0]
                at = 10
            self._need(at + n, deadline)
            payload, self.buf = self.buf[at:at + n], self.buf[at + n:]
            if op == 1:
                return json.loads(payload)
            if op == 8:
                raise EOFError("stream closed by the server")

    def wait(self, pred, timeout, what):
        """Messages until one satisfies pred; returns (it, arrival time, all seen)."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("%s: not in the stream after %.0f s (%d messages)"
                                     % (what, timeout, len(seen)))
            try:
                m = self.message(left)
            except socket.timeout:
                continue
            seen.append(m)
            if pred(m):
                return m, time.time(), seen

    def close(self):
        self.sock.close()


def stream_refused(s, status, what):
    """s was refused: libsoup 3.2 completes the handshake, so the refusal
    is a close frame before any message; else the upgrade's status."""
    if s.status == 101:
        try:
            m = s.message(10)
            raise AssertionError("%s served: %r" % (what, m))
        except EOFError:
            pass
    else:
        eq(s.status, status, what)


def admin_urls(c):
    def registered():
        urls = {}
        for i in range(3):
            reg = c.json_or_none("/brokers/ids/%d" % i)
            if reg is None or not reg.get("admin_endpoint"):
                return None
            urls[i] = reg["admin_endpoint"]
        return urls
    return wait_for(registered, 30, "admin endpoints registered")


def partition_doc(url, topic, p):
    """Partition p of topic as the broker at url shows it, once its
    snapshot has the topic (published up to 100 ms after a change)."""
    def found():
        st, d = get(url + "/v1/topics/%s/partitions" % topic)
        if st != 200:
            return None
        return next((part for part in d["partitions"] if part["partition"] == p), None)
    return wait_for(found, 30, "partition %s-%d at %s" % (topic, p, url))


def case_cluster_documents_match_the_kafka_protocol(t):
    imports()
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    c = Cluster(t, config={"admin.listeners": "http://127.0.0.1:0",
                           "replica.lag.time.max.ms": "2000"})
    try:
        urls = admin_urls(c)
        c.create_topic(TOPIC, ASSIGNMENT)
        wait_for(lambda: led_everywhere(c, TOPIC, 3), 60, "%s led everywhere" % TOPIC)
        prod = KafkaProducer(bootstrap_servers=c.bootstrap(0), acks="all", retries=5)
        for i in range(90):
            prod.send(TOPIC, value=b"v%d" % i, partition=i % 3)
        prod.flush()
        prod.close()

        # the cluster document, on every broker
        controller = c.controller()
        for i in range(3):
            def complete(i=i):
                d = doc(urls[i] + "/v1/cluster")
                got = {b["id"]: b["admin_url"] for b in d["brokers"]}
                return d if got == urls else None
            d = wait_for(complete, 30, "broker %d names every admin URL" % i)
            eq(d["controller"], controller, "controller seen by broker %d" % i)
            eq(d["broker"], i, "the broker's own id")
            eq([b["alive"] for b in d["brokers"]], [True] * 3, "alive")

        # partitions against Metadata and ListOffsets
        cons = KafkaConsumer(bootstrap_servers=c.bootstrap(1), group_id="watchers",
                             enable_auto_commit=False, auto_offset_reset="earliest")
        tps = [TopicPartition(TOPIC, p) for p in range(3)]
        ends = cons.end_offsets(tps)
        starts = cons.beginning_offsets(tps)
        cons._client.poll(future=cons._client.cluster.request_update())
        md = cons._client.cluster
        for p in range(3):
            leader = md.leader_for_partition(tps[p])
            eq(leader, ASSIGNMENT[p][0], "Metadata leader of %d" % p)

            def caught_up(p=p, leader=leader):
                d = partition_doc(urls[leader], TOPIC, p)
                leos = [r["log_end_offset"] for r in d["replicas"]]
                return d if d["high_watermark"] == ends[tps[p]] and leos == [ends[tps[p]]] * 3 \
                    else None
            d = wait_for(caught_up, 30, "partition %d caught up on its leader" % p)
            eq(d["led_here"], True, "led_here")
            eq(d["leader"], leader, "leader of %d" % p)
            eq(d["log_start_offset"], starts[tps[p]], "log start of %d" % p)
            eq([r["broker"] for r in d["replicas"]], ASSIGNMENT[p], "replicas in assignment order")
            eq(sorted(d["isr"]), [0, 1, 2], "ISR")
            eq(d["osr"], [], "OSR")
            eq([r["in_sync"] for r in d["replicas"]], [True] * 3, "in sync")
            eq([r["lag"] for r in d["replicas"]], [0, 0, 0], "lag")
            check(all(r["time_since_caught_up_ms"] is not None for r in d["replicas"]),
                  "time since caught up known")
            for other in set(range(3)) - {leader}:
                o = partition_doc(urls[other], TOPIC, p)
                eq((o["source"], o["leader"], o["leader_admin_url"]),
                   ("metadata", leader, urls[leader]), "broker %d's view of %d" % (other, p))

        # committed offsets against OffsetFetch, on the group's coordinator
        cons.assign(tps)
        got = 0
        deadline = time.monotonic() + 30
        while got < 50 and time.monotonic() < deadline:
            got += sum(len(v) for v in cons.poll(timeout_ms=500, max_records=50 - got).values())
        cons.commit()
        committed = {p: cons.committed(tps[p]) for p in range(3)}

        def group_doc():
            for i in range(3):
                st, g = get(urls[i] + "/v1/groups/watchers")
                if st == 200 and len(g["offsets"]) == 3:
                    return g
            return None
        g = wait_for(group_doc, 30, "the group on its coordinator")
        for o in g["offsets"]:
            eq(o["committed_offset"], committed[o["partition"]], "committed %d" % o["partition"])
            eq(o["lag"], ends[tps[o["partition"]]] - committed[o["partition"]],
               "lag of %d" % o["partition"])
        cons.close()

        # a group's partitions its coordinator hosts no replica of: their
        # leaders' HWs, read from their admin APIs
        c.create_topic("solo", [[0], [1], [2]])
        wait_for(lambda: led_everywhere(c, "solo", 3), 60, "solo led everywhere")
        prod = KafkaProducer(bootstrap_servers=c.bootstrap(0), acks="all", retries=5)
        for i in range(30):
            prod.send("solo", value=b"s%d" % i, partition=i % 3)
        prod.flush()
        prod.close()
        solo = KafkaConsumer(bootstrap_servers=c.bootstrap(0), group_id="solo-readers",
                             enable_auto_commit=False, api_version=(1, 0))
        stps = [TopicPartition("solo", p) for p in range(3)]
        solo_ends = solo.end_offsets(stps)
        eq(sorted(solo_ends.values()), [10, 10, 10], "solo's end offsets")
        from kafka.structs import OffsetAndMetadata
        solo.commit({stps[p]: OffsetAndMetadata(p + 2, "") for p in range(3)})
        solo.close()

        def solo_doc():
            for i in range(3):
                st, g = get(urls[i] + "/v1/groups/solo-readers")
                if st == 200 and len(g["offsets"]) == 3 and \
                        all(o["lag"] is not None for o in g["offsets"]):
                    return i, g
            return None
        coord, g = wait_for(solo_doc, 30, "solo-readers' lag on its coordinator")
        print("    solo-readers on broker %d: %s" % (coord, g["offsets"]), flush=True)
        for o in g["offsets"]:
            p = o["partition"]
            eq((o["committed_offset"], o["high_watermark"], o["lag"], o["high_watermark_from"]),
               (p + 2, 10, 8 - p, p), "solo-%d on the coordinator %d" % (p, coord))
        eq(g["lag"], 8 + 7 + 6, "solo-readers' total lag")

        # a topic's configs on the brokers that host no replica of it: the
        # configs its leader has (asked of its admin API), named as such
        c.create_topic("single", [[0]], config={"retention.ms": "7654321",
                                                "min.insync.replicas": "1"})
        wait_for(lambda: led_everywhere(c, "single", 1), 60, "single led everywhere")
        def topic_doc(i, headers=None, configs_like=None):
            """single's document on broker i once its snapshot has the topic
            (404 until then) and, if asked, once its configs are those."""
            st, d = get(urls[i] + "/v1/topics/single", headers=headers)
            if st != 200 or (configs_like is not None and not configs_like(d["configs"])):
                return None
            return d
        # broker 0 reads the configs from ZooKeeper once the topic is there
        own = wait_for(lambda: topic_doc(0, configs_like=lambda c: c.get("retention.ms") ==
                                         "7654321"), 30, "single's configs on broker 0")
        eq(own["configs_from"], 0, "single's configs on its host")
        # another broker's read is answered from this broker's own state
        # (so reads never chain): broker 2 has not asked broker 0 yet
        d = wait_for(lambda: topic_doc(2, headers={"X-Samsa-Admin-Peer": "1"}), 30,
                     "single in broker 2's documents")
        eq((d["configs"], d["configs_from"], d["min_insync_replicas"]), ({}, -1, None),
           "a peer's read of single on broker 2")
        for i in (1, 2):
            d = wait_for(lambda i=i: topic_doc(i, configs_like=lambda c: c == own["configs"]),
                         30, "broker 0's configs of single on broker %d" % i)
            eq((d["configs_from"], d["min_insync_replicas"]), (0, 1),
               "single's configs on broker %d" % i)

        # a member of a group as DescribeGroups shows it: client id, host, assignment
        from kafka import KafkaConsumer
        member = KafkaConsumer(TOPIC, bootstrap_servers=c.bootstrap(0), group_id="doc-members",
                               client_id="doc-member", api_version=(1, 0),
                               enable_auto_commit=False)
        try:
            deadline = time.monotonic() + 60
            while not member.assignment() and time.monotonic() < deadline:
                member.poll(timeout_ms=200)
            eq(len(member.assignment()), 3, "partitions assigned to the member")

            def members_doc():
                for i in range(3):
                    st, g = get(urls[i] + "/v1/groups/doc-members")
                    if st == 200 and g["state"] == "Stable" and len(g["member_list"]) == 1:
                        return g
                return None
            g = wait_for(members_doc, 30, "the member on its group's coordinator")
            m = g["member_list"][0]
            eq(m["client_id"], "doc-member", "member's client id")
            eq(m["client_host"], "/127.0.0.1", "member's host")
            eq(sorted((a["topic"], a["partition"]) for a in m["assignment"]),
               [(TOPIC, p) for p in range(3)], "member's assignment")
        finally:
            member.close()

        # /metrics: appended as leader on the three brokers = produced
        try:
            from prometheus_client.parser import text_string_to_metric_families
        except ImportError as e:
            raise Skip("needs prometheus_client (%s)" % e)
        total = 0
        for i in range(3):
            st, text = get(urls[i] + "/metrics")
            eq(st, 200, "/metrics of %d" % i)
            fams = {f.name: f for f in text_string_to_metric_families(text)}
            for s in fams["kafka_server_brokertopicmetrics_messagesin"].samples:
                if s.labels.get("topic") == TOPIC and s.name.endswith("_total"):
                    total += int(s.value)
            check("kafka_server_replicamanager_underreplicatedpartitions" in fams,
                  "UnderReplicatedPartitions exported")
            leaders = [s.value for s in fams["kafka_server_replicamanager_leadercount"].samples]
            check(leaders and leaders[0] >= 1, "broker %d leads a partition" % i)
        eq(total, 90, "records appended as leader, over the brokers")
    finally:
        c.close()


def case_cluster_stopped_follower_leaves_the_isr_in_documents_and_stream(t):
    imports()
    from kafka import KafkaProducer
    c = Cluster(t, config={"admin.listeners": "http://127.0.0.1:0",
                           "replica.lag.time.max.ms": "2000"})
    stream = None
    try:
        urls = admin_urls(c)
        c.create_topic(TOPIC, ASSIGNMENT)
        wait_for(lambda: led_everywhere(c, TOPIC, 3), 60, "%s led everywhere" % TOPIC)
        prod = KafkaProducer(bootstrap_servers=c.bootstrap(0), acks=1, retries=5)
        for i in range(10):
            prod.send(TOPIC, value=b"a%d" % i, partition=0)
        prod.flush()
        wait_for(lambda: all(r["in_sync"] and r["lag"] == 0 for r in
                             partition_doc(urls[0], TOPIC, 0)["replicas"]), 30, "all in sync")
        stream = Stream(urls[0])
        eq(stream.status, 101, "WebSocket upgrade")
        hello = stream.message()
        eq((hello["type"], hello["broker"]), ("hello", 0), "hello")
        last_seq = hello["seq"]

        os.kill(c.brokers[2].pid, signal.SIGSTOP)
        stopped_at = time.time()
        try:
            # produce while it is stopped, until the leader drops it
            def dropped():
                prod.send(TOPIC, value=b"b", partition=0)
                prod.flush()
                d = partition_doc(urls[0], TOPIC, 0)
                r2 = [r for r in d["replicas"] if r["broker"] == 2][0]
                return d if not r2["in_sync"] else None
            d = wait_for(dropped, 60, "replica 2 out of sync")
            eq(d["osr"], [2], "OSR")
            frozen = [r for r in d["replicas"] if r["broker"] == 2][0]["log_end_offset"]
            hw = d["high_watermark"]
            for i in range(20):
                prod.send(TOPIC, value=b"c%d" % i, partition=0)
            prod.flush()

            def moved_on():
                d2 = partition_doc(urls[0], TOPIC, 0)
                return d2 if d2["high_watermark"] >= hw + 20 else None
            d2 = wait_for(moved_on, 30, "HW moves on without replica 2")
            r2 = [r for r in d2["replicas"] if r["broker"] == 2][0]
            eq(r2["log_end_offset"], frozen, "replica 2's LEO frozen")
            eq(r2["in_sync"], False, "replica 2 not in sync")
            check(r2["lag"] >= 20, "replica 2's lag grows (%s)" % r2["lag"])
            check(r2["time_since_caught_up_ms"] >= 2000, "not caught up for 2 s")

            def shrink(m):
                return (m.get("type") == "isr_shrink" and m["topic"] == TOPIC
                        and m["partition"] == 0 and m["removed"] == [2])
            ev, arrived, seen = stream.wait(shrink, 60, "ISR shrink")
            seqs = [m["seq"] for m in seen]
            eq(seqs, list(range(last_seq + 1, last_seq + 1 + len(seqs))), "sequence numbers")
            last_seq = seqs[-1]
            state = c.state(TOPIC, 0)
            _, zstat = c.get("/brokers/topics/%s/partitions/0/state" % TOPIC)
            print("ISR shrink: znode written %.0f ms after SIGSTOP, announced %.0f ms after "
                   "the znode write" % (zstat.mtime - stopped_at * 1000,
                                        arrived * 1000 - zstat.mtime), flush=True)
            eq(2 in state["isr"], False, "the state znode agrees")
        finally:
            os.kill(c.brokers[2].pid, signal.SIGCONT)

        def expand(m):
            return (m.get("type") == "isr_expand" and m["topic"] == TOPIC
                    and m["partition"] == 0 and m["added"] == [2])
        prod.send(TOPIC, value=b"d", partition=0)
        prod.flush()
        ev, arrived, seen = stream.wait(expand, 60, "ISR expansion")
        seqs = [m["seq"] for m in seen]
        eq(seqs, list(range(last_seq + 1, last_seq + 1 + len(seqs))), "sequence numbers")
        prod.close()
    finally:
        if stream is not None:
            stream.close()
        c.close()


def standalone(t, name, **config):
    base = {"admin.listeners": "http://127.0.0.1:0"}
    base.update(config)
    b = t.broker(name=name, config=base)
    url = wait_for(lambda: next((w for w in b.log_text().split()
                                 if w.startswith("http://127.0.0.1:")), None), 10, "admin URL")
    return b, url


def case_standalone_token_bounds_and_errors(t):
    b, url = standalone(t, "secure", **{"admin.auth.token": "s3cret",
                                        "admin.max.connections": "4",
                                        "admin.stream.max.clients": "1"})
    try:
        st, body = get(url + "/v1/cluster")
        eq((st, body["error"]["code"]), (401, "UNAUTHORIZED"), "no token")
        st, body = get(url + "/v1/cluster", token="wrong")
        eq(st, 401, "a wrong token")
        st, body = get(url + "/v1/cluster", token="s3cret")
        eq((st, body["mode"]), (200, "standalone"), "the token")
        # / and /v1: an index of the documents, each of which answers
        for path in ("/", "/v1", "/v1/"):
            st, body = get(url + path, token="s3cret")
            eq(st, 200, "GET " + path)
            paths = [d["path"] for d in body["documents"]]
            check("/v1/cluster" in paths and "/metrics" in paths and "/v1/stream" in paths,
                  "the index of %s: %s", path, paths)
        eq(get(url + "/", token=None)[0], 401, "the index needs the token too")
        for path in paths:
            if "{" not in path and path != "/v1/stream":
                eq(get(url + path, token="s3cret")[0], 200, "GET %s from the index" % path)
        st, body = get(url + "/v1/brokers/0", token="s3cret")
        eq(st, 200, "the broker document")
        configs = body["configs"]
        check("admin.auth.token" in configs and configs["admin.auth.token"] is None,
              "the token is never shown")
        for path, want in [("/v1/topics/nope", 404), ("/v1/brokers/x", 400),
                           ("/v1/brokers/7", 404), ("/v2/cluster", 404),
                           ("/v1/" + "a" * 3000, 414)]:
            st, body = get(url + path, token="s3cret")
            eq(st, want, "GET " + path[:40])
            check(isinstance(body, dict) and "error" in body, "a JSON error for " + path[:40])
        st, body = get(url + "/v1/cluster", token="s3cret", method="POST", data=b"{}")
        eq(st, 405, "POST refused")
        check("error" in body, "a JSON error for POST")
        st, body = get(url + "/v1/cluster", token="s3cret", method="DELETE")
        eq(st, 405, "DELETE refused")

        # one stream client at most
        s1 = Stream(url, token="s3cret")
        eq(s1.status, 101, "first stream client")
        eq(s1.message()["type"], "hello", "hello")
        s2 = Stream(url, token="s3cret")
        stream_refused(s2, 503, "a second stream client")
        s2.close()
        s1.close()

        # four connections at most (the stream's may take a moment to go)
        def busy_refused():
            socks = [socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])))
                     for _ in range(4)]
            try:
                time.sleep(0.2)  # let the server accept them before the fifth
                st, body = get(url + "/v1/cluster", token="s3cret")
                return (st, body["error"]["code"]) if st == 503 else None
            finally:
                for s in socks:
                    s.close()
        eq(wait_for(busy_refused, 10, "the fifth connection refused"),
           (503, "TOO_MANY_CONNECTIONS"), "connection bound")
        # and served again once they are gone
        eq(wait_for(lambda: get(url + "/v1/cluster", token="s3cret")[0] == 200, 10,
                    "served again"), True, "after the bound")
        check(b.alive(), "the broker is still up")
    finally:
        b.stop()

    # a listener that is not loopback needs a token: start-up refuses it
    bad = t.broker(name="open", start=False, config={"admin.listeners": "http://0.0.0.0:0"})
    bad.port = free_port()
    proc = bad._spawn()
    try:
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    check(rc != 0, "start refused (exit %s)" % rc)
    check("admin.auth.token" in bad.log_text(), "the log says why")


def samples(url, name):
    """{frozenset(labels): value} of one metric family in url's /metrics,
    parsed with prometheus_client's text parser."""
    from prometheus_client.parser import text_string_to_metric_families
    st, text = get(url + "/metrics")
    eq(st, 200, "/metrics")
    out = {}
    for fam in text_string_to_metric_families(text):
        for smp in fam.samples:
            if smp.name == name:
                out[frozenset(smp.labels.items())] = smp.value
    return out


def case_standalone_idle_connections_closed_and_connections_counted(t):
    """admin.connections.max.idle.ms: a connection that sends nothing, and
    one that never finishes its request, are closed once idle that long;
    a stream client is not. The broker document and /metrics count the
    Kafka listeners' connections, the admin API's own, and what the API
    costs (snapshots built, the admin thread's CPU)."""
    try:
        import prometheus_client  # noqa: F401
    except ImportError as e:
        raise Skip("needs prometheus_client (%s)" % e)
    b, url = standalone(t, "idle", **{"admin.connections.max.idle.ms": "1000"})
    port = int(url.rsplit(":", 1)[1])
    socks = []
    try:
        stream = Stream(url)
        eq(stream.message()["type"], "hello", "the stream's hello")
        quiet = socket.create_connection(("127.0.0.1", port))
        half = socket.create_connection(("127.0.0.1", port))
        half.sendall(b"GET /v1/clu")
        for name, sk in (("a connection sending nothing", quiet),
                         ("a request never finished", half)):
            sk.settimeout(30)
            t0 = time.monotonic()
            eq(sk.recv(100), b"", name + ": closed by the broker")
            print("    %s: closed after %.1f s" % (name, time.monotonic() - t0), flush=True)
            sk.close()
        # the stream outlived them: a topic made now is announced on it
        from kafka.admin import KafkaAdminClient, NewTopic
        adm = KafkaAdminClient(bootstrap_servers="127.0.0.1:%d" % b.port, api_version=(1, 0))
        try:
            adm.create_topics([NewTopic("idle-made", 1, 1)])
        finally:
            adm.close()
        stream.wait(lambda m: m.get("type") == "topic_created" and m.get("topic") == "idle-made",
                    30, "topic_created on the stream after the idle closes")

        # three Kafka connections open now
        socks = [socket.create_connection(("127.0.0.1", b.port)) for _ in range(3)]

        def counted():
            st, d = get(url + "/v1/brokers/0")
            eq(st, 200, "the broker document")
            c = d["connections"]
            return d if c["open"] >= 3 and c["admin"]["idle_closed"] >= 2 else None
        d = wait_for(counted, 30, "three Kafka connections and two idle closes counted")
        print("    connections: %s, cost: %s" % (d["connections"], d["admin_cost"]), flush=True)
        c = d["connections"]
        check(c["accepted"] >= c["open"] >= 3, "accepted %d, open %d", c["accepted"], c["open"])
        eq(c["admin"]["stream_clients"], 1, "stream clients")
        check(c["admin"]["open"] >= 2, "admin connections open: the stream and this request")
        check(d["admin_cost"]["snapshots_built"] >= 1, "snapshots built")
        check(d["admin_cost"]["admin_thread_cpu_ms"] > 0, "the admin thread's CPU")
        for k in socks:
            k.close()
        socks = []
        wait_for(lambda: list(samples(url, "kafka_server_socket_server_metrics_connection_count")
                              .values()) == [0.0], 30, "no Kafka connection open in /metrics")
        eq(list(samples(url, "samsa_admin_stream_clients").values()), [1.0],
           "samsa_admin_stream_clients")
        check(list(samples(url, "samsa_admin_connections_idle_closed_total").values())[0] >= 2,
              "samsa_admin_connections_idle_closed_total")
        check(list(samples(url, "kafka_server_socket_server_metrics_connection_creation_total")
                   .values())[0] >= 3, "connection_creation_total")
        check(list(samples(url, "samsa_admin_thread_cpu_seconds_total").values())[0] > 0,
              "samsa_admin_thread_cpu_seconds_total")
        stream.close()
    finally:
        for k in socks:
            k.close()
        b.stop()


def case_standalone_rates_over_the_last_minute(t):
    """The broker document's rates: requests per API and messages and bytes
    in and out a second, over the last minute (since the start for a broker
    younger than that): rate x window is what was counted in the window."""
    from kafka import KafkaProducer
    b, url = standalone(t, "rates")
    try:
        # the first sample, before anything is produced
        wait_for(lambda: get(url + "/v1/brokers/0")[0] == 200, 30, "the first snapshot")
        prod = KafkaProducer(bootstrap_servers="127.0.0.1:%d" % b.port, acks=1, linger_ms=0)
        for i in range(40):
            prod.send("rated", value=b"r%02d" % i, partition=0).get(timeout=30)
        prod.close()

        def counted():
            d = get(url + "/v1/brokers/0")[1]
            return d if d["totals"]["messages_in"] == 40 else None
        d = wait_for(counted, 30, "40 messages in the broker document")
        r = d["rates"]
        produce = next(a for a in d["requests"] if a["api"] == "Produce")
        print("    rates: %s; Produce: %s" % (r, produce), flush=True)
        window = r["window_ms"] / 1000.0
        check(0 < window <= 61, "the window: %.1f s", window)
        check(abs(r["messages_in_per_s"] * window - 40) < 0.01,
              "messages in over the window: %.2f a second x %.1f s", r["messages_in_per_s"],
              window)
        check(abs(r["bytes_in_per_s"] * window - d["totals"]["bytes_in"]) < 0.5,
              "bytes in over the window")
        eq(produce["requests"], 40, "Produce requests")
        check(abs(produce["per_s"] * window - 40) < 0.01,
              "Produce requests over the window: %.2f a second", produce["per_s"])
    finally:
        b.stop()


def case_standalone_stream_client_that_does_not_read_is_cut_off(t):
    """admin.stream.max.stall.ms: a stream client that reads nothing while
    events flow (the kernel's send queue holding 64 KiB or more at every
    check) is cut off after that long, counted in the broker document and
    /metrics; the stream serves new clients as before."""
    from kafka import KafkaProducer
    b, url = standalone(t, "stall", **{"admin.stream.max.stall.ms": "2000"})
    host, port = url.replace("http://", "").rsplit(":", 1)
    stuck = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    prod = None
    try:
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect((host, int(port)))
        key = base64.b64encode(os.urandom(16)).decode()
        stuck.sendall(("GET /v1/stream HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                       "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                       "Sec-WebSocket-Version: 13\r\n\r\n" % (host, key)).encode())
        stuck.settimeout(30)
        eq(stuck.recv(12), b"HTTP/1.1 101", "the stuck client's upgrade")
        # from here on it reads nothing; events flow: 32 partitions written
        from kafka.admin import KafkaAdminClient, NewTopic
        adm = KafkaAdminClient(bootstrap_servers="127.0.0.1:%d" % b.port, api_version=(1, 0))
        try:
            adm.create_topics([NewTopic("stalling", 32, 1)])
        finally:
            adm.close()
        prod = KafkaProducer(bootstrap_servers="127.0.0.1:%d" % b.port, acks=1)

        def stalled():
            for i in range(64):
                prod.send("stalling", value=b"x" * 100, partition=i % 32)
            prod.flush()
            d = get(url + "/v1/brokers/0")[1]
            return d if d["connections"]["admin"]["streams_stalled"] == 1 else None
        d = wait_for(stalled, 60, "the stuck stream client cut off")
        print("    admin connections: %s" % d["connections"]["admin"], flush=True)
        wait_for(lambda: get(url + "/v1/brokers/0")[1]["connections"]["admin"]
                 ["stream_clients"] == 0, 30, "no stream client left")
        eq(list(samples(url, "samsa_admin_streams_stalled_total").values()), [1.0],
           "samsa_admin_streams_stalled_total")
        check("cut off (admin.stream.max.stall.ms)" in b.log_text(), "the cut is logged")
        # what was queued for it is gone: reading it to the end, the end comes
        stuck.settimeout(30)
        got = 0
        try:
            while True:
                chunk = stuck.recv(1 << 20)
                if not chunk:
                    break
                got += len(chunk)
        except ConnectionResetError:
            pass
        print("    the stuck client read %d bytes before the end" % got, flush=True)
        # and the stream goes on for others
        s = Stream(url)
        eq(s.message()["type"], "hello", "a new stream client's hello")
        s.close()
    finally:
        if prod is not None:
            prod.close()
        stuck.close()
        b.stop()


def case_standalone_second_broker_on_the_same_admin_port_names_the_setting(t):
    b, url = standalone(t, "first")
    port = int(url.rsplit(":", 1)[1])
    second = t.broker(name="second", config={"admin.listeners": "http://127.0.0.1:%d" % port},
                      start=False)
    rc = second.run_to_exit()
    check(rc != 0, "the second broker started on the first's admin port")
    log = second.log_text()
    check(("admin.listeners http://127.0.0.1:%d" % port) in log and
          "another broker on this host? set admin.listeners to a port of its own" in log,
          "the refusal does not say which setting: %s", log[-600:])
    eq(get(url + "/v1/cluster")[0], 200, "the first broker's API")


if __name__ == "__main__":
    sys.exit(main([case_cluster_documents_match_the_kafka_protocol,
                   case_cluster_stopped_follower_leaves_the_isr_in_documents_and_stream,
                   case_standalone_idle_connections_closed_and_connections_counted,
                   case_standalone_rates_over_the_last_minute,
                   case_standalone_stream_client_that_does_not_read_is_cut_off,
                   case_standalone_token_bounds_and_errors,
                   case_standalone_second_broker_on_the_same_admin_port_names_the_setting]))
