#!/usr/bin/env bash
# Two `cartfuse` binaries trained side by side on the CPU, in turns, the order alternated
# each round: did a change make CPU training slower?
#
#   scripts/train-turns.sh BEFORE AFTER [ROUNDS] [TRAIN ARGS...]
#
# BEFORE and AFTER are two release binaries (build the older commit in a worktree and copy
# its `target/release/cartfuse` aside). Each round runs `cartfuse --device cpu train
# TRAIN ARGS --json` once with each (default: `--agents 64 --seed 1`, 3 rounds) and prints
# a tab-separated line per run (round, binary, seconds, rollout seconds, learning seconds,
# env-steps), then each round's after/before ratio and their median.
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 BEFORE AFTER [ROUNDS] [TRAIN ARGS...]" >&2
    exit 2
fi
before=$1
after=$2
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
train_args=("$@")
if [[ ${#train_args[@]} -eq 0 ]]; then
    train_args=(--agents 64 --seed 1)
fi
for bin in "$before" "$after"; do
    [[ -x $bin ]] || { echo "$bin: not an executable" >&2; exit 2; }
done
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
    echo "ROUNDS must be a positive whole number, got '$rounds'" >&2
    exit 2
fi

summary='import json, sys
d = json.load(sys.stdin)
seconds = d.get("seconds_total", d.get("seconds"))
print(seconds, d["rollout_seconds"], d["learn_seconds"], d["env_steps"], sep="\t")'

ratios=()
printf 'round\tbinary\tseconds\trollout_s\tlearn_s\tenv_steps\n'
for ((round = 1; round <= rounds; round++)); do
    if ((round % 2)); then order=(after before); else order=(before after); fi
    declare -A took=()
    for which in "${order[@]}"; do
        bin=$before
        [[ $which == after ]] && bin=$after
        line=$("$bin" --device cpu train "${train_args[@]}" --json 2>/dev/null | python3 -c "$summary")
        printf '%s\t%s\t%s\n' "$round" "$which" "$line"
        took[$which]=${line%%$'\t'*}
    done
    ratios+=("$(python3 -c "print(${took[after]} / ${took[before]})")")
done
python3 - "${ratios[@]}" <<'PY'
import statistics, sys
ratios = [float(r) for r in sys.argv[1:]]
print("after/before per round:", " ".join(f"{r:.3f}" for r in ratios))
print(f"median {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
PY
