#!/usr/bin/env bash
# check_install.sh MESON BUILD_DIR DESTDIR BINDIR LIBDIR VERSION: `meson install
# --destdir DESTDIR` of BUILD_DIR puts samsa-broker and samsa-dump into BINDIR (under
# DESTDIR), and each installed program runs (with the installed libsamsa-protocol)
# and prints its version. DESTDIR is emptied before and removed after.
set -uo pipefail
meson=$1 build=$2 dest=$3 bindir=$4 libdir=$5 version=$6
fail() {
    echo "FAIL: $*"
    exit 1
}
rm -rf "$dest"
if ! out=$("$meson" install -C "$build" --no-rebuild --destdir "$dest" 2>&1); then
    echo "$out"
    fail "meson install --destdir $dest failed"
fi
for name in samsa-broker samsa-dump; do
    path=$dest$bindir/$name
    [ -f "$path" ] && [ -x "$path" ] || fail "$name is not installed as $bindir/$name"
    got=$(LD_LIBRARY_PATH="$dest$libdir" "$path" --version) ||
        fail "installed $name --version exited $?"
    [ "$got" = "$name $version" ] || fail "installed $name --version printed '$got'"
    echo "ok: $bindir/$name: $got"
done
rm -rf "$dest"
