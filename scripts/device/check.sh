#!/bin/bash
# Runs on a lent GPU machine, from the repository root, with .bundle carried
# (scripts/device/bundle.sh made it): unpacks it, points an ICD file at
# NVIDIA's OpenCL library, and runs the parts asked for, never two timed
# parts at once. Output goes to stdout and to $OUT (at most 8 files).
#
#   --tests         the GPU and element tests (opencl and element suites)
#   --conformance   the GPU conformance list, in as many shards as half the cores
#   --bench         each benchmark model: GPU device, CPU device with all
#                   cores, one thread, and the latency hint
#   --profile       BlazeFace 128's per-step times on the GPU device
#   --element       the element at 1280x720 BGRx on each device (ms per frame
#                   from the difference of 300 and 1300 frames)
#   --compare       benchmarks/compare.py throughput against ONNX Runtime
# DEADLINE (seconds, default 500): parts are cut short or skipped after it.
set -u
T0=$(date +%s); DL=${DEADLINE:-500}
OUT=${OUT:-/tmp/check-out}; mkdir -p "$OUT"
left() { echo $(( DL - ($(date +%s) - T0) )); }
say() { echo "=== [$(( $(date +%s) - T0 ))s] $*"; }
HERE=$PWD
say "setup"
mkdir -p /tmp/cb && xz -dc .bundle/bundle.tar.xz | tar xf - -C /tmp/cb || exit 1
ROOT=$(cat /tmp/cb/root)
# The test list names the build machine's paths: make them exist here.
[ -e "$ROOT" ] || { mkdir -p "$(dirname "$ROOT")" && ln -s "$HERE" "$ROOT"; }
[ -e "$ROOT/build-release" ] || mv /tmp/cb/build-release "$ROOT/build-release"
export CLINFER_BUILD_ROOT_HERE=$ROOT/build-release
if [ ! -e /usr/share/libonnx-testdata/data ] && [ -d /tmp/cb/onnxdata/data ]; then
  mkdir -p /usr/share/libonnx-testdata && ln -s /tmp/cb/onnxdata/data /usr/share/libonnx-testdata/data
fi
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ]; then
  mkdir -p /tmp/icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
  export OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=/usr/local/nvidia/lib64
