#!/usr/bin/env bash
# Everything a GPU machine can answer about cartfuse, in one command of at most 9.5 minutes,
# from binaries built beforehand on any Linux x86-64 machine (nothing is built or
# downloaded on the GPU machine).
set -uo pipefail

usage() {
  cat <<'EOF'
usage: bash scripts/gpu-check.sh [--bin DIR] [--only STEPS] [--budget SECONDS] [--pack FILE] OUT_DIR
                                                          run the checks, results under OUT_DIR
       bash scripts/gpu-check.sh --build [--bin DIR] [--no-compile-check]
                                                          build the binaries it runs (no GPU needed)
       bash scripts/gpu-check.sh --summary OUT_DIR        print the summary of a results directory

Build first, on any Linux x86-64 machine with Rust (no CUDA toolkit needed):

    bash scripts/gpu-check.sh --build

This runs `cargo build --release --features cuda` (the CLI and the examples cuda_launch and
host_step) and
`cargo test --release --features cuda --no-run`, then copies the CLI, the examples and the
integration-test binary, stripped, into the binary
directory (default target/gpu-check/bin) with built-from.txt (the commit they were built from,
with `+ uncommitted changes` where the sources differed from it, the compiler and the
settings: scripts/built-from.sh; every run copies it into gpu.txt) and packs them into target/gpu-check/bin.tar.xz
(xz -9: 16.5 MiB, for a copy limited in size; gzip took 36). Where clang++ is found it then runs
scripts/cuda-compile-check.sh on the tests and CLI just built (about 5 minutes): every kernel's CUDA
source compiled without a GPU, so that NVRTC's errors do not cost GPU time; it exits 1 when
one does not compile (--no-compile-check skips it). Carry either (with this repository's scripts/) to the
GPU machine and run

    bash scripts/gpu-check.sh OUT_DIR

(the binaries are unpacked from bin.tar.xz beside the binary directory when it is missing,
with xz or, where there is none, python3).

OUT_DIR must be empty or absent. On the GPU machine it needs the NVIDIA driver; the wgpu
suites need a Vulkan loader (libvulkan1) and the NVIDIA Vulkan driver (its ICD file is found
in the usual places, or set VK_DRIVER_FILES). First one CUDA step (`rollout --envs 1`, at
most 30 s): where the driver or NVRTC cannot be loaded it exits with status 3 and the error,
before any step's budget is spent. Then it runs, each step under its own timeout, within
9.5 minutes:

  0. host-path: `scripts/host-path.sh` on cuda, the host path's table (issue 49): CartPole
     env-steps/s device-resident (`bench --plan fused`), through the host (`rollout`) and on
     the CPU (`--device cpu rollout`) at 1, 4,096, 65,536 and 1,048,576 envs, two rounds in
     turns (host-path.md, each row as its size finishes),
     host-path-caller: the same at 1, 4,096 and 65,536 envs, one round, with cubecl's calls on the
     calling thread (CARTFUSE_DEVICE_THREAD=caller; CUDA's default is its device thread:
     vendor/README.md), host-path-caller.md,
     host-step: where cubecl's host step goes on CUDA at 1, 4,096 and 1,048,576 envs, block
     by block (a launch and its wait, the upload from the staging and from a new Vec, a
     wait, a read of four words; `examples/host_step.rs`), with cubecl's calls on its
     device thread and on the calling thread, host-step.md,
     launch: the driver's own launch and host step below cubecl, op by op and as a CUDA
     graph (`examples/cuda_launch.rs`, launch.md; issue 49, item 5),
     numerics: every float op on CUDA and on the Vulkan driver against the CPU runtime's
     definitions (integration `math::`), and the five environments' recorded episodes
     replayed on every runtime against the CPU's (`replays::`; issue 51),
  1. `cartfuse --device cuda reproduce` with a budget (every section; burn's CUDA backend
     on the same step is its burn section; the fused policy rollout on the GPU its policy
     section),
  2. `cartfuse --device cuda crossover`: the CPU against the GPU from 1 to 1M envs in turns
     (the study found the GPU ahead from about 70),
  3. `cartfuse --device cuda train --rollout fused-x8`: PPO with the policy fused into the
     rollout on the GPU; train-one: one agent (seed 1, each device's default learner and
     rollout) on the CPU and on the GPU in turns, two rounds (train-one.txt: each run's
     JSON report after its device; issues 49 and 52 ask the GPU to be no slower); then
     populations of 64 and 2,048 agents (seeds 1-K) learnt by the
     device learner (`--learner device`, hand-written kernels) on the fused rollout, each
     agent stopping at 475 or at its budget (their JSON reports in logs/population-K.log),
     and the 64 again with burn's tensor ops (`--learner device-burn`,
     logs/population-64-burn.log),
  4. the runtime test suites on cuda (integration `cuda::`, one thread per core, failures
     in the log as they happen), but for the two slowest tests (step 6),
  5. the same on wgpu, a real Vulkan GPU (integration `wgpu::`),
  6. the two slowest tests on each runtime (Acrobot and MountainCarContinuous against
     gymnasium).

writes every log and result under OUT_DIR (steps.tsv: step, exit status, seconds) and prints
a summary. Without a GPU it says so and exits with status 3 within seconds.

--pack FILE packs OUT_DIR into FILE (tar.gz) after every step, so that a run cut from outside
still leaves the steps it finished in one file (a device call that returns a few files from
its output folder: --pack "$OUT/gpu-check.tgz").

--only runs the steps named (comma-separated; they run in the order above whatever the
order given, their names listed last below). A session with 15 minutes of GPU time all told
(a start costs minutes) runs scripts/gpu-session.sh instead: the steps the open issues
need, this script's and scripts/gpu-python.sh's, most needed first, in one device call.

--budget SECONDS bounds the whole run, the first CUDA step included: each step runs under
its own limit or the time left, whichever is less, and a step with under 5 s left is not
started (`skipped` in steps.tsv, SKIPPED in the summary).

Exit status: 0 every step passed; 1 a step failed, timed out or was skipped; 2 bad arguments; 3 no GPU,
or CUDA does not run; 4 binaries missing.
EOF
  echo
  echo "The steps, with the seconds each may take: ${STEPS[*]}"
}

