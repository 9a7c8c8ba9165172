//! Writing a [`Report`]: `report.md` (tables, commentary, plots), `report.json` (every
//! number, units in the field names) and one CSV per table.
//!
//! Every table is a [`Table`] built once from the report ([`tables`]) and rendered to both
//! Markdown and CSV; every sentence of commentary is computed from the same numbers
//! ([`commentary`]) and names the device they were measured on.

pub mod commentary;
pub mod cpu;
pub mod envs;
pub mod policy;
pub mod roof;
pub mod rungs;
pub mod table;
pub mod tables;
pub mod turns;

use std::path::Path;

use crate::reproduce::{Report, ReproduceMode, Section};
use crate::studies::ablation::ladder;

pub use table::{Cell, Column, Format, Shown, Table};

/// Why the report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// JSON encoding failed.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

fn write(dir: &Path, name: &str, text: &str) -> Result<(), WriteError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|source| WriteError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Writes `report.md`, `report.json` and the CSVs into `dir` (which must exist).
pub fn write_report(
    report: &Report,
    dir: &Path,
    plots: &[(String, String)],
) -> Result<(), WriteError> {
    write(dir, "report.json", &serde_json::to_string_pretty(report)?)?;
    let tables = tables::Tables::new(report);
    for table in tables.all(report) {
        write(dir, &table.file, &table.csv())?;
    }
    write(dir, "report.md", &markdown(report, &tables, plots))
}

