//! Property test: on random valid graphs, every strategy computes what the interpreter does.
//!
//! Graphs mix every op family (f32 math, u32 arithmetic, compares, logic, select, casts,
//! random numbers, pack/unpack, row reductions) over two f32 inputs, one u32 input, params
//! and a loop-carried f32 input, so `fused-x3` is checked against three interpreter steps.
//! The runner's RNG is fixed: the same graphs every run.

use std::collections::HashMap;

use cartfuse::fusion::graph::Graph;
use cartfuse::fusion::graph::{HostArray, Scalar};
use cartfuse::fusion::interpret::interpret;
use cartfuse::fusion::plan::{Plan, Strategy};
use proptest::prelude::*;

use super::plans::assert_close;
use super::util;
use crate::graph_gen::{deterministic_runner, random_graph};

const N: usize = 64;


fn inputs(step: usize, steps: usize) -> HashMap<String, HostArray> {
    let wave = |phase: f32| -> Vec<f32> {
        (0..N * steps)
            .map(|i| ((i + step * N) as f32 * 0.37 + phase).sin() * 2.0)
            .collect()
    };
    HashMap::from([
        ("a".to_string(), HostArray::F32(wave(0.1))),
        ("b".to_string(), HostArray::F32(wave(1.3))),
        (
            "k".to_string(),
            HostArray::U32(
                (0..(N * steps) as u32)
                    .map(|i| i.wrapping_mul(2_654_435_761) >> 20)
                    .collect(),
            ),
        ),
    ])
}

fn params() -> HashMap<String, Scalar> {
    HashMap::from([
        ("p".to_string(), Scalar::F32(0.75)),
        ("q".to_string(), Scalar::U32(12_345)),
    ])
}

fn check(graph: &Graph, strategy: Strategy) {
    let steps = match strategy {
        Strategy::FusedSteps(k) => k as usize,
        _ => 1,
    };
    let Ok(plan) = Plan::build(graph, strategy, &util::plan_options()) else {
        assert!(
            matches!(strategy, Strategy::FusedSteps(_)),
            "{strategy} must plan:\n{graph}"
        );
        return; // Graphs with row reductions are not stepped.
    };
    let mut exec = util::runner(graph.clone(), plan, N);
    exec.poison_outputs();
    let state: Vec<f32> = (0..N).map(|i| i as f32 * 0.01).collect();
    exec.set_input("s", &HostArray::F32(state.clone())).unwrap();
    let step_inputs = inputs(0, steps);
    for name in ["a", "b", "k"] {
        if graph.input_id(name).is_some() {
            exec.set_input(name, &step_inputs[name]).unwrap();
        }
    }
    for (name, value) in params() {
        if graph.params().iter().any(|(_, p)| *p == name) {
            exec.set_param(&name, value).unwrap();
        }
    }
    exec.run().unwrap();
    // The interpreter, one step at a time, carrying `s`.
    let mut carried = HostArray::F32(state);
    let mut per_step = Vec::new();
    for step in 0..steps {
        let mut bound: HashMap<String, HostArray> = step_inputs
            .iter()
            .map(|(name, values)| {
                let slice = match values {
                    HostArray::F32(v) => HostArray::F32(v[step * N..(step + 1) * N].to_vec()),
                    HostArray::U32(v) => HostArray::U32(v[step * N..(step + 1) * N].to_vec()),
                };
                (name.clone(), slice)
            })
            .filter(|(name, _)| graph.input_id(name).is_some())
            .collect();
        bound.insert("s".into(), carried.clone());
        let out = interpret::<f32>(graph, N, &bound, &params()).unwrap();
        carried = out["next:s"].to_host();
        per_step.push(out);
    }
    for output in graph.outputs() {
        let got = exec.read_output(&output.name).unwrap();
        let width = got.len() / (N * steps);
        for (step, want) in per_step.iter().enumerate() {
            let range = step * N * width..(step + 1) * N * width;
            let got_step = match &got {
                HostArray::F32(v) => HostArray::F32(v[range].to_vec()),
                HostArray::U32(v) => HostArray::U32(v[range].to_vec()),
            };
            assert_close(
                &format!("{strategy} {} step {step}\n{graph}", output.name),
                &got_step,
                &want[&output.name],
                2,
                1e-6,
            );
        }
    }
    let state = exec.read_input("s").unwrap();
    let want = match carried {
        HostArray::F32(v) => cartfuse::fusion::interpret::Values::<f32>::Float(v),
        HostArray::U32(_) => unreachable!(),
    };
    assert_close(
        &format!("{strategy} carried s\n{graph}"),
        &state,
        &want,
        2,
        1e-6,
    );
}

#[test]
fn every_strategy_matches_the_interpreter_on_random_graphs() {
    deterministic_runner(24)
        .run(&(any::<u64>(), 4usize..24), |(seed, ops)| {
            let graph = random_graph(seed, ops);
            for strategy in [
                Strategy::Eager,
                Strategy::Vertical,
                Strategy::Horizontal,
                Strategy::Fused,
                Strategy::FusedSteps(3),
                Strategy::XlaDefault,
            ] {
                check(&graph, strategy);
            }
            Ok(())
        })
        .unwrap();
}
