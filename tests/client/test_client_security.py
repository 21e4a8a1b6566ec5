#!/usr/bin/env python3
"""libsamsa and the samsa tool over TLS and SASL, against the real broker.

    test_client_security.py SAMSA_BROKER SAMSA_TOOL SECURE_ROUNDTRIP [-k CASE]

One broker serves every case, with a listener per security setting: PLAINTEXT
(where the harness probes and topics are made), SSL, MTLS (SSL with
ssl.client.auth=required), NOSAN (SSL with a certificate lacking the IP SAN
127.0.0.1), SASL_PLAINTEXT and SASL_SSL (PLAIN, SCRAM-SHA-256 and -512; the
users and credentials made as tests/integration/test_sasl.py makes them).
The certificates (ECDSA P-256) are made by the run with the openssl CLI
(test_tls.make_certs). Each case runs the `samsa` tool (produce, consume,
topic list: librdkafka's property names through -X and -F) and
secure_roundtrip.c (50 records produced and read back by the C API):

- SSL, and mutual TLS with and without the client's certificate;
- SASL_PLAINTEXT with PLAIN, SASL_SSL with SCRAM-SHA-256 and -512;
- a wrong password: SASL_AUTHENTICATION_FAILED with the broker's message on
  stderr and exit status 1, within seconds (no reconnect loop);
- a fake broker whose SCRAM nonce does not extend ours, whose iteration count
  is 1, or whose signature does not verify: refused, the last after one proof;
- a mechanism the broker does not enable: UNSUPPORTED_SASL_MECHANISM with
  the broker's list;
- the NOSAN certificate refused by the host check with the reason
  (X509_verify_cert_error_string's), accepted with
  ssl.endpoint.identification.algorithm=none;
- an unknown security.protocol refused when set (exit status 2).
"""
import json
import base64
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from broker import Broker, check, eq, free_port, main  # noqa: E402
from test_sasl import jaas, scram_credential  # noqa: E402
from test_tls import make_certs  # noqa: E402

TOOL = None
ROUNDTRIP = None
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
_shared = {}


