//! `cartfuse train`: PPO on CartPole-v1 until the mean return reaches the target: one agent
//! or a population with the native learner ([`native`]), or one agent learnt by burn
//! ([`burn`]).

mod burn;
mod native;
mod print;

use cartfuse::env::{AutoresetMode, CartPole, EpisodeOptions};
use cartfuse::fusion::device::Device;
use cartfuse::fusion::plan::Strategy;
use cartfuse::train::UpdateStats;

use super::args::train as args;
use args::{LearnerArg, RolloutArg, TrainArgs};

/// Trains with the learner `--learner` names.
pub fn run(device: Device, mut args: TrainArgs) -> anyhow::Result<()> {
    if args.learner == LearnerArg::Auto {
        args.learner = auto_learner(device, &args)?;
    }
    if args.rollout == RolloutArg::Auto {
        args.rollout = auto_rollout(device, &args);
    }
    match (args.learner, args.rollout) {
        // `--rollout device` is burn's: it says which learner and device it needs.
        (LearnerArg::Native, RolloutArg::Device) => burn::run(device, args),
        #[cfg(feature = "cube")]
        (LearnerArg::Device | LearnerArg::DeviceBurn, RolloutArg::Device) => anyhow::bail!(
            "`--rollout device` is burn's single-agent source; the device learner collects              with the policy fused into the envs' step (`--rollout fused-x8`, or `auto`)"
        ),
        (LearnerArg::Native, _) => native::run(device, args),
        #[cfg(feature = "cube")]
        (LearnerArg::Device | LearnerArg::DeviceBurn, _) => native::run(device, args),
        _ => burn::run(device, args),
    }
}

/// `--learner auto`: the device learner on a GPU, the native learner on the CPU runtime and
/// on a CPU-emulated device (lavapipe), where burn's batched matrix products run as shaders
/// on the same cores (an update 37-146x the native learner's, results log 2026-11-28);
/// burn's source (`--rollout device`) keeps the native default, which
/// sends it to burn's learner as before.
fn auto_learner(device: Device, args: &TrainArgs) -> anyhow::Result<LearnerArg> {
    #[cfg(feature = "cube")]
    if let Device::Cube(kind) = device
        && args.rollout != RolloutArg::Device
    {
        let emulated: bool = cartfuse::fusion::dispatch_runtime!(kind, |opened: R| {
            anyhow::Ok(cartfuse::fusion::cube::is_cpu_emulated(&opened.description))
        })?;
        if !emulated {
            return Ok(LearnerArg::Device);
        }
    }
    #[cfg(not(feature = "cube"))]
    let _ = (device, args);
    Ok(LearnerArg::Native)
}

/// `--rollout auto`: the native learner's policies fused into the envs' step on a device,
/// `K = gcd(num_steps, 8)` steps a launch (a population's every agent in one launch);
/// otherwise the learner's policy on the host. On the CPU runtime the host policy is a
/// matrix product per agent, which beat the fused policy interpreted over each agent's few
/// lanes (64 agents to 475 on a 2-core AVX-512 VM: 39 s against 64 s under `fused-x8`);
/// on lavapipe the fused population ran 10 updates in 8.9 s against 17.9 s.
fn auto_rollout(device: Device, args: &TrainArgs) -> RolloutArg {
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    match (device, args.learner) {
        (Device::Cube(_), learner) if learner.learns_populations() => {
            RolloutArg::InGraph(Strategy::FusedSteps(gcd(args.num_steps, 8) as u32))
        }
        _ => RolloutArg::Host,
    }
}

/// CartPole as PPO steps it: `SameStep` autoreset, for the truncation bootstrap.
fn cartpole_episode() -> EpisodeOptions {
    EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        ..EpisodeOptions::default_for::<CartPole>()
    }
}

/// Moves `bar` (over `total` env-steps of all agents) after every update of an agent, and
/// prints a line every `--log-every` updates of a single agent, or when an agent of a
/// population reaches the target: on stderr, so with `--json` too (stdout then holds the
/// report's one object alone).
fn on_update<'a>(
    bar: &'a indicatif::ProgressBar,
    args: &'a TrainArgs,
    total: u64,
) -> impl FnMut(usize, &UpdateStats) + 'a {
    let population = args.population();
    let seeds = args.seeds();
    let mut steps = vec![0u64; seeds.len()];
    let mut solved = vec![false; seeds.len()];
    move |agent: usize, u: &UpdateStats| {
        steps[agent] = u.env_steps;
        bar.set_position(steps.iter().sum::<u64>().min(total));
        let mean = u.mean_return.map_or("n/a".into(), |m| format!("{m:.1}"));
        if !population {
            bar.set_message(format!("mean return {mean} over {} episodes", u.episodes));
        }
        let reached = !args.no_target && u.mean_return.is_some_and(|m| m >= args.target);
        if population {
            if reached && u.episodes >= 100 && !solved[agent] {
                solved[agent] = true;
                let done = solved.iter().filter(|s| **s).count();
                bar.set_message(format!("{done} of {} agents at the target", seeds.len()));
                say(
                    bar,
                    format!(
                        "agent {agent} (seed {}) reached {} after {} env-steps, {:.1} s",
                        seeds[agent], args.target, u.env_steps, u.seconds
                    ),
                );
            }
            return;
        }
        if u.update.is_multiple_of(args.log_every) {
            say(
                bar,
                format!(
                    "update {:5}  env-steps {:9}  mean return {mean:>6}  policy loss {:+.4}  value loss {:.3}  entropy {:.3}  {:.1} s",
                    u.update, u.env_steps, u.policy_loss, u.value_loss, u.entropy, u.seconds
                ),
            );
        }
    }
}

/// Prints `line` above the bar on a terminal, and as a plain line on stderr anywhere else
/// (indicatif draws nothing there, its `println` included, so a run into a log said
/// nothing until its end).
fn say(bar: &indicatif::ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}
