//! The hand-written CartPole-v1 step, written natively for the CPU runtime: the CPU's roof,
//! as the `#[cube]` kernel (`super::kernel`) is the device's.
//!
//! One pass over the envs does the whole step in SIMD registers (the level
//! [`SimdLevel::detect`](cartfuse_fusion::cpu::SimdLevel::detect) picks, through the same
//! [`Simd`] trait and the same [`math::sin_cos`] as every planned CPU kernel), in the exact
//! operation order of the `#[cube]` kernel. Reset states are drawn from Threefry only for
//! the envs that reset, packed `LANES` to an evaluation ([`resets`]), with the
//! device's counters, so the draws are bit-identical to the device's. Envs are split over
//! the CPU runtime's threads, one range per thread, from the CPU runtime's threshold
//! for every launch ([`CpuOptions::parallel_min_lanes`]).

use std::sync::Arc;

use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::cpu::interp::math;
use cartfuse_fusion::cpu::interp::simd::{Simd, WithSimd};
use cartfuse_fusion::cpu::spin_pool::on_threads;
use cartfuse_fusion::cpu::{CpuBuffer, CpuOptions};
use cartfuse_fusion::exec::{KernelLaunch, LaunchLedger};
use cartfuse_fusion::rng;

mod resets;

use resets::{PendingResets, draw_pending};

use super::{
    RESET_KERNEL, STEP_KERNEL, masked_reset_unsupported, reset_bytes_per_env, step_bytes_per_env,
};
use crate::cartpole::params::CartPoleConfig;
use crate::engine::{StepBuffer, StepEngine};
use crate::error::EnvError;
use crate::params::AutoresetMode;

/// Vectors whose physics is computed together (see [`Lanes::with_simd`]).
const BLOCK: usize = 4;

/// The physics constants, as `f32` in the `#[cube]` kernel's order.
#[derive(Clone, Copy)]
struct Physics {
    gravity: f32,
    masspole: f32,
    total_mass: f32,
    length: f32,
    polemass_length: f32,
    force_mag: f32,
    tau: f32,
    x_threshold: f32,
    theta_threshold: f32,
    reset_scale: f32,
    reset_bound: f32,
}

impl Physics {
    fn of(config: &CartPoleConfig) -> Self {
        let p = &config.params;
        Self {
            gravity: p.gravity as f32,
            masspole: p.masspole as f32,
            total_mass: p.total_mass() as f32,
            length: p.length as f32,
            polemass_length: p.polemass_length() as f32,
            force_mag: p.force_mag as f32,
            tau: p.tau as f32,
            x_threshold: p.x_threshold as f32,
            theta_threshold: p.theta_threshold_radians as f32,
            reset_scale: rng::symmetric_uniform_scale(p.reset_bound as f32),
            reset_bound: p.reset_bound as f32,
        }
    }
}

/// Raw pointers of one step's buffers (each padded by a vector past `n`).
#[derive(Clone, Copy)]
struct Frame {
    actions: *const u32,
    state: [*mut f32; 4],
    elapsed: *mut u32,
    resets: *mut u32,
    needs_reset: *mut u32,
    obs: *mut f32,
    reward: *mut f32,
    terminated: *mut u32,
    truncated: *mut u32,
    final_obs: *mut f32,
    n: usize,
    physics: Physics,
    key: [u32; 2],
    max_steps: u32,
    mode: AutoresetMode,
}

// SAFETY: threads write disjoint, vector-aligned env ranges; only the last range reaches
// into the padding past `n`, which no other range touches.
unsafe impl Send for Frame {}
unsafe impl Sync for Frame {}

/// Envs `lo..hi` (`lo` a multiple of the vector width): returns whether an action was invalid.
struct Lanes {
    frame: Frame,
    lo: usize,
    hi: usize,
}

impl WithSimd for Lanes {
    type Output = bool;

