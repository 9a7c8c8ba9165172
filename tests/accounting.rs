//! Launch and byte counts are exact, and agree with what the IR says they must be.

use std::collections::BTreeSet;

use cartfuse::env::cartpole::cartpole_step_graph;
use cartfuse::env::cartpole::hand_written::step_bytes_per_env;
use cartfuse::env::acrobot::Acrobot;
use cartfuse::env::graph::{StateLayout, step_graph};
use cartfuse::env::mountain_car::MountainCar;
use cartfuse::env::mountain_car_continuous::MountainCarContinuous;
use cartfuse::env::pendulum::Pendulum;
use cartfuse::env::{CartPole, EpisodeOptions, GraphEnv};
use cartfuse::fusion::graph::{Graph, Op, Shape};
use cartfuse::env::engine::{RandomSource, steps_ahead};
use cartfuse::fusion::graph::transform::random_as_inputs;
use cartfuse::fusion::plan::{Plan, PlanOptions, PlannedLaunch, Strategy};
use cartfuse::{AutoresetMode, CartPoleConfig, StepPlan};

use super::util;

/// Bytes per lane of one node's buffer.
fn width(graph: &Graph, id: cartfuse::fusion::graph::NodeId) -> u64 {
    match graph.node(id).shape {
        Shape::Lanes => 4,
        Shape::Packed(k) => 4 * u64::from(k),
    }
}

/// Eager bytes derived from the IR alone: every computing op reads each distinct array
/// operand and writes its value once per buffer it lands in (its own value when outputs or
/// other ops need it, and the next-state buffer of each carry it feeds).
fn eager_bytes_per_lane(graph: &Graph) -> u64 {
    let users = graph.users();
    let mut bytes = 0;
    for id in graph.ids().filter(|id| graph.node(*id).op.computes()) {
        let operands: BTreeSet<_> = graph.node(id).op.operands().into_iter().collect();
        for operand in operands {
            if matches!(graph.node(operand).op, Op::Input { .. })
                || graph.node(operand).op.computes()
            {
                bytes += width(graph, operand);
            }
        }
        let is_output = graph.outputs().iter().any(|o| o.node == id);
        if is_output || !users[id.index()].is_empty() {
            bytes += width(graph, id);
        }
        bytes += graph.carries().iter().filter(|c| c.next == id).count() as u64 * width(graph, id);
    }
    bytes
}

/// Runs `plan` for one call over `n` envs and returns (launches, bytes moved) recorded.
fn measure(plan: StepPlan, n: usize) -> (u64, u64) {
    let mut env = util::env_with(n, CartPoleConfig::default(), plan, 1);
    let before = env.ledger().totals();
    let actions = vec![1u32; n * env.steps_per_call()];
    env.step(&actions).unwrap();
    let delta = env.ledger().totals().since(&before);
    (delta.launches, delta.bytes_moved())
}

