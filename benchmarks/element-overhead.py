#!/usr/bin/env python3
"""The clinfer element's time per frame against pure inference, on frames
that change (as a camera's do) and on one frame repeated (warm in cache).

Usage (from the repository root, after building into build/):
    python3 benchmarks/element-overhead.py [--build build] [--frames 1000]
        [--rounds 5] [--nireq 1]

Per round, in turn:
- fresh frames: `videotestsrc pattern=ball ! 1280x720 BGRx ! clinfer
  (BlazeFace 128, threads=1, CPU) ! fakesink`, each frame drawn anew;
- same frame: `videotestsrc num-buffers=1 ! imagefreeze` instead (the
  frame stays in the caches);
- pure inference: `clinfer-benchmark --threads 1` on the same model.
The element's time per frame is GStreamer's own latency tracer
(`GST_TRACERS="latency(flags=element)"`: the time a buffer spends in
clinfer0, from its sink pad to its src pad), median over the frames after
the first 20; inference is clinfer-benchmark's median. Overhead = element
/ inference - 1, per round; the table gives the median of the rounds.
nireq above 1 is not measured this way (the element holds frames).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "models", "blazeface", "face_detection_front_128x128_barracuda.onnx")
LINE = re.compile(r"element-latency, .*element=\(string\)clinfer0, .*time=\(guint64\)(\d+)")


def element_ms(source, frames, env):
    desc = ("%s ! clinfer model=%s threads=1 device=CPU decoder=blazeface ! fakesink"
            % (source, MODEL))
    env = dict(env, GST_TRACERS="latency(flags=element)", GST_DEBUG="GST_TRACER:7",
               GST_DEBUG_NO_COLOR="1")
    proc = subprocess.run(["gst-launch-1.0", "-q"] + desc.split(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, env=env)
    times = [int(m.group(1)) / 1e6 for m in LINE.finditer(proc.stdout)]
    if proc.returncode != 0 or len(times) < frames // 2:
        raise RuntimeError("gst-launch-1.0 failed (%d, %d latencies):\n%s" % (
            proc.returncode, len(times), proc.stdout[-2000:]))
    return statistics.median(times[20:])


def inference_ms(bench, frames):
    proc = subprocess.run([bench, MODEL, "--threads", "1", "--iterations", str(frames)],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          universal_newlines=True)
    m = re.search(r"^median_ms=([0-9.]+)$", proc.stdout, re.M)
    if proc.returncode != 0 or m is None:
        raise RuntimeError("clinfer-benchmark failed:\n" + proc.stdout)
    return float(m.group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--frames", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    plugin = os.path.join(ROOT, args.build, "gst")
    bench = os.path.join(ROOT, args.build, "engine", "tools", "clinfer-benchmark")
    if not os.path.exists(os.path.join(plugin, "libgstclinfer.so")) or not os.access(bench, os.X_OK):
        sys.exit("element-overhead.py: build %s first" % args.build)
    env = dict(os.environ, GST_PLUGIN_PATH=plugin)
    caps = "video/x-raw,format=BGRx,width=1280,height=720"
    sources = {
        "fresh frames (videotestsrc pattern=ball)":
            "videotestsrc num-buffers=%d pattern=ball ! %s" % (args.frames, caps),
        "same frame (imagefreeze)":
            "videotestsrc num-buffers=1 ! %s,framerate=0/1 ! imagefreeze num-buffers=%d "
            "is-live=false" % (caps, args.frames),
    }
    rows = {name: [] for name in sources}
    infer = []
    for k in range(args.rounds):
        order = list(sources.items())
        if k % 2:
            order.reverse()
        for name, src in order:
            rows[name].append(element_ms(src, args.frames, env))
        infer.append(inference_ms(bench, args.frames))
        print("round %d: %s; inference %.3f ms" % (k, ", ".join(
            "%s %.3f ms" % (n.split(" (")[0], v[-1]) for n, v in rows.items()), infer[-1]),
            flush=True)
    print("\n| frames | element ms (median of rounds) | inference ms | overhead (median, range) |")
    print("|---|---:|---:|---:|")
    for name, values in rows.items():
        over = [v / i - 1 for v, i in zip(values, infer)]
        print("| %s | %.3f | %.3f | %.1f%% (%.1f-%.1f%%) |" % (
            name, statistics.median(values), statistics.median(infer),
            100 * statistics.median(over), 100 * min(over), 100 * max(over)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
