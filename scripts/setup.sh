#!/usr/bin/env bash
# Installs what cartfuse needs on a fresh Debian/Ubuntu machine, as root or as a user with
# sudo: the Vulkan loader and Mesa's lavapipe (a software Vulkan device, so the wgpu runtime
# works without a GPU), Python's venv module (for the Python package's tests), binutils' `nm`
# and xz (gpu-check.sh packs its binaries with it). Rust
# itself comes from rustup. Safe to run again.
set -euo pipefail

packages=()
if ! { ldconfig -p | grep -q libvulkan.so.1 && ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; }; then
  packages+=(mesa-vulkan-drivers libvulkan1)
fi
if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
  packages+=(python3-venv)
fi
# `nm` lets a test check that the SIMD kernels were inlined (it comes with the C toolchain).
if ! command -v nm >/dev/null; then
  packages+=(binutils)
fi
if ! command -v xz >/dev/null; then
  packages+=(xz-utils)
fi
if [ "${#packages[@]}" -eq 0 ]; then
  echo "setup: the Vulkan loader, lavapipe, python3-venv, binutils and xz are already installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root, or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${packages[@]}" >/dev/null
echo "setup: installed ${packages[*]}"
