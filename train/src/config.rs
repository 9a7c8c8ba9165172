//! [`PpoConfig`]: every setting of a training run. The defaults are rl-baselines3-zoo's
//! tuned PPO for CartPole-v1 (`hyperparams/ppo.yml`: 8 envs, 32 steps, one 256-sample
//! minibatch, 20 epochs, gamma 0.98, lambda 0.8, no entropy bonus, learning rate 1e-3
//! annealed linearly), with a budget of 300,000 env-steps over which the rate anneals.
//! zoo also anneals the clip range; here it stays at 0.2.
//!
//! Why these and not CleanRL's `ppo.py` defaults (128 steps, 4 minibatches, 4 epochs,
//! 2.5e-4 over 500,000 env-steps), measured with the hand-written CPU step and burn
//! NdArray on the 2-core development machine: CleanRL's settings reached a mean return of
//! 475 from 4 of seeds 1-5 (216k-376k env-steps; seed 4 ended at 408); these reached it
//! from all of seeds 1-30, after 58k-126k env-steps (median about 66k), in 9-19 s.

use crate::error::TrainError;

/// Settings of one PPO run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PpoConfig {
    /// Envs stepped in parallel.
    pub num_envs: usize,
    /// Steps per env between two updates (the rollout length).
    pub num_steps: usize,
    /// Env-steps after which training stops if the target was not reached.
    pub total_env_steps: u64,
    /// Stop as soon as the mean return of the last [`Self::return_window`] finished
    /// episodes reaches this (`None`: run all of [`Self::total_env_steps`]).
    pub target_return: Option<f64>,
    /// Finished episodes the mean return is taken over.
    pub return_window: usize,
    /// Adam's learning rate at the start; it falls linearly to 0 over `total_env_steps`
    /// when [`Self::anneal_lr`] is set.
    pub learning_rate: f64,
    /// Anneal the learning rate linearly.
    pub anneal_lr: bool,
    /// Discount.
    pub gamma: f32,
    /// GAE's lambda.
    pub gae_lambda: f32,
    /// Minibatches per epoch.
    pub num_minibatches: usize,
    /// Passes over each rollout.
    pub update_epochs: usize,
    /// PPO's ratio clip.
    pub clip_coef: f32,
    /// Weight of the entropy bonus.
    pub ent_coef: f32,
    /// Weight of the value loss.
    pub vf_coef: f32,
    /// Gradient clipping: all gradients scaled together to at most this global L2 norm
    /// (PyTorch's `clip_grad_norm_`, see [`crate::clip`]).
    pub max_grad_norm: f32,
    /// Width of the two hidden layers of the policy and of the value network.
    pub hidden: usize,
    /// Seed of the weights, the envs, the action draws and the minibatch order.
    pub seed: u64,
}

impl Default for PpoConfig {
    fn default() -> Self {
        Self {
            num_envs: 8,
            num_steps: 32,
            total_env_steps: 300_000,
            target_return: Some(475.0),
            return_window: 100,
            learning_rate: 1e-3,
            anneal_lr: true,
            gamma: 0.98,
            gae_lambda: 0.8,
            num_minibatches: 1,
            update_epochs: 20,
            clip_coef: 0.2,
            ent_coef: 0.0,
            vf_coef: 0.5,
            max_grad_norm: 0.5,
            hidden: 64,
            seed: 1,
        }
    }
}

impl PpoConfig {
    /// Samples per update (`num_envs * num_steps`).
    pub fn batch_size(&self) -> usize {
        self.num_envs * self.num_steps
    }

    /// Samples per minibatch.
    pub fn minibatch_size(&self) -> usize {
        self.batch_size() / self.num_minibatches
    }

    /// Updates the run makes at most.
    pub fn num_updates(&self) -> u64 {
        self.total_env_steps.div_ceil(self.batch_size() as u64)
    }

    /// Refuses settings the algorithm cannot run with.
    pub fn validate(&self) -> Result<(), TrainError> {
        let bad = |setting, reason: &str| {
            Err(TrainError::InvalidConfig {
                setting,
                reason: reason.into(),
            })
        };
        if self.num_envs == 0 {
            return bad("num_envs", "must be at least 1");
        }
        if self.num_steps == 0 {
            return bad("num_steps", "must be at least 1");
        }
        if self.num_minibatches == 0 || !self.batch_size().is_multiple_of(self.num_minibatches) {
            return bad(
                "num_minibatches",
                &format!(
                    "must be at least 1 and divide num_envs * num_steps = {}",
                    self.batch_size()
                ),
            );
        }
        if self.update_epochs == 0 {
            return bad("update_epochs", "must be at least 1");
        }
        if self.total_env_steps == 0 {
            return bad("total_env_steps", "must be at least 1");
        }
        if self.return_window == 0 {
            return bad("return_window", "must be at least 1");
        }
        if self.hidden == 0 {
            return bad("hidden", "must be at least 1");
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return bad("learning_rate", "must be a finite number above 0");
        }
        for (setting, value) in [("gamma", self.gamma), ("gae_lambda", self.gae_lambda)] {
            if !(0.0..=1.0).contains(&value) {
                return bad(setting, "must lie in [0, 1]");
            }
        }
        for (setting, value) in [
            ("clip_coef", self.clip_coef),
            ("ent_coef", self.ent_coef),
            ("vf_coef", self.vf_coef),
            ("max_grad_norm", self.max_grad_norm),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return bad(setting, "must be a finite number of at least 0");
            }
        }
        if let Some(target) = self.target_return
            && !target.is_finite()
        {
            return bad("target_return", "must be finite");
        }
        Ok(())
    }
}
