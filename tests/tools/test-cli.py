#!/usr/bin/python3
"""CLI contract of clinfer-run and clinfer-benchmark (docs/tools.md).

Usage: test-cli.py CLINFER_RUN CLINFER_BENCHMARK MODEL.onnx

MODEL must have float32 inputs of static shape (BlazeFace does). Uses only
the Python standard library (the .npy files are written by hand). Prints
one TAP line per check; exit status 0 when all pass, 1 otherwise; a TAP
skip when MODEL does not exist.
"""

import math
import os
import re
import struct
import subprocess
import sys
import tempfile

LINE_RE = re.compile(r"^output (\d+) name=(\S+) type=(\S+) shape=(\S+) "
                     r"min=(\S+) max=(\S+) mean=(\S+)$")
MISSING_RE = re.compile(r"'([^']+)' \((\w+) ([0-9x]+|scalar)\)")
DESCR = {"f32": ("<f4", "f"), "f64": ("<f8", "d"), "i32": ("<i4", "i"),
         "i64": ("<i8", "q"), "u8": ("|u1", "B"), "i8": ("|i1", "b"),
         "bool": ("|b1", "?")}


class Checker:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        self.n += 1
        if not ok:
            self.failed += 1
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, what,
                                "" if ok or not detail else " # " + detail))
        sys.stdout.flush()
        return ok


def run(cmd, timeout=300):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def write_npy(path, descr, shape, data_bytes):
    shape_txt = "(%s)" % (", ".join(str(d) for d in shape)
                          + ("," if len(shape) == 1 else ""))
    head = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, shape_txt)
    pad = 64 - (10 + len(head) + 1) % 64
    head = head + " " * (pad % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)))
        f.write(head.encode("latin1"))
        f.write(data_bytes)


