#!/usr/bin/python3
"""clinfermetaconvert's output from real pipelines against its schema.

Runs gst-launch-1.0 pipelines of the clinfer elements on the test models
(tests/data/gst: faces of the synthetic BlazeFace model, numbered by
clinfertrack, classified on their regions; the synthetic YOLO model;
frames with no region), each writing JSON Lines through
clinfermetaconvert, and checks every line against
docs/clinfer-json.schema.json (Debian python3-jsonschema; exit 77, a
skip, without it) and a few values: the frame numbers, the faces and
their object ids, the classification on each face, the tensors.

Run by meson test (suite element) with the element tests' environment.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)

ROOT = os.environ.get("CLINFER_SOURCE_ROOT",
                      os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "gst")


def run(pipeline, path):
    """Runs @pipeline, which ends with clinfermetaconvert, writing to @path."""
    env = dict(os.environ)
    if os.environ.get("CLINFER_TEST_PRELOAD"):
        # An AddressSanitizer build: its runtime first, no leak report
        # from gst-launch-1.0 itself.
        env["LD_PRELOAD"] = os.environ["CLINFER_TEST_PRELOAD"]
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    proc = subprocess.run(["gst-launch-1.0", "-q"] + pipeline.split() +
                          ["location=" + path, "!", "fakesink"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, env=env)
    if proc.returncode != 0:
        sys.exit("gst-launch-1.0 failed (%d): %s\n%s" % (proc.returncode, pipeline,
                                                          proc.stdout[-3000:]))
    with open(path) as f:
        return [json.loads(line) for line in f]


def check(frames, validator, n_frames):
    if len(frames) != n_frames:
        sys.exit("%d lines, expected %d" % (len(frames), n_frames))
    for i, frame in enumerate(frames):
        errors = sorted(validator.iter_errors(frame), key=str)
        if errors:
            sys.exit("frame %d does not fit the schema: %s\n%s" % (
                i, errors[0].message, json.dumps(frame)[:2000]))
        if frame["frame"] != i:
            sys.exit("frame %d numbered %d" % (i, frame["frame"]))


def main():
    with open(os.path.join(ROOT, "docs", "clinfer-json.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    src = "videotestsrc num-buffers=4 pattern=ball ! video/x-raw,width=320,height=240"
    with tempfile.TemporaryDirectory() as tmp:
        # Faces, numbered and classified on their regions, with tensors.
        frames = run(
            src + " ! clinfer model=%s decoder=blazeface threshold=0.3 ! "
            "clinfertrack ! clinfer model=%s inference-region=roi-list object-class=face "
            "decoder=classification labels-file=%s ! "
            "clinfermetaconvert include-tensors=true post-messages=false" % (
                os.path.join(DATA, "blazeface-synthetic.onnx"),
                os.path.join(DATA, "classification-probs.onnx"),
                os.path.join(DATA, "labels.txt")),
            os.path.join(tmp, "faces.jsonl"))
        check(frames, validator, 4)
        ids = None
        for frame in frames:
            faces = [r for r in frame["regions"] if r["type"] == "face"]
            if len(faces) != 3:
                sys.exit("%d faces in frame %d, expected 3 (threshold 0.3)" % (
                    len(faces), frame["frame"]))
            frame_ids = [r["object_id"] for r in faces]
            if ids is not None and frame_ids != ids:
                sys.exit("object ids changed: %s then %s" % (ids, frame_ids))
            ids = frame_ids
            for r in faces:
                c = r.get("classifications", [])
                if len(c) != 1 or c[0]["label"] != "person":
                    sys.exit("face without its classification: %s" % json.dumps(r))
                if not r.get("tensors"):
                    sys.exit("face without its tensor: %s" % json.dumps(r))
            if len(frame["tensors"]) != 4:
                sys.exit("%d frame tensors, expected BlazeFace's 4" % len(frame["tensors"]))
        if len(set(ids)) != 3:
            sys.exit("object ids not distinct: %s" % ids)

        # YOLO boxes, no tensors.
        frames = run(src + " ! clinfer model=%s decoder=yolo ! clinfermetaconvert "
                     "post-messages=false" % os.path.join(DATA, "yolov8-synthetic.onnx"),
                     os.path.join(tmp, "yolo.jsonl"))
        check(frames, validator, 4)
        if any("tensors" in f or len(f["regions"]) != 3 for f in frames):
            sys.exit("yolo: expected 3 regions and no tensors: %s" % json.dumps(frames[0]))

        # No region at all.
        frames = run(src + " ! clinfermetaconvert post-messages=false",
                     os.path.join(tmp, "empty.jsonl"))
        check(frames, validator, 4)
        if any(f["regions"] for f in frames):
            sys.exit("regions out of nowhere")
    print("json-schema: 12 frames of 3 pipelines fit docs/clinfer-json.schema.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
