"""`meson install --destdir` of the build, then what a user of the installed
client does with it, against a real samsa-broker:

- a program outside the tree (client/examples/hello.c) compiled against the
  installed header with `pkg-config --cflags --libs samsa` (libsamsa.so) and
  with `pkg-config --static --cflags --libs samsa` (libsamsa.a, then fully
  static when the build has no sanitizer) produces three records and reads
  them back: nothing but libsamsa is installed, so both link lines must be
  complete on their own;
- libsamsa.so exports samsa_* only, under the version SAMSA_0, and needs no
  other library of ours (the protocol code is inside it);
- libsamsa-streams the same way: its word count example links through
  samsa-streams.pc shared, against the .a files and fully static, and runs;
- the installed `samsa` tool runs from the prefix with no LD_LIBRARY_PATH
  (its rpath is $ORIGIN/../LIBDIR), and so do the other installed programs;
- the API reference is installed: `man -l` of samsa(3) and of the section
  pages shows samsa.h's functions, every function libsamsa.so exports.

    test_client_install.py SAMSA_BROKER BUILD_ROOT PREFIX LIBDIR INCLUDEDIR HELLO_C CC SANITIZE
        MANDIR

The outside program is compiled by the build's own compiler, and with its
sanitizers when the build has them (b_sanitize): an instrumented libsamsa
needs the sanitizer runtime in the program that links it.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import Skip, check, eq, main  # noqa: E402

ARGS = None
EXPECTED = ["0: hello 0", "1: hello 1", "2: hello 2"]


class Installed:
    """The build installed under a fresh DESTDIR of the run."""

    def __init__(self, t):
        build_root, prefix, libdir, includedir, hello, cc, sanitize, mandir = ARGS
        self.dest = t.path("destdir")
        subprocess.run(["meson", "install", "-C", build_root, "--no-rebuild", "--quiet",
                        "--destdir", self.dest], check=True, capture_output=True, timeout=120)
        self.prefix = self.dest + prefix
        self.lib = self.dest + os.path.join(prefix, libdir)
        self.inc = self.dest + os.path.join(prefix, includedir)
        self.bin = self.dest + os.path.join(prefix, "bin")
        self.man = self.dest + os.path.join(prefix, mandir)
        self.hello, self.cc = hello, cc
        self.san = [] if sanitize in ("", "none") else ["-fsanitize=" + sanitize]

    def pkg_config(self, *args):
        env = dict(os.environ)
        env["PKG_CONFIG_PATH"] = self.lib + "/pkgconfig"
        env["PKG_CONFIG_SYSROOT_DIR"] = self.dest
        return subprocess.run(["pkg-config"] + list(args), check=True, capture_output=True,
                              text=True, env=env).stdout.split()

    def compile(self, exe, flags, extra=()):
        # Strict flags: the public header must compile clean on its own.
        out = subprocess.run([self.cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", exe,
                              self.hello] + list(extra) + self.san + flags,
                             capture_output=True, text=True, timeout=120)
        # a fully static glibc program warns at link time that getaddrinfo wants
        # glibc's shared NSS modules at run time: a warning of glibc, not ours
        assert out.returncode == 0, (exe, flags, out.stderr)


def clean_env():
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    return env


def run_hello(exe, bootstrap, topic, env):
    out = subprocess.run([exe, bootstrap, topic], capture_output=True, text=True, timeout=60,
                         env=env)
    assert out.returncode == 0, (exe, out.returncode, out.stdout, out.stderr)
    eq(out.stdout.splitlines(), EXPECTED, exe + " output")


def case_installed_files(t):
    i = Installed(t)
    check(os.path.exists(i.inc + "/samsa/samsa.h"), "header not installed")
    for f in ("libsamsa.so.0", "libsamsa.a", "pkgconfig/samsa.pc",
              "libsamsa-streams.so.0", "libsamsa-streams.a", "pkgconfig/samsa-streams.pc"):
        check(os.path.exists(i.lib + "/" + f), "%s not installed", f)
    # one installable client: nothing of the protocol crate ships beside it
    shipped = sorted(os.listdir(i.lib))
    check(not any("protocol" in f for f in shipped), "protocol library installed: %s", shipped)
    check(not os.path.exists(i.inc + "/samsa-protocol"), "protocol headers installed")
    for name in ("samsa", "samsa-streams"):
        for static in ((), ("--static",)):
            libs = i.pkg_config(*static, "--libs", name)
            check(not any("protocol" in f for f in libs), "%s names the protocol: %s", name, libs)


def case_libsamsa_exports_only_samsa(t):
    i = Installed(t)
    so = i.lib + "/libsamsa.so.0"
    syms = subprocess.run(["nm", "-D", "--defined-only", so], check=True, capture_output=True,
                          text=True).stdout.split("\n")
    names = [line.split()[-1] for line in syms if line.strip()]
    check(len([n for n in names if n.startswith("samsa_")]) > 50, "few samsa_ symbols: %s", names)
    kp = [n for n in names if n.startswith("kp_")]
    eq(kp, [], "kp_* symbols exported by libsamsa.so")
    other = [n for n in names if not n.startswith("samsa_") and n != "SAMSA_0"]
    eq(other, [], "symbols other than samsa_* exported by libsamsa.so")
    versioned = subprocess.run(["objdump", "-T", so], check=True, capture_output=True,
                               text=True).stdout
    check("SAMSA_0" in versioned and " samsa_conf_new" in versioned,
          "samsa_* not versioned SAMSA_0: %s", versioned[:400])
    needed = subprocess.run(["readelf", "-d", so], check=True, capture_output=True,
                            text=True).stdout
    check("samsa" not in needed.replace("libsamsa.so.0", ""),
          "libsamsa.so.0 needs another library of ours: %s", needed)


def case_shared_and_static_programs_run(t):
    i = Installed(t)
    b = t.broker()
    # shared: `pkg-config --cflags --libs samsa`, the loader told where the prefix is
    shared = t.path("hello-shared")
    i.compile(shared, i.pkg_config("--cflags", "--libs", "samsa"))
    env = clean_env()
    env["LD_LIBRARY_PATH"] = i.lib
    run_hello(shared, b.bootstrap, "hello-shared", env)
    ldd = subprocess.run(["ldd", shared], capture_output=True, text=True, env=env).stdout
    check(i.dest in ldd, "not run on the installed library: %s", ldd)
    # static libsamsa: `pkg-config --static` names everything libsamsa.a needs
    flags = ["-l:libsamsa.a" if f == "-lsamsa" else f
             for f in i.pkg_config("--static", "--cflags", "--libs", "samsa")]
    static = t.path("hello-static")
    i.compile(static, flags)
    run_hello(static, b.bootstrap, "hello-static", clean_env())
    ldd = subprocess.run(["ldd", static], capture_output=True, text=True).stdout
    check("libsamsa" not in ldd, "libsamsa.a program loads libsamsa.so: %s", ldd)
    if i.san:
        return  # the sanitizer runtimes do not link fully static
    full = t.path("hello-full-static")
    i.compile(full, i.pkg_config("--static", "--cflags", "--libs", "samsa"), ["-static"])
    run_hello(full, b.bootstrap, "hello-full-static", clean_env())


def case_streams_links_shared_and_static(t):
    """libsamsa-streams the same way: its word count example (client/streams/
    examples/wordcount.c) linked through samsa-streams.pc, shared, against the
    two .a files, and fully static, each run to its usage line (exit 2)."""
    i = Installed(t)
    wordcount = os.path.join(os.path.dirname(i.hello), "..", "streams", "examples", "wordcount.c")
    builds = [("wc-shared", i.pkg_config("--cflags", "--libs", "samsa-streams"), [])]
    static = i.pkg_config("--static", "--cflags", "--libs", "samsa-streams")
    builds.append(("wc-static", [{"-lsamsa": "-l:libsamsa.a",
                                  "-lsamsa-streams": "-l:libsamsa-streams.a"}.get(f, f)
                                 for f in static], []))
    if not i.san:
        builds.append(("wc-full-static", static, ["-static"]))
    for name, flags, extra in builds:
        exe = t.path(name)
        out = subprocess.run([i.cc, "-std=c11", "-D_GNU_SOURCE", "-o", exe, wordcount] + extra
                             + i.san + flags, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, (name, flags, out.stderr)
        env = clean_env()
        if name == "wc-shared":
            env["LD_LIBRARY_PATH"] = i.lib
        else:
            ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
            check("libsamsa" not in ldd, "%s loads a shared libsamsa: %s", name, ldd)
        run = subprocess.run([exe], capture_output=True, text=True, timeout=30, env=env)
        eq(run.returncode, 2, name + " exit status (usage)")
        check("usage:" in run.stderr + run.stdout, "%s: no usage line: %s", name, run.stderr)


def case_installed_tools_run_from_the_prefix(t):
    i = Installed(t)
    # moved elsewhere, as a relocated prefix is: $ORIGIN finds the libraries
    moved = t.path("moved")
    shutil.copytree(i.prefix, moved, symlinks=True)
    tool = os.path.join(moved, "bin", "samsa")
    env = clean_env()
    ver = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30, env=env)
    assert ver.returncode == 0, (ver.returncode, ver.stdout, ver.stderr)
    ldd = subprocess.run(["ldd", tool], capture_output=True, text=True, env=env).stdout
    check(moved in ldd and "not found" not in ldd, "samsa not on the moved prefix: %s", ldd)
    b = t.broker()
    p = subprocess.run([tool, "produce", "-b", b.bootstrap, "-t", "from-tool"],
                       input="one\ntwo\n", capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    c = subprocess.run([tool, "consume", "-b", b.bootstrap, "-t", "from-tool", "--from",
                        "beginning", "-e"], capture_output=True, text=True, timeout=60, env=env)
    assert c.returncode == 0, (c.returncode, c.stdout, c.stderr)
    eq(c.stdout.splitlines(), ["one", "two"], "records read by the installed samsa")
    # every other installed program and library resolves its libraries too
    for d in ("bin", os.path.relpath(i.lib, i.prefix)):
        for f in sorted(os.listdir(os.path.join(moved, d))):
            path = os.path.join(moved, d, f)
            if os.path.islink(path) or not os.access(path, os.X_OK) or os.path.isdir(path):
                continue
            ldd = subprocess.run(["ldd", path], capture_output=True, text=True, env=env).stdout
            check("not found" not in ldd, "%s: %s", path, ldd)


def case_api_reference_installed(t):
    i = Installed(t)
    man3 = i.man + "/man3"
    pages = sorted(os.listdir(man3)) if os.path.isdir(man3) else []
    check("samsa.3" in pages, "samsa(3) not installed under %s: %s", man3, pages)
    if shutil.which("man") is None:
        raise Skip("no man(1) to read the installed pages")
    env = dict(os.environ, MANWIDTH="200", MAN_KEEP_FORMATTING="0")
    shown = {}
    for page in pages:
        out = subprocess.run(["man", "-l", os.path.join(man3, page)], capture_output=True,
                             text=True, timeout=60, env=env)
        assert out.returncode == 0, (page, out.stderr)
        shown[page] = out.stdout
    for page, fn in (("samsa.3", "samsa_version"), ("samsa_producer.3", "samsa_produce"),
                     ("samsa_records.3", "SAMSA_RECORD_INIT"), ("samsa_conf.3", "linger.ms")):
        check(fn in shown.get(page, ""), "%s does not show %s", page, fn)
    # every function libsamsa.so exports has its entry in one page
    syms = subprocess.run(["nm", "-D", "--defined-only", i.lib + "/libsamsa.so.0"], check=True,
                          capture_output=True, text=True).stdout.split()
    text = "\n".join(shown.values())
    fns = [n.split("@")[0] for n in syms if n.startswith("samsa_")]  # samsa_x@@SAMSA_0
    check(len(fns) > 50, "few exported functions: %s", fns)
    missing = [n for n in fns if n + "(" not in text]
    eq(missing, [], "exported functions no installed page shows")


if __name__ == "__main__":
    ARGS = sys.argv[2:10]
    del sys.argv[2:10]
    sys.exit(main([case_installed_files, case_libsamsa_exports_only_samsa,
                   case_shared_and_static_programs_run, case_streams_links_shared_and_static,
                   case_installed_tools_run_from_the_prefix,
                   case_api_reference_installed]))
