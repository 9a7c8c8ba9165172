//! The study's CartPole ablation, replayed as rows of step plans.
//!
//! Snider & Liang (2023) start from the XLA-compiled JAX CartPole and remove one fusion
//! barrier at a time. The study's rungs are XLA's fusion pipeline ([`xla`](cartfuse_fusion::plan::xla)) applied to a
//! changed program; each row changes one thing from the row before; the study's
//! reported factor for the corresponding change is carried beside it, as published (the
//! report compares; it never copies these into measurements).
//!
//! At each size every row, and eager beside them, is built, warmed and timed in turns
//! ([`ladder_cells`]), so each factor is the median of per-round ratios.

use cartfuse_env::engine::RandomSource;
use cartfuse_env::graph::StateLayout;
use cartfuse_env::{EnvBackend, StepPlan};
use cartfuse_fusion::plan::Strategy;

use crate::cells::{AblationCell, Over, cartpole_cells, set_over_eager};
use crate::error::ReproduceError;
use crate::turns::TurnsSettings;

/// One row of the ladder.
#[derive(Debug, Clone, PartialEq)]
pub struct AblationRow {
    /// Row label.
    pub label: &'static str,
    /// What changes from the previous row.
    pub change: &'static str,
    /// The plan that runs it.
    pub plan: StepPlan,
    /// What the study reported for this change, verbatim in substance.
    pub study: &'static str,
    /// Kernels per step the study counted in XLA's output, where it gave the number.
    pub study_launches: Option<u32>,
}

/// The ladder, in order: the study's rungs (XLA's pipeline on a changed program), then
/// the plans beyond XLA.
pub fn ladder() -> Vec<AblationRow> {
    let xla = |layout, random, concat_rule| StepPlan::Custom {
        strategy: Strategy::XlaDefault,
        layout,
        random,
        concat_rule,
    };
    vec![
        AblationRow {
            label: "xla-default",
            change: "XLA's pipeline on the baseline program: random numbers from an opaque custom call, state packed by a concatenate with several users, the loop copies XLA keeps (state still live when its next value is written)",
            plan: StepPlan::Graph(Strategy::XlaDefault),
            study: "baseline (1.0x)",
            study_launches: Some(6),
        },
        AblationRow {
            label: "random precomputed",
            change: "random numbers drawn ahead for up to 10 steps by one launch (as many steps as a kernel's bindings hold) and read as inputs",
            plan: xla(StateLayout::Packed, RandomSource::DrawnAhead, true),
            study: "1.87x (random numbers precomputed)",
            study_launches: None,
        },
        AblationRow {
            label: "concat rule patched",
            change: "XLA may fuse the concatenate where it is emitted more than once (the study's patched compiler)",
            plan: xla(StateLayout::Packed, RandomSource::DrawnAhead, false),
            study: "~1.1x (concatenate rule patched)",
            study_launches: None,
        },
        AblationRow {
            label: "no concatenate",
            change: "state carried as one array per component: no concatenate (XLA's concatenate rule back on)",
            plan: xla(StateLayout::StructOfArrays, RandomSource::DrawnAhead, true),
            study: "3.41x (no concatenate)",
            study_launches: None,
        },
        AblationRow {
            label: "xla, random fused",
            change: "beyond the study: XLA's pipeline with the random numbers fused into the step instead of drawn ahead",
            plan: xla(StateLayout::StructOfArrays, RandomSource::Fused, true),
            study: "-",
            study_launches: None,
        },
        AblationRow {
            label: "horizontal",
            change: "vertical fusion, independent kernels share a launch; state double-buffered instead of copied",
            plan: StepPlan::Graph(Strategy::Horizontal),
            study: "-",
            study_launches: None,
        },
        AblationRow {
            label: "fused",
            change: "the whole step in one kernel",
            plan: StepPlan::Graph(Strategy::Fused),
            study: "-",
            study_launches: None,
        },
        AblationRow {
            label: "fused-x10",
            change: "10 steps per launch, state in registers (stands in for the study's unroll by 10, which XLA compiled without keeping state in registers)",
            plan: StepPlan::Graph(Strategy::FusedSteps(10)),
            study: "3.5x (unroll 10); 10.56x in total over the baseline",
            study_launches: None,
        },
        AblationRow {
            label: "hand-written",
            change: "the hand-written kernel (draws resets only for lanes that reset)",
            plan: StepPlan::HandWritten,
            study: "hand-written CUDA 2.7x faster than the best XLA version",
            study_launches: None,
        },
    ]
}

/// Eager and every row of the ladder at `n` on `backend`, timed in turns: the eager cell,
/// then one cell per row with its factors over the measured row before it, over
/// xla-default and over eager, each the median of per-round ratios.
pub fn ladder_cells<B: EnvBackend>(
    backend: &B,
    n: usize,
    settings: &TurnsSettings,
) -> Result<(AblationCell, Vec<AblationCell>), ReproduceError> {
    let rows: Vec<(&str, StepPlan)> = std::iter::once(("eager", StepPlan::Graph(Strategy::Eager)))
        .chain(ladder().iter().map(|row| (row.label, row.plan)))
        .collect();
    let mut cells = cartpole_cells(backend, &rows, n, settings)?;
    set_over_eager(&mut cells);
    let eager = cells.remove(0);
    set_ladder_factors(&mut cells);
    Ok((eager, cells))
}

/// Sets each ladder cell's factors over the measured row before it and over the ladder's
/// first row (`cells`: the ladder's rows at one size, in order). The first row's factor over
/// itself is 1; without a measured first row there is no baseline.
pub fn set_ladder_factors(cells: &mut [AblationCell]) {
    let baseline = ladder()[0].label;
    let first = cells
        .iter()
        .find(|c| c.row == baseline && c.profile.is_ok())
        .cloned();
    for i in 0..cells.len() {
        let previous = cells[..i].iter().rev().find(|c| c.profile.is_ok()).cloned();
        cells[i].set_factor(Over::Previous, previous.as_ref());
        cells[i].set_factor(Over::XlaDefault, first.as_ref());
    }
}
