//! Copy insertion and copy removal for the loop-carried state (XLA's `CopyInsertion`,
//! `xla/service/copy_insertion.cc`, with the ordering rules of `HloOrdering` in
//! `xla/service/hlo_ordering.cc`).
//!
//! A `while` loop's body reads its state from the loop's buffer and must leave the next
//! state there. Copy insertion first copies every element of the body's root tuple into
//! the loop buffer; copy removal (`CopyRemover`) then drops each copy whose two values'
//! live ranges do not overlap, so that the fusion computing the next value writes it
//! straight into the loop buffer. Here, per carry, at the granularity of launches:
//!
//! - the old value is last read by a launch before the one writing the new value: no copy;
//! - it is read by a launch after that one: the copy stays (the old value is still live);
//! - it is read by the writing launch itself: no copy only where XLA lets a fusion's
//!   output share an operand's buffer (`HloDataflowAnalysis::CanShareOperandBufferWithUser`
//!   for a loop fusion: every use of the operand inside the fusion is elementwise, the
//!   `kIsSame` case of `HloOrdering::UsesBeforeValueDefinition`). A slice of packed state
//!   (an [`Op::Unpack`]), a concatenate ([`Op::Pack`]), a dense layer or a row reduction is
//!   not elementwise; nor is a horizontally fused launch (XLA makes it an input fusion of
//!   concatenated outputs) or a kernel over rows.
//!
//! Not modelled: `CopyFusion` and the horizontal fusion of the remaining copies
//! (`horizontal-loop-fusion-for-copy` in `GpuCompiler::PrepareHloModuleForIrEmitting`),
//! which XLA added after the study's compiler (2023) and, in the versions read here, runs
//! on the entry computation only, not on a loop body. Each remaining copy is one launch.
//!
//! [`Op::Unpack`]: crate::graph::Op::Unpack
//! [`Op::Pack`]: crate::graph::Op::Pack

use crate::graph::{Carry, Graph, NodeId, Op, Shape};
use crate::plan::{PlannedKernel, PlannedLaunch, Slot};

/// The carried inputs whose next value XLA copies into the loop buffer (the others are
/// written there by the fusion that computes them), in the graph's carry order.
pub fn copied_carries(
    graph: &Graph,
    kernels: &[PlannedKernel],
    launches: &[PlannedLaunch],
) -> Vec<NodeId> {
    graph
        .carries()
        .iter()
        .filter(|carry| needs_copy(graph, kernels, launches, carry))
        .map(|carry| carry.input)
        .collect()
}

fn needs_copy(
    graph: &Graph,
    kernels: &[PlannedKernel],
    launches: &[PlannedLaunch],
    carry: &Carry,
) -> bool {
    let input = Slot::Input(carry.input);
    let next = Slot::Next(carry.input);
    let writer = launches.iter().position(|launch| {
        (launch.kernels().iter()).any(|k| kernels[*k].writes.iter().any(|(s, _)| *s == next))
    });
    let Some(writer) = writer else {
        // The next value is not computed by a fusion (an input passed through): copied.
        return true;
    };
    launches.iter().enumerate().any(|(at, launch)| {
        let readers: Vec<usize> = (launch.kernels().iter().copied())
            .filter(|k| kernels[*k].reads.contains(&input))
            .collect();
        match at.cmp(&writer) {
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Greater => !readers.is_empty(),
            std::cmp::Ordering::Equal => match readers[..] {
                [] => false,
                [k] if launch.kernels().len() == 1 => {
                    !shares_operand_buffer(graph, &kernels[k], carry.input)
                }
                _ => true,
            },
        }
    })
}

/// Whether `kernel`'s outputs may take the buffer of `input`, which it reads: a kernel
/// over lanes in which every op reading `input`, directly or through other ops of the
/// kernel, is elementwise.
fn shares_operand_buffer(graph: &Graph, kernel: &PlannedKernel, input: NodeId) -> bool {
    if kernel.rows_of.is_some() || graph.node(input).shape != Shape::Lanes {
        return false;
    }
    let mut reached = vec![input];
    for &id in &kernel.computes {
        let op = &graph.node(id).op;
        if op.operands().iter().any(|o| reached.contains(o)) {
            if !is_elementwise(op) {
                return false;
            }
            reached.push(id);
        }
    }
    true
}

