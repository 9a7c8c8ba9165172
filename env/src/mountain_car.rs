//! MountainCar-v0, as gymnasium defines it (`gymnasium/envs/classic_control/mountain_car.py`):
//! a car in a valley pushed left, not at all, or right, rewarded -1 per step until it
//! reaches the flag at `goal_position`; truncated at 200 steps.
//!
//! The whole environment is this module plus its line in [`crate::registry`]: params, the
//! step as graph ops, spaces, the reset distribution and the f64 reference. It runs under
//! every fusion plan on every runtime through [`GraphEnv`]; it has no hand-written kernel.

use cartfuse_fusion::graph::{DType, GraphBuilder, Var};
use cartfuse_fusion::interpret::Scalar;

use crate::environment::GraphEnv;
use crate::error::EnvError;
use crate::spaces::{ActionSpace, BoxSpace};

/// State components, in the order of gymnasium's `env.unwrapped.state`.
pub const STATE: [&str; 2] = ["position", "velocity"];

/// MountainCar-v0's constants (gymnasium's defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MountainCar {
    /// Acceleration per unit of action.
    pub force: f64,
    /// The valley's pull (`cos(3 position)` times this).
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
}

impl Default for MountainCar {
    fn default() -> Self {
        Self {
            force: 0.001,
            gravity: 0.0025,
            min_position: -1.2,
            max_position: 0.6,
            max_speed: 0.07,
            goal_position: 0.5,
            goal_velocity: 0.0,
        }
    }
}

/// Reset positions are uniform in `[RESET_CENTER - RESET_HALF_WIDTH, RESET_CENTER +
/// RESET_HALF_WIDTH)` (gymnasium: `uniform(-0.6, -0.4)`), velocity 0.
const RESET_CENTER: f32 = -0.5;
const RESET_HALF_WIDTH: f32 = 0.1;

impl MountainCar {
    /// Every param with its name (validated, and handed to the graphs as `f32`).
    fn named(&self) -> [(&'static str, f64); 7] {
        [
            ("force", self.force),
            ("gravity", self.gravity),
            ("min_position", self.min_position),
            ("max_position", self.max_position),
            ("max_speed", self.max_speed),
            ("goal_position", self.goal_position),
            ("goal_velocity", self.goal_velocity),
        ]
    }
}

impl GraphEnv for MountainCar {
    const ID: &'static str = "MountainCar-v0";
    const STATE: &'static [&'static str] = &STATE;
    const OBS_DIM: usize = 2;
    const RESET_DRAWS: usize = 1;
    const MAX_EPISODE_STEPS: u32 = 200;
    type Action = u32;

    fn validate(&self) -> Result<(), EnvError> {
        for (name, value) in self.named() {
            if !value.is_finite() {
                return Err(EnvError::InvalidParam {
                    name,
                    value,
                    expected: "a finite number",
                });
            }
        }
        if self.max_speed <= 0.0 {
            return Err(EnvError::InvalidParam {
                name: "max_speed",
                value: self.max_speed,
                expected: "a finite number > 0",
            });
        }
        if self.max_position <= self.min_position {
            return Err(EnvError::InvalidParam {
                name: "max_position",
                value: self.max_position,
                expected: "a number above min_position",
            });
        }
        Ok(())
    }

    fn observation_space(&self) -> BoxSpace {
        BoxSpace {
            shape: vec![2],
            low: vec![self.min_position as f32, -self.max_speed as f32],
            high: vec![self.max_position as f32, self.max_speed as f32],
        }
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::discrete(3)
    }

    fn action_is_valid(&self, action: u32) -> bool {
        action <= 2
    }

    fn pattern_action(&self, index: usize) -> u32 {
        ((index * 7 + index / 3) % 3) as u32
    }

    fn graph_params(&self) -> Vec<(&'static str, Scalar)> {
        self.named()
            .map(|(name, value)| (name, Scalar::F32(value as f32)))
            .to_vec()
    }

