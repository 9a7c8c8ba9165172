//! Every strategy's [`StrategySpec`]: the one table the planner, the parser, error messages
//! and help text read. A new strategy is a new spec here plus its variant in
//! [`Strategy`](super::Strategy).

use super::spec::{CarriedState, FusionRules, Grouping, ParamSpec, StrategySpec};

/// What a strategy is unless its spec says otherwise: kernels given by the caller, one
/// launch per kernel, carried state swapped, state as structure of arrays.
const BASE: StrategySpec = StrategySpec {
    name: "",
    param: None,
    summary: "",
    rules: None,
    fallback: None,
    grouping: Grouping::EachKernel,
    carried: CarriedState::Swapped,
    packed_state: false,
};

/// `eager`: one kernel per op, as an unfused framework runs it.
///
/// Every intermediate is written to memory and read back.
pub const EAGER: StrategySpec = StrategySpec {
    name: "eager",
    summary: "one kernel per op; every intermediate goes through memory",
    rules: Some(FusionRules::Eager),
    ..BASE
};

/// `vertical`: producer-consumer fusion with XLA's rules.
///
/// XLA's instruction fusion plus the fusion merger, with XLA's cost rule
/// ([`cost`](super::cost)): one kernel per fusion group. Two rules are not XLA's: the
/// duplication of cheap producers is capped by
/// [`PlanOptions::duplication_budget`](super::PlanOptions::duplication_budget), and a pack
/// with several users stays a boundary (XLA's is the concatenate rule of `xla-default`).
pub const VERTICAL: StrategySpec = StrategySpec {
    name: "vertical",
    summary: "producer-consumer fusion with XLA-style rules, one kernel per fusion group",
    rules: Some(FusionRules::Vertical),
    ..BASE
};

/// `horizontal`: the kernels of `vertical`, independent ones issued as one launch.
///
/// Fewer launches than `vertical`, the same bytes.
pub const HORIZONTAL: StrategySpec = StrategySpec {
    name: "horizontal",
    summary: "vertical's kernels, one launch per dependency level",
    rules: Some(FusionRules::Vertical),
    grouping: Grouping::ByLevel,
    ..BASE
};

/// `fused`: vertical plus multi-output (sibling) fusion.
///
/// The whole step in one kernel where reductions allow; falls back to `vertical` when one
/// kernel would bind more buffers than the device allows.
pub const FUSED: StrategySpec = StrategySpec {
    name: "fused",
    summary: "vertical + sibling fusion: the fewest kernels reductions allow",
    rules: Some(FusionRules::Fused),
    fallback: Some(FusionRules::Vertical),
    ..BASE
};

/// The most steps one `fused-x<K>` launch runs. Generated kernels loop over the steps, so compile time
/// does not depend on K; the native CPU runtime unrolls them into its op list (about a
/// hundred ops a step for CartPole), which bounds K.
pub const MAX_STEPS: u32 = 4096;

/// `fused-x<K>`: `fused` repeated for K steps in one launch.
///
/// Loop-carried state stays in registers between the K steps (the study's loop unrolling).
pub const FUSED_STEPS: StrategySpec = StrategySpec {
    name: "fused-x",
    param: Some(ParamSpec {
        placeholder: "K",
        min: 1,
        max: MAX_STEPS,
        listed: 10,
    }),
    summary: "fused for 1 <= K <= 4096 steps in one launch (a loop), state in registers",
    rules: Some(FusionRules::Fused),
    fallback: Some(FusionRules::Vertical),
    ..BASE
};

/// `xla-default`: XLA's GPU fusion pipeline ([`xla`](crate::plan::xla)) on the study's
/// baseline program.
///
/// XLA's passes and limits, with the baseline's program: opaque random ops (custom calls),
/// loop-carried state packed in one array (a concatenate with several users) and copied
/// between steps.
pub const XLA_DEFAULT: StrategySpec = StrategySpec {
    name: "xla-default",
    summary: "XLA's fusion pipeline on the baseline: opaque random op, packed state, state copy",
    rules: Some(FusionRules::Xla),
    grouping: Grouping::HorizontalLoopFusion,
    carried: CarriedState::CopiedBack,
    packed_state: true,
    ..BASE
};

/// `partition`: kernels given by the caller through `Plan::from_partition`.
///
/// Not buildable by name: [`Plan::build`](crate::plan::Plan::build) refuses it.
pub const PARTITION: StrategySpec = StrategySpec {
    name: "partition",
    summary: "kernels given explicitly by the caller",
    ..BASE
};
