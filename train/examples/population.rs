//! Trains a population of PPO agents on CartPole-v1 with the native learner, each agent's
//! 8 envs stepped by cartfuse's native CPU runtime, until every agent's mean return reaches
//! 475; prints each agent's time and env-steps to the target.
//!
//! ```text
//! cargo run --release -p cartfuse-train --example population -- [AGENTS] [FIRST_SEED]
//! ```

use cartfuse_env::{AutoresetMode, CartPole, EpisodeOptions, GraphEnv, StepPlan, VecEnv};
use cartfuse_fusion::cpu::Cpu;
use cartfuse_train::collect::HostCollector;
use cartfuse_train::learner::{Learner, NetShape};
use cartfuse_train::population::{PerAgent, PopulationConfig, train_population};
use cartfuse_train::{PpoConfig, streams};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>());
    let agents = args.next().transpose()?.unwrap_or(4) as usize;
    let seed = args.next().transpose()?.unwrap_or(1);
    let config = PopulationConfig::uniform(
        PpoConfig {
            seed,
            ..PpoConfig::default()
        },
        agents,
    );
    let episode = EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        ..EpisodeOptions::default_for::<CartPole>()
    };
    let backend = Cpu::default();
    let n = config.shared.num_envs;
    let mut envs = (0..agents)
        .map(|_| {
            VecEnv::build(
                backend.clone(),
                CartPole::default(),
                n,
                episode,
                StepPlan::default(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let collectors = envs
        .iter_mut()
        .zip(&config.agents)
        .map(|(env, a)| HostCollector::new(env, a.seed, streams::action_key(a.seed)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut source = PerAgent::new(collectors, n);
    let seeds: Vec<u64> = config.agents.iter().map(|a| a.seed).collect();
    let learner = Learner::from_seeds(
        NetShape::new(CartPole::OBS_DIM, config.shared.hidden, 2),
        &seeds,
    );
    let (_, report) = train_population(&mut source, &config, learner, |_, _| {})?;
    for run in &report.agents {
        match &run.solved {
            Some(s) => println!(
                "seed {:3}: 475 after {:7} env-steps, {:5.2} s",
                run.settings.seed, s.env_steps, s.seconds
            ),
            None => println!(
                "seed {:3}: not solved, final mean return {:?}",
                run.settings.seed, run.final_mean_return
            ),
        }
    }
    println!(
        "{} of {agents} reached 475 in {:.1} s (collecting {:.1} s, learning {:.1} s)",
        report.reached_target(),
        report.seconds,
        report.rollout_seconds,
        report.learn_seconds
    );
    Ok(())
}
