#!/usr/bin/env bash
# scripts/seed-repro.sh [WORKDIR]: the seed report (DESIGN.md) reproduced on
# kiln's own seed models. Builds model_nhwc and model_nchw (`kiln example
# seed`), and runs each on the reference provider and on the cpu provider on
# the same seeded input:
#   1. each run in its own process (`kiln run --output-dir`), the outputs
#      compared with `kiln compare`;
#   2. both providers in one process (`kiln verify`: a cpu session and a
#      reference session side by side).
# For each model it prints the seed report's table: the baseline's max |.|,
# max and mean |X - baseline|, the relative error, the max diff of the sorted
# values, and ok / MISMATCH. The baseline is kiln's reference provider and X
# the cpu provider, in both modes, so the two rows must agree number for
# number (a different row in one process would be the "two sessions of
# different providers in one process" fault of the report).
# Exit 0 when every row is ok and both modes agree (to the printed digits), 1
# otherwise.
# Env: KILN (kiln binary, default build/kiln). Runs at 1 thread so the cpu
# results are reproducible between processes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KILN="${KILN:-$ROOT/build/kiln}"
if [[ ! -x "$KILN" ]]; then
  echo "seed-repro: no kiln binary at $KILN (build it, or set KILN)" >&2
  exit 2
fi
if [[ $# -ge 1 ]]; then
  WORK="$1"
  mkdir -p "$WORK"
else
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/kiln-seed-repro.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
fi

# The metrics row of output 'output' in a compare table (kiln compare and
# kiln verify print the same table): max|ref| max|diff| mean|diff| rel sorted verdict.
metrics_row() {
  awk '$1 == "output" && $2 ~ /^float/ { print $3, $4, $5, $6, $7, $NF; found = 1; exit }
       END { if (!found) exit 1 }'
}

status=0
for layout in nhwc nchw; do
  dir="$WORK/$layout"
  model="$dir/model_$layout.onnx"
  mkdir -p "$dir"
  "$KILN" example seed --layout "$layout" -o "$model" >/dev/null
  "$KILN" gen-inputs "$model" --seed 0 --output-dir "$dir/inputs" >/dev/null
  feed=(--input "input=$dir/inputs/input.npy")

  # 1. One process per run.
  for provider in reference cpu; do
    "$KILN" run "$model" --provider "$provider" --threads 1 "${feed[@]}" --output-dir "$dir/$provider" --quiet >/dev/null
  done
  separate_out="$("$KILN" compare "$dir/reference" "$dir/cpu" 2>&1)" || true
  # 2. Both providers in one process.
  together_out="$("$KILN" verify "$model" --provider cpu --threads 1 "${feed[@]}" 2>&1)" || true

  if ! separate="$(metrics_row <<<"$separate_out")"; then
    echo "seed-repro: kiln compare printed no row for model_$layout:" >&2
    echo "$separate_out" >&2
    status=1
    continue
  fi
  if ! together="$(metrics_row <<<"$together_out")"; then
    echo "seed-repro: kiln verify printed no row for model_$layout:" >&2
    echo "$together_out" >&2
    status=1
    continue
  fi

  echo "model_$layout (input $(sed -n 's/^  input [^ ]*  *\([a-z0-9]*\[[0-9,]*\]\).*/\1/p' <<<"$together_out" | head -1)), X = cpu, baseline = reference"
  printf '  %-26s %10s %12s %12s %12s %12s  %s\n' "run" "max|ref|" "max|X-ref|" "mean|X-ref|" "rel error" "sorted diff" "verdict"
  for row in "separate processes:$separate" "one process (verify):$together"; do
    label="${row%%:*}"
    read -r maxref maxdiff meandiff rel sorted verdict <<<"${row#*:}"
    printf '  %-26s %10s %12s %12s %12s %12s  %s\n' "$label" "$maxref" "$maxdiff" "$meandiff" "$rel" "$sorted" "$verdict"
    [[ "$verdict" == "ok" ]] || status=1
  done
  if [[ "$separate" == "$together" ]]; then
    echo "  both modes agree"
  else
    echo "  the modes DIFFER: one process does not reproduce separate processes"
    status=1
  fi
  echo
done
exit "$status"