die() { echo "gpu-check: $1" >&2; exit "${2:-2}"; }

# The steps in the order they run, each NAME:SECONDS, its command the function step_NAME
# (dashes as underscores) below. Together 575 s, within the 10 minutes a GPU call gets, with
# time for the first CUDA step (a few seconds, at most 30) and the summary. The measurements come first: on the first GPU runs
# (2026-11-27, an H100 and an H200) the test suites could not finish in any budget that fits
# (their kernels compile one after another on the device's server thread, hundreds under
# `eager`), and `reproduce` needed about 190 s with 4 s a size (a cut keeps the sections it
# finished: it writes its report after each), so it gets 3 s a size.
STEPS=(host-path:60 host-path-caller:25 host-step:30 launch:20 numerics:20 reproduce:170 crossover:35 train:20
  train-one:25 population-64:25 population-2048:75 population-64-burn:25 tests-cuda:10 tests-wgpu:10
  slow-cuda:15 slow-wgpu:10)
# The suites' slowest tests, run last under their own budget so that a cut there hides no
# other result (alone on CUDA they took 18 s together; among the others, over 60 s each).
SLOW_TESTS=(gymnasium::acrobot gymnasium::mountain_car_continuous)

step_host_path() {
  bash "$repo/scripts/host-path.sh" --bin "$bin/cartfuse" --device cuda --rounds 2 --out "$out/host-path.md"
}
# The same with cubecl's CUDA calls on the calling thread instead of its device thread.
step_host_path_caller() {
  CARTFUSE_DEVICE_THREAD=caller bash "$repo/scripts/host-path.sh" --bin "$bin/cartfuse" \
    --device cuda --sizes "1 4096 65536" --rounds 1 --out "$out/host-path-caller.md"
}
# A host step's blocks through cubecl on CUDA, on its device thread and on the calling thread
# (built by --build, as cuda_launch is).
step_host_step() {
  [ -x "$bin/host_step" ] || { echo "gpu-check: $bin/host_step is missing: build with --build"; return 4; }
  local status=0 thread
  for thread in server caller; do
    echo "## CARTFUSE_DEVICE_THREAD=$thread (server: cubecl's device thread, caller: the calling thread)"
    CARTFUSE_DEVICE_THREAD=$thread "$bin/host_step" --device cuda --sizes 1,4096,1048576 7 100 || status=$?
  done > "$out/host-step.md"
  cat "$out/host-step.md"
  return "$status"
}
# The driver's launches, below cubecl (built by --build; not among the binaries every run needs).
step_launch() {
  [ -x "$bin/cuda_launch" ] || { echo "gpu-check: $bin/cuda_launch is missing: build with --build"; return 4; }
  local status=0
  "$bin/cuda_launch" 11 1000 > "$out/launch.md" || status=$?
  cat "$out/launch.md"
  return "$status"
}
# Every float op against the CPU's definitions on each runtime, and the five environments'
# recorded episodes replayed on every runtime of the build against the CPU's (issue 51): bit
# for bit on CUDA, within a bound on the Vulkan driver.
step_numerics() {
  "$bin/integration" cuda::math:: wgpu::math:: replays:: --test-threads "$(nproc)" --nocapture
}
step_reproduce() { "$bin/cartfuse" --device cuda reproduce --turns-budget 3 --out "$out/reproduce"; }
step_crossover() { "$bin/cartfuse" --device cuda crossover --budget 1 --out "$out/crossover"; }
step_train() { "$bin/cartfuse" --device cuda train --rollout fused-x8; }
# One agent on each device with its defaults (the CPU: the native learner, the policy on the
# host; CUDA: the device learner on the fused rollout), in turns, the order swapped in the
# second round: a line per run, the device then its JSON report (progress in the log).
step_train_one() {
  local status=0 device
  for device in cpu cuda cuda cpu; do
    printf '%s ' "$device"
    "$bin/cartfuse" --device "$device" train --seed 1 --json || { status=$?; echo; }
  done > "$out/train-one.txt"
  return "$status"
}
population() {
  "$bin/cartfuse" --device cuda train --learner "$1" --agents "$2" --seed 1 --json
}
step_population_64() { population device 64; }
step_population_2048() { population device 2048; }
# The same 64 agents learnt by burn's tensor ops (fusion over CubeBackend), for the kernels'
# comparison on the GPU.
step_population_64_burn() { population device-burn 64; }
# One test thread per core (kernels compile on the host), and `--nocapture`: a failing
# test's message is in the log at once, not only in the summary a cut run never prints. The
# float ops ran in `numerics`.
suite() {
  local runtime="$1" skip=(--skip math::) t
  for t in "${SLOW_TESTS[@]}"; do skip+=(--skip "$t"); done
  "$bin/integration" "$runtime::" "${skip[@]}" --test-threads "$(nproc)" --nocapture
}
slow_tests() {
  "$bin/integration" "${SLOW_TESTS[@]/#/$1::}" --test-threads "$(nproc)" --nocapture
}
step_tests_cuda() { suite cuda; }
step_tests_wgpu() { suite wgpu; }
step_slow_cuda() { slow_tests cuda; }
step_slow_wgpu() { slow_tests wgpu; }