def shared_broker():
    """The file's one broker, started at the first case."""
    if "b" in _shared:
        _shared["b"].check_alive()
        return _shared["b"]
    top = tempfile.mkdtemp(prefix="test_client_security-",
                           dir=os.environ.get("SAMSA_TEST_TMPDIR"))
    certs = make_certs(os.path.join(top, "certs"))
    creds = os.path.join(top, "scram.credentials")
    with open(creds, "w") as f:
        for u, p in USERS.items():
            cfg = {m: scram_credential(m, p) for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")}
            f.write("%s=%s\n" % (u, json.dumps({"version": 1, "config": cfg})))
    b = Broker(sys.argv[1], top, name="security")
    b.port = free_port()
    b.certs = certs
    ports = {name: free_port() for name in ("SSL", "MTLS", "NOSAN", "SASL_PLAINTEXT", "SASL_SSL")}
    b.ports = ports
    b.extra_config.update({
        "listeners": ",".join(["PLAINTEXT://127.0.0.1:%d" % b.port] +
                              ["%s://127.0.0.1:%d" % (n, p) for n, p in ports.items()]),
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,NOSAN:SSL,"
                                          "SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": os.path.join(certs, "broker.pem"),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": os.path.join(certs, "ca.pem"),
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.nosan.ssl.keystore.location": os.path.join(certs, "nosan.pem"),
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas(USERS),
        "listener.name.sasl_ssl.plain.sasl.jaas.config": jaas(USERS),
        "sasl.scram.credentials.file": creds,
        "offsets.topic.num.partitions": "1",
    })
    b.start()
    _shared["b"] = b

    import atexit

    def cleanup():
        b.kill()
        if not os.environ.get("SAMSA_TEST_KEEP"):
            shutil.rmtree(top, ignore_errors=True)
    atexit.register(cleanup)
    return b


def tls_props(b, cert=False):
    props = {"security.protocol": "ssl",
             "ssl.ca.location": os.path.join(b.certs, "ca.pem")}
    if cert:
        props["ssl.certificate.location"] = os.path.join(b.certs, "client.crt")
        props["ssl.key.location"] = os.path.join(b.certs, "client.key")
    return props


def sasl_props(b, mech, protocol, user="alice", password=None):
    props = {"security.protocol": protocol, "sasl.mechanisms": mech, "sasl.username": user,
             "sasl.password": password if password is not None else USERS[user]}
    if protocol.lower() == "sasl_ssl":
        props["ssl.ca.location"] = os.path.join(b.certs, "ca.pem")
    return props


def failed_auths(b):
    """The broker's log lines for refused SASL authentications."""
    return sum(1 for line in b.log_text().splitlines()
               if "authentication of " in line and " failed: " in line)


def xargs(props):
    out = []
    for k, v in props.items():
        out += ["-X", "%s=%s" % (k, v)]
    return out


def samsa(*args, stdin=None, timeout=90):
    return subprocess.run([TOOL] + list(args), input=stdin, capture_output=True,
                          timeout=timeout)


def make_topic(b, topic):
    p = samsa("topic", "create", "-b", "127.0.0.1:%d" % b.port, topic, "--partitions", "1")
    eq(p.returncode, 0, "topic create %s: %s" % (topic, p.stderr[-500:]))


def tool_roundtrip(b, listener, topic, props, props_file=None):
    """samsa produce, then consume, over listener; props by -X, or by -F
    from a properties file when props_file is given."""
    make_topic(b, topic)
    bs = "127.0.0.1:%d" % b.ports[listener]
    if props_file is not None:
        with open(props_file, "w") as f:
            f.write("# %s\n" % listener)
            for k, v in props.items():
                f.write("%s=%s\n" % (k, v))
        extra = ["-F", props_file]
    else:
        extra = xargs(props)
    lines = "".join("v%d\n" % i for i in range(30)).encode()
    p = samsa("produce", "-b", bs, "-t", topic, "-p", "0", *extra, stdin=lines)
    eq(p.returncode, 0, "samsa produce over %s: %s" % (listener, p.stderr[-800:]))
    p = samsa("consume", "-b", bs, "-t", topic, "--from", "beginning", "-e", *extra)
    eq(p.returncode, 0, "samsa consume over %s: %s" % (listener, p.stderr[-800:]))
    eq(p.stdout, lines, "what samsa read back over %s" % listener)


def c_roundtrip(b, listener, topic, props, expect=0):
    make_topic(b, topic)
    argv = [ROUNDTRIP, "127.0.0.1:%d" % b.ports[listener], topic]
    argv += ["%s=%s" % kv for kv in props.items()]
    p = subprocess.run(argv, capture_output=True, timeout=120)
    if expect == 0:
        eq(p.returncode, 0, "secure_roundtrip over %s: %s" % (listener, p.stderr[-800:]))
        eq(p.stdout.strip(), b"roundtrip ok 50", "secure_roundtrip's answer")
    return p


def case_ssl_tool_and_c_api(t):
    b = shared_broker()
    tool_roundtrip(b, "SSL", "sec-ssl", tls_props(b))
    c_roundtrip(b, "SSL", "sec-ssl-c", tls_props(b))
    # the same through a properties file (-F, kcat's and --command-config's)
    tool_roundtrip(b, "SSL", "sec-ssl-file", tls_props(b), props_file=t.path("ssl.properties"))


def case_mutual_tls(t):
    """ssl.client.auth=required: served with ssl.certificate.location and
    ssl.key.location, refused without them, with the reason, at once."""
    b = shared_broker()
    tool_roundtrip(b, "MTLS", "sec-mtls", tls_props(b, cert=True))
    c_roundtrip(b, "MTLS", "sec-mtls-c", tls_props(b, cert=True))
    t0 = time.monotonic()
    p = samsa("topic", "list", "-b", "127.0.0.1:%d" % b.ports["MTLS"], "--timeout", "30000",
              *xargs(tls_props(b)))
    took = time.monotonic() - t0
    eq(p.returncode, 1, "exit status without a client certificate (%s)" % p.stderr[-500:])
    check(b"SSL" in p.stderr and b"TLS handshake failed" in p.stderr,
          "no TLS reason on stderr: %s", p.stderr[-500:])
    check(took < 15, "refused after %.1f s: it should not wait for --timeout", took)


def case_sasl_plaintext_plain(t):
    b = shared_broker()
    props = sasl_props(b, "PLAIN", "sasl_plaintext", user="bob")
    tool_roundtrip(b, "SASL_PLAINTEXT", "sec-plain", props)
    c_roundtrip(b, "SASL_PLAINTEXT", "sec-plain-c", props)


def case_sasl_ssl_scram_256_and_512(t):
    b = shared_broker()
    for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        props = sasl_props(b, mech, "SASL_SSL")  # the value case-insensitive, as librdkafka's
        topic = "sec-" + mech.lower()
        tool_roundtrip(b, "SASL_SSL", topic, props)
        c_roundtrip(b, "SASL_SSL", topic + "-c", props)
    check("authenticated as User:alice with SCRAM-SHA-512" in b.log_text(),
          "the broker did not log alice's SCRAM-SHA-512 authentication")


def case_wrong_password_is_a_clear_fatal_error(t):
    """SASL_AUTHENTICATION_FAILED with the broker's message, exit status 1,
    within seconds, for the tool's reading and writing commands and for the
    C API's producer; one authentication attempt, not a reconnect loop."""
    b = shared_broker()
    make_topic(b, "sec-wrong")
    for mech, proto in (("PLAIN", "sasl_plaintext"), ("SCRAM-SHA-256", "sasl_ssl"),
                        ("SCRAM-SHA-512", "sasl_plaintext")):
        listener = proto.upper()
        props = sasl_props(b, mech, proto, password="wrong")
        bs = "127.0.0.1:%d" % b.ports[listener]
        before = failed_auths(b)
        t0 = time.monotonic()
        p = samsa("topic", "list", "-b", bs, "--timeout", "30000", *xargs(props))
        took = time.monotonic() - t0
        eq(p.returncode, 1, "topic list with a wrong %s password (%s)" % (mech, p.stderr[-500:]))
        check(b"SASL_AUTHENTICATION_FAILED" in p.stderr, "no error name: %s", p.stderr[-500:])
        check(b"alice" in p.stderr, "the broker's message is not on stderr: %s", p.stderr[-500:])
        check(took < 15, "%s refused after %.1f s: it should not wait for --timeout", mech, took)
        p = samsa("produce", "-b", bs, "-t", "sec-wrong", "-p", "0", "--timeout", "30000",
                  *xargs(props), stdin=b"x\ny\n")
        eq(p.returncode, 1, "produce with a wrong %s password (%s)" % (mech, p.stderr[-500:]))
        check(b"SASL_AUTHENTICATION_FAILED" in p.stderr, "produce: %s", p.stderr[-500:])
        # each command authenticated once per connection it opened, then stopped
        after = failed_auths(b)
        check(after - before <= 4, "%d failed authentications for two commands: a reconnect "
              "loop", after - before)
    p = c_roundtrip(b, "SASL_SSL", "sec-wrong-c",
                    sasl_props(b, "SCRAM-SHA-512", "sasl_ssl", password="wrong"), expect=1)
    eq(p.returncode, 1, "secure_roundtrip with a wrong password (%s)" % p.stderr[-500:])
    check(b"SASL_AUTHENTICATION_FAILED" in p.stderr, "secure_roundtrip: %s", p.stderr[-500:])


class FakeScramBroker:
    """A listener that speaks just enough Kafka for a SCRAM client: ApiVersions
    v0 (SaslHandshake 0-1, SaslAuthenticate 0), SaslHandshake v1, then
    SaslAuthenticate v0 answering the client-first message with
    server_first(client_nonce) and the client-final one with
    server_final(). What the client must refuse: a nonce that does not extend
    its own, a signature that does not verify."""

    def __init__(self, server_first, server_final, enabled=None):
        self.server_first = server_first
        self.server_final = server_final
        self.enabled = enabled  # a list: SaslHandshake answers UNSUPPORTED_SASL_MECHANISM
        self.finals = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.talk, args=(conn,), daemon=True).start()

    @staticmethod
    def read_exact(conn, n):
        buf = b""
        while len(buf) < n:
            got = conn.recv(n - len(buf))
            if not got:
                raise EOFError
            buf += got
        return buf

    def talk(self, conn):
        with conn:
            try:
                while True:
                    size = struct.unpack(">i", self.read_exact(conn, 4))[0]
                    req = self.read_exact(conn, size)
                    key, _, corr, idlen = struct.unpack(">hhih", req[:10])
                    body = req[10 + max(idlen, 0):]
                    if key == 18:  # ApiVersions v0
                        out = struct.pack(">hi", 0, 2) + struct.pack(">hhh", 17, 0, 1) + \
                            struct.pack(">hhh", 36, 0, 0)
                    elif key == 17 and self.enabled is not None:  # refused
                        out = struct.pack(">hi", 33, len(self.enabled)) + b"".join(
                            struct.pack(">h", len(m)) + m.encode() for m in self.enabled)
                    elif key == 17:  # SaslHandshake v1
                        out = struct.pack(">hih", 0, 1, 13) + b"SCRAM-SHA-256"
                    elif key == 36:  # SaslAuthenticate v0
                        token = body[4:].decode()
                        if token.startswith("n,,"):
                            nonce = dict(kv.split("=", 1) for kv in token[3:].split(","))["r"]
                            reply = self.server_first(nonce).encode()
                        else:
                            self.finals += 1
                            reply = self.server_final().encode()
                        out = struct.pack(">hh", 0, -1) + struct.pack(">i", len(reply)) + reply
                    else:
                        return
                    frame = struct.pack(">i", corr) + out
                    conn.sendall(struct.pack(">i", len(frame)) + frame)
            except (EOFError, OSError):
                return

    def close(self):
        self.sock.close()


