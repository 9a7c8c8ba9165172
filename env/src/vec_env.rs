//! The vectorized env of any [`GraphEnv`] on any backend, shaped like gymnasium's `VectorEnv`.
//!
//! Host path: [`VecEnv::reset`] and [`VecEnv::step`] take and return host vectors,
//! validating every input first; [`VecEnv::step_into`] writes the outputs into memory the
//! caller owns ([`HostOutputs`](crate::HostOutputs)), where the native CPU engines write
//! them directly from every worker thread. Device-resident path: [`VecEnv::step_device`] takes
//! [`DeviceActions`] already on the backend and leaves the outputs there ([`DeviceStep`]),
//! so a policy on the same device never round-trips through the host;
//! [`DeviceStep::to_host`] copies them only when asked.

use std::sync::Arc;

use cartfuse_fusion::exec::Backend;
use cartfuse_fusion::exec::LaunchLedger;

use crate::engine::{ResetRequest, Seeding, StepBuffer, StepEngine, StepPlan};
use crate::environment::{EpisodeOptions, GraphEnv};
use crate::error::EnvError;
use crate::runtime::EnvBackend;
use crate::spaces::{ActionSpace, BoxSpace};

mod host_step;
mod outputs;

pub use outputs::{DeviceActions, DeviceStep, StepOutput};

/// A batch of `num_envs` copies of environment `E`, stepped together on backend `B`.
pub struct VecEnv<E: GraphEnv, B: EnvBackend> {
    backend: B,
    env: E,
    episode: EpisodeOptions,
    plan: StepPlan,
    ledger: Arc<LaunchLedger>,
    num_envs: usize,
    seed: Option<u64>,
    /// Each env keyed by its own seed ([`Self::reset_seeded`]) rather than one batch seed.
    per_env_seeds: bool,
    engine: Box<dyn StepEngine<B>>,
    /// The device actions stepped since their last check, if any.
    last_actions: Option<B::Buffer>,
    /// The buffer host actions are written into, step after step (allocated at the first).
    host_actions: Option<B::Buffer>,
}

impl<E: GraphEnv, B: EnvBackend> VecEnv<E, B> {
    /// Builds `num_envs` envs of `env` on `backend` running `plan`. Everything is validated
    /// before any allocation, the memory the buffers need included
    /// ([`EnvError::OutOfMemory`], see [`crate::memory`]).
    pub fn build(
        backend: B,
        env: E,
        num_envs: usize,
        episode: EpisodeOptions,
        plan: StepPlan,
    ) -> Result<Self, EnvError> {
        env.validate()?;
        episode.validate()?;
        if num_envs == 0 {
            return Err(EnvError::ZeroEnvs);
        }
        let (mut max, mut limit) = max_envs::<E, B>(&backend);
        // A call's outputs may lie over several buffers, one per launch, but its actions
        // are one buffer of `steps` words per env.
        let steps = plan.steps_per_call() as usize;
        let by_actions = (backend.max_buffer_bytes() / 4) as usize / steps;
        if by_actions < max {
            max = by_actions;
            limit = format!(
                "the largest buffer, {} bytes, must hold the {steps} actions per env of a {plan} call",
                backend.max_buffer_bytes()
            );
        }
        if num_envs > max {
            return Err(EnvError::TooManyEnvs {
                requested: num_envs,
                max,
                limit,
            });
        }
        if let Some((available, memory)) = backend.memory_available() {
            let per_env = crate::memory::bytes_per_env(&env, &episode, plan);
            crate::memory::check(num_envs, per_env, available, &memory)?;
        }
        let ledger = Arc::new(LaunchLedger::new());
        let engine = backend.engine(&env, num_envs, &episode, plan, ledger.clone())?;
        tracing::debug!(env = E::ID, num_envs, %plan, runtime = backend.runtime_name(), "created vector env");
        Ok(Self {
            backend,
            env,
            episode,
            plan,
            ledger,
            num_envs,
            seed: None,
            per_env_seeds: false,
            engine,
            last_actions: None,
            host_actions: None,
        })
    }

