"""Starts and stops a real samsa-broker for the integration and interop tests.

    b = Broker(exe, workdir)               # nothing runs yet
    b.start()                              # free port on 127.0.0.1, temp data dir;
                                           # returns once ApiVersions is answered
    b.bootstrap                            # "127.0.0.1:PORT"
    b.stop()                               # SIGTERM, asserts exit status 0
    b.kill()                               # SIGKILL
    b.start()                              # again, same port and data dir
    b.run_to_exit()                        # a start that must fail: exit status
    Broker(exe, workdir, nofile=256)       # started under ulimit -n 256
    b.open_fds()                           # descriptors the broker has open now

Each start writes the broker's stderr to its own file (run-1.log, run-2.log,
...) in the broker's folder; failures print those paths and the last lines.

A test script is a list of cases run by main():

    def case_restart(t): ...               # t is a Run: t.broker(...), t.exe, t.dir
    sys.exit(main([case_restart]))

main() takes the broker binary as its first argument, makes a working
folder (under $SAMSA_TEST_TMPDIR when set, else the system's temp folder),
runs every case even after a failure, SIGKILLs whatever broker is left,
removes the folder when all passed (unless SAMSA_TEST_KEEP is set) and
keeps it otherwise. Exit status 0
when every case passed, 1 otherwise, 77 (meson's skip) when every case it
ran raised Skip("reason") (it cannot run on this machine). Add -k NAME to run only the cases whose
name contains NAME.

Runs on Debian's /usr/bin/python3 with the standard library only; the tests
themselves also use kafka-python, confluent-kafka, kcat and node.
"""

import os
import re
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback

LOG_TAIL_LINES = 30


class BrokerError(AssertionError):
    pass


def free_port():
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api_versions_probe(port, timeout=2.0, host="127.0.0.1"):
    """Sends the 10-byte ApiVersions v0 request (api_key 18, version 0,
    correlation id 0x5a5a, empty client id) and reads the response. Returns
    {api_key: (min, max)}; raises OSError or BrokerError."""
    req = struct.pack(">ihhih", 10, 18, 0, 0x5A5A, 0)
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(req)
        size = struct.unpack(">i", _recv(s, 4))[0]
        if size < 10 or size > 1 << 20:
            raise BrokerError("ApiVersions response frame size %d" % size)
        body = _recv(s, size)
    corr, err, n = struct.unpack_from(">ihi", body, 0)
    if corr != 0x5A5A:
        raise BrokerError("ApiVersions response correlation id %#x, sent 0x5a5a" % corr)
    if err != 0:
        raise BrokerError("ApiVersions v0 answered with error %d" % err)
    if n < 1 or 10 + 6 * n != size:
        raise BrokerError("ApiVersions v0 response: %d entries in %d bytes" % (n, size))
    apis = {}
    for i in range(n):
        k, lo, hi = struct.unpack_from(">hhh", body, 10 + 6 * i)
        apis[k] = (lo, hi)
    if 18 not in apis:
        raise BrokerError("ApiVersions response does not list ApiVersions (18)")
    return apis