    fn dynamics<'g>(&self, g: &'g GraphBuilder, s: &[Var<'g>], action: Var<'g>) -> Vec<Var<'g>> {
        let p = |name| g.param(name, DType::F32);
        let (force, gravity, max_speed) = (p("force"), p("gravity"), p("max_speed"));
        let (min_position, max_position) = (p("min_position"), p("max_position"));
        let (position, velocity) = (s[0], s[1]);
        let push = g.select(
            action.eq(g.u32(0)),
            -force,
            g.select(action.eq(g.u32(2)), force, g.f32(0.0)),
        );
        let velocity = velocity + (push + (position * 3.0).cos() * -gravity);
        let velocity = velocity.max(-max_speed).min(max_speed);
        let position = (position + velocity).max(min_position).min(max_position);
        let at_wall = position.eq(min_position).and(velocity.lt(g.f32(0.0)));
        let velocity = g.select(at_wall, g.f32(0.0), velocity);
        vec![position, velocity]
    }

    fn terminated<'g>(&self, g: &'g GraphBuilder, next: &[Var<'g>]) -> Var<'g> {
        let goal_position = g.param("goal_position", DType::F32);
        let goal_velocity = g.param("goal_velocity", DType::F32);
        next[0].ge(goal_position).and(next[1].ge(goal_velocity))
    }

    fn reward<'g>(&self, g: &'g GraphBuilder, _state: &[Var<'g>], _next: &[Var<'g>]) -> Var<'g> {
        g.f32(-1.0)
    }

    fn observe<'g>(&self, _g: &'g GraphBuilder, state: &[Var<'g>]) -> Vec<Var<'g>> {
        state.to_vec()
    }

    fn reset_state<'g>(&self, g: &'g GraphBuilder, draws: &[Var<'g>]) -> Vec<Var<'g>> {
        vec![draws[0] * RESET_HALF_WIDTH + RESET_CENTER, g.f32(0.0)]
    }

    fn reference_step(&self, state: &[f64], action: u32) -> (Vec<f64>, f64, bool) {
        let (mut position, mut velocity) = (state[0], state[1]);
        velocity += (f64::from(action) - 1.0) * self.force + (3.0 * position).cos() * -self.gravity;
        velocity = velocity.clamp(-self.max_speed, self.max_speed);
        position = (position + velocity).clamp(self.min_position, self.max_position);
        if position == self.min_position && velocity < 0.0 {
            velocity = 0.0;
        }
        let terminated = position >= self.goal_position && velocity >= self.goal_velocity;
        (vec![position, velocity], -1.0, terminated)
    }

    fn reference_reset(&self, draws: &[f32]) -> Vec<f64> {
        vec![f64::from(draws[0] * RESET_HALF_WIDTH + RESET_CENTER), 0.0]
    }

    fn reference_observe(&self, state: &[f64]) -> Vec<f32> {
        state.iter().map(|v| *v as f32).collect()
    }
}

#[cfg(test)]
mod tests {
    use cartfuse_fusion::backend::Cpu;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::engine::StepPlan;
    use crate::environment::EpisodeOptions;
    use crate::params::AutoresetMode;
    use crate::vec_env::VecEnv;

    /// Random states over the observation box, plus states at the left wall moving left.
    fn states(count: usize) -> Vec<Vec<f64>> {
        let mut rng = StdRng::seed_from_u64(3);
        let mut states = vec![vec![-1.2, -0.05], vec![-1.19, -0.02], vec![0.49, 0.02]];
        while states.len() < count {
            let position: f32 = rng.random_range(-1.2..0.6);
            let velocity: f32 = rng.random_range(-0.07..0.07);
            states.push(vec![f64::from(position), f64::from(velocity)]);
        }
        states
    }

    #[test]
    fn every_plan_matches_the_f64_reference_on_the_cpu() {
        let env = MountainCar::default();
        let episode = EpisodeOptions {
            autoreset: AutoresetMode::Disabled,
            max_episode_steps: 200,
        };
        let n = 2000;
        let start = states(n);
        let actions: Vec<u32> = (0..n).map(|i| env.pattern_action(i)).collect();
        let mut plans = 0;
        for plan in StepPlan::all() {
            let Ok(mut vec_env) = VecEnv::build(Cpu::default(), env, n, episode, plan) else {
                assert_eq!(plan, StepPlan::HandWritten, "only CartPole has one");
                continue;
            };
            let k = vec_env.steps_per_call();
            vec_env.reset(Some(1)).unwrap();
            vec_env.set_state(&start).unwrap();
            let all_actions: Vec<u32> = (0..k).flat_map(|_| actions.clone()).collect();
            let out = vec_env.step(&all_actions).unwrap();
            for (i, state) in start.iter().enumerate() {
                let (next, reward, terminated) = env.reference_step(state, actions[i]);
                let row = &out.obs[2 * i..2 * i + 2];
                for (got, want) in row.iter().zip(&next) {
                    assert!(
                        (f64::from(*got) - want).abs() <= 1e-6,
                        "{plan} env {i}: {row:?} vs {next:?}"
                    );
                }
                assert_eq!(out.reward[i], reward as f32, "{plan} env {i}");
                assert_eq!(out.terminated[i], terminated, "{plan} env {i}");
            }
            plans += 1;
        }
        assert!(plans >= 6, "{plans}");
    }

    #[test]
    fn resets_draw_inside_gymnasiums_range_and_match_the_host_draws() {
        let env = MountainCar::default();
        let n = 1000;
        let mut vec_env = VecEnv::build(
            Cpu::default(),
            env,
            n,
            EpisodeOptions::default_for::<MountainCar>(),
            StepPlan::default(),
        )
        .unwrap();
        let obs = vec_env.reset(Some(9)).unwrap();
        for i in 0..n {
            let want = crate::graph::reference_reset(&env, 9, i as u32, 0);
            assert_eq!(obs[2 * i], want[0] as f32, "env {i}");
            assert_eq!(obs[2 * i + 1], 0.0);
            assert!((-0.6..-0.4).contains(&obs[2 * i]), "{}", obs[2 * i]);
        }
    }

    #[test]
    fn bad_params_name_the_field() {
        let env = MountainCar {
            max_speed: 0.0,
            ..MountainCar::default()
        };
        assert!(matches!(
            env.validate(),
            Err(EnvError::InvalidParam {
                name: "max_speed",
                ..
            })
        ));
    }
}