def case_scram_client_refuses_a_broker_that_cannot_prove_itself(t):
    """RFC 5802's client checks (CVE-2024-56128's class): a server nonce
    that does not begin with ours is refused before a proof is sent; a
    server signature that does not verify is refused, the connection never
    used. Against a fake broker, so that the broker can misbehave."""
    salt = base64.b64encode(b"0123456789abcdef").decode()
    props = {"security.protocol": "sasl_plaintext", "sasl.mechanisms": "SCRAM-SHA-256",
             "sasl.username": "alice", "sasl.password": "alice-secret"}
    cases = (
        ("a server nonce that does not extend ours",
         lambda nonce: "r=%s,s=%s,i=4096" % ("x" * len(nonce) + "servernonce", salt),
         lambda: "v=" + base64.b64encode(b"\0" * 32).decode(), 0),
        ("an iteration count outside 4096..1000000",
         lambda nonce: "r=%sservernonce,s=%s,i=1" % (nonce, salt),
         lambda: "v=" + base64.b64encode(b"\0" * 32).decode(), 0),
        ("the broker's signature does not verify",
         lambda nonce: "r=%sservernonce,s=%s,i=4096" % (nonce, salt),
         lambda: "v=" + base64.b64encode(b"\0" * 32).decode(), 1),
    )
    for why, first, final, finals in cases:
        fake = FakeScramBroker(first, final)
        try:
            p = samsa("topic", "list", "-b", "127.0.0.1:%d" % fake.port, "--timeout", "20000",
                      *xargs(props), timeout=60)
        finally:
            fake.close()
        eq(p.returncode, 1, "exit status against a broker with %s (%s)" % (why, p.stderr[-500:]))
        check(why.encode() in p.stderr and b"SASL_AUTHENTICATION_FAILED" in p.stderr,
              "not refused for %s: %s", why, p.stderr[-500:])
        eq(fake.finals, finals, "client-final messages sent for %s" % why)


