"""Runs meson tests from a test list (meson introspect --tests) on the lent
machine, in parallel, without meson: the commands and environments of the
build machine, the Debian interpreter replaced by this machine's python3 and
the GStreamer plugins by the carried ones. Prints one line per test.

Usage: run-tests.py TESTS.json NAMES SUITES SECONDS LOG JOBS
  NAMES, SUITES: comma-separated test names and suites to run (oclgrind ones
  never); SECONDS: no test starts after that; LOG: failures' output.
"""
import json, os, subprocess, sys, shutil, time
from concurrent.futures import ThreadPoolExecutor
tests = json.load(open(sys.argv[1]))
names = set(sys.argv[2].split(","))
suites = set(sys.argv[3].split(","))
deadline = time.time() + float(sys.argv[4])
log = open(sys.argv[5], "a")
py = shutil.which("python3")
sel = [t for t in tests if t["name"] in names or any(s.split(":")[-1] in suites for s in t["suite"])]
sel = [t for t in sel if "oclgrind" not in t["name"] and "ir-venv" not in " ".join(t["cmd"])
       and t["name"] != "conformance-gpu"]   # check.sh --conformance runs it in shards
def run(t):
    cmd = [py if a.startswith("/") and a.endswith("/python3") else a for a in t["cmd"]]
    env = dict(os.environ); env.update(t["env"])
    if "GST_PLUGIN_PATH" in env:
        env["GST_PLUGIN_PATH"] = env["GST_PLUGIN_PATH"].replace(
            os.environ["CLINFER_BUILD_ROOT_HERE"] + "/tests/gst/system-plugins", "/tmp/cb/gstplug")
    env["LD_LIBRARY_PATH"] = env.get("LD_LIBRARY_PATH", "") + ":/usr/local/nvidia/lib64"
    left = deadline - time.time()
    if left < 5:
        return t["name"], "NOTRUN", 0, ""
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, cwd=t["workdir"] or os.environ["CLINFER_BUILD_ROOT_HERE"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=min(left, 240))
        rc, out = p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        rc, out = "TIMEOUT", (e.stdout or b"").decode(errors="replace")
    res = "OK" if rc == 0 else "SKIP" if rc == 77 else "FAIL(%s)" % rc
    return t["name"], res, time.time() - t0, out
counts = {}
with ThreadPoolExecutor(max_workers=int(sys.argv[6])) as ex:
    for name, res, dt, out in ex.map(run, sel):
        counts[res.split("(")[0]] = counts.get(res.split("(")[0], 0) + 1
        print("%-60s %-12s %6.1fs" % (name, res, dt), flush=True)
        log.write("==== %s %s %.1fs\n" % (name, res, dt))
        if res != "OK":
            log.write(out[-20000:] + "\n")
        elif name.startswith("conformance"):
            log.write(out[-3000:] + "\n")
print("tests:", counts, flush=True)
