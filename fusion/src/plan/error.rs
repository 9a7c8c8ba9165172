//! Why a plan could not be built.

use super::strategy::Strategy;
use crate::graph::NodeId;

/// Why a plan could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// An unknown strategy name.
    #[error("unknown plan `{0}`: expected {expected}", expected = Strategy::expected())]
    UnknownStrategy(String),
    /// An unknown plan name where a runtime offers plans of its own beside the strategies.
    #[error("unknown plan `{name}`: expected {also} or {expected}", expected = Strategy::expected())]
    UnknownPlan {
        /// The name given.
        name: String,
        /// The runtime's own plans, as the message lists them.
        also: String,
    },
    /// A stepped strategy needs a graph the whole of which fits in one kernel.
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
