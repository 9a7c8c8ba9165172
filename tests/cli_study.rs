//! The `cartfuse` binary's study commands end to end: `plan`, launch counts against
//! CubeCL's own log, `reproduce`, `compare-reports` and `crossover`.

use std::process::Command;

use crate::cli::{cartfuse, cartfuse_with_env, json_report, stderr, stdout};

#[test]
fn plan_command_explains_every_boundary() {
    let run = cartfuse(&["plan", "--env", "CartPole-v1", "--strategy", "xla-default"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let text = stdout(&run);
    assert!(text.contains("plan xla-default:"), "{text}");
    assert!(
        text.contains("a custom call (XLA's threefry): opaque, fuses nothing"),
        "{text}"
    );
    assert!(text.contains("(pack4) is a concatenate read by"), "{text}");
    assert!(
        text.contains("XLA's copy removal keeps this loop copy"),
        "{text}"
    );
    let kernels = text.matches("  kernel ").count();
    assert_eq!(
        text.matches("boundary: ").count(),
        kernels,
        "one reason per kernel"
    );
    let run = cartfuse(&["plan", "--strategy", "fused-x0"]);
    assert!(!run.status.success());
    assert!(
        stderr(&run).contains("unknown plan `fused-x0`"),
        "{}",
        stderr(&run)
    );
}

/// `plan --random` and `--concat-rule` print the study's rungs with the kernel counts the
/// XLA pipeline test asserts: 3 kernels and a loop copy with the draws read as inputs, 2
/// kernels and two loop copies with the rule patched.
#[test]
fn plan_command_prints_the_study_rungs() {
    let rung = |extra: &[&str]| {
        let mut args = vec!["plan", "--strategy", "xla-default"];
        args.extend_from_slice(extra);
        let run = cartfuse(&args);
        assert!(run.status.success(), "{}", stderr(&run));
        let text = stdout(&run);
        (
            text.matches("  kernel ").count(),
            text.matches(": copy ").count(),
            text,
        )
    };
    let (kernels, copies, text) = rung(&["--random", "drawn-ahead"]);
    assert_eq!((kernels, copies), (3, 1), "{text}");
    assert!(
        text.contains("random DrawnAhead, concat rule Xla"),
        "{text}"
    );
    assert!(!text.contains("custom call"), "{text}");
    let (kernels, copies, text) = rung(&["--random", "drawn-ahead", "--concat-rule", "patched"]);
    assert_eq!((kernels, copies), (2, 2), "{text}");
    let (kernels, copies, text) = rung(&["--random", "drawn-ahead", "--layout", "soa"]);
    assert_eq!((kernels, copies), (2, 0), "{text}");
    let run = cartfuse(&["plan", "--strategy", "fused", "--random", "later"]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("--random"), "{}", stderr(&run));
}

/// The main job in quick mode writes every artefact, and every number in it is measured
/// (or a cell says why it could not be).
#[test]
fn reproduce_quick_writes_the_whole_report() {
    let dir = std::env::temp_dir().join(format!("cartfuse-reproduce-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let run = cartfuse(&["reproduce", "--quick", "--out", dir.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    for file in [
        "report.md",
        "report.json",
        "ablation.csv",
        "workloads.csv",
        "transformer_tail.csv",
        "busy_fraction.csv",
        "break_even.csv",
        "device.csv",
        "roofline.png",
        "roofline.svg",
        "env_steps.png",
        "ablation.png",
        "workloads.png",
    ] {
        let bytes = std::fs::metadata(dir.join(file))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(bytes > 200, "{file} is missing or empty");
    }
    // stderr is not a terminal here: progress comes as plain lines, section and size.
    assert!(
        stderr(&run).contains("] ablation: eager and 9 rows in turns, n = 1 ("),
        "{}",
        stderr(&run)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["mode"], "quick");
    assert!(report["roofline"]["copy_gbps"].as_f64().unwrap() > 0.0);
    assert!(report["dispatch"]["empty_launch_s"].as_f64().unwrap() > 0.0);
    let cells = report["ablation"].as_array().unwrap();
    let rows = cartfuse::harness::studies::ablation::ladder().len();
    assert_eq!(rows, 9);
    assert_eq!(cells.len(), rows * 3, "every row x 3 sizes");
    for cell in cells {
        let profile = &cell["profile"];
        assert!(
            profile.get("Ok").is_some() || profile.get("Err").is_some(),
            "{cell}"
        );
        if let Some(ok) = profile.get("Ok") {
            assert!(ok["env_steps_per_s"].as_f64().unwrap() > 0.0);
            // Every row was timed in the rounds of its size; each factor lies within its
            // slowest and fastest round.
            assert_eq!(cell["rounds"], 3, "{cell}");
            for (median, spread) in [
                ("speedup_over_previous", "over_previous"),
                ("speedup_over_xla_default", "over_xla_default"),
                ("speedup_over_eager", "over_eager"),
            ] {
                if let Some(m) = cell[median].as_f64() {
                    let slowest = cell["slowest_round"][spread].as_f64().unwrap();
                    let fastest = cell["fastest_round"][spread].as_f64().unwrap();
                    assert!(slowest <= m && m <= fastest, "{cell}");
                }
            }
        }
    }
    // Two runs' factors against each other: a report agrees with itself.
    let json = dir.join("report.json");
    let same = cartfuse(&[
        "compare-reports",
        json.to_str().unwrap(),
        json.to_str().unwrap(),
    ]);
    assert!(same.status.success(), "{}", stderr(&same));
    assert!(stdout(&same).contains("ablation: "), "{}", stdout(&same));
    // Launch counts in the report are the plans' own.
    let launches = |row: &str| {
        cells.iter().find(|c| c["row"] == row).unwrap()["profile"]["Ok"]["launches_per_step"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(launches("fused"), 1.0);
    assert_eq!(launches("hand-written"), 1.0);
    assert_eq!(launches("fused-x10"), 0.1);
    assert!(launches("xla-default") >= 5.0);
    // The transformer tail's model saving equals what the ledger measured.
    for row in report["tail"].as_array().unwrap() {
        assert_eq!(
            row["measured_saving_bytes"], row["analytic_saving_bytes"],
            "{row}"
        );
    }
    let markdown = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(markdown.contains("## The study's CartPole ablation, replayed"));
    assert!(markdown.contains("### Why each rung gives its factor on this device"));
    assert!(markdown.contains("This is a `--quick` run"));
    assert!(!markdown.contains("This report is partial"));
    assert_eq!(report["stopped_at"], serde_json::Value::Null);
    assert!(dir.join("rungs.csv").exists());
    assert!(markdown.contains("![Roofline"));
    std::fs::remove_dir_all(dir).ok();
}

/// A run stopped early leaves the report of every section it finished: the first one is
/// written once the roofline and the dispatch tax are measured, marked partial, with the
/// sections not measured saying so and no file of theirs.
#[test]
fn reproduce_stopped_early_leaves_a_partial_report() {
    let dir = std::env::temp_dir().join(format!("cartfuse-partial-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cartfuse"))
        .args(["reproduce", "--quick", "--out", dir.to_str().unwrap()])
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("cartfuse starts");
    let started = std::time::Instant::now();
    let markdown = loop {
        let text = std::fs::read_to_string(dir.join("report.md")).unwrap_or_default();
        if text.contains("This report is partial") {
            break text;
        }
        assert!(
            child.try_wait().unwrap().is_none() && started.elapsed().as_secs() < 120,
            "no partial report was written before the run ended or within 2 minutes"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // Stopped as a timeout would stop it, while it measures the ablation.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        markdown.contains("as the measurement of the study's ablation began"),
        "{markdown}"
    );
    assert!(
        markdown.contains("## Device roofline\n\n| quantity"),
        "{markdown}"
    );
    for section in [
        "## The study's CartPole ablation, replayed",
        "## The CPU side",
        "## Transformer tail: LayerNorm -> GELU -> Dropout -> residual add",
        "## The policy inside the rollout",
    ] {
        assert!(
            markdown.contains(&format!(
                "{section}\n\n*Not measured: see the note at the top.*"
            )),
            "{section}: {markdown}"
        );
    }
    assert!(!markdown.contains("beats the CPU"), "{markdown}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["stopped_at"], "ablation");
    assert!(report["roofline"]["copy_gbps"].as_f64().unwrap() > 0.0);
    assert_eq!(report["ablation"], serde_json::json!([]));
    assert_eq!(report["cpu"], serde_json::Value::Null);
    assert!(dir.join("device.csv").exists());
    for missing in ["ablation.csv", "cpu_plans.csv", "roofline.png"] {
        assert!(!dir.join(missing).exists(), "{missing}");
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn compare_reports_and_crossover_refuse_bad_input() {
    let missing = cartfuse(&[
        "compare-reports",
        "/nonexistent/a.json",
        "/nonexistent/b.json",
    ]);
    assert!(!missing.status.success());
    assert!(stderr(&missing).contains("cannot read /nonexistent/a.json"));
    let dir = std::env::temp_dir().join(format!("cartfuse-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let not_a_report = dir.join("x.json");
    std::fs::write(&not_a_report, "{\"ablation\": 3}").unwrap();
    let path = not_a_report.to_str().unwrap();
    let bad = cartfuse(&["compare-reports", path, path]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("is not a cartfuse report.json"),
        "{}",
        stderr(&bad)
    );
    std::fs::remove_dir_all(dir).ok();
    let backwards = cartfuse(&["--device", "wgpu", "crossover", "--from", "64", "--to", "4"]);
    assert!(!backwards.status.success());
    assert!(stderr(&backwards).contains("--from (64) must not be larger than --to (4)"));
    let no_device = cartfuse(&["--device", "cpu", "crossover"]);
    assert!(!no_device.status.success());
    assert!(stderr(&no_device).contains("choose one with --device wgpu or --device cuda"));
    let budget = cartfuse(&["--device", "wgpu", "crossover", "--budget", "0"]);
    assert!(!budget.status.success());
    assert!(stderr(&budget).contains("expected seconds between 0 and 3600"));
}

/// The CPU against the device in turns over a few sizes: every point has its rounds on
/// both sides, and the verdict names the crossover or says there is none.
#[test]
fn crossover_times_the_cpu_against_the_device_in_turns() {
    let dir = std::env::temp_dir().join(format!("cartfuse-crossover-{}", std::process::id()));
    let run = cartfuse_with_env(
        &[
            "--device",
            "wgpu",
            "crossover",
            "--plans",
            "fused",
            "--to",
            "16",
            "--budget",
            "0.05",
            "--out",
            dir.to_str().unwrap(),
        ],
        &[("XDG_CACHE_HOME", dir.to_str().unwrap())],
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let text = stdout(&run);
    assert!(
        text.contains("fused: device-resident, the device"),
        "{text}"
    );
    assert!(text.contains("host steps, the device"), "{text}");
    // scripts/gpu-check.sh's summary picks its verdicts out of this output (its crossover step).
    let results = dir.join("gpu-check");
    std::fs::create_dir_all(results.join("logs")).unwrap();
    std::fs::write(results.join("steps.tsv"), "crossover\t0\t1\n").unwrap();
    std::fs::write(results.join("logs/crossover.log"), &text).unwrap();
    let args = ["--summary", results.to_str().unwrap()];
    let summary = stdout(&crate::gpu_check::gpu_check(
        &args,
        "/nonexistent/nvidia-smi",
    ));
    assert!(
        summary.contains("crossover: fused: device-resident, the device"),
        "{summary}"
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("crossover.json")).unwrap())
            .unwrap();
    let points = result["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "n = 1, 4, 16");
    for point in points {
        let rounds = point["cpu_step_s"].as_array().unwrap().len();
        // A loaded machine may stop a size at the floor of three rounds (turns::FLOOR_ROUNDS).
        assert!(rounds >= 3, "{point}");
        for side in ["device_step_s", "cpu_host_step_s", "device_host_step_s"] {
            assert_eq!(point[side].as_array().unwrap().len(), rounds, "{side}");
        }
    }
    // The host crossover is kept for the automatic device choice, under the cache.
    let kept = std::fs::read_to_string(dir.join("cartfuse").join("crossovers.json")).unwrap();
    let kept: serde_json::Value = serde_json::from_str(&kept).unwrap();
    let entry = kept.as_object().unwrap().values().next().unwrap();
    assert_eq!(entry["plan"], "fused");
    assert_eq!(entry["largest_measured"], 16);
    assert_eq!(
        std::fs::read_to_string(dir.join("crossover.csv"))
            .unwrap()
            .lines()
            .count(),
        4
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn ledger_launches_equal_the_cubecl_runtime_record() {
    let dir = std::env::temp_dir().join(format!("cartfuse-cubecl-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("cubecl.toml"),
        "[profiling]\nlogger = { level = \"minimal\", file = \"launches.log\", append = false }\n",
    )
    .unwrap();
    for plan in [
        "hand-written",
        "vertical",
        "horizontal",
        "xla-default",
        "fused-x10",
    ] {
        let log = dir.join("launches.log");
        std::fs::remove_file(&log).ok();
        let run = Command::new(env!("CARGO_BIN_EXE_cartfuse"))
            .args([
                "--device",
                "wgpu",
                "bench",
                "--plan",
                plan,
                "--envs",
                "64",
                "--steps",
                "20",
                "--repeats",
                "2",
                "--json",
                "--cubecl-log",
                "launches.log",
            ])
            .current_dir(&dir)
            .output()
            .unwrap();
        let report: serde_json::Value = json_report(&run, plan);
        let ledger = report["launches_total"].as_u64().unwrap();
        // Counted by the benchmarked process itself once cubecl's asynchronous logger caught
        // up, then re-counted here.
        let runtime = report["runtime_launches"].as_u64().unwrap();
        let in_file = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.starts_with("Executing "))
            .count() as u64;
        assert_eq!(
            in_file, runtime,
            "{plan}: the log changed after the process counted it"
        );
        assert_eq!(ledger, runtime, "{plan}: ledger vs cubecl's execution log");
        assert!(ledger >= 8, "{plan}: {ledger}");
    }
    std::fs::remove_dir_all(dir).ok();
}
