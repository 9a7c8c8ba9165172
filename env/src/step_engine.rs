//! What an engine is, below every environment: the [`StepEngine`] trait every engine
//! implements (a planned graph or a hand-written kernel), the buffers a step hands to the
//! vector env, each lane's keys ([`keys`]), and [`HandWritten`], the hand-written step an
//! environment may offer (its engines per runtime family).

mod hand_written;
mod keys;

use std::sync::Arc;

use cartfuse_fusion::exec::LaunchLedger;
use cartfuse_fusion::exec::{Arena, Backend};

use crate::error::EnvError;
use crate::host_outputs::HostOutputs;

pub use hand_written::{HandWritten, NoHandWritten};
pub use keys::{LaneKeys, ResetRequest, Seeding};

/// A step output an engine leaves in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepBuffer {
    /// `[n, obs_dim]` row-major `f32` observations (after a reset: the reset observations).
    Obs,
    /// `[n]` `f32` rewards.
    Reward,
    /// `[n]` `u32` flags.
    Terminated,
    /// `[n]` `u32` flags.
    Truncated,
    /// `SameStep` only: `[n, obs_dim]` observations the episodes ended on.
    FinalObs,
}

impl StepBuffer {
    /// The name of the step graph's output holding it.
    pub fn name(self) -> &'static str {
        match self {
            StepBuffer::Obs => "obs",
            StepBuffer::Reward => "reward",
            StepBuffer::Terminated => "terminated",
            StepBuffer::Truncated => "truncated",
            StepBuffer::FinalObs => "final_obs",
        }
    }
}

/// The outputs a host step reads, allocated as one [`Arena`] so that one transfer brings
/// them back, and which part holds which.
#[derive(Debug, Clone)]
pub struct OutputArena<Buf> {
    /// The parts.
    pub arena: Arena<Buf>,
    /// The output each of the first parts holds, in part order.
    pub outputs: Vec<StepBuffer>,
    /// The part holding the invalid-action flag ([`ActionFlag`]), if the arena has one.
    pub flag: Option<usize>,
}

impl<Buf> OutputArena<Buf> {
    /// The part holding `which`, if the arena holds it.
    pub fn part(&self, which: StepBuffer) -> Option<&Buf> {
        let index = self.outputs.iter().position(|o| *o == which)?;
        Some(&self.arena.parts[index])
    }

    /// The invalid-action flag's part, if the arena has one.
    pub fn flag(&self) -> Option<&Buf> {
        self.flag.map(|i| &self.arena.parts[i])
    }
}

/// Where invalid device-resident actions are flagged: one word, non-zero once an action
/// outside the action space was stepped.
#[derive(Debug)]
pub struct ActionFlag<'a, Buf> {
    /// The word.
    pub buffer: &'a Buf,
    /// The step raises it itself (the hand-written kernels); otherwise the vector env runs a
    /// check of the last actions into it before reading it.
    pub raised_by_step: bool,
}

/// The running step of one vector env: its buffers and its launches.
///
/// Engines validate nothing about actions' values (the vector env does, or the device flags
/// them); they own every buffer and record every launch in their ledger.
pub trait StepEngine<B: Backend>: Send {
    /// Env steps one call performs (`K` of `fused-xK`, else 1).
    fn steps_per_call(&self) -> u32;
    /// Records launches in `ledger` from now on.
    fn set_ledger(&mut self, ledger: Arc<LaunchLedger>);
    /// Resets the lanes `request` selects, seeded and bounded as it says. Draws happen
    /// where the step runs.
    fn reset(&mut self, request: &ResetRequest<'_>) -> Result<(), EnvError>;
    /// Enqueues one call of the step with `actions` (`steps_per_call * n` values).
    fn step(&mut self, actions: &B::Buffer) -> Result<(), EnvError>;
    /// Steps once with host `actions` (`n` words: `u32` values or `f32` bits, already
    /// validated) and writes the outputs straight into `out` (lengths already checked), for
    /// engines that can; `None` for the others, which the vector env steps into their own
    /// buffers and copies from.
    fn step_host(
        &mut self,
        actions: &[u32],
        out: &mut HostOutputs<'_>,
    ) -> Option<Result<(), EnvError>> {
        let _ = (actions, out);
        None
    }
    /// An output buffer, valid until the next step or reset; `None` when the engine does
    /// not write it, or writes it over several buffers ([`Self::pages`]).
    fn buffer(&self, which: StepBuffer) -> Option<&B::Buffer>;
    /// The buffers holding an output, in step order: the one [`Self::buffer`] returns,
    /// unless a `fused-xK` call's steps ran over several launches, each writing its own
    /// steps.
    fn pages(&self, which: StepBuffer) -> Vec<&B::Buffer> {
        self.buffer(which).into_iter().collect()
    }
    /// The outputs of the last call as one arena, when the engine allocated them so and
    /// they hold what the vector env reads now (not a reset's observations, not pages).
    fn output_arena(&self) -> Option<&OutputArena<B::Buffer>> {
        None
    }
    /// Where invalid device actions are flagged, if the engine keeps a flag.
    fn action_flag(&self) -> Option<ActionFlag<'_, B::Buffer>> {
        None
    }
    /// Overwrites the physical state, one column per component; step counters restart at
    /// 0 and no autoreset is pending (each lane's reset stream goes on).
    fn set_state(&mut self, columns: &[Vec<f32>]) -> Result<(), EnvError>;
    /// The physical state, one column per component.
    fn state_columns(&self) -> Result<Vec<Vec<f32>>, EnvError>;
    /// Steps taken in each env's current episode.
    fn elapsed(&self) -> Result<Vec<u32>, EnvError>;
}
