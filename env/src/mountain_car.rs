//! MountainCar-v0, as gymnasium defines it (`gymnasium/envs/classic_control/mountain_car.py`):
//! a car in a valley pushed left, not at all, or right, rewarded -1 per step until it
//! reaches the flag at `goal_position`; truncated at 200 steps.
//!
//! The whole environment is this module plus its line in [`crate::registry`]: params, the
//! step as graph ops, spaces, the reset distribution and the f64 reference. It runs under
//! every fusion plan on every runtime through [`GraphEnv`]; it has no hand-written kernel.
//!
//! The valley itself ([`Valley`]: its params, the `goal_velocity` argument, the reset
//! distribution, the f64 physics and the same as graph ops) is defined here once and shared
//! with [MountainCarContinuous-v0](crate::mountain_car_continuous).

use cartfuse_fusion::graph::Scalar;
use cartfuse_fusion::graph::{DType, GraphBuilder, Var};

use crate::environment::unknown_kwarg;
use crate::environment::{GraphEnv, Transition};
use crate::error::EnvError;
use crate::gym_args::{Kwarg, KwargKind};
use crate::params::{check_finite, check_positive, f32_graph_params};
use crate::spaces::{ActionSpace, BoxSpace};

/// State components, in the order of gymnasium's `env.unwrapped.state`.
pub const STATE: [&str; 2] = ["position", "velocity"];

/// MountainCar-v0's constants (gymnasium's defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MountainCar {
    /// Acceleration per unit of action.
    pub force: f64,
    /// The valley, with its flag at 0.5.
    pub valley: Valley,
}

impl Default for MountainCar {
    fn default() -> Self {
        Self {
            force: 0.001,
            valley: Valley::with_goal(0.5),
        }
    }
}

impl MountainCar {
    /// The car's own params with their names (the valley's are [`Valley::named`]).
    fn named(&self) -> [(&'static str, f64); 1] {
        [("force", self.force)]
    }
}

/// Reset positions are uniform in gymnasium's `[-0.6, -0.4)` (its `low` and `high`
/// options), the velocity 0.
pub(crate) const RESET_POSITIONS: (f64, f64) = (-0.6, -0.4);

/// gymnasium's `goal_velocity` argument, of both mountain cars.
pub(crate) const GOAL_VELOCITY: Kwarg = Kwarg {
    name: "goal_velocity",
    kind: KwargKind::Float,
    default: 0.0,
};

/// The valley both mountain cars drive in: its params (gymnasium's defaults from
/// [`Valley::with_goal`]), read by the graphs under the field names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Valley {
    /// The valley's pull (`cos(3 position)` times this; a literal 0.0025 in gymnasium's
    /// continuous car).
    pub gravity: f64,
    /// Left wall: the position is clipped here and the velocity zeroed.
    pub min_position: f64,
    /// Right bound of the position.
    pub max_position: f64,
    /// Speed limit (both directions).
    pub max_speed: f64,
    /// The flag: the episode ends at or beyond it...
    pub goal_position: f64,
    /// ...moving at least this fast (gymnasium's `goal_velocity` argument).
    pub goal_velocity: f64,
}

impl Valley {
    /// gymnasium's valley with its flag at `goal_position` (0.5, or 0.45 for the continuous car).
    pub fn with_goal(goal_position: f64) -> Self {
        Self {
            gravity: 0.0025,
            min_position: -1.2,
            max_position: 0.6,
            max_speed: 0.07,
            goal_position,
            goal_velocity: GOAL_VELOCITY.default,
        }
    }

