#!/usr/bin/env python3
"""SASL listeners: PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 with real clients.

    test_sasl.py path/to/samsa-broker [-k NAME]

One standalone broker serves every case: a PLAINTEXT listener (where the
harness probes), SASL_PLAINTEXT and SASL_SSL ones with PLAIN, SCRAM-SHA-256
and SCRAM-SHA-512 enabled; the PLAIN users come from the listeners'
PlainLoginModule entries (listener.name.<l>.plain.sasl.jaas.config), the
SCRAM credentials from sasl.scram.credentials.file, computed here as
Kafka's ScramFormatter does (PBKDF2, HMAC, SHA). kcat and confluent-kafka
(librdkafka: SaslHandshake v1 + SaslAuthenticate) and kafka-python
(SaslHandshake v0 + raw tokens) produce and read back; a wrong password and
an unknown mechanism are refused with Kafka's errors; a request before
authentication is answered ILLEGAL_SASL_STATE and the connection closed; a
pre-authentication frame over 512 KiB closes its connection while another
client goes on.
"""

import atexit
import base64
import hashlib
import hmac
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "interop"))

from broker import Broker, Skip, check, eq, free_port, main  # noqa: E402
import kwire  # noqa: E402
from test_tls import make_certs  # noqa: E402

SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
SASL_AUTHENTICATION_FAILED = 58

USERS = {"alice": "alice-secret", "bob": "bob-secret"}


