//! Every strategy on a few graphs against the interpreter; ledger counts; bit identity
//! across levels, thread counts and select laziness.

use super::cartpole::{self, Mode};
use super::*;
use crate::cpu::CpuEngine;
use crate::cpu::interp::ops::Op as ChunkOp;
use crate::cpu::launch::Body;
use crate::cpu::launches::Launch;
use crate::exec::LaunchLedger;
use crate::graph::{DType, GraphBuilder, ReduceOp};
use std::sync::Arc;

fn graphs() -> Vec<(String, Graph, Params)> {
    let mut out = Vec::new();
    for (mode, packed) in [
        (Mode::SameStep, false),
        (Mode::NextStep, false),
        (Mode::SameStep, true),
    ] {
        let name = format!("cartpole {mode:?} packed={packed}");
        out.push((name, cartpole::graph(mode, packed), cartpole::params()));
    }
    let b = GraphBuilder::new();
    let x = b.input("x", DType::F32);
    let mean = x.row_reduce(ReduceOp::Mean, 8);
    let c = x - mean;
    let var = (c * c).row_reduce(ReduceOp::Mean, 8);
    b.output("y", (c / (var + 1e-5).sqrt()).tanh());
    b.output("z", (x * 2.0 + 1.0).sin());
    out.push(("layernorm".into(), b.build().unwrap(), Params::new()));
    out
}

/// Inputs of one interpreter step `s` of a K-step input set.
fn step_inputs(graph: &Graph, inputs: &Inputs, n: usize, s: usize) -> Inputs {
    inputs
        .iter()
        .map(|(name, v)| {
            let id = graph.input_id(name).unwrap();
            let w = match graph.node(id).shape {
                crate::graph::Shape::Lanes => 1,
                crate::graph::Shape::Packed(k) => k as usize,
            };
            let per_step = graph.carry_of(id).is_none() && v.len() > n * w;
            let (lo, hi) = if per_step {
                (s * n * w, (s + 1) * n * w)
            } else {
                (0, n * w)
            };
            let sliced = match v {
                HostArray::F32(v) => HostArray::F32(v[lo..hi].to_vec()),
                HostArray::U32(v) => HostArray::U32(v[lo..hi].to_vec()),
            };
            (name.clone(), sliced)
        })
        .collect()
}

