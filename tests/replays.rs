//! Each environment's recorded gymnasium episodes replayed on every runtime of the build,
//! and the runtimes compared with each other (issue 51: the same episodes on every device).
//!
//! Each episode runs open loop from its recorded initial state with its recorded actions
//! under the fused plan; the observations of its steps are compared runtime against runtime
//! (the native CPU runtime's compiled kernels are the reference), bit for bit and by the
//! largest error (absolute below 1, relative above).
//!
//! - A runtime whose float arithmetic is the CPU's ([`FloatAgreement::Bitwise`]: the CPU's
//!   interpreter, Mesa's lavapipe, CUDA): every step of every episode bit for bit, Acrobot's
//!   chaotic ones included. Kernels compute `sin`, `cos`, `exp`, ... by the CPU's algorithms
//!   (`fusion::cube::math`) and their multiplies and adds stay apart (naga writes them
//!   `NoContraction`, NVRTC compiles with `--fmad=false`; `vendor/README.md`). Before that
//!   (2026-11-28) lavapipe replays differed on four environments of five, by up to 1.5e-5.
//! - Any other runtime ([`FloatAgreement::Bounded`], such as another Vulkan driver, which may
//!   divide approximately): within [`DEVICE_BOUND`] over the first `horizon` steps, the bound
//!   the replays against gymnasium hold to.
//!
//! Beside them, the PPO network fused into CartPole's rollout: a sampled trajectory is the
//! CPU's bit for bit wherever the runtime's floats are.

use burn::backend::NdArray;
use cartfuse::env::acrobot::Acrobot;
use cartfuse::env::mountain_car::MountainCar;
use cartfuse::env::mountain_car_continuous::MountainCarContinuous;
use cartfuse::env::pendulum::Pendulum;
use cartfuse::env::rollout::{PolicyRollout, Trajectory};
use cartfuse::env::{CartPole, EnvBackend, EpisodeOptions, GraphEnv, VecEnv};
use cartfuse::fusion::exec::{Backend as _, FloatAgreement};
use cartfuse::fusion::plan::Strategy;
use cartfuse::train::ActorCritic;
use cartfuse::{CartPoleConfig, StepPlan};

use crate::fixtures::{Fixture, Recorded, load};

/// Every observation of each episode's recorded steps (`[lane][step]`), replayed on
/// `backend`.
fn replay<E: GraphEnv + Default, B: EnvBackend>(backend: B, fixture: &Fixture) -> Vec<Vec<[f32; 8]>>
where
    E::Action: Recorded,
{
    let lanes = fixture.episodes.len();
    let starts = fixture.initial_states();
    let longest = fixture.longest_episode();
    let plan = StepPlan::Graph(Strategy::Fused);
    let mut env = VecEnv::build(
        backend,
        E::default(),
        lanes,
        EpisodeOptions::default_for::<E>(),
        plan,
    )
    .expect("the fused plan builds");
    env.reset(Some(0)).unwrap();
    env.set_state(&starts).unwrap();
    let mut observations = vec![Vec::new(); lanes];
    for t in 0..longest {
        let actions: Vec<E::Action> = fixture
            .episodes
            .iter()
            .map(|e| E::Action::from_recorded(e.actions[t.min(e.actions.len() - 1)]))
            .collect();
        let out = env.step(&actions).unwrap();
        for (lane, episode) in fixture.episodes.iter().enumerate() {
            if t < episode.actions.len() {
                let mut row = [0.0f32; 8];
                let obs = out.obs_row(lane);
                row[..obs.len()].copy_from_slice(obs);
                observations[lane].push(row);
            }
        }
    }
    observations
}

/// How one runtime's replay compares with the reference's.
#[derive(Debug)]
struct Agreement {
    /// Steps whose observations are identical bit for bit, over all episodes.
    identical_steps: usize,
    /// Steps compared.
    steps: usize,
    /// The earliest step (over episodes) at which any observation bit differs.
    first_difference: Option<usize>,
    /// The largest error over every step before `horizon`.
    worst_error: f64,
}

