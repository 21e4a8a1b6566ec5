"""A ZooKeeper fault injector: a TCP proxy between ZooKeeper clients (a
broker, its controller) and a real ZooKeeper that understands just enough of
ZooKeeper's wire protocol (jute frames: the session handshake, then request
headers {xid, type} and reply headers {xid, zxid, err}) to lose, delay or
cut what real clusters lose, delay and cut.

    proxy = ZkProxy(zk_port)             # listens on 127.0.0.1 (host=), a free port
    proxy.connect                        # "127.0.0.1:PORT": a zookeeper.connect
    rule = proxy.lose_reply(op="setData", path=".../state",
                            match=lambda req: b'"isr":[0,1,2]' in req.data)
    rule.fired.wait(30)                  # ZooKeeper applied the request, the
                                         # client never saw the answer
    rule.request                         # the request whose reply was lost
    proxy.delay_replies(2.0, op="setData", path="/state", count=1)
    proxy.cut()                          # every connection through it closed
    proxy.refuse(True)                   # new connections refused until False
    proxy.requests                       # [(op, path)] seen, in order
    proxy.close()

Losing a reply is what a real cluster suffers when the connection breaks
after the server applied a request and before its answer reached the
client: the request is forwarded, ZooKeeper applies it and answers; the
proxy does not forward that answer and closes both sides of the
connection. The client sees CONNECTIONLOSS for the request (outcome
unknown), reconnects through the proxy within its session timeout, and its
session goes on. Delaying holds the matching reply (and, as a TCP stream
would, every reply behind it on that connection) for the given time.

A rule matches by operation name (ZooKeeper's OpCode names: create,
delete, exists, getData, setData, getChildren, getChildren2, multi,
create2, ...), a substring of the path, and an optional predicate on the
request (a Request: op, path, data, version); count says how many matching
requests it takes (default 1), after which it is spent.

Runs in the test's own process (one thread per connection direction); the
standard library only.
"""

import socket
import struct
import threading
import time

OPS = {
    0: "notification", 1: "create", 2: "delete", 3: "exists", 4: "getData",
    5: "setData", 6: "getACL", 7: "setACL", 8: "getChildren", 9: "sync",
    11: "ping", 12: "getChildren2", 13: "check", 14: "multi", 15: "create2",
    16: "reconfig", 17: "checkWatches", 18: "removeWatches", 19: "createContainer",
    20: "deleteContainer", 21: "createTTL", 100: "auth", 101: "setWatches",
    102: "sasl", -10: "createSession", -11: "closeSession", -1: "error",
}
# the requests whose body starts with the path
PATH_FIRST = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 17, 18, 19, 20, 21}


class Request:
    def __init__(self, xid, op, path, data, version, conn_id):
        self.xid = xid
        self.op = op
        self.path = path
        self.data = data
        self.version = version
        self.conn_id = conn_id

    def __repr__(self):
        return "Request(%s %s xid=%d version=%s)" % (self.op, self.path, self.xid, self.version)


def _string(body, at):
    if at + 4 > len(body):
        return None, at
    (n,) = struct.unpack_from(">i", body, at)
    at += 4
    if n < 0:
        return None, at
    return body[at:at + n], at + n


def parse_request(frame, conn_id):
    """The request in a frame (without its length prefix), or None for one
    this proxy does not name (it is forwarded all the same)."""
    if len(frame) < 8:
        return None
    xid, typ = struct.unpack_from(">ii", frame, 0)
    op = OPS.get(typ, str(typ))
    path = data = version = None
    body = frame[8:]
    if typ in PATH_FIRST:
        raw, at = _string(body, 0)
        path = raw.decode("utf-8", "replace") if raw is not None else None
        if typ in (1, 5, 15, 19, 21):  # create*, setData: data follows
            data, at = _string(body, at)
        if typ == 5 and at + 4 <= len(body):
            (version,) = struct.unpack_from(">i", body, at)
        elif typ == 2 and at + 4 <= len(body):
            (version,) = struct.unpack_from(">i", body, at)
    return Request(xid, op, path, data, version, conn_id)


class Rule:
    def __init__(self, kind, op, path, match, count, seconds=0.0):
        self.kind = kind  # "lose" or "delay"
        self.op = op
        self.path = path
        self.match = match
        self.left = count
        self.seconds = seconds
        self.fired = threading.Event()
        self.request = None  # the last request it took
        self.taken = []

    def matches(self, req):
        if self.left <= 0 or req is None:
            return False
        if self.op is not None and req.op != self.op:
            return False
        if self.path is not None and (req.path is None or self.path not in req.path):
            return False
        return self.match is None or bool(self.match(req))


