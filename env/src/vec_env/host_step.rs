//! The host step of a [`VecEnv`]: actions checked on the host, one call stepped, its outputs
//! written into memory the caller owns ([`HostOutputs`]) in one transfer where the engine
//! allows.

use super::{StepOutput, VecEnv};
use crate::engine::StepBuffer;
use crate::environment::{ActionElement, GraphEnv};
use crate::error::EnvError;
use crate::host_outputs::{HostOutputs, OwnedOutputs};
use crate::params::AutoresetMode;
use crate::runtime::{EnvBackend, OutputPages};

impl<E: GraphEnv, B: EnvBackend> VecEnv<E, B> {
    /// Checks that `actions` hold one action per env and step of a call, each in the
    /// action space ([`EnvError::InvalidAction`] names the first env that is not): what
    /// every host step checks first, for callers that write actions into a buffer of their
    /// own.
    pub fn check_actions(&self, actions: &[E::Action]) -> Result<(), EnvError> {
        self.check_count("actions", actions.len(), self.steps_per_call())?;
        let space = self.env.action_space();
        if let Some((index, value)) =
            crate::spaces::first_invalid(actions, |a| E::Action::is_valid(&space, a))
        {
            return Err(EnvError::InvalidAction {
                env: index % self.num_envs,
                value: format!("{value:?}"),
                space: crate::spaces::describe_action_space(&space),
            });
        }
        Ok(())
    }

    /// Steps every env with its action and copies the results to the host.
    pub fn step(&mut self, actions: &[E::Action]) -> Result<StepOutput, EnvError> {
        let mut out = self.owned_outputs();
        self.step_into(actions, &mut out.as_host())?;
        Ok(StepOutput::from_owned(out, E::OBS_DIM))
    }

    /// Zeroed host memory for one call's outputs ([`Self::step_into`] writes them).
    pub fn owned_outputs(&self) -> OwnedOutputs {
        let same_step = self.episode.autoreset == AutoresetMode::SameStep;
        OwnedOutputs::zeroed(self.steps_per_call() * self.num_envs, E::OBS_DIM, same_step)
    }

    /// Steps every env with its action (validated first) and writes the outputs into `out`
    /// (`steps_per_call * num_envs` entries each; final observations exactly in `SameStep`).
    ///
    /// Engines that can (the native CPU step) write `out` from every worker thread while
    /// they step. On a device a step is one round trip: the actions are written into a
    /// buffer allocated at the first step, the step is launched, and the outputs come back
    /// in one transfer where the engine keeps them in one arena
    /// ([`EnvBackend::copy_outputs`]).
    pub fn step_into(
        &mut self,
        actions: &[E::Action],
        out: &mut HostOutputs<'_>,
    ) -> Result<(), EnvError> {
        let calls = self.steps_per_call();
        self.check_actions(actions)?;
        let same_step = self.episode.autoreset == AutoresetMode::SameStep;
        out.check(calls * self.num_envs, E::OBS_DIM, same_step)?;
        if !self.is_reset() {
            return Err(EnvError::NotReset);
        }
        // Validated on the host: nothing is left for the device action check to find.
        self.last_actions = None;
        let words = E::Action::words(actions);
        if let Some(stepped) = self.engine.step_host(words, out) {
            return stepped;
        }
        let backend = &self.backend;
        let buffer = (self.host_actions).get_or_insert_with(|| backend.alloc(words.len()));
        backend.write_u32(buffer, words)?;
        self.engine.step(buffer)?;
        self.copy_outputs(out).map(drop)
    }

    /// Copies the last call's outputs into `out` in one round trip where the engine allows,
    /// returning the invalid-action flag when it came with them.
    pub(super) fn copy_outputs(&self, out: &mut HostOutputs<'_>) -> Result<Option<u32>, EnvError> {
        let same_step = self.episode.autoreset == AutoresetMode::SameStep;
        let engine = &self.engine;
        let pages = OutputPages {
            obs: engine.pages(StepBuffer::Obs),
            reward: engine.pages(StepBuffer::Reward),
            terminated: engine.pages(StepBuffer::Terminated),
            truncated: engine.pages(StepBuffer::Truncated),
            final_obs: same_step.then(|| engine.pages(StepBuffer::FinalObs)),
            arena: engine.output_arena(),
        };
        self.backend.copy_outputs(&pages, out)
    }
}
