#!/usr/bin/env bash
# Runs every test: the Rust workspace, then the Python package (built with maturin into a
# virtual environment under target/, tested with pytest against gymnasium's own envs).
# Needs what scripts/setup.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --release

venv="${CARTFUSE_TEST_VENV:-target/test-venv}"
python3 -m venv "$venv"
venv="$(cd "$venv" && pwd)" # absolute: PATH below must find its maturin from anywhere
"$venv/bin/pip" install -q --upgrade pip
# ray: python/tests/test_ray.py runs the Ray recipe (examples/ray_rollout.py) on a local
# cluster. pygame: gymnasium's own renderer, which python/tests/test_render.py compares
# cartfuse's numpy frames with (and check_env's human-mode render).
"$venv/bin/pip" install -q "maturin==1.16.0" "gymnasium==1.4.0" "numpy>=1.26" "pytest>=8" \
  "ruff==0.17.6" "ray==2.60.0" "pygame==2.6.1"
"$venv/bin/ruff" check python
"$venv/bin/ruff" format --check python
"$venv/bin/ruff" check --config python/pyproject.toml scripts examples
"$venv/bin/ruff" format --check --config python/pyproject.toml scripts examples
# The extension is built in the workspace's target dir with the release profile, reusing
# what `cargo test` compiled; no build isolation: maturin is already in the venv (its build
# hook calls `maturin` from PATH).
PATH="$venv/bin:$PATH" "$venv/bin/pip" install -q --no-build-isolation ./python
# CARTFUSE_LONG_RUN_STEPS shortens the 1e7 env-step memory run on slow machines.
set +e
"$venv/bin/python" -m pytest python/tests -q
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: python/tests is missing or broken" >&2
  exit 1
fi
exit "$status"
