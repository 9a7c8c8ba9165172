//! The checks every environment passes, on the native CPU runtime: one step of every plan
//! from given states against the environment's f64 reference, and resets against the
//! host's draws. Each environment module's tests run them; they are public so that an
//! environment defined outside this crate runs them too (`env/tests/toy_env.rs`). They
//! panic, as tests do, on the first disagreement.

use cartfuse_fusion::cpu::Cpu;

use crate::engine::StepPlan;
use crate::environment::{EpisodeOptions, GraphEnv};
use crate::params::AutoresetMode;
use crate::vec_env::VecEnv;

/// The error of `got` against `want`: absolute below magnitude 1, relative above.
pub fn error(got: f64, want: f64) -> f64 {
    (got - want).abs() / want.abs().max(1.0)
}

/// Whether `got` is within `tolerance` of `want` (see [`error`]).
pub fn close(got: f64, want: f64, tolerance: f64) -> bool {
    error(got, want) <= tolerance
}

/// Steps envs set to `start` once with `actions` under every plan that builds for `E` on
/// the CPU, and compares observations and rewards (within `tolerance`, relative above 1)
/// and terminations (exactly) with [`GraphEnv::reference_step`]. Returns the worst
/// observation error over every plan.
pub fn every_plan_matches_the_reference<E: GraphEnv>(
    env: &E,
    start: &[Vec<f64>],
    actions: &[E::Action],
    tolerance: f64,
) -> f64 {
    let mut worst = 0.0f64;
    let episode = EpisodeOptions {
        autoreset: AutoresetMode::Disabled,
        max_episode_steps: E::MAX_EPISODE_STEPS,
    };
    let n = start.len();
    let mut plans = 0;
    for plan in StepPlan::all() {
        let Ok(mut vec_env) = VecEnv::build(Cpu::default(), env.clone(), n, episode, plan) else {
            assert!(
                plan == StepPlan::HandWritten && env.hand_written(&episode).is_none(),
                "{}: {plan} does not build, and only a hand-written step the env does not \
                 offer may fail",
                E::ID
            );
            continue;
        };
        let k = vec_env.steps_per_call();
        vec_env.reset(Some(1)).unwrap();
        vec_env.set_state(start).unwrap();
        let all_actions: Vec<E::Action> = (0..k).flat_map(|_| actions.to_vec()).collect();
        let out = vec_env.step(&all_actions).unwrap();
        for (i, state) in start.iter().enumerate() {
            let (next, reward, terminated) = env.reference_step(state, actions[i]);
            let want = env.reference_observe(&next);
            let row = out.obs_row(i);
            for (got, want) in row.iter().zip(&want) {
                worst = worst.max(error(f64::from(*got), f64::from(*want)));
                assert!(
                    close(f64::from(*got), f64::from(*want), tolerance),
                    "{plan} env {i} from {state:?} under {:?}: {row:?} vs {want:?}",
                    actions[i]
                );
            }
            assert!(
                close(f64::from(out.reward[i]), reward, tolerance),
                "{plan} env {i}: reward {} vs {reward}",
                out.reward[i]
            );
            assert_eq!(out.terminated[i], terminated, "{plan} env {i}");
        }
        plans += 1;
    }
    assert!(plans >= 6, "{}: only {plans} plans ran", E::ID);
    worst
}

/// Every env reset with `seed` holds the state the host draws for its lane.
pub fn resets_match_the_host_draws<E: GraphEnv>(env: &E, n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut vec_env = VecEnv::build(
        Cpu::default(),
        env.clone(),
        n,
        EpisodeOptions::default_for::<E>(),
        StepPlan::default(),
    )
    .unwrap();
    let obs = vec_env.reset(Some(seed)).unwrap();
    (0..n)
        .map(|i| {
            let want = crate::graph::reference_reset(env, seed, i as u32, 0);
            let row = &obs[E::OBS_DIM * i..E::OBS_DIM * (i + 1)];
            let expected = env.reference_observe(&want);
            for (got, want) in row.iter().zip(&expected) {
                assert!(
                    close(f64::from(*got), f64::from(*want), 1e-6),
                    "env {i}: {row:?} vs {expected:?}"
                );
            }
            want
        })
        .collect()
}
