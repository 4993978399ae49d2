#!/usr/bin/python3
"""Write the tiny ONNX models of the element tests (tests/gst/clinfer.c).

Usage (Debian: python3-onnx, python3-numpy):
    /usr/bin/python3 scripts/make-decoder-test-models.py
Writes tests/data/gst/*.onnx and tests/data/gst/blazeface-synthetic-expected.txt.
Deterministic: re-running changes nothing.

- identity-*.onnx: output = input, so the tensor meta holds exactly the
  pre-processed frame (layouts NCHW/NHWC, f32/f16/u8, 1 or 3 channels,
  dynamic height/width, mean/scale in the model metadata).
- ssd.onnx, classification-*.onnx, blazeface-synthetic.onnx: outputs are
  constants (Add(Mul(ReduceMean(image), 0), C)), so the decoders' results
  are known whatever the frame.
- yolov5-synthetic.onnx, yolov8-synthetic.onnx: constant YOLO outputs of
  both layouts, and yolo-synthetic-expected.txt from the reference decoder.
- rank2.onnx (input not feedable from video), multi-input.onnx
  (input-name).
"""

import importlib.util
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'tests', 'data', 'gst')


def save(graph, name, metadata=None):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 7
    m.producer_name = 'clinfer-tests'
    for key, value in (metadata or {}).items():
        entry = m.metadata_props.add()
        entry.key = key
        entry.value = value
    onnx.checker.check_model(m)
    with open(os.path.join(OUT, name), 'wb') as f:
        f.write(m.SerializeToString())


def vi(name, shape, dt=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dt, shape)


def identity(name, shape, dt=TensorProto.FLOAT, metadata=None):
    save(helper.make_graph([helper.make_node('Identity', ['image'], ['out'])],
                           name.replace('.onnx', '').replace('-', '_'),
                           [vi('image', shape, dt)], [vi('out', shape, dt)]),
         name, metadata)


def constant_outputs(name, image_shape, outputs):
    """outputs: list of (name, float32 array); each = array + 0 * mean(image)."""
    nodes = [helper.make_node('ReduceMean', ['image'], ['mean'], keepdims=0),
             helper.make_node('Mul', ['mean', 'zero'], ['nothing'])]
    inits = [numpy_helper.from_array(np.array(0, np.float32), 'zero')]
    outs = []
    for out_name, value in outputs:
        inits.append(numpy_helper.from_array(value.astype(np.float32), out_name + '_c'))
        nodes.append(helper.make_node('Add', ['nothing', out_name + '_c'], [out_name]))
        outs.append(vi(out_name, list(value.shape)))
    save(helper.make_graph(nodes, name.replace('.onnx', '').replace('-', '_'),
                           [vi('image', image_shape)], outs, inits), name)


