//! The `cartfuse` binary end to end: rollout, replay, and their error messages.

use std::ffi::OsStr;
use std::process::{Command, Output};

use cartfuse::env::reference::{is_terminated, step_physics};
use cartfuse::replay::ReplayOutput;
use cartfuse::{CartPoleParams, CartPoleState};

pub(crate) fn cartfuse(args: &[&str]) -> Output {
    cartfuse_with_env(args, &[])
}

/// [`cartfuse`] with environment variables `vars` set.
pub(crate) fn cartfuse_with_env(args: &[&str], vars: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cartfuse"))
        .args(args)
        .envs(vars.iter().copied())
        .output()
        .expect("the cartfuse binary runs")
}

/// `bash scripts/<name> ARGS`, the repository's script, with environment variables `vars`
/// set.
pub(crate) fn run_script<A: AsRef<OsStr>>(
    name: &str,
    args: impl IntoIterator<Item = A>,
    vars: &[(&str, &OsStr)],
) -> Output {
    Command::new("bash")
        .arg(format!("{}/scripts/{name}", env!("CARGO_MANIFEST_DIR")))
        .args(args)
        .envs(vars.iter().copied())
        .output()
        .expect("bash runs")
}

pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `run`'s stdout parsed as JSON, after asserting that it succeeded (`what` names the case
/// in the failure message).
pub(crate) fn json_report<T: serde::de::DeserializeOwned>(run: &Output, what: &str) -> T {
    assert!(run.status.success(), "{what}: {}", stderr(run));
    serde_json::from_str(stdout(run).trim())
        .unwrap_or_else(|e| panic!("{what}: {e} in {}", stdout(run)))
}

#[test]
fn rollout_reports_one_launch_per_step_and_random_policy_episode_lengths() {
    let output = cartfuse(&[
        "rollout", "--envs", "512", "--steps", "200", "--seed", "1", "--json",
    ]);
    let report: serde_json::Value = json_report(&output, "rollout --json");
    assert_eq!(report["launches_per_step"], 1.0);
    assert_eq!(report["num_envs"], 512);
    assert!(report["env_steps_per_s"].as_f64().unwrap() > 0.0);
    let episodes = report["episodes_finished"].as_u64().unwrap();
    assert!(episodes > 2000, "{episodes}");
    // A uniformly random policy balances CartPole-v1 for about 22 steps on average.
    let mean = report["mean_episode_length"].as_f64().unwrap();
    assert!((17.0..27.0).contains(&mean), "mean episode length {mean}");
}

