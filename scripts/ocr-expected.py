#!/usr/bin/env python3
"""Expected text of tests/data/ocr/line*.png from RapidOCR itself.

Usage: python3 scripts/ocr-expected.py
(pip install rapidocr-onnxruntime opencv-python-headless pyclipper shapely)

Runs RapidOCR's recogniser (PP-OCRv4 rec, the model the package ships;
detection and direction classifier off: each image is one line) on every
line image and writes tests/data/ocr/expected.txt, one line per image:

    <file> <confidence> <text>

and the whole pipeline (detector + recogniser) on page.png into
page-expected.txt, and with the direction classifier on
page-upside-down.png into page-upside-down-expected.txt, one line per text
line found, top to bottom:

    <x> <y> <w> <h> <confidence> <text>

tests/gst/test-ocr.py runs the clinfer element on the same images with the
same model and compares.
"""
import glob
import os

import cv2
from rapidocr_onnxruntime import RapidOCR

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "data", "ocr")


def main():
    engine = RapidOCR()
    from importlib.metadata import version as package_version
    version = package_version("rapidocr-onnxruntime")
    lines = ["# RapidOCR %s, PP-OCRv4 rec, recogniser only: file confidence text" % version]
    for path in sorted(glob.glob(os.path.join(OUT, "line*.png"))):
        result, _ = engine(cv2.imread(path), use_det=False, use_cls=False, use_rec=True)
        text, score = result[0]
        lines.append("%s %.4f %s" % (os.path.basename(path), float(score), text))
    with open(os.path.join(OUT, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    # The pages through the whole pipeline: each line's box (the bounds of
    # the detector's four corners) and text; the upside-down page with the
    # direction classifier.
    for name, cls in (("page", False), ("page-upside-down", True)):
        page = ["# RapidOCR %s, PP-OCRv4 det%s + rec on %s.png: x y w h confidence text"
                % (version, " + cls" if cls else "", name)]
        result, _ = engine(cv2.imread(os.path.join(OUT, name + ".png")), use_det=True,
                           use_cls=cls, use_rec=True)
        for box, text, score in sorted(result, key=lambda r: r[0][0][1]):
            xs = [p[0] for p in box]
            ys = [p[1] for p in box]
            page.append("%d %d %d %d %.4f %s" % (min(xs), min(ys), max(xs) - min(xs),
                                                 max(ys) - min(ys), float(score), text))
        with open(os.path.join(OUT, name + "-expected.txt"), "w") as f:
            f.write("\n".join(page) + "\n")
        print("\n".join(page))


if __name__ == "__main__":
    main()
