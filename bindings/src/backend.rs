//! The one module that calls cartfuse's Rust API. Everything else in this crate speaks
//! [`Backend`], so re-pointing the bindings at a new Rust API touches this file only.
//!
//! What the Rust API (`cartfuse_env::CartPoleVecEnv`, today) lacks, and how it is worked
//! around here:
//!
//! - **Per-env seeds.** The device keys every env's reset draws with one batch seed and the
//!   env index: reset `r` of env `i` is Threefry `(seed, i, r)`. gymnasium gives env `i` its
//!   own seed (`seed + i` for an int). Here a seeded reset draws env `i`'s first state on the
//!   host from Threefry `(seeds[i], 0, 0)` (bit-identical to the device's draw of env 0 under
//!   that seed, see `cartfuse_env::reference::reset_state`) and installs it with
//!   `set_state`; the device's own autoresets draw from a batch seed mixed from all seeds.
//! - **Masked resets.** There is no `reset(mask)`. Under `Disabled` autoreset every reset is
//!   drawn on the host from per-env streams and installed with `set_state` (which restarts
//!   every env's step counter), so episode lengths and truncation are counted here.
//! - **Truncation under `Disabled`** follows from the previous point: the device runs with
//!   an unreachable episode limit and this module flags `elapsed >= max_episode_steps`.

use std::fmt;

use cartfuse_env::reference::reset_state;
use cartfuse_env::{
    AutoresetMode, CartPole, CartPoleConfig, CartPoleState, EnvBackend, EnvError, StepPlan, VecEnv,
};
use cartfuse_fusion::backend::{Cpu, Cube};
use cartfuse_fusion::device::{self as devices, DeviceError, RuntimeKind};

/// Which device the envs run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    /// cartfuse's native CPU runtime (SIMD on every core).
    Cpu,
    /// wgpu: Vulkan, Metal (Mesa lavapipe without a GPU).
    Wgpu,
    /// NVIDIA CUDA (built with the `cuda` feature).
    Cuda,
}

impl Device {
    /// Every device name the constructor accepts.
    pub const NAMES: [&'static str; 3] = ["cpu", "wgpu", "cuda"];

    /// Parses a device name.
    pub fn parse(name: &str) -> Result<Self, BackendError> {
        match name {
            "cpu" => Ok(Device::Cpu),
            "wgpu" => Ok(Device::Wgpu),
            "cuda" => Ok(Device::Cuda),
            other => Err(BackendError::invalid(
                "device",
                format!(
                    "unknown device {other:?}: expected one of \"cpu\", \"wgpu\", \"cuda\" or None (automatic)"
                ),
            )),
        }
    }

    /// The devices compiled into this build (the CPU always is).
    pub fn compiled() -> Vec<Device> {
        let mut devices = vec![Device::Cpu];
        if cfg!(feature = "cuda") {
            devices.push(Device::Cuda);
        }
        if cfg!(feature = "wgpu") {
            devices.push(Device::Wgpu);
        }
        devices
    }

    /// The device `None` picks: a real GPU when CUDA or wgpu finds one, the native CPU
    /// otherwise (a CPU-emulated Vulkan device such as lavapipe is not picked).
    pub fn automatic() -> Device {
        match devices::auto_device().0 {
            devices::Device::Cpu => Device::Cpu,
            devices::Device::Cube(RuntimeKind::Wgpu) => Device::Wgpu,
            devices::Device::Cube(RuntimeKind::Cuda) => Device::Cuda,
        }
    }

    /// The name used by the Python API.
    pub fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Wgpu => "wgpu",
            Device::Cuda => "cuda",
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How finished episodes restart (gymnasium's `AutoresetMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Autoreset {
    /// The step after a done resets the env (gymnasium's default).
    NextStep,
    /// A done env resets in the same step; its final observation is returned beside.
    SameStep,
    /// No automatic reset; the caller resets envs with a mask.
    Disabled,
}

/// The seeds of one reset, as gymnasium accepts them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seeds {
    /// Continue the current random streams (seeded from the OS on the first reset).
    Continue,
    /// One seed per env; `None` entries are drawn from the OS.
    PerEnv(Vec<Option<u64>>),
}

/// What can go wrong, split by the Python exception it becomes.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// An argument was wrong (Python `ValueError`).
    #[error("{argument}: {message}")]
    InvalidArgument {
        /// The argument's Python name.
        argument: &'static str,
        /// What was expected and what was found.
        message: String,
    },
    /// The runtime failed (Python `RuntimeError`).
    #[error("{0}")]
    Runtime(String),
}

