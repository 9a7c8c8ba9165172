//! The f64 host reference of CartPole-v1: the oracle every device result is checked against.
//!
//! It follows gymnasium's `CartPoleEnv.step` line by line (Euler integrator), in `f64` as
//! gymnasium and envpool compute it. [`ReferenceVecEnv`] adds the vector-env episode logic
//! (autoreset modes, truncation) with the same reset draws as the device.

use crate::cartpole::{CartPoleConfig, CartPoleParams};
use crate::params::AutoresetMode;

/// The physical state of one cart-pole.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct CartPoleState {
    /// Cart position (m).
    pub x: f64,
    /// Cart velocity (m/s).
    pub x_dot: f64,
    /// Pole angle (rad, 0 is upright).
    pub theta: f64,
    /// Pole angular velocity (rad/s).
    pub theta_dot: f64,
}

impl CartPoleState {
    /// `[x, x_dot, theta, theta_dot]`.
    pub fn to_array(self) -> [f64; 4] {
        [self.x, self.x_dot, self.theta, self.theta_dot]
    }

    /// From `[x, x_dot, theta, theta_dot]`.
    pub fn from_array(values: [f64; 4]) -> Self {
        Self {
            x: values[0],
            x_dot: values[1],
            theta: values[2],
            theta_dot: values[3],
        }
    }

    /// The observation gymnasium returns: the state cast to `f32`.
    pub fn observation(self) -> [f32; 4] {
        self.to_array().map(|value| value as f32)
    }
}

/// One Euler step of the dynamics under `action` (0 pushes left, anything else right, as
/// gymnasium's `force_mag if action == 1 else -force_mag` for valid actions).
pub fn step_physics(state: CartPoleState, action: u32, params: &CartPoleParams) -> CartPoleState {
    let force = if action == 1 {
        params.force_mag
    } else {
        -params.force_mag
    };
    let costheta = state.theta.cos();
    let sintheta = state.theta.sin();
    let temp = (force + params.polemass_length() * state.theta_dot * state.theta_dot * sintheta)
        / params.total_mass();
    let thetaacc = (params.gravity * sintheta - costheta * temp)
        / (params.length
            * (4.0 / 3.0 - params.masspole * costheta * costheta / params.total_mass()));
    let xacc = temp - params.polemass_length() * thetaacc * costheta / params.total_mass();
    CartPoleState {
        x: state.x + params.tau * state.x_dot,
        x_dot: state.x_dot + params.tau * xacc,
        theta: state.theta + params.tau * state.theta_dot,
        theta_dot: state.theta_dot + params.tau * thetaacc,
    }
}

/// Whether a state lies outside the cart or pole bounds.
pub fn is_terminated(state: &CartPoleState, params: &CartPoleParams) -> bool {
    state.x < -params.x_threshold
        || state.x > params.x_threshold
        || state.theta < -params.theta_threshold_radians
        || state.theta > params.theta_threshold_radians
}

/// The reset state of env `env` of a batch seeded `seed` for its reset number
/// `reset_index`.
///
/// Reset number `r` reads Threefry blocks `(0, 2r)` and `(0, 2r + 1)` under the env's own
/// key, `seed + env` (gymnasium's `reset(seed=seed)` seeds env `env` so); the four words
/// become `x, x_dot, theta, theta_dot`, each uniform in `[-reset_bound, reset_bound)` as
/// `f32` (what the device stores), widened to `f64`.
pub fn reset_state(
    seed: u64,
    env: u32,
    reset_index: u32,
    params: &CartPoleParams,
) -> CartPoleState {
    let state = crate::graph::reference_reset(params, seed, env, reset_index);
    CartPoleState::from_array([state[0], state[1], state[2], state[3]])
}

/// What one env returns from one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReferenceStep {
    /// Observation after the step (the reset observation when the env was reset).
    pub obs: [f32; 4],
    /// 1 for every physics step, 0 for a `NextStep` reset step.
    pub reward: f32,
    /// The pole fell or the cart left the track.
    pub terminated: bool,
    /// The episode reached `max_episode_steps`.
    pub truncated: bool,
    /// `SameStep` only: the observation the finished episode ended on.
    pub final_obs: Option<[f32; 4]>,
}

/// A host vector env in `f64` with the device env's episode semantics.
#[derive(Debug, Clone)]
pub struct ReferenceVecEnv {
    config: CartPoleConfig,
    seed: u64,
    states: Vec<CartPoleState>,
    elapsed: Vec<u32>,
    resets: Vec<u32>,
    needs_reset: Vec<bool>,
}

impl ReferenceVecEnv {
    /// `num_envs` envs reset from `seed` (reset number 0 of each).
    pub fn new(num_envs: usize, config: CartPoleConfig, seed: u64) -> Self {
        let states = (0..num_envs as u32)
            .map(|env| reset_state(seed, env, 0, &config.params))
            .collect();
        Self {
            config,
            seed,
            states,
            elapsed: vec![0; num_envs],
            resets: vec![1; num_envs],
            needs_reset: vec![false; num_envs],
        }
    }

