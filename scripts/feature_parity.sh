#!/usr/bin/env bash
# Checks that scripts/test.sh's two builds give the shared dependencies the same features:
# the workspace's tests, and maturin's build of the Python extension alone (the test wheel).
# Cargo resolves features per build; where one build gives a dependency a feature the other
# does not, that dependency and everything above it (wgpu, naga, cubecl) compiles twice,
# nearly five minutes on two cores. The extension's `test-parity` feature (bindings/Cargo.toml)
# turns on the union in both; this lists what it misses.
#
#   bash scripts/feature_parity.sh
#
# Allowed to differ: the crates only the wheel has (the CUDA runtime: the tests build
# without it) and the crates whose `cuda` feature the wheel turns on.
set -euo pipefail
cd "$(dirname "$0")/.."
# The two builds' flags, as scripts/test.sh and scripts/wheel.sh --test-parity pass them.
source scripts/test-features.sh

tree() {
  cargo tree "$@" -e normal,build -f '{p} [{f}]' --prefix none | sed 's/ (\*)$//' | sort -u
}
# The tests' build has the workspace's dev-dependencies (criterion, proptest) too.
tests="$(tree --workspace "${test_features[@]}" -e dev)"
wheel="$(tree -p cartfuse-python "${wheel_features[@]}" "${wheel_test_features[@]}")"

# Crates (name and version) the tests' build compiles, with any features.
in_tests="$(awk '{print $1, $2}' <<<"$tests" | sort -u)"
missing="$(comm -23 <(echo "$wheel") <(echo "$tests") | while read -r name version rest; do
  case "$name" in
    cartfuse-env | cartfuse-fusion | cartfuse-python | cubecl) continue ;;
  esac
  if grep -qxF "$name $version" <<<"$in_tests"; then
    echo "$name $version $rest"
  fi
done)"

if [ -n "$missing" ]; then
  echo "The test wheel gives these dependencies other features than the tests' build" >&2
  echo "(add the tests' features to \`test-parity\` in bindings/Cargo.toml):" >&2
  echo "$missing" >&2
  for name in $(awk '{print $1}' <<<"$missing"); do
    grep "^$name " <<<"$tests" | sed 's/^/  tests: /' >&2
  done
  exit 1
fi
echo "feature parity: the test wheel shares the tests' build of every common dependency"
