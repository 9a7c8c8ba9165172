//! The hand-written CartPole-v1 step, written natively for the CPU runtime: the CPU's roof,
//! as the `#[cube]` kernel of [`super::kernel`] is the device's.
//!
//! One pass over the envs does the whole step in SIMD registers (the level
//! [`SimdLevel::detect`](cartfuse_fusion::cpu::SimdLevel::detect) picks, through the same
//! [`Simd`](cartfuse_fusion::cpu::Simd) trait and the same [`math::sin_cos`] as every
//! planned CPU kernel), in the exact operation order of the `#[cube]` kernel ([`step`]).
//! Reset states are drawn from Threefry only for the envs that reset, packed `LANES` to an
//! evaluation ([`resets`]), with the device's counters, so the draws are bit-identical to
//! the device's. Envs are split over the CPU runtime's threads, one range per thread, from
//! the CPU runtime's threshold for every launch ([`CpuOptions::parallel_min_lanes`]).
//!
//! The state and counters are the engine's own memory (no lock to take per step). The
//! outputs go where the caller asks ([`sink`]): into the engine's buffers for
//! [`DeviceStep`](crate::DeviceStep), or straight into the caller's memory for
//! [`VecEnv::step_into`](crate::VecEnv::step_into), written by every worker thread.
//!
//! [`math::sin_cos`]: cartfuse_fusion::cpu::interp::math::sin_cos

use std::sync::Arc;

use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::cpu::spin_pool::on_threads;
use cartfuse_fusion::cpu::{CpuBuffer, CpuOptions};
use cartfuse_fusion::exec::{KernelLaunch, LaunchLedger};
use cartfuse_fusion::rng;

mod frame;
mod resets;
mod sink;
mod step;

use frame::Frame;
use sink::{Flags, Sink};
use step::Lanes;

use super::{
    Physics, RESET_KERNEL, STEP_KERNEL, reset_bytes_per_env, reset_scales, step_bytes_per_env,
};
use crate::cartpole::params::CartPoleConfig;
use crate::engine::{ActionFlag, LaneKeys, ResetRequest, StepBuffer, StepEngine};
use crate::error::EnvError;
use crate::host_outputs::HostOutputs;
use crate::params::AutoresetMode;

/// Words of padding past `n` in the state and counters: a vector of the widest level.
const PAD: usize = 16;

/// The state, counters and keys, each `n` lanes plus [`PAD`].
struct Columns {
    state: [Vec<f32>; 4],
    elapsed: Vec<u32>,
    resets: Vec<u32>,
    needs_reset: Vec<u32>,
    key0: Vec<u32>,
    key1: Vec<u32>,
}

impl Columns {
    fn zeroed(n: usize) -> Self {
        Self {
            state: std::array::from_fn(|_| vec![0.0; n + PAD]),
            elapsed: vec![0; n + PAD],
            resets: vec![0; n + PAD],
            needs_reset: vec![0; n + PAD],
            key0: vec![0; n + PAD],
            key1: vec![0; n + PAD],
        }
    }
}

/// The outputs the engine keeps for [`DeviceStep`](crate::DeviceStep): `u32` flags.
struct Outputs {
    obs: CpuBuffer,
    reward: CpuBuffer,
    terminated: CpuBuffer,
    truncated: CpuBuffer,
    /// `[4 n]` in `SameStep`, else 4 words no step writes.
    final_obs: CpuBuffer,
}

impl Outputs {
    fn zeroed(n: usize, autoreset: AutoresetMode) -> Self {
        let final_obs = match autoreset {
            AutoresetMode::SameStep => 4 * n,
            _ => 4,
        };
        Self {
            obs: CpuBuffer::zeroed(4 * n),
            reward: CpuBuffer::zeroed(n),
            terminated: CpuBuffer::zeroed(n),
            truncated: CpuBuffer::zeroed(n),
            final_obs: CpuBuffer::zeroed(final_obs),
        }
    }

    fn all(&self) -> [&CpuBuffer; 5] {
        [
            &self.obs,
            &self.reward,
            &self.terminated,
            &self.truncated,
            &self.final_obs,
        ]
    }
}

/// What a step reads besides the outputs: options, constants, state, ledger.
struct Runner {
    options: CpuOptions,
    ledger: Arc<LaunchLedger>,
    config: CartPoleConfig,
    physics: Physics,
    n: usize,
    columns: Columns,
    /// Each lane's key (copied into the columns at every reset).
    keys: LaneKeys,
}

