#!/usr/bin/env bash
# Installs the dependencies, builds clinfer into build/ and runs the BlazeFace
# face detector (models/blazeface/, 128x128 front model) on the astronaut
# photo (tests/data/astronaut-128.npy, made from astronaut.png by
# scripts/preprocess-image.py) with clinfer-run on the CPU, then decodes the
# best detection with Debian's python3 + numpy.
#
# Usage: scripts/demo.sh [--no-deps] [--threads N]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

run_deps=1
threads=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-deps) run_deps=0 ;;
    --threads) [ $# -ge 2 ] || { echo "demo.sh: --threads needs a value" >&2; exit 2; }
      threads=(--threads "$2"); shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$run_deps" -eq 1 ]; then
  scripts/install-deps.sh
fi

if [ ! -f build/meson-private/coredata.dat ]; then
  meson setup build
fi
ninja -C build

model=models/blazeface/face_detection_front_128x128_barracuda.onnx
input=tests/data/astronaut-128.npy
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT

echo "==> build/engine/tools/clinfer-run $model --input input:0=$input ${threads[*]}"
build/engine/tools/clinfer-run "$model" --input "input:0=$input" "${threads[@]}" \
  --output-dir "$out_dir"

# Outputs 0/1 are raw scores for 512 + 384 anchors (sigmoid gives the
# probability), outputs 2/3 the box offsets in input pixels from the anchor
# centre (16x16 grid with 2 anchors per cell, then 8x8 with 6).
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" - "$out_dir" <<'EOF'
import os, sys
import numpy as np
d = sys.argv[1]
outs = [np.load(os.path.join(d, "output_%d.npy" % i)) for i in range(4)]
scores = np.concatenate([outs[0].reshape(-1), outs[1].reshape(-1)])
boxes = np.concatenate([outs[2].reshape(-1, 16), outs[3].reshape(-1, 16)])
anchors = []
for grid, per_cell in ((16, 2), (8, 6)):
    for y in range(grid):
        for x in range(grid):
            anchors += [((x + 0.5) / grid, (y + 0.5) / grid)] * per_cell
best = int(np.argmax(scores))
ax, ay = anchors[best]
score = 1.0 / (1.0 + np.exp(-float(scores[best])))
cx, cy, w = ax + boxes[best, 0] / 128.0, ay + boxes[best, 1] / 128.0, boxes[best, 2] / 128.0
print("face score: %.2f (centre x=%.2f y=%.2f, width %.2f, as fractions of the image)"
      % (score, cx, cy, w))
EOF
