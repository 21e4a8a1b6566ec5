"""with_zookeeper.py PROGRAM [ARG...]: runs PROGRAM against a private
ZooKeeper and stops the ZooKeeper by its PID afterwards, whatever happened.

Starts Debian's ZooKeeper (zookeeper.py) on a free 127.0.0.1 port with a
data folder of its own, waits until it answers ruok with imok, runs PROGRAM
with SAMSA_ZK_CONNECT=127.0.0.1:PORT in its environment, then stops the
ZooKeeper (also when PROGRAM fails, and when this script gets SIGTERM or
SIGINT, as from meson's timeout).

Exit status: PROGRAM's; 77 (meson's "skipped") only when ZooKeeper is not
installed on this machine; 1 when it did not start, or when PROGRAM itself
exited 77 (a program run here has no reason to skip: that would hide a
failure). The working folder (under $SAMSA_TEST_TMPDIR when set) is removed
when PROGRAM passed and kept, with ZooKeeper's log, otherwise.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from zookeeper import ZooKeeper, ZooKeeperError, missing_parts  # noqa: E402

SKIP = 77


def _stop_on_signal(signum, frame):
    # unwinds through the finally below, which stops ZooKeeper
    raise SystemExit(128 + signum)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    missing = missing_parts()
    if missing:
        print("skip: ZooKeeper is not installed (missing %s): run ci/install-deps"
              % ", ".join(missing))
        return SKIP
    base = os.environ.get("SAMSA_TEST_TMPDIR") or None
    if base:
        os.makedirs(base, exist_ok=True)
    top = tempfile.mkdtemp(prefix="with_zookeeper-", dir=base)
    signal.signal(signal.SIGTERM, _stop_on_signal)
    signal.signal(signal.SIGINT, _stop_on_signal)
    zk = ZooKeeper(top)
    rc = 1
    try:
        try:
            zk.start()
        except ZooKeeperError as e:
            print("ZooKeeper did not start: %s" % e)
            print(zk.log_tail())
            return 1
        print("ZooKeeper pid %d at %s" % (zk.pid, zk.connect), flush=True)
        env = dict(os.environ, SAMSA_ZK_CONNECT=zk.connect)
        rc = subprocess.call(argv, env=env)
        if rc == SKIP:
            print("%s exited 77 (skip) although ZooKeeper runs: counted as a failure" % argv[0])
            rc = 1
        elif rc < 0:
            print("%s was killed by signal %d" % (argv[0], -rc))
            rc = 1
    finally:
        zk.stop()
        if rc == 0:
            shutil.rmtree(top, ignore_errors=True)
        else:
            print("working folder kept (ZooKeeper's log: %s)" % zk.log_path)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
