//! Vectorised launches (four lanes per thread), a CubeCL-only knob.

use std::collections::HashMap;

use cartfuse::fusion::exec::Executor;
use cartfuse::fusion::graph::{DType, GraphBuilder};
use cartfuse::fusion::graph::{HostArray, Scalar};
use cartfuse::fusion::interpret::interpret;
use cartfuse::fusion::plan::{Plan, PlanOptions, Strategy};

use super::plans::assert_close;

#[test]
fn vectorised_launches_match_scalar_launches_and_the_interpreter() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let y = g.input("y", DType::F32);
    let s = g.param("s", DType::F32);
    let light = x * 0.5 + 1.0;
    let medium = (x * s).tanh() + y.sin() * light;
    let heavy = (medium.square() + 1.0).sqrt().recip() * (y / (x.abs() + 1.0)).exp();
    g.output("light", light);
    g.output("heavy", heavy.erf() + (x.abs() + 0.5).pow(y.tanh()));
    let graph = g.build().unwrap();
    let n = 4 * 1000;
    let inputs = HashMap::from([
        (
            "x".to_string(),
            HostArray::F32((0..n).map(|i| (i as f32 * 0.013).sin() * 3.0).collect()),
        ),
        (
            "y".to_string(),
            HostArray::F32((0..n).map(|i| (i as f32 * 0.007).cos()).collect()),
        ),
    ]);
    let params = HashMap::from([("s".to_string(), Scalar::F32(0.8))]);
    let want = interpret::<f32>(&graph, n, &inputs, &params).unwrap();
    for strategy in [
        Strategy::Eager,
        Strategy::Vertical,
        Strategy::Horizontal,
        Strategy::Fused,
    ] {
        for vectorize in [true, false] {
            let plan = Plan::build(&graph, strategy, &super::util::plan_options()).unwrap();
            let mut exec = Executor::new(super::backend(), graph.clone(), plan, n).unwrap();
            exec.set_vectorize(vectorize);
            assert_eq!(
                exec.vector_width(0),
                if vectorize { 4 } else { 1 },
                "{strategy}"
            );
            exec.poison_outputs();
            for (name, values) in &inputs {
                exec.set_input(name, values).unwrap();
            }
            exec.set_param("s", Scalar::F32(0.8)).unwrap();
            exec.run().unwrap();
            for output in graph.outputs() {
                let got = exec.read_output(&output.name).unwrap();
                assert_close(
                    &format!("{strategy} vectorize={vectorize} {}", output.name),
                    &got,
                    &want[&output.name],
                    2,
                    1e-6,
                );
            }
        }
    }
    // A size that is not a multiple of the width runs scalar.
    let plan = Plan::build(&graph, Strategy::Fused, &PlanOptions::default()).unwrap();
    let exec = Executor::new(super::backend(), graph, plan, 1001).unwrap();
    assert_eq!(exec.vector_width(0), 1);
}
