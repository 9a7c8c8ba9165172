//! The vectorized CartPole-v1 env, shaped like gymnasium's `VectorEnv`.
//!
//! Host path: [`CartPoleVecEnv::reset`] and [`CartPoleVecEnv::step`] take and return host
//! vectors, validating every input first. Device-resident path:
//! [`CartPoleVecEnv::step_device`] takes [`DeviceActions`] already on the device and leaves
//! the outputs there ([`DeviceStep`]), so a policy on the same device never round-trips
//! through the host; [`DeviceStep::to_host`] copies them only when asked.

use std::sync::Arc;

use cartfuse_fusion::buffers::{download, download_many, upload};
use cartfuse_fusion::device::open_client;
use cartfuse_fusion::launch::LaunchLedger;
use cubecl::prelude::*;
use cubecl::server::Handle;

use crate::error::EnvError;
use crate::launch::{
    DEVICE_BYTES_PER_ENV, EnvLaunch, LARGEST_BUFFER_BYTES_PER_ENV, OutputBuffers, StateBuffers,
    launch_reset, launch_step,
};
use crate::params::{AutoresetMode, CartPoleConfig};
use crate::reference::CartPoleState;
use crate::spaces::{self, BoxSpace, DiscreteSpace};

/// One observation: `[x, x_dot, theta, theta_dot]`.
pub type Observation = [f32; 4];

/// What [`CartPoleVecEnv::step`] returns, one entry per env.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutput {
    /// Observations after the step.
    pub obs: Vec<Observation>,
    /// Rewards (1 per physics step, 0 on a `NextStep` reset step).
    pub reward: Vec<f32>,
    /// The pole fell or the cart left the track on this step.
    pub terminated: Vec<bool>,
    /// The episode reached `max_episode_steps` on this step.
    pub truncated: Vec<bool>,
    /// `SameStep` mode only: for each env whose episode ended on this step, the observation
    /// it ended on (`obs` already holds the reset observation). `None` in other modes.
    pub final_obs: Option<Vec<Option<Observation>>>,
}

/// Actions resident on the device: one `u32` per env.
///
/// Build them with [`CartPoleVecEnv::upload_actions`] (validated on the host) or wrap a
/// buffer a policy kernel wrote with [`DeviceActions::from_handle`]; the step kernel flags
/// values outside {0, 1} and [`DeviceStep::to_host`] / [`CartPoleVecEnv::check_device_actions`]
/// report them.
#[derive(Debug, Clone)]
pub struct DeviceActions {
    handle: Handle,
    len: usize,
}

impl DeviceActions {
    /// Wraps a device buffer of `len` `u32` actions.
    pub fn from_handle(handle: Handle, len: usize) -> Self {
        Self { handle, len }
    }

    /// The device buffer.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Number of actions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no actions.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The outputs of one device step, still on the device. Valid until the next step.
pub struct DeviceStep<'a, R: Runtime> {
    env: &'a mut CartPoleVecEnv<R>,
}

impl<R: Runtime> DeviceStep<'_, R> {
    /// `[num_envs, 4]` row-major `f32` observations.
    pub fn obs(&self) -> &Handle {
        &self.env.outputs.obs
    }

    /// `[num_envs]` `f32` rewards.
    pub fn reward(&self) -> &Handle {
        &self.env.outputs.reward
    }

    /// `[num_envs]` `u32` flags (0 or 1).
    pub fn terminated(&self) -> &Handle {
        &self.env.outputs.terminated
    }

    /// `[num_envs]` `u32` flags (0 or 1).
    pub fn truncated(&self) -> &Handle {
        &self.env.outputs.truncated
    }

    /// `SameStep` only: `[num_envs, 4]` final observations (rows of envs that did not end
    /// hold their current observation).
    pub fn final_obs(&self) -> Option<&Handle> {
        (self.env.config.autoreset == AutoresetMode::SameStep)
            .then_some(&self.env.outputs.final_obs)
    }

    /// Copies the outputs to the host, first checking the kernel's invalid-action flag.
    pub fn to_host(&mut self) -> Result<StepOutput, EnvError> {
        self.env.check_device_actions()?;
        self.env.outputs_to_host()
    }
}

/// A batch of CartPole-v1 envs whose step runs as one CubeCL kernel.
pub struct CartPoleVecEnv<R: Runtime> {
    client: ComputeClient<R>,
    ledger: Arc<LaunchLedger>,
    config: CartPoleConfig,
    num_envs: usize,
    seed: Option<u64>,
    state: StateBuffers,
    outputs: OutputBuffers,
}

impl<R: Runtime> CartPoleVecEnv<R> {
    /// Opens `device` and builds `num_envs` envs on it.
    pub fn new(
        device: &R::Device,
        num_envs: usize,
        config: CartPoleConfig,
    ) -> Result<Self, EnvError> {
        Self::with_client(open_client::<R>(device)?, num_envs, config)
    }

