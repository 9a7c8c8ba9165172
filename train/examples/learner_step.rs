//! One PPO gradient step (the default 4 -> 64 -> 64 actor and critic, one minibatch of 256)
//! by burn's learner (NdArray + Autodiff, global-norm clip, Adam) and by the native learner,
//! timed in turns: each round times a burst of burn steps then a burst of native steps, and
//! the median round's ratio is printed with the spread, so the machine's drift does not
//! decide the comparison.
//!
//! ```text
//! cargo run --release -p cartfuse-train --example learner_step -- [ROUNDS] [AGENTS]
//! ```
//!
//! With `AGENTS` above 1 the native learner steps that many agents at once and the time is
//! per agent-step.

use std::time::Instant;

use burn::backend::{Autodiff, NdArray};
use burn::optim::AdamConfig;
use cartfuse_train::learner::{Learner, NetShape, StepSettings};
use cartfuse_train::minibatch::Minibatch;
use cartfuse_train::ppo::burn_step;
use cartfuse_train::{ActorCritic, PpoConfig};

/// Steps timed in one burst.
const BURST: usize = 50;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let rounds = args.next().transpose()?.unwrap_or(9);
    let agents = args.next().transpose()?.unwrap_or(1).max(1);
    let config = PpoConfig::default();
    let rows = config.minibatch_size();
    let batch = Minibatch {
        obs: (0..rows * 4).map(|i| (i as f32 * 0.37).sin()).collect(),
        actions: (0..rows).map(|i| (i % 2) as u32).collect(),
        old_log_probs: vec![-0.69; rows],
        advantages: (0..rows).map(|i| (i as f32 * 0.1).cos()).collect(),
        targets: vec![3.0; rows],
    };
    let device = Default::default();
    let mut model = ActorCritic::<Autodiff<NdArray>>::new(4, 2, config.hidden, 1, &device);
    let mut optim = AdamConfig::new().with_epsilon(1e-5).init();
    let seeds: Vec<u64> = (1..=agents as u64).collect();
    let mut learner = Learner::from_seeds(NetShape::new(4, config.hidden, 2), &seeds);
    let settings = vec![
        StepSettings {
            learning_rate: config.learning_rate as f32,
            clip_coef: config.clip_coef,
            ent_coef: config.ent_coef,
            vf_coef: config.vf_coef,
            max_grad_norm: config.max_grad_norm,
        };
        agents
    ];
    let batches: Vec<(usize, &Minibatch)> = (0..agents).map(|i| (i, &batch)).collect();
    let mut burn_burst = || -> Result<f64, Box<dyn std::error::Error>> {
        let start = Instant::now();
        for _ in 0..BURST {
            (model, _) = burn_step(model.clone(), &mut optim, &batch, (&config, 1e-3), &device)?;
        }
        Ok(start.elapsed().as_secs_f64() / BURST as f64)
    };
    let mut native_burst = || {
        let start = Instant::now();
        for _ in 0..BURST {
            learner.step(&batches, &settings);
        }
        start.elapsed().as_secs_f64() / (BURST * agents) as f64
    };
    // Warm-up, untimed.
    burn_burst()?;
    native_burst();
    let mut rounds_measured: Vec<(f64, f64)> = Vec::with_capacity(rounds);
    for _ in 0..rounds.max(1) {
        let burn = burn_burst()?;
        rounds_measured.push((burn, native_burst()));
    }
    let mut ratios: Vec<f64> = rounds_measured.iter().map(|(b, n)| b / n).collect();
    ratios.sort_by(f64::total_cmp);
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let burn = median(rounds_measured.iter().map(|r| r.0).collect());
    let native = median(rounds_measured.iter().map(|r| r.1).collect());
    println!(
        "burn NdArray + Autodiff: {:.1} us a step; native learner ({agents} agent{}): {:.1} us an \
         agent-step; burn / native {:.2}x (median of {} rounds, spread {:.2}-{:.2}x)",
        burn * 1e6,
        if agents == 1 { "" } else { "s" },
        native * 1e6,
        ratios[ratios.len() / 2],
        ratios.len(),
        ratios[0],
        ratios[ratios.len() - 1]
    );
    Ok(())
}
