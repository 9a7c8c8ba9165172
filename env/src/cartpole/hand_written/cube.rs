//! The hand-written engine on CubeCL runtimes: the `#[cube]` step and reset kernels of
//! [`super::kernel`], their device buffers, scalar packing and launches, each declared to the [`LaunchLedger`] with
//! the bytes it moves.

use std::sync::Arc;

use cartfuse_fusion::cube::Cube;
use cartfuse_fusion::cube::buffers::{download, download_many, upload};
use cartfuse_fusion::cube::kernel::elementwise_launch_shape;
use cartfuse_fusion::exec::{Backend, KernelLaunch, LaunchLedger};
use cubecl::prelude::*;
use cubecl::server::Handle;

use super::kernel::{
    PhysicsScalarsLaunch, ResetScalesLaunch, cartpole_reset_array, cartpole_step_array,
};
use super::{Physics, RESET_KERNEL, STEP_KERNEL, reset_bytes_per_env, step_bytes_per_env};
use crate::cartpole::params::CartPoleConfig;
use crate::engine::{ActionFlag, LaneKeys, OutputArena, ResetRequest, StepBuffer, StepEngine};
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

fn physics_scalars<R: Runtime>(p: &Physics) -> PhysicsScalarsLaunch<R> {
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
        p.reward_step,
        p.reward_terminal,
    )
}

fn reset_scales<R: Runtime>((centers, halves): ([f32; 4], [f32; 4])) -> ResetScalesLaunch<R> {
    let [c0, c1, c2, c3] = centers;
    let [h0, h1, h2, h3] = halves;
    ResetScalesLaunch::new(c0, c1, c2, c3, h0, h1, h2, h3)
}

/// What every launch on a vector env's buffers needs.
pub(crate) struct EnvLaunch<'a, R: Runtime> {
    pub client: &'a ComputeClient<R>,
    pub ledger: &'a LaunchLedger,
    pub config: &'a CartPoleConfig,
    pub num_envs: usize,
    /// Each env's key words.
    pub keys: &'a [Handle; 2],
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
        keys,
    } = launch;
    let (cube_count, cube_dim) = elementwise_launch_shape(client, n);
    let final_obs_len = if config.autoreset == AutoresetMode::SameStep {
        4 * n
    } else {
        4
    };
    let physics = Physics::of(config);
    let scales = ([physics.reset_center; 4], [physics.reset_half; 4]);

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
            ArrayArg::from_raw_parts(keys[0].clone(), n),
            ArrayArg::from_raw_parts(keys[1].clone(), n),
            physics_scalars::<R>(&physics),
            reset_scales::<R>(scales),
            config.max_episode_steps,
            config.autoreset == AutoresetMode::NextStep,
            config.autoreset == AutoresetMode::SameStep,
        )
    })
}

/// Enqueues the reset kernel: the envs `lanes.0` (mask) selects draw in the bounds
/// `scales` places them in, from reset number 0 where `lanes.1` (restart) is set.
pub(crate) fn launch_reset<R: Runtime>(
    launch: EnvLaunch<'_, R>,
    state: &StateBuffers,
    (mask, restart): (&Handle, &Handle),
    scales: ([f32; 4], [f32; 4]),
    obs: &Handle,
) {
    let record = launch.record(RESET_KERNEL, reset_bytes_per_env());
    let EnvLaunch {
        client,
        ledger,
        num_envs: n,
        keys,
        ..
    } = launch;
    let (cube_count, cube_dim) = elementwise_launch_shape(client, n);
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
            ArrayArg::from_raw_parts(mask.clone(), n),
            ArrayArg::from_raw_parts(restart.clone(), n),
            ArrayArg::from_raw_parts(keys[0].clone(), n),
            ArrayArg::from_raw_parts(keys[1].clone(), n),
            reset_scales::<R>(scales),
        )
    })
}

/// The hand-written CartPole kernels and their buffers on CubeCL runtime `R`.
pub struct HandWrittenEngine<R: Runtime> {
    backend: Cube<R>,
    client: ComputeClient<R>,
    ledger: Arc<LaunchLedger>,
    config: CartPoleConfig,
    n: usize,
    state: StateBuffers,
    outputs: OutputBuffers,
    /// Each env's key, as uploaded into `key_buffers`.
    keys: LaneKeys,
    key_buffers: [Handle; 2],
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
        let keys = LaneKeys::new(n);
        Self {
            state: StateBuffers::zeroed(&client, n),
            outputs: OutputBuffers::new(backend, n, config.autoreset),
            key_buffers: [upload(&client, &keys.key0), upload(&client, &keys.key1)],
            keys,
            backend: backend.clone(),
            client,
            ledger,
            config: *config,
            n,
        }
    }

    fn launch(&self) -> EnvLaunch<'_, R> {
        EnvLaunch {
            client: &self.client,
            ledger: &self.ledger,
            config: &self.config,
            num_envs: self.n,
            keys: &self.key_buffers,
        }
    }

    /// One word per env of `lanes`, in a new buffer.
    fn lanes(&self, lanes: impl Iterator<Item = bool>) -> Handle {
        let words: Vec<u32> = lanes.map(u32::from).collect();
        upload(&self.client, &words)
    }
}

impl<R: Runtime> StepEngine<Cube<R>> for HandWrittenEngine<R> {
    fn steps_per_call(&self) -> u32 {
        1
    }

    fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        self.ledger = ledger;
    }

    fn reset(&mut self, request: &ResetRequest<'_>) -> Result<(), EnvError> {
        let scales = super::reset_scales(&self.config, request.bounds)?;
        let restart = self.keys.seed(request.seeding, request.mask)?;
        let mask = self.lanes((0..self.n).map(|i| request.mask.is_none_or(|m| m[i])));
        let restart = self.lanes(restart.into_iter());
        for (buffer, words) in self
            .key_buffers
            .iter()
            .zip([&self.keys.key0, &self.keys.key1])
        {
            self.backend.write_u32(buffer, words)?;
        }
        let obs = &self.outputs.obs;
        launch_reset(self.launch(), &self.state, (&mask, &restart), scales, obs);
        Ok(())
    }

    fn step(&mut self, actions: &Handle) -> Result<(), EnvError> {
        let found = (actions.size_in_used() / 4) as usize;
        if found != self.n {
            return Err(EnvError::WrongCount {
                what: "device actions",
                per_env: 1,
                expected: self.n,
                found,
            });
        }
        launch_step(self.launch(), &self.state, actions, &self.outputs);
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
