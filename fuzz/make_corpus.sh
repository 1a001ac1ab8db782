#!/usr/bin/env bash
# Seed corpora for the libFuzzer targets, gathered from fixtures already on the
# machine (nothing binary is committed):
#   OUT/loader       the smallest model.onnx files of Debian's libonnx-testdata
#                    and tests/regressions/*/model.onnx
#   OUT/tensor_file  the smallest input_*.pb/output_*.pb of the same tests
#                    (all of the sequence/optional/string ones), the .pb files
#                    of tests/regressions, and .npy files numpy writes here for
#                    every dtype kiln reads (plus a few it must refuse)
# Usage: fuzz/make_corpus.sh OUT [N]   (N: how many of the smallest of each, default 300)
# Files are named by content hash, so rerunning into a corpus that already
# holds what the fuzzers found only adds what is missing.
set -euo pipefail
out=${1:?usage: make_corpus.sh OUT [N]}
n=${2:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
data=/usr/share/libonnx-testdata/data
mkdir -p "$out/loader" "$out/tensor_file"

# Copies files named on stdin into $1, each as its sha1.
add() {
  local dir=$1 f h
  while IFS= read -r f; do
    [ -f "$f" ] || continue
    h=$(sha1sum "$f" | cut -c1-40)
    [ -e "$dir/$h" ] || cp "$f" "$dir/$h"
  done
}
# find, where a missing folder is no files rather than an error.
files() { if [ -d "$1" ]; then find "$@"; fi; }
# The N smallest of the files find prints (with -printf '%s %p\n').
smallest() { sort -n | awk -v n="$1" 'NR <= n' | cut -d' ' -f2-; }

if [ -d "$data" ]; then
  find "$data" -name model.onnx -printf '%s %p\n' | smallest "$n" | add "$out/loader"
  find "$data" -name '*.pb' -path '*test_data_set*' -printf '%s %p\n' | smallest "$n" | add "$out/tensor_file"
  find "$data" -name '*.pb' -path '*test_data_set*' \( -path '*sequence*' -o -path '*optional*' -o -path '*string*' \) |
    add "$out/tensor_file"
else
  echo "make_corpus: $data missing (apt-get install libonnx-testdata); seeds from the repo only" >&2
fi
files "$root/tests/regressions" -name model.onnx | add "$out/loader"
files "$root/tests/regressions" -name '*.pb' | add "$out/tensor_file"
# Reproducers the fuzzers found earlier (tests/regressions/fuzz/<target>/),
# except those of bugs still open (tests/regressions/fuzz/open.txt): seeding
# those would fail every `make fuzz` on a known bug.
not_open() {
  awk -v list="$root/tests/regressions/fuzz/open.txt" '
    BEGIN { while ((getline l < list) > 0) { sub(/#.*/, "", l); gsub(/[ \t]/, "", l); if (l != "") open[l] = 1 } }
    { n = $0; sub(/.*\//, "", n); if (!(n in open)) print }'
}
files "$root/tests/regressions/fuzz/loader_fuzz" -type f | not_open | add "$out/loader"
files "$root/tests/regressions/fuzz/tensor_file_fuzz" -type f | not_open | add "$out/tensor_file"

# .npy seeds written by numpy itself (Debian's python3-numpy: /usr/bin/python3
# first, in case another python3 comes first in PATH).
py=
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done
if [ -n "$py" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$py" - "$tmp" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
i = 0
def save(a, **kw):
    global i
    np.lib.format.write_array(open(f"{d}/{i}.npy", "wb"), a, **kw)
    i += 1
for dt in ["<f2", "<f4", "<f8", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "|b1"]:
    save(np.arange(6).reshape(2, 3).astype(dt))
    save(np.array(3).astype(dt))                        # 0-d
    save(np.zeros((0, 4), dtype=dt))                    # empty
for s in (np.array(["a", "bc", "d\u00e9f"]), np.array([["xyz"]]), np.array(["\U0001F600"])):
    save(s)
save(np.arange(4, dtype=">f4"))                         # big-endian: refused
save(np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))  # fortran_order: refused
save(np.arange(4, dtype="<f4"), version=(2, 0))
save(np.arange(4, dtype="<f4"), version=(3, 0))
save(np.ones((1, 3, 4, 4), dtype="<f4"))
save(np.array([1 + 2j], dtype="<c8"))                   # complex: refused
EOF
  find "$tmp" -name '*.npy' | add "$out/tensor_file"
else
  echo "make_corpus: no python3 with numpy (apt-get install python3-numpy); no .npy seeds but numpy's own" >&2
fi
for f in /usr/lib/python3/dist-packages/numpy/lib/tests/data/*.npy; do echo "$f"; done | add "$out/tensor_file"
echo "make_corpus: $(ls "$out/loader" | wc -l) loader seeds, $(ls "$out/tensor_file" | wc -l) tensor_file seeds in $out"
