#!/usr/bin/python3
"""Golden test: run clinfer-run on a model and compare with ONNX Runtime's outputs.

Usage: check-golden.py CLINFER_RUN MODEL GOLDEN_CASE_DIR [--threads N] [--keep DIR]
                       [--device DEVICE] [--no-fallback]
                       [--tolerance T]

GOLDEN_CASE_DIR holds manifest.json and output_<i>.npy, written by
scripts/make-goldens.py. The inputs are named in the manifest (a file in the
case directory, or one under tests/data/), checked against their sha256, or
described by a "generate" entry (seed, uniform range, shape, dtype) and made
here again with numpy, their sha256 checked too. An output with a "sample"
entry is stored as values at evenly spaced flat indices: clinfer's output is
compared at those indices (and its shape in full).

MODEL "fetched:KEY" is a real model of benchmarks/fetched-models.json in
~/.cache/clinfer/bench-models (scripts/fetch-bench-models.sh); when it has
not been fetched the test is skipped (exit 77) saying so.
Runs `CLINFER_RUN MODEL --input NAME=FILE --output-dir TMP`, then checks
  - exit status 0 and one `output <i> name=<name> ...` line per graph output,
    with the name, type and shape the manifest expects;
  - TMP/output_<i>.npy: same shape and dtype as the golden, and
    max|out - ref| <= T * max(1, max|ref|) (no NaN), T = 1e-4 unless --tolerance
    says otherwise (1e-3 for models with f16 weights, e.g. an OpenVINO IR
    converted with compress_to_fp16).
Prints one line per output with the max difference and the tolerance.
Exit status 0 when everything matches, 1 otherwise (2 on bad arguments).
Needs only numpy (Debian python3-numpy); never ONNX Runtime.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

TOLERANCE = 1e-4
SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FETCHED_DIR = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                           "clinfer", "bench-models")
LINE_RE = re.compile(r"^output (\d+) name=(\S*) type=(\S+) shape=(\S*) min=(\S+) max=(\S+) mean=(\S+)$")
TYPE_NAMES = {"float32": ("f32", "float32", "float"), "float16": ("f16", "float16"),
              "int64": ("i64", "int64"), "int32": ("i32", "int32"), "uint8": ("u8", "uint8"),
              "int8": ("i8", "int8"), "bool": ("bool",)}


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def compare(index, name, out, ref, tolerance=TOLERANCE):
    """Return (ok, message) for one output array."""
    if out.shape != ref.shape:
        return False, "output %d %s: shape %s, expected %s" % (index, name, out.shape, ref.shape)
    if out.dtype != ref.dtype:
        return False, "output %d %s: dtype %s, expected %s" % (index, name, out.dtype, ref.dtype)
    if ref.size == 0:
        return True, "output %d %s: empty, ok" % (index, name)
    ref64 = ref.astype(np.float64)
    out64 = out.astype(np.float64)
    tol = tolerance * max(1.0, float(np.max(np.abs(ref64))))
    bad_nan = np.isnan(out64) & ~np.isnan(ref64)
    if bad_nan.any():
        first = np.unravel_index(int(np.argmax(bad_nan)), out.shape)
        return False, "output %d %s: %d NaN values (first at %s)" % (
            index, name, int(bad_nan.sum()), tuple(int(i) for i in first))
    diff = np.abs(np.where(np.isnan(ref64), 0.0, out64 - ref64))
    worst = int(np.argmax(diff))
    max_diff = float(diff.reshape(-1)[worst])
    ok = max_diff <= tol
    msg = "output %d %s: max|diff|=%.3g tolerance=%.3g %s" % (
        index, name, max_diff, tol, "ok" if ok else "FAIL")
    if not ok:
        at = np.unravel_index(worst, out.shape)
        msg += " (at %s: got %.7g, expected %.7g; %d elements over)" % (
            tuple(int(i) for i in at), out64.reshape(-1)[worst], ref64.reshape(-1)[worst],
            int((diff > tol).sum()))
    return ok, msg


def generated_input(spec):
    """The input a manifest's "generate" entry describes (scripts/make-goldens.py
    makes the goldens' inputs with this too)."""
    rng = np.random.default_rng(spec["seed"])
    if spec["dtype"] in ("int64", "int32"):
        return rng.integers(spec["low"], spec["high"], size=spec["shape"]).astype(spec["dtype"])
    return rng.uniform(spec["low"], spec["high"], size=spec["shape"]).astype(spec["dtype"])


def sample_indices(size, count):
    """The flat indices a sampled golden keeps: @count evenly spaced."""
    return np.linspace(0, size - 1, count).round().astype(np.int64)


def sampled(out, spec):
    """@out at the flat indices of the manifest's "sample" entry."""
    return out.reshape(-1)[sample_indices(out.size, spec["sample"]["count"])]


