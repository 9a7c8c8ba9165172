//! `cartfuse train`: PPO on CartPole-v1 until the mean return reaches the target.

use std::path::Path;

use clap::ValueEnum;

use burn::backend::{Autodiff, NdArray};
use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;
use cartfuse::StepPlan;
use cartfuse::env::rollout::PolicyRollout;
use cartfuse::env::{AutoresetMode, CartPole, EpisodeOptions, GraphEnv, VecEnv};
use cartfuse::fusion::backend::Backend;
use cartfuse::fusion::device::Device;
use cartfuse::fusion::dispatch_backend;
use cartfuse::train::{
    ActorCritic, PpoConfig, TrainReport, Trained, UpdateStats, checkpoint, train_from,
    train_fused_from,
};
#[cfg(any(feature = "wgpu", feature = "cuda"))]
use cartfuse::{
    fusion::backend::Cube,
    fusion::device::{OpenedDevice, RuntimeKind},
    train::device_collect::{CubeRuntime, DeviceLearner},
    train::train_device_from,
};

use super::args::{LearnerArg, RolloutArg, TrainArgs};
use super::progress;

/// Trains on the learner `--learner` names, prints progress and the report, and saves the
/// weights when asked.
pub fn run(device: Device, args: TrainArgs) -> anyhow::Result<()> {
    if args.rollout == RolloutArg::Device {
        return run_device(device, args);
    }
    match args.learner {
        LearnerArg::Ndarray => run_with::<Autodiff<NdArray>>(
            device,
            args,
            Default::default(),
            "burn NdArray + Autodiff (CPU)",
        ),
        #[cfg(feature = "wgpu")]
        LearnerArg::Wgpu => {
            // burn panics when wgpu finds no adapter: say so first, as `--device wgpu` does.
            let opened = cartfuse::fusion::device::wgpu_client()?;
            let name = format!("burn Wgpu (fusion) + Autodiff on {}", opened.description);
            run_with::<Autodiff<burn::backend::Wgpu>>(device, args, Default::default(), &name)
        }
        #[cfg(feature = "cuda")]
        LearnerArg::Cuda => {
            let opened = cartfuse::fusion::device::cuda_client()?;
            let name = format!("burn Cuda (fusion) + Autodiff on {}", opened.description);
            run_with::<Autodiff<burn::backend::Cuda>>(device, args, Default::default(), &name)
        }
    }
}

/// `--rollout device`: burn's `CubeBackend` learns on the envs' own runtime, and the two
/// pass buffers on the device ([`train_device_from`]). The learner has to be the envs'
/// device: `--learner wgpu --device wgpu`, or `--learner cuda --device cuda`.
fn run_device(device: Device, args: TrainArgs) -> anyhow::Result<()> {
    let mismatch = || {
        anyhow::anyhow!(
            "`--rollout device` keeps the samples on the envs' device, so the learner must be \
             on it: use `--learner wgpu --device wgpu` (or `--learner cuda --device cuda` in a \
             CUDA build); got `--learner {} --device {device}`",
            args.learner
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_owned())
        )
    };
    match (args.learner, device) {
        #[cfg(feature = "wgpu")]
        (LearnerArg::Wgpu, Device::Cube(RuntimeKind::Wgpu)) => {
            let opened = cartfuse::fusion::device::wgpu_client()?;
            run_on_device(device, &args, opened)
        }
        #[cfg(feature = "cuda")]
        (LearnerArg::Cuda, Device::Cube(RuntimeKind::Cuda)) => {
            let opened = cartfuse::fusion::device::cuda_client()?;
            run_on_device(device, &args, opened)
        }
        _ => Err(mismatch()),
    }
}

/// [`run_device`] on the opened runtime `R`.
#[cfg(any(feature = "wgpu", feature = "cuda"))]
fn run_on_device<R: CubeRuntime>(
    device: Device,
    args: &TrainArgs,
    opened: OpenedDevice<R>,
) -> anyhow::Result<()> {
    let config = ppo_config(args)?;
    let learner = format!(
        "burn CubeBackend (no fusion) + Autodiff on {}, sharing the envs' device",
        opened.description
    );
    let model = model_for::<Autodiff<DeviceLearner<R>>>(&config, args, &opened.device)?;
    let backend = Cube::new(opened.client, opened.description.clone());
    let mut env = VecEnv::build(
        backend,
        CartPole::default(),
        config.num_envs,
        cartpole_episode(),
        StepPlan::default(),
    )?;
    let bar = progress::bar(config.total_env_steps, "PPO");
    let trained = train_device_from(
        &mut env,
        &config,
        model,
        &opened.device,
        on_update(&bar, args, config.total_env_steps),
    );
    bar.finish_and_clear();
    let envs = format!("{device} ({})", opened.description);
    finish(
        trained?,
        args,
        (&envs, &learner, "burn policy and env step on the device"),
    )
}

/// The PPO settings `args` give.
fn ppo_config(args: &TrainArgs) -> anyhow::Result<PpoConfig> {
    let config = PpoConfig {
        num_envs: args.envs,
        num_steps: args.num_steps,
        total_env_steps: args.total_env_steps,
        target_return: (!args.no_target).then_some(args.target),
        learning_rate: args.learning_rate,
        update_epochs: args.epochs,
        num_minibatches: args.minibatches,
        gamma: args.gamma,
        gae_lambda: args.gae_lambda,
        ent_coef: args.ent_coef,
        seed: args.seed,
        ..PpoConfig::default()
    };
    config.validate()?;
    Ok(config)
}

