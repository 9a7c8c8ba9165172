//! The CPU side of the report: the host roofline, every plan on the native CPU runtime
//! against CPU eager, and the CPU against the device (and burn's `NdArray`) over n, with the
//! size from which the device wins. Tables and sentences come from the run's numbers.

use crate::reproduce::Report;
use crate::studies::cpu::{CpuStudy, cpu_plans, crossover, fastest};

use crate::cells::Over;

use super::commentary::{speed, speed_in_turns};
use super::roof::share_of_copy;
use super::table::{Cell, Format, Shown, Table, col, quantities};

pub use crate::studies::crossover::STUDY_CROSSOVER;

/// The fastest device plan at `n` (eager or any ladder row): `(row, env-steps/s)`.
pub fn device_best(report: &Report, n: usize) -> Option<(&str, f64)> {
    fastest(report.eager.iter().chain(&report.ablation), n)
}

fn rate(study: &CpuStudy, row: &str, n: usize) -> Option<f64> {
    study
        .cell(row, n)
        .and_then(|c| c.profile.as_ref().ok())
        .map(|p| p.env_steps_per_s)
}

/// The CPU side's four tables and what they show, when the CPU was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuTables {
    /// The CPU's name.
    pub device: String,
    /// The host roofline.
    pub roofline: Table,
    /// Every plan on the CPU.
    pub plans: Table,
    /// The CPU against the device and burn `NdArray`.
    pub vs_device: Table,
    /// Each plan on the device against the same plan on the CPU.
    pub crossovers: Table,
    /// The sentences the report draws from them.
    pub commentary: Vec<String>,
}

impl CpuTables {
    /// The tables of `report`'s CPU side (`None` until it was measured).
    pub fn new(report: &Report) -> Option<Self> {
        let study = report.cpu.as_ref()?;
        Some(Self {
            device: study.device.clone(),
            roofline: roofline(study),
            plans: plans(study),
            vs_device: vs_device(report, study),
            crossovers: crossovers(report, study),
            commentary: commentary(report, study),
        })
    }

    /// The four tables, in the order the report shows them.
    pub fn all(&self) -> [&Table; 4] {
        [
            &self.roofline,
            &self.plans,
            &self.vs_device,
            &self.crossovers,
        ]
    }
}

/// The host roofline table.
fn roofline(c: &CpuStudy) -> Table {
    let gbps = Format::FixedUnit(2, "GB/s");
    let rows = [
        (
            "copy roof (read + write, every thread; the faster copy below)",
            c.copy_gbps,
            gbps,
            "GB/s",
        ),
        (
            "copy with non-temporal stores (STREAM-style)",
            c.streaming_gbps,
            gbps,
            "GB/s",
        ),
        ("copy by the platform memcpy", c.memcpy_gbps, gbps, "GB/s"),
        (
            "bytes moved per copy pass",
            c.copy_bytes as f64,
            Format::Mebibytes,
            "bytes",
        ),
        (
            "peak f32 multiply + add (not fused)",
            c.gflops,
            Format::FixedUnit(1, "GFLOP/s"),
            "GFLOP/s",
        ),
        ("threads", c.threads as f64, Format::Fixed(0), ""),
    ];
    let rows = rows
        .into_iter()
        .map(|(quantity, value, format, unit)| {
            (quantity.to_string(), Cell::Number(value, format), unit)
        })
        .chain([("SIMD level".into(), Cell::text(c.simd.clone()), "")]);
    quantities("CPU roofline", "cpu_roofline.csv", rows.collect())
}

/// Every CPU plan at every size: env-steps/s and the ratio to CPU eager.
fn plans(study: &CpuStudy) -> Table {
    let mut cells: Vec<_> = study.cells.iter().collect();
    let plan_order = |row: &str| cpu_plans().iter().position(|(label, _)| *label == row);
    cells.sort_by_key(|c| plan_order(&c.row));
    let title = "CartPole on the CPU: every plan against CPU eager";
    Table::of(title, "cpu_plans.csv", cells)
        .col(col("plan", ""), |c| Cell::text(&c.row))
        .num(col("n", ""), Format::Fixed(0), |c| c.num_envs as f64)
        .num(col("rounds", ""), Format::Fixed(0), |c| c.rounds as f64)
        .num(col("env-steps/s", "1/s"), Format::Si, |c| {
            c.ran().map(|p| p.env_steps_per_s)
        })
        .num(
            col("time per step (median round)", "s"),
            Format::Seconds,
            |c| c.ran().map(|p| p.step_s_median),
        )
        .num(col("passes per step", ""), Format::Fixed(1), |c| {
            c.ran().map(|p| p.launches_per_step)
        })
        .num(col("bytes per env-step", "bytes"), Format::Fixed(0), |c| {
            c.ran().map(|p| p.bytes_per_env_step)
        })
        .num(
            col("achieved bandwidth", "GB/s"),
            Format::FixedUnit(2, "GB/s"),
            |c| c.ran().map(|p| p.gbps),
        )
        .factor(col("x CPU eager", ""), |c| c.factor(Over::Eager))
        .col(col("skipped", "").shown(Shown::WhenPresent), |c| {
            Cell::skipped(&c.profile)
        })
        .build()
}

