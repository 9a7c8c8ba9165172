//! [`Rollout`]: one update's samples, their GAE advantages, and [`EpisodeReturns`], the
//! running record of finished episodes.

use std::collections::VecDeque;

/// `num_steps` steps of `num_envs` envs, step-major (`[t * num_envs + env]`).
#[derive(Debug, Clone)]
pub struct Rollout {
    num_envs: usize,
    obs_dim: usize,
    /// Observations the actions were chosen on, `[t, env, obs_dim]`.
    pub obs: Vec<f32>,
    /// Actions taken.
    pub actions: Vec<u32>,
    /// Their log-probabilities under the rollout's policy.
    pub log_probs: Vec<f32>,
    /// Value estimates of `obs`.
    pub values: Vec<f32>,
    /// Rewards, with `gamma * V(final obs)` added where an episode was truncated.
    pub rewards: Vec<f32>,
    /// The episode ended on this step (terminated or truncated).
    pub dones: Vec<bool>,
}

impl Rollout {
    /// An empty rollout.
    pub fn new(num_envs: usize, obs_dim: usize) -> Self {
        Self {
            num_envs,
            obs_dim,
            obs: Vec::new(),
            actions: Vec::new(),
            log_probs: Vec::new(),
            values: Vec::new(),
            rewards: Vec::new(),
            dones: Vec::new(),
        }
    }

    /// Forgets the samples, keeping the memory.
    pub fn clear(&mut self) {
        self.obs.clear();
        self.actions.clear();
        self.log_probs.clear();
        self.values.clear();
        self.rewards.clear();
        self.dones.clear();
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// Whether no sample is held.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// Length of one observation.
    pub fn obs_dim(&self) -> usize {
        self.obs_dim
    }

    /// GAE(lambda) advantages and the returns `advantage + value`, given the values of
    /// the observations after the last step (`next_values`, one per env). A done step
    /// does not bootstrap from the step after it (the next episode's first state).
    pub fn advantages(&self, next_values: &[f32], gamma: f32, lambda: f32) -> (Vec<f32>, Vec<f32>) {
        let n = self.num_envs;
        let steps = self.len() / n;
        let mut advantages = vec![0.0f32; self.len()];
        let mut last = vec![0.0f32; n];
        for t in (0..steps).rev() {
            for env in 0..n {
                let i = t * n + env;
                let next_value = if t + 1 == steps {
                    next_values[env]
                } else {
                    self.values[i + n]
                };
                let live = if self.dones[i] { 0.0 } else { 1.0 };
                let delta = self.rewards[i] + gamma * next_value * live - self.values[i];
                last[env] = delta + gamma * lambda * live * last[env];
                advantages[i] = last[env];
            }
        }
        let returns = advantages
            .iter()
            .zip(&self.values)
            .map(|(a, v)| a + v)
            .collect();
        (advantages, returns)
    }
}

/// Returns of finished episodes: the running sums of the live ones and the last `window`
/// finished.
#[derive(Debug, Clone)]
pub struct EpisodeReturns {
    running: Vec<f64>,
    recent: VecDeque<f64>,
    window: usize,
    finished: u64,
}

impl EpisodeReturns {
    /// No episode yet, for `num_envs` envs.
    pub fn new(num_envs: usize, window: usize) -> Self {
        Self {
            running: vec![0.0; num_envs],
            recent: VecDeque::with_capacity(window),
            window,
            finished: 0,
        }
    }

    /// Adds env `env`'s reward of a step; `done` closes its episode.
    pub fn record(&mut self, env: usize, reward: f32, done: bool) {
        self.running[env] += f64::from(reward);
        if done {
            if self.recent.len() == self.window {
                self.recent.pop_front();
            }
            self.recent.push_back(self.running[env]);
            self.running[env] = 0.0;
            self.finished += 1;
        }
    }

    /// Mean return of the last `window` finished episodes (fewer early on), `None` before
    /// the first.
    pub fn mean(&self) -> Option<f64> {
        (!self.recent.is_empty())
            .then(|| self.recent.iter().sum::<f64>() / self.recent.len() as f64)
    }

    /// Whether `window` episodes have finished.
    pub fn full(&self) -> bool {
        self.recent.len() == self.window
    }

    /// Episodes finished so far.
    pub fn finished(&self) -> u64 {
        self.finished
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gae_matches_a_hand_computation() {
        // One env, three steps, the second ends its episode.
        let mut r = Rollout::new(1, 1);
        r.values = vec![1.0, 2.0, 3.0];
        r.rewards = vec![1.0, 1.0, 1.0];
        r.dones = vec![false, true, false];
        r.actions = vec![0; 3];
        let (gamma, lambda) = (0.9f32, 0.5f32);
        let (adv, ret) = r.advantages(&[4.0], gamma, lambda);
        let d2 = 1.0 + gamma * 4.0 - 3.0;
        let d1 = 1.0 - 2.0;
        let d0 = 1.0 + gamma * 2.0 - 1.0;
        let want = [d0 + gamma * lambda * d1, d1, d2];
        for (a, w) in adv.iter().zip(want) {
            assert!((a - w).abs() < 1e-6, "{adv:?} vs {want:?}");
        }
        assert!((ret[2] - (d2 + 3.0)).abs() < 1e-6);
    }

    #[test]
    fn returns_keep_the_last_window() {
        let mut e = EpisodeReturns::new(2, 2);
        assert_eq!(e.mean(), None);
        e.record(0, 1.0, false);
        e.record(1, 5.0, true);
        e.record(0, 1.0, true);
        e.record(1, 1.0, true);
        assert_eq!(e.finished(), 3);
        assert!(e.full());
        assert_eq!(e.mean(), Some((2.0 + 1.0) / 2.0));
    }
}
