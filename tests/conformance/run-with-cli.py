#!/usr/bin/python3
"""Drive the ONNX backend conformance tests through clinfer-run.

Usage: run-with-cli.py CLINFER_RUN DATA_DIR EXPECTED_LIST [--sample N] [-v]

For every test in EXPECTED_LIST (lines "suite/test_name"), converts each
test_data_set_*/input_N.pb to .npy (Debian python3-onnx + numpy), runs
`clinfer-run model.onnx --input NAME=FILE ... --output-dir DIR --threads 1`
and compares DIR/output_N.npy with output_N.pb using the conformance
tolerance (|got-exp| <= 1e-5 + 1e-3*|exp|, NaN equal to NaN, other types
exact, shapes exact). Tests with bfloat16 or string tensors cannot travel
through .npy and are counted as "runner-only", not as passed.
Prints per-suite counts and `N passed, M failed`; exits 1 on any failure,
77 (skip) when the data folder is missing.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

NPY_UNSUPPORTED = {onnx.TensorProto.BFLOAT16, onnx.TensorProto.STRING}


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, 'rb') as f:
        t.ParseFromString(f.read())
    return t


def numbered(folder, prefix):
    out = []
    i = 0
    while os.path.exists(os.path.join(folder, '%s_%d.pb' % (prefix, i))):
        out.append(load_pb(os.path.join(folder, '%s_%d.pb' % (prefix, i))))
        i += 1
    return out


def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def close(got, exp):
    if got.shape != exp.shape:
        return 'shape %s, expected %s' % (got.shape, exp.shape)
    if got.dtype != exp.dtype:
        return 'dtype %s, expected %s' % (got.dtype, exp.dtype)
    if exp.dtype.kind == 'f':
        g = got.astype(np.float64)
        e = exp.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(e)
        same_inf = np.isinf(e) & (g == e)
        ok = (np.abs(g - e) <= 1e-5 + 1e-3 * np.abs(e)) | both_nan | same_inf
        if not ok.all():
            i = int(np.argmin(ok.ravel()))
            return 'element %d: %r, expected %r' % (i, g.ravel()[i], e.ravel()[i])
        return None
    if not np.array_equal(got, exp):
        return 'values differ'
    return None


def run_test(tool, test_dir, tmp):
    """Returns None on success, 'runner-only' or a failure reason."""
    model = onnx.load(os.path.join(test_dir, 'model.onnx'), load_external_data=False)
    names = graph_inputs(model)
    sets = sorted(d for d in os.listdir(test_dir) if d.startswith('test_data_set_'))
    for s in sets:
        folder = os.path.join(test_dir, s)
        inputs = numbered(folder, 'input')
        outputs = numbered(folder, 'output')
        if any(t.data_type in NPY_UNSUPPORTED for t in inputs + outputs):
            return 'runner-only'
        args = [tool, os.path.join(test_dir, 'model.onnx'), '--threads', '1',
                '--output-dir', tmp]
        for i, t in enumerate(inputs):
            path = os.path.join(tmp, 'in_%d.npy' % i)
            np.save(path, numpy_helper.to_array(t))
            args += ['--input', '%s=%s' % (names[i], path)]
        for f in os.listdir(tmp):
            if f.startswith('output_'):
                os.unlink(os.path.join(tmp, f))
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return 'exit %d: %s' % (r.returncode, r.stderr.strip()[:300])
        for i, t in enumerate(outputs):
            got = np.load(os.path.join(tmp, 'output_%d.npy' % i))
            why = close(got, numpy_helper.to_array(t))
            if why:
                return '%s output %d: %s' % (s, i, why)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('tool')
    ap.add_argument('data')
    ap.add_argument('expected')
    ap.add_argument('--sample', type=int, default=1)
    ap.add_argument('-v', '--verbose', action='store_true')
    a = ap.parse_args()
    if not os.path.isdir(a.data):
        print('run-with-cli: %s not found (install libonnx-testdata)' % a.data)
        return 77
    with open(a.expected) as f:
        tests = [l.strip() for l in f if l.strip() and not l.startswith('#')]
    tests = tests[::max(a.sample, 1)]
    counts = {}
    passed = failed = runner_only = 0
    with tempfile.TemporaryDirectory(prefix='clinfer-cli-conf-') as tmp:
        for t in tests:
            suite = t.split('/')[0]
            c = counts.setdefault(suite, [0, 0, 0])
            try:
                why = run_test(a.tool, os.path.join(a.data, t), tmp)
            except Exception as e:  # noqa: BLE001 - report and go on
                why = 'harness error: %s' % e
            if why is None:
                passed += 1
                c[0] += 1
            elif why == 'runner-only':
                runner_only += 1
                c[2] += 1
            else:
                failed += 1
                c[1] += 1
                print('FAIL %s: %s' % (t, why))
    for suite, (p, f, r) in sorted(counts.items()):
        print('suite %s: %d passed, %d failed, %d runner-only' % (suite, p, f, r))
    print('clinfer-run conformance: %d runner-only (bfloat16/string)' % runner_only)
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed or passed == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
