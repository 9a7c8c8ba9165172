//! How a step runs: the hand-written kernel, or the CartPole graph under a fusion plan.

mod hand_written;
mod planned;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use cartfuse_fusion::launch::LaunchLedger;
use cartfuse_fusion::plan::{PlanError, PlanOptions, Strategy};
use cubecl::prelude::*;
use cubecl::server::Handle;

pub(crate) use hand_written::{
    DEVICE_BYTES_PER_ENV, EnvLaunch, HandWrittenEngine, LARGEST_BUFFER_BYTES_PER_ENV,
};
pub use hand_written::{RESET_KERNEL, STEP_KERNEL, reset_bytes_per_env, step_bytes_per_env};
pub(crate) use planned::PlannedEngine;
pub use planned::layout_for;

use crate::error::EnvError;
use crate::graph::StateLayout;
use crate::params::CartPoleConfig;

/// Which implementation of the step a [`CartPoleVecEnv`](crate::CartPoleVecEnv) runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepPlan {
    /// The hand-written `#[cube]` kernel of [`crate::kernel`]: one launch per step.
    HandWritten,
    /// The CartPole graph of [`crate::graph`] under a fusion strategy.
    Graph(Strategy),
    /// A strategy on a chosen state layout, with or without XLA's opaque random op: the
    /// intermediate rows of the study's ablation.
    Custom {
        /// The strategy.
        strategy: Strategy,
        /// How the state is carried.
        layout: StateLayout,
        /// `xla-default` only: keep random ops opaque.
        opaque_random: bool,
    },
}

impl StepPlan {
    /// Every plan `cartfuse bench` knows: every named strategy, then the hand-written kernel.
    pub const ALL: [StepPlan; Strategy::ALL.len() + 1] = {
        let mut all = [StepPlan::HandWritten; Strategy::ALL.len() + 1];
        let mut i = 0;
        while i < Strategy::ALL.len() {
            all[i] = StepPlan::Graph(Strategy::ALL[i]);
            i += 1;
        }
        all
    };
}

/// The default plan: the fastest single-step plan measured on lavapipe (see the README's
/// plan table): the hand-written kernel, which draws reset states only for lanes that reset.
impl Default for StepPlan {
    fn default() -> Self {
        StepPlan::HandWritten
    }
}

impl StepPlan {
    /// Env steps one call performs (`K` of `fused-xK`).
    pub fn steps_per_call(self) -> u32 {
        match self {
            StepPlan::Graph(Strategy::FusedSteps(k))
            | StepPlan::Custom {
                strategy: Strategy::FusedSteps(k),
                ..
            } => k,
            _ => 1,
        }
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
                opaque_random,
            } => {
                let layout = match layout {
                    StateLayout::Packed => "packed state",
                    StateLayout::StructOfArrays => "struct-of-arrays state",
                };
                let random = if *opaque_random {
                    "opaque random"
                } else {
                    "fused random"
                };
                write!(f, "{strategy} ({layout}, {random})")
            }
        }
    }
}

impl FromStr for StepPlan {
    type Err = PlanError;

    fn from_str(name: &str) -> Result<Self, PlanError> {
        match name {
            "hand-written" => Ok(StepPlan::HandWritten),
            other => other
                .parse()
                .map(StepPlan::Graph)
                .map_err(|_| PlanError::UnknownStrategy(format!("{other}` (or `hand-written`"))),
        }
    }
}

/// The running engine of one vector env.
pub(crate) enum Engine<R: Runtime> {
    HandWritten(Box<HandWrittenEngine>),
    Planned(Box<PlannedEngine<R>>),
}

