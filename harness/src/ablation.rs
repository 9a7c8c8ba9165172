//! The study's CartPole ablation, replayed as rows of step plans.
//!
//! Snider & Liang (2023) start from the XLA-compiled JAX CartPole and remove one fusion
//! barrier at a time. Each row below changes one thing from the row before; the study's
//! reported factor for the corresponding change is carried beside it, as published (the
//! report compares; it never copies these into measurements).

use cartfuse_env::StepPlan;
use cartfuse_env::graph::StateLayout;
use cartfuse_fusion::plan::Strategy;

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
}

/// The ladder, in order.
pub fn ladder() -> Vec<AblationRow> {
    vec![
        AblationRow {
            label: "xla-default",
            change: "XLA's baseline: opaque random op, state packed in one array (a pack with several users), state copied between steps",
            plan: StepPlan::Graph(Strategy::XlaDefault),
            study: "baseline (1.0x)",
        },
        AblationRow {
            label: "random numbers fused",
            change: "the random op fuses like any other op",
            plan: StepPlan::Custom {
                strategy: Strategy::XlaDefault,
                layout: StateLayout::Packed,
                opaque_random: false,
            },
            study: "1.87x (random numbers precomputed)",
        },
        AblationRow {
            label: "no pack (structure of arrays)",
            change: "state carried as one buffer per component: no pack to materialize",
            plan: StepPlan::Custom {
                strategy: Strategy::XlaDefault,
                layout: StateLayout::StructOfArrays,
                opaque_random: false,
            },
            study: "~1.1x (patched concatenate); 3.41x without the concatenate",
        },
        AblationRow {
            label: "horizontal",
            change: "independent kernels share a launch; state double-buffered instead of copied",
            plan: StepPlan::Graph(Strategy::Horizontal),
            study: "-",
        },
        AblationRow {
            label: "fused",
            change: "the whole step in one kernel",
            plan: StepPlan::Graph(Strategy::Fused),
            study: "-",
        },
        AblationRow {
            label: "fused-x10",
            change: "10 steps per launch, state in registers (the study's unroll by 10)",
            plan: StepPlan::Graph(Strategy::FusedSteps(10)),
            study: "3.5x (unroll 10); 10.56x in total over the baseline",
        },
        AblationRow {
            label: "hand-written",
            change: "the hand-written kernel (draws resets only for lanes that reset)",
            plan: StepPlan::HandWritten,
            study: "hand-written CUDA 2.7x faster than the best XLA version",
        },
    ]
}
