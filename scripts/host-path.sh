#!/usr/bin/env bash
# The host path beside the device-resident step and the CPU, as one table (issue 49).
set -uo pipefail

usage() {
  cat <<'EOF'
usage: bash scripts/host-path.sh [--bin CARTFUSE] [--device cuda|wgpu] [--sizes "N ..."] [--out FILE]

For each batch size N, CartPole-v1 env-steps/s of
  - `cartfuse --device DEVICE bench --plan fused`: device-resident steps (the kernel's speed),
  - `cartfuse --device DEVICE rollout`: host actions in, host results out (a user's loop),
  - `cartfuse --device cpu rollout`: the same loop on this machine's CPU,
and the host rollout over the CPU's, as a markdown table on stdout (and in FILE with --out).
Steps per command: 2^22 / N, between 20 and 2,000. Each command runs under its own
timeout of 90 s; a cell whose command fails reads `failed`, with its error on stderr.

Defaults: --bin target/release/cartfuse, --device cuda, --sizes "1 4096 65536 1048576".
Exit status: 0 every cell measured; 1 a cell failed; 2 bad arguments.
EOF
}

die() { echo "host-path: $1" >&2; exit 2; }

repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="$repo/target/release/cartfuse"
device=cuda
sizes="1 4096 65536 1048576"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --bin|--device|--sizes|--out)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --bin) bin="$2" ;;
        --device) device="$2" ;;
        --sizes) sizes="$2" ;;
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
[ -x "$bin" ] || die "$bin is not an executable cartfuse (build it: cargo build --release)"

failed=0
# env-steps/s of one cartfuse command (its --json report), or `failed` (run in a subshell).
measure() {
  local json status err
  err="$(mktemp)"
  json="$(timeout --kill-after=5 90 "$bin" "$@" --json 2>"$err")"
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

table="| n | $device fused, device-resident | $device rollout (host) | cpu rollout (host) | host $device / cpu |
|---:|---:|---:|---:|---:|"
for n in $sizes; do
  steps=$(( (1 << 22) / n ))
  [ "$steps" -lt 20 ] && steps=20
  [ "$steps" -gt 2000 ] && steps=2000
  resident="$(measure --device "$device" bench --plan fused --envs "$n" --steps "$steps" --repeats 3)"
  host="$(measure --device "$device" rollout --envs "$n" --steps "$steps")"
  cpu="$(measure --device cpu rollout --envs "$n" --steps "$steps")"
  ratio="n/a"
  if [ "$host" != failed ] && [ "$cpu" != failed ]; then
    ratio="$(awk -v h="$host" -v c="$cpu" 'BEGIN { printf "%.3gx", h / c }')"
  fi
  cells=()
  for rate in "$resident" "$host" "$cpu"; do
    if [ "$rate" = failed ]; then failed=1; cells+=(failed); else cells+=("$(awk -v r="$rate" 'BEGIN { printf "%.3g", r }')"); fi
  done
  table+=$'\n'"| $n | ${cells[0]} | ${cells[1]} | ${cells[2]} | $ratio |"
done
echo "$table"
if [ -n "$out" ]; then
  echo "$table" > "$out" || die "cannot write $out"
fi
exit "$failed"
