#!/bin/bash
# A third opinion on kiln's fuzz graphs: ONNX Runtime (CPU EP) against kiln's reference provider.
#
# `kiln fuzz` checks the cpu provider against the reference; if both read the spec the same wrong
# way, it cannot see it. So: emit every fuzz graph with the reference's outputs (`--emit`, ONNX
# backend-test folders), run each on ORT with graph optimizations disabled and all, and compare
# under kiln's fuzz tolerance (bench/ort_batch.mjs does the ORT side, in one node process).
#
#   bench/fuzz_third_opinion.sh [--seed S] [--count N] [--out DIR] [--max-ops K]
#
# --out keeps the emitted folders (DIR/seed_<S>/) for a look at a disagreement; by default they go
# to a temporary folder that is removed. Prints one line per graph (agree / DISAGREE / ORT-ERROR)
# and "N graphs: A agree, D disagree, E ORT errors". Exit 0 without disagreement, 1 with, 2 usage.
# KILN picks the kiln binary (default build/kiln); onnxruntime-node comes from $KILN_NPM_DIR
# (scripts/ort-setup.sh).
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
K="${KILN:-$ROOT/build/kiln}"
usage() { [ -n "${1:-}" ] && echo "fuzz_third_opinion: error: $1" >&2
  echo "usage: $0 [--seed S] [--count N] [--out DIR] [--max-ops K]" >&2; exit 2; }

seed=0 count=200 out="" maxops=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seed|--count|--out|--max-ops) [ $# -ge 2 ] || usage "$1 needs a value" ;;&
    --seed) seed=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --max-ops) maxops=(--max-ops "$2"); shift 2 ;;
    -h|--help) usage ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
[[ "$seed" =~ ^[0-9]+$ && "$count" =~ ^[0-9]+$ ]] || usage "--seed and --count take non-negative integers"
[ -x "$K" ] || usage "no kiln binary at $K (build it, or set KILN)"

if [ -n "$out" ]; then
  # ort_batch runs every seed_* folder it finds: folders of an earlier run would mix in.
  compgen -G "$out/seed_*" > /dev/null && usage "$out already holds seed_* folders (of an earlier run?); remove them or pick another --out"
  mkdir -p "$out" || exit 2
  dir="$out"
else
  dir="$(mktemp -d)" || exit 2
  trap 'rm -rf "$dir"' EXIT
fi

start=$(date +%s)
# The fuzz run's own verdict (cpu vs reference at level all) is kiln's business and is printed
# in its last line; a failing graph is still emitted, so its status does not stop us. Only a
# run that emitted nothing is fatal.
echo "== kiln fuzz --seed $seed --count $count --emit $dir --opt-level all ${maxops[*]}"
"$K" fuzz --seed "$seed" --count "$count" --emit "$dir" --opt-level all "${maxops[@]}" | tail -1
if ! compgen -G "$dir/seed_*/model.onnx" > /dev/null; then
  echo "fuzz_third_opinion: error: kiln fuzz emitted no graph into $dir" >&2
  exit 2
fi

echo "== ONNX Runtime (CPU EP, opt levels disabled and all) against kiln reference"
node "$ROOT/bench/ort_batch.mjs" "$dir" --opt-levels disabled,all
rc=$?
echo "wall time $(( $(date +%s) - start )) s"
# ort_batch: 0 agree, 1 disagreement, 2 its usage/setup error (e.g. onnxruntime-node missing).
exit $rc
