//! `fused-xK`: K steps in one launch equal K single fused steps.

use cartfuse::fusion::plan::Strategy;
use cartfuse::{AutoresetMode, CartPoleConfig, StepPlan};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::util;

/// `calls` calls of `k` steps over `n` envs against `calls * k` single steps.
fn k_steps_equal_single_steps(autoreset: AutoresetMode, (n, k, calls): (usize, usize, usize)) {
    let config = CartPoleConfig {
        autoreset,
        max_episode_steps: 17,
        ..Default::default()
    };
    let mut one = util::env_with(n, config, StepPlan::Graph(Strategy::Fused), 21);
    let multi = StepPlan::Graph(Strategy::FusedSteps(k as u32));
    let mut many = util::env_with(n, config, multi, 21);
    assert_eq!(many.steps_per_call(), k);
    // The reset kernel ran once in each; count the steps' launches only.
    let (one_before, many_before) = (
        one.ledger().totals().launches,
        many.ledger().totals().launches,
    );
    assert_eq!((one_before, many_before), (1, 1));
    let mut rng = StdRng::seed_from_u64(4);
    let mut ended = 0;
    for call in 0..calls {
        let actions: Vec<u32> = (0..n * k).map(|_| rng.random_range(0..2)).collect();
        let batch = many.step(&actions).unwrap();
        assert_eq!(batch.obs.len(), n * k * 4);
        for step in 0..k {
            let out = one.step(&actions[step * n..(step + 1) * n]).unwrap();
            for i in 0..n {
                let j = step * n + i;
                let ctx = format!("{autoreset:?} call {call} step {step} env {i}");
                assert_eq!(batch.reward[j], out.reward[i], "{ctx}");
                assert_eq!(batch.terminated[j], out.terminated[i], "{ctx}");
                assert_eq!(batch.truncated[j], out.truncated[i], "{ctx}");
                let (got, want) = (util::row(&batch, j), util::row(&out, i));
                for c in 0..4 {
                    assert!(
                        (got[c] - want[c]).abs() <= 1e-6,
                        "{ctx}: {got:?} vs {want:?}"
                    );
                }
                assert_eq!(
                    util::final_row(&batch, j).is_some(),
                    util::final_row(&out, i).is_some(),
                    "{ctx}"
                );
                ended += usize::from(out.terminated[i] || out.truncated[i]);
            }
        }
        assert_eq!(many.state().unwrap().len(), n);
    }
    assert!(ended > n, "only {ended} episodes ended");
    assert_eq!(many.elapsed_steps().unwrap(), one.elapsed_steps().unwrap());
    // One launch per K steps.
    assert_eq!(many.ledger().totals().launches - many_before, calls as u64);
    assert_eq!(
        one.ledger().totals().launches - one_before,
        (calls * k) as u64
    );
}

#[test]
fn fused_steps_match_single_fused_steps_next_step() {
    k_steps_equal_single_steps(AutoresetMode::NextStep, (300, 5, 6));
}

#[test]
fn fused_steps_match_single_fused_steps_same_step() {
    k_steps_equal_single_steps(AutoresetMode::SameStep, (300, 5, 6));
}

/// Many steps in one launch (the kernel loops over them): every episode ends and resets
/// several times inside one call.
#[test]
fn two_hundred_steps_in_one_launch_match_single_steps() {
    k_steps_equal_single_steps(AutoresetMode::NextStep, (40, 200, 1));
    k_steps_equal_single_steps(AutoresetMode::SameStep, (40, 200, 1));
}

#[test]
fn fused_steps_need_k_actions_per_env() {
    let plan = StepPlan::Graph(Strategy::FusedSteps(4));
    let mut env = util::env_with(8, CartPoleConfig::default(), plan, 0);
    let error = env.step(&[0; 8]).unwrap_err();
    assert_eq!(error.to_string(), "expected 32 actions (4 per env), got 8");
}

/// What paging a `fused-xK` call rests on: a range copy between buffers, and a runner
/// writing its outputs into buffers swapped in.
#[test]
fn ranges_copy_and_outputs_swap_on_this_runtime() {
    use cartfuse::fusion::exec::{Backend, Executor};
    use cartfuse::fusion::graph::{DType, GraphBuilder};
    use cartfuse::fusion::graph::HostArray;
    use cartfuse::fusion::exec::{COPY_RANGE_KERNEL, LaunchLedger};
    use cartfuse::fusion::plan::Plan;

    let backend = util::backend();
    let ledger = LaunchLedger::new();
    let from = backend.upload_u32(&(0..1000).collect::<Vec<u32>>());
    let into = backend.upload_u32(&[0; 300]);
    backend.copy_range(&from, 650, &into, &ledger).unwrap();
    let copied: Vec<u32> = (650..950).collect();
    assert_eq!(backend.read_u32(&into).unwrap(), copied);
    let per_kernel = ledger.per_kernel();
    assert_eq!(per_kernel[0].0, COPY_RANGE_KERNEL);
    assert_eq!(per_kernel[0].1.bytes_read, 1200);
    // A range past the end is an error, not an out-of-bounds read.
    let error = backend.copy_range(&from, 701, &into, &ledger).unwrap_err();
    assert!(error.to_string().contains("copy_range source"), "{error}");
    assert_eq!(ledger.totals().launches, 1);

    let g = GraphBuilder::new();
    let x = g.input("x", DType::F32);
    g.output("y", x * 2.0);
    let graph = g.build().unwrap();
    let plan = Plan::build(&graph, Strategy::Fused, &util::plan_options()).unwrap();
    let mut runner = Executor::new(backend.clone(), graph, plan, 4).unwrap();
    runner.set_input("x", &HostArray::F32(vec![1.0, 2.0, 3.0, 4.0])).unwrap();
    runner.run().unwrap();
    let mut page = backend.upload_f32(&[0.0; 4]);
    runner.swap_output("y", &mut page).unwrap();
    assert_eq!(backend.read_f32(&page).unwrap(), [2.0, 4.0, 6.0, 8.0]);
    runner.set_input("x", &HostArray::F32(vec![5.0, 6.0, 7.0, 8.0])).unwrap();
    runner.run().unwrap();
    // The first run's values stay in the swapped-out buffer.
    assert_eq!(backend.read_f32(&page).unwrap(), [2.0, 4.0, 6.0, 8.0]);
    assert_eq!(
        backend
            .read_f32(runner.output("y").unwrap())
            .unwrap(),
        [10.0, 12.0, 14.0, 16.0]
    );
    let mut short = backend.upload_f32(&[0.0; 3]);
    assert!(runner.swap_output("y", &mut short).is_err());
    assert!(runner.swap_output("nope", &mut page).is_err());
}
