#!/usr/bin/env bash
# check_version.sh EXE NAME VERSION: `EXE --version` prints exactly "NAME VERSION"
# (the version meson configured) and exits 0.
set -uo pipefail
exe=$1 name=$2 version=$3
out=$("$exe" --version)
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "FAIL: $exe --version exited $rc (output: $out)"
    exit 1
fi
if [ "$out" != "$name $version" ]; then
    echo "FAIL: $exe --version printed '$out', expected '$name $version'"
    exit 1
fi
echo "ok: $out"
