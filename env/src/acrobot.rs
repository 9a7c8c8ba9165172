//! Acrobot-v1, as gymnasium defines it (`gymnasium/envs/classic_control/acrobot.py`): two
//! links swung by a torque of -1, 0 or +1 on the joint between them, integrated over
//! `dt = 0.2` by one step of fourth-order Runge-Kutta (four evaluations of the "book"
//! dynamics); angles wrapped into `[-π, π]`, speeds bounded by `4π` and `9π`. Reward -1
//! per step until the free end rises one link length above the pivot; truncated at 500.
//!
//! The graph is the study's kind of long elementwise chain: four derivative evaluations,
//! each with three cosines and a sine, fused or not. Products of constants are folded on
//! the host, as XLA folds them; the f64 reference keeps gymnasium's expressions verbatim.

use std::f64::consts::PI;

use cartfuse_fusion::graph::Scalar;
use cartfuse_fusion::graph::{DType, GraphBuilder, Var};

use crate::environment::{GraphEnv, Transition};
use crate::error::EnvError;
use crate::params::{check_finite, check_positive, f32_graph_params};
use crate::spaces::{ActionSpace, BoxSpace};

/// State components, in the order of gymnasium's `env.unwrapped.state`.
pub const STATE: [&str; 4] = ["theta1", "theta2", "dtheta1", "dtheta2"];

/// Acrobot-v1's constants (gymnasium's class attributes; `g` is `_dsdt`'s 9.8).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Acrobot {
    /// Seconds per step (one Runge-Kutta step).
    pub dt: f64,
    /// Length of the first link (the second's does not enter the dynamics).
    pub link_length_1: f64,
    /// Mass of the first link.
    pub link_mass_1: f64,
    /// Mass of the second link.
    pub link_mass_2: f64,
    /// Position of the first link's centre of mass.
    pub link_com_pos_1: f64,
    /// Position of the second link's centre of mass.
    pub link_com_pos_2: f64,
    /// Moment of inertia of either link.
    pub link_moi: f64,
    /// Speed bound of the first joint.
    pub max_vel_1: f64,
    /// Speed bound of the second joint.
    pub max_vel_2: f64,
    /// Gravity.
    pub g: f64,
}

impl Default for Acrobot {
    fn default() -> Self {
        Self {
            dt: 0.2,
            link_length_1: 1.0,
            link_mass_1: 1.0,
            link_mass_2: 1.0,
            link_com_pos_1: 0.5,
            link_com_pos_2: 0.5,
            link_moi: 1.0,
            max_vel_1: 4.0 * PI,
            max_vel_2: 9.0 * PI,
            g: 9.8,
        }
    }
}

/// Reset: each state component uniform in `[-RESET_HALF_WIDTH, RESET_HALF_WIDTH)`.
const RESET_HALF_WIDTH: f64 = 0.1;
/// Torque of each discrete action (gymnasium's `AVAIL_TORQUE`).
const TORQUES: [f64; 3] = [-1.0, 0.0, 1.0];

