//! The transformer tail (LayerNorm -> GELU -> Dropout -> residual add) as 4, 2 and 1
//! kernels: each partition profiled, with the intermediates it eliminates counted from the
//! plans and the bytes that saves, modelled and measured; then the one kernel again under the
//! other way to reduce a row (a cube per row, GPUs' default, against a thread per row,
//! lavapipe's), so the report sets the two side by side on one device.

use std::collections::BTreeMap;

use cartfuse_fusion::cube::RowReduction;
use cartfuse_fusion::graph::{Graph, NodeId, Shape};
use cartfuse_fusion::plan::{Plan, Slot};

use crate::error::ReproduceError;
use crate::plan_profile::{PlanProfile, profile_plan};
use crate::profile::ProfileSettings;
use crate::studies::workloads::TransformerTail;

/// Rows of the tail: the 4-, 2- and 1-kernel partitions, then the 1-kernel one under the
/// other row reduction ([`RowReduction`]: a cube or a thread per row).
pub const TAIL_ROWS: usize = 4;

/// One partition of the transformer tail.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TailRow {
    /// "4 kernels", "2 kernels", "1 kernel".
    pub partition: String,
    /// The profile.
    pub profile: PlanProfile,
    /// Time ratio: 4 kernels / this partition.
    pub speedup: f64,
    /// Intermediates the 4-kernel plan materializes and this plan does not (from the plans).
    pub eliminated_intermediates: usize,
    /// Measured bytes saved against 4 kernels.
    pub measured_saving_bytes: f64,
    /// Model: the sum over eliminated intermediates of their size times (1 write + the
    /// kernels of the 4-kernel plan that read it).
    pub analytic_saving_bytes: f64,
}

/// Profiles every partition of a `(rows, cols)` tail on `backend`; `progress(message)`
/// before each.
pub fn measure_tail<R: cartfuse_fusion::cubecl::Runtime>(
    backend: &cartfuse_fusion::cube::Cube<R>,
    shape: (usize, u32),
    settings: &ProfileSettings,
    progress: &mut impl FnMut(&str),
) -> Result<Vec<TailRow>, ReproduceError> {
    let (rows, cols) = shape;
    let tail_graph = TransformerTail::new(cols);
    let lanes = rows * cols as usize;
    let (inputs, params) = TransformerTail::bindings(lanes);
    let mut tail: Vec<TailRow> = Vec::new();
    let mut unfused_intermediates = None;
    // Every partition under the device's row reduction, then the one kernel under the other.
    let mut partitions: Vec<_> = (tail_graph.partitions().into_iter())
        .map(|(label, groups)| (label.to_string(), groups, backend.clone()))
        .collect();
    if let Some((_, groups, _)) = partitions.last().cloned() {
        let other = match backend.row_reduction() {
            RowReduction::ThreadPerRow => RowReduction::CubePerRow,
            RowReduction::CubePerRow => RowReduction::ThreadPerRow,
        };
        let label = format!(
            "1 kernel, {other} (the rows above: {})",
            backend.row_reduction()
        );
        partitions.push((label, groups, backend.clone().with_row_reduction(other)));
    }
    for (label, groups, backend) in partitions {
        progress(&format!("transformer tail, {label}"));
        let plan = Plan::from_partition(&tail_graph.graph, &groups)?;
        let materialized = intermediates(&tail_graph.graph, &plan);
        let baseline = unfused_intermediates.get_or_insert_with(|| materialized.clone());
        let eliminated: Vec<(NodeId, usize)> = baseline
            .iter()
            .filter(|(node, _)| !materialized.contains_key(node))
            .map(|(node, readers)| (*node, *readers))
            .collect();
        let analytic_saving_bytes = eliminated
            .iter()
            .map(|(node, readers)| {
                (1 + *readers as u64)
                    * value_bytes_per_lane(&tail_graph.graph, *node)
                    * lanes as u64
            })
            .sum::<u64>() as f64;
        let profile = profile_plan(
            &backend,
            &tail_graph.graph,
            plan,
            lanes,
            (&inputs, &params),
            true,
            settings,
        )?;
        let (speedup, measured_saving_bytes) = match tail.first() {
            Some(first) => (
                first.profile.step_s_median / profile.step_s_median,
                first.profile.bytes_per_step - profile.bytes_per_step,
            ),
            None => (1.0, 0.0),
        };
        tail.push(TailRow {
            partition: label,
            eliminated_intermediates: eliminated.len(),
            analytic_saving_bytes,
            measured_saving_bytes,
            speedup,
            profile,
        });
    }
    Ok(tail)
}

/// Values a plan materializes for other kernels to read (not graph outputs), each with the
/// number of kernels that read it.
fn intermediates(graph: &Graph, plan: &Plan) -> BTreeMap<NodeId, usize> {
    let outputs: Vec<NodeId> = graph.outputs().iter().map(|o| o.node).collect();
    let mut readers = BTreeMap::new();
    for kernel in &plan.kernels {
        for slot in &kernel.reads {
            if let Slot::Value(node) = slot
                && !outputs.contains(node)
            {
                *readers.entry(*node).or_insert(0) += 1;
            }
        }
    }
    readers
}

/// Bytes per lane of one value of `node`.
fn value_bytes_per_lane(graph: &Graph, node: NodeId) -> u64 {
    let node = graph.node(node);
    let width = match node.shape {
        Shape::Lanes => 1,
        Shape::Packed(k) => u64::from(k),
    };
    width * node.dtype.size_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_intermediates_come_from_the_plans() {
        let tail = TransformerTail::new(64);
        let counts: Vec<usize> = tail
            .partitions()
            .into_iter()
            .map(|(_, groups)| {
                intermediates(
                    &tail.graph,
                    &Plan::from_partition(&tail.graph, &groups).unwrap(),
                )
                .len()
            })
            .collect();
        assert_eq!(counts, [3, 1, 0]);
    }
}