step_names() { local step; for step in "${STEPS[@]}"; do echo "${step%%:*}"; done; }
step_function() { echo "step_${1//-/_}"; }
for step in $(step_names); do
  declare -F "$(step_function "$step")" > /dev/null \
    || { echo "gpu-check: step $step has no function $(step_function "$step")" >&2; exit 2; }
done

repo="$(cd "$(dirname "$0")/.." && pwd)"
source "$repo/scripts/step-verdict.sh"
source "$repo/scripts/built-from.sh"
bin="$repo/target/gpu-check/bin"
mode=run
out=""
only=""
pack=""
budget=""
compile_check=1
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --build) mode=build ;;
    --summary) mode=summary ;;
    --no-compile-check) compile_check=0 ;;
    --bin) [ $# -ge 2 ] || die "--bin needs a directory"; bin="$(realpath -m -- "$2")"; shift ;;
    --only) [ $# -ge 2 ] && [ -n "$2" ] || die "--only needs step names"; only="$2"; shift ;;
    --budget)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "--budget needs a whole number of seconds, got '${2:-}'"
      budget="$2"; shift ;;
    --pack) [ $# -ge 2 ] && [ -n "$2" ] || die "--pack needs a file"; pack="$(realpath -m -- "$2")"; shift ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$out" ] || die "one results directory, got $out and $1"; out="$1" ;;
  esac
  shift
done

[ "$compile_check" = 1 ] || [ "$mode" = build ] || die "--no-compile-check goes with --build"
# The binaries packed for a device call, beside their directory.
packed="$(dirname "$bin")/bin.tar.xz"
# Unpacks the xz tar FILE into DIR with xz, or with python3's tarfile where there is no xz
# (CARTFUSE_GPU_CHECK_XZ names another xz, for the tests of this script).
unpack_xz() {
  local xz="${CARTFUSE_GPU_CHECK_XZ:-xz}"
  if command -v "$xz" >/dev/null; then
    "$xz" -dc "$1" | tar -xf - -C "$2"
  elif command -v python3 >/dev/null; then
    python3 -c 'import sys, tarfile
kept = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2], **kept)' "$1" "$2"
  else
    echo "gpu-check: unpacking $1 needs xz or python3" >&2
    return 1
  fi
}
[ -z "$pack" ] || [ "$mode" = run ] || die "--pack is for a run"
[ -z "$budget" ] || [ "$mode" = run ] || die "--budget is for a run"

