//! MountainCarContinuous-v0, as gymnasium defines it
//! (`gymnasium/envs/classic_control/continuous_mountain_car.py`): the valley of
//! [MountainCar-v0](crate::mountain_car) ([`Valley`], its flag at 0.45) driven by a
//! continuous force in `[-1, 1]` (clipped, as gymnasium clips it), rewarded 100 at the flag
//! minus `0.1 action^2` per step (the action as given, unclipped); truncated at 999 steps.
//!
//! gymnasium stores the state as `float32` after every step; cartfuse's state is `f32`
//! throughout, and the f64 reference keeps `f64`.

use cartfuse_fusion::graph::Scalar;
use cartfuse_fusion::graph::{DType, GraphBuilder, Var};

use crate::environment::{GraphEnv, Transition};
use crate::error::EnvError;
use crate::gym_args::Kwarg;
use crate::mountain_car::{GOAL_VELOCITY, Valley, drive, reached_goal, reference_reset, reset};
use crate::params::{check_finite, f32_graph_params};
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
    /// Reward for reaching the flag.
    pub goal_reward: f64,
    /// Each step costs this times the action squared.
    pub action_cost: f64,
    /// The valley, with its flag at 0.45.
    pub valley: Valley,
}

impl Default for MountainCarContinuous {
    fn default() -> Self {
        Self {
            min_action: -1.0,
            max_action: 1.0,
            power: 0.0015,
            goal_reward: 100.0,
            action_cost: 0.1,
            valley: Valley::with_goal(0.45),
        }
    }
}

impl MountainCarContinuous {
    /// The car's own params with their names (the valley's are [`Valley::named`]).
    fn named(&self) -> [(&'static str, f64); 5] {
        [
            ("min_action", self.min_action),
            ("max_action", self.max_action),
            ("power", self.power),
            ("goal_reward", self.goal_reward),
            ("action_cost", self.action_cost),
        ]
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
        self.valley.set_kwarg::<Self>(name, value)
    }

    fn reset_bounds(&self) -> Vec<(f64, f64)> {
        self.valley.reset_bounds()
    }

    fn validate(&self) -> Result<(), EnvError> {
        check_finite(&self.named())?;
        if self.max_action <= self.min_action {
            return Err(EnvError::InvalidParam {
                name: "max_action",
                value: self.max_action,
                expected: "a number above min_action",
            });
        }
        self.valley.validate()
    }

    fn observation_space(&self) -> BoxSpace {
        self.valley.observation_space()
    }

    /// `[min_action, max_action]`; any finite force is accepted, clipped into the box by
    /// the dynamics as gymnasium clips it.
    fn action_space(&self) -> ActionSpace {
        ActionSpace::Box(BoxSpace {
            shape: vec![1],
            low: vec![self.min_action as f32],
            high: vec![self.max_action as f32],
        })
    }

    fn graph_params(&self) -> Vec<(&'static str, Scalar)> {
        f32_graph_params(&[&self.named()[..], &self.valley.named()].concat())
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
        let next = self.valley.drive(state, force * self.power);
        let terminated = self.valley.reached_goal(&next);
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
    use crate::mountain_car::tests::{param_names, valley_states};

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
        let env = MountainCarContinuous {
            valley: Valley {
                max_position: -1.2,
                ..Valley::with_goal(0.45)
            },
            ..MountainCarContinuous::default()
        };
        assert!(matches!(
            env.validate(),
            Err(EnvError::InvalidParam {
                name: "max_position",
                ..
            })
        ));
    }

    #[test]
    fn the_graphs_read_the_params_under_gymnasiums_names() {
        let env = MountainCarContinuous::default();
        let names = [
            "action_cost",
            "goal_position",
            "goal_reward",
            "goal_velocity",
            "gravity",
            "max_action",
            "max_position",
            "max_speed",
            "min_action",
            "min_position",
            "power",
        ];
        assert_eq!(param_names(&env), names);
        assert_eq!(env.valley, Valley::with_goal(0.45));
    }

    #[test]
    fn goal_velocity_is_the_only_kwarg() {
        let mut env = MountainCarContinuous::default();
        env.set_kwarg("goal_velocity", 0.05).unwrap();
        assert_eq!(env.valley.goal_velocity, 0.05);
        assert!(matches!(
            env.set_kwarg("power", 1.0),
            Err(EnvError::UnknownKwarg {
                env: "MountainCarContinuous-v0",
                ..
            })
        ));
    }
}
