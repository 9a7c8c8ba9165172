//! The gymnasium-shaped vector env over cartfuse's Rust API: seeds, masked resets, reset
//! bounds and constructor arguments as gymnasium defines them, for any registered
//! environment. Everything else in this crate speaks [`Backend`]; the environment and
//! runtime sit behind [`crate::envs::DynVecEnv`].
//!
//! Seeds are gymnasium's: env `i` is keyed by its own seed (`seed + i` for an int), and its
//! episodes, autoresets included, depend on that seed and its actions only
//! ([`VecEnv::reset_seeded`](cartfuse_env::VecEnv::reset_seeded), on the device). Masked
//! resets work in every autoreset mode: the other envs keep their state, step counters and
//! pending autoresets.

use cartfuse_env::gym_args::check_bounds;
use cartfuse_env::spaces::{ActionSpace, first_invalid};
use cartfuse_env::{AutoresetMode, EpisodeOptions, HostOutputs, StepPlan};

use crate::envs::{self, Actions, Build, DynVecEnv, EnvInfo, ResidentActions, ResidentStep};
use crate::error::{BackendError, non_finite};
use crate::resident::Memory;
use cartfuse_fusion::device::Device;

/// The seeds of one reset, as gymnasium accepts them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seeds {
    /// Continue the current random streams (seeded from the OS on the first reset).
    Continue,
    /// One seed per env; `None` entries are drawn from the OS.
    PerEnv(Vec<Option<u64>>),
}

/// What [`Backend::new`] builds.
#[derive(Debug, Clone)]
pub struct Options {
    /// The environment's gymnasium id (one of `cartfuse_env::registry::ENV_IDS`).
    pub env_id: String,
    /// Number of envs.
    pub num_envs: usize,
    /// `None`: [`crate::device::automatic`].
    pub device: Option<Device>,
    /// A plan name (`StepPlan`'s); `None`: the environment's hand-written step where it
    /// has one, else `fused`.
    pub plan: Option<String>,
    /// Autoreset mode.
    pub autoreset: AutoresetMode,
    /// Truncation limit; `None`: the environment's registered one.
    pub max_episode_steps: Option<u32>,
    /// The CPU runtime steps on one thread below this many envs ([`PARALLEL_MIN_LANES`]).
    pub parallel_min_lanes: usize,
    /// At most this many CPU threads a step (0: every thread of the process's pool).
    pub threads: usize,
    /// The environment's constructor arguments, by Python name.
    pub kwargs: Vec<(String, f64)>,
}

/// Below this many envs a step from Python runs on one thread: the Rust runtime's own
/// threshold ([`DEFAULT_PARALLEL_MIN_LANES`](cartfuse_fusion::cpu::DEFAULT_PARALLEL_MIN_LANES),
/// measured for the Rust step), since the worker threads now write the outputs into the
/// numpy arrays themselves and the Python step does the Rust step's work plus a fixed cost
/// per call. (It was 8192 while the calling thread copied the outputs out, pulling the
/// second worker's half across cores.) `python python/bench.py --threshold-sweep` measures
/// one thread against two by size; on the shared 2-core VM, loaded 7-9 deep by other
/// builds, two threads lost at every size (the second core was rarely free), so the value
/// awaits a quiet-machine sweep.
pub const PARALLEL_MIN_LANES: usize = cartfuse_fusion::cpu::DEFAULT_PARALLEL_MIN_LANES;

/// A gymnasium-shaped vector env of any registered environment.
pub struct Backend {
    env: Box<dyn DynVecEnv>,
    info: EnvInfo,
    device: Device,
    num_envs: usize,
    seeded: bool,
}

