#!/bin/bash
# cpu vs reference for each model of the set, every level, 1 and 2 threads.
# The models come from bench/export_models.py; each reference run takes seconds to a minute.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
K="${KILN:-$ROOT/build/kiln}"
M="${KILN_BENCH_MODELS:-$HOME/.cache/kiln-bench-models}"
OUT="${OUT:-/tmp/kiln-verify-set}"
for m in mobilenet_v2 resnet50 rtmdet_like deeplabv3_mobilenet_v3_large; do
  d=$OUT/$m; rm -rf $d; mkdir -p $d
  $K gen-inputs $M/$m.onnx --output-dir $d/in > /dev/null
  args=""; for f in $d/in/*.npy; do n=$(basename $f .npy); args="$args --input $n=$f"; done
  start=$(date +%s)
  $K run $M/$m.onnx $args --quiet --output-dir $d/ref > /dev/null || echo "$m reference failed"
  echo "$m reference $(( $(date +%s) - start )) s"
  for L in disable basic extended all; do for T in 1 2; do
    $K run $M/$m.onnx $args --provider cpu --opt-level $L --threads $T --quiet --output-dir $d/cpu_${L}_$T > /dev/null
    r=$($K compare $d/ref $d/cpu_${L}_$T > $d/cmp_${L}_$T.txt; echo $?)
    echo "$m $L t$T: $(grep -E '^verdict|MISMATCH|ok \(' $d/cmp_${L}_$T.txt | tail -1) rc=$r"
  done; done
done
