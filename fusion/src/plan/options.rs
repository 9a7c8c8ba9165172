//! Knobs of the planner.

/// Knobs of the planner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanOptions {
    /// How many op instances vertical fusion may duplicate in total (XLA duplicates cheap
    /// producers into several consumers rather than materialize them).
    pub duplication_budget: usize,
    /// The most buffers one kernel may bind (the device's storage-buffer limit, minus the
    /// two params buffers).
    pub max_bindings: usize,
    /// Whether XLA's pipeline (`xla-default`) sees random ops as opaque custom calls (XLA's
    /// threefry in JAX of 2022), fused into nothing: on (XLA's baseline). Off replays the
    /// study's "random numbers fused" step of the ablation.
    pub opaque_random: bool,
    /// XLA's rule against fusing a concatenate emitted more than once in a fusion
    /// (`xla-default`): on. Off replays the study's patched compiler.
    pub concat_rule: bool,
}

impl PlanOptions {
    /// Buffers a generated kernel binds besides its plan slots: the two params buffers.
    pub const RESERVED_BINDINGS: usize = 2;

    /// Default options for a device that binds at most `device_limit` storage buffers a
    /// launch (cubecl's `max_bindings`, which already leaves room for its metadata buffer).
    pub fn for_device(device_limit: usize) -> Self {
        Self {
            max_bindings: device_limit.saturating_sub(Self::RESERVED_BINDINGS),
            ..Self::default()
        }
    }
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            duplication_budget: 16,
            max_bindings: 64,
            opaque_random: true,
            concat_rule: true,
        }
    }
}