    /// Current states.
    pub fn states(&self) -> &[CartPoleState] {
        &self.states
    }

    /// Overwrites the states; episode step counters restart at 0.
    pub fn set_states(&mut self, states: &[CartPoleState]) {
        self.states = states.to_vec();
        self.elapsed.fill(0);
        self.needs_reset.fill(false);
    }

    /// Overwrites only the physical states, keeping episode counters and pending resets
    /// (used to re-synchronise with a device env every step, so `f32` rounding never
    /// compounds through the chaotic dynamics).
    pub fn overwrite_physics(&mut self, states: &[CartPoleState]) {
        self.states = states.to_vec();
    }

    fn reset_env(&mut self, env: usize) {
        self.states[env] =
            reset_state(self.seed, env as u32, self.resets[env], &self.config.params);
        self.resets[env] += 1;
        self.elapsed[env] = 0;
    }

    /// Steps every env with its action.
    pub fn step(&mut self, actions: &[u32]) -> Vec<ReferenceStep> {
        (0..self.states.len())
            .map(|env| self.step_env(env, actions[env]))
            .collect()
    }

    fn step_env(&mut self, env: usize, action: u32) -> ReferenceStep {
        let params = self.config.params;
        if self.config.autoreset == AutoresetMode::NextStep && self.needs_reset[env] {
            self.reset_env(env);
            self.needs_reset[env] = false;
            return ReferenceStep {
                obs: self.states[env].observation(),
                reward: 0.0,
                terminated: false,
                truncated: false,
                final_obs: None,
            };
        }
        self.states[env] = step_physics(self.states[env], action, &params);
        self.elapsed[env] += 1;
        let terminated = is_terminated(&self.states[env], &params);
        let truncated = self.elapsed[env] >= self.config.max_episode_steps;
        let done = terminated || truncated;
        let mut final_obs = None;
        match self.config.autoreset {
            AutoresetMode::NextStep => self.needs_reset[env] = done,
            AutoresetMode::SameStep if done => {
                final_obs = Some(self.states[env].observation());
                self.reset_env(env);
            }
            AutoresetMode::SameStep | AutoresetMode::Disabled => {}
        }
        ReferenceStep {
            obs: self.states[env].observation(),
            reward: 1.0,
            terminated,
            truncated,
            final_obs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_step_from_rest_matches_gymnasium() {
        // gymnasium 1.4's CartPole-v1 from the upright rest state, action 1 (push right):
        // `env.unwrapped.state = (0, 0, 0, 0); env.step(1)` gives these (Euler: x and theta
        // move by the old velocities, which are zero).
        let next = step_physics(CartPoleState::default(), 1, &CartPoleParams::default());
        assert_eq!((next.x, next.theta), (0.0, 0.0));
        assert!(
            (next.x_dot - 0.195_121_951_219_512_2).abs() < 1e-15,
            "{next:?}"
        );
        assert!(
            (next.theta_dot + 0.292_682_926_829_268_3).abs() < 1e-15,
            "{next:?}"
        );
        // Action 0 mirrors it.
        let left = step_physics(CartPoleState::default(), 0, &CartPoleParams::default());
        assert_eq!((left.x_dot, left.theta_dot), (-next.x_dot, -next.theta_dot));
    }

    #[test]
    fn termination_uses_strict_bounds() {
        let params = CartPoleParams::default();
        let at_bound = CartPoleState {
            x: 2.4,
            ..Default::default()
        };
        assert!(!is_terminated(&at_bound, &params));
        let past = CartPoleState {
            theta: -0.21,
            ..Default::default()
        };
        assert!(is_terminated(&past, &params));
    }

    #[test]
    fn resets_are_in_bounds_and_seeded() {
        let params = CartPoleParams::default();
        for env in 0..1000 {
            for value in reset_state(7, env, 3, &params).to_array() {
                assert!(
                    (-0.05f32 as f64..0.05f32 as f64).contains(&value),
                    "{value}"
                );
            }
        }
        assert_eq!(reset_state(1, 2, 3, &params), reset_state(1, 2, 3, &params));
        assert_ne!(reset_state(1, 2, 3, &params), reset_state(2, 2, 3, &params));
        assert_ne!(reset_state(1, 2, 3, &params), reset_state(1, 2, 4, &params));
    }

    #[test]
    fn next_step_resets_one_step_after_done_with_zero_reward() {
        let config = CartPoleConfig {
            max_episode_steps: 3,
            ..Default::default()
        };
        let mut env = ReferenceVecEnv::new(1, config, 0);
        let rewards: Vec<_> = (0..5).map(|_| env.step(&[1])[0]).collect();
        assert!(rewards[..2].iter().all(|s| s.reward == 1.0 && !s.truncated));
        assert!(rewards[2].truncated && rewards[2].reward == 1.0);
        assert_eq!(rewards[3].reward, 0.0);
        assert!(!rewards[3].truncated && !rewards[3].terminated);
        assert_eq!(
            rewards[3].obs,
            reset_state(0, 0, 1, &config.params).observation()
        );
        assert_eq!(rewards[4].reward, 1.0);
    }
}
