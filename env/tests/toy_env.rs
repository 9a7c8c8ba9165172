//! An environment in one file: a point mass on a line, pushed left, not at all or right,
//! until it leaves the walls. Everything below is what an environment writes; its action
//! checks, pattern actions, every fusion plan, resets, the vector env and (once its type is
//! on the registry's line) the CLI, the harness and the Python package come with
//! [`GraphEnv`]. The tests run it through the checks every registered environment passes.

use cartfuse_env::conformance::{every_plan_matches_the_reference, resets_match_the_host_draws};
use cartfuse_env::environment::{GraphEnv, Transition};
use cartfuse_env::params::{check_finite, check_positive, f32_graph_params};
use cartfuse_env::spaces::{ActionSpace, BoxSpace};
use cartfuse_env::{EnvError, EpisodeOptions, StepPlan, VecEnv};
use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::graph::{DType, GraphBuilder, Scalar, Var};

/// The point mass's params.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PointMass {
    accel: f64,
    dt: f64,
    wall: f64,
}

impl Default for PointMass {
    fn default() -> Self {
        Self {
            accel: 1.0,
            dt: 0.1,
            wall: 1.0,
        }
    }
}

impl PointMass {
    fn named(&self) -> [(&'static str, f64); 3] {
        [("accel", self.accel), ("dt", self.dt), ("wall", self.wall)]
    }
}

impl GraphEnv for PointMass {
    const ID: &'static str = "PointMass-v0";
    const STATE: &'static [&'static str] = &["x", "v"];
    const OBS_DIM: usize = 2;
    const RESET_DRAWS: usize = 2;
    const MAX_EPISODE_STEPS: u32 = 100;
    const RENDER_FPS: u32 = 30;
    type Action = u32;

    fn reset_bounds(&self) -> Vec<(f64, f64)> {
        vec![(-0.5, 0.5), (-0.1, 0.1)]
    }

    fn validate(&self) -> Result<(), EnvError> {
        check_finite(&self.named())?;
        (self.named().into_iter()).try_for_each(|(name, value)| check_positive(name, value))
    }

    fn observation_space(&self) -> BoxSpace {
        let wall = self.wall as f32;
        BoxSpace {
            shape: vec![2],
            low: vec![-wall, f32::NEG_INFINITY],
            high: vec![wall, f32::INFINITY],
        }
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::discrete(3)
    }

    fn graph_params(&self) -> Vec<(&'static str, Scalar)> {
        f32_graph_params(&self.named())
    }

    fn dynamics<'g>(&self, g: &'g GraphBuilder, s: &[Var<'g>], a: Var<'g>) -> Vec<Var<'g>> {
        let p = |name| g.param(name, DType::F32);
        let push = a.cast(DType::F32) - g.f32(1.0);
        let v = s[1] + push * p("accel") * p("dt");
        vec![s[0] + v * p("dt"), v]
    }

    fn terminated<'g>(&self, g: &'g GraphBuilder, next: &[Var<'g>]) -> Var<'g> {
        next[0].abs().gt(g.param("wall", DType::F32))
    }

    fn reward<'g>(&self, _g: &'g GraphBuilder, step: &Transition<'_, 'g>) -> Var<'g> {
        -step.next[0].abs()
    }

    fn observe<'g>(&self, _g: &'g GraphBuilder, state: &[Var<'g>]) -> Vec<Var<'g>> {
        state.to_vec()
    }

    fn reference_step(&self, s: &[f64], action: u32) -> (Vec<f64>, f64, bool) {
        let v = s[1] + (f64::from(action) - 1.0) * self.accel * self.dt;
        let x = s[0] + v * self.dt;
        (vec![x, v], -x.abs(), x.abs() > self.wall)
    }

    fn reference_observe(&self, state: &[f64]) -> Vec<f32> {
        state.iter().map(|v| *v as f32).collect()
    }
}

/// States on `f32` values (as the vector env holds them), some near the walls.
fn states(n: usize) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            let x = -0.99 + 1.98 * (i as f32 / (n - 1) as f32);
            let v = 0.3 * ((i % 7) as f32 - 3.0);
            vec![f64::from(x), f64::from(v)]
        })
        .collect()
}

#[test]
fn every_plan_steps_the_toy_as_its_reference_and_resets_draw_its_bounds() {
    let env = PointMass::default();
    let n = 64;
    let actions = env.pattern_actions(n);
    assert_eq!(
        actions.iter().collect::<std::collections::BTreeSet<_>>(),
        [0, 1, 2].iter().collect(),
        "the pattern covers the space"
    );
    let worst = every_plan_matches_the_reference(&env, &states(n), &actions, 1e-5);
    assert!(worst <= 1e-5, "{worst}");
    for state in resets_match_the_host_draws(&env, 256, 3) {
        assert!((-0.5..0.5).contains(&state[0]) && (-0.1..0.1).contains(&state[1]));
    }
}

#[test]
fn actions_outside_the_space_are_refused_from_the_space_alone() {
    let episode = EpisodeOptions::default_for::<PointMass>();
    let plan = StepPlan::default();
    let mut env = VecEnv::build(Cpu::default(), PointMass::default(), 4, episode, plan).unwrap();
    env.reset(Some(0)).unwrap();
    assert!(env.step(&[0, 1, 2, 2]).is_ok());
    match env.step(&[0, 1, 2, 3]) {
        Err(EnvError::InvalidAction { env, value, .. }) => {
            assert_eq!((env, value.as_str()), (3, "3"))
        }
        other => panic!("expected an invalid action, got {other:?}"),
    }
}

#[test]
fn an_environment_without_a_hand_written_step_refuses_that_plan_only() {
    let episode = EpisodeOptions::default_for::<PointMass>();
    assert!(PointMass::default().hand_written(&episode).is_none());
    let built = VecEnv::build(
        Cpu::default(),
        PointMass::default(),
        4,
        episode,
        StepPlan::HandWritten,
    );
    assert!(
        matches!(&built, Err(EnvError::PlanUnavailable { .. })),
        "{:?}",
        built.err()
    );
}