def case_mechanism_the_broker_does_not_enable(t):
    """SaslHandshake refused: UNSUPPORTED_SASL_MECHANISM, naming what the
    broker enables, at once."""
    fake = FakeScramBroker(None, None, enabled=["PLAIN", "GSSAPI"])
    props = {"security.protocol": "sasl_plaintext", "sasl.mechanisms": "SCRAM-SHA-512",
             "sasl.username": "alice", "sasl.password": "alice-secret"}
    try:
        p = samsa("topic", "list", "-b", "127.0.0.1:%d" % fake.port, "--timeout", "20000",
                  *xargs(props), timeout=60)
    finally:
        fake.close()
    eq(p.returncode, 1, "exit status (%s)" % p.stderr[-500:])
    check(b"UNSUPPORTED_SASL_MECHANISM" in p.stderr and b"the broker enables: PLAIN, GSSAPI"
          in p.stderr, "no clear refusal: %s", p.stderr[-500:])


def case_certificate_without_ip_san(t):
    """ssl.endpoint.identification.algorithm=https (the default) refuses a
    certificate without IP SAN 127.0.0.1, naming the reason; =none accepts it."""
    b = shared_broker()
    bs = "127.0.0.1:%d" % b.ports["NOSAN"]
    t0 = time.monotonic()
    p = samsa("topic", "list", "-b", bs, "--timeout", "30000", *xargs(tls_props(b)))
    took = time.monotonic() - t0
    eq(p.returncode, 1, "topic list against the NOSAN certificate (%s)" % p.stderr[-500:])
    check(b"certificate verify failed" in p.stderr and b"IP address mismatch" in p.stderr,
          "the reason is not on stderr: %s", p.stderr[-500:])
    check(took < 15, "refused after %.1f s", took)
    props = dict(tls_props(b), **{"ssl.endpoint.identification.algorithm": "none"})
    tool_roundtrip(b, "NOSAN", "sec-nosan", props)
    c_roundtrip(b, "NOSAN", "sec-nosan-c", props)


