//! What a backend needs beyond running plans to host a vector env: building the engine a
//! plan names, and checking device-resident actions.
//!
//! - [`cube`]: every CubeCL runtime (wgpu, CUDA); CartPole's hand-written `#[cube]` kernel.
//! - [`cpu`]: the native CPU runtime.

pub mod cpu;
#[cfg(feature = "cube")]
pub mod cube;

use std::sync::Arc;

use cartfuse_fusion::exec::Backend;
use cartfuse_fusion::exec::{KernelLaunch, LaunchLedger};

use crate::cartpole::{CartPoleConfig, CartPoleParams};
use crate::engine::{PlannedEngine, RandomSource, StepEngine, StepPlan, layout_for};
use crate::environment::{EpisodeOptions, GraphEnv};
use crate::error::EnvError;

/// Kernel name of the action check in the launch ledger.
pub const CHECK_ACTIONS_KERNEL: &str = "check_actions";

/// The ledger record of checking `len` device-resident actions (one pass reading them).
pub fn check_actions_record(len: usize) -> KernelLaunch<'static> {
    KernelLaunch {
        kernel: CHECK_ACTIONS_KERNEL,
        elements: len as u64,
        bytes_read: 4 * len as u64,
        bytes_written: 0,
    }
}

/// The CartPole config of a hand-written engine, when `plan` asks for one and `env` is
/// CartPole (the only environment with hand-written kernels); `None` otherwise.
fn hand_written_cartpole<E: GraphEnv>(
    env: &E,
    episode: &EpisodeOptions,
    plan: StepPlan,
) -> Option<CartPoleConfig> {
    if plan != StepPlan::HandWritten {
        return None;
    }
    let params = (env as &dyn std::any::Any).downcast_ref::<CartPoleParams>()?;
    Some(CartPoleConfig {
        params: *params,
        autoreset: episode.autoreset,
        max_episode_steps: episode.max_episode_steps,
    })
}

/// A backend a vector env can run on.
pub trait EnvBackend: Backend + Sized {
    /// The engine `plan` names for `env` on this backend: CartPole's hand-written step
    /// where the plan asks for it, else the planned engine.
    fn engine<E: GraphEnv>(
        &self,
        env: &E,
        n: usize,
        episode: &EpisodeOptions,
        plan: StepPlan,
        ledger: Arc<LaunchLedger>,
    ) -> Result<Box<dyn StepEngine<Self>>, EnvError> {
        match hand_written_cartpole(env, episode, plan) {
            Some(config) => Ok(self.hand_written_cartpole(n, &config, ledger)),
            None => planned_engine(self, env, n, episode, plan, ledger),
        }
    }

    /// CartPole's hand-written step on this runtime over `n` envs.
    fn hand_written_cartpole(
        &self,
        n: usize,
        config: &CartPoleConfig,
        ledger: Arc<LaunchLedger>,
    ) -> Box<dyn StepEngine<Self>>;

    /// Uploads actions of any element type.
    fn upload_actions<A: crate::environment::ActionElement>(&self, actions: &[A]) -> Self::Buffer {
        A::upload(self, actions)
    }

    /// Whether every action in `actions` lies in `env`'s action space.
    fn actions_valid<E: GraphEnv>(
        &self,
        env: &E,
        actions: &Self::Buffer,
        ledger: &LaunchLedger,
    ) -> Result<bool, EnvError>;
}

/// The planned engine `plan` names (every plan but the hand-written one).
pub fn planned_engine<E: GraphEnv, B: Backend>(
    backend: &B,
    env: &E,
    n: usize,
    episode: &EpisodeOptions,
    plan: StepPlan,
    ledger: Arc<LaunchLedger>,
) -> Result<Box<dyn StepEngine<B>>, EnvError> {
    let options = backend.plan_options();
    let (strategy, layout, options) = match plan {
        StepPlan::HandWritten => {
            return Err(EnvError::PlanUnavailable {
                plan: plan.to_string(),
                env: E::ID,
                runtime: backend.runtime_name(),
                reason: "no hand-written kernel exists for this environment on this runtime".into(),
            });
        }
        StepPlan::Graph(strategy) => (strategy, layout_for(strategy), options),
        StepPlan::Custom {
            strategy,
            layout,
            random,
            concat_rule,
        } => (
            strategy,
            layout,
            cartfuse_fusion::plan::PlanOptions {
                opaque_random: random == RandomSource::Opaque,
                concat_rule,
                ..options
            },
        ),
    };
    let draw_ahead = matches!(
        plan,
        StepPlan::Custom {
            random: RandomSource::DrawnAhead,
            ..
        }
    );
    Ok(Box::new(PlannedEngine::new(
        backend,
        env,
        episode,
        (strategy, layout, &options, draw_ahead),
        n,
        ledger,
    )?))
}
