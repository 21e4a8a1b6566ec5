#!/usr/bin/python3
"""The reactor under pressure on raw sockets: samsa-broker runs out of file
descriptors without spinning, closes idle connections
(connections.max.idle.ms), and does not reserve what a peer merely claims
(queued.max.request.bytes).

    test_connections.py SAMSA_BROKER [-k CASE]

Each case prints the figures it measured (CPU, log growth, VmSize) so that a
run of the script against an older binary shows the difference.
"""

import os
import resource
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broker import check, eq, main  # noqa: E402
import kadmin  # noqa: E402
import kwire  # noqa: E402
from kwire import header, i32  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def raise_fd_limit(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        check(hard == resource.RLIM_INFINITY or hard >= n,
              "the file descriptor limit (%d) is below %d", hard, n)
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, hard))


def cpu_seconds(pid):
    """utime + stime of a process, in seconds (/proc/<pid>/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        stat = f.read()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_status_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%d/status" % (field, pid))


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def broker_socket(pid, client_port):
    """True while the broker holds its end of the connection from
    client_port on 127.0.0.1 open (a descriptor of it links to the
    socket's inode)."""
    inodes = set()
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            rem_port = int(fields[2].split(":")[1], 16)
            if rem_port == client_port and fields[9] != "0":
                inodes.add("socket:[%s]" % fields[9])
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) in inodes:
                return True
        except OSError:
            pass   # closed meanwhile
    return False


def served(b, sock, corr):
    """ApiVersions v0 and Metadata v1 answered on sock."""
    sock.sendall(kwire.api_versions_v0(corr) + kwire.metadata_v1(corr + 1, None))
    got, err, apis = kwire.parse_api_versions_v0(kwire.recv_frame(sock))
    eq((got, err), (corr, 0), "ApiVersions correlation id, error")
    got, brokers, _, _ = kwire.parse_metadata_v1(kwire.recv_frame(sock))
    eq(got, corr + 1, "Metadata correlation id")
    eq([(x[0], x[2]) for x in brokers], [(0, b.port)], "Metadata brokers")


