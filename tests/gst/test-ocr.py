#!/usr/bin/python3
"""The clinfer element reading text with RapidOCR's models.

Runs PP-OCRv4 rec (the ONNX models of the PyPI package rapidocr-onnxruntime:
from scripts/fetch-ocr-models.sh's cache, which scripts/test-all.sh fills,
or an installed package; exit 77, a skip, without them) through the clinfer element with resize-method=fit-height,
input-shape=?x3x48x? and decoder=ctc (the character list from the model's
metadata), on tests/data/ocr:

each line*.png as a whole frame, and compares with tests/data/ocr/expected.txt (RapidOCR itself, made by
scripts/ocr-expected.py): the same text, byte for byte (a space RapidOCR
reads before one line included), and a confidence within 0.05. Then page.png through PP-OCRv4 det
(decoder=text-detection) and rec on the regions it finds, against
page-expected.txt (RapidOCR's whole pipeline): the same lines, boxes
within 3 pixels, the same characters (spaces may differ, see
docs/pipelines.md); and page-upside-down.png with the direction
classifier between them (turn-label=180) against RapidOCR with its
classifier: every line classified 180, then read the same.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.environ.get("CLINFER_SOURCE_ROOT",
                      os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "ocr")
FIND = ("import importlib.util as u; s = u.find_spec('rapidocr_onnxruntime'); "
        "print(s.submodule_search_locations[0] if s else '')")


def find_model():
    """PP-OCRv4 rec: in CLINFER_OCR_MODELS or the cache of
    scripts/fetch-ocr-models.sh, else from an installed
    rapidocr-onnxruntime; None when nowhere."""
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME",
                                        os.path.join(os.path.expanduser("~"), ".cache")),
                         "clinfer", "ocr-models")
    for folder in (os.environ.get("CLINFER_OCR_MODELS"), cache):
        if folder and os.path.exists(os.path.join(folder, "ch_PP-OCRv4_rec_infer.onnx")):
            return os.path.join(folder, "ch_PP-OCRv4_rec_infer.onnx")
    for python in (sys.executable, "python3", "/usr/bin/python3",
                   os.path.join(ROOT, ".venv", "bin", "python3")):
        try:
            out = subprocess.run([python, "-c", FIND], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, universal_newlines=True)
        except OSError:
            continue
        path = os.path.join(out.stdout.strip(), "models", "ch_PP-OCRv4_rec_infer.onnx")
        if out.returncode == 0 and out.stdout.strip() and os.path.exists(path):
            return path
    return None


def run(pipeline, out):
    env = dict(os.environ)
    if os.environ.get("CLINFER_TEST_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["CLINFER_TEST_PRELOAD"]
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    proc = subprocess.run(["gst-launch-1.0", "-q"] + pipeline.split()
                          + ["!", "clinfermetaconvert", "post-messages=false",
                             "location=" + out, "!", "fakesink"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=env)
    if proc.returncode != 0:
        sys.exit("gst-launch-1.0 failed: %s\n%s" % (pipeline, proc.stdout[-3000:]))
    with open(out) as f:
        return json.loads(f.readline())


def compare(what, got_text, got_conf, want_text, want_conf):
    if got_text != want_text:
        sys.exit("%s: read %r, RapidOCR %r" % (what, got_text, want_text))
    if abs(got_conf - want_conf) > 0.05:
        sys.exit("%s: confidence %.4f, RapidOCR %.4f" % (what, got_conf, want_conf))
    print("%s: %r %.4f (RapidOCR %.4f)" % (what, got_text, got_conf, want_conf))


def check_page(name, frame, with_cls):
    """@frame's text regions against RapidOCR's (@name-expected.txt)."""
    lines = [r for r in frame["regions"] if r["type"] == "text"]
    with open(os.path.join(DATA, name + "-expected.txt")) as f:
        page = [line.rstrip("\n").split(" ", 5) for line in f
                if line.strip() and not line.startswith("#")]
    if len(lines) != len(page):
        sys.exit("%s: %d lines found, RapidOCR %d" % (name, len(lines), len(page)))
    for r, (x, y, w, h, conf, text) in zip(sorted(lines, key=lambda r: r["y"]), page):
        box = (r["x"], r["y"], r["w"], r["h"])
        want = tuple(int(v) for v in (x, y, w, h))
        if any(abs(a - b) > 3 for a, b in zip(box, want)):
            sys.exit("%s: box %s, RapidOCR %s" % (name, box, want))
        # The same characters; a space may differ: RapidOCR warps the
        # detector's rotated box upright, clinfer crops its bounds.
        if (r.get("text") or "").replace(" ", "") != text.replace(" ", ""):
            sys.exit("%s: read %r at %s, RapidOCR %r" % (name, r.get("text"), box, text))
        if with_cls and not any(c["label"] == "180" for c in r.get("classifications", [])):
            sys.exit("%s: line at %s not found upside down" % (name, box))
        print("%s %s: %r (RapidOCR %s %r)" % (name, box, r.get("text"), want, text))


def main():
    model = find_model()
    if model is None:
        print("rapidocr-onnxruntime (pip) not found: skipped")
        return 77
    expected = []
    with open(os.path.join(DATA, "expected.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, conf, text = line.rstrip("\n").split(" ", 2)
            expected.append((name, float(conf), text))
    rec = ("clinfer model=%s input-shape=?x3x48x? resize-method=fit-height decoder=ctc"
           % model)
    with tempfile.TemporaryDirectory() as tmp:
        for name, conf, text in expected:
            frame = run("filesrc location=%s ! pngdec ! videoconvert ! imagefreeze "
                        "num-buffers=1 ! %s" % (os.path.join(DATA, name), rec),
                        os.path.join(tmp, name + ".jsonl"))
            regions = frame["regions"]
            if len(regions) != 1:
                sys.exit("%s: %d regions" % (name, len(regions)))
            compare(name, regions[0].get("text"), regions[0].get("text_confidence", 0),
                    text, conf)

        # The pages: PP-OCRv4 det finds the lines, rec reads each region;
        # upside down, the direction classifier (cls) in between turns them.
        det = model.replace("ch_PP-OCRv4_rec_infer.onnx", "ch_PP-OCRv4_det_infer.onnx")
        cls = model.replace("ch_PP-OCRv4_rec_infer.onnx",
                            "ch_ppocr_mobile_v2.0_cls_infer.onnx")
        cls_step = ("clinfer model=%s inference-region=roi-list object-class=text "
                    "input-shape=?x3x48x192 resize-method=fit-height decoder=classification "
                    "labels-file=%s mean-values=127.5 scale-values=127.5 "
                    "reverse-channels=true ! " % (cls, os.path.join(DATA, "cls-labels.txt")))
        for name, with_cls in (("page", False), ("page-upside-down", True)):
            frame = run("filesrc location=%s ! pngdec ! videoconvert ! imagefreeze "
                        "num-buffers=1 ! clinfer model=%s decoder=text-detection "
                        "reverse-channels=true ! %s%s inference-region=roi-list "
                        "object-class=text reverse-channels=true turn-label=180"
                        % (os.path.join(DATA, name + ".png"), det,
                           cls_step if with_cls else "", rec),
                        os.path.join(tmp, name + ".jsonl"))
            check_page(name, frame, with_cls)

    return 0


if __name__ == "__main__":
    sys.exit(main())
