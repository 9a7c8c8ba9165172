//! The plan itself: kernels and launches, and its launch and byte accounting.

use std::collections::BTreeSet;

use super::error::PlanError;
use super::kernels::{self, PlannedKernel, PlannedLaunch};
use super::launches;
use super::partition::Group;
use super::strategy::Strategy;
use crate::graph::{Graph, NodeId};

/// Kernels given by name and nodes, for [`Plan::from_partition`].
pub type Partition = Vec<(String, Vec<NodeId>)>;

/// A graph partitioned into kernels and launches.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The strategy that built it.
    pub strategy: Strategy,
    /// Kernels in execution order.
    pub kernels: Vec<PlannedKernel>,
    /// Launches in execution order.
    pub launches: Vec<PlannedLaunch>,
    /// Graph steps each launch sequence performs (`K` of `fused-xK`, else 1).
    pub steps_per_launch: u32,
}

impl Plan {
    /// The carried inputs whose next value a launch copies back into the state's own
    /// buffer (`xla-default`'s loop copies); the other carries are swapped or updated in
    /// place.
    pub fn copied_carries(&self) -> Vec<NodeId> {
        (self.launches.iter())
            .filter_map(|launch| match launch {
                PlannedLaunch::CopyState { input } => Some(*input),
                PlannedLaunch::Kernels(_) => None,
            })
            .collect()
    }

    /// A plan whose kernels are given: each named group of nodes becomes one kernel, in
    /// dependency order. Every placed node must be in at least one group (nodes in several
    /// groups are recomputed by each).
    pub fn from_partition(
        graph: &Graph,
        groups: &[(String, Vec<NodeId>)],
    ) -> Result<Plan, PlanError> {
        let covered: BTreeSet<NodeId> = groups
            .iter()
            .flat_map(|(_, nodes)| nodes.iter().copied())
            .collect();
        if let Some(missing) = graph
            .ids()
            .find(|id| graph.is_placed(*id) && !covered.contains(id))
        {
            return Err(PlanError::IncompletePartition(missing));
        }
        let groups = groups
            .iter()
            .map(|(name, nodes)| {
                let nodes = nodes
                    .iter()
                    .copied()
                    .filter(|id| graph.is_placed(*id))
                    .collect();
                Group::new(
                    nodes,
                    BTreeSet::new(),
                    vec![format!("given kernel `{name}`")],
                )
            })
            .collect();
        let strategy = Strategy::Partition;
        let kernels = kernels::build_kernels(graph, groups);
        let launches = launches::group(graph, &kernels, strategy.spec().grouping);
        Ok(Plan {
            strategy,
            kernels,
            launches,
            steps_per_launch: 1,
        })
    }

    /// Launches per graph step.
    pub fn launches_per_step(&self) -> f64 {
        self.launches.len() as f64 / self.steps_per_launch as f64
    }

    /// Compulsory bytes per lane per graph step: every bound buffer read or written once.
    pub fn bytes_per_lane_step(&self, graph: &Graph) -> f64 {
        let per_launch: u64 = self
            .launches
            .iter()
            .map(|launch| match launch {
                PlannedLaunch::Kernels(parts) => (parts.iter())
                    .map(|k| self.kernels[*k].bytes_per_lane(graph, self.steps_per_launch))
                    .map(|(read, written)| read + written)
                    .sum::<u64>(),
                PlannedLaunch::CopyState { input } => 2 * kernels::slot_width_bytes(graph, *input),
            })
            .sum();
        per_launch as f64 / self.steps_per_launch as f64
    }
}
