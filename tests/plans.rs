//! Every plan of a graph computes what the interpreter computes.

use std::collections::HashMap;

use cartfuse::fusion::graph::{DType, Graph, GraphBuilder, ReduceOp};
use cartfuse::fusion::graph::{HostArray, Scalar};
use cartfuse::fusion::interpret::{Values, interpret};
use cartfuse::fusion::plan::{Plan, PlanOptions, Strategy};

use super::util;

/// Runs one step of `graph` under `strategy` on the backend under test, outputs poisoned first.
pub fn run_on_device(
    graph: &Graph,
    strategy: Strategy,
    n: usize,
    inputs: &HashMap<String, HostArray>,
    params: &HashMap<String, Scalar>,
) -> HashMap<String, HostArray> {
    let plan =
        Plan::build(graph, strategy, &util::plan_options()).expect("plan");
    let mut exec = util::runner(graph.clone(), plan, n);
    exec.poison_outputs();
    for (name, values) in inputs {
        exec.set_input(name, values).expect("input");
    }
    for (name, value) in params {
        exec.set_param(name, *value).expect("param");
    }
    exec.run().expect("run");
    graph
        .outputs()
        .iter()
        .map(|o| (o.name.clone(), exec.read_output(&o.name).expect("read")))
        .collect()
}

/// Device values equal the interpreter's within `ulps` units in the last place, or within
/// `rel` relative to `max(|value|, 1)`: the device's `sin`, `exp`, ... are not the host's
/// libm, and a difference of one ulp in a transcendental survives cancellation downstream.
pub fn assert_close(name: &str, got: &HostArray, want: &Values<f32>, ulps: u32, rel: f32) {
    match (got, want.to_host()) {
        (HostArray::F32(g), HostArray::F32(w)) => {
            assert_eq!(g.len(), w.len(), "{name}: length");
            for (i, (a, b)) in g.iter().zip(&w).enumerate() {
                let ulp_gap = (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
                let close = a == b
                    || (a.is_nan() && b.is_nan())
                    || ulp_gap <= u64::from(ulps)
                    || (a - b).abs() <= rel * b.abs().max(a.abs()).max(1.0);
                assert!(close, "{name}[{i}]: device {a} vs interpreter {b}");
            }
        }
        (HostArray::U32(g), HostArray::U32(w)) => assert_eq!(g, &w, "{name}"),
        (g, w) => panic!("{name}: type differs {g:?} vs {w:?}"),
    }
}

fn small_graph() -> Graph {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let k = g.input("k", DType::U32);
    let scale = g.param("scale", DType::F32);
    let y = (x * scale + 1.0).sin();
    let z = y * 2.0 - x.cos();
    let big = z.gt(g.f32(0.5));
    let count = g.select(big, k + g.u32(1), k);
    g.output("z", z);
    g.output("count", count);
    g.output("obs", g.pack(&[x, y, z]));
    g.output(
        "noise",
        g.random_uniform([k, g.u32(9)], [g.lane_index(), k], 1),
    );
    g.build().unwrap()
}

#[test]
fn every_strategy_matches_the_interpreter_on_a_small_graph() {
    let graph = small_graph();
    let n = 1000;
    let inputs = HashMap::from([
        (
            "x".to_string(),
            HostArray::F32((0..n).map(|i| i as f32 * 0.01 - 3.0).collect()),
        ),
        (
            "k".to_string(),
            HostArray::U32((0..n as u32).map(|i| i % 7).collect()),
        ),
    ]);
    let params = HashMap::from([("scale".to_string(), Scalar::F32(1.5))]);
    let want = interpret::<f32>(&graph, n, &inputs, &params).unwrap();
    for strategy in [
        Strategy::Eager,
        Strategy::Vertical,
        Strategy::Horizontal,
        Strategy::Fused,
        Strategy::XlaDefault,
    ] {
        let got = run_on_device(&graph, strategy, n, &inputs, &params);
        for output in graph.outputs() {
            assert_close(
                &format!("{strategy} {}", output.name),
                &got[&output.name],
                &want[&output.name],
                2,
                1e-6,
            );
        }
    }
}

#[test]
fn row_reductions_match_the_interpreter() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let mean = x.row_reduce(ReduceOp::Mean, 16);
    let centered = x - mean;
    let var = centered.square().row_reduce(ReduceOp::Mean, 16);
    let y = centered / (var + 1e-5).sqrt();
    g.output("y", y);
    g.output("max", x.row_reduce(ReduceOp::Max, 16));
    let graph = g.build().unwrap();
    let n = 16 * 40;
    let inputs = HashMap::from([(
        "x".to_string(),
        HostArray::F32((0..n).map(|i| ((i * 37) % 101) as f32 * 0.1).collect()),
    )]);
    let want = interpret::<f32>(&graph, n, &inputs, &HashMap::new()).unwrap();
    for strategy in [
        Strategy::Eager,
        Strategy::Vertical,
        Strategy::Horizontal,
        Strategy::Fused,
    ] {
        let got = run_on_device(&graph, strategy, n, &inputs, &HashMap::new());
        for output in graph.outputs() {
            assert_close(
                &format!("{strategy} {}", output.name),
                &got[&output.name],
                &want[&output.name],
                4,
                1e-5,
            );
        }
    }
}

/// Above 65535 cubes a launch spreads over two dispatch dimensions; every element is
/// still computed exactly once (outputs start as NaN).
#[test]
fn launches_beyond_65535_cubes_cover_every_element() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    g.output("y", x * 0.5 + 1.0);
    let graph = g.build().unwrap();
    let n = 65_535 * 256 + 3 * 256 + 17;
    let plan = Plan::build(&graph, Strategy::Fused, &PlanOptions::default()).unwrap();
    let mut exec = util::runner(graph, plan, n);
    exec.poison_outputs();
    exec.set_input(
        "x",
        &HostArray::F32((0..n).map(|i| (i % 1000) as f32).collect()),
    )
    .unwrap();
    exec.run().unwrap();
    let HostArray::F32(y) = exec.read_output("y").unwrap() else {
        panic!("f32 output")
    };
    assert_eq!(y.len(), n);
    for (i, value) in y.iter().enumerate() {
        assert_eq!(*value, (i % 1000) as f32 * 0.5 + 1.0, "element {i}");
    }
}
