//! A policy fused into the rollout, on the runtime under test: the same actions,
//! log-probabilities and values as burn's forward pass on the same weights and draws, the
//! same trajectory under every plan, T / K launches, and clear errors.

use std::sync::Arc;

use burn::backend::NdArray;
use burn::tensor::{Tensor, TensorData};
use cartfuse::env::policy::{PolicySpec, PolicyWeights};
use cartfuse::env::rollout::{PolicyRollout, Trajectory};
use cartfuse::env::mountain_car::MountainCar;
use cartfuse::env::pendulum::Pendulum;
use cartfuse::env::{CartPole, EpisodeOptions, VecEnv};
use cartfuse::fusion::exec::{Backend as _, LaunchLedger};
use cartfuse::fusion::plan::Strategy;
use cartfuse::train::ActorCritic;
use cartfuse::train::policy::{action_uniform, categorical, log_softmax_row};
use cartfuse::{AutoresetMode, CartPoleConfig, EnvError, StepPlan};

use super::util;

use crate::close::assert_close;

/// A short time limit, so the trajectories cross truncations and resets.
fn config() -> CartPoleConfig {
    CartPoleConfig {
        autoreset: AutoresetMode::SameStep,
        max_episode_steps: 9,
        ..Default::default()
    }
}

fn rollout(spec: &PolicySpec, weights: &PolicyWeights, strategy: Strategy, n: usize) -> PolicyRollout<super::TestBackend> {
    let config = config();
    let mut rollout =
        PolicyRollout::new(&util::backend(), &config.params, &config.episode(), spec.clone(), strategy, n)
            .expect("a rollout");
    rollout.set_weights(weights).expect("weights");
    rollout
}

/// Weights spread enough that the policy is far from uniform and depends on the state.
fn synthetic_weights(spec: &PolicySpec) -> PolicyWeights {
    let spread = |count: usize, salt: usize| {
        (0..count)
            .map(|i| ((i * 37 + salt) % 23) as f32 / 11.0 - 1.0)
            .collect()
    };
    PolicyWeights {
        actor: spread(spec.actor.param_count(), 3),
        critic: spread(spec.critic.param_count(), 7),
    }
}


/// The policy in burn (NdArray) and the env stepped by a vector env, one step at a time,
/// draws from the same generator: the fused rollout must choose the same actions.
#[test]
fn the_fused_policy_acts_as_burn_does_on_the_same_weights_and_draws() {
    let (n, steps, seed, key, first_step) = (23, 24, 5, [11, 12], 40);
    let device = Default::default();
    // 37 wide: a 37-input layer's dot products loop over two chunks of 16 terms and unroll
    // the last 4 (`fusion::lir::loop_budget::DOT_CHUNK`); 8 wide: the remainder alone.
    for (hidden, strategy) in [(8, Strategy::Fused), (8, Strategy::FusedSteps(4)), (37, Strategy::FusedSteps(4))] {
        let model = ActorCritic::<NdArray>::new(4, 2, hidden, 3, &device);
        let (spec, weights) = model.rollout_weights().unwrap();
        let what = format!("{strategy} at {hidden} wide");
        let mut fused = rollout(&spec, &weights, strategy, n);
        fused.set_draws(key, first_step).unwrap();
        let mut obs = fused.reset(seed).unwrap();
        let trajectory = fused.collect(steps).unwrap();

        let mut env: VecEnv<CartPole, super::TestBackend> = util::build(n, config(), StepPlan::Graph(Strategy::Fused)).unwrap();
        assert_eq!(env.reset(Some(seed)).unwrap(), obs, "{what}: the reset observations");
        for t in 0..steps {
            let tensor = Tensor::<NdArray, 2>::from_data(TensorData::new(obs.clone(), [n, 4]), &device);
            let logits = model.logits(tensor.clone()).into_data().to_vec::<f32>().unwrap();
            let values = model.value(tensor).into_data().to_vec::<f32>().unwrap();
            let row = t * n..(t + 1) * n;
            let mut actions = Vec::with_capacity(n);
            let mut log_probs = Vec::with_capacity(n);
            for (lane, logits) in logits.chunks(2).enumerate() {
                let lp = log_softmax_row(logits);
                let u = action_uniform(key, lane as u32, first_step + t as u32);
                let action = categorical(&lp, u);
                actions.push(action as u32);
                log_probs.push(lp[action]);
            }
            assert_eq!(trajectory.actions[row.clone()], actions[..], "{what}: actions at step {t}");
            assert_close(&format!("{what}: log-probs at {t}"), &trajectory.log_probs[row.clone()], &log_probs, 1e-5);
            assert_close(&format!("{what}: values at {t}"), &trajectory.values[row.clone()], &values, 1e-5);
            let out = env.step(&actions).unwrap();
            assert_eq!(trajectory.rewards[row.clone()], out.reward[..], "{what}: rewards at {t}");
            assert_eq!(trajectory.terminated[row.clone()], out.terminated[..]);
            assert_eq!(trajectory.truncated[row.clone()], out.truncated[..]);
            let rows = t * n * 4..(t + 1) * n * 4;
            assert_close("next obs", &trajectory.next_obs[rows.clone()], &out.obs, 1e-6);
            assert_close("final obs", &trajectory.final_obs.as_ref().unwrap()[rows], out.final_obs.as_ref().unwrap(), 1e-6);
            obs = out.obs;
        }
        let ends = trajectory.truncated.iter().filter(|t| **t).count();
        assert!(ends >= n, "{what}: the 9-step limit cut every env at least once ({ends})");
        assert!(trajectory.actions.contains(&0) && trajectory.actions.contains(&1));
    }
}

