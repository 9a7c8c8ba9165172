//! MountainCarContinuous-v0, as gymnasium defines it
//! (`gymnasium/envs/classic_control/continuous_mountain_car.py`): the valley of
//! [MountainCar-v0](crate::mountain_car) driven by a continuous force in `[-1, 1]`
//! (clipped, as gymnasium clips it), rewarded 100 at the flag minus `0.1 action^2` per step
//! (the action as given, unclipped); truncated at 999 steps.
//!
//! gymnasium stores the state as `float32` after every step; cartfuse's state is `f32`
//! throughout, and the f64 reference keeps `f64`.

use cartfuse_fusion::graph::Scalar;
use cartfuse_fusion::graph::{DType, GraphBuilder, Var};

use crate::environment::unknown_kwarg;
use crate::environment::{GraphEnv, Transition};
use crate::error::EnvError;
use crate::gym_args::Kwarg;
use crate::mountain_car::{
    GOAL_VELOCITY, RESET_POSITIONS, Valley, drive, reached_goal, reference_reset, reset,
};
use crate::params::{check_finite, check_positive, f32_graph_params};
use crate::spaces::{ActionSpace, BoxSpace};

/// State components, in the order of gymnasium's `env.unwrapped.state`.
pub const STATE: [&str; 2] = ["position", "velocity"];

/// MountainCarContinuous-v0's constants (gymnasium's defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MountainCarContinuous {
    /// Actions are clipped to `[min_action, max_action]`.
    pub min_action: f64,
    /// See `min_action`.
    pub max_action: f64,
    /// Acceleration per unit of (clipped) action.
    pub power: f64,
    /// The valley's pull (`cos(3 position)` times this; a literal 0.0025 in gymnasium).
    pub gravity: f64,
    /// Left wall: the position is clipped here and the velocity zeroed.
    pub min_position: f64,
    /// Right bound of the position.
    pub max_position: f64,
    /// Speed limit (both directions).
    pub max_speed: f64,
    /// The flag: the episode ends at or beyond it...
    pub goal_position: f64,
    /// ...moving at least this fast.
    pub goal_velocity: f64,
    /// Reward for reaching the flag.
    pub goal_reward: f64,
    /// Each step costs this times the action squared.
    pub action_cost: f64,
}

impl Default for MountainCarContinuous {
    fn default() -> Self {
        Self {
            min_action: -1.0,
            max_action: 1.0,
            power: 0.0015,
            gravity: 0.0025,
            min_position: -1.2,
            max_position: 0.6,
            max_speed: 0.07,
            goal_position: 0.45,
            goal_velocity: 0.0,
            goal_reward: 100.0,
            action_cost: 0.1,
        }
    }
}

impl MountainCarContinuous {
    /// Every param with its name (validated, and handed to the graphs as `f32`).
    fn named(&self) -> [(&'static str, f64); 11] {
        [
            ("min_action", self.min_action),
            ("max_action", self.max_action),
            ("power", self.power),
            ("gravity", self.gravity),
            ("min_position", self.min_position),
            ("max_position", self.max_position),
            ("max_speed", self.max_speed),
            ("goal_position", self.goal_position),
            ("goal_velocity", self.goal_velocity),
            ("goal_reward", self.goal_reward),
            ("action_cost", self.action_cost),
        ]
    }

    /// The valley this car drives in.
    fn valley(&self) -> Valley {
        Valley {
            gravity: self.gravity,
            min_position: self.min_position,
            max_position: self.max_position,
            max_speed: self.max_speed,
            goal_position: self.goal_position,
            goal_velocity: self.goal_velocity,
        }
    }
}

impl GraphEnv for MountainCarContinuous {
    const ID: &'static str = "MountainCarContinuous-v0";
    const STATE: &'static [&'static str] = &STATE;
    const OBS_DIM: usize = 2;
    const RESET_DRAWS: usize = 1;
    const MAX_EPISODE_STEPS: u32 = 999;
    const RENDER_FPS: u32 = 30;
    const KWARGS: &'static [Kwarg] = &[GOAL_VELOCITY];
    type Action = f32;

    fn set_kwarg(&mut self, name: &str, value: f64) -> Result<(), EnvError> {
        match name {
            "goal_velocity" => self.goal_velocity = value,
            _ => return Err(unknown_kwarg::<Self>(name)),
        }
        Ok(())
    }

    fn reset_bounds(&self) -> Vec<(f64, f64)> {
        vec![RESET_POSITIONS]
    }