/// One plan on the device against the same plan on the CPU.
struct PlanCrossover {
    row: &'static str,
    /// The size from which the device wins (`None`: never, at the measured sizes).
    from: Option<usize>,
    /// Device / CPU env-steps/s at the smallest and the largest size.
    ratios: (Option<f64>, Option<f64>),
}

/// Every plan measured on both the device and the CPU.
fn plan_crossovers(report: &Report, study: &CpuStudy) -> Vec<PlanCrossover> {
    let sizes = report.sizes();
    let device_rate = |row: &str, n: usize| report.profile(row, n).map(|p| p.env_steps_per_s);
    cpu_plans()
        .into_iter()
        .filter_map(|(row, _)| {
            let measured = |n: usize| device_rate(row, n).zip(rate(study, row, n));
            let ratio_at = |n: Option<&usize>| n.and_then(|&n| measured(n)).map(|(d, c)| d / c);
            sizes
                .iter()
                .any(|&n| measured(n).is_some())
                .then(|| PlanCrossover {
                    row,
                    from: crossover(&sizes, |n| device_rate(row, n), |n| rate(study, row, n)),
                    ratios: (ratio_at(sizes.first()), ratio_at(sizes.last())),
                })
        })
        .collect()
}

/// Each plan on the device against the same plan on the CPU: the size from which the device
/// wins, beside the study's crossover.
fn crossovers(report: &Report, study: &CpuStudy) -> Table {
    let title = format!(
        "Where {} starts to beat the CPU, plan by plan",
        report.device_name
    );
    let largest = report.sizes().last().copied().unwrap_or(0);
    let device = format!("{} ({})", report.device, report.runtime);
    Table::of(title, "cpu_crossover.csv", plan_crossovers(report, study))
        .col(col("device (driver; runtime)", ""), move |_| {
            Cell::text(device.clone())
        })
        .col(col("plan", ""), |plan| Cell::text(plan.row))
        .col(
            col("the device wins from n =", ""),
            move |plan| match plan.from {
                Some(n) => Cell::Number(n as f64, Format::Fixed(0)),
                None => Cell::text(format!("never (up to {largest})")),
            },
        )
        .num(
            col("device / CPU at the smallest n", ""),
            Format::Ratio,
            |plan| plan.ratios.0,
        )
        .num(
            col("device / CPU at the largest n", ""),
            Format::Ratio,
            |plan| plan.ratios.1,
        )
        .col(col("the study (XLA, GPU against CPU)", ""), |_| {
            Cell::text(format!("about {STUDY_CROSSOVER}"))
        })
        .build()
}

/// The CPU's best plan against the device's best plan and burn `NdArray` at every size.
fn vs_device<'a>(report: &'a Report, study: &'a CpuStudy) -> Table {
    let cpu = move |n| study.best(n);
    let device = move |n| device_best(report, n);
    let ndarray = move |n| {
        report
            .burn_profile("burn ndarray", n)
            .map(|b| b.env_steps_per_s)
    };
    let title = format!("CPU against {} and burn NdArray", report.device_name);
    Table::of(title, "cpu_vs_device.csv", report.sizes())
        .num(col("n", ""), Format::Fixed(0), |&n| n as f64)
        .col(col("best CPU plan", ""), move |&n| {
            cpu(n).map_or(Cell::Missing, |(row, _)| Cell::text(row))
        })
        .num(col("CPU env-steps/s", "1/s"), Format::Si, move |&n| {
            cpu(n).map(|c| c.1)
        })
        .col(col("best device plan", ""), move |&n| {
            device(n).map_or(Cell::Missing, |(row, _)| Cell::text(row))
        })
        .num(col("device env-steps/s", "1/s"), Format::Si, move |&n| {
            device(n).map(|d| d.1)
        })
        .num(col("device / CPU", ""), Format::Ratio, move |&n| {
            device(n).zip(cpu(n)).map(|(d, c)| d.1 / c.1)
        })
        .num(
            col("burn ndarray env-steps/s", "1/s"),
            Format::Si,
            move |&n| ndarray(n),
        )
        .num(col("CPU / burn ndarray", ""), Format::Ratio, move |&n| {
            cpu(n).zip(ndarray(n)).map(|(c, b)| c.1 / b)
        })
        .build()
}