impl Runner {
    fn record(&self, kernel: &'static str, (read, written): (u64, u64)) -> KernelLaunch<'static> {
        let n = self.n as u64;
        KernelLaunch {
            kernel,
            elements: n,
            bytes_read: read * n,
            bytes_written: written * n,
        }
    }

    /// Steps every env with the `n` actions at `actions` into `out`, split over threads
    /// when large enough; returns whether an action was invalid.
    fn step(&mut self, actions: *const u32, out: Sink) -> bool {
        let columns = &mut self.columns;
        let frame = Frame {
            actions,
            state: std::array::from_fn(|c| columns.state[c].as_mut_ptr()),
            elapsed: columns.elapsed.as_mut_ptr(),
            resets: columns.resets.as_mut_ptr(),
            needs_reset: columns.needs_reset.as_mut_ptr(),
            out,
            n: self.n,
            physics: self.physics,
            key0: columns.key0.as_ptr(),
            key1: columns.key1.as_ptr(),
            max_steps: self.config.max_episode_steps,
            mode: self.config.autoreset,
        };
        let record = self.record(STEP_KERNEL, step_bytes_per_env(self.config.autoreset));
        let options = &self.options;
        self.ledger.launch(record, || run_split(options, frame))
    }

    /// Resets the envs `request` selects on the host: each draws its reset number 0
    /// (a new seed) or its next under its own key, in the request's bounds; returns every
    /// env's `[n, 4]` observations.
    fn reset(&mut self, request: &ResetRequest<'_>) -> Result<Vec<f32>, EnvError> {
        let record = self.record(RESET_KERNEL, reset_bytes_per_env());
        let (centers, halves) = reset_scales(&self.config, request.bounds)?;
        let restart = self.keys.seed(request.seeding, request.mask)?;
        let (n, keys) = (self.n, &self.keys);
        let columns = &mut self.columns;
        columns.key0[..n].copy_from_slice(&keys.key0);
        columns.key1[..n].copy_from_slice(&keys.key1);
        let masked = |env: usize| request.mask.is_none_or(|m| m[env]);
        self.ledger.launch(record, || {
            for env in (0..n).filter(|&env| masked(env)) {
                let index = if restart[env] { 0 } else { columns.resets[env] };
                let key = [keys.key0[env], keys.key1[env]];
                let [a, b] = rng::threefry2x32(key, [0, 2 * index]);
                let [c, d] = rng::threefry2x32(key, [0, 2 * index + 1]);
                for (k, bits) in [a, b, c, d].into_iter().enumerate() {
                    let draw = rng::symmetric_uniform(bits, 1.0);
                    columns.state[k][env] = centers[k] + halves[k] * draw;
                }
                columns.resets[env] = index + 1;
                columns.elapsed[env] = 0;
                columns.needs_reset[env] = 0;
            }
        });
        let state = &self.columns.state;
        Ok((0..n)
            .flat_map(|env| state.iter().map(move |column| column[env]))
            .collect())
    }
}

/// Runs `frame` over every env: on the calling thread below the options' threshold, else
/// one range per thread, in whole vectors of the widest level.
fn run_split(options: &CpuOptions, frame: Frame) -> bool {
    let n = frame.n;
    let lanes = |lo: usize, hi: usize| {
        (options.simd)
            .dispatch(Lanes { frame, lo, hi })
            .expect("the backend checked the SIMD level")
    };
    let threads = options.resolved_threads();
    // The planned kernels' threshold, so that both split at the same n.
    if threads <= 1 || n < options.parallel_min_lanes {
        return lanes(0, n);
    }
    let chunk = n.div_ceil(threads).next_multiple_of(PAD);
    let mut invalid = vec![false; n.div_ceil(chunk)];
    on_threads(&mut invalid, |c, invalid| {
        *invalid = lanes(c * chunk, ((c + 1) * chunk).min(n));
    });
    invalid.contains(&true)
}

/// The native hand-written CartPole engine and its host buffers.
pub struct NativeEngine {
    runner: Runner,
    outputs: Outputs,
    invalid_action: CpuBuffer,
}

impl NativeEngine {
    /// Zeroed buffers for `n` envs.
    pub fn new(cpu: &Cpu, n: usize, config: &CartPoleConfig, ledger: Arc<LaunchLedger>) -> Self {
        Self {
            runner: Runner {
                options: cpu.options().clone(),
                ledger,
                config: *config,
                physics: Physics::of(config),
                n,
                columns: Columns::zeroed(n),
                keys: LaneKeys::new(n),
            },
            outputs: Outputs::zeroed(n, config.autoreset),
            invalid_action: CpuBuffer::zeroed(1),
        }
    }
}

impl StepEngine<Cpu> for NativeEngine {
    fn steps_per_call(&self) -> u32 {
        1
    }

