//! Pendulum-v1, as gymnasium defines it (`gymnasium/envs/classic_control/pendulum.py`): a
//! pendulum swung up by a torque clipped to `[-2, 2]`, observed as `(cos θ, sin θ, θ̇)`,
//! costing `angle_normalize(θ)² + 0.1 θ̇² + 0.001 u²` per step; it never terminates and is
//! truncated at 200 steps. θ itself is never wrapped (it grows as the pendulum spins);
//! only the cost normalizes it, with a floored remainder as Python's `%`.

use std::f64::consts::PI;

use cartfuse_fusion::graph::Scalar;
use cartfuse_fusion::graph::{DType, GraphBuilder, Var};

use crate::environment::unknown_kwarg;
use crate::environment::{GraphEnv, Transition};
use crate::error::EnvError;
use crate::gym_args::{Kwarg, KwargKind, ResetOptions};
use crate::params::{check_finite, check_positive, f32_graph_params};
use crate::spaces::{ActionSpace, BoxSpace};

/// State components, in the order of gymnasium's `env.unwrapped.state`.
pub const STATE: [&str; 2] = ["theta", "theta_dot"];

/// Pendulum-v1's constants (gymnasium's defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pendulum {
    /// Speed limit of θ̇.
    pub max_speed: f64,
    /// Torques are clipped to `[-max_torque, max_torque]`.
    pub max_torque: f64,
    /// Seconds per step.
    pub dt: f64,
    /// Gravity (gymnasium's `g` argument).
    pub g: f64,
    /// Mass.
    pub m: f64,
    /// Length.
    pub l: f64,
}

impl Default for Pendulum {
    fn default() -> Self {
        Self {
            max_speed: 8.0,
            max_torque: 2.0,
            dt: 0.05,
            g: 10.0,
            m: 1.0,
            l: 1.0,
        }
    }
}

/// Reset: θ uniform in `[-RESET_THETA, RESET_THETA)`, θ̇ in `[-RESET_SPEED, RESET_SPEED)`
/// (gymnasium's `DEFAULT_X = π`, `DEFAULT_Y = 1`, its `x_init` and `y_init` options).
const RESET_THETA: f64 = std::f64::consts::PI;
const RESET_SPEED: f64 = 1.0;

impl Pendulum {
    /// Every param with its name (validated).
    fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("max_speed", self.max_speed),
            ("max_torque", self.max_torque),
            ("dt", self.dt),
            ("g", self.g),
            ("m", self.m),
            ("l", self.l),
        ]
    }
}

/// gymnasium's `angle_normalize`: `((x + π) mod 2π) - π` with a floored remainder.
pub fn angle_normalize(x: f64) -> f64 {
    (x + PI).rem_euclid(2.0 * PI) - PI
}

/// `angle_normalize` as graph ops.
fn angle_normalize_graph<'g>(g: &'g GraphBuilder, x: Var<'g>) -> Var<'g> {
    let turn = g.f32(std::f32::consts::TAU);
    let shifted = x + std::f32::consts::PI;
    shifted - (shifted / turn).floor() * turn - std::f32::consts::PI
}

/// The action clipped to the torque limit, as the dynamics and the cost use it.
fn torque<'g>(g: &'g GraphBuilder, action: Var<'g>) -> Var<'g> {
    let max_torque = g.param("max_torque", DType::F32);
    action.max(-max_torque).min(max_torque)
}