    #[inline(always)]
    fn with_simd<V: Simd>(self, s: V) -> bool {
        let f = &self.frame;
        let mut pending = PendingResets::new();
        let mut invalid = 0u64;
        let mut i = self.lo;
        // The physics of BLOCK vectors first, then the rest of their steps: BLOCK
        // independent chains of dependent divisions side by side in the instruction stream,
        // which one vector at a time leaves waiting on each division in turn.
        while i + BLOCK * V::LANES <= self.hi {
            // Loops, not closures: a closure would be a function of its own, compiled
            // without the level's target features.
            let mut next = [[s.splat(0.0); 4]; BLOCK];
            for (b, next) in next.iter_mut().enumerate() {
                // SAFETY: envs `i..i + BLOCK LANES` are below `n`.
                *next = unsafe { advance_vector(s, f, i + b * V::LANES) };
            }
            for (b, next) in next.into_iter().enumerate() {
                // SAFETY: as above.
                invalid |= unsafe { finish_vector(s, f, i + b * V::LANES, next, &mut pending) };
                // SAFETY: pending envs are below `n`.
                unsafe { pending.make_room(s, f) };
            }
            i += BLOCK * V::LANES;
        }
        while i < self.hi {
            // SAFETY: every buffer holds `n` lanes plus a vector of padding, and `i < n`.
            invalid |= unsafe { finish_vector(s, f, i, advance_vector(s, f, i), &mut pending) };
            // SAFETY: pending envs are below `n`.
            unsafe { pending.make_room(s, f) };
            i += V::LANES;
        }
        // SAFETY: as above.
        unsafe { draw_pending(s, f, &mut pending) };
        invalid != 0
    }
}

/// `[x, x_dot, theta, theta_dot]` of `V::LANES` envs.
type Rows<V> = [<V as Simd>::F; 4];

/// One Euler step in registers, in the operation order of `cartpole_physics_scalar`.
#[inline(always)]
fn physics<V: Simd>(
    s: V,
    p: &Physics,
    action: V::U,
    [x, x_dot, theta, theta_dot]: Rows<V>,
) -> Rows<V> {
    let push = s.eq_u(action, s.splat_u(1));
    let force = s.select(push, s.splat(p.force_mag), s.splat(-p.force_mag));
    let (sintheta, costheta) = math::sin_cos(s, theta);
    let spin = s.mul(
        s.mul(s.mul(s.splat(p.polemass_length), theta_dot), theta_dot),
        sintheta,
    );
    let temp = s.div(s.add(force, spin), s.splat(p.total_mass));
    let lever = s.div(
        s.mul(s.mul(s.splat(p.masspole), costheta), costheta),
        s.splat(p.total_mass),
    );
    let thetaacc = s.div(
        s.sub(s.mul(s.splat(p.gravity), sintheta), s.mul(costheta, temp)),
        s.mul(s.splat(p.length), s.sub(s.splat(4.0 / 3.0), lever)),
    );
    let xacc = s.sub(
        temp,
        s.div(
            s.mul(s.mul(s.splat(p.polemass_length), thetaacc), costheta),
            s.splat(p.total_mass),
        ),
    );
    let tau = s.splat(p.tau);
    [
        s.add(x, s.mul(tau, x_dot)),
        s.add(x_dot, s.mul(tau, xacc)),
        s.add(theta, s.mul(tau, theta_dot)),
        s.add(theta_dot, s.mul(tau, thetaacc)),
    ]
}

/// Writes the `[n, 4]` rows of the valid envs among `i..i + LANES`: a transpose in
/// registers for a whole vector, lane by lane for the last, partial one.
///
/// # Safety
/// `out` must hold `4 n` floats.
#[inline(always)]
unsafe fn write_rows<V: Simd>(s: V, out: *mut f32, n: usize, i: usize, rows: &Rows<V>) {
    if i + V::LANES <= n {
        // SAFETY: envs `i..i + LANES` are valid, so their rows lie in `out`.
        unsafe { s.store_rows4(out.add(4 * i), *rows) };
        return;
    }
    let mut columns = [[0.0f32; 16]; 4];
    for (column, row) in columns.iter_mut().zip(rows) {
        // SAFETY: 16 floats hold any level's vector.
        unsafe { s.store(column.as_mut_ptr(), *row) };
    }
    for k in 0..n - i {
        for (c, column) in columns.iter().enumerate() {
            // SAFETY: env `i + k < n`, so its row lies in `out`.
            unsafe { *out.add(4 * (i + k) + c) = column[k] };
        }
    }
}

