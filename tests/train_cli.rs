//! `cartfuse train` end to end: the report, saved weights, resuming, and its errors.

use std::process::Output;

use super::cli::{cartfuse, json_report, stderr, stdout};

/// A short run on the CPU (2 updates of 4 envs x 64 steps, seed 3) with `extra` arguments.
fn short_train(extra: &[&str]) -> Output {
    let mut args = vec![
        "--device",
        "cpu",
        "train",
        "--envs",
        "4",
        "--num-steps",
        "64",
        "--total-env-steps",
        "512",
        "--no-target",
        "--seed",
        "3",
    ];
    args.extend_from_slice(extra);
    cartfuse(&args)
}

#[test]
fn train_reports_its_run_saves_weights_and_resumes_from_them() {
    let dir = std::env::temp_dir().join(format!("cartfuse-train-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let weights = dir.join("ppo");
    let weights = weights.to_str().unwrap();
    let args = |extra: &[&str]| short_train(&[&["--json"], extra].concat());
    let first = args(&["--save", weights]);
    let report: serde_json::Value = json_report(&first, "train --save");
    assert_eq!(report["env_steps"], 512);
    assert_eq!(report["history"].as_array().unwrap().len(), 2);
    assert!(report["solved"].is_null());
    assert!(report["rollout_env_steps_per_s"].as_f64().unwrap() > 0.0);
    assert!(dir.join("ppo.mpk").exists());

    let resumed = args(&["--load", weights]);
    let again: serde_json::Value = json_report(&resumed, "train --load");
    // The same seed from the saved weights, not from the fresh ones: another run.
    assert_ne!(again["history"], report["history"]);

    let missing = args(&["--load", dir.join("absent").to_str().unwrap()]);
    assert!(!missing.status.success());
    assert!(stderr(&missing).contains("absent"), "{}", stderr(&missing));
    let bad = cartfuse(&["train", "--envs", "0"]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("--envs"), "{}", stderr(&bad));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn train_takes_the_ppo_settings_from_its_flags() {
    let run = short_train(&[
        "--json",
        "--epochs",
        "3",
        "--minibatches",
        "2",
        "--gamma",
        "0.9",
        "--gae-lambda",
        "0.7",
        "--ent-coef",
        "0.02",
    ]);
    let report: serde_json::Value = json_report(&run, "train with PPO settings");
    let config = &report["config"];
    assert_eq!(config["update_epochs"], 3);
    assert_eq!(config["num_minibatches"], 2);
    assert_eq!(config["gamma"].as_f64().unwrap() as f32, 0.9);
    assert_eq!(config["gae_lambda"].as_f64().unwrap() as f32, 0.7);
    assert_eq!(config["ent_coef"].as_f64().unwrap() as f32, 0.02);

    // 4 envs x 64 steps do not split into 3 minibatches; a discount above 1 is no discount.
    let uneven = short_train(&["--minibatches", "3"]);
    assert!(!uneven.status.success());
    assert!(
        stderr(&uneven).contains("num_minibatches"),
        "{}",
        stderr(&uneven)
    );
    let gamma = short_train(&["--gamma", "1.5"]);
    assert!(!gamma.status.success());
    assert!(stderr(&gamma).contains("gamma"), "{}", stderr(&gamma));
}

#[test]
fn train_collects_with_the_policy_fused_into_the_step() {
    let run = |rollout: &str| short_train(&["--rollout", rollout]);
    let fused = run("fused-x8");
    assert!(fused.status.success(), "{}", stderr(&fused));
    let text = stdout(&fused);
    assert!(
        text.contains("policy fused into the env's step (fused-x8)"),
        "{text}"
    );
    assert!(text.contains("env-steps:            512"), "{text}");
    let odd = run("fused-x5");
    assert!(!odd.status.success());
    assert!(stderr(&odd).contains("num_steps"), "{}", stderr(&odd));
    let unknown = run("sideways");
    assert!(!unknown.status.success());
    assert!(stderr(&unknown).contains("or host"), "{}", stderr(&unknown));
}

#[test]
fn the_device_source_needs_the_learner_on_the_envs_device() {
    let on_cpu = short_train(&["--rollout", "device"]);
    assert!(!on_cpu.status.success());
    assert!(
        stderr(&on_cpu).contains("use `--learner wgpu --device wgpu`")
            && stderr(&on_cpu).contains("got `--learner native --device cpu`"),
        "{}",
        stderr(&on_cpu)
    );
}

#[test]
fn train_agents_prints_the_population_summary() {
    // Three agents seeded 3, 4, 5, the second with its own learning rate, to no target.
    let run = short_train(&[
        "--json",
        "--agents",
        "3",
        "--learning-rate",
        "1e-3,3e-3,1e-3",
    ]);
    let summary: serde_json::Value = json_report(&run, "train --agents");
    assert_eq!(summary["agents"], 3);
    assert_eq!(summary["reached_target"], 0);
    assert_eq!(summary["seeds"], serde_json::json!([3, 4, 5]));
    assert_eq!(summary["env_steps"], 3 * 512);
    assert_eq!(
        summary["seconds_to_target"],
        serde_json::json!([null, null, null])
    );
    assert_eq!(summary["env_steps_to_target"].as_array().unwrap().len(), 3);
    assert_eq!(summary["settings"][1]["learning_rate"], 3e-3);
    assert!(summary["seconds_total"].as_f64().unwrap() > 0.0);

    // A target two agents reach within the budget (the last 100 episodes of a random
    // policy average about 22 steps): each has its time and env-steps to it.
    let reached = cartfuse(&[
        "--device",
        "cpu",
        "train",
        "--seeds",
        "7,8",
        "--target",
        "30",
        "--json",
        "--total-env-steps",
        "30000",
    ]);
    let summary: serde_json::Value = json_report(&reached, "train --seeds --target");
    assert_eq!(summary["reached_target"], 2);
    for agent in 0..2 {
        let steps = summary["env_steps_to_target"][agent].as_u64().unwrap();
        assert!(
            steps > 0 && steps <= 30000 && steps.is_multiple_of(256),
            "{steps}"
        );
        let seconds = summary["seconds_to_target"][agent].as_f64().unwrap();
        assert!(seconds > 0.0 && seconds <= summary["seconds_total"].as_f64().unwrap());
        // The progress line stays on stderr with `--json` (stdout is the object alone).
        let line = format!("agent {agent} (seed {}) reached 30 after ", 7 + agent);
        assert!(stderr(&reached).contains(&line), "{}", stderr(&reached));
    }

    let text = short_train(&["--agents", "2", "--rollout", "fused-x8"]);
    assert!(text.status.success(), "{}", stderr(&text));
    assert!(stdout(&text).contains("agents:               2 x 4 envs x 64 rollout steps"));
    assert!(stdout(&text).contains("policy fused into the env's step (fused-x8)"));
    // `--rollout auto` (the default): the host policy on the CPU runtime, the population
    // fused into one rollout on a device.
    let text = short_train(&["--agents", "2"]);
    assert!(
        stdout(&text).contains("native policy on the host observations"),
        "{}",
        stdout(&text)
    );
    let on_device = cartfuse(&[
        "--device",
        "wgpu",
        "train",
        "--agents",
        "2",
        "--envs",
        "4",
        "--num-steps",
        "12",
        "--total-env-steps",
        "96",
        "--no-target",
    ]);
    assert!(on_device.status.success(), "{}", stderr(&on_device));
    assert!(
        stdout(&on_device).contains("policy fused into the env's step (fused-x4)"),
        "{}",
        stdout(&on_device)
    );

    let mismatch = short_train(&["--agents", "3", "--clip-coef", "0.1,0.2"]);
    assert!(!mismatch.status.success());
    assert!(stderr(&mismatch).contains("--clip-coef takes one value or one per agent"));
    let burn = short_train(&["--agents", "2", "--learner", "ndarray"]);
    assert!(!burn.status.success());
    assert!(
        stderr(&burn).contains("need --learner native"),
        "{}",
        stderr(&burn)
    );
}

#[test]
fn the_device_learners_train_a_population_on_the_device_and_refuse_the_cpu() {
    let on_device = |learner: &str| {
        cartfuse(&[
            "--device",
            "wgpu",
            "train",
            "--learner",
            learner,
            "--agents",
            "2",
            "--envs",
            "4",
            "--num-steps",
            "16",
            "--total-env-steps",
            "128",
            "--no-target",
        ])
    };
    for (learner, name) in [
        (
            "device",
            "device learner (hand-written CubeCL kernels (wgpu), one launch a minibatch step",
        ),
        (
            "device-burn",
            "device learner (burn fusion over CubeBackend (wgpu) + Autodiff",
        ),
    ] {
        let run = on_device(learner);
        assert!(run.status.success(), "{}", stderr(&run));
        let text = stdout(&run);
        assert!(
            text.contains(name)
                && text.contains("2 agents")
                && text.contains(
                    "policy fused into the env's step (fused-x8), samples kept on the device"
                ),
            "{text}"
        );
    }
    let on_cpu = short_train(&["--learner", "device", "--agents", "2"]);
    assert!(!on_cpu.status.success());
    assert!(
        stderr(&on_cpu).contains(
            "device learners (`--learner device`, `device-burn`) learn on the envs' device"
        ),
        "{}",
        stderr(&on_cpu)
    );
    let with_burns_source = cartfuse(&[
        "--device",
        "wgpu",
        "train",
        "--learner",
        "device",
        "--rollout",
        "device",
    ]);
    assert!(!with_burns_source.status.success());
    assert!(
        stderr(&with_burns_source).contains("`--rollout device` is burn's single-agent source"),
        "{}",
        stderr(&with_burns_source)
    );
}

#[test]
fn progress_lines_reach_a_log_that_is_not_a_terminal() {
    // stderr is a pipe here: each update's line is still printed, as a plain line.
    let run = short_train(&["--log-every", "1"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let log = stderr(&run);
    assert!(
        log.contains("update     1  env-steps       256") && log.contains("update     2"),
        "{log}"
    );
}
