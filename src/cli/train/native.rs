//! `cartfuse train --learner native|device|device-burn`: one agent or a population, learnt
//! by the native batched learner on the CPU or by a device learner on the envs' device
//! (hand-written kernels, a cube per agent; or burn tensor ops, agents a batch dimension),
//! the envs on `--device`, the policy acting on the host or fused into the envs' step.

use std::path::{Path, PathBuf};

use burn::backend::NdArray;
use cartfuse::StepPlan;
use cartfuse::env::{CartPole, GraphEnv};
use cartfuse::fusion::cpu::SimdLevel;
use cartfuse::fusion::device::Device;
use cartfuse::fusion::dispatch_backend;
use cartfuse::fusion::exec::Backend;
use cartfuse::train::learner::{Learner, NetShape};
use cartfuse::train::population::{
    PopulationConfig, PopulationLearner, PopulationReport, Rollouts, train_population_on,
};
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
    let host = learner_for(&config, &args)?;
    let agents = config.agents.len();
    let plural = if agents == 1 { "" } else { "s" };
    let work = (&config, rollouts, &args);
    let ((learner, report, description), learner_name) = match args.learner {
        #[cfg(feature = "cube")]
        super::args::LearnerArg::Device => device_learner(device, host, work, Kernels)?,
        #[cfg(feature = "cube")]
        super::args::LearnerArg::DeviceBurn => device_learner(device, host, work, BurnFusion)?,
        _ => (
            train_on(device, host, work)?,
            format!(
                "native batched learner (CPU, {}; {agents} agent{plural})",
                SimdLevel::detect()
            ),
        ),
    };
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
    let rollout = match rollouts {
        #[cfg(feature = "cube")]
        Rollouts::Fused(plan) if args.learner.learns_on_the_device() => {
            format!("policy fused into the env's step ({plan}), samples kept on the device")
        }
        Rollouts::Fused(plan) => format!("policy fused into the env's step ({plan})"),
        Rollouts::Host(_) => "native policy on the host observations, then the env step".into(),
    };
    let described = (envs.as_str(), learner_name.as_str(), rollout.as_str());
    if args.population() {
        print::population(&report, &args, described)
    } else {
        print::single(&report.agent_report(0), &args, described)
    }
}

/// What one population run needs besides the device and the learner.
type Work<'a> = (&'a PopulationConfig, Rollouts, &'a TrainArgs);

/// Trains `learner`'s agents on envs on `device`, with a progress bar; returns the trained
/// weights, the report and the envs' device description.
fn train_on<L: PopulationLearner>(
    device: Device,
    learner: L,
    (config, rollouts, args): Work<'_>,
) -> anyhow::Result<(Learner, PopulationReport, String)> {
    let episode = cartpole_episode();
    let total = config.shared.total_env_steps * config.agents.len() as u64;
    dispatch_backend!(device, |backend: B| {
        let description = backend.description();
        tracing::info!(device = %description, "opened device for the envs");
        let bar = progress::bar(total, "PPO");
        let trained = train_population_on(
            &backend,
            &CartPole::default(),
            &episode,
            rollouts,
            config,
            learner,
            on_update(&bar, args, total),
        );
        bar.finish_and_clear();
        let (learner, report) = trained?;
        anyhow::Ok((learner.into_host(), report, description))
    })
}

/// Which device learner: the hand-written kernels or burn's tensor ops.
#[cfg(feature = "cube")]
trait DeviceLearnerKind: Copy {
    /// The learner of `host`'s agents on runtime `R`'s default device, the adapter
    /// `adapter`.
    fn build<R: cartfuse::train::device_collect::CubeRuntime>(
        self,
        host: Learner,
        adapter: &str,
    ) -> anyhow::Result<impl cartfuse::train::device_population::DeviceResident<R>>;
    /// Its description, on the device `adapter` through runtime `runtime`.
    fn name(self, adapter: &str, runtime: &str, agents: usize) -> String;
}

/// The hand-written kernels (`--learner device`): one launch a minibatch step.
#[cfg(feature = "cube")]
#[derive(Clone, Copy)]
struct Kernels;

#[cfg(feature = "cube")]
impl DeviceLearnerKind for Kernels {
    fn build<R: cartfuse::train::device_collect::CubeRuntime>(
        self,
        host: Learner,
        adapter: &str,
    ) -> anyhow::Result<impl cartfuse::train::device_population::DeviceResident<R>> {
        use cartfuse::train::kernel_learner::{KernelLearner, Target};
        let target = match cartfuse::fusion::cube::is_cpu_emulated(adapter) {
            true => Target::CpuEmulated,
            false => Target::Gpu,
        };
        Ok(KernelLearner::<R>::new(host, &Default::default(), target)?)
    }

