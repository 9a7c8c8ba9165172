//! `cartfuse train --learner native`: one agent or a population, learnt by the native
//! batched learner, the envs on `--device` (each agent its own), the policy acting on the
//! host or fused into the envs' step.

use std::path::{Path, PathBuf};

use burn::backend::NdArray;
use cartfuse::StepPlan;
use cartfuse::env::{CartPole, GraphEnv};
use cartfuse::fusion::cpu::SimdLevel;
use cartfuse::fusion::device::Device;
use cartfuse::fusion::dispatch_backend;
use cartfuse::fusion::exec::Backend;
use cartfuse::train::learner::{Learner, NetShape};
use cartfuse::train::population::{PopulationConfig, Rollouts, train_population_on};
use cartfuse::train::{ActorCritic, checkpoint};

use super::args::{RolloutArg, TrainArgs};
use super::{cartpole_episode, on_update, print};
use crate::cli::progress;

/// Trains the agents `args` give, prints progress and the report, saves the weights when
/// asked.
pub fn run(device: Device, args: TrainArgs) -> anyhow::Result<()> {
    let config = args.population_config()?;
    let rollouts = match args.rollout {
        RolloutArg::Host => Rollouts::Host(StepPlan::default()),
        RolloutArg::InGraph(strategy) => Rollouts::Fused(strategy),
        RolloutArg::Device => unreachable!("`train::run` sends the device source to burn's"),
        RolloutArg::Auto => unreachable!("`train::run` resolves `auto`"),
    };
    let learner = learner_for(&config, &args)?;
    let episode = cartpole_episode();
    let total = config.shared.total_env_steps * config.agents.len() as u64;
    let (trained, description) = dispatch_backend!(device, |backend: B| {
        let description = backend.description();
        tracing::info!(device = %description, "opened device for the envs");
        let bar = progress::bar(total, "PPO");
        let trained = train_population_on(
            &backend,
            &CartPole::default(),
            &episode,
            rollouts,
            &config,
            learner,
            on_update(&bar, &args, total),
        );
        bar.finish_and_clear();
        anyhow::Ok((trained?, description))
    })?;
    let (learner, report) = trained;
    if let Some(path) = &args.save {
        for (agent, settings) in config.agents.iter().enumerate() {
            let path = save_path(path, &args, settings.seed);
            let model = ActorCritic::<NdArray>::from_params(
                &learner.shape(),
                learner.params(agent),
                &Default::default(),
            );
            checkpoint::save(&model, &path)?;
        }
    }
    let envs = format!("{device} ({description})");
    let learner = format!(
        "native batched learner (CPU, {}; {} agent{})",
        SimdLevel::detect(),
        config.agents.len(),
        if config.agents.len() == 1 { "" } else { "s" }
    );
    let rollout = match rollouts {
        Rollouts::Fused(plan) => format!("policy fused into the env's step ({plan})"),
        Rollouts::Host(_) => "native policy on the host observations, then the env step".into(),
    };
    let described = (envs.as_str(), learner.as_str(), rollout.as_str());
    if args.population() {
        print::population(&report, &args, described)
    } else {
        print::single(&report.agent_report(0), &args, described)
    }
}

/// The agents' starting weights: drawn from their seeds, or every agent from `--load`.
fn learner_for(config: &PopulationConfig, args: &TrainArgs) -> anyhow::Result<Learner> {
    let shape = NetShape::new(CartPole::OBS_DIM, config.shared.hidden, 2);
    let seeds: Vec<u64> = config.agents.iter().map(|a| a.seed).collect();
    Ok(match &args.load {
        None => Learner::from_seeds(shape, &seeds),
        Some(path) => {
            let device = Default::default();
            let fresh = ActorCritic::<NdArray>::new(shape.obs_dim, 2, shape.hidden, 0, &device);
            let params = checkpoint::load(fresh, path, &device)?.params()?;
            Learner::new(shape, vec![params; seeds.len()])
        }
    })
}

/// Where agent `seed`'s weights go: `--save` itself for a single run, `PATH-seed<seed>` in
/// a population.
fn save_path(path: &Path, args: &TrainArgs, seed: u64) -> PathBuf {
    if args.population() {
        let mut name = path.as_os_str().to_owned();
        name.push(format!("-seed{seed}"));
        PathBuf::from(name)
    } else {
        path.to_path_buf()
    }
}
