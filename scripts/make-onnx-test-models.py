#!/usr/bin/python3
"""Write the small ONNX fixtures of tests/engine/test-onnx-reader.c (and
pad-conv.onnx, for tests/tools/test-cli.py).

Usage (Debian: python3-onnx, python3-numpy):
    /usr/bin/python3 scripts/make-onnx-test-models.py

Writes tests/data/onnx/*.onnx (plus ext.bin and tensor.pb), among them the
recurrent-*.onnx variants of RNN, GRU and LSTM that scripts/make-goldens.py
makes goldens for. The models are
built with onnx.helper but never checked with onnx.checker: several are
invalid on purpose and exercise the reader's error paths. The output is
deterministic, so re-running it leaves the tree unchanged.
"""

import os
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests',
                   'data', 'onnx')


def model(graph, ir=8, opsets=(('', 17),), metadata=None):
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = ir
    m.producer_name = 'clinfer-tests'
    for k, v in (metadata or {}).items():
        e = m.metadata_props.add()
        e.key, e.value = k, v
    return m


def save(m, name):
    with open(os.path.join(OUT, name), 'wb') as f:
        f.write(m.SerializeToString())


def typed_tensor(name, dt, dims, field, values):
    """A TensorProto using a typed repeated field instead of raw_data."""
    t = TensorProto()
    t.name = name
    t.data_type = dt
    t.dims.extend(dims)
    getattr(t, field).extend(values)
    return t


def basic_initializers():
    half = np.array([1.5, -2.0], dtype=np.float16).view(np.uint16)
    bf16 = [0x3fc0, 0xc000]  # 1.5, -2.0
    return [
        numpy_helper.from_array(
            np.arange(12, dtype=np.float32).reshape(3, 4), 'w'),  # raw_data
        typed_tensor('b', TensorProto.FLOAT, [4], 'float_data',
                     [0.5, 1.5, 2.5, 3.5]),
        typed_tensor('i8', TensorProto.INT8, [3], 'int32_data', [-1, 0, 127]),
        typed_tensor('u16', TensorProto.UINT16, [2], 'int32_data', [7, 65535]),
        typed_tensor('h', TensorProto.FLOAT16, [2], 'int32_data',
                     [int(v) for v in half]),
        typed_tensor('bf', TensorProto.BFLOAT16, [2], 'int32_data', bf16),
        typed_tensor('bo', TensorProto.BOOL, [3], 'int32_data', [1, 0, 1]),
        typed_tensor('i64', TensorProto.INT64, [2, 1], 'int64_data',
                     [-5, 1 << 40]),
        typed_tensor('u32', TensorProto.UINT32, [2], 'uint64_data',
                     [1, 4000000000]),
        typed_tensor('u64', TensorProto.UINT64, [1], 'uint64_data',
                     [1 << 63]),
        typed_tensor('d', TensorProto.DOUBLE, [2], 'double_data',
                     [0.25, -1e300]),
        typed_tensor('s', TensorProto.STRING, [2], 'string_data',
                     [b'hello', b'']),
        typed_tensor('empty', TensorProto.FLOAT, [0, 3], 'float_data', []),
    ]


def attrs_node():
    small = helper.make_graph(
        [helper.make_node('Identity', ['x'], ['gi'])], 'attr_graph', [],
        [helper.make_tensor_value_info('gi', TensorProto.FLOAT, None)])
    t = numpy_helper.from_array(np.array([1, 2], dtype=np.int32), 'tt')
    return helper.make_node(
        'Attrs', ['add_out', '', 'c_f'], ['attrs_out', ''], name='attrs',
        domain='test.domain', f=0.5, i=-3, s='text', t=t, g=small,
        floats=[1.0, 2.0], ints=[4, 5, 6], strings=['a', 'bc'],
        tensors=[t, t], graphs=[small, small])


def make_basic():
    one = numpy_helper.from_array(np.array([[9.0]], dtype=np.float32), 'one')
    nodes = [
        # Consumer before producer on purpose: the reader must still connect.
        helper.make_node('Add', ['mul_out', 'b'], ['add_out'], name='add'),
        helper.make_node('Mul', ['x', 'w'], ['mul_out'], name='mul'),
        helper.make_node('Relu', ['add_out'], ['relu_out'], name='relu',
                         domain='ai.onnx'),
        helper.make_node('Constant', [], ['c_f'], value_float=2.5),
        helper.make_node('Constant', [], ['c_fs'], value_floats=[1.0, 2.0]),
        helper.make_node('Constant', [], ['c_i'], value_int=7),
        helper.make_node('Constant', [], ['c_is'], value_ints=[1, 2, 3]),
        helper.make_node('Constant', [], ['c_s'], value_string='str'),
        helper.make_node('Constant', [], ['c_ss'], value_strings=['p', 'q']),
        helper.make_node('Constant', [], ['c_t'], name='ct', value=one),
        attrs_node(),
    ]
    inputs = [
        helper.make_tensor_value_info('x', TensorProto.FLOAT,
                                      ['batch', 3, 4]),
        helper.make_tensor_value_info('y', TensorProto.INT64, None),
        helper.make_tensor_value_info('z', TensorProto.UINT8, [2, None]),
    ]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
               for n in ('attrs_out', 'relu_out', 'w', 'x')]
    g = helper.make_graph(nodes, 'basic', inputs, outputs,
                          initializer=basic_initializers())
    save(model(g, opsets=(('', 17), ('test.domain', 1)),
               metadata={'author': 'clinfer', 'purpose': 'tests'}), 'basic.onnx')


