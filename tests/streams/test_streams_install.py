"""libsamsa-streams installed: `meson install --destdir` of the build, the
library's exports (samsa_st_* only, SONAME libsamsa-streams.so.0), and the
word count example (client/streams/examples/wordcount.c) compiled outside
the tree with `pkg-config --cflags --libs samsa-streams` against the
installed headers and libraries, counting words from a real samsa-broker.

    test_streams_install.py SAMSA_BROKER SAMSA_TOOL BUILD_ROOT PREFIX LIBDIR INCLUDEDIR
                            WORDCOUNT_C CC SANITIZE

As tests/client/test_client_install.py: compiled by the build's own
compiler, with the build's sanitizers when it has them.
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import check, eq, main  # noqa: E402

TOOL = None
ARGS = None
TIMEOUT = 60


def install(t):
    build_root, prefix, libdir, includedir = ARGS[:4]
    dest = t.path("destdir")
    subprocess.run(["meson", "install", "-C", build_root, "--no-rebuild", "--quiet",
                    "--destdir", dest], check=True, capture_output=True, timeout=120)
    lib = libdir if os.path.isabs(libdir) else os.path.join(prefix, libdir)
    inc = includedir if os.path.isabs(includedir) else os.path.join(prefix, includedir)
    return dest, dest + lib, dest + inc


def case_exports_only_samsa_st_with_its_soname(t):
    _, lib, inc = install(t)
    check(os.path.exists(inc + "/samsa/streams.h"), "samsa/streams.h not installed")
    for f in ("libsamsa-streams.so.0", "libsamsa-streams.a", "pkgconfig/samsa-streams.pc"):
        check(os.path.exists(lib + "/" + f), "%s not installed", f)
    so = lib + "/libsamsa-streams.so.0"
    out = subprocess.run(["nm", "-D", "--defined-only", so], check=True, capture_output=True,
                         text=True).stdout
    names = [line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()]
    bad = [n for n in names if not n.startswith("samsa_st_") and n != "SAMSA_STREAMS_0"]
    eq(bad, [], "exported names that are not samsa_st_*")
    for need in ("samsa_st_app_new", "samsa_st_driver_pipe", "samsa_st_count",
                 "samsa_st_serde_long"):
        check(need in names, "%s not exported", need)
    dyn = subprocess.run(["readelf", "-d", so], check=True, capture_output=True,
                         text=True).stdout
    check("Library soname: [libsamsa-streams.so.0]" in dyn, "SONAME: %s", dyn)
    check("Shared library: [libsamsa.so.0]" in dyn, "not linked to libsamsa.so.0: %s", dyn)


def case_outside_word_count_built_with_pkg_config_counts_words(t):
    dest, lib, _ = install(t)
    wordcount_c, cc, sanitize = ARGS[4:7]
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = lib + "/pkgconfig"
    env["PKG_CONFIG_SYSROOT_DIR"] = dest
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "samsa-streams"], check=True,
                           capture_output=True, text=True, env=env).stdout.split()
    exe = t.path("wordcount")
    san = [] if sanitize in ("", "none") else ["-fsanitize=" + sanitize]
    # strict flags: the public headers compile clean on their own
    subprocess.run([cc, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
                    "-o", exe, wordcount_c] + san + flags, check=True, timeout=120)
    b = t.broker(config={"group.initial.rebalance.delay.ms": "0",
                         "offsets.topic.num.partitions": "1"})
    subprocess.run([TOOL, "topic", "create", "-b", b.bootstrap, "text", "--partitions", "2"],
                   check=True, capture_output=True, timeout=TIMEOUT)
    subprocess.run([TOOL, "produce", "-b", b.bootstrap, "-t", "text"], input=b"a b a\nb c a\n",
                   check=True, capture_output=True, timeout=TIMEOUT)
    run_env = dict(os.environ)
    run_env["LD_LIBRARY_PATH"] = lib
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True, env=run_env).stdout
    check(dest in ldd, "not run on the installed libraries: %s", ldd)
    log = open(t.path("wordcount.log"), "w")
    proc = subprocess.Popen([exe, b.bootstrap, "text", "words", "outside", "100"],
                            stdout=subprocess.DEVNULL, stderr=log, env=run_env)
    try:
        deadline = time.monotonic() + TIMEOUT
        last = {}
        while time.monotonic() < deadline and last != {"a": 3, "b": 2, "c": 1}:
            check(proc.poll() is None, "wordcount exited: %s", open(t.path("wordcount.log")).read())
            p = subprocess.run(["kcat", "-C", "-b", b.bootstrap, "-t", "words", "-o", "beginning",
                                "-e", "-q", "-s", "value=>q", "-f", "%k %s\\n"],
                               capture_output=True, text=True, timeout=TIMEOUT)
            last = dict((k, int(v)) for k, v in (line.split() for line in p.stdout.splitlines()))
            time.sleep(0.2)
        eq(last, {"a": 3, "b": 2, "c": 1}, "the counts")
        proc.send_signal(signal.SIGTERM)
        eq(proc.wait(timeout=TIMEOUT), 0, "wordcount's exit status")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=TIMEOUT)
        log.close()


if __name__ == "__main__":
    TOOL = os.path.abspath(sys.argv[2])
    ARGS = sys.argv[3:10]
    del sys.argv[2:10]
    sys.exit(main([case_exports_only_samsa_st_with_its_soname,
                   case_outside_word_count_built_with_pkg_config_counts_words]))