def load_reference_decoder():
    spec = importlib.util.spec_from_file_location(
        'gst_expected', os.path.join(HERE, 'gst-expected.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def blazeface_synthetic():
    scores0 = np.full((1, 512, 1), -10.0, np.float32)
    scores1 = np.full((1, 384, 1), -10.0, np.float32)
    boxes0 = np.zeros((1, 512, 16), np.float32)
    boxes1 = np.zeros((1, 384, 16), np.float32)
    kp = np.arange(12, dtype=np.float32) - 6
    # Two overlapping anchors of the 16x16 grid (row 4, column 6): merged
    # by weighted NMS.
    a = (4 * 16 + 6) * 2
    scores0[0, a, 0] = 3.0
    boxes0[0, a] = np.concatenate([[2.0, -1.0, 20.0, 24.0], kp])
    scores0[0, a + 1, 0] = 1.0
    boxes0[0, a + 1] = np.concatenate([[4.0, 1.0, 22.0, 20.0], kp * 0.5])
    # One face on the 8x8 grid (row 5, column 2, 4th anchor).
    b = (5 * 8 + 2) * 6 + 3
    scores1[0, b, 0] = 2.0
    boxes1[0, b] = np.concatenate([[-3.0, 2.0, 30.0, 30.0], -kp])
    # Below the default threshold 0.5 (sigmoid(-0.5) = 0.38), far away.
    c = (14 * 16 + 14) * 2
    scores0[0, c, 0] = -0.5
    boxes0[0, c] = np.concatenate([[0.0, 0.0, 10.0, 10.0], kp])
    constant_outputs('blazeface-synthetic.onnx', [1, 128, 128, 3],
                     [('scores_16', scores0), ('scores_8', scores1),
                      ('boxes_16', boxes0), ('boxes_8', boxes1)])

    ref = load_reference_decoder()
    lines = ['# Expected faces of blazeface-synthetic.onnx (reference decoder of '
             'scripts/gst-expected.py),',
             '# threshold: score x_min y_min x_max y_max kx0 ky0 ... kx5 ky5 '
             '(normalised to the model input)']
    for threshold in (0.5, 0.3):
        for score, box, kps in ref.blazeface_decode([scores0, scores1], [boxes0, boxes1],
                                                    128, 128, threshold):
            lines.append('%.2f ' % threshold + ' '.join('%.6f' % v for v in [score] + box + kps))
    with open(os.path.join(OUT, 'blazeface-synthetic-expected.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


def yolo_synthetic():
    """YOLOv5-style [1, 10, 8] and YOLOv8-style [1, 7, 12] outputs (3
    classes, 64x64 input): a box suppressed by a better one of its class, one
    of another class at the same place (kept: NMS is per class), one below
    0.5 but above 0.3, one reaching past the input's edge."""
    rows = [
        # cx, cy, w, h, objectness, class scores
        [20, 20, 16, 16, 0.9, 0.1, 0.95, 0.2],
        [22, 21, 16, 14, 0.8, 0.1, 0.9, 0.1],
        [21, 20, 15, 16, 0.9, 0.8, 0.1, 0.1],
        [50, 50, 30, 30, 0.9, 0.1, 0.2, 0.4],
        [60, 8, 20, 10, 0.95, 0.0, 0.0, 1.0],
    ]
    v5 = np.zeros((1, 10, 8), np.float32)
    v5[0, :, 4] = 0.01
    v5[0, :len(rows)] = rows
    constant_outputs('yolov5-synthetic.onnx', [1, 3, 64, 64], [('output0', v5)])
    # v8: no objectness, the class scores are the scores; columns.
    cols = [[r[0], r[1], r[2], r[3]] + [r[4] * c for c in r[5:]] for r in rows]
    v8 = np.zeros((1, 7, 12), np.float32)
    for i, col in enumerate(cols):
        v8[0, :, i + 3] = col
    constant_outputs('yolov8-synthetic.onnx', [1, 3, 64, 64], [('output0', v8)])

    ref = load_reference_decoder()
    lines = ['# Expected boxes of the synthetic YOLO models (reference decoder of '
             'scripts/gst-expected.py, IoU threshold 0.45),',
             '# model threshold: score class_id x0 y0 x1 y1 (model pixels, not clipped)']
    for name, out in (('yolov5-synthetic.onnx', v5), ('yolov8-synthetic.onnx', v8)):
        for threshold in (0.5, 0.3):
            for score, c, box in ref.yolo_decode(out, threshold):
                lines.append('%s %.2f: %.6f %d ' % (name, threshold, score, c)
                             + ' '.join('%.4f' % v for v in box))
    with open(os.path.join(OUT, 'yolo-synthetic-expected.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


def ctc_synthetic():
    """A recogniser's [1, 6, 5] softmax output (blank, a, b, c, space):
    steps a, a, blank, b, space, c -> "ab c", confidence the mean of the
    kept steps' best scores (0.9, 0.7, 0.6, 0.95) = 0.7875."""
    best = [(1, 0.9), (1, 0.8), (0, 0.99), (2, 0.7), (4, 0.6), (3, 0.95)]
    out = np.zeros((1, len(best), 5), np.float32)
    for step, (c, p) in enumerate(best):
        out[0, step, :] = (1 - p) / 4
        out[0, step, c] = p
    constant_outputs('ctc-synthetic.onnx', [1, 3, 8, 32], [('logits', out)])
    with open(os.path.join(OUT, 'ctc-labels.txt'), 'w') as f:
        f.write('a\nb\nc\n')


def textdet_synthetic():
    """A DB text detector's [1, 1, 32, 64] map (64x32 input): a line of
    probability 0.9 at x 8-31, y 4-11 (kept), a faint one (0.4: in the mask,
    scoring under 0.5) and a 2x2 speck (too small)."""
    m = np.zeros((1, 1, 32, 64), np.float32)
    m[0, 0, 4:12, 8:32] = 0.9
    m[0, 0, 20:26, 40:50] = 0.4
    m[0, 0, 2:4, 56:58] = 0.9
    constant_outputs('textdet-synthetic.onnx', [1, 3, 32, 64], [('maps', m)])


def main():
    os.makedirs(OUT, exist_ok=True)
    identity('identity-nchw-f32.onnx', [1, 3, 12, 16])
    identity('identity-nhwc-f32.onnx', [1, 10, 14, 3])
    identity('identity-nchw-f16.onnx', [1, 3, 8, 10], TensorProto.FLOAT16)
    identity('identity-nhwc-u8.onnx', [1, 9, 7, 3], TensorProto.UINT8)
    identity('identity-gray.onnx', [1, 1, 8, 8])
    identity('identity-dynamic.onnx', [1, 3, 'height', 'width'])
    identity('identity-metadata.onnx', [1, 3, 6, 6],
             metadata={'mean_values': '10,20,30', 'scale_values': '2'})
    identity('identity-blazeface-input.onnx', [1, 128, 128, 3])
    identity('rank2.onnx', [1, 10])

    # The custom op of tests/gst/fail-ops.c: fails the inference of frames
    # whose first value is above 0.5 (clinfer-async's in-flight error).
    # Gate, of the same library, holds inferences until the test opens it
    # (clinfer-async's in-flight limit).
    for op, name in (('FailIfBright', 'fail-if-bright.onnx'), ('Gate', 'gate.onnx')):
        m = helper.make_model(helper.make_graph(
            [helper.make_node(op, ['image'], ['out'], domain='com.clinfer.test')],
            name.replace('.onnx', '').replace('-', '_'), [vi('image', [1, 3, 8, 8])],
            [vi('out', [1, 3, 8, 8])]),
            opset_imports=[helper.make_opsetid('', 13), helper.make_opsetid('com.clinfer.test', 1)])
        m.ir_version = 7
        m.producer_name = 'clinfer-tests'
        with open(os.path.join(OUT, name), 'wb') as f:
            f.write(m.SerializeToString())

    save(helper.make_graph(
        [helper.make_node('Identity', ['image'], ['image_out']),
         helper.make_node('Identity', ['aux'], ['aux_out'])],
        'multi_input', [vi('aux', [1, 4]), vi('image', [1, 3, 8, 8])],
        [vi('image_out', [1, 3, 8, 8]), vi('aux_out', [1, 4])]), 'multi-input.onnx')

    # ssd: rows (image_id, label, confidence, x_min, y_min, x_max, y_max);
    # image_id -1 ends the list (the last row must be ignored).
    constant_outputs('ssd.onnx', [1, 3, 32, 32], [('detection_out', np.array([[[
        [0, 1, 0.9, 0.1, 0.2, 0.5, 0.6],
        [0, 2, 0.3, 0.0, 0.0, 1.0, 1.0],
        [0, 0, 0.75, 0.5, 0.5, 0.9, 1.0],
        [-1, 0, 0, 0, 0, 0, 0],
        [0, 1, 0.99, 0.0, 0.0, 0.5, 0.5]]]], np.float32))])
    constant_outputs('classification-logits.onnx', [1, 3, 16, 16],
                     [('logits', np.array([[0.5, 2.0, -1.0, 3.0, 1.0]], np.float32))])
    constant_outputs('classification-probs.onnx', [1, 3, 16, 16],
                     [('probs', np.array([[0.1, 0.6, 0.2, 0.1]], np.float32))])
    blazeface_synthetic()
    yolo_synthetic()
    ctc_synthetic()
    textdet_synthetic()
    with open(os.path.join(OUT, 'labels.txt'), 'w') as f:
        f.write('background\nperson\ncar\n')


if __name__ == '__main__':
    main()
