//! XLA's pipeline on small graphs, one rule at a time.

use crate::graph::{DType, Graph, GraphBuilder, Var};
use crate::plan::{Plan, PlanOptions, PlannedLaunch, Strategy};

fn plan(graph: &Graph, options: &PlanOptions) -> Plan {
    Plan::build(graph, Strategy::XlaDefault, options).unwrap()
}

fn kernels_and_launches(graph: &Graph, options: &PlanOptions) -> (usize, usize) {
    let plan = plan(graph, options);
    (plan.kernels.len(), plan.launches.len())
}

#[test]
fn a_chain_of_cheap_ops_is_one_fusion() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    g.output("y", ((x * 2.0 + 1.0).abs() - 3.0) * x);
    let graph = g.build().unwrap();
    assert_eq!(
        kernels_and_launches(&graph, &PlanOptions::default()),
        (1, 1)
    );
}

#[test]
fn an_expensive_producer_of_two_users_is_not_duplicated_but_shares_their_fusion() {
    // s = sin(x) feeds y and z: too expensive to duplicate into both, so instruction
    // fusion leaves it alone; multi-output fusion then puts s, y and z in one fusion.
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let s = x.sin();
    g.output("y", s * 2.0);
    g.output("z", s + 1.0);
    let graph = g.build().unwrap();
    let plan = plan(&graph, &PlanOptions::default());
    assert_eq!(plan.kernels.len(), 1, "{}", plan.explain(&graph));
    let sin = plan.kernels[0]
        .computes
        .iter()
        .filter(|n| graph.node(**n).op.name() == "sin")
        .count();
    assert_eq!(sin, 1);
}

#[test]
fn a_cheap_unary_producer_is_duplicated_into_users_of_other_shapes() {
    // n = -x is read by a packed output and a lane output: multi-output fusion may not
    // join fusions writing different shapes, so n is computed by both; the two fusions
    // are independent and share one horizontal launch.
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let n = -x;
    g.output("pair", g.pack(&[n * 2.0, n * 3.0]));
    g.output("z", n + 1.0);
    let graph = g.build().unwrap();
    let plan = plan(&graph, &PlanOptions::default());
    let negs: usize = plan
        .kernels
        .iter()
        .map(|k| {
            k.computes
                .iter()
                .filter(|c| graph.node(**c).op.name() == "neg")
                .count()
        })
        .sum();
    assert_eq!(plan.kernels.len(), 2, "{}", plan.explain(&graph));
    assert_eq!(negs, 2);
    assert_eq!(plan.launches.len(), 1);
}

#[test]
fn siblings_reading_one_array_become_one_multi_output_fusion() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    g.output("y", x * 2.0);
    g.output("flag", x.gt(g.f32(0.0)));
    let graph = g.build().unwrap();
    assert_eq!(
        kernels_and_launches(&graph, &PlanOptions::default()),
        (1, 1)
    );
}

fn packed_state() -> Graph {
    // A JAX-style step: the state packed by a concatenate whose four slices are all read
    // by one expression.
    let g = GraphBuilder::new();
    let x: Vec<Var> = (0..4)
        .map(|i| g.input(&format!("s{i}"), DType::F32))
        .collect();
    let stepped: Vec<Var> = x.iter().map(|v| *v * 1.5).collect();
    let packed = g.pack(&stepped);
    let columns: Vec<Var> = (0..4).map(|c| packed.unpack(c)).collect();
    g.output("sum", columns[0] + columns[1] + columns[2] + columns[3]);
    g.build().unwrap()
}

#[test]
fn a_concatenate_read_by_several_ops_is_not_fused_unless_the_rule_is_patched() {
    let graph = packed_state();
    let baseline = plan(&graph, &PlanOptions::default());
    assert_eq!(baseline.kernels.len(), 2, "{}", baseline.explain(&graph));
    assert!(
        baseline
            .explain(&graph)
            .contains("concatenate read by 4 ops")
    );
    let patched = PlanOptions {
        concat_rule: false,
        ..PlanOptions::default()
    };
    assert_eq!(kernels_and_launches(&graph, &patched), (1, 1));
}

