//! `cartfuse train --learner ndarray|wgpu|cuda`: one agent learnt by burn, its samples from
//! burn's policy on the host, the policy fused into the env's step, or burn's policy on the
//! envs' device.

use clap::ValueEnum;

#[cfg(any(feature = "wgpu", feature = "cuda"))]
use burn::backend::Autodiff;
use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;
use cartfuse::StepPlan;
use cartfuse::env::rollout::PolicyRollout;
use cartfuse::env::{CartPole, GraphEnv, VecEnv};
use cartfuse::fusion::device::Device;
use cartfuse::fusion::dispatch_backend;
use cartfuse::fusion::exec::Backend;
use cartfuse::train::ppo::NdArrayLearner;
use cartfuse::train::{ActorCritic, PpoConfig, Trained, checkpoint, train_from, train_fused_from};
#[cfg(any(feature = "wgpu", feature = "cuda"))]
use cartfuse::{
    fusion::cube::Cube,
    fusion::cube::device::OpenedDevice,
    fusion::device::RuntimeKind,
    train::device_collect::{CubeRuntime, DeviceLearner},
    train::train_device_from,
};

use super::args::{LearnerArg, RolloutArg, TrainArgs};
use super::print::{self, Described};
use super::{cartpole_episode, on_update};
use crate::cli::progress;

/// Trains on the burn backend `--learner` names, prints progress and the report, and saves
/// the weights when asked.
pub fn run(device: Device, args: TrainArgs) -> anyhow::Result<()> {
    let lists = [
        args.learning_rate.len(),
        args.ent_coef.len(),
        args.clip_coef.len(),
    ];
    if args.population() || lists.iter().any(|&len| len > 1) {
        anyhow::bail!(if args.learner == LearnerArg::Native {
            "a population collects with `--rollout host` or a fused plan; `--rollout device` \
             is burn's single-agent source"
        } else {
            "burn's learners train one agent: populations (--agents, --seeds, per-agent lists) \
             need --learner native or device"
        });
    }
    if args.rollout == RolloutArg::Device {
        return run_device(device, args);
    }
    match args.learner {
        LearnerArg::Auto => unreachable!("`train::run` resolves `auto`"),
        LearnerArg::Native => unreachable!("`train::run` sends the native learner elsewhere"),
        #[cfg(feature = "cube")]
        LearnerArg::Device | LearnerArg::DeviceBurn => {
            unreachable!("`train::run` sends the device learners elsewhere")
        }
        // burn's CPU learner, by the trainer's name for it.
        LearnerArg::Ndarray => run_with::<NdArrayLearner>(
            device,
            args,
            Default::default(),
            "burn NdArray + Autodiff (CPU)",
        ),
        #[cfg(feature = "wgpu")]
        LearnerArg::Wgpu => {
            // burn panics when wgpu finds no adapter: say so first, as `--device wgpu` does.
            let opened = cartfuse::fusion::cube::device::wgpu_client()?;
            let name = format!("burn Wgpu (fusion) + Autodiff on {}", opened.description);
            run_with::<Autodiff<burn::backend::Wgpu>>(device, args, Default::default(), &name)
        }
        #[cfg(feature = "cuda")]
        LearnerArg::Cuda => {
            let opened = cartfuse::fusion::cube::device::cuda_client()?;
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
            let opened = cartfuse::fusion::cube::device::wgpu_client()?;
            run_on_device(device, &args, opened)
        }
        #[cfg(feature = "cuda")]
        (LearnerArg::Cuda, Device::Cube(RuntimeKind::Cuda)) => {
            let opened = cartfuse::fusion::cube::device::cuda_client()?;
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
    let config = args.ppo_config()?;
    let learner = format!(
        "burn CubeBackend (no fusion) + Autodiff on {}, sharing the envs' device",
        opened.description
    );
    let model = model_for::<Autodiff<DeviceLearner<R>>>(&config, args, &opened.device)?;
    let backend = Cube::new(&opened);
    let mut env = VecEnv::build(
        backend,
        CartPole::default(),
        config.num_envs,
        cartpole_episode(),
        StepPlan::default(),
    )?;
    let bar = progress::bar(config.total_env_steps, "PPO");
    let mut on_update = on_update(&bar, args, config.total_env_steps);
    let trained = train_device_from(&mut env, &config, model, &opened.device, |u| {
        on_update(0, u)
    });
    bar.finish_and_clear();
    let envs = format!("{device} ({})", opened.description);
    finish(
        trained?,
        args,
        (&envs, &learner, "burn policy and env step on the device"),
    )
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

/// Saves the weights when asked and prints the report (as JSON with `--json`).
fn finish<L: AutodiffBackend>(
    trained: Trained<L>,
    args: &TrainArgs,
    described: Described<'_>,
) -> anyhow::Result<()> {
    if let Some(path) = &args.save {
        checkpoint::save(&trained.model, path)?;
    }
    print::single(&trained.report, args, described)
}

/// [`run`] with the learner `L` on `learner_device`.
fn run_with<L: AutodiffBackend>(
    device: Device,
    args: TrainArgs,
    learner_device: L::Device,
    learner: &str,
) -> anyhow::Result<()> {
    let config = args.ppo_config()?;
    let model = model_for::<L>(&config, &args, &learner_device)?;
    let episode = cartpole_episode();
    let (trained, description) = dispatch_backend!(device, |backend: B| {
        let description = backend.description();
        tracing::info!(device = %description, "opened device for the envs");
        let bar = progress::bar(config.total_env_steps, "PPO");
        let mut on_update = on_update(&bar, &args, config.total_env_steps);
        let on_update = |u: &_| on_update(0, u);
        let trained = match args.rollout {
            RolloutArg::Host | RolloutArg::Auto => {
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
