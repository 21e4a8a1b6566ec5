"""Starts and stops a private ZooKeeper (Debian's `zookeeper` package) for
the tests that need one, on 127.0.0.1 on a free port, stopped by PID.

    zk = ZooKeeper(workdir)          # nothing runs yet
    zk.start()                       # returns once it answers `ruok` with `imok`
    zk.connect                       # "127.0.0.1:PORT"
    zk.stop()                        # SIGTERM, then SIGKILL after a deadline

Its data and its log (zookeeper.log, the JVM's console) stay in
<workdir>/zookeeper/. Loopback only, no admin web server (it would bind
0.0.0.0:8080), the four-letter words ruok, srvr, stat and mntr allowed.
"""

import os
import signal
import socket
import subprocess
import time

from broker import free_port

JARS = ["/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-log4j12.jar",
        "/usr/share/java/log4j-1.2.jar"]

LOG4J = """log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %m%n
"""


class ZooKeeperError(AssertionError):
    pass


def four_letter(port, word, timeout=2.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(word.encode())
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return data.decode("utf-8", "replace")
            data += chunk


class ZooKeeper:
    def __init__(self, workdir, name="zookeeper"):
        self.dir = os.path.join(workdir, name)
        self.data_dir = os.path.join(self.dir, "data")
        self.log_path = os.path.join(self.dir, "zookeeper.log")
        self.port = None
        self.proc = None
        os.makedirs(self.data_dir, exist_ok=True)

    @property
    def connect(self):
        return "127.0.0.1:%d" % self.port

    def start(self, timeout=60.0):
        missing = [j for j in JARS if not os.path.exists(j)]
        if missing:
            raise ZooKeeperError("ZooKeeper is not installed (missing %s): run ci/install-deps"
                                 % ", ".join(missing))
        self.port = free_port()
        with open(os.path.join(self.dir, "zoo.cfg"), "w") as f:
            f.write("tickTime=2000\ninitLimit=10\nsyncLimit=5\n"
                    "dataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"
                    "admin.enableServer=false\n"
                    "4lw.commands.whitelist=ruok,srvr,stat,mntr\n" % (self.data_dir, self.port))
        with open(os.path.join(self.dir, "log4j.properties"), "w") as f:
            f.write(LOG4J)
        argv = ["java", "-Xmx256m", "-Dlog4j.configuration=file:" +
                os.path.join(self.dir, "log4j.properties"),
                "-cp", ":".join([self.dir] + JARS),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                os.path.join(self.dir, "zoo.cfg")]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, cwd=self.dir)
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ZooKeeperError("ZooKeeper exited with status %d during start-up; see %s"
                                     % (self.proc.returncode, self.log_path))
            try:
                if four_letter(self.port, "ruok") == "imok":
                    return self
            except OSError as e:
                last = e
            time.sleep(0.1)
        self.stop()
        raise ZooKeeperError("ZooKeeper did not answer ruok within %.0f s (last: %s); see %s"
                             % (timeout, last, self.log_path))

    def stop(self, timeout=15.0):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait()
        self.proc = None