    /// Records launches in `ledger` (shared with other envs or a harness) from now on.
    pub fn with_ledger(mut self, ledger: Arc<LaunchLedger>) -> Self {
        self.engine.set_ledger(ledger.clone());
        self.ledger = ledger;
        self
    }

    /// Steps one `step` call performs (`K` under `fused-xK`, else 1). Actions and outputs
    /// then hold `K * num_envs` entries, step-major.
    pub fn steps_per_call(&self) -> usize {
        self.engine.steps_per_call() as usize
    }

    /// Number of envs.
    pub fn num_envs(&self) -> usize {
        self.num_envs
    }

    /// The environment (its params).
    pub fn env(&self) -> &E {
        &self.env
    }

    /// Autoreset mode and episode limit.
    pub fn episode(&self) -> &EpisodeOptions {
        &self.episode
    }

    /// The plan the step runs.
    pub fn plan(&self) -> StepPlan {
        self.plan
    }

    /// The backend every launch goes to.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The ledger every launch of this env is recorded in.
    pub fn ledger(&self) -> &Arc<LaunchLedger> {
        &self.ledger
    }

    /// The seed of the current reset stream, once reset with one batch seed (`None` before
    /// and after per-env seeds).
    pub fn seed(&self) -> Option<u64> {
        self.seed.filter(|_| !self.per_env_seeds)
    }

    fn is_reset(&self) -> bool {
        self.seed.is_some() || self.per_env_seeds
    }

    /// Observation space of one env.
    pub fn single_observation_space(&self) -> BoxSpace {
        self.env.observation_space()
    }

    /// Batched observation space, `[num_envs, obs_dim]`.
    pub fn observation_space(&self) -> BoxSpace {
        crate::spaces::batched_box(self.single_observation_space(), self.num_envs)
    }

    /// Action space of one env.
    pub fn single_action_space(&self) -> ActionSpace {
        self.env.action_space()
    }

    /// Batched action space.
    pub fn action_space(&self) -> ActionSpace {
        self.single_action_space().batched(self.num_envs)
    }

    /// Resets every env and returns the `[num_envs, obs_dim]` observations.
    ///
    /// `Some(seed)` restarts the reset stream of that seed (the same seed always gives the
    /// same observations); `None` continues the current stream, or seeds from the OS on the
    /// first reset.
    pub fn reset(&mut self, seed: Option<u64>) -> Result<Vec<f32>, EnvError> {
        self.reset_device(seed)?;
        self.read_f32(StepBuffer::Obs)
    }

    /// Resets the envs whose `mask` entry is true (gymnasium's `reset_mask`); the others
    /// keep their state. Returns every env's observation.
    pub fn reset_masked(&mut self, seed: Option<u64>, mask: &[bool]) -> Result<Vec<f32>, EnvError> {
        self.check_count("reset_mask entries", mask.len(), 1)?;
        self.reset_lanes(seed, Some(mask))?;
        self.read_f32(StepBuffer::Obs)
    }

    /// [`Self::reset`] leaving the `[num_envs, obs_dim]` observations on the backend.
    pub fn reset_device(&mut self, seed: Option<u64>) -> Result<&B::Buffer, EnvError> {
        self.reset_lanes(seed, None)?;
        Ok(self
            .engine
            .buffer(StepBuffer::Obs)
            .expect("engines write obs"))
    }

    fn reset_lanes(&mut self, seed: Option<u64>, mask: Option<&[bool]>) -> Result<(), EnvError> {
        if seed.is_none() && self.per_env_seeds {
            // Each env goes on with its own stream.
            let seeds = vec![None; self.num_envs];
            return self.reset_seeded_lanes(&seeds, mask, None);
        }
        let restart = seed.is_some() || self.seed.is_none();
        let seed = seed.or(self.seed).unwrap_or_else(rand::random);
        let seeding = Seeding::Batch { seed, restart };
        self.engine.reset(&ResetRequest {
            seeding,
            mask,
            bounds: None,
        })?;
        self.seed = Some(seed);
        self.per_env_seeds = false;
        Ok(())
    }