def scram_credential(mech, password, iterations=4096, salt=None):
    """Kafka's credential string for one password (ScramCredentialUtils)."""
    h = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mech]
    salt = salt or os.urandom(16)
    salted = hashlib.pbkdf2_hmac(h, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", h).digest()
    stored = hashlib.new(h, client_key).digest()
    server = hmac.new(salted, b"Server Key", h).digest()
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return "salt=%s,stored_key=%s,server_key=%s,iterations=%d" % (
        b64(salt), b64(stored), b64(server), iterations)


def jaas(users):
    return ("org.apache.kafka.common.security.plain.PlainLoginModule required "
            'username="admin" password="admin-secret" '
            + " ".join('user_%s="%s"' % (u, p) for u, p in users.items()) + ";")


_shared = {}


def shared_broker():
    """The file's one broker, started at the first case that needs it."""
    if "b" in _shared:
        _shared["b"].check_alive()
        return _shared["b"]
    exe = sys.argv[1]
    top = tempfile.mkdtemp(prefix="test_sasl-shared-", dir=os.environ.get("SAMSA_TEST_TMPDIR"))
    certs = make_certs(os.path.join(top, "certs"))
    creds = os.path.join(top, "scram.credentials")
    with open(creds, "w") as f:
        f.write("# user=znode JSON, as /config/users/<user>\n")
        for u, p in USERS.items():
            cfg = {m: scram_credential(m, p) for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")}
            f.write("%s=%s\n" % (u, json.dumps({"version": 1, "config": cfg})))
    b = Broker(exe, top, name="sasl")
    b.port = free_port()
    b.sasl_port = free_port()
    b.sasl_ssl_port = free_port()
    b.certs = certs
    b.extra_config.update({
        "listeners": "PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d,"
                     "SASL_SSL://127.0.0.1:%d" % (b.port, b.sasl_port, b.sasl_ssl_port),
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas(USERS),
        "listener.name.sasl_ssl.plain.sasl.jaas.config": jaas(USERS),
        "sasl.scram.credentials.file": creds,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": os.path.join(certs, "broker.pem"),
        "connections.max.unauthenticated.ms": "3000",
        # groups form at once, and __consumer_offsets is quick to make
        "group.initial.rebalance.delay.ms": "0",
        "offsets.topic.num.partitions": "3",
    })
    # ACLs (SimpleAclAuthorizer): on "acl-sasl" only alice may write; no ACL
    # elsewhere, so everyone may; the PLAINTEXT listener's ANONYMOUS is a super user
    b.extra_config.update({
        "authorizer.class.name": "kafka.security.auth.SimpleAclAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
        "super.users": "User:ANONYMOUS",
    })
    with open(os.path.join(b.log_dir, "acls.json"), "w") as f:
        json.dump({"version": 1, "acls": [
            {"resourceType": "Topic", "name": "acl-sasl", "patternType": "LITERAL",
             "principal": "User:alice", "host": "*", "operation": op,
             "permissionType": "Allow"} for op in ("Write", "Read")]}, f)
    b.start()
    _shared["b"] = b
    _shared["top"] = top

    def cleanup():
        b.kill()
        if not os.environ.get("SAMSA_TEST_KEEP"):
            shutil.rmtree(top, ignore_errors=True)
    atexit.register(cleanup)
    return b


def kcat(port, props, *args, data=None, timeout=60):
    if shutil.which("kcat") is None:
        raise Skip("no kcat")
    argv = ["kcat", "-b", "127.0.0.1:%d" % port]
    for k, v in props.items():
        argv += ["-X", "%s=%s" % (k, v)]
    return subprocess.run(argv + list(args), input=data, capture_output=True, timeout=timeout)


def sasl_props(mech, user="alice", password=None, protocol="sasl_plaintext"):
    return {"security.protocol": protocol, "sasl.mechanism": mech, "sasl.username": user,
            "sasl.password": USERS.get(user, "x") if password is None else password}


def kcat_roundtrip(port, props, topic):
    lines = b"".join(b"%s-%d\n" % (topic.encode(), i) for i in range(50))
    r = kcat(port, props, "-P", "-t", topic, data=lines)
    eq(r.returncode, 0, "kcat -P exit (%s)" % r.stderr.decode(errors="replace")[-300:])
    r = kcat(port, props, "-C", "-t", topic, "-o", "beginning", "-e", "-q")
    eq(r.returncode, 0, "kcat -C exit (%s)" % r.stderr.decode(errors="replace")[-300:])
    eq(r.stdout, lines, "what kcat read back")


def case_kcat_plain_and_scram(t):
    """librdkafka's path (ApiVersions, SaslHandshake v1, SaslAuthenticate):
    each mechanism produces and reads back; the broker logs the principal."""
    b = shared_broker()
    for mech in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        kcat_roundtrip(b.sasl_port, sasl_props(mech), "kcat-" + mech.lower())
    check("authenticated as User:alice with SCRAM-SHA-512" in b.log_text(),
          "no log line with the principal")


def case_kcat_over_sasl_ssl(t):
    b = shared_broker()
    props = sasl_props("SCRAM-SHA-256", user="bob", protocol="sasl_ssl")
    props["ssl.ca.location"] = os.path.join(b.certs, "ca.pem")
    kcat_roundtrip(b.sasl_ssl_port, props, "kcat-sasl-ssl")
    props = sasl_props("PLAIN", protocol="sasl_ssl")
    props["ssl.ca.location"] = os.path.join(b.certs, "ca.pem")
    kcat_roundtrip(b.sasl_ssl_port, props, "kcat-sasl-ssl-plain")


def case_kafka_python_raw_tokens(t):
    """kafka-python 2.0.2: SaslHandshake v0, then raw tokens."""
    try:
        import kafka
    except ImportError:
        raise Skip("no kafka-python")
    b = shared_broker()
    for mech in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        topic = "kp-" + mech.lower()
        common = dict(bootstrap_servers="127.0.0.1:%d" % b.sasl_port,
                      security_protocol="SASL_PLAINTEXT", sasl_mechanism=mech,
                      sasl_plain_username="bob", sasl_plain_password=USERS["bob"],
                      api_version=(2, 0, 0))
        p = kafka.KafkaProducer(**common)
        for i in range(20):
            p.send(topic, b"v%d" % i)
        p.flush(30)
        p.close()
        c = kafka.KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000,
                                **common)
        got = []
        for m in c:
            got.append(m.value)
            if len(got) == 20:
                break
        c.close()
        eq(got, [b"v%d" % i for i in range(20)], "what kafka-python read with " + mech)


def case_confluent_kafka_scram(t):
    try:
        import confluent_kafka
    except ImportError:
        raise Skip("no confluent-kafka")
    b = shared_broker()
    conf = {"bootstrap.servers": "127.0.0.1:%d" % b.sasl_port, "security.protocol": "sasl_plaintext",
            "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice",
            "sasl.password": USERS["alice"]}
    p = confluent_kafka.Producer(conf)
    for i in range(20):
        p.produce("ck-scram", b"c%d" % i)
    eq(p.flush(30), 0, "messages left unsent")
    c = confluent_kafka.Consumer(dict(conf, **{"group.id": "g", "auto.offset.reset": "earliest"}))
    c.subscribe(["ck-scram"])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < 20 and time.monotonic() < deadline:
        m = c.poll(1.0)
        if m is not None and m.error() is None:
            got.append(m.value())
    c.close()
    eq(got, [b"c%d" % i for i in range(20)], "what confluent-kafka read")


def kafkajs(b, mech, user, password, topic, count):
    """sasl_kafkajs.js's JSON answer."""
    try:
        from test_kafkajs import node_dir
        nd = node_dir()
    except Exception as e:  # no npm, no network: as the interop tests
        raise Skip("no kafkajs: %s" % str(e).splitlines()[0][:200])
    env = dict(os.environ, NODE_PATH=os.path.join(nd, "node_modules"),
               KAFKAJS_NO_PARTITIONER_WARNING="1")
    p = subprocess.run(["node", os.path.join(HERE, "sasl_kafkajs.js"),
                        "127.0.0.1:%d" % b.sasl_port, mech, user, password, topic, str(count)],
                       capture_output=True, env=env, timeout=120)
    check(p.returncode == 0, "sasl_kafkajs.js exited with %d: %s", p.returncode,
          p.stderr.decode(errors="replace")[-1000:])
    return json.loads(p.stdout.decode().strip().splitlines()[-1])


def case_kafkajs_plain_and_scram(t):
    """kafkajs 2.2.4 (SaslHandshake v1 + SaslAuthenticate): each mechanism
    produces and reads back; a wrong password is its SASL authentication
    error."""
    b = shared_broker()
    for mech in ("plain", "scram-sha-256", "scram-sha-512"):
        got = kafkajs(b, mech, "alice", USERS["alice"], "kjs-" + mech, 10)
        eq(got.get("values"), ["%s-%d" % (mech, i) for i in range(10)],
           "what kafkajs read with " + mech)
    got = kafkajs(b, "scram-sha-256", "alice", "wrong", "kjs-wrong", 1)
    eq(got.get("error"), "KafkaJSSASLAuthenticationError", "kafkajs's error for a wrong password")
    check("SASL_AUTHENTICATION_FAILED" in got.get("message", "") or
          "invalid credentials" in got.get("message", ""),
          "kafkajs's message: %r", got.get("message"))


def case_sarama_plain(t):
    """sarama 1.22 (Go) with SASL PLAIN produces and reads back; run by
    interop-sasl-sarama, where the Go clients are built ($SAMSA_GO_CLIENTS)."""
    try:
        from goclients import go_run
    except ImportError:
        raise Skip("no goclients")
    if not os.environ.get("SAMSA_GO_CLIENTS"):
        raise Skip("the Go clients are not built here ($SAMSA_GO_CLIENTS)")
    b = shared_broker()
    auth = ["-sasl-user", "bob", "-sasl-password", USERS["bob"]]
    brokers = "127.0.0.1:%d" % b.sasl_port
    out = go_run("sarama-client", "produce", "-brokers", brokers, "-topic", "sarama-sasl",
                 "-n", 20, "-partitions", 1, *auth)
    eq(len(out), 20, "messages sarama acknowledged")
    got = go_run("sarama-client", "consume", "-brokers", brokers, "-topic", "sarama-sasl",
                 "-partitions", 1, *auth)
    eq([m["value"] for m in got if "value" in m], ["value-%d" % i for i in range(20)],
       "what sarama read")
    r = None
    try:
        go_run("sarama-client", "list-topics", "-brokers", brokers, "-sasl-user", "bob",
               "-sasl-password", "wrong", timeout=60)
    except AssertionError as e:
        r = str(e)
    check(r is not None, "sarama was served with a wrong password")


def case_acls_check_the_sasl_principal(t):
    """The ACLs see User:<SASL name>: on a topic whose ACLs allow alice only,
    alice (SCRAM) produces and bob (PLAIN) is refused with
    TOPIC_AUTHORIZATION_FAILED."""
    b = shared_broker()
    kwire.create_topic(b.port, "acl-sasl", 1)
    kcat_roundtrip(b.sasl_port, sasl_props("SCRAM-SHA-256"), "acl-sasl")
    r = kcat(b.sasl_port, sasl_props("PLAIN", user="bob"), "-P", "-t", "acl-sasl",
             data=b"denied\n")
    err = r.stderr.decode(errors="replace")
    check(r.returncode != 0 and "authorization failed" in err.lower(),
          "bob was not refused by the ACLs: %s", err[-300:])


def case_wrong_password_refused(t):
    """A wrong password and an unknown user fail alike, with
    SASL_AUTHENTICATION_FAILED; librdkafka reports an authentication error."""
    b = shared_broker()
    for mech, user, pw in (("PLAIN", "alice", "wrong"), ("PLAIN", "nobody", "wrong"),
                           ("SCRAM-SHA-256", "alice", "wrong"),
                           ("SCRAM-SHA-512", "nobody", "wrong")):
        r = kcat(b.sasl_port, sasl_props(mech, user=user, password=pw), "-L", "-m", "1")
        err = r.stderr.decode(errors="replace")
        check(r.returncode != 0, "%s %s: kcat -L succeeded", mech, user)
        check("SASL authentication error" in err and "Authentication failed" in err,
              "%s %s: no authentication error from kcat: %s", mech, user, err[-300:])
    # on the wire: SaslAuthenticate v0 answers 58 with a message
    with kwire.connect(b.sasl_port) as s:
        resp = kwire.roundtrip(s, handshake(1, 1, "PLAIN"))
        eq(parse_handshake(resp)[0], 0, "SaslHandshake error")
        t0 = time.monotonic()
        resp = kwire.roundtrip(s, authenticate(2, b"\0alice\0wrong"))
        code, msg = parse_authenticate(resp)[:2]
        eq(code, SASL_AUTHENTICATION_FAILED, "SaslAuthenticate error for a wrong password")
        check(time.monotonic() - t0 >= 0.08, "the failure came before the 100 ms delay")
        check("Invalid username or password" in msg, "message %r", msg)
        kwire.wait_closed(s, timeout=10)


def handshake(version, corr, mech):
    return kwire.request(SASL_HANDSHAKE, version, corr, kwire.string(mech))


def parse_handshake(payload):
    r = payload[4:]
    err, n = struct.unpack(">hi", r[:6])
    pos, mechs = 6, []
    for _ in range(n):
        ln = struct.unpack(">h", r[pos:pos + 2])[0]
        mechs.append(r[pos + 2:pos + 2 + ln].decode())
        pos += 2 + ln
    return err, mechs


def authenticate(corr, token):
    return kwire.request(SASL_AUTHENTICATE, 0, corr, kwire.nbytes(token))


def parse_authenticate(payload):
    r = payload[4:]
    err, ln = struct.unpack(">hh", r[:4])
    msg = r[4:4 + ln].decode() if ln >= 0 else None
    pos = 4 + max(ln, 0)
    bl = struct.unpack(">i", r[pos:pos + 4])[0]
    return err, msg, r[pos + 4:pos + 4 + max(bl, 0)]


def case_unknown_mechanism_refused(t):
    """SaslHandshake naming GSSAPI: UNSUPPORTED_SASL_MECHANISM with the
    enabled list, then the connection closes; librdkafka says so too."""
    b = shared_broker()
    with kwire.connect(b.sasl_port) as s:
        err, mechs = parse_handshake(kwire.roundtrip(s, handshake(1, 1, "GSSAPI")))
        eq(err, UNSUPPORTED_SASL_MECHANISM, "SaslHandshake error")
        eq(mechs, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], "mechanisms offered")
        kwire.wait_closed(s, timeout=10)
    props = sasl_props("PLAIN")
    props["sasl.mechanism"] = "OAUTHBEARER"
    props["enable.sasl.oauthbearer.unsecure.jwt"] = "true"
    r = kcat(b.sasl_port, props, "-L", "-m", "1")
    check(r.returncode != 0, "kcat -L with OAUTHBEARER succeeded")
    check("mechanism" in r.stderr.decode(errors="replace").lower(),
          "kcat did not report the mechanism: %s", r.stderr[-300:])


