//! `xla-default`: the boundaries the study found in XLA's baseline CartPole.

use crate::plan::spec::{CarriedState, FusionRules, Grouping, Steps, StrategySpec};

/// Opaque random ops, a multi-user pack not fused into its users, loop-carried state packed
/// in one array and copied between steps.
pub const SPEC: StrategySpec = StrategySpec {
    name: "xla-default",
    param: None,
    summary: "XLA's baseline boundaries: opaque random op, multi-user pack, state copy",
    rules: Some(FusionRules {
        random_opaque: true,
        ..FusionRules::VERTICAL
    }),
    fallback: None,
    grouping: Grouping::EachKernel,
    carried: CarriedState::CopiedBack,
    steps: Steps::One,
    packed_state: true,
};