/// The whole `report.md`.
pub fn markdown(report: &Report, tables: &tables::Tables, plots: &[(String, String)]) -> String {
    let mut md = String::from(
        "# cartfuse: reproducing \"Operator Fusion in XLA\" (Snider & Liang, 2023) on CartPole\n\n",
    );
    md += &format!(
        "Device: **{}** ({}). Built with {}. Every number below was measured in this run on {}, \
         except the study's reported factors (quoted) and the quantities marked *model*.\n\n",
        report.device,
        report.runtime,
        report
            .versions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        report.device_name,
    );
    if let Some(section) = report.stopped_at {
        md += &format!(
            "**This report is partial**: it was written {:.0} s into the run, as the measurement \
             of {} began. A run that finishes replaces it with the whole report; if it stays as \
             it is, the run stopped there (a timeout or an error), and that section and the \
             ones after it hold no numbers.\n\n",
            report.elapsed_s,
            section.describe()
        );
    }
    md += &timing_paragraph(report);
    md += &format!(
        "## {}\n\n{}\n",
        tables.device.title,
        tables.device.markdown()
    );

    md += &measured(report, tables, &tables.ablation, || {
        let mut md = String::new();
        md += &format!("## {}\n\n", tables.ablation.title);
        md += "Each row changes one thing from the row before (NextStep autoreset, CartPole-v1). \
               At each n eager and every row were built and warmed, then timed one repeat each \
               per round, in an order that rotates between rounds; each factor (`vs previous`, \
               `vs xla-default`, and `vs eager` in the CSV) is the median of the per-round \
               ratios, with the slowest and the fastest round in brackets.\n\n";
        for row in ladder() {
            md += &format!(
                "- **{}**: {}. Study: {}.\n",
                row.label, row.change, row.study
            );
        }
        md += "\n";
        md += &tables.ablation.markdown();
        md += "### Where the measurement agrees with the study, and where it does not\n\n";
        md += &bullets(&commentary::ablation(report));
        md += &format!(
            "### {}\n\nA *model* beside the measurement: a step costs its launches times the \
             launch cost plus its compulsory bytes over the copy bandwidth, both measured above. \
             The launch-bound limit is the factor if launches were the whole step, the \
             bandwidth-bound limit the factor if bytes were; the model sits between them by \
             this device's balance of the two. `study needs launch share`: where the study's \
             factor lies between the limits, the launch share of the step at which the model \
             gives it.{}\n\n{}\n",
            tables.rungs.title,
            report.cache_bytes.map_or(String::new(), |c| format!(
                " The device's last-level cache holds {} (a step whose bytes fit it reads and \
                 writes them faster than the copy bandwidth says).",
                table::bytes(c as f64)
            )),
            tables.rungs.markdown()
        );
        md += &bullets(&rungs::commentary(report));
        if !report.in_turns.is_empty() {
            md += &format!(
                "### {}\n\nThe study's target for a generated kernel: within 10% of the \
                 hand-written one at every n. Both are rows of the tables above, so each round \
                 timed them in turns with the other plans ({} at each n on the device, the \
                 `rounds` column); the verdict is the median round's ratio (time of hand-written \
                 / time of fused: above 1, fused is faster), on the device and on the native \
                 CPU.\n\n{}\n",
                tables.in_turns.title,
                rounds_text(&report.in_turns),
                tables.in_turns.markdown()
            );
            md += &bullets(&turns::commentary(report));
        }

        md += &format!(
            "## {}\n\nTime-per-step ratio eager / plan (higher is faster), the median round with \
             the slowest and the fastest round in brackets.\n\n{}\n",
            tables.vs_eager.title,
            tables.vs_eager.markdown()
        );

        md
    });
    md += &measured(report, tables, &tables.workloads, || {
        let mut md = String::new();
        md += &format!(
            "## {}\n\nSize is the fused kernel's working set (input + output). Eager writes and re-reads \
             every intermediate. Bytes are the compulsory traffic of each launched kernel (a *model*: \
             every bound buffer read or written once); FLOPs are counted from the graph (1 per \
             arithmetic op, 8 per transcendental).\n\n{}\n",
            tables.workloads.title,
            tables.workloads.markdown()
        );
        md += &bullets(&commentary::workloads(report));
        md
    });

    md += &measured(report, tables, &tables.tail, || {
        let mut md = String::new();
        let (rows, cols) = report.tail_shape;
        md += &format!(
            "## {}\n\n{rows} rows x {cols} columns (f32). Intermediates eliminated are counted from the \
             plans: values the 4-kernel plan writes for another kernel and this plan does not. The \
             model saving is each one's size times (1 write + its readers in the 4-kernel plan); the \
             ledger's saving is the difference of the compulsory traffic it recorded.\n\n{}\n",
            tables.tail.title,
            tables.tail.markdown()
        );
        md += &bullets(&commentary::tail(report));

        md
    });
    md += &measured(report, tables, &tables.busy, || {
        let mut md = String::new();
        md += &format!(
            "## {}\n\nThe busy fraction `N t_compute / (N (t_compute + t_launch))` (a *model* fed with \
             the measured step time and the launch cost fitted across plans, or the empty launch when \
             no fit) says how much of a step does \
             useful work.\n\n{}\nCompile time of every plan (first step minus a steady step) and the \
             break-even step count `t_compile / (t_step_eager - t_step_plan)` against eager:\n\n{}\n",
            tables.busy.title,
            tables.busy.markdown(),
            tables.break_even.markdown()
        );
        md += &bullets(&commentary::dispatch(report));

        md
    });
    md += &measured(report, tables, &tables.burn, || {
        let mut md = String::new();
        md += &format!(
            "## {}\n\nThe CartPole step written with burn tensor ops (`harness/src/studies/burn_step.rs`: float \
             masks instead of bool and/or, no slice, cat or random op inside the step, resets from a \
             precomputed pool). Warm-up runs until burn's execution plans repeat from one chunk of 10 \
             steps to the next (its fusion search has settled: it replays the plans it found); fused \
             blocks and unfused ops come from burn-fusion's `FusionInspector`, launches from the \
             CubeCL runtime's own execution log (in a separate process).\n\n{}\n",
            tables.burn.title,
            tables.burn.markdown()
        );
        md += &format!(
            "Against cartfuse at the same n (time-per-step ratio: burn / cartfuse; above 1, cartfuse \
             is faster):\n\n{}\n",
            tables.burn_vs_cartfuse.markdown()
        );
        let burn = commentary::burn(report);
        if !burn.is_empty() {
            md += "What the numbers show:\n\n";
            md += &bullets(&burn);
        }
        md
    });
    md += &match &tables.cpu {
        Some(cpu) => format!(
            "## The CPU side: {}\n\nThe same CartPole step on the native CPU runtime \
             (`--device cpu`): every plan runs as SIMD passes over chunks of envs on every core; \
             the hand-written step is written natively. Host roofline measured in this \
             run:\n\n{}\n{}\n{}\n{}\n{}",
            cpu.device,
            cpu.roofline.markdown(),
            cpu.plans.markdown(),
            cpu.vs_device.markdown(),
            cpu.crossovers.markdown(),
            bullets(&cpu.commentary),
        ),
        None => not_measured("The CPU side"),
    };
    if let (Some(study), Some(plans), Some(fusion)) =
        (&report.envs, &tables.env_plans, &tables.env_fusion)
    {
        md += &format!(
            "## Every environment\n\nEach environment's step graph under every plan, on the \
             native CPU and on {}; the default autoreset (next step) and actions covering the \
             action space. FLOPs are counted on the step graph (the same for every \
             plan).\n\n{}\n{}\n",
            report.device_name,
            fusion.markdown(),
            plans.markdown()
        );
        md += &bullets(&envs::commentary(study));
    }
    if !report.measured(Section::Policy) {
        md += &not_measured("The policy inside the rollout");
    }
    if let Some(rollouts) = &tables.policy_rollout {
        let training = tables
            .policy_training
            .as_ref()
            .map_or(String::new(), Table::markdown);
        md += &format!(
            "## The policy inside the rollout\n\nPPO's sample collection (the learner's own \
             `Collector`: observations, actions, log-probs, values, rewards with the truncation \
             bootstrap) with the default policy (actor and critic 4 -> 64 -> 64 -> out, tanh, \
             burn's initial weights): burn NdArray's forward pass on the host, then the env's \
             step on the device, against the policy fused into the env's step graph (each \
             output of a dense layer one affine op reading its weights from the kernel's params \
             buffer), {} steps per collect, median of the repeats. Then PPO (burn NdArray \
             learner, default settings) from each source until the mean return of the last 100 \
             episodes reaches the target, and a population of agents trained together: the \
             native learner on the CPU, the device learner (PPO's update as burn tensor ops, \
             agents a batch dimension) on the fused rollout on a GPU (a row each: the median \
             agent's env-steps, the whole population's seconds, collecting and learning \
             apart).\n\n{}\n{}\n",
            report.policy.first().map_or(0, |s| s.steps),
            rollouts.markdown(),
            training
        );
        md += &bullets(&policy::commentary(&report.policy));
    }
    if !plots.is_empty() {
        md += "## Plots\n\n";
        for (title, file) in plots {
            md += &format!("### {title}\n\n![{title}]({file})\n\n");
        }
    }
    md
}