    /// Resets the envs `mask` selects (every env where `None`), each keyed by its own seed,
    /// as a gymnasium vector env's sub-envs are: env `i` restarts its stream from
    /// `seeds[i]`, or goes on with its own where `None` (seeded from the OS at the first
    /// reset). Their draws lie in `bounds` (one `(low, high)` per drawn component; the
    /// environment's defaults where `None`) for this reset only. Env `i`'s episodes then
    /// depend on its own seed and actions only, whatever the batch. Returns every env's
    /// observation (the current one where not reset).
    pub fn reset_seeded(
        &mut self,
        seeds: &[Option<u64>],
        mask: Option<&[bool]>,
        bounds: Option<&[(f64, f64)]>,
    ) -> Result<Vec<f32>, EnvError> {
        self.check_count("seeds", seeds.len(), 1)?;
        if let Some(mask) = mask {
            self.check_count("reset_mask entries", mask.len(), 1)?;
        }
        self.reset_seeded_lanes(seeds, mask, bounds)?;
        self.read_f32(StepBuffer::Obs)
    }

    fn reset_seeded_lanes(
        &mut self,
        seeds: &[Option<u64>],
        mask: Option<&[bool]>,
        bounds: Option<&[(f64, f64)]>,
    ) -> Result<(), EnvError> {
        let mut seeds = seeds.to_vec();
        if !self.per_env_seeds {
            // The first per-env reset seeds every env: from the OS where no seed is given.
            for seed in seeds.iter_mut().filter(|s| s.is_none()) {
                *seed = Some(rand::random());
            }
        }
        self.engine.reset(&ResetRequest {
            seeding: Seeding::PerLane(&seeds),
            mask,
            bounds,
        })?;
        self.per_env_seeds = true;
        Ok(())
    }

    /// Validates `actions` (one per env and step of a call, each in the action space) and
    /// uploads them.
    pub fn upload_actions(
        &self,
        actions: &[E::Action],
    ) -> Result<DeviceActions<B::Buffer>, EnvError> {
        self.check_actions(actions)?;
        Ok(DeviceActions::from_buffer(B::upload_actions(
            &self.backend,
            actions,
        )))
    }