/// Sentences on the CPU side (`study`, of `report`), each computed from this run's numbers.
fn commentary(report: &Report, study: &CpuStudy) -> Vec<String> {
    let sizes = report.sizes();
    let mut out = Vec::new();
    let crossover = study.crossover(&sizes, |n| device_best(report, n).map(|d| d.1));
    out.push(match crossover {
        Some(n) => format!(
            "{} beats the CPU's best plan from n = {n} on (every measured size from there up); \
             the study found XLA's GPU ahead from about {STUDY_CROSSOVER} simulations.",
            report.device_name
        ),
        None => format!(
            "{} never beats the CPU's best plan at the measured sizes (up to n = {}); the study \
             found XLA's GPU ahead from about {STUDY_CROSSOVER} simulations, on a real GPU.",
            report.device_name,
            sizes.last().copied().unwrap_or(0)
        ),
    });
    let per_plan: Vec<String> = plan_crossovers(report, study)
        .iter()
        .map(|p| match p.from {
            Some(n) => format!("{} from n = {n}", p.row),
            None => format!("{} never", p.row),
        })
        .collect();
    if !per_plan.is_empty() {
        out.push(format!(
            "Plan by plan, {} beats the same plan on the CPU: {} (the CPU wins below those \
             sizes; the study's crossover was about {STUDY_CROSSOVER} simulations).",
            report.device_name,
            per_plan.join(", ")
        ));
    }
    if let Some(&n) = sizes.last()
        && let Some(factor) = study.cell("fused", n).and_then(|c| c.factor(Over::Eager))
    {
        out.push(format!(
            "At n = {n}, CPU fused against CPU eager (the numpy-like baseline: one pass per op, \
             every intermediate through memory), in turns: {}.",
            speed_in_turns(factor)
        ));
    }
    if let Some(&n) = sizes.last()
        && let Some(cell) = study.cell("fused", n)
        && let Ok(p) = &cell.profile
    {
        out.push(format!(
            "At n = {n}, CPU fused moves {:.2} GB/s by the ledger's byte count, {}.",
            p.gbps,
            share_of_copy(
                p.gbps,
                study.copy_gbps,
                p.bytes_per_env_step * n as f64,
                study.cache_bytes,
            ),
        ));
    }
    for n in [4096, 1024]
        .into_iter()
        .filter(|n| sizes.contains(n))
        .take(1)
    {
        if let (Some(cpu), Some(burn)) = (
            study.best(n),
            report
                .burn_profile("burn ndarray", n)
                .map(|b| b.env_steps_per_s),
        ) {
            out.push(format!(
                "At n = {n}, the CPU's best plan ({}) against burn NdArray (timed apart, \
                 median of repeats): {}.",
                cpu.0,
                speed(cpu.1 / burn)
            ));
        }
    }
    let hand_written_roof = sizes
        .iter()
        .filter_map(|&n| Some((n, rate(study, "hand-written", n)?, study.best(n)?)));
    let beaten: Vec<String> = hand_written_roof
        .filter(|(_, hand, (row, best))| *row != "hand-written" && best > hand)
        .map(|(n, _, (row, _))| format!("{row} at n = {n}"))
        .collect();
    if !beaten.is_empty() {
        out.push(format!(
            "The native hand-written step is not the roof everywhere: {} beat it.",
            beaten.join(", ")
        ));
    }
    out
}

/// The rows of the CPU plot: `(label, [(n, env-steps/s)])`, the CPU's (`study`) first.
pub fn series(report: &Report, study: &CpuStudy) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = cpu_plans()
        .into_iter()
        .map(|(row, _)| {
            let points = report
                .sizes()
                .into_iter()
                .filter_map(|n| Some((n as f64, rate(study, row, n)?)))
                .collect();
            (format!("CPU {row}"), points)
        })
        .collect();
    let device = report
        .sizes()
        .into_iter()
        .filter_map(|n| Some((n as f64, device_best(report, n)?.1)))
        .collect();
    series.push((format!("{} best plan", report.device_name), device));
    let ndarray = report
        .sizes()
        .into_iter()
        .filter_map(|n| {
            Some((
                n as f64,
                report.burn_profile("burn ndarray", n)?.env_steps_per_s,
            ))
        })
        .collect();
    series.push(("burn ndarray".into(), ndarray));
    series
}
