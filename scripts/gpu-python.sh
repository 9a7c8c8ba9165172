#!/usr/bin/env bash
# The Python package on an NVIDIA GPU (issue 49): its CUDA tests, the Python CUDA step against
# the Rust step, the zero-copy loop and PPO with JAX on the same GPU, from a wheel built
# beforehand on any Linux x86-64 machine (nothing is built or downloaded on the GPU machine).
set -uo pipefail

usage() {
  cat <<'EOF'
usage: bash scripts/gpu-python.sh --build     build the wheel and its dependencies' wheels (no GPU needed)
       bash scripts/gpu-python.sh [--only STEPS] [--budget SECONDS] [--pack FILE] OUT_DIR
                                              run the checks on the GPU machine, results under OUT_DIR

--build runs scripts/wheel.sh (the wheel with CUDA) and downloads the wheels the package
and the checks need beyond what a GPU image has (gymnasium, optax, pytest and their
dependencies) into target/gpu-python/, packed as target/gpu-python/python.tar.gz with
built-from.txt (the commit the wheel was built from; each run copies it into gpu.txt). Carry it
with this repository's scripts/, python/ and examples/ to the GPU machine; there

    bash scripts/gpu-python.sh OUT_DIR

installs what the image's python3 lacks of them into OUT_DIR/site, on PYTHONPATH (torch and
JAX with CUDA are the image's own; CARTFUSE_GPU_PYTHON names another interpreter), and runs,
each step under its own timeout, within 6 minutes:

  1. tests: python/tests/test_cuda.py and test_device_views.py (device="cuda", the device
     views and CUDA actions through DLPack, with torch and with JAX),
  2. bench: python/bench_cuda.py, the Python CUDA step (host arrays, device views, torch
     actions, the zero-copy loop with a torch policy) against the Rust host step, in rounds,
  3. ppo: examples/ppo_gpu.py --device cuda, PPO with JAX on the same GPU as the envs.

Every log goes under OUT_DIR/logs, steps.tsv holds each step's exit status and seconds.
--pack FILE packs them (not OUT_DIR/site) into FILE (tar.gz) after every step, for a device
call that returns a few files from its output folder: --pack "$OUT/gpu-python.tgz".
--only runs the steps named (comma-separated: tests, bench, ppo; in the order above), and
--budget SECONDS bounds the whole run: each step under its own limit or the time left,
whichever is less, none started with under 5 s left (`skipped`); scripts/gpu-session.sh
runs them so, beside scripts/gpu-check.sh's steps, in one device call.
Exit status: 0 every step passed; 1 a step failed, timed out or was skipped; 2 bad arguments; 3 no GPU; 4 wheels missing.
EOF
}

die() { echo "gpu-python: $1" >&2; exit "${2:-2}"; }

repo="$(cd "$(dirname "$0")/.." && pwd)"
source "$repo/scripts/step-verdict.sh"
source "$repo/scripts/built-from.sh"
dir="${CARTFUSE_GPU_PYTHON_DIR:-$repo/target/gpu-python}"  # the wheels (another folder: for the tests)
mode=run
out=""
pack=""
only=""
budget=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --build) mode=build ;;
    --pack) [ $# -ge 2 ] && [ -n "$2" ] || die "--pack needs a file"; pack="$(realpath -m -- "$2")"; shift ;;
    --only) [ $# -ge 2 ] && [ -n "$2" ] || die "--only needs step names"; only="$2"; shift ;;
    --budget)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "--budget needs a whole number of seconds, got '${2:-}'"
      budget="$2"; shift ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$out" ] || die "one results directory, got $out and $1"; out="$1" ;;
  esac
  shift
done

T_TESTS=150
T_BENCH=120
T_PPO=90

STEP_NAMES=(tests bench ppo)
if [ -n "$only" ]; then
  [ "$mode" = run ] || die "--only is for a run"
  if unknown="$(step_unknown "$only" "${STEP_NAMES[@]}")"; then
    die "--only: no step ${unknown:-with an empty name} (the steps: ${STEP_NAMES[*]})"
  fi
fi

if [ "$mode" = build ]; then
  [ -z "$out" ] || die "--build takes no results directory"
  [ -z "$pack" ] || die "--pack is for a run"
  [ -z "$budget" ] || die "--budget is for a run"
  cd "$repo" || exit 2
  bash scripts/wheel.sh || exit 1
  rm -rf "$dir" && mkdir -p "$dir/wheels"
  cp target/wheels/cartfuse-*.whl "$dir/wheels/" || die "scripts/wheel.sh left no wheel" 1
  # Pure-Python wheels and manylinux ones for CPython 3.10-3.13; numpy, jax and torch are
  # the image's own.
  for py in 3.10 3.11 3.12 3.13; do
    python3 -m pip download -q --only-binary=:all: --python-version "$py" \
      --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 --no-deps \
      -d "$dir/wheels" "gymnasium==1.4.0" "cloudpickle>=1.2" "farama-notifications>=0.0.1" \
      "typing-extensions>=4.3" "optax" "chex" "absl-py" "toolz" "pytest>=8" "pluggy" \
      "iniconfig" "packaging" "pygments" "exceptiongroup" "tomli" "etils" || exit 1
  done
  built_from "$repo" "CUDARC_CUDA_VERSION=${CUDARC_CUDA_VERSION:-12080}" > "$dir/built-from.txt"
  tar -czf "$dir/python.tar.gz" -C "$dir" wheels built-from.txt
  ls -la "$dir/wheels" "$dir/python.tar.gz"
  echo "gpu-python: carry $dir/python.tar.gz with scripts/, python/ and examples/, then: bash scripts/gpu-python.sh OUT_DIR"
  exit 0