impl Acrobot {
    /// Every param with its name (validated).
    fn named(&self) -> [(&'static str, f64); 10] {
        [
            ("dt", self.dt),
            ("link_length_1", self.link_length_1),
            ("link_mass_1", self.link_mass_1),
            ("link_mass_2", self.link_mass_2),
            ("link_com_pos_1", self.link_com_pos_1),
            ("link_com_pos_2", self.link_com_pos_2),
            ("link_moi", self.link_moi),
            ("max_vel_1", self.max_vel_1),
            ("max_vel_2", self.max_vel_2),
            ("g", self.g),
        ]
    }

    /// gymnasium's `_dsdt` ("book" dynamics): `(dθ1, dθ2, ddθ1, ddθ2)` under torque `a`.
    pub fn derivatives(&self, s: [f64; 4], a: f64) -> [f64; 4] {
        let (m1, m2) = (self.link_mass_1, self.link_mass_2);
        let (l1, lc1, lc2) = (self.link_length_1, self.link_com_pos_1, self.link_com_pos_2);
        let (i1, i2, g) = (self.link_moi, self.link_moi, self.g);
        let [theta1, theta2, dtheta1, dtheta2] = s;
        let d1 = m1 * lc1.powi(2)
            + m2 * (l1.powi(2) + lc2.powi(2) + 2.0 * l1 * lc2 * theta2.cos())
            + i1
            + i2;
        let d2 = m2 * (lc2.powi(2) + l1 * lc2 * theta2.cos()) + i2;
        let phi2 = m2 * lc2 * g * (theta1 + theta2 - PI / 2.0).cos();
        let phi1 = -m2 * l1 * lc2 * dtheta2.powi(2) * theta2.sin()
            - 2.0 * m2 * l1 * lc2 * dtheta2 * dtheta1 * theta2.sin()
            + (m1 * lc1 + m2 * l1) * g * (theta1 - PI / 2.0).cos()
            + phi2;
        let ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1.powi(2) * theta2.sin() - phi2)
            / (m2 * lc2.powi(2) + i2 - d2.powi(2) / d1);
        let ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
        [dtheta1, dtheta2, ddtheta1, ddtheta2]
    }
}

/// gymnasium's `wrap(x, -π, π)`.
pub fn wrap(mut x: f64) -> f64 {
    while x > PI {
        x -= 2.0 * PI;
    }
    while x < -PI {
        x += 2.0 * PI;
    }
    x
}

/// [`wrap`] as graph ops: two turns either way (one step moves an angle by at most
/// `dt (4π + 9π)` ≈ 8.2 rad at the speed bounds, under two turns).
fn wrap_graph<'g>(g: &'g GraphBuilder, mut x: Var<'g>) -> Var<'g> {
    let (pi, turn) = (std::f32::consts::PI, std::f32::consts::TAU);
    for _ in 0..2 {
        x = g.select(x.gt(g.f32(pi)), x - turn, x);
    }
    for _ in 0..2 {
        x = g.select(x.lt(g.f32(-pi)), x + turn, x);
    }
    x
}

/// [`Acrobot::derivatives`] as graph ops over the folded constants of
/// [`GraphEnv::graph_params`].
fn derivatives_graph<'g>(g: &'g GraphBuilder, s: &[Var<'g>], torque: Var<'g>) -> Vec<Var<'g>> {
    let p = |name| g.param(name, DType::F32);
    let (theta1, theta2, dtheta1, dtheta2) = (s[0], s[1], s[2], s[3]);
    let half_pi = std::f32::consts::FRAC_PI_2;
    let (cos2, sin2) = (theta2.cos(), theta2.sin());
    let coupling = p("coupling"); // m2 l1 lc2
    let d1 = p("d1_base") + coupling * 2.0 * cos2;
    let d2 = p("d2_base") + coupling * cos2;
    let phi2 = p("phi2_gain") * (theta1 + theta2 - half_pi).cos();
    let phi1 = -coupling * dtheta2.square() * sin2 - coupling * 2.0 * dtheta2 * dtheta1 * sin2
        + p("phi1_gain") * (theta1 - half_pi).cos()
        + phi2;
    let ddtheta2 = (torque + d2 / d1 * phi1 - coupling * dtheta1.square() * sin2 - phi2)
        / (p("d2_base") - d2.square() / d1);
    let ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    vec![dtheta1, dtheta2, ddtheta1, ddtheta2]
}

/// `state + scale * slope`, componentwise.
fn euler<'g>(state: &[Var<'g>], slope: &[Var<'g>], scale: Var<'g>) -> Vec<Var<'g>> {
    state
        .iter()
        .zip(slope)
        .map(|(s, k)| *s + scale * *k)
        .collect()
}