class _Conn:
    def __init__(self, proxy, client, server, conn_id):
        self.proxy = proxy
        self.client = client
        self.server = server
        self.id = conn_id
        self.pending = {}  # xid -> (Request, Rule or None)
        self.lock = threading.Lock()
        self.closed = False

    def close(self):
        with self.lock:
            if self.closed:
                return
            self.closed = True
        for s in (self.client, self.server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass
        self.proxy._forget(self)

    def start(self):
        threading.Thread(target=self._upstream, daemon=True).start()
        threading.Thread(target=self._downstream, daemon=True).start()

    @staticmethod
    def _read_frame(s):
        head = b""
        while len(head) < 4:
            chunk = s.recv(4 - len(head))
            if not chunk:
                return None
            head += chunk
        (n,) = struct.unpack(">i", head)
        if n < 0 or n > 64 * 1024 * 1024:
            return None
        body = bytearray()
        while len(body) < n:
            chunk = s.recv(min(65536, n - len(body)))
            if not chunk:
                return None
            body += chunk
        return head, bytes(body)

    def _upstream(self):
        """Client to ZooKeeper: the handshake, then requests, each noted."""
        try:
            first = True
            while True:
                got = self._read_frame(self.client)
                if got is None:
                    break
                head, body = got
                if first:
                    first = False
                else:
                    req = parse_request(body, self.id)
                    if req is not None:
                        rule = self.proxy._take(req)
                        with self.lock:
                            self.pending[req.xid] = (req, rule)
                self.server.sendall(head + body)
        except OSError:
            pass
        self.close()

    def _downstream(self):
        """ZooKeeper to client: the handshake's answer, then replies and
        watch events; a reply a rule takes is lost or held."""
        try:
            first = True
            while True:
                got = self._read_frame(self.server)
                if got is None:
                    break
                head, body = got
                if first:
                    first = False
                elif len(body) >= 16:
                    (xid,) = struct.unpack_from(">i", body, 0)
                    with self.lock:
                        req, rule = self.pending.pop(xid, (None, None))
                    if rule is not None and rule.kind == "lose":
                        rule.request = req
                        rule.fired.set()
                        break  # the answer never reaches the client
                    if rule is not None and rule.kind == "delay":
                        rule.request = req
                        time.sleep(rule.seconds)
                        rule.fired.set()
                    if self.proxy.delay_all > 0:
                        time.sleep(self.proxy.delay_all)
                self.client.sendall(head + body)
        except OSError:
            pass
        self.close()


class ZkProxy:
    def __init__(self, upstream_port, upstream_host="127.0.0.1", host="127.0.0.1"):
        """host: the address it listens on (a bridge's, for brokers in
        network namespaces of their own)."""
        self.upstream = (upstream_host, upstream_port)
        self.host = host
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind((host, 0))
        self.lsock.listen(64)
        self.port = self.lsock.getsockname()[1]
        self.lock = threading.Lock()
        self.rules = []
        self.conns = []
        self.requests = []
        self.refusing = False
        self.delay_all = 0.0
        self.next_id = 0
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def connect(self):
        return "%s:%d" % (self.host, self.port)

    def _accept(self):
        while not self.stopped:
            try:
                client, _ = self.lsock.accept()
            except OSError:
                return
            if self.refusing:
                client.close()
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.next_id += 1
                c = _Conn(self, client, server, self.next_id)
                self.conns.append(c)
            c.start()

    def _forget(self, c):
        with self.lock:
            if c in self.conns:
                self.conns.remove(c)

    def _take(self, req):
        with self.lock:
            self.requests.append((req.op, req.path))
            for rule in self.rules:
                if rule.matches(req):
                    rule.left -= 1
                    rule.taken.append(req)
                    return rule
        return None

    def _add(self, rule):
        with self.lock:
            self.rules.append(rule)
        return rule

    def lose_reply(self, op=None, path=None, match=None, count=1):
        """The next `count` matching requests are applied by ZooKeeper and
        their replies lost, the connection closed each time."""
        return self._add(Rule("lose", op, path, match, count))

    def delay_replies(self, seconds, op=None, path=None, match=None, count=1):
        """The replies of the next `count` matching requests (and those
        behind them on the connection) arrive `seconds` late."""
        return self._add(Rule("delay", op, path, match, count, seconds))

    def cut(self):
        """Closes every connection through the proxy now."""
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            c.close()
        return len(conns)

    def refuse(self, on):
        """While on: new connections are closed at once (ZooKeeper
        unreachable for this client); cut() first to end the current ones."""
        self.refusing = on

    def close(self):
        self.stopped = True
        try:
            self.lsock.close()
        except OSError:
            pass
        self.cut()