/// The physics of envs `i..i + LANES` from their stored state and actions.
///
/// # Safety
/// Every buffer of `f` must hold `n` lanes plus one vector of padding, and `i < n`.
#[inline(always)]
unsafe fn advance_vector<V: Simd>(s: V, f: &Frame, i: usize) -> Rows<V> {
    unsafe {
        let action = s.load_u(f.actions.add(i));
        let state: Rows<V> = std::array::from_fn(|c| s.load(f.state[c].add(i)));
        physics(s, &f.physics, action, state)
    }
}

/// The rest of the step of envs `i..i + LANES` given their physics `next`: flags, stores,
/// and envs that reset queued on `pending` (their state and observation are drawn later,
/// by [`draw_pending`]); returns the mask of invalid actions.
///
/// # Safety
/// As [`advance_vector`]; `pending` must have room for `LANES` envs.
#[inline(always)]
unsafe fn finish_vector<V: Simd>(
    s: V,
    f: &Frame,
    i: usize,
    next: Rows<V>,
    pending: &mut PendingResets,
) -> u64 {
    unsafe {
        let action = s.load_u(f.actions.add(i));
        let invalid = s.mask_bits(s.lt_u(s.splat_u(1), action));
        let mut state: Rows<V> = std::array::from_fn(|c| s.load(f.state[c].add(i)));
        let mut steps = s.load_u(f.elapsed.add(i));
        let mut count = s.load_u(f.resets.add(i));
        let p = &f.physics;
        let zero_u = s.splat_u(0);
        let one_u = s.splat_u(1);

        let stepped = s.add_u(steps, one_u);
        let (xt, tt) = (s.splat(p.x_threshold), s.splat(p.theta_threshold));
        let out_of_bounds = s.mask_or(
            s.mask_or(s.lt(next[0], s.splat(-p.x_threshold)), s.lt(xt, next[0])),
            s.mask_or(
                s.lt(next[2], s.splat(-p.theta_threshold)),
                s.lt(tt, next[2]),
            ),
        );
        let timed_out = s.mask_not(s.lt_u(stepped, s.splat_u(f.max_steps)));
        let mut term = s.select_u(out_of_bounds, one_u, zero_u);
        let mut trunc = s.select_u(timed_out, one_u, zero_u);
        let mut reward = s.splat(1.0);

        if f.mode == AutoresetMode::NextStep {
            let reset_now = s.mask_not(s.eq_u(s.load_u(f.needs_reset.add(i)), zero_u));
            state = std::array::from_fn(|c| s.select(reset_now, state[c], next[c]));
            steps = s.select_u(reset_now, zero_u, stepped);
            term = s.select_u(reset_now, zero_u, term);
            trunc = s.select_u(reset_now, zero_u, trunc);
            reward = s.select(reset_now, s.splat(0.0), reward);
            count = s.select_u(reset_now, s.add_u(count, one_u), count);
            pending.push(s.mask_bits(reset_now), i, f.n);
            s.store_u(f.needs_reset.add(i), s.or_u(term, trunc));
        } else {
            state = next;
            steps = stepped;
        }
        if f.mode == AutoresetMode::SameStep {
            write_rows(s, f.final_obs, f.n, i, &state);
            let done = s.mask_not(s.eq_u(s.or_u(term, trunc), zero_u));
            count = s.select_u(done, s.add_u(count, one_u), count);
            steps = s.select_u(done, zero_u, steps);
            pending.push(s.mask_bits(done), i, f.n);
        }
        for (c, column) in state.iter().enumerate() {
            s.store(f.state[c].add(i), *column);
        }
        s.store_u(f.elapsed.add(i), steps);
        s.store_u(f.resets.add(i), count);
        write_rows(s, f.obs, f.n, i, &state);
        s.store(f.reward.add(i), reward);
        s.store_u(f.terminated.add(i), term);
        s.store_u(f.truncated.add(i), trunc);
        invalid
    }
}