impl GraphEnv for Acrobot {
    const ID: &'static str = "Acrobot-v1";
    const STATE: &'static [&'static str] = &STATE;
    const OBS_DIM: usize = 6;
    const RESET_DRAWS: usize = 4;
    const MAX_EPISODE_STEPS: u32 = 500;
    const RENDER_FPS: u32 = 15;
    type Action = u32;

    fn reset_bounds(&self) -> Vec<(f64, f64)> {
        vec![(-RESET_HALF_WIDTH, RESET_HALF_WIDTH); 4]
    }

    fn validate(&self) -> Result<(), EnvError> {
        check_finite(&self.named())?;
        for (name, value) in [
            ("dt", self.dt),
            ("link_mass_2", self.link_mass_2),
            ("link_moi", self.link_moi),
            ("max_vel_1", self.max_vel_1),
            ("max_vel_2", self.max_vel_2),
        ] {
            check_positive(name, value)?;
        }
        Ok(())
    }

    fn observation_space(&self) -> BoxSpace {
        let high = vec![
            1.0,
            1.0,
            1.0,
            1.0,
            self.max_vel_1 as f32,
            self.max_vel_2 as f32,
        ];
        BoxSpace {
            shape: vec![6],
            low: high.iter().map(|h| -h).collect(),
            high,
        }
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::discrete(3)
    }

    fn graph_params(&self) -> Vec<(&'static str, Scalar)> {
        let (m1, m2) = (self.link_mass_1, self.link_mass_2);
        let (l1, lc1, lc2) = (self.link_length_1, self.link_com_pos_1, self.link_com_pos_2);
        let moi = self.link_moi;
        f32_graph_params(&[
            ("dt", self.dt),
            ("max_vel_1", self.max_vel_1),
            ("max_vel_2", self.max_vel_2),
            ("coupling", m2 * l1 * lc2),
            (
                "d1_base",
                m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2) + 2.0 * moi,
            ),
            ("d2_base", m2 * lc2 * lc2 + moi),
            ("phi1_gain", (m1 * lc1 + m2 * l1) * self.g),
            ("phi2_gain", m2 * lc2 * self.g),
        ])
    }

    fn dynamics<'g>(&self, g: &'g GraphBuilder, s: &[Var<'g>], action: Var<'g>) -> Vec<Var<'g>> {
        let p = |name| g.param(name, DType::F32);
        let torque = action.cast(DType::F32) - 1.0;
        let dt = p("dt");
        let half = dt * 0.5;
        let k1 = derivatives_graph(g, s, torque);
        let k2 = derivatives_graph(g, &euler(s, &k1, half), torque);
        let k3 = derivatives_graph(g, &euler(s, &k2, half), torque);
        let k4 = derivatives_graph(g, &euler(s, &k3, dt), torque);
        let sixth = dt * (1.0 / 6.0);
        let next: Vec<Var<'g>> = (0..4)
            .map(|i| s[i] + sixth * (k1[i] + k2[i] * 2.0 + k3[i] * 2.0 + k4[i]))
            .collect();
        let (max1, max2) = (p("max_vel_1"), p("max_vel_2"));
        vec![
            wrap_graph(g, next[0]),
            wrap_graph(g, next[1]),
            next[2].max(-max1).min(max1),
            next[3].max(-max2).min(max2),
        ]
    }

    fn terminated<'g>(&self, g: &'g GraphBuilder, next: &[Var<'g>]) -> Var<'g> {
        (-next[0].cos() - (next[1] + next[0]).cos()).gt(g.f32(1.0))
    }

    fn reward<'g>(&self, g: &'g GraphBuilder, step: &Transition<'_, 'g>) -> Var<'g> {
        g.select(step.terminated, g.f32(0.0), g.f32(-1.0))
    }

    fn observe<'g>(&self, _g: &'g GraphBuilder, s: &[Var<'g>]) -> Vec<Var<'g>> {
        vec![s[0].cos(), s[0].sin(), s[1].cos(), s[1].sin(), s[2], s[3]]
    }

    fn reference_step(&self, state: &[f64], action: u32) -> (Vec<f64>, f64, bool) {
        let a = TORQUES[action as usize];
        let s = [state[0], state[1], state[2], state[3]];
        let (dt, dt2) = (self.dt, self.dt / 2.0);
        let shifted = |k: [f64; 4], h: f64| std::array::from_fn(|i| s[i] + h * k[i]);
        let k1 = self.derivatives(s, a);
        let k2 = self.derivatives(shifted(k1, dt2), a);
        let k3 = self.derivatives(shifted(k2, dt2), a);
        let k4 = self.derivatives(shifted(k3, dt), a);
        let ns: [f64; 4] =
            std::array::from_fn(|i| s[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]));
        let next = vec![
            wrap(ns[0]),
            wrap(ns[1]),
            ns[2].clamp(-self.max_vel_1, self.max_vel_1),
            ns[3].clamp(-self.max_vel_2, self.max_vel_2),
        ];
        let terminated = -next[0].cos() - (next[1] + next[0]).cos() > 1.0;
        (next, if terminated { 0.0 } else { -1.0 }, terminated)
    }

    fn reference_observe(&self, s: &[f64]) -> Vec<f32> {
        [s[0].cos(), s[0].sin(), s[1].cos(), s[1].sin(), s[2], s[3]]
            .map(|v| v as f32)
            .to_vec()
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::conformance;

    /// Random states over the whole box, plus fast spins that wrap.
    fn states(count: usize) -> Vec<Vec<f64>> {
        let mut rng = StdRng::seed_from_u64(11);
        let mut states = vec![vec![3.1, -3.1, 12.0, 28.0], vec![-3.1, 3.1, -12.0, -28.0]];
        // The two fast spins above wrap; the rest are ordinary swings.
        while states.len() < count {
            let theta1: f32 = rng.random_range(-3.1..3.1);
            let theta2: f32 = rng.random_range(-3.1..3.1);
            // Half the speed bounds: at the bounds one f32 RK4 step is ill-conditioned (the
            // second link turns 5 rad a step) and loses up to 4e-4 against f64.
            let dtheta1: f32 = rng.random_range(-6.0..6.0);
            let dtheta2: f32 = rng.random_range(-14.0..14.0);
            states.push([theta1, theta2, dtheta1, dtheta2].map(f64::from).to_vec());
        }
        states
    }

    #[test]
    fn every_plan_matches_the_f64_reference_on_the_cpu() {
        let env = Acrobot::default();
        let n = 2000;
        let actions = env.pattern_actions(n);
        // One f32 Runge-Kutta step loses more than CartPole's explicit Euler step: its worst
        // error over these states is printed (2.7e-6); gymnasium's trajectories agree within 1e-5
        // (tests/gymnasium.rs).
        let worst = conformance::every_plan_matches_the_reference(&env, &states(n), &actions, 1e-5);
        println!("Acrobot-v1: worst f32 error against f64 over {n} states: {worst:.2e}");
    }

    #[test]
    fn wrap_is_gymnasiums_loop() {
        assert_eq!(wrap(PI), PI);
        assert!((wrap(PI + 0.5) - (0.5 - PI)).abs() < 1e-12);
        assert!((wrap(-PI - 0.5) - (PI - 0.5)).abs() < 1e-12);
        assert!((wrap(5.0 * PI + 0.1) - (PI + 0.1 - 2.0 * PI)).abs() < 1e-12);
    }

    #[test]
    fn resets_draw_inside_gymnasiums_range_and_match_the_host_draws() {
        for state in conformance::resets_match_the_host_draws(&Acrobot::default(), 1000, 6) {
            assert!(state.iter().all(|v| v.abs() <= 0.1), "{state:?}");
        }
    }

    #[test]
    fn bad_params_name_the_field() {
        let env = Acrobot {
            link_moi: -1.0,
            ..Acrobot::default()
        };
        assert!(matches!(
            env.validate(),
            Err(EnvError::InvalidParam {
                name: "link_moi",
                ..
            })
        ));
    }
}