# The summary of a results directory: one line per step, the test counts, the device and
# the headline numbers. Works on any results directory this script wrote (or a recorded one).
summary() {
  local dir="$1"
  [ -f "$dir/steps.tsv" ] || die "$dir has no steps.tsv: not a gpu-check results directory"
  echo "== gpu-check summary ($dir)"
  [ -f "$dir/gpu.txt" ] && sed 's/^/gpu: /' "$dir/gpu.txt"
  local failed=0 step status seconds
  while IFS=$'\t' read -r step status seconds; do
    local verdict
    verdict="$(step_verdict "$status")" || failed=1
    local detail="" log="$dir/logs/$step.log"
    if [ -f "$log" ] && grep -q -E '^test |^running [0-9]+ tests' "$log"; then
      detail="$(grep -E '^test result:' "$log" | tail -1 | sed 's/^test result: //')"
      # A run cut short has no result line: count the tests that finished.
      [ -n "$detail" ] || detail="$(grep -c ' \.\.\. ok$' "$log") passed, $(grep -c ' \.\.\. FAILED$' "$log") failed before the cut"
    fi
    printf '%-12s %-22s %5ss  %s\n' "$step" "$verdict" "$seconds" "$detail"
  done < "$dir/steps.tsv"
  if [ -f "$dir/host-path.md" ]; then
    echo "host path, CartPole-v1 env-steps/s:"
    cat "$dir/host-path.md"
  fi
  if [ -f "$dir/host-path-caller.md" ]; then
    echo "host path with cubecl's calls on the calling thread (CARTFUSE_DEVICE_THREAD=caller):"
    cat "$dir/host-path-caller.md"
  fi
  if [ -f "$dir/host-step.md" ]; then
    echo "a host step through cubecl, block by block, us per call:"
    cat "$dir/host-step.md"
  fi
  if [ -f "$dir/launch.md" ]; then
    echo "launches below cubecl:"
    cat "$dir/launch.md"
  fi
  if [ -f "$dir/reproduce/report.md" ]; then
    grep -m1 '^Device:' "$dir/reproduce/report.md" | sed 's/^/reproduce: /'
    grep -m1 'beats the CPU' "$dir/reproduce/report.md" | sed 's/^- /reproduce: /'
    grep -m1 -o 'This report is partial.*as the measurement of .* began' "$dir/reproduce/report.md" \
      | sed 's/^This report is partial\*\*: it was/reproduce: partial report,/'
  fi
  if [ -f "$dir/reproduce/burn.csv" ]; then
    awk -F, '/^burn cuda fusion/ { printf "burn cuda fusion: n = %s, %s s per step\n", $2, $3 }' "$dir/reproduce/burn.csv"
  fi
  if [ -f "$dir/logs/crossover.log" ]; then
    grep -E '^ *[a-z0-9-]+: device-resident, the device (wins|never)' "$dir/logs/crossover.log" | sed 's/^/crossover: /'
  fi
  if [ -f "$dir/logs/train.log" ]; then
    grep -E '^(envs device|mean return|rollout time)' "$dir/logs/train.log" | sed 's/^/train: /'
  fi
  if [ -f "$dir/train-one.txt" ]; then
    echo "one agent, seed 1, on each device in turns (train-one.txt):"
    sed -E -e 's/^([a-z]+) .*"solved":\{"env_steps":([0-9]+),"seconds":([0-9.e+-]+)\}.*"seconds":([0-9.e+-]+),"rollout_seconds":([0-9.e+-]+),"learn_seconds":([0-9.e+-]+).*/  \1: at the target after \2 env-steps, \3 s; wall \4 s (collecting \5 s, learning \6 s)/' \
      -e 's/^([a-z]+) .*"solved":null.*"seconds":([0-9.e+-]+),"rollout_seconds".*/  \1: the target not reached, wall \2 s/' \
      -e 's/^([a-z]+) *$/  \1: no report (the log says why)/' "$dir/train-one.txt"
  fi
  for log in "$dir"/logs/population-*.log; do
    [ -f "$log" ] || continue
    local json field
    json="$(grep -m1 '^{' "$log")"
    [ -n "$json" ] || continue
    field() { printf '%s' "$json" | grep -o "\"$1\":[0-9.]*" | cut -d: -f2; }
    printf '%s: %s of %s agents at the target, %s s (collecting %s s, learning %s s)\n' \
      "$(basename "$log" .log)" "$(field reached_target)" "$(field agents)" \
      "$(field seconds_total)" "$(field rollout_seconds)" "$(field learn_seconds)"
  done
  return "$failed"
}

