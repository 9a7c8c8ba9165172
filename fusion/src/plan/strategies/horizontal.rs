//! `horizontal`: the kernels of `vertical`, independent ones issued as one launch.

use crate::plan::spec::{CarriedState, FusionRules, Grouping, Steps, StrategySpec};

/// Fewer launches than `vertical`, the same bytes.
pub const SPEC: StrategySpec = StrategySpec {
    name: "horizontal",
    param: None,
    summary: "vertical's kernels, one launch per dependency level",
    rules: Some(FusionRules::VERTICAL),
    fallback: None,
    grouping: Grouping::ByLevel,
    carried: CarriedState::Swapped,
    steps: Steps::One,
    xla_pipeline: false,
    packed_state: false,
};
