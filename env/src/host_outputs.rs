//! [`HostOutputs`]: host memory the caller owns, which a step writes its outputs into.
//!
//! [`VecEnv::step_into`](crate::VecEnv::step_into) fills it. The native CPU engines write
//! there from every worker thread while they step, so nothing is copied afterwards (the
//! Python package hands numpy arrays this way). Other engines step into their own buffers;
//! their outputs are then copied in by [`EnvBackend::copy_outputs`](crate::EnvBackend):
//! one parallel pass on the CPU, a read on devices.

use crate::error::EnvError;

/// One step's outputs in memory the caller owns, `n` envs (times the steps of a call).
#[derive(Debug)]
pub struct HostOutputs<'a> {
    /// `[n, obs_dim]` row-major observations.
    pub obs: &'a mut [f32],
    /// `[n]` rewards.
    pub reward: &'a mut [f32],
    /// `[n]` terminated flags.
    pub terminated: &'a mut [bool],
    /// `[n]` truncated flags.
    pub truncated: &'a mut [bool],
    /// `SameStep` only: `[n, obs_dim]` observations the episodes ended on (rows of envs
    /// that did not end hold their current observation).
    pub final_obs: Option<&'a mut [f32]>,
}

impl HostOutputs<'_> {
    /// Checks every length against `n` values of a `obs_dim`-long observation, and that
    /// final observations are given exactly when `same_step`.
    pub fn check(&self, n: usize, obs_dim: usize, same_step: bool) -> Result<(), EnvError> {
        let lengths = [
            ("obs", self.obs.len(), n * obs_dim),
            ("reward", self.reward.len(), n),
            ("terminated", self.terminated.len(), n),
            ("truncated", self.truncated.len(), n),
        ];
        for (what, found, expected) in lengths {
            if found != expected {
                return Err(EnvError::Unsupported(format!(
                    "output {what} holds {found} values, the step writes {expected}"
                )));
            }
        }
        match (&self.final_obs, same_step) {
            (Some(rows), true) if rows.len() != n * obs_dim => Err(EnvError::Unsupported(format!(
                "output final_obs holds {} values, the step writes {}",
                rows.len(),
                n * obs_dim
            ))),
            (None, true) => Err(EnvError::Unsupported(
                "a SameStep step writes final observations: give final_obs".into(),
            )),
            (Some(_), false) => Err(EnvError::Unsupported(
                "only a SameStep step writes final observations: final_obs must be None".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// Owned outputs of `n` envs, for callers that want vectors ([`VecEnv::step`]) or step
/// into the same memory again and again ([`VecEnv::owned_outputs`]).
///
/// [`VecEnv::step`]: crate::VecEnv::step
/// [`VecEnv::owned_outputs`]: crate::VecEnv::owned_outputs
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedOutputs {
    /// `[n, obs_dim]` row-major observations.
    pub obs: Vec<f32>,
    /// `[n]` rewards.
    pub reward: Vec<f32>,
    /// `[n]` terminated flags.
    pub terminated: Vec<bool>,
    /// `[n]` truncated flags.
    pub truncated: Vec<bool>,
    /// `SameStep` only: `[n, obs_dim]` final observations.
    pub final_obs: Option<Vec<f32>>,
}

impl OwnedOutputs {
    /// Zeroed outputs of `n` envs.
    pub fn zeroed(n: usize, obs_dim: usize, same_step: bool) -> Self {
        Self {
            obs: vec![0.0; n * obs_dim],
            reward: vec![0.0; n],
            terminated: vec![false; n],
            truncated: vec![false; n],
            final_obs: same_step.then(|| vec![0.0; n * obs_dim]),
        }
    }

    /// The outputs as a [`HostOutputs`] to step into.
    pub fn as_host(&mut self) -> HostOutputs<'_> {
        HostOutputs {
            obs: &mut self.obs,
            reward: &mut self.reward,
            terminated: &mut self.terminated,
            truncated: &mut self.truncated,
            final_obs: self.final_obs.as_deref_mut(),
        }
    }
}