    fn name(self, adapter: &str, runtime: &str, agents: usize) -> String {
        format!(
            "device learner (hand-written CubeCL kernels ({runtime}), one launch a minibatch \
             step, on {adapter}; {agents} agents, a cube each)"
        )
    }
}

/// burn's tensor ops (`--learner device-burn`): its fusion over `CubeBackend`, with
/// autodiff. Fused, a minibatch step is about 120 launches instead of 217; on lavapipe an
/// update took 0.85x the unfused one's time at 16 agents and 0.81x at 64, 1.28x at 2 (in
/// turns, 2026-11-29, results log).
#[cfg(feature = "cube")]
#[derive(Clone, Copy)]
struct BurnFusion;

#[cfg(feature = "cube")]
impl DeviceLearnerKind for BurnFusion {
    fn build<R: cartfuse::train::device_collect::CubeRuntime>(
        self,
        host: Learner,
        _adapter: &str,
    ) -> anyhow::Result<impl cartfuse::train::device_population::DeviceResident<R>> {
        use cartfuse::train::device_population::DeviceTensorLearner;
        Ok(DeviceTensorLearner::<R>::new(host, &Default::default()))
    }

    fn name(self, adapter: &str, runtime: &str, agents: usize) -> String {
        format!(
            "device learner (burn fusion over CubeBackend ({runtime}) + Autodiff on {adapter}; \
             {agents} agents as a batch dimension)"
        )
    }
}

/// [`train_on`] with the device learner `kind` on the envs' runtime (the same device);
/// returns the learner's description too.
#[cfg(feature = "cube")]
fn device_learner(
    device: Device,
    host: Learner,
    work: Work<'_>,
    kind: impl DeviceLearnerKind,
) -> anyhow::Result<((Learner, PopulationReport, String), String)> {
    use cartfuse::fusion::device::RuntimeKind;
    let agents = host.agents();
    match device {
        #[cfg(feature = "wgpu")]
        Device::Cube(RuntimeKind::Wgpu) => {
            // burn panics when wgpu finds no adapter: open it first for a clear error.
            let opened = cartfuse::fusion::cube::device::wgpu_client()?;
            let learner = kind
                .build::<cartfuse::fusion::cubecl::wgpu::WgpuRuntime>(host, &opened.description)?;
            let name = kind.name(&opened.description, "wgpu", agents);
            Ok((train_on_runtime(device, &opened, learner, work)?, name))
        }
        #[cfg(feature = "cuda")]
        Device::Cube(RuntimeKind::Cuda) => {
            let opened = cartfuse::fusion::cube::device::cuda_client()?;
            let learner = kind
                .build::<cartfuse::fusion::cubecl::cuda::CudaRuntime>(host, &opened.description)?;
            let name = kind.name(&opened.description, "CUDA", agents);
            Ok((train_on_runtime(device, &opened, learner, work)?, name))
        }
        _ => anyhow::bail!(
            "the device learners (`--learner device`, `device-burn`) learn on the envs' device: \
             use `--device wgpu` (or `--device cuda` in a CUDA build), or `--learner native` on \
             the CPU; got `--device {device}`"
        ),
    }
}

/// The device learner's run on `opened` (runtime `R`): with the policies fused into the
/// envs' step, the envs run on the learner's own client and the samples stay on the device
/// ([`train_population_on_device`]); with host rollouts, as [`train_on`].
#[cfg(feature = "cube")]
fn train_on_runtime<R, L>(
    device: Device,
    opened: &cartfuse::fusion::cube::device::OpenedDevice<R>,
    learner: L,
    work: Work<'_>,
) -> anyhow::Result<(Learner, PopulationReport, String)>
where
    R: cartfuse::train::device_collect::CubeRuntime,
    L: cartfuse::train::device_population::DeviceResident<R>,
{
    use cartfuse::train::device_population::train_population_on_device;
    let (config, rollouts, args) = work;
    let Rollouts::Fused(strategy) = rollouts else {
        return train_on(device, learner, work);
    };
    let backend = cartfuse::fusion::cube::Cube::new(opened);
    let description = backend.description();
    tracing::info!(device = %description, "opened device for the envs and the learner");
    let total = config.shared.total_env_steps * config.agents.len() as u64;
    let bar = progress::bar(total, "PPO");
    let trained = train_population_on_device(
        &backend,
        &CartPole::default(),
        &cartpole_episode(),
        strategy,
        config,
        learner,
        on_update(&bar, args, total),
    );
    bar.finish_and_clear();
    let (learner, report) = trained?;
    Ok((learner.into_host(), report, description))
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
