//! `scripts/gpu-check.sh` without a GPU: its argument errors, the no-GPU path, the missing
//! binaries, a run of fake binaries on a fake GPU, every command line its steps give the CLI
//! parsed by the real one, the binaries unpacked from their pack, `built-from.sh`, and the
//! summary of a recorded results directory (`tests/fixtures/gpu-check`, hand-written in the
//! layout the script writes). `scripts/host-path.sh`, which it runs, is `host_path.rs`'s.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::cli::{run_script, stderr, stdout};

/// `scripts/gpu-check.sh ARGS` with `nvidia_smi` as its nvidia-smi.
pub(crate) fn gpu_check(args: &[&str], nvidia_smi: &str) -> Output {
    run_script(
        "gpu-check.sh",
        args,
        &[("CARTFUSE_GPU_CHECK_NVIDIA_SMI", OsStr::new(nvidia_smi))],
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("cartfuse-gpu-check-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    dir
}

#[test]
fn bad_arguments_are_refused_with_status_2() {
    let none = "/nonexistent/nvidia-smi";
    for args in [
        &[][..],
        &["--bogus"],
        &["a", "b"],
        &["--summary"],
        &["--bin"],
        &["--no-compile-check", "out"],
        &["--budget", "0", "out"],
        &["--budget", "ten", "out"],
        &["--budget"],
        &["--build", "--budget", "60"],
    ] {
        let run = gpu_check(args, none);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", stderr(&run));
        assert!(stderr(&run).starts_with("gpu-check: "), "{}", stderr(&run));
    }
    // --only names steps the script has.
    for only in ["bogus", "host-path,bogus", ""] {
        let run = gpu_check(&["--only", only, "out"], none);
        assert_eq!(
            run.status.code(),
            Some(2),
            "--only {only:?}: {}",
            stderr(&run)
        );
        assert!(stderr(&run).contains("--only"), "{}", stderr(&run));
    }
    let help = gpu_check(&["--help"], none);
    assert!(help.status.success());
    assert!(stdout(&help).contains("bash scripts/gpu-check.sh --build"));
    assert!(stdout(&help).contains("--features cuda"));
    // A results directory that is not empty is refused before anything runs.
    let full = scratch("full");
    std::fs::create_dir_all(&full).unwrap();
    std::fs::write(full.join("old"), "x").unwrap();
    let run = gpu_check(&[full.to_str().unwrap()], none);
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr(&run).contains("is not empty"));
    std::fs::remove_dir_all(full).ok();
}

#[test]
fn without_a_gpu_it_says_so_and_how_to_run_it_within_seconds() {
    let out = scratch("none");
    let start = Instant::now();
    let run = gpu_check(&[out.to_str().unwrap()], "/nonexistent/nvidia-smi");
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(run.status.code(), Some(3), "{}", stderr(&run));
    let message = stderr(&run);
    assert!(message.contains("no GPU found"), "{message}");
    assert!(
        message.contains("bash scripts/gpu-check.sh --build"),
        "{message}"
    );
    assert!(!out.exists(), "nothing is written without a GPU");
    // With a GPU but no binaries it names what to build.
    let fake = scratch("fake-smi");
    std::fs::create_dir_all(&fake).unwrap();
    let smi = fake.join("nvidia-smi");
    script(&smi, "echo 'Fake GPU, 1.0, 1 MiB'");
    let run = gpu_check(
        &[
            "--bin",
            fake.join("bin").to_str().unwrap(),
            out.to_str().unwrap(),
        ],
        smi.to_str().unwrap(),
    );
    assert_eq!(run.status.code(), Some(4), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("cartfuse is missing"),
        "{}",
        stderr(&run)
    );
    std::fs::remove_dir_all(fake).ok();
}

/// An executable shell script at `path`.
pub(crate) fn script(path: &std::path::Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    Command::new("chmod").arg("+x").arg(path).status().unwrap();
}

/// A scratch folder `name` with a fake nvidia-smi that lists one GPU and an empty folder
/// for binaries: (folder, binaries, nvidia-smi).
pub(crate) fn fake_gpu(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let fake = scratch(name);
    let bin = fake.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let smi = fake.join("nvidia-smi");
    script(&smi, "echo 'Fake GPU, 1.0, 1 MiB'");
    (fake, bin, smi)
}

#[test]
fn a_run_calls_each_chosen_step_in_order_under_its_budget_and_records_its_status() {
    // A fake GPU and binaries that print their arguments: `integration` fails on wgpu.
    let (fake, bin, smi) = fake_gpu("run");
    // `reproduce` leaves a partial report, as one cut by its timeout does.
    script(
        &bin.join("cartfuse"),
        "echo \"cartfuse $*\"; [ \"$3\" = reproduce ] || exit 0; mkdir -p \"$7\"; \
         echo '**This report is partial**: it was written 9 s into the run, as the measurement \
         of the CPU side began. A run' > \"$7/report.md\"",
    );
    script(
        &bin.join("integration"),
        "echo \"integration $*\"; case \"$1\" in wgpu*) exit 101;; esac",
    );
    script(
        &bin.join("host_step"),
        "echo \"host_step $* on $CARTFUSE_DEVICE_THREAD\"",
    );
    let out = fake.join("out");
    let packed = fake.join("results.tgz");
    let run = gpu_check(
        &[
            "--bin",
            bin.to_str().unwrap(),
            "--only",
            "slow-wgpu,population-2048,tests-cuda,reproduce,host-step",
            "--pack",
            packed.to_str().unwrap(),
            out.to_str().unwrap(),
        ],
        smi.to_str().unwrap(),
    );
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let gpu = std::fs::read_to_string(out.join("gpu.txt")).unwrap();
    assert!(
        gpu.contains(&format!(
            "built-from: unknown ({} has no built-from.txt)",
            bin.display()
        )),
        "{gpu}"
    );
    let steps = std::fs::read_to_string(out.join("steps.tsv")).unwrap();
    let recorded: Vec<(&str, &str)> = steps
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (fields[0], fields[1])
        })
        .collect();
    // The script's order, not the order asked.
    assert_eq!(
        recorded,
        [
            ("host-step", "0"),
            ("reproduce", "0"),
            ("population-2048", "0"),
            ("tests-cuda", "0"),
            ("slow-wgpu", "101")
        ]
    );
    let log = |step: &str| std::fs::read_to_string(out.join(format!("logs/{step}.log"))).unwrap();
    assert!(
        log("population-2048").contains(
            "cartfuse --device cuda train --learner device --agents 2048 --seed 1 --json"
        ),
        "{}",
        log("population-2048")
    );
    // The host step's blocks on CUDA, on cubecl's device thread and on the calling thread.
    let host_step = std::fs::read_to_string(out.join("host-step.md")).unwrap();
    assert!(
        host_step.contains("host_step --device cuda --sizes 1,4096,1048576 7 100 on server\n")
            && host_step
                .contains("host_step --device cuda --sizes 1,4096,1048576 7 100 on caller\n"),
        "{host_step}"
    );
    let suite = log("tests-cuda");
    assert!(
        suite.contains("integration cuda:: --skip math:: --skip gymnasium::acrobot --skip gymnasium::mountain_car_continuous --test-threads"),
        "{suite}"
    );
    assert!(
        log("slow-wgpu").contains(
            "integration wgpu::gymnasium::acrobot wgpu::gymnasium::mountain_car_continuous"
        ),
        "{}",
        log("slow-wgpu")
    );
    let summary = stdout(&run);
    assert!(
        summary.contains("slow-wgpu    FAILED (exit 101)"),
        "{summary}"
    );
    assert!(summary.contains("tests-cuda   passed"), "{summary}");
    assert!(
        summary.contains("a host step through cubecl, block by block, us per call:\n## CARTFUSE_DEVICE_THREAD=server"),
        "{summary}"
    );
    assert!(
        summary.contains("reproduce: partial report, written 9 s into the run, as the measurement of the CPU side began"),
        "{summary}"
    );
    // One CUDA step came first, and the results are packed with the summary in them.
    assert!(
        std::fs::read_to_string(out.join("logs/first-cuda-step.log"))
            .unwrap()
            .contains("cartfuse --device cuda rollout --envs 1 --steps 1 --json"),
    );
    let listed = Command::new("tar")
        .arg("-tzf")
        .arg(&packed)
        .output()
        .unwrap();
    let listed = stdout(&listed);
    for file in [
        "out/steps.tsv",
        "out/summary.txt",
        "out/logs/slow-wgpu.log",
        "out/reproduce/report.md",
    ] {
        assert!(
            listed.lines().any(|l| l == file),
            "{file} not in:\n{listed}"
        );
    }
    std::fs::remove_dir_all(fake).ok();
}

