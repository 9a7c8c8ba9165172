//! Episode semantics in every autoreset mode, step by step against the reference vector env.

use cartfuse::env::reference::{ReferenceVecEnv, reset_state};
use cartfuse::{AutoresetMode, CartPoleConfig, CartPoleState, StepPlan};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::util;

/// Steps a device env and the reference side by side for `steps` random steps, comparing
/// every output, and re-synchronising the reference's physics to the device's `f32` state
/// each step so rounding never compounds. Returns (episodes ended, reset steps seen).
fn run_against_reference(config: CartPoleConfig, n: usize, steps: usize) -> (usize, usize) {
    let totals = run_plan_against_reference(config, StepPlan::HandWritten, n, steps);
    for plan in util::single_step_plans() {
        let counts = run_plan_against_reference(config, plan, n, steps);
        assert_eq!(
            counts, totals,
            "{plan}: episode counts differ from the hand-written kernel's"
        );
    }
    totals
}

fn run_plan_against_reference(
    config: CartPoleConfig,
    plan: StepPlan,
    n: usize,
    steps: usize,
) -> (usize, usize) {
    let seed = 5;
    let mut env = util::env_with(n, config, plan, seed);
    let mut reference = ReferenceVecEnv::new(n, config, seed);
    let mut rng = StdRng::seed_from_u64(11);
    let (mut ended, mut reset_steps) = (0, 0);
    for step in 0..steps {
        let actions: Vec<u32> = (0..n).map(|_| rng.random_range(0..2)).collect();
        let out = env.step(&actions).unwrap();
        let expected = reference.step(&actions);
        for (i, want) in expected.iter().enumerate() {
            let ctx = format!("{plan} step {step} env {i}");
            assert_eq!(out.reward[i], want.reward, "{ctx}");
            assert_eq!(out.terminated[i], want.terminated, "{ctx}");
            assert_eq!(out.truncated[i], want.truncated, "{ctx}");
            for (got, want) in util::row(&out, i).iter().zip(want.obs) {
                assert!(
                    (got - want).abs() <= 1e-5,
                    "{ctx}: obs {:?} vs {:?}",
                    util::row(&out, i),
                    want
                );
            }
            match (&out.final_obs, want.final_obs) {
                (None, None) => assert_ne!(config.autoreset, AutoresetMode::SameStep),
                (Some(_), want_final) => {
                    let got_final = util::final_row(&out, i);
                    assert_eq!(got_final.is_some(), want_final.is_some(), "{ctx}");
                    if let (Some(got), Some(want)) = (got_final, want_final) {
                        for (g, w) in got.iter().zip(want) {
                            assert!((g - w).abs() <= 1e-5, "{ctx}: final {got:?} vs {want:?}");
                        }
                    }
                }
                (None, Some(_)) => panic!("{ctx}: missing final observation"),
            }
            ended += usize::from(want.terminated || want.truncated);
            reset_steps += usize::from(want.reward == 0.0);
        }
        reference.overwrite_physics(&util::cartpole_states(&env.state().unwrap()));
    }
    (ended, reset_steps)
}

#[test]
fn next_step_mode_matches_reference_through_many_episodes() {
    let config = CartPoleConfig::default();
    let (ended, reset_steps) = run_against_reference(config, 256, 120);
    assert!(ended > 500, "only {ended} episodes ended");
    assert!(reset_steps > 400, "only {reset_steps} reset steps");
}

#[test]
fn same_step_mode_matches_reference_through_many_episodes() {
    let config = CartPoleConfig {
        autoreset: AutoresetMode::SameStep,
        ..Default::default()
    };
    let (ended, reset_steps) = run_against_reference(config, 256, 120);
    assert!(ended > 500, "only {ended} episodes ended");
    assert_eq!(reset_steps, 0, "SameStep never returns a reward-0 step");
}

#[test]
fn truncation_happens_exactly_at_max_episode_steps_in_both_modes() {
    for autoreset in [AutoresetMode::NextStep, AutoresetMode::SameStep] {
        let config = CartPoleConfig {
            autoreset,
            max_episode_steps: 7,
            ..Default::default()
        };
        let (ended, _) = run_against_reference(config, 64, 30);
        assert!(ended >= 64 * 3, "{autoreset:?}: {ended} episodes ended");
    }
}

/// Every env truncates at once, so the reset step resets all of them: 1000 envs (not a
/// multiple of any vector width) are more resets in one call than the native step queues
/// before drawing, and the last vector is partial.
#[test]
fn next_step_reset_step_ignores_action_gives_zero_reward_and_new_state() {
    for plan in util::single_step_plans() {
        next_step_reset_step(plan, 1000);
    }
}

