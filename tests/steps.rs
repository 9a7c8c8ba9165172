//! `fused-xK`: K steps in one launch equal K single fused steps.

use cartfuse::fusion::plan::Strategy;
use cartfuse::{AutoresetMode, CartPoleConfig, StepPlan};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::util;

fn k_steps_equal_single_steps(autoreset: AutoresetMode) {
    let (n, k, calls) = (300, 5, 6);
    let single = CartPoleConfig {
        autoreset,
        max_episode_steps: 17,
        plan: StepPlan::Graph(Strategy::Fused),
        ..Default::default()
    };
    let multi = CartPoleConfig {
        plan: StepPlan::Graph(Strategy::FusedSteps(k as u32)),
        ..single
    };
    let mut one = util::env(n, single, 21);
    let mut many = util::env(n, multi, 21);
    assert_eq!(many.steps_per_call(), k);
    let mut rng = StdRng::seed_from_u64(4);
    let mut ended = 0;
    for call in 0..calls {
        let actions: Vec<u32> = (0..n * k).map(|_| rng.random_range(0..2)).collect();
        let batch = many.step(&actions).unwrap();
        assert_eq!(batch.obs.len(), n * k);
        for step in 0..k {
            let out = one.step(&actions[step * n..(step + 1) * n]).unwrap();
            for i in 0..n {
                let j = step * n + i;
                let ctx = format!("{autoreset:?} call {call} step {step} env {i}");
                assert_eq!(batch.reward[j], out.reward[i], "{ctx}");
                assert_eq!(batch.terminated[j], out.terminated[i], "{ctx}");
                assert_eq!(batch.truncated[j], out.truncated[i], "{ctx}");
                for c in 0..4 {
                    assert!(
                        (batch.obs[j][c] - out.obs[i][c]).abs() <= 1e-6,
                        "{ctx}: {:?} vs {:?}",
                        batch.obs[j],
                        out.obs[i]
                    );
                }
                if let (Some(a), Some(b)) = (&batch.final_obs, &out.final_obs) {
                    assert_eq!(a[j].is_some(), b[i].is_some(), "{ctx}");
                }
                ended += usize::from(out.terminated[i] || out.truncated[i]);
            }
        }
        assert_eq!(many.state().unwrap().len(), n);
    }
    assert!(ended > n, "only {ended} episodes ended");
    assert_eq!(many.elapsed_steps().unwrap(), one.elapsed_steps().unwrap());
    // One launch per K steps.
    assert_eq!(many.ledger().totals().launches, calls as u64);
    assert_eq!(one.ledger().totals().launches, (calls * k) as u64);
}

#[test]
fn fused_steps_match_single_fused_steps_next_step() {
    k_steps_equal_single_steps(AutoresetMode::NextStep);
}

#[test]
fn fused_steps_match_single_fused_steps_same_step() {
    k_steps_equal_single_steps(AutoresetMode::SameStep);
}

#[test]
fn fused_steps_need_k_actions_per_env() {
    let config = CartPoleConfig {
        plan: StepPlan::Graph(Strategy::FusedSteps(4)),
        ..Default::default()
    };
    let mut env = util::env(8, config, 0);
    let error = env.step(&[0; 8]).unwrap_err();
    assert_eq!(error.to_string(), "expected 32 actions (4 per env), got 8");
}