    fn validate(&self) -> Result<(), EnvError> {
        check_finite(&self.named())?;
        check_positive("max_speed", self.max_speed)?;
        let ordered = [
            ("max_position", self.max_position, self.min_position),
            ("max_action", self.max_action, self.min_action),
        ];
        for (name, value, low) in ordered {
            if value <= low {
                return Err(EnvError::InvalidParam {
                    name,
                    value,
                    expected: "a number above its minimum (min_position, min_action)",
                });
            }
        }
        Ok(())
    }

    fn observation_space(&self) -> BoxSpace {
        self.valley().observation_space()
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::Box(BoxSpace {
            shape: vec![1],
            low: vec![self.min_action as f32],
            high: vec![self.max_action as f32],
        })
    }

    /// Any finite force: gymnasium clips it into the box.
    fn action_is_valid(&self, action: f32) -> bool {
        action.is_finite()
    }

    /// Forces over `[-1.5, 1.5]`, a third of them clipped.
    fn pattern_action(&self, index: usize) -> f32 {
        ((index * 7919 + index / 5) % 301) as f32 / 100.0 - 1.5
    }

    fn graph_params(&self) -> Vec<(&'static str, Scalar)> {
        f32_graph_params(&self.named())
    }

    fn dynamics<'g>(&self, g: &'g GraphBuilder, s: &[Var<'g>], action: Var<'g>) -> Vec<Var<'g>> {
        let p = |name| g.param(name, DType::F32);
        let force = action.max(p("min_action")).min(p("max_action"));
        drive(g, s, force * p("power"))
    }

    fn terminated<'g>(&self, g: &'g GraphBuilder, next: &[Var<'g>]) -> Var<'g> {
        reached_goal(g, next)
    }

    fn reward<'g>(&self, g: &'g GraphBuilder, step: &Transition<'_, 'g>) -> Var<'g> {
        let p = |name| g.param(name, DType::F32);
        let bonus = g.select(step.terminated, p("goal_reward"), g.f32(0.0));
        bonus - step.action.square() * p("action_cost")
    }

    fn observe<'g>(&self, _g: &'g GraphBuilder, state: &[Var<'g>]) -> Vec<Var<'g>> {
        state.to_vec()
    }

    fn reset_state<'g>(&self, g: &'g GraphBuilder, drawn: &[Var<'g>]) -> Vec<Var<'g>> {
        reset(g, drawn)
    }

    fn reference_step(&self, state: &[f64], action: f32) -> (Vec<f64>, f64, bool) {
        let action = f64::from(action);
        let force = action.clamp(self.min_action, self.max_action);
        let next = self.valley().drive(state, force * self.power);
        let terminated = self.valley().reached_goal(&next);
        let bonus = if terminated { self.goal_reward } else { 0.0 };
        (next, bonus - action * action * self.action_cost, terminated)
    }

    fn reference_reset(&self, drawn: &[f32]) -> Vec<f64> {
        reference_reset(drawn)
    }

    fn reference_observe(&self, state: &[f64]) -> Vec<f32> {
        state.iter().map(|v| *v as f32).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance;
    use crate::mountain_car::tests::valley_states;

    #[test]
    fn every_plan_matches_the_f64_reference_on_the_cpu() {
        let env = MountainCarContinuous::default();
        let n = 2000;
        let actions: Vec<f32> = (0..n).map(|i| env.pattern_action(i)).collect();
        assert!(actions.iter().any(|a| a.abs() > 1.0) && actions.iter().any(|a| a.abs() < 1.0));
        conformance::every_plan_matches_the_reference(&env, &valley_states(5, n), &actions, 1e-6);
    }

    #[test]
    fn the_flag_pays_100_minus_the_unclipped_action_cost() {
        let env = MountainCarContinuous::default();
        let (next, reward, terminated) = env.reference_step(&[0.44, 0.02], 1.5);
        assert!(terminated, "{next:?}");
        assert!((reward - (100.0 - 0.1 * 2.25)).abs() < 1e-12, "{reward}");
    }

    #[test]
    fn resets_draw_inside_gymnasiums_range_and_match_the_host_draws() {
        let env = MountainCarContinuous::default();
        for state in conformance::resets_match_the_host_draws(&env, 1000, 4) {
            assert!((-0.6..-0.4).contains(&state[0]), "{state:?}");
            assert_eq!(state[1], 0.0);
        }
    }

    #[test]
    fn bad_params_name_the_field() {
        let env = MountainCarContinuous {
            max_action: -2.0,
            ..MountainCarContinuous::default()
        };
        assert!(matches!(
            env.validate(),
            Err(EnvError::InvalidParam {
                name: "max_action",
                ..
            })
        ));
    }
}
