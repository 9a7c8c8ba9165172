//! Every registered environment behind one object-safe trait.
//!
//! [`open`] reaches the environment an id names through `cartfuse_env::with_env!` and the
//! runtime a [`Device`] names, builds one `VecEnv<E, B>` and boxes it as a [`DynVecEnv`]:
//! nothing here names an environment, so an environment registered in
//! `cartfuse_env::registry` is reachable from Python with no change to the bindings.
//! [`EnvInfo`] describes an environment (spaces, state names, episode limit) from the same
//! [`GraphEnv`] definition, so Python builds its spaces from Rust's.

use std::time::{Duration, Instant};

use cartfuse_env::environment::ActionElement;
use cartfuse_env::gym_args::{Kwarg, ResetOptions};
use cartfuse_env::memory;
use cartfuse_env::registry::{ENV_IDS, unknown_env};
use cartfuse_env::spaces::{ActionSpace, BoxSpace};
use cartfuse_env::{
    DeviceActions, EnvError, EpisodeOptions, GraphEnv, HostOutputs, StepPlan, VecEnv,
};
use cartfuse_fusion::cpu::{Cpu, CpuOptions};
#[cfg(any(feature = "wgpu", feature = "cuda"))]
use cartfuse_fusion::cube::Cube;
#[cfg(any(feature = "wgpu", feature = "cuda"))]
use cartfuse_fusion::cube::device as devices;
use cartfuse_fusion::device::DeviceError;

use cartfuse_fusion::device::Device;
#[cfg(any(feature = "wgpu", feature = "cuda"))]
use cartfuse_fusion::device::RuntimeKind;

use crate::device::unavailable;
use crate::error::{BackendError, non_finite};
use crate::resident::Memory;
use crate::resident::ResidentMemory;

/// What one environment is, read from its [`GraphEnv`] implementation.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvInfo {
    /// gymnasium's id.
    pub id: &'static str,
    /// Length of one observation row.
    pub obs_dim: usize,
    /// State components, in the order of gymnasium's `env.unwrapped.state`.
    pub state_names: &'static [&'static str],
    /// gymnasium's registered `max_episode_steps`.
    pub max_episode_steps: u32,
    /// The observation space of one env.
    pub observation: BoxSpace,
    /// The action space of one env.
    pub action: ActionSpace,
    /// gymnasium's `metadata["render_fps"]`.
    pub render_fps: u32,
    /// gymnasium's constructor arguments.
    pub kwargs: &'static [Kwarg],
    /// The options gymnasium's `reset(options=...)` reads.
    pub reset_options: ResetOptions,
    /// The default `(low, high)` of each drawn component of a reset.
    pub reset_bounds: Vec<(f64, f64)>,
}

impl EnvInfo {
    /// The description of `env`.
    pub fn of<E: GraphEnv>(env: &E) -> Self {
        Self {
            id: E::ID,
            obs_dim: E::OBS_DIM,
            state_names: E::STATE,
            max_episode_steps: E::MAX_EPISODE_STEPS,
            observation: env.observation_space(),
            action: env.action_space(),
            render_fps: E::RENDER_FPS,
            kwargs: E::KWARGS,
            reset_options: E::RESET_OPTIONS,
            reset_bounds: env.reset_bounds(),
        }
    }

    /// Values one env's action holds: 1 for a discrete action, the box's size otherwise.
    pub fn action_size(&self) -> usize {
        match &self.action {
            ActionSpace::Discrete(_) => 1,
            ActionSpace::Box(space) => space.shape.iter().product(),
        }
    }
}

/// The ids of every registered environment.
pub fn ids() -> &'static [&'static str] {
    ENV_IDS
}

/// The error of an id no environment has.
pub fn unknown(id: &str) -> BackendError {
    BackendError::invalid("env_id", unknown_env(id))
}

/// The description of the environment `id` names (with its default params).
pub fn describe(id: &str) -> Result<EnvInfo, BackendError> {
    cartfuse_env::with_env!(id, |E| Ok(EnvInfo::of(&E::default())), Err(unknown(id)))
}

/// One step's actions, as converted from numpy: discrete choices or continuous values
/// (`num_envs` rows of the box's size, row-major).
#[derive(Debug, Clone, PartialEq)]
pub enum Actions {
    /// One choice per env.
    Discrete(Vec<u32>),
    /// One row of the action box per env.
    Continuous(Vec<f32>),
}

/// An action element type the bindings can hand to a vector env.
pub trait HostAction: Sized {
    /// `actions` as this element type, or an error when they are of the other kind.
    fn slice(actions: &Actions) -> Result<&[Self], BackendError>;
}

