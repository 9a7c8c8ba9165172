#!/usr/bin/env bash
# Runs every test: the Rust workspace, then the Python package as a user gets it: the wheel
# (scripts/wheel.sh) installed into a fresh virtual environment whose PATH has no cargo or
# rustc, tested with pytest against gymnasium's own envs. Needs what scripts/setup.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

# The tests' profile and features (`release-tests`, the extension's `test-parity`), in every
# build here, the wheel's included: the dependencies get the same features in the
# workspace's build as in maturin's build of the extension alone, so the wheel reuses the
# GPU stack (scripts/test-features.sh, bindings/Cargo.toml).
source scripts/test-features.sh
profile="$test_profile"
parity=("${test_features[@]}")

# Every test target and the doctests. The examples are type-checked, not compiled to code:
# no test runs them, and generating their code (burn's learners on wgpu, one binary each) took
# a sixth of the build on two cores.
cargo test --workspace --profile "$profile" "${parity[@]}" --lib --bins --tests
cargo test --workspace --profile "$profile" "${parity[@]}" --doc
# With the cuda feature as well, as .ci/run's clippy checks every target: the type check then
# reuses the dependencies clippy checked (56 s more without it on two cores).
cargo check --workspace --profile "$profile" "${parity[@]}" --features cuda --examples

# Tools: maturin builds the wheel, ruff checks the Python sources.
tools="${CARTFUSE_TOOLS_VENV:-target/tools-venv}"
python3 -m venv "$tools"
tools="$(cd "$tools" && pwd)"
"$tools/bin/pip" install -q --upgrade pip
"$tools/bin/pip" install -q "maturin==1.16.0" "ruff==0.17.6"
"$tools/bin/ruff" check python
"$tools/bin/ruff" format --check python
"$tools/bin/ruff" check --config python/pyproject.toml scripts examples
"$tools/bin/ruff" format --check --config python/pyproject.toml scripts examples

# The wheel, in the tests' profile and the workspace's target dir, with the same features of
# the shared dependencies: what it compiles is the CUDA runtime and the crates it changes.
PATH="$tools/bin:$PATH" bash scripts/wheel.sh --profile "$profile" --test-parity

# A fresh environment with the wheel and the test dependencies. ray: python/tests/test_ray.py
# runs the Ray recipe (examples/ray_rollout.py) on a local cluster. pygame: gymnasium's own
# renderer, which python/tests/test_render.py compares cartfuse's numpy frames with. mypy:
# python/tests/test_stub.py runs its stubtest on the native module against _native.pyi.
venv="${CARTFUSE_TEST_VENV:-target/test-venv}"
rm -rf "$venv"
python3 -m venv "$venv"
venv="$(cd "$venv" && pwd)"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q target/wheels/cartfuse-*.whl "gymnasium==1.4.0" "numpy>=1.26" \
  "pytest>=8" "ray==2.60.0" "pygame==2.6.1" "mypy==1.19.1"

# PATH without the Rust toolchain: the installed package must not need it.
no_rust_path="$venv/bin"
IFS=: read -r -a dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  if [ -x "$dir/cargo" ] || [ -x "$dir/rustc" ]; then
    continue
  fi
  no_rust_path="$no_rust_path:$dir"
done
if PATH="$no_rust_path" command -v cargo >/dev/null; then
  echo "cargo is still on the test PATH ($no_rust_path)" >&2
  exit 1
fi

# From outside the source tree, so `import cartfuse` can only find the installed package.
cd "$venv"
PATH="$no_rust_path" "$venv/bin/python" - <<'PY'
import cartfuse

assert "site-packages" in cartfuse.__file__, cartfuse.__file__
print(f"testing the installed cartfuse {cartfuse.__version__} ({cartfuse.__file__})")
PY
# CARTFUSE_LONG_RUN_STEPS shortens the 1e7 env-step memory run on slow machines.
set +e
PATH="$no_rust_path" "$venv/bin/python" -m pytest "$repo/python/tests" -q -p no:cacheprovider
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: python/tests is missing or broken" >&2
  exit 1
fi
exit "$status"
