#!/usr/bin/env python3
"""Regenerate the golden outputs in tests/models/golden/ with ONNX Runtime.

Usage (from anywhere; paths are relative to the repository root):
    python3 -m pip install onnxruntime numpy    # or: scripts/install-deps.sh --python
    python3 scripts/make-goldens.py [--check]

For each BlazeFace model in models/blazeface/ and each input case it writes
    tests/models/golden/<model-stem>/<case>/
        manifest.json    model, inputs (name, file, sha256), outputs (name, shape, dtype)
        input.npy        only for generated inputs (case "random")
        output_<i>.npy   ONNX Runtime's outputs, in graph output order
Cases:
    astronaut  tests/data/astronaut-<size>.npy (made by scripts/preprocess-image.py),
               referenced from the manifest rather than copied, to keep the tree small
    random     uniform [-1, 1) float32, numpy default_rng(RANDOM_SEED)

And for each real model of benchmarks/fetched-models.json that
scripts/fetch-bench-models.sh has fetched, a "random" case in
tests/models/golden/<key>/random whose inputs are not stored but generated
(the manifest's "generate": seed, distribution, range, shape; check-golden.py
makes them again and checks their sha256), and whose outputs of more than
SAMPLE elements are stored as SAMPLE values at evenly spaced flat indices
(the manifest's "sample") plus their mean, to keep the tree small.

And the same "random" case for the single-op models
tests/data/onnx/recurrent-*.onnx (scripts/make-onnx-test-models.py: the
variants of RNN, GRU and LSTM), in tests/models/golden/op-<stem>/random.

ONNX Runtime runs on the CPU provider with graph optimisations disabled and one
thread, so the reference is each ONNX op evaluated as written. With --check it
only compares a fresh run with the stored goldens and writes nothing.

Needs the pip package onnxruntime on the python3 that runs this script; the
tests that read the goldens (tests/models/check-golden.py) need only numpy.
"""

import argparse
import glob
import hashlib
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python3")

try:
    import onnxruntime as ort
except ImportError:
    # scripts/install-deps.sh --python falls back to .venv under PEP 668.
    if os.path.exists(VENV_PYTHON) and os.path.realpath(sys.prefix) != os.path.dirname(os.path.dirname(VENV_PYTHON)) \
            and not os.environ.get("CLINFER_GOLDENS_REEXEC"):
        os.environ["CLINFER_GOLDENS_REEXEC"] = "1"
        os.execv(VENV_PYTHON, [VENV_PYTHON] + sys.argv)
    sys.exit("make-goldens: needs onnxruntime for %s (python3 -m pip install onnxruntime, "
             "or scripts/install-deps.sh --python)" % sys.executable)

GOLDEN_DIR = os.path.join("tests", "models", "golden")
RANDOM_SEED = 20240601
MODELS = [
    ("models/blazeface/face_detection_front_128x128_barracuda.onnx", "tests/data/astronaut-128.npy"),
    ("models/blazeface/face_detection_back_256x256_barracuda.onnx", "tests/data/astronaut-256.npy"),
]
TOLERANCE = 1e-4  # same rule as tests/models/check-golden.py
SAMPLE = 4096
FETCHED_JSON = os.path.join("benchmarks", "fetched-models.json")
# Single-op models of scripts/make-onnx-test-models.py with goldens of their own
OP_MODELS = os.path.join("tests", "data", "onnx")


def load_check_golden():
    """tests/models/check-golden.py as a module: the goldens are made with
    the functions that read them (generated inputs, sample indices, the
    fetched models' folder)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "check_golden", os.path.join(ROOT, "tests", "models", "check-golden.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_golden = load_check_golden()


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def session(model_path):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3  # tf2onnx leaves unused initialisers: ORT warns
    return ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])


def random_input(shape):
    rng = np.random.default_rng(RANDOM_SEED)
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def within_tolerance(out, ref):
    if out.shape != ref.shape or out.dtype != ref.dtype:
        return False, float("inf")
    diff = float(np.max(np.abs(out.astype(np.float64) - ref))) if ref.size else 0.0
    tol = TOLERANCE * max(1.0, float(np.max(np.abs(ref))) if ref.size else 0.0)
    return diff <= tol, diff


def generator_info(seed=None):
    """The manifest's "generator": what made the goldens."""
    return {
        "script": "scripts/make-goldens.py",
        "onnxruntime": ort.__version__,
        "numpy": np.__version__,
        "graph_optimization_level": "ORT_DISABLE_ALL",
        "random_seed": seed,
    }


