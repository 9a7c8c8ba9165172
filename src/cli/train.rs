//! `cartfuse train`: PPO on CartPole-v1 until the mean return reaches the target.

use std::path::Path;

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
    ActorCritic, PpoConfig, TrainReport, UpdateStats, checkpoint, train_from, train_fused_from,
};

use super::args::{LearnerArg, RolloutArg, TrainArgs};
use super::progress;

/// Trains on the learner `--learner` names, prints progress and the report, and saves the
/// weights when asked.
pub fn run(device: Device, args: TrainArgs) -> anyhow::Result<()> {
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

/// [`run`] with the learner `L` on `learner_device`.
fn run_with<L: AutodiffBackend>(
    device: Device,
    args: TrainArgs,
    learner_device: L::Device,
    learner: &str,
) -> anyhow::Result<()> {
    let config = PpoConfig {
        num_envs: args.envs,
        num_steps: args.num_steps,
        total_env_steps: args.total_env_steps,
        target_return: (!args.no_target).then_some(args.target),
        learning_rate: args.learning_rate,
        seed: args.seed,
        ..PpoConfig::default()
    };
    config.validate()?;
    let mut model = ActorCritic::<L>::new(
        CartPole::OBS_DIM,
        2,
        config.hidden,
        config.seed,
        &learner_device,
    );
    if let Some(path) = &args.load {
        model = checkpoint::load(model, path, &learner_device)?;
    }
    let episode = EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        ..EpisodeOptions::default_for::<CartPole>()
    };
    let (trained, description) = dispatch_backend!(device, |backend: B| {
        let description = backend.description();
        tracing::info!(device = %description, "opened device for the envs");
        let bar = progress::bar(config.total_env_steps, "PPO");
        let on_update = |u: &UpdateStats| {
            bar.set_position(u.env_steps.min(config.total_env_steps));
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
        };
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
        };
        bar.finish_and_clear();
        anyhow::Ok((trained?, description))
    })?;
    if let Some(path) = &args.save {
        checkpoint::save(&trained.model, path)?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&trained.report)?);
    } else {
        let rollout = match args.rollout {
            RolloutArg::Host => "burn policy on the host observations, then the env step".into(),
            RolloutArg::InGraph(plan) => format!("policy fused into the env's step ({plan})"),
        };
        print_report(
            &trained.report,
            (&format!("{device} ({description})"), learner, &rollout),
            args.save.as_deref(),
        );
    }
    Ok(())
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
