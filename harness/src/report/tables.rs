//! The report's tables, each built once from a [`Report`].

use crate::cells::Over;
use crate::reproduce::{AblationCell, Report};
use crate::studies::ablation::ladder;

use super::table::{Cell, Column, Format, Shown, Table, factor_cells, factor_columns};

/// Every table of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Tables {
    /// Copy bandwidth, peak arithmetic, launch costs.
    pub device: Table,
    /// The study's ladder at every size.
    pub ablation: Table,
    /// Each rung's factor, modelled beside the measurement.
    pub rungs: Table,
    /// `fused` against hand-written, timed in turns.
    pub in_turns: Table,
    /// Every ladder row against eager.
    pub vs_eager: Table,
    /// Elementwise workloads.
    pub workloads: Table,
    /// The transformer tail's partitions.
    pub tail: Table,
    /// Busy fraction of eager and fused.
    pub busy: Table,
    /// Compile time and break-even against eager.
    pub break_even: Table,
    /// burn's backends.
    pub burn: Table,
    /// burn against cartfuse.
    pub burn_vs_cartfuse: Table,
    /// The host roofline.
    pub cpu_roofline: Table,
    /// Every plan on the CPU.
    pub cpu_plans: Table,
    /// The CPU against the device and burn `NdArray`.
    pub cpu_vs_device: Table,
    /// Each plan on the device against the same plan on the CPU.
    pub cpu_crossovers: Table,
    /// Every environment under every plan (`--env all`).
    pub env_plans: Option<Table>,
    /// Fused against eager per environment (`--env all`).
    pub env_fusion: Option<Table>,
    /// Policy rollouts, host against fused (when measured).
    pub policy_rollout: Option<Table>,
    /// PPO runs to the target (when measured).
    pub policy_training: Option<Table>,
}

impl Tables {
    /// Builds every table.
    pub fn new(report: &Report) -> Self {
        Self {
            device: device(report),
            ablation: ablation(report),
            rungs: super::rungs::table(report),
            in_turns: super::turns::table(report),
            vs_eager: vs_eager(report),
            workloads: workloads(report),
            tail: tail(report),
            busy: busy(report),
            break_even: break_even(report),
            burn: burn(report),
            burn_vs_cartfuse: burn_vs_cartfuse(report),
            cpu_roofline: super::cpu::roofline(report),
            cpu_plans: super::cpu::plans(report),
            cpu_vs_device: super::cpu::vs_device(report),
            cpu_crossovers: super::cpu::crossovers(report),
            env_plans: report.envs.as_ref().map(super::envs::plans),
            policy_rollout: (!report.policy.is_empty())
                .then(|| super::policy::rollouts(&report.policy)),
            policy_training: (report.policy.iter().any(|s| !s.training.is_empty()))
                .then(|| super::policy::training(&report.policy)),
            env_fusion: report.envs.as_ref().map(super::envs::fusion),
        }
    }

    /// Every table, in report order.
    pub fn all(&self) -> Vec<&Table> {
        let fixed = [
            &self.device,
            &self.ablation,
            &self.rungs,
            &self.in_turns,
            &self.vs_eager,
            &self.workloads,
            &self.tail,
            &self.busy,
            &self.break_even,
            &self.burn,
            &self.burn_vs_cartfuse,
            &self.cpu_roofline,
            &self.cpu_plans,
            &self.cpu_vs_device,
            &self.cpu_crossovers,
        ];
        fixed
            .into_iter()
            .chain(self.env_plans.as_ref())
            .chain(self.env_fusion.as_ref())
            .chain(self.policy_rollout.as_ref())
            .chain(self.policy_training.as_ref())
            .collect()
    }
}

/// The column header of the compulsory bytes a plan's kernels bind.
const MODEL_BYTES: &str = "(compulsory-traffic model)";

fn n_cell(n: usize) -> Cell {
    Cell::Number(n as f64, Format::Fixed(0))
}

