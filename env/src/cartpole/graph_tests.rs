//! The CartPole graph under every mode, layout and strategy, and in f64 against the
//! reference step.

use super::{CartPoleConfig, STATE_INPUTS, cartpole_step_graph, graph_params};
use crate::graph::StateLayout;
use crate::params::AutoresetMode;

use cartfuse_fusion::plan::{Plan, PlanOptions, Strategy};

#[test]
fn every_mode_and_layout_builds_and_plans() {
    for autoreset in [
        AutoresetMode::NextStep,
        AutoresetMode::SameStep,
        AutoresetMode::Disabled,
    ] {
        for layout in [StateLayout::StructOfArrays, StateLayout::Packed] {
            let graph = cartpole_step_graph(autoreset, layout);
            for strategy in Strategy::ALL {
                let plan = Plan::build(&graph, strategy, &PlanOptions::default());
                assert!(
                    plan.is_ok(),
                    "{autoreset:?} {layout:?} {strategy}: {plan:?}"
                );
            }
        }
    }
}

/// The graph interpreted in f64 is the f64 reference, operation for operation.
#[test]
fn graph_in_f64_is_the_reference_step() {
    use crate::reference::{CartPoleState, is_terminated, step_physics};
    use cartfuse_fusion::graph::HostArray;
    use cartfuse_fusion::interpret::interpret;
    use std::collections::HashMap;

    let config = CartPoleConfig {
        autoreset: AutoresetMode::Disabled,
        ..CartPoleConfig::default()
    };
    let graph = cartpole_step_graph(config.autoreset, StateLayout::StructOfArrays);
    let states: Vec<[f32; 4]> = (0..200)
        .map(|i| {
            let t = i as f32;
            [
                (t * 0.37).sin() * 2.5,
                (t * 0.11).cos() * 3.0,
                (t * 0.23).sin() * 0.25,
                (t * 0.05).cos() * 2.0,
            ]
        })
        .collect();
    let n = states.len();
    let mut inputs: HashMap<String, HostArray> = STATE_INPUTS
        .iter()
        .enumerate()
        .map(|(k, name)| {
            (
                name.to_string(),
                HostArray::F32(states.iter().map(|s| s[k]).collect()),
            )
        })
        .collect();
    inputs.insert(
        "action".into(),
        HostArray::U32((0..n as u32).map(|i| i % 2).collect()),
    );
    inputs.insert("elapsed".into(), HostArray::U32(vec![0; n]));
    let params: HashMap<String, _> = graph_params(&config)
        .into_iter()
        .filter(|(name, _)| graph.params().iter().any(|(_, p)| p == name))
        .map(|(name, value)| (name.to_string(), value))
        .collect();
    let out = interpret::<f64>(&graph, n, &inputs, &params).unwrap();
    let cartfuse_fusion::interpret::Values::Float(obs) = &out["obs"] else {
        panic!()
    };
    let cartfuse_fusion::interpret::Values::Int(terminated) = &out["terminated"] else {
        panic!()
    };
    // Params are f32 on the device; the reference uses the same f32-rounded constants.
    let p32 = |v: f64| f64::from(v as f32);
    let d = config.params;
    let params32 = crate::CartPoleParams {
        gravity: p32(d.gravity),
        masscart: p32(d.total_mass()) - p32(d.masspole),
        masspole: p32(d.masspole),
        length: p32(d.length),
        force_mag: p32(d.force_mag),
        tau: p32(d.tau),
        x_threshold: p32(d.x_threshold),
        theta_threshold_radians: p32(d.theta_threshold_radians),
        reset_bound: d.reset_bound,
        sutton_barto_reward: false,
    };
    for (i, state) in states.iter().enumerate() {
        let expected = step_physics(
            CartPoleState::from_array(state.map(f64::from)),
            (i % 2) as u32,
            &params32,
        );
        for k in 0..4 {
            // Graph constants such as 4/3 are f32 literals: ~1e-8 relative.
            let (got, want) = (obs[4 * i + k], expected.to_array()[k]);
            assert!(
                (got - want).abs() < 1e-7,
                "lane {i} component {k}: {got} vs {want}"
            );
        }
        assert_eq!(
            terminated[i] != 0,
            is_terminated(&expected, &params32),
            "lane {i}"
        );
    }
}

/// The generated fused step draws a reset only where a lane resets, with one Threefry
/// evaluation per counter: one guard block holding two draws of two words each, in both
/// autoreset modes, and the same under `fused-xK` (whose steps run in a loop).
#[test]
fn the_fused_kernel_draws_resets_lazily_and_shares_threefry_words() {
    use cartfuse_fusion::lir::lower::lower_plan;
    use cartfuse_fusion::lir::program::Instr;

    for autoreset in [AutoresetMode::NextStep, AutoresetMode::SameStep] {
        let graph = cartpole_step_graph(autoreset, StateLayout::StructOfArrays);
        for strategy in [Strategy::Fused, Strategy::FusedSteps(10)] {
            let plan = Plan::build(&graph, strategy, &PlanOptions::default()).unwrap();
            let lowered = lower_plan(&graph, &plan);
            assert_eq!(lowered.len(), 1, "{autoreset:?} {strategy}");
            let program = &lowered[0].program.parts[0];
            let draws = |body: &[Instr]| {
                body.iter()
                    .filter_map(|i| match i {
                        Instr::Random { dst, .. } => Some(dst.iter().flatten().count()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(program.guards.len(), 1, "{autoreset:?} {strategy}");
            assert_eq!(draws(&program.guards[0].body), vec![2, 2]);
            assert_eq!(program.guards[0].outputs_f.len(), 4);
            assert!(draws(&program.body).is_empty());
            let steps = plan.steps_per_launch as usize;
            assert_eq!(program.steps as usize, steps);
            // State is loaded before the loop and stored after it.
            let (loads, stores) = (program.prologue.len(), program.epilogue.len());
            if steps > 1 {
                let carried = graph.carries().len();
                assert!(carried > STATE_INPUTS.len());
                assert_eq!((loads, stores), (carried, carried));
            } else {
                assert_eq!((loads, stores), (0, 0));
            }
        }
    }
}
