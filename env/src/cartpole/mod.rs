//! CartPole-v1, exactly as gymnasium defines it: params, the step as graph ops, the f64
//! reference, spaces and the hand-written kernels.
//!
//! - [`params`]: [`CartPoleParams`] (gymnasium's defaults, validated) and [`CartPoleConfig`].
//! - [`reference`](mod@reference): the f64 host reference, the oracle of every test.
//! - [`hand_written`]: the hand-written step of each runtime (the roof of every plan).

#[cfg(test)]
mod graph_tests;
pub mod hand_written;
pub mod params;
pub mod reference;
#[cfg(test)]
mod shared_module_tests;
#[cfg(feature = "cube")]
mod vector;

use cartfuse_fusion::graph::Scalar;
use cartfuse_fusion::graph::{DType, Graph, GraphBuilder, Var};

pub use params::{CartPoleConfig, CartPoleParams};
pub use reference::CartPoleState;
#[cfg(feature = "cube")]
pub use vector::CartPoleVecEnv;

use crate::environment::unknown_kwarg;
use crate::environment::{EpisodeOptions, GraphEnv, Transition};
use crate::error::EnvError;
use crate::graph::StateLayout;
use crate::gym_args::{Kwarg, KwargKind};
use crate::params::AutoresetMode;
use crate::spaces::{ActionSpace, BoxSpace};
use crate::step_engine::HandWritten;

/// CartPole-v1: an environment value is its physical params.
pub type CartPole = CartPoleParams;

/// The four state components, in observation order.
pub const STATE_INPUTS: [&str; 4] = ["x", "x_dot", "theta", "theta_dot"];