fn assert_same_trajectory(what: &str, a: &Trajectory, b: &Trajectory) {
    assert_eq!(a.actions, b.actions, "{what}: actions");
    assert_eq!(a.terminated, b.terminated, "{what}: terminated");
    assert_eq!(a.truncated, b.truncated, "{what}: truncated");
    assert_eq!(a.rewards, b.rewards, "{what}: rewards");
    assert_close(&format!("{what}: log-probs"), &a.log_probs, &b.log_probs, 1e-5);
    assert_close(&format!("{what}: values"), &a.values, &b.values, 1e-5);
    assert_close(&format!("{what}: next obs"), &a.next_obs, &b.next_obs, 1e-5);
}

/// Every plan, from one kernel per op to K steps in one launch, rolls out the same
/// trajectory, in `steps / K` calls of its launches each.
#[test]
fn every_plan_rolls_out_the_same_trajectory_in_t_over_k_calls() {
    let (n, steps) = (19, 12);
    let spec = PolicySpec::tanh_mlp(&CartPole::default(), &[3]).unwrap();
    let weights = synthetic_weights(&spec);
    let run = |strategy: Strategy| {
        let mut rollout = rollout(&spec, &weights, strategy, n);
        rollout.set_draws([1, 2], 0).unwrap();
        rollout.reset(8).unwrap();
        let ledger = Arc::new(LaunchLedger::new());
        rollout.set_ledger(ledger.clone());
        let trajectory = rollout.collect(steps).unwrap();
        (trajectory, ledger.totals().launches)
    };
    let (fused, fused_launches) = run(Strategy::Fused);
    assert_eq!(fused_launches, steps as u64, "fused: one launch per step");
    assert!(fused.actions.contains(&0) && fused.actions.contains(&1));
    for strategy in [Strategy::Eager, Strategy::Vertical, Strategy::Horizontal, Strategy::XlaDefault, Strategy::FusedSteps(3), Strategy::FusedSteps(12)] {
        let (trajectory, launches) = run(strategy);
        assert_same_trajectory(&strategy.to_string(), &trajectory, &fused);
        if let Strategy::FusedSteps(k) = strategy {
            assert_eq!(launches, (steps / k as usize) as u64, "{strategy}: T / K launches");
        } else {
            assert!(launches > steps as u64, "{strategy}: several kernels a step ({launches})");
        }
    }
}

/// PPO's own network (4 -> 64 -> 64, as `cartfuse train` builds it) under `fused-x8` and
/// `fused-x16`: the same trajectory as one step per launch, the last step of each call
/// included. Lavapipe once ended these kernels' loops early at the 8th step (its 65,535 loop
/// iterations a shader; `fusion::lir::loop_budget`) and wrote wrong critic values.
#[test]
fn the_ppo_network_rolls_out_the_same_trajectory_under_fused_x8_and_x16() {
    let (n, steps) = (23, 16);
    let model = ActorCritic::<NdArray>::new(4, 2, 64, 3, &Default::default());
    let (spec, weights) = model.rollout_weights().unwrap();
    let run = |strategy: Strategy| {
        let mut rollout = rollout(&spec, &weights, strategy, n);
        rollout.set_draws([3, 4], 0).unwrap();
        rollout.reset(9).unwrap();
        rollout.collect(steps).unwrap()
    };
    let one = run(Strategy::Fused);
    assert!(one.values.iter().any(|v| v.abs() > 1e-3), "the critic is not zero");
    for k in [8, 16] {
        assert_same_trajectory(&format!("fused-x{k} at 64 wide"), &run(Strategy::FusedSteps(k)), &one);
    }
}