/// XLA's `IsElementwise` for the ops of a graph: each output element depends on the same
/// element of each operand only.
fn is_elementwise(op: &Op) -> bool {
    match op {
        Op::Unary(..)
        | Op::Binary(..)
        | Op::FloatBinary(..)
        | Op::LogicUnary(..)
        | Op::LogicBinary(..)
        | Op::Compare(..)
        | Op::Select { .. }
        | Op::Cast(..)
        | Op::RandomUniform { .. } => true,
        Op::Pack(_) | Op::Unpack(..) | Op::RowReduce(..) | Op::Affine { .. } => false,
        Op::Input { .. } | Op::Param { .. } | Op::Constant(_) | Op::LaneIndex => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{DType, GraphBuilder};

    fn kernel(name: &str, computes: &[NodeId], reads: &[Slot], writes: &[Slot]) -> PlannedKernel {
        PlannedKernel {
            name: name.into(),
            computes: computes.to_vec(),
            reads: reads.to_vec(),
            writes: writes.iter().map(|s| (*s, s.node())).collect(),
            rows_of: None,
            why: Vec::new(),
        }
    }

    fn each(kernels: &[PlannedKernel]) -> Vec<PlannedLaunch> {
        (0..kernels.len())
            .map(|k| PlannedLaunch::Kernels(vec![k]))
            .collect()
    }

    #[test]
    fn a_carry_read_after_its_next_value_is_written_is_copied() {
        // next = 2x in the first kernel; y = x + 1 in the second reads the old x after it.
        let g = GraphBuilder::new();
        let x = g.input("x", DType::F32);
        let next = x * 2.0;
        let y = x + 1.0;
        g.carry(x, next);
        g.output("y", y);
        let (x, next, y) = (x.id(), next.id(), y.id());
        let graph = g.build().unwrap();
        let write_first = [
            kernel("next", &[next], &[Slot::Input(x)], &[Slot::Next(x)]),
            kernel("y", &[y], &[Slot::Input(x)], &[Slot::Value(y)]),
        ];
        assert_eq!(
            copied_carries(&graph, &write_first, &each(&write_first)),
            vec![x]
        );
        // Read first, written last: the old value is dead when the new one is written.
        let read_first = [write_first[1].clone(), write_first[0].clone()];
        assert!(copied_carries(&graph, &read_first, &each(&read_first)).is_empty());
        // One fusion reading x elementwise writes its next value over it.
        let one = [kernel(
            "both",
            &[next, y],
            &[Slot::Input(x)],
            &[Slot::Next(x), Slot::Value(y)],
        )];
        assert!(copied_carries(&graph, &one, &each(&one)).is_empty());
        // Side by side in one horizontal launch: XLA concatenates the outputs, no sharing.
        let side_by_side = vec![PlannedLaunch::Kernels(vec![0, 1])];
        assert_eq!(copied_carries(&graph, &write_first, &side_by_side), vec![x]);
    }

    #[test]
    fn packed_state_read_in_the_fusion_that_writes_it_is_copied() {
        // The next state is a concatenate of slices of the state: not elementwise.
        let g = GraphBuilder::new();
        let s = g.input_packed("s", 2);
        let a = s.unpack(0);
        let b = s.unpack(1);
        let next = g.pack(&[b * 2.0, a]);
        g.carry(s, next);
        let s = s.id();
        let graph = g.build().unwrap();
        let computes: Vec<NodeId> = (graph.ids())
            .filter(|id| graph.node(*id).op.computes())
            .collect();
        let one = [kernel(
            "step",
            &computes,
            &[Slot::Input(s)],
            &[Slot::Next(s)],
        )];
        assert_eq!(copied_carries(&graph, &one, &each(&one)), vec![s]);
    }
}