def peer_closed(s):
    """True when the broker closed s (EOF or reset), False while it is open.
    Reads nothing the broker sent: only used on connections that sent
    nothing."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True


# ---------------------------------------------------------------- descriptors

FD_LIMIT = 64
EXTRA_CONNECTIONS = 150
MEASURE_S = 3.0


def case_out_of_file_descriptors(t):
    raise_fd_limit(4096)
    b = t.broker()
    bystander = kwire.connect(b.port)
    served(b, bystander, 10)
    # The broker's own limit: what it raised its soft limit to at start-up
    # no longer matters.
    resource.prlimit(b.pid, resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))
    fds0 = open_fds(b.pid)
    check(fds0 < FD_LIMIT - 8, "the broker already holds %d descriptors", fds0)

    extra = [kwire.connect(b.port) for _ in range(EXTRA_CONNECTIONS)]
    log0 = os.path.getsize(b.stderr_path)
    cpu0, wall0 = cpu_seconds(b.pid), time.monotonic()
    time.sleep(MEASURE_S)   # a measurement window, not a wait for a condition
    cpu1, wall1 = cpu_seconds(b.pid), time.monotonic()
    log1 = os.path.getsize(b.stderr_path)
    share = (cpu1 - cpu0) / (wall1 - wall0)
    log_rate = (log1 - log0) / (wall1 - wall0)
    print("  out of descriptors (limit %d, %d connections): CPU %.0f%% of a core, "
          "log %.0f bytes/s" % (FD_LIMIT, EXTRA_CONNECTIONS, 100 * share, log_rate))
    b.check_alive()
    check(share < 0.5, "the broker used %.0f%% of a core while out of descriptors", 100 * share)
    check(log1 - log0 < 64 * 1024, "the log grew by %d bytes in %.1f s while out of descriptors",
          log1 - log0, wall1 - wall0)
    served(b, bystander, 20)
    kadmin.wait_log(b, "out of file descriptors (limit %d)" % FD_LIMIT, timeout=10.0)

    # What could not be accepted is closed, not left hanging in the backlog.
    deadline = time.monotonic() + 10.0
    while True:
        closed = sum(1 for s in extra if peer_closed(s))
        if closed >= EXTRA_CONNECTIONS - FD_LIMIT:
            break
        check(time.monotonic() < deadline,
              "%d of %d connections beyond the limit were closed by the broker",
              closed, EXTRA_CONNECTIONS)
        time.sleep(0.1)
    print("  %d of %d connections closed at once, %d accepted" % (closed, EXTRA_CONNECTIONS,
                                                                  EXTRA_CONNECTIONS - closed))
    for s in extra:
        s.close()

    # Descriptors are free again: new connections are served.
    deadline = time.monotonic() + 15.0
    corr = 100
    while True:
        corr += 2
        try:
            with kwire.connect(b.port) as s:
                served(b, s, corr)
            break
        except (OSError, kwire.Closed, AssertionError):
            check(time.monotonic() < deadline, "no new connection served after the others closed")
            time.sleep(0.1)
    served(b, bystander, 30)
    bystander.close()
    b.stop()


# ---------------------------------------------------------------- idle

IDLE_MS = 1000


def case_idle_connections_are_closed(t):
    b = t.broker(overrides={"connections.max.idle.ms": str(IDLE_MS)})
    idle = kwire.connect(b.port)
    half = kwire.connect(b.port)
    half.sendall(kwire.api_versions_v0(5)[:7])
    active = kwire.connect(b.port)
    t0 = time.monotonic()
    corr = 0
    closed = {}
    # The active connection sends a request every 200 ms for three idle
    # periods; the other two must be closed meanwhile (generously: 10 s).
    while time.monotonic() - t0 < 3 * IDLE_MS / 1000.0 or len(closed) < 2:
        check(time.monotonic() - t0 < 10.0, "still open after 10 s: %s",
              [n for n in ("idle", "half") if n not in closed])
        corr += 1
        got, err, _ = kwire.parse_api_versions_v0(
            kwire.roundtrip(active, kwire.api_versions_v0(corr)))
        eq((got, err), (corr, 0), "active connection's ApiVersions after %.1f s"
           % (time.monotonic() - t0))
        for name, s in (("idle", idle), ("half", half)):
            if name not in closed and peer_closed(s):
                closed[name] = time.monotonic() - t0
        time.sleep(0.2)
    print("  closed after %.1f s (idle), %.1f s (half a frame); the active one was served for "
          "%.1f s" % (closed["idle"], closed["half"], time.monotonic() - t0))
    check(closed["idle"] >= IDLE_MS / 1000.0 * 0.9, "the idle connection was closed too early")
    active.close()
    b.stop()


def case_idle_connection_that_never_reads_is_closed(t):
    """Responses queued behind a full socket (a peer that never reads) do not
    keep the connection, and the segments its sendfile slices hold, alive."""
    b = t.broker(overrides={"connections.max.idle.ms": str(IDLE_MS)})
    value = b"v" * (900 * 1024)
    kwire.create_topic(b.port, "pinned", 1)
    for i in range(2):
        kwire.produce(b.port, "pinned", 0, [(b"k%d" % i, value)])
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", b.port))
    port = s.getsockname()[1]
    deadline = time.monotonic() + 10.0
    while not broker_socket(b.pid, port):
        check(time.monotonic() < deadline, "the broker did not accept the connection")
        time.sleep(0.02)
    # 40 fetches of ~1.8 MB each: far more than the socket buffers hold
    reqs = b"".join(kwire.fetch_v4(100 + i, "pinned", 0, 0, max_bytes=4 << 20,
                                   partition_max_bytes=4 << 20) for i in range(40))
    s.sendall(reqs)
    deadline = time.monotonic() + 15.0
    while broker_socket(b.pid, port):
        check(time.monotonic() < deadline,
              "the broker kept a connection that never reads open for 15 s (idle %d ms)", IDLE_MS)
        time.sleep(0.1)
    # What arrives now is what the kernel held; then the close.
    got = 0
    s.settimeout(10.0)
    try:
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            got += len(chunk)
    except (ConnectionResetError, BrokenPipeError):
        pass
    print("  closed with %d of about %d response bytes unsent" % (40 * 2 * len(value) - got,
                                                                   40 * 2 * len(value)))
    check(got < 40 * len(value), "all %d bytes arrived: the connection was not cut short", got)
    s.close()
    with kwire.connect(b.port) as c:
        served(b, c, 7)
    b.stop()


# ---------------------------------------------------------------- claims

CLAIMS = 500
CLAIMED = 100 * 1000 * 1000


def case_stalled_claims_reserve_nothing(t):
    raise_fd_limit(4096)
    b = t.broker()
    vm0 = proc_status_kib(b.pid, "VmSize")
    rss0 = proc_status_kib(b.pid, "VmRSS")
    conns = []
    for i in range(CLAIMS):
        s = kwire.connect(b.port)
        s.sendall(i32(CLAIMED) + header(0, 3, 1000 + i)[:10])   # 4 + 10 bytes of 100 MB
        conns.append(s)
    # every claim has reached the broker once a request behind them is served
    with kwire.connect(b.port) as s:
        served(b, s, 1)
    deadline = time.monotonic() + 10.0
    while open_fds(b.pid) < CLAIMS:
        check(time.monotonic() < deadline, "the broker did not accept %d connections", CLAIMS)
        time.sleep(0.05)
    with kwire.connect(b.port) as s:
        served(b, s, 3)
    vm1 = proc_status_kib(b.pid, "VmSize")
    rss1 = proc_status_kib(b.pid, "VmRSS")
    print("  %d connections claiming %d bytes each: VmSize %d -> %d MiB, VmRSS %d -> %d MiB"
          % (CLAIMS, CLAIMED, vm0 // 1024, vm1 // 1024, rss0 // 1024, rss1 // 1024))
    check(vm1 - vm0 < 1024 * 1024, "VmSize grew by %d MiB for %d stalled claims",
          (vm1 - vm0) // 1024, CLAIMS)
    for s in conns:
        s.close()
    b.stop()


def case_small_queued_max_request_bytes(t):
    """Six producers send frames of ~900 KB slowly while the input buffers
    may hold 1 MiB in all: reading pauses and resumes, every request
    completes, nothing is lost."""
    cap = 1 << 20
    b = t.broker(overrides={"socket.request.max.bytes": str(cap),
                            "queued.max.request.bytes": str(cap)})
    kwire.create_topic(b.port, "slow", 1)
    n = 6
    values = [bytes([0x41 + i]) * (900 * 1024) for i in range(n)]
    reqs = [kwire.produce_v3(200 + i, "slow", 0, kwire.record_batch([(b"p%d" % i, values[i])]))
            for i in range(n)]
    half = threading.Barrier(n, timeout=30.0)
    results = [None] * n

    def producer(i):
        try:
            with kwire.connect(b.port, timeout=60.0) as s:
                s.sendall(reqs[i][:400 * 1024])
                half.wait()
                rest = reqs[i][400 * 1024:]
                for off in range(0, len(rest), 64 * 1024):
                    s.sendall(rest[off:off + 64 * 1024])
                    time.sleep(0.02)   # pacing the upload, not waiting for anything
                corr, parts = kwire.parse_produce_v3(kwire.recv_frame(s, 60.0))
                results[i] = (corr, parts[("slow", 0)][0])
        except Exception as e:  # reported below
            results[i] = e

    threads = [threading.Thread(target=producer, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(90.0)
    check(not any(th.is_alive() for th in threads), "a producer is still waiting after 90 s")
    eq(results, [(200 + i, 0) for i in range(n)], "produce responses (correlation id, error)")
    recs, hw = kwire.read_partition(b.port, "slow", 0)
    eq(hw, n, "slow-0 high watermark")
    eq(sorted((r[2], r[3]) for r in recs), sorted((b"p%d" % i, values[i]) for i in range(n)),
       "slow-0 records")
    kadmin.wait_log(b, "over queued.max.request.bytes", timeout=5.0)
    with kwire.connect(b.port) as s:
        served(b, s, 9)
    b.stop()


BIG_SENDERS = 10


def case_big_frames_leave_room_for_small_requests(t):
    """Ten connections each send all but the last KiB of a 1.8 MB Produce
    frame and stall, past what queued.max.request.bytes lets the broker
    read: a new client's ApiVersions, Metadata and small Produce are
    answered while they wait. Then half of them finish their frames, which
    are all answered (one at a time as room frees: none waits for ever),
    the other half disconnect, and the broker goes on serving."""
    cap = 2 << 20
    b = t.broker(overrides={"socket.request.max.bytes": str(cap),
                            "queued.max.request.bytes": str(cap),
                            "message.max.bytes": str(cap)})
    kwire.create_topic(b.port, "big", 1)
    rss0 = proc_status_kib(b.pid, "VmRSS")
    values = [bytes([0x61 + i]) * 1800000 for i in range(BIG_SENDERS)]
    reqs = [kwire.produce_v3(300 + i, "big", 0, kwire.record_batch([(b"b%d" % i, values[i])]))
            for i in range(BIG_SENDERS)]
    senders = []
    for _ in range(BIG_SENDERS):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        s.connect(("127.0.0.1", b.port))
        s.setblocking(False)
        senders.append(s)
    # Push every frame but its last KiB, round robin, until each is pushed
    # or none of them moved for a second (the broker stopped reading them
    # and their socket buffers are full).
    sent = [0] * BIG_SENDERS
    target = [len(r) - 1024 for r in reqs]
    last_progress = time.monotonic()
    while any(sent[i] < target[i] for i in range(BIG_SENDERS)):
        if time.monotonic() - last_progress > 1.0:
            break
        moved = False
        for i, s in enumerate(senders):
            if sent[i] >= target[i]:
                continue
            try:
                sent[i] += s.send(reqs[i][sent[i]:min(target[i], sent[i] + 65536)])
                moved = True
            except BlockingIOError:
                pass
        if moved:
            last_progress = time.monotonic()
        else:
            time.sleep(0.01)
    kadmin.wait_log(b, "over queued.max.request.bytes", timeout=10.0)
    blocked = sum(1 for i in range(BIG_SENDERS) if sent[i] < target[i])
    rss1 = proc_status_kib(b.pid, "VmRSS")
    print("  %d connections pushed %.1f MB of %d frames of %d bytes; %d could not push all "
          "they meant to; the broker's VmRSS grew by %.1f MiB"
          % (BIG_SENDERS, sum(sent) / 1e6, BIG_SENDERS, len(reqs[0]), blocked,
             (rss1 - rss0) / 1024.0))

    # a new client while they wait
    t0 = time.monotonic()
    with kwire.connect(b.port) as s:
        served(b, s, 1)
        corr, parts = kwire.parse_produce_v3(kwire.roundtrip(
            s, kwire.produce_v3(3, "big", 0, kwire.record_batch([(b"small", b"v")]))))
        eq((corr, parts[("big", 0)][0]), (3, 0), "small Produce (correlation id, error)")
    print("  a new client was served in %.3f s while the big frames waited"
          % (time.monotonic() - t0))

    # half finish their frames, the other half go away
    finishing = list(range(0, BIG_SENDERS, 2))
    results = {}

    def finish(i):
        try:
            s = senders[i]
            s.setblocking(True)
            s.settimeout(60.0)
            s.sendall(reqs[i][sent[i]:])
            corr, parts = kwire.parse_produce_v3(kwire.recv_frame(s, 60.0))
            results[i] = (corr, parts[("big", 0)][0])
        except Exception as e:  # reported below
            results[i] = e

    threads = [threading.Thread(target=finish, args=(i,)) for i in finishing]
    for th in threads:
        th.start()
    for i in range(BIG_SENDERS):
        if i not in finishing:
            senders[i].close()
    for th in threads:
        th.join(90.0)
    check(not any(th.is_alive() for th in threads), "a big frame is still unanswered after 90 s")
    eq([results[i] for i in finishing], [(300 + i, 0) for i in finishing],
       "big Produce responses (correlation id, error)")
    for i in finishing:
        senders[i].close()
    with kwire.connect(b.port) as s:
        served(b, s, 11)
    recs, hw = kwire.read_partition(b.port, "big", 0)
    eq(hw, 1 + len(finishing), "big-0 high watermark")
    eq(sorted((r[2], r[3]) for r in recs),
       sorted([(b"small", b"v")] + [(b"b%d" % i, values[i]) for i in finishing]),
       "big-0 records")
    b.stop()


CASES = [case_out_of_file_descriptors, case_idle_connections_are_closed,
         case_idle_connection_that_never_reads_is_closed, case_stalled_claims_reserve_nothing,
         case_small_queued_max_request_bytes, case_big_frames_leave_room_for_small_requests]

if __name__ == "__main__":
    sys.exit(main(CASES))
