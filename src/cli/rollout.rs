//! `cartfuse rollout`: a random policy, measured.

use anyhow::Context;
use cartfuse::env::VecEnv;
use cartfuse::fusion::backend::Backend;
use cartfuse::fusion::device::Device;
use cartfuse::fusion::dispatch_backend;
use cartfuse::rollout::random_rollout;
use cartfuse::{CartPoleConfig, StepPlan};

use super::args::RolloutArgs;
use super::progress;

/// Steps the envs under a random policy and prints the rollout report.
pub fn run(device: Device, args: RolloutArgs) -> anyhow::Result<()> {
    let config = CartPoleConfig {
        autoreset: args.autoreset.into(),
        max_episode_steps: args.max_episode_steps,
        ..Default::default()
    };
    let envs = usize::try_from(args.envs).context("--envs does not fit this machine")?;
    dispatch_backend!(device, |backend: B| {
        let description = backend.description();
        tracing::info!(device = %description, "opened device");
        let mut env = VecEnv::build(
            backend,
            config.params,
            envs,
            config.episode(),
            StepPlan::default(),
        )?;
        let bar = progress::bar(args.steps, "rollout");
        let report = random_rollout(&mut env, args.steps, args.seed, |done| {
            bar.set_position(done)
        })?;
        bar.finish_and_clear();
        if args.json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            println!("device:              {device} ({description})");
            println!(
                "envs x steps:        {} x {}",
                report.num_envs, report.steps
            );
            println!(
                "env-steps/s:         {:.4e} (host actions in, host results out)",
                report.env_steps_per_s
            );
            println!("launches per step:   {}", report.launches_per_step);
            println!("episodes finished:   {}", report.episodes_finished);
            match report.mean_episode_length {
                Some(length) => println!("mean episode length: {length:.2}"),
                None => println!("mean episode length: n/a (no episode finished)"),
            }
        }
        anyhow::Ok(())
    })
}