def resolve_model(model):
    """MODEL, or the cached file of "fetched:KEY"; None when not fetched."""
    if not model.startswith("fetched:"):
        return model
    key = model.split(":", 1)[1]
    with open(os.path.join(ROOT, "benchmarks", "fetched-models.json")) as f:
        entry = json.load(f)["models"][key]
    path = os.path.join(FETCHED_DIR, entry["file"])
    return path if os.path.exists(path) else None


def check_lines(stdout, manifest):
    """Check the per-output summary lines of clinfer-run against the manifest."""
    errors = []
    lines = [l for l in stdout.splitlines() if l.startswith("output ")]
    if len(lines) != len(manifest["outputs"]):
        errors.append("expected %d 'output' lines, got %d" % (len(manifest["outputs"]), len(lines)))
    for line, spec in zip(lines, manifest["outputs"]):
        m = LINE_RE.match(line)
        if not m:
            errors.append("malformed line: %r" % line)
            continue
        index, name, type_name, shape = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        want_shape = "x".join(str(d) for d in spec["shape"])
        if index != spec["index"] or name != spec["name"] or shape != want_shape:
            errors.append("line %r: expected index %d name=%s shape=%s" % (
                line, spec["index"], spec["name"], want_shape))
        if type_name not in TYPE_NAMES.get(spec["dtype"], (spec["dtype"],)):
            errors.append("line %r: expected type %s" % (line, spec["dtype"]))
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clinfer_run")
    parser.add_argument("model")
    parser.add_argument("golden_dir")
    parser.add_argument("--threads", type=int, default=None, help="passed to clinfer-run")
    parser.add_argument("--keep", metavar="DIR", help="write clinfer's outputs here and keep them")
    parser.add_argument("--device", help="passed to clinfer-run (e.g. GPU)")
    parser.add_argument("--no-fallback", action="store_true",
                        help="passed to clinfer-run: every node must run on the device")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help="relative tolerance T in max|out - ref| <= T * max(1, max|ref|) "
                        "(default %(default)g)")
    args = parser.parse_args()

    try:
        with open(os.path.join(args.golden_dir, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as exc:
        print("check-golden: cannot read manifest: %s" % exc)
        return 2
    model = resolve_model(args.model)
    if model is None:
        print("check-golden: %s not fetched: run scripts/fetch-bench-models.sh (skipped)"
              % args.model)
        return SKIP
    cmd = [args.clinfer_run, model]
    gen_dir = tempfile.TemporaryDirectory(prefix="clinfer-golden-in-")
    for spec in manifest["inputs"]:
        if "generate" in spec:
            data = generated_input(spec["generate"])
            if hashlib.sha256(data.tobytes()).hexdigest() != spec["sha256"]:
                print("check-golden: input %s made from its seed differs from the one the "
                      "goldens were made with (numpy %s); rerun scripts/make-goldens.py"
                      % (spec["name"], np.__version__))
                return 1
            path = os.path.join(gen_dir.name, "input_%d.npy" % len(cmd))
            np.save(path, data)
            cmd += ["--input", "%s=%s" % (spec["name"], path)]
            continue
        path = os.path.normpath(os.path.join(args.golden_dir, spec["file"]))
        if not os.path.exists(path):
            print("check-golden: input %s not found" % path)
            return 1
        if spec.get("sha256") and sha256(path) != spec["sha256"]:
            print("check-golden: %s changed since the goldens were made; "
                  "rerun scripts/make-goldens.py (see tests/models/README.md)" % path)
            return 1
        cmd += ["--input", "%s=%s" % (spec["name"], path)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    if args.device:
        cmd += ["--device", args.device]
    if args.no_fallback:
        cmd += ["--no-fallback"]

    with tempfile.TemporaryDirectory(prefix="clinfer-golden-") as tmp:
        out_dir = args.keep or tmp
        os.makedirs(out_dir, exist_ok=True)
        cmd += ["--output-dir", out_dir]
        print("$ " + " ".join(cmd), flush=True)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        sys.stdout.write(proc.stdout)
        sys.stdout.write(proc.stderr)
        if proc.returncode != 0:
            print("check-golden: clinfer-run exited with status %d" % proc.returncode)
            return 1
        ok = True
        for err in check_lines(proc.stdout, manifest):
            print("check-golden: " + err)
            ok = False
        for spec in manifest["outputs"]:
            ref = np.load(os.path.join(args.golden_dir, spec["file"]))
            path = os.path.join(out_dir, "output_%d.npy" % spec["index"])
            try:
                out = np.load(path)
            except (OSError, ValueError) as exc:
                print("output %d %s: cannot load %s: %s" % (spec["index"], spec["name"], path, exc))
                ok = False
                continue
            if "sample" in spec:
                if list(out.shape) != spec["shape"]:
                    print("output %d %s: shape %s, expected %s" % (
                        spec["index"], spec["name"], out.shape, tuple(spec["shape"])))
                    ok = False
                    continue
                out = sampled(out, spec)
            good, msg = compare(spec["index"], spec["name"], out, ref, args.tolerance)
            print(msg)
            ok &= good
    gen_dir.cleanup()
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