fn device(report: &Report) -> Table {
    let mut table = Table::new(
        "Device roofline",
        "device.csv",
        vec![
            Column::new("quantity", ""),
            Column::new("measured", ""),
            Column::new("unit", "").shown(Shown::CsvOnly),
        ],
    );
    let (r, d) = (&report.roofline, &report.dispatch);
    let rows = [
        (
            "copy bandwidth (read + write kernel)",
            r.copy_gbps,
            Format::FixedUnit(2, "GB/s"),
            "GB/s",
        ),
        (
            "bytes moved per copy launch",
            r.copy_bytes as f64,
            Format::Mebibytes,
            "bytes",
        ),
        (
            "peak arithmetic (chains of multiply-adds)",
            r.gflops,
            Format::FixedUnit(2, "GFLOP/s"),
            "GFLOP/s",
        ),
        (
            "ridge point",
            r.ridge_flops_per_byte,
            Format::FixedUnit(2, "FLOP/byte"),
            "FLOP/byte",
        ),
        ("empty launch", d.empty_launch_s, Format::Seconds, "s"),
        (
            "1-element launch",
            d.one_element_launch_s,
            Format::Seconds,
            "s",
        ),
    ];
    for (quantity, value, format, unit) in rows {
        table.push(vec![
            Cell::text(quantity),
            Cell::Number(value, format),
            Cell::text(unit),
        ]);
    }
    match &r.driver_copy {
        Ok(driver) => {
            table.push(vec![
                Cell::text(format!(
                    "the driver's copy of the same bytes ({})",
                    driver.call
                )),
                Cell::Number(driver.gbps, Format::FixedUnit(2, "GB/s")),
                Cell::text("GB/s"),
            ]);
            table.push(vec![
                Cell::text("copy kernel / driver's copy"),
                Cell::number(r.kernel_over_driver(), Format::Percent),
                Cell::text("fraction"),
            ]);
            table.push(vec![
                Cell::text("copy roof (the faster copy; the shares below are of it)"),
                Cell::Number(r.roof_gbps(), Format::FixedUnit(2, "GB/s")),
                Cell::text("GB/s"),
            ]);
        }
        Err(why) => table.push(vec![
            Cell::text("the driver's copy of the same bytes"),
            Cell::text(format!("not measured: {why}")),
            Cell::text("GB/s"),
        ]),
    }
    table
}

fn ablation(report: &Report) -> Table {
    let mut columns = vec![
        Column::new("n", "").shown(Shown::GroupBy),
        Column::new("row", ""),
        Column::new("launches/step", ""),
        Column::new("study's kernels/step", ""),
        Column::new(format!("bytes/env-step {MODEL_BYTES}"), "bytes"),
        Column::new("time/step (median round)", "s"),
        Column::new("fastest round", "s").shown(Shown::CsvOnly),
        Column::new("slowest round", "s").shown(Shown::CsvOnly),
        Column::new("env-steps/s", ""),
        Column::new("JIT compile", "s"),
        Column::new("rounds", ""),
    ];
    columns.extend(factor_columns("vs previous"));
    columns.extend(factor_columns("vs xla-default"));
    columns.extend(factor_columns("vs eager").map(|c| c.shown(Shown::CsvOnly)));
    columns.extend([
        Column::new("study", ""),
        Column::new("skipped", "").shown(Shown::WhenPresent),
    ]);
    let mut table = Table::new(
        "The study's CartPole ablation, replayed",
        "ablation.csv",
        columns,
    );
    let row_of = |label: &str| ladder().into_iter().find(|row| row.label == label);
    let study = |label: &str| row_of(label).map_or("", |row| row.study);
    let study_launches = |label: &str| {
        row_of(label)
            .and_then(|row| row.study_launches)
            .map(f64::from)
    };
    let mut cells: Vec<&AblationCell> = report.ablation.iter().collect();
    let order = |n: usize| report.eager.iter().position(|c| c.num_envs == n);
    cells.sort_by_key(|c| order(c.num_envs));
    for cell in cells {
        let p = cell.profile.as_ref().ok();
        let num = |value: Option<f64>, format| Cell::number(value, format);
        let mut row = vec![
            n_cell(cell.num_envs),
            Cell::text(&cell.row),
            num(p.map(|p| p.launches_per_step), Format::Fixed(1)),
            num(study_launches(&cell.row), Format::Fixed(0)),
            num(p.map(|p| p.bytes_per_env_step), Format::FixedUnit(1, "B")),
            num(p.map(|p| p.step_s_median), Format::Seconds),
            num(p.map(|p| p.step_s_min), Format::Seconds),
            num(p.map(|p| p.step_s_max), Format::Seconds),
            num(p.map(|p| p.env_steps_per_s), Format::Si),
            num(p.map(|p| p.compile_s), Format::Millis),
            Cell::Number(cell.rounds as f64, Format::Fixed(0)),
        ];
        for over in [Over::Previous, Over::XlaDefault, Over::Eager] {
            row.extend(factor_cells(cell.factor(over)));
        }
        row.extend([
            Cell::text(study(&cell.row)),
            Cell::text(
                cell.profile
                    .as_ref()
                    .err()
                    .map_or("", |s| s.reason.as_str()),
            ),
        ]);
        table.push(row);
    }
    table
}

