#!/usr/bin/env python3
"""Compare clinfer's CPU latency with ONNX Runtime (and OpenVINO) on BlazeFace.

Usage (from the repository root, after building clinfer into build/):
    scripts/install-deps.sh --python      # onnxruntime, openvino, numpy for python3
    python3 benchmarks/compare.py [--clinfer-benchmark PATH] [--threads 1,2]
                                  [--rounds 5] [--iterations 200] [--warmup 20]
                                  [--models front,back] [--no-openvino] [--json FILE]

Models: the bundled BlazeFace pair (models/blazeface/*.onnx) and, when the
pip package rapidocr-onnxruntime is installed (`pip install --no-deps
rapidocr-onnxruntime==1.3.24`), the three PaddleOCR models its wheel ships
(PACKAGE_MODELS: a classifier, the DBNet text detector, the text recogniser),
found inside the installed package with a fixed input shape (clinfer gets
--shape, OpenVINO a reshape). Nothing is downloaded at run time.

For each model and each thread count it feeds the
same random input (uniform [-1, 1), fixed seed) to every runtime and
alternates them round by round, so a slow phase of the machine hits all of
them alike. Each round times --iterations inferences after --warmup untimed
ones and takes their median; the figure reported is the median of the round
medians, in milliseconds per inference.

- clinfer: `clinfer-benchmark MODEL --device CPU --threads N --iterations K
  --warmup W --input NAME=FILE`, one process per round; its timing is taken in
  C around the inference call (the `median_ms=` line it prints last).
- ONNX Runtime (pip onnxruntime): CPU provider, f32, intra_op_num_threads=N,
  inter_op_num_threads=1, sequential execution, all graph optimisations;
  inputs and outputs pre-bound (IOBinding), timed in Python around
  run_with_iobinding().
- OpenVINO (pip openvino, when `import openvino` works): CPU device,
  INFERENCE_NUM_THREADS=N, PERFORMANCE_HINT=LATENCY, INFERENCE_PRECISION_HINT=f32
  (so a CPU with bf16/AMX does not silently run in lower precision), timed in
  Python around InferRequest.infer().
The Python-timed runtimes include a few microseconds of Python call overhead.

The runtimes run in the listed order in even rounds and in reverse order
in odd ones. Before and after each runtime's 2-thread round it runs
build/benchmarks/clinfer-core-latency (the round trip of a cache line
between the first two CPUs; on a virtual machine it can change while the
machine runs, and 2-thread latency with it), prints the range beside the
row, and prints the 2-thread rows again by placement: each runtime's
rounds that ran with the CPUs close together (under 200 ns before and
after) or far apart, a round whose placement changed left out.

Prints a markdown table (paste it into docs/performance.md) plus the CPU model
from /proc/cpuinfo and the ISA clinfer's CPU kernels would pick (avx512f >
avx2 > generic). Exit status 1 when a runtime failed.

--throughput adds a throughput table (all usable CPUs, inferences per
second across several requests in flight), same rounds and alternation:
- clinfer: `clinfer-benchmark MODEL --hint throughput --iterations K
  --warmup W --input NAME=FILE` (its `fps=` line);
- OpenVINO: its own tool, `benchmark_app -m MODEL -d CPU -hint throughput
  -infer_precision f32 -niter K [-shape NAME[...]]` (random inputs; its
  "Throughput: X FPS" line), when benchmark_app is on PATH;
- ONNX Runtime: one session per core group (as many sessions as usable
  CPUs, one intra-op thread each), each in its own Python thread running
  K / sessions inferences (ORT releases the GIL while it runs); fps is all
  inferences over the wall time.
Ratios in that table are clinfer fps / peer fps: above 1 means clinfer does
more inferences per second.
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python3")

try:
    import numpy as np
    import onnxruntime as ort
except ImportError:
    # scripts/install-deps.sh --python falls back to .venv under PEP 668.
    if os.path.exists(VENV_PYTHON) and os.path.realpath(sys.prefix) != os.path.dirname(os.path.dirname(VENV_PYTHON)) \
            and not os.environ.get("CLINFER_COMPARE_REEXEC"):
        os.environ["CLINFER_COMPARE_REEXEC"] = "1"
        os.execv(VENV_PYTHON, [VENV_PYTHON] + sys.argv)
    sys.exit("compare.py: needs numpy and onnxruntime for %s "
             "(scripts/install-deps.sh --python)" % sys.executable)

try:
    import openvino as ov
except ImportError:
    ov = None

MODELS = {
    "front": "models/blazeface/face_detection_front_128x128_barracuda.onnx",
    "back": "models/blazeface/face_detection_back_256x256_barracuda.onnx",
}
# Public vision models that a PyPI package ships inside its wheel (never
# fetched from a hub): key -> (Python package, path in the package, input
# shape fixed for the run). `pip install --no-deps rapidocr-onnxruntime`
# (1.3.x) provides PaddleOCR's text-direction classifier (MobileNetV3), the
# PP-OCRv4 text detector (DBNet: a segmentation net) and its recogniser
# (SVTR-LCNet). The package is located, never imported.
PACKAGE_MODELS = {
    "ocr-cls": ("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx", (1, 3, 48, 192)),
    "ocr-det": ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx", (1, 3, 320, 320)),
    "ocr-rec": ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_rec_infer.onnx", (1, 3, 48, 320)),
}


# Real models from PyPI wheels fetched by scripts/fetch-bench-models.sh
# (hash-pinned, cached in ~/.cache/clinfer/bench-models), listed in
# fetched-models.json: key -> (file, {input: fixed shape}, {input: (low,
# high)} for inputs that need a range).
# Chosen to differ from BlazeFace and PP-OCR: a segmentation net with
# dilated convs and Resize, a detector with a large head, a transformer
# encoder, two TensorFlow-converted graphs (explicit Pads; NHWC).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fetched-models.json")) as _f:
    FETCHED_MODELS = {k: (v["file"], {n: tuple(d) for n, d in v["shapes"].items()},
                          {n: tuple(r) for n, r in v["ranges"].items()})
                      for k, v in json.load(_f)["models"].items()}
FETCHED_DIR = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                           "clinfer", "bench-models")


def fetched_model(key):
    """Path, fixed shapes and value ranges of FETCHED_MODELS[key], or None
    when scripts/fetch-bench-models.sh has not fetched it."""
    name, shapes, ranges = FETCHED_MODELS[key]
    path = os.path.join(FETCHED_DIR, name)
    return (path, shapes, ranges) if os.path.exists(path) else None


def package_model(key):
    """Path and input shape of PACKAGE_MODELS[key], or None when the package
    is not installed for this interpreter."""
    import importlib.util
    package, rel, shape = PACKAGE_MODELS[key]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    path = os.path.join(os.path.dirname(spec.origin), rel)
    return (path, shape) if os.path.exists(path) else None
DEFAULT_BENCHMARKS = ["build/engine/tools/clinfer-benchmark",
                      "build-release/engine/tools/clinfer-benchmark"]
SEED = 1234


def cpu_info():
    model, flags = platform.processor() or "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name":
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    isa = "avx512f" if "avx512f" in flags else "avx2" if "avx2" in flags else "generic"
    return model, isa


def usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def median_ms(run_once, iterations, warmup):
    for _ in range(warmup):
        run_once()
    times = []
    for _ in range(iterations):
        start = time.perf_counter_ns()
        run_once()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times) / 1e6


class ClinferRunner:
    """clinfer-benchmark, one process per round; @mode_args pick latency
    (--threads N, last line median_ms=) or throughput (--hint throughput,
    last line fps=)."""
    name = "clinfer"

    def __init__(self, binary, model, inputs, mode_args, key):
        self.cmd = [binary, model, "--device", "CPU"] + mode_args
        for inp in inputs:
            self.cmd += ["--input", "%s=%s" % (inp.name, inp.path)]
            if inp.fixed:
                self.cmd += ["--shape", "%s=%s" % (inp.name, "x".join(str(d) for d in inp.fixed))]
        self.last_line = re.compile(r"^%s=([0-9.eE+-]+)$" % key)

    def round(self, iterations, warmup):
        cmd = self.cmd + ["--iterations", str(iterations), "--warmup", str(warmup)]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        lines = proc.stdout.strip().splitlines()
        match = self.last_line.match(lines[-1]) if lines else None
        if proc.returncode != 0 or not match:
            raise RuntimeError("%s exited %d:\n%s%s" % (" ".join(cmd), proc.returncode,
                                                        proc.stdout, proc.stderr))
        return float(match.group(1))


class OrtRunner:
    name = "ORT"

    def __init__(self, model, inputs, threads):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        self.sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
        self.binding = self.sess.io_binding()
        self.values = [ort.OrtValue.ortvalue_from_numpy(inp.data) for inp in inputs]
        for inp, value in zip(inputs, self.values):
            self.binding.bind_ortvalue_input(inp.name, value)
        for out in self.sess.get_outputs():
            self.binding.bind_output(out.name, "cpu")
        self.sess.run_with_iobinding(self.binding)  # allocates the outputs once

    def round(self, iterations, warmup):
        return median_ms(lambda: self.sess.run_with_iobinding(self.binding), iterations, warmup)


class OpenVinoRunner:
    name = "OpenVINO"

    def __init__(self, model, inputs, threads):
        core = ov.Core()
        config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
                  "INFERENCE_PRECISION_HINT": "f32"}
        ov_model = core.read_model(model)
        # Static input shape, as clinfer compiles for (dynamic models).
        ov_model.reshape({inp.name: ov.PartialShape(list(inp.data.shape)) for inp in inputs})
        self.compiled = core.compile_model(ov_model, "CPU", config)
        self.request = self.compiled.create_infer_request()
        for inp in inputs:
            self.request.set_tensor(inp.name, ov.Tensor(inp.data))
        self.request.infer()

    def round(self, iterations, warmup):
        return median_ms(self.request.infer, iterations, warmup)


class OrtThroughput:
    """One session per usable CPU (one intra-op thread each), each driven by
    its own Python thread."""
    name = "ORT"

    def __init__(self, model, inputs):
        self.runners = [OrtRunner(model, inputs, 1) for _ in range(usable_cpus())]

    def round(self, iterations, warmup):
        per = max(1, iterations // len(self.runners))
        for r in self.runners:
            for _ in range(max(1, warmup // len(self.runners))):
                r.sess.run_with_iobinding(r.binding)

        def loop(r):
            for _ in range(per):
                r.sess.run_with_iobinding(r.binding)
        threads = [threading.Thread(target=loop, args=(r,)) for r in self.runners]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return per * len(self.runners) / (time.perf_counter() - start)


class OpenVinoThroughput:
    """benchmark_app -hint throughput: OpenVINO's own tool and its own
    choice of streams and requests."""
    name = "OpenVINO"

    def __init__(self, model, inputs):
        self.cmd = ["benchmark_app", "-m", model, "-d", "CPU", "-hint", "throughput",
                    "-infer_precision", "f32"]
        fixed = ["%s[%s]" % (inp.name, ",".join(str(d) for d in inp.fixed))
                 for inp in inputs if inp.fixed]
        if fixed:
            self.cmd += ["-shape", ",".join(fixed)]

    def round(self, iterations, warmup):
        cmd = self.cmd + ["-niter", str(iterations)]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        match = re.search(r"Throughput:\s+([0-9.]+)\s+FPS", proc.stdout)
        if proc.returncode != 0 or not match:
            raise RuntimeError("%s exited %d:\n%s" % (" ".join(cmd), proc.returncode,
                                                      proc.stdout[-2000:]))
        return float(match.group(1))


class Input:
    """One model input: @name, @data (fed to every runtime), @path (the
    .npy for clinfer-benchmark), @fixed (the shape imposed on a dynamic
    input, or None)."""

    def __init__(self, name, data, path, fixed):
        self.name, self.data, self.path, self.fixed = name, data, path, fixed


def make_inputs(model, shapes, ranges, prefix):
    """Random inputs of @model, the same for every runtime: floats uniform
    in [-1, 1), integers uniform in their range from @ranges (default
    [0, 255]), with the shapes in @shapes (key None: the first input)."""
    quiet = ort.SessionOptions()
    quiet.log_severity_level = 3  # tf2onnx leaves unused initialisers: ORT warns
    probe = ort.InferenceSession(model, quiet, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(SEED)
    inputs = []
    for i, inp in enumerate(probe.get_inputs()):
        fixed = shapes.get(inp.name) or (shapes.get(None) if i == 0 else None)
        shape = fixed or inp.shape
        if not all(isinstance(d, int) for d in shape):
            sys.exit("compare.py: %s: input %s has a dynamic shape %s" % (model, inp.name, shape))
        if inp.type in ("tensor(int64)", "tensor(int32)"):
            lo, hi = ranges.get(inp.name, (0, 255))
            data = rng.integers(lo, hi, size=shape).astype(
                np.int64 if inp.type == "tensor(int64)" else np.int32)
        else:
            lo, hi = ranges.get(inp.name, (-1.0, 1.0))
            data = rng.uniform(lo, hi, size=shape).astype(np.float32)
        path = "%s-%d.npy" % (prefix, i)
        np.save(path, data)
        inputs.append(Input(inp.name, data, path, fixed))
    return inputs


def throughput_table(args, binary, model_specs, tmp_inputs):
    """Rounds of every runtime's throughput per model (alternating order);
    prints and returns the rows."""
    use_ov = shutil.which("benchmark_app") is not None and not args.no_openvino
    rows = []
    for key, (model, inputs) in tmp_inputs.items():
        runners = []
        if binary:
            runners.append(ClinferRunner(binary, model, inputs, ["--hint", "throughput"],
                                         "fps"))
        runners.append(OrtThroughput(model, inputs))
        if use_ov:
            runners.append(OpenVinoThroughput(model, inputs))
        rounds = {r.name: [] for r in runners}
        for k in range(args.rounds):
            for runner in (runners if k % 2 == 0 else runners[::-1]):
                if rounds[runner.name] is None:   # failed in an earlier round
                    continue
                try:
                    rounds[runner.name].append(runner.round(args.tput_iterations, args.warmup))
                except RuntimeError as exc:
                    print("compare.py: %s throughput failed: %s" % (runner.name, exc),
                          file=sys.stderr)
                    rounds[runner.name] = None
        fps = {n: (statistics.median(v) if v else "error") for n, v in rounds.items()}
        row = {"model": os.path.basename(model), "cpus": usable_cpus(),
               "clinfer_fps": fps.get("clinfer", "n/a"), "ort_fps": fps.get("ORT", "n/a"),
               "openvino_fps": fps.get("OpenVINO", "n/a"), "rounds": rounds}
        rows.append(row)
        print("%s throughput: %s" % (row["model"], ", ".join(
            "%s %s fps" % (n, fmt(v)) for n, v in fps.items())), flush=True)
    print("\n| model | CPUs | clinfer fps | ORT fps | OpenVINO fps | clinfer/ORT | clinfer/OpenVINO |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| %s | %d | %s | %s | %s | %s | %s |" % (
            row["model"], row["cpus"], fmt(row["clinfer_fps"]), fmt(row["ort_fps"]),
            fmt(row["openvino_fps"]), ratio(row["clinfer_fps"], row["ort_fps"]),
            ratio(row["clinfer_fps"], row["openvino_fps"])))
    print("(fps ratios: above 1 means clinfer does more inferences per second)")
    return rows


def core_latency_tool(binary):
    """build/benchmarks/clinfer-core-latency beside BUILD/engine/tools/clinfer-benchmark."""
    if binary is None:
        return None
    build = os.path.dirname(os.path.dirname(os.path.dirname(binary)))
    tool = os.path.join(build, "benchmarks", "clinfer-core-latency")
    return tool if os.access(tool, os.X_OK) else None


def core_roundtrip_ns(tool):
    """The CPU-to-CPU round trip now (ns), or None."""
    if tool is None:
        return None
    proc = subprocess.run([tool], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          universal_newlines=True)
    match = re.match(r"^core_roundtrip_ns=([0-9.]+)$", proc.stdout.strip())
    return float(match.group(1)) if proc.returncode == 0 and match else None


# Round trips (ns) below this count as the two CPUs sharing a cache.
CLOSE_NS = 200


def placement(before, after):
    """'close' or 'far' when the round trip measured before and after a
    runner's round agree, 'mixed' when the placement changed in between,
    None without a measurement (1 thread)."""
    if before is None or after is None:
        return None
    if before < CLOSE_NS and after < CLOSE_NS:
        return "close"
    if before >= CLOSE_NS and after >= CLOSE_NS:
        return "far"
    return "mixed"


def print_by_placement(results):
    """The 2+-thread rows again, each runtime's rounds grouped by the
    placement they ran in (rounds whose placement changed left out)."""
    lines = []
    for row in results:
        placed = row.get("placements", {})
        if row["threads"] < 2 or "clinfer" not in placed or "OpenVINO" not in placed:
            continue
        for where in ("close", "far"):
            med = {}
            for name in ("clinfer", "OpenVINO"):
                vals = [v for v, p in zip(row["rounds"][name], placed[name]) if p == where]
                med[name] = (statistics.median(vals), len(vals)) if vals else None
            if med["clinfer"] and med["OpenVINO"]:
                lines.append("| %s | %d | %s | %s (%d) | %s (%d) | %s |" % (
                    row["model"], row["threads"], where, fmt(med["clinfer"][0]),
                    med["clinfer"][1], fmt(med["OpenVINO"][0]), med["OpenVINO"][1],
                    ratio(med["clinfer"][0], med["OpenVINO"][0])))
    if lines:
        print("\nBy placement (rounds whose round trip was under %d ns before and after "
              "them are close, %d or more far; rounds in brackets):\n" % (CLOSE_NS, CLOSE_NS))
        print("| model | threads | placement | clinfer ms | OpenVINO ms | clinfer/OpenVINO |")
        print("|---|---:|---|---:|---:|---:|")
        for line in lines:
            print(line)


def fmt(value):
    return "%.3f" % value if isinstance(value, float) else value


def ratio(a, b):
    return "%.2f" % (a / b) if isinstance(a, float) and isinstance(b, float) and b > 0 else "n/a"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clinfer-benchmark", metavar="PATH",
                        help="clinfer-benchmark binary (default: %s)" % " or ".join(DEFAULT_BENCHMARKS))
    parser.add_argument("--no-clinfer", action="store_true", help="only time the other runtimes")
    parser.add_argument("--no-openvino", action="store_true", help="skip OpenVINO even if installed")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--models", default="front,back," + ",".join(PACKAGE_MODELS),
                        help="comma-separated: front, back, %s, %s (default: front, "
                        "back and the package models; package models not installed and "
                        "fetched models not fetched are skipped)" % (
                            ", ".join(PACKAGE_MODELS), ", ".join(FETCHED_MODELS)))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--throughput", action="store_true",
                        help="also compare throughput on all usable CPUs")
    parser.add_argument("--only-throughput", action="store_true",
                        help="compare throughput only")
    parser.add_argument("--tput-iterations", type=int, default=2000,
                        help="inferences per throughput round (default 2000)")
    args = parser.parse_args()
    os.chdir(ROOT)

    binary = None
    if not args.no_clinfer:
        candidates = [args.clinfer_benchmark] if args.clinfer_benchmark else DEFAULT_BENCHMARKS
        binary = next((c for c in candidates if c and os.access(c, os.X_OK)), None)
        if binary is None:
            sys.exit("compare.py: clinfer-benchmark not found (tried %s); build first "
                     "(meson setup build && ninja -C build) or pass --clinfer-benchmark"
                     % ", ".join(candidates))
        binary = os.path.abspath(binary)
    latency_tool = core_latency_tool(binary)
    use_ov = ov is not None and not args.no_openvino
    threads_list = [int(t) for t in args.threads.split(",")]
    model_keys = [m.strip() for m in args.models.split(",")]
    model_specs = {}
    for key in model_keys:
        if key in MODELS:
            model_specs[key] = (MODELS[key], {}, {})
        elif key in PACKAGE_MODELS:
            found = package_model(key)
            if found is None:
                print("compare.py: skipping %s: pip package %s not installed" % (
                    key, PACKAGE_MODELS[key][0]), file=sys.stderr)
                continue
            model_specs[key] = (found[0], {None: found[1]}, {})
        elif key in FETCHED_MODELS:
            found = fetched_model(key)
            if found is None:
                print("compare.py: skipping %s: not fetched (scripts/fetch-bench-models.sh)"
                      % key, file=sys.stderr)
                continue
            model_specs[key] = found
        else:
            sys.exit("compare.py: unknown model '%s' (front, back, %s, %s)" % (
                key, ", ".join(PACKAGE_MODELS), ", ".join(FETCHED_MODELS)))

    cpu_model, isa = cpu_info()
    print("CPU: %s (%d usable CPUs), clinfer ISA: %s" % (cpu_model, usable_cpus(), isa))
    print("onnxruntime %s, openvino %s, numpy %s; %d rounds x %d iterations (+%d warm-up)%s\n" % (
        ort.__version__, ov.get_version() if use_ov else "not used", np.__version__,
        args.rounds, args.iterations, args.warmup,
        "; throughput rounds of %d inferences" % args.tput_iterations
        if args.throughput or args.only_throughput else ""), flush=True)

    results, failed, tput_rows = [], False, []
    if args.only_throughput:
        threads_list = []
    with tempfile.TemporaryDirectory(prefix="clinfer-compare-") as tmp:
        tmp_inputs = {}
        for key, (model, shapes, ranges) in model_specs.items():
            inputs = make_inputs(model, shapes, ranges, os.path.join(tmp, key))
            tmp_inputs[key] = (model, inputs)
            for threads in threads_list:
                runners, medians = [], {}
                if binary:
                    runners.append(ClinferRunner(binary, model, inputs,
                                                 ["--threads", str(threads)], "median_ms"))
                runners.append(OrtRunner(model, inputs, threads))
                if use_ov:
                    runners.append(OpenVinoRunner(model, inputs, threads))
                rounds = {r.name: [] for r in runners}
                placed = {r.name: [] for r in runners}
                trips = []
                for k in range(args.rounds):
                    # Every other round in the reverse order, so that no
                    # runtime always runs first after another's.
                    for runner in (runners if k % 2 == 0 else runners[::-1]):
                        if runner.name in medians:  # failed earlier
                            continue
                        before = core_roundtrip_ns(latency_tool) if threads > 1 else None
                        if before is not None:
                            trips.append(before)
                        try:
                            value = runner.round(args.iterations, args.warmup)
                        except RuntimeError as exc:
                            print("compare.py: %s failed: %s" % (runner.name, exc), file=sys.stderr)
                            medians[runner.name] = "error"
                            failed = True
                            continue
                        rounds[runner.name].append(value)
                        after = core_roundtrip_ns(latency_tool) if threads > 1 else None
                        placed[runner.name].append(placement(before, after))
                for name, values in rounds.items():
                    if name not in medians:
                        medians[name] = statistics.median(values)
                row = {"model": os.path.basename(model), "threads": threads,
                       "clinfer_ms": medians.get("clinfer", "n/a"),
                       "ort_ms": medians.get("ORT", "n/a"),
                       "openvino_ms": medians.get("OpenVINO", "n/a"),
                       "rounds": rounds, "placements": placed,
                       "core_roundtrip_ns": trips}
                results.append(row)
                print("%s threads=%d: %s%s" % (row["model"], threads, ", ".join(
                    "%s %s ms" % (n, fmt(v)) for n, v in medians.items()),
                    "; core round trip %s ns" % "/".join("%.0f" % t for t in trips)
                    if trips else ""), flush=True)
        if args.throughput or args.only_throughput:
            tput_rows = throughput_table(args, binary, model_specs, tmp_inputs)
            failed = failed or any("error" in (r["clinfer_fps"], r["ort_fps"], r["openvino_fps"])
                                   for r in tput_rows)

    if args.only_throughput:
        return 1 if failed else 0
    print("\n| model | threads | clinfer ms | ORT ms | OpenVINO ms | clinfer/ORT | clinfer/OpenVINO "
          "| core round trip ns |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in results:
        trips = row["core_roundtrip_ns"]
        print("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            row["model"], row["threads"], fmt(row["clinfer_ms"]), fmt(row["ort_ms"]),
            fmt(row["openvino_ms"]), ratio(row["clinfer_ms"], row["ort_ms"]),
            ratio(row["clinfer_ms"], row["openvino_ms"]),
            "%.0f-%.0f" % (min(trips), max(trips)) if trips else "-"))
    print_by_placement(results)
    print("\nCPU: %s; clinfer ISA: %s; %d usable CPUs; ratios < 1 mean clinfer is faster."
          % (cpu_model, isa, usable_cpus()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_model, "isa": isa, "cpus": usable_cpus(),
                       "onnxruntime": ort.__version__,
                       "openvino": ov.get_version() if use_ov else None,
                       "rounds": args.rounds, "iterations": args.iterations,
                       "warmup": args.warmup, "results": results,
                       "throughput": tput_rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