def run_case(sess, model_rel, case, input_rel, input_array, check):
    case_dir = os.path.join(GOLDEN_DIR, os.path.splitext(os.path.basename(model_rel))[0], case)
    inp = sess.get_inputs()[0]
    outputs = sess.run(None, {inp.name: input_array})
    ok = True
    if check:
        manifest = json.load(open(os.path.join(case_dir, "manifest.json")))
        for i, out in enumerate(outputs):
            ref = np.load(os.path.join(case_dir, manifest["outputs"][i]["file"]))
            good, diff = within_tolerance(out, ref)
            ok &= good
            print("  %-45s %-10s output %d max|diff|=%.3g %s" % (
                os.path.basename(model_rel), case, i, diff, "ok" if good else "MISMATCH"))
        return ok
    os.makedirs(case_dir, exist_ok=True)
    if input_rel is None:
        np.save(os.path.join(case_dir, "input.npy"), input_array)
        input_file = "input.npy"
    else:
        input_file = os.path.relpath(input_rel, case_dir)
    manifest = {
        "model": os.path.relpath(model_rel, case_dir),
        "case": case,
        "inputs": [{
            "name": inp.name,
            "file": input_file,
            "sha256": sha256(os.path.join(case_dir, input_file)),
            "shape": list(input_array.shape),
            "dtype": str(input_array.dtype),
        }],
        "outputs": [],
        "tolerance": "max|out - ref| <= %g * max(1, max|ref|)" % TOLERANCE,
        "generator": generator_info(RANDOM_SEED if input_rel is None else None),
    }
    for i, (meta, out) in enumerate(zip(sess.get_outputs(), outputs)):
        name = "output_%d.npy" % i
        np.save(os.path.join(case_dir, name), out)
        manifest["outputs"].append({"index": i, "name": meta.name, "file": name,
                                    "shape": list(out.shape), "dtype": str(out.dtype)})
        print("  %-45s %-10s output %d %-13s %-12s min=%.4g max=%.4g mean=%.4g" % (
            os.path.basename(model_rel), case, i, meta.name,
            "x".join(str(d) for d in out.shape), out.min(), out.max(), out.mean()))
    with open(os.path.join(case_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    scores = np.concatenate([outputs[0].reshape(-1), outputs[1].reshape(-1)])
    print("  %-45s %-10s top face score (sigmoid) = %.4f" % (
        os.path.basename(model_rel), case, 1.0 / (1.0 + np.exp(-float(scores.max())))))
    return ok


def run_fetched(key, entry, check):
    """The "random" case of fetched model @key."""
    model = check_golden.resolve_model("fetched:" + key)
    if model is None:
        print("  %-45s skipped: not fetched (scripts/fetch-bench-models.sh)" % key)
        return True
    return run_generated(key, model, "fetched:" + key, entry,
                         os.path.join(GOLDEN_DIR, key, "random"), check)


def run_generated(key, model, model_ref, entry, case_dir, check):
    """The "random" case of @model (@model_ref in the manifest): inputs
    generated from their manifest entry, large outputs sampled."""
    sess = session(model)
    feeds, inputs = {}, []
    for i, inp in enumerate(sess.get_inputs()):
        shape = entry["shapes"].get(inp.name, inp.shape)
        is_int = inp.type in ("tensor(int64)", "tensor(int32)")
        low, high = entry["ranges"].get(inp.name, (0, 255) if is_int else (-1.0, 1.0))
        spec = {"seed": RANDOM_SEED + i, "distribution": "uniform", "low": low, "high": high,
                "shape": list(shape),
                "dtype": {"tensor(int64)": "int64", "tensor(int32)": "int32"}.get(inp.type, "float32")}
        data = check_golden.generated_input(spec)
        feeds[inp.name] = data
        inputs.append({"name": inp.name, "generate": spec,
                       "sha256": hashlib.sha256(data.tobytes()).hexdigest(),
                       "shape": list(data.shape), "dtype": str(data.dtype)})
    outputs = sess.run(None, feeds)
    if check:
        manifest = json.load(open(os.path.join(case_dir, "manifest.json")))
        ok = True
        for i, out in enumerate(outputs):
            spec = manifest["outputs"][i]
            ref = np.load(os.path.join(case_dir, spec["file"]))
            flat = out.reshape(-1)[check_golden.sample_indices(out.size, SAMPLE)] if "sample" in spec else out
            good, diff = within_tolerance(flat, ref)
            ok &= good
            print("  %-45s random     output %d max|diff|=%.3g %s" % (
                key, i, diff, "ok" if good else "MISMATCH"))
        return ok
    os.makedirs(case_dir, exist_ok=True)
    manifest = {
        "model": model_ref,
        "case": "random",
        "inputs": inputs,
        "outputs": [],
        "tolerance": "max|out - ref| <= %g * max(1, max|ref|)" % TOLERANCE,
        "generator": generator_info(),
    }
    for i, (meta, out) in enumerate(zip(sess.get_outputs(), outputs)):
        name = "output_%d.npy" % i
        spec = {"index": i, "name": meta.name, "file": name, "shape": list(out.shape),
                "dtype": str(out.dtype)}
        if out.size > SAMPLE:
            spec["sample"] = {"count": SAMPLE, "indices": "linspace(0, size - 1, count), rounded",
                              "mean": float(out.astype(np.float64).mean()),
                              "max_abs": float(np.abs(out.astype(np.float64)).max())}
            np.save(os.path.join(case_dir, name), out.reshape(-1)[check_golden.sample_indices(out.size, SAMPLE)])
        else:
            np.save(os.path.join(case_dir, name), out)
        manifest["outputs"].append(spec)
        print("  %-45s random     output %d %-13s %-12s min=%.4g max=%.4g mean=%.4g%s" % (
            key, i, meta.name, "x".join(str(d) for d in out.shape), out.min(), out.max(),
            out.mean(), " (sampled)" if "sample" in spec else ""))
    with open(os.path.join(case_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the stored goldens instead of writing them")
    args = parser.parse_args()
    os.chdir(ROOT)
    print("onnxruntime %s, numpy %s, python %s" % (ort.__version__, np.__version__, sys.executable))
    ok = True
    for model_rel, astronaut_rel in MODELS:
        sess = session(model_rel)
        inp = sess.get_inputs()[0]
        if not os.path.exists(astronaut_rel):
            sys.exit("make-goldens: %s missing; run scripts/preprocess-image.py first" % astronaut_rel)
        astronaut = np.load(astronaut_rel)
        if list(astronaut.shape) != list(inp.shape):
            sys.exit("make-goldens: %s has shape %s, %s wants %s" % (
                astronaut_rel, astronaut.shape, model_rel, inp.shape))
        ok &= run_case(sess, model_rel, "astronaut", astronaut_rel, astronaut, args.check)
        ok &= run_case(sess, model_rel, "random", None, random_input(inp.shape), args.check)
    with open(FETCHED_JSON) as f:
        for key, entry in json.load(f)["models"].items():
            ok &= run_fetched(key, entry, args.check)
    for model in sorted(glob.glob(os.path.join(OP_MODELS, "recurrent-*.onnx"))):
        stem = os.path.splitext(os.path.basename(model))[0]
        case_dir = os.path.join(GOLDEN_DIR, "op-" + stem, "random")
        ok &= run_generated(stem, model, os.path.relpath(model, case_dir),
                            {"shapes": {}, "ranges": {}}, case_dir, args.check)
    if not args.check:
        total = 0
        for dirpath, _, files in os.walk(GOLDEN_DIR):
            total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files)
        print("wrote %s (%.1f KiB)" % (GOLDEN_DIR, total / 1024.0))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
