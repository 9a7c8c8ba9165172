//! `xla-default`: XLA's GPU fusion pipeline ([`xla`](crate::plan::xla)) on the study's
//! baseline program.

use crate::plan::spec::{CarriedState, FusionRules, Grouping, Steps, StrategySpec};

/// XLA's passes and limits, with the baseline's program: opaque random ops (custom calls),
/// loop-carried state packed in one array (a concatenate with several users) and copied
/// between steps.
pub const SPEC: StrategySpec = StrategySpec {
    name: "xla-default",
    param: None,
    summary: "XLA's fusion pipeline on the baseline: opaque random op, packed state, state copy",
    rules: Some(FusionRules {
        random_opaque: true,
        ..FusionRules::VERTICAL
    }),
    fallback: None,
    grouping: Grouping::HorizontalLoopFusion,
    carried: CarriedState::CopiedBack,
    steps: Steps::One,
    xla_pipeline: true,
    packed_state: true,
};
