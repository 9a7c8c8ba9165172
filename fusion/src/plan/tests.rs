//! Planner structure on small graphs.

use super::*;
use crate::graph::{DType, Graph, GraphBuilder};

fn chain() -> Graph {
    // y = sin(x * 2 + 1) and z = cos(x * 2 + 1): a shared cheap producer, two expensive ops.
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    let t = x * 2.0 + 1.0;
    g.output("y", t.sin());
    g.output("z", t.cos());
    g.build().unwrap()
}

#[test]
fn eager_has_one_kernel_per_computing_op() {
    let graph = chain();
    let plan = Plan::build(&graph, Strategy::Eager, &PlanOptions::default()).unwrap();
    assert_eq!(plan.kernels.len(), graph.computing_ops());
    assert_eq!(plan.launches.len(), 4);
    // x read by mul; t1 written/read; t2 written/read twice; y and z written.
    assert_eq!(
        plan.bytes_per_lane_step(&graph),
        (4 + 4) as f64 + (4 + 4) as f64 + 2.0 * (4 + 4) as f64
    );
}

#[test]
fn vertical_duplicates_cheap_producers_and_fused_is_one_kernel() {
    let graph = chain();
    let vertical = Plan::build(&graph, Strategy::Vertical, &PlanOptions::default()).unwrap();
    assert_eq!(vertical.kernels.len(), 2, "{}", vertical.explain(&graph));
    assert!(vertical.kernels.iter().all(|k| k.computes.len() == 3));
    assert_eq!(vertical.bytes_per_lane_step(&graph), 16.0);
    let horizontal = Plan::build(&graph, Strategy::Horizontal, &PlanOptions::default()).unwrap();
    assert_eq!(
        horizontal.launches,
        vec![PlannedLaunch::Kernels(vec![0, 1])]
    );
    let fused = Plan::build(&graph, Strategy::Fused, &PlanOptions::default()).unwrap();
    assert_eq!(fused.kernels.len(), 1);
    assert_eq!(fused.bytes_per_lane_step(&graph), 12.0);
}

#[test]
fn no_duplication_budget_materializes_shared_producers() {
    let graph = chain();
    let options = PlanOptions {
        duplication_budget: 0,
        ..PlanOptions::default()
    };
    let plan = Plan::build(&graph, Strategy::Vertical, &options).unwrap();
    assert_eq!(plan.kernels.len(), 3, "{}", plan.explain(&graph));
    assert!(plan.explain(&graph).contains("duplication budget is spent"));
}

#[test]
fn binding_limit_is_respected() {
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    for i in 0..6 {
        g.output(&format!("y{i}"), x * i as f32);
    }
    let graph = g.build().unwrap();
    let options = PlanOptions {
        max_bindings: 4,
        ..PlanOptions::default()
    };
    let fused = Plan::build(&graph, Strategy::Fused, &options).unwrap();
    assert_eq!(
        fused.kernels.len(),
        6,
        "falls back to one kernel per output"
    );
    assert!(fused.explain(&graph).contains("the device allows 4"));
    let tight = PlanOptions {
        max_bindings: 1,
        ..PlanOptions::default()
    };
    assert!(matches!(
        Plan::build(&graph, Strategy::Vertical, &tight),
        Err(PlanError::TooManyBindings { .. })
    ));
}

#[test]
fn strategy_names_round_trip_and_bad_names_are_errors() {
    for strategy in Strategy::ALL {
        assert_eq!(strategy.to_string().parse::<Strategy>().unwrap(), strategy);
    }
    assert_eq!(
        "fused-x3".parse::<Strategy>().unwrap(),
        Strategy::FusedSteps(3)
    );
    for bad in ["fused-x0", "fused-x", "fast", "fused-xk"] {
        assert!(bad.parse::<Strategy>().is_err(), "{bad}");
    }
}

#[test]
fn names_help_and_errors_come_from_the_specs() {
    assert_eq!(
        Strategy::names(),
        [
            "eager",
            "vertical",
            "horizontal",
            "fused",
            "fused-x<K>",
            "xla-default"
        ]
    );
    assert_eq!(
        "fast".parse::<Strategy>().unwrap_err().to_string(),
        "unknown plan `fast`: expected eager, vertical, horizontal, fused, fused-x<K> (1 <= K <= 4096) or xla-default"
    );
    for strategy in Strategy::ALL {
        assert!(Strategy::help().contains(strategy.spec().summary));
    }
    assert!("partition".parse::<Strategy>().is_err());
    assert!("fused-x0".parse::<Strategy>().is_err());
    assert!("fused-x4097".parse::<Strategy>().is_err());
    assert_eq!(
        "fused-x4096".parse::<Strategy>().unwrap(),
        Strategy::FusedSteps(4096)
    );
    let graph = chain();
    assert_eq!(
        Plan::build(&graph, Strategy::FusedSteps(4097), &PlanOptions::default())
            .unwrap_err()
            .to_string(),
        format!(
            "unknown plan `fused-x4097`: expected {}",
            Strategy::expected()
        )
    );
    assert!(matches!(
        Plan::build(&graph, Strategy::Partition, &PlanOptions::default()),
        Err(PlanError::UnknownStrategy { .. })
    ));
}

#[test]
fn xla_default_copies_only_live_carried_state_and_fused_steps_repeats_one_kernel() {
    // Read elementwise by the fusion writing its next value: XLA shares the loop buffer.
    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    g.carry(x, x * 2.0);
    g.output("y", x + 1.0);
    let graph = g.build().unwrap();
    let xla = Plan::build(&graph, Strategy::XlaDefault, &PlanOptions::default()).unwrap();
    assert!(xla.copied_carries().is_empty(), "{:?}", xla.launches);
    assert_eq!(xla.launches.len(), 1);
    // Packed state sliced and concatenated by that fusion: the loop copy stays.
    let p = GraphBuilder::new();
    let s = p.input_packed("s", 2);
    let next = p.pack(&[s.unpack(1) * 2.0, s.unpack(0)]);
    p.carry(s, next);
    p.output("y", s.unpack(0) + 1.0);
    let s = s.id();
    let packed = p.build().unwrap();
    let xla = Plan::build(&packed, Strategy::XlaDefault, &PlanOptions::default()).unwrap();
    assert_eq!(xla.copied_carries(), vec![s]);
    assert_eq!(
        xla.launches.last(),
        Some(&PlannedLaunch::CopyState { input: s })
    );
    let stepped = Plan::build(&graph, Strategy::FusedSteps(3), &PlanOptions::default()).unwrap();
    assert_eq!(stepped.steps_per_launch, 3);
    assert_eq!(stepped.launches.len(), 1);
}