def _recv(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


class Broker:
    """One broker: its folder (config, stderr logs, data) outlives its
    processes, so it can be stopped and started again on the same data."""

    def __init__(self, exe, workdir, name="broker", config=None, overrides=None, nofile=None,
                 host="127.0.0.1", netns=None):
        """config: extra server.properties keys (dict); overrides: keys passed
        as --override key=value (dict); nofile: the open file limit the broker
        starts with (soft and hard, as `ulimit -n N` or `prlimit --nofile=N:N`
        would set it), None to inherit the test's; host: the address it
        listens on; netns: a network namespace to run it in (`ip netns exec`,
        which execs the broker: its PID is the broker's)."""
        self.exe = os.path.abspath(exe)
        self.name = name
        self.dir = os.path.join(workdir, name)
        self.log_dir = os.path.join(self.dir, "data")
        self.config_path = os.path.join(self.dir, "server.properties")
        self.extra_config = dict(config or {})
        self.overrides = dict(overrides or {})
        self.nofile = nofile
        self.host = host
        self.netns = netns
        self.port = None
        self.proc = None
        self.runs = 0
        self.stderr_path = None
        self.stderr_paths = []
        self.apis = None
        os.makedirs(self.log_dir, exist_ok=True)

    @property
    def bootstrap(self):
        return "%s:%d" % (self.host, self.port)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def _write_config(self):
        props = {
            "broker.id": "0",
            "listeners": "PLAINTEXT://%s:%d" % (self.host, self.port),
            "log.dirs": self.log_dir,
            "num.partitions": "1",
            "auto.create.topics.enable": "true",
            "admin.listeners": "",
        }
        props.update(self.extra_config)
        with open(self.config_path, "w") as f:
            f.write("# written by tests/integration/broker.py\n")
            for k, v in props.items():
                f.write("%s=%s\n" % (k, v))

    def _spawn(self, preexec_fn=None):
        """Writes the config and starts the binary, its output going to the
        next run-N.log. Returns the Popen."""
        self._write_config()
        self.runs += 1
        self.stderr_path = os.path.join(self.dir, "run-%d.log" % self.runs)
        self.stderr_paths.append(self.stderr_path)
        argv = [self.exe, self.config_path]
        if self.netns is not None:
            argv = ["ip", "netns", "exec", self.netns] + argv
        for k, v in self.overrides.items():
            argv += ["--override", "%s=%s" % (k, v)]
        def child():
            self._limits()
            if preexec_fn is not None:
                preexec_fn()
        with open(self.stderr_path, "wb") as err:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                    stdout=err, stderr=subprocess.STDOUT,
                                    cwd=self.dir, preexec_fn=child)

    def start(self, timeout=30.0, preexec_fn=None):
        """Starts the broker and waits until it answers ApiVersions.
        preexec_fn runs in the child before exec (e.g. to ignore a signal
        as nohup does)."""
        if self.alive():
            raise BrokerError("%s is already running (pid %d)" % (self.name, self.pid))
        first = self.port is None
        for attempt in range(3):
            if first:
                self.port = free_port()
            self.proc = self._spawn(preexec_fn)
            try:
                self.apis = self._wait_ready(timeout)
                return self
            except BrokerError:
                bound_elsewhere = (self.proc.poll() is not None and first
                                   and "in use" in self.log_text())
                if not bound_elsewhere or attempt == 2:
                    self.kill()
                    raise
                self.proc = None   # another process took the port: try another
        raise BrokerError("unreachable")

    def _limits(self):
        """Runs in the child before exec."""
        if self.nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, self.nofile))

    def open_fds(self):
        """How many descriptors the running broker has open (/proc/PID/fd)."""
        return len(os.listdir("/proc/%d/fd" % self.pid))

    def _wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            rc = self.proc.poll()
            if rc is not None:
                raise BrokerError("%s exited with status %d during start-up" % (self.name, rc))
            try:
                return api_versions_probe(self.port, host=self.host)
            except (OSError, BrokerError) as e:
                last = e
            time.sleep(0.05)
        raise BrokerError("%s did not answer ApiVersions within %.0f s (last: %s)"
                          % (self.name, timeout, last))

    def run_to_exit(self, timeout=30.0):
        """Runs the broker expecting it to exit by itself (a start it must
        refuse); returns its exit status. Its output is log_text()."""
        if self.alive():
            raise BrokerError("%s is already running (pid %d)" % (self.name, self.pid))
        if self.port is None:
            self.port = free_port()
        proc = self._spawn()
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise BrokerError("%s still ran %.0f s after its start" % (self.name, timeout))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=30.0):
        """SIGTERM; asserts that the broker exits with status 0 in time."""
        if self.proc is None:
            raise BrokerError("%s is not running" % self.name)
        rc = self.proc.poll()
        if rc is not None:
            self.proc = None
            raise BrokerError("%s had already exited with status %d" % (self.name, rc))
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise BrokerError("%s did not exit within %.0f s of SIGTERM" % (self.name, timeout))
        self.proc = None
        if rc != 0:
            raise BrokerError("%s exited with status %d after SIGTERM" % (self.name, rc))

    def kill(self):
        """SIGKILL (a no-op when not running). Returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        rc = self.proc.wait()
        self.proc = None
        return rc

    def check_alive(self):
        if self.proc is None:
            raise BrokerError("%s is not running" % self.name)
        rc = self.proc.poll()
        if rc is not None:
            raise BrokerError("%s died with status %d" % (self.name, rc))

    def log_text(self, run=None):
        path = self.stderr_path if run is None else self.stderr_paths[run - 1]
        try:
            with open(path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except (OSError, TypeError):
            return ""

    def vm_peak_kib(self):
        """VmPeak of the running broker, in KiB."""
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1])
        return 0

    def describe_logs(self):
        out = []
        for p in self.stderr_paths:
            out.append("  %s stderr: %s" % (self.name, p))
        if self.stderr_paths:
            lines = self.log_text().splitlines()[-LOG_TAIL_LINES:]
            out.append("  last %d lines of %s:" % (len(lines), self.stderr_paths[-1]))
            out.extend("    | " + line for line in lines)
        return "\n".join(out)


class Run:
    """What a case gets: the broker binary, a working folder of its own, and a
    way to make brokers that main() cleans up."""

    def __init__(self, exe, workdir):
        self.exe = exe
        self.dir = workdir
        self.brokers = []

    def broker(self, name="broker", config=None, overrides=None, start=True, nofile=None):
        b = Broker(self.exe, self.dir, name=name, config=config, overrides=overrides,
                   nofile=nofile)
        self.brokers.append(b)
        if start:
            b.start()
        return b

    def path(self, *parts):
        return os.path.join(self.dir, *parts)


class Skip(Exception):
    """Raised by a case that cannot run on this machine (say, ptrace
    refused), with the reason: main() reports it as skipped, and exits 77
    (meson's "skipped") when every case it ran was."""


def _case_name(fn):
    n = fn.__name__
    return n[5:] if n.startswith("case_") else n


def main(cases, argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    only = None
    if "-k" in argv:
        i = argv.index("-k")
        only = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) != 1:
        print("usage: %s SAMSA_BROKER [-k NAME]" % os.path.basename(sys.argv[0]),
              file=sys.stderr)
        return 2
    exe = argv[0]
    if not os.access(exe, os.X_OK):
        print("not an executable: %s" % exe, file=sys.stderr)
        return 2
    base = os.environ.get("SAMSA_TEST_TMPDIR") or None
    if base:
        os.makedirs(base, exist_ok=True)
    script = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    top = tempfile.mkdtemp(prefix=script + "-", dir=base)
    failed = []
    skipped = []
    ran = 0
    t_all = time.monotonic()
    for fn in cases:
        name = _case_name(fn)
        if only and only not in name:
            continue
        ran += 1
        run = Run(exe, os.path.join(top, name))
        os.makedirs(run.dir)
        t0 = time.monotonic()
        print("--- %s" % name, flush=True)
        try:
            fn(run)
        except Skip as e:
            skipped.append(name)
            print("skip %s: %s (%.1f s)" % (name, e, time.monotonic() - t0), flush=True)
        except Exception:
            failed.append(name)
            print("FAIL %s (%.1f s)" % (name, time.monotonic() - t0))
            traceback.print_exc(file=sys.stdout)
            for b in run.brokers:
                if b.proc is not None and b.proc.poll() is not None:
                    print("  %s had exited with status %d" % (b.name, b.proc.returncode))
                print(b.describe_logs())
            print("  data kept in %s" % run.dir, flush=True)
        else:
            print("ok   %s (%.1f s)" % (name, time.monotonic() - t0), flush=True)
        finally:
            for b in run.brokers:
                b.kill()
    if ran == 0:
        print("no case matched", file=sys.stderr)
        return 1
    print("%d of %d cases passed in %.1f s" % (ran - len(failed) - len(skipped), ran,
                                                time.monotonic() - t_all))
    if skipped:
        print("skipped: %s" % ", ".join(skipped))
    if failed:
        print("failed: %s" % ", ".join(failed))
        print("working folder kept: %s" % top)
        return 1
    if len(skipped) == ran:
        shutil.rmtree(top, ignore_errors=True)
        return 77
    if os.environ.get("SAMSA_TEST_KEEP"):
        print("working folder kept (SAMSA_TEST_KEEP): %s" % top)
    else:
        shutil.rmtree(top, ignore_errors=True)
    return 0


def check(cond, msg, *args):
    """assert that survives python -O."""
    if not cond:
        raise AssertionError(msg % args if args else msg)


def eq(got, expected, what):
    if got != expected:
        raise AssertionError("%s: expected %r, got %r" % (what, expected, got))


# ------------------------------------------------------------ strace

SYNC_CALL = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(fsync|fdatasync)\(")


def broker_for_strace(t, overrides=None):
    """t.broker(overrides=...) for a case that traces it: LeakSanitizer
    cannot run under ptrace (it stops the process the way a tracer does),
    so a sanitizer build's broker traced would abort at exit for that alone.
    Leaks are checked by every other case."""
    saved = os.environ.get("ASAN_OPTIONS")
    os.environ["ASAN_OPTIONS"] = (saved + ":" if saved else "") + "detect_leaks=0"
    try:
        return t.broker(overrides=overrides)
    finally:
        if saved is None:
            del os.environ["ASAN_OPTIONS"]
        else:
            os.environ["ASAN_OPTIONS"] = saved


def strace_attach(b, out):
    """strace -f on the running broker, writing its fsync/fdatasync calls
    (thread id, time) to out; returns the Popen once every thread is traced.
    The broker's pid is its reactor thread's id (it runs main()). Raises
    Skip when strace is missing or cannot attach (ptrace refused)."""
    exe = shutil.which("strace")
    if exe is None:
        raise Skip("strace is not installed")
    err_path = out + ".stderr"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen([exe, "-f", "-ttt", "-e", "trace=fsync,fdatasync", "-o", out,
                                 "-p", str(b.pid)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 20
    while True:
        with open(err_path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        if "attached" in text:
            return proc
        if proc.poll() is not None:
            last = text.strip().splitlines()[-1] if text.strip() else "no output"
            raise Skip("strace cannot attach to the broker (ptrace refused?): %s" % last)
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise AssertionError("strace did not attach within 20 s: %r" % text)
        time.sleep(0.05)


def strace_syncs(path):
    """[(tid, time, name)] of the fsync/fdatasync calls in a trace file."""
    out = []
    with open(path) as f:
        for line in f:
            m = SYNC_CALL.match(line)
            if m:
                out.append((int(m.group(1)), float(m.group(2)), m.group(3)))
    return out
