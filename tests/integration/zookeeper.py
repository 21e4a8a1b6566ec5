"""Starts and stops a private ZooKeeper (Debian's `zookeeper` package) for
the tests that need one, on 127.0.0.1 on a free port, stopped by PID.

    zk = ZooKeeper(workdir)          # nothing runs yet
    zk.start()                       # returns once it answers `ruok` with `imok`
    zk.connect                       # "127.0.0.1:PORT"
    zk.pid                           # the JVM's process id
    zk.stop()                        # SIGTERM, then SIGKILL after a deadline

    with ZooKeeper(workdir) as zk:   # the same, stopped however the block ends
        ...

    missing_parts()                  # [] when ZooKeeper can run here, else
                                     # what is missing (the tests then skip)

Its data and its log (zookeeper.log, the JVM's console) stay in
<workdir>/zookeeper/. Loopback only, no admin web server (it would bind
0.0.0.0:8080), the four-letter words ruok, srvr, stat and mntr allowed. The
JVM is started directly on the package's jars (the `exec` of
/usr/share/zookeeper/bin/zkServer.sh start-foreground, without its
environment scripts), so the process started is the one stopped.
A port another process took between the choice and the bind is noticed
(the JVM exits, or never answers) and another port is tried.
"""

import os
import shutil
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

LOG_TAIL_LINES = 30


class ZooKeeperError(AssertionError):
    pass


class ZooKeeperNotInstalled(ZooKeeperError):
    """What ZooKeeper needs is not on this machine (a test skips)."""


def missing_parts():
    """What running ZooKeeper needs and this machine lacks: [] when nothing."""
    missing = [j for j in JARS if not os.path.exists(j)]
    if shutil.which("java") is None:
        missing.append("java")
    return missing


def four_letter(port, word, timeout=2.0, host="127.0.0.1"):
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(word.encode())
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return data.decode("utf-8", "replace")
            data += chunk


class ZooKeeper:
    def __init__(self, workdir, name="zookeeper", host="127.0.0.1", netns=None, port=None):
        """host: the address it listens on; netns: a network namespace to
        run it in (`ip netns exec`, which execs the JVM: the PID is
        ZooKeeper's); port: a fixed client port (else a free one)."""
        self.dir = os.path.join(workdir, name)
        self.data_dir = os.path.join(self.dir, "data")
        self.log_path = os.path.join(self.dir, "zookeeper.log")
        self.host = host
        self.netns = netns
        self.fixed_port = port
        self.port = None
        self.proc = None
        os.makedirs(self.data_dir, exist_ok=True)

    @property
    def connect(self):
        return "%s:%d" % (self.host, self.port)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self, timeout=60.0):
        """Starts it and returns once it answers ruok with imok (a generous
        deadline: a loaded machine starts a JVM slowly)."""
        missing = missing_parts()
        if missing:
            raise ZooKeeperNotInstalled("ZooKeeper is not installed (missing %s): run "
                                        "ci/install-deps" % ", ".join(missing))
        last = None
        for attempt in range(3):
            try:
                return self._start_once(timeout)
            except ZooKeeperError as e:
                last = e
                in_use = "Address already in use" in self.log_tail()
                self.stop()
                if not in_use or attempt == 2:
                    raise
        raise last

    def restart(self, timeout=60.0):
        """Stops it (SIGTERM, by PID) and starts it again on the same port
        with the same data, as an operator restarts a server: the clients'
        connect string stays valid and their sessions may survive."""
        self.stop()
        return self._start_once(timeout, port=self.port)

    def _start_once(self, timeout, port=None):
        if port is None:
            port = self.fixed_port
        self.port = port if port is not None else free_port()
        with open(os.path.join(self.dir, "zoo.cfg"), "w") as f:
            f.write("tickTime=2000\ninitLimit=10\nsyncLimit=5\n"
                    "dataDir=%s\nclientPort=%d\nclientPortAddress=%s\n"
                    "admin.enableServer=false\n"
                    "4lw.commands.whitelist=ruok,srvr,stat,mntr\n"
                    % (self.data_dir, self.port, self.host))
        with open(os.path.join(self.dir, "log4j.properties"), "w") as f:
            f.write(LOG4J)
        argv = ["java", "-Xmx256m", "-Dlog4j.configuration=file:" +
                os.path.join(self.dir, "log4j.properties"),
                "-cp", ":".join([self.dir] + JARS),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                os.path.join(self.dir, "zoo.cfg")]
        if self.netns is not None:
            argv = ["ip", "netns", "exec", self.netns] + argv
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
                if four_letter(self.port, "ruok", host=self.host) == "imok":
                    return self
            except OSError as e:
                last = e
            time.sleep(0.1)
        raise ZooKeeperError("ZooKeeper did not answer ruok within %.0f s (last: %s); see %s"
                             % (timeout, last, self.log_path))

    def stop(self, timeout=15.0):
        """SIGTERM to its PID, SIGKILL if it is still there after timeout. A
        no-op when it does not run."""
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

    def log_tail(self, lines=LOG_TAIL_LINES):
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])
