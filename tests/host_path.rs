//! `scripts/host-path.sh`, which `scripts/gpu-check.sh` runs for issue 49's host-path table,
//! on wgpu (lavapipe on machines without a GPU) and the CPU: every cell measured, each ratio
//! the rates' own or a median within its rounds' range, bad arguments refused.

use std::process::Output;

use crate::cli::{run_script, stderr, stdout};

fn host_path(args: &[&str]) -> Output {
    run_script("host-path.sh", args, &[])
}

#[test]
fn the_host_path_table_measures_every_cell_on_wgpu_and_the_cpu() {
    let cartfuse = env!("CARGO_BIN_EXE_cartfuse");
    let out = std::env::temp_dir().join(format!("cartfuse-host-path-{}.md", std::process::id()));
    let run = host_path(&[
        "--bin",
        cartfuse,
        "--device",
        "wgpu",
        "--sizes",
        "1 64",
        "--rounds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let table = stdout(&run);
    assert_eq!(std::fs::read_to_string(&out).unwrap().trim(), table.trim());
    let rows = table_rows(&table);
    assert_eq!(rows.len(), 2, "{table}");
    for (cells, n) in rows.iter().zip(["1", "64"]) {
        assert_eq!(cells[0], n, "{cells:?}");
        let [resident, host, cpu] = [1, 2, 3].map(|i| {
            let rate: f64 = cells[i].parse().unwrap_or_else(|_| panic!("{cells:?}"));
            assert!(rate > 0.0, "{cells:?}");
            rate
        });
        // With one round the ratios are the printed rates' own, to their three digits: the
        // host step's time over the resident step's, and the host rollout over the CPU's.
        let ratio = |i: usize| -> f64 { cells[i].trim_end_matches('x').parse().unwrap() };
        assert!(
            (ratio(4) / (resident / host) - 1.0).abs() < 0.02,
            "{cells:?}"
        );
        assert!((ratio(5) / (host / cpu) - 1.0).abs() < 0.02, "{cells:?}");
    }
    // With several rounds each ratio is a median with the range of the rounds around it.
    let run = host_path(&[
        "--bin", cartfuse, "--device", "wgpu", "--sizes", "1", "--rounds", "3",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let table = stdout(&run);
    for cell in &table_rows(&table)[0][4..] {
        let (median, range) = cell.split_once("x (").unwrap_or_else(|| panic!("{table}"));
        let (low, high) = range.trim_end_matches(')').split_once('-').unwrap();
        let [median, low, high]: [f64; 3] = [median, low, high].map(|v| v.parse().unwrap());
        assert!(low <= median && median <= high, "{table}");
    }
    std::fs::remove_file(out).ok();
    // Bad arguments, and a binary that is not there, are refused with status 2.
    for args in [
        &["--sizes", "0"][..],
        &["--sizes", ""],
        &["--rounds", "0"],
        &["--device", "tpu"],
        &["--bogus"],
        &["--bin"],
        &["--bin", "/nonexistent/cartfuse"],
    ] {
        let run = host_path(args);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", stderr(&run));
        assert!(stderr(&run).starts_with("host-path: "), "{}", stderr(&run));
    }
}

/// The cells of a markdown table's rows, its header and rule left out.
fn table_rows(table: &str) -> Vec<Vec<&str>> {
    (table.lines().skip(2))
        .map(|row| row.trim_matches('|').split('|').map(str::trim).collect())
        .collect()
}