/// A population in one rollout: each agent's envs, under its own weights, draw key and
/// reset seed, follow bit for bit the trajectory its envs follow alone, under one-kernel,
/// K-step and one-kernel-per-op plans, in the launches of one rollout (one a call when
/// fused). Bank sizes of 6 and 8 lanes reach scalar and four-lane kernels on devices.
#[test]
fn each_agent_of_a_population_rollout_follows_its_lone_trajectory() {
    let config = config();
    let small = PolicySpec::tanh_mlp(&config.params, &[3]).unwrap();
    let ppo = ActorCritic::<NdArray>::new(4, 2, 64, 3, &Default::default()).rollout_weights().unwrap().0;
    let (agents, steps, step0) = (3, 8, 5);
    let seeds = [21, 4, 21];
    let keys = [[1, 2], [3, 4], [5, 6]];
    for (spec, strategy, m) in [(&small, Strategy::Fused, 6), (&ppo, Strategy::FusedSteps(4), 8), (&small, Strategy::Eager, 8)] {
        // Agents differ in weights (the last two also in keys and seeds).
        let weights: Vec<PolicyWeights> = (0..agents)
            .map(|a| {
                let mut w = synthetic_weights(spec);
                w.actor.iter_mut().for_each(|x| *x *= 1.0 + a as f32 / 2.0);
                w
            })
            .collect();
        let mut population =
            PolicyRollout::population(&util::backend(), &config.params, &config.episode(), spec.clone(), strategy, (agents, m))
                .expect("a population");
        assert_eq!((population.agents(), population.num_envs()), (agents, agents * m));
        for (a, w) in weights.iter().enumerate() {
            population.set_agent_weights(a, w).unwrap();
        }
        population.set_draws_each(&keys, step0).unwrap();
        let obs = population.reset_each(&seeds).unwrap();
        let ledger = Arc::new(LaunchLedger::new());
        population.set_ledger(ledger.clone());
        let together = population.collect(steps).unwrap();
        let launches = ledger.totals().launches;
        match strategy {
            Strategy::Fused => assert_eq!(launches, steps as u64, "one launch a step for all agents"),
            Strategy::FusedSteps(k) => assert_eq!(launches, (steps / k as usize) as u64),
            _ => {}
        }
        for a in 0..agents {
            let mut alone = rollout(spec, &weights[a], strategy, m);
            alone.set_draws(keys[a], step0).unwrap();
            let lone_obs = alone.reset(seeds[a]).unwrap();
            assert_eq!(obs[a * m * 4..(a + 1) * m * 4], lone_obs[..], "{strategy}: agent {a}'s reset");
            let lone = alone.collect(steps).unwrap();
            assert_eq!(together.envs(a * m..(a + 1) * m), lone, "{strategy}: agent {a}'s trajectory");
        }
        // The agents' trajectories differ (else the test could not tell banks apart): agents
        // 0 and 2 share a reset seed, so their first log-probabilities differ by their actor
        // weights alone (a saturated policy may choose the same actions).
        let first = |a: usize| together.envs(a * m..(a + 1) * m).log_probs[..m].to_vec();
        assert_ne!(first(0), first(2));
        assert_ne!(together.envs(m..2 * m).next_obs, together.envs(2 * m..3 * m).next_obs);
    }
    let err = PolicyRollout::population(&util::backend(), &config.params, &config.episode(), small.clone(), Strategy::Fused, (0, 4))
        .err()
        .expect("no agents")
        .to_string();
    assert!(err.contains("needs an agent"), "{err}");
    let mut population =
        PolicyRollout::population(&util::backend(), &config.params, &config.episode(), small.clone(), Strategy::Fused, (2, 4))
            .unwrap();
    let err = population.reset_each(&[1]).unwrap_err().to_string();
    assert!(err.contains("2 banks of envs need one seed each, got 1 seeds"), "{err}");
    let err = population.set_draws_each(&[[1, 2]; 3], 0).unwrap_err().to_string();
    assert!(err.contains("needs one draw key per agent, got 3"), "{err}");
    let err = population.set_agent_weights(2, &synthetic_weights(&small)).unwrap_err().to_string();
    assert!(err.contains("agent 2 of a population of 2"), "{err}");
}

