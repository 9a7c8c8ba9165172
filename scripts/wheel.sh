#!/usr/bin/env bash
# Builds cartfuse's wheel (abi3: one wheel for CPython 3.10 and newer) with maturin into
# target/wheels/. The native CPU runtime is always in it; wgpu (Vulkan, Metal) and CUDA too
# unless --cpu-only is given (then no cubecl, wgpu or burn crate is compiled).
#
# CUDA's driver is loaded when a CUDA env is opened, not when the module is imported, so
# one wheel serves machines with and without NVIDIA. Its bindings are CUDA 12.8's
# (CUDARC_CUDA_VERSION, overridable), which drivers of CUDA 12.8 and 13 both provide.
#
#   bash scripts/wheel.sh [--cpu-only] [--profile NAME] [--test-parity]
#
# --profile builds in another Cargo profile than `release` (scripts/test.sh: `release-tests`,
# the profile its `cargo test` built). --test-parity turns on the extension's `test-parity`
# feature, which gives the shared dependencies the features of scripts/test.sh's workspace
# build, so that the wheel reuses that build instead of compiling the GPU stack again
# (bindings/Cargo.toml says how).
#
# Uses `maturin` from PATH, else installs the pinned one into target/wheel-venv. Needs a Rust
# toolchain (scripts/setup.sh installs one); installing the wheel does not.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/test-features.sh

usage="usage: bash scripts/wheel.sh [--cpu-only] [--profile NAME] [--test-parity]"
features=("${wheel_features[@]}")
parity=()
profile=(--release)
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu-only) features=(--no-default-features) ;;
    --test-parity) parity=("${wheel_test_features[@]}") ;;
    --profile)
      if [ $# -lt 2 ] || [ -z "$2" ]; then
        echo "$usage  (--profile needs a profile name)" >&2
        exit 2
      fi
      profile=(--profile "$2")
      shift
      ;;
    *)
      echo "$usage  (unknown argument: $1)" >&2
      exit 2
      ;;
  esac
  shift
done
if [ "${features[0]}" = --no-default-features ] && [ ${#parity[@]} -gt 0 ]; then
  # test-parity turns on cubecl, which a CPU-only wheel must not contain.
  echo "$usage  (--cpu-only and --test-parity exclude each other)" >&2
  exit 2
fi

maturin="$(command -v maturin || true)"
if [ -z "$maturin" ]; then
  python3 -m venv target/wheel-venv
  target/wheel-venv/bin/pip install -q "maturin==1.16.0"
  maturin="$PWD/target/wheel-venv/bin/maturin"
fi

rm -f target/wheels/cartfuse-*.whl
# The workspace's target dir, in the chosen profile: what cargo compiled there is reused.
(cd python && CUDARC_CUDA_VERSION="${CUDARC_CUDA_VERSION:-12080}" \
  "$maturin" build "${profile[@]}" --out ../target/wheels "${features[@]}" "${parity[@]}")
ls target/wheels/cartfuse-*.whl