impl Backend {
    /// Names of the plans `plan=` accepts (`fused-xK` runs K steps per call and is refused;
    /// `hand-written` only for environments that have one).
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
        let info = envs::describe(&options.env_id)?;
        if options.num_envs == 0 {
            return Err(BackendError::invalid(
                "num_envs",
                "expected at least 1 env, got 0",
            ));
        }
        let max_episode_steps = options.max_episode_steps.unwrap_or(info.max_episode_steps);
        if max_episode_steps == 0 {
            return Err(BackendError::invalid(
                "max_episode_steps",
                "expected at least 1, got 0",
            ));
        }
        let plan = options.plan.as_deref().map(parse_plan).transpose()?;
        let episode = EpisodeOptions {
            autoreset: options.autoreset,
            max_episode_steps,
        };
        let n = options.num_envs;
        let device =
            (options.device).unwrap_or_else(|| crate::device::automatic().for_envs(Some(n)).0);
        let build = Build {
            num_envs: n,
            episode,
            plan,
            parallel_min_lanes: options.parallel_min_lanes,
            threads: options.threads,
            python_bytes_per_env: python_bytes_per_env(&info),
        };
        let env = envs::open(info.id, device, build, &options.kwargs)?;
        Ok(Self {
            env,
            info,
            device,
            num_envs: n,
            seeded: false,
        })
    }

    /// Number of envs.
    pub fn num_envs(&self) -> usize {
        self.num_envs
    }

    /// The environment.
    pub fn info(&self) -> &EnvInfo {
        &self.info
    }

    /// The device the envs run on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The step plan's name.
    pub fn plan(&self) -> String {
        self.env.plan().to_string()
    }

    /// Resets the envs selected by `mask` (all when `None`), each from its own seed, its
    /// draws in `bounds` (the environment's defaults where `None`), and returns every env's
    /// `[n * obs_dim]` observation.
    pub fn reset(
        &mut self,
        seeds: Seeds,
        mask: Option<&[bool]>,
        bounds: Option<&[(f64, f64)]>,
    ) -> Result<Vec<f32>, BackendError> {
        let n = self.num_envs;
        let seeds = match seeds {
            Seeds::Continue => vec![None; n],
            Seeds::PerEnv(list) if list.len() != n => {
                return Err(BackendError::invalid(
                    "seed",
                    format!(
                        "expected an int, None or a list of {n} seeds, got a list of {}",
                        list.len()
                    ),
                ));
            }
            Seeds::PerEnv(list) => list,
        };
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
        }
        if let Some(bounds) = bounds {
            check_bounds(bounds, self.info.reset_bounds.len())
                .map_err(|why| BackendError::invalid("options", why))?;
        }
        let obs = self.env.reset_seeded(&seeds, mask, bounds)?;
        self.seeded = true;
        Ok(obs)
    }

    /// Steps every env into `out`. `actions` must be validated by the caller's conversion;
    /// they are checked again (count and kind here, values by `VecEnv`) before anything runs.
    pub fn step(
        &mut self,
        actions: &Actions,
        out: &mut HostOutputs<'_>,
    ) -> Result<(), BackendError> {
        self.check_actions(actions)?;
        if !self.seeded {
            return Err(BackendError::Runtime(
                "the env must be reset before it is stepped: call reset() first".into(),
            ));
        }
        self.env.step(actions, out)?;
        // Final observation rows of envs that did not end hold their current observation;
        // the Python layer reads only the rows its `_final_obs` mask selects.
        Ok(())
    }

    /// Steps every env and leaves the outputs on the device
    /// ([`DynVecEnv::step_resident`]); host actions are checked as [`Self::step`] checks them.
    pub fn step_resident(
        &mut self,
        actions: ResidentActions<'_>,
    ) -> Result<ResidentStep, BackendError> {
        if let ResidentActions::Host(actions) = actions {
            self.check_actions(actions)?;
        }
        if !self.seeded {
            return Err(BackendError::Runtime(
                "the env must be reset before it is stepped: call reset() first".into(),
            ));
        }
        self.env.step_resident(actions)
    }

    /// The DLPack id of the device, where its buffers can be viewed through DLPack.
    pub fn dlpack_device_id(&self) -> Option<i32> {
        self.env.dlpack_device_id()
    }

    /// `obs` in a new device buffer ([`DynVecEnv::upload_obs`]).
    pub fn upload_obs(&mut self, obs: &[f32]) -> Result<Memory, BackendError> {
        self.env.upload_obs(obs)
    }

    /// The time of `calls` steps of the Rust API on these envs (see
    /// [`DynVecEnv::time_device_steps`]); the envs must have been reset.
    pub fn time_device_steps(&mut self, calls: u64) -> Result<std::time::Duration, BackendError> {
        self.env.time_device_steps(calls)
    }

    /// The time of `calls` host steps of the Rust API on these envs (see
    /// [`DynVecEnv::time_host_steps`]); the envs must have been reset.
    pub fn time_host_steps(&mut self, calls: u64) -> Result<std::time::Duration, BackendError> {
        self.env.time_host_steps(calls)
    }

    /// Checks what the env's own check does not word for Python: the count, and finite
    /// continuous actions. Discrete values are checked once, by `VecEnv::upload_actions`
    /// (the conversion from numpy has already refused values outside the space).
    fn check_actions(&self, actions: &Actions) -> Result<(), BackendError> {
        let n = self.num_envs;
        let size = self.info.action_size();
        let len = match actions {
            Actions::Discrete(a) => a.len(),
            Actions::Continuous(a) => a.len(),
        };
        if len != n * size {
            let shape = match actions {
                Actions::Discrete(_) => format!("({n},)"),
                Actions::Continuous(_) => format!("({n}, {size})"),
            };
            return Err(BackendError::invalid(
                "actions",
                format!("expected shape {shape}, got {len} values"),
            ));
        }
        if let (Actions::Continuous(actions), ActionSpace::Box(_)) = (actions, &self.info.action)
            && let Some((i, value)) = first_invalid(actions, f32::is_finite)
        {
            return Err(BackendError::invalid(
                "actions",
                format!(
                    "actions[{}, {}] = {} is not finite",
                    i / size,
                    i % size,
                    non_finite(f64::from(value))
                ),
            ));
        }
        Ok(())
    }

    /// Overwrites every env's state (`[n]` rows of the environment's state components);
    /// each env starts a new episode (step counter 0, no pending reset).
    pub fn set_state(&mut self, states: &[Vec<f64>]) -> Result<(), BackendError> {
        let k = self.info.state_names.len();
        if states.len() != self.num_envs || states.iter().any(|s| s.len() != k) {
            return Err(BackendError::invalid(
                "states",
                format!(
                    "expected shape ({}, {k}), got {} rows",
                    self.num_envs,
                    states.len()
                ),
            ));
        }
        if !self.seeded {
            // Each env keyed by a seed of its own from the OS, for its later autoresets.
            self.reset(Seeds::Continue, None, None)?;
        }
        self.env.set_state(states)?;
        Ok(())
    }

    /// Every env's state, `[n * state_dim]` `f64` (the device holds `f32`).
    pub fn state(&self) -> Result<Vec<f64>, BackendError> {
        Ok(self.env.state()?.into_iter().flatten().collect())
    }
}

/// Bytes per env the Python package holds beside the envs' buffers: two steps' output
/// arrays (the caller's and the next step's), the host copies of a reset, and gymnasium's
/// batched observation space (its `low` and `high` arrays).
fn python_bytes_per_env(info: &EnvInfo) -> u64 {
    let row = 4 * info.obs_dim as u64;
    let step_outputs = row + 4 + 2;
    2 * step_outputs + 2 * row + 2 * row
}

fn parse_plan(name: &str) -> Result<StepPlan, BackendError> {
    let plan = name.parse::<StepPlan>().map_err(|_| {
        BackendError::invalid(
            "plan",
            format!(
                "unknown plan {name:?}: expected one of {:?}",
                Backend::PLANS
            ),
        )
    })?;
    if plan.steps_per_call() != 1 {
        return Err(BackendError::invalid(
            "plan",
            format!(
                "{plan} runs {} steps per call; a gymnasium VectorEnv steps once per call: \
                 expected one of {:?}",
                plan.steps_per_call(),
                Backend::PLANS
            ),
        ));
    }
    Ok(plan)
}
