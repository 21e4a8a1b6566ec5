"""libsamsa.so exports samsa_* and nothing else, with SONAME libsamsa.so.0.

    check_exports.py LIBSAMSA_SO
"""
import subprocess
import sys


def main():
    lib = sys.argv[1]
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    names = [l.split()[-1].split("@")[0] for l in out.splitlines() if l.strip()]
    # The version node of libsamsa.map appears as an absolute symbol.
    bad = [n for n in names if not n.startswith("samsa_") and n != "SAMSA_0"]
    need = ["samsa_conf_new", "samsa_produce", "samsa_consumer_poll", "samsa_admin_metadata",
            "samsa_murmur2"]
    missing = [n for n in need if n not in names]
    dyn = subprocess.run(["readelf", "-d", lib], check=True, capture_output=True,
                         text=True).stdout
    ok = True
    if bad:
        print("exported but not samsa_*: %s" % ", ".join(bad))
        ok = False
    if missing:
        print("not exported: %s" % ", ".join(missing))
        ok = False
    if "Library soname: [libsamsa.so.0]" not in dyn:
        print("SONAME is not libsamsa.so.0:\n" + dyn)
        ok = False
    print("%d symbols exported, all samsa_*" % len(names) if ok else "FAIL")
    return 0 if ok else 1


sys.exit(main())
