# Sourced by scripts/gpu-check.sh and scripts/gpu-python.sh: what a step's exit status says,
# for their summaries, which steps an --only chooses, and how long a step may run under a
# --budget.
#
#   step_verdict STATUS
#
# Prints `passed`, `TIMED OUT`, `SKIPPED (no time left)` or `FAILED (exit STATUS)`; returns 1
# unless the step passed.
# 124 is `timeout`'s own status for a step it stopped; 137 is a step killed (by `timeout
# -k` when it did not stop, or by the kernel's out-of-memory killer), counted as a timeout;
# `skipped` a step a --budget left no time for.

step_verdict() {
  case "$1" in
    0) echo passed ;;
    124 | 137) echo "TIMED OUT"; return 1 ;;
    skipped) echo "SKIPPED (no time left)"; return 1 ;;
    *) echo "FAILED (exit $1)"; return 1 ;;
  esac
}

# step_limit NAME LIMIT BUDGET STEPS_TSV: prints the seconds step NAME may run, its LIMIT or
# what is left of BUDGET (empty: none) by bash's SECONDS since the script began, whichever is
# less. With under 5 s left it prints nothing, records NAME as `skipped` in STEPS_TSV, says
# so on stderr and returns 1.
step_limit() {
  local name="$1" limit="$2" budget="$3" steps="$4"
  if [ -n "$budget" ]; then
    local left=$((budget - SECONDS))
    if [ "$left" -lt 5 ]; then
      echo "$name skipped: ${left}s of the ${budget}s budget left" >&2
      printf '%s\tskipped\t0\n' "$name" >> "$steps"
      return 1
    fi
    [ "$left" -ge "$limit" ] || limit="$left"
  fi
  echo "$limit"
}

# step_unknown ONLY NAME...: prints the first of ONLY's comma-separated steps that is not one
# of the NAMEs (an empty one included); returns 1 when every step is known.
step_unknown() {
  local only="$1" step wanted=()
  shift
  IFS=, read -r -a wanted <<<"$only"
  [ ${#wanted[@]} -gt 0 ] || { echo; return 0; }
  for step in "${wanted[@]}"; do
    [ -n "$step" ] && [[ " $* " == *" $step "* ]] || { echo "$step"; return 0; }
  done
  return 1
}

# step_chosen ONLY NAME: whether step NAME runs under --only ONLY (empty: every step runs).
step_chosen() { [ -z "$1" ] || [[ ",$1," == *",$2,"* ]]; }
