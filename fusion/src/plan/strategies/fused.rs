//! `fused`: vertical plus multi-output (sibling) fusion.

use crate::plan::spec::{CarriedState, FusionRules, Grouping, Steps, StrategySpec};

/// The whole step in one kernel where reductions allow; falls back to `vertical` when one
/// kernel would bind more buffers than the device allows.
pub const SPEC: StrategySpec = StrategySpec {
    name: "fused",
    param: None,
    summary: "vertical + sibling fusion: the fewest kernels reductions allow",
    rules: Some(FusionRules::FUSED),
    fallback: Some(FusionRules::VERTICAL),
    grouping: Grouping::EachKernel,
    carried: CarriedState::Swapped,
    steps: Steps::One,
    xla_pipeline: false,
    packed_state: false,
};
