//! `vertical`: producer-consumer fusion with XLA's rules.

use crate::plan::spec::{CarriedState, FusionRules, Grouping, Steps, StrategySpec};

/// XLA instruction fusion plus the fusion merger: one kernel per fusion group.
pub const SPEC: StrategySpec = StrategySpec {
    name: "vertical",
    param: None,
    summary: "producer-consumer fusion with XLA-style rules, one kernel per fusion group",
    rules: Some(FusionRules::VERTICAL),
    fallback: None,
    grouping: Grouping::EachKernel,
    carried: CarriedState::Swapped,
    steps: Steps::One,
    xla_pipeline: false,
    packed_state: false,
};