impl<R: Runtime> Engine<R> {
    pub fn new(
        client: &ComputeClient<R>,
        n: usize,
        config: &CartPoleConfig,
        ledger: Arc<LaunchLedger>,
    ) -> Result<Self, EnvError> {
        Ok(match config.plan {
            StepPlan::HandWritten => {
                Engine::HandWritten(Box::new(HandWrittenEngine::new(client, n, config)))
            }
            StepPlan::Graph(strategy) => {
                let options = PlanOptions::for_device(client);
                let layout = layout_for(strategy);
                Engine::Planned(Box::new(PlannedEngine::new(
                    client.clone(),
                    n,
                    config,
                    (strategy, layout, &options),
                    ledger,
                )?))
            }
            StepPlan::Custom {
                strategy,
                layout,
                opaque_random,
            } => {
                let options = PlanOptions {
                    opaque_random,
                    ..PlanOptions::for_device(client)
                };
                Engine::Planned(Box::new(PlannedEngine::new(
                    client.clone(),
                    n,
                    config,
                    (strategy, layout, &options),
                    ledger,
                )?))
            }
        })
    }

    pub fn steps_per_call(&self) -> u32 {
        match self {
            Engine::HandWritten(_) => 1,
            Engine::Planned(engine) => engine.steps_per_call(),
        }
    }

    pub fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        if let Engine::Planned(engine) = self {
            engine.set_ledger(ledger);
        }
    }

    pub fn reset(&mut self, launch: EnvLaunch<'_, R>, restart: bool) -> Result<(), EnvError> {
        match self {
            Engine::HandWritten(engine) => {
                engine.reset(launch, restart);
                Ok(())
            }
            Engine::Planned(engine) => engine.reset(launch.seed, restart),
        }
    }

    pub fn step(&mut self, launch: EnvLaunch<'_, R>, actions: &Handle) -> Result<(), EnvError> {
        match self {
            Engine::HandWritten(engine) => {
                engine.step(launch, actions);
                Ok(())
            }
            Engine::Planned(engine) => engine.step(actions),
        }
    }

    pub fn obs(&self) -> &Handle {
        match self {
            Engine::HandWritten(engine) => &engine.outputs.obs,
            Engine::Planned(engine) => engine.obs(),
        }
    }

    pub fn reward(&self) -> &Handle {
        match self {
            Engine::HandWritten(engine) => &engine.outputs.reward,
            Engine::Planned(engine) => engine.output("reward"),
        }
    }

    pub fn terminated(&self) -> &Handle {
        match self {
            Engine::HandWritten(engine) => &engine.outputs.terminated,
            Engine::Planned(engine) => engine.output("terminated"),
        }
    }

    pub fn truncated(&self) -> &Handle {
        match self {
            Engine::HandWritten(engine) => &engine.outputs.truncated,
            Engine::Planned(engine) => engine.output("truncated"),
        }
    }

    /// `[n, 4]` final observations (`SameStep` only).
    pub fn final_obs(&self) -> Option<&Handle> {
        match self {
            Engine::HandWritten(engine) => Some(&engine.outputs.final_obs),
            Engine::Planned(engine) => engine.final_obs(),
        }
    }

    /// The hand-written kernel's invalid-action flag (planned engines check separately).
    pub fn invalid_action_flag(&mut self) -> Option<&mut Handle> {
        match self {
            Engine::HandWritten(engine) => Some(&mut engine.outputs.invalid_action),
            Engine::Planned(_) => None,
        }
    }

    pub fn set_state(
        &mut self,
        client: &ComputeClient<R>,
        columns: [Vec<f32>; 4],
    ) -> Result<(), EnvError> {
        match self {
            Engine::HandWritten(engine) => {
                engine.set_state(client, columns);
                Ok(())
            }
            Engine::Planned(engine) => engine.set_state(columns),
        }
    }

    pub fn state_columns(&self, client: &ComputeClient<R>) -> Result<[Vec<f32>; 4], EnvError> {
        match self {
            Engine::HandWritten(engine) => engine.state_columns(client),
            Engine::Planned(engine) => engine.state_columns(),
        }
    }

    pub fn elapsed(&self, client: &ComputeClient<R>) -> Result<Vec<u32>, EnvError> {
        match self {
            Engine::HandWritten(engine) => engine.elapsed(client),
            Engine::Planned(engine) => engine.elapsed(),
        }
    }
}
