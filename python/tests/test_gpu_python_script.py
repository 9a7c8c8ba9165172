"""``scripts/gpu-python.sh`` without a GPU: its argument errors and the no-GPU path, which
must answer within seconds (a GPU machine's minutes are counted)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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


def test_the_cuda_bench_imports_the_installed_package_not_the_folder_beside_it(
    tmp_path: Path,
) -> None:
    """The script runs `python python/bench_cuda.py` (no `-P`, which Python 3.10 lacks),
    where `python/cartfuse` beside it has no native module (the wheel was built on another
    machine): the bench must import the installed package. Here the folder's `cartfuse` is
    one that refuses to be imported."""
    folder = tmp_path / "python"
    (folder / "cartfuse").mkdir(parents=True)
    (folder / "cartfuse" / "__init__.py").write_text(
        'raise ImportError("the source tree beside the bench was imported")\n'
    )
    for name in ("bench_cuda.py", "bench.py", "bench_peers.py"):
        shutil.copy(SCRIPT.parents[1] / "python" / name, folder / name)
    shown = subprocess.run(
        [sys.executable, str(folder / "bench_cuda.py"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "--sizes" in shown.stdout
