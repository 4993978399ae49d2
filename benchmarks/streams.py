#!/usr/bin/env python3
"""Multi-camera throughput of the clinfer element: N streams in one process.

Usage (from the repository root, after building into build/):
    python3 benchmarks/streams.py [--build build] [--streams 1,2,4,8]
        [--frames 300] [--nireq 1,2] [--hint throughput|auto|...] [--rounds 3]
        [--width 1280 --height 720] [--pattern ball] [--device CPU]
        [--batch-size B]

Each configuration is one gst-launch-1.0 process with N independent
branches, each on its own streaming thread:

    videotestsrc num-buffers=F pattern=P ! video/x-raw,format=BGRx,width=W,height=H
      ! clinfer model=BlazeFace-128 model-instance-id=streams device=D
        performance-hint=HINT nireq=R decoder=blazeface ! fakesink sync=false

All branches share one compiled model (model-instance-id); with
--batch-size B above 1 they also share batched requests of B frames
(batch-size=B, the batch-1 model made batch B when it is read). The time is
gst-launch-1.0's own "Execution ended after" (PLAYING to EOS, so reading
and compiling the model are not in it); total fps = N * F / time and
per-stream fps = F / time. The same pipeline without clinfer (the source
alone) is timed too: its frames cost what a camera's would not, so it is
printed beside. nireq=1 is the element's synchronous mode. Rounds run in
turn over the configurations (a slow phase of the machine hits them
alike); the median of the rounds is reported as a markdown table for
docs/performance.md.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "models", "blazeface", "face_detection_front_128x128_barracuda.onnx")


def pipeline(args, n, nireq, with_clinfer):
    branches = []
    for _ in range(n):
        b = ("videotestsrc num-buffers=%d pattern=%s ! video/x-raw,format=BGRx,width=%d,"
             "height=%d,framerate=30/1" % (args.frames, args.pattern, args.width, args.height))
        if with_clinfer:
            b += (" ! clinfer model=%s model-instance-id=streams device=%s "
                  "nireq=%d decoder=blazeface threads=%d"
                  % (MODEL, args.device, nireq, args.threads))
            # auto: the element's default (throughput with nireq above 1,
            # else none: threads as set, all cores by default).
            if args.hint != "auto":
                b += " performance-hint=%s" % args.hint
            if args.batch_size > 1:
                b += " batch-size=%d" % args.batch_size
        b += " ! fakesink sync=false"
        branches.append(b)
    return " ".join(branches)


def run_seconds(desc, env):
    proc = subprocess.run(["gst-launch-1.0"] + desc.split(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, env=env)
    m = re.search(r"Execution ended after (\d+):(\d+):(\d+)\.(\d+)", proc.stdout)
    if proc.returncode != 0 or m is None or "ERROR" in proc.stdout:
        raise RuntimeError("gst-launch-1.0 failed (%d):\n%s" % (proc.returncode,
                                                                proc.stdout[-3000:]))
    h, mi, s, frac = m.groups()
    return int(h) * 3600 + int(mi) * 60 + int(s) + int(frac) / 10 ** len(frac)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build", help="build folder (default build)")
    p.add_argument("--streams", default="1,2,4,8")
    p.add_argument("--nireq", default="1,2", help="comma-separated (1 = synchronous)")
    p.add_argument("--hint", default="throughput",
                   choices=["auto", "none", "latency", "throughput"],
                   help="performance-hint of every element (auto: the element's default)")
    p.add_argument("--threads", type=int, default=0, help="clinfer threads (0: the hint's)")
    p.add_argument("--device", default="CPU")
    p.add_argument("--frames", type=int, default=300, help="frames per stream")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=720)
    p.add_argument("--pattern", default="ball", help="videotestsrc pattern (default ball)")
    p.add_argument("--batch-size", type=int, default=1,
                   help="frames per batched request shared by the streams (default 1)")
    args = p.parse_args()

    plugin = os.path.join(ROOT, args.build, "gst")
    if not os.path.exists(os.path.join(plugin, "libgstclinfer.so")):
        sys.exit("streams.py: %s/libgstclinfer.so not found; build first or pass --build" % plugin)
    env = dict(os.environ, GST_PLUGIN_PATH=plugin)
    streams = [int(x) for x in args.streams.split(",")]
    nireqs = [int(x) for x in args.nireq.split(",")]
    configs = [(n, None) for n in streams] + [(n, r) for n in streams for r in nireqs]
    times = {c: [] for c in configs}
    for k in range(args.rounds):
        for c in (configs if k % 2 == 0 else configs[::-1]):
            n, r = c
            t = run_seconds(pipeline(args, n, r or 1, r is not None), env)
            times[c].append(t)
            print("round %d: %d stream(s) %s: %.3f s" % (
                k, n, "source only" if r is None else "nireq=%d" % r, t), flush=True)

    print("\n%s, %dx%d BGRx, %d frames per stream, BlazeFace 128 shared, device %s, "
          "performance-hint=%s, batch-size=%d, median of %d rounds (nproc %d)\n" % (
              args.pattern, args.width, args.height, args.frames, args.device, args.hint,
              args.batch_size, args.rounds, os.cpu_count()))
    print("| streams | source only fps | " + " | ".join(
        "nireq=%d total fps | per stream" % r for r in nireqs) + " | " + " | ".join(
        "nireq=%d / nireq=%d" % (r, nireqs[0]) for r in nireqs[1:]) + " |")
    print("|---:|---:|" + "---:|---:|" * len(nireqs) + "---:|" * (len(nireqs) - 1))
    for n in streams:
        src = n * args.frames / statistics.median(times[(n, None)])
        fps = {r: n * args.frames / statistics.median(times[(n, r)]) for r in nireqs}
        print("| %d | %.1f | " % (n, src) + " | ".join(
            "%.1f | %.1f" % (fps[r], fps[r] / n) for r in nireqs) + " | " + " | ".join(
            "%.2f" % (fps[r] / fps[nireqs[0]]) for r in nireqs[1:]) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