    /// Steps every env with backend-resident actions; the outputs stay on the backend.
    pub fn step_device(
        &mut self,
        actions: &DeviceActions<B::Buffer>,
    ) -> Result<DeviceStep<'_, E, B>, EnvError> {
        let found = self.backend.buffer_len(actions.buffer());
        self.check_count("actions", found, self.steps_per_call())?;
        if !self.is_reset() {
            return Err(EnvError::NotReset);
        }
        self.engine.step(actions.buffer())?;
        self.last_actions = Some(actions.buffer().clone());
        Ok(DeviceStep { env: self })
    }

    /// Reads and clears the invalid-action flag: an error if any device-resident action
    /// outside the action space was stepped since the last check.
    ///
    /// The hand-written kernels raise a flag while stepping; for other engines the last
    /// actions are checked here (a small check kernel on devices), so their steps carry no
    /// extra traffic. [`DeviceStep::to_host`] does the same within its one read.
    pub fn check_device_actions(&mut self) -> Result<(), EnvError> {
        let Some(flag) = self.enqueue_action_check()? else {
            return Ok(());
        };
        let raised = self.backend.read_u32(&flag)?[0];
        self.clear_action_flag(raised)
    }

    /// Enqueues what makes the engine's invalid-action flag current (a check of the last
    /// device actions, unless the step raises it itself) and returns the flag, if the
    /// engine keeps one. Without one, the last actions are checked into a word of their own.
    pub(super) fn enqueue_action_check(&mut self) -> Result<Option<B::Buffer>, EnvError> {
        let (flag, actions) = match (self.engine.action_flag(), self.last_actions.take()) {
            (Some(flag), _) if flag.raised_by_step => return Ok(Some(flag.buffer.clone())),
            (_, None) => return Ok(None),
            (Some(flag), Some(actions)) => (flag.buffer.clone(), actions),
            (None, Some(actions)) => (self.backend.alloc(1), actions),
        };
        B::flag_invalid_actions(&self.backend, &self.env, &actions, &flag, &self.ledger)?;
        Ok(Some(flag))
    }

    /// The flag read back as `raised`: cleared (where the step raises it) and turned into
    /// [`EnvError::InvalidDeviceAction`] when non-zero.
    pub(super) fn clear_action_flag(&mut self, raised: u32) -> Result<(), EnvError> {
        if raised == 0 {
            return Ok(());
        }
        if let Some(flag) = self.engine.action_flag().filter(|f| f.raised_by_step) {
            self.backend.write_u32(flag.buffer, &[0])?;
        }
        Err(EnvError::InvalidDeviceAction)
    }

    /// Overwrites every env's physical state (`num_envs` rows of [`GraphEnv::STATE`],
    /// stored as `f32`). Episode step counters restart at 0 and no reset is pending; the
    /// reset stream is kept (an env never reset is reset from a fresh seed first).
    pub fn set_state(&mut self, states: &[Vec<f64>]) -> Result<(), EnvError> {
        self.check_count("states", states.len(), 1)?;
        let k = E::STATE.len();
        for (env, state) in states.iter().enumerate() {
            if state.len() != k || state.iter().any(|v| !v.is_finite()) {
                return Err(EnvError::BadState {
                    env,
                    expected: k,
                    state: state.clone(),
                });
            }
        }
        if !self.is_reset() {
            // Never reset: seed a reset stream first, so later autoresets have one.
            self.reset_device(None)?;
        }
        let columns: Vec<Vec<f32>> = (0..k)
            .map(|c| states.iter().map(|s| s[c] as f32).collect())
            .collect();
        self.engine.set_state(&columns)
    }

    /// Every env's physical state, widened from the backend's `f32`.
    pub fn state(&self) -> Result<Vec<Vec<f64>>, EnvError> {
        let columns = self.engine.state_columns()?;
        Ok((0..self.num_envs)
            .map(|i| columns.iter().map(|c| f64::from(c[i])).collect())
            .collect())
    }

    /// Steps taken in each env's current episode.
    pub fn elapsed_steps(&self) -> Result<Vec<u32>, EnvError> {
        self.engine.elapsed()
    }

    /// Waits until every enqueued launch has finished.
    pub fn sync(&self) -> Result<(), EnvError> {
        Ok(self.backend.sync()?)
    }

    fn check_count(
        &self,
        what: &'static str,
        found: usize,
        per_env: usize,
    ) -> Result<(), EnvError> {
        let expected = self.num_envs * per_env;
        if found != expected {
            return Err(EnvError::WrongCount {
                what,
                per_env,
                expected,
                found,
            });
        }
        Ok(())
    }
}

/// The most envs `backend` can hold, and the limit that binds.
///
/// The largest buffer is the packed `[n, obs_dim]` observation (per step of a call); it
/// must fit the backend's largest buffer. Indices are 32-bit on devices.
pub fn max_envs<E: GraphEnv, B: Backend>(backend: &B) -> (usize, String) {
    let max_binding = backend.max_buffer_bytes();
    let row_bytes = (4 * E::OBS_DIM) as u64;
    let by_binding = (max_binding / row_bytes) as usize;
    let by_index = (u32::MAX as usize) / E::OBS_DIM;
    if by_binding <= by_index {
        (
            by_binding,
            format!(
                "the largest buffer, {max_binding} bytes, must hold the [n, {}] f32 observations",
                E::OBS_DIM
            ),
        )
    } else {
        (by_index, "32-bit element indices".into())
    }
}