def make_subgraph():
    # inner reads 'y' from the top graph through the else branch.
    inner = helper.make_graph(
        [helper.make_node('Neg', ['y'], ['inner_out'])], 'inner', [],
        [helper.make_tensor_value_info('inner_out', TensorProto.FLOAT, None)])
    then_g = helper.make_graph(
        [helper.make_node('Abs', ['x'], ['then_out'])], 'then', [],
        [helper.make_tensor_value_info('then_out', TensorProto.FLOAT, None)])
    else_g = helper.make_graph(
        [helper.make_node('If', ['cond'], ['else_out'], then_branch=inner,
                          else_branch=inner)], 'else', [],
        [helper.make_tensor_value_info('else_out', TensorProto.FLOAT, None)])
    g = helper.make_graph(
        [helper.make_node('If', ['cond'], ['out'], name='if',
                          then_branch=then_g, else_branch=else_g)],
        'subgraph',
        [helper.make_tensor_value_info('cond', TensorProto.BOOL, []),
         helper.make_tensor_value_info('x', TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info('y', TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info('out', TensorProto.FLOAT, [2])])
    save(model(g), 'subgraph.onnx')


def simple_graph(nodes, initializer=(), name='g'):
    return helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info('out', TensorProto.FLOAT, [3])],
        initializer=list(initializer))


def make_errors():
    relu = [helper.make_node('Relu', ['x'], ['out'])]
    save(model(simple_graph(relu), ir=10), 'ir-too-new.onnx')
    save(model(simple_graph(relu), opsets=(('', 99),)), 'opset-too-new.onnx')
    save(model(simple_graph([helper.make_node('Add', ['x', 'nope'], ['out'],
                                              name='adder')])),
         'missing-ref.onnx')
    bad = TensorProto(name='short_w', data_type=TensorProto.FLOAT, dims=[3],
                      raw_data=b'\0' * 8)
    save(model(simple_graph([helper.make_node('Add', ['x', 'short_w'],
                                              ['out'])], [bad])),
         'init-size-mismatch.onnx')
    odd = TensorProto(name='odd', data_type=99, dims=[1], raw_data=b'\0')
    save(model(simple_graph([helper.make_node('Add', ['x', 'odd'], ['out'])],
                            [odd])), 'unknown-dtype.onnx')
    save(model(simple_graph([helper.make_node('Relu', ['x'], ['out']),
                             helper.make_node('Neg', ['x'], ['out'])])),
         'duplicate-output.onnx')
    m = model(simple_graph(relu))
    m.ClearField('graph')
    save(m, 'no-graph.onnx')


def external(name, location, offset, length):
    t = TensorProto(name='ext_w', data_type=TensorProto.FLOAT, dims=[3])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (('location', location), ('offset', str(offset)),
                 ('length', str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    save(model(simple_graph([helper.make_node('Add', ['x', 'ext_w'], ['out'])],
                            [t])), name)


def make_external():
    with open(os.path.join(OUT, 'ext.bin'), 'wb') as f:
        f.write(b'\xff' * 8 + struct.pack('<3f', 1.0, 2.0, 3.0))
    external('ext.onnx', 'ext.bin', 8, 12)
    external('ext-escape.onnx', '../onnx/ext.bin', 8, 12)
    external('ext-short.onnx', 'ext.bin', 12, 12)


def make_tensor_file():
    t = numpy_helper.from_array(np.array([[1, -2, 3]], dtype=np.int64), 't0')
    with open(os.path.join(OUT, 'tensor.pb'), 'wb') as f:
        f.write(t.SerializeToString())


def make_pad_conv(name='pad-conv.onnx', ends=(1, 1)):
    """x [1,3,16,16] -> Pad (TensorFlow's SAME before a stride-2 conv:
    0 before, 1 after each spatial dim) 'pad' -> Conv 3x3 stride 2 'conv'
    -> y [1,4,8,8]: fold-pad makes it one Conv. With a negative end
    (crop-pad-conv.onnx: 1 after H, 1 cropped after W) the Pad stays, on
    the reference kernel: no fast kernel crops."""
    rng = np.random.default_rng(5)
    w_out = (16 + ends[1] - 3) // 2 + 1
    inits = [numpy_helper.from_array(
                 rng.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32), 'w'),
             numpy_helper.from_array(
                 np.array([0, 0, 0, 0, 0, 0, ends[0], ends[1]], np.int64),
                 'pads')]
    g = helper.make_graph(
        [helper.make_node('Pad', ['x', 'pads'], ['p'], name='pad',
                          mode='constant'),
         helper.make_node('Conv', ['p', 'w'], ['y'], name='conv',
                          kernel_shape=[3, 3], strides=[2, 2])],
        'pad_conv', [helper.make_tensor_value_info('x', TensorProto.FLOAT,
                                                   [1, 3, 16, 16])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT,
                                       [1, 4, 8, w_out])],
        inits)
    save(model(g), name)


