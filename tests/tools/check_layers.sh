#!/usr/bin/env bash
# check_layers.sh SCRIPT SOURCE_ROOT: ci/check-layers passes on the tree and
# finds what breaks the layer rule in a copy of it: an include that points up,
# a root header included from a layer, a folder the table does not name, a
# circle in the table, a struct br_partition written outside
# replica/partition.c, a circle of files in a folder, a known circle gone.
set -uo pipefail
script=$1
src=$2
fail() {
    echo "FAIL: $*"
    exit 1
}
out=$("$script") || fail "the tree itself has findings: $out"
grep -q '^layers: 0 findings' <<<"$out" || fail "no summary line: $out"
grep -q '^partition writes: 0 outside' <<<"$out" || fail "no partition summary line: $out"
grep -q '^file circles: 0 findings' <<<"$out" || fail "no file-circle summary line: $out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copy() {
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t/broker" "$tmp/t/client"
    cp -r "$src/broker/src" "$src/broker/meson.build" "$tmp/t/broker/"
    for d in src tool streams; do
        [ -d "$src/client/$d" ] && cp -r "$src/client/$d" "$tmp/t/client/"
    done
}
expect() { # expect WHAT PATTERN: the check fails on the copy, naming PATTERN
    out=$(SAMSA_SOURCE_ROOT="$tmp/t" "$script")
    rc=$?
    [ "$rc" -eq 1 ] || fail "$1: exit $rc, expected 1: $out"
    grep -q -- "$2" <<<"$out" || fail "$1: no finding naming '$2': $out"
}
copy
SAMSA_SOURCE_ROOT="$tmp/t" "$script" >/dev/null || fail "the copy itself has findings"
sed -i '0,/#include "/s//#include "server\/state.h"\n#include "/' "$tmp/t/broker/src/storage/log.c"
expect "storage including server" "storage/log.c:.*server/state.h.*layer storage uses only"
copy
sed -i '0,/#include "/s//#include "broker.h"\n#include "/' "$tmp/t/broker/src/reactor/net.c"
expect "reactor including the root" 'reactor/net.c:.*"broker.h": a header of the composition root'
copy
mkdir "$tmp/t/broker/src/extra"
expect "a folder outside the table" "broker/src/extra/: a folder"
copy
sed -i "s/^  'base': \[\],/  'base': ['server'],/" "$tmp/t/broker/meson.build"
expect "a circle" "in a circle"
copy
printf 'static void x(struct br_partition *q)\n{\n    q->hw = 0;\n}\n' >>"$tmp/t/broker/src/server/fetch.c"
expect "a partition's field written in server/" "server/fetch.c:.*writes the partition's hw"
copy
printf 'static void y(struct br_topic *t)\n{\n    t->partitions[0].leader_epoch += 1;\n}\n' >>"$tmp/t/broker/src/server/topics.c"
expect "a partitions[] element written" "server/topics.c:.*writes the partition's leader_epoch"
copy
printf 'static void z(void *v)\n{\n    struct thing *w = v;\n    w->isr_writing = true;\n}\n' >>"$tmp/t/broker/src/group/offsets.c"
expect "a field only the partition has" "group/offsets.c:.*writes the partition's isr_writing"
copy
printf 'int br_circle_a(int x)\n{\n    return x > 0 ? br_circle_b(x - 1) : 0;\n}\n' >"$tmp/t/broker/src/storage/circle_a.c"
printf 'int br_circle_b(int x)\n{\n    return br_circle_a(x);\n}\n' >"$tmp/t/broker/src/storage/circle_b.c"
expect "two files calling each other" "broker/src/storage/: 2 files use each other in a circle: circle_a.c -> circle_b.c (br_circle_b); circle_b.c -> circle_a.c (br_circle_a)"
copy
printf 'static int (*const table[])(int) = {br_circle_a};\nint br_circle_b(int x)\n{\n    return table[0](x);\n}\n' >"$tmp/t/client/src/circle_b.c"
printf 'int br_circle_a(int x)\n{\n    return br_circle_b(x);\n}\n' >"$tmp/t/client/src/circle_a.c"
expect "a function named in a table closes a circle" "client/src/: 2 files use each other in a circle"
copy
printf 'struct br_circle_b;\nint br_circle_a(struct br_circle_b *x)\n{\n    return x != 0;\n}\n' >"$tmp/t/broker/src/storage/circle_a.c"
printf 'int br_circle_b(int x)\n{\n    return br_circle_a(0) + x;\n}\n' >"$tmp/t/broker/src/storage/circle_b.c"
out=$(SAMSA_SOURCE_ROOT="$tmp/t" "$script") || fail "a struct tag named as a function counted as a use: $out"
copy
printf 'int br_circle_a(int x)\n{\n    return x > 0 ? br_circle_b(x - 1) : 0;\n}\n' >"$tmp/t/broker/src/storage/circle_a.c"
printf 'int br_circle_b(int x)\n{\n    return br_circle_a(x);\n}\n' >"$tmp/t/broker/src/storage/circle_b.c"
export SAMSA_KNOWN_CIRCLES='{"broker/src/storage": [["circle_a.c", "circle_b.c"]]}'
out=$(SAMSA_SOURCE_ROOT="$tmp/t" "$script") || fail "a known circle refused: $out"
rm "$tmp/t/broker/src/storage/circle_b.c"
expect "a known circle gone" "the known circle broker/src/storage/{circle_a.c, circle_b.c} is gone"
unset SAMSA_KNOWN_CIRCLES
echo "ok"
