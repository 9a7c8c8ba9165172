//! A step's outputs: on the host ([`StepOutput`]), or still on the backend ([`DeviceStep`],
//! after a step with [`DeviceActions`]), and the reads that bring them over.

use cartfuse_fusion::exec::ReadError;

use super::VecEnv;
use crate::engine::StepBuffer;
use crate::environment::GraphEnv;
use crate::error::EnvError;
use crate::host_outputs::OwnedOutputs;
use crate::params::AutoresetMode;
use crate::runtime::EnvBackend;

/// What [`VecEnv::step`] returns, one entry (or row) per env.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutput {
    /// Observations after the step, `[num_envs, obs_dim]` row-major.
    pub obs: Vec<f32>,
    /// Length of one observation row.
    pub obs_dim: usize,
    /// Rewards (0 on a `NextStep` reset step).
    pub reward: Vec<f32>,
    /// The episode ended on this step (gymnasium's `terminated`).
    pub terminated: Vec<bool>,
    /// The episode reached `max_episode_steps` on this step.
    pub truncated: Vec<bool>,
    /// `SameStep` mode only: `[num_envs, obs_dim]` observations the episodes ended on (rows
    /// of envs that did not end hold their current observation). `None` in other modes.
    pub final_obs: Option<Vec<f32>>,
}

impl StepOutput {
    /// The outputs of a call written into `out`, observations `obs_dim` long.
    pub fn from_owned(out: OwnedOutputs, obs_dim: usize) -> Self {
        Self {
            obs: out.obs,
            obs_dim,
            reward: out.reward,
            terminated: out.terminated,
            truncated: out.truncated,
            final_obs: out.final_obs,
        }
    }

    /// The observation row of env `env`.
    pub fn obs_row(&self, env: usize) -> &[f32] {
        &self.obs[env * self.obs_dim..(env + 1) * self.obs_dim]
    }

    /// `SameStep` only: the observation env `env`'s episode ended on, if it ended.
    pub fn final_obs_row(&self, env: usize) -> Option<&[f32]> {
        let rows = self.final_obs.as_ref()?;
        (self.terminated[env] || self.truncated[env])
            .then(|| &rows[env * self.obs_dim..(env + 1) * self.obs_dim])
    }
}

/// Actions resident on the backend: one value per env and step of a call.
///
/// Build them with [`VecEnv::upload_actions`] (validated on the host) or wrap a buffer a
/// policy wrote with [`DeviceActions::from_buffer`] (its length is checked when stepped).
#[derive(Debug, Clone)]
pub struct DeviceActions<Buf> {
    buffer: Buf,
}

impl<Buf> DeviceActions<Buf> {
    /// Wraps a backend buffer of actions.
    pub fn from_buffer(buffer: Buf) -> Self {
        Self { buffer }
    }

    /// The buffer.
    pub fn buffer(&self) -> &Buf {
        &self.buffer
    }
}

/// The outputs of one device step, still on the backend. Valid until the next step.
pub struct DeviceStep<'a, E: GraphEnv, B: EnvBackend> {
    pub(super) env: &'a mut VecEnv<E, B>,
}

impl<E: GraphEnv, B: EnvBackend> DeviceStep<'_, E, B> {
    fn get(&self, which: StepBuffer, output: &'static str) -> Result<&B::Buffer, EnvError> {
        match self.pages(which)[..] {
            [one] => Ok(one),
            ref pages => Err(EnvError::PagedOutput {
                output,
                pages: pages.len(),
                steps: self.env.steps_per_call(),
            }),
        }
    }

    /// The buffers holding an output, in step order: one, unless a `fused-xK` call's K
    /// steps of outputs exceed the device's largest buffer; then each of its launches
    /// wrote its own steps (step-major, `K / pages` steps a buffer).
    pub fn pages(&self, which: StepBuffer) -> Vec<&B::Buffer> {
        self.env.engine.pages(which)
    }

    /// `[num_envs, obs_dim]` row-major `f32` observations (an error when paged).
    pub fn obs(&self) -> Result<&B::Buffer, EnvError> {
        self.get(StepBuffer::Obs, "obs")
    }

    /// `[num_envs]` `f32` rewards (an error when paged).
    pub fn reward(&self) -> Result<&B::Buffer, EnvError> {
        self.get(StepBuffer::Reward, "reward")
    }

    /// `[num_envs]` `u32` flags, 0 or 1 (an error when paged).
    pub fn terminated(&self) -> Result<&B::Buffer, EnvError> {
        self.get(StepBuffer::Terminated, "terminated")
    }

    /// `[num_envs]` `u32` flags, 0 or 1 (an error when paged).
    pub fn truncated(&self) -> Result<&B::Buffer, EnvError> {
        self.get(StepBuffer::Truncated, "truncated")
    }

    /// `SameStep` only: `[num_envs, obs_dim]` final observations (an error when paged).
    pub fn final_obs(&self) -> Option<Result<&B::Buffer, EnvError>> {
        (self.env.episode.autoreset == AutoresetMode::SameStep)
            .then(|| self.get(StepBuffer::FinalObs, "final_obs"))
    }

    /// Copies the outputs to the host, checking for invalid device actions in the same
    /// round trip where the engine keeps its outputs and flag in one arena.
    pub fn to_host(&mut self) -> Result<StepOutput, EnvError> {
        self.env.device_outputs_to_host()
    }
}

impl<E: GraphEnv, B: EnvBackend> VecEnv<E, B> {
    pub(super) fn read_f32(&self, which: StepBuffer) -> Result<Vec<f32>, EnvError> {
        self.read_pages(which, |buffer| self.backend.read_f32(buffer))
    }

    /// Output `which` on the host, its pages (if a call ran over several launches) joined.
    fn read_pages<T: Clone>(
        &self,
        which: StepBuffer,
        read: impl Fn(&B::Buffer) -> Result<Vec<T>, ReadError>,
    ) -> Result<Vec<T>, EnvError> {
        match self.engine.pages(which)[..] {
            [one] => Ok(read(one)?),
            ref pages => Ok(pages
                .iter()
                .map(|page| read(page))
                .collect::<Result<Vec<_>, _>>()?
                .concat()),
        }
    }

    /// Every output of a device step, read to the host, and the device actions' check.
    fn device_outputs_to_host(&mut self) -> Result<StepOutput, EnvError> {
        let flag = self.enqueue_action_check()?;
        let mut out = self.owned_outputs();
        let read_with_outputs = self.copy_outputs(&mut out.as_host())?;
        let raised = match (flag, read_with_outputs) {
            (None, _) => 0,
            // The engine's flag is the arena's: it came back with the outputs.
            (Some(_), Some(word)) => word,
            (Some(flag), None) => self.backend.read_u32(&flag)?[0],
        };
        self.clear_action_flag(raised)?;
        Ok(StepOutput::from_owned(out, E::OBS_DIM))
    }
}
