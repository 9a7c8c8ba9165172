#!/usr/bin/env bash
# The host path beside the device-resident step and the CPU, as one table (issue 49).
set -uo pipefail

usage() {
  cat <<'EOF'
usage: bash scripts/host-path.sh [--bin CARTFUSE] [--device cuda|wgpu] [--sizes "N ..."]
                                 [--rounds R] [--out FILE]

For each batch size N, CartPole-v1 env-steps/s of
  - `cartfuse --device DEVICE bench --plan fused`: device-resident steps (the kernel's speed),
  - `cartfuse --device DEVICE rollout`: host actions in, host results out (a user's loop),
  - `cartfuse --device cpu rollout`: the same loop on this machine's CPU,
timed in turns: R rounds a size, each running the three commands once, in an order
reversed every other round. A markdown table on stdout (and in FILE with --out) gives each
command's median rate over the rounds and two ratios, each the median of the rounds' own
with the lowest and highest round: the host step's time over the device-resident step's
(what the round trip costs; issue 49's lavapipe targets are at most 2x at 1 env and 1.5x at
4,096) and the host rollout's rate over the CPU's. Steps per command: 2^22 / N, between 20
and 2,000. Each command runs under its own timeout of 90 s; a cell whose command fails in
any round reads `failed`, with its error on stderr. Each row is printed (and written to
FILE) as soon as its size is measured.

Defaults: --bin target/release/cartfuse, --device cuda, --sizes "1 4096 65536 1048576",
--rounds 3. Exit status: 0 every cell measured; 1 a cell failed; 2 bad arguments.
EOF
}

die() { echo "host-path: $1" >&2; exit 2; }

repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="$repo/target/release/cartfuse"
device=cuda
sizes="1 4096 65536 1048576"
rounds=3
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --bin|--device|--sizes|--rounds|--out)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --bin) bin="$2" ;;
        --device) device="$2" ;;
        --sizes) sizes="$2" ;;
        --rounds) rounds="$2" ;;
        --out) out="$2" ;;
      esac
      shift ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done
case "$device" in cuda|wgpu) ;; *) die "--device must be cuda or wgpu, got $device" ;; esac
[ -n "$sizes" ] || die "--sizes needs at least one batch size"
for n in $sizes; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "--sizes takes positive whole numbers, got $n"
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds takes a positive whole number, got $rounds"
[ -x "$bin" ] || die "$bin is not an executable cartfuse (build it: cargo build --release)"

# One command's env-steps/s, or `failed` (its error on stderr).
measure() {
  local json status err
  err="$(mktemp)"
  # --foreground: in the caller's process group, so that a caller's own timeout (a step of
  # gpu-check.sh) stops it too, instead of leaving it running into the next step.
  json="$(timeout --foreground --kill-after=5 90 "$bin" "$@" --json 2>"$err")"
  status=$?
  local rate
  rate="$(printf '%s' "$json" | grep -o '"env_steps_per_s":[0-9.e+-]*' | cut -d: -f2)"
  if [ "$status" != 0 ] || [ -z "$rate" ]; then
    echo "host-path: \`cartfuse $*\` failed (exit $status): $(tail -3 "$err")" >&2
    echo failed
  else
    echo "$rate"
  fi
  rm -f "$err"
}

# awk: sorts v[1..n] in place and returns its median.
AWK_MEDIAN='function median(v, n,   i, j, t) {
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}'

# The median of the space-separated rates in $1 to three digits, `failed` if a round failed.
median() {
  awk -v list="$1" "$AWK_MEDIAN"'
  BEGIN {
    n = split(list, v, " ")
    for (i = 1; i <= n; i++) { if (v[i] == "failed") { print "failed"; exit } v[i] += 0 }
    printf "%.3g\n", median(v, n)
  }'
}

# The median of the rounds' ratios $1[i] / $2[i] (space-separated lists, one entry a
# round), with the lowest and highest when there are several rounds; `n/a` if one failed.
ratio() {
  awk -v a="$1" -v b="$2" "$AWK_MEDIAN"'
  BEGIN {
    n = split(a, x, " "); split(b, y, " ")
    for (i = 1; i <= n; i++) {
      if (x[i] == "failed" || y[i] == "failed") { print "n/a"; exit }
      r[i] = x[i] / y[i]
    }
    m = median(r, n)
    if (n > 1) printf "%.3gx (%.3g-%.3g)\n", m, r[1], r[n]; else printf "%.3gx\n", m
  }'
}

failed=0
header="| n | $device fused, device-resident | $device rollout (host) | cpu rollout (host) | host / device-resident step | host $device / cpu |
|---:|---:|---:|---:|---:|---:|"
# Each row printed (and written) as its size finishes, so a run cut short keeps its rows.
echo "$header"
if [ -n "$out" ]; then
  echo "$header" > "$out" || die "cannot write $out"
fi
for n in $sizes; do
  steps=$(( (1 << 22) / n ))
  [ "$steps" -lt 20 ] && steps=20
  [ "$steps" -gt 2000 ] && steps=2000
  residents="" hosts="" cpus=""
  for round in $(seq 1 "$rounds"); do
    order="resident host cpu"
    [ $((round % 2)) = 0 ] && order="cpu host resident"
    for command in $order; do
      case "$command" in
        resident) residents+=" $(measure --device "$device" bench --plan fused --envs "$n" --steps "$steps" --repeats 3)" ;;
        host) hosts+=" $(measure --device "$device" rollout --envs "$n" --steps "$steps")" ;;
        cpu) cpus+=" $(measure --device cpu rollout --envs "$n" --steps "$steps")" ;;
      esac
    done
  done
  cells=()
  for rates in "$residents" "$hosts" "$cpus"; do
    cell="$(median "$rates")"
    [ "$cell" = failed ] && failed=1
    cells+=("$cell")
  done
  # The host step's time over the resident step's is the resident rate over the host's.
  row="| $n | ${cells[0]} | ${cells[1]} | ${cells[2]} | $(ratio "$residents" "$hosts") | $(ratio "$hosts" "$cpus") |"
  echo "$row"
  if [ -n "$out" ]; then
    echo "$row" >> "$out" || die "cannot write $out"
  fi
done
exit "$failed"