#[test]
fn launch_and_byte_counts_are_exact_for_every_plan() {
    let n = 1000u64;
    let graph = cartpole_step_graph(AutoresetMode::NextStep, StateLayout::StructOfArrays);
    let packed = cartpole_step_graph(AutoresetMode::NextStep, StateLayout::Packed);
    let options = util::plan_options();
    let launches_of =
        |graph: &Graph, s| Plan::build(graph, s, &options).unwrap().launches.len() as u64;

    // Hand-written and fused move the same compulsory bytes: 40 read (the action, the state,
    // the counters and the env's two key words) + 56 written per env.
    let (read, written) = step_bytes_per_env(AutoresetMode::NextStep);
    assert_eq!((read, written), (40, 56));
    if util::plans().contains(&StepPlan::HandWritten) {
        assert_eq!(measure(StepPlan::HandWritten, n as usize), (1, 96 * n));
    }
    assert_eq!(
        measure(StepPlan::Graph(Strategy::Fused), n as usize),
        (1, 96 * n)
    );
    // fused-x10: actions and per-step outputs 10 times, state once: one launch.
    let per_step_bytes = 4 + 16 + 4 + 4 + 4; // action, obs, reward, terminated, truncated
    // State, elapsed, resets, needs_reset in and out; the key words read once.
    let state_bytes = 2 * (16 + 4 + 4 + 4) + 8;
    assert_eq!(
        measure(StepPlan::Graph(Strategy::FusedSteps(10)), n as usize),
        (1, (10 * per_step_bytes + state_bytes) * n)
    );

    // Eager: one launch per computing op, bytes as the IR dictates.
    let eager = measure(StepPlan::Graph(Strategy::Eager), n as usize);
    assert_eq!(eager.0, graph.computing_ops() as u64);
    assert_eq!(eager.1, eager_bytes_per_lane(&graph) * n);

    // Vertical, horizontal: same bytes, fewer launches for horizontal.
    let vertical = measure(StepPlan::Graph(Strategy::Vertical), n as usize);
    let horizontal = measure(StepPlan::Graph(Strategy::Horizontal), n as usize);
    assert_eq!(vertical.0, launches_of(&graph, Strategy::Vertical));
    assert_eq!(horizontal.0, launches_of(&graph, Strategy::Horizontal));
    assert!(horizontal.0 < vertical.0, "{horizontal:?} vs {vertical:?}");
    assert_eq!(horizontal.1, vertical.1);
    assert!(vertical.1 > 96 * n && vertical.1 < eager.1);

    // xla-default: XLA's four fusions and the one loop copy XLA keeps (`needs_reset`, read
    // by the reset fusion after the termination fusion writes its next value).
    let xla = measure(StepPlan::Graph(Strategy::XlaDefault), n as usize);
    assert_eq!(xla.0, launches_of(&packed, Strategy::XlaDefault));
    assert_eq!(xla.0, 5);
    let plan = Plan::build(&packed, Strategy::XlaDefault, &options).unwrap();
    assert_eq!(
        plan.copied_carries(),
        vec![packed.input_id("needs_reset").unwrap()]
    );
    assert!(matches!(
        plan.launches.last(),
        Some(PlannedLaunch::CopyState { .. })
    ));
    assert_eq!(xla.1 as f64, plan.bytes_per_lane_step(&packed) * n as f64);

    // Every plan's ledger agrees with the plan's own analytic count.
    for strategy in [
        Strategy::Eager,
        Strategy::Vertical,
        Strategy::Horizontal,
        Strategy::Fused,
    ] {
        let plan = Plan::build(&graph, strategy, &options).unwrap();
        let (launches, bytes) = measure(StepPlan::Graph(strategy), n as usize);
        assert_eq!(launches as usize, plan.launches.len(), "{strategy}");
        assert_eq!(
            bytes as f64,
            plan.bytes_per_lane_step(&graph) * n as f64,
            "{strategy}"
        );
    }
}

/// Runs `plan` for one call over `n` envs of `E` and returns (launches, bytes moved).
fn measure_env<E: GraphEnv + Default>(plan: StepPlan, n: usize) -> (u64, u64) {
    let mut env = util::build_env(E::default(), n, EpisodeOptions::default_for::<E>(), plan)
        .expect("plan builds");
    env.reset(Some(1)).unwrap();
    let before = env.ledger().totals();
    let k = env.steps_per_call();
    let actions = E::default().pattern_actions(n * k);
    env.step(&actions).unwrap();
    let delta = env.ledger().totals().since(&before);
    (delta.launches, delta.bytes_moved())
}

