//! Resets: bounds, seeding, and the device generator equal to the host one bit for bit.

use cartfuse::env::reference::reset_state;
use cartfuse::{CartPoleConfig, StepPlan};

use super::util;

#[test]
fn reset_observations_are_in_bounds_and_equal_the_host_generator_bitwise() {
    let n = 10_000;
    for plan in util::single_step_plans() {
        reset_matches_host(n, CartPoleConfig::default(), plan);
    }
}

/// The device draws (the reset kernel of every plan) against the host generator.
fn reset_matches_host(n: usize, config: CartPoleConfig, plan: StepPlan) {
    let mut env = util::env_with(n, config, plan, 0);
    for seed in [0u64, 1, 0xdead_beef_cafe_f00d] {
        let obs = env.reset(Some(seed)).unwrap();
        for (i, row) in obs
            .chunks_exact(4)
            .map(|r| <[f32; 4]>::try_from(r).unwrap())
            .enumerate()
        {
            let host = reset_state(seed, i as u32, 0, &config.params).observation();
            assert_eq!(
                row.map(f32::to_bits),
                host.map(f32::to_bits),
                "env {i} seed {seed}"
            );
            for value in row {
                assert!((-0.05f32..0.05).contains(&value), "env {i}: {value}");
            }
        }
    }
}

#[test]
fn same_seed_same_output_different_seed_different_output() {
    let n = 4096;
    let mut env = util::env(n, CartPoleConfig::default(), 0);
    let first = env.reset(Some(123)).unwrap();
    let again = env.reset(Some(123)).unwrap();
    let other = env.reset(Some(124)).unwrap();
    assert_eq!(first, again);
    let differing = first
        .chunks_exact(4)
        .zip(other.chunks_exact(4))
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(
        differing, n,
        "every env must draw differently under another seed"
    );
    // Distinct envs draw distinct states.
    assert_ne!(util::obs_row(&first, 0), util::obs_row(&first, 1));
}

#[test]
fn reset_without_seed_continues_the_stream() {
    for plan in util::single_step_plans() {
        reset_continues_stream(CartPoleConfig::default(), plan);
    }
}

fn reset_continues_stream(config: CartPoleConfig, plan: StepPlan) {
    let mut env = util::env_with(8, config, plan, 99);
    let next = env.reset(None).unwrap();
    for i in 0..8 {
        assert_eq!(
            util::obs_row(&next, i),
            reset_state(99, i as u32, 1, &config.params).observation()
        );
    }
    assert_eq!(env.seed(), Some(99));
    assert_eq!(env.elapsed_steps().unwrap(), vec![0; 8]);
}

#[test]
fn reset_without_any_seed_draws_a_fresh_one() {
    let mut env =
        util::build(4, CartPoleConfig::default(), cartfuse::StepPlan::default())
            .unwrap();
    let obs = env.reset(None).unwrap();
    let seed = env.seed().expect("seeded on first reset");
    assert_eq!(obs, env.reset(Some(seed)).unwrap());
}

#[test]
fn masked_reset_redraws_only_masked_envs_under_every_graph_plan() {
    for plan in util::single_step_plans() {
        if plan == StepPlan::HandWritten {
            continue;
        }
        let config = CartPoleConfig::default();
        let mut env = util::env_with(6, config, plan, 7);
        let moved: Vec<Vec<f64>> = (0..6)
            .map(|i| vec![0.5 + i as f64, 0.0, 0.1, 0.0])
            .collect();
        env.set_state(&moved).unwrap();
        let mask = [true, false, true, false, false, true];
        let obs = env.reset_masked(None, &mask).unwrap();
        for (i, masked) in mask.iter().enumerate() {
            let want = if *masked {
                reset_state(7, i as u32, 1, &config.params).observation()
            } else {
                moved[i]
                    .iter()
                    .map(|v| *v as f32)
                    .collect::<Vec<_>>()
                    .try_into()
                    .unwrap()
            };
            assert_eq!(util::obs_row(&obs, i), want, "{plan} env {i}");
        }
        assert_eq!(env.elapsed_steps().unwrap(), vec![0; 6]);
    }
}

#[test]
fn hand_written_engine_refuses_a_masked_reset() {
    let mut env = match util::build(2, CartPoleConfig::default(), StepPlan::HandWritten) {
        Ok(env) => env,
        // This runtime has no hand-written kernel, and says so.
        Err(cartfuse::EnvError::PlanUnavailable { .. }) => return,
        Err(other) => panic!("{other}"),
    };
    env.reset(Some(1)).unwrap();
    let error = env
        .reset_masked(None, &[true, false])
        .unwrap_err()
        .to_string();
    assert!(error.contains("graph plan"), "{error}");
}
