#!/usr/bin/env python3
"""Checks the conformance runner's shards: `--sample N --sample-offset K` for
K = 0..N-1 run disjoint parts of the list that together are the whole run
(how a machine with many cores splits the GPU list over processes), and an
offset outside 0..N-1 is refused with exit status 2.

Usage: test-shards.py CLINFER_CONFORMANCE DATA_DIR
"""

import os
import subprocess
import sys
import tempfile

FILTER = "test_a"   # a few dozen tests, some passing and some not
SHARDS = 3


def run(exe, data, out, extra):
    """The tests that passed and the number run ("conformance on CPU: P of
    N passed; ...")."""
    cmd = [exe, "--data", data, "--device", "CPU", "--filter", FILTER,
           "--write-list", out] + extra
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    with open(out) as f:
        passed = {line.strip() for line in f if line.strip()}
    runs = [l for l in proc.stdout.splitlines() if l.startswith("conformance on")]
    if not runs:
        sys.exit("no summary line from %s:\n%s" % (" ".join(cmd), proc.stdout))
    return passed, int(runs[-1].split(" of ")[1].split()[0])


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    exe, data = argv[1], argv[2]
    if not os.path.isdir(data):
        print("%s not found (install libonnx-testdata): skipped" % data)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        whole, ran_whole = run(exe, data, os.path.join(tmp, "all"), [])
        parts, ran = [], 0
        for k in range(SHARDS):
            passed, n = run(exe, data, os.path.join(tmp, "part%d" % k),
                            ["--sample", str(SHARDS), "--sample-offset", str(k)])
            ran += n
            parts.append(passed)
        bad = subprocess.run([exe, "--data", data, "--sample", str(SHARDS),
                              "--sample-offset", str(SHARDS)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True)
    errors = []
    if len(whole) < SHARDS * 2:
        errors.append("only %d tests matching %r passed: too few to split" % (len(whole), FILTER))
    if ran != ran_whole:
        errors.append("the shards ran %d tests, the whole run %d" % (ran, ran_whole))
    for i in range(SHARDS):
        if not parts[i]:
            errors.append("shard %d passed no test" % i)
        for j in range(i + 1, SHARDS):
            if parts[i] & parts[j]:
                errors.append("shards %d and %d both ran %s" % (i, j, sorted(parts[i] & parts[j])[:3]))
    union = set().union(*parts)
    if union != whole:
        errors.append("shards passed %d tests, the whole run %d (differ: %s)" % (
            len(union), len(whole), sorted(union ^ whole)[:5]))
    if bad.returncode != 2 or "--sample-offset" not in bad.stdout:
        errors.append("--sample-offset %d with --sample %d: exit %d, %r" % (
            SHARDS, SHARDS, bad.returncode, bad.stdout.strip()))
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print("%d shards: %d tests run, %d passed, as in one run" % (SHARDS, ran, len(whole)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
