#!/usr/bin/env bash
# kiln side by side with ONNX Runtime (CPU provider, onnxruntime-node).
#
#   bench/compare.sh [options] MODEL[@NAME=DIMS...]...
#
# For each model, writes its inputs once with `kiln gen-inputs` (so both peers
# get identical values), then for each thread count alternates `kiln bench`
# and bench/ort_bench.mjs for --rounds rounds (kiln, ort, kiln, ort, ...).
# Each round reports the median of --runs timed runs after --warmup; the
# table shows each peer's median of those medians, and the ratio kiln/ORT
# (< 1: kiln is faster), with the geometric mean of the ratios at the end.
#
# A model's dynamic input dims are set after '@', e.g.
#   ch_ppocr_mobile_v2.0_cls_infer.onnx@x=1x3x48x192
#
# Options:
#   --threads "1 2"   thread counts (kiln --threads, ORT intraOpNumThreads; default "1")
#   --rounds R        alternated rounds per peer (default 3)
#   --runs N          timed runs per round (default 10)
#   --warmup N        untimed runs per round (default 2)
#   --provider P      kiln provider (default cpu)
#   --opt-level L     kiln opt level (default all; ORT always runs 'all')
#   --seed S          seed of the generated inputs (default 0)
#   --cpus LIST       run both peers under `taskset -c LIST` (e.g. 1): on a
#                     shared VM one core can be slower than another for
#                     minutes at a time (a co-tenant on its sibling), and an
#                     unpinned 1-thread run lands on either, per process;
#                     pinned, both peers meet the same core
#   --out DIR         keep inputs, per-round JSON and logs in DIR (default: a temp folder, removed)
#   --markdown        print the table as Markdown, with date and machine (for bench/README.md)
# Env: KILN (kiln binary, default build/kiln), KILN_NPM_DIR (see scripts/ort-setup.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KILN="${KILN:-$ROOT/build/kiln}"
THREADS="1" ROUNDS=3 RUNS=10 WARMUP=2 PROVIDER=cpu OPT=all SEED=0 OUT="" MARKDOWN=0 CPUS=""
MODELS=()

die() { echo "compare: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
num() { [[ "$2" =~ ^[0-9]+$ ]] || die "$1 needs a whole number, got '$2'"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --threads) [ $# -ge 2 ] || die "$1 needs a value"; THREADS="$2"; shift 2 ;;
    --rounds) [ $# -ge 2 ] || die "$1 needs a value"; num "$1" "$2"; ROUNDS="$2"; shift 2 ;;
    --runs) [ $# -ge 2 ] || die "$1 needs a value"; num "$1" "$2"; RUNS="$2"; shift 2 ;;
    --warmup) [ $# -ge 2 ] || die "$1 needs a value"; num "$1" "$2"; WARMUP="$2"; shift 2 ;;
    --provider) [ $# -ge 2 ] || die "$1 needs a value"; PROVIDER="$2"; shift 2 ;;
    --opt-level) [ $# -ge 2 ] || die "$1 needs a value"; OPT="$2"; shift 2 ;;
    --seed) [ $# -ge 2 ] || die "$1 needs a value"; num "$1" "$2"; SEED="$2"; shift 2 ;;
    --out) [ $# -ge 2 ] || die "$1 needs a value"; OUT="$2"; shift 2 ;;
    --cpus) [ $# -ge 2 ] || die "$1 needs a value"; [[ "$2" =~ ^[0-9,-]+$ ]] || die "--cpus needs a CPU list such as 1 or 0-1, got '$2'"; CPUS="$2"; shift 2 ;;
    --markdown) MARKDOWN=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) MODELS+=("$1"); shift ;;
  esac