def case_configuration_errors(t):
    """An unknown security.protocol is refused when set; a key file that
    cannot be read at the handle's creation; -F in the tool's help."""
    b = shared_broker()
    bs = "127.0.0.1:%d" % b.ports["SSL"]
    p = samsa("topic", "list", "-b", bs, "-X", "security.protocol=tls")
    eq(p.returncode, 2, "security.protocol=tls (%s)" % p.stderr[-500:])
    check(b"security.protocol" in p.stderr and b"sasl_ssl" in p.stderr,
          "no list of the accepted values: %s", p.stderr[-500:])
    p = samsa("topic", "list", "--help")
    check(b"-F FILE" in p.stdout, "-F is not in the help: %s", p.stdout[-500:])
    p = subprocess.run([ROUNDTRIP, bs, "x", "security.protocol=ssl",
                        "ssl.ca.location=" + t.path("missing.pem")],
                       capture_output=True, timeout=60)
    eq(p.returncode, 2, "a missing ssl.ca.location (%s)" % p.stderr[-500:])
    check(b"ssl.ca.location" in p.stderr, "the key is not named: %s", p.stderr[-500:])


if __name__ == "__main__":
    ROUNDTRIP = os.path.abspath(sys.argv.pop(3))
    TOOL = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_ssl_tool_and_c_api,
                   case_mutual_tls,
                   case_sasl_plaintext_plain,
                   case_sasl_ssl_scram_256_and_512,
                   case_wrong_password_is_a_clear_fatal_error,
                   case_scram_client_refuses_a_broker_that_cannot_prove_itself,
                   case_mechanism_the_broker_does_not_enable,
                   case_certificate_without_ip_san,
                   case_configuration_errors]))
