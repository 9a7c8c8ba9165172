//! Property test: on random valid graphs, every strategy computes what the interpreter does.
//!
//! Graphs mix every op family (f32 math, u32 arithmetic, compares, logic, select, casts,
//! random numbers, pack/unpack, row reductions) over two f32 inputs, one u32 input, params
//! and a loop-carried f32 input, so `fused-x3` is checked against three interpreter steps.
//! The runner's RNG is fixed: the same graphs every run.

use std::collections::HashMap;

use cartfuse::fusion::backend::PlanRunner;
use cartfuse::fusion::graph::{
    BinaryOp, CompareOp, DType, FloatUnary, Graph, GraphBuilder, ReduceOp, Var,
};
use cartfuse::fusion::interpret::{HostArray, Scalar, interpret};
use cartfuse::fusion::plan::{Plan, Strategy};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

use super::plans::assert_close;
use super::util;

const N: usize = 64;
const COLS: u32 = 8;

/// Builds a random valid graph from `seed` with about `ops` ops.
fn random_graph(seed: u64, ops: usize) -> Graph {
    let mut rng = StdRng::seed_from_u64(seed);
    let g = GraphBuilder::new();
    let carried = g.input("s", DType::F32);
    let mut floats: Vec<Var> = vec![
        g.input("a", DType::F32),
        g.input("b", DType::F32),
        carried,
        g.param("p", DType::F32),
    ];
    let mut ints: Vec<Var> = vec![
        g.input("k", DType::U32),
        g.param("q", DType::U32),
        g.lane_index(),
    ];
    let mut bools: Vec<Var> = Vec::new();
    for _ in 0..ops {
        let f = *floats.choose(&mut rng).unwrap();
        let f2 = *floats.choose(&mut rng).unwrap();
        let u = *ints.choose(&mut rng).unwrap();
        let u2 = *ints.choose(&mut rng).unwrap();
        match rng.random_range(0..11) {
            0 => {
                let op = *[
                    FloatUnary::Neg,
                    FloatUnary::Abs,
                    FloatUnary::Sin,
                    FloatUnary::Cos,
                    FloatUnary::Tanh,
                    FloatUnary::Erf,
                    FloatUnary::Square,
                ]
                .choose(&mut rng)
                .unwrap();
                floats.push(match op {
                    FloatUnary::Neg => -f,
                    FloatUnary::Abs => f.abs(),
                    FloatUnary::Sin => f.sin(),
                    FloatUnary::Cos => f.cos(),
                    FloatUnary::Tanh => f.tanh(),
                    FloatUnary::Erf => f.erf(),
                    _ => f.square(),
                });
            }
            1 => floats.push(match rng.random_range(0..4) {
                0 => (f.abs() + 1.0).sqrt(),
                1 => (f.abs() + 1.0).log(),
                2 => (f * 0.25).exp(),
                _ => (f.abs() + 1.0).recip(),
            }),
            2 | 3 => {
                let op = *[
                    BinaryOp::Add,
                    BinaryOp::Sub,
                    BinaryOp::Mul,
                    BinaryOp::Min,
                    BinaryOp::Max,
                ]
                .choose(&mut rng)
                .unwrap();
                floats.push(match op {
                    BinaryOp::Add => f + f2,
                    BinaryOp::Sub => f - f2,
                    BinaryOp::Mul => f * f2,
                    BinaryOp::Min => f.min(f2),
                    _ => f.max(f2),
                });
            }
            4 => floats.push(match rng.random_range(0..2) {
                0 => f / (f2.abs() + 1.0),
                _ => (f.abs() + 0.5).pow(f2.tanh()),
            }),
            5 => {
                let op = *[
                    CompareOp::Lt,
                    CompareOp::Le,
                    CompareOp::Gt,
                    CompareOp::Ge,
                    CompareOp::Eq,
                    CompareOp::Ne,
                ]
                .choose(&mut rng)
                .unwrap();
                let (x, y) = if rng.random_bool(0.5) {
                    (f, f2)
                } else {
                    (u, u2)
                };
                bools.push(match op {
                    CompareOp::Lt => x.lt(y),
                    CompareOp::Le => x.le(y),
                    CompareOp::Gt => x.gt(y),
                    CompareOp::Ge => x.ge(y),
                    CompareOp::Eq => x.eq(y),
                    _ => x.ne(y),
                });
            }
            6 if !bools.is_empty() => {
                let c = *bools.choose(&mut rng).unwrap();
                let c2 = *bools.choose(&mut rng).unwrap();
                match rng.random_range(0..5) {
                    0 => floats.push(g.select(c, f, f2)),
                    1 => ints.push(g.select(c, u, u2)),
                    2 => bools.push(c.and(c2)),
                    3 => bools.push(!c.or(c2)),
                    _ => floats.push(c.cast(DType::F32)),
                }
            }
            7 => {
                let op = *[
                    BinaryOp::Add,
                    BinaryOp::Sub,
                    BinaryOp::Mul,
                    BinaryOp::Min,
                    BinaryOp::Max,
                ]
                .choose(&mut rng)
                .unwrap();
                ints.push(match op {
                    BinaryOp::Add => u + u2,
                    BinaryOp::Sub => u - u2,
                    BinaryOp::Mul => u * u2,
                    BinaryOp::Min => u.min(u2),
                    _ => u.max(u2),
                });
            }
            8 => floats.push(match rng.random_range(0..2) {
                0 => g.random_uniform([u, u2], [g.lane_index(), u], rng.random_range(0..2)),
                _ => u.cast(DType::F32) * 0.001,
            }),
            9 => {
                let packed = g.pack(&[f, f2, *floats.choose(&mut rng).unwrap()]);
                floats.push(packed.unpack(rng.random_range(0..3)));
                if rng.random_bool(0.5) {
                    floats.push(packed.unpack(rng.random_range(0..3)) * 2.0);
                }
            }
            _ => {
                let op = *[ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max]
                    .choose(&mut rng)
                    .unwrap();
                floats.push(f.row_reduce(op, COLS) * 0.125);
            }
        }
    }
    // The carry takes a value that depends on the state.
    let next = *floats
        .iter()
        .rev()
        .find(|v| v.id() != carried.id())
        .unwrap();
    g.carry(carried, next + carried * 0.5);
    // Every computed value, param and lane index is an output (inputs never are), and the
    // inputs all feed one more output, so nothing dangles.
    let [a, b, k] = [floats[0], floats[1], ints[0]];
    g.output("base", a * b + k.cast(DType::F32));
    let inputs = [a.id(), b.id(), carried.id(), k.id()];
    for (index, value) in floats.iter().chain(&ints).chain(&bools).enumerate() {
        if !inputs.contains(&value.id()) {
            g.output(&format!("o{index}"), *value);
        }
    }
    g.build().expect("random graphs are well-typed")
}

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
    let config = Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    runner
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