/// The same exact counts for an environment with no hand-written kernel: `fused` moves
/// only the compulsory bytes, `fused-x10` the state once, eager one launch per op, and the
/// per-kernel plans what their plans say.
fn counts_are_exact<E: GraphEnv + Default>() {
    let n = 1000usize;
    let graph = step_graph(&E::default(), AutoresetMode::NextStep, StateLayout::StructOfArrays);
    let packed = step_graph(&E::default(), AutoresetMode::NextStep, StateLayout::Packed);
    let options = util::plan_options();
    let state = 4 * E::STATE.len() as u64 + 12; // physical state, elapsed, resets, needs_reset
    let per_step = 4 + 4 * E::OBS_DIM as u64 + 12; // action; obs, reward, terminated, truncated
    let keys = 8; // the env's two key words, read once a launch
    let fused = measure_env::<E>(StepPlan::Graph(Strategy::Fused), n);
    assert_eq!(fused, (1, (2 * state + per_step + keys) * n as u64), "{}", E::ID);
    let x10 = measure_env::<E>(StepPlan::Graph(Strategy::FusedSteps(10)), n);
    let x10_bytes = 2 * state + 10 * per_step + keys;
    assert_eq!(x10, (1, x10_bytes * n as u64), "{}", E::ID);
    let eager = measure_env::<E>(StepPlan::Graph(Strategy::Eager), n);
    assert_eq!(eager.0, graph.computing_ops() as u64, "{}", E::ID);
    assert_eq!(eager.1, eager_bytes_per_lane(&graph) * n as u64, "{}", E::ID);
    for (strategy, graph) in [
        (Strategy::Vertical, &graph),
        (Strategy::Horizontal, &graph),
        (Strategy::XlaDefault, &packed),
    ] {
        let plan = Plan::build(graph, strategy, &options).unwrap();
        let (launches, bytes) = measure_env::<E>(StepPlan::Graph(strategy), n);
        assert_eq!(launches as usize, plan.launches.len(), "{} {strategy}", E::ID);
        assert_eq!(
            bytes as f64,
            plan.bytes_per_lane_step(graph) * n as f64,
            "{} {strategy}",
            E::ID
        );
        assert!(launches > 1 && bytes > fused.1, "{} {strategy}", E::ID);
    }
}

#[test]
fn launch_and_byte_counts_are_exact_for_every_environment() {
    counts_are_exact::<MountainCar>();
    counts_are_exact::<Acrobot>();
    counts_are_exact::<MountainCarContinuous>();
    counts_are_exact::<Pendulum>();
}

#[test]
fn drawn_ahead_random_numbers_cost_one_launch_per_ten_steps_and_reset_in_bounds() {
    let n = 1000;
    let plan = StepPlan::Custom {
        strategy: Strategy::XlaDefault,
        layout: StateLayout::Packed,
        random: RandomSource::DrawnAhead,
        concat_rule: true,
    };
    let packed = cartpole_step_graph(AutoresetMode::NextStep, StateLayout::Packed);
    let options = PlanOptions {
        opaque_random: false,
        ..util::plan_options()
    };
    let step_launches = Plan::build(
        &random_as_inputs(&packed, "draw").unwrap(),
        Strategy::XlaDefault,
        &options,
    )
    .unwrap()
    .launches
    .len() as u64;
    let mut env = util::env_with(n, CartPoleConfig::default(), plan, 1);
    let before = env.ledger().totals();
    let mut last = None;
    for _ in 0..20 {
        last = Some(env.step(&vec![1u32; n]).unwrap());
    }
    // 20 steps: a draw-ahead launch every `ahead` steps (10 where a kernel binds 40
    // outputs).
    let ahead = steps_ahead(&options, CartPole::RESET_DRAWS) as u64;
    assert!(ahead > 1);
    assert_eq!(
        env.ledger().totals().since(&before).launches,
        20 * step_launches + 20u64.div_ceil(ahead)
    );
    // Pushing right ends every episode within 20 steps: the lanes that reset show a fresh
    // state in CartPole's reset bounds.
    let out = last.unwrap();
    let elapsed = env.elapsed_steps().unwrap();
    let fresh: Vec<usize> = (0..n).filter(|i| elapsed[*i] == 0).collect();
    assert!(!fresh.is_empty());
    for i in fresh {
        assert!(out.obs_row(i).iter().all(|x| x.abs() <= 0.05), "{:?}", out.obs_row(i));
    }
}