impl GraphEnv for CartPoleParams {
    const ID: &'static str = "CartPole-v1";
    const STATE: &'static [&'static str] = &STATE_INPUTS;
    const OBS_DIM: usize = 4;
    const RESET_DRAWS: usize = 4;
    const MAX_EPISODE_STEPS: u32 = 500;
    const RENDER_FPS: u32 = 50;
    const KWARGS: &'static [Kwarg] = &[Kwarg {
        name: "sutton_barto_reward",
        kind: KwargKind::Bool,
        default: 0.0,
    }];
    type Action = u32;

    fn set_kwarg(&mut self, name: &str, value: f64) -> Result<(), EnvError> {
        match name {
            "sutton_barto_reward" => self.sutton_barto_reward = value != 0.0,
            _ => return Err(unknown_kwarg::<Self>(name)),
        }
        Ok(())
    }

    fn reset_bounds(&self) -> Vec<(f64, f64)> {
        vec![(-self.reset_bound, self.reset_bound); 4]
    }

    fn validate(&self) -> Result<(), EnvError> {
        CartPoleParams::validate(self)
    }

    /// gymnasium's `Box(-high, high)` with
    /// `high = [2 x_threshold, inf, 2 theta_threshold, inf]` (gymnasium 1.x: `np.inf`).
    fn observation_space(&self) -> BoxSpace {
        let high = vec![
            (2.0 * self.x_threshold) as f32,
            f32::INFINITY,
            (2.0 * self.theta_threshold_radians) as f32,
            f32::INFINITY,
        ];
        BoxSpace {
            shape: vec![4],
            low: high.iter().map(|h| -h).collect(),
            high,
        }
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::discrete(2)
    }

    fn hand_written(&self, episode: &EpisodeOptions) -> Option<impl HandWritten> {
        Some(CartPoleConfig {
            params: *self,
            autoreset: episode.autoreset,
            max_episode_steps: episode.max_episode_steps,
        })
    }

    fn graph_params(&self) -> Vec<(&'static str, Scalar)> {
        [
            ("gravity", self.gravity),
            ("masspole", self.masspole),
            ("total_mass", self.total_mass()),
            ("length", self.length),
            ("polemass_length", self.polemass_length()),
            ("force_mag", self.force_mag),
            ("tau", self.tau),
            ("x_threshold", self.x_threshold),
            ("theta_threshold", self.theta_threshold_radians),
            ("reward_step", self.rewards().0),
            ("reward_terminal", self.rewards().1),
        ]
        .map(|(name, value)| (name, Scalar::F32(value as f32)))
        .to_vec()
    }

    /// gymnasium's Euler step: accelerations from the old state, then positions and
    /// velocities advanced with the old velocities.
    fn dynamics<'g>(&self, g: &'g GraphBuilder, s: &[Var<'g>], action: Var<'g>) -> Vec<Var<'g>> {
        let p = |name| g.param(name, DType::F32);
        let (gravity, masspole, total_mass, length) =
            (p("gravity"), p("masspole"), p("total_mass"), p("length"));
        let (polemass_length, force_mag, tau) = (p("polemass_length"), p("force_mag"), p("tau"));
        let [x, x_dot, theta, theta_dot] = [s[0], s[1], s[2], s[3]];
        let force = g.select(action.eq(g.u32(1)), force_mag, -force_mag);
        let costheta = theta.cos();
        let sintheta = theta.sin();
        let temp = (force + polemass_length * theta_dot * theta_dot * sintheta) / total_mass;
        let thetaacc = (gravity * sintheta - costheta * temp)
            / (length * (4.0 / 3.0 - masspole * costheta * costheta / total_mass));
        let xacc = temp - polemass_length * thetaacc * costheta / total_mass;
        vec![
            x + tau * x_dot,
            x_dot + tau * xacc,
            theta + tau * theta_dot,
            theta_dot + tau * thetaacc,
        ]
    }

    fn terminated<'g>(&self, g: &'g GraphBuilder, next: &[Var<'g>]) -> Var<'g> {
        let x_threshold = g.param("x_threshold", DType::F32);
        let theta_threshold = g.param("theta_threshold", DType::F32);
        let (x, theta) = (next[0], next[2]);
        x.lt(-x_threshold)
            .or(x.gt(x_threshold))
            .or(theta.lt(-theta_threshold))
            .or(theta.gt(theta_threshold))
    }

    fn reward<'g>(&self, g: &'g GraphBuilder, step: &Transition<'_, 'g>) -> Var<'g> {
        let p = |name| g.param(name, DType::F32);
        g.select(step.terminated, p("reward_terminal"), p("reward_step"))
    }

    fn observe<'g>(&self, _g: &'g GraphBuilder, state: &[Var<'g>]) -> Vec<Var<'g>> {
        state.to_vec()
    }

    fn reference_step(&self, state: &[f64], action: u32) -> (Vec<f64>, f64, bool) {
        let next = reference::step_physics(
            CartPoleState::from_array([state[0], state[1], state[2], state[3]]),
            action,
            self,
        );
        let terminated = reference::is_terminated(&next, self);
        let (step, terminal) = self.rewards();
        let reward = if terminated { terminal } else { step };
        (next.to_array().to_vec(), reward, terminated)
    }

    fn reference_observe(&self, state: &[f64]) -> Vec<f32> {
        state.iter().map(|v| *v as f32).collect()
    }
}

/// The CartPole-v1 step graph with gymnasium's params for `autoreset` in `layout`.
pub fn cartpole_step_graph(autoreset: AutoresetMode, layout: StateLayout) -> Graph {
    crate::graph::step_graph(&CartPoleParams::default(), autoreset, layout)
}

/// The runtime params of the CartPole graphs for `config`.
pub fn graph_params(config: &CartPoleConfig) -> Vec<(&'static str, Scalar)> {
    crate::graph::graph_params(&config.params, &config.episode())
}

impl CartPoleConfig {
    /// The episode options of this configuration.
    pub fn episode(&self) -> EpisodeOptions {
        EpisodeOptions {
            autoreset: self.autoreset,
            max_episode_steps: self.max_episode_steps,
        }
    }
}
