//! Resets: bounds, seeding, and the device generator equal to the host one bit for bit.

use cartfuse::env::reference::reset_state;
use cartfuse::{AutoresetMode, CartPoleConfig, StepPlan};

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
fn masked_reset_redraws_only_masked_envs_under_every_plan() {
    for plan in util::single_step_plans() {
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

/// Env `i`'s reset number `r` under its own seed: Threefry keyed by that seed alone.
fn own_reset(seed: u64, r: u32) -> [f32; 4] {
    reset_state(seed, 0, r, &cartfuse::CartPoleParams::default()).observation()
}

#[test]
fn per_env_seeds_key_each_env_by_its_own_seed_under_every_plan() {
    for plan in util::single_step_plans() {
        let mut env = util::build(3, CartPoleConfig::default(), plan).unwrap();
        let seeds = [Some(5), Some(1 << 40), Some(5)];
        let obs = env.reset_seeded(&seeds, None, None).unwrap();
        assert_eq!(util::obs_row(&obs, 0), own_reset(5, 0), "{plan}");
        assert_eq!(util::obs_row(&obs, 1), own_reset(1 << 40, 0), "{plan}");
        // The same seed at another index draws the same state: no index in the key.
        assert_eq!(util::obs_row(&obs, 2), own_reset(5, 0), "{plan}");
        assert_eq!(env.seed(), None);
        // Continuing: each env's next reset of its own stream; a masked reseed restarts one.
        let obs = env.reset_seeded(&[None; 3], None, None).unwrap();
        assert_eq!(util::obs_row(&obs, 1), own_reset(1 << 40, 1), "{plan}");
        let obs = env.reset(None).unwrap();
        assert_eq!(util::obs_row(&obs, 0), own_reset(5, 2), "{plan}");
        let reseed = [None, Some(9), Some(9)];
        let obs = env.reset_seeded(&reseed, Some(&[true, true, false]), None);
        let obs = obs.unwrap();
        assert_eq!(util::obs_row(&obs, 0), own_reset(5, 3), "{plan}");
        assert_eq!(util::obs_row(&obs, 1), own_reset(9, 0), "{plan}");
        assert_eq!(util::obs_row(&obs, 2), own_reset(5, 2), "{plan}: kept");
    }
}

#[test]
fn an_envs_episodes_depend_on_its_seed_and_actions_only_whatever_the_batch() {
    for plan in util::single_step_plans() {
        for autoreset in [AutoresetMode::NextStep, AutoresetMode::SameStep] {
            let config = CartPoleConfig {
                autoreset,
                max_episode_steps: 9,
                ..CartPoleConfig::default()
            };
            // Seed 42 at index 1 of four envs and at index 6 of eight.
            let mut small = util::build(4, config, plan).unwrap();
            let mut large = util::build(8, config, plan).unwrap();
            let seeds = |n: u64, at: u64| -> Vec<Option<u64>> {
                (0..n).map(|i| Some(if i == at { 42 } else { 1000 + n * 10 + i })).collect()
            };
            small.reset_seeded(&seeds(4, 1), None, None).unwrap();
            large.reset_seeded(&seeds(8, 6), None, None).unwrap();
            for step in 0..40usize {
                // The tracked env acts alike in both batches; the others as they please.
                let tracked = ((step * 7 + step / 3) % 2) as u32;
                let mut a: Vec<u32> = (0..4).map(|i| ((step + i) % 2) as u32).collect();
                let mut b: Vec<u32> = (0..8).map(|i| ((step + 3 * i) % 2) as u32).collect();
                (a[1], b[6]) = (tracked, tracked);
                let x = small.step(&a).unwrap();
                let y = large.step(&b).unwrap();
                assert_eq!(x.obs_row(1), y.obs_row(6), "{plan} {autoreset:?} step {step}");
                assert_eq!(
                    (x.reward[1], x.terminated[1], x.truncated[1]),
                    (y.reward[6], y.terminated[6], y.truncated[6]),
                    "{plan} {autoreset:?} step {step}"
                );
            }
            // Several autoresets happened in the window (9-step episodes at most).
            assert!(large.elapsed_steps().unwrap()[6] < 9);
        }
    }
}

#[test]
fn a_masked_reset_keeps_the_other_envs_counters_in_every_mode() {
    for plan in util::single_step_plans() {
        for autoreset in [
            AutoresetMode::NextStep,
            AutoresetMode::SameStep,
            AutoresetMode::Disabled,
        ] {
            let config = CartPoleConfig {
                autoreset,
                ..CartPoleConfig::default()
            };
            let Ok(mut env) = util::build(3, config, plan) else {
                continue;
            };
            env.reset_seeded(&[Some(1), Some(2), Some(3)], None, None)
                .unwrap();
            let upright = vec![vec![0.0, 0.0, 0.0, 0.0]; 3];
            env.set_state(&upright).unwrap();
            for _ in 0..3 {
                env.step(&[0, 1, 0]).unwrap();
            }
            let obs = env
                .reset_seeded(&[None, Some(7), None], Some(&[false, true, false]), None)
                .unwrap();
            assert_eq!(env.elapsed_steps().unwrap(), [3, 0, 3], "{plan} {autoreset:?}");
            assert_eq!(util::obs_row(&obs, 1), own_reset(7, 0), "{plan} {autoreset:?}");
            let kept = env.state().unwrap();
            let row: [f32; 4] = std::array::from_fn(|c| kept[0][c] as f32);
            assert_eq!(util::obs_row(&obs, 0), row, "{plan} {autoreset:?}: kept");
        }
    }
}

#[test]
fn reset_bounds_place_every_drawn_component() {
    for plan in util::single_step_plans() {
        let mut env = util::build(5, CartPoleConfig::default(), plan).unwrap();
        let seeds = [Some(3); 5];
        // A point: every component exactly there.
        let point = [(0.25, 0.25); 4];
        let obs = env.reset_seeded(&seeds, None, Some(&point)).unwrap();
        assert!(obs.iter().all(|v| *v == 0.25), "{plan}: {obs:?}");
        // An interval: inside it, and the draws are the default reset's, placed there.
        let wide = [(-1.0, 3.0); 4];
        let obs = env.reset_seeded(&seeds, None, Some(&wide)).unwrap();
        let unit = own_reset(3, 0).map(|v| v / 0.05);
        for (k, v) in util::obs_row(&obs, 0).iter().enumerate() {
            assert!((-1.0..3.0).contains(v), "{plan}: {v}");
            assert!((v - (1.0 + 2.0 * unit[k])).abs() < 1e-5, "{plan}: {v}");
        }
        let bad = env.reset_seeded(&seeds, None, Some(&[(1.0, 0.0); 4])).unwrap_err();
        assert!(bad.to_string().contains("must not exceed"), "{bad}");
        let short = env.reset_seeded(&seeds, None, Some(&[(0.0, 1.0)])).unwrap_err();
        assert!(short.to_string().contains("expected 4 (low, high) pairs"), "{short}");
    }
}

#[test]
fn reset_bounds_of_the_mountain_car_and_pendulum() {
    use cartfuse::env::mountain_car::MountainCar;
    use cartfuse::env::pendulum::Pendulum;
    use cartfuse::env::{EpisodeOptions, VecEnv};
    let mut car = VecEnv::build(
        util::backend(),
        MountainCar::default(),
        4,
        EpisodeOptions::default_for::<MountainCar>(),
        StepPlan::default(),
    )
    .unwrap();
    let obs = car.reset_seeded(&[Some(1); 4], None, Some(&[(-0.3, -0.3)])).unwrap();
    // Position at the point, velocity 0, as gymnasium's low/high set the position only.
    assert!(obs.chunks(2).all(|row| row == [-0.3f32, 0.0]), "{obs:?}");
    let mut pendulum = VecEnv::build(
        util::backend(),
        Pendulum::default(),
        64,
        EpisodeOptions::default_for::<Pendulum>(),
        StepPlan::default(),
    )
    .unwrap();
    // x_init = 0.5, y_init = 0: the angle within [-0.5, 0.5), the speed exactly 0.
    pendulum
        .reset_seeded(&[Some(2); 64], None, Some(&[(-0.5, 0.5), (0.0, 0.0)]))
        .unwrap();
    for state in pendulum.state().unwrap() {
        assert!((-0.5..0.5).contains(&state[0]), "{state:?}");
        assert_eq!(state[1], 0.0);
    }
}
