# Sourced by scripts/gpu-check.sh and scripts/gpu-python.sh: what a kit's binaries were
# built from, written beside them by --build and packed with them, so that every GPU run's
# gpu.txt names the tree its numbers came from (the GPU machine has the repository's files
# but no git).
#
#   built_from REPO [SETTING...]
#
# Prints `built-from: COMMIT`, with `+ uncommitted changes` when the build inputs differ
# from it (any file git tracks or would track outside docs/, scripts/, .ci/ and *.md: the
# scripts travel with the repository, not in the binaries), the Rust compiler, each
# SETTING (NAME=VALUE) and the time. Outside a git checkout it says so instead.

built_from() {
  local repo="$1"
  shift
  local commit changed
  if commit="$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null)"; then
    changed="$(git -C "$repo" status --porcelain -- . ':!docs' ':!scripts' ':!.ci' ':!*.md')"
    [ -z "$changed" ] || commit="$commit + uncommitted changes"
  else
    commit="not a git checkout"
  fi
  echo "built-from: $commit"
  echo "built-with: $(rustc -V 2>/dev/null || echo 'no rustc on PATH')${*:+, $*}"
  echo "built-at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