    /// Every param with its name (validated, and handed to the graphs as `f32`).
    pub(crate) fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("gravity", self.gravity),
            ("min_position", self.min_position),
            ("max_position", self.max_position),
            ("max_speed", self.max_speed),
            ("goal_position", self.goal_position),
            ("goal_velocity", self.goal_velocity),
        ]
    }

    /// Checks the params: finite, `max_speed > 0`, `max_position > min_position`.
    pub(crate) fn validate(&self) -> Result<(), EnvError> {
        check_finite(&self.named())?;
        check_positive("max_speed", self.max_speed)?;
        if self.max_position <= self.min_position {
            return Err(EnvError::InvalidParam {
                name: "max_position",
                value: self.max_position,
                expected: "a number above min_position",
            });
        }
        Ok(())
    }

    /// Sets the constructor argument `name` of the car `E` driving here: `goal_velocity`,
    /// the only one either car takes.
    pub(crate) fn set_kwarg<E: GraphEnv>(
        &mut self,
        name: &str,
        value: f64,
    ) -> Result<(), EnvError> {
        match name {
            "goal_velocity" => self.goal_velocity = value,
            _ => return Err(unknown_kwarg::<E>(name)),
        }
        Ok(())
    }

    /// The reset draw's bounds: the position only ([`RESET_POSITIONS`]).
    pub(crate) fn reset_bounds(&self) -> Vec<(f64, f64)> {
        vec![RESET_POSITIONS]
    }

    /// `velocity += push - gravity cos(3 position)` within the speed limit, then the
    /// position within the track; the car stops at the left wall.
    pub fn drive(&self, state: &[f64], push: f64) -> Vec<f64> {
        let (position, velocity) = (state[0], state[1]);
        let velocity = (velocity + (push - self.gravity * (3.0 * position).cos()))
            .clamp(-self.max_speed, self.max_speed);
        let position = (position + velocity).clamp(self.min_position, self.max_position);
        let at_wall = position == self.min_position && velocity < 0.0;
        vec![position, if at_wall { 0.0 } else { velocity }]
    }

    /// The observation box (the state itself): position and velocity bounds.
    pub fn observation_space(&self) -> BoxSpace {
        BoxSpace {
            shape: vec![2],
            low: vec![self.min_position as f32, -self.max_speed as f32],
            high: vec![self.max_position as f32, self.max_speed as f32],
        }
    }

    /// Whether the car is at the flag, fast enough.
    pub fn reached_goal(&self, state: &[f64]) -> bool {
        state[0] >= self.goal_position && state[1] >= self.goal_velocity
    }
}

/// [`Valley::drive`] as graph ops, reading the params `gravity`, `max_speed`,
/// `min_position` and `max_position`.
pub(crate) fn drive<'g>(g: &'g GraphBuilder, state: &[Var<'g>], push: Var<'g>) -> Vec<Var<'g>> {
    let p = |name| g.param(name, DType::F32);
    let (gravity, max_speed) = (p("gravity"), p("max_speed"));
    let (min_position, max_position) = (p("min_position"), p("max_position"));
    let (position, velocity) = (state[0], state[1]);
    let velocity = velocity + (push - gravity * (position * 3.0).cos());
    let velocity = velocity.max(-max_speed).min(max_speed);
    let position = (position + velocity).max(min_position).min(max_position);
    let at_wall = position.eq(min_position).and(velocity.lt(g.f32(0.0)));
    vec![position, g.select(at_wall, g.f32(0.0), velocity)]
}