#[test]
fn a_budget_skips_the_steps_it_leaves_no_time_for() {
    let (fake, bin, smi) = fake_gpu("budget");
    script(&bin.join("cartfuse"), "echo \"cartfuse $*\"");
    script(&bin.join("integration"), "echo \"integration $*\"");
    let out = fake.join("out");
    // Under 5 s of a 4 s budget are left once the first CUDA step is done: nothing starts.
    let run = gpu_check(
        &[
            "--bin",
            bin.to_str().unwrap(),
            "--only",
            "numerics,train",
            "--budget",
            "4",
            out.to_str().unwrap(),
        ],
        smi.to_str().unwrap(),
    );
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let steps = std::fs::read_to_string(out.join("steps.tsv")).unwrap();
    assert_eq!(steps, "numerics\tskipped\t0\ntrain\tskipped\t0\n");
    assert!(!out.join("logs/train.log").exists());
    let summary = stdout(&run);
    assert!(
        summary.contains("numerics     SKIPPED (no time left)"),
        "{summary}"
    );
    std::fs::remove_dir_all(fake).ok();
}

#[test]
fn the_binaries_are_unpacked_from_their_xz_pack_with_xz_or_else_python() {
    // The default xz, then one that is not there (python3's tarfile unpacks instead).
    for (case, xz) in [("xz", "xz"), ("python", "/nonexistent/xz")] {
        let (fake, bin, smi) = fake_gpu(&format!("unpack-{case}"));
        let staged = fake.join("staged");
        std::fs::create_dir_all(&staged).unwrap();
        script(&staged.join("cartfuse"), "echo \"cartfuse $*\"");
        script(&staged.join("integration"), "echo \"integration $*\"");
        std::fs::write(staged.join("built-from.txt"), "built-from: 0123abcd\n").unwrap();
        let packed = Command::new("sh")
            .arg("-c")
            .arg("tar -cf - -C \"$1\" cartfuse integration built-from.txt | xz -1 > \"$2\"")
            .args(["sh", staged.to_str().unwrap()])
            .arg(fake.join("bin.tar.xz"))
            .status()
            .unwrap();
        assert!(packed.success());
        let out = fake.join("out");
        let args = [
            "--bin",
            bin.to_str().unwrap(),
            "--only",
            "numerics",
            out.to_str().unwrap(),
        ];
        let vars = [
            ("CARTFUSE_GPU_CHECK_NVIDIA_SMI", smi.as_os_str()),
            ("CARTFUSE_GPU_CHECK_XZ", OsStr::new(xz)),
        ];
        let run = run_script("gpu-check.sh", args, &vars);
        assert_eq!(run.status.code(), Some(0), "{case}: {}", stderr(&run));
        let unpacked = std::fs::read_to_string(bin.join("integration")).unwrap();
        assert!(unpacked.contains("echo \"integration $*\""), "{unpacked}");
        let steps = std::fs::read_to_string(out.join("steps.tsv")).unwrap();
        assert!(steps.starts_with("numerics\t0\t"), "{case}: {steps}");
        // The tree the binaries came from is named with the GPU.
        assert!(
            stdout(&run).contains("gpu: Fake GPU, 1.0, 1 MiB\ngpu: built-from: 0123abcd\n"),
            "{}",
            stdout(&run)
        );
        std::fs::remove_dir_all(fake).ok();
    }
}