def case_request_before_authentication_closed(t):
    """A Produce before authentication: ILLEGAL_SASL_STATE, closed, nothing
    appended; ApiVersions is answered (with keys 17 and 36) and so is a
    SaslHandshake after it; after authentication SaslHandshake is refused."""
    b = shared_broker()
    kwire.create_topic(b.port, "before-auth", 1)
    with kwire.connect(b.sasl_port) as s:
        _, _, keys = kwire.parse_api_versions_v0(kwire.roundtrip(s, kwire.api_versions_v0(1)))
        eq((keys.get(SASL_HANDSHAKE), keys.get(SASL_AUTHENTICATE)), ((0, 1), (0, 0)),
           "SaslHandshake and SaslAuthenticate in ApiVersions")
        s.sendall(kwire.produce_v3(2, "before-auth", 0, kwire.record_batch([(None, b"sneaky")])))
        corr, parts = kwire.parse_produce_v3(kwire.recv_frame(s, timeout=10))
        eq((corr, parts[("before-auth", 0)][0]), (2, ILLEGAL_SASL_STATE),
           "correlation and error of the refused Produce")
        kwire.wait_closed(s, timeout=10)
    with kwire.connect(b.port) as s:
        _, parts = kwire.parse_fetch_v4(kwire.roundtrip(s, kwire.fetch_v4(3, "before-auth", 0, 0)))
    eq(parts[("before-auth", 0)][1], 0, "high watermark after the refused Produce")
    # raw-token path: v0 handshake, PLAIN token, then Kafka requests
    with kwire.connect(b.sasl_port) as s:
        eq(parse_handshake(kwire.roundtrip(s, handshake(0, 1, "PLAIN")))[0], 0, "handshake v0")
        tok = b"\0alice\0" + USERS["alice"].encode()
        s.sendall(struct.pack(">i", len(tok)) + tok)
        eq(kwire.recv_exact(s, 4, 10), b"\0\0\0\0", "the empty PLAIN answer")
        err, _ = parse_handshake(kwire.roundtrip(s, handshake(1, 2, "PLAIN")))
        eq(err, ILLEGAL_SASL_STATE, "SaslHandshake after authentication")
        kwire.produce(b.sasl_port, "before-auth", 0, [(None, b"fine")], sock=s)
    # on the PLAINTEXT listener SaslHandshake is illegal too
    with kwire.connect(b.port) as s:
        eq(parse_handshake(kwire.roundtrip(s, handshake(1, 1, "PLAIN")))[0], ILLEGAL_SASL_STATE,
           "SaslHandshake on PLAINTEXT")


