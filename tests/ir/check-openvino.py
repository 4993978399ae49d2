#!/usr/bin/env python3
"""IR check: clinfer-convert writes an IR that OpenVINO (or clinfer) runs with the golden outputs.

Usage: check-openvino.py CLINFER_CONVERT MODEL GOLDEN_CASE_DIR [--tolerance T]
                         [--keep DIR] [--clinfer-run PATH] [-- CONVERT_ARGS...]

Runs `CLINFER_CONVERT MODEL --output TMP/model.xml CONVERT_ARGS...`, then
  - by default reads the result with OpenVINO's Python runtime
    (openvino.Core().read_model), compiles it for OpenVINO's CPU plugin and
    runs it on the inputs named in GOLDEN_CASE_DIR/manifest.json;
  - with --clinfer-run, runs that clinfer-run on it instead (the round trip
    MODEL -> IR -> clinfer), which needs no OpenVINO;
and checks every output against the ONNX Runtime golden: same name (in graph
output order), shape and dtype, and max|out - ref| <= T * max(1, max|ref|)
(T = 1e-4 unless --tolerance).

With CLINFER_IR_VENV set (meson does), the OpenVINO check runs in the
virtual environment of tests/ir/ir_venv.py, created and filled with pip on
the first run and reused after.

Exit status: 0 pass, 1 fail, 2 bad arguments, 77 skipped (no `openvino` or
`numpy`, and no virtual environment could be made with them, e.g. offline:
the test then reports skipped, never passed).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import ir_venv  # noqa: E402

SKIP = 77
if "--clinfer-run" not in sys.argv:
    ir_venv.enter("check-openvino")

try:
    import numpy as np
except ImportError as exc:
    print("check-openvino: skipped: %s" % exc)
    sys.exit(SKIP)
ov = None


def compare(index, name, out, ref, tolerance):
    if out.shape != ref.shape or out.dtype != ref.dtype:
        return False, "output %d %s: %s %s, expected %s %s" % (
            index, name, out.dtype, out.shape, ref.dtype, ref.shape)
    if ref.size == 0:
        return True, "output %d %s: empty, ok" % (index, name)
    tol = tolerance * max(1.0, float(np.max(np.abs(ref.astype(np.float64)))))
    diff = float(np.max(np.abs(out.astype(np.float64) - ref.astype(np.float64))))
    ok = diff <= tol and not np.isnan(diff)
    return ok, "output %d %s: max|diff|=%.3g tolerance=%.3g %s" % (
        index, name, diff, tol, "ok" if ok else "FAIL")


def run_clinfer(clinfer_run, xml, manifest, golden_dir, tolerance, tmp):
    cmd = [clinfer_run, xml, "--output-dir", tmp]
    for spec in manifest["inputs"]:
        cmd += ["--input", "%s=%s" % (spec["name"], os.path.normpath(
            os.path.join(golden_dir, spec["file"])))]
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        print("check-openvino: clinfer-run exited with status %d" % proc.returncode)
        return False
    ok = True
    for spec in manifest["outputs"]:
        if " name=%s " % spec["name"] not in proc.stdout:
            print("output %d: no line naming %s" % (spec["index"], spec["name"]))
            ok = False
        out = np.load(os.path.join(tmp, "output_%d.npy" % spec["index"]))
        ref = np.load(os.path.join(golden_dir, spec["file"]))
        good, msg = compare(spec["index"], spec["name"], out, ref, tolerance)
        print(msg)
        ok &= good
    return ok


def run_openvino(xml, manifest, golden_dir, tolerance):
    core = ov.Core()
    model = core.read_model(xml)
    compiled = core.compile_model(model, "CPU", ir_venv.F32)
    feeds = {}
    for spec in manifest["inputs"]:
        feeds[spec["name"]] = np.load(os.path.normpath(os.path.join(golden_dir, spec["file"])))
    results = compiled(feeds)
    outputs = compiled.outputs
    if len(outputs) != len(manifest["outputs"]):
        print("check-openvino: OpenVINO sees %d outputs, expected %d" % (
            len(outputs), len(manifest["outputs"])))
        return False
    ok = True
    for port, spec in zip(outputs, manifest["outputs"]):
        if spec["name"] not in port.get_names():
            print("output %d: OpenVINO names it %s, expected %s" % (
                spec["index"], sorted(port.get_names()), spec["name"]))
            ok = False
        ref = np.load(os.path.join(golden_dir, spec["file"]))
        good, msg = compare(spec["index"], spec["name"], np.asarray(results[port]), ref, tolerance)
        print(msg)
        ok &= good
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clinfer_convert")
    parser.add_argument("model")
    parser.add_argument("golden_dir")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--keep", metavar="DIR", help="write the IR here and keep it")
    parser.add_argument("--clinfer-run", metavar="PATH",
                        help="run the IR with this clinfer-run instead of OpenVINO")
    argv = sys.argv[1:]
    convert_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.convert_args = convert_args
    try:
        with open(os.path.join(args.golden_dir, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as exc:
        print("check-openvino: cannot read manifest: %s" % exc)
        return 2
    if not args.clinfer_run:
        global ov
        try:
            import openvino
        except ImportError as exc:
            print("check-openvino: skipped: %s (python3 -m pip install openvino)" % exc)
            return SKIP
        ov = openvino
        print("OpenVINO %s" % ov.__version__)
    with tempfile.TemporaryDirectory(prefix="clinfer-ov-") as tmp:
        out_dir = args.keep or tmp
        os.makedirs(out_dir, exist_ok=True)
        xml = os.path.join(out_dir, "model.xml")
        cmd = [args.clinfer_convert, args.model, "--output", xml] + args.convert_args
        print("$ " + " ".join(cmd), flush=True)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0:
            print("check-openvino: clinfer-convert exited with status %d" % proc.returncode)
            return 1
        if args.clinfer_run:
            ok = run_clinfer(args.clinfer_run, xml, manifest, args.golden_dir, args.tolerance, out_dir)
        else:
            ok = run_openvino(xml, manifest, args.golden_dir, args.tolerance)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