#[test]
fn every_command_line_a_step_gives_the_cli_is_one_it_accepts() {
    // Every step on a fake GPU, with a fake CLI that records its arguments.
    let (fake, bin, smi) = fake_gpu("command-lines");
    let calls = fake.join("calls.txt");
    let record = format!("printf '%s\\n' \"$*\" >> '{}'", calls.display());
    script(&bin.join("cartfuse"), &record);
    script(&bin.join("integration"), "true");
    let out = fake.join("out");
    let run = gpu_check(
        &["--bin", bin.to_str().unwrap(), out.to_str().unwrap()],
        smi.to_str().unwrap(),
    );
    assert!(matches!(run.status.code(), Some(0 | 1)), "{}", stderr(&run));
    let recorded = std::fs::read_to_string(&calls).unwrap();
    let mut lines: Vec<&str> = recorded.lines().collect();
    lines.sort_unstable();
    lines.dedup();
    assert!(lines.len() >= 15, "{recorded}");
    // The real CLI parses each (a usage error exits 2): a CUDA one stops where it needs
    // CUDA (this build has none, or this machine no driver), a CPU one runs.
    let scratch_out = fake.join("cli-out");
    for line in lines {
        let args: Vec<String> = line
            .split(' ')
            .map(|arg| match arg.starts_with(out.to_str().unwrap()) {
                true => scratch_out.to_str().unwrap().to_string(),
                false => arg.to_string(),
            })
            .collect();
        let cli = Command::new(env!("CARGO_BIN_EXE_cartfuse"))
            .args(&args)
            .output()
            .unwrap();
        let message = stderr(&cli);
        match args[..2] == ["--device", "cuda"] {
            true => assert!(
                cli.status.code() == Some(1)
                    && (message.contains("without the `cuda` feature")
                        || message.contains("in a CUDA build")
                        || message.contains("CUDA is not available")),
                "`cartfuse {line}`: {message}"
            ),
            false => assert!(cli.status.success(), "`cartfuse {line}`: {message}"),
        }
    }
    std::fs::remove_dir_all(fake).ok();
}

