//! [`Trajectory`]: what a policy rollout hands the learner, on the host.

/// `steps` steps of `num_envs` envs, step-major (`[t * num_envs + env]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    /// Envs per step.
    pub num_envs: usize,
    /// Values per observation.
    pub obs_dim: usize,
    /// Observations after each step (after a `SameStep` reset: the reset one),
    /// `[t, env, obs_dim]`: the next step's actions were chosen on them.
    pub next_obs: Vec<f32>,
    /// Actions chosen.
    pub actions: Vec<u32>,
    /// Their log-probabilities.
    pub log_probs: Vec<f32>,
    /// The critic's values of the observations the actions were chosen on.
    pub values: Vec<f32>,
    /// Rewards.
    pub rewards: Vec<f32>,
    /// Episodes that ended in a terminal state.
    pub terminated: Vec<bool>,
    /// Episodes cut at the time limit.
    pub truncated: Vec<bool>,
    /// `SameStep` only: the observations episodes ended on, `[t, env, obs_dim]`.
    pub final_obs: Option<Vec<f32>>,
}

impl Trajectory {
    /// Steps held.
    pub fn steps(&self) -> usize {
        self.actions.len() / self.num_envs
    }

    /// The samples of envs `envs` alone (one agent's bank of a population's rollout).
    pub fn envs(&self, envs: std::ops::Range<usize>) -> Trajectory {
        let (n, dim, steps) = (self.num_envs, self.obs_dim, self.steps());
        /// Envs `envs` of each step of `all` (`per` values an env).
        fn pick<T: Copy>(
            all: &[T],
            n: usize,
            steps: usize,
            per: usize,
            envs: &std::ops::Range<usize>,
        ) -> Vec<T> {
            (0..steps)
                .flat_map(|t| &all[(t * n + envs.start) * per..(t * n + envs.end) * per])
                .copied()
                .collect()
        }
        Trajectory {
            num_envs: envs.len(),
            obs_dim: dim,
            next_obs: pick(&self.next_obs, n, steps, dim, &envs),
            actions: pick(&self.actions, n, steps, 1, &envs),
            log_probs: pick(&self.log_probs, n, steps, 1, &envs),
            values: pick(&self.values, n, steps, 1, &envs),
            rewards: pick(&self.rewards, n, steps, 1, &envs),
            terminated: pick(&self.terminated, n, steps, 1, &envs),
            truncated: pick(&self.truncated, n, steps, 1, &envs),
            final_obs: (self.final_obs.as_ref()).map(|f| pick(f, n, steps, dim, &envs)),
        }
    }
}
