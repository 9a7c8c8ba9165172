"""``scripts/gpu-python.sh`` without a GPU: its argument errors and the no-GPU path, which
must answer within seconds (a GPU machine's minutes are counted)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


def test_only_and_budget_are_checked_before_anything_runs() -> None:
    unknown = run("--only", "tests,lint", "out")
    assert unknown.returncode == 2
    assert "--only: no step lint (the steps: tests bench ppo)" in unknown.stderr
    assert run("--only", "", "out").returncode == 2
    built = run("--build", "--only", "tests")
    assert built.returncode == 2
    assert "--only is for a run" in built.stderr
    for budget in ("0", "ten", "-5"):
        refused = run("--budget", budget, "out")
        assert refused.returncode == 2
        assert "--budget needs a whole number of seconds" in refused.stderr
    built = run("--build", "--budget", "60")
    assert built.returncode == 2
    assert "--budget is for a run" in built.stderr


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


@pytest.mark.parametrize("bench", ["bench_cuda.py", "bench.py"])
def test_the_benches_import_the_installed_package_not_the_folder_beside_them(
    tmp_path: Path, bench: str
) -> None:
    """The script runs `python python/bench_cuda.py`, and users `python python/bench.py`
    (no `-P`, which Python 3.10 lacks), where `python/cartfuse` beside them has no native
    module (the wheel was built on another machine): a bench must import the installed
    package. Here the folder's `cartfuse` is one that refuses to be imported."""
    folder = tmp_path / "python"
    (folder / "cartfuse").mkdir(parents=True)
    (folder / "cartfuse" / "__init__.py").write_text(
        'raise ImportError("the source tree beside the bench was imported")\n'
    )
    for name in ("bench_cuda.py", "bench.py", "bench_peers.py"):
        shutil.copy(SCRIPT.parents[1] / "python" / name, folder / name)
    shown = subprocess.run(
        [sys.executable, str(folder / bench), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "--sizes" in shown.stdout


def nvrtc_on_path(search: list[Path], link: Path) -> subprocess.CompletedProcess[str]:
    """``scripts/nvrtc-path.sh``'s ``nvrtc_on_path link`` looking in ``search`` only, then
    the LD_LIBRARY_PATH it left."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["CARTFUSE_NVRTC_SEARCH"] = ":".join(map(str, search))
    helper = SCRIPT.with_name("nvrtc-path.sh")
    return subprocess.run(
        ["bash", "-c", f'source "{helper}"; nvrtc_on_path "{link}"; echo "path=$LD_LIBRARY_PATH"'],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        check=False,
    )


def test_nvrtc_of_another_cuda_version_is_linked_where_cudarc_looks(tmp_path: Path) -> None:
    empty, versioned, plain = tmp_path / "empty", tmp_path / "pip", tmp_path / "toolkit"
    for folder in (empty, versioned, plain):
        folder.mkdir()
    for name in ("libnvrtc.so.12", "libnvrtc.so.13", "libnvrtc-builtins.so.13.0"):
        (versioned / name).touch()
    link = tmp_path / "link"
    # Only versioned names (pip's CUDA 13 package): the newest is linked as libnvrtc.so.
    done = nvrtc_on_path([empty, versioned], link)
    assert (link / "libnvrtc.so").resolve() == versioned / "libnvrtc.so.13", done.stdout
    assert f"path={link}:{versioned}\n" in done.stdout
    # A folder with the plain name goes first on the path, nothing linked.
    (plain / "libnvrtc.so").touch()
    done = nvrtc_on_path([plain, versioned], tmp_path / "unused")
    assert f"path={plain}\n" in done.stdout, done.stdout
    assert not (tmp_path / "unused").exists()
    # None: it says where it looked and fails.
    done = nvrtc_on_path([empty], tmp_path / "unused")
    assert done.stdout.startswith("nvrtc: no libnvrtc.so found"), done.stdout
    assert str(empty) in done.stdout
