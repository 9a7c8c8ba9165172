# The builds of the tests, defined once: sourced by scripts/test.sh (which builds them),
# scripts/wheel.sh (the test wheel), scripts/feature_parity.sh (which checks that the two
# builds give the shared dependencies the same features) and .ci/run (clippy, in the tests'
# profile with their features, so that the tests' build reuses what it checked).
#
#   source scripts/test-features.sh
# shellcheck shell=bash disable=SC2034

# The `release-tests` profile (Cargo.toml): the release profile with the crates that
# instantiate burn and cubecl for every runtime at opt-level 1. The same code and the same
# numerics as `--release`, built in about two thirds of the time on two cores.
test_profile=release-tests

# The workspace's test build: the Python extension's `test-parity` feature turns on the
# union of the shared dependencies' features in both builds (bindings/Cargo.toml).
test_features=(--features cartfuse-python/test-parity)

# maturin's build of the Python extension alone (scripts/wheel.sh, run in python/): every
# wheel has the CUDA runtime; the test wheel adds `test-parity`, so that it reuses the
# workspace's test build instead of compiling the GPU stack again.
wheel_features=(--features cuda)
wheel_test_features=(--features test-parity)
