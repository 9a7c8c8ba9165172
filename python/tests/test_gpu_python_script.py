"""``scripts/gpu-python.sh`` without a GPU: its argument errors and the no-GPU path, which
must answer within seconds (a GPU machine's minutes are counted)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu-python.sh"


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        check=False,
    )


def test_bad_arguments_are_refused_with_status_2() -> None:
    unknown = run("--bogus")
    assert unknown.returncode == 2
    assert "unknown option --bogus" in unknown.stderr
    assert run().returncode == 2  # no results directory
    assert run("a", "b").returncode == 2
    usage = run("--help")
    assert usage.returncode == 0
    assert "bash scripts/gpu-python.sh --build" in usage.stdout


def test_without_a_gpu_it_says_so_within_seconds(tmp_path: Path) -> None:
    start = time.monotonic()
    result = run(str(tmp_path / "out"), CARTFUSE_GPU_CHECK_NVIDIA_SMI="/nonexistent/nvidia-smi")
    assert result.returncode == 3, result.stderr
    assert "no GPU found" in result.stderr
    assert time.monotonic() - start < 20
    assert not (tmp_path / "out").exists()


def test_a_used_results_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("results of an earlier run\n")
    result = run(str(tmp_path))
    assert result.returncode == 2
    assert "is not empty" in result.stderr