done
[ ${#MODELS[@]} -gt 0 ] || die "no MODEL given (see --help)"
[ "$ROUNDS" -ge 1 ] && [ "$RUNS" -ge 1 ] || die "--rounds and --runs must be >= 1"
for t in $THREADS; do num --threads "$t"; [ "$t" -ge 1 ] || die "--threads: counts must be >= 1"; done
[ -x "$KILN" ] || die "kiln binary '$KILN' not found (build it, or set KILN)"
command -v node >/dev/null 2>&1 || die "node is not installed"
PIN=()
if [ -n "$CPUS" ]; then
  command -v taskset >/dev/null 2>&1 || die "--cpus needs taskset (util-linux)"
  taskset -c "$CPUS" true 2>/dev/null || die "--cpus: cannot run on CPUs '$CPUS' here"
  PIN=(taskset -c "$CPUS")
fi
"$ROOT/scripts/ort-setup.sh" >&2 || die "ONNX Runtime is not available (scripts/ort-setup.sh failed)"

if [ -z "$OUT" ]; then
  OUT="$(mktemp -d "${TMPDIR:-/tmp}/kiln-compare.XXXXXX")"
  trap 'rm -rf "$OUT"' EXIT
fi
mkdir -p "$OUT"
MANIFEST="$OUT/manifest.tsv"
: > "$MANIFEST"

# [A-Za-z0-9._-] kept, others '_': the file name `kiln gen-inputs` gives an input.
safe_name() { printf '%s' "$1" | sed 's/[^A-Za-z0-9._-]/_/g'; }

# MODEL@NAME=DIMS@... -> $model and $shape_args. Only trailing @NAME=DIMS
# parts are shapes: a path may hold '@' itself (node_modules/@gutenye/...).
split_spec() {
  model="$1"
  shape_args=()
  while [[ "$model" =~ ^(.+)@([^@/=]+=[0-9x]*)$ ]]; do
    model="${BASH_REMATCH[1]}"
    shape_args=(--shape "${BASH_REMATCH[2]}" "${shape_args[@]}")
  done
}
for spec in "${MODELS[@]}"; do
  split_spec "$spec"
  [ -f "$model" ] || die "model file '$model' does not exist"
done

i=0
for spec in "${MODELS[@]}"; do
  i=$((i + 1))
  split_spec "$spec"
  label="$(basename "$model" .onnx)"
  dir="$OUT/$i-$(safe_name "$label")"
  mkdir -p "$dir"
  # Inputs once per model, shared by every round and thread count of both peers.
  if ! "$KILN" gen-inputs "$model" "${shape_args[@]}" --seed "$SEED" --output-dir "$dir/inputs" > "$dir/gen-inputs.txt" 2> "$dir/gen-inputs.err"; then
    echo "compare: $label: kiln gen-inputs failed:" >&2
    sed 's/^/  /' "$dir/gen-inputs.err" >&2
    for t in $THREADS; do printf '%s\t%s\tkiln\tFAIL\n%s\t%s\tort\tFAIL\n' "$label" "$t" "$label" "$t" >> "$MANIFEST"; done
    continue
  fi
  # gen-inputs prints "NAME  dtype[dims]  min=..." per input: NAME ends at the first double space.
  input_args=()
  while IFS= read -r line; do
    name="${line%%  *}"
    [ -n "$name" ] && input_args+=(--input "$name=$dir/inputs/$(safe_name "$name").npy")
  done < "$dir/gen-inputs.txt"
  for t in $THREADS; do
    for r in $(seq 1 "$ROUNDS"); do
      echo "compare: $label threads=$t round $r/$ROUNDS" >&2
      k="$dir/t$t.kiln.$r"
      if "${PIN[@]}" "$KILN" bench "$model" --provider "$PROVIDER" --opt-level "$OPT" --threads "$t" "${input_args[@]}" \
           --warmup "$WARMUP" --runs "$RUNS" --json "$k.json" > "$k.log" 2>&1; then
        printf '%s\t%s\tkiln\t%s\n' "$label" "$t" "$k.json" >> "$MANIFEST"
      else
        echo "compare: $label: kiln bench failed: $(tail -n 1 "$k.log")" >&2
        printf '%s\t%s\tkiln\tFAIL\n' "$label" "$t" >> "$MANIFEST"
      fi
      o="$dir/t$t.ort.$r"
      if "${PIN[@]}" node "$ROOT/bench/ort_bench.mjs" "$model" --threads "$t" "${input_args[@]}" \
           --warmup "$WARMUP" --runs "$RUNS" --json "$o.json" > "$o.log" 2>&1; then
        printf '%s\t%s\tort\t%s\n' "$label" "$t" "$o.json" >> "$MANIFEST"
      else
        echo "compare: $label: ORT failed: $(tail -n 1 "$o.log")" >&2
        printf '%s\t%s\tort\tFAIL\n' "$label" "$t" >> "$MANIFEST"
      fi
    done
  done
done

table_args=(--provider "$PROVIDER" --rounds "$ROUNDS" --runs "$RUNS" --warmup "$WARMUP")
if [ "$MARKDOWN" = 1 ]; then
  cpu="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)"
  rev="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  machine="${cpu:-unknown CPU}, $(nproc) cores${CPUS:+, both peers pinned to CPU $CPUS}"
  table_args+=(--markdown --machine "$machine" --date "$(date -u +%Y-%m-%d)" --rev "$rev")
fi
node "$ROOT/bench/compare_table.mjs" "$MANIFEST" "${table_args[@]}"
# Exit 1 when a peer failed on some model (the table shows 'fail' there).
! grep -q $'\tFAIL$' "$MANIFEST" || exit 1
