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
use crate::host_outputs::HostOutputs;

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

    /// The bytes of memory buffers can still take on this backend and which memory that is,
    /// when known (checked before a batch is allocated, [`crate::memory`]).
    fn memory_available(&self) -> Option<(u64, String)>;

    /// Whether every action in `actions` lies in `env`'s action space.
    fn actions_valid<E: GraphEnv>(
        &self,
        env: &E,
        actions: &Self::Buffer,
        ledger: &LaunchLedger,
    ) -> Result<bool, EnvError>;

    /// Copies a step's outputs from the engine's buffers into `out`, whose lengths match
    /// them (by default: [`read_outputs`]).
    fn copy_outputs(
        &self,
        from: &OutputPages<'_, Self::Buffer>,
        out: &mut HostOutputs<'_>,
    ) -> Result<(), EnvError> {
        read_outputs(self, from, out)
    }
}

/// Reads every output page to the host, then copies it into `out`.
pub fn read_outputs<B: Backend>(
    backend: &B,
    from: &OutputPages<'_, B::Buffer>,
    out: &mut HostOutputs<'_>,
) -> Result<(), EnvError> {
    let f32s = |pages: &[&B::Buffer], out: &mut [f32]| {
        copy_pages(pages, out, |page| backend.read_f32(page))
    };
    f32s(&from.obs, out.obs)?;
    f32s(&from.reward, out.reward)?;
    copy_pages(&from.terminated, out.terminated, |p| backend.read_flags(p))?;
    copy_pages(&from.truncated, out.truncated, |p| backend.read_flags(p))?;
    if let (Some(pages), Some(out)) = (&from.final_obs, out.final_obs.as_deref_mut()) {
        f32s(pages, out)?;
    }
    Ok(())
}

/// The engine buffers holding one call's outputs, each as its pages in step order (one
/// buffer unless a `fused-xK` call ran over several launches).
pub struct OutputPages<'b, Buf> {
    /// Observations.
    pub obs: Vec<&'b Buf>,
    /// Rewards.
    pub reward: Vec<&'b Buf>,
    /// Terminated flags (`u32`).
    pub terminated: Vec<&'b Buf>,
    /// Truncated flags (`u32`).
    pub truncated: Vec<&'b Buf>,
    /// `SameStep` only: final observations.
    pub final_obs: Option<Vec<&'b Buf>>,
}

/// Reads `pages` in order into consecutive parts of `out`.
fn copy_pages<Buf, T: Copy>(
    pages: &[&Buf],
    out: &mut [T],
    read: impl Fn(&Buf) -> Result<Vec<T>, cartfuse_fusion::exec::ReadError>,
) -> Result<(), EnvError> {
    let mut at = 0;
    for page in pages {
        let values = read(page)?;
        out[at..at + values.len()].copy_from_slice(&values);
        at += values.len();
    }
    Ok(())
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