impl HostAction for u32 {
    fn slice(actions: &Actions) -> Result<&[u32], BackendError> {
        match actions {
            Actions::Discrete(actions) => Ok(actions),
            Actions::Continuous(_) => Err(BackendError::invalid(
                "actions",
                "expected integer actions: the action space is discrete",
            )),
        }
    }
}

impl HostAction for f32 {
    fn slice(actions: &Actions) -> Result<&[f32], BackendError> {
        match actions {
            Actions::Continuous(actions) => Ok(actions),
            Actions::Discrete(_) => Err(BackendError::invalid(
                "actions",
                "expected float actions: the action space is a Box",
            )),
        }
    }
}

/// A vector env of some environment on some runtime, as the bindings drive it.
pub trait DynVecEnv: Send {
    /// The plan the step runs.
    fn plan(&self) -> StepPlan;
    /// [`VecEnv::reset_seeded`]: each env keyed by its own seed.
    fn reset_seeded(
        &mut self,
        seeds: &[Option<u64>],
        mask: Option<&[bool]>,
        bounds: Option<&[(f64, f64)]>,
    ) -> Result<Vec<f32>, EnvError>;
    /// [`VecEnv::step_into`] `out`, after taking `actions` as the environment's element type.
    fn step(&mut self, actions: &Actions, out: &mut HostOutputs<'_>) -> Result<(), BackendError>;
    /// The time of `calls` steps of the Rust API with actions already on the device
    /// ([`VecEnv::step_device`], outputs left in the runtime's buffers): the Rust step that
    /// Python's is measured against.
    fn time_device_steps(&mut self, calls: u64) -> Result<Duration, BackendError>;
    /// The time of `calls` host steps of the Rust API ([`VecEnv::step_into`]: actions from
    /// the host, outputs into host memory allocated once), the first untimed.
    fn time_host_steps(&mut self, calls: u64) -> Result<Duration, BackendError>;
    /// [`VecEnv::set_state`].
    fn set_state(&mut self, states: &[Vec<f64>]) -> Result<(), EnvError>;
    /// [`VecEnv::state`].
    fn state(&self) -> Result<Vec<Vec<f64>>, EnvError>;
    /// The DLPack id of the device, where the runtime's buffers can be viewed through
    /// DLPack ([`ResidentMemory`]).
    fn dlpack_device_id(&self) -> Option<i32>;
    /// Steps with `actions` and leaves the outputs on the device: the actions go into a
    /// buffer allocated at the first such step (written from the host, or copied from a
    /// CUDA tensor), the step is launched, and the one read of the invalid-action flag waits
    /// for it, so the outputs are ready on the device when this returns.
    fn step_resident(&mut self, actions: ResidentActions<'_>)
    -> Result<ResidentStep, BackendError>;
    /// `obs` (a reset's observations, on the host) in a new device buffer, written before
    /// this returns.
    fn upload_obs(&mut self, obs: &[f32]) -> Result<Memory, BackendError>;
}

/// The actions of [`DynVecEnv::step_resident`].
pub enum ResidentActions<'a> {
    /// Converted from numpy on the host.
    Host(&'a Actions),
    /// A CUDA tensor's bytes, on the env's device, ready on CUDA's legacy default stream.
    Cuda {
        /// The first action's address.
        address: u64,
        /// Their bytes (the buffer's: checked by the caller against the shape).
        bytes: usize,
    },
}

/// The outputs of [`DynVecEnv::step_resident`], where they live on the device.
pub struct ResidentStep {
    /// `[n, obs_dim]` `f32`.
    pub obs: Memory,
    /// `[n]` `f32`.
    pub reward: Memory,
    /// `[n]` 32-bit flags.
    pub terminated: Memory,
    /// `[n]` 32-bit flags.
    pub truncated: Memory,
}

struct Typed<E: GraphEnv, B: ResidentMemory> {
    vec_env: VecEnv<E, B>,
    /// The actions of [`DynVecEnv::step_resident`], allocated at its first call, with their
    /// address where the runtime has device views.
    resident_actions: Option<(B::Buffer, Option<u64>)>,
}

impl<E: GraphEnv, B: ResidentMemory> DynVecEnv for Typed<E, B>
where
    E::Action: HostAction,
{
    fn plan(&self) -> StepPlan {
        self.vec_env.plan()
    }

    fn reset_seeded(
        &mut self,
        seeds: &[Option<u64>],
        mask: Option<&[bool]>,
        bounds: Option<&[(f64, f64)]>,
    ) -> Result<Vec<f32>, EnvError> {
        self.vec_env.reset_seeded(seeds, mask, bounds)
    }

    fn step(&mut self, actions: &Actions, out: &mut HostOutputs<'_>) -> Result<(), BackendError> {
        let actions = E::Action::slice(actions)?;
        Ok(self.vec_env.step_into(actions, out)?)
    }

    fn time_device_steps(&mut self, calls: u64) -> Result<Duration, BackendError> {
        let n = self.vec_env.num_envs();
        let pattern = self.vec_env.env().pattern_actions(n);
        let actions = self.vec_env.upload_actions(&pattern)?;
        self.vec_env.sync()?;
        let start = Instant::now();
        for _ in 0..calls {
            self.vec_env.step_device(&actions)?;
        }
        self.vec_env.sync()?;
        Ok(start.elapsed())
    }

    fn time_host_steps(&mut self, calls: u64) -> Result<Duration, BackendError> {
        let n = self.vec_env.num_envs();
        let pattern = self.vec_env.env().pattern_actions(n);
        let mut owned = self.vec_env.owned_outputs();
        let mut out = owned.as_host();
        self.vec_env.step_into(&pattern, &mut out)?;
        let start = Instant::now();
        for _ in 0..calls {
            self.vec_env.step_into(&pattern, &mut out)?;
        }
        Ok(start.elapsed())
    }

    fn set_state(&mut self, states: &[Vec<f64>]) -> Result<(), EnvError> {
        self.vec_env.set_state(states)
    }

    fn state(&self) -> Result<Vec<Vec<f64>>, EnvError> {
        self.vec_env.state()
    }

    fn dlpack_device_id(&self) -> Option<i32> {
        self.vec_env.backend().dlpack_device_id()
    }

    fn step_resident(
        &mut self,
        actions: ResidentActions<'_>,
    ) -> Result<ResidentStep, BackendError> {
        let backend = self.vec_env.backend().clone();
        let (buffer, address) = match &self.resident_actions {
            Some(kept) => kept.clone(),
            None => {
                let size = EnvInfo::of(self.vec_env.env()).action_size();
                let buffer = backend.alloc(self.vec_env.num_envs() * size);
                // Its address once: where CUDA tensors of actions are copied to. cubecl
                // allocates in its own stream's order, and the copies run on CUDA's legacy
                // stream, which does not wait for that one: the allocation is waited for once.
                let address = match backend.dlpack_device_id() {
                    Some(_) => {
                        backend.sync().map_err(EnvError::from)?;
                        backend.export(&[&buffer])?.first().map(|m| m.address)
                    }
                    None => None,
                };
                self.resident_actions = Some((buffer.clone(), address));
                (buffer, address)
            }
        };
        match actions {
            ResidentActions::Host(actions) => {
                let actions = E::Action::slice(actions)?;
                self.vec_env.check_actions(actions)?;
                let words = <E::Action as ActionElement>::words(actions);
                backend.write_u32(&buffer, words).map_err(EnvError::from)?;
            }
            ResidentActions::Cuda {
                address: from,
                bytes,
            } => {
                let into = address.ok_or_else(|| {
                    BackendError::Runtime("this runtime takes no device actions".into())
                })?;
                backend.copy_in(into, from, bytes)?;
            }
        }
        let step = self
            .vec_env
            .step_device(&DeviceActions::from_buffer(buffer))?;
        let outputs = [
            step.obs()?,
            step.reward()?,
            step.terminated()?,
            step.truncated()?,
        ]
        .map(Clone::clone);
        // The one wait: the flag is read after the step (and its check of the actions).
        self.vec_env.check_device_actions()?;
        let [obs, reward, terminated, truncated] =
            <[Memory; 4]>::try_from(backend.export(&outputs.each_ref())?).map_err(|_| {
                BackendError::Runtime("the runtime exported a wrong number of buffers".into())
            })?;
        Ok(ResidentStep {
            obs,
            reward,
            terminated,
            truncated,
        })
    }

    fn upload_obs(&mut self, obs: &[f32]) -> Result<Memory, BackendError> {
        let backend = self.vec_env.backend();
        let buffer = backend.alloc(obs.len());
        let bits: Vec<u32> = obs.iter().map(|v| v.to_bits()).collect();
        backend.write_u32(&buffer, &bits).map_err(EnvError::from)?;
        backend.sync().map_err(EnvError::from)?;
        let [memory] = <[Memory; 1]>::try_from(backend.export(&[&buffer])?).map_err(|_| {
            BackendError::Runtime("the runtime exported a wrong number of buffers".into())
        })?;
        Ok(memory)
    }
}

/// What [`open`] builds: the env, its size, episodes, plan, and the CPU's thread threshold.
#[derive(Debug, Clone, Copy)]
pub struct Build {
    /// Number of envs.
    pub num_envs: usize,
    /// Autoreset and episode limit.
    pub episode: EpisodeOptions,
    /// `None`: the environment's hand-written step where it has one, else the default.
    pub plan: Option<StepPlan>,
    /// The CPU runtime steps on one thread below this many envs.
    pub parallel_min_lanes: usize,
    /// At most this many CPU threads a step (0: every thread the process's pool has).
    pub threads: usize,
    /// Bytes per env Python holds beside the envs' buffers (its arrays and spaces), checked
    /// with them against the memory available.
    pub python_bytes_per_env: u64,
}

/// Builds the envs `build` describes of the environment `id` names, with its constructor
/// arguments `kwargs` set, on `device`.
pub fn open(
    id: &str,
    device: Device,
    build: Build,
    kwargs: &[(String, f64)],
) -> Result<Box<dyn DynVecEnv>, BackendError> {
    cartfuse_env::with_env!(
        id,
        |E| on_device(with_kwargs(E::default(), kwargs)?, device, build),
        Err(unknown(id))
    )
}

/// `env` with its constructor arguments `kwargs` set, each by its Python name.
fn with_kwargs<E: GraphEnv>(mut env: E, kwargs: &[(String, f64)]) -> Result<E, BackendError> {
    for (name, value) in kwargs {
        if !value.is_finite() {
            return Err(BackendError::invalid(
                "params",
                format!("{name} = {}: expected a finite number", non_finite(*value)),
            ));
        }
        env.set_kwarg(name, *value)
            .map_err(|error| BackendError::invalid("params", error.to_string()))?;
    }
    env.validate()
        .map_err(|error| BackendError::invalid("params", error.to_string()))?;
    Ok(env)
}

/// The CPU runtime with its default options but the thread threshold and count.
fn cpu_with(build: &Build) -> Cpu {
    Cpu::new(CpuOptions {
        parallel_min_lanes: build.parallel_min_lanes,
        threads: build.threads,
        ..CpuOptions::default()
    })
    .expect("the detected SIMD level is supported")
}

/// Opens `device` and builds the envs there. Adding a runtime is one arm here.
fn on_device<E: GraphEnv>(
    env: E,
    device: Device,
    options: Build,
) -> Result<Box<dyn DynVecEnv>, BackendError>
where
    E::Action: HostAction,
{
    match device {
        Device::Cpu => build(cpu_with(&options), env, options),
        #[cfg(feature = "wgpu")]
        Device::Cube(RuntimeKind::Wgpu) => {
            let opened = devices::wgpu_client().map_err(|error| unavailable(device, error))?;
            let backend = Cube::new(&opened);
            build(backend, env, options)
        }
        #[cfg(feature = "cuda")]
        Device::Cube(RuntimeKind::Cuda) => {
            let opened = devices::cuda_client().map_err(|error| unavailable(device, error))?;
            let backend = Cube::new(&opened);
            build(backend, env, options)
        }
        #[allow(unreachable_patterns)]
        other => Err(unavailable(
            other,
            DeviceError::RuntimeNotCompiled {
                feature: other.name(),
            },
        )),
    }
}

fn build<E: GraphEnv, B: ResidentMemory>(
    backend: B,
    env: E,
    options: Build,
) -> Result<Box<dyn DynVecEnv>, BackendError>
where
    E::Action: HostAction,
{
    let Build {
        num_envs,
        episode,
        plan,
        python_bytes_per_env,
        ..
    } = options;
    if let Some((available, memory)) = backend.memory_available() {
        let envs = memory::bytes_per_env(&env, &episode, plan.unwrap_or(StepPlan::HandWritten));
        memory::check(num_envs, envs + python_bytes_per_env, available, &memory)?;
    }
    let vec_env = match plan {
        Some(plan) => VecEnv::build(backend, env, num_envs, episode, plan),
        // The hand-written step where one exists: on the CPU the compiled `fused` step now
        // matches it (0.9-1.2x from n = 1 to 1M, the compiled CPU tables in `docs/results-log.md`),
        // but only with a C compiler present (else interpreted, 2-3x slower).
        None => match VecEnv::build(
            backend.clone(),
            env.clone(),
            num_envs,
            episode,
            StepPlan::HandWritten,
        ) {
            Err(EnvError::PlanUnavailable { .. }) => {
                VecEnv::build(backend, env, num_envs, episode, StepPlan::default())
            }
            built => built,
        },
    }?;
    Ok(Box::new(Typed {
        vec_env,
        resident_actions: None,
    }))
}