    fn set_ledger(&mut self, ledger: Arc<LaunchLedger>) {
        self.runner.ledger = ledger;
    }

    fn reset(&mut self, request: &ResetRequest<'_>) -> Result<(), EnvError> {
        let obs = self.runner.reset(request)?;
        self.outputs.obs = CpuBuffer::from_f32(&obs);
        Ok(())
    }

    fn step(&mut self, actions: &CpuBuffer) -> Result<(), EnvError> {
        let n = self.runner.n;
        if actions.len() != n {
            return Err(EnvError::WrongCount {
                what: "device actions",
                per_env: 1,
                expected: n,
                found: actions.len(),
            });
        }
        if self.outputs.all().iter().any(|b| b.same(actions)) {
            return Err(EnvError::Unsupported(
                "the action buffer is one the step writes".into(),
            ));
        }
        let outputs = &self.outputs;
        let same_step = self.runner.config.autoreset == AutoresetMode::SameStep;
        let actions = actions.lock();
        let (mut obs, mut reward) = (outputs.obs.lock(), outputs.reward.lock());
        let (mut terminated, mut truncated) = (outputs.terminated.lock(), outputs.truncated.lock());
        let mut final_obs = same_step.then(|| outputs.final_obs.lock());
        let sink = Sink {
            obs: obs.as_mut_ptr().cast(),
            reward: reward.as_mut_ptr().cast(),
            terminated: Flags::Words(terminated.as_mut_ptr()),
            truncated: Flags::Words(truncated.as_mut_ptr()),
            final_obs: final_obs
                .as_mut()
                .map_or(std::ptr::null_mut(), |rows| rows.as_mut_ptr().cast()),
        };
        let invalid = self.runner.step(actions.as_ptr(), sink);
        drop((actions, obs, reward, terminated, truncated, final_obs));
        if invalid {
            self.invalid_action.lock()[0] = 1;
        }
        Ok(())
    }

    fn step_host(
        &mut self,
        actions: &[u32],
        out: &mut HostOutputs<'_>,
    ) -> Option<Result<(), EnvError>> {
        // The vector env checked every length and action.
        let sink = Sink {
            obs: out.obs.as_mut_ptr(),
            reward: out.reward.as_mut_ptr(),
            terminated: Flags::Bytes(out.terminated.as_mut_ptr()),
            truncated: Flags::Bytes(out.truncated.as_mut_ptr()),
            final_obs: (out.final_obs.as_deref_mut())
                .map_or(std::ptr::null_mut(), <[f32]>::as_mut_ptr),
        };
        self.runner.step(actions.as_ptr(), sink);
        Some(Ok(()))
    }

    fn buffer(&self, which: StepBuffer) -> Option<&CpuBuffer> {
        Some(match which {
            StepBuffer::Obs => &self.outputs.obs,
            StepBuffer::Reward => &self.outputs.reward,
            StepBuffer::Terminated => &self.outputs.terminated,
            StepBuffer::Truncated => &self.outputs.truncated,
            StepBuffer::FinalObs => &self.outputs.final_obs,
        })
    }

    fn action_flag(&self) -> Option<ActionFlag<'_, CpuBuffer>> {
        Some(ActionFlag {
            buffer: &self.invalid_action,
            raised_by_step: true,
        })
    }

    fn set_state(&mut self, columns: &[Vec<f32>]) -> Result<(), EnvError> {
        let own = &mut self.runner.columns;
        for (column, values) in own.state.iter_mut().zip(columns) {
            column[..values.len()].copy_from_slice(values);
        }
        own.elapsed.fill(0);
        own.needs_reset.fill(0);
        Ok(())
    }

    fn state_columns(&self) -> Result<Vec<Vec<f32>>, EnvError> {
        let n = self.runner.n;
        Ok(self
            .runner
            .columns
            .state
            .iter()
            .map(|c| c[..n].to_vec())
            .collect())
    }

    fn elapsed(&self) -> Result<Vec<u32>, EnvError> {
        Ok(self.runner.columns.elapsed[..self.runner.n].to_vec())
    }
}

#[cfg(test)]
mod tests;