/// The native hand-written CartPole engine and its host buffers.
pub struct NativeEngine {
    options: CpuOptions,
    ledger: Arc<LaunchLedger>,
    config: CartPoleConfig,
    n: usize,
    state: [CpuBuffer; 4],
    elapsed: CpuBuffer,
    resets: CpuBuffer,
    needs_reset: CpuBuffer,
    obs: CpuBuffer,
    reward: CpuBuffer,
    terminated: CpuBuffer,
    truncated: CpuBuffer,
    final_obs: CpuBuffer,
    invalid_action: CpuBuffer,
}

impl NativeEngine {
    /// Zeroed buffers for `n` envs.
    pub fn new(cpu: &Cpu, n: usize, config: &CartPoleConfig, ledger: Arc<LaunchLedger>) -> Self {
        let final_obs = if config.autoreset == AutoresetMode::SameStep {
            4 * n
        } else {
            4
        };
        Self {
            options: cpu.options().clone(),
            ledger,
            config: *config,
            n,
            state: std::array::from_fn(|_| CpuBuffer::zeroed(n)),
            elapsed: CpuBuffer::zeroed(n),
            resets: CpuBuffer::zeroed(n),
            needs_reset: CpuBuffer::zeroed(n),
            obs: CpuBuffer::zeroed(4 * n),
            reward: CpuBuffer::zeroed(n),
            terminated: CpuBuffer::zeroed(n),
            truncated: CpuBuffer::zeroed(n),
            final_obs: CpuBuffer::zeroed(final_obs),
            invalid_action: CpuBuffer::zeroed(1),
        }
    }