/// `render()` where `report` measured the section that fills `table`; else `table`'s heading
/// and a line saying it holds no numbers.
fn measured(
    report: &Report,
    tables: &tables::Tables,
    table: &Table,
    render: impl FnOnce() -> String,
) -> String {
    match tables.measured(report, table) {
        true => render(),
        false => not_measured(&table.title),
    }
}

/// A section's heading and a line saying it was not measured (in a partial report).
fn not_measured(title: &str) -> String {
    format!("## {title}\n\n*Not measured: see the note at the top.*\n\n")
}

fn bullets(sentences: &[String]) -> String {
    if sentences.is_empty() {
        return String::new();
    }
    let mut md: String = sentences.iter().map(|s| format!("- {s}\n")).collect();
    md.push('\n');
    md
}

/// What this run was and how it timed: the mode, the budget in turns, the rounds it bought
/// and the time the whole measurement took.
fn timing_paragraph(report: &Report) -> String {
    let rounds = |cells: &[crate::cells::AblationCell]| {
        rounds_range(cells.iter().filter(|c| c.profile.is_ok()).map(|c| c.rounds))
    };
    let mode = match report.mode {
        ReproduceMode::Quick => {
            "a `--quick` run: small sizes and three rounds, for a look at the structure \
             (`cartfuse reproduce` for the report)"
        }
        ReproduceMode::Default => {
            "the default run: a time budget per size and fewer sizes than the study's \
             sweep (`cartfuse reproduce --full` times every size, with more rounds)"
        }
        ReproduceMode::Full => "a `--full` run: every size, with more rounds",
    };
    format!(
        "This is {mode}. Device plans timed in turns: {} ({} at each n here); CPU plans: {} \
         ({}). The whole measurement took {:.0} min {:.0} s.\n\n",
        report.turns.describe(),
        rounds(&report.ablation),
        report.cpu_turns.describe(),
        report
            .cpu
            .as_ref()
            .map_or("not measured".into(), |cpu| rounds(&cpu.cells)),
        (report.elapsed_s / 60.0).floor(),
        report.elapsed_s % 60.0,
    )
}

/// How many rounds the sizes timed in turns ran: one count, or the range.
fn rounds_text(turns: &[crate::turns::InTurns]) -> String {
    rounds_range(turns.iter().map(|t| t.plan_step_s.len()))
}

/// `"9 rounds"`, `"9 to 41 rounds"`, or `"no rounds"`.
fn rounds_range(counts: impl Iterator<Item = usize> + Clone) -> String {
    match (counts.clone().min(), counts.max()) {
        (Some(fewest), Some(most)) if fewest == most => format!("{fewest} rounds"),
        (Some(fewest), Some(most)) => {
            format!("{fewest} to {most} rounds (more where a step is short, within the budget)")
        }
        _ => "no rounds".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_report_shows_what_was_measured_and_names_the_rest() {
        let mut report = commentary::ablation::tests::report("Some GPU", [1.0; 9]);
        let whole = markdown(&report, &tables::Tables::new(&report), &[]);
        assert!(!whole.contains("partial") && !whole.contains("Not measured"));
        // Written as the workloads began: the ablation (and burn's empty section) measured.
        report.stopped_at = Some(Section::Workloads);
        report.cpu = None;
        report.elapsed_s = 42.0;
        let tables = tables::Tables::new(&report);
        let md = markdown(&report, &tables, &[]);
        assert!(
            md.contains("it was written 42 s into the run, as the measurement of the elementwise workloads began"),
            "{md}"
        );
        assert!(
            md.contains("## The study's CartPole ablation, replayed\n\nEach row"),
            "{md}"
        );
        for title in [
            "Elementwise roofline workloads",
            "Transformer tail: LayerNorm -> GELU -> Dropout -> residual add",
            "The CPU side",
            "The policy inside the rollout",
        ] {
            assert!(
                md.contains(&format!(
                    "## {title}\n\n*Not measured: see the note at the top.*"
                )),
                "{title}: {md}"
            );
        }
        assert!(!md.contains("beats the CPU"), "{md}");
        let files: Vec<&str> = (tables.all(&report).iter())
            .map(|t| t.file.as_str())
            .collect();
        assert!(
            files.contains(&"ablation.csv") && files.contains(&"device.csv"),
            "{files:?}"
        );
        for absent in ["workloads.csv", "transformer_tail.csv", "cpu_plans.csv"] {
            assert!(!files.contains(&absent), "{absent}: {files:?}");
        }
    }
}