# The recurrent ops' variants (tests/models/meson.build, golden-op-*; the
# goldens by scripts/make-goldens.py): seq 5, batch 3, input 4, hidden 6.
# Weights, biases, peepholes and sequence lengths are initialisers; X and
# the initial states are inputs. Layout 1 is not here: ONNX Runtime refuses
# it (the conformance suite's *_batchwise tests cover it).
REC_SEQ, REC_BATCH, REC_IN, REC_HID = 5, 3, 4, 6
RECURRENT = [
    # name, op, opset, attributes, sequence_lens, initial states, outputs
    ('lstm-bidir-lens', 'LSTM', 7, dict(direction='bidirectional'),
     [5, 2, 4], True, 'P', ['y', 'y_h', 'y_c']),
    ('lstm-reverse-clip-forget', 'LSTM', 7,
     dict(direction='reverse', clip=1.25, input_forget=1),
     None, True, None, ['y', 'y_h', 'y_c']),
    ('lstm-h-only', 'LSTM', 7, dict(hidden_size=REC_HID), [3, 5, 1], False,
     None, ['', 'y_h']),
    ('gru-bidir-lbr-lens', 'GRU', 7,
     dict(direction='bidirectional', linear_before_reset=1), [3, 5, 1], True,
     None, ['y', 'y_h']),
    ('gru-reverse-acts', 'GRU', 7,
     dict(direction='reverse',
          activations=['HardSigmoid', 'Softsign'], activation_alpha=[0.3],
          activation_beta=[0.4]), [4, 5, 2], False, None, ['y', 'y_h']),
    ('gru-leaky-alpha', 'GRU', 7,
     dict(activations=['Sigmoid', 'LeakyRelu'], activation_alpha=[0.2]),
     None, False, None, ['y', 'y_h']),
    ('rnn-bidir-acts', 'RNN', 7,
     dict(direction='bidirectional', activations=['Relu', 'ScaledTanh'],
          activation_alpha=[0.8], activation_beta=[1.5]),
     [2, 5, 3], True, None, ['y', 'y_h']),
]


def make_recurrent():
    rng = np.random.default_rng(7)
    for name, op, opset, attrs, lens, states, peep, outs in RECURRENT:
        attrs = dict(attrs)
        dirs = 2 if attrs.get('direction') == 'bidirectional' else 1
        gates = {'RNN': 1, 'GRU': 3, 'LSTM': 4}[op]
        layout = attrs.get('layout', 0)
        f32 = TensorProto.FLOAT

        def arr(*shape):
            return rng.uniform(-0.6, 0.6, shape).astype(np.float32)

        inits = [numpy_helper.from_array(arr(dirs, gates * REC_HID, REC_IN), 'W'),
                 numpy_helper.from_array(arr(dirs, gates * REC_HID, REC_HID), 'R'),
                 numpy_helper.from_array(arr(dirs, 2 * gates * REC_HID), 'B')]
        ins = ['x', 'W', 'R', 'B', '', '', '', '']
        x_shape = [REC_BATCH, REC_SEQ, REC_IN] if layout else [REC_SEQ, REC_BATCH, REC_IN]
        s_shape = [REC_BATCH, dirs, REC_HID] if layout else [dirs, REC_BATCH, REC_HID]
        graph_in = [helper.make_tensor_value_info('x', f32, x_shape)]
        if lens is not None:
            inits.append(numpy_helper.from_array(np.array(lens, np.int32), 'lens'))
            ins[4] = 'lens'
        if states:
            ins[5] = 'h0'
            graph_in.append(helper.make_tensor_value_info('h0', f32, s_shape))
            if op == 'LSTM':
                ins[6] = 'c0'
                graph_in.append(helper.make_tensor_value_info('c0', f32, s_shape))
        if peep:
            inits.append(numpy_helper.from_array(arr(dirs, 3 * REC_HID), 'P'))
            ins[7] = 'P'
        while ins[-1] == '':
            ins.pop()
        y_shape = ([REC_BATCH, REC_SEQ, dirs, REC_HID] if layout
                   else [REC_SEQ, dirs, REC_BATCH, REC_HID])
        graph_out = [helper.make_tensor_value_info(o, f32, y_shape if i == 0 else s_shape)
                     for i, o in enumerate(outs) if o]
        node = helper.make_node(op, ins, outs, name=name,
                                hidden_size=attrs.pop('hidden_size', REC_HID), **attrs)
        g = helper.make_graph([node], name.replace('-', '_'), graph_in, graph_out, inits)
        save(model(g, opsets=(('', opset),)), 'recurrent-%s.onnx' % name)


def main():
    os.makedirs(OUT, exist_ok=True)
    make_pad_conv()
    make_pad_conv('crop-pad-conv.onnx', (1, -1))
    make_basic()
    make_subgraph()
    make_errors()
    make_external()
    make_tensor_file()
    make_recurrent()


if __name__ == '__main__':
    main()
