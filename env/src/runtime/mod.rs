//! What a backend needs beyond running plans to host a vector env: building the engine a
//! plan names, and checking device-resident actions.
//!
//! - [`cube`]: every CubeCL runtime (wgpu, CUDA).
//! - [`cpu`]: the native CPU runtime.

pub mod cpu;
#[cfg(feature = "cube")]
pub mod cube;

use std::sync::Arc;

use cartfuse_fusion::exec::{Arena, Backend};
use cartfuse_fusion::exec::{KernelLaunch, LaunchLedger};

use crate::engine::{
    HandWritten, OutputArena, PlannedEngine, RandomSource, StepBuffer, StepEngine, StepPlan,
    layout_for,
};
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

/// A backend a vector env can run on.
pub trait EnvBackend: Backend + Sized {
    /// The engine `plan` names for `env` on this backend: the hand-written step `env`
    /// offers where the plan asks for it and it is written for this backend, else the
    /// planned engine (which refuses `hand-written`).
    fn engine<E: GraphEnv>(
        &self,
        env: &E,
        n: usize,
        episode: &EpisodeOptions,
        plan: StepPlan,
        ledger: Arc<LaunchLedger>,
    ) -> Result<Box<dyn StepEngine<Self>>, EnvError> {
        if plan == StepPlan::HandWritten
            && let Some(engine) = env
                .hand_written(episode)
                .and_then(|kernels| self.hand_written(&kernels, n, ledger.clone()))
        {
            return Ok(engine);
        }
        planned_engine(self, env, n, episode, plan, ledger)
    }

    /// The engine of `kernels`, an environment's hand-written step, on this backend over
    /// `n` envs (`None` where it is not written for this backend's family).
    fn hand_written<K: HandWritten>(
        &self,
        kernels: &K,
        n: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Option<Box<dyn StepEngine<Self>>>;

    /// Uploads actions of any element type.
    fn upload_actions<A: crate::environment::ActionElement>(&self, actions: &[A]) -> Self::Buffer {
        A::upload(self, actions)
    }

    /// The bytes of memory buffers can still take on this backend and which memory that is,
    /// when known (checked before a batch is allocated, [`crate::memory`]).
    fn memory_available(&self) -> Option<(u64, String)>;

    /// Enqueues a check of `actions` against `env`'s action space that leaves `flag` (one
    /// word) non-zero when any lies outside it, zero otherwise; nothing is read back.
    fn flag_invalid_actions<E: GraphEnv>(
        &self,
        env: &E,
        actions: &Self::Buffer,
        flag: &Self::Buffer,
        ledger: &LaunchLedger,
    ) -> Result<(), EnvError>;

    /// Copies a step's outputs from the engine's buffers into `out`, whose lengths match
    /// them, and returns the invalid-action flag when it came with them (by default:
    /// [`read_outputs`]).
    fn copy_outputs(
        &self,
        from: &OutputPages<'_, Self::Buffer>,
        out: &mut HostOutputs<'_>,
    ) -> Result<Option<u32>, EnvError> {
        read_outputs(self, from, out)
    }
}

/// Reads the outputs to the host into `out` in one round trip: the engine's arena in one
/// transfer where it keeps one (with the invalid-action flag, returned), else every page.
pub fn read_outputs<B: Backend>(
    backend: &B,
    from: &OutputPages<'_, B::Buffer>,
    out: &mut HostOutputs<'_>,
) -> Result<Option<u32>, EnvError> {
    let same_step = out.final_obs.is_some().then_some(StepBuffer::FinalObs);
    let wanted = [
        StepBuffer::Obs,
        StepBuffer::Reward,
        StepBuffer::Terminated,
        StepBuffer::Truncated,
    ];
    let mut wanted = wanted.into_iter().chain(same_step);
    if let Some(arena) = from.arena {
        if let Some(missing) = wanted.find(|o| arena.part(*o).is_none()) {
            return Err(EnvError::Unsupported(format!(
                "the engine's output arena lacks {}",
                missing.name()
            )));
        }
        let mut flag = None;
        let mut sink = OutputSink::new(out);
        backend.read_arena(
            &arena.arena,
            &mut |part, words| match arena.outputs.get(part) {
                Some(which) => sink.write(*which, words),
                None if arena.flag == Some(part) => flag = Some(words[0]),
                None => {}
            },
        )?;
        return Ok(flag);
    }
    let mut parts = Vec::new();
    let mut routes = Vec::new();
    for which in wanted {
        for page in from.pages(which) {
            parts.push((*page).clone());
            routes.push(which);
        }
    }
    let pages = Arena { parts, whole: None };
    let mut sink = OutputSink::new(out);
    backend.read_arena(&pages, &mut |part, words| sink.write(routes[part], words))?;
    Ok(None)
}

/// Writes outputs read from the device into host outputs, each output's pages one after
/// another.
struct OutputSink<'o, 'a> {
    out: &'o mut HostOutputs<'a>,
    /// Values of each output written so far, by [`StepBuffer`] order.
    written: [usize; 5],
}

impl<'o, 'a> OutputSink<'o, 'a> {
    fn new(out: &'o mut HostOutputs<'a>) -> Self {
        Self {
            out,
            written: [0; 5],
        }
    }

    /// The next `words.len()` values of output `which`.
    fn write(&mut self, which: StepBuffer, words: &[u32]) {
        let at = &mut self.written[which as usize];
        let range = *at..*at + words.len();
        *at = range.end;
        let floats =
            |to: &mut [f32]| to[range.clone()].copy_from_slice(bytemuck::cast_slice(words));
        let flags = |to: &mut [bool]| {
            for (flag, word) in to[range.clone()].iter_mut().zip(words) {
                *flag = *word != 0;
            }
        };
        match which {
            StepBuffer::Obs => floats(self.out.obs),
            StepBuffer::Reward => floats(self.out.reward),
            StepBuffer::Terminated => flags(self.out.terminated),
            StepBuffer::Truncated => flags(self.out.truncated),
            StepBuffer::FinalObs => {
                if let Some(rows) = self.out.final_obs.as_deref_mut() {
                    floats(rows);
                }
            }
        }
    }
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
    /// The same outputs as one arena, when the engine keeps them so.
    pub arena: Option<&'b OutputArena<Buf>>,
}

impl<Buf> OutputPages<'_, Buf> {
    /// The pages of output `which` (none for final observations outside `SameStep`).
    pub fn pages(&self, which: StepBuffer) -> &[&Buf] {
        match which {
            StepBuffer::Obs => &self.obs,
            StepBuffer::Reward => &self.reward,
            StepBuffer::Terminated => &self.terminated,
            StepBuffer::Truncated => &self.truncated,
            StepBuffer::FinalObs => self.final_obs.as_deref().unwrap_or(&[]),
        }
    }
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
