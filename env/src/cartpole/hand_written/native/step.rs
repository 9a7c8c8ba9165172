//! The native step of a range of envs: CartPole's physics in SIMD registers, in the exact
//! operation order of the `#[cube]` kernel, then flags, autoreset and stores (through a
//! [`Sink`](super::sink::Sink)), with resets queued and drawn together ([`super::resets`]).

use cartfuse_fusion::cpu::interp::math;
use cartfuse_fusion::cpu::interp::simd::{Simd, WithSimd};

use super::frame::{Frame, Rows};
use super::resets::{PendingResets, draw_pending};
use super::sink::{load_u32, store_f32};
use crate::cartpole::hand_written::Physics;
use crate::params::AutoresetMode;

/// Vectors whose physics is computed together (see [`Lanes::with_simd`]).
const BLOCK: usize = 4;

/// Envs `lo..hi` (`lo` a multiple of the vector width): returns whether an action was invalid.
pub(super) struct Lanes {
    pub frame: Frame,
    pub lo: usize,
    pub hi: usize,
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
            // SAFETY: the buffers are sized as `advance_vector` needs, and `i < n`.
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
    let mut packed = [0.0f32; 64];
    // SAFETY: 64 floats hold the rows of any level's vector; the rows of envs `i..n` lie in
    // `out`, and a fixed-length loop with a condition is not turned into a `memcpy` call.
    unsafe {
        s.store_rows4(packed.as_mut_ptr(), *rows);
        for (k, value) in packed.iter().enumerate().take(4 * V::LANES) {
            if k < 4 * (n - i) {
                *out.add(4 * i + k) = *value;
            }
        }
    }
}

/// The physics of envs `i..i + LANES` from their stored state and actions.
///
/// # Safety
/// The state and counters of `f` must hold `n` lanes plus one vector of padding, its
/// actions and outputs `n` entries, and `i < n`.
#[inline(always)]
unsafe fn advance_vector<V: Simd>(s: V, f: &Frame, i: usize) -> Rows<V> {
    unsafe {
        let action = load_u32(s, f.actions, f.n, i);
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
        let action = load_u32(s, f.actions, f.n, i);
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
        let mut reward = s.select(
            out_of_bounds,
            s.splat(p.reward_terminal),
            s.splat(p.reward_step),
        );

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
            write_rows(s, f.out.final_obs, f.n, i, &state);
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
        write_rows(s, f.out.obs, f.n, i, &state);
        store_f32(s, f.out.reward, f.n, i, reward);
        f.out.terminated.store(s, f.n, i, term);
        f.out.truncated.store(s, f.n, i, trunc);
        invalid
    }
}
