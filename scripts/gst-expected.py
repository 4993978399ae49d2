#!/usr/bin/env python3
"""Expected BlazeFace detections on the test photo for the element tests.

Usage: python3 scripts/gst-expected.py      (needs numpy and onnxruntime)

Runs both BlazeFace models (models/blazeface/) with ONNX Runtime on
tests/data/astronaut-128.npy and astronaut-256.npy (astronaut.png stretched
to the model size with half-pixel bilinear interpolation, (x - 127.5) /
127.5: the same pre-processing as the element's resize-method=stretch with
the blazeface defaults), decodes them with the reference decoder below and
writes tests/data/gst/astronaut-blazeface-expected.txt, one line per face:

    <model file> <score> <x_min> <y_min> <x_max> <y_max> <kx0> <ky0> ... <kx5> <ky5>

in pixels of the 512x512 photo. tests/gst/clinfer.c checks the element's
ROI metas against it. The decoder is also imported by
scripts/make-decoder-test-models.py for the synthetic BlazeFace model, so it
only needs numpy at import time.

Reference decoding (MediaPipe TensorsToDetections + NonMaxSuppression for
BlazeFace, written from MediaPipe's description, independently of
gst/gstclinferblazeface.c): anchors of a g x g grid with 2 per cell then a
(g/2) x (g/2) grid with 6 per cell, centred in their cells, size 1; score =
sigmoid(clip(logit, -100, 100)); box centre = anchor + (dx, dy) / input
size, size = (w, h) / input size; key point k = anchor + offsets 4+2k,
5+2k; weighted NMS with IoU > 0.3.
"""

import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
PHOTO_SIZE = 512


def blazeface_anchors(n_first, n_second):
    g1 = int(round(np.sqrt(n_first / 2)))
    g2 = int(round(np.sqrt(n_second / 6)))
    assert 2 * g1 * g1 == n_first and 6 * g2 * g2 == n_second
    out = []
    for g, per_cell in ((g1, 2), (g2, 6)):
        ys, xs = np.meshgrid(np.arange(g), np.arange(g), indexing='ij')
        centres = np.stack([(xs.ravel() + 0.5) / g, (ys.ravel() + 0.5) / g], 1)
        out.append(np.repeat(centres, per_cell, axis=0))
    return np.concatenate(out)


def blazeface_decode(scores, regressors, in_w, in_h, threshold=0.5,
                     iou_threshold=0.3):
    """scores: list of [1, A_i, 1]; regressors: list of [1, A_i, 16].
    Returns [(score, [x0, y0, x1, y1], [kx0, ky0, ...])] normalised to the
    model input, best first."""
    s = np.concatenate([a.reshape(-1) for a in scores]).astype(np.float64)
    r = np.concatenate([a.reshape(-1, 16) for a in regressors]).astype(np.float64)
    anchors = blazeface_anchors(scores[0].size, scores[1].size)
    prob = 1.0 / (1.0 + np.exp(-np.clip(s, -100, 100)))
    scale = np.array([in_w, in_h], np.float64)
    centre = anchors + r[:, 0:2] / scale
    size = r[:, 2:4] / scale
    boxes = np.concatenate([centre - size / 2, centre + size / 2], 1)
    kps = (anchors[:, None, :] + r[:, 4:16].reshape(-1, 6, 2) / scale).reshape(-1, 12)

    keep = np.nonzero(prob >= threshold)[0]
    order = keep[np.argsort(-prob[keep], kind='stable')]
    remaining = list(order)
    result = []
    while remaining:
        top = remaining[0]
        b = boxes[remaining]
        ix = np.minimum(b[:, 2], boxes[top, 2]) - np.maximum(b[:, 0], boxes[top, 0])
        iy = np.minimum(b[:, 3], boxes[top, 3]) - np.maximum(b[:, 1], boxes[top, 1])
        inter = np.where((ix > 0) & (iy > 0), ix * iy, 0.0)
        area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
        top_area = (boxes[top, 2] - boxes[top, 0]) * (boxes[top, 3] - boxes[top, 1])
        union = area + top_area - inter
        iou = np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)
        members = [remaining[i] for i in range(len(remaining)) if iou[i] > iou_threshold]
        if not members:
            members = [top]
        w = prob[members]
        result.append((float(prob[top]),
                       list((boxes[members] * w[:, None]).sum(0) / w.sum()),
                       list((kps[members] * w[:, None]).sum(0) / w.sum())))
        remaining = [i for i in remaining if i not in members]
    return result


def yolo_decode(output, threshold, iou_threshold=0.45):
    """Reference YOLO decoding (written from the exporters' output layouts,
    independently of gst/decoders/gstclinferyolo.c): [1, N, 5 + C] rows
    (cx, cy, w, h, objectness, class scores; score = objectness x best
    class) or [1, 4 + C, N] columns (no objectness); boxes scoring at
    least @threshold, best first, through per-class NMS (IoU above
    @iou_threshold removes the lower). Returns (score, class, [x0, y0, x1,
    y1]) in model pixels, best first."""
    a = np.asarray(output, np.float64).reshape(output.shape[-2:])
    if a.shape[0] < a.shape[1]:
        a = a.T
        boxes, obj, cls = a[:, :4], np.ones(len(a)), a[:, 4:]
    else:
        boxes, obj, cls = a[:, :4], a[:, 4], a[:, 5:]
    cands = []
    for i in range(len(a)):
        c = int(np.argmax(cls[i]))
        score = obj[i] * cls[i, c]
        if score >= threshold:
            cx, cy, w, h = boxes[i]
            cands.append((score, c, [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]))
    cands.sort(key=lambda x: -x[0])

    def iou(p, q):
        w = min(p[2], q[2]) - max(p[0], q[0])
        h = min(p[3], q[3]) - max(p[1], q[1])
        if w <= 0 or h <= 0:
            return 0.0
        inter = w * h
        return inter / ((p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter)

    kept = []
    for cand in cands:
        if all(k[1] != cand[1] or iou(k[2], cand[2]) <= iou_threshold for k in kept):
            kept.append(cand)
    return kept


def main():
    import onnxruntime as ort

    lines = ['# Expected BlazeFace faces in tests/data/astronaut.png (512x512), '
             'made by scripts/gst-expected.py',
             '# with ONNX Runtime %s: model score x_min y_min x_max y_max '
             'kx0 ky0 ... kx5 ky5 (photo pixels)' % ort.__version__]
    for model, npy, size in (
            ('face_detection_front_128x128_barracuda.onnx', 'astronaut-128.npy', 128),
            ('face_detection_back_256x256_barracuda.onnx', 'astronaut-256.npy', 256)):
        options = ort.SessionOptions()
        options.log_severity_level = 3
        sess = ort.InferenceSession(os.path.join(ROOT, 'models', 'blazeface', model),
                                    options, providers=['CPUExecutionProvider'])
        x = np.load(os.path.join(ROOT, 'tests', 'data', npy))
        outs = sess.run(None, {sess.get_inputs()[0].name: x})
        faces = blazeface_decode([outs[0], outs[1]], [outs[2], outs[3]], size, size)
        for score, box, kp in faces:
            values = [score] + [v * PHOTO_SIZE for v in box] + [v * PHOTO_SIZE for v in kp]
            lines.append(model + ' ' + ' '.join('%.4f' % v for v in values))
    path = os.path.join(ROOT, 'tests', 'data', 'gst', 'astronaut-blazeface-expected.txt')
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('wrote %s' % path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
