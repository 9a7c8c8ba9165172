//! The hand-written engine on CubeCL runtimes: the `#[cube]` step and reset kernels of
//! [`super::kernel`], their device buffers, scalar packing and launches, each declared to the [`LaunchLedger`] with
//! the bytes it moves.

use std::sync::Arc;

use cartfuse_fusion::cube::Cube;
use cartfuse_fusion::cube::buffers::{download, download_many, upload};
use cartfuse_fusion::cube::kernel::elementwise_launch_shape;
use cartfuse_fusion::exec::{Backend, KernelLaunch, LaunchLedger};
use cartfuse_fusion::rng;
use cubecl::prelude::*;
use cubecl::server::Handle;

use super::kernel::{PhysicsScalarsLaunch, cartpole_reset_array, cartpole_step_array};
use super::{
    Physics, RESET_KERNEL, STEP_KERNEL, masked_reset_unsupported, reset_bytes_per_env,
    step_bytes_per_env,
};
use crate::cartpole::params::CartPoleConfig;
use crate::engine::{ActionFlag, OutputArena, StepBuffer, StepEngine};
use crate::error::EnvError;
use crate::params::AutoresetMode;

/// The per-env state, structure of arrays.
pub(crate) struct StateBuffers {
    pub x: Handle,
    pub x_dot: Handle,
    pub theta: Handle,
    pub theta_dot: Handle,
    pub elapsed: Handle,
    pub resets: Handle,
    pub needs_reset: Handle,
}

/// Buffers the step writes its results to, reused every step: the parts of one arena, so
/// a host step reads them (the invalid-action flag included) in one transfer.
pub(crate) struct OutputBuffers {
    pub obs: Handle,
    pub reward: Handle,
    pub terminated: Handle,
    pub truncated: Handle,
    pub final_obs: Handle,
    pub invalid_action: Handle,
    pub arena: OutputArena<Handle>,
}

impl StateBuffers {
    pub fn zeroed<R: Runtime>(client: &ComputeClient<R>, n: usize) -> Self {
        let f32s = |_| client.create_from_slice(f32::as_bytes(&vec![0.0f32; n]));
        let u32s = |_| client.create_from_slice(u32::as_bytes(&vec![0u32; n]));
        Self {
            x: f32s(()),
            x_dot: f32s(()),
            theta: f32s(()),
            theta_dot: f32s(()),
            elapsed: u32s(()),
            resets: u32s(()),
            needs_reset: u32s(()),
        }
    }
}

impl OutputBuffers {
    pub fn new<R: Runtime>(backend: &Cube<R>, n: usize, autoreset: AutoresetMode) -> Self {
        let same_step = autoreset == AutoresetMode::SameStep;
        // Outside SameStep the final observations are a placeholder nothing reads.
        let final_obs_len = if same_step { 4 * n } else { 4 };
        let arena = backend.alloc_arena(&[4 * n, n, n, n, final_obs_len, 1]);
        let [
            obs,
            reward,
            terminated,
            truncated,
            final_obs,
            invalid_action,
        ] = <[Handle; 6]>::try_from(arena.parts.clone()).expect("six parts");
        backend
            .write_u32(&invalid_action, &[0])
            .expect("the flag holds one word");
        let mut outputs = vec![
            StepBuffer::Obs,
            StepBuffer::Reward,
            StepBuffer::Terminated,
            StepBuffer::Truncated,
        ];
        if same_step {
            outputs.push(StepBuffer::FinalObs);
        }
        Self {
            obs,
            reward,
            terminated,
            truncated,
            final_obs,
            invalid_action,
            arena: OutputArena {
                arena,
                outputs,
                flag: Some(5),
            },
        }
    }
}

fn physics_scalars<R: Runtime>(config: &CartPoleConfig) -> PhysicsScalarsLaunch<R> {
    let p = Physics::of(config);
    PhysicsScalarsLaunch::new(
        p.gravity,
        p.masspole,
        p.total_mass,
        p.length,
        p.polemass_length,
        p.force_mag,
        p.tau,
        p.x_threshold,
        p.theta_threshold,
        p.reset_scale,
    )
}

