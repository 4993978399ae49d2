#!/usr/bin/python3
"""--custom-lib in the tools (suite tools): clinfer-run on the example model
against the numpy reference, clinfer-benchmark, and clinfer-convert to IR
then clinfer-run on the IR. TAP output.

Usage: test-custom-cli.py BUILD_ROOT SOURCE_ROOT LIBRARY
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

n = 0
failed = 0


def check(ok, what, detail=""):
    global n, failed
    n += 1
    failed += 0 if ok else 1
    print("%s %d - %s%s" % ("ok" if ok else "not ok", n, what,
                            "" if ok else " # " + detail.replace("\n", " ")))
    sys.stdout.flush()


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def compare(out_dir, data, what):
    scores = np.load(os.path.join(out_dir, "output_0.npy"))
    indices = np.load(os.path.join(out_dir, "output_1.npy"))
    want_s = np.load(os.path.join(data, "example-scores.npy"))
    want_i = np.load(os.path.join(data, "example-indices.npy"))
    check(scores.shape == want_s.shape
          and np.allclose(scores, want_s, rtol=1e-5, atol=1e-5),
          what + ": scores match numpy", "%s vs %s" % (scores, want_s))
    check(indices.dtype == np.int64 and np.array_equal(indices, want_i),
          what + ": indices match numpy", "%s vs %s" % (indices, want_i))


def run_and_compare(tools, model, lib, x, out_dir, data, what):
    rc, out, err = run([os.path.join(tools, "clinfer-run"), model,
                        "--custom-lib", lib, "--input", x,
                        "--output-dir", out_dir])
    check(rc == 0, what + ": clinfer-run --custom-lib exits 0", err)
    if rc == 0:
        compare(out_dir, data, what)
    else:
        check(False, what + ": scores")
        check(False, what + ": indices")


def main():
    build, src, lib = sys.argv[1:4]
    tools = os.path.join(build, "engine", "tools")
    model = os.path.join(src, "examples", "custom-op", "example.onnx")
    data = os.path.join(src, "tests", "custom-op", "data")
    x = "x=" + os.path.join(data, "example-x.npy")
    print("1..9")
    with tempfile.TemporaryDirectory() as tmp:
        run_and_compare(tools, model, lib, x, os.path.join(tmp, "run"), data,
                        "clinfer-run")
        rc, out, err = run([os.path.join(tools, "clinfer-benchmark"), model,
                            "--custom-lib", lib, "--iterations", "5"])
        check(rc == 0 and "median_ms=" in out,
              "clinfer-benchmark --custom-lib runs", err)
        xml = os.path.join(tmp, "example.xml")
        rc, out, err = run([os.path.join(tools, "clinfer-convert"), model,
                            "--custom-lib", lib, "--output", xml])
        check(rc == 0 and os.path.exists(xml),
              "clinfer-convert --custom-lib writes the IR", err)
        run_and_compare(tools, xml, lib, x, os.path.join(tmp, "ir"), data,
                        "converted IR")
        rc, out, err = run([os.path.join(tools, "clinfer-run"), model,
                            "--input", x])
        check(rc == 1 and "com.example.ScaledTanh" in err
              and "custom-lib" in err and len(err.strip().splitlines()) == 1,
              "without --custom-lib: one line naming the unknown op", err)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
