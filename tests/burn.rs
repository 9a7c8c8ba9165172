//! The burn-tensor CartPole step: parity with the f64 reference on NdArray and on Wgpu
//! (with burn's fusion), and NextStep episode semantics against the reference vector env.

use burn::backend::{NdArray, Wgpu};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend;
use cartfuse::env::reference::{ReferenceVecEnv, reset_state, step_physics};
use cartfuse::harness::studies::burn_step::{BurnCartPoleState, burn_cartpole_step};
use cartfuse::{CartPoleConfig, CartPoleState};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn tensor<B: Backend>(values: Vec<f32>, device: &B::Device) -> Tensor<B, 1> {
    Tensor::from_floats(values.as_slice(), device)
}

fn host<B: Backend>(t: &Tensor<B, 1>) -> Vec<f32> {
    t.clone().into_data().to_vec::<f32>().unwrap()
}

fn physics_parity<B: Backend>(device: &B::Device) {
    let n = 20_000;
    let config = CartPoleConfig::default();
    let mut rng = StdRng::seed_from_u64(3);
    let rows: Vec<[f32; 4]> = (0..n)
        .map(|_| {
            [
                rng.random_range(-4.8f32..4.8),
                rng.random_range(-20.0f32..20.0),
                rng.random_range(-0.42f32..0.42),
                rng.random_range(-20.0f32..20.0),
            ]
        })
        .collect();
    let actions: Vec<u32> = (0..n).map(|_| rng.random_range(0..2)).collect();
    let state = BurnCartPoleState::<B>::from_rows(&rows, device);
    let fresh = [0, 1, 2, 3].map(|_| tensor::<B>(vec![0.0; n], device));
    let action = tensor::<B>(actions.iter().map(|a| *a as f32).collect(), device);
    let (next, out) = burn_cartpole_step(state, action, &fresh, &config);
    let obs = next.observation_rows();
    let terminated = host(&out.terminated);
    for i in 0..n {
        let expected = step_physics(
            CartPoleState::from_array(rows[i].map(f64::from)),
            actions[i],
            &config.params,
        );
        for (k, (got, want)) in obs[i].iter().zip(expected.to_array()).enumerate() {
            let got = f64::from(*got);
            assert!(
                (got - want).abs() <= 1e-5,
                "env {i} component {k}: {got} vs {want}"
            );
        }
        let near = (expected.x.abs() - 2.4).abs() < 1e-6
            || (expected.theta.abs() - config.params.theta_threshold_radians).abs() < 1e-6;
        if !near {
            assert_eq!(
                terminated[i] == 1.0,
                cartfuse::env::reference::is_terminated(&expected, &config.params),
                "env {i}"
            );
        }
    }
    assert_eq!(host(&out.reward), vec![1.0; n]);
}

fn next_step_episodes<B: Backend>(device: &B::Device) {
    let (n, steps, seed) = (128, 80, 9);
    let config = CartPoleConfig {
        max_episode_steps: 25,
        ..CartPoleConfig::default()
    };
    let mut reference = ReferenceVecEnv::new(n, config, seed);
    let rows: Vec<[f32; 4]> = reference.states().iter().map(|s| s.observation()).collect();
    let mut state = BurnCartPoleState::<B>::from_rows(&rows, device);
    let mut resets = vec![1u32; n];
    let mut rng = StdRng::seed_from_u64(5);
    let (mut ended, mut reset_steps) = (0, 0);
    for step in 0..steps {
        let actions: Vec<u32> = (0..n).map(|_| rng.random_range(0..2)).collect();
        let fresh_rows: Vec<[f32; 4]> = (0..n)
            .map(|i| reset_state(seed, i as u32, resets[i], &config.params).observation())
            .collect();
        let fresh =
            [0, 1, 2, 3].map(|k| tensor::<B>(fresh_rows.iter().map(|r| r[k]).collect(), device));
        let action = tensor::<B>(actions.iter().map(|a| *a as f32).collect(), device);
        let (next, out) = burn_cartpole_step(state, action, &fresh, &config);
        let expected = reference.step(&actions);
        let (obs, reward) = (next.observation_rows(), host(&out.reward));
        let (terminated, truncated) = (host(&out.terminated), host(&out.truncated));
        for (i, want) in expected.iter().enumerate() {
            assert_eq!(reward[i], want.reward, "step {step} env {i}");
            assert_eq!(terminated[i] == 1.0, want.terminated, "step {step} env {i}");
            assert_eq!(truncated[i] == 1.0, want.truncated, "step {step} env {i}");
            for k in 0..4 {
                assert!(
                    (obs[i][k] - want.obs[k]).abs() <= 1e-5,
                    "step {step} env {i}: {:?} vs {:?}",
                    obs[i],
                    want.obs
                );
            }
            if want.reward == 0.0 {
                resets[i] += 1;
                reset_steps += 1;
            }
            ended += usize::from(want.terminated || want.truncated);
        }
        // Re-synchronise the f64 reference with the f32 state so rounding never compounds.
        reference.overwrite_physics(
            &obs.iter()
                .map(|r| CartPoleState::from_array(r.map(f64::from)))
                .collect::<Vec<_>>(),
        );
        state = next;
    }
    assert!(
        ended > 200 && reset_steps > 150,
        "{ended} episodes ended, {reset_steps} reset steps"
    );
}

#[test]
fn burn_step_matches_the_reference_on_ndarray() {
    physics_parity::<NdArray>(&Default::default());
    next_step_episodes::<NdArray>(&Default::default());
}

#[test]
fn burn_step_matches_the_reference_on_wgpu_with_fusion() {
    // Fails with the install hint when the machine has no Vulkan device.
    if let Err(error) = cartfuse::fusion::cube::device::wgpu_client() {
        panic!("this test needs a compute device and found none: {error}");
    }
    physics_parity::<Wgpu>(&Default::default());
    next_step_episodes::<Wgpu>(&Default::default());
}