fi
"${PYTHON:-python3}" scripts/device/weights.py regen /tmp/cb/models
# Real models for the goldens; real and redrawn ones for timing.
mkdir -p /tmp/xdg-real/clinfer /tmp/xdg-all/clinfer/bench-models
ln -sfn /tmp/cb/models/real /tmp/xdg-real/clinfer/bench-models
ln -sf /tmp/cb/models/real/*.onnx /tmp/cb/models/*.onnx /tmp/xdg-all/clinfer/bench-models/
mkdir -p /tmp/pyfake/rapidocr_onnxruntime && touch /tmp/pyfake/rapidocr_onnxruntime/__init__.py
ln -sfn /tmp/xdg-all/clinfer/bench-models /tmp/pyfake/rapidocr_onnxruntime/models
B=$ROOT/build-release/engine/tools
nproc; lscpu | grep -E 'Model name|^CPU\(s\)|L2|L3' | cut -c1-120
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
$B/clinfer-run --list-devices 2>&1
want() { case " $ARGS " in *" --$1 "*) return 0;; esac; return 1; }
ARGS="$*"

if want tests; then
  say "tests"
  XDG_CACHE_HOME=/tmp/xdg-real python3 scripts/device/run-tests.py /tmp/cb/tests.json \
    golden-fetched-u2netp-gpu,golden-fetched-picodet-gpu,golden-fetched-basic-pitch-gpu,golden-fetched-silero-vad-gpu \
    opencl,element $(( $(left) - 60 )) "$OUT/tests.log" $(( $(nproc) / 2 )) 2>&1 | tee -a "$OUT/summary.txt"
fi

if want conformance; then
  say "conformance, $(( $(nproc) / 2 )) shards"
  C=$ROOT/build-release/tests/conformance/clinfer-conformance
  n=$(( $(nproc) / 2 )); pids=; rm -f /tmp/conf.*
  for k in $(seq 0 $(( n - 1 ))); do
    $C --device GPU --expected "$ROOT/tests/conformance/expected-gpu.txt" --sample $n \
       --sample-offset $k --verbose --timeout 60 > /tmp/conf.$k 2>&1 & pids="$pids $!"
  done
  while [ -n "$(jobs -rp)" ] && [ "$(left)" -gt 30 ]; do sleep 2; done
  # shellcheck disable=SC2086
  kill $pids 2>/dev/null; pkill -f clinfer-conformance; wait 2>/dev/null
  cat /tmp/conf.* > "$OUT/conformance.log"
  grep -h "^conformance on\|^REGRESSION\|crashed\|timed out" /tmp/conf.* | tee -a "$OUT/summary.txt"
fi

MODELS="front|$ROOT/models/blazeface/face_detection_front_128x128_barracuda.onnx|200|
back|$ROOT/models/blazeface/face_detection_back_256x256_barracuda.onnx|200|
ocr-cls|/tmp/cb/models/ch_ppocr_mobile_v2.0_cls_infer.onnx|200|--shape x=1x3x48x192
ocr-det|/tmp/cb/models/ch_PP-OCRv4_det_infer.onnx|100|--shape x=1x3x320x320
ocr-rec|/tmp/cb/models/ch_PP-OCRv4_rec_infer.onnx|100|--shape x=1x3x48x320
u2netp|/tmp/cb/models/real/u2netp.onnx|20|
picodet|/tmp/cb/models/real/picodet-layout.onnx|60|
lore|/tmp/cb/models/lore-transformer.onnx|100|--shape slct_logi_feat=1x54x256 --shape dets=1x54x8
basic-pitch|/tmp/cb/models/real/basic-pitch.onnx|100|--shape serving_default_input_2:0=1x43844x1
open-nsfw|/tmp/cb/models/open-nsfw.onnx|60|--shape input:0=1x224x224x3
silero-vad|/tmp/cb/models/real/silero-vad.onnx|200|
ddddocr|/tmp/cb/models/ddddocr.onnx|60|--shape input1=1x1x64x256
ddddocr-det|/tmp/cb/models/ddddocr-det.onnx|30|"
bench() { # label timeout args...
  local lab=$1 to=$2; shift 2
  local o; o=$(timeout "$to" stdbuf -oL "$B/clinfer-benchmark" "$@" 2>&1); local rc=$?
  echo "$o" >> "$OUT/bench.log"
  printf '%-30s rc=%-3s %s %s\n' "$lab" $rc "$(echo "$o" | grep -o 'compile_ms=[0-9.]*\|^threads=[0-9]*' | tr '\n' ' ')" \
    "$(echo "$o" | tail -1)" | tee -a "$OUT/summary.txt"
}

if want bench; then
  say "models: GPU device, CPU device with all cores, one thread, latency hint"
  echo "$MODELS" | while IFS='|' read -r k p n a; do
    [ "$(left)" -lt 10 ] && break
    # shellcheck disable=SC2086
    bench "$k GPU" 60 "$p" $a --device GPU --no-fallback --iterations "$n" --warmup 10
    # shellcheck disable=SC2086
    bench "$k CPU threads=$(nproc)" 40 "$p" $a --threads "$(nproc)" --iterations "$n" --warmup 5
    # shellcheck disable=SC2086
    bench "$k CPU threads=1" 40 "$p" $a --threads 1 --iterations $(( (n + 2) / 3 )) --warmup 3
    # shellcheck disable=SC2086
    bench "$k CPU hint=latency" 40 "$p" $a --hint latency --iterations $(( (n + 2) / 3 )) --warmup 3
  done
fi

if want profile; then
  say "BlazeFace 128 per step on the GPU device"
  timeout 60 "$B/clinfer-benchmark" "$ROOT/models/blazeface/face_detection_front_128x128_barracuda.onnx" \
    --device GPU --no-fallback --profile --iterations 200 > "$OUT/profile-gpu.txt" 2>&1
  tail -3 "$OUT/profile-gpu.txt"
fi

if want element; then
  say "element, 1280x720 BGRx, BlazeFace 128: ms per frame from 300 and 1300 frames"
  export GST_PLUGIN_SYSTEM_PATH_1_0='' GST_PLUGIN_PATH=$ROOT/build-release/gst:/tmp/cb/gstplug \
    GST_REGISTRY=/tmp/gstreg.bin GST_REGISTRY_FORK=no
  F128=$ROOT/models/blazeface/face_detection_front_128x128_barracuda.onnx
  wall() { # frames element-and-properties...
    local s e; s=$(date +%s.%N)
    timeout 60 /tmp/cb/bin/gst-launch-1.0 -q videotestsrc num-buffers="$1" pattern=black \
      ! video/x-raw,format=BGRx,width=1280,height=720 ! "${@:2}" ! fakesink sync=false \
      > /tmp/gst.out 2>&1 || tail -3 /tmp/gst.out >&2
    e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN{printf "%.4f", e - s}'
  }
  per() { # label element-and-properties...
    local lab=$1 a b; shift; a=$(wall 300 "$@"); b=$(wall 1300 "$@")
    awk -v l="$lab" -v a="$a" -v b="$b" 'BEGIN{printf "%-36s %.3f ms per frame\n", l, b - a}' | tee -a "$OUT/summary.txt"
  }
  wall 10 clinfer model="$F128" device=GPU > /dev/null   # builds the kernels once
  for _ in 1 2; do
    per "source alone" identity
    per "clinfer device=CPU" clinfer model="$F128" decoder=blazeface device=CPU
    per "clinfer device=CPU threads=1" clinfer model="$F128" decoder=blazeface device=CPU threads=1
    per "clinfer device=GPU" clinfer model="$F128" decoder=blazeface device=GPU
    per "clinfer device=GPU nireq=2" clinfer model="$F128" decoder=blazeface device=GPU nireq=2
  done
fi

if want compare && [ "$(left)" -gt 40 ]; then
  say "compare.py throughput against ONNX Runtime"
  PYTHONPATH=/tmp/pyfake XDG_CACHE_HOME=/tmp/xdg-all timeout $(( $(left) - 5 )) python3 benchmarks/compare.py \
    --clinfer-benchmark "$B/clinfer-benchmark" --no-openvino --only-throughput --rounds 1 \
    --tput-iterations 300 --warmup 5 \
    --models front,back,ocr-cls,ocr-det,ocr-rec,u2netp,picodet,lore,basic-pitch,open-nsfw,silero-vad,ddddocr,ddddocr-det \
    2>&1 | tee "$OUT/compare.log" | grep "^|" | tee -a "$OUT/summary.txt"
fi
say "done"