#[test]
fn replay_follows_actions_from_initial_states_and_stops_at_done() {
    let dir = std::env::temp_dir().join(format!("cartfuse-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.json");
    let output_path = dir.join("out.json");
    let episodes = [
        ([0.0, 0.0, 0.1, 0.0], vec![1u32, 1, 1, 0, 0, 1]),
        ([2.35, 1.0, 0.0, 0.0], vec![1, 1, 1, 1, 1]),
    ];
    let document = serde_json::json!({
        "episodes": episodes.iter().map(|(s, a)| serde_json::json!({"initial_state": s, "actions": a})).collect::<Vec<_>>()
    });
    std::fs::write(&input, document.to_string()).unwrap();
    let run = cartfuse(&[
        "replay",
        "--input",
        input.to_str().unwrap(),
        "--output",
        output_path.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let replayed: ReplayOutput =
        serde_json::from_str(&std::fs::read_to_string(&output_path).unwrap()).unwrap();
    assert_eq!(replayed.episodes.len(), 2);

    let params = CartPoleParams::default();
    for ((initial, actions), got) in episodes.iter().zip(&replayed.episodes) {
        let mut state = CartPoleState::from_array(initial.map(|v: f64| f64::from(v as f32)));
        let mut expected_len = 0;
        for (t, action) in actions.iter().enumerate() {
            state = step_physics(state, *action, &params);
            expected_len += 1;
            for (g, w) in got.observations[t].iter().zip(state.to_array()) {
                assert!((f64::from(*g) - w).abs() < 1e-4, "step {t}: {g} vs {w}");
            }
            assert_eq!(got.terminated[t], is_terminated(&state, &params));
            if got.terminated[t] {
                break;
            }
        }
        assert_eq!(got.observations.len(), expected_len);
        assert_eq!(got.rewards, vec![1.0; expected_len]);
        assert_eq!(got.truncated, vec![false; expected_len]);
    }
    // The second cart leaves the track after 3 steps: x = 2.35 + 0.02 * (1.0 + ...) per step.
    assert_eq!(replayed.episodes[1].observations.len(), 3);
    assert!(replayed.episodes[1].terminated[2]);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn replay_rejects_malformed_input_naming_episode_and_field() {
    let path = std::env::temp_dir().join(format!("cartfuse-bad-{}.json", std::process::id()));
    std::fs::write(&path, r#"{"episodes":[{"initial_state":[0,0,0,0],"actions":[1]},{"initial_state":[0,0,0,0],"actions":[1,"x"]}]}"#).unwrap();
    let run = cartfuse(&["replay", "--input", path.to_str().unwrap()]);
    assert!(!run.status.success());
    assert!(
        stderr(&run).contains("episode 1, field `actions`: element 1 is \"x\", expected 0 or 1"),
        "{}",
        stderr(&run)
    );
    // Not JSON: the parser's words, once.
    std::fs::write(&path, "episodes").unwrap();
    let run = cartfuse(&["replay", "--input", path.to_str().unwrap()]);
    let message = stderr(&run);
    assert!(!run.status.success());
    assert!(
        message.contains("replay input is not valid JSON: expected value at line 1 column 1"),
        "{message}"
    );
    assert_eq!(message.matches("expected value").count(), 1, "{message}");
    std::fs::remove_file(path).ok();
}

#[test]
fn missing_vulkan_adapter_says_how_to_install_one() {
    let run = Command::new(env!("CARGO_BIN_EXE_cartfuse"))
        .args(["--device", "wgpu", "rollout", "--envs", "4", "--steps", "1"])
        .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .output()
        .unwrap();
    assert!(!run.status.success());
    let message = stderr(&run);
    assert!(message.contains("no Vulkan adapter found"), "{message}");
    assert!(
        message.contains("apt-get install mesa-vulkan-drivers"),
        "{message}"
    );
}

/// Both threads a device's calls may run on (the patched cubecl-common in `vendor/`) step
/// the same episodes: a seeded random rollout on wgpu finishes as many episodes, of the same
/// mean length, with cubecl's calls on the calling thread as on the device's own.
#[cfg(feature = "wgpu")]
#[test]
fn wgpu_steps_the_same_episodes_on_either_device_thread() {
    let rollout = |thread: &str| -> serde_json::Value {
        let args = [
            "--device", "wgpu", "rollout", "--envs", "64", "--steps", "300", "--seed", "3",
            "--json",
        ];
        let run = cartfuse_with_env(&args, &[("CARTFUSE_DEVICE_THREAD", thread)]);
        json_report(&run, thread)
    };
    let (caller, server) = (rollout("caller"), rollout("server"));
    assert!(
        caller["episodes_finished"].as_u64().unwrap() > 64,
        "{caller}"
    );
    assert_eq!(caller["episodes_finished"], server["episodes_finished"]);
    assert_eq!(caller["mean_episode_length"], server["mean_episode_length"]);
}

#[test]
fn without_a_gpu_the_default_device_is_the_cpu_and_says_why() {
    let run = Command::new(env!("CARGO_BIN_EXE_cartfuse"))
        .args(["rollout", "--envs", "64", "--steps", "10", "--json"])
        .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("device: cpu (no GPU adapter found)"),
        "{}",
        stderr(&run)
    );
    let report: serde_json::Value = json_report(&run, "bench without a GPU");
    assert_eq!(report["num_envs"], 64);
}

/// Without a C compiler the CPU interprets its launches and says so; asked for compiled
/// kernels explicitly, it stops with an error that says how to fix it.
#[test]
fn the_cpu_without_a_c_compiler_interprets_or_says_what_to_do() {
    let bench = |engine: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cartfuse"));
        command
            .args([
                "--device", "cpu", "bench", "--plan", "fused", "--envs", "100",
            ])
            .args(["--steps", "5", "--repeats", "1", "--json"])
            .env("CARTFUSE_CC", "/nonexistent/cc");
        if let Some(engine) = engine {
            command.env("CARTFUSE_CPU_ENGINE", engine);
        }
        command.output().expect("the cartfuse binary runs")
    };
    let fallback = bench(None);
    assert!(fallback.status.success(), "{}", stderr(&fallback));
    assert!(
        stderr(&fallback).contains("CPU kernels run interpreted"),
        "{}",
        stderr(&fallback)
    );
    let report: serde_json::Value = json_report(&fallback, "bench without a C compiler");
    assert_eq!(report["launches_per_step"], 1.0);
    let forced = bench(Some("compiled"));
    assert!(!forced.status.success());
    let message = stderr(&forced);
    assert!(
        message.contains("no C compiler: `/nonexistent/cc`"),
        "{message}"
    );
    assert!(
        message.contains("CARTFUSE_CPU_ENGINE=interpreted"),
        "{message}"
    );
}

#[test]
fn too_many_envs_is_a_clear_error() {
    let run = cartfuse(&["rollout", "--envs", "4000000000", "--steps", "1"]);
    assert!(!run.status.success());
    assert!(
        stderr(&run).contains("do not fit on this device"),
        "{}",
        stderr(&run)
    );
}

/// A batch that would not fit in memory is refused before anything is allocated: at once,
/// naming the envs asked for, the bytes they need and the bytes available.
#[test]
fn a_batch_larger_than_memory_is_refused_within_seconds() {
    let start = std::time::Instant::now();
    let run = cartfuse(&[
        "--device",
        "cpu",
        "rollout",
        "--envs",
        "1000000000",
        "--steps",
        "1",
    ]);
    let took = start.elapsed();
    assert!(!run.status.success());
    let message = stderr(&run);
    for part in [
        "1000000000 envs need at least",
        "are available",
        "host memory",
    ] {
        assert!(message.contains(part), "{message}");
    }
    assert!(took.as_secs() < 30, "took {took:?}");
}

/// A `CARTFUSE_*` variable set to a value cartfuse does not accept stops the command with
/// the values it accepts, instead of being ignored.
#[test]
fn an_unknown_cartfuse_variable_value_is_an_error_naming_the_accepted_ones() {
    #[cfg_attr(not(feature = "wgpu"), allow(unused_mut))]
    let mut cases = vec![
        ("CARTFUSE_CPU_SIMD", "avx9000", "scalar, avx2 or avx512"),
        ("CARTFUSE_CPU_ENGINE", "jit", "compiled or interpreted"),
        ("CARTFUSE_IN_PLACE", "maybe", "on, off"),
    ];
    // Read by the patched cubecl-common (vendor/), so only with a device runtime.
    #[cfg(feature = "wgpu")]
    cases.push(("CARTFUSE_DEVICE_THREAD", "main", "caller or server"));
    // Any directory, but only a build that can translate kernels for CUDA writes them.
    #[cfg(not(feature = "cuda"))]
    cases.push((
        "CARTFUSE_CUDA_SOURCES",
        "/tmp/cuda-sources",
        "in a build with the cuda and wgpu features",
    ));
    for (name, value, accepted) in cases {
        let run = Command::new(env!("CARGO_BIN_EXE_cartfuse"))
            .args(["--device", "cpu", "rollout", "--envs", "8", "--steps", "1"])
            .env(name, value)
            .output()
            .expect("the cartfuse binary runs");
        assert!(!run.status.success(), "{name}={value} was accepted");
        let message = stderr(&run);
        assert!(
            message.contains(&format!("{name}=\"{value}\"")),
            "{message}"
        );
        assert!(message.contains(accepted), "{message}");
    }
}

#[test]
fn rollout_and_plan_take_every_environment() {
    for id in cartfuse::env::registry::ENV_IDS {
        let run = cartfuse(&[
            "--device", "cpu", "rollout", "--env", id, "--envs", "64", "--steps", "600", "--json",
        ]);
        let report: serde_json::Value = json_report(&run, id);
        assert_eq!(report["num_envs"], 64, "{id}");
        // Every environment ends episodes within 600 steps: by its limit at the latest
        // (500 for CartPole and Acrobot, 200 for MountainCar and Pendulum), except
        // MountainCarContinuous (999), which a random policy almost never solves.
        let finished = report["episodes_finished"].as_u64().unwrap();
        if *id == "MountainCarContinuous-v0" {
            assert!(finished < 64, "{id}: {finished}");
        } else {
            assert!(finished >= 64, "{id}: {finished}");
        }
        let plan = cartfuse(&["plan", "--env", id, "--strategy", "fused"]);
        assert!(plan.status.success(), "{id}: {}", stderr(&plan));
        assert!(
            stdout(&plan).contains(&format!("graph: {id} step")),
            "{}",
            stdout(&plan)
        );
    }
}

#[test]
fn replay_runs_any_environment_from_gymnasiums_states() {
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/gymnasium/Pendulum-v1.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let episode = &fixture["episodes"][0];
    let actions: Vec<f64> = episode["actions"].as_array().unwrap()[..20]
        .iter()
        .map(|a| a.as_f64().unwrap())
        .collect();
    let input = serde_json::json!({"episodes": [{
        "initial_state": episode["initial_state"],
        "actions": actions,
    }]});
    let dir = std::env::temp_dir().join(format!("cartfuse-pendulum-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("input.json");
    std::fs::write(&path, input.to_string()).unwrap();
    let run = cartfuse(&[
        "--device",
        "cpu",
        "replay",
        "--env",
        "Pendulum-v1",
        "--input",
        path.to_str().unwrap(),
    ]);
    let replayed: ReplayOutput = json_report(&run, "replay Pendulum-v1");
    let got = &replayed.episodes[0];
    assert_eq!(got.observations.len(), 20);
    for (t, row) in got.observations.iter().enumerate() {
        for (k, value) in row.iter().enumerate() {
            let want = episode["obs"][t][k].as_f64().unwrap();
            assert!((f64::from(*value) - want).abs() < 1e-5, "step {t}: {row:?}");
        }
    }
    let bad = cartfuse(&[
        "--device",
        "cpu",
        "replay",
        "--env",
        "Acrobot-v1",
        "--input",
        path.to_str().unwrap(),
    ]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("must hold 4 numbers [theta1, theta2, dtheta1, dtheta2], found 2"),
        "{}",
        stderr(&bad)
    );
    std::fs::remove_dir_all(dir).ok();
}
