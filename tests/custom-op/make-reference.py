#!/usr/bin/python3
"""Writes the inputs and numpy reference outputs for the custom-op tests
(tests/custom-op/data/): the semantics of examples/custom-op/example-ops.c
computed independently with numpy.

  /usr/bin/python3 tests/custom-op/make-reference.py
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")


def scaled_tanh(x, alpha, beta):
    return (alpha * np.tanh(beta * x)).astype(np.float32)


def row_topk(x, k):
    k = min(k, x.shape[-1])
    # Stable descending order: ties keep the lower index first.
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int64)


def probe_model(fail):
    """x [2,3] -> Relu -> com.test.Probe (every attribute kind) -> y."""
    attrs = dict(i=7, f=0.5, s="hello", ints=[1, 2, 3], floats=[0.25, 4.0])
    if fail:
        attrs["fail"] = 1
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Probe", ["r"], ["y"], name="probe",
                         domain="com.test", **attrs),
    ]
    graph = helper.make_graph(
        nodes, "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.test", 1)])


def relu_model():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def left_out_model():
    """x [2,3] -> com.test.Pair with input 0 and output 1 left out (empty
    names) -> y: the ports a custom op may declare required."""
    graph = helper.make_graph(
        [helper.make_node("Pair", ["", "x"], ["y", ""], name="pair",
                          domain="com.test")], "left-out",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.test", 1)])


def write_probe_models():
    save(left_out_model(), os.path.join(OUT, "left-out.onnx"))
    save(probe_model(False), os.path.join(OUT, "probe.onnx"))
    save(probe_model(True), os.path.join(OUT, "probe-fail.onnx"))
    save(relu_model(), os.path.join(OUT, "relu.onnx"))


def layers_model():
    """x [1,2,4,4] -> Relu -> com.example.ScaleShift (scale 3, shift 0.5)
    -> com.example.Upsample2x -> Sigmoid -> y [1,2,8,8]: custom OpenCL
    layers (data/example-layers.xml) between built-in ops."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("ScaleShift", ["r"], ["s"], name="scale_shift",
                         domain="com.example", scale=3.0, shift=0.5),
        helper.make_node("Upsample2x", ["s"], ["u"], name="upsample",
                         domain="com.example"),
        helper.make_node("Sigmoid", ["u"], ["y"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "custom-layers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])])
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])


def write_layers_fixture(rng):
    save(layers_model(), os.path.join(OUT, "example-layers.onnx"))
    x = rng.uniform(-2, 2, size=(1, 2, 4, 4)).astype(np.float32)
    s = np.maximum(x, 0) * np.float32(3) + np.float32(0.5)
    u = s.repeat(2, axis=2).repeat(2, axis=3)
    y = (1 / (1 + np.exp(-u.astype(np.float64)))).astype(np.float32)
    np.save(os.path.join(OUT, "layers-x.npy"), x)
    np.save(os.path.join(OUT, "layers-y.npy"), y)