    /// Builds `num_envs` envs on an open client. Everything is validated before any
    /// device allocation.
    pub fn with_client(
        client: ComputeClient<R>,
        num_envs: usize,
        config: CartPoleConfig,
    ) -> Result<Self, EnvError> {
        config.validate()?;
        if num_envs == 0 {
            return Err(EnvError::ZeroEnvs);
        }
        let (max, limit) = Self::max_envs(&client);
        if num_envs > max {
            return Err(EnvError::TooManyEnvs {
                requested: num_envs,
                max,
                limit,
            });
        }
        let state = StateBuffers::zeroed(&client, num_envs);
        let outputs = OutputBuffers::new(&client, num_envs, config.autoreset);
        tracing::debug!(num_envs, ?config, "created CartPole vector env");
        Ok(Self {
            client,
            ledger: Arc::new(LaunchLedger::new()),
            config,
            num_envs,
            seed: None,
            state,
            outputs,
        })
    }

    /// Records launches in `ledger` (shared with other envs or a harness) from now on.
    pub fn with_ledger(mut self, ledger: Arc<LaunchLedger>) -> Self {
        self.ledger = ledger;
        self
    }

    /// The most envs `client`'s device can hold, and the limit that binds.
    ///
    /// The largest buffer is the packed `[n, 4]` observation; it must fit the device's
    /// largest storage binding. Indices are 32-bit on the device.
    pub fn max_envs(client: &ComputeClient<R>) -> (usize, String) {
        let max_binding = client.properties().memory.max_page_size;
        let by_binding = (max_binding / LARGEST_BUFFER_BYTES_PER_ENV) as usize;
        let by_index = (u32::MAX / 4) as usize;
        if by_binding <= by_index {
            (
                by_binding,
                format!(
                    "the largest storage buffer, {max_binding} bytes, must hold the [n, 4] f32 \
                     observations; all buffers together need {DEVICE_BYTES_PER_ENV} bytes per env"
                ),
            )
        } else {
            (by_index, "32-bit element indices".into())
        }
    }

    /// Number of envs.
    pub fn num_envs(&self) -> usize {
        self.num_envs
    }

    /// The configuration the envs were built with.
    pub fn config(&self) -> &CartPoleConfig {
        &self.config
    }

    /// The compute client every launch goes to.
    pub fn client(&self) -> &ComputeClient<R> {
        &self.client
    }

    /// The ledger every launch of this env is recorded in.
    pub fn ledger(&self) -> &Arc<LaunchLedger> {
        &self.ledger
    }

    /// The seed of the current reset stream, once reset.
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// Observation space of one env.
    pub fn single_observation_space(&self) -> BoxSpace {
        let p = &self.config.params;
        spaces::single_observation_space(p.x_threshold, p.theta_threshold_radians)
    }

    /// Batched observation space, `[num_envs, 4]`.
    pub fn observation_space(&self) -> BoxSpace {
        spaces::batched_box(self.single_observation_space(), self.num_envs)
    }

    /// Action space of one env: `Discrete(2)`.
    pub fn single_action_space(&self) -> DiscreteSpace {
        spaces::single_action_space()
    }

    /// Batched action space, `[num_envs]` of `Discrete(2)`.
    pub fn action_space(&self) -> DiscreteSpace {
        spaces::batched_discrete(self.single_action_space(), self.num_envs)
    }

    /// Resets every env and returns the observations.
    ///
    /// `Some(seed)` restarts the reset stream of that seed (the same seed always gives the
    /// same observations); `None` continues the current stream, or seeds from the OS on the
    /// first reset.
    pub fn reset(&mut self, seed: Option<u64>) -> Result<Vec<Observation>, EnvError> {
        self.reset_device(seed);
        Ok(rows(download::<R, f32>(&self.client, &self.outputs.obs)?))
    }

    /// [`Self::reset`] leaving the `[num_envs, 4]` observations on the device.
    pub fn reset_device(&mut self, seed: Option<u64>) -> &Handle {
        let restart = seed.is_some() || self.seed.is_none();
        let seed = seed.or(self.seed).unwrap_or_else(rand::random);
        self.seed = Some(seed);
        launch_reset(self.launch_context(seed), restart, &self.outputs.obs);
        &self.outputs.obs
    }

    /// Validates `actions` (one per env, each 0 or 1) and uploads them.
    pub fn upload_actions(&self, actions: &[u32]) -> Result<DeviceActions, EnvError> {
        self.check_count("actions", actions.len())?;
        if let Some((env, &value)) = actions.iter().enumerate().find(|(_, a)| **a > 1) {
            return Err(EnvError::InvalidAction { env, value });
        }
        Ok(DeviceActions::from_handle(
            upload(&self.client, actions),
            actions.len(),
        ))
    }

    /// Steps every env with its action and copies the results to the host.
    pub fn step(&mut self, actions: &[u32]) -> Result<StepOutput, EnvError> {
        let actions = self.upload_actions(actions)?;
        self.step_device(&actions)?;
        self.outputs_to_host()
    }

