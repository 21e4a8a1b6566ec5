#!/usr/bin/env bash
# check_install_deps_help.sh SCRIPT: `ci/install-deps --help` prints its usage
# (naming --minimal) and exits 0 without installing anything; an unknown argument
# exits 2; `--list --minimal` names a subset of the full list, with the libraries the
# broker links (jansson, ZooKeeper's C client) and without the ZooKeeper server.
set -uo pipefail
script=$1
fail() {
    echo "FAIL: $*"
    exit 1
}
out=$("$script" --help) || fail "--help exited $?"
grep -q '^Usage: ci/install-deps' <<<"$out" || fail "--help printed no usage line: $out"
grep -q -- '--minimal' <<<"$out" || fail "--help does not mention --minimal: $out"
"$script" --no-such-option >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "an unknown argument exited $rc, expected 2"
full=$("$script" --list) || fail "--list exited $?"
minimal=$("$script" --list --minimal) || fail "--list --minimal exited $?"
[ -n "$minimal" ] || fail "--list --minimal is empty"
for p in $minimal; do
    grep -qx -- "$p" <<<"$full" || fail "minimal package $p is not in the full list"
done
for p in libcunit1-dev libgtk-4-dev afl++ kcat golang-go burrow zookeeper; do
    ! grep -qx -- "$p" <<<"$minimal" || fail "--minimal installs $p"
done
# the broker's cluster layer links jansson and ZooKeeper's C client
for p in libjansson-dev libzookeeper-mt-dev; do
    grep -qx -- "$p" <<<"$minimal" || fail "--minimal lacks $p"
done
# the Go interop clients build offline from these (tests/interop/meson.build)
for p in golang-go golang-github-shopify-sarama-dev golang-github-segmentio-kafka-go-dev \
    golang-github-confluentinc-confluent-kafka-go-dev burrow zookeeper; do
    grep -qx -- "$p" <<<"$full" || fail "the full list lacks $p"
done
echo "ok: usage, --minimal: $(echo $minimal)"
