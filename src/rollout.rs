//! A random-policy rollout: the `cartfuse rollout` command as a library function.

use std::time::{Duration, Instant};

use cartfuse_env::{CartPole, EnvBackend, VecEnv};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::EnvError;

/// What a rollout measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RolloutReport {
    /// Envs stepped in parallel.
    pub num_envs: usize,
    /// Steps of the whole batch.
    pub steps: u64,
    /// Wall time of the stepping loop (host actions in, host results out).
    pub seconds: f64,
    /// `num_envs * steps / seconds`.
    pub env_steps_per_s: f64,
    /// Kernel launches per batch step, from the launch ledger.
    pub launches_per_step: f64,
    /// Episodes that terminated or were truncated.
    pub episodes_finished: u64,
    /// Mean length (physics steps) of the finished episodes; `None` if none finished.
    pub mean_episode_length: Option<f64>,
}

/// Runs `steps` batch steps of a uniformly random policy (actions drawn from `seed`),
/// calling `progress(done)` after every step.
pub fn random_rollout<B: EnvBackend>(
    env: &mut VecEnv<CartPole, B>,
    steps: u64,
    seed: u64,
    mut progress: impl FnMut(u64),
) -> Result<RolloutReport, EnvError> {
    let n = env.num_envs();
    env.reset(Some(seed))?;
    let mut policy = StdRng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut actions = vec![0u32; n];
    let mut lengths = vec![0u64; n];
    let (mut episodes, mut total_length) = (0u64, 0u64);
    let before = env.ledger().totals();
    let mut elapsed = Duration::ZERO;
    for step in 0..steps {
        for chunk in actions.chunks_mut(64) {
            let bits: u64 = policy.random();
            for (k, action) in chunk.iter_mut().enumerate() {
                *action = ((bits >> k) & 1) as u32;
            }
        }
        let start = Instant::now();
        let out = env.step(&actions)?;
        elapsed += start.elapsed();
        for (i, length) in lengths.iter_mut().enumerate() {
            *length += u64::from(out.reward[i] > 0.0);
            if out.terminated[i] || out.truncated[i] {
                episodes += 1;
                total_length += *length;
                *length = 0;
            }
        }
        progress(step + 1);
    }
    let launches = env.ledger().totals().since(&before).launches;
    let seconds = elapsed.as_secs_f64();
    Ok(RolloutReport {
        num_envs: n,
        steps,
        seconds,
        env_steps_per_s: (n as u64 * steps) as f64 / seconds.max(f64::MIN_POSITIVE),
        launches_per_step: launches as f64 / steps.max(1) as f64,
        episodes_finished: episodes,
        mean_episode_length: (episodes > 0).then(|| total_length as f64 / episodes as f64),
    })
}
