#!/usr/bin/env bash
# Installs what cartfuse needs on a fresh Debian/Ubuntu machine, as root or as a user with
# sudo: the Vulkan loader and Mesa's lavapipe (a software Vulkan device, so the wgpu runtime
# works without a GPU). Rust itself comes from rustup. Safe to run again.
set -euo pipefail

if ldconfig -p | grep -q libvulkan.so.1 && ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
  echo "setup: the Vulkan loader and lavapipe are already installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root, or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
echo "setup: installed mesa-vulkan-drivers and libvulkan1"