#[test]
fn random_ops_of_one_key_are_one_opaque_custom_call() {
    let g = GraphBuilder::new();
    let key = [g.param("k0", DType::U32), g.param("k1", DType::U32)];
    let lane = g.lane_index();
    let a = g.random_uniform(key, [lane, g.u32(0)], 0);
    let b = g.random_uniform(key, [lane, g.u32(0)], 1);
    g.output("y", a * b + 1.0);
    let graph = g.build().unwrap();
    let opaque = plan(&graph, &PlanOptions::default());
    assert_eq!(opaque.kernels.len(), 2, "{}", opaque.explain(&graph));
    assert_eq!(opaque.kernels[0].computes.len(), 2, "one call draws both");
    let fused = PlanOptions {
        opaque_random: false,
        ..PlanOptions::default()
    };
    assert_eq!(kernels_and_launches(&graph, &fused), (1, 1));
}

#[test]
fn no_fusion_binds_more_than_64_operands_and_outputs() {
    let g = GraphBuilder::new();
    let inputs: Vec<Var> = (0..100)
        .map(|i| g.input(&format!("x{i}"), DType::F32))
        .collect();
    let sum = inputs[1..].iter().fold(inputs[0], |acc, x| acc + *x);
    g.output("sum", sum);
    let graph = g.build().unwrap();
    let plan = plan(&graph, &PlanOptions::default());
    assert!(plan.kernels.len() >= 2, "{}", plan.explain(&graph));
    for kernel in &plan.kernels {
        assert!(
            kernel.bindings() <= super::MAX_OPERANDS_AND_OUTPUTS,
            "{kernel:?}"
        );
    }
}

#[test]
fn independent_root_fusions_run_as_one_horizontal_launch() {
    // Two independent outputs of one dtype that share no operand: two fusions (nothing
    // for multi-output fusion to share), one launch.
    let g = GraphBuilder::new();
    let a = g.input("a", DType::F32);
    let b = g.input("b", DType::F32);
    g.output("y", a * 2.0);
    g.output("z", b + 1.0);
    let graph = g.build().unwrap();
    let plan = plan(&graph, &PlanOptions::default());
    assert_eq!(plan.kernels.len(), 2, "{}", plan.explain(&graph));
    assert_eq!(plan.launches, vec![PlannedLaunch::Kernels(vec![0, 1])]);
}

#[test]
fn a_draw_that_depends_on_another_of_its_key_is_a_call_of_its_own() {
    // `c` and `a` are independent draws of one key: one call. `b`'s counter is computed
    // from `a` outside the call, so `b` cannot join it (the call would read its own
    // output through another fusion).
    let g = GraphBuilder::new();
    let key = [g.param("k0", DType::U32), g.param("k1", DType::U32)];
    let lane = g.lane_index();
    let c = g.random_uniform(key, [lane, g.u32(0)], 0);
    let a = g.random_uniform(key, [lane, g.u32(1)], 0);
    let counter = (a * 100.0).cast(DType::U32);
    let b = g.random_uniform(key, [counter, g.u32(2)], 0);
    g.output("y", c + b);
    let (a, b, c) = (a.id(), b.id(), c.id());
    let graph = g.build().unwrap();
    let plan = Plan::build(&graph, Strategy::XlaDefault, &PlanOptions::default())
        .expect("a plan, not a cycle of fusions");
    let call_of = |draw| (plan.kernels.iter()).position(|k| k.computes.contains(&draw));
    assert_eq!(call_of(c), call_of(a), "{}", plan.explain(&graph));
    assert_ne!(call_of(a), call_of(b), "{}", plan.explain(&graph));
}
