#!/usr/bin/env python3
"""Read+compile time and peak RSS of clinfer, ONNX Runtime and OpenVINO.

Usage (from the repository root):
    python3 benchmarks/footprint.py [--clinfer-benchmark PATH] [--models front,back,...]

Each runtime runs in a fresh process per model: read and compile the model
(fixed input shape), run 10 inferences, report the read+compile wall time
and the process's peak resident set size (ru_maxrss; for the Python peers it
includes the interpreter and the imported runtime). Models and shapes are
those of compare.py (BlazeFace plus the package models that are installed).
"""

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (same model table)

PEER = r'''
import resource, sys, time
import numpy as np
runtime, model, shape = sys.argv[1], sys.argv[2], [int(d) for d in sys.argv[3].split("x")]
data = np.random.default_rng(1).uniform(-1, 1, size=shape).astype(np.float32)
t0 = time.perf_counter()
if runtime == "ORT":
    import onnxruntime as ort
    opts = ort.SessionOptions(); opts.intra_op_num_threads = 1; opts.log_severity_level = 3
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    run = lambda: sess.run(None, {name: data})
else:
    import openvino as ov
    core = ov.Core(); m = core.read_model(model)
    m.reshape({m.inputs[0].get_any_name(): ov.PartialShape(shape)})
    c = core.compile_model(m, "CPU", {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": "f32"})
    req = c.create_infer_request()
    run = lambda: req.infer({0: data})
ms = (time.perf_counter() - t0) * 1e3
for _ in range(10):
    run()
print("compile_ms=%.1f maxrss_kb=%d" % (ms, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
'''


def clinfer(binary, model, shape):
    cmd = ["/usr/bin/time", "-f", "maxrss_kb=%M", binary, model, "--threads", "1",
           "--iterations", "10", "--warmup", "1"]
    if shape:
        cmd += ["--shape", "x=" + "x".join(map(str, shape))]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True).stdout
    get = lambda key: float(re.search(key + r"=([0-9.]+)", out).group(1))
    return get("read_ms") + get("compile_ms"), get("maxrss_kb")


def peer(runtime, model, shape):
    out = subprocess.run([sys.executable, "-c", PEER, runtime, model, "x".join(map(str, shape))],
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    m = re.search(r"compile_ms=([0-9.]+) maxrss_kb=([0-9]+)", out)
    return (float(m.group(1)), float(m.group(2))) if m else (float("nan"), float("nan"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clinfer-benchmark", default="build/engine/tools/clinfer-benchmark")
    parser.add_argument("--models", default="front,back," + ",".join(compare.PACKAGE_MODELS))
    args = parser.parse_args()
    os.chdir(compare.ROOT)
    print("| model | clinfer read+compile ms | ORT ms | OpenVINO ms | clinfer peak RSS MiB | ORT MiB | OpenVINO MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key in args.models.split(","):
        if key in compare.MODELS:
            model, shape = compare.MODELS[key], None
        else:
            found = compare.package_model(key)
            if found is None:
                continue
            model, shape = found
        fixed = shape or (1, int(re.search(r"_(\d+)x", model).group(1)),
                          int(re.search(r"_(\d+)x", model).group(1)), 3)
        c = clinfer(args.clinfer_benchmark, model, shape)
        o = peer("ORT", model, fixed)
        v = peer("OpenVINO", model, fixed)
        print("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            key, c[0], o[0], v[0], c[1] / 1024, o[1] / 1024, v[1] / 1024), flush=True)


if __name__ == "__main__":
    main()
