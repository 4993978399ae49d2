#!/usr/bin/python3
"""Writes the inputs and numpy reference outputs for the custom-op tests
(tests/custom-op/data/): the semantics of examples/custom-op/example-ops.c
computed independently with numpy.

  /usr/bin/python3 tests/custom-op/make-reference.py
"""
import os

import numpy as np
from onnx import TensorProto, helper, save

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


def write_probe_models():
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
    print("wrote", OUT)


if __name__ == "__main__":
    main()
