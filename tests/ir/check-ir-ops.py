#!/usr/bin/env python3
"""IR op check: one small OpenVINO model per op, run by OpenVINO and by clinfer.

Usage: check-ir-ops.py CLINFER_RUN CLINFER_CONVERT [--keep DIR] [--only NAME...]

For every case below the script builds a model with OpenVINO's opset API
(openvino.opsetN), saves it as IR (openvino.save_model, f32 weights), runs it
on OpenVINO's CPU plugin for the reference, then
  1. reader:  `CLINFER_RUN case.xml --input ... --output-dir` must give the same
     outputs: max|out - ref| <= 1e-4 * max(1, max|ref|), integers exactly;
  2. writer:  `CLINFER_CONVERT case.xml --output rt.xml` and OpenVINO running
     rt.xml must give them too (the op written back as OpenVINO opset layers).
One line per case and stage; exit 0 when all pass, 1 otherwise, 77 (skipped)
when `import openvino` fails for this python3. With CLINFER_IR_VENV set
(meson does) it runs in the virtual environment of tests/ir/ir_venv.py.
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import ir_venv  # noqa: E402

SKIP = 77
ir_venv.enter("check-ir-ops")
try:
    import numpy as np
    import openvino as ov
    import openvino.opset1 as o1
    import openvino.opset5 as o5
    import openvino.opset8 as o8
    import openvino.opset13 as o13
except ImportError as exc:
    print("check-ir-ops: skipped: %s (python3 -m pip install openvino)" % exc)
    sys.exit(SKIP)

RNG = np.random.default_rng(7)


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def const(a):
    return o13.constant(np.asarray(a))


def param(name, shape, dtype=np.float32):
    return o13.parameter(list(shape), dtype=dtype, name=name)


# Each case: name -> function returning (outputs, {input name: array}).
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def convolution():
    x = param("x", (1, 3, 9, 8))
    w = const(rand(4, 3, 3, 2))
    y = o13.convolution(x, w, [2, 1], [1, 0], [0, 1], [1, 2])
    return [y], {"x": rand(1, 3, 9, 8)}


@case
def group_convolution():
    x = param("x", (1, 4, 7, 7))
    w = const(rand(2, 3, 2, 3, 3))
    y = o13.group_convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1])
    return [y], {"x": rand(1, 4, 7, 7)}


@case
def depthwise_same_upper():
    x = param("x", (1, 3, 6, 5))
    w = const(rand(3, 1, 1, 3, 3))
    y = o13.group_convolution(x, w, [2, 2], [0, 0], [0, 0], [1, 1], auto_pad="same_upper")
    return [y], {"x": rand(1, 3, 6, 5)}


@case
def conv_backprop():
    x = param("x", (1, 4, 5, 5))
    w = const(rand(4, 2, 3, 3))
    y = o13.convolution_backprop_data(x, w, [2, 2], pads_begin=[1, 1], pads_end=[1, 1],
                                      output_padding=[1, 1])
    return [y], {"x": rand(1, 4, 5, 5)}


@case
def max_pool_indices():
    x = param("x", (1, 2, 6, 7))
    p = o8.max_pool(x, [2, 2], [1, 1], [0, 0], [1, 1], [3, 3], rounding_type="ceil")
    return [p.output(0), p.output(1)], {"x": rand(1, 2, 6, 7)}


@case
def avg_pool_exclude_pad():
    x = param("x", (1, 2, 6, 6))
    y = o1.avg_pool(x, [2, 2], [1, 1], [1, 1], [3, 3], True)
    return [y], {"x": rand(1, 2, 6, 6)}


@case
def eltwise_broadcast():
    a, b = param("a", (2, 3, 4)), param("b", (3, 1))
    outs = [o13.add(a, b), o13.subtract(a, b), o13.multiply(a, b), o13.divide(a, b),
            o13.maximum(a, b), o13.minimum(a, b), o13.squared_difference(a, b),
            o13.floor_mod(a, b), o13.mod(a, b)]
    return outs, {"a": rand(2, 3, 4), "b": rand(3, 1, lo=0.5, hi=2.0)}


@case
def power_sqrt_log():
    x = param("x", (5, 3))
    ax = o13.abs(x)
    return [o13.power(ax, const(np.float32(1.5))), o13.sqrt(ax), o13.log(ax),
            o13.exp(x)], {"x": rand(5, 3, lo=0.1, hi=3)}


@case
def activations():
    x = param("x", (2, 3, 4))
    outs = [o13.relu(x), o13.sigmoid(x), o13.tanh(x), o13.hswish(x), o13.hsigmoid(x),
            o13.swish(x), o13.swish(x, const(np.float32(1.7))), o13.mish(x),
            o13.elu(x, 0.7), o13.clamp(x, -0.5, 0.25), o13.softplus(x),
            o13.softsign(x), o13.gelu(x, "erf"), o13.gelu(x, "tanh"), o13.erf(x),
            o13.negative(x), o13.abs(x), o13.floor(x), o13.ceiling(x), o13.sign(x),
            o13.round(x, "half_to_even"), o13.round(x, "half_away_from_zero")]
    return outs, {"x": rand(2, 3, 4, lo=-3, hi=3)}


@case
def prelu_channels():
    x = param("x", (1, 3, 2, 2))
    return [o13.prelu(x, const(np.array([0.1, 0.2, 0.3], np.float32)))], {"x": rand(1, 3, 2, 2)}


@case
def softmax():
    x = param("x", (2, 3, 5))
    return [o8.softmax(x, -1), o8.softmax(x, 1), o13.log_softmax(x, 2)], {"x": rand(2, 3, 5)}


@case
def shape_chain():
    x = param("x", (2, 3, 4))
    s = o13.shape_of(x)
    d = o8.gather(s, const(np.array([0, -1], np.int64)), const(np.int64(0)))
    t = o13.concat([d, const(np.array([-1], np.int64))], 0)
    return [o13.reshape(x, t, False)], {"x": rand(2, 3, 4)}


@case
def reshape_transpose_concat():
    x = param("x", (2, 3, 4))
    r = o13.reshape(x, const(np.array([0, -1], np.int64)), True)
    t = o13.transpose(x, const(np.array([2, 0, 1], np.int64)))
    c = o13.concat([x, x], -1)
    return [r, t, c], {"x": rand(2, 3, 4)}


@case
def squeeze_unsqueeze_broadcast():
    x = param("x", (3, 1, 2))
    return [o13.squeeze(x, const(np.array([1], np.int64))),
            o13.unsqueeze(x, const(np.array([0, 3], np.int64))),
            o13.broadcast(x, const(np.array([2, 3, 4, 2], np.int64))),
            o13.broadcast(x, const(np.array([3, 1], np.int64)), broadcast_spec="bidirectional"),
            o13.tile(x, const(np.array([2, 1, 3], np.int64)))], {"x": rand(3, 1, 2)}


@case
def matmul_transpose():
    a, b = param("a", (2, 3, 4)), param("b", (5, 4))
    return [o13.matmul(a, b, False, True), o13.matmul(b, a, False, True)], \
        {"a": rand(2, 3, 4), "b": rand(5, 4)}


@case
def convert_select_compare():
    a, b = param("a", (4, 3)), param("b", (3,))
    m = o13.logical_and(o13.less(a, b), o13.not_equal(a, const(np.float32(0))))
    return [o13.select(m, a, b), o13.convert(o13.greater_equal(a, b), "f32"),
            o13.convert(o13.multiply(a, const(np.float32(10))), "i32")], \
        {"a": rand(4, 3), "b": rand(3)}


@case
def pad_modes():
    x = param("x", (1, 2, 3, 4))
    pb, pe = const(np.array([0, 0, 1, 2], np.int64)), const(np.array([0, 0, 2, 1], np.int64))
    return [o13.pad(x, pb, pe, "constant", const(np.float32(0.5))),
            o13.pad(x, pb, pe, "reflect"), o13.pad(x, pb, pe, "edge")], {"x": rand(1, 2, 3, 4)}


@case
def split_variadic():
    x = param("x", (2, 6, 3))
    s = o13.split(x, const(np.int64(1)), 3)
    v = o13.variadic_split(x, const(np.int64(1)), const(np.array([1, -1, 2], np.int64)))
    return [s.output(0), s.output(2), v.output(1), v.output(2)], {"x": rand(2, 6, 3)}


@case
def strided_slice():
    x = param("x", (4, 5, 6))
    a = o13.strided_slice(x, const(np.array([1, 0, 5], np.int64)), const(np.array([3, 0, 0], np.int64)),
                          const(np.array([1, 1, -2], np.int64)), [0, 1, 0], [0, 1, 1])
    b = o13.strided_slice(x, const(np.array([2, 1], np.int64)), const(np.array([3, 4], np.int64)),
                          const(np.array([1, 2], np.int64)), [0, 0], [0, 0], shrink_axis_mask=[1, 0])
    return [a, b], {"x": rand(4, 5, 6)}


@case
def slice8():
    x = param("x", (4, 5, 6))
    y = o8.slice(x, const(np.array([4, 1], np.int64)), const(np.array([-100, 5], np.int64)),
                 const(np.array([-2, 2], np.int64)), const(np.array([2, 0], np.int64)))
    return [y], {"x": rand(4, 5, 6)}


@case
def interpolate():
    x = param("x", (1, 2, 3, 4))
    a = o13.interpolate(x, const(np.array([6, 7], np.int64)), "nearest", "sizes",
                        axes=const(np.array([2, 3], np.int64)),
                        coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    b = o13.interpolate(x, const(np.array([2.0, 1.5], np.float32)), "linear_onnx", "scales",
                        axes=const(np.array([2, 3], np.int64)),
                        coordinate_transformation_mode="half_pixel")
    c = o13.interpolate(x, const(np.array([1, 2, 5, 5], np.int64)), "cubic", "sizes",
                        coordinate_transformation_mode="align_corners")
    return [a, b, c], {"x": rand(1, 2, 3, 4)}


@case
def reductions():
    x = param("x", (2, 3, 4))
    ax = const(np.array([1, -1], np.int64))
    return [o13.reduce_mean(x, ax, True), o13.reduce_sum(x, ax, False),
            o13.reduce_max(x, const(np.int64(0)), False), o13.reduce_min(x, ax, True),
            o13.reduce_prod(x, ax, False), o13.reduce_l2(x, ax, True),
            o13.reduce_l1(x, ax, False)], {"x": rand(2, 3, 4)}


@case
def topk():
    x = param("x", (3, 7))
    t = o13.topk(x, const(np.int64(3)), 1, "max", "value")
    u = o13.topk(x, const(np.int64(2)), 0, "min", "value", index_element_type="i64")
    return [t.output(0), t.output(1), u.output(0), u.output(1)], {"x": rand(3, 7)}


@case
def depth_space():
    x = param("x", (1, 8, 2, 3))
    d = o13.depth_to_space(x, "blocks_first", 2)
    e = o13.depth_to_space(x, "depth_first", 2)
    s = o13.space_to_depth(o13.depth_to_space(x, "blocks_first", 2), "blocks_first", 2)
    return [d, e, s], {"x": rand(1, 8, 2, 3)}


@case
def norms():
    x = param("x", (2, 3, 4, 5))
    bn1 = o1.batch_norm_inference(x, const(rand(3, lo=0.5, hi=1.5)), const(rand(3)),
                                  const(rand(3)), const(rand(3, lo=0.5, hi=2)), 1e-3)
    bn5 = o5.batch_norm_inference(x, const(rand(3, lo=0.5, hi=1.5)), const(rand(3)),
                                  const(rand(3)), const(rand(3, lo=0.5, hi=2)), 1e-3)
    l2 = o13.normalize_l2(x, const(np.array([1], np.int64)), 1e-6, "add")
    mvn = o13.mvn(x, const(np.array([2, 3], np.int64)), True, 1e-5, "inside_sqrt")
    mvn2 = o13.mvn(x, const(np.array([1, 2, 3], np.int64)), True, 1e-3, "outside_sqrt")
    lrn = o13.lrn(x, const(np.array([1], np.int64)), 1e-2, 0.75, 1.0, 3)
    return [bn1, bn5, l2, mvn, mvn2, lrn], {"x": rand(2, 3, 4, 5)}


@case
def index_ops():
    x = param("x", (4, 3))
    g = o13.gather_elements(x, const(np.array([[0, 1, 2], [3, 0, 1]], np.int64)), 0)
    s = o13.scatter_nd_update(x, const(np.array([[1], [3]], np.int64)), const(rand(2, 3)))
    c = o13.cumsum(x, const(np.int64(0)), exclusive=True, reverse=True)
    e = o13.einsum([x, x], "ij,kj->ik")
    r = o13.range(const(np.float32(0.5)), const(np.float32(3.0)), const(np.float32(0.5)), "f32")
    h = o13.one_hot(const(np.array([0, 2, 1], np.int64)), const(np.int64(4)),
                    const(np.float32(2.0)), const(np.float32(-1.0)), -1)
    return [g, s, c, e, r, h], {"x": rand(4, 3)}


@case
def scatter_reductions():
    import openvino.opset12 as o12
    import openvino.opset15 as o15
    x = param("x", (4, 3))
    idx = const(np.array([[1], [3], [1]], np.int64))
    s = o15.scatter_nd_update(x, idx, const(rand(3, 3)), "sum")
    m = o15.scatter_nd_update(x, idx, const(rand(3, 3)), "max")
    e = o12.scatter_elements_update(x, const(np.array([[0, 1, 2], [0, 3, 2]], np.int64)),
                                    const(rand(2, 3)), const(np.int64(0)), "prod")
    return [s, m, e], {"x": rand(4, 3)}


def check_preprocess(tools, tmp):
    """--reverse-channels, --mean-values, --scale-values: the converted model
    fed raw data gives the original model's outputs on (reversed raw - mean) / scale."""
    x = param("x", (1, 3, 5, 4))
    y = o13.relu(o13.convolution(x, const(rand(2, 3, 3, 3)), [1, 1], [1, 1], [1, 1], [1, 1]))
    model = ov.Model([y], [x], "preprocess")
    xml, rt = os.path.join(tmp, "preprocess.xml"), os.path.join(tmp, "preprocess-rt.xml")
    ov.save_model(model, xml, compress_to_fp16=False)
    mean, scale = np.array([10, 20, 30], np.float32), np.array([2, 4, 8], np.float32)
    raw = rand(1, 3, 5, 4, lo=0, hi=255)
    x_model = (raw[:, ::-1] - mean[None, :, None, None]) / scale[None, :, None, None]
    core = ov.Core()
    ref = np.asarray(list(core.compile_model(core.read_model(xml), "CPU", ir_venv.F32)({"x": x_model}).values())[0])
    rc, log = run([tools.clinfer_convert, xml, "--output", rt, "--reverse-channels", "x",
                   "--mean-values", "x=10,20,30", "--scale-values", "x=2,4,8"])
    errors = [log.strip()] if rc else []
    if not rc:
        got = np.asarray(list(core.compile_model(core.read_model(rt), "CPU", ir_venv.F32)({"x": raw}).values())[0])
        err = compare(got, ref)
        if err:
            errors.append("OpenVINO: " + err)
        np.save(os.path.join(tmp, "preprocess-raw.npy"), raw)
        out_dir = os.path.join(tmp, "preprocess-out")
        rc, log = run([tools.clinfer_run, rt, "--input", "x=" + os.path.join(tmp, "preprocess-raw.npy"),
                       "--output-dir", out_dir])
        err = log.strip() if rc else compare(np.load(os.path.join(out_dir, "output_0.npy")), ref)
        if err:
            errors.append("clinfer: " + err)
    print("%-28s convert %s" % ("preprocess", "ok" if not errors else "FAIL: " + "; ".join(errors)))
    return not errors


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    return proc.returncode, proc.stdout


