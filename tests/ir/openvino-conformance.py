#!/usr/bin/env python3
"""ONNX backend tests through OpenVINO's converter: ONNX -> OpenVINO IR -> clinfer-run.

Usage: openvino-conformance.py CLINFER_RUN DATA_DIR EXPECTED_LIST
           [--sample N] [--weights f32,f16] [--only SUITE/TEST...]
           [--write-list FILE] [--keep DIR] [-v]

For every test folder DATA_DIR/SUITE/TEST with a model.onnx (Debian
libonnx-testdata), OpenVINO's own converter (openvino.convert_model) reads
the model and openvino.save_model writes it as IR twice: with f32 weights
(compress_to_fp16=False) and with f16 weights (compress_to_fp16=True).
clinfer-run then runs each IR on every test_data_set_*/input_N.pb (as
.npy files, one thread) and each output must match output_N.pb: same shape
and element type, floats within 1e-3 * max(1, max|ref|) with NaN where the
reference has NaN, other types exactly. Outputs are matched by name, inputs
by name or, where the converter renamed or dropped one, by position.

Counts per weight type: converted, refused by OpenVINO's converter, passed,
failed, runner-only (bfloat16, string, sequence or optional values, which
cannot travel through .npy), and wrong in OpenVINO too (a mismatch that
OpenVINO's own CPU plugin shows on the same IR: the conversion's fault).
EXPECTED_LIST holds lines "f32 SUITE/TEST" or "f16 SUITE/TEST" (#
comments): the check fails when a listed test does not pass; passing tests
that are not listed are printed as "newly passing". --write-list writes the
passing set in that format (regenerating the list).
--sample N keeps every Nth test (and only those lines of the list).

With CLINFER_IR_VENV set (meson does) it runs in the virtual environment of
tests/ir/ir_venv.py. Exit status: 0 pass, 1 fail, 2 bad arguments, 77
skipped (no data folder, or no openvino/onnx/numpy could be had).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import ir_venv  # noqa: E402

SKIP = 77
ir_venv.enter("openvino-conformance")
try:
    import numpy as np
    import onnx
    import openvino as ov
    from onnx import numpy_helper
except ImportError as exc:
    print("openvino-conformance: skipped: %s (python3 -m pip install -r %s)" % (
        exc, ir_venv.REQUIREMENTS))
    sys.exit(SKIP)

WEIGHTS = ("f32", "f16")
NPY_UNSUPPORTED = {onnx.TensorProto.BFLOAT16, onnx.TensorProto.STRING}


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def numbered(folder, prefix):
    out = []
    while os.path.exists(os.path.join(folder, "%s_%d.pb" % (prefix, len(out)))):
        out.append(load_pb(os.path.join(folder, "%s_%d.pb" % (prefix, len(out)))))
    return out


def close(got, ref):
    """None when got matches ref, else why not."""
    if got.shape != ref.shape:
        return "shape %s, expected %s" % (got.shape, ref.shape)
    if got.dtype != ref.dtype:
        return "type %s, expected %s" % (got.dtype, ref.dtype)
    if ref.size == 0:
        return None
    if ref.dtype.kind != "f":
        return None if np.array_equal(got, ref) else "values differ"
    g, r = got.astype(np.float64), ref.astype(np.float64)
    nan = np.isnan(r)
    if not np.array_equal(np.isnan(g), nan):
        return "NaN where the reference has none, or the other way"
    finite = ~nan & np.isfinite(r)
    if not np.array_equal(g[~finite & ~nan], r[~finite & ~nan]):
        return "infinities differ"
    if not finite.any():
        return None
    tol = 1e-3 * max(1.0, float(np.max(np.abs(r[finite]))))
    diff = float(np.max(np.abs(g[finite] - r[finite])))
    if not diff <= tol:
        return "max|diff| %.3g > %.3g" % (diff, tol)
    return None


def run_ir(clinfer_run, xml, test_dir, input_names, output_names, tmp):
    """None on pass, 'runner-only', or a failure reason."""
    sets = sorted(d for d in os.listdir(test_dir) if d.startswith("test_data_set_"))
    if not sets:
        return "no test_data_set_* folder"
    for s in sets:
        folder = os.path.join(test_dir, s)
        inputs, outputs = numbered(folder, "input"), numbered(folder, "output")
        if any(t.data_type in NPY_UNSUPPORTED for t in inputs + outputs):
            return "runner-only"
        out_dir = os.path.join(tmp, "out")
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)
        cmd = [clinfer_run, xml, "--threads", "1", "--output-dir", out_dir]
        for i, t in enumerate(inputs):
            if input_names[i] is None:
                continue
            path = os.path.join(tmp, "in_%d.npy" % i)
            np.save(path, numpy_helper.to_array(t))
            cmd += ["--input", "%s=%s" % (input_names[i], path)]
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, timeout=120)
        except subprocess.TimeoutExpired:
            return "clinfer-run took over 120 s"
        if proc.returncode != 0 and ("model expects bf16" in proc.stderr
                                     or "has no element type bf16" in proc.stderr):
            return "runner-only"  # an IR tensor is bf16 (ONNX float cast to it)
        if proc.returncode != 0:
            return "clinfer-run exit %d: %s" % (proc.returncode,
                                               proc.stderr.strip()[-300:].replace("\n", " | "))
        index = {}
        for line in proc.stdout.splitlines():
            parts = line.split()
            if len(parts) > 2 and parts[0] == "output" and parts[2].startswith("name="):
                index[parts[2][5:]] = int(parts[1])
        for i, t in enumerate(outputs):
            name = output_names[i] if i < len(output_names) else None
            k = index.get(name, i)
            path = os.path.join(out_dir, "output_%d.npy" % k)
            if not os.path.exists(path):
                return "%s: no output %d (%s)" % (s, i, name)
            why = close(np.load(path), numpy_helper.to_array(t))
            if why:
                return "%s output %d (%s): %s" % (s, i, name, why)
    return None


def ir_input_names(onnx_names, ov_model):
    """The IR input fed by each ONNX input (None: the converter dropped it).

    OpenVINO's converter keeps the ONNX input names and order, except that
    it drops inputs nothing reads (an empty optional axes input) and that a
    Parameter feeding an Identity-like op that it removed takes the name of
    that op's output. So: same name first, then the rest in order.
    """
    params = [(p.get_any_name() if p.get_names() else p.get_node().get_friendly_name(),
               p.get_names() | {p.get_node().get_friendly_name()}) for p in ov_model.inputs]
    mapped = {}
    free = []
    for name, names in params:
        match = [n for n in onnx_names if n in names and n not in mapped]
        if match:
            mapped[match[0]] = name
        else:
            free.append(name)
    rest = [n for n in onnx_names if n not in mapped]
    if len(rest) == len(free):
        mapped.update(zip(rest, free))
    return [mapped.get(n) for n in onnx_names]


def openvino_matches(core, ir_model, test_dir, input_names):
    """Whether OpenVINO's CPU plugin gives the expected outputs on the IR."""
    compiled = core.compile_model(ir_model, "CPU", ir_venv.F32)
    for s in sorted(d for d in os.listdir(test_dir) if d.startswith("test_data_set_")):
        folder = os.path.join(test_dir, s)
        feeds = {name: numpy_helper.to_array(t)
                 for name, t in zip(input_names, numbered(folder, "input")) if name}
        results = compiled(feeds)
        for port, t in zip(compiled.outputs, numbered(folder, "output")):
            if close(np.asarray(results[port]), numpy_helper.to_array(t)):
                return False
    return True


