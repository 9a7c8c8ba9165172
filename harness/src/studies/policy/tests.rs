//! Tests of [`super`].

use super::*;
use cartfuse_fusion::cpu::Cpu;

#[test]
fn both_sources_collect_and_fused_xk_launches_once_per_k_steps() {
    let settings = PolicySettings {
        sizes: vec![4],
        plans: strategies(&["fused-x2"]),
        steps: 4,
        repeats: 1,
        training: Vec::new(),
        training_budget: 0,
        population: None,
        device_population: None,
    };
    let mut messages = Vec::new();
    let study = measure_policy(&Cpu::default(), &settings, |m| messages.push(m.to_string()));
    assert_eq!(messages.len(), policy_tasks(&settings));
    assert_eq!(study.points.len(), 2);
    let host = study.point(HOST_SOURCE, 4).unwrap();
    let fused = study.point("fused-x2", 4).unwrap();
    for point in [host, fused] {
        let rate = point.env_steps_per_s.as_ref().expect("measured");
        assert!(rate.is_finite() && *rate > 0.0, "{point:?}");
    }
    assert_eq!(fused.launches_per_step, Some(0.5));
    assert!(study.speedup("fused-x2", 4).is_some());
    assert!(study.training.is_empty());
}

#[test]
fn a_fused_plan_whose_k_does_not_divide_the_steps_is_reported_not_fatal() {
    let settings = PolicySettings {
        sizes: vec![4],
        plans: strategies(&["fused-x3"]),
        steps: 4,
        repeats: 1,
        training: vec![(strategy(Some("fused-x3")), 1)],
        training_budget: 1024,
        population: None,
        device_population: None,
    };
    let study = measure_policy(&Cpu::default(), &settings, |_| {});
    let fused = study.point("fused-x3", 4).unwrap();
    let reason = &fused.env_steps_per_s.as_ref().unwrap_err().reason;
    assert!(reason.contains("multiple"), "{reason}");
    let run = &study.training[0];
    assert!(run.solved.is_none());
    assert!(run.error.as_ref().unwrap().contains("num_steps"), "{run:?}");
}