fn vs_eager(report: &Report) -> Table {
    let mut columns = vec![
        Column::new("n", ""),
        Column::new("rounds", ""),
        Column::new("eager launches/step", "").shown(Shown::CsvOnly),
        Column::new(format!("eager bytes/env-step {MODEL_BYTES}"), "bytes").shown(Shown::CsvOnly),
        Column::new("eager time/step", "s"),
    ];
    columns.extend(ladder().iter().flat_map(|row| factor_columns(row.label)));
    let mut table = Table::new("Every plan against eager", "vs_eager.csv", columns);
    for eager in &report.eager {
        let n = eager.num_envs;
        let p = eager.profile.as_ref().ok();
        let mut row = vec![
            n_cell(n),
            Cell::Number(eager.rounds as f64, Format::Fixed(0)),
            Cell::number(p.map(|p| p.launches_per_step), Format::Fixed(1)),
            Cell::number(p.map(|p| p.bytes_per_env_step), Format::Fixed(1)),
            Cell::number(p.map(|p| p.step_s_median), Format::Seconds),
        ];
        row.extend(ladder().iter().flat_map(|r| {
            factor_cells(
                report
                    .ablation
                    .iter()
                    .find(|c| c.row == r.label && c.num_envs == n)
                    .and_then(|c| c.factor(Over::Eager)),
            )
        }));
        table.push(row);
    }
    table
}

fn workloads(report: &Report) -> Table {
    let mut table = Table::new(
        "Elementwise roofline workloads",
        "workloads.csv",
        vec![
            Column::new("workload", ""),
            Column::new("plan", ""),
            Column::new("size", "bytes"),
            Column::new("lanes", "").shown(Shown::CsvOnly),
            Column::new("lanes/thread", ""),
            Column::new("time/step", "s"),
            Column::new(format!("bytes/step {MODEL_BYTES}"), "bytes").shown(Shown::CsvOnly),
            Column::new("FLOPs/step", "").shown(Shown::CsvOnly),
            Column::new("compulsory bytes / time", "GB/s"),
            Column::new("FLOPs / time", "GFLOP/s"),
            Column::new("FLOP/byte", ""),
            Column::new("JIT compile", "s").shown(Shown::CsvOnly),
        ],
    );
    for point in &report.workloads {
        let p = &point.profile;
        table.push(vec![
            Cell::text(&point.workload),
            Cell::text(&p.plan),
            Cell::Number(point.size_bytes as f64, Format::Mebibytes),
            Cell::Number(p.lanes as f64, Format::Fixed(0)),
            Cell::Number(p.vector_width as f64, Format::Fixed(0)),
            Cell::Number(p.step_s_median, Format::Seconds),
            Cell::Number(p.bytes_per_step, Format::Bytes),
            Cell::Number(p.flops_per_step, Format::Si),
            Cell::Number(p.gbps, Format::Fixed(2)),
            Cell::Number(p.gflops, Format::Fixed(2)),
            Cell::Number(p.flops_per_step / p.bytes_per_step, Format::Fixed(2)),
            Cell::Number(p.compile_s, Format::Millis),
        ]);
    }
    table
}

fn tail(report: &Report) -> Table {
    let mut table = Table::new(
        "Transformer tail: LayerNorm -> GELU -> Dropout -> residual add",
        "transformer_tail.csv",
        vec![
            Column::new("kernels", ""),
            Column::new("launches/step", "").shown(Shown::CsvOnly),
            Column::new("intermediates eliminated (from the plans)", ""),
            Column::new(format!("bytes/step {MODEL_BYTES}"), "bytes"),
            Column::new("FLOPs/step", "").shown(Shown::CsvOnly),
            Column::new("FLOP/byte", ""),
            Column::new("FLOPs / time", "GFLOP/s"),
            Column::new("time/step", "s"),
            Column::new("speedup over 4 kernels", ""),
            Column::new("bytes saved (ledger)", "bytes"),
            Column::new("bytes saved (model)", "bytes"),
        ],
    );
    for t in &report.tail {
        let p = &t.profile;
        table.push(vec![
            Cell::text(&t.partition),
            Cell::Number(p.launches_per_step, Format::Fixed(1)),
            Cell::Number(t.eliminated_intermediates as f64, Format::Fixed(0)),
            Cell::Number(p.bytes_per_step, Format::Bytes),
            Cell::Number(p.flops_per_step, Format::Si),
            Cell::Number(p.flops_per_step / p.bytes_per_step, Format::Fixed(2)),
            Cell::Number(p.gflops, Format::Fixed(2)),
            Cell::Number(p.step_s_median, Format::Seconds),
            Cell::Number(t.speedup, Format::Ratio),
            Cell::Number(t.measured_saving_bytes, Format::Bytes),
            Cell::Number(t.analytic_saving_bytes, Format::Bytes),
        ]);
    }
    table
}