/// A fresh car: at the drawn position, at rest.
pub(crate) fn reset<'g>(g: &'g GraphBuilder, drawn: &[Var<'g>]) -> Vec<Var<'g>> {
    vec![drawn[0], g.f32(0.0)]
}

/// [`reset`] in f64 from the same drawn position.
pub(crate) fn reference_reset(drawn: &[f32]) -> Vec<f64> {
    vec![f64::from(drawn[0]), 0.0]
}

/// [`Valley::reached_goal`] as graph ops (params `goal_position`, `goal_velocity`).
pub(crate) fn reached_goal<'g>(g: &'g GraphBuilder, state: &[Var<'g>]) -> Var<'g> {
    let goal_position = g.param("goal_position", DType::F32);
    let goal_velocity = g.param("goal_velocity", DType::F32);
    state[0].ge(goal_position).and(state[1].ge(goal_velocity))
}

impl GraphEnv for MountainCar {
    const ID: &'static str = "MountainCar-v0";
    const STATE: &'static [&'static str] = &STATE;
    const OBS_DIM: usize = 2;
    const RESET_DRAWS: usize = 1;
    const MAX_EPISODE_STEPS: u32 = 200;
    const RENDER_FPS: u32 = 30;
    const KWARGS: &'static [Kwarg] = &[GOAL_VELOCITY];
    type Action = u32;

    fn set_kwarg(&mut self, name: &str, value: f64) -> Result<(), EnvError> {
        self.valley.set_kwarg::<Self>(name, value)
    }

    fn reset_bounds(&self) -> Vec<(f64, f64)> {
        self.valley.reset_bounds()
    }

    fn validate(&self) -> Result<(), EnvError> {
        check_finite(&self.named())?;
        self.valley.validate()
    }

    fn observation_space(&self) -> BoxSpace {
        self.valley.observation_space()
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::discrete(3)
    }

    fn graph_params(&self) -> Vec<(&'static str, Scalar)> {
        f32_graph_params(&[&self.named()[..], &self.valley.named()].concat())
    }

    fn dynamics<'g>(&self, g: &'g GraphBuilder, s: &[Var<'g>], action: Var<'g>) -> Vec<Var<'g>> {
        let p = |name| g.param(name, DType::F32);
        let force = p("force");
        let push = g.select(
            action.eq(g.u32(0)),
            -force,
            g.select(action.eq(g.u32(2)), force, g.f32(0.0)),
        );
        drive(g, s, push)
    }

    fn terminated<'g>(&self, g: &'g GraphBuilder, next: &[Var<'g>]) -> Var<'g> {
        reached_goal(g, next)
    }

    fn reward<'g>(&self, g: &'g GraphBuilder, _step: &Transition<'_, 'g>) -> Var<'g> {
        g.f32(-1.0)
    }

    fn observe<'g>(&self, _g: &'g GraphBuilder, state: &[Var<'g>]) -> Vec<Var<'g>> {
        state.to_vec()
    }

    fn reset_state<'g>(&self, g: &'g GraphBuilder, drawn: &[Var<'g>]) -> Vec<Var<'g>> {
        reset(g, drawn)
    }

    fn reference_step(&self, state: &[f64], action: u32) -> (Vec<f64>, f64, bool) {
        let push = (f64::from(action) - 1.0) * self.force;
        let next = self.valley.drive(state, push);
        let terminated = self.valley.reached_goal(&next);
        (next, -1.0, terminated)
    }

    fn reference_reset(&self, drawn: &[f32]) -> Vec<f64> {
        reference_reset(drawn)
    }

    fn reference_observe(&self, state: &[f64]) -> Vec<f32> {
        state.iter().map(|v| *v as f32).collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::conformance;

    /// Random states over the valley's observation box, plus states at the left wall moving
    /// left and just before the flags (0.5 for `MountainCar`, 0.45 for `MountainCarContinuous`).
    pub(crate) fn valley_states(seed: u64, count: usize) -> Vec<Vec<f64>> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut states = vec![
            vec![-1.2, -0.05],
            vec![-1.19, -0.02],
            vec![0.49, 0.02],
            vec![0.44, 0.02],
        ];
        while states.len() < count {
            let position: f32 = rng.random_range(-1.2..0.6);
            let velocity: f32 = rng.random_range(-0.07..0.07);
            states.push(vec![f64::from(position), f64::from(velocity)]);
        }
        states
    }

    /// The names of `env`'s graph params, sorted.
    pub(crate) fn param_names<E: GraphEnv>(env: &E) -> Vec<&'static str> {
        let mut names: Vec<_> = env.graph_params().iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names
    }

    #[test]
    fn every_plan_matches_the_f64_reference_on_the_cpu() {
        let env = MountainCar::default();
        let n = 2000;
        let actions: Vec<u32> = (0..n).map(|i| env.pattern_action(i)).collect();
        conformance::every_plan_matches_the_reference(&env, &valley_states(3, n), &actions, 1e-6);
    }

    #[test]
    fn resets_draw_inside_gymnasiums_range_and_match_the_host_draws() {
        for state in conformance::resets_match_the_host_draws(&MountainCar::default(), 1000, 9) {
            assert!((-0.6..-0.4).contains(&state[0]), "{state:?}");
            assert_eq!(state[1], 0.0);
        }
    }

    #[test]
    fn bad_params_name_the_field() {
        let env = MountainCar {
            valley: Valley {
                max_speed: 0.0,
                ..Valley::with_goal(0.5)
            },
            ..MountainCar::default()
        };
        assert!(matches!(
            env.validate(),
            Err(EnvError::InvalidParam {
                name: "max_speed",
                ..
            })
        ));
        let env = MountainCar {
            force: f64::NAN,
            ..MountainCar::default()
        };
        assert!(matches!(
            env.validate(),
            Err(EnvError::InvalidParam { name: "force", .. })
        ));
    }

    #[test]
    fn the_graphs_read_the_params_under_gymnasiums_names() {
        let env = MountainCar::default();
        let names = [
            "force",
            "goal_position",
            "goal_velocity",
            "gravity",
            "max_position",
            "max_speed",
            "min_position",
        ];
        assert_eq!(param_names(&env), names);
        assert_eq!(env.valley.goal_position, 0.5);
    }

    #[test]
    fn goal_velocity_is_the_only_kwarg() {
        let mut env = MountainCar::default();
        env.set_kwarg("goal_velocity", 0.05).unwrap();
        assert_eq!(env.valley.goal_velocity, 0.05);
        assert!(matches!(
            env.set_kwarg("force", 1.0),
            Err(EnvError::UnknownKwarg {
                env: "MountainCar-v0",
                ..
            })
        ));
        assert_eq!(env.reset_bounds(), vec![RESET_POSITIONS]);
    }
}