if [ -n "$only" ]; then
  [ "$mode" = run ] || die "--only is for a run"
  if unknown="$(step_unknown "$only" $(step_names))"; then
    die "--only: no step ${unknown:-with an empty name} (the steps: $(step_names | paste -sd ' '))"
  fi
fi

case "$mode" in
  summary)
    [ -n "$out" ] || die "--summary needs a results directory"
    summary "$out"
    exit $? ;;
  build)
    [ -z "$out" ] || die "--build takes no results directory"
    command -v xz >/dev/null || die "--build packs with xz: install it (sudo apt-get install xz-utils)" 1
    cd "$repo" || exit 2
    cargo build --release --features cuda --bins --example cuda_launch --example host_step || exit 1
    tests="$(cargo test --release --features cuda --no-run --test integration --message-format=json \
      | grep -o '"executable":"[^"]*integration-[^"]*"' | tail -1 | cut -d'"' -f4)"
    [ -n "$tests" ] || die "cargo did not name the integration-test binary" 1
    target="${CARGO_TARGET_DIR:-$repo/target}"
    mkdir -p "$bin"
    cp "$target/release/cartfuse" "$bin/cartfuse"
    cp "$tests" "$bin/integration"
    cp "$target/release/examples/cuda_launch" "$bin/cuda_launch"
    cp "$target/release/examples/host_step" "$bin/host_step"
    strip "$bin/cartfuse" "$bin/integration" "$bin/cuda_launch" "$bin/host_step"
    built_from "$repo" "features=cuda" "CUDARC_CUDA_VERSION=${CUDARC_CUDA_VERSION:-unset}" \
      > "$bin/built-from.txt"
    # xz -9 packs the 132 MiB of binaries into 16.5 MiB, where gzip took 36 (about 90 s here).
    tar -cf - -C "$bin" cartfuse integration cuda_launch host_step built-from.txt \
      | xz -9 > "$packed.part" \
      && mv -f "$packed.part" "$packed" || die "cannot pack $packed" 1
    ls -la "$bin" "$packed"
    # A device call carries 64 MiB with the working tree (this repository: about 12 MiB).
    packed_mib=$(( $(stat -c %s "$packed") / 1048576 ))
    if [ "$packed_mib" -gt 40 ]; then
      echo "gpu-check: bin.tar.xz is $packed_mib MiB: with the repository and gpu-python's pack it may not fit a 64 MiB carry" >&2
    fi
    echo "gpu-check: carry $packed (or $bin) and scripts/ to the GPU machine, then: bash scripts/gpu-check.sh OUT_DIR"
    if [ "$compile_check" = 0 ]; then
      echo "gpu-check: the CUDA sources were not compiled (--no-compile-check)"
    elif ! bash "$repo/scripts/cuda-compile-check.sh" --which-clang >/dev/null 2>&1; then
      echo "gpu-check: no clang++: the CUDA sources were not compiled (sudo apt-get install clang-14, then bash scripts/cuda-compile-check.sh --binary $tests)"
    elif ! bash "$repo/scripts/cuda-compile-check.sh" --binary "$tests"; then
      echo "gpu-check: not every kernel's CUDA source compiles (above): NVRTC would refuse it on the GPU machine" >&2
      exit 1
    fi
    exit 0 ;;