/// What every launch on a vector env's buffers needs.
pub(crate) struct EnvLaunch<'a, R: Runtime> {
    pub client: &'a ComputeClient<R>,
    pub ledger: &'a LaunchLedger,
    pub config: &'a CartPoleConfig,
    pub num_envs: usize,
    pub seed: u64,
}

impl<R: Runtime> EnvLaunch<'_, R> {
    /// The ledger record of `kernel` moving `(read, written)` bytes per env over all envs.
    fn record(&self, kernel: &'static str, (read, written): (u64, u64)) -> KernelLaunch<'static> {
        let n = self.num_envs as u64;
        KernelLaunch {
            kernel,
            elements: n,
            bytes_read: read * n,
            bytes_written: written * n,
        }
    }
}

/// Enqueues one hand-written step for all envs.
pub(crate) fn launch_step<R: Runtime>(
    launch: EnvLaunch<'_, R>,
    state: &StateBuffers,
    actions: &Handle,
    outputs: &OutputBuffers,
) {
    let record = launch.record(STEP_KERNEL, step_bytes_per_env(launch.config.autoreset));
    let EnvLaunch {
        client,
        ledger,
        config,
        num_envs: n,
        seed,
    } = launch;
    let (cube_count, cube_dim) = elementwise_launch_shape(client, n);
    let [key0, key1] = rng::seed_key(seed);
    let final_obs_len = if config.autoreset == AutoresetMode::SameStep {
        4 * n
    } else {
        4
    };

    ledger.launch(record, || unsafe {
        // SAFETY: every array is bound with its true element count and the kernel guards
        // `env < x.len()`; all per-env arrays hold `n` elements, rows `4 n`.
        cartpole_step_array::launch_unchecked::<R>(
            client,
            cube_count,
            cube_dim,
            ArrayArg::from_raw_parts(actions.clone(), n),
            ArrayArg::from_raw_parts(state.x.clone(), n),
            ArrayArg::from_raw_parts(state.x_dot.clone(), n),
            ArrayArg::from_raw_parts(state.theta.clone(), n),
            ArrayArg::from_raw_parts(state.theta_dot.clone(), n),
            ArrayArg::from_raw_parts(state.elapsed.clone(), n),
            ArrayArg::from_raw_parts(state.resets.clone(), n),
            ArrayArg::from_raw_parts(state.needs_reset.clone(), n),
            ArrayArg::from_raw_parts(outputs.obs.clone(), 4 * n),
            ArrayArg::from_raw_parts(outputs.reward.clone(), n),
            ArrayArg::from_raw_parts(outputs.terminated.clone(), n),
            ArrayArg::from_raw_parts(outputs.truncated.clone(), n),
            ArrayArg::from_raw_parts(outputs.final_obs.clone(), final_obs_len),
            ArrayArg::from_raw_parts(outputs.invalid_action.clone(), 1),
            physics_scalars::<R>(config),
            key0,
            key1,
            config.max_episode_steps,
            config.autoreset == AutoresetMode::NextStep,
            config.autoreset == AutoresetMode::SameStep,
        )
    })
}

/// Enqueues the reset kernel for all envs; `restart` rewinds the draw counters (new seed).
pub(crate) fn launch_reset<R: Runtime>(
    launch: EnvLaunch<'_, R>,
    state: &StateBuffers,
    restart: bool,
    obs: &Handle,
) {
    let record = launch.record(RESET_KERNEL, reset_bytes_per_env());
    let EnvLaunch {
        client,
        ledger,
        config,
        num_envs: n,
        seed,
    } = launch;
    let (cube_count, cube_dim) = elementwise_launch_shape(client, n);
    let [key0, key1] = rng::seed_key(seed);
    ledger.launch(record, || unsafe {
        // SAFETY: as in `launch_step`.
        cartpole_reset_array::launch_unchecked::<R>(
            client,
            cube_count,
            cube_dim,
            ArrayArg::from_raw_parts(state.x.clone(), n),
            ArrayArg::from_raw_parts(state.x_dot.clone(), n),
            ArrayArg::from_raw_parts(state.theta.clone(), n),
            ArrayArg::from_raw_parts(state.theta_dot.clone(), n),
            ArrayArg::from_raw_parts(state.elapsed.clone(), n),
            ArrayArg::from_raw_parts(state.resets.clone(), n),
            ArrayArg::from_raw_parts(state.needs_reset.clone(), n),
            ArrayArg::from_raw_parts(obs.clone(), 4 * n),
            key0,
            key1,
            u32::from(restart),
            Physics::of(config).reset_scale,
        )
    })
}