/// `other` against `reference`, errors taken over the first `horizon` steps of each episode.
fn compare(reference: &[Vec<[f32; 8]>], other: &[Vec<[f32; 8]>], horizon: usize) -> Agreement {
    let mut agreement = Agreement {
        identical_steps: 0,
        steps: 0,
        first_difference: None,
        worst_error: 0.0,
    };
    for (want_episode, got_episode) in reference.iter().zip(other) {
        for (t, (want, got)) in want_episode.iter().zip(got_episode).enumerate() {
            agreement.steps += 1;
            let identical = want
                .iter()
                .zip(got)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            if identical {
                agreement.identical_steps += 1;
            } else {
                let first = agreement.first_difference.get_or_insert(t);
                *first = (*first).min(t);
            }
            if t < horizon {
                for (a, b) in want.iter().zip(got) {
                    let error = (f64::from(*b) - f64::from(*a)).abs() / f64::from(a.abs()).max(1.0);
                    // NaN fails: `max` would drop it.
                    assert!(!error.is_nan(), "a NaN observation at step {t}");
                    agreement.worst_error = agreement.worst_error.max(error);
                }
            }
        }
    }
    agreement
}

/// One runtime's replay of every episode.
struct Replay {
    runtime: &'static str,
    agreement: FloatAgreement,
    observations: Vec<Vec<[f32; 8]>>,
}

/// `E`'s episodes replayed on `backend`, named `runtime`.
fn replay_on<E: GraphEnv + Default, B: EnvBackend>(
    runtime: &'static str,
    backend: B,
    fixture: &Fixture,
) -> Replay
where
    E::Action: Recorded,
{
    Replay {
        runtime,
        agreement: backend.float_agreement(),
        observations: replay::<E, _>(backend, fixture),
    }
}

/// The runtimes of this build, each replaying `E`'s episodes.
fn replays<E: GraphEnv + Default>(fixture: &Fixture) -> Vec<Replay>
where
    E::Action: Recorded,
{
    #[cfg_attr(not(feature = "cuda"), allow(unused_mut))]
    let mut out = vec![
        replay_on::<E, _>("cpu", crate::cpu::backend(), fixture),
        replay_on::<E, _>(
            "cpu-interpreted",
            crate::cpu_interpreted::backend(),
            fixture,
        ),
        replay_on::<E, _>("wgpu", crate::wgpu::backend(), fixture),
    ];
    #[cfg(feature = "cuda")]
    out.push(replay_on::<E, _>("cuda", crate::cuda::backend(), fixture));
    out
}

/// The largest error a [`FloatAgreement::Bounded`] runtime's replay may show against the
/// CPU's.
const DEVICE_BOUND: f64 = 1e-4;

/// Replays `E` on every runtime and checks each against the CPU's compiled kernels: bit for
/// bit where the runtime's arithmetic is the CPU's, else within [`DEVICE_BOUND`] over the
/// first `horizon` steps.
fn runtimes_agree<E: GraphEnv + Default>(horizon: usize)
where
    E::Action: Recorded,
{
    let fixture = load::<E>();
    let runs = replays::<E>(&fixture);
    let reference = &runs[0].observations;
    for run in &runs[1..] {
        let agreement = compare(reference, &run.observations, horizon);
        let name = run.runtime;
        println!(
            "{} {name} ({:?}) against cpu: {agreement:?}",
            E::ID,
            run.agreement
        );
        if run.agreement.is_bitwise() {
            assert_eq!(
                agreement.first_difference,
                None,
                "{} {name}: {agreement:?}",
                E::ID
            );
        } else {
            assert!(
                agreement.worst_error <= DEVICE_BOUND,
                "{} {name}: {agreement:?} (bound {DEVICE_BOUND:e})",
                E::ID
            );
        }
    }
}

#[test]
fn cartpole_replays_agree_across_runtimes() {
    runtimes_agree::<CartPole>(usize::MAX);
}

#[test]
fn mountain_car_replays_agree_across_runtimes() {
    runtimes_agree::<MountainCar>(usize::MAX);
}