fn next_step_reset_step(plan: StepPlan, n: usize) {
    let config = CartPoleConfig {
        max_episode_steps: 3,
        ..Default::default()
    };
    let seed = 42;
    let mut env = util::env_with(n, config, plan, seed);
    let actions: Vec<u32> = (0..n as u32).map(|i| i % 2).collect();
    let flipped: Vec<u32> = actions.iter().map(|a| 1 - a).collect();
    for expected_elapsed in [1, 2] {
        let out = env.step(&actions).unwrap();
        assert_eq!(out.reward, vec![1.0; n], "{plan}");
        assert_eq!(env.elapsed_steps().unwrap(), vec![expected_elapsed; n]);
    }
    let out = env.step(&actions).unwrap();
    assert_eq!(out.truncated, vec![true; n], "{plan}");
    assert_eq!(out.reward, vec![1.0; n], "{plan}");
    assert_eq!(env.elapsed_steps().unwrap(), vec![3; n]);
    // The reset step: the action is ignored, reward 0, flags false, state is reset number 1.
    let out = env.step(&flipped).unwrap();
    assert_eq!(out.reward, vec![0.0; n], "{plan}");
    assert_eq!(out.terminated, vec![false; n], "{plan}");
    assert_eq!(out.truncated, vec![false; n], "{plan}");
    for i in 0..n {
        assert_eq!(
            util::row(&out, i),
            reset_state(seed, i as u32, 1, &config.params).observation(),
            "{plan} env {i}"
        );
    }
    assert_eq!(env.elapsed_steps().unwrap(), vec![0; n]);
    assert!(out.final_obs.is_none());
    let out = env.step(&flipped).unwrap();
    assert_eq!(out.reward, vec![1.0; n], "{plan}");
    assert_eq!(env.elapsed_steps().unwrap(), vec![1; n]);
}

#[test]
fn terminating_step_reports_reward_one_and_same_step_returns_final_observation() {
    let config = CartPoleConfig {
        autoreset: AutoresetMode::SameStep,
        ..Default::default()
    };
    let seed = 3;
    let mut env = util::env(2, config, seed);
    // Env 0 is about to leave the track; env 1 is safe.
    let about_to_fall = CartPoleState::from_array([2.39, 1.0, 0.0, 0.0]);
    env.set_state(&util::states(&[about_to_fall, CartPoleState::default()]))
        .unwrap();
    let out = env.step(&[1, 1]).unwrap();
    assert_eq!(out.terminated, vec![true, false]);
    assert_eq!(out.reward, vec![1.0, 1.0]);
    assert!(
        out.final_obs.is_some(),
        "SameStep reports final observations"
    );
    let final_row = util::final_row(&out, 0).expect("env 0 ended");
    assert!((final_row[0] - 2.41).abs() < 1e-6, "{final_row:?}");
    assert!(util::final_row(&out, 1).is_none());
    assert_eq!(
        util::row(&out, 0),
        reset_state(seed, 0, 1, &config.params).observation()
    );
    assert_eq!(env.elapsed_steps().unwrap(), vec![0, 1]);
}

#[test]
fn disabled_mode_keeps_integrating_after_termination() {
    let config = CartPoleConfig {
        autoreset: AutoresetMode::Disabled,
        ..Default::default()
    };
    let mut env = util::env(1, config, 0);
    env.set_state(&util::states(&[CartPoleState::from_array([
        2.39, 1.0, 0.0, 0.0,
    ])]))
    .unwrap();
    assert!(env.step(&[1]).unwrap().terminated[0]);
    let out = env.step(&[1]).unwrap();
    assert!(out.terminated[0]);
    assert_eq!(out.reward[0], 1.0);
    assert!(out.obs[0] > 2.42);
}

/// gymnasium's `sutton_barto_reward`: 0 a step, -1 on the terminating step, 0 on a
/// `NextStep` reset step, under every plan.
#[test]
fn sutton_barto_rewards_under_every_plan() {
    let params = cartfuse::CartPoleParams {
        sutton_barto_reward: true,
        ..Default::default()
    };
    let config = CartPoleConfig {
        params,
        ..CartPoleConfig::default()
    };
    for plan in util::single_step_plans() {
        let mut env = util::env_with(2, config, plan, 1);
        // Env 0 upright; env 1 past the angle limit after one step (0.2 + 0.02 * 2.0 rad).
        env.set_state(&[vec![0.0; 4], vec![0.0, 0.0, 0.2, 2.0]])
            .unwrap();
        let out = env.step(&[0, 1]).unwrap();
        assert_eq!(out.reward, [0.0, -1.0], "{plan}");
        assert_eq!(out.terminated, [false, true], "{plan}");
        let out = env.step(&[0, 1]).unwrap();
        assert_eq!(out.reward, [0.0, 0.0], "{plan}: env 1 resets");
    }
}
