//! Carried state updated in place on the device: the bits of double buffering.

use cartfuse::env::cartpole::{cartpole_step_graph, graph_params};
use cartfuse::env::graph::StateLayout;
use cartfuse::env::{AutoresetMode, CartPoleConfig};
use cartfuse::fusion::cube::Cube;
use cartfuse::fusion::cubecl::wgpu::WgpuRuntime;
use cartfuse::fusion::exec;
use cartfuse::fusion::graph::HostArray;
use cartfuse::fusion::graph::{DType, Graph};
use cartfuse::fusion::plan::{Plan, PlannedKernel, Slot, Strategy};

type Executor = exec::Executor<Cube<WgpuRuntime>>;

/// Values for input `name` over `len` lanes: states near and past the termination bounds,
/// episodes near truncation, some lanes flagged for reset, so every branch runs.
fn input_values(name: &str, dtype: DType, len: usize) -> HostArray {
    let wave = |i: usize, scale: f32| (i as f32 * 0.37).sin() * scale;
    match (name, dtype) {
        ("x", _) => HostArray::F32((0..len).map(|i| wave(i, 2.6)).collect()),
        ("theta", _) => HostArray::F32((0..len).map(|i| wave(i + 3, 0.25)).collect()),
        (_, DType::F32) => HostArray::F32((0..len).map(|i| wave(i + 7, 0.5)).collect()),
        ("action", _) => HostArray::U32((0..len).map(|i| (i * 7 / 3 % 2) as u32).collect()),
        ("elapsed", _) => HostArray::U32((0..len).map(|i| 495 + (i % 7) as u32).collect()),
        ("needs_reset", _) => HostArray::U32((0..len).map(|i| u32::from(i % 5 == 0)).collect()),
        _ => HostArray::U32((0..len).map(|i| i as u32).collect()),
    }
}

fn executor(graph: &Graph, strategy: Strategy, n: usize) -> Executor {
    let plan = Plan::build(graph, strategy, &super::util::plan_options()).unwrap();
    let mut exec = Executor::new(super::backend(), graph.clone(), plan, n).unwrap();
    let steps = exec.plan().steps_per_launch as usize;
    for (id, name) in graph.inputs() {
        let per_step = PlannedKernel::is_per_step(graph, Slot::Input(id));
        let len = n * if per_step { steps } else { 1 };
        let values = input_values(name, graph.node(id).dtype, len);
        exec.set_input(name, &values).unwrap();
    }
    let params = graph_params(&CartPoleConfig::default());
    exec.set_params(&params).unwrap();
    exec
}

/// Every output and every carried input after `runs` runs.
fn results(exec: &mut Executor, graph: &Graph, runs: usize) -> Vec<(String, HostArray)> {
    for _ in 0..runs {
        exec.run().unwrap();
    }
    let outputs = graph.outputs().iter().map(|o| o.name.clone());
    let mut values: Vec<_> = outputs
        .map(|name| (name.clone(), exec.read_output(&name).unwrap()))
        .collect();
    for carry in graph.carries() {
        let name = graph
            .inputs()
            .into_iter()
            .find(|(id, _)| *id == carry.input)
            .unwrap()
            .1;
        values.push((format!("state {name}"), exec.read_input(name).unwrap()));
    }
    values
}

#[test]
fn a_state_updated_in_place_has_the_bits_of_double_buffering() {
    let graph = cartpole_step_graph(AutoresetMode::NextStep, StateLayout::StructOfArrays);
    let carried: Vec<&str> = (graph.inputs().into_iter())
        .filter(|(id, _)| graph.carry_of(*id).is_some())
        .map(|(_, name)| name)
        .collect();
    assert!(
        carried.contains(&"x") && carried.contains(&"elapsed"),
        "{carried:?}"
    );
    // xla-default copies no carry of this graph; `resets` is read by the counter fusion
    // before the step's fusion writes it, so it is double-buffered.
    let xla: Vec<&str> = (carried.iter().copied())
        .filter(|name| *name != "resets")
        .collect();
    for (strategy, expected) in [
        (Strategy::Fused, Some(carried.clone())),
        (Strategy::FusedSteps(3), Some(carried.clone())),
        (Strategy::Eager, Some(Vec::new())),
        (Strategy::XlaDefault, Some(xla)),
        (Strategy::Vertical, None),
        (Strategy::Horizontal, None),
    ] {
        // A multiple of the vector width, and a size that runs one lane per thread.
        for n in [1000, 301] {
            let mut in_place = executor(&graph, strategy, n);
            let names = in_place.in_place_inputs();
            match &expected {
                Some(expected) => assert_eq!(&names, expected, "{strategy}"),
                None => assert!(names.iter().all(|name| carried.contains(name))),
            }
            let in_place_count = names.len();
            // The state starts in a buffer of the caller's, as a reset hands it over.
            let outside = in_place.input("x").unwrap().clone();
            in_place.bind_input("x", &outside).unwrap();
            let mut double = executor(&graph, strategy, n);
            double.double_buffer().unwrap();
            assert!(double.in_place_inputs().is_empty());
            // Each carry in place is bound once, as its next value.
            let bound: usize = in_place.storage_bindings().iter().sum();
            let doubled: usize = double.storage_bindings().iter().sum();
            assert_eq!(bound + in_place_count, doubled, "{strategy}");
            let want = results(&mut double, &graph, 4);
            let got = results(&mut in_place, &graph, 4);
            assert_eq!(got, want, "{strategy} n={n}");
            let kept = cartfuse::fusion::cube::buffers::download::<WgpuRuntime, f32>(
                in_place.client(),
                &outside,
            )
            .unwrap();
            let state = in_place.read_input("x").unwrap();
            if in_place.in_place_inputs().contains(&"x") {
                assert_eq!(
                    HostArray::F32(kept),
                    state,
                    "{strategy}: the bound buffer holds the state"
                );
            }
        }
    }
}
