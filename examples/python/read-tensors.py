#!/usr/bin/python3
"""Reads what the clinfer element found, from Python (PyGObject).

Usage:
    python3 examples/python/read-tensors.py [IMAGE]   (default: tests/data/astronaut.png)

Runs the bundled face detector on IMAGE and prints, for the frame that
comes out of an appsink:
- every output tensor of the GstClinferTensorMeta (name, type, shape and
  the first values), read through the GstClinfer-1.0 typelib (GObject
  introspection of the tensor-meta library);
- every face the decoder found, from clinfermetaconvert's JSON message on
  the bus (box, confidence, key points).

Needs python3-gi, gir1.2-gstreamer-1.0, gir1.2-gst-plugins-base-1.0, and
the built or installed GstClinfer-1.0 typelib (GI_TYPELIB_PATH and
LD_LIBRARY_PATH point to the build's gst/ folder when not installed) and
plugin (GST_PLUGIN_PATH). numpy is used when present.
"""
import json
import os
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstClinfer", "1.0")
from gi.repository import Gst, GstClinfer  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MODEL = os.path.join(ROOT, "models", "blazeface", "face_detection_front_128x128_barracuda.onnx")


def describe_tensors(buf):
    meta = GstClinfer.buffer_get_tensor_meta(buf)
    if meta is None:
        print("no tensor meta")
        return 0
    print("model %s: %d output tensors" % (meta.model_name, meta.get_n_tensors()))
    for i in range(meta.get_n_tensors()):
        t = meta.get_tensor(i)
        dims = t.get_dims()
        data = t.get_bytes().get_data()
        try:
            import numpy as np
            values = np.frombuffer(data, dtype=np.float32).reshape(dims)
            first = values.flatten()[:4].tolist()
        except ImportError:
            first = [t.get_value(k) for k in range(min(4, t.get_n_elements()))]
        print("  %s %s %s: %s ..." % (t.get_name(),
                                      GstClinfer.tensor_data_type_get_name(t.data_type),
                                      "x".join(str(d) for d in dims),
                                      ", ".join("%.4f" % v for v in first)))
    return meta.get_n_tensors()


def main():
    image = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "data",
                                                              "astronaut.png")
    Gst.init(None)
    pipeline = Gst.parse_launch(
        "filesrc location=%s ! pngdec ! videoconvert ! imagefreeze num-buffers=1 ! "
        "clinfer model=%s decoder=blazeface ! clinfermetaconvert ! "
        "appsink name=sink emit-signals=false sync=false" % (image, MODEL))
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    sample = sink.emit("pull-sample")
    if sample is None:
        sys.exit("no frame came out")
    n_tensors = describe_tensors(sample.get_buffer())

    # The regions: clinfermetaconvert posted the frame's JSON on the bus.
    bus = pipeline.get_bus()
    faces = []
    while True:
        msg = bus.timed_pop_filtered(Gst.SECOND, Gst.MessageType.ELEMENT
                                     | Gst.MessageType.ERROR)
        if msg is None:
            break
        if msg.type == Gst.MessageType.ERROR:
            sys.exit("error: %s" % msg.parse_error()[0].message)
        s = msg.get_structure()
        if s.get_name() == "clinfer-json":
            faces = [r for r in json.loads(s.get_string("json"))["regions"]
                     if r["type"] == "face"]
            break
    for f in faces:
        print("face at %d,%d %dx%d, confidence %.3f, %d key points" % (
            f["x"], f["y"], f["w"], f["h"], f["confidence"], len(f["keypoints"]) // 2))
    pipeline.set_state(Gst.State.NULL)
    return 0 if n_tensors > 0 and faces else 1


if __name__ == "__main__":
    sys.exit(main())
