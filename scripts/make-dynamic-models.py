#!/usr/bin/python3
"""Write tests/data/dynamic/*.onnx: models whose shapes depend on the input.

Usage (Debian: python3-onnx): /usr/bin/python3 scripts/make-dynamic-models.py
shape-chain.onnx: x[N,C,H,W] (N, H, W dynamic) -> Shape -> Slice[0:2] ->
Concat with [-1] -> Reshape(x) to [N, C, H*W] -> Relu -> y, plus
ReduceSum over the last axis -> s[N, C]. Deterministic output.
conv-batch.onnx: image[N,3,16,16] (N dynamic, the batch) -> Conv 8x3x3x3
(pad 1, fixed random weights and bias) -> Relu -> MaxPool 2x2 -> y[N,8,8,8]:
a batched request must equal N single ones.
identity-any.onnx: out = image[N,3,H,W], every dim dynamic (the element's
input-shape and fit-height widths).
"""

import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests',
                   'data', 'dynamic')


def main():
    os.makedirs(OUT, exist_ok=True)
    inits = [numpy_helper.from_array(np.array([0], np.int64), 'starts'),
             numpy_helper.from_array(np.array([2], np.int64), 'ends'),
             numpy_helper.from_array(np.array([-1], np.int64), 'minus_one'),
             numpy_helper.from_array(np.array([-1], np.int64), 'last_axis')]
    nodes = [
        helper.make_node('Shape', ['x'], ['shape'], name='shape_of_x'),
        helper.make_node('Slice', ['shape', 'starts', 'ends'], ['nc'], name='take_nc'),
        helper.make_node('Concat', ['nc', 'minus_one'], ['target'], name='target', axis=0),
        helper.make_node('Reshape', ['x', 'target'], ['flat'], name='flatten_hw'),
        helper.make_node('Relu', ['flat'], ['y'], name='relu'),
        helper.make_node('ReduceSum', ['y', 'last_axis'], ['s'], name='sum_hw', keepdims=0),
    ]
    g = helper.make_graph(
        nodes, 'shape_chain',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 3, 'H', 'W'])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 3, None]),
         helper.make_tensor_value_info('s', TensorProto.FLOAT, ['N', 3])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 7
    m.producer_name = 'clinfer-tests'
    with open(os.path.join(OUT, 'shape-chain.onnx'), 'wb') as f:
        f.write(m.SerializeToString())

    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array(rng.uniform(-0.5, 0.5, (8, 3, 3, 3)).astype(np.float32), 'w'),
             numpy_helper.from_array(rng.uniform(-0.1, 0.1, (8,)).astype(np.float32), 'b')]
    nodes = [
        helper.make_node('Conv', ['image', 'w', 'b'], ['c'], name='conv', pads=[1, 1, 1, 1]),
        helper.make_node('Relu', ['c'], ['r'], name='relu'),
        helper.make_node('MaxPool', ['r'], ['y'], name='pool', kernel_shape=[2, 2],
                         strides=[2, 2]),
    ]
    g = helper.make_graph(
        nodes, 'conv_batch',
        [helper.make_tensor_value_info('image', TensorProto.FLOAT, ['N', 3, 16, 16])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 8, 8, 8])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 7
    m.producer_name = 'clinfer-tests'
    with open(os.path.join(OUT, 'conv-batch.onnx'), 'wb') as f:
        f.write(m.SerializeToString())

    g = helper.make_graph(
        [helper.make_node('Identity', ['image'], ['out'], name='identity')],
        'identity_any',
        [helper.make_tensor_value_info('image', TensorProto.FLOAT, ['N', 3, 'H', 'W'])],
        [helper.make_tensor_value_info('out', TensorProto.FLOAT, ['N', 3, 'H', 'W'])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 7
    m.producer_name = 'clinfer-tests'
    with open(os.path.join(OUT, 'identity-any.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


if __name__ == '__main__':
    main()
