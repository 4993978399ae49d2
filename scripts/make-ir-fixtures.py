#!/usr/bin/env python3
"""Regenerate the OpenVINO IR fixtures in tests/data/ir/ with OpenVINO's own converter.

Usage (from anywhere; paths are relative to the repository root):
    python3 -m pip install openvino
    python3 scripts/make-ir-fixtures.py [--check]

For each ONNX model in models/blazeface/ it writes
    tests/data/ir/<model-stem>-f32.xml/.bin   weights as f32 (compress_to_fp16=False)
    tests/data/ir/<model-stem>-f16.xml/.bin   weights as f16 + Convert (OpenVINO's default)
with openvino.convert_model() and openvino.save_model(). The golden suite
(tests/models/meson.build) runs clinfer-run on each and compares with the ONNX
Runtime goldens of the ONNX model: 1e-4 * max(1, max|ref|) for f32 weights,
1e-3 * max(1, max|ref|) for f16 weights.

With --check nothing is written: the script converts to a temporary folder and
reports whether the layer types and ports match the stored files (the .bin
bytes may differ between OpenVINO releases).
"""

import argparse
import glob
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join("tests", "data", "ir")
MODELS = sorted(glob.glob(os.path.join(ROOT, "models", "blazeface", "*.onnx")))

try:
    import openvino as ov
except ImportError:
    sys.exit("make-ir-fixtures: needs the pip package openvino for %s "
             "(python3 -m pip install openvino)" % sys.executable)


def convert(onnx_path, out_dir):
    """Write the f32 and f16 IR of one model into out_dir; return the .xml paths."""
    stem = os.path.splitext(os.path.basename(onnx_path))[0]
    written = []
    for suffix, fp16 in (("f32", False), ("f16", True)):
        model = ov.convert_model(onnx_path)
        xml = os.path.join(out_dir, "%s-%s.xml" % (stem, suffix))
        ov.save_model(model, xml, compress_to_fp16=fp16)
        written.append(xml)
    return written


def layer_summary(xml_path):
    """Layer types and versions of an IR, in order: what --check compares."""
    with open(xml_path) as f:
        text = f.read()
    return re.findall(r'<layer id="(\d+)" name="[^"]*" type="([^"]+)" version="([^"]+)"', text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="convert into a temporary folder and compare with the stored files")
    args = parser.parse_args()
    if not MODELS:
        sys.exit("make-ir-fixtures: no models in models/blazeface/")
    print("OpenVINO %s" % ov.__version__)
    if args.check:
        ok = True
        with tempfile.TemporaryDirectory() as tmp:
            for model in MODELS:
                for xml in convert(model, tmp):
                    stored = os.path.join(ROOT, OUT_DIR, os.path.basename(xml))
                    same = os.path.exists(stored) and layer_summary(stored) == layer_summary(xml)
                    print("%s: %s" % (os.path.relpath(stored, ROOT), "same layers" if same else "DIFFERS"))
                    ok &= same
        return 0 if ok else 1
    out_dir = os.path.join(ROOT, OUT_DIR)
    os.makedirs(out_dir, exist_ok=True)
    for model in MODELS:
        for xml in convert(model, out_dir):
            bin_path = xml[:-4] + ".bin"
            print("wrote %s (%d layers, %d bytes of weights)" % (
                os.path.relpath(xml, ROOT), len(layer_summary(xml)), os.path.getsize(bin_path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
