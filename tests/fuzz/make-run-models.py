#!/usr/bin/env python3
"""Writes the models of the fuzz-run target (tests/fuzz/run-models/*.onnx).

Usage: /usr/bin/python3 make-run-models.py [OUT_DIR]   (needs onnx)

One small model per op whose kernel indexes memory with values from a
tensor: every such value (indices, starts and ends, pads, repeats, target
shapes, K, depth, scales and sizes) is a graph input, so the fuzzer
chooses it at run time; the data inputs have small static shapes. The
file names are numbered: the fuzz input's first byte picks one.
"""

import os
import sys

import onnx
from onnx import TensorProto as T, helper as h

F, I64 = T.FLOAT, T.INT64


def model(name, node, inputs, outputs, opset=13):
    g = h.make_graph([node], name,
                     [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(n, t, None) for n, t in outputs])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)],
                     producer_name="clinfer make-run-models.py")
    m.ir_version = 7
    return m


def n(op, ins, outs=("y",), **attrs):
    return h.make_node(op, list(ins), list(outs), **attrs)


X = ("x", F, [2, 3, 4])
MODELS = [
    ("gather", n("Gather", ["x", "i"], axis=1), [X, ("i", I64, [2, 2])]),
    ("gather-elements", n("GatherElements", ["x", "i"], axis=2),
     [X, ("i", I64, [2, 3, 2])]),
    ("gather-nd", n("GatherND", ["x", "i"]), [X, ("i", I64, [2, 2])]),
    ("scatter-elements", n("ScatterElements", ["x", "i", "u"], axis=1),
     [X, ("i", I64, [2, 2, 4]), ("u", F, [2, 2, 4])]),
    ("scatter-nd", n("ScatterND", ["x", "i", "u"]),
     [X, ("i", I64, [2, 2]), ("u", F, [2, 4])]),
    ("slice", n("Slice", ["x", "s", "e", "a", "p"]),
     [X, ("s", I64, [2]), ("e", I64, [2]), ("a", I64, [2]), ("p", I64, [2])]),
    ("resize-scales", n("Resize", ["x", "", "s"], mode="linear"),
     [("x", F, [1, 1, 3, 4]), ("s", F, [4])]),
    ("resize-sizes", n("Resize", ["x", "", "", "z"], mode="nearest"),
     [("x", F, [1, 1, 3, 4]), ("z", I64, [4])]),
    ("resize-cubic", n("Resize", ["x", "", "s"], mode="cubic",
                       coordinate_transformation_mode="align_corners"),
     [("x", F, [1, 1, 3, 4]), ("s", F, [4])]),
    ("topk", n("TopK", ["x", "k"], ["v", "i"], axis=-1), [X, ("k", I64, [1])]),
    ("nonzero", n("NonZero", ["x"]), [X]),
    ("onehot", n("OneHot", ["i", "d", "v"], axis=-1),
     [("i", I64, [3]), ("d", I64, [1]), ("v", F, [2])]),
    ("pad", n("Pad", ["x", "p", "c"], mode="constant"),
     [X, ("p", I64, [6]), ("c", F, [])]),
    ("pad-reflect", n("Pad", ["x", "p"], mode="reflect"),
     [X, ("p", I64, [6])]),
    ("pad-edge", n("Pad", ["x", "p"], mode="edge"), [X, ("p", I64, [6])]),
    ("expand", n("Expand", ["x", "s"]), [X, ("s", I64, [3])]),
    ("tile", n("Tile", ["x", "r"]), [X, ("r", I64, [3])]),
    ("reshape", n("Reshape", ["x", "s"]), [X, ("s", I64, [3])]),
    ("range", n("Range", ["a", "b", "d"]),
     [("a", F, []), ("b", F, []), ("d", F, [])]),
    ("constant-of-shape", n("ConstantOfShape", ["s"]), [("s", I64, [2])]),
    ("scatter-elements-add", n("ScatterElements", ["x", "i", "u"], axis=0,
                               reduction="add"),
     [X, ("i", I64, [1, 3, 4]), ("u", F, [1, 3, 4])], 16),
    ("gather-neg-axis", n("Gather", ["x", "i"], axis=-1), [X, ("i", I64, [3])]),
    ("cumsum", n("CumSum", ["x", "a"]), [X, ("a", I64, [])]),
    ("trilu", n("Trilu", ["x", "k"]), [X, ("k", I64, [])], 14),
    ("depth-to-space", n("DepthToSpace", ["x"], blocksize=2),
     [("x", F, [1, 4, 2, 3])]),
    # Values that decide a result's element type range: casts of any
    # float (NaN, 1e30) to integers.
    ("cast-i8", n("Cast", ["x"], to=T.INT8), [X]),
    ("cast-i64", n("Cast", ["x"], to=T.INT64), [X]),
    # A crop box from the data: coordinates far outside the input.
    ("resize-crop-nearest", n("Resize", ["x", "r", "s"], mode="nearest",
                              coordinate_transformation_mode="tf_crop_and_resize",
                              extrapolation_value=-1.0),
     [("x", F, [1, 1, 3, 4]), ("r", F, [8]), ("s", F, [4])]),
    ("resize-crop-linear", n("Resize", ["x", "r", "s"], mode="linear",
                             coordinate_transformation_mode="tf_crop_and_resize"),
     [("x", F, [1, 1, 3, 4]), ("r", F, [8]), ("s", F, [4])]),
    ("compress", n("Compress", ["x", "c"], axis=1), [X, ("c", T.BOOL, [3])]),
    ("split", n("Split", ["x", "p"], ["y", "z"], axis=2),
     [X, ("p", I64, [2])]),
    ("unsqueeze", n("Unsqueeze", ["x", "a"]), [X, ("a", I64, [2])]),
    ("gather-nd-batch", n("GatherND", ["x", "i"], batch_dims=1),
     [X, ("i", I64, [2, 2, 1])]),
    ("scatter-nd-mul", n("ScatterND", ["x", "i", "u"], reduction="mul"),
     [X, ("i", I64, [2, 3]), ("u", F, [2])], 16),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "run-models")
    os.makedirs(out, exist_ok=True)
    for i, item in enumerate(MODELS):
        name, node, inputs = item[:3]
        opset = item[3] if len(item) > 3 else 13
        outs = [(o, F if o in ("y", "v", "z") else I64) for o in node.output]
        if name.startswith("cast-"):
            outs = [("y", node.attribute[0].i)]
        if name in ("nonzero",):
            outs = [("y", I64)]
        if name in ("constant-of-shape",):
            outs = [("y", F)]
        m = model(name, node, inputs, outs, opset)
        onnx.save(m, os.path.join(out, "%02d-%s.onnx" % (i, name)))
    print("make-run-models: %d models in %s" % (len(MODELS), out))


if __name__ == "__main__":
    main()
