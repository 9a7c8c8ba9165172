# Sourced by scripts/gpu-check.sh and scripts/gpu-python.sh: what a step's exit status says,
# for their summaries.
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