#[test]
fn built_from_names_the_commit_and_whether_the_build_inputs_changed_since() {
    let repo = scratch("built-from");
    let git = |args: &[&str]| {
        let run = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .unwrap();
        assert!(run.status.success(), "git {args:?}: {}", stderr(&run));
        stdout(&run).trim().to_string()
    };
    let built_from = |settings: &[&str]| {
        let run = Command::new("bash")
            .arg("-c")
            .arg(concat!(
                "source ",
                env!("CARGO_MANIFEST_DIR"),
                "/scripts/built-from.sh; built_from \"$@\""
            ))
            .arg("bash")
            .arg(&repo)
            .args(settings)
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", stderr(&run));
        stdout(&run)
    };
    for dir in ["src", "docs", "scripts"] {
        std::fs::create_dir_all(repo.join(dir)).unwrap();
    }
    std::fs::write(repo.join("src/lib.rs"), "fn a() {}\n").unwrap();
    std::fs::write(repo.join("docs/notes.md"), "one\n").unwrap();
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "first"]);
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    let clean = built_from(&["features=cuda"]);
    assert!(
        clean.starts_with(&format!("built-from: {commit}\nbuilt-with: rustc ")),
        "{clean}"
    );
    assert!(clean.contains(", features=cuda\nbuilt-at: 20"), "{clean}");
    // Docs, scripts and READMEs are not built into the binaries.
    std::fs::write(repo.join("docs/notes.md"), "two\n").unwrap();
    std::fs::write(repo.join("scripts/run.sh"), "echo\n").unwrap();
    std::fs::write(repo.join("README.md"), "new\n").unwrap();
    assert!(built_from(&[]).starts_with(&format!("built-from: {commit}\n")));
    // A source changed, or a new one, is.
    std::fs::write(repo.join("src/lib.rs"), "fn b() {}\n").unwrap();
    let changed = built_from(&[]);
    assert!(
        changed.starts_with(&format!("built-from: {commit} + uncommitted changes\n")),
        "{changed}"
    );
    git(&["checkout", "-q", "src/lib.rs"]);
    std::fs::write(repo.join("src/new.rs"), "\n").unwrap();
    assert!(built_from(&[]).contains("+ uncommitted changes"));
    std::fs::remove_dir_all(&repo).ok();
    assert!(built_from(&[]).starts_with("built-from: not a git checkout\n"));
}

#[test]
fn the_summary_reads_a_recorded_results_directory() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/gpu-check");
    let run = gpu_check(&["--summary", fixture], "/nonexistent/nvidia-smi");
    // The fixture's train step timed out: the summary says so and fails.
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let summary = stdout(&run);
    for line in [
        "gpu: Example GPU 80GB, 999.99.01, 81559 MiB",
        "tests-cuda   passed",
        "ok. 3 passed; 0 failed",
        "train        TIMED OUT",
        "reproduce: Device: **Example GPU 80GB (DiscreteGpu, CUDA driver API 99.9",
        "burn cuda fusion: n = 1, 0.0001 s per step",
        "crossover: fused: device-resident, the device wins from n = 4096 on",
        "population-64: 63 of 64 agents at the target, 9.5 s (collecting 2.25 s, learning 7.0 s)",
        "host-path    passed",
        "host path, CartPole-v1 env-steps/s:",
        "| 4096 | 5e+08 | 1e+08 | 1e+08 | 1x |",
    ] {
        assert!(summary.contains(line), "missing `{line}` in:\n{summary}");
    }
    let empty = scratch("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let run = gpu_check(
        &["--summary", empty.to_str().unwrap()],
        "/nonexistent/nvidia-smi",
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr(&run).contains("not a gpu-check results directory"));
    std::fs::remove_dir_all(empty).ok();
}

#[test]
fn where_cuda_does_not_run_it_stops_after_one_step_with_the_error() {
    let (fake, bin, smi) = fake_gpu("no-nvrtc");
    script(
        &bin.join("cartfuse"),
        "echo 'error: CUDA: libnvrtc.so could not be loaded' >&2; exit 1",
    );
    script(&bin.join("integration"), "exit 0");
    let out = fake.join("out");
    let start = Instant::now();
    let run = gpu_check(
        &["--bin", bin.to_str().unwrap(), out.to_str().unwrap()],
        smi.to_str().unwrap(),
    );
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(run.status.code(), Some(3), "{}", stderr(&run));
    let message = stderr(&run);
    assert!(message.contains("CUDA does not run here"), "{message}");
    assert!(
        message.contains("libnvrtc.so could not be loaded"),
        "{message}"
    );
    let steps = std::fs::read_to_string(out.join("steps.tsv")).unwrap();
    assert!(steps.is_empty(), "no step ran: {steps}");
    std::fs::remove_dir_all(fake).ok();
}
