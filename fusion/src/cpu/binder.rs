//! [`Binder`]: how a launch's plan slots and pinned nodes map to the executor's buffers and
//! pinned values, read by both engines when they build a launch (the interpreter's chunk
//! program and the compiled engine's C).

use crate::graph::NodeId;
use crate::plan::Slot;

/// Maps the launch's bindings and pinned values to the executor's numbering.
pub struct Binder<'a> {
    /// Executor buffer of a plan slot.
    pub buffer: &'a dyn Fn(Slot) -> u32,
    /// Pinned value of a constant or param node.
    pub pin: &'a dyn Fn(NodeId) -> u32,
}
