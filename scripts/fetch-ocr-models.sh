#!/usr/bin/env bash
# Fetches the PP-OCR models of the OCR test (tests/gst/test-ocr.py): the
# rapidocr-onnxruntime 1.3.24 wheel from PyPI (15 MB, pinned by its hash),
# its models/*.onnx unpacked into DIR (default ~/.cache/clinfer/ocr-models).
# Nothing is installed into any Python. Prints the folder on success.
#
#   scripts/fetch-ocr-models.sh [DIR]
set -euo pipefail

me=fetch-ocr-models.sh
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/clinfer/ocr-models}
WHEEL="rapidocr-onnxruntime==1.3.24 --hash=sha256:4282ff0b8db05ad2a53afc8d0ef2e7d879c53022fc61a4f8e84c58d737822cd2"
MODELS="ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx"

have_all () {
  for m in $MODELS; do [ -f "$dir/$m" ] || return 1; done
}
if have_all; then
  echo "$dir"
  exit 0
fi

mkdir -p "$dir"
. "$(dirname "$0")/pip-python.sh"
python=$(pip_python "$dir") || { echo "$me: no Python with pip" >&2; exit 1; }
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
echo "$WHEEL" >"$staging/requirements.txt"
"$python" -m pip download --no-deps --only-binary=:all: --require-hashes --no-cache-dir \
  --disable-pip-version-check --progress-bar off -q -d "$staging" \
  -r "$staging/requirements.txt" >&2
"$python" -m zipfile -e "$staging"/rapidocr_onnxruntime-*.whl "$staging/unpacked"
for m in $MODELS; do
  cp "$staging/unpacked/rapidocr_onnxruntime/models/$m" "$dir/$m"
done
have_all || { echo "$me: the wheel lacks a model" >&2; exit 1; }
echo "$dir"
