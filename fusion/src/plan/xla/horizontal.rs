//! Horizontal loop fusion (XLA's `GpuHorizontalLoopFusion`): independent loop fusions that
//! feed the same consumer (here the step's root tuple: outputs and carried values) run as
//! one kernel, each on its own range of threads. Fusions writing different element types
//! are not combined (XLA concatenates the outputs), nor are reductions or fusions of more
//! than [`MAX_INSTRUCTIONS`] instructions.

use std::collections::BTreeSet;

use super::reaches;
use crate::graph::Graph;
use crate::plan::kernels::writers;
use crate::plan::{PlannedKernel, PlannedLaunch};

/// XLA's instruction-count threshold for a horizontal fusion candidate.
pub const MAX_INSTRUCTIONS: usize = 128;

/// XLA's largest horizontal fusion batch.
pub const MAX_BATCH: usize = 32;

/// The launches of `kernels` (in dependency order) after horizontal loop fusion.
pub fn launches(graph: &Graph, kernels: &[PlannedKernel]) -> Vec<PlannedLaunch> {
    // ancestors[k]: every kernel k depends on, directly or not.
    let mut ancestors: Vec<BTreeSet<usize>> = Vec::with_capacity(kernels.len());
    for kernel in kernels {
        let all = writers(kernels, &kernel.reads)
            .flat_map(|d| std::iter::once(d).chain(ancestors[d].iter().copied()))
            .collect();
        ancestors.push(all);
    }
    let candidate = |k: usize| {
        let kernel = &kernels[k];
        let dtypes: BTreeSet<_> = kernel
            .writes
            .iter()
            .map(|(_, n)| graph.node(*n).dtype)
            .collect();
        kernel.rows_of.is_none()
            && kernel.computes.len() <= MAX_INSTRUCTIONS
            && dtypes.len() == 1
            && kernel.writes.iter().any(|(_, n)| graph.is_root(*n))
    };
    let mut batch_of: Vec<Option<usize>> = vec![None; kernels.len()];
    let mut batches: Vec<Vec<usize>> = Vec::new();
    for k in (0..kernels.len()).filter(|k| candidate(*k)) {
        let dtype = graph.node(kernels[k].writes[0].1).dtype;
        let fits = (0..batches.len()).find(|b| {
            let batch = &batches[*b];
            batch.len() < MAX_BATCH
                && graph.node(kernels[batch[0]].writes[0].1).dtype == dtype
                && batch
                    .iter()
                    .all(|m| !ancestors[k].contains(m) && !ancestors[*m].contains(&k))
                && !closes_a_cycle(&ancestors, &batch_of, k, *b)
        });
        match fits {
            Some(b) => batches[b].push(k),
            None => batches.push(vec![k]),
        }
        batch_of[k] = Some(fits.unwrap_or(batches.len() - 1));
    }
    // A batch launches once every member's inputs are ready: order launches by a
    // topological sort of batches and lone kernels, the first ready by first member.
    let mut units = batches;
    units.extend(
        (0..kernels.len())
            .filter(|k| batch_of[*k].is_none())
            .map(|k| vec![k]),
    );
    units.sort_by_key(|unit| unit[0]);
    let mut launched = vec![false; kernels.len()];
    let mut launches = Vec::new();
    while !units.is_empty() {
        let ready = units.iter().position(|unit| {
            (unit.iter().flat_map(|m| &ancestors[*m])).all(|a| launched[*a] || unit.contains(a))
        });
        let unit = units.remove(ready.expect("a horizontal batch holds only independent kernels"));
        for m in &unit {
            launched[*m] = true;
        }
        launches.push(PlannedLaunch::Kernels(unit));
    }
    launches
}

/// Whether putting kernel `k` in batch `batch` would make the batch wait for itself: some
/// kernel `k` reads from sits in a batch that already waits for `batch` (kernels are placed
/// in dependency order, so only `k`'s ancestors are placed).
fn closes_a_cycle(
    ancestors: &[BTreeSet<usize>],
    batch_of: &[Option<usize>],
    k: usize,
    batch: usize,
) -> bool {
    // Batches each batch waits for, directly.
    let waits_for = |b: usize| -> BTreeSet<usize> {
        (0..batch_of.len())
            .filter(|m| batch_of[*m] == Some(b))
            .flat_map(|m| ancestors[m].iter().filter_map(|a| batch_of[*a]))
            .filter(|a| *a != b)
            .collect()
    };
    let start = (ancestors[k].iter()).filter_map(|a| batch_of[*a]);
    reaches(start.filter(|a| *a != batch), batch, waits_for)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{DType, GraphBuilder, NodeId};
    use crate::plan::Slot;

    fn kernel(name: &str, reads: &[NodeId], writes: NodeId) -> PlannedKernel {
        PlannedKernel {
            name: name.into(),
            computes: vec![writes],
            reads: reads.iter().map(|n| Slot::Value(*n)).collect(),
            writes: vec![(Slot::Value(writes), writes)],
            rows_of: None,
            why: Vec::new(),
        }
    }

    #[test]
    fn batches_of_two_dtypes_never_wait_for_each_other() {
        // x1 (f32) feeds y1 (u32); y2 (u32) feeds x2 (f32); all four are outputs. First
        // fit would batch {x1, x2} and {y2, y1}: each would wait for the other.
        let g = GraphBuilder::new();
        let a = g.input("a", DType::F32);
        let b = g.input("b", DType::U32);
        let x1 = a * 2.0;
        let y2 = b + g.u32(1);
        let y1 = x1.cast(DType::U32) + g.u32(3);
        let x2 = y2.cast(DType::F32) * 3.0;
        for (name, v) in [("x1", x1), ("y2", y2), ("y1", y1), ("x2", x2)] {
            g.output(name, v);
        }
        let kernels = [
            kernel("x1", &[a.id()], x1.id()),
            kernel("y2", &[b.id()], y2.id()),
            kernel("y1", &[x1.id()], y1.id()),
            kernel("x2", &[y2.id()], x2.id()),
        ];
        let graph = g.build().unwrap();
        let launches = launches(&graph, &kernels);
        let order: Vec<usize> = (launches.iter())
            .flat_map(|l| l.kernels().iter().copied())
            .collect();
        assert_eq!(order.len(), 4);
        let at = |k: usize| order.iter().position(|o| *o == k).unwrap();
        assert!(at(0) < at(2) && at(1) < at(3), "{launches:?}");
        assert_eq!(launches.len(), 3, "{launches:?}");
    }
}
