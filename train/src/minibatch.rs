//! [`Minibatch`]: the samples of one PPO minibatch gathered from a [`Rollout`], its
//! advantages normalised within the minibatch (CleanRL's `norm_adv`), on the host. Every
//! learner reads this: burn's uploads it as tensors, the native one reads it in place.

use crate::rollout::Rollout;

/// One minibatch's samples, row by row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Minibatch {
    /// Observations, `[rows, obs_dim]`.
    pub obs: Vec<f32>,
    /// Actions taken.
    pub actions: Vec<u32>,
    /// Their log-probabilities under the rollout's policy.
    pub old_log_probs: Vec<f32>,
    /// GAE advantages, normalised to mean 0 and (sample) standard deviation 1.
    pub advantages: Vec<f32>,
    /// Value targets (advantage + value).
    pub targets: Vec<f32>,
}

impl Minibatch {
    /// Refills `self` with the samples `indices` of `rollout`.
    pub fn gather(
        &mut self,
        rollout: &Rollout,
        advantages: &[f32],
        targets: &[f32],
        indices: &[usize],
    ) {
        let dim = rollout.obs_dim();
        self.obs.clear();
        for &i in indices {
            self.obs
                .extend_from_slice(&rollout.obs[i * dim..(i + 1) * dim]);
        }
        let pick = |into: &mut Vec<f32>, values: &[f32]| {
            into.clear();
            into.extend(indices.iter().map(|&i| values[i]));
        };
        pick(&mut self.old_log_probs, &rollout.log_probs);
        pick(&mut self.targets, targets);
        pick(&mut self.advantages, advantages);
        self.actions.clear();
        self.actions
            .extend(indices.iter().map(|&i| rollout.actions[i]));
        let m = indices.len();
        let adv = &mut self.advantages;
        let mean = adv.iter().sum::<f32>() / m as f32;
        let var = adv.iter().map(|a| (a - mean).powi(2)).sum::<f32>() / (m.max(2) - 1) as f32;
        let scale = 1.0 / (var.sqrt() + 1e-8);
        adv.iter_mut().for_each(|a| *a = (*a - mean) * scale);
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// Whether no sample is held.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_rows_and_normalises_advantages() {
        let mut rollout = Rollout::new(1, 2);
        rollout.obs = vec![0.0, 1.0, 10.0, 11.0, 20.0, 21.0];
        rollout.actions = vec![0, 1, 0];
        rollout.log_probs = vec![-0.1, -0.2, -0.3];
        let (adv, targets) = ([1.0, 2.0, 4.0], [5.0, 6.0, 7.0]);
        let mut batch = Minibatch::default();
        batch.gather(&rollout, &adv, &targets, &[2, 0]);
        assert_eq!(batch.obs, [20.0, 21.0, 0.0, 1.0]);
        assert_eq!(batch.actions, [0, 0]);
        assert_eq!(batch.old_log_probs, [-0.3, -0.1]);
        assert_eq!(batch.targets, [7.0, 5.0]);
        // 4 and 1: mean 2.5, sample standard deviation 2.1213.
        let s = 4.5f32.sqrt();
        assert!((batch.advantages[0] - 1.5 / s).abs() < 1e-6);
        assert!((batch.advantages[1] + 1.5 / s).abs() < 1e-6);
    }
}
