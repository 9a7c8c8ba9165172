//! A random-policy rollout: the `cartfuse rollout` command as a library function.

use std::time::{Duration, Instant};

use cartfuse_env::spaces::ActionSpace;
use cartfuse_env::{EnvBackend, GraphEnv, VecEnv};
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

/// An action drawn uniformly from an action space (gymnasium's `action_space.sample()`).
pub trait RandomAction: Sized {
    /// One uniform draw from `space`.
    fn sample(space: &ActionSpace, rng: &mut StdRng) -> Self;
}

impl RandomAction for u32 {
    fn sample(space: &ActionSpace, rng: &mut StdRng) -> Self {
        match space {
            ActionSpace::Discrete(space) => rng.random_range(0..space.n),
            ActionSpace::Box(_) => unreachable!("u32 actions are discrete"),
        }
    }
}

impl RandomAction for f32 {
    fn sample(space: &ActionSpace, rng: &mut StdRng) -> Self {
        match space {
            ActionSpace::Box(space) => rng.random_range(space.low[0]..=space.high[0]),
            ActionSpace::Discrete(_) => unreachable!("f32 actions are continuous"),
        }
    }
}

/// Runs `steps` batch steps of a uniformly random policy (actions drawn from `seed`),
/// calling `progress(done)` after every step.
pub fn random_rollout<E: GraphEnv, B: EnvBackend>(
    env: &mut VecEnv<E, B>,
    steps: u64,
    seed: u64,
    mut progress: impl FnMut(u64),
) -> Result<RolloutReport, EnvError>
where
    E::Action: RandomAction,
{
    let n = env.num_envs();
    env.reset(Some(seed))?;
    let space = env.single_action_space();
    let mut policy = StdRng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut actions: Vec<E::Action> = (0..n)
        .map(|_| E::Action::sample(&space, &mut policy))
        .collect();
    // Under next-step autoreset the step after a done only resets: it is not a physics step.
    let next_step = env.episode().autoreset == cartfuse_env::AutoresetMode::NextStep;
    let mut resetting = vec![false; n];
    let mut lengths = vec![0u64; n];
    let (mut episodes, mut total_length) = (0u64, 0u64);
    let before = env.ledger().totals();
    let mut elapsed = Duration::ZERO;
    for step in 0..steps {
        for action in &mut actions {
            *action = E::Action::sample(&space, &mut policy);
        }
        let start = Instant::now();
        let out = env.step(&actions)?;
        elapsed += start.elapsed();
        for (i, length) in lengths.iter_mut().enumerate() {
            if resetting[i] {
                resetting[i] = false;
                continue;
            }
            *length += 1;
            if out.terminated[i] || out.truncated[i] {
                episodes += 1;
                total_length += *length;
                *length = 0;
                resetting[i] = next_step;
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