/// The interpreter run for `k` steps: per-step outputs concatenated step-major, last state.
fn interpret_steps(
    graph: &Graph,
    n: usize,
    k: usize,
    inputs: &Inputs,
    params: &Params,
) -> HashMap<String, HostArray> {
    let mut state = inputs.clone();
    let mut out: HashMap<String, HostArray> = HashMap::new();
    for s in 0..k {
        let step = step_inputs(graph, &state, n, s);
        let r = run_interpreter(graph, n, &step, params);
        for (name, v) in r {
            if let Some(input) = name.strip_prefix("next:") {
                state.insert(input.to_string(), v.clone());
                out.insert(name, v);
            } else {
                match (out.get_mut(&name), v) {
                    (Some(HostArray::F32(a)), HostArray::F32(b)) => a.extend(b),
                    (Some(HostArray::U32(a)), HostArray::U32(b)) => a.extend(b),
                    (_, v) => {
                        out.insert(name, v);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_strategy_matches_the_interpreter_and_the_plan_ledger() {
    let strategies = [
        Strategy::Eager,
        Strategy::Vertical,
        Strategy::Horizontal,
        Strategy::Fused,
        Strategy::FusedSteps(3),
        Strategy::XlaDefault,
    ];
    for (name, graph, params) in graphs() {
        for strategy in strategies {
            let Ok(plan) = Plan::build(&graph, strategy, &PlanOptions::default()) else {
                continue;
            };
            if let Err(error) =
                super::cpu_executor(graph.clone(), plan.clone(), 8, CpuOptions::default())
            {
                assert!(
                    name.contains("packed=true") && plan.steps_per_launch > 1,
                    "{error}"
                );
                continue;
            }
            let k = plan.steps_per_launch as usize;
            for n in [1, 17, 1000, 4104] {
                if graph
                    .nodes()
                    .iter()
                    .any(|node| matches!(node.op, crate::graph::Op::RowReduce(..)))
                    && n % 8 != 0
                {
                    continue;
                }
                let inputs = if name == "layernorm" {
                    Inputs::from([("x".into(), HostArray::F32(Gen(5).f32s(n, -3.0, 3.0)))])
                } else {
                    cartpole::inputs(&graph, n, k, n as u64)
                };
                let want = interpret_steps(&graph, n, k, &inputs, &params);
                let ledger = Arc::new(LaunchLedger::new());
                let mut exec = executor(
                    &graph,
                    plan.clone(),
                    n,
                    &inputs,
                    &params,
                    CpuOptions::default(),
                )
                .with_ledger(ledger.clone());
                exec.run().unwrap();
                let got = results(&exec);
                for (out, w) in &want {
                    assert_close(
                        &format!("{name} {strategy} n={n} {out}"),
                        &got[out],
                        w,
                        1e-5,
                    );
                }
                let totals = ledger.totals();
                assert_eq!(
                    totals.launches as usize,
                    plan.launches.len(),
                    "{name} {strategy}"
                );
                assert_eq!(
                    totals.elements as usize,
                    plan.launches.len() * n * k - copies(&plan) * n * (k - 1)
                );
                let bytes = plan.bytes_per_lane_step(&graph) * (n * k) as f64;
                assert_eq!(
                    totals.bytes_moved() as f64,
                    bytes,
                    "{name} {strategy} n={n}"
                );
            }
        }
    }
}

fn copies(plan: &Plan) -> usize {
    plan.launches
        .iter()
        .filter(|l| matches!(l, crate::plan::PlannedLaunch::CopyState { .. }))
        .count()
}

#[test]
fn levels_threads_and_laziness_give_identical_bits() {
    for (name, graph, params) in graphs()
        .into_iter()
        .filter(|(n, ..)| n.starts_with("cartpole"))
    {
        for strategy in [Strategy::Fused, Strategy::Eager, Strategy::FusedSteps(4)] {
            let Ok(plan) = Plan::build(&graph, strategy, &PlanOptions::default()) else {
                continue;
            };
            if super::cpu_executor(graph.clone(), plan.clone(), 8, CpuOptions::default()).is_err() {
                continue;
            }
            let n = 4099;
            let inputs = cartpole::inputs(&graph, n, plan.steps_per_launch as usize, 11);
            let run = |options: CpuOptions| {
                let mut exec = executor(&graph, plan.clone(), n, &inputs, &params, options);
                exec.run().unwrap();
                exec.run().unwrap();
                results(&exec)
            };
            let base = CpuOptions {
                chunk: 256,
                parallel_min_lanes: 0,
                ..CpuOptions::single(SimdLevel::Scalar)
            };
            let reference = run(CpuOptions {
                lazy_selects: false,
                engine: CpuEngine::Interpreted,
                ..base.clone()
            });
            for level in levels() {
                for threads in [1, 2] {
                    for lazy in [false, true] {
                        for engine in [CpuEngine::Interpreted, CpuEngine::Compiled] {
                            let options = CpuOptions {
                                simd: level,
                                threads,
                                lazy_selects: lazy,
                                engine,
                                ..base.clone()
                            };
                            let what = format!(
                                "{name} {strategy} {level} threads={threads} lazy={lazy} {engine}"
                            );
                            assert_bits(&what, &run(options), &reference);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_reset_branch_is_guarded_in_the_fused_step() {
    let graph = cartpole::graph(Mode::NextStep, false);
    let plan = Plan::build(&graph, Strategy::Fused, &PlanOptions::default()).unwrap();
    let interpreted = CpuOptions {
        engine: CpuEngine::Interpreted,
        ..CpuOptions::default()
    };
    let exec = super::cpu_executor(graph, plan, 64, interpreted).unwrap();
    let Launch::Kernels {
        body: Body::Program(program),
        ..
    } = &exec.launches.launches[0]
    else {
        panic!("interpreted")
    };
    let ops = &program.ops;
    // Every draw of the reset (the four components' Threefry words) runs behind the one
    // guard the lowering placed before the selects on `done`.
    let guarded: Vec<bool> = ops
        .iter()
        .scan(0u32, |inside, op| {
            let guarded = *inside > 0;
            *inside = match op {
                ChunkOp::Guard { len, .. } => *len,
                _ => inside.saturating_sub(1),
            };
            Some(guarded)
        })
        .collect();
    let draws: Vec<usize> = (0..ops.len())
        .filter(|&i| matches!(ops[i], ChunkOp::Random(..)))
        .collect();
    let guards = ops
        .iter()
        .filter(|op| matches!(op, ChunkOp::Guard { .. }))
        .count();
    assert_eq!(guards, 1, "one guard for the reset branch");
    assert_eq!(draws.len(), 4, "four reset draws");
    assert!(draws.iter().all(|&i| guarded[i]), "every draw is guarded");
}

#[test]
fn bad_names_lengths_and_types_are_errors() {
    let graph = cartpole::graph(Mode::SameStep, false);
    let plan = Plan::build(&graph, Strategy::Fused, &PlanOptions::default()).unwrap();
    assert!(super::cpu_executor(graph.clone(), plan.clone(), 0, CpuOptions::default()).is_err());
    let mut exec = super::cpu_executor(graph, plan, 10, CpuOptions::default()).unwrap();
    assert!(
        exec.set_input("nope", &HostArray::F32(vec![0.0; 10]))
            .is_err()
    );
    assert!(exec.set_input("x", &HostArray::F32(vec![0.0; 9])).is_err());
    assert!(exec.set_input("x", &HostArray::U32(vec![0; 10])).is_err());
    assert!(exec.set_param("tau", Scalar::U32(1)).is_err());
    assert!(exec.set_param("nope", Scalar::F32(1.0)).is_err());
    assert!(exec.output("nope").is_err());
    assert!(exec.bind_input("x", &CpuBuffer::zeroed(9)).is_err());
    // A buffer the plan writes cannot become one of its inputs.
    let obs = exec.output("obs").unwrap().clone();
    assert!(exec.bind_input("x", &CpuBuffer::zeroed(10)).is_ok());
    assert!(exec.bind_input("action", &obs).is_err());
    exec.bind_input("action", &CpuBuffer::from_u32(&[1; 10]))
        .unwrap();
    exec.run().unwrap();
    assert_eq!(exec.output("obs").unwrap().len(), 40);
}

#[test]
fn the_compiled_fused_step_draws_only_in_the_lanes_that_reset() {
    use crate::cpu::binder::Binder;
    use crate::cpu::native::emit::{SPLIT_MIN_LANES, emit_launch};
    let binder = Binder {
        buffer: &|_| 0,
        pin: &|_| 0,
    };
    for mode in [Mode::NextStep, Mode::SameStep] {
        let graph = cartpole::graph(mode, false);
        for strategy in [Strategy::Fused, Strategy::FusedSteps(3)] {
            let plan = Plan::build(&graph, strategy, &PlanOptions::default()).unwrap();
            let lowered = crate::lir::lower::lower_plan(&graph, &plan);
            let steps = plan.steps_per_launch;
            let what = format!("{mode:?} {strategy}");
            let masked = emit_launch(&lowered[0], steps, "f", &binder, false, None).unwrap();
            assert!(!masked.contains("cf_compact("), "{what}");
            let c = emit_launch(&lowered[0], steps, "f", &binder, true, None).unwrap();
            // Ranges under SPLIT_MIN_LANES run the masked loop; the others compact first.
            let short = format!("< {SPLIT_MIN_LANES}) {{");
            let split = &c[c.find(&short).expect(&what)..];
            let split = &split[split.find("} else {").expect(&what)..];
            let compact = split.find("cf_compact(").expect(&what);
            let draw = split.find("cf_threefry(").expect(&what);
            assert!(
                compact < draw,
                "{what}: a draw before the lanes are compacted"
            );
            assert_eq!(
                split.matches("cf_threefry(").count(),
                masked.matches("cf_threefry(").count(),
                "{what}"
            );
        }
    }
}

#[test]
fn the_compiled_fused_step_updates_its_state_in_place_with_the_interpreters_bits() {
    let graph = cartpole::graph(Mode::NextStep, false);
    let carried: Vec<String> = graph
        .carries()
        .iter()
        .map(|c| {
            let name = graph.carry_name(c.input);
            name.trim_start_matches("next:").to_owned()
        })
        .collect();
    let n = 300;
    let params = cartpole::params();
    // xla-default copies no carry of this graph (each is read before, or elementwise in,
    // the fusion writing it); `resets` is read by the counter fusion before the step's
    // fusion writes it, so it is double-buffered, and the others are updated in place.
    let xla: Vec<String> = (carried.iter())
        .filter(|name| *name != "resets")
        .cloned()
        .collect();
    for (strategy, in_place) in [
        (Strategy::Fused, carried.clone()),
        (Strategy::FusedSteps(3), carried.clone()),
        (Strategy::Eager, Vec::new()),
        (Strategy::XlaDefault, xla),
    ] {
        let plan = Plan::build(&graph, strategy, &PlanOptions::default()).unwrap();
        let inputs = cartpole::inputs(&graph, n, plan.steps_per_launch as usize, 5);
        let run = |engine: CpuEngine| {
            let options = CpuOptions {
                engine,
                ..CpuOptions::default()
            };
            let mut exec = executor(&graph, plan.clone(), n, &inputs, &params, options);
            // The state starts in a buffer of the caller's, as a reset hands it over.
            let state = exec.input("x").unwrap().clone();
            let outside = CpuBuffer::from_f32(&state.to_f32());
            exec.bind_input("x", &outside).unwrap();
            for _ in 0..3 {
                exec.run().unwrap();
            }
            let names: Vec<String> = exec
                .in_place_inputs()
                .iter()
                .map(|s| s.to_string())
                .collect();
            (
                results(&exec),
                names,
                exec.input("x").unwrap().same(&outside),
            )
        };
        let (interpreted, none, _) = run(CpuEngine::Interpreted);
        assert!(
            none.is_empty(),
            "{strategy}: the interpreter double-buffers"
        );
        let (compiled, names, kept) = run(CpuEngine::Compiled);
        assert_bits(&format!("{strategy} in place"), &compiled, &interpreted);
        // In input order.
        let mut in_place = in_place;
        in_place.sort_by_key(|name| graph.input_id(name));
        assert_eq!(names, in_place, "{strategy}");
        assert_eq!(kept, in_place.iter().any(|name| name == "x"), "{strategy}");
    }
}
