//! `partition`: kernels given by the caller through `Plan::from_partition`.

use crate::plan::spec::{CarriedState, Grouping, Steps, StrategySpec};

/// Not buildable by name: [`Plan::build`](crate::plan::Plan::build) refuses it.
pub const SPEC: StrategySpec = StrategySpec {
    name: "partition",
    param: None,
    summary: "kernels given explicitly by the caller",
    rules: None,
    fallback: None,
    grouping: Grouping::EachKernel,
    carried: CarriedState::Swapped,
    steps: Steps::One,
    xla_pipeline: false,
    packed_state: false,
};