/// The hand-written CartPole kernels and their buffers on CubeCL runtime `R`.
pub struct HandWrittenEngine<R: Runtime> {
    client: ComputeClient<R>,
    ledger: Arc<LaunchLedger>,
    config: CartPoleConfig,
    n: usize,
    state: StateBuffers,
    outputs: OutputBuffers,
}

impl<R: Runtime> HandWrittenEngine<R> {
    /// Zeroed buffers for `n` envs.
    pub fn new(
        backend: &Cube<R>,
        n: usize,
        config: &CartPoleConfig,
        ledger: Arc<LaunchLedger>,
    ) -> Self {
        let client = backend.client().clone();
        Self {
            state: StateBuffers::zeroed(&client, n),
            outputs: OutputBuffers::new(backend, n, config.autoreset),
            client,
            ledger,
            config: *config,
            n,
        }
    }

    fn launch(&self, seed: u64) -> EnvLaunch<'_, R> {
        EnvLaunch {
            client: &self.client,
            ledger: &self.ledger,
            config: &self.config,
            num_envs: self.n,
            seed,
        }
    }
}

impl<R: Runtime> StepEngine<Cube<R>> for HandWrittenEngine<R> {
    fn steps_per_call(&self) -> u32 {
        1
    }

    fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        self.ledger = ledger;
    }

    fn reset(&mut self, seed: u64, restart: bool, mask: Option<&[bool]>) -> Result<(), EnvError> {
        if mask.is_some() {
            return Err(masked_reset_unsupported());
        }
        launch_reset(self.launch(seed), &self.state, restart, &self.outputs.obs);
        Ok(())
    }

    fn step(&mut self, seed: u64, actions: &Handle) -> Result<(), EnvError> {
        let found = (actions.size_in_used() / 4) as usize;
        if found != self.n {
            return Err(EnvError::WrongCount {
                what: "device actions",
                per_env: 1,
                expected: self.n,
                found,
            });
        }
        launch_step(self.launch(seed), &self.state, actions, &self.outputs);
        Ok(())
    }

    fn buffer(&self, which: StepBuffer) -> Option<&Handle> {
        let o = &self.outputs;
        Some(match which {
            StepBuffer::Obs => &o.obs,
            StepBuffer::Reward => &o.reward,
            StepBuffer::Terminated => &o.terminated,
            StepBuffer::Truncated => &o.truncated,
            StepBuffer::FinalObs => &o.final_obs,
        })
    }

    fn output_arena(&self) -> Option<&OutputArena<Handle>> {
        // After a reset the observations are the reset's, in the same part.
        Some(&self.outputs.arena)
    }

    fn action_flag(&self) -> Option<ActionFlag<'_, Handle>> {
        Some(ActionFlag {
            buffer: &self.outputs.invalid_action,
            raised_by_step: true,
        })
    }

    fn set_state(&mut self, columns: &[Vec<f32>]) -> Result<(), EnvError> {
        let client = &self.client;
        let n = self.n;
        self.state.x = upload(client, &columns[0]);
        self.state.x_dot = upload(client, &columns[1]);
        self.state.theta = upload(client, &columns[2]);
        self.state.theta_dot = upload(client, &columns[3]);
        self.state.elapsed = upload(client, &vec![0u32; n]);
        self.state.needs_reset = upload(client, &vec![0u32; n]);
        Ok(())
    }

    fn state_columns(&self) -> Result<Vec<Vec<f32>>, EnvError> {
        let s = &self.state;
        Ok(download_many::<R, f32>(
            &self.client,
            &[&s.x, &s.x_dot, &s.theta, &s.theta_dot],
        )?)
    }

    fn elapsed(&self) -> Result<Vec<u32>, EnvError> {
        Ok(download::<R, u32>(&self.client, &self.state.elapsed)?)
    }
}
