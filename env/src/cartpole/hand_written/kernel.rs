//! The hand-written CartPole-v1 step: one `#[cube]` kernel doing the whole step for all envs.
//!
//! One thread per env. The kernel reads the action and the structure-of-arrays state,
//! integrates one Euler step, decides termination and truncation, writes the reward,
//! performs the autoreset of the chosen mode (drawing reset states from Threefry), and
//! packs the observation into `[n, 4]` row-major `f32`. Which autoreset code exists is a
//! comptime choice, so each mode compiles to its own branch-free-of-mode kernel.
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

use cartfuse_fusion::cube::math::sin_cos;
use cartfuse_fusion::cube::rng::{symmetric_uniform_cube, threefry2x32_cube};
use cubecl::prelude::*;

/// Physical constants as `f32` runtime scalars (changing them never recompiles).
#[derive(CubeType, CubeLaunch, Clone, Copy)]
pub struct PhysicsScalars {
    pub gravity: f32,
    pub masspole: f32,
    pub total_mass: f32,
    pub length: f32,
    pub polemass_length: f32,
    pub force_mag: f32,
    pub tau: f32,
    pub x_threshold: f32,
    pub theta_threshold: f32,
    pub reward_step: f32,
    pub reward_terminal: f32,
}

/// Where each drawn component of a reset lands: `center + half * draw`, `draw` uniform in
/// `[-1, 1)` (runtime scalars: other bounds never recompile).
#[derive(CubeType, CubeLaunch, Clone, Copy)]
pub struct ResetScales {
    pub center0: f32,
    pub center1: f32,
    pub center2: f32,
    pub center3: f32,
    pub half0: f32,
    pub half1: f32,
    pub half2: f32,
    pub half3: f32,
}

/// Draws reset number `reset_index` of the env whose draws are keyed `(key0, key1)` at
/// counter word `lane` into the four state registers.
#[cube]
pub fn cartpole_reset_scalar(
    key0: u32,
    key1: u32,
    lane: u32,
    reset_index: u32,
    scales: &ResetScales,
    x: &mut f32,
    x_dot: &mut f32,
    theta: &mut f32,
    theta_dot: &mut f32,
) {
    let mut a = 0u32;
    let mut b = 0u32;
    let mut c = 0u32;
    let mut d = 0u32;
    let first_draw = reset_index * 2u32;
    threefry2x32_cube(key0, key1, lane, first_draw, &mut a, &mut b);
    threefry2x32_cube(key0, key1, lane, first_draw + 1u32, &mut c, &mut d);
    // `symmetric_uniform_scale(1.0)`, 2^-23 (exactly, as `f32`): draws uniform in `[-1, 1)`.
    let unit = f32::new(1.192_092_9e-7);
    *x = scales.center0 + scales.half0 * symmetric_uniform_cube(a, unit);
    *x_dot = scales.center1 + scales.half1 * symmetric_uniform_cube(b, unit);
    *theta = scales.center2 + scales.half2 * symmetric_uniform_cube(c, unit);
    *theta_dot = scales.center3 + scales.half3 * symmetric_uniform_cube(d, unit);
}

/// One Euler step of the dynamics in registers (gymnasium's `CartPoleEnv.step`).
#[cube]
pub fn cartpole_physics_scalar(
    action: u32,
    p: &PhysicsScalars,
    x: &mut f32,
    x_dot: &mut f32,
    theta: &mut f32,
    theta_dot: &mut f32,
) {
    let mut force = -p.force_mag;
    if action == 1u32 {
        force = p.force_mag;
    }
    // The CPU runtime's sine and cosine (`cube::math`), not the driver's.
    let (sin, cos) = sin_cos::<Const<1>>(Vector::new(*theta));
    let sintheta = sin[0];
    let costheta = cos[0];
    let temp = (force + p.polemass_length * *theta_dot * *theta_dot * sintheta) / p.total_mass;
    let thetaacc = (p.gravity * sintheta - costheta * temp)
        / (p.length * (f32::new(4.0 / 3.0) - p.masspole * costheta * costheta / p.total_mass));
    let xacc = temp - p.polemass_length * thetaacc * costheta / p.total_mass;
    *x += p.tau * *x_dot;
    *x_dot += p.tau * xacc;
    *theta += p.tau * *theta_dot;
    *theta_dot += p.tau * thetaacc;
}

/// Writes one packed `[x, x_dot, theta, theta_dot]` row.
#[cube]
fn write_row(out: &mut Array<f32>, env: usize, x: f32, x_dot: f32, theta: f32, theta_dot: f32) {
    let base = env * 4;
    out[base] = x;
    out[base + 1] = x_dot;
    out[base + 2] = theta;
    out[base + 3] = theta_dot;
}