impl GraphEnv for Pendulum {
    const ID: &'static str = "Pendulum-v1";
    const STATE: &'static [&'static str] = &STATE;
    const OBS_DIM: usize = 3;
    const RESET_DRAWS: usize = 2;
    const MAX_EPISODE_STEPS: u32 = 200;
    const RENDER_FPS: u32 = 30;
    const KWARGS: &'static [Kwarg] = &[Kwarg {
        name: "g",
        kind: KwargKind::Float,
        default: 10.0,
    }];
    const RESET_OPTIONS: ResetOptions = ResetOptions::Symmetric(&["x_init", "y_init"]);
    type Action = f32;

    fn set_kwarg(&mut self, name: &str, value: f64) -> Result<(), EnvError> {
        match name {
            "g" => self.g = value,
            _ => return Err(unknown_kwarg::<Self>(name)),
        }
        Ok(())
    }

    fn reset_bounds(&self) -> Vec<(f64, f64)> {
        vec![(-RESET_THETA, RESET_THETA), (-RESET_SPEED, RESET_SPEED)]
    }

    fn validate(&self) -> Result<(), EnvError> {
        check_finite(&self.named())?;
        for (name, value) in [
            ("max_speed", self.max_speed),
            ("max_torque", self.max_torque),
            ("dt", self.dt),
            ("m", self.m),
            ("l", self.l),
        ] {
            check_positive(name, value)?;
        }
        Ok(())
    }

    fn observation_space(&self) -> BoxSpace {
        let speed = self.max_speed as f32;
        BoxSpace {
            shape: vec![3],
            low: vec![-1.0, -1.0, -speed],
            high: vec![1.0, 1.0, speed],
        }
    }

    fn action_space(&self) -> ActionSpace {
        let torque = self.max_torque as f32;
        ActionSpace::Box(BoxSpace {
            shape: vec![1],
            low: vec![-torque],
            high: vec![torque],
        })
    }

    fn graph_params(&self) -> Vec<(&'static str, Scalar)> {
        let mut params = f32_graph_params(&[
            ("max_speed", self.max_speed),
            ("max_torque", self.max_torque),
            ("dt", self.dt),
        ]);
        // gymnasium's `3 g / (2 l)` and `3 / (m l²)`, folded on the host.
        params.extend(f32_graph_params(&[
            ("gravity_gain", 3.0 * self.g / (2.0 * self.l)),
            ("torque_gain", 3.0 / (self.m * self.l * self.l)),
        ]));
        params
    }

    fn dynamics<'g>(&self, g: &'g GraphBuilder, s: &[Var<'g>], action: Var<'g>) -> Vec<Var<'g>> {
        let p = |name| g.param(name, DType::F32);
        let (theta, speed) = (s[0], s[1]);
        let (dt, max_speed) = (p("dt"), p("max_speed"));
        let accel = p("gravity_gain") * theta.sin() + p("torque_gain") * torque(g, action);
        let speed = (speed + accel * dt).max(-max_speed).min(max_speed);
        vec![theta + speed * dt, speed]
    }

    fn terminated<'g>(&self, g: &'g GraphBuilder, _next: &[Var<'g>]) -> Var<'g> {
        g.bool(false)
    }

    fn reward<'g>(&self, g: &'g GraphBuilder, step: &Transition<'_, 'g>) -> Var<'g> {
        let (theta, speed) = (step.state[0], step.state[1]);
        let u = torque(g, step.action);
        let costs =
            angle_normalize_graph(g, theta).square() + speed.square() * 0.1 + u.square() * 0.001;
        -costs
    }

    fn observe<'g>(&self, _g: &'g GraphBuilder, state: &[Var<'g>]) -> Vec<Var<'g>> {
        vec![state[0].cos(), state[0].sin(), state[1]]
    }

    fn reference_step(&self, state: &[f64], action: f32) -> (Vec<f64>, f64, bool) {
        let (theta, speed) = (state[0], state[1]);
        let u = f64::from(action).clamp(-self.max_torque, self.max_torque);
        let costs = angle_normalize(theta).powi(2) + 0.1 * speed.powi(2) + 0.001 * u.powi(2);
        let accel =
            3.0 * self.g / (2.0 * self.l) * theta.sin() + 3.0 / (self.m * self.l.powi(2)) * u;
        let speed = (speed + accel * self.dt).clamp(-self.max_speed, self.max_speed);
        (vec![theta + speed * self.dt, speed], -costs, false)
    }

    fn reference_observe(&self, state: &[f64]) -> Vec<f32> {
        vec![
            state[0].cos() as f32,
            state[0].sin() as f32,
            state[1] as f32,
        ]
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::conformance;

    /// Random states over four turns either way and the whole speed range.
    fn states(count: usize) -> Vec<Vec<f64>> {
        let mut rng = StdRng::seed_from_u64(7);
        let mut states = vec![vec![0.0, 8.0], vec![3.1, -8.0], vec![-3.1, 0.0]];
        while states.len() < count {
            let theta: f32 = rng.random_range(-25.0..25.0);
            let speed: f32 = rng.random_range(-8.0..8.0);
            states.push(vec![f64::from(theta), f64::from(speed)]);
        }
        states
    }

    #[test]
    fn every_plan_matches_the_f64_reference_on_the_cpu() {
        let env = Pendulum::default();
        let n = 2000;
        let actions = env.pattern_actions(n);
        assert!(actions.iter().any(|a| a.abs() > 2.0) && actions.iter().any(|a| a.abs() < 2.0));
        conformance::every_plan_matches_the_reference(&env, &states(n), &actions, 1e-5);
    }

    #[test]
    fn angle_normalize_is_pythons_floored_remainder() {
        // Python: ((x + math.pi) % (2 * math.pi)) - math.pi
        let cases = [
            (0.0, 0.0),
            (PI, -PI),
            (-PI, -PI),
            (7.0, 7.0 - 2.0 * PI),
            (-7.0, -7.0 + 2.0 * PI),
        ];
        for (x, want) in cases {
            assert!(
                (angle_normalize(x) - want).abs() < 1e-12,
                "{x}: {}",
                angle_normalize(x)
            );
        }
    }

    #[test]
    fn resets_draw_inside_gymnasiums_range_and_match_the_host_draws() {
        for state in conformance::resets_match_the_host_draws(&Pendulum::default(), 1000, 2) {
            assert!(state[0].abs() <= PI && state[1].abs() <= 1.0, "{state:?}");
        }
    }

    #[test]
    fn bad_params_name_the_field() {
        let env = Pendulum {
            dt: 0.0,
            ..Pendulum::default()
        };
        assert!(matches!(
            env.validate(),
            Err(EnvError::InvalidParam { name: "dt", .. })
        ));
    }
}
