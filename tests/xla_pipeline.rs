//! XLA's fusion pipeline (`xla-default`): its rules hold on random graphs, and its kernel
//! counts on the study's CartPole program, rung by rung.

use std::collections::BTreeMap;

use cartfuse::env::AutoresetMode;
use cartfuse::env::cartpole::CartPole;
use cartfuse::env::graph::{StateLayout, step_graph};
use cartfuse::fusion::graph::transform::random_as_inputs;
use cartfuse::fusion::graph::{Graph, NodeId, Op};
use cartfuse::fusion::plan::cost::is_expensive;
use cartfuse::fusion::plan::xla::MAX_OPERANDS_AND_OUTPUTS;
use cartfuse::fusion::plan::{Plan, PlanOptions, PlannedLaunch, Slot, Strategy};
use proptest::prelude::*;

use crate::graph_gen::{deterministic_runner, random_graph};

fn options(opaque_random: bool, concat_rule: bool) -> PlanOptions {
    PlanOptions {
        opaque_random,
        concat_rule,
        ..PlanOptions::default()
    }
}

/// Checks every rule of the pipeline on one plan.
fn check_rules(graph: &Graph, plan: &Plan, options: &PlanOptions) {
    let users = graph.users();
    let mut computed_by: BTreeMap<NodeId, usize> = BTreeMap::new();
    for kernel in &plan.kernels {
        assert!(
            kernel.bindings() <= MAX_OPERANDS_AND_OUTPUTS,
            "{} binds {}",
            kernel.name,
            kernel.bindings()
        );
        for node in &kernel.computes {
            *computed_by.entry(*node).or_default() += 1;
        }
        let random = |n: &NodeId| matches!(graph.node(*n).op, Op::RandomUniform { .. });
        if options.opaque_random && kernel.computes.iter().any(random) {
            assert!(
                kernel.computes.iter().all(random),
                "a custom call fused with other ops: {kernel:?}"
            );
        }
        if options.concat_rule {
            for node in &kernel.computes {
                if matches!(graph.node(*node).op, Op::Pack(_)) {
                    let readers = users[node.index()]
                        .iter()
                        .filter(|u| kernel.computes.contains(u))
                        .count();
                    assert!(
                        readers <= 1,
                        "a concatenate fused under {readers} readers:\n{}",
                        plan.explain(graph)
                    );
                }
            }
        }
    }
    for (node, kernels) in computed_by {
        if is_expensive(graph, node) {
            assert_eq!(kernels, 1, "expensive {node} duplicated");
        }
    }
    // Horizontal launches hold kernels that do not read each other.
    for launch in &plan.launches {
        if let PlannedLaunch::Kernels(members) = launch {
            for a in members {
                for b in members {
                    let (ka, kb) = (&plan.kernels[*a], &plan.kernels[*b]);
                    assert!(
                        !ka.reads
                            .iter()
                            .any(|r| kb.writes.iter().any(|(w, _)| w == r)),
                        "{} reads {} in one launch",
                        ka.name,
                        kb.name
                    );
                }
            }
        }
    }
    // A carry left to share the loop buffer (no copy) is never read after the launch that
    // writes its next value; one that is copied back is copied after every kernel.
    let copied = plan.copied_carries();
    let touches = |launch: &PlannedLaunch, slot: Slot, write: bool| {
        launch.kernels().iter().any(|k| {
            let kernel = &plan.kernels[*k];
            match write {
                true => kernel.writes.iter().any(|(s, _)| *s == slot),
                false => kernel.reads.contains(&slot),
            }
        })
    };
    for carry in graph.carries() {
        let (input, next) = (Slot::Input(carry.input), Slot::Next(carry.input));
        let writer = plan.launches.iter().position(|l| touches(l, next, true));
        if let Some(writer) = writer.filter(|_| !copied.contains(&carry.input)) {
            assert!(
                !plan.launches[writer + 1..]
                    .iter()
                    .any(|l| touches(l, input, false)),
                "{input:?} is read after its next value is written, without a copy:\n{}",
                plan.explain(graph)
            );
        }
    }
    let first_copy = (plan.launches.iter())
        .position(|l| matches!(l, PlannedLaunch::CopyState { .. }))
        .unwrap_or(plan.launches.len());
    assert_eq!(plan.launches.len() - first_copy, copied.len());
}

#[test]
fn xla_rules_hold_on_random_graphs() {
    deterministic_runner(48)
        .run(&(any::<u64>(), 4usize..60), |(seed, ops)| {
            let graph = random_graph(seed, ops);
            for (opaque, concat) in [(true, true), (false, true), (false, false)] {
                let options = options(opaque, concat);
                let plan = Plan::build(&graph, Strategy::XlaDefault, &options).unwrap();
                check_rules(&graph, &plan, &options);
            }
            Ok(())
        })
        .unwrap();
}

fn cartpole(layout: StateLayout) -> Graph {
    step_graph(&CartPole::default(), AutoresetMode::NextStep, layout)
}

/// Launches per step of `xla-default` on `graph`: (fusion launches, state copies).
fn launches(graph: &Graph, options: &PlanOptions) -> (usize, usize) {
    let plan = Plan::build(graph, Strategy::XlaDefault, options).unwrap();
    check_rules(graph, &plan, options);
    let copies = plan
        .launches
        .iter()
        .filter(|l| matches!(l, PlannedLaunch::CopyState { .. }))
        .count();
    (plan.launches.len() - copies, copies)
}

#[test]
fn the_study_rungs_have_their_kernel_counts() {
    let packed = cartpole(StateLayout::Packed);
    let drawn = |graph: &Graph| random_as_inputs(graph, "draw").unwrap();
    let soa = cartpole(StateLayout::StructOfArrays);
    // (fusion launches, state copies) per step, rung by rung.
    let baseline = launches(&packed, &options(true, true));
    let precomputed = launches(&drawn(&packed), &options(false, true));
    let patched = launches(&drawn(&packed), &options(false, false));
    let no_concatenate = launches(&drawn(&soa), &options(false, true));
    // The baseline: the stepped state packed by a concatenate read by four slices in the
    // termination and reset fusions (so it is written), the termination/counter fusion,
    // the threefry custom call, the reset select packing the next state. One loop copy:
    // `needs_reset`, which the reset fusion reads after the termination fusion writes
    // its next value; the others are dead or read elementwise where they are written.
    assert_eq!(baseline, (4, 1));
    // Drawn ahead: no custom call (its launch of every 10 steps is the engine's).
    assert_eq!(precomputed, (3, 1));
    // Patched: the concatenate fuses into the termination fusion too. XLA's cost rule
    // calls sin and cos cheap, so the physics is computed again in both fusions; the
    // reset fusion reads the packed state through slices where it writes the next one,
    // so XLA keeps the state's loop copy beside `needs_reset`'s.
    assert_eq!(patched, (2, 2));
    // No concatenate: two fusions, and no copy (every component is read elementwise by
    // the fusion writing its next value).
    assert_eq!(no_concatenate, (2, 0));
}