impl BackendError {
    /// An [`BackendError::InvalidArgument`].
    pub fn invalid(argument: &'static str, message: impl Into<String>) -> Self {
        BackendError::InvalidArgument {
            argument,
            message: message.into(),
        }
    }
}

fn runtime_error(error: EnvError) -> BackendError {
    match error {
        EnvError::InvalidAction { env, value, .. } => BackendError::invalid(
            "actions",
            format!("actions[{env}] = {value} is not in {{0, 1}}"),
        ),
        EnvError::BadState { .. } => BackendError::invalid("states", error.to_string()),
        EnvError::TooManyEnvs { .. } | EnvError::ZeroEnvs => {
            BackendError::invalid("num_envs", error.to_string())
        }
        EnvError::InvalidMaxEpisodeSteps => {
            BackendError::invalid("max_episode_steps", error.to_string())
        }
        other => BackendError::Runtime(other.to_string()),
    }
}

/// What [`Backend::new`] builds.
#[derive(Debug, Clone)]
pub struct Options {
    /// Number of envs.
    pub num_envs: usize,
    /// `None`: [`Device::automatic`].
    pub device: Option<Device>,
    /// A plan name (`StepPlan`'s), `None` for the default.
    pub plan: Option<String>,
    /// Autoreset mode.
    pub autoreset: Autoreset,
    /// Truncation limit.
    pub max_episode_steps: u32,
}

/// One step's outputs, flat and ready to hand to numpy.
#[derive(Debug)]
pub struct Step {
    /// `[n * 4]` observations, row-major.
    pub obs: Vec<f32>,
    /// `[n]` rewards.
    pub reward: Vec<f32>,
    /// `[n]` terminated flags.
    pub terminated: Vec<bool>,
    /// `[n]` truncated flags.
    pub truncated: Vec<bool>,
    /// `SameStep` only: `[n * 4]` final observations (rows of envs that did not end hold
    /// zeros).
    pub final_obs: Option<Vec<f32>>,
}

/// The env on its runtime. Adding a runtime is one variant here and one arm in
/// [`Backend::new`]; [`with_env!`] reaches every variant.
enum DeviceEnv {
    Cpu(VecEnv<CartPole, Cpu>),
    #[cfg(feature = "wgpu")]
    Wgpu(VecEnv<CartPole, Cube<cartfuse_fusion::cubecl::wgpu::WgpuRuntime>>),
    #[cfg(feature = "cuda")]
    Cuda(VecEnv<CartPole, Cube<cartfuse_fusion::cubecl::cuda::CudaRuntime>>),
}

/// Runs `$body` with `$env` bound to the `CartPoleVecEnv` of whichever runtime is open.
macro_rules! with_env {
    ($device_env:expr, |$env:ident| $body:expr) => {
        match $device_env {
            DeviceEnv::Cpu($env) => $body,
            #[cfg(feature = "wgpu")]
            DeviceEnv::Wgpu($env) => $body,
            #[cfg(feature = "cuda")]
            DeviceEnv::Cuda($env) => $body,
        }
    };
}

/// One reset stream per env, drawn on the host (`Disabled` autoreset).
#[derive(Debug, Clone, Copy)]
struct Stream {
    seed: u64,
    lane: u32,
    next: u32,
}

/// A gymnasium-shaped CartPole vector env over cartfuse's Rust API.
pub struct Backend {
    env: DeviceEnv,
    device: Device,
    plan: StepPlan,
    num_envs: usize,
    autoreset: Autoreset,
    max_episode_steps: u32,
    /// `Disabled` only: every env's reset stream and episode length.
    streams: Vec<Stream>,
    elapsed: Vec<u32>,
    seeded: bool,
}

