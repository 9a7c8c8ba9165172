//! Which engine a vector env runs: a graph under a fusion strategy, or a hand-written kernel.

use std::fmt;
use std::str::FromStr;

use cartfuse_fusion::plan::{PlanError, Strategy};

use crate::graph::StateLayout;

/// Which implementation of the step a vector env runs. Chosen beside the environment's
/// params, never inside them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepPlan {
    /// The environment's hand-written kernel (CartPole: [`crate::cartpole::hand_written`]).
    HandWritten,
    /// The environment's graph under a fusion strategy.
    Graph(Strategy),
    /// A strategy on a chosen state layout, with or without XLA's opaque random op: the
    /// intermediate rows of the study's ablation.
    Custom {
        /// The strategy.
        strategy: Strategy,
        /// How the state is carried.
        layout: StateLayout,
        /// Where the step's random numbers come from.
        random: RandomSource,
        /// `xla-default` only: XLA's rule against fusing a concatenate emitted more than
        /// once (off: the study's patched compiler).
        concat_rule: bool,
    },
}

/// Where a step's random numbers come from: the programs of the study's ablation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RandomSource {
    /// An opaque op of its own (XLA's threefry custom call; `xla-default` only).
    Opaque,
    /// Fused like any other op.
    Fused,
    /// Drawn ahead by one launch for several steps and read as inputs (the study's
    /// "random numbers precomputed"). Draws are keyed by step rather than by reset
    /// number, so resets differ from the other plans' (same distribution).
    DrawnAhead,
}

/// The state layout a strategy runs on: packed where its spec says so (`xla-default`
/// replays the study's baseline, whose state is one packed array), else structure of arrays.
pub fn layout_for(strategy: Strategy) -> StateLayout {
    if strategy.spec().packed_state {
        StateLayout::Packed
    } else {
        StateLayout::StructOfArrays
    }
}

impl StepPlan {
    /// Every plan `cartfuse bench` knows, in ablation order: each strategy, then the
    /// hand-written kernel.
    pub fn all() -> Vec<StepPlan> {
        Strategy::ALL
            .into_iter()
            .map(StepPlan::Graph)
            .chain([StepPlan::HandWritten])
            .collect()
    }

    /// Env steps one call performs (`K` of `fused-xK`).
    pub fn steps_per_call(self) -> u32 {
        match self.strategy() {
            Some(Strategy::FusedSteps(k)) => k,
            _ => 1,
        }
    }

    /// The fusion strategy, for graph plans.
    pub fn strategy(self) -> Option<Strategy> {
        match self {
            StepPlan::HandWritten => None,
            StepPlan::Graph(strategy) | StepPlan::Custom { strategy, .. } => Some(strategy),
        }
    }
}

/// The default plan: the fastest single-step graph plan, `fused`, which every environment
/// and runtime has. (CartPole's hand-written kernel is as fast on lavapipe; see
/// `docs/results-log.md`.)
impl Default for StepPlan {
    fn default() -> Self {
        StepPlan::Graph(Strategy::Fused)
    }
}

impl fmt::Display for StepPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepPlan::HandWritten => f.write_str("hand-written"),
            StepPlan::Graph(strategy) => strategy.fmt(f),
            StepPlan::Custom {
                strategy,
                layout,
                random,
                concat_rule,
            } => {
                let layout = match layout {
                    StateLayout::Packed => "packed state",
                    StateLayout::StructOfArrays => "struct-of-arrays state",
                };
                let random = match random {
                    RandomSource::Opaque => "opaque random",
                    RandomSource::Fused => "fused random",
                    RandomSource::DrawnAhead => "random drawn ahead",
                };
                let concat = if *concat_rule {
                    ""
                } else {
                    ", concat rule patched"
                };
                write!(f, "{strategy} ({layout}, {random}{concat})")
            }
        }
    }
}

impl FromStr for StepPlan {
    type Err = PlanError;

    fn from_str(name: &str) -> Result<Self, PlanError> {
        match name {
            "hand-written" => Ok(StepPlan::HandWritten),
            other => other.parse().map(StepPlan::Graph).map_err(|e| match e {
                PlanError::UnknownStrategy { name, expected } => PlanError::UnknownStrategy {
                    name,
                    expected: format!("`hand-written` or {expected}"),
                },
                e => e,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_plan_is_named_once_beside_every_plan() {
        let error = "fastest".parse::<StepPlan>().unwrap_err().to_string();
        assert!(
            error.starts_with("unknown plan `fastest`: expected `hand-written` or eager, "),
            "{error}"
        );
        assert_eq!(error.matches('`').count(), 4, "{error}");
        assert!(matches!("hand-written".parse(), Ok(StepPlan::HandWritten)));
        assert!(matches!("fused".parse(), Ok(StepPlan::Graph(_))));
    }
}
