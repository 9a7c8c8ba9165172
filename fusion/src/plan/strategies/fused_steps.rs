//! `fused-x<K>`: `fused` repeated for K steps in one launch.

use crate::plan::spec::{CarriedState, FusionRules, Grouping, ParamSpec, Steps, StrategySpec};

/// The most steps one launch runs. Generated kernels loop over the steps, so compile time
/// does not depend on K; the native CPU runtime unrolls them into its op list (about a
/// hundred ops a step for CartPole), which bounds K.
pub const MAX_STEPS: u32 = 4096;

/// Loop-carried state stays in registers between the K steps (the study's loop unrolling).
pub const SPEC: StrategySpec = StrategySpec {
    name: "fused-x",
    param: Some(ParamSpec {
        placeholder: "K",
        min: 1,
        max: MAX_STEPS,
        listed: 10,
    }),
    summary: "fused for 1 <= K <= 4096 steps in one launch (a loop), state in registers",
    rules: Some(FusionRules::FUSED),
    fallback: Some(FusionRules::VERTICAL),
    grouping: Grouping::EachKernel,
    carried: CarriedState::Swapped,
    steps: Steps::Param,
    xla_pipeline: false,
    packed_state: false,
};
