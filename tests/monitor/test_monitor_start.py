"""samsa-monitor started without its settings schema installed (no
GSETTINGS_SCHEMA_DIR, as from a fresh build tree): it warns and runs on the
defaults instead of aborting in g_settings_new (SIGTRAP).

The real program under xvfb-run and dbus-run-session, pointed at a port
nothing listens on; stopped by its process group's id.
Usage: test_monitor_start.py SAMSA_MONITOR
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

WARNING = "is not installed (meson install, or GSETTINGS_SCHEMA_DIR"


def main(exe):
    env = dict(os.environ)
    env.pop("GSETTINGS_SCHEMA_DIR", None)
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            ["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24 -noreset",
             "dbus-run-session", "--", exe, "http://127.0.0.1:1"],
            stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None:
                err.seek(0)
                if WARNING in err.read():
                    break
                time.sleep(0.1)
            err.seek(0)
            text = err.read()
            if WARNING not in text:
                print("no warning of the missing schema; stderr:\n%s" % text)
                return 1
            # the window is built right after the settings: an abort there
            # ends the program within this
            try:
                rc = proc.wait(timeout=5)
                print("samsa-monitor exited (%d) after the warning; stderr:\n%s" % (rc, text))
                return 1
            except subprocess.TimeoutExpired:
                pass
            print("warned and kept running on the defaults: %s"
                  % [line for line in text.splitlines() if WARNING in line][0].strip())
            return 0
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: test_monitor_start.py SAMSA_MONITOR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
