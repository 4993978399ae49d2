#!/usr/bin/env bash
# Installs the dependencies, builds clinfer (engine + GStreamer plugin) into
# build/ and runs a real GStreamer pipeline on the bundled BlazeFace model and
# photo: the PNG is decoded, repeated for a few frames, the clinfer element
# finds the faces (decoder=blazeface), clinferoverlay draws them, and the
# first frame is written as an annotated PNG. Prints each detection (the
# element's last-message, shown by gst-launch-1.0 -v) and the output path.
#
# Usage: scripts/demo-pipeline.sh [--no-deps] [--build-dir DIR] [--output FILE.png]
#                                 [--model FILE.onnx] [--image FILE.png]
#   --build-dir  meson build folder (default: build)
#   --output     annotated image (default: <build-dir>/demo/astronaut-faces.png)
#   --model      BlazeFace model (default: the 128x128 front model)
#   --image      input PNG (default: tests/data/astronaut.png)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

run_deps=1
build_dir=build
output=
model=models/blazeface/face_detection_front_128x128_barracuda.onnx
image=tests/data/astronaut.png
need_value() { [ "$2" -ge 2 ] || { echo "demo-pipeline.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --no-deps) run_deps=0 ;;
    --build-dir) need_value "$1" $#; build_dir=$2; shift ;;
    --output) need_value "$1" $#; output=$2; shift ;;
    --model) need_value "$1" $#; model=$2; shift ;;
    --image) need_value "$1" $#; image=$2; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "demo-pipeline.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
output=${output:-$build_dir/demo/astronaut-faces.png}

if [ "$run_deps" -eq 1 ]; then
  scripts/install-deps.sh
fi
if [ ! -f "$build_dir/meson-private/coredata.dat" ]; then
  meson setup "$build_dir"
fi
ninja -C "$build_dir"
if [ ! -f "$build_dir/gst/libgstclinfer.so" ]; then
  echo "demo-pipeline.sh: $build_dir/gst/libgstclinfer.so was not built" \
    "(GStreamer or cairo development files missing?)" >&2
  exit 1
fi
mkdir -p "$(dirname "$output")"
rm -f "$output"

# The plugin straight from the build folder, with a registry of its own so
# an installed copy or a stale cache cannot get in the way.
build_abs=$(cd "$build_dir" && pwd)
export GST_PLUGIN_PATH="$build_abs/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GST_REGISTRY="$build_abs/gst/demo-registry.bin"

pipeline=(filesrc "location=$image" ! pngdec ! imagefreeze num-buffers=5 ! videoconvert
  ! clinfer "model=$model" decoder=blazeface silent=false
  ! clinferoverlay ! videoconvert ! pngenc snapshot=true ! filesink "location=$output")
echo "==> gst-launch-1.0 ${pipeline[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! gst-launch-1.0 -v "${pipeline[@]}" >"$log" 2>&1; then
  grep -E "ERROR|WARNING|debug info" -A1 "$log" >&2 || cat "$log" >&2
  exit 1
fi
# One line per inferred frame: "frame N pts T: K regions: face confidence=C x= y= w= h=; ..."
grep -o 'last-message = .*' "$log" | sed 's/^last-message = //'
if [ ! -s "$output" ]; then
  echo "demo-pipeline.sh: no image was written to $output" >&2
  exit 1
fi
echo "annotated image: $output"
