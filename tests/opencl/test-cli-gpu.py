#!/usr/bin/python3
"""The CLIs with the GPU device: --list-devices, --device GPU with and
without fallback, --config-file, and the benchmark's device line.

Usage: test-cli-gpu.py CLINFER_RUN CLINFER_BENCHMARK SOURCE_ROOT CONFORMANCE_DATA
Exit status 0 on success, 1 on failure, 77 (skipped) without an OpenCL device.
"""

import os
import re
import subprocess
import sys
import tempfile

import numpy as np

DEVICE_RE = re.compile(r'^(CPU|GPU\.\d+) index=(-|\d+) type=(\S+) fp16=(yes|no) '
                       r'platform="[^"]*" driver="[^"]*" device="[^"]*"$')


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=env)
    return p.returncode, p.stdout, p.stderr


def main(argv):
    run_exe, bench_exe, root, data = argv[1:5]
    failures = []

    def check(ok, what, detail=""):
        print("%s %s" % ("ok" if ok else "FAIL", what))
        if not ok:
            print("   " + detail.replace("\n", "\n   "))
            failures.append(what)

    rc, out, err = run([run_exe, "--list-devices"])
    lines = out.splitlines()
    check(rc == 0 and lines and lines[0].startswith("CPU index=- "),
          "--list-devices: the native CPU first", out + err)
    check(all(DEVICE_RE.match(l) for l in lines), "--list-devices: line format", out)
    gpus = [l for l in lines if l.startswith("GPU.")]
    if not gpus:
        print("no OpenCL device: skipped")
        return 77
    check(all(l.startswith("GPU.%d index=%d " % (i, i)) for i, l in enumerate(gpus)),
          "--list-devices: GPU.N numbered in order", out)

    model = os.path.join(root, "models", "blazeface",
                         "face_detection_front_128x128_barracuda.onnx")
    rc, out, err = run([bench_exe, model, "--device", "GPU", "--no-fallback",
                        "--iterations", "2", "--warmup", "0"])
    check(rc == 0 and re.search(r"^device=GPU\.\d+$", out, re.M),
          "clinfer-benchmark --device GPU --no-fallback", out + err)
    env = dict(os.environ, CLINFER_OPENCL_DISABLE_OPS="Transpose")
    rc, out, err = run([bench_exe, model, "--device", "GPU", "--no-fallback",
                        "--iterations", "1", "--warmup", "0"], env)
    check(rc == 1 and "Transpose" in err and "fallback" in err and len(err.splitlines()) == 1,
          "--no-fallback names the node the GPU cannot run (exit 1, one line)", err)
    rc, out, err = run([bench_exe, model, "--device", "GPU", "--iterations", "1",
                        "--warmup", "0"], env)
    check(rc == 0, "the same with fallback runs", err)

    relu = os.path.join(data, "node", "test_relu", "model.onnx")
    xml = os.path.join(root, "tests", "opencl", "data", "scaled-relu.xml")
    if os.path.exists(relu):
        with tempfile.TemporaryDirectory(prefix="clinfer-cli-gpu-") as tmp:
            x = np.linspace(-1.0, 1.0, 60, dtype=np.float32).reshape(3, 4, 5)
            np.save(os.path.join(tmp, "x.npy"), x)
            rc, out, err = run([run_exe, relu, "--device", "GPU", "--no-fallback",
                                "--config-file", xml, "--input",
                                "x=" + os.path.join(tmp, "x.npy"), "--output-dir", tmp])
            y = np.load(os.path.join(tmp, "output_0.npy")) if rc == 0 else None
            check(rc == 0 and y is not None and np.allclose(y, np.maximum(x, 0) * 2),
                  "clinfer-run --config-file (the documented scaled Relu)", out + err)
            rc, out, err = run([run_exe, relu, "--device", "GPU", "--config-file",
                                os.path.join(tmp, "missing.xml"), "--input",
                                "x=" + os.path.join(tmp, "x.npy")])
            check(rc == 1 and "missing.xml" in err and len(err.splitlines()) == 1,
                  "--config-file with a missing file: one-line error naming it", err)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
