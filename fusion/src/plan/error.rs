//! Why a plan could not be built.

use crate::graph::NodeId;

/// Why a plan could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// An unknown strategy name.
    #[error("unknown plan `{name}`: expected {expected}")]
    UnknownStrategy {
        /// The name given.
        name: String,
        /// The plans accepted, as the message lists them ([`super::Strategy::expected`], and
        /// a runtime's own plans where it offers some).
        expected: String,
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