/// The whole CartPole-v1 step for every env.
///
/// # Arguments
///
/// * `actions` - one action per env; a value other than 0 or 1 sets `invalid_action[0]`.
/// * `x`, `x_dot`, `theta`, `theta_dot` - state, read and written in place.
/// * `elapsed` - steps taken in the current episode.
/// * `resets` - resets performed so far per env (the Threefry draw counter / 2).
/// * `needs_reset` - `NextStep` only: the previous step ended the episode.
/// * `obs` - `[n, 4]` observations after the step.
/// * `reward`, `terminated`, `truncated` - per-env step results (flags as 0/1).
/// * `final_obs` - `SameStep` only: `[n, 4]` last observation of episodes that ended.
/// * `key0`, `key1` - each env's Threefry key (read only where it resets).
/// * `physics`, `scales` (autoresets: the default bounds), `max_steps` - runtime scalars.
/// * `next_step`, `same_step` - comptime autoreset mode (neither: disabled).
#[cube(launch_unchecked)]
pub fn cartpole_step_array(
    actions: &Array<u32>,
    x: &mut Array<f32>,
    x_dot: &mut Array<f32>,
    theta: &mut Array<f32>,
    theta_dot: &mut Array<f32>,
    elapsed: &mut Array<u32>,
    resets: &mut Array<u32>,
    needs_reset: &mut Array<u32>,
    obs: &mut Array<f32>,
    reward: &mut Array<f32>,
    terminated: &mut Array<u32>,
    truncated: &mut Array<u32>,
    final_obs: &mut Array<f32>,
    invalid_action: &mut Array<u32>,
    key0: &Array<u32>,
    key1: &Array<u32>,
    physics: PhysicsScalars,
    scales: ResetScales,
    max_steps: u32,
    #[comptime] next_step: bool,
    #[comptime] same_step: bool,
) {
    let env = ABSOLUTE_POS;
    if env < x.len() {
        let action = actions[env];
        if action > 1u32 {
            invalid_action[0] = 1u32;
        }
        let mut sx = x[env];
        let mut sx_dot = x_dot[env];
        let mut stheta = theta[env];
        let mut stheta_dot = theta_dot[env];
        let mut steps = elapsed[env];
        let mut reset_count = resets[env];
        let mut step_reward = f32::new(0.0);
        let mut term = 0u32;
        let mut trunc = 0u32;

        let mut reset_now = false;
        if comptime!(next_step) {
            reset_now = needs_reset[env] != 0u32;
        }
        let lane = 0u32;
        if reset_now {
            cartpole_reset_scalar(
                key0[env],
                key1[env],
                lane,
                reset_count,
                &scales,
                &mut sx,
                &mut sx_dot,
                &mut stheta,
                &mut stheta_dot,
            );
            reset_count += 1u32;
            steps = 0u32;
        } else {
            cartpole_physics_scalar(
                action,
                &physics,
                &mut sx,
                &mut sx_dot,
                &mut stheta,
                &mut stheta_dot,
            );
            steps += 1u32;
            let out_of_bounds = sx < -physics.x_threshold
                || sx > physics.x_threshold
                || stheta < -physics.theta_threshold
                || stheta > physics.theta_threshold;
            step_reward = physics.reward_step;
            if out_of_bounds {
                step_reward = physics.reward_terminal;
            }
            term = u32::cast_from(out_of_bounds);
            trunc = u32::cast_from(steps >= max_steps);
        }
        let done = term + trunc > 0u32;
        if comptime!(next_step) {
            needs_reset[env] = u32::cast_from(done);
        }
        if comptime!(same_step) {
            write_row(final_obs, env, sx, sx_dot, stheta, stheta_dot);
            if done {
                cartpole_reset_scalar(
                    key0[env],
                    key1[env],
                    lane,
                    reset_count,
                    &scales,
                    &mut sx,
                    &mut sx_dot,
                    &mut stheta,
                    &mut stheta_dot,
                );
                reset_count += 1u32;
                steps = 0u32;
            }
        }
        x[env] = sx;
        x_dot[env] = sx_dot;
        theta[env] = stheta;
        theta_dot[env] = stheta_dot;
        elapsed[env] = steps;
        resets[env] = reset_count;
        write_row(obs, env, sx, sx_dot, stheta, stheta_dot);
        reward[env] = step_reward;
        terminated[env] = term;
        truncated[env] = trunc;
    }
}

/// Resets the envs whose `mask` is set: each draws reset number `resets[i]` (or 0 where
/// `restart` is set, after a new seed) under its own key, in the bounds `scales` places
/// the draws in, and its counters clear; every env writes its observation row (the others'
/// from their state as it is).
#[cube(launch_unchecked)]
pub fn cartpole_reset_array(
    x: &mut Array<f32>,
    x_dot: &mut Array<f32>,
    theta: &mut Array<f32>,
    theta_dot: &mut Array<f32>,
    elapsed: &mut Array<u32>,
    resets: &mut Array<u32>,
    needs_reset: &mut Array<u32>,
    obs: &mut Array<f32>,
    mask: &Array<u32>,
    restart: &Array<u32>,
    key0: &Array<u32>,
    key1: &Array<u32>,
    scales: ResetScales,
) {
    let env = ABSOLUTE_POS;
    if env < x.len() {
        let mut sx = x[env];
        let mut sx_dot = x_dot[env];
        let mut stheta = theta[env];
        let mut stheta_dot = theta_dot[env];
        if mask[env] != 0u32 {
            let mut reset_count = resets[env];
            if restart[env] != 0u32 {
                reset_count = 0u32;
            }
            cartpole_reset_scalar(
                key0[env],
                key1[env],
                0u32,
                reset_count,
                &scales,
                &mut sx,
                &mut sx_dot,
                &mut stheta,
                &mut stheta_dot,
            );
            x[env] = sx;
            x_dot[env] = sx_dot;
            theta[env] = stheta;
            theta_dot[env] = stheta_dot;
            elapsed[env] = 0u32;
            resets[env] = reset_count + 1u32;
            needs_reset[env] = 0u32;
        }
        write_row(obs, env, sx, sx_dot, stheta, stheta_dot);
    }
}
