//! `scripts/gpu-session.sh` without a GPU: its argument errors, and its parts run in order
//! on a fake GPU with fake binaries (`gpu_check`'s), the kits' packs and the commands that
//! run again what did not pass; a budget too small for any part starts none.

use std::path::Path;
use std::process::Output;

use crate::cli::{run_script, stderr, stdout};
use crate::gpu_check::{fake_gpu, script};

/// `scripts/gpu-session.sh ARGS` with `nvidia_smi` as its nvidia-smi and `wheels` as
/// gpu-python's folder of wheels.
fn gpu_session(args: &[&str], nvidia_smi: &Path, wheels: &Path) -> Output {
    run_script(
        "gpu-session.sh",
        args,
        &[
            ("CARTFUSE_GPU_CHECK_NVIDIA_SMI", nvidia_smi.as_os_str()),
            ("CARTFUSE_GPU_PYTHON_DIR", wheels.as_os_str()),
        ],
    )
}

#[test]
fn bad_arguments_are_refused_with_status_2() {
    let none = Path::new("/nonexistent");
    for args in [
        &[][..],
        &["--bogus"],
        &["a", "b"],
        &["--budget", "0", "out"],
        &["--budget", "-5", "out"],
        &["--bin"],
        &["--build", "out"],
    ] {
        let run = gpu_session(args, none, none);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", stderr(&run));
        assert!(
            stderr(&run).starts_with("gpu-session: "),
            "{}",
            stderr(&run)
        );
    }
    let help = gpu_session(&["--help"], none, none);
    assert!(help.status.success());
    assert!(stdout(&help).contains("bash scripts/gpu-session.sh \"$OUT\""));
}

#[test]
fn the_parts_run_in_order_each_packed_and_what_failed_is_listed_to_run_again() {
    let (fake, bin, smi) = fake_gpu("session");
    // `train --json` answers with a single run's report; everything else prints its args.
    script(
        &bin.join("cartfuse"),
        "echo \"cartfuse $*\" >&2; case \"$*\" in *train*--json*) echo \
         '{\"solved\":{\"env_steps\":96512,\"seconds\":1.25},\"env_steps\":96512,\"seconds\":1.5,\
         \"rollout_seconds\":0.5,\"learn_seconds\":1.0,\"history\":[]}';; esac",
    );
    for name in ["integration", "cuda_launch", "host_step"] {
        script(&bin.join(name), &format!("echo \"{name} $*\""));
    }
    // No wheels: every gpu-python part stops with status 4 at once.
    let wheels = fake.join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    let out = fake.join("out");
    let args = ["--bin", bin.to_str().unwrap(), out.to_str().unwrap()];
    let run = gpu_session(&args, &smi, &wheels);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let session = std::fs::read_to_string(out.join("session.txt")).unwrap();
    let parts: Vec<&str> = (session.lines())
        .filter(|l| l.starts_with("part "))
        .map(|l| l.split_once(": exit").map_or(l, |(part, _)| part))
        .collect();
    assert_eq!(
        parts,
        [
            "part 1, gpu-check host-path,launch,numerics,train,train-one,population-64,population-2048",
            "part 2, gpu-python bench",
            "part 3, gpu-check reproduce",
            "part 4, gpu-python tests",
            "part 5, gpu-python ppo",
            "part 6, gpu-check host-step,host-path-caller,crossover,population-64-burn",
        ],
        "{session}"
    );
    assert!(
        session.contains("part 2, gpu-python bench: exit 4"),
        "{session}"
    );
    // The kits' own summaries follow, train-one's runs read from their reports.
    assert!(
        session.contains(
            "  cuda: at the target after 96512 env-steps, 1.25 s; wall 1.5 s (collecting 0.5 s, learning 1.0 s)"
        ),
        "{session}"
    );
    // host-path fails with fake binaries (no rate printed), the Python parts without wheels.
    for again in [
        "bash scripts/gpu-check.sh --only host-path --pack FILE DIR",
        "bash scripts/gpu-python.sh --only bench --pack FILE DIR",
        "bash scripts/gpu-python.sh --only tests --pack FILE DIR",
    ] {
        assert!(session.contains(again), "missing `{again}` in:\n{session}");
    }
    let mut packs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    packs.sort();
    assert_eq!(
        packs,
        [
            "part-1-gpu-check.tgz",
            "part-3-gpu-check.tgz",
            "part-6-gpu-check.tgz",
            "session.txt"
        ]
    );
    // A budget under the 20 s a part needs starts none.
    let short = fake.join("short");
    let args = [
        "--bin",
        bin.to_str().unwrap(),
        "--budget",
        "19",
        short.to_str().unwrap(),
    ];
    let run = gpu_session(&args, &smi, &wheels);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let session = std::fs::read_to_string(short.join("session.txt")).unwrap();
    assert_eq!(session.matches(": not started, ").count(), 6, "{session}");
    assert!(session.contains("bash scripts/gpu-check.sh --only reproduce --pack FILE DIR"));
    std::fs::remove_dir_all(fake).ok();
}