/// A fresh network from the seed, or the one `--load` names.
fn model_for<L: AutodiffBackend>(
    config: &PpoConfig,
    args: &TrainArgs,
    device: &L::Device,
) -> anyhow::Result<ActorCritic<L>> {
    let model = ActorCritic::<L>::new(CartPole::OBS_DIM, 2, config.hidden, config.seed, device);
    Ok(match &args.load {
        Some(path) => checkpoint::load(model, path, device)?,
        None => model,
    })
}

/// CartPole as PPO steps it: `SameStep` autoreset, for the truncation bootstrap.
fn cartpole_episode() -> EpisodeOptions {
    EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        ..EpisodeOptions::default_for::<CartPole>()
    }
}

/// Moves `bar` after every update and prints a line every `--log-every` updates.
fn on_update<'a>(
    bar: &'a indicatif::ProgressBar,
    args: &'a TrainArgs,
    total: u64,
) -> impl FnMut(&UpdateStats) + 'a {
    move |u: &UpdateStats| {
        bar.set_position(u.env_steps.min(total));
        let mean = u.mean_return.map_or("n/a".into(), |m| format!("{m:.1}"));
        bar.set_message(format!("mean return {mean} over {} episodes", u.episodes));
        if args.json {
            return;
        }
        if u.update.is_multiple_of(args.log_every) {
            bar.println(format!(
                "update {:5}  env-steps {:9}  mean return {mean:>6}  policy loss {:+.4}  value loss {:.3}  entropy {:.3}  {:.1} s",
                u.update, u.env_steps, u.policy_loss, u.value_loss, u.entropy, u.seconds
            ));
        }
    }
}

/// Saves the weights when asked and prints the report (as JSON with `--json`).
fn finish<L: AutodiffBackend>(
    trained: Trained<L>,
    args: &TrainArgs,
    (envs, learner, rollout): (&str, &str, &str),
) -> anyhow::Result<()> {
    if let Some(path) = &args.save {
        checkpoint::save(&trained.model, path)?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&trained.report)?);
    } else {
        print_report(
            &trained.report,
            (envs, learner, rollout),
            args.save.as_deref(),
        );
    }
    Ok(())
}

/// [`run`] with the learner `L` on `learner_device`.
fn run_with<L: AutodiffBackend>(
    device: Device,
    args: TrainArgs,
    learner_device: L::Device,
    learner: &str,
) -> anyhow::Result<()> {
    let config = ppo_config(&args)?;
    let model = model_for::<L>(&config, &args, &learner_device)?;
    let episode = cartpole_episode();
    let (trained, description) = dispatch_backend!(device, |backend: B| {
        let description = backend.description();
        tracing::info!(device = %description, "opened device for the envs");
        let bar = progress::bar(config.total_env_steps, "PPO");
        let on_update = on_update(&bar, &args, config.total_env_steps);
        let trained = match args.rollout {
            RolloutArg::Host => {
                let mut env = VecEnv::build(
                    backend,
                    CartPole::default(),
                    config.num_envs,
                    episode,
                    StepPlan::default(),
                )?;
                train_from(&mut env, &config, model, &learner_device, on_update)
            }
            RolloutArg::InGraph(strategy) => {
                let (spec, _) = model.valid().rollout_weights()?;
                let mut rollout = PolicyRollout::new(
                    &backend,
                    &CartPole::default(),
                    &episode,
                    spec,
                    strategy,
                    config.num_envs,
                )?;
                train_fused_from(&mut rollout, &config, model, &learner_device, on_update)
            }
            RolloutArg::Device => unreachable!("`run` sends the device source to `run_device`"),
        };
        bar.finish_and_clear();
        anyhow::Ok((trained?, description))
    })?;
    let rollout = match args.rollout {
        RolloutArg::InGraph(plan) => format!("policy fused into the env's step ({plan})"),
        _ => "burn policy on the host observations, then the env step".into(),
    };
    let envs = format!("{device} ({description})");
    finish(trained, &args, (&envs, learner, &rollout))
}

fn print_report(
    report: &TrainReport,
    (device, learner, rollout): (&str, &str, &str),
    saved: Option<&Path>,
) {
    let c = &report.config;
    println!("environment:          {}", CartPole::ID);
    println!("envs device:          {device}");
    println!("learner:              {learner}");
    println!("rollout:              {rollout}");
    println!(
        "envs x rollout steps: {} x {}, seed {}",
        c.num_envs, c.num_steps, c.seed
    );
    match (&report.solved, c.target_return) {
        (Some(solved), Some(target)) => println!(
            "mean return >= {target} after {} env-steps, {:.1} s wall time",
            solved.env_steps, solved.seconds
        ),
        (None, Some(target)) => println!(
            "mean return did not reach {target} within {} env-steps",
            c.total_env_steps
        ),
        (_, None) => {}
    }
    match report.final_mean_return {
        Some(mean) => println!(
            "final mean return:    {mean:.1} (last {} of {} episodes)",
            c.return_window.min(report.episodes as usize),
            report.episodes
        ),
        None => println!("final mean return:    n/a (no episode finished)"),
    }
    println!("env-steps:            {}", report.env_steps);
    println!("wall time:            {:.1} s", report.seconds);
    println!(
        "rollout time:         {:.1} s, {:.3e} env-steps/s (policy forward + env step)",
        report.rollout_seconds, report.rollout_env_steps_per_s
    );
    println!(
        "learning:             {:.1} s, {:.3e} env-steps/s ({} epochs per sample)",
        report.learn_seconds, report.learn_env_steps_per_s, c.update_epochs
    );
    if let Some(path) = saved {
        println!("weights saved to:     {}.mpk", path.display());
    }
}