def read_npy(path):
    """(descr, shape, raw data) of a version 1.0 file."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x93NUMPY\x01\x00", "bad magic/version"
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode("latin1")
    assert (10 + hlen) % 64 == 0 and header.endswith("\n"), "header layout"
    descr = re.search(r"'descr': '([^']+)'", header).group(1)
    shape_txt = re.search(r"'shape': \(([^)]*)\)", header).group(1)
    shape = tuple(int(x) for x in shape_txt.replace(" ", "").split(",") if x)
    return descr, shape, data[10 + hlen:]


def product(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def one_line_error(c, what, rc, err, want_rc, prog, needles=()):
    lines = err.splitlines()
    c.check(rc == want_rc, what + ": exit %d" % want_rc, "got %d: %r" % (rc, err))
    ok = len(lines) == 1 and lines[0].startswith(prog + ": ")
    ok = ok and all(n in lines[0] for n in needles)
    c.check(ok, what + ": one-line stderr naming %s" % (list(needles) or prog),
            repr(err))


def test_usage(c, exe, prog, model):
    rc, out, err = run([exe, "--help"])
    c.check(rc == 0 and "--device" in out and "--input" in out,
            prog + " --help", err)
    rc, out, err = run([exe, "-h"])
    c.check(rc == 0 and "Usage" in out, prog + " -h", err)
    rc, out, err = run([exe, "--version"])
    c.check(rc == 0 and re.match(r"^%s \d+\.\d+\.\d+\n$" % prog, out),
            prog + " --version", repr(out))
    for args, what, needles in [
            (["--bogus"], "unknown option", ["--bogus"]),
            ([], "missing MODEL", ["MODEL"]),
            ([model, "--device", "FOO"], "unknown device", ["FOO"]),
            ([model, "--device", "GPU.x"], "malformed GPU.N", ["GPU.x"]),
            ([model, "--threads", "abc"], "--threads abc", ["abc"]),
            ([model, "--threads", "-2"], "--threads -2", ["-2"]),
            ([model, "--memory-limit", "12Q"], "--memory-limit 12Q",
             ["--memory-limit", "12Q"]),
            ([model, "--memory-limit", "0"], "--memory-limit 0", ["'0'"]),
            ([model, "--shape", "nonsense"], "malformed --shape", ["--shape"]),
            ([model, "--input", "nofile"], "malformed --input", ["--input"]),
            ([model, "--disable-pass", "no-such-pass"], "unknown pass",
             ["no-such-pass"]),
            ([model, model], "two MODEL arguments", [])]:
        rc, out, err = run([exe] + args)
        one_line_error(c, "%s %s" % (prog, what), rc, err, 2, prog, needles)
    # A custom op library that cannot be loaded: one line naming it.
    rc, out, err = run([exe, model, "--custom-lib", "no-such-libops.so"])
    one_line_error(c, "%s --custom-lib missing" % prog, rc, err, 1, prog,
                   ["--custom-lib", "no-such-libops.so", "not found"])
    # A custom-layer XML that cannot be used: a one-line error naming it
    # (clinfer-benchmark fills inputs itself, so it gets to compiling).
    if prog == "clinfer-benchmark":
        rc, out, err = run([exe, model, "--config-file", "no-such-layers.xml",
                            "--iterations", "1"])
        one_line_error(c, "%s --config-file unusable" % prog, rc, err, 1, prog,
                       ["no-such-layers.xml"])


def discover_inputs(c, run_exe, model):
    """Model inputs [(name, type, shape)] from the missing-input error."""
    rc, out, err = run([run_exe, model])
    one_line_error(c, "clinfer-run without inputs", rc, err, 1, "clinfer-run",
                   ["missing input"])
    inputs = [(m.group(1), m.group(2),
               () if m.group(3) == "scalar"
               else tuple(int(d) for d in m.group(3).split("x")))
              for m in MISSING_RE.finditer(err)]
    c.check(len(inputs) > 0 and all(t == "f32" for _, t, _ in inputs),
            "model inputs are f32 of static shape", repr(err))
    return inputs


def make_inputs(tmp, inputs):
    args = []
    for k, (name, _, shape) in enumerate(inputs):
        n = product(shape)
        vals = [math.sin(0.01 * i + k) for i in range(n)]
        path = os.path.join(tmp, "in%d.npy" % k)
        write_npy(path, "<f4", shape, struct.pack("<%df" % n, *vals))
        args += ["--input", "%s=%s" % (name, path)]
    return args


def test_input_errors(c, run_exe, model, tmp, inputs):
    name, _, shape = inputs[0]
    good = make_inputs(tmp, inputs)
    n = product(shape)
    wrong_type = os.path.join(tmp, "wrong-type.npy")
    write_npy(wrong_type, "<i4", shape, b"\0" * 4 * n)
    wrong_shape = os.path.join(tmp, "wrong-shape.npy")
    write_npy(wrong_shape, "<f4", (n + 1,), b"\0" * 4 * (n + 1))
    garbage = os.path.join(tmp, "garbage.npy")
    with open(garbage, "wb") as f:
        f.write(b"not a numpy file at all")
    rest = good[2:]
    for args, what, needles in [
            (["--input", "%s=%s" % (name, wrong_type)] + rest, "wrong-type input",
             [name, "i32", "f32"]),
            (["--input", "%s=%s" % (name, wrong_shape)] + rest,
             "wrong-shape input", [name, "%d" % (n + 1)]),
            (["--input", "%s=%s" % (name, os.path.join(tmp, "none.npy"))] + rest,
             "nonexistent input file", ["none.npy"]),
            (["--input", "%s=%s" % (name, garbage)] + rest, "malformed .npy",
             ["garbage.npy"]),
            (good + ["--input", "no-such-input=%s" % wrong_type], "unknown input",
             ["no-such-input", name]),
            (["--shape", "no-such-input=1x2"] + good, "--shape unknown input",
             ["no-such-input", name])]:
        rc, out, err = run([run_exe, model] + args)
        one_line_error(c, "clinfer-run " + what, rc, err, 1, "clinfer-run",
                       needles)
    rc, out, err = run([run_exe, os.path.join(tmp, "missing.onnx")])
    one_line_error(c, "clinfer-run nonexistent model", rc, err, 1,
                   "clinfer-run", ["missing.onnx"])


def check_output_file(c, path, i, type_name, shape_txt, stats):
    try:
        descr, shape, raw = read_npy(path)
    except (OSError, AssertionError, AttributeError) as exc:
        c.check(False, "output_%d.npy readable" % i, str(exc))
        return
    want = () if shape_txt == "scalar" else tuple(
        int(d) for d in shape_txt.split("x"))
    c.check(shape == want and descr == DESCR.get(type_name, ("?",))[0],
            "output_%d.npy shape/type" % i, "%s %s" % (descr, shape))
    if type_name != "f32" or len(raw) != 4 * product(shape) or not raw:
        return
    vals = struct.unpack("<%df" % product(shape), raw)
    got = (min(vals), max(vals), sum(vals) / len(vals))
    ok = all(math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5)
             for a, b in zip(got, stats))
    c.check(ok, "output_%d.npy matches min/max/mean" % i, "%s vs %s" % (got, stats))


def test_run(c, run_exe, model, tmp, inputs):
    outdir = os.path.join(tmp, "out", "sub")
    rc, out, err = run([run_exe, model, "--threads", "2", "--output-dir", outdir]
                       + make_inputs(tmp, inputs))
    c.check(rc == 0 and err == "", "clinfer-run on the model: exit 0", err)
    lines = out.splitlines()
    matches = [LINE_RE.match(l) for l in lines]
    c.check(len(lines) > 0 and all(matches), "output line format", out)
    for i, m in enumerate(matches):
        if not m:
            continue
        c.check(int(m.group(1)) == i and re.match(r"^(scalar|\d+(x\d+)*)$",
                                                   m.group(4)),
                "output %d index and shape" % i, lines[i])
        stats = tuple(float(m.group(k)) for k in (5, 6, 7))
        check_output_file(c, os.path.join(outdir, "output_%d.npy" % i), i,
                          m.group(3), m.group(4), stats)
    rc2, out2, err2 = run([run_exe, model, "--device", "CPU", "--no-fallback"]
                          + make_inputs(tmp, inputs))
    c.check(rc2 == 0 and out2 == out, "same lines with --device CPU --no-fallback",
            err2)
    # The memory limit: a generous one changes nothing; one below the
    # input's own size is a one-line error naming the node and the size.
    rc3, out3, err3 = run([run_exe, model, "--memory-limit", "1G"]
                          + make_inputs(tmp, inputs))
    c.check(rc3 == 0 and out3 == out, "same lines with --memory-limit 1G", err3)
    rc3, out3, err3 = run([run_exe, model, "--memory-limit", "1K"]
                          + make_inputs(tmp, inputs))
    one_line_error(c, "clinfer-run --memory-limit 1K", rc3, err3, 1,
                   "clinfer-run", ["over the memory limit of 1024 bytes",
                                   "needs"])


def test_benchmark(c, bench_exe, model, tmp, inputs):
    rc, out, err = run([bench_exe, model, "--iterations", "5", "--warmup", "1",
                        "--threads", "2"])
    lines = out.splitlines()
    c.check(rc == 0, "clinfer-benchmark: exit 0", err)
    c.check(bool(lines) and re.match(r"^median_ms=[0-9.]+$", lines[-1]),
            "benchmark last line is median_ms=<value>", out)
    for key in ("device=CPU", "threads=2", "read_ms=", "compile_ms=",
                "first_inference_ms=", "latency_ms min=", "throughput_fps="):
        c.check(any(l.startswith(key) for l in lines), "benchmark prints " + key,
                out)
    rc, out, err = run([bench_exe, model, "--iterations", "3", "--warmup", "0",
                        "--profile"] + make_inputs(tmp, inputs))
    lines = out.splitlines()
    c.check(rc == 0 and bool(lines)
            and re.match(r"^median_ms=[0-9.]+$", lines[-1]),
            "benchmark --profile with given inputs", err + out)
    prof = [i for i, l in enumerate(lines) if l.startswith("profile")]
    dev = [i for i, l in enumerate(lines) if l.startswith("device=")]
    c.check(prof and dev and prof[0] < dev[0], "profile table before the summary",
            out)
    # Steps on reference kernels are listed after the table: a Pad that
    # crops (no fast kernel crops); a constant Pad that fold-pad folds
    # into the Conv is gone.
    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "data", "onnx")
    pad_model = os.path.join(data, "pad-conv.onnx")
    rc, out, err = run([bench_exe, os.path.join(data, "crop-pad-conv.onnx"),
                        "--iterations", "3", "--profile"])
    lines = out.splitlines()
    c.check(rc == 0 and "reference_steps=1" in lines
            and any(re.match(r"^  Pad 'pad' 1x3x17x15  [0-9.]+ ms$", l)
                    for l in lines)
            and any(l.startswith("on reference kernels: 1 of 2 steps")
                    for l in lines),
            "benchmark --profile lists the steps on reference kernels", out)
    rc, out, err = run([bench_exe, pad_model, "--iterations", "3", "--profile"])
    lines = out.splitlines()
    c.check(rc == 0 and "reference_steps=0" in lines
            and not any(" Pad " in l for l in lines),
            "fold-pad: the Pad is gone, no reference step", out)
    # Throughput mode: several requests in flight, fps=<value> last.
    for args, nireq in [(["--hint", "throughput"], None),
                        (["--nireq", "3", "--hint", "none"], "3"),
                        (["--hint", "THROUGHPUT", "--streams", "2",
                          "--nireq", "4"], "4")]:
        rc, out, err = run([bench_exe, model, "--iterations", "12",
                            "--warmup", "2"] + args)
        lines = out.splitlines()
        what = "benchmark " + " ".join(args)
        c.check(rc == 0 and bool(lines)
                and re.match(r"^fps=[0-9.]+$", lines[-1]) is not None
                and float(lines[-1][4:]) > 0,
                what + ": last line fps=<value>", err + out)
        for key in ("device=CPU", "hint=", "streams=", "threads=", "nireq=",
                    "latency_ms min=", "inferences=12"):
            c.check(any(l.startswith(key) for l in lines),
                    what + ": prints " + key, out)
        if nireq:
            c.check(("nireq=" + nireq) in lines, what + ": nireq=" + nireq,
                    out)
        if "--streams" in args:
            c.check("streams=2" in lines and "hint=throughput" in lines,
                    what + ": streams=2, hint=throughput", out)
    # --batch: a model with a dynamic batch runs N frames per inference.
    batch_model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                               "data", "dynamic", "conv-batch.onnx")
    rc, out, err = run([bench_exe, batch_model, "--batch", "4", "--hint",
                        "throughput", "--iterations", "20"])
    lines = out.splitlines()
    c.check(rc == 0 and "batch=4" in lines and bool(lines)
            and re.match(r"^fps=[0-9.]+$", lines[-1]) is not None,
            "benchmark --batch 4 on a dynamic-batch model", err + out)
    # A fixed batch of 1 (the bundled BlazeFace) is followed through the
    # model; one whose batch cannot be (a constant output) is an error.
    rc, out, err = run([bench_exe, model, "--batch", "4", "--hint",
                        "throughput", "--iterations", "8"])
    lines = out.splitlines()
    c.check(rc == 0 and "batch=4" in lines and bool(lines)
            and re.match(r"^fps=[0-9.]+$", lines[-1]) is not None,
            "benchmark --batch 4 on a batch-1 model", err + out)
    const_model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                               "data", "gst", "ctc-synthetic.onnx")
    rc, out, err = run([bench_exe, const_model, "--batch", "4"])
    one_line_error(c, "clinfer-benchmark --batch on an unbatchable model", rc,
                   err, 1, "clinfer-benchmark",
                   ["--batch 4", "cannot run batches of 4"])
    # The default hint is latency: one stream, median_ms last.
    rc, out, err = run([bench_exe, model, "--iterations", "3"])
    c.check(rc == 0 and "hint=latency" in out.splitlines()
            and "streams=1" in out.splitlines(),
            "benchmark default: hint=latency, streams=1", out)
    for args, what in [(["--iterations", "0"], "--iterations 0"),
                       (["--warmup", "-1"], "--warmup -1"),
                       (["--nireq", "-1"], "--nireq -1"),
                       (["--hint", "fast"], "--hint"),
                       (["--streams", "-2"], "--streams -2"),
                       (["--nireq", "2", "--profile"], "--profile"),
                       (["--batch", "-1"], "--batch -1")]:
        rc, out, err = run([bench_exe, model] + args)
        one_line_error(c, "clinfer-benchmark " + what, rc, err, 2,
                       "clinfer-benchmark", [what.split()[0]])


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    run_exe, bench_exe, model = sys.argv[1:]
    if not os.path.exists(model):
        print("1..0 # SKIP model %s not found" % model)
        return 0
    c = Checker()
    with tempfile.TemporaryDirectory(prefix="clinfer-cli-") as tmp:
        test_usage(c, run_exe, "clinfer-run", model)
        test_usage(c, bench_exe, "clinfer-benchmark", model)
        inputs = discover_inputs(c, run_exe, model)
        if inputs:
            test_input_errors(c, run_exe, model, tmp, inputs)
            test_run(c, run_exe, model, tmp, inputs)
            test_benchmark(c, bench_exe, model, tmp, inputs)
    print("1..%d" % c.n)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
