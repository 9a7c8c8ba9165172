//! Property test: on random valid graphs, every strategy computes what the interpreter does.
//!
//! Graphs mix every op family (f32 math, u32 arithmetic, compares, logic, select, casts,
//! random numbers, pack/unpack, row reductions) over two f32 inputs, one u32 input, params
//! and a loop-carried f32 input, so `fused-x3` is checked against three interpreter steps.
//! The runner's RNG is fixed: the same graphs every run. The lanes are also run cut into two
//! banks with their own params ([`Executor::banked`]): each bank must compute what the
//! interpreter does on its lanes alone.

use std::collections::HashMap;

use cartfuse::fusion::exec::Executor;
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

/// Bank `bank`'s params.
fn params(bank: usize) -> HashMap<String, Scalar> {
    HashMap::from([
        ("p".to_string(), Scalar::F32(0.75 + bank as f32)),
        ("q".to_string(), Scalar::U32(12_345 + 7 * bank as u32)),
    ])
}

/// Lanes `lanes` of every step of `values` (`steps` steps of `N` lanes, `width` words a lane).
fn lanes_of(values: &HostArray, steps: std::ops::Range<usize>, lanes: std::ops::Range<usize>, width: usize) -> HostArray {
    let pick = |v: &[u32]| -> Vec<u32> {
        steps.clone().flat_map(|t| v[(t * N + lanes.start) * width..(t * N + lanes.end) * width].to_vec()).collect()
    };
    match values {
        HostArray::F32(v) => {
            let bits: Vec<u32> = v.iter().map(|x| x.to_bits()).collect();
            HostArray::F32(pick(&bits).into_iter().map(f32::from_bits).collect())
        }
        HostArray::U32(v) => HostArray::U32(pick(v)),
    }
}

/// The host values of `array`, appended to `into`.
fn append(into: &mut Option<HostArray>, array: HostArray) {
    match (into.as_mut(), array) {
        (None, array) => *into = Some(array),
        (Some(HostArray::F32(a)), HostArray::F32(b)) => a.extend(b),
        (Some(HostArray::U32(a)), HostArray::U32(b)) => a.extend(b),
        _ => unreachable!("one output keeps its type"),
    }
}

fn check(graph: &Graph, strategy: Strategy, banks: usize) {
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
    let mut exec = Executor::banked(util::backend(), graph.clone(), plan, N, banks).expect("runner");
    exec.poison_outputs();
    let state: Vec<f32> = (0..N).map(|i| i as f32 * 0.01).collect();
    exec.set_input("s", &HostArray::F32(state.clone())).unwrap();
    let step_inputs = inputs(0, steps);
    for name in ["a", "b", "k"] {
        if graph.input_id(name).is_some() {
            exec.set_input(name, &step_inputs[name]).unwrap();
        }
    }
    for bank in 0..banks {
        for (name, value) in params(bank) {
            if graph.params().iter().any(|(_, p)| *p == name) {
                exec.set_bank_params(bank, &[(&name, value)]).unwrap();
            }
        }
    }
    exec.run().unwrap();
    // The interpreter, one bank's lanes and one step at a time, carrying `s`.
    let m = N / banks;
    let mut per_step: Vec<HashMap<String, Option<HostArray>>> = vec![HashMap::new(); steps];
    let mut carried_all = None;
    for bank in 0..banks {
        let lanes = bank * m..(bank + 1) * m;
        let mut carried = lanes_of(&HostArray::F32(state.clone()), 0..1, lanes.clone(), 1);
        for (step, expected) in per_step.iter_mut().enumerate() {
            let mut bound: HashMap<String, HostArray> = step_inputs
                .iter()
                .map(|(name, values)| (name.clone(), lanes_of(values, step..step + 1, lanes.clone(), 1)))
                .filter(|(name, _)| graph.input_id(name).is_some())
                .collect();
            bound.insert("s".into(), carried.clone());
            let out = interpret::<f32>(graph, m, &bound, &params(bank)).unwrap();
            carried = out["next:s"].to_host();
            for output in graph.outputs() {
                append(expected.entry(output.name.clone()).or_default(), out[&output.name].to_host());
            }
        }
        append(&mut carried_all, carried);
    }
    for output in graph.outputs() {
        let got = exec.read_output(&output.name).unwrap();
        let width = got.len() / (N * steps);
        for (step, want) in per_step.iter().enumerate() {
            let got_step = lanes_of(&got, step..step + 1, 0..N, width);
            let want = match want[&output.name].clone().expect("every bank ran") {
                HostArray::F32(v) => cartfuse::fusion::interpret::Values::<f32>::Float(v),
                HostArray::U32(v) => cartfuse::fusion::interpret::Values::<f32>::Int(v),
            };
            assert_close(
                &format!("{strategy} in {banks} banks: {} step {step}\n{graph}", output.name),
                &got_step,
                &want,
                2,
                1e-6,
            );
        }
    }
    let state = exec.read_input("s").unwrap();
    let want = match carried_all.expect("every bank ran") {
        HostArray::F32(v) => cartfuse::fusion::interpret::Values::<f32>::Float(v),
        HostArray::U32(_) => unreachable!(),
    };
    assert_close(
        &format!("{strategy} in {banks} banks: carried s\n{graph}"),
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
                check(&graph, strategy, 1);
            }
            // Two banks of 32 lanes: rows of row reductions stay within a bank.
            for strategy in [Strategy::Eager, Strategy::Fused, Strategy::FusedSteps(3)] {
                check(&graph, strategy, 2);
            }
            Ok(())
        })
        .unwrap();
}
