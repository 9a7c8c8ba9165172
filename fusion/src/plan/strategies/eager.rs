//! `eager`: one kernel per op, as an unfused framework runs it.

use crate::plan::spec::{CarriedState, FusionRules, Grouping, Steps, StrategySpec};

/// Every intermediate is written to memory and read back.
pub const SPEC: StrategySpec = StrategySpec {
    name: "eager",
    param: None,
    summary: "one kernel per op; every intermediate goes through memory",
    rules: Some(FusionRules::EAGER),
    fallback: None,
    grouping: Grouping::EachKernel,
    carried: CarriedState::Swapped,
    steps: Steps::One,
    xla_pipeline: false,
    packed_state: false,
};