    fn record(&self, kernel: &'static str, (read, written): (u64, u64)) -> KernelLaunch<'static> {
        let n = self.n as u64;
        KernelLaunch {
            kernel,
            elements: n,
            bytes_read: read * n,
            bytes_written: written * n,
        }
    }

    /// Every buffer the step writes: none may be the caller's action buffer.
    fn written(&self) -> impl Iterator<Item = &CpuBuffer> {
        self.state.iter().chain([
            &self.elapsed,
            &self.resets,
            &self.needs_reset,
            &self.obs,
            &self.reward,
            &self.terminated,
            &self.truncated,
            &self.final_obs,
        ])
    }

    /// Runs the step over every env, split over threads when large enough.
    fn run(&self, actions: &CpuBuffer, seed: u64) -> bool {
        let mut guards: Vec<_> = self.written().map(|b| b.lock()).collect();
        let action_guard = actions.lock();
        let mut ptr = |k: usize| guards[k].as_mut_ptr();
        let frame = Frame {
            actions: action_guard.as_ptr(),
            state: [ptr(0).cast(), ptr(1).cast(), ptr(2).cast(), ptr(3).cast()],
            elapsed: ptr(4),
            resets: ptr(5),
            needs_reset: ptr(6),
            obs: ptr(7).cast(),
            reward: ptr(8).cast(),
            terminated: ptr(9),
            truncated: ptr(10),
            final_obs: ptr(11).cast(),
            n: self.n,
            physics: Physics::of(&self.config),
            key: rng::seed_key(seed),
            max_steps: self.config.max_episode_steps,
            mode: self.config.autoreset,
        };
        let simd = self.options.simd;
        let lanes = |lo: usize, hi: usize| {
            simd.dispatch(Lanes { frame, lo, hi })
                .expect("the backend checked the SIMD level")
        };
        let threads = self.options.resolved_threads();
        // The planned kernels' threshold, so that both split at the same n.
        if threads <= 1 || self.n < self.options.parallel_min_lanes {
            lanes(0, self.n)
        } else {
            // One range per thread, in whole vectors of the widest level.
            let chunk = self.n.div_ceil(threads).next_multiple_of(16);
            let mut invalid = vec![false; self.n.div_ceil(chunk)];
            on_threads(&mut invalid, |c, invalid| {
                *invalid = lanes(c * chunk, ((c + 1) * chunk).min(self.n));
            });
            invalid.contains(&true)
        }
    }
}

impl StepEngine<Cpu> for NativeEngine {
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
        let record = self.record(RESET_KERNEL, reset_bytes_per_env());
        let key = rng::seed_key(seed);
        let bound = Physics::of(&self.config).reset_bound;
        let mut state: Vec<Vec<f32>> = vec![vec![0.0; self.n]; 4];
        let mut counts = self.resets.to_u32();
        self.ledger.launch(record, || {
            for (env, count) in counts.iter_mut().enumerate() {
                let index = if restart { 0 } else { *count };
                let [a, b] = rng::threefry2x32(key, [env as u32, 2 * index]);
                let [c, d] = rng::threefry2x32(key, [env as u32, 2 * index + 1]);
                for (column, bits) in state.iter_mut().zip([a, b, c, d]) {
                    column[env] = rng::symmetric_uniform(bits, bound);
                }
                *count = index + 1;
            }
        });
        let obs: Vec<f32> = (0..self.n)
            .flat_map(|env| state.iter().map(move |column| column[env]))
            .collect();
        self.state = std::array::from_fn(|c| CpuBuffer::from_f32(&state[c]));
        self.resets = CpuBuffer::from_u32(&counts);
        self.elapsed = CpuBuffer::zeroed(self.n);
        self.needs_reset = CpuBuffer::zeroed(self.n);
        self.obs = CpuBuffer::from_f32(&obs);
        Ok(())
    }

    fn step(&mut self, seed: u64, actions: &CpuBuffer) -> Result<(), EnvError> {
        if actions.len() != self.n {
            return Err(EnvError::WrongCount {
                what: "device actions",
                per_env: 1,
                expected: self.n,
                found: actions.len(),
            });
        }
        if self.written().any(|b| b.same(actions)) {
            return Err(EnvError::Unsupported(
                "the action buffer is one the step writes".into(),
            ));
        }
        let record = self.record(STEP_KERNEL, step_bytes_per_env(self.config.autoreset));
        let invalid = self.ledger.launch(record, || self.run(actions, seed));
        if invalid {
            self.invalid_action = CpuBuffer::from_u32(&[1]);
        }
        Ok(())
    }

    fn buffer(&self, which: StepBuffer) -> Option<&CpuBuffer> {
        Some(match which {
            StepBuffer::Obs => &self.obs,
            StepBuffer::Reward => &self.reward,
            StepBuffer::Terminated => &self.terminated,
            StepBuffer::Truncated => &self.truncated,
            StepBuffer::FinalObs => &self.final_obs,
        })
    }

    fn invalid_action_flag(&mut self) -> Option<&mut CpuBuffer> {
        Some(&mut self.invalid_action)
    }

    fn set_state(&mut self, columns: &[Vec<f32>]) -> Result<(), EnvError> {
        self.state = std::array::from_fn(|c| CpuBuffer::from_f32(&columns[c]));
        self.elapsed = CpuBuffer::zeroed(self.n);
        self.needs_reset = CpuBuffer::zeroed(self.n);
        Ok(())
    }

    fn state_columns(&self) -> Result<Vec<Vec<f32>>, EnvError> {
        Ok(self.state.iter().map(CpuBuffer::to_f32).collect())
    }

    fn elapsed(&self) -> Result<Vec<u32>, EnvError> {
        Ok(self.elapsed.to_u32())
    }
}

#[cfg(test)]
mod tests;
