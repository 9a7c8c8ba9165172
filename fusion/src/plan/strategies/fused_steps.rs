//! `fused-x<K>`: `fused` repeated for K steps in one launch.

use crate::plan::spec::{CarriedState, FusionRules, Grouping, ParamSpec, Steps, StrategySpec};

/// Loop-carried state stays in registers between the K steps (the study's loop unrolling).
pub const SPEC: StrategySpec = StrategySpec {
    name: "fused-x",
    param: Some(ParamSpec {
        placeholder: "K",
        min: 1,
        listed: 10,
    }),
    summary: "fused for K >= 1 steps in one launch, state in registers",
    rules: Some(FusionRules::FUSED),
    fallback: Some(FusionRules::VERTICAL),
    grouping: Grouping::EachKernel,
    carried: CarriedState::Swapped,
    steps: Steps::Param,
    packed_state: false,
};
