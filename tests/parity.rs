//! One-step parity of the hand-written kernel with the f64 reference.

use cartfuse::env::reference::{self, CartPoleState};
use cartfuse::{AutoresetMode, CartPoleConfig, StepPlan};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::util;

/// States covering the observation space, plus states just inside and just outside each
/// termination threshold (the step moves x by `tau * x_dot`, so those have zero velocity).
fn parity_states(count: usize) -> Vec<CartPoleState> {
    let params = CartPoleConfig::default().params;
    let mut rng = StdRng::seed_from_u64(2024);
    let mut states = Vec::with_capacity(count);
    let (x_t, th_t) = (
        params.x_threshold as f32,
        params.theta_threshold_radians as f32,
    );
    for sign in [-1.0f32, 1.0] {
        for offset in [-1e-3f32, -1e-4, -2e-6, 2e-6, 1e-4, 1e-3] {
            states.push(CartPoleState::from_array([
                f64::from(sign * (x_t + offset)),
                0.0,
                0.0,
                0.0,
            ]));
            states.push(CartPoleState::from_array([
                0.0,
                0.0,
                f64::from(sign * (th_t + offset)),
                0.0,
            ]));
        }
    }
    while states.len() < count {
        let state = [
            rng.random_range(-4.8f32..4.8),
            rng.random_range(-20.0f32..20.0),
            rng.random_range(-0.42f32..0.42),
            rng.random_range(-20.0f32..20.0),
        ];
        states.push(CartPoleState::from_array(state.map(f64::from)));
    }
    states
}

fn near_threshold(state: &CartPoleState, params: &cartfuse::CartPoleParams) -> bool {
    let close = |value: f64, threshold: f64| (value.abs() - threshold).abs() < 1e-6;
    close(state.x, params.x_threshold) || close(state.theta, params.theta_threshold_radians)
}

/// One step of `plan` from `states`, checked against the f64 reference; returns the obs.
fn check_plan_against_reference(
    plan: StepPlan,
    states: &[CartPoleState],
    actions: &[u32],
) -> Vec<[f32; 4]> {
    let n = states.len();
    let config = CartPoleConfig {
        autoreset: AutoresetMode::Disabled,
        ..Default::default()
    };
    let params = config.params;
    let mut env = util::env_with(n, config, plan, 0);
    env.set_state(&util::states(states)).unwrap();
    let out = env.step(actions).unwrap();

    let mut flag_checks = 0;
    for i in 0..n {
        let expected = reference::step_physics(states[i], actions[i], &params);
        for (k, (got, want)) in util::row(&out, i)
            .iter()
            .zip(expected.to_array())
            .enumerate()
        {
            assert!(
                (f64::from(*got) - want).abs() <= 1e-5,
                "{plan} env {i} component {k}: device {got} vs reference {want} from {:?} action {}",
                states[i],
                actions[i]
            );
        }
        assert_eq!(out.reward[i], 1.0);
        assert!(!out.truncated[i]);
        if !near_threshold(&expected, &params) {
            flag_checks += 1;
            assert_eq!(
                out.terminated[i],
                reference::is_terminated(&expected, &params),
                "{plan} env {i}: termination differs at {expected:?}"
            );
        }
    }
    assert!(
        flag_checks > n - 100,
        "only {flag_checks} termination flags compared"
    );
    (0..n).map(|i| util::row(&out, i)).collect()
}

#[test]
fn every_plan_matches_f64_reference_on_100k_states_and_all_plans_agree() {
    let n = 100_000;
    let states = parity_states(n);
    let mut rng = StdRng::seed_from_u64(7);
    let actions: Vec<u32> = (0..n).map(|_| rng.random_range(0..2)).collect();
    let baseline = check_plan_against_reference(StepPlan::HandWritten, &states, &actions);
    for plan in util::single_step_plans() {
        let obs = check_plan_against_reference(plan, &states, &actions);
        for (i, (a, b)) in obs.iter().zip(&baseline).enumerate() {
            for k in 0..4 {
                assert!(
                    (a[k] - b[k]).abs() <= 1e-6 * b[k].abs().max(1.0),
                    "{plan} vs hand-written, env {i} component {k}: {} vs {}",
                    a[k],
                    b[k]
                );
            }
        }
    }
}
