#!/usr/bin/python3
"""Runs examples/python/read-tensors.py (PyGObject, the GstClinfer-1.0
typelib) on tests/data/astronaut.png and checks what it prints: BlazeFace's
four output tensors with their shapes, and one face where
tests/data/gst/astronaut-blazeface-expected.txt puts it (within 2 pixels).
Exit 77 (a skip) without python3-gi. Under AddressSanitizer the runtime
is preloaded into Python (CLINFER_TEST_PRELOAD)."""
import os
import re
import subprocess
import sys

ROOT = os.environ.get("CLINFER_SOURCE_ROOT",
                      os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

try:
    import gi  # noqa: F401
except ImportError:
    print("python3-gi is not installed: skipped")
    sys.exit(77)


def main():
    env = dict(os.environ)
    build_gst = os.path.join(os.environ["CLINFER_BUILD_ROOT"], "gst")
    env["GI_TYPELIB_PATH"] = build_gst
    env["LD_LIBRARY_PATH"] = build_gst + ":" + env.get("LD_LIBRARY_PATH", "")
    if os.environ.get("CLINFER_TEST_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["CLINFER_TEST_PRELOAD"]
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python",
                                                        "read-tensors.py")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=env)
    print(proc.stdout)
    if proc.returncode != 0:
        sys.exit("read-tensors.py failed (%d)" % proc.returncode)
    for name, shape in (("Identity:0", "1x512x1"), ("Identity_1:0", "1x384x1"),
                        ("Identity_2:0", "1x512x16"), ("Identity_3:0", "1x384x16")):
        if not re.search(r"^  %s f32 %s: " % (re.escape(name), shape), proc.stdout, re.M):
            sys.exit("tensor %s %s not printed" % (name, shape))
    faces = re.findall(r"^face at (\d+),(\d+) (\d+)x(\d+), confidence ([0-9.]+), 6 key points$",
                       proc.stdout, re.M)
    with open(os.path.join(ROOT, "tests", "data", "gst",
                           "astronaut-blazeface-expected.txt")) as f:
        want = [line.split() for line in f
                if line.startswith("face_detection_front_128x128_barracuda.onnx")]
    if len(faces) != 1 or len(want) != 1:
        sys.exit("%d faces printed, %d expected" % (len(faces), len(want)))
    x0, y0, x1, y1 = (float(v) for v in want[0][2:6])
    x, y, w, h = (int(v) for v in faces[0][:4])
    if max(abs(x - x0), abs(y - y0), abs(x + w - x1), abs(y + h - y1)) > 2:
        sys.exit("face at %d,%d %dx%d, expected %.1f,%.1f-%.1f,%.1f" % (x, y, w, h, x0, y0,
                                                                         x1, y1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
