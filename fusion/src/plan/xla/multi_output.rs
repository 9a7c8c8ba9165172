//! Multi-output fusion (XLA's `GpuMultiOutputFusion`): siblings that read the same array
//! become one fusion, and a producer joins a consumer while still writing its value for
//! its other users. Neither duplicates work; both save a read or a launch.

use std::cmp::Reverse;

use super::MAX_OPERANDS_AND_OUTPUTS;
use super::computation::Computation;
use crate::graph::{NodeId, Op, Shape};
use crate::plan::kernels::rows_of;

/// One pass, uses before defs: for each array, fuse the fusions reading it (siblings),
/// then fuse the fusion computing it into one consumer. Returns whether anything changed.
pub(super) fn multi_output_fusion(c: &mut Computation) -> bool {
    let mut changed = false;
    let mut parents: Vec<NodeId> = c
        .graph
        .ids()
        .filter(|id| is_profitable_operand(c, *id))
        .collect();
    parents.sort_by_key(|id| Reverse(*id));
    for parent in parents {
        changed |= fuse_siblings(c, parent);
        if c.graph.is_placed(parent) {
            changed |= fuse_producer_consumer(c, parent);
        }
    }
    changed
}

/// A shared operand worth a multi-output fusion: an array, not a broadcast scalar.
fn is_profitable_operand(c: &Computation, id: NodeId) -> bool {
    match c.graph.node(id).op {
        Op::Param { .. } | Op::Constant(_) | Op::LaneIndex => false,
        Op::Input { .. } => true,
        _ => c.graph.is_placed(id),
    }
}

fn fuse_siblings(c: &mut Computation, parent: NodeId) -> bool {
    let mut changed = false;
    let mut siblings: Vec<usize> = c.readers(parent).into_iter().collect();
    siblings.sort_by_key(|f| c.fusions[*f].nodes.first().copied());
    let mut i = 0;
    while i < siblings.len() {
        let mut j = i + 1;
        while j < siblings.len() {
            // (Merged siblings are empty: not multi-output roots.)
            let (a, b) = (siblings[i], siblings[j]);
            if sibling_fusible(c, a, b) {
                c.merge(b, a);
                siblings.remove(j);
                changed = true;
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    changed
}

fn sibling_fusible(c: &Computation, a: usize, b: usize) -> bool {
    multi_output_root(c, a)
        && multi_output_root(c, b)
        && compatible(c, a, b)
        && !c.connected(a, b)
        && within_limit(c, a, b)
}

/// Fuses the fusion computing `parent` into the consumer that reads it, when it has other
/// users too (else instruction fusion already decided) and no other path leads there.
fn fuse_producer_consumer(c: &mut Computation, parent: NodeId) -> bool {
    let producer = c.home(parent);
    if c.fusions[producer].nodes.is_empty()
        || c.is_call(producer)
        || c.is_reduction(producer)
        || c.exposed(producer).len() > 1
    {
        return false;
    }
    let consumer = c.consumers(producer).into_iter().find(|consumer| {
        multi_output_root(c, *consumer)
            && compatible(c, producer, *consumer)
            && !c.indirect_path(producer, *consumer)
            && within_limit(c, producer, *consumer)
    });
    if let Some(consumer) = consumer {
        c.merge(producer, consumer);
    }
    consumer.is_some()
}

/// A loop or reduction fusion (not a custom call) may root a multi-output fusion.
fn multi_output_root(c: &Computation, f: usize) -> bool {
    !c.fusions[f].nodes.is_empty() && !c.is_call(f)
}

/// XLA's `ShapesCompatibleForMultiOutputFusion`: every written value has one shape, and
/// reductions reduce rows of one width.
fn compatible(c: &Computation, a: usize, b: usize) -> bool {
    let mut shapes: Vec<Shape> = c
        .exposed(a)
        .into_iter()
        .chain(c.exposed(b))
        .map(|n| c.graph.node(n).shape)
        .collect();
    shapes.dedup();
    let rows = |f: usize| rows_of(c.graph, &c.fusions[f].nodes);
    shapes.len() <= 1 && rows(a) == rows(b)
}

fn within_limit(c: &Computation, a: usize, b: usize) -> bool {
    let merged = c.merged(a, b);
    c.operands_and_outputs(&merged, &[a, b]) <= MAX_OPERANDS_AND_OUTPUTS
        && c.concat_read_by_several(&merged).is_none()
}
