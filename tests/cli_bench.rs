//! The `cartfuse bench` command end to end: any registered environment, its launch and
//! pass counts on the CPU, and two plans timed in turns (`--against`).

use crate::cli::{cartfuse, json_report, stderr, stdout};

#[test]
fn bench_takes_any_registered_environment() {
    let run = cartfuse(&[
        "--device",
        "cpu",
        "bench",
        "--env",
        "MountainCar-v0",
        "--plan",
        "fused",
        "--envs",
        "512",
        "--steps",
        "20",
        "--repeats",
        "2",
        "--json",
    ]);
    let report: serde_json::Value = json_report(&run, "bench --env MountainCar-v0");
    assert_eq!(report["launches_per_step"], 1.0);
    let run = cartfuse(&[
        "--device", "cpu", "bench", "--env", "Pong-v5", "--plan", "fused",
    ]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("MountainCar-v0"), "{}", stderr(&run));
}

#[test]
fn bench_on_the_cpu_counts_one_pass_per_fused_step() {
    for plan in ["fused", "hand-written", "eager"] {
        let run = cartfuse(&[
            "--device",
            "cpu",
            "bench",
            "--plan",
            plan,
            "--envs",
            "1000",
            "--steps",
            "20",
            "--repeats",
            "2",
            "--json",
        ]);
        let report: serde_json::Value = json_report(&run, plan);
        let launches = report["launches_per_step"].as_f64().unwrap();
        if plan == "eager" {
            assert!(launches > 20.0, "{launches}");
        } else {
            assert_eq!(launches, 1.0, "{plan}");
            assert_eq!(report["bytes_per_env_step"], 96.0, "{plan}");
        }
    }
    let run = cartfuse(&[
        "--device",
        "cpu",
        "bench",
        "--plan",
        "fused",
        "--cubecl-log",
        "x.log",
    ]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("--cubecl-log"), "{}", stderr(&run));
}

#[test]
fn bench_against_times_two_plans_in_turns() {
    let run = cartfuse(&[
        "--device",
        "cpu",
        "bench",
        "--plan",
        "fused",
        "--against",
        "hand-written",
        "--envs",
        "256",
        "--repeats",
        "3",
        "--json",
    ]);
    let report: serde_json::Value = json_report(&run, "bench --against");
    assert_eq!(report["plan"], "fused");
    assert_eq!(report["reference"], "hand-written");
    assert_eq!(report["num_envs"], 256);
    let rounds = |key: &str| report[key].as_array().unwrap().len();
    assert_eq!((rounds("plan_step_s"), rounds("reference_step_s")), (3, 3));
    let ratio = |key: &str| report[key].as_f64().unwrap();
    assert!(ratio("slowest_round_ratio") <= ratio("median_ratio"));
    assert!(ratio("median_ratio") <= ratio("fastest_round_ratio"));
    let text = cartfuse(&[
        "--device",
        "cpu",
        "bench",
        "--plan",
        "fused-x4",
        "--against",
        "fused",
        "--envs",
        "64",
        "--repeats",
        "1",
    ]);
    assert!(text.status.success(), "{}", stderr(&text));
    assert!(stdout(&text).contains("speed ratio:"), "{}", stdout(&text));
    let refused = cartfuse(&[
        "--device",
        "cpu",
        "bench",
        "--plan",
        "fused",
        "--against",
        "fastest",
    ]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--against"),
        "{}",
        stderr(&refused)
    );
}
