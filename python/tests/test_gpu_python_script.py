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
from nvidia import has_nvidia_driver

from cartfuse import compiled_devices

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


FAKE_PYTHON = """#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$CALLS"
case "$*" in *version_info*) echo False ;; esac
"""


@pytest.fixture(scope="module")
def step_command_lines(tmp_path_factory: pytest.TempPathFactory) -> list[list[str]]:
    """What the script's steps give the interpreter, run on a fake GPU with a fake
    interpreter that records its arguments and finds every module present."""
    fake = tmp_path_factory.mktemp("fake-gpu")
    smi, python = fake / "nvidia-smi", fake / "python3"
    smi.write_text("#!/bin/sh\necho 'NVIDIA Fake, 1.0, 1 MiB'\n")
    python.write_text(FAKE_PYTHON)
    for tool in (smi, python):
        tool.chmod(0o755)
    (fake / "kit" / "wheels").mkdir(parents=True)
    (fake / "kit" / "wheels" / "cartfuse-0-py3-none-any.whl").touch()
    (fake / "nvrtc").mkdir()
    (fake / "nvrtc" / "libnvrtc.so").touch()
    calls = fake / "calls.txt"
    result = run(
        str(fake / "out"),
        CARTFUSE_GPU_CHECK_NVIDIA_SMI=str(smi),
        CARTFUSE_GPU_PYTHON=str(python),
        CARTFUSE_GPU_PYTHON_DIR=str(fake / "kit"),
        CARTFUSE_NVRTC_SEARCH=str(fake / "nvrtc"),
        CALLS=str(calls),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line.split(" ") for line in calls.read_text().splitlines()]
    return [args for args in lines if args[:2] == ["-m", "pytest"] or args[0].endswith(".py")]


def step_line(lines: list[list[str]], program: str) -> list[str]:
    (line,) = [args for args in lines if program in args[:2]]
    return line


def test_the_steps_run_these_three_programs(step_command_lines: list[list[str]]) -> None:
    """A step added to the script needs its command line checked below."""
    programs = sorted(args[1] if args[0] == "-m" else args[0] for args in step_command_lines)
    assert programs == ["examples/ppo_gpu.py", "pytest", "python/bench_cuda.py"]


def in_repo(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=SCRIPT.parents[1],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_tests_step_collects_its_files(step_command_lines: list[list[str]]) -> None:
    collected = in_repo([*step_line(step_command_lines, "pytest"), "--collect-only"])
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert " tests collected" in collected.stdout


@pytest.mark.parametrize("program", ["python/bench_cuda.py", "examples/ppo_gpu.py"])
def test_a_step_s_flags_parse_and_it_stops_where_it_needs_cuda(
    step_command_lines: list[list[str]], program: str
) -> None:
    """Without a driver each stops with cartfuse's "CUDA is not available" (a flag the
    program no longer takes exits 2 with argparse's usage instead)."""
    if program.endswith("ppo_gpu.py"):
        pytest.importorskip("jax")
        pytest.importorskip("optax")
    if "cuda" not in compiled_devices():
        pytest.skip("this wheel was built without CUDA")
    if has_nvidia_driver():
        pytest.skip("this machine has NVIDIA's driver: the step would run whole")
    stopped = in_repo(step_line(step_command_lines, program))
    assert stopped.returncode == 1, stopped.stderr
    assert "CUDA is not available on this machine" in stopped.stderr
