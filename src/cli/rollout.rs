//! `cartfuse rollout`: a random policy, measured.

use anyhow::Context;
use cartfuse::StepPlan;
use cartfuse::env::registry::unknown_env;
use cartfuse::env::{EpisodeOptions, GraphEnv, VecEnv, with_env};
use cartfuse::fusion::device::Device;
use cartfuse::fusion::dispatch_backend;
use cartfuse::fusion::exec::Backend;
use cartfuse::rollout::{RandomAction, random_rollout};

use super::args::RolloutArgs;
use super::progress;

/// Steps the envs under a random policy and prints the rollout report.
pub fn run(device: Device, args: RolloutArgs) -> anyhow::Result<()> {
    let envs = usize::try_from(args.envs).context("--envs does not fit this machine")?;
    with_env!(
        args.env.id.as_str(),
        |E| {
            let episode = EpisodeOptions {
                autoreset: args.autoreset,
                max_episode_steps: args.max_episode_steps.unwrap_or(E::MAX_EPISODE_STEPS),
            };
            run_env(device, &args, E::default(), envs, episode)
        },
        anyhow::bail!(unknown_env(&args.env.id))
    )
}

/// [`run`] for one environment.
fn run_env<E: GraphEnv>(
    device: Device,
    args: &RolloutArgs,
    env: E,
    envs: usize,
    episode: EpisodeOptions,
) -> anyhow::Result<()>
where
    E::Action: RandomAction,
{
    dispatch_backend!(device, |backend: B| {
        let description = backend.description();
        tracing::info!(device = %description, "opened device");
        let mut env = VecEnv::build(backend, env.clone(), envs, episode, StepPlan::default())?;
        let bar = progress::bar(args.steps, "rollout");
        let report = random_rollout(&mut env, args.steps, args.seed, |done| {
            bar.set_position(done)
        })?;
        bar.finish_and_clear();
        if args.json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            println!("environment:         {}", E::ID);
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
