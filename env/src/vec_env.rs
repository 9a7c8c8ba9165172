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

use crate::engine::{DEVICE_BYTES_PER_ENV, Engine, EnvLaunch, LARGEST_BUFFER_BYTES_PER_ENV};
use crate::error::EnvError;
use crate::kernel::check_actions_array;
use crate::params::{AutoresetMode, CartPoleConfig};
use crate::reference::CartPoleState;
use crate::spaces::{self, BoxSpace, DiscreteSpace};
use cartfuse_fusion::launch::{KernelLaunch, elementwise_launch_shape};

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
        self.env.engine.obs()
    }

    /// `[num_envs]` `f32` rewards.
    pub fn reward(&self) -> &Handle {
        self.env.engine.reward()
    }

    /// `[num_envs]` `u32` flags (0 or 1).
    pub fn terminated(&self) -> &Handle {
        self.env.engine.terminated()
    }

    /// `[num_envs]` `u32` flags (0 or 1).
    pub fn truncated(&self) -> &Handle {
        self.env.engine.truncated()
    }

    /// `SameStep` only: `[num_envs, 4]` final observations (rows of envs that did not end
    /// hold their current observation).
    pub fn final_obs(&self) -> Option<&Handle> {
        if self.env.config.autoreset == AutoresetMode::SameStep {
            self.env.engine.final_obs()
        } else {
            None
        }
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
    engine: Engine<R>,
    last_actions: Option<Handle>,
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
        let steps = config.plan.steps_per_call() as usize;
        let (max, mut limit) = Self::max_envs(&client);
        let max = max / steps;
        if steps > 1 {
            limit.push_str(&format!(", {steps} steps of them per {} call", config.plan));
        }
        if num_envs > max {
            return Err(EnvError::TooManyEnvs {
                requested: num_envs,
                max,
                limit,
            });
        }
        let ledger = Arc::new(LaunchLedger::new());
        let engine = Engine::new(&client, num_envs, &config, ledger.clone())?;
        tracing::debug!(num_envs, ?config, "created CartPole vector env");
        Ok(Self {
            client,
            ledger,
            config,
            num_envs,
            seed: None,
            engine,
            last_actions: None,
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
        let obs = self.reset_device(seed)?.clone();
        Ok(rows(download::<R, f32>(&self.client, &obs)?))
    }

    /// [`Self::reset`] leaving the `[num_envs, 4]` observations on the device.
    pub fn reset_device(&mut self, seed: Option<u64>) -> Result<&Handle, EnvError> {
        let restart = seed.is_some() || self.seed.is_none();
        let seed = seed.or(self.seed).unwrap_or_else(rand::random);
        self.seed = Some(seed);
        let launch = EnvLaunch {
            client: &self.client,
            ledger: &self.ledger,
            config: &self.config,
            num_envs: self.num_envs,
            seed,
        };
        self.engine.reset(launch, restart)?;
        Ok(self.engine.obs())
    }

    /// Validates `actions` (one per env and step of a call, each 0 or 1) and uploads them.
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
        let launch = EnvLaunch {
            client: &self.client,
            ledger: &self.ledger,
            config: &self.config,
            num_envs: self.num_envs,
            seed,
        };
        self.engine.step(launch, actions.handle())?;
        self.last_actions = Some(actions.handle().clone());
        Ok(DeviceStep { env: self })
    }

    /// Reads and clears the kernel's invalid-action flag: an error if any device-resident
    /// action outside {0, 1} was stepped since the last check.
    ///
    /// The hand-written kernel raises the flag while stepping; planned engines run a small
    /// check kernel over the last actions here, so their steps carry no extra traffic.
    pub fn check_device_actions(&mut self) -> Result<(), EnvError> {
        let client = self.client.clone();
        let flag = match self.engine.invalid_action_flag() {
            Some(flag) => {
                let raised = download::<R, u32>(&client, flag)?[0] != 0;
                if raised {
                    *flag = upload(&client, &[0u32]);
                }
                raised
            }
            None => match &self.last_actions {
                Some(actions) => self.check_actions_on_device(actions)?,
                None => false,
            },
        };
        if flag {
            return Err(EnvError::InvalidDeviceAction);
        }
        Ok(())
    }

    fn check_actions_on_device(&self, actions: &Handle) -> Result<bool, EnvError> {
        let len = self.num_envs * self.steps_per_call();
        let flag = upload(&self.client, &[0u32]);
        let (cube_count, cube_dim) = elementwise_launch_shape(&self.client, len);
        let record = KernelLaunch {
            kernel: "check_actions",
            elements: len as u64,
            bytes_read: 4 * len as u64,
            bytes_written: 0,
        };
        self.ledger.launch(record, || unsafe {
            // SAFETY: `actions` holds `len` u32 (checked by `step_device`), `flag` one.
            check_actions_array::launch_unchecked::<R>(
                &self.client,
                cube_count,
                cube_dim,
                ArrayArg::from_raw_parts(actions.clone(), len),
                ArrayArg::from_raw_parts(flag.clone(), 1),
            )
        });
        Ok(download::<R, u32>(&self.client, &flag)?[0] != 0)
    }

    /// Overwrites every env's physical state (stored as `f32` on the device). Episode step
    /// counters restart at 0 and no reset is pending; the reset stream is kept (an env never
    /// reset is reset from a fresh seed first).
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
        let columns = [0, 1, 2, 3].map(|k| states.iter().map(|s| s.to_array()[k] as f32).collect());
        if self.seed.is_none() {
            // Never reset: seed a reset stream first, so later autoresets have one.
            self.reset_device(None)?;
        }
        self.engine.set_state(&self.client, columns)
    }

    /// Every env's physical state, widened from the device's `f32`.
    pub fn state(&self) -> Result<Vec<CartPoleState>, EnvError> {
        let [x, x_dot, theta, theta_dot] = self.engine.state_columns(&self.client)?;
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
        self.engine.elapsed(&self.client)
    }

    /// Waits until every enqueued kernel has finished.
    pub fn sync(&self) -> Result<(), EnvError> {
        cubecl::future::block_on(self.client.sync())
            .map_err(|error| cartfuse_fusion::buffers::ReadError(format!("{error:?}")).into())
    }

    fn check_count(&self, what: &'static str, found: usize) -> Result<(), EnvError> {
        let per_env = match what {
            "actions" => self.steps_per_call(),
            _ => 1,
        };
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

    fn outputs_to_host(&self) -> Result<StepOutput, EnvError> {
        let e = &self.engine;
        let same_step = self.config.autoreset == AutoresetMode::SameStep;
        let mut float_handles = vec![e.obs(), e.reward()];
        if same_step {
            float_handles.push(
                e.final_obs()
                    .expect("SameStep engines write final observations"),
            );
        }
        let mut floats = download_many::<R, f32>(&self.client, &float_handles)?;
        let mut flags = download_many::<R, u32>(&self.client, &[e.terminated(), e.truncated()])?;
        let truncated: Vec<bool> = flags.pop().expect("two").iter().map(|f| *f != 0).collect();
        let terminated: Vec<bool> = flags.pop().expect("two").iter().map(|f| *f != 0).collect();
        let final_rows = same_step.then(|| rows(floats.pop().expect("three")));
        let reward = floats.pop().expect("two");
        let obs = rows(floats.pop().expect("two"));
        let final_obs = final_rows.map(|final_rows| {
            (0..terminated.len())
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
