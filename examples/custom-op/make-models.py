#!/usr/bin/python3
"""Writes the example models that use the custom ops of example-ops.c.

  example.onnx        x [2,8] f32 -> Add 0.25 -> ScaledTanh (alpha 2,
                      beta 0.5) -> RowTopK (k 3) -> values * 10 = "scores",
                      indices = "indices"
  image-example.onnx  image [1,3,32,32] f32 -> AveragePool 4x4 ->
                      ScaledTanh (alpha 1, beta 2) -> RowTopK (k 2) ->
                      Relu = "values", indices = "indices" (for the
                      GStreamer element)

Run with the system Python (Debian python3-onnx):
  /usr/bin/python3 examples/custom-op/make-models.py [OUTDIR]
"""
import os
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

DOMAIN = "com.example"


def opsets():
    return [helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]


def example_model():
    nodes = [
        helper.make_node("Add", ["x", "quarter"], ["shifted"], name="shift"),
        helper.make_node("ScaledTanh", ["shifted"], ["squashed"],
                         name="squash", domain=DOMAIN, alpha=2.0, beta=0.5),
        helper.make_node("RowTopK", ["squashed"], ["top", "indices"],
                         name="topk", domain=DOMAIN, k=3),
        helper.make_node("Mul", ["top", "ten"], ["scores"], name="scale"),
    ]
    graph = helper.make_graph(
        nodes, "custom-op-example",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [2, 3])],
        initializer=[
            numpy_helper.from_array(np.array(0.25, np.float32), "quarter"),
            numpy_helper.from_array(np.array(10.0, np.float32), "ten"),
        ])
    return helper.make_model(graph, opset_imports=opsets(),
                             producer_name="clinfer examples/custom-op")


def image_model():
    nodes = [
        helper.make_node("AveragePool", ["image"], ["pooled"], name="pool",
                         kernel_shape=[4, 4], strides=[4, 4]),
        helper.make_node("ScaledTanh", ["pooled"], ["squashed"],
                         name="squash", domain=DOMAIN, alpha=1.0, beta=2.0),
        helper.make_node("RowTopK", ["squashed"], ["top", "indices"],
                         name="topk", domain=DOMAIN, k=2),
        helper.make_node("Relu", ["top"], ["values"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "custom-op-image-example",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                       [1, 3, 32, 32])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT,
                                       [1, 3, 8, 2]),
         helper.make_tensor_value_info("indices", TensorProto.INT64,
                                       [1, 3, 8, 2])])
    return helper.make_model(graph, opset_imports=opsets(),
                             producer_name="clinfer examples/custom-op")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    for name, model in (("example.onnx", example_model()),
                        ("image-example.onnx", image_model())):
        # The checker knows nothing of com.example ops: check the standard
        # parts only.
        checker.check_model(model, full_check=False)
        path = os.path.join(out, name)
        save(model, path)
        print("wrote", path)


if __name__ == "__main__":
    main()