impl Backend {
    /// Names of the plans `plan=` accepts (`fused-xK` runs K steps per call and is refused).
    pub const PLANS: [&'static str; 6] = [
        "hand-written",
        "fused",
        "vertical",
        "horizontal",
        "eager",
        "xla-default",
    ];

    /// Opens the device and builds the envs; every argument is checked first.
    pub fn new(options: Options) -> Result<Self, BackendError> {
        if options.num_envs == 0 {
            return Err(BackendError::invalid(
                "num_envs",
                "expected at least 1 env, got 0",
            ));
        }
        if options.max_episode_steps == 0 {
            return Err(BackendError::invalid(
                "max_episode_steps",
                "expected at least 1, got 0",
            ));
        }
        let plan = match &options.plan {
            // CartPole's hand-written step is the fastest on every runtime (the native CPU
            // one about 5-10x `fused`, measured with `cartfuse bench --device cpu`).
            None => StepPlan::HandWritten,
            Some(name) => name.parse::<StepPlan>().map_err(|_| {
                BackendError::invalid(
                    "plan",
                    format!("unknown plan {name:?}: expected one of {:?}", Self::PLANS),
                )
            })?,
        };
        if plan.steps_per_call() != 1 {
            return Err(BackendError::invalid(
                "plan",
                format!(
                    "{plan} runs {} steps per call; a gymnasium VectorEnv steps once per call: \
                     expected one of {:?}",
                    plan.steps_per_call(),
                    Self::PLANS
                ),
            ));
        }
        let config = CartPoleConfig {
            autoreset: match options.autoreset {
                Autoreset::NextStep => AutoresetMode::NextStep,
                Autoreset::SameStep => AutoresetMode::SameStep,
                Autoreset::Disabled => AutoresetMode::Disabled,
            },
            // Disabled: truncation is counted here (masked resets restart every device counter).
            max_episode_steps: match options.autoreset {
                Autoreset::Disabled => u32::MAX,
                _ => options.max_episode_steps,
            },
            ..CartPoleConfig::default()
        };
        let device = options.device.unwrap_or_else(Device::automatic);
        let env = open(device, options.num_envs, config, plan)?;
        let n = options.num_envs;
        Ok(Self {
            env,
            device,
            plan,
            num_envs: n,
            autoreset: options.autoreset,
            max_episode_steps: options.max_episode_steps,
            streams: Vec::new(),
            elapsed: vec![0; n],
            seeded: false,
        })
    }

    /// Number of envs.
    pub fn num_envs(&self) -> usize {
        self.num_envs
    }

    /// The device the envs run on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The step plan's name.
    pub fn plan(&self) -> String {
        self.plan.to_string()
    }

    /// Resets the envs selected by `mask` (all when `None`) and returns every env's `[n * 4]`
    /// observation. Masks need `Disabled` autoreset.
    pub fn reset(&mut self, seeds: Seeds, mask: Option<&[bool]>) -> Result<Vec<f32>, BackendError> {
        let n = self.num_envs;
        if let Seeds::PerEnv(list) = &seeds
            && list.len() != n
        {
            return Err(BackendError::invalid(
                "seed",
                format!(
                    "expected an int, None or a list of {n} seeds, got a list of {}",
                    list.len()
                ),
            ));
        }
        if let Some(mask) = mask {
            if mask.len() != n {
                return Err(BackendError::invalid(
                    "options[\"reset_mask\"]",
                    format!("expected shape ({n},), got ({},)", mask.len()),
                ));
            }
            if !mask.iter().any(|m| *m) {
                return Err(BackendError::invalid(
                    "options[\"reset_mask\"]",
                    "expected at least one True value",
                ));
            }
            if self.autoreset != Autoreset::Disabled {
                return Err(BackendError::invalid(
                    "options[\"reset_mask\"]",
                    "masked resets need autoreset_mode=AutoresetMode.DISABLED (cartfuse's \
                     device autoreset cannot be cleared per env yet)",
                ));
            }
        }
        match self.autoreset {
            Autoreset::Disabled => self.reset_on_host(seeds, mask),
            _ => self.reset_all(seeds),
        }
    }