def conv2d(x, w, b=None, pad=0):
    """NCHW convolution, stride 1, symmetric zero padding."""
    n, c, h, wd = x.shape
    k = w.shape[2]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - k + 1, wd + 2 * pad - k + 1
    y = np.zeros((n, w.shape[0], oh, ow))
    for i in range(k):
        for j in range(k):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow],
                           w[:, :, i, j].astype(np.float64))
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def override_fixture(rng):
    """x [1,4,8,8] through the paths a built-in op can take: a lone op, an
    element-wise chain, a conv with a fused activation, batch norm,
    residual add or bias add. Expected outputs are what the overriding
    library tests/custom-op/override-ops.c gives (Relu, Tanh, Abs:
    x + 100; Add: a + b + 100): no built-in op gives them."""
    f32 = np.float32
    x = rng.uniform(-2, 2, size=(1, 4, 8, 8)).astype(f32)
    w = [rng.uniform(-0.5, 0.5, size=(4, 4, 3, 3)).astype(f32) for _ in range(5)]
    b1 = rng.uniform(-1, 1, size=4).astype(f32)
    b3 = rng.uniform(-1, 1, size=4).astype(f32)
    bias = rng.uniform(-1, 1, size=(1, 4, 1, 1)).astype(f32)
    scale = rng.uniform(0.5, 1.5, size=4).astype(f32)
    shift = rng.uniform(-1, 1, size=4).astype(f32)
    mean = rng.uniform(-0.5, 0.5, size=4).astype(f32)
    var = rng.uniform(0.5, 2, size=4).astype(f32)
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w[0], "w1"), (b1, "b1"), (w[1], "w2"), (w[2], "w3"), (b3, "b3"),
        (w[3], "w4"), (bias, "bias"), (w[4], "w5"), (scale, "scale"),
        (shift, "shift"), (mean, "mean"), (var, "var"),
        (np.array(2, f32), "two"), (np.array(0.25, f32), "quarter")]]
    N = helper.make_node
    conv = dict(pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    nodes = [
        N("Relu", ["x"], ["relu"], name="relu"),
        N("Tanh", ["x"], ["tanh"], name="tanh"),
        N("Abs", ["x"], ["abs"], name="abs"),
        # Mul -> Abs -> Mul: one element-wise chain when built in.
        N("Mul", ["x", "two"], ["c0"], name="chain_mul"),
        N("Abs", ["c0"], ["c1"], name="chain_abs"),
        N("Mul", ["c1", "quarter"], ["chain"], name="chain_scale"),
        # Sigmoid (built in) -> Relu (overridden): a chain made of both.
        N("Sigmoid", ["x"], ["s0"], name="mixed_sigmoid"),
        N("Relu", ["s0"], ["mixed"], name="mixed_relu"),
        N("Conv", ["x", "w1", "b1"], ["k1"], name="conv1", **conv),
        N("Relu", ["k1"], ["conv_relu"], name="conv1_relu"),
        N("Conv", ["x", "w2"], ["k2"], name="conv2", **conv),
        N("BatchNormalization", ["k2", "scale", "shift", "mean", "var"],
          ["k2n"], name="conv2_bn"),
        N("Relu", ["k2n"], ["conv_bn_relu"], name="conv2_relu"),
        N("Conv", ["x", "w3", "b3"], ["k3"], name="conv3", **conv),
        N("Add", ["k3", "x"], ["k3r"], name="conv3_residual"),
        N("Relu", ["k3r"], ["conv_residual"], name="conv3_relu"),
        N("Conv", ["x", "w4"], ["k4"], name="conv4", **conv),
        N("Add", ["k4", "bias"], ["conv_bias"], name="conv4_bias"),
        N("Conv", ["x", "w5"], ["k5"], name="conv5", **conv),
        N("Tanh", ["k5"], ["conv_tanh"], name="conv5_tanh"),
    ]
    outs = ["relu", "tanh", "abs", "chain", "mixed", "conv_relu",
            "conv_bn_relu", "conv_residual", "conv_bias", "conv_tanh"]
    graph = helper.make_graph(
        nodes, "override",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [1, 4, 8, 8])
         for o in outs], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(OUT, "override.onnx"))
    xd = x.astype(np.float64)
    bn = ((conv2d(x, w[1], pad=1) - mean.reshape(1, -1, 1, 1))
          / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5)
          * scale.reshape(1, -1, 1, 1) + shift.reshape(1, -1, 1, 1))
    want = {
        "relu": xd + 100, "tanh": xd + 100, "abs": xd + 100,
        "chain": (2 * xd + 100) * 0.25,
        "mixed": 1 / (1 + np.exp(-xd)) + 100,
        "conv_relu": conv2d(x, w[0], b1, 1) + 100,
        "conv_bn_relu": bn + 100,
        "conv_residual": conv2d(x, w[2], b3, 1) + xd + 200,
        "conv_bias": conv2d(x, w[3], pad=1) + bias + 100,
        "conv_tanh": conv2d(x, w[4], pad=1) + 100,
    }
    np.save(os.path.join(OUT, "override-x.npy"), x)
    for i, o in enumerate(outs):
        np.save(os.path.join(OUT, "override-%d-%s.npy" % (i, o)),
                want[o].astype(f32))


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261123)

    x = rng.uniform(-3, 3, size=(2, 8)).astype(np.float32)
    top, idx = row_topk(scaled_tanh(x + np.float32(0.25), 2.0, 0.5), 3)
    np.save(os.path.join(OUT, "example-x.npy"), x)
    np.save(os.path.join(OUT, "example-scores.npy"),
            (top * np.float32(10)).astype(np.float32))
    np.save(os.path.join(OUT, "example-indices.npy"), idx)

    image = rng.uniform(0, 1, size=(1, 3, 32, 32)).astype(np.float32)
    pooled = image.reshape(1, 3, 8, 4, 8, 4).mean(axis=(3, 5))
    top, idx = row_topk(scaled_tanh(pooled, 1.0, 2.0), 2)
    np.save(os.path.join(OUT, "image-input.npy"), image)
    np.save(os.path.join(OUT, "image-values.npy"), np.maximum(top, 0))
    np.save(os.path.join(OUT, "image-indices.npy"), idx)
    write_probe_models()
    write_layers_fixture(rng)
    override_fixture(rng)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