#[test]
fn mountain_car_continuous_replays_agree_across_runtimes() {
    runtimes_agree::<MountainCarContinuous>(usize::MAX);
}

#[test]
fn pendulum_replays_agree_across_runtimes() {
    runtimes_agree::<Pendulum>(usize::MAX);
}

#[test]
fn acrobot_replays_agree_across_runtimes() {
    runtimes_agree::<Acrobot>(250);
}

/// `cartfuse train`'s network (4 -> 64 -> 64, `tanh`) fused into CartPole's rollout under
/// `fused-x8`: 32 steps of 64 envs from one reset seed and one draw key, episodes cut at 20
/// steps so they reset inside the kernels, on `backend`.
fn policy_rollout<B: EnvBackend>(backend: &B) -> Trajectory {
    let model = ActorCritic::<NdArray>::new(4, 2, 64, 3, &Default::default());
    let (spec, weights) = model.rollout_weights().expect("the network's weights");
    let config = CartPoleConfig {
        max_episode_steps: 20,
        ..Default::default()
    };
    let mut rollout = PolicyRollout::new(
        backend,
        &config.params,
        &config.episode(),
        spec,
        Strategy::FusedSteps(8),
        64,
    )
    .expect("a rollout");
    rollout.set_weights(&weights).expect("weights");
    rollout.set_draws([5, 6], 0).expect("draws");
    rollout.reset(7).expect("reset");
    rollout.collect(32).expect("a trajectory")
}

/// The policy inside the rollout samples the same actions, log-probabilities, values and
/// observations on every runtime whose floats are the CPU's, bit for bit (the categorical
/// draw compares a Threefry uniform with `exp` of log-probabilities, so one ulp anywhere
/// could flip an action); on any other runtime, the first step (before actions can part)
/// within [`DEVICE_BOUND`].
#[test]
fn a_policy_rollout_agrees_across_runtimes() {
    let reference = policy_rollout(&crate::cpu::backend());
    assert!(reference.actions.contains(&0) && reference.actions.contains(&1));
    assert!(
        reference.truncated.iter().any(|t| *t),
        "episodes reset in the kernels"
    );
    #[cfg_attr(not(feature = "cuda"), allow(unused_mut))]
    let mut runs = vec![
        (
            "cpu-interpreted",
            FloatAgreement::Bitwise,
            policy_rollout(&crate::cpu_interpreted::backend()),
        ),
        (
            "wgpu",
            crate::wgpu::backend().float_agreement(),
            policy_rollout(&crate::wgpu::backend()),
        ),
    ];
    #[cfg(feature = "cuda")]
    runs.push((
        "cuda",
        crate::cuda::backend().float_agreement(),
        policy_rollout(&crate::cuda::backend()),
    ));
    for (runtime, agreement, run) in &runs {
        if agreement.is_bitwise() {
            assert_eq!(run.actions, reference.actions, "{runtime}: actions");
            assert_eq!(run.rewards, reference.rewards, "{runtime}: rewards");
            assert_eq!(run.truncated, reference.truncated, "{runtime}: truncations");
            for (name, got, want) in [
                ("log-probs", &run.log_probs, &reference.log_probs),
                ("values", &run.values, &reference.values),
                ("observations", &run.next_obs, &reference.next_obs),
            ] {
                let first = got
                    .iter()
                    .zip(want)
                    .position(|(a, b)| a.to_bits() != b.to_bits());
                if let Some(i) = first {
                    panic!(
                        "{runtime}: {name}[{i}] is {:e}, the CPU's {:e}",
                        got[i], want[i]
                    );
                }
            }
        } else {
            let first = reference.num_envs;
            for (name, got, want) in [
                ("log-probs", &run.log_probs, &reference.log_probs),
                ("values", &run.values, &reference.values),
            ] {
                for (a, b) in got[..first].iter().zip(&want[..first]) {
                    let error = (f64::from(*a) - f64::from(*b)).abs() / f64::from(b.abs()).max(1.0);
                    assert!(
                        error <= DEVICE_BOUND,
                        "{runtime}: first step's {name}: {a} against {b}"
                    );
                }
            }
        }
    }
}
