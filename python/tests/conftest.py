"""Shared fixtures: the Vulkan loader wants a runtime dir (lavapipe needs nothing else);
pygame (``render_mode="human"``, gymnasium's checker) draws into a dummy display."""

from __future__ import annotations

import os
import tempfile

if "XDG_RUNTIME_DIR" not in os.environ:
    runtime_dir = os.path.join(tempfile.gettempdir(), f"cartfuse-xdg-{os.getuid()}")
    os.makedirs(runtime_dir, mode=0o700, exist_ok=True)
    os.environ["XDG_RUNTIME_DIR"] = runtime_dir

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