    /// `NextStep`/`SameStep`: device reset, then each env's first state from its own seed.
    fn reset_all(&mut self, seeds: Seeds) -> Result<Vec<f32>, BackendError> {
        let seeds = match seeds {
            Seeds::Continue if self.seeded => {
                return with_env!(&mut self.env, |env| env.reset(None)).map_err(runtime_error);
            }
            Seeds::Continue => vec![None; self.num_envs],
            Seeds::PerEnv(list) => list,
        };
        let seeds: Vec<u64> = seeds
            .into_iter()
            .map(|s| s.unwrap_or_else(rand::random))
            .collect();
        let batch_seed = mix(&seeds);
        let states: Vec<CartPoleState> = seeds
            .iter()
            .map(|&seed| reset_state(seed, 0, 0, &CartPoleConfig::default().params))
            .collect();
        with_env!(&mut self.env, |env| {
            env.reset_device(Some(batch_seed))
                .map(|_| ())
                .and_then(|()| env.set_state(&rows(&states)))
        })
        .map_err(runtime_error)?;
        self.seeded = true;
        Ok(observations(&states))
    }

    /// `Disabled`: draws the masked envs' next reset states on the host and installs them.
    fn reset_on_host(
        &mut self,
        seeds: Seeds,
        mask: Option<&[bool]>,
    ) -> Result<Vec<f32>, BackendError> {
        let n = self.num_envs;
        let selected = |i: usize| mask.is_none_or(|m| m[i]);
        if !self.seeded && !matches!(seeds, Seeds::PerEnv(_)) {
            let seeds = Seeds::PerEnv(vec![None; n]);
            return self.reset_on_host(seeds, mask);
        }
        if let Seeds::PerEnv(list) = seeds {
            if self.streams.len() != n {
                self.streams = vec![
                    Stream {
                        seed: 0,
                        lane: 0,
                        next: 0
                    };
                    n
                ];
            }
            for (i, seed) in list.into_iter().enumerate() {
                if selected(i) || !self.seeded {
                    self.streams[i] = Stream {
                        seed: seed.unwrap_or_else(rand::random),
                        lane: 0,
                        next: 0,
                    };
                }
            }
            self.seeded = true;
        }
        let mut states = if mask.is_some() {
            let rows = with_env!(&self.env, |env| env.state()).map_err(runtime_error)?;
            rows.iter()
                .map(|r| CartPoleState::from_array([r[0], r[1], r[2], r[3]]))
                .collect()
        } else {
            vec![CartPoleState::default(); n]
        };
        let params = CartPoleConfig::default().params;
        for (i, state) in states.iter_mut().enumerate() {
            if selected(i) {
                let stream = &mut self.streams[i];
                *state = reset_state(stream.seed, stream.lane, stream.next, &params);
                stream.next = stream.next.wrapping_add(1);
                self.elapsed[i] = 0;
            }
        }
        with_env!(&mut self.env, |env| env.set_state(&rows(&states))).map_err(runtime_error)?;
        Ok(observations(&states))
    }

    /// Steps every env. `actions` must be validated by the caller's conversion; they are
    /// checked again (count, range) before anything is launched.
    pub fn step(&mut self, actions: &[u32]) -> Result<Step, BackendError> {
        if actions.len() != self.num_envs {
            return Err(BackendError::invalid(
                "actions",
                format!(
                    "expected shape ({},), got ({},)",
                    self.num_envs,
                    actions.len()
                ),
            ));
        }
        if let Some((env, value)) = actions.iter().enumerate().find(|(_, a)| **a > 1) {
            return Err(BackendError::invalid(
                "actions",
                format!("actions[{env}] = {value} is not in {{0, 1}}"),
            ));
        }
        if !self.seeded {
            return Err(BackendError::Runtime(
                "the env must be reset before it is stepped: call reset() first".into(),
            ));
        }
        let out = with_env!(&mut self.env, |env| env.step(actions)).map_err(runtime_error)?;
        let mut truncated = out.truncated;
        if self.autoreset == Autoreset::Disabled {
            for (elapsed, truncated) in self.elapsed.iter_mut().zip(truncated.iter_mut()) {
                *elapsed = elapsed.saturating_add(1);
                *truncated = *elapsed >= self.max_episode_steps;
            }
        }
        // Rows of envs that did not end hold their current observation; the Python layer
        // reads only the rows its `_final_obs` mask selects.
        let final_obs = out.final_obs;
        Ok(Step {
            obs: out.obs,
            reward: out.reward,
            terminated: out.terminated,
            truncated,
            final_obs,
        })
    }

