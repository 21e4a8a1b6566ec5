#!/usr/bin/env bash
# tests/tools/samsa-cluster as a reader of the README runs it: three brokers
# and ZooKeeper started on free ports, `kcat -L` listing the three brokers
# and a replicated topic's replicas and ISR, records produced and read back
# with kcat, then everything stopped by its PID and nothing left running.
# First, two starts that must fail: ZooKeeper's port, then broker 0's, held
# by another program (a cluster left running, say): start exits 1 with the
# child's error and stops what it started.
# Then, with the samsa tool, the README's walk-through of growing the
# cluster: a fourth broker added with `add-broker 3` and the topic's
# partitions moved onto brokers 1, 2 and 3 with `samsa reassign generate`,
# `execute --throttle` and `verify` until it says every move completed, the
# records read back from the new replicas.
# Usage: check_samsa_cluster.sh SAMSA_CLUSTER SAMSA_BROKER WORKDIR [SAMSA_TOOL]
set -uo pipefail
script=$1
broker=$2
work=$3
tool=${4:-}
command -v kcat >/dev/null || { echo "kcat is not installed: skipped"; exit 77; }
[ -f /usr/share/java/zookeeper.jar ] && command -v java >/dev/null ||
    { echo "ZooKeeper cannot run here: skipped"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
# The first of N consecutive ports free now, below Linux's ephemeral range
# (32768 and up: a port the kernel hands out is someone's outgoing
# connection's next moment, and base + 1 of one could be taken already),
# none of them in $taken (the ones already chosen)
taken=""
free_ports() {
    local p
    p=$(/usr/bin/python3 - "$1" "$taken" <<'PY'
import random, socket, sys
n, taken = int(sys.argv[1]), {int(x) for x in sys.argv[2].split()}
for _ in range(1000):
    base = random.randrange(20000, 32000 - n)
    if any(base + i in taken for i in range(n)):
        continue
    socks = []
    try:
        for i in range(n):
            s = socket.socket()
            socks.append(s)
            s.bind(("127.0.0.1", base + i))
        print(base)
        break
    except OSError:
        pass
    finally:
        for s in socks:
            s.close()
PY
)
    [ -n "$p" ] || { echo "FAIL: no free ports" >&2; exit 1; }
    echo "$p"
}
zk=$(free_ports 1)
taken="$zk"
base=$(free_ports 4)
taken="$taken $base $((base + 1)) $((base + 2)) $((base + 3))"
admin=$(free_ports 4)
taken="$taken $admin $((admin + 1)) $((admin + 2)) $((admin + 3))"
holder=
# Everything this check started, stopped by PID: the port holder, and each
# cluster folder's processes (samsa-cluster stop goes by their PID files).
cleanup() {
    [ -n "$holder" ] && kill "$holder" 2>/dev/null && wait "$holder" 2>/dev/null
    for d in "$work"/*/; do
        [ -d "$d" ] && "$script" stop --dir "$d" >/dev/null 2>&1
    done
}
fail() {
    echo "FAIL: $*"
    tail -n 20 "$work"/*/*.log
    cleanup
    exit 1
}
trap cleanup EXIT

# start_must_fail NAME PORT WHAT [start options]: with 127.0.0.1:PORT held by
# another program's listener, `start` exits 1 naming WHAT, the process that
# could not listen, with the error at the end of its log, and leaves nothing
# running: no PID it printed, none in a PID file, is alive.
start_must_fail() {
    local name=$1 port=$2 what=$3 out rc pid f
    shift 3
    /usr/bin/python3 -c 'import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
time.sleep(300)' "$port" >/dev/null 2>&1 &
    holder=$!
    for _ in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    out=$("$script" start --dir "$work/$name" --broker "$broker" "$@" 2>&1)
    rc=$?
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
    holder=
    echo "$out" | sed 's/^/    /'
    [ "$rc" = 1 ] || fail "$name: start exited $rc with 127.0.0.1:$port taken"
    echo "$out" | grep -q "samsa-cluster: $what (PID [0-9]*) exited at start-up" ||
        fail "$name: start does not say that $what exited"
    echo "$out" | grep -qi "address already in use" ||
        fail "$name: start does not show $what's error"
    for pid in $(echo "$out" | grep -o 'PID [0-9]*' | cut -d' ' -f2); do
        if kill -0 "$pid" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null; then
            fail "$name: PID $pid still runs after the failed start"
        fi
    done
    for f in "$work/$name"/*.pid; do
        [ -e "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && fail "$name: $f's process still runs"
    done
    echo "ok: $name: start failed (exit 1) naming $what, nothing left running"
}
# ZooKeeper's port taken: nothing else is started. Then broker 0's port:
# ZooKeeper and the other brokers are stopped again. Each on ports of its own
# (ZooKeeper's, the brokers', their admin APIs').
for name in zk-port-taken broker-port-taken; do
    bad=$(free_ports 7)
    taken="$taken $(seq "$bad" $((bad + 6)) | tr '\n' ' ')"
    if [ "$name" = zk-port-taken ]; then
        held=$bad what=ZooKeeper
    else
        held=$((bad + 1)) what="broker 0"
    fi
    start_must_fail "$name" "$held" "$what" --zk-port "$bad" --base-port $((bad + 1)) \
        --admin-port $((bad + 4))
done
"$script" start --dir "$work/cluster" --broker "$broker" --zk-port "$zk" --base-port "$base" \
    --admin-port "$admin" ||
    fail "start"
bs=127.0.0.1:$base
# the admin API of each broker, where samsa-monitor starts from
for i in 0 1 2; do
    /usr/bin/python3 -c "import sys,urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10)" \
            "http://127.0.0.1:$((admin + i))/v1/cluster" || fail "admin API of broker $i"
done
# the brokers register and learn of each other through the controller
ok=0
for _ in $(seq 1 300); do
    if [ "$(kcat -L -b "$bs" 2>/dev/null | grep -c '^  broker [0-9]* at 127.0.0.1:')" = 3 ]; then
        ok=1
        break
    fi
    sleep 0.2
done
[ $ok = 1 ] || fail "kcat -L does not list three brokers: $(kcat -L -b "$bs" 2>&1)"
# a topic made on first use, replicated on the three (default.replication.factor 3)
for _ in $(seq 1 100); do
    seq 1 30 | kcat -P -b "$bs" -t replicated -p 0 2>/dev/null && break
    sleep 0.2
done
meta=$(kcat -L -b "$bs" -t replicated 2>&1)
echo "$meta" | grep -q 'partition 0, leader [0-2], replicas: [0-2],[0-2],[0-2], isrs: [0-2],[0-2],[0-2]' ||
    fail "replicas and ISR of replicated-0 not listed: $meta"
got=$(kcat -C -b "$bs" -t replicated -p 0 -o beginning -e -q 2>/dev/null | tr '\n' ' ')
[ "$got" = "$(seq 1 30 | tr '\n' ' ')" ] || fail "read back: $got"
# a broker killed and started again rejoins (its old registration waited out)
kill -9 "$(cat "$work/cluster/broker-1.pid")"
ok=0
for _ in $(seq 1 300); do
    # gone once ZooKeeper ended its session: out of the brokers and the ISR
    if kcat -L -b "$bs" -t replicated 2>/dev/null | grep -q 'partition 0, .*isrs: [02],[02]$'; then
        ok=1
        break
    fi
    sleep 0.2
done
[ $ok = 1 ] || fail "broker 1 did not leave the ISR: $(kcat -L -b "$bs" -t replicated 2>&1)"
"$script" start-broker 1 --dir "$work/cluster" --broker "$broker" || fail "start-broker 1"
ok=0
for _ in $(seq 1 300); do
    if kcat -L -b "$bs" -t replicated 2>/dev/null | grep -q 'partition 0, .*isrs: [0-2],[0-2],[0-2]$'; then
        ok=1
        break
    fi
    sleep 0.2
done
[ $ok = 1 ] || fail "broker 1 did not rejoin the ISR: $(kcat -L -b "$bs" -t replicated 2>&1)"
running=4
if [ -n "$tool" ]; then
    # the README's walk-through: a fourth broker, the topic moved onto 1, 2, 3
    "$script" add-broker 3 --dir "$work/cluster" --broker "$broker" || fail "add-broker 3"
    "$script" add-broker 3 --dir "$work/cluster" --broker "$broker" 2>/dev/null &&
        fail "add-broker 3 twice"
    ok=0
    for _ in $(seq 1 300); do
        if [ "$(kcat -L -b "$bs" 2>/dev/null | grep -c '^  broker [0-9]* at 127.0.0.1:')" = 4 ]; then
            ok=1
            break
        fi
        sleep 0.2
    done
    [ $ok = 1 ] || fail "kcat -L does not list four brokers: $(kcat -L -b "$bs" 2>&1)"
    zkc=127.0.0.1:$zk/samsa
    echo '{"version":1,"topics":[{"topic":"replicated"}]}' >"$work/move.json"
    "$tool" reassign generate --zookeeper "$zkc" --topics-to-move-json-file "$work/move.json" \
        --broker-list 1,2,3 >"$work/generated" || fail "reassign generate"
    tail -n 1 "$work/generated" >"$work/plan.json"
    grep -q '"replicas":\[[1-3],[1-3],[1-3]\]' "$work/plan.json" ||
        fail "generate's plan: $(cat "$work/generated")"
    "$tool" reassign execute --zookeeper "$zkc" --reassignment-json-file "$work/plan.json" \
        --throttle 10000000 || fail "reassign execute"
    ok=0
    for _ in $(seq 1 300); do
        out=$("$tool" reassign verify --zookeeper "$zkc" --reassignment-json-file "$work/plan.json")
        rc=$?
        [ $rc = 0 ] && { ok=1; break; }
        [ $rc = 3 ] || fail "reassign verify exited $rc: $out"
        sleep 0.2
    done
    [ $ok = 1 ] || fail "the move did not complete: $out"
    echo "$out" | grep -q "Throttle was removed." || fail "verify did not remove the throttle: $out"
    meta=$(kcat -L -b "$bs" -t replicated 2>&1)
    for p in 0 1 2; do
        echo "$meta" | grep -q "partition $p, leader [1-3], replicas: [1-3],[1-3],[1-3], isrs: [1-3],[1-3],[1-3]" ||
            fail "replicated-$p not on brokers 1, 2, 3: $meta"
    done
    got=$(kcat -C -b "127.0.0.1:$((base + 3))" -t replicated -p 0 -o beginning -e -q 2>/dev/null | tr '\n' ' ')
    [ "$got" = "$(seq 1 30 | tr '\n' ' ')" ] || fail "read back after the move: $got"
    ok=0
    for _ in $(seq 1 300); do
        ls -d "$work"/cluster/data-0/replicated-* >/dev/null 2>&1 || { ok=1; break; }
        sleep 0.2
    done
    [ $ok = 1 ] || fail "broker 0 keeps its replicas of replicated"
    echo "ok: a fourth broker added, the topic moved onto brokers 1, 2, 3 and read back"
    running=5
fi
pids=$(cat "$work"/cluster/*.pid)
"$script" status --dir "$work/cluster" | grep -c running | grep -qx "$running" || fail "status"
"$script" stop --dir "$work/cluster" || fail "stop"
for pid in $pids; do
    if kill -0 "$pid" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null; then
        fail "PID $pid still runs after stop"
    fi
done
trap - EXIT
echo "ok: three brokers and ZooKeeper started, listed by kcat -L, stopped"
rm -rf "$work"
exit 0