fn busy(report: &Report) -> Table {
    let mut table = Table::new(
        "Dispatch tax and compile break-even",
        "busy_fraction.csv",
        vec![
            Column::new("plan", ""),
            Column::new("n", ""),
            Column::new("launches/step", ""),
            Column::new("time/step", "s"),
            Column::new("busy fraction (model)", ""),
        ],
    );
    for b in &report.busy {
        table.push(vec![
            Cell::text(&b.plan),
            n_cell(b.num_envs),
            Cell::Number(b.launches_per_step, Format::Fixed(1)),
            Cell::Number(b.step_s, Format::Seconds),
            Cell::Number(b.busy_fraction, Format::Percent),
        ]);
    }
    table
}

fn break_even(report: &Report) -> Table {
    let mut table = Table::new(
        "Compile break-even against eager",
        "break_even.csv",
        vec![
            Column::new("plan", ""),
            Column::new("against", "").shown(Shown::CsvOnly),
            Column::new("n", ""),
            Column::new("JIT compile", "s"),
            Column::new("break-even steps", ""),
            Column::new("note", "").shown(Shown::WhenPresent),
        ],
    );
    for b in &report.break_even {
        table.push(vec![
            Cell::text(&b.plan),
            Cell::text(&b.against),
            n_cell(b.num_envs),
            Cell::Number(b.compile_s, Format::Millis),
            Cell::number(b.steps, Format::Fixed(1)),
            Cell::text(if b.steps.is_some() {
                String::new()
            } else {
                format!("not faster than {}", b.against)
            }),
        ]);
    }
    table
}

fn burn(report: &Report) -> Table {
    let launches = match report.launch_probe_envs {
        Some(n) => format!("launches/step (CubeCL log, n = {n})"),
        None => "launches/step (CubeCL log, not counted)".into(),
    };
    let mut table = Table::new(
        "burn's fusion backend on the same step",
        "burn.csv",
        vec![
            Column::new("backend", ""),
            Column::new("n", ""),
            Column::new("time/step", "s"),
            Column::new("fastest repeat", "s").shown(Shown::CsvOnly),
            Column::new("slowest repeat", "s").shown(Shown::CsvOnly),
            Column::new("env-steps/s", ""),
            Column::new(launches, ""),
            Column::new("fused kernels/step", ""),
            Column::new("ops fused/step", ""),
            Column::new("ops unfused/step", ""),
            Column::new("first step", "s"),
            Column::new("warm-up steps", ""),
            Column::new("warm-up", "s"),
            Column::new("plans settled", ""),
        ],
    );
    for b in &report.burn {
        let opt = |v: Option<f64>| Cell::number(v, Format::Fixed(1));
        table.push(vec![
            Cell::text(&b.backend),
            n_cell(b.num_envs),
            Cell::Number(b.step_s_median, Format::Seconds),
            Cell::Number(b.step_s_min, Format::Seconds),
            Cell::Number(b.step_s_max, Format::Seconds),
            Cell::Number(b.env_steps_per_s, Format::Si),
            opt(b.launches_per_step),
            opt(b.fused_blocks_per_step),
            opt(b.fused_ops_per_step),
            opt(b.unfused_ops_per_step),
            Cell::Number(b.first_step_s, Format::Seconds),
            Cell::Number(b.warmup_steps as f64, Format::Fixed(0)),
            Cell::Number(b.warmup_s, Format::Seconds),
            Cell::text(if b.settled { "yes" } else { "no" }),
        ]);
    }
    table
}

fn burn_vs_cartfuse(report: &Report) -> Table {
    let mut table = Table::new(
        "burn against cartfuse",
        "burn_vs_cartfuse.csv",
        vec![
            Column::new("n", ""),
            Column::new(
                crate::studies::burn::BurnBackend::names_on(&report.runtime).0,
                "s",
            ),
            Column::new("cartfuse fused", "s"),
            Column::new("burn / fused", ""),
            Column::new("cartfuse hand-written", "s"),
            Column::new("burn / hand-written", ""),
            Column::new("burn unfused / cartfuse eager", ""),
        ],
    );
    for eager in &report.eager {
        let n = eager.num_envs;
        let burn = |name: &str| report.burn_time(name, n);
        let (fusion_name, unfused_name) =
            crate::studies::burn::BurnBackend::names_on(&report.runtime);
        let (fusion, unfused) = (burn(fusion_name), burn(unfused_name));
        let (fused, hand) = (
            report.step_time("fused", n),
            report.step_time("hand-written", n),
        );
        let div = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a / b);
        table.push(vec![
            n_cell(n),
            Cell::number(fusion, Format::Seconds),
            Cell::number(fused, Format::Seconds),
            Cell::number(div(fusion, fused), Format::Ratio),
            Cell::number(hand, Format::Seconds),
            Cell::number(div(fusion, hand), Format::Ratio),
            Cell::number(div(unfused, report.step_time("eager", n)), Format::Ratio),
        ]);
    }
    table
}