def compare(out, ref):
    if out.shape != ref.shape:
        return "shape %s, expected %s" % (out.shape, ref.shape)
    if out.dtype != ref.dtype:
        return "dtype %s, expected %s" % (out.dtype, ref.dtype)
    if ref.size == 0:
        return None
    if not np.issubdtype(ref.dtype, np.floating):
        bad = int((out != ref).sum())
        return "%d values differ" % bad if bad else None
    tol = 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    diff = float(np.max(np.abs(out.astype(np.float64) - ref.astype(np.float64))))
    return None if diff <= tol else "max|diff|=%.3g > %.3g" % (diff, tol)


def check_case(name, fn, tools, tmp):
    outs, feeds = fn()
    params = sorted({p.get_name(): p for p in _parameters(outs)}.values(),
                    key=lambda p: p.get_friendly_name())
    model = ov.Model([o if isinstance(o, ov.Output) else o.output(0) for o in outs], params, name)
    xml = os.path.join(tmp, name + ".xml")
    ov.save_model(model, xml, compress_to_fp16=False)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(xml), "CPU", ir_venv.F32)
    ref = compiled(feeds)
    refs = [np.asarray(ref[p]) for p in compiled.outputs]
    inputs = []
    for pname, arr in feeds.items():
        path = os.path.join(tmp, "%s-%s.npy" % (name, pname))
        np.save(path, arr)
        inputs += ["--input", "%s=%s" % (pname, path)]
    ok = True
    out_dir = os.path.join(tmp, name + "-out")
    rc, log = run([tools.clinfer_run, xml, "--output-dir", out_dir] + inputs)
    errors = [log.strip().splitlines()[-1] if log.strip() else "exit %d" % rc] if rc else []
    for i, r in enumerate(refs):
        if rc:
            break
        err = compare(np.load(os.path.join(out_dir, "output_%d.npy" % i)), r)
        if err:
            errors.append("output %d: %s" % (i, err))
    print("%-28s reader %s" % (name, "ok" if not errors else "FAIL: " + "; ".join(errors)))
    ok &= not errors
    rt = os.path.join(tmp, name + "-rt.xml")
    rc, log = run([tools.clinfer_convert, xml, "--output", rt])
    errors = [log.strip()] if rc else []
    if not rc:
        if "extension opset" in log:
            errors.append(log.strip())
        else:
            try:
                got = core.compile_model(core.read_model(rt), "CPU", ir_venv.F32)(feeds)
                outs_rt = list(got.values())
                for i, r in enumerate(refs):
                    err = compare(np.asarray(outs_rt[i]), r)
                    if err:
                        errors.append("output %d: %s" % (i, err))
            except Exception as exc:  # OpenVINO refused the file
                errors.append("OpenVINO: %s" % str(exc).splitlines()[0])
    print("%-28s writer %s" % (name, "ok" if not errors else "FAIL: " + "; ".join(errors)))
    return ok and not errors


def _parameters(outs):
    seen, stack, params = set(), [o.get_node() if isinstance(o, ov.Output) else o for o in outs], []
    while stack:
        n = stack.pop()
        # Node names, not id(): the Python wrappers are temporary, and a
        # freed one's id can come back for another node.
        if n.get_name() in seen:
            continue
        seen.add(n.get_name())
        if n.get_type_name() == "Parameter":
            params.append(n)
        stack += [i.get_source_output().get_node() for i in n.inputs()]
    return params


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clinfer_run")
    parser.add_argument("clinfer_convert")
    parser.add_argument("--keep", metavar="DIR", help="keep the models and outputs here")
    parser.add_argument("--only", nargs="*", help="run only these cases")
    args = parser.parse_args()
    print("OpenVINO %s" % ov.__version__)
    ok = True
    with tempfile.TemporaryDirectory(prefix="clinfer-irops-") as tmp:
        work = args.keep or tmp
        os.makedirs(work, exist_ok=True)
        for name, fn in CASES.items():
            if args.only and name not in args.only:
                continue
            ok &= check_case(name, fn, args, work)
        if not args.only or "preprocess" in args.only:
            ok &= check_preprocess(args, work)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
