#!/usr/bin/env python3
"""Makes large ONNX models small enough to carry, for timing only.

  weights.py strip OUT_DIR MODEL.onnx...   writes OUT_DIR/MODEL.onnx.stripped:
      the model without its float32 initializers and Constant tensors of
      4096 or more elements, and OUT_DIR/MODEL.onnx.stats.json with each
      one's name, shape, mean and standard deviation;
  weights.py regen DIR                     writes DIR/MODEL.onnx for each
      stripped model, those tensors drawn again from a normal distribution
      with their mean and deviation (fixed seed).

The outputs of a regenerated model are meaningless; its run time is the
real model's (same shapes, same ops, weights of the same scale). Used by
scripts/device/bundle.sh and check.sh to carry the benchmark models to a
machine that cannot download them, within its transfer limit.
"""

import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

MIN_ELEMENTS = 4096


def stats_of(name, array):
    return {"name": name, "shape": list(array.shape),
            "mean": float(array.mean()), "std": float(array.std())}


def strip(out_dir, paths):
    for path in paths:
        model = onnx.load(path)
        stats, keep, nodes = [], [], []
        for init in model.graph.initializer:
            a = numpy_helper.to_array(init)
            if a.dtype == np.float32 and a.size >= MIN_ELEMENTS:
                stats.append(stats_of(init.name, a))
            else:
                keep.append(init)
        for node in model.graph.node:
            if (node.op_type == "Constant" and len(node.attribute) == 1
                    and node.attribute[0].name == "value"):
                a = numpy_helper.to_array(node.attribute[0].t)
                if a.dtype == np.float32 and a.size >= MIN_ELEMENTS:
                    stats.append(stats_of(node.output[0], a))
                    continue
            nodes.append(node)
        del model.graph.initializer[:]
        model.graph.initializer.extend(keep)
        del model.graph.node[:]
        model.graph.node.extend(nodes)
        base = os.path.join(out_dir, os.path.basename(path))
        onnx.save(model, base + ".stripped")
        with open(base + ".stats.json", "w") as f:
            json.dump(stats, f)
        print("%s: %d tensors stripped" % (os.path.basename(path), len(stats)))


def regen(directory):
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".stripped"):
            continue
        base = os.path.join(directory, name[:-len(".stripped")])
        model = onnx.load(base + ".stripped")
        with open(base + ".stats.json") as f:
            stats = json.load(f)
        rng = np.random.default_rng(1)
        for s in stats:
            a = rng.normal(s["mean"], s["std"], size=s["shape"]).astype(np.float32)
            model.graph.initializer.append(numpy_helper.from_array(a, s["name"]))
        onnx.save(model, base)
        print("%s: %d tensors drawn" % (os.path.basename(base), len(stats)))


def main(argv):
    if len(argv) >= 4 and argv[1] == "strip":
        strip(argv[2], argv[3:])
    elif len(argv) == 3 and argv[1] == "regen":
        regen(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
