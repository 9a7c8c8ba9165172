//! The device limits a CubeCL executor checks before it runs a plan: loop iterations
//! (lavapipe's 65,535 a shader; `fusion::lir::loop_budget`), given explicitly so that the
//! test means the same on every adapter, and storage buffers a launch binds.

use cartfuse::AutoresetMode;
use cartfuse::env::CartPole;
use cartfuse::env::engine::layout_for;
use cartfuse::env::policy::PolicySpec;
use cartfuse::env::rollout::rollout_graph;
use cartfuse::fusion::exec::{ExecError, Executor};
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
    let executor = |limit| {
        let backend = super::backend().with_loop_limit(limit);
        Executor::new(backend, graph.clone(), plan.clone(), 64)
    };
    assert!(executor(Some(8 * 653)).is_ok());
    assert!(executor(None).is_ok());
    let error = executor(Some(5_000)).err().expect("over the limit");
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

/// A plan built for more buffers than the device binds is refused when the executor is
/// built, instead of failing the pipeline on wgpu's device thread.
#[test]
fn a_plan_over_the_binding_limit_is_refused() {
    use cartfuse::fusion::exec::Backend;
    use cartfuse::fusion::graph::{DType, GraphBuilder};
    use cartfuse::fusion::plan::PlanOptions;
    let client = super::backend().client().clone();
    let limit = client.properties().hardware.max_bindings as usize;
    let g = GraphBuilder::new();
    let pairs = limit / 2 + 1;
    for i in 0..pairs {
        let x = g.input(&format!("x{i}"), DType::F32);
        g.output(&format!("y{i}"), x * 2.0 + 1.0);
    }
    let graph = g.build().unwrap();
    let loose = PlanOptions {
        max_bindings: 4 * limit,
        ..PlanOptions::default()
    };
    let plan = Plan::build(&graph, Strategy::Fused, &loose).unwrap();
    let error = Executor::new(super::backend(), graph.clone(), plan, 8)
        .err()
        .expect("over the limit");
    assert!(
        matches!(
            &error,
            ExecError::TooManyBindings { bindings, limit: l, .. }
                if *bindings == 2 * pairs + 2 && *l == limit
        ),
        "{error}"
    );
    // Planned for the device, the same graph splits into launches that fit.
    let plan = Plan::build(&graph, Strategy::Fused, &super::backend().plan_options()).unwrap();
    assert!(plan.launches.len() > 1);
    assert!(Executor::new(super::backend(), graph, plan, 8).is_ok());
}
