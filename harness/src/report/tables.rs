//! The report's tables, each built once from a [`Report`] and defined as its columns (see
//! [`Table::of`]).

use crate::cells::Over;
use crate::reproduce::{AblationCell, Report, Section};
use crate::studies::ablation::ladder;
use crate::studies::burn::BurnBackend;

use super::table::{Cell, Column, Format, Shown, Table, col, quantities};

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
    /// The CPU side (when measured).
    pub cpu: Option<super::cpu::CpuTables>,
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
            cpu: super::cpu::CpuTables::new(report),
            env_plans: report.envs.as_ref().map(super::envs::plans),
            policy_rollout: (!report.policy.is_empty())
                .then(|| super::policy::rollouts(&report.policy)),
            policy_training: (report.policy.iter().any(|s| !s.training.is_empty()))
                .then(|| super::policy::training(&report.policy)),
            env_fusion: report.envs.as_ref().map(super::envs::fusion),
        }
    }

    /// The section whose measurement fills each table of every run, in the order the report
    /// shows them (`None`: the device roofline, measured before any section). The one list
    /// that says which tables a partial report shows and writes.
    fn fixed(&self) -> [(Option<Section>, &Table); 11] {
        [
            (None, &self.device),
            (Some(Section::Ablation), &self.ablation),
            (Some(Section::Ablation), &self.rungs),
            (Some(Section::Ablation), &self.in_turns),
            (Some(Section::Ablation), &self.vs_eager),
            (Some(Section::Workloads), &self.workloads),
            (Some(Section::Tail), &self.tail),
            (Some(Section::Ablation), &self.busy),
            (Some(Section::Ablation), &self.break_even),
            (Some(Section::Burn), &self.burn),
            (Some(Section::Burn), &self.burn_vs_cartfuse),
        ]
    }

    /// Whether `report` measured the section that fills `table`, one of this set's fixed
    /// tables (the optional ones are `None` until measured).
    ///
    /// # Panics
    /// If `table` is not a field of `self`: a programming error, caught by the tests that
    /// render every report.
    pub fn measured(&self, report: &Report, table: &Table) -> bool {
        let (section, _) = self
            .fixed()
            .into_iter()
            .find(|(_, fixed)| std::ptr::eq(*fixed, table))
            .expect("the table is one of this report's fixed tables");
        section.is_none_or(|s| report.measured(s))
    }

    /// The tables of the sections `report` measured (every table of a finished report), in
    /// the order the report shows them.
    pub fn all(&self, report: &Report) -> Vec<&Table> {
        self.fixed()
            .into_iter()
            .filter(|(section, _)| section.is_none_or(|s| report.measured(s)))
            .map(|(_, table)| table)
            .chain(self.cpu.iter().flat_map(super::cpu::CpuTables::all))
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

/// A column in the CSV only.
fn csv_only(name: impl Into<String>, unit: &'static str) -> Column {
    col(name, unit).shown(Shown::CsvOnly)
}

fn device(report: &Report) -> Table {
    let (r, d) = (&report.roofline, &report.dispatch);
    let gbps = |value| Cell::Number(value, Format::FixedUnit(2, "GB/s"));
    let number = |quantity: &str, value, format, unit| {
        (quantity.to_string(), Cell::Number(value, format), unit)
    };
    let mut rows = vec![
        number(
            "copy bandwidth (read + write kernel)",
            r.copy_gbps,
            Format::FixedUnit(2, "GB/s"),
            "GB/s",
        ),
        number(
            "bytes moved per copy launch",
            r.copy_bytes as f64,
            Format::Mebibytes,
            "bytes",
        ),
        number(
            "peak arithmetic (chains of multiply-adds)",
            r.gflops,
            Format::FixedUnit(2, "GFLOP/s"),
            "GFLOP/s",
        ),
        number(
            "ridge point",
            r.ridge_flops_per_byte,
            Format::FixedUnit(2, "FLOP/byte"),
            "FLOP/byte",
        ),
        number("empty launch", d.empty_launch_s, Format::Seconds, "s"),
        number(
            "1-element launch",
            d.one_element_launch_s,
            Format::Seconds,
            "s",
        ),
    ];
    let driver = "the driver's copy of the same bytes";
    match &r.driver_copy {
        Ok(copy) => rows.extend([
            (format!("{driver} ({})", copy.call), gbps(copy.gbps), "GB/s"),
            (
                "copy kernel / driver's copy".into(),
                Cell::number(r.kernel_over_driver(), Format::Percent),
                "fraction",
            ),
            (
                "copy roof (the faster copy; the shares below are of it)".into(),
                gbps(r.roof_gbps()),
                "GB/s",
            ),
        ]),
        Err(why) => rows.push((
            driver.into(),
            Cell::text(format!("not measured: {why}")),
            "GB/s",
        )),
    }
    quantities("Device roofline", "device.csv", rows)
}

fn ablation(report: &Report) -> Table {
    let row_of = |label: &str| ladder().into_iter().find(|row| row.label == label);
    let mut cells: Vec<&AblationCell> = report.ablation.iter().collect();
    let order = |n: usize| report.eager.iter().position(|c| c.num_envs == n);
    cells.sort_by_key(|c| order(c.num_envs));
    let title = "The study's CartPole ablation, replayed";
    Table::of(title, "ablation.csv", cells)
        .col(col("n", "").shown(Shown::GroupBy), |c| n_cell(c.num_envs))
        .col(col("row", ""), |c| Cell::text(&c.row))
        .num(col("launches/step", ""), Format::Fixed(1), |c| {
            c.ran().map(|p| p.launches_per_step)
        })
        .num(
            col("study's kernels/step", ""),
            Format::Fixed(0),
            move |c| {
                row_of(&c.row)
                    .and_then(|row| row.study_launches)
                    .map(f64::from)
            },
        )
        .num(
            col(format!("bytes/env-step {MODEL_BYTES}"), "bytes"),
            Format::FixedUnit(1, "B"),
            |c| c.ran().map(|p| p.bytes_per_env_step),
        )
        .num(col("time/step (median round)", "s"), Format::Seconds, |c| {
            c.ran().map(|p| p.step_s_median)
        })
        .num(csv_only("fastest round", "s"), Format::Seconds, |c| {
            c.ran().map(|p| p.step_s_min)
        })
        .num(csv_only("slowest round", "s"), Format::Seconds, |c| {
            c.ran().map(|p| p.step_s_max)
        })
        .num(col("env-steps/s", ""), Format::Si, |c| {
            c.ran().map(|p| p.env_steps_per_s)
        })
        .num(col("JIT compile", "s"), Format::Millis, |c| {
            c.ran().map(|p| p.compile_s)
        })
        .num(col("rounds", ""), Format::Fixed(0), |c| c.rounds as f64)
        .factor(col("vs previous", ""), |c| c.factor(Over::Previous))
        .factor(col("vs xla-default", ""), |c| c.factor(Over::XlaDefault))
        .factor(csv_only("vs eager", ""), |c| c.factor(Over::Eager))
        .col(col("study", ""), move |c| {
            Cell::text(row_of(&c.row).map_or("", |row| row.study))
        })
        .col(col("skipped", "").shown(Shown::WhenPresent), |c| {
            Cell::skipped(&c.profile)
        })
        .build()
}

fn vs_eager(report: &Report) -> Table {
    let table = Table::of("Every plan against eager", "vs_eager.csv", &report.eager)
        .col(col("n", ""), |e| n_cell(e.num_envs))
        .num(col("rounds", ""), Format::Fixed(0), |e| e.rounds as f64)
        .num(csv_only("eager launches/step", ""), Format::Fixed(1), |e| {
            e.ran().map(|p| p.launches_per_step)
        })
        .num(
            csv_only(format!("eager bytes/env-step {MODEL_BYTES}"), "bytes"),
            Format::Fixed(1),
            |e| e.ran().map(|p| p.bytes_per_env_step),
        )
        .num(col("eager time/step", "s"), Format::Seconds, |e| {
            e.ran().map(|p| p.step_s_median)
        });
    let factors = ladder().into_iter().fold(table, |table, row| {
        table.factor(col(row.label, ""), move |e| {
            report
                .cell(row.label, e.num_envs)
                .and_then(|c| c.factor(Over::Eager))
        })
    });
    factors.build()
}

fn workloads(report: &Report) -> Table {
    let title = "Elementwise roofline workloads";
    Table::of(title, "workloads.csv", &report.workloads)
        .col(col("workload", ""), |w| Cell::text(&w.workload))
        .col(col("plan", ""), |w| Cell::text(&w.profile.plan))
        .num(col("size", "bytes"), Format::Mebibytes, |w| {
            w.size_bytes as f64
        })
        .num(csv_only("lanes", ""), Format::Fixed(0), |w| {
            w.profile.lanes as f64
        })
        .num(col("lanes/thread", ""), Format::Fixed(0), |w| {
            w.profile.vector_width as f64
        })
        .num(col("time/step", "s"), Format::Seconds, |w| {
            w.profile.step_s_median
        })
        .num(
            csv_only(format!("bytes/step {MODEL_BYTES}"), "bytes"),
            Format::Bytes,
            |w| w.profile.bytes_per_step,
        )
        .num(csv_only("FLOPs/step", ""), Format::Si, |w| {
            w.profile.flops_per_step
        })
        .num(
            col("compulsory bytes / time", "GB/s"),
            Format::Fixed(2),
            |w| w.profile.gbps,
        )
        .num(col("FLOPs / time", "GFLOP/s"), Format::Fixed(2), |w| {
            w.profile.gflops
        })
        .num(col("FLOP/byte", ""), Format::Fixed(2), |w| {
            w.profile.flops_per_step / w.profile.bytes_per_step
        })
        .num(csv_only("JIT compile", "s"), Format::Millis, |w| {
            w.profile.compile_s
        })
        .build()
}

fn tail(report: &Report) -> Table {
    let title = "Transformer tail: LayerNorm -> GELU -> Dropout -> residual add";
    Table::of(title, "transformer_tail.csv", &report.tail)
        .col(col("kernels", ""), |t| Cell::text(&t.partition))
        .num(csv_only("launches/step", ""), Format::Fixed(1), |t| {
            t.profile.launches_per_step
        })
        .num(
            col("intermediates eliminated (from the plans)", ""),
            Format::Fixed(0),
            |t| t.eliminated_intermediates as f64,
        )
        .num(
            col(format!("bytes/step {MODEL_BYTES}"), "bytes"),
            Format::Bytes,
            |t| t.profile.bytes_per_step,
        )
        .num(csv_only("FLOPs/step", ""), Format::Si, |t| {
            t.profile.flops_per_step
        })
        .num(col("FLOP/byte", ""), Format::Fixed(2), |t| {
            t.profile.flops_per_step / t.profile.bytes_per_step
        })
        .num(col("FLOPs / time", "GFLOP/s"), Format::Fixed(2), |t| {
            t.profile.gflops
        })
        .num(col("time/step", "s"), Format::Seconds, |t| {
            t.profile.step_s_median
        })
        .num(col("speedup over 4 kernels", ""), Format::Ratio, |t| {
            t.speedup
        })
        .num(col("bytes saved (ledger)", "bytes"), Format::Bytes, |t| {
            t.measured_saving_bytes
        })
        .num(col("bytes saved (model)", "bytes"), Format::Bytes, |t| {
            t.analytic_saving_bytes
        })
        .build()
}

fn busy(report: &Report) -> Table {
    let title = "Dispatch tax and compile break-even";
    Table::of(title, "busy_fraction.csv", &report.busy)
        .col(col("plan", ""), |b| Cell::text(&b.plan))
        .col(col("n", ""), |b| n_cell(b.num_envs))
        .num(col("launches/step", ""), Format::Fixed(1), |b| {
            b.launches_per_step
        })
        .num(col("time/step", "s"), Format::Seconds, |b| b.step_s)
        .num(col("busy fraction (model)", ""), Format::Percent, |b| {
            b.busy_fraction
        })
        .build()
}

fn break_even(report: &Report) -> Table {
    let title = "Compile break-even against eager";
    Table::of(title, "break_even.csv", &report.break_even)
        .col(col("plan", ""), |b| Cell::text(&b.plan))
        .col(csv_only("against", ""), |b| Cell::text(&b.against))
        .col(col("n", ""), |b| n_cell(b.num_envs))
        .num(col("JIT compile", "s"), Format::Millis, |b| b.compile_s)
        .num(col("break-even steps", ""), Format::Fixed(1), |b| b.steps)
        .col(col("note", "").shown(Shown::WhenPresent), |b| {
            match b.steps {
                Some(_) => Cell::text(""),
                None => Cell::text(format!("not faster than {}", b.against)),
            }
        })
        .build()
}

fn burn(report: &Report) -> Table {
    let launches = match report.launch_probe_envs {
        Some(n) => format!("launches/step (CubeCL log, n = {n})"),
        None => "launches/step (CubeCL log, not counted)".into(),
    };
    let title = "burn's fusion backend on the same step";
    Table::of(title, "burn.csv", &report.burn)
        .col(col("backend", ""), |b| Cell::text(&b.backend))
        .col(col("n", ""), |b| n_cell(b.num_envs))
        .num(col("time/step", "s"), Format::Seconds, |b| b.step_s_median)
        .num(csv_only("fastest repeat", "s"), Format::Seconds, |b| {
            b.step_s_min
        })
        .num(csv_only("slowest repeat", "s"), Format::Seconds, |b| {
            b.step_s_max
        })
        .num(col("env-steps/s", ""), Format::Si, |b| b.env_steps_per_s)
        .num(col(launches, ""), Format::Fixed(1), |b| b.launches_per_step)
        .num(col("fused kernels/step", ""), Format::Fixed(1), |b| {
            b.fused_blocks_per_step
        })
        .num(col("ops fused/step", ""), Format::Fixed(1), |b| {
            b.fused_ops_per_step
        })
        .num(col("ops unfused/step", ""), Format::Fixed(1), |b| {
            b.unfused_ops_per_step
        })
        .num(col("first step", "s"), Format::Seconds, |b| b.first_step_s)
        .num(col("warm-up steps", ""), Format::Fixed(0), |b| {
            b.warmup_steps as f64
        })
        .num(col("warm-up", "s"), Format::Seconds, |b| b.warmup_s)
        .col(col("plans settled", ""), |b| {
            Cell::text(if b.settled { "yes" } else { "no" })
        })
        .build()
}

fn burn_vs_cartfuse(report: &Report) -> Table {
    let (fusion, unfused) = BurnBackend::names_on(&report.runtime);
    let burn = move |name, n| report.burn_time(name, n);
    let ours = move |row, n| report.step_time(row, n);
    let over = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a / b);
    let title = "burn against cartfuse";
    Table::of(title, "burn_vs_cartfuse.csv", report.sizes())
        .col(col("n", ""), |&n| n_cell(n))
        .num(col(fusion, "s"), Format::Seconds, move |&n| burn(fusion, n))
        .num(col("cartfuse fused", "s"), Format::Seconds, move |&n| {
            ours("fused", n)
        })
        .num(col("burn / fused", ""), Format::Ratio, move |&n| {
            over(burn(fusion, n), ours("fused", n))
        })
        .num(
            col("cartfuse hand-written", "s"),
            Format::Seconds,
            move |&n| ours("hand-written", n),
        )
        .num(col("burn / hand-written", ""), Format::Ratio, move |&n| {
            over(burn(fusion, n), ours("hand-written", n))
        })
        .num(
            col("burn unfused / cartfuse eager", ""),
            Format::Ratio,
            move |&n| over(burn(unfused, n), ours("eager", n)),
        )
        .build()
}