def run_test(args, test, tmp, results):
    test_dir = os.path.join(args.data, test)
    model_path = os.path.join(test_dir, "model.onnx")
    try:
        model = onnx.load(model_path, load_external_data=False)
        inits = {i.name for i in model.graph.initializer}
        onnx_names = [i.name for i in model.graph.input if i.name not in inits]
        output_names = [o.name for o in model.graph.output]
        tensors_only = all(v.type.HasField("tensor_type")
                           for v in list(model.graph.input) + list(model.graph.output))
        ov_model = ov.convert_model(model_path)
    except Exception as exc:  # noqa: BLE001 - any converter error is a refusal
        for w in args.weights:
            results[w][test] = ("refused", str(exc).strip().split("\n")[0][:200])
        return
    for w in args.weights:
        if not tensors_only:  # sequence or optional inputs: no .npy for them
            results[w][test] = ("runner-only", "")
            continue
        folder = os.path.join(args.keep, w, test) if args.keep else os.path.join(tmp, w)
        os.makedirs(folder, exist_ok=True)
        xml = os.path.join(folder, "model.xml")
        try:
            ov.save_model(ov_model, xml, compress_to_fp16=(w == "f16"))
        except Exception as exc:  # noqa: BLE001
            results[w][test] = ("refused", "save_model: %s" % str(exc).split("\n")[0][:200])
            continue
        try:
            # The names the IR file gives its inputs.
            ir_model = args.core.read_model(xml)
            ir_names = ir_input_names(onnx_names, ir_model)
            why = run_ir(args.clinfer_run, xml, test_dir, ir_names, output_names, tmp)
            # A wrong result that OpenVINO's own CPU plugin shares comes
            # from the conversion, not from clinfer.
            if why and why.startswith("test_data_set_") and not openvino_matches(
                    args.core, ir_model, test_dir, ir_names):
                results[w][test] = ("openvino-wrong", why)
                continue
        except Exception as exc:  # noqa: BLE001 - report and go on
            why = "harness error: %s" % str(exc).strip().split("\n")[0][:200]
        if why is None:
            results[w][test] = ("passed", "")
        elif why == "runner-only":
            results[w][test] = ("runner-only", "")
        else:
            results[w][test] = ("failed", why)