def case_oversized_preauth_frame_closed(t):
    """A frame over 512 KiB before authentication closes its connection at
    its size; a client authenticating beside it is served; a connection that
    never authenticates is closed at the deadline."""
    b = shared_broker()
    big = socket.create_connection(("127.0.0.1", b.sasl_port), timeout=10)
    t0 = time.monotonic()
    big.sendall(struct.pack(">i", 524289 + 100) + b"\0" * 1000)
    # at its size, well before the authentication deadline (3 s here)
    kwire.wait_closed(big, timeout=2)
    check(time.monotonic() - t0 < 2, "the oversized frame was not refused at its size")
    big.close()
    idle = socket.create_connection(("127.0.0.1", b.sasl_port), timeout=10)
    kcat_roundtrip(b.sasl_port, sasl_props("SCRAM-SHA-256"), "beside-big")
    t0 = time.monotonic()
    kwire.wait_closed(idle, timeout=15)
    idle.close()
    check(time.monotonic() - t0 < 10, "the idle connection outlived the deadline")
    log = b.log_text()
    check("before authentication, at most 524288" in log, "no log line for the big frame")
    check("not authenticated within" in log, "no log line for the deadline")


if __name__ == "__main__":
    sys.exit(main([
        case_kcat_plain_and_scram,
        case_kcat_over_sasl_ssl,
        case_kafka_python_raw_tokens,
        case_confluent_kafka_scram,
        case_kafkajs_plain_and_scram,
        case_sarama_plain,
        case_acls_check_the_sasl_principal,
        case_wrong_password_refused,
        case_unknown_mechanism_refused,
        case_request_before_authentication_closed,
        case_oversized_preauth_frame_closed,
    ]))
