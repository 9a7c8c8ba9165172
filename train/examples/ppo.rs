//! Trains PPO on 8 CartPole-v1 envs stepped by cartfuse's native CPU runtime, learning
//! with burn's NdArray backend, until the mean return of the last 100 episodes reaches
//! 475; then saves the weights and reloads them.
//!
//! ```text
//! cargo run --release -p cartfuse-train --example ppo
//! ```

use burn::backend::{Autodiff, NdArray};
use cartfuse_env::{AutoresetMode, CartPole, EpisodeOptions, GraphEnv, StepPlan, VecEnv};
use cartfuse_fusion::cpu::Cpu;
use cartfuse_train::{ActorCritic, PpoConfig, checkpoint, train};

type Learner = Autodiff<NdArray>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = PpoConfig::default();
    let episode = EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        ..EpisodeOptions::default_for::<CartPole>()
    };
    let mut env = VecEnv::build(
        Cpu::default(),
        CartPole::default(),
        config.num_envs,
        episode,
        StepPlan::HandWritten,
    )?;
    let device = Default::default();
    let trained = train::<Learner, _, _>(&mut env, &config, &device, |u| {
        if u.update % 10 == 0 {
            println!(
                "update {:4}  env-steps {:7}  mean return {:6.1}  ({:.1} s)",
                u.update,
                u.env_steps,
                u.mean_return.unwrap_or(f64::NAN),
                u.seconds
            );
        }
    })?;
    let report = &trained.report;
    match &report.solved {
        Some(s) => println!(
            "mean return >= 475 after {} env-steps, {:.1} s",
            s.env_steps, s.seconds
        ),
        None => println!(
            "not solved; final mean return {:?}",
            report.final_mean_return
        ),
    }
    println!(
        "rollout {:.3e} env-steps/s, learning {:.3e} env-steps/s",
        report.rollout_env_steps_per_s, report.learn_env_steps_per_s
    );
    let path = std::env::temp_dir().join("cartfuse-ppo-example");
    checkpoint::save(&trained.model, &path)?;
    let fresh = ActorCritic::<Learner>::new(CartPole::OBS_DIM, 2, config.hidden, 0, &device);
    let _reloaded = checkpoint::load(fresh, &path, &device)?;
    println!("weights saved to and reloaded from {}.mpk", path.display());
    Ok(())
}
