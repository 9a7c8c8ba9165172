//! Planning: partitioning a graph into kernels under a named strategy.
//!
//! A [`Plan`] is an ordered list of [`PlannedKernel`]s, each a set of ops with the buffers
//! it binds, grouped into launches. Every kernel records why it is a kernel of its own, so a
//! plan can explain itself (`cartfuse plan`).

mod explain;
mod kernels;
mod partition;
mod strategy;

pub use kernels::{PlannedKernel, Slot};
pub use strategy::{PlanOptions, Strategy};

use crate::graph::{Graph, NodeId};

/// Why a plan could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// An unknown strategy name.
    #[error(
        "unknown plan `{0}`: expected eager, vertical, horizontal, fused, fused-x<K> (K >= 1) or xla-default"
    )]
    UnknownStrategy(String),
    /// `fused-xK` needs a graph the whole of which fits in one kernel.
    #[error("{strategy} needs the whole graph in one kernel, but it needs {kernels} ({reason})")]
    NotSingleKernel {
        /// The strategy.
        strategy: String,
        /// Kernels the graph needs.
        kernels: usize,
        /// Why.
        reason: String,
    },
    /// A given partition leaves a node uncomputed.
    #[error("the partition computes {0} in no kernel")]
    IncompletePartition(NodeId),
    /// A kernel would bind more buffers than the device allows.
    #[error("kernel `{kernel}` binds {bindings} buffers; the device allows {max}")]
    TooManyBindings {
        /// Kernel name.
        kernel: String,
        /// Buffers it binds.
        bindings: usize,
        /// Device limit.
        max: usize,
    },
}

/// Kernels given by name and nodes, for [`Plan::from_partition`].
pub type Partition = Vec<(String, Vec<NodeId>)>;

/// One launch: one kernel, or several kernels on disjoint cube ranges (horizontal fusion),
/// or a copy of loop-carried state (the `xla-default` while-loop copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedLaunch {
    /// Kernels issued together, by index into [`Plan::kernels`].
    Kernels(Vec<usize>),
    /// Copies the next value of carried `input` into the input's own buffer.
    CopyState {
        /// The carried input node.
        input: NodeId,
    },
}

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
    /// Plans `graph` under `strategy`.
    pub fn build(
        graph: &Graph,
        strategy: Strategy,
        options: &PlanOptions,
    ) -> Result<Plan, PlanError> {
        strategy::build(graph, strategy, options)
    }

    /// A plan whose kernels are given: each named group of nodes becomes one kernel, in
    /// dependency order. Every placed node must be in at least one group (nodes in several
    /// groups are recomputed by each).
    pub fn from_partition(
        graph: &Graph,
        groups: &[(String, Vec<NodeId>)],
    ) -> Result<Plan, PlanError> {
        let covered: std::collections::BTreeSet<NodeId> = groups
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
                partition::Group::explicit(nodes, format!("given kernel `{name}`"))
            })
            .collect();
        let kernels = kernels::build_kernels(graph, groups)?;
        let launches = (0..kernels.len())
            .map(|k| PlannedLaunch::Kernels(vec![k]))
            .collect();
        Ok(Plan {
            strategy: Strategy::Partition,
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
                PlannedLaunch::Kernels(parts) => parts
                    .iter()
                    .map(|k| {
                        let (read, written) =
                            self.kernels[*k].bytes_per_lane(graph, self.steps_per_launch);
                        read + written
                    })
                    .sum::<u64>(),
                PlannedLaunch::CopyState { input } => 2 * kernels::slot_width_bytes(graph, *input),
            })
            .sum();
        per_launch as f64 / self.steps_per_launch as f64
    }
}

#[cfg(test)]
mod tests;
