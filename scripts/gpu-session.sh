#!/usr/bin/env bash
# A lent GPU's minutes spent on what the open issues need most, in one device call:
# scripts/gpu-check.sh's and scripts/gpu-python.sh's steps in an order of need, each part
# under the time the call has left.
set -uo pipefail

usage() {
  cat <<'EOF'
usage: bash scripts/gpu-session.sh --build                 build both kits (no GPU needed)
       bash scripts/gpu-session.sh [--budget SECONDS] [--bin DIR] OUT_DIR
                                                         run the parts below on the GPU machine

A session lent a GPU has about 15 minutes of it in all, a start (minutes) included, and a
device call gets at most 10; the machine goes back after half a minute idle. This runs, in
one call, the parts below in this order, each part given what is left of SECONDS (default
570) as its --budget (a step is cut to it, or skipped when under 5 s are left; a part with
under 20 s left is not started):

  1. gpu-check: host-path, launch, numerics, train, train-one, population-64,
     population-2048 (the host path's table, the launch below cubecl, the replays and float
     ops on CUDA and Vulkan, PPO on the GPU against the CPU, populations of 64 and 2,048:
     issues 49, 51 and 52),
  2. gpu-python: bench (the Python CUDA step against the Rust host step; issue 49),
  3. gpu-check: reproduce (the roof against the driver's copy, the transformer tail's row
     reductions, the ladder; issue 51),
  4. gpu-python: tests (device="cuda", DLPack views and actions with torch and JAX),
  5. gpu-python: ppo (examples/ppo_gpu.py with JAX on the same GPU),
  6. gpu-check: host-step, host-path-caller, crossover, population-64-burn (where the host
     step goes, cubecl's threads, the CPU against the GPU by size, burn's learner).

--build runs `CUDARC_CUDA_VERSION=13000 bash scripts/gpu-check.sh --build` (or the
CUDARC_CUDA_VERSION set) and `bash scripts/gpu-python.sh --build` with the wheel's own CUDA
12.8 bindings (about 25 minutes on two cores); carry
target/gpu-check/bin.tar.xz and target/gpu-python/python.tar.gz (about 27 MiB together,
under the device tool's 64 MiB with the repository). On the GPU machine:

    bash scripts/gpu-session.sh "$OUT"

--bin DIR is gpu-check's binary directory (default target/gpu-check/bin). OUT_DIR (new or
empty) receives one pack a part, part-N-gpu-check.tgz or
part-N-gpu-python.tgz (each written after every step, so a call cut from outside keeps
what finished), and session.txt: each part's exit status and seconds, then every part's
summary, then the commands that run again what failed, timed out or was skipped. The
results folders themselves are under a temporary folder (a device call returns a few files).

Exit status: 0 every step passed; 1 a step failed, timed out or was skipped; 2 bad
arguments; 3 no GPU, or CUDA does not run (nothing after part 1 is tried); 4 binaries or
wheels missing.
EOF
}

die() { echo "gpu-session: $1" >&2; exit "${2:-2}"; }

repo="$(cd "$(dirname "$0")/.." && pwd)"
budget=570
out=""
build=0
bin=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --build) build=1 ;;
    --bin) [ $# -ge 2 ] || die "--bin needs a directory"; bin=(--bin "$(realpath -m -- "$2")"); shift ;;
    --budget)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "--budget needs a whole number of seconds, got '${2:-}'"
      budget="$2"; shift ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$out" ] || die "one results directory, got $out and $1"; out="$1" ;;
  esac
  shift
done

if [ "$build" = 1 ]; then
  [ -z "$out" ] || die "--build takes no results directory"
  CUDARC_CUDA_VERSION="${CUDARC_CUDA_VERSION:-13000}" bash "$repo/scripts/gpu-check.sh" --build "${bin[@]}" || exit 1
  # The wheel keeps its own CUDA 12.8 bindings (scripts/wheel.sh), which drivers of CUDA 12.8
  # and 13 both serve, whatever the binaries above were built for.
  env -u CUDARC_CUDA_VERSION bash "$repo/scripts/gpu-python.sh" --build || exit 1
  exit 0
fi
[ -n "$out" ] || die "a results directory is needed (see --help)"
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  die "$out is not empty: give a new or empty directory"
fi
mkdir -p "$out" || exit 2
out="$(cd "$out" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/cartfuse-gpu-session.XXXXXX")" || exit 2

# The parts: KIT:STEPS (the kit's script runs the steps in its own order).
PARTS=(
  "gpu-check:host-path,launch,numerics,train,train-one,population-64,population-2048"
  "gpu-python:bench"
  "gpu-check:reproduce"
  "gpu-python:tests"
  "gpu-python:ppo"
  "gpu-check:host-step,host-path-caller,crossover,population-64-burn"
)

log="$out/session.txt"
: > "$log"
status=0
again=()
part=0
for entry in "${PARTS[@]}"; do
  part=$((part + 1))
  kit="${entry%%:*}" steps="${entry#*:}"
  left=$((budget - SECONDS))  # bash's seconds since this script started
  if [ "$left" -lt 20 ]; then
    echo "part $part, $kit $steps: not started, ${left}s of the ${budget}s budget left" | tee -a "$log"
    again+=("bash scripts/$kit.sh --only $steps --pack FILE DIR")
    status=1
    continue
  fi
  echo "gpu-session: part $part, $kit $steps, within ${left}s"
  start=$SECONDS
  kit_args=()
  [ "$kit" = gpu-python ] || kit_args=("${bin[@]}")
  bash "$repo/scripts/$kit.sh" "${kit_args[@]}" --only "$steps" --budget "$left" \
    --pack "$out/part-$part-$kit.tgz" "$work/part-$part" > "$work/part-$part.out" 2>&1
  code=$?
  echo "part $part, $kit $steps: exit $code, $((SECONDS - start)) s" | tee -a "$log"
  [ "$code" = 0 ] || status=1
  # What did not pass, to run again in another call.
  if [ -f "$work/part-$part/steps.tsv" ]; then
    redo="$(awk -F'\t' '$2 != "0" { printf "%s%s", sep, $1; sep = "," }' "$work/part-$part/steps.tsv")"
    [ -z "$redo" ] || again+=("bash scripts/$kit.sh --only $redo --pack FILE DIR")
  elif [ "$code" != 0 ]; then
    again+=("bash scripts/$kit.sh --only $steps --pack FILE DIR")
  fi
  if [ "$part" = 1 ] && { [ "$code" = 3 ] || [ "$code" = 4 ]; }; then
    tail -5 "$work/part-$part.out" | tee -a "$log"
    echo "gpu-session: no GPU, CUDA does not run, or binaries are missing: nothing more is tried" | tee -a "$log"
    exit "$code"
  fi
done

summaries="$work/summaries.txt"
{
  for ((part = 1; part <= ${#PARTS[@]}; part++)); do
    [ -f "$work/part-$part.out" ] || continue
    echo
    echo "== part $part (${PARTS[part - 1]})"
    tail -60 "$work/part-$part.out"
  done
  if [ ${#again[@]} -gt 0 ]; then
    echo
    echo "== to run again in another call (what failed, timed out or was skipped):"
    printf '%s\n' "${again[@]}"
  fi
} > "$summaries"
tee -a "$log" < "$summaries"
exit "$status"
