//! The gymnasium-shaped vector env over cartfuse's Rust API: seeds, masked resets and
//! truncation as gymnasium defines them, for any registered environment. Everything else in
//! this crate speaks [`Backend`]; the environment and runtime sit behind
//! [`DynVecEnv`](crate::envs::DynVecEnv).
//!
//! What the Rust API (`cartfuse_env::VecEnv`) does differently, and how it is bridged here:
//!
//! - **Per-env seeds.** The device keys every env's reset draws with one batch seed and the
//!   env index: reset `r` of env `i` is Threefry `(seed, i, r)`. gymnasium gives env `i` its
//!   own seed (`seed + i` for an int). Here a seeded reset draws env `i`'s first state on the
//!   host from Threefry `(seeds[i], 0, 0)` (`cartfuse_env::graph::reference_reset`,
//!   bit-identical to the device's draw of env 0 under that seed) and installs it with
//!   `set_state`; the device's own autoresets draw from a batch seed mixed from all seeds.
//! - **Masked resets.** `VecEnv::reset_masked` continues one batch stream, and `set_state`
//!   restarts every env's step counter. So masked resets are taken under `Disabled`
//!   autoreset only: every reset is drawn on the host from per-env streams and installed
//!   with `set_state`, and episode lengths and truncation are counted here.
//! - **Truncation under `Disabled`** follows from the previous point: the device runs with
//!   an unreachable episode limit and this module flags `elapsed >= max_episode_steps`.

use cartfuse_env::spaces::{ActionSpace, first_invalid};
use cartfuse_env::{AutoresetMode, EpisodeOptions, HostOutputs, StepPlan};

use crate::envs::{self, Actions, Build, DynVecEnv, EnvInfo};
use crate::error::{BackendError, non_finite};
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

/// One reset stream per env, drawn on the host (`Disabled` autoreset).
#[derive(Debug, Clone, Copy, Default)]
struct Stream {
    seed: u64,
    lane: u32,
    next: u32,
}

/// A gymnasium-shaped vector env of any registered environment.
pub struct Backend {
    env: Box<dyn DynVecEnv>,
    info: EnvInfo,
    device: Device,
    num_envs: usize,
    autoreset: AutoresetMode,
    max_episode_steps: u32,
    /// `Disabled` only: every env's reset stream and episode length.
    streams: Vec<Stream>,
    elapsed: Vec<u32>,
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
            // Disabled: truncation is counted here (masked resets restart every device counter).
            max_episode_steps: match options.autoreset {
                AutoresetMode::Disabled => u32::MAX,
                _ => max_episode_steps,
            },
        };
        let n = options.num_envs;
        let device =
            (options.device).unwrap_or_else(|| crate::device::automatic().for_envs(Some(n)).0);
        let build = Build {
            num_envs: n,
            episode,
            plan,
            parallel_min_lanes: options.parallel_min_lanes,
            python_bytes_per_env: python_bytes_per_env(&info),
        };
        let env = envs::open(info.id, device, build)?;
        Ok(Self {
            env,
            info,
            device,
            num_envs: n,
            autoreset: options.autoreset,
            max_episode_steps,
            streams: Vec::new(),
            elapsed: vec![0; n],
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

    /// Resets the envs selected by `mask` (all when `None`) and returns every env's
    /// `[n * obs_dim]` observation. Masks need `Disabled` autoreset.
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
            if self.autoreset != AutoresetMode::Disabled {
                return Err(BackendError::invalid(
                    "options[\"reset_mask\"]",
                    "masked resets need autoreset_mode=AutoresetMode.DISABLED (cartfuse's \
                     device autoreset cannot be cleared per env yet)",
                ));
            }
        }
        match self.autoreset {
            AutoresetMode::Disabled => self.reset_on_host(seeds, mask),
            _ => self.reset_all(seeds),
        }
    }

    /// `NextStep`/`SameStep`: device reset, then each env's first state from its own seed.
    fn reset_all(&mut self, seeds: Seeds) -> Result<Vec<f32>, BackendError> {
        let seeds = match seeds {
            Seeds::Continue if self.seeded => return Ok(self.env.reset(None)?),
            Seeds::Continue => vec![None; self.num_envs],
            Seeds::PerEnv(list) => list,
        };
        let seeds: Vec<u64> = seeds
            .into_iter()
            .map(|s| s.unwrap_or_else(rand::random))
            .collect();
        let states: Vec<Vec<f64>> = seeds
            .iter()
            .map(|&seed| self.env.reference_reset(seed, 0, 0))
            .collect();
        self.env.reset_device(Some(mix(&seeds)))?;
        self.env.set_state(&states)?;
        self.seeded = true;
        Ok(self.observations(&states))
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
                self.streams = vec![Stream::default(); n];
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
            self.env.state()?
        } else {
            vec![Vec::new(); n]
        };
        for (i, state) in states.iter_mut().enumerate() {
            if selected(i) {
                let stream = &mut self.streams[i];
                *state = self
                    .env
                    .reference_reset(stream.seed, stream.lane, stream.next);
                stream.next = stream.next.wrapping_add(1);
                self.elapsed[i] = 0;
            }
        }
        self.env.set_state(&states)?;
        Ok(self.observations(&states))
    }

    /// The observations of `states` as the device holds them (`f32`).
    fn observations(&self, states: &[Vec<f64>]) -> Vec<f32> {
        states
            .iter()
            .flat_map(|state| {
                let stored: Vec<f64> = state.iter().map(|v| f64::from(*v as f32)).collect();
                self.env.observe(&stored)
            })
            .collect()
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
        if self.autoreset == AutoresetMode::Disabled {
            for (elapsed, truncated) in self.elapsed.iter_mut().zip(out.truncated.iter_mut()) {
                *elapsed = elapsed.saturating_add(1);
                *truncated = *elapsed >= self.max_episode_steps;
            }
        }
        // Final observation rows of envs that did not end hold their current observation;
        // the Python layer reads only the rows its `_final_obs` mask selects.
        Ok(())
    }

    /// The time of `calls` steps of the Rust API on these envs (see
    /// [`DynVecEnv::time_device_steps`]); the envs must have been reset.
    pub fn time_device_steps(&mut self, calls: u64) -> Result<std::time::Duration, BackendError> {
        self.env.time_device_steps(calls)
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
        self.env.set_state(states)?;
        if !self.seeded {
            // The Rust env seeded its device streams from the OS; host streams follow.
            self.streams = (0..self.num_envs)
                .map(|_| Stream {
                    seed: rand::random(),
                    lane: 0,
                    next: 0,
                })
                .collect();
            self.seeded = true;
        }
        self.elapsed.fill(0);
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
