"""`meson install --destdir` of the build, then a program outside the tree
(client/examples/hello.c) compiled with `pkg-config --cflags --libs samsa`
against the installed header and library produces three records and reads
them back from a real samsa-broker.

    test_client_install.py SAMSA_BROKER BUILD_ROOT PREFIX LIBDIR INCLUDEDIR HELLO_C CC SANITIZE

The outside program is compiled by the build's own compiler, and with its
sanitizers when the build has them (b_sanitize): an instrumented libsamsa
needs the sanitizer runtime in the program that links it.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import main  # noqa: E402

ARGS = None


def case_installed_library_builds_and_runs_an_outside_program(t):
    build_root, prefix, libdir, includedir, hello, cc, sanitize = ARGS
    dest = t.path("destdir")
    subprocess.run(["meson", "install", "-C", build_root, "--no-rebuild", "--quiet",
                    "--destdir", dest], check=True, capture_output=True, timeout=120)
    lib = os.path.join(prefix, libdir) if not os.path.isabs(libdir) else libdir
    inc = os.path.join(prefix, includedir) if not os.path.isabs(includedir) else includedir
    assert os.path.exists(dest + inc + "/samsa/samsa.h"), "header not installed"
    for f in ("libsamsa.so.0", "libsamsa.a", "pkgconfig/samsa.pc"):
        assert os.path.exists(dest + lib + "/" + f), f + " not installed"
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = dest + lib + "/pkgconfig"
    env["PKG_CONFIG_SYSROOT_DIR"] = dest
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "samsa"], check=True,
                           capture_output=True, text=True, env=env).stdout.split()
    exe = t.path("hello")
    # Strict flags: the public header must compile clean on its own.
    san = [] if sanitize in ("", "none") else ["-fsanitize=" + sanitize]
    subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", exe, hello] + san + flags,
                   check=True, timeout=120)
    b = t.broker()
    run_env = dict(os.environ)
    run_env["LD_LIBRARY_PATH"] = dest + lib
    out = subprocess.run([exe, b.bootstrap, "hello-topic"], capture_output=True, text=True,
                         timeout=60, env=run_env)
    assert out.returncode == 0, (out.returncode, out.stdout, out.stderr)
    assert out.stdout.splitlines() == ["0: hello 0", "1: hello 1", "2: hello 2"], out.stdout
    # It ran on the installed library, not the build tree's.
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True, env=run_env).stdout
    assert dest in ldd, ldd


if __name__ == "__main__":
    ARGS = sys.argv[2:9]
    del sys.argv[2:9]
    sys.exit(main([case_installed_library_builds_and_runs_an_outside_program]))