    /// Steps every env with device-resident actions; the outputs stay on the device.
    ///
    /// This enqueues exactly one kernel and does not wait for it.
    pub fn step_device(&mut self, actions: &DeviceActions) -> Result<DeviceStep<'_, R>, EnvError> {
        self.check_count("actions", actions.len())?;
        let seed = self.seed.ok_or(EnvError::NotReset)?;
        launch_step(self.launch_context(seed), actions.handle(), &self.outputs);
        Ok(DeviceStep { env: self })
    }

    /// Reads and clears the kernel's invalid-action flag: an error if any device-resident
    /// action outside {0, 1} was stepped since the last check.
    pub fn check_device_actions(&mut self) -> Result<(), EnvError> {
        let flag = download::<R, u32>(&self.client, &self.outputs.invalid_action)?;
        if flag[0] != 0 {
            self.outputs.invalid_action = upload(&self.client, &[0u32]);
            return Err(EnvError::InvalidDeviceAction);
        }
        Ok(())
    }

    /// Overwrites every env's physical state (stored as `f32` on the device). Episode step
    /// counters restart at 0 and no reset is pending; the reset stream is kept.
    pub fn set_state(&mut self, states: &[CartPoleState]) -> Result<(), EnvError> {
        self.check_count("states", states.len())?;
        if let Some((env, state)) = states
            .iter()
            .enumerate()
            .find(|(_, s)| s.to_array().iter().any(|v| !v.is_finite()))
        {
            return Err(EnvError::NonFiniteState {
                env,
                state: state.to_array(),
            });
        }
        let component = |pick: fn(&CartPoleState) -> f64| -> Vec<f32> {
            states.iter().map(|s| pick(s) as f32).collect()
        };
        let zeros = vec![0u32; self.num_envs];
        self.state.x = upload(&self.client, &component(|s| s.x));
        self.state.x_dot = upload(&self.client, &component(|s| s.x_dot));
        self.state.theta = upload(&self.client, &component(|s| s.theta));
        self.state.theta_dot = upload(&self.client, &component(|s| s.theta_dot));
        self.state.elapsed = upload(&self.client, &zeros);
        self.state.needs_reset = upload(&self.client, &zeros);
        if self.seed.is_none() {
            self.seed = Some(rand::random());
        }
        Ok(())
    }

    /// Every env's physical state, widened from the device's `f32`.
    pub fn state(&self) -> Result<Vec<CartPoleState>, EnvError> {
        let s = &self.state;
        let [x, x_dot, theta, theta_dot]: [Vec<f32>; 4] =
            download_many::<R, f32>(&self.client, &[&s.x, &s.x_dot, &s.theta, &s.theta_dot])?
                .try_into()
                .expect("four buffers were read");
        Ok((0..self.num_envs)
            .map(|i| CartPoleState {
                x: x[i].into(),
                x_dot: x_dot[i].into(),
                theta: theta[i].into(),
                theta_dot: theta_dot[i].into(),
            })
            .collect())
    }

    /// Steps taken in each env's current episode.
    pub fn elapsed_steps(&self) -> Result<Vec<u32>, EnvError> {
        Ok(download::<R, u32>(&self.client, &self.state.elapsed)?)
    }

    /// Waits until every enqueued kernel has finished.
    pub fn sync(&self) -> Result<(), EnvError> {
        cubecl::future::block_on(self.client.sync())
            .map_err(|error| cartfuse_fusion::buffers::ReadError(format!("{error:?}")).into())
    }

    fn launch_context(&self, seed: u64) -> EnvLaunch<'_, R> {
        EnvLaunch {
            client: &self.client,
            ledger: &self.ledger,
            config: &self.config,
            num_envs: self.num_envs,
            seed,
            state: &self.state,
        }
    }

    fn check_count(&self, what: &'static str, found: usize) -> Result<(), EnvError> {
        if found != self.num_envs {
            return Err(EnvError::WrongCount {
                what,
                expected: self.num_envs,
                found,
            });
        }
        Ok(())
    }

    fn outputs_to_host(&self) -> Result<StepOutput, EnvError> {
        let o = &self.outputs;
        let mut floats = download_many::<R, f32>(&self.client, &[&o.obs, &o.reward, &o.final_obs])?;
        let mut flags = download_many::<R, u32>(&self.client, &[&o.terminated, &o.truncated])?;
        let truncated: Vec<bool> = flags.pop().expect("two").iter().map(|f| *f != 0).collect();
        let terminated: Vec<bool> = flags.pop().expect("two").iter().map(|f| *f != 0).collect();
        let final_rows = rows(floats.pop().expect("three"));
        let reward = floats.pop().expect("three");
        let obs = rows(floats.pop().expect("three"));
        let final_obs = (self.config.autoreset == AutoresetMode::SameStep).then(|| {
            (0..self.num_envs)
                .map(|i| (terminated[i] || truncated[i]).then_some(final_rows[i]))
                .collect()
        });
        Ok(StepOutput {
            obs,
            reward,
            terminated,
            truncated,
            final_obs,
        })
    }
}

fn rows(flat: Vec<f32>) -> Vec<Observation> {
    flat.chunks_exact(4)
        .map(|row| [row[0], row[1], row[2], row[3]])
        .collect()
}