fi

[ -n "$out" ] || die "a results directory is needed (see --help)"
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  die "$out is not empty: give a new or empty directory"
fi
gpus="$(timeout 15 "${CARTFUSE_GPU_CHECK_NVIDIA_SMI:-nvidia-smi}" --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)"
[ -n "$gpus" ] || die "no GPU found (nvidia-smi lists none): run it where there is one" 3
if [ ! -d "$dir/wheels" ] && [ -f "$dir/python.tar.gz" ]; then
  tar -xzf "$dir/python.tar.gz" -C "$dir" || die "cannot unpack $dir/python.tar.gz" 4
fi
ls "$dir"/wheels/cartfuse-*.whl >/dev/null 2>&1 || die "no wheel in $dir/wheels: run --build first" 4

mkdir -p "$out/logs" || exit 2
out="$(cd "$out" && pwd)"
echo "$gpus" > "$out/gpu.txt"
# The tree the wheel was built from (written by --build).
cat "$dir/built-from.txt" >> "$out/gpu.txt" 2>/dev/null \
  || echo "built-from: unknown ($dir has no built-from.txt)" >> "$out/gpu.txt"
: > "$out/steps.tsv"
# The image's python3, not a virtual environment made from it: on the GPU image python3 is
# itself one (/opt/torch/.venv), whose torch and JAX a new one would not see. What it lacks
# (each module tried by import) goes into a folder of its own, first on PYTHONPATH.
py="${CARTFUSE_GPU_PYTHON:-python3}"
site="$out/site"
wanted=(cartfuse gymnasium)
for entry in farama_notifications:farama-notifications cloudpickle:cloudpickle \
  typing_extensions:typing-extensions pytest:pytest pluggy:pluggy iniconfig:iniconfig \
  packaging:packaging pygments:pygments optax:optax chex:chex absl:absl-py toolz:toolz \
  etils:etils; do
  "$py" -c "import ${entry%%:*}" 2>/dev/null || wanted+=("${entry#*:}")
done
if [ "$("$py" -c 'import sys; print(sys.version_info < (3, 11))')" = True ]; then
  wanted+=(exceptiongroup tomli)  # pytest's, before Python 3.11
fi
echo "gpu-python: installing into $site: ${wanted[*]}"
"$py" -m pip install -q --no-index --no-deps --find-links "$dir/wheels" --target "$site" \
  "${wanted[@]}" > "$out/logs/install.log" 2>&1 || { cat "$out/logs/install.log"; exit 1; }
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"

# NVRTC where cudarc looks for it: the wheel's bindings are CUDA 12.8's, which open
# libnvrtc.so or libnvrtc.so.12 (scripts/nvrtc-path.sh; what it did goes into gpu.txt).
source "$repo/scripts/nvrtc-path.sh"
nvrtc_on_path "$out/nvrtc" >> "$out/gpu.txt"

run_step() {
  local name="$1" limit="$2"; shift 2
  local start status
  step_chosen "$only" "$name" || return 0
  limit="$(step_limit "$name" "$limit" "$budget" "$out/steps.tsv" 2>&1)" || { echo "== $limit"; return 0; }
  start=$(date +%s)
  echo "== $name (at most ${limit}s): $*"
  (cd "$repo" && timeout "$limit" "$@") > "$out/logs/$name.log" 2>&1
  status=$?
  printf '%s\t%s\t%s\n' "$name" "$status" "$(( $(date +%s) - start ))" >> "$out/steps.tsv"
  tail -25 "$out/logs/$name.log"
  pack_results
}

# The logs and steps.tsv packed into --pack's file (beside it first, then moved).
pack_results() {
  [ -n "$pack" ] || return 0
  tar -czf "$pack.part" -C "$out" gpu.txt steps.tsv logs && mv -f "$pack.part" "$pack"
}

run_step tests "$T_TESTS" env XLA_PYTHON_CLIENT_PREALLOCATE=false "$py" -m pytest -q -p no:cacheprovider python/tests/test_cuda.py python/tests/test_device_views.py
run_step bench "$T_BENCH" "$py" python/bench_cuda.py --sizes 1 4096 65536 1048576 --rounds 5 --budget 0.05
run_step ppo "$T_PPO" env XLA_PYTHON_CLIENT_PREALLOCATE=false "$py" examples/ppo_gpu.py --device cuda

echo "== gpu-python summary ($out)"
sed 's/^/gpu: /' "$out/gpu.txt"
failed=0
while IFS=$'\t' read -r step status seconds; do
  verdict="$(step_verdict "$status")" || failed=1
  printf '%-8s %-20s %5ss\n' "$step" "$verdict" "$seconds"
done < "$out/steps.tsv"
exit "$failed"
