#!/bin/bash
# Packs what a lent GPU machine (another OS image, nothing to download) needs
# to run clinfer's GPU tests and benchmarks: the build's programs and tests,
# every shared library they load except the C and C++ runtimes (their RUNPATH
# set to /tmp/cb/lib, where check.sh unpacks them), the GStreamer plugins the
# element tests use, gst-launch-1.0, the ONNX backend test data, the test list
# (meson introspect) and the benchmark models (large ones stripped of their
# weights by weights.py, drawn again there). Output: .bundle/bundle.tar.xz
# (about 45 MB; the device tool carries at most 64 MiB with the tree).
#
# Usage: scripts/device/bundle.sh [BUILD_DIR]   (default build-release)
# Then, with the device tool: carry [".bundle"], command
#   bash scripts/device/check.sh [--tests] [--conformance] [--bench] [--element]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build-release}
cd "$ROOT"
[ -x "$BUILD/engine/tools/clinfer-benchmark" ] || { echo "bundle.sh: build $BUILD first" >&2; exit 1; }
command -v patchelf >/dev/null || { echo "bundle.sh: needs patchelf (apt-get install patchelf)" >&2; exit 1; }
S=$(mktemp -d); trap 'rm -rf "$S"' EXIT
mkdir -p "$S/lib" "$S/gstplug" "$S/models" "$S/bin" "$S/onnxdata" .bundle
echo "== build files"
find "$BUILD" \( -type f -o -type l \) -not -path '*/*.p/*' -not -path "$BUILD/ir-venv/*" \
  -not -path "$BUILD/meson-logs/*" -not -path "$BUILD/meson-private/*" \
  -not -path '*/program-cache/*' -not -name '*.ninja' -not -name 'compile_commands.json' \
  -not -name 'registry.bin' | tar cf - -T - | tar xf - -C "$S"
[ "$BUILD" = build-release ] || mv "$S/$BUILD" "$S/build-release"
meson introspect --tests "$BUILD" > "$S/tests.json"
echo "$ROOT" > "$S/root"
P=/usr/lib/x86_64-linux-gnu/gstreamer-1.0
for p in videotestsrc coreelements videoconvertscale app coretracers imagefreeze png; do
  cp -L "$P/libgst$p.so" "$S/gstplug/"
done
cp /usr/bin/gst-launch-1.0 /usr/bin/gst-inspect-1.0 "$S/bin/"
echo "== shared libraries"
elfs=$(find "$S" -type f -exec sh -c 'head -c 4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
# shellcheck disable=SC2086
ldd $elfs 2>/dev/null | awk '/=> \//{print $3}' | sort -u \
  | grep -v -E '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' \
  | grep -v -F -e "$ROOT" -e "$S" | xargs -r -I{} cp -L {} "$S/lib/"
for f in $elfs "$S"/lib/*; do
  old=$(patchelf --print-rpath "$f" 2>/dev/null || true)
  patchelf --set-rpath "${old:+$old:}/tmp/cb/lib" "$f"
done
echo "== test data and models"
[ -d /usr/share/libonnx-testdata/data ] && cp -r /usr/share/libonnx-testdata/data "$S/onnxdata/"
BM=${XDG_CACHE_HOME:-$HOME/.cache}/clinfer/bench-models
OM=${XDG_CACHE_HOME:-$HOME/.cache}/clinfer/ocr-models
mkdir -p "$S/models/real"
for m in u2netp picodet-layout silero-vad basic-pitch; do
  [ -f "$BM/$m.onnx" ] && cp "$BM/$m.onnx" "$S/models/real/"
done
[ -f "$OM/ch_ppocr_mobile_v2.0_cls_infer.onnx" ] && cp "$OM/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$S/models/"
big=$(ls "$BM"/{lore-transformer,open-nsfw,ddddocr,ddddocr-det}.onnx "$OM"/ch_PP-OCRv4_*.onnx 2>/dev/null || true)
[ -n "$big" ] && /usr/bin/python3 scripts/device/weights.py strip "$S/models" $big
echo "== compressing"
tar cf - -C "$S" . | xz -T0 --lzma2=preset=9,dict=192MiB > .bundle/bundle.tar.xz
ls -la .bundle/bundle.tar.xz
