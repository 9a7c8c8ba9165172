//! The loop-iteration limit a CubeCL executor checks before it runs a plan (lavapipe's
//! 65,535 a shader; `fusion::codegen::loop_budget`), with the limit given explicitly so that
//! the test means the same on every adapter.

use cartfuse::AutoresetMode;
use cartfuse::env::CartPole;
use cartfuse::env::engine::layout_for;
use cartfuse::env::rollout::{PolicySpec, rollout_graph};
use cartfuse::fusion::exec::{ExecError, PlanExecutor};
use cartfuse::fusion::plan::{Plan, Strategy};

/// PPO's 4-64-64 policy runs 653 loop iterations a step (see the unit test beside
/// `rollout_graph`): `fused-x8` needs 5,224 a thread and `fused-x100` fits lavapipe.
#[test]
fn a_plan_over_the_loop_limit_is_refused_naming_the_steps_that_fit() {
    let env = CartPole::default();
    let spec = PolicySpec::tanh_mlp(&env, &[64, 64]).unwrap();
    let strategy = Strategy::FusedSteps(8);
    let graph = rollout_graph(&env, AutoresetMode::SameStep, layout_for(strategy), &spec);
    let plan = Plan::build(&graph, strategy, &super::util::plan_options()).unwrap();
    let executor = || {
        PlanExecutor::new(
            super::backend().client().clone(),
            graph.clone(),
            plan.clone(),
            64,
        )
        .unwrap()
    };
    assert!(executor().with_loop_limit(Some(8 * 653)).is_ok());
    assert!(executor().with_loop_limit(None).is_ok());
    let error = executor()
        .with_loop_limit(Some(5_000))
        .err()
        .expect("over the limit");
    assert!(
        matches!(
            error,
            ExecError::TooManyLoopIterations {
                iterations: 5_224,
                limit: 5_000,
                most_steps: Some(7),
                ..
            }
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("5224 loop iterations a thread, over this device's limit of 5000"),
        "{message}"
    );
    assert!(
        message.contains("use fused-x7 or fewer steps per launch"),
        "{message}"
    );
}