    /// Overwrites every env's state (`[n]` rows of `[x, x_dot, theta, theta_dot]`); each
    /// env starts a new episode (step counter 0, no pending reset).
    pub fn set_state(&mut self, states: &[[f64; 4]]) -> Result<(), BackendError> {
        if states.len() != self.num_envs {
            return Err(BackendError::invalid(
                "states",
                format!(
                    "expected shape ({}, 4), got ({}, 4)",
                    self.num_envs,
                    states.len()
                ),
            ));
        }
        let states: Vec<Vec<f64>> = states.iter().map(|s| s.to_vec()).collect();
        with_env!(&mut self.env, |env| env.set_state(&states)).map_err(runtime_error)?;
        if !self.seeded {
            // The Rust env seeded its device streams from the OS; host streams follow.
            let seeds = (0..self.num_envs)
                .map(|_| rand::random())
                .collect::<Vec<u64>>();
            self.streams = seeds
                .into_iter()
                .map(|seed| Stream {
                    seed,
                    lane: 0,
                    next: 0,
                })
                .collect();
            self.seeded = true;
        }
        self.elapsed.fill(0);
        Ok(())
    }

    /// Every env's state, `[n * 4]` `f64` (the device holds `f32`).
    pub fn state(&self) -> Result<Vec<f64>, BackendError> {
        let states = with_env!(&self.env, |env| env.state()).map_err(runtime_error)?;
        Ok(states.into_iter().flatten().collect())
    }
}

/// States as the vector env takes them: one row per env.
fn rows(states: &[CartPoleState]) -> Vec<Vec<f64>> {
    states.iter().map(|s| s.to_array().to_vec()).collect()
}

fn observations(states: &[CartPoleState]) -> Vec<f32> {
    states.iter().flat_map(|s| s.observation()).collect()
}

/// The batch seed of a seed list (splitmix64 over the seeds): the device's autoresets draw
/// from it until the Rust API takes per-env seeds.
fn mix(seeds: &[u64]) -> u64 {
    seeds.iter().fold(0x243F_6A88_85A3_08D3, |acc, &seed| {
        let mut z = (acc ^ seed).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

fn open(
    device: Device,
    n: usize,
    config: CartPoleConfig,
    plan: StepPlan,
) -> Result<DeviceEnv, BackendError> {
    let unavailable = |why: String| {
        BackendError::invalid(
            "device",
            format!("device {:?} is not available: {why}", device.name()),
        )
    };
    match device {
        Device::Cpu => build(Cpu::default(), n, config, plan).map(DeviceEnv::Cpu),
        #[cfg(feature = "wgpu")]
        Device::Wgpu => {
            let opened = devices::wgpu_client().map_err(|error| unavailable(error.to_string()))?;
            let backend = Cube::new(opened.client, opened.description);
            build(backend, n, config, plan).map(DeviceEnv::Wgpu)
        }
        #[cfg(feature = "cuda")]
        Device::Cuda => {
            let opened = devices::cuda_client().map_err(|error| unavailable(error.to_string()))?;
            let backend = Cube::new(opened.client, opened.description);
            build(backend, n, config, plan).map(DeviceEnv::Cuda)
        }
        #[allow(unreachable_patterns)]
        other => Err(unavailable(
            DeviceError::RuntimeNotCompiled {
                feature: other.name(),
            }
            .to_string(),
        )),
    }
}

fn build<B: EnvBackend>(
    backend: B,
    n: usize,
    config: CartPoleConfig,
    plan: StepPlan,
) -> Result<VecEnv<CartPole, B>, BackendError> {
    VecEnv::build(backend, config.params, n, config.episode(), plan).map_err(runtime_error)
}