esac

[ -n "$out" ] || die "a results directory is needed (see --help)"
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  die "$out is not empty: give a new or empty directory"
fi

# A GPU: an NVIDIA driver that lists one (CARTFUSE_GPU_CHECK_NVIDIA_SMI names another
# nvidia-smi, for the tests of this script).
gpus="$(timeout 15 "${CARTFUSE_GPU_CHECK_NVIDIA_SMI:-nvidia-smi}" --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)"
if [ -z "$gpus" ]; then
  cat >&2 <<'EOF'
gpu-check: no GPU found (nvidia-smi lists none, or there is no NVIDIA driver).
Run it where there is one: build the binaries here or anywhere with
    bash scripts/gpu-check.sh --build
carry target/gpu-check/bin.tar.xz and scripts/ to a machine with an NVIDIA GPU and its driver, and
run there
    bash scripts/gpu-check.sh OUT_DIR
EOF
  exit 3
fi
if [ ! -x "$bin/cartfuse" ] && [ -f "$packed" ]; then
  mkdir -p "$bin" && unpack_xz "$packed" "$bin" || die "cannot unpack $packed" 4
fi
for binary in cartfuse integration; do
  [ -x "$bin/$binary" ] || die "$bin/$binary is missing: build with \`bash scripts/gpu-check.sh --build\` and carry $bin" 4
done

mkdir -p "$out/logs" || exit 2
out="$(cd "$out" && pwd)"
echo "$gpus" > "$out/gpu.txt"
# The tree the binaries were built from (written by --build).
cat "$bin/built-from.txt" >> "$out/gpu.txt" 2>/dev/null \
  || echo "built-from: unknown ($bin has no built-from.txt)" >> "$out/gpu.txt"
: > "$out/steps.tsv"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/cartfuse-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
# OUT_DIR packed into --pack's file (written beside it, then moved: never half a file).
pack_results() {
  [ -n "$pack" ] || return 0
  tar -czf "$pack.part" -C "$(dirname "$out")" "$(basename "$out")" && mv -f "$pack.part" "$pack"
}
# NVRTC where cudarc looks for it (scripts/nvrtc-path.sh; what it did goes into gpu.txt).
source "$repo/scripts/nvrtc-path.sh"
nvrtc_on_path "$out/nvrtc" >> "$out/gpu.txt"
# One CUDA step first: a driver or NVRTC that cannot be loaded fails here, in seconds, with
# its error, instead of in every step.
if ! timeout --kill-after=5 30 "$bin/cartfuse" --device cuda rollout --envs 1 --steps 1 --json \
  > "$out/logs/first-cuda-step.log" 2>&1; then
  pack_results
  echo "gpu-check: CUDA does not run here (logs/first-cuda-step.log):" >&2
  tail -5 "$out/logs/first-cuda-step.log" >&2
  echo "gpu-check: NVRTC is loaded from the library path: LD_LIBRARY_PATH=<the CUDA toolkit's lib64>" >&2
  exit 3
fi
if [ -z "${VK_DRIVER_FILES:-}" ]; then
  for icd in /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json \
    /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
    if [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd"; break; fi
  done
fi
# Each step under its timeout, its output in logs/NAME.log, its status in steps.tsv (unless
# --only leaves it out). `timeout` runs programs, not functions: the step's function runs in
# a bash of its own, given the functions and the variables they read, tracing its commands
# into the log.
cd "$out" || exit 2
for entry in "${STEPS[@]}"; do
  name="${entry%%:*}" limit="${entry#*:}"
  step_chosen "$only" "$name" || continue
  limit="$(step_limit "$name" "$limit" "$budget" "$out/steps.tsv" 2>&1)" || { echo "gpu-check: $limit"; continue; }
  echo "gpu-check: $name (at most ${limit}s; its commands and output in logs/$name.log)"
  start=$SECONDS
  timeout --kill-after=5 "$limit" bash -c \
    "$(declare -f; declare -p repo bin out SLOW_TESTS); set -x; $(step_function "$name")" \
    > "$out/logs/$name.log" 2>&1
  printf '%s\t%s\t%s\n' "$name" "$?" "$((SECONDS - start))" >> "$out/steps.tsv"
  pack_results
done
summary "$out" | tee "$out/summary.txt"
status=${PIPESTATUS[0]}
pack_results
exit "$status"
