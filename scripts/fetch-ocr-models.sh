#!/usr/bin/env bash
# Fetches the PP-OCR models of the OCR test (tests/gst/test-ocr.py): the
# rapidocr-onnxruntime 1.3.24 wheel from PyPI (15 MB, pinned by its hash),
# its models/*.onnx unpacked into DIR (default ~/.cache/clinfer/ocr-models).
# Nothing is installed into any Python. Prints the folder on success.
#
#   scripts/fetch-ocr-models.sh [DIR]
set -euo pipefail

dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/clinfer/ocr-models}
req="rapidocr-onnxruntime==1.3.24 --hash=sha256:4282ff0b8db05ad2a53afc8d0ef2e7d879c53022fc61a4f8e84c58d737822cd2"
m=rapidocr_onnxruntime/models
exec "$(dirname "$0")/fetch-wheel-models.sh" "$dir" \
  "$req|$m/ch_PP-OCRv4_det_infer.onnx|ch_PP-OCRv4_det_infer.onnx" \
  "$req|$m/ch_PP-OCRv4_rec_infer.onnx|ch_PP-OCRv4_rec_infer.onnx" \
  "$req|$m/ch_ppocr_mobile_v2.0_cls_infer.onnx|ch_ppocr_mobile_v2.0_cls_infer.onnx"
