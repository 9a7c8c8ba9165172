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
            && stderr(&on_cpu).contains("got `--learner ndarray --device cpu`"),
        "{}",
        stderr(&on_cpu)
    );
}
