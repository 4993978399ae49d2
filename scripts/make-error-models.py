#!/usr/bin/python3
"""Write the small invalid ONNX models of tests/engine/test-errors.c.

Usage (Debian: python3-onnx): /usr/bin/python3 scripts/make-error-models.py
Writes tests/data/errors/*.onnx. Deterministic: re-running changes nothing.
Each model is valid protobuf but wrong in one way the engine must report.
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests',
                   'data', 'errors')


def save(graph, name, opset=13):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 7
    m.producer_name = 'clinfer-tests'
    with open(os.path.join(OUT, name), 'wb') as f:
        f.write(m.SerializeToString())


def vi(name, shape, dt=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dt, shape)


def main():
    os.makedirs(OUT, exist_ok=True)
    # An op nobody implements, in the default domain.
    save(helper.make_graph(
        [helper.make_node('Relu', ['x'], ['r'], name='ok_relu'),
         helper.make_node('FrobnicateTensor', ['r'], ['y'], name='mystery')],
        'unknown_op', [vi('x', [1, 4])], [vi('y', [1, 4])]), 'unknown-op.onnx')
    # Conv whose group does not divide the input channels.
    w = numpy_helper.from_array(np.ones((4, 1, 3, 3), np.float32), 'w')
    save(helper.make_graph(
        [helper.make_node('Conv', ['x', 'w'], ['y'], name='bad_group_conv',
                          group=2, pads=[1, 1, 1, 1])],
        'bad_conv', [vi('x', [1, 3, 8, 8])], [vi('y', [1, 4, 8, 8])], [w]),
        'bad-conv-group.onnx')
    # Two inputs whose shapes cannot broadcast.
    save(helper.make_graph(
        [helper.make_node('Add', ['a', 'b'], ['y'], name='mismatched_add')],
        'bad_add', [vi('a', [2, 3]), vi('b', [4])], [vi('y', [2, 3])]),
        'broadcast-mismatch.onnx')
    # A cycle: n1 reads n2's output and the other way round.
    save(helper.make_graph(
        [helper.make_node('Add', ['x', 't2'], ['t1'], name='cycle_a'),
         helper.make_node('Relu', ['t1'], ['t2'], name='cycle_b')],
        'cycle', [vi('x', [2])], [vi('t2', [2])]), 'cycle.onnx')
    # A shape known only at run time: s = [4, 4] cannot hold x's 6 values.
    save(helper.make_graph(
        [helper.make_node('Reshape', ['x', 's'], ['y'], name='runtime_reshape')],
        'runtime_reshape', [vi('x', [6]), vi('s', [2], TensorProto.INT64)],
        [vi('y', None)]), 'runtime-reshape.onnx')


if __name__ == '__main__':
    main()