/// A population's `f32` params handed over as one buffer (as a learner on the device makes
/// them: each agent's weights at [`PolicyRollout::weight_slots`], the env's constants
/// where [`PolicyRollout::f32_params`] has them) act as the same weights set from the
/// host, bit for bit; on a device no params cross the bus for it, and a later host write
/// of one agent's weights keeps the others' from the buffer.
#[test]
fn a_population_acts_on_weights_from_a_params_buffer_as_on_the_hosts() {
    let config = config();
    let spec = PolicySpec::tanh_mlp(&config.params, &[5]).unwrap();
    let (agents, m, steps) = (3, 4, 8);
    let weights: Vec<PolicyWeights> = (0..agents)
        .map(|a| {
            let mut w = synthetic_weights(&spec);
            w.actor.iter_mut().for_each(|x| *x *= 1.0 - a as f32 / 3.0);
            w.critic.iter_mut().for_each(|x| *x += a as f32);
            w
        })
        .collect();
    let population = || {
        let mut p =
            PolicyRollout::population(&util::backend(), &config.params, &config.episode(), spec.clone(), Strategy::Fused, (agents, m))
                .expect("a population");
        p.set_draws_each(&[[1, 2], [3, 4], [5, 6]], 0).unwrap();
        p.reset_each(&[7, 8, 9]).unwrap();
        // Under the zero weights (a uniform policy), so the draw keys are on the device.
        p.collect(steps).unwrap();
        p
    };
    let mut from_host = population();
    for (a, w) in weights.iter().enumerate() {
        from_host.set_agent_weights(a, w).unwrap();
    }
    let mut from_buffer = population();
    let width = from_buffer.f32_params_per_agent();
    let slots = from_buffer.weight_slots().unwrap();
    assert_eq!(slots.len(), spec.actor.param_count() + spec.critic.param_count());
    let mut rows = from_buffer.f32_params().unwrap();
    assert_eq!(rows.len(), agents * width);
    assert!(width > slots.len(), "the env's constants share the rows");
    for (a, w) in weights.iter().enumerate() {
        for (&slot, &value) in slots.iter().zip(w.actor.iter().chain(&w.critic)) {
            rows[a * width + slot] = value;
        }
    }
    assert_eq!(from_host.f32_params().unwrap(), rows, "the host's weights, laid out as the buffer");
    let backend = from_buffer.backend().clone();
    let err = from_buffer.set_f32_params_buffer(backend.upload_f32(&rows[1..])).unwrap_err().to_string();
    assert!(err.contains(&format!("{} values ({agents} banks x {width} f32 params)", agents * width)), "{err}");
    from_buffer.set_f32_params_buffer(backend.upload_f32(&rows)).unwrap();
    assert_eq!(from_buffer.f32_params().unwrap(), rows);
    let before = backend.transfers();
    let on_buffer = from_buffer.collect(steps).unwrap();
    let uploads = backend.transfers().since(&before).created;
    assert_eq!(on_buffer, from_host.collect(steps).unwrap(), "the same trajectory");
    // A host write of agent 1's weights reads the buffer back first: agents 0 and 2 keep
    // theirs.
    for population in [&mut from_host, &mut from_buffer] {
        population.set_agent_weights(1, &weights[0]).unwrap();
    }
    let before = backend.transfers();
    let after_write = from_buffer.collect(steps).unwrap();
    let uploads_after_write = backend.transfers().since(&before).created;
    assert_eq!(after_write, from_host.collect(steps).unwrap(), "after a host write");
    assert_eq!(from_buffer.f32_params().unwrap(), from_host.f32_params().unwrap());
    if backend.runtime_name() != "cpu" {
        // The buffer is bound as it is; the host's table is uploaded (once) after its write.
        assert_eq!((uploads, uploads_after_write), (0, 1));
    }
}

#[test]
fn bad_policies_and_lengths_get_clear_errors() {
    let config = config();
    let spec = PolicySpec::tanh_mlp(&config.params, &[3]).unwrap();
    let mut rollout = rollout(&spec, &synthetic_weights(&spec), Strategy::FusedSteps(4), 5);
    let err = rollout.collect(4).unwrap_err();
    assert!(matches!(err, EnvError::NotReset), "{err}");
    rollout.reset(0).unwrap();
    let err = rollout.collect(6).unwrap_err().to_string();
    assert!(err.contains("multiple of the 4 steps"), "{err}");
    let mut short = synthetic_weights(&spec);
    short.actor.pop();
    let err = rollout.set_weights(&short).unwrap_err().to_string();
    assert!(err.contains("the actor [4, 3, 2] has 23 weights and biases, got 22"), "{err}");
    let mut nan = synthetic_weights(&spec);
    nan.critic[2] = f32::NAN;
    let err = rollout.set_weights(&nan).unwrap_err().to_string();
    assert!(err.contains("critic weight 2 is NaN"), "{err}");

    let err = PolicySpec::tanh_mlp(&Pendulum::default(), &[3]).unwrap_err().to_string();
    assert!(err.contains("continuous action space"), "{err}");
    let wrong = PolicySpec::tanh_mlp(&Pendulum::default(), &[3]).map(|_| ()).err();
    assert!(wrong.is_some());
    let episode = EpisodeOptions::default_for::<CartPole>();
    let mountain = PolicySpec::tanh_mlp(&MountainCar::default(), &[3]).unwrap();
    let err = PolicyRollout::new(&util::backend(), &config.params, &episode, mountain, Strategy::Fused, 5)
        .err()
        .expect("a policy for 2 observations on CartPole's 4")
        .to_string();
    assert!(err.contains("CartPole-v1 observes 4 values"), "{err}");
}
