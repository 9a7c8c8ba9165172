//! XLA's GPU fusion pipeline, as a planner.
//!
//! The passes of XLA's GPU compiler of the study's era (Snider & Liang 2023 used JAX on
//! XLA of 2022), in order, the first four repeated to a fixed point as XLA's
//! `HloPassFix<HloPassPipeline>("fusion")` does, then horizontal fusion:
//!
//! 1. instruction fusion without duplication (`GpuInstructionFusion(may_duplicate=false)`,
//!    `xla/service/instruction_fusion.cc`, `xla/service/gpu/instruction_fusion.cc`):
//!    consumers from the root down take their single-user producers;
//! 2. instruction fusion with duplication: a producer with several users is fused into
//!    each (it stays where it is for the others) unless it is expensive (`IsExpensive`,
//!    with the GPU's override that f32 division and square root are cheap), or it reads
//!    more bytes than it writes and not all of its users can take it
//!    (`ComputeGloballyUnfusible`);
//! 3. the fusion merger (`xla/service/gpu/fusion_merger.cc`): a fusion merges into its
//!    consumers only if it can merge into all of them, is not expensive where that
//!    duplicates it, and merging moves no more bytes;
//! 4. multi-output fusion (`xla/service/gpu/multi_output_fusion.cc`): sibling fusions
//!    reading the same array, then a producer with a consumer (the producer keeps writing
//!    for its other users); shapes must match and no cycle may form;
//! 5. horizontal loop fusion (`xla/service/gpu/horizontal_loop_fusion.cc`): independent
//!    loop fusions feeding the root tuple run as one kernel ([`horizontal`]). XLA runs it
//!    on the entry computation only, so a step inside a `while` loop keeps its fusions
//!    apart; it is applied here to the step as planned (on CartPole's rungs it merges
//!    nothing: each rung's fusions depend on each other);
//! 6. copy insertion and removal for the loop-carried state ([`copies`]): a carry is
//!    copied into the loop buffer by a launch of its own only where its old value is
//!    still live when the new one is written.
//!
//! Every fusion obeys XLA's limits (`xla/service/gpu/gpu_fusible.cc`,
//! `xla/service/fusion_node_indexing_evaluation.cc`): at most
//! [`MAX_OPERANDS_AND_OUTPUTS`] operands and outputs (`kMaxOperandsAndOutputsPerFusion`);
//! no producer emitted more than [`ALLOWED_CODE_DUPLICATION`] times in its consumer
//! (`kAllowedCodeDuplication`); a cache-invalidating op (the concatenate, [`Op::Pack`]
//! here) is not fused where it would be emitted more than once or read by several ops
//! (`CodeDuplicationTooHigh` with `OpInvalidatesCache`) unless
//! [`PlanOptions::concat_rule`] is off (the study's patch); custom calls (the opaque
//! random op, one call per key as JAX draws a whole array at once) fuse nothing.
//!
//! What is not modelled: XLA's thresholds on element counts (plans here do not depend on
//! `n`), its GPU performance model (later than the study), and the fusion of the remaining
//! copies (later than the study; see [`copies`]).
//!
//! [`Op::Pack`]: crate::graph::Op::Pack

mod computation;
pub mod copies;
mod fusion;
pub mod horizontal;
mod multi_output;

use std::collections::BTreeSet;

use super::PlanOptions;
use super::partition::Group;
use crate::graph::Graph;
use computation::Computation;

/// XLA's `kMaxOperandsAndOutputsPerFusion`.
pub const MAX_OPERANDS_AND_OUTPUTS: usize = 64;

/// XLA's `FusionNodeIndexingEvaluation::kAllowedCodeDuplication`.
pub const ALLOWED_CODE_DUPLICATION: u64 = 15;

/// Whether `target` is reached from `start` by following `next` (depth first).
fn reaches<T: Ord + Copy, I: IntoIterator<Item = T>>(
    start: impl IntoIterator<Item = T>,
    target: T,
    next: impl Fn(T) -> I,
) -> bool {
    let mut stack: Vec<T> = start.into_iter().collect();
    let mut seen = BTreeSet::new();
    while let Some(item) = stack.pop() {
        if item == target {
            return true;
        }
        if seen.insert(item) {
            stack.extend(next(item));
        }
    }
    false
}

/// The fusions XLA's pipeline makes of `graph`'s placed nodes, with `options`' switches
/// of the study's ablation (`opaque_random`, `concat_rule`).
pub fn partition(graph: &Graph, options: &PlanOptions) -> Vec<Group> {
    let mut computation = Computation::new(graph, options);
    // The passes, each run (`|`, not `||`), until none changes anything.
    while fusion::instruction_fusion(&mut computation, false)
        | fusion::instruction_fusion(&mut computation, true)
        | fusion::fusion_merger(&mut computation)
        | multi_output::multi_output_fusion(&mut computation)
    {}
    (computation.live().into_iter())
        .map(|f| {
            let fusion = &computation.fusions[f];
            let roots: BTreeSet<_> = computation.exposed(f).into_iter().collect();
            let writes: Vec<String> = (roots.iter())
                .map(|n| format!("{n} ({})", graph.node(*n).op.name()))
                .collect();
            let reasons: String = fusion
                .why
                .iter()
                .take(4)
                .map(|r| format!("; {r}"))
                .collect();
            let why = format!("XLA fusion writing {}{reasons}", writes.join(", "));
            Group::new(fusion.nodes.clone(), roots, vec![why])
        })
        .collect()
}

#[cfg(test)]
mod tests;