def read_list(path):
    expected = set()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#")[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2 or parts[0] not in WEIGHTS:
                raise ValueError("%s:%d: expected 'f32|f16 SUITE/TEST', got %r" % (path, n, line))
            expected.add((parts[0], parts[1]))
    return expected


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("clinfer_run")
    ap.add_argument("data")
    ap.add_argument("expected")
    ap.add_argument("--sample", type=int, default=1, metavar="N")
    ap.add_argument("--weights", default="f32,f16")
    ap.add_argument("--only", nargs="+", metavar="SUITE/TEST")
    ap.add_argument("--write-list", metavar="FILE")
    ap.add_argument("--keep", metavar="DIR", help="keep the IR files under DIR/WEIGHTS/SUITE/TEST")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.weights = [w for w in args.weights.split(",") if w]
    if any(w not in WEIGHTS for w in args.weights):
        print("openvino-conformance: --weights takes f32 and/or f16")
        return 2
    if not os.path.isdir(args.data):
        print("openvino-conformance: skipped: %s not found (Debian: libonnx-testdata)" % args.data)
        return SKIP
    try:
        expected = read_list(args.expected)
    except (OSError, ValueError) as exc:
        print("openvino-conformance: %s" % exc)
        return 2
    tests = sorted("%s/%s" % (suite, t) for suite in os.listdir(args.data)
                   if os.path.isdir(os.path.join(args.data, suite))
                   for t in os.listdir(os.path.join(args.data, suite))
                   if os.path.exists(os.path.join(args.data, suite, t, "model.onnx")))
    if args.only:
        tests = [t for t in tests if t in args.only]
    tests = tests[::max(args.sample, 1)]
    chosen = set(tests)
    expected = {(w, t) for (w, t) in expected if t in chosen and w in args.weights}
    args.core = ov.Core()
    print("OpenVINO %s; %d tests, weights %s" % (ov.__version__, len(tests),
                                                 " ".join(args.weights)), flush=True)
    results = {w: {} for w in args.weights}
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="clinfer-ov-conf-") as tmp:
        for test in tests:
            run_test(args, test, tmp, results)
            if args.verbose:
                for w in args.weights:
                    status, why = results[w][test]
                    print("%s %s %s %s" % (status, w, test, why), flush=True)
    failures = 0
    for w in args.weights:
        for test in tests:
            status, why = results[w][test]
            if (w, test) in expected and status != "passed":
                failures += 1
                print("FAIL %s %s: %s %s" % (w, test, status, why))
            elif (w, test) not in expected and status == "passed":
                print("newly passing (add to %s): %s %s" % (args.expected, w, test))
    for w in args.weights:
        count = {}
        for status, _ in results[w].values():
            count[status] = count.get(status, 0) + 1
        refused = count.get("refused", 0)
        print("weights %s: %d converted, %d refused by OpenVINO; clinfer: %d passed, "
              "%d failed, %d runner-only (bfloat16/string/sequence), %d where OpenVINO's own "
              "result is wrong too" % (
                  w, len(tests) - refused, refused, count.get("passed", 0),
                  count.get("failed", 0), count.get("runner-only", 0),
                  count.get("openvino-wrong", 0)))
    if args.write_list:
        with open(args.write_list, "w") as f:
            f.write("# ONNX backend tests that pass through OpenVINO's converter and clinfer-run\n"
                    "# (weights then test; regenerate: tests/ir/openvino-conformance.py "
                    "CLINFER_RUN DATA LIST --write-list FILE)\n")
            for w in args.weights:
                for test in tests:
                    if results[w][test][0] == "passed":
                        f.write("%s %s\n" % (w, test))
        print("wrote %s" % args.write_list)
    print("%d listed tests checked in %.0f s: %d passed, %d failed" % (
        len(expected), time.monotonic() - start, len(expected) - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
